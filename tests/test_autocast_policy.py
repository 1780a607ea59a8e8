"""The autocast policy (ropelaw/audit/policy.py) and its CPU emulation of CUDA (ropelaw/audit/autocast.py)
against the installed torch 2.13.0, three ways:

1. the op lists as data: every macro of ``torch/include/ATen/autocast_mode.h`` (shipped in the wheel)
   parsed here and compared op by op with the policy's lists (a missing or extra op fails);
2. the dispatcher: the ops with an ``AutocastCUDA`` / ``AutocastCPU`` kernel in this torch are exactly
   the ops the policy lists for CUDA / CPU (so the CPU lists, which the wheel does not ship, are checked too);
3. running: every op of CUDA's lower-precision list (and the fp32 / promote ops rotary code meets) is
   called on fake CUDA tensors under the real ``AutocastCUDA`` kernels of this build (FakeTensorMode:
   dtypes without values) and on CPU tensors under :func:`cuda_autocast`; the output dtypes must agree,
   op by op. CPU autocast (real, on CPU tensors) lowers CPU's list and leaves einsum / addr / mv alone.

Then the pattern that motivated it: ``einsum("i,j->ij", t, inv_freq)`` (ESM, fairseq, xformers) keeps
513 of 1,024 and 641 of 2,048 positions distinct under CUDA bf16 autocast, counted by brute force with
ml_dtypes, while CPU autocast leaves it exact.
"""

from __future__ import annotations

import os
import re

import ml_dtypes
import numpy as np
import pytest

torch = pytest.importorskip("torch")

from ropelaw.audit import policy  # noqa: E402
from ropelaw.audit.autocast import cuda_autocast  # noqa: E402

pytestmark = pytest.mark.torch

HEADER = os.path.join(os.path.dirname(torch.__file__), "include", "ATen", "autocast_mode.h")


def _macro(name: str) -> list[str]:
    """Ops of one ``#define NAME(_)`` macro of autocast_mode.h, as ``op`` or ``op.overload``."""
    with open(HEADER, encoding="utf-8") as fh:
        text = fh.read()
    m = re.search(rf"#define {re.escape(name)}\(_\)(.*?)\n\n", text, re.S)
    assert m, f"{name} not found in {HEADER}"
    body = m.group(1)
    if name == "AT_FORALL_DIFFERENT_REDISPATCH_SIGNATURE":
        return re.findall(r'"(norm\.\w+)"', body)
    return [f"{a}.{b}" if b else a for a, b in re.findall(r"_\((\w+)(?:,\s*(\w+))?\)", body)]


@pytest.mark.parametrize("macro,listed", [
    ("AT_FORALL_LOWER_PRECISION_FP", policy.CUDA_LOWER_PRECISION_FP),
    ("AT_FORALL_FP32", policy.CUDA_FP32),
    ("AT_FORALL_FP32_SET_OPT_DTYPE", policy.CUDA_FP32_SET_OPT_DTYPE),
    ("AT_FORALL_DIFFERENT_REDISPATCH_SIGNATURE", policy.CUDA_FP32_APPEND_DTYPE),
    ("AT_FORALL_PROMOTE", policy.CUDA_PROMOTE),
])
def test_cuda_lists_are_the_headers_op_by_op(macro, listed):
    assert torch.__version__.startswith(policy.TORCH_VERSION)
    in_header = _macro(macro)
    assert len(in_header) >= 2
    missing = [op for op in in_header if op not in listed]
    extra = [op for op in listed if op not in in_header]
    assert not missing and not extra, f"{macro}: missing from policy {missing}, not in the header {extra}"
    assert list(listed) == in_header  # same order too: the list is a copy of the data


def _registered(key: str) -> set[str]:
    out = set()
    for qual in torch._C._dispatch_get_all_op_names():
        if qual.startswith("aten::") and torch._C._dispatch_has_kernel_for_dispatch_key(qual, key):
            out.add(qual[len("aten::"):])
    return out


