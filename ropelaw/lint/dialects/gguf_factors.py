"""The RoPE tensors of a GGUF, read as llama.cpp applies them (:mod:`ropelaw.lint.dialects.gguf`).

- ``rope_freqs.weight``: one factor per pair dividing its angle (llama.cpp ``get_rope_factors``, ggml
  ``rope_yarn``: ``theta_extrap / freq_factor``), on top of the metadata's scaling. Read as Llama 3.1's
  bands when it is that formula at the metadata's base and rotary dims (:func:`fit_llama3`); a tensor
  that is not (another base or head dim, values out of shape, metadata scaling beside it) is RV040,
  and its factors are not modelled (RV030), never replaced by plain RoPE. Factors stored as float16 /
  bfloat16, or rounded to them before a float32 store, are RP203.
- ``rope_factors_long.weight`` / ``rope_factors_short.weight``: LongRoPE (Phi-3), long when the served
  context exceeds ``rope.scaling.original_context_length`` (:func:`long_short`).
"""

from __future__ import annotations

import math

import numpy as np

from ..model import Value
from ..rope_factors import ROUNDOFF, fit_llama3, llama3_factors, rounded_to, snapped
from ._framework import Doc, derived, preset
from ..model import Problem
from ..rules.serving import FACTORS_DISAGREE, FACTORS_ROUNDED, RUNTIME_REFUSES

FREQS = "rope_freqs.weight"
LONG, SHORT = "rope_factors_long.weight", "rope_factors_short.weight"
_FMT = {"F32": "float32", "F16": "float16", "BF16": "bfloat16", "F64": "float64"}


def _shown(t: Value | None) -> str:
    """A RoPE tensor as a message shows it (never its values)."""
    raw = t.raw if t is not None and isinstance(t.raw, dict) else {}
    return f"<{raw.get('type', '?')} tensor of {len(raw.get('values') or []) or raw.get('shape')} values>"


def _tensor(doc: Doc, name: str) -> tuple[Value | None, np.ndarray | None, str]:
    """``(Value, values, stored format)`` of a RoPE tensor of the document."""
    v = doc.get(name, expect="mapping")
    if v is None or not isinstance(v.raw, dict):
        return v, None, ""
    vals, kind = v.raw.get("values"), v.raw.get("type")
    return v, (np.asarray(vals, np.float64) if vals is not None else None), \
        _FMT.get(kind, "") if isinstance(kind, str) else ""


def freq_factors(doc: Doc, a: str, d: Value, base: Value, ctx: Value, scheme, params: dict, orig, problems: list,
                 notes: list, unread: list):
    """``(scheme, params, original length)`` with ``rope_freqs.weight`` applied (module docstring)."""
    t, vals, fmt = _tensor(doc, FREQS)
    if t is None or vals is None:  # values come with their Value
        unread.append(Value(_shown(t), FREQS, 1, 1, "not read (not a float tensor, or too long)", "any"))
        return scheme, params, orig
    dn, b = d.number(), base.number()
    if dn is None or b is None:
        return scheme, params, orig
    if vals.size != int(dn) // 2:
        problems.append(Problem(FACTORS_DISAGREE, t, f"{FREQS} holds {vals.size:,} factors, but {d.where} "
                         f"{int(dn)} rotates {int(dn) // 2} pairs: llama.cpp refuses to load it (its shape must be "
                         "{n_rot/2})"))
        return scheme, params, orig
    if np.all(vals == 1):
        notes.append(f"{FREQS}: every factor is 1 (no effect)")
        return scheme, params, orig
    if scheme is not None:
        problems.append(Problem(FACTORS_DISAGREE, t, f"{FREQS} divides the frequencies by its own factors and "
                         f"the metadata sets {scheme.raw} scaling too ({scheme.where}): llama.cpp applies both; a "
                         "converted Llama 3.1 carries only the tensor"))
        unread.append(Value(_shown(t), FREQS, 1, 1, "frequency factors on top of the metadata's scaling: not modelled",
                            "any"))
        return scheme, params, orig
    fit = fit_llama3(vals, b, int(dn))
    if fit is not None and fit.smooth == 1:
        unread.append(Value(_shown(t), FREQS, 1, 1, "Llama 3.1-shaped, but with one pair on the smooth band its "
                            "parameters cannot be read back", "any"))
        return scheme, params, orig
    rounding = rounded_to(vals, fmt) or fmt  # factors rounded to float16 before a float32 store fit to float16's
    tol = 4 * ROUNDOFF.get(rounding, ROUNDOFF["float32"]) + 1e-6
    if fit is None or fit.residual > tol:
        why = ("not Llama 3.1's bands (1 on the fastest pair, rising to the largest)" if fit is None else
               f"not the Llama 3 formula at {base.where} {b:g} and d={int(dn)}: off by up to {fit.residual:.2e} "
               "(made for another base or head dim?)")
        problems.append(Problem(FACTORS_DISAGREE, t, f"{FREQS} ({fmt}, {vals.size} factors) is {why}"))
        unread.append(Value(_shown(t), FREQS, 1, 1, "frequency factors ropelaw does not model", "any"))
        return scheme, params, orig
    return _llama3(t, vals, fmt, fit, b, int(dn), ctx, problems, notes)


