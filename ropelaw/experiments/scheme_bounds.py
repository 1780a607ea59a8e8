"""The extrapolation bound under each scaling scheme, predicted by ropelaw and measured (issue 25).

Setup (seed 001's, with a scheme in place of a new base): the toy of :mod:`.model` pre-trained
at T and base b = 10,000 (the same model, data and seed as :func:`.runs.run_bound`), then for
each scheme S and factor s (PI = ``linear``, NTK-aware = ``ntk``, dynamic NTK = ``dynamic``,
YaRN = ``yarn``, Llama 3.1 bands = ``llama3``, each at s = 4 and 8; plus plain RoPE as the
reference row):

- ``inference``: the pre-trained weights run with S at s, no training;
- ``tuned``: a short continued training at T with S at s in force (the bound experiment's
  continued training: ``tune_steps`` at lr/3, seed + 1), then run with S at s.

Loss per position out to 16T over the bound experiment's held-out windows.

The rule, written down before any run (nothing here is fitted to a result):

- predicted bound P: ``ropelaw.theory.extrapolation_bound`` of
  ``RopeSpec(d, T, base=b, pretrain_base=b, scheme=S, params={"factor": s})``, tuning length
  T: the number ``ropelaw bound --d d --train T --base 1e4 --scheme S --param factor=s``
  prints. It is the same for both rows of a scheme (continued training at T leaves the
  critical dimension of pre-training as it is);
- measured break M: :func:`.metrics.break_point` of the loss curve, unchanged (first p >= T
  whose trailing mean over T/4 exceeds the mean over [T/2, T) of the same curve by 0.2 nats);
- verdict: :func:`.metrics.agreement`, unchanged, the bound experiment's tolerance: "agrees"
  when M/P lies in [1/1.5, 1.5] or when neither breaks within 16T; otherwise "earlier" or
  "later", reported as it is;
- descriptive only, never part of the verdict: M/P beside the plain-RoPE constant of the bound
  experiment (0.83 at full size for bases 3e4-1e6), the in-range loss (mean over [T/2, T))
  beside the unscaled model's, and the loss rise at 16T.

Added after the quick run, a reading and not a verdict: where each curve jumps the most
(:func:`.metrics.steepest_rise`, over T/4 positions on either side) and that position over P.
The quick run showed curves that creep up past T before they jump (dynamic NTK, whose scale
grows with the length; Llama 3 x8 at inference), where the rule fires on the creep; the jump's
position says whether the critical pair's bound is still where the loss collapses.

Length-dependent schemes (dynamic NTK) run "as they run": the loss at position p comes from a
forward whose frequencies are those of the input length at that moment (the registry's
``apply_scheme(spec, seq_len=L)``, every position re-rotated, as a forward over the whole input
computes it in transformers). Doing so for every p costs one forward per position, so
:func:`evaluate_as_it_runs` groups positions: lengths T, then each next length
``L + ceil(L / R)`` (R = ``Size.dynamic_resolution``, 16), the positions [L_prev, L) taken
from the forward of length L. A position p is thus run at a length less than 1/R beyond p + 1,
which can only lengthen the periods it sees (dynamic NTK's base grows with L): with R = 16, at
the predicted bounds of d = 32, T = 128 (598 and 983 tokens at factors 4 and 8) the critical
pair's period is at most 2.9% and 2.7% longer than exact, so a measured break there can be late
by about that much, never early (closer to T, where the effective factor starts from 1, more).
(A decoder with a KV cache of keys rotated at earlier lengths, as transformers' generation keeps
them, runs yet another mix; it is not modelled.)

Dynamic NTK at T is plain RoPE (its effective factor is 1 up to the original length), so its
continued training is plain RoPE's: the tuned model is shared, and the row says so
(``shares_tuning_with``).
"""

from __future__ import annotations

import math
from typing import Any

import torch

from ..errors import UsageError
from ..spec import RopeSpec
from .data import load_corpus, nonrepeated_samples
from .metrics import (AGREEMENT_FACTOR, BREAK_MARGIN, agreement, break_point, smoothed, steepest_rise,
                      token_metrics)
from .model import PositionMethod, TinyLM
from .common import (BOUND_FACTOR, PRETRAIN_BASE, Progress, Size, finish_report, report_footer, fmt_len, report_header,
                     mean_of, start_clock, evaluate, model_config, train)

__all__ = ["SCHEMES_TESTED", "SCHEME_LABELS", "run_schemes", "evaluate_as_it_runs", "growing_lengths",
           "predicted_bound", "render_schemes", "plot_schemes", "PLAIN_ROPE_RATIO"]

