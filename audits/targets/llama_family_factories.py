"""Factories for ``ropelaw audit module``: the complex ``precompute_freqs_cis`` of the Llama family
and its descendants, called natively (the auditor finds the convention; ``--head-dim`` / ``--base``
fill the dim and a required theta, as a user would pass them).

- gpt-fast (``pytorch-labs/gpt-fast`` ``model.py``): ``precompute_freqs_cis(seq_len, n_elem, base=10000,
  dtype=torch.bfloat16, rope_scaling=None)`` -> a stacked ``(seq, n_elem / 2, 2)`` (cos, sin) cache
  cast to ``dtype`` (``Transformer.setup_caches`` passes the output layer's dtype: bf16 by default).
  The file imports only torch; the two functions are executed from it (``_load.load_definitions``).
- meta-llama/llama (``llama/model.py``) and llama-models 0.3.0 (``llama_models/llama3/model.py``):
  ``precompute_freqs_cis(dim, end, theta=10000.0[, use_scaled])`` -> complex64 ``(end, dim / 2)``;
  the files import fairscale, so only the functions are executed.
- llm.c (``train_llama3.py``, the PyTorch reference of its Llama 3 trainer): the same function with
  ``apply_scaling`` (Llama 3.1 frequency scaling); called by the script with theta 500,000 and
  ``use_scaled_rope=True`` (bound here with ``functools.partial``).
- mistral-inference 1.6.0 (``mistral_inference/rope.py``): ``precompute_freqs_cis(dim, end, theta)``,
  theta required (issue 21: the prober filled it with the query); imported from the installed file
  without the package ``__init__``.
"""

from __future__ import annotations

import math
import sys
from functools import partial
from pathlib import Path
from typing import Optional

import torch
from torch import Tensor

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _load import load, load_definitions  # noqa: E402


def make_gpt_fast():
    """``precompute_freqs_cis`` itself (Llama-2-7B: n_elem 128 via --head-dim, base 10,000)."""
    ns = load_definitions("model.py", ["apply_rope_scaling", "precompute_freqs_cis"],
                          {"torch": torch, "Tensor": Tensor, "Optional": Optional, "math": math})
    return ns["precompute_freqs_cis"]


def make_llama():
    """meta-llama/llama ``precompute_freqs_cis(dim, end, theta=10000.0)`` itself."""
    return load_definitions("llama/model.py", ["precompute_freqs_cis"], {"torch": torch})["precompute_freqs_cis"]


def make_llama_models():
    """llama-models 0.3.0 ``precompute_freqs_cis(dim, end, theta, use_scaled)`` itself (Llama 3)."""
    ns = load_definitions("llama_models/llama3/model.py", ["apply_scaling", "precompute_freqs_cis"],
                          {"torch": torch, "math": math})
    return ns["precompute_freqs_cis"]


def make_llm_c():
    """llm.c ``precompute_freqs_cis`` with Llama 3.1's theta 500,000 and ``use_scaled=True`` bound."""
    ns = load_definitions("train_llama3.py", ["apply_scaling", "precompute_freqs_cis"],
                          {"torch": torch, "math": math})
    return partial(ns["precompute_freqs_cis"], theta=500000.0, use_scaled=True)


def make_mistral():
    """mistral-inference 1.6.0 ``precompute_freqs_cis(dim, end, theta)`` itself (theta required)."""
    return load("mistral_inference.rope").precompute_freqs_cis
