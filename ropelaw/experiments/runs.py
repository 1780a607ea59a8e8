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

Sizes, training, evaluation and the run records every experiment shares live in :mod:`.common`,
:func:`run_bound` in :mod:`.bound` (the sweep repeats it); this module holds the other two and the
name -> experiment dispatch, and re-exports the rest.

Each returns a JSON-ready dict with ``experiment`` and ``rows`` (plus the curves, the seed
comparison, the machine, the wall time and the CPU time); :func:`render_text` prints it and
:func:`plot_result` draws it. Sizes: ``smoke`` (CI, seconds), ``quick`` (<= 5 min per
experiment on 2 cores), ``full`` (the longer runs, by hand).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any
from collections.abc import Callable

import torch

from ..errors import UsageError
from . import seeds
# shared by every experiment (sizes, training, evaluation, records) and the bound experiment: their own
# modules, which scheme_bounds.py and sweep.py import too (runs.py dispatches to those two); re-exported here
from .bound import render_bound, run_bound
from .common import (BOUND_FACTOR, PRETRAIN_BASE, SIZES, TEST_FACTOR, Progress, Size, finish_report, fmt_len,  # noqa: F401
                     report_footer, report_header, mean_of, start_clock, evaluate, machine, model_config, train)
from .data import load_corpus, nonrepeated_samples, repeated_samples
from .metrics import ordering_agreement, smoothed
from .model import PositionMethod, TinyLM

__all__ = ["Size", "SIZES", "EXPERIMENTS", "run_bound", "run_extrapolation", "run_keynorm", "run_schemes",
           "run_bound_sweep", "train", "evaluate",
           "machine", "render_text", "plot_result"]


LEAKY_KS = (64, 32, 16, 8)  # seed 000's Leaky ReRoPE table
WINDOW_FRACTIONS = ((1, 8), (1, 4), (1, 2), (3, 4), (1, 1))  # seed 000: w = 64 .. 512 at T = 512


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
        out[key] = round(100 * mean_of(acc), 2)
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
    t0, started = start_clock()
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
    out = report_header("extrapolation", size, seed, corpus, t0, started)
    out.update({"train_len": size.train_len, "test_len": TEST_FACTOR * size.train_len,
                "model": model_config(size).to_dict(), "accuracy_unit": "percent",
                "logn_values": {"none": "no log n", "test": "log n† (max(1, log n/log T) at test only)",
                                "train": "log n trained in (log n/log T at every position)"},
                "rows": rows, "seed_comparison": _seed_orderings(rows, seeds.SEED_000),
                "seed_source": "seed 000, kexue.fm/archives/9708 (YaRN rows: seed 003, kexue.fm/archives/9859)"})
    return finish_report(out, t0)


# -- keynorm (seed 003) -------------------------------------------------------------------------
ATTENTION_LABELS = {"softmax": "Baseline", "qna": "QNA", "kna": "KNA", "cosa": "CosA"}


def run_keynorm(size: Size, seed: int = 0, progress: Progress | None = None) -> dict[str, Any]:
    """Seed 003's tables at toy scale: QNA / KNA / CosA +- log n, trained at T, tested at 8T."""
    t0, started = start_clock()
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
    out = report_header("keynorm", size, seed, corpus, t0, started)
    out.update({"train_len": t, "test_len": s * t, "model": model_config(size).to_dict(), "accuracy_unit": "percent",
                "rows": rows, "seed_comparison": _seed_orderings(rows, seeds.SEED_003),
                "seed_source": "seed 003, kexue.fm/archives/9859"})
    return finish_report(out, t0)


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
    raise UsageError(f"unknown experiment {name!r}; known: {', '.join(EXPERIMENTS)}")


def render_text(r: dict[str, Any]) -> str:
    """The table of one experiment beside the seed's numbers, the orderings, machine and time."""
    if r["experiment"] == "bound":
        return render_bound(r)
    if r["experiment"] == "schemes":
        from .scheme_bounds import render_schemes

        return render_schemes(r)
    if r["experiment"] == "bound-sweep":
        from .sweep import render_sweep

        return render_sweep(r)
    return _render_accuracy(r)


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
    return "\n".join(lines + report_footer(r))


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
        colors = [f"C{i}" for i in range(10)]
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
