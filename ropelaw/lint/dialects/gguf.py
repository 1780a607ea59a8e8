"""GGUF metadata, read as llama.cpp reads it (``ropelaw lint model.gguf``).

The file is read by :func:`ropelaw.lint.gguf.read_gguf` (header, metadata and the RoPE tensors
only); its keys become a flat mapping (``llama.rope.freq_base``: 500000.0, the RoPE tensors as
``{"type", "shape", "values"}``) read here. Semantics: llama.cpp as vendored by
llama-cpp-python==0.3.36 (``src/llama-model.cpp`` ``load_hparams``, ``src/llama-context.cpp``
``llama_context``, ``src/models/<arch>.cpp`` ``load_arch_hparams``; :data:`LLAMACPP`):

- training context ``{arch}.context_length`` (required); the served context defaults to it;
- head dim ``{arch}.attention.key_length``, else ``embedding_length / attention.head_count``
  (layer 0's count when per layer); rotary dims ``{arch}.rope.dimension_count``, else the head
  dim (``llama``, ``deci``, ``falcon``, ``llama-embed`` refuse any other: "invalid n_rot");
- base ``{arch}.rope.freq_base``, else 10,000; llama.cpp keeps it as a float32;
- ``{arch}.rope.scaling.type``: ``none``, ``linear`` (the default), ``yarn``, ``longrope``;
  anything else aborts the load; ``rope.scaling.factor`` (old name ``rope.scale_linear``; 0
  or absent: 1); ``none`` forces factor 1. ``original_context_length`` (default: the training
  context) is YaRN's original length and LongRoPE's switch point;
- YaRN: ``yarn_ext_factor`` (default 1 for yarn), ``yarn_beta_fast`` / ``_slow`` (32 / 1; grok 8 / 1), and an
  attention factor llama.cpp computes itself: ``0.1 ln s + 1`` times ``rope.scaling.attn_factor``
  (default 1), or ``get_mscale(s, m) / get_mscale(s, yarn_log_multiplier)`` when
  ``rope.scaling.yarn_log_multiplier`` is set (DeepSeek: m is that multiplier when it is not 1);
  ``rope.scaling.yarn_attn_factor`` is overwritten (llama-context.cpp 173-214: the magnitude it sets is divided
  by ``1 + 0.1 ln s``, which ggml's ``rope_yarn`` multiplies back, ggml-cpu/ops.cpp 6187-6204). The
  ``yarn_*`` keys are loaded only by the architectures of :data:`YARN_KEYS_READ` (grok, mistral3, DeepSeek);
  in any other GGUF llama.cpp passes them over and runs its defaults (RV044 names the key);
- LongRoPE: the ``rope_factors_long`` / ``rope_factors_short`` tensors, long when the served
  context exceeds the original length (``get_rope_factors``), magnitude ``rope.scaling.attn_factor``;
- ``rope_freqs.weight`` divides each pair's angle (Llama 3.1's bands, written by the conversion
  instead of metadata: :mod:`ropelaw.lint.rope_factors`);
- sliding windows per architecture (:data:`SWA`): a query sees keys less than ``n_swa`` back
  (``is_masked_swa``), as Hugging Face's ``sliding_window``; an architecture whose llama.cpp code
  sets windows that :data:`SWA` does not model is RV045, never read as full attention silently.

llama.cpp computes angles in float32 from int32 positions (``ggml_rope_ext``): the dtype is float32.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import replace
from typing import Any, TypedDict

from ..model import LoadedConfig, NoRopeFound, NotARopeConfig, Overrides, Value
from ._framework import Doc, Fields, assemble, derived, dialect, guarded, preset
from ..model import Problem, QueryScale
from ...runtimes import LLAMACPP
from ..rules.serving import FACTORS_DISAGREE, IGNORES, LAYERS_UNKNOWN, RUNTIME_REFUSES

NAME = "gguf"
DEFAULT_BASE = 10000.0  # llama-model.cpp load_hparams: rope_freq_base_train = 10000.0f
DEFAULT_SWA_BASE = 10000.0  # llama-hparams.h rope_freq_base_train_swa = 10000.0f
YARN_BETA_FAST, YARN_BETA_SLOW = 32.0, 1.0  # llama-hparams.h yarn_beta_fast / yarn_beta_slow
# The YaRN keys llama.cpp loads only in some architectures' load_arch_hparams (src/models/<arch>.cpp; the generic
# load_hparams of llama-model.cpp reads none of them): elsewhere the key is passed over and the default runs.
YARN_KEYS_READ = {
    "yarn_beta_fast": frozenset({"grok", "mistral3"}),  # grok.cpp 26, mistral3.cpp 7
    "yarn_beta_slow": frozenset({"grok", "mistral3"}),  # grok.cpp 27, mistral3.cpp 8
    "yarn_ext_factor": frozenset({"grok"}),  # grok.cpp 24
    "yarn_attn_factor": frozenset({"grok"}),  # grok.cpp 25 (then overwritten when ext_factor != 0)
    "yarn_log_multiplier": frozenset({"deepseek2", "deepseek32", "mistral3"}),  # deepseek2.cpp 34, deepseek32.cpp 34,
}                                                                               # mistral3.cpp 9
ARCH_BETA_FAST = {"grok": 8.0}  # grok.cpp 5: hparams.yarn_beta_fast = 8.0f ("defaults for old GGUFs")
# llama-model.cpp load_hparams: these architectures refuse rope.dimension_count != the head dim
FULL_ROTARY = ("llama", "deci", "falcon", "llama-embed")
MAX_LAYERS = 512  # llama-hparams.h LLAMA_MAX_LAYERS: load_hparams asserts 0 < block_count <= it
TYPES = ("none", "linear", "yarn", "longrope")  # llama-model.cpp LLAMA_ROPE_SCALING_TYPES

# Sliding windows as each architecture's load_arch_hparams sets them (src/models/<file>.cpp):
# pattern N (set_swa_pattern: layer il windowed when il % N < N - 1), the window when the key is absent
# (None: only with the key), the local layers' base and scale ("main": the global layers'; a number: that
# default), and whether a zero window switches it off.


class SwaRule(TypedDict):
    file: str
    pattern: int
    window: int | None
    base: str | float
    scale: str | float


SWA: dict[str, SwaRule] = {
    "gemma2": SwaRule(file="gemma2.cpp", pattern=2, window=4096, base="main", scale="main"),
    "gemma3": SwaRule(file="gemma3.cpp", pattern=6, window=None, base=DEFAULT_SWA_BASE, scale=1.0),
    "cohere2": SwaRule(file="cohere2.cpp", pattern=4, window=None, base="main", scale="main"),
    "olmo2": SwaRule(file="olmo2.cpp", pattern=4, window=None, base="main", scale=1.0),
    "gpt-oss": SwaRule(file="openai-moe.cpp", pattern=2, window=None, base="main", scale="main"),
}
# every architecture whose load_arch_hparams sets a sliding window type (llama.cpp of LLAMACPP): those not
# modelled in SWA are RV045; phi3 reads its window key and disables it
SWA_ARCHS = frozenset(["afmoe", "cohere2", "cohere2moe", "deepseek4", "dflash", "dots3note", "exaone-moe", "exaone4",
                       "gemma-embedding", "gemma2", "gemma3", "gemma3n", "gemma4", "gemma4-assistant", "gpt-oss",
                       "granite_swa", "laguna", "lfm2", "lfm2moe", "llama4", "maple", "mellum", "mimo2", "modern-bert",
                       "muse-glimmer", "nanbeige", "olmo2", "plamo3", "smallthinker", "spark2_5", "step35"])


# architectures llama.cpp runs without RoPE (llama-model.cpp llama_model_rope_type: LLAMA_ROPE_TYPE_NONE; names as
# llama-arch.cpp LLM_ARCH_NAMES spells them): learned or relative positions, or recurrent layers only
ROPE_NONE = frozenset(["clip", "gpt2", "gptj", "mpt", "refact", "bloom", "mamba", "mamba2", "jamba", "jina-bert-v2",
                       "t5", "t5encoder", "jais", "rwkv6", "rwkv6qwen2", "rwkv7", "arwkv7", "wavtokenizer-dec",
                       "nemotron_h", "nemotron_h_moe", "kimi-linear", "kimi-k3", "glm5-next"])

# architectures whose load_arch_hparams scales the base by rope.scaling.alpha (XDRoPE / NTK alpha)
ALPHA_BASE = {"hunyuan_vl": "models/hunyuan-vl.cpp"}
# layers without RoPE: (il + 1) % step == 0 (llama4.cpp / smollm3.cpp build_graph use_rope; llama-hparams.h
# n_no_rope_layer_step = 4); llama4 with a zero window uses RoPE on every layer
NOPE_STEP = {"smollm3": ("smollm3.cpp", 4), "llama4": ("llama4.cpp", 4)}
# granite: rope.scaling.finetuned false switches RoPE off on every layer (models/granite*.cpp rope_pattern)
ROPE_SWITCH = frozenset({"granite", "granitemoe", "granite_hybrid", "granite_switch"})


def detect(data: Mapping) -> bool:
    return False  # a GGUF is recognised by its file (loader), never by a parsed mapping


class GgufDoc(Doc):
    """A Doc of flat keys (``llama.rope.freq_base`` is one key, dots and all)."""

    def _find(self, dotted: str):
        if dotted in self.data:
            return (dotted,), self.data[dotted]
        return None


def mapping(g) -> tuple[dict, dict]:
    """``(data, positions)`` of a :class:`~ropelaw.lint.gguf.GgufFile`: its metadata and its RoPE tensors
    (``{"type", "shape", "values"}``), every key at 1:1 (a binary file has no lines)."""
    data: dict[str, Any] = dict(g.metadata)
    for name, t in g.rope.items():
        vals = g.values.get(name)
        data[name] = {"type": t.type, "shape": list(t.shape),
                      "values": [float(x) for x in vals] if vals is not None else None}
    return data, {(k,): (1, 1) for k in data}


def load_file(path: str, o: Overrides) -> LoadedConfig:
    """The GGUF at ``path`` read as llama.cpp reads it (module docstring)."""
    from ..gguf import read_gguf
    from ..unread import check_read

    g = read_gguf(path)
    data, positions = mapping(g)
    doc = GgufDoc(data, positions, "gguf", path)
    cfg = guarded(NAME, path, lambda: assemble(doc, read(doc), o))
    cfg = replace(cfg, semantics=LLAMACPP, notes=list(cfg.notes) + list(g.notes),
                  query_scale=_temperature_tuning(cfg, g.architecture))
    return check_read(data, positions, cfg)


def _temperature_tuning(cfg: LoadedConfig, arch: str) -> QueryScale | None:
    """Llama 4's attention temperature tuning as llama.cpp runs it (RL106): with chunked attention (the layers
    without RoPE exist only then) ``llama4.cpp load_arch_hparams`` sets n_attn_temp_floor_scale = 8192,
    f_attn_temp_scale = 0.1 and f_attn_temp_offset = 1 (no GGUF key), and ``build_graph`` multiplies the queries of
    the layers without RoPE by ``llama-graph.cpp llm_graph_input_attn_temp``: log(floor((pos + 1) / 8192) + 1) * 0.1
    + 1, pos a float (float32 division): transformers' Llama 4 formula with its defaults."""
    if arch != "llama4" or not any(g.attention and not g.rope for g in cfg.layers):
        return None
    src = "llama.cpp llama4.cpp load_arch_hparams, no GGUF key"
    return QueryScale(beta=Value(0.1, None, 1, 1, f"f_attn_temp_scale 0.1 ({src})"),
                      length=Value(8192, None, 1, 1, f"n_attn_temp_floor_scale 8192 ({src})", "int"),
                      shift=1, nope_only=True, float32=True)


