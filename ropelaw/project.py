"""Project configuration of ``ropelaw lint`` and ``ropelaw audit code``, found as ruff finds its own:
``[tool.ropelaw.lint]`` / ``[tool.ropelaw.audit-code]`` in ``pyproject.toml``, or ``[lint]`` / ``[audit-code]``
in ``ropelaw.toml`` / ``.ropelaw.toml``.

For each file linted, the closest configuration file wins: the file's folder, then each folder above
it, is searched for ``.ropelaw.toml``, ``ropelaw.toml``, then ``pyproject.toml`` (used only when it has a
``[tool.ropelaw]`` table), in that order; settings are never merged across files (ruff's hierarchical
configuration, https://docs.astral.sh/ruff/configuration/#config-file-discovery). ``--config PATH`` uses
one file for every file linted; ``--isolated`` uses none. Patterns (``exclude``, ``per-file-ignores``) are
shell globs (``fnmatch``: ``*`` also matches ``/``) matched against the file's path relative to the folder
of the configuration file, or, for a pattern without ``/``, against its name and each folder name on the
way to it. The command line comes after the file: ``--select`` replaces the file's ``select``,
``--ignore`` adds to the file's ignores (``selection.py``), ``--target`` replaces ``target``.

A configuration file ropelaw cannot use (invalid TOML, an unknown key, a value of the wrong type, a rule
selector that names no rule) is bad input: one line naming the file and the key, exit 2.
"""

from __future__ import annotations

import fnmatch
import os
from dataclasses import dataclass
from typing import Any

from .errors import UsageError, did_you_mean

__all__ = ["LINT_KEYS", "AUDIT_CODE_KEYS", "SECTIONS", "NAMES", "ProjectConfig", "find_config", "load_config_file",
           "matches", "shown_path"]

NAMES = (".ropelaw.toml", "ropelaw.toml", "pyproject.toml")  # searched in this order in each folder
LINT_KEYS = ("select", "extend-select", "ignore", "per-file-ignores", "exclude", "train", "target", "tune",
             "dtype", "output-format")
AUDIT_CODE_KEYS = ("select", "extend-select", "ignore", "per-file-ignores", "output-format")
SECTIONS = {"lint": LINT_KEYS, "audit-code": AUDIT_CODE_KEYS}  # the commands a file configures, and their keys
LENGTH_KEYS = ("train", "target", "tune")
MAX_CONFIG_BYTES = 1 << 20  # a pyproject.toml is a few KiB


@dataclass(frozen=True)
class ProjectConfig:
    """One configuration file's settings of one command (``None``: not set there)."""

    path: str  # the file, as found
    table: str  # where its settings are: [tool.ropelaw.lint], [lint], [audit-code], ...
    select: tuple[str, ...] | None = None
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    exclude: tuple[str, ...] = ()
    train: int | None = None
    target: int | None = None
    tune: int | None = None
    dtype: str | None = None
    output_format: str | None = None  # the run's format when --output-format is not given (output.prepare)

    @property
    def shown(self) -> str:
        return shown_path(self.path)

    @property
    def root(self) -> str:
        """The folder patterns are relative to."""
        return os.path.dirname(os.path.abspath(self.path))

    def relative(self, path: str) -> str | None:
        """``path`` relative to :attr:`root` (``/``-separated), or None when it is outside."""
        rel = os.path.relpath(os.path.abspath(path), self.root)
        return None if rel == os.pardir or rel.startswith(os.pardir + os.sep) else rel.replace(os.sep, "/")

    def excluded(self, path: str) -> bool:
        rel = self.relative(path)
        return rel is not None and any(matches(p, rel) for p in self.exclude)

    def ignores_for(self, path: str) -> tuple[str, ...]:
        """The codes ``per-file-ignores`` turns off for ``path``."""
        rel = self.relative(path)
        if rel is None:
            return ()
        return tuple(c for pattern, codes in self.per_file_ignores if matches(pattern, rel) for c in codes)


def shown_path(path: str) -> str:
    """A configuration file's path as messages give it: relative to the working folder when under it."""
    rel = os.path.relpath(os.path.abspath(path))
    return path if rel == os.pardir or rel.startswith(os.pardir + os.sep) else rel


def matches(pattern: str, rel: str) -> bool:
    """Whether the glob ``pattern`` matches the relative path ``rel`` (module docstring)."""
    pattern = pattern.strip()
    pattern = pattern[2:] if pattern.startswith("./") else pattern
    parts = rel.split("/")
    if "/" in pattern.rstrip("/"):
        pattern = pattern.rstrip("/")
        return any(fnmatch.fnmatchcase("/".join(parts[:i]), pattern) for i in range(1, len(parts) + 1))
    return any(fnmatch.fnmatchcase(part, pattern.rstrip("/")) for part in parts)


def find_config(directory: str, cache: dict | None = None, section: str = "lint") -> ProjectConfig | None:
    """The configuration file closest to ``directory`` (this folder or one above it), its ``section``
    loaded; None if none. ``cache``: one per section."""
    cache = {} if cache is None else cache
    seen = []
    d = os.path.abspath(directory)
    found = None
    while True:
        if d in cache:
            found = cache[d]
            break
        seen.append(d)
        found = _config_in(d, section)
        if found is not None:
            break
        parent = os.path.dirname(d)
        if parent == d:
            break
        d = parent
    for s in seen:
        cache[s] = found
    return found


