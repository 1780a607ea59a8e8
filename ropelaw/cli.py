"""The ``ropelaw`` command line: a thin argparse front door.

Each subcommand lives in ``ropelaw/commands/<name>.py`` with ``HELP``,
``add_arguments(parser)`` and ``run(args) -> int``. Only the module of the command being
run is imported, and command modules import heavy libraries (torch, matplotlib, numpy
where avoidable) inside ``run`` only, so ``ropelaw bound`` starts in tens of milliseconds.

Exit codes (ruff's): 0 clean, 1 findings, 2 bad input with one line on stderr, 3 internal error
(a bug in ropelaw: one line, ``ropelaw: internal error: ...``; the traceback only with ``--debug``
or ``ROPELAW_DEBUG=1``), 130 interrupted.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import traceback
from typing import NoReturn
from collections.abc import Sequence

from .errors import UsageError, internal_error_line
from .streams import guard_streams

# name -> module; order is the order of `ropelaw --help`
COMMANDS = {
    "bound": "ropelaw.commands.bound",
    "base": "ropelaw.commands.base",
    "dims": "ropelaw.commands.dims",
    "schemes": "ropelaw.commands.schemes",
    "exact": "ropelaw.commands.exact",
    "plan": "ropelaw.commands.plan",
    "audit": "ropelaw.commands.audit",
    "lint": "ropelaw.commands.lint",
    "rule": "ropelaw.commands.rule",
    "plot": "ropelaw.commands.plot",
    "experiment": "ropelaw.commands.experiment",
    "eval-length": "ropelaw.commands.eval_length",
}


class CliParser(argparse.ArgumentParser):
    argv: list[str] = []  # the command line being parsed (for the parser that says an error)

    def __init__(self, *args, **kwargs) -> None:
        kwargs.setdefault("allow_abbrev", False)  # as ruff: `--tran` is a typo to name, never `--train`
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        # one line, one prefix, no usage block; where to read more, as git does; a "did you mean" for a
        # mistyped flag, subcommand or choice, from the parser the word was meant for
        parser = command_parser(self, CliParser.argv)
        self.exit(2, f"ropelaw: error: {suggested(message, parser)} (see `{parser.prog} --help`)\n")


def command_parser(parser: argparse.ArgumentParser, argv: list[str]) -> argparse.ArgumentParser:
    """The deepest (sub)parser the words of ``argv`` name (``ropelaw audit code ...`` -> audit code's)."""
    words = [a for a in argv if not a.startswith("-")]
    while True:
        subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        nxt = next((subs[0].choices[w] for w in words if subs and w in subs[0].choices), None)
        if nxt is None:
            return parser
        words = words[words.index(next(w for w in words if w in subs[0].choices)) + 1:]
        nxt.parent = parser
        parser = nxt


def _parsers_on_path(parser: argparse.ArgumentParser) -> list:
    """``parser`` and the parsers above it (``ropelaw``, ``ropelaw audit``, ``ropelaw audit code``)."""
    out = []
    cur: argparse.ArgumentParser | None = parser
    while cur is not None:
        out.append(cur)
        cur = getattr(cur, "parent", None)
    return out


def suggested(message: str, parser: argparse.ArgumentParser) -> str:
    """argparse's ``message`` with a "did you mean" (:func:`ropelaw.errors.did_you_mean`): an unknown flag
    among ``parser``'s flags, an invalid choice (a subcommand, a format) among its choices."""
    import re

    from .errors import did_you_mean

    if message.startswith("the following arguments are required"):  # argparse says this before an unknown flag
        known = {o for p in _parsers_on_path(parser) for a in p._actions for o in a.option_strings}
        unknown = [a.split("=", 1)[0] for a in CliParser.argv if a.startswith("--") and a.split("=", 1)[0] not in known]
        if unknown:
            message = f"unrecognized arguments: {unknown[0]}"
    m = re.match(r"unrecognized arguments: (.*)$", message)
    if m:
        words = m.group(1).split()
        flag = next((w for w in words if w.startswith("-")), words[0] if words else "")
        flags = [o for a in parser._actions for o in a.option_strings if o.startswith("--")]
        name = flag.split("=", 1)[0]
        what = "unknown flag" if flag.startswith("-") else "unexpected argument"
        return f"{what} {name}{did_you_mean(name, flags) if flag.startswith('-') else ''}" + (
            f" (with {' '.join(words[1:])})" if len(words) > 1 and not flag.startswith("-") else "")
    m = re.match(r"(argument .*: invalid choice: '(.*?)' \(choose from (.*)\))$", message)
    if m:
        choices = re.findall(r"'([^']*)'", m.group(3))
        return m.group(1) + did_you_mean(m.group(2), choices).replace(";", ";", 1)
    return message


def _load(name: str):
    try:
        return importlib.import_module(COMMANDS[name])
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.startswith("ropelaw.commands"):
            return None  # command not built yet
        raise


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    from . import __version__

    parser = CliParser(
        prog="ropelaw",
        description="Scaling laws, precision audits and config linting for RoPE settings.",
    )
    parser.add_argument("--version", action="version", version=f"ropelaw {__version__}")
    parser.add_argument("--debug", action="store_true",
                        help="on an internal error (exit 3) show the traceback (also ROPELAW_DEBUG=1); "
                             "accepted anywhere on the line")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=CliParser)
    for name in COMMANDS:
        if only is not None and name != only:
            # list every command in --help without importing it
            sub.add_parser(name, add_help=False)
            continue
        module = _load(name)
        if module is None:
            continue
        p = sub.add_parser(name, help=module.HELP, description=getattr(module, "DESCRIPTION", module.HELP),
                           formatter_class=argparse.RawDescriptionHelpFormatter)
        module.add_arguments(p)
        p.set_defaults(_run=module.run)
    return parser


