"""RL1xx: the context a config must reach against the bounds of RoPE (``ropelaw lint``).

- RL101: plain RoPE, target beyond Liu et al.'s extrapolation bound (theory.extrapolation_bound),
  with the base that would reach it (theory.base_for_context).
- RL102: a static scaling scheme (linear, ntk, yarn, llama3, longrope, rerope, ...): the same
  bound computed THROUGH the scheme's frequencies (the registry), not as plain RoPE.
- RL103: a single base b (frequencies b^(-2i/d): plain RoPE, NTK-aware / dynamic NTK at their
  scaled base, ReRoPE) below Men et al.'s base lower bound for the context: the smallest
  2-significant-figure base that keeps B_{m,theta} >= 0 up to it (basebound.base_lower_bound,
  convention "grid"), and b itself failing the condition (basebound.supported_length).
- RL104 (info): a scheme whose frequencies are not b^(-2i/d) (linear, YaRN, Llama 3, LongRoPE)
  fails B_{m,theta} >= 0 before the context; there is no base to compare.

The length each finding assumes is named in its message: the target context (``--target``,
else max_position_embeddings) or, for sliding-window layers, the window.
"""

from __future__ import annotations

import math
from dataclasses import replace
from functools import lru_cache
from typing import TYPE_CHECKING

from ...findings import Finding, define_rule
# the config's own values print in full (number); suggested or rounded bases in short form (5e5, 1.49e5)
from ...numfmt import count as fmt_count, number as fmt_num, short as fmt_short
from ..model import LoadedConfig
from ..sources import Sources

if TYPE_CHECKING:
    from ..check import Linting

LIU = "Liu et al. 2023, Scaling Laws of RoPE-based Extrapolation, arXiv 2310.05209, Lemma 1 and Theorem 3"
MEN = "Men et al. 2024, Base of RoPE Bounds Context Length, arXiv 2405.14591, sec. 3-4 (B_{m,theta} >= 0)"

