"""Rope-block keys that one model type's own rotary reads, beyond its scheme's (transformers' modeling code).

Phi-3.5-MoE (``phimoe``; transformers 4.57.1 and 5.23.0 ``models/phimoe/configuration_phimoe.py`` and
``modeling_phimoe.py``): the config class copies the block's ``original_max_position_embeddings`` to the top
level; ``PhimoeRotaryEmbedding.forward`` multiplies cos and sin by ``long_mscale`` when the length exceeds it,
else by ``short_mscale``, in place of LongRoPE's attention factor; 5.23.0's forward recomputes the frequencies
without the length (``rope_init_fn(self.config)``), so the short factors apply at every position. Checked
against both versions' forward: ``tests/test_hf_keys.py``.
"""

from __future__ import annotations

MSCALE_READERS = ("phimoe",)  # model types whose rotary reads short_mscale / long_mscale


def _noted(v, note: str, expect: str):
    from ..model import Value

    return Value(v.raw, v.key, v.line, v.column, note if not v.note else f"{v.note}; {note}", expect)


def longrope_of_type(p: dict, model_type: str | None, v4: bool, top_orig, ignored, tf: str):
    """A longrope block's parameters ``p`` (name -> Value, rewritten in place) as ``model_type``'s rotary reads
    them under ``tf`` (``v4``: 4.57.1); ``ignored(value, why)`` reports a key it does not read (RV019). Returns
    the top-level original length the config class has (``top_orig``, or the block's for Phi-3.5-MoE)."""
    if model_type not in MSCALE_READERS:
        for name in ("short_mscale", "long_mscale"):
            mv = p.pop(name, None)
            if mv is not None and mv.key:
                ignored(mv, f"only Phi-3.5-MoE's rotary (model_type {', '.join(MSCALE_READERS)}: "
                            f"PhimoeRotaryEmbedding) reads it, not {model_type or 'this model'}'s")
        return top_orig
    inner = p.get("original_max_position_embeddings")
    lv, sv = p.get("long_factor"), p.get("short_factor")
    if not v4 and lv is not None and sv is not None:
        p["long_factor"] = _noted(sv, f"{tf}'s Phimoe rotary: the short factors at every position", "list")
        if lv.key:
            ignored(lv, "PhimoeRotaryEmbedding.forward recomputes the frequencies without the length "
                        "(rope_init_fn(self.config)): the short factors apply at every position")
    return top_orig if inner is None else _noted(inner, "PhimoeConfig copies it to the top level", "int")
