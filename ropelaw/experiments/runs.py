"""The three toy experiments: train, measure, compare with the seeds, write results.

- :func:`run_bound` (Liu et al. 2023, arXiv 2310.05209, seed 001): pre-train at T and base
  1e4, continue training at T at several bases below and above the critical base, measure
  the loss per position out to 16T, and set each base's measured break point
  (:func:`ropelaw.experiments.metrics.break_point`, defined before any run) beside the bound
  ``ropelaw bound`` predicts for the toy's d, T and base.
- :func:`run_extrapolation` (seed 000's tables): train at T (once plainly, once with log n
  trained in) and test at 8T: token accuracy on repeated and non-repeated samples for
  Baseline, PI, NTK, YaRN, ReRoPE at w = T/8 .. T and Leaky ReRoPE at several k, each
  without log n, with log n at test only (†) and with log n trained in.
- :func:`run_keynorm` (seed 003): softmax, QNA, KNA and CosA, each with and without log n,
  trained from scratch at T, tested at 8T, alone and with NTK / YaRN / ReRoPE on top.
- :func:`run_schemes` (issue 25, :mod:`.scheme_bounds`): the bound under PI, NTK-aware, dynamic
  NTK, YaRN and Llama 3 at two factors, at inference and after continued training at T.
- :func:`run_bound_sweep` (issue 25, :mod:`.sweep`): :func:`run_bound` at several (d, T), break /
  bound per base and whether it is constant across sizes.

Each returns a JSON-ready dict with ``experiment`` and ``rows`` (plus the curves, the seed
comparison, the machine, the wall time and the CPU time); :func:`render_text` prints it and
:func:`plot_result` draws it. Sizes: ``smoke`` (CI, seconds), ``quick`` (<= 5 min per
experiment on 2 cores), ``full`` (the longer runs, by hand).
"""

from __future__ import annotations

import math
import os
import platform
import sys
import time
from dataclasses import asdict, dataclass, replace
from typing import Any, Callable

import torch
import torch.nn.functional as F

from . import seeds
from .data import load_corpus, nonrepeated_samples, random_windows, repeated_samples
from .metrics import (AGREEMENT_FACTOR, BREAK_MARGIN, agreement, break_point, ordering_agreement, smoothed,
                      token_metrics)
from .model import ModelConfig, PositionMethod, TinyLM

__all__ = ["Size", "SIZES", "EXPERIMENTS", "run_bound", "run_extrapolation", "run_keynorm", "run_schemes",
           "run_bound_sweep", "train", "evaluate",
           "machine", "render_text", "plot_result"]

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
LEAKY_KS = (64, 32, 16, 8)  # seed 000's Leaky ReRoPE table
WINDOW_FRACTIONS = ((1, 8), (1, 4), (1, 2), (3, 4), (1, 1))  # seed 000: w = 64 .. 512 at T = 512


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
          method: PositionMethod = PositionMethod()) -> list[float]:
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
def evaluate(model: TinyLM, samples: torch.Tensor, method: PositionMethod = PositionMethod(),
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
    return (loss_sum / n).tolist(), (acc_sum / n).tolist()


def _mean(xs: list[float]) -> float:
    return sum(xs) / len(xs)


def _started() -> tuple[tuple[float, float], str]:
    """((wall clock, CPU clock), start time): CPU = user + sys of this process (``time.process_time``),
    the time a run needs on a core of its own whatever the load."""
    return (time.perf_counter(), time.process_time()), time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())


def _header(name: str, size: Size, seed: int, corpus, t0: tuple[float, float], started: str) -> dict[str, Any]:
    return {"experiment": name, "size": size.name, "seed": seed, "started": started,
            "seconds": round(time.perf_counter() - t0[0], 1), "machine": machine(), "corpus": corpus.describe(),
            "sizes": asdict(size)}


def _finish(out: dict[str, Any], t0: tuple[float, float]) -> dict[str, Any]:
    """Set the wall time and the CPU time (user + sys) of a finished run; returns ``out``."""
    out["seconds"] = round(time.perf_counter() - t0[0], 1)
    out["cpu_seconds"] = round(time.process_time() - t0[1], 1)
    out["machine"]["load_average_1min_end"] = machine()["load_average_1min"]
    return out


