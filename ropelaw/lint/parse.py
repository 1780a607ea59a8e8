"""The parse layer of the linter: config text -> (mapping, positions), with limits by design.

JSON, YAML and TOML are parsed by their standard parsers; positions (line, column of every key
path) are found separately, so the data the rules see is the parsers' own. Hostile files are
bounded before or while they are read (each limit below says why its value):

- only regular files are opened (a FIFO or ``/dev/zero`` is refused before reading, also in a
  directory scan: :mod:`ropelaw.safeio`), at most :data:`MAX_BYTES`;
- positions are resolved lazily, per container on the looked-up path (:mod:`ropelaw.lint.positions`
  for JSON and YAML): memory is O(size of the containers looked into), independent of nesting
  depth (a 2 MB JSON nested 900 deep used to keep a depth-long path per element: gigabytes);
- YAML is composed once; recursive anchors are refused and alias expansion is counted
  before anything is constructed (a "billion laughs" document is refused in milliseconds);
- documents nested deeper than :data:`MAX_DEPTH` are refused (no config nests that deep, and
  the mapping layer walks documents recursively);
- integers beyond the float range (YAML/TOML hex literals of thousands of digits) become
  ``inf`` with their sign, which the value rules report at their key; Python cannot even
  print an integer of more than 4,300 digits.

Malformed files raise :class:`~ropelaw.errors.UsageError` (one line): exit 2 when named on
the command line, an RE101/RE102 finding inside a directory scan.
"""

from __future__ import annotations

import json
import os
import re
from typing import Any

from ..errors import UsageError
from ..safeio import read_regular
from .positions import JsonPositions, Path, Positions, YamlPositions, json_positions  # noqa: F401  (re-exported)

__all__ = ["NotAConfig", "not_a_config", "CONFIG_SUFFIXES", "MAX_BYTES", "MAX_DEPTH", "MAX_ALIAS_EXPANSION",
           "MAX_ALIAS_BYTES", "MAX_ITEMS", "MAX_TOML_KEY_WEIGHT",
           "Positions", "json_positions",
           "yaml_positions", "toml_positions", "parse_text", "read_text", "read_document", "config_files", "format_of"]

CONFIG_SUFFIXES = (".json", ".yaml", ".yml", ".toml")
MAX_BYTES = 16 * 1024 * 1024  # a model config is kilobytes; refuse to parse anything huge
# Deepest nesting accepted. Real configs nest a handful of levels (NeMo: model.optim.sched ...,
# HF: text_config.rope_parameters.full_attention.factor); 64 leaves ample room and keeps every
# recursive walk of the mapping layer far from Python's recursion limit.
MAX_DEPTH = 64
# Nodes that YAML aliases may add when expanded (each alias counts the size of what it
# points to). Real configs reuse a few small anchors; a billion-laughs document adds 10^9.
MAX_ALIAS_EXPANSION = 1_000_000
# Characters of scalar text that aliases may add when expanded: the file's own size limit
# again (an alias of a 1 MB string 1,000 times is 1,000 nodes but a gigabyte of text).
MAX_ALIAS_BYTES = 16 * 1024 * 1024
# YAML / TOML lines plus comma-separated items (every node but the first needs a newline or a
# comma), counted before parsing: the YAML composer builds a Python object per node (about 2.5 us
# and 400 bytes each) and tomllib parses in Python, so a 16 MiB file of a million items takes
# many seconds and hundreds of MB. A real config has hundreds to a few thousand lines.
MAX_ITEMS = 1 << 18
# TOML dotted keys: the sum over keys and headers of (parts of the key)^2, bounded before tomllib,
# which keeps every prefix of a dotted key (time and memory quadratic in its parts). A real
# torchtitan or OLMo-core TOML sums to a few thousand; 2^21 parses in about a second.
MAX_TOML_KEY_WEIGHT = 1 << 21

