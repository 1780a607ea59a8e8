"""Factories for ``ropelaw audit module``: litgpt 0.5.13 ``build_rope_cache`` + ``apply_rope``.

``import litgpt`` imports lightning (not installed: the audit installs litgpt with --no-deps), so
``litgpt/model.py`` is imported from the install directory without the package ``__init__``
(``_load.py``); its two imports of other litgpt modules are replaced by stand-ins (stated patch):
``litgpt.config.Config`` (only type hints and ``GPT.from_name`` use it) and
``litgpt.scripts.convert_hf_checkpoint.qkv_reassemble`` (checkpoint conversion). The rotary functions
run unchanged.

litgpt's ``GPT`` registers ``cos`` / ``sin`` buffers built by ``build_rope_cache(seq_len=block_size,
n_elem=rope_n_elem, base=rope_base)`` when the model is built (the ``max_seq_length`` setter), and its
attention applies ``apply_rope(q, cos[:T], sin[:T])``. The module here does exactly that for one
(batch, heads, seq, dim) query, with the cache built for 131,072 positions (the longest audited
length; litgpt sizes it to ``block_size``) at Llama-3 8B's settings (head size 128, base 500,000), so
``.to(dtype)`` casts the two buffers as it does in ``GPT``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import torch
from torch import nn

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _load import load  # noqa: E402

HEAD_DIM = 128
BASE = 500000
BLOCK_SIZE = 131072


def _model():
    return load("litgpt.model", stubs={"litgpt.config": {"Config": object},
                                       "litgpt.scripts.convert_hf_checkpoint": {"qkv_reassemble": None}})


class GPTRotary(nn.Module):
    """``GPT``'s rotary path: cos/sin buffers from ``build_rope_cache``, applied by ``apply_rope``."""

    def __init__(self) -> None:
        super().__init__()
        m = _model()
        self.head_dim = HEAD_DIM
        self._apply_rope = m.apply_rope
        cos, sin = m.build_rope_cache(seq_len=BLOCK_SIZE, n_elem=HEAD_DIM, base=BASE)
        self.register_buffer("cos", cos, persistent=False)  # as GPT.max_seq_length's first call does
        self.register_buffer("sin", sin, persistent=False)

    def forward(self, q: torch.Tensor) -> torch.Tensor:  # (b, h, T, d), as in CausalSelfAttention
        T = q.shape[-2]
        cos, sin = self.cos[:T].unsqueeze(0), self.sin[:T].unsqueeze(0)  # GPT.forward: self.cos[:T]
        return self._apply_rope(q, cos, sin)


def make() -> nn.Module:
    return GPTRotary()


def make_native():
    """litgpt's cache builder itself, ``build_rope_cache(seq_len, n_elem, ...) -> (cos, sin)``, with
    Llama-3 8B's ``n_elem`` and ``base`` bound (``functools.partial``)."""
    from functools import partial

    return partial(_model().build_rope_cache, n_elem=HEAD_DIM, base=BASE)
