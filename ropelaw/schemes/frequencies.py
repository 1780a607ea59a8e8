"""The schemes, one function each ``(spec, seq_len) -> SchemeResult``, registered in the order
``ropelaw schemes`` lists them (:mod:`ropelaw.schemes` imports this module once)."""

from __future__ import annotations

import math

from ..spec import RopeSpec
from .formulas import (default_inv_freq, dynamic_ntk_base, longrope_attention_factor, ntk_scaled_base, qwen_ntk_alpha,
                       yarn_attention_factor, yarn_correction_dim, yarn_correction_range)
from .params import (blend, choice_param, factor_param, scheme_error, flag_param, length_param, original_length_param,
                     pair_factors_param, positive_param, real_param, seq_len_param)
from .positions import check_map, leaky_rerope_safe_length
from .registry import SchemeResult, register


@register(
    "default",
    summary="plain RoPE at the inference base",
    source="RoFormer, arXiv 2104.09864, eq. 15",
)
def _default(spec: RopeSpec, seq_len: int | None = None) -> SchemeResult:
    """Plain RoPE: theta_i = beta^(-2i/d), i = 0 .. d/2-1, attention factor 1.

    Source: RoFormer, Su et al., arXiv 2104.09864, eq. 15. Domain: what RopeSpec accepts
    (d even >= 2, beta > 1). No parameters; ``seq_len`` is ignored.
    """
    return SchemeResult(default_inv_freq(spec.d, spec.base))


@register(
    "linear",
    aliases=("pi",),
    required=("factor",),
    summary="Position Interpolation: theta_i / s",
    source="Chen et al. 2023, arXiv 2306.15595, sec. 2.2; HF _compute_linear_scaling_rope_parameters",
)
def _linear(spec: RopeSpec, seq_len: int | None = None) -> SchemeResult:
    """Position Interpolation (linear scaling): theta'_i = theta_i / s.

    Source: Chen et al. 2023, "Extending Context Window of Large Language Models via
    Positional Interpolation", arXiv 2306.15595, sec. 2.2, f'(x, m) = f(x, m L/L'):
    position m becomes m/s (s = L'/L), which for RoPE is the same as dividing every
    frequency by s. Hugging Face
    ``_compute_linear_scaling_rope_parameters``. Domain: s >= 1; s = 1 is plain RoPE.
    Attention factor 1.
    """
    s = factor_param(spec)
    return SchemeResult(tuple(t / s for t in default_inv_freq(spec.d, spec.base)), details=(("factor", s),))


@register(
    "ntk",
    aliases=("ntk-aware",),
    required=("factor",),
    summary="NTK-aware: base b' = b * s^(d/(d-2))",
    source="bloc97 (r/LocalLLaMA, 2023-06) / Su (kexue.fm/archives/9675); YaRN arXiv 2309.00071 sec. 3.1",
)
def _ntk(spec: RopeSpec, seq_len: int | None = None) -> SchemeResult:
    """NTK-aware scaled RoPE: theta'_i = b'^(-2i/d) with b' = b * s^(d/(d-2)).

    Source: bloc97, "NTK-Aware Scaled RoPE" (r/LocalLLaMA, June 2023); Su Jianlin,
    kexue.fm/archives/9675; written up in YaRN, arXiv 2309.00071, sec. 3.1. The same base
    change as Hugging Face "dynamic" at a fixed factor. Check: s = 2, b = 1e4, d = 128
    gives b' = 20221.3. Domain: s >= 1, d >= 4 (ValueError for d = 2). Attention factor 1.
    Details: ``scaled_base``.
    """
    s = factor_param(spec)
    try:
        b = ntk_scaled_base(spec.base, s, spec.d)
    except ValueError as exc:
        raise scheme_error(spec, str(exc)) from None
    return SchemeResult(default_inv_freq(spec.d, b), details=(("factor", s), ("scaled_base", b)))


