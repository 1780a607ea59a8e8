"""Config files -> :class:`~ropelaw.spec.RopeSpec`, remembering where every value came from.

The mapping layer is a small engine (:func:`load_mapping`) driven by one dialect per config
family in ``ropelaw/lint/dialects/`` (how to add one: that package's docstring): the dialect
whose ``detect`` scores the document highest reads it. The training frameworks (torchtitan,
torchtune, axolotl, litgpt, nanotron, Megatron-LM, NeMo, OLMo, OLMo-core, GPT-NeoX) read their documents
with a ``load`` of their own; the ``hf`` dialect is a table read by the engine below: Hugging
Face ``config.json`` files (``rope_scaling`` and the newer ``rope_parameters``, flat or per layer
type such as Gemma 3's ``{"full_attention": {...}, "sliding_attention": {...}}``; multimodal
``text_config`` / ``language_config`` / ``llm_config`` sections; ``mrope``; Llama 4; Qwen v1) and
YAML or TOML that no framework claims but that uses Megatron-LM / NeMo / GPT-NeoX key names. OmegaConf interpolations (``${.encoder_seq_length}``,
``${model.seq_length}``) are resolved when a value is read; one that cannot be resolved is
finding RV018 at its key. Nothing else derives the rotary dimension or the base.

Semantics are the runtime's: rotary dims, the scheme's parameters, its original length and
switch point are what transformers computes (the installed one: 4.x -> 4.57.1, 5.x -> 5.23.0;
without one, 5.23.0), see ``dialects/hf.py:runtime_params``; ``LoadedConfig.semantics`` names
the version and the lint JSON reports it. A key transformers ignores is finding RV019 (info).

Normalisation (the key each value came from is kept, with its line and column):

- rotary dims ``d``: ``qk_rope_head_dim`` (DeepSeek MLA: only that part rotates) or
  ``rotary_dim``; else ``head_dim`` (or ``kv_channels``, or ``hidden_size /
  num_attention_heads``) times ``partial_rotary_factor`` / ``rotary_pct`` /
  ``rotary_percent``, truncated as transformers does: ``int(head_dim * factor)`` in float64
  (phi-2: 80 x 0.4 = 32; 80 x 0.6 = 48, where the exact product would give 47). ChatGLM
  rotates half of ``kv_channels`` (its ``RotaryEmbedding(rotary_dim // 2)``).
- base: ``rope_theta`` / ``rotary_emb_base`` / ``rotary_base`` (or inside
  ``rope_parameters``); ChatGLM ``10000 * rope_ratio``; absent, the default of the
  ``model_type``'s transformers config class (``dialects/hf_defaults.py``, generated from
  transformers 4.57.1 and 5.23.0, e.g. 10000 for ``llama``), and the value says so.
- scheme: ``rope_type`` or the older ``type`` (``su`` is LongRoPE's old name; ``mrope`` is
  plain RoPE over sections, as transformers runs it).
- layer groups: for a ``model_type`` transformers has, what each layer runs comes from the table
  measured on transformers (``ropelaw/lint/layers/``: its rotary, NoPE, its window or chunk, from
  ``layer_types`` / ``no_rope_layers`` or the config class's default rule); layers alike are one
  :class:`RopeLayer` group with their indices; what the table cannot tell is RV024, and a key that
  changes the rotary but is not read is RV025. Other model types (remote code, training configs):
  Gemma-2/3-style ``sliding_window`` with ``rope_local_base_freq``, ``layer_types`` lists,
  Mistral's all-layer window.
- dtype: ``torch_dtype`` / ``dtype`` / ``params_dtype`` / ``precision`` / ``fp16`` / ``bf16``.

Lengths. ``max_position_embeddings`` is the *advertised* context, not always the length the
model was trained at. Derived, in order (each value records which rule produced it):

- ``train_len``: ``--train``; a training config's ``seq_length``; with a scaling scheme,
  the original length (scheme dict or top level, Phi-3: whichever the runtime reads); linear scaling
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
    "Value", "RopeLayer", "LoadedConfig", "NotARopeConfig", "NoRopeFound", "UnreadConfig", "ModelNeeded", "OptionError", "CONFIG_SUFFIXES", "canonical_scheme",
    "read_document", "load_config", "load_mapping", "config_files", "fmt_count", "fmt_short", "show_value",
    "json_positions", "yaml_positions", "toml_positions",
]


class NotARopeConfig(UsageError):
    """The file parsed but holds no RoPE setting (or the model uses other positions)."""


class NoRopeFound(NotARopeConfig):
    """The dialect found nothing it can read (no head dims, an unknown preset). A skip only when the
    file has no RoPE-looking key; otherwise :func:`load_mapping` makes it :class:`UnreadConfig` (RV030)."""


class UnreadConfig(NotARopeConfig):
    """A file lint reports as one finding instead of skipping it: ``code`` RV030 (RoPE settings that no
    dialect reads) or RV031 (the config names its model elsewhere and that model was not given);
    ``line`` / ``column`` of the key concerned (``ropelaw/lint/rules/reading.py``)."""

    def __init__(self, message: str, code: str = "RV030", line: int = 1, column: int = 1):
        super().__init__(message)
        self.code, self.line, self.column = code, line, column


class ModelNeeded(UnreadConfig):
    """RV031: the config names its model elsewhere (``base_model``, ``model_name_or_path``,
    ``checkpoint_dir`` ...) and neither a local directory, ``--model-config`` nor a preset gives it."""

    def __init__(self, message: str, line: int = 1, column: int = 1):
        super().__init__(message, "RV031", line, column)


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
    """One group of layers sharing a RoPE setup and an attention span (all layers; global / local /
    chunked layers; NoPE layers, which apply no rotary; layers without attention)."""

    label: str  # "all layers", "global layers", "local layers", "chunked layers", "NoPE layers", ...
    d: Value
    base: Value
    scheme: Value  # raw rope_type; "default" when none
    params: dict = field(default_factory=dict)  # name -> Value (scheme parameters as written)
    block: Value | None = None  # the rope_scaling / rope_parameters mapping itself
    window: Value | None = None  # sliding window (relative distances < window), None: full
    # the scheme was in force from the first pre-training step (RopeSpec.pretrained_with_scheme)
    pretrained_with_scheme: Value | None = None
    chunk: Value | None = None  # chunked attention: a query sees the earlier keys of its chunk of this length
    rope: bool = True  # False: the layers apply no rotary (NoPE); d / base / scheme are then the model's, unused
    attention: bool = True  # False: Mamba / convolution / linear-attention layers (no positions through RoPE)
    indices: tuple | None = None  # the decoder layers (0-based) of the group, None: not known (all)
    kinds: tuple = ()  # the layer kinds of the group as the config names them (layer_types values)


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
    semantics: str | None = None  # whose behaviour the numbers follow, e.g. "transformers 5.23.0"
    # dotted keys the dialect looked at and judged (a switch, a key of another model's path): not "unread"
    considered: list = field(default_factory=list)
    unread: list = field(default_factory=list)  # Values at RoPE-looking keys no reader used (RV030; unread.py)
    # (transformers version, Value, why it refuses the config): RV021 for the followed version, RV022 else
    refusals: list = field(default_factory=list)

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
        if tune is not None and tune <= train:
            tune = None  # a fine-tune within the training length (axolotl sequence_len): no context extension
        source = {"d": g.d.where, "base": g.base.where, "train_len": self.train_len.where,
                  "scheme": g.scheme.where}
        from_start = g.pretrained_with_scheme is not None and g.pretrained_with_scheme.raw is True \
            and info.name != "default"
        return RopeSpec(d=int(d), train_len=int(train), base=base, pretrain_base=base,
                        tune_len=int(tune) if tune is not None else None, scheme=info.name,
                        params=params, source=source, pretrained_with_scheme=from_start)

    def target_for(self, layer: int = 0) -> tuple[int, str]:
        """``(min(target, window or chunk), where that length came from)``: the longest relative
        distance the layer group sees at the target (a chunk of C keys holds distances up to C - 1;
        it is compared like a window of C keys)."""
        t = int(self.target.number() or 0)
        g = self.layers[layer]
        for w in (g.window, g.chunk):
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
# the engine: a dialect's table -> LoadedConfig (the tables live in ropelaw/lint/dialects/)
# -----------------------------------------------------------------------------------------
ROPE_DEFAULT_BASE = 10000.0  # RoFormer (arXiv 2104.09864, eq. 15) and every framework's default


def _hf():
    from .dialects import hf

    return hf


def canonical_scheme(raw: Any) -> str:
    """Registry name for a config's ``rope_type``; unknown strings pass through (RV008 reports them)."""
    if raw is None:
        return "default"
    name = str(raw).strip().lower()
    return _hf().SCHEME_ALIASES.get(name, name)