def read(doc: Doc) -> Fields:
    arch = doc.raw("general.architecture")
    if arch is None and doc.raw("split.no") not in (None, 0):
        raise NotARopeConfig(f"{doc.path}: split {doc.raw('split.no') + 1} of a GGUF model: its metadata is in the "
                             "first split (lint that one)")
    if not isinstance(arch, str) or not arch:
        raise NoRopeFound(f"{doc.path}: a GGUF without general.architecture (llama.cpp cannot load it)")
    doc.get("general.architecture", expect="str")
    a = arch
    if a in ROPE_NONE:
        raise NotARopeConfig(f"{doc.path}: llama.cpp runs {a} without RoPE (llama_model_rope_type: "
                             "LLAMA_ROPE_TYPE_NONE)")
    problems: list = []
    notes: list = [f"read as {LLAMACPP} loads it"]
    ctx = doc.get(f"{a}.context_length", expect="int")
    if ctx is None:
        raise NoRopeFound(f"{doc.path}: no {a}.context_length (llama.cpp requires it)")
    head, d = _dims(doc, a, problems)
    base = doc.get(f"{a}.rope.freq_base") or preset(DEFAULT_BASE, "llama.cpp default (no rope.freq_base)", None)
    base = _alpha_base(doc, a, base, head)
    scheme, params, orig, unread = _scheme(doc, a, ctx, d, base, problems, notes)
    train = orig if scheme is not None and orig is not None else ctx
    if scheme is not None and scheme.raw == "linear" and orig is None:
        f = params["factor"].number()
        train = derived(int(ctx.raw / f) if f and isinstance(ctx.raw, int) else None,
                        f"{ctx.key} / {params['factor'].where}: position interpolation maps the context onto the "
                        "trained length", params["factor"])
    fields = Fields(arch=f"llama.cpp {a}", head_dim=head, d=d, base=base, train_len=train, target=ctx,
                    scheme=scheme, params=params, original_max=orig,
                    dtype=preset("float32", "llama.cpp: ggml_rope_ext computes angles in float32 from int32 "
                                 "positions", None, "str"), notes=notes, problems=problems, unread=unread)
    _windows(doc, a, fields, _layer_count(doc, a, problems))
    return fields


