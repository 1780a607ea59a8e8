"""``ropelaw plan``: from a setup or a config to a target context, every option with its bound.

Light: no torch, matplotlib or scipy (numpy only for Men et al.'s sums).
"""

from __future__ import annotations

import argparse
import math
from typing import Any

from ..errors import UsageError
from ..plan_run import (  # noqa: F401  (the command's arguments and plan, ropelaw/plan_run.py; re-exported)
    SHORT, add_arguments, build, evaluated, option_lines, parse, short_source)

HELP = "ways to reach a target context: each option's bound, cost, sources and the config edit"
DESCRIPTION = """\
Every way to reach --target from a RoPE setup (flags) or a config the linter reads, the answer first:
"already reaches L: nothing to change", or "set <edit>: reaches L (<bound>, <measured range>);
costs <training>". Options: one base for Liu et al. and Men et al. with continued training,
continued training at the target, Position Interpolation, NTK-aware (as its base), dynamic NTK,
YaRN, the Llama 3.1 bands, LongRoPE (the config's own factors), ReRoPE and Leaky ReRoPE. Each bound
is theory.extrapolation_bound of the option's spec (what `ropelaw bound` prints), shown with the
range ropelaw's experiments measured for such bounds. Ranked: reaching first, then what the
config's format can state, then that evidence, then cost.

--base is the base the model runs with; --pretrain-base (default: --base) the one it was
pre-trained with, as in `ropelaw bound` and `ropelaw base`.

--apply NAME -o OUT writes a copy of the config with option NAME in its dialect's keys (Hugging
Face, axolotl, Megatron-LM flag files, litgpt, torchtitan, LLaMA-Factory, MaxText): only the keys
that change, line endings, order and comments kept; it prints the diff and what `ropelaw lint`
says of the edited file. --dry-run prints the same and writes nothing. Never in place.

example:
  ropelaw plan --d 128 --train 4096 --base 1e4 --target 128k
  ropelaw plan tests/configs/llama-3.2-1b.json --target 256k
  ropelaw plan tests/configs/llama-2-7b.json --target 32k --apply yarn --dry-run
  ropelaw plan tests/configs/llama-3.2-1b.json --target 256k --apply yarn -o new.json
"""


def run(args: argparse.Namespace) -> int:
    from ._common import emit_json

    _check_apply_flags(args)
    p, cfg, dialect, text, checked = evaluated(args)
    done = None
    if args.apply is not None:
        from .plan_apply import applied

        done = applied(args, p, dialect, text, checked)
    if args.format == "json":
        out = p.to_dict()
        if done is not None:
            out["applied"] = done
        emit_json(out)
        return 0
    if done is not None:  # a reviewable edit: the diff and what lint says of it, not the whole plan again
        from .plan_apply import render

        print(f"--apply {args.apply}: " + p.option_line(p.option(args.apply)))
        print(render(done, p.target))
        return 0
    print(render_text(p, dialect))
    return 0


def _check_apply_flags(args: argparse.Namespace) -> None:
    if args.apply is not None and args.config is None:
        raise UsageError("--apply needs a CONFIG to edit")
    if args.apply is not None and args.output is None and not args.dry_run:
        raise UsageError("--apply needs -o OUT (ropelaw plan never edits a config in place), or --dry-run")
    if args.output is not None and args.apply is None:
        raise UsageError("-o needs --apply NAME")
    if args.dry_run and args.apply is None:
        raise UsageError("--dry-run needs --apply NAME")
    if args.output is not None:
        from ..lint.writers import check_output

        check_output(args.config, args.output)  # a FIFO, device or the input itself: refused before any work


def _bound(x: float) -> str:
    from ..numfmt import count

    return "unbounded" if math.isinf(x) else count(round(x))


def render_text(p: Any, dialect: str | None = None) -> str:
    """The verdict first, then the table (bound beside its measured range), precision, caveats, notes."""
    from ..numfmt import count, number

    s = p.spec
    base = (f"base {number(s.base)}" if s.base == s.pretrain_base else
            f"pre-trained at base {number(s.pretrain_base)}, now base {number(s.base)}")
    head = (f"Plan: {count(p.target)} tokens from d={s.d}, trained {count(s.train_len)}, {base}"
            + (f", tuned {count(s.tune_len)}" if s.tune_len is not None else "")
            + (f", scheme {s.scheme}" if s.scheme != "default" else "")
            + f" (critical dimension {p.critical_dimension} of {s.d})")
    lines = [p.verdict(), "", head]
    if p.inputs.get("path"):
        from ..escape import clean  # names from the command line and the file: escaped, one line each

        lines.append(clean(f"  read from {p.inputs['path']} ({dialect or 'config'}): d [{p.inputs['d']}], base "
                           f"[{p.inputs['base']}], trained [{p.inputs['train_len']}]"))
    lines.append("")
    lines.extend(_table(p, dialect))
    lines.extend(_precision_lines(p))
    lines.append("")
    lines.append("how and caveats:")
    for o in p.options:
        lines.extend(option_lines(p, o))
    for n in p.notes:
        lines.append(f"note: {n}")
    return "\n".join(lines)


def _table(p: Any, dialect: str | None) -> list[str]:
    cols = ("rank", "option", "parameters", "bound", "measured (x bound: tokens)", "reaches",
            f"in {dialect}" if dialect else "in a config", "cost")
    keys = ("rank", "option", "parameters", "bound", "measured", "reaches", "format", "cost")
    rows = [cols] + [tuple(r[k] for k in keys) for r in p.rows()]
    widths = [max(len(r[c]) for r in rows) for c in range(len(cols) - 1)]
    right = (0, 3)
    return ["  " + "  ".join(f"{r[c]:>{widths[c]}}" if c in right else f"{r[c]:<{widths[c]}}"
                             for c in range(len(cols) - 1)) + "  " + r[-1] for r in rows]


def _precision_lines(p: Any) -> list[str]:
    from ..numfmt import count

    pr = p.precision
    if pr is None:
        return []
    if pr.get("exact") is None:
        return ["", f"precision: {pr['dtype']}: {pr['note']}"]
    over = f"; overflow from {count(pr['overflow_from'])}" if pr.get("overflow_from") else ""
    out = ["", f"precision at {count(p.target)} tokens in {pr['dtype']}: {count(pr['exact'])} of {count(p.target)} "
               f"positions exact ({100 * pr['exact_fraction']:.2f}%){over}, if positions or angles are computed in it "
               "(`ropelaw exact`)"]
    if pr.get("code_path"):
        out.append(f"  code path: {pr['code_path']}")
    return out