# the registry's names, in the order of the table; "default" (plain RoPE) is the reference row
SCHEMES_TESTED = ("default", "linear", "ntk", "dynamic", "yarn", "llama3")
SCHEME_LABELS = {"default": "plain RoPE", "linear": "PI", "ntk": "NTK-aware", "dynamic": "dynamic NTK",
                 "yarn": "YaRN", "llama3": "Llama 3"}
# the bound experiment's measured break / predicted bound for bases 3e4-1e6 at full size
# (docs/experiments/bound-full.json: 0.837, 0.834, 0.832, 0.831): shown beside each ratio, not a rule
PLAIN_ROPE_RATIO = 0.83


def predicted_bound(d: int, train_len: int, scheme: str, factor: float | None):
    """``extrapolation_bound`` of the toy under ``scheme`` at ``factor`` (the BoundResult), as
    ``ropelaw bound --d d --train T --base 1e4 --scheme S --param factor=s`` computes it."""
    from ..theory import extrapolation_bound

    params = {} if factor is None else {"factor": factor}
    return extrapolation_bound(RopeSpec(d=d, train_len=train_len, base=PRETRAIN_BASE, pretrain_base=PRETRAIN_BASE,
                                        scheme=scheme, params=params))


def growing_lengths(train_len: int, length: int, resolution: int) -> list[int]:
    """Input lengths of :func:`evaluate_as_it_runs`: min(T, length), then L + ceil(L/R) up to ``length``.

    Position p is evaluated at the first length L > p; for p >= T, L <= p + ceil(p/R) (the
    length before it, L' <= p, grew by ceil(L'/R)), so L - (p + 1) < p/R: within a factor
    1 + 1/R of the exact p + 1.
    """
    if resolution < 1 or length < 1 or train_len < 1:
        raise UsageError(f"lengths and resolution must be >= 1, got T={train_len}, length={length}, R={resolution}")
    ends = [min(train_len, length)]
    while ends[-1] < length:
        ends.append(min(length, ends[-1] + max(1, math.ceil(ends[-1] / resolution))))
    return ends


@torch.no_grad()
def evaluate_as_it_runs(model: TinyLM, samples: torch.Tensor, method: PositionMethod, resolution: int,
                        batch: int = 8) -> list[float]:
    """Mean loss per position of a length-dependent scheme, each position at the length it runs at.

    samples (N, L+1) int64. For each length L_j of :func:`growing_lengths` the model runs on the
    first L_j tokens (frequencies at seq_len = L_j) and keeps the losses of positions
    [L_{j-1}, L_j). Returns L means (nats).
    """
    model.eval()
    n, length = samples.shape[0], samples.shape[1] - 1
    total = torch.zeros(length, dtype=torch.float64)  # (L,) float64
    start = 0
    for end in growing_lengths(model.cfg.train_len, length, resolution):
        for i in range(0, n, batch):
            w = samples[i:i + batch, :end + 1]
            loss, _ = token_metrics(model(w[:, :-1], method), w[:, 1:])  # (end,) sums over the batch
            total[start:end] += loss[start:end]
        start = end
    return (total / n).tolist()


def _length_dependent(model: TinyLM, method: PositionMethod, length: int) -> bool:
    """Whether the scheme's frequencies change with the input length (dynamic NTK does)."""
    a, b = model.frequencies(method, model.cfg.train_len), model.frequencies(method, length)
    return not (torch.equal(a[0], b[0]) and a[1] == b[1])


def _method(scheme: str, factor: float | None) -> PositionMethod:
    return PositionMethod(scheme=scheme, params=() if factor is None else (("factor", factor),))


def _label(scheme: str, factor: float | None) -> str:
    return SCHEME_LABELS[scheme] + ("" if factor is None else f" x{factor:g}")


