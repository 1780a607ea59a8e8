"""What every toy experiment shares: run sizes (:data:`SIZES`), the training loop and the per-position
evaluation, the machine and timing records, and the text of a result's footer. Imported by the
experiments (:mod:`.runs`, :mod:`.bound`, :mod:`.scheme_bounds`, :mod:`.sweep`); imports none of them.
"""

from __future__ import annotations

import math
import os
import platform
import time
from dataclasses import asdict, dataclass
from typing import Any
from collections.abc import Callable

import torch
import torch.nn.functional as F

from ..errors import UsageError
from .data import random_windows
from .metrics import token_metrics
from .model import DEFAULT_METHOD, ModelConfig, PositionMethod, TinyLM

Progress = Callable[[int], None]


@dataclass(frozen=True)
class Size:
    """How big a run is. ``steps`` train from scratch; ``tune_steps`` continue at a new base."""

    name: str
    d_model: int
    n_layers: int
    n_heads: int
    head_dim: int  # rotary dims d of the scaling law
    train_len: int  # T
    batch: int
    steps: int
    tune_steps: int
    keynorm_steps: int
    eval_samples: int  # per kind of test sample (accuracy: averaged over every position too)
    bound_samples: int  # loss curves of the bound experiment: per-position means need many samples
    lr: float
    bound_bases: tuple[float, ...]
    leaky_windows: tuple[int, ...]  # fractions T/den: denominators
    corpus_bytes: int | None = None  # cap per split (smoke)
    scheme_factors: tuple[float, ...] = (4.0, 8.0)  # schemes experiment: two factors (issue 25)
    dynamic_resolution: int = 16  # length-dependent schemes: each next length L + ceil(L/16) (scheme_bounds)
    sweep: tuple[tuple[int, int], ...] = ((32, 128), (64, 128), (32, 256), (64, 256))  # (d, T) of bound --sweep
    sweep_bases: tuple[float, ...] = (1e5, 1e6)  # candidates; each (d, T) keeps those bounded in [2T, 16T/1.5]


SIZES: dict[str, Size] = {
    # CI: seconds; checks that everything runs end to end, says nothing about the research
    "smoke": Size("smoke", d_model=32, n_layers=2, n_heads=2, head_dim=16, train_len=32, batch=4, steps=12,
                  tune_steps=4, keynorm_steps=4, eval_samples=2, bound_samples=2, lr=3e-3,
                  bound_bases=(500.0, 1e4, 1e6), leaky_windows=(4,), corpus_bytes=200_000,
                  sweep=((16, 32), (32, 64))),
    # <= 5 min per experiment on 2 cores (one torch thread; the machine is shared)
    "quick": Size("quick", d_model=64, n_layers=2, n_heads=2, head_dim=32, train_len=128, batch=16, steps=700,
                  tune_steps=150, keynorm_steps=250, eval_samples=16, bound_samples=64, lr=3e-3,
                  bound_bases=(500.0, 1e4, 1e5, 1e6, 1e7), leaky_windows=(4,)),
    # by hand, up to an hour per experiment
    "full": Size("full", d_model=64, n_layers=2, n_heads=2, head_dim=32, train_len=128, batch=32, steps=3000,
                 tune_steps=600, keynorm_steps=1500, eval_samples=64, bound_samples=256, lr=3e-3,
                 bound_bases=(100.0, 500.0, 2000.0, 1e4, 3e4, 1e5, 3e5, 1e6, 1e7), leaky_windows=(4, 2),
                 sweep_bases=(3e4, 1e5, 3e5, 1e6, 3e6)),
}

PRETRAIN_BASE = 10000.0  # Liu et al.'s (and LLaMA's) pre-training base
TEST_FACTOR = 8  # seeds 000/003: train 512, test 4096
BOUND_FACTOR = 16  # issue 13: loss per position out to at least 16T