MISSING_TRAINING_LENGTH = define_rule(
    "RL100", "missing-training-length", "warning",
    "the config does not say how long the model was trained: no length rule could run",
    what="Reports a config that gives no training length: no seq_length / max_seq_len / sequence_length of a "
         "training config, no max_position_embeddings (or a scheme's original_max_position_embeddings) of a model "
         "config, no architecture default, and no --train. The bound (RL101/RL102) and Men et al.'s bound "
         "(RL103/RL104) need it, so none of them was checked; the value rules (RV) still ran.",
    why="Every RoPE bound is a function of the length the model saw in training (Liu et al.'s critical "
        "dimension counts the pairs that completed a period within it). A linter that silently passes a config "
        "it could not check gives false confidence in CI.",
    example='{"hidden_size": 4096, "num_attention_heads": 32, "rope_theta": 500000}  # no length anywhere',
    fix="Pass the training length with --train (and the served context with --target), or add it to the config.",
    references=(LIU,),
)
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
         "it with the target. The message names that pair (`pair 35 of 64 has period 65,750`: the first pair "
         "without a full period in training, and its period at inference) and, when the bound falls short of the "
         "period, the distance where it is reached. It assumes the model was not tuned at the target length "
         "(`--tune T` says it was, and the bound is then computed with that tuning length).",
    why="A scheme stretches the periods of the slow pairs by its factor; if the stretched period of the first "
        "untrained pair is still shorter than the target, that pair meets angles it never saw. Unless the model "
        "was tuned at the target length (pass --tune), quality drops past the bound.",
    example='{"max_position_embeddings": 131072, "rope_scaling": {"rope_type": "linear", "factor": 2}}  # '
            'trained 65,536',
    fix="Raise the factor (or original base), tune at the target length and say so with --tune, or lower the "
        "advertised context.",
    references=(LIU, "Peng et al. 2023, YaRN, arXiv 2309.00071", "Chen et al. 2023, arXiv 2306.15595"),
)
BELOW_LOWER_BOUND = define_rule(
    "RL103", "base-below-lower-bound", "warning",
    "the base is below Men et al.'s lower bound for the context the layers must reach",
    what="For a layer group whose inference frequencies are theta_i = b^(-2i/d) (plain RoPE; also NTK-aware and "
         "dynamic NTK, with b their scaled base, and ReRoPE / Leaky ReRoPE, which keep the base), compares b with "
         "Men et al.'s base lower bound L_b for the longest distance the layers must encode (the target context, "
         "the sliding window, or a ReRoPE window's encoded range) at rotary dims d. L_b is the smallest base that "
         "supports that context: the smallest base on the 2-significant-figure grid (1.0e4, 1.1e4, ..., the grid "
         "of Men et al.'s Table 1) whose frequencies keep B_(m,theta) = sum_i cos(m*theta_i) >= 0 for every "
         "integer m <= the context (basebound.base_lower_bound, convention \"grid\"; every smaller grid base "
         "fails). Fires when b < L_b and b itself fails the condition; the message gives b, L_b, the context "
         "and where it comes from, and, as evidence, the first distance with B < 0 at b and how many distances "
         "up to the context have B < 0. Contexts beyond 4,194,304 tokens are not checked (cost ~ length x d/2).\n\n"
         "Severity depends on the length. Past the training length (context extension: the target or --tune "
         "beyond what the model was trained at) it is a warning. At or below the training length it is "
         "informational (severity info): most stock models are below Men et al.'s bound at their own trained "
         "length (Llama 2: base 1e4 at 4,096 tokens, bound 2.9e4; Pythia, TinyLlama) and were shipped and used "
         "that way, so the default rule set does not warn on them. Info findings are hidden unless selected: "
         "`--select RL103` shows them (the summary counts the hidden ones).",
    why="Men et al. show that the ability to attend more to a similar token than to a random one at distance m "
        "is proportional to B_(m,theta); where it is negative, retrieval within the context degrades even when "
        "perplexity looks fine, and a base below the bound cannot deliver the context however long it is "
        "trained. The condition is not monotone in the base: some bases above L_b have a few shallow negative "
        "distances (base 1e6 at 32,768 tokens, d=128: 4 distances from 27,115, B >= -0.78 of 64) while "
        "L_b = 6.3e5 passes. Such bases are not below the bound and are not flagged, as in Men et al.'s table "
        "(32K: 6.4e5 printed). The bisection edge of the region of large passing bases (1.6e6 at 32,768) is not "
        "the lower bound and is not used.",
    example='{"max_position_embeddings": 4096, "rope_theta": 10000}  # d=128: L_b = 2.9e4 for 4,096 tokens',
    fix="Raise rope_theta to at least the lower bound in the message and train (or continue training) at that "
        "base, or lower the context you advertise. Men et al. 2024, Table 1, lists bounds for d = 128.",
    references=(MEN,),
)
SCHEME_BELOW_LOWER_BOUND = define_rule(
    "RL104", "scheme-frequencies-below-lower-bound", "info",
    "the scaling scheme's frequencies fail Men et al.'s condition B_(m,theta) >= 0 before the target",
    what="For a layer group whose scaling scheme gives frequencies NOT of the form b^(-2i/d) (linear, YaRN, "
         "Llama 3, LongRoPE), there is no base to compare with a lower bound. Computes B_(m,theta) = "
         "sum_i cos(m*theta_i) with the scheme's inference frequencies for every integer distance m up to the "
         "target (or the sliding window) and reports when it is negative somewhere: the supported length "
         "(the largest L with B >= 0 for all m <= L; basebound.supported_length), the first negative "
         "distance and the number of negative distances. Contexts beyond 4,194,304 tokens are not checked.",
    why="Men et al.'s condition applies to any frequency set: where B_(m,theta) < 0 the model cannot favour a "
        "similar token over a random one at that distance. For a scheme it is information, not a defect of the "
        "base: schemes trade some distances for others (YaRN leaves the fast pairs alone and interpolates the "
        "slow ones), the tuning run may compensate, and a handful of shallow negative distances (Llama 3.1 at "
        "131,072: 9 distances from 85,133) matter less than thousands.",
    example='{"max_position_embeddings": 163840, "rope_scaling": {"type": "yarn", "factor": 40, '
            '"original_max_position_embeddings": 4096}}  # d=64, base 1e4: B < 0 first at 4,119',
    fix="Test retrieval (needle / passkey) at the distances named; if it fails there, raise the original base or "
        "the scheme's factor, or advertise the supported length.",
    references=(MEN, "Peng et al. 2023, YaRN, arXiv 2309.00071"),
    default_on=False,  # information about a scheme's trade-off, not a defect: reported when selected
)


