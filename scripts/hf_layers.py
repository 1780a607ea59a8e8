"""Regenerate ``ropelaw/data/hf_layers.json``: per-layer semantics of every RoPE decoder in the installed
transformers (read by :mod:`ropelaw.lint.layers` through :func:`ropelaw.data.hf_layers`).

    .venv/bin/python scripts/hf_layers.py                # transformers 4.57.1
    .venv-tf5/bin/python scripts/hf_layers.py            # transformers 5.23.0
    .venv/bin/python scripts/hf_layers.py jamba lfm2     # refresh those types only

Each run rewrites the table of its own transformers version and keeps the other one.
``tests/test_hf_layers.py`` checks the table of the installed version against transformers.

Nothing here reads modeling code: every entry is what tiny models of the type do when they run
(``probes.observe``), under probe configurations that differ in one thing at a time:

- ``kinds``: the per-layer list that names each layer's kind (``layer_types``), and how the config
  class fills it when a file has none (a rule fitted to the class's own output for 1..40 layers and
  for each scalar setting changed alone; ``"unknown"`` when no rule of :func:`fit_rule` explains it);
- ``nope``: a per-layer 0/1 list that switches RoPE off (``no_rope_layers``), the same way; or a per-layer
  list of bases whose entries the layers follow only by their truth (``"truth": true``: Muse's
  ``layer_rope_theta``, 0 no RoPE, any other number the main rotary), with the lengths other than one per
  layer that transformers runs (``"longer"``: ``"first"``, its first entries; else the error) or refuses;
- ``behaviour``: for each kind (and NoPE value), under each condition (a sliding window set or not,
  a chunk size set or not): attention or not, which rotary (``main``: the config's main RoPE
  settings; ``own``: the layer type's own settings; ``none``), and the span (``full``, ``window``
  with the offset between the keys a query sees and ``sliding_window``, ``chunk``; ``extra``: keys appended
  to the tokens', DeepSeek-V4's compressed keys, which the linter reports as not modelled);
- ``own``: where a layer type's own rotary comes from (``block``: ``rope_parameters[<kind>]``;
  ``key``: plain RoPE at the base in a config key such as ``rope_local_base_freq``);
- ``problems``: what the probes showed that these fields cannot express (the linter reports it);
- ``window_key`` (only where it is not ``sliding_window``): the name the config class stores the window under
  (its ``attribute_map``: Inkling 2's ``sliding_window_size``, the name its files write).

The behaviour is read with the rotary made distinguishable: the probe gives the main settings and
each layer type's own settings different bases, so a layer that runs the shared rotary cannot be
mistaken for one that runs its own.
"""

from __future__ import annotations

import math
import sys
from typing import Any

from hf_layer_rules import class_list, default_rule, fit_rule, layers_key  # noqa: F401  (fit_rule: documented here)

from ropelaw.lint.layers import probes, expand_rule, list_sig, sig_value

MAIN_BASE = 13_000.0  # probe bases: far apart, so a layer's base says whose it is
OWN_BASES = (3_100.0, 71_000.0, 530_000.0)
LOCAL_KEYS = ("rope_local_base_freq", "local_rope_theta")  # legacy keys of a local layers' base


# -----------------------------------------------------------------------------------------
# behaviour of each layer kind, from probes
# -----------------------------------------------------------------------------------------
def _per_layer_lists(d: dict, n: int) -> dict[str, list]:
    return {k: v for k, v in d.items() if isinstance(v, list) and len(v) == n}


def _nope_key(d: dict, n: int) -> str | None:
    for k, v in _per_layer_lists(d, n).items():
        if "rope" in k.lower() and all(x in (0, 1) for x in v):
            return k
    return None


def _bases_of(obs) -> list[float]:
    """The bases a layer's second pair can imply: f_1 = base^(-2/D), D the channels its cos/sin span
    (zero-frequency pairs included: proportional RoPE divides by the head dim), or one less (an odd
    rotary dim, as int(head_dim * partial_rotary_factor) can give)."""
    f = obs.rope.inv_freq
    if len(f) < 2 or f[1] <= 0 or f[1] >= 1:
        return []
    return [f[1] ** (-dd / 2) for dd in (obs.rope.channels, 2 * len(f) - 1)]


def _which(bases: list[float], named: dict[str, float]) -> str | None:
    for base in bases:
        for name, b in named.items():
            if abs(math.log(base / b)) < 0.05:
                return name
    return None


_SCHEME_KEYS = {"type", "factor", "original_max_position_embeddings", "beta_fast", "beta_slow", "mscale",
                "mscale_all_dim", "attention_factor", "low_freq_factor", "high_freq_factor", "short_factor",
                "long_factor", "truncate", "alpha"}


