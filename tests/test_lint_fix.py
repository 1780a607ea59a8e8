"""``ropelaw lint --fix`` / ``--diff`` (issue 36) on real corpus configs: the keys transformers was measured to
ignore in both versions ropelaw follows (ropelaw/data/hf_keys.json, read here directly) are removed and nothing
else; the fixed file re-lints without those findings; ``--diff`` writes nothing; a key measured under one
version only is not fixed; a file that changes between the reads is left as it was.
"""

from __future__ import annotations

import difflib
import json
import os
import stat
from pathlib import Path

import pytest

from ropelaw.cli import main

ROOT = Path(__file__).resolve().parents[1]
CORPUS = Path(os.environ.get("ROPELAW_CORPUS", ROOT.parent / "shared" / "corpus"))
HUNYUAN_MT = ("hf/swayam8624__nanoquant-private__nanoquants__tencent_Hunyuan-MT-7B__"
              "tencent_Hunyuan-MT-7B_medium__config.json")
HUNYUAN_OCR = "heldout-r3/hub/nikolay-grudanov__Team_5_AI_Tutor__models__HunyuanOCR__config.json"  # hunyuan_vl
TABLE = json.loads((ROOT / "ropelaw" / "data" / "hf_keys.json").read_text())["versions"]


def corpus_file(rel: str, tmp_path: Path) -> Path:
    """A copy of corpus file ``rel`` in ``tmp_path`` (the corpus is read-only); skipped, naming it, when absent."""
    src = CORPUS / rel
    if not src.exists():
        if os.environ.get("ROPELAW_REQUIRE_CORPUS") == "1":
            pytest.fail(f"{rel} is not in {CORPUS} (ROPELAW_REQUIRE_CORPUS=1)")
        pytest.skip(f"{rel} is not in {CORPUS} yet")
    dst = tmp_path / "config.json"
    dst.write_bytes(src.read_bytes())
    return dst


