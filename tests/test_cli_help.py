"""Errors and help as git and ruff give them: one prefix, "did you mean", a --help pointer,
install hints that name the extra finally needed, in README's install form.

Each case is the exact stderr line for an input a newcomer types (issue 15).
"""

from __future__ import annotations

import importlib.util

import pytest

from ropelaw import errors
from ropelaw.cli import main


def run(capsys, argv):
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("argv,line", [
    # a typo'd subcommand
    (["bund", "--d", "128"], "ropelaw: error: unknown command 'bund'; did you mean 'bound'? (see `ropelaw --help`)"),
    (["xyzzy"], "ropelaw: error: unknown command 'xyzzy' (see `ropelaw --help`)"),
    # missing arguments point to the command's --help; one prefix (not `ropelaw bound: error:`)
    (["bound"], "ropelaw: error: the following arguments are required: --d, --train, --base "
                "(see `ropelaw bound --help`)"),
    (["exact", "--length", "8"], "ropelaw: error: the following arguments are required: --dtype "
                                 "(see `ropelaw exact --help`)"),
    # schemes, dtypes, rule codes and names
    (["bound", "--d", "128", "--train", "4096", "--base", "1e6", "--scheme", "yarm", "--factor", "8"],
     "ropelaw: error: unknown scheme 'yarm'; known: default, linear, ntk, dynamic, qwen_dynamic, yarn, llama3, "
     "longrope, proportional, rerope, "
     "leaky_rerope; did you mean 'yarn'?"),
    (["exact", "--dtype", "bf61", "--length", "8"],
     "ropelaw: error: unknown float format 'bf61'; choose one of fp32, tf32, bf16, fp16, fp8_e4m3, fp8_e5m2 "
     "(aliases: bfloat16, float16, half, float32, e4m3, e5m2); did you mean 'bf16'?"),
    (["rule", "RP1011"], "ropelaw: error: unknown rule 'RP1011'; did you mean 'RP101'? (see `ropelaw rule --all`)"),
    (["rule", "positions-in-buffer-dtpye"],
     "ropelaw: error: unknown rule 'positions-in-buffer-dtpye'; did you mean 'positions-in-buffer-dtype'? "
     "(see `ropelaw rule --all`)"),
    # flags, subcommands and choices (issue 36): the parser the word was meant for, its --help
    (["lint", "--taget", "32k", "tests/configs/llama-2-7b.json"],
     "ropelaw: error: unknown flag --taget; did you mean '--target'? (see `ropelaw lint --help`)"),
    (["lint", "tests/configs/llama-2-7b.json", "--targt=32k"],
     "ropelaw: error: unknown flag --targt; did you mean '--target'? (see `ropelaw lint --help`)"),
    (["bound", "--d", "128", "--tran", "4k", "--base", "1e6"],  # not "--train is required"; no abbreviations
     "ropelaw: error: unknown flag --tran; did you mean '--train'? (see `ropelaw bound --help`)"),
    (["audit", "code", "--selec", "RP", "x.py"],
     "ropelaw: error: unknown flag --selec; did you mean '--select'? (see `ropelaw audit code --help`)"),
    (["--verison"], "ropelaw: error: unknown flag --verison; did you mean '--version'? (see `ropelaw --help`)"),
    (["audit", "cod", "x.py"],
     "ropelaw: error: argument WHAT: invalid choice: 'cod' (choose from 'code', 'module', 'hf', 'checkpoint'); "
     "did you mean 'code'? (see `ropelaw audit --help`)"),
    (["lint", "--format", "jsn", "x"],
     "ropelaw: error: argument --output-format/--format: invalid choice: 'jsn' (choose from 'full', 'concise', "
     "'text', 'json', 'sarif', 'github'); "
     "did you mean 'json'? (see `ropelaw lint --help`)"),
    (["lint", "--select", "RV099", "tests/configs/llama-2-7b.json"],
     "ropelaw: error: --select: 'RV099' is not a rule code or prefix (e.g. RP101, RL, ALL; see `ropelaw rule "
     "--all`); did you mean 'RV019'?"),
])
def test_error_lines(capsys, argv, line):
    code, out, err = run(capsys, argv)
    assert (code, out, err) == (2, "", line + "\n")


def test_every_argparse_error_has_the_one_prefix(capsys):
    code, _, err = run(capsys, ["bound", "--d", "128", "--train", "4096", "--base", "1e6", "--format", "yml"])
    assert code == 2 and err.startswith("ropelaw: error: argument --format: invalid choice: 'yml'")
    assert err.rstrip().endswith("(see `ropelaw bound --help`)") and err.count("\n") == 1


