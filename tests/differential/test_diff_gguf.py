"""llama.cpp's own HF-to-GGUF conversion on every Hugging Face config.json of the corpus, against ropelaw's reading
of the config.json: the GGUF the conversion writes (its metadata and RoPE tensors, no weights) must lint as the
config does (rotary dims, base as a float32, scheme, factor, original length, YaRN betas, training length,
target, layer groups and the RL findings), or differ only as judged below, each difference named.

The conversion is llama-cpp-python==0.3.36's vendored ``conversion/`` package and the ``gguf-py`` it ships
(tests/differential/llamacpp_convert.py; it pins transformers==4.57.6, run here with the [test] pin 4.57.1: its
``load_hparams`` reads config.json through ``AutoConfig``). Runs in the CI step 'llama.cpp conversion' of .ci/run
(``ROPELAW_LLAMACPP_SRC`` holding the extracted sdist); otherwise skipped, naming it.

Differences that are llama.cpp's semantics (not misreads), by kind: llama.cpp has no dynamic NTK, Qwen's dynamic
NTK or M-RoPE for text positions (the conversion writes none: plain RoPE runs); the transformers-only findings
(RP201 positions in bf16, RV0xx of transformers' runtime) are not compared: llama.cpp computes angles in float32.
"""

from __future__ import annotations

import json
import os
import pathlib
import warnings

import numpy as np
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
CORPUS = pathlib.Path(os.environ.get("ROPELAW_CORPUS", ROOT.parent / "shared" / "corpus"))
# schemes llama.cpp does not run: the conversion writes no rope.scaling for them, plain RoPE runs
NOT_IN_LLAMACPP = {"dynamic", "qwen_dynamic", "mrope"}

# config.json files the conversion refuses (its class for architectures[0], or what its metadata step needs)
NOT_CONVERTED = {
    "heldout-r2/hub/mlc_gpt_j.json": "no class for GPTJForCausalLM",
    "heldout-r2/hub/mlc_internlm.json": "no class for InternLMForCausalLM",
    "heldout-r2/hub/mlc_phi-1_5.json": "partial_rotary_factor",  # an old phi config: Phi2Model needs the new keys
    "heldout-r2/hub/mlc_phi-2.json": "partial_rotary_factor",
    "heldout-r2/hub/mlc_phi-3_5-vision.json": "no class for Phi3VForCausalLM",
    "heldout-r2/hub/mlc_rwkv5_3b.json": "no class for RwkvForCausalLM",
    "heldout-r3/hub/nikolay-grudanov__Team_5_AI_Tutor__models__LightOnOCR-1B-1025__config.json": "no class for",
    "heldout-r3/hub/nikolay-grudanov__Team_5_AI_Tutor__models__jina-vlm__config.json": "no class for",
    "heldout-r3/hub/varun00391__local-finetuned-model__LiquidAI:LFM2-VL-450M__lfm2-450m__config.json":
        "no class for",
    "heldout-r3/hub/whn09__neuronx-distributed-inference__test__integration__tp32__models__mllama__config_4layer.json":
        "no class for MllamaForConditionalGeneration",
    "hf/ansuehu__LLaMA-Omni__Llama-3.2-1B-Instruct__config.json": "no class for OmniSpeechLlamaForCausalLM",
    "hf/gmadiyar00__tapssp-project__phi-2__config.json": "no class for MixFormerSequentialForCausalLM",
    "hf/intel__intel-extension-for-pytorch__tests__cpu__hf_configs__phi4__config.json": "no class for",
}

# files whose GGUF reads differently from the config.json, judged: {file: (fields that differ, why)}
JUDGED = {
    "heldout-r2/hub/mlc_ministral3_3b_2512.json": (
        {"refused"}, "the conversion's Mistral3Model writes no mistral3.context_length from this config.json "
                     "(llama.cpp requires it): ropelaw refuses the GGUF, as llama.cpp's loader would"),
    "heldout-r2/hub/ttbuda_falcon-7b-instruct-RW.json": (
        {"train", "target", "codes"}, "no max_position_embeddings in config.json: the conversion writes 2048 "
                                      "(conversion/falcon.py: 'not in config.json')"),
    "heldout-r3/hub/alibaba__rtp-llm__rtp_llm__test__model_test__fake_test__testdata__cohere__tokenizer__config.json": (
        {"train", "target", "codes"}, "the conversion writes model_max_length 131,072 as the context "
                                      "(conversion/command_r.py: 'max_position_embeddings = 8192 in config.json but "
                                      "model was actually trained on 128k')"),
    "hf/swayam8624__nanoquant-private__nanoquants__tencent_Hunyuan-MT-7B__tencent_Hunyuan-MT-7B_medium__config.json": (
        {"train", "target"}, "the conversion writes 256k as the context (conversion/hunyuan.py: '256k context "
                             "length')"),
    "heldout-r3/hub/nikolay-grudanov__Team_5_AI_Tutor__models__HunyuanOCR__config.json": (
        {"base"}, "llama.cpp computes base x alpha^(D/(D-2)) in float32 (models/hunyuan-vl.cpp): 11,158,844 where "
                  "transformers' float64 gives 11,158,839.9"),
    "hf/galiihajiip__LLM-RAG__merged_model__config.json": (
        {"base"}, "rope_parameters (transformers 5's format) holds rope_theta 1e6: the conversion reads it, "
                  "transformers 4.57.1 does not (ropelaw's 4.57.1 reading says so: RV019)"),
    "heldout-r3/hub/whn09__neuronx-distributed-inference__test__integration__tp32__models__llama__"
    "llama3.1__8b__config.json": (
        {"scheme", "params", "train", "codes"}, "head dim 8: rope_freqs.weight holds 4 factors with one on the "
                                                "smooth band, from which Llama 3's parameters cannot be read back; "
                                                "said (RV030), not guessed"),
    "heldout-r3/hub/whn09__neuronx-distributed-inference__test__integration__tp64__models__llama4__"
    "config_16E_4layer.json": (
        {"params", "train", "codes"}, "high_freq_factor = low_freq_factor: rope_freqs.weight has no smooth band and "
                                      "fixes the original length only between two wavelengths; the training "
                                      "length is not in the GGUF, said (RL100: pass --train)"),
    "hf/alibaba__rtp-llm__rtp_llm__test__model_test__fake_test__testdata__kimi_k2__tokenizer__config.json": (
        {"params"}, "beta_fast 1 in config.json; the conversion writes deepseek2.rope.scaling.yarn_beta_fast 1, which "
                    "llama.cpp's deepseek2 never loads (only models/grok.cpp and mistral3.cpp do): it runs 32, said "
                    "(RV044; tests/differential/test_diff_llamacpp_yarn.py reads which architectures load it)"),
}


