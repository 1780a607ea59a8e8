"""``ropelaw schemes``: list the scaling schemes, or show what one does to a setup.

    ropelaw schemes                       # every scheme, its parameters and its source
    ropelaw schemes yarn --d 128 --train 4096 --base 1e4 --factor 8
    ropelaw schemes dynamic --d 128 --train 4096 --factor 2 --seq-len 16k --format json
"""

from __future__ import annotations

import argparse
import math
from typing import Any

from ..errors import UsageError

HELP = "list the scaling schemes, or show one's per-pair frequencies and attention factor"
DESCRIPTION = __doc__


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from ._common import add_format, base, length, number, param

    parser.add_argument("name", nargs="?", metavar="NAME",
                        help="scheme to apply (omit to list every scheme)")
    g = parser.add_argument_group("RoPE setup (with NAME)")
    g.add_argument("--d", type=number, metavar="D", help="rotary dimension: rotated dims per head (even)")
    g.add_argument("--train", type=length, metavar="T",
                   help="pre-training context length (the original length unless "
                        "--param original_max_position_embeddings=N)")
    g.add_argument("--base", type=base, default=None, metavar="BETA",
                   help="base the frequencies derive from (default 10,000; 500k = 500,000, 1M = 1,000,000)")
    s = parser.add_argument_group("scheme parameters")
    s.add_argument("--factor", type=number, default=None, metavar="S", help="scaling factor s")
    s.add_argument("--param", type=param, action="append", default=[], metavar="KEY=VALUE",
                   help="other scheme parameter (repeatable; JSON values), e.g. --param beta_fast=32")
    s.add_argument("--seq-len", type=length, default=None, metavar="L",
                   help="current input length (dynamic, longrope; max relative position for rerope)")
    add_format(parser)


def run(args: argparse.Namespace) -> int:
    from ..schemes import scheme_info

    if args.name is None:
        extra = [f for f, v in (("--d", args.d), ("--train", args.train), ("--base", args.base),
                                ("--factor", args.factor), ("--seq-len", args.seq_len)) if v is not None]
        if extra or args.param:
            raise UsageError(f"{(extra or ['--param'])[0]} needs a scheme NAME (see `ropelaw schemes`)")
        return _list(args.format)
    info = scheme_info(args.name)  # ValueError (exit 2) for an unknown name
    missing = [f for f, v in (("--d", args.d), ("--train", args.train)) if v is None]
    if missing:
        raise UsageError(f"`ropelaw schemes {args.name}` needs {' and '.join(missing)}")
    return _show(args, info)


def _list(fmt: str) -> int:
    from ..schemes import SCHEMES, scheme_names
    from ._common import emit_json

    infos = [SCHEMES[n] for n in scheme_names()]
    if fmt == "json":
        emit_json([{"name": i.name, "aliases": list(i.aliases), "required": list(i.required),
                    "optional": list(i.optional), "summary": i.summary, "source": i.source} for i in infos])
        return 0
    titles = [i.name + (f" ({', '.join(i.aliases)})" if i.aliases else "") for i in infos]
    w = max(map(len, titles)) + 2
    for title, i in zip(titles, infos, strict=True):
        print(f"{title:<{w}}{i.summary}")
        if i.required:
            print(f"{'':<{w}}required: {', '.join(i.required)}")
        if i.optional:
            print(f"{'':<{w}}optional: {', '.join(i.optional)}")
        print(f"{'':<{w}}source:   {i.source}")
    print("\nShow one: ropelaw schemes NAME --d D --train T --base B [--factor S] [--param KEY=VALUE]")
    return 0


