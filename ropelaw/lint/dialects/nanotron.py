"""nanotron YAML (nanotron==0.4): ``model.model_config`` (a Llama / Qwen2 config), ``tokens.sequence_length``.

The model trains at ``tokens.sequence_length``; ``model_config.max_position_embeddings`` is the
length of the RoPE cache it advertises (``RotaryEmbedding(end=max_position_embeddings)``),
the target. Head dim ``hidden_size // num_attention_heads``; base ``rope_theta`` when the config
has one (Qwen2Config), else 10000: nanotron 0.4's ``LlamaConfig`` has no ``rope_theta`` and its
``RotaryEmbedding`` / ``FlashRotaryEmbedding`` use theta 10000. ``rope_scaling`` as in
transformers. dtype: ``model.dtype``.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..model import Value
from ._framework import Doc, Fields, derived, dialect, head_dim_of, preset

NAME = "nanotron"
SRC = "nanotron==0.4 nanotron/config/models_config.py"


def detect(data: Mapping) -> bool:
    m = data.get("model")
    return isinstance(m, Mapping) and isinstance(m.get("model_config"), Mapping) and (
        isinstance(data.get("tokens"), Mapping) or isinstance(data.get("parallelism"), Mapping))


def read(doc: Doc) -> Fields:
    mc = "model.model_config"
    problems: list = []
    heads = doc.get(f"{mc}.num_attention_heads", expect="int") or preset(32, f"num_attention_heads: {SRC} default",
                                                                          None, "int")
    hidden = doc.get(f"{mc}.hidden_size", expect="int") or preset(4096, f"hidden_size: {SRC} default", None, "int")
    head = doc.get(f"{mc}.head_dim", expect="int") or head_dim_of(hidden, heads, problems)
    base = doc.get(f"{mc}.rope_theta") or preset(
        10000.0, "nanotron==0.4 LlamaConfig has no rope_theta: RotaryEmbedding theta 10000", None)
    max_pos = doc.get(f"{mc}.max_position_embeddings", expect="int") or preset(
        2048, f"max_position_embeddings: {SRC} default", None, "int")
    seq = doc.get("tokens.sequence_length", expect="int")
    scheme, params, block, orig = None, {}, None, None
    rs = doc.raw(f"{mc}.rope_scaling")
    if isinstance(rs, Mapping):
        block = doc.get(f"{mc}.rope_scaling", expect="mapping")
        scheme = doc.get(f"{mc}.rope_scaling.rope_type", f"{mc}.rope_scaling.type", expect="str")
        for k in rs:
            if str(k) not in ("rope_type", "type"):
                v = doc.get(f"{mc}.rope_scaling.{k}",
                            expect="int" if k == "original_max_position_embeddings" else "number")
                if v is not None:
                    params[str(k)] = v
        orig = params.get("original_max_position_embeddings")
    doc.consider(f"{mc}.rope_interleaved")  # the layout of the pairs, not their frequencies
    window = None
    if doc.raw(f"{mc}.use_sliding_window") is True:
        window = doc.get(f"{mc}.sliding_window", f"{mc}.sliding_window_size", expect="int")
    return Fields(arch="nanotron", head_dim=head, d=head, base=base, train_len=seq, target=max_pos, scheme=scheme,
                  params=params, block=block, original_max=orig, dtype=doc.get("model.dtype", expect="str"),
                  window=window, problems=problems)


DIALECT = dialect(NAME, detect, read)
