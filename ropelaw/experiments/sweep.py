"""The bound experiment at several (d, T): is break / bound a constant of the law? (issue 25)

:func:`run_bound_sweep` runs :func:`.runs.run_bound` unchanged at each (d, T) of
``Size.sweep`` (head dim d, training length T; the rest of the toy as the size says), with the
tokens per step and the evaluated tokens per smoothing window kept as at the size's own T:
batch x T and windows x T/4 fixed (batch and windows scaled by T_size / T).

Written down before any run:

- bases per (d, T): those of ``Size.sweep_bases`` whose predicted bound P lies in
  [2T, 16T/1.5]: far enough past T that a break is not the edge of the training length, and
  early enough that a break as late as 1.5 P (the agreement limit) would be seen within the
  tested 16T. All of them are above the critical base (P > T);
- per base: M / P (measured break over predicted bound; none when the loss never breaks);
- per (d, T): the median of M / P over its bases;
- "constant across sizes": the largest per-size median is within a factor
  ``CONSTANT_FACTOR`` = 1.15 of the smallest (the bound experiment's four full-size ratios
  spread by 1.007; 15% admits seed noise and rejects a trend as large as 0.83 -> 0.70);
- a hypothesis to compare with, descriptive only: if the break is set by the largest angle the
  critical pair k = d_extra/2 saw in pre-training, M / P follows f = T / (2*pi*b^(2k/d)), the
  fraction of its pre-training period that pair saw (0.644, 0.859, 0.725, 0.966 for
  (32, 128), (64, 128), (32, 256), (64, 256)); if it is a constant of the law it does not.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import replace
from typing import Any

from ..errors import UsageError
from .data import load_corpus
from .metrics import AGREEMENT_FACTOR
from .bound import run_bound
from .common import (BOUND_FACTOR, PRETRAIN_BASE, Progress, Size, finish_report, report_footer, report_header,
                     start_clock)

__all__ = ["CONSTANT_FACTOR", "sweep_size", "sweep_bases", "critical_pair_seen_fraction", "run_bound_sweep",
           "render_sweep", "plot_sweep", "sweep_steps"]

CONSTANT_FACTOR = 1.15  # per-size medians of M/P within this factor of each other: "constant"


def sweep_size(size: Size, d: int, train_len: int) -> Size:
    """``size`` at head dim d and training length T, with batch x T and windows x T fixed."""
    scale = size.train_len / train_len
    return replace(size, head_dim=d, train_len=train_len, batch=max(1, round(size.batch * scale)),
                   bound_samples=max(1, round(size.bound_samples * scale)))


def sweep_bases(size: Size, d: int, train_len: int) -> tuple[float, ...]:
    """The bases of ``size.sweep_bases`` whose predicted bound lies in [2T, 16T/1.5] (see the module)."""
    from ..spec import RopeSpec
    from ..theory import extrapolation_bound

    lo, hi = 2 * train_len, BOUND_FACTOR * train_len / AGREEMENT_FACTOR
    out = []
    for beta in sorted(size.sweep_bases):
        p = extrapolation_bound(RopeSpec(d=d, train_len=train_len, base=beta, pretrain_base=PRETRAIN_BASE))
        if lo <= p.extrapolation_bound <= hi:
            out.append(beta)
    return tuple(out)


def critical_pair_seen_fraction(d: int, train_len: int) -> float:
    """f = T / (2*pi*b^(d_extra/d)): the share of its pre-training period that the first pair
    without a full period saw (Liu et al. Lemma 1's pair k = d_extra/2; b = 10,000)."""
    from ..theory import critical_dimension

    d_extra = critical_dimension(d, train_len, PRETRAIN_BASE)
    return train_len / (2 * math.pi * PRETRAIN_BASE ** (d_extra / d))


def sweep_steps(size: Size) -> int:
    """Optimiser steps of a sweep (for a progress bar)."""
    return sum(size.steps + size.tune_steps * len(sweep_bases(size, d, t)) for d, t in size.sweep)


def run_bound_sweep(size: Size, seed: int = 0, progress: Progress | None = None) -> dict[str, Any]:
    """:func:`run_bound` at each (d, T) of ``size.sweep``; break / bound per base and per size."""
    t0, started = start_clock()
    corpus = load_corpus(max_bytes=size.corpus_bytes)
    runs, curves, rows = [], {}, []
    for d, t in size.sweep:
        bases = sweep_bases(size, d, t)
        if not bases:
            raise UsageError(f"no base of {list(size.sweep_bases)} has a bound in [2T, 16T/1.5] at d={d}, T={t}")
        sub = sweep_size(size, d, t)
        r = run_bound(sub, seed=seed, progress=progress, bases=bases, corpus=corpus)
        ratios = [row["ratio"] for row in r["rows"] if row["ratio"] is not None]
        for row in r["rows"]:
            rows.append({"d": d, "train_len": t, **{k: row[k] for k in (
                "base", "predicted_bound", "measured_break", "ratio", "agreement", "regime", "critical_dimension",
                "in_range_loss", "loss_rise_at_end")}})
            curves[f"d{d}-T{t}-{row['base']:g}"] = r["curves"][f"{row['base']:g}"]["loss"]
        runs.append({"d": d, "train_len": t, "test_len": r["test_len"], "batch": sub.batch,
                     "bound_samples": sub.bound_samples, "bases": list(bases),
                     "critical_dimension": r["rows"][0]["critical_dimension"],
                     "critical_pair_seen_fraction": round(critical_pair_seen_fraction(d, t), 4),
                     "median_ratio": round(statistics.median(ratios), 3) if ratios else None,
                     "ratios": ratios, "breaks_seen": len(ratios),
                     "agree": sum(row["agreement"] == "agrees" for row in r["rows"]),
                     "pretrain_final_loss": r["pretrain_final_loss"], "seconds": r["seconds"],
                     "cpu_seconds": r.get("cpu_seconds")})
    medians = [x["median_ratio"] for x in runs if x["median_ratio"] is not None]
    all_ratios = [x for run in runs for x in run["ratios"]]
    spread = max(medians) / min(medians) if len(medians) > 1 and min(medians) > 0 else None
    out = report_header("bound-sweep", size, seed, corpus, t0, started)
    out.update({"pretrain_base": PRETRAIN_BASE, "sweep": [list(p) for p in size.sweep], "runs": runs, "rows": rows,
                "summary": {"ratio_min": min(all_ratios) if all_ratios else None,
                            "ratio_max": max(all_ratios) if all_ratios else None,
                            "median_min": min(medians) if medians else None,
                            "median_max": max(medians) if medians else None,
                            "median_spread": None if spread is None else round(spread, 3),
                            "constant_factor": CONSTANT_FACTOR,
                            "constant": None if spread is None else spread <= CONSTANT_FACTOR},
                "curves": curves})
    return finish_report(out, t0)


# -- text -----------------------------------------------------------------------------------------
def render_sweep(r: dict[str, Any]) -> str:
    lines = ["The bound experiment at several head dims d and training lengths T (Liu et al. 2023, seed 001): "
             f"pre-trained at base {r['pretrain_base']:g}, continued at each base, loss to 16T",
             "ratio = measured break / predicted bound 2*pi*beta^(d_extra/d); bases with a bound in [2T, 16T/1.5]", "",
             f"{'d':>4} {'T':>5} {'base':>8} {'predicted':>10} {'measured':>9} {'ratio':>6}  {'verdict':<8}"]
    for row in r["rows"]:
        ratio = "-" if row["ratio"] is None else f"{row['ratio']:.2f}"
        measured = "none" if row["measured_break"] is None else f"{row['measured_break']:,}"
        lines.append(f"{row['d']:>4} {row['train_len']:>5} {row['base']:>8g} {row['predicted_bound']:>10,.0f} "
                     f"{measured:>9} {ratio:>6}  {row['agreement']:<8}")
    lines += ["", f"{'d':>4} {'T':>5} {'d_extra':>7} {'f = T/period_k':>14} {'median ratio':>12}  bases agreeing"]
    for run in r["runs"]:
        med = "-" if run["median_ratio"] is None else f"{run['median_ratio']:.3f}"
        lines.append(f"{run['d']:>4} {run['train_len']:>5} {run['critical_dimension']:>7} "
                     f"{run['critical_pair_seen_fraction']:>14.3f} {med:>12}  {run['agree']} of {len(run['bases'])}")
    s = r["summary"]
    if s["constant"] is None:
        lines += ["", "constant across sizes: not decided (fewer than two sizes with a measured break)"]
    else:
        lines += ["", f"ratios {s['ratio_min']:.2f}-{s['ratio_max']:.2f}; per-size medians {s['median_min']:.3f}-"
                  f"{s['median_max']:.3f} (spread x{s['median_spread']:.3f}): "
                  + ("constant" if s["constant"] else "not constant")
                  + f" across sizes by the rule (spread <= x{s['constant_factor']})"]
    return "\n".join(lines + report_footer(r))


# -- figure ---------------------------------------------------------------------------------------
def plot_sweep(r: dict[str, Any]):
    """Left: break / bound per base for each (d, T), with the per-size median; right: the median
    against f = T / period_k, the share of the critical pair's period seen in pre-training."""
    from ..errors import require

    require("matplotlib", "plot", "plotting")
    from matplotlib.figure import Figure

    fig = Figure(figsize=(10.0, 4.2), layout="constrained")
    ax, ax2 = fig.subplots(1, 2)
    for i, run in enumerate(r["runs"]):
        c, tag = f"C{i}", f"d{run['d']}-T{run['train_len']}"
        sel = [row for row in r["rows"] if row["d"] == run["d"] and row["train_len"] == run["train_len"]]
        xs = [row["predicted_bound"] / run["train_len"] for row in sel if row["ratio"] is not None]
        ys = [row["ratio"] for row in sel if row["ratio"] is not None]
        ax.plot(xs, ys, "o-", color=c, label=f"d={run['d']}, T={run['train_len']}", gid=f"ratios-{tag}")
        if run["median_ratio"] is not None:
            ax.axhline(run["median_ratio"], color=c, ls=":", lw=0.9, gid=f"median-{tag}")
            ax2.plot([run["critical_pair_seen_fraction"]], [run["median_ratio"]], "o", color=c, ms=7,
                     gid=f"median-vs-f-{tag}")
            ax2.annotate(f"d={run['d']}, T={run['train_len']}", (run["critical_pair_seen_fraction"],
                         run["median_ratio"]), fontsize=7, xytext=(4, 4), textcoords="offset points")
    ax.axhline(1.0, color="k", lw=0.7, gid="ratio-1")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("predicted bound / T")
    ax.set_ylabel("measured break / predicted bound")
    ax.set_title("break / bound per base (dotted: per-size median)", fontsize=9)
    ax.legend(fontsize=8)
    lim = [0.3, 1.05]
    ax2.plot(lim, lim, color="0.5", lw=0.8, ls="--", gid="ratio-equals-f")
    ax2.set_xlim(*lim)
    ax2.set_ylim(0.3, 1.2)
    ax2.set_xlabel("f = T / pre-training period of the critical pair")
    ax2.set_ylabel("median break / bound")
    ax2.set_title("constant of the law (flat) or the angle seen (on the dashed line)?", fontsize=9)
    return fig
