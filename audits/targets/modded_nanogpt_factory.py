"""Factories for ``ropelaw audit module``: modded-nanogpt's rotary at three dates.

The files are training scripts (``KellerJordan/modded-nanogpt``, read at the commit in
``audits/catalog.py``): importing one starts distributed CUDA training, so only the rotary class is
executed from the file (``_load.load_definitions``), unchanged. Head dim 128 (768 / 6 heads).

- 2024-10-14 (records/track_1_short/2024-10-14_ModernArch/train_gpt2.py): ``Rotary(dim).forward(x)``
  returns (cos, sin) ``(1, seq, 1, dim / 2)`` for x ``(batch, seq, heads, dim)``; the model runs in
  float32 under ``torch.amp.autocast(device_type='cuda', dtype=torch.bfloat16)``.
- 2024-12-04 (records/track_1_short/2024-12-04_ValueEmbed/train_gpt2.py): ``Rotary(dim).forward(x)``
  returns x rotated; ``inv_freq`` is a registered buffer and the script runs
  ``model = model.cuda().bfloat16()`` (then only the ``CastedLinear`` layers back to float): the
  audit's ``cast`` scenario, at the script's 64 x 1,024-token sequences.
- 2026-08-01 (train_gpt.py): ``Yarn(head_dim, max_seq_len)``, whose ``rotary(x)`` applies bf16
  cos/sin tables built in float32 over ``2 * max_seq_len`` positions, half of the pairs at frequency 0
  ("half-truncate RoPE"). It has no ``forward``: the adapter's ``forward(x)`` is ``self.yarn.rotary(x)``.
  Stated patch: the script's module-level ``device`` (``torch.device("cuda", LOCAL_RANK)``) is "cpu";
  ``max_seq_len`` 65,536 (a table of 131,072 rows; the script's validation value, 262,144, would need
  4x the memory for the same result).
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import torch
from torch import Tensor, nn

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _load import load_definitions  # noqa: E402

HEAD_DIM = 128
OCT = "records/track_1_short/2024-10-14_ModernArch/train_gpt2.py"
DEC = "records/track_1_short/2024-12-04_ValueEmbed/train_gpt2.py"


def make_2024_10():
    """``Rotary(128)``: ``forward(x) -> (cos, sin)``, x (batch, seq, heads, 128)."""
    return load_definitions(OCT, ["Rotary"], {"torch": torch, "nn": nn})["Rotary"](HEAD_DIM)


def make_2024_12():
    """``Rotary(128)``: ``forward(x) -> x rotated``, x (batch, seq, heads, 128)."""
    return load_definitions(DEC, ["Rotary"], {"torch": torch, "nn": nn})["Rotary"](HEAD_DIM)


class YarnRotary(nn.Module):
    """``forward(x)`` = ``Yarn.rotary(x)``, x (batch, seq, heads, 128), as ``CausalSelfAttention`` calls it."""

    def __init__(self, max_seq_len: int = 65536) -> None:
        super().__init__()
        ns = load_definitions("train_gpt.py", ["Yarn"], {"torch": torch, "nn": nn, "Tensor": Tensor, "math": math,
                                                       "device": "cpu"})
        self.yarn = ns["Yarn"](HEAD_DIM, max_seq_len)
        self.head_dim = HEAD_DIM

    def forward(self, x: Tensor) -> Tensor:
        return self.yarn.rotary(x)


def make_2026_08():
    return YarnRotary()