def _check_yaml_graph(root: Any) -> None:
    """Refuse recursive anchors, nesting beyond MAX_DEPTH, and alias expansion beyond its limits.

    Iterative post-order walk of the node graph (aliases are shared nodes): a node met again
    while on the current path is a cycle; expanded sizes, in nodes and in bytes of scalar text,
    are summed bottom-up, memoised per node, so the check costs O(nodes), whatever the expansion
    would be. Bytes matter as much as nodes: 1,000 aliases of a 1 MB string are 1,000 nodes but
    a gigabyte in any message, JSON report or string operation that meets the expanded value.
    """
    import yaml

    size: dict[int, int] = {}
    nbytes: dict[int, int] = {}
    composed = composed_bytes = 0
    on_path: set[int] = set()
    stack: list[tuple[Any, int, bool]] = [(root, 1, False)]
    while stack:
        node, depth, done = stack.pop()
        key = id(node)
        children = node.value if isinstance(node, (yaml.MappingNode, yaml.SequenceNode)) else ()
        if isinstance(node, yaml.MappingNode):
            children = [n for pair in node.value for n in pair]
        if done:
            on_path.discard(key)
            total = 1 + sum(size[id(c)] for c in children)
            size[key] = total
            total_bytes = (len(node.value) if isinstance(node, yaml.ScalarNode) else 0) + sum(
                nbytes[id(c)] for c in children)
            nbytes[key] = total_bytes
            if total - composed > MAX_ALIAS_EXPANSION:
                raise UsageError(f"YAML aliases expand to more than {MAX_ALIAS_EXPANSION:,} extra nodes "
                                 "(a 'billion laughs' document?); refused")
            if total_bytes - composed_bytes > MAX_ALIAS_BYTES:
                raise UsageError(f"YAML aliases expand to more than {MAX_ALIAS_BYTES:,} extra characters of "
                                 "text (a string repeated through aliases); refused")
            continue
        if key in size:
            continue
        if key in on_path:
            raise UsageError("recursive YAML anchor (an alias inside the node it names); refused")
        if depth > MAX_DEPTH:
            raise UsageError(f"nested deeper than {MAX_DEPTH} levels; not a config")
        composed += 1
        if isinstance(node, yaml.ScalarNode):
            composed_bytes += len(node.value)
        on_path.add(key)
        stack.append((node, depth, True))
        for c in children:
            if id(c) in on_path:
                raise UsageError("recursive YAML anchor (an alias inside the node it names); refused")
            if id(c) not in size:
                stack.append((c, depth + 1, False))


def _yaml_int(loader: Any, node: Any) -> Any:
    """YAML ints as PyYAML reads them, except decimal literals beyond the float range (PyYAML's
    ``int(text)`` refuses more than 4,300 digits): :class:`OverflowInt`."""
    import yaml

    digits = sum(ch.isdigit() for ch in str(node.value))
    if digits > _FLOAT_DIGITS and not str(node.value).lstrip("+-").startswith(("0x", "0o", "0b", "0")):
        return OverflowInt(str(node.value).startswith("-"), digits)
    return yaml.SafeLoader.construct_yaml_int(loader, node)


def _loader_class(pure: bool = False):
    """PyYAML's safe loader with ropelaw's int and unknown-tag constructors: on libyaml's C parser
    (``CSafeLoader``, 10-30x faster) when PyYAML was built with it, else the pure-Python parser.

    Both compose the same nodes with the same marks (line and column in characters), resolve
    scalars with the same Python resolver and construct with the same constructors: the data and
    every position are the same (tests/test_lint_loader.py compares them on every YAML file of the
    tests and the corpus and on generated documents). Only the wording of a syntax error differs.
    """
    import yaml

    base = yaml.SafeLoader if pure or not getattr(yaml, "__with_libyaml__", False) else yaml.CSafeLoader

    class Loader(base):  # type: ignore[misc, valid-type]
        pass

    Loader.add_constructor("tag:yaml.org,2002:int", _yaml_int)
    Loader.add_multi_constructor("", _yaml_other_tag)
    return Loader


def _yaml_other_tag(loader: Any, suffix: str, node: Any) -> Any:
    """A tag no safe constructor knows (mkdocs' ``!!python/name:...``, CloudFormation's ``!Ref``,
    Ansible's ``!vault``): the node as plain data, so ordinary YAML parses. Nothing is imported
    or called; the tag is dropped."""
    import yaml

    if isinstance(node, yaml.MappingNode):
        return loader.construct_mapping(node)
    if isinstance(node, yaml.SequenceNode):
        return loader.construct_sequence(node)
    return loader.construct_scalar(node)


def _YamlLoader(text: str):  # noqa: N802 (a factory standing in for a class)
    global _LOADER
    if _LOADER is None:
        _LOADER = _loader_class()
    return _LOADER(text)


_LOADER = None


def _check_items(text: str) -> None:
    """Refuse a YAML or TOML document of more than :data:`MAX_ITEMS` lines and commas (linear)."""
    items = text.count("\n") + text.count(",")
    if items > MAX_ITEMS:
        raise UsageError(f"{items:,} lines and comma-separated items, more than the {MAX_ITEMS:,} a config "
                         "may hold; refused")


