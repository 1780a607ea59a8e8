"""The mappings of a document as the table engine reads them: a section with its key path prefix that
records every value read (with its key, line and column), defaults standing in for a missing section,
OmegaConf ``${...}`` interpolations resolved on read, and the section that holds the model settings.
"""

from __future__ import annotations

import re
from typing import Any
from collections.abc import Mapping

from .model import NUMERIC_STR, Value, plain
from .parse import Positions
from .model import Problem
from .rules.value_rules import UNRESOLVED


def norm_key(key: Any) -> str:
    return str(key).strip().lower().replace("-", "_")


def dotted(path: tuple) -> str:
    return ".".join(str(p) for p in path)


PARAM_EXPECT = {"short_factor": "list", "long_factor": "list", "truncate": "bool",
                 "original_max_position_embeddings": "int", "window": "int", "variant": "str"}
NOT_PARAMS = {"type", "rope_type", "rope_theta", "partial_rotary_factor", "base"}
# Qwen2-VL / 2.5-VL (mrope), HunyuanOCR (xdrope): how the pairs split over position / time / height / width
MROPE_KEYS = {"mrope_section", "mrope_interleaved", "xdrope_section"}
ROPE_SWITCHES = ("rope", "use_rope")  # a file no framework claims: ``rope: true`` (OLMo's name) says RoPE is on

# OmegaConf interpolation: the whole value is ${key}, ${.sibling}, ${..parent_key} or ${a.b.c}
# the reference is group(1).strip(): a lazy group between two `\s*` backtracked cubically on spaces
INTERP = re.compile(r"^\$\{([^${}:]*)\}$")
_HAS_INTERP = re.compile(r"\$\{")


class Section:
    """One mapping of the document with its key path prefix; records every value read.

    ``root`` is the whole document: OmegaConf interpolations (``${.encoder_seq_length}``,
    ``${model.max_position_embeddings}``) are resolved against it when a value is read.
    """

    def __init__(self, data: Mapping, prefix: tuple, positions: Positions, fmt: str, inputs: list,
                 root: Mapping | None = None, problems: list | None = None):
        self.data, self.prefix, self.positions, self.fmt, self.inputs = data, prefix, positions, fmt, inputs
        self.root = data if root is None else root
        self.problems = problems if problems is not None else []
        self.keys: dict[str, Any] = {}
        for k in data:
            self.keys.setdefault(norm_key(k), k)

    def has(self, name: str) -> bool:
        k = self.keys.get(name)
        return k is not None and self.data[k] is not None

    def raw(self, name: str) -> Any:
        k = self.keys.get(name)
        return None if k is None else self.data[k]

    def get(self, *names: str, expect: str = "number") -> Value | None:
        """The first of ``names`` present with a non-null value, as a :class:`Value`."""
        for name in names:
            k = self.keys.get(name)
            if k is None or self.data[k] is None:
                continue
            raw = self.data[k]
            path = self.prefix + (k,)
            line, col = self.positions.get(path, (1, 1))
            note = ""
            if self.fmt in ("yaml", "toml") and isinstance(raw, str) and _HAS_INTERP.search(raw):
                resolved, why = _interpolate(self.root, self.prefix, raw)
                if why is not None:
                    v = Value(raw, dotted(path), line, col, "", "interpolation")
                    self.inputs.append(v)
                    self.problems.append(Problem(UNRESOLVED, v, f"{dotted(path)} is {raw}: {why}"))
                    return v
                raw, note = resolved, f"{raw.strip()} resolved"
            if (self.fmt in ("yaml", "toml") and expect in ("number", "int") and isinstance(raw, str)
                    and NUMERIC_STR.match(raw)):
                raw = float(raw.replace("_", ""))
                note = (note + ", " if note else "") + "a string in the file, read as a number"
            v = Value(raw, dotted(path), line, col, note, expect)
            self.inputs.append(v)
            return v
        return None

    def sub(self, name: str) -> Section | None:
        k = self.keys.get(name)
        if k is None or not isinstance(self.data[k], Mapping):
            return None
        return Section(self.data[k], self.prefix + (k,), self.positions, self.fmt, self.inputs, self.root,
                        self.problems)


