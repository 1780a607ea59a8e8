"""RoPE application and the log-n factor, checked against independent derivations.

The reference rotation is complex multiplication (RoFormer, arXiv 2104.09864, eq. 12-13:
pair i as the complex number x_a + i x_b multiplied by e^{i m theta_i}), with the angle
formed in mpmath-free float64 numpy from theta_i = base^(-2i/d).
"""

from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from ropelaw.methods import apply_rope, logn_scale, rope_inv_freq  # noqa: E402
from ropelaw.methods.logn import scale_queries_logn  # noqa: E402

pytestmark = pytest.mark.torch


def complex_rotation(x: np.ndarray, positions: np.ndarray, base: float, rd: int, layout: str) -> np.ndarray:
    """x (S, d) float64 rotated pair by pair as complex numbers (RoFormer eq. 12-13)."""
    half = rd // 2
    theta = np.array([base ** (-2.0 * i / rd) for i in range(half)])  # (d_r/2,)
    if layout == "rotate_half":
        a, b = x[:, :half], x[:, half:rd]
    else:
        a, b = x[:, 0:rd:2], x[:, 1:rd:2]
    z = (a + 1j * b) * np.exp(1j * positions[:, None] * theta[None, :])
    out = x.copy()
    if layout == "rotate_half":
        out[:, :half], out[:, half:rd] = z.real, z.imag
    else:
        out[:, 0:rd:2], out[:, 1:rd:2] = z.real, z.imag
    return out


@pytest.mark.parametrize("layout", ["rotate_half", "interleaved"])
@pytest.mark.parametrize("rd", [8, 4])
def test_apply_rope_matches_complex_multiplication(layout, rd):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((11, 8))
    pos = np.array([0, 1, 2, 7, 100, 511, 4095, 65535, 100000, 3, 5], dtype=np.int64)
    want = complex_rotation(x, pos.astype(np.float64), 10000.0, rd, layout)
    got = apply_rope(torch.from_numpy(x), torch.from_numpy(pos), 10000.0, rotary_dim=rd, layout=layout)
    np.testing.assert_allclose(got.numpy(), want, rtol=0, atol=1e-9)
    # channels beyond rotary_dim pass through untouched
    np.testing.assert_array_equal(got.numpy()[:, rd:], x[:, rd:])


@pytest.mark.parametrize("layout", ["rotate_half", "interleaved"])
def test_scores_depend_only_on_relative_position(layout):
    # (R^m q)^T (R^n k) = q^T R^(n-m) k  (RoFormer eq. 16)
    g = torch.Generator().manual_seed(1)
    q, k = torch.randn(1, 16, dtype=torch.float64, generator=g), torch.randn(1, 16, dtype=torch.float64, generator=g)
    ref = (apply_rope(q, 0, layout=layout) * apply_rope(k, 9, layout=layout)).sum()
    for m in (1, 50, 1000):
        s = (apply_rope(q, m, layout=layout) * apply_rope(k, m + 9, layout=layout)).sum()
        assert abs(float(s - ref)) < 1e-9


def test_inv_freq_is_base_power():
    inv = rope_inv_freq(128, 500000.0, dtype=torch.float64)
    want = [500000.0 ** (-2 * i / 128) for i in range(64)]
    np.testing.assert_allclose(inv.numpy(), want, rtol=1e-15)
    assert rope_inv_freq(128).dtype == torch.float32


def test_bf16_input_uses_float32_angles():
    # At position 3000 a bf16 angle would be off by up to 8 (bf16 spacing at 2^11..2^12 is 16);
    # the float32 path rotates exactly like the float32 input, then rounds once.
    x = torch.randn(4, 3001, 64)
    pos = torch.arange(3001)
    got = apply_rope(x.bfloat16(), pos)
    want = apply_rope(x.bfloat16().float(), pos).bfloat16()
    assert torch.equal(got, want)


def test_autocast_does_not_lower_angle_precision():
    x = torch.randn(2, 2048, 32)
    pos = torch.arange(2048)
    plain = apply_rope(x, pos)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        inside = apply_rope(x, pos)
    assert inside.dtype == torch.float32
    assert torch.equal(plain, inside)


def test_low_precision_positions_and_bad_layout_rejected():
    x = torch.randn(3, 8)
    with pytest.raises(ValueError, match="bf16"):
        apply_rope(x, torch.arange(3).bfloat16())
    with pytest.raises(ValueError, match="layout"):
        apply_rope(x, torch.arange(3), layout="halves")
    with pytest.raises(ValueError, match="rotary_dim"):
        apply_rope(x, torch.arange(3), rotary_dim=5)
    with pytest.raises(ValueError, match="base"):
        apply_rope(x, torch.arange(3), base=1.0)


def test_logn_scale_values():
    # seed 000: q_n times max(1, log_{maxlen} n), n = pos + 1; T_train = 512 = 2^9
    f = logn_scale(torch.tensor([0, 1, 511, 512, 4095, 262143]), 512, dtype=torch.float64)
    want = [1.0, 1.0, 1.0, math.log(513) / math.log(512), 12 / 9, 18 / 9]
    np.testing.assert_allclose(f.numpy(), want, rtol=1e-14)
    q = torch.ones(1, 1, 3, 2)
    scaled = scale_queries_logn(q, torch.tensor([0, 511, 4095]), 512)
    np.testing.assert_allclose(scaled[0, 0, :, 0].numpy(), [1.0, 1.0, 4 / 3], rtol=1e-6)
    with pytest.raises(ValueError):
        logn_scale(torch.tensor([1]), 1)
    with pytest.raises(ValueError):
        logn_scale(torch.tensor([-1]), 512)


def test_package_import_does_not_import_torch():
    code = "import sys, ropelaw, ropelaw.schemes; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
