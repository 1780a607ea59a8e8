"""RL1xx: the context a config must reach against the bounds of RoPE (``ropelaw lint``).

- RL101: plain RoPE, target beyond Liu et al.'s extrapolation bound (theory.extrapolation_bound),
  with the base that would reach it (theory.base_for_context).
- RL102: a static scaling scheme (linear, ntk, yarn, llama3, longrope, rerope, ...): the same
  bound computed THROUGH the scheme's frequencies (the registry), not as plain RoPE.
- RL103: Men et al.'s condition B_{m,theta} >= 0 fails before the length the layers must
  reach (basebound.supported_length on the layer's inference frequencies), with the base lower
  bound for that length (basebound.base_lower_bound).

The length each finding assumes is named in its message: the target context (``--target``,
else max_position_embeddings) or, for sliding-window layers, the window.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Any

from ...findings import Finding, define_rule
from ..loader import LoadedConfig, fmt_count

LIU = "Liu et al. 2023, Scaling Laws of RoPE-based Extrapolation, arXiv 2310.05209, Lemma 1 and Theorem 3"
MEN = "Men et al. 2024, Base of RoPE Bounds Context Length, arXiv 2405.14591, sec. 3-4 (B_{m,theta} >= 0)"

BEYOND_BOUND = define_rule(
    "RL101", "target-beyond-bound", "error",
    "plain RoPE: the target context exceeds the extrapolation bound of the scaling law",
    what="For a layer group with plain RoPE (no rope_scaling), compares the longest relative distance it "
         "must handle (the target context, or the sliding window) with Liu et al.'s extrapolation bound for "
         "its rotary dims, training length and base, and gives the smallest base whose bound reaches the target.",
    why="Pairs that never completed a full period in training (beyond the critical dimension) meet unseen "
        "angles past the bound, and perplexity rises sharply there (Liu et al., Theorem 3). A config that "
        "advertises more context than its base and training length support will not deliver it.",
    example='{"max_position_embeddings": 32768, "rope_theta": 10000}  # trained at 4,096: --train 4096',
    fix="Raise rope_theta to the base named in the message and continue training, add a scaling scheme "
        "(rope_scaling) for the target, or lower max_position_embeddings.",
    references=(LIU,),
)
BEYOND_SCHEME_BOUND = define_rule(
    "RL102", "target-beyond-scheme-bound", "warning",
    "the target context exceeds the extrapolation bound computed through the scaling scheme",
    what="For a layer group with a static scaling scheme (linear, ntk, yarn, llama3, longrope, ReRoPE), "
         "computes Liu et al.'s bound with the scheme's inference frequencies and relative-position map (the "
         "first pair without a full period in training limits the context at its scaled period) and compares "
         "it with the target.",
    why="A scheme stretches the periods of the slow pairs by its factor; if the stretched period of the first "
        "untrained pair is still shorter than the target, that pair meets angles it never saw. Unless the model "
        "was tuned at the target length (pass --tune), quality drops past the bound.",
    example='{"max_position_embeddings": 131072, "rope_scaling": {"rope_type": "linear", "factor": 2}}  # trained 65,536',
    fix="Raise the factor (or original base), tune at the target length and say so with --tune, or lower the "
        "advertised context.",
    references=(LIU, "Peng et al. 2023, YaRN, arXiv 2309.00071", "Chen et al. 2023, arXiv 2306.15595"),
)
BELOW_LOWER_BOUND = define_rule(
    "RL103", "base-below-lower-bound", "warning",
    "Men et al.'s condition B_{m,theta} >= 0 fails before the length the layers must reach",
    what="Computes B_{m,theta} = sum_i cos(m*theta_i) for every distance m up to the target context (or the "
         "sliding window) with the layer group's inference frequencies (plain RoPE or through the scheme), "
         "reports the first m where it is negative and, for plain RoPE, the base above which it stays >= 0 "
         "(bisection edge of basebound.base_lower_bound, rounded up to 2 significant figures). Contexts "
         "beyond 4,194,304 tokens are not checked (the sum costs length x d/2).",
    why="Men et al. show that below this base the model cannot tell similar tokens at distance m from random "
        "ones (the long-term decay of attention to similar tokens breaks), so retrieval degrades within the "
        "context even when perplexity looks fine. The condition is not monotone in the base and the message "
        "counts the negative distances: a few shallow dips (base 1e6 at 32,768 tokens, d=128: 4 distances, "
        "B >= -0.78 of 64) weigh less than hundreds (base 1e4 at 4,096: 420 distances, down to -8.4).",
    example='{"max_position_embeddings": 32768, "rope_theta": 10000}',
    fix="Use a base at or above the lower bound named in the message for this context (Men et al., Table 1).",
    references=(MEN,),
)


MEN_MAX_LENGTH = 1 << 22  # 4,194,304 tokens: beyond it RL103 is not computed (cost grows with length)


@lru_cache(maxsize=256)
def lower_bound(d: int, length: int) -> float | None:
    """Men et al.'s base lower bound for ``length`` tokens at ``d`` dims, cached.

    ``basebound.base_lower_bound(d, length, convention="bisection")``: the edge above which
    bases keep B_{m,theta} >= 0 up to ``length`` (to 1e-6 in log base). The paper's
    2-significant-figure grid scan (``convention="grid"``) can name a smaller isolated base
    but costs seconds to tens of seconds per call, too slow for a linter.
    """
    from ...basebound import base_lower_bound

    try:
        return base_lower_bound(d, length, convention="bisection")
    except ValueError:
        return None


@lru_cache(maxsize=4096)
def _supported(inv_freq: tuple, limit: int) -> int:
    from ...basebound import supported_length

    return supported_length(list(inv_freq), limit)


@lru_cache(maxsize=4096)
def _violations(inv_freq: tuple, length: int) -> int:
    from ...basebound import violations

    return violations(list(inv_freq), length)


def _loc(cfg: LoadedConfig, i: int, a) -> tuple[int, int]:
    """Point at the key that sets the length the finding is about."""
    g = cfg.layers[i]
    if a.window is not None and a.length == a.window and g.window is not None and g.window.key:
        return g.window.line, g.window.column
    for v in (cfg.target, cfg.max_pos, g.block, g.base):
        if v is not None and (v.key or (v.line, v.column) != (1, 1)):
            return v.line, v.column
    return 1, 1


def _who(cfg: LoadedConfig, i: int) -> str:
    label = cfg.layers[i].label
    return "" if label == "all layers" else f"{label}: "


def check(cfg: LoadedConfig, i: int, a) -> list[Finding]:
    from ...theory import base_for_context

    out: list[Finding] = []
    spec, bound, length = a.spec, a.bound, a.length
    what = "sliding window" if a.window is not None and length == a.window else "target"
    b = bound.extrapolation_bound
    line, col = _loc(cfg, i, a)
    g = cfg.layers[i]
    trained = f"trained at {fmt_count(spec.train_len)} [{cfg.train_len.where}]"
    tuned = (f", tuned at {fmt_count(spec.tune_len)}" if spec.tune_len is not None else "")
    if spec.scheme == "default" and length > b:
        try:
            need = base_for_context(spec.d, spec.train_len, length, pretrain_base=spec.pretrain_base)
            need_txt = f"; a base of {_g(need)} reaches it"
        except ValueError:
            need, need_txt = None, ""
        out.append(Finding.of(
            BEYOND_BOUND,
            f"{_who(cfg, i)}{what} {fmt_count(length)} tokens [{a.length_note}] exceeds the extrapolation bound "
            f"{fmt_count(round(b))} of d={spec.d}, base {_g(spec.base)} [{g.base.where}], {trained}{tuned} "
            f"(critical dimension {bound.critical_dimension})" + need_txt,
            path=cfg.path, line=line, column=col,
            fix=(f"raise the base to >= {_g(need)} and continue training (Liu et al.: even at "
                 f"{fmt_count(spec.train_len)} tokens), or use a scaling scheme for {fmt_count(length)}" if need else None),
            length=length, extrapolation_bound=b, base_for_target=need, critical_dimension=bound.critical_dimension,
        ))
    elif spec.scheme not in ("default", "dynamic") and length > b:
        params = ", ".join(f"{k} {_g(v) if isinstance(v, (int, float)) else '[...]'}"
                           for k, v in spec.param_dict().items() if k not in ("short_factor", "long_factor"))
        k = bound.critical_pair
        if k is not None and bound.critical_pair_period is not None:
            why = (f"pair {k} of {spec.d // 2}, the first without a full period in training, has inference period "
                   f"{fmt_count(round(bound.critical_pair_period))}")
            if abs(bound.critical_pair_period - b) >= 1:
                why += f" and reaches it at distance {fmt_count(round(b))}"
        else:
            why = bound.note
        out.append(Finding.of(
            BEYOND_SCHEME_BOUND,
            f"{_who(cfg, i)}{what} {fmt_count(length)} tokens [{a.length_note}] exceeds the bound "
            f"{fmt_count(round(b))} through scheme {spec.scheme!r} ({params}; d={spec.d}, {trained}{tuned}, "
            f"base {_g(spec.base)}): {why}; assumes no tuning at the target (--tune says otherwise)",
            path=cfg.path, line=line, column=col,
            length=length, extrapolation_bound=b, scheme=spec.scheme, critical_pair=k,
        ))
    # Men et al.: the layer's inference frequencies, distances 0 .. length (cost ~ length * d/2)
    if a.scheme_result is not None and 1 <= length <= MEN_MAX_LENGTH:
        inv = tuple(float(t) for t in a.scheme_result.inv_freq)
        sup = _supported(inv, int(length))
        if sup < length:
            bad = _violations(inv, int(length))
            lb = lower_bound(spec.d, int(length)) if spec.scheme == "default" else None
            lb = _up2(lb) if lb is not None else None
            lb_txt = (f"; bases above {_g(lb)} keep it >= 0 to {fmt_count(length)} tokens at d={spec.d} "
                      f"(Men et al.'s lower bound, bisection edge)" if lb is not None else
                      "; the scheme's frequencies, not the base alone, decide this" if spec.scheme != "default" else "")
            freqs = ("base " + _g(spec.base)) if spec.scheme == "default" else f"scheme {spec.scheme!r} frequencies"
            out.append(Finding.of(
                BELOW_LOWER_BOUND,
                f"{_who(cfg, i)}B_(m,theta) < 0 at {fmt_count(bad)} of {fmt_count(length)} distances, first at "
                f"{fmt_count(sup + 1)}, with {freqs} (d={spec.d}): "
                f"supports {fmt_count(sup)} of the {what}'s {fmt_count(length)} tokens [{a.length_note}]" + lb_txt,
                path=cfg.path, line=g.base.line if g.base.line > 1 else line, column=g.base.column if g.base.line > 1 else col,
                fix=(f"use a base >= {_g(lb)} for {fmt_count(length)} tokens" if lb is not None else
                     f"raise the base or the scheme's factor, or expect weaker retrieval beyond {fmt_count(sup)} tokens"),
                length=length, supported_length=sup, violations=bad, base_lower_bound=lb,
            ))
    return out


def _up2(x: float) -> float:
    """``x`` rounded UP to 2 significant figures (45,820.8 -> 46,000), so the advice is safe."""
    if x <= 0 or not math.isfinite(x):
        return x
    e = math.floor(math.log10(x)) - 1
    step = 10.0 ** e
    return math.ceil(x / step - 1e-12) * step


def _g(x: Any) -> str:
    from ...commands._common import fmt_num

    if x is None:
        return "-"
    if isinstance(x, float) and math.isinf(x):
        return "inf"
    if abs(x) >= 1e5:
        s = f"{x:.2g}" if float(f"{x:.2g}") == x else f"{x:.3g}"
        return s.replace("e+0", "e").replace("e+", "e")
    return fmt_num(x)
