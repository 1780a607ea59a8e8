"""``plan --apply`` on a Megatron-LM launch script (issue 34): each flag's value replaced where it is
written, a missing flag added on its own line only where bash reads that line as part of the command
(after a ``\\`` continuation, inside an array), comments, line endings and every other line kept; where
that cannot be done the refusal names the edit to make by hand. The expected scripts are written out
here; ``--rotary-base`` is written whole (Megatron-LM arguments.py: ``type=int``)."""

from __future__ import annotations

import contextlib
import io

import pytest

from ropelaw.cli import main
from ropelaw.errors import UsageError
from ropelaw.lint.dialects.megatron import parse_shell
from ropelaw.lint.writers import Edit, apply_edit
from ropelaw.lint.writers.edit import DELETE


def run(argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


CONTINUED = """#!/bin/bash
# pre-training run (a comment kept)
torchrun --nproc_per_node 8 pretrain_gpt.py \\
    --num-layers 2 \\
    --hidden-size 4096 \\
    --num-attention-heads 32 \\
    --seq-length 4096 \\
    --max-position-embeddings 4096 \\
    --position-embedding-type rope \\
    --rotary-seq-len-interpolation-factor 2 \\
    --load /ckpt \\
    --bf16
"""

ARRAY = """SEQ=4096
MAXPOS=4096
MODEL_ARGS=(
    --num-layers 2
    --hidden-size 4096
    --num-attention-heads 32
    --seq-length $SEQ
    --max-position-embeddings ${MAXPOS}  # the context
    --position-embedding-type rope
    --rotary-base "10000"
)
echo $MAXPOS
torchrun pretrain_gpt.py ${MODEL_ARGS[@]} --load /ckpt
"""


def test_a_continued_command_is_edited_in_place_and_new_flags_continue_it():
    e = Edit("megatron", "yarn", changes=[(("--rotary-seq-len-interpolation-factor",), DELETE),
                                          (("--position-embedding-type",), "yarn"), (("--rotary-scaling-factor",), 4.0),
                                          (("--yarn-original-max-position-embeddings",), 4096),
                                          (("--max-position-embeddings",), 16384)])
    got = apply_edit(CONTINUED.replace("\n", "\r\n"), "shell", e, "run.sh")
    assert got.text == CONTINUED.replace(
        "    --seq-length 4096 \\\n    --max-position-embeddings 4096 \\\n    --position-embedding-type rope \\\n"
        "    --rotary-seq-len-interpolation-factor 2 \\\n",
        "    --seq-length 4096 \\\n    --rotary-scaling-factor 4.0 \\\n    "
        "--yarn-original-max-position-embeddings 4096 \\\n"
        "    --max-position-embeddings 16384 \\\n    --position-embedding-type yarn \\\n").replace("\n", "\r\n")
    flags = parse_shell(got.text.replace("\r\n", "\n"))[0]
    assert flags["--rotary-scaling-factor"] == "4.0" and flags["--bf16"] is True and "--load" in flags


def test_a_variable_set_once_and_named_once_is_changed_where_it_is_set():
    e = Edit("megatron", "train", changes=[(("--seq-length",), 16384), (("--max-position-embeddings",), 16384),
                                           (("--rotary-base",), 1700000), (("--rotary-percent",), 0.5)])
    got = apply_edit(ARRAY, "shell", e, "run.sh").text
    assert got.startswith("SEQ=16384\nMAXPOS=4096\n")  # MAXPOS is named twice: the flag gets the value itself
    assert "    --max-position-embeddings 16384  # the context\n" in got and "echo $MAXPOS\n" in got
    assert '    --rotary-base "1700000"\n' in got and "    --rotary-percent 0.5\n" in got  # added inside the array
    assert got.count("\n") == ARRAY.count("\n") + 1


def test_a_flag_that_cannot_be_added_safely_is_refused_with_the_hand_edit():
    one_line = "python pretrain_gpt.py --num-attention-heads 32 --hidden-size 4096 --seq-length 4096\n"
    e = Edit("megatron", "base", changes=[(("--rotary-base",), 1700000), (("--seq-length",), 16384)])
    with pytest.raises(UsageError, match=r"would be a command of its own; edit the script by hand: set "
                                         r"--rotary-base 1700000; set --seq-length 16384"):
        apply_edit(one_line, "shell", e, "run.sh")
    e = Edit("megatron", "linear", changes=[(("--bf16",), DELETE)])
    with pytest.raises(UsageError, match=r"--bf16 ends the command continued above it \(line 12\)"):
        apply_edit(CONTINUED, "shell", e, "run.sh")


def test_plan_applies_an_option_to_a_launch_script(tmp_path):
    """The base the plan names (JSON) is what the script gets, whole, where the flag goes; lint reads it."""
    import json

    src = tmp_path / "run.sh"
    src.write_text(CONTINUED)
    code, text, err = run(["plan", str(src), "--target", "16k", "--format", "json"])
    base = next(o for o in json.loads(text)["options"] if o["name"] == "base")["edit"]["set"]["--rotary-base"]
    assert isinstance(base, int) and base == 350000  # Men et al.'s 2-significant-figure base for 16k at d=128
    out = tmp_path / "new.sh"
    code, text, err = run(["plan", str(src), "--target", "16k", "--apply", "base", "-o", str(out)])
    assert code == 0, err
    new = out.read_text()
    assert f"    --rotary-base {base} \\\n" in new and "--rotary-seq-len-interpolation-factor" not in new
    assert "# pre-training run (a comment kept)" in new and f"{base}.0" not in new
    code, lint_out, _ = run(["lint", str(out), "--target", "16k"])
    assert f"base {base:,} [--rotary-base]" in lint_out
