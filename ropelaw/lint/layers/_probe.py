"""Run transformers' own modeling code on tiny models and record, for every decoder layer, the
rotary it applies (frequencies, attention factor, rotated dims) and the span it attends (full,
sliding window W, chunk C), as the layer's forward does it.

Needs torch and transformers (the generator of ``hf_layers.py`` and the ``hf`` tests use it; the
linter never imports it). How a layer is observed (no reading of the modeling code):

- attention: transformers' attention modules call ``ALL_ATTENTION_FUNCTIONS[config._attn_implementation]``;
  a probe implementation (registered under :data:`PROBE`) records the query and key states each
  layer hands to attention (after its rotary) and the mask it attends with, then runs the model's
  own eager attention. The mask is built by transformers' ``eager_mask`` (registered under the same
  name), so it is the span the layer really has.
- rotary: each attention module is run a second time on the same inputs with the rotary replaced by
  the identity (cos 1, sin 0; every ``*RotaryEmbedding`` module returns the identity during that
  re-run). Queries equal in both runs: the layer applies no rotary (NoPE). Otherwise the rotated
  queries must equal the identity-run queries rotated by the cos/sin the layer received (half or
  interleaved pairs, over the first or last channels); the frequencies are the ``inv_freq`` buffer
  of the rotary module that produced that cos/sin, the attention factor the magnitude
  ``sqrt(cos^2 + sin^2)``.
"""

from __future__ import annotations

import inspect
import sys
from dataclasses import dataclass, field
from typing import Any

from ._tiny import (CHUNK, FILL_INS, LAYERS, LENGTH, MAX_PARAMS, MROPE, PROBE, WINDOW,  # noqa: F401
                    _modeling_module, _rotary_classes, _text_sub_config, candidate, candidate_types,
                    quiet, tiny_overrides)


@dataclass
class RopeObs:
    """The rotary one layer applies: pair frequencies (float32 values as Python floats, pairs
    with frequency 0 dropped), attention factor, rotated channels and how they pair."""

    inv_freq: tuple
    attention_factor: float
    channels: int  # channels the cos/sin cover (2 x pairs, zero-frequency pairs included)
    zero_pairs: int  # pairs with frequency exactly 0 (proportional RoPE): not rotated
    layout: str  # "half" (i, i + r/2) or "interleaved" (2i, 2i + 1)
    where: str  # "first" or "last" r channels of the head
    # True: no inv_freq buffer holds the frequencies (computed in forward): the slope of the angles
    # over the input's positions (float32 cos / sin: about 1e-5 relative for the slowest pairs)
    estimated: bool = False
    # a factor the layer multiplies its rotated queries by, the same for every head at a position (Ministral 3's
    # llama_4_scaling_beta: 1 + beta ln(1 + floor(p / original))): (at the first position, at the last); None: 1
    query_scale: tuple | None = None
    # estimated frequencies: the angles each rotating pair turned by, (positions, pairs) float64 as atan2 gives
    # them, and the first position (to compare with a model's frequencies where a slope is too coarse)
    angles: Any = None
    first_position: int = 0


@dataclass
class LayerObs:
    index: int
    rope: RopeObs | None  # None: the layer applies no rotary (NoPE)
    span: str  # "full", "window", "chunk", "bidirectional", "other"
    size: int | None  # W (keys a query sees, itself included) or C (chunk length)
    problem: str | None = None  # why the layer could not be read (then rope/span are not meaningful)


@dataclass
class Probe:
    model_type: str
    config: dict  # the config's to_dict(): what ropelaw is asked to read
    layers: list = field(default_factory=list)
    error: str | None = None


_STATE: dict[str, Any] = {"calls": [], "identity": False}


