"""GPT-NeoX YAML (EleutherAI/gpt-neox ``megatron/neox_arguments/neox_args.py``; keys with dashes
or underscores).

``pos-emb: rotary`` selects RoPE (the default is ``learned``); head dim ``hidden-size //
num-attention-heads``; rotary dims ``int(head_dim * rotary-pct)`` (default 1.0); base
``rotary-emb-base`` (default 10,000); ``seq-length`` is the training length and
``max-position-embeddings`` the context (default: the training length);
``sliding-window-width`` W bounds the distance every layer sees: GPT-NeoX passes flash-attn
``window_size=(W, -1)`` (EleutherAI/gpt-neox@ea7aefd8 ``megatron/model/transformer.py``; the only
attention that supports it), and flash-attn attends keys i - W .. i inclusive
(flash-attn==2.8.3 ``flash_attn_interface.py``): distances 0..W, a window of W + 1 positions where
Hugging Face's ``sliding_window`` W covers W. dtype: ``precision``, or the
DeepSpeed blocks ``fp16: {enabled: true}`` / ``bf16: {enabled: true}``. An ``attention_config`` whose every
layer is ``mamba`` / ``rwkv`` / ``gmlp`` / ``amlp`` has no attention and no rotary (``megatron/model/gpt2_model.py``).
"""

from __future__ import annotations

from collections.abc import Mapping

from ..model import NotARopeConfig, Value
from ._framework import Doc, Fields, dialect, head_dim_of, preset, rotary_dims

NAME = "neox"
SRC = "GPT-NeoX NeoXArgs"
_MARKS = ("pos_emb", "rotary_pct", "rotary_emb_base", "sliding_window_width", "num_kv_heads", "attention_config")
# layer types of attention_config that are not attention (megatron/model/gpt2_model.py: GMLPBlock,
# RWKVResidualLayerPipe, ParallelMambaResidualLayerPipe): no rotary
NOT_ATTENTION = {"mamba", "rwkv", "gmlp", "amlp"}


def _keys(data: Mapping) -> set[str]:
    return {str(k).strip().lower().replace("-", "_") for k in data}


def detect(data: Mapping) -> bool:
    keys = _keys(data)
    return "model_type" not in keys and bool(keys & set(_MARKS)) and "num_attention_heads" in keys \
        and ("seq_length" in keys or "pos_emb" in keys)


def layer_types(config, n_layers) -> list[str] | None:
    """``attention_config`` expanded to one type per layer, as ``megatron/utils.py`` ``expand_attention_types``
    does (``[[["mamba"], 48]]``: 48 x mamba; ``[[types], "all"]``: the pattern over every layer); None when it
    is absent or not in that shape."""
    if not isinstance(config, list) or not config:
        return None
    if all(isinstance(t, str) for t in config):
        return list(config)
    out: list[str] = []
    for item in config:
        if not (isinstance(item, list) and len(item) == 2 and isinstance(item[0], list)):
            return None
        types, count = [str(t) for t in item[0]], item[1]
        if count == "all":
            return types * (n_layers // len(types)) if isinstance(n_layers, int) and types else None
        if not isinstance(count, int) or count < 0 or len(out) + count * len(types) > 1 << 16:
            return None
        out.extend(types * count)
    return out


def read(doc: Doc) -> Fields:
    types = layer_types(doc.raw("attention_config"), doc.raw("num_layers"))
    if types and set(types) <= NOT_ATTENTION:
        raise NotARopeConfig(f"{doc.path}: GPT-NeoX attention_config makes every layer {'/'.join(sorted(set(types)))}:"
                             " no attention, no rotary (megatron/model/gpt2_model.py)")
    pe = doc.raw("pos_emb") or "learned"
    if str(pe).strip().lower() != "rotary":
        raise NotARopeConfig(f"{doc.path}: GPT-NeoX pos-emb {pe!r} is not rotary"
                             + (" (the default is 'learned')" if doc.raw("pos_emb") is None else ""))
    problems: list = []
    head = head_dim_of(doc.get("hidden_size", expect="int"), doc.get("num_attention_heads", expect="int"), problems)
    frac = doc.get("rotary_pct") or preset(1.0, f"rotary_pct: {SRC} default", None)
    d = rotary_dims(head, frac, problems)
    base = doc.get("rotary_emb_base") or preset(10000, f"rotary_emb_base: {SRC} default", None)
    seq = doc.get("seq_length", expect="int")
    max_pos = doc.get("max_position_embeddings", expect="int")
    width = doc.get("sliding_window_width", expect="int")
    window = width  # a value the RV rules reject is kept as found
    if width is not None and isinstance(width.raw, int) and not isinstance(width.raw, bool) and width.raw > 0:
        w = width.raw
        window = Value(w + 1, width.key, width.line, width.column,
                       f"flash-attn window_size ({w:,}, -1): keys up to {w:,} back, {w + 1:,} positions", "int")
    dtype = doc.get("precision", expect="str")
    if dtype is None:
        for name in ("fp16", "bf16"):
            if doc.raw(f"{name}.enabled") is True:
                v = doc.require(f"{name}.enabled", expect="bool")
                dtype = Value(name, v.key, v.line, v.column, "", "str")
                break
    return Fields(arch="gpt-neox", head_dim=head, d=d, base=base, train_len=seq or max_pos, target=max_pos or seq,
                  dtype=dtype, window=window, problems=problems)


DIALECT = dialect(NAME, detect, read)
