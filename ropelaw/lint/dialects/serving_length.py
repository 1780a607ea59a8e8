"""The length a vLLM / SGLang server accepts: derived from the model's config as the runtime derives it, and
whether the runtime refuses a longer one. Read from the runtimes' source (``serving_args`` names the pins):

- vLLM 0.32.0 ``config/model.py`` ``_get_and_verify_max_len`` and ``transformers_utils/
  model_arch_config_convertor.py`` ``derive_max_model_len_and_key``: the smallest of ``max_position_embeddings``,
  ``n_positions``, ``max_seq_len``, ``seq_length``, ``model_max_length``, ``max_target_positions``,
  ``max_sequence_length``, ``max_seq_length``, ``seq_len`` (a ``model_max_length`` replaces it; none: 2,048),
  times the RoPE ``factor`` of a scaling type other than su / longrope / llama3 / yarn / deepseek_yarn /
  deepseek_llama_scaling (not for gemma3); without ``--max-model-len`` (or ``-1`` / ``auto``) that length,
  LongRoPE's ``original_max_position_embeddings``; a longer ``--max-model-len`` is a ``ValueError`` unless
  it is within ``model_max_length`` or ``VLLM_ALLOW_LONG_MAX_MODEL_LEN`` is ``1`` / ``true``;
- vLLM 0.11.0: the same keys; a YaRN model's length is ``original_max_position_embeddings x factor``, other
  types but su / longrope / llama3 ``x factor`` (not gemma3);
- SGLang 0.5.23 ``srt/utils/hf_transformers/common.py`` ``get_context_length``: the first of
  ``max_sequence_length``, ``seq_length``, ``max_seq_len``, ``model_max_length``, ``max_position_embeddings``
  times the block's ``factor`` unless it has ``original_max_position_embeddings`` or is llama3 (none: 2,048);
  ``configs/model_config.py`` ``_derive_context_length``: a longer ``--context-length`` is a ``ValueError``
  unless ``SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN`` is true / 1 / yes / y.

The model's text config is its ``text_config`` when it has one (``get_hf_text_config``).
"""

from __future__ import annotations

import math
from typing import Any
from collections.abc import Mapping

from .serving_args import VLLM, Runtime, version_key

__all__ = ["text_config", "rope_blocks", "derived_length", "allows_longer", "semantics_version", "vllm_dynamic"]

VLLM_KEYS = ("max_position_embeddings", "n_positions", "max_seq_len", "seq_length", "model_max_length",
             "max_target_positions", "max_sequence_length", "max_seq_length", "seq_len")
SGLANG_KEYS = ("max_sequence_length", "seq_length", "max_seq_len", "model_max_length", "max_position_embeddings")
VLLM_UNSCALED = {"0.32.0": ("su", "longrope", "llama3", "yarn", "deepseek_yarn", "deepseek_llama_scaling"),
                 "0.11.0": ("su", "longrope", "llama3")}
DEFAULT = 2048


def semantics_version(rt: Runtime, version: str) -> str:
    """The version whose source the length rules were read from: vLLM 0.11.0 for <= 0.11.0, else 0.32.0;
    SGLang 0.5.23."""
    if rt is VLLM:
        return "0.11.0" if version_key(version) <= (0, 11, 0) else "0.32.0"
    return rt.current


def text_config(hf: Mapping) -> Mapping:
    sub = hf.get("text_config")
    return sub if isinstance(sub, Mapping) else hf


def rope_blocks(text: Mapping) -> list[Mapping]:
    """The RoPE parameter blocks of a text config: ``rope_parameters`` (one per layer type when nested), else
    ``rope_scaling``."""
    block = text.get("rope_parameters") or text.get("rope_scaling")
    if not isinstance(block, Mapping) or not block:
        return []
    nested = [v for v in block.values() if isinstance(v, Mapping)]
    return [v for v in nested if v] if nested and len(nested) == len(block) else [block]


def _type(block: Mapping) -> str:
    return str(block.get("rope_type", block.get("type", "default")))


def _number(x: Any) -> float | None:
    return float(x) if isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) else None