# schemes that are plain RoPE at factor 1 (YaRN: interpolation and extrapolation equal, mscale 1; linear, dynamic and
# Llama 3 divide by 1): a class whose own default rotary does not run is marked with its scheme at factor 1
UNIT_SCHEMES = ("yarn", "linear", "dynamic", "llama3")


def _plain_block(block: dict, base: float, keep_scheme: bool = False) -> dict:
    scheme = block.get("rope_type") or block.get("type")
    if keep_scheme and scheme in UNIT_SCHEMES:  # Mistral 4: its default rotary ignores partial_rotary_factor
        return {**{k: v for k, v in block.items() if k != "type"}, "rope_type": scheme, "factor": 1.0,
                "rope_theta": base}
    out = {k: v for k, v in block.items() if k not in _SCHEME_KEYS}
    if "llama_4_scaling_beta" in block:  # Ministral 3's query scale reads the original length: keep it
        out["original_max_position_embeddings"] = block.get("original_max_position_embeddings", 16384)
    out["rope_type"] = "mrope" if block.get("rope_type") == "mrope" or block.get("type") == "mrope" else "default"
    out["rope_theta"] = base
    return out


_NESTED_KEEP = ("kv_n_heads", "clip_qkv", "attn_pdrop", "rope_theta")  # DBRX attn_config: its own settings only


def marked_bases(d: dict, keep_scheme: bool = False) -> tuple[dict, dict[str, float]]:
    """Constructor arguments giving the main RoPE settings base :data:`MAIN_BASE` and each layer
    type's own settings (``rope_parameters`` per type, a local-base key) a base of its own, all plain
    RoPE (``keep_scheme``: a scheme of :data:`UNIT_SCHEMES` kept at factor 1); and the name -> base map to
    recognise them."""
    over: dict[str, Any] = {}
    named = {"main": MAIN_BASE}
    rp = d.get("rope_parameters")
    kinds = set(d.get("layer_types") or ()) | {"full_attention", "sliding_attention"}
    if isinstance(rp, dict) and rp and all(isinstance(v, dict) or (v is None and k in kinds) for k, v in rp.items()):
        blocks = {}
        others = iter(OWN_BASES)
        for t, blk in rp.items():
            if blk is None:  # no RoPE for that layer type (Beam's full-attention layers)
                blocks[t] = None
                continue
            b = MAIN_BASE if t == "full_attention" else next(others, None)
            if b is None:
                break
            blocks[t] = _plain_block(blk, b, keep_scheme)
            if t != "full_attention":
                named[f"own:{t}"] = b
        over["rope_parameters"] = blocks
    elif isinstance(rp, dict):
        over["rope_parameters"] = _plain_block(rp, MAIN_BASE, keep_scheme)
    else:
        for k in ("rope_theta", "rotary_emb_base", "rotary_base"):  # GPT-NeoX 4.x: rotary_emb_base
            if k in d:
                over[k] = MAIN_BASE
        rs = d.get("rope_scaling")
        over["rope_scaling"] = _plain_block(rs, MAIN_BASE) if isinstance(rs, dict) and (
            rs.get("type") == "mrope" or rs.get("rope_type") in ("mrope", "default") or "mrope_section" in rs) \
            else None  # "default": a class that indexes rope_scaling["rope_type"] (4.57.1's Mllama, tiny)
        if over["rope_scaling"] is not None:
            over["rope_scaling"].pop("rope_theta", None)
    for k, v in d.items():  # nested settings that hold the base (DBRX attn_config.rope_theta)
        if isinstance(v, dict) and "rope_theta" in v and k not in ("rope_parameters", "rope_scaling"):
            over[k] = {**{x: y for x, y in v.items() if x in _NESTED_KEEP}, "rope_theta": MAIN_BASE}
    local = iter(OWN_BASES[::-1])
    for k in LOCAL_KEYS:
        if k in d:
            b = next(local)
            over[k] = b
            named[f"key:{k}"] = b
    return over, named



def runnable_marks(model_type: str, class_name: str, base: dict, d: dict) -> tuple[dict, dict[str, float]]:
    """:func:`marked_bases` of ``d``; for a class whose forward fails with them and runs with its scheme kept at factor
    1 (Mistral 4: its own default rotary makes head_dim / 2 frequencies, ignoring partial_rotary_factor, and the
    rotated half of the head does not match them; YaRN, its default, reads the factor), those."""
    marks, named = marked_bases(d)
    kept = marked_bases(d, keep_scheme=True)
    if kept[0] == marks or not probes.observe(model_type, class_name, dict(base, **marks)).error:
        return marks, named
    return kept if not probes.observe(model_type, class_name, dict(base, **kept[0])).error else (marks, named)


