"""What ``ropelaw lint`` reports, gathered one config at a time: :class:`LintReport`.

Each config's result is reduced to its shown findings (the rules on for that file, ``selection.py``),
its ``ok (...)`` line (kept for ``--verbose``, spooled past 1 MiB) or, for ``--output-format json``, its
setup written to the JSON document being built; informational findings of codes nobody asked for are
counted, not kept. :meth:`LintReport.write` then writes the report in the chosen format (``output.py``):
the findings (full or concise), the lines after them and the summary, or the statistics.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

from ..output import Output

UNREAD_SCRIPT = "shell script in a directory scan: not read (name it to lint a launch script)"
EXIT_INTERNAL_ERROR = 3  # a file ropelaw failed on (RE104): the run says so after linting the others


def script_note(n: int) -> str:
    """What a directory scan says, once, of the shell scripts it found and did not read."""
    return (f"{n:,} shell script{'s' if n != 1 else ''} (*.sh) not read: a directory scan reads config files; "
            "name a launch script to lint it (Megatron-LM, MaxText, veRL, OpenRLHF)")


def _spool():
    """Text written past 1 MiB goes to a temporary file (50,000 ok lines were 7 MB held to the end)."""
    import tempfile  # lazy: 5 ms of start-up for the other formats

    return tempfile.SpooledTemporaryFile(max_size=1 << 20, mode="w+", encoding="utf-8", errors="surrogatepass",
                                         newline="\n")  # surrogatepass: undecodable file names round-trip


@dataclass
class LintReport:
    """The findings, skips and counts of one ``lint`` run, and the JSON document being built."""

    out: Output
    stream: Any  # where the report goes (output.opened)
    findings: list = field(default_factory=list)
    file_findings: list = field(default_factory=list)  # RE1xx, RV030 / RV031 for a file: filtered at the end
    skipped: list = field(default_factory=list)  # (path, why): parsed, no RoPE settings
    scripts: list = field(default_factory=list)  # shell scripts a directory scan found and did not read
    python: list = field(default_factory=list)  # (path, kind): Python configs a directory scan did not read
    hidden: int = 0  # informational findings of codes nobody asked for: counted, not shown
    hidden_codes: set = field(default_factory=set)
    elsewhere: set = field(default_factory=set)  # findings in another file (a model's config.json), said once
    configs: int = 0
    json: Any = None
    ok_lines: Any = None
    fixer: Any = None  # lint_fix.Fixer under --fix: its lines follow the findings
    models: dict = field(default_factory=dict)  # a model named elsewhere, of configs with findings: where it came from
    edits: dict = field(default_factory=dict)  # sarif: each shown fixable finding's edit (lint.fixes.fix_edit)

    def __post_init__(self) -> None:
        if self.out.text and self.out.verbose:
            self.ok_lines = _spool()

    def add_result(self, r: Any, selection: Any) -> None:
        """One linted config: its findings less those its ``# ropelaw: noqa`` comments suppress (and RE105 for
        the comments that suppress nothing), filtered by ``selection`` (``selection.Selection``)."""
        from ..lint.rules.noqa import directives, suppress

        self.configs += 1
        kept, unused = suppress(r.findings, directives(r.path), r.path)
        shown = []
        for f in kept + unused:
            if not selection.on(f.code):
                continue
            if f.severity == "info" and f.code not in selection.explicit:
                self.hidden += 1  # counted, not kept (memory)
                self.hidden_codes.add(f.code)
                continue
            shown.append(f)
        # a finding in another file (the config.json of a model named elsewhere): once, for all the configs naming it
        shown = [f for f in shown if f.path == r.path or self._first_time(f)]
        r.findings = shown
        self.findings.extend(shown)
        m = r.config.model
        # findings that say "[rope_theta of base_model 'X']": where X came from, once (RV032 says it for the table)
        if m is not None and any(f"{m.key} {m.name!r}" in text for f in shown for text in (f.message, *f.sources)) \
                and not any(f.code == "RV032" for f in shown):
            self.models.setdefault((m.name, m.origin), m)
        if self.out.format == "sarif":
            self._edits(r.config, shown)
        if self.out.format == "json" and not self.out.statistics:
            self._json().item(r.setup())
        elif self.ok_lines is not None and not shown:
            from ..report import clean

            self.ok_lines.write(clean(r.ok_line()) + "\n")  # escaped now: a newline in a path stays one line

    def _edits(self, cfg: Any, shown: list) -> None:
        """The edit of each fixable finding of ``cfg`` shown, for SARIF's ``fixes``."""
        from ..lint.fixes import fix_edit

        for f in shown:
            if f.fixable:
                edit = fix_edit(cfg, f)
                if edit is not None:
                    self.edits[f] = edit

    def _first_time(self, f: Any) -> bool:
        """``f`` was not reported before."""
        key = (f.path, f.line, f.column, f.code, f.message)
        if key in self.elsewhere:
            return False
        self.elsewhere.add(key)
        return True

    def add_file_finding(self, f: Any, selection: Any) -> None:
        """A finding on a file that was not linted (unreadable, unread, ropelaw's failure: RE104 is never
        filtered out); RV030 / RV031 (a file read, its RoPE settings not) can be suppressed inline."""
        if f.code in ("RV030", "RV031"):
            from ..lint.rules.noqa import directives, suppress

            kept, unused = suppress([f], directives(f.path), f.path)
            for g in kept + unused:
                if selection.on(g.code):
                    self.file_findings.append(g)
            return
        if not f.rule.filterable or selection.on(f.code):  # RE104, ropelaw's failure: never filtered out
            self.file_findings.append(f)

    def _json(self):
        if self.json is None:
            from ..report import JsonStream

            self.json = JsonStream(self.stream)
            self.json.value("tool", "ropelaw lint")
            self.json.begin_list("configs")
        return self.json

    @property
    def checked(self) -> int:
        """Configs linted, and files that could not be (RE103 names a directory, not a file)."""
        return self.configs + len({f.path for f in self.file_findings if f.rule.gap != "directory"})

    @property
    def all_findings(self) -> list:
        return self.findings + self.file_findings

    def exit_code(self) -> int:
        from ..report import exit_code

        internal = any(f.code == "RE104" for f in self.file_findings)
        return EXIT_INTERNAL_ERROR if internal else exit_code(self.all_findings)

    def close(self) -> None:
        if self.ok_lines is not None:
            self.ok_lines.close()
        if self.json is not None:
            self.json.discard()

    def write(self) -> None:
        """The report, in the run's format."""
        if self.out.statistics:
            return self._write_statistics()
        if self.out.format == "json":
            return self._write_json()
        if self.out.format == "text":
            return self._write_text()
        from ..jsonout import write_document
        from ..report import render

        text = render(self.all_findings, self.out.format, checked=self.checked, noun="config", fixes=self.edits)
        if text:
            write_document(text + "\n", self.stream)  # a sarif document whole or not at all

    def _write_json(self) -> None:
        stream = self._json()
        fs = self.all_findings
        stream.end_list()
        from ..lint.pyfiles import reason as python_reason

        stream.value("skipped", [{"path": p, "reason": why} for p, why in self.skipped]
                     + [{"path": p, "reason": UNREAD_SCRIPT} for p in self.scripts]
                     + [{"path": p, "reason": python_reason(k)} for p, k in self.python])
        stream.value("summary", {"configs": self.checked, "findings": len(fs),
                                 "errors": sum(f.severity == "error" for f in fs),
                                 "warnings": sum(f.severity == "warning" for f in fs),
                                 "info": sum(f.severity == "info" for f in fs), "hidden_info": self.hidden,
                                 "fixes": self.fix_counts()})
        stream.value("findings", [f.to_dict() for f in sorted(fs, key=lambda f: (f.path, f.line, f.column, f.code))])
        stream.close()
        self.json = None

    def fix_counts(self) -> dict:
        """The json summary's ``fixes``: findings fixed by this run (``--fix``), shown findings a ``--fix`` would
        fix (marked ``[*]``: ``Finding.fixable``), and each file whose fixes were not applied, with the reason."""
        fixer = self.fixer
        return {"applied": fixer.fixed if fixer is not None and fixer.write else 0,
                "available": sum(f.fixable for f in self.findings),
                "not_applied": [{"path": p, "reason": why} for p, why in (fixer.refused if fixer is not None else [])]}

    def tail(self) -> list[str]:
        """The lines after the findings: skips (counted; each with --verbose), unread scripts, hidden info."""
        tail = list(self.fixer.tail()) if self.fixer is not None else []
        tail += [f"Model {name}: {origin}." for name, origin in self.models]
        if self.skipped and self.out.verbose:
            n = len(self.skipped)
            tail.append(f"Skipped {n:,} file{'s' if n != 1 else ''} without RoPE settings.")
        if self.scripts:
            tail.append(script_note(len(self.scripts)) + ".")
        if self.python:
            from ..lint.pyfiles import summary as python_summary

            kinds: dict = {}
            for _, k in self.python:
                kinds[k] = kinds.get(k, 0) + 1
            tail.append(python_summary(kinds) + ".")
        if self.hidden:
            codes = ",".join(sorted(self.hidden_codes))
            tail.append(f"{self.hidden:,} informational finding{'s' if self.hidden != 1 else ''} not shown "
                        f"({codes}; --select {codes} shows {'them' if self.hidden != 1 else 'it'}).")
        return tail

    def _write_text(self) -> None:
        from ..colour import Palette
        from ..report import TextView, text_lines

        from ..lint.pyfiles import KINDS, reason

        unread = {reason(k) for k in KINDS}  # a named Python config: a skip that matters, said without --verbose
        lines: Any = [f"{p}: skipped: {why}" for p, why in self.skipped if why in unread]
        if self.ok_lines is not None:  # --verbose: each clean config's ok line, each skipped file's reason
            self.ok_lines.seek(0)
            lines = itertools.chain((line.rstrip("\n") for line in self.ok_lines),
                                    (f"{p}: skipped: {why}" for p, why in self.skipped))
        view = TextView(style=self.out.style, quiet=self.out.quiet, palette=Palette(self.out.colour))
        for line in text_lines(self.all_findings, checked=self.checked, noun="config",
                               extra_lines=itertools.chain(lines, self.tail()), not_read=len(self.scripts),
                               skipped=len(self.skipped), not_read_python=len(self.python), view=view):
            self.stream.write(line + "\n")  # line by line: a scan of 50,000 files is never held twice

    def _write_statistics(self) -> None:
        from ..colour import Palette
        from ..report import fixable_line, statistics_lines, statistics_rows, summary_line

        rows = statistics_rows(self.all_findings)
        if self.out.format == "json":
            from ..jsonout import dumps, write_document

            write_document(dumps(rows) + "\n", self.stream)
            return
        palette = Palette(self.out.colour)
        for line in statistics_lines(rows, palette):
            self.stream.write(line + "\n")
        if not self.out.quiet:
            self.stream.write(summary_line(self.all_findings, self.checked, "config", len(self.scripts),
                                           len(self.skipped), len(self.python)) + "\n")
            fixable = fixable_line(self.all_findings)
            if fixable:
                self.stream.write(fixable + "\n")
