"""Megatron launch scripts read as bash reads them (issue 23): quoted strings across lines, here
documents, comments, continuations in linear time, bounded variable expansion, and a quote never
closed reported (bash fails on such a script), never dropped. Expected lines and columns are
those of the flags in the text written here (found by a text search)."""

from __future__ import annotations

import json

import pytest

from ropelaw.cli import main
from ropelaw.errors import UsageError
from ropelaw.lint.dialects.megatron import MAX_SHELL_VALUE, parse_shell

MODEL = ("--num-layers 2 --hidden-size 4096 --num-attention-heads 32 --seq-length 4096 "
         "--max-position-embeddings 4096 --position-embedding-type rope")


def where(text: str, flag: str) -> tuple[int, int]:
    n, line = next((i, ln) for i, ln in enumerate(text.split("\n"), 1) if flag in ln)
    return n, line.index(flag) + 1


def test_a_quoted_string_across_lines_is_one_value():
    text = f'#!/bin/bash\nMODEL_ARGS="\n  {MODEL}\n  --rotary-base 500000\n"\ntorchrun pretrain_gpt.py $MODEL_ARGS\n'
    flags, pos = parse_shell(text)
    assert flags["--rotary-base"] == "500000" and pos[("--rotary-base",)] == where(text, "--rotary-base")


def test_here_documents_and_comments_do_not_open_quotes():
    text = ("#!/bin/bash\ncat > notes.txt <<EOF\nit's the run's notes\nEOF\n# a comment ending in a backslash \\\n"
            f"torchrun pretrain_gpt.py {MODEL} --rotary-base 500000\n")
    flags, pos = parse_shell(text)
    assert flags["--rotary-base"] == "500000" and pos[("--rotary-base",)] == where(text, "--rotary-base")