def ignored_in_both(model_type: str, scheme: str) -> set[str]:
    """The rope-block keys the table records as ignored by every version measured, for that type and scheme."""
    versions = ("4.57.1", "5.23.0")
    sets = [{k for k, e in TABLE[v].get(model_type, {}).get(scheme, {}).items() if e["verdict"] == "ignores"}
            for v in versions]
    return set.intersection(*sets)


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["lint", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_fix_removes_the_keys_measured_ignored_and_nothing_else(tmp_path, capsys):
    path = corpus_file(HUNYUAN_MT, tmp_path)
    os.chmod(path, 0o640)
    before = path.read_bytes()
    keys = ignored_in_both("hunyuan_v1_dense", "default")
    assert keys == {f"rope_scaling.{k}" for k in ("beta_fast", "beta_slow", "mscale", "mscale_all_dim")}

    code, out, err = run(capsys, str(path), "--select", "RV019", "--diff")  # nothing written, the diff shown
    assert (code, err) == (1, "Would fix 4 findings in 1 file.\n") and path.read_bytes() == before
    removed = [ln[1:] for ln in out.splitlines() if ln.startswith("-") and not ln.startswith("---")]
    assert [json.loads("{" + ln.strip().rstrip(",") + "}") for ln in removed] == [
        {"beta_fast": 32}, {"beta_slow": 1}, {"mscale": 1.0}, {"mscale_all_dim": 1.0}]
    assert not [ln for ln in out.splitlines() if ln.startswith("+") and not ln.startswith("+++")]

    code, out, err = run(capsys, str(path), "--select", "RV019", "--fix")
    assert code == 1 and err == ""  # rope_scaling.factor: ignored by 4.57.1 only (5.23.0 not measured): kept
    assert out.splitlines()[-2:] == ["Fixed 4 findings in 1 file.", "Found 1 finding (1 info) in 1 config."]
    assert "RV019 runtime-ignores-key rope_scaling.factor is ignored by transformers 4.57.1" in out
    after = path.read_bytes()
    old, new = json.loads(before), json.loads(after)
    for k in keys:
        del old["rope_scaling"][k.split(".")[1]]
    assert new == old  # exactly those keys gone
    ops = difflib.SequenceMatcher(None, before.splitlines(True), after.splitlines(True)).get_opcodes()
    assert [op for op in ops if op[0] != "equal"] == [("delete", 41, 43, 41, 41), ("delete", 44, 46, 42, 42)]
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o640  # the file's permissions kept (safeio.write_atomic)

    code, out, err = run(capsys, str(path), "--select", "RV019", "--diff")  # fixed: nothing more to fix
    assert (code, out, err) == (0, "", "No fixes available.\n")


def test_fix_marks_the_findings_it_fixes(tmp_path, capsys):
    path = corpus_file(HUNYUAN_MT, tmp_path)
    code, out, _ = run(capsys, str(path), "--select", "RV019")
    marked = [ln for ln in out.splitlines() if ln.startswith("  fix: [*] ")]
    assert len(marked) == 4 and marked[0] == (
        "  fix: [*] `ropelaw lint --fix` removes rope_scaling.beta_fast: transformers 4.57.1 and 5.23.0 were measured "
        "to ignore it for hunyuan_v1_dense (removing it changed nothing in the forward)")
    assert out.splitlines()[-1] == "[*] 4 fixable with `--fix`."  # ruff 0.17.6 wording, after the summary
    code, out, _ = run(capsys, str(path), "--select", "RV019", "--output-format", "json")
    fixes = [f["fix"].startswith("[*] ") for f in json.loads(out)["findings"]]
    assert sorted(fixes) == [False, True, True, True, True]
    assert main(["rule", "RV019"]) == 0
    assert "Fix sometimes available (`ropelaw lint --fix`, marked [*])" in capsys.readouterr().out


def test_only_shown_findings_are_fixed(tmp_path, capsys):
    """RV019 is informational: hidden unless selected by name, and then not fixed either."""
    path = corpus_file(HUNYUAN_MT, tmp_path)
    before = path.read_bytes()
    code, out, err = run(capsys, str(path), "--fix")
    assert path.read_bytes() == before and "Fixed" not in out and err == ""
    code, out, err = run(capsys, str(path), "--select", "RV019", "--ignore", "RV019", "--diff")
    assert (code, out, err) == (0, "", "No fixes available.\n")


def test_a_key_measured_under_one_version_only_is_not_fixed(tmp_path, capsys):
    """HunyuanOCR (hunyuan_vl): transformers 4.57.1 does not know the type, so only 5.23.0 was measured."""
    path = corpus_file(HUNYUAN_OCR, tmp_path)
    assert not ignored_in_both("hunyuan_vl", "default")
    code, out, _ = run(capsys, str(path), "--select", "RV019")
    assert out.count("RV019 runtime-ignores-key") == 5 and "[*]" not in out
    code, out, err = run(capsys, str(path), "--select", "RV019", "--diff")
    assert (code, out, err) == (0, "", "No fixes available.\n")


def test_a_file_changed_between_the_reads_is_left_alone(tmp_path, capsys, monkeypatch):
    path = corpus_file(HUNYUAN_MT, tmp_path)
    before = path.read_bytes()
    from ropelaw.lint import loader

    reads = []
    real = loader.read_source_text

    def read(p: str) -> str:  # the second read (the check before writing) sees another text
        reads.append(p)
        return real(p) + (" " if len(reads) == 2 else "")

    monkeypatch.setattr(loader, "read_source_text", read)
    code, out, _ = run(capsys, str(path), "--select", "RV019", "--fix")
    assert path.read_bytes() == before
    assert f"{path}: not fixed: the file changed while it was linted" in out.splitlines()
    assert "Found 5 findings (5 info) in 1 config." in out


def test_diff_honours_output_file(tmp_path, capsys):
    """``--diff -o PATH``: the diff goes to PATH (atomically), stdout stays empty, the config is not written."""
    path = corpus_file(HUNYUAN_MT, tmp_path)
    before = path.read_bytes()
    code, out, err = run(capsys, str(path), "--select", "RV019", "--diff")
    assert code == 1 and out.startswith("---")
    report = tmp_path / "fix.diff"
    code, out2, err2 = run(capsys, str(path), "--select", "RV019", "--diff", "-o", str(report))
    assert (code, out2, err2) == (1, "", err) and report.read_text() == out and path.read_bytes() == before
    assert run(capsys, str(path), "--select", "RV019", "--diff", "-s") == (1, "", err)  # --silent: no diff either


def test_json_counts_fixes_applied_and_available(tmp_path, capsys, monkeypatch):
    """The json summary's ``fixes``: available = the findings marked [*], applied = those --fix removed (the keys
    recorded as ignored by both versions, counted independently from the table), not_applied = refused files."""
    path = corpus_file(HUNYUAN_MT, tmp_path)
    n = len(ignored_in_both("hunyuan_v1_dense", "default"))
    code, out, _ = run(capsys, str(path), "--select", "RV019", "--output-format", "json")
    doc = json.loads(out)
    marked = sum(f["fix"].startswith("[*] ") for f in doc["findings"])
    assert code == 1 and doc["summary"]["fixes"] == {"applied": 0, "available": n, "not_applied": []} and marked == n
    code, out, _ = run(capsys, str(path), "--select", "RV019", "--output-format", "json", "--fix")
    doc = json.loads(out)
    assert doc["summary"]["fixes"] == {"applied": n, "available": 0, "not_applied": []}
    assert doc["summary"]["findings"] == 1  # rope_scaling.factor: measured under one version only, kept
    path = corpus_file(HUNYUAN_MT, tmp_path)  # again, and the file changes between the reads: refused
    from ropelaw.lint import loader

    reads, real = [], loader.read_source_text

    def read(p: str) -> str:
        reads.append(p)
        return real(p) + (" " if len(reads) == 2 else "")

    monkeypatch.setattr(loader, "read_source_text", read)
    code, out, _ = run(capsys, str(path), "--select", "RV019", "--output-format", "json", "--fix")
    assert json.loads(out)["summary"]["fixes"] == {
        "applied": 0, "available": n,
        "not_applied": [{"path": str(path), "reason": "the file changed while it was linted"}]}


def test_sarif_fixes_apply_one_key_each(tmp_path, capsys):
    """SARIF ``fixes`` on the real multi-line config: each result's one replacement, applied to the file alone,
    leaves the file with that key removed and nothing else changed (json.loads against the original less the key);
    the results with fixes are the keys recorded as ignored by both versions."""
    path = corpus_file(HUNYUAN_MT, tmp_path)
    text = path.read_text(encoding="utf-8")
    lines = text.split("\n")
    code, out, _ = run(capsys, str(path), "--select", "RV019", "--output-format", "sarif")
    fixed = set()
    for r in json.loads(out)["runs"][0]["results"]:
        if "fixes" not in r:
            continue
        (rep,) = r["fixes"][0]["artifactChanges"][0]["replacements"]
        d = rep["deletedRegion"]
        start, end = (sum(len(ln) + 1 for ln in lines[:line - 1]) + col - 1
                      for line, col in ((d["startLine"], d["startColumn"]), (d["endLine"], d["endColumn"])))
        key = r["message"]["text"].split(" ")[1]
        expected = json.loads(text)
        del expected["rope_scaling"][key.split(".")[1]]
        assert json.loads(text[:start] + rep.get("insertedContent", {}).get("text", "") + text[end:]) == expected
        fixed.add(key)
    assert code == 1 and fixed == ignored_in_both("hunyuan_v1_dense", "default")
