"""torchtune recipe YAML (torchtune==0.6.1): ``model._component_`` names a model builder.

The builder's RoPE (``presets/torchtune.json``, read from ``torchtune/models/*/_model_builders.py``
and the component builders they call): ``RotaryPositionalEmbeddings(dim=head_dim,
max_seq_len, base)`` or ``Llama3ScaledRoPE`` (Llama 3.1 bands: ``scale_factor``, low 1, high 4,
``old_context_len`` 8,192), ``head_dim = embed_dim // num_heads``. Sliding windows: Gemma 2's
``gemma2()`` gives the even layers (``layer_idx % 2 == 0``) ``sliding_window_size`` (4,096) and the
odd ones full attention, so the config has a global and a local layer group, as a Hugging Face
gemma2 config.json does (``presets/regenerate.py`` reads the pattern from the component builder). LoRA / QLoRA builders
(``lora_llama2_7b``, ``qlora_...``) add adapters to the same model: their RoPE is the base
builder's. Builder arguments given in the YAML (``max_seq_len``, ``rope_base``) override.

Lengths: the builder's ``max_seq_len`` is the context (the RoPE cache); the training length is
``tokenizer.max_seq_len`` (or ``dataset.max_seq_len``) when set, else the base model's
pre-training length (``old_context_len`` under Llama 3.1 scaling, else ``max_seq_len``).
dtype: top-level ``dtype``.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..model import NoRopeFound, NotARopeConfig
from ._framework import Doc, Fields, derived, dialect, preset, presets

NAME = "torchtune"


def detect(data: Mapping) -> bool:
    m = data.get("model")
    return isinstance(m, Mapping) and str(m.get("_component_", "")).startswith("torchtune.models.")


def _entry(table: dict, component: str) -> tuple[str, dict] | None:
    if component in table:
        return component, table[component]
    mod, _, fn = component.rpartition(".")
    for prefix in ("lora_", "qlora_"):
        if fn.startswith(prefix) and f"{mod}.{fn[len(prefix):]}" in table:
            return f"{mod}.{fn[len(prefix):]}", table[f"{mod}.{fn[len(prefix):]}"]
    return None


def read(doc: Doc) -> Fields:
    table = presets("torchtune")
    comp_v = doc.get("model._component_", expect="str")
    hit = _entry(table["presets"], str(comp_v.raw))
    if hit is None:
        raise NoRopeFound(f"{doc.path}: torchtune builder {comp_v.raw!r} has no RoPE preset in {table['package']}")
    name, entry = hit
    vals, src = entry["values"], f"torchtune {name.rsplit('.', 1)[-1]}()"
    notes = [] if name == comp_v.raw else [f"{comp_v.raw} adds adapters to {name}: same RoPE"]

    def get(k: str, arg: str | None = None, expect: str = "number"):
        if arg is not None:
            v = doc.get(f"model.{arg}", expect=expect)
            if v is not None:
                return v
        return None if vals.get(k) is None else preset(vals[k], f"{k} of {src}", comp_v, expect)
    head = get("dim", None, "int")
    base = get("base", "rope_base")
    max_seq = get("max_seq_len", "max_seq_len", "int")
    scheme, params = None, {}
    if vals.get("scheme") == "llama3":
        scheme = derived("llama3", f"{vals['rope_class']} of {src}: Llama 3.1 bands", comp_v, "str")
        params = {"factor": get("scale_factor", "scale_factor"), "low_freq_factor": get("low_freq_factor"),
                  "high_freq_factor": get("high_freq_factor"),
                  "original_max_position_embeddings": get("old_context_len", None, "int")}
    train = doc.get("tokenizer.max_seq_len", "dataset.max_seq_len", expect="int")
    if train is None:
        pre = params.get("original_max_position_embeddings") or max_seq
        train = derived(pre.raw, f"{pre.where}: the base model's pre-training length (no tokenizer.max_seq_len)",
                        comp_v)
    window, local_window = None, None
    if vals.get("sliding_window") is not None:
        layers = vals.get("sliding_window_layers")
        if layers == "even":  # gemma2(): sliding_window_size if (layer_idx % 2)==0 else None
            local_window = preset(vals["sliding_window"], f"sliding_window_size of {src} on the even layers "
                                  "(layer_idx % 2 == 0; the odd layers attend globally)", comp_v, "int")
        elif layers == "all":
            window = preset(vals["sliding_window"], f"sliding_window_size of {src} on every layer", comp_v, "int")
        else:
            raise NotARopeConfig(f"{doc.path}: torchtune {name}: unknown sliding-window layer pattern {layers!r}")
    return Fields(arch=f"torchtune {name}", head_dim=head, d=head, base=base, train_len=train, target=max_seq,
                  scheme=scheme, params=params, original_max=params.get("original_max_position_embeddings"),
                  dtype=doc.get("dtype", expect="str"), notes=notes, window=window, local_window=local_window)


DIALECT = dialect(NAME, detect, read)
