"""Argument helpers shared by the subcommands (light: no numpy, no torch)."""

from __future__ import annotations

import argparse
import json
import math
from typing import Any

from ..errors import UsageError
from ..jsonout import emit_json, json_safe  # noqa: F401  (the one JSON encoder, ropelaw/jsonout.py; re-exported)
from ..units import (  # noqa: F401  (the argparse types, ropelaw/units.py; re-exported)
    BASE_HELP, BASE_SUFFIXES, LENGTH_HELP, LENGTH_SUFFIXES, PRETRAIN_HELP, SuffixedFloat, SuffixedInt, add_format,
    base, length, number, short_repr, suffix_note)
from ..spec import RopeSpec


def byte_size(text: str) -> int:
    """argparse type: a size in bytes, 1 .. 2**40 (``4096``, ``512k``, ``16M``, ``1G``; binary units)."""
    t = text.strip().replace("_", "")
    mult = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}.get(t[-1:].lower(), 1)
    if mult != 1:
        t = t[:-1]
    if not t.isdigit() or len(t) > 15:
        raise argparse.ArgumentTypeError(f"expected a size such as 4096, 512k or 16M: {text!r}")
    n = int(t) * mult
    if not 1 <= n <= 1 << 40:
        raise argparse.ArgumentTypeError(f"must be between 1 byte and 1 TiB: {text!r}")
    return n


def param(text: str) -> tuple[str, Any]:
    """argparse type: ``KEY=VALUE``; VALUE parsed as JSON when it can be (numbers, lists)."""
    if "=" not in text:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    key, _, raw = text.partition("=")
    if not key.strip():
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE with a non-empty KEY, got {text!r}")
    try:
        value = json.loads(raw, parse_int=_param_int)
    except json.JSONDecodeError:
        value = raw
    except RecursionError:
        raise argparse.ArgumentTypeError(f"value nested too deeply: {short_repr(text)}") from None
    except _TooLong:
        raise argparse.ArgumentTypeError("integer of more than 309 digits (beyond float range): "
                                         f"{short_repr(text)}") from None
    todo, seen = [(value, 0)], 0
    while todo:  # scheme parameters are numbers and short lists: bound the depth, refuse non-finite
        v, depth = todo.pop()
        seen += 1
        if depth > _PARAM_DEPTH:
            raise argparse.ArgumentTypeError(f"value nested deeper than {_PARAM_DEPTH} levels: {short_repr(text)}")
        if isinstance(v, float) and not math.isfinite(v):
            raise argparse.ArgumentTypeError(f"must be finite: {short_repr(text)}")
        if isinstance(v, list):
            todo.extend((x, depth + 1) for x in v)
        elif isinstance(v, dict):
            todo.extend((x, depth + 1) for x in v.values())
    return key.strip(), value


_PARAM_DEPTH = 8  # long_factor is a list of numbers; nothing a scheme takes nests deeper


class _TooLong(ValueError):
    pass


def _param_int(text: str) -> int:
    if len(text.lstrip("-")) > 309:  # beyond float range (and near int()'s 4,300-digit limit)
        raise _TooLong(text)
    return int(text)


# One meaning in every command (bound, base, dims, schemes, plan): --base is the base the model runs
# with (a config's rope_theta); --pretrain-base the base it was pre-trained with, which is --base unless
# given. Liu et al.'s setting (LLaMA 2 pre-trained at 10,000, tuned at a larger base) is
# --pretrain-base 1e4 --base 1e6: never assumed (a Llama 3 user, pre-trained at 5e5, got a bound 22x
# too high from the old default of 10,000).
NO_BASE = "give --base (the RoPE base the model runs with, rope_theta; the pretraining base too unless --pretrain-base)"


def pretrain_base_of(base: float | None, pretrain: float | None) -> float:
    """The pretraining base of the flags: ``--pretrain-base``, else ``--base`` (ValueError without either)."""
    if pretrain is not None:
        return pretrain
    if base is None:
        raise UsageError(NO_BASE)
    return base


