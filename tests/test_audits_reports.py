"""audits/: the committed reports are consistent with their raw outputs and the catalog (cheap checks).

``python audits/run.py`` (by hand, minutes) installs each target and writes ``audits/reports/*.json``
(raw outputs) and the Markdown rendered from them. These tests do not run any audit: they re-render
the Markdown from the committed JSON and compare, and check that every target of the catalog has a
report and every static finding a verdict.
"""

from __future__ import annotations

import json
import shutil
import sys
import warnings
from pathlib import Path

import pytest

AUDITS = Path(__file__).resolve().parent.parent / "audits"
REPORTS = AUDITS / "reports"
sys.path.insert(0, str(AUDITS))

import catalog  # noqa: E402
import render  # noqa: E402

FRAMEWORKS = ("megatron-core", "litgpt", "torchtitan", "flash-attn", "liger-kernel", "nanotron", "vllm", "axolotl")


def _docs() -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted(REPORTS.glob("*.json")) if not p.name.startswith("_")]


def test_every_catalog_target_has_a_report():
    names = {t.name for t in catalog.TARGETS}
    assert {p.stem for p in REPORTS.glob("*.json") if not p.name.startswith("_")} == names
    assert {p.stem for p in REPORTS.glob("*.md")} == names
    readme = (AUDITS / "README.md").read_text()
    for t in catalog.TARGETS:
        assert f"](reports/{t.name}.md)" in readme, t.name


def test_the_eight_frameworks_are_pinned_and_audited_statically():
    got = {t.package: t for t in catalog.TARGETS if t.package in FRAMEWORKS}
    assert sorted(got) == sorted(FRAMEWORKS)
    for t in got.values():
        assert t.pins == (f"{t.package}=={t.version}",) and t.scan
        doc = json.loads((REPORTS / f"{t.name}.json").read_text())
        static = [r for r in doc["results"] if r["kind"] == "static"]
        assert len(static) == 1 and isinstance(static[0]["json"], list), t.name
        # a target without a runtime audit says why
        assert t.modules or t.runtime_note, t.name


def test_every_static_finding_has_a_verdict():
    for doc in _docs():
        rt = render.Runtime(doc["results"])
        for r in doc["results"]:
            if r["kind"] != "static" or not isinstance(r.get("json"), list):
                continue
            for f in r["json"]:
                verdict, why = render.judge(doc, f, rt)
                assert verdict != "UNJUDGED" and why, (doc["target"], f["path"], f["line"], f["code"])


def test_markdown_is_rendered_from_the_committed_json(tmp_path):
    for p in REPORTS.glob("*.json"):
        shutil.copy(p, tmp_path / p.name)
    render.write_all(tmp_path, tmp_path / "README.md")
    for md in sorted(REPORTS.glob("*.md")):
        assert (tmp_path / md.name).read_text() == md.read_text(), \
            f"{md.name}: run `python audits/run.py --render-only`"
    assert (tmp_path / "README.md").read_text() == (AUDITS / "README.md").read_text()


@pytest.mark.parametrize("name, code, needle", [
    # torchtitan's cast bug is found statically: the complex cache buffer
    ("torchtitan-0.3.0", "RP123", "ComplexRoPE._precompute_cache"),
    # Megatron's MRoPE matrix product outside autocast(enabled=False)
    ("megatron-core-0.19.2", "RP113", ""),
])
def test_framework_findings_that_matter_are_in_the_reports(name, code, needle):
    doc = json.loads((REPORTS / f"{name}.json").read_text())
    (static,) = [r for r in doc["results"] if r["kind"] == "static"]
    assert any(f["code"] == code and needle in f["message"] for f in static["json"])


@pytest.mark.parametrize("name", ["flash-attn-2.8.3", "nanotron-0.4", "vllm-0.33.0", "megatron-core-0.19.2"])
def test_guarded_framework_code_is_not_reported(name):
    # the guarded patterns of issue 11 (their fixtures are in tests/fixtures/static/clean_guard_* etc.)
    doc = json.loads((REPORTS / f"{name}.json").read_text())
    (static,) = [r for r in doc["results"] if r["kind"] == "static"]
    flagged = {(f["path"], f["code"]) for f in static["json"]}
    assert ("flash_attn/layers/rotary.py", "RP121") not in flagged
    assert ("flash_attn/layers/rotary.py", "RP122") not in flagged
    # the lazy float32 re-initialisation guards the buffer (RP101 / RP121 / RP122); its einsum outside
    # autocast(enabled=False) is a separate, CUDA-AMP-only finding (RP113, judged in notes.py)
    assert not any(p == "nanotron/models/starcoder2.py" and c != "RP113" for p, c in flagged)
    assert ("vllm/model_executor/layers/rotary_embedding/mrope.py", "RP102") not in flagged
    assert ("megatron/core/models/audio/nemo_transformer_encoder.py", "RP102") not in flagged



