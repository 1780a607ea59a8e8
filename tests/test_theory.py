"""Liu et al. 2023 (arXiv 2310.05209, seed 001) scaling laws, against independent derivations.

Independent references used here: the seed's printed numbers; a brute-force count of pairs
whose period 2*pi*b^(2n/d) is <= T (mpmath, 50 digits); YaRN's correction-dimension formula
(Peng et al. 2023, arXiv 2309.00071: d*ln(L/(2*pi*r))/(2*ln b)); closed forms evaluated
with mpmath; Hypothesis properties of the theorem.
"""

from __future__ import annotations

import math

import mpmath
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ropelaw.spec import RopeSpec
from ropelaw.theory import (
    ABOVE,
    AT_OR_BELOW,
    scheme_pair_bound,
    base_for_context,
    critical_base,
    critical_dimension,
    extrapolation_bound,
    pair_table,
    threshold_bases,
)

mp = mpmath.mp


def brute_pairs(d: int, length: float, base: float, digits: int = 50) -> int:
    """Number of pairs n in 0..d/2-1 with period 2*pi*base^(2n/d) <= length (exact floats in)."""
    with mpmath.workdps(digits):
        b, t = mpmath.mpf(base), mpmath.mpf(length)
        return sum(1 for n in range(d // 2) if 2 * mpmath.pi * b ** (mpmath.mpf(2 * n) / d) <= t)


def yarn_correction_dim(r: float, d: int, base: float, length: float) -> float:
    """YaRN (arXiv 2309.00071): dimension (pair index) that turns r times over length L."""
    return d * math.log(length / (r * 2 * math.pi)) / (2 * math.log(base))


# -- the seed's own numbers ---------------------------------------------------------------
def test_llama2_critical_dimension_is_92():
    # seed 001: "对于LLaMA2 ... T_train=4096, d=128, 可以得到 d_extra=92"
    assert critical_dimension(128, 4096) == 92
    assert critical_dimension(128, 4096, 10000.0) == 2 * brute_pairs(128, 4096, 1e4)


def test_llama2_base_1e6_bound_about_129k():
    # UX.md sketch: 129,027 tokens = 2*pi*1e6^(92/128); recomputed here at 50 digits
    with mpmath.workdps(50):
        expected = 2 * mpmath.pi * mpmath.mpf(10) ** (mpmath.mpf(6 * 92) / 128)
    r = extrapolation_bound(RopeSpec(d=128, train_len=4096, base=1e6))
    assert r.regime == ABOVE
    assert r.extrapolation_bound == pytest.approx(float(expected), rel=1e-13)
    assert round(r.extrapolation_bound) == 129027
    assert r.updated_critical_dimension is None and r.capped is False


def test_tuning_4k_to_16k_critical_base_about_71738():
    # seed 001 (Theorem 3): beta_0 = 10000^(log_{4096/2pi}(16384/2pi)); the paper quotes ~71738
    b0 = critical_base(4096, 16384, 10000.0)
    with mpmath.workdps(50):
        two_pi = 2 * mpmath.pi
        exact = mpmath.mpf(10000) ** (mpmath.log(16384 / two_pi) / mpmath.log(4096 / two_pi))
    assert b0 == pytest.approx(float(exact), rel=1e-13)
    assert round(b0) == 71738


def test_thresholds_at_4096():
    # seed 001: beta_1 = 2T/pi, beta_2 = T/pi, beta_3 = T/(2pi) at T_tune = 4096: 2607.6, 1303.8, 651.9
    b1, b2, b3 = threshold_bases(4096)
    assert (round(b1, 1), round(b2, 1), round(b3, 1)) == (2607.6, 1303.8, 651.9)
    r = extrapolation_bound(RopeSpec(d=128, train_len=4096, base=1e6))
    assert (r.beta_1, r.beta_2, r.beta_3) == (b1, b2, b3)


def test_yarn_published_correction_range_matches_critical_pair():
    # YaRN: d=128, b=1e4, L=4096, beta_fast=32, beta_slow=1 -> correction range (20, 46).
    # The high end is the first pair that does not complete one rotation: d_extra/2.
    low = math.floor(yarn_correction_dim(32, 128, 1e4, 4096))
    high = math.ceil(yarn_correction_dim(1, 128, 1e4, 4096))
    assert (low, high) == (20, 46)
    assert critical_dimension(128, 4096, 1e4) // 2 == high


# -- critical dimension: brute force and YaRN across many setups --------------------------
DS = [2, 4, 8, 64, 80, 96, 128, 256]
TS = [7, 100, 2048, 4096, 32768, 1_000_000]
BS = [1.5, 500.0, 1e4, 5e5, 1e6, 1e9]


@pytest.mark.parametrize("d", DS)
def test_critical_dimension_is_twice_the_brute_force_period_count(d):
    for t in TS:
        for b in BS:
            got = critical_dimension(d, t, b)
            assert got == 2 * brute_pairs(d, t, b), (d, t, b, got)
            # YaRN's formula with r = 1 gives the same pair index (ceil), clamped to [0, d/2]
            y = yarn_correction_dim(1, d, b, t)
            assert got == 2 * min(d // 2, max(0, math.ceil(y))), (d, t, b)


def test_critical_dimension_clamps_at_d_when_every_pair_completes_a_period():
    # T/2pi > b: even the slowest pair (period 2*pi*b^((d-2)/d) < 2*pi*b) completes a period
    assert critical_dimension(128, 1_000_000, 500.0) == 128
    assert brute_pairs(128, 1_000_000, 500.0) == 64


@pytest.mark.parametrize("d,t", [(128, 4096), (64, 2048), (256, 32768), (80, 8192)])
def test_ceiling_decided_exactly_next_to_integers(d, t):
    """Bases built so (d/2)*log_b(T/2pi) lands within float noise of every integer n."""
    for n in range(1, d // 2):
        with mpmath.workdps(60):
            b_exact = (mpmath.mpf(t) / (2 * mpmath.pi)) ** (mpmath.mpf(d) / (2 * n))
        for b in (float(b_exact), math.nextafter(float(b_exact), math.inf), math.nextafter(float(b_exact), 0)):
            if not 1 < b < math.inf:
                continue
            with mpmath.workdps(100):
                y = mpmath.mpf(d) / 2 * mpmath.log(mpmath.mpf(t) / (2 * mpmath.pi)) / mpmath.log(mpmath.mpf(b))
                expected = 2 * min(d // 2, int(mpmath.ceil(y)))
            assert critical_dimension(d, t, b) == expected, (d, t, n, b)
            assert expected == 2 * brute_pairs(d, t, b, digits=100)


@pytest.mark.parametrize("bad", [
    dict(d=127, train_len=4096), dict(d=0, train_len=4096), dict(d=True, train_len=4096),
    dict(d=128, train_len=6), dict(d=128, train_len=float("nan")), dict(d=128, train_len=4096, base=1.0),
    dict(d=128, train_len=4096, base=float("inf")), dict(d="x", train_len=4096),
])
def test_critical_dimension_rejects_bad_input(bad):
    with pytest.raises(ValueError):
        critical_dimension(**bad)


def test_critical_base_rejects_tune_below_train():
    with pytest.raises(ValueError, match="tuning length"):
        critical_base(4096, 2048)


# -- Theorem 3: regimes -------------------------------------------------------------------
def test_bound_never_below_tuning_length_when_every_pair_completed_a_period():
    # d_extra = d (T/2pi > b^((d-2)/d)): 2*pi*beta^(d/d) = 2*pi*4 < 26 = T_tune; Theorem 3 floors it
    r = extrapolation_bound(RopeSpec(d=16, train_len=26, base=4.0, pretrain_base=2.0))
    assert r.critical_dimension == 16 == 2 * brute_pairs(16, 26, 2.0)
    assert r.regime == ABOVE and r.extrapolation_bound == 26.0


def test_base_equal_to_pretraining_base_without_longer_tuning_is_at_or_below():
    # beta_0 = b exactly when T_tune = T_train; beta = b is "<= beta_0": the bound stays T_train
    r = extrapolation_bound(RopeSpec(d=128, train_len=4096, base=1e4))
    assert r.critical_base == 1e4
    assert (r.regime, r.extrapolation_bound, r.updated_critical_dimension) == (AT_OR_BELOW, 4096.0, 92)
    up = extrapolation_bound(RopeSpec(d=128, train_len=4096, base=math.nextafter(1e4, math.inf)))
    assert up.regime == ABOVE
    assert up.extrapolation_bound == pytest.approx(2 * math.pi * 1e4 ** (92 / 128), rel=1e-12)


def exact_above(beta: float, b: float, t: float, u: float) -> bool:
    with mpmath.workdps(80):
        two_pi = 2 * mpmath.pi
        lhs = mpmath.log(mpmath.mpf(beta)) * mpmath.log(mpmath.mpf(t) / two_pi)
        rhs = mpmath.log(mpmath.mpf(b)) * mpmath.log(mpmath.mpf(u) / two_pi)
        return lhs > rhs


@pytest.mark.parametrize("t,u,b", [(4096, 16384, 1e4), (2048, 32768, 5e5), (4096, 4097, 1e4), (8192, 131072, 1e6)])
def test_regime_next_to_the_critical_base_is_decided_exactly(t, u, b):
    b0 = critical_base(t, u, b)
    for beta in (b0, math.nextafter(b0, math.inf), math.nextafter(b0, 0), b0 * (1 + 1e-12), b0 * (1 - 1e-12)):
        r = extrapolation_bound(RopeSpec(d=128, train_len=t, tune_len=u, base=beta, pretrain_base=b))
        assert (r.regime == ABOVE) == exact_above(beta, b, t, u), beta


@pytest.mark.parametrize("beta,u", [(500.0, 16384), (2000.0, 4096), (5e4, 16384), (1e4, 65536), (700.0, 4096)])
def test_updated_critical_dimension_is_the_tuning_period_count(beta, u):
    r = extrapolation_bound(RopeSpec(d=128, train_len=4096, tune_len=u, base=beta))
    assert r.regime == AT_OR_BELOW and r.extrapolation_bound == u
    count = brute_pairs(128, u, beta)
    assert r.updated_critical_dimension == 2 * count
    # the formula exceeds d exactly when T_tune/2pi > beta (then even a virtual pair d/2 would fit)
    assert r.capped == (u / (2 * math.pi) > beta)
    assert r.updated_critical_dimension >= r.critical_dimension


def test_below_thresholds_lists_the_betas_the_base_is_under():
    r = extrapolation_bound(RopeSpec(d=128, train_len=4096, base=2000.0))
    assert r.below_thresholds == ["beta_1"]
    assert extrapolation_bound(RopeSpec(d=128, train_len=4096, base=1000.0)).below_thresholds == ["beta_1", "beta_2"]
    assert "no sharp upper bound" in r.note
    r = extrapolation_bound(RopeSpec(d=128, train_len=4096, base=500.0))
    assert r.below_thresholds == ["beta_1", "beta_2", "beta_3"]


spec_args = dict(
    d=st.sampled_from([16, 32, 64, 96, 128, 256]),
    t=st.integers(min_value=7, max_value=2_000_000),
    extra=st.integers(min_value=0, max_value=4_000_000),
    b=st.floats(min_value=2.0, max_value=1e7),
    beta=st.floats(min_value=1.01, max_value=1e9),
)


@settings(max_examples=60, deadline=None)
@given(**spec_args)
def test_property_updated_dimension_at_least_critical_dimension(d, t, extra, b, beta):
    r = extrapolation_bound(RopeSpec(d=d, train_len=t, tune_len=t + extra, base=beta, pretrain_base=b))
    assert r.critical_base >= b  # T_tune >= T_train: the exponent is >= 1
    if r.regime == AT_OR_BELOW:
        assert r.updated_critical_dimension >= r.critical_dimension
        assert r.extrapolation_bound == t + extra
    else:
        assert r.extrapolation_bound >= t + extra  # Theorem 3: tuning never lowers the bound


@settings(max_examples=60, deadline=None)
@given(d=spec_args["d"], t=spec_args["t"], b=spec_args["b"], beta=spec_args["beta"], factor=st.floats(1.0, 50.0))
def test_property_bound_monotone_in_base(d, t, b, beta, factor):
    lo = extrapolation_bound(RopeSpec(d=d, train_len=t, base=beta, pretrain_base=b))
    hi = extrapolation_bound(RopeSpec(d=d, train_len=t, base=beta * factor, pretrain_base=b))
    assert hi.extrapolation_bound >= lo.extrapolation_bound * (1 - 1e-12)


@settings(max_examples=60, deadline=None)
@given(d=spec_args["d"], t=spec_args["t"], more=st.integers(0, 1_000_000), b=spec_args["b"], beta=spec_args["beta"])
def test_property_bound_and_dimension_monotone_in_training_length(d, t, more, b, beta):
    assert critical_dimension(d, t + more, b) >= critical_dimension(d, t, b)
    lo = extrapolation_bound(RopeSpec(d=d, train_len=t, base=beta, pretrain_base=b))
    hi = extrapolation_bound(RopeSpec(d=d, train_len=t + more, base=beta, pretrain_base=b))
    assert hi.extrapolation_bound >= lo.extrapolation_bound * (1 - 1e-12)


@settings(max_examples=40, deadline=None)
@given(d=spec_args["d"], t=spec_args["t"], b=spec_args["b"])
def test_property_critical_base_equals_pretraining_base_without_longer_tuning(d, t, b):
    assert critical_base(t, t, b) == b
    assert extrapolation_bound(RopeSpec(d=d, train_len=t, base=b, pretrain_base=b)).critical_base == b


# -- the inverse --------------------------------------------------------------------------
def liu_bound_mp(d: int, t: int, b: float, beta: float) -> mpmath.mpf:
    """Bound at T_tune = T_train, with the critical dimension from the brute-force count."""
    d_extra = 2 * brute_pairs(d, t, b)
    with mpmath.workdps(50):
        if mpmath.mpf(beta) > mpmath.mpf(b):
            return 2 * mpmath.pi * mpmath.mpf(beta) ** (mpmath.mpf(d_extra) / d)
        return mpmath.mpf(t)


def test_base_for_llama2_at_128k():
    # lambda*b with lambda = b^-1 (T/2pi)^(d/d_extra): (131072/2pi)^(128/92)
    beta = base_for_context(128, 4096, 131072)
    with mpmath.workdps(50):
        formula = (mpmath.mpf(131072) / (2 * mpmath.pi)) ** (mpmath.mpf(128) / 92)
    assert beta == pytest.approx(float(formula), rel=1e-12)
    assert liu_bound_mp(128, 4096, 1e4, beta) >= 131072 * (1 - 1e-15)
    assert liu_bound_mp(128, 4096, 1e4, beta * (1 - 1e-12)) < 131072


@settings(max_examples=60, deadline=None)
@given(d=spec_args["d"], t=spec_args["t"], b=spec_args["b"], ratio=st.floats(1.0001, 1e4))
def test_property_inverse_reaches_the_target_and_no_smaller_base_does(d, t, b, ratio):
    target = t * ratio
    try:
        beta = base_for_context(d, t, target, b)
    except ValueError as exc:
        # e.g. d = 256, T = 7, b = 1e6: d_extra = 2 and the base (target/2pi)^(d/d_extra) = 256^128
        # overflows; the error must be right about that, decided at 50 digits
        assert "beyond float range" in str(exc)
        with mpmath.workdps(50):
            need = (mpmath.mpf(target) / (2 * mpmath.pi)) ** (mpmath.mpf(d) / critical_dimension(d, t, b))
        assert need > mpmath.mpf(1.7976931348623157e308)
        return
    assert beta > b
    # decided exactly: at 50 digits (critical dimension by brute force) beta reaches the target and
    # the next smaller float does not, even where the float bound is an ulp off (14 vs 13.999999999999998)
    smaller = math.nextafter(beta, 0)
    assert liu_bound_mp(d, t, b, beta) >= target
    assert liu_bound_mp(d, t, b, smaller) < target
    # the float bound ropelaw prints agrees to float rounding
    r = extrapolation_bound(RopeSpec(d=d, train_len=t, base=beta, pretrain_base=b))
    assert r.extrapolation_bound >= target * (1 - 1e-12)
    assert extrapolation_bound(RopeSpec(d=d, train_len=t, base=smaller, pretrain_base=b)).extrapolation_bound \
        < target * (1 + 1e-12)


def test_inverse_edge_conventions():
    assert base_for_context(128, 4096, 4096) == 1e4  # already within the training length
    # just past T_train: anything above b reaches up to 2*pi*b^(92/128) ~ 4711.7
    assert base_for_context(128, 4096, 4500) == math.nextafter(1e4, math.inf)


# -- the bound through the scheme registry ------------------------------------------------
def test_pair_engine_reproduces_liu_for_plain_rope():
    # the first untrained pair k = d_extra/2 reaches its period 2*pi*beta^(2k/d) = Liu's T_extra
    for beta in (2e4, 5e5, 1e6, 1e8):
        spec = RopeSpec(d=128, train_len=4096, base=beta)
        bound, period = scheme_pair_bound(spec, 46)
        with mpmath.workdps(40):
            liu = 2 * mpmath.pi * mpmath.mpf(beta) ** (mpmath.mpf(92) / 128)
        assert bound == pytest.approx(float(liu), rel=1e-12)
        assert extrapolation_bound(spec).extrapolation_bound == pytest.approx(bound, rel=1e-15)


def test_linear_interpolation_stretches_the_critical_period_by_the_factor():
    # PI divides every theta by s, so the critical pair's period (and the bound) grows s-fold
    r = extrapolation_bound(RopeSpec(d=128, train_len=4096, base=1e4, scheme="linear", params={"factor": 4}))
    assert r.regime == ABOVE
    assert r.extrapolation_bound == pytest.approx(4 * 2 * math.pi * 1e4 ** (92 / 128), rel=1e-12)
    assert r.liu_bound == 4096.0  # plain RoPE at the pretraining base


def test_ntk_bound_uses_the_ntk_base():
    # NTK-aware: b' = b*s^(d/(d-2)); s = 2 on 1e4 gives ~20221 (issue 2)
    b_ntk = 1e4 * 2 ** (128 / 126)
    assert round(b_ntk) == 20221
    r = extrapolation_bound(RopeSpec(d=128, train_len=4096, base=1e4, scheme="ntk", params={"factor": 2}))
    assert r.extrapolation_bound == pytest.approx(2 * math.pi * b_ntk ** (92 / 128), rel=1e-9)


def test_rerope_is_unbounded_when_the_window_is_inside_the_critical_period():
    r = extrapolation_bound(RopeSpec(d=128, train_len=4096, base=1e4, scheme="rerope", params={"window": 512}))
    assert r.unbounded and r.extrapolation_bound == math.inf and r.regime == ABOVE
    # a window beyond the critical period (4711.7): the identity part reaches it first
    r = extrapolation_bound(RopeSpec(d=128, train_len=4096, base=1e4, scheme="rerope", params={"window": 6000}))
    assert r.extrapolation_bound == pytest.approx(2 * math.pi * 1e4 ** (92 / 128), rel=1e-12)


def test_leaky_rerope_solves_w_plus_distance_over_k_equals_the_period():
    w, k = 256, 16
    spec = RopeSpec(d=128, train_len=4096, base=1e4, scheme="leaky_rerope", params={"window": w, "k": k})
    r = extrapolation_bound(spec)
    period = 2 * math.pi * 1e4 ** (92 / 128)
    assert r.extrapolation_bound == pytest.approx(w + k * (period - w), rel=1e-12)
    # the seed-000 map itself: w + (D - w)/k at D = bound is the period
    assert w + (r.extrapolation_bound - w) / k == pytest.approx(period, rel=1e-12)
    # inside the trained range up to w + k*(T - w) (seed 000, continuous form)
    assert r.trained_range_length == pytest.approx(w + k * (4096 - w))


def test_dynamic_ntk_bound_is_the_crossing_of_distance_and_growing_period():
    # Hugging Face dynamic NTK: b(L) = b*((s*L/T) - (s-1))^(d/(d-2)) for L > T
    s, t, d, k = 4.0, 4096, 128, 46
    spec = RopeSpec(d=d, train_len=t, base=1e4, scheme="dynamic", params={"factor": s})
    r = extrapolation_bound(spec)
    D = r.extrapolation_bound

    def period(length: float) -> float:
        b = 1e4 * ((s * length / t) - (s - 1)) ** (d / (d - 2)) if length > t else 1e4
        return 2 * math.pi * b ** (2 * k / d)

    assert period(D + 1) * (1 + 1e-9) >= D
    assert period(D + 2) * (1 - 1e-9) < D + 1


def test_longrope_bound_uses_the_long_factors_past_the_original_length():
    # LongRoPE (arXiv 2402.13753): theta_i / f_i with the long factors once L > L_orig, so the
    # critical pair's period is f_46 * 2*pi*b^(92/128) and the bound is that period.
    short, long = [1.0] * 64, [1 + i / 8 for i in range(64)]
    spec = RopeSpec(d=128, train_len=4096, base=1e4, scheme="longrope",
                    params={"short_factor": short, "long_factor": long, "factor": 8})
    r = extrapolation_bound(spec)
    expected = long[46] * 2 * math.pi * 1e4 ** (92 / 128)
    assert abs(r.extrapolation_bound - expected) <= 1.0  # integer distance from the search


def test_unknown_scheme_and_missing_parameters_raise_value_error():
    with pytest.raises(ValueError, match="unknown scheme"):
        extrapolation_bound(RopeSpec(d=128, train_len=4096, base=1e4, scheme="nope"))
    with pytest.raises(ValueError, match="factor"):
        extrapolation_bound(RopeSpec(d=128, train_len=4096, base=1e4, scheme="yarn"))


# -- per-pair table and result objects ----------------------------------------------------
def test_pair_table_llama2():
    rows = pair_table(RopeSpec(d=128, train_len=4096, base=5e5))
    assert len(rows) == 64
    assert sum(r.inside_critical_dimension for r in rows) == 46 == brute_pairs(128, 4096, 1e4)
    for r in rows:
        with mpmath.workdps(30):
            period = 2 * mpmath.pi * mpmath.mpf(10000) ** (mpmath.mpf(2 * r.pair) / 128)
            assert r.period == pytest.approx(float(period), rel=1e-13)
            assert r.periods_seen == pytest.approx(float(4096 / period), rel=1e-13)
            assert r.full_period_in_training == (period <= 4096)
            inf_period = 2 * mpmath.pi * mpmath.mpf(5e5) ** (mpmath.mpf(2 * r.pair) / 128)
            assert r.inference_period == pytest.approx(float(inf_period), rel=1e-13)
    assert rows[0].periods_seen == pytest.approx(4096 / (2 * math.pi))


def test_pair_table_goes_through_the_registry():
    rows = pair_table(RopeSpec(d=64, train_len=2048, base=1e4, scheme="linear", params={"factor": 2}))
    for r in rows:
        assert r.inference_frequency == pytest.approx(r.frequency / 2, rel=1e-14)


def test_result_objects_are_plain_and_render_in_jupyter():
    r = extrapolation_bound(RopeSpec(d=128, train_len=4096, base=1e6))
    data = r.to_dict()
    for key in ("d", "train_len", "base", "pretrain_base", "tune_len", "critical_dimension", "critical_base",
                "regime", "extrapolation_bound", "updated_critical_dimension", "capped", "beta_1", "beta_2",
                "beta_3", "scheme"):
        assert key in data
    assert type(data["critical_dimension"]) is int and type(data["extrapolation_bound"]) is float
    html = r._repr_html_()
    assert "BoundResult" in html and "129,027" in html
    row = pair_table(RopeSpec(d=8, train_len=100, base=1e4))[0]
    assert "PairRow" in row._repr_html_() and row.to_dict()["pair"] == 0


# -- input validation and the pair table's twin fields ----------------------------------------
def test_integral_floats_pass_and_fractional_lengths_fail_like_ropespec():
    # seed 001: LLaMA 2 (d = 128, T_train = 4096, b = 1e4) has d_extra = 92, whatever the number type
    assert critical_dimension(128.0, 4096.0, 1e4) == 92 == 2 * brute_pairs(128, 4096, 1e4)
    assert critical_base(4096.0, 16384.0) == critical_base(4096, 16384)
    for call in (lambda: critical_dimension(128, 4096.5), lambda: critical_base(4096, 16384.5),
                 lambda: threshold_bases(4096.5), lambda: base_for_context(128, 4096.5, 8192)):
        with pytest.raises(ValueError, match="whole number"):
            call()
    with pytest.raises(ValueError, match="even integer"):
        critical_dimension(128.5, 4096)
    with pytest.raises(ValueError, match="even integer"):
        base_for_context(126.0 + 1, 4096, 8192)


def test_pair_table_twin_fields_always_agree_with_the_brute_force_count():
    for spec in (RopeSpec(d=128, train_len=4096), RopeSpec(d=64, train_len=2048, pretrain_base=5e5),
                 RopeSpec(d=8, train_len=1_000_000, pretrain_base=500.0)):
        rows = pair_table(spec)
        inside = brute_pairs(spec.d, spec.train_len, spec.pretrain_base)  # pairs with period <= T_train
        assert [r.full_period_in_training for r in rows] == [i < inside for i in range(spec.d // 2)]
        assert all(r.inside_critical_dimension == r.full_period_in_training for r in rows)
        data = rows[0].to_dict()  # both public JSON keys stay, in their order
        keys = list(data)
        assert keys.index("inside_critical_dimension") == keys.index("full_period_in_training") + 1


def test_one_validation_of_d_and_base_for_spec_theory_basebound_decay():
    """RopeSpec, theory, basebound and decay reject the same inputs with the same messages."""
    from ropelaw import basebound, decay, spec, theory

    assert theory.check_rotary_dim is spec.check_rotary_dim is basebound.check_rotary_dim is decay.check_rotary_dim
    assert theory.check_base is spec.check_base is basebound.check_base is decay.check_base
    for bad in (127, 0, 128.5, "x", True):
        with pytest.raises(ValueError) as from_spec:
            RopeSpec(d=bad)
        with pytest.raises(ValueError) as from_theory:
            critical_dimension(bad, 4096)
        assert str(from_spec.value) == str(from_theory.value)
    with pytest.raises(ValueError, match=r"base must be > 1, got 1\.0"):
        RopeSpec(d=128, base=1.0)