MEN_MAX_LENGTH = 1 << 22  # 4,194,304 tokens: beyond it RL103/RL104 are not computed (cost grows with length)
LOWER_BOUND_CONVENTION = "grid"  # the smallest 2-significant-figure base that supports the context (docstring)


@lru_cache(maxsize=256)
def lower_bound(d: int, length: int) -> float | None:
    """Men et al.'s base lower bound for ``length`` tokens at ``d`` dims, cached per (d, length).

    ``basebound.base_lower_bound(d, length, convention="grid")``: the smallest base with 2
    significant figures (1.0e4, 1.1e4, ...; Men et al.'s Table 1 grid) whose frequencies keep
    B_{m,theta} >= 0 for every integer m <= ``length``; every smaller grid base fails. That is
    "the smallest base that supports the context". The ``"bisection"`` convention is NOT used:
    it returns an edge of the region of large passing bases (1.63e6 for 32,768 tokens at d=128,
    where the grid bound is 6.3e5 and the paper prints 6.4e5 for 32K). Cost: 1-20 ms of CPU per
    (d, length) (the 27 pairs of the real corpus, d=8..256, lengths 512..262,144: 0.19 s in all in
    the linter's order; 0.38 s before bases seen to fail were remembered per d), memoized for the run
    in ``basebound``, paid only when a config's base fails the condition.
    None when no base up to 1e15 supports ``length`` (e.g. d = 2: B = cos(m) < 0 at m = 2).
    """
    from ...basebound import base_lower_bound

    try:
        return base_lower_bound(d, length, convention=LOWER_BOUND_CONVENTION)
    except ValueError:
        return None


def _below(d: int, length: int, base: float) -> bool:
    """``base`` below :func:`lower_bound` (or no lower bound exists), without computing the bound."""
    from ...basebound import below_lower_bound

    try:
        return below_lower_bound(d, length, base)
    except ValueError:
        return True  # as lower_bound's None: the finding stands


@lru_cache(maxsize=4096)
def men_supported_length(inv_freq: tuple, limit: int) -> int:
    from ...basebound import supported_length

    return supported_length(list(inv_freq), limit)


@lru_cache(maxsize=4096)
def _violations(inv_freq: tuple, length: int) -> int:
    from ...basebound import violations

    return violations(list(inv_freq), length)


def single_base(spec, scheme_result) -> float | None:
    """The base b with ``inv_freq == (b^(-2i/d) for i < d/2)`` exactly, or None.

    Candidates: the scheme's ``scaled_base`` (NTK-aware, dynamic NTK) else the config's base
    (plain RoPE, ReRoPE, Leaky ReRoPE); the frequencies are compared float for float with
    ``schemes.default_inv_freq``, so a scheme that changes the frequencies in any other way
    (linear, YaRN, Llama 3, LongRoPE) has no single base.
    """
    from ...schemes import default_inv_freq

    b = scheme_result.detail("scaled_base", spec.base)
    try:
        return float(b) if tuple(scheme_result.inv_freq) == default_inv_freq(spec.d, float(b)) else None
    except (TypeError, ValueError, OverflowError, ZeroDivisionError):
        return None


def men_reach(a) -> int:
    """Largest distance the layers encode: ``a.length``, or for a ReRoPE / Leaky ReRoPE window the
    ceiling of the encoded position of distance ``a.length`` (ReRoPE: the window w; Leaky:
    w + (length - w)/k). Men et al.'s sums are then taken at the integer distances up to it; Leaky
    ReRoPE's fractional encoded positions between them are not evaluated separately."""
    sr = a.scheme_result
    if sr is None or sr.window is None:
        return int(a.length)
    return min(int(a.length), math.ceil(sr.relative_position(a.length)))


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


