"""What axolotl, LLaMA-Factory and llm-foundry do to the model they name, read from a fake Hugging Face cache of a
real config.json (see tests/test_lint_resolve.py): LLaMA-Factory v1 (``model:``), its inference and export
configs (``configure_rope`` without a training length), llm-foundry's mcli files (``parameters:``) and
``config_overrides`` (merged into the model's dicts; what llm-foundry refuses is RV033). The frameworks' own code
on every example config is tests/differential/."""

from __future__ import annotations

import pytest

from ropelaw.cli import main
from ropelaw.lint.check import lint_config
from ropelaw.lint.loader import NotARopeConfig, load_config
from test_lint_resolve import COMMIT_A, LLAMA32, cache_repo, corpus_config, hub, write  # noqa: F401  (hub: fixture)


@pytest.fixture
def llama(hub):  # noqa: F811  (hub: the fixture imported above)
    """meta-llama/Llama-3.2-1B's real config.json in the cache: llama3 x32 over 8,192, max 131,072, head 64."""
    cache_repo(hub, "meta-llama/Llama-3.2-1B", {COMMIT_A: corpus_config(LLAMA32)}, {"main": COMMIT_A})
    return hub


def test_llamafactory_v1_names_its_model_with_model(llama, tmp_path):
    """A v1 config (llamafactory/v1: ``model:``) was skipped as "no RoPE settings found"; it fine-tunes that model
    at cutoff_len (default 2,048) in bf16 (v1's default), with the model's own RoPE (v1 applies no scaling)."""
    text = ("model: meta-llama/Llama-3.2-1B\nmodel_class: llm\npeft_config:\n  name: lora\n"
            "train_dataset: data/v1_sft_demo.yaml\nmicro_batch_size: 1\n")
    r = lint_config(load_config(write(tmp_path, "v1.yaml", text)))
    s = r.layers[0].spec
    assert (s.d, s.base, s.scheme, s.train_len, r.config.tune_len.raw) == (64, 500000.0, "llama3", 8192, 2048)
    assert r.config.model.key == "model" and r.config.dtype.raw == "bf16"
    # bf16 false: v1 loads the weights with dtype="auto" (core/model_engine.py), the model's torch_dtype
    r = lint_config(load_config(write(tmp_path, "v1b.yaml", text + "cutoff_len: 16384\nbf16: false\n")))
    assert r.config.tune_len.raw == 16384 and r.config.dtype.raw == "bfloat16"


@pytest.mark.parametrize("kind, extra, factor, tune", [
    ("train", "stage: sft\ndo_train: true\ncutoff_len: 32768\n", None,
     32768),  # within the model's 131,072 ... of 8,192 original
    ("train", "stage: sft\ncutoff_len: 20000\n", 3.0, 20000),
    ("inference", "template: llama3\ninfer_backend: huggingface\n", 2.0, None),
    ("export", "template: llama3\nexport_dir: out\ncutoff_len: 20000\n", 3.0, None),
    ("export", "template: llama3\nexport_dir: out\n", 2.0, None),
])
def test_llamafactory_configure_rope_by_run(llama, tmp_path, kind, extra, factor, tune):
    """configure_rope's factor: ceil(model_max_length / the model's original 8,192) for training (model_max_length =
    cutoff_len; an export on CPU only when cutoff_len is given), 2 when there is no model_max_length (inference)."""
    text = "model_name_or_path: meta-llama/Llama-3.2-1B\nrope_scaling: yarn\n" + extra
    r = lint_config(load_config(write(tmp_path, f"{kind}.yaml", text)))
    s = r.layers[0].spec
    if factor is None:  # 32,768 > 8,192: factor 4, yarn replaces llama3
        assert (s.scheme, s.param_dict()["factor"]) == ("yarn", 4.0)
    else:
        assert (s.scheme, s.param_dict()["factor"], s.param_dict()["original_max_position_embeddings"]) == (
            "yarn", factor, 8192)
    assert (r.config.tune_len.raw if r.config.tune_len is not None else None) == tune


