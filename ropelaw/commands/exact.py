"""``ropelaw exact --dtype bf16 --length 8192``: how many integer positions a float format keeps."""

from __future__ import annotations

import argparse

from ..errors import UsageError

HELP = "count the positions 0..L-1 that a float format (bf16, fp16, fp8...) represents exactly"
DESCRIPTION = """\
Count the integer positions 0 .. L-1 that a float format represents exactly, how many
distinct values they collapse to, where the first collision and the first overflow are.
Closed form (O(log L)); seed 004 (Baichuan): bf16 keeps 896 of 8,192 positions exact.

example: ropelaw exact --dtype bf16 --length 8192
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from ._common import add_format, length

    parser.add_argument("--dtype", required=True, metavar="DTYPE",
                        help="bf16, fp16, fp32, tf32, fp8_e4m3, fp8_e5m2 (aliases: bfloat16, half, torch.float16, ...)")
    parser.add_argument("--length", required=True, type=length, metavar="L",
                        help="context length L: positions 0 .. L-1 (4096, 8k, 1M)")
    add_format(parser)


def run(args: argparse.Namespace) -> int:
    from ..formats import exact_positions, get_format
    from ..numfmt import count, number
    from ._common import emit_json

    fmt = get_format(args.dtype)
    if args.length > 2 ** 53:
        raise UsageError(f"--length {args.length:,} is beyond 2**53, where positions stop being integers in float64")
    r = exact_positions(fmt, args.length)
    if args.format == "json":
        emit_json(r.to_dict())
        return 0
    L = r.length
    last = L - 1
    lines = [
        f"Integer positions 0 .. {count(last)} in {fmt.name} ({fmt.description}; "
        f"{fmt.precision} significant bits, round-to-nearest-even)",
        "",
        f"  exact             {count(r.exact)} of {count(L)}  ({100 * r.exact_fraction:.2f}%)",
        f"  distinct values   {count(r.distinct)}  ({100 * r.distinct / L:.2f}%)"
        + ("  (all non-finite results count as one value)" if r.overflow_count else ""),
        "  first inexact     " + (f"{count(r.first_inexact)}  (every integer up to 2^{fmt.precision} = "
                                   f"{count(2 ** fmt.precision)} is exact)" if r.first_inexact is not None
                                   else "none: every position is exact"),
        f"  spacing at {count(last):<7}" + (f"{number(r.spacing_at_end)}  (neighbouring {fmt.name} values there are "
                                              f"{r.spacing_at_end:g} apart)" if r.spacing_at_end is not None
                                              else "-  (beyond the largest finite value)"),
    ]
    if r.overflow_from is not None:
        what = "inf" if fmt.has_inf else "NaN (ml_dtypes; torch saturates to the max)"
        lines.append(f"  overflow          from {count(r.overflow_from)} on every position becomes {what}: "
                     f"{count(r.overflow_count)} positions")
    else:
        lines.append(f"  overflow          none below {count(L)} (first at {count(fmt.overflow_threshold)})"
                     if fmt.overflow_threshold < 2 ** 64 else f"  overflow          none below {count(L)}")
    print("\n".join(lines))
    return 0
