"""ReRoPE and Leaky ReRoPE attention, exact, in O(L * (w + block)) memory.

Source: Su, "Transformer升级之路:12、无限外推的ReRoPE?" (kexue.fm/archives/9708, 2023; seed 000).
Causal attention whose score between query i and key j <= i uses RoPE at the relative
position
    r(i - j) = i - j                        if i - j < w      (window: plain RoPE)
    r(i - j) = w                            if i - j >= w     (ReRoPE, k -> infinity)
    r(i - j) = w + (i - j - w) / k          if i - j >= w     (Leaky ReRoPE, slope 1/k)
The seed computes two full L x L score matrices,
    a1_ij = (R^i q_i)^T (R^j k_j)                     (= q_i^T R^(j-i) k_j)
    a2_ij = (R^w q_i)^T k_j                           (ReRoPE)
    a2_ij = (R^((i-w)/k + w) q_i)^T (R^(j/k) k_j)      (Leaky ReRoPE, = q_i^T R^((j-i+w)/k - w) k_j)
and picks a1 where i - j < w, a2 elsewhere. Here the same scores are split into pieces that
never overlap: the near band (i - w < j <= i, query blocks of ``block_size`` rows against
their key window, banded mask) on (R^i q, R^j k), and the far triangle (j <= i - w) on the
second pair, which is an ordinary causal attention of rows i >= w against keys j < L - w.
Each piece runs in a fused attention kernel that returns its log-sum-exp; the pieces are
merged exactly (see :mod:`ropelaw.methods.merged`). No L x L matrix is formed.

Decode (seed 000, last display): one query i against a cache of UN-rotated keys needs one
score row, q_i^T R^(max(j-i, -w)) k_j (ReRoPE) or q_i^T R^(max(j-i, (j-i+w)/k - w)) k_j
(Leaky), i.e. keys rotated back by a cached table of the relative map; for ReRoPE the far
keys are left as they are and scored against R^w q.

Edge cases: w >= L (no pair reaches the window) is plain causal RoPE attention, computed by
one fused call; k = inf is ReRoPE. k must be > 1, as in ``ropelaw.schemes``: k = 1 is plain
RoPE (use no method) and k < 1 would stretch far distances past the trained range. Windows
are real > 0; a score is near when i - j < w, so a real w acts on integer distances like ceil(w).

From rotated inputs (``rerope_attention_rotated`` / ``rerope_decode_rotated``, used by the
Hugging Face patch): a cache of keys rotated at their own positions, R^j k_j, is the standard
cache, and the far pair is one more rotation of each rotated vector. With f = 1 - 1/k (f = 1
for ReRoPE) the far query is R^(f (w - i)) (R^i q_i) = R^((i-w)/k + w) q_i and the far key is
R^(-f j) (R^j k_j) = R^(j/k) k_j, seed 000's a2 pair exactly. A far key is formed once, when its
token enters the cache, so a decode step costs one score row over the near keys (rotated
cache) and the far keys (second cache): no re-rotation of the cache.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from ..errors import UsageError
from ..schemes import encoded_relative_position
from . import merged
from .logn import scale_queries_logn
from .rope import LAYOUTS, angle_dtype, apply_rope, check_rotary_dim, rope_cos_sin, rope_inv_freq

__all__ = ["rerope_attention", "rerope_decode", "rerope_relative_position", "rerope_attention_rotated",
           "rerope_decode_rotated", "far_rotation"]

DEFAULT_BLOCK = 32  # query rows per near-band block: band work is L * (block + w - 1)


def rerope_relative_position(delta: float, window: float, leaky_k: float | None = None) -> float:
    """Relative position used for a query-key distance ``delta >= 0`` (seed 000, matrices).

    delta < w: delta; else w (ReRoPE) or w + (delta - w)/k (Leaky ReRoPE). The map of
    :func:`ropelaw.schemes.encoded_relative_position` with a window (one implementation).
    """
    return encoded_relative_position(delta, window, leaky_k)


def check_window(window: float, leaky_k: float | None) -> int:
    if isinstance(window, bool) or not isinstance(window, (int, float)) or not math.isfinite(window) or window <= 0:
        raise UsageError(f"ReRoPE window must be a finite number > 0, got {window!r}")
    if leaky_k is not None and (isinstance(leaky_k, bool) or not isinstance(leaky_k, (int, float))
                                or math.isnan(leaky_k) or leaky_k <= 1):
        # the same domain as ropelaw.schemes (k = inf is accepted here as ReRoPE)
        raise UsageError(f"Leaky ReRoPE k must be > 1 (k = 1 is plain RoPE, k < 1 pushes positions past the "
                         f"trained range; inf is ReRoPE), got {leaky_k!r}")
    return math.ceil(window)  # near iff i - j < w  <=>  i - j <= ceil(w) - 1 for integer i - j


def _check_qkv(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> None:
    if q.dim() != 4 or k.dim() != 4 or v.dim() != 4:
        raise UsageError("q, k, v must have shape (batch, heads, seq, head_dim)")
    if k.shape[:3] != v.shape[:3] or q.shape[0] != k.shape[0] or q.shape[-1] != k.shape[-1]:
        raise UsageError(f"incompatible shapes q {tuple(q.shape)}, k {tuple(k.shape)}, v {tuple(v.shape)}")
    if q.shape[1] % k.shape[1]:
        raise UsageError(f"query heads ({q.shape[1]}) must be a multiple of key heads ({k.shape[1]})")
    if not (q.dtype == k.dtype == v.dtype) or not q.is_floating_point():
        raise UsageError(f"q, k, v must share one floating dtype, got {q.dtype}, {k.dtype}, {v.dtype}")


def _leaky_query_positions(qpos: torch.Tensor, window: float, leaky_k: float) -> torch.Tensor:
    """(i - w)/k + w, the far-region query rotation of Leaky ReRoPE (seed 000, a2), float64.

    Integer positions are exact in float64; apply_rope rounds the result once to float32.
    """
    return (qpos.to(torch.float64) - window) / leaky_k + window


def _leaky_key_positions(kpos: torch.Tensor, leaky_k: float) -> torch.Tensor:
    """j/k, the far-region key rotation of Leaky ReRoPE (seed 000, a2), float64."""
    return kpos.to(torch.float64) / leaky_k


def _expand_heads(x: torch.Tensor, heads: int) -> torch.Tensor:
    """(B, Hk, N, D) -> (B, heads, N, D), each key head shared by heads/Hk query heads."""
    if x.shape[1] == heads:
        return x
    return x.repeat_interleave(heads // x.shape[1], dim=1)


# ---------------------------------------------------------------------------------------------
# the near band: query blocks against their key windows, batched into a few fused calls


class _BandGroup:
    """``n`` consecutive query blocks of ``bq`` rows starting at query row ``t0``.

    Block b covers query positions p = o + t0 + b*bq .. p + bq - 1 and its key window is the
    kv = bq + W - 1 positions p - W + 1 .. p + bq - 1. Windows that start at key >= 0 are
    overlapping strided views of the key tensor itself (no copy); a group whose first window
    starts before key 0 works on a zero-padded copy of its few keys and masks the padding.
    """

    def __init__(self, t0: int, n: int, bq: int, o: int, W: int, device: torch.device, dtype: torch.dtype):
        self.t0, self.n, self.bq, self.W = t0, n, bq, W
        self.kv = bq + W - 1
        self.s = o + t0 - W + 1  # key position where the first window starts (may be < 0)
        self.front = max(0, -self.s)
        self.span = (n - 1) * bq + self.kv  # keys covered, padding included
        r = torch.arange(bq, device=device).unsqueeze(-1)  # (bq, 1) int64
        c = torch.arange(self.kv, device=device)  # (kv,) int64
        keep = (c >= r) & (c <= r + W - 1)  # (bq, kv): key c is within the window of row r
        if self.front:
            b = torch.arange(n, device=device)[:, None, None]  # (n, 1, 1)
            keep = keep & (self.s + b * bq + c >= 0)  # (n, bq, kv): padding is not a key
        else:
            keep = keep[None]  # (1, bq, kv)
        zero = torch.zeros((), dtype=dtype, device=device)
        self.mask = torch.where(keep, zero, torch.full((), -math.inf, dtype=dtype, device=device))[None]

    def rows(self, x: torch.Tensor) -> torch.Tensor:
        """(BH, T, ...) -> view (BH, n, bq, ...) of this group's query rows."""
        part = x[:, self.t0: self.t0 + self.n * self.bq]
        return part.view(x.shape[0], self.n, self.bq, *x.shape[2:])  # a view: results are written through it

    def windows(self, x: torch.Tensor) -> torch.Tensor:
        """(BH, N, D) contiguous -> (BH, n, kv, D) overlapping windows (a view unless padded)."""
        BH, _, D = x.shape
        if self.front:
            x = F.pad(x[:, : self.s + self.span], (0, 0, self.front, 0))  # (BH, span, D) small copy
            base = 0
        else:
            base = self.s
        return x.as_strided((BH, self.n, self.kv, D), (x.stride(0), self.bq * D, D, 1),
                            x.storage_offset() + base * D)

    def fold(self, g: torch.Tensor, into: torch.Tensor) -> None:
        """Adjoint of ``windows``: add window gradients g (BH, n, kv, D) into ``into`` (BH, N, D)."""
        BH, n, kv, D = g.shape
        acc = g.new_zeros(BH, self.span + self.bq, D)
        for c in range(0, kv, self.bq):
            e = min(c + self.bq, kv)
            acc[:, c: c + n * self.bq].view(BH, n, self.bq, D)[:, :, : e - c] += g[:, :, c:e]
        lo = self.s + self.front  # first real key position
        into[:, lo: self.s + self.span] += acc[:, self.front: self.span]


