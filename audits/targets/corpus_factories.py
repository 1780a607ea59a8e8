"""Factories for ``ropelaw audit module`` over issue 33's rotary-code corpus (``audits/corpus.py``): each
loads the package's own rotary code from its wheel, unpacked on PYTHONPATH (``tests/test_audits_corpus.py``
and ``audits/corpus.py --runtime`` set it), without the package's ``__init__`` chain.

- torchscale 0.3.0 ``component/xpos_relative_position.py`` ``XPOS(64)`` (the head dim of torchscale's
  default decoder, 768 / 12 heads): ``forward(x)`` on (batch * heads, seq, 64), float32 frequencies computed
  on every call, the angles rounded ``.to(x)``. The file imports only numpy and torch.
- torchscale 0.3.0 ``architecture/retnet.py`` ``RetNetRelPos``: only that class is executed
  (``load_definitions``: the file imports fairscale and the MoE stack at module level), built from the
  argparse fields it reads (decoder_embed_dim 512, 2 retention heads: a head dim of 256, 128 frequencies;
  recurrent_chunk_size 512), wrapped to return its (cos, sin) of the parallel form (its mask is the decay).

- NeMo 1.23 ``RotaryEmbedding`` and ``XPOSPositionEmbedding``, X-CLIP 0.14.4 and Ring Attention 0.5.20
  ``RotaryEmbedding``, Chronos-2's and Fish Speech's: run from their definitions (``load_definitions``) with
  einops (CI's corpus step installs it) and the stand-ins each factory names (a decorator replaced by the
  identity);
  TimesFM 3's, FlagAI's Transformer-XL sinusoid (fed as GLM feeds it) and vit-pytorch's N-d rotary (positions along
  one axis) likewise, each wrapper stated in its docstring.

The corpus's other entries are scanned statically and judged against a brute force of their code
(``audits/corpus.py``): their callables are not conventions the runtime audit calls (local-attention's
``forward(x) -> (angles, scale)`` is refused in one line, exit 2), or their package needs more than torch.

No text patch: every line that runs is the library's own.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch
from torch import nn

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _load import load, load_definitions  # noqa: E402


def make_torchscale_xpos():
    return load("torchscale.component.xpos_relative_position").XPOS(64)


class _RetNetCosSin(nn.Module):
    """RetNetRelPos's parallel form, returning its (cos, sin) (each frequency twice, interleaved)."""

    def __init__(self, rel_pos: nn.Module):
        super().__init__()
        self.rel_pos = rel_pos

    def forward(self, seq_len: int):
        (sin, cos), _mask = self.rel_pos(seq_len)
        return cos, sin


def make_torchscale_retnet():
    ns = load_definitions("torchscale/architecture/retnet.py", ["RetNetRelPos"], {"torch": torch, "nn": nn})
    args = argparse.Namespace(decoder_embed_dim=512, decoder_retention_heads=2, recurrent_chunk_size=512)
    return _RetNetCosSin(ns["RetNetRelPos"](args))


def _einops():
    import einops  # CI's corpus step installs einops==0.8.2 (--no-deps): NeMo's and X-CLIP's own imports

    return einops


def make_nemo_rope():
    """NeMo 1.23 ``RotaryEmbedding(128)`` (kv channels 128, base 10,000): ``forward(max_seq_len)`` returns the
    angles (n, 1, 1, 128); the file's other top-level code (apply_rotary_pos_emb) is not executed."""
    ns = load_definitions("nemo/collections/nlp/modules/common/megatron/position_embedding/"
                          "rotary_position_embedding.py", ["RotaryEmbedding"],
                          {"torch": torch, "nn": nn, "einsum": torch.einsum, "rearrange": _einops().rearrange})
    return ns["RotaryEmbedding"](128)


class _SeqLenDevice(nn.Module):
    """Calls ``forward(seq_len, device)`` (X-CLIP's signature) with the module's own device."""

    def __init__(self, rotary: nn.Module):
        super().__init__()
        self.rotary = rotary

    def forward(self, seq_len: int):
        return self.rotary(seq_len, self.rotary.inv_freq.device)


def make_xclip_rope():
    """X-CLIP 0.14.4 ``RotaryEmbedding(64)`` (dim_head 64): ``forward(seq_len, device)`` returns the angles."""
    ns = load_definitions("x_clip/x_clip.py", ["RotaryEmbedding"], {"torch": torch, "nn": nn,
                                                                   "rearrange": _einops().rearrange})
    return _SeqLenDevice(ns["RotaryEmbedding"](64))