def _probe_attention(module, query, key, value, attention_mask, **kwargs):
    import torch

    _STATE["calls"].append({"module": module, "q": query.detach().clone(), "k": key.detach().clone(),
                            "mask": None if attention_mask is None else attention_mask.detach().clone(),
                            "identity": _STATE["identity"], "causal": getattr(module, "is_causal", None),
                            "layer": _STATE.get("layer")})
    eager = getattr(sys.modules[type(module).__module__], "eager_attention_forward", None)
    if eager is None:
        from transformers.integrations.sdpa_attention import sdpa_attention_forward as eager
    if _STATE.get("unmasked"):  # positions far from the tokens (see _positions): the masks do not fit them
        attention_mask = None
        kwargs.pop("sliding_window", None)
    with torch.no_grad():
        return eager(module, query, key, value, attention_mask, **kwargs)


_REGISTERED = False


def register() -> None:
    """Register the probe attention and its mask (transformers' eager mask) once."""
    global _REGISTERED
    if _REGISTERED:
        return
    from transformers import AttentionInterface
    from transformers.masking_utils import AttentionMaskInterface, eager_mask

    AttentionInterface.register(PROBE, _probe_attention)
    AttentionMaskInterface.register(PROBE, eager_mask)
    _REGISTERED = True


def build(model_type: str, class_name: str, overrides: dict):
    """``(config, model)`` for ``model_type`` with the constructor arguments ``overrides``, in eval
    mode, attention through the probe."""
    import torch
    from transformers import CONFIG_MAPPING

    register()
    cls = CONFIG_MAPPING[model_type]
    with quiet():
        cfg = cls(**overrides)
        cfg._attn_implementation = PROBE
        module = _modeling_module(cls)
        if "input_ids" not in inspect.signature(getattr(module, class_name).forward).parameters:
            raise TypeError(f"{class_name}.forward takes no input_ids: not a text decoder")
        with torch.device("meta"):
            size = sum(p.numel() for p in getattr(module, class_name)(cfg).parameters())
        if size > MAX_PARAMS:
            raise MemoryError(f"{size / 1e6:.0f}M parameters after shrinking (> {MAX_PARAMS / 1e6:.0f}M): a "
                              f"sub-model the probe does not shrink")
        torch.manual_seed(0)
        model = getattr(module, class_name)(cfg).eval()
    return cfg, model


def _layer_list(model, n: int):
    """The ModuleList of the ``n`` decoder layers (the longest list of length ``n``, outermost first)."""
    import torch

    for _, m in model.named_modules():
        if isinstance(m, torch.nn.ModuleList) and len(m) == n:
            return m
    return None


def _identity(x, outputs: set):
    """``x`` with every rotary output in it (by identity) replaced by the identity rotation."""
    import torch

    if id(x) in outputs:
        if isinstance(x, (tuple, list)) and len(x) == 2 and all(torch.is_tensor(t) for t in x):
            return type(x)((torch.ones_like(x[0]), torch.zeros_like(x[1])))
        if torch.is_tensor(x):
            return torch.ones_like(x) if x.is_complex() else None
    if isinstance(x, tuple) and any(id(t) in outputs for t in x):
        return tuple(_identity(t, outputs) if id(t) in outputs else t for t in x)
    if isinstance(x, dict) and any(id(t) in outputs for t in x.values()):
        return {k: _identity(t, outputs) for k, t in x.items()}
    return x


def _identity_output(out):
    import torch

    if isinstance(out, (tuple, list)) and len(out) == 2 and all(torch.is_tensor(t) for t in out):
        return type(out)((torch.ones_like(out[0]), torch.zeros_like(out[1])))
    if torch.is_tensor(out) and out.is_complex():
        return torch.ones_like(out)
    raise TypeError(f"rotary output of type {type(out).__name__}")


def _table(t, length: int, offset: int = 0):
    """A cos / sin / complex rotary tensor as (length, channels), batch and section axes dropped
    (the probe's batch rows share their positions; text-only multimodal RoPE has equal sections); a table
    of every position up to the last (4.57.1's Phi-3.5-MoE: the layer indexes it) as its last ``length`` rows."""
    while t.dim() > 2:
        t = t[0]
    if offset and t.shape[0] == offset + length:
        t = t[offset:]
    if t.shape[0] != length:
        raise ValueError(f"rotary table of shape {tuple(t.shape)}: no axis of {length} positions first")
    return t


