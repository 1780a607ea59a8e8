"""Which transformers model types the probe runs, and the tiny configuration of each (the config
class's defaults, shrunk). Needs transformers (the generator of ``hf_layers.json`` and the ``hf`` tests
use it; the linter never imports it). :mod:`.probes` runs the models and observes their layers.
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
import logging
import warnings
from typing import Any

PROBE = "ropelaw_probe"  # the attention implementation name the probe registers
LENGTH = 24  # tokens per forward: longer than the probe's windows and chunks
WINDOW = 5  # sliding window set by the span variants (< LENGTH)
CHUNK = 8  # attention_chunk_size set by the span variants (< LENGTH, != WINDOW)
LAYERS = 8  # decoder layers of a tiny model (Gemma 3's pattern is 6 long)
MAX_PARAMS = 120_000_000  # a tiny model is far below; more means a part the probe did not shrink


@contextlib.contextmanager
def quiet():
    logger = logging.getLogger("transformers")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        logger.setLevel(level)


# -----------------------------------------------------------------------------------------
# which model types: a decoder with a RotaryEmbedding class in its modeling module
# -----------------------------------------------------------------------------------------
def modeling_module(config_class):
    name = config_class.__module__.replace(".configuration_", ".modeling_")
    return importlib.import_module(name)


def rotary_classes(module) -> list[str]:
    return sorted(n for n, o in vars(module).items()
                  if inspect.isclass(o) and n.endswith("RotaryEmbedding") and o.__module__ == module.__name__)


def text_sub_config(config_class) -> str | None:
    """The model_type of a composite config's text part (``text_config``), if it has one."""
    subs = getattr(config_class, "sub_configs", None) or {}
    for key in ("text_config", "language_config", "llm_config"):
        sub = subs.get(key)
        if sub is not None and hasattr(sub, "model_type") and isinstance(sub.model_type, str) and sub.model_type:
            return sub.model_type
    return None


# the text models of composites that the auto mappings give no model class (4.57.1 does not even register
# MllamaTextConfig by type): built through the modeling module's causal LM whose config_class is the text config
PROBED_TEXT_MODELS = ("mllama_text_model",)
# a list of layer indices that names the layers of one kind (Mllama's cross_attention_layers): the kind of the
# layers it lists, of the others; what each kind does is measured (the names only label the table's rows)
INDEX_KINDS = {"cross_attention_layers": ("cross_attention", "self_attention")}


def config_class(model_type: str):
    """The config class of ``model_type``: CONFIG_MAPPING's, else the text config of the composite whose
    ``text_config`` has that model_type (4.57.1's MllamaTextConfig)."""
    from transformers import CONFIG_MAPPING

    if model_type in CONFIG_MAPPING:
        return CONFIG_MAPPING[model_type]
    for mt in (k for k in CONFIG_MAPPING if model_type.startswith(k + "_")):  # mllama -> mllama_text_model
        subs = getattr(CONFIG_MAPPING[mt], "sub_configs", None)
        sub = subs.get("text_config") if isinstance(subs, dict) else None
        if sub is not None and getattr(sub, "model_type", None) == model_type:
            return sub
    raise KeyError(model_type)


def text_model_class(config_class) -> str | None:
    """The causal LM of the modeling module whose ``config_class`` is ``config_class`` (Mllama's text model:
    MllamaForCausalLM), for a type of :data:`PROBED_TEXT_MODELS`."""
    if getattr(config_class, "model_type", None) not in PROBED_TEXT_MODELS:
        return None
    module = modeling_module(config_class)
    found = sorted(n for n, c in vars(module).items() if isinstance(c, type) and n.endswith("ForCausalLM")
                   and getattr(c, "config_class", None) is config_class)
    return found[0] if found else None


def layer_kinds(config: dict, key: str | None, n: int) -> list:
    """Each layer's kind in a probe's config: ``config[key]`` (a per-layer list), or for an index list
    (:data:`INDEX_KINDS`) the kind of the layers it lists and of the others; ``[None] * n`` without a key."""
    if key is None:
        return [None] * n
    if key in INDEX_KINDS:
        at, other = INDEX_KINDS[key]
        listed = config.get(key) or []
        return [at if i in listed else other for i in range(n)]
    return list(config.get(key, [None] * n))