def test_dispatcher_kernels_are_the_policys_ops():
    assert _registered("AutocastCUDA") == set(policy.autocast_policy("cuda"))
    assert _registered("AutocastCPU") == set(policy.autocast_policy("cpu"))


# --------------------------------------------------------------------------- running each op

def _samples(T):
    """``{op: thunk}`` calling each op with float32 inputs made by ``T(*shape)`` (ones on the device)."""
    F = torch.nn.functional
    return {
        "_convolution.deprecated": lambda: torch.ops.aten._convolution.deprecated(
            T(1, 2, 5), T(3, 2, 2), None, [1], [0], [1], False, [0], 1, False, False, True),
        "_convolution": lambda: torch.ops.aten._convolution(
            T(1, 2, 5), T(3, 2, 2), None, [1], [0], [1], False, [0], 1, False, False, True, True),
        "conv1d": lambda: F.conv1d(T(1, 2, 5), T(3, 2, 2)),
        "conv2d": lambda: F.conv2d(T(1, 2, 5, 5), T(3, 2, 2, 2)),
        "conv3d": lambda: F.conv3d(T(1, 2, 4, 4, 4), T(3, 2, 2, 2, 2)),
        "conv_tbc": lambda: torch.conv_tbc(T(5, 1, 2), T(2, 2, 3), T(3)),
        "conv_transpose1d": lambda: F.conv_transpose1d(T(1, 2, 5), T(2, 3, 2)),
        "conv_transpose2d.input": lambda: F.conv_transpose2d(T(1, 2, 4, 4), T(2, 3, 2, 2)),
        "conv_transpose3d.input": lambda: F.conv_transpose3d(T(1, 2, 3, 3, 3), T(2, 3, 2, 2, 2)),
        "convolution": lambda: torch.convolution(T(1, 2, 5), T(3, 2, 2), None, [1], [0], [1], False, [0], 1),
        "prelu": lambda: F.prelu(T(2, 3), T(1)),
        "addmm": lambda: torch.addmm(T(2, 4), T(2, 3), T(3, 4)),
        "addmv": lambda: torch.addmv(T(2), T(2, 3), T(3)),
        "addr": lambda: torch.addr(T(4, 3), T(4), T(3)),
        "matmul": lambda: T(2, 3) @ T(3, 4),
        "einsum": lambda: torch.einsum("i,j->ij", T(4), T(3)),
        "mm": lambda: torch.mm(T(2, 3), T(3, 4)),
        "mv": lambda: torch.mv(T(2, 3), T(3)),
        "linalg_vecdot": lambda: torch.linalg.vecdot(T(2, 3), T(2, 3)),
        "linear": lambda: F.linear(T(2, 3), T(4, 3)),
        "addbmm": lambda: torch.addbmm(T(2, 4), T(5, 2, 3), T(5, 3, 4)),
        "baddbmm": lambda: torch.baddbmm(T(5, 2, 4), T(5, 2, 3), T(5, 3, 4)),
        "bmm": lambda: torch.bmm(T(5, 2, 3), T(5, 3, 4)),
        "chain_matmul": lambda: torch.ops.aten.chain_matmul([T(2, 3), T(3, 4), T(4, 2)]),
        "linalg_multi_dot": lambda: torch.linalg.multi_dot([T(2, 3), T(3, 4), T(4, 2)]),
        "_thnn_fused_lstm_cell": lambda: torch.ops.aten._thnn_fused_lstm_cell(T(2, 8), T(2, 8), T(2, 2))[0],
        "_thnn_fused_gru_cell": lambda: torch.ops.aten._thnn_fused_gru_cell(T(2, 6), T(2, 6), T(2, 2))[0],
        "lstm_cell": lambda: torch.lstm_cell(T(2, 3), [T(2, 2), T(2, 2)], T(8, 3), T(8, 2))[0],
        "gru_cell": lambda: torch.gru_cell(T(2, 3), T(2, 2), T(6, 3), T(6, 2)),
        "rnn_tanh_cell": lambda: torch.rnn_tanh_cell(T(2, 3), T(2, 2), T(2, 3), T(2, 2)),
        "rnn_relu_cell": lambda: torch.rnn_relu_cell(T(2, 3), T(2, 2), T(2, 3), T(2, 2)),
        "_scaled_dot_product_flash_attention": lambda: torch.ops.aten._scaled_dot_product_flash_attention(
            T(1, 2, 4, 8), T(1, 2, 4, 8), T(1, 2, 4, 8))[0],
        "scaled_dot_product_attention": lambda: F.scaled_dot_product_attention(T(1, 2, 4, 8), T(1, 2, 4, 8),
                                                                                T(1, 2, 4, 8)),
        "cudnn_convolution": lambda: torch.ops.aten.cudnn_convolution(
            T(1, 2, 5, 5), T(3, 2, 2, 2), [0, 0], [1, 1], [1, 1], 1, False, False, True),
        "cudnn_convolution_transpose": lambda: torch.ops.aten.cudnn_convolution_transpose(
            T(1, 2, 4, 4), T(2, 3, 2, 2), [0, 0], [0, 0], [1, 1], [1, 1], 1, False, False, True),
        # fp32, fp32_set_opt_dtype, promote: those rotary and attention code meets
        "exp": lambda: torch.exp(T(3).bfloat16()),
        "log": lambda: torch.log(T(3).bfloat16()),
        "pow.Tensor_Scalar": lambda: T(3).bfloat16() ** 2.0,
        "pow.Tensor_Tensor": lambda: T(3).bfloat16() ** T(3).bfloat16(),
        "pow.Scalar": lambda: 10000.0 ** T(3).bfloat16(),
        "reciprocal": lambda: torch.reciprocal(T(3).bfloat16()),
        "rsqrt": lambda: torch.rsqrt(T(3).bfloat16()),
        "layer_norm": lambda: F.layer_norm(T(2, 4).bfloat16(), (4,)),
        "rms_norm": lambda: F.rms_norm(T(2, 4).bfloat16(), (4,)),
        "softmax.int": lambda: torch.softmax(T(2, 4).bfloat16(), -1),
        "log_softmax.int": lambda: torch.log_softmax(T(2, 4).bfloat16(), -1),
        "sum": lambda: torch.sum(T(3).bfloat16()),
        "cumsum": lambda: torch.cumsum(T(3).bfloat16(), 0),
        "prod": lambda: torch.prod(T(3).bfloat16()),
        "norm.Scalar": lambda: torch.ops.aten.norm.Scalar(T(3).bfloat16()),
        "addcmul": lambda: torch.addcmul(T(3), T(3).bfloat16(), T(3).bfloat16()),
        "atan2": lambda: torch.atan2(T(3).bfloat16(), T(3)),
        "dot": lambda: torch.dot(T(3).bfloat16(), T(3)),
        "tensordot": lambda: torch.tensordot(T(2, 3).bfloat16(), T(3, 2), 1),
        # not in CUDA's lists: autocast leaves them alone (a bf16 input stays bf16, float32 stays float32)
        "outer": lambda: torch.outer(T(4), T(3)),
        "mul": lambda: T(4, 1) * T(1, 3),
        "cos": lambda: torch.cos(T(3).bfloat16()),
        "cat": lambda: torch.cat([T(3).bfloat16(), T(3)]),
        "stack": lambda: torch.stack([T(3).bfloat16(), T(3)]),
    }


