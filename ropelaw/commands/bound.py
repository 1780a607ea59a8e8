"""``ropelaw bound``: the extrapolation bound of a RoPE setup (Liu et al. 2023).

Light on purpose: stdlib only (no numpy), so the command starts in tens of milliseconds.
"""

from __future__ import annotations

import argparse
import math
from typing import Any

HELP = "extrapolation bound, critical dimension and critical base (Liu et al. 2023)"
DESCRIPTION = """\
Scaling laws of RoPE-based extrapolation (Liu et al. 2023, arXiv 2310.05209):
critical dimension d_extra = 2*ceil((d/2)*log_b(T_train/2pi)), critical base
beta_0 = b^(log_{T_train/2pi}(T_tune/2pi)), and the bound 2*pi*beta^(d_extra/d) above it
(T_tune at or below it). With --scheme the bound goes through the scheme registry;
--pretrained-with-scheme says the scheme was used from the first pre-training step, so the
critical dimension counts the periods of the scheme's frequencies (torchtitan's Llama 3).
--base is the base the model runs with; the pretraining base is --base unless --pretrain-base
says otherwise (Liu et al.'s LLaMA 2, pre-trained at 10,000 and tuned at 1e6: --pretrain-base 1e4).

example:
  ropelaw bound --d 128 --train 4096 --pretrain-base 1e4 --base 1e6
  ropelaw bound --d 128 --train 4096 --base 1e4 --scheme yarn --factor 8 --format json
  ropelaw bound --d 128 --train 8k --base 500k --scheme llama3 --factor 8 --pretrained-with-scheme
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from ._common import add_format, add_spec_arguments

    add_spec_arguments(parser)
    add_format(parser)


def _row(label: str, value: str, note: str = "") -> str:
    """One aligned row; a value wider than its column still keeps two spaces before the note."""
    line = f"  {label:<20}  {value:<14}  {note}" if note else f"  {label:<20}  {value}"
    return line.rstrip()


def _tokens(x: float) -> str:
    """``129,027`` for a token count; ``infinite`` when a frequency underflowed to 0 (period inf)."""
    from ..numfmt import count

    return count(round(x)) if math.isfinite(x) else "infinite"


def render_text(r: Any, spec: Any, suffixes: dict[str, str] | None = None, explicit_pretrain: bool = False) -> str:
    """The text report; ``suffixes`` maps a flag (``train``, ``tune``, ``base``, ``pretrain-base``)
    to how its suffix was read (``"4k = 4 x 1,024"``), shown beside the value; ``explicit_pretrain``:
    ``--pretrain-base`` was given."""
    from ..numfmt import count, number

    said = {k: f"--{k} {v}" for k, v in (suffixes or {}).items() if v}
    tuned = spec.tune_len is not None and spec.tune_len != spec.train_len
    lines = ["RoPE extrapolation bound (scaling laws of RoPE-based extrapolation, Liu et al. 2023)", ""]
    lines.append(_row("rotary dims d", str(r.d)))
    lines.append(_row("training length", count(r.train_len), said.get("train", "")))
    lines.append(_row("tuning length", count(r.tune_len),
                      said.get("tune", "") if tuned else "same as training (--tune to change)"))
    if not explicit_pretrain:
        pre_note = ("same as --base: pre-trained with the scheme at it (--pretrain-base to change)"
                    if r.pretrained_with_scheme else "same as --base: pre-trained at it (--pretrain-base to change)")
    else:
        pre_note = f"({said.get('pretrain-base', '--pretrain-base')})"
    lines.append(_row("pretraining base", number(r.pretrain_base), pre_note))
    lines.append(_row("base", number(r.base), f"at tuning and inference ({said.get('base', '--base')})"))
    if r.scheme != "default":
        params = ", ".join(f"{k}={v}" for k, v in r.params.items())
        lines.append(_row("scheme", r.scheme, f"({params})" if params else ""))
        if r.pretrained_with_scheme:
            lines.append(_row("in pre-training", "yes", "from the first step: the periods counted are the "
                              "scheme's (--pretrained-with-scheme)"))
    lines.append("")
    d, k = r.d, r.critical_pair
    if k is None:
        pairs = f"all {d // 2} pairs saw a full period in training"
    else:
        pairs = (f"pairs 0-{k - 1} saw a full period in training, {k}-{d // 2 - 1} did not" if k
                 else "no pair saw a full period in training")
    lines.append(_row("critical dimension", f"{r.critical_dimension} of {d}", pairs))
    if r.scheme == "default":
        if r.regime == "above_critical_base":
            words = "your base is above it: the bound follows from the critical dimension"
        else:
            words = "your base is at or below it: the bound is the tuning length"
    else:
        words = ("the first untrained pair sets the bound under this scheme"
                 if r.regime == "above_critical_base" else "under this scheme the tuning length is the bound")
    if r.critical_base is None:
        lines.append(_row("critical base", "n/a", "Liu et al.'s beta_0 assumes plain RoPE in pre-training"))
    else:
        lines.append(_row("critical base", number(r.critical_base), words))
    if r.updated_critical_dimension is not None:
        lines.append(_row("updated crit. dim.", f"{r.updated_critical_dimension} of {d}",
                          "= 2*ceil((d/2)*log_beta(T_tune/2pi))" + (", capped at d" if r.capped else "")))
    if r.unbounded:
        head, formula = "unbounded", r.formula
    else:
        head = f"{_tokens(r.extrapolation_bound)} tokens"
        formula = f"= {r.formula}"
    lines.append(_row("extrapolation bound", head, formula))
    if r.scheme != "default":
        if r.critical_pair_period is not None:
            lines.append(_row(f"pair {k} period", f"{number(r.critical_pair_period)} tokens",
                              "at inference, through the scheme"))
        lines.append(_row("plain-RoPE bound", f"{_tokens(r.liu_bound)} tokens",
                          f"Liu et al. at base {number(r.base)} without the scheme"
                          + (", had pre-training used plain RoPE" if r.pretrained_with_scheme else "")))
    thresholds = "  ".join(f"{name} {_threshold(b)}" for name, b in
                           (("beta_1", r.beta_1), ("beta_2", r.beta_2), ("beta_3", r.beta_3)))
    if r.below_thresholds:
        tail = (f"(your base is below {', '.join(r.below_thresholds)}: it degrades slowly past the "
                "tuning length, no sharp upper bound)")
    else:
        tail = "(smaller bases degrade slowly past the tuning length)"
    lines.append(_row("below-bound bases", thresholds + "  " + tail))
    return "\n".join(lines)


def _threshold(beta: float) -> str:
    """A below-bound base with one decimal, as seed 001 prints them (2607.6 / 1303.8 / 651.9), so
    the three line up; from 10^6 on by :func:`number`."""
    from ..numfmt import number

    return f"{beta:,.1f}" if abs(beta) < 1e6 else number(beta)


def run(args: argparse.Namespace) -> int:
    from ..theory import extrapolation_bound
    from ._common import emit_json, spec_from_args, suffix_note

    spec = spec_from_args(args)
    result = extrapolation_bound(spec)
    if args.format == "json":
        emit_json(result.to_dict())
    else:
        suffixes = {"train": suffix_note(args.train), "tune": suffix_note(args.tune),
                    "base": suffix_note(args.base), "pretrain-base": suffix_note(args.pretrain_base)}
        print(render_text(result, spec, suffixes, explicit_pretrain=args.pretrain_base is not None))
    return 0
