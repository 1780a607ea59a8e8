"""Factories for ``ropelaw audit module``: the ``einsum("i,j->ij", t, inv_freq)`` rotaries of ESM,
fairseq and xformers (issue 21: exact in float32 and under CPU autocast, rounded under CUDA AMP).

- ESM: ``fair-esm==2.0.0`` ``esm/rotary_embedding.py`` ``RotaryEmbedding(dim).forward(q, k)``, q and k
  ``(batch * heads, seq, head_dim)`` as ESM's ``MultiheadAttention`` passes them; ESM-2's head dim 64
  (esm2_t33_650M_UR50D: 1,280 / 20 heads). Imported from the installed file without ``esm/__init__``.
- fairseq: ``facebookresearch/fairseq`` ``fairseq/modules/rotary_positional_embedding.py``
  ``RotaryPositionalEmbedding(dim, base=10000, precision=torch.half).forward(x, seq_len)`` -> (cos, sin)
  ``(seq, 1, 1, dim)``; dim 64 (the wav2vec 2.0 conformer's 1,024 / 16 heads). Imported as is (it
  imports only torch).
- xformers: ``xformers==0.0.22.post7`` (the last releases with ``xformers.components``)
  ``xformers/components/positional_embedding/rotary.py`` ``RotaryEmbedding(dim_model).forward(q, k)``,
  ``(batch, heads, seq, head_dim)``; head dim 64. Imported without ``xformers/__init__`` (which loads
  the CUDA extension); the file imports only torch.

No text patch: every line that runs is the library's own.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _load import load  # noqa: E402

HEAD_DIM = 64


def make_esm():
    """ESM-2's ``RotaryEmbedding(dim=64)``: ``forward(q, k) -> (q, k)`` on (batch * heads, seq, 64)."""
    return load("esm.rotary_embedding").RotaryEmbedding(HEAD_DIM)


def make_fairseq():
    """fairseq's ``RotaryPositionalEmbedding(64)``: ``forward(x, seq_len) -> (cos, sin)``, (seq, 1, 1, 64)."""
    return load("fairseq.modules.rotary_positional_embedding").RotaryPositionalEmbedding(HEAD_DIM)


def make_xformers():
    """xformers' ``RotaryEmbedding(dim_model=64)``: ``forward(q, k) -> (q, k)`` on (batch, heads, seq, 64)."""
    return load("xformers.components.positional_embedding.rotary").RotaryEmbedding(HEAD_DIM)
