"""Per-layer groups of Hugging Face configs (ropelaw/lint/layers/): the cases of issue 20.

The configs below are written here with the RoPE keys of the published files they name (gpt-oss-20b,
Llama 4 Scout's text_config, SmolLM3-3B); every expected number is derived here from the models'
documented layout, independently of the table: gpt-oss alternates sliding / full layers and applies
its one YaRN rotary (factor 32, attention factor 0.1 ln 32 + 1) to every layer; Llama 4 makes every
``no_rope_layer_interval``-th layer NoPE with full attention and chunks the others at
``attention_chunk_size``; SmolLM3's ``no_rope_layers`` lists 0 for its NoPE layers. That the table says
what the runtime does is ``tests/test_hf_layers.py``'s job (it runs transformers).
"""

from __future__ import annotations

import json
import math
import pathlib

import pytest

from ropelaw.cli import main
from ropelaw.lint import layers as layer_table
from ropelaw.lint.check import lint_config
from ropelaw.lint.loader import load_mapping

SEMANTICS = ("4.57.1", "5.23.0")

GPT_OSS = {  # openai/gpt-oss-20b config.json, RoPE and layer keys
    "model_type": "gpt_oss", "num_hidden_layers": 24, "head_dim": 64, "hidden_size": 2880,
    "num_attention_heads": 64, "num_key_value_heads": 8, "max_position_embeddings": 131072,
    "layer_types": ["sliding_attention", "full_attention"] * 12, "sliding_window": 128, "rope_theta": 150000,
    "rope_scaling": {"beta_fast": 32.0, "beta_slow": 1.0, "factor": 32.0, "original_max_position_embeddings": 4096,
                     "rope_type": "yarn", "truncate": False},
}
SCOUT = {  # meta-llama/Llama-4-Scout-17B-16E-Instruct text_config: RoPE and layer keys
    "model_type": "llama4", "text_config": {
        "model_type": "llama4_text", "num_hidden_layers": 48, "hidden_size": 5120, "head_dim": 128,
        "num_attention_heads": 40, "num_key_value_heads": 8, "attention_chunk_size": 8192, "no_rope_layers": [],
        "max_position_embeddings": 10485760, "rope_theta": 500000.0, "interleave_moe_layer_step": 1,
        "rope_scaling": {"factor": 16.0, "high_freq_factor": 1.0, "low_freq_factor": 1.0,
                         "original_max_position_embeddings": 8192, "rope_type": "llama3"}}}
SMOLLM3 = {  # HuggingFaceTB/SmolLM3-3B config.json: RoPE and layer keys
    "model_type": "smollm3", "num_hidden_layers": 36, "hidden_size": 2048, "num_attention_heads": 16,
    "num_key_value_heads": 4, "max_position_embeddings": 65536, "rope_theta": 5000000.0, "rope_scaling": None,
    "no_rope_layer_interval": 4, "no_rope_layers": [int((i + 1) % 4 != 0) for i in range(36)],
    "layer_types": ["full_attention"] * 36, "sliding_window": None, "use_sliding_window": False,
}


@pytest.fixture(params=SEMANTICS)
def semantics(request, monkeypatch):
    monkeypatch.setenv("ROPELAW_HF_SEMANTICS", request.param)
    return request.param


def groups(config: dict, **kw) -> dict:
    result = lint_config(load_mapping(config, **kw)).setup()
    return {g["layers"]: g for g in result["layers"]}, result


