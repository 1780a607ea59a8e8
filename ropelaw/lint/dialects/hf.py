"""The Hugging Face dialect: ``config.json`` as transformers reads it (and the YAML / TOML
training configs with Megatron / NeoX key names that the loader has always read alongside).

Semantics follow the transformers that is installed (4.x: 4.57.1, 5.x: 5.23.0), else the newest
(5.23.0); :func:`semantics_version` names it and the lint JSON reports it. The environment
variable ``ROPELAW_HF_SEMANTICS`` (``4.57.1`` or ``5.23.0``) forces one.

Sources: transformers 4.57.1 and 5.23.0, ``src/transformers/modeling_rope_utils.py`` (the RoPE
functions, ``standardize_rope_params``) and the config classes of each ``model_type``
(``ropelaw/data/hf_defaults.json``, generated from them).
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass, field
from typing import Any
from collections.abc import Mapping

from . import Dialect, hf_type_rotary
from ..model import Problem
from ..rules.value_rules import IGNORED_KEY, INVALID_TYPE

SEMANTICS = ("4.57.1", "5.23.0")  # the transformers versions whose behaviour ropelaw encodes
NEWEST = SEMANTICS[-1]

ALIASES: dict[str, tuple[str, ...]] = {
    "model_type": ("model_type",),
    "heads": ("num_attention_heads", "n_head", "num_heads", "n_heads"),  # DBRX: n_heads
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
    "max_pos": ("max_position_embeddings", "max_sequence_length", "n_positions", "max_seq_len"),  # DBRX: max_seq_len
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
    found = _dist_info_version("transformers")
    if found is not None:
        return found
    from importlib.metadata import PackageNotFoundError, version  # 30 ms to import: only when needed

    try:
        return version("transformers")
    except PackageNotFoundError:
        return None


def _dist_info_version(name: str) -> str | None:
    """The ``Version`` of ``name``'s ``*.dist-info/METADATA`` in the first ``sys.path`` directory that
    holds one, read as ``importlib.metadata.version`` finds it (directory entries lower-cased, the name
    before the first ``-`` with runs of ``-_.`` as ``_``), without importing importlib.metadata (a
    fifth of a lint run over a few files). None (so the caller asks importlib.metadata) at anything
    else: an egg-info, a zip on the path, an unreadable file."""
    import re
    import sys

    want = re.sub(r"[-_.]+", "_", name).lower()
    for entry in sys.path:
        where = entry or "."
        if os.path.isfile(where):
            return None  # a zip archive: importlib.metadata looks inside
        try:
            children = os.listdir(where)
        except OSError:
            continue
        for child in children:
            low = child.lower()
            if not low.endswith((".dist-info", ".egg-info")):
                continue
            if re.sub(r"[-_.]+", "_", low.rpartition(".")[0].partition("-")[0]) != want:
                continue
            if not low.endswith(".dist-info"):
                return None
            try:
                with open(os.path.join(where, child, "METADATA"), encoding="utf-8") as fh:
                    for line in fh:
                        if not line.strip():
                            break  # end of the headers
                        if line.startswith("Version:"):
                            return line[len("Version:"):].strip() or None
            except (OSError, UnicodeDecodeError):
                return None
            return None
    return None


def defaults(model_type: str, semantics: str | None = None) -> dict[str, Any]:
    """Defaults of ``model_type``'s transformers config class (``_class`` names it)."""
    from ...data import hf_defaults

    tables = hf_defaults()
    table = tables.get(semantics or semantics_version()) or tables[NEWEST]
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
                  detect=detect)


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
    from ..model import Value

    return Value(v.raw, v.key, v.line, v.column, note if not v.note else f"{v.note}; {note}", expect)