def _llama3(t: Value, vals: np.ndarray, fmt: str, fit, b: float, d: int, ctx: Value, problems: list, notes: list):
    """The Llama 3 scheme read back from the tensor (snapped to whole lengths when the formula then holds)."""
    fit = snapped(fit, vals, b, d, rounded_to(vals, fmt) or fmt)
    high, orig = fit.high, fit.original
    how = f"{FREQS} ({fmt}, {vals.size} factors)"
    scheme = derived("llama3", f"{how}: Llama 3.1's bands", t, "str")
    params = {"factor": derived(fit.factor, f"the largest factor of {how}", t, "number"),
              "low_freq_factor": derived(1.0, f"assumed 1 as in every published Llama 3.x config ({FREQS} fixes only "
                                              "original/low and original/high)", t, "number")}
    if high is None:
        lo, hi = fit.edge or (None, None)
        params["high_freq_factor"] = derived(1.0, f"{how}: no smooth band (low = high)", t, "number")
        params["original_max_position_embeddings"] = derived(
            math.ceil(hi) if hi else None, f"{how}: the band edge lies between wavelengths {lo:,.0f} and {hi:,.0f}; "
            "any original length there gives these factors", t, "int")
        orig_v = Value(None, None, 1, 1, f"not in the GGUF ({FREQS} has no smooth band to read it from): pass --train",
                       "int")
        return scheme, params, orig_v
    params["high_freq_factor"] = derived(high, f"{how}, fitted (residual {fit.residual:.1e})", t, "number")
    orig_v = derived(int(orig), f"{how}, fitted with low_freq_factor 1", t, "int")
    params["original_max_position_embeddings"] = orig_v
    notes.append(f"{FREQS}: Llama 3.1 bands, factor {fit.factor:g}, high_freq_factor {high:g}, original length "
                 f"{orig:,.0f} (low_freq_factor 1 assumed)")
    r = rounded_to(vals, fmt)
    if r is not None:
        _rounded(t, vals, fmt, r, fit.factor, high, orig, b, d, ctx, problems)
    return scheme, params, orig_v


def _rounded(t: Value, vals: np.ndarray, fmt: str, r: str, s: float, high: float, orig: float, b: float, d: int,
             ctx: Value, problems: list) -> None:
    """RP203: the factors were rounded to ``r`` (stored so, or before a float32 store)."""
    exact = llama3_factors(b, d, s, 1.0, high, orig)
    dev = float(np.max(np.abs(vals / exact - 1)))
    theta = b ** (-np.arange(0, d, 2, dtype=np.float64) / d)
    drift = np.abs(theta / vals - theta / exact)  # (d/2,) rad per token
    T = ctx.number() or 0
    where = "stored as" if fmt == r else f"stored as {fmt} but every smooth factor is exactly a"
    problems.append(Problem(FACTORS_ROUNDED, t,
                     f"{FREQS}'s factors were rounded: {where} {r} (unit roundoff {ROUNDOFF[r]:.2e}); they are up to "
                     f"{dev:.2e} (relative) from the Llama 3 formula they fit, a phase error of up to "
                     f"{T * float(drift.max()):.3g} rad at position {int(T):,} ({ctx.where})"))


def long_short(doc: Doc, a: str, kind: Value, orig: Value | None, ctx: Value, problems: list):
    """LongRoPE from ``rope_factors_long`` / ``_short`` (module docstring)."""
    lt, lv, _ = _tensor(doc, LONG)
    st, sv, _ = _tensor(doc, SHORT)
    if lv is None or sv is None:
        problems.append(Problem(RUNTIME_REFUSES, kind, f"{kind.key} longrope without float {LONG} and {SHORT} "
                         "tensors: llama.cpp has no factors to apply"))
        return None, {}
    o = orig or preset(ctx.raw, f"{ctx.key} (llama.cpp default n_ctx_orig_yarn)", ctx, "int")
    attn = doc.get(f"{a}.rope.scaling.attn_factor") or preset(1.0, "llama.cpp default rope.scaling.attn_factor", None)
    params = {"short_factor": Value(list(sv), SHORT, 1, 1, "", "list"),
              "long_factor": Value(list(lv), LONG, 1, 1, "", "list"),
              "original_max_position_embeddings": o, "attention_factor": attn}
    return derived("longrope", f"{kind.key}: {LONG} when the served context exceeds {o.where}", kind, "str"), params