def _norm(key: Any) -> str:
    return str(key).strip().lower().replace("-", "_")


def _dotted(path: tuple) -> str:
    return ".".join(str(p) for p in path)


# linear-time: `\d[\d_]*(?:\.\d*)?` matches what `\d[\d_]*\.?\d*` did without its two adjacent
# digit loops (which backtracked quadratically: 22 s on 20,000 digits followed by a letter)
_NUMERIC_STR = re.compile(r"^\s*[-+]?(?:\d[\d_]*(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?\s*$")
_PARAM_EXPECT = {"short_factor": "list", "long_factor": "list", "truncate": "bool",
                 "original_max_position_embeddings": "int", "window": "int", "variant": "str"}
_NOT_PARAMS = {"type", "rope_type", "rope_theta", "partial_rotary_factor", "base"}
# Qwen2-VL / 2.5-VL (mrope), HunyuanOCR (xdrope): how the pairs split over position / time / height / width
_MROPE_KEYS = {"mrope_section", "mrope_interleaved", "xdrope_section"}
_ROPE_SWITCHES = ("rope", "use_rope")  # a file no framework claims: ``rope: true`` (OLMo's name) says RoPE is on

# OmegaConf interpolation: the whole value is ${key}, ${.sibling}, ${..parent_key} or ${a.b.c}
# the reference is group(1).strip(): a lazy group between two `\s*` backtracked cubically on spaces
_INTERP = re.compile(r"^\$\{([^${}:]*)\}$")
_HAS_INTERP = re.compile(r"\$\{")


class _Section:
    """One mapping of the document with its key path prefix; records every value read.

    ``root`` is the whole document: OmegaConf interpolations (``${.encoder_seq_length}``,
    ``${model.max_position_embeddings}``) are resolved against it when a value is read.
    """

    def __init__(self, data: Mapping, prefix: tuple, positions: Positions, fmt: str, inputs: list,
                 root: Mapping | None = None, problems: list | None = None):
        self.data, self.prefix, self.positions, self.fmt, self.inputs = data, prefix, positions, fmt, inputs
        self.root = data if root is None else root
        self.problems = problems if problems is not None else []
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
            if self.fmt in ("yaml", "toml") and isinstance(raw, str) and _HAS_INTERP.search(raw):
                resolved, why = _interpolate(self.root, self.prefix, raw)
                if why is not None:
                    v = Value(raw, _dotted(path), line, col, "", "interpolation")
                    self.inputs.append(v)
                    self.problems.append(("unresolved-interpolation", v, f"{_dotted(path)} is {raw}: {why}"))
                    return v
                raw, note = resolved, f"{raw.strip()} resolved"
            if (self.fmt in ("yaml", "toml") and expect in ("number", "int") and isinstance(raw, str)
                    and _NUMERIC_STR.match(raw)):
                raw = float(raw.replace("_", ""))
                note = (note + ", " if note else "") + "a string in the file, read as a number"
            v = Value(raw, _dotted(path), line, col, note, expect)
            self.inputs.append(v)
            return v
        return None

    def sub(self, name: str) -> "_Section | None":
        k = self.keys.get(name)
        if k is None or not isinstance(self.data[k], Mapping):
            return None
        return _Section(self.data[k], self.prefix + (k,), self.positions, self.fmt, self.inputs, self.root,
                        self.problems)


class _DefaultSection(_Section):
    """A mapping of the config class's defaults (a default RoPE block): its values carry no key and say
    they are the default, at the position of model_type."""

    def __init__(self, data, prefix, positions, fmt, inputs, root, problems, *, note: str, at: tuple[int, int]):
        super().__init__(data, prefix, positions, fmt, [], root, problems)
        self.note, self.at = note, at

    def get(self, *names: str, expect: str = "number") -> Value | None:
        for name in names:
            k = self.keys.get(name)
            if k is not None and self.data[k] is not None:
                return Value(_plain(self.data[k]), None, self.at[0], self.at[1],
                             f"{_dotted(self.prefix + (k,))}: {self.note}", expect)
        return None

    def sub(self, name: str) -> "_Section | None":
        k = self.keys.get(name)
        if k is None or not isinstance(self.data[k], Mapping):
            return None
        return _DefaultSection(self.data[k], self.prefix + (k,), self.positions, self.fmt, self.inputs, self.root,
                               self.problems, note=self.note, at=self.at)


def _interpolate(root: Mapping, prefix: tuple, text: str) -> tuple[Any, str | None]:
    """Resolve an OmegaConf interpolation ``text`` found in the mapping at ``prefix``:
    ``(value, None)``, or ``(None, why)`` when it cannot be resolved.

    OmegaConf's grammar (omegaconf 2.3, "Variable interpolation"): ``${a.b}`` is absolute, from
    the root; ``${.b}`` is relative to the node holding the value, each further dot one level up.
    Resolvers (``${oc.env:X}``) and strings with text around the interpolation are not
    evaluated (their value depends on the environment): reported as unresolvable. A chain of
    references is followed to its end, however long (each key at most once: a key met twice is a
    cycle, as OmegaConf reports it), iteratively.
    """
    seen: set[tuple] = set()
    while True:
        m = _INTERP.match(text.strip())
        if m is None:
            return None, "an OmegaConf expression ropelaw does not evaluate (only ${key} and ${.key} references)"
        ref = m.group(1).strip()
        if ref.startswith("."):
            ups = len(ref) - len(ref.lstrip("."))
            if ups - 1 > len(prefix):
                return None, f"${{{ref}}} goes above the top of the file"
            base = prefix[: len(prefix) - (ups - 1)]
            parts = [p for p in ref[ups:].split(".") if p]
        else:
            base = ()
            parts = [p for p in ref.split(".") if p]
        node: Any = root
        for p in base:
            node = node[p]
        where = list(base)
        for p in parts:
            if isinstance(node, Mapping) and p in node:
                node = node[p]
            elif isinstance(node, list) and p.isascii() and p.isdigit() and int(p) < len(node):
                node = node[int(p)]
            else:
                return None, f"no key {'.'.join(str(w) for w in where + [p])} in the file"
            where.append(p)
        if tuple(where) in seen:
            return None, "interpolations refer to each other in a cycle"
        seen.add(tuple(where))
        if isinstance(node, str) and _HAS_INTERP.search(node):
            prefix, text = tuple(where[:-1]), node
            continue
        if node is None or isinstance(node, (Mapping, list)):
            return None, f"{'.'.join(map(str, where))} is {'null' if node is None else 'not a single value'}"
        return node, None


def _pick_section(data: Mapping, positions: Positions, fmt: str, inputs: list, dialect, problems: list) -> _Section:
    """The mapping holding the model settings: the root, or a nested section of the dialect
    (``text_config``, ``language_config``, ``model`` ...; one or two levels) with more of the
    dialect's keys than the root. A LLaVA ``text_config`` holding only a few keys still wins when it
    names its own ``model_type`` (the language model is the one that rotates)."""
    root = _Section(data, (), positions, fmt, inputs, data, problems)
    known = dialect.all_keys()

    def score(s: _Section) -> int:
        return sum(1 for k in s.keys if k in known)

    best, best_score = root, score(root)
    frontier = [root]
    for _ in range(2):
        nxt = []
        for s in frontier:
            for name in dialect.sections:
                sub = s.sub(name)
                if sub is not None:
                    nxt.append(sub)
                    sc = score(sub) + (100 if name in ("text_config", "language_config", "llm_config")
                                       and isinstance(sub.raw("model_type"), str) else 0)
                    if sc > best_score:
                        best, best_score = sub, sc
        frontier = nxt
    return best


