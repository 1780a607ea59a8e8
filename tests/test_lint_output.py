"""The output flags of ``lint`` and ``audit code`` (issue 36, as ruff's ``check``): quiet by default,
``--verbose``, ``-q``, ``-s``, ``--exit-zero``, ``--statistics``, ``--output-format full|concise``,
``--output-file`` and colour on a terminal (``NO_COLOR`` / ``FORCE_COLOR``); and the rule selection
(``ropelaw/selection.py``) against ruff's documented precedence.

Each case checks the exact exit code and the exact output a script or a CI log reads.
"""

from __future__ import annotations

import io
import json

import pytest

from ropelaw import colour
from ropelaw.cli import main
from ropelaw.findings import all_rules
from ropelaw.selection import Layer, select

LLAMA = "tests/configs/llama-2-7b.json"
FALCON = "tests/configs/falcon-7b.json"
SEED004 = "tests/fixtures/static/seed004_llama_original.py"
FIXED = "tests/fixtures/static/seed004_llama_fixed.py"

RL101 = ("tests/configs/llama-2-7b.json:12:3: RL101 target-beyond-bound target 32,768 tokens [--target] exceeds the "
         "extrapolation bound 4,096 of d=128, base 10,000 [rope_theta absent: LlamaConfig default], trained at 4,096 "
         "[max_position_embeddings] (critical dimension 92); a base of 1.49e5 reaches it")
RL101_FIX = ("  fix: raise the base to >= 1.49e5 and continue training (Liu et al.: even at 4,096 tokens), or use a "
             "scaling scheme for 32,768")
RL103 = ("tests/configs/llama-2-7b.json:13:3: RL103 base-below-lower-bound base 10,000 [rope_theta absent: "
         "LlamaConfig default] is below Men et al.'s lower bound 6.3e5 for the target 32,768 tokens [--target] at "
         "d=128; B_(m,theta) < 0 at 18,517 of 32,768 distances, first at 1,707")
RL103_FIX = ("  fix: raise the base to >= 6.3e5 and train at that base for 32,768 tokens, or advertise at most "
             "1,706 tokens")
SUMMARY = "Found 2 findings (1 error, 1 warning) in 1 config."
FULL = [RL101, RL101_FIX, RL103, RL103_FIX, SUMMARY]


@pytest.fixture(autouse=True)
def _no_colour_env(monkeypatch):  # FORCE_COLOR: conftest.py
    monkeypatch.delenv("NO_COLOR", raising=False)


def run(capsys, argv):
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse
        code = exc.code
    out, err = capsys.readouterr()
    return code, out.splitlines(), err


def test_full_is_the_default_and_concise_is_one_line_per_finding(capsys):
    assert run(capsys, ["lint", LLAMA, "--target", "32k"]) == (1, FULL, "")
    assert run(capsys, ["lint", LLAMA, "--target", "32k", "--output-format", "full"]) == (1, FULL, "")
    assert run(capsys, ["lint", LLAMA, "--target", "32k", "--format", "text"]) == (1, FULL, "")
    assert run(capsys, ["lint", LLAMA, "--target", "32k", "--output-format", "concise"]) == (
        1, [RL101, RL103, SUMMARY], "")


def test_clean_files_are_quiet_unless_verbose(capsys):
    assert run(capsys, ["lint", LLAMA]) == (0, [
        "1 informational finding not shown (RL103; --select RL103 shows it).",
        "All checks passed: no findings in 1 config."], "")
    assert run(capsys, ["lint", LLAMA, "--verbose"]) == (0, [
        "tests/configs/llama-2-7b.json: ok (d=128, base 10,000, trained 4,096, target 4,096, bound 4,096)",
        "1 informational finding not shown (RL103; --select RL103 shows it).",
        "All checks passed: no findings in 1 config."], "")