def _show(args: argparse.Namespace, info) -> int:
    from ..schemes import apply_scheme, default_inv_freq
    from ._common import emit_json, spec_from_args

    base = args.base if args.base is not None else 10000.0  # the frequencies' base, printed with them
    ns = argparse.Namespace(d=args.d, train=args.train, base=base, pretrain_base=base, tune=None,
                            scheme=args.name, factor=args.factor, param=args.param)
    spec = spec_from_args(ns)
    result = apply_scheme(spec, args.seq_len)
    plain = default_inv_freq(spec.d, spec.base)
    per_pair = {k: v for k, v in result.details if isinstance(v, tuple) and len(v) == spec.pairs}
    scalars = {k: v for k, v in result.details if k not in per_pair}
    rows = []
    for i, (t, t0) in enumerate(zip(result.inv_freq, plain, strict=True)):
        # a frequency can underflow to 0 (huge factor or base): its period is infinite (null in JSON)
        row: dict[str, Any] = {"pair": i, "inv_freq": t, "default_inv_freq": t0,
                               "ratio": t / t0 if t0 > 0 else math.nan,
                               "period": 2 * math.pi / t if t > 0 else math.inf}
        for k, v in per_pair.items():
            row[k] = v[i]
        rows.append(row)
    length = args.seq_len if args.seq_len is not None else spec.train_len
    mrp = result.max_relative_position(length) if result.window is not None else None
    if args.format == "json":
        out: dict[str, Any] = {"scheme": info.name, "source": info.source, "d": spec.d, "train_len": spec.train_len,
                               "base": spec.base, "params": spec.param_dict(), "seq_len": args.seq_len,
                               "attention_factor": result.attention_factor,
                               "logit_scale": result.attention_factor ** 2,
                               "window": result.window, "leaky_k": result.leaky_k}
        if mrp is not None:
            out["max_relative_position"] = mrp
        for k, v in scalars.items():
            out[k] = _jsonable(v)
        out["pairs"] = rows
        emit_json(out)
        return 0
    _print_text(spec, info, result, scalars, per_pair, rows, length, mrp)
    return 0


def _jsonable(v: Any) -> Any:
    if isinstance(v, tuple):
        return [_jsonable(x) for x in v]
    if isinstance(v, float) and math.isinf(v):
        return None  # JSON has no infinity: unbounded
    return v


def _g(x: float) -> str:
    from ..numfmt import number

    return number(x)


def _print_text(spec, info, result, scalars, per_pair, rows, length, mrp) -> None:
    from ..numfmt import count, number

    print(f"Scaling scheme {info.name}: {info.summary}")
    print(f"  source: {info.source}\n")
    lines = [("rotary dims d", str(spec.d)), ("training length", count(spec.train_len)),
             ("base", number(spec.base))]
    for k, v in spec.param_dict().items():
        if k in scalars:
            continue  # shown below as the scheme read it
        if isinstance(v, list):
            v = f"[{len(v)} values]"
        lines.append((f"param {k}", str(v)))
    for k, v in scalars.items():
        if isinstance(v, tuple):
            v = "(" + ", ".join(_g(x) if isinstance(x, float) else str(x) for x in v) + ")"
        elif isinstance(v, float):
            v = "unbounded" if math.isinf(v) else _g(v)
        elif isinstance(v, int) and not isinstance(v, bool):
            v = count(v)
        lines.append((k.replace("_", " "), str(v)))
    af = result.attention_factor
    lines.append(("attention factor", f"{number(af)}  multiplies cos/sin; attention logits x {number(af * af)}"))
    if mrp is not None:
        lines.append(("max relative position", f"{_g(mrp)} at {count(length)} tokens (--seq-len to change)"))
    width = max(len(k) for k, _ in lines) + 2
    for k, v in lines:
        print(f"  {k:<{width}}{v}")
    print()
    extra = list(per_pair)
    head = f"  {'pair':>4}  {'theta (default)':>15}  {'theta (scheme)':>15}  {'ratio':>9}  {'period':>12}"
    head += "".join(f"  {k.replace('_', ' '):>{max(len(k), 8)}}" for k in extra)
    print(head)
    for r in rows:
        line = (f"  {r['pair']:>4}  {r['default_inv_freq']:>15.6e}  {r['inv_freq']:>15.6e}  {r['ratio']:>9.6f}"
                f"  {number(r['period']):>12}")
        for k in extra:
            v = r[k]
            line += f"  {(f'{v:.4f}' if isinstance(v, float) else str(v)):>{max(len(k), 8)}}"
        print(line)
