"""Factories for ``ropelaw audit module``: lit-llama's and TinyLlama's ``build_rope_cache``.

Both files (``Lightning-AI/lit-llama`` ``lit_llama/model.py``, ``jzhang38/TinyLlama``
``lit_gpt/model.py``, read at the commits in ``audits/catalog.py``) import lightning and their own
packages at module level, so only the rotary function is executed from the file
(``_load.load_definitions``; ``RoPECache`` is the files' own type alias). The function runs
unchanged, called as each model calls it:

- lit-llama ``LLaMA.build_rope_cache(idx)``: ``build_rope_cache(seq_len=block_size, n_elem=n_embd //
  n_head, dtype=idx.dtype, device=idx.device)`` where ``idx`` holds the token ids, so ``dtype`` is
  ``torch.int64``; LLaMA-7B: n_elem 128, base 10,000. Returns the stacked ``(seq, n_elem / 2, 2)``
  cache (cos, sin) that ``apply_rope`` reads pair by pair.
- TinyLlama ``GPT.build_rope_cache(idx)``: ``build_rope_cache(seq_len=block_size, n_elem=int(rotary_percentage
  * head_size), dtype=torch.bfloat16, device=idx.device, condense_ratio=condense_ratio)``; TinyLlama-1.1B:
  head size 64 (2,048 / 32), rotary_percentage 1.0, condense_ratio 1, base 10,000. Returns (cos, sin)
  in bf16 ("added by peiyuan to ensure same data type with q, k").

Both are trained by Lightning Fabric with ``precision="bf16-true"``, which builds the model under
``torch.set_default_dtype(torch.bfloat16)``: the audit's ``default`` scenario.
"""

from __future__ import annotations

import sys
from functools import partial
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _load import load_definitions  # noqa: E402


def make_lit_llama():
    """``build_rope_cache(seq_len, n_elem=128, dtype=torch.int64, device=cpu)`` (dtype = idx.dtype)."""
    ns = load_definitions("lit_llama/model.py", ["build_rope_cache"], {"torch": torch, "RoPECache": torch.Tensor})
    return partial(ns["build_rope_cache"], n_elem=128, dtype=torch.int64, device=torch.device("cpu"))


def make_tinyllama():
    """``build_rope_cache(seq_len, n_elem=64, dtype=torch.bfloat16, device=cpu, condense_ratio=1)``."""
    ns = load_definitions("lit_gpt/model.py", ["build_rope_cache"],
                          {"torch": torch, "RoPECache": tuple[torch.Tensor, torch.Tensor]})
    return partial(ns["build_rope_cache"], n_elem=64, dtype=torch.bfloat16, device=torch.device("cpu"),
                   condense_ratio=1)
