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
DeepSpeed blocks ``fp16: {enabled: true}`` / ``bf16: {enabled: true}``.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..model import NotARopeConfig, Value
from ._framework import Doc, Fields, dialect, head_dim_of, preset, rotary_dims

NAME = "neox"
SRC = "GPT-NeoX NeoXArgs"
_MARKS = ("pos_emb", "rotary_pct", "rotary_emb_base", "sliding_window_width", "num_kv_heads")


def _keys(data: Mapping) -> set[str]:
    return {str(k).strip().lower().replace("-", "_") for k in data}


def detect(data: Mapping) -> bool:
    keys = _keys(data)
    return "model_type" not in keys and bool(keys & set(_MARKS)) and "num_attention_heads" in keys \
        and ("seq_length" in keys or "pos_emb" in keys)


def read(doc: Doc) -> Fields:
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
                v = doc.get(f"{name}.enabled", expect="bool")
                dtype = Value(name, v.key, v.line, v.column, "", "str")
                break
    return Fields(arch="gpt-neox", head_dim=head, d=d, base=base, train_len=seq or max_pos, target=max_pos or seq,
                  dtype=dtype, window=window, problems=problems)


DIALECT = dialect(NAME, detect, read)
