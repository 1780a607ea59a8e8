"""MaxText, llm-foundry, Levanter and LLaMA-Factory configs (issue 22): each dialect reads what the
framework runs. Inline fixtures are written here in each framework's format (the real files are in
the corpus manifest, tests/fixtures/frameworks/frameworks_corpus.json); the model tables come from
the frameworks' own code (ropelaw/data/presets_maxtext.json from AI-Hypercomputer/maxtext's configs by
regenerate.py) and the Hub configs of tests/configs.
"""

from __future__ import annotations

import json
import math
import pathlib

import pytest

from ropelaw.cli import main
from ropelaw.lint.check import lint_config
from ropelaw.lint.loader import ModelNeeded, NotARopeConfig, load_config

ROOT = pathlib.Path(__file__).resolve().parents[1]
HF = ROOT / "tests" / "configs"
PRESETS = ROOT / "ropelaw" / "data"


def lint(tmp_path, name, text, **kw):
    p = tmp_path / name
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)
    return lint_config(load_config(str(p), **kw))


def setup(r, i=0):
    a = r.layers[i]
    s = a.spec
    return s.d, s.base, s.train_len, a.length, s.scheme


# ------------------------------------------------------------------------------------------- MaxText
GPT_OSS = """# model config for gpt-oss-20b (written here in the format of MaxText's configs/models/gpt-oss-20b.yml)
base_emb_dim: 2880
base_num_query_heads: 64
base_num_kv_heads: 8
head_dim: 64
sliding_window_size: 128
rope_type: "yarn"
rope_max_timescale: 150_000
max_position_embeddings: 131072
original_max_position_embeddings: 4096
rope_factor: 32
beta_fast: 32
beta_slow: 1
rope_interleave: false
rope_truncate: false
rope_attention_scaling: true
base_num_decoder_layers: 24
decoder_block: "gpt_oss"
"""


def test_maxtext_gpt_oss_model_file(tmp_path):
    """configs/models/gpt-oss-20b.yml over base.yml: d 64, rope_max_timescale 150,000, YaRN x32 from 4,096
    (YarnRotaryEmbedding), trained at base.yml's max_target_length 2,048 with the scheme from step 0;
    alternate layers attend a window of 128 (GPT_OSS_ATTENTION_PATTERN); rope_attention_scaling: the
    q/k are scaled by 0.1 ln 32 + 1, the factor transformers gives openai/gpt-oss-20b's config.json.
    Before: the generic table, base 10,000, plain RoPE, 'ok'."""
    r = lint(tmp_path, "models/gpt-oss-20b.yml", GPT_OSS)
    assert r.config.arch == "maxtext gpt-oss-20b"
    assert setup(r, 0) == (64, 150000, 2048, 131072, "yarn") and setup(r, 1)[:3] == (64, 150000, 2048)
    s = r.layers[0].spec
    assert s.param_dict() == {"factor": 32, "original_max_position_embeddings": 4096, "beta_fast": 32, "beta_slow": 1,
                              "truncate": False}
    assert s.pretrained_with_scheme
    assert r.layers[1].window == 128 and r.layers[1].length == 128
    assert r.layers[0].scheme_result.attention_factor == pytest.approx(0.1 * math.log(32) + 1, rel=1e-15)
    d = r.setup()["derived"]
    assert d["base"]["from"] == "rope_max_timescale" and d["base"]["line"] == 8
    assert d["train_len"]["from"].startswith("max_target_length of MaxText base.yml")
    assert any("float32" in n for n in r.config.notes) and r.config.dtype.raw == "bfloat16"
    assert r.config.unread == []


