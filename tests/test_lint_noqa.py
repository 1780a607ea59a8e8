"""Inline suppression in configs (issue 36): ``# ropelaw: noqa[: CODES]`` in YAML, TOML and shell launch
scripts, RE105 unused-noqa for a directive or code that suppresses nothing (as ruff's RUF100); JSON has
no comments and uses per-file-ignores. Exact exit codes and output.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from ropelaw.cli import main
from ropelaw.findings import Finding, get_rule
from ropelaw.lint.rules.noqa import directives, suppress

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "tests" / "fixtures" / "frameworks" / "examples"
LLAMAFACTORY = EXAMPLES / "llamafactory_qwen3_yarn.yaml"  # rope_scaling: yarn on line 4; RL102 there at 1M
QWEN = ["--model-config", str(ROOT / "tests" / "configs" / "qwen3-8b.json")]  # the model it names, read from a file
TORCHTITAN = EXAMPLES / "torchtitan_llama3_8b.toml"
MEGATRON = EXAMPLES / "megatron_pretrain_llama3.sh"


def run(capsys, argv):
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out.splitlines(), err


def _with_comment(src: Path, dst: Path, line: int, comment: str) -> Path:
    lines = src.read_text().split("\n")
    lines[line - 1] += "  " + comment
    dst.write_text("\n".join(lines))
    return dst


def _findings(capsys, path, *extra):
    code, out, err = run(capsys, ["lint", str(path), "--output-format", "concise", "-q", *extra])
    assert err == ""
    return code, [line[len(str(path)) + 1:].split(" ", 2)[:2] for line in out]


def test_yaml_noqa_with_a_code_suppresses_that_finding(capsys, tmp_path):
    code, found = _findings(capsys, LLAMAFACTORY, "--target", "1M", *QWEN)
    assert (code, found) == (1, [["4:1:", "RL102"]])  # without a directive
    p = _with_comment(LLAMAFACTORY, tmp_path / "train.yaml", 4, "# ropelaw: noqa: RL102")
    assert run(capsys, ["lint", str(p), *QWEN, "--target", "1M"]) == (
        0, ["All checks passed: no findings in 1 config."], "")
    p = _with_comment(LLAMAFACTORY, tmp_path / "bare.yaml", 4, "# ropelaw: noqa")  # every finding of the line
    assert run(capsys, ["lint", str(p), *QWEN, "--target", "1M", "-q"]) == (0, [], "")
    p = _with_comment(LLAMAFACTORY, tmp_path / "other.yaml", 4, "# ropelaw: noqa: RL101")  # another code
    code, out, _ = run(capsys, ["lint", str(p), *QWEN, "--target", "1M", "--output-format", "concise"])
    assert code == 1
    assert [line.split(" ", 2)[:2] for line in out[:-1]] == [
        [f"{p}:4:1:", "RL102"],
        [f"{p}:4:21:", "RE105"]]
    assert out[1] == f"{p}:4:21: RE105 unused-noqa `# ropelaw: noqa: RL101`: RL101 not reported on this line"
    assert out[-1] == "Found 2 findings (2 warnings) in 1 config."


def test_unused_directives_are_re105_and_can_be_ignored(capsys, tmp_path):
    p = _with_comment(LLAMAFACTORY, tmp_path / "train.yaml", 3, "# ropelaw: noqa")  # nothing on line 3
    assert run(capsys, ["lint", str(p), *QWEN, "--output-format", "concise"]) == (1, [
        f"{p}:3:36: RE105 unused-noqa `# ropelaw: noqa` suppresses nothing: no finding on this line",
        "Found 1 finding (1 warning) in 1 config."], "")
    assert run(capsys, ["lint", str(p), *QWEN, "--ignore", "RE105", "-q"]) == (0, [], "")
    # a code partly used: the used one suppresses, the other is said
    q = _with_comment(LLAMAFACTORY, tmp_path / "part.yaml", 4, "# ropelaw: noqa: RL102, RV019")
    assert run(capsys, ["lint", str(q), *QWEN, "--target", "1M", "--output-format", "concise", "-q"]) == (1, [
        f"{q}:4:21: RE105 unused-noqa `# ropelaw: noqa: RL102, RV019`: RV019 not reported on this line"], "")


def test_a_directive_counts_findings_of_rules_not_selected(capsys, tmp_path):
    """RL102 is computed whatever is selected: its directive is used, not RE105, under --select RV."""
    p = _with_comment(LLAMAFACTORY, tmp_path / "train.yaml", 4, "# ropelaw: noqa: RL102")
    assert run(capsys, ["lint", str(p), *QWEN, "--target", "1M", "--select", "RV,RE105", "-q"]) == (0, [], "")


def test_toml_and_shell_scripts(capsys, tmp_path):
    code, found = _findings(capsys, TORCHTITAN, "--target", "64k")
    assert code == 1 and found and all(loc == found[0][0] for loc, _ in found)
    line = int(found[0][0].split(":")[0])
    codes = ", ".join(c for _, c in found)
    p = _with_comment(TORCHTITAN, tmp_path / "train.toml", line, f"# ropelaw: noqa: {codes}")
    assert run(capsys, ["lint", str(p), "--target", "64k", "-q"]) == (0, [], "")
    code, found = _findings(capsys, MEGATRON, "--target", "1M")
    assert code == 1 and found
    line = int(found[0][0].split(":")[0])
    codes = ", ".join(c for loc, c in found if int(loc.split(":")[0]) == line)
    sh = _with_comment(MEGATRON, tmp_path / "pretrain.sh", line, f"# ropelaw: noqa: {codes}")
    code, after = _findings(capsys, sh, "--target", "1M")
    assert [f for f in after if int(f[0].split(":")[0]) == line] == []
    assert after == [f for f in found if int(f[0].split(":")[0]) != line]


def test_json_has_no_directives_and_takes_per_file_ignores(capsys, tmp_path, monkeypatch):
    p = tmp_path / "config.json"
    shutil.copy(ROOT / "tests" / "configs" / "llama-2-7b.json", p)
    p.write_text(p.read_text().replace('"max_position_embeddings": 4096,',
                                       '"max_position_embeddings": 4096, "note": "# ropelaw: noqa",'))
    json.loads(p.read_text())
    assert directives(str(p)) == {}
    code, found = _findings(capsys, p, "--target", "32k")
    assert (code, [c for _, c in found]) == (1, ["RL101", "RL103"])
    (tmp_path / "ropelaw.toml").write_text('[lint.per-file-ignores]\n"config.json" = ["RL101", "RL103"]\n')
    monkeypatch.chdir(tmp_path)
    assert run(capsys, ["lint", "config.json", "--target", "32k", "-q"]) == (0, [], "")


@pytest.mark.parametrize("comment,codes", [
    ("# ropelaw: noqa", None),
    ("#ropelaw:noqa:rl102", ("RL102",)),
    ("# ropelaw: noqa: RL102,RV019", ("RL102", "RV019")),
    ("# noqa: RL102", "none"),  # another tool's directive
    ("# ropelaw: noqa:", None),  # no codes after the colon: every finding, as ruff reads '# noqa:'
])
def test_directive_syntax(tmp_path, comment, codes):
    p = tmp_path / "c.yaml"
    p.write_text(f"hidden_size: 4096\nrope_theta: 10000  {comment}\n")
    found = directives(str(p))
    if codes == "none":
        assert found == {}
    else:
        assert list(found) == [2] and found[2].codes == codes and found[2].column == 20


def test_suppress_against_brute_force():
    """Every subset of findings on two lines and every directive: kept + suppressed = all, and RE105 exactly for
    the directive parts that matched nothing (checked by enumeration)."""
    rule = get_rule("RL102")
    other = get_rule("RV019")
    pool = [Finding.of(r, "m", path="c.yaml", line=ln, column=1) for ln in (1, 2) for r in (rule, other)]
    from ropelaw.lint.rules.noqa import Directive

    options = [None, ("RL102",), ("RV019",), ("RL102", "RV019"), ("RL101",)]
    for mask in range(16):
        fs = [f for i, f in enumerate(pool) if mask >> i & 1]
        for codes in options:
            found = {1: Directive(1, 5, codes, "x")}
            kept, unused = suppress(fs, found, "c.yaml")
            gone = [f for f in fs if f.line == 1 and (codes is None or f.code in codes)]
            assert kept == [f for f in fs if f not in gone]
            on_line = {f.code for f in fs if f.line == 1}
            want_unused = (not on_line) if codes is None else bool(set(codes) - on_line)
            assert bool(unused) == want_unused and all(u.code == "RE105" and u.line == 1 for u in unused)
