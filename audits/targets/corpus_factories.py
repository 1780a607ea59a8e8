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
