"""The example and recipe configs of one framework in the corpus (``frameworks-examples/SOURCES.tsv``: one row
per file of the repository at one commit; a row "already in corpus at X" is read from X), plus a
differential's own manifest of files it uses that are not in the corpus yet (``repo@commit path``, sha256):
those are skipped and listed until they are added, or read from ``ROPELAW_FRAMEWORKS_LOCAL``."""

from __future__ import annotations

import csv
import hashlib
import os
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
CORPUS = pathlib.Path(os.environ.get("ROPELAW_CORPUS", ROOT.parent / "shared" / "corpus"))
SOURCES = CORPUS / "frameworks-examples" / "SOURCES.tsv"
LOCAL = os.environ.get("ROPELAW_FRAMEWORKS_LOCAL")


def rows(framework: str) -> dict[str, tuple[str, str]]:
    """``{repo path: (corpus-relative file, sha256)}`` of ``framework``'s rows of SOURCES.tsv ({} without it)."""
    if not SOURCES.is_file():
        return {}
    out = {}
    with open(SOURCES, encoding="utf-8") as fh:
        for row in csv.DictReader(fh, delimiter="\t"):
            if row["framework"] != framework:
                continue
            note = row.get("note") or ""
            rel = note.split("already in corpus at ", 1)[1].strip() if "already in corpus at" in note else \
                f"frameworks-examples/{framework}/{row['path']}"
            out[row["path"]] = (rel, row["sha256"])
    return out


def keys(framework: str, manifest: dict) -> list[str]:
    """Every corpus row of ``framework``, then the manifest's entries not among them."""
    have = sorted(rows(framework))
    return have + sorted(k for k in manifest if k not in have)


def path_of(framework: str, key: str, manifest: dict) -> pathlib.Path:
    """The byte-exact file of ``key`` (its sha256 checked); skips, naming it, when it is not here yet."""
    found = rows(framework)
    if key in found:
        rel, sha = found[key]
        candidates = [CORPUS / rel]
    else:
        entry = manifest[key]
        sha = entry["sha256"]
        candidates = [CORPUS / entry["corpus"]] + ([pathlib.Path(LOCAL) / key] if LOCAL else [])
    path = next((p for p in candidates if p.is_file()), None)
    if path is None:
        source = manifest[key]["source"] if key in manifest else key
        pytest.skip(f"{source} is not in {CORPUS} yet (added between rounds; ROPELAW_FRAMEWORKS_LOCAL=DIR "
                    "reads a copy)")
    if hashlib.sha256(path.read_bytes()).hexdigest() != sha:
        pytest.skip(f"{path} is not the byte-exact {key} of SOURCES.tsv (sha256 differs): listed, not compared")
    return path
