"""Each scheme's frequencies in arbitrary precision (mpmath), attached to its registry entry with
:func:`~ropelaw.schemes.registry.exact_frequencies`, for the exact decisions of :mod:`ropelaw.theory`."""

from __future__ import annotations

from typing import Any

from ..spec import RopeSpec
from .frequencies import llama3_scheme, longrope_scheme, qwen_dynamic_scheme, yarn_scheme
from .params import factor_param, original_length_param, seq_len_param
from .registry import exact_frequencies


def _exact_theta(mp: Any, d: int, base: Any) -> list:
    """theta_i = base^(-2i/d) with the exponent as the exact rational -2i/d (RoFormer eq. 15)."""
    b = mp.mpf(base)
    return [b ** (-mp.mpf(2 * i) / d) for i in range(d // 2)]


def _exact_blend(mp: Any, theta: list, factor: float, weight: list) -> list:
    """:func:`blend` exactly: (1 - w_i)*theta_i + w_i*theta_i/s."""
    s = mp.mpf(factor)
    return [(1 - w) * t + w * t / s for t, w in zip(theta, weight, strict=True)]


def _exact_ntk_theta(mp: Any, spec: RopeSpec, factor: Any) -> list:
    """theta_i at the NTK-aware base b * s^(d/(d-2)) (:func:`ntk_scaled_base`), s exact."""
    s = mp.mpf(factor)
    base = mp.mpf(spec.base) * (s ** (mp.mpf(spec.d) / (spec.d - 2)) if s != 1 else 1)
    return _exact_theta(mp, spec.d, base)


@exact_frequencies("default")
def _default_exact(spec: RopeSpec, seq_len: int | None, mp: Any) -> list:
    return _exact_theta(mp, spec.d, spec.base)


@exact_frequencies("linear")
def _linear_exact(spec: RopeSpec, seq_len: int | None, mp: Any) -> list:
    s = mp.mpf(factor_param(spec))
    return [t / s for t in _exact_theta(mp, spec.d, spec.base)]


@exact_frequencies("proportional")
def _proportional_exact(spec: RopeSpec, seq_len: int | None, mp: Any) -> list:
    D, s, b = int(spec.param("head_dim")), mp.mpf(factor_param(spec, default=1.0)), mp.mpf(spec.base)
    return [b ** (-mp.mpf(2 * i) / D) / s for i in range(spec.d // 2)]


@exact_frequencies("ntk")
def _ntk_exact(spec: RopeSpec, seq_len: int | None, mp: Any) -> list:
    return _exact_ntk_theta(mp, spec, factor_param(spec))


@exact_frequencies("dynamic")
def _dynamic_exact(spec: RopeSpec, seq_len: int | None, mp: Any) -> list:
    s, orig, length = factor_param(spec), original_length_param(spec), seq_len_param(spec, seq_len)
    if length <= orig:
        return _exact_theta(mp, spec.d, spec.base)
    return _exact_ntk_theta(mp, spec, mp.mpf(s) * length / orig - (mp.mpf(s) - 1))


@exact_frequencies("qwen_dynamic")
def _qwen_dynamic_exact(spec: RopeSpec, seq_len: int | None, mp: Any) -> list:
    alpha = qwen_dynamic_scheme(spec, seq_len).detail("ntk_alpha")  # the runtime's step (float decision)
    return _exact_ntk_theta(mp, spec, alpha)


@exact_frequencies("yarn")
def _yarn_exact(spec: RopeSpec, seq_len: int | None, mp: Any) -> list:
    res = yarn_scheme(spec, seq_len)
    s, orig = res.detail("factor"), res.detail("original_max_position_embeddings")
    theta = _exact_theta(mp, spec.d, spec.base)
    if res.detail("variant") == "hf":  # the ramp over pair indices, range as the runtime rounded it
        low, high = res.detail("correction_range")
        top = high + 0.001 if low == high else high  # the float the runtime divides by
        lo, span = mp.mpf(low), mp.mpf(top) - mp.mpf(low)
        weight = [min(max((i - lo) / span, mp.mpf(0)), mp.mpf(1)) for i in range(spec.pairs)]
    else:  # the paper's ramp over rotation counts r_i = L_orig*theta_i/(2*pi)
        fast, slow = mp.mpf(res.detail("beta_fast")), mp.mpf(res.detail("beta_slow"))
        weight = []
        for t in theta:
            r = orig * t / (2 * mp.pi)
            gamma = mp.mpf(0) if r < slow else mp.mpf(1) if r >= fast else (r - slow) / (fast - slow)
            weight.append(1 - gamma)
    return _exact_blend(mp, theta, s, weight)


@exact_frequencies("llama3")
def _llama3_exact(spec: RopeSpec, seq_len: int | None, mp: Any) -> list:
    res = llama3_scheme(spec, seq_len)
    s, orig = res.detail("factor"), res.detail("original_max_position_embeddings")
    low, high = mp.mpf(res.detail("low_freq_factor")), mp.mpf(res.detail("high_freq_factor"))
    theta = _exact_theta(mp, spec.d, spec.base)
    weight = []
    for t, band in zip(theta, res.detail("band"), strict=True):  # bands as the runtime decided them (float)
        if band == "high":
            weight.append(mp.mpf(0))
        elif band == "low":
            weight.append(mp.mpf(1))
        else:  # smooth = (L_orig/lambda_i - low)/(high - low), lambda_i = 2*pi/theta_i
            weight.append(1 - (orig * t / (2 * mp.pi) - low) / (high - low))
    return _exact_blend(mp, theta, s, weight)


@exact_frequencies("longrope")
def _longrope_exact(spec: RopeSpec, seq_len: int | None, mp: Any) -> list:
    ext = longrope_scheme(spec, seq_len).detail("ext_factors")  # short or long, as the runtime chose
    return [t / mp.mpf(f) for t, f in zip(_exact_theta(mp, spec.d, spec.base), ext, strict=True)]
