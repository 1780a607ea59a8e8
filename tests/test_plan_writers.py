"""``ropelaw plan --apply``: each dialect's writer is the inverse of its reader. The written copy is read
back through the loader and must hold the option's scheme and parameters, and lint clean (default
rules) for that option; the rest of the file is kept (comments in YAML / TOML, keys in JSON).
The Megatron, litgpt and v5 Hugging Face inputs are written here in those formats."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest

from ropelaw.cli import main
from ropelaw.lint.check import lint_config
from ropelaw.lint.loader import load_config
from ropelaw.plan import plan_config

LLAMA32 = "tests/configs/llama-3.2-1b.json"


def run(argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


def planned(path: str, target: int):
    return plan_config(load_config(path), target)


def apply(path: str, target: int, option: str, out: Path) -> tuple[int, str]:
    code, _, err = run(["plan", path, "--target", str(target), "--apply", option, "-o", str(out)])
    return code, err


def blocking(cfg, target=None) -> list[str]:
    """Findings of the default rule set that are not informational."""
    from ropelaw.commands.lint import default_select
    from ropelaw.findings import select_findings

    if target is not None:
        cfg = load_config(cfg.path, target=target)
    found = select_findings(lint_config(cfg).findings, default_select(), None)
    # RV032: the model's values are ropelaw's table's (no config.json on this machine), not something the edit did
    return [f"{f.code} {f.message}" for f in found if f.severity != "info" and f.code != "RV032"]


def same_option(spec, option) -> None:
    """The read-back spec states the option: scheme, its parameters, base, training length."""
    want = option.spec
    assert spec.scheme == want.scheme, (spec.scheme, want.scheme)
    for k, v in want.param_dict().items():
        assert spec.param(k) == pytest.approx(v, rel=0, abs=0), (k, spec.param(k), v)
    assert spec.d == want.d and spec.train_len == want.train_len


HF_OPTIONS = ("linear", "yarn", "llama3")


@pytest.mark.parametrize("option", HF_OPTIONS)
def test_hf_v4_round_trip(option, tmp_path):
    target = 262144
    p = planned(LLAMA32, target)
    out = tmp_path / "new.json"
    code, err = apply(LLAMA32, target, option, out)
    assert code == 0, err
    cfg = load_config(str(out))
    spec = cfg.spec(0)
    same_option(spec, p.option(option))
    assert spec.base == 500000.0
    lint_target = target if option == "dynamic" else None  # dynamic: max_position_embeddings is the switch point
    found = blocking(cfg, lint_target)
    if p.option(option).men_supported < target:  # the plan states Men et al.'s shortfall: RL103 may say it too
        found = [f for f in found if not f.startswith("RL103")]
    assert found == []
    from ropelaw.theory import extrapolation_bound

    assert extrapolation_bound(spec).extrapolation_bound == p.option(option).bound >= target
    original = json.loads(Path(LLAMA32).read_text())
    written = json.loads(out.read_text())
    assert list(written) == list(original)  # the key order kept, no key lost
    for k in original:
        if k not in ("rope_scaling", "max_position_embeddings", "rope_theta"):
            assert written[k] == original[k], k


@pytest.mark.parametrize("option", ("base", "ntk", "train"))
def test_hf_base_options_round_trip(option, tmp_path):
    target = 262144
    p = planned(LLAMA32, target)
    out = tmp_path / "new.json"
    code, err = apply(LLAMA32, target, option, out)
    assert code == 0, err
    cfg = load_config(str(out))
    spec = cfg.spec(0)
    o = p.option(option)
    if option == "train":
        assert spec.scheme == "llama3" and cfg.target.number() == target
    else:
        want = o.parameters["base"] if option == "base" else o.extra["scaled_base"]
        assert spec.scheme == "default" and spec.base == want
        assert cfg.max_pos.number() == target
    assert blocking(cfg) == []


def test_hf_v5_rope_parameters_form(tmp_path, monkeypatch):
    # a transformers 5 file (rope_parameters), read as 5.23.0 runs it: 4.57.1 has no rope_parameters and would
    # run LlamaConfig's defaults (RV019; tests/test_lint_dialects.py)
    monkeypatch.setenv("ROPELAW_HF_SEMANTICS", "5.23.0")
    data = json.loads(Path(LLAMA32).read_text())
    data.pop("rope_scaling"), data.pop("rope_theta")
    data["rope_parameters"] = {"rope_type": "llama3", "factor": 32.0, "high_freq_factor": 4.0, "low_freq_factor": 1.0,
                               "original_max_position_embeddings": 8192, "rope_theta": 500000.0}
    data["transformers_version"] = "5.0.0"
    src = tmp_path / "v5.json"
    src.write_text(json.dumps(data, indent=2))
    out = tmp_path / "new.json"
    code, err = apply(str(src), 262144, "yarn", out)
    assert code == 0, err
    written = json.loads(out.read_text())
    assert "rope_scaling" not in written
    assert written["rope_parameters"] == {"rope_type": "yarn", "factor": 32.0, "original_max_position_embeddings": 8192,
                                          "rope_theta": 500000.0}
    spec = load_config(str(out)).spec(0)
    assert spec.scheme == "yarn" and spec.param("factor") == 32.0 and spec.base == 500000.0


def test_hf_dynamic_never_lowers_max_position_embeddings(tmp_path):
    """Issue 34 (5): transformers' dynamic NTK switches at max_position_embeddings; Llama 3.2 advertises
    131,072 but trained at 8,192, so stating the plan's switch point would lower the advertised context:
    refused. Llama 2 (max_position_embeddings = its training length) gets the block and nothing else."""
    code, err = apply(LLAMA32, 262144, "dynamic", tmp_path / "x.json")
    assert code == 2 and "does not lower max_position_embeddings" in err and not (tmp_path / "x.json").exists()
    src, target = "tests/configs/llama-2-7b.json", 32768
    p = planned(src, target)
    out = tmp_path / "d.json"
    code, err = apply(src, target, "dynamic", out)
    assert code == 0, err
    original, written = json.loads(Path(src).read_text()), json.loads(out.read_text())
    assert written["max_position_embeddings"] == original["max_position_embeddings"] == 4096
    assert {k for k in written if written[k] != original.get(k)} == {"rope_scaling"}
    cfg = load_config(str(out))
    same_option(cfg.spec(0), p.option("dynamic"))


def test_hf_refuses_rerope(tmp_path):
    code, err = apply(LLAMA32, 262144, "rerope", tmp_path / "x.json")
    assert code == 2 and "patch_model" in err and err.count("\n") == 1
    assert not (tmp_path / "x.json").exists()


MEGATRON = """\
# Megatron-LM flags, written here in the layout of its functional tests
MODEL_ARGS:
  --num-layers: 32
  --hidden-size: 4096
  --num-attention-heads: 32
  --seq-length: 4096   # the training length
  --max-position-embeddings: 4096
  --position-embedding-type: rope
  --rotary-base: 10000
  --bf16: true