def _layer_count(doc: Doc, a: str, problems: list) -> int | None:
    """``{arch}.block_count`` when llama.cpp loads it (0 < n <= LLAMA_MAX_LAYERS = 512, llama-model.cpp
    load_hparams: GGML_ASSERT), else None (RV041 for a count it refuses)."""
    n = doc.raw(f"{a}.block_count")
    if not isinstance(n, int) or isinstance(n, bool):
        return None
    if 0 < n <= MAX_LAYERS:
        return n
    v = doc.require(f"{a}.block_count", expect="any")
    problems.append(Problem(RUNTIME_REFUSES, v, f"{v.key} {n:,}: llama.cpp refuses the model (0 < n_layer <= "
                                                   f"LLAMA_MAX_LAYERS = {MAX_LAYERS}, llama-model.cpp load_hparams)"))
    return None


def _alpha_base(doc: Doc, a: str, base: Value, head: Value) -> Value:
    """hunyuan_vl: ``base * alpha^(D / (D - 2))`` with ``rope.scaling.alpha`` (models/hunyuan-vl.cpp, float32)."""
    alpha = doc.get(f"{a}.rope.scaling.alpha")
    if alpha is None:
        return base
    if a not in ALPHA_BASE:
        return base  # read by no other architecture's load_arch_hparams: RV030 reports it unread
    x, b, dim = alpha.number(), base.number(), head.number()
    if not x or x <= 0 or b is None or not dim or dim <= 2:
        return base
    import numpy as np

    f32 = np.float32
    got = float(f32(b) * f32(f32(x) ** f32(f32(dim) / f32(dim - 2))))
    return derived(got, f"{base.where} x {alpha.key} {x:g}^({int(dim)}/{int(dim) - 2}) (llama.cpp {ALPHA_BASE[a]})",
                   alpha, "number")


