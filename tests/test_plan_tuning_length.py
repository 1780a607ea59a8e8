"""An option whose cost is fine-tuning at the target changes the framework's training length too (issue 34),
where the file can state both lengths: YaRN's original length is the length the model was trained at (Peng
et al. 2309.00071), so Megatron-LM's ``--seq-length``, MaxText's ``max_target_length`` and litgpt's
``train.max_seq_length`` go to the target in a run from pre-trained weights, and lint reads the edited file
as trained at T and fine-tuned at the target (the lengths checked here are the fixture's own T and the
target asked for). PI states no original length in these frameworks: the run's length stays, and the note
says what to set and how to lint it then; so does YaRN in a run that starts the model from no weights."""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
from pathlib import Path

import pytest

from ropelaw.cli import main

T, TARGET = 4096, 16384
CORPUS = Path(os.environ.get("ROPELAW_CORPUS", Path(__file__).resolve().parents[2] / "shared" / "corpus"))


def run(argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


def lengths(path: Path, *flags: str) -> tuple[int, int | None]:
    """(training length, tuning length) as ``ropelaw lint`` reads the file."""
    code, out, err = run(["lint", str(path), "--format", "json", *flags])
    assert code in (0, 1), err
    d = json.loads(out)["configs"][0]["derived"]
    return d["train_len"]["value"], (d.get("tune_len") or {}).get("value")


MEGATRON = ("# Megatron-LM flags\n--num-layers: 2\n--hidden-size: 4096\n--num-attention-heads: 32\n"
            f"--seq-length: {T}\n--max-position-embeddings: {T}\n--position-embedding-type: rope\n--bf16: true\n")
LITGPT = ("model_config:\n  name: x\n  block_size: 4096\n  n_layer: 2\n  n_head: 32\n  n_embd: 4096\n"
          f"  rope_base: 10000\ninitial_checkpoint_dir: /ckpt\ntrain:\n  max_seq_length: {T}\nprecision: bf16-mixed\n")
MAXTEXT = ('base_config: "base.yml"\nload_parameters_path: "gs://bucket/llama2-7b/0/items"\nbase_emb_dim: 4096\n'
           f"base_num_query_heads: 32\nhead_dim: 128\nmax_target_length: {T}\nrope_max_timescale: 10000\n")


def maxtext_file(tmp_path: Path, text: str) -> Path:
    base = CORPUS / "frameworks" / "maxtext" / "base.yml"
    if not base.is_file():
        if os.environ.get("ROPELAW_REQUIRE_CORPUS"):
            pytest.fail(f"corpus required and missing: {base}")
        pytest.skip(f"MaxText's base.yml not in the corpus: {base}")
    (tmp_path / "configs").mkdir()
    shutil.copy(base, tmp_path / "configs" / "base.yml")
    path = tmp_path / "configs" / "ft.yml"
    path.write_text(text)
    return path


@pytest.mark.parametrize("name,key", [("megatron", f"--seq-length: {TARGET}"), ("litgpt", f"max_seq_length: {TARGET}"),
                                      ("maxtext", f"max_target_length: {TARGET}")])
def test_yarn_fine_tunes_at_the_target(tmp_path, name, key):
    src = maxtext_file(tmp_path, MAXTEXT) if name == "maxtext" else tmp_path / f"{name}.yaml"
    if name != "maxtext":
        src.write_text(MEGATRON if name == "megatron" else LITGPT)
    assert lengths(src) == (T, None)
    out = src.with_name("out" + src.suffix)
    code, text, err = run(["plan", str(src), "--target", "16k", "--apply", "yarn", "-o", str(out)])
    assert code == 0, err
    assert key in out.read_text() and f"{TARGET:,}: the option's cost is fine-tuning at the target" in text
    assert lengths(out) == (T, TARGET)


@pytest.mark.parametrize("name", ["megatron", "litgpt", "maxtext"])
def test_pi_keeps_the_run_length_and_says_what_to_set(tmp_path, name):
    src = maxtext_file(tmp_path, MAXTEXT) if name == "maxtext" else tmp_path / f"{name}.yaml"
    if name != "maxtext":
        src.write_text(MEGATRON if name == "megatron" else LITGPT)
    out = src.with_name("out" + src.suffix)
    code, text, err = run(["plan", str(src), "--target", "16k", "--apply", "linear", "-o", str(out)])
    assert code == 0, err
    assert f"stays {T:,}: set it to {TARGET:,} for the fine-tuning the option costs" in text
    assert f"lint it then with --train {T} --tune {TARGET}" in text
    assert lengths(out) == (T, None)
    assert lengths(out, "--train", str(T), "--tune", str(TARGET)) == (T, TARGET)


def test_yarn_in_a_run_from_no_weights_keeps_the_run_length(tmp_path):
    """A launch script running pretrain_gpt.py with no --load pre-trains with YaRN from the first step: the
    length stays, the note says to start from the weights; MaxText without load_parameters_path alike."""
    script = tmp_path / "run.sh"
    script.write_text("torchrun pretrain_gpt.py \\\n    --num-attention-heads 32 \\\n    --hidden-size 4096 \\\n"
                      f"    --seq-length {T} \\\n    --max-position-embeddings {T} \\\n    "
                      "--position-embedding-type rope\n")
    code, text, err = run(["plan", str(script), "--target", "16k", "--apply", "yarn", "--dry-run"])
    assert code == 0, err
    assert f"--seq-length stays {T:,}" in text and "the script runs pretrain_gpt.py from no weights" in text
    src = maxtext_file(tmp_path, MAXTEXT.replace('load_parameters_path: "gs://bucket/llama2-7b/0/items"\n', ""))
    code, text, err = run(["plan", str(src), "--target", "16k", "--apply", "yarn", "--dry-run"])
    assert code == 0, err
    assert f"max_target_length stays {T:,}" in text and "load the pre-trained weights (load_parameters_path)" in text
