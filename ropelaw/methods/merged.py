"""Attention pieces that return their log-sum-exp, and their exact merge (forward and backward).

A softmax over the union of disjoint key sets is the merge of per-set softmaxes:
    L = log sum_p exp(L_p),   O = sum_p exp(L_p - L) * O_p
(the online-softmax identity of Milakov & Gimelshein, arXiv 1805.02867, and FlashAttention,
arXiv 2205.14135, sec. 3.1). The backward of the merged result is the sum over pieces of
each piece's FlashAttention backward evaluated with the merged O and L: a piece's backward
forms P = exp(S - L) and dS = P * (dP - rowsum(dO * O)), which with the merged L and O are
exactly the entries of the global softmax Jacobian restricted to that piece's keys.

On CPU the pieces run in PyTorch's fused kernel ``aten._scaled_dot_product_flash_attention_for_cpu``
(which returns the log-sum-exp) and its backward; elsewhere, or when the value head size
differs from the query's, a row-chunked matmul implementation with the same contract is used.
Fully masked rows must not occur (the kernel returns L = 0 for them): callers guarantee every
row of every piece sees at least one key.
"""

from __future__ import annotations

import math

import torch

from .rope import angle_dtype

__all__ = ["flash_supported", "piece_forward", "piece_backward", "FORCE_MATMUL"]

# tests flip this to exercise the matmul path on CPU
FORCE_MATMUL = False

_ROW_CHUNK = 512  # query rows per matmul chunk in the fallback: memory O(chunk * keys)


def flash_supported(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> bool:
    """True when the fused CPU kernel can run these pieces."""
    return (
        not FORCE_MATMUL
        and q.device.type == "cpu"
        and hasattr(torch.ops.aten, "_scaled_dot_product_flash_attention_for_cpu")
        and q.shape[-1] == k.shape[-1] == v.shape[-1]
        and q.dtype == k.dtype == v.dtype
        and q.dtype in (torch.float32, torch.float64, torch.bfloat16, torch.float16)
    )


def _mm_scores(q: torch.Tensor, k: torch.Tensor, mask: torch.Tensor | None, causal: bool, r0: int, r1: int,
               scale: float, softcap: float | None = None) -> torch.Tensor:
    """Scores of query rows [r0, r1) in the accumulation dtype, masked (-inf) where excluded.

    ``softcap`` c (Gemma 2's attention logit soft-capping): s -> c * tanh(s / c) before the mask.
    """
    acc = angle_dtype(q.dtype)
    s = torch.matmul(q[..., r0:r1, :].to(acc), k.to(acc).transpose(-1, -2)) * scale  # (..., r, S) acc
    if softcap is not None:
        s = torch.tanh(s / softcap) * softcap
    if mask is not None:
        s = s + mask[..., r0:r1, :].to(acc)
    if causal:
        rows = torch.arange(r0, r1, device=q.device).unsqueeze(-1)  # (r, 1) int64
        cols = torch.arange(k.shape[-2], device=q.device)  # (S,) int64
        s = s.masked_fill(cols > rows, -math.inf)
    return s


def piece_forward(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, *, causal: bool, mask: torch.Tensor | None,
                  scale: float, flash: bool, softcap: float | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """softmax(scale * q k^T + mask) v and its row log-sum-exp.

    q (..., T, D), k (..., S, D), v (..., S, Dv); ``causal`` is top-left aligned (row t sees
    keys 0..t); ``mask`` is additive (0 / -inf), broadcastable to (..., T, S), in q's dtype.
    ``softcap``: soft-capped scores (matmul path only; the fused kernel has no soft-capping).
    Returns out (..., T, Dv) in q's dtype and lse (..., T) in float32 (float64 for float64).
    """
    if flash and softcap is None:
        out, lse = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu(
            q, k, v, 0.0, causal, attn_mask=mask, scale=scale)
        return out, lse
    acc = angle_dtype(q.dtype)
    outs, lses = [], []
    for r0 in range(0, q.shape[-2], _ROW_CHUNK):
        r1 = min(q.shape[-2], r0 + _ROW_CHUNK)
        s = _mm_scores(q, k, mask, causal, r0, r1, scale, softcap)  # (..., r, S) acc
        lse = torch.logsumexp(s, dim=-1)  # (..., r) acc
        p = torch.exp(s - lse.unsqueeze(-1))
        outs.append(torch.matmul(p, v.to(acc)).to(q.dtype))
        lses.append(lse)
    return torch.cat(outs, dim=-2), torch.cat(lses, dim=-1)


def piece_backward(d_out: torch.Tensor, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, out: torch.Tensor,
                   lse: torch.Tensor, *, causal: bool, mask: torch.Tensor | None, scale: float,
                   flash: bool) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Gradients (dq, dk, dv) of one piece given the MERGED ``out`` and ``lse`` (module docstring)."""
    if flash:
        return torch.ops.aten._scaled_dot_product_flash_attention_for_cpu_backward(
            d_out.contiguous(), q, k, v, out, lse, 0.0, causal, attn_mask=mask, scale=scale)
    acc = angle_dtype(q.dtype)
    kd, vd = k.to(acc), v.to(acc)
    dq = torch.zeros(q.shape, dtype=acc, device=q.device)
    dk = torch.zeros(k.shape, dtype=acc, device=q.device)
    dv = torch.zeros(v.shape, dtype=acc, device=q.device)
    for r0 in range(0, q.shape[-2], _ROW_CHUNK):
        r1 = min(q.shape[-2], r0 + _ROW_CHUNK)
        s = _mm_scores(q, k, mask, causal, r0, r1, scale)  # (..., r, S) acc
        p = torch.exp(s - lse[..., r0:r1].to(acc).unsqueeze(-1))  # global probabilities
        do = d_out[..., r0:r1, :].to(acc)  # (..., r, Dv)
        dv += torch.matmul(p.transpose(-1, -2), do)
        dp = torch.matmul(do, vd.transpose(-1, -2))  # (..., r, S)
        delta = (do * out[..., r0:r1, :].to(acc)).sum(-1, keepdim=True)  # (..., r, 1)
        ds = p * (dp - delta) * scale
        dq[..., r0:r1, :] = torch.matmul(ds, kd)
        dk += torch.matmul(ds.transpose(-1, -2), q[..., r0:r1, :].to(acc))
    return dq.to(q.dtype), dk.to(k.dtype), dv.to(v.dtype)
