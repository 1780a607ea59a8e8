"""``plan --apply``: a reviewable edit (issue 34 (5)). The edit changes only the keys the option needs,
where they are: line endings, key order, indentation and comments kept; whole numbers stay whole; what is
printed is the diff and what lint says of the edited file; ``--dry-run`` writes nothing."""

from __future__ import annotations

import contextlib
import io
import json

import pytest

from ropelaw.cli import main
from ropelaw.lint.parse import parse_text
from ropelaw.lint.writers import Edit, apply_edit
from ropelaw.lint.writers.edit import DELETE, apply_to_mapping, leaf_changes


def run(argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


CRLF = ('{\r\n  "model_type": "llama",\r\n  "hidden_size": 4096,\r\n  "num_attention_heads": 32,\r\n'
        '  "max_position_embeddings": 4096,\r\n  "rope_scaling": {"type": "linear", "factor": 2.0},\r\n'
        '  "rope_theta": 10000\r\n}\r\n')


@pytest.mark.parametrize("changes", [
    [(("rope_theta",), 5e5)],
    [(("rope_scaling", "factor"), 4.0), (("rope_scaling", "type"), DELETE), (("rope_scaling", "rope_type"), "yarn")],
    [(("rope_scaling",), DELETE), (("new", "deep", "key"), 1)],
    [(("model_type",), DELETE), (("rope_theta",), DELETE)],
])
def test_json_edit_keeps_every_other_byte(changes):
    e = Edit("hf", "x", changes=list(changes))
    got = apply_edit(CRLF, "json", e, "c.json")
    assert parse_text(got.text, "json")[0] == apply_to_mapping(parse_text(CRLF, "json")[0], changes)
    assert "\n" not in got.text.replace("\r\n", "")  # every line still ends in CRLF
    kept = [ln.rstrip(",") for ln in CRLF.split("\r\n") if not any(str(p[0][0]) in ln for p in changes)]
    assert all(ln in got.text for ln in kept), got.text  # (a comma goes with a deleted last key)
    assert not any(n for n in got.notes if "re-dumped" in n)


def test_leaf_changes_are_the_smallest():
    data = {"rope_scaling": {"factor": 32, "rope_type": "llama3", "low_freq_factor": 1.0}, "m": 1}
    got = leaf_changes(data, [(("rope_scaling",), {"rope_type": "yarn", "factor": 32.0}), (("m",), 1.0),
                              (("x", "y"), 2)])
    assert got == [(("rope_scaling", "low_freq_factor"), DELETE), (("rope_scaling", "rope_type"), "yarn"),
                   (("x",), {"y": 2})]


def test_yaml_edit_keeps_comments_and_writes_blocks():
    text = "# top comment\nmodel:\n  # the base\n  rope_theta: 10000  # keep me\n  n_layers: 2\nseq_length: 4096\n"
    e = Edit("x", "y", changes=[(("model", "rope_theta"), 500000.0), (("model", "rope_scaling"), {"factor": 4.0}),
                                (("train", "len"), 8)])
    got = apply_edit(text, "yaml", e, "c.yaml").text
    assert got == ("# top comment\nmodel:\n  # the base\n  rope_theta: 500000  # keep me\n  n_layers: 2\n"
                   "  rope_scaling:\n    factor: 4.0\nseq_length: 4096\ntrain:\n  len: 8\n")


def test_yaml_that_cannot_be_edited_in_place_is_refused_not_dumped():
    from ropelaw.errors import UsageError

    text = "# a comment\nm: {a: 1, b: 2}\n"
    with pytest.raises(UsageError, match="would lose the file's comments"):
        apply_edit(text, "yaml", Edit("x", "y", changes=[(("m", "b"), 3)]), "c.yaml")


def test_apply_prints_only_the_diff_and_dry_run_writes_nothing(tmp_path):
    src = tmp_path / "c.json"
    src.write_bytes(CRLF.replace('"type": "linear", "factor": 2.0', '"type": "linear", "factor": 1.0').encode())
    code, out, err = run(["plan", str(src), "--target", "32k", "--apply", "base", "--dry-run"])
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].startswith("--apply base: rope_theta = 630000")
    assert sorted(ln for ln in lines
                  if ln.startswith(("-", "+")) and not ln.startswith(("---", "+++", "--apply"))) == sorted([
        '-  "max_position_embeddings": 4096,', '+  "max_position_embeddings": 32768,',
        '-  "rope_scaling": {"type": "linear", "factor": 1.0},', '-  "rope_theta": 10000', '+  "rope_theta": 630000'])
    assert "nothing written (--dry-run)" in out and "how and caveats" not in out
    assert "rounded up to 2 significant figures" in out or "Men et al.'s lower bound" in out
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.json"]
    out_file = tmp_path / "y.json"
    code, out, err = run(["plan", str(src), "--target", "32k", "--apply", "base", "-o", str(out_file), "--format",
                          "json"])
    doc = json.loads(out)
    assert code == 0 and doc["applied"]["written"] and doc["applied"]["lint"] == []
    assert out_file.read_bytes().count(b"\r\n") == src.read_bytes().count(b"\r\n") - 1  # one line fewer, CRLF kept
    assert json.loads(out_file.read_text())["rope_theta"] == 630000 and "630000.0" not in out_file.read_text()


