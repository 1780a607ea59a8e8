"""Reporters: text, json, sarif 2.1.0 and GitHub annotations. They only format.

Shared by ``ropelaw audit`` and ``ropelaw lint``; checks never print.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any
from collections.abc import Iterable, Iterator

from .errors import UsageError
from .escape import clean  # the one escaping function (ropelaw/escape.py), re-exported here
from .findings import FIX_MARK, Finding, all_rules

__all__ = ["FORMATS", "render", "summary_line", "exit_code", "clean", "JsonStream", "sarif_uri", "TextView",
           "finding_line", "text_lines", "statistics_rows", "statistics_lines", "fixable_line", "GITHUB_MESSAGE_BYTES"]

FORMATS = ("text", "json", "sarif", "github")


def _sort(findings: Iterable[Finding]) -> list[Finding]:
    return sorted(findings, key=lambda f: (f.path, f.line, f.column, f.code))


def summary_line(findings: list[Finding], checked: int, noun: str = "file", not_read: int = 0,
                 skipped: int = 0, not_read_python: int = 0) -> str:
    """``Found 2 findings (1 error, 1 warning) in 3 files.`` or ``All checks passed ...``.

    Says what was analysed: ``in 3 files (1 not analysed; 1 directory not scanned)`` when some
    files could not be read or analysed to the end, or directories could not be entered. "All
    checks passed" only when something was analysed and nothing was left unread: ``not_read`` files
    that were found and not read (shell scripts in a directory scan) and a scan where every file was
    ``skipped`` (no RoPE settings) say so instead; ``not_read_python``: Python config files (a framework's
    config scripts, :mod:`ropelaw.lint.pyfiles`) found and not read, said the same way."""
    plural = lambda n, w: f"{n:,} {w}{'' if n == 1 else 's'}"  # noqa: E731
    where = plural(checked, noun)
    what = " and ".join(plural(n, w) for n, w in ((not_read, "shell script"), (not_read_python, "Python config file"))
                        if n)
    not_read = not_read + not_read_python
    if not findings:
        unread = f"; {what} not read" if not_read else ""
        if checked == 0 and not skipped and not not_read:  # every file named was excluded (lint --force-exclude)
            return f"No findings: no {noun} analysed."
        if checked == 0:
            return f"No findings: no {noun} analysed ({plural(skipped, 'file')} without RoPE settings{unread})."
        if not_read:
            return f"No findings in {where}{unread}."
        return f"All checks passed: no findings in {where}."
    gaps = []
    # files that could not be read, parsed or analysed to the end, directories a scan could not enter (Rule.gap)
    unanalysed = len({f.path for f in findings if f.rule.gap == "file"})
    if unanalysed:
        gaps.append(f"{unanalysed:,} not analysed")
    dirs = len({f.path for f in findings if f.rule.gap == "directory"})
    if dirs:
        gaps.append(f"{dirs:,} director{'y' if dirs == 1 else 'ies'} not scanned")
    if not_read:
        gaps.append(f"{what} not read")
    counts = [f"{sum(f.severity == s for f in findings):,} info" if s == "info"
              else plural(sum(f.severity == s for f in findings), s)
              for s in ("error", "warning", "info") if any(f.severity == s for f in findings)]
    return (f"Found {plural(len(findings), 'finding')} ({', '.join(counts)}) in {where}"
            + (f" ({'; '.join(gaps)})" if gaps else "") + ".")


def render_text(findings: list[Finding], checked: int, noun: str = "file",
                show_fix: bool = True, extra_lines: Iterable[str] = ()) -> str:
    return "\n".join(text_lines(findings, checked, noun, show_fix, extra_lines))


@dataclass(frozen=True)
class TextView:
    """How text output shows findings: ``full`` (each finding and its ``fix:`` line) or ``concise`` (one line
    each); ``quiet`` leaves out the lines after the findings and the summary; ``palette`` colours
    (``colour.Palette``, None: none)."""

    style: str = "full"
    quiet: bool = False
    palette: Any = None


def finding_line(f: Finding, view: TextView) -> str:
    """``path:line:col: CODE name message``, names escaped, then painted; ``CODE [*] name`` when ``--fix`` fixes
    the finding (ruff's mark, after the code, in full and concise output)."""
    p = view.palette
    mark = " [*]" if f.fixable else ""
    if p is None or not p.on:
        return f"{clean(f.path)}:{f.line}:{f.column}: {f.code}{mark} {f.name} {clean(f.message)}"
    return (f"{p.path(clean(f.path))}:{f.line}:{f.column}: {p.code(f.code, f.severity)}{mark} {f.name} "
            f"{clean(f.message)}")


def fixable_line(findings: list[Finding]) -> str | None:
    """ruff's last line when some findings shown can be fixed (ruff 0.17.6, ``ruff check`` on a file with an
    unused import: ``[*] 1 fixable with `--fix`.``), or None."""
    n = sum(f.fixable for f in findings)
    return f"[*] {n:,} fixable with `--fix`." if n else None


def text_lines(findings: list[Finding], checked: int, noun: str = "file",
               show_fix: bool = True, extra_lines: Iterable[str] = (), not_read: int = 0,
               skipped: int = 0, not_read_python: int = 0, view: TextView | None = None) -> Iterator[str]:
    """The lines of :func:`render_text`, one at a time (a scan of 50,000 files writes them as they
    come instead of holding the whole text)."""
    view = view or TextView()
    full = view.style == "full"
    label = view.palette.label if view.palette is not None else (lambda t: t)
    said: set = set()  # the sources said for the current file: each once per file
    path = None
    for f in _sort(findings):
        yield finding_line(f, view)
        if not full:
            continue
        if show_fix and f.fix:
            yield f"  {label('fix:')} {clean(f.fix)}"
        for note in f.notes:
            yield f"  {label('note:')} {clean(note)}"
        if f.path != path:
            path, said = f.path, set()
        for source in f.sources:
            if source not in said:
                said.add(source)
                yield f"  {label('source:')} {clean(source)}"
    if view.quiet:
        return
    for line in extra_lines:
        yield clean(line)
    line = summary_line(findings, checked, noun, not_read, skipped, not_read_python)
    if view.palette is not None and view.palette.on:
        line = view.palette.passed(line) if line.startswith("All checks passed") else view.palette.found(line)
    yield line
    fixable = fixable_line(findings)
    if fixable:
        yield fixable


def statistics_rows(findings: list[Finding]) -> list[dict]:
    """ruff's ``--statistics``: one row per rule with findings, ``{code, name, severity, count, fixable}``, most
    first (then by code); ``fixable``: some of the row's findings are fixed by ``--fix`` (ruff's ``[*]``)."""
    rows: dict[str, dict] = {}
    for f in findings:
        row = rows.setdefault(f.code, {"code": f.code, "name": f.name, "severity": f.severity, "count": 0,
                                       "fixable": False})
        row["count"] += 1
        row["fixable"] = row["fixable"] or f.fixable
    return sorted(rows.values(), key=lambda r: (-r["count"], r["code"]))


def statistics_lines(rows: list[dict], palette: Any = None) -> Iterator[str]:
    """``count<TAB>code<TAB>name`` per row, the counts right-aligned and the codes padded, as ruff prints them;
    when some row is fixable, each name opens with ``[*] `` or ``[ ] `` (ruff 0.17.6 ``--statistics``)."""
    if not rows:
        return
    cw = max(len(f"{r['count']:,}") for r in rows)
    kw = max(len(r["code"]) for r in rows)
    marks = any(r.get("fixable") for r in rows)
    for r in rows:
        code = r["code"].ljust(kw)
        if palette is not None and palette.on:
            code = palette.code(code, r["severity"])
        mark = ("[*] " if r.get("fixable") else "[ ] ") if marks else ""
        yield f"{r['count']:>{cw},}\t{code}\t{mark}{r['name']}"


def render_json(findings: list[Finding], extra: dict[str, Any] | None = None) -> str:
    """A JSON list of findings, or, with ``extra``, an object with ``findings`` and those keys."""
    from .jsonout import dumps  # a finding's data may hold inf (an unbounded length): jsonout decides

    items = [f.to_dict() for f in _sort(findings)]
    return dumps(items if extra is None else {**extra, "findings": items})


class JsonStream:
    """Builds one JSON object key by key (indented as ``json.dumps(obj, indent=2)``), a list item
    by item (one line each), in a spooled temporary file (past 1 MiB on disk: a scan of 50,000 configs
    keeps no list of their setups in memory); :meth:`close` writes it to ``target`` whole
    (``jsonout.write_document``), so an interrupted or failed run leaves a whole document or nothing."""

    def __init__(self, target) -> None:
        import tempfile

        self._target = target
        self._out = tempfile.SpooledTemporaryFile(  # noqa: SIM115 (lives as long as the stream: close() or discard() closes it)
            max_size=1 << 20, mode="w+", encoding="utf-8", newline="\n")
        self._keys = 0
        self._items: int | None = None
        self._out.write("{")

    def _key(self, key: str) -> None:
        self._out.write(("," if self._keys else "") + f"\n  {json.dumps(key)}: ")
        self._keys += 1

    def value(self, key: str, value: Any) -> None:
        from .jsonout import dumps

        self._key(key)
        self._out.write(dumps(value).replace("\n", "\n  "))

    def begin_list(self, key: str) -> None:
        self._key(key)
        self._out.write("[")
        self._items = 0

    def item(self, value: Any) -> None:
        """One list item on one line (json's C encoder; ``indent`` would use the pure-Python one,
        3x slower on a scan of many configs)."""
        from .jsonout import dumps

        text = dumps(value, indent=None)
        self._out.write(("," if self._items else "") + "\n    " + text)
        self._items = (self._items or 0) + 1

    def end_list(self) -> None:
        self._out.write("\n  ]" if self._items else "]")
        self._items = None

    def close(self) -> None:
        from .jsonout import write_document

        self._out.write("\n}\n" if self._keys else "}\n")
        try:
            write_document(self._out, self._target)
        finally:
            self._out.close()

    def discard(self) -> None:
        """Drop what was built (the run failed): nothing reaches the target."""
        self._out.close()


_SARIF_LEVEL = {"error": "error", "warning": "warning", "info": "note"}


def sarif_uri(path: str) -> str:
    """A SARIF ``artifactLocation.uri`` (SARIF 2.1.0 section 3.4.3: an RFC 3986 URI reference):
    an absolute path as a ``file://`` URI, a relative one as a relative reference, each byte that
    is not an unreserved character or ``/`` percent-encoded (a space, ``#``, ``%``, a non-UTF-8
    byte of a file name), path separators as ``/``."""
    import os
    from urllib.parse import quote

    raw = os.fsencode(path)
    if os.sep != "/":
        raw = raw.replace(os.fsencode(os.sep), b"/")
    encoded = quote(raw, safe="/")
    return "file://" + encoded if raw.startswith(b"/") else encoded


def _sarif_rules(rules: list) -> list[dict]:
    return [{
        "id": r.code,
        "name": r.name,
        "shortDescription": {"text": r.summary},
        "fullDescription": {"text": r.what.strip()},
        "help": {"text": r.doc()},
        "defaultConfiguration": {"level": _SARIF_LEVEL[r.severity]},
    } for r in rules]


def _sarif_fix(f: Finding, edit: dict) -> dict:
    """SARIF 2.1.0 ``fix`` (3.55): one ``artifactChange`` (3.56) of the finding's file, one ``replacement`` (3.57):
    the ``deletedRegion`` (start and the position after its end, ``run.columnKind`` unicodeCodePoints) and the
    ``insertedContent`` when something is inserted (``lint.fixes.replacement``)."""
    (l0, c0), (l1, c1) = edit["start"], edit["end"]
    repl: dict[str, Any] = {"deletedRegion": {"startLine": l0, "startColumn": c0, "endLine": l1, "endColumn": c1}}
    if edit["text"]:
        repl["insertedContent"] = {"text": edit["text"]}
    return {"description": {"text": f.fix.removeprefix(FIX_MARK)},
            "artifactChanges": [{"artifactLocation": {"uri": sarif_uri(f.path)}, "replacements": [repl]}]}


def _sarif_result(f: Finding, index: dict, edit: dict | None) -> dict:
    # where the values came from and what is said beside the message (SARIF 2.1.0 3.8: a property bag); fixable:
    # `ropelaw lint --fix` fixes it (the [*] of text output), whether or not the edit itself could be given
    props: dict[str, Any] = {k: list(v) for k, v in (("sources", f.sources), ("notes", f.notes)) if v}
    if f.fixable:
        props["fixable"] = True
    return {
        "ruleId": f.code,
        **({"ruleIndex": index[f.code]} if f.code in index else {}),
        "level": _SARIF_LEVEL.get(f.severity, "warning"),
        "message": {"text": f"{f.name}: {f.message}" + (f" Fix: {f.fix}" if f.fix else "")},
        "locations": [{"physicalLocation": {
            "artifactLocation": {"uri": sarif_uri(f.path)},
            "region": {"startLine": max(f.line, 1), "startColumn": max(f.column, 1)},
        }}],
        **({"fixes": [_sarif_fix(f, edit)]} if edit is not None and f.fixable else {}),
        **({"properties": props} if props else {}),
    }


def render_sarif(findings: list[Finding], tool_version: str, fixes: dict | None = None) -> str:
    """SARIF 2.1.0: one run, the rules used, one result per finding; ``fixes``: a finding's edit
    (``lint.fixes.fix_edit``) for those ``--fix`` fixes, given as the result's ``fixes``. Columns count code points
    (``columnKind`` unicodeCodePoints, SARIF 2.1.0 3.14.17; its default, UTF-16 code units, differs past U+FFFF)."""
    used = {f.code for f in findings}
    rules = [r for r in all_rules() if r.code in used]
    index = {r.code: i for i, r in enumerate(rules)}
    fixes = fixes or {}
    doc = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "ropelaw",
                "version": tool_version,
                "informationUri": "https://pypi.org/project/ropelaw/",
                "rules": _sarif_rules(rules),
            }},
            "columnKind": "unicodeCodePoints",
            "results": [_sarif_result(f, index, fixes.get(f)) for f in _sort(findings)],
        }],
    }
    from .jsonout import dumps

    return dumps(doc)


