"""Benchmark: a 1M-position runtime audit as a ratio to the module's own forward (goal <= 3x).

Run by hand: ``python benchmarks/bench_runtime.py [--length 1M] [--dtype bf16]``.
Each measurement runs in a fresh subprocess so its peak resident memory (getrusage maxrss)
is its own; numpy's share of the audit's allocations is also traced with tracemalloc (torch
allocates outside Python's allocator, so maxrss is the figure to read). Prints the machine.

Modules: the test fixtures (HF legacy and current conventions, a callable rotating q) and
transformers' LlamaRotaryEmbedding built from its default config (no weights).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
FIX = os.path.join(ROOT, "tests", "fixtures", "runtime", "rotary.py")

CHILD = r'''
import json, resource, sys, time, tracemalloc, importlib.util
import torch
kind, which, L, dtype, scen = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
torch.set_num_threads(int(sys.argv[6]))
def factory():
    if which == "llama":
        from ropelaw.audit.runtime import hf_rotary_factory
        return hf_rotary_factory("llama")[0]
    spec = importlib.util.spec_from_file_location("fx", sys.argv[7])
    fx = importlib.util.module_from_spec(spec); spec.loader.exec_module(fx)
    return getattr(fx, which)
make = factory()
dt = getattr(torch, {"bf16": "bfloat16", "fp16": "float16", "fp32": "float32"}[dtype])
out = {}
if kind == "forward":
    m = make().to(dt) if hasattr(make(), "to") else make()
    with torch.no_grad():
        t = time.perf_counter()
        if which in ("legacy_clean", "legacy_buggy"):
            c, s = m(torch.zeros(1, 1, 1, 128, dtype=dt), seq_len=L)
        elif which in ("rotate_half_clean", "interleaved_clean"):
            q = torch.zeros(1, 1, L, 128, dtype=dt); q[..., :64] = 1
            c = m(q)
        else:
            c, s = m(torch.zeros(1, 1, 1, 128, dtype=dt), torch.arange(L)[None])
        out["seconds"] = time.perf_counter() - t
else:
    from ropelaw.audit.runtime import audit_module
    tracemalloc.start()
    t = time.perf_counter()
    a = audit_module(make, dtype, L, [scen] if scen != "all" else ["cast", "default", "autocast-cuda", "autocast-cpu"])
    out["seconds"] = time.perf_counter() - t
    out["traced_peak_mb"] = tracemalloc.get_traced_memory()[1] / 2**20
    out["paths"] = [s.path for s in a.scenarios]
    out["exact"] = [s.exact_fraction for s in a.scenarios]
out["maxrss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps(out))
'''


def run(kind, which, length, dtype, scen, threads):
    res = subprocess.run([sys.executable, "-c", CHILD, kind, which, str(length), dtype, scen, str(threads), FIX],
                         capture_output=True, text=True, cwd=ROOT)
    if res.returncode:
        raise SystemExit(res.stderr)
    return json.loads(res.stdout.strip().splitlines()[-1])


def main() -> None:
    sys.path.insert(0, ROOT)
    from ropelaw.commands._common import length

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--length", type=length, default=2**20)
    ap.add_argument("--dtype", default="bf16")
    ap.add_argument("--modules", default="current_clean,legacy_clean,rotate_half_clean,llama")
    ap.add_argument("--scenario", default="cast", help="scenario timed against one forward (or 'all')")
    args = ap.parse_args()
    import torch

    threads = torch.get_num_threads()
    print(f"machine: {platform.machine()} {platform.processor() or ''} {os.cpu_count()} cpus, "
          f"python {platform.python_version()}, torch {torch.__version__} ({threads} threads), {platform.system()}")
    print(f"length {args.length:,}  dtype {args.dtype}  scenario {args.scenario}")
    print(f"{'module':<20} {'forward s':>10} {'audit s':>9} {'ratio':>7} {'fwd RSS MB':>11} {'audit RSS MB':>13} "
          f"{'numpy peak MB':>14}  path")
    for which in args.modules.split(","):
        fwd = run("forward", which, args.length, args.dtype, args.scenario, threads)
        aud = run("audit", which, args.length, args.dtype, args.scenario, threads)
        ratio = aud["seconds"] / fwd["seconds"]
        print(f"{which:<20} {fwd['seconds']:>10.2f} {aud['seconds']:>9.2f} {ratio:>6.2f}x {fwd['maxrss_mb']:>11.0f} "
              f"{aud['maxrss_mb']:>13.0f} {aud['traced_peak_mb']:>14.0f}  {', '.join(aud['paths'])}")


if __name__ == "__main__":
    main()
