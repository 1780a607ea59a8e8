"""Run transformers' own modeling code on tiny models and record, for every decoder layer, the
rotary it applies (frequencies, attention factor, rotated dims) and the span it attends (full,
sliding window W, chunk C), as the layer's forward does it.

Needs torch and transformers (the generator of ``hf_layers.json`` and the ``hf`` tests use it; the
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
- layers: the list of ``num_hidden_layers`` decoder layers (or the attention sublayers they hold, numbered as
  layers: LongCat-Flash); where none exists, layers that run several times in one forward, each run a layer in call
  order (:func:`repeated_layers`: HRM). The forward gets the inputs without which its layers do not all run
  (:func:`cross_inputs`: image states; :func:`layer_keywords`: what a composite hands its text model).
"""

from __future__ import annotations

import importlib
import inspect
import sys
from dataclasses import dataclass, field
from typing import Any

from .tiny import (CHUNK, FILL_INS, LAYERS, LENGTH, MAX_PARAMS, MROPE, PROBE, WINDOW,  # noqa: F401
                    COMPUTED_KINDS, INDEX_KINDS, PROBED_TEXT_MODELS, modeling_module, rotary_classes,
                    sub_config_overrides, text_sub_config, candidate, candidate_types, computed_kinds, config_class,
                    layer_kinds, quiet, shifted_per_layer, tiny_overrides)
from .observed import LayerObs, RopeObs, read_layers, read_rope, span_of  # noqa: F401


@dataclass
class Probe:
    model_type: str
    config: dict  # the config's to_dict(): what ropelaw is asked to read
    layers: list = field(default_factory=list)
    error: str | None = None


_STATE: dict[str, Any] = {"calls": [], "identity": False}


def window_key(config_class) -> str:
    """The name ``config_class`` stores ``sliding_window`` under: its ``attribute_map``'s (Inkling 2's
    ``sliding_window_size``), else ``sliding_window``."""
    return dict(getattr(config_class, "attribute_map", None) or {}).get("sliding_window", "sliding_window")


def config_dict(cfg) -> dict:
    """``cfg.to_dict()`` with the per-layer kinds the class computes (:data:`COMPUTED_KINDS`: Jamba's
    ``layers_block_type``, a property to_dict leaves out)."""
    config = cfg.to_dict()
    for k in COMPUTED_KINDS:
        value = getattr(cfg, k, None) if k not in config else None
        if isinstance(value, (list, tuple)):
            config[k] = list(value)
    return config


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

    register()
    cls = config_class(model_type)
    with quiet():
        cfg = cls(**overrides)
        cfg._attn_implementation = PROBE
        module = modeling_module(cls)
        if "input_ids" not in inspect.signature(getattr(module, class_name).forward).parameters:
            raise TypeError(f"{class_name}.forward takes no input_ids: not a text decoder")
        try:
            size = _meta_size(getattr(module, class_name), cfg)
        except NotImplementedError:  # a module that reads a tensor's value at init (4.57.1's XIELU activation,
            size = None  # Apertus: .item()) cannot be built on meta: counted once built
        except (AttributeError, TypeError):  # a sub-config the class needs written (4.57.1's Phi-4-multimodal)
            if not sub_config_overrides(cls):
                raise
            size = MAX_PARAMS + 1
        if size is not None and size > MAX_PARAMS and sub_config_overrides(cls):  # its encoders written small
            subs = sub_config_overrides(cls)  # the probe's own settings of a sub-config (a base) kept over them
            cfg = cls(**{**subs, **{k: {**subs[k], **v} if isinstance(v, dict) and k in subs else v
                                    for k, v in overrides.items()}})
            cfg._attn_implementation = PROBE
            size = _meta_size(getattr(module, class_name), cfg)
        if size is not None:
            _check_size(size)
        torch.manual_seed(0)
        model = getattr(module, class_name)(cfg).eval()
        if size is None:
            _check_size(sum(p.numel() for p in model.parameters()))
    return cfg, model


def _meta_size(model_class, cfg) -> int:
    import torch

    with torch.device("meta"), no_init_weights():
        return sum(p.numel() for p in model_class(cfg).parameters())


def no_init_weights():
    """transformers' own context that skips weight initialisation (4.x: ``modeling_utils``, 5.x:
    ``initialization``): for models built on the meta device, where there is nothing to initialise and torch's
    reference kernels would do it one parameter at a time."""
    where = importlib.import_module("transformers.modeling_utils")
    if not hasattr(where, "no_init_weights"):
        where = importlib.import_module("transformers.initialization")
    return where.no_init_weights()


