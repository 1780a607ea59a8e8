"""Project configuration of ``ropelaw lint`` (issue 36): ``[tool.ropelaw.lint]`` in pyproject.toml and
``[lint]`` in ropelaw.toml, found per file by walking up as ruff does, on a scratch repository with nested
configurations; ``--config``, ``--isolated``, ``--show-settings``; a configuration ropelaw cannot use is
one line and exit 2. Exact exit codes and output.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from ropelaw.cli import main
from ropelaw.project import matches

ROOT = Path(__file__).resolve().parents[1]
LLAMA = ROOT / "tests" / "configs" / "llama-2-7b.json"  # d=128, base 10,000, trained 4,096

# RL101 / RL103 of llama-2-7b.json at a target (messages checked against the CLI's own --target run below)
RL101_AT = {32768: "RL101 target-beyond-bound target 32,768 tokens [{src}] exceeds the extrapolation bound 4,096 "
                   "of d=128, base 10,000 [rope_theta absent: LlamaConfig default], trained at 4,096 "
                   "[max_position_embeddings] (critical dimension 92); a base of 1.49e5 reaches it",
            65536: "RL101 target-beyond-bound target 65,536 tokens [{src}] exceeds the extrapolation bound 4,096 "
                   "of d=128, base 10,000 [rope_theta absent: LlamaConfig default], trained at 4,096 "
                   "[max_position_embeddings] (critical dimension 92); a base of 3.9e5 reaches it"}
RL103_32K = ("RL103 base-below-lower-bound base 10,000 [rope_theta absent: LlamaConfig default] is below Men et al.'s "
             "lower bound 6.3e5 for the target 32,768 tokens [{src}] at d=128; B_(m,theta) < 0 at "
             "18,517 of 32,768 distances, first at 1,707")


def run(capsys, argv):
    try:
        code = main(argv)
    except SystemExit as exc:
        code = exc.code
    out, err = capsys.readouterr()
    return code, out.splitlines(), err


@pytest.fixture
def repo(tmp_path, monkeypatch):
    """repo/pyproject.toml: target 32k, select RL; repo/sub/ropelaw.toml: target 64k, ignore RL103, legacy/*.json
    without RL101; repo/plain/pyproject.toml has no [tool.ropelaw] (passed over); repo/other has none."""
    r = tmp_path / "repo"
    for folder in ("sub/legacy", "plain", "other", "build"):
        (r / folder).mkdir(parents=True)
    for name in ("sub/a.json", "sub/legacy/b.json", "plain/c.json", "other/d.json", "build/e.json"):
        shutil.copy(LLAMA, r / name)
    (r / "pyproject.toml").write_text('[project]\nname = "demo"\n\n[tool.ropelaw.lint]\ntarget = "32k"\n'
                                      'select = ["RL"]\nexclude = ["build"]\n')
    (r / "sub" / "ropelaw.toml").write_text('[lint]\ntarget = 65536\nignore = ["RL103"]\n'
                                            'per-file-ignores = { "legacy/*.json" = ["RL101"] }\n')
    (r / "plain" / "pyproject.toml").write_text('[project]\nname = "plain"\n')
    monkeypatch.chdir(r)
    return r


def test_the_cli_and_the_project_file_give_the_same_numbers(capsys, repo):
    """The messages above are the CLI's own at --target 32k / 64k, apart from the source of the target."""
    code, out, _ = run(capsys, ["lint", "--isolated", "other/d.json", "--target", "32k", "--output-format", "concise",
                                "-q"])
    assert (code, out) == (1, ["other/d.json:12:3: " + RL101_AT[32768].format(src="--target"),
                               "other/d.json:13:3: " + RL103_32K.format(src="--target")])
    code, out, _ = run(capsys, ["lint", "--isolated", "sub/a.json", "--target", "64k", "--select", "RL101",
                                "--output-format", "concise", "-q"])
    assert (code, out) == (1, ["sub/a.json:12:3: " + RL101_AT[65536].format(src="--target")])


def test_each_file_takes_the_closest_configuration(capsys, repo):
    code, out, err = run(capsys, ["lint", ".", "--output-format", "concise"])
    assert (code, err) == (1, "")
    assert out == [
        "./other/d.json:12:3: " + RL101_AT[32768].format(src="target in pyproject.toml"),
        "./other/d.json:13:3: " + RL103_32K.format(src="target in pyproject.toml"),
        # plain/ has no [tool.ropelaw]
        "./plain/c.json:12:3: " + RL101_AT[32768].format(src="target in pyproject.toml"),
        "./plain/c.json:13:3: " + RL103_32K.format(src="target in pyproject.toml"),
        "./sub/a.json:12:3: " + RL101_AT[65536].format(src="target in sub/ropelaw.toml"),  # RL103 ignored there
        # sub/legacy/b.json: RL101 by per-file-ignores, RL103 by ignore; build/ excluded from the scan
        "Found 5 findings (3 errors, 2 warnings) in 4 configs."]


def test_isolated_and_config(capsys, repo):
    assert run(capsys, ["lint", ".", "--isolated"]) == (0, [
        "5 informational findings not shown (RL103; --select RL103 shows them).",
        "All checks passed: no findings in 5 configs."], "")
    code, out, _ = run(capsys, ["lint", ".", "--config", "sub/ropelaw.toml", "--output-format", "concise", "-q"])
    # one file for all: target 64k, RL103 ignored, legacy/*.json relative to sub/ (only sub/legacy/b.json); build/
    # is scanned (the exclude was the other file's)
    assert (code, [line.split(": RL")[0] for line in out]) == (1, [
        "./build/e.json:12:3", "./other/d.json:12:3", "./plain/c.json:12:3", "./sub/a.json:12:3"])
    assert all(RL101_AT[65536].format(src="target in sub/ropelaw.toml") in line for line in out)
    assert run(capsys, ["lint", ".", "--config", "sub/ropelaw.toml", "--isolated"]) == (
        2, [], "ropelaw: error: --config and --isolated ask for opposite things: give one\n")
    assert run(capsys, ["lint", ".", "--config", "plain/pyproject.toml"]) == (
        2, [], "ropelaw: error: plain/pyproject.toml: no [tool.ropelaw] table\n")


def test_the_command_line_comes_after_the_file(capsys, repo):
    # --target replaces the file's target; --select replaces its select; --ignore adds to its ignores
    code, out, _ = run(capsys, ["lint", "other/d.json", "--target", "64k", "--output-format", "concise", "-q"])
    assert code == 1 and out[0] == "other/d.json:12:3: " + RL101_AT[65536].format(src="--target")
    assert run(capsys, ["lint", "other/d.json", "--select", "RV", "-q"]) == (0, [], "")
    assert run(capsys, ["lint", "other/d.json", "--ignore", "RL101", "--output-format", "concise", "-q"]) == (
        1, ["other/d.json:13:3: " + RL103_32K.format(src="target in pyproject.toml")], "")
    # a file named on the command line is linted even where exclude leaves it out of scans (as ruff)
    code, out, _ = run(capsys, ["lint", "build/e.json", "--output-format", "concise"])
    assert (code, out[-1]) == (1, "Found 2 findings (1 error, 1 warning) in 1 config.")
    # --force-exclude (the pre-commit hook's entry): named files too
    assert run(capsys, ["lint", "build/e.json", "other/d.json", "--force-exclude", "--output-format",
                        "concise"])[1][-1] \
        == "Found 2 findings (1 error, 1 warning) in 1 config."
    assert run(capsys, ["lint", "build/e.json", "--force-exclude"]) == (
        0, ["No findings: no config analysed."], "")


def test_show_settings(capsys, repo):
    code, out, err = run(capsys, ["lint", "--show-settings", "sub/legacy/b.json", "other/d.json", "--tune", "128k"])
    rl = "RL100, RL101, RL102, RL103, RL104, RL105, RL106"
    assert (code, err) == (0, "")
    from ropelaw.commands.lint import default_select

    on = sorted(set(default_select()) - {"RL101", "RL103"})  # the default set less the file's ignores
    assert out[:13] == [
        "Settings for sub/legacy/b.json",
        "  configuration file: sub/ropelaw.toml [lint]",
        "  select: (none)",
        "  extend-select: (none)",
        "  ignore: RL103",
        "  per-file-ignores for this file: RL101",
        "  exclude: (none)",
        "  excluded from directory scans: no",
        "  train: (from the file)",
        "  target: 65,536",
        "  tune: 131,072 (command line)",
        "  dtype: (from the file)",
        f"  rules on ({len(on)}): {', '.join(on)}"]
    assert out[13:] == [
        "",
        "Settings for other/d.json",
        "  configuration file: pyproject.toml [tool.ropelaw.lint]",
        "  select: RL",
        "  extend-select: (none)",
        "  ignore: (none)",
        "  per-file-ignores for this file: (none)",
        "  exclude: build",
        "  excluded from directory scans: no",
        "  train: (from the file)",
        "  target: 32,768",
        "  tune: 131,072 (command line)",
        "  dtype: (from the file)",
        f"  rules on (7): {rl}"]
    code, out, _ = run(capsys, ["lint", "--show-settings", "--isolated", "other/d.json"])
    assert (code, out[1]) == (0, "  configuration file: none (--isolated)")
    assert run(capsys, ["lint", "--show-settings", "other/missing.json"]) == (
        2, [], "ropelaw: error: other/missing.json: no such file or directory\n")


@pytest.mark.parametrize("text,line", [
    ("[lint]\nselct = ['RL']\n", "ropelaw.toml: [lint] unknown key 'selct'; did you mean 'select'? (keys: select, "
                                 "extend-select, ignore, per-file-ignores, exclude, train, target, tune, dtype, "
                                 "output-format)"),
    ("[lint\n", "ropelaw.toml: malformed TOML: Expected ']' at the end of a table declaration (at line 1, column 6)"),
    ("[lint]\nselect = " + "[" * 200_000 + "]" * 200_000 + "\n", "ropelaw.toml: malformed TOML: "),
    ("[lint]\nselect = ['RL']\n\udcff\n", "ropelaw.toml: not UTF-8 text; not a ropelaw configuration"),
    ("[lint]\nselect = 'RL'\n", "ropelaw.toml: [lint] select must be a list of strings"),
    ("[lint]\nignore = ['RL999']\n", "ropelaw.toml: [lint] ignore: 'RL999' is not a rule code or prefix (e.g. RP101, "
                                     "RL, ALL; see `ropelaw rule --all`)"),
    ("[lint]\ntarget = 'lots'\n", "ropelaw.toml: [lint] target: not a number: 'lots'"),
    ("[lint]\ntarget = 4294967296\n", "ropelaw.toml: [lint] target 4,294,967,296 is beyond the longest context lint "
                                      "accepts (2^31 - 1 = 2,147,483,647 tokens, see `ropelaw rule RV013`)"),
    ("[lint]\ntrain = 8192\ntune = 4096\n", "ropelaw.toml: [lint] tune 4,096 must be >= train 8,192"),
    ("[lint]\ndtype = 'bf61'\n", "ropelaw.toml: [lint] dtype: unknown float format 'bf61'; choose one of fp32, tf32, "
                                 "bf16, fp16, fp8_e4m3, fp8_e5m2"),
    ("[lint]\nper-file-ignores = ['x']\n",
     "ropelaw.toml: [lint] per-file-ignores must be a table of pattern = [codes]"),
    ("select = ['RL']\n", "ropelaw.toml: unknown key 'select' (ropelaw reads [lint], [audit-code])"),
    ("[audit-code]\ntarget = 4096\n", "ropelaw.toml: [audit-code] unknown key 'target' (keys: select, extend-select, "
                                     "ignore, per-file-ignores, output-format)"),
    ("[lint]\noutput-format = 'concis'\n", "ropelaw.toml: [lint] output-format 'concis': choose one of full, concise, "
                                          "text, json, sarif, github; did you mean 'concise'?"),
    ("[lint]\noutput-format = 2\n", "ropelaw.toml: [lint] output-format 2: choose one of full, concise, text, json, "
                                   "sarif, github"),
])
def test_a_configuration_ropelaw_cannot_use_is_one_line_and_exit_2(capsys, tmp_path, monkeypatch, text, line):
    monkeypatch.chdir(tmp_path)
    shutil.copy(LLAMA, tmp_path / "config.json")
    (tmp_path / "ropelaw.toml").write_bytes(text.encode("utf-8", "surrogateescape"))
    code, out, err = run(capsys, ["lint", "config.json"])
    assert (code, out) == (2, [])
    assert err.startswith(f"ropelaw: error: {line}"), err
    assert err.count("\n") == 1


def test_pyproject_with_an_unknown_ropelaw_table(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    shutil.copy(LLAMA, tmp_path / "config.json")
    (tmp_path / "pyproject.toml").write_text("[tool.ropelaw.lnt]\nselect = ['RL']\n")
    assert run(capsys, ["lint", "config.json"]) == (2, [], "ropelaw: error: pyproject.toml: [tool.ropelaw] unknown key "
                                                           "'lnt' (ropelaw reads [tool.ropelaw.lint], "
                                                           "[tool.ropelaw.audit-code]); did you mean "
                                                           "'lint'?\n")


@pytest.mark.parametrize("pattern,path,want", [
    ("legacy/*.json", "legacy/b.json", True),
    ("legacy/*.json", "sub/legacy/b.json", False),  # relative to the configuration's folder
    ("*.json", "sub/legacy/b.json", True),  # no '/': the name
    ("build", "build/e.json", True),  # no '/': a folder on the way
    ("build", "rebuild/e.json", False),
    ("./build/", "build/e.json", True),
    ("sub/*", "sub/legacy/b.json", True),  # fnmatch: * crosses '/'
    ("config.json", "a/config.json.bak", False),
])
def test_patterns(pattern, path, want):
    assert matches(pattern, path) is want


def test_a_configuration_name_that_is_no_regular_file_is_refused(capsys, tmp_path, monkeypatch):
    import os

    monkeypatch.chdir(tmp_path)
    shutil.copy(LLAMA, tmp_path / "config.json")
    os.mkfifo(tmp_path / "ropelaw.toml")  # would block a reader: refused before opening
    assert run(capsys, ["lint", "config.json"]) == (
        2, [], "ropelaw: error: ropelaw.toml: is a FIFO (named pipe), not a regular file; refused\n")
    (tmp_path / "ropelaw.toml").unlink()
    (tmp_path / "ropelaw.toml").symlink_to("/dev/zero")
    assert run(capsys, ["lint", "config.json"]) == (
        2, [], "ropelaw: error: ropelaw.toml: is a character device, not a regular file; refused\n")
    (tmp_path / "ropelaw.toml").unlink()
    (tmp_path / "pyproject.toml").mkdir()  # a folder by that name is no configuration: passed over
    assert run(capsys, ["lint", "config.json", "-q"]) == (0, [], "")


SEED004 = ROOT / "tests" / "fixtures" / "static" / "seed004_llama_original.py"  # RP101, RP113, RP121, RP122


def test_audit_code_reads_its_own_table(capsys, tmp_path, monkeypatch):
    """[tool.ropelaw.audit-code]: select / ignore / per-file-ignores per file, the closest file winning; the
    lint table does not apply to it, nor the audit-code table to lint."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "models" / "old").mkdir(parents=True)
    shutil.copy(SEED004, tmp_path / "models" / "rope.py")
    shutil.copy(SEED004, tmp_path / "models" / "old" / "rope.py")
    shutil.copy(LLAMA, tmp_path / "config.json")
    (tmp_path / "pyproject.toml").write_text('[tool.ropelaw.lint]\nselect = ["RV"]\ntarget = "32k"\n\n'
                                             '[tool.ropelaw.audit-code]\nignore = ["RP113"]\n'
                                             'per-file-ignores = { "models/old/*" = ["RP12"] }\n')
    codes = lambda out: [line.split(" ")[1] for line in out]  # noqa: E731
    code, out, err = run(capsys, ["audit", "code", "models", "--output-format", "concise", "-q"])
    assert (code, err) == (1, "")
    assert [line.split(":")[0] for line in out] == ["models/old/rope.py", "models/rope.py", "models/rope.py",
                                                    "models/rope.py"]
    assert codes(out) == ["RP101", "RP121", "RP101", "RP122"]  # by path, then line (12, 20, 30)
    code, out, _ = run(capsys, ["audit", "code", "models", "--output-format", "concise", "-q", "--isolated"])
    assert codes(out) == ["RP121", "RP101", "RP113", "RP122"] * 2
    code, out, _ = run(capsys, ["audit", "code", "models/rope.py", "--select", "RP113", "-q", "--output-format",
                                "concise"])  # the command line's select replaces the file's set, ignore included
    assert codes(out) == ["RP113"]  # as ruff: a select on the command line starts the set anew, the file's ignore too
    assert run(capsys, ["lint", "config.json", "-q"]) == (0, [], "")  # lint: select RV, no RV finding
    code, out, _ = run(capsys, ["audit", "code", "--show-settings", "models/old/rope.py"])
    assert out[:6] == ["Settings for models/old/rope.py",
                       "  configuration file: pyproject.toml [tool.ropelaw.audit-code]",
                       "  select: (none)", "  extend-select: (none)", "  ignore: RP113",
                       "  per-file-ignores for this file: RP12"]
    assert code == 0 and len(out) == 7 and out[6].startswith("  rules on (")


def test_output_format_from_the_project(capsys, tmp_path, monkeypatch):
    """``output-format`` as ruff's: a run-wide setting of the configuration closest to the working folder (or
    --config's), used when the command line gives none; --isolated reads none."""
    monkeypatch.chdir(tmp_path)
    shutil.copy(LLAMA, tmp_path / "config.json")
    (tmp_path / "ropelaw.toml").write_text("[lint]\noutput-format = 'json'\n[audit-code]\noutput-format = 'sarif'\n")
    code, out, err = run(capsys, ["lint", "config.json", "--target", "32k"])
    assert (code, err) == (1, "") and json.loads("\n".join(out))["summary"]["errors"] == 1
    code, concise, _ = run(capsys, ["lint", "config.json", "--target", "32k", "--output-format", "concise"])
    code, isolated, _ = run(capsys, ["lint", "config.json", "--target", "32k", "--output-format", "full",
                                     "--isolated"])
    assert code == 1 and run(capsys, ["lint", "config.json", "--target", "32k", "--isolated"])[1] == isolated
    assert len(concise) == 3 and all(line.startswith("config.json:") for line in concise[:2])  # flag over the file
    (tmp_path / "rope.py").write_text("import torch\n")
    code, out, _ = run(capsys, ["audit", "code", "rope.py"])  # audit code reads its own table's
    assert code == 0 and json.loads("\n".join(out))["version"] == "2.1.0"
    code, out, _ = run(capsys, ["lint", "--show-settings", "config.json"])
    assert "  output-format: json" in out
