"""KeyNorm attention (seed 003, kexue.fm/archives/9859) against its defining formulas.

o_i = sum_j exp(s_ij) v_j / sum_j exp(s_ij), j <= i, with
KNA s = q_i . k_j/||k_j||, QNA s = q_i/||q_i|| . k_j, CosA s = lambda cos(q_i, k_j),
lambda = 4 log n, n = T_train/2 or i + 1. The reference loops over rows in float64 numpy.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from ropelaw.methods import cosa_lambda, keynorm_attention  # noqa: E402

pytestmark = pytest.mark.torch


def reference(q, k, v, variant, lam=None, logn_train=None, causal=True):
    """Row-by-row softmax from seed 003's equations, float64 numpy. q, k, v (L, d)."""
    q, k, v = (np.asarray(x, dtype=np.float64) for x in (q, k, v))
    L = q.shape[0]
    out = np.zeros_like(v)
    for i in range(L):
        js = range(i + 1) if causal else range(L)
        s = []
        for j in js:
            if variant == "kna":
                x = q[i] @ k[j] / np.linalg.norm(k[j])
            elif variant == "qna":
                x = q[i] @ k[j] / np.linalg.norm(q[i])
            else:
                x = lam(i) * (q[i] @ k[j]) / (np.linalg.norm(q[i]) * np.linalg.norm(k[j]))
            if logn_train is not None:
                x *= max(1.0, math.log(i + 1) / math.log(logn_train))
            s.append(x)
        s = np.array(s)
        p = np.exp(s - s.max())
        p /= p.sum()
        out[i] = p @ v[list(js)]
    return out


def data(L=20, d=8, seed=0):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(1, 1, L, d, dtype=torch.float64, generator=g) * 3 for _ in range(3)]


@pytest.mark.parametrize("variant", ["kna", "qna"])
@pytest.mark.parametrize("logn", [False, True])
@pytest.mark.parametrize("causal", [True, False])
def test_kna_qna_match_reference(variant, logn, causal):
    q, k, v = data()
    got = keynorm_attention(q, k, v, variant, train_len=6 if logn else None, logn=logn, causal=causal)
    want = reference(q[0, 0], k[0, 0], v[0, 0], variant, logn_train=6 if logn else None, causal=causal)
    np.testing.assert_allclose(got[0, 0].numpy(), want, rtol=0, atol=1e-12)


@pytest.mark.parametrize("dynamic,logn,train_len", [
    (False, False, 512),  # lambda = 4 log 256 for every row
    (True, False, None),  # lambda_i = 4 log(i + 1)
    (False, True, 8),  # lambda = 4 log 4, rows beyond 8 also times log(i+1)/log 8
    (True, True, 8),
])
def test_cosa_matches_reference(dynamic, logn, train_len):
    q, k, v = data()
    lam = (lambda i: 4 * math.log(i + 1)) if dynamic else (lambda i: 4 * math.log(train_len / 2))
    got = keynorm_attention(q, k, v, "cosa", train_len=train_len, dynamic=dynamic, logn=logn)
    want = reference(q[0, 0], k[0, 0], v[0, 0], "cosa", lam=lam, logn_train=train_len if logn else None)
    np.testing.assert_allclose(got[0, 0].numpy(), want, rtol=0, atol=1e-12)


def test_cosa_lambda_values():
    # seed 003: lambda = 4 log n with n = half the training length; T_train = 512 -> 4 log 256 = 32 log 2
    assert cosa_lambda(256) == pytest.approx(32 * math.log(2), rel=1e-15)
    assert cosa_lambda(1) == 0.0
    with pytest.raises(ValueError):
        cosa_lambda(0.5)


def test_cosa_sharpness_is_lambda():
    # two keys at cosines 1 and 0 with the query: the probability ratio is exactly e^lambda
    q = torch.tensor([[[[1.0, 0.0], [1.0, 0.0]]]], dtype=torch.float64)
    k = torch.tensor([[[[0.0, 5.0], [2.0, 0.0]]]], dtype=torch.float64)  # cos 0 then cos 1
    v = torch.eye(2, dtype=torch.float64)[None, None]
    p = keynorm_attention(q, k, v, "cosa", train_len=512)[0, 0, 1]  # row 1 sees both keys
    assert math.log(p[1] / p[0]) == pytest.approx(cosa_lambda(256), rel=1e-12)


def test_norm_invariances():
    # KNA ignores key lengths, QNA query lengths, CosA both (seed 003: "exclude ||k_j||")
    q, k, v = data()
    ks = k * torch.rand(1, 1, 20, 1, dtype=torch.float64) * 10
    qs = q * torch.rand(1, 1, 20, 1, dtype=torch.float64) * 10
    torch.testing.assert_close(keynorm_attention(q, ks, v, "kna"), keynorm_attention(q, k, v, "kna"))
    torch.testing.assert_close(keynorm_attention(qs, k, v, "qna"), keynorm_attention(q, k, v, "qna"))
    torch.testing.assert_close(keynorm_attention(qs, ks, v, "cosa", dynamic=True),
                               keynorm_attention(q, k, v, "cosa", dynamic=True))


@pytest.mark.parametrize("variant", ["kna", "qna", "cosa"])
def test_gradients_match_reference_autograd(variant):
    q, k, v = (x.float().requires_grad_() for x in data(L=12))
    out = keynorm_attention(q, k, v, variant, train_len=8, logn=True)
    # torch reference of the same formulas (autograd through explicit matrices)
    qq, kk = q, k
    if variant in ("qna", "cosa"):
        qq = q / q.norm(dim=-1, keepdim=True)
    if variant in ("kna", "cosa"):
        kk = k / k.norm(dim=-1, keepdim=True)
    s = qq @ kk.transpose(-1, -2)
    if variant == "cosa":
        s = s * 4 * math.log(4)
    pos = torch.arange(12, dtype=torch.float32)
    s = s * torch.clamp(torch.log(pos + 1) / math.log(8), min=1)[:, None]
    s = s.masked_fill(torch.ones(12, 12, dtype=torch.bool).triu(1), -math.inf)
    ref = torch.softmax(s, -1) @ v
    torch.testing.assert_close(out, ref, rtol=1e-5, atol=1e-5)
    g = torch.randn_like(out)
    for a, b in zip(torch.autograd.grad(out, (q, k, v), g), torch.autograd.grad(ref, (q, k, v), g), strict=True):
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-5)


def test_cache_continuation_equals_last_rows():
    q, k, v = data()
    full = keynorm_attention(q, k, v, "cosa", dynamic=True, train_len=8, logn=True)
    tail = keynorm_attention(q[:, :, -3:], k, v, "cosa", dynamic=True, train_len=8, logn=True)
    torch.testing.assert_close(tail, full[:, :, -3:], rtol=0, atol=1e-12)


def test_bad_arguments():
    q, k, v = data()
    with pytest.raises(ValueError, match="variant"):
        keynorm_attention(q, k, v, "cos")
    with pytest.raises(ValueError, match="train_len"):
        keynorm_attention(q, k, v, "cosa")
    with pytest.raises(ValueError, match="train_len"):
        keynorm_attention(q, k, v, "kna", logn=True)
    with pytest.raises(ValueError, match="dynamic"):
        keynorm_attention(q, k, v, "kna", dynamic=True)
