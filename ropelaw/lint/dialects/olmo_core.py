"""OLMo-core saved configs (ai2-olmo-core==3.0.0): the ``config.json`` (or YAML) that OLMo-core's
``ConfigSaverCallback`` writes for an experiment, ``{"model": TransformerConfig, "dataset": ...,
"train_module": ..., "trainer": ...}``, or a bare ``TransformerConfig`` dump. OLMo-core experiments
are written in Python (``TransformerConfig.llama2_7B(...)``); ropelaw never runs them: lint the
config they save.

Model (``olmo_core/nn/transformer/config.py``, ``nn/attention/__init__.py``, ``nn/rope.py``):

- the attention of each layer: ``model.block.sequence_mixer`` (3.x) or ``model.block.attention``
  (older configs); named blocks ``model.block.<name>`` repeated by ``model.block_pattern``;
  ``model.block_overrides.<i>`` replaces layer i's block (``resolve_block_configs``);
- head dim: the attention's ``head_dim``, else ``d_model // n_heads`` (``n_heads`` default 16).
  Some OLMo-core branches set ``d_attn`` (= n_heads x head_dim) instead: head dim
  ``d_attn // n_heads`` (allenai/OLMo-core@71c886e7 ``src/olmo_core/nn/attention/__init__.py``);
- ``rope``: absent means no position encoding in that attention (NoPE); ``theta`` (default
  500,000), ``partial_rotary_factor`` (default 1.0: ``int(head_size * factor)`` dims),
  ``no_global_rope`` (full-attention layers get no RoPE), ``full_precision`` (default true:
  RoPE in float32 whatever the dtype), ``scaling``: ``PIRoPEScalingConfig`` (``factor``: linear),
  ``StepwiseRoPEScalingConfig`` (Llama 3.1 bands: ``factor``, low = 1 / (1 -
  ``low_freq_proportion``), high = 1 / ``high_freq_proportion``, ``old_context_len``; its
  ``to_hf_config``), ``YaRNRoPEScalingConfig`` (``factor``, ``beta_fast``, ``beta_slow``,
  ``old_context_len``), ``ABFRoPEScalingConfig`` (``new_theta`` replaces the base);
- ``sliding_window``: ``pattern`` of window sizes repeated over the layers (-1: full attention),
  ``force_full_attention_on_first_layer`` / ``..._last_layer`` (default true). A window W
  attends W positions (``window_size - 1`` back), as Hugging Face's ``sliding_window``.

Training length: ``dataset.sequence_length``, else ``train_module.max_sequence_length``. dtype:
the data-parallel ``param_dtype`` (``train_module.dp_config``, older ``model.dp_config``), else
``autocast_precision`` (``train_module`` or older ``trainer``: autocast, float32 parameters), else
``model.dtype`` (default float32).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..model import NotARopeConfig, Value
from ._framework import Doc, Fields, derived, dialect, head_dim_of, preset, rotary_dims
from ..model import Problem
from ..rules.value_rules import INVALID_TYPE

NAME = "olmo_core"
PKG = "ai2-olmo-core==3.0.0"
D_ATTN = "allenai/OLMo-core@71c886e7 AttentionConfig.d_attn"
MAX_LAYERS = 1 << 16  # per-layer resolution stops here (a hostile n_layers)


def _model(data: Mapping) -> str | None:
    """The dotted prefix of the TransformerConfig: ``"model."`` (an experiment) or ``""`` (bare)."""
    m = data.get("model")
    if isinstance(m, Mapping) and isinstance(m.get("block"), Mapping) and "d_model" in m:
        return "model."
    if isinstance(data.get("block"), Mapping) and "d_model" in data and "n_layers" in data:
        return ""
    return None


def detect(data: Mapping) -> bool:
    return _model(data) is not None


def _int(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _attention(doc: Doc, block: str) -> str | None:
    """The dotted path of a block's attention config, or None (another sequence mixer)."""
    mixer = doc.raw(f"{block}.sequence_mixer")
    if isinstance(mixer, Mapping):
        kind = str(mixer.get("type", "attention"))
        cls = str(mixer.get("_CLASS_", ""))
        if kind == "attention" and (not cls or cls.endswith("AttentionConfig")):
            return f"{block}.sequence_mixer"
        return None
    return f"{block}.attention" if isinstance(doc.raw(f"{block}.attention"), Mapping) else None


