"""The one JSON encoding of every ``--format json`` output (docs/usage.md, "JSON output").

JSON has no infinity and no NaN: a non-finite number is written as ``null`` by every command (``bound``'s
``extrapolation_bound`` of an unbounded setup, a lint config's ``bound``, a finding's data); where the
null stands for "unbounded" a companion field says so (``"unbounded": true``). Never the ``NaN`` /
``Infinity`` tokens that ``json.dump`` writes by default (standard parsers refuse them), never a string
``"inf"``. Values from YAML / TOML that JSON lacks are written as :func:`json_safe` says.

A document is written whole or not at all (:func:`write_document`): it is encoded first, then written
in one call with SIGINT / SIGTERM held back, so an interrupted run leaves a whole document or nothing.
"""

from __future__ import annotations

import json
import math
import sys
from typing import Any

__all__ = ["json_safe", "dumps", "emit_json", "write_document"]

_JSON_KEYS = (str, int, float, bool, type(None))
_AS_IS = {str, int, bool, type(None)}  # exact types json_safe returns unchanged


def json_safe(value: Any) -> Any:
    """A value JSON can encode, recursively: inf/nan -> None (JSON has neither; ``json.dump``
    would write ``Infinity``), and every other type a YAML or TOML file can hold as JSON does it:
    dates, times and timestamps (YAML ``2001-12-14``, TOML ``07:32:00``) -> ISO 8601 strings, bytes
    (YAML ``!!binary``) -> base64 text, sets (``!!set``) -> sorted lists, tuples -> lists, mapping
    keys that JSON cannot take (a date) -> their JSON text; anything else -> its ``str``."""
    t = type(value)  # the exact JSON types first: a lint scan meets ~120 values per config
    if t in _AS_IS:
        return value
    if t is float:
        return value if math.isfinite(value) else None
    if t is dict:
        return {(k if type(k) is str or isinstance(k, _JSON_KEYS) else str(json_safe(k))):
                (v if type(v) in _AS_IS else json_safe(v)) for k, v in value.items()}
    if t is list:
        return [v if type(v) in _AS_IS else json_safe(v) for v in value]
    import datetime

    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if value is None or isinstance(value, (str, int, bool)):
        return value
    if isinstance(value, dict):
        return {(k if isinstance(k, _JSON_KEYS) else str(json_safe(k))): json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    if isinstance(value, (datetime.date, datetime.time)):  # datetime.datetime is a date
        return value.isoformat()
    if isinstance(value, (bytes, bytearray)):
        import base64

        return base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(value, (set, frozenset)):
        return [json_safe(v) for v in sorted(value, key=repr)]
    return str(value)


def dumps(obj: Any, indent: int | None = 2) -> str:
    """``obj`` as standard JSON text (:func:`json_safe`; ``allow_nan=False`` as a guard)."""
    return json.dumps(json_safe(obj), indent=indent, allow_nan=False)


def write_document(text: str | Any, out: Any = None) -> None:
    """Write ``text`` (a whole document, or a text file object holding one, read from its start) to
    ``out`` (stdout) and flush it, with SIGINT and SIGTERM blocked meanwhile (delivered right after):
    a reader gets the whole document or nothing."""
    import signal

    out = sys.stdout if out is None else out
    blocked = {signal.SIGINT, signal.SIGTERM}
    held = hasattr(signal, "pthread_sigmask")
    if held:
        old = signal.pthread_sigmask(signal.SIG_BLOCK, blocked)
    try:
        if isinstance(text, str):
            out.write(text)
        else:
            text.seek(0)
            for chunk in iter(lambda: text.read(1 << 20), ""):
                out.write(chunk)
        out.flush()
    finally:
        if held:
            signal.pthread_sigmask(signal.SIG_SETMASK, old)


def emit_json(obj: Any) -> None:
    """Standard JSON on stdout, whole or not at all: non-finite floats become null."""
    write_document(dumps(obj) + "\n")
