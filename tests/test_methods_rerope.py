"""ReRoPE / Leaky ReRoPE against the seed's two-matrix definition (seed 000, kexue.fm/archives/9708).

The reference below is written from the seed's equations alone: a1_ij = (R^i q_i)^T (R^j k_j),
a2_ij = (R^w q_i)^T k_j (ReRoPE) or (R^((i-w)/k+w) q_i)^T (R^(j/k) k_j) (Leaky), a_ij = a1
where i - j < w else a2, causal mask, softmax, times v. Its rotation is complex
multiplication with float64 angles, independent of ropelaw.methods.rope.
"""

from __future__ import annotations

import math

import pytest

torch = pytest.importorskip("torch")
import torch.nn.functional as F  # noqa: E402

from ropelaw.methods import merged, apply_rope, rerope_attention, rerope_decode  # noqa: E402
from ropelaw.methods.rerope import rerope_relative_position  # noqa: E402
from ropelaw.schemes import SchemeResult  # noqa: E402

pytestmark = pytest.mark.torch


def rot(x: torch.Tensor, pos: torch.Tensor, base: float = 10000.0, rd: int | None = None) -> torch.Tensor:
    """Rotate-half RoPE of the first rd channels as complex multiplication; pos (S,) float64."""
    d = x.shape[-1] if rd is None else rd
    theta = base ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)  # (d/2,)
    e = torch.polar(torch.ones(1, dtype=torch.float64), pos.to(torch.float64)[:, None] * theta)  # (S, d/2)
    z = torch.complex(x[..., : d // 2].to(torch.float64), x[..., d // 2: d].to(torch.float64)) * e
    return torch.cat((z.real.to(x.dtype), z.imag.to(x.dtype), x[..., d:]), dim=-1)


def reference(q, k, v, w, leaky_k=None, logn_train_len=None, rd=None, sliding=None):
    """Seed 000's two full matrices; q, k, v (B, H, L, d), same L; ``sliding``: also mask i - j >= s."""
    L, d = q.shape[2], q.shape[3]
    pos = torch.arange(L, dtype=torch.float64)
    if logn_train_len is not None:
        q = q * torch.clamp(torch.log(pos + 1) / math.log(logn_train_len), min=1.0)[:, None].to(q.dtype)
    a1 = rot(q, pos, rd=rd) @ rot(k, pos, rd=rd).transpose(-1, -2)
    if leaky_k is None:
        a2 = rot(q, torch.full((L,), float(w), dtype=torch.float64), rd=rd) @ k.transpose(-1, -2)
    else:
        a2 = rot(q, (pos - w) / leaky_k + w, rd=rd) @ rot(k, pos / leaky_k, rd=rd).transpose(-1, -2)
    i, j = torch.arange(L)[:, None], torch.arange(L)[None, :]
    a = torch.where(i - j < w, a1, a2) / math.sqrt(d)
    a = a.masked_fill(j > i, -math.inf)
    if sliding is not None:
        a = a.masked_fill(i - j >= sliding, -math.inf)
    return torch.softmax(a, dim=-1) @ v


def qkv(B, H, L, d, dtype, seed=0, Hk=None):
    g = torch.Generator().manual_seed(seed)
    Hk = H if Hk is None else Hk
    q = torch.randn(B, H, L, d, dtype=dtype, generator=g, requires_grad=True)
    k = torch.randn(B, Hk, L, d, dtype=dtype, generator=g, requires_grad=True)
    v = torch.randn(B, Hk, L, d, dtype=dtype, generator=g, requires_grad=True)
    return q, k, v


TOL = {torch.float64: 1e-12, torch.float32: 2e-5}

CASES = [  # (L, window, leaky_k, block)
    (37, 5, None, 8),
    (37, 5, 4.0, 8),
    (50, 13, None, 16),
    (50, 13, 16.0, 7),
    (33, 1, None, 4),
    (33, 1, 3.0, 64),
    (40, 39, None, 8),
    (64, 20, 2.5, 32),
    (20, 19, 2.0, 8),  # a partial last block whose window starts before key 0
    (30, 5.5, 3.0, 8),  # a real window: near iff i - j < 5.5, far positions 5.5 + (i - j - 5.5)/k
]


@pytest.fixture(params=[False, True], ids=["fused", "matmul"])
def path(request, monkeypatch):
    monkeypatch.setattr(merged, "FORCE_MATMUL", request.param)
    return request.param


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32], ids=["f64", "f32"])
@pytest.mark.parametrize("L,w,kk,block", CASES)
def test_prefill_forward_and_backward_equal_reference(path, dtype, L, w, kk, block):
    q, k, v = qkv(2, 3, L, 8, dtype)
    out = rerope_attention(q, k, v, w, kk, block_size=block)
    ref = reference(q, k, v, w, kk)
    torch.testing.assert_close(out, ref, rtol=0, atol=TOL[dtype])
    g = torch.randn_like(out)
    got = torch.autograd.grad(out, (q, k, v), g)
    want = torch.autograd.grad(ref, (q, k, v), g)
    for a, b in zip(got, want, strict=True):
        torch.testing.assert_close(a, b, rtol=0, atol=4 * TOL[dtype])