def _behaviour(obs, named: dict[str, float]) -> tuple:
    """(attention, rotary, span, offset) of one observed layer; rotary "main" / "own:<kind>" /
    "key:<key>" / "none" / "?" (a base none of the probe's settings gave)."""
    if obs.span == "none":
        return (False, "none", "none", None)
    rot = "none" if obs.rope is None else (_which(_bases_of(obs), named) or "?")
    offset = None
    if obs.span == "window":
        offset = obs.size - probes.WINDOW
    elif obs.span == "chunk":
        offset = obs.size - probes.CHUNK
    return (True, rot, obs.span, offset)


def _conditions(d: dict) -> list[tuple[bool, bool]]:
    ws = (True, False) if "sliding_window" in d else (False,)
    cs = (True, False) if "attention_chunk_size" in d else (False,)
    return [(w, c) for w in ws for c in cs]


def cond_name(window: bool, chunk: bool) -> str:
    return ("window" if window else "no window") + ", " + ("chunk" if chunk else "no chunk")


def _layer_sig(probe, i: int, kinds_key, nope_key, nope_spec) -> str:
    """Layer ``i``'s signature in the behaviour table: its kind and NoPE entries (:func:`list_sig`), "-" without."""
    n = len(probe.layers)
    return "|".join(list_sig(spec, probes.layer_kinds(probe.config, k, n)[i]) if k else "-"
                    for k, spec in ((kinds_key, None), (nope_key, nope_spec)))


def _base_keys(d: dict, n: int, skip: tuple) -> list[str]:
    """Per-layer lists of numbers whose name speaks of RoPE or a base: candidate lists of per-layer bases."""
    return [k for k, v in _per_layer_lists(d, n).items() if k not in skip
            and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in v)
            and ("theta" in k.lower() or "rope" in k.lower())]


def _probe_bases(n: int) -> list:
    """Each layer its own base, layer 1 a 0 (one the class's defaults do not make 0)."""
    return [0 if i == 1 else OWN_BASES[i % len(OWN_BASES)] for i in range(n)]


def _truth_key(model_type, class_name, base, marks, d, n, kinds_key) -> tuple[str | None, dict]:
    """A per-layer list of bases that the layers follow only by its truth (Muse's ``layer_rope_theta``: 0 no RoPE,
    any other entry the main rotary, its value unread): ``(key, {"longer": ..., "shorter": ...})``, the lengths
    other than one per layer as transformers takes them (``"first"``: it runs the first ``n`` entries, the same
    layers; else its error); ``(None, {})`` without one. Measured with each layer given its own base and one a 0."""
    window = {"sliding_window": probes.WINDOW} if "sliding_window" in d else {}
    for key in _base_keys(d, n, (kinds_key,)):
        values = _probe_bases(n)
        probe = probes.observe(model_type, class_name, dict(base, **marks, **window, **{key: values}))
        if probe.error or not probe.layers:
            continue
        named = {"main": MAIN_BASE}
        if all(o.span == "none" or ((values[o.index] == 0) == (o.rope is None) and (
                o.rope is None or _which(_bases_of(o), named) == "main")) for o in probe.layers):
            lengths = {}
            for name, other in (("longer", values + [values[0]]), ("shorter", values[:-1])):
                p = probes.observe(model_type, class_name, dict(base, **marks, **window, **{key: other}))
                lengths[name] = p.error or ("first" if _fingerprint(p) == _fingerprint(probe) else "ran otherwise")
            return key, lengths
    return None, {}


def _base_list(model_type, class_name, base, marks, d, n, kinds_key, nope_key, entry) -> dict | None:
    """A per-layer list of bases (Granite SWA's ``layer_rope_theta``: 0 means NoPE): found by giving
    each layer its own base and 0 to one, and checking that every layer runs exactly its entry."""
    for key in _base_keys(d, n, (kinds_key, nope_key)):
        values = _probe_bases(n)
        over = dict(base, **marks, **{key: values})
        if "sliding_window" in d:
            over["sliding_window"] = probes.WINDOW
        probe = probes.observe(model_type, class_name, over)
        if probe.error:
            entry["problems"].append(f"{key} (one base per layer): {probe.error}")
            continue
        ok = True
        for obs in probe.layers:
            want = values[obs.index]
            if obs.span == "none":
                continue
            got = None if obs.rope is None else _which(_bases_of(obs), {"entry": want} if want else {})
            if (want == 0) != (obs.rope is None) or (want and got != "entry"):
                ok = False
        if ok:
            return {"key": key, "zero": "nope", "absent": "main"}
        entry["problems"].append(f"{key}: a per-layer list of bases that the layers do not follow one to one")
    return None


def _first_rope(probe):
    """The rotary of the first layer that applies RoPE (None: no layer does)."""
    return next((obs.rope for obs in probe.layers if obs.rope is not None), None)