COMPUTED_KINDS = ("layers_block_type",)  # a per-layer list of kinds the config class computes (a property)


def computed_kinds(config_class) -> str | None:
    """The property of ``config_class`` that lists each layer's kind when it has no ``layer_types``
    (Jamba's ``layers_block_type``: "attention" / "mamba" from attn_layer_period and attn_layer_offset)."""
    return next((k for k in COMPUTED_KINDS if isinstance(getattr(config_class, k, None), property)), None)


def candidate_types() -> tuple[list[tuple[str, str]], dict[str, str], dict[str, str]]:
    """``(candidates, wrappers, skipped)`` of the installed transformers:

    - candidates: ``(model_type, model class name)`` for every type whose modeling module defines a
      ``*RotaryEmbedding`` class (or whose config class computes its layers' kinds, :func:`computed_kinds`:
      Jamba, whose attention layers run no rotary) and that has a causal-LM (else a base) model class and
      no text sub-config;
    - wrappers: composite model_type -> the model_type of its text part (a multimodal config.json
      is read through its ``text_config``);
    - skipped: model_type -> why it is not a candidate (module not importable, no model class).
    """
    from transformers import CONFIG_MAPPING
    from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING_NAMES, MODEL_MAPPING_NAMES

    cands, wrappers, skipped = [], {}, {}
    with quiet():
        for mt in sorted(CONFIG_MAPPING.keys()):
            try:
                cls = CONFIG_MAPPING[mt]
                module = modeling_module(cls)
            except Exception as exc:  # optional dependency missing (torchaudio ...), or no modeling file
                skipped[mt] = f"modeling module not importable: {type(exc).__name__}: {str(exc)[:80]}"
                continue
            if not rotary_classes(module) and not computed_kinds(cls):
                continue
            text = text_sub_config(cls)
            if text is not None and text != mt:
                wrappers[mt] = text
                sub = cls.sub_configs["text_config"] if text in PROBED_TEXT_MODELS else None
                text_class = text_model_class(sub) if sub is not None else None
                if text_class:
                    cands.append((text, text_class))
                    skipped.pop(text, None)
                    continue
                if text not in CONFIG_MAPPING:  # 4.57.1's mllama_text_model: its class is not registered, so
                    # no probe builds it by type (a composite's text model the table cannot describe: RV024)
                    skipped.setdefault(text, f"the text model of {mt} ({cls.__name__}'s "
                                             f"text_config) is not a model_type of CONFIG_MAPPING: not probed")
                continue
            name = MODEL_FOR_CAUSAL_LM_MAPPING_NAMES.get(mt) or MODEL_MAPPING_NAMES.get(mt)
            if isinstance(name, (tuple, list)):
                name = name[0]
            if mt in PROBED_TEXT_MODELS:  # a candidate through its composite (above)
                continue
            if not isinstance(name, str) or not name or not hasattr(module, name):
                skipped[mt] = "no model class for this config in the auto mappings"
                continue
            cands.append((mt, name))
    return cands, wrappers, skipped


def candidate(model_type: str) -> str | None:
    """The model class name :func:`candidate_types` gives ``model_type`` (None: not a candidate), without
    importing every other modeling module."""
    from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING_NAMES, MODEL_MAPPING_NAMES

    with quiet():
        try:
            cls = config_class(model_type)
            module = modeling_module(cls)
        except Exception:
            return None
        if model_type in PROBED_TEXT_MODELS:
            return text_model_class(cls)
        text = text_sub_config(cls)
        if not (rotary_classes(module) or computed_kinds(cls)) or (text is not None and text != model_type):
            return None
    name = MODEL_FOR_CAUSAL_LM_MAPPING_NAMES.get(model_type) or MODEL_MAPPING_NAMES.get(model_type)
    name = name[0] if isinstance(name, (tuple, list)) else name
    return name if isinstance(name, str) and name and hasattr(module, name) else None


