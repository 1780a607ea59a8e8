"""What a checkpoint's stored values are: rounding tolerances of each stored dtype, the base fitted to
an ``inv_freq``, whether values are a geometric sequence of frequencies, ALiBi slopes (Press et al.),
cache layouts. numpy only; the audit that uses them is :mod:`ropelaw.audit.checkpoint`."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..errors import UsageError

# unit roundoff 2^-p (p significant bits, formats.get_format(...).precision): the largest relative
# change of a round-to-nearest cast (half an ulp): bf16 2^-8, fp16 2^-11, e4m3 2^-4, e5m2 2^-3
ROUNDOFF = {"float64": 2.0**-53, "float32": 2.0**-24, "bfloat16": 2.0**-8, "float16": 2.0**-11,
             "float8_e4m3fn": 2.0**-4, "float8_e5m2": 2.0**-3}
# half the subnormal spacing, 2^(emin - p) with emin = 1 - bias: the largest ABSOLUTE change of a
# round-to-nearest cast below the smallest normal (fp16: 2^-25, under 2^-14 ~ 6.1e-5, where
# 10000^(-2i/128) lands for i >= 61), where the relative bound 2^-p no longer holds
_SUBNORMAL_HALF = {"float64": 2.0**-1075, "float32": 2.0**-150, "bfloat16": 2.0**-134, "float16": 2.0**-25,
                   "float8_e4m3fn": 2.0**-10, "float8_e5m2": 2.0**-17}


def _stored_tolerance(v: np.ndarray, dtype: str, ln_base: np.ndarray | float) -> np.ndarray:
    """Relative tolerance per stored value: dtype rounding (2^-p, or 2^(emin-p) / v when subnormal)
    plus float32 evaluation of base^(-2i/d), 2^-24 (3 + ln base) (exponent rounded: 2^-24 ln base;
    pow and reciprocal: an ulp each)."""
    v = np.abs(np.asarray(v, np.float64))
    with np.errstate(divide="ignore"):
        sub = _SUBNORMAL_HALF.get(dtype, 0.0) / v
    return ROUNDOFF.get(dtype, 2.0**-24) + sub + 2.0**-24 * (3.0 + np.asarray(ln_base, np.float64))


def alibi_slopes(heads: int) -> np.ndarray:
    """ALiBi head slopes (Press et al. 2022, arXiv 2108.12409, sec. 3): 2^(-8h/n), h = 1..n, n = 2^k.

    For a head count H that is not a power of two, BLOOM's extension: the n = 2^floor(log2 H)
    slopes, then every other slope of the 2n sequence (2^(-4h/n), h = 1, 3, 5, ...) for the rest.
    """
    if heads < 1:
        raise UsageError("heads must be >= 1")
    n = 1 << (heads.bit_length() - 1)
    slopes = [2.0 ** (-8.0 * h / n) for h in range(1, n + 1)]
    if n != heads:
        slopes += [2.0 ** (-4.0 * h / n) for h in range(1, 2 * (heads - n), 2)]
    return np.asarray(slopes, np.float64)


def inv_freq_details(values: np.ndarray, dtype: str) -> dict[str, Any]:
    from .runtime import fit_base

    v = np.asarray(values, np.float64).reshape(-1)
    n = v.size
    base, residual = fit_base(v)
    d = 2 * n
    if base is None:
        return {"rotary_dim": d, "base": None, "fit_residual": math.inf, "max_rel_deviation": math.inf,
                "formula_exact": False}
    # stored rounding + float32 evaluation: the exponent 2i/d rounded to float32 (relative 2^-24)
    # moves base^(-2i/d) by up to 2^-24 ln(base) relative; pow and reciprocal add an ulp each
    tol = _stored_tolerance(v, dtype, math.log(base))  # (d/2,)
    # a rounded inv_freq pulls the fit off a round base: prefer the simplest base (fewest
    # significant digits) whose formula the stored values match within the stored rounding
    for digits in (1, 2, 3, 4, 5, 6):
        simple = float(f"{base:.{digits}g}")
        if simple > 1 and np.all(np.abs(v / simple ** (-2.0 * np.arange(n) / d) - 1.0) <= tol):
            base = simple
            break
    tol = _stored_tolerance(v, dtype, math.log(base))
    formula = base ** (-2.0 * np.arange(n) / d)  # (d/2,) float64
    rel = np.abs(v / formula - 1.0)  # (d/2,)
    dev = float(np.max(rel))
    return {"rotary_dim": d, "base": base, "fit_residual": residual, "max_rel_deviation": dev,
            "formula_exact": bool(np.all(rel <= tol))}


def geometric_frequencies(values: np.ndarray, dtype: str) -> bool:
    """True when ``values`` are rotary frequencies theta_i = r^i, i = 0 .. n-1, r in (0, 1), as stored.

    RoPE frequencies (RoFormer, arXiv 2104.09864, eq. 34) are theta_i = base^(-2i/d): a geometric
    sequence through theta_0 = 1 with ratio r = base^(-2/d). Stored in ``dtype`` (unit roundoff u,
    2^-p; below the smallest normal an absolute 2^(emin - p)) after a float32 evaluation, each
    value is within tol_i = u + 2^-24 (3 + |ln theta_i|) (relative) of r^i (pow's exponent rounded
    in float32 moves the result by 2^-24 |ln theta_i|, pow and reciprocal an ulp each). The test
    is exact, not a fit: theta_0 must be 1 within tol_0, and the intervals for ln r allowed by each
    i >= 1, [(ln v_i - e_i) / i, (ln v_i + e_i) / i] with e_i = -ln(1 - tol_i), must intersect, entirely
    below 0 (r < 1 for every fit, so base > 1).
    Needs n >= 3 (two positive values are always "geometric"); non-finite or non-positive values
    are not frequencies.
    """
    v = np.asarray(values, np.float64).reshape(-1)
    n = v.size
    if n < 3 or not np.all(np.isfinite(v)) or np.any(v <= 0):
        return False
    lv = np.log(v)  # (n,)
    tol = _stored_tolerance(v, dtype, np.abs(lv))  # (n,) relative tolerance per value
    if np.any(tol >= 0.5):
        return False  # values so deep in the subnormals that any sequence would pass
    if abs(v[0] - 1.0) > tol[0]:
        return False
    e = -np.log1p(-tol)  # (n,) log-space half-widths, >= tol
    i = np.arange(1, n, dtype=np.float64)
    lo = float(np.max((lv[1:] - e[1:]) / i))
    hi = float(np.min((lv[1:] + e[1:]) / i))
    return lo <= hi and hi < 0.0  # a ratio < 1 for every fit: base > 1


_LAYOUT_SAMPLE = 4096  # rows compared to decide rotate-half / interleaved / per-pair


def pair_layout(cos: np.ndarray) -> str:
    """rotate-half, interleaved or per-pair, decided on the first rows of a (L, width) cos."""
    c = np.asarray(cos[:_LAYOUT_SAMPLE], np.float64)
    w = c.shape[-1]
    h = w // 2
    if w % 2 == 0 and np.array_equal(c[:, :h], c[:, h:], equal_nan=True):
        return "rotate-half"
    if w % 2 == 0 and np.array_equal(c[:, 0::2], c[:, 1::2], equal_nan=True):
        return "interleaved"
    return "per-pair"


def pair_values(a: np.ndarray, layout: str) -> np.ndarray:
    """(n, width) -> (n, pairs) float64 for ``layout``."""
    a = np.asarray(a, np.float64)
    if layout == "rotate-half":
        return a[:, : a.shape[-1] // 2]
    if layout == "interleaved":
        return a[:, 0::2]
    return a


def as_rows(a: np.ndarray) -> np.ndarray:
    """Drop leading singleton axes: (1, 1, L, d) -> (L, d); a view for contiguous arrays."""
    while a.ndim > 2 and a.shape[0] == 1:
        a = a[0]
    return a.reshape(-1, a.shape[-1]) if a.ndim > 2 else a


def not_decreasing_frequencies(v: np.ndarray, dtype: str) -> str | None:
    """Why finite, positive ``v`` cannot be rotary frequencies, or None.

    theta_i = base^(-2i/d), base > 1 (RoFormer eq. 15): theta_0 = 1 (1/s under position
    interpolation, s >= 1), so every value is at most 1 (plus the stored dtype's rounding of 1,
    which is exact in every float format: allowed anyway); strictly decreasing in i. In a format
    of 8 significant bits or fewer (bf16, fp8) neighbours may round to the same value when
    base^(2/d) < 1 + 2^-8: ties are allowed there, a rise never, and the last stays below the first.
    """
    if v.size == 0:
        return "it holds no frequencies (an empty tensor)"
    top = float(np.max(v))
    if top > 1.0 + 2 * ROUNDOFF.get(dtype, 2.0**-24):
        return (f"its largest value is {top:.3g} rad/token; rotary frequencies base^(-2i/d) are at most 1 "
                f"(theta_0 = 1)")
    if v.size < 2:
        return None
    step = np.diff(v)  # (n-1,)
    ties_ok = ROUNDOFF.get(dtype, 0.0) >= 2.0**-8
    rises = int(np.count_nonzero(step > 0)) if ties_ok else int(np.count_nonzero(step >= 0))
    if rises or not v[-1] < v[0]:
        what = "all equal" if np.all(step == 0) else (f"{rises:,} of {step.size:,} steps do not decrease"
                                                       if rises else "the last is not below the first")
        return (f"its values do not decrease with the pair index ({what}; first {v[0]:.3g}, last {v[-1]:.3g}); "
                "rotary frequencies base^(-2i/d) do")
    return None