# -- bound (Liu et al., seed 001) -----------------------------------------------------------------
def run_bound(size: Size, seed: int = 0, progress: Progress | None = None,
              bases: tuple[float, ...] | None = None, corpus=None) -> dict[str, Any]:
    """Continued training at several bases; predicted bound vs measured break per base.

    ``bases`` (ascending, each > 1) replaces the size's list; the result then carries
    ``tag`` = "<n>bases" so that its files do not overwrite the default run's. ``corpus``: an
    already loaded :func:`load_corpus` (the sweep reads it once).
    """
    if bases is not None:
        bases = tuple(sorted(float(b) for b in bases))
        if not bases or bases[0] <= 1:
            raise ValueError(f"bases must be > 1, got {list(bases)}")
    from ..spec import RopeSpec
    from ..theory import extrapolation_bound

    t0, started = _started()
    corpus = corpus if corpus is not None else load_corpus(max_bytes=size.corpus_bytes)
    t = size.train_len
    test_len = BOUND_FACTOR * t
    base_model = TinyLM(model_config(size, base=PRETRAIN_BASE), seed=seed)
    pre_loss = train(base_model, corpus.train, steps=size.steps, batch=size.batch, lr=size.lr, seed=seed,
                     progress=progress)
    samples = nonrepeated_samples(corpus.test, test_len, size.bound_samples, seed=seed + 1000)
    rows, curves = [], {}
    for beta in bases or size.bound_bases:
        model = base_model.with_base(beta)
        tune = train(model, corpus.train, steps=size.tune_steps, batch=size.batch, lr=size.lr / 3, seed=seed + 1,
                     warmup=max(1, size.tune_steps // 20), progress=progress)
        loss, acc = evaluate(model, samples)
        pred = extrapolation_bound(RopeSpec(d=size.head_dim, train_len=t, base=beta, pretrain_base=PRETRAIN_BASE))
        measured = break_point(loss, t)
        verdict, ratio = agreement(pred.extrapolation_bound, measured, test_len)
        ref = _mean(loss[t // 2: t])
        end = smoothed(loss, max(1, t // 4))[-1]
        rows.append({"base": beta, "predicted_bound": round(pred.extrapolation_bound, 1),
                     "measured_break": measured, "agreement": verdict,
                     "ratio": None if ratio is None else round(ratio, 3), "regime": pred.regime,
                     "critical_dimension": pred.critical_dimension, "in_range_loss": round(ref, 4),
                     "loss_rise_at_end": round(end - ref, 4), "tune_final_loss": round(_mean(tune[-10:]), 4)})
        curves[f"{beta:g}"] = {"loss": [round(x, 4) for x in loss], "accuracy": [round(x, 4) for x in acc]}
    out = _header("bound", size, seed, corpus, t0, started)
    if bases is not None:
        out["tag"] = f"{len(bases)}bases"
    out.update({"train_len": t, "test_len": test_len, "pretrain_base": PRETRAIN_BASE,
                "model": model_config(size).to_dict(), "pretrain_final_loss": round(_mean(pre_loss[-10:]), 4),
                "break_rule": {"reference": "mean loss over positions [T/2, T)", "smoothing": "trailing mean over T/4",
                               "margin_nats": BREAK_MARGIN, "agreement_factor": AGREEMENT_FACTOR},
                "rows": rows, "curves": curves, "seed_comparison": _bound_claims(rows, test_len)})
    return _finish(out, t0)


def _bound_claims(rows: list[dict], test_len: int) -> list[dict]:
    """Seed 001's two qualitative claims, checked on the measured rows."""
    above = [r for r in rows if r["regime"] == "above_critical_base"]
    below = [r for r in rows if r["regime"] != "above_critical_base"]
    breaks = [math.inf if r["measured_break"] is None else r["measured_break"] for r in above]
    # the bound must grow: never decreasing with the base, and later at the largest base than at the smallest
    c1 = (all(a <= b for a, b in zip(breaks, breaks[1:])) and breaks[-1] > breaks[0]) if len(above) > 1 else None
    rises = [r["loss_rise_at_end"] for r in below]  # bases ascending: the rise should grow with the base
    c2 = all(a <= b for a, b in zip(rises, rises[1:])) if len(below) > 1 else None
    return [
        {"claim": seeds.SEED_001_CLAIMS[0], "check": "measured breaks of the bases above the critical base "
         "never decrease and end later than they start as the base grows", "bases": [r["base"] for r in above],
         "values": [r["measured_break"] for r in above], "match": c1},
        {"claim": seeds.SEED_001_CLAIMS[1], "check": f"loss rise at {test_len} tokens grows with the base "
         "among the bases at or below the critical base", "bases": [r["base"] for r in below],
         "values": rises, "match": c2},
    ]


# -- extrapolation (seed 000) -------------------------------------------------------------------
def _variants(size: Size) -> list[dict]:
    """Every test-time method of seed 000's tables at the toy's T (train T, test 8T)."""
    t, s = size.train_len, TEST_FACTOR
    out = []

    def add(method: str, label: str, pm: PositionMethod, window=None, k=None):
        for logn, model, suffix in (("none", "plain", ""), ("test", "plain", "-log n†"), ("train", "logn", "-log n")):
            pmx = replace(pm, logn_test=True) if logn == "test" else pm
            out.append({"method": method, "label": label + suffix, "model": model, "pm": pmx,
                        "window": window, "k": k, "logn": logn})

    add("baseline", "Baseline", PositionMethod())
    add("pi", "PI", PositionMethod(scheme="linear", params=(("factor", s),)))
    add("ntk", "NTK", PositionMethod(scheme="ntk", params=(("factor", s),)))
    add("yarn", "YaRN", PositionMethod(scheme="yarn", params=(("factor", s),)))
    for num, den in WINDOW_FRACTIONS:
        w = t * num // den
        add("rerope", f"ReRoPE-{seeds.window_label(w, t)}", PositionMethod(window=w), window=w)
    for den in size.leaky_windows:
        w = t // den
        for k in LEAKY_KS:
            pm = PositionMethod(window=w, leaky_k=float(k))
            out.append({"method": "leaky_rerope", "label": f"Leaky ReRoPE-{seeds.window_label(w, t)}-k{k}-log n",
                        "model": "logn", "pm": pm, "window": w, "k": k, "logn": "train"})
    return out


def _accuracies(model: TinyLM, pm: PositionMethod, sets: dict[str, torch.Tensor]) -> dict[str, float]:
    out = {}
    for key, samples in sets.items():
        _, acc = evaluate(model, samples, pm)
        out[key] = round(100 * _mean(acc), 2)
    return out


def _test_sets(corpus, size: Size, seed: int) -> dict[str, torch.Tensor]:
    t = size.train_len
    n = size.eval_samples
    return {"train_accuracy": nonrepeated_samples(corpus.test, t, n, seed=seed + 2000),
            "repeated_accuracy": repeated_samples(corpus.test, TEST_FACTOR * t, t, n, seed=seed + 3000),
            "nonrepeated_accuracy": nonrepeated_samples(corpus.test, TEST_FACTOR * t, n, seed=seed + 4000)}


def _seed_orderings(rows: list[dict], table: dict[str, tuple[float, float, float]]) -> dict[str, Any]:
    out = {}
    for col, key in ((1, "repeated_accuracy"), (2, "nonrepeated_accuracy")):
        ours = {r["label"]: r[key] for r in rows if r["label"] in table}
        pairs = ordering_agreement(ours, {k: v[col] for k, v in table.items()})
        out[key] = {"pairs": len(pairs), "matching": sum(p["match"] for p in pairs),
                    "mismatches": [p for p in pairs if not p["match"]]}
    return out


def run_extrapolation(size: Size, seed: int = 0, progress: Progress | None = None) -> dict[str, Any]:
    """Seed 000's table at toy scale: train at T, token accuracy at 8T."""
    t0, started = _started()
    corpus = load_corpus(max_bytes=size.corpus_bytes)
    models = {}
    for key, logn in (("plain", False), ("logn", True)):
        m = TinyLM(model_config(size, logn_train=logn), seed=seed)
        train(m, corpus.train, steps=size.steps, batch=size.batch, lr=size.lr, seed=seed, progress=progress)
        models[key] = m
    sets = _test_sets(corpus, size, seed)
    rows = []
    for v in _variants(size):
        acc = _accuracies(models[v["model"]], v["pm"], sets)
        seed_row = seeds.SEED_000.get(v["label"])
        rows.append({"method": v["method"], "label": v["label"], "window": v["window"], "k": v["k"],
                     "logn": v["logn"], **acc, "seed": list(seed_row) if seed_row else None})
    out = _header("extrapolation", size, seed, corpus, t0, started)
    out.update({"train_len": size.train_len, "test_len": TEST_FACTOR * size.train_len,
                "model": model_config(size).to_dict(), "accuracy_unit": "percent",
                "logn_values": {"none": "no log n", "test": "log n† (max(1, log n/log T) at test only)",
                                "train": "log n trained in (log n/log T at every position)"},
                "rows": rows, "seed_comparison": _seed_orderings(rows, seeds.SEED_000),
                "seed_source": "seed 000, kexue.fm/archives/9708 (YaRN rows: seed 003, kexue.fm/archives/9859)"})
    return _finish(out, t0)


# -- keynorm (seed 003) -------------------------------------------------------------------------
ATTENTION_LABELS = {"softmax": "Baseline", "qna": "QNA", "kna": "KNA", "cosa": "CosA"}


def run_keynorm(size: Size, seed: int = 0, progress: Progress | None = None) -> dict[str, Any]:
    """Seed 003's tables at toy scale: QNA / KNA / CosA +- log n, trained at T, tested at 8T."""
    t0, started = _started()
    corpus = load_corpus(max_bytes=size.corpus_bytes)
    t, s = size.train_len, TEST_FACTOR
    sets = _test_sets(corpus, size, seed)
    on_top = {"none": PositionMethod(), "ntk": PositionMethod(scheme="ntk", params=(("factor", s),)),
              "yarn": PositionMethod(scheme="yarn", params=(("factor", s),)), "rerope": PositionMethod(window=t // 4)}
    rows = []
    for attention in ("softmax", "qna", "kna", "cosa"):
        for logn in (False, True):
            m = TinyLM(model_config(size, attention=attention, logn_train=logn), seed=seed)
            train(m, corpus.train, steps=size.keynorm_steps, batch=size.batch, lr=size.lr, seed=seed,
                  progress=progress)
            for extra, pm in on_top.items():
                label = ATTENTION_LABELS[attention] + ("-log n" if logn else "") + \
                    ("" if extra == "none" else {"ntk": "-NTK", "yarn": "-YaRN", "rerope": "-ReRoPE"}[extra])
                seed_row = seeds.SEED_003.get(label)
                rows.append({"attention": attention, "logn": "train" if logn else "none", "on_top": extra,
                             "window": pm.window, "label": label, **_accuracies(m, pm, sets),
                             "seed": list(seed_row) if seed_row else None})
    out = _header("keynorm", size, seed, corpus, t0, started)
    out.update({"train_len": t, "test_len": s * t, "model": model_config(size).to_dict(), "accuracy_unit": "percent",
                "rows": rows, "seed_comparison": _seed_orderings(rows, seeds.SEED_003),
                "seed_source": "seed 003, kexue.fm/archives/9859"})
    return _finish(out, t0)


def run_schemes(size: Size, seed: int = 0, progress: Progress | None = None) -> dict[str, Any]:
    """The bound under each scaling scheme (:func:`ropelaw.experiments.scheme_bounds.run_schemes`)."""
    from .scheme_bounds import run_schemes as run

    return run(size, seed=seed, progress=progress)


def run_bound_sweep(size: Size, seed: int = 0, progress: Progress | None = None) -> dict[str, Any]:
    """The bound experiment at several (d, T) (:func:`ropelaw.experiments.sweep.run_bound_sweep`)."""
    from .sweep import run_bound_sweep as run

    return run(size, seed=seed, progress=progress)


EXPERIMENTS: dict[str, Callable[..., dict[str, Any]]] = {
    "bound": run_bound, "extrapolation": run_extrapolation, "keynorm": run_keynorm, "schemes": run_schemes,
    "bound-sweep": run_bound_sweep,
}


def total_steps(name: str, size: Size, bases: int | None = None) -> int:
    """Optimiser steps an experiment takes (for a progress bar); ``bases``: count of a custom list."""
    if name == "schemes":  # dynamic NTK trains as plain RoPE at T: one continued training fewer per factor
        return size.steps + size.tune_steps * (1 + 4 * len(size.scheme_factors))
    if name == "bound-sweep":
        from .sweep import sweep_steps

        return sweep_steps(size)
    if name == "bound":
        return size.steps + size.tune_steps * (bases or len(size.bound_bases))
    if name == "extrapolation":
        return 2 * size.steps
    if name == "keynorm":
        return 8 * size.keynorm_steps
    raise ValueError(f"unknown experiment {name!r}; known: {', '.join(EXPERIMENTS)}")


# -- text -----------------------------------------------------------------------------------------
def _fmt_len(x: Any) -> str:
    if x is None:
        return "none"
    if isinstance(x, float) and not math.isfinite(x):
        return "unbounded"
    return f"{round(x):,}"


def _footer(r: dict[str, Any]) -> list[str]:
    m = r["machine"]
    return ["", f"machine: {m['cpu']}, {m['cores']} cores, {m['torch_threads']} torch thread(s), "
            f"load {m['load_average_1min']}, Python {m['python']}, torch {m['torch']}",
            f"time: {r['seconds']:.0f} s" + (f", CPU {r['cpu_seconds']:.0f} s (user + sys)" if r.get("cpu_seconds")
                                              is not None else "")
            + f" (size {r['size']}, seed {r['seed']}, started {r['started']})",
            f"corpus: {r['corpus']['source']} ({r['corpus']['train_bytes']:,} train / "
            f"{r['corpus']['test_bytes']:,} test bytes)"]


def render_text(r: dict[str, Any]) -> str:
    """The table of one experiment beside the seed's numbers, the orderings, machine and time."""
    if r["experiment"] == "bound":
        return _render_bound(r)
    if r["experiment"] == "schemes":
        from .scheme_bounds import render_schemes

        return render_schemes(r)
    if r["experiment"] == "bound-sweep":
        from .sweep import render_sweep

        return render_sweep(r)
    return _render_accuracy(r)


def _render_bound(r: dict[str, Any]) -> str:
    mc = r["model"]
    lines = [f"Extrapolation bound at toy scale (Liu et al. 2023, seed 001): d={mc['head_dim']}, "
             f"T={r['train_len']}, pre-trained at base {r['pretrain_base']:g}, continued at each base, "
             f"loss measured to {r['test_len']:,} tokens",
             f"break rule: first position >= T where the trailing mean loss (T/4) exceeds the mean over "
             f"[T/2, T) by {r['break_rule']['margin_nats']} nats; agreement within a factor "
             f"{r['break_rule']['agreement_factor']}", "",
             f"{'base':>10} {'regime':>8} {'predicted bound':>16} {'measured break':>15} {'ratio':>7}  "
             f"{'verdict':<8} {'in-range loss':>13} {'rise at end':>11}"]
    for row in r["rows"]:
        regime = "above" if row["regime"] == "above_critical_base" else "at/below"
        ratio = "-" if row["ratio"] is None else f"{row['ratio']:.2f}"
        measured = _fmt_len(row["measured_break"]) if row["measured_break"] is not None else \
            f"> {r['test_len'] - 1:,}"
        lines.append(f"{row['base']:>10g} {regime:>8} {_fmt_len(row['predicted_bound']):>16} {measured:>15} "
                     f"{ratio:>7}  {row['agreement']:<8} {row['in_range_loss']:>13.3f} "
                     f"{row['loss_rise_at_end']:>+11.3f}")
    agree = sum(row["agreement"] == "agrees" for row in r["rows"])
    lines += ["", f"predicted vs measured: {agree} of {len(r['rows'])} bases agree"]
    for c in r["seed_comparison"]:
        state = {True: "matches", False: "does not match", None: "not tested (too few bases)"}[c["match"]]
        lines.append(f"seed 001: {c['claim']}: {state} ({c['check']}: {c['values']})")
    return "\n".join(lines + _footer(r))


def _render_accuracy(r: dict[str, Any]) -> str:
    t, n = r["train_len"], r["test_len"]
    title = {"extrapolation": "Length extrapolation at toy scale (seed 000's tables)",
             "keynorm": "KeyNorm at toy scale (seed 003's tables)"}[r["experiment"]]
    lines = [f"{title}: trained at T={t}, tested at {n} (token accuracy, %; seed: 100M GAU, 512 -> 4096)", "",
             f"{'method':<32} {'ours: T':>8} {'repeated':>9} {'non-rep.':>9}   {'seed: T':>8} {'repeated':>9} "
             f"{'non-rep.':>9}"]
    for row in r["rows"]:
        sd = row["seed"]
        tail = f"   {sd[0]:>8.2f} {sd[1]:>9.2f} {sd[2]:>9.2f}" if sd else f"   {'-':>8} {'-':>9} {'-':>9}"
        lines.append(f"{row['label']:<32} {row['train_accuracy']:>8.2f} {row['repeated_accuracy']:>9.2f} "
                     f"{row['nonrepeated_accuracy']:>9.2f}{tail}")
    lines.append("")
    lines.append("orderings (every pair of rows the seed separates by >= 1 point; values are not comparable):")
    for key, name in (("repeated_accuracy", "repeated"), ("nonrepeated_accuracy", "non-repeated")):
        c = r["seed_comparison"][key]
        lines.append(f"  {name}: {c['matching']} of {c['pairs']} pairs ordered as in the seed")
        for p in c["mismatches"][:6]:
            lines.append(f"    differs: seed {p['higher']} > {p['lower']} by {p['seed_gap']:.2f}, "
                         f"ours {p['our_gap']:+.2f}")
        if len(c["mismatches"]) > 6:
            lines.append(f"    ... {len(c['mismatches']) - 6} more (see --format json)")
    return "\n".join(lines + _footer(r))


# -- figures -----------------------------------------------------------------------------------
def plot_result(r: dict[str, Any]):
    """A matplotlib Figure of one experiment's result (matplotlib imported here only)."""
    from ..errors import require

    require("matplotlib", "plot", "plotting")
    from matplotlib.figure import Figure

    if r["experiment"] == "schemes":
        from .scheme_bounds import plot_schemes

        return plot_schemes(r)
    if r["experiment"] == "bound-sweep":
        from .sweep import plot_sweep

        return plot_sweep(r)
    if r["experiment"] == "bound":
        fig = Figure(figsize=(8.5, 5.0), layout="constrained")
        ax = fig.subplots()
        t = r["train_len"]
        colors = ["C%d" % i for i in range(10)]
        for i, row in enumerate(r["rows"]):
            key = f"{row['base']:g}"
            curve = smoothed(r["curves"][key]["loss"], max(1, t // 4))
            c = colors[i % 10]
            ax.plot(range(1, len(curve) + 1), curve, color=c, lw=1.3, label=f"base {key}", gid=f"loss-{key}")
            if row["predicted_bound"] <= r["test_len"]:
                ax.axvline(row["predicted_bound"], color=c, ls="--", lw=0.9, gid=f"predicted-{key}")
            if row["measured_break"] is not None:
                ax.plot([row["measured_break"] + 1], [curve[row["measured_break"]]], "o", color=c, ms=6,
                        gid=f"break-{key}")
        ax.axvline(t, color="k", lw=0.8, ls=":", gid="train_len")
        ax.set_xscale("log", base=2)
        ax.set_xlabel("position (tokens)")
        ax.set_ylabel(f"loss, nats (trailing mean over {t // 4})")
        ax.set_title(f"Loss per position after continued training at each base (d={r['model']['head_dim']}, "
                     f"T={t})\ndashed: predicted bound (Liu et al.), dot: measured break, dotted: T", fontsize=9)
        ax.legend(fontsize=8)
        return fig
    rows = r["rows"]
    fig = Figure(figsize=(9.5, max(4.0, 0.22 * len(rows) + 1.5)), layout="constrained")
    axes = fig.subplots(1, 2, sharey=True)
    y = list(range(len(rows)))[::-1]
    for ax, col, title in ((axes[0], "repeated_accuracy", "repeated"), (axes[1], "nonrepeated_accuracy",
                                                                        "non-repeated")):
        ax.barh([v + 0.2 for v in y], [row[col] for row in rows], height=0.4, color="C0", label="toy (ours)")
        si = 1 if col == "repeated_accuracy" else 2
        ax.barh([v - 0.2 for v in y], [row["seed"][si] if row["seed"] else 0 for row in rows], height=0.4,
                color="C1", label="seed (100M GAU)")
        ax.set_title(f"{title}, {r['test_len']} tokens (trained at {r['train_len']})", fontsize=9)
        ax.set_xlabel("token accuracy, %")
    axes[0].set_yticks(y, [row["label"] for row in rows], fontsize=7)
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside upper center", ncols=2, fontsize=8)
    return fig