@register(
    "dynamic",
    aliases=("dynamic-ntk",),
    required=("factor",),
    optional=("original_max_position_embeddings", "seq_len"),
    summary="dynamic NTK: NTK-aware base at s_eff = s*L/L_orig - (s-1) once L > L_orig",
    source="HF _compute_dynamic_ntk_parameters (emozilla, r/LocalLLaMA 2023-07); YaRN arXiv 2309.00071 sec. 3.3",
)
def _dynamic(spec: RopeSpec, seq_len: int | None = None) -> SchemeResult:
    """Dynamic NTK scaling at the current sequence length L.

    base' = base * ((s*L/L_orig) - (s-1))^(d/(d-2)) when L > L_orig, else base.
    Source: Hugging Face ``_compute_dynamic_ntk_parameters`` (after emozilla's "Dynamically
    Scaled RoPE", r/LocalLLaMA, July 2023). L: the ``seq_len`` argument, else param
    ``seq_len``, else train_len (so by default the frequencies are plain RoPE). L_orig: param
    ``original_max_position_embeddings``, else train_len. Domain: s >= 1, L >= 1; d = 2 with
    L > L_orig is a ValueError. Attention factor 1. Details: ``seq_len``,
    ``effective_factor``, ``scaled_base``.
    """
    s = factor_param(spec)
    orig = original_length_param(spec)
    length = seq_len_param(spec, seq_len)
    effective = 1.0 if length <= orig else s * length / orig - (s - 1)
    try:
        b = dynamic_ntk_base(spec.base, s, spec.d, length, orig)
    except ValueError as exc:
        raise scheme_error(spec, str(exc)) from None
    return SchemeResult(default_inv_freq(spec.d, b),
                        details=(("factor", s), ("original_max_position_embeddings", orig), ("seq_len", length),
                                 ("effective_factor", effective), ("scaled_base", b)))


@register(
    "qwen_dynamic",
    aliases=("qwen-dynamic-ntk",),
    optional=("original_max_position_embeddings", "seq_len"),
    summary="Qwen v1 dynamic NTK: base * alpha^(d/(d-2)), alpha = 2^ceil(log2(L/L_orig)+1) - 1 past L_orig",
    source="Qwen-7B remote code modeling_qwen.py (use_dynamic_ntk: get_ntk_alpha, RotaryEmbedding)",
)
def qwen_dynamic_scheme(spec: RopeSpec, seq_len: int | None = None) -> SchemeResult:
    """Qwen v1 (``use_dynamic_ntk: true``): at input length L the base becomes
    base * alpha^(d/(d-2)) with alpha = :func:`qwen_ntk_alpha` (1 while L <= L_orig), the NTK-aware
    base of :func:`ntk_scaled_base` at the integer factor alpha. Source: Qwen-7B's remote code
    ``modeling_qwen.py`` (``get_ntk_alpha``, ``RotaryEmbedding.update_rotary_pos_emb_cache``).
    L: the ``seq_len`` argument, else param ``seq_len``, else train_len; L_orig: param
    ``original_max_position_embeddings`` (the config's ``seq_length``), else train_len. Domain:
    d >= 4 once L > L_orig. Attention factor 1 (``use_logn_attn`` scales queries separately).
    Details: ``seq_len``, ``ntk_alpha``, ``scaled_base``.
    """
    orig = original_length_param(spec)
    length = seq_len_param(spec, seq_len)
    alpha = qwen_ntk_alpha(length, orig)
    try:
        b = spec.base if alpha == 1 else ntk_scaled_base(spec.base, alpha, spec.d)
    except ValueError as exc:
        raise scheme_error(spec, str(exc)) from None
    return SchemeResult(default_inv_freq(spec.d, b),
                        details=(("original_max_position_embeddings", orig), ("seq_len", length),
                                 ("ntk_alpha", alpha), ("scaled_base", b)))


