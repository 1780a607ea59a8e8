"""Factory for ``ropelaw audit module``: DeepSeek-V3's inference ``freqs_cis`` buffer.

``deepseek-ai/DeepSeek-V3`` ``inference/model.py`` (commit in ``audits/catalog.py``) imports its triton
kernels (``from kernel import ...``) at module level, so ``ModelArgs`` and ``precompute_freqs_cis`` are
executed from the file (``_load.load_definitions``), unchanged. ``Transformer.__init__`` registers
``freqs_cis = precompute_freqs_cis(args)`` (complex64, ``args.max_seq_len`` rows: 16,384 by default,
YaRN factor 40 over 4,096 original positions, rope head dim 64) as a non-persistent buffer, and
``Transformer.forward`` slices ``self.freqs_cis[start_pos:start_pos + seqlen]``. The module here holds
that buffer and returns the slice for ``seq_len`` positions (``start_pos`` 0): a length longer than the
buffer gets only its 16,384 rows, as the model would (where ``apply_rotary_emb``'s view then fails).
``generate.py`` builds the model under ``torch.set_default_dtype(torch.bfloat16)`` (the ``default``
scenario); nothing in it casts the model.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Optional

import torch
from torch import nn

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _load import load_definitions  # noqa: E402


class FreqsCis(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        ns = load_definitions("inference/model.py", ["ModelArgs", "precompute_freqs_cis"],
                              {"torch": torch, "math": math, "dataclass": dataclass, "Literal": Literal,
                               "Optional": Optional, "Tuple": tuple})
        args = ns["ModelArgs"]()
        self.register_buffer("freqs_cis", ns["precompute_freqs_cis"](args), persistent=False)

    def forward(self, seq_len: int) -> torch.Tensor:
        return self.freqs_cis[0:seq_len]


def make():
    return FreqsCis()
