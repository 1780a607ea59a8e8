"""The table engine: a dialect without a ``load`` of its own (Hugging Face ``config.json`` and the
files that use its key names) read from its key table into a :class:`~ropelaw.lint.model.LoadedConfig`,
with the semantics of the transformers version ropelaw follows (see :mod:`ropelaw.lint.loader`).

The engine holds no model name: each model's special case (ChatGLM's ``rope_ratio``, DBRX's ``attn_config``,
Gemma's head_dim, Megatron's ``rope_scaling: true``, HunYuan's alpha, Qwen v1's flags, ...) is a data row of
:mod:`ropelaw.lint.table_rows`, with the source that says so; the engine asks for a row by its effect.
"""

from __future__ import annotations

import math
from dataclasses import replace
from fractions import Fraction
from typing import Any
from collections.abc import Callable, Mapping

from ..numfmt import count as fmt_count, short as fmt_short
from .layer_groups import layer_arch, layers_entry, rotary_dims, runtime_groups, unread_rotary_keys
from .model import (LoadedConfig, NoRopeFound, NotARopeConfig, OptionError, QueryScale, RopeLayer, Value, finite,
                    plain, canonical_scheme, show_value)
from .dialects import hf_keys
from .parse import Positions
from .sections import (MROPE_KEYS, NOT_PARAMS, PARAM_EXPECT, ROPE_SWITCHES, cli_value, DefaultSection, dotted, norm_key,
                       pick_section, Section)
from .model import Problem, as_problem
from .rules.layers import LAYER_SEMANTICS_UNKNOWN
from .rules.value_rules import IGNORED_KEY, INVALID_TYPE, NOT_INTEGER, ODD_DIM
from .table_rows import row, rows


# -----------------------------------------------------------------------------------------
# the engine: a dialect's table -> LoadedConfig (the tables live in ropelaw/lint/dialects/)
# -----------------------------------------------------------------------------------------
ROPE_DEFAULT_BASE = 10000.0  # RoFormer (arXiv 2104.09864, eq. 15) and every framework's default


def _hf():
    from .dialects import hf

    return hf


def _text_types(data: Mapping, positions: Positions, root_mt: str | None, known: dict) -> tuple[dict, dict, Any]:
    """``({version: the type its composite class builds the text_config as}, {version: why it cannot}, the
    text_config's model_type Value)`` for each version that has ``root_mt`` (:func:`hf.text_type`)."""
    hf = _hf()
    found = hf.text_section(data)
    if found is None or not root_mt:
        return {}, {}, None
    key, sec = found
    written = sec.get("model_type")
    line, col = positions.get((key, "model_type"), positions.get((key,), (1, 1)))
    value = Value(written, f"{key}.model_type" if "model_type" in sec else key, line, col, "", "str")
    types, why = {}, {}
    for version in hf.SEMANTICS:
        if known[version]:
            types[version], refusal = hf.text_type(root_mt, written, version)
            if refusal:
                why[version] = refusal
    return types, why, value


def load_table(data: Mapping, positions: Positions | None, *, path: str, fmt: str, train: int | None,
               target: int | None, tune: int | None, dia: Any, semantics: str | None = None) -> LoadedConfig:
    """The engine for a dialect without a ``load`` of its own: its table -> :class:`LoadedConfig`
    (``semantics``: the transformers version to follow, default ``hf.semantics_version()``)."""
    return _TableLoad(data, positions, path=path, fmt=fmt, dia=dia, semantics=semantics).load(train, target, tune)


