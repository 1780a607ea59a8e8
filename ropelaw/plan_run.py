"""``ropelaw plan``'s arguments to its plan, and the plan's caveat lines: what the command
(``commands/plan.py``) and ``ropelaw.explore()`` (``explorer.py``) both run, so the widget shows what the
command prints.

Light: no torch, matplotlib or scipy (numpy only for Men et al.'s sums).
"""

from __future__ import annotations

import argparse
from typing import Any

from .errors import UsageError

__all__ = ["add_arguments", "parse", "evaluated", "build", "SHORT", "short_source", "option_lines"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from .units import BASE_HELP, LENGTH_HELP, PRETRAIN_HELP, add_format, base, length, number

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
    option's edit for a config, verified (``plan_check.check_edits``) and ranked."""
    p, data, cfg, dialect, text = build(args)
    checked: dict = {}
    if cfg is not None:
        from .lint.writers import edits_for
        from .plan_check import check_edits

        edits, why = edits_for(dialect, data, cfg, p.options, p.target)
        for o, e in zip(p.options, edits, strict=True):
            o.edit = e
        if why:
            p.notes.append(f"no edit is written: {why}")
        checked = check_edits(p, cfg, text, args.tune, args.output)  # each edit applied, read back and linted
        p.rank()  # what the file's format can state ranks first
    return p, cfg, dialect, text, checked


def _spec_from_flags(args: argparse.Namespace):
    from .limits import check_rotary_dim
    from .spec import RopeSpec

    missing = [f for f, v in (("--d", args.d), ("--train", args.train), ("--base", args.base)) if v is None]
    if missing:
        raise UsageError(f"give a CONFIG, or {', '.join(missing)} (with --d, --train and --base)")
    check_rotary_dim(args.d, "--d")
    pretrain = args.pretrain_base if args.pretrain_base is not None else args.base
    params = {"factor": args.factor} if args.factor is not None else {}
    if args.scheme == "default" and params:
        raise UsageError("--factor needs the --scheme it scales")
    return RopeSpec(d=args.d, train_len=args.train, base=args.base, pretrain_base=pretrain, tune_len=args.tune,
                    scheme=args.scheme, params=params)


def build(args: argparse.Namespace):
    """``(plan, data, cfg, dialect, text)`` from the command line (all but the plan None without CONFIG;
    ``text`` is the one read of the config that the plan and ``--apply`` both use)."""
    from .limits import MAX_CONTEXT
    from .lint.loader import load_text, read_source_text
    from .numfmt import count
    from .plan import plan, plan_config

    if args.target > MAX_CONTEXT:
        raise UsageError(f"--target {count(args.target)} is beyond the longest context ropelaw plans "
                         f"(2^31 - 1 = {MAX_CONTEXT:,} tokens, see `ropelaw rule RV013`)")
    if args.dtype is not None:
        from .formats import get_format

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
    from .lint import dialects
    from .lint.loader import SHELL_SUFFIXES, format_of, parse_text

    if path.lower().endswith(SHELL_SUFFIXES):
        from .lint.dialects.maxtext import launch_of
        from .lint.dialects.megatron import shell_flags

        launch = launch_of(path, text)
        if launch is not None:
            return launch[0], "maxtext"
        return shell_flags(path, text)[0], "megatron"
    data, _ = parse_text(text, format_of(path), path)
    return data, dialects.pick(data).name if isinstance(data, dict) else None


def _check_target(target: int, train: int, where: str) -> None:
    from .numfmt import count

    if target < train:
        raise UsageError(f"--target {count(target)} is below the training length {count(train)} ({where}): "
                         "nothing to extend")


SHORT = {"Liu": "Liu et al. 2310.05209", "Men": "Men et al. 2405.14591", "Chen": "Chen et al. 2306.15595",
         "Peng": "YaRN 2309.00071", "bloc97": "NTK-aware (bloc97; Su 9675)",
         "Hugging Face _compute_dynamic": "HF dynamic NTK",
         "Llama 3.1": "Llama 3.1 bands (HF)", "Ding": "LongRoPE 2402.13753", "Su 2023": "seed 000 (Su 9708)"}


def short_source(s: str) -> str:
    for k, v in SHORT.items():
        if s.startswith(k):
            return v
    return s


def option_lines(p: Any, o: Any) -> list[str]:
    from .numfmt import count

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
