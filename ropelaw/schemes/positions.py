"""Relative-position maps of ReRoPE and Leaky ReRoPE (seed 000): the encoded position of a distance,
the matrix of a sequence, its largest value, and the longest sequence Leaky ReRoPE keeps within the
trained positions."""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

from ..errors import UsageError
from ..spec import check_positive_int, check_real


def check_map(window: Any, leaky_k: Any, interpolation: Any = 1.0) -> tuple[int | None, float | None, float]:
    w = None if window is None else check_positive_int("window", window)
    k = None
    if leaky_k is not None:
        if w is None:
            raise UsageError("leaky_k needs a window (Leaky ReRoPE is defined beyond a window w)")
        k = check_real("leaky k", leaky_k)
        if k <= 1:
            raise UsageError(f"leaky k must be > 1 (k = 1 is plain RoPE; k -> inf is ReRoPE), got {leaky_k!r}")
    s = check_real("interpolation", interpolation)
    if s < 1:
        raise UsageError(f"interpolation must be >= 1, got {interpolation!r}")
    if s != 1 and w is not None:
        raise UsageError("interpolation and window cannot be combined (seed 000 defines them separately)")
    return w, k, s


def encoded_relative_position(delta: float, window: float | None = None, leaky_k: float | None = None,
                              interpolation: float = 1.0) -> float:
    """The relative position the encoding uses for query-key distance ``delta >= 0`` (seed 000).

    RoPE: delta. Position Interpolation by k (``interpolation``): delta/k. ReRoPE (window w):
    delta for delta < w, w beyond (min(delta, w)). Leaky ReRoPE (window w, slope 1/k):
    delta for delta < w, w + (delta - w)/k beyond. Continuous at delta = w.
    """
    if interpolation != 1:
        if window is not None:
            raise UsageError("interpolation and window cannot be combined (seed 000 defines them separately)")
        return float(delta) / interpolation
    if window is None or delta < window:
        return float(delta)
    if leaky_k is None:
        return float(window)
    return window + (delta - window) / leaky_k


def relative_position_matrix(length: int, window: int | None = None, leaky_k: float | None = None,
                             interpolation: float = 1.0):
    """The (length, length) relative-position matrix of seed 000, as a float64 numpy array.

    Entry [i, j] (query i, key j) is ``encoded_relative_position(i - j, ...)`` for j <= i and
    NaN above the diagonal (causal mask). Without a window: RoPE's Toeplitz matrix (eq.
    "rope"), or Position Interpolation's (i-j)/k with ``interpolation`` = k; ``window`` w:
    ReRoPE (entries min(i-j, w)); ``window`` and ``leaky_k`` k: Leaky ReRoPE (w + (i-j-w)/k
    beyond the window). ``length`` is capped at 8192 (512 MB); use
    :func:`encoded_relative_position` for longer inputs.
    """
    import numpy as np

    n = check_positive_int("length", length)
    if n > 8192:
        raise UsageError(f"length {n} too large for a dense matrix (max 8192); use encoded_relative_position")
    w, k, s = check_map(window, leaky_k, interpolation)
    delta = np.subtract.outer(np.arange(n), np.arange(n)).astype(np.float64)  # (n, n) float64, i - j
    if w is None:
        out = delta / s
    elif k is None:
        out = np.minimum(delta, float(w))
    else:
        out = np.where(delta < w, delta, w + (delta - w) / k)
    out[delta < 0] = np.nan  # (n, n) float64, upper triangle masked
    return out


def max_relative_position(length: int, window: int | None = None, leaky_k: float | None = None) -> float:
    """Largest encoded relative position in a causal input of ``length`` tokens (seed 000).

    The largest distance is length - 1 (first token to last), and the map is nondecreasing,
    so the maximum is f(length - 1): length - 1 for RoPE or inside the window, w for
    ReRoPE, w + (length - 1 - w)/k for Leaky ReRoPE.
    """
    n = check_positive_int("length", length)
    w, k, _ = check_map(window, leaky_k)
    return encoded_relative_position(n - 1, w, k)


def leaky_rerope_safe_length(window: int, k: float | None, train_len: int) -> int | float:
    """Longest input length (tokens) whose Leaky ReRoPE positions all stay in the trained range.

    Convention: a model trained on T_train-token sequences saw relative positions
    0 .. T_train - 1; an input of L tokens has distances 0 .. L - 1 and its largest encoded
    position is f(L - 1) (:func:`max_relative_position`). For w <= T_train - 1,
    f(L - 1) = w + (L - 1 - w)/k <= T_train - 1 gives (seed 000, "positions must not exceed
    the training length")

        L* = w + 1 + floor(k * (T_train - 1 - w)),

    computed exactly (k as an exact fraction). For w >= T_train - 1 the window already
    spans the trained range and L* = T_train. ``k=None`` (ReRoPE, k -> inf): unbounded
    (``math.inf``) when w <= T_train - 1, else T_train.

    The often-quoted w + k*(T_train - w) is the continuous form: the largest *distance* D
    whose encoded position w + (D - w)/k reaches T_train (one past the largest trained
    distance). For integer k it exceeds L* by exactly k - 1 tokens, e.g. w = 256, k = 16,
    T_train = 4096: 61,696 vs L* = 61,681.
    """
    w = check_positive_int("window", window)
    t = check_positive_int("training length", train_len)
    if k is None:  # ReRoPE: positions min(delta, w) stay trained while w <= T_train - 1
        return math.inf if w <= t - 1 else t
    if w >= t - 1:
        return t
    kk = check_real("leaky k", k)
    if kk <= 1:
        raise UsageError(f"leaky k must be > 1, got {k!r}")
    exact_k = Fraction(k) if isinstance(k, (int, Fraction)) else Fraction(kk)
    return w + 1 + math.floor(exact_k * (t - 1 - w))
