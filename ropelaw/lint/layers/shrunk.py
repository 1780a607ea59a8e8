"""Run transformers on a real ``config.json`` shrunk in place and record what every layer applies.

Needs torch and transformers (the differential over real files, ``tests/test_hf_files.py``, and the key
perturbation table's generator, ``scripts/hf_key_perturbation.py``, use it; the linter never imports it).

The file is loaded as users load it (``AutoConfig.from_pretrained`` on a folder holding it, never with
remote code); its language model's config is shrunk in place (:func:`shrink_in_place`: two heads of the
file's own head dim, the vocabulary, MLP widths and expert counts made small; every layer, every per-layer
list and every RoPE key kept), its model built with the probe attention and run on CPU with hooks
(:mod:`.probes`): per layer, no attention (Mamba, convolution, linear attention) / NoPE / RoPE with its
frequencies and attention factor, its query scale, and the span it attends.
"""

from __future__ import annotations

import copy
import gc
import importlib
import json
import pathlib
import re
import tempfile
from dataclasses import dataclass, field
from typing import Any
from collections.abc import Mapping

from . import probes
from .tiny import per_layer_mapping, quiet, shrunk_attributes, shrunk_value
from ...safeio import write_atomic

SPAN_KEYS = {"sliding_window": probes.WINDOW, "attention_chunk_size": probes.CHUNK}  # windows the forward can see
# scripts/hf_top_keys.py's thousands of forwards: no garbage collection after each (the caller collects now and then)
LEAN = {"on": False}


def collect() -> None:
    """A full garbage collection, then everything that survives it frozen (``gc.freeze``): the next collection
    traverses only the objects made since, not torch's, transformers' and the imported model modules' millions
    (a full collection over them took about 2 s per forward on the shared machine). Frozen objects are still
    freed by reference counting."""
    gc.collect()
    gc.freeze()


@dataclass
class FileRun:
    """One forward of a shrunk file: ``refused`` says why transformers would not load or build it (then
    ``probe`` is None), ``problem`` why the harness could not observe it although transformers builds it."""

    model_type: str | None = None  # the language model's config type, as transformers built it
    refused: str | None = None  # "config: ValueError: ..." (AutoConfig) / "model: ..." (building it at full size)
    problem: str | None = None  # the shrunk model does not build or run, or its layers are not observed
    probe: Any = None  # probes.Probe
    shrunk: dict = field(default_factory=dict)  # attribute -> the small value set
    max_positions: int | None = None  # the runtime's max_position_embeddings
    original: int | None = None  # the runtime's original_max_position_embeddings (rope block, else top level)
    rotaries: list = field(default_factory=list)  # class names of the model's *RotaryEmbedding modules


def load_as_users_do(mapping: Mapping):
    """transformers' config for a config.json mapping: ``AutoConfig.from_pretrained`` on a folder holding
    it, ``trust_remote_code=False`` (a repository's code is never run)."""
    from transformers import AutoConfig

    with tempfile.TemporaryDirectory() as tmp:
        write_atomic(str(pathlib.Path(tmp, "config.json")), json.dumps(mapping))
        with quiet():
            return AutoConfig.from_pretrained(tmp, trust_remote_code=False)


def text_config(config):
    """The language model's config: ``get_text_config()`` where the class has it."""
    get = getattr(config, "get_text_config", None)
    text = get() if callable(get) else config
    return text if hasattr(text, "model_type") else config


def shrink_in_place(tc, keep_heads: bool = False, kv_heads: int = 2) -> dict:
    """Make ``tc`` (a loaded text config) tiny without touching what RoPE or the layer layout reads: two
    attention heads of the file's head dim (hidden size 2 x head dim; ``keep_heads``: the file's heads, for a
    model that splits them in fixed groups such as CodeGen's 4), at most ``kv_heads`` KV heads, and every size-like
    attribute as :func:`.tiny.shrunk_value` has it, in each layer's overrides too (5.x ``per_layer_config``: Dots 3
    Note's sliding layers). Returns the attributes set."""
    if not getattr(tc, "is_heterogeneous", False):
        return _shrink(tc, keep_heads, kv_heads)
    tc.allow_global_per_layer_attribute_access = True  # 5.x raises on a global read of a per-layer attribute
    try:
        with quiet():
            per_layer = tc.to_dict().get("per_layer_config")
            sets = _shrink(tc, keep_heads, kv_heads)
    finally:
        tc.allow_global_per_layer_attribute_access = False
    if per_layer_mapping(per_layer):
        keep = ("num_attention_heads", "num_key_value_heads") if keep_heads else ()
        sets["per_layer_config"] = {i: shrunk_attributes(a, keep) for i, a in per_layer.items()}
        for a in sets["per_layer_config"].values() if not keep_heads else ():
            if isinstance(a.get("num_key_value_heads"), int):
                a["num_key_value_heads"] = min(a["num_key_value_heads"], kv_heads)
        with quiet():
            tc.per_layer_config = sets["per_layer_config"]  # the overrides again, over the shrunk globals
    return sets


