"""``ropelaw experiment bound|extrapolation|keynorm``: the seeds' experiments at toy scale."""

from __future__ import annotations

import argparse
import sys

from ..errors import UsageError
from ..escape import clean

HELP = "run a seed's experiment at toy scale on the CPU (bound, extrapolation, keynorm, schemes)"
DESCRIPTION = """\
Predict, then verify, on a tiny byte-level transformer trained on the Python standard
library's own sources (offline, deterministic from --seed):

  bound          Liu et al. 2023 (seed 001): continued training at several bases; the
                 predicted bound of each base beside its measured break point
                 (--sweep: at four (d, T) pairs; is break / bound the same at every size?)
  extrapolation  Su's table (seed 000): Baseline, PI, NTK, YaRN, ReRoPE, Leaky ReRoPE,
                 +- log n, trained at T, token accuracy at 8T (repeated / non-repeated)
  keynorm        Su's KeyNorm table (seed 003): QNA, KNA, CosA +- log n, from scratch
  schemes        the bound under PI, NTK-aware, dynamic NTK, YaRN and Llama 3 at factors
                 4 and 8, at inference and after continued training at T: the bound
                 `ropelaw bound --scheme` predicts beside the measured break point

Each prints its table beside the seed's published numbers, which orderings match, the
machine and the time. --quick: <= 5 minutes per experiment on 2 cores; --smoke: seconds
(CI); default: the full size (up to an hour).

example:
  ropelaw experiment bound --quick
  ropelaw experiment bound --sweep --quick
  ropelaw experiment schemes --quick --out docs/experiments
  ropelaw experiment extrapolation --quick --format json --out results/
"""


def _bases(text: str) -> list[float]:
    from ._common import number

    out = [number(part) for part in text.split(",") if part.strip()]
    if not out or min(out) <= 1:
        raise argparse.ArgumentTypeError(f"expected comma-separated bases > 1, got {text!r}")
    return out


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from ._common import add_format

    parser.add_argument("name", choices=("bound", "extrapolation", "keynorm", "schemes"), metavar="EXPERIMENT",
                        help="bound | extrapolation | keynorm | schemes")
    size = parser.add_mutually_exclusive_group()
    size.add_argument("--quick", action="store_const", dest="size", const="quick",
                      help="the <= 5 minute size (T=128, 700 steps)")
    size.add_argument("--smoke", action="store_const", dest="size", const="smoke",
                      help="seconds: checks that everything runs (CI); says nothing about the research")
    size.add_argument("--size", choices=("smoke", "quick", "full"), dest="size", help="run size (default: full)")
    parser.add_argument("--bases", type=_bases, default=None, metavar="B1,B2,...",
                        help="bound only: the bases to continue training at (default: the size's list)")
    parser.add_argument("--sweep", action="store_true",
                        help="bound only: run it at each (d, T) of the size's sweep and compare break / bound")
    parser.add_argument("--seed", type=int, default=0, help="seed of initialisation and data (default 0)")
    parser.add_argument("--threads", type=int, default=1,
                        help="torch threads (default 1: on a shared machine one thread is the fastest)")
    parser.add_argument("--out", metavar="DIR", default=None,
                        help="also write DIR/<experiment>-<size>[-<tag>].json and .png")
    add_format(parser)


def run(args: argparse.Namespace) -> int:
    from ..errors import require

    require("torch", "torch", "ropelaw experiment")
    import torch

    from ..experiments import runs

    if args.threads < 1:
        raise UsageError(f"--threads must be >= 1, got {args.threads}")
    torch.set_num_threads(args.threads)
    size = runs.SIZES[args.size or "full"]
    kwargs = {}
    name = args.name
    if args.bases is not None:
        if args.name != "bound":
            raise UsageError("--bases applies to `ropelaw experiment bound` only")
        if args.sweep:
            raise UsageError("--bases and --sweep cannot be combined (the sweep picks each size's bases)")
        kwargs["bases"] = tuple(args.bases)
    if args.sweep:
        if args.name != "bound":
            raise UsageError("--sweep applies to `ropelaw experiment bound` only")
        name = "bound-sweep"
    bar = None
    if args.format == "text" and sys.stderr.isatty():
        from tqdm import tqdm

        bar = tqdm(total=runs.total_steps(name, size, len(args.bases or ()) or None), desc=f"{name} ({size.name})",
                   unit="step", file=sys.stderr, leave=False)
    try:
        result = runs.EXPERIMENTS[name](size, seed=args.seed, progress=bar.update if bar else None, **kwargs)
    finally:
        if bar is not None:
            bar.close()
    if args.out:
        write_outputs(result, args.out)
    if args.format == "json":
        from ._common import emit_json

        emit_json(result)
    else:
        print(runs.render_text(result))
        if args.out:
            print(f"wrote {clean(str(output_stem(result, args.out)))}.json and .png")
    return 0


def output_stem(result: dict, out_dir: str) -> str:
    """``<out>/<experiment>-<size>[-<tag>][-seed<N>]`` (tag: a non-default run, e.g. custom bases)."""
    import os

    tag = f"-{result['tag']}" if result.get("tag") else ""
    if result.get("seed"):
        tag += f"-seed{result['seed']}"
    return os.path.join(out_dir, f"{result['experiment']}-{result['size']}{tag}")


def compact_json(obj, indent: int = 1, _level: int = 0) -> str:
    """JSON indented like ``json.dumps(obj, indent=1)``, except that a list of numbers (a loss
    curve of 2,048 positions) stays on one line: the committed results read and diff by key, not
    as 60,000 one-number lines. ``json.loads`` gives back exactly ``obj``."""
    import json

    pad, inner = " " * (indent * _level), " " * (indent * (_level + 1))
    if isinstance(obj, dict) and obj:
        items = [f"{inner}{json.dumps(str(k))}: {compact_json(v, indent, _level + 1)}" for k, v in obj.items()]
        return "{\n" + ",\n".join(items) + "\n" + pad + "}"
    if isinstance(obj, (list, tuple)) and obj and not all(
            isinstance(v, (int, float, str, bool)) or v is None for v in obj):
        items = [inner + compact_json(v, indent, _level + 1) for v in obj]
        return "[\n" + ",\n".join(items) + "\n" + pad + "]"
    return json.dumps(obj, allow_nan=False)


def write_outputs(result: dict, out_dir: str) -> None:
    """``<out>/<experiment>-<size>.json`` (the result) and ``.png`` (its figure)."""
    import os

    from ..experiments.runs import plot_result
    from ._common import json_safe

    os.makedirs(out_dir, exist_ok=True)
    stem = output_stem(result, out_dir)
    from ..safeio import write_atomic

    write_atomic(stem + ".json", compact_json(json_safe(result)) + "\n")
    fig = plot_result(result)
    write_atomic(stem + ".png", lambda tmp: fig.savefig(tmp, dpi=110))