def _yaml_load(text: str) -> tuple[Any, Any]:
    """(data, root node): composed once, checked by :func:`_check_yaml_graph`, then constructed.

    Documents of more than :data:`MAX_ITEMS` lines and flow items are refused before
    composing (linear-time counts of newlines and commas)."""
    _check_items(text)
    loader = _YamlLoader(text)
    try:
        root = loader.get_node() if loader.check_node() else None  # a multi-document stream
        # (Kubernetes manifests): its first document, as a config is a single one
        if root is None:
            return None, None
        if "&" in text:  # no anchor, no alias: nothing to expand (depth: _bound_document, after)
            _check_yaml_graph(root)
        return loader.construct_document(root), root
    finally:
        loader.dispose()


def yaml_positions(text: str) -> YamlPositions:
    """Key paths of a YAML document from node marks (composed with the checks of :func:`parse_text`)."""
    return YamlPositions(_yaml_load(text)[1])


# ----------------------------------------------------------------------------------------- TOML
_TOML_OPEN = re.compile(r"\s*(\[\[?)\s*")


def _toml_header(line: str) -> tuple[str, str] | None:
    r"""``(brackets, key path)`` of a table header line, or None: what the regular expression
    ``^\s*(\[\[?)\s*(.+?)\s*\]\]?\s*(?:#.*)?$`` matched, in linear time (the expression backtracked
    quadratically: 100,000 spaces in a header took minutes). The key path ends before the first
    ``]`` (or ``]]``) that only whitespace and an optional comment follow."""
    m = _TOML_OPEN.match(line)
    if m is None:
        return None
    rest = line[m.end():]
    n = len(rest)
    ends_here = [False] * (n + 1)  # rest[i:] is whitespace, then nothing or a comment
    ends_here[n] = True
    for i in range(n - 1, -1, -1):
        ends_here[i] = rest[i] == "#" or (rest[i].isspace() and ends_here[i + 1])
    for j in range(1, n):
        if rest[j] != "]":
            continue
        if ends_here[j + 1] or (j + 1 < n and rest[j + 1] == "]" and ends_here[j + 2]):
            name = rest[:j].rstrip()
            if name:
                return m.group(1), name
    return None

_TOML_KEY = re.compile(r"""^(\s*)((?:[A-Za-z0-9_-]+|"(?:[^"\\]|\\.)*"|'[^']*')"""
                       r"""(?:\s*\.\s*(?:[A-Za-z0-9_-]+|"(?:[^"\\]|\\.)*"|'[^']*'))*)\s*=""")
_TOML_PART = re.compile(r"""[A-Za-z0-9_-]+|"(?:[^"\\]|\\.)*"|'[^']*'""")


def _toml_parts(dotted: str) -> tuple:
    parts = []
    for m in _TOML_PART.finditer(dotted):
        tok = m.group(0)
        if tok.startswith('"'):
            tok = json.loads(tok)
        elif tok.startswith("'"):
            tok = tok[1:-1]
        parts.append(tok)
    return tuple(parts)


def toml_positions(text: str) -> dict:
    """Key paths of a TOML document by a line scan of headers and ``key =`` lines.

    ``[[array]]`` tables get indices 0, 1, ... in order. Lines inside multi-line strings or
    arrays are skipped when they open with a triple quote or an unclosed ``[``. One entry per
    line at most; a header or key path of more than :data:`MAX_DEPTH` parts is refused
    (``UsageError``), and so are keys whose parts, squared and summed, exceed
    :data:`MAX_TOML_KEY_WEIGHT`: this runs before tomllib, whose time and memory grow with the
    square of a key's parts (100,000 keys of 61 parts: 98 s and 3.7 GB).
    """
    out: dict = {}
    table: tuple = ()
    counts: dict[tuple, int] = {}
    in_multiline: str | None = None
    depth = weight = 0
    # TOML's newlines are LF and CRLF only (str.splitlines would also split at a form feed or
    # U+2028 inside a string and shift every later line number)
    for lineno, line in enumerate(text.split("\n"), start=1):
        line = line.removesuffix("\r")
        if in_multiline:
            if in_multiline in line:
                in_multiline = None
            continue
        if depth > 0:
            depth += line.count("[") - line.count("]")
            continue
        header = _toml_header(line) if line.lstrip().startswith("[") else None
        if header and not _TOML_KEY.match(line):
            parts = _toml_parts(header[1])
            if len(parts) > MAX_DEPTH:
                raise UsageError(f"nested deeper than {MAX_DEPTH} levels; not a config")
            weight += len(parts) ** 2
            if header[0] == "[[":
                idx = counts.get(parts, 0)
                counts[parts] = idx + 1
                table = parts + (idx,)
                out.setdefault(parts, (lineno, line.index("[") + 1))
                out.setdefault(table, (lineno, line.index("[") + 1))
            else:
                table = parts
                out.setdefault(table, (lineno, line.index("[") + 1))
            continue
        m = _TOML_KEY.match(line)
        if m:
            parts = _toml_parts(m.group(2))
            if len(table) + len(parts) > MAX_DEPTH:
                raise UsageError(f"nested deeper than {MAX_DEPTH} levels; not a config")
            weight += len(parts) ** 2
            if weight > MAX_TOML_KEY_WEIGHT:
                raise UsageError(f"dotted keys of {MAX_TOML_KEY_WEIGHT:,} squared parts and more (line {lineno:,}); "
                                 "refused (no config has so many)")
            out.setdefault(table + parts, (lineno, len(m.group(1)) + 1))
            rest = line[m.end():]
            for q in ('"""', "'''"):
                if rest.count(q) == 1:
                    in_multiline = q
            if "[" in rest and not in_multiline:
                depth = rest.count("[") - rest.count("]")
    return out