def runtime_params(scheme: str, params: dict, *, top_orig=None, max_pos=None, semantics: str = NEWEST,
                   block_key: str | None = None, block_raw: Mapping | None = None,
                   model_type: str | None = None) -> Runtime:
    """``params`` (name -> Value, as written in ``rope_scaling`` / ``rope_parameters``) rewritten to
    what transformers ``semantics`` computes with. Sources: ``modeling_rope_utils.py`` of 4.57.1 and
    5.23.0 (``_compute_*_parameters``, 5.x ``standardize_rope_params``, ``dynamic_rope_update``):

    - dynamic (both): the switch point and L_orig are ``max_position_embeddings``; an
      ``original_max_position_embeddings`` in the block is ignored (the TODO in 4.57.1) ->
      RV019 info; it still says how long the model was trained.
    - yarn: 4.57.1 reads L_orig from the block, else ``max_position_embeddings`` (a top-level
      ``original_max_position_embeddings`` is ignored -> RV019); 5.23.0 lets the top-level
      attribute win, then the block, then ``max_position_embeddings`` (a missing ``factor`` is refused by
      validation, KeyError: RV007). ``beta_fast`` / ``beta_slow`` are read as ``get(...) or 32`` / ``or 1``:
      a 0 means the default (RV019). ``truncate`` is read as
      ``rope_scaling.get("truncate", True)`` and tested for truth: ``null`` does not truncate,
      the string ``"false"`` does (-> RV001).
    - longrope: 4.57.1: with a top-level ``original_max_position_embeddings`` (Phi-3; Phi3Config
      has it by default) s = max_position_embeddings / original and ``factor`` is ignored;
      without it L_orig = ``max_position_embeddings`` and the block's original is ignored
      (MiniCPM) -> RV019. 5.23.0: L_orig = top level, else block, else max_position_embeddings;
      s = ``factor``, else max_position_embeddings / L_orig. The long factors apply once the
      length exceeds L_orig.
      ``short_mscale`` / ``long_mscale`` are read by Phi-3.5-MoE's rotary only (``hf_type_rotary``: both
      versions' ``PhimoeRotaryEmbedding.forward`` multiplies cos and sin by ``long_mscale`` when the length
      exceeds the block's ``original_max_position_embeddings``, else by ``short_mscale``, in place of the
      computed attention factor); for any other model type they are ignored (RV019).
    - llama3: 4.57.1 reads L_orig from the block only; 5.23.0 lets the top level win.
    """
    p = dict(params)
    out = Runtime(p, None)
    r = _Reading(p, out, semantics.split(".")[0] == "4", f"transformers {semantics}",
                 p.get("original_max_position_embeddings"), top_orig, max_pos, block_key, block_raw or {}, model_type)
    rewrite = {"dynamic": _dynamic, "yarn": _yarn, "longrope": _longrope, "llama3": _llama3}.get(scheme)
    if rewrite is None:
        out.original = r.inner or top_orig
    else:
        rewrite(r)
    return out


@dataclass
class _Reading:
    """What :func:`runtime_params` rewrites a block's parameters ``p`` with, into ``out``: ``v4`` (4.57.1),
    ``tf`` (the version's name), ``inner`` (the block's own original_max_position_embeddings), the top-level
    original length and max_position_embeddings, the block's key and raw mapping, the model type."""

    p: dict
    out: Runtime
    v4: bool
    tf: str
    inner: Any
    top_orig: Any
    max_pos: Any
    block_key: str | None
    block_raw: Mapping
    model_type: str | None

    def ignored(self, v, why: str) -> None:
        self.out.problems.append(Problem(IGNORED_KEY, v, f"{v.key} is ignored by {self.tf}: {why}"))


def _dynamic(r: _Reading) -> None:
    """Dynamic NTK (both versions): the switch point and L_orig are ``max_position_embeddings``."""
    p, out, inner, max_pos = r.p, r.out, r.inner, r.max_pos
    out.original = inner or r.top_orig
    if inner is not None and inner.key:
        switch = f" {int(max_pos.raw):,}" if max_pos is not None and isinstance(max_pos.raw, int) else ""
        r.ignored(inner, f"its dynamic NTK rescales past max_position_embeddings{switch} (the frequencies here are "
                         "what runs)")
    if max_pos is not None:
        p["original_max_position_embeddings"] = _as(max_pos, f"{r.tf}'s dynamic NTK switch point")
    else:
        p.pop("original_max_position_embeddings", None)