@pytest.mark.parametrize("kk", [None, 8.0])
def test_gradcheck_float64(path, kk):
    q, k, v = qkv(1, 2, 11, 4, torch.float64, seed=3)
    # the fused kernel costs ~40 ms per tiny call: random-projection gradcheck there
    assert torch.autograd.gradcheck(lambda a, b, c: rerope_attention(a, b, c, 3, kk, block_size=4), (q, k, v),
                                    fast_mode=not path)


def test_gradcheck_decode():
    q, k, v = qkv(1, 2, 9, 4, torch.float64, seed=4)
    q1 = q[:, :, -1:].detach().requires_grad_()
    for kk in (None, 2.0):
        assert torch.autograd.gradcheck(lambda a, b, c, kk=kk: rerope_decode(a, b, c, 8, 3, kk), (q1, k, v),
                                        fast_mode=True)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32], ids=["f64", "f32"])
@pytest.mark.parametrize("w", [48, 49, 1000])
def test_window_covering_input_is_plain_rope(dtype, w):
    # w >= L: every i - j < w, a_ij = a1_ij: exactly causal attention on rotated q, k
    q, k, v = qkv(1, 4, 48, 16, dtype)
    pos = torch.arange(48)
    plain = F.scaled_dot_product_attention(apply_rope(q, pos), apply_rope(k, pos), v, is_causal=True)
    assert torch.equal(rerope_attention(q, k, v, w), plain)


def test_leaky_with_k_near_one_approaches_plain_rope():
    # k -> 1: w + (i - j - w)/k -> i - j, the plain RoPE matrix (seed 000, eq. rope); k = 1
    # itself is refused (use no method), as in ropelaw.schemes
    q, k, v = qkv(1, 2, 40, 8, torch.float64)
    pos = torch.arange(40)
    plain = F.scaled_dot_product_attention(apply_rope(q, pos), apply_rope(k, pos), v, is_causal=True)
    torch.testing.assert_close(rerope_attention(q, k, v, 6, 1 + 1e-12), plain, rtol=0, atol=1e-9)


@pytest.mark.parametrize("kk", [1.0, 0.5, 0.0, -2.0, math.nan])
def test_leaky_k_at_most_one_is_refused_like_schemes(kk):
    # k = 1 is plain RoPE; k < 1 maps a far distance d to w + (d - w)/k > d, past the trained range
    from ropelaw.schemes import relative_position_matrix

    q, k, v = qkv(1, 2, 10, 8, torch.float32)
    for call in (lambda: rerope_attention(q, k, v, 3, kk), lambda: rerope_decode(q[:, :, -1:], k, v, 9, 3, kk)):
        with pytest.raises(ValueError, match="k must be > 1"):
            call()
    if not math.isnan(kk):
        with pytest.raises(ValueError, match="k must be > 1"):
            relative_position_matrix(10, window=3, leaky_k=kk)


@pytest.mark.parametrize("kk", [1e12, math.inf])
def test_leaky_with_huge_k_is_rerope(kk):
    # k -> infinity: w + (i - j - w)/k -> w (seed 000, eq. rerope)
    q, k, v = qkv(1, 2, 40, 8, torch.float32)
    torch.testing.assert_close(rerope_attention(q, k, v, 6, kk), rerope_attention(q, k, v, 6), rtol=0, atol=1e-6)
    d = rerope_decode(q[:, :, -1:], k, v, 39, 6, kk)
    torch.testing.assert_close(d, rerope_decode(q[:, :, -1:], k, v, 39, 6), rtol=0, atol=1e-6)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32], ids=["f64", "f32"])
@pytest.mark.parametrize("w,kk", [(5, None), (5, 3.0), (1, None), (30, 2.0), (200, None), (5.5, 3.0)])
def test_decode_equals_prefill_rows(dtype, w, kk):
    q, k, v = qkv(2, 4, 30, 8, dtype, Hk=2)
    full = rerope_attention(q, k, v, w, kk)
    for i in (0, 1, 4, 5, 6, 17, 29):
        step = rerope_decode(q[:, :, i: i + 1], k[:, :, : i + 1], v[:, :, : i + 1], i, w, kk)
        torch.testing.assert_close(step, full[:, :, i: i + 1], rtol=0, atol=TOL[dtype])