def derived_length(rt: Runtime, sem: str, hf: Mapping) -> tuple[int, str]:
    """``(length, how)``: the longest the runtime accepts for model config ``hf`` without being told otherwise
    (module docstring)."""
    text = text_config(hf)
    if rt is not VLLM:
        return _sglang_length(text)
    found = [(k, v) for k in VLLM_KEYS if (v := _number(text.get(k))) is not None]
    key, length = min(found, key=lambda kv: kv[1]) if found else (None, None)
    model_max = _number(text.get("model_max_length"))
    if model_max:
        key, length = "model_max_length", model_max
    if length is None:
        return DEFAULT, f"{DEFAULT:,} (no length key in the model's config: vLLM {sem}'s default)"
    how = f"{key} {int(length):,}"
    if "gemma3" not in str(text.get("model_type", hf.get("model_type", ""))):
        factor: Any = 1.0
        scaled = ""
        for b in rope_blocks(text):
            t = _type(b)
            orig = _number(b.get("original_max_position_embeddings"))
            if t == "yarn" and sem == "0.11.0" and orig:
                length = orig
                how = f"YaRN original_max_position_embeddings {int(length):,}"
            if t not in VLLM_UNSCALED[sem]:
                factor, scaled = b.get("factor", factor), t
        factor = _number(factor) or 1.0  # vLLM: a null factor falls back to 1.0
        if factor != 1.0:
            length, how = length * factor, f"{how} x the {scaled} factor {factor:g}"
    return int(length), how


def _sglang_length(text: Mapping) -> tuple[int, str]:
    blocks = rope_blocks(text)
    factor = 1.0
    if blocks:
        b = blocks[0]
        factor = _number(b.get("factor", 1)) or 1.0
        if "original_max_position_embeddings" in b or b.get("rope_type") == "llama3":
            factor = 1.0
    for key in SGLANG_KEYS:
        v = _number(text.get(key))
        if v is not None:
            how = f"{key} {int(v):,}" + (f" x the factor {factor:g}" if factor != 1.0 else "")
            return int(factor * v), how
    return DEFAULT, f"{DEFAULT:,} (no length key in the model's config: SGLang's default)"


def served_default(rt: Runtime, sem: str, hf: Mapping, derived: int) -> tuple[int, str]:
    """The length served without a length argument: vLLM 0.32.0 serves LongRoPE models at their
    ``original_max_position_embeddings``; otherwise the derived length."""
    text = text_config(hf)
    if rt is VLLM and sem == "0.32.0" and any(_type(b) == "longrope" for b in rope_blocks(text)):
        orig = _number(text.get("original_max_position_embeddings"))
        if orig is not None:
            return int(orig), f"LongRoPE's original_max_position_embeddings {int(orig):,} (vLLM {sem}'s default)"
    return derived, ""


def allows_longer(rt: Runtime, hf: Mapping, asked: int, env: Mapping) -> str | None:
    """Why the runtime serves ``asked`` beyond the derived length (None: it refuses with a ValueError)."""
    value = str(env.get(rt.allow_long, "")).strip().lower()
    if rt is VLLM:
        mml = _number(text_config(hf).get("model_max_length"))
        if mml is not None and asked <= mml:
            return f"within the model's model_max_length {int(mml):,}"
        return f"{rt.allow_long}={env[rt.allow_long]}" if value in ("1", "true") else None
    return f"{rt.allow_long}={env[rt.allow_long]}" if value in ("true", "1", "yes", "y") else None


def vllm_dynamic(rt: Runtime, sem: str, hf: Mapping) -> tuple[Mapping, str | None]:
    """``(config as vLLM runs it, why)`` for a 'dynamic' block with a ``factor``: vLLM 0.32.0's
    ``DynamicNTKScalingRotaryEmbedding`` (``rotary_embedding/dynamic_ntk_scaling_rope.py``) computes the NTK base
    once, at ``max_position`` = the model's ``max_position_embeddings`` (unless ``max_trained_positions`` is given),
    where ``factor * L / L - (factor - 1) = 1`` leaves the base unchanged: plain RoPE at the base, whatever the
    sequence length (measured in tests/differential/test_diff_vllm_rope.py). Read as ``rope_type`` default. vLLM
    0.11.0 computes it once at ``L x factor``, transformers' dynamic NTK at that length: left as it is (``why``
    None). Other configs: unchanged."""
    if rt is not VLLM or sem != "0.32.0":
        return hf, None
    holder = "text_config" if isinstance(hf.get("text_config"), Mapping) else None
    text = text_config(hf)
    key = "rope_parameters" if isinstance(text.get("rope_parameters"), Mapping) else "rope_scaling"
    block = text.get(key)
    if not isinstance(block, Mapping) or _type(block) != "dynamic" or "factor" not in block or "alpha" in block \
            or "max_trained_positions" in block:
        return hf, None
    plain = {k: v for k, v in block.items() if k not in ("rope_type", "type", "factor")}
    plain["rope_type"] = "default"
    new_text = {**text, key: plain}
    why = (f"vLLM {sem} serves the 'dynamic' scaling (factor {block['factor']}) as plain RoPE at the base: it computes "
           "the NTK base once at max_position_embeddings, where it is unchanged (dynamic_ntk_scaling_rope.py)")
    return ({**hf, holder: new_text} if holder else new_text), why