def _check_size(size: int) -> None:
    if size > MAX_PARAMS:
        raise MemoryError(f"{size / 1e6:.0f}M parameters after shrinking (> {MAX_PARAMS / 1e6:.0f}M): a "
                          f"sub-model the probe does not shrink")


def _layer_list(model, n: int):
    """The ModuleList of the ``n`` decoder layers (the longest list of length ``n``, outermost first)."""
    import torch

    for _, m in model.named_modules():
        if isinstance(m, torch.nn.ModuleList) and len(m) == n:
            return m
        # decoder layers that hold k attention sublayers each, numbered as layers (LongCat-Flash: 2, layer indices
        # 2 i and 2 i + 1): the sublayers, in order
        if isinstance(m, torch.nn.ModuleList) and len(m) and n % len(m) == 0 and n > len(m):
            subs = [[s for s in layer.children() if isinstance(s, torch.nn.ModuleList) and len(s) == n // len(m)
                     and all(hasattr(a, "layer_idx") for a in s)] for layer in m]
            if all(len(x) == 1 for x in subs):
                return [a for x in subs for a in x[0]]
    return None


def _identity(x, outputs: set):
    """``x`` with every rotary output in it (by identity) replaced by the identity rotation."""
    import torch

    if id(x) in outputs:
        if isinstance(x, (tuple, list)) and len(x) == 2 and all(torch.is_tensor(t) for t in x):
            pair: Any = type(x)  # the tuple or list type the rotary returned
            return pair((torch.ones_like(x[0]), torch.zeros_like(x[1])))
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
    if found.error and (found.error.startswith("no layer calls attention") or found.error.startswith(
            f"forward fails: KeyError: '{PROBE}'")):  # a forward that picks its attention by name (4.57.1's ModernBERT)
        return _observe_functions(model_type, class_name, overrides, length, offset)
    return found


