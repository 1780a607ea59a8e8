"""``ropelaw plan``: from a setup or a config to a target context, every option with its bound.

Light: no torch, matplotlib or scipy (numpy only for Men et al.'s sums).
"""

from __future__ import annotations

import argparse
import math
from typing import Any

from ..errors import UsageError

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


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from ._common import BASE_HELP, LENGTH_HELP, PRETRAIN_HELP, add_format, base, length, number

    parser.add_argument("config", nargs="?", metavar="CONFIG",
                        help="a config ropelaw lint reads (config.json, YAML, TOML); or give --d --train --base")
    g = parser.add_argument_group("RoPE setup (without CONFIG)")
    g.add_argument("--d", type=number, metavar="D", help="rotary dimension (even)")
    g.add_argument("--base", type=base, metavar="B", help=f"the base the model runs with, rope_theta ({BASE_HELP})")
    g.add_argument("--pretrain-base", type=base, metavar="B", help=PRETRAIN_HELP)
    g.add_argument("--scheme", default="default", metavar="NAME", help="the scaling scheme the model runs now "
                                                                       "(see `ropelaw schemes`; default: plain RoPE)")
    g.add_argument("--factor", type=number, metavar="S", help="its factor")
    parser.add_argument("--train", type=length, metavar="T", help=f"pre-training length ({LENGTH_HELP}); with "
                                                                  "CONFIG it overrides the config's")
    parser.add_argument("--tune", type=length, metavar="T", help="length of a tuning run already done / planned")
    parser.add_argument("--target", type=length, required=True, metavar="L",
                        help=f"the context to reach ({LENGTH_HELP})")
    parser.add_argument("--dtype", metavar="DTYPE", help="model dtype for the precision line (bf16, fp16, fp32); "
                                                         "with CONFIG only when the config has none")
    parser.add_argument("--apply", metavar="NAME", help="write the config edit of option NAME (needs CONFIG and -o)")
    parser.add_argument("-o", "--output", metavar="OUT", help="where --apply writes the edited copy")
    parser.add_argument("--dry-run", action="store_true", help="with --apply: print the diff, write nothing")
    add_format(parser)


def parse(argv: list[str]) -> argparse.Namespace:
    """The arguments of ``ropelaw plan ARGV`` (what ``explore()`` and the tests build a plan from, as the CLI does);
    ``ValueError`` for arguments argparse refuses."""
    class _Parser(argparse.ArgumentParser):
        def error(self, message: str):  # one line, as the CLI says it
            raise UsageError(message)

    parser = _Parser(prog="ropelaw plan", add_help=False)
    add_arguments(parser)
    return parser.parse_args(argv)


def evaluated(args: argparse.Namespace):
    """``(plan, cfg, dialect, text, checked)`` exactly as ``ropelaw plan`` makes them: the plan, each
    option's edit for a config, verified (``plan_apply.check_edits``) and ranked."""
    p, data, cfg, dialect, text = build(args)
    checked: dict = {}
    if cfg is not None:
        from ..lint.writers import edits_for
        from .plan_apply import check_edits

        edits, why = edits_for(dialect, data, cfg, p.options, p.target)
        for o, e in zip(p.options, edits):
            o.edit = e
        if why:
            p.notes.append(f"no edit is written: {why}")
        checked = check_edits(p, cfg, text, args.tune, args.output)  # each edit applied, read back and linted
        p.rank()  # what the file's format can state ranks first
    return p, cfg, dialect, text, checked


def _spec_from_flags(args: argparse.Namespace):
    from ..spec import RopeSpec
    from ._common import check_d_limit

    missing = [f for f, v in (("--d", args.d), ("--train", args.train), ("--base", args.base)) if v is None]
    if missing:
        raise UsageError(f"give a CONFIG, or {', '.join(missing)} (with --d, --train and --base)")
    check_d_limit(args.d)
    pretrain = args.pretrain_base if args.pretrain_base is not None else args.base
    params = {"factor": args.factor} if args.factor is not None else {}
    if args.scheme == "default" and params:
        raise UsageError("--factor needs the --scheme it scales")
    return RopeSpec(d=args.d, train_len=args.train, base=args.base, pretrain_base=pretrain, tune_len=args.tune,
                    scheme=args.scheme, params=params)