def _yarn_flags(r: _Reading) -> None:
    """YaRN's ``truncate`` (``get("truncate", True)`` tested for truth) and ``beta_fast`` / ``beta_slow``
    (``get(...) or 32`` / ``or 1``) as transformers reads them."""
    from ..model import Value

    p, tf = r.p, r.tf
    if "truncate" in r.block_raw and r.block_raw["truncate"] is None:
        key = f"{r.block_key}.truncate" if r.block_key else "truncate"
        p["truncate"] = Value(False, key, 1, 1, "null: falsy in transformers, no truncation", "bool")
        r.out.notes.append(f"{key}: null is read by {tf} as false (rope_scaling.get('truncate', True) "
                           f"is None): the correction range is not rounded")
    tv = p.get("truncate")
    if tv is not None and isinstance(tv.raw, str):
        r.out.problems.append(Problem(INVALID_TYPE, tv,
                              f"{tv.key} is the string {tv.raw!r}: {tf} tests its truth value, so a non-empty "
                              f"string truncates the correction range (write true or false without quotes)"))
    for name, default in (("beta_fast", 32), ("beta_slow", 1)):
        bv = p.get(name)
        if bv is not None and bv.key and not isinstance(bv.raw, bool) and bv.raw == 0:
            # `rope_scaling.get("beta_fast") or 32`: a 0 is falsy and becomes the default (both versions)
            r.ignored(bv, f"it reads `get({name!r}) or {default}`, so 0 means {default}")
            p[name] = Value(float(default), None, bv.line, bv.column, f"{bv.key} 0 read as {default}", "number")


def _yarn(r: _Reading) -> None:
    """YaRN: 4.57.1 reads L_orig from the block, else ``max_position_embeddings``; 5.23.0 lets the top-level
    attribute win, then the block, then ``max_position_embeddings``."""
    p, inner, top_orig, max_pos = r.p, r.inner, r.top_orig, r.max_pos
    _yarn_flags(r)
    if r.v4:
        orig = inner or max_pos
        if top_orig is not None and top_orig.key and (inner is None or inner.raw != top_orig.raw):
            r.ignored(top_orig, f"its YaRN reads {r.block_key or 'rope_scaling'}.original_max_position_embeddings, "
                                f"else max_position_embeddings")
    else:
        # no factor: validation raises KeyError before _compute_yarn_parameters could derive one (RV007)
        orig = top_orig or inner or max_pos
        if inner is not None and top_orig is not None and top_orig.key and inner.raw != top_orig.raw:
            r.ignored(inner, "the top-level original_max_position_embeddings wins (standardize_rope_params)")
    if orig is not None:
        p["original_max_position_embeddings"] = orig if orig is inner else _as(orig, f"L_orig of {r.tf}'s YaRN")
    r.out.original = inner or (top_orig if not r.v4 else None) or (orig if orig is not max_pos else None)


def _longrope(r: _Reading) -> None:
    """LongRoPE: 4.57.1 uses a top-level original (s = max_position_embeddings / original, ``factor``
    ignored), else ``max_position_embeddings``; 5.23.0: top level, else block, else max_position_embeddings."""
    p, inner, max_pos = r.p, r.inner, r.max_pos
    top_orig = hf_type_rotary.longrope_of_type(p, r.model_type, r.v4, r.top_orig, r.ignored, r.tf)
    if r.v4:
        if top_orig is not None:
            orig = top_orig
            fv = p.pop("factor", None)
            if fv is not None and fv.key:
                r.ignored(fv, "with original_max_position_embeddings it uses s = max_position_embeddings / "
                              "original_max_position_embeddings")
            if inner is not None and inner.key and inner.raw != top_orig.raw:
                r.ignored(inner, "its LongRoPE reads the top-level original_max_position_embeddings")
            if max_pos is not None:
                p["max_position_embeddings"] = max_pos
        else:
            orig = max_pos
            if inner is not None and inner.key:
                r.ignored(inner, "its LongRoPE reads only a top-level original_max_position_embeddings, else "
                                 "max_position_embeddings (for the switch to the long factors too)")
            p.pop("max_position_embeddings", None)
    else:
        orig = top_orig or inner or max_pos
        if inner is not None and top_orig is not None and top_orig.key and inner.raw != top_orig.raw:
            r.ignored(inner, "the top-level original_max_position_embeddings wins (standardize_rope_params)")
        if p.get("factor") is not None:
            p.pop("max_position_embeddings", None)
        elif max_pos is not None:
            p["max_position_embeddings"] = max_pos
    if orig is not None:
        p["original_max_position_embeddings"] = orig if orig is inner else _as(orig, f"L_orig of {r.tf}'s LongRoPE")
    r.out.original = orig if orig is not max_pos else (inner or None)


