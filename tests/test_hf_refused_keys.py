"""Real files changed as ``scripts/hf_top_keys.py`` changed them where transformers refuses the change (or where
ropelaw said it did, or stopped, and it runs), through transformers' shrunk forward and through ropelaw: the
differential of ``tests/test_hf_files.py`` must be ``right`` (the runtime builds it and every layer agrees) or
``refused`` (the runtime refuses it and ropelaw says so with an error: RV021, or a value rule's error naming the
followed version in ``data.refused_by``), never ``silent`` nor ``false``. Which of the two is the runtime's to say
(``test_hf_files.runtime_fails``): the test does not decide it. The cases (ropelaw/data/hf_top_keys.json, issue 31):

- ``num_hidden_layers`` raised by 2 (or removed: the class default) while ``layer_types`` keeps one entry per old
  layer (GPT-OSS, Qwen3, SmolLM3): both versions refuse it (``layer_type_validation``); ropelaw's RV021 comes from
  ``ropelaw/data/hf_layer_lengths.json`` (scripts/hf_layer_lengths.py);
- ``num_hidden_layers`` lowered by 2 under a written ``layer_types`` (LFM2's text model): 4.57.1's Lfm2Config keeps
  the longer list and the model runs its first entries; 5.23.0 refuses it;
- DeepSeek-V2 ``hidden_size`` / ``num_attention_heads`` not dividing (5.23.0's ``validate_architecture``), Phi-4's
  ``partial_rotary_factor`` 0.9375 (5.23.0's longrope validation: 48 factors for 60 frequencies);
- hidden_size not a multiple of num_attention_heads (GPT-NeoX's ``hidden_size`` / ``num_attention_heads`` + 2: its
  4.57.1 config class refuses it, 5.23.0's ``validate_architecture``; Qwen2-VL's and Qwen2.5-VL's ``hidden_size``
  removed: the class default 8192 for 28 heads, which the attention refuses at model build): RV004's error (or
  RV021 where head_dim is given) with the runtime's reason from ``ropelaw/data/hf_head_split.json``
  (scripts/hf_head_split.py);
- HunyuanOCR's ``attention_head_dim`` + 2 (5.23.0's HunYuanVLTextConfig keeps it over head_dim and refuses
  sections no longer summing to half of it: ``hf_mrope_sections.json``; 4.57.1 does not know the type);
- Qwen2.5-Omni's ``num_hidden_layers`` + 2 under a written ``layer_types`` (5.23.0's strict validator; no model
  class runs the type, so ``hf_layer_lengths.json`` measured its config class alone; 4.57.1 does not know the type);
- ``head_dim`` removed: HunYuan's class leaves it None and the model does not build (both versions); GPT-OSS's
  class keeps its default 64 and runs (``hf_types.json`` ``head_dim_absent``, scripts/hf_types.py).

Under either installed transformers version; a case skips, naming its file, when the corpus does not hold it.
"""

from __future__ import annotations

import json
import pathlib
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
import hf_compare  # noqa: E402
pytestmark = [pytest.mark.hf, pytest.mark.torch]  # the forwards: CI's real-files step, both versions
torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

GPT_OSS = "hf/EchoCog__gpt-oss-20b__config.json"
QWEN3 = "hf/sanjithudupa__compute-aware-arch-search__Qwen3-8B__config.json"
SMOLLM3 = "hf/fetchwiki__HuggingFaceTB-SmolLM3-3B__config.json"
DEEPSEEK_V2 = "heldout-r2/hub/mlc_deepseek_v2_lite.json"
PHI4 = "heldout-r2/hub/mlc_phi-4.json"
HUNYUAN = ("hf/swayam8624__nanoquant-private__nanoquants__tencent_Hunyuan-MT-7B__tencent_Hunyuan-MT-7B_medium__"
           "config.json")
LFM2_VL = "heldout-r3/hub/varun00391__local-finetuned-model__LiquidAI:LFM2-VL-450M__lfm2-450m__config.json"
REDPAJAMA = "heldout-r2/hub/mlc_redpajama_3b_v1.json"
QWEN2_MOE = "heldout-r2/hub/mlc_qwen2moe.json"
STABLELM = "heldout-r2/hub/mlc_stablelm-2-zephyr-1_6b.json"
PHI2 = "hf/henryhmko__VLM_interpretability__phi-2__config.json"
QWEN2_VL = ("heldout-r3/hub/whn09__neuronx-distributed-inference__test__integration__tp64__models__qwen2_vl__"
            "config_4layer.json")
OLMOCR = "heldout-r3/hub/nikolay-grudanov__Team_5_AI_Tutor__models__olmOCR-2-7B-1025__config.json"
QWEN25_OMNI = ("heldout-r3/hub/whn09__neuronx-distributed-inference__test__integration__tp64__models__qwen25_omni__"
               "config_4layer.json")
HUNYUAN_OCR = "heldout-r3/hub/nikolay-grudanov__Team_5_AI_Tutor__models__HunyuanOCR__config.json"
REMOVE = object()
IN = "in "  # a section written "in text_config": the key changed there, the rest of the file kept


def plus(n: int):
    return lambda v: v + n