def _config_in(folder: str, section: str) -> ProjectConfig | None:
    for name in NAMES:
        path = os.path.join(folder, name)
        if os.path.lexists(path) and not os.path.isdir(path):  # a FIFO or a device by that name: refused, exit 2
            config = load_config_file(path, section, required=name != "pyproject.toml")
            if config is not None:
                return config
    return None


def load_config_file(path: str, section: str = "lint", *, required: bool = True) -> ProjectConfig | None:
    """The settings of ``section`` in ``path`` (``UsageError`` naming the file and key for what cannot be used;
    empty settings when the file has no such table: the closest file wins all the same, as in ruff).
    A ``pyproject.toml`` without ``[tool.ropelaw]`` is None (not a ropelaw configuration) unless
    ``required`` (named with ``--config``)."""
    from .lint.parse import parse_text
    from .safeio import read_regular

    name = shown_path(path)
    data = read_regular(name, MAX_CONFIG_BYTES, "ropelaw configuration")  # name: relative to the working folder
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise UsageError(f"{name}: not UTF-8 text; not a ropelaw configuration") from None
    doc, _ = parse_text(text, "toml", name)  # the linter's own TOML reading: depth and size bounded first
    pyproject = os.path.basename(path) == "pyproject.toml"
    if pyproject:
        tool = doc.get("tool", {})
        if not isinstance(tool, dict) or "ropelaw" not in tool:
            if required:
                raise UsageError(f"{name}: no [tool.ropelaw] table")
            return None
        doc, prefix = tool["ropelaw"], "tool.ropelaw"
    else:
        prefix = ""
    where = f"{name}: [{prefix}]" if prefix else f"{name}:"
    if not isinstance(doc, dict):
        raise UsageError(f"{where} must be a table")
    dot = prefix + "." if prefix else ""
    for key in doc:
        if key not in SECTIONS:
            raise UsageError(f"{where} unknown key {key!r} (ropelaw reads "
                             f"{', '.join(f'[{dot}{s}]' for s in SECTIONS)}){did_you_mean(key, SECTIONS)}")
    found = {}
    for sec, keys in SECTIONS.items():  # every table checked, whichever command reads the file
        table = doc.get(sec, {})
        if not isinstance(table, dict):
            raise UsageError(f"{name}: [{dot}{sec}] must be a table")
        found[sec] = _settings(path, dot + sec, table, keys)
    return found[section]


def _settings(path: str, table: str, lint: dict, keys: tuple[str, ...]) -> ProjectConfig:
    where = f"{shown_path(path)}: [{table}]"
    for key in lint:
        if key not in keys:
            raise UsageError(f"{where} unknown key {key!r}{did_you_mean(key, keys)} (keys: {', '.join(keys)})")
    values: dict[str, Any] = {}
    for key in ("select", "extend-select", "ignore"):
        if key in lint:
            values[key.replace("-", "_")] = tuple(_selectors(lint[key], f"{where} {key}"))
    if "exclude" in lint:
        values["exclude"] = tuple(_strings(lint["exclude"], f"{where} exclude"))
    if "per-file-ignores" in lint:
        pfi = lint["per-file-ignores"]
        if not isinstance(pfi, dict):
            raise UsageError(f"{where} per-file-ignores must be a table of pattern = [codes]")
        values["per_file_ignores"] = tuple((pattern, tuple(_selectors(codes, f"{where} per-file-ignores {pattern!r}")))
                                           for pattern, codes in pfi.items())
    for key in LENGTH_KEYS:
        if key in lint:
            values[key] = _length(lint[key], f"{where} {key}")
    if "dtype" in lint:
        from .formats import get_format

        if not isinstance(lint["dtype"], str):
            raise UsageError(f"{where} dtype must be a string (bf16, fp16, fp32)")
        try:
            get_format(lint["dtype"])
        except UsageError as exc:
            raise UsageError(f"{where} dtype: {exc}") from None
        values["dtype"] = lint["dtype"]
    if "output-format" in lint:
        from .output import OUTPUT_FORMATS

        fmt = lint["output-format"]
        if not isinstance(fmt, str) or fmt not in OUTPUT_FORMATS:
            raise UsageError(f"{where} output-format {fmt!r}: choose one of {', '.join(OUTPUT_FORMATS)}"
                             f"{did_you_mean(fmt, OUTPUT_FORMATS) if isinstance(fmt, str) else ''}")
        values["output_format"] = fmt
    config = ProjectConfig(path=path, table=table, **values)
    if config.tune is not None and config.train is not None and config.tune < config.train:
        raise UsageError(f"{where} tune {config.tune:,} must be >= train {config.train:,}")
    return config


def _strings(value: Any, what: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise UsageError(f"{what} must be a list of strings")
    return value


def _selectors(value: Any, what: str) -> list[str]:
    from .findings import parse_selectors

    return parse_selectors(_strings(value, what), what) or []


def _length(value: Any, what: str) -> int:
    """A length as the command line takes it: a whole number or a string with a suffix (``"32k"``)."""
    import argparse

    from .units import length
    from .limits import MAX_CONTEXT

    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise UsageError(f"{what} must be a whole number of tokens or a string such as \"32k\"")
    try:
        n = int(length(str(value)))
    except (argparse.ArgumentTypeError, ValueError) as exc:
        raise UsageError(f"{what}: {exc}") from None
    if n > MAX_CONTEXT:
        raise UsageError(f"{what} {n:,} is beyond the longest context lint accepts (2^31 - 1 = {MAX_CONTEXT:,} "
                         f"tokens, see `ropelaw rule RV013`)")
    return n
