"""The one number formatter of ropelaw: commands, the linter, the audits and the plots.

Rules (docs/usage.md, "Numbers on the screen"):

- **Whole numbers** (token counts, lengths, dimensions, integer bases) print in full with
  thousands separators: ``131,072``, ``10,000``, ``1,000,000`` (:func:`count`). From
  :data:`COMPACT_FROM` (10^12: no real context, dimension or count reaches it) on they print in
  exponent form with :data:`SIG` significant digits, so a nonsense input never prints hundreds of
  digits: ``1e30``, ``1.38629e222``, ``9.0072e15``; integers beyond float range too (``1e400``).
- **Other numbers** print with at most :data:`SIG` (6) significant digits, trailing zeros dropped,
  thousands separators in the integer part: ``71,738.4``, ``2,607.59``, ``0.00133352``; in
  exponent form from 10^6 and below 10^-4: ``1.02212e6``, ``1.15478e-4`` (:func:`number`).
- **A non-whole number never prints as a whole one**: when 6 digits would round it to an
  integer, it gets the shortest digits that round-trip (``1.0000000000000002``, not ``1``).
- :func:`short` is for a rounded value inside a one-line message (a base to reach, a factor):
  2 significant digits from 10^5 on when exact, else 3 (``5e5``, ``1.49e5``); below, as
  :func:`number`.
- :func:`compact` is ``%g`` for formulas (``2*pi * 1e6^(92/128)``).

``None`` prints ``-``, NaN ``nan``, infinities ``inf`` / ``-inf``. Stdlib only, import-light.
"""

from __future__ import annotations

import math
from typing import Any

__all__ = ["SIG", "COMPACT_FROM", "count", "number", "short", "exponent", "compact", "plain_exponent"]

SIG = 6  # significant digits of a non-whole number (and of a huge whole one)
COMPACT_FROM = 10**12  # whole numbers from here on print in exponent form


def plain_exponent(text: str) -> str:
    """Drop the ``+`` and leading zeros of an exponent: ``1e+06`` -> ``1e6``, ``3.1e-05`` -> ``3.1e-5``."""
    text = text.replace("e+0", "e").replace("e+", "e")
    while "e-0" in text:
        text = text.replace("e-0", "e-")
    return text


def compact(x: float) -> str:
    """``%g`` without exponent padding, for formulas: ``1e6`` -> ``1e6``, ``500000`` -> ``500000``,
    ``1.5e5`` -> ``150000``, ``1e-5`` -> ``1e-5``, ``1e100`` -> ``1e100``."""
    return plain_exponent(f"{x:g}")


def _special(x: Any) -> str | None:
    if x is None:
        return "-"
    if isinstance(x, float) and not math.isfinite(x):
        return "nan" if x != x else ("inf" if x > 0 else "-inf")
    return None


def exponent(x: float | int, sig: int = SIG) -> str:
    """``sig`` significant digits in exponent form, trailing zeros dropped, exact for big ints:
    ``exponent(16000, 2)`` -> ``1.6e4`` (a value on a grid of ``sig`` significant figures)."""
    if isinstance(x, int):
        try:
            x = float(x)
        except OverflowError:  # beyond float range: round the exact integer in decimal
            import decimal

            text = f"{decimal.Context(prec=sig).create_decimal(x):e}"
            mant, _, exp = text.partition("e")
            if "." in mant:
                mant = mant.rstrip("0").rstrip(".")
            return f"{mant}e{int(exp)}"
    mant, _, exp = f"{x:.{sig - 1}e}".partition("e")
    if "." in mant:
        mant = mant.rstrip("0").rstrip(".")
    return f"{mant}e{int(exp)}"


def _group(text: str) -> str:
    """Thousands separators in the integer part of a plain decimal string."""
    sign = "-" if text.startswith("-") else ""
    body = text.lstrip("-")
    whole, dot, frac = body.partition(".")
    return f"{sign}{int(whole):,}{dot}{frac}"


def _reads_whole(text: str) -> bool:
    """``"1"``, ``"1e+06"`` read as whole numbers; ``"1.5"``, ``"1.02e+06"``, ``"1e-05"`` do not."""
    mant, e, exp = text.partition("e")
    return "." not in mant and (not e or int(exp) >= 0)


def count(n: Any) -> str:
    """A whole-number quantity: ``32768`` -> ``32,768``; from 10^12 on ``1e30``; a non-whole value
    falls through to :func:`number` (``4096.5`` -> ``4,096.5``)."""
    special = _special(n)
    if special is not None:
        return special
    if isinstance(n, bool):
        n = int(n)
    if isinstance(n, int):
        return f"{n:,}" if abs(n) < COMPACT_FROM else exponent(n)
    x = float(n)
    if not x.is_integer():
        return number(x)
    return f"{int(x):,}" if abs(x) < COMPACT_FROM else exponent(x)


def number(x: Any, sig: int = SIG) -> str:
    """Any real quantity, by the rules of this module's docstring."""
    special = _special(x)
    if special is not None:
        return special
    if isinstance(x, int) or float(x).is_integer():
        return count(x)
    x = float(x)
    for digits in range(sig, 18):  # 17 digits always round-trip a float64
        text = f"{x:.{digits}g}"
        if float(text) == x or not _reads_whole(text):  # else show the digits that differ
            break
    if "e" in text:
        mant, _, exp = text.partition("e")
        return f"{mant}e{int(exp)}"
    return _group(text)


def short(x: Any) -> str:
    """A rounded value in a one-line message: from 1e5 on 2 significant digits when that is exact
    (``500000`` -> ``5e5``), else 3 (``131072`` -> ``1.31e5``); below 1e5 as :func:`number`."""
    special = _special(x)
    if special is not None:
        return special
    if abs(x) >= 1e5:
        try:
            two = exponent(float(x), 2)
        except OverflowError:  # an integer beyond float range
            return exponent(x, 3)
        return two if float(two) == x else exponent(float(x), 3)
    return number(x)
