"""Float formats and closed-form counts of exactly representable integer positions.

The seed (004, Baichuan: "position-encoding collisions under mixed precision") shows that
RoPE and ALiBi implementations which hold positions in bfloat16 keep only about 10% of the
positions of an 8,192-token context exact; here the count is derived exactly.

A binary floating-point format with ``m`` explicit fraction bits has precision
``P = m + 1`` significant bits (IEEE 754-2019 section 3.3; the implicit leading 1 is *not*
counted in :attr:`FloatFormat.mantissa_bits`). A non-negative integer ``n`` is exactly
representable iff ``n <= max_finite`` and ``n`` has at most ``P`` significant bits, i.e.
``n < 2**P`` or ``n`` is a multiple of ``2**(bit_length(n) - P)``. In the binade
``[2**k, 2**(k+1))`` with ``k >= P - 1`` the representable integers are spaced
``2**(k - m)`` apart, so each full binade holds ``2**m`` of them. Summing over the
``O(log L)`` binades below ``L`` gives :func:`exact_positions` in closed form for any
``L`` (Python integers, exact; tested up to ``2**53``).

Rounding is round-to-nearest, ties-to-even (IEEE 754 roundTiesToEven), the default of
torch, numpy and ml_dtypes. Overflow: a value at or beyond ``max_finite + ulp/2`` (with the
tie going to the even neighbour) rounds to ``inf`` in formats with infinities; fp8 e4m3fn
has none and ml_dtypes turns such values into NaN (torch's ``.to(torch.float8_e4m3fn)``
saturates to 448 instead). Both are "non-finite" for the counts here: a position that
overflows is not exact, and all overflowed positions count as one distinct value.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .errors import UsageError
from .results import Result

__all__ = ["FloatFormat", "FORMATS", "PositionCounts", "get_format", "format_names",
           "exact_positions", "round_to_format"]


@dataclass(frozen=True)
class FloatFormat(Result):
    """A binary floating-point format (sign + exponent + fraction bits)."""

    name: str
    mantissa_bits: int  # explicit fraction bits m, EXCLUDING the implicit leading 1 (precision P = m + 1)
    exponent_bits: int
    bias: int
    max_finite: float  # largest finite value
    has_inf: bool  # False: overflow becomes NaN (fp8 e4m3fn)
    torch_name: str  # attribute of torch, e.g. "bfloat16"; "" when torch has no such dtype
    description: str = ""

    @property
    def precision(self) -> int:
        """Significant bits P = m + 1; every integer 0 <= n <= 2**P is exact."""
        return self.mantissa_bits + 1

    @property
    def max_exponent(self) -> int:
        """Unbiased exponent of the largest finite binade."""
        return int(self.max_finite).bit_length() - 1 if self.max_finite >= 1 else 0

    @property
    def min_normal_exponent(self) -> int:
        """Unbiased exponent of the smallest normal number, 1 - bias."""
        return 1 - self.bias

    @property
    def overflow_threshold(self) -> int:
        """The first integer that rounds to a non-finite value under round-to-nearest-even.

        ``T = max_finite + 2**(E_max - m - 1)`` is the midpoint between the largest finite
        value and the next (non-finite) step. At a tie RNE picks the even significand:
        when the largest finite significand is odd (all ones: fp16, bf16, e5m2) the tie
        overflows, so the threshold is ``T``; when it is even (e4m3fn: 448 = 1.110b * 2**8)
        the tie stays finite and the threshold is ``T + 1``.
        """
        mx = int(self.max_finite)
        step = 1 << (self.max_exponent - self.mantissa_bits)  # ulp at max (>= 2 for all formats here)
        half = step // 2
        significand_odd = (mx // step) % 2 == 1
        return mx + half if significand_odd else mx + half + 1


FORMATS: dict[str, FloatFormat] = {
    f.name: f for f in (
        FloatFormat("fp32", 23, 8, 127, float((2 - 2.0 ** -23) * 2.0 ** 127), True, "float32",
                    "IEEE 754 binary32"),
        FloatFormat("tf32", 10, 8, 127, float((2 - 2.0 ** -10) * 2.0 ** 127), True, "",
                    "NVIDIA TensorFloat-32: fp32 range, fp16 precision (tensor-core matmul inputs)"),
        FloatFormat("bf16", 7, 8, 127, float((2 - 2.0 ** -7) * 2.0 ** 127), True, "bfloat16",
                    "bfloat16, the exponent range of fp32"),
        FloatFormat("fp16", 10, 5, 15, 65504.0, True, "float16", "IEEE 754 binary16"),
        FloatFormat("fp8_e4m3", 3, 4, 7, 448.0, False, "float8_e4m3fn",
                    "OCP fp8 E4M3 (e4m3fn: no inf, overflow is NaN)"),
        FloatFormat("fp8_e5m2", 2, 5, 15, 57344.0, True, "float8_e5m2", "OCP fp8 E5M2"),
    )
}

_ALIASES = {
    "float32": "fp32", "float": "fp32", "single": "fp32", "f32": "fp32",
    "tensorfloat32": "tf32", "tensorfloat-32": "tf32",
    "bfloat16": "bf16", "bfloat": "bf16",
    "float16": "fp16", "half": "fp16", "f16": "fp16", "binary16": "fp16",
    "e4m3": "fp8_e4m3", "e4m3fn": "fp8_e4m3", "float8_e4m3fn": "fp8_e4m3", "float8_e4m3": "fp8_e4m3",
    "fp8e4m3": "fp8_e4m3", "fp8_e4m3fn": "fp8_e4m3",
    "e5m2": "fp8_e5m2", "float8_e5m2": "fp8_e5m2", "fp8e5m2": "fp8_e5m2",
}


def format_names() -> list[str]:
    """Canonical format names, widest first."""
    return list(FORMATS)


def get_format(name: str | FloatFormat | Any) -> FloatFormat:
    """The format called ``name``: ``bf16``, ``fp16``, ``fp32``, ``tf32``, ``fp8_e4m3``, ``fp8_e5m2``.

    Accepts aliases (``bfloat16``, ``float16``, ``half``, ``float32``, ``float``, ``e4m3``,
    ``e5m2``), a ``torch.`` / ``np.`` / ``numpy.`` prefix (``"torch.bfloat16"``), a torch or
    numpy dtype object, and a :class:`FloatFormat` (returned as is). ``ValueError`` otherwise.
    """
    if isinstance(name, FloatFormat):
        return name
    text = str(name).strip().lower()
    for prefix in ("torch.", "numpy.", "np.", "ml_dtypes.", "jnp."):
        if text.startswith(prefix):
            text = text[len(prefix):]
    text = text.replace("-", "_") if text.startswith("fp8") else text
    key = _ALIASES.get(text, text)
    if key not in FORMATS:
        from .errors import did_you_mean

        hint = did_you_mean(text, [*FORMATS, *_ALIASES])
        raise UsageError(f"unknown float format {str(name)!r}; choose one of {', '.join(FORMATS)} "
                         f"(aliases: bfloat16, float16, half, float32, e4m3, e5m2){hint}")
    return FORMATS[key]


# ---------------------------------------------------------------------------------------------
# exact rounding of integers (Python ints, no floats involved)

def _round_int(n: int, fmt: FloatFormat) -> int | None:
    """RNE of the non-negative integer ``n`` to ``fmt``; ``None`` when it is non-finite."""
    if n >= fmt.overflow_threshold:
        return None
    shift = n.bit_length() - fmt.precision
    if shift <= 0:
        return n
    q, r = divmod(n, 1 << shift)
    half = 1 << (shift - 1)
    if r > half or (r == half and q % 2 == 1):
        q += 1
    out = q << shift
    return min(out, int(fmt.max_finite)) if out > fmt.max_finite else out


def _count_exact_below(fmt: FloatFormat, n: int) -> int:
    """Number of exactly representable integers in ``[0, n)`` (all finite), in O(log n).

    ``[0, 2**P)``: all ``2**P`` integers; binade ``[2**k, 2**(k+1))``, ``k >= P``: the
    multiples of ``2**(k - m)``, i.e. ``ceil((min(2**(k+1), n) - 2**k) / 2**(k - m))`` of them.
    """
    n = min(n, int(fmt.max_finite) + 1)  # beyond max_finite nothing is exact
    if n <= 0:
        return 0
    p = fmt.precision
    total = min(n, 1 << p)
    k = p
    while (1 << k) < n:
        lo, hi = 1 << k, min(1 << (k + 1), n)
        step = 1 << (k - fmt.mantissa_bits)
        total += -(-(hi - lo) // step)
        k += 1
    return total


def _spacing_at(x: int, fmt: FloatFormat) -> float | None:
    """ulp of the binade containing the integer ``x >= 0`` (``None`` beyond the finite binades).

    ``x = 0`` lies in the subnormal range: its spacing is the smallest subnormal,
    ``2**(1 - bias - m)``.
    """
    if x == 0:
        return 2.0 ** (fmt.min_normal_exponent - fmt.mantissa_bits)
    e = x.bit_length() - 1
    if e > fmt.max_exponent:
        return None
    return 2.0 ** (max(e, fmt.min_normal_exponent) - fmt.mantissa_bits)


@dataclass(frozen=True)
class PositionCounts(Result):
    """How the integer positions ``0 .. length-1`` fare in a float format."""

    dtype: str  # canonical format name
    length: int  # L: positions 0 .. L-1
    exact: int  # positions p in [0, L) that the format represents exactly (finite)
    exact_fraction: float  # exact / L
    distinct: int  # distinct values the L positions round to (all non-finite results count as ONE value)
    first_inexact: int | None  # smallest inexact position, None if all are exact
    spacing_at_end: float | None  # gap between neighbouring values of the format at L-1; None beyond max finite
    overflow_from: int | None  # first position rounding to inf (NaN for e4m3fn); None if none below L
    overflow_count: int  # positions in [overflow_from, L)

    def summary(self) -> str:
        return (f"{self.exact:,} of {self.length:,} positions exact in {self.dtype} "
                f"({100 * self.exact_fraction:.1f}%)")


def exact_positions(fmt: str | FloatFormat, length: int | float) -> PositionCounts:
    """Counts of exact, distinct and overflowing integer positions ``0 .. length-1`` in ``fmt``.

    Closed form, O(log L), exact for any ``1 <= L`` (Python integers; the brief asks up to
    2**53). ``exact`` sums the representable integers binade by binade (module docstring);
    ``distinct`` = exact finite positions + 1 if ``L-1`` rounds *up* to a finite value above
    it (the one representable value above ``L-1`` that the positions can reach) + 1 if any
    position overflows (inf, or NaN in e4m3fn, counted as one value).
    ``first_inexact = min(2**P + 1, max_finite + 1)`` when below ``L``.

    Seed 004 (Baichuan): bf16 at L = 8192 keeps "about 10%" exact; exactly 896 = 256 + 5 * 128.
    """
    f = get_format(fmt)
    if isinstance(length, float) and length.is_integer():
        length = int(length)
    elif isinstance(length, bool) or not isinstance(length, int):
        raise UsageError(f"length must be a whole number >= 1, got {length!r}")
    if length < 1:
        raise UsageError(f"length must be >= 1, got {length}")
    exact = _count_exact_below(f, length)
    last = length - 1
    threshold = f.overflow_threshold
    overflow_from = threshold if threshold <= last else None
    overflow_count = max(0, length - threshold)
    rounded_last = _round_int(last, f)
    distinct = exact + (1 if rounded_last is not None and rounded_last > last else 0) + (1 if overflow_count else 0)
    first = min((1 << f.precision) + 1, int(f.max_finite) + 1)
    return PositionCounts(
        dtype=f.name, length=length, exact=exact, exact_fraction=exact / length, distinct=distinct,
        first_inexact=first if first <= last else None, spacing_at_end=_spacing_at(last, f),
        overflow_from=overflow_from, overflow_count=overflow_count,
    )


def round_to_format(values: Any, fmt: str | FloatFormat, *, via_float32: bool = False):
    """Round ``values`` (array-like, converted to float64) to ``fmt``; returns float64 values.

    One correctly rounded step, round-to-nearest-even, in float64 arithmetic: with
    ``e = max(floor(log2|x|), 1 - bias)`` the quantum is ``q = 2**(e - m)`` and the result
    ``q * rint(x / q)`` (``x / q`` and the product are exact power-of-two scalings;
    ``numpy.rint`` rounds half to even). Subnormals follow from clamping ``e``. Overflow
    (the rounded magnitude exceeds ``max_finite``; for integers this starts at
    :attr:`FloatFormat.overflow_threshold`) gives ``+-inf``, or NaN for e4m3fn (as ml_dtypes;
    torch saturates to 448 there). NaN stays NaN.

    ``via_float32=True`` first rounds to float32, as torch and ml_dtypes do when they cast
    float64 to bf16/fp16 (they go through float32: double rounding, which differs from one
    correct rounding only for rare values beyond 2**24 that lie just off a midpoint).
    """
    import numpy as np

    f = get_format(fmt)
    x = np.asarray(values, dtype=np.float64)
    if via_float32:
        x = x.astype(np.float32).astype(np.float64)
    if f.name == "fp32" and not via_float32:
        with np.errstate(over="ignore"):
            return x.astype(np.float32).astype(np.float64)  # numpy's cast is one RNE step
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        ax = np.abs(x)
        _, e2 = np.frexp(ax)  # ax = mant * 2**e2, mant in [0.5, 1): floor(log2 ax) = e2 - 1
        e = np.maximum(e2.astype(np.int64) - 1, f.min_normal_exponent)
        q = np.ldexp(1.0, (e - f.mantissa_bits).astype(np.int32))  # quantum per element, power of 2
        out = np.rint(x / q) * q
        # threshold as a float: exact (it has few significant bits)
        over = np.abs(out) > f.max_finite  # rounded past the largest finite value (ties already went to even)
        if over.any():
            out = np.where(over, np.copysign(np.inf, x) if f.has_inf else np.nan, out)
        out = np.where(np.isnan(x), np.nan, out)
        out = np.where(np.isinf(x), x if f.has_inf else np.nan, out)
        out = np.where(x == 0, x, out)  # keep the sign of zero
    return out
