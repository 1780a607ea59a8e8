"""The CLI's standard streams: closed, non-UTF-8 or full, they degrade; they never crash a command.

- A stream closed before ropelaw started (``ropelaw lint x >&-``: Python then sets ``sys.stdout``
  to ``None``) is replaced by ``/dev/null``: the command runs and its exit code still says what it
  found, as ``ruff check x >&-`` does.
- Whatever encoding the stream has (``PYTHONIOENCODING=ascii``, a C locale), a character it cannot
  encode is written as a backslash escape (``\\xe9``) instead of raising ``UnicodeEncodeError``, so a
  non-ASCII file name keeps its findings. Names from files are escaped for control characters by
  ``report.clean`` before they get here.
- A write to stdout that fails (``ENOSPC`` on ``>/dev/full``, ``EBADF``) is :class:`OutputError`,
  bad input of the user's environment (exit 2, named); a reader that left (``| head``) stays
  ``BrokenPipeError`` for the CLI to end quietly.
"""

from __future__ import annotations

import contextlib
import os
import sys
from typing import Any
from collections.abc import Callable

from .errors import OutputError

__all__ = ["guard_streams", "StdoutGuard"]


class StdoutGuard:
    """``sys.stdout`` for the duration of a command: writes and flushes go to the real stream; an
    ``OSError`` other than a broken pipe becomes :class:`OutputError`. Everything else is the
    stream's own (``isatty``, ``encoding``, ``buffer``, ``fileno``)."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise OutputError(f"cannot write to standard output: {exc.strerror or exc}") from None

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise OutputError(f"cannot write to standard output: {exc.strerror or exc}") from None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def guard_streams() -> Callable[[], None]:
    """Make ``sys.stdout`` / ``sys.stderr`` safe for one command (see the module docstring);
    returns the function that puts the previous streams and error handlers back."""
    saved = sys.stdout, sys.stderr
    handlers: list = []
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        if stream is None:  # closed before start: the output goes nowhere, the exit code still counts
            # no with block: this is the command's stream until restore() puts the saved None back
            setattr(sys, name, open(os.devnull, "w", encoding="utf-8"))  # noqa: SIM115
            continue
        errors = getattr(stream, "errors", None)
        try:
            stream.reconfigure(errors="backslashreplace")
            handlers.append((stream, errors))
        except (AttributeError, ValueError, OSError):  # not a TextIOWrapper (a test's capture): as it is
            pass
    sys.stdout = StdoutGuard(sys.stdout)

    def restore() -> None:
        for stream, errors in handlers:
            with contextlib.suppress(AttributeError, ValueError, OSError):
                stream.reconfigure(errors=errors)
        for name, stream in zip(("stdout", "stderr"), saved, strict=True):
            current = getattr(sys, name)
            if stream is None and current is not None and not isinstance(current, StdoutGuard):
                current.close()
            setattr(sys, name, stream)

    return restore
