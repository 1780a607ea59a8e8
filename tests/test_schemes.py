"""Scaling-scheme registry: every scheme against an independent derivation.

Independent references used here: mpmath at 50 digits, from-scratch numpy re-derivations
written from the papers' equations, brute-force scans of seed 000's relative-position
matrices, numbers printed in papers / issue 2, and (marked ``hf``) transformers 4.57.1's
own ``ROPE_INIT_FUNCTIONS``.
"""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ropelaw.schemes import (
    SCHEMES,
    SchemeResult,
    apply_scheme,
    default_inv_freq,
    dynamic_ntk_base,
    encoded_relative_position,
    leaky_rerope_safe_length,
    longrope_attention_factor,
    max_relative_position,
    ntk_scaled_base,
    relative_position_matrix,
    scheme_info,
    scheme_names,
    yarn_attention_factor,
    yarn_correction_dim,
    yarn_correction_range,
)
from ropelaw.spec import RopeSpec

mpmath.mp.dps = 50


def spec(scheme="default", d=128, train=4096, base=1e4, **params):
    return RopeSpec(d=d, train_len=train, base=base, scheme=scheme, params=params)


def mp_theta(d, base):
    """theta_i = base^(-2i/d) at 50 digits (RoFormer eq. 15)."""
    return [mpmath.mpf(base) ** (-mpmath.mpf(2 * i) / d) for i in range(d // 2)]


def assert_close_mp(actual, expected, rel=1e-13):
    assert len(actual) == len(expected)
    for i, (a, e) in enumerate(zip(actual, expected, strict=True)):
        assert abs(mpmath.mpf(a) - e) <= rel * abs(e), f"pair {i}: {a} vs {mpmath.nstr(e, 20)}"


# --- registry -----------------------------------------------------------------------------


def test_registry_names_and_aliases():
    assert scheme_names() == ["default", "linear", "ntk", "dynamic", "qwen_dynamic", "yarn", "llama3", "longrope",
                              "proportional", "rerope", "leaky_rerope"]
    for alias, name in [("pi", "linear"), ("ntk-aware", "ntk"), ("dynamic-ntk", "dynamic"), ("su", "longrope"),
                        ("leaky-rerope", "leaky_rerope")]:
        assert SCHEMES[alias] is SCHEMES[name]
        assert scheme_info(alias).name == name
    # every scheme documents its source and its formula
    for name in scheme_names():
        info = SCHEMES[name]
        assert info.source and info.summary and info.fn.__doc__


def test_alias_gives_same_frequencies():
    assert apply_scheme(spec("pi", factor=4)).inv_freq == apply_scheme(spec("linear", factor=4)).inv_freq


def test_unknown_scheme():
    with pytest.raises(ValueError, match=r"unknown scheme 'rope9'; known: default, linear"):
        apply_scheme(spec("rope9"))


def test_missing_parameter():
    with pytest.raises(ValueError, match=r"scheme 'leaky_rerope' needs parameter\(s\): k"):
        apply_scheme(spec("leaky_rerope", window=16))


def test_unknown_parameter():
    with pytest.raises(ValueError, match=r"scheme 'linear' does not take parameter\(s\): beta_fast \(takes: factor\)"):
        apply_scheme(spec("linear", factor=2, beta_fast=32))
    with pytest.raises(ValueError, match=r"scheme 'default' does not take parameter\(s\): factor$"):
        apply_scheme(spec("default", factor=2))


def test_null_parameter_counts_as_absent():
    # transformers reads rope_scaling with .get(): {"attention_factor": null} is the default
    a = apply_scheme(spec("yarn", factor=8, attention_factor=None, beta_fast=None, truncate=None, variant=None))
    b = apply_scheme(spec("yarn", factor=8))
    assert (a.inv_freq, a.attention_factor) == (b.inv_freq, b.attention_factor)
    with pytest.raises(ValueError, match=r"scheme 'linear' needs parameter\(s\): factor"):
        apply_scheme(spec("linear", factor=None))


# --- default, linear, NTK, dynamic ------------------------------------------------------


def test_default_matches_mpmath():
    assert_close_mp(apply_scheme(spec(base=5e5)).inv_freq, mp_theta(128, 5e5))


def test_linear_is_default_divided_by_s_exactly():
    plain = default_inv_freq(128, 1e4)
    for s in (1, 2, 4, 8.5):
        got = apply_scheme(spec("linear", factor=s)).inv_freq
        assert got == tuple(t / s for t in plain)
    assert apply_scheme(spec("linear", factor=1)).inv_freq == plain


def test_ntk_base_20221():
    # issue 2: NTK-aware s = 2 on b = 1e4, d = 128 gives 20221 (b' = 1e4 * 2^(128/126))
    exact = mpmath.mpf(10000) * mpmath.mpf(2) ** (mpmath.mpf(128) / 126)
    assert mpmath.nstr(exact, 7) == "20221.26"
    assert abs(ntk_scaled_base(1e4, 2, 128) - exact) < 1e-9
    result = apply_scheme(spec("ntk", factor=2))
    assert abs(result.detail("scaled_base") - exact) < 1e-9
    assert round(result.detail("scaled_base")) == 20221
    assert_close_mp(result.inv_freq, [exact ** (-mpmath.mpf(2 * i) / 128) for i in range(64)])


@pytest.mark.parametrize("d,s", [(4, 2), (64, 3), (128, 8), (256, 1.5)])
def test_ntk_interpolates_the_slowest_pair_exactly_by_s(d, s):
    # the d/(d-2) exponent is chosen so that theta'_{d/2-1} = theta_{d/2-1}/s; pair 0 stays 1
    got = apply_scheme(spec("ntk", d=d, factor=s)).inv_freq
    plain = mp_theta(d, 1e4)
    assert got[0] == 1.0
    assert abs(got[-1] - plain[-1] / s) <= 1e-13 * plain[-1] / s


def test_dynamic_equals_plain_up_to_the_original_length():
    plain = apply_scheme(spec()).inv_freq
    for length in (1, 100, 4095, 4096):
        result = apply_scheme(spec("dynamic", factor=4), seq_len=length)
        assert result.inv_freq == plain
        assert result.detail("effective_factor") == 1.0
    assert apply_scheme(spec("dynamic", factor=4)).inv_freq == plain  # default length: train_len


@pytest.mark.parametrize("s,length", [(2, 8192), (4, 4097), (8, 32768), (1.5, 10000)])
def test_dynamic_equals_ntk_at_the_effective_factor(s, length):
    s_eff = Fraction(s) * length / 4096 - (Fraction(s) - 1)  # exact: HF formula's bracket
    dyn = apply_scheme(spec("dynamic", factor=s), seq_len=length)
    ntk = apply_scheme(spec("ntk", factor=float(s_eff)))
    assert dyn.detail("effective_factor") == pytest.approx(float(s_eff), rel=1e-15)
    np.testing.assert_allclose(dyn.inv_freq, ntk.inv_freq, rtol=1e-14)
    exact_base = mpmath.mpf(10000) * (mpmath.mpf(s_eff.numerator) / s_eff.denominator) ** (mpmath.mpf(128) / 126)
    assert abs(dyn.detail("scaled_base") - exact_base) <= 1e-12 * exact_base


def test_dynamic_length_sources():
    # the seq_len argument beats param seq_len, which beats train_len
    p = spec("dynamic", factor=2, seq_len=8192)
    assert apply_scheme(p).detail("seq_len") == 8192
    assert apply_scheme(p, seq_len=12288).detail("effective_factor") == 5.0  # 2*3 - 1
    q = spec("dynamic", factor=2, original_max_position_embeddings=2048)
    assert apply_scheme(q).detail("effective_factor") == 3.0  # train 4096 vs original 2048: 2*2 - 1
    assert dynamic_ntk_base(1e4, 2, 128, 4096, 4096) == 1e4


# --- YaRN -------------------------------------------------------------------------------


def test_yarn_correction_range_published():
    # YaRN (arXiv 2309.00071) / transformers: d = 128, b = 1e4, L = 4096 -> (20, 46)
    def dim(r):
        return 128 * mpmath.log(mpmath.mpf(4096) / (r * 2 * mpmath.pi)) / (2 * mpmath.log(10000))

    assert int(mpmath.floor(dim(32))) == 20 and int(mpmath.ceil(dim(1))) == 46
    assert yarn_correction_range(128, 1e4, 4096) == (20, 46)
    low, high = yarn_correction_range(128, 1e4, 4096, truncate=False)
    assert abs(low - dim(32)) < 1e-12 and abs(high - dim(1)) < 1e-12
    assert abs(yarn_correction_dim(32, 128, 1e4, 4096) - dim(32)) < 1e-12


def test_yarn_correction_range_clamps_like_the_reference_code():
    # b = 1e4, L = 131072: i(1) = 128 ln(131072/2pi)/(2 ln 1e4) = 69.2 > 63, kept (clamp is d-1 = 127)
    high_raw = 128 * math.log(131072 / (2 * math.pi)) / (2 * math.log(1e4))
    assert yarn_correction_range(128, 1e4, 131072) == (math.floor(
        128 * math.log(131072 / (64 * math.pi)) / (2 * math.log(1e4))), math.ceil(high_raw))
    assert math.ceil(high_raw) == 70
    # tiny context: low would be negative -> 0
    assert yarn_correction_range(16, 1e4, 64)[0] == 0
    # a huge context pushes high past d-1 -> d-1
    assert yarn_correction_range(8, 10.0, 10**9)[1] == 7


def _transformers_correction_dim(rot, d=128, base=1e4, length=4096):
    """transformers' find_correction_dim (modeling_rope_utils, 4.57.1 and 5.23.0), its float64 arithmetic as written."""
    return (d * math.log(length / (rot * 2 * math.pi))) / (2 * math.log(base))


def _exact_correction_dim(rot):
    return 128 * mpmath.log(mpmath.mpf(4096) / (mpmath.mpf(rot) * 2 * mpmath.pi)) / (2 * mpmath.log(10000))


@pytest.mark.parametrize("k", range(5, 30))
def test_yarn_correction_range_rounds_the_float_as_transformers_does(k):
    # beta chosen so that the correction dim is mathematically ~k; the float lands on either side
    # (e.g. k = 14: float 14.0, exact 13.99999999999999991...). The range decides the frequencies the
    # model runs with, so it is floored / ceiled in float64 exactly as transformers' find_correction_range
    r = 4096 / (2 * math.pi * 1e4 ** (2 * k / 128))
    assert abs(_exact_correction_dim(r) - k) < 1e-14
    low, _ = yarn_correction_range(128, 1e4, 4096, beta_fast=r, beta_slow=r / 2)
    _, high = yarn_correction_range(128, 1e4, 4096, beta_fast=2 * r, beta_slow=r)
    assert low == math.floor(_transformers_correction_dim(r))
    assert high == math.ceil(_transformers_correction_dim(r))


def test_yarn_runtime_rounding_differs_from_exact_rounding_at_some_boundaries():
    # the reason the range is not decided exactly: at these k the exact floor / ceil would give frequencies
    # that no transformers model runs with (the analytic critical dimension in theory.py stays exact)
    differ = []
    for k in range(5, 30):
        r = 4096 / (2 * math.pi * 1e4 ** (2 * k / 128))
        if math.floor(_transformers_correction_dim(r)) != int(mpmath.floor(_exact_correction_dim(r))) or \
                math.ceil(_transformers_correction_dim(r)) != int(mpmath.ceil(_exact_correction_dim(r))):
            differ.append(k)
    assert 14 in differ and len(differ) >= 5
    r = 4096 / (2 * math.pi * 1e4 ** (2 * 14 / 128))
    assert yarn_correction_range(128, 1e4, 4096, beta_fast=r, beta_slow=r / 2)[0] == 14  # exact floor: 13


def test_yarn_attention_factor_paper():
    # paper sec. 3.4: sqrt(1/t) = 0.1 ln(s) + 1; at s = 8: 0.1*ln 8 + 1 = 1.20794
    expected = mpmath.mpf("0.1") * mpmath.log(8) + 1
    assert mpmath.nstr(expected, 5) == "1.2079"
    for variant in ("hf", "paper"):
        result = apply_scheme(spec("yarn", factor=8, variant=variant))
        assert abs(result.attention_factor - expected) < 1e-15
    assert apply_scheme(spec("yarn", factor=1)).attention_factor == 1.0


def test_yarn_attention_factor_mscale_variants():
    def get_mscale(s, m):
        return mpmath.mpf(m) * mpmath.log(s) / 10 + 1

    # DeepSeek-V2-style: mscale 0.707, mscale_all_dim 0.707 -> ratio exactly 1
    r = apply_scheme(spec("yarn", factor=40, mscale=0.707, mscale_all_dim=0.707))
    assert r.attention_factor == 1.0
    r = apply_scheme(spec("yarn", factor=40, mscale=1.0, mscale_all_dim=0.707))
    assert abs(r.attention_factor - get_mscale(40, 1) / get_mscale(40, "0.707")) < 1e-14
    # a lone mscale is ignored, as in transformers: paper value
    r = apply_scheme(spec("yarn", factor=40, mscale=0.707))
    assert abs(r.attention_factor - get_mscale(40, 1)) < 1e-14
    # explicit override wins in both variants
    for variant in ("hf", "paper"):
        assert apply_scheme(spec("yarn", factor=8, attention_factor=1.5, variant=variant)).attention_factor == 1.5
    assert yarn_attention_factor(1.0, 2.0, 1.0) == 1.0  # s = 1: no temperature


def yarn_hf_reference(d, base, orig, s, beta_fast=32.0, beta_slow=1.0, truncate=True):
    """From scratch (numpy): YaRN's ramp over pair index between the correction dims."""
    i = np.arange(d // 2, dtype=np.float64)  # (d/2,) float64
    theta = base ** (-2 * i / d)
    dims = d * np.log(orig / (np.array([beta_fast, beta_slow]) * 2 * np.pi)) / (2 * np.log(base))
    low, high = (np.floor(dims[0]), np.ceil(dims[1])) if truncate else (dims[0], dims[1])
    low, high = max(low, 0), min(high, d - 1)
    if low == high:
        high += 0.001
    ramp = np.clip((i - low) / (high - low), 0, 1)  # 0 -> theta kept, 1 -> theta/s
    return theta * (1 - ramp) + theta / s * ramp


def yarn_paper_reference(d, base, orig, s, alpha=1.0, beta=32.0):
    """From scratch (numpy), paper sec. 3.2: r(d) = L/lambda_d, gamma ramp in r, h = (1-g) t/s + g t."""
    i = np.arange(d // 2, dtype=np.float64)  # (d/2,) float64
    theta = base ** (-2 * i / d)
    wavelength = 2 * np.pi / theta
    r = orig / wavelength
    gamma = np.where(r < alpha, 0.0, np.where(r > beta, 1.0, (r - alpha) / (beta - alpha)))
    return (1 - gamma) * theta / s + gamma * theta


@pytest.mark.parametrize("d,base,orig,s,extra", [
    (128, 1e4, 4096, 8, {}),
    (128, 5e5, 8192, 4, {}),
    (64, 1e6, 32768, 16, {"beta_fast": 16, "beta_slow": 2}),
    (128, 1e4, 131072, 2, {}),  # high clamps at d-1, beyond the last pair
    (96, 1e4, 4096, 8, {"truncate": False}),
])
def test_yarn_hf_frequencies_from_scratch(d, base, orig, s, extra):
    got = apply_scheme(spec("yarn", d=d, base=base, train=orig, factor=s, **extra)).inv_freq
    ref = yarn_hf_reference(d, base, orig, s, float(extra.get("beta_fast", 32)), float(extra.get("beta_slow", 1)),
                            extra.get("truncate", True))
    np.testing.assert_allclose(got, ref, rtol=1e-13)


@pytest.mark.parametrize("d,base,orig,s", [(128, 1e4, 4096, 8), (128, 5e5, 8192, 4), (64, 1e6, 32768, 16)])
def test_yarn_paper_frequencies_from_scratch(d, base, orig, s):
    got = apply_scheme(spec("yarn", d=d, base=base, train=orig, factor=s, variant="paper")).inv_freq
    np.testing.assert_allclose(got, yarn_paper_reference(d, base, orig, s), rtol=1e-13)


def test_yarn_variants_agree_outside_the_ramp_and_differ_inside():
    hf = apply_scheme(spec("yarn", factor=8)).inv_freq
    paper = apply_scheme(spec("yarn", factor=8, variant="paper")).inv_freq
    plain = default_inv_freq(128, 1e4)
    rotations = [4096 * t / (2 * mpmath.pi) for t in mp_theta(128, 1e4)]  # turns in L_orig tokens
    fast = [i for i in range(64) if rotations[i] > 32]
    slow = [i for i in range(64) if rotations[i] < 1]
    assert fast == list(range(0, 21)) and slow == list(range(46, 64))  # = the range (20, 46)
    for i in fast:
        assert hf[i] == paper[i] == plain[i]
    for i in slow:
        assert hf[i] == paper[i] == plain[i] / 8
    inside = [i for i in range(64) if hf[i] != paper[i]]
    assert inside == list(range(21, 46))
    assert abs(hf[40] - paper[40]) > 0.5 * paper[40]  # inside the ramp they differ by a lot


def test_yarn_original_length_param():
    a = apply_scheme(spec("yarn", factor=4, original_max_position_embeddings=8192, train=4096))
    b = apply_scheme(spec("yarn", factor=4, train=8192))
    assert a.inv_freq == b.inv_freq and a.detail("correction_range") == b.detail("correction_range")


# --- Llama 3 ----------------------------------------------------------------------------


def test_llama3_bands_for_llama31_8b():
    # Llama 3.1 8B: d = 128, base 500000, factor 8, low 1, high 4, original 8192.
    # Band edges by hand: wavelength 2*pi*5e5^(i/64) < 8192/4 = 2048 <=> i < 64 ln(2048/2pi)/ln 5e5 = 28.22;
    # > 8192/1 = 8192 <=> i > 64 ln(8192/2pi)/ln 5e5 = 34.98. So 0-28 kept, 29-34 smoothed, 35-63 divided.
    result = apply_scheme(spec("llama3", base=5e5, train=8192, factor=8, low_freq_factor=1, high_freq_factor=4,
                               original_max_position_embeddings=8192))
    theta = mp_theta(128, 5e5)
    wavelen = [2 * mpmath.pi / t for t in theta]
    kept = [i for i in range(64) if wavelen[i] < 2048]
    divided = [i for i in range(64) if wavelen[i] > 8192]
    assert kept == list(range(0, 29)) and divided == list(range(35, 64))
    bands = result.detail("band")
    assert [i for i, b in enumerate(bands) if b == "high"] == kept
    assert [i for i, b in enumerate(bands) if b == "low"] == divided
    assert [i for i, b in enumerate(bands) if b == "medium"] == list(range(29, 35))
    for i in range(64):
        if i in kept:
            expected = theta[i]
        elif i in divided:
            expected = theta[i] / 8
        else:
            smooth = (8192 / wavelen[i] - 1) / (4 - 1)
            assert 0 < smooth < 1
            expected = (1 - smooth) * theta[i] / 8 + smooth * theta[i]
        assert abs(result.inv_freq[i] - expected) <= 1e-13 * expected, i
    assert result.attention_factor == 1.0


def test_llama3_defaults_are_llama31():
    a = apply_scheme(spec("llama3", base=5e5, train=8192, factor=8))
    b = apply_scheme(spec("llama3", base=5e5, train=8192, factor=8, low_freq_factor=1, high_freq_factor=4,
                          original_max_position_embeddings=8192))
    assert a.inv_freq == b.inv_freq


# --- LongRoPE ---------------------------------------------------------------------------


def test_longrope_all_ones_is_default():
    ones = [1.0] * 64
    result = apply_scheme(spec("longrope", short_factor=ones, long_factor=ones, factor=1), seq_len=100000)
    assert result.inv_freq == apply_scheme(spec()).inv_freq
    assert result.attention_factor == 1.0


def test_longrope_switches_to_long_factors_past_the_original_length():
    short = [1.0 + i / 64 for i in range(64)]
    long = [2.0 + i for i in range(64)]
    p = spec("longrope", short_factor=short, long_factor=long, max_position_embeddings=131072)
    theta = mp_theta(128, 1e4)
    at = apply_scheme(p, seq_len=4096)  # L == L_orig: still short (transformers: seq_len > original)
    past = apply_scheme(p, seq_len=4097)
    assert at.detail("factors_used") == "short" and past.detail("factors_used") == "long"
    assert_close_mp(at.inv_freq, [t / f for t, f in zip(theta, short, strict=True)])
    assert_close_mp(past.inv_freq, [t / f for t, f in zip(theta, long, strict=True)])
    assert apply_scheme(p).detail("factors_used") == "short"  # default length: train_len


def test_longrope_attention_factor_phi3_mini_128k():
    # s = 131072/4096 = 32; ln 32 / ln 4096 = 5/12 exactly; sqrt(17/12) = 1.19024
    expected = mpmath.sqrt(mpmath.mpf(17) / 12)
    ones = [1.0] * 48
    for params in ({"max_position_embeddings": 131072}, {"factor": 32},
                   {"factor": 32, "max_position_embeddings": 131072}):
        r = apply_scheme(spec("longrope", d=96, short_factor=ones, long_factor=ones, **params))
        assert abs(r.attention_factor - expected) < 1e-14
    assert abs(longrope_attention_factor(32, 4096) - expected) < 1e-14
    r = apply_scheme(spec("longrope", d=96, short_factor=ones, long_factor=ones, attention_factor=1.3))
    assert r.attention_factor == 1.3


# --- ReRoPE / Leaky ReRoPE (seed 000) ---------------------------------------------------


def seed_matrix(length, window=None, k=None, pi=None):
    """Seed 000's matrices entry by entry: row i (query), column j (key), upper triangle empty."""
    out = [[math.nan] * length for _ in range(length)]
    for i in range(length):
        for j in range(i + 1):
            delta = i - j
            if pi is not None:
                out[i][j] = delta / pi  # Position Interpolation: entries delta/k
            elif window is None or delta <= window - 1:  # red region: 0 .. w-1
                out[i][j] = delta
            elif k is None:
                out[i][j] = window  # ReRoPE: green region is all w
            else:
                out[i][j] = window + (delta - window) / k  # Leaky: w, w + 1/k, w + 2/k, ...
    return np.array(out)


@pytest.mark.parametrize("length,window,k,pi", [
    (12, None, None, None), (12, None, None, 4.0), (12, 4, None, None), (12, 4, 3.0, None),
    (20, 1, 2.0, None), (9, 9, None, None), (9, 20, 2.0, None), (1, 3, None, None),
])
def test_relative_position_matrix_brute_force(length, window, k, pi):
    got = relative_position_matrix(length, window, k, interpolation=pi or 1.0)
    assert got.shape == (length, length) and got.dtype == np.float64
    np.testing.assert_array_equal(got, seed_matrix(length, window, k, pi))
    assert np.isnan(got[np.triu_indices(length, 1)]).all()
    result = SchemeResult((1.0,), window=window, leaky_k=k)
    if pi is None:
        for delta in range(length):
            assert result.relative_position(delta) == got[delta, 0]
        assert max_relative_position(length, window, k) == np.nanmax(got) == result.max_relative_position(length)


def test_leaky_tends_to_rerope_as_k_grows():
    rerope = relative_position_matrix(64, 8)
    previous = math.inf
    for k in (10.0, 1e3, 1e6, 1e12):
        gap = np.nanmax(np.abs(relative_position_matrix(64, 8, k) - rerope))
        assert gap == pytest.approx((63 - 8) / k)  # largest at the far corner: (L-1-w)/k
        assert gap < previous
        previous = gap
    assert previous < 1e-10


def brute_force_safe_length(window, k, train_len, limit):
    """Longest L whose largest encoded position (exact fractions) is <= train_len - 1."""
    best = 0
    for length in range(1, limit):
        top = length - 1 if length - 1 < window else window + Fraction(length - 1 - window) / Fraction(k)
        if top <= train_len - 1:
            best = length
        else:
            break
    return best


@pytest.mark.parametrize("window,k,train", [
    (1, 2, 8), (3, 2, 8), (3, 3, 13), (5, 2.5, 13), (2, 1.5, 10), (6, 4, 8), (7, 2, 8), (8, 2, 8), (11, 3, 8),
    (4, 3.3, 20),
])
def test_leaky_rerope_safe_length_brute_force(window, k, train):
    expected = brute_force_safe_length(window, k, train, limit=400)
    assert leaky_rerope_safe_length(window, k, train) == expected
    # and over the matrix itself: L* fits, L* + 1 does not
    inside = relative_position_matrix(expected, window, k)
    outside = relative_position_matrix(expected + 1, window, k)
    assert np.nanmax(inside) <= train - 1 < np.nanmax(outside)


@pytest.mark.parametrize("window,k,train", [(256, 16, 4096), (128, 8, 512), (1, 2, 8), (1000, 64, 4096)])
def test_leaky_rerope_safe_length_vs_continuous_form(window, k, train):
    # integer k: L* = w + k (T - w) - (k - 1); the continuous w + k (T - w) is k - 1 longer
    got = leaky_rerope_safe_length(window, k, train)
    assert got == window + k * (train - window) - (k - 1)
    assert max_relative_position(got, window, k) <= train - 1 < max_relative_position(got + 1, window, k)
    if (window, k, train) == (256, 16, 4096):
        assert (got, window + k * (train - window)) == (61681, 61696)


def test_rerope_safe_length_unbounded():
    assert leaky_rerope_safe_length(256, None, 4096) == math.inf
    assert leaky_rerope_safe_length(4096, None, 4096) == 4096  # window covers the trained range
    assert apply_scheme(spec("rerope", window=256)).detail("safe_length") == math.inf
    assert apply_scheme(spec("leaky_rerope", window=256, k=16)).detail("safe_length") == 61681


def test_rerope_schemes_keep_frequencies():
    plain = apply_scheme(spec()).inv_freq
    r = apply_scheme(spec("rerope", window=256))
    lr = apply_scheme(spec("leaky_rerope", window=256, k=16))
    assert r.inv_freq == lr.inv_freq == plain
    assert (r.window, r.leaky_k, lr.window, lr.leaky_k) == (256, None, 256, 16.0)
    assert r.max_relative_position(100000) == 256.0
    assert lr.max_relative_position(100000) == 256 + (99999 - 256) / 16
    assert encoded_relative_position(10, interpolation=4) == 2.5


# --- invariants (hypothesis) ------------------------------------------------------------


@settings(max_examples=40, deadline=None)
@given(d=st.sampled_from([8, 32, 64, 128]), base=st.sampled_from([1e4, 5e5, 1e6]),
       s=st.floats(1.0, 64.0), train=st.sampled_from([512, 4096, 8192]),
       scheme=st.sampled_from(["linear", "ntk", "dynamic", "yarn", "yarn-paper", "llama3"]))
def test_scaled_frequencies_lie_between_theta_over_s_and_theta(d, base, s, train, scheme):
    params = {"factor": s}
    if scheme == "yarn-paper":
        scheme, params["variant"] = "yarn", "paper"
    got = apply_scheme(spec(scheme, d=d, base=base, train=train, **params), seq_len=2 * train).inv_freq
    plain = default_inv_freq(d, base)
    s_max = s if scheme != "dynamic" else 2 * s - (s - 1)  # s_eff at 2*train
    for i, (t, t0) in enumerate(zip(got, plain, strict=True)):
        if scheme in ("ntk", "dynamic"):
            lower = t0 / s_max ** ((2 * i / d) * d / (d - 2))  # NTK: theta_i * s^(-2i/(d-2))
            assert t == pytest.approx(lower, rel=1e-12)
        assert t0 / s_max * (1 - 1e-12) <= t <= t0 * (1 + 1e-12)
    assert all(a > b for a, b in zip(got, got[1:], strict=False))  # neighbours: still strictly slower pair by pair


# --- bad input --------------------------------------------------------------------------

ONES = [1.0] * 64


@pytest.mark.parametrize("scheme,params,d,message", [
    ("linear", {"factor": 0.5}, 128, r"scheme 'linear': factor must be >= 1 \(a context extension\), got 0.5"),
    ("linear", {"factor": "big"}, 128, r"scheme 'linear': factor must be a number, got 'big'"),
    ("linear", {"factor": float("nan")}, 128, r"factor must be finite"),
    ("linear", {"factor": True}, 128, r"factor must be a number, got True"),
    ("ntk", {"factor": 2}, 2, r"scheme 'ntk': NTK-aware scaling needs d >= 4"),
    ("dynamic", {"factor": 0}, 128, r"factor must be >= 1"),
    ("dynamic", {"factor": 2, "seq_len": 0}, 128, r"scheme 'dynamic': seq_len must be >= 1, got 0"),
    ("dynamic", {"factor": 2, "seq_len": 10.5}, 128, r"seq_len must be a whole number"),
    ("dynamic", {"factor": 2, "original_max_position_embeddings": 6}, 128,
     r"original_max_position_embeddings must exceed 2\*pi, got 6"),
    ("dynamic", {"factor": 2, "original_max_position_embeddings": -1}, 128, r"must be >= 1"),
    ("yarn", {"factor": 8, "beta_fast": 1, "beta_slow": 32}, 128,
     r"scheme 'yarn': beta_fast must be >= beta_slow, got beta_fast=1, beta_slow=32"),
    ("yarn", {"factor": 8, "beta_slow": 0}, 128, r"beta_slow must be > 0, got 0"),
    ("yarn", {"factor": 8, "variant": "vllm"}, 128, r"variant must be one of hf, paper, got 'vllm'"),
    ("yarn", {"factor": 8, "truncate": ["no"]}, 128, r"truncate must be true or false, got \('no',\)"),
    ("yarn", {"factor": 8, "variant": "paper", "mscale": 1.0}, 128, r"mscale apply to variant 'hf' only"),
    ("yarn", {"factor": 8, "variant": "paper", "truncate": False}, 128, r"truncate apply to variant 'hf' only"),
    ("yarn", {"factor": 8, "attention_factor": 0}, 128, r"attention_factor must be > 0, got 0"),
    ("llama3", {"factor": 8, "low_freq_factor": 4, "high_freq_factor": 1}, 128,
     r"scheme 'llama3': band factors out of order: low_freq_factor \(4\) must be <= high_freq_factor \(1\)"),
    ("llama3", {"factor": 8, "low_freq_factor": 0}, 128, r"low_freq_factor must be > 0"),
    ("longrope", {"short_factor": [1.0] * 63, "long_factor": ONES, "factor": 2}, 128,
     r"scheme 'longrope': short_factor must have d/2 = 64 entries, got 63"),
    ("longrope", {"short_factor": ONES, "long_factor": 2.0, "factor": 2}, 128,
     r"long_factor must be a list of 64 numbers \(one per pair\), got 2.0"),
    ("longrope", {"short_factor": ONES, "long_factor": [1.0] * 63 + [0.0], "factor": 2}, 128,
     r"long_factor\[63\] must be > 0, got 0.0"),
    ("longrope", {"short_factor": ONES, "long_factor": [1.0] * 63 + ["x"], "factor": 2}, 128,
     r"long_factor\[63\] must be a number"),
    ("longrope", {"short_factor": ONES, "long_factor": ONES}, 128,
     r"needs factor, max_position_embeddings or attention_factor"),
    ("longrope", {"short_factor": ONES, "long_factor": ONES, "factor": 4, "max_position_embeddings": 131072}, 128,
     r"factor 4 disagrees with max_position_embeddings/original length = 131072/4096 = 32"),
    ("longrope", {"short_factor": ONES, "long_factor": ONES, "max_position_embeddings": 2048}, 128,
     r"max_position_embeddings must be >= the original length 4096"),
    ("rerope", {"window": 0}, 128, r"scheme 'rerope': window must be >= 1, got 0"),
    ("rerope", {"window": 2.5}, 128, r"window must be a whole number, got 2.5"),
    ("leaky_rerope", {"window": 16, "k": 1}, 128, r"scheme 'leaky_rerope': k must be > 1 \(k = 1 is plain RoPE"),
    ("leaky_rerope", {"window": 16, "k": 0.5}, 128, r"k must be > 1"),
    ("leaky_rerope", {"window": 16, "k": "inf"}, 128, r"k must be finite"),
])
def test_bad_parameters(scheme, params, d, message):
    with pytest.raises(ValueError, match=message):
        apply_scheme(spec(scheme, d=d, **params))


@pytest.mark.parametrize("call,message", [
    (lambda: relative_position_matrix(0), r"length must be >= 1"),
    (lambda: relative_position_matrix(9000), r"too large for a dense matrix"),
    (lambda: relative_position_matrix(8, leaky_k=2.0), r"leaky_k needs a window"),
    (lambda: relative_position_matrix(8, 2, 1.0), r"leaky k must be > 1"),
    (lambda: relative_position_matrix(8, 2, interpolation=2.0), r"cannot be combined"),
    (lambda: relative_position_matrix(8, interpolation=0.5), r"interpolation must be >= 1"),
    (lambda: max_relative_position(8, 0), r"window must be >= 1"),
    (lambda: encoded_relative_position(8, 2, interpolation=2.0), r"cannot be combined"),
    (lambda: leaky_rerope_safe_length(16, 1, 4096), r"leaky k must be > 1"),
    (lambda: leaky_rerope_safe_length(0, 2, 4096), r"window must be >= 1"),
    (lambda: leaky_rerope_safe_length(16, 2, 0), r"training length must be >= 1"),
    (lambda: yarn_correction_range(128, 1e4, 4096, 1, 32), r"beta_fast >= beta_slow > 0"),
    (lambda: ntk_scaled_base(1e4, 2, 2), r"needs d >= 4"),
    # b * s^(d/(d-2)) = 1e4 * (1e308)^(128/126) ~ 1e317 > float max: was an OverflowError (QA sweep)
    (lambda: ntk_scaled_base(1e4, 1e308, 128), r"beyond float range"),
    (lambda: ntk_scaled_base(1e300, 1e10, 128), r"beyond float range"),  # the product overflows to inf
])
def test_bad_arguments_to_module_functions(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_yarn_equal_betas_make_a_step_as_in_kimi_k2():
    # Kimi K2's config.json: beta_fast = beta_slow = 1 (transformers only warns for beta_fast < beta_slow).
    # truncate: low = floor(i(1)), high = ceil(i(1)); pairs below low kept, above high divided by s
    res = apply_scheme(spec("yarn", factor=32, beta_fast=1, beta_slow=1, original_max_position_embeddings=4096,
                            mscale=1.0, mscale_all_dim=1.0, base=50000.0))
    i1 = 128 * math.log(4096 / (2 * math.pi)) / (2 * math.log(50000.0))
    low, high = res.detail("correction_range")
    assert (low, high) == (math.floor(i1), math.ceil(i1))
    theta = [50000.0 ** (-2.0 * i / 128) for i in range(64)]
    for i, (t, t0) in enumerate(zip(res.inv_freq, theta, strict=True)):
        w = min(max((i - low) / (high - low), 0.0), 1.0)
        assert t == pytest.approx((1 - w) * t0 + w * t0 / 32, rel=1e-15)
    assert res.attention_factor == 1.0  # mscale / mscale_all_dim equal


@pytest.mark.parametrize("length,alpha", [(100, 1), (8192, 1), (8193, 3), (16384, 3), (16385, 7), (32768, 7),
                                          (32769, 15)])
def test_qwen_dynamic_alpha_steps_and_base(length, alpha):
    # Qwen v1 remote code: alpha = max(2^ceil(log2(L/S) + 1) - 1, 1), base' = base * alpha^(d/(d-2))
    from ropelaw.schemes import qwen_ntk_alpha

    assert qwen_ntk_alpha(length, 8192) == alpha
    res = apply_scheme(spec("qwen_dynamic", original_max_position_embeddings=8192), seq_len=length)
    with mpmath.workdps(30):
        base = mpmath.mpf(10000) * mpmath.mpf(alpha) ** (mpmath.mpf(128) / 126)
    assert res.detail("scaled_base") == pytest.approx(float(base), rel=1e-13)
    assert res.inv_freq[63] == pytest.approx(float(base ** (-mpmath.mpf(126) / 128)), rel=1e-13)


def test_to_dict_is_plain():
    d = apply_scheme(spec("yarn", factor=8)).to_dict()
    assert d["attention_factor"] == pytest.approx(1.2079441541679836)
    assert d["correction_range"] == [20, 46] and len(d["inv_freq"]) == len(d["interpolation_weight"]) == 64


# --- transformers (4.57.1 or 5.23.0, whichever is installed), the published implementation --------


@pytest.fixture(scope="module")
def hf():
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    import hf_reference

    return hf_reference


@pytest.mark.hf
@pytest.mark.parametrize("ours,theirs,max_pos,seq_len,base", [
    ({"scheme": "linear", "factor": 4.0}, {"rope_type": "linear", "factor": 4.0}, 4096, None, 1e4),
    ({"scheme": "dynamic", "factor": 2.0}, {"rope_type": "dynamic", "factor": 2.0}, 4096, 10000, 1e4),
    ({"scheme": "yarn", "factor": 8.0}, {"rope_type": "yarn", "factor": 8.0}, 4096, None, 1e4),
    ({"scheme": "yarn", "factor": 4.0, "beta_fast": 16.0, "truncate": False, "mscale": 1.0, "mscale_all_dim": 0.5},
     {"rope_type": "yarn", "factor": 4.0, "beta_fast": 16.0, "truncate": False, "mscale": 1.0,
      "mscale_all_dim": 0.5}, 32768, None, 1e6),
    ({"scheme": "yarn", "factor": 2.0}, {"rope_type": "yarn", "factor": 2.0}, 131072, None, 1e4),
    ({"scheme": "llama3", "factor": 8.0}, {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                                            "high_freq_factor": 4.0, "original_max_position_embeddings": 8192},
     8192, None, 5e5),
])
def test_matches_transformers(hf, ours, theirs, max_pos, seq_len, base):
    config = hf.make_config(dict(hidden_size=1024, num_attention_heads=8, rope_theta=base,
                                 max_position_embeddings=max_pos, rope_scaling=theirs))
    inv, attention = hf.reference_inv_freq(config, theirs["rope_type"], seq_len)
    params = dict(ours)
    result = apply_scheme(spec(params.pop("scheme"), base=base, train=max_pos, **params), seq_len=seq_len)
    np.testing.assert_allclose(result.inv_freq, inv, rtol=2e-6)  # theirs is float32
    assert result.attention_factor == pytest.approx(attention, rel=1e-12)
    assert hf.float32_noise(result, config, theirs["rope_type"], seq_len)  # and exact against their float64 run


@pytest.mark.hf
def test_longrope_matches_transformers(hf):
    short = [1.0 + 0.01 * i for i in range(64)]
    long = [1.0 + 0.5 * i for i in range(64)]
    config = hf.make_config(dict(hidden_size=1024, num_attention_heads=8, rope_theta=1e4,
                                 max_position_embeddings=131072, original_max_position_embeddings=4096,
                                 rope_scaling={"rope_type": "longrope", "short_factor": short, "long_factor": long}))
    p = spec("longrope", short_factor=short, long_factor=long, max_position_embeddings=131072)
    for seq_len in (None, 4096, 4097):
        inv, attention = hf.reference_inv_freq(config, "longrope", seq_len)
        result = apply_scheme(p, seq_len=seq_len)
        np.testing.assert_allclose(result.inv_freq, inv, rtol=2e-6)
        assert result.attention_factor == pytest.approx(attention, rel=1e-12)
        assert hf.float32_noise(result, config, "longrope", seq_len)


def test_rerope_safe_length_with_window_at_the_last_trained_distance_is_unbounded():
    """Review: w = T_train - 1 keeps every encoded position min(delta, w) <= T_train - 1, so
    ReRoPE is safe at any length (seed 000); one more (w = T_train) is not."""
    from ropelaw.schemes import leaky_rerope_safe_length

    assert leaky_rerope_safe_length(4094, None, 4096) == math.inf
    assert leaky_rerope_safe_length(4095, None, 4096) == math.inf
    assert leaky_rerope_safe_length(4096, None, 4096) == 4096


def test_yarn_correction_dim_with_absurd_beta_is_a_value_error():
    from ropelaw.schemes import yarn_correction_dim

    with pytest.raises(ValueError, match="beta_fast / beta_slow"):
        yarn_correction_dim(1e308, 128, 10000.0, 4096)


def test_periods_are_two_pi_over_theta_and_infinite_for_a_zero_frequency():
    # a pair whose theta underflowed to 0 never turns: period inf, not ZeroDivisionError
    res = SchemeResult((1.0, 0.5, 0.0))
    assert res.periods[:2] == (float(2 * mpmath.pi), float(4 * mpmath.pi))
    assert res.periods[2] == math.inf
    # a real underflow: d = 4, base 1e300, pair 1 has theta = 1e300^(-1/2) = 1e-150; linear
    # interpolation by s = 1e300 gives 1e-450, below the smallest float64 (~4.9e-324): 0
    tiny = apply_scheme(spec("linear", d=4, base=1e300, factor=1e300))
    assert tiny.inv_freq[1] == 0.0 and tiny.periods[1] == math.inf


def test_proportional_is_plain_rope_at_the_base_to_the_d_over_head_dim():
    """Gemma 4's proportional RoPE: b^(-2i/D) over the first d/2 pairs equals plain RoPE over d dims at
    base b^(d/D) (the same exponent 2i/D = (2i/d)(d/D)); divided by the factor."""
    spec = RopeSpec(d=128, train_len=8192, base=1e6, scheme="proportional", params={"head_dim": 512, "factor": 2.0})
    got = apply_scheme(spec).inv_freq
    plain = apply_scheme(RopeSpec(d=128, train_len=8192, base=1e6 ** (128 / 512))).inv_freq
    assert len(got) == 64 and all(math.isclose(a, b / 2.0, rel_tol=1e-13) for a, b in zip(got, plain, strict=True))
    from ropelaw.schemes import exact_inv_freq

    exact = exact_inv_freq(spec, None, mpmath.mp)
    assert all(abs(mpmath.mpf(a) - e) <= 1e-15 * abs(e) for a, e in zip(got, exact, strict=True))
    with pytest.raises(ValueError, match="smaller than the rotated dims"):
        apply_scheme(RopeSpec(d=128, train_len=8192, base=1e6, scheme="proportional", params={"head_dim": 64}))


@pytest.mark.hf
def test_proportional_is_transformers_function():
    transformers = pytest.importorskip("transformers")
    pytest.importorskip("torch")
    from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS

    if "proportional" not in ROPE_INIT_FUNCTIONS:
        pytest.skip(f"transformers {transformers.__version__} has no proportional RoPE")
    cfg = transformers.CONFIG_MAPPING["llama"](hidden_size=1024, num_attention_heads=2, head_dim=512,
                                                rope_parameters={"rope_type": "proportional", "rope_theta": 1e6,
                                                                 "partial_rotary_factor": 0.25, "factor": 2.0})
    inv, attention = ROPE_INIT_FUNCTIONS["proportional"](cfg, "cpu")
    rot = [float(x) for x in inv if float(x) != 0]
    assert len(rot) == int(0.25 * 512 // 2) == 64 and attention == 1.0
    ours = apply_scheme(RopeSpec(d=128, train_len=8192, base=1e6, scheme="proportional",
                                 params={"head_dim": 512, "factor": 2.0})).inv_freq
    assert all(math.isclose(a, b, rel_tol=2e-6) for a, b in zip(ours, rot, strict=True))  # float32 pow
