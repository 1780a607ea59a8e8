"""The table engine's per-model special cases as data rows (:mod:`ropelaw.lint.table` reads them).

A row says which configs it applies to (``model_types``: exact ``model_type`` values, lower case;
``type_prefixes``: prefixes of one; ``architectures``: substrings of an ``architectures`` entry; ``keys``: keys
present with a non-null value in the config's section), what it means (``effect``, one of :data:`EFFECTS`, with
its numbers and texts in ``values``) and the code that says so (``source``). The engine holds no model name:
it asks :func:`row` for an effect, and a new model with a known effect is one more row.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol
from collections.abc import Mapping


class HasKeys(Protocol):
    """What a row's ``keys`` are tested on: a section of the config (:class:`ropelaw.lint.sections.Section`)."""

    def has(self, name: str) -> bool: ...


@dataclass(frozen=True)
class Row:
    """One per-model special case of the table engine."""

    effect: str
    source: str
    model_types: tuple[str, ...] = ()
    type_prefixes: tuple[str, ...] = ()
    architectures: tuple[str, ...] = ()
    keys: tuple[str, ...] = ()
    values: Mapping[str, Any] = field(default_factory=dict)

    def applies(self, model_type: str, architectures: str = "", section: HasKeys | None = None) -> bool:
        """Whether the row applies to a config of ``model_type`` whose ``architectures`` entries are joined in
        ``architectures``, with ``section``'s keys."""
        return (model_type in self.model_types
                or any(model_type.startswith(p) for p in self.type_prefixes)
                or any(a in architectures for a in self.architectures)
                or (section is not None and any(section.has(k) for k in self.keys)))


# what each effect makes the engine do
EFFECTS = {
    "type_from_architectures": "no model_type: the type is values['model_type'] (remote code named by its class)",
    "rotates_half": "the rotary embedding is built for half the rotary dims: the rotated dims are halved",
    "base_times_ratio": "no base key: the base is values['base'] times the key values['key'] (1 when absent)",
    "class_head_dim": "the config class's head_dim default wins over hidden_size / num_attention_heads",
    "base_key": "the top-level base is values['key'] only (the class default when absent); the keys "
                "values['ignored'] are not read (RV019, a warning, where the value differs from the one that runs)",
    "nested_base": "the base written in the sub-mapping values['section'], read by transformers "
                   "values['read_by'] and ignored by the other",
    "true_flag_scheme": "the key written as true runs scheme values['scheme'] with fixed parameters",
    "flag_scheme": "the key role values['role'] written as true runs scheme values['scheme'] past the "
                   "training length (seq_length)",
    "flag_note": "the key role values['role'] written as true scales the queries: a note",
    "ntk_alpha": "scheme values['scheme'] with an alpha is plain RoPE at an NTK-aware base",
    "seq_length_default": "no seq_length: the config class's seq_length default is the training length",
    "temperature_tuning": "the layers without RoPE scale their queries (attention temperature tuning)",
    "local_base_default": "no local base key: the config class's rope_local_base_freq default for the local layers",
    "local_base_into_block": "the key values['key'] fills the rope_theta of the layer type values['type']'s block "
                             "when that block has none (the class's default block included)",
    "alternating_layers": "global and local (sliding-window) layers alternate",
    "window_after_layers": "the flag values['flag'] written true keeps sliding_window and makes sliding-window "
                           "layers when the config writes no layer_types (values['layers']: 'from', the layers "
                           "from values['key'] on, class default values['default']; 'even_below', the even "
                           "layers below it; 'all', every layer, layer_types and the key unread); false drops "
                           "sliding_window (no layer slides); values['versions']: the transformers versions "
                           "(prefixes) it holds for, all when absent",
    "bidirectional_flag": "the key values['key'] written true (Python truth) makes every attention layer attend "
                          "both ways: full layers every key, sliding layers the keys with |q - k| < the window, "
                          "which the config class first sets to sliding_window // 2 + 1 (values['halves']); "
                          "values['versions'] as for window_after_layers; values['unmodelled']: the runtime's "
                          "behaviour depends on the attention implementation, RV025 saying it (spans read causal); "
                          "values['strict_bool']: the versions whose config class refuses a value not bool / null",
    "odd_dims_round_up": "an odd number of rotary dims int(head_dim * partial_rotary_factor) rotates one more",
    "layer_runs": "the decoder layers run several times in one forward, each run a layer: the layers are the key "
                  "values['per_stack'] (when written, else the layer count the file writes) times the product of "
                  "(key + add) over values['cycles'] ((key, add, the class default) each); a file that writes "
                  "neither count has the class's default count, which counts the runs already",
}

