"""RoPE application in both pair layouts, with positions and angles in float32 (or float64).

RoFormer (Su et al., arXiv 2104.09864, eq. 13-15): pair i of a vector at position m is
rotated by the angle m * theta_i, theta_i = base^(-2i/d_r), i = 0 .. d_r/2 - 1, where d_r is
the rotary dimension (the first ``rotary_dim`` channels; the rest pass through unchanged).
(R^m q)^T (R^n k) = q^T R^(n-m) k, so only relative positions reach the attention scores.

Two pair layouts are in use:
- ``"rotate_half"`` (GPT-NeoX, Hugging Face Llama): pair i is channels (i, i + d_r/2).
- ``"interleaved"`` (RoFormer, GPT-J, Meta's original Llama): pair i is channels (2i, 2i+1).

Precision. Positions are built as int64 and converted to the angle dtype, the product
m * theta_i is formed in that dtype with autocast disabled, and cos/sin are taken there:
float32 for float32/float16/bfloat16 inputs (bf16 positions collide above 256, seed 004),
float64 for float64 inputs. The rotation itself runs in the angle dtype and the result is
cast back to the input dtype once.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import torch

from ..errors import UsageError

__all__ = ["LAYOUTS", "rope_inv_freq", "rope_cos_sin", "apply_rope", "angle_dtype", "positions_tensor"]

LAYOUTS = ("rotate_half", "interleaved")

PositionsLike = torch.Tensor | int | float


def angle_dtype(dtype: torch.dtype) -> torch.dtype:
    """Dtype in which positions and angles are computed for inputs of ``dtype``.

    float64 inputs keep float64; every other dtype (float32, float16, bfloat16) uses float32.
    """
    return torch.float64 if dtype == torch.float64 else torch.float32


@contextlib.contextmanager
def no_autocast(device: torch.device) -> Iterator[None]:
    """Disable autocast on ``device`` so the angle product stays in float32/float64."""
    kind = device.type if device.type in ("cpu", "cuda", "xpu") else "cpu"
    with torch.autocast(device_type=kind, enabled=False):
        yield


def rope_inv_freq(rotary_dim: int, base: float = 10000.0, *, dtype: torch.dtype = torch.float32,
                  device: torch.device | str | None = None) -> torch.Tensor:
    """theta_i = base^(-2i/d_r), i = 0 .. d_r/2 - 1 (RoFormer, arXiv 2104.09864, eq. 15).

    Computed in float64 and rounded once to ``dtype`` (float32 or float64).
    Raises ValueError for an odd or non-positive ``rotary_dim`` or ``base <= 1``.
    """
    if rotary_dim <= 0 or rotary_dim % 2:
        raise UsageError(f"rotary_dim must be a positive even integer, got {rotary_dim}")
    if not base > 1.0:
        raise UsageError(f"RoPE base must be > 1, got {base}")
    if dtype not in (torch.float32, torch.float64):
        raise UsageError(f"inv_freq must be float32 or float64, got {dtype}")
    exponents = torch.arange(0, rotary_dim, 2, dtype=torch.int64, device=device).to(torch.float64)  # (d_r/2,)
    inv_freq = torch.pow(torch.tensor(float(base), dtype=torch.float64, device=device), -exponents / rotary_dim)
    return inv_freq.to(dtype)  # (d_r/2,) float32|float64


def positions_tensor(positions: PositionsLike, dtype: torch.dtype, device: torch.device) -> torch.Tensor:
    """Positions as a tensor of the angle ``dtype`` (float32/float64).

    Integer tensors and Python ints are exact up to 2^24 in float32; float tensors must be
    float32 or float64 (a bf16/fp16 position tensor has already lost positions, seed 004).
    """
    if isinstance(positions, torch.Tensor):
        if positions.dtype in (torch.float16, torch.bfloat16):
            raise UsageError(
                f"positions in {positions.dtype} are already rounded (bf16 keeps every integer "
                "only up to 256); pass int64 or float32 positions"
            )
        if positions.is_complex():
            raise UsageError("positions must be real")
        return positions.to(device=device, dtype=dtype)
    if isinstance(positions, int):
        return torch.tensor(positions, dtype=torch.int64, device=device).to(dtype)
    return torch.tensor(float(positions), dtype=torch.float64, device=device).to(dtype)


def rope_cos_sin(positions: PositionsLike, inv_freq: torch.Tensor, *, dtype: torch.dtype = torch.float32,
                 device: torch.device | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """cos and sin of the angles m * theta_i, shape (*positions.shape, d_r/2), in ``dtype``.

    ``dtype`` is the angle dtype (float32 or float64); the product is formed with autocast off.
    """
    device = inv_freq.device if device is None else device
    if dtype == torch.float64:
        pos = positions_tensor(positions, torch.float64, device)  # (...,) float64
        freq = inv_freq.to(device=device, dtype=torch.float64)  # (d_r/2,) float64
    elif dtype == torch.float32:
        pos = positions_tensor(positions, torch.float32, device)  # (...,) float32
        freq = inv_freq.to(device=device, dtype=torch.float32)  # (d_r/2,) float32
    else:
        raise UsageError(f"angles are computed in float32 or float64, not {dtype}")
    with no_autocast(pos.device):
        angles = pos.unsqueeze(-1) * freq  # (..., d_r/2) float32|float64
        return torch.cos(angles), torch.sin(angles)


def rotate_pairs(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, layout: str) -> torch.Tensor:
    """Rotate the pairs of ``x`` (..., d_r) by angles with cos/sin broadcastable to (..., d_r/2)."""
    half = x.shape[-1] // 2
    if layout == "rotate_half":
        x1, x2 = x[..., :half], x[..., half:]
        return torch.cat((x1 * cos - x2 * sin, x2 * cos + x1 * sin), dim=-1)
    if layout == "interleaved":
        x1, x2 = x[..., 0::2], x[..., 1::2]
        return torch.stack((x1 * cos - x2 * sin, x2 * cos + x1 * sin), dim=-1).flatten(-2)
    raise UsageError(f"unknown RoPE layout {layout!r}; known: {', '.join(LAYOUTS)}")


def check_rotary_dim(head_dim: int, rotary_dim: int | None) -> int:
    """The rotary dimension d_r (default: the whole head), validated: even, 0 < d_r <= head_dim."""
    rd = head_dim if rotary_dim is None else int(rotary_dim)
    if rd <= 0 or rd % 2 or rd > head_dim:
        raise UsageError(f"rotary_dim must be even and in (0, {head_dim}], got {rotary_dim}")
    return rd


def apply_rope(x: torch.Tensor, positions: PositionsLike, base: float = 10000.0, rotary_dim: int | None = None,
               layout: str = "rotate_half", *, inv_freq: torch.Tensor | None = None) -> torch.Tensor:
    """Rotate ``x`` (..., seq, head_dim) by RoPE at ``positions`` (RoFormer, arXiv 2104.09864, eq. 14).

    positions: a tensor broadcastable to ``x.shape[:-1]`` (usually (seq,) int64), or one number
    for every row; fractional positions (position interpolation, Leaky ReRoPE) are allowed.
    rotary_dim: rotate the first d_r channels (default all), pass the rest through.
    inv_freq: per-pair frequencies (d_r/2,) overriding ``base`` (e.g. a scaled scheme's).
    The angles are computed in float32 (float64 for float64 ``x``) whatever ``x.dtype``; the
    output has ``x``'s dtype and shape.
    """
    if layout not in LAYOUTS:
        raise UsageError(f"unknown RoPE layout {layout!r}; known: {', '.join(LAYOUTS)}")
    rd = check_rotary_dim(x.shape[-1], rotary_dim)
    adt = angle_dtype(x.dtype)
    if inv_freq is None:
        inv_freq = rope_inv_freq(rd, base, dtype=adt, device=x.device)
    elif inv_freq.shape != (rd // 2,):
        raise UsageError(f"inv_freq must have shape ({rd // 2},), got {tuple(inv_freq.shape)}")
    cos, sin = rope_cos_sin(positions, inv_freq, dtype=adt, device=x.device)  # (..., d_r/2) float32|64
    rot = x[..., :rd].to(adt)  # (..., seq, d_r) float32|64
    out = rotate_pairs(rot, cos, sin, layout).to(x.dtype)  # (..., seq, d_r) x.dtype
    if rd == x.shape[-1]:
        return out
    return torch.cat((out, x[..., rd:]), dim=-1)
