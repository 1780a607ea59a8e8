"""Switch the attention of a Hugging Face Llama-family model to ReRoPE / Leaky ReRoPE / log-n.

Written against transformers 4.57.1 (``LlamaAttention.forward(hidden_states,
position_embeddings, attention_mask, past_key_values=None, cache_position=None, **kwargs)
-> (attn_output, attn_weights)``). Every ``LlamaAttention`` module of the model gets an
instance-level ``forward``; :func:`unpatch` (or leaving the ``with`` block) deletes it, so
the class method is used again.

- ``"rerope"`` / ``"leaky_rerope"`` (seed 000): q, k are projected, the cache stores
  UN-rotated keys, and attention runs through :func:`rerope_attention` (prefill, chunked
  prefill) or :func:`rerope_decode` (one token). The model's own frequencies
  (``rotary_emb.inv_freq``) and attention factor (``attention_scaling``, which multiplies
  cos and sin, hence the logits by its square) are used, so with a window covering the
  whole input the patched model computes the unpatched logits.
- ``"logn"`` (seed 000, "-log n"): ordinary RoPE, with query i multiplied by
  max(1, log(i + 1) / log(T_train)); attention runs through the model's own kernel.
  ``train_len`` given with a ReRoPE method switches on the same log-n factor.

Limits (each raises ValueError): padded batches (an attention mask other than causal),
custom position_ids, caches other than a growing DynamicCache. A cache filled while patched
holds un-rotated keys: do not reuse it after unpatching.
"""

from __future__ import annotations

import math
import types
from typing import Any

import torch

from ..errors import require
from .logn import logn_scale
from .rerope import rerope_attention, rerope_decode

__all__ = ["patch_llama", "unpatch", "LlamaPatch", "METHODS"]

METHODS = ("rerope", "leaky_rerope", "logn")
_ATTR = "_ropelaw_patch"


def _llama():
    require("transformers", "hf", "patch_llama")
    from transformers.models.llama import modeling_llama

    return modeling_llama


class LlamaPatch:
    """Handle of an applied patch; a context manager that unpatches on exit."""

    def __init__(self, model: Any, method: str, window: float | None, leaky_k: float | None,
                 train_len: float | None, modules: list):
        self.model, self.method, self.window, self.leaky_k, self.train_len = model, method, window, leaky_k, train_len
        self.modules = modules

    def undo(self) -> None:
        for m in self.modules:
            if getattr(m, _ATTR, None) is self:
                del m.forward
                delattr(m, _ATTR)
        self.modules = []

    def __enter__(self) -> "LlamaPatch":
        return self

    def __exit__(self, *exc: object) -> None:
        self.undo()

    def __repr__(self) -> str:
        return (f"LlamaPatch(method={self.method!r}, window={self.window}, leaky_k={self.leaky_k}, "
                f"train_len={self.train_len}, modules={len(self.modules)})")


def _rotary(model: Any, ml) -> Any:
    found = [m for m in model.modules() if isinstance(m, ml.LlamaRotaryEmbedding)]
    if len(found) != 1:
        raise ValueError(f"expected one LlamaRotaryEmbedding in the model, found {len(found)}")
    return found[0]


def _check_positions(cache_position, position_ids, T: int, N: int, device) -> None:
    want = torch.arange(N - T, N, device=device)  # (T,) int64
    for name, pos in (("cache_position", cache_position), ("position_ids", position_ids)):
        if pos is not None and (pos.shape[-1] != T or bool((pos != want).any())):
            raise ValueError(f"ReRoPE patch: {name} must be {N - T}..{N - 1} (no padding, a DynamicCache); "
                             "padded batches and static caches are not supported")


def _check_causal_mask(mask, T: int, N: int) -> None:
    if mask is None:
        return
    if not isinstance(mask, torch.Tensor):
        raise ValueError("ReRoPE patch: only tensor attention masks are supported")
    mask = mask[..., -T:, :N]
    allowed = mask if mask.dtype == torch.bool else mask == 0
    kpos = torch.arange(N, device=mask.device)
    qpos = torch.arange(N - T, N, device=mask.device)
    if mask.shape[-1] != N or bool((allowed != (kpos[None, :] <= qpos[:, None])).any()):
        raise ValueError("ReRoPE patch: the attention mask is not plain causal (padded batch?); "
                         "run one unpadded sequence per batch")


