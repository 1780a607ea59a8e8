"""Training-framework configs: each dialect reads what the framework trains with.

Specifications: a config as the framework writes it, and the exact setup (rotary dims, base,
training length, target, scheme with its parameters, dtype, provenance) and findings. Fixtures:
inline documents written the way each framework's own examples are; the configs shipped in
torchtune's and axolotl's wheels (tests/fixtures/frameworks, with `package==version path`);
and, when present, the corpus of real configs fetched from the frameworks' repositories
($ROPELAW_CORPUS/frameworks, manifest tests/fixtures/frameworks/frameworks_corpus.json).
"""

from __future__ import annotations

import json
import math
import os
import pathlib

import pytest

from ropelaw.cli import main
from ropelaw.lint.check import lint_config
from ropelaw.lint.dialects import pick
from ropelaw.lint.loader import NotARopeConfig, load_config

ROOT = pathlib.Path(__file__).resolve().parents[1]
FIX = ROOT / "tests" / "fixtures" / "frameworks"
HF = ROOT / "tests" / "configs"
# the presets the package reads (the installed copy when CI runs these tests against the wheel)
PRESETS = pathlib.Path(__import__("ropelaw.data", fromlist=["FOLDER"]).FOLDER)


def lint(tmp_path, name: str, text: str, **kw):
    p = tmp_path / name
    p.write_text(text)
    return lint_config(load_config(str(p), **kw))


def setup(r) -> tuple:
    a = r.layers[0]
    s = a.spec
    return s.d, s.base, s.train_len, a.length, s.scheme


def found(r) -> list[tuple]:
    return sorted((f.code, f.severity, f.line, f.column) for f in r.findings)


# ------------------------------------------------------------------------------------ torchtitan
TITAN = """[job]
description = "Llama 3 8B training"

[model]
name = "llama3"
flavor = "8B"

[training]
local_batch_size = 1
seq_len = 8192
"""