class DefaultSection(Section):
    """A mapping of the config class's defaults (a default RoPE block): its values carry no key and say
    they are the default, at the position of model_type."""

    def __init__(self, data, prefix, positions, fmt, inputs, root, problems, *, note: str, at: tuple[int, int]):
        super().__init__(data, prefix, positions, fmt, [], root, problems)
        self.note, self.at = note, at

    def get(self, *names: str, expect: str = "number") -> Value | None:
        for name in names:
            k = self.keys.get(name)
            if k is not None and self.data[k] is not None:
                return Value(plain(self.data[k]), None, self.at[0], self.at[1],
                             f"{dotted(self.prefix + (k,))}: {self.note}", expect)
        return None

    def sub(self, name: str) -> Section | None:
        k = self.keys.get(name)
        if k is None or not isinstance(self.data[k], Mapping):
            return None
        return DefaultSection(self.data[k], self.prefix + (k,), self.positions, self.fmt, self.inputs, self.root,
                               self.problems, note=self.note, at=self.at)


def _interpolate(root: Mapping, prefix: tuple, text: str) -> tuple[Any, str | None]:
    """Resolve an OmegaConf interpolation ``text`` found in the mapping at ``prefix``:
    ``(value, None)``, or ``(None, why)`` when it cannot be resolved.

    OmegaConf's grammar (omegaconf 2.3, "Variable interpolation"): ``${a.b}`` is absolute, from
    the root; ``${.b}`` is relative to the node holding the value, each further dot one level up.
    Resolvers (``${oc.env:X}``) and strings with text around the interpolation are not
    evaluated (their value depends on the environment): reported as unresolvable. A chain of
    references is followed to its end, however long (each key at most once: a key met twice is a
    cycle, as OmegaConf reports it), iteratively.
    """
    seen: set[tuple] = set()
    while True:
        m = INTERP.match(text.strip())
        if m is None:
            return None, "an OmegaConf expression ropelaw does not evaluate (only ${key} and ${.key} references)"
        ref = m.group(1).strip()
        if ref.startswith("."):
            ups = len(ref) - len(ref.lstrip("."))
            if ups - 1 > len(prefix):
                return None, f"${{{ref}}} goes above the top of the file"
            base = prefix[: len(prefix) - (ups - 1)]
            parts = [p for p in ref[ups:].split(".") if p]
        else:
            base = ()
            parts = [p for p in ref.split(".") if p]
        node: Any = root
        for p in base:
            node = node[p]
        where = list(base)
        for p in parts:
            if isinstance(node, Mapping) and p in node:
                node = node[p]
            elif isinstance(node, list) and p.isascii() and p.isdigit() and int(p) < len(node):
                node = node[int(p)]
            else:
                return None, f"no key {'.'.join(str(w) for w in where + [p])} in the file"
            where.append(p)
        if tuple(where) in seen:
            return None, "interpolations refer to each other in a cycle"
        seen.add(tuple(where))
        if isinstance(node, str) and _HAS_INTERP.search(node):
            prefix, text = tuple(where[:-1]), node
            continue
        if node is None or isinstance(node, (Mapping, list)):
            return None, f"{'.'.join(map(str, where))} is {'null' if node is None else 'not a single value'}"
        return node, None


def pick_section(data: Mapping, positions: Positions, fmt: str, inputs: list, dialect, problems: list) -> Section:
    """The mapping holding the model settings: the root, or a nested section of the dialect
    (``text_config``, ``language_config``, ``model`` ...; one or two levels) with more of the
    dialect's keys than the root. A LLaVA ``text_config`` holding only a few keys still wins when it
    names its own ``model_type`` (the language model is the one that rotates)."""
    root = Section(data, (), positions, fmt, inputs, data, problems)
    known = dialect.all_keys()

    def score(s: Section) -> int:
        return sum(1 for k in s.keys if k in known)

    best, best_score = root, score(root)
    frontier = [root]
    for _ in range(2):
        nxt = []
        for s in frontier:
            for name in dialect.sections:
                sub = s.sub(name)
                if sub is not None:
                    nxt.append(sub)
                    sc = score(sub) + (100 if name in ("text_config", "language_config", "llm_config")
                                       and isinstance(sub.raw("model_type"), str) else 0)
                    if sc > best_score:
                        best, best_score = sub, sc
        frontier = nxt
    return best


def cli_value(value: Any, flag: str, expect: str = "number") -> Value | None:
    return None if value is None else Value(value, None, 1, 1, flag, expect)