"""


@pytest.mark.parametrize("option", ("linear", "yarn", "base", "ntk", "train"))
def test_megatron_round_trip(option, tmp_path):
    src = tmp_path / "flags.yaml"
    src.write_text(MEGATRON)
    target = 131072
    p = planned(str(src), target)
    out = tmp_path / "new.yaml"
    code, err = apply(str(src), target, option, out)
    assert code == 0, err
    text = out.read_text()
    assert text.startswith("# Megatron-LM flags, written here") and "# the training length" in text
    cfg = load_config(str(out))
    spec = cfg.spec(0)
    o = p.option(option)
    if option in ("linear", "yarn"):
        same_option(spec, o)
        assert blocking(cfg) == []
    elif option == "train":
        assert spec.train_len == target
    else:
        assert spec.base == (o.parameters["base"] if option == "base" else o.extra["scaled_base"])
    assert cfg.target.number() == target


def test_megatron_refuses_what_it_cannot_state(tmp_path):
    src = tmp_path / "flags.yaml"
    src.write_text(MEGATRON)
    for option, needle in (("dynamic", "no flag"), ("llama3", "fixes the Llama 3.1 bands"), ("rerope", "no flag")):
        code, err = apply(str(src), 131072, option, tmp_path / "x.yaml")
        assert code == 2 and needle in err, (option, err)


LITGPT = """\
# litgpt pretrain config with a model_config, written here (TinyLlama-like values)
model_config:
  name: tiny
  block_size: 2048
  n_layer: 22
  n_head: 32
  n_embd: 2048
  rotary_percentage: 1.0
  rope_base: 10000
train:
  max_seq_length: 2048