# ------------------------------------------------------------------------------ reading a document
def format_of(path: str) -> str:
    """"json", "yaml" or "toml" by the file's suffix; ``UsageError`` for any other."""
    low = path.lower()
    if low.endswith(".json"):
        return "json"
    if low.endswith((".yaml", ".yml")):
        return "yaml"
    if low.endswith(".toml"):
        return "toml"
    raise UsageError(f"{path}: not a config file (expected .json, .yaml, .yml or .toml)")


def _json_constant(name: str) -> float:
    return float(name)  # NaN, Infinity, -Infinity: kept, reported by RV002 at their key


_FLOAT_BITS = 1024  # |x| >= 2**1024 is beyond float64: such an int is no usable setting
_FLOAT_DIGITS = 309  # decimal digits of 2**1024


class OverflowInt(float):
    """An integer literal beyond the float range, kept as +-inf (RV002 reports it at its key).

    Shown as what it was (``an integer of 5,000 digits``): Python cannot print an int of more
    than 4,300 digits, and the rules need no more than its size.
    """

    digits: int

    def __new__(cls, negative: bool, digits: int) -> OverflowInt:
        obj = super().__new__(cls, "-inf" if negative else "inf")
        obj.digits = digits
        return obj

    def __repr__(self) -> str:
        return f"{'-' if self < 0 else ''}an integer of {self.digits:,} digits"

    __str__ = __repr__

    def __reduce__(self):
        return (OverflowInt, (self < 0, self.digits))


def _overflow_int(v: int) -> OverflowInt:
    return OverflowInt(v < 0, int(v.bit_length() * 0.30102999566398120) + 1)  # log10(2): digits, +-1


def _json_int(text: str) -> Any:
    digits = len(text.lstrip("-"))
    return int(text) if digits <= _FLOAT_DIGITS else OverflowInt(text.startswith("-"), digits)


def _bound_document(data: Any) -> None:
    """Check depth (<= MAX_DEPTH) and turn ints beyond the float range into +-inf, in place.

    Iterative with a visited set (YAML aliases share containers), so neither cycles nor depth
    reach the recursion limit here.
    """
    seen: set[int] = set()
    todo: list[tuple[Any, int]] = [(data, 1)]
    while todo:
        obj, depth = todo.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        if depth > MAX_DEPTH:
            raise UsageError(f"nested deeper than {MAX_DEPTH} levels; not a config")
        if isinstance(obj, dict):
            for k, v in obj.items():
                if isinstance(v, int) and not isinstance(v, bool) and v.bit_length() > _FLOAT_BITS:
                    obj[k] = _overflow_int(v)
                elif isinstance(v, (dict, list)):
                    todo.append((v, depth + 1))
        elif isinstance(obj, list):
            for i, v in enumerate(obj):
                if isinstance(v, int) and not isinstance(v, bool) and v.bit_length() > _FLOAT_BITS:
                    obj[i] = _overflow_int(v)
                elif isinstance(v, (dict, list)):
                    todo.append((v, depth + 1))


