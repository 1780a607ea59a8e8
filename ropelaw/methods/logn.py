"""Log-n scaling of queries (Su, "从熵不变性看Attention的Scale操作"; used in seeds 000 and 003).

Seed 000 (ReRoPE, kexue.fm/archives/9708, experiments): at test time every query q_n is
multiplied by max(1, log_{maxlen} n) = max(1, log(n) / log(T_train)), n the 1-based position
(n = pos + 1 for a 0-based position), T_train the training length. Inside the training length
the factor is exactly 1, so a model is unchanged there.
"""

from __future__ import annotations

import math

import torch

from ..errors import UsageError
from .rope import PositionsLike, positions_tensor

__all__ = ["logn_scale", "scale_queries_logn"]


def logn_scale(positions: PositionsLike, train_len: float, *, dtype: torch.dtype = torch.float32,
               device: torch.device | str | None = None) -> torch.Tensor:
    """max(1, log(pos + 1) / log(T_train)) for 0-based ``positions`` (seed 000, log-n rows).

    Domain: positions >= 0, train_len > 1 (log(1) = 0 would divide by zero). The factor is 1
    for pos + 1 <= T_train and grows like log(n) beyond. ``dtype`` is float32 or float64.
    """
    if not (isinstance(train_len, (int, float)) and math.isfinite(train_len) and train_len > 1):
        raise UsageError(f"train_len for log-n scaling must be a finite number > 1, got {train_len!r}")
    dev = torch.device(device) if device is not None else (
        positions.device if isinstance(positions, torch.Tensor) else torch.device("cpu"))
    pos = positions_tensor(positions, dtype, dev)  # (...,) float32|float64
    if bool((pos < 0).any()):
        raise UsageError("log-n scaling needs positions >= 0")
    ratio = torch.log1p(pos) / math.log(train_len)  # (...,) log(n)/log(T)
    return torch.clamp(ratio, min=1.0)


def scale_queries_logn(q: torch.Tensor, positions: PositionsLike, train_len: float) -> torch.Tensor:
    """q (..., seq, d) with row n multiplied by ``logn_scale(positions, train_len)`` (seed 000).

    The factor is a scalar per row, so it commutes with the RoPE rotation.
    """
    from .rope import angle_dtype

    factor = logn_scale(positions, train_len, dtype=angle_dtype(q.dtype), device=q.device)  # (seq,)
    return q * factor.unsqueeze(-1).to(q.dtype)
