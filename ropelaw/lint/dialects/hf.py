"""The Hugging Face dialect: ``config.json`` as transformers reads it (and the YAML / TOML
training configs with Megatron / NeoX key names that the loader has always read alongside).

Semantics follow the transformers that is installed (4.x: 4.57.1, 5.x: 5.23.0), else the newest
(5.23.0); :func:`semantics_version` names it and the lint JSON reports it. The environment
variable ``ROPELAW_HF_SEMANTICS`` (``4.57.1`` or ``5.23.0``) forces one.

Sources: transformers 4.57.1 and 5.23.0, ``src/transformers/modeling_rope_utils.py`` (the RoPE
functions, ``standardize_rope_params``) and the config classes of each ``model_type``
(``hf_defaults.py``, generated from them).
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass, field
from typing import Any, Mapping

from . import Dialect

SEMANTICS = ("4.57.1", "5.23.0")  # the transformers versions whose behaviour ropelaw encodes
NEWEST = SEMANTICS[-1]

ALIASES: dict[str, tuple[str, ...]] = {
    "model_type": ("model_type",),
    "heads": ("num_attention_heads", "n_head", "num_heads"),
    "hidden": ("hidden_size", "n_embd", "d_model"),
    "head_dim": ("head_dim",),
    "kv_channels": ("kv_channels",),  # Megatron / ChatGLM: the head dim
    "rotary_dim": ("qk_rope_head_dim", "rotary_dim"),  # DeepSeek MLA: only that part rotates
    "partial": ("partial_rotary_factor", "rotary_pct", "rotary_percent", "rotary_percentage"),
    "base": ("rope_theta", "rotary_emb_base", "rotary_base"),
    "block_base": ("rope_theta", "rotary_emb_base", "rotary_base", "base"),  # inside rope_parameters
    "local_base": ("rope_local_base_freq",),
    "rope_ratio": ("rope_ratio",),  # ChatGLM: base = 10000 * rope_ratio
    "rope_block": ("rope_parameters", "rope_scaling"),
    "rope_type": ("rope_type", "type"),
    "max_pos": ("max_position_embeddings", "max_sequence_length", "n_positions"),
    "seq_len": ("seq_length", "encoder_seq_length"),
    "original": ("original_max_position_embeddings",),
    "window": ("sliding_window", "sliding_window_size"),
    "use_window": ("use_sliding_window",),
    "layer_types": ("layer_types",),
    "dtype": ("torch_dtype", "dtype", "params_dtype"),
    "precision": ("precision",),
    "pos_emb": ("pos_emb", "position_embedding_type"),
    "alibi": ("alibi",),
    "factor_flag": ("rope_scaling_factor",),  # Megatron-Core --rope-scaling-factor
    "use_dynamic_ntk": ("use_dynamic_ntk",),  # Qwen v1 (remote code)
    "use_logn_attn": ("use_logn_attn",),
}

# nested mappings that hold a multimodal or wrapped model's language settings
SECTIONS = ("text_config", "llm_config", "language_config", "text_model", "model", "model_config", "args")

NON_ROPE = {"gpt2": "learned absolute positions", "bert": "learned absolute positions",
            "opt": "learned absolute positions", "bloom": "ALiBi", "mpt": "ALiBi",
            "roberta": "learned absolute positions", "t5": "relative position buckets"}

# rope_type / type as written -> registry name (ropelaw.schemes); others pass through.
# "mrope" (Qwen2-VL, Qwen2.5-VL): transformers rewrites it to "default" (multimodal RoPE splits the
# pairs into sections, each plain RoPE over the same frequencies).
SCHEME_ALIASES = {"su": "longrope", "none": "default", "rope": "default", "": "default", "mrope": "default"}

# remote-code families (not in transformers): defaults of their own configuration_*.py
REMOTE_DEFAULTS: dict[str, dict[str, Any]] = {
    "chatglm": {"rope_ratio": 1, "_class": "ChatGLMConfig (THUDM remote code)"},
    "internlm2": {"rope_theta": 10000, "max_position_embeddings": 2048, "_class": "InternLM2Config (remote code)"},
    "qwen": {"rotary_emb_base": 10000, "rotary_pct": 1.0, "seq_length": 8192, "_class": "QWenConfig (remote code)"},
}


def semantics_version() -> str:
    """The transformers version whose behaviour the loader follows: the installed one (4.x ->
    4.57.1, 5.x -> 5.23.0), else the newest; ``ROPELAW_HF_SEMANTICS`` overrides. Reads the
    installed version from package metadata (no import of transformers or torch)."""
    forced = os.environ.get("ROPELAW_HF_SEMANTICS", "").strip()
    if forced in SEMANTICS:
        return forced
    installed = _installed_transformers()
    if installed is None:
        return NEWEST
    return SEMANTICS[0] if installed.split(".")[0] == "4" else NEWEST


@functools.lru_cache(maxsize=1)
def _installed_transformers() -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("transformers")
    except PackageNotFoundError:
        return None


def defaults(model_type: str, semantics: str | None = None) -> dict[str, Any]:
    """Defaults of ``model_type``'s transformers config class (``_class`` names it)."""
    from .hf_defaults import TABLES

    table = TABLES.get(semantics or semantics_version()) or TABLES[NEWEST]
    found = table.get(model_type)
    if found is None:
        found = REMOTE_DEFAULTS.get(model_type, {})
    return dict(found)