def make_ring_rope():
    """Ring Attention 0.5.20 ``RingRotaryEmbedding(64)`` (ring=False): ``forward(seq)`` returns the angles. Run
    from its definition (the file imports the distributed ring stack); beartype's decorator is replaced by the
    identity (it checks argument types, it computes nothing)."""
    from torch.amp import autocast

    ns = load_definitions("ring_attention_pytorch/ring_attention.py", ["exists", "RingRotaryEmbedding"],
                          {"torch": torch, "nn": nn, "Module": nn.Module, "einsum": torch.einsum,
                           "autocast": autocast, "beartype": lambda f: f, "Tensor": torch.Tensor,
                           "rearrange": _einops().rearrange, "repeat": _einops().repeat})
    return _SeqLen(ns["RingRotaryEmbedding"](64))


class _SeqLen(nn.Module):
    """Calls ``forward(seq)`` (Ring Attention's parameter name, which the probe reads as a tensor) with a length."""

    def __init__(self, rotary: nn.Module):
        super().__init__()
        self.rotary = rotary

    def forward(self, seq_len: int):
        return self.rotary(seq_len)


def make_nemo_xpos():
    """NeMo 1.23 ``XPOSPositionEmbedding(64)`` (scale_base 2048): ``forward(x)`` rotates and scales x in
    (seq, batch, heads, dim). NeMo's ``@experimental`` decorator (it logs a warning) is replaced by the identity;
    the file's own helper functions run unchanged."""
    ns = load_definitions("nemo/collections/nlp/modules/common/megatron/position_embedding/"
                          "xpos_position_embedding.py",
                          ["fixed_pos_embedding", "rotate_every_two", "duplicate_interleave", "apply_rotary_pos_emb",
                           "XPOSPositionEmbedding"],
                          {"torch": torch, "nn": nn, "rearrange": _einops().rearrange, "experimental": lambda c: c})
    return ns["XPOSPositionEmbedding"](64)


def make_chronos2_rope():
    """Chronos-2 (chronos-forecasting 2.3.2) ``Chronos2RotaryEmbedding`` with d_kv 64 and rope_theta 10,000
    (its config's defaults): ``forward(x, position_ids)`` returns (cos, sin) in x's dtype. Run from its
    definition (the file imports transformers); ``maybe_autocast`` is ``torch.autocast``, the file's own
    fallback when transformers lacks it."""
    from types import SimpleNamespace

    ns = load_definitions("chronos/chronos2/layers.py", ["Chronos2RotaryEmbedding"],
                          {"torch": torch, "nn": nn, "maybe_autocast": torch.autocast})
    return ns["Chronos2RotaryEmbedding"](SimpleNamespace(rope_theta=10000.0, d_kv=64))


def make_fish_speech_rope():
    """Fish Speech 0.1.0 ``precompute_freqs_cis(seq_len, n_elem, base)`` (gpt-fast's: a bf16 (n, d/2, 2)
    cache) at head dim 128, run from its definition (the file imports its training stack)."""
    ns = load_definitions("fish_speech/models/text2semantic/llama.py", ["precompute_freqs_cis"],
                          {"torch": torch, "Tensor": torch.Tensor})
    fn = ns["precompute_freqs_cis"]

    def precompute_freqs_cis(seq_len: int, n_elem: int = 128):
        return fn(seq_len, n_elem)

    return precompute_freqs_cis


def make_timesfm3_rope():
    """timesfm 3.0.2 ``RotaryPositionalEmbedding(80)`` (the head dim of its model: 1,280 / 16 heads):
    ``forward(inputs, position)`` rotates inputs of (batch, seq, heads, 80) by ``position.float() / timescale``.
    Run from its definition (the file's other classes import its normalisation layers)."""
    ns = load_definitions("timesfm3/torch/transformer.py", ["RotaryPositionalEmbedding"], {"torch": torch, "nn": nn})
    return ns["RotaryPositionalEmbedding"](80)


