"""RS1xx: checks specific to a scaling scheme the config names (``ropelaw lint``).

- RS101 Leaky ReRoPE: the longest input whose encoded relative positions stay inside the
  trained range (``schemes.leaky_rerope_safe_length``, seed 000) against the target.
- RS102 ReRoPE: the window must lie inside the trained range (w <= T_train - 1).
- RS103 dynamic NTK: the base it uses AT the target length (``schemes.dynamic_ntk_base``) and
  the bound through that base (``theory.extrapolation_bound`` with the length-dependent
  scheme); RL102 covers the static schemes, this rule the dynamic one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...findings import Finding, define_rule
from ...numfmt import count as fmt_count
from ..model import LoadedConfig

if TYPE_CHECKING:
    from ..check import Linting

SEED000 = "Su 2023, ReRoPE / Leaky ReRoPE, kexue.fm/archives/9708 (seed 000)"

LEAKY = define_rule(
    "RS101", "leaky-rerope-beyond-safe-length", "error",
    "Leaky ReRoPE: the target is longer than the longest input whose positions stay in the trained range",
    what="With window w, slope 1/k and training length T, the encoded relative position of distance D is "
         "w + (D - w)/k beyond the window; the longest safe input is w + 1 + floor(k (T - 1 - w)) tokens. "
         "Flags a target above it.",
    why="Past that length the encoded positions exceed anything seen in training: Leaky ReRoPE extrapolates "
        "again, which it exists to avoid (seed 000: a finite k supports a finite length only).",
    example='{"rope_scaling": {"rope_type": "leaky_rerope", "window": 512, "k": 4}, "max_position_embeddings": 65536}  '
            '# trained 4,096',
    fix="Raise k to at least the value in the message, or use ReRoPE (k -> infinity).",
    references=(SEED000,),
)
REROPE_WINDOW = define_rule(
    "RS102", "rerope-window-beyond-training", "error",
    "ReRoPE / Leaky ReRoPE window reaches past the trained relative positions",
    what="Checks window <= T_train - 1: inside the window distances are encoded as they are.",
    why="A window at or beyond the training length makes the window itself extrapolate; the seed's best "
        "windows are 1/4 to 1/2 of the training length.",
    example='{"rope_scaling": {"rope_type": "rerope", "window": 8192}}  # trained 4,096',
    fix="Use a window between T_train/4 and T_train/2.",
    references=(SEED000,),
)
DYNAMIC = define_rule(
    "RS103", "dynamic-ntk-beyond-bound", "warning",
    "dynamic NTK: at the target length the rescaled base still does not reach the target",
    what="Dynamic NTK replaces the base by b*(s*L/L_orig - (s-1))^(d/(d-2)) once the input length L exceeds "
         "L_orig. Computes that base at the target and the extrapolation bound through the length-dependent "
         "scheme; flags a bound below the target.",
    why="The rescaled base at the target length decides whether the first untrained pair stays within one "
        "period; if not, quality falls past the bound even with dynamic scaling.",
    example='{"rope_scaling": {"type": "dynamic", "factor": 2.0}, "max_position_embeddings": 4096}  # --target 65536',
    fix="Raise the factor, or pre-train / tune with a larger base.",
    references=("Hugging Face _compute_dynamic_ntk_parameters (emozilla, r/LocalLLaMA 2023-07)",
                "Liu et al. 2023, arXiv 2310.05209, Theorem 3"),
)


def _loc(cfg: LoadedConfig, i: int, name: str | None = None) -> tuple[int, int]:
    g = cfg.layers[i]
    v = g.params.get(name) if name else None
    for x in (v, g.block, g.scheme, cfg.target):
        if x is not None and (x.key or (x.line, x.column) != (1, 1)):
            return x.line, x.column
    return 1, 1


def check(lt: Linting) -> list[Finding]:
    """RS findings of every analysed layer group (``Linting.groups``)."""
    return [f for i, a in lt.groups() for f in _group(lt.cfg, i, a)]


def _group(cfg: LoadedConfig, i: int, a) -> list[Finding]:
    from ...schemes import dynamic_ntk_base, leaky_rerope_safe_length

    spec, length = a.spec, a.length
    out: list[Finding] = []
    who = "" if cfg.layers[i].label == "all layers" else f"{cfg.layers[i].label}: "
    t = spec.train_len
    from ..sources import Sources

    src = Sources()  # the message names each value by its key; where it came from, in full: the finding's sources
    if spec.scheme in ("rerope", "leaky_rerope"):
        w = int(spec.param("window"))
        if w > t - 1:
            line, col = _loc(cfg, i, "window")
            out.append(Finding.of(
                REROPE_WINDOW,
                f"{who}window {fmt_count(w)} exceeds the trained relative positions 0 .. {fmt_count(t - 1)} "
                f"(trained at {fmt_count(t)} [{src(cfg.train_len.where)}])",
                path=cfg.path, line=line, column=col, sources=src.full,
                fix=f"use a window between {fmt_count(t // 4)} and {fmt_count(t // 2)}",
                window=w, train_len=t,
            ))
        elif spec.scheme == "leaky_rerope":
            k = float(spec.param("k"))
            safe = leaky_rerope_safe_length(w, k, t)
            if length > safe:
                # smallest k with w + 1 + floor(k (T-1-w)) >= length: k >= (length - 1 - w)/(T - 1 - w)
                need = (length - 1 - w) / (t - 1 - w) if t - 1 - w > 0 else float("inf")
                line, col = _loc(cfg, i, "k")
                out.append(Finding.of(
                    LEAKY,
                    f"{who}target {fmt_count(length)} [{src(a.length_note)}] exceeds Leaky ReRoPE's longest safe input "
                    f"{fmt_count(safe)} = w + 1 + floor(k (T-1-w)) with w {fmt_count(w)}, k {k:g}, trained at "
                    f"{fmt_count(t)}",
                    path=cfg.path, line=line, column=col, sources=src.full,
                    fix=(f"raise k to >= {need:.4g} (or use ReRoPE, k -> infinity)" if need != float("inf")
                         else "shrink the window below the training length, then raise k"),
                    safe_length=safe, length=length, k_needed=need,
                ))
    if spec.scheme == "dynamic":
        from ...reach import reaches

        b = a.bound.extrapolation_bound
        if not reaches(spec, length, a.bound)[0]:
            s = float(spec.param("factor"))
            orig = int(spec.param("original_max_position_embeddings") or t)
            try:
                base_at = dynamic_ntk_base(spec.base, s, spec.d, length, orig)
            except ValueError:
                base_at = float("nan")
            line, col = _loc(cfg, i, "factor")
            out.append(Finding.of(
                DYNAMIC,
                f"{who}at the target {fmt_count(length)} [{src(a.length_note)}] dynamic NTK (factor {s:g}, original "
                f"{fmt_count(orig)}) rescales the base {spec.base:g} to {base_at:.4g}, but the bound through the "
                f"scheme is {fmt_count(round(b))} (d={spec.d}, trained at {fmt_count(t)} [{src(cfg.train_len.where)}])",
                path=cfg.path, line=line, column=col, sources=src.full,
                length=length, extrapolation_bound=b, base_at_target=base_at if base_at == base_at else None,
            ))
    return out