def detect(data: Mapping) -> int:
    """A config.json names its model: ``model_type`` or ``architectures`` (score 10); else one
    point per distinct known key (training configs with Megatron / NeoX names)."""
    if isinstance(data.get("model_type"), str) or isinstance(data.get("architectures"), list):
        return 10
    known = {k for keys in ALIASES.values() for k in keys}  # distinct keys: the score stays below CLAIM
    return len({str(k).strip().lower().replace("-", "_") for k in data} & known)


DIALECT = Dialect(name="hf", aliases=ALIASES, sections=SECTIONS, defaults=defaults, non_rope=NON_ROPE,
                  detect=detect, scheme_aliases=SCHEME_ALIASES)


# -----------------------------------------------------------------------------------------
# runtime semantics: which length and factor each scheme really reads
# -----------------------------------------------------------------------------------------
@dataclass
class Runtime:
    """A scheme's parameters as the runtime reads them, the original (pre-scaling) length it
    was trained at (``None``: none given), and what the loader noticed on the way."""

    params: dict
    original: Any
    problems: list = field(default_factory=list)  # (rule name, Value, message)
    notes: list = field(default_factory=list)


def _as(v, note: str, expect: str = "int"):
    from ..loader import Value

    return Value(v.raw, v.key, v.line, v.column, note if not v.note else f"{v.note}; {note}", expect)


