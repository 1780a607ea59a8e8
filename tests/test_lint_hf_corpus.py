"""The real corpus: published config.json files, linted where they are present.

Workplace rule: files fetched from public repositories are not committed. They live outside the
repository, in ``$ROPELAW_CORPUS/hf/`` (default ``<repo>/../shared/corpus/hf/``); the committed
manifest ``tests/corpus/hf_manifest.json`` records, for each file, its ``repo@commit path``, the
sha256 of its bytes and its reviewed lint result (the derived d, base, scheme and lengths, and every
finding as ``code line:column``). Without the corpus these tests skip, saying where it was looked for.
"""

from __future__ import annotations

import hashlib
import json
import os
import pathlib

import pytest

from ropelaw.lint.check import lint_config
from ropelaw.lint.loader import NotARopeConfig, load_config

REPO = pathlib.Path(__file__).resolve().parents[1]
MANIFEST = json.loads((REPO / "tests" / "corpus" / "hf_manifest.json").read_text())
CORPUS = pathlib.Path(os.environ.get("ROPELAW_CORPUS", REPO.parent / "shared" / "corpus")) / "hf"
ENTRIES = MANIFEST["configs"]


def test_manifest_names_every_file_with_provenance():
    assert len(ENTRIES) == len({e["file"] for e in ENTRIES})
    for e in ENTRIES:
        assert len(e["commit"]) == 40 and e["path"].endswith(".json") and "/" in e["repo"]
        assert e["file"] == f"{e['repo'].replace('/', '__')}__{e['path'].replace('/', '__')}"
        assert len(e["sha256"]) == 64 and e["expect"]


@pytest.mark.parametrize("entry", ENTRIES, ids=[e["file"][:60] for e in ENTRIES])
def test_real_config(entry):
    if not CORPUS.is_dir():
        pytest.skip(f"real corpus not present at {CORPUS} (set ROPELAW_CORPUS; see tests/configs/README.md)")
    path = CORPUS / entry["file"]
    assert path.is_file(), f"{path} missing from the corpus ({entry['repo']}@{entry['commit']} {entry['path']})"
    assert hashlib.sha256(path.read_bytes()).hexdigest() == entry["sha256"], f"{path} is not the recorded file"
    expect = entry["expect"]
    if "not_rope" in expect:
        with pytest.raises(NotARopeConfig, match=expect["not_rope"]):
            load_config(str(path))
        return
    cfg = load_config(str(path))
    r = lint_config(cfg)
    a = r.layers[0]
    got = {"architecture": cfg.arch, "d": a.spec.d, "base": a.spec.base, "scheme": a.spec.scheme,
           "train_len": a.spec.train_len, "length": a.length,
           "findings": sorted(f"{f.code} {f.line}:{f.column}" for f in r.findings)}
    assert got == expect
