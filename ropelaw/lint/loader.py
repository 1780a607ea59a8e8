"""Config files -> :class:`~ropelaw.spec.RopeSpec`, remembering where every value came from.

Reads Hugging Face ``config.json`` files (``rope_scaling`` and the newer ``rope_parameters``,
also per-layer-type dicts such as Gemma 3's ``{"full_attention": {...},
"sliding_attention": {...}}``) and training configs in YAML or TOML (Megatron-LM / NeMo:
``seq_length``, ``kv_channels``, ``rotary_percent``, ``rotary_base``; GPT-NeoX:
``rotary-pct``, ``rotary-emb-base``, dashes or underscores). Every alias found in public
configs is normalised here, once; nothing else derives the rotary dimension or the base.

Normalisation (the key each value came from is kept, with its line and column):

- rotary dims ``d``: ``qk_rope_head_dim`` (DeepSeek MLA: only that part rotates) or
  ``rotary_dim``; else ``head_dim`` (or ``kv_channels``, or ``hidden_size /
  num_attention_heads``) times ``partial_rotary_factor`` / ``rotary_pct`` /
  ``rotary_percent``, truncated to an integer as transformers does
  (``int(head_dim * factor)``). ChatGLM rotates half of ``kv_channels`` (its
  ``RotaryEmbedding(rotary_dim // 2)``).
- base: ``rope_theta`` / ``rotary_emb_base`` / ``rotary_base`` (or inside
  ``rope_parameters``); ChatGLM ``10000 * rope_ratio``; absent, the architecture's default
  (:data:`ARCH_DEFAULTS`, e.g. 10000 for ``llama``), and the value says so.
- scheme: ``rope_type`` or the older ``type`` (``su`` is LongRoPE's old name).
- local (sliding-window) layers: Gemma 2/3 ``sliding_window`` with ``rope_local_base_freq``
  (Gemma 3: base 10000 on local layers), ``layer_types`` lists, Mistral's all-layer window.
- dtype: ``torch_dtype`` / ``dtype`` / ``params_dtype`` / ``precision`` / ``fp16`` / ``bf16``.

Lengths. ``max_position_embeddings`` is the *advertised* context, not always the length the
model was trained at. Derived, in order (each value records which rule produced it):

- ``train_len``: ``--train``; a training config's ``seq_length``; with a scaling scheme,
  ``original_max_position_embeddings`` (scheme dict or top level, Phi-3); linear scaling
  without it: ``max_position_embeddings / factor`` (position interpolation maps the
  advertised context onto the trained one); otherwise ``max_position_embeddings``.
- ``target``: ``--target``, else ``max_position_embeddings``, else ``train_len``.
- ``tune_len``: ``--tune`` only (a config does not say how long a context-extension run was).

Bad files raise :class:`~ropelaw.errors.UsageError` (one line); bad *values* do not: they
are kept as found and the rules in ``ropelaw/lint/rules/values.py`` report them at their key.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Mapping

from ..errors import UsageError
from ..numfmt import COMPACT_FROM, count as fmt_count, short as fmt_short  # noqa: F401  (re-exported)
from ..spec import RopeSpec
# the parse layer (files -> mapping + positions, with limits) lives in parse.py; re-exported here
from .parse import (CONFIG_SUFFIXES, MAX_BYTES, Path, Positions, config_files, json_positions,  # noqa: F401
                    parse_text, read_document, toml_positions, yaml_positions)

__all__ = [
    "Value", "RopeLayer", "LoadedConfig", "NotARopeConfig", "OptionError", "ARCH_DEFAULTS", "CONFIG_SUFFIXES",
    "read_document", "load_config", "load_mapping", "config_files", "fmt_count", "fmt_short", "show_value",
    "json_positions", "yaml_positions", "toml_positions",
]


class NotARopeConfig(UsageError):
    """The file parsed but holds no RoPE setting (or the model uses other positions)."""


class OptionError(UsageError):
    """A command-line override contradicts a config (e.g. --tune shorter than its training length)."""


# -----------------------------------------------------------------------------------------
# values with provenance
# -----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Value:
    """A setting as found (``raw``), where it was found and how it was obtained.

    ``key`` is the dotted key path in the file (``rope_scaling.factor``); ``None`` for a
    value that is derived, defaulted or given on the command line, in which case ``note``
    says which (``"default of transformers' LlamaConfig"``, ``"--train"``).
    """

    raw: Any
    key: str | None = None
    line: int = 1
    column: int = 1
    note: str = ""
    expect: str = "number"  # number | int | list | str | mapping: what the rules type-check

    @property
    def where(self) -> str:
        """``rope_theta`` or ``rope_theta (default of ...)`` style description."""
        if self.key and self.note:
            return f"{self.key} ({self.note})"
        return self.key or self.note or "?"

    def number(self) -> float | None:
        """``raw`` as a finite float, or ``None`` if it is not a usable number."""
        return _finite(self.raw)


def _finite(x: Any) -> float | None:
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return None
    try:
        f = float(x)
    except OverflowError:
        return None
    return f if math.isfinite(f) else None


@dataclass(frozen=True)
class RopeLayer:
    """One group of layers sharing a RoPE setup (all layers; or global vs local layers)."""

    label: str  # "all layers", "global layers", "local layers", or a layer type name
    d: Value
    base: Value
    scheme: Value  # raw rope_type; "default" when none
    params: dict = field(default_factory=dict)  # name -> Value (scheme parameters as written)
    block: Value | None = None  # the rope_scaling / rope_parameters mapping itself
    window: Value | None = None  # sliding window (relative distances < window), None: full


@dataclass
class LoadedConfig:
    """A config normalised: its RoPE layer groups, lengths and dtype, each with provenance."""

    path: str
    fmt: str
    arch: str  # model_type / architecture family, "" if unknown
    kind: str  # "hf" (a model config.json-like file) or "training" (Megatron / NeoX / NeMo)
    head_dim: Value
    layers: list  # list[RopeLayer]; layers[0] is the main (global / all) group
    max_pos: Value | None
    original_max: Value | None
    train_len: Value
    target: Value
    tune_len: Value | None
    dtype: Value | None
    inputs: list = field(default_factory=list)  # every Value read from the file (rules type-check these)
    problems: list = field(default_factory=list)  # (rule_name, Value, message) noticed while deriving
    notes: list = field(default_factory=list)  # human-readable assumptions made

    def location(self, *keys: str) -> tuple[int, int]:
        for v in self.inputs:
            if v.key in keys:
                return v.line, v.column
        return 1, 1

    def spec(self, layer: int = 0) -> RopeSpec:
        """The :class:`RopeSpec` of layer group ``layer`` (pretrain_base = base: trained from
        scratch with the config's base); ``ValueError`` when a value is unusable."""
        from ..schemes import SCHEMES

        g = self.layers[layer]
        d = g.d.number()
        base = g.base.number()
        train = self.train_len.number()
        if d is None or base is None or train is None:
            bad = [v.where for v in (g.d, g.base, self.train_len) if v.number() is None]
            raise ValueError(f"unusable value(s): {', '.join(bad)}")
        scheme = canonical_scheme(g.scheme.raw)
        info = SCHEMES.get(scheme)
        if info is None:
            raise ValueError(f"unknown scheme {g.scheme.raw!r}")
        allowed = set(info.required) | set(info.optional)
        params = {}
        for name, v in g.params.items():
            if name in allowed:
                params[name] = _plain(v.raw)
        tune = self.tune_len.number() if self.tune_len is not None else None
        source = {"d": g.d.where, "base": g.base.where, "train_len": self.train_len.where,
                  "scheme": g.scheme.where}
        return RopeSpec(d=int(d), train_len=int(train), base=base, pretrain_base=base,
                        tune_len=int(tune) if tune is not None else None, scheme=info.name,
                        params=params, source=source)

    def target_for(self, layer: int = 0) -> tuple[int, str]:
        """``(min(target, window), where that length came from)``: the longest relative distance
        the layer group sees at the target."""
        t = int(self.target.number() or 0)
        w = self.layers[layer].window
        if w is not None and w.number() is not None and 0 < w.number() < t:
            return int(w.number()), w.where
        return t, self.target.where


def show_value(x: Any) -> str:
    """A value as written, for a message: numbers compact (:func:`fmt_count` from 1e12 on), other
    values' repr cut at 40 characters."""
    if isinstance(x, (int, float)) and not isinstance(x, bool) and (isinstance(x, int) or math.isfinite(x)) \
            and abs(x) >= COMPACT_FROM:
        return fmt_count(x)
    return f"{x!r:.40}"


def _plain(x: Any) -> Any:
    if isinstance(x, Mapping):
        return {k: _plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_plain(v) for v in x]
    return x


# -----------------------------------------------------------------------------------------
# architecture defaults and scheme names
# -----------------------------------------------------------------------------------------
# Defaults of the transformers config classes (transformers 4.57), used only when a config
# omits the key; every use is reported as "default of <class>".
ARCH_DEFAULTS: dict[str, dict[str, Any]] = {
    "llama": {"rope_theta": 10000.0, "max_position_embeddings": 2048, "_class": "LlamaConfig"},
    "mistral": {"rope_theta": 10000.0, "max_position_embeddings": 131072, "_class": "MistralConfig"},
    "mixtral": {"rope_theta": 1e6, "max_position_embeddings": 131072, "_class": "MixtralConfig"},
    "qwen2": {"rope_theta": 10000.0, "max_position_embeddings": 32768, "_class": "Qwen2Config"},
    "qwen3": {"rope_theta": 10000.0, "max_position_embeddings": 32768, "_class": "Qwen3Config"},
    "gemma": {"rope_theta": 10000.0, "max_position_embeddings": 8192, "head_dim": 256, "_class": "GemmaConfig"},
    "gemma2": {"rope_theta": 10000.0, "max_position_embeddings": 8192, "head_dim": 256,
               "sliding_window": 4096, "_class": "Gemma2Config"},
    "gemma3_text": {"rope_theta": 1e6, "rope_local_base_freq": 10000.0, "max_position_embeddings": 131072,
                    "head_dim": 256, "num_attention_heads": 8, "sliding_window": 4096,
                    "_class": "Gemma3TextConfig"},
    "phi3": {"rope_theta": 10000.0, "max_position_embeddings": 4096, "_class": "Phi3Config"},
    "gpt_neox": {"rotary_emb_base": 10000, "rotary_pct": 0.25, "max_position_embeddings": 2048,
                 "_class": "GPTNeoXConfig"},
    "falcon": {"rope_theta": 10000.0, "max_position_embeddings": 2048, "_class": "FalconConfig"},
    "internlm2": {"rope_theta": 10000, "max_position_embeddings": 2048, "_class": "InternLM2Config"},
    "deepseek_v2": {"rope_theta": 10000.0, "max_position_embeddings": 2048, "_class": "DeepseekV2Config"},
    "deepseek_v3": {"rope_theta": 10000.0, "max_position_embeddings": 4096, "_class": "DeepseekV3Config"},
    "chatglm": {"rope_ratio": 1, "_class": "ChatGLMConfig (THUDM remote code)"},
}
ROPE_DEFAULT_BASE = 10000.0  # RoFormer (arXiv 2104.09864, eq. 15) and every framework's default

# rope_type / type as written in configs -> registry name (ropelaw.schemes); others pass through
SCHEME_ALIASES = {"su": "longrope", "none": "default", "rope": "default", "": "default"}


def canonical_scheme(raw: Any) -> str:
    """Registry name for a config's ``rope_type``; unknown strings pass through (RV010 reports them)."""
    if raw is None:
        return "default"
    name = str(raw).strip().lower()
    return SCHEME_ALIASES.get(name, name)


_ROPE_KEYS = {
    "head_dim", "hidden_size", "n_embd", "d_model", "num_attention_heads", "n_head", "num_heads",
    "kv_channels", "partial_rotary_factor", "rotary_pct", "rotary_percent", "rotary_percentage",
    "rotary_dim", "qk_rope_head_dim", "rope_theta", "rotary_emb_base", "rotary_base", "rope_ratio",
    "rope_scaling", "rope_parameters", "rope_local_base_freq", "max_position_embeddings",
    "original_max_position_embeddings", "seq_length", "encoder_seq_length", "max_sequence_length",
    "sliding_window", "torch_dtype", "model_type", "position_embedding_type", "pos_emb",
}
_SECTIONS = ("text_config", "llm_config", "language_config", "model", "model_config", "args")


def _norm(key: Any) -> str:
    return str(key).strip().lower().replace("-", "_")


def _dotted(path: tuple) -> str:
    return ".".join(str(p) for p in path)


_NUMERIC_STR = re.compile(r"^\s*[-+]?(?:\d[\d_]*\.?\d*|\.\d+)(?:[eE][-+]?\d+)?\s*$")
_NON_ROPE_TYPES = {"gpt2": "learned absolute positions", "bert": "learned absolute positions",
                   "opt": "learned absolute positions", "bloom": "ALiBi", "mpt": "ALiBi",
                   "roberta": "learned absolute positions", "t5": "relative position buckets"}
_PARAM_EXPECT = {"short_factor": "list", "long_factor": "list", "truncate": "bool",
                 "original_max_position_embeddings": "int", "window": "int", "variant": "str"}
_NOT_PARAMS = {"type", "rope_type", "rope_theta", "partial_rotary_factor"}


class _Section:
    """One mapping of the document with its key path prefix; records every value read."""

    def __init__(self, data: Mapping, prefix: tuple, positions: Positions, fmt: str, inputs: list):
        self.data, self.prefix, self.positions, self.fmt, self.inputs = data, prefix, positions, fmt, inputs
        self.keys: dict[str, Any] = {}
        for k in data:
            self.keys.setdefault(_norm(k), k)

    def has(self, name: str) -> bool:
        k = self.keys.get(name)
        return k is not None and self.data[k] is not None

    def raw(self, name: str) -> Any:
        k = self.keys.get(name)
        return None if k is None else self.data[k]

    def get(self, *names: str, expect: str = "number") -> Value | None:
        """The first of ``names`` present with a non-null value, as a :class:`Value`."""
        for name in names:
            k = self.keys.get(name)
            if k is None or self.data[k] is None:
                continue
            raw = self.data[k]
            path = self.prefix + (k,)
            line, col = self.positions.get(path, (1, 1))
            note = ""
            if (self.fmt in ("yaml", "toml") and expect in ("number", "int") and isinstance(raw, str)
                    and _NUMERIC_STR.match(raw)):
                raw, note = float(raw.replace("_", "")), "a string in the file, read as a number"
            v = Value(raw, _dotted(path), line, col, note, expect)
            self.inputs.append(v)
            return v
        return None

    def sub(self, name: str) -> "_Section | None":
        k = self.keys.get(name)
        if k is None or not isinstance(self.data[k], Mapping):
            return None
        return _Section(self.data[k], self.prefix + (k,), self.positions, self.fmt, self.inputs)


def _pick_section(data: Mapping, positions: Positions, fmt: str, inputs: list) -> _Section:
    """The mapping holding the model settings: the root, or a nested ``text_config`` /
    ``model`` / ... section (one or two levels) with more RoPE keys than the root."""
    root = _Section(data, (), positions, fmt, inputs)

    def score(s: _Section) -> int:
        return sum(1 for k in s.keys if k in _ROPE_KEYS)

    best, best_score = root, score(root)
    frontier = [root]
    for _ in range(2):
        nxt = []
        for s in frontier:
            for name in _SECTIONS:
                sub = s.sub(name)
                if sub is not None:
                    nxt.append(sub)
                    sc = score(sub)
                    if sc > best_score:
                        best, best_score = sub, sc
        frontier = nxt
    return best


def _cli(value: Any, flag: str) -> Value | None:
    return None if value is None else Value(value, None, 1, 1, flag)


def load_config(path: str, *, train: int | None = None, target: int | None = None,
                tune: int | None = None) -> LoadedConfig:
    """Read ``path`` and normalise it (``UsageError`` for a file that cannot be used)."""
    data, positions, fmt = read_document(path)
    return load_mapping(data, positions, path=path, fmt=fmt, train=train, target=target, tune=tune)


def load_mapping(data: Mapping, positions: Positions | None = None, *, path: str = "-", fmt: str = "json",
                 train: int | None = None, target: int | None = None, tune: int | None = None) -> LoadedConfig:
    """Normalise an already-parsed config mapping (see the module docstring for the rules)."""
    if not isinstance(data, Mapping):
        raise UsageError(f"{path}: top level must be a mapping of settings, got {type(data).__name__}")
    positions = positions or {}
    inputs: list[Value] = []
    problems: list[tuple[str, Value, str]] = []
    notes: list[str] = []
    root = _Section(data, (), positions, fmt, inputs)
    s = _pick_section(data, positions, fmt, inputs)

    # -- architecture and kind ------------------------------------------------------------
    model_type = s.raw("model_type") if isinstance(s.raw("model_type"), str) else root.raw("model_type")
    arch = model_type.strip().lower() if isinstance(model_type, str) else ""
    archs = root.raw("architectures")
    arch_names = " ".join(a for a in archs if isinstance(a, str)) if isinstance(archs, list) else ""
    if not arch and "ChatGLM" in arch_names:
        arch = "chatglm"
    is_chatglm = arch == "chatglm" or "ChatGLM" in arch_names or s.has("rope_ratio")
    kind = "hf" if (arch or arch_names) else "training"
    defaults = ARCH_DEFAULTS.get(arch, {})
    dclass = defaults.get("_class", "")
    mt_key = s.keys.get("model_type")
    dline, dcol = (positions.get(s.prefix + (mt_key,), (1, 1)) if mt_key is not None
                   else positions.get(("model_type",), (1, 1)))

    # -- is this a RoPE model at all? ------------------------------------------------------
    if arch in _NON_ROPE_TYPES:
        raise NotARopeConfig(f"{path}: model_type {arch!r} uses {_NON_ROPE_TYPES[arch]}, not RoPE")
    pe = s.raw("pos_emb") if s.has("pos_emb") else s.raw("position_embedding_type")
    if isinstance(pe, str) and _norm(pe) not in ("rotary", "rope", "rotary_embedding"):
        raise NotARopeConfig(f"{path}: position embedding {pe!r} is not RoPE")
    if s.raw("alibi") is True:
        raise NotARopeConfig(f"{path}: alibi is true: this model uses ALiBi, not RoPE")
    has_heads = any(s.has(k) for k in ("num_attention_heads", "n_head", "num_heads"))
    has_dims = any(s.has(k) for k in ("head_dim", "kv_channels", "rotary_dim", "qk_rope_head_dim"))
    if not (has_dims or (has_heads and any(s.has(k) for k in ("hidden_size", "n_embd", "d_model")))
            or ((has_heads or "num_attention_heads" in defaults) and "head_dim" in defaults)):
        raise NotARopeConfig(f"{path}: no RoPE settings found (need head_dim, rotary_dim, kv_channels or "
                             f"hidden_size with num_attention_heads)")

    # -- the RoPE block: rope_parameters (per layer type or flat) or rope_scaling -----------
    block = s.sub("rope_parameters") or s.sub("rope_scaling")
    per_type: dict[str, _Section] = {}
    if block is not None and block.data and all(isinstance(v, Mapping) for v in block.data.values()):
        for k in block.data:
            per_type[_norm(k)] = block.sub(_norm(k)) or _Section(block.data[k], block.prefix + (k,), positions, fmt, inputs)
        main_block = per_type.get("full_attention") or next(iter(per_type.values()))
    else:
        main_block = block
    rs_raw = s.raw("rope_scaling")
    if rs_raw is not None and rs_raw is not False and not isinstance(rs_raw, Mapping) and block is None:
        if rs_raw is True:  # Megatron-Core: --use-rope-scaling applies Llama 3.1's scaling
            v = s.get("rope_scaling", expect="bool")
            notes.append("rope_scaling: true is Megatron-Core's Llama 3.1 scaling (low 1, high 4, original 8192)")
            megatron_llama3 = v
        else:
            problems.append(("invalid-value-type", s.get("rope_scaling", expect="mapping"),
                             f"rope_scaling must be a mapping or null, got {type(rs_raw).__name__} "
                             f"{show_value(rs_raw)}"))
            megatron_llama3 = None
    else:
        megatron_llama3 = None

    # -- head dim and rotary dims ----------------------------------------------------------
    heads_v = s.get("num_attention_heads", "n_head", "num_heads", expect="int")
    if heads_v is None and "num_attention_heads" in defaults:
        heads_v = Value(defaults["num_attention_heads"], None, 1, 1, f"default of {dclass}", "int")
    hidden_v = s.get("hidden_size", "n_embd", "d_model", expect="int")
    head_v = s.get("head_dim", expect="int")
    kv_v = s.get("kv_channels", expect="int")
    if head_v is None and kv_v is not None:  # Megatron / ChatGLM: kv_channels is the head dim
        head_v = kv_v
    if head_v is None and "head_dim" in defaults and (hidden_v is None or arch.startswith("gemma")):
        head_v = Value(defaults["head_dim"], None, 1, 1, f"default of {dclass}", "int")
    if head_v is None:
        h, n = _finite(hidden_v.raw) if hidden_v else None, _finite(heads_v.raw) if heads_v else None
        key = hidden_v or heads_v
        if h is not None and n is not None and n > 0:
            q = Fraction(h) / Fraction(n)
            note = f"{hidden_v.key} / {heads_v.key} = {fmt_count(h)} / {fmt_count(n)}"
            if q.denominator != 1:
                problems.append(("rotary-dimension-not-integer", hidden_v,
                                 f"hidden_size {fmt_count(h)} is not divisible by num_attention_heads "
                                 f"{fmt_count(n)}: head_dim {float(q):g} "
                                 f"(transformers truncates to {fmt_count(int(q))})"))
            head_v = Value(int(q), None, key.line, key.column, note, "int")
        else:
            head_v = Value(None, None, key.line if key else 1, key.column if key else 1,
                           "not derivable from hidden_size / num_attention_heads", "int")

    frac_v = None
    for sec in (main_block, s):
        if sec is not None and frac_v is None:
            frac_v = sec.get("partial_rotary_factor", "rotary_pct", "rotary_percent", "rotary_percentage")
    if frac_v is None and "rotary_pct" in defaults:
        frac_v = Value(defaults["rotary_pct"], None, 1, 1, f"rotary_pct default of {dclass}")
    rot_v = s.get("qk_rope_head_dim", expect="int") or s.get("rotary_dim", expect="int")
    if rot_v is not None:
        d_v = rot_v
    else:
        hd = _finite(head_v.raw)
        fr = _finite(frac_v.raw) if frac_v is not None else 1.0
        if hd is None or fr is None:
            d_v = Value(None, None, head_v.line, head_v.column, "not derivable (see the values it comes from)", "int")
        else:
            prod = Fraction(hd) * Fraction(fr)
            parts = [head_v.where]
            if frac_v is not None:
                parts.append(f"{frac_v.where} {fr:g}")
            if is_chatglm:
                prod /= 2
                parts.append("ChatGLM rotates half: / 2")
            if prod.denominator != 1:
                problems.append(("rotary-dimension-not-integer", frac_v or head_v,
                                 f"rotary dims {' x '.join(parts)} = {float(prod):g} is not a whole number "
                                 f"(transformers truncates to {fmt_count(int(prod))})"))
            anchor = frac_v if (frac_v is not None and frac_v.key) else head_v
            note = " x ".join(parts) if (frac_v is not None or is_chatglm) else ""
            if not note:
                d_v = head_v
            else:
                d_v = Value(int(prod), None, anchor.line, anchor.column, note, "int")

    # -- base ------------------------------------------------------------------------------
    def base_from(sec: _Section | None) -> Value | None:
        if sec is None:
            return None
        return sec.get("rope_theta", "rotary_emb_base", "rotary_base", "base")

    base_v = base_from(main_block) or s.get("rope_theta", "rotary_emb_base", "rotary_base")
    if base_v is None and is_chatglm:
        ratio = s.get("rope_ratio")
        r = _finite(ratio.raw) if ratio else 1.0
        if ratio is None:
            base_v = Value(ROPE_DEFAULT_BASE, None, 1, 1, "ChatGLM base 10000, no rope_ratio")
        elif r is None:
            base_v = Value(ratio.raw, ratio.key, ratio.line, ratio.column, "ChatGLM: 10000 * rope_ratio")
        else:
            base_v = Value(ROPE_DEFAULT_BASE * r, None, ratio.line, ratio.column,
                           f"10000 * {ratio.key} {r:g} (ChatGLM)")
    if base_v is None:
        for k in ("rope_theta", "rotary_emb_base"):
            if k in defaults:
                base_v = Value(defaults[k], None, dline, dcol, f"{k} absent: {dclass} default")
                break
        else:
            base_v = Value(ROPE_DEFAULT_BASE, None, 1, 1, "no base key: RoPE's default 10000 (RoFormer)")
        notes.append(f"base {fmt_count(base_v.raw)} assumed ({base_v.note})")

    # -- scheme and its parameters ---------------------------------------------------------
    def scheme_of(sec: _Section | None, fallback_anchor: Value | None) -> tuple[Value, dict, Value | None]:
        if sec is None:
            return Value("default", None, 1, 1, "no rope_scaling", "str"), {}, None
        line, col = positions.get(sec.prefix, (1, 1))
        blk = Value(_plain(sec.data), _dotted(sec.prefix), line, col, "", "mapping")
        sv = sec.get("rope_type", "type", expect="str")
        if sv is None:
            sv = Value("default", blk.key, line, col, "no rope_type", "str")
        params = {}
        for k in sec.data:
            nk = _norm(k)
            if nk in _NOT_PARAMS or nk in ("base",):
                continue
            v = sec.get(nk, expect=_PARAM_EXPECT.get(nk, "number"))
            if v is not None:
                params[nk] = v
        return sv, params, blk

    scheme_v, params, block_v = scheme_of(main_block, None)
    if megatron_llama3 is not None:
        scheme_v = Value("llama3", megatron_llama3.key, megatron_llama3.line, megatron_llama3.column,
                         "Megatron-Core rope scaling", "str")
        fv = s.get("rope_scaling_factor")
        params = {"factor": fv or Value(8.0, None, 1, 1, "Megatron-Core default"),
                  "low_freq_factor": Value(1.0, None, 1, 1, "Megatron-Core default"),
                  "high_freq_factor": Value(4.0, None, 1, 1, "Megatron-Core default"),
                  "original_max_position_embeddings": Value(8192, None, 1, 1, "Megatron-Core default", "int")}
    scheme = canonical_scheme(scheme_v.raw) if isinstance(scheme_v.raw, str) else "?"
    top_orig = s.get("original_max_position_embeddings", expect="int")
    if (scheme in ("longrope", "llama3", "yarn") and "original_max_position_embeddings" not in params
            and top_orig is not None):
        params["original_max_position_embeddings"] = top_orig  # Phi-3 keeps it at the top level

    # -- lengths ---------------------------------------------------------------------------
    max_v = s.get("max_position_embeddings", "max_sequence_length", "n_positions", expect="int")
    seq_v = s.get("seq_length", "encoder_seq_length", expect="int")
    if max_v is None and seq_v is not None and kind == "hf":
        max_v, seq_v = seq_v, None  # ChatGLM: seq_length is the advertised context
    if max_v is None and "max_position_embeddings" in defaults:
        max_v = Value(defaults["max_position_embeddings"], None, dline, dcol,
                      f"max_position_embeddings absent: {dclass} default", "int")
    orig_v = params.get("original_max_position_embeddings") or top_orig
    if scheme == "longrope" and "max_position_embeddings" not in params and "factor" not in params \
            and max_v is not None and max_v.key:
        # transformers' longrope reads the attention factor's s = max_position_embeddings / original
        params["max_position_embeddings"] = max_v
    if train is not None:
        train_v = _cli(train, "--train")
    elif seq_v is not None:
        train_v = seq_v
    elif scheme not in ("default", "?") and orig_v is not None:
        train_v = orig_v
    elif scheme == "linear" and max_v is not None and _finite(max_v.raw) and params.get("factor") is not None \
            and (_finite(params["factor"].raw) or 0) >= 1:
        f = _finite(params["factor"].raw)
        train_v = Value(int(_finite(max_v.raw) // f), None, max_v.line, max_v.column,
                        f"{max_v.key or 'max_position_embeddings'} / factor {f:g} (linear scaling; --train to set)", "int")
    elif max_v is not None:
        train_v = max_v
    else:
        train_v = Value(None, None, 1, 1, "no max_position_embeddings or seq_length (pass --train)", "int")
    if target is not None:
        target_v = _cli(target, "--target")
    else:
        target_v = max_v or train_v
    tune_v = _cli(tune, "--tune")
    if tune is not None and _finite(train_v.raw) is not None and tune < _finite(train_v.raw):
        raise OptionError(f"{path}: --tune {tune} is shorter than the training length "
                          f"{fmt_count(_finite(train_v.raw))} ({train_v.where}); a tuning run is at least as long")

    # -- dtype -----------------------------------------------------------------------------
    dtype_v = s.get("torch_dtype", "dtype", "params_dtype", expect="str") or root.get("torch_dtype", "dtype", expect="str")
    if dtype_v is None:
        trainer = root.sub("trainer")
        prec = (s.get("precision", expect="any") or root.get("precision", expect="any")
                or (trainer.get("precision", expect="any") if trainer is not None else None))
        if prec is not None:
            dtype_v = prec
    if dtype_v is None:
        for name in ("fp16", "bf16"):
            raw = s.raw(name)
            sub = s.sub(name)
            if raw is True:
                dtype_v = Value(name, _dotted(s.prefix + (s.keys[name],)), *positions.get(s.prefix + (s.keys[name],), (1, 1)), "", "str")
            elif sub is not None and sub.raw("enabled") is True:
                p = sub.prefix + (sub.keys["enabled"],)
                dtype_v = Value(name, _dotted(p), *positions.get(p, (1, 1)), "", "str")
            if dtype_v is not None:
                break

    # -- layer groups: all / global + local (sliding window) -------------------------------
    window_v = s.get("sliding_window", "sliding_window_size", expect="int")
    if s.raw("use_sliding_window") is False:
        window_v = None
    layer_types = s.raw("layer_types")
    types = {str(t) for t in layer_types} if isinstance(layer_types, list) else set()
    main = RopeLayer("all layers", d_v, base_v, scheme_v, params, block_v, None)
    layers = [main]
    local_base = None
    if "sliding_attention" in per_type:
        lb = per_type["sliding_attention"]
        local_base = base_from(lb)
        lsv, lparams, lblock = scheme_of(lb, None)
    else:
        lsv, lparams, lblock = Value("default", None, 1, 1, "local layers: plain RoPE", "str"), {}, None
    lbf = s.get("rope_local_base_freq")
    if lbf is None and arch == "gemma3_text" and "rope_local_base_freq" in defaults:
        lbf = Value(defaults["rope_local_base_freq"], None, 1, 1, f"absent: {dclass} default")
    local_base = local_base or lbf
    alternating = arch in ("gemma2", "gemma3_text", "gemma3") or bool(per_type) or \
        ("sliding_attention" in types and "full_attention" in types) or local_base is not None
    if window_v is None and alternating and "sliding_window" in defaults:
        window_v = Value(defaults["sliding_window"], None, 1, 1, f"absent: {dclass} default", "int")
    if window_v is not None and (types == {"full_attention"}):
        window_v = None
    if window_v is not None:
        if alternating:
            main = RopeLayer("global layers", d_v, base_v, scheme_v, params, block_v, None)
            local = RopeLayer("local layers", d_v, local_base or base_v, lsv, lparams, lblock, window_v)
            layers = [main, local]
        else:
            layers = [RopeLayer("all layers", d_v, base_v, scheme_v, params, block_v, window_v)]

    return LoadedConfig(path=path, fmt=fmt, arch=arch, kind=kind, head_dim=head_v, layers=layers,
                        max_pos=max_v, original_max=orig_v, train_len=train_v, target=target_v,
                        tune_len=tune_v, dtype=dtype_v, inputs=inputs, problems=problems, notes=notes)