def check(lt: Linting) -> list[Finding]:
    """RL101 / RL102 and RL103 / RL104 for every analysed layer group (``Linting.groups``)."""
    return [f for i, a in lt.groups() for f in _group(lt.cfg, i, a, lt.shown_only)]


def _group(cfg: LoadedConfig, i: int, a, shown_only: bool = False) -> list[Finding]:
    """RL101 / RL102 for layer group ``i`` and RL103 / RL104 (``shown_only``: see :func:`_men`)."""
    from ...reach import reaches
    from ...theory import base_for_context

    out: list[Finding] = []
    spec, bound, length = a.spec, a.bound, a.length
    what = "sliding window" if a.window is not None and length == a.window else "target"
    b = bound.extrapolation_bound
    line, col = _loc(cfg, i, a)
    g = cfg.layers[i]
    src = Sources()  # the message names each value by its key; where it came from, in full: the finding's sources

    def trained() -> str:  # a function: each source is taken as the message says it (the sources follow the message)
        return f"trained at {fmt_count(spec.train_len)} [{src(cfg.train_len.where)}]"
    tuned = (f", tuned at {fmt_count(spec.tune_len)}" if spec.tune_len is not None else "")
    beyond = not reaches(spec, length, bound)[0]  # exactly as `ropelaw plan` decides "reaches"
    if spec.scheme == "default" and beyond:
        try:
            need = base_for_context(spec.d, spec.train_len, length, pretrain_base=spec.pretrain_base)
            need_txt = f"; a base of {_written(g, need)} reaches it"
        except ValueError:
            need, need_txt = None, ""
        out.append(Finding.of(
            BEYOND_BOUND,
            f"{_who(cfg, i)}{what} {fmt_count(length)} tokens [{src(a.length_note)}] exceeds the extrapolation bound "
            f"{fmt_count(round(b))} of d={spec.d}, base {fmt_num(spec.base)} [{src(g.base.where)}], {trained()}{tuned} "
            f"(critical dimension {bound.critical_dimension})" + need_txt,
            path=cfg.path, line=line, column=col, sources=src.full,
            fix=(f"raise the base to >= {_written(g, need)} and continue training (Liu et al.: even at "
                 f"{fmt_count(spec.train_len)} tokens), or use a scaling scheme for "
                 f"{fmt_count(length)}" if need else None),
            length=length, extrapolation_bound=b, base_for_target=need, critical_dimension=bound.critical_dimension,
        ))
    elif spec.scheme not in ("default", "dynamic") and beyond:
        params = ", ".join(f"{k} {fmt_short(v) if isinstance(v, (int, float)) else '[...]'}"
                           for k, v in spec.param_dict().items() if k not in ("short_factor", "long_factor"))
        k = bound.critical_pair
        notes = [f"scheme {spec.scheme!r}: {params}"] if params else []
        if k is not None and bound.critical_pair_period is not None:
            # "the first pair without a full period in training" and "assumes no tuning at the target" are the
            # rule's documentation (`ropelaw rule RL102`), not said again in each message (issue 36)
            why = f"pair {k} of {spec.d // 2} has period {fmt_count(round(bound.critical_pair_period))}"
            if abs(bound.critical_pair_period - b) >= 1:
                why += f", reached at distance {fmt_count(round(b))}"
        else:
            why = ""
            notes.append(bound.note)
        out.append(Finding.of(
            BEYOND_SCHEME_BOUND,
            f"{_who(cfg, i)}{what} {fmt_count(length)} tokens [{src(a.length_note)}] exceeds the bound "
            f"{fmt_count(round(b))} through scheme {spec.scheme!r} ({_factor(spec)}d={spec.d}, {trained()}{tuned}, "
            f"base {fmt_num(spec.base)})" + (f": {why}" if why else ""),
            path=cfg.path, line=line, column=col, sources=src.full, notes=notes,
            length=length, extrapolation_bound=b, scheme=spec.scheme, critical_pair=k,
        ))
    out.extend(_men(cfg, i, a, what, line, col, shown_only))
    return out