CHATGLM_SOURCE = ("THUDM/chatglm3-6b and THUDM/glm-4-9b-chat modeling_chatglm.py (remote code): "
                  "RotaryEmbedding(rotary_dim // 2, rope_ratio=config.rope_ratio), base = 10000 * rope_ratio")
QWEN1_SOURCE = "Qwen/Qwen-7B modeling_qwen.py and configuration_qwen.py (remote code, class QWenLMHeadModel)"

ROWS: tuple[Row, ...] = (
    Row("type_from_architectures", CHATGLM_SOURCE, architectures=("ChatGLM",), values={"model_type": "chatglm"}),
    Row("type_from_architectures", QWEN1_SOURCE, architectures=("QWenLMHeadModel",), values={"model_type": "qwen"}),
    Row("rotates_half", CHATGLM_SOURCE, model_types=("chatglm",), architectures=("ChatGLM",), keys=("rope_ratio",),
        values={"note": "ChatGLM rotates half: / 2"}),
    Row("base_times_ratio", CHATGLM_SOURCE, model_types=("chatglm",), architectures=("ChatGLM",),
        keys=("rope_ratio",),
        values={"base": 10000.0, "key": "rope_ratio", "model": "ChatGLM"}),
    Row("class_head_dim", "transformers GemmaConfig / Gemma2Config / Gemma3TextConfig declare head_dim (256) apart "
                          "from hidden_size / num_attention_heads; modeling_gemma*.py GemmaAttention reads "
                          "config.head_dim",
        type_prefixes=("gemma",)),
    Row("nested_base", "transformers 4.57.1 modeling_dbrx.py DbrxAttention reads config.attn_config.rope_theta; "
                       "5.23.0's DbrxConfig ignores it and runs rope_parameters' rope_theta (default 10,000) (both "
                       "measured by the per-layer differential, tests/test_hf_layers.py)",
        keys=("attn_config",),
        values={"section": "attn_config", "key": "rope_theta", "read_by": "4.", "reads": "4.57.1",
                "config_class": "DbrxConfig"}),
    Row("base_key", "transformers 4.57.1 configuration_gpt_neox.py GPTNeoXConfig.__init__: self.rope_theta = "
                    "rotary_emb_base (default 10000; a rope_theta in the file is overwritten); 5.23.0 "
                    "convert_rope_params_to_dict: rope_parameters.setdefault('rope_theta', "
                    "kwargs.pop('rotary_emb_base', default_theta)) (a top-level rope_theta is not read; a "
                    "rope_parameters / rope_scaling block's rope_theta is); measured with rope_theta 1e6 and "
                    "rotary_emb_base 1e4 (and the reverse, and each alone) under both versions: inv_freq is "
                    "rotary_emb_base's (tests/test_neox_base.py)",
        model_types=("gpt_neox",),
        values={"key": "rotary_emb_base", "ignored": ("rope_theta",), "config_class": "GPTNeoXConfig",
                "default": 10000}),
    Row("true_flag_scheme", "Megatron-Core --use-rope-scaling: megatron/core/models/common/embeddings/"
                            "rotary_pos_embedding.py RotaryEmbedding._apply_scaling(factor=8, low_freq_factor=1, "
                            "high_freq_factor=4, original_max_position_embeddings=8192), Llama 3.1's scaling",
        keys=("rope_scaling",),
        values={"scheme": "llama3", "factor_role": "factor_flag",
                "note": "rope_scaling: true is Megatron-Core's Llama 3.1 scaling (low 1, high 4, original 8192)",
                "scheme_note": "Megatron-Core rope scaling", "params_note": "Megatron-Core default",
                "params": {"factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                           "original_max_position_embeddings": 8192}}),
    Row("flag_scheme", QWEN1_SOURCE + ": use_dynamic_ntk raises the base past seq_length",
        values={"role": "use_dynamic_ntk", "scheme": "qwen_dynamic", "scheme_note": "use_dynamic_ntk: true (Qwen v1)",
                "length_param": "original_max_position_embeddings",
                "note": "true: Qwen v1's remote code raises the base by alpha^(d/(d-2)), "
                        "alpha = 2^ceil(log2(L/seq_length) + 1) - 1, once the input exceeds seq_length"}),
    Row("flag_note", QWEN1_SOURCE + ": use_logn_attn scales the queries past seq_length (frequencies unchanged)",
        values={"role": "use_logn_attn",
                "note": "true: Qwen v1 scales queries by log_seq_length(position) past seq_length "
                        "(frequencies unchanged)"}),
    Row("ntk_alpha", "transformers HunYuanDenseV1RotaryEmbedding (4.57.1: DynamicNTKAlphaRotary; 5.23.0: rope_type "
                     "ntk_alpha): dynamic with an alpha is a fixed base rope_theta * alpha^(d/(d-2))",
        type_prefixes=("hunyuan",), values={"scheme": "dynamic", "param": "alpha"}),
    Row("seq_length_default", QWEN1_SOURCE + ": QWenConfig's seq_length default", model_types=("qwen",)),
    Row("temperature_tuning", "transformers modeling_llama4.py Llama4TextAttention.forward (4.57.1 and 5.23.0): "
                              "attn_temperature_tuning scales the NoPE layers' queries",
        model_types=("llama4_text",)),
    Row("local_base_default", "transformers Gemma3TextConfig rope_local_base_freq (default 10,000): the sliding "
                              "layers' base (modeling_gemma3.py rotary_emb_local)",
        model_types=("gemma3_text",)),
    Row("local_base_into_block", "transformers 5.23.0 configuration_gemma3.py Gemma3TextConfig."
                                 "convert_rope_params_to_dict: rope_parameters['sliding_attention'].setdefault("
                                 "'rope_theta', rope_local_base_freq)",
        model_types=("gemma3_text",), values={"key": "rope_local_base_freq", "type": "sliding_attention"}),
    Row("alternating_layers", "transformers modeling_gemma2.py / modeling_gemma3.py: sliding-window and global "
                              "layers alternate (Gemma2: every other layer; Gemma 3: sliding_window_pattern)",
        model_types=("gemma2", "gemma3_text", "gemma3")),
    Row("window_after_layers", "transformers Qwen2Config / Qwen3Config (4.57.1 __init__, 5.23.0 __post_init__): "
                               "sliding_window = sliding_window if use_sliding_window else None; layer_types "
                               "default ['sliding_attention' if sliding_window is not None and i >= "
                               "max_window_layers else 'full_attention']; modeling_qwen2.py / modeling_qwen3.py: a "
                               "sliding_attention layer attends the last sliding_window keys with the main rotary "
                               "(run in tests/test_qwen_window.py under both versions)",
        model_types=("qwen2", "qwen3"),
        values={"flag": "use_sliding_window", "flag_default": False, "key": "max_window_layers", "default": 28,
                "kinds_key": "layer_types", "at": "sliding_attention", "value": "full_attention",
                "role": (True, "main", "window", 0), "layers": "from"}),
    Row("window_after_layers", "transformers 4.57.1 Qwen2MoeConfig / Qwen3MoeConfig __init__ and 5.23.0 "
                               "Qwen3MoeConfig __post_init__: sliding_window = sliding_window if use_sliding_window "
                               "else None, no layer_types; modeling_qwen2_moe.py (4.57.1) _update_causal_mask and "
                               "modeling_qwen3_moe.py (both) create_sliding_window_causal_mask give every layer the "
                               "window under eager / sdpa attention, whatever max_window_layers says (4.57.1 "
                               "Qwen2Moe's flash-attention path passes the window only from max_window_layers on: "
                               "not modelled) (run in tests/test_qwen_moe_window.py under both versions)",
        model_types=("qwen2_moe", "qwen3_moe"),
        values={"flag": "use_sliding_window", "flag_default": False, "at": "-", "value": "-",
                "kinds_key": "layer_types", "role": (True, "main", "window", 0), "layers": "all",
                "versions": ("4.",)}),
    Row("window_after_layers", "transformers 5.23.0 Qwen3MoeConfig __post_init__ (as 4.57.1): sliding_window = "
                               "sliding_window if use_sliding_window else None, no layer_types; modeling_qwen3_moe.py "
                               "create_sliding_window_causal_mask for every layer when sliding_window is set (run in "
                               "tests/test_qwen_moe_window.py)",
        model_types=("qwen3_moe",),
        values={"flag": "use_sliding_window", "flag_default": False, "at": "-", "value": "-",
                "kinds_key": "layer_types", "role": (True, "main", "window", 0), "layers": "all",
                "versions": ("5.",)}),
    Row("window_after_layers", "transformers 5.23.0 Qwen2MoeConfig __post_init__: sliding_window = sliding_window if "
                               "use_sliding_window else 0; layer_types default ['sliding_attention' if bool((i + 1) "
                               "% 2) and i < max_window_layers and use_sliding_window else 'full_attention']; "
                               "modeling_qwen2_moe.py: a sliding_attention layer attends the last sliding_window "
                               "keys with the main rotary (run in tests/test_qwen_moe_window.py)",
        model_types=("qwen2_moe",),
        values={"flag": "use_sliding_window", "flag_default": False, "key": "max_window_layers", "default": 28,
                "kinds_key": "layer_types", "at": "sliding_attention", "value": "full_attention",
                "role": (True, "main", "window", 0), "layers": "even_below", "versions": ("5.",),
                # measured on mlc_qwen2moe.json changed (tests/test_qwen_moe_window.py): what the runtime does
                "null_window": "its sliding layers' mask finds no window: the forward fails (ValueError: Could not "
                               "find a `sliding_window` argument in the config, or it is not set)",
                "zero_window": "the config class sets sliding_window to 0 and the written sliding layers' mask lets "
                               "no query attend any key: the forward with the default cache fails (RuntimeError: "
                               "the mask is one key short of the scores), without a cache eager attention averages "
                               "every key, later ones too"}),
    Row("bidirectional_flag", "transformers Gemma3TextConfig (4.57.1 __init__, 5.23.0 __post_init__): if "
                              "use_bidirectional_attention: sliding_window = (sliding_window // 2) + 1; "
                              "modeling_gemma3.py Gemma3TextModel.forward: if config.use_bidirectional_attention, "
                              "the full_attention mask ORs True (every key) and the sliding_attention mask ORs "
                              "_bidirectional_window_overlay(sliding_window): abs(q_idx - kv_idx) < sliding_window "
                              "(run in tests/test_hf_bidirectional.py under both versions)",
        model_types=("gemma3_text",), values={"key": "use_bidirectional_attention", "halves": True,
                                              # 5.23.0's dataclass field is bool | None: 1 is refused (measured)
                                              "strict_bool": ("5.",)}),
    Row("bidirectional_flag", "transformers 5.23.0 modeling_gemma.py / modeling_gemma2.py GemmaAttention / "
                              "Gemma2Attention: is_causal = not getattr(config, 'use_bidirectional_attention', False), "
                              "the mask unchanged (create_causal_mask): measured on tiny models, Gemma under sdpa (no "
                              "padding: no mask, sdpa's is_causal) attends later keys on every layer, under eager "
                              "causal; Gemma 2 refuses sdpa and runs causal under eager",
        model_types=("gemma", "gemma2"),
        values={"key": "use_bidirectional_attention", "versions": ("5.",),
                "unmodelled": "sets only the attention modules' is_causal, not the mask: under sdpa without a "
                              "padding mask (Gemma) every layer attends later keys too, under eager causal "
                              "(measured); ropelaw reads causal spans"}),
    Row("odd_dims_round_up", "transformers modeling_gpt_neox.py / modeling_nemotron.py / modeling_phi3.py and the "
                             "GLM family's modeling_glm.py / modeling_glm4.py / modeling_glm4_moe.py / "
                             "modeling_glm4v.py / modeling_glm4v_moe.py (4.57.1 and 5.23.0), 5.23.0's "
                             "modeling_glm_image.py / modeling_glm_ocr.py (their Text models; GLM-4.6V and GLMGA "
                             "run glm4v_text): the RotaryEmbedding "
                             "makes ceil(d / 2) frequencies base^(-2k/d) with d odd (arange(0, d, 2) / d) and "
                             "apply_rotary_pos_emb slices the head by cos.shape[-1] (GLM, GLM-4, GLM-4V first take "
                             "cos[..., :ceil(d / 2)] and repeat_interleave it by 2: the same pairs, interleaved), so "
                             "2 * ceil(d / 2) dims rotate (run in tests/test_severity_parity.py (GPT-NeoX) and "
                             "tests/test_odd_rotary.py under both versions); read as d + 1 dims at the effective base "
                             "base^((d + 1)/d), exact for the "
                             "schemes of modeling_rope_utils (4.57.1 and 5.23.0) whose frequencies are a function "
                             "of the unscaled inv_freq / wavelengths only (default, linear: inv_freq / factor; "
                             "llama3: bands of 2 pi / inv_freq; longrope: inv_freq / ext_factors), checked against "
                             "each version's inv_freq in tests/test_odd_rotary.py; dynamic's base * (...)^(dim / "
                             "(dim - 2)) and yarn's ramp of dim // 2 entries use dim itself: not analysed",
        model_types=("gpt_neox", "nemotron", "phi3", "glm", "glm4", "glm4_moe", "glm4v_text", "glm4v_moe_text",
                     "glm4v", "glm4v_moe", "glm_image_text", "glm_ocr_text", "glm_image", "glm_ocr"),
        # the composites (GLM-4V, GLM-Image, GLM-OCR): their text model's rotary. Not in the row (measured under
        # 5.23.0, tests/test_odd_rotary.py): glm4_moe_lite / glm_moe_dsa (MLA: an odd qk_rope_head_dim is refused
        # by validate_rope), glm5_next_text (NoPE: qk_rope_head_dim > 0 refused), glmasr (its text model is llama)
        values={"schemes": ("default", "linear", "llama3", "longrope"),
                "crashes": {"yarn": "builds a ramp of d // 2 entries against ceil(d / 2) frequencies: a size "
                                    "mismatch when the rotary is built (measured, both versions)"}}),
    Row("layer_runs", "transformers 5.23.0 configuration_hrm_text.py HrmTextConfig.__post_init__: when "
                      "num_layers_per_stack is None it takes num_hidden_layers, which becomes num_layers_per_stack * "
                      "H_cycles * (L_cycles + 1) (defaults H_cycles 2, L_cycles 3); modeling_hrm_text.py "
                      "HrmTextModel.forward runs its L stack L_cycles times and its H stack once per H cycle, each "
                      "stack num_layers_per_stack layers and each run its own cache slot (layer_idx + cycle_offset) "
                      "(measured by the per-layer differential, tests/test_hf_layers.py: the runs numbered by call "
                      "order)",
        model_types=("hrm_text",),
        values={"per_stack": "num_layers_per_stack", "cycles": (("H_cycles", 0, 2), ("L_cycles", 1, 3)),
                "versions": ("5.",)}),
)
assert {r.effect for r in ROWS} <= set(EFFECTS)


def rows(effect: str) -> tuple[Row, ...]:
    """The rows of ``effect``, in table order."""
    return tuple(r for r in ROWS if r.effect == effect)


def row(effect: str, model_type: str, architectures: str = "", section: HasKeys | None = None,
        version: str = "") -> Row | None:
    """The first row of ``effect`` that applies (:meth:`Row.applies`) and holds for transformers ``version`` (a
    row's ``values['versions']``: prefixes; none: every version), or None."""
    return next((r for r in rows(effect) if r.applies(model_type, architectures, section)
                 and any(version.startswith(v) for v in r.values.get("versions", ("",)))), None)
