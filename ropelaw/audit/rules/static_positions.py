"""Static-scan rules for positions (RP101-RP104): integer positions held in a float dtype.

Seed 004 (Baichuan, "Llama也中招,混合精度下位置编码竟有大坑"): Llama's rotary embedding builds
``t = torch.arange(n, dtype=self.inv_freq.dtype)``; after ``model.to(torch.bfloat16)`` the
buffer is bf16, so are the positions, and bf16 holds integers exactly only up to 256: at an
8,192-token context only 896 positions (10.9%) keep their own value. The checker
(:mod:`ropelaw.audit.static`) finds the patterns; the numbers come from
:func:`ropelaw.formats.exact_positions`.
"""

from __future__ import annotations

from ...findings import define_rule

SEED_004 = ("Baichuan, 'Llama也中招,混合精度下位置编码竟有大坑' (seed 004): "
            "bf16 keeps about 10% of 8,192 positions exact")
ROFORMER = "Su et al. 2021, RoFormer, arXiv 2104.09864, section 3.2.2 (theta_i = 10000^(-2(i-1)/d))"
FIX_POSITIONS = ("build positions as int64 and convert to float32: "
                 "torch.arange(n, dtype=torch.int64).float()")


def collision_note(dtype: str, length: int) -> str:
    """``896 of 8,192 positions stay exact`` (+ the fp16 overflow when it occurs before ``length``)."""
    from ...formats import exact_positions

    r = exact_positions(dtype, length)
    text = f"{r.exact:,} of {length:,} positions stay exact"
    if r.overflow_count:
        text += f" and {r.overflow_count:,} from {r.overflow_from:,} on become non-finite"
    return text


POSITIONS_IN_BUFFER_DTYPE = define_rule(
    "RP101", "positions-in-buffer-dtype", "error",
    "positions are created with, or converted to, the dtype of a float buffer or parameter",
    what="""
Finds integer positions (`torch.arange(...)`, `position_ids`, `cache_position` and names
assigned from them in the same function) created with or converted to the dtype of a module
attribute: `dtype=self.inv_freq.dtype`, `.type_as(self.inv_freq)`, `.to(self.weight.dtype)`, `.to(self.decay)`
(the dtype of the tensor named: torchscale's RetNet, 293 of 2,048 positions exact after a bf16 cast); a
tensor of unknown kind (`forward(self, t)`) converted so, once it meets the frequencies in a
product (`einsum("b i, j -> b i j", t.type_as(self.inv_freq), self.inv_freq)`); and integer
positions multiplied with a frequency buffer (`einsum("i, j -> i j", arange(n), self.inv_freq)`,
`position_ids[..., None] * self.inv_freq`): type promotion gives `int64 * bf16` the dtype bf16.

Not reported where no cast can have happened yet: in `__init__`, or a private method only
`__init__` calls, after the buffer was registered with an explicit float32 value
(`.float()`); and after a `register_buffer` of the same buffer in float32 earlier in the same
function (dynamic NTK scaling), or in a class that restores the buffer in `_apply` / `to`. The
same line in a method that `forward` also calls is the bug.
""",
    why="""
`model.to(torch.bfloat16)`, `model.half()`, DeepSpeed and FSDP mixed precision cast every float
buffer and parameter. The positions then follow into bf16, which holds integers exactly only
up to 256 (fp16: 2,048): at 8,192 tokens 896 positions (10.9%) keep their own value and
neighbouring tokens share one rotary encoding (seed 004).
""",
    example="""
t = torch.arange(self.max_seq_len_cached, device=device, dtype=self.inv_freq.dtype)
freqs = torch.einsum("i,j->ij", t, self.inv_freq)
""",
    fix="""
Build positions as int64 and convert to float32: torch.arange(n, dtype=torch.int64).float();
keep the frequencies in float32 too (inv_freq.float()) for the product.
""",
    references=(SEED_004, ROFORMER),
)

POSITIONS_IN_INPUT_DTYPE = define_rule(
    "RP102", "positions-in-input-dtype", "error",
    "positions are created with, or converted to, the dtype of an input tensor or a caller's dtype",
    what="""
Finds positions created with or converted to the dtype of a tensor argument
(`dtype=q.dtype`, `position_ids.to(x.dtype)`, `t.type_as(x)`) or to a `dtype` parameter that
the caller fills in (`def _set_cos_sin_cache(self, seq_len, device, dtype): torch.arange(seq_len, dtype=dtype)`).

Not reported: the dtype of an array known to be an integer or numpy array, from its annotation
(`out: np.ndarray`, `npt.NDArray[np.int64]`, `torch.LongTensor`) or its constructor
(`buf = np.zeros(n, dtype=np.int64)`, `torch.zeros(n, dtype=torch.int64)`), and any
`np.arange(..., dtype=a.dtype)` (numpy accepts only numpy dtypes, so `a` is a numpy array, not
a model activation; vLLM's `np.arange(..., dtype=out.dtype)`); a `dtype` parameter that
defaults to float32/float64 when no call in the same file passes it another dtype (a call that
passes `x.dtype`, a name, `*args` or `**kwargs` keeps the finding; callers in other files are
not seen).
""",
    why="""
The activations of a bf16/fp16 model are bf16/fp16, so the positions are too: in bf16 only
896 of 8,192 positions are exact; in fp16 every position from 65,520 on becomes inf.
""",
    example="""
position_ids = position_ids.to(x.dtype)
freqs = position_ids[..., None] * self.inv_freq
""",
    fix="""
Convert positions to float32, never to the input's dtype: position_ids.float() or
position_ids.to(torch.float32); cast only the final cos/sin to x.dtype.
""",
    references=(SEED_004, ROFORMER),
)

POSITIONS_IN_DEFAULT_DTYPE = define_rule(
    "RP103", "positions-in-default-dtype", "warning",
    "positions take torch's default dtype, which training stacks set to bf16/fp16",
    what="""
Finds positions created with or converted to `torch.get_default_dtype()`.
""",
    why="""
The default dtype is float32 only until someone calls `torch.set_default_dtype(torch.bfloat16)`,
as Hugging Face `from_pretrained(torch_dtype=...)` does while it builds the model: then the
positions are bf16 (896 of 8,192 exact). A warning, since it depends on the caller.
""",
    example="""
t = torch.arange(seq_len, dtype=torch.get_default_dtype())
""",
    fix="""
Name the dtype: torch.arange(n, dtype=torch.int64).float() (float32 whatever the default).
""",
    references=(SEED_004, "torch.set_default_dtype documentation"),
)

POSITIONS_IN_LOW_PRECISION = define_rule(
    "RP104", "positions-in-low-precision", "error",
    "positions are created in, or converted to, float16 / bfloat16 / fp8 explicitly",
    what="""
Finds positions created with `dtype=torch.bfloat16` / `torch.float16`, or converted with
`.half()`, `.bfloat16()`, `.to(torch.float16)`.
""",
    why="""
bf16 holds integers exactly only up to 256 and fp16 up to 2,048 (and overflows to inf from
65,520 on): at 8,192 tokens bf16 keeps 896 positions, fp16 4,096.
""",
    example="""
t = torch.arange(seq_len, device=device).half()
""",
    fix="""
Keep positions int64 and convert to float32: torch.arange(n).float().
""",
    references=(SEED_004,),
)