class _GLMRelative(nn.Module):
    """FlagAI's ``PositionalEmbedding`` fed as ``glm_model.py`` feeds it (lines 231-235):
    ``arange(key_length - 1, -1, -1.0, dtype=hidden_states.dtype)``, the hidden states in the model's dtype
    (the buffer's after a cast). The positions are made as CUDA's ``arange`` makes them (``start + step * i`` in
    float32, rounded once: ``aten/src/ATen/native/cuda/RangeFactories.cu``), where GLM runs, not by torch 2.13's
    CPU kernel, whose bf16 ``arange`` rounds a block's first value and adds the step in bf16 within the block
    (1021 becomes 1024; 269 exact of 1,024 instead of 281).
    Returns (cos, sin), position p in row p (the embedding's rows run from key_length - 1 down to 0)."""

    def __init__(self, pe: nn.Module):
        super().__init__()
        self.pe = pe

    def forward(self, seq_len: int):
        pos = torch.arange(seq_len - 1, -1, -1.0, device=self.pe.inv_freq.device).to(self.pe.inv_freq.dtype)
        emb = self.pe(pos)[0].flip(0)
        half = emb.shape[-1] // 2
        return emb[:, half:], emb[:, :half]


def make_flagai_txl():
    """FlagAI 1.8.4 ``PositionalEmbedding(1024)`` (GLM-large's hidden size; the relative encoding of
    ``glm_model.py``), run from its definition (the file imports FlagAI's model-parallel layers)."""
    ns = load_definitions("flagai/model/layers/embeddings.py", ["PositionalEmbedding"], {"torch": torch})
    return _GLMRelative(ns["PositionalEmbedding"](1024))


class _FirstAxis(nn.Module):
    """Calls ``GoldenGateRoPENd.forward(input, pos)`` with positions along the first of its 3 axes (the others
    0, as on a grid's first row): ``pos`` (batch, n, 3) float32, as ``vit_nd_rotary.py`` builds it."""

    def __init__(self, rope: nn.Module):
        super().__init__()
        self.rope = rope

    def forward(self, x, position_ids):
        p = position_ids.to(torch.float32)
        return self.rope(x, torch.stack((p, torch.zeros_like(p), torch.zeros_like(p)), dim=-1))


def make_vit_nd_rope():
    """vit-pytorch 1.26.11 ``GoldenGateRoPENd(dim_pos=3, heads=1, dim_head=64)``: head 0's frequencies
    (directions 1 .. 32 of ``make_directions`` for any head count), broadcast over the probe's heads (each head
    has its own directions: the audit refuses heads rotated differently); its defaults otherwise:
    ``forward(input, pos)`` on (batch, heads, n, 64), the two halves rotated. Run from its definitions (the file
    imports its n-d masking module)."""
    einops = _einops()
    ns = load_definitions("vit_pytorch/vit_nd_rotary.py", ["exists", "l2norm", "_phi", "make_directions",
                                                          "GoldenGateRoPENd"],
                          {"torch": torch, "nn": nn, "arange": torch.arange, "cat": torch.cat,
                           "Tensor": torch.Tensor, "Module": nn.Module, "F": torch.nn.functional,
                           "rearrange": einops.rearrange, "reduce": einops.reduce})
    return _FirstAxis(ns["GoldenGateRoPENd"](3, 1, 64))


# ------------------------------------------------------------------ issue 33's GitHub-only implementations: files read
# at a pinned commit (audits/corpus.py, entries with ``repo``), put on PYTHONPATH at their repository path


class _ModelDtype(nn.Module):
    """A wrapper whose float32 ``weight`` stands for the model around the rotary: ``model.to(dtype)`` casts it, a
    default dtype builds it in that dtype; the rotary code receives its dtype where the model passes the
    activations' dtype (``x.dtype``, ``hidden_states.dtype``)."""

    def __init__(self, rotary: nn.Module):
        super().__init__()
        self.rotary = rotary
        self.weight = nn.Parameter(torch.zeros(1), requires_grad=False)


class _TGICosSin(_ModelDtype):
    """TGI's ``get_cos_sin(position_ids, max_s, dtype)`` as its flash models call it (``hidden_states.dtype``),
    (n, 1, d/2) each; returned as (n, d/2)."""

    def forward(self, seq_len: int):
        cos, sin = self.rotary.get_cos_sin(torch.arange(seq_len), seq_len, self.weight.dtype)
        return cos[:, 0], sin[:, 0]


def make_tgi_rope():
    """text-generation-inference ``PositionRotaryEmbedding`` (head dim 128, base 10,000) built as
    ``PositionRotaryEmbedding.static`` builds it without rope_scaling (``cls(_create_inv_freq(...), None)``).
    Run from its definitions (the file loads CUDA / ROCm kernels at import); ``SYSTEM`` is "cuda" (the NVIDIA path:
    cos / sin in the model's dtype; ROCm keeps float32)."""
    import math
    import os

    ns = load_definitions("server/text_generation_server/layers/rotary.py",
                          ["_create_inv_freq", "PositionRotaryEmbedding"],
                          {"torch": torch, "nn": nn, "os": os, "math": math, "SYSTEM": "cuda"})
    return _TGICosSin(ns["PositionRotaryEmbedding"](ns["_create_inv_freq"](128, 10000.0, "cpu"), None))


