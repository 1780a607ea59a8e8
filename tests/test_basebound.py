"""Men et al. 2024 (arXiv 2405.14591): B_{m,theta}, supported length, base lower bound.

Independent references: per-m sums with mpmath at 40 digits and with a plain
``math.cos`` loop; direct (non-blocked) numpy sums; the paper's printed table (Table of
lower bounds for d = 128), compared within the stated grid convention.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ropelaw.basebound import (
    PUBLISHED_LOWER_BOUNDS,
    _grid,
    b_m_theta,
    base_lower_bound,
    default_frequencies,
    supported_length,
    violations,
)


def b_exact(m: int, theta) -> mpmath.mpf:
    with mpmath.workdps(40):
        return mpmath.fsum(mpmath.cos(mpmath.mpf(m) * mpmath.mpf(float(t))) for t in theta)


def supported_brute(theta, limit: int) -> int:
    """First m with sum(cos(m*theta)) < 0, minus one, by a plain loop (math.fsum)."""
    for m in range(limit + 1):
        if math.fsum(math.cos(m * t) for t in theta) < 0:
            return m - 1
    return limit


def first_negative_direct(theta, limit: int):
    """Direct numpy sums (no block product) over m = 0..limit."""
    m = np.arange(limit + 1, dtype=np.float64)
    vals = np.cos(np.multiply.outer(m, np.asarray(theta))).sum(-1)
    neg = np.flatnonzero(vals < 0)
    return None if neg.size == 0 else int(neg[0])


def test_sums_match_mpmath_up_to_a_million():
    theta = default_frequencies(128, 5e5)
    rng = np.random.default_rng(0)
    ms = sorted(set(rng.integers(0, 1_100_000, size=40).tolist()) | {0, 1, 1_048_576})
    got = b_m_theta(np.array(ms), theta)
    for m, g in zip(ms, got, strict=True):
        assert abs(g - float(b_exact(m, theta))) < 1e-8, m
    # the blocked evaluator (used by supported_length) agrees with direct sums as well
    from ropelaw.basebound import _sums

    block = _sums(theta, 1_000_000, 1_000_000 + 3000)
    direct = np.cos(np.multiply.outer(np.arange(1_000_000, 1_003_000, dtype=np.float64), theta)).sum(-1)
    assert np.max(np.abs(block - direct)) < 1e-8
    assert b_m_theta(0, theta) == 64.0


def test_signs_are_exact_where_the_sum_is_within_rounding_of_zero():
    # theta = fl(pi/2): cos(m*theta) is ~1e-16-ish at odd m; its sign follows from the exact float
    theta = [math.pi / 2]
    for m in range(1, 400, 2):
        exact = b_exact(m, theta)
        assert (b_m_theta(m, theta) < 0) == (exact < 0), m
    # two pairs cancelling to ~0: theta and pi - theta (cos(m(pi-t)) = (-1)^m cos(mt))
    theta = [0.3, math.pi - 0.3]
    vals = b_m_theta(np.arange(1, 200), theta)
    for m, v in zip(range(1, 200), vals, strict=True):
        assert (v < 0) == (b_exact(m, theta) < 0), m


@pytest.mark.parametrize("d,base,limit", [(8, 100.0, 3000), (16, 1e4, 3000), (32, 500.0, 2000), (64, 1e4, 1500)])
def test_supported_length_matches_a_plain_loop(d, base, limit):
    theta = default_frequencies(d, base)
    assert supported_length(theta, limit) == supported_brute(theta, limit)


@settings(max_examples=25, deadline=None)
@given(theta=st.lists(st.floats(min_value=1e-4, max_value=3.0), min_size=1, max_size=12),
       limit=st.integers(0, 1500))
def test_any_frequency_set(theta, limit):
    assert supported_length(theta, limit) == supported_brute(theta, limit)
    m = np.arange(limit + 1, dtype=np.float64)
    direct = np.cos(np.multiply.outer(m, np.asarray(theta))).sum(-1)
    # no value of the random set sits within 1e-9 of zero (or the direct count is unreliable)
    if np.all(np.abs(direct) > 1e-9):
        assert violations(theta, limit) == int(np.count_nonzero(direct < 0))


def test_violations_llama_base_at_32k():
    theta = default_frequencies(128, 1e4)
    m = np.arange(32769, dtype=np.float64)
    direct = np.cos(np.multiply.outer(m, theta)).sum(-1)
    assert np.min(np.abs(direct)) > 1e-9
    assert violations(theta, 32768) == int(np.count_nonzero(direct < 0)) > 0


def test_grid_is_two_significant_figures():
    g = list(_grid(2, 2.0, 120.0))
    assert g[:3] == [2.0, 2.1, 2.2] and 9.9 in g and 10.0 in g and 11.0 in g and g[-1] == 120.0
    assert all(float(f"{x:.2g}") == x for x in g)


# Men et al. 2024, Table (d = 128). With "k" = 1000 tokens and the smallest base on the
# 2-significant-figure grid, 1k, 2k, 4k, 8k, 64k and 128k are reproduced exactly.
@pytest.mark.parametrize("k", [1, 2, 4, 8, 64, 128])
def test_published_lower_bounds_reproduced_on_the_grid(k):
    length = 1000 * k
    got = base_lower_bound(128, length)
    assert got == PUBLISHED_LOWER_BOUNDS[k]
    # independently: the result passes and the grid point below it fails (direct numpy sums)
    assert first_negative_direct(default_frequencies(128, got), length) is None
    below = float(f"{got:.2g}") - 10 ** (math.floor(math.log10(got)) - 1)
    assert first_negative_direct(default_frequencies(128, below), length) is not None


@pytest.mark.parametrize("k,first_violation", [(16, 12_223), (512, 511_210), (1024, 874_868)])
def test_published_entries_that_fail_their_own_length(k, first_violation):
    """The printed 3.1e5 (16k), 6.4e7 (512k), 5.1e8 (1M) have B < 0 before 1000k tokens.

    Checked with mpmath at the violation and direct sums below it (documented mismatch).
    """
    theta = default_frequencies(128, PUBLISHED_LOWER_BOUNDS[k])
    assert b_exact(first_violation, theta) < 0
    lo = max(0, first_violation - 20_000)
    m = np.arange(lo, first_violation, dtype=np.float64)
    assert np.all(np.cos(np.multiply.outer(m, theta)).sum(-1) >= 0)
    assert supported_length(theta, 1000 * k) == first_violation - 1


def test_four_k_means_4000_tokens_in_the_table():
    # 2.7e4 supports 4,000 tokens but fails at m = 4,079 < 4,096
    theta = default_frequencies(128, 2.7e4)
    assert supported_length(theta, 4096) == 4078
    assert b_exact(4079, theta) < 0


def test_bisection_convention_passes_and_is_not_below_the_grid_answer():
    b = base_lower_bound(128, 4000, convention="bisection")
    assert first_negative_direct(default_frequencies(128, b), 4000) is None
    assert b >= 2.7e4


def test_bad_input():
    with pytest.raises(ValueError):
        base_lower_bound(127, 1000)
    with pytest.raises(ValueError):
        base_lower_bound(128, 0)
    with pytest.raises(ValueError):
        base_lower_bound(128, 1000, convention="nope")
    with pytest.raises(ValueError):
        supported_length([], 10)
    with pytest.raises(ValueError):
        supported_length([float("nan")], 10)


# -- input validation: the same rules as RopeSpec (spec.check_positive_int / check_real) --------
def test_integral_floats_are_accepted_like_ints():
    # d = 128.0 is the even integer 128: theta_i = 1e4^(-2i/128), checked against 30-digit mpmath
    theta = default_frequencies(128.0, 1e4)
    assert theta.dtype == np.float64 and theta.shape == (64,)
    with mpmath.workdps(30):
        for i, t in enumerate(theta):
            want = mpmath.mpf(10) ** (-mpmath.mpf(i) / 16)  # 1e4^(-2i/128) = 10^(-8i/128)
            assert abs(t - want) <= 2 * math.ulp(float(want)), i
    np.testing.assert_array_equal(theta, default_frequencies(128, 1e4))
    # length 1000.0 is the length 1000; the answer is checked by direct sums on its two sides
    b = base_lower_bound(64, 1000.0)
    assert b == base_lower_bound(64.0, 1000)
    assert first_negative_direct(default_frequencies(64, b), 1000) is None
    assert 1e3 <= b < 1e4  # (7.8e3) so the grid step below it is 100
    below = float(f"{round(b / 100) - 1}e2")  # the previous base on the 2-significant-figure grid
    assert first_negative_direct(default_frequencies(64, below), 1000) is not None


@pytest.mark.parametrize("call", [
    lambda: base_lower_bound(64, 1000.5),  # used to run silently at length 1000
    lambda: supported_length([1.0, 0.1], 10.5),
    lambda: violations([1.0, 0.1], 2.5),
    lambda: default_frequencies(127.0, 1e4),
    lambda: default_frequencies(128.5, 1e4),
    lambda: default_frequencies(True, 1e4),
])
def test_non_integral_lengths_and_dims_are_value_errors(call):
    with pytest.raises(ValueError, match="whole number|even integer"):
        call()


def test_bad_bases_are_value_errors():
    for base in (1.0, 0.5, float("inf"), float("nan"), "x"):
        with pytest.raises(ValueError, match="base"):
            default_frequencies(128, base)


# -- the fast grid search (issue 23) is the plain scan, exactly --------------------------------
def first_passing_brute(d: int, length: int, digits: int = 2) -> float:
    """The smallest grid base whose every B_m (m <= length) is >= 0: a plain upward scan, direct
    numpy sums for all m, and every sum within 1e-9 of zero re-signed with mpmath at 40 digits."""
    m = np.arange(length + 1, dtype=np.float64)
    for base in _grid(digits, 2.0, 1e15):
        theta = default_frequencies(d, base)
        vals = np.cos(np.multiply.outer(m, theta)).sum(-1)
        if np.any(vals < -1e-9):
            continue
        near = np.flatnonzero(np.abs(vals) <= 1e-9)
        if all(b_exact(int(k), theta) >= 0 for k in near):
            return base
    raise AssertionError("no grid base up to 1e15")


@pytest.mark.parametrize("d,length", [(4, 60), (6, 300), (8, 100), (8, 1000), (12, 700), (16, 256),
                                      (16, 2048), (24, 1000), (32, 1500), (64, 1000), (64, 2048), (128, 1024)])
def test_grid_lower_bound_equals_a_brute_force_scan(d, length):
    from ropelaw.basebound import _forget_grid_searches

    _forget_grid_searches()
    assert base_lower_bound(d, length) == first_passing_brute(d, length)


@pytest.mark.slow
@pytest.mark.parametrize("d,length", [(8, 512), (16, 4096), (20, 4096), (32, 2048), (64, 4096), (64, 32768),
                                      (80, 2048), (96, 2047), (128, 4096), (128, 4097), (128, 8192),
                                      (128, 40960), (128, 131072), (256, 4096), (256, 8192)])
def test_grid_lower_bound_equals_the_implementation_it_replaced(d, length):
    """The scan of every base before issue 23 (tests/basebound_reference.py, kept verbatim), at the
    (d, length) pairs of the real corpus's configs and around them."""
    from basebound_reference import base_lower_bound_before

    from ropelaw.basebound import _forget_grid_searches

    _forget_grid_searches()
    assert base_lower_bound(d, length) == base_lower_bound_before(d, length)


