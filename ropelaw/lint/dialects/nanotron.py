"""nanotron YAML (huggingface/nanotron at the commit below; PyPI's nanotron 0.4, March 2024, predates most of
it): ``model.model_config`` (a ``LlamaConfig`` or ``Qwen2Config``, ``src/nanotron/config/models_config.py``),
``tokens.sequence_length``.

- the model: ``ModelArgs.model_config`` is the first of ``LlamaConfig``, ``Starcoder2Config``, ``Qwen2Config``
  whose fields hold every key (dacite, strict), else ``Qwen2Config(**keys)`` (``config/config.py``); the
  ``is_<name>_config`` key says which. A Mamba config (``is_mamba_config``, ``examples/mamba``) has no attention;
- head dim ``hidden_size // num_attention_heads`` (``models/llama.py`` ``d_qk``, ``models/qwen.py``
  ``head_dim``), the whole head rotated; base ``rope_theta`` (default 10,000 in both configs);
- ``model_config.max_position_embeddings`` is the length of the RoPE cache (``RotaryEmbedding(end=...)``), the
  target; the model trains at ``tokens.sequence_length``;
- ``rope_scaling`` is a field of both configs that neither model applies (no reference to it in
  ``models/llama.py`` or ``models/qwen.py``): a set value is RV030, never a scheme;
- Qwen2 only: ``rope_seq_len_interpolation_factor`` f divides the positions by f (``nn/rotary.py``
  ``FlashRotaryEmbedding``: ``t *= 1 / f``): linear interpolation; ``sliding_window_size`` W is flash-attn's
  ``window_size=(W - 1, 0)``, W positions, on every layer that applies the rotary; ``no_rope_layer`` k: layers
  i with ``(i + 1) % k == 0`` apply no rotary and no window (``Qwen2Attention._forward_packed``);
  ``_use_qkv_packed: false`` builds ``RotaryEmbedding`` from ``rope_seq_len_scaling_factor``, no field of
  ``Qwen2Config`` (AttributeError): RV030, never read as if it ran;
- a scheme is in force from the first step unless ``model.init_method`` is an existing checkpoint
  (``ExistingCheckpointInit``: ``path``);
- dtype: ``model.dtype``.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..model import NotARopeConfig, Value
from ._framework import Doc, Fields, derived, dialect, head_dim_of, preset, pretraining_with_scheme

NAME = "nanotron"
SRC = "huggingface/nanotron@2411b022a75fb7f7561a1bb4166706da5e1b76de"
CONFIGS = "huggingface/nanotron@2411b022 models_config.py"
# Qwen2Config's fields that LlamaConfig lacks: a model_config holding one is not a LlamaConfig (dacite, strict)
QWEN2_ONLY = frozenset({"is_qwen2_config", "rope_seq_len_interpolation_factor", "flex_attention_mask",
                        "sliding_window_size", "no_rope_layer", "_fused_rotary_emb", "_fused_rms_norm",
                        "_use_qkv_packed", "_use_doc_masking", "log_attn_probs", "ring_attn_heads_k_stride",
                        "moe_config"})


def detect(data: Mapping) -> bool:
    m = data.get("model")
    return isinstance(m, Mapping) and isinstance(m.get("model_config"), Mapping) and (
        isinstance(data.get("tokens"), Mapping) or isinstance(data.get("parallelism"), Mapping))


def read(doc: Doc) -> Fields:
    mc = "model.model_config"
    if doc.raw(f"{mc}.is_mamba_config") is True:
        raise NotARopeConfig(f"{doc.path}: nanotron Mamba model (is_mamba_config): no attention, no rotary "
                             f"({SRC} examples/mamba)")
    keys = doc.raw(mc) or {}
    qwen = doc.raw(f"{mc}.is_qwen2_config") is True or any(str(k) in QWEN2_ONLY for k in keys)
    kind = "Qwen2Config" if qwen else "LlamaConfig"
    problems: list = []
    notes: list = []
    unread: list = []
    heads = doc.get(f"{mc}.num_attention_heads", expect="int") or preset(32, f"num_attention_heads: {kind} default "
                                                                          f"({CONFIGS})", None, "int")
    hidden = doc.get(f"{mc}.hidden_size", expect="int") or preset(4096, f"hidden_size: {kind} default ({CONFIGS})",
                                                                  None, "int")
    hd = doc.get(f"{mc}.head_dim", expect="any")  # no field of either class: nanotron refuses it (TypeError)
    if hd is not None:
        unread.append(Value(hd.raw, hd.key, hd.line, hd.column, f"no field of {kind} or any nanotron model config: "
                            "nanotron refuses it (Qwen2Config(**model_config): TypeError)", "any"))
    head = head_dim_of(hidden, heads, problems)
    base = doc.get(f"{mc}.rope_theta") or preset(10000.0, f"rope_theta: {kind} default ({CONFIGS})", None)
    max_pos = doc.get(f"{mc}.max_position_embeddings", expect="int") or preset(
        2048, f"max_position_embeddings: {kind} default ({CONFIGS})", None, "int")
    seq = doc.get("tokens.sequence_length", expect="int")
    doc.raw(f"{mc}.rope_scaling")  # null: looked at
    rs = doc.get(f"{mc}.rope_scaling", expect="any")
    if rs is not None and rs.raw is not None:
        doc.consider_tree(f"{mc}.rope_scaling")
        unread.append(Value(rs.raw, rs.key, rs.line, rs.column, "nanotron's models do not apply rope_scaling", "any"))
    doc.consider(f"{mc}.rope_interleaved", f"{mc}._fused_rotary_emb")  # the layout of the pairs, not their frequencies
    scheme, params, window, nope, n_layers = None, {}, None, None, None
    if qwen:
        packed = doc.get(f"{mc}._use_qkv_packed", expect="any")
        if packed is not None and packed.raw is False:  # qwen.py line 210: a field Qwen2Config lacks
            unread.append(Value(False, packed.key, packed.line, packed.column, "nanotron then builds RotaryEmbedding("
                                "seq_len_scaling_factor=config.rope_seq_len_scaling_factor), no field of "
                                "Qwen2Config: AttributeError", "any"))
        f = doc.get(f"{mc}.rope_seq_len_interpolation_factor")
        if f is not None and f.number() is not None:
            scheme = derived("linear", f"{f.key}: FlashRotaryEmbedding divides the positions by it", f, "str")
            params = {"factor": f}
        w = doc.get(f"{mc}.sliding_window_size", expect="int")
        if w is not None:
            window = Value(w.raw, w.key, w.line, w.column, "flash-attn window_size (W - 1, 0): W positions", "int")
        k = doc.get(f"{mc}.no_rope_layer", expect="int")
        if k is not None and isinstance(k.raw, int) and not isinstance(k.raw, bool) and k.raw > 0:
            n = doc.get(f"{mc}.num_hidden_layers", expect="int")
            n_layers = n.raw if n is not None and isinstance(n.raw, int) and 0 < n.raw <= 1 << 16 else 32
            nope = tuple(i for i in range(n_layers) if (i + 1) % k.raw == 0)
            notes.append(f"{k.key} {k.raw}: layers {', '.join(map(str, nope[:4]))}, ... apply no rotary and no window")
    else:
        doc.consider(f"{mc}.sliding_window_size", f"{mc}.no_rope_layer")
    loaded = doc.get("model.init_method.path", expect="any")  # ExistingCheckpointInit; RandomInit has std
    from_start = pretraining_with_scheme(scheme, loaded, "nanotron", "model.init_method is no existing checkpoint, so "
                                         "this run is the model's pre-training", scheme, notes)
    return Fields(arch=f"nanotron {kind}", head_dim=head, d=head, base=base, train_len=seq, target=max_pos,
                  scheme=scheme, params=params, dtype=doc.get("model.dtype", expect="str"), window=window,
                  nope_layers=nope, n_layers=n_layers, pretrained_with_scheme=from_start, problems=problems,
                  notes=notes, unread=unread)


DIALECT = dialect(NAME, detect, read)
