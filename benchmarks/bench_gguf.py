"""Reading a multi-GB GGUF's RoPE: time and memory independent of the file's size (goal: well under 1 s).

Run by hand: `python benchmarks/bench_gguf.py [--runs 7] [--sizes 0.01,4,40]`. Writes, in a temporary
directory, GGUFs shaped like a Q4_K Llama 3.1 8B (its metadata, a 128,256-token vocabulary and 280,147
merges, 291 tensor infos, `rope_freqs.weight` first) whose weights take SIZE GB: the data past the
RoPE tensor is never written (a sparse file; `ls` shows SIZE GB, the disk holds a few MB). For each it
prints the median wall time of `read_gguf` in this process, and the wall time and peak RSS of a fresh
`ropelaw lint FILE` and `ropelaw audit checkpoint FILE` (``os.wait4``'s ru_maxrss).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_startup import machine  # noqa: E402


def write_sparse_gguf(path: str, gigabytes: float) -> int:
    """A Llama-3.1-8B-shaped GGUF whose weights (never written) take ``gigabytes``; returns its size."""
    import gguf

    from ropelaw.lint.rope_factors import llama3_factors

    w = gguf.GGUFWriter(path, "llama")
    w.add_name("bench Llama 3.1 8B (sparse)")
    w.add_context_length(131072)
    w.add_embedding_length(4096)
    w.add_block_count(32)
    w.add_feed_forward_length(14336)
    w.add_head_count(32)
    w.add_head_count_kv(8)
    w.add_rope_freq_base(500000.0)
    w.add_rope_dimension_count(128)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_tokenizer_model("gpt2")
    w.add_token_list([f"tok{i}" for i in range(128256)])
    w.add_token_types([1] * 128256)
    w.add_token_merges([f"m{i} x{i}" for i in range(280147)])
    rope = llama3_factors(500000.0, 128, 8.0, 1.0, 4.0, 8192).astype(np.float32)
    w.add_tensor_info("rope_freqs.weight", rope.shape, rope.dtype, rope.nbytes)
    n_big = 290
    per = int(gigabytes * 1e9 / n_big) // 144 * 144 or 144  # whole Q4_K blocks (256 values in 144 bytes)
    for i in range(n_big):
        w.add_tensor_info(f"blk.{i // 9}.w{i % 9}.weight", (per,), np.dtype(np.uint8), per,
                          raw_dtype=gguf.GGMLQuantizationType.Q4_K)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_ti_data_to_file()
    w.close()
    with open(path, "r+b") as fh:
        fh.seek(0, 2)
        start = -(-fh.tell() // 32) * 32
        fh.seek(start)
        fh.write(rope.tobytes())
        size = start + 512 + n_big * (-(-per // 32) * 32)  # 256 bytes of factors, padded to 32
        fh.truncate(size)
    return size


def run(cmd: list[str]) -> tuple[float, int]:
    """(wall seconds, peak RSS in MB) of a fresh process."""
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status) not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)} exited {os.waitstatus_to_exitcode(status)}")
    return wall, usage.ru_maxrss // 1024


def main() -> None:
    from ropelaw.lint.gguf import read_gguf

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--sizes", default="0.01,4,40", help="GB of (unwritten) weights, comma-separated")
    args = parser.parse_args()
    print(f"machine: {machine()}; load average {os.getloadavg()[0]:.1f}")
    print(f"{'file size':>12} {'on disk':>9} {'read_gguf':>10} {'lint (wall, RSS)':>18} {'audit (wall, RSS)':>19}")
    with tempfile.TemporaryDirectory() as tmp:
        for gb in (float(x) for x in args.sizes.split(",")):
            path = os.path.join(tmp, f"bench-{gb:g}GB.gguf")
            size = write_sparse_gguf(path, gb)
            disk = os.stat(path).st_blocks * 512
            times = []
            for _ in range(args.runs):
                t0 = time.perf_counter()
                read_gguf(path)
                times.append(time.perf_counter() - t0)
            lint = [run([sys.executable, "-m", "ropelaw", "lint", path]) for _ in range(args.runs)]
            audit = [run([sys.executable, "-m", "ropelaw", "audit", "checkpoint", path]) for _ in range(3)]
            print(f"{size / 1e9:9.2f} GB {disk / 1e6:6.1f} MB {statistics.median(times) * 1e3:7.1f} ms "
                  f"{statistics.median(t for t, _ in lint):7.2f} s {max(r for _, r in lint):5d} MB "
                  f"{statistics.median(t for t, _ in audit):7.2f} s {max(r for _, r in audit):5d} MB")


if __name__ == "__main__":
    main()
