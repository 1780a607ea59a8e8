"""The precision policy of a training run: which ops autocast runs in low precision, and the
default dtype under each trainer precision.

One module, read by the runtime scenarios (:mod:`ropelaw.audit.scenarios`,
:mod:`ropelaw.audit.autocast`) and by the static checker (:mod:`ropelaw.audit.static`), so that
what `audit module` runs and what `audit code` flags follow the same lists. Pure data: no torch.

Autocast op lists (ATen names, ``op`` or ``op.overload``)
- CUDA: the macros of torch 2.13.0 ``aten/src/ATen/autocast_mode.h`` (shipped in the wheel as
  ``torch/include/ATen/autocast_mode.h``): ``AT_FORALL_LOWER_PRECISION_FP`` (lines 820-853),
  ``AT_FORALL_FP32`` (855-914), ``AT_FORALL_FP32_SET_OPT_DTYPE`` (916-927),
  ``AT_FORALL_DIFFERENT_REDISPATCH_SIGNATURE`` (929-944, ``norm``: fp32_append_dtype) and
  ``AT_FORALL_PROMOTE`` (946-957), which ``autocast_mode.cpp`` registers for the ``Autocast``
  (CUDA) key together with ``cudnn_convolution`` / ``cudnn_convolution_transpose``
  (lower_precision_fp) and ``binary_cross_entropy`` (banned) (pytorch/pytorch@008ec6b1
  ``aten/src/ATen/autocast_mode.cpp``, ``TORCH_LIBRARY_IMPL(aten, Autocast, m)``).
- CPU: ``TORCH_LIBRARY_IMPL(aten, AutocastCPU, m)`` of the same file (its own lists, not the macros).
tests/test_autocast_policy.py checks these lists against the installed torch: the header text
op by op, the dispatcher's registered kernels (``AutocastCUDA`` / ``AutocastCPU``) and, by running
each lower-precision op, the output dtypes.

Where the two differ for rotary code: CUDA lowers ``einsum``, ``addr``, ``mv``, ``addmv``,
``chain_matmul`` and ``linalg_multi_dot``; CPU does not (a contracting ``einsum`` still reaches
``bmm`` on CPU, which CPU lowers; an outer-product ``einsum("i,j->ij")`` is a ``mul`` there).
So ``einsum("i,j->ij", t, inv_freq)`` (ESM, fairseq, xformers) runs in float32 under
``torch.autocast("cpu")`` and in bf16 under ``torch.autocast("cuda")``: positions rounded, 513 of
1,024 distinct. Neither list holds ``mul``, ``outer``, ``cos``, ``sin`` or ``cat`` (CPU promotes
``cat`` / ``stack`` to the widest input type).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import UsageError

TORCH_VERSION = "2.13.0"
HEADER = "torch 2.13.0 aten/src/ATen/autocast_mode.h"
SOURCE = "pytorch/pytorch@008ec6b1 aten/src/ATen/autocast_mode.cpp"

# --------------------------------------------------------------------------- CUDA (autocast_mode.h)

CUDA_LOWER_PRECISION_FP = (  # AT_FORALL_LOWER_PRECISION_FP, in the header's order
    "_convolution.deprecated", "_convolution", "conv1d", "conv2d", "conv3d", "conv_tbc", "conv_transpose1d",
    "conv_transpose2d.input", "conv_transpose3d.input", "convolution", "prelu", "addmm", "addmv", "addr",
    "matmul", "einsum", "mm", "mv", "linalg_vecdot", "linear", "addbmm", "baddbmm", "bmm", "chain_matmul",
    "linalg_multi_dot", "_thnn_fused_lstm_cell", "_thnn_fused_gru_cell", "lstm_cell", "gru_cell",
    "rnn_tanh_cell", "rnn_relu_cell", "_scaled_dot_product_flash_attention", "scaled_dot_product_attention",
)
CUDA_LOWER_PRECISION_FP_EXTRA = ("cudnn_convolution",
                                 "cudnn_convolution_transpose")  # autocast_mode.cpp, after the macro
CUDA_FP32 = (  # AT_FORALL_FP32
    "acos", "asin", "cosh", "erfinv", "exp", "expm1", "log", "log10", "log2", "log1p", "reciprocal", "rsqrt",
    "sinh", "tan", "pow.Tensor_Scalar", "pow.Tensor_Tensor", "pow.Scalar", "softplus", "layer_norm",
    "native_layer_norm", "rms_norm", "group_norm", "frobenius_norm.dim", "nuclear_norm", "nuclear_norm.dim",
    "cosine_similarity", "poisson_nll_loss", "cosine_embedding_loss", "nll_loss", "nll_loss2d",
    "hinge_embedding_loss", "kl_div", "l1_loss", "smooth_l1_loss", "huber_loss", "mse_loss",
    "margin_ranking_loss", "multilabel_margin_loss", "soft_margin_loss", "triplet_margin_loss",
    "multi_margin_loss", "binary_cross_entropy_with_logits", "dist", "pdist", "cdist", "renorm", "logsumexp",
    "upsample_nearest1d", "_upsample_nearest_exact1d", "upsample_nearest2d", "_upsample_nearest_exact2d",
    "upsample_nearest3d", "_upsample_nearest_exact3d", "upsample_linear1d", "upsample_bilinear2d",
    "_upsample_bilinear2d_aa", "upsample_trilinear3d", "upsample_bicubic2d", "_upsample_bicubic2d_aa",
)
CUDA_FP32_SET_OPT_DTYPE = (  # AT_FORALL_FP32_SET_OPT_DTYPE
    "prod", "prod.dim_int", "softmax.int", "log_softmax.int", "cumprod", "cumsum", "linalg_vector_norm",
    "linalg_matrix_norm", "linalg_matrix_norm.str_ord", "sum", "sum.dim_IntList",
)
CUDA_FP32_APPEND_DTYPE = ("norm.Scalar", "norm.ScalarOpt_dim")  # AT_FORALL_DIFFERENT_REDISPATCH_SIGNATURE
CUDA_PROMOTE = (  # AT_FORALL_PROMOTE
    "addcdiv", "addcmul", "atan2", "bilinear", "cross", "dot", "vdot", "grid_sampler", "index_put", "tensordot",
    "scatter_add",
)
CUDA_BANNED = ("binary_cross_entropy",)  # raises: "unsafe to autocast"

# --------------------------------------------------------------------------- CPU (autocast_mode.cpp)

CPU_LOWER_PRECISION_FP = (
    "conv1d", "conv1d.padding", "conv2d", "conv2d.padding", "conv3d", "conv3d.padding", "bmm", "mm",
    "linalg_vecdot", "baddbmm", "addmm", "_addmm_activation", "addbmm", "linear", "_convolution.deprecated",
    "matmul", "conv_tbc", "mkldnn_rnn_layer", "conv_transpose1d", "conv_transpose2d.input",
    "conv_transpose3d.input", "prelu", "scaled_dot_product_attention", "_native_multi_head_attention",
)
CPU_FP32 = (
    "avg_pool3d", "binary_cross_entropy", "grid_sampler", "polar", "prod", "prod.dim_int",
    "quantile", "quantile.scalar", "nanquantile", "nanquantile.scalar", "stft", "stft.center", "cdist",
    "grid_sampler_2d", "_grid_sampler_2d_cpu_fallback", "grid_sampler_3d", "trace", "view_as_complex",
    "cholesky", "cholesky_inverse", "cholesky_solve", "inverse", "lu_solve", "orgqr", "ormqr", "pinverse",
    "max_pool3d", "max_unpool2d", "max_unpool3d", "adaptive_avg_pool3d", "reflection_pad1d", "reflection_pad2d",
    "replication_pad1d", "replication_pad2d", "replication_pad3d", "mse_loss", "cosine_embedding_loss",
    "nll_loss", "nll_loss2d", "hinge_embedding_loss", "poisson_nll_loss", "smooth_l1_loss", "cross_entropy_loss",
    "l1_loss", "huber_loss", "margin_ranking_loss", "soft_margin_loss", "triplet_margin_loss",
    "multi_margin_loss", "ctc_loss.IntList", "ctc_loss.Tensor", "kl_div", "multilabel_margin_loss",
    "binary_cross_entropy_with_logits", "fft_fft", "fft_ifft", "fft_fft2", "fft_ifft2", "fft_fftn", "fft_ifftn",
    "fft_rfft", "fft_irfft", "fft_rfft2", "fft_irfft2", "fft_rfftn", "fft_irfftn", "fft_hfft", "fft_ihfft",
    "linalg_cond", "linalg_cond.p_str", "linalg_matrix_rank", "linalg_matrix_rank.tol_tensor",
    "linalg_matrix_rank.atol_rtol_tensor", "linalg_matrix_rank.atol_rtol_float", "linalg_solve",
    "linalg_cholesky", "linalg_svdvals", "linalg_eigvals", "linalg_eigvalsh", "linalg_inv",
    "linalg_householder_product", "linalg_tensorinv", "linalg_tensorsolve", "fake_quantize_per_tensor_affine",
    "geqrf", "_lu_with_info", "qr", "svd", "triangular_solve", "fractional_max_pool2d", "fractional_max_pool3d",
    "adaptive_max_pool3d", "multilabel_margin_loss_forward", "linalg_qr", "linalg_cholesky_ex", "linalg_svd",
    "linalg_eig", "linalg_eigh", "linalg_lstsq", "linalg_inv_ex",
)
CPU_PROMOTE = ("stack", "cat", "index_copy")
# (the source also lists prod.dim_Dimname and index_copy.dimname: named-tensor overloads the 2.13.0 build
# registers no autocast kernel for, so they are left out here, as the dispatcher has them)

POLICIES = ("lower_precision_fp", "fp32", "fp32_set_opt_dtype", "fp32_append_dtype", "promote", "banned")


def autocast_policy(device: str) -> dict[str, str]:
    """``{aten op (name or name.overload): policy}`` of ``torch.autocast(device)`` for "cuda" or "cpu".

    Ops not listed fall through (autocast leaves their inputs alone; a composite op's parts are
    then autocast one by one: ``outer`` becomes a ``mul``, a contracting ``einsum`` on CPU a ``bmm``).
    """
    groups: tuple[tuple[tuple[str, ...], str], ...]  # (ops, the policy they get)
    if device == "cuda":
        groups = ((CUDA_LOWER_PRECISION_FP + CUDA_LOWER_PRECISION_FP_EXTRA, "lower_precision_fp"),
                  (CUDA_FP32, "fp32"), (CUDA_FP32_SET_OPT_DTYPE, "fp32_set_opt_dtype"),
                  (CUDA_FP32_APPEND_DTYPE, "fp32_append_dtype"), (CUDA_PROMOTE, "promote"), (CUDA_BANNED, "banned"))
    elif device == "cpu":
        groups = ((CPU_LOWER_PRECISION_FP, "lower_precision_fp"), (CPU_FP32, "fp32"), (CPU_PROMOTE, "promote"))
    else:
        raise UsageError(f"autocast policy for 'cuda' or 'cpu', not {device!r}")
    return {op: policy for ops, policy in groups for op in ops}


def lowered_by_autocast(op: str, device: str = "cuda") -> bool:
    """True when ``torch.autocast(device)`` runs the ATen op ``op`` (name, any overload) in the autocast dtype."""
    lower = CUDA_LOWER_PRECISION_FP + CUDA_LOWER_PRECISION_FP_EXTRA if device == "cuda" else CPU_LOWER_PRECISION_FP
    return any(o == op or o.split(".")[0] == op for o in lower)


# Python spellings of the products rotary code writes, and the ATen op each dispatches to first
# (what autocast sees: `@` is aten::matmul, torch.outer is aten::outer, a composite of mul).
PYTHON_PRODUCTS = {
    "@": "matmul", "matmul": "matmul", "mm": "mm", "bmm": "bmm", "einsum": "einsum", "addr": "addr",
    "baddbmm": "baddbmm", "addmm": "addmm", "addbmm": "addbmm", "mv": "mv", "addmv": "addmv",
    "chain_matmul": "chain_matmul", "multi_dot": "linalg_multi_dot", "vecdot": "linalg_vecdot", "linear": "linear",
    "outer": "outer", "ger": "outer", "mul": "mul", "multiply": "mul", "*": "mul", "tensordot": "tensordot",
    "dot": "dot", "inner": "inner", "kron": "kron",
}


# Composite ops CPU autocast does not list but whose parts it lowers (run-checked in
# tests/test_autocast_policy.py): linalg_multi_dot and chain_matmul are chains of mm.
CPU_LOWERED_THROUGH_PARTS = ("linalg_multi_dot", "chain_matmul")


def product_lowered(spelling: str, device: str = "cuda", einsum_contracts: bool = True) -> bool:
    """Does ``torch.autocast(device)`` run this product (a :data:`PYTHON_PRODUCTS` spelling) in low precision?

    CUDA: by the op it dispatches to (any ``einsum``, ``addr``, ``baddbmm``, ``@``...). CPU: ``einsum``
    is not on CPU's list; it decomposes into ``bmm`` (lowered) when it contracts an index and into
    ``mul`` (not lowered) when it does not; ``multi_dot`` / ``chain_matmul`` into ``mm`` (lowered).
    """
    op = PYTHON_PRODUCTS.get(spelling, spelling)
    if device == "cpu" and op == "einsum":
        return einsum_contracts
    if device == "cpu" and op in CPU_LOWERED_THROUGH_PARTS:
        return True
    return lowered_by_autocast(op, device)


# --------------------------------------------------------------------------- trainer precisions


@dataclass(frozen=True)
class TrainerPrecision:
    """What a trainer's precision setting does to a model: the default dtype while the model is built
    and run, a cast of its parameters and buffers, an autocast region around forward."""

    name: str  # the setting as users write it
    default_dtype: str | None  # torch.set_default_dtype at build and forward (None: float32)
    cast: str | None  # module.to(dtype) of every float parameter and buffer
    autocast: str | None  # torch.autocast(device, dtype) around forward
    source: str


TRAINER_PRECISIONS = (
    TrainerPrecision("bf16-true", "bf16", "bf16", None,
                     "lightning_fabric==2.6.6 plugins/precision/half.py:37-55 (HalfPrecision: convert_module "
                     "module.to(bfloat16); module_init_context and forward_context torch.set_default_dtype)"),
    TrainerPrecision("16-true", "fp16", "fp16", None, "lightning_fabric==2.6.6 plugins/precision/half.py:37-55"),
    TrainerPrecision("bf16-mixed", None, None, "bf16",
                     "lightning_fabric==2.6.6 plugins/precision/amp.py:60-64 (MixedPrecision.forward_context: "
                     "torch.autocast(device, dtype=bfloat16); on a GPU the CUDA list above)"),
    TrainerPrecision("16-mixed", None, None, "fp16", "lightning_fabric==2.6.6 plugins/precision/amp.py:60-64"),
)


def default_dtype_precisions(dtype: str) -> list[str]:
    """Trainer precisions that build and run the model with ``torch.set_default_dtype(dtype)``
    (``bf16`` -> Lightning/Fabric ``bf16-true``)."""
    return [p.name for p in TRAINER_PRECISIONS if p.default_dtype == dtype]


def default_dtype_mechanism(dtype: str = "bf16") -> str:
    """How the default dtype becomes ``dtype`` in practice, for messages."""
    names = default_dtype_precisions(dtype)
    torch_name = {"bf16": "torch.bfloat16", "fp16": "torch.float16"}.get(dtype, dtype)
    trainers = " / ".join(f"precision='{n}'" for n in names)
    return (f"Lightning/Fabric {trainers} (torch.set_default_dtype({torch_name}) while the model is built and run)"
            if names else f"torch.set_default_dtype({torch_name})")


# --------------------------------------------------------------------------- runtime scenarios

SCENARIO_DESCRIPTIONS = {
    "cast": "built in float32, then module.to(dtype) (model.bfloat16(), DeepSpeed bf16, FSDP param_dtype, "
            "the convert_module of Lightning 'bf16-true')",
    "default": "built and run under torch.set_default_dtype(dtype) (Lightning/Fabric 'bf16-true' / '16-true')",
    "autocast-cuda": f"called inside an autocast region with CUDA's op lists ({HEADER}) emulated on CPU tensors "
                     "(Lightning 'bf16-mixed' / '16-mixed' and torch.autocast('cuda') on a GPU)",
    "autocast-cpu": "called inside torch.autocast('cpu', dtype) (CPU's own op lists)",
}

SCENARIO_SHORT = {  # one line under the table of `audit module` / `audit hf`
    "cast": ".to(dtype) after a float32 build",
    "default": "set_default_dtype(dtype), as Lightning 'bf16-true'",
    "autocast-cuda": "CUDA autocast lists emulated on CPU ('bf16-mixed' on a GPU)",
    "autocast-cpu": "torch.autocast('cpu')",
}
