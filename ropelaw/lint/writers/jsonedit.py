"""Edit a JSON config in its own text: only the changed values move; key order, spacing, line endings
and every other byte stay as they were.

A change is made where the key is: :func:`members` scans the objects on the key's path (keys and
value spans, values skipped with ``json.JSONDecoder.raw_decode``), a value is replaced in its span, a
new key is added after the object's last member with that member's indentation, a deleted key takes
its comma and the whitespace before the next key with it. New nested values are written with the
file's indentation unit and newline (CRLF stays CRLF). The caller parses the result and compares it
with the edited mapping (``writers.apply_edit``); :func:`edited` returns None where a change cannot be
made in place (a value that is not an object on the path).
"""

from __future__ import annotations

import json
import re
from typing import Any

from .edit import DELETE

_WS = re.compile(r"[ \t\r\n]*")
_DECODER = json.JSONDecoder()


class _Member:
    __slots__ = ("key", "start", "value", "end")

    def __init__(self, key: str, start: int, value: int, end: int) -> None:
        self.key, self.start, self.value, self.end = key, start, value, end


def _skip(text: str, i: int) -> int:
    ws = _WS.match(text, i)  # matches, if only the empty string
    return ws.end() if ws is not None else i


def members(text: str, i: int) -> tuple[list[_Member], int]:
    """The members of the object whose ``{`` is at ``i``, and the index of its ``}``."""
    out: list[_Member] = []
    i = _skip(text, i + 1)
    if text[i] == "}":
        return out, i
    while True:
        key, after = _DECODER.raw_decode(text, i)
        colon = _skip(text, after)
        v = _skip(text, colon + 1)
        _, end = _DECODER.raw_decode(text, v)
        out.append(_Member(key, i, v, end))
        j = _skip(text, end)
        if text[j] == "}":
            return out, j
        i = _skip(text, j + 1)  # past the comma


def _object_at(text: str, path: tuple) -> tuple[int, list[_Member], int] | None:
    """``(open, members, close)`` of the object at key path ``path`` (``()``: the top level)."""
    i = _skip(text, 0)
    for k in path:
        if text[i] != "{":
            return None
        found = [m for m in members(text, i)[0] if m.key == k]
        if not found:
            return None
        i = found[-1].value  # JSON: the last of duplicate keys wins, as json.loads reads it
    if text[i] != "{":
        return None
    ms, close = members(text, i)
    return i, ms, close


def _line_indent(text: str, i: int) -> str:
    start = text.rfind("\n", 0, i) + 1
    indent = re.match(r"[ \t]*", text[start:])  # matches, if only the empty string
    return indent.group(0) if indent is not None else ""


def _render(value: Any, indent: str, unit: str, nl: str) -> str:
    if not isinstance(value, dict) or not value or not unit:
        return json.dumps(value, ensure_ascii=False)
    body = json.dumps(value, ensure_ascii=False, indent=len(unit))
    return body.replace("\n", nl + indent)


def _one(text: str, path: tuple, value: Any, unit: str, nl: str) -> str | None:
    found = _object_at(text, path[:-1])
    if found is None:
        return None
    open_, ms, close = found
    key = path[-1]
    hits = [n for n, m in enumerate(ms) if m.key == key]
    if value is DELETE:
        if not hits:
            return text
        n = hits[-1]
        m = ms[n]
        if n + 1 < len(ms):
            return text[:m.start] + text[ms[n + 1].start:]
        if n > 0:
            return text[:ms[n - 1].end] + text[m.end:]
        return text[:open_ + 1] + text[close:]
    if hits:
        m = ms[hits[-1]]
        return text[:m.value] + _render(value, _line_indent(text, m.start), unit, nl) + text[m.end:]
    entry_key = json.dumps(str(key), ensure_ascii=False)
    if not ms:
        inner = _line_indent(text, open_) + unit
        if not unit:
            return text[:open_ + 1] + f"{entry_key}: {_render(value, '', '', nl)}" + text[close:]
        return (text[:open_ + 1] + nl + inner + f"{entry_key}: {_render(value, inner, unit, nl)}" + nl
                + _line_indent(text, open_) + text[close:])
    last = ms[-1]
    ind = _line_indent(text, last.start)
    sep = ("," + nl + ind) if "\n" in text[open_:last.start] else ", "
    return text[:last.end] + sep + f"{entry_key}: {_render(value, ind, unit, nl)}" + text[last.end:]


def edited(text: str, changes: list) -> str | None:
    """``text`` with ``changes`` (key path, value or DELETE) applied in place, or None."""
    m = re.search(r"\n([ \t]+)\S", text)
    unit = m.group(1) if m else ""
    nl = "\r\n" if "\r\n" in text else "\n"
    for path, value in changes:
        try:
            got = _one(text, tuple(path), value, unit, nl)
        except (ValueError, IndexError):  # a value that is not where the path says: let the caller dump
            return None
        if got is None:
            return None
        text = got
    return text