@pytest.mark.parametrize("T", [2, 9, 25, 38])
@pytest.mark.parametrize("kk", [None, 4.0])
def test_queries_continuing_a_cache_equal_prefill_rows(path, T, kk):
    q, k, v = qkv(1, 2, 40, 8, torch.float64)
    full = reference(q, k, v, 7, kk)
    part = rerope_attention(q[:, :, -T:], k, v, 7, kk, block_size=4)
    torch.testing.assert_close(part, full[:, :, -T:], rtol=0, atol=1e-12)


def test_bfloat16_inputs_follow_float32_result():
    # bf16 q, k, v: angles and the merge stay in float32; only the inputs/outputs are rounded
    q, k, v = qkv(1, 2, 64, 16, torch.float32)
    lo = rerope_attention(q.bfloat16(), k.bfloat16(), v.bfloat16(), 8, 4.0)
    hi = rerope_attention(q.bfloat16().float(), k.bfloat16().float(), v.bfloat16().float(), 8, 4.0)
    assert lo.dtype == torch.bfloat16
    torch.testing.assert_close(lo.float(), hi, rtol=0, atol=3e-2)


def test_grouped_query_attention_equals_repeated_heads():
    q, k, v = qkv(1, 4, 30, 8, torch.float64, Hk=2)
    rep = [x.repeat_interleave(2, dim=1) for x in (k, v)]
    torch.testing.assert_close(rerope_attention(q, k, v, 6, 2.0), reference(q, *rep, 6, 2.0), rtol=0, atol=1e-12)


def test_logn_scaling_equals_scaled_reference():
    q, k, v = qkv(1, 2, 40, 8, torch.float64)
    torch.testing.assert_close(rerope_attention(q, k, v, 6, logn_train_len=8),
                               reference(q, k, v, 6, logn_train_len=8), rtol=0, atol=1e-12)
    # within the training length the factor is 1
    torch.testing.assert_close(rerope_attention(q, k, v, 6, logn_train_len=40), rerope_attention(q, k, v, 6),
                               rtol=0, atol=0)


def test_scores_follow_the_seed_position_matrix(path):
    """Read the encoded relative position off the scores (seed 000, eq. leaky-rerope).

    d = 2 is one pair with theta = 1, q = k = (1, 0), so the score of (i, j) is cos(r(i-j))/sqrt(2);
    v = identity turns the output into the attention probabilities, whose log-ratios are
    score differences.
    """
    L, w, kk = 24, 5, 4.0
    q = torch.zeros(1, 1, L, 2, dtype=torch.float64)
    q[..., 0] = 1.0
    v = torch.eye(L, dtype=torch.float64)[None, None]  # value head size L != 2: matmul path
    for leaky in (None, kk):
        p = rerope_attention(q, q.clone(), v, w, leaky)[0, 0]  # (L, L) probabilities
        for i in range(L):
            for j in range(i + 1):
                r_ij = rerope_relative_position(i - j, w, leaky)
                r_i0 = rerope_relative_position(i, w, leaky)
                want = (math.cos(r_ij) - math.cos(r_i0)) / math.sqrt(2)
                assert abs(math.log(p[i, j]) - math.log(p[i, 0]) - want) < 1e-12
            assert float(p[i, i + 1:].abs().sum()) == 0.0  # causal


@pytest.mark.parametrize("delta", [0, 3, 4, 5, 6, 100])
@pytest.mark.parametrize("kk", [None, 16.0])
def test_relative_position_agrees_with_scheme_result(delta, kk):
    assert rerope_relative_position(delta, 5, kk) == SchemeResult((), window=5, leaky_k=kk).relative_position(delta)


def test_interleaved_layout_and_partial_rotary_dim():
    # interleaved layout = rotate-half layout after permuting channels (2i, 2i+1) -> (i, i + d/2)
    q, k, v = qkv(1, 2, 30, 8, torch.float64)
    perm = torch.tensor([0, 2, 4, 6, 1, 3, 5, 7])
    a = rerope_attention(q, k, v, 4, 3.0, layout="interleaved")
    b = rerope_attention(q[..., perm], k[..., perm], v, 4, 3.0)
    torch.testing.assert_close(a, b, rtol=0, atol=1e-12)
    # rotary_dim 4 of 8: the last 4 channels are position-free (GPT-NeoX partial rotary)
    for kk in (None, 3.0):
        torch.testing.assert_close(rerope_attention(q, k, v, 4, kk, rotary_dim=4), reference(q, k, v, 4, kk, rd=4),
                                   rtol=0, atol=1e-12)