def _shrink(tc, keep_heads: bool, kv_heads: int) -> dict:
    heads: Any = getattr(tc, "num_attention_heads", None)  # a config's attributes: whatever the class holds
    hidden: Any = getattr(tc, "hidden_size", None)
    hd = getattr(tc, "head_dim", None)
    if not (isinstance(hd, int) and hd > 0):
        hd = hidden // heads
    n = heads if keep_heads else 2
    sets: dict[str, Any] = {"num_attention_heads": n, "hidden_size": n * hd}
    kv = getattr(tc, "num_key_value_heads", None)
    if isinstance(kv, int) and kv > 0 and not keep_heads:
        sets["num_key_value_heads"] = min(kv, kv_heads)
    token = 3
    for key, value in tc.to_dict().items():
        if key in sets or key.startswith("_") or key == "per_layer_config":
            continue
        small = shrunk_value(key, value, token)
        if small is not None and small != value:
            sets[key] = small
            token += small == token
    if getattr(tc, "use_mamba_kernels", None) is True:  # 4.57.1's Jamba raises on CPU without the CUDA kernels
        sets["use_mamba_kernels"] = False
    for key in ("torch_dtype", "dtype"):  # the probe runs float32 (a bf16 config dtype mixes dtypes in some forwards)
        if getattr(tc, key, None) not in (None, "float32"):
            sets[key] = "float32"
    with quiet():
        for key, value in sets.items():
            setattr(tc, key, value)
    return sets


def model_class(tc, config=None):
    """The class transformers' auto mappings build for ``tc``: its causal LM, else its base model; for a
    text config the auto mappings do not list, the causal LM of the composite ``config`` when that class takes
    ``tc``'s class (4.57.1's MllamaTextConfig), else the modeling module's class built from it."""
    from transformers import AutoModel, AutoModelForCausalLM

    for auto in (AutoModelForCausalLM, AutoModel):
        try:
            return auto._model_mapping[type(tc)]
        except (KeyError, ValueError):
            continue
    if config is not None and config is not tc:
        try:
            cls = AutoModelForCausalLM._model_mapping[type(config)]
        except (KeyError, ValueError):
            cls = None
        if cls is not None and getattr(cls, "config_class", None) is type(tc):
            return cls
    # a text config no auto mapping lists (5.23.0's Qwen2_5OmniTextConfig): the modeling module's causal LM, else
    # its model, built from that config class
    module = importlib.import_module(type(tc).__module__.replace(".configuration_", ".modeling_"))
    own = [c for c in vars(module).values() if isinstance(c, type) and getattr(c, "config_class", None) is type(tc)]
    for suffix in ("ForCausalLM", "Model"):
        found = [c for c in own if c.__name__.endswith(suffix)]
        if found:
            return sorted(found, key=lambda c: len(c.__name__))[0]
    raise TypeError(f"no model class for {type(tc).__name__} in transformers' auto mappings")


def parameters_on_meta(cls, tc, init: bool = False) -> tuple[int, list]:
    """``(parameters, rotary module classes)`` of ``cls(tc)``, built on the meta device (no memory), its weights
    not initialised unless ``init`` (what is counted is the same; initialising on meta runs torch's reference
    kernels one parameter at a time, about a third of a file's time in the real-file differential)."""
    import contextlib

    import torch

    with quiet(), torch.device("meta"), (contextlib.nullcontext() if init else probes.no_init_weights()):
        model = cls(tc)
    return (sum(p.numel() for p in model.parameters()),
            sorted({type(m).__name__ for m in model.modules() if type(m).__name__.endswith("RotaryEmbedding")}))


