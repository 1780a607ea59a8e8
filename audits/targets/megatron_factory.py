"""Factories for ``ropelaw audit module``: megatron-core 0.19.2 ``RotaryEmbedding`` and
``MultimodalRotaryEmbedding`` (MRoPE).

megatron-core >= 0.17 needs Python 3.12, so ``audits/run.py`` unpacks the cp312 wheel; the rotary
module is pure Python and is imported from it without ``megatron/core/__init__.py`` (``_load.py``).
Stated patches:

- stand-ins for ``megatron.core.parallel_state`` (no context-parallel group: ``None``),
  ``megatron.core.utils`` (``internal_api`` is an identity decorator, ``deprecate_inference_params``
  returns its first argument) and ``megatron.core.extensions.transformer_engine`` (absent, as
  without Transformer Engine: the fused kernels fall back to the unfused torch code);
- device: ``RotaryEmbedding`` is built with ``use_cpu_initialization=True`` (its own option), and the
  text ``torch.cuda.current_device()`` in ``rotary_pos_embedding.py`` (MRoPE's ``inv_freq``, and the
  move of ``inv_freq`` to the GPU at the first forward) becomes ``"cpu"``.

Megatron's attention applies the angles with ``_apply_rotary_pos_emb_bshd(t, freqs)`` on
(seq, batch, heads, dim) tensors (``cos_ = torch.cos(freqs).to(t.dtype)``); the adapters here call
the rotary module as the model does (``rotary_pos_emb(max_seq_len)``, MRoPE's
``rotary_pos_emb(position_ids, mrope_section)`` with the same position for the three sections, i.e.
a text token) and rotate a (batch, heads, seq, dim) query with that function.
"""

from __future__ import annotations

import sys
from pathlib import Path

import torch
from torch import nn

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _load import identity_decorator, load  # noqa: E402

HEAD_DIM = 128
MROPE_SECTION = [16, 24, 24]  # Qwen2-VL's mrope_section for head dim 128


def _modules():
    stubs = {
        "megatron.core.parallel_state": {"get_context_parallel_group": lambda **kw: None},
        "megatron.core.utils": {"internal_api": identity_decorator,
                                "deprecate_inference_params": lambda a, b=None: a if a is not None else b},
        "megatron.core.extensions.transformer_engine": {},
    }
    patch = {"megatron.core.models.common.embeddings.rotary_pos_embedding":
             [("torch.cuda.current_device()", '"cpu"')]}
    rpe = load("megatron.core.models.common.embeddings.rotary_pos_embedding", stubs=stubs, patch=patch)
    utils = load("megatron.core.models.common.embeddings.rope_utils")
    return rpe, utils


class SbhdRotation(nn.Module):
    """forward(q (b, h, s, d)): Megatron's angles applied by ``_apply_rotary_pos_emb_bshd`` in (s, b, h, d)."""

    def __init__(self, mrope: bool) -> None:
        super().__init__()
        rpe, utils = _modules()
        self.head_dim = HEAD_DIM
        self.mrope = mrope
        self._rotate = utils._apply_rotary_pos_emb_bshd
        if mrope:
            self.rotary_pos_emb = rpe.MultimodalRotaryEmbedding(kv_channels=HEAD_DIM, rotary_percent=1.0,
                                                                rotary_base=1000000)
        else:
            self.rotary_pos_emb = rpe.RotaryEmbedding(kv_channels=HEAD_DIM, rotary_percent=1.0, rotary_base=500000,
                                                      use_cpu_initialization=True)

    def forward(self, q: torch.Tensor) -> torch.Tensor:
        n = q.shape[-2]
        if self.mrope:
            pos = torch.arange(n, device=q.device)[None, None, :].expand(3, q.shape[0], n)  # (3, b, s) int64
            freqs = self.rotary_pos_emb(pos, MROPE_SECTION)  # (s, b, 1, dim) angles
        else:
            self.rotary_pos_emb.forward.cache_clear() if hasattr(self.rotary_pos_emb.forward, "cache_clear") else None
            freqs = self.rotary_pos_emb(n)  # (s, 1, 1, dim) angles
        t = q.permute(2, 0, 1, 3)  # (s, b, h, d)
        return self._rotate(t, freqs).permute(1, 2, 0, 3)


def make() -> nn.Module:
    """``RotaryEmbedding(kv_channels=128, rotary_percent=1.0, rotary_base=500000)`` (Llama-3 settings)."""
    return SbhdRotation(mrope=False)


def make_mrope() -> nn.Module:
    """``MultimodalRotaryEmbedding(kv_channels=128, rotary_percent=1.0, rotary_base=1000000)`` (Qwen2-VL)."""
    return SbhdRotation(mrope=True)


def make_native() -> nn.Module:
    """The ``RotaryEmbedding`` module itself: ``forward(max_seq_len) -> angles (seq, 1, 1, dim)``."""
    rpe, _ = _modules()
    return rpe.RotaryEmbedding(kv_channels=HEAD_DIM, rotary_percent=1.0, rotary_base=500000,
                               use_cpu_initialization=True)
