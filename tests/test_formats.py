"""Float formats: closed-form counts of exact positions against brute-force casts.

Oracles (independent of ropelaw.formats):
- ml_dtypes casts (bfloat16, float8_e4m3fn, float8_e5m2), numpy float16, torch casts;
- tf32: an integer bit manipulation of float32 (round-to-nearest-even on the low 13 bits);
- huge L: a different decomposition of the exact integers (j * 2**s with j of exactly P bits)
  and window counts by an exact integer representability test.
Published figures: seed 004 (Baichuan) "bf16 ... 8192 ... about 10% exact"; IEEE 754 binary16
max 65504, so 65520 (the midpoint to 65536, tie to even) is the first integer that overflows.
"""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ropelaw.formats import FORMATS, exact_positions, get_format, round_to_format


def _tf32_cast(x: np.ndarray) -> np.ndarray:
    """tf32 oracle: float32 bits, round the 13 dropped fraction bits to nearest even."""
    u = np.asarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    lsb = (u >> np.uint64(13)) & np.uint64(1)
    u = (u + np.uint64(0xFFF) + lsb) & ~np.uint64(0x1FFF)
    return u.astype(np.uint32).view(np.float32).astype(np.float64)


CASTS = {
    "bf16": lambda x: x.astype(ml_dtypes.bfloat16).astype(np.float64),
    "fp16": lambda x: x.astype(np.float16).astype(np.float64),
    "fp8_e4m3": lambda x: x.astype(ml_dtypes.float8_e4m3fn).astype(np.float64),
    "fp8_e5m2": lambda x: x.astype(ml_dtypes.float8_e5m2).astype(np.float64),
    "tf32": _tf32_cast,
    "fp32": lambda x: x.astype(np.float32).astype(np.float64),
}
SPACING_DTYPES = {"bf16": ml_dtypes.bfloat16, "fp16": np.float16, "fp8_e4m3": ml_dtypes.float8_e4m3fn,
                  "fp8_e5m2": ml_dtypes.float8_e5m2, "fp32": np.float32}
N = 2 ** 20 + 3