def _dims(doc: Doc, a: str, problems: list) -> tuple[Value, Value]:
    """(head dim, rotary dims) as load_hparams derives them."""
    embd = doc.get(f"{a}.embedding_length", expect="int")
    heads = doc.get(f"{a}.attention.head_count", expect="any")
    n = heads.raw[0] if heads is not None and isinstance(heads.raw, list) and heads.raw else (
        heads.raw if heads is not None else None)
    head = doc.get(f"{a}.attention.key_length", expect="int")
    if head is None:
        q = embd.raw // n if isinstance(n, int) and n > 0 and embd is not None and isinstance(embd.raw, int) else None
        ok = q is not None
        head = derived(q,
                       f"{embd.key if embd else 'embedding_length'} / {heads.key if heads else 'attention.head_count'}"
                       + (" (layer 0)" if heads is not None and isinstance(heads.raw, list) else "")
                       if ok else "not derivable: needs embedding_length and attention.head_count", embd or heads)
    d = doc.get(f"{a}.rope.dimension_count", expect="int") or head
    if a in FULL_ROTARY and d is not head and d.raw != head.raw:
        problems.append(Problem(RUNTIME_REFUSES, d, f"llama.cpp refuses this {a} model: {d.key} {d.raw!r} is not "
                                                       f"the head dim {head.raw!r} ('invalid n_rot', "
                                                       "llama-model.cpp load_hparams)"))
    return head, d


