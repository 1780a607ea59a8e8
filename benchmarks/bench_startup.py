"""Cold start of `ropelaw bound` as a ratio to a bare `python -c pass` (goal: <= 4x).

Run by hand: `python benchmarks/bench_startup.py [--runs 21]`. Prints the machine, the median
wall time of each command over N fresh interpreters, and the ratio.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import time


def cpu_model() -> str:
    """The CPU's model name from /proc/cpuinfo (the other benchmarks import this)."""
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown CPU"


def machine() -> str:
    return (f"{cpu_model()}, nproc {os.cpu_count()}, {platform.system()} {platform.release()}, Python "
            f"{platform.python_version()}")


def median_time(cmd: list[str], runs: int) -> float:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=21)
    args = parser.parse_args()
    bare = [sys.executable, "-c", "pass"]
    bound = [sys.executable, "-m", "ropelaw", "bound", "--d", "128", "--train", "4096", "--base", "1e6"]
    script = [sys.executable, "-c", "import sys, ropelaw.cli; sys.exit(ropelaw.cli.main("
              "['bound','--d','128','--train','4096','--base','1e6']))"]
    median_time(bound, 2)  # warm the file cache (bytecode), not the interpreter
    t_bare = median_time(bare, args.runs)
    t_bound = median_time(bound, args.runs)
    t_script = median_time(script, args.runs)
    print(f"machine: {machine()}")
    print(f"python -c pass                 {t_bare * 1e3:7.1f} ms (median of {args.runs})")
    print(f"python -m ropelaw bound ...    {t_bound * 1e3:7.1f} ms  ratio {t_bound / t_bare:.2f}x")
    print(f"ropelaw.cli.main(['bound',..]) {t_script * 1e3:7.1f} ms  ratio {t_script / t_bare:.2f}x  (goal <= 4x)")


if __name__ == "__main__":
    main()