def _llama3(r: _Reading) -> None:
    """Llama 3.1 bands: 4.57.1 reads L_orig from the block only (assumed from the top level, else
    max_position_embeddings, and said); 5.23.0 lets the top level win."""
    inner, top_orig, max_pos = r.inner, r.top_orig, r.max_pos
    orig = inner if r.v4 else (top_orig or inner or max_pos)
    if r.v4 and orig is None:
        orig = top_orig or max_pos
        if orig is not None:
            r.out.notes.append(f"llama3 without {r.block_key or 'rope_scaling'}.original_max_position_embeddings: "
                               f"{r.tf} cannot load it (KeyError); assumed {orig.where}")
    if orig is not None:
        r.p["original_max_position_embeddings"] = orig if orig is inner else _as(orig, f"L_orig of {r.tf}'s llama3")
    r.out.original = orig if orig is not max_pos else None


def _num(v) -> bool:
    return isinstance(v.raw, (int, float)) and not isinstance(v.raw, bool) and v.raw > 0


# -----------------------------------------------------------------------------------------
# what each transformers version refuses: model types, scheme names, strict fields
# -----------------------------------------------------------------------------------------
# rope_type names of transformers' ROPE_INIT_FUNCTIONS (modeling_rope_utils.py; "default" is each
# model's compute_default_rope_parameters in 5.x). A name outside these and the model-specific
# rewrites below is a KeyError at model load in both versions.
TRANSFORMERS_SCHEMES = {
    "4.57.1": frozenset({"default", "linear", "dynamic", "yarn", "longrope", "llama3"}),
    "5.23.0": frozenset({"default", "linear", "dynamic", "yarn", "longrope", "llama3", "proportional"}),
}
# parameters transformers' validation requires (``_check_received_keys`` raises KeyError when one is
# missing): ROPE_VALIDATION_FUNCTIONS of 4.57.1, RotaryEmbeddingConfigMixin._validate_* of 5.23.0. 5.23.0
# fills original_max_position_embeddings of llama3 / yarn / longrope from max_position_embeddings first
# (standardize_rope_params), so it never misses there.
REQUIRED = {
    "4.57.1": {"linear": ("factor",), "dynamic": ("factor",), "yarn": ("factor",),
               "longrope": ("short_factor", "long_factor"),
               "llama3": ("factor", "low_freq_factor", "high_freq_factor", "original_max_position_embeddings")},
    "5.23.0": {"linear": ("factor",), "dynamic": ("factor",), "yarn": ("factor",),
               "longrope": ("short_factor", "long_factor"),
               "llama3": ("factor", "low_freq_factor", "high_freq_factor")},
}
MROPE_TYPES = ("qwen2_vl", "qwen2_5_vl", "qwen2_vl_text", "qwen2_5_vl_text")
PHI3_TYPES = ("phi3", "phi4_multimodal")
# 4.57.1 config classes that call a _rope_scaling_validation of their own in __init__, raising ValueError
# (configuration_olmo.py, _olmo2, _chameleon, _fuyu: exactly {type, factor}, type linear or dynamic, factor
# a float > 1; configuration_phi3.py / _phi4_multimodal: exactly {type, short_factor, long_factor}, type
# longrope after su / yarn -> longrope)
LEGACY_TWO_KEYS = ("olmo", "olmo2", "chameleon", "fuyu")


TEXT_SECTIONS = ("text_config", "language_config", "llm_config")  # where a composite file holds its language model


def text_section(data: Mapping) -> tuple[str, Mapping] | None:
    """``(key, mapping)`` of a config.json's language-model section, or None."""
    return next(((k, data[k]) for k in TEXT_SECTIONS if isinstance(data.get(k), Mapping)), None)