def _fake_cuda_dtypes(names) -> dict[str, object]:
    """Output dtype of each op under the real AutocastCUDA kernels, on fake CUDA tensors (no values)."""
    from torch._subclasses.fake_tensor import FakeTensorMode

    out = {}
    with FakeTensorMode(allow_non_fake_inputs=True):
        samples = _samples(lambda *shape: torch.ones(shape, device="cuda"))
        torch.set_autocast_enabled("cuda", True)
        torch.set_autocast_dtype("cuda", torch.bfloat16)
        try:
            for name in names:
                try:
                    out[name] = samples[name]().dtype
                except Exception as exc:  # no meta kernel for this op: said, not hidden
                    out[name] = f"raised {type(exc).__name__}"
        finally:
            torch.set_autocast_enabled("cuda", False)
            torch.clear_autocast_cache()
    return out


def _emulated(names):
    """Output dtype of each op on CPU under cuda_autocast, and the ops whose inputs it converted."""
    samples = _samples(lambda *shape: torch.ones(shape))
    out = {}
    with cuda_autocast(torch.bfloat16) as record:
        for name in names:
            try:
                out[name] = samples[name]().dtype
            except Exception as exc:  # e.g. a CUDA-only kernel: the conversion is in the record
                out[name] = f"raised {type(exc).__name__}"
    return out, record