FOUNDRY = """\
variables:
  max_seq_len: 8192
max_seq_len: ${variables.max_seq_len}
model:
  name: hf_causal_lm
  pretrained_model_name_or_path: meta-llama/Llama-3.2-1B
  pretrained: true
"""


def test_llmfoundry_config_overrides_update_the_models_dicts(llama, tmp_path):
    """llm-foundry's set_config_overrides updates a dict attribute in place: a rope_scaling override of one key keeps
    the model's other keys (it replaced the whole dict before)."""
    text = FOUNDRY + "  config_overrides:\n    rope_scaling:\n      factor: 16.0\n    rope_theta: 1000000.0\n"
    r = lint_config(load_config(write(tmp_path, "f.yaml", text)))
    s = r.layers[0].spec
    assert (s.scheme, s.base) == ("llama3", 1000000.0)
    assert s.param_dict() == {"factor": 16.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                              "original_max_position_embeddings": 8192}
    assert r.setup()["derived"]["params"]["factor"]["from"] == "model.config_overrides.rope_scaling.factor"


def test_llmfoundry_refuses_unknown_keys_in_a_dict_override(llama, tmp_path):
    """A key the model's rope_scaling does not hold: llm-foundry raises ("Config dict override got unknown keys"):
    RV033 at the override, and the model is read without it."""
    text = FOUNDRY + "  config_overrides:\n    rope_scaling:\n      rope_factor: 16.0\n"
    p = write(tmp_path, "f.yaml", text)
    r = lint_config(load_config(p))
    rv033 = [f for f in r.findings if f.code == "RV033"]
    assert [(f.severity, f.line, f.column) for f in rv033] == [("error", 10, 7)]  # at the key it refuses
    assert "Extra keys: ['rope_factor']" in rv033[0].message
    assert r.layers[0].spec.param_dict()["factor"] == 32.0
    assert main(["lint", p]) == 1


def test_llmfoundry_mcli_parameters_are_the_config(llama, tmp_path):
    """An mcli file's parameters: are the YAML its command reads (/mnt/config/parameters.yaml), interpolations
    resolved from there; a command that trains another file says which."""
    body = "".join("  " + line + "\n" for line in FOUNDRY.splitlines())
    mcli = ("integrations: []\ncommand: |\n  cd llm-foundry/scripts\n  composer train/train.py "
            "/mnt/config/parameters.yaml\nimage: x\nparameters:\n" + body)
    r = lint_config(load_config(write(tmp_path, "mcli.yaml", mcli)))
    assert (r.layers[0].spec.d, r.config.tune_len.raw) == (64, 8192)
    assert r.config.model.key == "parameters.model.pretrained_model_name_or_path"
    other = ("command: |\n  composer train/train.py train/yamls/pretrain/mpt-1b.yaml max_duration=10ba\n"
             "image: x\nparameters: {}\n")
    with pytest.raises(NotARopeConfig, match="runs llm-foundry on train/yamls/pretrain/mpt-1b.yaml"):
        load_config(write(tmp_path, "other.yaml", other))


def test_axolotl_refuses_a_top_level_rope_scaling(llama, tmp_path):
    """axolotl 0.18.0 raises on a top-level rope_scaling (it belongs under overrides_of_model_config): RV033 at the
    key, the model read without it; sequence_len absent is axolotl's default 512."""
    p = write(tmp_path, "ax.yaml", "base_model: meta-llama/Llama-3.2-1B\nrope_scaling:\n  type: linear\n  factor: 2\n"
                                   "datasets:\n  - path: x\n")
    r = lint_config(load_config(p))
    assert [(f.code, f.line) for f in r.findings if f.code == "RV033"] == [("RV033", 2)]
    assert r.layers[0].spec.scheme == "llama3" and r.config.tune_len.raw == 512