def _cli(value: Any, flag: str, expect: str = "number") -> Value | None:
    return None if value is None else Value(value, None, 1, 1, flag, expect)


SHELL_SUFFIXES = (".sh", ".bash")  # launch scripts: read for Megatron flags when named


def load_config(path: str, *, train: int | None = None, target: int | None = None,
                tune: int | None = None, head_dim: int | None = None, base: float | None = None,
                dtype: str | None = None, model_config: str | None = None) -> LoadedConfig:
    """Read ``path`` and normalise it (``UsageError`` for a file that cannot be used).

    The dialect whose ``detect`` scores the document highest reads it (:func:`load_mapping`);
    a launch script (``*.sh``) is parsed for its flags and read by the ``megatron`` dialect.
    --train / --target / --tune override; --head-dim / --base / --dtype fill in values the
    config (and its framework) lack; ``model_config`` (--model-config) is the config of the model a
    fine-tuning config names elsewhere (``base_model``, ``model_name_or_path``, ``checkpoint_dir``).
    """
    kw = dict(train=train, target=target, tune=tune, head_dim=head_dim, base=base, dtype=dtype,
              model_config=model_config)
    if path.lower().endswith(SHELL_SUFFIXES):
        from .dialects.maxtext import read_launch
        from .dialects.megatron import read_shell

        launch = read_launch(path)  # MaxText's trainer with key=value overrides
        if launch is not None:
            return load_mapping(launch[0], launch[1], path=path, fmt="shell", dialect="maxtext", **kw)
        flags, positions = read_shell(path)
        return load_mapping(flags, positions, path=path, fmt="shell", dialect="megatron", **kw)
    data, positions, fmt = read_document(path)
    return load_mapping(data, positions, path=path, fmt=fmt, **kw)


@dataclass(frozen=True)
class Overrides:
    """The command line: ``train`` / ``target`` / ``tune`` override, the rest fill in."""

    train: int | None = None
    target: int | None = None
    tune: int | None = None
    head_dim: int | None = None
    base: float | None = None
    dtype: str | None = None
    model_config: str | None = None  # --model-config: the named model's config.json (or a directory holding it)


# model types whose attention rotates 2 * ceil(d / 2) dims for an odd d = int(head_dim * partial_rotary_factor)
# (apply_rotary_pos_emb slices by cos.shape[-1]): run in tests/test_severity_parity.py under both versions
ODD_PARTIAL_ROUNDS_UP = ("gpt_neox", "nemotron", "phi3")


def _rotary_dims(head: float, frac: float | None) -> tuple[int, float]:
    """``(int(head_dim * factor), head_dim * factor)`` in float64, exactly as transformers computes
    ``dim = int(head_dim * partial_rotary_factor)`` (modeling_rope_utils, 4.57.1 and 5.23.0): phi-2
    80 x 0.4 = 32.0 -> 32, 80 x 0.6 = 48.0 -> 48 (the exact product 47.99... would give 47)."""
    prod = float(head) * (1.0 if frac is None else float(frac))
    if not math.isfinite(prod):  # 128 x 1e308: beyond float range; the exact product says how far (RV017)
        return int(Fraction(head) * Fraction(1.0 if frac is None else frac)), prod
    return int(prod), prod


def load_mapping(data: Mapping, positions: Positions | None = None, *, path: str = "-", fmt: str = "json",
                 train: int | None = None, target: int | None = None, tune: int | None = None,
                 head_dim: int | None = None, base: float | None = None, dtype: str | None = None,
                 dialect: Any = None, model_config: str | None = None) -> LoadedConfig:
    """Normalise an already-parsed config mapping (see the module docstring for the rules).

    ``dialect``: a :class:`~ropelaw.lint.dialects.Dialect`, or its name; default: the dialect
    whose ``detect`` scores ``data`` highest (:func:`ropelaw.lint.dialects.pick`). A dialect with
    a ``load`` of its own (the training frameworks) reads the document; any other is read by the
    table engine (:func:`_load_table`), and --head-dim / --base / --dtype fill what it lacks.

    Never a misread (``unread.py``): a RoPE-looking key that the reader neither used nor judged is
    RV030 at that key, and no base is invented while one is unread; a dialect that finds nothing it
    can read (:class:`NoRopeFound`) in a file with RoPE-looking keys is RV030 for the file, not a skip.
    """
    from . import dialects
    from .unread import check_read, unread_file

    if not isinstance(data, Mapping):
        raise UsageError(f"{path}: top level must be a mapping of settings, got {type(data).__name__}")
    dia = dialects.get(dialect) if isinstance(dialect, str) else (dialect or dialects.pick(data))
    o = Overrides(train=train, target=target, tune=tune, head_dim=head_dim, base=base, dtype=dtype,
                  model_config=model_config)
    try:
        if dia.load is not None:
            cfg = dia.load(data, positions, path, fmt, o)
        else:
            cfg = _fill_in(_load_table(data, positions, path=path, fmt=fmt, train=train, target=target, tune=tune,
                                       dia=dia), o)
    except NoRopeFound as exc:
        raise unread_file(data, positions or {}, path, str(exc)) from None
    return check_read(data, positions or {}, cfg)


def _fill_in(cfg: LoadedConfig, o: Overrides) -> LoadedConfig:
    """--head-dim / --base / --dtype for a config read by a table dialect (Hugging Face): used only
    where that config lacks the value (no head dim derivable, no base key and no architecture
    default, no dtype)."""
    from dataclasses import replace

    if o.head_dim is None and o.base is None and o.dtype is None:
        return cfg
    layers = []
    head = cfg.head_dim
    if o.head_dim is not None and (head is None or head.raw is None):
        head = _cli(o.head_dim, "--head-dim", "int")
    for g in cfg.layers:
        d = head if (g.d.raw is None and head is not None and head.raw is not None) else g.d
        base = g.base
        if o.base is not None and base.key is None and base.note.startswith("no base key"):
            base = _cli(float(o.base), "--base", "number")
        layers.append(replace(g, d=d, base=base))
    dtype = cfg.dtype if cfg.dtype is not None else _cli(o.dtype, "--dtype", "str")
    notes = [n for n in cfg.notes if not (o.base is not None and n.startswith("base ") and "no base key" in n)]
    return replace(cfg, head_dim=head, layers=layers, dtype=dtype, notes=notes)


