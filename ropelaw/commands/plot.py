"""``ropelaw plot NAME -o FILE``: the notebook figures for people who do not open Jupyter.

Each NAME maps to one function of :mod:`ropelaw.plot`; options that the figure does not
take are refused (one line, exit 2) rather than silently ignored. matplotlib is imported
only after the name, the options and the output extension have been checked.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ..errors import UsageError
from ..escape import clean
from ._common import base, length, number

HELP = "draw a figure (bound vs base, periods, exact positions, ...) to PNG/SVG/PDF"

# NAME -> (function in ropelaw.plot, what it shows, options it takes)
FIGURES: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "bound": ("plot_bound_vs_base", "extrapolation bound against the base, critical base and beta_1..3 (Liu et al.)",
              ("d", "train", "tune", "pretrain_base")),
    "periods": ("plot_pair_periods", "per-pair periods against the training length, critical dimension (Liu et al.)",
                ("d", "train", "tune", "base", "pretrain_base", "scheme", "factor")),
    "exact": ("plot_exact_fraction", "exact-position fraction against context length by float format (seed 004)",
              ("dtypes", "max_length")),
    "relpos": ("plot_relative_positions", "RoPE, PI, ReRoPE, Leaky ReRoPE relative-position matrices (seed 000)",
               ("length", "window", "k")),
    "men": ("plot_men_bmtheta", "B_{m,theta} against m with the first violation (Men et al.)",
            ("d", "base", "max_m")),
    "base-bound": ("plot_base_lower_bound", "base lower bound against context with the published table (Men et al.)",
                   ("d", "max_length")),
    "decay": ("plot_decay", "RoFormer's long-term decay of the relative upper bound",
              ("d", "base", "max_distance")),
    "schemes": ("plot_scheme_ratios", "per-pair frequency ratios of the scaling schemes",
                ("d", "train", "base", "factor", "schemes")),
}
EXTENSIONS = (".png", ".svg", ".pdf")

DESCRIPTION = HELP + "\n\nfigures:\n" + "\n".join(
    f"  {name:<11} {what}\n  {'':<11} options: {', '.join('--' + o.replace('_', '-') for o in opts)}"
    for name, (_, what, opts) in FIGURES.items()
) + "\n\nexample: ropelaw plot bound --tune 16k -o bound.png"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("name", metavar="NAME", help=f"figure: {', '.join(FIGURES)}")
    parser.add_argument("-o", "--output", required=True, metavar="FILE",
                        help="output file; the extension picks the format: .png, .svg or .pdf")
    parser.add_argument("--dpi", type=number, default=150, help="resolution of PNG output (default 150)")
    g = parser.add_argument_group("figure options (each figure takes some; see the list above)")
    g.add_argument("--d", type=number, default=None, metavar="D", help="rotary dimension (default 128)")
    g.add_argument("--train", type=length, default=None, metavar="T", help="pre-training length (default 4096)")
    g.add_argument("--tune", type=length, default=None, metavar="T",
                   help="tuning length (bound: default 16k, as in seed 001's observations)")
    g.add_argument("--base", type=base, default=None, metavar="BETA",
                   help="base at tuning / inference (default 10,000; 500k = 500,000, 1M = 1,000,000)")
    g.add_argument("--pretrain-base", type=base, default=None, metavar="B", help="pre-training base (default: --base)")
    g.add_argument("--scheme", default=None, metavar="NAME", help="scaling scheme (periods)")
    g.add_argument("--factor", type=number, default=None, metavar="S",
                   help="scaling factor (periods, schemes; default 8)")
    g.add_argument("--schemes", default=None, metavar="A,B,...",
                   help="schemes to compare (default: every scheme with a factor)")
    g.add_argument("--dtypes", default=None, metavar="A,B,...",
                   help="float formats (default bf16,fp16,fp8_e4m3,fp8_e5m2)")
    g.add_argument("--max-length", type=length, default=None, metavar="L",
                   help="longest context drawn (exact: default 1M; base-bound: default 1M)")
    g.add_argument("--length", type=length, default=None, metavar="L",
                   help="matrix size in tokens (relpos; default 12)")
    g.add_argument("--window", type=length, default=None, metavar="W", help="ReRoPE window w (relpos; default 4)")
    g.add_argument("--k", type=number, default=None, metavar="K", help="PI / Leaky ReRoPE factor k (relpos; default 4)")
    g.add_argument("--max-m", type=length, default=None, metavar="M",
                   help="largest distance m (men; default about twice the first violation)")
    g.add_argument("--max-distance", type=length, default=None, metavar="M",
                   help="largest relative distance (decay; default 256)")


_OPTIONS = ("d", "train", "tune", "base", "pretrain_base", "scheme", "factor", "schemes", "dtypes",
            "max_length", "length", "window", "k", "max_m", "max_distance")


def _names(text: str, what: str) -> list[str]:
    items = [t.strip() for t in text.split(",") if t.strip()]
    if not items:
        raise UsageError(f"--{what} needs at least one name")
    return items


def _powers_of_two(lo: int, hi: int) -> list[int]:
    out, n = [], lo
    while n <= hi:
        out.append(n)
        n *= 2
    return out


def figure_kwargs(name: str, args: argparse.Namespace) -> dict[str, Any]:
    """Keyword arguments of the plot function for figure ``name`` (raises ValueError)."""
    from ..spec import RopeSpec

    _, _, takes = FIGURES[name]
    given = [o for o in _OPTIONS if getattr(args, o, None) is not None]
    wrong = [o for o in given if o not in takes]
    if wrong:
        flags = ", ".join("--" + o.replace("_", "-") for o in wrong)
        ok = ", ".join("--" + o.replace("_", "-") for o in takes)
        raise UsageError(f"figure {name!r} does not take {flags} (it takes {ok})")
    a = {o: getattr(args, o) for o in given}
    d = a.get("d", 128)
    if name == "bound":
        kw: dict[str, Any] = {"d": RopeSpec(d=d).d, "train_len": a.get("train", 4096),
                              "tune_len": a.get("tune", 16384), "pretrain_base": a.get("pretrain_base", 10000.0)}
        RopeSpec(d=kw["d"], train_len=kw["train_len"], tune_len=kw["tune_len"], pretrain_base=kw["pretrain_base"],
                 base=kw["pretrain_base"])  # validates the setup before plotting
        return kw
    if name == "periods":
        params = {"factor": a["factor"]} if "factor" in a else {}
        spec = RopeSpec(d=d, train_len=a.get("train", 4096), base=a.get("base", a.get("pretrain_base", 10000.0)),
                        pretrain_base=a.get("pretrain_base", a.get("base", 10000.0)), tune_len=a.get("tune"),
                        scheme=a.get("scheme", "default"), params=params)
        return {"spec": spec}
    if name == "exact":
        kw = {}
        if "dtypes" in a:
            kw["dtypes"] = tuple(_names(a["dtypes"], "dtypes"))
        if "max_length" in a:
            if a["max_length"] < 32:
                raise UsageError(f"--max-length must be >= 32 for this figure, got {a['max_length']}")
            from ..plot.precision import default_lengths

            kw["lengths"] = default_lengths(16, a["max_length"])
        return kw
    if name == "relpos":
        return {"length": a.get("length", 12), "window": a.get("window", 4), "k": a.get("k", 4.0)}
    if name == "men":
        kw = {"d": d, "base": a.get("base", 10000.0)}
        if "max_m" in a:
            kw["max_m"] = a["max_m"]
        return kw
    if name == "base-bound":
        kw = {"d": d}
        if "max_length" in a:
            if a["max_length"] < 1024:
                raise UsageError(f"--max-length must be >= 1024 (1k) for this figure, got {a['max_length']}")
            kw["lengths"] = _powers_of_two(1024, a["max_length"])
        return kw
    if name == "decay":
        return {"d": d, "base": a.get("base", 10000.0), "max_distance": a.get("max_distance", 256)}
    if name == "schemes":
        kw = {"spec_or_params": RopeSpec(d=d, train_len=a.get("train", 4096), base=a.get("base", 10000.0)),
              "factor": a.get("factor", 8.0)}
        if "schemes" in a:
            kw["schemes"] = _names(a["schemes"], "schemes")
        return kw
    raise UsageError(f"unknown figure {name!r}")  # pragma: no cover  (FIGURES is checked first)


def run(args: argparse.Namespace) -> int:
    if args.name not in FIGURES:
        raise UsageError(f"unknown figure {args.name!r}; choose one of {', '.join(FIGURES)}")
    out = Path(args.output)
    if out.suffix.lower() not in EXTENSIONS:
        raise UsageError(f"output {args.output!r} must end in {', '.join(EXTENSIONS)}")
    if not out.parent.is_dir():
        raise UsageError(f"output directory {str(out.parent)!r} does not exist")
    if not 10 <= args.dpi <= 1200:
        raise UsageError(f"--dpi must be between 10 and 1200, got {args.dpi:g}")
    kwargs = figure_kwargs(args.name, args)

    from ..errors import require

    require("matplotlib", "plot", "ropelaw plot")
    from .. import plot

    from ..safeio import write_atomic

    fig = getattr(plot, FIGURES[args.name][0])(**kwargs)
    write_atomic(str(out), lambda tmp: fig.savefig(tmp, dpi=args.dpi))  # never a partial image over a good one
    print(f"wrote {clean(str(out))} ({FIGURES[args.name][1]})")
    return 0