def test_grid_searches_remember_only_certain_facts_in_any_order():
    """Within a run a search skips grid bases an earlier one saw fail a length <= its own and checks a
    base known to support a shorter length only beyond it: every order of the same searches gives the
    answers of fresh searches (each checked against the brute-force scan above for some pairs)."""
    import random

    from ropelaw.basebound import _forget_grid_searches

    pairs = [(16, 256), (16, 1000), (32, 700), (32, 1024), (32, 1025), (32, 1500), (64, 1000), (64, 1024),
             (64, 2048), (64, 2049), (64, 700)]
    fresh = {}
    for d, length in pairs:
        _forget_grid_searches()
        fresh[d, length] = base_lower_bound(d, length)
    for d, length in [(16, 256), (32, 1500), (64, 1000), (64, 2048)]:
        assert fresh[d, length] == first_passing_brute(d, length)
    orders = [sorted(pairs), sorted(pairs, reverse=True)]
    orders += [random.Random(seed).sample(pairs, len(pairs)) for seed in range(3)]
    for order in orders:
        _forget_grid_searches()
        assert {p: base_lower_bound(*p) for p in order} == fresh, order
    _forget_grid_searches()


@settings(max_examples=60, deadline=None)
@given(d=st.integers(2, 64).map(lambda k: 2 * k), exponent=st.floats(1.0, 15.0),
       length=st.integers(1, 3000))