def _span(mask, causal, length: int) -> tuple[str, int | None]:
    """(kind, size) of the keys each query may attend: "full" (causal, every earlier key), "window"
    (the last W keys, itself included), "chunk" (earlier keys of its chunk of C), "bidirectional", "other"."""
    import torch

    if mask is None:
        return ("full", None) if causal is not False else ("bidirectional", None)
    m = mask
    while m.dim() > 2:
        m = m[0]
    allowed = m if m.dtype == torch.bool else (m > torch.finfo(m.dtype).min / 2)
    allowed = allowed[-length:].cpu()
    if allowed.shape[1] > length:  # a mask padded past the input (4.57.1 static shapes): extra keys unused
        allowed = allowed[:, :length] if not bool(allowed[:, length:].any()) else allowed[:, -length:]
    i = torch.arange(length)
    causal_m = i[None, :] <= i[:, None]
    if bool((allowed & ~causal_m).any()):
        return ("bidirectional", None) if bool(allowed.all()) else ("other", None)
    counts = allowed.sum(-1)
    if bool((allowed == causal_m).all()):
        return "full", None
    w = int(counts.max())
    if bool((allowed == (causal_m & (i[:, None] - i[None, :] < w))).all()):
        return "window", w
    c = int(counts.max())
    if bool((allowed == (causal_m & ((i[:, None] // c) == (i[None, :] // c)))).all()):
        return "chunk", c
    return "other", None


def _rotate(q, cos, sin, layout: str, where: str):
    """``q`` (..., T, D) with its first / last r channels rotated by (T, r) cos / sin."""
    import torch

    r = cos.shape[-1]
    x = q[..., :r] if where == "first" else q[..., q.shape[-1] - r:]
    if layout == "half":
        x1, x2 = x[..., : r // 2], x[..., r // 2:]
        rot = torch.cat((-x2, x1), dim=-1)
    else:
        x1, x2 = x[..., 0::2], x[..., 1::2]
        rot = torch.stack((-x2, x1), dim=-1).flatten(-2)
    y = x * cos + rot * sin
    if where == "first":
        return torch.cat((y, q[..., r:]), dim=-1)
    return torch.cat((q[..., : q.shape[-1] - r], y), dim=-1)


def _pair_tables(received, length: int, offset: int = 0) -> list:
    """Per-pair (cos, sin) tables, float64 (T, pairs), that the received rotary can mean: a complex
    tensor (one entry per pair); a real table whose halves repeat (pairs = first half), whose even and
    odd channels repeat (pairs = even channels), or neither (one entry per pair, as gpt-oss builds it)."""
    import torch

    if torch.is_tensor(received) and received.is_complex():
        z = _table(received, length, offset).to(torch.complex128)
        return [(z.real, z.imag)]
    cos, sin = (_table(t, length, offset).double() for t in received)
    r = cos.shape[-1]
    out = []
    if r % 2 == 0 and torch.equal(cos[:, : r // 2], cos[:, r // 2:]) and torch.equal(sin[:, : r // 2], sin[:, r // 2:]):
        out.append((cos[:, : r // 2], sin[:, : r // 2]))
    if r % 2 == 0 and torch.equal(cos[:, 0::2], cos[:, 1::2]) and torch.equal(sin[:, 0::2], sin[:, 1::2]):
        out.append((cos[:, 0::2], sin[:, 0::2]))
    if not out:
        out.append((cos, sin))
    return out


def _channels(c, layout: str):
    """A per-pair table (T, pairs) spread over the channels of ``layout``."""
    import torch

    return torch.cat((c, c), -1) if layout == "half" else torch.repeat_interleave(c, 2, -1)


def _pair_angles(cos, sin):
    import torch

    return torch.atan2(sin, cos), torch.hypot(cos, sin)


def _inv_freq_candidates(module):
    """Every 1-D float tensor of ``module`` whose name says inv_freq (buffers and plain attributes)."""
    import torch

    seen, out = set(), []
    items = list(module.named_buffers()) + [(k, v) for k, v in vars(module).items() if torch.is_tensor(v)]
    for name, t in items:
        if "inv_freq" in name and torch.is_tensor(t) and t.dim() == 1 and t.is_floating_point() and id(t) not in seen:
            seen.add(id(t))
            out.append((name, t.detach().double()))
    return out


def observe(model_type: str, class_name: str, overrides: dict, length: int = LENGTH, offset: int = 0) -> Probe:
    """Build the tiny model and record every decoder layer (see the module docstring). Models whose
    attention does not go through ``ALL_ATTENTION_FUNCTIONS`` (transformers 4.57.1's per-implementation
    attention classes, Falcon) are observed through their rotary functions instead (:func:`_observe_functions`)."""
    try:
        cfg, model = build(model_type, class_name, overrides)
    except KeyError as exc:
        if PROBE not in str(exc):
            return Probe(model_type, {}, [], f"cannot build: KeyError: {str(exc)[:160]}")
        return _observe_functions(model_type, class_name, overrides, length, offset)
    except Exception as exc:
        return Probe(model_type, {}, [], f"cannot build: {type(exc).__name__}: {str(exc)[:160]}")
    found = _observe_attention(model_type, cfg, model, length, offset)
    if found.error and found.error.startswith("no layer calls attention"):
        return _observe_functions(model_type, class_name, overrides, length, offset)
    return found


def _observe_attention(model_type: str, cfg, model, length: int, offset: int = 0) -> Probe:
    import torch

    config = cfg.to_dict()
    n = cfg.num_hidden_layers
    layers = _layer_list(model, n)
    if layers is None:
        return Probe(model_type, config, [], f"no list of {n} decoder layers in {type(model).__name__}")
    state = {"layer": None, "outputs": {}, "received": {}, "replaced": {}, "inner": {}, "offset": offset,
             "rotaries": [m for m in model.modules() if type(m).__name__.endswith("RotaryEmbedding")]}

    def rot_hook(m, args, kwargs, out):
        if _STATE["identity"]:
            state["inner"][state["layer"]] = True
            return _identity_output(out)
        state["outputs"][id(out)] = (m, out, state["layer"])
        if isinstance(out, (tuple, list)):
            for t in out:
                state["outputs"][id(t)] = (m, out, state["layer"])
        return None

    def layer_pre(i):
        def hook(m, args):
            state["layer"] = _STATE["layer"] = i
        return hook

    handles = []
    _STATE["unmasked"] = bool(offset)
    try:
        for m in state["rotaries"]:
            handles.append(m.register_forward_hook(rot_hook, with_kwargs=True))
        for i, layer in enumerate(layers):
            handles.append(layer.register_forward_pre_hook(layer_pre(i)))
        ids, where = _input_ids(length), _positions(length, offset)
        # pass 1: which modules call attention
        _STATE["calls"] = []
        with torch.no_grad(), quiet():
            model(input_ids=ids, use_cache=False, **where)
        attn = {c["module"] for c in _STATE["calls"]}
        if not attn:
            return Probe(model_type, config, [], "no layer calls attention through ALL_ATTENTION_FUNCTIONS")

        def attn_hook(m, args, kwargs, out):
            if _STATE["identity"]:
                return None
            ids_ = set(state["outputs"])
            args2 = tuple(_identity(a, ids_) for a in args)
            kwargs2 = {k: _identity(v, ids_) for k, v in kwargs.items()}
            got = [a for a, b in zip(args, args2) if a is not b] + \
                  [v for k, v in kwargs.items() if kwargs2[k] is not v]
            i = state["layer"]
            if got:
                state["received"].setdefault(i, got[0])
            state["replaced"][i] = bool(got)
            _STATE["identity"] = True
            try:
                with torch.no_grad():
                    m(*args2, **kwargs2)
            finally:
                _STATE["identity"] = False
            return None

        for m in attn:
            handles.append(m.register_forward_hook(attn_hook, with_kwargs=True))
        state["outputs"].clear()
        _STATE["calls"] = []
        calls = _STATE["calls"]
        with torch.no_grad(), quiet():
            model(input_ids=ids, use_cache=False, **where)
    except Exception as exc:
        return Probe(model_type, config, [], f"forward fails: {type(exc).__name__}: {str(exc)[:160]}")
    finally:
        for h in handles:
            h.remove()
        _STATE["layer"] = None
        _STATE["unmasked"] = False
    return Probe(model_type, config, _read_layers(calls, state, n, length, layers))


def _input_ids(length: int):
    import torch

    return torch.randint(3, 128, (2, length), generator=torch.Generator().manual_seed(0))


def _positions(length: int, offset: int) -> dict:
    """The forward's position keywords: none at offset 0 (the model numbers its tokens 0 .. length - 1),
    else ``position_ids`` offset .. offset + length - 1, and ``cache_position`` the same when
    ``_STATE["cache_position"]`` says so (4.57.1's Phi-3.5-MoE sizes its cos / sin table by the last cache
    position). Such a forward reads the rotary only: masks do not fit those positions (:func:`_probe_attention`
    then attends without one)."""
    import torch

    if not offset:
        return {}
    pos = torch.arange(length) + offset
    out = {"position_ids": pos[None].expand(2, length)}
    if _STATE.get("cache_position"):
        out["cache_position"] = pos
    return out


def _observe_functions(model_type: str, class_name: str, overrides: dict, length: int, offset: int = 0) -> Probe:
    """Observation through the modeling module's rotary functions: every module-level function named
    ``apply_rotary*`` taking (q, k, cos, sin, ...) is wrapped to record its queries before and after,
    and ``torch.nn.functional.scaled_dot_product_attention`` to record each layer's mask (the model
    runs with attn_implementation "sdpa")."""
    import torch
    from transformers import CONFIG_MAPPING

    cls = CONFIG_MAPPING[model_type]
    module = _modeling_module(cls)
    try:
        with quiet():
            cfg = cls(**overrides)
            cfg._attn_implementation = "sdpa"
            torch.manual_seed(0)
            model = getattr(module, class_name)(cfg).eval()
    except Exception as exc:
        return Probe(model_type, {}, [], f"cannot build: {type(exc).__name__}: {str(exc)[:160]}")
    return observe_functions(model_type, cfg, model, module, length, offset)


def observe_functions(model_type: str, cfg, model, module, length: int = LENGTH, offset: int = 0) -> Probe:
    """Every decoder layer of ``model`` (built with attn_implementation "sdpa" from ``cfg``; ``module``
    its modeling module) observed through the module's rotary functions (see :func:`_observe_functions`)."""
    import torch
    import torch.nn.functional as F

    config = cfg.to_dict()
    n = cfg.num_hidden_layers
    layers = _layer_list(model, n)
    if layers is None:
        return Probe(model_type, config, [], f"no list of {n} decoder layers in {type(model).__name__}")
    calls: list = []
    state = {"layer": None, "outputs": {}, "offset": offset,
             "rotaries": [m for m in model.modules() if type(m).__name__.endswith("RotaryEmbedding")]}

    def wrap(fn):
        def wrapper(q, k, cos, sin, *args, **kwargs):
            out = fn(q, k, cos, sin, *args, **kwargs)
            calls.append({"kind": "rope", "layer": state["layer"], "q": out[0].detach().clone(),
                          "qp": q.detach().clone(), "received": (cos, sin)})
            return out
        return wrapper

    def wrap_one(fn):  # GPT-J / CodeGen: apply_rotary_pos_emb(tensor, sin, cos), keys then queries
        def wrapper(x, sin, cos, *args, **kwargs):
            out = fn(x, sin, cos, *args, **kwargs)
            calls.append({"kind": "rope", "layer": state["layer"], "q": out.detach().clone(),
                          "qp": x.detach().clone(), "received": (cos, sin)})
            return out
        return wrapper

    def sdpa(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, *args, **kwargs):
        calls.append({"kind": "attn", "layer": state["layer"],
                      "mask": None if attn_mask is None else attn_mask.detach().clone(), "causal": is_causal})
        if offset:  # far positions: the rotary is read, the mask does not fit them (see _positions)
            attn_mask, is_causal = None, False
        return _sdpa(query, key, value, attn_mask, dropout_p, is_causal, *args, **kwargs)

    names = [n_ for n_, f in vars(module).items() if n_.startswith("apply_rotary") and callable(f)
             and list(inspect.signature(f).parameters)[:4] == ["q", "k", "cos", "sin"]]
    ones = [n_ for n_, f in vars(module).items() if n_.startswith("apply_rotary") and callable(f)
            and list(inspect.signature(f).parameters)[:3] == ["tensor", "sin", "cos"]]
    if not names and not ones and _rotary_classes(module):
        return Probe(model_type, config, [], "attention not through ALL_ATTENTION_FUNCTIONS and no "
                                             "apply_rotary*(q, k, cos, sin) function to observe")
    # (no rotary class and no rotary function at all, 4.57.1's Jamba: every attention layer is NoPE)
    saved = {n_: getattr(module, n_) for n_ in names + ones}
    _sdpa = F.scaled_dot_product_attention
    handles = []

    def layer_pre(i):
        def hook(m, args):
            state["layer"] = i
        return hook

    try:
        for n_ in names:
            setattr(module, n_, wrap(saved[n_]))
        for n_ in ones:
            setattr(module, n_, wrap_one(saved[n_]))
        F.scaled_dot_product_attention = sdpa
        for i, layer in enumerate(layers):
            handles.append(layer.register_forward_pre_hook(layer_pre(i)))
        with torch.no_grad(), quiet():
            model(input_ids=_input_ids(length), use_cache=False, **_positions(length, offset))
    except Exception as exc:
        return Probe(model_type, config, [], f"forward fails: {type(exc).__name__}: {str(exc)[:160]}")
    finally:
        for n_, f in saved.items():
            setattr(module, n_, f)
        F.scaled_dot_product_attention = _sdpa
        for h in handles:
            h.remove()
    out = []
    for i in range(n):
        attn = next((c for c in calls if c["layer"] == i and c["kind"] == "attn"), None)
        rope = next((c for c in calls if c["layer"] == i and c["kind"] == "rope"), None)
        if attn is None and rope is None:
            out.append(LayerObs(i, None, "none", None, "the layer calls no attention (not an attention layer)"))
            continue
        if attn is None:  # it rotates and attends by its own matmul (GPT-J's _attn): its span is not seen
            span, size = "unobserved", None
        else:
            span, size = _span(attn["mask"], attn["causal"] or None, length)
        if attn is not None and attn["mask"] is None and not attn["causal"]:
            span, size = "full", None  # sdpa with neither mask nor is_causal only for a 1-token query
        if rope is None:
            out.append(LayerObs(i, None, span, size))
            continue
        q, qp = rope["q"].double(), rope["qp"].double()
        try:
            out.append(_read_rope(i, q, qp, rope["received"], state, length, span, size))
        except (ValueError, TypeError, RuntimeError, AttributeError, IndexError) as exc:
            out.append(LayerObs(i, None, span, size, f"rotary not read: {exc}"))
    return Probe(model_type, config, out)


def _read_layers(calls, state, n: int, length: int, layers) -> list:
    import torch

    out = []
    for i in range(n):
        mine = [c for c in calls if c["layer"] == i]
        rot = next((c for c in mine if not c["identity"]), None)
        plain = next((c for c in mine if c["identity"] and rot is not None and c["module"] is rot["module"]), None)
        if rot is None:
            out.append(LayerObs(i, None, "none", None, "the layer calls no attention (not an attention layer)"))
            continue
        span, size = _span(rot["mask"], rot["causal"], length)
        if plain is None:
            out.append(LayerObs(i, None, span, size, "no identity re-run of its attention was recorded"))
            continue
        q, qp = rot["q"].double(), plain["q"].double()
        if q.shape != qp.shape:
            out.append(LayerObs(i, None, span, size, f"queries change shape under the identity rotary"))
            continue
        if torch.equal(rot["q"], plain["q"]) and torch.equal(rot["k"], plain["k"]):
            # NoPE: it received a rotary and does not apply it, or it receives none and no
            # RotaryEmbedding module runs inside it (transformers builds every rotary in one)
            out.append(LayerObs(i, None, span, size))
            continue
        received = state["received"].get(i)
        if received is None:  # computed inside the layer
            inner = [v for v in state["outputs"].values() if v[2] == i]
            received = inner[0][1] if inner else None
        if received is None:
            out.append(LayerObs(i, None, span, size, "rotates its queries but no rotary output reached it"))
            continue
        found, why = None, "nothing it received is a rotary table"
        for cand in _rotary_candidates(received):
            try:
                found = _read_rope(i, q, qp, cand, state, length, span, size)
                break
            except (ValueError, TypeError, RuntimeError, AttributeError, IndexError) as exc:
                why = str(exc)
        out.append(found or LayerObs(i, None, span, size, f"rotary not read: {why}"))
    return out


def _rotary_candidates(x):
    """The rotary tables inside what a layer received: a (cos, sin) pair, a complex tensor, or the
    values of a dict / the items of a tuple of those."""
    import torch

    if torch.is_tensor(x):
        return [x] if x.is_complex() else []
    if isinstance(x, (tuple, list)) and len(x) == 2 and all(torch.is_tensor(t) and not t.is_complex() for t in x):
        return [x]
    items = list(x.values()) if isinstance(x, dict) else list(x) if isinstance(x, (tuple, list)) else []
    return [c for item in items for c in _rotary_candidates(item)]


def _read_rope(i, q, qp, received, state, length, span, size) -> LayerObs:
    import torch

    tables = _pair_tables(received, length, int(state.get("offset") or 0))
    # q: (B, H, T, D) or (B, T, H, D): put the positions second to last
    if q.shape[-2] != length:
        q, qp = q.transpose(-2, -3), qp.transpose(-2, -3)
    scale = float(q.abs().max()) + 1.0
    fit = None
    for pc, ps in tables:
        if 2 * pc.shape[-1] > q.shape[-1]:
            continue
        for layout in ("half", "interleaved"):
            cos, sin = _channels(pc, layout).to(qp.dtype), _channels(ps, layout).to(qp.dtype)
            for where in ("first", "last"):
                pred = _rotate(qp, cos, sin, layout, where)
                err = float((pred - q).abs().max()) / scale
                if err >= 1e-4:  # an L2 norm after the rotary (Llama 4's qk_norm): compare directions
                    unit = lambda x: x / x.norm(dim=-1, keepdim=True).clamp_min(1e-30)  # noqa: E731
                    err = 1e-4 + float((unit(pred) - unit(q)).abs().max())
                    err = err if err < 2e-4 else 1.0
                if err < 2e-4 and (fit is None or err < fit[0]):
                    fit = (err, layout, where, pc, ps)
    if fit is None:
        raise ValueError("its queries are not the identity-run queries rotated by the cos/sin it received "
                         "(half or interleaved pairs, first or last channels)")
    _, layout, where, pc, ps = fit
    qscale = _query_scale(q, _rotate(qp, _channels(pc, layout).to(qp.dtype), _channels(ps, layout).to(qp.dtype),
                                     layout, where), float(_pair_angles(pc, ps)[1].median()))
    r = 2 * pc.shape[-1]
    angles, mag = _pair_angles(pc, ps)
    factor = float(mag.median())
    entry = state["outputs"].get(id(received)) or (state["outputs"].get(id(received[0]))
                                                    if isinstance(received, (tuple, list)) else None)
    modules = ([entry[0]] if entry is not None else []) + state["rotaries"]
    freq = None
    first = int(state.get("offset") or 0)
    for module in modules:  # the module that produced it first; else any rotary of the model
        best = None
        for name, f in _inv_freq_candidates(module):
            if f.shape[0] != angles.shape[-1]:
                continue
            err = _angle_error(angles, f, first)
            if err < 1e-6 + 1e-6 * float(f.abs().max()) and (best is None or err < best[0]):
                best = (err, f)
        if best is not None:
            freq = best[1]
            break
    estimated = freq is None
    if estimated:  # computed in forward, kept nowhere (Phi-3.5-MoE in 4.57.1): the slope of the angles
        import numpy as np

        a = np.unwrap(angles.numpy(), axis=0)  # (T, pairs): (offset + m) * f mod 2 pi, unwrapped along the positions
        m = np.arange(a.shape[0], dtype=float)[:, None]
        if state.get("offset"):  # a + 2 pi k = (offset + m) f: least squares with an intercept
            m, a = m - m.mean(), a - a.mean(0)
        freq = torch.from_numpy((m * a).sum(0) / (m * m).sum(0))
        freq = torch.where(freq.abs() < 1e-12, torch.zeros_like(freq), freq)
    zero = int((freq == 0).sum())
    kept = tuple(float(x) for x in freq if x != 0)
    table = angles[:, freq != 0].numpy() if estimated else None
    return LayerObs(i, RopeObs(kept, factor, r, zero, layout, where, estimated, qscale, table,
                               int(state.get("offset") or 0)), span, size)


def _angle_error(angles, f, first: int) -> float:
    """How far the angles a layer's pairs turned (positions, pairs; from ``first`` on) are from ``p f``: at the
    second position when the forward starts at 0 (the table's own f, to float32), else past float32's
    rounding of p f (2^-21 |p f|, the far positions of a position offset)."""
    import math

    import torch

    if not first:
        return float((angles[1] - f).abs().max())
    pos = (first + torch.arange(angles.shape[0], dtype=torch.float64))[:, None]
    pred = pos * f[None, :]
    diff = torch.remainder(angles - pred + math.pi, 2 * math.pi) - math.pi
    excess = diff.abs() - 2.0 ** -21 * pred.abs()
    return max(float(excess.max()), 0.0)


def _query_scale(q, pred, factor: float) -> tuple | None:
    """``(first, last)`` of the factor by which the layer's queries ``q`` exceed ``pred`` (the identity-run
    queries rotated by the cos/sin it received, of magnitude ``factor``), position by position (positions second
    to last), when every head and batch row shares it (a positional query scale); None when it is 1, when it is
    not shared (a norm after the rotary rescales each head on its own: Llama 4's qk_norm), or when it is
    1 / ``factor`` everywhere (a norm after the rotary takes the attention factor back out: HunYuan's
    query_layernorm)."""
    ratio = q.norm(dim=-1) / pred.norm(dim=-1).clamp_min(1e-30)  # (..., T)
    ratio = ratio.reshape(-1, ratio.shape[-1])  # (rows, T)
    lo, hi = ratio.min(0).values, ratio.max(0).values
    if float((hi / lo - 1).abs().max()) > 1e-5 or float((hi - 1).abs().max()) < 1e-6 \
            or float((hi * factor - 1).abs().max()) < 1e-4:
        return None
    return float(hi[0]), float(hi[-1])