def _channels(probe) -> int | None:
    """Rotated channels of the first layer that applies RoPE (zero-frequency pairs excluded)."""
    rope = _first_rope(probe)
    return None if rope is None else 2 * len(rope.inv_freq)


HEAD_DIM_KEYS = ("global_head_dim",)  # constructor arguments tried for a layer kind's own head dim


def _head_dims(model_type, class_name, base, d, kinds_key) -> dict:
    """Layer kinds whose rotary spans a head dim of their own (proportional RoPE appends zero
    frequencies up to the layer's head dim: Gemma 4's full-attention layers use ``global_head_dim``):
    kind -> {"default": head dim at the class defaults, "key": the argument that sets it or None}."""
    window = {"sliding_window": probes.WINDOW} if "sliding_window" in d else {}
    probe = probes.observe(model_type, class_name, dict(base, **window))
    if probe.error:
        return {}
    kinds = probes.layer_kinds(probe.config, kinds_key, len(probe.layers)) if kinds_key else None
    out: dict[str, dict] = {}
    for obs in probe.layers:
        if obs.rope is None or not obs.rope.zero_pairs:
            continue
        kind = sig_value(kinds[obs.index]) if kinds else "-"
        if obs.rope.channels != probe.config.get("head_dim") and kind not in out:
            out[kind] = {"default": obs.rope.channels, "key": None}
    for kind, spec in out.items():
        for key in HEAD_DIM_KEYS:
            other = probes.observe(model_type, class_name, dict(base, **window, **{key: 2 * spec["default"]}))
            if other.error:
                continue
            got = {o.rope.channels for o in other.layers if o.rope is not None and
                   (sig_value(kinds[o.index]) if kinds else "-") == kind}
            if got == {2 * spec["default"]}:
                spec["key"] = key
    return out


def _partial_reading(model_type, class_name, base, d) -> dict:
    """Whether ``partial_rotary_factor`` is read, written at the top level (``"top"``) or inside a
    flat ``rope_parameters`` (``"block"``, 5.x): the rotated dims at 0.5 over those at 1.0 (0.5: read;
    1.0: ignored), None when the model does not run with one of them. The same dims with other frequencies
    count as read (0.5): GLM-4V's mrope_section fixes how many pairs rotate, the factor their spacing
    base^(-2k / (head_dim * factor))."""
    window = {"sliding_window": probes.WINDOW} if "sliding_window" in d else {}
    out: dict[str, Any] = {}
    rp = d.get("rope_parameters")

    def place(where: str, f: float) -> dict:
        if where == "top":  # the only factor written: a block's own (GLM-4V's fill-in writes one) is taken out
            return {"partial_rotary_factor": f, **{k: {n: v for n, v in base[k].items() if n != "partial_rotary_factor"}
                                                   for k in ("rope_parameters", "rope_scaling")
                                                   if isinstance(base.get(k), dict)}}
        return {"rope_parameters": {**rp, "partial_rotary_factor": f}}

    for where in ("top", "block") if isinstance(rp, dict) and "rope_type" in rp else ("top",):
        got, freqs = [], []
        for f in (1.0, 0.5):
            probe = probes.observe(model_type, class_name, dict(base, **window, **place(where, f)))
            got.append(None if probe.error else _channels(probe))
            freqs.append(None if probe.error else _frequencies(probe))
        out[where] = None if None in got or not got[0] else round(got[1] / got[0], 4)
        if out[where] == 1.0 and freqs[0] != freqs[1]:
            out[where] = 0.5
    return out


def _frequencies(probe) -> list | None:
    """The frequencies of the first layer that applies RoPE (to 6 significant digits)."""
    rope = _first_rope(probe)
    return None if rope is None else [float(f"{float(x):.6g}") for x in rope.inv_freq]


# names of the settings whose effect on each layer's rotary and span is measured: anything that
# could concern positions (the verdict is measured; the names only bound the cost)
_CANDIDATE = ("rope", "rotary", "theta", "freq", "pos", "scal", "alpha", "beta", "window", "chunk", "nope",
              "partial", "interleave", "temperature", "attn", "base", "head_dim", "context", "length", "layer",
              "pattern", "interval", "local", "global")


def _fingerprint(probe) -> tuple:
    return tuple((o.span, o.size, None if o.rope is None else
                  (o.rope.inv_freq, round(o.rope.attention_factor, 9), o.rope.channels, o.rope.layout))
                 for o in probe.layers)


# the values a setting naming the position encoding is tried at when it holds a string or None (Granite 4.0's
# position_embedding_type: None / "nope" in the hybrid files, "rope" in granite-4.0-micro)
_ENCODINGS = ("rope", "nope")