@register(
    "yarn",
    required=("factor",),
    optional=("beta_fast", "beta_slow", "original_max_position_embeddings", "truncate", "mscale",
              "mscale_all_dim", "attention_factor", "variant"),
    summary="YaRN: ramp between theta (fast pairs) and theta/s (slow pairs), attention factor 0.1 ln s + 1",
    source="Peng et al. 2023, arXiv 2309.00071, sec. 3.2 (NTK-by-parts) and 3.4; HF _compute_yarn_parameters",
)
def yarn_scheme(spec: RopeSpec, seq_len: int | None = None) -> SchemeResult:
    """YaRN: NTK-by-parts frequencies plus an attention temperature.

    theta'_i = (1 - w_i) * theta_i + w_i * theta_i / s, where the interpolation weight w_i
    rises from 0 (fast pairs, many rotations in L_orig: kept) to 1 (slow pairs: divided
    by s). Source: Peng et al. 2023, "YaRN", arXiv 2309.00071, sec. 3.2 ("NTK-by-parts",
    h(theta_d) = (1 - gamma(r(d))) theta_d/s + gamma(r(d)) theta_d, with gamma = 1 - w) and
    sec. 3.4; Hugging Face ``_compute_yarn_parameters``.

    The two variants differ in BOTH the ramp and the attention factor:

    - ``variant=hf`` (default; transformers and the YaRN authors' code): the ramp is linear
      in the pair index, w_i = clamp((i - low)/(high - low), 0, 1), with (low, high) =
      :func:`yarn_correction_range` (floor/ceil unless ``truncate`` is false, high clamped
      at d-1; if low == high, high += 0.001 as transformers does). Attention factor:
      :func:`yarn_attention_factor` with ``mscale`` / ``mscale_all_dim``.
    - ``variant=paper``: the ramp is linear in the rotation count r_i = L_orig*theta_i/(2*pi)
      (paper: gamma(r) = 0 for r < alpha, 1 for r > beta, (r - alpha)/(beta - alpha) between,
      alpha = beta_slow, beta = beta_fast), so w_i = 1 - gamma(r_i); no rounding, no clamp.
      Attention factor sqrt(1/t) = 0.1 ln(s) + 1; ``mscale``, ``mscale_all_dim`` and
      ``truncate`` are hf-only and rejected here.

    Both variants agree outside the ramp (pairs with r_i >= beta_fast kept, r_i <= beta_slow
    divided by s, up to the hf rounding of the range) and differ inside it. An explicit
    ``attention_factor`` (> 0) overrides either. Defaults: beta_fast 32, beta_slow 1 (the
    paper's alpha = 1, beta = 32 for LLaMA). Domain: s >= 1, beta_fast >= beta_slow > 0 (equal
    betas, as in Kimi K2's config, make the ramp a step: transformers runs them).
    Details: ``variant``, ``correction_range`` ((low, high) pair indices; for the paper
    variant the unrounded dims of beta_fast, beta_slow), ``interpolation_weight``.
    """
    s = factor_param(spec)
    orig = original_length_param(spec)
    variant = choice_param(spec, "variant", ("hf", "paper"))
    beta_fast = positive_param(spec, "beta_fast", 32.0)
    beta_slow = positive_param(spec, "beta_slow", 1.0)
    if not beta_fast >= beta_slow:
        raise scheme_error(spec, f"beta_fast must be >= beta_slow, got beta_fast={beta_fast:g}, "
                                 f"beta_slow={beta_slow:g}")
    explicit = positive_param(spec, "attention_factor", None)
    theta = default_inv_freq(spec.d, spec.base)
    if variant == "hf":
        truncate = flag_param(spec, "truncate", True)
        low, high = yarn_correction_range(spec.d, spec.base, orig, beta_fast, beta_slow, truncate)
        top = high + 0.001 if low == high else high
        weight = [min(max((i - low) / (top - low), 0.0), 1.0) for i in range(spec.pairs)]
        mscale = real_param(spec, "mscale", None)
        mscale_all_dim = real_param(spec, "mscale_all_dim", None)
        factor = yarn_attention_factor(s, mscale, mscale_all_dim)
    else:
        hf_only = [p for p in ("truncate", "mscale", "mscale_all_dim") if spec.param(p) is not None]
        if hf_only:
            raise scheme_error(spec, f"{', '.join(hf_only)} apply to variant 'hf' only "
                                     "(the paper has no such parameter)")
        low = yarn_correction_dim(beta_fast, spec.d, spec.base, orig)
        high = yarn_correction_dim(beta_slow, spec.d, spec.base, orig)
        weight = []
        for t in theta:
            r = orig * t / (2 * math.pi)  # rotations of pair i in L_orig tokens
            gamma = (0.0 if r < beta_slow else 1.0 if r >= beta_fast else
                     (r - beta_slow) / (beta_fast - beta_slow))
            weight.append(1.0 - gamma)
        factor = yarn_attention_factor(s)
    return SchemeResult(
        blend(theta, s, weight),
        attention_factor=explicit if explicit is not None else factor,
        details=(("variant", variant), ("factor", s), ("original_max_position_embeddings", orig),
                 ("beta_fast", beta_fast), ("beta_slow", beta_slow), ("correction_range", (low, high)),
                 ("interpolation_weight", tuple(weight))),
    )