def _band_groups(T: int, o: int, W: int, bq: int, device: torch.device, dtype: torch.dtype) -> list[_BandGroup]:
    """Head blocks (windows starting before key 0), body blocks, and a partial last block."""
    full = T // bq
    nh = min(full, max(0, -(-(W - 1 - o) // bq)))  # blocks b with o + b*bq - W + 1 < 0
    groups = []
    if nh:
        groups.append(_BandGroup(0, nh, bq, o, W, device, dtype))
    if full > nh:
        groups.append(_BandGroup(nh * bq, full - nh, bq, o, W, device, dtype))
    if full * bq < T:
        groups.append(_BandGroup(full * bq, 1, T - full * bq, o, W, device, dtype))
    return groups


def _far_pieces(T: int, o: int, W: int) -> list[tuple[slice, slice, bool]]:
    """(query rows, keys, causal) of the far triangle j <= i - W, queries at o .. o+T-1.

    Rows with i < W have no far key and are left out (no fully masked rows). For o <= W the
    triangle is one top-left causal square: rows W-o .. T-1 against keys 0 .. N-W-1. For
    o > W keys 0 .. o-W-1 are seen by every row (one unmasked piece), and the rest is the
    causal square rows 0 .. T-1 against keys o-W .. N-W-1.
    """
    N = o + T
    if N <= W:
        return []
    if o <= W:
        return [(slice(W - o, T), slice(0, N - W), True)]
    return [(slice(0, T), slice(0, o - W), False), (slice(0, T), slice(o - W, N - W), True)]


def _flat(x: torch.Tensor) -> torch.Tensor:
    """(B, H, S, D) -> contiguous (B*H, S, D)."""
    return x.reshape(x.shape[0] * x.shape[1], x.shape[2], x.shape[3]).contiguous()


def _forward(qn, kn, qf, kf, v, W: int, scale: float, bq: int, flash: bool, softcap: float | None = None):
    B, H, T, _ = qn.shape
    N = kn.shape[2]
    o = N - T
    acc = angle_dtype(qn.dtype)
    q1, k1, v1 = _flat(qn), _flat(kn), _flat(v)  # (BH, T|N, D)
    out = torch.empty(B * H, T, v.shape[-1], dtype=acc, device=qn.device)  # (BH, T, Dv) acc
    lse = torch.empty(B * H, T, dtype=acc, device=qn.device)  # (BH, T) acc
    for g in _band_groups(T, o, W, bq, qn.device, qn.dtype):
        out_g, lse_g = merged.piece_forward(g.rows(q1), g.windows(k1), g.windows(v1), causal=False,
                                             mask=g.mask, scale=scale, flash=flash, softcap=softcap)
        g.rows(out).copy_(out_g)
        g.rows(lse).copy_(lse_g)
    out, lse = out.view(B, H, T, -1), lse.view(B, H, T)
    far = []
    for rows, keys, causal in _far_pieces(T, o, W):
        out_f, lse_f = merged.piece_forward(qf[:, :, rows], kf[:, :, keys], v[:, :, keys], causal=causal,
                                             mask=None, scale=scale, flash=flash, softcap=softcap)
        far.append((rows, out_f, lse_f.to(acc)))
    if far:
        total = lse.clone()
        for rows, _, lse_f in far:
            total[:, :, rows] = torch.logaddexp(total[:, :, rows], lse_f)
        out.mul_(torch.exp(lse - total).unsqueeze(-1))
        for rows, out_f, lse_f in far:
            out[:, :, rows] += out_f.to(acc) * torch.exp(lse_f - total[:, :, rows]).unsqueeze(-1)
        lse = total
    return out.to(qn.dtype), lse


class _ReRoPEFunction(torch.autograd.Function):
    """Near band on (qn, kn) + far triangle on (qf, kf), merged; backward by recomputation."""

    @staticmethod
    def forward(ctx, qn, kn, qf, kf, v, W, scale, bq, flash, softcap=None):
        out, lse = _forward(qn, kn, qf, kf, v, W, scale, bq, flash, softcap)
        ctx.save_for_backward(qn, kn, qf, kf, v, out, lse)
        ctx.cfg = (W, scale, bq, flash, softcap)
        return out

    @staticmethod
    def backward(ctx, d_out):
        qn, kn, qf, kf, v, out, lse = ctx.saved_tensors
        W, scale, bq, flash, softcap = ctx.cfg
        if softcap is not None:
            raise NotImplementedError("ReRoPE with soft-capped logits is forward-only (generation)")
        B, H, T, D = qn.shape
        N = kn.shape[2]
        o = N - T
        q1, k1, v1 = _flat(qn), _flat(kn), _flat(v)
        do1, o1, l1 = _flat(d_out), _flat(out), lse.reshape(B * H, T).contiguous()
        dq1 = torch.zeros_like(q1)
        dk1 = torch.zeros_like(k1)
        dv1 = torch.zeros_like(v1)
        for g in _band_groups(T, o, W, bq, qn.device, qn.dtype):
            gq, gk, gv = merged.piece_backward(g.rows(do1), g.rows(q1), g.windows(k1), g.windows(v1), g.rows(o1),
                                                g.rows(l1), causal=False, mask=g.mask, scale=scale, flash=flash)
            g.rows(dq1).copy_(gq)
            g.fold(gk, dk1)
            g.fold(gv, dv1)
        dqn, dkn, dv = dq1.view(B, H, T, D), dk1.view(B, H, N, D), dv1.view(B, H, N, -1)
        dqf, dkf = torch.zeros_like(qf), torch.zeros_like(kf)
        for rows, keys, causal in _far_pieces(T, o, W):
            gq, gk, gv = merged.piece_backward(d_out[:, :, rows], qf[:, :, rows], kf[:, :, keys], v[:, :, keys],
                                                out[:, :, rows], lse[:, :, rows].contiguous(), causal=causal,
                                                mask=None, scale=scale, flash=flash)
            dqf[:, :, rows] += gq
            dkf[:, :, keys] += gk
            dv[:, :, keys] += gv
        return dqn, dkn, dqf, dkf, dv, None, None, None, None, None


# ---------------------------------------------------------------------------------------------
# public API


def _rotations(q, k, qpos, kpos, window, leaky_k, rd, layout, inv_freq):
    """(qn, kn, qf, kf): near pair at absolute positions, far pair per seed 000's a2."""
    qn = apply_rope(q, qpos, rotary_dim=rd, layout=layout, inv_freq=inv_freq)
    kn = apply_rope(k, kpos, rotary_dim=rd, layout=layout, inv_freq=inv_freq)
    if leaky_k is None:
        qf = apply_rope(q, float(window), rotary_dim=rd, layout=layout, inv_freq=inv_freq)  # R^w q
        kf = k  # un-rotated keys
    else:
        qf = apply_rope(q, _leaky_query_positions(qpos, window, leaky_k), rotary_dim=rd, layout=layout,
                        inv_freq=inv_freq)  # R^((i-w)/k + w) q
        kf = apply_rope(k, _leaky_key_positions(kpos, leaky_k), rotary_dim=rd, layout=layout,
                        inv_freq=inv_freq)  # R^(j/k) k
    return qn, kn, qf, kf


def _prepare(q, k, base, rotary_dim, layout, inv_freq):
    if layout not in LAYOUTS:
        raise UsageError(f"unknown RoPE layout {layout!r}; known: {', '.join(LAYOUTS)}")
    rd = check_rotary_dim(q.shape[-1], rotary_dim)
    adt = angle_dtype(q.dtype)
    if inv_freq is None:
        inv_freq = rope_inv_freq(rd, base, dtype=adt, device=q.device)  # (d_r/2,) float32|64
    elif tuple(inv_freq.shape) != (rd // 2,):
        raise UsageError(f"inv_freq must have shape ({rd // 2},), got {tuple(inv_freq.shape)}")
    return rd, inv_freq


def rerope_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, window: float, leaky_k: float | None = None,
                     *, base: float = 10000.0, rotary_dim: int | None = None, layout: str = "rotate_half",
                     logn_train_len: float | None = None, scale: float | None = None,
                     block_size: int = DEFAULT_BLOCK, inv_freq: torch.Tensor | None = None) -> torch.Tensor:
    """Causal ReRoPE (``leaky_k=None``) or Leaky ReRoPE attention of UN-rotated q, k (seed 000).

    q (batch, heads, T, d), k (batch, kv_heads, N, d), v (batch, kv_heads, N, d_v), N >= T:
    the queries are the last T positions N-T .. N-1 (T = N for a prefill; T < N continues
    against a cache of un-rotated keys); kv_heads divides heads (grouped-query attention).
    Score of query i, key j <= i: scale * q_i^T R^(-r(i-j)) k_j with r the seed's piecewise
    map (``rerope_relative_position``); scale defaults to 1/sqrt(d).
    logn_train_len: multiply query i by max(1, log(i+1)/log(T_train)) (seed 000, "-log n").
    inv_freq: per-pair frequencies (d_r/2,), e.g. a checkpoint's; default base^(-2i/d_r).
    Returns (batch, heads, T, d_v) in q's dtype; differentiable in q, k, v. Memory
    O(N * (block_size + window)) per head; no N x N matrix is formed.
    """
    _check_qkv(q, k, v)
    W = check_window(window, leaky_k)
    if not isinstance(block_size, int) or block_size < 1:
        raise UsageError(f"block_size must be a positive integer, got {block_size!r}")
    T, N = q.shape[2], k.shape[2]
    if N < T:
        raise UsageError(f"k has {N} positions but q has {T}: the queries must be the last positions of k")
    rd, inv_freq = _prepare(q, k, base, rotary_dim, layout, inv_freq)
    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else float(scale)
    if T == 1:
        return rerope_decode(q, k, v, N - 1, window, leaky_k, base=base, rotary_dim=rd, layout=layout,
                             logn_train_len=logn_train_len, scale=scale, inv_freq=inv_freq)
    k, v = _expand_heads(k, q.shape[1]), _expand_heads(v, q.shape[1])
    o = N - T
    qpos = torch.arange(o, N, dtype=torch.int64, device=q.device)  # (T,) int64
    kpos = torch.arange(N, dtype=torch.int64, device=q.device)  # (N,) int64
    if logn_train_len is not None:
        q = scale_queries_logn(q, qpos, logn_train_len)
    if window > N - 1:  # no pair is beyond the window: plain causal RoPE attention
        qn = apply_rope(q, qpos, rotary_dim=rd, layout=layout, inv_freq=inv_freq)
        kn = apply_rope(k, kpos, rotary_dim=rd, layout=layout, inv_freq=inv_freq)
        if T == N:
            return F.scaled_dot_product_attention(qn, kn, v, is_causal=True, scale=scale)
        visible = kpos.unsqueeze(0) <= qpos.unsqueeze(-1)  # (T, N) bool, bottom-right causal
        return F.scaled_dot_product_attention(qn, kn, v, attn_mask=visible, scale=scale)
    qn, kn, qf, kf = _rotations(q, k, qpos, kpos, window, leaky_k, rd, layout, inv_freq)
    flash = merged.flash_supported(qn, kn, v)
    bq = min(block_size, T)
    return _ReRoPEFunction.apply(qn.contiguous(), kn.contiguous(), qf.contiguous(), kf.contiguous(),
                                 v.contiguous(), W, scale, bq, flash)


_TABLES: dict = {}  # (window, k, inv_freq, device) -> (cos, sin) of r(d) * theta, d = 0 .. capacity-1
_TABLES_MAX = 16


def _relative_table(window: float, leaky_k: float | None, need: int, inv_freq: torch.Tensor):
    """cos and sin of r(d) * theta_p for distances d = 0 .. need-1, cached and grown by doubling.

    r is seed 000's map (``rerope_relative_position``); r(d) is formed in float64 and the
    angle in inv_freq's dtype (float32 or float64). Shapes (capacity >= need, d_r/2).
    """
    key = (float(window), leaky_k, inv_freq.dtype, str(inv_freq.device), tuple(inv_freq.tolist()))
    hit = _TABLES.get(key)
    if hit is not None and hit[0].shape[0] >= need:
        return hit
    cap = max(need, 1024, 2 * hit[0].shape[0] if hit is not None else 0)
    d = torch.arange(cap, dtype=torch.int64, device=inv_freq.device).to(torch.float64)  # (cap,) distances
    far = torch.full_like(d, float(window)) if leaky_k is None else window + (d - window) / leaky_k
    r = torch.where(d < window, d, far)  # (cap,) float64 encoded relative position
    table = rope_cos_sin(r, inv_freq, dtype=inv_freq.dtype, device=inv_freq.device)  # 2 x (cap, d_r/2)
    if len(_TABLES) >= _TABLES_MAX:
        _TABLES.pop(next(iter(_TABLES)))
    _TABLES[key] = table
    return table


def _rotate_back(k: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, rd: int, layout: str) -> torch.Tensor:
    """R^(-r) k: keys (..., n, d) rotated by minus the angles whose cos/sin are (n, d_r/2)."""
    from .rope import rotate_pairs

    out = rotate_pairs(k[..., :rd].to(cos.dtype), cos, -sin, layout).to(k.dtype)  # (..., n, d_r)
    return out if rd == k.shape[-1] else torch.cat((out, k[..., rd:]), dim=-1)


def rerope_decode(q: torch.Tensor, k_cache: torch.Tensor, v_cache: torch.Tensor, position: int, window: float,
                  leaky_k: float | None = None, *, base: float = 10000.0, rotary_dim: int | None = None,
                  layout: str = "rotate_half", logn_train_len: float | None = None, scale: float | None = None,
                  inv_freq: torch.Tensor | None = None) -> torch.Tensor:
    """One decoding step of (Leaky) ReRoPE: one query against a cache of UN-rotated keys (seed 000).

    q (batch, heads, 1, d) at 0-based ``position`` i; k_cache (batch, kv_heads, N, d) and
    v_cache (batch, kv_heads, N, d_v) hold keys/values at positions 0 .. N-1 <= i (the
    current token's key included when N = i + 1). One score row, seed 000's decode form:
        ReRoPE        q_i^T R^(max(j-i, -w)) k_j
        Leaky ReRoPE  q_i^T R^(max(j-i, (j-i+w)/k - w)) k_j
    i.e. q_i^T R^(-r(i-j)) k_j with the angles of r(d) taken from a cached table of relative
    positions (never larger than r(i), so float32 angles stay small at any position). For
    ReRoPE the far keys (r = w) are not rotated at all: their scores are (R^w q_i)^T k_j.
    One softmax over the row. Returns (batch, heads, 1, d_v); differentiable.
    """
    _check_qkv(q, k_cache, v_cache)
    if q.shape[2] != 1:
        raise UsageError(f"rerope_decode takes one query (seq = 1), got {q.shape[2]}; use rerope_attention")
    W = check_window(window, leaky_k)
    N = k_cache.shape[2]
    if isinstance(position, bool) or not isinstance(position, int) or position < N - 1:
        raise UsageError(f"position must be an int >= N - 1 = {N - 1} (the cache holds positions 0..N-1), "
                         f"got {position!r}")
    rd, inv_freq = _prepare(q, k_cache, base, rotary_dim, layout, inv_freq)
    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else float(scale)
    B, H, _, D = q.shape
    Hk = k_cache.shape[1]
    if logn_train_len is not None:
        q = scale_queries_logn(q, torch.tensor([position], dtype=torch.int64, device=q.device), logn_train_len)
    q = q * scale  # (B, H, 1, D), the softmax scale folded into the one query
    cos, sin = _relative_table(window, leaky_k, position + 1, inv_freq)  # (>= i+1, d_r/2)
    # ReRoPE: only keys with d = i - j < W are rotated; Leaky: every key
    n_far = min(max(position - W + 1, 0), N) if leaky_k is None else 0
    lo, hi = position - N + 1, position - n_far + 1  # distances of keys N-1 .. n_far
    kr = _rotate_back(k_cache[:, :, n_far:], cos[lo:hi].flip(0), sin[lo:hi].flip(0), rd, layout)
    scores = torch.matmul(q.reshape(B, Hk, H // Hk, D), kr.transpose(-1, -2))  # (B, Hk, g, N - n_far)
    if n_far:
        qf = apply_rope(q, float(window), rotary_dim=rd, layout=layout, inv_freq=inv_freq)  # R^w q
        far = torch.matmul(qf.reshape(B, Hk, H // Hk, D), k_cache[:, :, :n_far].transpose(-1, -2))
        scores = torch.cat((far, scores), dim=-1)  # (B, Hk, g, N) one score row per query head
    acc = angle_dtype(q.dtype)
    p = torch.softmax(scores.to(acc), dim=-1).to(v_cache.dtype)  # (B, Hk, g, N)
    out = torch.matmul(p, v_cache)  # (B, Hk, g, d_v)
    return out.reshape(B, H, 1, v_cache.shape[-1])


# ---------------------------------------------------------------------------------------------
# from rotated inputs: the standard cache of rotated keys plus a cache of far keys


def _far_factor(leaky_k: float | None) -> float:
    """f = 1 - 1/k (f = 1 for ReRoPE, k = inf)."""
    return 1.0 if leaky_k is None else 1.0 - 1.0 / leaky_k


def far_rotation(x_rot: torch.Tensor, positions: torch.Tensor, window: float, leaky_k: float | None, role: str, *,
                 inv_freq: torch.Tensor, rotary_dim: int | None = None, layout: str = "rotate_half") -> torch.Tensor:
    """The far-region vector of seed 000's a2 from a vector already rotated at its position.

    x_rot (..., S, d) = R^p x at integer ``positions`` p (int64, broadcastable to x_rot.shape[:-1]).
    role "query": R^(f (w - p)) x_rot = R^((p - w)/k + w) x  (ReRoPE: R^w x);
    role "key":   R^(-f p) x_rot      = R^(p/k) x             (ReRoPE: x, un-rotated);
    f = 1 - 1/k, 1 for ReRoPE. The angle offsets are formed in float64 from the integer
    positions and rounded once; any factor on the rotated vector (e.g. a checkpoint's
    attention scaling on cos and sin) is carried along. Returns x_rot's dtype and shape.
    """
    f = _far_factor(leaky_k)
    p = positions.to(torch.float64)
    if role == "query":
        shift = f * (float(window) - p)
    elif role == "key":
        shift = -f * p
    else:
        raise UsageError(f"role must be 'query' or 'key', got {role!r}")
    return apply_rope(x_rot, shift, rotary_dim=rotary_dim, layout=layout, inv_freq=inv_freq)


def rerope_attention_rotated(qn: torch.Tensor, kn: torch.Tensor, qf: torch.Tensor, kf: torch.Tensor,
                             v: torch.Tensor, window: float, *, scale: float, softcap: float | None = None,
                             block_size: int = DEFAULT_BLOCK, sliding_window: int | None = None) -> torch.Tensor:
    """Causal (Leaky) ReRoPE attention from the near pair (qn, kn) and the far pair (qf, kf).

    qn = R^i q_i, kn = R^j k_j (the model's own rotation), qf, kf from :func:`far_rotation`;
    shapes (B, H, T, d) for queries, (B, Hk, N, d) for keys and v, N >= T, the queries being
    positions N-T .. N-1 of the keys. Score of (i, j <= i): scale * qn_i . kn_j if i - j < w,
    else scale * qf_i . kf_j (seed 000), soft-capped by ``softcap`` if given (forward only).
    ``sliding_window`` s: query i sees only keys with i - j < s, as transformers' sliding-window
    mask (``masking_utils.sliding_window_overlay``: kv_idx > q_idx - s); needs s > ceil(w).
    Returns (B, H, T, d_v) in qn's dtype; no N x N matrix is formed.
    """
    _check_qkv(qn, kn, v)
    W = check_window(window, None)
    H = qn.shape[1]
    kn, kf, v = (_expand_heads(x, H) for x in (kn, kf, v))
    if sliding_window is not None:
        if isinstance(sliding_window, bool) or not isinstance(sliding_window, int) or sliding_window <= W:
            raise UsageError(f"sliding_window must be an integer > ceil(window) = {W}, got {sliding_window!r}")
        return _sliding_rotated(qn, kn, qf, kf, v, W, sliding_window, float(scale), softcap, _SLIDING_BLOCK)
    flash = softcap is None and merged.flash_supported(qn, kn, v)
    return _ReRoPEFunction.apply(qn.contiguous(), kn.contiguous(), qf.contiguous(), kf.contiguous(), v.contiguous(),
                                 W, float(scale), min(block_size, qn.shape[2]), flash, softcap)


_SLIDING_BLOCK = 128  # query rows per block of the sliding-window path: memory O(block * (s + block))


def _sliding_rotated(qn: torch.Tensor, kn: torch.Tensor, qf: torch.Tensor, kf: torch.Tensor, v: torch.Tensor,
                     W: int, sliding: int, scale: float, softcap: float | None, block: int) -> torch.Tensor:
    """Seed 000's two score matrices inside a sliding window, one block of query rows at a time.

    Heads already expanded. Rows i0 .. i1-1 (key indices) see keys max(0, i0 - s + 1) .. i1-1;
    a1 = qn . kn where i - j < W, a2 = qf . kf elsewhere, then the causal and sliding mask
    (0 <= i - j < s), softmax in the accumulation dtype. Forward only (the patch is for inference).
    """
    B, H, T, _ = qn.shape
    N = kn.shape[2]
    acc = angle_dtype(qn.dtype)
    out = qn.new_empty(B, H, T, v.shape[-1])
    for t0 in range(0, T, block):
        t1 = min(T, t0 + block)
        i0, i1 = N - T + t0, N - T + t1
        k0 = max(0, i0 - sliding + 1)
        dist = (torch.arange(i0, i1, device=qn.device)[:, None]
                - torch.arange(k0, i1, device=qn.device)[None, :])  # (rows, keys) int64
        a1 = torch.matmul(qn[:, :, t0:t1].to(acc), kn[:, :, k0:i1].to(acc).transpose(-1, -2))
        a2 = torch.matmul(qf[:, :, t0:t1].to(acc), kf[:, :, k0:i1].to(acc).transpose(-1, -2))
        s = torch.where(dist < W, a1, a2) * scale
        if softcap is not None:
            s = torch.tanh(s / softcap) * softcap
        s = s.masked_fill((dist < 0) | (dist >= sliding), -math.inf)
        p = torch.softmax(s, dim=-1)
        out[:, :, t0:t1] = torch.matmul(p, v[:, :, k0:i1].to(acc)).to(out.dtype)
    return out


def rerope_decode_rotated(qn: torch.Tensor, qf: torch.Tensor, k_near: torch.Tensor, k_far: torch.Tensor,
                          v: torch.Tensor, window: float, *, scale: float, key_mask: torch.Tensor | None = None,
                          softcap: float | None = None) -> torch.Tensor:
    """One decoding step of (Leaky) ReRoPE against two caches (seed 000, decode form).

    qn = R^i q_i and qf (:func:`far_rotation`, role "query") are (B, H, 1, d) for the newest
    position i; k_near (B, Hk, N, d) holds R^j k_j (the standard cache), k_far (B, Hk, >= N - W, d)
    holds the far keys R^(j/k) k_j (ReRoPE: k_j) of positions 0 .. (at least) N - W - 1, and
    v (B, Hk, N, d_v); the keys are positions i - N + 1 .. i. With W = ceil(w) the last W keys
    are near (i - j < w) and score scale * qn . k_near_j, the others far and score
    scale * qf . k_far_j: one row, O(N d) work, nothing re-rotated. key_mask (B, N) bool marks
    keys that exist (False: left padding). Returns (B, H, 1, d_v).
    """
    B, H, _, D = qn.shape
    Hk, N = k_near.shape[1], k_near.shape[2]
    W = check_window(window, None)
    g = H // Hk
    nf = max(N - W, 0)
    acc = angle_dtype(qn.dtype)
    if (nf and softcap is None and merged.flash_supported(qn, k_near, v)
            and (key_mask is None or bool(key_mask[:, :nf].any(-1).all()))):
        # two fused pieces (each query head's row: (B, Hk, g, d) against its key head) merged
        # by log-sum-exp; every row of each piece sees a key (checked above)
        def piece(qx, kx, vx, m):
            mask = None if m is None else torch.zeros(m.shape, dtype=qx.dtype, device=qx.device).masked_fill(
                ~m, -math.inf)[:, None, None, :]
            return merged.piece_forward(qx.reshape(B, Hk, g, D), kx, vx, causal=False, mask=mask, scale=scale,
                                         flash=True)

        out_f, lse_f = piece(qf, k_far[:, :, :nf], v[:, :, :nf], None if key_mask is None else key_mask[:, :nf])
        out_n, lse_n = piece(qn, k_near[:, :, nf:], v[:, :, nf:], None if key_mask is None else key_mask[:, nf:])
        lse = torch.logaddexp(lse_f, lse_n)  # (B, Hk, g)
        out = (out_f.to(acc) * torch.exp(lse_f - lse)[..., None] + out_n.to(acc) * torch.exp(lse_n - lse)[..., None])
        return out.to(v.dtype).reshape(B, H, 1, v.shape[-1])
    # the softmax scale is folded into the one query row
    near = torch.matmul((qn * scale).reshape(B, Hk, g, D), k_near[:, :, nf:].transpose(-1, -2))  # (B, Hk, g, N-nf)
    if nf:
        far = torch.matmul((qf * scale).reshape(B, Hk, g, D), k_far[:, :, :nf].transpose(-1, -2))  # (B, Hk, g, nf)
        scores = torch.cat((far, near), dim=-1).to(acc)  # (B, Hk, g, N) acc
    else:
        scores = near.to(acc)
    if softcap is not None:
        scores = torch.tanh(scores / softcap) * softcap
    if key_mask is not None:
        scores = scores.masked_fill(~key_mask[:, None, None, :], -math.inf)
    p = torch.softmax(scores, dim=-1).to(v.dtype)  # (B, Hk, g, N)
    return torch.matmul(p, v).reshape(B, H, 1, v.shape[-1])
