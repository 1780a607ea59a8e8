"""Regenerate ``ropelaw/data/hf_defaults.json`` from the installed transformers' config classes (read by
``ropelaw.lint.dialects.hf.defaults`` through :func:`ropelaw.data.hf_defaults`).

    .venv/bin/python scripts/hf_defaults.py      # transformers 4.57.1
    .venv-tf5/bin/python scripts/hf_defaults.py  # transformers 5.23.0

Each run rewrites the table of its own transformers version and keeps the other one.
``tests/test_lint_dialects.py`` checks the table of the installed version against transformers.
"""

from __future__ import annotations

import logging
import warnings

# model_type values read by the hf dialect (every family of tests/configs and the corpus)
MODEL_TYPES = (
    "llama", "mistral", "mixtral", "qwen2", "qwen2_moe", "qwen3", "qwen3_moe", "gemma", "gemma2", "gemma3_text",
    "phi", "phi3", "gpt_neox", "stablelm", "falcon", "deepseek_v2", "deepseek_v3", "qwen2_vl", "qwen2_5_vl",
    "llama4_text", "olmo", "olmo2", "starcoder2", "cohere", "granite", "glm", "glm4", "smollm3", "gpt_oss",
    "persimmon", "nemotron", "internlm2", "minicpm3", "exaone4", "ernie4_5",
    "gptj", "codegen",  # rotary_dim (GPT-J / CodeGen: only that part rotates; its class default when absent)
    # multimodal: the defaults of their text model (text_config)
    "llava", "llava_next", "gemma3", "llama4", "mistral3", "qwen3_vl", "internvl",
)
KEYS = ("rope_theta", "max_position_embeddings", "partial_rotary_factor", "head_dim", "sliding_window",
        "rope_local_base_freq", "original_max_position_embeddings", "num_attention_heads", "hidden_size",
        "num_hidden_layers", "attention_chunk_size", "qk_rope_head_dim", "kv_channels", "rotary_dim",
        # Llama 4's query temperature of its NoPE layers (RL106: rules/layers.py)
        "attn_temperature_tuning", "floor_scale", "attn_scale")
# the types whose attention rotates config.rotary_dim dims (modeling_gptj.py / modeling_codegen.py, 4.57.1 and
# 5.23.0: self.rotary_dim = config.rotary_dim, the whole head when None); rotary_dim is kept for them only (MiniMax
# M3's class declares one too, read otherwise)
ROTARY_DIM_TYPES = ("gptj", "codegen")
# the default RoPE block, kept when it is more than a base (a scheme, per-layer-type blocks: gpt-oss's
# YaRN, Gemma 3's per-type blocks in 5.x)
BLOCKS = ("rope_parameters", "rope_scaling")


def model_types() -> tuple[str, ...]:
    """:data:`MODEL_TYPES` and every type of the per-layer table of the installed transformers (its
    RoPE decoders and the composite types that hold one)."""
    import transformers

    from ropelaw import data

    t = data.hf_layers().get(transformers.__version__)
    types, wrappers = (t["types"], t["wrappers"]) if t is not None else ({}, {})
    return tuple(dict.fromkeys(MODEL_TYPES + tuple(sorted(types)) + tuple(sorted(wrappers))))


def class_defaults(model_type: str) -> dict | None:
    """The RoPE-relevant defaults of ``model_type``'s config class (text part), or None if unknown."""
    import transformers

    try:
        cfg = transformers.AutoConfig.for_model(model_type)
    except Exception:  # not in this transformers (remote code only)
        return None
    text = _attr(cfg, "text_config")
    if text is not None and not isinstance(text, dict):  # LLaVA, Gemma 3, Qwen2.5-VL: the language model
        cfg = text
    rp = _attr(cfg, "rope_parameters")
    out: dict = {"_class": type(cfg).__name__}
    for key in KEYS:
        if key == "rotary_dim" and model_type not in ROTARY_DIM_TYPES:
            continue
        try:
            value = getattr(cfg, key)
        except Exception:
            value = None
        if key in ("rope_theta", "partial_rotary_factor") and isinstance(rp, dict):
            flat = rp.get("full_attention", rp) if isinstance(rp.get("full_attention"), dict) else rp
            value = flat.get(key, value)
            if key == "rope_theta" and isinstance(rp.get("sliding_attention"), dict):
                out["rope_local_base_freq"] = rp["sliding_attention"].get("rope_theta")
        # head_dim: a default only when it is not hidden_size // num_attention_heads (Gemma: 256)
        if key == "head_dim" and value is not None and \
                value == _attr(cfg, "hidden_size", 0) // max(_attr(cfg, "num_attention_heads", 1) or 1, 1):
            value = None
        if key == "partial_rotary_factor" and value == 1.0:
            value = None
        if key == "max_position_embeddings" and value is None:
            value = _attr(cfg, "max_seq_len")  # DBRX's name for it (read as max_position_embeddings: hf.ALIASES)
        if value is not None and key not in out:
            out[key] = value
    for key in BLOCKS:
        block = _attr(cfg, key)
        if isinstance(block, dict) and _more_than_a_base(block):
            out[key] = {k: v for k, v in block.items()}
            break
    return out


def _attr(cfg, key: str, default=None):
    """``getattr`` that treats any error as absent (Gemma 4's per-layer attributes raise on global access)."""
    try:
        return getattr(cfg, key, default)
    except Exception:
        return default


def _more_than_a_base(block: dict) -> bool:
    """A scheme other than plain RoPE, or blocks per layer type."""
    if any(isinstance(v, dict) or v is None for v in block.values()) and block:
        return True
    kind = block.get("rope_type", block.get("type", "default"))
    return kind not in ("default", None)


def table() -> dict:
    logging.disable(logging.WARNING)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {mt: d for mt in model_types() if (d := class_defaults(mt)) is not None}


ABOUT = ("The defaults of transformers' config classes, per transformers version and model_type (the text part of "
         "a composite): versions: transformers version -> model_type -> _class (the config class) and each "
         "RoPE-relevant key it sets (rope_theta, max_position_embeddings, head_dim where it is not hidden_size / "
         "num_attention_heads, partial_rotary_factor where it is not 1, the default rope block where it is more "
         "than a base, ...). Generated by scripts/hf_defaults.py; do not edit. tests/test_lint_dialects.py "
         "regenerates the installed version's table and compares.")


def main() -> None:
    import transformers

    from ropelaw import data

    print(data.write_versions("hf_defaults", transformers.__version__, table(), about=ABOUT,
                              generated_by="python scripts/hf_defaults.py (under each transformers version; it keeps "
                                           "the other version's)",
                              source="transformers.AutoConfig.for_model(model_type) of each version ({versions})"))


if __name__ == "__main__":
    main()
