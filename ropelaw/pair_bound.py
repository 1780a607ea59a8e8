"""The extrapolation bound of one rotation pair under a scaling scheme, through the scheme registry
(:mod:`ropelaw.schemes`, imported only when a scheme is asked for), for
:func:`ropelaw.theory.extrapolation_bound` and :func:`ropelaw.theory.pair_table`.

A pair limits extrapolation at the largest distance whose encoded relative position stays within
one of its periods (Liu et al. 2023, arXiv 2310.05209, sec. 3; seed 000 for the position maps of
ReRoPE / Leaky ReRoPE). Static schemes invert the position map; length-dependent ones (dynamic NTK,
LongRoPE) are searched by doubling and bisection.
"""

from __future__ import annotations

import math
from typing import Any

from .numfmt import compact, number
from .spec import RopeSpec

_TWO_PI = 2.0 * math.pi


def inverse_position(res: Any, position: float) -> float:
    """Largest distance whose encoded relative position is <= ``position`` (seed 000).

    Identity map: ``position``. ReRoPE (window w, positions clipped to w): the position
    itself when it is below w, otherwise every distance (``inf``). Leaky ReRoPE (slope 1/k
    beyond w): solve ``w + (delta - w)/k = position``, i.e. ``delta = w + k*(position - w)``.
    """
    w = getattr(res, "window", None)
    if w is None or position < w:
        return float(position)
    k = getattr(res, "leaky_k", None)
    if k is None:
        return math.inf
    return w + k * (position - w)


def inference_result(spec: RopeSpec, seq_len: int | None = None) -> Any:
    from .schemes import apply_scheme  # lazy: the registry is needed only for a scheme

    return apply_scheme(spec, seq_len)


def _is_static(spec: RopeSpec) -> bool:
    """Whether the scheme's frequencies ignore the sequence length (dynamic NTK, LongRoPE do not)."""
    a = inference_result(spec, spec.train_len)
    z = inference_result(spec, spec.train_len * 4096)
    return tuple(a.inv_freq) == tuple(z.inv_freq) and a.window == z.window and a.leaky_k == z.leaky_k


def period_of(theta: float) -> float:
    return math.inf if theta <= 0 else _TWO_PI / theta


def scheme_pair_bound(spec: RopeSpec, k: int) -> tuple[float, float]:
    """(bound, period at inference) of pair ``k`` for a non-default scheme.

    Static scheme: the largest distance whose encoded position stays within one period of
    pair ``k`` (:func:`inverse_position`). Length-dependent scheme (dynamic NTK, LongRoPE):
    the largest integer distance D with ``relative_position(D) <= period_k(seq_len=D+1)``,
    by doubling then bisection; this assumes the excess changes sign once (dynamic NTK: the
    period grows like L^(2k/(d-2)), sub-linearly; LongRoPE: piecewise constant). No crossing
    below 2^62 tokens: ``inf``.
    """
    if _is_static(spec):
        res = inference_result(spec, spec.tuning_length)
        p = period_of(res.inv_freq[k])
        return (inverse_position(res, p) if math.isfinite(p) else math.inf), p

    def fits(dist: int) -> tuple[bool, float]:
        res = inference_result(spec, dist + 1)
        p = period_of(res.inv_freq[k])
        return res.relative_position(dist) <= p, p

    lo = 1
    ok, p_lo = fits(lo)
    if not ok:
        return 0.0, p_lo
    hi = 2
    while True:
        ok, p = fits(hi)
        if not ok:
            break
        lo, p_lo = hi, p
        if hi >= 2**62:
            return math.inf, p
        hi *= 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        ok, p = fits(mid)
        if ok:
            lo, p_lo = mid, p
        else:
            hi = mid
    return float(lo), p_lo


def scheme_formula(spec: RopeSpec, res: Any, k: int | None, period: float | None) -> str:
    """The headline formula of a scheme bound, in words and symbols."""
    if k is None:
        return "every pair saw a full period: no pair limits it"
    if not _is_static(spec):
        return f"largest distance D with position(D) <= 2*pi/theta_{k}(seq_len=D+1) ({spec.scheme})"
    if period is None or not math.isfinite(period):
        return f"theta_{k} = 0 under {spec.scheme}: pair {k} never turns"
    w, kk = getattr(res, "window", None), getattr(res, "leaky_k", None)
    if w is None or period < w:
        return f"2*pi/theta_{k} = {number(period)} ({spec.scheme})"
    if kk is None:
        return f"window w = {compact(w)} <= 2*pi/theta_{k} = {number(period)}: positions never leave one period"
    return f"w + k*(2*pi/theta_{k} - w) = {compact(w)} + {compact(kk)}*({number(period)} - {compact(w)})"