# -----------------------------------------------------------------------------------------
# a tiny model from the config class's defaults
# -----------------------------------------------------------------------------------------
_KEEP = ("position", "window", "chunk", "rope", "theta", "rotary", "partial", "seq", "length", "context",
         "layer", "interval", "pattern", "head_dim", "token_id", "token_index", "_id", "sliding", "nope")


# Constructor arguments a config class's defaults lack for its model to build at all (a None the
# modeling code divides by or indexes); each value is the one the published checkpoints use, except where a
# tiny model's shape needs its own (said there).
_GLM4V = {"partial_rotary_factor": 0.5, "rope_scaling": {"rope_type": "default", "mrope_section": [8, 12, 12]}}
FILL_INS: dict[str, dict] = {
    "dbrx": {"attn_config": {"rope_theta": 500000.0, "kv_n_heads": 2, "clip_qkv": 8.0}},  # DbrxAttentionConfig
    # declares no rope_theta but DbrxAttention reads attn_config.rope_theta, and 5.x clamps by clip_qkv
    # unconditionally (databricks/dbrx-base: 500,000 and 8)
    "deepseek_v2": {"num_experts_per_tok": 2},  # default None; topk(k=None) fails
    "lfm2_moe": {"layer_types": ["conv", "full_attention"] * (LAYERS // 2)},  # default None
    "jamba": {"use_mamba_kernels": False},  # 4.57.1 raises on CPU without the CUDA kernels (a runtime choice, no
    # position in it; 5.23.0 falls back to the slow path itself)
    "lfm2": {"layer_types": ["conv", "full_attention"] * (LAYERS // 2)},  # default: every layer attends; the
    # published files (LiquidAI/LFM2-1.2B: full_attn_idxs [2, 5, 8, 10, 12, 14]) mostly convolve
    "dots1": {"n_routed_experts": 4, "num_experts_per_tok": 2, "n_shared_experts": 1},  # defaults None, passed to
    # range() / torch.empty at init; the values shrunk_value gives expert counts (sizes: no position in them)
    "chameleon": {"vocabulary_map": {"<image>": 8}},  # default None, read at init (.get("<image>")); the map is
    # used by image inputs only (a text forward never reads it)
    "gemma3n_text": {"layer_types": ["sliding_attention", "full_attention"] * (LAYERS // 2),
                     "num_kv_shared_layers": LAYERS // 2},  # the class defaults (35 layers, 15 of them sharing
    # keys and values, full attention at every 5th) leave 8 - 15 < 0 layers of their own at 8 layers: here the last
    # half shares the first half's keys and values, each kind producing its own
    "granitemoehybrid": {"layer_types": ["mamba", "mamba", "mamba", "attention"] * (LAYERS // 4)},  # default
    # None: every layer Mamba, no attention to observe (the hybrid files write layer_types out)
    # GLM-4V text models: the rotary splits its pairs into mrope_section (class default [8, 12, 12]: 32 pairs) and
    # rotates int(head_dim x partial_rotary_factor) dims; the class defaults (4.57.1 also no rope_scaling block, which
    # its attention indexes) rotate 64 (Glm4v: 128-dim heads, no factor) or 11 pairs (Glm4vMoe: 4,096 / 96 heads = 42,
    # factor 0.5), neither the 32 the sections split, so no default model runs. Half of 128-dim heads rotated, the
    # sections written out: the 32 pairs they split (the GLM-4.5V file: head_dim 128, partial_rotary_factor 0.5)
    "glm4v_text": _GLM4V,
    "glm_image_text": _GLM4V,
    "glm4v_moe_text": {"head_dim": 128, "hidden_size": 256, **_GLM4V},
    "Glm4vMoe_text": {"head_dim": 128, "hidden_size": 256, **_GLM4V},  # 4.57.1's class of glm4v_moe_text
    "jetmoe": {"num_key_value_heads": 1},  # 4.57.1's JetMoe has num_key_value_heads x num_experts_per_tok query
    # heads (its mixture of attention heads: each of the 2 experts per token gives num_key_value_heads heads); the
    # probe's 2 query heads over 2 KV heads left queries of 4 heads viewed as 2; 1 KV head x 2 experts = 2 heads
    "esm": {"pad_token_id": 1, "position_embedding_type": "rotary"},  # defaults None and "absolute": the embedding
    # numbers positions from the input_ids by pad_token_id (None: fails) and only "rotary" has a RoPE; ESM-2's files
    # (facebook/esm2_t6_8M_UR50D: pad_token_id 1, position_embedding_type "rotary")
    "longcat_flash": {"num_layers": LAYERS // 2},  # each of its num_layers decoder layers holds 2 attention
    # sublayers (layer indices 2 i and 2 i + 1), num_hidden_layers = 2 x num_layers (4.57.1 stores both, its default
    # 56 and 28, and builds num_layers; 5.x derives num_hidden_layers): LAYERS sublayers
    "cohere_compass_text": {"rope_parameters": {t: {"rope_type": "default", "rope_theta": 10000.0}
                                                for t in ("full_attention", "sliding_attention")}},  # default {}: its
    # rotary indexes rope_parameters[<layer type>] for every type in layer_types (a None block: that type has no
    # RoPE); no published file seen: plain RoPE at transformers' usual 10,000 per type (the probe gives each its own)
    # the TTS backbones' flow head is conditioned on the backbone's hidden state: the config validates
    # flow_head_config.condition_dim == hidden_size (default 1,024 / 768); the tiny backbone's hidden size is 2 heads x
    # the class's 64-dim heads = 128. Their input_ids are text tokens (audio latents come as their own inputs)
    "pocket_tts": {"flow_head_config": {"condition_dim": 128}},
    "gradium_phonon_tts": {"flow_head_config": {"condition_dim": 128}},
    "mimo_v2_flash": {"num_key_value_heads": 1},  # the tiny model's 2 heads: its sliding layers have twice
    # num_key_value_heads (MiMoV2FlashAttention), and 2 heads // (2 x 2) KV heads = 0 KV groups (repeat_kv then
    # gives 0 heads, a size mismatch in the forward); 1 KV head keeps the published file's grouping, 64 heads over
    # 4 KV heads (8 on sliding layers): XiaomiMiMo/MiMo-V2-Flash, the config class's defaults
}


# Settings a tiny model makes small so that the probe's LENGTH tokens reach what they govern (a default longer
# than LENGTH would leave it unseen and the layer would look like something it is not at real lengths).
REACH: dict[str, dict] = {
    # DeepseekV4Config's compress_rates default {CSA: 4, HCA: 128}: an HCA layer adds one compressed key per 128
    # tokens, none in 24, so its attention looked like a plain window; at 8 its compressed keys are seen (3 in 24)
    "deepseek_v4": {"compress_rates": {"compressed_sparse_attention": 4, "heavily_compressed_attention": 8}},
}


MROPE = ("qwen2_vl_text", "qwen2_5_vl_text", "qwen2_vl", "qwen2_5_vl")
# 4.57.1's Qwen3-VL text configs default to rope_scaling None and their rotary reads
# rope_scaling.get("mrope_section"): the published block (Qwen/Qwen3-VL-8B-Instruct: {"rope_type": "default",
# "mrope_section": [24, 20, 20], "mrope_interleaved": true} for 64 pairs)
MROPE_INTERLEAVED = ("qwen3_vl_text", "qwen3_vl_moe_text")


def shrunk_value(key: str, value: Any, token_id: int = 3) -> Any:
    """The small value a size-like setting ``key`` takes in a tiny model (None: keep ``value``): the
    vocabulary 128 (token ids past it become ``token_id``), experts 4 (2 per token, 1 shared, 1 group),
    MLP / expert widths 64, LoRA ranks 16, linear-attention / Mamba heads and groups 2, state sizes 16;
    everything RoPE or the layer layout reads (``_KEEP``: head dims, lengths, windows, per-layer settings)
    is kept."""
    k = key.lower()
    if isinstance(value, bool):
        return None
    if k.endswith(("token_id", "token_index")) or k in ("bos_token_id", "eos_token_id", "pad_token_id"):
        if isinstance(value, int) and value >= 128:
            return token_id
        if isinstance(value, list) and any(isinstance(v, int) and v >= 128 for v in value):
            return [2]
        return None
    if not isinstance(value, int):
        return None
    if "vocab_size" in k:
        return min(value, 128)
    if "per_tok" in k or k in ("top_k", "topk", "moe_topk", "moe_k", "num_experts_per_token", "experts_per_token"):
        return min(value, 2)
    if "shared_expert" in k and "intermediate" not in k and "size" not in k:
        return min(value, 1)
    if k in ("n_group", "topk_group", "num_expert_group", "topk_groups"):
        return 1
    if "expert" in k and "intermediate" not in k and "size" not in k:
        return min(value, 4)
    if "intermediate" in k or "ffn" in k or k.endswith("_mlp_size"):
        return min(value, 64)
    if "lora_rank" in k:
        return min(value, 16)
    if any(s in k for s in _KEEP):
        return None
    if k.endswith("heads") or k.endswith("_groups") or k == "n_mamba_heads":  # linear-attention / mamba heads
        return min(value, 2)
    if "d_state" in k:  # state-space size (Mamba-2 hybrids)
        return min(value, 16)
    return None


def sub_config_overrides(config_class) -> dict:
    """The non-text sub-configs of a composite (a vision / audio / protein encoder: ``sub_configs`` other than
    ``text_config``) written out small: one layer (or block), two heads of the default head size, MLP widths 64;
    their other settings the class defaults. For a model that stays over :data:`MAX_PARAMS` or does not build
    without them (Phi-4-multimodal, Evolla): the probe reads the text decoder, which these do not change."""
    with quiet():
        d = config_class().to_dict()
    out = {}
    for key, sub_class in (getattr(config_class, "sub_configs", None) or {}).items():
        sub = d.get(key)
        if sub is None and key != "text_config" and isinstance(sub_class, type):  # left None by the class (4.57.1's
            with quiet():  # Phi-4-multimodal): its own class's defaults
                sub = sub_class().to_dict()
        if key == "text_config" or not isinstance(sub, dict):
            continue
        small = {k: 1 for k, v in sub.items() if k in ("num_hidden_layers", "num_blocks", "num_layers")
                 and isinstance(v, int) and not isinstance(v, bool)}
        small.update({k: min(v, 64) for k, v in sub.items() if "intermediate" in k
                      and isinstance(v, int) and not isinstance(v, bool)})
        heads, hidden = sub.get("num_attention_heads"), sub.get("hidden_size")
        if isinstance(heads, int) and isinstance(hidden, int) and heads > 0 and hidden % heads == 0:
            small.update({"num_attention_heads": 2, "hidden_size": 2 * (hidden // heads)})
        if small:
            out[key] = {**sub, **small}
    return out


def tiny_overrides(config_class, layers: int = LAYERS) -> dict:
    """Constructor arguments that make ``config_class``'s default model tiny while keeping
    everything RoPE reads (head_dim, rotary settings, lengths, windows, per-layer patterns): two
    heads of the default head_dim, ``layers`` layers, vocabulary 128, small MLPs and expert counts."""
    with quiet():
        default = config_class()
    d = default.to_dict()
    amap = dict(getattr(config_class, "attribute_map", None) or {})

    def real(name: str) -> str:  # DBRX: hidden_size is d_model, num_attention_heads n_heads
        return amap.get(name, name)

    for name in ("hidden_size", "num_attention_heads", "num_hidden_layers"):
        if real(name) not in d and isinstance(getattr(config_class, real(name), None), property):
            d[real(name)] = getattr(default, real(name))  # 5.x LongCat-Flash: num_hidden_layers = 2 x num_layers
        if real(name) not in d:
            raise KeyError(f"no {name} in {config_class.__name__} (not a text decoder config)")
    hd = d.get("head_dim") if isinstance(d.get("head_dim"), int) and d.get("head_dim") > 0 else \
        d[real("hidden_size")] // d[real("num_attention_heads")]
    hd = even_rotary_head_dim(hd, rotary_factors(d))
    out: dict[str, Any] = {real("num_hidden_layers"): layers, real("num_attention_heads"): 2,
                           real("hidden_size"): 2 * hd, real("vocab_size"): 128}
    if real("num_key_value_heads") in d:
        out[real("num_key_value_heads")] = 2
    if "head_dim" in d:
        out["head_dim"] = hd
    layers_key = real("num_hidden_layers")
    n_default = d.get(layers_key)
    lists: dict[str, list] = {}
    next_id = 3
    for key, value in d.items():
        if isinstance(value, list) and n_default and len(value) == n_default:
            lists[key] = value[:layers]  # a per-layer list of the default depth: its first layers
            small_list = [v if shrunk_value(key, v) is None else shrunk_value(key, v) for v in value[:layers]]
            if small_list != lists[key]:  # a per-layer size (Gemma 3n's intermediate_size): shrunk, always set
                out[key] = small_list
            continue
        if key in out or isinstance(value, bool):
            continue
        small = shrunk_value(key, value, next_id)
        if small is not None:
            out[key] = small
            next_id += small == next_id
    out.update(fill_in(config_class, d))
    out.update(REACH.get(getattr(config_class, "model_type", ""), {}))
    if getattr(config_class, "model_type", "") in MROPE and d.get("rope_scaling") is None \
            and not isinstance(d.get("rope_parameters"), dict):
        # 4.x Qwen2-VL text configs default to rope_scaling None and index rope_scaling["mrope_section"]
        # (the published files: {"type": "mrope", "mrope_section": [16, 24, 24]} for 64 pairs)
        q = hd // 2 // 8
        out["rope_scaling"] = {"type": "mrope", "mrope_section": [2 * q, 3 * q, hd // 2 - 5 * q]}
    if getattr(config_class, "model_type", "") in MROPE_INTERLEAVED and d.get("rope_scaling", 0) is None:
        q = hd // 2 // 16
        out["rope_scaling"] = {"rope_type": "default", "mrope_section": [6 * q, 5 * q, hd // 2 - 11 * q],
                               "mrope_interleaved": True}
    if getattr(config_class, "model_type", "") in PROBED_TEXT_MODELS and d.get("rope_scaling") is None \
            and not isinstance(d.get("rope_parameters"), dict):
        # 4.57.1's MllamaRotaryEmbedding indexes rope_scaling["rope_type"] (the class default is None; the
        # published files write a llama3 block): plain RoPE, written out
        out["rope_scaling"] = {"rope_type": "default"}
    if getattr(config_class, "model_type", "") == "hunyuan_vl_text" and isinstance(d.get("rope_parameters"), dict) \
            and not d["rope_parameters"].get("mrope_section"):
        # 5.x HunYuanVL's rotary indexes rope_parameters["mrope_section"] (the class default has none; the
        # published HunyuanOCR file: xdrope_section [16, 16, 16, 16] for 64 pairs): four equal sections
        q = hd // 2 // 4
        out["rope_parameters"] = {**d["rope_parameters"], "mrope_section": [q, q, q, hd // 2 - 3 * q]}
    try:  # the class fills its per-layer lists for the new depth itself: leave them to it
        with quiet():
            kept = config_class(**out).to_dict()
    except Exception:  # lists of the default depth that it does not refill: their first layers
        kept = None
    # a list the class keeps at the default depth (4.57.1's Zamba 2: layers_block_type of 54) is cut too
    out.update({k: v for k, v in lists.items() if k not in out and (
        kept is None or (isinstance(kept.get(k), list) and len(kept[k]) == n_default != layers))})
    out.update(shrunk_per_layer(config_class, out, layers))
    return out


def fill_in(config_class, d: dict) -> dict:
    """The :data:`FILL_INS` row of ``config_class`` (``d``: its defaults' ``to_dict()``), a block written as 4.x's
    ``rope_scaling`` moved where 5.x keeps it (``rope_parameters``, the class's base kept, with the row's
    ``partial_rotary_factor``): 5.x reads a ``rope_scaling`` argument over ``rope_parameters``, so the probe's marked
    bases would not reach the rotary."""
    fill = dict(FILL_INS.get(getattr(config_class, "model_type", ""), {}))
    if isinstance(d.get("rope_parameters"), dict) and isinstance(fill.get("rope_scaling"), dict):
        fill["rope_parameters"] = {**d["rope_parameters"], **fill.pop("rope_scaling"),
                                   **({"partial_rotary_factor": fill.pop("partial_rotary_factor")}
                                      if "partial_rotary_factor" in fill else {})}
    return fill


def rotary_factors(d: dict) -> list[float]:
    """The partial rotary factors a config's ``to_dict()`` holds: top-level ``partial_rotary_factor`` /
    ``rotary_pct``, a flat ``rope_parameters``' and each layer type's block's."""
    rp = d.get("rope_parameters")
    blocks = [d] + ([rp] + [b for b in rp.values() if isinstance(b, dict)] if isinstance(rp, dict) else [])
    return [b[k] for b in blocks for k in ("partial_rotary_factor", "rotary_pct")
            if isinstance(b.get(k), float) and 0 < b[k] <= 1]


def even_rotary_head_dim(hd: int, factors: list[float]) -> int:
    """The tiny model's head dim: the smallest even one >= ``hd`` whose rotated dims int(head dim x factor) are
    even for every factor (transformers computes int(head_dim * partial_rotary_factor)), so that the probe measures
    the rotary rather than an odd count (RV003's case, which a real file decides). GLM-4.5's class defaults,
    4,096 / 96 heads = 42 x 0.5 = 21, give 44 (22 dims); the published GLM-4.5 files have head_dim 128 (64 dims).
    ``hd`` itself when no such one lies within 64 above it."""
    for h in range(hd, hd + 65):
        if h % 2 == 0 and all(int(h * f) % 2 == 0 for f in factors):
            return h
    return hd


def shrunk_per_layer(config_class, out: dict, layers: int) -> dict:
    """Per-layer attribute overrides (5.x ``per_layer_config``: layer index -> the attributes that differ from the
    global ones) as the config class fills them for the tiny depth, each attribute made small as
    :func:`shrunk_value` has it and the layers past ``layers`` left out: {key: the mapping} for every such mapping
    that shrinking changes (Dots 3 Note's sliding layers: 64 heads and LoRA ranks of 1,024, 220M parameters at
    8 layers), else {}."""
    try:
        with quiet():
            d = config_class(**out).to_dict()
    except Exception:  # the class does not build from these arguments: the probe says why
        return {}
    found = {}
    for key, value in d.items():
        if not per_layer_mapping(value):
            continue
        small = {i: shrunk_attributes(attrs) for i, attrs in value.items() if int(i) < layers}
        if small != value:
            found[key] = small
    return found


def shrunk_attributes(attrs: dict, keep: tuple[str, ...] = ()) -> dict:
    """One layer's attribute overrides with every size-like one made small as :func:`shrunk_value` has it (the
    names in ``keep`` and everything RoPE reads kept)."""
    return {k: v if k in keep or shrunk_value(k, v) is None else shrunk_value(k, v) for k, v in attrs.items()}


def per_layer_mapping(value: Any) -> bool:
    """Whether ``value`` maps layer indices to attribute overrides (5.x ``per_layer_config``)."""
    return isinstance(value, dict) and bool(value) and all(str(i).isdigit() and isinstance(a, dict)
                                                           for i, a in value.items())


def shifted_per_layer(over: dict, n: int) -> dict:
    """The per-layer mappings of ``over`` (:func:`per_layer_mapping`) moved as a per-layer list shifted by one layer
    (``v[1:] + v[:1]``) moves: layer i's overrides to layer (i - 1) mod ``n``, so that they stay with their layer's
    kind (Dots 3 Note validates its sliding layers' head dims by them)."""
    return {k: {str((int(i) - 1) % n): a for i, a in v.items()} for k, v in over.items() if per_layer_mapping(v)}