@pytest.fixture(scope="module")
def runs():
    names = list(_samples(lambda *s: None))
    return _fake_cuda_dtypes(names), *_emulated(names)


def test_every_lower_precision_op_has_a_sample():
    names = set(_samples(lambda *s: None))
    missing = [op for op in policy.CUDA_LOWER_PRECISION_FP + policy.CUDA_LOWER_PRECISION_FP_EXTRA if op not in names]
    assert not missing


@pytest.mark.parametrize("op", policy.CUDA_LOWER_PRECISION_FP + policy.CUDA_LOWER_PRECISION_FP_EXTRA)
def test_emulation_lowers_every_op_cuda_lowers(runs, op):
    cuda, emulated, record = runs
    assert record.converted.get(op, [None])[0] == "lower_precision_fp", f"{op} inputs not converted"
    if isinstance(emulated[op], str) and isinstance(cuda[op], str):
        return  # CUDA-only kernels (flash attention, cudnn): neither side runs; the conversion is checked above
    if isinstance(cuda[op], str):  # no meta kernel: the emulation's own output is bf16
        assert emulated[op] == torch.bfloat16, (op, emulated[op])
        return
    assert cuda[op] == torch.bfloat16
    if not isinstance(emulated[op], str):
        assert emulated[op] == cuda[op], (op, emulated[op], cuda[op])


@pytest.mark.parametrize("op", ["exp", "log", "pow.Tensor_Scalar", "pow.Tensor_Tensor", "pow.Scalar", "reciprocal",
                                "rsqrt", "layer_norm", "rms_norm", "softmax.int", "log_softmax.int", "sum", "cumsum",
                                "prod", "norm.Scalar", "addcmul", "atan2", "dot", "tensordot",
                                "outer", "mul", "cos", "cat", "stack"])
def test_emulation_matches_cuda_on_other_policies(runs, op):
    cuda, emulated, _ = runs
    assert not isinstance(cuda[op], str), f"fake CUDA run of {op}: {cuda[op]}"
    assert emulated[op] == cuda[op], (op, emulated[op], cuda[op])


def test_cpu_autocast_lowers_its_list_and_not_einsum_addr_mv():
    samples = _samples(lambda *shape: torch.ones(shape))
    with torch.autocast("cpu", dtype=torch.bfloat16):
        got = {op: samples[op]().dtype for op in ("matmul", "mm", "bmm", "baddbmm", "addmm", "linear",
                                                   "einsum", "addr", "mv", "addmv", "linalg_multi_dot", "outer")}
    for op, dt in got.items():
        assert (dt == torch.bfloat16) == policy.product_lowered(op, "cpu", einsum_contracts=False), (op, dt)
        assert (dt == torch.bfloat16) == (policy.lowered_by_autocast(op, "cpu")
                                          or op in policy.CPU_LOWERED_THROUGH_PARTS), (op, dt)
    assert got["einsum"] == got["addr"] == got["mv"] == torch.float32
    assert policy.product_lowered("einsum", "cpu", einsum_contracts=True)
    with torch.autocast("cpu", dtype=torch.bfloat16):  # a contracting einsum reaches bmm, which CPU lowers
        assert torch.einsum("ij,jk->ik", torch.ones(2, 3), torch.ones(3, 4)).dtype == torch.bfloat16


