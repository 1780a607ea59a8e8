"""Where each key of a JSON or YAML config is: (line, column) of every key path, found separately
from the parsers' data and resolved lazily, per container on the looked-up path (memory O(the
containers looked into), independent of nesting depth). Built by :func:`ropelaw.lint.parse.parse_text`
after it parsed and bounded the document (TOML positions are found there, line by line)."""

from __future__ import annotations

import bisect
import json
import re
from collections.abc import Mapping
from typing import Any
from collections.abc import Iterator

Path = tuple  # tuple[str | int, ...]
Positions = Mapping  # Mapping[Path, tuple[int, int]]: key path -> (line, column), 1-based

_WS = " \t\r\n"


def _line_starts(text: str) -> list[int]:
    return [0] + [m.end() for m in re.finditer("\n", text)]


class _Locator:
    """Offset -> (line, column), 1-based, by bisection over line starts (O(lines) memory)."""

    def __init__(self, text: str):
        self._starts = _line_starts(text)

    def __call__(self, offset: int) -> tuple[int, int]:
        line = bisect.bisect_right(self._starts, offset) - 1
        return line + 1, offset - self._starts[line] + 1


# ----------------------------------------------------------------------------------------- JSON
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]', re.S)  # what matters when skipping a subtree
_SCALAR_END = re.compile(r"[,\]}\s]|$")


class _LazyPositions(Mapping):
    """Shared mapping protocol of the lazy position maps: a subclass resolves a path to a
    handle (``_resolve``), turns a handle into (line, column) (``_location``) and lists a
    container's children (``_children``); lookup, membership and iteration live here once.
    Iteration visits each node once (YAML aliases share nodes), keyed by ``_key``."""

    _root: Any
    _key = staticmethod(id)  # YAML nodes are objects; JSON overrides it with the offset itself

    def _resolve(self, path: Path) -> Any:
        raise NotImplementedError

    def _location(self, hit: Any) -> tuple[int, int]:
        raise NotImplementedError

    def _children(self, node: Any) -> list[tuple[Any, Any]] | None:
        raise NotImplementedError

    def __getitem__(self, path: Path) -> tuple[int, int]:
        hit = self._resolve(path)
        if hit is None:
            raise KeyError(path)
        return self._location(hit)

    def __contains__(self, path: object) -> bool:
        return self._resolve(path) is not None  # type: ignore[arg-type]

    def __iter__(self) -> Iterator[Path]:
        todo: list[tuple[Path, Any]] = [((), self._root)]
        seen: set[int] = set()
        while todo:
            prefix, node = todo.pop()
            if self._key(node) in seen:
                continue
            seen.add(self._key(node))
            for k, v in self._children(node) or ():
                yield prefix + (k,)
                todo.append((prefix + (k,), v))

    def __len__(self) -> int:
        return sum(1 for _ in self)


