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
    from ..output import add_output_arguments
    from ._common import add_rule_selection, byte_size, length

    p.add_argument("paths", nargs="+", metavar="PATH", help=".py files or directories (searched recursively for *.py)")
    from .lint_settings import add_project_arguments

    add_output_arguments(p)
    add_rule_selection(p, default="every rule")
    add_project_arguments(p)
    p.add_argument("--length", type=length, default=8192, metavar="L",
                   help="context length used for the numbers in messages (default 8192)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar even on a terminal")
    p.add_argument("--no-fix", action="store_true", help="text output: omit the `fix:` lines")
    p.add_argument("--max-file-size", type=byte_size, default=None, metavar="SIZE",
                   help="skip (and report as RE004) .py files larger than this (default 4M; accepts 512k, 16M)")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from ..cli import CliParser

    sub = parser.add_subparsers(dest="audit_command", metavar="WHAT", parser_class=CliParser)
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
    from ..audit.static import MAX_FILE_BYTES, scan_paths
    from ..output import exit_status, opened, prepare
    from ..report import exit_code

    settings = code_settings(args)
    out = prepare(args, default=settings.output_format() or "full")
    if args.show_settings:
        from .lint_settings import show_settings

        return show_settings(settings, args.paths)
    progress = (not args.no_progress) and out.text and not out.silent and sys.stderr.isatty()
    max_bytes = args.max_file_size if args.max_file_size is not None else MAX_FILE_BYTES
    result = scan_paths(args.paths, length=args.length, progress=progress, max_bytes=max_bytes)
    findings = [f for f in result.findings if settings.selection_for(f.path).on(f.code)]
    with opened(out) as stream:
        write_code_report(findings, result.files, out, stream, show_fix=not args.no_fix)
    return exit_status(exit_code(findings), out)


def code_settings(args: argparse.Namespace):
    """The rules on for each file ``audit code`` scans (``lint_settings.LintSettings``): every rule, then the
    file's ``[audit-code]`` project configuration, then --select / --extend-select / --ignore."""
    from ..findings import all_rules
    from .lint_settings import LintSettings

    codes = [r.code for r in all_rules()]
    return LintSettings(args, codes, codes, section="audit-code")


def write_code_report(findings: list, files: int, out, stream, *, show_fix: bool = True) -> None:
    """``audit code``'s report in the run's format (``output.Output``): findings, statistics or a document."""
    from ..colour import Palette
    from ..jsonout import write_document
    from ..report import TextView, render, statistics_lines, statistics_rows, summary_line, text_lines

    if out.statistics:
        rows = statistics_rows(findings)
        if out.format == "json":
            from ..jsonout import dumps

            write_document(dumps(rows) + "\n", stream)
            return
        lines = list(statistics_lines(rows, Palette(out.colour)))
        lines += [] if out.quiet else [summary_line(findings, files)]
    elif out.text:
        view = TextView(style=out.style, quiet=out.quiet, palette=Palette(out.colour))
        lines = list(text_lines(findings, files, show_fix=show_fix, view=view))
    else:
        text = render(findings, out.format, checked=files)
        lines = [text] if text else []
    if lines:
        write_document("\n".join(lines) + "\n", stream)  # a json / sarif document whole or not at all
