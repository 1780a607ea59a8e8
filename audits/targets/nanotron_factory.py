"""Factories for ``ropelaw audit module``: nanotron 0.4 ``StarcoderRotaryEmbedding`` (starcoder2).

``nanotron.models.starcoder2`` imports flash_attn and nanotron's parallel stack at module level, so
the factory executes only the two rotary definitions of that file, ``rotate_half`` and
``StarcoderRotaryEmbedding``, from the installed source (``_load.load_definitions``: unchanged code,
compiled under the file's own name). Stated device patch: the class hard-codes CUDA
(``assert self.inv_freq.device.type == "cuda"``, ``torch.arange(..., device="cuda")``); the text
``"cuda"`` inside the class becomes ``"cpu"``.

The module's ``forward(query, key, past_key_values_length=0)`` takes (batch, seq, heads, dim) tensors
and returns the rotated pair; the adapter takes a (batch, heads, seq, dim) query, transposes it and
returns the rotated query. ``forward`` re-initialises ``inv_freq`` in float32 on its first call
(the lazy re-initialisation the static scan recognises), i.e. after the cast scenario's ``.to()``.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import torch
from torch import nn

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _load import load_definitions  # noqa: E402

HEAD_DIM = 128     # StarCoder2-7B / 15B
BASE = 1000000     # StarCoder2's rope_theta


class QueryRotation(nn.Module):
    def __init__(self, rotary: nn.Module) -> None:
        super().__init__()
        self.head_dim = HEAD_DIM
        self.rotary = rotary

    def forward(self, q: torch.Tensor) -> torch.Tensor:
        x = q.transpose(1, 2)  # (b, s, h, d), nanotron's layout
        out, _ = self.rotary(x, x)
        return out.transpose(1, 2)


def make_starcoder2() -> nn.Module:
    ns = load_definitions("nanotron/models/starcoder2.py", ["rotate_half", "StarcoderRotaryEmbedding"],
                          {"torch": torch, "nn": nn, "Optional": Optional}, patch=[('"cuda"', '"cpu"')])
    return QueryRotation(ns["StarcoderRotaryEmbedding"](head_dim=HEAD_DIM, base=BASE))


def make_starcoder2_native() -> nn.Module:
    """The ``StarcoderRotaryEmbedding`` module itself: ``forward(query, key)`` on (batch, seq, heads, dim)."""
    ns = load_definitions("nanotron/models/starcoder2.py", ["rotate_half", "StarcoderRotaryEmbedding"],
                          {"torch": torch, "nn": nn, "Optional": Optional}, patch=[('"cuda"', '"cpu"')])
    return ns["StarcoderRotaryEmbedding"](head_dim=HEAD_DIM, base=BASE)