def _layers(doc: Doc, p: str, n_layers: int) -> list[str | None]:
    """Each layer's block path (``resolve_block_configs``: named blocks by pattern, then overrides)."""
    block = doc.raw(f"{p}block")
    pattern = doc.raw(f"{p}block_pattern")
    named = isinstance(pattern, list) and pattern and all(isinstance(b, str) for b in pattern)
    out: list[str | None] = []
    overrides = doc.raw(f"{p}block_overrides")
    over = ({str(k).strip() for k, v in overrides.items() if isinstance(v, Mapping)}
            if isinstance(overrides, Mapping) else set())
    names = {n: isinstance(doc.raw(f"{p}block.{n}"), Mapping) for n in set(pattern)} if named else {}
    for i in range(n_layers):
        path = (f"{p}block.{pattern[i % len(pattern)]}" if names[pattern[i % len(pattern)]] else None) if named \
            else f"{p}block"
        if str(i) in over:
            path = f"{p}block_overrides.{i}"
        out.append(path)
    if not named and not isinstance(block, Mapping):
        return [None] * n_layers
    return out


def _window(sw: Any, i: int, n: int) -> int:
    """``SlidingWindowAttentionConfig._get_window_size`` (-1: full attention); 0: unusable."""
    if not isinstance(sw, Mapping):
        return -1
    pattern = sw.get("pattern")
    if not isinstance(pattern, list) or not pattern or not all(_int(w) for w in pattern):
        return 0
    first = sw.get("force_full_attention_on_first_layer", True) is not False
    last = sw.get("force_full_attention_on_last_layer", True) is not False
    if (first and i == 0) or (last and i == n - 1):
        return -1
    w = pattern[(i - 1 if first else i) % len(pattern)]
    return w if w > 0 or w == -1 else 0


def per_layer(doc: Doc, p: str) -> tuple:
    """``(n_layers, att, rope_at, windows, no_global, used)``: each layer's attention config path (None: another
    sequence mixer), its rope-holding attention (None: no rope), its window (-1 full, 0 unusable), the attention
    configs with ``no_global_rope``, and the layers RoPE acts on (a full-attention layer with
    ``no_global_rope`` has none: ``AttentionConfig.build``)."""
    n_layers_v = doc.get(f"{p}n_layers", expect="int")
    n_layers = n_layers_v.raw if n_layers_v is not None and _int(n_layers_v.raw) and n_layers_v.raw > 0 else 1
    blocks = _layers(doc, p, min(n_layers, MAX_LAYERS))
    # the attention config of each of the few distinct blocks (a layer without a block: None, looked up below)
    att_of: dict[str | None, str | None] = {b: _attention(doc, b) for b in set(blocks) if b is not None}
    att = [att_of.get(b) for b in blocks]
    has_rope = {a: isinstance(doc.raw(f"{a}.rope"), Mapping) for a in set(att_of.values()) if a}
    rope_at = [a if a is not None and has_rope[a] else None for a in att]
    sw_of = {a: doc.raw(f"{a}.sliding_window") for a in set(att_of.values()) if a}
    windows = [_window(sw_of[a], i, n_layers) if a else -1 for i, a in enumerate(att)]
    no_global = {a for a in rope_at if a and doc.raw(f"{a}.rope.no_global_rope") is True}
    used = [i for i, a in enumerate(rope_at) if a and not (windows[i] == -1 and a in no_global)]
    return n_layers, att, rope_at, windows, no_global, used


def load(doc: Doc, o):
    """:func:`read`, assembled, with each group's layers (``indices``): the rotary layers (global / local),
    then the attention layers RoPE does not act on (NoPE: no rope config, or ``no_global_rope`` on a
    full-attention layer) and the layers whose sequence mixer is no attention (GatedDeltaNet, Mamba)."""
    from dataclasses import replace

    from ._framework import assemble

    cfg = assemble(doc, read(doc), o)
    n_layers, att, rope_at, windows, _, used = per_layer(doc, _model(doc.data) or "")
    if n_layers > MAX_LAYERS:
        return cfg
    full = tuple(i for i in used if windows[i] == -1)
    local = tuple(i for i in used if windows[i] != -1)
    layers = [replace(g, indices=full if g.label == "global layers" else local if g.label == "local layers"
                      else tuple(used)) for g in cfg.layers]
    nope = tuple(i for i, a in enumerate(att) if a is not None and i not in used)
    mixers = tuple(i for i, a in enumerate(att) if a is None)
    if (nope or mixers) and layers[0].label == "all layers":  # not all: say which
        layers[0] = replace(layers[0], label=group_label("local" if layers[0].window else "global", tuple(used)))
    main = layers[0]
    if nope:
        spans = {windows[i] for i in nope}
        w = next(iter(spans)) if len(spans) == 1 and -1 not in spans and 0 not in spans else None
        window = Value(w, None, main.d.line, main.d.column, f"window {w:,} ({PKG} Attention: {w:,} positions)",
                       "int") if w is not None else None
        layers.append(replace(main, label=group_label("NoPE", nope), rope=False, window=window, chunk=None,
                              indices=nope, params={}, block=None, pretrained_with_scheme=None))
    if mixers:
        layers.append(replace(main, label=group_label("without attention", mixers), rope=False, attention=False,
                              window=None, chunk=None, indices=mixers, params={}, block=None,
                              pretrained_with_scheme=None))
    return replace(cfg, layers=layers)