def _observe_attention(model_type: str, cfg, model, length: int, offset: int = 0) -> Probe:
    import torch

    config = config_dict(cfg)
    n = cfg.num_hidden_layers
    layers = _layer_list(model, n)
    runs = repeated_layers(model, n) if layers is None else None
    if layers is None and runs is None:
        return Probe(model_type, config, [], f"no list of {n} decoder layers in {type(model).__name__}")
    state: dict[str, Any] = {"layer": None, "outputs": {}, "received": {}, "replaced": {}, "inner": {},
                             "offset": offset, "runs": 0,
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

    handles = []
    _STATE["unmasked"] = bool(offset)
    try:
        for m in state["rotaries"]:
            handles.append(m.register_forward_hook(rot_hook, with_kwargs=True))
        handles += layer_hooks(model, layers or runs, state, by_call=runs is not None)
        ids, where = _input_ids(length), {**_positions(length, offset), **cross_inputs(model, cfg, length),
                                          **no_cache(model), **layer_keywords(layers or runs, cfg)}
        state["cross"] = CROSS if "cross_attention_states" in where else None
        # pass 1: which modules call attention
        where = first_pass(model, ids, where)
        attn = {c["module"] for c in _STATE["calls"]}
        if not attn:
            return Probe(model_type, config, [], "no layer calls attention through ALL_ATTENTION_FUNCTIONS")

        def attn_hook(m, args, kwargs, out):
            if _STATE["identity"]:
                return None
            ids_ = set(state["outputs"])
            args2 = tuple(_identity(a, ids_) for a in args)
            kwargs2 = {k: _identity(v, ids_) for k, v in kwargs.items()}
            got = [a for a, b in zip(args, args2, strict=True) if a is not b] + \
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
            model(input_ids=ids, **where)
    except Exception as exc:
        return Probe(model_type, config, [], f"forward fails: {type(exc).__name__}: {str(exc)[:160]}")
    finally:
        for h in handles:
            h.remove()
        _STATE["layer"] = None
        _STATE["unmasked"] = False
    if runs is not None and state["runs"] != n:
        return Probe(model_type, config, [], f"no list of {n} decoder layers in {type(model).__name__}, and its "
                                             f"{len(runs)} decoder layers run {state['runs']} times in one forward")
    return Probe(model_type, config, read_layers(calls, state, n, length, layers or runs))


def layer_hooks(model, layers, state: dict, by_call: bool = False) -> list:
    """Forward hooks that number the layer running: each of ``layers`` its index (``by_call``: the runs of
    :func:`repeated_layers` in call order, counted in ``state["runs"]``); the model's forward starts with no layer
    running (a call before the first layer's, IDEFICS's gated cross-attention ahead of layer 0, belongs to none)."""
    def start(m, args):
        state["layer"] = _STATE["layer"] = None
        state["runs"] = 0

    def layer_pre(i):
        def hook(m, args):
            state["layer"] = _STATE["layer"] = state["runs"] if by_call else i
            state["runs"] += 1
        return hook

    return [model.register_forward_pre_hook(start)] + [layer.register_forward_pre_hook(layer_pre(i))
                                                       for i, layer in enumerate(layers)]


def repeated_layers(model, n: int) -> list | None:
    """Decoder layers that run more than once in one forward, each run a layer (recurrent depth: HRM's two stacks
    of ``num_layers_per_stack`` layers run ``H_cycles x (L_cycles + 1)`` times and ``num_hidden_layers`` counts the
    runs, each run its own cache slot, slot = run order): the layers of the outermost lists of modules that each
    hold an attention (a module with ``layer_idx``), when their number divides ``n``; None else. The caller numbers
    the runs by call order and checks that there are ``n`` (HRM with L_cycles 0: its H stack alone runs, twice)."""
    import torch

    lists: list[tuple[str, Any]] = []
    for name, m in model.named_modules():
        if isinstance(m, torch.nn.ModuleList) and len(m) and not any(name.startswith(p + ".") for p, _ in lists) \
                and all(any(hasattr(s, "layer_idx") for s in layer.modules()) for layer in m):
            lists.append((name, m))
    found = [layer for _, m in lists for layer in m]
    return found if found and n % len(found) == 0 else None


# keywords the decoder layers read that a composite model computes and hands its text model through ``**kwargs``
# (the text model's forward does not name them), with the shape the composite gives: Voxtral Realtime's ``t_cond``,
# the delay-time embedding (time_embedding of num_delay_tokens, one hidden_size vector, [None] for the batch) each
# layer scales its MLP input by (1 + ada_rms_norm(t_cond)); its value reaches no attention of that layer
LAYER_KEYWORDS = {"t_cond": lambda cfg: (1, cfg.hidden_size)}


def layer_keywords(layers, cfg) -> dict:
    """``{keyword: random tensor}`` for each of :data:`LAYER_KEYWORDS` the decoder layers' forward takes."""
    import torch

    params = inspect.signature(type(layers[0]).forward).parameters
    g = torch.Generator().manual_seed(2)
    return {k: torch.randn(*shape(cfg), generator=g) for k, shape in LAYER_KEYWORDS.items() if k in params}


def first_pass(model, ids, where: dict) -> dict:
    """Run ``model`` once on ``ids`` with the keywords ``where``; the keywords the forward ran with: ``where``, or
    ``where`` and an all-ones ``attention_mask`` (what a tokenizer hands it) for a forward that fails without one
    (4.57.1's GLM-4V text models: their 3-row position ids reach the mask builder, which reads only 2 rows from them
    when no attention mask is given)."""
    import torch

    _STATE["calls"] = []
    try:
        with torch.no_grad(), quiet():
            model(input_ids=ids, **where)
        return where
    except Exception:
        if "attention_mask" in where or "attention_mask" not in inspect.signature(model.forward).parameters:
            raise
    where = {**where, "attention_mask": torch.ones_like(ids)}
    _STATE["calls"] = []
    with torch.no_grad(), quiet():
        model(input_ids=ids, **where)
    return where


def no_cache(model) -> dict:
    """``{"use_cache": False}`` for a forward that takes it (an encoder's may not: 4.57.1's ModernBERT raises on it)."""
    params = inspect.signature(model.forward).parameters
    takes = "use_cache" in params or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())
    return {"use_cache": False} if takes else {}


CROSS = 7  # image tokens given to a model whose forward takes cross_attention_states (!= LENGTH)