def _perturbed(key: str, v: Any) -> list:
    """The values the setting ``key`` of value ``v`` is changed to, one at a time (a string or None: only for a
    setting of the position encoding)."""
    if isinstance(v, bool):
        return [not v]
    if isinstance(v, int) and ("window" in key or "chunk" in key) and v > probes.LENGTH:
        return [v * 2, probes.WINDOW]  # a span longer than the forward shows only when made shorter than it
        # (RecurrentGemma's attention_window_size 2048)
    if isinstance(v, int):
        return [v * 2 if v > 0 else 1]
    if isinstance(v, float):
        return [v * 1.5 if v else 0.5]
    if (v is None or isinstance(v, str)) and "position" in key:
        return [e for e in _ENCODINGS if e != v]
    return []


def _rotary_keys(model_type, class_name, base, d, nope_key=None) -> list[str]:
    """The scalar settings (top level and inside a flat ``rope_parameters``) that change some
    layer's rotary (frequencies, attention factor, rotated dims, NoPE) or span when changed alone,
    measured against the tiny model at its defaults (with a short window / chunk and its per-layer
    lists written out, so that a setting that only derives a default list is not counted)."""
    extra = {k: v for k, v in (("sliding_window", probes.WINDOW), ("attention_chunk_size", probes.CHUNK))
             if d.get(k) is not None}
    # the per-layer lists written out: a setting that only changes their defaults is read through them
    extra.update({k: v for k, v in _per_layer_lists(d, probes.LAYERS).items()
                  if k in ("layer_types",) or k == (nope_key or _nope_key(d, probes.LAYERS))})
    ref = probes.observe(model_type, class_name, dict(base, **extra))
    if ref.error:
        return []
    ref_print = _fingerprint(ref)
    out = []
    rp = d.get("rope_parameters")
    items = [(k, v, None) for k, v in d.items()]
    if isinstance(rp, dict) and "rope_type" in rp:
        items += [(k, v, "rope_parameters") for k, v in rp.items()]
    for key, value, parent in items:
        if key in ("num_hidden_layers", "vocab_size") or not any(c in key.lower() for c in _CANDIDATE):
            continue
        for new in _perturbed(key, value):
            change = {parent: {**rp, key: new}} if parent else {key: new}
            probe = probes.observe(model_type, class_name, {**base, **extra, **change})
            if not probe.error and _fingerprint(probe) != ref_print:
                out.append(f"{parent}.{key}" if parent else key)
                break
    amap = dict(getattr(probes.config_class(model_type), "attribute_map", None) or {})
    out += [amap[k] for k in out if amap.get(k) in d]  # the name a file writes it under (attention_window_size)
    return sorted(set(out))


def _scaled_marks(marks: dict) -> dict:
    """``marks`` with the main settings under linear scaling by 4 (5.x: the main / full-attention
    block of rope_parameters; 4.x: rope_scaling)."""
    out = dict(marks)
    lin = {"rope_type": "linear", "factor": 4.0}
    rp = out.get("rope_parameters")
    if isinstance(rp, dict) and "full_attention" in rp and isinstance(rp["full_attention"], dict):
        out["rope_parameters"] = {**rp, "full_attention": {**rp["full_attention"], **lin}}
    elif isinstance(rp, dict) and "rope_theta" in rp:
        if rp.get("rope_type") == "mrope":
            return {}
        out["rope_parameters"] = {**rp, **lin}
    elif "rope_scaling" in out and out["rope_scaling"] is None:
        out["rope_scaling"] = {"type": "linear", "rope_type": "linear", "factor": 4.0}
    else:
        return {}
    return out


def _mark_unscaled(model_type, class_name, base, marks, d, kinds_key, nope_key, seen, nope_spec=None) -> None:
    """Layers that run the main base but not the main scaling (Nemotron in 4.57.1 hard-codes plain
    RoPE; OLMo 3's sliding layers in 4.57.1): their rotary becomes ``"main-plain"``. Measured with
    the main settings under linear scaling by 4: a "main" layer whose slowest pair is not divided
    by 4 does not apply it."""
    lin = _scaled_marks(marks)
    if not lin:
        return
    for cond, table in seen.items():
        window, chunk = not cond.startswith("no window"), "no chunk" not in cond
        over = dict(base, **lin)
        if "sliding_window" in d:
            over["sliding_window"] = probes.WINDOW if window else None
        if "attention_chunk_size" in d:
            over["attention_chunk_size"] = probes.CHUNK if chunk else None
        ref = probes.observe(model_type, class_name, dict(base, **marks, **{k: over[k] for k in
                                                                           ("sliding_window", "attention_chunk_size")
                                                                           if k in over}))
        probe = probes.observe(model_type, class_name, over)
        if probe.error or ref.error:
            continue
        for obs, r in zip(probe.layers, ref.layers, strict=True):  # the same model: one entry per layer
            if obs.rope is None or r.rope is None or obs.problem:
                continue
            sig = _layer_sig(probe, obs.index, kinds_key, nope_key, nope_spec)
            b = table.get(sig)
            if b is None or b[1] != "main":
                continue
            ratio = obs.rope.inv_freq[-1] / r.rope.inv_freq[-1]
            if abs(ratio - 1) < 1e-3:
                table[sig] = (b[0], "main-plain", b[2], b[3])