CASES = {  # name -> (file, the section (None: the file; "text_config": that mapping alone; IN + "text_config":
    # the key changed there, the file kept), key, change)
    "gpt_oss num_hidden_layers +2": (GPT_OSS, None, "num_hidden_layers", plus(2)),
    "gpt_oss num_hidden_layers removed": (GPT_OSS, None, "num_hidden_layers", REMOVE),
    "qwen3 num_hidden_layers +2": (QWEN3, None, "num_hidden_layers", plus(2)),
    "smollm3 num_hidden_layers +2": (SMOLLM3, None, "num_hidden_layers", plus(2)),
    "lfm2 num_hidden_layers -2": (LFM2_VL, "text_config", "num_hidden_layers", plus(-2)),
    "deepseek_v2 hidden_size +2": (DEEPSEEK_V2, None, "hidden_size", plus(2)),
    "deepseek_v2 num_attention_heads +2": (DEEPSEEK_V2, None, "num_attention_heads", plus(2)),
    "phi3 partial_rotary_factor 0.9375": (PHI4, None, "partial_rotary_factor", lambda v: 0.9375),
    "hunyuan_v1_dense head_dim removed": (HUNYUAN, None, "head_dim", REMOVE),
    "gpt_oss head_dim removed": (GPT_OSS, None, "head_dim", REMOVE),
    # hidden_size not a multiple of the heads: ropelaw/data/hf_head_split.json (scripts/hf_head_split.py)
    "gpt_neox hidden_size +2": (REDPAJAMA, None, "hidden_size", plus(2)),
    "gpt_neox num_attention_heads +2": (REDPAJAMA, None, "num_attention_heads", plus(2)),
    "qwen2_vl hidden_size removed": (QWEN2_VL, None, "hidden_size", REMOVE),
    # refused at model build at the file's own size (the shrunk model's hidden_size is a multiple of its heads:
    # shrunk._heads_split_hidden builds the file's size first): 4.57.1 Qwen2-MoE, StableLM both versions
    "qwen2_moe hidden_size +2": (QWEN2_MOE, None, "hidden_size", plus(2)),
    "qwen2_moe num_attention_heads +2": (QWEN2_MOE, None, "num_attention_heads", plus(2)),
    "stablelm hidden_size +2": (STABLELM, None, "hidden_size", plus(2)),
    "qwen2_5_vl_text hidden_size removed": (OLMOCR, IN + "text_config", "hidden_size", REMOVE),
    # a partial factor above 1, a rotary wider than the head (RV046): the forward fails, or Phi-3's config is refused
    "gpt_neox rotary_pct 1.25": (REDPAJAMA, None, "rotary_pct", lambda v: 1.25),
    "stablelm partial_rotary_factor 1.25": (STABLELM, None, "partial_rotary_factor", lambda v: 1.25),
    "phi partial_rotary_factor 1.25": (PHI2, None, "partial_rotary_factor", lambda v: 1.25),
    "phi3 partial_rotary_factor 1.25": (PHI4, None, "partial_rotary_factor", lambda v: 1.25),
    # mrope sections no longer half the head (attention_head_dim, which 5.23.0's class keeps over head_dim):
    # ropelaw/data/hf_mrope_sections.json (scripts/hf_mrope_sections.py); 4.57.1 does not know the type
    "hunyuan_vl attention_head_dim +2": (HUNYUAN_OCR, None, "attention_head_dim", plus(2)),
    # a layer_types of the old length, a type no model class runs (its config class alone: hf_layer_lengths.json)
    "qwen2_5_omni_text num_hidden_layers +2": (QWEN25_OMNI, IN + "text_config", "num_hidden_layers", plus(2)),
}


def changed(name: str) -> dict:
    import test_hf_top_keys

    label, section, key, change = CASES[name]
    data = test_hf_top_keys.corpus_file(label)  # sha256 checked against tests/corpus/hf_files.json
    if data is None:
        pytest.skip(f"{label} is not in the corpus yet")
    if section and section.startswith(IN):
        data = dict(data)
        data[section[len(IN):]] = where = dict(data[section[len(IN):]])
    else:
        data = where = dict(data[section]) if section else dict(data)
    if change is REMOVE:
        del where[key]
    else:
        where[key] = change(where[key])
    return data


@hf_compare.REAL_FILES_STEP
@pytest.mark.parametrize("name", CASES)
def test_changed_real_file_right_or_refused_as_the_runtime(name, tmp_path):
    import test_hf_files

    from ropelaw.lint.layers import shrunk

    data = changed(name)
    path = tmp_path / "config.json"
    path.write_text(json.dumps(data))
    verdict, detail = test_hf_files.differential(path)
    refused = test_hf_files.runtime_fails(shrunk.run_file(data))
    assert verdict == ("refused" if refused else "right"), (verdict, detail, refused)
    if refused:  # the error names what the runtime refuses: the key changed, or the list it no longer matches
        reading = test_hf_files.ropelaw_reading(data, str(path))
        said = [f for f in reading["result"]["findings"] if f["severity"] == "error"]
        key = CASES[name][2]
        named = {key, "layer_types", "hidden_size", "head_dim", "long_factor", "short_factor", "model_type"}
        assert any(any(k in f["message"] for k in named) for f in said), said


def test_the_measured_lengths_are_what_ropelaw_reads():
    """Per version, the LFM2 case and the GPT-OSS case end as ``hf_layer_lengths.json`` says for their type: a
    longer LFM2 list runs (4.57.1) or is refused (5.23.0) as measured, a shorter GPT-OSS list is refused (both)."""
    from ropelaw.lint import layers
    from ropelaw.lint.dialects.hf import semantics_version

    version = semantics_version()
    assert layers.length_verdict("gpt_oss", "layer_types", False, version).startswith("refused: ")
    lfm2 = layers.length_verdict("lfm2", "layer_types", True, version)
    assert lfm2 == "first" if version.startswith("4.") else lfm2.startswith("refused: ")
