"""The settings each file is linted (or ``audit code``-scanned) with: its project configuration
(``ropelaw/project.py``), then the command line. :class:`LintSettings` answers, per file, which rules are
on, the lengths and dtype it is read with and whether a directory scan leaves it out; ``--show-settings``
prints them.
"""

from __future__ import annotations

import argparse
import os
from typing import Any

from ..errors import UsageError
from ..project import ProjectConfig, find_config, load_config_file
from ..selection import Layer, Selection, select

FILLED = ("train", "target", "tune", "dtype")  # set in a project file, replaced by their flags


def add_project_arguments(parser: argparse.ArgumentParser, what: str = "file", exclude: bool = False) -> None:
    """``--config``, ``--isolated``, ``--show-settings`` (lint and audit code); ``exclude``: also
    ``--force-exclude`` (lint, whose project files have ``exclude``)."""
    g = parser.add_argument_group("project configuration")
    g.add_argument("--config", default=None, metavar="PATH",
                   help=f"use this ropelaw.toml or pyproject.toml for every {what} (default: the closest one "
                        f"above each {what})")
    g.add_argument("--isolated", action="store_true", help="ignore every configuration file")
    g.add_argument("--show-settings", action="store_true",
                   help="print the settings each PATH is checked with (configuration file, rules); check nothing")
    if exclude:
        g.add_argument("--force-exclude", action="store_true",
                       help="apply the project's exclude to files named on the command line too (as ruff's; what "
                            "the pre-commit hook passes, since pre-commit names every file)")


def show_settings(settings: LintSettings, paths: list[str]) -> int:
    """``--show-settings``: each path's settings, a blank line between them; exit 0."""
    import sys

    from ..report import clean

    for path in paths:
        if not os.path.exists(path):
            raise UsageError(f"{path}: no such file or directory")
    for i, path in enumerate(paths):
        sys.stdout.write(("\n" if i else "") + "\n".join(clean(line) for line in settings.describe(path)) + "\n")
    return 0


class LintSettings:
    """Per-file settings of one ``lint`` run (cached per folder and per configuration)."""

    def __init__(self, args: argparse.Namespace, codes: list[str], default: list[str], section: str = "lint") -> None:
        from ._common import rule_selection

        if getattr(args, "config", None) and getattr(args, "isolated", False):
            raise UsageError("--config and --isolated ask for opposite things: give one")
        sel, extend, ignore = rule_selection(args)
        self.cli = Layer(tuple(sel) if sel is not None else None, tuple(extend or ()), tuple(ignore or ()))
        self.flags = {k: getattr(args, k, None) for k in FILLED}
        self.codes, self.default = codes, default
        self.section = section
        self.isolated = bool(getattr(args, "isolated", False))
        self.force_exclude = bool(getattr(args, "force_exclude", False))
        self.fixed = load_config_file(args.config, section) if getattr(args, "config", None) else None
        self._found: dict = {}
        self._selections: dict = {}

    def config_for(self, path: str) -> ProjectConfig | None:
        """The configuration ``path`` is linted with (``--config``, else the closest file; None: none)."""
        if self.isolated:
            return None
        if self.fixed is not None:
            return self.fixed
        folder = path if os.path.isdir(path) else os.path.dirname(os.path.abspath(path))
        return find_config(folder, self._found, self.section)

    def output_format(self) -> str | None:
        """The run's ``output-format`` from the project configuration, as ruff reads a run-wide setting: the
        ``--config`` file, else the closest one to the working folder (None: none, or --isolated)."""
        config = self.fixed if self.fixed is not None or self.isolated else self.config_for(os.getcwd())
        return config.output_format if config is not None else None

    def selection_for(self, path: str) -> Selection:
        config = self.config_for(path)
        per_file = config.ignores_for(path) if config is not None else ()
        key = (id(config), per_file)
        if key not in self._selections:
            layers = [self.cli] if config is None else [
                Layer(config.select, config.extend_select, config.ignore, source=config.path), self.cli]
            self._selections[key] = select(self.codes, self.default, layers, per_file)
        return self._selections[key]

    def excluded(self, path: str) -> bool:
        config = self.config_for(path)
        return config is not None and config.excluded(path)

    def lint_kwargs(self, path: str, kw: dict) -> dict:
        """``kw`` (load_config's keywords from the flags) with the project's lengths and dtype where no flag
        gave them; ``UsageError`` when the tuning length ends up below the training length."""
        config = self.config_for(path)
        if config is None:
            return kw
        out = dict(kw)
        for k in FILLED:
            if self.flags[k] is None and getattr(config, k) is not None:
                out[k] = getattr(config, k)
        if out.get("tune") is not None and out.get("train") is not None and out["tune"] < out["train"]:
            raise UsageError(f"{path}: tune {out['tune']:,} < train {out['train']:,} (from {config.shown} and the "
                             f"command line)")
        return out

    def relabel(self, path: str, cfg: Any) -> Any:
        """``cfg`` (a ``LoadedConfig``) with the lengths and dtype the project file gave said as such
        (``target 32,768 tokens [target in ropelaw.toml]``, not ``[--target]``: no flag gave them)."""
        import dataclasses

        config = self.config_for(path)
        if config is None:
            return cfg
        names = {f"--{k}": f"{k} in {config.shown}" for k in FILLED
                 if self.flags[k] is None and getattr(config, k) is not None}
        if not names:
            return cfg
        changed = {}
        for field in ("train_len", "target", "tune_len", "dtype"):
            v = getattr(cfg, field)
            if v is not None and v.key is None and v.note in names:
                changed[field] = dataclasses.replace(v, note=names[v.note])
        return dataclasses.replace(cfg, **changed) if changed else cfg

    def describe(self, path: str) -> list[str]:
        """What ``--show-settings`` prints for ``path``."""
        config = self.config_for(path)
        source = ("none (--isolated)" if self.isolated else "none (no ropelaw.toml, .ropelaw.toml or pyproject.toml "
                  "with [tool.ropelaw] in this folder or above)") if config is None \
            else f"{config.shown} [{config.table}]"
        lines = [f"Settings for {path}", f"  configuration file: {source}"]
        if config is not None:
            shown: tuple[tuple[str, tuple[str, ...] | None], ...]
            shown = (("select", config.select), ("extend-select", config.extend_select), ("ignore", config.ignore),
                     ("per-file-ignores for this file", config.ignores_for(path)))
            shown += (("exclude", config.exclude),) if self.section == "lint" else ()
            shown += (("output-format", (config.output_format,)),) if config.output_format else ()
            lines += [f"  {name}: {', '.join(value) if value else '(none)'}" for name, value in shown]
            if self.section == "lint":
                lines.append(f"  excluded from directory scans: {'yes' if config.excluded(path) else 'no'}")
        if self.section == "lint":
            kw = self.lint_kwargs(path, dict(self.flags))
            lines += [f"  {k}: {_value(kw.get(k))}" + (" (command line)" if self.flags[k] is not None else "")
                      for k in FILLED]
        on = sorted(self.selection_for(path).enabled)
        lines.append(f"  rules on ({len(on)}): {', '.join(on)}")
        return lines


def _value(v: Any) -> str:
    if v is None:
        return "(from the file)"
    return f"{v:,}" if isinstance(v, int) else str(v)