def _rerope_forward(patch: LlamaPatch, rotary: Any):
    def forward(self, hidden_states, position_embeddings=None, attention_mask=None, past_key_values=None,
                cache_position=None, **kwargs):
        if past_key_values is None:
            past_key_values = kwargs.pop("past_key_value", None)
        input_shape = hidden_states.shape[:-1]
        hidden_shape = (*input_shape, -1, self.head_dim)
        q = self.q_proj(hidden_states).view(hidden_shape).transpose(1, 2)  # (B, H, T, D) un-rotated
        k = self.k_proj(hidden_states).view(hidden_shape).transpose(1, 2)  # (B, Hkv, T, D) un-rotated
        v = self.v_proj(hidden_states).view(hidden_shape).transpose(1, 2)  # (B, Hkv, T, D)
        T = q.shape[2]
        if past_key_values is not None:
            k, v = past_key_values.update(k, v, self.layer_idx, {"cache_position": cache_position})
        N = k.shape[2]
        _check_positions(cache_position, kwargs.get("position_ids"), T, N, q.device)
        _check_causal_mask(attention_mask, T, N)
        inv_freq = rotary.inv_freq.to(torch.float32)  # (D/2,) float32
        factor = float(rotary.attention_scaling)
        scale = self.scaling * factor * factor
        common = dict(rotary_dim=2 * inv_freq.numel(),  # partial rotary: only the rotated dims
                      layout="rotate_half", logn_train_len=patch.train_len,
                      scale=scale, inv_freq=inv_freq)
        if T == 1:
            out = rerope_decode(q, k, v, N - 1, patch.window, patch.leaky_k, **common)
        else:
            out = rerope_attention(q, k, v, patch.window, patch.leaky_k, **common)
        out = out.transpose(1, 2).reshape(*input_shape, -1).contiguous()  # (B, T, H*D)
        return self.o_proj(out), None

    return forward


def _logn_forward(patch: LlamaPatch, ml):
    def forward(self, hidden_states, position_embeddings=None, attention_mask=None, past_key_values=None,
                cache_position=None, **kwargs):
        if past_key_values is None:
            past_key_values = kwargs.pop("past_key_value", None)
        input_shape = hidden_states.shape[:-1]
        hidden_shape = (*input_shape, -1, self.head_dim)
        q = self.q_proj(hidden_states).view(hidden_shape).transpose(1, 2)  # (B, H, T, D)
        k = self.k_proj(hidden_states).view(hidden_shape).transpose(1, 2)
        v = self.v_proj(hidden_states).view(hidden_shape).transpose(1, 2)
        cos, sin = position_embeddings
        q, k = ml.apply_rotary_pos_emb(q, k, cos, sin)
        pos = kwargs.get("position_ids")
        if pos is None:
            pos = cache_position
        if pos is None:
            raise ValueError("log-n patch needs position_ids or cache_position")
        factor = logn_scale(pos, patch.train_len, device=q.device)  # (B|1, T) float32
        q = q * factor.reshape(-1, 1, q.shape[2], 1).to(q.dtype)
        if past_key_values is not None:
            cache_kwargs = {"sin": sin, "cos": cos, "cache_position": cache_position}
            k, v = past_key_values.update(k, v, self.layer_idx, cache_kwargs)
        interface = ml.eager_attention_forward
        if self.config._attn_implementation != "eager":
            interface = ml.ALL_ATTENTION_FUNCTIONS[self.config._attn_implementation]
        out, weights = interface(self, q, k, v, attention_mask,
                                 dropout=0.0 if not self.training else self.attention_dropout,
                                 scaling=self.scaling, **kwargs)
        out = out.reshape(*input_shape, -1).contiguous()
        return self.o_proj(out), weights

    return forward


def patch_llama(model: Any, method: str = "rerope", *, window: float | None = None, leaky_k: float | None = None,
                train_len: float | None = None) -> LlamaPatch:
    """Switch every LlamaAttention of ``model`` to ``method``; returns a handle (context manager).

    method "rerope": needs ``window``; "leaky_rerope": ``window`` and ``leaky_k``;
    "logn": ``train_len``. With a ReRoPE method, ``train_len`` adds log-n query scaling.
    Raises ValueError on a bad combination, a model without LlamaAttention modules, or a
    model that is already patched.
    """
    ml = _llama()
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}; known: {', '.join(METHODS)}")
    if method in ("rerope", "leaky_rerope"):
        if window is None or not (isinstance(window, (int, float)) and math.isfinite(window) and window > 0):
            raise ValueError(f"{method} needs a window > 0, got {window!r}")
        if method == "rerope" and leaky_k is not None:
            raise ValueError("rerope takes no leaky_k; use method='leaky_rerope'")
        if method == "leaky_rerope" and (leaky_k is None or not leaky_k > 0):
            raise ValueError(f"leaky_rerope needs leaky_k > 0, got {leaky_k!r}")
    else:
        if window is not None or leaky_k is not None:
            raise ValueError("logn takes no window / leaky_k")
        if train_len is None:
            raise ValueError("logn needs train_len")
    if train_len is not None and not (isinstance(train_len, (int, float)) and train_len > 1):
        raise ValueError(f"train_len must be > 1, got {train_len!r}")
    modules = [m for m in model.modules() if isinstance(m, ml.LlamaAttention)]
    if not modules:
        raise ValueError("no LlamaAttention module in this model (Llama-family models only)")
    if any(hasattr(m, _ATTR) for m in modules):
        raise ValueError("model is already patched; call unpatch(model) first")
    patch = LlamaPatch(model, method, window, leaky_k, train_len, modules)
    fn = _logn_forward(patch, ml) if method == "logn" else _rerope_forward(patch, _rotary(model, ml))
    for m in modules:
        m.forward = types.MethodType(fn, m)
        setattr(m, _ATTR, patch)
    return patch


def unpatch(model: Any) -> int:
    """Restore the original attention of every patched module of ``model``; returns how many."""
    n = 0
    for m in model.modules():
        patch = getattr(m, _ATTR, None)
        if patch is not None:
            del m.forward
            delattr(m, _ATTR)
            n += 1
    return n
