"""The grid search of Men et al.'s base lower bound as ropelaw computed it before issue 23.

Kept verbatim (block sums with a cosine table, hints, a top-down scan of every base) as the
oracle that the faster search in ``ropelaw.basebound`` must reproduce exactly. Not used by the
package. Only the grid convention is kept.
"""

from __future__ import annotations

import math

import numpy as np

_BLOCK = 256
_WINDOW = 8192
_EPS = np.finfo(np.float64).eps


def _frequencies(d: int, base: float) -> np.ndarray:
    return np.array([base ** (-2.0 * i / d) for i in range(d // 2)], dtype=np.float64)


def _exact_sums(ms, theta):
    import mpmath

    out = []
    with mpmath.workdps(40):
        th = [mpmath.mpf(float(t)) for t in theta]
        for m in ms:
            mm = mpmath.mpf(int(m))
            out.append(float(mpmath.fsum(mpmath.cos(mm * t) for t in th)))
    return out


class _Sums:
    def __init__(self, theta):
        self.theta = theta
        jt = np.multiply.outer(np.arange(_BLOCK, dtype=np.float64), theta)
        self.table = np.ascontiguousarray(np.concatenate([np.cos(jt), np.sin(jt)], axis=1).T)
        self.theta_max = float(np.max(np.abs(theta)))

    def __call__(self, start, stop):
        theta, n = self.theta, self.theta.size
        count = stop - start
        rows = -(-count // _BLOCK)
        m0 = start + _BLOCK * np.arange(rows, dtype=np.float64)
        ph = np.multiply.outer(m0, theta)
        rot = np.concatenate([np.cos(ph), -np.sin(ph)], axis=1)
        vals = np.einsum("rk,kj->rj", rot, self.table).reshape(-1)[:count]
        tol = 16.0 * n * _EPS * (4.0 + float(stop - 1) * self.theta_max)
        border = np.flatnonzero(np.abs(vals) <= tol)
        if border.size:
            vals[border] = _exact_sums((start + int(k) for k in border), theta)
        return vals


def _supports(d, base, length, hints=None):
    sums = _Sums(_frequencies(d, base))
    if hints:
        for h in reversed(hints):
            lo, hi = max(0, h - _WINDOW), min(length + 1, h + _WINDOW)
            if lo < hi and np.any(sums(lo, hi) < 0):
                return False
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


def _grid(digits, start, stop):
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


def base_lower_bound_before(d: int, length: int, digits: int = 2, hi: float = 1e15) -> float:
    if not _supports(d, hi, length):
        raise ValueError(f"no base up to {hi:g} supports length {length} at d={d}")
    hints: list[int] = []
    for base in _grid(digits, 2.0, hi):
        if _supports(d, base, length, hints):
            return base
    return hi