def parse_text(text: str, fmt: str, path: str = "-") -> tuple[dict, Positions]:
    """Parse ``text`` as ``fmt`` ("json", "yaml", "toml"); ``UsageError`` on malformed input."""
    try:
        if fmt == "json":
            data = json.loads(text, parse_constant=_json_constant, parse_int=_json_int)
            positions: Positions = json_positions(text) if isinstance(data, dict) else {}
        elif fmt == "yaml":
            data, root = _yaml_load(text)
            positions = YamlPositions(root) if isinstance(data, dict) else {}
        elif fmt == "toml":
            import tomllib

            _check_items(text)
            positions = toml_positions(text)  # first: refuses key paths deeper than MAX_DEPTH, on
            # which tomllib takes quadratic time and memory (50,000 dotted parts: 88 s, 9.8 GB)
            data = tomllib.loads(text)
        else:
            raise UsageError(f"{path}: unknown config format {fmt!r}")
        _bound_document(data)
    except UsageError as exc:
        msg = str(exc)
        raise UsageError(msg if msg.startswith(f"{path}: ") else f"{path}: malformed {fmt.upper()}: {msg}") from None
    except RecursionError:
        raise UsageError(f"{path}: malformed {fmt.upper()}: nested too deeply") from None
    except MemoryError:
        raise UsageError(f"{path}: malformed {fmt.upper()}: too large to parse") from None
    except Exception as exc:  # json/yaml/toml each raise their own error types
        msg = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        if fmt == "yaml":
            msg = " ".join(str(exc).split())
        raise UsageError(f"{path}: malformed {fmt.upper()}: {msg[:300]}") from None
    if not isinstance(data, dict):
        raise not_a_config(path, data)
    return data, positions


class NotAConfig(UsageError):
    """The file parsed, but its top level is not a mapping of settings: a YAML list
    (``.pre-commit-hooks.yaml``, an Ansible playbook, Megatron-LM's RL environment lists), an empty
    document (comments only: NeMo's tp_overlap files), a lone scalar. Not a config, as a Markdown file is
    not Python to ruff: ``ropelaw lint`` skips it with this message, named or found; ``plan`` and the
    audits, which need one config, refuse it (exit 2). A file that does not parse is another matter
    (RE102: it may be a broken config)."""


_KINDS = {list: "a list", tuple: "a list", type(None): "empty (no document, or comments only)", str: "a string",
          bool: "a boolean", int: "a number", float: "a number"}


def not_a_config(path: str, data: Any) -> NotAConfig:
    """:class:`NotAConfig` for ``data``, the parsed top level of ``path`` (not a mapping)."""
    kind = _KINDS.get(type(data), f"a {type(data).__name__}")
    return NotAConfig(f"{path}: not a config: its top level is {kind}, not a mapping of settings")


def read_text(path: str, what: str | None = None) -> str:
    """The text of config file ``path``, decoded once (a UTF-8 byte-order mark dropped, line endings
    kept): what a command parses, plans on and edits, so that all three see one read of the file.

    Only a regular file is opened (a FIFO, device or socket is refused before reading), and at
    most :data:`MAX_BYTES` of it is read. ``what``: how errors name the file ("JSON config").
    """
    what = what or f"{format_of(path).upper()} config"
    if os.path.isdir(path):
        raise UsageError(f"{path}: is a directory (pass it as a directory argument to lint every config in it)")
    raw = read_regular(path, MAX_BYTES, "model config")
    if b"\x00" in raw[:8192]:
        raise UsageError(f"{path}: binary file, not a {what}")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise UsageError(f"{path}: not UTF-8 text (byte {exc.start}); not a {what}") from None


def read_document(path: str) -> tuple[dict, Positions, str]:
    """Read and parse one config file: ``(data, positions, fmt)``; ``UsageError`` if unusable
    (:func:`read_text`, then :func:`parse_text`)."""
    fmt = format_of(path)
    data, positions = parse_text(read_text(path), fmt, path)
    return data, positions, fmt


def config_files(root: str, unscanned: list | None = None) -> list[str]:
    """Every ``*.json``, ``*.yaml``, ``*.yml``, ``*.toml`` under ``root`` (sorted, hidden dirs skipped).

    Non-regular files with those names (a FIFO, a link to a device) are listed too: reading
    them is refused, which a directory scan reports as RE101. Directories that could not be
    entered (unreadable, a path over PATH_MAX, a symbolic link: not followed) are appended to
    ``unscanned`` as ``(path, why)``; the walk is iterative (:func:`ropelaw.safeio.walk_files`).
    """
    return list(iter_config_files(root, unscanned))


def iter_config_files(root: str, unscanned: list | None = None, scripts: bool = False):
    """:func:`config_files` one at a time, as the walk finds them (a scan of 50,000 files keeps no list);
    ``scripts``: shell scripts (``*.sh``, ``*.bash``) and Python files (``*.py``: a framework's configs written in
    Python, :mod:`ropelaw.lint.pyfiles`) too, for the scan to say it did not read them."""
    from ..safeio import walk_files

    return walk_files(root, CONFIG_SUFFIXES + (".gguf",) + ((".sh", ".bash", ".py") if scripts else ()),
                      lambda d: d.startswith("."), unscanned)
