"""Errors that mean "bad input": the CLI prints them as one line and exits 2.

:class:`UsageError` is the one declared bad-input type: it is raised where input is validated
(a flag, a file, a value in a file), says what is wrong and where, and the CLI prints it as one
line with exit 2. Any other exception reaching the CLI is ropelaw's own failure (exit 3,
:func:`internal_error_line`), never the user's: a ``KeyError`` inside a dialect is a bug in the
dialect, not a malformed config.
"""

from __future__ import annotations

import importlib
import importlib.util
from types import ModuleType
from collections.abc import Iterable


class UsageError(ValueError):
    """Bad input (file, option, value) detected by ropelaw; one line, exit 2.

    A ``ValueError`` for library callers (``except ValueError`` keeps working); the CLI treats only
    this type (and its subclasses) as the user's error."""


class OutputError(UsageError):
    """Standard output could not be written (a full disk, a closed descriptor): the user's
    environment, named as such, exit 2."""


REPORT_HINT = ("a bug in ropelaw, not in your input: please report it with the command line and the "
               "traceback, shown with --debug or ROPELAW_DEBUG=1")


DEBUG = False  # set by the CLI's --debug


def debugging() -> bool:
    """Whether ropelaw's own failures show their traceback: ``--debug`` or ``ROPELAW_DEBUG=1``."""
    import os

    return DEBUG or os.environ.get("ROPELAW_DEBUG", "") not in ("", "0")


def internal_error_line(exc: BaseException, *, where: str = "") -> str:
    """The one line printed for ropelaw's own failure (exit 3): the exception's type and message
    (whitespace collapsed, at most 300 characters, control characters escaped) and how to report it.
    ``where``: what was being done (a file's path), said first."""
    from .escape import clean

    text = " ".join(str(exc).split())[:300]
    what = f"{type(exc).__name__}{': ' + text if text else ''}"
    return clean(f"{where + ': ' if where else ''}{what} ({REPORT_HINT})")


def install_hint(extra: str) -> str:
    """The install command for an extra, in README's form (an editable install of the checkout)."""
    return f"pip install -e '.[{extra}]'"


def require(module: str, extra: str, what: str = "this command", *, also: Iterable[str] = ()) -> ModuleType:
    """Import an optional dependency or raise UsageError naming the extra that installs it.

    ``extra`` is the extra that provides everything ``what`` needs, so a user missing several
    packages installs once: ``also`` lists the other modules ``what`` will import (``audit hf``
    needs torch and transformers: both are checked before either is used, and the hint names
    ``[hf]``, not ``[torch]`` first and ``[hf]`` after).
    """
    missing = [m for m in (module, *also) if importlib.util.find_spec(m) is None]
    if not missing:
        return importlib.import_module(module)
    raise UsageError(f"{what} needs {' and '.join(missing)}: {install_hint(extra)}")


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """``"; did you mean 'bound'?"`` for the closest of ``choices`` (difflib, as git and ruff
    suggest), or ``""`` when none is close. Case-insensitive; the suggestion keeps its case."""
    import difflib

    import os.path

    options = {c.lower(): c for c in choices}
    key = str(word).lower()
    close = difflib.get_close_matches(key, list(options), n=3, cutoff=0.6)
    if not close:
        return ""
    # among the close ones, the longest shared start wins ('RP1011' -> 'RP101', not 'RP111')
    best = max(close, key=lambda c: len(os.path.commonprefix([c, key])))
    return f"; did you mean {options[best]!r}?"
