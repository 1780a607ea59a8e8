"""``ropelaw audit checkpoint model.gguf``: the rotary llama.cpp computes from a GGUF, position by position.

The file is read as ``ropelaw lint`` reads it (:mod:`ropelaw.lint.dialects.gguf`: header, metadata and
the RoPE tensors only; never the weights). For every position p of the training context (at most
:data:`MAX_POSITIONS`) each pair's cos and sin are computed as ggml's CPU rope computes them
(llama-cpp-python==0.3.36 vendor/llama.cpp ``ggml/src/ggml-cpu/ops.cpp`` ``ggml_rope_cache_init`` and
``rope_yarn``), in float32 throughout:

    theta_scale = base^(-2/d)                     (powf; the base as the GGUF stores it, a float32)
    t_0 = p,  t_{i+1} = t_i * theta_scale          (one float32 product per pair)
    angle_i = freq_scale * (t_i / f_i)             (f_i: rope_freqs.weight, else 1; freq_scale = 1/s)
    YaRN: angle_i = angle_i (1 - r_i) + (t_i / f_i) r_i, r_i ggml's ramp between the correction dims
    cos_i = cosf(angle_i) * m,  sin_i = sinf(angle_i) * m

(numpy's float32 cos / sin stand for the C library's: they differ in the last bit at most, far below
what decides a position). A row is exact when its angle vector lies closer to p times the intended
frequencies than half their norm (:class:`ropelaw.audit.measure.EncodingStats`, the module audit's
measure); the intended frequencies are base^(-2i/d) * freq_scale / f_i in float64, with f_i the Llama 3
formula when the factors fit it (:mod:`ropelaw.lint.rope_factors`), so factors rounded to float16 show
as a phase error (RP360) and, where it grows past half a step, as inexact positions (RP361).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..findings import Finding
from ..numfmt import number
from .checkpoint_result import CheckpointAudit, RotaryTensor
from .rules.gguf import GGUF_FACTORS_ROUNDED, GGUF_POSITIONS_INEXACT

MAX_POSITIONS = 1 << 20  # positions measured: the training context, at most 2^20 (noted when capped)
CHUNK = 1 << 15  # positions per chunk


class GgufRotary(RotaryTensor):
    """The rotary of a GGUF as llama.cpp computes it (its frequency factors, if any, named)."""

    def line(self) -> str:
        d = self.details
        shape = "x".join(map(str, self.shape)) or "-"
        factors = (f", factors {d['factors_scheme']}" if d.get("factors_scheme") else "")
        rounded = f", factors rounded to {d['factors_rounded_to']}" if d.get("factors_rounded_to") else ""
        return (f"{self.name}  {self.kind} {self.dtype} [{shape}]: {d['exact']:,} of {d['positions']:,} positions "
                f"exact ({100 * d['exact_fraction']:.2f}%), rotary dims {d['rotary_dim']}, base {number(d['base'])}"
                f"{factors}{rounded}, max phase error {d['max_phase_error']:.3g} rad")


def ggml_rotary(positions: np.ndarray, base: float, d: int, factors: np.ndarray | None, freq_scale: float = 1.0,
                yarn: tuple | None = None, mscale: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """``(cos, sin)`` ``(n, d/2)`` float32 of ggml's CPU rope at ``positions`` (module docstring). ``yarn``:
    ``(ext_factor, corr_low, corr_high)`` (None: no YaRN ramp)."""
    f32 = np.float32
    ts = f32(f32(base) ** f32(-2.0 / d))  # powf(freq_base, -2.0f/n_dims)
    t = np.asarray(positions, f32)  # (n,) float32: theta_base = (float) p
    ff = np.ones(d // 2, f32) if factors is None else np.asarray(factors, f32)
    cos = np.empty((t.size, d // 2), f32)
    sin = np.empty((t.size, d // 2), f32)
    m = f32(magnitude(mscale, freq_scale, yarn))
    for i in range(d // 2):
        extrap = (t / ff[i]).astype(f32)
        ang = (f32(freq_scale) * extrap).astype(f32)
        if yarn is not None and yarn[0] != 0:
            y = (i - yarn[1]) / max(0.001, yarn[2] - yarn[1])
            mix = f32((1 - min(1.0, max(0.0, y))) * yarn[0])
            ang = (ang * f32(1 - mix) + extrap * mix).astype(f32)
        cos[:, i] = np.cos(ang) * m
        sin[:, i] = np.sin(ang) * m
        t = (t * ts).astype(f32)
    return cos, sin


def magnitude(mscale: float, freq_scale: float, yarn: tuple | None) -> float:
    """The factor ggml multiplies cos and sin by: ``mscale``, times 1 + 0.1 ln(1 / freq_scale) under YaRN
    (``rope_yarn``, float32)."""
    if yarn is not None and yarn[0] != 0:
        return float(np.float32(np.float32(mscale) * np.float32(1.0 + 0.1 * math.log(1.0 / freq_scale))))
    return float(np.float32(mscale))


def audit_gguf(path: str) -> CheckpointAudit:
    """The GGUF's rotary measured position by position (module docstring)."""
    from ..lint.dialects.gguf import load_file
    from ..lint.gguf import read_gguf
    from ..lint.model import Overrides
    from ..lint.rope_factors import fit_llama3, rounded_to, snapped
    from .measure import EncodingStats

    g = read_gguf(path)
    cfg = load_file(path, Overrides())
    grp = cfg.layers[0]
    base, d, ctx = grp.base.number(), grp.d.number(), cfg.target.number()
    notes = list(g.notes)
    if base is None or d is None or ctx is None or int(d) % 2 or int(d) < 2 or base <= 1:
        from ..errors import UsageError

        raise UsageError(f"{path}: no rotary to measure (base {grp.base.raw!r}, rotary dims {grp.d.raw!r}, context "
                         f"{cfg.target.raw!r}): `ropelaw lint {path}` says why")
    d, n = int(d), int(min(ctx, MAX_POSITIONS))
    if n < ctx:
        notes.append(f"measured the first {n:,} of {int(ctx):,} positions")
    name = next((k for k in ("rope_freqs.weight",) if k in g.values), None)
    factors = g.values.get(name) if name else None
    scheme, params = grp.scheme.raw, {k: v.number() for k, v in grp.params.items() if v.number() is not None}
    intended = factors
    det: dict[str, Any] = {"rotary_dim": d, "base": base, "positions": n, "scheme": scheme}
    findings: list[Finding] = []
    if factors is not None:
        stored = {"F16": "float16", "BF16": "bfloat16"}.get(g.rope[name].type, "float32")
        fit = fit_llama3(factors, base, d)
        fit = snapped(fit, factors, base, d, stored) if fit is not None else None
        formula = fit.formula(base, d) if fit is not None else None
        if fit is not None and formula is not None:
            intended = formula
            det["factors_scheme"] = (f"Llama 3 bands (factor {fit.factor:g}, original {fit.original:,.0f}, "
                                     "low 1 assumed)")
        det["factors_rounded_to"] = rounded_to(factors, stored)
    freq_scale = 1.0 / params["factor"] if scheme in ("linear", "yarn") and params.get("factor") else 1.0
    yarn = _yarn_dims(d, base, params) if scheme == "yarn" else None
    # llama.cpp hands ggml attn_factor / (1 + 0.1 ln s) under YaRN (llama-context.cpp), so ggml's product
    # is the attention factor ropelaw reads; LongRoPE: rope.scaling.attn_factor
    af = float(params.get("attention_factor", 1.0))
    mscale = af / (1.0 + 0.1 * math.log(1.0 / freq_scale)) if yarn is not None else af
    m_eff = magnitude(mscale, freq_scale, yarn)
    theta = base ** (-np.arange(0, d, 2, dtype=np.float64) / d)
    omega = theta * freq_scale / (intended if intended is not None else 1.0)
    if yarn is not None:
        r = np.array([1 - min(1.0, max(0.0, (i - yarn[1]) / max(0.001, yarn[2] - yarn[1]))) for i in range(d // 2)])
        omega = theta * freq_scale * (1 - r) + theta * r
    stats = EncodingStats(omega, omega, None, n)
    for start in range(0, n, CHUNK):
        pos = np.arange(start, min(start + CHUNK, n))
        c, s = ggml_rotary(pos, base, d, factors, freq_scale, yarn, mscale)
        stats.update(pos, c, s, np.full(c.shape, m_eff, np.float32) if m_eff != 1 else None)
    det.update(exact=stats.exact, exact_fraction=stats.exact / n, first_inexact=stats.first_inexact,
               max_phase_error=stats.max_phase_error, max_phase_error_at=stats.max_phase_error_at)
    t = GgufRotary(name or "(metadata)", "llama.cpp rotary", g.rope[name].type if name else "float32",
                   list(g.rope[name].shape) if name else [], det)
    if det.get("factors_rounded_to") and intended is not factors:
        drift = float(np.max(np.abs(theta / factors - theta / intended)))
        findings.append(Finding.of(
            GGUF_FACTORS_ROUNDED, f"{name}: its factors were rounded to {det['factors_rounded_to']}: the frequencies "
            f"llama.cpp runs drift up to {drift:.3g} rad/token from the Llama 3 formula they fit, a phase error of "
            f"{drift * (n - 1):.3g} rad at position {n - 1:,}", path=path, name_in_file=name, drift=drift))
    if stats.exact < n:
        findings.append(Finding.of(
            GGUF_POSITIONS_INEXACT, f"{stats.exact:,} of {n:,} positions ({100 * stats.exact / n:.2f}%) are the "
            f"encoding llama.cpp should compute; first inexact position {stats.first_inexact:,}", path=path,
            exact=stats.exact, positions=n))
    return CheckpointAudit(path=path, file_format="gguf", tensor_count=g.tensor_count, rotary=[t],
                           findings=findings, notes=notes)


def _yarn_dims(d: int, base: float, params: dict) -> tuple:
    """(ext_factor 1, low, high): ggml_rope_yarn_corr_dims (ggml.c) in float32."""
    f32 = np.float32
    orig = params.get("original_max_position_embeddings") or 0

    def dim(beta: float) -> float:
        return float(f32(d) * np.log(f32(orig) / (f32(beta) * f32(2) * f32(math.pi))) / (f32(2) * np.log(f32(base))))
    lo = max(0.0, math.floor(dim(params.get("beta_fast", 32.0))))
    hi = min(d - 1.0, math.ceil(dim(params.get("beta_slow", 1.0))))
    return 1.0, lo, hi