def test_maxtext_distillation_student_and_teacher_bounds_by_brute_force():
    """The distillation example's student (d=128) and teacher (d=64) show the same bound, 1,055,955: derived
    here again, apart from ropelaw's theory code. Both load weights, so YaRN x32 is Liu et al.'s extension of a
    plain-RoPE model trained at 32,768 tokens: the critical pair is the first whose plain period 2 pi base^(2i/d)
    exceeds 32,768 (brute force over the pairs, mpmath at 30 digits), and YaRN (original 4,096, beta_slow 1)
    divides that pair's frequency by the whole factor (its period is above 4,096 / beta_slow). Equal because
    the two critical pairs sit at the same fraction of the head: 46 / 64 = 23 / 32 = 0.71875."""
    import mpmath

    mpmath.mp.dps = 30
    r = lint_config(load_config(str(ROOT / "tests/fixtures/frameworks/maxtext/distillation_gpt_oss.yml")))
    seen = {}
    for g in r.layers:
        d, base, train = g.spec.d, mpmath.mpf(g.spec.base), g.spec.train_len
        pair = next(i for i in range(d // 2) if 2 * mpmath.pi * base ** (mpmath.mpf(2 * i) / d) > train)
        period = 2 * mpmath.pi * base ** (mpmath.mpf(2 * pair) / d)
        assert period > mpmath.mpf(4096) / 1  # past original / beta_slow: fully interpolated
        want = 32 * period
        assert g.bound.extrapolation_bound == pytest.approx(float(want), rel=1e-12), g.label
        seen[g.label.split()[0]] = (d, pair, int(want))
    assert seen == {"student": (128, 46, 1055955), "teacher": (64, 23, 1055955)}


def test_maxtext_llama31_from_the_model_name(tmp_path):
    """llama3.1-8b.yml sets no rope_type: MaxText picks LLaMARotaryEmbedding because model_name starts with
    llama3.1 (attentions.py), whose _apply_scaling_factor hard-codes factor 8, low 1, high 4, original 8,192."""
    text = ("base_emb_dim: 4096\nbase_num_query_heads: 32\nbase_num_kv_heads: 8\nhead_dim: 128\n"
            "rope_max_timescale: 500_000\ndecoder_block: \"llama2\"\n")
    r = lint(tmp_path, "models/llama3.1-8b.yml", text)
    assert setup(r) == (128, 500000, 2048, 2048, "llama3")
    assert r.layers[0].spec.param_dict() == {"factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                                             "original_max_position_embeddings": 8192}
    plain = lint(tmp_path, "models/llama3-8b.yml", text)  # the same keys under another name: plain RoPE
    assert setup(plain) == (128, 500000, 2048, 2048, "default")


def test_maxtext_user_config_composes_base_model_and_overrides(tmp_path):
    """A config with base_config: base.yml and model_name: the model file is merged OVER the file
    (pyconfig.py: base, model, then command-line overrides), so the file's rope_max_timescale loses to
    the model's unless override_model_config; max_target_length comes from the file."""
    text = "base_config: base.yml\nmodel_name: gpt-oss-20b\nmax_target_length: 8192\nrope_max_timescale: 10000\n"
    r = lint(tmp_path, "run.yml", text)
    assert setup(r) == (64, 150000, 8192, 131072, "yarn")
    # override_model_config keeps the *overrides'* keys (command line, keyword arguments) from the model file, not
    # the config file's: pyconfig.py merges base chain (this file), model file, overrides; maxtext==0.2.4's own
    # pyconfig composes run2.yml with rope_max_timescale 150000 (tests/differential/test_diff_maxtext.py)
    own = lint(tmp_path, "run2.yml", text + "override_model_config: true\n")
    assert own.layers[0].spec.base == 150000
    sh = tmp_path / "run.sh"
    sh.write_text(f"python3 -m maxtext.train {tmp_path / 'run.yml'} rope_max_timescale=10000 "
                  "override_model_config=true\n")
    assert lint_config(load_config(str(sh))).layers[0].spec.base == 10000
    with pytest.raises(ModelNeeded, match="names a MaxText model file"):
        lint(tmp_path, "run3.yml", "base_config: base.yml\nmodel_name: my-model\n")
    local = tmp_path / "models" / "my-model.yml"
    local.parent.mkdir()
    local.write_text("head_dim: 96\nrope_max_timescale: 40000\nbase_num_query_heads: 8\n")
    assert setup(lint(tmp_path, "run3.yml", "base_config: base.yml\nmodel_name: my-model\n"))[:2] == (96, 40000)


def test_maxtext_mla_and_unmodelled_paths(tmp_path):
    """MLA rotates qk_rope_head_dim with YaRN; without rope_attention_scaling the q/k are not scaled (1.0:
    DeepSeek's mscale is in the softmax scale), as transformers gives DeepSeek-V3's config.json. A decoder
    block whose rotary ropelaw does not model (llama4's NoPE layers, MRoPE) is RV030, never plain RoPE;
    gpt3 has no rotary."""
    text = ("base_emb_dim: 7168\nbase_num_query_heads: 128\nattention_type: \"mla\"\nqk_rope_head_dim: 64\n"
            "rope_type: \"yarn\"\nrope_max_timescale: 10_000\nmax_position_embeddings: 163840\nrope_factor: 40\n"
            "decoder_block: \"deepseek\"\n")
    r = lint(tmp_path, "models/deepseek3-671b.yml", text)
    hf = lint_config(load_config(str(HF / "deepseek-v3.json")))
    assert setup(r)[:2] == (64, 10000) and setup(r)[4] == "yarn"
    assert r.layers[0].scheme_result.attention_factor == hf.layers[0].scheme_result.attention_factor == 1.0
    nope = lint(tmp_path, "models/llama4-17b-16e.yml", "base_emb_dim: 5120\nrope_type: \"llama3.1\"\n"
                                                         "nope_layer_interval: 4\ndecoder_block: \"llama4\"\n")
    (f,) = [f for f in nope.findings if f.code == "RV030"]
    assert "decoder_block 'llama4'" in f.message and "not modelled" in f.message
    with pytest.raises(NotARopeConfig, match="gpt3 applies no rotary"):
        lint(tmp_path, "models/gpt3-6b.yml", "base_emb_dim: 4096\ndecoder_block: \"gpt3\"\n")


def test_maxtext_base_yml_reads_every_rope_key(tmp_path):
    """base.yml itself (model_name default): rope_max_timescale 10,000 at max_target_length 2,048; every RoPE
    key of base.yml is weighed (none unread: they belong to other models' paths)."""
    table = json.loads((PRESETS / "presets_maxtext.json").read_text())
    text = "".join(f"{k}: {json.dumps(v)}\n" for k, v in table["base"]["values"].items()) + \
        "".join(f"{k}: 1\n" for k in table["rope_keys"] if k not in table["base"]["values"])
    r = lint(tmp_path, "base.yml", text)
    assert setup(r) == (128, 10000, 2048, 2048, "default") and r.config.unread == []


def test_maxtext_table_is_read_from_maxtexts_configs():
    table = json.loads((PRESETS / "presets_maxtext.json").read_text())
    assert table["package"].startswith("AI-Hypercomputer/maxtext@")
    oss = table["presets"]["gpt-oss-20b"]
    assert oss["values"]["rope_max_timescale"] == 150000 and oss["values"]["rope_factor"] == 32
    assert oss["source"].endswith("src/maxtext/configs/models/gpt-oss-20b.yml")
    assert table["base"]["values"]["max_target_length"] == 2048 and len(table["presets"]) >= 50


# --------------------------------------------------------------------------------------- llm-foundry
DBRX = """models:
- model_name: dbrx-9b
  model:
    name: mpt_causal_lm
    d_model: 2048
    n_heads: 16
    attn_config:
      rope: true
      alibi: false
      attn_impl: flash
      rope_theta: 500000
    max_seq_len: 4096
precision: amp_bf16
"""


def test_llmfoundry_dbrx_9b(tmp_path):
    """An eval file's first model: MPT with attn_config rope true, rope_theta 500,000, d_model 2,048 / 16 heads
    (flash-attn's RotaryEmbedding over d_model // n_heads = 128), max_seq_len 4,096; amp_bf16 is Composer's
    bf16 autocast over float32 parameters. Before: 'no RoPE settings found', exit 0."""
    r = lint(tmp_path, "dbrx-9b.yaml", DBRX)
    assert setup(r) == (128, 500000, 4096, 4096, "default")
    assert r.config.dtype.raw == "bf16-mixed" and r.config.unread == []
    assert r.setup()["derived"]["base"]["from"] == "models.0.model.attn_config.rope_theta"


def test_llmfoundry_hf_rope_and_positions_it_does_not_rotate(tmp_path):
    hf = DBRX.replace("      rope_theta: 500000\n", "      rope_theta: 500000\n      rope_impl: hf\n"
                      "      rope_hf_config:\n        type: linear\n        factor: 2.0\n")
    r = lint(tmp_path, "hf.yaml", hf)
    assert setup(r) == (128, 500000, 4096, 4096, "linear") and r.layers[0].spec.param("factor") == 2.0
    xpos = DBRX.replace("      rope_theta: 500000\n", "      rope_theta: 500000\n      rope_dail_config:\n"
                        "        type: xpos\n")
    assert "RV030" in [f.code for f in lint(tmp_path, "x.yaml", xpos).findings]
    alibi = DBRX.replace("rope: true", "rope: false").replace("alibi: false", "alibi: true")
    with pytest.raises(NotARopeConfig, match="llm-foundry MPT model uses ALiBi"):
        lint(tmp_path, "a.yaml", alibi)
    with pytest.raises(NotARopeConfig, match="llm-foundry MPT model uses learned positions"):  # not 'OLMo'
        lint(tmp_path, "mpt-1b.yaml", "model:\n  name: mpt_causal_lm\n  d_model: 2048\n  n_heads: 16\n"
                                      "  max_seq_len: 2048\n")


def test_llmfoundry_hf_causal_lm(tmp_path):
    """hf_causal_lm names its model: pretrained false trains Llama 3.1 8B from its config at max_seq_len
    with the Llama 3.1 bands from step 0; pretrained (default) fine-tunes it at max_seq_len; a model nobody
    gives is RV031."""
    text = ("variables:\n  max_seq_len: 2048\n  model_name: meta-llama/Meta-Llama-3.1-8B\n"
            "max_seq_len: ${variables.max_seq_len}\nmodel:\n  name: hf_causal_lm\n"
            "  pretrained_model_name_or_path: ${variables.model_name}\n  pretrained: false\nprecision: amp_bf16\n")
    r = lint(tmp_path, "hf-llama.yaml", text)
    assert setup(r) == (128, 500000, 2048, 131072, "llama3") and r.layers[0].spec.pretrained_with_scheme
    ft = lint(tmp_path, "ft.yaml", text.replace("  pretrained: false\n", ""))
    assert setup(ft)[2] == 8192 and ft.config.tune_len.raw == 2048 and not ft.layers[0].spec.pretrained_with_scheme
    with pytest.raises(ModelNeeded, match="databricks/dbrx-instruct"):
        lint(tmp_path, "dbrx.yaml", text.replace("${variables.model_name}", "databricks/dbrx-instruct"))


# ------------------------------------------------------------------------------------------ Levanter
LEVANTER = """model:
  type: llama
  hidden_dim: 4096
  num_heads: 32
  num_kv_heads: 8
  seq_len: 4096
  rope:
{rope}
trainer:
  mp: p=f32,c=bfloat16
"""


def test_levanter_rope_blocks(tmp_path):
    """model.rope with Levanter's defaults (layers/rotary.py): llama3 alone is theta 500,000 and the Llama 3.1
    bands; default / linear divide inv_freq by factor; seq_len is the training length; the jmp policy
    p=f32,c=bfloat16 is bf16 autocast over float32 parameters."""
    r = lint(tmp_path, "l3.yaml", LEVANTER.format(rope='    type: "llama3"'))
    assert setup(r) == (128, 500000, 4096, 4096, "llama3") and r.layers[0].spec.pretrained_with_scheme
    assert r.layers[0].spec.param_dict() == {"factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                                             "original_max_position_embeddings": 8192}
    assert r.config.dtype.raw == "bf16-mixed"
    d = lint(tmp_path, "d.yaml", LEVANTER.format(rope="    type: default\n    theta: 10000\n    factor: 1.0"))
    assert setup(d) == (128, 10000, 4096, 4096, "default")
    lin = lint(tmp_path, "lin.yaml", LEVANTER.format(rope="    type: linear\n    factor: 4.0"))
    assert setup(lin)[4] == "linear" and lin.layers[0].spec.param("factor") == 4.0
    loaded = lint(tmp_path, "sft.yaml", LEVANTER.format(rope='    type: "llama3"') + "initialize_from_hf: true\n")
    assert not loaded.layers[0].spec.pretrained_with_scheme


def test_levanter_yarn_is_not_transformers_yarn(tmp_path):
    """Levanter's YarnRotaryEmbeddings divides the positions by the factor too: with factor 1 it is plain
    RoPE (read so); with a larger factor it is RV030, not a YaRN ropelaw would invent."""
    one = lint(tmp_path, "y1.yaml", LEVANTER.format(rope="    type: yarn\n    factor: 1.0\n"
                                                         "    original_max_position_embeddings: 256"))
    assert setup(one) == (128, 10000, 4096, 4096, "default") and one.config.unread == []
    four = lint(tmp_path, "y4.yaml", LEVANTER.format(rope="    type: yarn\n    factor: 4.0"))
    (f,) = [f for f in four.findings if f.code == "RV030"]
    assert "divides the positions by the factor" in f.message


def hub_cache(tmp_path, monkeypatch, name, theta, max_pos):
    """A Hugging Face cache holding ``name``'s config.json, written here with values no published model has
    (a reading of them proves that checkpoint was the one read), where huggingface_hub finds it: refs/main names
    the snapshot's commit."""
    repo = tmp_path / "hub" / ("models--" + name.replace("/", "--"))
    snap = repo / "snapshots" / ("0" * 40) / "config.json"
    snap.parent.mkdir(parents=True)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text("0" * 40)
    snap.write_text(json.dumps({"model_type": "llama", "hidden_size": 2048, "num_attention_heads": 16,
                                "num_key_value_heads": 8, "num_hidden_layers": 4, "rope_theta": theta,
                                "max_position_embeddings": max_pos}))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))


@pytest.mark.parametrize("kind, model, ref", [
    ("mistral", "", "mistralai/Mistral-7B-v0.1"),  # mistral.py line 84: hard-coded
    ("llama", "", "NousResearch/Llama-2-7b-hf"),  # llama.py line 80: the reference_checkpoint field's default
    ("llama", "  reference_checkpoint: org/own-llama\n", "org/own-llama"),  # the field, set
    ("mistral", "  reference_checkpoint: org/own-llama\n", "mistralai/Mistral-7B-v0.1"),  # Mistral ignores it
    ("gemma2", "", "google/gemma-2-2b"),  # gemma.py line 481: the parameter's default
])
def test_levanter_initialize_from_hf_true_is_the_class_checkpoint(tmp_path, monkeypatch, kind, model, ref):
    """``initialize_from_hf: true`` with ``use_hf_model_config`` (main/train_lm.py lines 79-96): the model is the
    Hugging Face config of ``config.model.hf_checkpoint_converter()``'s reference checkpoint (stanford-crfm/
    levanter@9263f81e): the ``reference_checkpoint`` field where the class reads it, else the class's own."""
    hub_cache(tmp_path, monkeypatch, ref, 123456.0, 12288)
    text = f"model:\n  type: {kind}\n{model}initialize_from_hf: true\nuse_hf_model_config: true\ntrainer:\n  mp: f32\n"
    r = lint(tmp_path, "cont.yaml", text)
    assert setup(r) == (128, 123456.0, 12288, 12288, "default")
    assert any(f"Levanter trains {ref} at" in n for n in r.config.notes)


CONTINUED = "frameworks-examples/levanter/config/llama2_7b_continued.yaml"  # initialize_from_hf: true (line 6)


@pytest.mark.parametrize("value", [None, "false", '""', "'false'"])
def test_levanter_use_hf_model_config_without_initialize_from_hf(tmp_path, monkeypatch, value):
    """``use_hf_model_config: true`` is read only inside ``if config.initialize_from_hf:`` (stanford-crfm/levanter@
    9263f81e main/train_lm.py lines 79-96; draccus decodes false and "false" as False, "" stays an empty,
    false-y name): with initialize_from_hf absent, false or empty the run builds the file's own model section
    from scratch. Truth: Levanter's config without the ignored key, i.e. ropelaw's reading of the same file with
    use_hf_model_config deleted, never the class's default checkpoint (planted in a Hub cache with values no model
    has, so reading it would show)."""
    import os

    corpus = pathlib.Path(os.environ.get("ROPELAW_CORPUS", ROOT.parent / "shared" / "corpus"))
    if not (corpus / CONTINUED).is_file():
        pytest.skip(f"{CONTINUED} is not in {corpus}")
    hub_cache(tmp_path, monkeypatch, "NousResearch/Llama-2-7b-hf", 123456.0, 12288)
    text = (corpus / CONTINUED).read_text()
    assert "initialize_from_hf: true\n" in text and "use_hf_model_config: true\n" in text
    mutated = text.replace("initialize_from_hf: true\n", "" if value is None else f"initialize_from_hf: {value}\n")
    r = lint(tmp_path, "a/continued.yaml", mutated)
    truth = lint(tmp_path, "b/continued.yaml", mutated.replace("use_hf_model_config: true\n", ""))
    assert setup(r) == setup(truth) == (128, 10000.0, 2048, 2048, "default")  # LlamaConfig's defaults
    assert r.layers[0].spec.pretrained_with_scheme == truth.layers[0].spec.pretrained_with_scheme
    assert r.config.arch == truth.config.arch == "levanter llama"
    line = 6 if value is None else 7
    assert any(f"use_hf_model_config: true (line {line}) is ignored" in n for n in r.config.notes)
    # the unmutated file and the string "true" (draccus's True) read the class's checkpoint
    for spelled in ("true", '"true"'):
        named = lint(tmp_path, f"c/{len(spelled)}.yaml", text.replace("initialize_from_hf: true",
                                                                     f"initialize_from_hf: {spelled}"))
        assert setup(named) == (128, 123456.0, 12288, 12288, "default")


def test_levanter_eval_harness_reads_the_checkpoint(tmp_path, monkeypatch):
    """``checkpoint_is_hf: true`` (eval_harness.py lines 691-697): the harness loads ``checkpoint_path`` with its
    own Hugging Face config, not the file's model section; the note says it evaluates, not trains."""
    hub_cache(tmp_path, monkeypatch, "org/evaluated", 250000.0, 6144)
    text = ("model:\n  type: llama\n  seq_len: 1024\ncheckpoint_path: org/evaluated\ncheckpoint_is_hf: true\n"
            "trainer:\n  mp: f32\n")
    r = lint(tmp_path, "eval.yaml", text)
    assert setup(r) == (128, 250000.0, 6144, 6144, "default")
    assert any("eval harness loads org/evaluated" in n for n in r.config.notes)
    with pytest.raises(ModelNeeded, match="org/not-cached"):
        lint(tmp_path, "eval2.yaml", text.replace("org/evaluated", "org/not-cached"))


@pytest.mark.parametrize("kind, want", [
    ("mixtral", (128, 10000.0, 8192)),  # mixtral.py lines 64-68: seq_len 8192, hidden 4096, 32 heads; theta 1e4
    ("olmo2", (128, 10000.0, 4096)),  # olmo.py lines 53-57
    ("gemma3", (256, 10000.0, 8192)),  # gemma.py lines 83-89: head_dim 256
    ("qwen3", (128, 10000.0, 2048)),  # Qwen3Config(LlamaConfig): llama.py lines 54-59
])
def test_levanter_model_class_defaults(tmp_path, kind, want):
    """A model section that sets nothing but its type runs its class's defaults (stanford-crfm/levanter@9263f81e
    src/levanter/models/*.py), each named in the output."""
    r = lint(tmp_path, f"{kind}.yaml", f"model:\n  type: {kind}\ntrainer:\n  mp: f32\n")
    assert setup(r)[:3] == want
    assert "Config default (stanford-crfm/levanter@9263f81e" in str(r.config.train_len.where)


def test_levanter_types_without_rope_and_unregistered(tmp_path):
    """gpt2 (learned), gpt2_hyena (no attention) and whisper are not RoPE; backpack and olmo (v1) are not
    registered at 9263f81e (LmConfig.register_subclass): said, never read as a Llama."""
    for kind, said in (("gpt2_hyena", "Hyena"), ("whisper", "Whisper")):
        with pytest.raises(NotARopeConfig, match=said):
            lint(tmp_path, f"{kind}.yaml", f"model:\n  type: {kind}\n  seq_len: 1024\ntrainer:\n  mp: f32\n")
    for kind in ("backpack", "olmo"):
        with pytest.raises(NotARopeConfig, match="not one of the model types registered"):
            lint(tmp_path, f"{kind}.yaml", f"model:\n  type: {kind}\n  seq_len: 1024\ntrainer:\n  mp: f32\n")


def test_levanter_lora_reads_the_named_model(tmp_path, monkeypatch):
    """main/lora_lm.py (9263f81e lines 56-77): LoRA adapters on ``initialize_from_hf``'s Hugging Face config
    (was 'no RoPE settings found'); ``max_train_length`` resizes Pos: the fine-tuning length; a model not at
    hand is RV031."""
    hub_cache(tmp_path, monkeypatch, "org/lora-base", 321000.0, 12288)
    text = ("initialize_from_hf: org/lora-base\npeft_save_path: out\nmax_train_length: 2048\n"
            "trainer:\n  mp: p=f32,c=bfloat16\n")
    r = lint(tmp_path, "lora.yaml", text)
    assert setup(r) == (128, 321000.0, 12288, 12288, "default")
    assert r.config.tune_len.raw == 2048 and r.config.dtype.raw == "bf16-mixed"
    assert any("within the model's training length" in n for n in r.config.notes)
    longer = lint(tmp_path, "lora2.yaml", text.replace("2048", "16384"))
    assert longer.config.tune_len.raw == 16384 and "context extension" in longer.config.tune_len.where
    with pytest.raises(ModelNeeded, match="org/elsewhere"):
        lint(tmp_path, "lora3.yaml", text.replace("org/lora-base", "org/elsewhere"))



def test_levanter_model_reference_names_a_revision(tmp_path, monkeypatch):
    """Levanter's ``<model_name_or_path>@<revision>`` (levanter@9263f81e compat/hf_checkpoints.py
    ``RepoRef.from_string``, as lora/mpt_biomed.yaml names ``mosaicml/mpt-7b@68e1a8e0...``): the model read at
    that revision from the cache (a commit hash names its own snapshot); a revision the cache lacks is RV031 with
    the command that fetches that revision, not a path named 'org/name@rev'."""
    hub_cache(tmp_path, monkeypatch, "org/pinned", 271828.0, 8192)
    text = "initialize_from_hf: org/pinned@{rev}\npeft_save_path: out\nmax_train_length: 2048\ntrainer:\n  mp: f32\n"
    r = lint(tmp_path, "lora.yaml", text.format(rev="0" * 40))
    assert setup(r) == (128, 271828.0, 8192, 8192, "default") and r.config.model.revision == "0" * 40
    with pytest.raises(ModelNeeded) as exc:
        lint(tmp_path, "lora2.yaml", text.format(rev="1" * 40))
    assert f"`hf download org/pinned config.json --revision {'1' * 40}`" in exc.value.fix
    assert "is a path" not in str(exc.value) and (exc.value.line, exc.value.column) == (1, 1)

def test_levanter_sampling_reads_the_checkpoint(tmp_path, monkeypatch):
    """main/sample_lm.py and eval_lm.py (9263f81e: ``hf_checkpoint`` xor ``checkpoint_path``) load the Hugging
    Face checkpoint with its own config (``load_pretrained``): was 'no RoPE settings found'."""
    hub_cache(tmp_path, monkeypatch, "org/sampled", 77000.0, 2048)
    text = "hf_checkpoint: org/sampled\ntrainer:\n  mp: p=bfloat16,c=bfloat16\nengine:\n  max_seqs: 8\n"
    r = lint(tmp_path, "sample.yaml", text)
    assert setup(r) == (128, 77000.0, 2048, 2048, "default") and r.config.dtype.raw == "bf16"
    assert any("sample_lm / eval_lm loads org/sampled with its own config" in n for n in r.config.notes)
    with pytest.raises(ModelNeeded, match="org/unsampled"):
        lint(tmp_path, "sample2.yaml", text.replace("org/sampled", "org/unsampled"))


def test_levanter_export_config_without_trainer(tmp_path):
    """An export / conversion config (config/export/*.yaml: a model section, no trainer) is Levanter's."""
    r = lint(tmp_path, "export.yaml", "model:\n  type: qwen3\n  seq_len: 4096\n  hidden_dim: 128\n  num_heads: 8\n"
                                      "  rope:\n    type: llama3\n")
    assert setup(r) == (16, 500000, 4096, 4096, "llama3")


# ------------------------------------------------------------------------------------- LLaMA-Factory
LF = """### model
model_name_or_path: {model}
trust_remote_code: true
rope_scaling: yarn
### method
stage: sft
do_train: true
finetuning_type: full
### dataset
template: qwen
cutoff_len: 131072
### train
bf16: true
"""


def test_llamafactory_yarn_factor_from_cutoff_len(tmp_path):
    """configure_rope (llamafactory==0.9.5 model_utils/rope.py): Qwen3-8B's 40,960 positions, cutoff_len
    131,072: factor ceil(131,072 / 40,960) = 4, original 40,960, max_position_embeddings 163,840; the run
    fine-tunes at 131,072 (the tuning length). Attention factor 0.1 ln 4 + 1 (transformers' YaRN)."""
    r = lint(tmp_path, "qwen3.yaml", LF.format(model="Qwen/Qwen3-8B"))
    assert setup(r) == (128, 1e6, 40960, 163840, "yarn")
    assert r.layers[0].spec.param_dict() == {"factor": 4.0, "original_max_position_embeddings": 40960}
    assert r.config.tune_len.raw == 131072 and r.layers[0].spec.tune_len == 131072
    assert "ceil(131,072 / max_position_embeddings 40,960) = 4" in r.setup()["derived"]["params"]["factor"]["from"]
    assert r.layers[0].scheme_result.attention_factor == pytest.approx(0.1 * math.log(4) + 1, rel=1e-15)


def test_llamafactory_with_and_without_the_model_config(tmp_path, capsys):
    """A model ropelaw cannot find is one RV031 naming it; --model-config gives it (tests/configs/qwen3-8b.json,
    the Hub's config.json); a cutoff within the model's length disables LLaMA-Factory's scaling."""
    p = tmp_path / "lf.yaml"
    p.write_text(LF.format(model="my-org/private-qwen"))
    assert main(["lint", str(p)]) == 1
    out = capsys.readouterr().out
    assert out.count("RV031 model-config-needed") == 1 and "my-org/private-qwen" in out
    r = lint_config(load_config(str(p), model_config=str(HF / "qwen3-8b.json")))
    assert setup(r) == (128, 1e6, 40960, 163840, "yarn")
    short = lint(tmp_path, "short.yaml", LF.format(model="Qwen/Qwen3-8B").replace("131072", "32768"))
    assert setup(short) == (128, 1e6, 40960, 40960, "default")
    assert any("disables rope scaling" in n for n in short.config.notes)
    packed = lint(tmp_path, "p.yaml", LF.format(model="Qwen/Qwen3-8B").replace("131072", "81921") + "packing: true\n")
    assert packed.layers[0].spec.param("factor") == 2.0  # model_max_length 81,920 = 2 x 40,960 (cutoff_len - 1)


def test_llamafactory_train_from_scratch_reads_cutoff_len_even_when_not_a_number(tmp_path, capsys):
    """train_from_scratch pre-trains at cutoff_len (model_max_length): 8192 is the training length, said in a note;
    a cutoff_len that is no number ('abc') is RV001 at its key (exit 1), never ropelaw's own failure (formatting
    the note's length raised TypeError: RE104, exit 3)."""
    text = "model_name_or_path: Qwen/Qwen3-8B\nstage: pt\ntrain_from_scratch: true\ncutoff_len: {}\n"
    ok = lint(tmp_path, "ok.yaml", text.format(8192), model_config=str(HF / "qwen3-8b.json"))
    assert ok.config.train_len.raw == 8192 and ok.config.train_len.key == "cutoff_len"
    assert any("pre-trains a new model from Qwen/Qwen3-8B's config at 8,192 tokens" in n for n in ok.config.notes)
    p = tmp_path / "lf.yaml"
    p.write_text(text.format("abc"))
    assert main(["lint", str(p), "--model-config", str(HF / "qwen3-8b.json")]) == 1
    out = capsys.readouterr().out
    assert "lf.yaml:4:1: RV001 invalid-value-type cutoff_len must be a number, got string 'abc'" in out
    assert "RE104" not in out


# ------------------------------------------------------------------------------------- NeMo (issue 22)
NEMO_ARCHIVE = """mcore_gpt: true
micro_batch_size: 1
encoder_seq_length: 8192
max_position_embeddings: 8192
num_layers: 32
hidden_size: 4096
num_attention_heads: 32
position_embedding_type: rope
rotary_base: 500000
seq_len_interpolation_factor: null
precision: bf16
megatron_amp_O2: true
target: nemo.collections.nlp.models.language_modeling.megatron_gpt_model.MegatronGPTModel
nemo_version: 2.0.0
"""


def test_nemo_archive_model_config_is_the_model_section(tmp_path):
    """A .nemo archive's model_config.yaml is NeMo's cfg.model saved at the top level (target, nemo_version):
    read as the model: section. Before: the generic table (no dtype, the precision ignored)."""
    r = lint(tmp_path, "model_config.yaml", NEMO_ARCHIVE)
    assert r.config.arch == "nemo model_config" and setup(r) == (128, 500000, 8192, 8192, "default")
    assert r.config.dtype.raw == "bf16" and r.setup()["derived"]["base"]["from"] == "rotary_base"


NEMO_RUN = """trainer:
  precision: bf16
model:
  mcore_gpt: true
  encoder_seq_length: 8192
  max_position_embeddings: 32768
  hidden_size: 4096
  num_attention_heads: 32
  position_embedding_type: rope
  seq_len_interpolation_factor: 4
"""


def test_nemo_interpolation_from_the_first_step(tmp_path):
    """megatron-core's RotaryEmbedding divides the positions by seq_len_interpolation_factor at every step, so a
    run from no weights is pre-trained with it (pretraining_with_scheme, as torchtitan and Megatron-LM runs are
    read); restore_from_path (SFT, continued training) makes it a context extension."""
    r = lint(tmp_path, "run.yaml", NEMO_RUN)
    assert setup(r) == (128, 10000, 8192, 32768, "linear") and r.layers[0].spec.pretrained_with_scheme
    assert r.setup()["derived"]["pretrained_with_scheme"]["value"] is True
    ext = lint(tmp_path, "sft.yaml", NEMO_RUN + "  restore_from_path: /ckpt/base.nemo\n")
    assert not ext.layers[0].spec.pretrained_with_scheme
    assert any("starts from existing weights (model.restore_from_path)" in n for n in ext.config.notes)


# ------------------------------------------------------------------------------------- litgpt fine-tunes
def test_litgpt_finetune_reads_the_checkpoints_config(tmp_path):
    """litgpt's finetune scripts load checkpoint_dir/model_config.yaml (written by litgpt download from
    Config.from_name(<repo id>)): without it on disk, the named Config of the directory (or its Hub repository
    id), or --model-config; the run tunes the model at train.max_seq_length. Before: skipped."""
    text = "checkpoint_dir: checkpoints/meta-llama/Meta-Llama-3.1-8B\nprecision: bf16-true\ntrain:\n" \
           "  max_seq_length: 512\n"
    r = lint(tmp_path, "full.yaml", text)
    assert setup(r) == (128, 500000, 8192, 131072, "llama3")
    assert r.config.tune_len.raw == 512 and r.layers[0].spec.tune_len is None  # within 8,192: no extension
    gemma = lint(tmp_path, "g.yaml", text.replace("meta-llama/Meta-Llama-3.1-8B", "google/gemma-2-9b"))
    assert [a.label for a in gemma.layers] == ["global layers", "local layers"] and setup(gemma)[:2] == (256, 10000)
    with pytest.raises(ModelNeeded, match="checkpoint_dir 'checkpoints/me/mine' names the model") as exc:
        lint(tmp_path, "m.yaml", text.replace("meta-llama/Meta-Llama-3.1-8B", "me/mine"))
    # the fix names the file litgpt reads (model_config.yaml), never a config.json litgpt would not read
    assert "config.json" not in str(exc.value) + exc.value.fix and "model_config.yaml" in exc.value.fix
    assert (exc.value.line, exc.value.column) == (1, 1)
    ck = tmp_path / "checkpoints" / "me" / "mine"
    ck.mkdir(parents=True)
    (ck / "model_config.yaml").write_text("block_size: 4096\nn_embd: 2048\nn_head: 16\nrope_base: 100000\n"
                                          "rotary_percentage: 1.0\n")
    given = lint(tmp_path, "m.yaml", text.replace("meta-llama/Meta-Llama-3.1-8B", "me/mine"), model_config=str(ck))
    assert setup(given) == (128, 100000, 4096, 4096, "default")  # --model-config: the directory holding it
    own = lint(tmp_path, "m.yaml", text.replace("checkpoints/meta-llama/Meta-Llama-3.1-8B", str(ck)))
    assert setup(own) == (128, 100000, 4096, 4096, "default") and own.config.tune_len.raw == 512


def test_maxtext_table_regenerates_from_maxtexts_source():
    """With MaxText's configs at the pinned commit under ROPELAW_FRAMEWORK_DL (maxtext-<commit>/src/maxtext/configs,
    a git archive of AI-Hypercomputer/maxtext), the shipped table is exactly what scripts/presets.py reads."""
    import os
    import sys

    sys.path.insert(0, str(ROOT / "scripts"))
    import presets as regenerate

    dl = pathlib.Path(os.environ.get("ROPELAW_FRAMEWORK_DL", ROOT.parent / "shared" / "dl"))
    commit = regenerate.MAXTEXT[1]
    if not (dl / f"maxtext-{commit}").is_dir():
        pytest.skip(f"no MaxText source at {dl}/maxtext-{commit} (ROPELAW_FRAMEWORK_DL)")
    table = regenerate.build(str(dl), ("maxtext",))["maxtext"]
    assert regenerate.dump(table) == (PRESETS / "presets_maxtext.json").read_text()


MAXTEXT_SH = """#!/bin/bash
# written here after MaxText's launch scripts (src/maxtext/configs/experimental/*.sh)
export EXECUTABLE=train
MODEL=gpt-oss-20b
python3 -m maxtext.trainers.pre_train.$EXECUTABLE "${MAXTEXT_CONFIGS_DIR:-$PWD/src/maxtext/configs}"/base.yml \\
    run_name=test model_name=${MODEL} max_target_length=8192 \\
    per_device_batch_size=1 dtype=bfloat16 steps=10
"""


def test_maxtext_launch_script_overrides(tmp_path):
    """A script running MaxText's trainer: base.yml, then the model file of model_name, then the key=value
    words (command-line overrides, over the model file): gpt-oss-20b trained at max_target_length 8,192.
    A config the script names that is not on this machine is RV031, naming it."""
    r = lint(tmp_path, "train.sh", MAXTEXT_SH)
    assert r.config.arch == "maxtext gpt-oss-20b" and setup(r) == (64, 150000, 8192, 131072, "yarn")
    d = r.setup()["derived"]["train_len"]
    assert (d["from"], d["line"]) == ("max_target_length", 6)
    with pytest.raises(ModelNeeded, match="runs MaxText with the config"):
        lint(tmp_path, "other.sh", MAXTEXT_SH.replace("/base.yml", "/models/mine.yml"))