# ---------------------------------------------------------------------------- staleness
# A report is stale when the auditor now gives other results on its target (audits/behaviour.py).

SITE = AUDITS / "_work" / "site"
ROOT = AUDITS.parent


def test_reports_were_made_by_an_auditor_that_behaves_as_this_one():
    """Everywhere (CI included): the rule set and the auditor's results on the committed fixtures
    equal those recorded by the last full `python audits/run.py` (audits/reports/_auditor.json)."""
    import behaviour

    recorded = json.loads((REPORTS / "_auditor.json").read_text())
    now = json.loads(json.dumps(behaviour.snapshot(ROOT)))
    assert now == recorded, ("the auditor behaves differently from the one that made audits/reports "
                             "(regenerate: `nice python audits/run.py`, or re-run the targets whose results changed "
                             "with --only, then --snapshot-only; see audits/README.md):\n"
                             + "\n".join(behaviour.diff(recorded, now)))


def _static_result(name: str) -> dict | None:
    doc = json.loads((REPORTS / f"{name}.json").read_text())
    return next((r for r in doc["results"] if r["kind"] == "static"), None)


@pytest.mark.parametrize("name", [t.name for t in catalog.TARGETS if t.scan])
def test_static_results_reproduce_where_the_code_is_here(name, monkeypatch, capsys):
    """Where the target's code is on this machine (after `python audits/run.py`), the static scan
    gives the committed findings (path, line, column, code)."""
    from ropelaw.cli import main

    res = _static_result(name)
    site = SITE / name
    files = [p for p in json.loads((REPORTS / f"{name}.json").read_text())["scanned_files"]]
    missing = [p for p in files if not (site / p).exists()]
    if res is None or not files or missing:
        pytest.skip(f"{name}: code not on this machine ({site}; run `python audits/run.py --only {name}`)")
    monkeypatch.chdir(site)
    with warnings.catch_warnings():  # as run.py runs it (PYTHONWARNINGS=ignore): pytest's filters would
        warnings.simplefilter("ignore")  # turn a file's invalid-escape warning into a parse error (RE001)
        main(["audit", "code", *files, "--format", "json", "--no-progress"])
    got = json.loads(capsys.readouterr().out)
    key = lambda f: (f["path"], f["line"], f["column"], f["code"])  # noqa: E731
    assert sorted(map(key, got)) == sorted(map(key, res["json"])), f"{name}: stale static results"


QUICK = [(t, s) for t in catalog.TARGETS for s in t.shows if s.length <= 2048 and not s.mismatch]


@pytest.mark.parametrize("target, show", QUICK, ids=[f"{t.name}:{s.scenario}" for t, s in QUICK])
def test_short_runtime_results_reproduce_where_the_code_is_here(target, show):
    """The runtime rows of 2,048 positions or fewer, re-run where the target's code is here."""
    import os
    import subprocess

    site = SITE / target.name
    if not site.is_dir():
        pytest.skip(f"{target.name}: code not on this machine ({site})")
    mod = next(m for m in target.module_list() if m.label == show.module)
    cmd = [["audit", "module", mod.spec, *mod.args, "--dtype", show.dtype, "--length", str(show.length),
            "--scenario", show.scenario, "--format", "json"]]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(ROOT)]), "OMP_NUM_THREADS": "1",
           "PYTHONWARNINGS": "ignore"}
    proc = subprocess.run([sys.executable, str(AUDITS / "targets" / "cli_batch.py")], input=json.dumps(cmd),
                          capture_output=True, text=True, cwd=ROOT, env=env, timeout=600)
    out = json.loads(proc.stdout.splitlines()[0])
    got = json.loads(out["stdout"])["scenarios"][0] if out["exit_code"] in (0, 1) else None
    doc = json.loads((REPORTS / f"{target.name}.json").read_text())
    row = render.Runtime(doc["results"]).get(show.module, show.dtype, show.length, show.scenario)
    assert got is not None and row is not None, (out.get("stderr", "")[-500:], row)
    assert (got["exact"], got["distinct"], got["path"]) == (row["exact"], row["distinct"], row["path"])