def _scheme(doc: Doc, a: str, ctx: Value, d: Value, base: Value, problems: list, notes: list):
    """``(scheme, params, original length, unread)`` from rope.scaling.* and the RoPE tensors."""
    from .gguf_factors import FREQS, LONG, SHORT, freq_factors, long_short

    p = f"{a}.rope.scaling."
    unread: list = []
    kind = doc.get(p + "type", expect="str")
    typ = str(kind.raw).strip() if kind is not None else "linear"
    if kind is not None and typ not in TYPES:  # no type key: "linear"
        problems.append(Problem(RUNTIME_REFUSES, kind, f"llama.cpp aborts on {kind.key} {kind.raw!r} (it knows "
                                                          f"{', '.join(TYPES)}: llama_rope_scaling_type_from_string)"))
        return None, {}, None, []
    factor = doc.get(p + "factor") or doc.get(f"{a}.rope.scale_linear")
    s = factor.number() if factor is not None else None
    s = 1.0 if s in (None, 0.0) or typ == "none" else s
    orig = doc.get(p + "original_context_length", expect="int")
    scheme, params = None, {}
    if typ == "linear" and s != 1.0:
        scheme = derived("linear", f"{kind.key if kind else 'rope.scaling.type absent: linear'}", factor, "str")
        params = {"factor": factor}
        orig = None
    elif typ == "yarn" and s != 1.0 and kind is not None and factor is not None:  # s != 1: a factor
        scheme, params = _yarn(doc, p, kind, factor, s, orig or preset(ctx.raw, f"{ctx.key} (llama.cpp default "
                                                                                "n_ctx_orig_yarn)", ctx, "int"),
                               problems, unread)
        orig = params["original_max_position_embeddings"]
    elif typ == "longrope" or (doc.has(LONG) and doc.has(SHORT) and not doc.has(FREQS)):
        # get_rope_factors applies rope_factors_long / _short whatever the scaling type (Phi-3's conversion
        # writes none); a linear / yarn factor beside them would scale twice
        if scheme is None and s != 1.0 and typ != "longrope" and factor is not None:
            problems.append(Problem(FACTORS_DISAGREE, factor, f"{LONG} / {SHORT} and {factor.key} {factor.raw!r}: "
                                                                    "llama.cpp applies both"))
        scheme, params = long_short(doc, a, kind or doc.require("general.architecture", expect="str"), orig,
                                    ctx, problems)
        orig = params.get("original_max_position_embeddings")
    else:
        orig = None
    if doc.has(FREQS):
        scheme, params, orig = freq_factors(doc, a, d, base, ctx, scheme, params, orig, problems, notes, unread)
    return scheme, params, orig, unread