def _load_table(data: Mapping, positions: Positions | None, *, path: str, fmt: str, train: int | None,
                target: int | None, tune: int | None, dia: Any) -> LoadedConfig:
    """The engine for a dialect without a ``load`` of its own: its table -> :class:`LoadedConfig`."""
    K = dia.keys
    hf = _hf()
    semantics = hf.semantics_version()
    positions = positions or {}
    inputs: list[Value] = []
    problems: list[tuple[str, Value, str]] = []
    notes: list[str] = []
    refusals: list[tuple[str, Value, str]] = []
    source = data
    ignored: list = []
    # the transformers version whose reading ropelaw reports: the followed one, unless it does not know the
    # model type (then the other, the only one that runs it). An auto_map names remote code, which AutoConfig
    # uses only for a model_type transformers does not have (for a known one its own class runs, unless the
    # user passes trust_remote_code=True)
    root_mt = data.get("model_type").strip() if isinstance(data.get("model_type"), str) else None
    auto_map = isinstance(data.get("auto_map"), Mapping)
    known = {v: bool(root_mt) and hf.known_model_type(root_mt, v) for v in hf.SEMANTICS}
    remote = auto_map and bool(root_mt) and not any(known.values())
    reading = semantics
    if dia.name == "hf" and root_mt and not remote:
        mt_pos = positions.get(("model_type",), (1, 1))
        mt_value = Value(data["model_type"], "model_type", mt_pos[0], mt_pos[1], "", "str")
        for version in hf.SEMANTICS:  # a model_type the version does not know, with no remote code to run
            if not known[version] and not auto_map:
                refusals.append((version, mt_value, f"does not know model_type {root_mt!r} (ValueError: Transformers "
                                                    f"does not recognize this architecture) and the file has no "
                                                    f"auto_map to remote code"))
        other = hf.other_version(semantics)
        if not known[semantics] and known[other]:
            reading = other
        # what that version reads (4.57.1: no rope_parameters; a flattened Llama 4; GPT-J's fixed base), and
        # what each version refuses outright
        data, ignored, refused_here = hf.runtime_view(source, reading)
        for version in hf.SEMANTICS:
            why = refused_here if version == reading else hf.runtime_view(source, version)[2]
            if why:
                refusals.append((version, mt_value, why))
    root = _Section(data, (), positions, fmt, inputs, data, problems)
    s = _pick_section(data, positions, fmt, inputs, dia, problems)
    for path_keys, why in ignored:
        line, col = positions.get(path_keys, (1, 1))
        raw = source
        for p in path_keys:
            raw = raw[p]
        problems.append(("runtime-ignores-block", Value(raw, _dotted(path_keys), line, col, "", "any"),
                         f"{_dotted(path_keys)} is ignored by transformers {semantics}: {why}"))

    # -- architecture and kind ------------------------------------------------------------
    model_type = s.raw("model_type") if isinstance(s.raw("model_type"), str) else root.raw("model_type")
    arch = model_type.strip().lower() if isinstance(model_type, str) else ""
    archs = root.raw("architectures")
    arch_names = " ".join(a for a in archs if isinstance(a, str)) if isinstance(archs, list) else ""
    if not arch and "ChatGLM" in arch_names:
        arch = "chatglm"
    if not arch and "QWenLMHeadModel" in arch_names:
        arch = "qwen"
    is_chatglm = arch == "chatglm" or "ChatGLM" in arch_names or s.has("rope_ratio")
    kind = "hf" if (arch or arch_names) else "training"
    if remote and root_mt.lower() not in hf.REMOTE_DEFAULTS:
        mt_pos = positions.get(("model_type",), (1, 1))
        problems.append(("remote-code-model", Value(root_mt, "model_type", mt_pos[0], mt_pos[1], "", "str"),
                         f"model_type {root_mt!r} runs the repository's own code (auto_map), which ropelaw has no "
                         f"reading of: its RoPE keys are read by their transformers names, not checked against "
                         f"that code"))
    defaults = dia.defaults(arch) if arch else {}
    if not defaults and s is not root and isinstance(root.raw("model_type"), str):
        defaults = dia.defaults(root.raw("model_type").strip().lower())  # LLaVA: the text model's class
    dclass = defaults.get("_class", "")
    mt_key = s.keys.get("model_type")
    dline, dcol = (positions.get(s.prefix + (mt_key,), (1, 1)) if mt_key is not None
                   else positions.get(("model_type",), (1, 1)))

    def default(name: str, note: str, expect: str = "number", at_type: bool = False) -> Value | None:
        if name not in defaults:
            return None
        line, col = (dline, dcol) if at_type else (1, 1)
        return Value(defaults[name], None, line, col, note, expect)

    # -- is this a RoPE model at all? ------------------------------------------------------
    if arch in dia.non_rope:
        raise NotARopeConfig(f"{path}: model_type {arch!r} uses {dia.non_rope[arch]}, not RoPE")
    pe = next((s.raw(k) for k in K("pos_emb") if s.has(k)), None)
    if isinstance(pe, str) and _norm(pe) not in ("rotary", "rope", "rotary_embedding"):
        raise NotARopeConfig(f"{path}: position embedding {pe!r} is not RoPE")
    if any(s.raw(k) is True for k in K("alibi")):
        raise NotARopeConfig(f"{path}: alibi is true: this model uses ALiBi, not RoPE")
    switch = next((s.keys[k] for k in _ROPE_SWITCHES if s.has(k)), None)  # OLMo-style rope: true / false
    pe_key = next((s.keys[k] for k in K("pos_emb") if s.has(k)), None)  # position_embedding_type: rope, read above
    if switch is not None and s.data[switch] is False:
        raise NotARopeConfig(f"{path}: {_dotted(s.prefix + (switch,))} is false: this model does not use RoPE")
    has_heads = any(s.has(k) for k in K("heads")) or "num_attention_heads" in defaults
    has_dims = any(s.has(k) for k in K("head_dim") + K("kv_channels") + K("rotary_dim"))
    if not (has_dims or (has_heads and (any(s.has(k) for k in K("hidden")) or "hidden_size" in defaults))
            or (has_heads and "head_dim" in defaults)):
        raise NoRopeFound(f"{path}: no RoPE settings found (need head_dim, rotary_dim, kv_channels or "
                             f"hidden_size with num_attention_heads)")

    # -- the RoPE block: rope_parameters (per layer type or flat) or rope_scaling -----------
    block = next((b for b in (s.sub(k) for k in K("rope_block")) if b is not None), None)
    from_defaults = False
    if block is None and kind == "hf" and not any(s.has(k) for k in K("rope_block")):
        # no RoPE block in the file: the config class's default one, when it is more than a base
        # (gpt-oss: YaRN x32; Gemma 3 in 5.x: one block per layer type); the file's own keys
        # (rope_theta, rope_local_base_freq) still win, as transformers' conversion lets them
        for k in ("rope_parameters", "rope_scaling"):
            if isinstance(defaults.get(k), Mapping):
                block = _DefaultSection(defaults[k], (k,), positions, fmt, inputs, data, problems,
                                        note=f"{k} absent: {dclass} default", at=(dline, dcol))
                from_defaults = True
                break
    per_type: dict[str, _Section] = {}
    if block is not None and block.data and all(isinstance(v, Mapping) or v is None for v in block.data.values()) \
            and any(isinstance(v, Mapping) for v in block.data.values()):
        for k in block.data:
            if block.data[k] is None:
                continue  # a layer type without RoPE (Beam's full_attention: null)
            per_type[_norm(k)] = block.sub(_norm(k)) or _Section(block.data[k], block.prefix + (k,), positions, fmt,
                                                                 inputs, data, problems)
        main_block = per_type.get("full_attention") or next(iter(per_type.values()))
    else:
        main_block = block
    rs_raw = s.raw("rope_scaling")
    megatron_llama3 = None
    if rs_raw is not None and rs_raw is not False and not isinstance(rs_raw, Mapping) and block is None:
        if rs_raw is True:  # Megatron-Core: --use-rope-scaling applies Llama 3.1's scaling
            megatron_llama3 = s.get("rope_scaling", expect="bool")
            notes.append("rope_scaling: true is Megatron-Core's Llama 3.1 scaling (low 1, high 4, original 8192)")
        else:
            problems.append(("invalid-value-type", s.get("rope_scaling", expect="mapping"),
                             f"rope_scaling must be a mapping or null, got {type(rs_raw).__name__} "
                             f"{show_value(rs_raw)}"))

    # -- head dim and rotary dims ----------------------------------------------------------
    heads_v = s.get(*K("heads"), expect="int") or default("num_attention_heads", f"default of {dclass}", "int")
    hidden_v = s.get(*K("hidden"), expect="int") or default("hidden_size", f"default of {dclass}", "int")
    head_v = s.get(*K("head_dim"), expect="int")
    kv_v = s.get(*K("kv_channels"), expect="int")
    if kv_v is None and kind == "hf" and "kv_channels" in defaults and not s.has("head_dim"):
        kv_v = default("kv_channels", f"kv_channels absent: {dclass} default (the head dim)", "int")  # JetMoE
    if head_v is None and kv_v is not None:  # Megatron / ChatGLM / Qwen v1: kv_channels is the head dim
        head_v = kv_v
    if head_v is None and "head_dim" in defaults and (hidden_v is None or hidden_v.key is None
                                                      or arch.startswith("gemma")):
        head_v = default("head_dim", f"default of {dclass}", "int")
    if head_v is None:
        h, n = _finite(hidden_v.raw) if hidden_v else None, _finite(heads_v.raw) if heads_v else None
        key = hidden_v or heads_v
        if h is not None and n is not None and n > 0:
            q = Fraction(h) / Fraction(n)
            note = f"{hidden_v.where} / {heads_v.where} = {fmt_count(h)} / {fmt_count(n)}"
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
            frac_v = sec.get(*K("partial"))
    if frac_v is None:
        frac_v = (default("partial_rotary_factor", f"partial_rotary_factor default of {dclass}")
                  or default("rotary_pct", f"rotary_pct default of {dclass}"))
    layer_arch = _layer_arch(arch, root.raw("model_type"), reading) if kind == "hf" and arch else None
    measured = _layers_entry(layer_arch, reading)
    if frac_v is not None and frac_v.key and measured is not None and measured.get("partial") \
            and frac_v.key.split(".")[-1] == "partial_rotary_factor":  # the key the table measured
        where = "block" if "." in frac_v.key else "top"
        ratio = measured["partial"].get(where)
        sv = main_block.get("rope_type", "type", expect="str") if main_block is not None else None
        if ratio == 1.0 and (sv is None or sv.raw == "default"):
            # measured with plain RoPE; a scaled rotary may read the factor (5.23.0 llama yarn: inv_freq of
            # the partial dims, then a crash in forward), so there the factor is read as written  # the runtime rotates the whole head whatever the factor
            problems.append(("runtime-ignores-key", frac_v,
                             f"{frac_v.key} is ignored by transformers {reading}: {layer_arch} rotates the same "
                             f"dims whatever it says (measured with 0.5 and 1.0)"))
            leaf = frac_v.key.split(".")[-1]
            frac_v = (next((v for v in (s.get(k) for k in K("partial") if k != leaf) if v is not None), None)
                      or default("rotary_pct", f"rotary_pct default of {dclass}")  # GPT-NeoX 4.x reads rotary_pct
                      or default("partial_rotary_factor", f"partial_rotary_factor default of {dclass}"))
        elif ratio is None and where in measured["partial"]:
            problems.append(("layer-semantics-unknown", frac_v,
                             f"transformers {reading} did not run {layer_arch} with {frac_v.key} written there "
                             f"(measured with 0.5 and 1.0); the rotary dims are read as written"))
    rot_v = next((v for v in (s.get(k, expect="int") for k in K("rotary_dim")) if v is not None), None)
    if rot_v is None and kind == "hf" and "qk_rope_head_dim" in defaults:  # MLA: only that part rotates
        rot_v = default("qk_rope_head_dim", f"qk_rope_head_dim absent: {dclass} default", "int")
    if rot_v is not None:
        d_v = rot_v
    else:
        hd = _finite(head_v.raw)
        fr = _finite(frac_v.raw) if frac_v is not None else 1.0
        if hd is None or fr is None:
            d_v = Value(None, None, head_v.line, head_v.column, "not derivable (see the values it comes from)", "int")
        else:
            dims, prod = _rotary_dims(hd, fr if frac_v is not None else None)
            parts = [head_v.where]
            if frac_v is not None:
                parts.append(f"{frac_v.where} {fr:g}")
            if is_chatglm:  # ChatGLM's RotaryEmbedding(rotary_dim // 2)
                dims, prod = dims // 2, prod / 2
                parts.append("ChatGLM rotates half: / 2")
            if math.isfinite(prod) and prod != int(prod):
                problems.append(("rotary-dimension-not-integer", frac_v or head_v,
                                 f"rotary dims {' x '.join(parts)} = {prod:g} is not a whole number "
                                 f"(transformers truncates to {fmt_count(dims)})"))
            if frac_v is not None and dims % 2 and arch in ODD_PARTIAL_ROUNDS_UP and not is_chatglm:
                # their RotaryEmbedding makes d/2 = ceil(dims / 2) frequencies (arange(0, dims, 2)) and their
                # apply_rotary_pos_emb slices the head by cos.shape[-1]: dims + 1 dims rotate
                if problems and problems[-1][0] == "rotary-dimension-not-integer" and problems[-1][1] is frac_v:
                    problems.pop()  # one message for the truncation and the rounding
                problems.append(("rotary-dimension-not-integer", frac_v,
                                 f"rotary dims {' x '.join(parts)} = {prod:g} -> int {fmt_count(dims)} is odd: "
                                 f"transformers' {arch} rotates {fmt_count(dims + 1)} (cos/sin of "
                                 f"2 x ceil({fmt_count(dims)} / 2) dims; the head is sliced by their size)"))
                dims += 1
                parts.append("rounded up to even as the model slices by cos")
            anchor = frac_v if (frac_v is not None and frac_v.key) else head_v
            note = " x ".join(parts) if (frac_v is not None or is_chatglm) else ""
            d_v = head_v if not note else Value(dims, None, anchor.line, anchor.column, note, "int")

    # -- base ------------------------------------------------------------------------------
    def base_from(sec: _Section | None) -> Value | None:
        return None if sec is None else sec.get(*K("block_base"))

    base_v = (s.get(*K("base")) or base_from(main_block)) if from_defaults else \
        (base_from(main_block) or s.get(*K("base")))
    attn_cfg = s.sub("attn_config") if kind == "hf" else None
    if attn_cfg is not None and attn_cfg.has("rope_theta"):
        # DBRX: 4.57.1's DbrxAttention reads config.attn_config.rope_theta; 5.23.0's DbrxConfig ignores it
        # and runs rope_parameters' rope_theta (default 10,000) (both measured by the per-layer
        # differential, tests/test_hf_layers.py)
        if reading.startswith("4."):
            base_v = base_v or attn_cfg.get("rope_theta")
        else:
            v = attn_cfg.get("rope_theta")
            problems.append(("runtime-ignores-key", v,
                             f"{v.key} is ignored by transformers {reading}: DbrxConfig runs rope_theta / "
                             f"rope_parameters (4.57.1 reads {v.key})"))
    if base_v is None and is_chatglm:
        ratio = s.get(*K("rope_ratio"))
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
    def scheme_of(sec: _Section | None) -> tuple[Value, dict, Value | None]:
        if sec is None:
            return Value("default", None, 1, 1, "no rope_scaling", "str"), {}, None
        line, col = positions.get(sec.prefix, (1, 1))
        if isinstance(sec, _DefaultSection):
            blk = Value(_plain(sec.data), None, sec.at[0], sec.at[1], f"{_dotted(sec.prefix)}: {sec.note}", "mapping")
        else:
            blk = Value(_plain(sec.data), _dotted(sec.prefix), line, col, "", "mapping")
        sv = sec.get(*K("rope_type"), expect="str")
        if sv is None:
            sv = Value("default", blk.key, blk.line, blk.column, "no rope_type", "str")
        params = {}
        for k in sec.data:
            nk = _norm(k)
            if nk in _NOT_PARAMS or nk in K("block_base") or nk in _MROPE_KEYS:
                continue
            v = sec.get(nk, expect=_PARAM_EXPECT.get(nk, "number"))
            if v is not None:
                params[nk] = v
        if any(_norm(k) in _MROPE_KEYS for k in sec.data):
            sk = next(str(k) for k in sec.data if _norm(k) in _MROPE_KEYS)
            notes.append(f"{sk}: multimodal RoPE splits the pairs over position / time / height / width; for text "
                         f"every axis has the same position, so each section rotates at the same frequencies as "
                         f"one rotary of the whole head")
        return sv, params, blk

    scheme_v, params, block_v = scheme_of(main_block)
    if megatron_llama3 is not None:
        scheme_v = Value("llama3", megatron_llama3.key, megatron_llama3.line, megatron_llama3.column,
                         "Megatron-Core rope scaling", "str")
        fv = s.get(*K("factor_flag"))
        params = {"factor": fv or Value(8.0, None, 1, 1, "Megatron-Core default"),
                  "low_freq_factor": Value(1.0, None, 1, 1, "Megatron-Core default"),
                  "high_freq_factor": Value(4.0, None, 1, 1, "Megatron-Core default"),
                  "original_max_position_embeddings": Value(8192, None, 1, 1, "Megatron-Core default", "int")}
    scheme = canonical_scheme(scheme_v.raw) if isinstance(scheme_v.raw, str) else "?"
    if kind == "hf" and dia.name == "hf" and megatron_llama3 is None and main_block is not None and not remote:
        from ..schemes import SCHEMES

        # the rope_type each transformers version runs after its config class's rewrites (mrope, su, xdrope,
        # Llama 4), and the versions that have no function for it (hf.scheme_runs_as)
        for version in hf.SEMANTICS:
            name, why, refusal = hf.scheme_runs_as(arch, main_block.data, version)
            anchor = scheme_v if scheme_v.key else block_v
            if refusal and canonical_scheme(name) in SCHEMES and known[version]:  # else RV008 / RV001 / RV021
                # (a model_type that version does not know at all)
                refusals.append((version, anchor, refusal))
            if version == reading and isinstance(name, str) and why:
                notes.append(f"transformers {reading}: {why}")
                scheme_v = Value(name, scheme_v.key, scheme_v.line, scheme_v.column, why, "str")
                scheme = canonical_scheme(name)
    alpha_v = params.get("alpha")
    if arch.startswith("hunyuan") and scheme == "dynamic" and alpha_v is not None and _finite(alpha_v.raw) \
            and _finite(base_v.raw) and _finite(d_v.raw) and d_v.raw > 2:
        # HunYuanDenseV1RotaryEmbedding: "dynamic" with an alpha is a fixed NTK-aware base
        # rope_theta * alpha^(d/(d-2)) (4.57.1: DynamicNTKAlphaRotary; 5.23.0: rope_type "ntk_alpha");
        # the other keys of the block are not read
        a, b, d = _finite(alpha_v.raw), _finite(base_v.raw), int(d_v.raw)
        base_v = Value(b * a ** (d / (d - 2)), None, alpha_v.line, alpha_v.column,
                       f"{base_v.where} {fmt_short(b)} x {alpha_v.key} {fmt_short(a)}^(d/(d-2)) "
                       f"(HunYuan's NTK alpha)")
        for name, v in params.items():
            if name != "alpha" and v.key:
                problems.append(("runtime-ignores-key", v,
                                 f"{v.key} is ignored by transformers {reading}: HunYuan runs rope_scaling "
                                 f"type dynamic with an alpha as a fixed NTK-aware base"))
        scheme_v = Value("default", scheme_v.key, scheme_v.line, scheme_v.column,
                         "HunYuan: dynamic with alpha = plain RoPE at the NTK-aware base", "str")
        scheme, params = "default", {}
        notes.append(f"HunYuan's {alpha_v.key} {fmt_short(_finite(alpha_v.raw))}: plain RoPE at base "
                     f"{fmt_short(base_v.raw)} = rope_theta x alpha^(d/(d-2))")

    # -- lengths ---------------------------------------------------------------------------
    max_v = s.get(*K("max_pos"), expect="int")
    seq_v = s.get(*K("seq_len"), expect="int")
    if max_v is None and seq_v is not None and kind == "hf":
        max_v, seq_v = seq_v, None  # ChatGLM: seq_length is the advertised context
    if max_v is None and "max_position_embeddings" in defaults:
        max_v = Value(defaults["max_position_embeddings"], None, dline, dcol,
                      f"max_position_embeddings absent: {dclass} default", "int")
    if seq_v is None and arch == "qwen" and "seq_length" in defaults:
        seq_v = default("seq_length", f"seq_length absent: {dclass} default", "int", at_type=True)
    top_orig = s.get(*K("original"), expect="int")
    if top_orig is None and "original_max_position_embeddings" in defaults:
        # Phi-3's config class always has the attribute (default 4096): transformers reads it
        top_orig = default("original_max_position_embeddings",
                           f"original_max_position_embeddings absent: {dclass} default", "int", at_type=True)
    runtime = hf.runtime_params(scheme, params, top_orig=top_orig, max_pos=max_v, semantics=reading,
                                block_key=block_v.key if block_v is not None else None,
                                block_raw=main_block.data if main_block is not None else None)
    params = runtime.params
    problems.extend(runtime.problems)
    notes.extend(runtime.notes)
    orig_v = runtime.original
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

    # Qwen v1 (remote code): use_dynamic_ntk raises the base past seq_length (scheme qwen_dynamic);
    # use_logn_attn scales the queries there (frequencies unchanged: a note)
    ntk_v = s.get(*K("use_dynamic_ntk"), expect="bool")
    if ntk_v is not None and ntk_v.raw is True and scheme == "default" and block_v is None:
        scheme_v = Value("qwen_dynamic", ntk_v.key, ntk_v.line, ntk_v.column, "use_dynamic_ntk: true (Qwen v1)", "str")
        scheme = "qwen_dynamic"
        if seq_v is not None:
            params = {**params, "original_max_position_embeddings": seq_v}
        notes.append(f"{ntk_v.key}: true: Qwen v1's remote code raises the base by alpha^(d/(d-2)), "
                     f"alpha = 2^ceil(log2(L/seq_length) + 1) - 1, once the input exceeds seq_length")
    logn_v = s.get(*K("use_logn_attn"), expect="bool")
    if logn_v is not None and logn_v.raw is True:
        notes.append(f"{logn_v.key}: true: Qwen v1 scales queries by log_seq_length(position) past seq_length "
                     f"(frequencies unchanged)")

    # -- dtype -----------------------------------------------------------------------------
    dtype_v = s.get(*K("dtype"), expect="str") or root.get(*K("dtype")[:2], expect="str")
    if dtype_v is None:
        trainer = root.sub("trainer")
        prec = (s.get(*K("precision"), expect="any") or root.get(*K("precision"), expect="any")
                or (trainer.get(*K("precision"), expect="any") if trainer is not None else None))
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

    # -- layer groups: what each layer runs, from the table measured on transformers -------
    if layer_arch is not None:
        from . import layers as layer_table

        if measured is not None or layer_table.not_covered(layer_arch, reading):
            main = RopeLayer("all layers", d_v, base_v, scheme_v, params, block_v, None)

            def own_block(t: str):
                sec = per_type.get(t)
                if sec is None:
                    return None
                sv, sp, blk = scheme_of(sec)
                sch = canonical_scheme(sv.raw) if isinstance(sv.raw, str) else "?"
                rt = hf.runtime_params(sch, sp, top_orig=top_orig, max_pos=max_v, semantics=reading,
                                       block_key=blk.key if blk is not None else None, block_raw=sec.data)
                problems.extend(rt.problems)
                return base_from(sec), sv, rt.params, blk

            def partial_of(t: str | None):  # the partial rotary factor of a layer type's block (None: main)
                if t is None:
                    return frac_v
                sec = per_type.get(t)
                return sec.get(*K("partial")) if sec is not None else None

            groups = _runtime_groups(layer_arch, s, defaults, dclass, reading, main, own_block, problems, notes,
                                     (dline, dcol), head_v, partial_of)
            problems.extend(_unread_rotary_keys(measured, layer_arch, s, inputs, reading))
            return LoadedConfig(path=path, fmt=fmt, arch=arch, kind=kind, head_dim=head_v, layers=groups,
                                max_pos=max_v, original_max=orig_v, train_len=train_v, target=target_v,
                                tune_len=tune_v, dtype=dtype_v, inputs=inputs, problems=problems, notes=notes,
                                semantics=f"transformers {semantics}", refusals=refusals,
                                considered=[_dotted(s.prefix + (k,)) for k in (switch, pe_key) if k is not None])

    # -- layer groups (model types transformers does not have): all / global + local -------
    window_v = s.get(*K("window"), expect="int")
    if any(s.raw(k) is False for k in K("use_window")):
        window_v = None
    layer_types = next((s.raw(k) for k in K("layer_types") if s.has(k)), None)
    types = {str(t) for t in layer_types} if isinstance(layer_types, list) else set()
    main = RopeLayer("all layers", d_v, base_v, scheme_v, params, block_v, None)
    layers = [main]
    local_base = None
    if "sliding_attention" in per_type:
        lb = per_type["sliding_attention"]
        local_base = base_from(lb)
        lsv, lparams, lblock = scheme_of(lb)
        lscheme = canonical_scheme(lsv.raw) if isinstance(lsv.raw, str) else "?"
        lrt = hf.runtime_params(lscheme, lparams, top_orig=top_orig, max_pos=max_v, semantics=reading,
                                block_key=lblock.key if lblock is not None else None, block_raw=lb.data)
        lparams = lrt.params
    else:
        lsv, lparams, lblock = Value("default", None, 1, 1, "local layers: plain RoPE", "str"), {}, None
    lbf = s.get(*K("local_base"))
    if lbf is None and arch == "gemma3_text" and "rope_local_base_freq" in defaults:
        lbf = default("rope_local_base_freq", f"absent: {dclass} default")
    local_base = local_base or lbf
    alternating = arch in ("gemma2", "gemma3_text", "gemma3") or bool(per_type) or \
        ("sliding_attention" in types and "full_attention" in types) or local_base is not None
    if window_v is None and alternating and "sliding_window" in defaults:
        window_v = default("sliding_window", f"absent: {dclass} default", "int")
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
                        tune_len=tune_v, dtype=dtype_v, inputs=inputs, problems=problems, notes=notes,
                        semantics=f"transformers {semantics}", refusals=refusals,
                        considered=[_dotted(s.prefix + (k,)) for k in (switch, pe_key) if k is not None])