def group_label(role: str, idx: tuple) -> str:
    """``NoPE (8 layers)``, ``without attention (18 layers)``: as the Hugging Face dialect labels them."""
    return f"{role} ({len(idx):,} layer{'s' if len(idx) != 1 else ''})"


def read(doc: Doc) -> Fields:
    p = _model(doc.data) or ""
    problems: list = []
    notes: list = []
    n_layers, att, rope_at, windows, no_global, used = per_layer(doc, p)
    if not used:
        why = ("no_global_rope on layers without a sliding window" if no_global else
               "no layer's attention has a rope config (NoPE or another sequence mixer)")
        raise NotARopeConfig(f"{doc.path}: OLMo-core model has no RoPE: {why}")
    full = [i for i in used if windows[i] == -1]
    local = [i for i in used if windows[i] != -1]
    a = rope_at[full[0] if full else local[0]]  # the configuration the bound is about
    la = rope_at[local[0]] if local else None  # the windowed layers' configuration
    for r in {x for x in rope_at if x}:  # every layer's rope block is compared with the one read (note below)
        doc.consider_tree(f"{r}.rope")
    differ = sorted({rope_at[i] for i in used if doc.raw(f"{rope_at[i]}.rope") != doc.raw(f"{a}.rope")} - {la})
    if differ:
        notes.append(f"{len(differ)} other attention config(s) set another rope ({', '.join(differ[:3])}): "
                     f"read {a}.rope" + (f" and {la}.rope" if la and full else ""))

    heads = doc.get(f"{a}.n_heads", expect="int") or preset(16, f"n_heads: {PKG} AttentionConfig default", None, "int")
    head = doc.get(f"{a}.head_dim", expect="int")
    if head is None:
        d_attn = doc.get(f"{a}.d_attn", expect="int")
        if d_attn is not None:
            head = head_dim_of(d_attn, heads, problems)
            head = Value(head.raw, None, d_attn.line, d_attn.column, f"{d_attn.key} / {heads.where} ({D_ATTN})", "int")
        else:
            head = head_dim_of(doc.get(f"{p}d_model", expect="int"), heads, problems)
    d = rotary_dims(head, doc.get(f"{a}.rope.partial_rotary_factor"), problems)
    base, scheme, params, orig = _rope(doc, a)
    local_rope = None
    if la is not None and full and doc.raw(f"{la}.rope") != doc.raw(f"{a}.rope"):
        lb, ls, lp, _ = _rope(doc, la)
        local_rope = (lb, ls, lp)
    if doc.raw(f"{a}.rope.full_precision") is not False:
        notes.append("rope full_precision (default true): OLMo-core applies RoPE in float32 whatever the dtype")

    window, some = None, False
    if local:
        sizes = sorted({windows[i] for i in local})
        if 0 in sizes:
            sw = next(rope_at[i] for i in local if windows[i] == 0)
            v = doc.get(f"{sw}.sliding_window.pattern", expect="list")
            problems.append(Problem(INVALID_TYPE, v, f"{sw}.sliding_window.pattern must list window sizes > 0 or -1 "
                                                      f"({PKG} SlidingWindowAttentionConfig)",
                                    fix=f"list a window size > 0, or -1, in each entry of {sw}.sliding_window."
                                        "pattern"))
        else:
            sw = rope_at[local[0]]
            pv = doc.require(f"{sw}.sliding_window.pattern", expect="list")  # the list _window read them from
            w = sizes[-1]
            window = Value(w, pv.key, pv.line, pv.column,
                           f"window {w:,} on {len(local)} of {n_layers} layers ({PKG} Attention: {w:,} positions)",
                           "int")
            if len(sizes) > 1:
                notes.append(f"sliding windows {', '.join(f'{s:,}' for s in sizes)}: bounded by the largest")
            some = bool(full)
    if no_global and local and not full:
        notes.append("no_global_rope: the full-attention layers use no RoPE; only the windowed layers are bounded")

    seq = doc.get("dataset.sequence_length", "train_module.max_sequence_length", expect="int") if p else None
    return Fields(arch="olmo-core", head_dim=head, d=d, base=base, train_len=seq, target=seq, scheme=scheme,
                  params=params, original_max=orig, dtype=_dtype(doc, p), window=None if some else window,
                  local_window=window if some else None, local_rope=local_rope if some else None, notes=notes,
                  problems=problems)


