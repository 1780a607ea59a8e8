"""Men et al. (arXiv 2405.14591) base lower bound for long contexts, in seconds.

Run by hand: `python benchmarks/bench_basebound.py`. Prints the machine, then for d = 128
the grid-convention lower bound (and the bisection one) at 128k, 1M (1,024,000 and 2^20)
with wall time.
"""

from __future__ import annotations

import os
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from bench_startup import machine  # noqa: E402

from ropelaw.basebound import base_lower_bound, default_frequencies, supported_length  # noqa: E402


def timed(fn, *args, **kw):
    t0 = time.perf_counter()
    out = fn(*args, **kw)
    return out, time.perf_counter() - t0


def main() -> None:
    print(f"machine: {machine()}")
    for length in (128_000, 1_024_000, 1_048_576):
        for convention in ("grid", "bisection"):
            base, sec = timed(base_lower_bound, 128, length, convention=convention)
            print(f"d=128 length {length:>9,}  {convention:<9}  base {base:.4g}  {sec:6.2f} s")
    theta = default_frequencies(128, 5e8)
    n, sec = timed(supported_length, theta, 1_048_576)
    print(f"supported_length(base 5e8, limit 2^20) = {n:,}  {sec:.2f} s")


if __name__ == "__main__":
    main()