def hf_configs() -> list[str]:
    """Every corpus JSON that is a Hugging Face config.json (an ``architectures`` list), corpus-relative."""
    if not CORPUS.is_dir():
        return []
    out = []
    for p in sorted(CORPUS.rglob("*.json")):
        try:
            data = json.loads(p.read_text(encoding="utf-8"))
        except (ValueError, UnicodeDecodeError):
            continue
        if isinstance(data, dict) and isinstance(data.get("architectures"), list) and data["architectures"]:
            out.append(p.relative_to(CORPUS).as_posix())
    return out


FILES = hf_configs()


@pytest.fixture(scope="module")
def conversion():
    import llamacpp_convert

    if llamacpp_convert.source() is None:
        pytest.skip("no llama-cpp-python==0.3.36 sdist: set ROPELAW_LLAMACPP_SRC (the CI step 'llama.cpp conversion' "
                    "of .ci/run extracts it)")
    pytest.importorskip("torch")
    llamacpp_convert.load()
    return llamacpp_convert


def summary(path: str) -> dict:
    """What ropelaw reads from ``path``: the values compared (module docstring)."""
    from ropelaw.errors import UsageError
    from ropelaw.lint.check import lint_config
    from ropelaw.lint.loader import NotARopeConfig, load_config

    try:
        c = load_config(path)
    except NotARopeConfig as exc:
        return {"refused": "not rope" if "RoPE" in str(exc) or "positions" in str(exc) else str(exc)[-80:]}
    except UsageError as exc:
        return {"refused": str(exc)[-80:]}
    g = c.layers[0]
    params = {k: g.params[k].number() for k in ("factor", "original_max_position_embeddings", "beta_fast",
                                                 "beta_slow", "low_freq_factor", "high_freq_factor")
              if k in (g.params or {})}
    return {"d": g.d.number(), "base": float(np.float32(g.base.number())) if g.base.number() else None,
            "scheme": g.scheme.raw if g.scheme is not None else None, "params": params,
            "train": c.train_len.number(), "target": c.target.number(), "layers": len(c.layers),
            "codes": sorted({f.code for f in lint_config(c).findings if f.code.startswith("RL")})}


def expected_from_hf(hf: dict) -> dict:
    """The config.json's reading with llama.cpp's semantics applied (module docstring)."""
    out = dict(hf)
    if out.get("scheme") in NOT_IN_LLAMACPP:
        out["scheme"], out["params"] = "default", {}
    return out


def test_every_config_is_listed_or_compared():
    if not FILES:
        if os.environ.get("ROPELAW_REQUIRE_CORPUS"):
            pytest.fail(f"corpus required and missing: {CORPUS}")
        pytest.skip(f"no corpus at {CORPUS}")
    assert len(FILES) >= 100
    missing = sorted((set(NOT_CONVERTED) | set(JUDGED)) - set(FILES))
    assert not missing, f"judged files not in the corpus: {missing}"


@pytest.mark.parametrize("rel", FILES)
def test_conversion_lints_as_the_config(conversion, tmp_path, rel):
    config = json.loads((CORPUS / rel).read_text(encoding="utf-8"))
    out = tmp_path / "converted.gguf"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            conversion.convert(config, out)
        except conversion.NotConverted as exc:
            assert rel in NOT_CONVERTED and NOT_CONVERTED[rel] in str(exc), f"{rel}: {exc}"
            return
    assert rel not in NOT_CONVERTED, f"{rel}: converted now; drop it from NOT_CONVERTED"
    want, got = expected_from_hf(summary(str(CORPUS / rel))), summary(str(out))
    differ = {k for k in set(want) | set(got) if want.get(k) != got.get(k)}
    if "refused" in differ:
        differ = {"refused"} if "refused" in got and "refused" not in want else differ
    judged = JUDGED.get(rel, (set(), ""))[0]
    assert differ == judged, f"{rel}: config.json {want}, GGUF {got}"
