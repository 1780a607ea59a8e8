"""The one number formatter (ropelaw.numfmt): its rules as a specification.

Each property is checked by reading the printed text back (``int``/``float`` of the string
without separators), independently of how the formatter builds it: whole numbers print every
digit below 10^12; other numbers keep at most 6 significant digits, or exactly the digits that
keep a non-whole number from reading as a whole one.
"""

from __future__ import annotations

import math
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ropelaw.numfmt import COMPACT_FROM, compact, count, exponent, number, short

PLAIN = re.compile(r"-?\d{1,3}(,\d{3})*(\.\d+)?")  # 1,234,567.89
EXPONENT = re.compile(r"-?\d(\.\d+)?e-?\d+")  # 1.38629e222, 1e-5


def read(text: str) -> float:
    return float(text.replace(",", ""))


def significant_digits(text: str) -> int:
    mant = text.replace(",", "").lstrip("-").partition("e")[0].replace(".", "").lstrip("0")
    return len(mant.rstrip("0")) if "." not in text.partition("e")[0] else len(mant)


@pytest.mark.parametrize("x,text", [
    # whole numbers: every digit, thousands separators (the issue: "10000" beside "10,000")
    (10000, "10,000"), (10000.0, "10,000"), (131072, "131,072"), (1e6, "1,000,000"),
    (999_999_999_999, "999,999,999,999"),
    # from 10^12 on: exponent form, at most 6 significant digits (--base 1e308: no 222-digit count)
    (10**12, "1e12"), (1e308, "1e308"), (10**400, "1e400"), (-(10**400), "-1e400"),
    (2**53 + 1, "9.0072e15"),  # 9007199254740993 -> 9.00720 x 10^15
    (123456789 * 10**400, "1.23457e408"),
    # non-whole numbers: 6 significant digits, separators, exponent from 10^6 and below 10^-4
    (71738.40, "71,738.4"), (4096 / math.pi * 2, "2,607.59"), (0.5, "0.5"), (-3.25, "-3.25"),
    (1022121.9, "1.02212e6"), (1.154781984689e-5, "1.15478e-5"), (0.0013335214, "0.00133352"),
    # never a whole-looking text for a non-whole number (the issue: base 1.0000000000000002 shown as 1)
    (1.0000000000000002, "1.0000000000000002"), (1.0000001, "1.0000001"), (1000000.5, "1,000,000.5"),
    (None, "-"), (math.inf, "inf"), (-math.inf, "-inf"), (math.nan, "nan"),
])
def test_number(x, text):
    assert number(x) == text


@settings(max_examples=300, deadline=None)
@given(st.integers(min_value=-(10**30), max_value=10**30))
def test_whole_numbers_print_every_digit_below_1e12(n):
    text = count(n)
    if abs(n) < COMPACT_FROM:
        assert PLAIN.fullmatch(text) and int(text.replace(",", "")) == n
    else:
        assert EXPONENT.fullmatch(text) and significant_digits(text) <= 6
        assert abs(read(text) - n) <= 5e-6 * abs(n)


@settings(max_examples=500, deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False, min_value=-1e300, max_value=1e300))
def test_other_numbers_keep_6_digits_or_the_ones_that_differ(x):
    text = number(x)
    assert PLAIN.fullmatch(text) or EXPONENT.fullmatch(text), text
    back = read(text)
    if x.is_integer():
        if abs(x) < COMPACT_FROM:
            assert back == x
        return
    assert not back.is_integer() or "e" in text and "." in text.partition("e")[0], (x, text)
    digits = significant_digits(text)
    assert abs(back - x) <= 5 * 10.0 ** -max(6, digits) * abs(x), (x, text)  # correctly rounded
    if digits > 6:  # widened only because one digit fewer would have read as a whole number
        assert float(f"{x:.{digits - 1}g}").is_integer(), (x, text)


def test_whole_and_counts_fall_through_for_non_whole_values():
    assert count(4096.5) == "4,096.5" and count(32768.0) == "32,768"


@pytest.mark.parametrize("x,text", [
    (500000, "5e5"), (131072, "1.31e5"), (149000.0, "1.49e5"), (1e6, "1e6"), (10**400, "1e400"),
    (71738.4, "71,738.4"), (10000, "10,000"), (None, "-"),
])
def test_short(x, text):
    assert short(x) == text


def test_exponent_on_a_grid_and_compact_for_formulas():
    assert exponent(16000, 2) == "1.6e4" and exponent(8.8e6, 2) == "8.8e6"
    assert [compact(x) for x in (1e6, 500000.0, 1e-5, 1e100)] == ["1e6", "500000", "1e-5", "1e100"]
