"""RoFormer long-term decay (arXiv 2104.09864, sec. 3.4.3), against brute-force complex sums."""

from __future__ import annotations

import math

import mpmath
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ropelaw.decay import decay_bound, decay_curve, rope_score


def curve_mp(d: int, base: float, m: float) -> float:
    """(1/(d/2)) * sum_{j=1}^{d/2} |sum_{k=0}^{j-1} e^{i m theta_k}| at 30 digits."""
    with mpmath.workdps(30):
        theta = [mpmath.mpf(base) ** (-mpmath.mpf(2 * k) / d) for k in range(d // 2)]
        total, s = mpmath.mpf(0), mpmath.mpc(0)
        for t in theta:
            s += mpmath.expj(mpmath.mpf(m) * t)
            total += abs(s)
        return float(total / (d // 2))


@pytest.mark.parametrize("d,base", [(128, 1e4), (64, 500.0), (16, 1e6)])
def test_curve_matches_mpmath(d, base):
    ms = [0, 1, 2, 7, 50, 128, 255, 1000, 12345.5]
    got = decay_curve(d, base, ms)
    for m, g in zip(ms, got, strict=True):
        assert g == pytest.approx(curve_mp(d, base, m), rel=1e-12, abs=1e-12)


def test_curve_starts_at_half_of_pairs_plus_one_and_decays():
    # m = 0: |S_j| = j, so the mean of 1..d/2 is (d/2 + 1)/2
    assert decay_curve(128, 1e4, [0])[0] == 32.5
    vals = decay_curve(128, 1e4, [0, 16, 64, 256])
    assert vals == sorted(vals, reverse=True)


@settings(max_examples=40, deadline=None)
@given(h=st.lists(st.complex_numbers(max_magnitude=10, allow_nan=False, allow_infinity=False), min_size=1, max_size=16),
       m=st.floats(min_value=-5000, max_value=5000))
def test_abel_bound_holds(h, m):
    # |sum h_i e^{i m theta_i}| <= max|h_{i+1}-h_i| * sum_j |S_j|   (h_{d/2} = 0)
    assert abs(rope_score(h, m)) <= decay_bound(h, m) * (1 + 1e-9) + 1e-9


def test_bad_input():
    with pytest.raises(ValueError):
        decay_curve(7, 1e4, [1])
    with pytest.raises(ValueError):
        decay_curve(8, 1.0, [1])
    with pytest.raises(ValueError):
        decay_curve(8, 1e4, [math.inf])


def test_integral_float_d_is_accepted_and_fractional_d_is_not():
    # m = 0: |S_j| = j, mean of 1..d/2 = (d/2 + 1)/2 (module docstring); d = 8.0 is d = 8
    assert decay_curve(8.0, 1e4, [0]) == [2.5]
    assert decay_curve(8.0, 1e4, [3.5]) == decay_curve(8, 1e4, [3.5])
    assert decay_curve(8.0, 1e4, [3.5])[0] == pytest.approx(curve_mp(8, 1e4, 3.5), rel=1e-12)
    with pytest.raises(ValueError, match="even integer"):
        decay_curve(8.5, 1e4, [1])
    with pytest.raises(ValueError, match="base"):
        decay_curve(8, float("nan"), [1])
