"""Benchmark: `ropelaw lint` on the real corpus and on N generated configs.

1. The real corpus (``$ROPELAW_CORPUS`` or ``<repo>/../shared/corpus``: published HF and
   framework configs, JSON, YAML, TOML and launch scripts): the CLI end to end, one fresh
   process per run (Men et al.'s bound is memoized within a run only), 5 runs, the best
   ("warm": the files in the page cache, Python's bytecode compiled) and the median, in
   configs/second of wall time and of CPU time (user + sys: the machine is shared, and CPU time
   is the figure that does not depend on its load); then the same lint run three times in one
   process (the later runs warm: imports done, lower bounds memoized).
2. N generated config.json files (default 1000): the 20 JSON configs of tests/configs with
   max_position_embeddings and the base varied (50 variants each), timed in-process
   (load + rules + json render) and as a CLI run (`--format json`).
Prints the machine, the seconds and configs/second. Run by hand:

    python benchmarks/bench_lint.py [N]
"""

from __future__ import annotations

import json
import os
import pathlib
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "configs"
REAL = pathlib.Path(os.environ.get("ROPELAW_CORPUS") or ROOT.parent / "shared" / "corpus")


def real_corpus(runs: int = 5) -> None:
    """`ropelaw lint REAL --format json` in fresh processes: best and median configs/second."""
    if not REAL.is_dir():
        print(f"real corpus: {REAL} not found (set ROPELAW_CORPUS); skipped")
        return
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    walls, cpus, configs = [], [], 0
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "ropelaw", "lint", str(REAL), "--format", "json"],
                              capture_output=True, text=True, env=env)
        walls.append(time.perf_counter() - t0)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
        configs = json.loads(proc.stdout)["summary"]["configs"]
    best = min(range(runs), key=walls.__getitem__)
    print(f"real corpus {REAL}: exit {proc.returncode}, {configs} configs; best of {runs} fresh processes "
          f"{walls[best]:.2f} s ({configs / walls[best]:.0f} configs/s, {cpus[best]:.2f} s CPU), "
          f"median {statistics.median(walls):.2f} s ({configs / statistics.median(walls):.0f} configs/s); "
          f"load average {os.getloadavg()[0]:.1f}")
    # the machine is shared: CPU time (user + sys of the child) is the figure that does not depend on the load
    print(f"  CPU: least {min(cpus):.2f} s ({configs / min(cpus):.0f} configs/s of CPU), median "
          f"{statistics.median(cpus):.2f} s ({configs / statistics.median(cpus):.0f} configs/s of CPU)")


def real_corpus_in_process(runs: int = 3) -> None:
    """`ropelaw lint REAL --format json` run again and again in one process: the first run pays the imports
    and Men et al.'s lower bounds (memoized for the process), the later ones are warm."""
    import contextlib
    import io

    if not REAL.is_dir():
        return
    sys.path.insert(0, str(ROOT))
    from ropelaw.cli import main as cli_main

    cpus = []
    for _ in range(runs):
        out = io.StringIO()
        c0 = time.process_time()
        with contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):
            cli_main(["lint", str(REAL), "--format", "json"])
        cpus.append(time.process_time() - c0)
    configs = json.loads(out.getvalue())["summary"]["configs"]
    print(f"real corpus in one process: first run {cpus[0]:.2f} s CPU ({configs / cpus[0]:.0f} configs/s), later runs "
          + ", ".join(f"{c:.2f} s ({configs / c:.0f}/s)" for c in cpus[1:])
          + f"; load average {os.getloadavg()[0]:.1f}")


def generate(target: pathlib.Path, n: int) -> int:
    seeds = [json.loads(p.read_text()) for p in sorted(CORPUS.glob("*.json"))]
    lengths = [2048, 4096, 8192, 16384, 32768]
    bases = [1e4, 5e4, 5e5, 1e6, 5e6, 1e7, 2.5e5, 1e5, 2e6, 3e4]
    for i in range(n):
        cfg = json.loads(json.dumps(seeds[i % len(seeds)]))
        v = i // len(seeds)
        sec = cfg.get("text_config", cfg)
        if "max_position_embeddings" in sec and not sec.get("rope_scaling"):
            sec["max_position_embeddings"] = lengths[v % len(lengths)]
        if "rope_theta" in sec:
            sec["rope_theta"] = bases[(v // len(lengths)) % len(bases)]
        d = target / f"m{i:04d}"
        d.mkdir()
        (d / "config.json").write_text(json.dumps(cfg, indent=2))
    return n


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    print(f"machine: {platform.machine()} {platform.processor() or ''} {os.cpu_count()} cpus, "
          f"Python {platform.python_version()}, {platform.system()} {platform.release()}")
    real_corpus()
    real_corpus_in_process()
    with tempfile.TemporaryDirectory() as tmp:
        root = pathlib.Path(tmp)
        generate(root, n)
        sys.path.insert(0, str(ROOT))
        from ropelaw.commands.lint import lint_paths
        from ropelaw.report import render

        t0 = time.perf_counter()
        results, bad, skipped = lint_paths([str(root)])
        findings = [f for r in results for f in r.findings]
        render(findings, "json", extra={"configs": [r.setup() for r in results]})
        t1 = time.perf_counter()
        print(f"in-process: {len(results)} configs, {len(findings)} findings, {len(bad)} bad, "
              f"{len(skipped)} skipped in {t1 - t0:.2f} s ({len(results) / (t1 - t0):.0f} configs/s)")
        t0 = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "ropelaw", "lint", str(root), "--format", "json"],
                              capture_output=True, text=True)
        t1 = time.perf_counter()
        doc = json.loads(proc.stdout)
        print(f"cli (cold process, --format json): exit {proc.returncode}, {doc['summary']['configs']} configs in "
              f"{t1 - t0:.2f} s ({doc['summary']['configs'] / (t1 - t0):.0f} configs/s)")
        t0 = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "ropelaw", "lint", str(CORPUS)], capture_output=True, text=True)
        t1 = time.perf_counter()
        print(f"cli on the 22-file corpus: exit {proc.returncode} in {t1 - t0:.2f} s")


if __name__ == "__main__":
    main()
