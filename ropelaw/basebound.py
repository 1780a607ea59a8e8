"""Base of RoPE bounds context length (Men et al. 2024, arXiv 2405.14591).

Men et al. show that a query attends more to a similar key than to a random one at
relative distance ``m`` in proportion to (their Theorem 1, "long-term decay" of the ability
to attend to similar tokens)

    B_{m,theta} = sum_{i=0}^{d/2-1} cos(m * theta_i)

and require ``B_{m,theta} >= 0`` for every distance within the context. This module gives,
for ANY frequency set (not only ``base^(-2i/d)``):

- :func:`b_m_theta` -- the sum itself;
- :func:`supported_length` -- the largest ``L`` with ``B_{m,theta} >= 0`` for every integer
  ``m`` in ``[0, L]`` (searched up to a limit);
- :func:`violations` -- how many ``m`` in ``[0, L]`` have ``B_{m,theta} < 0``;
- :func:`base_lower_bound` -- the smallest base ``b`` whose frequencies
  ``b^(-2i/d)`` support a given length (convention in its docstring).

Numerics. The sums are evaluated in float64 over all m at once, in blocks: with
``m = m0 + j``, ``cos((m0+j)theta) = cos(m0 theta)cos(j theta) - sin(m0 theta)sin(j theta)``,
so a block of sums is a product ``(rows, 2n) x (2n, J)`` (:func:`_screen_sums`; the row and
column tables built by doubling, the products in gemms small enough for one OpenBLAS thread;
1M distances x 64 pairs in about 0.02 s). The float error is bounded by :func:`_tolerance`
(the phase ``m*theta`` of a float theta rounded to half an ulp, the tables' powers, the sum);
every value whose magnitude is within that bound of zero has its sign recomputed with mpmath
at 40 digits using the exact float frequencies, so signs are exact for the given float64
frequency set.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Any
from collections.abc import Iterable

import numpy as np

from .errors import UsageError
from .schemes import default_inv_freq
from .spec import check_base, check_positive_int, check_rotary_dim

__all__ = [
    "b_m_theta",
    "supported_length",
    "violations",
    "base_lower_bound",
    "default_frequencies",
    "PUBLISHED_LOWER_BOUNDS",
]

_BLOCK = 256  # distances per row of the block product
_SLAB = 1024  # rows per matrix product (256K distances), the early-exit granularity
_WINDOW = 8192  # half-width of the window checked around a previous violation
_EPS = np.finfo(np.float64).eps

# Men et al. 2024, arXiv 2405.14591, Table 1: lower bound of the base for d = 128.
# keys: context length in "k" units (1k .. 1024k = 1M); values as printed (2 significant figures).
PUBLISHED_LOWER_BOUNDS: dict[int, float] = {
    1: 4.3e3, 2: 1.6e4, 4: 2.7e4, 8: 8.4e4, 16: 3.1e5, 32: 6.4e5,
    64: 2.1e6, 128: 7.8e6, 256: 3.6e7, 512: 6.4e7, 1024: 5.1e8,
}


def default_frequencies(d: int, base: float) -> np.ndarray:
    """theta_i = base^(-2i/d), i = 0 .. d/2-1 (RoFormer eq. 15), float64, shape (d/2,).

    :func:`ropelaw.schemes.default_inv_freq` as a numpy array (the same floats). Domain: ``d``
    an even integer >= 2 (``128.0`` passes), ``base`` finite and > 1; ``ValueError`` otherwise.
    """
    theta = default_inv_freq(check_rotary_dim(d), check_base("base", base))
    return np.array(theta, dtype=np.float64)  # (d/2,) f64


def _freqs(inv_freq: Any) -> np.ndarray:
    theta = np.asarray(inv_freq, dtype=np.float64).reshape(-1)  # (n,) f64
    if theta.size == 0:
        raise UsageError("frequency set is empty")
    if not np.all(np.isfinite(theta)):
        raise UsageError("frequencies must be finite")
    return theta


def _exact_sums(ms: Iterable[int], theta: np.ndarray) -> list[float]:
    """B_{m,theta} at 40 digits for each m (theta taken as the exact float64 values)."""
    import mpmath  # lazy: only for borderline values

    out = []
    with mpmath.workdps(40):
        th = [mpmath.mpf(float(t)) for t in theta]
        for m in ms:
            mm = mpmath.mpf(int(m))
            out.append(float(mpmath.fsum(mpmath.cos(mm * t) for t in th)))
    return out


def _unit_powers(theta: np.ndarray, count: int, scale: float = 1.0, unit: np.ndarray | None = None) -> np.ndarray:
    """e^(i j scale theta) for j = 0 .. count-1, shape (count, ..., n), complex128; ``theta`` (..., n).
    ``unit``: e^(i scale theta) when the caller computed it already.

    By doubling (rows [s, 2s) are rows [0, s) times z^s, z = e^(i scale theta)): log2(count)
    products instead of count*n cosines and sines, each over whole contiguous rows (the power
    index first: with it last, numpy looped over inner runs of 1, 2, 4 ... elements, 10x slower).
    z is within an ulp of the unit circle, so z^j is off by at most about (j + 2 log2(count) + 1)
    eps; :func:`_tolerance` counts j up to the width of the slab evaluated (its table columns
    plus rows).
    """
    size = 1 << max(0, (count - 1).bit_length())
    out = np.empty((size,) + theta.shape, dtype=np.complex128)  # (J, ..., n) c128
    out[0] = 1.0
    if size > 1:
        step = np.exp(1j * (scale * theta)) if unit is None else unit  # (..., n) c128
        out[1] = step
        have = 1
        while have < size:
            if have > 1:
                np.multiply(out[:have], step, out=out[have:2 * have])
            step = step * step
            have *= 2
    return out[:count]


def _tolerance(n: int, phase_max: float, powers: int = _BLOCK) -> float:
    """Bound on the float error of a sum of ``n`` cosines whose largest phase is ``phase_max``.

    Each term: the phase m*theta rounded (half an ulp of ``phase_max``), the cosine, and the
    (j + 20) eps of a power built by doubling (:func:`_unit_powers`, j < ``powers``); the sum of n
    terms adds (n-1) eps per unit term. A factor 16 of margin, as before the tables were built by
    doubling.
    """
    return 16.0 * n * _EPS * (24.0 + powers + phase_max)


class _Sums:
    """B_{m,theta} over ranges of m for one frequency set, signs exact."""

    def __init__(self, theta: np.ndarray) -> None:
        self.theta = theta  # (n,) f64
        self.theta_max = float(np.max(np.abs(theta)))

    def __call__(self, start: int, stop: int) -> np.ndarray:
        """B for m = start .. stop-1 (float64), borderline signs recomputed with mpmath."""
        vals = _screen_sums(self.theta[None, :], start, stop)[0]  # (count,) f64
        tol = _tolerance(self.theta.size, float(stop - 1) * self.theta_max, powers=stop - start)
        border = np.flatnonzero(np.abs(vals) <= tol)
        if border.size:
            vals[border] = _exact_sums((start + int(k) for k in border), self.theta)
        return vals


def _sums(theta: np.ndarray, start: int, stop: int) -> np.ndarray:
    """B_{m,theta} for m = start .. stop-1, float64, with borderline signs made exact."""
    return _Sums(theta)(start, stop)


def b_m_theta(m: Any, inv_freq: Any) -> Any:
    """B_{m,theta} = sum_i cos(m*theta_i) (Men et al. 2024, arXiv 2405.14591, Theorem 1).

    ``m``: an integer distance or an array of them; returns a float or a float64 array.
    Any frequency set ``inv_freq`` (rad/token). Borderline values are exact in sign
    (module docstring).
    """
    theta = _freqs(inv_freq)
    arr = np.asarray(m)
    if arr.ndim == 0:
        return float(_sums(theta, int(arr), int(arr) + 1)[0]) if float(arr) == int(arr) else float(
            np.cos(float(arr) * theta).sum())
    flat = arr.reshape(-1).astype(np.float64)
    out = np.cos(np.multiply.outer(flat, theta)).sum(-1)  # (len(m),) f64
    tol = 16.0 * theta.size * _EPS * (4.0 + float(np.max(np.abs(flat))) * float(np.max(np.abs(theta))))
    border = np.nonzero(np.abs(out) <= tol)[0]
    if border.size and np.all(flat == np.round(flat)):
        out[border] = _exact_sums((int(flat[k]) for k in border), theta)
    return out.reshape(arr.shape)


def _first_negative(theta: np.ndarray | _Sums, limit: int) -> int | None:
    """Smallest integer m in [0, limit] with B_{m,theta} < 0, or None."""
    sums = theta if isinstance(theta, _Sums) else _Sums(theta)
    start = 0
    step = _BLOCK * _SLAB
    # the first slab is small: unsupported sets usually fail early
    size = _BLOCK * 4
    while start <= limit:
        stop = min(limit + 1, start + size)
        vals = sums(start, stop)
        neg = np.flatnonzero(vals < 0)
        if neg.size:
            return start + int(neg[0])
        start = stop
        size = step
    return None


def supported_length(inv_freq: Any, limit: int) -> int:
    """Largest L <= ``limit`` with B_{m,theta} >= 0 for every integer m in [0, L] (Men et al.).

    Returns ``limit`` when no m up to ``limit`` violates the bound (the true supported
    length may be longer: search further with a larger limit). B_{0,theta} = n > 0, so the
    result is >= 0. Cost: O(limit * len(inv_freq)) at most, stopping at the first violation.
    """
    limit = check_positive_int("limit", limit, minimum=0)
    first = _first_negative(_freqs(inv_freq), limit)
    return limit if first is None else first - 1


def violations(inv_freq: Any, length: int) -> int:
    """Number of integers m in [0, ``length``] with B_{m,theta} < 0 (Men et al. 2024)."""
    length = check_positive_int("length", length, minimum=0)
    sums = _Sums(_freqs(inv_freq))
    total = 0
    step = _BLOCK * _SLAB
    for start in range(0, length + 1, step):
        total += int(np.count_nonzero(sums(start, min(length + 1, start + step)) < 0))
    return total


def _supports(d: int, base: float, length: int, hints: list[int] | None = None) -> bool:
    """Whether base^(-2i/d) keeps B >= 0 for every m <= length.

    ``hints``: distances where nearby bases failed. B varies smoothly with the base, so
    windows of 2*_WINDOW distances around earlier violations are checked first; a negative value
    there is a genuine violation (fail fast). Then every m <= length, from the top down.
    New violations are appended to ``hints``.
    """
    sums = _Sums(default_frequencies(d, base))
    if hints:
        for h in reversed(hints):  # the latest first
            lo, hi = max(0, h - _WINDOW), min(length + 1, h + _WINDOW)
            if lo < hi and np.any(sums(lo, hi) < 0):
                return False
    # any violation rejects the base: scan from the top, where bases just below the answer fail
    step = _BLOCK * 256
    for stop in range(length + 1, 0, -step):
        start = max(0, stop - step)
        neg = np.flatnonzero(sums(start, stop) < 0)
        if neg.size:
            found = start + int(neg[-1])
            if hints is not None and all(abs(found - h) > _WINDOW // 2 for h in hints):
                hints.append(found)
            return False
    return True


def _supports_exact(d: int, base: float, length: int, floor: int = 0, found: list | None = None) -> bool:
    """Whether base^(-2i/d) keeps B >= 0 for every m <= length: every m (from ``floor`` on, when the
    distances below it are known to pass), from the top down; a violation's distance is appended to
    ``found``.

    Slabs grow by 4 from the top (bases just below a lower bound fail near the length, rarely
    far below it), so a failing base costs about its distance from the top, a passing one the
    full O(length * d) sum. Signs exact (:class:`_Sums`).
    """
    sums = _Sums(default_frequencies(d, base))
    stop, size = length + 1, _BLOCK * 4
    while stop > floor:
        start = max(floor, stop - size)
        neg = np.flatnonzero(sums(start, stop) < 0)
        if neg.size:
            if found is not None:
                found.append(start + int(neg[0]))
            return False
        stop, size = start, min(size * 4, _BLOCK * _SLAB)
    return True


def _slow_pairs_certify(theta: np.ndarray, length: int) -> bool:
    """True when B_{m,theta} >= 0 for every integer m in [0, ``length``] follows from the frequencies
    alone, without a sum: a pair with ``length * theta_i`` below 3 (< pi) has cos(m theta_i) >=
    cos(length theta_i) for every such m (the cosine decreases on [0, pi]), any other pair >= -1; when
    the sum of these lower bounds exceeds 1e-6 per pair (float error ~1e-16), every B is positive.
    False only means "not shown this way". Bases far above a lower bound (the 1e15 of
    :func:`base_lower_bound`'s domain check) have most pairs slow and pass here in microseconds."""
    phase = float(length) * np.abs(theta)  # (n,) f64
    low = np.where(phase < 3.0, np.cos(np.minimum(phase, 3.0)), -1.0)  # (n,) f64
    return float(low.sum()) > 1e-6 * theta.size


@lru_cache(maxsize=1024)
def _supports_cached(d: int, base: float, length: int) -> bool:
    """:func:`_supports_exact` through the screen (exact signs either way), memoized for the run."""
    if _slow_pairs_certify(default_frequencies(d, base), length):
        return True
    theta = default_frequencies(d, base)[None, :]  # (1, n) f64
    verdict = _screen_rest(theta, _tolerance(d // 2, float(length), powers=length + 1), length + 1, 4, False)
    return _supports_exact(d, base, length) if verdict is None else verdict


_SCREEN_WIDTH = 4096  # widest slab screened for a batch of bases at once (then one base at a time)
_GEMM = 1 << 18  # multiply-adds per gemm of _screen_sums: one OpenBLAS thread
_SCREEN_BATCH = 64  # bases screened at once far below the answer
_NEAR_BATCH = 8  # and near it, where most bases pass the first slabs


def _screen_sums(theta: np.ndarray, start: int, stop: int, unit: np.ndarray | None = None) -> np.ndarray:
    """B for m = start .. stop-1 for a batch of frequency sets ``theta`` (K, n): plain float64 sums.

    Up to 8 distances: direct cosines. Wider: block products cos((m0 + j) theta) = cos(m0 theta)
    cos(j theta) - sin(m0 theta) sin(j theta), with R rows m0 = start + J r and J columns (J a power
    of two near sqrt(stop - start), <= 256), both tables built by doubling from z = e^(i theta)
    (``unit``, when the caller has it) (:func:`_unit_powers`: 3n complex exponentials per slab, not
    n cosines per distance), multiplied in gemms of at most 2^18 multiply-adds: OpenBLAS runs those
    on one thread (larger ones spawn threads that spin on a busy machine: 3x the CPU time, measured
    on the project machine). No borderline sign is fixed: the caller trusts only values beyond
    ``_tolerance(n, (stop - 1) * theta_max, powers=stop - start)``.
    """
    count, n = theta.shape
    width = stop - start
    if width <= 8:
        m = np.arange(start, stop, dtype=np.float64)  # (S,) f64
        return np.cos(m[None, :, None] * theta[:, None, :]).sum(-1)  # (K, S) f64
    cols = min(_BLOCK, 1 << ((width - 1).bit_length() + 1) // 2)  # J: a power of two near sqrt(width)
    rows = -(-width // cols)
    group = max(1, min(rows, _GEMM // (2 * n * cols)))
    rows = -(-rows // group) * group  # whole gemms of `group` rows
    col = _unit_powers(theta, cols, unit=unit)  # (J, K, n) c128: e^(i j theta)
    table = np.concatenate([col.real, col.imag], axis=-1)  # (J, K, 2n) f64
    table = np.ascontiguousarray(table.transpose(1, 2, 0))[:, None]  # (K, 1, 2n, J) f64
    row = _unit_powers(theta, rows, scale=float(cols)) * np.exp(1j * (start * theta))  # (R, K, n) c128
    rot = np.concatenate([row.real, -row.imag], axis=-1).transpose(1, 0, 2)  # (K, R, 2n) f64
    rot = np.ascontiguousarray(rot).reshape(count, rows // group, group, 2 * n)  # (K, R/G, G, 2n) f64
    return np.matmul(rot, table).reshape(count, -1)[:, :width]  # (K, S) f64


@lru_cache(maxsize=256)
def _grid_bases(digits: int, hi: float) -> np.ndarray:
    return np.array(list(_grid(digits, 2.0, hi)), dtype=np.float64)  # ascending, (G,) f64


class _GridFrequencies:
    """numpy.power's frequencies of the grid bases at ``d`` and e^(i theta), made once per (d, grid)
    for the run (every length at that d screens the same bases) and only as far up the grid as a
    search has gone (most of the grid up to 1e15 is never reached)."""

    def __init__(self, d: int, digits: int, hi: float) -> None:
        self.bases = _grid_bases(digits, hi)
        self.expo = np.asarray([-2.0 * i / d for i in range(d // 2)], dtype=np.float64)  # as default_inv_freq
        self.theta = np.empty((0, d // 2), dtype=np.float64)  # (made, n) f64
        self.unit = np.empty((0, d // 2), dtype=np.complex128)  # (made, n) c128

    def rows(self, index: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """theta and e^(i theta) of the grid bases ``index`` (ascending): (K, n) f64, (K, n) c128."""
        made = self.theta.shape[0]
        if index.size and int(index[-1]) >= made:
            upto = min(self.bases.size, max(int(index[-1]) + 1, 2 * made, 128))
            theta = np.power(self.bases[made:upto, None], self.expo[None, :])  # (G', n) f64
            self.theta = np.concatenate([self.theta, theta])
            self.unit = np.concatenate([self.unit, np.exp(1j * theta)])
        return self.theta[index], self.unit[index]


@lru_cache(maxsize=16)
def _grid_frequencies(d: int, digits: int, hi: float) -> _GridFrequencies:
    return _GridFrequencies(d, digits, hi)


@lru_cache(maxsize=16)
def _grid_failures(d: int, digits: int, hi: float) -> np.ndarray:
    """For each grid base at ``d``, the shortest distance where a search of the run found B < 0 (with
    certainty), else a length beyond any asked: (G,) int64, filled in by :func:`_grid_lower_bound`. The
    base fails every length from there on, so those searches skip it: the bases far below an answer
    are screened about once per d, not once per length."""
    return np.full(_grid_bases(digits, hi).size, np.iinfo(np.int64).max, dtype=np.int64)


@lru_cache(maxsize=16)
def _grid_passes(d: int, digits: int, hi: float) -> np.ndarray:
    """For each grid base at ``d``, the longest length it is known to support (every B >= 0 up to it,
    decided with exact signs), else 0: (G,) int64, filled in by :func:`_grid_lower_bound` for the run.
    A base that supports a length supports every shorter one; for a longer one only the distances
    beyond it are left to check."""
    return np.zeros(_grid_bases(digits, hi).size, dtype=np.int64)


@lru_cache(maxsize=1024)
def _grid_lower_bound(d: int, length: int, digits: int, hi: float) -> float | None:
    """The smallest base of the ``digits``-figure grid up to ``hi`` supporting ``length`` at ``d``, or None.

    Memoized per (d, length, digits, hi) for the run (the linter asks once per config). Exactly the
    answer of scanning the grid upwards with an exact check of each base (the implementation
    before issue 23, 0.03-0.7 s a call), at a few milliseconds:

    0. bases with a known violation at a distance <= ``length`` (:func:`_grid_failures`, from earlier
       searches at this d in the run) are skipped; a base known to support a length
       (:func:`_grid_passes`) is checked only beyond it.
    1. a screen, batched over bases: B on slabs growing by 4 from the length down
       (:func:`_screen_sums`, to a width of ``_SCREEN_WIDTH``), with each base's own float
       frequencies (numpy.power's, made once per d: :func:`_grid_frequencies`). A base is rejected
       only where a sum is below minus :func:`_tolerance`, the bound on its float error: the exact
       sum is negative there too. Bases far below the answer have B < 0 at about half of all
       distances and die on the first slab of 4; bases just below it mostly fail within a few
       hundred distances of the length.
    2. the bases left, in ascending order, each screened on to m = 0 (:func:`_screen_rest`):
       rejected at a certain violation, accepted when every sum is above the tolerance (certainly
       >= 0), and decided by :func:`_supports_exact` (mpmath signs) when some sum is within it.
       The first accepted base is the answer.

    So a base is skipped only with a certain violation and accepted only with every sign certain:
    the result is the first passing grid base, as the plain scan finds it (tested against a plain
    scan with mpmath signs and against the implementation this replaced).
    """
    bases = _grid_bases(digits, hi)
    table = _grid_frequencies(d, digits, hi)
    failures = _grid_failures(d, digits, hi)
    cand = np.flatnonzero(failures > length)  # ascending grid indices not yet known to fail
    rejected: list[tuple] = []
    try:
        found = _ANSWERS[(d, length, digits, hi)] = _grid_search(d, length, bases, table, cand, rejected,
                                                                  _grid_passes(d, digits, hi))
        return found
    finally:
        for k, at in rejected:  # np.minimum.at: a base may be rejected twice (a batch screened again)
            np.minimum.at(failures, k, at)


def _grid_search(d: int, length: int, bases: np.ndarray, table: _GridFrequencies, cand: np.ndarray, rejected: list,
                 passes: np.ndarray) -> float | None:
    """Step 1-2 of :func:`_grid_lower_bound` over the grid indices ``cand``; appends ``(indices,
    distances)`` of the bases it rejected and where (a certain violation, at a distance <= ``length``)
    to ``rejected`` and raises ``passes`` of the base it accepts to ``length``."""
    expo = [-2.0 * i / d for i in range(d // 2)]  # as default_inv_freq writes it
    # theta_max = theta_0 = 1; phases up to the length (doubled: a theta off by 4 ulps moves a phase
    # by 4 eps m, inside 16 eps m), powers up to a slab's rows + columns
    tol = _tolerance(d // 2, 2.0 * float(length), powers=length + 1)
    batch, at = _SCREEN_BATCH, 0
    while at < cand.size:
        chunk = cand[at:at + batch]
        at += batch
        # numpy.power for the screen (within an ulp of the Python floats of default_inv_freq on the
        # project machine, at most a few ulps with any SIMD pow: the tolerance's phase term, doubled
        # below, absorbs 4 ulps); the exact Python floats for the bases that reach _screen_rest
        theta, unit = table.rows(chunk)  # (K, n) f64, (K, n) c128
        alive, unsure = np.arange(chunk.size), np.zeros(chunk.size, dtype=bool)
        stop, width = length + 1, 4
        restart = False
        while stop > 0 and alive.size and width <= _SCREEN_WIDTH:  # together, slabs growing by 4
            start = max(0, stop - width)
            vals = _screen_sums(theta[alive], start, stop, unit[alive])  # (k, S) f64
            unsure[alive] |= np.any(np.abs(vals) <= tol, axis=1)
            below = vals < -tol  # (k, S): certain violations
            dead = np.any(below, axis=1)
            if dead.any():
                rejected.append((chunk[alive[dead]], start + np.argmax(below[dead], axis=1)))
            alive = alive[~dead]
            if width == 4 and alive.size > chunk.size // 2 and chunk.size > _NEAR_BATCH:
                restart = True  # near the answer: most bases survive; screen a few at a time from here
                break
            stop, width = start, width * 4
        if restart:
            at, batch = at - chunk.size, _NEAR_BATCH
            continue
        for k in alive:  # in ascending order, each on its own to m = 0; the first that passes is the answer
            base, known = float(bases[chunk[k]]), int(passes[chunk[k]])
            if known >= length:
                return base
            exact = np.array([[base ** e for e in expo]], dtype=np.float64)  # (1, n) f64
            # the slabs above `stop` were screened with numpy's thetas: within the tolerance of these
            found: list[int] = []
            verdict = _screen_rest(exact, tol, stop, width, bool(unsure[k]), floor=known + 1 if known else 0,
                                   found=found)
            if verdict is None:  # a sum within the tolerance of zero: decide with the exact frequencies
                verdict = _supports_exact(d, base, length, floor=known + 1 if known else 0, found=found)
            if verdict:
                passes[chunk[k]] = length
                return base
            rejected.append((chunk[k:k + 1], np.array(found[:1] or [length])))
    return None


def _screen_rest(theta: np.ndarray, tol: float, stop: int, width: int, unsure: bool, floor: int = 0,
                 found: list | None = None) -> bool | None:
    """Continue the screen of one base below ``stop`` (down to ``floor``): False at a certain violation
    (its distance appended to ``found``), True when every sum is certainly >= 0 (above the tolerance),
    None when some sum is too close to zero to tell."""
    while stop > floor:
        start = max(floor, stop - width)
        vals = _screen_sums(theta, start, stop)[0]  # (S,) f64
        below = np.flatnonzero(vals < -tol)
        if below.size:
            if found is not None:
                found.append(start + int(below[0]))
            return False
        unsure = unsure or bool(np.any(np.abs(vals) <= tol))
        stop, width = start, min(width * 4, _BLOCK * _SLAB)
    return None if unsure else True


def below_lower_bound(d: int, length: int, base: float, *, digits: int = 2, hi: float = 1e15) -> bool:
    """Whether ``base`` is below :func:`base_lower_bound` ``(d, length)`` (grid convention), or no base up to
    ``hi`` supports ``length`` (where base_lower_bound raises ValueError), without finding the bound itself:
    the grid search run only over the grid bases <= ``base`` (below the bound iff none of them supports the
    length; their failures and passes are remembered as in a full search). A base far below the bound
    costs the cheap screen of the far-below bases, not the search near the bound and its full check."""
    d = check_rotary_dim(d)
    length = check_positive_int("length", length)
    if not _supports_cached(d, float(hi), length):
        return True
    key = (d, length, int(digits), float(hi))
    if key in _ANSWERS:  # the bound already found in this run: compare
        found = _ANSWERS[key]
        return found is None or base < found
    bases = _grid_bases(digits, hi)
    failures = _grid_failures(d, digits, hi)
    cand = np.flatnonzero(failures > length)
    cand = cand[bases[cand] <= base]
    rejected: list[tuple] = []
    try:
        return _grid_search(d, length, bases, _grid_frequencies(d, digits, hi), cand, rejected,
                            _grid_passes(d, digits, hi)) is None
    finally:
        for k, at in rejected:
            np.minimum.at(failures, k, at)


_ANSWERS: dict[tuple, float | None] = {}  # (d, length, digits, hi) -> _grid_lower_bound's answer, for below_lower_bound


def _forget_grid_searches() -> None:
    """Clear what the grid searches of this run remember (answers, known failures and passes, tables)."""
    for cached in (_grid_lower_bound, _grid_failures, _grid_passes, _grid_frequencies, _supports_cached):
        cached.cache_clear()
    _ANSWERS.clear()


def _grid(digits: int, start: float, stop: float):
    """Ascending bases with ``digits`` significant figures, q * 10^e, from ``start`` to ``stop``."""
    e = math.floor(math.log10(start))
    lo_q, hi_q = 10 ** (digits - 1), 10 ** digits
    while True:
        for q in range(lo_q, hi_q):
            b = float(f"{q}e{e - digits + 1}")
            if b < start:
                continue
            if b > stop:
                return
            yield b
        e += 1


def base_lower_bound(d: int, length: int, *, convention: str = "grid", digits: int = 2,
                     hi: float = 1e15) -> float:
    """Smallest base b whose frequencies b^(-2i/d) keep B_{m,theta} >= 0 for every integer
    m in [0, ``length``] (Men et al. 2024, arXiv 2405.14591, the base lower bound).

    The supported length is NOT monotone in the base (B_{m,theta} dips below zero near its
    first zero for some bases and not for slightly smaller ones), so "smallest" needs a
    search convention:

    - ``convention="grid"`` (default): the smallest base on the grid of numbers with
      ``digits`` significant figures (``digits=2``: 1.0e3, 1.1e3, ..., 9.9e3, 1.0e4, ...),
      scanned upwards from 2 until one passes. Every integer m <= ``length`` is checked.
      This is the grid the paper printed its table on.
    - ``convention="bisection"``: bisection on ``log(b)`` between 1 (fails: every theta ~ 1)
      and ``hi`` to a relative width of 1e-6, returning the passing end. The result is the
      edge of the region of large bases that pass; isolated smaller bases may pass too, so
      it is >= the grid answer up to the grid step.

    Reproducing the published table (Men et al. Table, d = 128; "k" = 1000 tokens, which is
    what makes 4k -> 2.7e4 come out: at 4096 tokens 2.7e4 fails at m = 4,079), the grid
    convention gives 4.3e3, 1.6e4, 2.7e4, 8.4e4, 3.2e5, 6.3e5, 2.1e6, 7.8e6, 3.3e7, 6.5e7,
    3.5e8: equal to the paper for 1k, 2k, 4k, 8k, 64k and 128k. It differs at 16k (the
    printed 3.1e5 has B < 0 first at m = 12,223), 32k (6.3e5 already passes), 256k (3.3e7
    passes), 512k (the printed 6.4e7 fails at m = 511,210) and 1M (3.5e8 passes; the
    printed 5.1e8 fails at m = 874,868). These are exact float64 sums with mpmath-checked
    signs; float32 sums give the same first violations, so precision does not explain the
    gaps: the published entries at those lengths follow another (unstated) procedure.

    Five printed entries fail their own length at "k" = 1000: 16k (3.1e5, first B < 0 at
    m = 12,223), 32k (6.4e5, at 27,685), 256k (3.6e7, at 207,455), 512k (6.4e7, at 511,210)
    and 1M (5.1e8, at 874,868); at "k" = 1024 two more do (4k: 2.7e4 at 4,079; 128k: 7.8e6
    at 128,915). Yet the paper's Figure 1 fit y = 0.0424 x^1.628 is what a least-squares fit
    of the table gives with x = 1024*k, so the authors likely used k = 1024 with a check more
    lenient than every-integer-m (each printed base fails only in dips 1-3 integers wide).
    The authors' search, as reported by Su (kexue.fm/archives/10122, 2024-05-29), enumerates
    bases, computes each one's supported length, and takes for each context the smallest
    enumerated base that reaches it; no enumeration we tried (strides in m, finer or coarser
    base grids, float32/bf16/fp16 arithmetic, other index ranges) reproduces more than 6 of
    the 11 entries.

    Domain: ``d`` an even integer >= 2, ``length`` a whole number >= 1 (integral floats such
    as ``128.0`` pass; ``1000.5`` is a ``ValueError``).
    """
    d = check_rotary_dim(d)
    length = check_positive_int("length", length)
    if not _supports_cached(d, float(hi), length):
        raise UsageError(f"no base up to {hi:g} supports length {length} at d={d}")
    if convention == "grid":
        if digits < 1:
            raise UsageError(f"digits must be >= 1, got {digits}")
        found = _grid_lower_bound(d, length, int(digits), float(hi))
        return hi if found is None else found  # pragma: no branch  (hi passes, checked above)
    if convention != "bisection":
        raise UsageError(f"unknown convention {convention!r}: grid or bisection")
    lo_log, hi_log = math.log(1.0 + 1e-9), math.log(hi)
    hints: list[int] = []
    while hi_log - lo_log > 1e-6:
        mid = 0.5 * (lo_log + hi_log)
        if _supports(d, math.exp(mid), length, hints):
            hi_log = mid
        else:
            lo_log = mid
    return math.exp(hi_log)