def test_slow_pairs_certificate_only_certifies_what_the_sums_confirm(d, exponent, length):
    """_slow_pairs_certify (the shortcut of base_lower_bound's domain check at 1e15): whenever it says
    every B >= 0 up to the length, the direct sums agree (signs within 1e-9 of zero by mpmath)."""
    from ropelaw.basebound import _slow_pairs_certify

    theta = default_frequencies(d, 10.0 ** exponent)
    if not _slow_pairs_certify(theta, length):
        return
    m = np.arange(length + 1, dtype=np.float64)
    vals = np.cos(np.multiply.outer(m, theta)).sum(-1)
    assert not np.any(vals < -1e-9)
    assert all(b_exact(int(k), theta) >= 0 for k in np.flatnonzero(np.abs(vals) <= 1e-9))


def test_slow_pairs_certificate_covers_the_domain_check_of_the_corpus_lengths():
    """base_lower_bound first checks that 1e15 supports the length; at the rotary dims and lengths of
    the real corpus the certificate decides it without sums (and never for d = 2, where cos(m) < 0)."""
    from ropelaw.basebound import _slow_pairs_certify

    for d, length in [(8, 512), (16, 4096), (64, 131072), (96, 2047), (128, 262144), (256, 8192)]:
        assert _slow_pairs_certify(default_frequencies(d, 1e15), length)
    assert not _slow_pairs_certify(default_frequencies(2, 1e15), 100)


def test_no_base_supports_d2_as_before():
    from basebound_reference import base_lower_bound_before

    with pytest.raises(ValueError, match="no base up to"):
        base_lower_bound_before(2, 100)
    with pytest.raises(ValueError, match="no base up to"):
        base_lower_bound(2, 100)


@pytest.mark.parametrize("seed", range(4))
def test_screen_sums_stay_within_their_tolerance(seed):
    """The screen trusts a sum only beyond _tolerance: check the float error against mpmath
    (40 digits) on random frequency sets, slabs and widths, including distances near 2^22."""
    from ropelaw.basebound import _screen_sums, _tolerance

    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 130))
    theta = np.sort(rng.uniform(1e-9, 1.0, size=(3, n)), axis=1)[:, ::-1].copy()
    theta[:, 0] = 1.0
    start = int(rng.integers(0, 1 << 22))
    width = int(rng.integers(1, 5000))
    got = _screen_sums(theta, start, start + width)
    tol = _tolerance(n, float(start + width), powers=start + width + 1)
    for k in range(3):
        for j in rng.choice(width, size=min(width, 12), replace=False):
            assert abs(got[k, j] - float(b_exact(start + int(j), theta[k]))) <= tol / 16, (k, j)
