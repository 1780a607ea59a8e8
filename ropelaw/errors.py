"""Errors that mean "bad input": the CLI prints them as one line and exits 2."""

from __future__ import annotations

import importlib
import importlib.util
from types import ModuleType
from typing import Iterable


class UsageError(ValueError):
    """Bad input (file, option, value) detected by ropelaw; one line, exit 2."""


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
