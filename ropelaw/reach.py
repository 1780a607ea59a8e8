"""Whether a setup's extrapolation bound reaches a length: the one decision ``plan`` and ``lint`` share.

``reaches(spec, length)`` is ``theory.extrapolation_bound(spec).extrapolation_bound >= length``,
with the comparison decided exactly when the float bound lies within 1e-9 of the length
(:func:`exact_bound`): a bound that rounds to the target in float64 may be just below it.

The exact bound follows ``theory.extrapolation_bound`` regime by regime (Liu et al. 2023, arXiv
2310.05209, Theorem 3): at or below the critical base the bound is the tuning length ``T_tune``,
an integer; above it, plain RoPE's ``max(2*pi*beta^(d_extra/d), T_tune)`` and a scheme's
``max(P_k, T_tune)`` with ``P_k`` the inference period of the critical pair ``k`` through the
scheme (``2*pi / theta_k``; Leaky ReRoPE ``w + k_leaky (P_k - w)``), each at 60 digits (mpmath;
``schemes.exact_inv_freq``). Tuning never lowers the bound (Theorem 3), hence the floor at
``T_tune`` in every branch. Length-dependent schemes (dynamic NTK, LongRoPE, Qwen's dynamic) have
no exact twin: their float bound is used as it is.
"""

from __future__ import annotations

import math
from typing import Any

from .spec import RopeSpec

__all__ = ["exact_bound", "reaches"]

TOLERANCE = 1e-9  # relative distance from the length under which the float bound is not trusted


def exact_bound(spec: RopeSpec, r: Any) -> Any:
    """The bound of ``r`` (``theory.extrapolation_bound(spec)``) as an mpmath number at 60 digits, or
    None where the float is all there is (length-dependent schemes)."""
    import mpmath

    from .schemes import apply_scheme, exact_inv_freq, scheme_info
    from .theory import ABOVE

    u = spec.tuning_length
    k = r.critical_pair
    with mpmath.workdps(60):
        mp = mpmath.mp
        if r.regime != ABOVE or k is None:
            return mp.mpf(r.extrapolation_bound)  # T_tune (an integer) or inf: exact as it is
        if spec.scheme == "default":
            return max(2 * mp.pi * mp.mpf(spec.base) ** (mp.mpf(r.critical_dimension) / spec.d), mp.mpf(u))
        if spec.scheme in ("dynamic", "longrope", "qwen_dynamic") or (
                scheme_info(spec.scheme).exact is None and spec.scheme not in ("rerope", "leaky_rerope")):
            return None
        res = apply_scheme(spec, u)
        if res.window is not None:
            period = 2 * mp.pi * mp.mpf(spec.base) ** (mp.mpf(2 * k) / spec.d)
            if period < res.window:  # the identity map below the window: the period itself
                return max(period, mp.mpf(u))
            if res.leaky_k is None:  # ReRoPE: encoded positions stop at w < P_k
                return mp.inf
            return max(res.window + mp.mpf(res.leaky_k) * (period - res.window), mp.mpf(u))
        return max(2 * mp.pi / exact_inv_freq(spec, u, mp)[k], mp.mpf(u))


def reaches(spec: RopeSpec, length: int, r: Any = None) -> tuple[bool, Any]:
    """``(bound >= length, BoundResult)`` through ``theory.extrapolation_bound``; within
    :data:`TOLERANCE` of the length the bound is recomputed exactly (:func:`exact_bound`)."""
    from .theory import extrapolation_bound

    r = r if r is not None else extrapolation_bound(spec)
    b = r.extrapolation_bound
    if math.isinf(b) or abs(b - length) > TOLERANCE * length:
        return b >= length, r
    exact = exact_bound(spec, r)
    return (b >= length if exact is None else bool(exact >= length)), r