def build(args: argparse.Namespace):
    """``(plan, data, cfg, dialect, text)`` from the command line (all but the plan None without CONFIG;
    ``text`` is the one read of the config that the plan and ``--apply`` both use)."""
    from ..limits import MAX_CONTEXT
    from ..lint.loader import load_text, read_source_text
    from ..numfmt import count
    from ..plan import plan, plan_config

    if args.target > MAX_CONTEXT:
        raise UsageError(f"--target {count(args.target)} is beyond the longest context ropelaw plans "
                         f"(2^31 - 1 = {MAX_CONTEXT:,} tokens, see `ropelaw rule RV013`)")
    if args.dtype is not None:
        from ..formats import get_format

        get_format(args.dtype)
    if args.config is None:
        spec = _spec_from_flags(args)
        _check_target(args.target, spec.train_len, "--train")
        inputs = {"d": "--d", "base": "--base", "train_len": "--train", "tune_len": "--tune" if args.tune else None,
                  "pretrain_base": "--pretrain-base" if args.pretrain_base is not None else "--base"}
        return plan(spec, args.target, dtype=args.dtype, inputs=inputs), None, None, None, None
    if (args.d is not None or args.base is not None or args.pretrain_base is not None or args.factor is not None
            or args.scheme != "default"):
        raise UsageError("--d, --base, --pretrain-base, --scheme and --factor describe a setup without a CONFIG; "
                         "with CONFIG they come from the file")
    path = args.config
    text = read_source_text(path)  # the one read: planned on, and edited by --apply
    data, dialect = _document(path, text)
    cfg = load_text(path, text, train=args.train, tune=args.tune, dtype=args.dtype)
    train = cfg.train_len.number()
    if train is None:
        raise UsageError(f"{path}: no training length ({cfg.train_len.where}); pass --train")
    _check_target(args.target, int(train), cfg.train_len.where)
    try:
        p = plan_config(cfg, args.target, dialect=dialect)
    except ValueError as exc:
        raise UsageError(f"{path}: {exc}") from None
    return p, data, cfg, dialect, text


def _document(path: str, text: str) -> tuple[Any, str | None]:
    """``(mapping, dialect name)`` of the config's text, as the writers see it."""
    from ..lint import dialects
    from ..lint.loader import SHELL_SUFFIXES, format_of, parse_text

    if path.lower().endswith(SHELL_SUFFIXES):
        from ..lint.dialects.maxtext import launch_of
        from ..lint.dialects.megatron import shell_flags

        launch = launch_of(path, text)
        if launch is not None:
            return launch[0], "maxtext"
        return shell_flags(path, text)[0], "megatron"
    data, _ = parse_text(text, format_of(path), path)
    return data, dialects.pick(data).name if isinstance(data, dict) else None


def _check_target(target: int, train: int, where: str) -> None:
    from ..numfmt import count

    if target < train:
        raise UsageError(f"--target {count(target)} is below the training length {count(train)} ({where}): "
                         "nothing to extend")


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


SHORT = {"Liu": "Liu et al. 2310.05209", "Men": "Men et al. 2405.14591", "Chen": "Chen et al. 2306.15595",
         "Peng": "YaRN 2309.00071", "bloc97": "NTK-aware (bloc97; Su 9675)",
         "Hugging Face _compute_dynamic": "HF dynamic NTK",
         "Llama 3.1": "Llama 3.1 bands (HF)", "Ding": "LongRoPE 2402.13753", "Su 2023": "seed 000 (Su 9708)"}


def short_source(s: str) -> str:
    for k, v in SHORT.items():
        if s.startswith(k):
            return v
    return s


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


def option_lines(p: Any, o: Any) -> list[str]:
    from ..numfmt import count

    if o.name == "current":
        return [f"  current: {o.evidence.text()}"] if o.evidence is not None and o.evidence.low is not None else []
    lines = [f"  {o.name}: {o.how} [{short_source(o.source)}]"]
    if o.evidence is not None:
        lines.append(f"    - measured: {o.evidence.text()}")
    for c in o.caveats:
        lines.append(f"    - {c.text} [{short_source(c.source)}]")
    if o.men_supported is not None and o.men_supported < p.target:
        lines.append(f"    - Men et al.: B_(m,theta) >= 0 only to {count(o.men_supported)} of {count(p.target)} "
                     f"[{short_source('Men')}]")
    if o.edit is not None:
        lines.append(f"    edit: {_edit_text(o.edit)}")
        lines += [f"      {why}" for why in o.edit.stated.values()]
    return lines


def _edit_text(e: Any) -> str:
    import json

    if e.refused:
        return f"not expressible in {e.dialect}: {e.refused}"
    d = e.to_dict()
    parts = [f"{k} = {json.dumps(v)}" for k, v in d["set"].items()] + [f"del {k}" for k in d["delete"]]
    return "; ".join(parts) + f" (--apply {e.option})"
