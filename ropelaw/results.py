"""Result objects: ``to_dict()`` for JSON and tables in Jupyter.

A result dataclass inherits :class:`Result`; Jupyter shows ``_repr_html_`` as a two-column
table of its ``to_dict()`` (lists of rows render as a table of their own).
"""

from __future__ import annotations

import copy
import html
import math
from dataclasses import fields, is_dataclass
from typing import Any

_ATOMS = {int, float, str, bool, type(None)}  # copy.deepcopy returns these very objects
_FIELDS: dict[type, tuple[str, ...]] = {}  # a dataclass's field names (fixed when the class is made)


def _asdict(obj: Any) -> Any:
    """``dataclasses.asdict`` (Python 3.11's ``_asdict_inner`` with ``dict``), but without a
    ``copy.deepcopy`` call per number and string, which returns them unchanged: a lint scan converts
    every config's bound and layers (a tenth of its time went to those calls)."""
    if type(obj) in _ATOMS:
        return obj
    names = _FIELDS.get(type(obj))
    if names is None and is_dataclass(obj) and not isinstance(obj, type):
        names = _FIELDS[type(obj)] = tuple(f.name for f in fields(obj))
    if names is not None:
        return {name: _asdict(getattr(obj, name)) for name in names}
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):
        return type(obj)(*[_asdict(v) for v in obj])
    if isinstance(obj, (list, tuple)):
        return type(obj)(_asdict(v) for v in obj)
    if isinstance(obj, dict):
        return type(obj)((_asdict(k), _asdict(v)) for k, v in obj.items())
    return copy.deepcopy(obj)


def _cell(v: Any) -> str:
    if isinstance(v, float):
        if math.isinf(v) or math.isnan(v):
            return str(v)
        return f"{v:,.6g}" if abs(v) < 1e7 else f"{v:.4g}"
    if isinstance(v, int) and not isinstance(v, bool):
        return f"{v:,}"
    return html.escape(str(v))


def table_html(rows: list[dict[str, Any]], limit: int = 200) -> str:
    """An HTML table of dict rows (the first ``limit``)."""
    if not rows:
        return "<p><em>(empty)</em></p>"
    cols = list(rows[0])
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in cols)
    body = "".join("<tr>" + "".join(f"<td>{_cell(r.get(c))}</td>" for c in cols) + "</tr>" for r in rows[:limit])
    more = f"<p><em>{len(rows) - limit} more rows</em></p>" if len(rows) > limit else ""
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>{more}"


class Result:
    """Mixin for result dataclasses."""

    def to_dict(self) -> dict[str, Any]:
        if not is_dataclass(self):  # pragma: no cover
            raise TypeError("Result.to_dict needs a dataclass or an override")
        return _asdict(self)

    def _repr_html_(self) -> str:
        data = self.to_dict()
        title = html.escape(type(self).__name__)
        scalars = {k: v for k, v in data.items() if not isinstance(v, (list, dict))}
        rows = "".join(f"<tr><th style='text-align:left'>{html.escape(k)}</th><td>{_cell(v)}</td></tr>"
                       for k, v in scalars.items())
        out = f"<strong>{title}</strong><table>{rows}</table>"
        for k, v in data.items():
            if isinstance(v, list) and v and isinstance(v[0], dict):
                out += f"<p><strong>{html.escape(k)}</strong></p>" + table_html(v)
        return out