class JsonPositions(_LazyPositions):
    """Key path -> (line, column) of a JSON document, resolved on demand.

    Looking up ``("rope_scaling", "factor")`` scans the root object's members once (skipping
    nested values with a regular expression over strings and brackets), then the members of
    ``rope_scaling``: each container on a looked-up path is indexed once and cached. Nothing is
    stored per element of the containers not looked into, so memory does not grow with depth.
    Object members point at their key, array elements at their value (as editors show them).
    The text must be valid JSON (:func:`parse_text` parses it first).
    """

    def __init__(self, text: str):
        self._text = text
        self._at = _Locator(text)
        self._root = self._skip_ws(0)
        self._members: dict[int, Any] = {}  # container offset -> {key: (key_off, val_off)} | [val_off]

    def _skip_ws(self, i: int) -> int:
        t, n = self._text, len(self._text)
        while i < n and t[i] in _WS:
            i += 1
        return i

    def _skip_value(self, i: int) -> int:
        """Offset just past the value starting at ``i``."""
        t = self._text
        c = t[i] if i < len(t) else ""
        if c == '"':
            m = _STRING.match(t, i)
            return m.end() if m else len(t)
        if c in "[{":
            depth = 0
            for m in _TOKEN.finditer(t, i):
                tok = m.group(0)
                if tok in "[{":
                    depth += 1
                elif tok in "]}":
                    depth -= 1
                    if depth == 0:
                        return m.end()
            return len(t)
        end = _SCALAR_END.search(t, i)  # ends at the latest with the text ($)
        return end.start() if end is not None else len(t)

    def _index(self, off: int):
        if off in self._members:
            return self._members[off]
        t, n = self._text, len(self._text)
        if off >= n or t[off] not in "[{":
            self._members[off] = None
            return None
        is_obj = t[off] == "{"
        members: Any = {} if is_obj else []
        i = self._skip_ws(off + 1)
        while i < n and t[i] not in "]}":
            if is_obj:
                m = _STRING.match(t, i)
                if m is None:
                    break
                key = json.loads(m.group(0))
                i = self._skip_ws(m.end())
                if i < n and t[i] == ":":
                    i = self._skip_ws(i + 1)
                members[key] = (m.start(), i)  # a repeated key: the last wins, as in json.loads
            else:
                members.append(i)
            i = self._skip_ws(self._skip_value(i))
            if i < n and t[i] == ",":
                i = self._skip_ws(i + 1)
        self._members[off] = members
        return members

    def _resolve(self, path: Path) -> tuple[int, int] | None:
        """(offset shown, offset of the value) for ``path``, or None."""
        if not isinstance(path, tuple) or not path:
            return None
        off = shown = self._root  # path is not empty: shown is the last part's
        for part in path:
            members = self._index(off)
            if isinstance(members, dict) and isinstance(part, str) and part in members:
                shown, off = members[part]
            elif isinstance(members, list) and isinstance(part, int) and not isinstance(part, bool) \
                    and 0 <= part < len(members):
                shown = off = members[part]
            else:
                return None
        return shown, off

    @staticmethod
    def _key(off: Any) -> int:  # an offset names one container
        return off

    def _location(self, hit: tuple[int, int]) -> tuple[int, int]:
        return self._at(hit[0])

    def _children(self, off: int) -> list[tuple[Any, int]] | None:
        members = self._index(off)
        if isinstance(members, dict):
            return [(k, v) for k, (_, v) in members.items()]
        if isinstance(members, list):
            return list(enumerate(members))
        return None

    def __bool__(self) -> bool:  # `positions or {}` must not enumerate every path
        return bool(self._index(self._root))


def json_positions(text: str) -> JsonPositions:
    """Line and column of every key path in a JSON document (lazy, O(1) memory in depth)."""
    return JsonPositions(text)


# ----------------------------------------------------------------------------------------- YAML
class YamlPositions(_LazyPositions):
    """Key path -> (line, column) from a composed YAML node graph, resolved on demand.

    Mapping keys are matched by their scalar text; of repeated keys the last is shown, the one
    whose value the loader keeps (PyYAML's construct_mapping, JSON's last-wins; merged ``<<`` keys
    come first in the flattened mapping, so a key of the mapping itself wins over a merged one).
    """

    def __init__(self, root: Any):
        self._root = root

    def _resolve(self, path: Path):
        import yaml

        if not isinstance(path, tuple) or not path or self._root is None:
            return None
        node, mark = self._root, None
        for part in path:
            if isinstance(node, yaml.MappingNode):
                hit = next(((k, v) for k, v in reversed(node.value)
                            if isinstance(k, yaml.ScalarNode) and k.value == part), None)
                if hit is None:
                    return None
                mark, node = hit[0].start_mark, hit[1]
            elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and 0 <= part < len(node.value):
                node = node.value[part]
                mark = node.start_mark
            else:
                return None
        return mark

    def _location(self, mark: Any) -> tuple[int, int]:
        return mark.line + 1, mark.column + 1

    def _children(self, node: Any) -> list[tuple[Any, Any]] | None:
        import yaml

        if isinstance(node, yaml.MappingNode):
            last = {k.value: v for k, v in node.value if isinstance(k, yaml.ScalarNode)}  # the value kept
            return list(last.items())
        if isinstance(node, yaml.SequenceNode):
            return list(enumerate(node.value))
        return None

    def __bool__(self) -> bool:  # `positions or {}` must not enumerate every path
        return bool(getattr(self._root, "value", None))
