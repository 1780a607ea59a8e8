"""Edit a config's text key by key, keeping everything else (comments, order, layout).

JSON has no comments: it is re-dumped with its own indentation and key order. YAML and TOML are
changed one key at a time on the line the parser located it (``parse.Positions``): a value is
replaced after its ``:`` / ``=`` (a block below it removed), a new key is inserted below its
parent with the indentation of the parent's children (YAML) or under its ``[table]`` header
(TOML), a deleted key loses its line and its block. After each change the text is parsed again
for the next key's position. :func:`edited` returns None when a change cannot be made that way
(a flow-style parent, a key on a line shared with others); the caller then dumps the mapping.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any
from collections.abc import Mapping

from .edit import DELETE, apply_to_mapping

_PLAIN_KEY = re.compile(r"^[A-Za-z0-9_\-][A-Za-z0-9_\-.]*$")
_RESERVED = {"true", "false", "yes", "no", "on", "off", "null", "~", "y", "n"}


def _yfloat(x: float) -> str:
    if not math.isfinite(x):
        return ".inf" if x > 0 else ("-.inf" if x < 0 else ".nan")
    r = repr(x)
    if "e" in r and "." not in r.split("e")[0]:  # PyYAML (YAML 1.1) reads 1e+16 as a string: 1.0e+16
        m, e = r.split("e")
        r = f"{m}.0e{e}"
    return r


def yaml_value(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return _yfloat(v)
    if isinstance(v, Mapping):
        return "{" + ", ".join(f"{_ykey(k)}: {yaml_value(x)}" for k, x in v.items()) + "}"
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(yaml_value(x) for x in v) + "]"
    s = str(v)
    if _PLAIN_KEY.match(s) and s.lower() not in _RESERVED and not re.match(r"^[-+.\d]", s):
        return s
    return json.dumps(s)


def yaml_entry(key_text: str, value: Any, indent: int) -> list[str]:
    """``key: value`` lines at ``indent``, a non-empty mapping in block style (as configs write them)."""
    if isinstance(value, Mapping) and value:
        out = [" " * indent + f"{key_text}:"]
        for k, v in value.items():
            out += yaml_entry(_ykey(k), v, indent + 2)
        return out
    return [" " * indent + f"{key_text}: {yaml_value(value)}"]


def _ykey(k: Any) -> str:
    s = str(k)
    return s if _PLAIN_KEY.match(s) and s.lower() not in _RESERVED else json.dumps(s)


def toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, Mapping):
        return "{ " + ", ".join(f"{_tkey(k)} = {toml_value(x)}" for k, x in v.items()) + " }"
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    return json.dumps(str(v))


def _tkey(k: Any) -> str:
    s = str(k)
    return s if re.match(r"^[A-Za-z0-9_\-]+$", s) else json.dumps(s)


def dump(mapping: Mapping, fmt: str, indent: int = 2) -> str:
    """The whole mapping in ``fmt`` (the fallback when a line edit is not possible)."""
    if fmt == "json":
        return json.dumps(mapping, indent=indent, ensure_ascii=False) + "\n"
    if fmt == "yaml":
        import yaml

        return yaml.safe_dump(dict(mapping), sort_keys=False, default_flow_style=False, allow_unicode=True)
    lines: list[str] = []
    scalars = {k: v for k, v in mapping.items() if not isinstance(v, Mapping)}
    for k, v in scalars.items():
        lines.append(f"{_tkey(k)} = {toml_value(v)}")

    def table(prefix: list[str], m: Mapping) -> None:
        simple = {k: v for k, v in m.items() if not isinstance(v, Mapping)}
        lines.append("")
        lines.append("[" + ".".join(_tkey(p) for p in prefix) + "]")
        for k, v in simple.items():
            lines.append(f"{_tkey(k)} = {toml_value(v)}")
        for k, v in m.items():
            if isinstance(v, Mapping):
                table(prefix + [str(k)], v)
    for k, v in mapping.items():
        if isinstance(v, Mapping):
            table([str(k)], v)
    return "\n".join(lines).lstrip("\n") + "\n"


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _blank(line: str) -> bool:
    s = line.strip()
    return not s or s.startswith("#")


def _block_end(lines: list[str], i: int) -> int:
    """Index after the block owned by the key on line ``i`` (lines indented deeper; YAML)."""
    ind = _indent(lines[i])
    j = i + 1
    while j < len(lines) and (_blank(lines[j]) or _indent(lines[j]) > ind):
        j += 1
    while j > i + 1 and _blank(lines[j - 1]):  # trailing comments / blanks belong to what follows
        j -= 1
    return j


def _separator(line: str, col: int, fmt: str) -> int | None:
    """Index of the ``:`` (YAML) or ``=`` (TOML) after the key that starts at ``col``."""
    sep = ":" if fmt == "yaml" else "="
    i, quote = col, None
    while i < len(line):
        c = line[i]
        if quote:
            if c == quote:
                quote = None
        elif c in "\"'" and i == col:
            quote = c
        elif c == sep and (fmt != "yaml" or i + 1 == len(line) or line[i + 1] in " \t"):
            return i
        i += 1
    return None


def _comment(rest: str) -> str:
    """A trailing `` # comment`` of a plain scalar value, to keep."""
    m = re.search(r"\s+#.*$", rest)
    if m and not any(q in rest[:m.start()] for q in "\"'[{"):
        return m.group(0)
    return ""


