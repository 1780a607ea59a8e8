"""What names and calls say to the static checker: the words that mark positions, frequencies, rotary
code and feature dimensions, and the dtype spellings it tells apart (low precision, clean, integer,
complex). Pure data; :mod:`ropelaw.audit.policy` holds what autocast and trainers do with dtypes, and the
spellings of the products (``policy.PYTHON_PRODUCTS``) the sets below are drawn from."""

from __future__ import annotations

import re

from ..policy import PYTHON_PRODUCTS


def _product_calls(*ops: str) -> frozenset[str]:
    """The function spellings of ``policy.PYTHON_PRODUCTS`` that dispatch to one of ``ops``."""
    return frozenset(s for s, op in PYTHON_PRODUCTS.items() if op in ops and s.isidentifier())


# names that hold integer positions
POS_NAME = re.compile(r"^(position_ids?|pos_ids?|positions?|pos|cache_positions?|seq_idx|seq_ids|"
                      r"position_ids_expanded|position_ids_expanded_float|positions_ids|token_positions?|"
                      r"context_position|memory_position|relative_position|distances?)$")
# names that hold rotary frequencies (inv_freq, theta) -- not "freqs", which HF uses for angles
FREQ_NAME = re.compile(r"(inv_freq|^theta$|^freq$|^frequencies$|^inv_freqs$|_inv_freq)")
SLOPES_NAME = re.compile(r"slopes?$")
CACHE_METHOD = re.compile(r"cache", re.I)
ROTARY_NAME = re.compile(r"rotary|rope|alibi|rotate|rotemb|xpos", re.I)
# an arange over a feature dimension holds frequency exponents, not positions
DIM_WORDS = re.compile(r"dim|feat|head|d_model|hidden|channel|embed|^d$", re.I)
# tensors whose dtype is an integer dtype: arange(..., dtype=lengths.dtype) stays exact
INT_TENSOR = re.compile(r"(^|_)(len|lens|length|lengths|ind|inds|idx|index|indices|ids|id|mask|count|counts"
                        r"|duration)s?$")
LOW_DTYPES = {"float16", "half", "bfloat16", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz",
              "float8_e5m2fnuz"}
CLEAN_DTYPES = {"float32", "float", "float64", "double", "int64", "long", "int32", "int", "int16",
                "int8", "uint8", "complex64", "complex128", "cfloat", "cdouble", "bool"}
PRESERVING = {"expand", "expand_as", "reshape", "view", "unsqueeze", "squeeze", "transpose", "permute",
              "repeat", "contiguous", "clone", "detach", "flatten", "to_dense", "requires_grad_",
              "cuda", "cpu", "narrow", "roll", "flip", "repeat_interleave", "masked_fill", "clamp",
              "clamp_min", "clamp_max", "abs", "neg", "t", "mT"}
TRIG = {"cos", "sin", "exp", "polar", "cos_", "sin_", "tan", "sigmoid", "softmax"}
MATMUL_FUNCS = _product_calls("matmul", "mm", "bmm", "mv")  # matmul, mm, bmm, mv
ADD_PRODUCTS = _product_calls("addr", "baddbmm", "addmm", "addbmm", "addmv")  # each its own op
NON_TORCH_ARRAYS = ("np.", "numpy.", "jnp.", "jax.", "mx.", "mlx.", "tf.", "ops.", "keras.")
# decorators that run the function with autocast off (x-transformers' @disable_autocast)
AUTOCAST_OFF_DECORATOR = re.compile(r"(disable|no|without)_?autocast|autocast_?(off|disabled)", re.I)
ELEMENTWISE_PRODUCTS = _product_calls("outer", "mul")  # outer, ger, mul, multiply
# a file or function with none of these words cannot hold a finding: skip its walk (speed)
TRIGGERS = ("arange", "position", "freq", "autocast", "alibi", "register_buffer", "Buffer(", "cumsum", "theta",
            "polar", "complex")
# buffers named like frequencies (RP121): inv_freq, freq(s), theta, omega, bands, periods ...
FREQ_BUFFER_NAME = re.compile(r"(inv_freq|^(freqs?|frequencies|thetas?|omegas?|periods|inv_freqs)$|bands$)")
NOT_FREQ_BUFFER = re.compile(r"cis|cos|sin|cache|emb|pos", re.I)
# functions whose name says they return frequencies: pixel_freq_bands, _compute_inv_freq, ...
FREQ_FUNC_NAME = re.compile(r"freq|band|theta|omega", re.I)
# calls that turn frequencies into something else (angles, tables): a buffer built with them is not frequencies
NOT_FREQ_CALLS = {"sin", "cos", "polar", "outer", "einsum", "matmul", "mm", "bmm", "ger", "sin_", "cos_"}
# overrides that run after every cast of the module: buffers they re-register are repaired
REPAIR_METHODS = {"_apply", "to", "half", "bfloat16", "float", "type"}
# a stop mentioning these is a position count even if it also says "embed" (max_position_embeddings)
INT_DTYPES = {"int64", "long", "int32", "int", "int16", "int8", "uint8"}
# complex dtypes and the calls that build complex tensors (RP123, RP114)
COMPLEX_DTYPES = {"complex64", "complex128", "cfloat", "cdouble", "complex32", "chalf"}
COMPLEX_CALLS = {"polar", "view_as_complex"}
# array constructors whose dtype keyword (or numpy's default) gives the dtype of what they build
ARRAY_CTORS = {"zeros", "empty", "full", "ones", "arange", "array", "asarray", "tensor", "zeros_like",
               "empty_like", "full_like", "ones_like"}
FLOAT32_DEFAULTS = {"float32", "float", "float64", "double"}
INT_POS_ARG = re.compile(r"^(position_ids|pos_ids?|cache_position)$")
POSITION_WORDS = re.compile(r"position|seq|len|ctx|context|token", re.I)
LINE_BREAK = re.compile(r"\r\n|\r|\n")  # the line ends of Python's tokenizer (universal newlines)
NOQA = re.compile(r"#\s*noqa(?::\s*(?P<codes>[A-Z]+[0-9]+(?:\s*,\s*[A-Z]+[0-9]+)*))?", re.I)

# attributes that hold the model's precision (a torch dtype): gpt-neox `self.precision`, Megatron `params_dtype`
MODEL_DTYPE_ATTR = re.compile(r"^(precision|dtype|params_dtype|compute_dtype|torch_dtype|model_dtype|_dtype)$")