def _men(cfg: LoadedConfig, i: int, a, what: str, line: int, col: int, shown_only: bool = False) -> list[Finding]:
    """RL103 (a single base: compare it with the lower bound) or RL104 (a scheme's frequencies).

    ``shown_only``: the output shows the default rule set only (``ropelaw lint`` without --select), which
    hides informational findings (counts them) and leaves RL104 out: RL104 is then not computed, and an
    RL103 within the training length is decided (exists or not, exactly as otherwise) without searching
    for the bound its message would name (:func:`basebound.below_lower_bound`: the grid bases up to the
    config's base only; the search near the bound was most of a lint run's CPU time)."""
    spec, length, g = a.spec, a.length, cfg.layers[i]
    reach = men_reach(a)
    if a.scheme_result is None or not 1 <= reach <= MEN_MAX_LENGTH:
        return []
    inv = tuple(float(t) for t in a.scheme_result.inv_freq)
    sup = men_supported_length(inv, reach)
    if sup >= reach:
        return []  # B >= 0 at every distance up to the reach: the frequencies support it
    if g.base.line > 1:
        line, col = g.base.line, g.base.column
    base = single_base(spec, a.scheme_result)
    within = a.length <= spec.train_len  # not a context extension: Men et al.'s bound is information there
    if shown_only and (base is None or within):
        return _men_decided_only(cfg, i, spec.d, reach, base, sup, line, col)
    bad = _violations(inv, reach)
    src = Sources()  # the message names each value by its key; where it came from, in full: the finding's sources

    def at() -> str:  # a function: each source is taken as the message says it (the sources follow the message)
        return (f"the {what} {fmt_count(reach)} tokens [{src(a.length_note)}]" if reach == length else
                f"distance {fmt_count(reach)}, the largest the window encodes in the {what} {fmt_count(length)} "
                f"tokens [{src(a.length_note)}]")
    evidence = f"B_(m,theta) < 0 at {fmt_count(bad)} of {fmt_count(reach)} distances, first at {fmt_count(sup + 1)}"
    if base is None:
        params = ", ".join(f"{k} {fmt_count(v) if isinstance(v, int) else fmt_short(v)}"
                           for k, v in spec.param_dict().items() if isinstance(v, (int, float)))
        return [Finding.of(
            SCHEME_BELOW_LOWER_BOUND,
            f"{_who(cfg, i)}scheme {spec.scheme!r} frequencies ({_factor(spec)}d={spec.d}, "
            f"base {fmt_num(spec.base)}) keep "
            f"Men et al.'s B_(m,theta) >= 0 only to {fmt_count(sup)} of {at()}: {evidence}",
            path=cfg.path, line=line, column=col, sources=src.full,
            notes=[f"scheme {spec.scheme!r}: {params}"] if params else [],
            fix=f"check retrieval beyond {fmt_count(sup)} tokens; if it fails, raise the original base or the factor",
            length=reach, supported_length=sup, violations=bad, scheme=spec.scheme,
        )]
    lb = lower_bound(spec.d, reach)
    if lb is not None and base >= lb:
        return []  # at or above the smallest base that supports the context: not below the bound
    lb_up = lb  # a grid value: already 2 significant figures, and it passes (no rounding needed)
    if spec.scheme == "default" or base == spec.base:
        who_base = f"base {fmt_num(base)} [{src(g.base.where)}]"
        need = f"the base to >= {_written(g, lb_up)}"
    else:
        who_base = (f"scheme {spec.scheme!r} scaled base {fmt_num(base)} (rope_theta {fmt_num(spec.base)} "
                    f"[{src(g.base.where)}])")
        need = (f"the base to >= {_written(g, _up2(lb_up * spec.base / base))} (scaled base >= {fmt_short(lb_up)})"
                if lb_up is not None else "")
    if lb_up is not None:
        # what the lower bound is (the smallest 2-significant-figure base keeping B_(m,theta) >= 0 up to the length)
        # is the rule's documentation, not said again in each message (issue 36: messages under ~300 characters)
        head = f"{who_base} is below Men et al.'s lower bound {fmt_short(lb_up)} for {at()} at d={spec.d}"
        fix = (f"raise {need} and train at that base for {fmt_count(reach)} tokens, or " +
               (f"advertise at most {fmt_count(sup)} tokens" if reach == length else
                f"keep the largest encoded distance at most {fmt_count(sup)}"))
    else:
        head = (f"{who_base}: no base up to 1e15 keeps B_(m,theta) >= 0 for every m <= {fmt_count(reach)} at "
                f"d={spec.d} ({at()})")
        fix = f"use more rotary dims, or advertise at most {fmt_count(sup)} tokens"
    # "past the training length RL103 warns" is the rule's documentation (`ropelaw rule RL103`)
    tail = ""
    if within:  # the training length's source, unless it is the target's (said once)
        train_where = "" if cfg.train_len.where == a.length_note else f" [{src(cfg.train_len.where)}]"
        tail = f"; info: within the training length {fmt_count(spec.train_len)}{train_where}"
    f = Finding.of(
        BELOW_LOWER_BOUND,
        f"{_who(cfg, i)}{head}; {evidence}{tail}",
        path=cfg.path, line=line, column=col, fix=fix, sources=src.full,
        length=reach, base=base, base_lower_bound=lb_up, supported_length=sup, violations=bad,
        within_training_length=within,
    )
    return [replace(f, severity="info") if within else f]