@functools.cache
def types_table(version: str) -> dict:
    """``ropelaw/data/hf_types.json``'s table of transformers ``version`` (generated by scripts/hf_types.py):
    ``model_types``, ``heads_divide_hidden``, ``takes_text_config`` as frozensets, ``strict_int`` as
    ``{keys: frozenset of types}``, ``text_types`` as ``{composite: rule tuple}``. KeyError: a version it lacks."""
    from ...data import read as read_table

    raw = read_table("hf_types")["versions"][version]
    return {"model_types": frozenset(raw["model_types"]),
            "strict_int": {tuple(e["keys"]): frozenset(e["model_types"]) for e in raw["strict_int"]},
            "heads_divide_hidden": frozenset(raw["heads_divide_hidden"]),
            "takes_text_config": frozenset(raw["takes_text_config"]),
            "text_types": {mt: tuple(rule) for mt, rule in raw["text_types"].items()},
            "head_dim_absent": dict(raw.get("head_dim_absent", {}))}


def text_type(root_type: str, written: Any, version: str) -> tuple[str | None, str | None]:
    """``(model_type transformers version builds, why it cannot)`` for the ``text_config`` of a composite
    ``root_type`` whose ``model_type`` reads ``written`` (None: absent), from the generated rules of each
    composite class (``types_table(version)["text_types"]``): a class of its own whatever is written
    (Gemma 3: gemma3_text), or the written type looked up in CONFIG_MAPPING after the class's renames (EXAONE
    4.5's exaone4_5_text -> exaone4 in 5.23.0), its default when none is written (LLaVA: llama); a type the
    version does not have is refused there (Mistral3Config with text_config ministral3 in 4.57.1: KeyError).
    ``(None, None)`` when ``root_type`` is not a composite that version has."""
    rule = types_table(version)["text_types"].get(root_type)
    if rule is None:
        return None, None
    if rule[0] == "fixed":
        return rule[1], None
    _, default, renames = rule
    if written is None:
        if default is None:
            return None, f"cannot build {root_type}'s text_config without a model_type (no default text model)"
        return default, None
    if not isinstance(written, str):
        return None, None  # RV001 reports it
    resolved = renames.get(written, written)
    if resolved not in types_table(version)["model_types"]:
        return None, (f"does not know text_config.model_type {written!r}: {root_type}'s config class looks it up in "
                      f"CONFIG_MAPPING (KeyError)")
    return resolved, None


def remote_code(model_type: str | None, auto_map: bool, known: Mapping, version: str) -> str | None:
    """Why transformers ``version`` cannot build a config without running its repository's code (RV023), or
    None: its ``model_type`` is not one of that version's (``known``: version -> bool) and an ``auto_map``
    names remote code, which ``AutoConfig.from_pretrained`` runs only with ``trust_remote_code=True``
    (configuration_auto.py of 4.57.1 and 5.23.0; a type the version has runs its own class, whatever the
    auto_map says). The message says what ropelaw's numbers are instead."""
    if not (auto_map and model_type) or known.get(version):
        return None
    head = (f"transformers {version} does not know model_type {model_type!r}: it builds the model only by running "
            f"the repository's own code (auto_map, trust_remote_code=True), which ropelaw does not run")
    other = other_version(version)
    if known.get(other):
        return f"{head}; the numbers are transformers {other}'s reading (it has the type)"
    if model_type.lower() in REMOTE_DEFAULTS:
        return (f"{head}; the numbers are ropelaw's encoding of {REMOTE_DEFAULTS[model_type.lower()]['_class']}, "
                f"not checked against that code")
    return f"{head}; its RoPE keys are read by their transformers names, not checked against that code"


def other_version(version: str) -> str:
    """The other supported transformers version."""
    return SEMANTICS[1] if version == SEMANTICS[0] else SEMANTICS[0]


def known_model_type(model_type: str, version: str) -> bool:
    """``model_type`` is in that transformers' CONFIG_MAPPING (:func:`types_table`, generated)."""
    return model_type in types_table(version)["model_types"]


