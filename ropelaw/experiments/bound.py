"""The bound experiment (Liu et al. 2023, arXiv 2310.05209, seed 001): pre-train at T and base 1e4,
continue training at several bases, and set each base's measured break point
(:func:`ropelaw.experiments.metrics.break_point`) beside the bound ``ropelaw bound`` predicts.
"""

from __future__ import annotations

import math
from itertools import pairwise
from typing import Any

from ..errors import UsageError
from . import seeds
from .common import (BOUND_FACTOR, PRETRAIN_BASE, Progress, Size, finish_report, fmt_len, report_footer, report_header,
                     mean_of, start_clock, evaluate, model_config, train)
from .data import load_corpus, nonrepeated_samples
from .metrics import AGREEMENT_FACTOR, BREAK_MARGIN, agreement, break_point, smoothed
from .model import TinyLM

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
            raise UsageError(f"bases must be > 1, got {list(bases)}")
    from ..spec import RopeSpec
    from ..theory import extrapolation_bound

    t0, started = start_clock()
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
        ref = mean_of(loss[t // 2: t])
        end = smoothed(loss, max(1, t // 4))[-1]
        rows.append({"base": beta, "predicted_bound": round(pred.extrapolation_bound, 1),
                     "measured_break": measured, "agreement": verdict,
                     "ratio": None if ratio is None else round(ratio, 3), "regime": pred.regime,
                     "critical_dimension": pred.critical_dimension, "in_range_loss": round(ref, 4),
                     "loss_rise_at_end": round(end - ref, 4), "tune_final_loss": round(mean_of(tune[-10:]), 4)})
        curves[f"{beta:g}"] = {"loss": [round(x, 4) for x in loss], "accuracy": [round(x, 4) for x in acc]}
    out = report_header("bound", size, seed, corpus, t0, started)
    if bases is not None:
        out["tag"] = f"{len(bases)}bases"
    out.update({"train_len": t, "test_len": test_len, "pretrain_base": PRETRAIN_BASE,
                "model": model_config(size).to_dict(), "pretrain_final_loss": round(mean_of(pre_loss[-10:]), 4),
                "break_rule": {"reference": "mean loss over positions [T/2, T)", "smoothing": "trailing mean over T/4",
                               "margin_nats": BREAK_MARGIN, "agreement_factor": AGREEMENT_FACTOR},
                "rows": rows, "curves": curves, "seed_comparison": _bound_claims(rows, test_len)})
    return finish_report(out, t0)


def _bound_claims(rows: list[dict], test_len: int) -> list[dict]:
    """Seed 001's two qualitative claims, checked on the measured rows."""
    above = [r for r in rows if r["regime"] == "above_critical_base"]
    below = [r for r in rows if r["regime"] != "above_critical_base"]
    breaks = [math.inf if r["measured_break"] is None else r["measured_break"] for r in above]
    # the bound must grow: never decreasing with the base, and later at the largest base than at the smallest
    c1 = (all(a <= b for a, b in pairwise(breaks)) and breaks[-1] > breaks[0]) if len(above) > 1 else None
    rises = [r["loss_rise_at_end"] for r in below]  # bases ascending: the rise should grow with the base
    c2 = all(a <= b for a, b in pairwise(rises)) if len(below) > 1 else None
    return [
        {"claim": seeds.SEED_001_CLAIMS[0], "check": "measured breaks of the bases above the critical base "
         "never decrease and end later than they start as the base grows", "bases": [r["base"] for r in above],
         "values": [r["measured_break"] for r in above], "match": c1},
        {"claim": seeds.SEED_001_CLAIMS[1], "check": f"loss rise at {test_len} tokens grows with the base "
         "among the bases at or below the critical base", "bases": [r["base"] for r in below],
         "values": rises, "match": c2},
    ]


def render_bound(r: dict[str, Any]) -> str:
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
        measured = fmt_len(row["measured_break"]) if row["measured_break"] is not None else \
            f"> {r['test_len'] - 1:,}"
        lines.append(f"{row['base']:>10g} {regime:>8} {fmt_len(row['predicted_bound']):>16} {measured:>15} "
                     f"{ratio:>7}  {row['agreement']:<8} {row['in_range_loss']:>13.3f} "
                     f"{row['loss_rise_at_end']:>+11.3f}")
    agree = sum(row["agreement"] == "agrees" for row in r["rows"])
    lines += ["", f"predicted vs measured: {agree} of {len(r['rows'])} bases agree"]
    for c in r["seed_comparison"]:
        state = {True: "matches", False: "does not match", None: "not tested (too few bases)"}[c["match"]]
        lines.append(f"seed 001: {c['claim']}: {state} ({c['check']}: {c['values']})")
    return "\n".join(lines + report_footer(r))
