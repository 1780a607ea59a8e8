"""Running user code for ``audit module``: a time limit, and its exits, prints and warnings contained.

``ropelaw audit module TARGET`` imports TARGET and runs its factory and the module it returns,
with the user's privileges: that is the point of the command (the static ``audit code`` never
runs anything). What the guard adds around that run:

- a time limit (``--timeout``, default :data:`DEFAULT_TIMEOUT` seconds): an interval timer
  raises :class:`AuditTimeout` in the running code (a ``BaseException``, so the user's
  ``except Exception`` cannot swallow it); if a native call never returns to Python, a watchdog
  thread ends the process :data:`GRACE` seconds later with one line and exit 2;
- ``SystemExit`` and ``KeyboardInterrupt`` raised by the user's code become one-line errors
  (a ``sys.exit(0)`` in a factory used to end ropelaw with exit 0 and no output);
- warnings (numpy, torch, the user's own) are recorded, not printed, and summed up in one note;
- anything the code prints on stdout is held back (it would corrupt ``--format json``) and
  counted in a note.

Unix only for the timer (``signal.setitimer`` in the main thread); elsewhere only the watchdog
bounds the run.
"""

from __future__ import annotations

import contextlib
import io
import os
import signal
import sys
import threading
import warnings
from dataclasses import dataclass, field
from typing import Any
from collections.abc import Callable

from ..errors import UsageError

__all__ = ["DEFAULT_TIMEOUT", "GRACE", "AuditTimeout", "GuardReport", "run_guarded"]

# A module audit at the default 8,192 positions takes seconds; 2^23 positions on a slow machine
# take minutes. Ten minutes bounds a hung import or an endless loop without cutting a real run.
DEFAULT_TIMEOUT = 600.0
# --timeout range: a timer below a millisecond fires before the code starts, and setitimer /
# Event.wait overflow far above a year (1e308 s raised OverflowError, exit 3)
MIN_TIMEOUT = 1e-3
MAX_TIMEOUT = 365.0 * 86400
# Seconds the watchdog waits past the timeout for the code to return to Python before it ends
# the process (a native call that ignores the timer).
GRACE = 10.0


class AuditTimeout(BaseException):
    """Raised inside user code when the time limit is reached."""


@dataclass
class GuardReport:
    """What the guarded code did besides returning: warnings and output held back."""

    warnings: list[str] = field(default_factory=list)
    stdout_lines: int = 0

    def notes(self) -> list[str]:
        out = []
        if self.warnings:
            first = self.warnings[0]
            more = f" (and {len(self.warnings) - 1:,} more)" if len(self.warnings) > 1 else ""
            out.append(f"the audited code raised {len(self.warnings):,} warning{'s' if len(self.warnings) != 1 else ''}"
                       f": {first}{more}")
        if self.stdout_lines:
            out.append(f"the audited code printed {self.stdout_lines:,} line{'s' if self.stdout_lines != 1 else ''} "
                       "on stdout (not shown)")
        return out


def _one_line(text: str, limit: int = 200) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _fmt_seconds(t: float) -> str:
    return f"{t:g} s"


def run_guarded(fn: Callable[[], Any], *, what: str,
                timeout: float | None = DEFAULT_TIMEOUT) -> tuple[Any, GuardReport]:
    """``(fn(), report)``; one-line :class:`UsageError` for a timeout, ``SystemExit`` or
    ``KeyboardInterrupt`` raised by ``fn``. ``timeout`` None or 0: no limit."""
    if timeout and not MIN_TIMEOUT <= timeout <= MAX_TIMEOUT:
        raise UsageError(f"--timeout {timeout:g} s is out of range: 0 (no limit) or {MIN_TIMEOUT:g} .. "
                         f"{MAX_TIMEOUT:,.0f} s")
    limit = timeout or 0.0  # seconds; 0: no limit
    report = GuardReport()
    held = io.StringIO()
    use_timer = bool(limit) and hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
    done = threading.Event()

    def on_alarm(signum, frame):  # noqa: ARG001
        raise AuditTimeout()

    def watchdog():
        if not done.wait(limit + GRACE):
            sys.stderr.write(f"ropelaw: error: {what} did not finish within {_fmt_seconds(limit)} (--timeout) "
                             "and did not return from native code; stopped\n")
            sys.stderr.flush()
            os._exit(2)

    old_handler = None
    if use_timer:
        old_handler = signal.signal(signal.SIGALRM, on_alarm)
    if limit:
        threading.Thread(target=watchdog, name="ropelaw-watchdog", daemon=True).start()
    try:
        with warnings.catch_warnings(record=True) as caught, contextlib.redirect_stdout(held):
            warnings.simplefilter("always")
            try:
                if use_timer:  # armed inside the try: however soon it fires, it is caught below
                    signal.setitimer(signal.ITIMER_REAL, limit)
                result = fn()
            finally:
                if use_timer:
                    signal.setitimer(signal.ITIMER_REAL, 0)
        seen: set[str] = set()
        for w in caught:
            text = _one_line(f"{w.category.__name__}: {w.message}")
            if text not in seen:
                seen.add(text)
                report.warnings.append(text)
    except AuditTimeout:
        raise UsageError(f"{what} did not finish within {_fmt_seconds(limit)} (--timeout to change)") from None
    except SystemExit as exc:
        raise UsageError(f"{what} called sys.exit({_one_line(repr(exc.code) if exc.code is not None else '')}) "
                         "while being imported or run; nothing was measured") from None
    except KeyboardInterrupt:
        raise UsageError(f"{what} was interrupted (KeyboardInterrupt); nothing was measured") from None
    finally:
        done.set()
        if use_timer:
            signal.signal(signal.SIGALRM, old_handler)
        text = held.getvalue()
        report.stdout_lines = text.count("\n") + (1 if text and not text.endswith("\n") else 0)
    return result, report