precision: bf16-mixed
"""


@pytest.mark.parametrize("option", ("yarn", "llama3", "linear", "base", "train"))
def test_litgpt_round_trip(option, tmp_path):
    src = tmp_path / "pretrain.yaml"
    src.write_text(LITGPT)
    target = 32768
    p = planned(str(src), target)
    out = tmp_path / "new.yaml"
    code, err = apply(str(src), target, option, out)
    assert code == 0, err
    assert out.read_text().startswith("# litgpt pretrain config")
    cfg = load_config(str(out))
    spec = cfg.spec(0)
    o = p.option(option)
    if option in ("yarn", "llama3", "linear"):
        same_option(spec, o)
        assert blocking(cfg) == []
    elif option == "base":
        assert spec.base == o.parameters["base"] and spec.train_len == 2048
    else:
        assert spec.train_len == target
    assert cfg.target.number() == target


def test_litgpt_model_name_refused(tmp_path):
    code, err = apply("tests/fixtures/frameworks/examples/litgpt_tinyllama.yaml", 32768, "yarn", tmp_path / "x.yaml")
    assert code == 2 and "model_config" in err


def test_torchtitan_train_and_refusals(tmp_path):
    src = "tests/fixtures/frameworks/examples/torchtitan_llama3_8b.toml"
    out = tmp_path / "new.toml"
    code, err = apply(src, 65536, "train", out)
    assert code == 0, err
    text = out.read_text()
    assert text.startswith("# torchtitan") and "seq_len = 65536" in text
    cfg = load_config(str(out))
    assert cfg.train_len.number() == 65536 and cfg.spec(0).scheme == "llama3"
    code, err = apply(src, 65536, "yarn", tmp_path / "y.toml")  # pre-trained with its bands: only 'train'
    assert code == 2 and "no such option" in err
    from ropelaw import RopeSpec
    from ropelaw.lint.parse import read_document
    from ropelaw.lint.writers import edit_for
    from ropelaw.plan import plan

    yarn = plan(RopeSpec(d=128, train_len=8192, base=5e5, pretrain_base=5e5), 65536).option("yarn")
    e = edit_for("torchtitan", read_document(src)[0], cfg, yarn, 65536)
    assert e.refused and "model flavor" in e.refused


def test_axolotl_round_trip(tmp_path):
    src = "tests/fixtures/frameworks/axolotl/tinker_sft.yaml"
    target = 131072
    p = planned(src, target)
    out = tmp_path / "new.yaml"
    code, err = apply(src, target, "yarn", out)
    assert code == 0, err
    assert out.read_text().startswith("# SFT: KIMI-K2")
    cfg = load_config(str(out))
    spec = cfg.spec(0)
    same_option(spec, p.option("yarn"))
    assert blocking(cfg) == []


def test_rv010_follows_transformers_float_division(tmp_path):
    """transformers warns when ``max_position_embeddings / original != factor`` in float64
    (modeling_rope_utils 4.57.1 / 5.23.0, ``implicit_factor``): 3.2 = 131,072 / 40,960 is consistent."""
    assert 131072 / 40960 == 3.2
    data = json.loads(Path(LLAMA32).read_text())
    data["max_position_embeddings"] = 131072
    data["rope_scaling"] = {"rope_type": "yarn", "factor": 3.2, "original_max_position_embeddings": 40960}
    path = tmp_path / "c.json"
    path.write_text(json.dumps(data))
    assert not [f for f in lint_config(load_config(str(path))).findings if f.code == "RV010"]
    data["rope_scaling"]["factor"] = 3.0
    path.write_text(json.dumps(data))
    assert [f for f in lint_config(load_config(str(path))).findings if f.code == "RV010"]


LLAMAFACTORY = """\
# written here in the format of LLaMA-Factory's examples/train_full/*.yaml
model_name_or_path: meta-llama/Llama-2-7b-hf
stage: sft
do_train: true
finetuning_type: full
template: llama2
cutoff_len: 4096
bf16: true
"""


@pytest.mark.parametrize("option", ("yarn", "linear"))
def test_llamafactory_round_trip(option, tmp_path):
    """LLaMA-Factory's configure_rope sets factor ceil(cutoff_len / 4,096) = 32: the plan's s = L/T."""
    src = tmp_path / "sft.yaml"
    src.write_text(LLAMAFACTORY)
    target = 131072
    p = planned(str(src), target)
    out = tmp_path / "new.yaml"
    code, err = apply(str(src), target, option, out)
    assert code == 0, err
    assert out.read_text().startswith("# written here in the format of LLaMA-Factory")
    cfg = load_config(str(out))
    same_option(cfg.spec(0), p.option(option))
    assert cfg.spec(0).tune_len == target and blocking(cfg) == []


def test_llamafactory_refuses_other_factors(tmp_path):
    src = tmp_path / "sft.yaml"
    src.write_text(LLAMAFACTORY)
    code, err = apply(str(src), 131072, "llama3", tmp_path / "x.yaml")
    assert code == 2 and "ceil(cutoff_len / 4,096) = 32" in err and "factor is 28" in err


MAXTEXT = """\
# MaxText run config, written here with base.yml keys
base_config: base.yml
run_name: extend
max_target_length: 4096
head_dim: 128
rope_max_timescale: 10000
load_parameters_path: gs://example/ckpt/items
dtype: bfloat16
"""


@pytest.mark.parametrize("option", ("yarn", "linear", "base", "ntk", "train"))
def test_maxtext_round_trip(option, tmp_path):
    src = tmp_path / "run.yml"
    src.write_text(MAXTEXT)
    target = 131072
    p = planned(str(src), target)
    out = tmp_path / "new.yml"
    code, err = apply(str(src), target, option, out)
    assert code == 0, err
    assert out.read_text().startswith("# MaxText run config, written here")
    cfg = load_config(str(out))
    spec, o = cfg.spec(0), p.option(option)
    if option in ("yarn", "linear"):
        same_option(spec, o)
        assert blocking(cfg, target) == []
    elif option == "train":
        assert spec.train_len == target and spec.base == o.spec.base
    else:
        assert spec.base == (o.parameters["base"] if option == "base" else o.extra["scaled_base"])
    if option == "yarn":
        assert cfg.target.number() == target


def test_maxtext_model_file_needs_override(tmp_path):
    src = tmp_path / "run.yml"
    src.write_text(MAXTEXT + "model_name: llama2-7b\n")
    p = planned(str(src), 131072)
    from ropelaw.lint.parse import read_document
    from ropelaw.lint.writers import edit_for

    e = edit_for("maxtext", read_document(str(src))[0], load_config(str(src)), p.option("yarn"), 131072)
    assert e.refused and "override_model_config" in e.refused
