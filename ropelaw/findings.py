"""Findings and the rule table shared by the auditor and the linter.

Checks only produce :class:`Finding` objects; :mod:`ropelaw.report` only formats them.
A rule is declared once, in its family's module under ``ropelaw/audit/rules/`` or
``ropelaw/lint/rules/``, with :func:`define_rule`; codes are stable (family prefix +
number) and each has a kebab-case name and documentation in ruff's shape
(what it does / why it matters / example / fix / references).

Code families
- ``RV`` invalid or inconsistent config values (lint)
- ``RL`` context length against the scaling-law and Men et al. bounds (lint)
- ``RS`` scheme-specific checks (lint)
- ``RP1xx`` precision in model code (static audit)
- ``RP2xx`` precision implied by a config's dtype (lint)
- ``RP3xx`` precision measured by running modules or reading checkpoints (runtime audit)
- ``RE`` files that could not be read or parsed
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from dataclasses import dataclass, field
from typing import Any

from .errors import UsageError

__all__ = ["Rule", "Finding", "define_rule", "get_rule", "all_rules", "default_select", "select_findings",
           "parse_selectors", "SEVERITIES", "FIX_MARK"]

SEVERITIES = ("error", "warning", "info")
FIX_MARK = "[*] "  # a fix: text opening with this is applied by `ropelaw lint --fix` (lint/fixes.py), as ruff marks one
GAPS = ("", "file", "directory")  # Rule.gap: what a finding of the rule leaves unanalysed
_CODE = re.compile(r"^R[A-Z]\d{3}$")
_NAME = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")


@dataclass(frozen=True)
class Rule:
    code: str  # stable: family prefix + 3 digits, e.g. RP101
    name: str  # kebab-case, e.g. positions-in-buffer-dtype
    severity: str  # error | warning | info
    summary: str  # one line
    what: str  # what it does
    why: str  # why it matters
    example: str  # a snippet that triggers it
    fix: str  # what to do instead
    references: tuple[str, ...] = ()
    default_on: bool = True  # False: reported only when selected (--select CODE, a prefix of it, or ALL)
    fix_available: str = ""  # when `ropelaw lint --fix` fixes a finding of this rule ("": never)
    # lint (RV rules): a finding of this rule says why a layer group got no spec; False: it does not, and
    # lint_config adds RV016 for an unanalysed group (lint/check.py)
    explains_unanalysed: bool = True
    gap: str = ""  # "file": its path was not analysed to the end; "directory": not scanned (report.summary_line)
    filterable: bool = True  # False: reported whatever --select / --ignore say (ropelaw's own failure)

    def doc(self) -> str:
        """The rule's documentation as shown by ``ropelaw rule CODE``."""
        refs = "\n".join(f"- {r}" for r in self.references) or "-"
        off = "" if self.default_on else f"Off by default: enable with --select {self.code}.\n\n"
        return (
            f"{self.code} {self.name} ({self.severity})\n\n{self.summary}\n\n{off}"
            f"## What it does\n{self.what.strip()}\n\n"
            f"## Why it matters\n{self.why.strip()}\n\n"
            f"## Example\n{self.example.strip()}\n\n"
            f"## Fix\n{self.fix.strip()}\n\n{self.fix_note()}"
            f"## References\n{refs}\n"
        )

    def fix_note(self) -> str:
        """The paragraph saying when ``--fix`` fixes this rule's findings (ruff's "Fix is sometimes available"),
        or ""."""
        if not self.fix_available:
            return ""
        return f"Fix sometimes available (`ropelaw lint --fix`, marked [*]): {self.fix_available.strip()}\n\n"


_RULES: dict[str, Rule] = {}
_LOADED = False


def define_rule(code: str, name: str, severity: str, summary: str, *, what: str, why: str,
                example: str, fix: str, references: tuple[str, ...] = (), default_on: bool = True,
                fix_available: str = "", explains_unanalysed: bool = True, gap: str = "",
                filterable: bool = True) -> Rule:
    """Declare a rule once; a second definition of the same code is a programming error.

    ``default_on=False`` marks a rule that commands report only when selected explicitly; the other
    properties are :class:`Rule`'s fields of the same names.
    """
    if not _CODE.match(code):
        raise RuntimeError(f"rule code {code!r} is not of the form R<family><3 digits>")
    if not _NAME.match(name):
        raise RuntimeError(f"rule name {name!r} is not kebab-case")
    if severity not in SEVERITIES:
        raise RuntimeError(f"rule {code}: severity {severity!r} not in {SEVERITIES}")
    if gap not in GAPS:
        raise RuntimeError(f"rule {code}: gap {gap!r} not in {GAPS}")
    if code in _RULES:
        raise RuntimeError(f"rule {code} defined twice")
    if any(r.name == name for r in _RULES.values()):
        raise RuntimeError(f"rule name {name} used twice")
    rule = Rule(code, name, severity, summary, what, why, example, fix, tuple(references), bool(default_on),
                fix_available, bool(explains_unanalysed), gap, bool(filterable))
    _RULES[code] = rule
    return rule