def test_gpt_oss_local_layers_run_its_one_yarn_rotary(semantics):
    by, result = groups(GPT_OSS)
    assert set(by) == {"global (12 layers)", "local (12 layers)"}
    yarn_attention = 0.1 * math.log(32) + 1  # YaRN's attention factor for s = 32 (Peng et al., eq. 22)
    for label, window, first in (("global (12 layers)", None, 1), ("local (12 layers)", 128, 0)):
        g = by[label]
        assert g["indices"] == list(range(first, 24, 2)) and g["count"] == 12
        assert g["window"] == window and g["rope"] is True
        assert g["spec"]["scheme"] == "yarn" and g["spec"]["params"]["factor"] == 32.0
        assert g["spec"]["base"] == 150000
        assert g["attention_factor"] == pytest.approx(yarn_attention, rel=1e-12)
    assert round(by["local (12 layers)"]["attention_factor"], 4) == 1.3466
    assert result["semantics"] == f"transformers {semantics}"


def test_llama4_scout_chunked_rope_layers_and_nope_layers(semantics):
    by, result = groups(SCOUT)
    nope = [i for i in range(48) if (i + 1) % 4 == 0]  # no_rope_layers is empty: one NoPE layer in 4
    assert set(by) == {"chunked 8,192 (36 layers)", "NoPE (12 layers)"}
    assert by["NoPE (12 layers)"]["indices"] == nope and by["NoPE (12 layers)"]["rope"] is False
    assert by["NoPE (12 layers)"]["chunk"] is None and by["NoPE (12 layers)"]["bounded_by"] == "nothing"
    chunked = by["chunked 8,192 (36 layers)"]
    assert chunked["indices"] == [i for i in range(48) if i not in nope] and chunked["count"] == 36
    assert chunked["chunk"] == 8192 and chunked["spec"]["scheme"] == "llama3"
    assert chunked["length"] == 8192 and "attention_chunk_size" in chunked["length_from"]
    assert not [f for f in result["findings"] if f["code"] in ("RL101", "RL102")]  # 8,192 is no extrapolation


def test_llama4_interval_key_sets_the_nope_layers(semantics):
    cfg = json.loads(json.dumps(SCOUT))
    cfg["text_config"]["no_rope_layer_interval"] = 3
    cfg["text_config"]["num_hidden_layers"] = 12
    by, _ = groups(cfg)
    assert by["NoPE (4 layers)"]["indices"] == [2, 5, 8, 11]


def test_smollm3_reports_its_nope_layers(semantics, capsys):
    by, result = groups(SMOLLM3)
    assert by["NoPE (9 layers)"]["indices"] == [i for i, r in enumerate(SMOLLM3["no_rope_layers"]) if r == 0]
    assert by["global (27 layers)"]["count"] == 27 and by["global (27 layers)"]["spec"]["base"] == 5e6
    rl105 = [f for f in result["findings"] if f["code"] == "RL105"]
    assert len(rl105) == 1 \
        and "NoPE (9 layers) apply no RoPE (layers 3, 7, 11, 15, 19, 23, 27, 31, ...)" in rl105[0]["message"]
    assert "nothing ropelaw models bounds them" in rl105[0]["message"]