def cross_inputs(model, cfg, length: int = LENGTH) -> dict:
    """``{"cross_attention_states": (2, CROSS, hidden_size)}`` for a model whose forward takes them (Mllama's
    text model: its cross-attention layers run only with image states; a text-only forward skips them), so
    that every layer runs and the probe sees what it attends; for a forward that takes ``image_encoder_embeddings``
    and ``image_attention_mask`` (IDEFICS: it raises unless exactly one of pixel_values, image_encoder_embeddings or
    perceiver_embeddings is given, and indexes the mask), one image of CROSS encoder states of the vision config's
    hidden size, (2, 1, CROSS, hidden), that every token sees (a mask of ones, (2, ``length``, 1)); else ``{}``."""
    import torch

    params = inspect.signature(model.forward).parameters
    g = torch.Generator().manual_seed(1)
    if "cross_attention_states" in params:
        return {"cross_attention_states": torch.randn(2, CROSS, cfg.hidden_size, generator=g)}
    vision = getattr(cfg, "vision_config", None)
    if "image_encoder_embeddings" in params and "image_attention_mask" in params and vision is not None:
        return {"image_encoder_embeddings": torch.randn(2, 1, CROSS, vision.hidden_size, generator=g),
                "image_attention_mask": torch.ones(2, length, 1, dtype=torch.long)}
    return {}


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

    cls = config_class(model_type)
    module = modeling_module(cls)
    model = None
    for how in ("sdpa", "eager"):  # eager: a model that refuses sdpa (4.57.1's RecurrentGemma, GPT-NeoX-Japanese)
        try:
            with quiet():
                cfg = cls(**overrides)
                cfg._attn_implementation = how
                torch.manual_seed(0)
                model = getattr(module, class_name)(cfg).eval()
            break
        except ValueError as exc:
            if how == "sdpa" and "scaled_dot_product_attention" in str(exc):
                continue
            return Probe(model_type, {}, [], f"cannot build: {type(exc).__name__}: {str(exc)[:160]}")
        except Exception as exc:
            return Probe(model_type, {}, [], f"cannot build: {type(exc).__name__}: {str(exc)[:160]}")
    return observe_functions(model_type, cfg, model, module, length, offset)


def _rotary_functions(module) -> tuple[list[str], list[str]]:
    """The modeling module's ``apply_rotary*`` functions: ``(those taking (q, k, cos, sin), those taking
    (tensor, sin, cos): GPT-J / CodeGen)``."""
    names = [n_ for n_, f in vars(module).items() if n_.startswith("apply_rotary") and callable(f)
             and list(inspect.signature(f).parameters)[:4] == ["q", "k", "cos", "sin"]]
    ones = [n_ for n_, f in vars(module).items() if n_.startswith("apply_rotary") and callable(f)
            and list(inspect.signature(f).parameters)[:3] == ["tensor", "sin", "cos"]]
    return names, ones


def _observations(calls: list, n: int, state: dict, length: int) -> list:
    """Each of the ``n`` decoder layers as a LayerObs, from the attention and rotary calls recorded in the forward
    (:func:`observe_functions`)."""
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
            span, size = span_of(attn["mask"], attn["causal"] or None, length)
        if attn is not None and attn["mask"] is None and not attn["causal"]:
            span, size = "full", None  # sdpa with neither mask nor is_causal only for a 1-token query
        if rope is None:
            out.append(LayerObs(i, None, span, size))
            continue
        q, qp = rope["q"].double(), rope["qp"].double()
        try:
            out.append(read_rope(i, q, qp, rope["received"], state, length, span, size))
        except (ValueError, TypeError, RuntimeError, AttributeError, IndexError) as exc:
            out.append(LayerObs(i, None, span, size, f"rotary not read: {exc}"))
    return out


def observe_functions(model_type: str, cfg, model, module, length: int = LENGTH, offset: int = 0) -> Probe:
    """Every decoder layer of ``model`` (built with attn_implementation "sdpa" from ``cfg``; ``module``
    its modeling module) observed through the module's rotary functions (see :func:`_observe_functions`)."""
    import torch
    import torch.nn.functional as F

    config = config_dict(cfg)
    n = cfg.num_hidden_layers
    layers = _layer_list(model, n)
    if layers is None:
        return Probe(model_type, config, [], f"no list of {n} decoder layers in {type(model).__name__}")
    calls: list = []
    state: dict[str, Any] = {"layer": None, "outputs": {}, "offset": offset,
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

    names, ones = _rotary_functions(module)
    if not names and not ones and rotary_classes(module):
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
            model(input_ids=_input_ids(length), **_positions(length, offset), **no_cache(model))
    except Exception as exc:
        return Probe(model_type, config, [], f"forward fails: {type(exc).__name__}: {str(exc)[:160]}")
    finally:
        for n_, f in saved.items():
            setattr(module, n_, f)
        F.scaled_dot_product_attention = _sdpa
        for h in handles:
            h.remove()
    return Probe(model_type, config, _observations(calls, n, state, length))