def _computed_kinds(cls, base: dict, d: dict, n: int) -> tuple:
    """``(attribute, config dict with it)`` of the per-layer kinds a config class computes from other keys
    (Jamba's ``layers_block_type`` from ``attn_layer_period`` / ``attn_layer_offset``), ``(None, d)`` without one."""
    computed = probes.computed_kinds(cls)
    if computed is None:
        return None, d
    with probes.quiet():
        value = getattr(cls(**base), computed, None)
    if isinstance(value, list) and len(value) == n:
        return computed, {**d, computed: value}
    return None, d


def _kinds_key(cls, base: dict, d: dict, n: int) -> tuple:
    """``(kinds key, computed, indexed, d)``: ``layer_types``; else a kinds list the config class computes and no
    constructor argument sets (Jamba: ``computed``, added to ``d``); else a list of layer indices that names one
    kind's layers (Mllama's cross_attention_layers: ``indexed``); None for each it is not."""
    if isinstance(d.get("layer_types"), list) and len(d["layer_types"]) == n:
        return "layer_types", None, None, d
    for k in probes.COMPUTED_KINDS:  # the kinds list under that name, a constructor argument (Zamba 2)
        if isinstance(d.get(k), list) and len(d[k]) == n and len(set(map(str, d[k]))) > 1:
            return k, None, None, d
    computed, dc = _computed_kinds(cls, base, d, n)
    if computed is not None and (not probes.rotary_classes(probes.modeling_module(cls))
                                 or len(set(map(str, dc[computed]))) > 1):  # Jamba; RecurrentGemma's block_types
        return computed, computed, None, dc
    indexed = next((k for k in probes.INDEX_KINDS if isinstance(d.get(k), list)), None)
    return indexed, None, indexed, d


def index_rule(cls, base: dict, key: str) -> dict:
    """The kinds rule of a list of layer indices (:data:`.tiny.INDEX_KINDS`): ``{"rule": "indices", "at": kind
    of the listed layers, "value": kind of the others, "default": the list the config class holds when a file
    has none}``, the default measured at every depth of :data:`._rules.RULE_LAYERS` (``"unknown"`` when it
    changes with the depth)."""
    from hf_layer_rules import RULE_LAYERS

    at, other = probes.INDEX_KINDS[key]
    lists = [class_list(cls, base, key, n) for n in RULE_LAYERS]
    if any(lst is None or lst != lists[0] for lst in lists):
        return {"rule": "unknown", "why": f"the config class's default {key} changes with the depth"}
    return {"rule": "indices", "at": at, "value": other, "default": lists[0]}


def kind_aliases(cls, base: dict, key: str) -> dict:
    """The names a file may write in the per-layer list ``key`` that the config class stores under another name
    (5.x renames legacy layer kinds: Granite 4.0's "mamba" -> "linear_attention", "attention" -> "full_attention"):
    written -> stored, measured by building the class with every layer of each name transformers lists as legacy
    (``configuration_utils._LEGACY_LAYER_TYPE_REMAP``, absent in 4.57.1)."""
    import transformers.configuration_utils as cu

    out = {}
    for name in sorted(getattr(cu, "_LEGACY_LAYER_TYPE_REMAP", {})):
        stored = class_list(cls, base, key, probes.LAYERS, **{key: [name] * probes.LAYERS})
        if stored and len(set(stored)) == 1 and stored[0] != name:
            out[name] = stored[0]
    return out


