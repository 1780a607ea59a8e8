"""Factories for ``ropelaw audit module``: flash-attn 2.8.3 ``flash_attn.layers.rotary.RotaryEmbedding``.

flash-attn needs CUDA to build, so ``audits/run.py`` unpacks its source distribution. The rotary
layer is imported from it without the package ``__init__`` (which loads the CUDA extension) and with
the triton kernel module ``flash_attn.ops.triton.rotary`` replaced by a stand-in whose
``apply_rotary`` raises (stated patch: triton is not installed and has no CPU path). What runs is
flash-attn's pure-torch path: ``RotaryEmbedding._update_cos_sin_cache`` (the code that builds the
cos/sin tables, with its float32 recompute when a cast changed inv_freq's dtype) and
``apply_rotary_emb_torch``, the package's own pure-torch reference of the kernel.

``RotaryEmbedding.forward`` rotates qkv in place through the triton kernel; the adapter here does
what it does with the pure-torch function instead: ``_update_cos_sin_cache(seqlen, device, dtype)``
then rotates a (batch, seq, heads, dim) query with the cached cos/sin (for XPos, the query's scaled
tables ``_cos_cached`` / ``_sin_cached``). The rotary module is a submodule, so ``.to(dtype)`` reaches
its ``inv_freq`` and ``scale`` buffers.
"""

from __future__ import annotations

import sys
from pathlib import Path

import torch
from torch import nn

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _load import load  # noqa: E402

HEAD_DIM = 64


def _no_triton(*args, **kwargs):
    raise RuntimeError("flash_attn.ops.triton.rotary.apply_rotary is the triton kernel (CUDA only)")


def _rotary():
    return load("flash_attn.layers.rotary", stubs={"flash_attn.ops.triton.rotary": {"apply_rotary": _no_triton}})


class PureTorchRotary(nn.Module):
    """forward(q (b, h, s, d)): flash-attn's cos/sin cache applied with ``apply_rotary_emb_torch``."""

    def __init__(self, scale_base: float | None = None) -> None:
        super().__init__()
        m = _rotary()
        self.head_dim = HEAD_DIM
        self.rotary = m.RotaryEmbedding(HEAD_DIM, base=10000.0, interleaved=False, scale_base=scale_base)
        self._apply_torch = m.apply_rotary_emb_torch

    def forward(self, q: torch.Tensor) -> torch.Tensor:
        x = q.transpose(1, 2)  # (b, s, h, d), flash-attn's layout
        self.rotary._update_cos_sin_cache(x.shape[1], device=x.device, dtype=x.dtype)
        out = self._apply_torch(x, self.rotary._cos_cached, self.rotary._sin_cached, self.rotary.interleaved)
        return out.transpose(1, 2)


def make() -> nn.Module:
    """``RotaryEmbedding(64)``: GPT-NeoX style rotate-half, base 10,000 (package defaults)."""
    return PureTorchRotary()


def make_xpos() -> nn.Module:
    """``RotaryEmbedding(64, scale_base=512)``: XPos (the value flash-attn recommends)."""
    return PureTorchRotary(scale_base=512.0)