def run_file(mapping: Mapping, *, offset: int = 0, length: int = probes.LENGTH) -> FileRun:
    """Load ``mapping`` as users do, shrink its language model in place, build it and observe every layer in
    one forward over positions ``offset`` .. ``offset + length - 1`` (see the module docstring); when the
    forward of two heads fails, once more with one KV head where the file has two or more (a layer with twice the
    KV heads, MiMo-V2-Flash's sliding layers, leaves 2 heads // 4 KV heads = 0 query heads per KV head), then with
    the file's own number of heads (fixed groups: CodeGen)."""
    out = _run_file(mapping, offset, length, keep_heads=False)
    kv = mapping_kv_heads(mapping)
    retries: list[dict[str, Any]] = ([{"kv_heads": 1}] if kv is not None and kv >= 2 else []) + [{"keep_heads": True}]
    for retry in retries:
        if not (out.problem and out.problem.startswith("forward fails")):
            break
        again = _run_file(mapping, offset, length, **retry)
        if not again.problem:
            return again
    return out


def mapping_kv_heads(mapping: Mapping) -> int | None:
    """The file's ``num_key_value_heads`` (its language model section's), None when it writes none."""
    for sec in (mapping, *(mapping.get(k) for k in ("text_config", "language_config", "llm_config"))):
        kv = sec.get("num_key_value_heads") if isinstance(sec, Mapping) else None
        if _int(kv):
            return kv
    return None


def _run_file(mapping: Mapping, offset: int, length: int, keep_heads: bool = False, kv_heads: int = 2) -> FileRun:

    out = FileRun()
    try:
        config = load_as_users_do(copy.deepcopy(dict(mapping)))
    except Exception as exc:  # noqa: BLE001 - what transformers raised is the outcome
        folder = re.escape(tempfile.gettempdir()) + r"/\w+"  # the temporary folder the file was loaded from
        out.refused = f"config: {type(exc).__name__}: {re.sub(folder, '<folder>', str(exc).splitlines()[0])[:200]}"
        return out
    tc = text_config(config)
    out.model_type = getattr(tc, "model_type", None)
    out.max_positions, out.original = _lengths(tc)
    try:
        cls = model_class(tc, config)
    except TypeError as exc:
        out.problem = str(exc)
        return out
    full = copy.deepcopy(tc)
    if not _heads_split_hidden(full):  # the shrinking makes hidden_size a multiple of the heads: build it as it is
        try:
            parameters_on_meta(cls, full)
        except Exception as exc:  # noqa: BLE001 - what transformers raised is the outcome
            out.refused = f"model: {type(exc).__name__}: {str(exc).splitlines()[0][:200]}"
            return out
    out.shrunk = shrink_in_place(tc, keep_heads, kv_heads)
    try:
        size, out.rotaries = parameters_on_meta(cls, tc)
        if size > probes.MAX_PARAMS:
            raise MemoryError(f"{size / 1e6:.0f}M parameters after shrinking (> {probes.MAX_PARAMS / 1e6:.0f}M)")
        model, how = _build(cls, tc)
    except Exception as exc:  # noqa: BLE001
        why = f"{type(exc).__name__}: {str(exc).splitlines()[0][:200] if str(exc) else ''}"
        try:  # does it build (and initialise) at its own size? then the shrinking broke it, not the file
            parameters_on_meta(cls, full, init=True)
        except Exception as exc_full:  # noqa: BLE001
            out.refused = f"model: {type(exc_full).__name__}: {str(exc_full).splitlines()[0][:200]}"
            return out
        out.problem = f"the shrunk model does not build ({why})"
        return out
    try:
        out.probe = _observe(out.model_type or "", tc, model, how, length, offset)
        if offset and out.probe.error and out.probe.error.startswith("forward fails"):
            # 4.57.1's Phi-3.5-MoE sizes its cos / sin table by the last cache position: give it the positions too
            probes._STATE["cache_position"] = True
            try:
                out.probe = _observe(out.model_type or "", tc, model, how, length, offset)
            finally:
                probes._STATE["cache_position"] = False
    finally:
        del model
        if not LEAN["on"]:
            collect()
    if out.probe.error:
        out.problem = out.probe.error
    return out


