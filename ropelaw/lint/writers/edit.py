"""An edit to a config, in the keys its dialect reads: the type every writer returns.

:class:`Edit` holds ``changes`` (a key path and its new value, or :data:`DELETE`) or, when the
dialect cannot state an option, why (:func:`refuse`); :func:`apply_to_mapping` gives the mapping
the written file must parse to. The package (``ropelaw.lint.writers``) and ``text.py`` import
this module; it imports neither.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

DELETE = object()


@dataclass
class Edit:
    """Changes to a config, in the keys its dialect reads: ``changes`` [(key path, value or DELETE)]."""

    dialect: str
    option: str
    changes: list = field(default_factory=list)
    notes: list = field(default_factory=list)
    refused: str | None = None  # why the dialect cannot state this option

    def set(self, path: tuple, value: Any) -> "Edit":
        self.changes.append((tuple(path), value))
        return self

    def delete(self, path: tuple) -> "Edit":
        self.changes.append((tuple(path), DELETE))
        return self

    def to_dict(self) -> dict[str, Any]:
        return {"dialect": self.dialect, "refused": self.refused,
                "set": {".".join(map(str, p)): v for p, v in self.changes if v is not DELETE},
                "delete": [".".join(map(str, p)) for p, v in self.changes if v is DELETE],
                "notes": list(self.notes)}


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