@functools.cache
def strict_int_keys(model_type: str, version: str) -> frozenset:
    """The RoPE keys ``model_type``'s config class declares ``int`` (5.x strict dataclasses refuse a float,
    bool or string there; empty for 4.x, whose classes take anything)."""
    for keys, types in types_table(version)["strict_int"].items():
        if model_type in types:
            return frozenset(keys)
    return frozenset()


def head_dim_absent(model_type: str, version: str) -> dict:
    """What ``model_type``'s config class makes of a file without head_dim where it is not hidden_size /
    num_attention_heads: ``{"fixed": N}`` (it keeps its default N), ``{"from": K}`` (it copies key K),
    ``{"refused": error}`` (it leaves None and the
    model does not build), ``{}`` otherwise (measured by scripts/hf_types.py)."""
    got: dict = types_table(version)["head_dim_absent"].get(model_type, {})
    return got


def heads_divide_hidden(model_type: str, version: str) -> bool:
    """``model_type``'s config class refuses hidden_size not a multiple of num_attention_heads
    (5.x ``validate_architecture`` of llama, gemma2, gpt_neox, ...; run by the generator)."""
    return model_type in types_table(version)["heads_divide_hidden"]


def scheme_runs_as(model_type: str, block: Mapping | None, version: str) -> tuple[str | None, str, str | None]:
    """``(name, why, refusal)``: the rope_type transformers ``version`` runs for a rope_scaling /
    rope_parameters ``block`` of ``model_type`` after the config class's own rewrites, a note saying which
    rewrite applied ("" when none), and why that version refuses the block (None when it does not).

    Sources (config classes): qwen2_vl / qwen2_5_vl turn ``mrope`` into ``default`` (4.57.1 only when the
    block has a ``type`` key, which then also overrides ``rope_type``: configuration_qwen2_5_vl.py:256-259;
    5.23.0 either key); phi3 turns ``su`` / ``yarn`` into ``longrope`` (4.57.1 _rope_scaling_adjustment;
    5.23.0 convert_rope_params_to_dict, *after* standardize_rope_params, so ``su`` never gets its
    original_max_position_embeddings and validation raises KeyError); hunyuan_vl turns ``xdrope`` into
    ``dynamic`` (5.23.0 HunYuanVLTextConfig.convert_rope_params_to_dict); 4.57.1's Llama 4 runs any
    rope_scaling as ``llama3`` (modeling_llama4.py:174)."""
    if not isinstance(block, Mapping):
        return "default", "", None
    t, rt = block.get("type"), block.get("rope_type")
    v4 = version.startswith("4.")
    name = rt if rt is not None else t
    if name is None:
        name = "default"
    if not isinstance(name, str):
        return None, "", None  # not a name at all: RV001
    why = ""
    if model_type in MROPE_TYPES:
        if v4 and "type" in block:
            name, why = ("default", "type mrope runs as default") if t == "mrope" else (t, "")
        elif not v4 and name == "mrope":
            name, why = "default", "mrope runs as default"
    if model_type in PHI3_TYPES and name in ("su", "yarn"):
        if not v4 and name == "su" and "original_max_position_embeddings" not in block:
            return "longrope", "su runs as longrope (Phi3Config)", (
                "refuses rope_type 'su': Phi3Config renames it longrope after standardize_rope_params, so "
                "validation misses original_max_position_embeddings (KeyError)")
        name, why = "longrope", f"{name} runs as longrope (Phi3Config)"
    if model_type in ("hunyuan_vl", "hunyuan_vl_text") and name == "xdrope" and not v4:
        name, why = "dynamic", "xdrope runs as dynamic (HunYuanVLTextConfig)"
    if model_type in ("llama4", "llama4_text") and v4:
        name, why = "llama3", "Llama 4 runs any rope_scaling as llama3 (modeling_llama4.py)"
    if name not in TRANSFORMERS_SCHEMES[version]:
        return name, why, f"has no rope_type {name!r} (KeyError at model load)"
    refusal = _legacy_validation(model_type, block, name) if v4 else None
    return name, why, refusal


