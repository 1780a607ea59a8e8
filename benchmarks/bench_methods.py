"""Benchmark ReRoPE / Leaky ReRoPE prefill and decode against fused causal attention.

Run by hand:  python benchmarks/bench_methods.py [--quick] [--long] [--json out.json]

Setting (issue 5): float32, batch 1, 8 heads, head dim 128, torch.set_num_threads(2).
- prefill time ratio  rerope_attention / scaled_dot_product_attention(is_causal=True)
  at L = 2048, 4096, 8192 (goal <= 2x), and the seed's two-matrix reference at 2048/4096;
- peak memory: VmHWM of a fresh subprocess per measurement, minus the same process's
  VmHWM after creating the inputs (torch allocations are invisible to tracemalloc);
- --long: one ReRoPE prefill at L = 65536 (the two-matrix reference would need
  2 * 8 * 65536^2 * 4 bytes = 275 GB for its two score matrices alone);
- decode step time ratio  (Leaky) ReRoPE step / (RoPE on the new token + SDPA against a cache
  of rotated keys) at cache lengths 2048 .. 32768 (goal <= 1.5x), with 2 threads and, as
  a supplement, 1 thread (a decode step is a dozen small ops; with 2 threads on a machine
  shared with other jobs each parallel op can wait a scheduler slice for its second thread).
Times are medians over repeats, with the contenders interleaved so that load from other
processes (the 2 cores are shared) hits them alike. The machine is printed first.
--decode-only: just the decode steps; --generate: also per-token time of model.generate() on a
random 2-layer Llama (8 heads x 128) patched vs unpatched.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import resource
import subprocess
import sys
import time

B, H, D = 1, 8, 128
THREADS = 2


def machine() -> dict:
    from bench_startup import cpu_model

    cpu = cpu_model()
    import torch

    return {"cpu": cpu, "nproc": os.cpu_count(), "torch": torch.__version__, "threads": THREADS,
            "python": platform.python_version(), "loadavg_1min": os.getloadavg()[0]}


def _inputs(L: int, seed: int = 0):
    import torch

    g = torch.Generator().manual_seed(seed)
    return [torch.randn(B, H, L, D, generator=g) for _ in range(3)]  # (B, H, L, D) float32


def seed_reference(q, k, v, w, leaky_k=None):
    """The seed's two-matrix implementation (seed 000): a1, a2 full L x L, where, softmax."""
    import torch

    from ropelaw.methods import apply_rope

    L = q.shape[2]
    pos = torch.arange(L)
    a1 = apply_rope(q, pos) @ apply_rope(k, pos).transpose(-1, -2)
    if leaky_k is None:
        a2 = apply_rope(q, float(w)) @ k.transpose(-1, -2)
    else:
        a2 = apply_rope(q, (pos.float() - w) / leaky_k + w) @ apply_rope(k, pos.float() / leaky_k).transpose(-1, -2)
    i, j = pos[:, None], pos[None, :]
    a = torch.where(i - j < w, a1, a2) / math.sqrt(q.shape[-1])
    a = a.masked_fill(j > i, -math.inf)
    return torch.softmax(a, dim=-1) @ v


def _prefill_fn(name: str, q, k, v, w: int):
    import torch.nn.functional as F

    from ropelaw.methods import rerope_attention

    if name == "sdpa":
        return lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True)
    if name == "rerope":
        return lambda: rerope_attention(q, k, v, w)
    if name == "leaky":
        return lambda: rerope_attention(q, k, v, w, 16.0)
    if name == "reference":
        return lambda: seed_reference(q, k, v, w)
    raise ValueError(name)


