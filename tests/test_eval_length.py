"""``ropelaw eval-length`` on a tiny Llama that the test builds, trains for a few steps and saves.

Checks the harness: loss per position equals the model's own loss, the bands, the predicted
bound of the config, methods patched through ropelaw.methods, and clear errors.
"""

from __future__ import annotations

import json
import math
import shutil

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from ropelaw.cli import main  # noqa: E402
from ropelaw.experiments import data  # noqa: E402
from ropelaw.experiments.eval_length import band_edges, eval_length  # noqa: E402

pytestmark = [pytest.mark.torch, pytest.mark.hf]

TRAIN_LEN = 64


@pytest.fixture(scope="module")
def tiny_llama(tmp_path_factory):
    """A byte-level Llama (d = 16, T = 64, base 1e4) trained 30 steps on the stdlib corpus."""
    torch.set_num_threads(1)
    cfg = transformers.LlamaConfig(vocab_size=256, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                                   num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=TRAIN_LEN,
                                   rope_theta=10000.0, tie_word_embeddings=False)
    torch.manual_seed(0)
    model = transformers.LlamaForCausalLM(cfg)
    corpus = data.load_corpus(max_bytes=100_000)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
    g = torch.Generator().manual_seed(0)
    for _ in range(30):
        w = data.random_windows(corpus.train, TRAIN_LEN, 8, g)
        loss = model(input_ids=w, labels=w).loss
        opt.zero_grad()
        loss.backward()
        opt.step()
    model.eval()
    root = tmp_path_factory.mktemp("tiny-llama")
    model.save_pretrained(root / "model", safe_serialization=True)
    text = root / "text.py"
    text.write_bytes(bytes(corpus.test[:20_000].tolist()))
    return root / "model", text, model


def run_json(capsys, *argv):
    code = main(["eval-length", *map(str, argv), "--format", "json"])
    out = capsys.readouterr()
    assert code == 0, out.err
    return json.loads(out.out)


def test_band_edges():
    assert band_edges(64, 4) == [0, 16, 32, 48, 64]
    assert band_edges(10, 3) == [0, 3, 6, 10]
    assert band_edges(2, 8) == [0, 1, 2]


def test_rows_bands_and_the_predicted_bound(tiny_llama, capsys):
    model_dir, text, _ = tiny_llama
    r = run_json(capsys, model_dir, "--text", text, "--lengths", "64,256", "--tokenizer", "bytes",
                 "--bands", "4", "--samples", "2")
    assert [(x["length"], x["band_start"], x["band_end"]) for x in r["rows"]] == \
        [(64, 0, 16), (64, 16, 32), (64, 32, 48), (64, 48, 64), (256, 0, 64), (256, 64, 128), (256, 128, 192),
         (256, 192, 256)]
    assert all(x["samples"] == 2 and 0 <= x["accuracy"] <= 1 and x["loss"] > 0 for x in r["rows"])
    # trained from scratch at the config's base: beta = beta_0, so Liu et al.'s bound is T_train
    assert r["predicted_bound"] == TRAIN_LEN and r["train_len"] == TRAIN_LEN
    assert r["tokens"] == 20_000


def test_loss_per_position_is_the_models_own_loss(tiny_llama):
    model_dir, text, model = tiny_llama
    rep = eval_length(model_dir, text.read_bytes(), [128], bands=1, samples=1, tokenizer="bytes")
    ids = torch.tensor(list(text.read_bytes()[:129]))
    with torch.no_grad():
        own = model(input_ids=ids.unsqueeze(0), labels=ids.unsqueeze(0)).loss.item()  # mean over 128 predictions
    assert rep.rows[0]["loss"] == pytest.approx(own, rel=1e-5)
    curve = rep.curves["128"]["loss"]
    assert sum(curve) / 128 == pytest.approx(own, rel=1e-4)


def test_rerope_with_a_covering_window_changes_nothing(tiny_llama, capsys):
    model_dir, text, _ = tiny_llama
    args = [model_dir, "--text", text, "--lengths", "128", "--tokenizer", "bytes", "--bands", "4", "--samples", "1"]
    plain = run_json(capsys, *args)
    wide = run_json(capsys, *args, "--method", "rerope", "--window", "512")
    narrow = run_json(capsys, *args, "--method", "rerope", "--window", "8")
    for a, b in zip(plain["rows"], wide["rows"], strict=True):
        assert a["loss"] == pytest.approx(b["loss"], abs=1e-4)
    assert any(abs(a["loss"] - b["loss"]) > 1e-4 for a, b in zip(plain["rows"], narrow["rows"], strict=True))
    assert narrow["predicted_bound"] is None and "unbounded" in narrow["prediction"]  # w <= T - 1: unbounded


def test_leaky_rerope_bound_goes_through_the_scheme_registry(tiny_llama, capsys):
    from ropelaw import RopeSpec
    from ropelaw.theory import extrapolation_bound

    model_dir, text, _ = tiny_llama
    r = run_json(capsys, model_dir, "--text", text, "--lengths", "128", "--tokenizer", "bytes", "--samples", "1",
                 "--method", "leaky_rerope", "--window", "8", "--k", "2")
    spec = RopeSpec(d=16, train_len=TRAIN_LEN, base=1e4, pretrain_base=1e4, scheme="leaky_rerope",
                    params={"window": 8, "k": 2})
    assert r["predicted_bound"] == pytest.approx(extrapolation_bound(spec).extrapolation_bound)
    assert math.isfinite(r["predicted_bound"]) and r["predicted_bound"] > TRAIN_LEN


def test_text_output_and_plot(tiny_llama, tmp_path, capsys):
    model_dir, text, _ = tiny_llama
    out = tmp_path / "bands.png"
    code = main(["eval-length", str(model_dir), "--text", str(text), "--lengths", "128", "--tokenizer", "bytes",
                 "--samples", "1", "--bands", "2", "-o", str(out)])
    printed = capsys.readouterr().out
    assert code == 0 and out.stat().st_size > 1000
    assert "predicted bound  64 tokens" in printed and "past the bound" in printed


def test_bad_inputs(tiny_llama, tmp_path, capsys):
    model_dir, text, _ = tiny_llama
    base = ["eval-length", str(model_dir), "--text", str(text), "--lengths", "64"]
    assert main(base) == 2  # no tokenizer files and --tokenizer auto
    assert "--tokenizer bytes" in capsys.readouterr().err
    assert main(base[:-1] + ["1M", "--tokenizer", "bytes"]) == 2
    assert "too short" in capsys.readouterr().err
    assert main(base + ["--method", "rerope"]) == 2
    assert "--window" in capsys.readouterr().err
    pickled = tmp_path / "pickled"
    pickled.mkdir()
    shutil.copy(model_dir / "config.json", pickled / "config.json")
    assert main(["eval-length", str(pickled), "--text", str(text), "--lengths", "64", "--tokenizer", "bytes"]) == 2
    assert "safetensors" in capsys.readouterr().err
