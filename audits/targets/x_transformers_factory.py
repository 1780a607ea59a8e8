"""Factories for ``ropelaw audit module``: lucidrains' ``x-transformers``.

``x_transformers.x_transformers.RotaryEmbedding`` returns angles (``freqs``, interleaved pair
layout) for int64 positions; ``Decoder`` calls it as ``self.rotary_pos_emb(arange(n))`` and the
attention layer applies ``apply_rotary_pos_emb(q, freqs, scale)``. The factory reproduces exactly
that path in a module whose ``forward(q)`` rotates a (batch, heads, seq, dim) query, so the auditor
probes it as a "rotates a query" callable and ``.to(dtype)`` reaches the ``inv_freq`` buffer.
"""

from __future__ import annotations

import torch
from torch import nn

HEAD_DIM = 64  # rotary dimension; x-transformers' default rotary_emb_dim is max(dim_head // 2, 32)


class DecoderRotaryPath(nn.Module):
    """``forward(q) = apply_rotary_pos_emb(q, *RotaryEmbedding(dim)(arange(n)))``."""

    def __init__(self, dim: int = HEAD_DIM) -> None:
        super().__init__()
        self.head_dim = dim  # the query width the auditor probes with (rotary dim = head dim here)
        from x_transformers.x_transformers import RotaryEmbedding

        self.rotary = RotaryEmbedding(dim)

    def forward(self, q: torch.Tensor) -> torch.Tensor:  # (b, h, n, d) -> (b, h, n, d), q.dtype
        from x_transformers.x_transformers import apply_rotary_pos_emb

        pos = torch.arange(q.shape[-2], device=q.device)  # (n,) int64, as Decoder.forward builds it
        freqs, scale = self.rotary(pos)                    # (1, n, d) angles in inv_freq's dtype
        return apply_rotary_pos_emb(q, freqs, scale)


def make() -> nn.Module:
    """The Decoder's rotary path with a 64-dim rotary embedding, base 10000 (package defaults)."""
    return DecoderRotaryPath(HEAD_DIM)