def _load_all() -> None:
    """Import every rule module under ropelaw.audit.rules and ropelaw.lint.rules."""
    global _LOADED
    if _LOADED:
        return
    _LOADED = True
    for pkg_name in ("ropelaw.audit.rules", "ropelaw.lint.rules"):
        try:
            pkg = importlib.import_module(pkg_name)
        except ModuleNotFoundError as exc:
            if exc.name != pkg_name:  # a rule module's own import failed: say so, don't hide rules
                raise
            continue
        for info in pkgutil.iter_modules(getattr(pkg, "__path__", [])):
            importlib.import_module(f"{pkg_name}.{info.name}")


def get_rule(code: str) -> Rule:
    """The rule with ``code`` (case-insensitive) or its kebab-case name; ``KeyError`` if none."""
    _load_all()
    key = code.strip()
    if key.upper() in _RULES:
        return _RULES[key.upper()]
    for rule in _RULES.values():
        if rule.name == key.lower():
            return rule
    raise KeyError(key)


def all_rules() -> list[Rule]:
    _load_all()
    return sorted(_RULES.values(), key=lambda r: r.code)


def default_select() -> list[str]:
    """Every rule that is on by default (``Rule.default_on``): what ``ropelaw lint`` reports without --select."""
    return [r.code for r in all_rules() if r.default_on]


@dataclass(frozen=True)
class Finding:
    """One problem found at one place."""

    code: str
    name: str
    severity: str
    message: str  # carries the numbers
    path: str = "-"  # file, or "-" for a finding with no file
    line: int = 1  # 1-based
    column: int = 1  # 1-based
    fix: str = ""  # in words, specific to this occurrence where possible
    data: dict[str, Any] = field(default_factory=dict, compare=False)  # numbers for json
    # where the values the message names by key come from, in full (``lint.sources``: the message says the key,
    # the runtime / file / version that gave it is said here, once): json "sources", full text "source:" lines
    sources: tuple[str, ...] = field(default=(), compare=False)
    # facts of this occurrence said beside the message, not in it (what was looked at, a measurement's detail):
    # json "notes", full text "note:" lines
    notes: tuple[str, ...] = field(default=(), compare=False)

    @classmethod
    def of(cls, rule: Rule, message: str, *, path: str = "-", line: int = 1, column: int = 1,
           fix: str | None = None, sources: tuple[str, ...] | list[str] = (),
           notes: tuple[str, ...] | list[str] = (), **data: Any) -> Finding:
        """A finding of ``rule``; ``fix`` defaults to the rule's documented fix."""
        return cls(rule.code, rule.name, rule.severity, message, path, line, column,
                   rule.fix.strip().splitlines()[0] if fix is None else fix, data,
                   tuple(dict.fromkeys(sources)), tuple(notes))

    @property
    def fixable(self) -> bool:
        """``ropelaw lint --fix`` fixes this finding (its ``fix`` opens with :data:`FIX_MARK`, ``lint/fixes.py``)."""
        return self.fix.startswith(FIX_MARK)

    @property
    def rule(self) -> Rule:
        """The rule this finding is of (its properties: :class:`Rule`)."""
        return get_rule(self.code)

    def to_dict(self) -> dict[str, Any]:
        out = {
            "code": self.code,
            "name": self.name,
            "severity": self.severity,
            "message": self.message,
            "path": self.path,
            "line": self.line,
            "column": self.column,
            "fix": self.fix,
        }
        if self.data:
            out["data"] = self.data
        if self.sources:
            out["sources"] = list(self.sources)
        if self.notes:
            out["notes"] = list(self.notes)
        return out


def parse_selectors(values: str | list[str] | None, flag: str) -> list[str] | None:
    """``--select``/``--ignore`` values (comma-separated, repeatable) -> codes or prefixes.

    Each selector must be ``ALL`` or a prefix of a known rule code: a typo would otherwise
    silently select nothing. ``None`` (flag not given) stays ``None``.
    """
    if values is None:
        return None
    if isinstance(values, str):
        values = [values]
    codes = [c.strip() for v in values for c in v.split(",") if c.strip()]
    known = [r.code for r in all_rules()]
    for c in codes:
        if c.upper() != "ALL" and not any(k.startswith(c.upper()) for k in known):
            from .errors import did_you_mean

            hint = did_you_mean(c.upper(), known + sorted({k[:2] for k in known}))
            raise UsageError(f"{flag}: {c!r} is not a rule code or prefix (e.g. RP101, RL, ALL; "
                             f"see `ropelaw rule --all`){hint}")
    return codes


def select_findings(findings: list[Finding], select: list[str] | None = None,
                    ignore: list[str] | None = None) -> list[Finding]:
    """ruff-style filtering: a code matches a selector that is a prefix of it (``RP``, ``RP1``)."""

    def matches(code: str, sels: list[str]) -> bool:
        return any(code.startswith(s.strip().upper()) for s in sels if s.strip())

    out = findings
    if select:
        out = [f for f in out if matches(f.code, select) or "ALL" in {s.upper() for s in select}]
    if ignore:
        out = [f for f in out if not matches(f.code, ignore)]
    return out