EXIT_INTERNAL_ERROR = 3  # distinct from 1 (findings) and 2 (bad input): a crash never reads as findings


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command: 0 clean, 1 findings, 2 bad input, 3 internal error, 130 interrupted."""
    argv = list(sys.argv[1:] if argv is None else argv)
    from . import errors

    errors.DEBUG = "--debug" in argv
    debug = errors.debugging()
    argv = [a for a in argv if a != "--debug"]
    restore = guard_streams()
    try:
        return _main(argv)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # `ropelaw ... | head`: the reader left, not an error (docs/usage.md)
        return _reader_left()
    except UsageError as exc:  # bad input found outside a command's run (building the parser)
        return _bad_input(exc)
    except Exception as exc:  # a bug: one line, a distinct exit code; the traceback on request
        if debug:
            traceback.print_exc()
        print(f"ropelaw: internal error: {internal_error_line(exc)}", file=sys.stderr)
        return EXIT_INTERNAL_ERROR
    finally:
        restore()


def _bad_input(exc: UsageError) -> int:
    from .report import clean

    print(f"ropelaw: error: {clean(' '.join(str(exc).splitlines()))}", file=sys.stderr)
    return 2


def _reader_left() -> int:
    """stdout's reader is gone: later writes (the interpreter's last flush) go to /dev/null, so no
    "Exception ignored ... BrokenPipeError" follows; exit 0 (docs/usage.md)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.__stdout__.fileno() if sys.__stdout__ is not None else 1)
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass
    return 0


def _main(argv: list[str]) -> int:
    first = next((a for a in argv if not a.startswith("-")), None)
    if first is not None and first not in COMMANDS:
        from .errors import did_you_mean

        print(f"ropelaw: error: unknown command {first!r}{did_you_mean(first, COMMANDS)} "
              "(see `ropelaw --help`)", file=sys.stderr)
        return 2
    only = first if first in COMMANDS else None
    parser = build_parser(only)
    CliParser.argv = argv
    args = parser.parse_args(argv)
    if getattr(args, "_run", None) is None:  # no command: the help, and exit 2 (as ruff and git do)
        if only is None:
            parser = build_parser()
        parser.print_help()
        return 2
    try:
        code = int(args._run(args) or 0)
        sys.stdout.flush()  # a full disk is said now, as bad input, not at the interpreter's exit
        return code
    except UsageError as exc:  # bad input, detected as such: one line, exit 2 (anything else is ropelaw's)
        return _bad_input(exc)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