@register(
    "llama3",
    required=("factor",),
    optional=("low_freq_factor", "high_freq_factor", "original_max_position_embeddings"),
    summary="Llama 3.1 wavelength bands: keep short, divide long by s, smooth between",
    source="Meta Llama 3.1 (arXiv 2407.21783); HF _compute_llama3_parameters",
)
def llama3_scheme(spec: RopeSpec, seq_len: int | None = None) -> SchemeResult:
    """Llama 3.1 frequency bands by wavelength lambda_i = 2*pi/theta_i.

    With L_orig, low = ``low_freq_factor`` and high = ``high_freq_factor``:
    lambda_i < L_orig/high -> theta_i (kept); lambda_i > L_orig/low -> theta_i/s;
    otherwise smooth = (L_orig/lambda_i - low)/(high - low) and
    theta'_i = (1 - smooth)*theta_i/s + smooth*theta_i (continuous at both edges).
    Source: Hugging Face ``_compute_llama3_parameters`` (Meta's reference code for Llama
    3.1, "The Llama 3 Herd of Models", arXiv 2407.21783). Llama 3.1: s = 8, low = 1,
    high = 4, L_orig = 8192, base 500000, d = 128: wavelength thresholds 2048 and 8192.
    Defaults: low_freq_factor 1, high_freq_factor 4 (Llama 3.1's); L_orig: param
    ``original_max_position_embeddings``, else train_len. Domain: s >= 1,
    0 < low <= high (ValueError "band factors out of order" otherwise; Llama 4 uses low = high = 1:
    no smoothing band). Attention factor 1.
    Details: ``band`` per pair ("high": kept, "medium": smoothed, "low": divided),
    ``interpolation_weight``, ``low_freq_wavelen``, ``high_freq_wavelen``.
    """
    s = factor_param(spec)
    orig = original_length_param(spec)
    low = positive_param(spec, "low_freq_factor", 1.0)
    high = positive_param(spec, "high_freq_factor", 4.0)
    if not low <= high:
        raise scheme_error(spec, f"band factors out of order: low_freq_factor ({low:g}) must be <= high_freq_factor "
                          f"({high:g})")
    low_freq_wavelen = orig / low  # longer than this: divided by s
    high_freq_wavelen = orig / high  # shorter than this: kept
    theta = default_inv_freq(spec.d, spec.base)
    bands, weight = [], []
    for t in theta:
        wavelen = 2 * math.pi / t
        if wavelen < high_freq_wavelen:
            bands.append("high")
            weight.append(0.0)
        elif wavelen > low_freq_wavelen:
            bands.append("low")
            weight.append(1.0)
        elif high == low:  # Llama 4 (low = high = 1): no smoothing band; a wavelength of exactly L_orig is kept
            bands.append("high")
            weight.append(0.0)
        else:
            bands.append("medium")
            weight.append(1.0 - (orig / wavelen - low) / (high - low))
    return SchemeResult(
        blend(theta, s, weight),
        details=(("factor", s), ("low_freq_factor", low), ("high_freq_factor", high),
                 ("original_max_position_embeddings", orig), ("low_freq_wavelen", low_freq_wavelen),
                 ("high_freq_wavelen", high_freq_wavelen), ("band", tuple(bands)),
                 ("interpolation_weight", tuple(weight))),
    )