def machine() -> dict[str, Any]:
    """What the numbers were measured on."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    return {"cpu": cpu, "cores": os.cpu_count(), "torch_threads": torch.get_num_threads(),
            "python": platform.python_version(), "torch": torch.__version__, "platform": platform.platform(),
            "load_average_1min": None if load is None else round(load, 2)}


def model_config(size: Size, **overrides: Any) -> ModelConfig:
    return ModelConfig(d_model=size.d_model, n_layers=size.n_layers, n_heads=size.n_heads, head_dim=size.head_dim,
                       train_len=size.train_len, **overrides)


# -- training and evaluation -------------------------------------------------------------------
def train(model: TinyLM, stream: torch.Tensor, *, steps: int, batch: int, lr: float, seed: int,
          warmup: int | None = None, progress: Progress | None = None,
          method: PositionMethod = DEFAULT_METHOD) -> list[float]:
    """AdamW on random windows of ``model.cfg.train_len`` tokens; returns the loss of each step.

    ``method``: the positions the model trains with (default plain RoPE at its base; a scheme for
    continued training with that scheme in force).

    Warm-up linear over ``warmup`` steps (default steps/10), then cosine decay to lr/10.
    Windows come from ``torch.Generator().manual_seed(seed)``: same seed, same batches.
    """
    t = model.cfg.train_len
    warmup = max(1, steps // 10) if warmup is None else max(1, warmup)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, betas=(0.9, 0.95), weight_decay=0.01)
    g = torch.Generator().manual_seed(seed)
    history = []
    model.train()
    for step in range(steps):
        if step < warmup:
            scale = (step + 1) / warmup
        else:
            frac = (step - warmup) / max(1, steps - warmup)
            scale = 0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * frac))
        for group in opt.param_groups:
            group["lr"] = lr * scale
        w = random_windows(stream, t, batch, g)  # (batch, T+1)
        logits = model(w[:, :-1], method)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), w[:, 1:].reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        history.append(loss.item())
        if progress:
            progress(1)
    model.eval()
    return history


@torch.no_grad()
def evaluate(model: TinyLM, samples: torch.Tensor, method: PositionMethod = DEFAULT_METHOD,
             batch: int = 8) -> tuple[list[float], list[float]]:
    """Mean loss (nats) and accuracy per position over ``samples`` (N, L+1): two lists of L."""
    model.eval()
    loss_sum = acc_sum = None
    for i in range(0, samples.shape[0], batch):
        w = samples[i:i + batch]
        ls, cs = token_metrics(model(w[:, :-1], method), w[:, 1:])
        loss_sum = ls if loss_sum is None else loss_sum + ls
        acc_sum = cs if acc_sum is None else acc_sum + cs
    n = samples.shape[0]
    if loss_sum is None or acc_sum is None:
        raise UsageError("no samples to evaluate")
    return (loss_sum / n).tolist(), (acc_sum / n).tolist()


def mean_of(xs: list[float]) -> float:
    return sum(xs) / len(xs)


def start_clock() -> tuple[tuple[float, float], str]:
    """((wall clock, CPU clock), start time): CPU = user + sys of this process (``time.process_time``),
    the time a run needs on a core of its own whatever the load."""
    return (time.perf_counter(), time.process_time()), time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())


def report_header(name: str, size: Size, seed: int, corpus, t0: tuple[float, float], started: str) -> dict[str, Any]:
    return {"experiment": name, "size": size.name, "seed": seed, "started": started,
            "seconds": round(time.perf_counter() - t0[0], 1), "machine": machine(), "corpus": corpus.describe(),
            "sizes": asdict(size)}


def finish_report(out: dict[str, Any], t0: tuple[float, float]) -> dict[str, Any]:
    """Set the wall time and the CPU time (user + sys) of a finished run; returns ``out``."""
    out["seconds"] = round(time.perf_counter() - t0[0], 1)
    out["cpu_seconds"] = round(time.process_time() - t0[1], 1)
    out["machine"]["load_average_1min_end"] = machine()["load_average_1min"]
    return out


# -- text -----------------------------------------------------------------------------------------
def fmt_len(x: Any) -> str:
    if x is None:
        return "none"
    if isinstance(x, float) and not math.isfinite(x):
        return "unbounded"
    return f"{round(x):,}"


def report_footer(r: dict[str, Any]) -> list[str]:
    m = r["machine"]
    return ["", f"machine: {m['cpu']}, {m['cores']} cores, {m['torch_threads']} torch thread(s), "
            f"load {m['load_average_1min']}, Python {m['python']}, torch {m['torch']}",
            f"time: {r['seconds']:.0f} s" + (f", CPU {r['cpu_seconds']:.0f} s (user + sys)" if r.get("cpu_seconds")
                                              is not None else "")
            + f" (size {r['size']}, seed {r['seed']}, started {r['started']})",
            f"corpus: {r['corpus']['source']} ({r['corpus']['train_bytes']:,} train / "
            f"{r['corpus']['test_bytes']:,} test bytes)"]
