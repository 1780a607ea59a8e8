"""``ropelaw audit code|module|hf|checkpoint``: the numerics auditor.

``code`` (static AST scan) lives here; ``module``, ``hf`` and ``checkpoint`` are delegated to
:mod:`ropelaw.commands.audit_runtime` (imported lazily: torch only when those run).
"""

from __future__ import annotations

import argparse
import sys

from ..errors import UsageError

HELP = "audit rotary/ALiBi precision: model code (static), modules, HF architectures, checkpoints"
DESCRIPTION = """\
Find positions, angles and frequencies that pass through bf16/fp16 (seed 004: bf16 keeps
896 of 8,192 positions exact).

  ropelaw audit code src/                      static scan of .py files (no code is run)
  ropelaw audit module pkg.rotary:make ...     run a rotary module in bf16/fp16 scenarios
  ropelaw audit hf llama                       the same for an installed transformers architecture
  ropelaw audit checkpoint model.safetensors   inspect stored inv_freq / cos-sin caches
"""


def _add_code_arguments(p: argparse.ArgumentParser) -> None:
    from ..report import FORMATS
    from ._common import add_format, add_rule_selection, byte_size, length

    p.add_argument("paths", nargs="+", metavar="PATH", help=".py files or directories (searched recursively for *.py)")
    add_format(p, FORMATS)
    add_rule_selection(p, default="every rule")
    p.add_argument("--length", type=length, default=8192, metavar="L",
                   help="context length used for the numbers in messages (default 8192)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar even on a terminal")
    p.add_argument("--no-fix", action="store_true", help="text output: omit the `fix:` lines")
    p.add_argument("--max-file-size", type=byte_size, default=None, metavar="SIZE",
                   help="skip (and report as RE004) .py files larger than this (default 4M; accepts 512k, 16M)")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from ..cli import _Parser

    sub = parser.add_subparsers(dest="audit_command", metavar="WHAT", parser_class=_Parser)
    code = sub.add_parser("code", help="static scan of model code (AST; nothing is executed)",
                          description="Static scan of Python model code for rotary/ALiBi precision bugs "
                                      "(rules: `ropelaw rule --all`, RP1xx and RE0xx). It reads torch code: "
                                      "keras.ops (keras, keras-nlp, keras-hub), jax.numpy, mlx and TensorFlow "
                                      "code is not analysed, and a file using one of them for position code "
                                      "gets an RP117 note (info) instead of a silent pass. Products are judged "
                                      "by CUDA autocast's op lists (torch 2.13.0), the default dtype as "
                                      "Lightning 'bf16-true' sets it.")
    _add_code_arguments(code)
    code.set_defaults(_audit_run=run_code)
    try:
        from . import audit_runtime as rt
    except ModuleNotFoundError as exc:
        if exc.name != f"{__package__}.audit_runtime":
            raise
        return  # runtime audits not built yet: `audit code` still works
    for name, adder, runner, help_ in (
        ("module", "add_module_arguments", "run_module", "run a rotary module in bf16/fp16 scenarios and measure it"),
        ("hf", "add_hf_arguments", "run_hf", "audit the rotary embedding of an installed transformers architecture"),
        ("checkpoint", "add_checkpoint_arguments", "run_checkpoint", "inspect rotary tensors stored in a checkpoint"),
    ):
        if not hasattr(rt, adder) or not hasattr(rt, runner):
            continue
        p = sub.add_parser(name, help=help_, description=getattr(rt, f"{name.upper()}_DESCRIPTION", help_),
                           formatter_class=argparse.RawDescriptionHelpFormatter)
        getattr(rt, adder)(p)
        p.set_defaults(_audit_run=getattr(rt, runner))


def run(args: argparse.Namespace) -> int:
    runner = getattr(args, "_audit_run", None)
    if runner is None:
        raise UsageError("say what to audit: `ropelaw audit code PATH...` (or module, hf, checkpoint); "
                         "see `ropelaw audit --help`")
    return int(runner(args) or 0)


def run_code(args: argparse.Namespace) -> int:
    from ..audit.static import scan_paths
    from ..report import exit_code, render
    from ._common import rule_selection

    select, extend, ignore = rule_selection(args)
    if select is not None and extend:
        select = select + extend  # without --select every rule is on: --extend-select adds nothing

    progress = (not args.no_progress) and args.format not in ("json", "sarif") and sys.stderr.isatty()
    from ..audit.static import MAX_FILE_BYTES

    max_bytes = args.max_file_size if args.max_file_size is not None else MAX_FILE_BYTES
    result = scan_paths(args.paths, length=args.length, select=select or None,
                        ignore=ignore or None, progress=progress, max_bytes=max_bytes)
    if args.format == "text" and args.no_fix:
        from ..report import render_text

        out = render_text(result.findings, result.files, show_fix=False)
    else:
        out = render(result.findings, args.format, checked=result.files)
    if out:
        from ..jsonout import write_document

        write_document(out + "\n")  # a json / sarif document whole or not at all
    return exit_code(result.findings)