def _men_decided_only(cfg: LoadedConfig, i: int, d: int, reach: int, base: float | None, sup: int, line: int,
                      col: int) -> list[Finding]:
    """:func:`_men` for the default rule set, which hides informational findings: an RL103 within the training length
    decided exactly (:func:`_below`), its message not detailed."""
    if base is None or not _below(d, reach, base):
        return []
    return [replace(Finding.of(
        BELOW_LOWER_BOUND,
        f"{_who(cfg, i)}base {fmt_num(base)} is below Men et al.'s lower bound for {fmt_count(reach)} tokens at "
        f"d={d} (informational, not shown by the default rule set; --select RL103 details it)",
        path=cfg.path, line=line, column=col, length=reach, base=base, supported_length=sup,
        within_training_length=True,
    ), severity="info")]


def _factor(spec) -> str:
    """``factor 8; `` of a scheme that has a factor, else "": the message names the factor, the finding's note
    every parameter."""
    f = spec.param_dict().get("factor")
    return f"factor {fmt_short(f)}; " if isinstance(f, (int, float)) and not isinstance(f, bool) else ""


def _written(g, x: float | None) -> str:
    """A base ``x`` of the analysis as the config would write it: ``x``, or for an odd rotary count read at an
    effective base (``RopeLayer.written_power`` r / (r + 1)) "x (effective; written base y)", y = x^(r/(r+1)) rounded
    up to 2 significant figures (safe: the frequencies fall as the written base grows)."""
    if x is None or g.written_power == 1.0:
        return fmt_short(x)
    return f"{fmt_short(x)} (effective; written base {fmt_short(_up2(x ** g.written_power))})"


def _up2(x: float) -> float:
    """``x`` rounded UP to 2 significant figures (45,820.8 -> 46,000), so the advice is safe."""
    if x <= 0 or not math.isfinite(x):
        return x
    e = math.floor(math.log10(x)) - 1
    step = 10.0 ** e
    return math.ceil(x / step - 1e-12) * step


def missing_training_length(lt: Linting) -> list[Finding]:
    """RL100 when the config (and the command line) give no training length at all."""
    cfg = lt.cfg
    t = cfg.train_len
    if t is None or t.raw is not None:
        return []  # present: a bad value is RV001/RV013's business
    anchor = next((v for v in (cfg.max_pos, cfg.layers[0].base, cfg.head_dim) if v is not None and v.key), None)
    line, col = (anchor.line, anchor.column) if anchor is not None else (1, 1)
    return [Finding.of(
        MISSING_TRAINING_LENGTH,
        f"no training length: {t.where}; the bounds (RL101-RL104) were not checked",
        path=cfg.path, line=line, column=col,
        fix="pass --train T (the length the model was trained at), and --target for the context you serve",
    )]
