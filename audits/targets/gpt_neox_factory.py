"""Factories for ``ropelaw audit module``: GPT-NeoX's ``RotaryEmbedding`` (``EleutherAI/gpt-neox``
``megatron/model/positional_embeddings.py``, commit in ``audits/catalog.py``), along its three paths.

``ParallelSelfAttention`` builds ``RotaryEmbedding(rotary_ndims, base=rotary_emb_base,
max_seq_len=seq_length, precision=params_dtype)``; the cache (``_prepare_cache``) is computed in
float32 and stored ``.to(precision)``. The three paths a NeoX run takes:

1. ``forward(x, seq_dim=0, seq_len)`` -> (cos, sin) ``(seq, 1, 1, dim)`` in ``precision``, applied by
   ``apply_rotary_pos_emb`` (fp16) / ``apply_rotary_pos_emb_torch`` (bf16) in ``transformer.py``;
2. the same (cos, sin) handed to ``fused_apply_rotary_pos_emb_cached`` (``rope_fusion``, a CUDA
   kernel: the tables are those of path 1, so path 1's audit measures them);
3. TransformerEngine (``transformer_engine.py``): ``get_emb()`` = the float32 angles ``self.emb``
   ``.to(self.precision).cuda()``, i.e. the angles rounded to bf16 / fp16, applied by TE.

Pythia / NeoX-20B settings: rotary_ndims 24 (rotary_pct 0.25 of head size 96), base 10,000,
seq_length 2,048. ``precision`` is the run's params_dtype, so each factory is audited at its own
dtype only. Stated patch: ``get_emb``'s ``.cuda()`` becomes ``.cpu()`` (``_load`` text patch); the
module imports only torch and math.
"""

from __future__ import annotations

import sys
from pathlib import Path

import torch
from torch import nn

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _load import load  # noqa: E402

DIM, SEQ = 24, 2048
MOD = "megatron.model.positional_embeddings"


def _rotary(precision: torch.dtype):
    pe = load(MOD, patch={MOD: [("return self.emb.to(self.precision).cuda()",
                                 "return self.emb.to(self.precision).cpu()")]})
    return pe.RotaryEmbedding(DIM, SEQ, base=10000, precision=precision)


def make_forward_bf16():
    """Path 1 with params_dtype bf16: ``forward(x, seq_len=L) -> (cos, sin)``."""
    return _rotary(torch.bfloat16)


def make_forward_fp16():
    """Path 1 with params_dtype fp16 (NeoX-20B, Pythia)."""
    return _rotary(torch.float16)


class TEAngles(nn.Module):
    """Path 3: ``forward(seq_len)`` -> ``get_emb()[:seq_len]``, the angles TE applies ``(seq, 1, 1, dim)``."""

    def __init__(self, precision: torch.dtype) -> None:
        super().__init__()
        self.rotary = _rotary(precision)

    def forward(self, seq_len: int) -> torch.Tensor:
        return self.rotary.get_emb()[:seq_len]


def make_te_bf16():
    return TEAngles(torch.bfloat16)


def make_te_fp16():
    return TEAngles(torch.float16)