def test_quiet_prints_the_findings_only_and_silent_nothing(capsys):
    assert run(capsys, ["lint", LLAMA, "--target", "32k", "-q"]) == (1, [RL101, RL101_FIX, RL103, RL103_FIX], "")
    assert run(capsys, ["lint", LLAMA, "--target", "32k", "--quiet", "--output-format", "concise"]) == (
        1, [RL101, RL103], "")
    assert run(capsys, ["lint", LLAMA, "-q"]) == (0, [], "")  # clean: nothing at all, as ruff -q
    assert run(capsys, ["lint", LLAMA, "--target", "32k", "-s"]) == (1, [], "")
    assert run(capsys, ["lint", LLAMA, "--target", "32k", "--silent", "--output-format", "json"]) == (1, [], "")
    assert run(capsys, ["lint", LLAMA, "-s"]) == (0, [], "")


def test_verbose_with_quiet_or_silent_is_bad_input(capsys):
    for flag in ("quiet", "silent"):
        assert run(capsys, ["lint", LLAMA, "-v", f"--{flag}"]) == (
            2, [], f"ropelaw: error: --verbose and --{flag} ask for opposite things: give one\n")


def test_exit_zero_turns_findings_into_0_and_nothing_else(capsys, tmp_path):
    assert run(capsys, ["lint", LLAMA, "--target", "32k", "--exit-zero"]) == (0, FULL, "")
    assert run(capsys, ["lint", LLAMA, "--target", "32k", "--exit-zero", "-s"]) == (0, [], "")
    missing = tmp_path / "missing.json"  # bad input stays 2
    code, out, err = run(capsys, ["lint", str(missing), "--exit-zero"])
    assert (code, out) == (2, []) and err.startswith(f"ropelaw: error: {missing}")
    code, out, err = run(capsys, ["lint", LLAMA, "--train", "0", "--exit-zero"])
    assert (code, out) == (2, [])


def test_statistics_count_each_rule_as_ruff_prints_them(capsys):
    # two configs at 32k, every rule: RL101 and RL103 on each, RP201 (informational, asked for by ALL) on each
    argv = ["lint", LLAMA, FALCON, "--target", "32k", "--select", "ALL", "--statistics"]
    assert run(capsys, argv) == (1, [
        "2\tRL101\ttarget-beyond-bound",
        "2\tRL103\tbase-below-lower-bound",
        "2\tRP201\tpositions-inexact-in-dtype",
        "Found 6 findings (2 errors, 2 warnings, 2 info) in 2 configs."], "")
    code, out, err = run(capsys, argv + ["--output-format", "json"])
    assert (code, err) == (1, "")
    assert json.loads("\n".join(out)) == [
        {"code": "RL101", "name": "target-beyond-bound", "severity": "error", "count": 2,
         "fixable": False},
        {"code": "RL103", "name": "base-below-lower-bound", "severity": "warning", "count": 2,
         "fixable": False},
        {"code": "RP201", "name": "positions-inexact-in-dtype", "severity": "info", "count": 2,
         "fixable": False}]
    # the counts agree with the findings of the JSON report
    code, out, _ = run(capsys, argv[:-1] + ["--output-format", "json"])
    counts: dict = {}
    for f in json.loads("\n".join(out))["findings"]:
        counts[f["code"]] = counts.get(f["code"], 0) + 1
    assert counts == {"RL101": 2, "RL103": 2, "RP201": 2}
    assert run(capsys, ["lint", LLAMA, "--statistics", "-q"]) == (0, [], "")


