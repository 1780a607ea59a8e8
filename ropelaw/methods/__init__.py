"""Torch implementations of RoPE extrapolation methods (imported only when used).

- :func:`apply_rope` -- RoPE in both pair layouts, angles in float32 (RoFormer, arXiv 2104.09864).
- :func:`rerope_attention` / :func:`rerope_decode` -- ReRoPE and Leaky ReRoPE, exact,
  memory O(L * (window + block)) (Su 2023, kexue.fm/archives/9708; seed 000).
- :func:`keynorm_attention` -- KNA, QNA and scaled cosine attention (Su 2023,
  kexue.fm/archives/9859; seed 003).
- :func:`logn_scale` -- the log-n query factor max(1, log(n)/log(T_train)).
- :func:`patch_model` / :func:`unpatch` -- switch a Hugging Face model's attention (Llama, Mistral,
  Mixtral, Qwen2/3, Gemma 1/2/3, Phi-3, OLMo 2, Granite, StarCoder2) for generation;
  ``patch_llama`` is its old name.

Needs torch (``pip install -e '.[torch]'``); the HF patch also needs transformers.
"""

from __future__ import annotations

from ..errors import require

require("torch", "torch", "ropelaw.methods")

from .hf_patch import patch_llama, patch_model, unpatch  # noqa: E402
from .keynorm import cosa_lambda, keynorm_attention  # noqa: E402
from .logn import logn_scale, scale_queries_logn  # noqa: E402
from .rerope import (  # noqa: E402
    far_rotation,
    rerope_attention,
    rerope_attention_rotated,
    rerope_decode,
    rerope_decode_rotated,
    rerope_relative_position,
)
from .rope import LAYOUTS, apply_rope, rope_cos_sin, rope_inv_freq  # noqa: E402

__all__ = [
    "LAYOUTS",
    "apply_rope",
    "rope_inv_freq",
    "rope_cos_sin",
    "rerope_attention",
    "rerope_decode",
    "rerope_relative_position",
    "rerope_attention_rotated",
    "rerope_decode_rotated",
    "far_rotation",
    "keynorm_attention",
    "cosa_lambda",
    "logn_scale",
    "scale_queries_logn",
    "patch_model",
    "patch_llama",
    "unpatch",
]