def derive(model_type: str, class_name: str) -> dict:
    """The table entry of ``model_type`` (see the module docstring), or ``{"error": why}``."""
    cls = probes.config_class(model_type)
    try:
        base = probes.tiny_overrides(cls)
        with probes.quiet():
            d = cls(**base).to_dict()
    except Exception as exc:
        return {"error": f"config: {type(exc).__name__}: {str(exc)[:120]}"}
    n = probes.LAYERS
    entry: dict[str, Any] = {"class": cls.__name__, "layers_key": layers_key(cls), "kinds": None, "nope": None,
                             "bases": None, "behaviour": {}, "problems": []}
    alias = probes.window_key(cls)
    if alias != "sliding_window" and alias in d and "sliding_window" not in d:  # Inkling 2: sliding_window_size
        d = {**d, "sliding_window": d[alias]}  # the probes set it as sliding_window (the class's attribute_map)
        entry["window_key"] = alias
    amap = dict(getattr(cls, "attribute_map", None) or {})
    for span_key in ("sliding_window", "attention_chunk_size"):  # a span under another name (5.x RecurrentGemma:
        # sliding_window -> attention_window_size): the conditions set it by the name transformers reads it as
        if span_key not in d and amap.get(span_key) in d:
            d = {**d, span_key: d[amap[span_key]]}
    kinds_key, computed, indexed, d = _kinds_key(cls, base, d, n)
    nope_key = _nope_key(d, n)
    marks, named = runnable_marks(model_type, class_name, base, d)
    truth: dict[str, Any] = {}
    if nope_key is None:
        nope_key, lengths = _truth_key(model_type, class_name, base, marks, d, n, kinds_key)
        truth = {"truth": True, **lengths} if nope_key else {}
    lists_off = {k: v for k, v in base.items() if not (isinstance(v, list) and len(v) == n)}
    for key, slot in ((kinds_key, "kinds"), (nope_key, "nope")):
        if key is not None and key == indexed:
            entry[slot] = {"key": key, "default": index_rule(cls, lists_off, key)}
        elif key is not None:
            rule = default_rule(cls, lists_off, key, truth=slot == "nope" and bool(truth))
            empty = class_list(cls, lists_off, key, 24, **{key: []}) if key != computed else None
            if empty is not None and empty == expand_rule(rule, 24):
                rule["empty"] = "default"  # an empty list means the default (Llama 4's no_rope_layers: [])
            ref = class_list(cls, lists_off, key, 3) if key != computed else None
            if ref and class_list(cls, lists_off, key, 3, **{key: ref + ref[:1]}) == ref:
                rule["longer"] = "first"  # a longer list is cut to its first entries (DeepSeek-V4)
            entry[slot] = {"key": key, "default": rule, **(truth if slot == "nope" else {})}
            # the probe's list stored renamed (Granite 4.0's published "mamba" / "attention" under 5.x): the aliases
            aliases = kind_aliases(cls, lists_off, key) if key in base and base[key] != d.get(key) else {}
            if aliases:
                entry[slot]["aliases"] = aliases
    seen: dict[str, dict[str, tuple]] = {}
    built = 0
    for window, chunk in _conditions(d):
        cond = cond_name(window, chunk)
        over = dict(base, **marks)
        if "sliding_window" in d:
            over["sliding_window"] = probes.WINDOW if window else None
        if "attention_chunk_size" in d:
            over["attention_chunk_size"] = probes.CHUNK if chunk else None
        variants = [over]
        lists = {k: d[k] for k in (kinds_key, nope_key) if k is not None and k not in (computed, indexed)}
        if lists:  # the same lists shifted by one layer: the behaviour must follow the lists
            variants.append(dict(over, **{k: v[1:] + v[:1] for k, v in lists.items()},
                                 **probes.shifted_per_layer(over, n)))  # per-layer overrides stay with their layer
        if computed is not None and entry["kinds"]["default"].get("offset_key"):
            # the kinds move with the offset: the behaviour must follow them
            ok_ = entry["kinds"]["default"]["offset_key"]
            variants.append(dict(over, **{ok_: (entry["kinds"]["default"]["phase"] + 1)
                                          % entry["kinds"]["default"]["default"]}))
        if indexed is not None:  # the listed layers one later: the behaviour must follow the list
            variants.append(dict(over, **{indexed: [i + 1 for i in d[indexed]]}))
        if kinds_key not in (None, computed, indexed) and len(set(d[kinds_key])) > 1:  # every layer of one kind
            variants += [dict(over, **{kinds_key: [t] * n}) for t in sorted(set(d[kinds_key]))]
        for ov in variants:
            probe = probes.observe(model_type, class_name, ov)
            if probe.error:
                if ov is over:
                    entry["problems"].append(f"{cond}: {probe.error}")
                continue
            built += 1
            for obs in probe.layers:
                if obs.problem and obs.span != "none":
                    entry["problems"].append(f"{cond}: layer {obs.index}: {obs.problem}")
                    continue
                sig = _layer_sig(probe, obs.index, kinds_key, nope_key, entry["nope"])
                b = _behaviour(obs, named)
                old = seen.setdefault(cond, {}).setdefault(sig, b)
                if old != b:
                    entry["problems"].append(f"{cond}: layers of kind {sig} behave differently ({old} and {b}): "
                                             f"the behaviour is not a function of {kinds_key or 'nothing'} / "
                                             f"{nope_key or 'nothing'}")
    if not built:
        return {"error": entry["problems"][0] if entry["problems"] else "no probe built"}
    _mark_unscaled(model_type, class_name, base, marks, d, kinds_key, nope_key, seen, entry["nope"])
    entry["bases"] = _base_list(model_type, class_name, base, marks, d, n, kinds_key, nope_key, entry)
    entry["partial"] = _partial_reading(model_type, class_name, base, d)
    entry["head_dims"] = _head_dims(model_type, class_name, base, d, kinds_key)
    entry["rotary_keys"] = _rotary_keys(model_type, class_name, base, d, nope_key)
    entry["behaviour"] = {c: {sig: list(b) for sig, b in sorted(m.items())} for c, m in seen.items()}
    entry["problems"] = sorted(set(entry["problems"]))
    return entry


