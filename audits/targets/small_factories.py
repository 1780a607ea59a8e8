"""Factories for ``ropelaw audit module``: nanochat, OLMo, OpenNMT-py and GPT-J (mesh-transformer-jax).

Each rotary is executed from the target's own file (``_load``), unchanged; what stands in for the
rest of the file is stated here.

- nanochat (``karpathy/nanochat`` ``nanochat/gpt.py``): ``GPT._precompute_rotary_embeddings(seq_len,
  head_dim, base=100000, device=None)`` -> (cos, sin) ``(1, seq, 1, head_dim / 2)`` in
  ``COMPUTE_DTYPE``; the method reads ``self`` only when ``device`` is None, so it is called unbound
  with ``device="cpu"``. ``COMPUTE_DTYPE`` (``nanochat/common.py``: bf16 on the CUDA GPUs nanochat
  trains on, float32 on CPU) is bf16 here; head dim 128.
- OLMo (``ai2-olmo==0.6.0`` ``olmo/model.py``): ``RotaryEmbedding(config, cache).forward(q, k)`` on
  ``(batch, heads, seq, head_dim)``; the module imports OLMo's config / beam search stack, so
  ``BufferCache``, ``_non_meta_init_device`` and ``RotaryEmbedding`` are executed from the file with a
  plain namespace as ``config``: OLMo-7B's d_model 4,096, 32 heads, rope_theta 10,000, max_sequence_length
  2,048, ``rope_full_precision=True`` (the config default), init_device "cpu".
- OpenNMT-py (``OpenNMT-py==3.5.1`` ``onmt/modules/multi_headed_attn.py``): the module-level function
  ``rotaryembeddings(dim, maxseqlen=2048, base=10000, device=None)`` -> ``(rope, cos, sin)``, rope the
  complex ``(maxseqlen, dim)`` table ``torch.cat((rope, rope), dim=1)`` that ``apply_rotary_emb`` reads
  (interleaved: its first dim / 2 columns), cos / sin its real / imaginary part ``.half()``. Called
  natively: the auditor sees the three outputs as they are.
- GPT-J (``kingoflolz/mesh-transformer-jax`` ``mesh_transformer/layers.py``): ``fixed_pos_embedding(x,
  seq_dim=0)`` is numpy (float64) and returns ``(sin, cos)``; JAX converts them to float32 where
  ``apply_rotary_pos_emb`` multiplies. The adapter calls the function on a numpy array of x's shape and
  returns ``(cos, sin)`` as float32 torch tensors (JAX's default conversion); the scenarios cannot change
  numpy's dtypes, which is what the audit shows. The file imports haiku / jax, so only the function is
  executed (with numpy).
"""

from __future__ import annotations

import sys
from collections.abc import MutableMapping
from pathlib import Path
from types import SimpleNamespace
from typing import Optional

import numpy as np
import torch
from torch import nn

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _load import load_definitions  # noqa: E402


def make_nanochat():
    """``lambda seq_len: GPT._precompute_rotary_embeddings(None, seq_len, 128, device="cpu")``."""
    ns = load_definitions("nanochat/gpt.py", ["GPT"], {"torch": torch, "nn": nn, "COMPUTE_DTYPE": torch.bfloat16})
    pre = ns["GPT"]._precompute_rotary_embeddings

    def precompute_rotary_embeddings(seq_len: int):
        return pre(None, seq_len, 128, device="cpu")

    return precompute_rotary_embeddings


def make_olmo():
    """``RotaryEmbedding(config, BufferCache())``: ``forward(q, k) -> (q, k)`` on (batch, heads, seq, 128)."""
    ns = load_definitions("olmo/model.py", ["BufferCache", "_non_meta_init_device", "RotaryEmbedding"],
                          {"torch": torch, "nn": nn, "einsum": torch.einsum, "Tuple": tuple,
                           "MutableMapping": MutableMapping, "Optional": Optional, "ModelConfig": object})
    config = SimpleNamespace(d_model=4096, n_heads=32, rope_theta=10000, max_sequence_length=2048,
                             rope_full_precision=True, init_device="cpu")
    rope = ns["RotaryEmbedding"](config, ns["BufferCache"]())
    rope.head_dim = 128
    return rope


def make_opennmt():
    """OpenNMT-py 3.5.1 ``rotaryembeddings`` itself (dim via --head-dim); the file imports onmt's
    attention stack, so only the function is executed from it."""
    ns = load_definitions("onmt/modules/multi_headed_attn.py", ["rotaryembeddings"], {"torch": torch})
    return ns["rotaryembeddings"]


class GPTJFixedPos(nn.Module):
    """``forward(x)`` on (seq, heads, dim) as GPT-J's attention calls it (seq_dim 0) -> (cos, sin) float32."""

    def __init__(self) -> None:
        super().__init__()
        self.fn = load_definitions("mesh_transformer/layers.py", ["fixed_pos_embedding"],
                                   {"np": np})["fixed_pos_embedding"]
        self.head_dim = 64  # GPT-J-6B rotary_dim 64

    def forward(self, x: torch.Tensor):
        sin, cos = self.fn(np.zeros(tuple(x.shape), np.float32), seq_dim=0)
        return torch.from_numpy(np.asarray(cos, np.float32)), torch.from_numpy(np.asarray(sin, np.float32))


def make_gptj():
    return GPTJFixedPos()