def test_bad_arguments():
    q, k, v = qkv(1, 2, 10, 8, torch.float32)
    for bad in (0, -1, math.nan, math.inf):
        with pytest.raises(ValueError, match="window"):
            rerope_attention(q, k, v, bad)
    with pytest.raises(ValueError, match="k must be"):
        rerope_attention(q, k, v, 3, 0.0)
    with pytest.raises(ValueError, match="last positions"):
        rerope_attention(q, k[:, :, :5], v[:, :, :5], 3)
    with pytest.raises(ValueError, match="position"):
        rerope_decode(q[:, :, :1], k, v, 5, 3)
    with pytest.raises(ValueError, match="one query"):
        rerope_decode(q[:, :, :2], k, v, 9, 3)


@pytest.mark.parametrize("kk", [None, 3.0])
def test_decode_query_ahead_of_cache(kk):
    # position p > N - 1: keys 0..N-1, scores from the seed's piecewise definition at distance p - j
    q, k, v = qkv(1, 2, 12, 8, torch.float64)
    p, w = 15, 5
    qi = q[:, :, -1:]
    pos = torch.arange(12, dtype=torch.float64)
    a1 = rot(qi, torch.tensor([float(p)], dtype=torch.float64)) @ rot(k, pos).transpose(-1, -2)
    if kk is None:
        a2 = rot(qi, torch.tensor([float(w)], dtype=torch.float64)) @ k.transpose(-1, -2)
    else:
        a2 = rot(qi, torch.tensor([(p - w) / kk + w], dtype=torch.float64)) @ rot(k, pos / kk).transpose(-1, -2)
    a = torch.where(p - pos < w, a1, a2) / math.sqrt(8)
    want = torch.softmax(a, dim=-1) @ v
    torch.testing.assert_close(rerope_decode(qi, k, v, p, w, kk), want, rtol=0, atol=1e-12)


@pytest.mark.parametrize("delta,kk,want", [
    # seed 000's matrices at w = 5: identity inside the window; ReRoPE clips to w; Leaky
    # ReRoPE continues with slope 1/k: w + (delta - w)/k (hand-computed)
    (0, None, 0.0), (4, None, 4.0), (5, None, 5.0), (100, None, 5.0),
    (4, 16.0, 4.0), (5, 16.0, 5.0), (21, 16.0, 6.0), (100, 16.0, 5 + 95 / 16),
    (100, math.inf, 5.0),  # k = inf is ReRoPE
])
def test_relative_position_values_from_the_seed(delta, kk, want):
    from ropelaw.schemes import encoded_relative_position

    assert rerope_relative_position(delta, 5, kk) == want
    assert encoded_relative_position(delta, 5, kk) == want  # one map: rerope's calls the scheme's


# --- from rotated inputs (the standard cache of R^j k_j plus a cache of far keys) ---------------


def rotated_pairs(q, k, w, kk):
    """The model's rotation (independent float64 complex rotation), then far_rotation of each."""
    from ropelaw.methods import far_rotation, rope_inv_freq

    L = q.shape[2]
    pos = torch.arange(L)
    qn, kn = rot(q, pos.double()), rot(k, pos.double())
    inv = rope_inv_freq(q.shape[-1], dtype=torch.float64)
    qf = far_rotation(qn, pos, w, kk, "query", inv_freq=inv)
    kf = far_rotation(kn, pos, w, kk, "key", inv_freq=inv)
    return qn, kn, qf, kf


@pytest.mark.parametrize("w,kk", [(5, None), (5, 4.0), (13, 16.0), (1, None), (5.5, 3.0)])
def test_rotated_prefill_and_decode_equal_reference(path, w, kk):
    from ropelaw.methods import rerope_attention_rotated, rerope_decode_rotated

    q, k, v = qkv(2, 4, 30, 8, torch.float64, Hk=2)
    qn, kn, qf, kf = rotated_pairs(q, k, w, kk)
    rep = [x.repeat_interleave(2, dim=1) for x in (k, v)]
    want = reference(q, *rep, w, kk)
    got = rerope_attention_rotated(qn, kn, qf, kf, v, w, scale=8 ** -0.5)
    torch.testing.assert_close(got, want, rtol=0, atol=1e-12)
    for i in (0, 4, 5, 6, 29):  # one row against caches holding keys 0..i
        step = rerope_decode_rotated(qn[:, :, i: i + 1], qf[:, :, i: i + 1], kn[:, :, : i + 1], kf[:, :, : i + 1],
                                     v[:, :, : i + 1], w, scale=8 ** -0.5)
        torch.testing.assert_close(step, want[:, :, i: i + 1], rtol=0, atol=1e-12)


