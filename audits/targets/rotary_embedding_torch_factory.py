"""Factories for ``ropelaw audit module``: lucidrains' ``rotary-embedding-torch``.

The package's own calling convention in an attention layer is
``rotary.rotate_queries_or_keys(q)`` with ``q`` of shape (batch, heads, seq, dim): it builds the
positions itself (``get_seq_pos``) and returns ``q`` rotated. ``RotaryEmbedding.forward`` returns
raw angles, not cos/sin, so the factory wraps the class in a module whose ``forward(q)`` is that
call: the auditor probes it as a "rotates a query" callable. Wrapping in an ``nn.Module`` keeps the
``freqs`` parameter and the ``cached_freqs`` buffer reachable by ``.to(dtype)`` (the cast scenario).
"""

from __future__ import annotations

import torch
from torch import nn

HEAD_DIM = 64  # rotary dimension d = head dimension, the package's README example size


class RotateQueriesOrKeys(nn.Module):
    """``forward(q) = RotaryEmbedding(dim).rotate_queries_or_keys(q)``; q: (batch, heads, seq, dim)."""

    def __init__(self, dim: int = HEAD_DIM, **kwargs) -> None:
        super().__init__()
        self.head_dim = dim  # the query width the auditor probes with (rotary dim = head dim here)
        from rotary_embedding_torch import RotaryEmbedding

        self.rotary = RotaryEmbedding(dim=dim, **kwargs)

    def forward(self, q: torch.Tensor) -> torch.Tensor:  # (b, h, n, d) -> (b, h, n, d), q.dtype
        return self.rotary.rotate_queries_or_keys(q)


def make() -> nn.Module:
    """RotaryEmbedding(dim=64), default theta 10000, as in the package README."""
    return RotateQueriesOrKeys(HEAD_DIM)