def test_output_file_holds_the_report_and_stdout_nothing(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("FORCE_COLOR", "1")  # a file is never coloured
    report = tmp_path / "report.txt"
    assert run(capsys, ["lint", LLAMA, "--target", "32k", "--output-file", str(report)]) == (1, [], "")
    assert report.read_text().splitlines() == FULL
    doc = tmp_path / "report.json"
    assert run(capsys, ["lint", LLAMA, "--target", "32k", "-o", str(doc), "--output-format", "json"]) == (1, [], "")
    assert json.loads(doc.read_text())["summary"]["findings"] == 2


def test_output_file_that_cannot_be_written_is_exit_2_before_linting(capsys, tmp_path):
    where = tmp_path / "no-such-dir" / "report.txt"
    assert run(capsys, ["lint", LLAMA, "--output-file", str(where)]) == (
        2, [], f"ropelaw: error: {where}: cannot write: no such directory {where.parent}; nothing written\n")
    assert run(capsys, ["lint", LLAMA, "--output-file", str(tmp_path)]) == (
        2, [], f"ropelaw: error: {tmp_path}: is a directory, not a regular file; refused, nothing written\n")


def test_a_failed_run_leaves_the_old_output_file_whole(capsys, tmp_path):
    report = tmp_path / "report.txt"
    report.write_text("the last report\n")
    code, out, err = run(capsys, ["lint", str(tmp_path / "missing.json"), "--output-file", str(report)])
    assert (code, out) == (2, []) and err.startswith("ropelaw: error: ")
    assert report.read_text() == "the last report\n"


def test_colour_on_a_terminal_or_forced_never_with_no_color(capsys, monkeypatch):
    monkeypatch.setenv("FORCE_COLOR", "1")
    code, out, _ = run(capsys, ["lint", LLAMA, "--target", "32k"])
    assert code == 1
    assert out[0] == ("\x1b[1mtests/configs/llama-2-7b.json\x1b[0m:12:3: "
                      "\x1b[1;31mRL101\x1b[0m ") + RL101.split(" RL101 ", 1)[1]
    assert out[1] == "  \x1b[1;36mfix:\x1b[0m" + RL101_FIX[len("  fix:"):]
    assert out[2].startswith("\x1b[1mtests/configs/llama-2-7b.json\x1b[0m:13:3: \x1b[1;33mRL103\x1b[0m base-below")
    assert out[-1] == f"\x1b[1m{SUMMARY}\x1b[0m"
    assert run(capsys, ["lint", LLAMA, "-q"]) == (0, [], "")
    code, out, _ = run(capsys, ["lint", LLAMA])
    assert out[-1] == "\x1b[1;32mAll checks passed: no findings in 1 config.\x1b[0m"
    monkeypatch.setenv("NO_COLOR", "1")  # https://no-color.org wins over FORCE_COLOR
    assert run(capsys, ["lint", LLAMA, "--target", "32k"]) == (1, FULL, "")
    monkeypatch.delenv("NO_COLOR")
    code, out, _ = run(capsys, ["lint", LLAMA, "--target", "32k", "--output-format", "json"])
    assert "\x1b" not in "".join(out)  # only text is coloured


class _Tty(io.StringIO):
    def isatty(self):
        return True


@pytest.mark.parametrize("stream,env,to_file,want", [
    (_Tty(), {}, False, True),  # a terminal
    (_Tty(), {"TERM": "dumb"}, False, False),
    (_Tty(), {"NO_COLOR": "1"}, False, False),
    (_Tty(), {"NO_COLOR": ""}, False, True),  # set but empty: not set (no-color.org)
    (_Tty(), {}, True, False),  # --output-file
    (io.StringIO(), {}, False, False),  # a pipe
    (io.StringIO(), {"FORCE_COLOR": "1"}, False, True),
    (io.StringIO(), {"FORCE_COLOR": "1", "NO_COLOR": "1"}, False, False),
])
def test_when_colour_is_wanted(stream, env, to_file, want):
    assert colour.wanted(stream, to_file=to_file, env=env) is want


def test_audit_code_takes_the_same_output_flags(capsys):
    code, out, err = run(capsys, ["audit", "code", SEED004, FIXED])
    assert (code, err, out[-1]) == (1, "", "Found 4 findings (1 error, 3 warnings) in 2 files.")
    assert len(out) == 9  # four findings, each with its fix line, and the summary
    concise = run(capsys, ["audit", "code", SEED004, FIXED, "--output-format", "concise"])
    assert concise == (1, out[0:-1:2] + out[-1:], "")
    assert run(capsys, ["audit", "code", SEED004, FIXED, "--output-format", "concise", "-q", "--exit-zero"]) == (
        0, out[0:-1:2], "")
    assert run(capsys, ["audit", "code", SEED004, FIXED, "--statistics"]) == (1, [
        "1\tRP101\tpositions-in-buffer-dtype",
        "1\tRP113\tangle-product-autocast-eligible",
        "1\tRP121\tinv-freq-float-buffer",
        "1\tRP122\tcache-rebuilt-after-cast",
        "Found 4 findings (1 error, 3 warnings) in 2 files."], "")
    assert run(capsys, ["audit", "code", SEED004, "-s"]) == (1, [], "")
    assert run(capsys, ["audit", "code", FIXED]) == (0, ["All checks passed: no findings in 1 file."], "")


# ruff's selection precedence (https://docs.astral.sh/ruff/settings/#lint_select and #lint_ignore: the most
# specific selector wins; an ignore as specific as a select wins; a later source's select replaces the set)
CODES = sorted(r.code for r in all_rules())
DEFAULT = [c for c in CODES if c not in ("RP201", "RL104")]


def _on(*layers, per_file=()):
    return select(CODES, DEFAULT, list(layers), per_file)


def test_selection_by_specificity():
    s = _on(Layer(select=("RL",), ignore=("RL103",)))
    assert s.enabled == {c for c in CODES if c.startswith("RL") and c != "RL103"}
    s = _on(Layer(ignore=("RL",), extend_select=("RL103",)))
    assert {c for c in s.enabled if c.startswith("RL")} == {"RL103"} and s.explicit == {"RL103"}
    assert "RV019" in s.enabled and "RP201" not in s.enabled  # the rest of the default set stays
    s = _on(Layer(select=("RL101",), ignore=("RL101",)))  # as specific: ignore wins
    assert s.enabled == frozenset()
    s = _on(Layer(select=("ALL",), ignore=("RP2",)))
    assert s.enabled == {c for c in CODES if not c.startswith("RP2")}


def test_selection_layers_and_per_file_ignores():
    project = Layer(select=("RL",), source="pyproject.toml")
    s = _on(project, Layer(extend_select=("RV019",)))
    assert s.enabled == {c for c in CODES if c.startswith("RL")} | {"RV019"}
    s = _on(project, Layer(select=("RV",)))  # a later select replaces the set
    assert s.enabled == {c for c in CODES if c.startswith("RV")}
    s = _on(project, Layer(), per_file=("RL101",))
    assert s.enabled == {c for c in CODES if c.startswith("RL") and c != "RL101"}
    default = _on(Layer())
    assert default.enabled == set(DEFAULT) and default.default  # nothing asked for by name


def test_the_selection_is_what_lint_applies(capsys):
    assert run(capsys, ["lint", LLAMA, "--target", "32k", "--select", "RL", "--ignore", "RL103", "-q"]) == (
        1, [RL101, RL101_FIX], "")
    assert run(capsys, ["lint", LLAMA, "--target", "32k", "--ignore", "RL", "--extend-select", "RL103", "-q"]) == (
        1, [RL103, RL103_FIX], "")


# --- fixable findings in every output format (issue 36), on tests/fixtures/lint/fixable-rv019.json ----------------
# HunYuan dense with rope_scaling keys transformers ignores; 4 of its 5 RV019 keys were measured ignored by both
# versions ropelaw follows (ropelaw/data/hf_keys.json, read again here), rope_scaling.factor by 4.57.1 only.

FIXABLE = "tests/fixtures/lint/fixable-rv019.json"
@pytest.fixture(autouse=True)
def _semantics_of_the_messages(monkeypatch):
    """The messages name the transformers version whose behaviour is followed (the installed one): these tests are
    about the output's form, so they follow 4.57.1 under either installed version."""
    monkeypatch.setenv("ROPELAW_HF_SEMANTICS", "4.57.1")


_WHY = ("is ignored by transformers 4.57.1: HunYuan runs rope_scaling type dynamic with an alpha as a fixed "
        "NTK-aware base")
_AT = {"beta_fast": (10, 37), "beta_slow": (10, 54), "factor": (10, 70), "mscale": (10, 85), "mscale_all_dim": (11, 20)}
_FACTOR_FIX = "Write the setting where transformers reads it (the message says what it reads instead), or drop the key."


def _fix_words(key: str) -> str:
    return (f"[*] `ropelaw lint --fix` removes rope_scaling.{key}: transformers 4.57.1 and 5.23.0 were measured to "
            "ignore it for hunyuan_v1_dense (removing it changed nothing in the forward)")


def _measured_in_both() -> set[str]:
    import pathlib

    table = json.loads((pathlib.Path("ropelaw/data/hf_keys.json")).read_text())["versions"]
    return set.intersection(*[{k.split(".")[-1] for k, e in table[v]["hunyuan_v1_dense"]["default"].items()
                               if e["verdict"] == "ignores"} for v in ("4.57.1", "5.23.0")])


def test_the_fixable_keys_are_those_measured_in_both_versions():
    assert _measured_in_both() & set(_AT) == set(_AT) - {"factor"}


def _line(key: str) -> str:
    line, col = _AT[key]
    mark = " [*]" if key != "factor" else ""
    return f"{FIXABLE}:{line}:{col}: RV019{mark} runtime-ignores-key rope_scaling.{key} {_WHY}"


def test_concise_and_full_mark_fixable_findings_as_ruff_does(capsys):
    """ruff 0.17.6 (``ruff check --output-format concise`` on a file with an unused import): ``F401 [*] ...``, then
    ``Found 1 error.`` and ``[*] 1 fixable with `--fix`.``; full output marks the finding the same way."""
    summary = ["Found 5 findings (5 info) in 1 config.", "[*] 4 fixable with `--fix`."]
    concise = [_line(k) for k in _AT]
    assert run(capsys, ["lint", FIXABLE, "--select", "RV019", "--output-format", "concise"]) == (1, concise + summary,
                                                                                                 "")
    full = [ln for k in _AT for ln in (_line(k), "  fix: " + (_FACTOR_FIX if k == "factor" else _fix_words(k)))]
    assert run(capsys, ["lint", FIXABLE, "--select", "RV019"]) == (1, full + summary, "")
    # -q: the findings only (ruff -q prints no summary and no fixable line either)
    assert run(capsys, ["lint", FIXABLE, "--select", "RV019", "-q", "--output-format", "concise"]) == (1, concise, "")
    # --statistics: ruff's [*] before the name of a rule with a fixable finding, then the same two lines
    assert run(capsys, ["lint", FIXABLE, "--select", "RV019", "--statistics"]) == (
        1, ["5\tRV019\t[*] runtime-ignores-key"] + summary, "")
    code, out, _ = run(capsys, ["lint", FIXABLE, "--select", "RV019", "--statistics", "--output-format", "json"])
    assert json.loads("\n".join(out)) == [{"code": "RV019", "name": "runtime-ignores-key", "severity": "info",
                                           "count": 5, "fixable": True}]
    # a run with no fixable finding says nothing of fixes
    code, out, _ = run(capsys, ["lint", LLAMA, "--target", "32k", "--statistics"])
    assert out == ["1\tRL101\ttarget-beyond-bound", "1\tRL103\tbase-below-lower-bound", SUMMARY]


def _gh_unescape(text: str) -> str:
    """GitHub's runner decoding (the inverse of actions/toolkit's escapeProperty / escapeData), % last."""
    for enc, c in (("%0D", "\r"), ("%0A", "\n"), ("%3A", ":"), ("%2C", ","), ("%25", "%")):
        text = text.replace(enc, c)
    return text


def test_github_annotations_exact_and_decoded(capsys):
    code, out, err = run(capsys, ["lint", FIXABLE, "--select", "RV019", "--output-format", "github"])
    assert (code, err) == (1, "")
    assert out == [f"::notice file={FIXABLE},line={_AT[k][0]},col={_AT[k][1]},title=RV019 runtime-ignores-key::"
                   f"rope_scaling.{k} {_WHY.replace(chr(10), '')}%0A  fix: "
                   + (_FACTOR_FIX if k == "factor" else _fix_words(k)) for k in _AT]
    code, doc, _ = run(capsys, ["lint", FIXABLE, "--select", "RV019", "--output-format", "json"])
    findings = json.loads("\n".join(doc))["findings"]
    for line, f in zip(out, findings, strict=True):  # the annotation decodes to the json finding
        head, _, data = line.partition("::")[2].partition("::")
        props = dict(p.split("=", 1) for p in head.split(" ", 1)[1].split(","))
        assert _gh_unescape(props["file"]) == f["path"] and (int(props["line"]), int(props["col"])) == (
            f["line"], f["column"])
        assert _gh_unescape(data) == f"{f['message']}\n  fix: {f['fix']}"


def test_github_escapes_as_the_toolkit_and_carries_notes_within_the_limit():
    """actions/toolkit packages/core/src/command.ts: data escapes % CR LF, a property also : and , (% first)."""
    from ropelaw.findings import Finding
    from ropelaw.report import GITHUB_MESSAGE_BYTES, render_github

    f = Finding("RV019", "runtime-ignores-key", "warning", "50% of a:b,c\r\nnext", path="d:1,2%.json", line=3,
                column=4, fix="", notes=("n: 1, 2",), sources=("s%",))
    assert render_github([f]) == ("::warning file=d%3A1%2C2%25.json,line=3,col=4,title=RV019 runtime-ignores-key::"
                                  "50%25 of a:b,c%0D%0Anext%0A  note: n: 1, 2%0A  source: s%25")
    big = Finding("RV019", "runtime-ignores-key", "info", "m", path="p.json", fix="f",
                  notes=("x" * GITHUB_MESSAGE_BYTES,))
    assert render_github([big]) == ("::notice file=p.json,line=1,col=1,title=RV019 runtime-ignores-key::m%0A  fix: f"
                                    "%0A  (notes and sources left out: over GitHub's 64 KB annotation limit; "
                                    "--output-format json has them)")
    assert all(len(f"{r.code} {r.name}") <= 255 for r in all_rules())  # every title within GitHub's 255 characters


def test_sarif_fixes_are_the_edit_and_fit_the_spec(capsys):
    import pathlib

    """Each fixable result carries SARIF 2.1.0 ``fixes`` (3.55-3.57: artifactChanges, each with artifactLocation
    and at least one replacement, each with a deletedRegion; the whole document also validated by hand against
    OASIS's sarif-schema-2.1.0.json, which is not committed); applying a result's replacement to the file gives the
    file with that key removed (checked by json.loads against the original less the key), nothing else changed."""
    code, out, _ = run(capsys, ["lint", FIXABLE, "--select", "RV019", "--output-format", "sarif"])
    run0 = json.loads("\n".join(out))["runs"][0]
    assert code == 1 and run0["columnKind"] == "unicodeCodePoints"
    text = pathlib.Path(FIXABLE).read_text(encoding="utf-8")
    lines = text.split("\n")

    def offset(line: int, col: int) -> int:
        return sum(len(ln) + 1 for ln in lines[:line - 1]) + col - 1

    fixed = set()
    for r in run0["results"]:
        key = r["message"]["text"].split(" ")[1].split(".")[1]
        if key == "factor":
            assert "fixes" not in r and "properties" not in r
            continue
        assert r["properties"] == {"fixable": True}
        (fix,) = r["fixes"]
        assert fix["description"] == {"text": _fix_words(key)[4:]}
        (change,) = fix["artifactChanges"]
        assert change["artifactLocation"] == {"uri": FIXABLE}
        (rep,) = change["replacements"]
        assert set(rep) == {"deletedRegion"}  # a deletion: nothing inserted
        d = rep["deletedRegion"]
        assert (d["startLine"], d["startColumn"]) == _AT[key]  # it starts at the key the finding is at
        start, end = offset(d["startLine"], d["startColumn"]), offset(d["endLine"], d["endColumn"])
        expected = json.loads(text)
        del expected["rope_scaling"][key]
        assert json.loads(text[:start] + text[end:]) == expected
        fixed.add(key)
    assert fixed == _measured_in_both() & set(_AT)