def test_far_rotation_is_the_seed_a2_pair():
    # a2_ij = (R^((i-w)/k+w) q_i)^T (R^(j/k) k_j): far_rotation reaches it from R^i q_i and R^j k_j
    from ropelaw.methods import far_rotation, rope_inv_freq

    q, k, _ = qkv(1, 1, 20, 8, torch.float64)
    pos = torch.arange(20)
    inv = rope_inv_freq(8, dtype=torch.float64)
    w, kk = 6, 4.0
    torch.testing.assert_close(far_rotation(rot(q, pos.double()), pos, w, kk, "query", inv_freq=inv),
                               rot(q, (pos.double() - w) / kk + w), rtol=0, atol=1e-12)
    torch.testing.assert_close(far_rotation(rot(k, pos.double()), pos, w, kk, "key", inv_freq=inv),
                               rot(k, pos.double() / kk), rtol=0, atol=1e-12)
    # ReRoPE: R^w q and the un-rotated key
    torch.testing.assert_close(far_rotation(rot(q, pos.double()), pos, w, None, "query", inv_freq=inv),
                               rot(q, torch.full((20,), float(w), dtype=torch.float64)), rtol=0, atol=1e-12)
    torch.testing.assert_close(far_rotation(rot(k, pos.double()), pos, w, None, "key", inv_freq=inv), k.detach(),
                               rtol=0, atol=1e-12)


def test_rotated_decode_with_left_padding_equals_the_unpadded_row(path):
    from ropelaw.methods import rerope_decode_rotated

    q, k, v = qkv(1, 2, 20, 8, torch.float64)
    qn, kn, qf, kf = rotated_pairs(q, k, 5, 3.0)
    alone = rerope_decode_rotated(qn[:, :, -1:], qf[:, :, -1:], kn, kf, v, 5, scale=0.3)
    pad = lambda x: torch.cat((torch.randn(1, 2, 4, 8, dtype=x.dtype), x), dim=2)  # noqa: E731
    mask = torch.arange(24)[None] >= 4
    padded = rerope_decode_rotated(qn[:, :, -1:], qf[:, :, -1:], pad(kn), pad(kf), pad(v), 5, scale=0.3,
                                   key_mask=mask)
    torch.testing.assert_close(padded, alone, rtol=0, atol=1e-12)


@pytest.mark.parametrize("w,kk,s", [(5, None, 6), (5, 4.0, 9), (5.5, 3.0, 30), (3, None, 31), (13, 16.0, 17)])
@pytest.mark.parametrize("block", [128, 4])
def test_rotated_prefill_inside_a_sliding_window_equals_reference(monkeypatch, w, kk, s, block):
    # transformers' sliding mask: query i sees key j iff 0 <= i - j < s (s >= L: plain causal)
    import ropelaw.methods.rerope as rr
    from ropelaw.methods import rerope_attention_rotated

    monkeypatch.setattr(rr, "_SLIDING_BLOCK", block)
    q, k, v = qkv(2, 4, 30, 8, torch.float64, Hk=2)
    qn, kn, qf, kf = rotated_pairs(q, k, w, kk)
    rep = [x.repeat_interleave(2, dim=1) for x in (k, v)]
    got = rerope_attention_rotated(qn, kn, qf, kf, v, w, scale=8 ** -0.5, sliding_window=s)
    torch.testing.assert_close(got, reference(q, *rep, w, kk, sliding=s), rtol=0, atol=1e-12)
    # the last 10 queries against all 30 keys (a continued prefill)
    tail = rerope_attention_rotated(qn[:, :, 20:], kn, qf[:, :, 20:], kf, v, w, scale=8 ** -0.5, sliding_window=s)
    torch.testing.assert_close(tail, got[:, :, 20:], rtol=0, atol=1e-12)


@pytest.mark.parametrize("s", [5, 6, True, 7.0])
def test_a_sliding_window_not_above_ceil_w_is_refused(s):
    from ropelaw.methods import rerope_attention_rotated

    q, k, v = qkv(1, 2, 8, 8, torch.float64)
    with pytest.raises(ValueError, match=rf"^sliding_window must be an integer > ceil\(window\) = 6, got {s!r}$"):
        rerope_attention_rotated(q, k, q, k, v, 5.5, scale=1.0, sliding_window=s)
