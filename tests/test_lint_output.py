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
        {"code": "RL101", "name": "target-beyond-bound", "severity": "error", "count": 2},
        {"code": "RL103", "name": "base-below-lower-bound", "severity": "warning", "count": 2},
        {"code": "RP201", "name": "positions-inexact-in-dtype", "severity": "info", "count": 2}]
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