def test_torchtitan_flavor_and_seq_len(tmp_path):
    """llama3/8B (torchtitan 0.2.2 llama3_args): dim 4096 / 32 heads, theta 5e5, and the Llama 3.1
    bands precompute_freqs_cis always applies; [training] seq_len is the training length and
    the model's max_seq_len (update_from_config); mixed_precision_param defaults to bfloat16."""
    r = lint(tmp_path, "llama3_8b.toml", TITAN)
    assert setup(r) == (128, 500000.0, 8192, 8192, "llama3")
    assert r.layers[0].spec.param_dict() == {"factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                                             "original_max_position_embeddings": 8192}
    d = r.setup()["derived"]
    assert d["base"] == {"value": 500000, "from": "rope_theta of torchtitan llama3/8B", "line": None, "column": None}
    assert d["train_len"]["from"] == "training.seq_len" and d["train_len"]["line"] == 10
    assert d["dtype"]["value"] == "bfloat16" and d["dtype"]["from"] == ("torchtitan default "
                                                                        "training.mixed_precision_param")
    assert found(r) == [("RP201", "info", 1, 1)]


def test_torchtitan_trains_with_the_bands_from_step_0(tmp_path):
    """precompute_freqs_cis applies the bands in every run, so a run that starts from no weights is
    the model's pre-training with them (RopeSpec.pretrained_with_scheme): critical dimension 64 and
    bound 11,971, pair 32's trained period (derived independently in tests/test_pretrained_with_scheme.py),
    not 70 and 65,750 as for bands added to a plain-RoPE model. Existing weights ([checkpoint] enable
    with initial_load_path or initial_load_in_hf, as CheckpointManager.load reads them) turn it off."""
    r = lint(tmp_path, "llama3_8b.toml", TITAN)
    s, b = r.layers[0].spec, r.layers[0].bound
    assert s.pretrained_with_scheme \
        and (b.critical_dimension, b.critical_pair, round(b.extrapolation_bound)) == (64, 32, 11971)
    assert b.critical_base is None
    d = r.setup()["derived"]["pretrained_with_scheme"]
    assert d["value"] is True and "no [checkpoint] initial weights" in d["from"]
    assert "llama3 from step 0" in r.ok_line() and "bound 11,971" in r.ok_line()
    for extra in ('enable = true\ninitial_load_path = "/ckpt/step-1000"\n',
                  "enable = true\ninitial_load_in_hf = true\n"):
        loaded = lint(tmp_path, "from_weights.toml", TITAN + "\n[checkpoint]\n" + extra)
        s, b = loaded.layers[0].spec, loaded.layers[0].bound
        assert not s.pretrained_with_scheme and (b.critical_dimension, round(b.extrapolation_bound)) == (70, 65750)
        assert any("starts from existing weights" in n for n in loaded.config.notes)
    ignored = lint(tmp_path, "disabled.toml", TITAN + '\n[checkpoint]\nenable = false\ninitial_load_path = "/ckpt"\n')
    assert ignored.layers[0].spec.pretrained_with_scheme  # torchtitan loads nothing when checkpointing is off


def test_torchtitan_deepseek_yarn_only_past_original(tmp_path):
    """deepseek_v3 (MLA, qk_rope_head_dim 64): YaRN (factor 40, betas 32/1, original 4,096) only when
    seq_len > original_seq_len, as precompute_freqs_cis does."""
    text = TITAN.replace('"llama3"', '"deepseek_v3"').replace('"8B"', '"16B"')
    short = lint(tmp_path, "a.toml", text.replace("8192", "4096"))
    assert setup(short) == (64, 10000.0, 4096, 4096, "default")
    long = lint(tmp_path, "b.toml", text)
    assert setup(long) == (64, 10000.0, 8192, 8192, "yarn")
    # Attention: softmax_scale *= (0.1 mscale ln 40 + 1)^2 with the 16B flavor's mscale 0.7
    assert long.layers[0].spec.param_dict() == {"factor": 40, "beta_fast": 32, "beta_slow": 1,
                                                "original_max_position_embeddings": 4096,
                                                "attention_factor": 0.1 * 0.7 * math.log(40) + 1}
    assert long.layers[0].scheme_result.attention_factor == pytest.approx(1.2582215617879755, rel=1e-15)
    assert long.layers[0].spec.pretrained_with_scheme and not short.layers[0].spec.pretrained_with_scheme


LLAMA4 = TITAN.replace('"llama3"', '"llama4"').replace("seq_len = 8192", "seq_len = 65536")


@pytest.mark.parametrize("flavor", ["debugmodel", "17bx16e", "debugmodel_irope", "17bx16e_irope"])
def test_torchtitan_llama4_scaling_args_read_with_their_defaults(tmp_path, flavor):
    """torchtitan 0.2.2's llama4 flavors set rope_scaling_args=RoPEScalingArgs(), whose fields are the
    defaults of models/llama4/model/args.py: scaling_factor 16, low 1, high 1, original 8,192 (the
    preset table stored the bare call; the dialect failed with "malformed ... KeyError: 'scaling_factor'",
    exit 2). The _irope flavors apply no rotary on layers 0, 4, 8, ... (every_n_layers_nope 4) and their
    rotary layers attend within fixed blocks (fixed_attn_block_size: 8,192, debugmodel_irope 256).
    tests/differential/test_diff_torchtitan.py checks all of it against torchtitan's own code."""
    r = lint(tmp_path, "l4.toml", LLAMA4.replace('"8B"', f'"{flavor}"'))
    assert r.layers[0].spec.param_dict() == {"factor": 16.0, "low_freq_factor": 1.0, "high_freq_factor": 1.0,
                                             "original_max_position_embeddings": 8192}
    assert [f.code for f in r.findings if f.severity != "info"] == ["RV011"]  # low = high: no smoothing band
    said = next(f.message for f in r.findings if f.code == "RV011")  # torchtitan's runtime, not transformers
    assert "torchtitan runs it: precompute_freqs_cis" in said and "transformers" not in said
    groups = [(g.label, g.chunk, g.group.rope) for g in r.layers]
    n, chunk = (6, 256) if flavor.startswith("debug") else (48, 8192)
    if flavor.endswith("_irope"):
        nope = tuple(range(0, n, 4))
        assert groups == [(f"chunked {chunk:,} ({n - len(nope)} layers)", chunk, True), (f"NoPE ({len(nope)} layers)",
                                                                                       None, False)]
        assert r.layers[1].group.indices == nope and r.layers[0].length == chunk
    else:
        assert groups == [("all layers", None, True)]
    assert main(["lint", str(tmp_path / "l4.toml")]) == 1


def test_torchtitan_gpt_oss(tmp_path):
    """gpt_oss/20b (torchtitan 0.2.2 GptOssModelArgs): head_dim 64, theta 150,000, YaRN x32 from 4,096 at every
    length (rope_factor > 1), betas 32 / 1 unrounded, attention factor 0.1 ln 32 + 1; even layers attend a
    window of 128. Before: "torchtitan model 'gpt_oss' has no RoPE preset", skipped."""
    r = lint(tmp_path, "g.toml", TITAN.replace('"llama3"', '"gpt_oss"').replace('"8B"', '"20b"'))
    assert setup(r) == (64, 150000.0, 8192, 8192, "yarn")
    assert r.layers[0].spec.param_dict() == {"factor": 32, "beta_fast": 32.0, "beta_slow": 1.0,
                                             "original_max_position_embeddings": 4096, "truncate": False}
    assert r.layers[0].scheme_result.attention_factor == pytest.approx(0.1 * math.log(32) + 1, rel=1e-15)
    assert [(g.label, g.window) for g in r.layers] == [("global layers", None), ("local layers", 128)]


def test_torchtitan_unknown_flavor_is_skipped(tmp_path):
    with pytest.raises(NotARopeConfig, match="has no flavor '9B'"):
        lint(tmp_path, "x.toml", TITAN.replace('"8B"', '"9B"'))
    with pytest.raises(NotARopeConfig, match="torchtitan model 'flux' has no RoPE preset"):
        lint(tmp_path, "x.toml", TITAN.replace('"llama3"', '"flux"'))


# ------------------------------------------------------------------------------------------ litgpt
LITGPT = """model_name: tiny-llama-1.1b
model_config:
out_dir: out/pretrain/tiny-llama
precision: bf16-mixed
train:
  global_batch_size: 512
  max_seq_length: 2048
"""


def test_litgpt_named_config(tmp_path):
    """tiny-llama-1.1b (litgpt 0.5.13): head_size 64, rope_base 10000, rotary_percentage 1.0,
    block_size 2048; train.max_seq_length is the training length."""
    r = lint(tmp_path, "tinyllama.yaml", LITGPT)
    assert setup(r) == (64, 10000.0, 2048, 2048, "default")
    d = r.setup()["derived"]
    assert d["base"] == {"value": 10000, "from": "rope_base of litgpt Config 'tiny-llama-1.1b'", "line": None,
                         "column": None}
    assert d["d"]["from"] == "head_size of litgpt Config 'tiny-llama-1.1b'"
    assert d["train_len"]["from"] == "train.max_seq_length" and d["dtype"]["value"] == "bf16-mixed"
    # the stock config at its trained length: Men et al.'s bound is information, not a warning
    assert found(r) == [("RL103", "info", 1, 1)]


LITGPT_MISTRAL = "model_name: Mistral-7B-v0.1\nprecision: bf16-mixed\ntrain:\n  max_seq_length: {}\n"


def test_litgpt_trains_at_most_at_block_size(tmp_path):
    """litgpt==0.5.13 caps Mistral-7B-v0.1 at block_size 4,096 ("should be 32768 but sliding window attention is
    not implemented") and GPT.max_seq_length refuses longer inputs: train.max_seq_length 8,192 is RV020 at
    that key; at 4,096 the lint passes and notes the Hugging Face value. A model_config with a larger
    block_size may train longer."""
    r = lint(tmp_path, "m.yaml", LITGPT_MISTRAL.format(8192))
    assert found(r) == [("RL103", "info", 1, 1), ("RV020", "error", 4, 3)]
    (f,) = [f for f in r.findings if f.code == "RV020"]
    assert f.message == ("train.max_seq_length 8,192 exceeds block_size 4,096 (block_size of litgpt Config "
                         "'Mistral-7B-v0.1'): litgpt refuses inputs that long (\"Cannot attend to 8192, block size "
                         "is only 4096\")")
    ok = lint(tmp_path, "m.yaml", LITGPT_MISTRAL.format(4096))
    assert setup(ok) == (128, 10000.0, 4096, 4096, "default") and "RV020" not in [f.code for f in ok.findings]
    assert any("below the 32,768 of its Hugging Face config" in n for n in ok.config.notes)
    own = lint(tmp_path, "c.yaml", "model_config:\n  block_size: 8192\n  n_embd: 4096\n  n_head: 32\n"
                                    "train:\n  max_seq_length: 8192\nprecision: bf16-mixed\n")
    assert "RV020" not in [f.code for f in own.findings]


def test_axolotl_mistral_v01_follows_the_hub_config_not_litgpts_cap(tmp_path):
    """axolotl runs transformers with the Hub's config.json: Mistral-7B-v0.1's max_position_embeddings is
    32,768 there (the value litgpt's own comment names; tests/configs/mistral-7b-v0.1.json has it too),
    sliding window 4,096 on every layer; litgpt's block_size 4,096 is litgpt's cap, not the model's."""
    p = tmp_path / "ax.yaml"
    p.write_text("base_model: mistralai/Mistral-7B-v0.1\nsequence_len: 8192\nbf16: true\n")
    r = lint_config(load_config(str(p)))
    hf = lint_config(load_config(str(HF / "mistral-7b-v0.1.json")))
    assert setup(r) == setup(hf) == (128, 10000.0, 32768, 4096, "default")
    assert r.config.tune_len.raw == 8192 and r.layers[0].spec.tune_len is None  # a fine-tune within 32,768
    assert any("not litgpt's block_size 4,096" in n for n in r.config.notes)


def test_litgpt_scaled_configs(tmp_path):
    """Llama-3.1-8B: rope_adjustments -> Llama 3.1 bands; the RoPE cache is block_size 131,072 and,
    without train.max_seq_length, the model trains at block_size."""
    r = lint(tmp_path, "l31.yaml", "model_name: Llama-3.1-8B\nprecision: bf16-true\n"
                                   "train:\n  max_seq_length: 8192\n")
    assert setup(r) == (128, 500000.0, 8192, 131072, "llama3")
    assert r.layers[0].spec.param_dict()["original_max_position_embeddings"] == 8192
    # pythia-14m: rotary_percentage 0.25 of head_size 32 -> 8 dims; no max_seq_length: block_size 512
    r = lint(tmp_path, "debug.yaml", "model_name: pythia-14m\ntrain:\n  max_seq_length:\nprecision: bf16-mixed\n")
    assert setup(r) == (8, 10000.0, 512, 512, "default")
    assert r.setup()["derived"]["train_len"]["from"] == ("block_size of litgpt Config 'pythia-14m' "
                                                         "(train.max_seq_length not set)")


def test_litgpt_model_config_replaces_the_named_config(tmp_path):
    """model_config overrides model_name (pretrain.py); absent keys take Config's class defaults
    (rotary_percentage 0.25, rope_base 10000): head_size 64 given, so d = 16."""
    text = ("model_name: tiny-llama-1.1b\nmodel_config:\n  n_embd: 1024\n  n_head: 16\n  head_size: 64\n"
            "  block_size: 4096\n  rope_condense_ratio: 2\ntrain:\n  max_seq_length: 4096\nprecision: bf16-mixed\n")
    r = lint(tmp_path, "mc.yaml", text)
    assert setup(r) == (16, 10000.0, 4096, 4096, "linear")
    assert r.layers[0].spec.param_dict() == {"factor": 2}
    assert r.setup()["derived"]["d"]["from"] == ("model_config.head_size x rotary_percentage: litgpt==0.5.13 "
                                                 "litgpt/config.py Config defaults 0.25")


def test_framework_rotary_dims_truncate_in_float_as_the_frameworks_do(tmp_path):
    """litgpt's rope_n_elem = int(rotary_percentage * head_size): 0.6 x 80 is 48.0 in float, 48
    dims and no RV004 (the exact product 47.99... would say 47); 0.3 x 80 = 24.0 too; 0.33 x 80 =
    26.4 truncates to 26 with RV004."""
    def d_of(pct: float):
        text = (f"model_config:\n  n_embd: 1280\n  n_head: 16\n  head_size: 80\n  block_size: 2048\n"
                f"  rotary_percentage: {pct}\ntrain:\n  max_seq_length: 2048\nprecision: bf16-mixed\n")
        r = lint(tmp_path, "rp.yaml", text)
        return r.layers[0].spec.d, [f.code for f in r.findings if f.code.startswith("RV")]
    assert int(0.6 * 80) == 48 and int(0.3 * 80) == 24  # the frameworks' own arithmetic
    assert d_of(0.6) == (48, []) and d_of(0.3) == (24, []) and d_of(0.33) == (26, ["RV004"])


def test_litgpt_window_on_some_layers_lints_global_and_local_groups(tmp_path):
    """Gemma-2-9b (litgpt 0.5.13): sliding_window_size 4096 where sliding_window_indices is 1
    ([1, 0, 1, 0, ...], model.py block_idx); the layers marked 0 attend fully, so at 32,768 the
    global layers exceed the bound of base 10,000 trained at 8,192, while the local ones see 4,096."""
    r = lint(tmp_path, "g2.yaml", "model_name: Gemma-2-9b\ntrain:\n  max_seq_length: 8192\n", target=32768)
    assert [(a.label, a.length) for a in r.layers] == [("global layers", 32768), ("local layers", 4096)]
    assert r.layers[0].bound.extrapolation_bound == 8192
    assert found(r) == [("RL101", "error", 1, 1), ("RL103", "info", 1, 1), ("RL103", "warning", 1, 1)]
    # Phi-3-mini-4k: the window is on every layer (all 1): one group
    r = lint(tmp_path, "phi3.yaml", "model_name: Phi-3-mini-4k-instruct\n")
    assert [(a.label, a.length) for a in r.layers] == [("all layers", 2048)]


# --------------------------------------------------------------------------------------- nanotron
NANOTRON = """general:
  project: debug
model:
  dtype: bfloat16
  model_config:
    hidden_size: 2048
    max_position_embeddings: 128256
    num_attention_heads: 16
    rope_scaling: null
tokens:
  sequence_length: 4096
"""


def test_nanotron_trains_at_tokens_sequence_length(tmp_path):
    """The issue's case: trained at tokens.sequence_length 4,096 with base 10,000 (nanotron 0.4's
    LlamaConfig has no rope_theta), advertising max_position_embeddings 128,256: RL101."""
    r = lint(tmp_path, "tiny.yaml", NANOTRON)
    assert setup(r) == (128, 10000.0, 4096, 128256, "default")
    assert [c for c, *_ in found(r)] == ["RL101", "RL103", "RP201"]
    rl101 = next(f for f in r.findings if f.code == "RL101")
    assert rl101.line == 7 and rl101.data["extrapolation_bound"] == 4096 and rl101.severity == "error"
    assert next(f for f in r.findings if f.code == "RL103").severity == "warning"  # past the training length


# ------------------------------------------------------------------------------------------- OLMo
def test_olmo(tmp_path):
    text = ("run_name: OLMo-1B\nmodel:\n  d_model: 2048\n  n_heads: 16\n  rope: true\n  rope_theta: 500000\n"
            "  max_sequence_length: 4096\nprecision: amp_bf16\n")
    r = lint(tmp_path, "olmo.yaml", text)
    assert setup(r) == (128, 500000.0, 4096, 4096, "default") and found(r) == []
    with pytest.raises(NotARopeConfig, match="ALiBi"):
        lint(tmp_path, "alibi.yaml", text.replace("rope: true", "rope: false\n  alibi: true"))


# -------------------------------------------------------------------------------------- OLMo-core
OLMO_CORE = FIX / "olmo_core"  # written by ai2-olmo-core==3.0.0's own builders (make.py)


@pytest.mark.parametrize("name,groups,params,findings", [
    # olmo2_1B: d_model 2048 / 16 heads, RoPEConfig theta 500,000, every layer global
    ("olmo2_1B", [("all layers", 128, 500000.0, "default", 32768)], {}, [("RL101", "error", 12, 9),
                                                                          ("RL103", "warning", 12, 9)]),
    # olmo3_7B: sliding_window pattern [4096, 4096, 4096, -1], last layer full; with_rope_scaling
    # puts the Llama 3.1 bands (Stepwise: low 1 / (1 - 0), high 1 / 0.25) on the full layers only
    ("olmo3_7B_stepwise", [("global layers", 128, 500000.0, "llama3", 32768), ("local layers", 128, 500000.0,
                                                                                "default", 4096)],
     {"factor": 8.0, "high_freq_factor": 4.0, "low_freq_factor": 1.0, "original_max_position_embeddings": 8192}, []),
    ("llama3_8B_yarn", [("all layers", 128, 500000.0, "yarn", 32768)],
     {"beta_fast": 32, "beta_slow": 1, "factor": 8.0, "original_max_position_embeddings": 8192}, []),
    # gemma3_1B: named blocks by block_pattern (5 local, 1 global); local theta 10,000, window 1,024
    ("gemma3_1B", [("global layers", 288, 1000000.0, "default", 32768), ("local layers", 288, 10000.0, "default",
                                                                          1024)], {}, [("RL101", "error", 68, 11)]),
    # qwen3_5_0_8B: GatedDeltaNet blocks (3 of every 4 layers, block_pattern) have no attention; the attention
    # blocks rotate 0.25 x head_dim 256
    ("qwen3_5_0_8B", [("global (6 layers)", 64, 10000000.0, "default", 32768),
                      ("without attention (18 layers)", None, None, None, 32768)], {}, [("RL101", "error", 52, 11)]),
])
def test_olmo_core_model_configs_from_the_wheel(name, groups, params, findings):
    r = lint_config(load_config(str(OLMO_CORE / f"{name}.json"), train=8192, target=32768))
    assert [(a.label, *((a.spec.d, a.spec.base, a.spec.scheme) if a.group.attention else (None,) * 3), a.length)
            for a in r.layers] == groups
    assert r.layers[0].spec.param_dict() == params and found(r) == findings
    assert pick(json.loads((OLMO_CORE / f"{name}.json").read_text())).name == "olmo_core"


def test_olmo_core_bare_model_has_no_training_length():
    r = lint_config(load_config(str(OLMO_CORE / "olmo2_1B.json")))
    assert found(r) == [("RL100", "warning", 12, 9)]  # at the model's RoPE (theta); --train sets the length


def test_olmo_core_experiment_config(tmp_path):
    """A saved experiment config.json: dataset.sequence_length trains; FSDP param_dtype is the dtype;
    RoPE runs in float32 (full_precision, the default)."""
    r = lint_config(load_config(str(FIX / "examples" / "olmo_core_olmo2_1b.json")))
    # RP201 (info, off by default): bf16 positions *if* computed in that dtype; OLMo-core rotates in float32
    assert setup(r) == (128, 500000.0, 4096, 4096, "default") and found(r) == [("RP201", "info", 85, 7)]
    d = r.setup()["derived"]
    assert d["train_len"] == {"value": 4096, "from": "dataset.sequence_length", "line": 76, "column": 5}
    assert d["base"] == {"value": 500000, "from": "model.block.sequence_mixer.rope.theta", "line": 14, "column": 11}
    assert d["dtype"] == {"value": "bfloat16", "from": "train_module.dp_config.param_dtype", "line": 85, "column": 7}
    assert any("full_precision" in n for n in r.config.notes)


def _olmo_core(tmp_path, mixer: dict, extra: dict | None = None, name: str = "c.json", **kw):
    cfg = {"model": {"d_model": 2048, "n_layers": 4, "block": {"sequence_mixer": mixer}},
           "dataset": {"sequence_length": 4096}, **(extra or {})}
    p = tmp_path / name
    p.write_text(json.dumps(cfg, indent=2))
    return lint_config(load_config(str(p), **kw))


def test_olmo_core_attention_variants(tmp_path):
    rope = {"theta": 10000}
    # the older spelling block.attention, defaults: n_heads 16 (AttentionConfig), theta 500,000 (RoPEConfig)
    p = tmp_path / "old.json"
    p.write_text(json.dumps({"model": {"d_model": 2048, "n_layers": 2, "block": {"attention": {"rope": {}}}},
                             "dataset": {"sequence_length": 4096}}))
    r = lint_config(load_config(str(p)))
    assert setup(r) == (128, 500000.0, 4096, 4096, "default")
    assert r.setup()["derived"]["base"]["from"] == "theta: ai2-olmo-core==3.0.0 RoPEConfig default"
    # d_attn (OLMo-core branches): head dim d_attn // n_heads
    r = _olmo_core(tmp_path, {"n_heads": 8, "d_attn": 1024, "rope": rope}, name="d.json")
    assert r.layers[0].spec.d == 128 and "AttentionConfig.d_attn" in r.config.head_dim.where
    # no rope: NoPE
    with pytest.raises(NotARopeConfig, match="OLMo-core model has no RoPE: no layer's attention has a rope"):
        _olmo_core(tmp_path, {"n_heads": 16}, name="n.json")
    # no_global_rope with a sliding window: only the windowed layers rotate; the full-attention layers are NoPE
    r = _olmo_core(tmp_path, {"n_heads": 16, "rope": {**rope, "no_global_rope": True},
                              "sliding_window": {"pattern": [1024, -1]}}, name="g.json")
    assert [(a.label, a.length, a.group.indices, a.group.rope) for a in r.layers] == [
        ("local (1 layer)", 1024, (1,), True), ("NoPE (3 layers)", 4096, (0, 2, 3), False)]
    assert any("no_global_rope" in n for n in r.config.notes)
    # a window of 0 is refused by OLMo-core: RV001 at the pattern
    r = _olmo_core(tmp_path, {"n_heads": 16, "rope": rope, "sliding_window": {"pattern": [0]}}, name="z.json")
    assert [f.code for f in r.findings if f.code.startswith("RV")] == ["RV001"]


@pytest.mark.parametrize("extra,value,key", [
    ({"train_module": {"autocast_precision": "bfloat16"}}, "bf16-mixed", "train_module.autocast_precision"),
    ({"trainer": {"autocast_precision": "float16"}}, "16-mixed", "trainer.autocast_precision"),
    ({"train_module": {"dp_config": {"param_dtype": "bfloat16"}, "autocast_precision": "bfloat16"}}, "bfloat16",
     "train_module.dp_config.param_dtype"),
    ({}, "float32", None),
])
def test_olmo_core_dtype(tmp_path, extra, value, key):
    r = _olmo_core(tmp_path, {"n_heads": 16, "rope": {}}, extra)
    assert (r.config.dtype.raw, r.config.dtype.key) == (value, key)


# ---------------------------------------------------------------------------------------- GPT-NeoX
def test_neox_sliding_window_width(tmp_path):
    """GPT-NeoX Mistral-7B: seq-length 8,192, sliding_window_width 4,096, max-position-embeddings
    131,072. flash-attn's window_size (4096, -1) lets every layer see keys up to 4,096 back, 4,097
    positions: within the bound, no RL101 (it used to be a false error)."""
    text = ('{\n  "hidden_size": 4096,\n  "num_attention_heads": 32,\n  "seq_length": 8192,\n'
            '  "sliding_window_width": 4096,\n  "max_position_embeddings": 131072,\n  "pos_emb": "rotary",\n'
            '  "rotary_pct": 1,\n  "rotary_emb_base": 10000,\n  "bf16": {"enabled": true}\n}\n')
    r = lint(tmp_path, "mistral.yml", text)
    assert setup(r) == (128, 10000.0, 8192, 4097, "default")
    assert r.config.layers[0].window.where == ("sliding_window_width (flash-attn window_size (4,096, -1): keys up to "
                                               "4,096 back, 4,097 positions)")
    # the window (4,097) is within the training length: Men et al.'s bound is information
    assert found(r) == [("RL103", "info", 9, 3), ("RP201", "info", 10, 12)]
    assert r.config.dtype.raw == "bf16"
    r = lint(tmp_path, "pythia.yml", '{"hidden-size": 768, "num-attention-heads": 12, "seq-length": 2048,\n'
                                     ' "max-position-embeddings": 2048, "pos-emb": "rotary", "rotary-pct": 0.25}\n')
    assert setup(r) == (16, 10000, 2048, 2048, "default")
    with pytest.raises(NotARopeConfig, match="default is 'learned'"):
        lint(tmp_path, "gpt.yml", '{"hidden-size": 768, "num-attention-heads": 12, "seq-length": 2048, '
                                  '"rotary-pct": 0.25}\n')


# ----------------------------------------------------------------------------------------- Megatron
MLA = """ENV_VARS:
  CUDA_DEVICE_MAX_CONNECTIONS: 1
MODEL_ARGS:
  --num-layers: 4
  --hidden-size: 512
  --num-attention-heads: 8
  --multi-latent-attention: true
  --qk-pos-emb-head-dim: 64
  --rotary-scaling-factor: 40
  --seq-length: 4096
  --max-position-embeddings: 163840
  --bf16: true
"""


def test_megatron_mla_reads_qk_pos_emb_head_dim_and_yarn(tmp_path):
    """The issue's case: MLA with --qk-pos-emb-head-dim 64 and --rotary-scaling-factor 40 rotates 64
    dims with YaRN (original 4,096 and betas 32/1: MLATransformerConfig defaults), not d 64 plain."""
    r = lint(tmp_path, "mla.yaml", MLA)
    assert setup(r) == (64, 10000, 4096, 163840, "yarn")
    # no --mscale / --mscale-all-dim: Megatron-LM's defaults 1.0 / 0.0 give get_mscale(40, 1) / 1 = 0.1 ln 40 + 1
    att = 0.1 * math.log(40) + 1
    assert r.layers[0].spec.param_dict() == {"factor": 40, "original_max_position_embeddings": 4096,
                                             "beta_fast": 32, "beta_slow": 1, "attention_factor": att}
    d = r.setup()["derived"]
    assert d["d"] == {"value": 64, "from": "MODEL_ARGS.--qk-pos-emb-head-dim", "line": 8, "column": 3}
    assert d["dtype"]["value"] == "bf16" and d["dtype"]["line"] == 12


def test_megatron_yarn_run_at_a_short_context_is_not_a_key_mismatch(tmp_path):
    """Megatron-Core's YaRN takes the factor and the original length only (YarnRotaryEmbedding never
    reads --max-position-embeddings), so a post-training run of an extended model at 1,024 tokens
    (NVIDIA/Megatron-LM's DeepSeek-V2-Lite example) has no RV010 / RV014; the same numbers in a
    config.json that transformers runs keep both."""
    short = MLA.replace("--seq-length: 4096", "--seq-length: 1024").replace("163840", "1024")
    r = lint(tmp_path, "mla.yaml", short)
    assert setup(r) == (64, 10000, 1024, 1024, "yarn")
    assert [f.code for f in r.findings if f.code.startswith("RV")] == []
    hf = ('{"model_type": "llama", "hidden_size": 512, "num_attention_heads": 8, "head_dim": 64, '
          '"max_position_embeddings": 1024, "rope_theta": 10000, "rope_scaling": {"rope_type": "yarn", '
          '"factor": 40, "original_max_position_embeddings": 4096}}')
    assert sorted(f.code for f in lint(tmp_path, "config.json", hf).findings if f.code.startswith("RV")) \
        == ["RV010", "RV014"]


def test_megatron_flag_spellings_and_schemes(tmp_path):
    """Flags with or without --, dashes or underscores; --rotary-percent; linear interpolation;
    --use-rope-scaling (Llama 3.1 bands); learned_absolute (the default) is not RoPE."""
    text = ("--hidden-size: 4096\n--num-attention-heads: 32\nkv_channels: 128\n--rotary-percent: 0.5\n"
            "position-embedding-type: rope\n--seq-length: 4096\n--max-position-embeddings: 8192\n"
            "--rotary-seq-len-interpolation-factor: 2\n--fp16: true\n")
    r = lint(tmp_path, "args.yaml", text)
    assert setup(r) == (64, 10000, 4096, 8192, "linear") and r.layers[0].spec.param_dict() == {"factor": 2}
    assert r.config.dtype.raw == "fp16"
    r = lint(tmp_path, "l31.yaml", text.replace("--rotary-seq-len-interpolation-factor: 2", "--use-rope-scaling: true"))
    assert r.layers[0].spec.scheme == "llama3" and r.layers[0].spec.param("factor") == 8.0
    with pytest.raises(NotARopeConfig, match="learned_absolute is the default"):
        lint(tmp_path, "gpt.yaml", text.replace("position-embedding-type: rope\n", ""))


def test_megatron_yaml_cfg_language_model_section(tmp_path):
    """--yaml-cfg files keep the model under language_model: (examples/gpt3/gpt_config.yaml)."""
    text = ("language_model:\n  hidden_size: 1024\n  num_attention_heads: 16\n  kv_channels: null\n"
            "model_parallel:\n  bf16: True\nposition_embedding_type: rope\nrotary_percent: 0.5\n"
            "max_position_embeddings: 4096\nseq_length: 4096\n")
    r = lint(tmp_path, "gpt_config.yaml", text)
    assert setup(r) == (32, 10000, 4096, 4096, "default")
    assert r.setup()["derived"]["d"]["from"] == ("language_model.hidden_size / language_model.num_attention_heads x "
                                                 "rotary_percent 0.5")
    assert r.config.dtype.raw == "bf16" and r.config.dtype.key == "model_parallel.bf16"


LAUNCH = """#!/bin/bash
# Llama-3-8B on 8 GPUs
SEQ_LEN=8192
GPT_MODEL_ARGS=(
    --num-layers 32
    --hidden-size 4096
    --num-attention-heads 32
    --seq-length ${SEQ_LEN}
    --max-position-embeddings ${MAX_POS:-32768}
    --position-embedding-type rope
    --rotary-base 500000
)
MODEL_ARGS=" \\
    --bf16 \\
    --use-rope-scaling \\
"
torchrun pretrain_gpt.py ${GPT_MODEL_ARGS[@]} $MODEL_ARGS
"""


def test_megatron_launch_script(tmp_path):
    """`ropelaw lint pretrain_gpt.sh`: flags in arrays and in quoted strings, variables substituted
    (with ${VAR:-default}); each value points at its flag in the script."""
    r = lint(tmp_path, "pretrain_gpt.sh", LAUNCH)
    assert setup(r) == (128, 500000, 8192, 32768, "llama3")
    d = r.setup()["derived"]
    assert (d["train_len"]["from"], d["train_len"]["line"], d["train_len"]["column"]) == ("--seq-length", 8, 5)
    assert (d["target"]["value"], d["target"]["line"]) == (32768, 9)
    assert d["scheme"]["from"] == "Megatron-Core rope scaling (--use-rope-scaling): Llama 3.1 bands"
    assert (d["dtype"]["value"], d["dtype"]["line"]) == ("bf16", 14)
    # the script runs pretrain_gpt.py from no weights: the bands are in force from the first step
    assert d["pretrained_with_scheme"]["value"] is True \
        and "runs pretrain_gpt.py" in d["pretrained_with_scheme"]["from"]
    assert r.layers[0].spec.pretrained_with_scheme
    bound = r.setup()["bound"]["extrapolation_bound"]
    assert bound == pytest.approx(_llama31_trained_bound(128, 500000, 8192), rel=1e-12)  # 11,971.48
    assert found(r) == [("RL102", "warning", 9, 5), ("RP201", "info", 14, 5)]  # 32,768 > 11,971


def _llama31_trained_bound(d: int, base: float, train: int) -> float:
    """Independent of ropelaw: the Llama 3.1 bands (factor 8, low 1, high 4, original 8,192; Meta's
    ``apply_scaling``) on each pair's wavelength; Liu et al.'s bound is the trained wavelength of the
    first pair that does not complete a period in ``train`` tokens."""
    import math

    for i in range(d // 2):
        wavelen = 2 * math.pi * base ** (2 * i / d)
        if wavelen < 8192 / 4:
            scaled = wavelen
        elif wavelen > 8192 / 1:
            scaled = wavelen * 8
        else:
            smooth = (8192 / wavelen - 1) / (4 - 1)
            scaled = wavelen / ((1 - smooth) / 8 + smooth)
        if scaled > train:
            return scaled
    raise AssertionError("every pair completes a period")


@pytest.mark.parametrize("start", ["--load /ckpt/llama31", "--pretrained-checkpoint /ckpt/llama31", "--finetune"])
def test_megatron_launch_script_from_existing_weights_is_an_extension(tmp_path, start):
    r = lint(tmp_path, "pretrain_gpt.sh", LAUNCH.replace("$MODEL_ARGS", f"$MODEL_ARGS {start}"))
    assert not r.layers[0].spec.pretrained_with_scheme
    assert r.setup()["derived"]["pretrained_with_scheme"] is None
    assert r.setup()["bound"]["extrapolation_bound"] == pytest.approx(65750, abs=1)  # the README's 65,750
    assert found(r) == [("RP201", "info", 14, 5)]  # the Llama 3.1 bands reach 32,768 from 8,192


def test_megatron_args_without_a_pretrain_run_are_an_extension(tmp_path):
    # a script that only defines arguments (sourced by another) says nothing about the weights
    r = lint(tmp_path, "conf.sh", LAUNCH.replace("torchrun pretrain_gpt.py", "echo"))
    assert not r.layers[0].spec.pretrained_with_scheme


def test_launch_script_without_model_flags_is_skipped(tmp_path, capsys):
    (tmp_path / "setup.sh").write_text("#!/bin/sh\npip install -e .\n")
    (tmp_path / "ok.json").write_text(json.dumps({"hidden_size": 4096, "num_attention_heads": 32,
                                                  "max_position_embeddings": 4096, "rope_theta": 5e5}))
    assert main(["lint", "-v", str(tmp_path / "setup.sh"), str(tmp_path / "ok.json")]) == 0
    assert "setup.sh: skipped: no Megatron model flags" in capsys.readouterr().out


MEGATRON_SWA = ('GPT_ARGS="--num-layers 32 --hidden-size 4096 --num-attention-heads 32 --seq-length 8192 '
                '--max-position-embeddings 32768 --position-embedding-type rope --window-size 4096,0{skip} --bf16"\n'
                "torchrun pretrain_gpt.py $GPT_ARGS\n")


@pytest.mark.parametrize("skip,groups,errors", [
    # --window-size 4096,0 on every layer: keys up to 4,096 back (get_sliding_window_causal_mask), 4,097 positions
    ("", [("all layers", 4097)], []),
    # every 4th layer attends fully: its 32,768 tokens exceed the bound of base 10,000 trained at 8,192
    (" --window-attn-skip-freq 4", [("global layers", 32768), ("local layers", 4097)], ["RL101"]),
    (" --window-attn-skip-freq [1,1,1,0]*8", [("global layers", 32768), ("local layers", 4097)], ["RL101"]),
    (" --window-attn-skip-freq [1]*32", [("all layers", 4097)], []),
    (" --window-attn-skip-freq 1", [("all layers", 32768)], ["RL101"]),
])
def test_megatron_window_size(tmp_path, skip, groups, errors):
    r = lint(tmp_path, "swa.sh", MEGATRON_SWA.format(skip=skip))
    assert [(a.label, a.length) for a in r.layers] == groups
    assert [f.code for f in r.findings if f.severity == "error"] == errors
    if skip == "":
        assert r.config.layers[0].window.where == ("--window-size ((4096, 0): keys up to 4,096 back, 4,097 positions "
                                                   "(megatron-core==0.16.1 get_sliding_window_causal_mask))")


def test_megatron_window_size_in_flag_files(tmp_path):
    flags = "--num-attention-heads: 32\n--hidden-size: 4096\n--seq-length: 8192\n--position-embedding-type: rope\n"
    r = lint(tmp_path, "a.yaml", flags + "--window-size: [4096, 0]\n")
    assert [(a.label, a.length) for a in r.layers] == [("all layers", 4097)]
    r = lint(tmp_path, "b.yaml", flags + "--window-size: 4096\n")
    assert [(f.code, f.message) for f in r.findings if f.code.startswith("RV")] == [
        ("RV001", "--window-size must be 'left,right', two whole numbers (arguments.py tuple_type), got 4096")]
    r = lint(tmp_path, "c.yaml", flags + "--window-size: '-1,0'\n")
    assert r.layers[0].length == 8192 and any("no window" in n for n in r.config.notes)


# -------------------------------------------------------------------------------------------- NeMo
NEMO = """trainer:
  devices: 8
  precision: bf16
model:
  encoder_seq_length: 4096
  max_position_embeddings: ${.encoder_seq_length}
  hidden_size: 4096
  num_attention_heads: 32
  kv_channels: null
  position_embedding_type: 'rope'
  rotary_percentage: 1.0
  rotary_base: 500000
  seq_len_interpolation_factor: 4
  data:
    seq_length: ${model.encoder_seq_length}
"""


def test_nemo_model_section_and_interpolations(tmp_path):
    r = lint(tmp_path, "megatron_llama_config.yaml", NEMO)
    assert setup(r) == (128, 500000, 4096, 4096, "linear") and r.layers[0].spec.param_dict() == {"factor": 4}
    d = r.setup()["derived"]
    assert d["target"] == {"value": 4096, "from": "model.max_position_embeddings (${.encoder_seq_length} resolved)",
                           "line": 6, "column": 3}
    # bf16 without model.megatron_amp_O2: float32 parameters under bf16 autocast (NeMo's params_dtype)
    assert d["dtype"] == {"value": "bf16-mixed", "line": 3, "column": 3,
                          "from": "trainer.precision (bf16 without model.megatron_amp_O2: float32 parameters, bf16 "
                                  "autocast (nemo_toolkit==2.5.0 torch_dtype_from_precision))"}


def _nemo(tmp_path, extra_model: str = "", precision: str = "bf16", name: str = "nemo.yaml", **kw):
    text = NEMO.replace("precision: bf16", f"precision: {precision}").replace(
        "  seq_len_interpolation_factor: 4\n", "") + extra_model
    return lint(tmp_path, name, text, **kw)


@pytest.mark.parametrize("precision,o2,value", [
    # nemo_toolkit==2.5.0 parts/utils_funcs.py torch_dtype_from_precision + megatron_base_model.py params_dtype
    ("bf16", "true", "bf16"), ("bf16-mixed", "true", "bf16"), ("16", "true", "fp16"), ("16-mixed", "true", "fp16"),
    ("bf16", "false", "bf16-mixed"), ("16", "false", "16-mixed"), ("'16'", "false", "16-mixed"),
    ("32", "true", "fp32"), ("32-true", "false", "fp32"),
])
def test_nemo_precision_is_the_dtype_nemo_trains_with(tmp_path, precision, o2, value):
    r = _nemo(tmp_path, f"  megatron_amp_O2: {o2}\n", precision)
    assert r.config.dtype.raw == value and r.config.dtype.key == "trainer.precision"


def test_nemo_fp16_parameters_overflow_past_65504_only_with_amp_o2(tmp_path):
    with_o2 = _nemo(tmp_path, "  megatron_amp_O2: true\n", "16", name="a.yaml", target=131072)
    autocast = _nemo(tmp_path, "  megatron_amp_O2: false\n", "16", name="b.yaml", target=131072)
    assert "RP202" in {f.code for f in with_o2.findings} and "RP202" not in {f.code for f in autocast.findings}


def test_nemo_model_precision_wins_and_unknown_precisions_are_kept_with_a_note(tmp_path):
    r = _nemo(tmp_path, "  precision: 32\n", "bf16")
    assert (r.config.dtype.raw, r.config.dtype.key) == ("fp32", "model.precision")
    r = _nemo(tmp_path, "", "bf16-true", name="t.yaml")
    assert r.config.dtype.raw == "bf16-true"
    assert any("is not a precision NeMo 1.x reads" in n for n in r.config.notes)


# NeMo's Mistral converter writes window_size [sliding_window, 0] (NVIDIA/NeMo
# scripts/checkpoint_converters/convert_mistral_7b_hf_to_nemo.py; nemo_toolkit==2.5.0
# llm/gpt/model/mistral.py does the same): Megatron attends keys 0..4,096 back, 4,097 positions
MISTRAL = "  mcore_gpt: true\n  window_size: [4096, 0]\n"


def test_nemo_window_size_bounds_every_layer_like_hf_sliding_window(tmp_path):
    # Mistral 7B: trained at 8,192 with the window (--train), served at 32,768
    r = _nemo(tmp_path, MISTRAL, train=8192, target=32768)
    g = r.config.layers
    assert [x.label for x in g] == ["all layers"] and g[0].window.raw == 4097
    assert g[0].window.where == ("model.window_size ([4096, 0]: keys up to 4,096 back, 4,097 positions "
                                 "(megatron-core==0.16.1 get_sliding_window_causal_mask))")
    assert r.layers[0].length == 4097 and found(r) == []  # the window is within the bound: no RL101 at 32,768
    plain = _nemo(tmp_path, "  mcore_gpt: true\n", name="plain.yaml", train=8192, target=32768)
    assert [f.code for f in plain.findings if f.severity == "error"] == ["RL101"]


def test_nemo_window_of_the_training_length_reaches_one_distance_past_it(tmp_path):
    """NeMo's Mistral converter sets encoder_seq_length = sliding_window = 4,096 and window_size
    [4096, 0]: Megatron then attends distance 4,096, one more than a 4,096-token sequence holds."""
    r = _nemo(tmp_path, MISTRAL, target=32768)
    assert r.layers[0].length == 4097 and r.layers[0].bound.extrapolation_bound == 4096
    assert found(r) == [("RL101", "error", 16, 3)]


@pytest.mark.parametrize("extra,labels,note", [
    ("  window_attn_skip_freq: 4\n", ["global layers", "local layers"], None),
    ("  window_attn_skip_freq: [1, 1, 0]\n", ["global layers", "local layers"], None),
    ("  window_attn_skip_freq: [1, 1, 1]\n", ["all layers"], None),
    ("  window_attn_skip_freq: 1\n", ["all layers"], "every layer attends fully"),
    ("  name: megatron_gemma2\n", ["global layers", "local layers"], "even layers only"),
])
def test_nemo_window_on_some_layers_lints_global_and_local_groups(tmp_path, extra, labels, note):
    r = _nemo(tmp_path, MISTRAL + extra)
    assert [g.label for g in r.config.layers] == labels
    assert note is None or any(note in n for n in r.config.notes)
    if labels[0] == "global layers":
        assert r.config.layers[0].window is None and r.config.layers[1].window.raw == 4097


def test_nemo_window_size_needs_mcore_and_a_pair(tmp_path):
    legacy = _nemo(tmp_path, "  window_size: [4096, 0]\n")
    assert legacy.config.layers[0].window is None and any("mcore_gpt" in n for n in legacy.config.notes)
    unbounded = _nemo(tmp_path, "  mcore_gpt: true\n  window_size: [-1, 0]\n", name="u.yaml")
    assert unbounded.config.layers[0].window is None
    bad = _nemo(tmp_path, "  mcore_gpt: true\n  window_size: 4096\n", name="b.yaml")
    assert [(f.code, f.line, f.message) for f in bad.findings if f.code.startswith("RV")] == [
        ("RV001", 16, "model.window_size must be a list of numbers, got int")]
    short = _nemo(tmp_path, "  mcore_gpt: true\n  window_size: [4096]\n", name="s.yaml")
    assert [(f.code, f.line, f.message) for f in short.findings if f.code.startswith("RV")] == [
        ("RV001", 16, "model.window_size must be [left, right], two whole numbers (-1: unbounded; "
                      "megatron-core==0.16.1 TransformerConfig.window_size), got [4096]")]


# --------------------------------------------------------------------------------- torchtune, axolotl
def test_torchtune_configs_from_the_wheel():
    """torchtune==0.6.1 recipes: the builders' RoPE; no tokenizer.max_seq_len: the base model's
    pre-training length (Llama 3.1: old_context_len 8,192 of Llama3ScaledRoPE)."""
    expected = {
        "llama2_7B_full.yaml": ((128, 10000.0, 4096, 4096, "default"),
                                [("RL103", "info", 38, 3), ("RP201", "info", 75, 1)]),
        "llama3_1_8B_full.yaml": ((128, 500000.0, 8192, 131072, "llama3"),
                                  [("RL102", "warning", 38, 3), ("RL104", "info", 38, 3), ("RP201", "info", 79, 1)]),
        "qwen2_5_1.5B_full.yaml": ((128, 1000000.0, 32768, 32768, "default"), [("RP201", "info", 65, 1)]),
        # llama3_3 = llama3_1 builders (torchtune/models/llama3_3/_model_builders.py); LoRA: same RoPE
        "llama3_3_70B_lora.yaml": ((128, 500000.0, 8192, 131072, "llama3"),
                                   [("RL102", "warning", 15, 3), ("RL104", "info", 15, 3), ("RP201", "info", 77, 1)]),
    }
    for name, (want, findings) in expected.items():
        r = lint_config(load_config(str(FIX / "torchtune" / name)))
        assert (setup(r), found(r)) == (want, findings), name
    r = lint_config(load_config(str(FIX / "torchtune" / "llama2_7B_full.yaml")))
    assert r.setup()["derived"]["base"]["from"] == "base of torchtune llama2_7b()"


def layer_groups(r) -> list[tuple]:
    return [(a.label, a.spec.d, a.spec.base, a.window, a.length) for a in r.layers]


def test_torchtune_gemma2_local_and_global_layers(tmp_path):
    """torchtune==0.6.1 gemma2() gives every even layer (layer_idx % 2 == 0) sliding_window_size
    4,096 and the odd layers full attention, one RotaryPositionalEmbeddings(head_dim, 8,192, 10,000)
    for all: two layer groups, as the Hugging Face dialect reads a gemma2 config.json. The recipes
    (gemma2/2B_full.yaml, 27B_lora.yaml from the wheel) set no tokenizer.max_seq_len: 8,192."""
    r = lint_config(load_config(str(FIX / "torchtune" / "gemma2_2B_full.yaml")))
    assert layer_groups(r) == [("global layers", 256, 10000.0, None, 8192), ("local layers", 256, 10000.0, 4096, 4096)]
    # Men et al.'s bound for each group at model._component_ (info: within the training length), bf16 at dtype
    assert found(r) == [("RL103", "info", 35, 3), ("RL103", "info", 35, 3), ("RP201", "info", 73, 1)]
    local = r.config.layers[1].window
    assert local.where == ("sliding_window_size of torchtune gemma2_2b() on the even layers (layer_idx % 2 == 0; "
                           "the odd layers attend globally)")
    assert r.setup()["layers"][1]["window"] == 4096
    lora = lint_config(load_config(str(FIX / "torchtune" / "gemma2_27B_lora.yaml")))
    assert layer_groups(lora) == [("global layers", 128, 10000.0, None, 8192),
                                  ("local layers", 128, 10000.0, 4096, 4096)]
    # the same model as a Hugging Face config.json (tests/configs/gemma-2-9b.json) and as torchtune's builder
    hf = lint_config(load_config(str(HF / "gemma-2-9b.json")))
    tune = lint(tmp_path, "gemma2_9b.yaml", "model:\n  _component_: torchtune.models.gemma2.gemma2_9b\n")
    # the same groups; the config.json's are named with their layer counts (read through the per-layer table)
    assert [g[1:] for g in layer_groups(tune)] == [g[1:] for g in layer_groups(hf)]
    assert [g[0] for g in layer_groups(hf)] == ["global (21 layers)", "local (21 layers)"]


@pytest.mark.hf
def test_torchtune_gemma2_layer_pattern_is_transformers_gemma2():
    """Independent source: transformers' Gemma2Config.layer_types (sliding on (i + 1) % 2) marks the
    same layers local as torchtune's (layer_idx % 2) == 0, for each builder's layer count."""
    transformers = pytest.importorskip("transformers")
    tune = json.loads((PRESETS / "presets_torchtune.json").read_text())["presets"]
    for size in ("2b", "9b", "27b"):
        v = tune[f"torchtune.models.gemma2.gemma2_{size}"]["values"]
        assert v["sliding_window_layers"] == "even"
        local = [i % 2 == 0 for i in range(v["num_layers"])]
        cfg = transformers.Gemma2Config(num_hidden_layers=v["num_layers"])
        assert [t == "sliding_attention" for t in cfg.layer_types] == local
        assert v["sliding_window"] == cfg.sliding_window == 4096


def test_axolotl_base_model_from_the_table(tmp_path):
    """axolotl==0.19.0's hatchery examples fine-tune Qwen/Qwen3-8B at sequence_len 2,048: the model's
    RoPE as litgpt==0.5.13's Config for that repository encodes it (head 128, theta 1e6, 40,960
    positions); 2,048 is within its training length."""
    for name, line in (("tinker_sft.yaml", 7), ("tinker_rl.yaml", 10)):
        r = lint_config(load_config(str(FIX / "axolotl" / name)))
        assert setup(r) == (128, 1e6, 40960, 40960, "default")
        # sequence_len is the fine-tuning length, read and kept; within 40,960 it extends nothing
        assert r.config.tune_len.raw == 2048 and r.config.tune_len.key == "sequence_len"
        assert r.layers[0].spec.tune_len is None and "tuned 2,048" in r.ok_line()
        # the table stands in for the model's config.json, and the output says so (RV032, at base_model)
        assert found(r) == [("RL103", "info", line, 1), ("RV032", "warning", line, 1)]
        assert r.setup()["derived"]["base"]["from"] == "rope_theta of base_model 'Qwen/Qwen3-8B'"  # the origin once:
        rv032 = next(f for f in r.findings if f.code == "RV032")  # the table's row, as its source (said once)
        assert rv032.sources == ("ropelaw's table: Qwen/Qwen3-8B as litgpt==0.5.13 litgpt/config.py "
                                 "Config.from_name('Qwen3-8B')",) and "litgpt==" not in rv032.message
        assert r.setup()["model"]["from"].startswith("ropelaw's table: ")
    # a longer sequence_len is a tuning run; overrides_of_model_config replaces the base's keys (axolotl 0.18.0 sets
    # them after transformers 5 built rope_parameters: a rope_scaling mapping replaces them whole, its rope_theta
    # included; without one the rotary cannot be built: RV033)
    text = ("base_model: meta-llama/Llama-2-7b-hf\nsequence_len: 16384\nbf16: auto\n"
            "overrides_of_model_config:\n  rope_scaling:\n    type: linear\n    factor: 4.0\n    rope_theta: 10000.0\n"
            "  max_position_embeddings: 16384\n")
    r = lint(tmp_path, "ext.yaml", text)
    assert setup(r) == (128, 10000.0, 4096, 16384, "linear") and r.config.tune_len.raw == 16384
    assert r.setup()["derived"]["params"]["factor"]["from"] == "overrides_of_model_config.rope_scaling.factor"
    r = lint(tmp_path, "crash.yaml", text.replace("    rope_theta: 10000.0\n", ""))
    assert "RV033" in {f.code for f in r.findings} and r.layers[0].spec.scheme == "default"
    with pytest.raises(NotARopeConfig, match="not in ropelaw.s table of published models"):
        lint(tmp_path, "unknown.yaml", "base_model: someone/private-model\nsequence_len: 2048\n")


def test_axolotl_local_base_model_directory(tmp_path):
    model = tmp_path / "my-model"
    model.mkdir()
    (model / "config.json").write_text((HF / "llama-3-8b.json").read_text())
    r = lint(tmp_path, "local.yaml", f"base_model: {model}\nsequence_len: 8192\n")
    assert setup(r) == (128, 500000.0, 8192, 8192, "default")


def test_dialect_detection_leaves_hf_configs_alone():
    for p in sorted(HF.glob("*.json")):
        assert pick(json.loads(p.read_text())).name == "hf", p.name


def test_json_says_where_every_value_came_from(tmp_path, capsys):
    p = tmp_path / "tinyllama.yaml"
    p.write_text(LITGPT)
    assert main(["lint", str(p), "--format", "json"]) == 0
    derived = json.loads(capsys.readouterr().out)["configs"][0]["derived"]
    for key in ("d", "head_dim", "base", "train_len", "target", "dtype"):
        assert derived[key]["from"], key


# ----------------------------------------------------------------------------- values a config lacks
def test_fill_ins_from_the_command_line(tmp_path, capsys):
    """--head-dim / --base / --dtype fill in what a config lacks and show as [--flag]; a config's own
    value wins. A config with no training length gets RL100 until --train is given."""
    text = "hidden_size: 4096\nnum_attention_heads: 32\nmax_position_embeddings: 8192\n"
    p = tmp_path / "c.yaml"
    p.write_text(text)
    r = lint_config(load_config(str(p), base=5e5, dtype="bf16"))
    assert r.layers[0].spec.base == 5e5 and r.config.layers[0].base.where == "--base"
    assert r.config.dtype.where == "--dtype"
    r = lint_config(load_config(str(p), base=5e5, target=32768))
    assert "base 500,000 [--base]" in next(f for f in r.findings if f.code == "RL101").message
    q = tmp_path / "own.yaml"
    q.write_text(text + "rope_theta: 1000000\n")
    assert lint_config(load_config(str(q), base=5e5)).layers[0].spec.base == 1e6
    m = tmp_path / "args.yaml"
    m.write_text("--num-attention-heads: 32\n--hidden-size: 4096\n--position-embedding-type: rope\n")
    assert main(["lint", str(m)]) == 1
    assert "RL100 missing-training-length" in capsys.readouterr().out
    assert main(["lint", str(m), "--train", "4096"]) == 0


# ------------------------------------------------------------------------------------- preset tables
def test_preset_tables_agree_with_the_published_hf_configs():
    """Independent sources agree: the frameworks' presets (read from their code) against the
    Hugging Face config.json of the same model (tests/configs)."""
    hf = {p.stem: json.loads(p.read_text()) for p in HF.glob("*.json")}
    titan = json.loads((PRESETS / "presets_torchtitan.json").read_text())["presets"]
    lit = json.loads((PRESETS / "presets_litgpt.json").read_text())["presets"]
    tune = json.loads((PRESETS / "presets_torchtune.json").read_text())["presets"]
    l31 = hf["llama-3.1-8b"]
    t = titan["llama3/8B"]["values"]
    assert (t["dim"] // t["n_heads"], t["rope_theta"]) == (l31["hidden_size"] // l31["num_attention_heads"],
                                                           l31["rope_theta"])
    sc = t["rope_scaling_args"]
    assert (sc["scaling_factor"], sc["low_freq_factor"], sc["high_freq_factor"],
            sc["original_max_position_embeddings"]) == tuple(
        l31["rope_scaling"][k] for k in ("factor", "low_freq_factor", "high_freq_factor",
                                          "original_max_position_embeddings"))
    for name, hf_name in (("Llama-2-7b-hf", "llama-2-7b"), ("Llama-3.1-8B", "llama-3.1-8b"),
                          ("Mistral-7B-v0.1", "mistral-7b-v0.1"), ("pythia-6.9b", "pythia-6.9b")):
        v, h = lit[name]["values"], hf[hf_name]
        assert v["rope_n_elem"] == int(h["hidden_size"] // h["num_attention_heads"] * h.get("rotary_pct", 1.0)), name
        assert v["rope_base"] == h.get("rope_theta", h.get("rotary_emb_base", 10000)), name
    for name, hf_name in (("llama2.llama2_7b", "llama-2-7b"), ("llama3_1.llama3_1_8b", "llama-3.1-8b"),
                          ("qwen2.qwen2_7b", "qwen2-7b-instruct")):
        v, h = tune[f"torchtune.models.{name}"]["values"], hf[hf_name]
        assert (v["dim"], v["base"]) == (h["hidden_size"] // h["num_attention_heads"], h.get("rope_theta", 10000)), name
        assert v["max_seq_len"] == h["max_position_embeddings"], name


def test_preset_tables_name_their_pinned_source():
    for name, pkg in (("torchtitan", "torchtitan==0.2.2"), ("litgpt", "litgpt==0.5.13"),
                      ("torchtune", "torchtune==0.6.1")):
        table = json.loads((PRESETS / f"presets_{name}.json").read_text())
        assert table["package"] == pkg and len(table["presets"]) >= 20
        assert all(e["source"].startswith(pkg) for e in table["presets"].values()), name


DL = pathlib.Path(os.environ.get("ROPELAW_FRAMEWORK_DL",
                                 ROOT.parent / "shared" / "dl"))  # wheels, as pip download leaves them


# ------------------------------------------------------------------------------------ the corpus
CORPUS = pathlib.Path(os.environ.get("ROPELAW_CORPUS", ROOT.parent / "shared" / "corpus")) / "frameworks"
# entries fetched this round are added to the shared corpus between rounds; until then a local copy of the
# manifest's files (same relative paths) can be named here to check them: ROPELAW_FRAMEWORKS_LOCAL=DIR
LOCAL = os.environ.get("ROPELAW_FRAMEWORKS_LOCAL")
MANIFEST = json.loads((FIX / "frameworks_corpus.json").read_text())


def corpus_file(key: str) -> pathlib.Path:
    """The corpus copy of manifest entry ``key`` (the shared corpus, else ROPELAW_FRAMEWORKS_LOCAL);
    skips, naming the file, when neither has it yet."""
    for root in (CORPUS, pathlib.Path(LOCAL) if LOCAL else None):
        if root is not None and (root / key).is_file():
            return root / key
    pytest.skip(f"{key} ({MANIFEST[key]['source'].split()[0]}) is not in {CORPUS} yet (added between rounds; "
                f"ROPELAW_FRAMEWORKS_LOCAL=DIR reads a local copy)")


def test_corpus_manifest_covers_every_framework():
    per = {}
    for key, e in MANIFEST.items():
        # read, or read up to the model it names (RV031: the dialect read the file; the model's config.json is needed)
        if "skipped" not in e and ("finding" not in e or e["finding"][0] == "RV031"):
            per[key.split("/")[0]] = per.get(key.split("/")[0], 0) + 1
        assert "@" in e["source"].split()[0], key  # repo@commit path
    assert set(per) == {"torchtitan", "litgpt", "neox", "nanotron", "olmo", "olmo_core", "axolotl", "megatron",
                        "nemo", "maxtext", "llmfoundry", "levanter", "llamafactory"}
    assert min(per.values()) >= 3, per


@pytest.mark.skipif(not CORPUS.is_dir(), reason=f"framework corpus not present at {CORPUS} (ROPELAW_CORPUS)")
@pytest.mark.parametrize("key", sorted(MANIFEST))
def test_framework_corpus(key):
    e = MANIFEST[key]
    path = corpus_file(key)
    if "sha256" in e:
        import hashlib

        assert hashlib.sha256(path.read_bytes()).hexdigest() == e["sha256"], key
    if "finding" in e:  # RV030 / RV031: a finding for the file, never a skip
        from ropelaw.lint.loader import UnreadConfig

        with pytest.raises(UnreadConfig) as exc:
            load_config(str(path))
        assert [exc.value.code, exc.value.line, exc.value.column] == e["finding"]
        return
    if "skipped" in e:
        with pytest.raises(NotARopeConfig) as exc:
            load_config(str(path))
        assert str(exc.value).split(": ", 1)[1] == e["skipped"]
        return
    r = lint_config(load_config(str(path)))
    a = r.layers[0]
    s = a.spec
    assert (s.d, s.base, s.train_len, a.length, s.scheme) == (e["d"], e["base"], e["train"], e["length"], e["scheme"])
    assert {k: v for k, v in s.param_dict().items() if not isinstance(v, list)} == e["params"]
    assert (r.config.dtype.raw if r.config.dtype else None) == e["dtype"]
    assert sorted([f.code, f.severity, f.line, f.column] for f in r.findings) == e["findings"]
    # torchtitan: the scheme in force from step 0 (tests/test_pretrained_with_scheme.py)
    if "pretrained_with_scheme" in e:
        assert s.pretrained_with_scheme is e["pretrained_with_scheme"]
    if "bound" in e:
        assert (a.bound.critical_dimension, round(a.bound.extrapolation_bound)) == (e["critical_dimension"], e["bound"])
    if "tune" in e:  # the fine-tuning length (axolotl sequence_len, LLaMA-Factory cutoff_len ...)
        assert r.config.tune_len.raw == e["tune"]


DEEPSEEK_V3_SH = """#!/bin/bash
# written here after NVIDIA/Megatron-LM@d98e8a64 examples/post_training/modelopt/conf/deepseek-ai/DeepSeek-R1.sh
MODEL_ARGS=" \\
    --bf16 \\
    --position-embedding-type rope \\
    --num-layers 61 \\
    --hidden-size 7168 \\
    --num-attention-heads 128 \\
    --kv-channels 128 \\
    --multi-latent-attention \\
    --qk-head-dim 128 \\
    --qk-pos-emb-head-dim 64 \\
    --seq-length 4096 \\
    --max-position-embeddings 163840 \\
    --rotary-base 10000 \\
    --rotary-percent 1.0 \\
    --rotary-scaling-factor 40 \\
    --mscale 1.0 \\
    --mscale-all-dim 1.0 \\
"
"""


def test_megatron_mla_attention_factor_is_the_same_model_as_its_config_json(tmp_path):
    """DeepSeek-V3 through two dialects: Megatron-Core multiplies cos/sin by get_mscale(40, 1) /
    get_mscale(40, 1) = 1 (the mscale^2 goes into the softmax scale), and transformers gives its
    config.json (mscale 1.0, mscale_all_dim 1.0) the same 1.0; before, the Megatron script read 1.3689.
    tests/test_framework_runtimes.py runs megatron-core's own function on these flags."""
    p = tmp_path / "DeepSeek-V3.sh"
    p.write_text(DEEPSEEK_V3_SH)
    mega = lint_config(load_config(str(p)))
    hf = lint_config(load_config(str(HF / "deepseek-v3.json")))
    assert mega.layers[0].scheme_result.attention_factor == hf.layers[0].scheme_result.attention_factor == 1.0
    att = mega.setup()["derived"]["params"]["attention_factor"]
    assert att["value"] == 1.0 and "--mscale 1" in att["from"] and "--mscale-all-dim 1" in att["from"]
    assert mega.config.unread == []  # --rotary-percent is judged: MLA's YaRN does not take it
    # MLA with --rope-type rope: RotaryEmbedding(qk_pos_emb_head_dim, rotary_percent)
    q = tmp_path / "rope.sh"
    q.write_text(DEEPSEEK_V3_SH.replace("--rotary-percent 1.0", "--rotary-percent 0.5 --rope-type rope"))
    assert setup(lint_config(load_config(str(q))))[0] == 32


def test_megatron_model_args_flattened_with_hyphens(tmp_path):
    """A Megatron functional-test MODEL_ARGS flattened to hyphenated keys without -- (issue 22,
    heldout-r2 megatron-deepseekv3-proxy-MODEL_ARGS-flattened.yaml) is Megatron's, not the generic
    table's: MLA d = qk-pos-emb-head-dim 64 with YaRN x40, not kv-channels 128 plain. GPT-NeoX's
    hyphenated keys (pos-emb) stay NeoX's."""
    text = ("num-layers: 14\nhidden-size: 7168\nnum-attention-heads: 128\nkv-channels: 128\nseq-length: 4096\n"
            "max-position-embeddings: 4096\nposition-embedding-type: rope\nrotary-base: 10000\n"
            "multi-latent-attention: true\nqk-pos-emb-head-dim: 64\nrotary-scaling-factor: 40\nmscale: 1.0\n"
            "mscale-all-dim: 1.0\nbf16: true\n")
    r = lint(tmp_path, "flat.yaml", text)
    assert r.config.arch == "megatron MLA" and setup(r) == (64, 10000, 4096, 4096, "yarn")
    assert r.layers[0].scheme_result.attention_factor == 1.0 and r.config.unread == []
    neox = lint(tmp_path, "neox.yml", "num-layers: 2\nhidden-size: 256\nnum-attention-heads: 4\nseq-length: 2048\n"
                                      "max-position-embeddings: 2048\npos-emb: rotary\nrotary-pct: 0.25\n")
    assert neox.config.arch == "gpt-neox" and setup(neox)[0] == 16