@register(
    "longrope",
    aliases=("su",),
    required=("short_factor", "long_factor"),
    optional=("factor", "max_position_embeddings", "original_max_position_embeddings", "attention_factor",
              "seq_len", "short_mscale", "long_mscale"),
    summary="LongRoPE / Phi-3: per-pair factors theta_i / f_i, long factors past L_orig",
    source="Ding et al. 2024, arXiv 2402.13753; HF _compute_longrope_parameters (Phi-3 'su'); "
           "Phi-3.5-MoE's short_mscale / long_mscale (HF PhimoeRotaryEmbedding.forward)",
)
def longrope_scheme(spec: RopeSpec, seq_len: int | None = None) -> SchemeResult:
    """LongRoPE per-pair rescaling: theta'_i = theta_i / f_i.

    f = ``long_factor`` when the current length L > L_orig, else ``short_factor`` (each a
    list of d/2 numbers > 0). Attention factor sqrt(1 + ln(s)/ln(L_orig)) for s > 1, else 1
    (:func:`longrope_attention_factor`), with s = max_position_embeddings/L_orig when
    ``max_position_embeddings`` is given (Phi-3's configs), else ``factor``; an explicit
    ``attention_factor`` overrides; ``short_mscale`` / ``long_mscale`` (Phi-3.5-MoE: transformers'
    ``PhimoeRotaryEmbedding.forward`` multiplies cos and sin by ``long_mscale`` when L > L_orig, else by
    ``short_mscale``, in place of the computed factor; the HF loader passes them only for the model types
    whose rotary reads them, ``dialects.hf_type_rotary``) override both. One of the three must be given; ``factor`` and
    ``max_position_embeddings`` must agree when both are. Source: Ding et al. 2024,
    "LongRoPE", arXiv 2402.13753; Hugging Face ``_compute_longrope_parameters``. L: the
    ``seq_len`` argument, else param ``seq_len``, else train_len (short factors, as
    transformers at initialisation). L_orig: param ``original_max_position_embeddings``,
    else train_len. Details: ``factors_used`` ("short"/"long"), ``seq_len``, ``factor``,
    ``ext_factors``.
    """
    short = pair_factors_param(spec, "short_factor")
    long = pair_factors_param(spec, "long_factor")
    orig = original_length_param(spec)
    length = seq_len_param(spec, seq_len)
    factor = factor_param(spec, default=None)
    max_pos = spec.param("max_position_embeddings")
    if max_pos is not None:
        implied = length_param(spec, "max_position_embeddings", max_pos) / orig
        if factor is not None and not math.isclose(factor, implied, rel_tol=1e-9):
            raise scheme_error(spec, f"factor {factor:g} disagrees with max_position_embeddings/original length "
                              f"= {max_pos}/{orig} = {implied:g}")
        factor = implied
    explicit = positive_param(spec, "attention_factor", None)
    mscale = positive_param(spec, "long_mscale" if length > orig else "short_mscale", None)
    explicit = mscale if mscale is not None else explicit
    if factor is None and explicit is None:
        raise scheme_error(spec, "needs factor, max_position_embeddings or attention_factor to set the attention "
                                 "factor")
    if factor is not None and factor < 1:
        raise scheme_error(spec, f"max_position_embeddings must be >= the original length {orig}, got {max_pos!r}")
    used = "long" if length > orig else "short"
    ext = long if used == "long" else short
    theta = default_inv_freq(spec.d, spec.base)
    return SchemeResult(
        tuple(t / f for t, f in zip(theta, ext, strict=True)),
        attention_factor=explicit if explicit is not None else longrope_attention_factor(factor, orig),
        details=(("factors_used", used), ("seq_len", length), ("original_max_position_embeddings", orig),
                 ("factor", factor), ("ext_factors", ext)),
    )


