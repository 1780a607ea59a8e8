"""Colour in text reports: on a terminal only, as ruff does; ``NO_COLOR`` and ``FORCE_COLOR`` honoured.

:func:`wanted` decides: never in a file (``--output-file``); ``NO_COLOR`` set to anything non-empty turns
colour off (https://no-color.org); otherwise ``FORCE_COLOR`` set to anything non-empty turns it on, also in
a pipe (https://force-color.org: what CI logs that render ANSI set); otherwise colour when the stream is a
terminal whose ``TERM`` is not ``dumb``. :class:`Palette` paints the parts of a finding line with ANSI SGR
codes; its ``off`` form returns every text unchanged. Texts are escaped (``report.clean``) before they are
painted: the only escape sequences in a report are the palette's own.
"""

from __future__ import annotations

import os
from typing import Any
from collections.abc import Mapping

__all__ = ["wanted", "Palette"]

_RESET = "\x1b[0m"
_SGR = {"bold": "1", "dim": "2", "red": "31", "green": "32", "yellow": "33", "blue": "34", "cyan": "36"}
_SEVERITY = {"error": ("bold", "red"), "warning": ("bold", "yellow"), "info": ("bold", "blue")}


def wanted(stream: Any, *, to_file: bool = False, env: Mapping[str, str] | None = None) -> bool:
    """Whether a text report written to ``stream`` gets colour (see the module docstring)."""
    env = os.environ if env is None else env
    if to_file or env.get("NO_COLOR", ""):
        return False
    if env.get("FORCE_COLOR", ""):
        return True
    try:
        return bool(stream.isatty()) and env.get("TERM", "") != "dumb"
    except (AttributeError, ValueError, OSError):  # a closed or replaced stream
        return False


class Palette:
    """Paints report parts; ``Palette(False)`` leaves them as they are."""

    def __init__(self, on: bool) -> None:
        self.on = on

    def paint(self, text: str, *styles: str) -> str:
        if not self.on or not text:
            return text
        return f"\x1b[{';'.join(_SGR[s] for s in styles)}m{text}{_RESET}"

    def path(self, text: str) -> str:
        return self.paint(text, "bold")

    def code(self, text: str, severity: str) -> str:
        return self.paint(text, *_SEVERITY.get(severity, ("bold",)))

    def label(self, text: str) -> str:
        return self.paint(text, "bold", "cyan")

    def passed(self, text: str) -> str:
        return self.paint(text, "bold", "green")

    def found(self, text: str) -> str:
        return self.paint(text, "bold")
