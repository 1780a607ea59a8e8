"""The table engine: a dialect without a ``load`` of its own (Hugging Face ``config.json`` and the
files that use its key names) read from its key table into a :class:`~ropelaw.lint.model.LoadedConfig`,
with the semantics of the transformers version ropelaw follows (see :mod:`ropelaw.lint.loader`).
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, Mapping

from ..numfmt import count as fmt_count, short as fmt_short
from .layer_groups import (ODD_PARTIAL_ROUNDS_UP, _layer_arch, _layers_entry, _rotary_dims, _runtime_groups,
                           _unread_rotary_keys)
from .model import (LoadedConfig, NoRopeFound, NotARopeConfig, OptionError, QueryScale, RopeLayer, Value, _finite,
                    _plain, canonical_scheme, show_value)
from .dialects import hf_keys
from .parse import Positions
from .sections import (_MROPE_KEYS, _NOT_PARAMS, _PARAM_EXPECT, _ROPE_SWITCHES, _cli, _DefaultSection, _dotted, _norm,
                       _pick_section, _Section)
from .model import Problem, as_problem
from .rules.layers import LAYER_SEMANTICS_UNKNOWN
from .rules.value_rules import IGNORED_KEY, INVALID_TYPE, NOT_INTEGER


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


def _load_table(data: Mapping, positions: Positions | None, *, path: str, fmt: str, train: int | None,
                target: int | None, tune: int | None, dia: Any, semantics: str | None = None) -> LoadedConfig:
    """The engine for a dialect without a ``load`` of its own: its table -> :class:`LoadedConfig`
    (``semantics``: the transformers version to follow, default ``hf.semantics_version()``)."""
    K = dia.keys
    hf = _hf()
    semantics = semantics or hf.semantics_version()
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
    text_types, text_why, text_value = (_text_types(data, positions, root_mt, known) if dia.name == "hf"
                                        else ({}, {}, None))
    refusals.extend((v, text_value, why) for v, why in text_why.items())
    if dia.name == "hf" and root_mt and not remote:
        mt_pos = positions.get(("model_type",), (1, 1))
        mt_value = Value(data["model_type"], "model_type", mt_pos[0], mt_pos[1], "", "str")
        for version in hf.SEMANTICS:  # a model_type the version does not know, with no remote code to run
            if not known[version] and not auto_map:
                refusals.append((version, mt_value, f"does not know model_type {root_mt!r} (ValueError: Transformers "
                                                    f"does not recognize this architecture) and the file has no "
                                                    f"auto_map to remote code"))
        other = hf.other_version(semantics)
        if (not known[semantics] and known[other]) or (semantics in text_why and text_types.get(other)):
            reading = other  # the only version that builds it (its model_type, or its text_config's)
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
        problems.append(Problem(IGNORED_KEY, Value(raw, _dotted(path_keys), line, col, "", "any"),
                                f"{_dotted(path_keys)} is ignored by transformers {semantics}: {why}",
                                severity="warning"))  # a whole block or text model unread: other frequencies run

    # -- architecture and kind ------------------------------------------------------------
    model_type = s.raw("model_type") if isinstance(s.raw("model_type"), str) else root.raw("model_type")
    arch = model_type.strip().lower() if isinstance(model_type, str) else ""
    if s is not root and text_types.get(reading) and text_types[reading] != arch:
        notes.append(f"{_dotted(s.prefix)}.model_type {s.raw('model_type')!r}: transformers {reading} builds it as "
                     f"{text_types[reading]!r} ({root_mt}'s config class)")
        arch = text_types[reading]
    archs = root.raw("architectures")
    arch_names = " ".join(a for a in archs if isinstance(a, str)) if isinstance(archs, list) else ""
    if not arch and "ChatGLM" in arch_names:
        arch = "chatglm"
    if not arch and "QWenLMHeadModel" in arch_names:
        arch = "qwen"
    is_chatglm = arch == "chatglm" or "ChatGLM" in arch_names or s.has("rope_ratio")
    kind = "hf" if (arch or arch_names) else "training"
    remote_why = hf.remote_code(root_mt, auto_map, known, semantics) if dia.name == "hf" else None
    if remote_why is not None:
        mt_pos = positions.get(("model_type",), (1, 1))
        from .rules.runtime import REMOTE  # rules/runtime.py imports the hf dialect, which imports this module

        problems.append(Problem(REMOTE, Value(root_mt, "model_type", mt_pos[0], mt_pos[1], "", "str"),
                         remote_why))
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
                          f"hidden_size with num_attention_heads)"
                          + (f"; {remote_why.split(';')[0]}" if remote_why else ""))

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
            problems.append(Problem(INVALID_TYPE, s.get("rope_scaling", expect="mapping"),
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
                problems.append(Problem(NOT_INTEGER, hidden_v,
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
            # the partial dims, then a crash in forward), so there the factor is read as written; the runtime
            # rotates the whole head whatever the factor
            problems.append(Problem(IGNORED_KEY, frac_v,
                             f"{frac_v.key} is ignored by transformers {reading}: {layer_arch} rotates the same "
                             f"dims whatever it says (measured with 0.5 and 1.0)"))
            leaf = frac_v.key.split(".")[-1]
            frac_v = (next((v for v in (s.get(k) for k in K("partial") if k != leaf) if v is not None), None)
                      or default("rotary_pct", f"rotary_pct default of {dclass}")  # GPT-NeoX 4.x reads rotary_pct
                      or default("partial_rotary_factor", f"partial_rotary_factor default of {dclass}"))
        elif ratio is None and where in measured["partial"]:
            problems.append(Problem(LAYER_SEMANTICS_UNKNOWN, frac_v,
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
                problems.append(Problem(NOT_INTEGER, frac_v or head_v,
                                 f"rotary dims {' x '.join(parts)} = {prod:g} is not a whole number "
                                 f"(transformers truncates to {fmt_count(dims)})"))
            if frac_v is not None and dims % 2 and arch in ODD_PARTIAL_ROUNDS_UP and not is_chatglm:
                # their RotaryEmbedding makes d/2 = ceil(dims / 2) frequencies (arange(0, dims, 2)) and their
                # apply_rotary_pos_emb slices the head by cos.shape[-1]: dims + 1 dims rotate
                if problems and as_problem(problems[-1]).rule is NOT_INTEGER and problems[-1][1] is frac_v:
                    problems.pop()  # one message for the truncation and the rounding
                problems.append(Problem(NOT_INTEGER, frac_v,
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
            problems.append(Problem(IGNORED_KEY, v,
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
    if arch.startswith("hunyuan") and scheme == "dynamic":
        base_v, scheme_v, scheme, params = _hunyuan_alpha(base_v, d_v, scheme_v, params, reading, problems, notes)

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
    query_scale = None
    runtime = hf.runtime_params(scheme, params, top_orig=top_orig, max_pos=max_v, semantics=reading,
                                block_key=block_v.key if block_v is not None else None,
                                block_raw=main_block.data if main_block is not None else None, model_type=arch)
    params = runtime.params
    if kind == "hf" and dia.name == "hf" and not remote:  # rope-block keys the runtime reads (data/hf_keys.json)
        params, read_keys = hf_keys.split_read_keys(reading, arch, scheme, params)
        query_scale = _query_scale(read_keys, main_block, problems)
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
                        f"{max_v.key or 'max_position_embeddings'} / factor {f:g} (linear scaling; --train to set)",
                        "int")
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
                dtype_v = Value(name, _dotted(s.prefix + (s.keys[name],)),
                                *positions.get(s.prefix + (s.keys[name],), (1, 1)), "", "str")
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
            if layer_arch == "llama4_text" and query_scale is None:
                query_scale = _temperature_tuning(s, default, dclass, notes)
            problems.extend(_unread_rotary_keys(measured, layer_arch, s, inputs, reading))
            if not any(g.rope for g in groups) and isinstance(base_v.raw, (int, float)):  # Jamba: nothing rotates,
                notes = [n for n in notes if not n.startswith(f"base {fmt_count(base_v.raw)} assumed")]  # no base
            return LoadedConfig(path=path, fmt=fmt, arch=arch, kind=kind, head_dim=head_v, layers=groups,
                                max_pos=max_v, original_max=orig_v, train_len=train_v, target=target_v,
                                tune_len=tune_v, dtype=dtype_v, inputs=inputs, problems=problems, notes=notes,
                                semantics=f"transformers {semantics}", refusals=refusals, query_scale=query_scale,
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
                        semantics=f"transformers {semantics}", refusals=refusals, query_scale=query_scale,
                        considered=[_dotted(s.prefix + (k,)) for k in (switch, pe_key) if k is not None])


def _hunyuan_alpha(base_v: Value, d_v: Value, scheme_v: Value, params: dict, reading: str, problems: list,
                   notes: list) -> tuple:
    """HunYuanDenseV1RotaryEmbedding: "dynamic" with an alpha is a fixed NTK-aware base rope_theta * alpha^(d/(d-2))
    (4.57.1: DynamicNTKAlphaRotary; 5.23.0: rope_type "ntk_alpha"); the other keys of the block are not read.
    ``(base, scheme value, scheme, params)``, unchanged without a usable alpha; the ignored keys and the note are
    appended to ``problems`` / ``notes``."""
    alpha_v = params.get("alpha")
    if not (alpha_v is not None and _finite(alpha_v.raw) and _finite(base_v.raw) and _finite(d_v.raw)
            and d_v.raw > 2):
        return base_v, scheme_v, "dynamic", params
    a, b, d = _finite(alpha_v.raw), _finite(base_v.raw), int(d_v.raw)
    new_base = Value(b * a ** (d / (d - 2)), None, alpha_v.line, alpha_v.column,
                     f"{base_v.where} {fmt_short(b)} x {alpha_v.key} {fmt_short(a)}^(d/(d-2)) (HunYuan's NTK alpha)")
    for name, v in params.items():
        if name != "alpha" and v.key:
            problems.append(Problem(IGNORED_KEY, v, f"{v.key} is ignored by transformers {reading}: HunYuan runs "
                                                    "rope_scaling type dynamic with an alpha as a fixed "
                                                    "NTK-aware base"))
    notes.append(f"HunYuan's {alpha_v.key} {fmt_short(_finite(alpha_v.raw))}: plain RoPE at base "
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
            return Value(None, _dotted(s.prefix + (s.keys[name],)), 1, 1, f"{name}: null", expect)
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