def _yarn(doc: Doc, p: str, kind: Value, factor: Value, s: float, orig: Value, problems: list, unread: list):
    """YaRN as llama.cpp runs it (module docstring: its attention factor; :data:`YARN_KEYS_READ`: the keys only
    some architectures load, passed over elsewhere: RV044)."""
    arch = doc.raw("general.architecture")
    read: dict[str, Value | None] = {}
    for key, archs in YARN_KEYS_READ.items():
        v = doc.get(p + key)
        if v is not None and arch not in archs:
            runs = {"yarn_beta_fast": f"beta_fast {YARN_BETA_FAST:g}",
                    "yarn_beta_slow": f"beta_slow {YARN_BETA_SLOW:g}",
                    "yarn_ext_factor": "ext_factor 1", "yarn_attn_factor": "its own YaRN magnitude",
                    "yarn_log_multiplier": "0.1 ln s + 1"}[key]
            problems.append(Problem(IGNORES, v, f"llama.cpp's {arch} does not read {v.key} (only the "
                                                f"load_arch_hparams of src/models/"
                                                f"{', '.join(a + '.cpp' for a in sorted(archs))} does): it runs "
                                                f"{runs}"))
            v = None
        read[key] = v
    ext = read["yarn_ext_factor"]
    if ext is not None and ext.number() != 1.0:  # RV030: not modelled, said; the analysis is ext_factor 1's
        unread.append(replace(ext, note="YaRN's ext_factor other than llama.cpp's default 1: not modelled (the "
                                        "frequencies shown are ext_factor 1's)"))
    attn = doc.get(p + "attn_factor")
    mult = read["yarn_log_multiplier"]
    attn_n = attn.number() if attn is not None else None
    m = attn_n if attn_n is not None else 1.0
    mult_n = mult.number() if mult is not None else None
    if mult is not None and mult_n:
        mall = mult_n / (0.1 if doc.raw("general.architecture") in ("deepseek2", "deepseek32") else 1.0)
        ms = mall if doc.raw("general.architecture") == "deepseek2" and mall != 1.0 else 1.0

        def gm(x: float) -> float:
            return 1.0 if s <= 1 else 0.1 * x * math.log(s) + 1.0
        af, how = gm(ms) / gm(mall) * m, f"get_mscale(s, {ms:g}) / get_mscale(s, {mall:g}) from {mult.key}"
    else:
        # llama-context.cpp get_mscale: 1 for a factor <= 1 (a negative or zero factor included)
        af, how = (0.1 * math.log(s) + 1.0 if s > 1 else 1.0) * m, "0.1 ln s + 1 (llama.cpp's YaRN magnitude)"
    if attn is not None and m != 1.0:
        how += f" x {attn.key} {m:g}"
    yattn = read["yarn_attn_factor"]
    if yattn is not None:
        problems.append(Problem(IGNORES, yattn, f"llama.cpp overwrites {yattn.key} {yattn.raw!r} with its own "
                                                          f"YaRN magnitude {af:.6g} (llama-context.cpp 177-214)"))
    params = {"factor": factor, "original_max_position_embeddings": orig,
              "beta_fast": read["yarn_beta_fast"] or preset(ARCH_BETA_FAST.get(arch, YARN_BETA_FAST),
                                                            f"llama.cpp default yarn_beta_fast"
                                                            f"{' (grok.cpp)' if arch in ARCH_BETA_FAST else ''}", None),
              "beta_slow": read["yarn_beta_slow"] or preset(YARN_BETA_SLOW, "llama.cpp default yarn_beta_slow", None),
              "attention_factor": derived(af, how, factor, "number")}
    return derived("yarn", kind.key or "", kind, "str"), params  # kind: read from the file, with its key