def _legacy_validation(model_type: str, block: Mapping, name: str) -> str | None:
    """Why a 4.57.1 config class's own _rope_scaling_validation raises ValueError on ``block``, or None."""
    if model_type in LEGACY_TWO_KEYS:
        f = block.get("factor")
        if len(block) != 2 or block.get("type") not in ("linear", "dynamic"):
            return (f"refuses rope_scaling {dict(block)!r:.80}: its config class wants exactly "
                    "{'type': 'linear' | 'dynamic', 'factor': float > 1} (ValueError)")
        if not isinstance(f, float) or f <= 1.0:
            return f"refuses rope_scaling factor {f!r}: its config class wants a float > 1 (ValueError)"
    if model_type in PHI3_TYPES and (len(block) != 3 or "type" not in block):
        return (f"refuses rope_scaling with keys {sorted(block)}: Phi3Config wants exactly type, short_factor and "
                "long_factor (ValueError)")
    return None


# model types whose modeling code hard-codes the base and reads no rope block: create_sinusoidal_positions
# uses 1 / 10000^(2i/d) over rotary_dim (modeling_gptj.py, modeling_codegen.py; 4.57.1 and 5.23.0)
FIXED_BASE = {"gptj": 10000.0, "codegen": 10000.0}


@functools.cache
def composites_table(version: str) -> dict:
    """``ropelaw/data/hf_composites.json``'s table of transformers ``version`` (scripts/hf_composites.py): composite
    model type -> what its config class does with a file without ``text_config`` (empty for a version it lacks)."""
    from ...data import read as read_table

    got: dict = read_table("hf_composites")["versions"].get(version, {})
    return got


def text_config_absent(data: Mapping, version: str) -> dict | None:
    """The measured entry of ``data``'s composite ``model_type`` when the file has no ``text_config`` mapping (None:
    it has one, or the type is no composite of that version): ``{"reads": "top"}``, ``{"default": text type, ...}``
    or ``{"refused": error}`` (scripts/hf_composites.py)."""
    mt = data.get("model_type")
    if not isinstance(mt, str) or isinstance(data.get("text_config"), Mapping):
        return None
    return composites_table(version).get(mt)


def default_text_model(data: Mapping, version: str) -> str | None:
    """What RV019 says of a composite file without ``text_config`` that transformers ``version`` builds with its text
    config class's defaults (:func:`text_config_absent`'s ``default``), or None."""
    entry = text_config_absent(data, version)
    if not entry or "default" not in entry:
        return None
    cls = defaults(entry["default"], version).get("_class") or f"the {entry['default']} config class"
    return (f"text_config is absent: transformers {version} builds {data['model_type']}'s text model "
            f"({entry['default']}) from {cls}'s defaults, whatever the top level says (measured: "
            f"ropelaw/data/hf_composites.json); the numbers reported are those defaults")


# the top-level keys of a composite file that are not its text model's (kept when the text model is the default)
NOT_TEXT_KEYS = ("model_type", "architectures", "vision_config", "auto_map", "transformers_version", "torch_dtype",
                 "dtype")
ROPE_KEYS = frozenset({k for keys in ALIASES.values() for k in keys} | {"rope_scaling", "rope_parameters",
                                                                      "no_rope_layers", "attention_chunk_size"})


def _without_text_config(data: Mapping, entry: Mapping, ignored: list) -> tuple[dict, str | None]:
    """``(view, refusal)`` of a composite file without ``text_config`` whose measured ``entry`` is
    :func:`text_config_absent`'s: a ``default`` text model drops the top-level text keys (each RoPE key into
    ``ignored``: the class's defaults run), unless the top-level ``rope_scaling`` is one the class refuses
    (5.23.0's ``PreTrainedConfig.__post_init__`` standardises a truthy ``rope_scaling`` given with a truthy
    ``rope_theta``, configuration_utils.py; the rope types measured refused are ``top_rope_refused``)."""
    mt = data["model_type"]
    if "refused" in entry:
        return dict(data), (f"cannot build a {mt} config without text_config (measured with the class's default text "
                            f"model: {entry['refused']})")
    if "default" not in entry:
        return dict(data), None  # the class reads its text model from the top-level keys
    block = data.get("rope_scaling")
    if isinstance(block, Mapping) and block and data.get("rope_theta"):
        name = block.get("rope_type", block.get("type", "default"))
        why = entry.get("top_rope_refused", {}).get(name) if isinstance(name, str) else None
        if why:
            return dict(data), (f"refuses a {mt} config without text_config whose top-level rope_scaling is "
                                f"{name!r} ({why})")
    cls = defaults(entry["default"]).get("_class") or f"the {entry['default']} config class"
    text_keys = [k for k in data if k not in NOT_TEXT_KEYS and not str(k).startswith("_")]
    for k in text_keys:
        if k in ROPE_KEYS:  # one finding per RoPE key it does not read
            ignored.append(((k,), f"a {mt} config's language model is its text_config; without one, the class builds "
                                  f"{cls}() from its defaults (the numbers reported are those defaults)"))
    return {k: v for k, v in data.items() if k not in text_keys}, None