# GitHub's limits on an annotation (REST API, check runs: "annotations[].message ... The maximum size is 64 KB",
# "title ... The maximum size is 255 characters"; workflow-command annotations become check-run annotations)
GITHUB_MESSAGE_BYTES = 64 * 1000  # 64 KB read as 64,000 bytes, the smaller reading
GITHUB_TITLE_CHARS = 255


def _gh_escape(text: str, prop: bool = False) -> str:
    """A workflow command's data (``prop=False``) or property value, escaped as GitHub's actions/toolkit does
    (packages/core/src/command.ts ``escapeData``: ``%`` -> %25, CR -> %0D, LF -> %0A, ``%`` first; ``escapeProperty``:
    also ``:`` -> %3A and ``,`` -> %2C); then :func:`clean` shows the other control characters as escapes."""
    text = clean(text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A"))
    if prop:
        text = text.replace(":", "%3A").replace(",", "%2C")
    return text


def github_message(f: Finding) -> str:
    """An annotation's message, unescaped: the finding's message, then (one line each, as ruff's ``help:``) its
    ``fix:``, its ``note:`` lines and its ``source:`` lines; the notes and sources only when the whole fits
    :data:`GITHUB_MESSAGE_BYTES` in UTF-8, else a line saying they were left out (``--output-format json`` has them)."""
    head = f.message + (f"\n  fix: {f.fix}" if f.fix else "")
    tail = "".join(f"\n  note: {n}" for n in f.notes) + "".join(f"\n  source: {s}" for s in f.sources)
    if len((head + tail).encode("utf-8", "surrogatepass")) <= GITHUB_MESSAGE_BYTES:
        return head + tail
    return head + ("\n  (notes and sources left out: over GitHub's 64 KB annotation limit; --output-format json "
                   "has them)")


def render_github(findings: list[Finding]) -> str:
    """GitHub Actions workflow commands: ``::error file=...,line=...,col=...,title=CODE name::msg`` (msg:
    :func:`github_message`)."""
    level = {"error": "error", "warning": "warning", "info": "notice"}
    out = []
    for f in _sort(findings):
        title = _gh_escape(f"{f.code} {f.name}", prop=True)
        out.append(f"::{level.get(f.severity, 'warning')} file={_gh_escape(f.path, True)},"
                   f"line={f.line},col={f.column},title={title}::{_gh_escape(github_message(f))}")
    return "\n".join(out)


def render(findings: list[Finding], fmt: str, *, checked: int = 1, noun: str = "file",
           extra: dict[str, Any] | None = None, extra_lines: Iterable[str] = (), fixes: dict | None = None) -> str:
    """Format findings as ``fmt`` (one of :data:`FORMATS`); ``fixes``: :func:`render_sarif`'s."""
    from . import __version__

    if fmt == "text":
        return render_text(findings, checked, noun, extra_lines=extra_lines)
    if fmt == "json":
        return render_json(findings, extra)
    if fmt == "sarif":
        return render_sarif(findings, __version__, fixes)
    if fmt == "github":
        return render_github(findings)
    raise UsageError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")


def exit_code(findings: list[Finding]) -> int:
    """ruff's convention: 1 when there are findings, 0 when clean (2 is for bad input)."""
    return 1 if findings else 0