def test_install_hint_names_the_final_extra_once(monkeypatch):
    """`audit hf` without torch and transformers asks for [hf] at once, not [torch] and then [hf]."""
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name in ("torch", "transformers") else real(name, *a))
    with pytest.raises(errors.UsageError) as exc:
        errors.require("transformers", "hf", "`audit hf`", also=("torch",))
    assert str(exc.value) == "`audit hf` needs transformers and torch: pip install -e '.[hf]'"


def test_audit_hf_checks_both_before_running(capsys, monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "torch" else real(name, *a))
    code, out, err = run(capsys, ["audit", "hf", "llama"])
    assert (code, out, err) == (2, "", "ropelaw: error: `audit hf` needs torch: pip install -e '.[hf]'\n")


def test_eval_length_names_the_hf_extra_once(capsys, monkeypatch, tmp_path):
    # without torch and transformers the one hint names [hf] (not [torch] now, [hf] next time)
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name in ("torch", "transformers") else real(name, *a))
    text = tmp_path / "t.txt"
    text.write_text("hello")
    code, out, err = run(capsys, ["eval-length", str(tmp_path), "--text", str(text), "--lengths", "64"])
    assert (code, out, err) == (2, "", "ropelaw: error: ropelaw eval-length needs torch and transformers: "
                                       "pip install -e '.[hf]'\n")


def test_rule_all_columns_never_run_into_each_other(capsys):
    from ropelaw.findings import all_rules

    code, out, _ = run(capsys, ["rule", "--all"])
    rules = all_rules()
    lines = out.splitlines()
    assert code == 0 and len(lines) == len(rules)
    name_end = max(len(r.code) + 2 + len(r.name) for r in rules)  # the widest name, e.g. RL104's
    for rule, line in zip(rules, lines, strict=True):
        assert line.startswith(f"{rule.code}  {rule.name} ")
        assert line[name_end:name_end + 2] == "  " and line[name_end + 2:].startswith(rule.severity)
        assert line.endswith(rule.summary)


@pytest.mark.parametrize("flag,text,value", [
    ("--base", "1M", 10**6), ("--base", "500k", 500 * 10**3), ("--base", "1.5k", 1500),  # bases: decimal
    ("--base", "2e6", 2 * 10**6), ("--pretrain-base", "500k", 500 * 10**3),
    ("--train", "4k", 4 * 1024), ("--tune", "1M", 1024 * 1024),  # lengths: binary
])
def test_suffixes_for_lengths_and_bases(capsys, flag, text, value):
    import json

    argv = {"--base": "1e6", "--train": "4096"}
    argv[flag] = text
    args = ["bound", "--d", "128", *[x for kv in argv.items() for x in kv], "--format", "json"]
    code, out, _ = run(capsys, args)
    key = {"--base": "base", "--pretrain-base": "pretrain_base", "--train": "train_len", "--tune": "tune_len"}[flag]
    assert code == 0 and json.loads(out)[key] == value


def test_suffixes_are_documented_and_said_in_the_output(capsys):
    code, out, _ = run(capsys, ["bound", "--help"])
    flat = " ".join(out.split())
    assert "k = 1,024 and M = 1,048,576 tokens" in flat and "for bases k = 1,000 and M = 1,000,000" in flat
    code, out, _ = run(capsys, ["bound", "--d", "128", "--train", "4k", "--base", "1M"])
    assert "  training length       4,096           --train 4k = 4 x 1,024\n" in out
    assert "  base                  1,000,000       at tuning and inference (--base 1M = 1 x 1,000,000)\n" in out
    for bad in ("abck", "1e308k", "k", "infk"):
        code, _, err = run(capsys, ["bound", "--d", "128", "--train", "4k", "--base", bad])
        assert code == 2 and err.startswith("ropelaw: error: argument --base: ") and err.count("\n") == 1


def test_no_command_prints_the_help_and_exits_2(capsys):
    """As ruff and git: `ropelaw` alone is not a successful run (a script calling it with an empty variable)."""
    code, out, err = run(capsys, [])
    assert code == 2 and out.startswith("usage: ropelaw") and "lint" in out and err == ""


def test_a_rule_prefix_lists_the_rules_under_it(capsys):
    """`rule RV01` lists RV010-RV019 (it suggested only RV019); a whole code still explains that rule."""
    from ropelaw.findings import all_rules

    code, out, err = run(capsys, ["rule", "RV01"])
    expected = [r.code for r in all_rules() if r.code.startswith("RV01")]
    assert code == 0 and err == "" and [line.split()[0] for line in out.splitlines()] == expected
    assert len(expected) == 10
    code, out, _ = run(capsys, ["rule", "RV019"])
    assert code == 0 and out.startswith("RV019 runtime-ignores-key (info)")
