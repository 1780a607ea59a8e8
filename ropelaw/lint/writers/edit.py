"""An edit to a config, in the keys its dialect reads: the type every writer returns.

:class:`Edit` holds ``changes`` (a key path and its new value, or :data:`DELETE`) or, when the
dialect cannot state an option, why (:func:`refuse`); :func:`apply_to_mapping` gives the mapping
the written file must parse to. The package (``ropelaw.lint.writers``) and ``text.py`` import
this module; it imports neither.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from collections.abc import Mapping

DELETE = object()


@dataclass
class Edit:
    """Changes to a config, in the keys its dialect reads: ``changes`` [(key path, value or DELETE)]."""

    dialect: str
    option: str
    changes: list = field(default_factory=list)
    notes: list = field(default_factory=list)
    refused: str | None = None  # why the dialect cannot state this option
    stated: dict = field(default_factory=dict)  # lint error code of the edited file -> why the plan states it

    def set(self, path: tuple, value: Any) -> Edit:
        self.changes.append((tuple(path), value))
        return self

    def delete(self, path: tuple) -> Edit:
        self.changes.append((tuple(path), DELETE))
        return self

    def to_dict(self) -> dict[str, Any]:
        return {"dialect": self.dialect, "refused": self.refused,
                "set": {".".join(map(str, p)): v for p, v in self.changes if v is not DELETE},
                "delete": [".".join(map(str, p)) for p, v in self.changes if v is DELETE],
                "notes": list(self.notes), "lint_stated": dict(self.stated)}


def refuse(dialect: str, option: str, why: str) -> Edit:
    return Edit(dialect, option, refused=why)


def apply_to_mapping(data: Mapping, changes: list) -> dict:
    """A deep copy of ``data`` with ``changes`` applied (what the written file must parse to)."""
    import copy

    out = copy.deepcopy(dict(data))
    for path, value in changes:
        node = out
        for k in path[:-1]:
            if not isinstance(node.get(k), dict):
                node[k] = {}
            node = node[k]
        if value is DELETE:
            node.pop(path[-1], None)
        else:
            node[path[-1]] = copy.deepcopy(value)
    return out


def leaf_changes(data: Mapping, changes: list) -> list:
    """``changes`` as the smallest edits of the file's own keys, with the same result under
    :func:`apply_to_mapping`: a mapping set over a mapping becomes its changed, added and removed keys (so a
    block's other keys, their order and comments stay); a key under a missing parent becomes that parent
    set whole; a change to the value already there is dropped; a whole float over an int stays an int."""
    import copy

    work = copy.deepcopy(dict(data))
    out: list = []

    def node(path: tuple) -> Any:
        cur: Any = work
        for k in path:
            if not isinstance(cur, dict) or k not in cur:
                return _MISSING
            cur = cur[k]
        return cur

    def emit(path: tuple, value: Any) -> None:
        parent = next((path[:i] for i in range(len(path)) if not isinstance(node(path[:i + 1]), dict)
                       and i < len(path) - 1), None)
        if parent is not None and value is not DELETE:  # a missing (or scalar) parent: set it whole
            nested: Any = copy.deepcopy(value)
            for k in reversed(path[len(parent) + 1:]):
                nested = {k: nested}
            path, value = path[:len(parent) + 1], nested
        old = node(path)
        if value is DELETE:
            if old is _MISSING:
                return
        elif isinstance(value, Mapping) and isinstance(old, dict):
            for k in [k for k in old if k not in value]:
                emit(path + (k,), DELETE)
            for k, v in value.items():
                emit(path + (k,), v)
            return
        else:
            if isinstance(old, int) and not isinstance(old, bool) and isinstance(value, float) and value.is_integer():
                value = int(value)
            if old is not _MISSING and type(old) is type(value) and old == value:
                return
        out.append((path, value))
        new = apply_to_mapping(work, [(path, value)])
        work.clear()
        work.update(new)

    for path, value in changes:
        emit(tuple(path), value)
    return out


_MISSING = object()