def hwm_mb() -> float:
    """Peak resident memory of this process image (VmHWM, reset at exec, unlike ru_maxrss)."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def worker(args) -> None:
    """One measurement in this fresh process: prints {"seconds", "peak_mb", "inputs_mb"}."""
    import torch

    torch.set_num_threads(THREADS)
    q, k, v = _inputs(args.L)
    fn = _prefill_fn(args.name, q, k, v, args.window)
    import ropelaw.methods  # noqa: F401  (imports before the baseline)

    base = hwm_mb()
    with torch.no_grad():
        t0 = time.perf_counter()
        fn()
        seconds = time.perf_counter() - t0
    peak = hwm_mb()
    print(json.dumps({"seconds": seconds, "peak_mb": peak, "extra_mb": peak - base}))


def run_worker(name: str, L: int, w: int) -> dict:
    cmd = [sys.executable, __file__, "--worker", name, "--L", str(L), "--window", str(w)]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode:
        return {"error": out.stderr.strip().splitlines()[-1] if out.stderr.strip() else f"exit {out.returncode}"}
    return json.loads(out.stdout)


CPU_TIMES: dict = {}  # name -> median process CPU time of the last ``interleaved`` call


def interleaved(fns: dict, repeats: int) -> dict:
    """Median wall time of each callable, run in turn ``repeats`` times after one warm-up.

    The contenders alternate, so load from other processes on the shared machine hits them
    alike, and the median (not the minimum) is reported. Also records the median process CPU
    time (all threads) in CPU_TIMES: wall time of many short parallel ops is inflated by
    descheduling, CPU time is not (it does include OpenMP spin-waiting).
    """
    import statistics

    import torch

    walls = {name: [] for name in fns}
    cpus = {name: [] for name in fns}
    with torch.no_grad():
        for fn in fns.values():
            fn()
        for _ in range(repeats):
            for name, fn in fns.items():
                t0, c0 = time.perf_counter(), time.process_time()
                fn()
                walls[name].append(time.perf_counter() - t0)
                cpus[name].append(time.process_time() - c0)
    CPU_TIMES.clear()
    CPU_TIMES.update({name: statistics.median(x) for name, x in cpus.items()})
    return {name: statistics.median(x) for name, x in walls.items()}


def bench_prefill(lengths, w: int, repeats: int, with_reference: int) -> list[dict]:
    rows = []
    for L in lengths:
        q, k, v = _inputs(L)
        names = ["sdpa", "rerope", "leaky"] + (["reference"] if with_reference >= L else [])
        t = interleaved({n: _prefill_fn(n, q, k, v, w) for n in names}, repeats if L < 8192 else max(2, repeats // 2))
        row = {"L": L, "window": w, "sdpa_ms": 1e3 * t["sdpa"], "rerope_ms": 1e3 * t["rerope"],
               "rerope_ratio": t["rerope"] / t["sdpa"], "leaky_k16_ratio": t["leaky"] / t["sdpa"],
               "reference_ratio": t["reference"] / t["sdpa"] if "reference" in t else None,
               "rerope_cpu_ratio": CPU_TIMES["rerope"] / CPU_TIMES["sdpa"],
               "reference_cpu_ratio": CPU_TIMES["reference"] / CPU_TIMES["sdpa"] if "reference" in t else None,
               "loadavg_1min": os.getloadavg()[0]}
        rows.append(row)
        print(f"prefill L={L:6d} w={w}: sdpa {row['sdpa_ms']:8.1f} ms  rerope {row['rerope_ms']:8.1f} ms "
              f"x{row['rerope_ratio']:.2f}  leaky(k=16) x{row['leaky_k16_ratio']:.2f}  reference "
              + (f"x{row['reference_ratio']:.2f}" if row["reference_ratio"] else "-")
              + f"  | cpu-time ratio rerope x{row['rerope_cpu_ratio']:.2f}"
              + (f" reference x{row['reference_cpu_ratio']:.2f}" if row["reference_cpu_ratio"] else "")
              + f"  (load {row['loadavg_1min']:.1f})", flush=True)
    return rows


def bench_backward(L: int, w: int, repeats: int) -> dict:
    import torch
    import torch.nn.functional as F

    from ropelaw.methods import rerope_attention

    q, k, v = (x.requires_grad_() for x in _inputs(L))
    g = torch.randn(B, H, L, D)

    def run(f):
        def go():
            with torch.enable_grad():
                out = f()
                torch.autograd.grad(out, (q, k, v), g)
        return go

    best = {"sdpa": math.inf, "rerope": math.inf}
    fns = {"sdpa": run(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True)),
           "rerope": run(lambda: rerope_attention(q, k, v, w))}
    for fn in fns.values():
        fn()
    for _ in range(repeats):
        for name, fn in fns.items():
            t0 = time.perf_counter()
            fn()
            best[name] = min(best[name], time.perf_counter() - t0)
    row = {"L": L, "window": w, "sdpa_fwd_bwd_ms": 1e3 * best["sdpa"], "rerope_fwd_bwd_ms": 1e3 * best["rerope"],
           "ratio": best["rerope"] / best["sdpa"]}
    print(f"forward+backward L={L} w={w}: sdpa {row['sdpa_fwd_bwd_ms']:.1f} ms  "
          f"rerope {row['rerope_fwd_bwd_ms']:.1f} ms  x{row['ratio']:.2f}", flush=True)
    return row


def bench_memory(lengths, w: int, with_reference: int) -> list[dict]:
    rows = []
    for L in lengths:
        names = ["sdpa", "rerope"] + (["reference"] if with_reference >= L else [])
        row = {"L": L}
        for n in names:
            r = run_worker(n, L, w)
            row[f"{n}_extra_mb"] = r.get("extra_mb")
            row[f"{n}_seconds"] = r.get("seconds")
            if "error" in r:
                row[f"{n}_error"] = r["error"]
        rows.append(row)
        print(f"memory L={L:6d}: " + "  ".join(
            f"{n} +{row[f'{n}_extra_mb']:.0f} MB" if row.get(f"{n}_extra_mb") is not None else f"{n} failed"
            for n in names), flush=True)
    return rows


def bench_decode(lengths, w: int, repeats: int) -> list[dict]:
    """One decode step at each cache length: the new token's q and k are rotated, then attention.

    - rope:   the standard step, SDPA of R^i q against the cache of rotated keys;
    - rerope / leaky: what ``patch_model`` runs, the standard rotated cache for the near keys
      plus the cache of far keys (the new token's far key is made in the step, O(1)), one
      score row (``rerope_decode_rotated``);
    - rerope_unrotated: the older path, a cache of un-rotated keys with the last w keys
      rotated back every step (``rerope_decode``; Leaky would rotate all N).
    """
    rows = []
    for N in lengths:
        row = _decode_row(N, w, repeats)
        rows.append(row)
        print(f"decode cache={N:6d} w={w}: rope {row['rope_step_us']:7.0f} us  rerope x{row['rerope_ratio']:.2f}  "
              f"leaky(k=16) x{row['leaky_k16_ratio']:.2f}  un-rotated rerope x{row['rerope_unrotated_ratio']:.2f}"
              f"  | 1 thread: rerope x{row['rerope_ratio_1thread']:.2f} leaky x{row['leaky_k16_ratio_1thread']:.2f}"
              f" un-rotated x{row['rerope_unrotated_ratio_1thread']:.2f}  (load {row['loadavg_1min']:.1f})", flush=True)
    return rows


def _decode_row(N: int, w: int, repeats: int) -> dict:
    """:func:`bench_decode`'s measurement at cache length ``N`` (its step functions close over this call's tensors)."""
    import torch
    import torch.nn.functional as F

    from ropelaw.methods import apply_rope, far_rotation, rerope_decode, rerope_decode_rotated, rope_inv_freq

    inv = rope_inv_freq(D)
    g = torch.Generator().manual_seed(N)
    q, k_new = torch.randn(B, H, 1, D, generator=g), torch.randn(B, H, 1, D, generator=g)
    k, v = torch.randn(B, H, N, D, generator=g), torch.randn(B, H, N, D, generator=g)
    pos = torch.arange(N)
    k_rot = apply_rope(k, pos)  # the standard cache holds rotated keys
    far = {kk: far_rotation(k_rot, pos, w, kk, "key", inv_freq=inv) for kk in (None, 16.0)}
    i = N - 1
    here = torch.tensor([i])

    def standard():
        qr, kr = apply_rope(q, i), apply_rope(k_new, i)  # noqa: F841  (kr would be appended)
        return F.scaled_dot_product_attention(qr, k_rot, v)

    def cached(kk):
        def step():
            qr, kr = apply_rope(q, i), apply_rope(k_new, i)
            qf = far_rotation(qr, here, w, kk, "query", inv_freq=inv)
            far_rotation(kr, here, w, kk, "key", inv_freq=inv)  # the new far key (appended in use)
            return rerope_decode_rotated(qr, qf, k_rot, far[kk], v, w, scale=D ** -0.5)
        return step

    fns = {"rope": standard, "rerope": cached(None), "leaky": cached(16.0),
           "rerope_unrotated": lambda: rerope_decode(q, k, v, i, w)}
    torch.set_num_threads(1)  # supplementary: no OpenMP hand-offs, the algorithmic cost alone
    t1 = interleaved(fns, repeats * 5)
    torch.set_num_threads(THREADS)
    t = interleaved(fns, repeats * 5)
    return {"cache": N, "window": w, "rope_step_us": 1e6 * t["rope"],
            "rerope_ratio": t["rerope"] / t["rope"], "leaky_k16_ratio": t["leaky"] / t["rope"],
            "rerope_unrotated_ratio": t["rerope_unrotated"] / t["rope"],
            "rerope_ratio_1thread": t1["rerope"] / t1["rope"], "leaky_k16_ratio_1thread": t1["leaky"] / t1["rope"],
            "rerope_unrotated_ratio_1thread": t1["rerope_unrotated"] / t1["rope"],
            "loadavg_1min": os.getloadavg()[0]}


def bench_generate(lengths, w: int, steps: int, rounds: int) -> list[dict]:
    """Per-token decode time of a random Llama (2 layers, 8 heads x 128, sdpa) through the model.

    For each prompt length: prefill once with the cache, then ``steps`` single-token steps,
    unpatched and patched (``patch_model``) in alternation for ``rounds`` rounds; the median
    step time of each is reported. Both start from their own prefill (the patched one also
    fills its far-key cache).
    """
    import torch
    import transformers

    torch.manual_seed(0)
    cfg = transformers.LlamaConfig(vocab_size=1024, hidden_size=1024, intermediate_size=2048, num_hidden_layers=2,
                                   num_attention_heads=8, num_key_value_heads=8, max_position_embeddings=2 ** 16,
                                   attn_implementation="sdpa")
    model = transformers.LlamaForCausalLM(cfg).eval()
    rows = []
    for L in lengths:
        row = _generate_row(model, L, w, steps, rounds)
        rows.append(row)
        print(f"generate prompt={L:6d} w={w}: token {row['rope_token_ms']:.1f} ms  rerope "
              f"x{row['rerope_token_ratio']:.2f}"
              f"  leaky(k=16) x{row['leaky_k16_token_ratio']:.2f}  | prefill {row['rope_prefill_s']:.2f} s  rerope "
              f"x{row['rerope_prefill_ratio']:.2f}  leaky x{row['leaky_k16_prefill_ratio']:.2f}"
              f"  (load {row['loadavg_1min']:.1f})", flush=True)
    return rows


def _generate_row(model, L: int, w: int, steps: int, rounds: int) -> dict:
    """:func:`bench_generate`'s measurement at prompt length ``L`` (``run`` closes over this call's prompt)."""
    import statistics

    import torch

    from ropelaw.methods import patch_model

    prompt = torch.randint(3, 1024, (1, L), generator=torch.Generator().manual_seed(L))
    nxt = torch.randint(3, 1024, (1, steps), generator=torch.Generator().manual_seed(L + 1))
    times: dict[str, list[float]] = {"rope": [], "rerope": [], "leaky": []}
    prefill: dict[str, list[float]] = {"rope": [], "rerope": [], "leaky": []}

    def run(name):
        with torch.no_grad():
            t0 = time.perf_counter()
            cache = model(prompt, use_cache=True).past_key_values
            prefill[name].append(time.perf_counter() - t0)
            for s in range(steps):
                t0 = time.perf_counter()
                model(nxt[:, s: s + 1], past_key_values=cache, use_cache=True)
                times[name].append(time.perf_counter() - t0)

    for _ in range(rounds):
        run("rope")
        with patch_model(model, "rerope", window=w):
            run("rerope")
        with patch_model(model, "leaky_rerope", window=w, leaky_k=16.0):
            run("leaky")
    med = {n: statistics.median(t) for n, t in times.items()}
    pre = {n: statistics.median(t) for n, t in prefill.items()}
    return {"prompt": L, "window": w, "rope_token_ms": 1e3 * med["rope"],
            "rerope_token_ratio": med["rerope"] / med["rope"], "leaky_k16_token_ratio": med["leaky"] / med["rope"],
            "rope_prefill_s": pre["rope"], "rerope_prefill_ratio": pre["rerope"] / pre["rope"],
            "leaky_k16_prefill_ratio": pre["leaky"] / pre["rope"], "loadavg_1min": os.getloadavg()[0]}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="L = 2048 only, fewer repeats")
    p.add_argument("--long", action="store_true", help="also one ReRoPE prefill at L = 65536")
    p.add_argument("--window", type=int, default=512)
    p.add_argument("--json", help="write the results here")
    p.add_argument("--decode-only", action="store_true", help="only the decode steps (and --generate)")
    p.add_argument("--generate", action="store_true", help="also per-token model.generate-style decode, random Llama")
    p.add_argument("--worker", help=argparse.SUPPRESS)
    p.add_argument("--L", type=int, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.worker:
        worker(argparse.Namespace(name=args.worker, L=args.L, window=args.window))
        return 0
    import torch

    torch.set_num_threads(THREADS)
    info = machine()
    print("machine:", json.dumps(info), flush=True)
    lengths = [2048] if args.quick else [2048, 4096, 8192]
    repeats = 3 if args.quick else 5
    res = {"machine": info}
    if not args.decode_only:
        res["prefill"] = bench_prefill(lengths, args.window, repeats, with_reference=4096)
        res["forward_backward"] = [bench_backward(2048, args.window, repeats)]
        res["memory"] = bench_memory(lengths, args.window, with_reference=8192)
    if args.long:
        r = run_worker("rerope", 65536, args.window)
        res["long"] = {"L": 65536, "window": args.window, **r}
        print(f"prefill L=65536 w={args.window}: rerope {r.get('seconds', float('nan')):.1f} s, "
              f"+{r.get('extra_mb', float('nan')):.0f} MB over the inputs "
              f"(reference: two 8x65536x65536 float32 score matrices = 275 GB)", flush=True)
    res["decode"] = bench_decode([2048, 8192, 32768], args.window, repeats)
    if args.generate:
        res["generate"] = bench_generate([2048, 8192], args.window, steps=8, rounds=3)
    res["machine"]["loadavg_1min_end"] = os.getloadavg()[0]
    if args.json:
        from ropelaw.safeio import write_atomic

        write_atomic(args.json, json.dumps(res, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