def add_rule_selection(parser: argparse.ArgumentParser, *, default: str) -> None:
    """``--select``, ``--extend-select`` and ``--ignore``, as ruff has them: each repeatable and
    comma-separated, repeated flags accumulate (``--select RV --select RL`` = ``--select RV,RL``).
    The one parser of rule selection for every command that has it (lint, audit code);
    :func:`rule_selection` reads them. ``default``: what is selected without --select."""
    parser.add_argument("--select", action="append", default=None, metavar="CODES",
                        help=f"only these codes or prefixes, comma-separated, repeatable (RL,RV001; ALL for "
                             f"every rule); default: {default}")
    parser.add_argument("--extend-select", action="append", default=None, metavar="CODES",
                        help="codes or prefixes to add to the selection (comma-separated, repeatable)")
    parser.add_argument("--ignore", action="append", default=None, metavar="CODES",
                        help="codes or prefixes to drop, comma-separated, repeatable")


def rule_selection(args: argparse.Namespace) -> tuple:
    """``(select, extend, ignore)``: each a list of codes / prefixes, or ``None`` when its flag was not
    given; ``UsageError`` for a selector that names no rule."""
    from ..findings import parse_selectors

    return (parse_selectors(args.select, "--select"), parse_selectors(args.extend_select, "--extend-select"),
            parse_selectors(args.ignore, "--ignore"))


def add_spec_arguments(parser: argparse.ArgumentParser, *, base_required: bool = True) -> None:
    """The flags that build a :class:`RopeSpec` (``bound``, ``dims`` and friends)."""
    g = parser.add_argument_group("RoPE setup")
    g.add_argument("--d", required=True, type=number, metavar="D",
                   help="rotary dimension: rotated dims per head (even)")
    g.add_argument("--train", required=True, type=length, metavar="T",
                   help=f"pre-training context length T_train ({LENGTH_HELP})")
    g.add_argument("--base", required=base_required, type=base, metavar="BETA",
                   help=f"the base the model runs with (rope_theta), at tuning and inference ({BASE_HELP})")
    g.add_argument("--pretrain-base", type=base, default=None, metavar="B",
                   help=PRETRAIN_HELP)
    g.add_argument("--tune", type=length, default=None, metavar="T",
                   help="tuning length T_tune (default: the training length; k and M as for --train)")
    s = parser.add_argument_group("scaling scheme")
    s.add_argument("--scheme", default="default", metavar="NAME",
                   help="scaling scheme (see `ropelaw schemes`); default: plain RoPE")
    s.add_argument("--factor", type=number, default=None, metavar="S", help="scaling factor s")
    s.add_argument("--param", type=param, action="append", default=[], metavar="KEY=VALUE",
                   help="other scheme parameter (repeatable), e.g. --param beta_fast=32")
    s.add_argument("--pretrained-with-scheme", action="store_true",
                   help="the scheme was in force from the first pre-training step (torchtitan's Llama 3 "
                        "flavors): the critical dimension counts the periods of its frequencies, and the "
                        "pretraining base defaults to --base")


def spec_from_args(args: argparse.Namespace) -> RopeSpec:
    """Build the one RopeSpec from the shared flags (raises ValueError on bad input)."""
    pairs = list(args.param or [])
    keys = [k for k, _ in pairs]
    twice = sorted({k for k in keys if keys.count(k) > 1})
    if twice:
        raise UsageError(f"--param {twice[0]} given twice")
    params = dict(pairs)
    if getattr(args, "factor", None) is not None:
        if "factor" in params:
            raise UsageError("factor given twice: use --factor or --param factor=..., not both")
        params["factor"] = args.factor
    if args.scheme == "default" and params:
        flags = ", ".join("--factor" if k == "factor" else f"--param {k}" for k in sorted(params))
        raise UsageError(f"plain RoPE (scheme 'default') takes no parameters, got {flags}; "
                         "pick a scaling scheme with --scheme (see `ropelaw schemes`)")
    check_d_limit(args.d)
    from_start = bool(getattr(args, "pretrained_with_scheme", False))
    if from_start and args.scheme == "default":
        raise UsageError("--pretrained-with-scheme needs the scheme the model was pre-trained with (--scheme)")
    pretrain = pretrain_base_of(args.base, args.pretrain_base)  # never 10,000 by assumption
    base = args.base if args.base is not None else pretrain
    return RopeSpec(d=args.d, train_len=args.train, base=base, pretrain_base=pretrain,
                    tune_len=args.tune, scheme=args.scheme, params=params, pretrained_with_scheme=from_start)


def check_d_limit(d: float) -> None:
    """Refuse absurd rotary dimensions up front (the per-pair work is O(d)); RopeSpec checks the rest."""
    from ..limits import check_rotary_dim

    check_rotary_dim(d, "--d")


