"""Benchmark: `ropelaw audit code` over the installed transformers models tree vs bare ast.parse.

Goal (issue 3): the static scan costs at most 2x a bare `ast.parse` of the same files.
Both sides start from the same bytes in memory (disk reads excluded): the baseline decodes
and parses, the scan decodes, parses, walks and reports. Best of --repeat runs.

    python benchmarks/bench_static.py [--repeat 3] [--root PATH]
"""

from __future__ import annotations

import argparse
import ast
import os
import platform
import sys
import time
from pathlib import Path


def machine() -> str:
    from bench_startup import cpu_model

    cpu = cpu_model()
    return (f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}, {platform.system()} "
            f"{platform.release()}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--root", default=None, help="directory to scan (default: transformers/models)")
    args = ap.parse_args()

    from ropelaw.audit.static import python_files, scan_source

    if args.root is None:
        import transformers

        root = Path(transformers.__file__).parent / "models"
        label = f"transformers {transformers.__version__} models/"
    else:
        root, label = Path(args.root), args.root
    files = python_files([root])
    blobs = [(str(f), f.read_bytes()) for f in files]
    size = sum(len(b) for _, b in blobs)

    def baseline() -> None:
        for _, b in blobs:
            ast.parse(b.decode("utf-8"))

    counts: dict[str, int] = {}

    def scan() -> None:
        counts.clear()
        for path, b in blobs:
            for f in scan_source(b, path):
                counts[f.code] = counts.get(f.code, 0) + 1

    def best(fn) -> float:
        times = []
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t0)
        return min(times)

    t_parse = best(baseline)
    t_scan = best(scan)
    print(f"machine   {machine()}")
    print(f"corpus    {label}: {len(files):,} .py files, {size / 1e6:.1f} MB")
    print(f"ast.parse {t_parse:8.3f} s  (best of {args.repeat})")
    print(f"scan      {t_scan:8.3f} s  (best of {args.repeat})")
    print(f"ratio     {t_scan / t_parse:8.2f}x  (goal <= 2x)")
    print("findings  " + ", ".join(f"{c} {n}" for c, n in sorted(counts.items())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