class _InternLMCosSin(_ModelDtype):
    """InternLM's ``_update_cos_sin_cache(qkv, indexes)`` as ``_forward`` calls it, on a ``qkv`` of the model's
    dtype and ``seq_len`` positions; its cached (cos, sin)."""

    def forward(self, seq_len: int):
        qkv = torch.zeros(1, seq_len, 3, 1, 2, dtype=self.weight.dtype)
        self.rotary._update_cos_sin_cache(qkv, seq_len - 1)
        return self.rotary._cos_cached[:seq_len], self.rotary._sin_cached[:seq_len]


def _internlm():
    # ``Tuple``: the name InternLM's return annotations use (``Tuple[Tensor, Tensor]``; the builtin subscripts alike)
    ns = load_definitions("internlm/model/embedding.py", ["RotaryEmbedding"],
                          {"torch": torch, "nn": nn, "Tensor": torch.Tensor, "Tuple": tuple,
                           "rearrange": _einops().rearrange})
    return _InternLMCosSin(ns["RotaryEmbedding"](128))


def make_internlm_rope():
    """InternLM ``internlm/model/embedding.py`` ``RotaryEmbedding(128)`` (InternLM-7B: 4,096 / 32 heads), at the
    commit the manifest pins (before or after its fix: the same code runs). Run from its definition (the file
    imports flash-attn's CUDA rotary and InternLM's parallel context)."""
    return _internlm()


def make_yarn_reference():
    """jquesnelle/yarn ``LlamaYaRNScaledRotaryEmbedding`` as Yarn-Llama-2-7b-64k configures it (head dim 128, scale
    16, original_max_position_embeddings 4,096, max_position_embeddings 65,536): ``forward(x, seq_len)`` returns
    (cos, sin) (1, 1, n, 128). The file imports only torch and math."""
    import math

    ns = load_definitions("scaled_rope/LlamaYaRNScaledRotaryEmbedding.py",
                          ["find_correction_dim", "find_correction_range", "linear_ramp_mask", "get_mscale",
                           "LlamaYaRNScaledRotaryEmbedding"], {"torch": torch, "math": math})
    return ns["LlamaYaRNScaledRotaryEmbedding"](128, max_position_embeddings=65536, scale=16,
                                                 original_max_position_embeddings=4096)


class _GemmaFreqsCis(nn.Module):
    """gemma_pytorch's ``_register_freqs_cis`` (a buffer of ``max_seq_len * 2`` positions, complex64) and the
    ``index_select(0, input_positions)`` of ``GemmaForCausalLM.forward``."""

    def __init__(self, precompute, head_dim: int, max_seq_len: int):
        super().__init__()
        self.register_buffer("freqs_cis", precompute(head_dim, max_seq_len * 2, theta=10000))

    def forward(self, seq_len: int):
        return self.freqs_cis.index_select(0, torch.arange(seq_len))


def make_gemma_pytorch():
    """google/gemma_pytorch ``precompute_freqs_cis`` (Gemma 7B: head dim 256, max_position_embeddings 8,192), from
    its definition (gemma/model.py imports the tokenizer and config modules)."""
    ns = load_definitions("gemma/model.py", ["precompute_freqs_cis"], {"torch": torch})
    return _GemmaFreqsCis(ns["precompute_freqs_cis"], 256, 8192)


class _FluxAxis(nn.Module):
    """Flux's ``rope(pos, 56, 10000)`` on one image axis: ``pos`` float32 latent rows (``img_ids``, sampling.py)."""

    def __init__(self, rope):
        super().__init__()
        self.rope = rope

    def forward(self, seq_len: int):
        return self.rope(torch.arange(seq_len, dtype=torch.float32)[None], 56, 10000)


def make_flux_rope():
    """black-forest-labs/flux ``math.rope``: returns 2x2 rotation matrices (1, n, 28, 2, 2)."""
    ns = load_definitions("src/flux/math.py", ["rope"], {"torch": torch, "rearrange": _einops().rearrange})
    return _FluxAxis(ns["rope"])