def runtime_params(scheme: str, params: dict, *, top_orig=None, max_pos=None, semantics: str = NEWEST,
                   block_key: str | None = None, block_raw: Mapping | None = None) -> Runtime:
    """``params`` (name -> Value, as written in ``rope_scaling`` / ``rope_parameters``) rewritten to
    what transformers ``semantics`` computes with. Sources: ``modeling_rope_utils.py`` of 4.57.1 and
    5.23.0 (``_compute_*_parameters``, 5.x ``standardize_rope_params``, ``dynamic_rope_update``):

    - dynamic (both): the switch point and L_orig are ``max_position_embeddings``; an
      ``original_max_position_embeddings`` in the block is ignored (the TODO in 4.57.1) ->
      RV019 info; it still says how long the model was trained.
    - yarn: 4.57.1 reads L_orig from the block, else ``max_position_embeddings`` (a top-level
      ``original_max_position_embeddings`` is ignored -> RV019); 5.23.0 lets the top-level
      attribute win, then the block, then ``max_position_embeddings``, and a missing ``factor``
      becomes ``max_position_embeddings / L_orig``. ``truncate`` is read as
      ``rope_scaling.get("truncate", True)`` and tested for truth: ``null`` does not truncate,
      the string ``"false"`` does (-> RV001).
    - longrope: 4.57.1: with a top-level ``original_max_position_embeddings`` (Phi-3; Phi3Config
      has it by default) s = max_position_embeddings / original and ``factor`` is ignored;
      without it L_orig = ``max_position_embeddings`` and the block's original is ignored
      (MiniCPM) -> RV019. 5.23.0: L_orig = top level, else block, else max_position_embeddings;
      s = ``factor``, else max_position_embeddings / L_orig. The long factors apply once the
      length exceeds L_orig.
    - llama3: 4.57.1 reads L_orig from the block only; 5.23.0 lets the top level win.
    """
    p = dict(params)
    out = Runtime(p, None)
    v4 = semantics.split(".")[0] == "4"
    tf = f"transformers {semantics}"
    inner = p.get("original_max_position_embeddings")
    block_raw = block_raw or {}

    def ignored(v, why: str) -> None:
        out.problems.append(("runtime-ignores-key", v, f"{v.key} is ignored by {tf}: {why}"))

    if scheme == "dynamic":
        out.original = inner or top_orig
        if inner is not None and inner.key:
            ignored(inner, f"its dynamic NTK rescales past max_position_embeddings"
                           f"{'' if max_pos is None else ' ' + format(int(max_pos.raw), ',') if isinstance(max_pos.raw, int) else ''}"
                           f" (the frequencies here are what runs)")
        if max_pos is not None:
            p["original_max_position_embeddings"] = _as(max_pos, f"{tf}'s dynamic NTK switch point")
        else:
            p.pop("original_max_position_embeddings", None)
        return out
    if scheme == "yarn":
        if "truncate" in block_raw and block_raw["truncate"] is None:
            from ..loader import Value

            key = f"{block_key}.truncate" if block_key else "truncate"
            p["truncate"] = Value(False, key, 1, 1, "null: falsy in transformers, no truncation", "bool")
            out.notes.append(f"{key}: null is read by {tf} as false (rope_scaling.get('truncate', True) "
                             f"is None): the correction range is not rounded")
        tv = p.get("truncate")
        if tv is not None and isinstance(tv.raw, str):
            out.problems.append(("invalid-value-type", tv,
                                 f"{tv.key} is the string {tv.raw!r}: {tf} tests its truth value, so a non-empty "
                                 f"string truncates the correction range (write true or false without quotes)"))
        if v4:
            orig = inner or max_pos
            if top_orig is not None and top_orig.key and (inner is None or inner.raw != top_orig.raw):
                ignored(top_orig, f"its YaRN reads {block_key or 'rope_scaling'}.original_max_position_embeddings, "
                                  f"else max_position_embeddings")
        else:
            orig = top_orig or inner or max_pos
            if inner is not None and top_orig is not None and top_orig.key and inner.raw != top_orig.raw:
                ignored(inner, "the top-level original_max_position_embeddings wins (standardize_rope_params)")
            if "factor" not in p and orig is not None and max_pos is not None and _num(orig) and _num(max_pos):
                from ..loader import Value

                p["factor"] = Value(max_pos.raw / orig.raw, None, max_pos.line, max_pos.column,
                                    f"no factor: {tf} uses max_position_embeddings / original", "number")
        if orig is not None:
            p["original_max_position_embeddings"] = orig if orig is inner else _as(orig, f"L_orig of {tf}'s YaRN")
        out.original = inner or (top_orig if not v4 else None) or (orig if orig is not max_pos else None)
        return out
    if scheme == "longrope":
        if v4:
            if top_orig is not None:
                orig = top_orig
                fv = p.pop("factor", None)
                if fv is not None and fv.key:
                    ignored(fv, "with original_max_position_embeddings it uses s = max_position_embeddings / "
                                "original_max_position_embeddings")
                if inner is not None and inner.key and inner.raw != top_orig.raw:
                    ignored(inner, "its LongRoPE reads the top-level original_max_position_embeddings")
                if max_pos is not None:
                    p["max_position_embeddings"] = max_pos
            else:
                orig = max_pos
                if inner is not None and inner.key:
                    ignored(inner, "its LongRoPE reads only a top-level original_max_position_embeddings, else "
                                   "max_position_embeddings (for the switch to the long factors too)")
                p.pop("max_position_embeddings", None)
        else:
            orig = top_orig or inner or max_pos
            if inner is not None and top_orig is not None and top_orig.key and inner.raw != top_orig.raw:
                ignored(inner, "the top-level original_max_position_embeddings wins (standardize_rope_params)")
            if p.get("factor") is not None:
                p.pop("max_position_embeddings", None)
            elif max_pos is not None:
                p["max_position_embeddings"] = max_pos
        if orig is not None:
            p["original_max_position_embeddings"] = orig if orig is inner else _as(orig, f"L_orig of {tf}'s LongRoPE")
        out.original = orig if orig is not max_pos else (inner or None)
        return out
    if scheme == "llama3":
        orig = inner if v4 else (top_orig or inner or max_pos)
        if v4 and orig is None:
            orig = top_orig or max_pos
            if orig is not None:
                out.notes.append(f"llama3 without {block_key or 'rope_scaling'}.original_max_position_embeddings: "
                                 f"{tf} cannot load it (KeyError); assumed {orig.where}")
        if orig is not None:
            p["original_max_position_embeddings"] = orig if orig is inner else _as(orig, f"L_orig of {tf}'s llama3")
        out.original = orig if orig is not max_pos else None
        return out
    out.original = inner or top_orig
    return out


def _num(v) -> bool:
    return isinstance(v.raw, (int, float)) and not isinstance(v.raw, bool) and v.raw > 0
