"""What a GGUF's frequency-factor tensor says: llama.cpp's ``rope_freqs.weight``.

llama.cpp does not store Llama 3.1's ``rope_scaling`` in a GGUF's metadata: its HF-to-GGUF
conversion (llama-cpp-python==0.3.36 vendor/llama.cpp ``conversion/llama.py``
``generate_extra_tensors``; ``conversion/exaone.py`` alike) writes one factor per pair,

    f_i = 1                                   wavelength lambda_i < L / high
    f_i = s                                   lambda_i > L / low
    f_i = 1 / ((1 - a_i) / s + a_i)           otherwise, a_i = (L / lambda_i - low) / (high - low)

(lambda_i = 2 pi / theta_i, theta_i = base^(-2i/d); s ``factor``, L ``original_max_position_embeddings``,
``low_freq_factor``, ``high_freq_factor``), stored as float32, and ggml's rope divides each pair's
angle by it (``ggml-cpu/ops.cpp`` ``rope_yarn``: ``theta_extrap / freq_factor``). So the frequencies
llama.cpp runs are theta_i / f_i: transformers' ``_compute_llama3_parameters`` (Meta, arXiv
2407.21783), the same formula.

Reading it back (:func:`fit_llama3`): s is the largest factor; on the smooth band a_i is linear in
theta_i, a_i = A theta_i + B with A = L / (2 pi (high - low)) and B = -low / (high - low), so two
smooth pairs fix A and B and the rest must lie on that line. The tensor fixes only L/low and L/high
(two models with L, low, high and 2L, 2low, 2high store the same factors): the original length is
read with ``low_freq_factor`` 1, as in every published Llama 3.x config, and said. A tensor without
two smooth pairs (Llama 4: low = high) fixes the band edge only between two wavelengths.

Rounding (:func:`rounded_to`): factors stored as float16 / bfloat16, or stored as float32 but every
smooth factor exactly a float16 (bfloat16) number, were rounded: a smooth factor computed in float32
is a float16 number by chance with probability 2^-13 each.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = ["Llama3Fit", "llama3_factors", "fit_llama3", "snapped", "rounded_to", "ROUNDOFF"]

# unit roundoff of the formats a factor may have been rounded to (round to nearest: half an ulp at 1)
ROUNDOFF = {"float16": 2.0**-11, "bfloat16": 2.0**-8, "float32": 2.0**-24}


def llama3_factors(base: float, d: int, factor: float, low: float, high: float, original: float) -> np.ndarray:
    """The conversion's factors f_i (module docstring) in float64, i = 0 .. d/2 - 1. Source: llama.cpp
    ``conversion/llama.py`` ``generate_extra_tensors`` (which evaluates theta_i in float32 first)."""
    theta = base ** (-np.arange(0, d, 2, dtype=np.float64) / d)  # (d/2,) float64
    wavelen = 2 * math.pi / theta
    out = np.empty_like(theta)
    for i, w in enumerate(wavelen):
        if w < original / high:
            out[i] = 1.0
        elif w > original / low:
            out[i] = factor
        else:
            a = (original / w - low) / (high - low)
            out[i] = 1 / ((1 - a) / factor + a)
    return out


@dataclass(frozen=True)
class Llama3Fit:
    """Llama 3 parameters read back from a factor tensor (module docstring)."""

    factor: float
    low: float  # assumed 1 (the tensor fixes only original/low and original/high)
    high: float | None  # None: no smooth band (the band edge is known between two wavelengths only)
    original: float | None
    residual: float  # largest |f_i / formula_i - 1| over every pair, with the fitted parameters
    smooth: int  # pairs on the smooth band (1: the parameters cannot be read back; residual NaN)
    edge: tuple | None = None  # (lambda below, lambda above) bracketing L / low when there is no smooth band

    def formula(self, base: float, d: int) -> np.ndarray | None:
        if self.high is None or self.original is None:
            return None
        return llama3_factors(base, d, self.factor, self.low, self.high, self.original)


def fit_llama3(values: np.ndarray, base: float, d: int, tol: float = 1e-6) -> Llama3Fit | None:
    """The Llama 3 parameters of factors ``values`` (float64, one per pair) at ``base`` and ``d`` rotary
    dims, or None when they are not that formula's shape (not 1 on the fastest pair, not
    non-decreasing, below 1). ``tol``: relative distance within which a factor counts as 1 or s."""
    v = np.asarray(values, np.float64).reshape(-1)
    if v.size == 0 or not np.all(np.isfinite(v)) or v.size != d // 2:
        return None
    s = float(v.max())
    if abs(v[0] - 1) > tol or np.any(v < 1 - tol) or np.any(np.diff(v) < -tol * s):
        return None
    theta = base ** (-np.arange(0, d, 2, dtype=np.float64) / d)
    if s <= 1 + tol:
        return Llama3Fit(1.0, 1.0, None, None, float(np.max(np.abs(v - 1))), 0)
    mid = (v > 1 + tol) & (v < s * (1 - tol))
    if int(mid.sum()) == 1:  # one smooth pair: A and B (two unknowns) are not fixed by it
        return Llama3Fit(s, 1.0, None, None, math.nan, 1)
    if int(mid.sum()) < 2:
        ones = np.flatnonzero(np.abs(v - 1) <= tol)
        scaled = np.flatnonzero(np.abs(v / s - 1) <= tol)
        if ones.size + scaled.size + int(mid.sum()) != v.size:
            return None
        edge = (2 * math.pi / theta[ones[-1]], 2 * math.pi / theta[scaled[0]]) if ones.size and scaled.size else None
        return Llama3Fit(s, 1.0, None, None, 0.0, int(mid.sum()), edge)
    a = (1 / v[mid] - 1 / s) / (1 - 1 / s)  # the smooth weights a_i
    A, B = np.polyfit(theta[mid], a, 1)  # a_i = A theta_i + B
    if B >= 0 or A <= 0:
        return None
    high = 1 - 1 / B  # low = 1: B = -1 / (high - 1)
    original = -2 * math.pi * A / B  # A = L / (2 pi (high - 1))
    f = llama3_factors(base, d, s, 1.0, high, original)
    return Llama3Fit(s, 1.0, float(high), float(original), float(np.max(np.abs(v / f - 1))), int(mid.sum()))


def snapped(fit: Llama3Fit, values: np.ndarray, base: float, d: int, stored: str = "float32") -> Llama3Fit:
    """``fit`` with high_freq_factor and the original length snapped to round values (an eighth; a power of two
    or a whole number) when the formula with them fits ``values`` within the storage's rounding (``stored``:
    float32 / float16 / bfloat16), else ``fit`` as it is."""
    if fit.high is None or fit.original is None:
        return fit
    v = np.asarray(values, np.float64).reshape(-1)
    tol = max(fit.residual, 4 * ROUNDOFF.get(stored, ROUNDOFF["float32"])) + 1e-7
    for h in (round(fit.high * 8) / 8, round(fit.high, 3)):
        for o in (2.0 ** round(math.log2(fit.original)), float(round(fit.original))):
            if h > 1:
                r = float(np.max(np.abs(v / llama3_factors(base, d, fit.factor, 1.0, h, o) - 1)))
                if r <= tol:
                    return Llama3Fit(fit.factor, 1.0, h, o, r, fit.smooth)
    return fit


def rounded_to(values: np.ndarray, stored: str, tol: float = 1e-6) -> str | None:
    """The format the factors were rounded to (module docstring): ``stored`` when that is float16 /
    bfloat16, else the coarsest of bfloat16, float16 in which every factor strictly between 1 and the
    largest is exact (at least two of them), or None."""
    if stored in ("float16", "bfloat16"):
        return stored
    v = np.asarray(values, np.float64).reshape(-1)
    if v.size == 0 or not np.all(np.isfinite(v)):
        return None
    s = float(v.max())
    mid = v[(v > 1 + tol) & (v < s * (1 - tol))]
    if mid.size < 2:
        return None
    import ml_dtypes

    for name, dt in (("bfloat16", ml_dtypes.bfloat16), ("float16", np.float16)):
        if np.all(mid.astype(dt).astype(np.float64) == mid):
            return name
    return None