@pytest.mark.parametrize("text, line", [
    (f'torchrun pretrain_gpt.py {MODEL} --data-path "/data/x \\\n  --rotary-base 10000\n', 1),
    (f"torchrun pretrain_gpt.py {MODEL}\nNAME='it\ntorchrun pretrain_gpt.py --rotary-base 10\n", 2),
])
def test_a_quote_never_closed_is_bad_input_not_a_dropped_line(tmp_path, capsys, text, line):
    with pytest.raises(UsageError, match=f"quote opened on line {line} is never closed"):
        parse_shell(text)
    p = tmp_path / "run.sh"
    p.write_text(text)
    assert main(["lint", str(p)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith(f"ropelaw: error: {p}: the ") and err.count("\n") == 1


def test_long_continuations_keep_positions(tmp_path):
    n = 3000
    text = f"torchrun pretrain_gpt.py {MODEL} \\\n" + "".join(f"  --flag{i} {i} \\\n" for i in range(n)) \
        + "  --rotary-base 10000\n"
    flags, pos = parse_shell(text)
    assert flags["--flag2999"] == "2999" and pos[("--rotary-base",)] == (n + 2, 3)
    assert pos[("--flag1500",)] == where(text, "--flag1500 ")


def test_a_10k_character_quoted_value_is_read(tmp_path):
    text = f'torchrun pretrain_gpt.py {MODEL} --data-path "{"a" * 10_000}" --rotary-base 10000\n'
    flags, _ = parse_shell(text)
    assert flags["--data-path"] == "a" * 10_000 and flags["--rotary-base"] == "10000"


def test_variable_expansion_is_bounded_in_bytes(tmp_path, capsys):
    lines = ["A=xxxxxxxx"] + [f"V{i}=${{{'A' if i == 0 else f'V{i - 1}'}}}${{{'A' if i == 0 else f'V{i - 1}'}}}"
                              for i in range(27)]
    text = "\n".join(lines) + f"\ntorchrun pretrain_gpt.py {MODEL} --rotary-base $V26\n"
    with pytest.raises(UsageError, match=f"expand to more than {MAX_SHELL_VALUE:,} characters"):
        parse_shell(text)
    ok = "\n".join(lines[:6]) + f"\ntorchrun pretrain_gpt.py {MODEL} --data-path $V4\n"  # 8 * 2^5 characters
    assert parse_shell(ok)[0]["--data-path"] == "x" * 256


def test_a_broken_script_in_a_directory_is_its_finding(tmp_path, capsys):
    (tmp_path / "bad.sh").write_text(f"torchrun pretrain_gpt.py {MODEL} --rotary-base \"1e4\n")
    (tmp_path / "c.json").write_text(json.dumps({"hidden_size": 4096, "num_attention_heads": 32,
                                                 "rope_theta": 10000, "max_position_embeddings": 4096}))
    assert main(["lint", str(tmp_path / "bad.sh"), str(tmp_path / "c.json")]) == 1
    out, _ = capsys.readouterr()
    assert f"{tmp_path / 'bad.sh'}:1:1: RE102 malformed-config" in out or "RE101" in out


# bash(1) Parameter Expansion: each word expanded by bash itself (the truth) and by ropelaw's reader
EXPANSIONS = ["${A:-${B:-x}}", "${Z:-${B:-x}}", "${Z:-${Y:-4096}}", "${E:-d}", "${E-d}", "${Z-${A}}",
              "pre${A}mid$B-post", "--seq-length=${Z:-${Y:-${A}}}", "${A:-${Z}}", "${Z:-a}${Y:-b}"]


@pytest.mark.parametrize("word", EXPANSIONS)
def test_nested_shell_defaults_expand_as_bash_expands_them(word):
    import shutil
    import subprocess

    from ropelaw.lint.dialects.megatron import substitute

    if shutil.which("bash") is None:
        pytest.skip("no bash on this machine")
    env = {"A": "1", "B": "7", "E": ""}
    script = "".join(f"{k}='{v}'; " for k, v in env.items()) + f'printf %s "{word}"'
    truth = subprocess.run(["bash", "--norc", "--noprofile", "-c", script], capture_output=True, text=True,
                           env={"PATH": "/usr/bin:/bin"}, check=True).stdout
    assert substitute(word, env) == truth


def test_an_unset_variable_without_a_default_is_unknown_and_deep_nesting_is_bounded():
    from ropelaw.lint.dialects.megatron import substitute

    assert substitute("${Z:-${Y}}", {}) is None and substitute("$Z", {}) is None
    assert substitute("${A:-" * 20 + "x" + "}" * 20, {}) is None  # nested deeper than 16: unknown, no recursion
    assert substitute("${A:-" * 10 + "x" + "}" * 10, {}) == "x"


def test_the_last_occurrence_of_a_repeated_flag_wins_as_argparse_keeps_it():
    """Megatron parses its flags with argparse (megatron/training/arguments.py: ``ArgumentParser(allow_abbrev=
    False)``, ``store`` actions): the last occurrence wins. Python's argparse with the same flags is the truth."""
    import argparse
    import shlex

    text = ("#!/bin/bash\nSEQ=2048\ntorchrun pretrain_gpt.py --seq-length $SEQ --rotary-base 10000 \\\n"
            "    --num-attention-heads 32 --use-rope-scaling \\\n    --seq-length=${LEN:-${SEQ2:-8192}} \\\n"
            "    --rotary-base 500000 --use-rope-scaling\n")
    flags, positions = parse_shell(text)
    parser = argparse.ArgumentParser(allow_abbrev=False)
    parser.add_argument("--seq-length", type=int)
    parser.add_argument("--rotary-base", type=int)
    parser.add_argument("--num-attention-heads", type=int)
    parser.add_argument("--use-rope-scaling", action="store_true")
    argv = shlex.split(text.split("pretrain_gpt.py", 1)[1].replace("$SEQ", "2048")
                       .replace("${LEN:-${SEQ2:-8192}}", "8192").replace("\\\n", " "))
    truth = parser.parse_args(argv)
    assert (int(flags["--seq-length"]), int(flags["--rotary-base"]), int(flags["--num-attention-heads"])) == \
        (truth.seq_length, truth.rotary_base, truth.num_attention_heads) == (8192, 500000, 32)
    assert flags["--use-rope-scaling"] is True and truth.use_rope_scaling is True
    assert positions[("--seq-length",)] == (5, 5) and positions[("--rotary-base",)] == (6, 5)