def test_a_file_written_for_another_transformers_is_refused(tmp_path, monkeypatch):
    """Issue 34 (2): a transformers-5 file (rope_parameters.rope_theta 1e6) read under 4.57.1 is the class
    default 10,000; an edit from that reading would write 10,000 over what the file states."""
    monkeypatch.setenv("ROPELAW_HF_SEMANTICS", "4.57.1")
    src = tmp_path / "v5.json"
    src.write_text(json.dumps({"model_type": "qwen2", "hidden_size": 896, "num_attention_heads": 14,
                               "max_position_embeddings": 32768, "transformers_version": "5.0.0",
                               "rope_parameters": {"rope_type": "default", "rope_theta": 1000000.0}}, indent=2))
    code, out, err = run(["plan", str(src), "--target", "128k", "--apply", "yarn", "-o", str(tmp_path / "y.json")])
    assert code == 2 and err.count("\n") == 1
    assert "names transformers 5.0.0, but transformers 4.57.1" in err \
        and "base 10,000 where 5.23.0 reads 1,000,000" in err
    assert not (tmp_path / "y.json").exists()
    code, out, _ = run(["plan", str(src), "--target", "128k"])
    assert code == 0 and "note: no edit is written: the file names transformers 5.0.0" in out
    monkeypatch.setenv("ROPELAW_HF_SEMANTICS", "5.23.0")
    code, out, err = run(["plan", str(src), "--target", "128k", "--apply", "yarn", "--dry-run"])
    assert code == 0, err


def test_axolotl_yarn_sets_the_training_length(tmp_path):
    """Issue 34 (5): an option whose cost is fine-tuning at the target sets axolotl's sequence_len to it, and
    writes only the overrides that differ from the base model's config.json."""
    src = "tests/fixtures/frameworks/axolotl/tinker_sft.yaml"
    code, out, err = run(["plan", src, "--target", "128k", "--apply", "yarn", "--dry-run"])
    assert code == 0, err
    assert "+sequence_len: 131072" in out and "-sequence_len: 2048" in out
    diff = out.split("--- ")[1]
    # Qwen3-8B states 1e6 already: not written again at the top level; inside rope_scaling it must be (axolotl 0.18.0
    # sets the mapping after transformers 5 built rope_parameters, and takes it whole: without the base, no rotary)
    assert "\n+  rope_theta:" not in diff and "\n+    rope_theta: 1000000.0" in diff


MEGATRON = ("# Megatron-LM flags\n--num-layers: 2\n--hidden-size: 4096\n--num-attention-heads: 64\n"
            "--seq-length: 4096\n--max-position-embeddings: 4096\n--position-embedding-type: rope\n--bf16: true\n")


def test_a_raised_base_states_the_rl101_lint_reports(tmp_path):
    """Issue 34 (round trip): lint reads a flag file's --rotary-base as the pretraining base (a run from
    scratch: at the critical base, bound T = 4,096, Liu et al. 2310.05209), the plan's base option is for
    weights pre-trained at 10,000 and continued at 1.7e6: 2 pi 1.7e6^(46/64) with 46 = 2 ceil(32 log_1e4
    (4096 / 2 pi)) (written out here with mpmath). The plan states that RL101 and why, and ``ropelaw bound``
    with the command it names gives the plan's bound."""
    import mpmath

    src = tmp_path / "m.yaml"
    src.write_text(MEGATRON)
    d_extra = 2 * int(mpmath.ceil(32 * mpmath.log(mpmath.mpf(4096) / (2 * mpmath.pi)) / mpmath.log(10000)))
    assert d_extra == 46
    want = round(2 * mpmath.pi * mpmath.mpf(1.7e6) ** (mpmath.mpf(d_extra) / 64))
    code, out, err = run(["plan", str(src), "--target", "16k", "--format", "json"])
    assert code == 0, err
    base = next(o for o in json.loads(out)["options"] if o["name"] == "base")
    assert base["edit"]["set"] == {"--rotary-base": 1700000, "--max-position-embeddings": 16384}
    assert isinstance(base["edit"]["set"]["--rotary-base"], int)  # arguments.py: --rotary-base type=int
    why = base["edit"]["lint_stated"]["RL101"]
    assert "RL101 (bound 4,096)" in why \
        and f"the plan's bound {want:,} is for weights pre-trained at base 10,000" in why
    assert "--pretrained-checkpoint or --load" in why and round(base["bound"]) == want
    code, out, err = run(["plan", str(src), "--target", "16k", "--apply", "base", "-o", str(tmp_path / "o.yaml")])
    assert code == 0 and "RL101 error: target 16,384 tokens" in out and f"note: {why}" in out
    code, lint_out, _ = run(["lint", str(tmp_path / "o.yaml"), "--target", "16k"])
    assert code == 1 and "RL101" in lint_out and "extrapolation bound 4,096" in lint_out
    cmd = why.split("(ropelaw ")[1].split(")")[0].split()
    code, bound_out, _ = run(cmd)
    assert code == 0 and f"extrapolation bound   {want:,} tokens" in bound_out


def test_an_rl101_the_plan_cannot_explain_refuses_the_edit(tmp_path, monkeypatch):
    """An RL101 in the edited file that the pretraining base does not explain is an incomplete edit: refused."""
    from ropelaw import plan_check

    monkeypatch.setattr(plan_check, "lint_reading", lambda *a: None)
    src = tmp_path / "m.yaml"
    src.write_text(MEGATRON)
    code, out, err = run(["plan", str(src), "--target", "16k", "--apply", "base", "--dry-run"])
    assert code == 2 and "would fail `ropelaw lint` with RL101" in err