def test_region_is_removed_on_exit():
    a, b = torch.arange(4.0), torch.ones(3)
    with cuda_autocast(torch.bfloat16):
        assert torch.einsum("i,j->ij", a, b).dtype == torch.bfloat16
    with torch.autocast("cpu", dtype=torch.bfloat16):
        assert torch.einsum("i,j->ij", a, b).dtype == torch.float32
    assert torch.einsum("i,j->ij", a, b).dtype == torch.float32


def test_code_that_turns_autocast_off_turns_the_emulation_off():
    a, b = torch.arange(4.0), torch.ones(3)
    with cuda_autocast(torch.bfloat16):
        with torch.autocast("cuda", enabled=False):  # rotary-embedding-torch's decorator
            assert torch.einsum("i,j->ij", a, b).dtype == torch.float32
            assert (a[:, None] @ b[None]).dtype == torch.float32
        with torch.autocast(device_type=a.device.type, enabled=False):  # transformers' Llama
            assert (a[:, None] @ b[None]).dtype == torch.float32
        assert (a[:, None] @ b[None]).dtype == torch.bfloat16
    assert not torch.is_autocast_enabled("cuda")


# --------------------------------------------------------------------------- the ESM / fairseq / xformers pattern

class EsmStyleRotary(torch.nn.Module):
    """Written here, imitating fair-esm==2.0.0 esm/rotary_embedding.py (and fairseq's
    rotary_positional_embedding.py): float32 inv_freq buffer, positions ``arange(n).type_as(inv_freq)``,
    angles ``einsum("i,j->ij", t, inv_freq)``, cos/sin of ``cat(freqs, freqs)``."""

    def __init__(self, dim: int = 64):
        super().__init__()
        inv_freq = 1.0 / (10000 ** (torch.arange(0, dim, 2).float() / dim))
        self.register_buffer("inv_freq", inv_freq)

    def forward(self, x, seq_len: int):
        t = torch.arange(seq_len, device=x.device).type_as(self.inv_freq)
        freqs = torch.einsum("i,j->ij", t, self.inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        return emb.cos()[None, None], emb.sin()[None, None]


def _brute_distinct_bf16(length: int, dim: int = 64) -> int:
    """Distinct angle rows bf16(bf16(t) * bf16(inv_freq)) over t < length (ml_dtypes, exact rounding)."""
    bf = ml_dtypes.bfloat16
    inv = (1.0 / (10000 ** (torch.arange(0, dim, 2).float() / dim))).numpy()
    t = np.arange(length, dtype=np.float32).astype(bf)
    rows = (t.astype(np.float32)[:, None] * inv.astype(bf).astype(np.float32)[None, :]).astype(bf)
    return int(np.unique(rows.view(np.uint16), axis=0).shape[0])


@pytest.mark.parametrize("length,expected", [(1024, 513), (2048, 641)])
def test_einsum_outer_product_under_cuda_autocast(length, expected):
    from ropelaw.audit.runtime import audit_module

    assert _brute_distinct_bf16(length) == expected
    a = audit_module(lambda: EsmStyleRotary(64), "bf16", length, ["autocast-cuda", "autocast-cpu"], name="esm")
    cuda, cpu = a.scenario("autocast-cuda"), a.scenario("autocast-cpu")
    assert cuda.distinct == expected
    assert cuda.path in ("positions rounded", "product rounded")
    assert cpu.path == "clean" and cpu.distinct == length
    assert {f.code for f in a.findings} & {"RP301", "RP302"}
    assert all("[autocast-cuda" in f.message for f in a.findings if f.code in ("RP301", "RP302"))
    assert any("einsum (CUDA runs it in bf16; CPU autocast leaves it alone)" in n for n in a.notes)