class _TableLoad:
    """One run of the engine over one config: each step reads what the steps before it found (attributes)."""

    def __init__(self, data: Mapping, positions: Positions | None, *, path: str, fmt: str, dia: Any,
                 semantics: str | None):
        self.hf = _hf()
        self.K: Callable[[str], tuple[str, ...]] = dia.keys
        self.dia, self.path, self.fmt = dia, path, fmt
        self.semantics: str = semantics or self.hf.semantics_version()
        self.positions: Positions = positions or {}
        self.inputs: list[Value] = []
        self.problems: list = []
        self.notes: list[str] = []
        self.refusals: list[tuple[str, Value | None, str]] = []
        self.source = data
        self.data = data
        self.ignored: list = []
        self.query_scale: QueryScale | None = None
        self.odd: tuple[Any, int] | None = None  # (odd_dims_round_up row, the odd rotary dims) when rounded up

    def load(self, train: int | None, target: int | None, tune: int | None) -> LoadedConfig:
        self.versions()
        self.architecture()
        self.check_rope()
        self.rope_block()
        self.head_dim()
        self.partial()
        self.rotary_dims()
        self.base()
        self.scheme()
        self.mrope_sections()
        self.lengths(train, target, tune)
        self.flags()
        self.dtype()
        if self.layer_arch is not None:
            measured = self.measured_layers(self.layer_arch)
            if measured is not None:
                return measured
        return self.result(self.window_layers())

    def result(self, layers: list[RopeLayer]) -> LoadedConfig:
        layers = [self.odd_dims(g) for g in layers]
        return LoadedConfig(path=self.path, fmt=self.fmt, arch=self.arch, kind=self.kind, head_dim=self.head_v,
                            layers=layers, max_pos=self.max_v, original_max=self.orig_v, train_len=self.train_v,
                            target=self.target_v, tune_len=self.tune_v, dtype=self.dtype_v, inputs=self.inputs,
                            problems=self.problems, notes=self.notes, semantics=f"transformers {self.semantics}",
                            refusals=self.refusals, query_scale=self.query_scale,
                            considered=[dotted(self.s.prefix + (k,)) for k in (self.switch, self.pe_key)
                                        if k is not None])

    def default(self, name: str, note: str, expect: str = "number", at_type: bool = False) -> Value | None:
        """The config class's default of ``name`` (None: it has none); at model_type's position with ``at_type``."""
        if name not in self.defaults:
            return None
        line, col = (self.dline, self.dcol) if at_type else (1, 1)
        return Value(self.defaults[name], None, line, col, note, expect)

    # -- versions: which transformers version's reading is reported, what each refuses ---------
    def versions(self) -> None:
        """The transformers version whose reading ropelaw reports: the followed one, unless it does not know the
        model type (then the other, the only one that runs it). An auto_map names remote code, which AutoConfig
        uses only for a model_type transformers does not have (for a known one its own class runs, unless the
        user passes trust_remote_code=True). Then the section the settings are read from."""
        hf, data, positions = self.hf, self.data, self.positions
        model_type = data.get("model_type")
        self.root_mt: str | None = model_type.strip() if isinstance(model_type, str) else None
        self.auto_map = isinstance(data.get("auto_map"), Mapping)
        self.known = {v: bool(self.root_mt) and hf.known_model_type(self.root_mt, v) for v in hf.SEMANTICS}
        self.remote = self.auto_map and bool(self.root_mt) and not any(self.known.values())
        self.reading: str = self.semantics
        self.text_types, text_why, text_value = (_text_types(data, positions, self.root_mt, self.known)
                                                 if self.dia.name == "hf" else ({}, {}, None))
        self.refusals.extend((v, text_value, why) for v, why in text_why.items())
        if self.dia.name == "hf" and self.root_mt and not self.remote:
            self.runtime_view(self.root_mt, text_why)
        data = self.data
        self.root = Section(data, (), positions, self.fmt, self.inputs, data, self.problems)
        self.s = pick_section(data, positions, self.fmt, self.inputs, self.dia, self.problems)
        for path_keys, why in self.ignored:
            line, col = positions.get(path_keys, (1, 1))
            raw = self.source
            for p in path_keys:
                raw = raw[p]
            self.problems.append(Problem(IGNORED_KEY, Value(raw, dotted(path_keys), line, col, "", "any"),
                                         f"{dotted(path_keys)} is ignored by transformers {self.semantics}: {why}",
                                         severity="warning"))  # a whole block or text model unread

    def runtime_view(self, root_mt: str, text_why: dict) -> None:
        """The version read, what it reads (4.57.1: no rope_parameters; a flattened Llama 4; GPT-J's fixed base),
        and what each version refuses outright."""
        hf, semantics, known = self.hf, self.semantics, self.known
        mt_pos = self.positions.get(("model_type",), (1, 1))
        mt_value = Value(self.data["model_type"], "model_type", mt_pos[0], mt_pos[1], "", "str")
        for version in hf.SEMANTICS:  # a model_type the version does not know, with no remote code to run
            if not known[version] and not self.auto_map:
                self.refusals.append((version, mt_value, f"does not know model_type {root_mt!r} (ValueError: "
                                                         f"Transformers does not recognize this architecture) and "
                                                         f"the file has no auto_map to remote code"))
        other = hf.other_version(semantics)
        if (not known[semantics] and known[other]) or (semantics in text_why and self.text_types.get(other)):
            self.reading = other  # the only version that builds it (its model_type, or its text_config's)
        self.data, self.ignored, refused_here = hf.runtime_view(self.source, self.reading)
        for version in hf.SEMANTICS:
            why = refused_here if version == self.reading else hf.runtime_view(self.source, version)[2]
            if why:
                self.refusals.append((version, mt_value, why))
        default_text = None if refused_here else hf.default_text_model(self.source, self.reading)
        if default_text:  # a composite without text_config: the class's default text model runs
            self.problems.append(Problem(IGNORED_KEY, mt_value, default_text, severity="warning"))

    # -- architecture and kind ------------------------------------------------------------
    def architecture(self) -> None:
        """The model type (else the one its ``architectures`` name: a table row), the kind, the remote-code
        finding and the config class's defaults."""
        s, root, reading = self.s, self.root, self.reading
        model_type = s.raw("model_type") if isinstance(s.raw("model_type"), str) else root.raw("model_type")
        arch = model_type.strip().lower() if isinstance(model_type, str) else ""
        if s is not root and self.text_types.get(reading) and self.text_types[reading] != arch:
            self.notes.append(f"{dotted(s.prefix)}.model_type {s.raw('model_type')!r}: transformers {reading} "
                              f"builds it as {self.text_types[reading]!r} ({self.root_mt}'s config class)")
            arch = self.text_types[reading]
        archs = root.raw("architectures")
        arch_names = " ".join(a for a in archs if isinstance(a, str)) if isinstance(archs, list) else ""
        named = None if arch else row("type_from_architectures", arch, arch_names)
        if named is not None:
            arch = named.values["model_type"]
        self.arch, self.arch_names = arch, arch_names
        self.rotates_half = row("rotates_half", arch, arch_names, s)
        self.kind = "hf" if (arch or arch_names) else "training"
        self.remote_why = (self.hf.remote_code(self.root_mt, self.auto_map, self.known, self.semantics)
                           if self.dia.name == "hf" else None)
        if self.remote_why is not None:
            mt_pos = self.positions.get(("model_type",), (1, 1))
            from .rules.runtime import REMOTE  # rules/runtime.py imports the hf dialect, which imports this module

            self.problems.append(Problem(REMOTE, Value(self.root_mt, "model_type", mt_pos[0], mt_pos[1], "", "str"),
                                         self.remote_why))
        defaults = self.dia.defaults(arch) if arch else {}
        root_type = root.raw("model_type")
        if not defaults and s is not root and isinstance(root_type, str):
            defaults = self.dia.defaults(root_type.strip().lower())  # LLaVA: the text model's class
        self.defaults: dict = defaults
        self.dclass: str = defaults.get("_class", "")
        mt_key = s.keys.get("model_type")
        self.dline, self.dcol = (self.positions.get(s.prefix + (mt_key,), (1, 1)) if mt_key is not None
                                 else self.positions.get(("model_type",), (1, 1)))

    # -- is this a RoPE model at all? ------------------------------------------------------
    def check_rope(self) -> None:
        """Raise NotARopeConfig / NoRopeFound for a config without RoPE or without its settings."""
        s, K, path, defaults = self.s, self.K, self.path, self.defaults
        if self.arch in self.dia.non_rope:
            raise NotARopeConfig(f"{path}: model_type {self.arch!r} uses {self.dia.non_rope[self.arch]}, not RoPE")
        pe = next((s.raw(k) for k in K("pos_emb") if s.has(k)), None)
        if isinstance(pe, str) and norm_key(pe) not in ("rotary", "rope", "rotary_embedding"):
            raise NotARopeConfig(f"{path}: position embedding {pe!r} is not RoPE")
        if any(s.raw(k) is True for k in K("alibi")):
            raise NotARopeConfig(f"{path}: alibi is true: this model uses ALiBi, not RoPE")
        self.switch = next((s.keys[k] for k in ROPE_SWITCHES if s.has(k)), None)  # OLMo-style rope: true / false
        self.pe_key = next((s.keys[k] for k in K("pos_emb") if s.has(k)), None)  # position_embedding_type: rope
        if self.switch is not None and s.data[self.switch] is False:
            raise NotARopeConfig(f"{path}: {dotted(s.prefix + (self.switch,))} is false: this model does not use "
                                 f"RoPE")
        has_heads = any(s.has(k) for k in K("heads")) or "num_attention_heads" in defaults
        has_dims = any(s.has(k) for k in K("head_dim") + K("kv_channels") + K("rotary_dim"))
        if not (has_dims or (has_heads and (any(s.has(k) for k in K("hidden")) or "hidden_size" in defaults))
                or (has_heads and "head_dim" in defaults)):
            raise NoRopeFound(f"{path}: no RoPE settings found (need head_dim, rotary_dim, kv_channels or "
                              f"hidden_size with num_attention_heads)"
                              + (f"; {self.remote_why.split(';')[0]}" if self.remote_why else ""))

    # -- the RoPE block: rope_parameters (per layer type or flat) or rope_scaling -----------
    def rope_block(self) -> None:
        """The block, the config class's default one when the file has none, its per-layer-type blocks, and a
        scaling switched on by a flag (a table row)."""
        s, K, defaults = self.s, self.K, self.defaults
        block = next((b for b in (s.sub(k) for k in K("rope_block")) if b is not None), None)
        self.from_defaults = False
        if block is None and self.kind == "hf" and not any(s.has(k) for k in K("rope_block")):
            # no RoPE block in the file: the config class's default one, when it is more than a base
            # (gpt-oss: YaRN x32; Gemma 3 in 5.x: one block per layer type); the file's own keys
            # (rope_theta, rope_local_base_freq) still win, as transformers' conversion lets them
            for k in ("rope_parameters", "rope_scaling"):
                if isinstance(defaults.get(k), Mapping):
                    block = DefaultSection(defaults[k], (k,), self.positions, self.fmt, self.inputs, self.data,
                                            self.problems, note=f"{k} absent: {self.dclass} default",
                                            at=(self.dline, self.dcol))
                    self.from_defaults = True
                    break
        self.per_type: dict[str, Section] = {}
        self.main_block: Section | None
        if block is not None and block.data and all(isinstance(v, Mapping) or v is None for v in block.data.values()) \
                and any(isinstance(v, Mapping) for v in block.data.values()):
            for k in block.data:
                if block.data[k] is None:
                    continue  # a layer type without RoPE (Beam's full_attention: null)
                self.per_type[norm_key(k)] = block.sub(norm_key(k)) or Section(
                    block.data[k], block.prefix + (k,), self.positions, self.fmt, self.inputs, self.data, self.problems)
            self.main_block = self.per_type.get("full_attention") or next(iter(self.per_type.values()))
        else:
            self.main_block = block
        self.flag = self.scaling_flag(block)

    def scaling_flag(self, block: Section | None) -> tuple[Any, Value] | None:
        """A ``rope_scaling`` that is no mapping: the row of a flag written true (``true_flag_scheme``) with its
        Value, else RV-invalid-type."""
        s = self.s
        rs_raw = s.raw("rope_scaling")
        if rs_raw is None or rs_raw is False or isinstance(rs_raw, Mapping) or block is not None:
            return None
        found = next(((r, k) for r in rows("true_flag_scheme") for k in r.keys if s.raw(k) is True), None)
        flag_v = s.get(found[1], expect="bool") if found is not None else None
        if found is not None and flag_v is not None:
            self.notes.append(found[0].values["note"])
            return found[0], flag_v
        self.problems.append(Problem(INVALID_TYPE, s.get("rope_scaling", expect="mapping"),
                                     f"rope_scaling must be a mapping or null, got {type(rs_raw).__name__} "
                                     f"{show_value(rs_raw)}"))
        return None

    # -- head dim and rotary dims ----------------------------------------------------------
    def head_dim(self) -> None:
        s, K, dclass, defaults = self.s, self.K, self.dclass, self.defaults
        heads_v = s.get(*K("heads"), expect="int") or self.default("num_attention_heads", f"default of {dclass}",
                                                                   "int")
        hidden_v = s.get(*K("hidden"), expect="int") or self.default("hidden_size", f"default of {dclass}", "int")
        head_v = self.kept_alias() or s.get(*K("head_dim"), expect="int")
        kv_v = s.get(*K("kv_channels"), expect="int")
        if kv_v is None and self.kind == "hf" and "kv_channels" in defaults and not s.has("head_dim"):
            kv_v = self.default("kv_channels", f"kv_channels absent: {dclass} default (the head dim)", "int")  # JetMoE
        if head_v is None and kv_v is not None:  # Megatron / ChatGLM / Qwen v1: kv_channels is the head dim
            head_v = kv_v
        if head_v is None and "head_dim" in defaults and (hidden_v is None or hidden_v.key is None
                                                          or row("class_head_dim", self.arch) is not None):
            head_v = self.default("head_dim", f"default of {dclass}", "int")
        if head_v is None and self.kind == "hf":
            head_v = self.class_head_dim(hidden_v or heads_v)
        self.head_v: Value = head_v if head_v is not None else self.head_from_hidden(hidden_v, heads_v)

    def kept_alias(self) -> Value | None:
        """The value of a name the followed version's config class maps onto head_dim and keeps over a head_dim the
        file also writes (5.23.0's HunYuanVLTextConfig: ``attention_head_dim``; measured: ``hf_mrope_sections.json``
        ``head_dim_aliases``), or None."""
        from .layers import mrope_entry

        if self.kind != "hf":
            return None
        e = mrope_entry(layer_arch(self.arch, self.root.raw("model_type"), self.reading), self.reading) or {}
        for alias, kept in e.get("head_dim_aliases", {}).items():
            v = self.s.get(alias, expect="int") if kept == "alias" else None
            if v is not None:
                return Value(v.raw, v.key, v.line, v.column, f"{v.key} (its config class keeps it over head_dim: "
                                                             f"measured)", "int")
        return None

    def class_head_dim(self, anchor: Value | None) -> Value | None:
        """The head_dim of a Hugging Face file without one where the config class does not derive it from
        hidden_size / num_attention_heads (``hf_types.json``'s ``head_dim_absent``, measured by scripts/hf_types.py):
        the class's fixed default (GPT-OSS's 64) or the key it copies (DeepSeek-V2's qk_rope_head_dim) under the
        followed version, else None. A version whose class leaves head_dim None and whose tiny model then does not
        build refuses the config (RV021 / RV022)."""
        for version in self.hf.SEMANTICS:
            why = self.hf.head_dim_absent(self.arch, version).get("refused")
            if why and self.known[version]:
                self.refusals.append((version, anchor, f"refuses a {self.arch} config without head_dim: its config "
                                                       f"class leaves head_dim None and the model does not build "
                                                       f"(measured on a tiny model: {why})"))
        got = self.hf.head_dim_absent(self.arch, self.reading)
        if "from" in got:  # DeepSeek-V2: the class sets head_dim to qk_rope_head_dim
            src = self.s.get(got["from"], expect="int") or self.default(got["from"], f"default of {self.dclass}",
                                                                          "int")
            return None if src is None else Value(src.raw, src.key, src.line, src.column,
                                                  f"head_dim absent: {self.dclass} takes {src.where} (measured)",
                                                  "int")
        fixed = got.get("fixed")
        if fixed is None:
            return None
        return Value(fixed, None, self.dline, self.dcol, f"head_dim absent: {self.dclass} keeps its default "
                                                         f"{fixed} (measured: not hidden_size / num_attention_heads)",
                     "int")

    def head_from_hidden(self, hidden_v: Value | None, heads_v: Value | None) -> Value:
        """hidden_size / num_attention_heads (transformers truncates; RV-not-integer when it does)."""
        h, n = finite(hidden_v.raw) if hidden_v else None, finite(heads_v.raw) if heads_v else None
        key = hidden_v or heads_v
        if h is not None and n is not None and n > 0 and hidden_v is not None and heads_v is not None:
            q = Fraction(h) / Fraction(n)
            note = f"{hidden_v.where} / {heads_v.where} = {fmt_count(h)} / {fmt_count(n)}"
            if q.denominator != 1:
                self.problems.append(Problem(NOT_INTEGER, hidden_v,
                                             f"hidden_size {fmt_count(h)} is not divisible by num_attention_heads "
                                             f"{fmt_count(n)}: head_dim {float(q):g} "
                                             f"(transformers truncates to {fmt_count(int(q))})"))
            return Value(int(q), None, hidden_v.line, hidden_v.column, note, "int")
        return Value(None, None, key.line if key else 1, key.column if key else 1,
                     "not derivable from hidden_size / num_attention_heads", "int")

    def partial(self) -> None:
        """The partial rotary factor, and the measured layer table's verdict on it."""
        K = self.K
        frac_v = None
        for sec in (self.main_block, self.s):
            if sec is not None and frac_v is None:
                frac_v = sec.get(*K("partial"))
        if frac_v is None:
            frac_v = (self.default("partial_rotary_factor", f"partial_rotary_factor default of {self.dclass}")
                      or self.default("rotary_pct", f"rotary_pct default of {self.dclass}"))
        self.layer_arch = (layer_arch(self.arch, self.root.raw("model_type"), self.reading)
                           if self.kind == "hf" and self.arch else None)
        self.measured = layers_entry(self.layer_arch, self.reading)
        if frac_v is not None and frac_v.key and self.measured is not None and self.measured.get("partial") \
                and frac_v.key.split(".")[-1] == "partial_rotary_factor":  # the key the table measured
            frac_v = self.measured_partial(frac_v, self.measured)
        self.frac_v = frac_v

    def measured_partial(self, frac_v: Value, measured: dict) -> Value | None:
        """A partial_rotary_factor the runtime is measured to ignore (RV-ignored-key: the next partial key, else
        the class default) or not measured with (RL-layer-semantics-unknown; read as written)."""
        where = "block" if frac_v.key and "." in frac_v.key else "top"
        ratio = measured["partial"].get(where)
        main_block, dclass = self.main_block, self.dclass
        sv = main_block.get("rope_type", "type", expect="str") if main_block is not None else None
        if ratio == 1.0 and (sv is None or sv.raw == "default"):
            # measured with plain RoPE; a scaled rotary may read the factor (5.23.0 llama yarn: inv_freq of
            # the partial dims, then a crash in forward), so there the factor is read as written; the runtime
            # rotates the whole head whatever the factor
            self.problems.append(Problem(IGNORED_KEY, frac_v,
                                         f"{frac_v.key} is ignored by transformers {self.reading}: {self.layer_arch} "
                                         f"rotates the same dims whatever it says (measured with 0.5 and 1.0)"))
            leaf = (frac_v.key or "").split(".")[-1]
            return (next((v for v in (self.s.get(k) for k in self.K("partial") if k != leaf) if v is not None), None)
                    or self.default("rotary_pct", f"rotary_pct default of {dclass}")  # GPT-NeoX 4.x reads rotary_pct
                    or self.default("partial_rotary_factor", f"partial_rotary_factor default of {dclass}"))
        if ratio is None and where in measured["partial"]:
            self.problems.append(Problem(LAYER_SEMANTICS_UNKNOWN, frac_v,
                                         f"transformers {self.reading} did not run {self.layer_arch} with "
                                         f"{frac_v.key} written there (measured with 0.5 and 1.0); the rotary dims "
                                         f"are read as written"))
        return frac_v

    def rotary_dims(self) -> None:
        """The rotated dims: rotary_dim (MLA: qk_rope_head_dim), else head_dim x the partial factor."""
        s, K, head_v, frac_v = self.s, self.K, self.head_v, self.frac_v
        rot_v = next((v for v in (s.get(k, expect="int") for k in K("rotary_dim")) if v is not None), None)
        if rot_v is None and self.kind == "hf" and "qk_rope_head_dim" in self.defaults:  # MLA: only that part rotates
            rot_v = self.default("qk_rope_head_dim", f"qk_rope_head_dim absent: {self.dclass} default", "int")
        if rot_v is None and self.kind == "hf" and "rotary_dim" in self.defaults and not any(
                k in s.keys for k in K("rotary_dim")):  # GPT-J / CodeGen: the class's rotary_dim (a null: the head)
            rot_v = self.default("rotary_dim", f"rotary_dim absent: {self.dclass} default", "int")
        hd = finite(head_v.raw)
        fr = finite(frac_v.raw) if frac_v is not None else 1.0
        if rot_v is not None:
            self.d_v = rot_v
        elif hd is None or fr is None:
            self.d_v = Value(None, None, head_v.line, head_v.column, "not derivable (see the values it comes from)",
                             "int")
        else:
            self.d_v = self.partial_dims(hd, fr)

    def partial_dims(self, hd: float, fr: float) -> Value:
        """head_dim ``hd`` x factor ``fr`` as the runtime rotates it (a row may halve it or round an odd count
        up), with RV-not-integer when it truncates or rounds."""
        head_v, frac_v = self.head_v, self.frac_v
        dims, prod = rotary_dims(hd, fr if frac_v is not None else None)
        parts = [head_v.where]
        if frac_v is not None:
            parts.append(f"{frac_v.where} {fr:g}")
        if self.rotates_half is not None:  # its RotaryEmbedding(rotary_dim // 2)
            dims, prod = dims // 2, prod / 2
            parts.append(self.rotates_half.values["note"])
        if math.isfinite(prod) and prod != int(prod):
            self.problems.append(Problem(NOT_INTEGER, frac_v or head_v,
                                         f"rotary dims {' x '.join(parts)} = {prod:g} is not a whole number "
                                         f"(transformers truncates to {fmt_count(dims)})"))
        if frac_v is not None and dims % 2 and row("odd_dims_round_up", self.arch) is not None \
                and self.rotates_half is None:
            # their RotaryEmbedding makes d/2 = ceil(dims / 2) frequencies (arange(0, dims, 2)) and their
            # apply_rotary_pos_emb slices the head by cos.shape[-1]: dims + 1 dims rotate
            if self.problems and as_problem(self.problems[-1]).rule is NOT_INTEGER and self.problems[-1][1] is frac_v:
                self.problems.pop()  # one message for the truncation and the rounding
            self.problems.append(Problem(NOT_INTEGER, frac_v,
                                         f"rotary dims {' x '.join(parts)} = {prod:g} -> int {fmt_count(dims)} is "
                                         f"odd: transformers' {self.arch} rotates {fmt_count(dims + 1)} (cos/sin of "
                                         f"2 x ceil({fmt_count(dims)} / 2) dims; the head is sliced by their size)"))
            self.odd = (row("odd_dims_round_up", self.arch), dims)
            dims += 1
            parts.append("rounded up to even as the model slices by cos")
        anchor = frac_v if (frac_v is not None and frac_v.key) else head_v
        note = " x ".join(parts) if (frac_v is not None or self.rotates_half is not None) else ""
        return head_v if not note else Value(dims, None, anchor.line, anchor.column, note, "int")

    def odd_dims(self, g: RopeLayer) -> RopeLayer:
        """Group ``g`` rotating an odd count r rounded up (row ``odd_dims_round_up``): its runtime makes ceil(r/2)
        frequencies base^(-2k/r) = (base^((r+1)/r))^(-2k/(r+1)), so a scheme whose frequencies are a function of
        the unscaled ones only (the row's ``schemes``) is read as r + 1 dims at the effective base
        base^((r+1)/r); another scheme uses the dim itself (dynamic: ^(dim/(dim-2)); yarn's ramp): RV003, the
        group is not analysed."""
        if self.odd is None or not g.rope or g.d is not self.d_v:
            return g
        odd_row, r = self.odd
        scheme = canonical_scheme(g.scheme.raw) if isinstance(g.scheme.raw, str) else "?"
        b = finite(g.base.raw)
        if scheme in odd_row.values["schemes"]:
            if b is None or b <= 0:
                return g  # RV002 / RV005: no real power to take
            try:
                eff = b ** ((r + 1) / r)
            except OverflowError:  # beyond float64: not analysed (RV016 says the base is unusable)
                eff = math.inf
            why = f"effective base {fmt_short(b)}^({r + 1}/{r}) = {fmt_short(eff)} for {r} odd rotary dims"
            self.notes.append(f"{g.label}: {r} rotary dims rotate as {r + 1} at the {why} (transformers' "
                              f"{self.arch} makes base^(-2k/{r}) = (base^({r + 1}/{r}))^(-2k/{r + 1}))")
            return replace(g, base=Value(eff, g.base.key, g.base.line, g.base.column,
                                         f"{g.base.note}; {why}" if g.base.note else why, g.base.expect),
                           written_power=r / (r + 1))
        crash = odd_row.values["crashes"].get(scheme)
        msg = (f"rotary dims {fmt_count(r)} are odd: transformers' {self.arch} makes the {g.scheme.raw} frequencies "
               f"from dim = {fmt_count(r)} and rotates {fmt_count(r + 1)} dims; {g.scheme.raw} uses dim itself, not "
               f"only the unscaled frequencies, so no effective base over {fmt_count(r + 1)} dims is exact: "
               f"{g.label} not analysed")
        anchor = self.frac_v if self.frac_v is not None and self.frac_v.key else self.d_v
        self.problems.append(Problem(ODD_DIM, anchor, msg + (f" (transformers {crash})" if crash else ""),
                                     severity="error" if crash else "warning"))
        return replace(g, d=Value(None, None, self.d_v.line, self.d_v.column,
                                  f"{fmt_count(r)} odd rotary dims under {g.scheme.raw}: not modelled", "int"))

    # -- base ------------------------------------------------------------------------------
    def base_from(self, sec: Section | None) -> Value | None:
        return None if sec is None else sec.get(*self.K("block_base"))

    def base(self) -> None:
        """The base: the block's or the top level's (the file's own wins over a class default block), a base in
        a sub-mapping (a row), a base from a ratio (a row), else the class default, else RoFormer's 10000."""
        s = self.s
        block = self.base_from(self.main_block)  # a block's base wins over a top-level key the runtime ignores
        base_v = (self.top_base() or block) if self.from_defaults else (block or self.top_base())
        for nested in rows("nested_base"):
            rv = nested.values
            sub = s.sub(rv["section"]) if self.kind == "hf" else None
            if sub is None or not sub.has(rv["key"]):
                continue
            if self.reading.startswith(rv["read_by"]):
                base_v = base_v or sub.get(rv["key"])
                continue
            v = sub.get(rv["key"])
            if v is not None:
                self.problems.append(Problem(IGNORED_KEY, v,
                                             f"{v.key} is ignored by transformers {self.reading}: "
                                             f"{rv['config_class']} runs rope_theta / rope_parameters "
                                             f"({rv['reads']} reads {v.key})"))
        ratio_row = row("base_times_ratio", self.arch, self.arch_names, s)
        if base_v is None and ratio_row is not None:
            base_v = self.base_times_ratio(ratio_row.values)
        if base_v is None:
            for k in ("rope_theta", "rotary_emb_base"):
                if k in self.defaults:
                    base_v = Value(self.defaults[k], None, self.dline, self.dcol, f"{k} absent: {self.dclass} default")
                    break
            else:
                base_v = Value(ROPE_DEFAULT_BASE, None, 1, 1, "no base key: RoPE's default 10000 (RoFormer)")
            self.notes.append(f"base {fmt_count(base_v.raw)} assumed ({base_v.note})")
        self.base_v: Value = base_v

    def top_base(self) -> Value | None:
        """The top level's base: the first base key written, or (row ``base_key``: GPT-NeoX) the one key the
        runtime reads, else its class default; a key it does not read whose value differs from the one that runs is
        RV019, a warning (the ignored key is never trusted)."""
        kr = row("base_key", self.arch) if self.kind == "hf" else None
        if kr is None:
            return self.s.get(*self.K("base"))
        key, default = kr.values["key"], kr.values["default"]
        read = self.s.get(key)
        runs = read if read is not None else Value(default, None, self.dline, self.dcol,
                                                  f"{key} absent: {kr.values['config_class']} default")
        for other in (v for v in map(self.s.get, kr.values["ignored"]) if v is not None):
            if finite(other.raw) is not None and finite(other.raw) == finite(runs.raw):
                continue  # the value that runs: nothing is lost by its key being unread
            self.problems.append(Problem(
                IGNORED_KEY, other,
                f"{other.key} {fmt_short(other.raw)} is ignored by transformers {self.reading}: "
                f"{kr.values['config_class']} runs {key} {fmt_short(runs.raw)}"
                + ("" if read is not None else f" (its default; the file has no {key})"),
                fix=f"write the base as {key} (now {fmt_short(runs.raw)}) and drop {other.key}", severity="warning"))
        if read is None:
            self.notes.append(f"base {fmt_count(default)} assumed ({runs.note})")
        return runs

    def base_times_ratio(self, rv: Mapping[str, Any]) -> Value:
        """A row's base x its ratio key (the row's base when the key is absent)."""
        base, model = rv["base"], rv["model"]
        ratio = self.s.get(*self.K(rv["key"]))
        r = finite(ratio.raw) if ratio else 1.0
        if ratio is None:
            return Value(base, None, 1, 1, f"{model} base {base:g}, no {rv['key']}")
        if r is None:
            return Value(ratio.raw, ratio.key, ratio.line, ratio.column, f"{model}: {base:g} * {rv['key']}")
        return Value(base * r, None, ratio.line, ratio.column, f"{base:g} * {ratio.key} {r:g} ({model})")

    # -- scheme and its parameters ---------------------------------------------------------
    def scheme_of(self, sec: Section | None) -> tuple[Value, dict, Value | None]:
        """A block's ``(rope_type Value, parameters by name, the block's Value)``."""
        if sec is None:
            return Value("default", None, 1, 1, "no rope_scaling", "str"), {}, None
        line, col = self.positions.get(sec.prefix, (1, 1))
        if isinstance(sec, DefaultSection):
            blk = Value(plain(sec.data), None, sec.at[0], sec.at[1], f"{dotted(sec.prefix)}: {sec.note}", "mapping")
        else:
            blk = Value(plain(sec.data), dotted(sec.prefix), line, col, "", "mapping")
        sv = sec.get(*self.K("rope_type"), expect="str")
        if sv is None:
            sv = Value("default", blk.key, blk.line, blk.column, "no rope_type", "str")
        params = {}
        for k in sec.data:
            nk = norm_key(k)
            if nk in NOT_PARAMS or nk in self.K("block_base") or nk in MROPE_KEYS:
                continue
            v = sec.get(nk, expect=PARAM_EXPECT.get(nk, "number"))
            if v is not None:
                params[nk] = v
        if any(norm_key(k) in MROPE_KEYS for k in sec.data):
            sk = next(str(k) for k in sec.data if norm_key(k) in MROPE_KEYS)
            self.notes.append(f"{sk}: multimodal RoPE splits the pairs over position / time / height / width; for "
                              f"text every axis has the same position, so each section rotates at the same "
                              f"frequencies as one rotary of the whole head")
        return sv, params, blk

    def mrope_sections(self) -> None:
        """RV021 / RV022 where a version refuses the rope block's multimodal sections (``mrope_section`` /
        ``xdrope_section``) because they do not sum to half the dims it rotates: the rotary dims, of the head the
        config class keeps (head_dim, or a name it maps onto head_dim and keeps over it: HunYuan-VL's
        ``attention_head_dim``), measured per type and version (``hf_mrope_sections.json``)."""
        from .layers import mrope_entry, section_refusal

        sec = self.main_block
        if self.kind != "hf" or sec is None or isinstance(sec, DefaultSection):
            return
        key = next((norm_key(k) for k in sec.data if norm_key(k) in ("mrope_section", "xdrope_section")), None)
        v = sec.get(key, expect="list") if key else None
        if v is None or not isinstance(v.raw, list) or not v.raw or \
                any(isinstance(x, bool) or not isinstance(x, int) for x in v.raw):
            return
        d, hd = finite(self.d_v.raw), finite(self.head_v.raw)
        if d is None or hd is None or hd <= 0:
            return
        for version in self.hf.SEMANTICS:
            mt = layer_arch(self.arch, self.root.raw("model_type"), version)
            e = mrope_entry(mt, version) if self.known[version] else None
            if e is None:
                continue
            head, head_from = hd, self.head_v.key or "head_dim"
            for alias, kept in e.get("head_dim_aliases", {}).items():
                av = self.s.get(alias, expect="int") if kept == "alias" else None
                if av is not None and isinstance(av.raw, int) and not isinstance(av.raw, bool) and av.raw > 0:
                    head, head_from = av.raw, f"{av.key}, which its config class keeps over head_dim"
            rot = d * head / hd
            half, total = int(rot) // 2, sum(v.raw)
            why = section_refusal(mt, total, half, version) if rot == int(rot) and int(rot) % 2 == 0 else None
            if why:
                self.refusals.append((version, v, f"refuses {v.key} {v.raw} (sum {total}) for {half} rotated pairs "
                                                  f"(a head of {fmt_count(head)}: {head_from}): {why}"))

    def scheme(self) -> None:
        """The scheme and its parameters: the main block's, a flag's (a row), each version's rewrite of it, an
        NTK alpha (a row)."""
        self.scheme_v, self.params, self.block_v = self.scheme_of(self.main_block)
        if self.flag is not None:
            flag_row, flag_v = self.flag
            rv = flag_row.values
            self.scheme_v = Value(rv["scheme"], flag_v.key, flag_v.line, flag_v.column, rv["scheme_note"], "str")
            fv = self.s.get(*self.K(rv["factor_role"]))
            self.params = {name: Value(x, None, 1, 1, rv["params_note"], "int" if isinstance(x, int) else "number")
                           for name, x in rv["params"].items()}
            if fv is not None:
                self.params["factor"] = fv
        self.scheme_name = canonical_scheme(self.scheme_v.raw) if isinstance(self.scheme_v.raw, str) else "?"
        if self.kind == "hf" and self.dia.name == "hf" and self.flag is None and self.main_block is not None \
                and not self.remote:
            self.scheme_runs_as(self.main_block)
        alpha = row("ntk_alpha", self.arch)
        if alpha is not None and self.scheme_name == alpha.values["scheme"]:
            self.base_v, self.scheme_v, self.scheme_name, self.params = _ntk_alpha(
                self.base_v, self.d_v, self.scheme_v, self.params, self.reading, self.problems, self.notes)

    def scheme_runs_as(self, main_block: Section) -> None:
        """The rope_type each transformers version runs after its config class's rewrites (mrope, su, xdrope,
        Llama 4), and the versions that have no function for it (hf.scheme_runs_as)."""
        from ..schemes import SCHEMES

        for version in self.hf.SEMANTICS:
            name, why, refusal = self.hf.scheme_runs_as(self.arch, main_block.data, version)
            anchor = self.scheme_v if self.scheme_v.key else self.block_v
            if refusal and canonical_scheme(name) in SCHEMES and self.known[version]:  # else RV008 / RV001 / RV021
                # (a model_type that version does not know at all)
                self.refusals.append((version, anchor, refusal))
            if version == self.reading and isinstance(name, str) and why:
                self.notes.append(f"transformers {self.reading}: {why}")
                self.scheme_v = Value(name, self.scheme_v.key, self.scheme_v.line, self.scheme_v.column, why, "str")
                self.scheme_name = canonical_scheme(name)

    # -- lengths ---------------------------------------------------------------------------
    def lengths(self, train: int | None, target: int | None, tune: int | None) -> None:
        """max_position_embeddings, seq_length, the original length, the runtime's parameters, and the lengths
        the analysis runs at (--train / --target / --tune win)."""
        s, K, dclass, defaults = self.s, self.K, self.dclass, self.defaults
        max_v = s.get(*K("max_pos"), expect="int")
        seq_v = s.get(*K("seq_len"), expect="int")
        if max_v is None and seq_v is not None and self.kind == "hf":
            max_v, seq_v = seq_v, None  # ChatGLM: seq_length is the advertised context
        if max_v is None and "max_position_embeddings" in defaults:
            max_v = Value(defaults["max_position_embeddings"], None, self.dline, self.dcol,
                          f"max_position_embeddings absent: {dclass} default", "int")
        if seq_v is None and row("seq_length_default", self.arch) is not None and "seq_length" in defaults:
            seq_v = self.default("seq_length", f"seq_length absent: {dclass} default", "int", at_type=True)
        top_orig = s.get(*K("original"), expect="int")
        if top_orig is None and "original_max_position_embeddings" in defaults:
            # Phi-3's config class always has the attribute (default 4096): transformers reads it
            top_orig = self.default("original_max_position_embeddings",
                                    f"original_max_position_embeddings absent: {dclass} default", "int", at_type=True)
        self.max_v, self.seq_v, self.top_orig = max_v, seq_v, top_orig
        runtime = self.hf.runtime_params(self.scheme_name, self.params, top_orig=top_orig, max_pos=max_v,
                                         semantics=self.reading,
                                         block_key=self.block_v.key if self.block_v is not None else None,
                                         block_raw=self.main_block.data if self.main_block is not None else None,
                                         model_type=self.arch)
        self.params = runtime.params
        if self.kind == "hf" and self.dia.name == "hf" and not self.remote:  # rope-block keys the runtime reads
            self.params, read_keys = hf_keys.split_read_keys(self.reading, self.arch, self.scheme_name, self.params)
            self.query_scale = _query_scale(read_keys, self.main_block, self.problems)
            self.problems.extend(hf_keys.unfollowed_top_keys(self.reading, self.arch, s.root, s.prefix, s.positions))
        self.problems.extend(runtime.problems)
        self.notes.extend(runtime.notes)
        self.orig_v = runtime.original
        self.train_v = self.train_length(train)
        given = cli_value(target, "--target")
        self.target_v: Value = given if given is not None else (max_v or self.train_v)
        self.tune_v = cli_value(tune, "--tune")
        trained = finite(self.train_v.raw)
        if tune is not None and trained is not None and tune < trained:
            raise OptionError(f"{self.path}: --tune {tune} is shorter than the training length "
                              f"{fmt_count(trained)} ({self.train_v.where}); a tuning run is at least as long")

    def train_length(self, train: int | None) -> Value:
        """--train, else seq_length, else a scaled scheme's original length, else max / a linear factor, else
        max_position_embeddings."""
        max_v, params = self.max_v, self.params
        given = cli_value(train, "--train") if train is not None else None
        if given is not None:
            return given
        if self.seq_v is not None:
            return self.seq_v
        if self.scheme_name not in ("default", "?") and self.orig_v is not None:
            return self.orig_v
        f = finite(params["factor"].raw) if params.get("factor") is not None else None
        m = finite(max_v.raw) if max_v is not None else None
        if self.scheme_name == "linear" and max_v is not None and m and f is not None and f >= 1:
            return Value(int(m // f), None, max_v.line, max_v.column,
                         f"{max_v.key or 'max_position_embeddings'} / factor {f:g} (linear scaling; --train to set)",
                         "int")
        if max_v is not None:
            return max_v
        return Value(None, None, 1, 1, "no max_position_embeddings or seq_length (pass --train)", "int")

    def flags(self) -> None:
        """Flags written true that change the scheme or scale the queries (rows ``flag_scheme`` / ``flag_note``:
        Qwen v1's use_dynamic_ntk and use_logn_attn)."""
        s, K = self.s, self.K
        for flag in rows("flag_scheme"):
            rv = flag.values
            v = s.get(*K(rv["role"]), expect="bool")
            if v is not None and v.raw is True and self.scheme_name == "default" and self.block_v is None:
                self.scheme_v = Value(rv["scheme"], v.key, v.line, v.column, rv["scheme_note"], "str")
                self.scheme_name = rv["scheme"]
                if self.seq_v is not None:
                    self.params = {**self.params, rv["length_param"]: self.seq_v}
                self.notes.append(f"{v.key}: {rv['note']}")
        for flag in rows("flag_note"):
            v = s.get(*K(flag.values["role"]), expect="bool")
            if v is not None and v.raw is True:
                self.notes.append(f"{v.key}: {flag.values['note']}")

    # -- dtype -----------------------------------------------------------------------------
    def dtype(self) -> None:
        s, K, root = self.s, self.K, self.root
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
                    line, col = self.positions.get(s.prefix + (s.keys[name],), (1, 1))
                    dtype_v = Value(name, dotted(s.prefix + (s.keys[name],)), line, col, "", "str")
                elif sub is not None and sub.raw("enabled") is True:
                    p = sub.prefix + (sub.keys["enabled"],)
                    line, col = self.positions.get(p, (1, 1))
                    dtype_v = Value(name, dotted(p), line, col, "", "str")
                if dtype_v is not None:
                    break
        self.dtype_v = dtype_v

    # -- layer groups: what each layer runs, from the table measured on transformers -------
    def own_block(self, t: str) -> tuple[Value | None, Value, dict, Value | None] | None:
        """Layer type ``t``'s own block: ``(base, scheme Value, runtime parameters, block Value)``."""
        sec = self.per_type.get(t)
        if sec is None:
            return None
        sv, sp, blk = self.scheme_of(sec)
        sch = canonical_scheme(sv.raw) if isinstance(sv.raw, str) else "?"
        rt = self.hf.runtime_params(sch, sp, top_orig=self.top_orig, max_pos=self.max_v, semantics=self.reading,
                                    block_key=blk.key if blk is not None else None, block_raw=sec.data)
        self.problems.extend(rt.problems)
        return self.own_base(t, sec), sv, rt.params, blk

    def own_base(self, t: str, sec: Section) -> Value | None:
        """Layer type ``t``'s base: its block's, unless the block (the class's default one included) has none of the
        file's and a row names a key that fills it (5.23.0 Gemma 3: rope_local_base_freq)."""
        own = self.base_from(sec) if not self.from_defaults else None
        fill = row("local_base_into_block", self.arch)
        if own is None and fill is not None and fill.values["type"] == t:
            v = self.s.get(fill.values["key"])
            if v is not None:
                return Value(v.raw, v.key, v.line, v.column,
                             f"{v.key} fills rope_parameters[{t!r}].rope_theta ({fill.source})", v.expect)
        return self.base_from(sec)

    def partial_of(self, t: str | None) -> Value | None:
        """The partial rotary factor of a layer type's block (None: the main one)."""
        if t is None:
            return self.frac_v
        sec = self.per_type.get(t)
        return sec.get(*self.K("partial")) if sec is not None else None

    def measured_layers(self, table_type: str) -> LoadedConfig | None:
        """The config read with its layer groups from the measured table (None: the table does not know it)."""
        from . import layers as layer_table

        if self.measured is None and not layer_table.not_covered(table_type, self.reading):
            return None
        main = RopeLayer("all layers", self.d_v, self.base_v, self.scheme_v, self.params, self.block_v, None)
        groups = runtime_groups(table_type, self.s, self.defaults, self.dclass, self.reading, main, self.own_block,
                                 self.problems, self.notes, (self.dline, self.dcol), self.head_v, self.partial_of,
                                 self.refusals)
        if row("temperature_tuning", table_type) is not None and self.query_scale is None:
            self.query_scale = _temperature_tuning(self.s, self.default, self.dclass, self.notes)
        self.problems.extend(unread_rotary_keys(self.measured, table_type, self.s, self.inputs, self.reading))
        if not any(g.rope for g in groups) and isinstance(self.base_v.raw, (int, float)):  # Jamba: nothing rotates,
            self.notes = [n for n in self.notes if not n.startswith(f"base {fmt_count(self.base_v.raw)} assumed")]
        return self.result(groups)

    # -- layer groups (model types transformers does not have): all / global + local -------
    def window_layers(self) -> list[RopeLayer]:
        """All layers, or global + local layers when local ones are named (a row, the layer types, a local
        block or base) and have a window."""
        s, K, per_type = self.s, self.K, self.per_type
        window_v = s.get(*K("window"), expect="int")
        if any(s.raw(k) is False for k in K("use_window")):
            window_v = None
        layer_types = next((s.raw(k) for k in K("layer_types") if s.has(k)), None)
        types = {str(t) for t in layer_types} if isinstance(layer_types, list) else set()
        local_base, (lsv, lparams, lblock) = self.local_block()
        lbf = s.get(*K("local_base"))
        if lbf is None and row("local_base_default", self.arch) is not None and "rope_local_base_freq" in self.defaults:
            lbf = self.default("rope_local_base_freq", f"absent: {self.dclass} default")
        local_base = local_base or lbf
        alternating = row("alternating_layers", self.arch) is not None or bool(per_type) or \
            ("sliding_attention" in types and "full_attention" in types) or local_base is not None
        if window_v is None and alternating and "sliding_window" in self.defaults:
            window_v = self.default("sliding_window", f"absent: {self.dclass} default", "int")
        if window_v is not None and (types == {"full_attention"}):
            window_v = None
        args = (self.d_v, self.base_v, self.scheme_v, self.params, self.block_v)
        if window_v is None:
            return [RopeLayer("all layers", *args, None)]
        if not alternating:
            return [RopeLayer("all layers", *args, window_v)]
        local = RopeLayer("local layers", self.d_v, local_base or self.base_v, lsv, lparams, lblock, window_v)
        return [RopeLayer("global layers", *args, None), local]

    def local_block(self) -> tuple[Value | None, tuple[Value, dict, Value | None]]:
        """The sliding layers' own block: ``(its base, (scheme Value, runtime parameters, block Value))``."""
        if "sliding_attention" not in self.per_type:
            return None, (Value("default", None, 1, 1, "local layers: plain RoPE", "str"), {}, None)
        lb = self.per_type["sliding_attention"]
        local_base = self.base_from(lb)
        lsv, lparams, lblock = self.scheme_of(lb)
        lscheme = canonical_scheme(lsv.raw) if isinstance(lsv.raw, str) else "?"
        lrt = self.hf.runtime_params(lscheme, lparams, top_orig=self.top_orig, max_pos=self.max_v,
                                     semantics=self.reading, block_key=lblock.key if lblock is not None else None,
                                     block_raw=lb.data)
        return local_base, (lsv, lrt.params, lblock)


def _ntk_alpha(base_v: Value, d_v: Value, scheme_v: Value, params: dict, reading: str, problems: list,
               notes: list) -> tuple:
    """HunYuanDenseV1RotaryEmbedding: "dynamic" with an alpha is a fixed NTK-aware base rope_theta * alpha^(d/(d-2))
    (4.57.1: DynamicNTKAlphaRotary; 5.23.0: rope_type "ntk_alpha"); the other keys of the block are not read.
    ``(base, scheme value, scheme, params)``, unchanged without a usable alpha; the ignored keys and the note are
    appended to ``problems`` / ``notes``."""
    alpha_v = params.get("alpha")
    a = finite(alpha_v.raw) if alpha_v is not None else None
    b = finite(base_v.raw)
    if not (alpha_v is not None and a and b and finite(d_v.raw) and d_v.raw > 2):
        return base_v, scheme_v, "dynamic", params
    d = int(d_v.raw)
    new_base = Value(b * a ** (d / (d - 2)), None, alpha_v.line, alpha_v.column,
                     f"{base_v.where} {fmt_short(b)} x {alpha_v.key} {fmt_short(a)}^(d/(d-2)) (HunYuan's NTK alpha)")
    for name, v in params.items():
        if name != "alpha" and v.key:
            problems.append(Problem(IGNORED_KEY, v, f"{v.key} is ignored by transformers {reading}: HunYuan runs "
                                                    "rope_scaling type dynamic with an alpha as a fixed "
                                                    "NTK-aware base"))
    notes.append(f"HunYuan's {alpha_v.key} {fmt_short(finite(alpha_v.raw))}: plain RoPE at base "
                 f"{fmt_short(new_base.raw)} = rope_theta x alpha^(d/(d-2))")
    scheme_v = Value("default", scheme_v.key, scheme_v.line, scheme_v.column,
                     "HunYuan: dynamic with alpha = plain RoPE at the NTK-aware base", "str")
    return new_base, scheme_v, "default", {}


def _temperature_tuning(s, default, dclass: str, notes: list) -> QueryScale | None:
    """Llama 4's attention temperature tuning (modeling_llama4.py Llama4TextAttention.forward, 4.57.1 and 5.23.0):
    when ``attn_temperature_tuning`` is truthy, the layers without RoPE scale their queries at cache position p by
    ``log1p(floor((p + 1.0) / floor_scale)) * attn_scale + 1.0`` (float32). The keys, else Llama4TextConfig's
    defaults (True, 8192, 0.1: hf_defaults); None when it is off."""
    def read(name: str, expect: str = "number") -> Value | None:
        if s.keys.get(name) is not None and s.raw(name) is None:  # a null: unusable (5.23.0 refuses it)
            return Value(None, dotted(s.prefix + (s.keys[name],)), 1, 1, f"{name}: null", expect)
        return s.get(name, expect=expect) or default(name, f"{name} absent: {dclass} default", expect, at_type=True)

    on = read("attn_temperature_tuning", "any")
    if on is None or not on.raw:  # transformers tests `if self.attn_temperature_tuning and not self.use_rope`
        if on is not None and on.raw is None:
            notes.append(f"{on.key}: null: transformers 4.57.1 reads it as off (no query scale); 5.23.0 refuses a "
                         f"null (its config class expects a bool)")
        return None
    beta = read("attn_scale")
    if beta is None:
        return None
    return QueryScale(beta, read("floor_scale"), shift=1, nope_only=True, float32=True, switch=on)


def _query_scale(read_keys: list, main_block, problems: list):
    """The rope-block keys transformers reads (``hf_keys.split_read_keys``) into ``problems`` (RV025), but for a
    query scale the runtime is measured to apply, which is modelled (RL106): ``(its Value, the original length's
    Value)`` or None."""
    query_scale = None
    for pr in read_keys:
        v = pr[1]
        if (v.key and v.key.split(".")[-1] == "llama_4_scaling_beta" and main_block is not None
                and query_scale is None):
            query_scale = QueryScale(v, main_block.get("original_max_position_embeddings", expect="int"))
            continue
        problems.append(pr)
    return query_scale
