"""Factories for ``ropelaw audit module``: torchtitan 0.3.0 ``ComplexRoPE`` and ``CosSinRoPE``.

``torchtitan/models/common/rope.py`` is imported from the install directory without torchtitan's
package ``__init__`` chain (``_load.py``); two imports are replaced by stand-ins (stated patch):
``spmd_types`` (its ``no_typecheck()`` / ``local_map(...)`` decorators become identity decorators:
they only annotate SPMD placements) and ``torchtitan.protocols.module.Module`` (an ``nn.Module``
with an empty ``Config`` dataclass, which is all ``RoPE`` uses of it). The rope classes, their cache
and ``apply_rotary_emb`` run unchanged.

torchtitan calls ``rope(query, key, positions)`` on (batch, seq, heads, dim) tensors and gets the
rotated ``(query, key)``; the adapter here takes a (batch, heads, seq, dim) query, transposes it,
calls the rope module on the pair and returns the rotated query, so the auditor probes it as a
rotating callable. The rope module is a submodule, so ``.to(dtype)`` reaches its ``cache`` buffer:
the complex64 cache of ``ComplexRoPE`` becomes real (its real part only) under ``.to(bf16)``.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

import torch
from torch import nn

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _load import identity_decorator, load  # noqa: E402

HEAD_DIM = 128   # Llama-3 8B head dim
MAX_SEQ_LEN = 131072  # the cache covers every audited length (torchtitan sizes it to the training length)


class _Module(nn.Module):
    @dataclass(kw_only=True, slots=True)
    class Config:
        pass


def _rope():
    return load("torchtitan.models.common.rope", stubs={
        "spmd_types": {"no_typecheck": identity_decorator, "local_map": identity_decorator,
                       "S": lambda *a: None, "R": None},
        "torchtitan.protocols.module": {"Module": _Module},
    })


class QueryRotation(nn.Module):
    """forward(q (b, h, s, d)) = rope(q^T, q^T)[0]^T with torchtitan's own rope module."""

    def __init__(self, rope: nn.Module, head_dim: int) -> None:
        super().__init__()
        self.head_dim = head_dim
        self.rope = rope

    def forward(self, q: torch.Tensor) -> torch.Tensor:
        x = q.transpose(1, 2)  # (b, s, h, d), torchtitan's layout
        out, _ = self.rope(x, x)
        return out.transpose(1, 2)


def make_complex() -> nn.Module:
    """``ComplexRoPE(dim=128, max_seq_len=131072, theta=500000)``: Llama-3 8B's rope settings."""
    m = _rope()
    return QueryRotation(m.ComplexRoPE(m.ComplexRoPE.Config(dim=HEAD_DIM, max_seq_len=MAX_SEQ_LEN, theta=500000.0)),
                         HEAD_DIM)


def make_cossin() -> nn.Module:
    """``CosSinRoPE(dim=128, max_seq_len=131072, theta=500000)``."""
    m = _rope()
    return QueryRotation(m.CosSinRoPE(m.CosSinRoPE.Config(dim=HEAD_DIM, max_seq_len=MAX_SEQ_LEN, theta=500000.0)),
                         HEAD_DIM)


def make_complex_native() -> nn.Module:
    """The ``ComplexRoPE`` module itself: ``forward(query, key, positions)`` on (batch, seq, heads, dim),
    returning the rotated pair (for an auditor that probes that convention; findings then point at
    torchtitan's source)."""
    m = _rope()
    return m.ComplexRoPE(m.ComplexRoPE.Config(dim=HEAD_DIM, max_seq_len=MAX_SEQ_LEN, theta=500000.0))


def make_cossin_native() -> nn.Module:
    """The ``CosSinRoPE`` module itself (see :func:`make_complex_native`)."""
    m = _rope()
    return m.CosSinRoPE(m.CosSinRoPE.Config(dim=HEAD_DIM, max_seq_len=MAX_SEQ_LEN, theta=500000.0))
