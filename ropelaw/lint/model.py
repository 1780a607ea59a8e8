"""The types every part of the linter shares: a value with where it came from (:class:`Value`), a
group of layers sharing a RoPE setup (:class:`RopeLayer`), a config as loaded (:class:`LoadedConfig`),
the command line's overrides (:class:`Overrides`), and the ways a file can fail to be a RoPE config.
The engine (:mod:`ropelaw.lint.loader`), the dialects and the rules import them from here, so no
dialect imports the engine that imports it.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any, NamedTuple
from collections.abc import Mapping

from ..errors import UsageError
from ..findings import Rule
from ..numfmt import COMPACT_FROM, count as fmt_count
from ..spec import RopeSpec


class NotARopeConfig(UsageError):
    """The file parsed but holds no RoPE setting (or the model uses other positions)."""


class NoRopeFound(NotARopeConfig):
    """The dialect found nothing it can read (no head dims, an unknown preset). A skip only when the
    file has no RoPE-looking key; otherwise :func:`load_mapping` makes it :class:`UnreadConfig` (RV030)."""


class UnreadConfig(NotARopeConfig):
    """A file lint reports as one finding instead of skipping it: ``code`` RV030 (RoPE settings that no
    dialect reads) or RV031 (the config names its model elsewhere and that model was not given);
    ``line`` / ``column`` of the key concerned (``ropelaw/lint/rules/reading.py``)."""

    def __init__(self, message: str, code: str = "RV030", line: int = 1, column: int = 1, notes: tuple = ()):
        super().__init__(message)
        self.code, self.line, self.column = code, line, column
        self.notes = tuple(notes)  # what the finding says beside its message (Finding.notes)


class ModelNeeded(UnreadConfig):
    """RV031: the config names its model elsewhere (``base_model``, ``model_name_or_path``,
    ``checkpoint_dir`` ...) and neither a local directory, ``--model-config`` nor a preset gives it."""

    def __init__(self, message: str, line: int = 1, column: int = 1, fix: str | None = None, notes: tuple = ()):
        super().__init__(message, "RV031", line, column, notes)
        self.fix = fix  # the command that would give the model's config (None: the rule's documented fix)


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
        return finite(self.raw)


def finite(x: Any) -> float | None:
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
    # True (with attention False): cross-attention layers, whose keys are other states (Mllama's image states),
    # not the sequence's tokens: no rotary, no position of the sequence in their attention
    cross_attention: bool = False
    # True: the layers attend both ways, later keys too (Gemma 3's use_bidirectional_attention: a window is then
    # |m - n| < window, full attention every key): the largest |m - n| is that of the causal span (window - 1,
    # target - 1), so the bounds are unchanged
    bidirectional: bool = False
    indices: tuple | None = None  # the decoder layers (0-based) of the group, None: not known (all)
    kinds: tuple = ()  # the layer kinds of the group as the config names them (layer_types values)
    # the written base is the analysed one ** written_power: 1, or r / (r + 1) for an odd rotary count r read as
    # r + 1 dims at the effective base base^((r + 1) / r) (lint/table.py odd_dims)
    written_power: float = 1.0


class Problem(NamedTuple):
    """Something a loader noticed while deriving the settings, reported by ``rule`` at ``value``
    (``rules/values.py`` check, step 2; ``rules/runtime.py`` for the rules in its ``PROBLEMS``).
    The rule is the object its module declares, never a name looked up later."""

    rule: Rule
    value: Any  # the Value the finding points at
    message: str
    fix: str | None = None  # this occurrence's fix; None: the first line of the rule's documented fix
    severity: str | None = None  # this occurrence's severity where it differs from the rule's
    notes: tuple = ()  # said beside the message (Finding.notes): a measurement's detail


def as_problem(p: Any) -> Problem:
    """``p`` as a :class:`Problem`. Code written before problems carried their rule may still give a
    ``(rule name, value, message)`` tuple: the name must be a rule's kebab-case name, else ``KeyError`` (an
    internal error, exit 3), never the silent RV001 it was; tests/test_rule_protocol.py lists such code."""
    if isinstance(p, Problem):
        return p
    from ..findings import all_rules

    name, value, message = p
    rule = next((r for r in all_rules() if r.name == name), None)
    if rule is None:
        raise KeyError(f"loader problem {name!r}: no rule has this name")
    return Problem(rule, value, message)


@dataclass
class QueryScale:
    """A position-dependent query scale the runtime applies, ``1 + beta ln(1 + floor((p + shift) / length))`` at
    position p (rules/layers.py, RL106). Ministral 3 (5.23.0 get_llama_4_attn_scale): every layer, p the position
    id, shift 0, the floor of integers. Llama 4 (modeling_llama4.py, both versions): the NoPE layers only, p the
    cache position (tokens before it in the KV cache), shift 1, ``floor((p + 1.0) / floor_scale)`` in float32."""

    beta: Value
    length: Value | None  # None: the file gives no usable length (the scale is then not computed)
    shift: int = 0
    nope_only: bool = False  # True: only the layers without RoPE (Llama 4)
    float32: bool = False  # the runtime computes (p + shift) / length in float32 (Llama 4)
    switch: Value | None = None  # the key that turns it on (Llama 4's attn_temperature_tuning)


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
    problems: list = field(default_factory=list)  # list[Problem] noticed while deriving
    notes: list = field(default_factory=list)  # human-readable assumptions made
    semantics: str | None = None  # whose behaviour the numbers follow, e.g. "transformers 5.23.0"
    # dotted keys the dialect looked at and judged (a switch, a key of another model's path): not "unread"
    considered: list = field(default_factory=list)
    unread: list = field(default_factory=list)  # Values at RoPE-looking keys no reader used (RV030; unread.py)
    # (transformers version, Value, why it refuses the config): RV021 for the followed version, RV022 else
    refusals: list = field(default_factory=list)
    # a model named elsewhere (axolotl base_model ...): where its config came from (lint/resolve.py ModelConfig)
    model: Any = None
    # a serving launch (vLLM, SGLang): the runtime and version it is read as, e.g. "vLLM 0.32.0 (current)"
    served_by: str | None = None
    # a QueryScale: the runtime scales queries at position p by 1 + beta ln(1 + floor((p + shift) / length))
    # (Ministral 3's rope_parameters.llama_4_scaling_beta, Llama 4's attn_temperature_tuning; rules/layers.py)
    query_scale: Any = None

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
            raise UsageError(f"unusable value(s): {', '.join(bad)}")
        scheme = canonical_scheme(g.scheme.raw)
        info = SCHEMES.get(scheme)
        if info is None:
            raise UsageError(f"unknown scheme {g.scheme.raw!r}")
        allowed = set(info.required) | set(info.optional)
        params = {}
        for name, v in g.params.items():
            if name in allowed:
                params[name] = plain(v.raw)
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


def plain(x: Any) -> Any:
    if isinstance(x, Mapping):
        return {k: plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [plain(v) for v in x]
    return x


# The one table of a config's spellings of rope_type for a registry scheme (canonical_scheme: every dialect reads
# a scheme's name through it). The registry's own aliases (schemes/frequencies.py: "pi", "ntk-aware", "su" ...)
# are the names --scheme takes; a rope_type only they know ("pi") is analysed as that scheme, and transformers'
# refusal of it is RV021.
SCHEME_ALIASES = {"su": "longrope", "none": "default", "rope": "default", "": "default", "mrope": "default"}


def canonical_scheme(raw: Any) -> str:
    """Registry name for a config's ``rope_type``; unknown strings pass through (RV008 reports them)."""
    if raw is None:
        return "default"
    name = str(raw).strip().lower()
    return SCHEME_ALIASES.get(name, name)


# linear-time: `\d[\d_]*(?:\.\d*)?` matches what `\d[\d_]*\.?\d*` did without its two adjacent
# digit loops (which backtracked quadratically: 22 s on 20,000 digits followed by a letter)
NUMERIC_STR = re.compile(r"^\s*[-+]?(?:\d[\d_]*(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?\s*$")


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