def _one(text: str, fmt: str, path: tuple, value: Any, delete: bool) -> str | None:
    from ..parse import parse_text

    data, positions = parse_text(text, fmt)
    lines = text.split("\n")
    pos = positions.get(tuple(path))
    render = yaml_value if fmt == "yaml" else toml_value
    if pos is not None:
        i, col = pos[0] - 1, pos[1] - 1
        line = lines[i]
        if fmt == "toml" and line.lstrip().startswith("["):
            return None  # a table header: not a key = value line
        j = _separator(line, col, fmt)
        if j is None:
            return None
        if fmt == "yaml" and line[:col].strip():  # a key sharing its line (flow style or `- key:`)
            return None
        end = _block_end(lines, i) if fmt == "yaml" else i + 1
        if delete:
            return "\n".join(lines[:i] + lines[end:])
        keep = _comment(line[j + 1:])
        if fmt == "yaml" and isinstance(value, Mapping) and value:  # a block, as the file's own mappings are
            lines[i:end] = [line[:j + 1] + keep] + sum((yaml_entry(_ykey(k), v, _indent(line) + 2)
                                                        for k, v in value.items()), [])
        else:
            lines[i:end] = [line[:j + 1] + " " + render(value) + keep]
        return "\n".join(lines)
    if delete:
        return text
    parent, key = tuple(path[:-1]), path[-1]
    if fmt == "toml":
        if len(parent) > 1:
            return None
        entry = f"{_tkey(key)} = {toml_value(value)}"
        if not parent:  # top-level keys go before the first table
            first = next((n for n, ln in enumerate(lines) if ln.lstrip().startswith("[")), len(lines))
            lines.insert(first, entry)
            return "\n".join(lines)
        ppos = positions.get(parent)
        if ppos is None:
            body = "\n".join(lines).rstrip("\n")
            return body + f"\n\n[{_tkey(parent[0])}]\n{entry}\n"
        if not lines[ppos[0] - 1].lstrip().startswith("["):
            return None  # an inline table
        lines.insert(ppos[0], entry)
        return "\n".join(lines)
    entry_key = _ykey(key)
    if not parent:
        body = "\n".join(lines).rstrip("\n")
        return body + "\n" + "\n".join(yaml_entry(entry_key, value, 0)) + "\n"
    ppos = positions.get(parent)
    if ppos is None and len(parent) == 1:  # a new top-level section, in block style
        body = "\n".join(lines).rstrip("\n")
        return body + "\n" + "\n".join(yaml_entry(_ykey(parent[0]), {key: value}, 0)) + "\n"
    if ppos is None:  # create the parent with this one key
        return _one(text, fmt, parent, {key: value}, False)
    pi = ppos[0] - 1
    pline = lines[pi]
    pj = _separator(pline, ppos[1] - 1, fmt)
    if pj is None or pline[pj + 1:].strip() and not pline[pj + 1:].strip().startswith("#"):
        return None  # the parent is a flow mapping or a scalar
    child = next((ln for ln in lines[pi + 1:] if not _blank(ln)), None)
    ind = _indent(child) if child is not None and _indent(child) > _indent(pline) else _indent(pline) + 2
    at = _block_end(lines, pi)  # after its siblings
    lines[at:at] = yaml_entry(entry_key, value, ind)
    return "\n".join(lines)


def edited(original: str, fmt: str, data: Mapping, positions: Any, changes: list) -> str | None:
    """``original`` with ``changes`` applied key by key, or None when one cannot be made in place."""

    if fmt == "json":
        m = re.search(r"\n( +)\S", original)
        return dump(apply_to_mapping(data, changes), "json", len(m.group(1)) if m else 2)
    text = original
    for path, value in changes:
        got = _one(text, fmt, path, value, value is DELETE)
        if got is None:
            return None
        text = got
    return text if text.endswith("\n") else text + "\n"
