"""A tiny causal transformer whose position handling comes from ``ropelaw.methods``.

Architecture (nanoGPT's shape, made small enough to train on 2 CPU cores in minutes):
byte embedding -> ``n_layers`` x [RMSNorm -> attention -> residual, RMSNorm -> GELU MLP ->
residual] -> RMSNorm -> logits. No absolute position embedding: positions enter only
through RoPE inside attention, so every method below changes the positions the model sees
and nothing else.

What is fixed at training (``ModelConfig``): the base, the attention kind (``softmax``: the
usual q.k/sqrt(d); ``kna`` / ``qna`` / ``cosa``: KeyNorm, QueryNorm and scaled cosine
attention of seed 003) and whether log-n scaling is trained in (``logn_train``).
What is chosen at test (``PositionMethod``): a frequency scheme from the one registry
(``ropelaw.schemes``: default, linear = PI, ntk, yarn, ...), a ReRoPE / Leaky ReRoPE window
(``ropelaw.methods.rerope_attention``), and log n at test only (seed 000's log n-dagger).

Log n, two forms (seed 000, experiments; Su, kexue.fm/archives/8823):
- trained in (``logn_train``): score row n (1-based position) multiplied by log(n)/log(T_train)
  at every position, in training and at test (it is < 1 inside the training length);
- at test only (``PositionMethod.logn_test``, "log n-dagger"): multiplied by
  max(1, log(n)/log(T_train)) = ``ropelaw.methods.logn_scale``; 1 inside the training length.
Both multiply the query after normalisation (KeyNorm variants), i.e. they scale the score row.

Deterministic: parameters are drawn from ``torch.Generator().manual_seed(seed)``; on one
machine with one thread count, the same seed gives the same weights and the same numbers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any

import torch
import torch.nn as nn
import torch.nn.functional as F

from ..errors import UsageError
from ..methods import apply_rope, logn_scale, rerope_attention
from ..schemes import apply_scheme
from ..spec import RopeSpec

__all__ = ["ModelConfig", "PositionMethod", "TinyLM", "ATTENTIONS", "score_factors", "attention_kind"]

ATTENTIONS = ("softmax", "kna", "qna", "cosa")


@dataclass(frozen=True)
class ModelConfig:
    """Shape and training-time position setup of :class:`TinyLM`."""

    vocab_size: int = 256  # bytes: no tokenizer to build or ship
    d_model: int = 64  # small enough for 2 CPU cores, large enough to learn byte n-grams
    n_layers: int = 2  # two layers: the smallest depth that forms induction (copy) heads
    n_heads: int = 2
    head_dim: int = 32  # = rotary dims d of the scaling law (every head dim rotates)
    mlp_ratio: int = 4  # nanoGPT's 4x MLP
    train_len: int = 128  # T_train: the context the model is trained at
    base: float = 10000.0  # RoPE base beta (the pre-training base of Liu et al.)
    attention: str = "softmax"  # softmax | kna | qna | cosa (seed 003)
    logn_train: bool = False  # log n trained in (seed 000's "-log n")

    def __post_init__(self) -> None:
        if self.attention not in ATTENTIONS:
            raise UsageError(f"unknown attention {self.attention!r}; known: {', '.join(ATTENTIONS)}")
        for name in ("vocab_size", "d_model", "n_layers", "n_heads", "head_dim", "mlp_ratio"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise UsageError(f"{name} must be a positive integer, got {v!r}")
        if self.head_dim % 2:
            raise UsageError(f"head_dim must be even (RoPE rotates pairs), got {self.head_dim}")
        RopeSpec(d=self.head_dim, train_len=self.train_len, base=self.base)  # validates T > 2*pi, base > 1

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass(frozen=True)
class PositionMethod:
    """How positions are encoded at test time (nothing here changes the weights)."""

    scheme: str = "default"  # key of ropelaw.schemes.SCHEMES (default, linear/pi, ntk, yarn, ...)
    params: tuple = field(default=())  # scheme parameters, e.g. (("factor", 8),)
    window: float | None = None  # ReRoPE / Leaky ReRoPE window w (None: no window)
    leaky_k: float | None = None  # Leaky ReRoPE slope 1/k beyond w (None with a window: ReRoPE)
    logn_test: bool = False  # log n-dagger: max(1, log n / log T) on the queries at test only

    def __post_init__(self) -> None:
        object.__setattr__(self, "params", tuple(sorted(dict(self.params).items())))
        if self.leaky_k is not None and self.window is None:
            raise UsageError("Leaky ReRoPE needs a window")
        if self.window is not None and self.scheme != "default":
            raise UsageError("ReRoPE windows apply to plain RoPE frequencies (scheme 'default')")


DEFAULT_METHOD = PositionMethod()


def attention_kind(cfg: ModelConfig) -> str:
    return cfg.attention


def score_factors(cfg: ModelConfig, method: PositionMethod, positions: torch.Tensor,
                  attention_factor: float = 1.0) -> torch.Tensor:
    """Per-query multiplier of the score row, (L,) float32.

    = CosA's lambda = 4 log(T/2) (seed 003, n fixed at half the training length)
      x log(n)/log(T) if log n is trained in, x max(1, log(n)/log(T)) if log n-dagger,
      x attention_factor^2 (a scheme's factor multiplies cos and sin, so the logits by its
      square; YaRN's 0.1 ln s + 1).
    """
    t = cfg.train_len
    row = torch.full(positions.shape, float(attention_factor) ** 2, dtype=torch.float32)
    if cfg.attention == "cosa":
        row = row * (4.0 * math.log(t / 2))
    if cfg.logn_train:
        row = row * (torch.log1p(positions.to(torch.float32)) / math.log(t))
    if method.logn_test:
        row = row * logn_scale(positions, t)
    return row


class Attention(nn.Module):
    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.cfg = cfg
        inner = cfg.n_heads * cfg.head_dim
        self.qkv = nn.Linear(cfg.d_model, 3 * inner, bias=False)
        self.out = nn.Linear(inner, cfg.d_model, bias=False)

    def forward(self, x: torch.Tensor, inv_freq: torch.Tensor, row: torch.Tensor,
                method: PositionMethod) -> torch.Tensor:
        cfg = self.cfg
        B, L, _ = x.shape
        q, k, v = self.qkv(x).view(B, L, 3, cfg.n_heads, cfg.head_dim).permute(2, 0, 3, 1, 4)  # 3 x (B, H, L, dh)
        if cfg.attention in ("qna", "cosa"):
            q = F.normalize(q, dim=-1)  # seed 003: q~ = q/||q||
        if cfg.attention in ("kna", "cosa"):
            k = F.normalize(k, dim=-1)  # seed 003: k~ = k/||k||
        scale = 1.0 / math.sqrt(cfg.head_dim) if cfg.attention == "softmax" else 1.0  # KeyNorm: no 1/sqrt(d)
        q = q * row.view(1, 1, L, 1)  # a per-row factor commutes with the rotation
        if method.window is not None:
            o = rerope_attention(q, k, v, method.window, method.leaky_k, inv_freq=inv_freq, scale=scale)
        else:
            pos = torch.arange(L, dtype=torch.int64)  # (L,) int64
            qr = apply_rope(q, pos, inv_freq=inv_freq)  # (B, H, L, dh)
            kr = apply_rope(k, pos, inv_freq=inv_freq)
            o = F.scaled_dot_product_attention(qr, kr, v, is_causal=True, scale=scale)
        return self.out(o.transpose(1, 2).reshape(B, L, -1))


class Block(nn.Module):
    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.norm1 = nn.RMSNorm(cfg.d_model)
        self.attn = Attention(cfg)
        self.norm2 = nn.RMSNorm(cfg.d_model)
        self.mlp = nn.Sequential(nn.Linear(cfg.d_model, cfg.mlp_ratio * cfg.d_model), nn.GELU(),
                                 nn.Linear(cfg.mlp_ratio * cfg.d_model, cfg.d_model))

    def forward(self, x, inv_freq, row, method):
        x = x + self.attn(self.norm1(x), inv_freq, row, method)
        return x + self.mlp(self.norm2(x))


class TinyLM(nn.Module):
    """The toy causal LM; ``forward(tokens, method)`` -> logits (B, L, vocab) float32."""

    def __init__(self, cfg: ModelConfig, seed: int = 0):
        super().__init__()
        self.cfg = cfg
        self.embed = nn.Embedding(cfg.vocab_size, cfg.d_model)
        self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg.n_layers))
        self.norm = nn.RMSNorm(cfg.d_model)
        self.head = nn.Linear(cfg.d_model, cfg.vocab_size, bias=False)
        g = torch.Generator().manual_seed(seed)
        with torch.no_grad():
            for name, p in self.named_parameters():
                if p.dim() >= 2:  # GPT-2 init: N(0, 0.02), residual projections scaled by 1/sqrt(2 n_layers)
                    std = 0.02 / math.sqrt(2 * cfg.n_layers) if name.endswith(("out.weight", "mlp.2.weight")) else 0.02
                    p.copy_(torch.randn(p.shape, generator=g) * std)
                elif name.endswith("bias"):
                    p.zero_()

    def with_base(self, base: float) -> TinyLM:
        """A copy of this model (same weights) that runs at another RoPE base (Liu et al.'s tuning)."""
        clone = TinyLM(replace(self.cfg, base=base))
        clone.load_state_dict(self.state_dict())
        return clone

    def frequencies(self, method: PositionMethod, seq_len: int) -> tuple[torch.Tensor, float]:
        """(inv_freq (d/2,) float32, attention factor) of ``method`` through the scheme registry."""
        spec = RopeSpec(d=self.cfg.head_dim, train_len=self.cfg.train_len, base=self.cfg.base,
                        pretrain_base=self.cfg.base, scheme=method.scheme, params=dict(method.params))
        res = apply_scheme(spec, seq_len=seq_len)
        return torch.tensor(res.inv_freq, dtype=torch.float64).to(torch.float32), float(res.attention_factor)

    def forward(self, tokens: torch.Tensor, method: PositionMethod = DEFAULT_METHOD) -> torch.Tensor:
        L = tokens.shape[1]
        inv_freq, factor = self.frequencies(method, L)
        row = score_factors(self.cfg, method, torch.arange(L, dtype=torch.int64), factor)  # (L,)
        x = self.embed(tokens)
        for block in self.blocks:
            x = block(x, inv_freq, row, method)
        return self.head(self.norm(x))
