"""Errors that mean "bad input": the CLI prints them as one line and exits 2."""

from __future__ import annotations

import importlib
from types import ModuleType


class UsageError(ValueError):
    """Bad input (file, option, value) detected by ropelaw; one line, exit 2."""


def require(module: str, extra: str, what: str = "this command") -> ModuleType:
    """Import an optional dependency or raise UsageError saying which extra installs it."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise UsageError(f"{what} needs {module}: pip install 'ropelaw[{extra}]'") from None
