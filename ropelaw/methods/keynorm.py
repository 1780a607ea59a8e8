"""KeyNorm attention: KNA, QNA and scaled cosine attention (seed 003).

Source: Su, "Transformer升级之路:15、Key归一化助力长度外推" (kexue.fm/archives/9859, 2023).
With x~ = x / ||x|| (L2 over the head dimension), causal softmax attention with scores
    KNA   s_ij = q_i . k~_j                 (no 1/sqrt(d))
    QNA   s_ij = q~_i . k_j                 (no 1/sqrt(d))
    CosA  s_ij = lambda_i * q~_i . k~_j = lambda_i cos(q_i, k_j),  lambda = 4 log n
where n is fixed at half the training length (lambda = 4 log(T_train / 2)) or dynamic,
n = position + 1 (lambda_i = 4 log(i + 1); the seed's "4" replaces the 3.5 of its gradient-
maximisation post for short training lengths).
"-log n" variants multiply score row i by max(1, log(i + 1) / log(T_train)) (seed 000's
log-n factor; for KNA this is exactly scaling q_i, for QNA/CosA it scales the normalised
query). Rotations preserve norms, so RoPE may be applied to q, k before or after; pass q, k
already rotated if the model uses RoPE.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from ..errors import UsageError
from .logn import logn_scale
from .rope import angle_dtype

__all__ = ["keynorm_attention", "cosa_lambda", "VARIANTS"]

VARIANTS = ("kna", "qna", "cosa")


def cosa_lambda(n: float) -> float:
    """lambda = 4 log n (seed 003, CosA). Domain n >= 1 (lambda = 0 at n = 1)."""
    if not n >= 1:
        raise UsageError(f"CosA needs n >= 1, got {n}")
    return 4.0 * math.log(n)


def _normalize(x: torch.Tensor) -> torch.Tensor:
    """x / ||x|| over the last dimension, norms in float32 (float64 for float64); 0 stays 0."""
    acc = angle_dtype(x.dtype)
    return F.normalize(x.to(acc), dim=-1, eps=1e-12).to(x.dtype)


def keynorm_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, variant: str = "kna", *,
                      train_len: float | None = None, dynamic: bool = False, logn: bool = False,
                      causal: bool = True) -> torch.Tensor:
    """Attention with L2-normalised keys and/or queries (seed 003).

    q (batch, heads, T, d), k (batch, kv_heads, N, d), v (batch, kv_heads, N, d_v), N >= T;
    query t sits at position N - T + t (T < N continues against a cache).
    variant: "kna" | "qna" | "cosa". CosA needs ``train_len`` unless ``dynamic`` (n = i + 1);
    ``logn`` needs ``train_len``. Returns (batch, heads, T, d_v); differentiable.
    """
    if variant not in VARIANTS:
        raise UsageError(f"unknown KeyNorm variant {variant!r}; known: {', '.join(VARIANTS)}")
    if q.dim() != 4 or k.dim() != 4 or v.dim() != 4 or q.shape[-1] != k.shape[-1] or k.shape[:3] != v.shape[:3]:
        raise UsageError(f"incompatible shapes q {tuple(q.shape)}, k {tuple(k.shape)}, v {tuple(v.shape)}")
    if q.shape[1] % k.shape[1]:
        raise UsageError(f"query heads ({q.shape[1]}) must be a multiple of key heads ({k.shape[1]})")
    T, N = q.shape[2], k.shape[2]
    if N < T:
        raise UsageError(f"k has {N} positions but q has {T}")
    if variant == "cosa" and not dynamic and train_len is None:
        raise UsageError("CosA with fixed n = T_train/2 needs train_len (or dynamic=True)")
    if logn and train_len is None:
        raise UsageError("log-n scaling needs train_len")
    if variant != "cosa" and dynamic:
        raise UsageError("dynamic n applies to CosA only")
    acc = angle_dtype(q.dtype)
    qpos = torch.arange(N - T, N, dtype=torch.int64, device=q.device)  # (T,) int64
    if variant in ("qna", "cosa"):
        q = _normalize(q)
    if variant in ("kna", "cosa"):
        k = _normalize(k)
    row = torch.ones(T, dtype=acc, device=q.device)  # (T,) per-row score factor
    if variant == "cosa":
        if dynamic:
            row = 4.0 * torch.log1p(qpos.to(acc))  # lambda_i = 4 log(i + 1)
        elif train_len is not None:  # fixed n = T_train / 2 (refused above without train_len)
            row = row * cosa_lambda(train_len / 2)
    if logn and train_len is not None:  # (refused above without train_len)
        row = row * logn_scale(qpos, train_len, dtype=acc, device=q.device)
    q = q * row.unsqueeze(-1).to(q.dtype)  # (B, H, T, d)
    gqa = q.shape[1] != k.shape[1]
    if causal and T != N:
        visible = torch.arange(N, device=q.device).unsqueeze(0) <= qpos.unsqueeze(-1)  # (T, N) bool
        return F.scaled_dot_product_attention(q, k, v, attn_mask=visible, scale=1.0, enable_gqa=gqa)
    return F.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=1.0, enable_gqa=gqa)