def _windows(doc: Doc, a: str, f: Fields, n: int | None) -> None:
    """Sliding windows of the architecture (module docstring, :data:`SWA`) into ``f``; ``n`` layers (None: not
    known)."""
    key = f"{a}.attention.sliding_window"
    w = doc.get(key, expect="int")
    _nope(doc, a, w, f, n)
    if a == "llama4":
        if w is None or w.number() != 0:  # llama4.cpp: n_swa = 8192 (the key's value is not used), pattern 4
            f.chunk = preset(8192, "llama.cpp llama4.cpp: chunked attention, n_swa = 8192", w, "int")
            f.notes.append("layer il attends within chunks of 8,192 when il % 4 < 3 (llama4.cpp, pattern 4)")
        return
    if a == "phi3":
        if w is not None and w.number():
            f.problems.append(Problem(IGNORES, w, f"{key} {w.raw!r}: llama.cpp disables Phi's sliding window "
                                                            "(models/phi3.cpp: 'Phi SWA is currently disabled'): every "
                                                            "layer attends the whole context"))
        return
    rule = SWA.get(a)
    if rule is None:
        if a in SWA_ARCHS or w is not None:
            at = w or doc.get("general.architecture", expect="str")
            f.problems.append(Problem(LAYERS_UNKNOWN, at,
                               f"llama.cpp sets sliding windows for {a} in a way ropelaw does not model; "
                               "every layer is "
                               "read as attending the whole context with the main rotary"))
        return
    if w is None and rule["window"] is None or (w is not None and w.number() == 0):
        return
    window = w or preset(rule["window"], f"llama.cpp {rule['file']} default n_swa", None, "int")
    pat = doc.get(f"{a}.attention.sliding_window_pattern", expect="any")
    if pat is not None and isinstance(pat.raw, list):
        local = [i for i, x in enumerate(pat.raw) if x]
        f.notes.append(f"{pat.key}: {len(local)} of {len(pat.raw)} layers windowed")
    else:
        k = pat.raw if pat is not None and isinstance(pat.raw, int) else rule["pattern"]
        f.notes.append(f"layer il windowed when il % {k} < {k - 1} ({'' if pat else 'llama.cpp default '}pattern {k}, "
                       f"{rule['file']})")
    f.local_window = window
    lb = f.base if rule["base"] == "main" else (doc.get(f"{a}.rope.freq_base_swa")
                                                or preset(rule["base"], "llama.cpp default rope_freq_base_train_swa",
                                                          None))
    if rule["base"] == "main" and doc.has(f"{a}.rope.freq_base_swa"):
        lb = doc.get(f"{a}.rope.freq_base_swa")
    if rule["scale"] == "main" and lb is f.base:
        return  # the local layers run the main rotary
    f.local_rope = (lb, None if rule["scale"] != "main" else f.scheme,
                    {} if rule["scale"] != "main" else dict(f.params))
    if isinstance(n, int):
        f.n_layers = n


def _nope(doc: Doc, a: str, w: Value | None, f: Fields, n: int | None) -> None:
    """Layers that apply no RoPE (:data:`NOPE_STEP`, :data:`ROPE_SWITCH`)."""
    if a in ROPE_SWITCH and doc.raw(f"{a}.rope.scaling.finetuned") is False:
        at = doc.require(f"{a}.rope.scaling.finetuned", expect="any")
        f.problems.append(Problem(LAYERS_UNKNOWN, at, f"{at.key} false: llama.cpp applies no RoPE on any "
                                                                 f"{a} layer (models/granite*.cpp); not modelled"))
        return
    step = NOPE_STEP.get(a)
    if step is None or not isinstance(n, int) or n <= 0 or (a == "llama4" and w is not None and w.number() == 0):
        return
    f.nope_layers = tuple(i for i in range(n) if (i + 1) % step[1] == 0)
    f.n_layers = n
    f.notes.append(f"no RoPE on layers il with (il + 1) % {step[1]} == 0 (llama.cpp {step[0]})")


DIALECT = dialect(NAME, detect, read, doc_class=GgufDoc)