def test_text_output_names_every_group(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("ROPELAW_HF_SEMANTICS", "5.23.0")
    p = tmp_path / "smollm3.json"
    p.write_text(json.dumps(SMOLLM3))
    assert main(["lint", "--verbose", str(p)]) in (0, 1)
    out = capsys.readouterr().out
    assert "global (27 layers): d=128, base 5,000,000" in out and "NoPE (9 layers): no RoPE, full attention" in out


MLLAMA = json.loads((pathlib.Path(__file__).parent / "fixtures" / "hf_runtime" / "mllama-cross-attention.json")
                    .read_text())  # Llama 3.2 Vision's text_config layout, written here with its RoPE and layer keys


def test_mllama_cross_attention_layers_are_their_own_group(semantics, capsys, tmp_path):
    """Mllama's text model (both versions, measured: tests/test_hf_layers.py and tests/test_hf_files.py run it with
    image states) builds a cross-attention layer at each index of ``cross_attention_layers`` (MllamaTextModel:
    ``layer_idx in cross_attention_layers``) whose keys are the image states and which applies no rotary; every
    other layer self-attends with the llama3 rotary of the file."""
    by, result = groups(MLLAMA)
    cross = MLLAMA["text_config"]["cross_attention_layers"]
    assert set(by) == {"global (32 layers)", "cross-attention (8 layers)"}
    g, x = by["global (32 layers)"], by["cross-attention (8 layers)"]
    assert x["indices"] == cross and x["rope"] is False and x["attention"] is False and x["cross_attention"] is True
    assert x["spec"] is None and x["bound"] is None and x["kinds"] == ["cross_attention"]
    assert g["indices"] == [i for i in range(40) if i not in cross] and "cross_attention" not in g
    assert (g["spec"]["scheme"], g["spec"]["params"]["factor"], g["spec"]["base"]) == ("llama3", 8.0, 500000.0)
    assert not [f for f in result["findings"] if f["code"] in ("RV024", "RL105")]
    p = tmp_path / "mllama.json"
    p.write_text(json.dumps(MLLAMA))
    assert main(["lint", "--verbose", "--select", "RL101", str(p)]) == 0
    assert "cross-attention (8 layers): no RoPE, attends the image states" in capsys.readouterr().out


def test_mllama_default_cross_attention_layers(semantics):
    """No cross_attention_layers in the file: MllamaTextConfig's default, [3, 8, 13, 18, 23, 28, 33, 38] in both
    versions (configuration_mllama.py: ``if cross_attention_layers is None``), and a note says so."""
    text = {k: v for k, v in MLLAMA["text_config"].items() if k != "cross_attention_layers"}
    cfg = load_mapping({**MLLAMA, "text_config": text})
    by = {g["layers"]: g for g in lint_config(cfg).setup()["layers"]}
    assert by["cross-attention (8 layers)"]["indices"] == list(range(3, 40, 5))
    assert "layer kinds: cross_attention_layers absent: the config class's default [3, 8, 13, 18, 23, 28, 33, 38]" \
        in cfg.notes
    bad = {**MLLAMA, "text_config": {**text, "cross_attention_layers": "3"}}
    _, result = groups(bad)
    assert any(f["code"] == "RV024" and "not a list of layer indices" in f["message"] for f in result["findings"])


def test_unknown_layer_kind_is_rv024(semantics):
    cfg = {**GPT_OSS, "layer_types": ["sliding_attention", "cross_attention"] * 12}
    _, result = groups(cfg)
    rv024 = [f for f in result["findings"] if f["code"] == "RV024"]
    assert len(rv024) == 1 and "cross_attention" in rv024[0]["message"]
    assert [g["layers"] for g in result["layers"]] == ["all layers"]


def test_layer_list_of_the_wrong_length_is_rv024(semantics):
    cfg = {**GPT_OSS, "layer_types": ["sliding_attention", "full_attention"] * 5}
    _, result = groups(cfg)
    assert [f["code"] for f in result["findings"] if f["code"] == "RV024"] == ["RV024"]
    assert "10 entries for 24 layers" in next(f["message"] for f in result["findings"] if f["code"] == "RV024")


def test_expand_rule_every_nth_layer():
    rule = {"rule": "every", "default": 6, "value": "sliding_attention", "at": "full_attention", "phase": "last"}
    got = layer_table.expand_rule(rule, 12)
    assert [i for i, t in enumerate(got) if t == "full_attention"] == [5, 11]
    assert layer_table.expand_rule({**rule, "last": "full_attention"}, 8)[-1] == "full_attention"
    assert layer_table.expand_rule({**rule, "phase": "first"}, 7, 3) == [
        "full_attention", "sliding_attention", "sliding_attention"] * 2 + ["full_attention"]
    assert layer_table.expand_rule({"rule": "unknown"}, 4) is None
    # counted back from the last layer: MuseSparkTextConfig's default layer_types in transformers 5.23.0 (its
    # own lists, read off the class: full at 3, 7 of 8 layers and at 0, 4, 8, 12 of 13)
    back = {**rule, "default": 4, "phase": "from_end"}
    for n, full in ((8, [3, 7]), (13, [0, 4, 8, 12]), (4, [3])):
        assert [i for i, t in enumerate(layer_table.expand_rule(back, n)) if t == "full_attention"] == full
    # OlmoHybridConfig (5.23.0): full where i % 4 == 3, and the last layer when that gives none (its own lists:
    # full at 1 of 2 layers, 2 of 3, 3 of 5, 3 and 7 of 8)
    one = {**rule, "default": 4, "value": "linear_attention", "ensure_one": True}
    for n, full in ((2, [1]), (3, [2]), (5, [3]), (8, [3, 7])):
        assert [i for i, t in enumerate(layer_table.expand_rule(one, n)) if t == "full_attention"] == full


# The default layer_types of three transformers 5.23.0 config classes, written out from their __post_init__
# (configuration_lfm3.py, configuration_flint.py, configuration_deepseek_v4.py): periodic only after their first
# layers (and Flint's last), so the table's rules carry a "head" (scripts/hf_layer_rules.py _fit_head)
CLASS_LAYER_TYPES = {
    "lfm3": lambda n: ["full_attention" if i % 4 == 2 else "sliding_attention" if i % 4 == 0 and i > 0 else "conv"
                       for i in range(n)],
    "flint": lambda n: ["full_attention" if i < 2 or i % 4 == 1 or i == n - 1 else "sliding_attention"
                        for i in range(n)],
    "deepseek_v4": lambda n: ["heavily_compressed_attention"] * min(n, 2) + [
        "compressed_sparse_attention" if i % 2 else "heavily_compressed_attention" for i in range(max(n - 2, 0))],
}


@pytest.mark.parametrize("model_type", sorted(CLASS_LAYER_TYPES))
def test_rule_with_fixed_first_layers_is_the_config_class(model_type):
    rule = layer_table.entry(model_type, "5.23.0")["kinds"]["default"]
    assert "head" in rule
    for n in range(1, 65):
        assert layer_table.expand_rule(rule, n) == CLASS_LAYER_TYPES[model_type](n), n


def test_flint_and_lfm3_default_layers(monkeypatch):
    """FlintConfig's defaults (49 layers, sliding_window 513): its full-attention layers run no rotary (NoPE, measured
    by tests/test_hf_layers.py), the others a window of 513 keys; Lfm3Config's (24 layers, sliding_window 256): conv
    layers run no attention. A layer_types written out is read as written."""
    monkeypatch.setenv("ROPELAW_HF_SEMANTICS", "5.23.0")
    flint = CLASS_LAYER_TYPES["flint"](49)
    got, _ = groups({"model_type": "flint"})
    assert got["NoPE (14 layers)"]["indices"] == [i for i, t in enumerate(flint) if t == "full_attention"]
    assert got["local (35 layers)"]["indices"] == [i for i, t in enumerate(flint) if t == "sliding_attention"]
    assert got["local (35 layers)"]["window"] == 513 and got["NoPE (14 layers)"]["window"] is None
    lfm3 = CLASS_LAYER_TYPES["lfm3"](24)
    got, result = groups({"model_type": "lfm3"})
    assert got["without attention (13 layers)"]["indices"] == [i for i, t in enumerate(lfm3) if t == "conv"]
    assert got["local (5 layers)"]["indices"] == [4, 8, 12, 16, 20] and got["local (5 layers)"]["window"] == 256
    assert got["global (6 layers)"]["indices"] == [2, 6, 10, 14, 18, 22]
    assert not {"RV024", "RV025"} & {f["code"] for f in result["findings"]}
    written = ["conv", "full_attention", "conv", "sliding_attention", "conv", "conv"]
    got, _ = groups({"model_type": "lfm3", "num_hidden_layers": 6, "layer_types": written, "sliding_window": 64})
    assert got["global (1 layer)"]["indices"] == [1] and got["local (1 layer)"]["indices"] == [3]
    assert got["local (1 layer)"]["window"] == 64 and got["without attention (4 layers)"]["indices"] == [0, 2, 4, 5]


DSV4_RATIOS = {0: "sliding_attention", 4: "compressed_sparse_attention", 128: "heavily_compressed_attention"}
# transformers 5.23.0 configuration_deepseek_v4.py _COMPRESS_RATIO_TO_LAYER_TYPE: what DeepseekV4Config makes of the
# compress_ratios ("legacy V4 kwargs ... that older checkpoints still ship"; one per layer, a longer list cut off)


def test_deepseek_v4_compress_ratios_and_compressed_keys(monkeypatch):
    """DeepSeek-V4's layers attend the tokens' keys in a window plus compressed keys appended to them (measured:
    span "extra"): RV024, never a window or full attention; the layer it names is the file's compress_ratios' (read
    as the class maps them), not the default layer_types'."""
    monkeypatch.setenv("ROPELAW_HF_SEMANTICS", "5.23.0")
    rule = layer_table.entry("deepseek_v4", "5.23.0")["kinds"]["default"]
    assert {e: k for e, k in rule["mapped"]["map"]} == DSV4_RATIOS and rule["mapped"]["longer"] == "first"
    base = {"model_type": "deepseek_v4", "num_hidden_layers": 8, "sliding_window": 128, "rope_theta": 10000}
    ratios = [4, 128, 4, 128, 0, 0, 4, 128, 4]  # one more than the 8 layers; the default's layer 0 is HCA
    _, result = groups({**base, "compress_ratios": ratios})
    msg = next(f["message"] for f in result["findings"] if f["code"] == "RV024")
    assert f"layer 0 ({DSV4_RATIOS[ratios[0]]}) attends keys appended to the tokens' keys" in msg
    # its sliding-only layers (ratio 0) were never run alone by the table's probes: said, not guessed
    _, result = groups({**base, "compress_ratios": [0, 0, 4, 128, 4, 128, 0, 0, 4]})
    assert any(f["code"] == "RV024" and "layer 0: deepseek_v4 layers of kind sliding_attention" in f["message"]
               and "not observed running" in f["message"] for f in result["findings"])
    _, result = groups(base)  # the default layer_types: two HCA layers first
    msg = next(f["message"] for f in result["findings"] if f["code"] == "RV024")
    assert "layer 0 (heavily_compressed_attention) attends keys appended" in msg
    _, result = groups({**base, "compress_ratios": [0, 3] * 4})
    assert any(f["code"] == "RV024" and "entry 3 is none of" in f["message"] for f in result["findings"])
    _, result = groups({**base, "compress_ratios": [0] * 7})
    assert any(f["code"] == "RV024" and "7 entries for 8 layers" in f["message"] for f in result["findings"])
    # a layer_types one longer than the layers is cut to its first 8 by DeepseekV4Config (layer_types[:n]), as
    # compress_ratios is: read so, not "refused" (gpt-oss's class refuses one: test_layer_list_of_the_wrong_length)
    cut = ["compressed_sparse_attention"] + ["heavily_compressed_attention"] * 8
    _, result = groups({**base, "layer_types": cut})
    msg = next(f["message"] for f in result["findings"] if f["code"] == "RV024")
    assert "layer 0 (compressed_sparse_attention) attends keys appended" in msg


def test_olmo_hybrid_of_one_layer_is_rv024(monkeypatch):
    """OlmoHybridConfig refuses a single layer (it requires a linear-attention layer): no default list is read."""
    monkeypatch.setenv("ROPELAW_HF_SEMANTICS", "5.23.0")
    _, result = groups({"model_type": "olmo_hybrid", "num_hidden_layers": 1, "hidden_size": 256,
                        "num_attention_heads": 2, "max_position_embeddings": 4096, "rope_theta": 10000.0})
    assert any(f["code"] == "RV024" and "refuses 1 layer" in f["message"] for f in result["findings"])


def test_rules_are_documented():
    from ropelaw.findings import get_rule

    for code in ("RV024", "RV025", "RL105"):
        doc = get_rule(code).doc()
        assert "## What it does" in doc and "## Fix" in doc


def test_coverage_block_in_the_documentation_is_the_table():
    """README / docs list what the per-layer table covers and every RoPE decoder it does not, with the reason
    the probe recorded; the block is generated from the committed table (scripts/hf_coverage.py, not shipped)."""
    import importlib
    import sys

    from ropelaw.data import hf_layers

    root = pathlib.Path(__file__).resolve().parents[1]
    sys.path.insert(0, str(root / "scripts"))
    try:
        coverage = importlib.import_module("hf_coverage")
    finally:
        sys.path.remove(str(root / "scripts"))
    docs = coverage.documents(root)
    assert docs, "no README / docs page holds the layers-coverage block"
    for p in docs:
        block = p.read_text(encoding="utf-8").split(coverage.BEGIN, 1)[1].split(coverage.END, 1)[0]
        assert block.strip() == coverage.markdown().strip(), f"regenerate: python scripts/hf_coverage.py ({p})"
    text = coverage.markdown()
    for version, t in hf_layers().items():  # every type not covered is named, with its reason's first words
        assert f"**transformers {version}**: {len(t['types'])} decoder model types measured" in text
        for mt in t["not_covered"]:
            assert f"`{mt}`" in text


def test_query_scale_grows_rl106(monkeypatch):
    """RL106 query-scale-grows: Devstral-Small-2's llama_4_scaling_beta 0.1 over original 8,192 is modelled (not
    RV025 / RV009): scale 1 + 0.1 ln(1 + floor((N - 1) / 8192)) at the last position of N tokens, 1 + 0.1 ln 48 at the
    target 393,216 (transformers 5.23.0 get_llama_4_attn_scale; the forward's own scale:
    tests/test_hf_layer_kinds.py)."""
    import math

    from ropelaw.lint.check import lint_config
    from ropelaw.lint.loader import load_mapping

    monkeypatch.setenv("ROPELAW_HF_SEMANTICS", "5.23.0")
    data = {"model_type": "ministral3", "head_dim": 128, "hidden_size": 5120, "num_attention_heads": 32,
            "num_hidden_layers": 40, "num_key_value_heads": 8, "max_position_embeddings": 393216,
            "rope_parameters": {"beta_fast": 32.0, "beta_slow": 1.0, "factor": 48.0, "llama_4_scaling_beta": 0.1,
                                "mscale": 1.0, "mscale_all_dim": 1.0, "original_max_position_embeddings": 8192,
                                "rope_theta": 1e8, "rope_type": "yarn"}}
    r = lint_config(load_mapping(data, path="config.json")).setup()
    qs = r["query_scale"]
    assert (qs["at_train"], qs["train"]) == (1.0, 8192)
    assert qs["at_target"] == pytest.approx(1 + 0.1 * math.log(48), rel=1e-14)
    assert qs["at_bound"] == pytest.approx(1 + 0.1 * math.log(1 + (qs["bound"] - 1) // 8192), rel=1e-14)
    f = [f for f in r["findings"] if f["code"] == "RL106"]
    assert len(f) == 1 and f[0]["severity"] == "info" and "x1.3871 at the target 393,216" in f[0]["message"]
    assert "x1.0693 from 8,193" in f[0]["message"]
    assert not [f for f in r["findings"] if f["code"] in ("RV025", "RV009")]
    data["max_position_embeddings"] = 8192  # no position reaches a step: no finding
    r = lint_config(load_mapping(data, path="config.json")).setup()
    assert r["query_scale"]["at_target"] == 1.0 and not [f for f in r["findings"] if f["code"] == "RL106"]
