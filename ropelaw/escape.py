"""The one escaping function for names printed by ropelaw: every command, every format.

A name that comes from a file or a command line (a path, a key, a tensor name) may hold a newline
(which in GitHub output forges an ``::error`` annotation), ESC sequences (which drive the
terminal), bidirectional overrides, or lone surrogates (how Python spells the bytes of a file name
that is not UTF-8). :func:`clean` shows each as an escape; text and GitHub reporters, the CLI's
error lines and every command's text output pass names through it.
"""

from __future__ import annotations

import re

__all__ = ["clean"]

# C0/C1 controls (newline, carriage return, ESC ...), DEL, Unicode line/paragraph separators and
# bidirectional overrides: none belongs in a one-line report, and each can forge output (a
# newline plus "::error" makes a GitHub annotation; ESC sequences drive the terminal); and lone
# surrogates, which is how Python spells the bytes of a file name that is not UTF-8.
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def _escape_char(m: re.Match[str]) -> str:
    c = m.group(0)
    named = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
    if c in named:
        return named[c]
    return f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}"


def clean(text: str) -> str:
    """``text`` with control characters shown as escapes (``\\n``, ``\\x1b``, ``\\u202e``): text
    and GitHub output print names that come from files (paths, keys, tensor names) through it."""
    text = str(text)
    return _CONTROL.sub(_escape_char, text) if _CONTROL.search(text) else text
