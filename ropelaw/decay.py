"""RoFormer's long-term decay bound (Su et al., arXiv 2104.09864, sec. 3.4.3; seed 002).

Group the ``d`` dims of query and key into ``d/2`` complex pairs and write
``h_i = q_[2i:2i+1] k*_[2i:2i+1]``. With ``theta_i = base^(-2i/d)`` the RoPE score at
relative distance ``m`` is ``Re[sum_{i=0}^{d/2-1} h_i e^{i m theta_i}]``. With
``h_{d/2} = 0`` and ``S_j = sum_{k=0}^{j-1} e^{i m theta_k}`` (``S_0 = 0``), Abel summation
gives the paper's bound (sec. 3.4.3)::

    |sum_{i=0}^{d/2-1} h_i e^{i m theta_i}| = |sum_{i=0}^{d/2-1} S_{i+1} (h_{i+1} - h_i)|
                                           <= (max_i |h_{i+1} - h_i|) * sum_{j=1}^{d/2} |S_j|

and the paper plots the relative upper bound ``(1/(d/2)) * sum_{j=1}^{d/2} |S_j|``, which
decays (on average, with oscillations) as ``m`` grows; the paper plots it for base 10000. At ``m = 0``
every ``|S_j| = j`` and the curve starts at ``(d/2 + 1)/2``.
"""

from __future__ import annotations

import math
from typing import Any
from collections.abc import Sequence

from .errors import UsageError
from .schemes import default_inv_freq
from .spec import check_base, check_rotary_dim

__all__ = ["decay_curve", "decay_bound", "rope_score"]


def _theta(d: int, base: float) -> tuple[float, ...]:
    """theta_k = base^(-2k/d) (:func:`ropelaw.schemes.default_inv_freq`) for a validated d and base."""
    return default_inv_freq(check_rotary_dim(d), check_base("base", base))


def decay_curve(d: int, base: float, distances: Sequence[float] | Any) -> list[float]:
    """``(1/(d/2)) * sum_{j=1}^{d/2} |S_j(m)|`` for each relative distance ``m`` (RoFormer sec. 3.4.3).

    ``S_j(m) = sum_{k=0}^{j-1} e^{i m theta_k}``, ``theta_k = base^(-2k/d)``. Any real
    distances (negative ones give the same values: ``S_j(-m)`` is the conjugate). Returns a
    list of floats; numpy does the work (shape ``(len(distances), d/2)`` complex128).
    """
    import numpy as np  # lazy: the analytic core stays import-light

    theta = np.asarray(_theta(d, base), dtype=np.float64)  # (d/2,) f64
    m = np.asarray(distances, dtype=np.float64).reshape(-1)  # (M,) f64
    if not np.all(np.isfinite(m)):
        raise UsageError("distances must be finite")
    out = np.empty(m.size, dtype=np.float64)
    step = 4096
    for a in range(0, m.size, step):
        ph = np.multiply.outer(m[a:a + step], theta)  # (M', d/2) f64
        s = np.cumsum(np.exp(1j * ph), axis=1)  # (M', d/2) c128: S_1 .. S_{d/2}
        out[a:a + step] = np.abs(s).sum(axis=1) / (theta.size)
    return [float(x) for x in out]


def rope_score(h: Sequence[complex], m: float, base: float = 10000.0) -> complex:
    """``sum_{i=0}^{d/2-1} h_i e^{i m theta_i}`` with ``d = 2*len(h)`` (the score before Re[])."""
    theta = _theta(2 * len(h), base)
    return sum(complex(hi) * complex(math.cos(m * t), math.sin(m * t)) for hi, t in zip(h, theta, strict=True))


def decay_bound(h: Sequence[complex], m: float, base: float = 10000.0) -> float:
    """The right-hand side ``max_i |h_{i+1} - h_i| * sum_j |S_j|`` with ``h_{d/2} = 0``.

    ``|rope_score(h, m)| <= decay_bound(h, m)`` for every ``h`` and ``m`` (RoFormer sec. 3.4.3).
    """
    hs = [complex(x) for x in h] + [0j]
    diff = max(abs(hs[i + 1] - hs[i]) for i in range(len(h)))
    d = 2 * len(h)
    return diff * decay_curve(d, base, [m])[0] * (d // 2)
