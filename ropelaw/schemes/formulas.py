"""The closed forms the schemes are made of, each with its source: RoPE's frequencies, NTK-aware and
dynamic NTK bases (also Qwen's), YaRN's correction range and attention factor, LongRoPE's attention factor."""

from __future__ import annotations

from functools import lru_cache
import math

from ..errors import UsageError


@lru_cache(maxsize=4096, typed=True)  # typed: a numpy float base gives numpy floats, kept apart
def default_inv_freq(d: int, base: float) -> tuple[float, ...]:
    """theta_i = base^(-2i/d), i = 0 .. d/2-1 (RoFormer, arXiv 2104.09864, eq. 15).

    The one place this formula is written: ``theory.pair_table``, ``basebound.default_frequencies``
    and ``decay`` call it. No validation here (callers pass a validated even d >= 2 and base > 1);
    each theta is the Python float ``base ** (-2.0*i/d)``. Memoized (an immutable tuple): a lint scan
    asks for the same few (d, base) for every file.
    """
    return tuple(base ** (-2.0 * i / d) for i in range(d // 2))


def ntk_scaled_base(base: float, factor: float, d: int) -> float:
    """NTK-aware base b' = b * s^(d/(d-2)) (bloc97, reddit r/LocalLLaMA 2023-06; Su, "Transformer
    upgrade road 10", kexue.fm/archives/9675; YaRN arXiv 2309.00071 sec. 3.1 eq. for b').

    The exponent d/(d-2) makes the lowest-frequency pair i = d/2-1 exactly an interpolation
    by s: theta'_{d/2-1} = b'^(-(d-2)/d) = theta_{d/2-1}/s, while pair 0 (theta = 1) is
    untouched. Domain: d even >= 4, s >= 1 (s = 1 gives b). For d = 2 the only pair has
    theta = 1 whatever the base, so no base change can interpolate it: ValueError.
    """
    if d < 4:
        raise UsageError(f"NTK-aware scaling needs d >= 4 (the base cannot move the single pair of d = 2), got d = {d}")
    try:
        scaled = base * factor ** (d / (d - 2))
    except OverflowError:
        scaled = math.inf
    if not math.isfinite(scaled):  # an inf base would zero frequencies that are not negligible
        raise UsageError(f"the NTK-scaled base {base:.8g} * {factor:.8g}^({d}/{d - 2}) is beyond float range")
    return scaled


def dynamic_ntk_base(base: float, factor: float, d: int, seq_len: int, original: int) -> float:
    """Dynamic NTK base at sequence length L (Hugging Face ``_compute_dynamic_ntk_parameters``).

    base' = base * (s*L/L_orig - (s-1))^(d/(d-2)) when L > L_orig, else base: the NTK-aware
    base (:func:`ntk_scaled_base`) at the effective factor s_eff = s*L/L_orig - (s-1)
    = 1 + s*(L - L_orig)/L_orig, which is 1 at L = L_orig and grows linearly (s + 1 at
    L = 2*L_orig). Edge cases: L <= L_orig returns base exactly (Hugging Face clamps L to
    max(L, L_orig)); d = 2 with L > L_orig: ValueError.
    """
    if seq_len <= original:
        return base
    effective = factor * seq_len / original - (factor - 1)
    return ntk_scaled_base(base, effective, d)


def yarn_correction_dim(num_rotations: float, d: int, base: float, original: int) -> float:
    """Pair index (fractional) at which a pair turns ``num_rotations`` times in L_orig tokens.

    Solves L_orig * theta_i / (2*pi) = r for i with theta_i = b^(-2i/d):
    i(r) = d * ln(L_orig / (2*pi*r)) / (2 ln b)  (YaRN, arXiv 2309.00071, sec. 3.2 with
    r(d) = L/lambda_d; Hugging Face ``_compute_yarn_parameters.find_correction_dim``).
    Domain: r > 0, b > 1. Smaller i = faster pair = more rotations.
    """
    ratio = original / (num_rotations * 2 * math.pi)
    if not (math.isfinite(ratio) and ratio > 0):
        raise UsageError(f"YaRN correction dimension undefined for {num_rotations!r} rotations "
                         "(beta_fast / beta_slow must be finite and > 0)")
    return d * math.log(ratio) / (2 * math.log(base))


def yarn_correction_range(
    d: int, base: float, original: int, beta_fast: float = 32, beta_slow: float = 1, truncate: bool = True
) -> tuple[float, float]:
    """YaRN's correction range (low, high) in pair indices (Hugging Face ``find_correction_range``).

    low = i(beta_fast), high = i(beta_slow) with :func:`yarn_correction_dim`; with
    ``truncate`` (the default, and the only behaviour before transformers added the
    option) low is floored and high ceiled, so both are ints. Then clamped as the
    reference code does: low to >= 0, high to <= d - 1. Note: d - 1, not the last pair
    index d/2 - 1 (both the YaRN authors' code and transformers 4.57 / 5.23 clamp at dim - 1); a
    high above d/2 - 1 leaves the slowest pairs partway up the ramp instead of fully
    interpolated. The floor and ceiling are taken in float64, as transformers does
    (``math.floor`` / ``math.ceil`` of ``find_correction_dim``): they decide the frequencies
    the model runs with, so they follow the runtime's float arithmetic even where the exact
    value would round the other way (Liu et al.'s critical dimension, an analytic quantity, is
    decided exactly in :mod:`ropelaw.theory`). Example (published): d = 128, b = 1e4,
    L = 4096 -> (20, 46). Domain: beta_fast >= beta_slow > 0.
    """
    if not beta_fast >= beta_slow > 0:
        raise UsageError(f"YaRN needs beta_fast >= beta_slow > 0, got beta_fast={beta_fast}, beta_slow={beta_slow}")
    low = yarn_correction_dim(beta_fast, d, base, original)
    high = yarn_correction_dim(beta_slow, d, base, original)
    if truncate:
        low, high = math.floor(low), math.ceil(high)
    return max(low, 0), min(high, d - 1)


def yarn_attention_factor(factor: float, mscale: float | None = None, mscale_all_dim: float | None = None) -> float:
    """YaRN attention factor sqrt(1/t) multiplying cos/sin (logits scale by 1/t).

    Paper (arXiv 2309.00071, sec. 3.4, "YaRN"): sqrt(1/t) = 0.1 ln(s) + 1, e.g. 1.2079 at
    s = 8. Hugging Face (``_compute_yarn_parameters.get_mscale``; DeepSeek-V2/V3 configs):
    get_mscale(s, m) = 0.1*m*ln(s) + 1 for s > 1, else 1; when ``mscale`` and
    ``mscale_all_dim`` are both given and non-zero the factor is
    get_mscale(s, mscale)/get_mscale(s, mscale_all_dim) (1 when they are equal, as in
    DeepSeek-V3, which applies the mscale to the softmax scale instead); otherwise
    get_mscale(s, 1), the paper's value. Transformers ignores a lone ``mscale``; so do we.
    """

    def get_mscale(m: float) -> float:
        return 0.1 * m * math.log(factor) + 1.0 if factor > 1 else 1.0

    if mscale and mscale_all_dim:
        return get_mscale(mscale) / get_mscale(mscale_all_dim)
    return get_mscale(1.0)


def longrope_attention_factor(factor: float, original: int) -> float:
    """LongRoPE / Phi-3 attention factor sqrt(1 + ln(s)/ln(L_orig)) for s > 1, else 1.

    Source: Hugging Face ``_compute_longrope_parameters`` (Phi-3 "su" scaling; LongRoPE,
    Ding et al. 2024, arXiv 2402.13753). E.g. Phi-3-mini-128k: s = 131072/4096 = 32,
    sqrt(1 + 5/12) = 1.1902.
    """
    if factor <= 1:
        return 1.0
    return math.sqrt(1 + math.log(factor) / math.log(original))


def qwen_ntk_alpha(seq_len: int, original: int) -> float:
    """Qwen v1's dynamic-NTK alpha at input length L (Qwen-7B/14B remote code, ``modeling_qwen.py``,
    ``QWenModel.get_ntk_alpha``): alpha = max(2^ceil(log2(L/L_orig) + 1) - 1, 1), a step function
    in float arithmetic as written there: 1 up to L_orig, 3 up to 2 L_orig, 7 up to 4 L_orig, ..."""
    context_value = math.log(seq_len / original, 2) + 1
    return max(2 ** math.ceil(context_value) - 1, 1)
