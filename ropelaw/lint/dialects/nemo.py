"""NeMo (1.x Megatron GPT / Llama YAML, e.g. ``examples/nlp/language_modeling/conf/megatron_llama_config.yaml``).

The ``model:`` section holds Megatron's settings with underscores: ``encoder_seq_length`` (the
training length), ``max_position_embeddings`` (the context, usually ``${.encoder_seq_length}``),
``hidden_size``, ``num_attention_heads``, ``kv_channels`` (null: ``hidden_size //
num_attention_heads``), ``position_embedding_type`` (``rope``; NeMo's GPT default is
``learned_absolute``), ``rotary_percentage``, ``rotary_base`` (default 10,000),
``seq_len_interpolation_factor`` (linear interpolation). dtype: ``trainer.precision`` (16, bf16,
``bf16-mixed``, 32). OmegaConf interpolations ``${model.x}`` / ``${.x}`` that point inside the
document are resolved (the value keeps the position of the key that holds the interpolation);
``${oc.env:...}`` and other resolvers are not.
"""

from __future__ import annotations

import re
from typing import Any, Mapping

from ..loader import NotARopeConfig
from ._framework import Doc, Fields, derived, dialect, head_dim_of, preset, rotary_dims

NAME = "nemo"
_REF = re.compile(r"^\$\{(\.*)([A-Za-z_][\w.]*)\}$")


def detect(data: Mapping) -> bool:
    m = data.get("model")
    return isinstance(m, Mapping) and isinstance(data.get("trainer"), Mapping) and (
        "encoder_seq_length" in m or "position_embedding_type" in m)


def resolve(data: Any, depth: int = 0) -> Any:
    """Copy of ``data`` with whole-string ``${a.b}`` / ``${.b}`` references replaced by their targets."""

    def walk(node: Any, parents: list) -> Any:
        if isinstance(node, Mapping):
            return {k: walk(v, parents + [node]) for k, v in node.items()}
        if isinstance(node, list):
            return [walk(v, parents) for v in node]
        return look(node, parents, 0)

    def look(node: Any, parents: list, hops: int) -> Any:
        if not isinstance(node, str) or hops > 16:
            return node
        m = _REF.match(node.strip())
        if not m:
            return node
        dots, path = m.groups()
        if dots:
            up = len(dots) - 1
            if up >= len(parents):
                return node
            base, scope = parents[len(parents) - 1 - up], parents[: len(parents) - up]
        else:
            base, scope = data, [data]
        cur: Any = base
        for part in path.split("."):
            if not isinstance(cur, Mapping) or part not in cur:
                return node
            scope = scope + [cur]
            cur = cur[part]
        return look(cur, scope[:-1] if isinstance(cur, Mapping) else scope, hops + 1)
    return walk(data, [])


def read(doc: Doc) -> Fields:
    resolved = resolve(doc.data)
    doc = _Resolved(resolved, doc)
    pe = str(doc.raw("model.position_embedding_type") or "learned_absolute").strip().lower()
    if pe not in ("rope", "rotary"):
        raise NotARopeConfig(f"{doc.path}: NeMo position_embedding_type {pe!r} is not RoPE"
                             + (" (the default)" if doc.raw("model.position_embedding_type") is None else ""))
    problems: list = []
    head = doc.get("model.kv_channels", expect="int") or head_dim_of(
        doc.get("model.hidden_size", expect="int"), doc.get("model.num_attention_heads", expect="int"), problems)
    d = rotary_dims(head, doc.get("model.rotary_percentage", "model.rotary_percent"), problems)
    base = doc.get("model.rotary_base") or preset(10000, "rotary_base: NeMo / Megatron default", None)
    seq = doc.get("model.encoder_seq_length", "model.seq_length", expect="int")
    max_pos = doc.get("model.max_position_embeddings", expect="int")
    scheme, params = None, {}
    interp = doc.get("model.seq_len_interpolation_factor")
    if interp is not None:
        scheme = derived("linear", "seq_len_interpolation_factor: positions / factor", interp, "str")
        params = {"factor": interp}
    dtype = doc.get("trainer.precision", expect="any")
    return Fields(arch="nemo", head_dim=head, d=d, base=base, train_len=seq or max_pos, target=max_pos or seq,
                  scheme=scheme, params=params, dtype=dtype, problems=problems)


class _Resolved(Doc):
    """The resolved document, positions and recorded inputs shared with the original."""

    def __init__(self, data: Mapping, orig: Doc):
        super().__init__(data, orig.positions, orig.fmt, orig.path)
        self.inputs = orig.inputs
        self._orig = orig

    def get(self, *dotted: str, expect: str = "number", note: str = ""):
        for name in dotted:
            before = self._orig.raw(name)
            if before is None or self.raw(name) is None:
                continue
            n = f"{before} resolved" if isinstance(before, str) and before.strip().startswith("${") else note
            return super().get(name, expect=expect, note=n)
        return None


DIALECT = dialect(NAME, detect, read)
