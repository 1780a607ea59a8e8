"""Inline suppression in configs: ``# ropelaw: noqa`` and ``# ropelaw: noqa: RL102, RV019`` (RE105 when
unused).

A directive is a comment on the line a finding points at, in the formats that have comments: YAML
(``.yaml``, ``.yml``), TOML and shell launch scripts. ``# ropelaw: noqa`` suppresses every finding on its
line, ``# ropelaw: noqa: CODES`` the findings of those codes (exact codes, comma-separated, as ruff's
``# noqa: E501``). JSON has no comments: its configs use ``per-file-ignores`` (docs/lint/configuration.md).
The ``ropelaw:`` prefix keeps the directive apart from other tools' ``# noqa``.

A directive, or a code in it, that suppresses nothing is reported as RE105 (as ruff's RUF100): every
rule's findings are computed before the rule selection (``lint_config`` returns them unfiltered), so
"nothing on this line" is decided on all of them, whatever is selected.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ...findings import Finding, define_rule

UNUSED_NOQA = define_rule(
    "RE105", "unused-noqa", "warning",
    "a `# ropelaw: noqa` directive suppresses nothing on its line",
    what="Reports a `# ropelaw: noqa` comment in a YAML, TOML or shell config whose line has no finding, and each "
         "code of a `# ropelaw: noqa: CODES` comment that has no finding on its line (as ruff's RUF100). Every "
         "rule's findings count, selected or not.",
    why="A suppression left behind after the config was fixed, or written on the wrong line, hides the next "
        "finding that appears there without anyone deciding to.",
    example="rope_theta: 500000  # ropelaw: noqa: RL102   (no RL102 on this line)",
    fix="Remove the directive, or the codes that no longer fire; put it on the line the finding points at.",
    references=("https://docs.astral.sh/ruff/rules/unused-noqa/",),
)

SUFFIXES = (".yaml", ".yml", ".toml", ".sh", ".bash")  # the formats with # comments
_DIRECTIVE = re.compile(r"#\s*ropelaw:\s*noqa(?P<colon>:\s*(?P<codes>[A-Za-z]+[0-9]+(?:\s*,\s*[A-Za-z]+[0-9]+)*))?",
                        re.I)
MAX_BYTES = 16 << 20  # the loader's size limit: a larger file was never linted


@dataclass(frozen=True)
class Directive:
    line: int
    column: int  # 1-based, of '#'
    codes: tuple[str, ...] | None  # None: every finding on the line
    text: str


def directives(path: str) -> dict[int, Directive]:
    """The directives of the config at ``path`` by line (none for JSON or a file that cannot be read now)."""
    if not path.lower().endswith(SUFFIXES):
        return {}
    from ...errors import UsageError
    from ...safeio import read_regular

    try:
        data = read_regular(path, MAX_BYTES, "config")
    except (UsageError, OSError):
        return {}
    if b"noqa" not in data:
        return {}
    out = {}
    for i, line in enumerate(data.decode("utf-8", "replace").splitlines(), start=1):
        m = _DIRECTIVE.search(line) if "noqa" in line else None
        if m is not None:
            codes = m.group("codes")
            out[i] = Directive(i, m.start() + 1, None if codes is None else tuple(
                c.strip().upper() for c in codes.split(",")), m.group(0))
    return out


def suppress(findings: list[Finding], found: dict[int, Directive], path: str) -> tuple[list[Finding], list[Finding]]:
    """``(kept, unused)``: the findings no directive suppresses, and RE105 for each directive or code that
    suppressed nothing."""
    if not found:
        return findings, []
    kept, used = [], set()  # (line, code) / (line, None) that a directive matched
    for f in findings:
        d = found.get(f.line) if f.path == path else None  # a finding in another file (a model's config.json)
        if d is not None and (d.codes is None or f.code in d.codes):
            used.add((f.line, None if d.codes is None else f.code))
            continue
        kept.append(f)
    unused = []
    for line, d in sorted(found.items()):
        if d.codes is None:
            if (line, None) not in used:
                unused.append(Finding.of(UNUSED_NOQA, f"`{d.text}` suppresses nothing: no finding on this line",
                                         path=path, line=line, column=d.column))
            continue
        idle = [c for c in d.codes if (line, c) not in used]
        if idle:
            unused.append(Finding.of(
                UNUSED_NOQA, f"`{d.text}`: {', '.join(idle)} not reported on this line", path=path, line=line,
                column=d.column))
    return kept, unused