@register(
    "proportional",
    required=("head_dim",),
    optional=("factor",),
    summary="proportional RoPE (Gemma 4): theta_i = b^(-2i/D) / s over the first d/2 pairs of a D-dim head",
    source="transformers 5.23.0 modeling_rope_utils._compute_proportional_rope_parameters",
)
def _proportional(spec: RopeSpec, seq_len: int | None = None) -> SchemeResult:
    """Proportional RoPE: theta_i = b^(-2i/D) / s for i = 0 .. d/2 - 1, the exponent over the whole
    head dim D while only d = 2 * int(p * D // 2) dims rotate (p: partial_rotary_factor); the other
    D - d dims do not rotate (frequency 0 in transformers' table).

    Source: transformers 5.23.0 ``modeling_rope_utils._compute_proportional_rope_parameters``
    (rope_angles = int(p * head_dim // 2); inv_freq = 1 / base^(arange(0, 2 rope_angles, 2) / head_dim),
    zeros appended, then divided by ``factor``); Gemma 4's full-attention layers. The same
    frequencies as plain RoPE over d dims at base b^(d/D). Domain: D a whole number >= d, s >= 1
    (default 1). Attention factor 1. Details: ``head_dim``, ``factor``.
    """
    D = length_param(spec, "head_dim", spec.param("head_dim"))
    if spec.d > D:
        raise scheme_error(spec, f"head_dim {D} is smaller than the rotated dims d = {spec.d}")
    s = factor_param(spec, default=1.0)
    return SchemeResult(tuple(spec.base ** (-2.0 * i / D) / s for i in range(spec.d // 2)),
                        details=(("head_dim", D), ("factor", s)))


def _window_params(spec: RopeSpec) -> tuple[int, float | None]:
    """ReRoPE's window w (a whole number >= 1) and Leaky ReRoPE's k (> 1) when given."""
    try:
        w, k, _ = check_map(spec.param("window"), spec.param("k"))
    except ValueError as exc:
        raise scheme_error(spec, str(exc).replace("leaky k", "k")) from None
    if w is None:  # the registry asks for it first (register(required=("window", ...)))
        raise scheme_error(spec, "needs a window")
    return w, k


@register(
    "rerope",
    required=("window",),
    summary="ReRoPE: relative position min(i-j, w); frequencies unchanged",
    source="Su 2023, kexue.fm/archives/9708 (seed 000)",
)
def _rerope(spec: RopeSpec, seq_len: int | None = None) -> SchemeResult:
    """ReRoPE (Rectified RoPE): encoded relative position min(i - j, w), frequencies unchanged.

    Source: Su Jianlin, "Transformer upgrade road 12: ReRoPE for infinite extrapolation?",
    kexue.fm/archives/9708, 2023-08-07 (seed 000, matrix "rerope"). The largest encoded
    position is w whatever the input length, so it stays in the trained range when
    w <= T_train - 1 (the seed asks for w < T_train; w of 1/4..1/2 of T_train worked best).
    Domain: window a whole number >= 1. Details: ``safe_length`` (math.inf when
    w <= T_train - 1, else T_train).
    """
    w, _ = _window_params(spec)
    return SchemeResult(default_inv_freq(spec.d, spec.base), window=w,
                        details=(("safe_length", leaky_rerope_safe_length(w, None, spec.train_len)),))


@register(
    "leaky_rerope",
    aliases=("leaky-rerope",),
    required=("window", "k"),
    summary="Leaky ReRoPE: i-j inside window w, w + (i-j-w)/k beyond; frequencies unchanged",
    source="Su 2023, kexue.fm/archives/9708 (seed 000)",
)
def _leaky_rerope(spec: RopeSpec, seq_len: int | None = None) -> SchemeResult:
    """Leaky ReRoPE: encoded position i - j inside the window, w + (i - j - w)/k beyond.

    Source: seed 000 (Su, kexue.fm/archives/9708), matrix "leaky-rerope"; k -> inf gives
    ReRoPE, k = 1 plain RoPE. Frequencies unchanged. The longest input whose encoded
    positions stay inside the trained range is :func:`leaky_rerope_safe_length`
    (w + 1 + floor(k (T_train - 1 - w)); ~ w + k (T_train - w)). Domain: window a whole
    number >= 1, k > 1. Details: ``safe_length``.
    """
    w, k = _window_params(spec)
    return SchemeResult(default_inv_freq(spec.d, spec.base), window=w, leaky_k=k,
                        details=(("safe_length", leaky_rerope_safe_length(w, k, spec.train_len)),))