# why a type's tiny text forward is not what the model runs, or the probe cannot read it (read in its modeling code; the
# probe's error follows)
NOT_TEXT_FORWARD = {
    "csm": "a text-to-speech model (Sesame CSM): its input_ids are frames of audio codebook tokens (batch, length, "
           "num_codebooks), or text whose audio input_values its Mimi codec encodes; a text-only forward of the "
           "tiny model is not what it runs",
    "kyutai_speech_to_text": "a speech-to-text model: each step of its input_ids holds one text token and "
                             "num_codebooks (32) audio codebook tokens, shape (batch, length, 33); a text-only "
                             "forward does not fit its embedding",
}


def table(only: tuple[str, ...] = ()) -> dict:
    """The table of the installed transformers: ``types`` (model_type -> entry), ``wrappers``
    (composite model_type -> its text model_type) and ``not_covered`` (model_type -> why no entry:
    not a text decoder, or its tiny model cannot be built or run on CPU)."""
    import torch

    torch.set_num_threads(1)  # tiny models: one thread is faster than contending for the machine's
    cands, wrappers, skipped = probes.candidate_types()
    types, not_covered = {}, dict(skipped)
    todo = [(mt, name) for mt, name in cands if not only or mt in only]
    try:
        from tqdm import tqdm

        todo_iter = tqdm(todo, disable=not sys.stderr.isatty(), desc="model types")
    except ImportError:  # pragma: no cover
        todo_iter = todo
    for mt, name in todo_iter:
        entry = derive(mt, name)
        if "error" in entry:
            not_covered[mt] = (f"{NOT_TEXT_FORWARD[mt]} (the probe: {entry['error'][:100]})"
                               if mt in NOT_TEXT_FORWARD else entry["error"])
            continue
        spans = {b[2] for m in entry["behaviour"].values() for b in m.values()}
        if "unobserved" in spans:  # 4.x GPT-NeoX-Japanese, Open-Llama: rotary seen, span not
            not_covered[mt] = ("its layers attend by their own matmul (neither ALL_ATTENTION_FUNCTIONS nor torch's "
                               "scaled_dot_product_attention): the span each layer attends is not observed, so its "
                               "layers are not compared")
            continue
        if not spans & {"full", "window", "chunk", "extra"}:  # extra: a decoder whose keys go past the tokens
            not_covered[mt] = f"not a decoder: its attention is {', '.join(sorted(spans - {'none'})) or 'absent'}"
            continue
        types[mt] = entry
    return {"types": types, "wrappers": dict(sorted(wrappers.items())),
            "not_covered": dict(sorted(not_covered.items()))}


ABOUT = ("Per-layer semantics of every RoPE decoder in transformers, per version: versions: transformers version -> "
         "types (model_type -> class, layers_key, kinds and nope (the per-layer list's key and the config class's "
         "default rule), bases, behaviour (condition -> layer signature -> [attention, rotary, span, offset]), "
         "partial, head_dims, rotary_keys, problems), wrappers (composite model_type -> its text model_type), "
         "not_covered (model_type -> why no entry). Generated by scripts/hf_layers.py (its docstring says what each "
         "field means and how it is measured); do not edit. tests/test_hf_layers.py derives entries again from the "
         "installed transformers and compares.")


def main(argv: list[str] | None = None) -> None:
    import transformers

    from ropelaw import data

    only = tuple(argv if argv is not None else sys.argv[1:])
    new = table(only)
    if only:  # refresh some types of an existing table
        try:
            old = dict(data.hf_layers()[transformers.__version__])
        except (FileNotFoundError, KeyError):
            old = {"types": {}, "wrappers": {}, "not_covered": {}}
        for part in ("types", "not_covered"):
            old[part] = {k: v for k, v in old[part].items() if k not in only}
            old[part].update(new[part])
        new = {**old, "wrappers": new["wrappers"]}
    print(data.write_versions("hf_layers", transformers.__version__, new, about=ABOUT,
                              generated_by="python scripts/hf_layers.py [model_type ...] (under each transformers "
                                           "version; it keeps the other version's)",
                              source="tiny models of each model_type run on CPU by {versions} (PyPI), torch 2.13.0"))


if __name__ == "__main__":
    main()
