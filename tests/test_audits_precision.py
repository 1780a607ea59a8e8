"""docs/audits.md's precision tables are what audits/precision.py writes from their sources (audits/corpus.py,
the committed reports, audits/notes.py): regenerate with `python audits/precision.py`."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "audits"))

import precision  # noqa: E402


def test_precision_tables_are_fresh():
    text = precision.DOC.read_text()
    a, b = text.index(precision.BEGIN), text.index(precision.END) + len(precision.END)
    assert text[a:b] == precision.table(), "stale: run `python audits/precision.py`"


def test_every_corpus_finding_is_judged_and_every_archive_pinned():
    import corpus

    for e in corpus.ENTRIES:
        if e.repo:  # a repository file: repo@commit path + sha256, no archive
            assert len(e.commit) == 40 and e.archive == "" and e.repo.count("/") == 1 and len(e.sha256) == 64
        else:
            assert len(e.sha256) == 64 and e.archive.startswith(f"{e.package.replace('-', '_')}-{e.version}")
        for code, line, verdict, why in e.findings:
            assert verdict in ("TP", "FP") and why and line > 0 and code.startswith("RP")
    assert len({(e.pin, e.path) for e in corpus.ENTRIES}) == len(corpus.ENTRIES)