@pytest.fixture(scope="module")
def brute():
    """Per format: the cast of 0..N-1 (non-finite collapsed to +inf) and prefix statistics."""
    out = {}
    p = np.arange(N, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        for name, cast in CASTS.items():
            v = cast(p)
            v = np.where(np.isfinite(v), v, np.inf)
            exact = np.concatenate([[0], np.cumsum(v == p)])  # exact[L] = exact count in [0, L)
            changes = np.concatenate([[0], np.cumsum(v[1:] != v[:-1])])  # changes[L-1] among first L
            nonfinite = ~np.isfinite(v)
            out[name] = (v, exact, changes, nonfinite)
    return out


def _brute_counts(brute, name: str, L: int) -> dict:
    v, exact, changes, nonfinite = brute[name]
    last = L - 1
    inexact = np.nonzero(v[:L] != np.arange(L))[0]
    over = np.nonzero(nonfinite[:L])[0]
    return {
        "exact": int(exact[L]),
        "distinct": int(changes[last]) + 1,  # the cast is monotone: distinct = 1 + number of steps
        "first_inexact": int(inexact[0]) if inexact.size else None,
        "overflow_from": int(over[0]) if over.size else None,
        "overflow_count": int(over.size),
    }


def _check(brute, name: str, L: int) -> None:
    got = exact_positions(name, L)
    want = _brute_counts(brute, name, L)
    have = {k: getattr(got, k) for k in want}
    assert have == want, f"{name} L={L}: closed form {have} != brute force {want}"
    assert got.exact_fraction == want["exact"] / L


def test_seed_004_bf16_8192():
    # seed 004 (Baichuan): at 8192 tokens only about 10% of positions are exact in bf16
    r = exact_positions("bf16", 8192)
    p = np.arange(8192, dtype=np.float64)
    assert r.exact == int(np.sum(p.astype(ml_dtypes.bfloat16).astype(np.float64) == p)) == 896
    assert round(r.exact_fraction, 3) == 0.109
    assert r.first_inexact == 257  # bf16 has 8 significant bits: 2**8 + 1 is the first gap
    assert r.spacing_at_end == float(np.spacing(np.array([8000.0], dtype=ml_dtypes.bfloat16))[0])  # 32


def test_fp16_exact_to_2048_and_overflow_at_65520():
    p = np.array([2048, 2049, 65504, 65519, 65520, 65535], dtype=np.float64)
    with np.errstate(over="ignore"):
        assert list(p.astype(np.float16).astype(np.float64)) == [2048, 2048, 65504, 65504, np.inf, np.inf]
    assert exact_positions("fp16", 2048).first_inexact is None
    assert exact_positions("fp16", 2050).first_inexact == 2049
    r = exact_positions("fp16", 70000)
    assert (r.overflow_from, r.overflow_count) == (65520, 70000 - 65520)
    assert exact_positions("fp16", 65520).overflow_from is None
    assert exact_positions("fp16", 65521).overflow_count == 1
    assert r.spacing_at_end is None  # 69,999 lies beyond fp16's last finite binade


def test_overflow_thresholds_match_casts():
    # e5m2: max 57344, midpoint to 2**16 is 61440, tie to even -> inf; e4m3fn: max 448 (even
    # significand 1.110b), the tie 464 stays 448, 465 is NaN in ml_dtypes
    with np.errstate(over="ignore", invalid="ignore"):
        assert CASTS["fp8_e5m2"](np.array([61439.0, 61440.0]))[1] == np.inf
        assert CASTS["fp8_e5m2"](np.array([61439.0]))[0] == 57344
        e4 = CASTS["fp8_e4m3"](np.array([464.0, 465.0]))
    assert e4[0] == 448 and np.isnan(e4[1])
    assert get_format("e5m2").overflow_threshold == 61440
    assert get_format("e4m3").overflow_threshold == 465
    assert get_format("fp16").overflow_threshold == 65520


LENGTHS = sorted({1, 2, 3, 255, 256, 257, 258, 259, 260, 300, 511, 512, 513, 2047, 2048, 2049, 2050, 2051,
                  4095, 4096, 4097, 8191, 8192, 8193, 16384, 32768, 100000, 65504, 65505, 65519, 65520,
                  65521, 65536, 65537, 61439, 61440, 61441, 57344, 57345, 448, 449, 464, 465, 466, 500,
                  2 ** 20, N})


@pytest.mark.parametrize("name", list(CASTS))
def test_closed_form_matches_brute_force_at_boundaries(brute, name):
    for L in LENGTHS:
        _check(brute, name, L)


@pytest.mark.parametrize("name", ["bf16", "fp16", "tf32", "fp8_e4m3", "fp8_e5m2"])
@settings(max_examples=40, deadline=None)
@given(L=st.integers(min_value=1, max_value=N))
def test_closed_form_matches_brute_force_random_lengths(brute, name, L):
    _check(brute, name, L)


@pytest.mark.parametrize("name", list(SPACING_DTYPES))
def test_spacing_at_end_matches_dtype_spacing(name):
    dt = SPACING_DTYPES[name]
    for L in (2, 3, 300, 1000, 8192, 40000, 65505):
        last = L - 1
        r = exact_positions(name, L)
        if r.spacing_at_end is None:
            assert last > get_format(name).max_finite
            continue
        # the largest representable value <= last lies in the same binade (powers of two are representable)
        with np.errstate(over="ignore"):
            floor_value = np.array([2.0 ** math.floor(math.log2(last))], dtype=dt)
        assert r.spacing_at_end == float(np.spacing(floor_value)[0]), (name, L)


def _exact_by_decomposition(P: int, L: int, max_finite: int) -> int:
    """Independent count: exact integers >= 2**P are j * 2**s, 2**(P-1) <= j < 2**P, s >= 1."""
    L = min(L, max_finite + 1)
    total = min(L, 2 ** P)
    s = 1
    while 2 ** (P - 1) * 2 ** s < L:
        top = min(2 ** P, -(-L // 2 ** s))  # j * 2**s < L  <=>  j < ceil(L / 2**s)
        total += max(0, top - 2 ** (P - 1))
        s += 1
    return total


def _representable(n: int, P: int) -> bool:
    if n < 2 ** P:
        return True
    tz = (n & -n).bit_length() - 1
    return n.bit_length() - tz <= P


@pytest.mark.parametrize("name", ["bf16", "fp16", "tf32", "fp32"])
def test_huge_lengths_against_independent_formula(name):
    f = get_format(name)
    mx = int(f.max_finite)
    for L in (2 ** 24 + 1, 2 ** 31 - 1, 10 ** 12 + 7, 2 ** 53 - 1, 2 ** 53):
        assert exact_positions(name, L).exact == _exact_by_decomposition(f.precision, L, mx), (name, L)
    # window counts near 2**53: difference of closed forms == exact integer test on every integer
    if f.max_finite > 2 ** 53:
        for lo in (2 ** 53 - 5000, 2 ** 40 + 12345):
            hi = lo + 5000
            want = sum(_representable(n, f.precision) for n in range(lo, hi))
            assert exact_positions(name, hi).exact - exact_positions(name, lo).exact == want


def test_bf16_distinct_counts_round_up_of_last_position():
    # 259 rounds up to 260 (tie, 260 = 1.0000010b * 2**8 has an even significand): one value above 259
    assert CASTS["bf16"](np.array([259.0]))[0] == 260
    r = exact_positions("bf16", 260)
    assert (r.exact, r.distinct) == (258, 259)


# ------------------------------------------------------------------ round_to_format

@pytest.mark.parametrize("name", ["bf16", "fp16", "fp8_e4m3", "fp8_e5m2", "fp32"])
def test_round_to_format_matches_casts_on_float32_values(name):
    rng = np.random.default_rng(0)
    x = np.concatenate([
        rng.standard_normal(20000).astype(np.float32),
        (rng.standard_normal(20000) * 1e4).astype(np.float32),
        (rng.standard_normal(5000) * 1e-6).astype(np.float32),  # subnormals of fp16/fp8
        np.arange(-70000, 70000, 7, dtype=np.float32),
        np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e38, -1e38], dtype=np.float32),
    ]).astype(np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        want = CASTS[name](x)
    got = round_to_format(x, name)
    assert np.array_equal(got, want, equal_nan=True)
    assert np.array_equal(np.signbit(got[x == 0]), np.signbit(want[x == 0]))


def test_round_to_format_tf32_matches_bit_manipulation():
    rng = np.random.default_rng(1)
    x = np.concatenate([rng.standard_normal(50000), rng.standard_normal(5000) * 1e30,
                        np.arange(0, 100000, dtype=np.float64)]).astype(np.float32).astype(np.float64)
    assert np.array_equal(round_to_format(x, "tf32"), _tf32_cast(x))


def test_round_to_format_is_one_correct_rounding_beyond_2_24():
    # n = 2**25 + 2**17 + 1 lies just above the midpoint between bf16 neighbours 2**25 and 2**25 + 2**18:
    # correct rounding goes up; torch and ml_dtypes go through float32 (which drops the +1) and then tie down
    torch = pytest.importorskip("torch")
    n = 2 ** 25 + 2 ** 17 + 1
    assert round_to_format(np.array([n], dtype=np.float64), "bf16")[0] == 2 ** 25 + 2 ** 18
    via = round_to_format(np.array([n], dtype=np.float64), "bf16", via_float32=True)[0]
    assert via == torch.tensor([n], dtype=torch.float64).to(torch.bfloat16).double().item() == 2 ** 25


def test_torch_casts_agree_on_positions():
    torch = pytest.importorskip("torch")
    p = torch.arange(70000, dtype=torch.float64)
    for name, dt in (("bf16", torch.bfloat16), ("fp16", torch.float16), ("fp8_e5m2", torch.float8_e5m2)):
        want = p.to(dt).double().numpy()
        assert np.array_equal(round_to_format(p.numpy(), name), want)


# ------------------------------------------------------------------ names and input checks

@pytest.mark.parametrize("alias,name", [("bfloat16", "bf16"), ("torch.bfloat16", "bf16"), ("half", "fp16"),
                                        ("float16", "fp16"), ("torch.float16", "fp16"), ("float", "fp32"),
                                        ("float32", "fp32"), ("e4m3", "fp8_e4m3"), ("e5m2", "fp8_e5m2"),
                                        ("float8_e4m3fn", "fp8_e4m3"), ("TF32", "tf32"), ("BF16", "bf16")])
def test_get_format_aliases(alias, name):
    assert get_format(alias).name == name


def test_get_format_accepts_torch_dtype_objects():
    torch = pytest.importorskip("torch")
    assert get_format(torch.bfloat16).name == "bf16"
    assert get_format(torch.float16).name == "fp16"


def test_format_constants_match_finfo():
    for name, dt in SPACING_DTYPES.items():
        fi = ml_dtypes.finfo(dt) if name in ("bf16", "fp8_e4m3", "fp8_e5m2") else np.finfo(dt)
        f = FORMATS[name]
        assert float(fi.max) == f.max_finite, name
        assert int(fi.nmant) == f.mantissa_bits, name


@pytest.mark.parametrize("bad", [0, -3, 2.5, "8192", True])
def test_exact_positions_rejects_bad_lengths(bad):
    with pytest.raises(ValueError):
        exact_positions("bf16", bad)


def test_unknown_format_is_a_value_error():
    with pytest.raises(ValueError, match="unknown float format"):
        get_format("fp12")