def _rope(doc: Doc, a: str) -> tuple[Value, Value | None, dict, Value | None]:
    """``(base, scheme, params, original length)`` of the attention config at ``a``."""
    base = doc.get(f"{a}.rope.theta") or preset(500000, f"theta: {PKG} RoPEConfig default", None)
    scheme, params, orig = _scaling(doc, f"{a}.rope.scaling")
    if scheme is not None and scheme.raw == "abf":
        base, scheme = params.pop("new_theta"), None
    return base, scheme, params, orig


_SCALING = {"PIRoPEScalingConfig": "linear", "StepwiseRoPEScalingConfig": "llama3",
            "YaRNRoPEScalingConfig": "yarn", "ABFRoPEScalingConfig": "abf"}


def _scaling(doc: Doc, at: str) -> tuple[Value | None, dict, Value | None]:
    """``(scheme, params, original length)`` of a RoPE scaling config (see the module docstring)."""
    sc = doc.raw(at)
    if not isinstance(sc, Mapping):
        return None, {}, None
    cls = str(sc.get("_CLASS_", "")).rsplit(".", 1)[-1]
    kind = _SCALING.get(cls) or ("abf" if "new_theta" in sc else "yarn" if "beta_fast" in sc or "beta_slow" in sc
                                 else "llama3" if {"low_freq_proportion", "high_freq_proportion",
                                                   "old_context_len"} & set(sc) else "linear")
    block = doc.get(at, expect="mapping")
    src = f"{PKG} {cls or kind}"

    def get(key: str, default: Any, expect: str = "number") -> Value:
        return doc.get(f"{at}.{key}", expect=expect) or preset(default, f"{key}: {src} default", block, expect)
    scheme = derived(kind, f"{at} ({cls or 'fields'}): {kind}", block, "str")
    if kind == "abf":
        return scheme, {"new_theta": get("new_theta", 8_000_000)}, None
    if kind == "linear":
        return scheme, {"factor": get("factor", 2.0)}, None
    orig = get("old_context_len", 8192, "int")
    if kind == "yarn":
        return scheme, {"factor": get("factor", 8.0), "beta_fast": get("beta_fast", 32),
                        "beta_slow": get("beta_slow", 1), "original_max_position_embeddings": orig}, orig
    low_p, high_p = get("low_freq_proportion", 0.0), get("high_freq_proportion", 0.25)
    params = {"factor": get("factor", 32.0), "original_max_position_embeddings": orig}
    lo, hi = low_p.number(), high_p.number()
    if lo is not None and lo != 1:
        params["low_freq_factor"] = derived(1.0 / (1 - lo), f"1 / (1 - {low_p.where})", low_p, "number")
    if hi is not None and hi != 0:
        params["high_freq_factor"] = derived(1.0 / hi, f"1 / {high_p.where}", high_p, "number")
    return scheme, params, orig


def _dtype(doc: Doc, p: str) -> Value | None:
    for key in ("train_module.dp_config.param_dtype", f"{p}dp_config.param_dtype"):
        v = doc.get(key, expect="str")
        if v is not None:
            return v
    auto = doc.get("train_module.autocast_precision", "trainer.autocast_precision", expect="str")
    if auto is not None and isinstance(auto.raw, str):
        mixed = {"bfloat16": "bf16-mixed", "float16": "16-mixed"}.get(auto.raw.strip().lower())
        if mixed is not None:
            return Value(mixed, auto.key, auto.line, auto.column,
                         f"{auto.raw} autocast, {doc.raw(p + 'dtype') or 'float32'} parameters", "str")
        return auto
    return doc.get(f"{p}dtype", expect="str") or preset("float32", f"dtype: {PKG} TransformerConfig default", None,
                                                         "str")


DIALECT = dialect(NAME, detect, load=load)
