"""``ropelaw lint --fix`` and ``--diff``: the fixes of ``lint/fixes.py`` applied as ``plan --apply`` applies an option.

For each linted config with a shown, unsuppressed finding that has a fix: the file is read once
(``read_source_text``), linted from that text, the edit (every fixable key of that read removed) applied to it
by ``lint.writers.apply_edit`` (the one function every writer's edit goes through: only the named keys change,
the new text must parse to exactly the edited mapping) and the edited text linted again. It is written
(``safeio.write_atomic``, in place as ruff's ``--fix``) only when the fixed findings are gone, the layers read
the same and no finding is new, and the file still holds the text the edit was made on; otherwise nothing is
written and the reason is said. ``--diff`` writes nothing and prints the unified diffs.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any


def _fixable(r: Any, selection: Any) -> list:
    """``(finding, key)`` for each finding of result ``r`` that is shown (selected, informational ones only when
    asked for by name, not suppressed by ``# ropelaw: noqa``) and has a fix."""
    from ..lint.fixes import removable_key
    from ..lint.rules.noqa import directives, suppress

    kept, _ = suppress(r.findings, directives(r.path), r.path)
    out = []
    for f in kept:
        if not selection.on(f.code) or (f.severity == "info" and f.code not in selection.explicit):
            continue
        key = removable_key(r.config, f)
        if key is not None:
            out.append((f, key))
    return out


@dataclass
class Fixer:
    """The fixes of one run: ``write`` (``--fix``) or only the diffs (``--diff``)."""

    write: bool
    fixed: int = 0  # findings fixed (or, with --diff, that would be)
    files: int = 0
    diffs: list = field(default_factory=list)
    refused: list = field(default_factory=list)  # (path, why) of files left as they were

    def fix(self, r: Any, kw: dict, selection: Any, relabel: Any = None) -> Any:
        """``r`` (a ``LintResult``) after its fixes: the result of linting the fixed text, or ``r`` itself when
        it has none or the fix is refused. ``kw``: the file's ``load_config`` keywords."""
        if not _fixable(r, selection):
            return r
        from ..errors import UsageError
        from ..lint.loader import read_source_text

        try:
            text = read_source_text(r.path)
            before = self._lint(r.path, text, kw, relabel)
            targets = _fixable(before, selection)
            applied, after = self._edited(before, text, targets, kw, relabel)
            if self.write:
                if read_source_text(r.path) != text:
                    raise UsageError("the file changed while it was linted")
                from ..safeio import write_atomic

                write_atomic(r.path, applied.text)
        except (UsageError, ValueError) as exc:
            self.refused.append((r.path, str(exc)))
            return r
        self.fixed += len(targets)
        self.files += 1
        self.diffs.append(applied.diff)
        return after if self.write else before

    @staticmethod
    def _lint(path: str, text: str, kw: dict, relabel: Any) -> Any:
        from ..lint.check import lint_config
        from ..lint.loader import load_text

        cfg = load_text(path, text, **kw)
        return lint_config(relabel(path, cfg) if relabel else cfg)

    def _edited(self, before: Any, text: str, targets: list, kw: dict, relabel: Any) -> tuple:
        """``(Applied, LintResult of the edited text)``; ``UsageError`` when the edit does not do what it says."""
        from ..errors import UsageError
        from ..lint.writers import apply_edit
        from ..lint.writers.edit import Edit

        edit = Edit(before.config.kind, "--fix")
        for key in sorted({key for _, key in targets}):
            edit.delete(key)
        applied = apply_edit(text, before.config.fmt, edit, before.path)
        after = self._lint(before.path, applied.text, kw, relabel)
        fixed = {(g.code, g.message) for g, _ in targets}
        still = [f for f in after.findings if (f.code, f.message) in fixed]
        new = (Counter((f.code, f.message) for f in after.findings)
               - Counter((f.code, f.message) for f in before.findings))
        if still or new or [a.spec for a in after.layers] != [a.spec for a in before.layers]:
            why = ("the fixed findings remain" if still else f"the edited file has a new finding ({next(iter(new))[0]})"
                   if new else "the edited file's layers read otherwise")
            raise UsageError(f"--fix not applied: {why}")
        return applied, after

    def tail(self) -> list[str]:
        """The lines after the findings: what was fixed, and each file left as it was."""
        lines = [f"{p}: not fixed: {why}" for p, why in self.refused]
        if self.fixed:
            n, m = self.fixed, self.files
            verb = "Fixed" if self.write else "Would fix"
            lines.append(f"{verb} {n:,} finding{'s' if n != 1 else ''} in {m:,} file{'s' if m != 1 else ''}.")
        return lines
