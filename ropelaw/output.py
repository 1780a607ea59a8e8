"""How a report of findings is shown and where it goes: the output flags ``lint`` and ``audit code`` share.

As ruff's ``check``: ``--output-format full|concise|json|sarif|github`` (``--format`` is the same flag, kept
for existing scripts; ``text`` is ``full``), ``--output-file PATH`` (the report is written there, atomically,
never coloured; nothing on stdout), ``-q/--quiet`` (findings only: no summary, no notes), ``-s/--silent``
(nothing: the exit code says it), ``-v/--verbose`` (also the ``ok (...)`` line of each clean file and the
``skipped: ...`` line of each file without RoPE settings, which are quiet by default), ``--statistics``
(a count per rule instead of the findings), ``--exit-zero`` (exit 0 with findings; bad input is still 2
and ropelaw's own failure 3). Colour: :mod:`ropelaw.colour`.

:func:`prepare` reads and checks the flags before any work (an ``--output-file`` that cannot be written is
bad input, exit 2, before anything is linted); :func:`opened` gives the stream a report is written to and,
for ``--output-file``, writes it when the command ends (``safeio.write_atomic``: the old file stays whole
if the run fails).
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from dataclasses import dataclass
from typing import Any
from collections.abc import Iterator

from .errors import UsageError

__all__ = ["OUTPUT_FORMATS", "Output", "add_output_arguments", "prepare", "opened", "exit_status"]

OUTPUT_FORMATS = ("full", "concise", "text", "json", "sarif", "github")


def add_output_arguments(parser: argparse.ArgumentParser) -> None:
    """The output flags (module docstring), in their own group of ``--help``."""
    g = parser.add_argument_group("output")
    g.add_argument("--output-format", "--format", dest="format", choices=OUTPUT_FORMATS, default=None,
                   metavar="FORMAT",
                   help="full (the default: each finding with its fix and notes), concise (one line per finding), "
                        "json, sarif, github; text = full; --format is the same flag")
    g.add_argument("--output-file", "-o", default=None, metavar="PATH",
                   help="write the report to PATH (atomically, never coloured) instead of standard output")
    g.add_argument("-q", "--quiet", action="store_true", help="print the findings only: no summary, no notes")
    g.add_argument("-s", "--silent", action="store_true", help="print nothing; the exit code says what was found")
    g.add_argument("-v", "--verbose", action="store_true",
                   help="also print the ok (...) line of each clean file and the skipped: line of each file "
                        "without RoPE settings")
    g.add_argument("--statistics", action="store_true", help="print how many findings each rule has, not the findings")
    g.add_argument("--exit-zero", action="store_true",
                   help="exit 0 even when there are findings (bad input is still 2, ropelaw's own failure 3)")


@dataclass
class Output:
    """The output flags of one run, checked."""

    format: str = "text"  # text | json | sarif | github
    style: str = "full"  # text only: full | concise
    file: str | None = None
    quiet: bool = False
    silent: bool = False
    verbose: bool = False
    statistics: bool = False
    exit_zero: bool = False
    colour: bool = False  # decided when the stream is opened

    @property
    def text(self) -> bool:
        return self.format == "text"


def prepare(args: argparse.Namespace, default: str = "full") -> Output:
    """The checked output flags of ``args`` (``UsageError``, exit 2, for what cannot work together or an
    ``--output-file`` that cannot be written); ``default``: the format when none is given (a project
    setting, else ``full``)."""
    fmt = args.format or default
    if fmt not in OUTPUT_FORMATS:
        raise UsageError(f"output-format {fmt!r}: choose one of {', '.join(OUTPUT_FORMATS)}")
    quiet, silent, verbose = (bool(getattr(args, k, False)) for k in ("quiet", "silent", "verbose"))
    if verbose and (quiet or silent):
        raise UsageError(f"--verbose and --{'quiet' if quiet else 'silent'} ask for opposite things: give one")
    out = Output(format="text" if fmt in ("full", "concise", "text") else fmt,
                 style="concise" if fmt == "concise" else "full", file=getattr(args, "output_file", None),
                 quiet=quiet or silent, silent=silent, verbose=verbose,
                 statistics=bool(getattr(args, "statistics", False)), exit_zero=bool(getattr(args, "exit_zero", False)))
    if out.file is not None:
        from .safeio import writable_target

        if not out.file.strip():
            raise UsageError("--output-file: empty path")
        writable_target(out.file)  # a FIFO, a device, a directory or a missing folder: exit 2 now
    return out


class _Silent:
    """A stream that drops what is written (``--silent``)."""

    def write(self, text: str) -> int:
        return len(text)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False


@contextlib.contextmanager
def opened(out: Output) -> Iterator[Any]:
    """The stream the report is written to: standard output, nothing (``--silent``), or a spooled file that
    becomes ``--output-file`` (atomically) when the block ends without an exception. Sets ``out.colour``."""
    from . import colour

    if out.silent:
        out.colour = False
        yield _Silent()
        return
    if out.file is None:
        out.colour = out.text and colour.wanted(sys.stdout)
        yield sys.stdout
        return
    import shutil
    import tempfile

    out.colour = False
    with tempfile.SpooledTemporaryFile(max_size=1 << 20, mode="w+", encoding="utf-8", errors="surrogateescape",
                                       newline="") as spool:
        yield spool
        from .safeio import write_atomic

        def fill(tmp: str) -> None:
            spool.seek(0)
            with open(tmp, "w", encoding="utf-8", errors="surrogateescape", newline="") as fh:
                shutil.copyfileobj(spool, fh)

        write_atomic(out.file, fill)


def exit_status(code: int, out: Output) -> int:
    """``code`` (0 clean, 1 findings, 3 ropelaw's failure), with ``--exit-zero`` turning 1 into 0."""
    return 0 if out.exit_zero and code == 1 else code