# -----------------------------------------------------------------------------------------
# layer groups from the per-layer table (ropelaw/lint/layers/)
# -----------------------------------------------------------------------------------------
def _proportional_group(grp: RopeLayer, e: dict, s: "_Section", idx: tuple, kinds: tuple, head_v: Value | None,
                        defaults: dict, dclass: str, at: tuple[int, int], frac_v: Value | None) -> RopeLayer:
    """Proportional RoPE (Gemma 4): the exponent runs over the layers' head dim D (their own, e.g.
    ``global_head_dim``, measured per layer kind in the table; a file's ``per_layer_config`` first) and
    d = 2 * int(p * D // 2) dims rotate (transformers 5.23.0 ``_compute_proportional_rope_parameters``)."""
    from dataclasses import replace

    hd_v = None
    plc = s.raw("per_layer_config")
    if isinstance(plc, Mapping):
        entry = plc.get(str(idx[0])) if isinstance(plc.get(str(idx[0])), Mapping) else None
        if entry is not None and isinstance(entry.get("head_dim"), int):
            line, col = s.positions.get(s.prefix + ("per_layer_config",), (1, 1))
            hd_v = Value(entry["head_dim"], f"per_layer_config.{idx[0]}.head_dim", line, col, "", "int")
    spec = next((e.get("head_dims", {}).get(k) for k in kinds if k in e.get("head_dims", {})), None)
    if hd_v is None and spec is not None:
        if spec.get("key"):
            hd_v = s.get(spec["key"], expect="int")
        if hd_v is None:
            hd_v = Value(spec["default"], None, at[0], at[1],
                         f"{spec.get('key') or 'head dim'} of {', '.join(kinds)} layers absent: {dclass} default", "int")
    hd_v = hd_v or head_v
    D = _finite(hd_v.raw) if hd_v is not None else None
    p = _finite(frac_v.raw) if frac_v is not None else 1.0
    if D is None or p is None:
        return grp
    dims = 2 * int(p * D // 2)
    note = f"proportional RoPE: 2 x int({p:g} x {fmt_count(D)} // 2) of the {fmt_count(D)}-dim head [{hd_v.where}]"
    d_v = Value(dims, None, hd_v.line, hd_v.column, note, "int")
    params = dict(grp.params)
    params["head_dim"] = Value(int(D), hd_v.key, hd_v.line, hd_v.column, hd_v.note, "int")
    return replace(grp, d=d_v, params=params,
                   pretrained_with_scheme=Value(True, None, grp.scheme.line, grp.scheme.column,
                                                "proportional RoPE: the model is built with it", "bool"))


def _layer_arch(arch: str, root_type: Any, semantics: str) -> str:
    """The model_type whose per-layer entry describes ``arch``: itself, or its text model's
    (``llama4`` -> ``llama4_text``), also when only the file's top level names the composite type."""
    from . import layers as layer_table

    if layer_table.entry(arch, semantics) is not None:
        return arch
    return (layer_table.text_type(arch, semantics)
            or (layer_table.text_type(root_type, semantics) if isinstance(root_type, str) else None) or arch)


def _unread_rotary_keys(measured: dict | None, arch: str, s: "_Section", inputs: list, semantics: str) -> list:
    """RV025 for each key of the file that changes ``arch``'s rotary when transformers runs it
    (``rotary_keys`` of the table, measured) and that the reading above did not use."""
    if not measured:
        return []
    read = {v.key for v in inputs if v.key}
    out = []
    for name in measured.get("rotary_keys", ()):
        leaf = name.split(".")[-1]
        for path in ((leaf,), ("rope_parameters", leaf), ("rope_scaling", leaf)):
            node, full = s.data, s.prefix
            for part in path:
                k = next((x for x in node if _norm(x) == part), None) if isinstance(node, Mapping) else None
                if k is None:
                    node = None
                    break
                node, full = node[k], full + (k,)
            if node is None or _dotted(full) in read:
                continue
            line, col = s.positions.get(full, (1, 1))
            v = Value(_plain(node), _dotted(full), line, col, "", "any")
            out.append(("unmodelled-rotary-key", v,
                        f"{v.key} changes the rotary of {arch} in transformers {semantics} (measured: changing it "
                        f"alone changes some layer's frequencies, rotated dims, NoPE or span) and ropelaw does not "
                        f"read it: the analysis leaves it out"))
    return out


def _layers_entry(layer_arch: str | None, semantics: str) -> dict | None:
    from . import layers as layer_table

    return layer_table.entry(layer_arch, semantics) if layer_arch else None


_SPAN_LABEL = {"full": "global", "window": "local", "chunk": "chunked"}


def _runtime_groups(arch: str, s: "_Section", defaults: dict, dclass: str, semantics: str, main: RopeLayer,
                    own_block, problems: list, notes: list, at: tuple[int, int], head_v: Value | None = None,
                    partial_of=None) -> list:
    """The layer groups of a Hugging Face config as transformers ``semantics`` runs them: each layer's
    role from :func:`ropelaw.lint.layers.plan` (measured on the runtime), layers with the same rotary and
    span grouped. A config the table cannot answer for gets RV024 and one group of every layer with the
    main rotary and full attention (said in the finding)."""
    from dataclasses import replace

    from . import layers as layer_table

    e = layer_table.entry(arch, semantics)
    n_key = e["layers_key"] if e else "num_hidden_layers"
    n_v = s.get(n_key, expect="int")
    if n_v is None and defaults.get("num_hidden_layers") is not None:
        n_v = Value(defaults["num_hidden_layers"], None, at[0], at[1], f"{n_key} absent: {dclass} default", "int")

    def get(key: str):
        if key in ("sliding_window", "attention_chunk_size"):
            return s.get(key, expect="int")
        return s.get(key, expect="layers" if e and any(e.get(f) and e[f]["key"] == key
                                                        for f in ("kinds", "nope", "bases")) else "any")

    def default(key: str):  # the class's default, unless the file writes the key (null included)
        return None if key in s.keys else defaults.get(key)

    n = n_v.raw if n_v is not None else None
    plan = layer_table.plan(arch, n, get, default, semantics)
    if plan.problem is not None or not plan.roles:
        anchor = next((v for v, _ in plan.sources.values() if v is not None), None) or n_v or main.base
        problems.append(("layer-semantics-unknown", anchor,
                         f"per-layer semantics unknown: {plan.problem or 'no layers'}; every layer is analysed as "
                         f"running the main rotary over the full context"))
        idx = tuple(range(n)) if isinstance(n, int) and not isinstance(n, bool) and 0 < n <= 1 << 20 else None
        return [replace(main, indices=idx)]
    for name, (v, how) in plan.sources.items():
        if how and v is None or (v is not None and how and how != v.key):
            notes.append(f"{'layer kinds' if name == 'kinds' else 'NoPE layers'}: {how}")
    window_v = s.get("sliding_window", expect="int")
    if window_v is None and default("sliding_window") is not None:
        window_v = Value(defaults["sliding_window"], None, at[0], at[1], f"sliding_window absent: {dclass} default",
                         "int")
    chunk_v = s.get("attention_chunk_size", expect="int")
    if chunk_v is None and default("attention_chunk_size") is not None:
        chunk_v = Value(defaults["attention_chunk_size"], None, at[0], at[1],
                        f"attention_chunk_size absent: {dclass} default", "int")
    bases = e.get("bases")
    base_list = s.get(bases["key"], expect="layers") if bases else None
    tf = f"transformers {semantics}"

    def span_value(v: Value | None, offset: int | None, what: str) -> Value | None:
        if v is None or not isinstance(v.raw, int) or isinstance(v.raw, bool):
            return v
        off = offset or 0
        if not off:
            return v
        note = (f"{what}: {tf} attends {'the last ' if what == 'window' else ''}{fmt_count(v.raw + off)} keys "
                f"({v.key or 'the default'} {'+' if off > 0 else '-'} {abs(off)})")
        return Value(v.raw + off, v.key, v.line, v.column, note if not v.note else f"{v.note}; {note}", "int")

    def label_of(kinds: tuple, idx: tuple) -> str:
        return (f"{', '.join(kinds)} layers" if kinds else "layers") + f" ({fmt_count(len(idx))})"

    groups: dict[tuple, dict] = {}
    for i, role in enumerate(plan.roles):
        if not role.attention:
            key = ("no attention",)
        elif role.rotary == "none":
            key = ("none", role.span, role.offset)
        else:
            rot = role.rotary
            if rot == "main" and base_list is not None and isinstance(base_list.raw, list) \
                    and i < len(base_list.raw):
                b = base_list.raw[i]
                rot = "nope" if b == 0 else f"base:{b!r}"
            key = ("rope", rot, role.span, role.offset) if rot != "nope" else ("none", role.span, role.offset)
        g = groups.setdefault(key, {"indices": [], "kinds": []})
        g["indices"].append(i)
        if role.kind and role.kind not in g["kinds"]:
            g["kinds"].append(role.kind)
    out: list[RopeLayer] = []
    for key, g in groups.items():
        idx, kinds = tuple(g["indices"]), tuple(g["kinds"])
        if key[0] == "no attention":
            out.append(replace(main, label=_group_label("without attention", idx), rope=False, attention=False,
                               indices=idx,
                               kinds=kinds))
            continue
        span, offset = key[-2], key[-1]
        window = span_value(window_v, offset, "window") if span == "window" else None
        chunk = span_value(chunk_v, offset, "chunk") if span == "chunk" else None
        if key[0] == "none":
            label = _group_label("NoPE" + _span_words(span, chunk), idx)
            out.append(replace(main, label=label, rope=False, window=window, chunk=chunk, indices=idx, kinds=kinds))
            continue
        rot = key[1]
        grp = replace(main, label=_group_label(_SPAN_LABEL[span] + _span_words(span, chunk, local=False), idx),
                      window=window, chunk=chunk, indices=idx, kinds=kinds)
        if rot.startswith("own:"):
            t = rot[4:]
            found = own_block(t)
            if found is not None:
                b, sv, sp, blk = found
                grp = replace(grp, base=b or main.base, scheme=sv, params=sp, block=blk)
                fv = partial_of(t) if partial_of else None
                hd = _finite(head_v.raw) if head_v is not None else None
                if hd is not None and (fv is None or _finite(fv.raw) is not None):
                    dims, _ = _rotary_dims(hd, _finite(fv.raw) if fv is not None else None)
                    if dims != _finite(grp.d.raw):  # its own block's partial factor, not the main one's
                        grp = replace(grp, d=Value(dims, None, (fv or head_v).line, (fv or head_v).column,
                                                   f"{head_v.where}" + (f" x {fv.where}" if fv is not None else
                                                                        f" (rope_parameters[{t!r}] has no "
                                                                        f"partial_rotary_factor)"), "int"))
            else:
                lb = s.get("rope_local_base_freq") if t == "sliding_attention" else None
                dflt = defaults.get("rope_local_base_freq") if t == "sliding_attention" else None
                if lb is None and dflt is not None:
                    lb = Value(dflt, None, at[0], at[1], f"{t} layers' base absent: {dclass} default")
                if lb is None:
                    problems.append(("layer-semantics-unknown", main.base,
                                     f"{', '.join(kinds) or t} layers run their own rotary "
                                     f"(rope_parameters[{t!r}] in {tf}) and the config gives none: analysed with "
                                     f"the main rotary"))
                else:
                    grp = replace(grp, base=lb, scheme=Value("default", None, 1, 1, f"{t} layers: plain RoPE", "str"),
                                  params={}, block=None)
        elif rot.startswith("key:"):
            k = rot[4:]
            lb = s.get(k)
            if lb is None and defaults.get(k) is not None:
                lb = Value(defaults[k], None, at[0], at[1], f"{k} absent: {dclass} default")
            grp = replace(grp, base=lb or main.base, params={}, block=None,
                          scheme=Value("default", None, 1, 1, f"{', '.join(kinds)} layers: plain RoPE at {k}", "str"))
        elif rot == "main-plain":  # the main base without the main scaling (measured: Nemotron in 4.57.1)
            grp = replace(grp, params={}, block=None,
                          scheme=Value("default", None, main.scheme.line, main.scheme.column,
                                       f"{', '.join(kinds) or 'these'} layers run the main base without its scaling "
                                       f"in {tf} (measured)", "str"))
            if main.block is not None and isinstance(main.scheme.raw, str) \
                    and canonical_scheme(main.scheme.raw) != "default" and main.block.key:
                problems.append(("runtime-ignores-key", main.block,
                                 f"{main.block.key} is ignored by {tf} for {arch}'s "
                                 f"{label_of(kinds, idx)}: they run plain RoPE at the main base (measured)"))
        elif rot.startswith("base:"):
            j = idx[0]
            grp = replace(grp, base=Value(base_list.raw[j], f"{base_list.key}[{j}]", base_list.line, base_list.column,
                                          "the base of these layers", "number"))
        elif rot != "main":
            problems.append(("layer-semantics-unknown", main.base,
                             f"layers {', '.join(map(str, idx[:6]))}: the table's rotary {rot!r} is not one "
                             f"ropelaw reads; analysed with the main rotary"))
        if isinstance(grp.scheme.raw, str) and canonical_scheme(grp.scheme.raw) == "proportional":
            grp = _proportional_group(grp, e, s, idx, kinds, head_v, defaults, dclass, at,
                                      partial_of(rot[4:] if rot.startswith("own:") else None) if partial_of else None)
        out.append(grp)
    # the main group first (layers[0] is what single-group readers use): the main rotary over the
    # full context, else the main rotary, else any rotary
    def rank(g: RopeLayer) -> tuple:
        is_main = g.rope and g.base is main.base and g.scheme is main.scheme
        return (not g.rope, not is_main, g.window is not None or g.chunk is not None, g.indices[0] if g.indices else 0)

    out.sort(key=rank)
    if len(out) == 1:
        out = [replace(out[0], label="all layers")]
    labels = [g.label for g in out]
    for j, g in enumerate(out):
        if labels.count(g.label) > 1:  # two groups alike but for their rotary: name their kinds
            head, _, tail = g.label.rpartition(" (")
            out[j] = replace(g, label=f"{head} {'/'.join(g.kinds) or 'from layer ' + str(g.indices[0])} ({tail}")
    return out


def _group_label(role: str, idx: tuple) -> str:
    """``global (24 layers)``, ``chunked 8,192 (36 layers)``, ``NoPE (12 layers)``."""
    return f"{role} ({fmt_count(len(idx))} layer{'s' if len(idx) != 1 else ''})"


def _span_words(span: str, chunk: "Value | None", local: bool = True) -> str:
    """What a group's span adds to its label: the chunk's size for chunked layers (``local``: the span's
    own word too, for NoPE groups)."""
    if span == "chunk":
        size = chunk.raw if chunk is not None and isinstance(chunk.raw, int) else None
        return (" chunked" if local else "") + (f" {fmt_count(size)}" if size is not None else "")
    return " local" if local and span == "window" else ""
