"""Measurement of produced rotary encodings against the ideal ones: exactness, drift, phase error.

Measurement (per position p in [0, L), rotary pairs i = 0 .. d/2-1)
- produced angle phi_i(p) = atan2(sin_i(p), cos_i(p)) in (-pi, pi];
- effective frequency omega_i: recovered from phi at p = 1, 2, 4, ..., 2^k < L by successive
  unwrapping (omega_i = phi_i(1); then omega_i <- [p omega_i + wrap(phi_i(p) - p omega_i)] / p).
  Multiplying by a power of two is exact in binary floating point, so neither a rounded
  position nor a rounded product p * theta can show at these positions: omega is exactly the
  (possibly rounded) inv_freq the module multiplies by;
- error e(p) = wrap(phi(p) - p omega) (wrap into (-pi, pi]), spacing s = ||wrap(omega)||_2 (the
  distance between the ideal angle vectors of p and p + 1, the same for every p);
- p is *exact* iff ||e(p)||_2 < s / 2: the produced encoding is closer to the ideal encoding of
  p than half the distance to the ideal encoding of its neighbour;
- p is *explained by rounded positions* iff ||wrap(phi(p) - r(p) omega)||_2 < s / 2 for r(p) one of
  the two values of the scenario's dtype next to p (:func:`neighbours_in_format`; any rounding
  mode: ``.to(bf16)`` rounds to nearest even, ``torch.arange(n, dtype=torch.bfloat16)`` does not
  always, e.g. 4113 -> 4096). When only
  positions are rounded, phi(p) = r(p) omega (+ float32 noise) and since r(p) - p is a nonzero
  integer k for every inexact p, ||wrap(k omega)|| > s / 2 for RoPE frequency sets, so the exact
  fraction equals the format's exact-position fraction (896 / 8,192 in bf16 at 8,192:
  seed 004, checked in tests/test_audit_runtime.py);
- frequency drift = max_i |omega_i / theta_i - 1| against the nominal theta_i = base^(-2i/d)
  (RoFormer, arXiv 2104.09864, eq. 34), base given or fitted to a float32 build;
- max phase error = max |p (omega_i - theta_i) + e_i(p)| in radians: the frequency part
  accumulated (unwrapped), the per-position part wrapped.
- magnitude error = max_{p,i} |r_i(p) / r_i^ref(p) - 1| with r = sqrt(cos^2 + sin^2): r^ref = 1
  for a plain rotation, the float32 build's own magnitude for a rotary that scales its encoding
  (XPos, Sun et al. 2022, arXiv 2212.10554 eq. 3-4: q scaled by zeta^(n/gamma); an attention factor
  folded into cos/sin; YaRN's mscale 0.1 ln s + 1, Peng et al. 2023, arXiv 2309.00071 eq. 22);
  above :func:`magnitude_tolerance` (twice the output rounding) it is the scale itself that was
  computed in low precision.
Evidence path: "sine lost" when no finite position has a nonzero sine (a cast made complex
frequencies real: the imaginary part, the sine, is dropped); "product rounded" when inexact
positions are not all explained by rounded positions; "positions rounded" when they are;
otherwise "frequencies rounded" when the drift exceeds :data:`DRIFT_TOLERANCE`; otherwise "magnitude
off" when the magnitude error exceeds :func:`magnitude_tolerance`; otherwise "clean".

Pure numpy: no torch here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any
from collections.abc import Sequence

import numpy as np

from ..errors import UsageError
from ..results import Result

TWO_PI = 2.0 * math.pi
# Frequencies computed in float32 deviate from base^(-2i/d) by a few float32 ulps (2^-24 ~ 6e-8
# each, pow and reciprocal). A round-to-nearest cast to a format with p significant bits moves a
# value x by at most half an ulp, 2^(e-p) for x in [2^e, 2^(e+1)): at most 2^-p relative
# (:func:`unit_roundoff`; Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed., thm 2.2):
# fp16 (p = 11) 2^-11 ~ 4.9e-4, bf16 (p = 8) 2^-8 ~ 3.9e-3 (3.65e-3 measured for base 10,000,
# d = 128, above 2^-9). 1e-5 separates float32 noise from either by more than an order of magnitude.
DRIFT_TOLERANCE = 1e-5
DEFAULT_CHUNK = 32768  # rows per measurement chunk: (chunk, d/2) float64 arrays of ~16 MB at d=128
# A rotary that scales its encoding (XPos, an attention factor folded into cos/sin, YaRN's mscale)
# is one whose float32 build gives |(cos, sin)| != 1 by more than any rounding of cos/sin can
# (bf16 2^-8 = 0.39%: vLLM keeps its cos/sin cache in the model dtype) and less than the scales in
# use: YaRN's mscale 0.1 ln s + 1 >= 1.069 for s >= 2; XPos zeta^(p/gamma) reaches 1.4x within 512.
SCALED_TOLERANCE = 1e-2


def magnitude_tolerance(output_dtype: str) -> float:
    """Largest relative magnitude error output rounding alone can cause: 2u + 2^-20.

    Rounding cos and sin to a format with unit roundoff u (:func:`unit_roundoff`) changes each by
    at most u relative, so their norm by at most u (|(c(1+e1), s(1+e2))| / |(c, s)| - 1 <= u for
    |e1|, |e2| <= u); the float32 reference adds a few 2^-24. Twice u plus 2^-20 leaves a margin:
    bf16 0.78%, fp16 0.098%, float32 1.1e-6. A larger error is the scale itself computed in low
    precision (XPos after ``.to(bf16)``: 9.08%, issue 11).
    """
    u = _ROUNDOFF.get(output_dtype.replace("torch.", "").replace("complex64", "float32"), 2.0**-8)
    return 2.0 * u + 2.0**-20


def scenario_magnitude_tolerance(output_dtype: str, scenario_dtype: str) -> float:
    """:func:`magnitude_tolerance` of the coarser of the output dtype and the scenario's dtype.

    A module may round its cos/sin table to the scenario dtype and return it in another (float32
    after an upcast, or bf16 cos/sin multiplied into a float32 query): the table's own rounding, up
    to 2u of the scenario dtype, is output rounding, not a scale computed in low precision.
    """
    names = {"bf16": "bfloat16", "fp16": "float16", "fp32": "float32"}
    return max(magnitude_tolerance(output_dtype), magnitude_tolerance(names.get(scenario_dtype, scenario_dtype)))


def _wrap(x: np.ndarray) -> np.ndarray:
    """Wrap angles into [-pi, pi] (x - 2 pi round(x / 2 pi)), in place."""
    x -= TWO_PI * np.round(x * (1.0 / TWO_PI))
    return x


# --------------------------------------------------------------------------- frequencies, base


def effective_frequencies(positions: Sequence[int], cos: np.ndarray, sin: np.ndarray) -> np.ndarray:
    """Per-pair frequencies recovered from the encodings at positions 1, 2, 4, ... (ascending).

    ``cos``, ``sin``: ``(len(positions), d/2)``. omega_i = phi_i(1), then for each next power of
    two p: omega_i <- [p omega_i + wrap(phi_i(p) - p omega_i)] / p (successive unwrapping; the
    prediction error stays at twice the angle-measurement error, far below pi). Pairs whose
    encoding is not finite at some p keep their previous estimate. Returns float64 ``(d/2,)``.
    Domain: positions[0] must be 1 and omega_i in (-pi, pi] (every RoPE variant in use).
    """
    if not positions or positions[0] != 1:
        raise UsageError("effective_frequencies needs the encoding at position 1 first")
    phi = np.arctan2(np.asarray(sin, np.float64), np.asarray(cos, np.float64))  # (k, d/2)
    omega = phi[0].copy()
    for row, p in zip(phi[1:], positions[1:], strict=True):
        ok = np.isfinite(row) & np.isfinite(omega)
        pred = p * omega
        new = (pred + _wrap(row - pred)) / p
        omega = np.where(ok, new, omega)
    return omega


def unit_roundoff(dtype: str) -> float:
    """u = 2^-p, p the format's significant bits (``formats.get_format(dtype).precision``).

    The largest relative change a round-to-nearest cast makes to a finite, normal value (half an
    ulp; Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed., thm 2.2): bf16 2^-8,
    fp16 2^-11, fp32 2^-24, fp8 e4m3 2^-4, e5m2 2^-3; float64 2^-53.
    """
    from ..formats import get_format

    name = str(dtype).replace("torch.", "").lower()
    if name in ("float64", "double", "fp64"):
        return 2.0**-53
    return 2.0 ** -get_format({"float8_e4m3fn": "fp8_e4m3", "float8_e5m2": "fp8_e5m2"}.get(name, name)).precision


_ROUNDOFF = {name: unit_roundoff(name) for name in ("bfloat16", "float16", "float32", "float64")}


def frequency_uncertainty(omega: np.ndarray, p_max: int, output_dtype: str) -> np.ndarray:
    """Bound on the error of :func:`effective_frequencies` per pair (radians per position).

    The angle at p_max is measured to within 2u (cos and sin each rounded to the output dtype,
    unit roundoff u = 2^-P; atan2 turns an error u in both into at most ~1.4u in angle) plus the
    module's float32 evaluation (p_max |omega| 2^-23 for the angle, 2^-22 for cos/sin); the
    unwrapped estimate divides by p_max.
    """
    u = _ROUNDOFF.get(output_dtype.replace("torch.", ""), 2.0**-8)
    return (2 * u + p_max * np.abs(omega) * 2.0**-23 + 2.0**-22) / p_max


def resolve_frequencies(measured: np.ndarray, uncertainty: np.ndarray,
                        candidates: Sequence[tuple[str, np.ndarray | None]]) -> tuple[np.ndarray, str]:
    """The candidate frequency vector the measurement is consistent with, else the measurement.

    A candidate c (e.g. the module's own inv_freq, the float32 build's frequencies, those rounded
    to the scenario dtype) is accepted when |measured_i - c_i| <= uncertainty_i for every pair;
    among accepted ones the closest (in max |measured - c| / uncertainty) wins. Exact candidate
    values make the ideal encoding, the drift and the phase error exact rather than estimated.
    """
    best, best_name, best_score = measured, "measured", math.inf
    for name, cand in candidates:
        if cand is None or cand.shape != measured.shape or not np.all(np.isfinite(cand)):
            continue
        score = float(np.max(np.abs(measured - cand) / uncertainty))
        if score <= 1.0 and score < best_score:
            best, best_name, best_score = np.asarray(cand, np.float64), name, score
    return best, best_name


def fit_base(omega: np.ndarray) -> tuple[float | None, float]:
    """Fit theta_i = base^(-2i/d), d = 2 len(omega), to frequencies; returns (base, residual).

    Least squares of ln omega_i = -(2i/d) ln base through the origin (theta_0 = 1 in RoFormer,
    arXiv 2104.09864 eq. 34): ln base = -sum x_i y_i / sum x_i^2 with x_i = 2i/d, y_i = ln omega_i.
    A base within 1e-6 (relative) of an integer is snapped to it (float32 frequencies carry
    ~1e-7 noise). ``residual`` = max_i |omega_i / base^(-x_i) - 1|. Returns (None, inf) when the
    frequencies are not positive or there is a single pair.
    """
    omega = np.asarray(omega, np.float64)
    n = omega.size
    if n < 2 or not np.all(np.isfinite(omega)) or np.any(omega <= 0):
        return None, math.inf
    x = 2.0 * np.arange(n) / (2 * n)
    y = np.log(omega)
    ln_b = -float(np.dot(x, y) / np.dot(x, x))
    base = math.exp(ln_b)
    if base > 1 and abs(base - round(base)) <= 1e-6 * base:
        base = float(round(base))
    residual = float(np.max(np.abs(omega / base ** (-x) - 1.0)))
    return base, residual


def _simple_bases(fitted: float) -> list[float]:
    """Candidate bases, simplest first: the fit rounded to 1 .. 6 significant digits, then the fit."""
    out: list[float] = []
    for digits in range(1, 7):
        b = float(f"{fitted:.{digits}g}")
        if b > 1 and b not in out:
            out.append(b)
    return out + ([fitted] if fitted not in out else [])


def geometric_nominal(omega: np.ndarray, uncertainty: np.ndarray) -> tuple[float | None, float, str | None, str]:
    """(base, fit residual, rounded_to, how): the base^(-2i/d) the measured frequencies are, or None.

    1. :func:`fit_base` within :data:`DRIFT_TOLERANCE` (float32 frequencies: the fitted base);
    2. else the simplest base (:func:`_simple_bases`) with |omega_i - base^(-2i/d)| <= uncertainty_i
       for every pair: frequencies measured from a bf16/fp16 output (nanochat, modded-nanogpt and
       sglang build their tables in bf16) are geometric within what the measurement can resolve;
    3. else the simplest base whose frequencies rounded to bf16 or fp16
       (:func:`ropelaw.formats.round_to_format`) match within the uncertainty: the module rounds its
       frequencies itself (``rounded_to`` = "bf16" / "fp16"; RP308).
    (None, residual, None, "none") when none holds (scaled or custom frequencies: YaRN, Llama 3, a zero
    pair). ``how``: "fit" | "within measurement" | "rounded" | "none".
    """
    from ..formats import round_to_format

    omega = np.asarray(omega, np.float64)
    fitted, residual = fit_base(omega)
    if fitted is None:
        return None, residual, None, "none"
    if residual <= DRIFT_TOLERANCE:
        return fitted, residual, None, "fit"
    n = omega.size
    x = 2.0 * np.arange(n) / (2 * n)
    tol = np.asarray(uncertainty, np.float64) + 4 * 2.0**-24 * np.abs(omega)  # + float32 evaluation
    for b in _simple_bases(fitted):
        if np.all(np.abs(omega - b ** (-x)) <= tol):
            return b, float(np.max(np.abs(omega / b ** (-x) - 1.0))), None, "within measurement"
    for fmt in ("bf16", "fp16"):
        u = unit_roundoff({"bf16": "bfloat16", "fp16": "float16"}[fmt])
        representable = np.all(np.abs(omega - np.asarray(round_to_format(omega, fmt), np.float64)) <= tol)
        if not representable:
            continue
        for b in _simple_bases(fitted):
            theta = b ** (-x)
            # every omega_i a value of fmt within half an ulp of theta_i (+ float32 evaluation of theta_i)
            if np.all(np.abs(omega - theta) <= u * theta * (1 + 2.0**-20) + tol + 2.0**-22 * theta):
                return b, float(np.max(np.abs(omega / theta - 1.0))), fmt, "rounded"
    return None, residual, None, "none"


# --------------------------------------------------------------------------- measurement core


def neighbours_in_format(pos: np.ndarray, dtype: str) -> tuple[np.ndarray, np.ndarray]:
    """The representable neighbours of non-negative integers ``pos`` in ``dtype``: (down, up).

    For p >= 1 with p = f 2^e (frexp, f in [0.5, 1)), the spacing of the format's binade holding p
    is 2^(e - P) with P the precision (significant bits); down = floor(p / s) s, up = ceil(p / s) s,
    both exact in float64 (power-of-two scaling). Values above the format's largest finite value
    become inf. Positions below 2^P are their own neighbours.
    """
    from ..formats import get_format

    fmt = get_format(dtype)
    p = np.asarray(pos, np.float64)
    _, e = np.frexp(np.maximum(p, 1.0))
    step = np.ldexp(1.0, np.maximum(e - fmt.precision, 0))  # (m,) spacing, >= 1 for integers
    down = np.floor(p / step) * step
    up = np.ceil(p / step) * step
    down[down > fmt.max_finite] = np.inf
    up[up > fmt.max_finite] = np.inf
    return down, up


class EncodingStats:
    """Streaming measurement of produced encodings against the ideal ones (see module docstring).

    Feed chunks with :meth:`update` (positions ascending, any chunk size); read the totals with
    :meth:`summary`. Memory: a 64-bit hash per row for the distinct count, the rest per chunk.
    """

    def __init__(self, omega: np.ndarray, nominal: np.ndarray, dtype: str | None, length: int):
        self.omega = np.asarray(omega, np.float64)  # (d/2,) effective frequencies
        self.nominal = np.asarray(nominal, np.float64)  # (d/2,) nominal frequencies
        self.dtype = dtype  # format positions are rounded to for the "positions rounded" test
        self.length = length
        spacing = float(np.linalg.norm(_wrap(self.omega.copy())))
        self.spacing = spacing
        self.tau2 = (spacing / 2.0) ** 2
        self.count = 0
        self.exact = 0
        self.nonfinite = 0
        self.unexplained = 0  # inexact, finite, not explained by rounded positions
        self.first_inexact: int | None = None
        self.max_phase_error = 0.0
        self.max_phase_error_at: int | None = None
        self.max_distance = 0.0
        self.max_magnitude_error = 0.0  # max |r(p) / r_ref(p) - 1| over pairs, r = |(cos, sin)|
        self.max_magnitude_error_at: int | None = None
        self.sine_rows = 0  # finite rows with a nonzero sine: 0 when the sine is lost
        self._hashes: list[np.ndarray] = []
        rng = np.random.default_rng(0x5EED004)
        self._w = rng.integers(1, 2**63, size=2 * self.omega.size, dtype=np.uint64) | np.uint64(1)  # odd

    def update(self, positions: np.ndarray, cos: np.ndarray, sin: np.ndarray,
               reference_magnitude: np.ndarray | None = None) -> None:
        """positions ``(n,)`` int; cos, sin ``(n, d/2)`` float32 (bf16/fp16/fp32 outputs convert exactly).

        ``reference_magnitude`` ``(n, d/2)``: |(cos, sin)| of the float32 build at the same
        positions, for rotaries that scale their encoding; None: the nominal magnitude is 1.

        Angles come from a float32 atan2 (error below 4e-7 rad, three orders of magnitude under
        the bf16 output rounding the module itself applies); everything that involves p is float64.
        """
        cos = np.asarray(cos, np.float32)  # (n, d/2) float32
        sin = np.asarray(sin, np.float32)  # (n, d/2) float32
        pos = np.asarray(positions, np.float64)  # (n,) float64, exact below 2^53
        n = pos.size
        self.count += n
        bits = np.concatenate([cos, sin], axis=1).view(np.uint32)  # (n, d) uint32: a 64-bit hash per row
        self._hashes.append((bits * self._w).sum(axis=1, dtype=np.uint64))
        finite = np.isfinite(cos).all(axis=1) & np.isfinite(sin).all(axis=1)  # (n,) bool
        self.nonfinite += int(n - finite.sum())
        phi = np.arctan2(sin, cos).astype(np.float64)  # (n, d/2) float64 from float32 atan2
        err = phi - pos[:, None] * self.omega  # (n, d/2) float64
        _wrap(err)
        dist2 = np.einsum("ij,ij->i", err, err)  # (n,)
        exact = finite & (dist2 < self.tau2)
        self.exact += int(exact.sum())
        inexact = ~exact
        if inexact.any():
            if self.first_inexact is None:
                self.first_inexact = int(pos[np.argmax(inexact)])
            sel = inexact & finite
            if sel.any():
                self.unexplained += self._unexplained(pos[sel], phi[sel])
        if finite.any():
            self.sine_rows += int(np.count_nonzero(np.any(sin[finite] != 0, axis=1)))
            mag = np.hypot(cos[finite].astype(np.float64), sin[finite].astype(np.float64))  # (m, d/2)
            ref = 1.0 if reference_magnitude is None else np.asarray(reference_magnitude, np.float64)[finite]
            rel = np.abs(mag / ref - 1.0)  # (m, d/2)
            k = int(np.argmax(rel.max(axis=1)))
            if rel[k].max() > self.max_magnitude_error:
                self.max_magnitude_error = float(rel[k].max())
                self.max_magnitude_error_at = int(pos[finite][k])
            self.max_distance = max(self.max_distance, float(np.sqrt(dist2[finite].max())))
            err += pos[:, None] * (self.omega - self.nominal)  # phase error against nominal
            np.abs(err, out=err)
            row_max = np.where(finite, err.max(axis=1), -1.0)
            k = int(np.argmax(row_max))
            if row_max[k] > self.max_phase_error:
                self.max_phase_error = float(row_max[k])
                self.max_phase_error_at = int(pos[k])

    def _unexplained(self, pos: np.ndarray, phi: np.ndarray) -> int:
        """How many of these inexact rows are NOT the ideal encoding of a rounded position.

        A rounded position is either neighbour of p in the format (the largest representable
        value <= p or the smallest >= p), so any rounding mode counts: round-to-nearest-even
        (``.to(bf16)``) and the truncation ``torch.arange(n, dtype=torch.bfloat16)`` performs
        (4113 -> 4096 in bf16, where round-to-nearest gives 4128).
        """
        if self.dtype is None:
            return int(pos.size)
        down, up = neighbours_in_format(pos, self.dtype)  # (m,) float64 each, inf on overflow
        explained = np.zeros(pos.size, dtype=bool)
        for q in (down, up):
            ok = np.isfinite(q)
            err = phi - np.where(ok, q, 0.0)[:, None] * self.omega
            _wrap(err)
            explained |= ok & (np.einsum("ij,ij->i", err, err) < self.tau2)
        return int((~explained).sum())

    def distinct(self) -> int:
        """Number of distinct produced encodings (rows compared through a 64-bit hash)."""
        if not self._hashes:
            return 0
        h = np.concatenate(self._hashes)  # (count,) uint64
        h.sort()
        return int(1 + np.count_nonzero(h[1:] != h[:-1]))

    def path(self, drift: float) -> str:
        """Which dtype path the evidence points to (see module docstring)."""
        if self.count > 1 and self.sine_rows == 0 and self.count > self.nonfinite:
            return "sine lost"
        inexact_finite = self.count - self.exact - self.nonfinite
        if inexact_finite > 0 or self.nonfinite > 0:
            return "product rounded" if self.unexplained > 0 else "positions rounded"
        if drift > DRIFT_TOLERANCE:
            return "frequencies rounded"
        return "clean"



# --------------------------------------------------------------------------- results


@dataclass
class ScenarioResult(Result):
    """One precision scenario's measurements (see the module docstring for definitions)."""

    scenario: str  # cast | default | autocast
    dtype: str  # bf16 | fp16 | fp32
    length: int  # positions 0 .. length-1
    exact: int  # positions whose encoding is exact
    exact_fraction: float
    distinct: int  # distinct encodings produced
    distinct_fraction: float
    nonfinite: int  # positions with inf / NaN in cos or sin
    first_inexact: int | None  # smallest inexact position (None if all exact)
    frequency_drift: float  # max_i |omega_i / theta_i - 1|
    max_phase_error: float  # radians, against the nominal encoding
    max_phase_error_at: int | None  # position where it occurs
    path: str  # product rounded | positions rounded | frequencies rounded | clean
    output_dtype: str  # dtype of the cos/sin the module returned
    frequency_source: str  # which exact frequency vector the measurement matched, or "measured"
    effective_frequencies: list[float] = field(default_factory=list, repr=False)
    magnitude_error: float = 0.0  # max relative error of |(cos, sin)| against its reference
    magnitude_error_at: int | None = None
    magnitude_reference: str = "1"  # 1 | float32 build (a rotary that scales its encoding)
    note: str | None = None  # what the scenario did (e.g. complex buffers a cast made real)
    error: str | None = None  # the exception the scenario raised, in one line (path "error")

    def to_dict(self) -> dict[str, Any]:
        d = super().to_dict()
        d.pop("effective_frequencies")
        # JSON has no inf/NaN: a measurement that could not be made is null
        return {k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in d.items()}