def runtime_view(data: Mapping, version: str) -> tuple[Mapping, list[tuple[tuple, str]], str | None]:
    """``(data as transformers ``version`` reads it, [(key path it does not read, why)], refusal)``.

    - 4.57.1 has no ``rope_parameters`` (5.x writes it; 4.57.1's models read ``rope_scaling`` and
      ``rope_theta``): the block is not read, the class defaults run (a Qwen2 config saved by transformers
      5 runs base 10,000 there, not its rope_parameters.rope_theta).
    - GPT-J and CodeGen hard-code base 10,000 and read neither rope_theta nor a rope block (FIXED_BASE).
    - A ``text_config`` under a model_type whose config class has none (a text model's type at the root of
      a multimodal file): the class keeps it as a dict and building the model fails (both versions).
    - A composite config without ``text_config`` (:func:`text_config_absent`, measured per class:
      ``ropelaw/data/hf_composites.json``): a class that builds its text config's defaults whatever the top level says
      (Llama 4, LLaVA) is read as those defaults, each top-level RoPE key reported unread; a class that reads the
      top-level keys (the older flat layout: Qwen2-VL) is read from them; a class whose default text model does not
      build, or that refuses the top-level ``rope_scaling`` (5.23.0: a llama3 / yarn / longrope block with a
      ``rope_theta`` beside it), is refused with the runtime's error."""
    v4 = version.startswith("4.")
    ignored: list[tuple[tuple, str]] = []
    refusal = None
    view = dict(data)
    mt = data.get("model_type")
    types = types_table(version)
    if isinstance(data.get("text_config"), Mapping) and isinstance(mt, str) and mt in types["model_types"] \
            and mt not in types["takes_text_config"]:
        refusal = (f"cannot build the model: model_type {mt!r} is a config class without a text_config, so it keeps "
                   f"the file's text_config as a plain dict (AttributeError: 'dict' object has no attribute "
                   f"'to_dict' when the model is built)")
    if mt in FIXED_BASE:
        for k in ("rope_scaling", "rope_parameters", "rope_theta"):
            if k in view:
                ignored.append(((k,), f"its {mt} code rotates with base {FIXED_BASE[mt]:g} fixed and reads no rope "
                                      f"settings (create_sinusoidal_positions)"))
                view.pop(k)
    absent = text_config_absent(data, version)
    if absent is not None and refusal is None:
        view, refusal = _without_text_config(view, absent, ignored)
    if v4:
        for sec_path in ((), ("text_config",), ("language_config",), ("llm_config",)):
            sec: Any = view
            for p in sec_path:
                sec = sec.get(p) if isinstance(sec, Mapping) else None
            if isinstance(sec, Mapping) and "rope_parameters" in sec and "rope_scaling" not in sec:
                ignored.append((sec_path + ("rope_parameters",),
                                "4.57.1 reads rope_scaling and rope_theta; rope_parameters is transformers 5's key"))
                sec = {k: v for k, v in sec.items() if k != "rope_parameters"}
                view = _replace_at(view, sec_path, sec) if sec_path else sec
    return view, ignored, refusal


def _replace_at(data: Mapping, path: tuple, value) -> dict:
    out = dict(data)
    if len(path) == 1:
        out[path[0]] = value
    else:
        out[path[0]] = _replace_at(data[path[0]], path[1:], value)
    return out
