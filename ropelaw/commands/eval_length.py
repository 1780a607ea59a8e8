"""``ropelaw eval-length MODEL_DIR --text FILE --lengths 4k,8k,16k``: loss per position band."""

from __future__ import annotations

import argparse
import math
import sys

from ..errors import UsageError
from ..escape import clean

HELP = "loss and accuracy per position band of a local Hugging Face causal LM at several lengths"
DESCRIPTION = """\
Scores a Hugging Face causal LM read from disk (config.json + .safetensors; never a
download, never a pickle) on a text file at each length: next-token loss (nats) and accuracy,
averaged over equal position bands, beside the extrapolation bound that ropelaw predicts for
the model's config.json (Liu et al.; through the scheme of --method). Methods from
ropelaw.methods are patched in with patch_model (the architectures it supports).

example:
  ropelaw eval-length ./my-llama --text book.txt --lengths 4k,8k,16k
  ropelaw eval-length ./my-llama --text book.txt --lengths 16k --method rerope --window 1024 -o bands.png
"""


def _lengths(text: str) -> list[int]:
    from ._common import length

    out = [length(part) for part in text.split(",") if part.strip()]
    if not out:
        raise argparse.ArgumentTypeError(f"expected comma-separated lengths, got {text!r}")
    return out


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from ._common import add_format, number

    parser.add_argument("model_dir", metavar="MODEL_DIR", help="directory with config.json and *.safetensors")
    parser.add_argument("--text", required=True, metavar="FILE", help="text to score (UTF-8)")
    parser.add_argument("--lengths", required=True, type=_lengths, metavar="L1,L2,...",
                        help="context lengths, e.g. 4k,8k,16k")
    parser.add_argument("--method", default="none", choices=("none", "rerope", "leaky_rerope", "logn"),
                        help="patch in a method from ropelaw.methods (default: none)")
    parser.add_argument("--window", type=number, default=None, metavar="W", help="ReRoPE window")
    parser.add_argument("--k", type=number, default=None, metavar="K", help="Leaky ReRoPE slope 1/k")
    parser.add_argument("--train-len", type=int, default=None, metavar="T",
                        help="training length for log n (default: the config's)")
    parser.add_argument("--bands", type=int, default=8, help="position bands per length (default 8)")
    parser.add_argument("--samples", type=int, default=4, help="windows per length (default 4)")
    parser.add_argument("--tokenizer", default="auto", choices=("auto", "bytes"),
                        help="the model's tokenizer (auto) or UTF-8 bytes (byte-level models)")
    parser.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's)")
    parser.add_argument("-o", "--output", default=None, metavar="FILE", help="write the plot (png, svg, pdf)")
    add_format(parser)


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from ..errors import require

    # torch and transformers are both checked first, so the hint names [hf] once
    require("torch", "hf", "ropelaw eval-length", also=("transformers",))
    import torch

    from ..experiments.eval_length import eval_length, plot_length_report

    if args.threads is not None:
        if args.threads < 1:
            raise UsageError(f"--threads must be >= 1, got {args.threads}")
        torch.set_num_threads(args.threads)
    if args.method in ("rerope", "leaky_rerope") and args.window is None:
        raise UsageError(f"--method {args.method} needs --window")
    if args.method == "leaky_rerope" and args.k is None:
        raise UsageError("--method leaky_rerope needs --k")
    if args.method not in ("rerope", "leaky_rerope") and (args.window is not None or args.k is not None):
        raise UsageError("--window and --k apply to --method rerope / leaky_rerope only")
    if args.bands < 1:
        raise UsageError(f"--bands must be >= 1, got {args.bands}")
    model_dir = Path(args.model_dir)
    if not model_dir.is_dir():
        raise UsageError(f"{model_dir}: not a directory")
    text = Path(args.text).read_bytes()
    bar = None
    if args.format == "text" and sys.stderr.isatty():
        from tqdm import tqdm

        bar = tqdm(total=len(args.lengths) * args.samples, desc="eval-length", unit="window", file=sys.stderr,
                   leave=False)
    try:
        report = eval_length(model_dir, text, args.lengths, method=args.method, window=args.window,
                             leaky_k=args.k, train_len=args.train_len, bands=args.bands, samples=args.samples,
                             tokenizer=args.tokenizer, progress=bar.update if bar else None)
    finally:
        if bar is not None:
            bar.close()
    if args.output:
        from ..safeio import write_atomic

        fig = plot_length_report(report)
        write_atomic(args.output, lambda tmp: fig.savefig(tmp, dpi=110))
    if args.format == "json":
        from ._common import emit_json

        d = report.to_dict()
        d.pop("curves")
        emit_json(d)
        return 0
    print(render_text(report))
    if args.output:
        print(f"wrote {clean(args.output)}")
    return 0


def render_text(report) -> str:
    b = report.predicted_bound
    bound = "-" if b is None else "unbounded" if not math.isfinite(b) else f"{b:,.0f} tokens"
    method = report.method + (f" w={report.window:g}" if report.window else "") + (
        f" k={report.leaky_k:g}" if report.leaky_k else "")
    lines = [f"Loss per position band: {clean(str(report.model_dir))} ({report.tokens:,} tokens of text, "
             f"method {method})",
             f"predicted bound  {bound}  ({report.prediction})", "",
             f"{'length':>8} {'band':>17} {'loss':>8} {'accuracy':>9} {'samples':>8}"]
    for r in report.rows:
        band = f"{r['band_start']:,}-{r['band_end'] - 1:,}"
        flag = "  past the bound" if b is not None and math.isfinite(b) and r["band_end"] > b else ""
        lines.append(f"{r['length']:>8,} {band:>17} {r['loss']:>8.4f} {100 * r['accuracy']:>8.2f}% "
                     f"{r['samples']:>8}{flag}")
    lines.append(f"\ntime: {report.seconds:.1f} s")
    return "\n".join(lines)