def _heads_split_hidden(tc) -> bool:
    """Whether the runtime config's hidden_size is a multiple of its num_attention_heads (True where either is not a
    positive int). The shrunk model always is one, so a file where it is not is first built at its own size, on
    meta: a model build that refuses it (4.57.1's Qwen2-MoE, StableLM, Qwen2.5-VL attention: ``hf_head_split.json``)
    is the file's refusal, not a shrunk model that builds. A refusal in the forward is not seen this way."""
    hidden, heads = _int(getattr(tc, "hidden_size", None)), _int(getattr(tc, "num_attention_heads", None))
    return hidden is None or heads is None or hidden % heads == 0


def _int(v) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) and v > 0 else None


def _lengths(tc) -> tuple[int | None, int | None]:
    """The runtime config's max_position_embeddings and original_max_position_embeddings (its rope block's,
    else the top level's)."""
    block = getattr(tc, "rope_parameters", None) or getattr(tc, "rope_scaling", None)
    inner = block.get("original_max_position_embeddings") if isinstance(block, dict) else None
    return _int(getattr(tc, "max_position_embeddings", None)), \
        _int(inner) or _int(getattr(tc, "original_max_position_embeddings", None))


def far_end(run: FileRun) -> int | None:
    """The sequence length of the far forward: just past the original length where the file has one below
    max_position_embeddings (LongRoPE's long factors, Phi-3.5-MoE's long_mscale, the first step of a
    position-dependent query scale), else max_position_embeddings (the target the bounds are computed at)."""
    if run.original and run.max_positions and run.original < run.max_positions:
        return run.original + probes.LENGTH
    return run.max_positions


def _observe(model_type: str, tc, model, how: str, length: int, offset: int):
    if how == probes.PROBE:
        return probes._observe_attention(model_type, tc, model, length, offset)
    return probes.observe_functions(model_type, tc, model, importlib.import_module(type(model).__module__),
                                    length, offset)


def _build(cls, tc):
    """``(model, attention implementation)``: ``cls(tc)`` with the probe attention (every layer's attention
    seen through ALL_ATTENTION_FUNCTIONS), else (4.57.1's per-implementation attention classes raise KeyError
    on an implementation they do not list; Falcon) with sdpa, observed through its rotary functions."""
    import torch

    probes.register()
    for how in (probes.PROBE, "sdpa", "eager"):
        tc._attn_implementation = how
        try:
            with quiet():
                torch.manual_seed(0)
                model = cls(tc).eval()
        except KeyError as exc:
            if how == probes.PROBE and probes.PROBE in str(exc):
                continue
            raise
        except ValueError as exc:  # BLOOM and a few others: no sdpa
            if how == "sdpa" and "scaled_dot_product_attention" in str(exc):
                continue
            raise
        if how == probes.PROBE and not _calls_attention_functions(model):
            continue
        return model, how
    raise TypeError("unreachable")


def _calls_attention_functions(model) -> bool:
    """Whether some module of ``model`` holds the probe as its attention implementation's name (the
    modules that dispatch through ALL_ATTENTION_FUNCTIONS read ``config._attn_implementation``)."""
    import importlib as il

    mod = il.import_module(type(model).__module__)
    return "ALL_ATTENTION_FUNCTIONS" in vars(mod)


def with_small_spans(mapping: Mapping) -> tuple[dict, dict]:
    """``(mapping with every window / chunk longer than the probe's input made short, the keys changed)``:
    the language model section's ``sliding_window`` -> 5 and ``attention_chunk_size`` -> 8 (only integers
    above the forward's length), so the forward shows which layers slide or chunk."""
    data = copy.deepcopy(dict(mapping))
    changed: dict = {}
    for path in ((), ("text_config",), ("language_config",), ("llm_config",)):
        sec: Any = data
        for p in path:
            sec = sec.get(p) if isinstance(sec, dict) else None
        if not isinstance(sec, dict):
            continue
        for key, small in SPAN_KEYS.items():
            v = sec.get(key)
            if isinstance(v, int) and not isinstance(v, bool) and v > probes.LENGTH:
                sec[key] = small
                changed[".".join(path + (key,))] = (v, small)
    return data, changed