def run_schemes(size: Size, seed: int = 0, progress: Progress | None = None) -> dict[str, Any]:
    """Predicted bound vs measured break for each scheme and factor, at inference and after tuning."""
    t0, started = start_clock()
    corpus = load_corpus(max_bytes=size.corpus_bytes)
    t, d = size.train_len, size.head_dim
    test_len = BOUND_FACTOR * t
    base_model = TinyLM(model_config(size, base=PRETRAIN_BASE), seed=seed)
    pre_loss = train(base_model, corpus.train, steps=size.steps, batch=size.batch, lr=size.lr, seed=seed,
                     progress=progress)
    samples = nonrepeated_samples(corpus.test, test_len, size.bound_samples, seed=seed + 1000)
    plain_loss, _ = evaluate(base_model, samples)
    plain_ref = mean_of(plain_loss[t // 2: t])
    tuned_models: dict[tuple, tuple[TinyLM, str, float]] = {}  # trained frequencies -> (model, scheme, loss)
    rows, curves = [], {}
    for scheme in SCHEMES_TESTED:
        for factor in ((None,) if scheme == "default" else size.scheme_factors):
            pm = _method(scheme, factor)
            pred = predicted_bound(d, t, scheme, factor)
            dynamic = _length_dependent(base_model, pm, test_len)
            inv_freq, attn = base_model.frequencies(pm, t)  # what continued training at T runs with
            key = (tuple(inv_freq.tolist()), attn)
            shared = key in tuned_models
            if not shared:
                model = TinyLM(base_model.cfg)
                model.load_state_dict(base_model.state_dict())
                tune = train(model, corpus.train, steps=size.tune_steps, batch=size.batch, lr=size.lr / 3,
                             seed=seed + 1, warmup=max(1, size.tune_steps // 20), progress=progress, method=pm)
                tuned_models[key] = (model, scheme, mean_of(tune[-10:]))
            tuned, tuned_by, tune_final = tuned_models[key]
            for training, model in (("inference", base_model), ("tuned", tuned)):
                if training == "inference" and scheme == "default":
                    loss = plain_loss
                elif dynamic:
                    loss = evaluate_as_it_runs(model, samples, pm, size.dynamic_resolution)
                else:
                    loss, _ = evaluate(model, samples, pm)
                measured = break_point(loss, t)
                verdict, ratio = agreement(pred.extrapolation_bound, measured, test_len)
                ref = mean_of(loss[t // 2: t])
                jump = steepest_rise(loss, t)
                key_curve = f"{scheme}-{'plain' if factor is None else f'{factor:g}'}-{training}"
                rows.append({
                    "scheme": scheme, "label": _label(scheme, factor), "factor": factor, "training": training,
                    "predicted_bound": round(pred.extrapolation_bound, 1), "measured_break": measured,
                    "agreement": verdict, "ratio": None if ratio is None else round(ratio, 3),
                    "regime": pred.regime, "critical_pair": pred.critical_pair, "formula": pred.formula,
                    "length_dependent": dynamic, "in_range_loss": round(ref, 4),
                    "in_range_cost": round(ref - plain_ref, 4),
                    "loss_rise_at_end": round(smoothed(loss, max(1, t // 4))[-1] - ref, 4),
                    "steepest_rise_at": None if jump is None else jump[0],
                    "steepest_rise_nats": None if jump is None else round(jump[1], 4),
                    "steepest_rise_ratio": None if jump is None else round(jump[0] / pred.extrapolation_bound, 3),
                    "tune_final_loss": round(tune_final, 4) if training == "tuned" else None,
                    "shares_tuning_with": tuned_by if training == "tuned" and tuned_by != scheme else None,
                    "curve": key_curve,
                })
                curves[key_curve] = [round(x, 4) for x in loss]
    out = report_header("schemes", size, seed, corpus, t0, started)
    out.update({"train_len": t, "test_len": test_len, "pretrain_base": PRETRAIN_BASE,
                "factors": list(size.scheme_factors),
                "model": model_config(size).to_dict(), "pretrain_final_loss": round(mean_of(pre_loss[-10:]), 4),
                "plain_in_range_loss": round(plain_ref, 4),
                "break_rule": {"reference": "mean loss over positions [T/2, T)", "smoothing": "trailing mean over T/4",
                               "margin_nats": BREAK_MARGIN, "agreement_factor": AGREEMENT_FACTOR},
                "dynamic_resolution": size.dynamic_resolution, "plain_rope_ratio": PLAIN_ROPE_RATIO,
                "rows": rows, "curves": curves})
    return finish_report(out, t0)


# -- text -----------------------------------------------------------------------------------------
def render_schemes(r: dict[str, Any]) -> str:
    mc = r["model"]
    lines = [f"Extrapolation bound under each scaling scheme: d={mc['head_dim']}, T={r['train_len']}, pre-trained at "
             f"base {r['pretrain_base']:g}; each scheme at inference and after continued training at T; loss to "
             f"{r['test_len']:,} tokens",
             f"predicted: ropelaw bound --scheme S --param factor=s; break rule: trailing mean (T/4) above the mean "
             f"over [T/2, T) by {r['break_rule']['margin_nats']} nats; agreement within a factor "
             f"{r['break_rule']['agreement_factor']}", "",
             f"{'scheme':<16} {'training':<9} {'predicted':>9} {'measured':>9} {'ratio':>6}  {'verdict':<8} "
             f"{'in-range loss':>13} {'vs plain':>8} {'rise at end':>11}  {'steepest rise':>13} {'/ pred.':>7}"]
    for row in r["rows"]:
        ratio = "-" if row["ratio"] is None else f"{row['ratio']:.2f}"
        measured = fmt_len(row["measured_break"]) if row["measured_break"] is not None else \
            f">{r['test_len'] - 1:,}"
        jump = row.get("steepest_rise_at")
        jump_text = "-" if jump is None else f"{jump:,} ({row['steepest_rise_nats']:+.2f})"
        jump_ratio = "-" if jump is None else f"{row['steepest_rise_ratio']:.2f}"
        lines.append(f"{row['label']:<16} {row['training']:<9} {fmt_len(row['predicted_bound']):>9} {measured:>9} "
                     f"{ratio:>6}  {row['agreement']:<8} {row['in_range_loss']:>13.3f} {row['in_range_cost']:>+8.3f} "
                     f"{row['loss_rise_at_end']:>+11.3f}  {jump_text:>13} {jump_ratio:>7}")
    lines.append("")
    for training in ("inference", "tuned"):
        sel = [row for row in r["rows"] if row["training"] == training]
        agree = sum(row["agreement"] == "agrees" for row in sel)
        lines.append(f"{training}: {agree} of {len(sel)} rows agree")
    lines.append("steepest rise (read after the quick run, not the rule): where the mean over the next T/4 "
                 "positions exceeds the previous T/4's the most")
    if any(row["length_dependent"] for row in r["rows"]):
        lines.append(f"length-dependent schemes run at each length (lengths grow by 1/{r['dynamic_resolution']})")
    shared = sorted({row["label"] for row in r["rows"] if row["shares_tuning_with"]})
    if shared:
        lines.append(f"continued training at T is plain RoPE's for: {', '.join(shared)}")
    return "\n".join(lines + report_footer(r))


# -- figure ---------------------------------------------------------------------------------------
def plot_schemes(r: dict[str, Any]):
    """One panel per scheme: loss curves (inference: dashed, tuned: solid; one colour per factor),
    the predicted bound as a vertical line in the factor's colour, dots at the measured breaks."""
    from ..errors import require

    require("matplotlib", "plot", "plotting")
    from matplotlib.figure import Figure

    t = r["train_len"]
    fig = Figure(figsize=(12.0, 7.0), layout="constrained")
    axes = fig.subplots(2, 3, sharex=True, sharey=True).ravel()
    factors = r["factors"]
    colors = {None: "0.3", **{f: f"C{i}" for i, f in enumerate(factors)}}
    for ax, scheme in zip(axes, SCHEMES_TESTED, strict=True):  # 2 x 3 panels, 6 schemes
        for row in (x for x in r["rows"] if x["scheme"] == scheme):
            c = colors.get(row["factor"], "k")
            curve = smoothed(r["curves"][row["curve"]], max(1, t // 4))
            ls = "--" if row["training"] == "inference" else "-"
            name = ("" if row["factor"] is None else f"x{row['factor']:g} ") + row["training"]
            ax.plot(range(1, len(curve) + 1), curve, color=c, ls=ls, lw=1.1, label=name, gid=f"loss-{row['curve']}")
            if row["predicted_bound"] <= r["test_len"]:
                ax.axvline(row["predicted_bound"], color=c, ls=":", lw=1.0, gid=f"predicted-{row['curve']}")
            if row["measured_break"] is not None:
                ax.plot([row["measured_break"] + 1], [curve[row["measured_break"]]], "o", color=c, ms=5,
                        gid=f"break-{row['curve']}")
            if row.get("steepest_rise_at") is not None:
                p = row["steepest_rise_at"]
                ax.plot([p + 1], [curve[p]], "v", color=c, ms=5, mfc="none", gid=f"steepest-{row['curve']}")
        ax.axvline(t, color="k", lw=0.6, ls="-.", gid=f"train_len-{scheme}")
        ax.set_xscale("log", base=2)
        ax.set_title(SCHEME_LABELS[scheme], fontsize=9)
        ax.legend(fontsize=7)
    for ax in axes[3:]:
        ax.set_xlabel("position (tokens)")
    for ax in axes[::3]:
        ax.set_ylabel(f"loss, nats (trailing mean over {t // 4})")
    fig.suptitle(f"Loss per position under each scheme (d={r['model']['head_dim']}, T={t}, base "
                 f"{r['pretrain_base']:g}): dashed = at inference, solid = after continued training at T;\n"
                 "dotted vertical = predicted bound (ropelaw bound --scheme), dot = measured break (the rule), "
                 "open triangle = steepest rise, dash-dot = T",
                 fontsize=9)
    return fig
