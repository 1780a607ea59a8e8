"""OLMo training YAML (ai2-olmo==0.6.0, ``olmo/config.py`` ``ModelConfig``).

``model.rope: true`` selects RoPE (the default is false, learned or ALiBi positions); head dim
``d_model // n_heads``; base ``rope_theta`` (default 10,000); ``model.max_sequence_length`` is
both the training length and the context (default 1,024). ``precision`` (``amp_bf16``, ...);
``rope_full_precision`` (default true) computes the rotation in float32.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..model import NotARopeConfig
from ._framework import Doc, Fields, dialect, head_dim_of, preset

NAME = "olmo"
SRC = "ai2-olmo==0.6.0 olmo/config.py ModelConfig"


def detect(data: Mapping) -> bool:
    m = data.get("model")
    return isinstance(m, Mapping) and "d_model" in m and "n_heads" in m


def read(doc: Doc) -> Fields:
    if doc.raw("model.rope") is not True:
        what = "ALiBi" if doc.raw("model.alibi") is True else "learned positions (model.rope is not true)"
        raise NotARopeConfig(f"{doc.path}: OLMo model uses {what}, not RoPE")
    problems: list = []
    head = head_dim_of(doc.get("model.d_model", expect="int"), doc.get("model.n_heads", expect="int"), problems)
    base = doc.get("model.rope_theta") or preset(10000, f"rope_theta: {SRC} default", None)
    seq = doc.get("model.max_sequence_length", expect="int") or preset(1024, f"max_sequence_length: {SRC} default",
                                                                       None, "int")
    notes = []
    if doc.raw("model.rope_full_precision") is not False:
        notes.append("rope_full_precision (default true): OLMo rotates in float32 whatever the precision")
    return Fields(arch="olmo", head_dim=head, d=head, base=base, train_len=seq, target=seq,
                  dtype=doc.get("precision", expect="str"), notes=notes, problems=problems)


DIALECT = dialect(NAME, detect, read)
