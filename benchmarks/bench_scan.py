"""Benchmark: directory scans of many small files (issue 23: >= 1,000 files/s, memory flat in the count).

Generates N small files per size under a temporary directory (``--tmp``, default the system's),
then runs, each in a fresh process (``python -m ropelaw ...``):

- ``ropelaw lint DIR`` over N config.json files (text and ``--format json``; the configs of
  ``tests/hostile_cases.py``'s scan-scale class: a Llama-style config, max_position_embeddings
  4,096 / 8,192 / 12,288 in turn, so the length rules run and Men et al.'s bound is memoized);
- ``ropelaw audit code DIR`` over N small Python files (``import torch`` + an arange; every 50th
  file the RP101 fixture of tests/fixtures/static), text, ``--format github`` and ``--format json``.

For each run: exit code, CPU seconds (user + sys of the child), files/s of CPU, wall seconds and the
child's peak RSS (ru_maxrss), and the bytes written to stdout. The machine is shared, so CPU time
(not wall time) is the figure; peak RSS at two sizes shows whether memory grows with the count.
The generated files are deleted at the end. Run by hand (niced, it takes minutes at 50,000):

    nice -n 10 python benchmarks/bench_scan.py 5000 50000
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import platform
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
HEAD = {"hidden_size": 4096, "num_attention_heads": 32, "rope_theta": 10000, "max_position_embeddings": 4096}
BUGGY_PY = (ROOT / "tests" / "fixtures" / "static" / "rp101_positions_in_buffer_dtype.py").read_text()
PLAIN_PY = "import torch\nx = torch.arange(8)\n"

# a child's own CPU time and peak RSS: the wrapper's RUSAGE_CHILDREN holds only this child
_WRAP = ("import resource, subprocess, sys, time\n"
         "t = time.perf_counter()\n"
         "p = subprocess.run(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.PIPE)\n"
         "wall = time.perf_counter() - t\n"
         "r = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
         "print(p.returncode, r.ru_utime + r.ru_stime, wall, r.ru_maxrss, len(p.stdout), "
         "len(p.stderr.splitlines()))\n")


def generate(root: pathlib.Path, n: int, only: str | None = None) -> None:
    (root / "cfg").mkdir()
    (root / "src").mkdir()
    for i in range(n):
        if only != "audit":
            (root / "cfg" / f"c{i:05d}.json").write_text(
                json.dumps(dict(HEAD, max_position_embeddings=4096 * (1 + i % 3))))
        if only != "lint":
            (root / "src" / f"m{i:05d}.py").write_text(BUGGY_PY if i % 50 == 0 else PLAIN_PY)


def measure(argv: list[str]) -> dict:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-c", _WRAP, sys.executable, "-m", "ropelaw", *argv],
                         capture_output=True, text=True, env=env, check=True).stdout.split()
    code, cpu, wall, rss_kb, nbytes, err_lines = out
    return {"exit": int(code), "cpu": float(cpu), "wall": float(wall), "rss_mb": int(rss_kb) / 1024,
            "stdout_bytes": int(nbytes), "stderr_lines": int(err_lines)}


RUNS = [
    ("lint", "text", ["lint", "{cfg}"]),
    ("lint", "json", ["lint", "{cfg}", "--format", "json"]),
    ("audit code", "text", ["audit", "code", "{src}"]),
    ("audit code", "github", ["audit", "code", "{src}", "--format", "github"]),
    ("audit code", "json", ["audit", "code", "{src}", "--format", "json"]),
]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("sizes", nargs="*", type=int, default=[5000, 50000])
    ap.add_argument("--tmp", default=None, help="where to generate the files (deleted afterwards)")
    ap.add_argument("--only", choices=("lint", "audit"), default=None, help="run only one of the two commands")
    args = ap.parse_args()
    print(f"machine: {platform.machine()} {platform.processor() or ''} {os.cpu_count()} cpus, "
          f"Python {platform.python_version()}, {platform.system()} {platform.release()}; "
          f"load average {os.getloadavg()[0]:.1f}")
    for n in args.sizes:
        root = pathlib.Path(tempfile.mkdtemp(prefix="ropelaw-bench-scan-", dir=args.tmp))
        try:
            t0 = time.perf_counter()
            generate(root, n, args.only)
            print(f"{n:,} files{' of each kind' if not args.only else ''} generated in {time.perf_counter() - t0:.1f} "
                  f"s under {root}")
            for what, fmt, argv in RUNS:
                if args.only and not what.startswith(args.only):
                    continue
                r = measure([a.format(cfg=root / "cfg", src=root / "src") for a in argv])
                print(f"  {what:10s} {fmt:6s} n={n:>6,}: exit {r['exit']}, {r['cpu']:6.1f} s CPU "
                      f"({n / r['cpu']:5.0f} files/s), wall {r['wall']:6.1f} s, peak RSS {r['rss_mb']:6.0f} MB, "
                      f"stdout {r['stdout_bytes'] / 1e6:6.1f} MB, {r['stderr_lines']} stderr lines; "
                      f"load {os.getloadavg()[0]:.1f}", flush=True)
        finally:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
