"""Static-scan rules for the angle ``position * inv_freq`` (RP111-RP114).

The angle of pair i at position p is ``p * theta_i`` (RoFormer, arXiv 2104.09864, eq. 34).
Rounded to bf16 (8 significant bits) the angle at p = 8,191 of a pair with theta near 1 is
off by up to 16 radians (spacing 32 at 8,191): cos/sin of it are noise.
Matrix products (`@`, `torch.matmul`, `mm`, `bmm`, an `einsum` that contracts an index) run
in the autocast dtype inside `torch.autocast`; element-wise products (`*`, `torch.outer`, an
`einsum` without contraction, which torch evaluates as `mul`) do not (torch autocast op
reference: "CUDA Ops that can autocast to float16": matmul, mm, bmm, ...).
"""

from __future__ import annotations

from ...findings import define_rule
from .static_positions import ROFORMER, SEED_004

AUTOCAST_DOC = "PyTorch, Automatic Mixed Precision package, 'Autocast Op Reference' (torch.amp)"
HF_FIX = ("Hugging Face transformers LlamaRotaryEmbedding (4.4x and later): product under "
          "torch.autocast(device_type, enabled=False) with .float() operands")

ANGLES_IN_LOW_PRECISION = define_rule(
    "RP111", "angles-in-low-precision", "error",
    "the angle position * inv_freq is computed from, or converted to, a low-precision dtype",
    what="""
Finds an angle product (`einsum`, `outer`, `matmul`, `@`, `*` of positions and frequencies)
whose frequency operand was converted to a low-precision or input dtype
(`self.inv_freq.to(x.dtype)`, `inv_freq.half()`), and angles converted to such a dtype before
`cos`/`sin` (`freqs.to(x.dtype)`, `emb.half()`).
""",
    why="""
An angle p * theta in bf16 keeps 8 significant bits: at p = 8,191 neighbouring bf16 values are
32 apart, so the angle, and with it cos/sin, is wrong by up to 16 radians. Only cos/sin may be
cast to the model dtype.
""",
    example="""
freqs = torch.outer(t, self.inv_freq.to(x.dtype))
emb = torch.cat((freqs, freqs), dim=-1).to(x.dtype)
""",
    fix="""
Compute the product and cos/sin in float32 (t.float(), inv_freq.float()); cast only cos and sin: cos.to(x.dtype).
""",
    references=(SEED_004, ROFORMER),
)

ANGLE_PRODUCT_IN_AUTOCAST = define_rule(
    "RP112", "angle-product-in-autocast", "error",
    "the angle product is a matrix product inside an enabled torch.autocast region",
    what="""
Finds `@` / `torch.matmul` / `mm` / `bmm` / a contracting `einsum` of positions and frequencies
inside `with torch.autocast(...)` (or `torch.cuda.amp.autocast()`) that is not `enabled=False`.
""",
    why="""
Autocast runs matrix products in float16/bfloat16 whatever the operands' dtype, so the angles
are rounded to 8 (bf16) or 11 (fp16) significant bits: at p = 8,191 a bf16 angle is off by up to 16 rad.
""",
    example="""
with torch.autocast("cuda", dtype=torch.bfloat16):
    freqs = inv_freq_expanded.float() @ position_ids_expanded.float()
""",
    fix="""
Disable autocast around the product: with torch.autocast(device_type=x.device.type, enabled=False): ...
""",
    references=(AUTOCAST_DOC, HF_FIX),
)

ANGLE_PRODUCT_AUTOCAST_ELIGIBLE = define_rule(
    "RP113", "angle-product-autocast-eligible", "warning",
    "the angle product is a matrix product outside an `autocast(enabled=False)` region",
    what="""
Finds `@` / `torch.matmul` / `mm` / `bmm` / a contracting `einsum` of positions and frequencies
that is not inside `with torch.autocast(..., enabled=False)`.
""",
    why="""
Training loops call the model inside `torch.autocast(dtype=torch.bfloat16)`; a matrix product in
the rotary module then runs in bf16 even if both operands are float32 (`.float()` does not help),
and the angles lose all but 8 significant bits. Hugging Face fixed exactly this in Llama by
disabling autocast around the product. A warning: it bites only when the caller uses autocast.
""",
    example="""
freqs = (inv_freq_expanded.float() @ position_ids_expanded.float()).transpose(1, 2)
""",
    fix="""
Wrap the product: with torch.autocast(device_type=x.device.type, enabled=False): freqs = ...; or use an element-wise \
product (torch.outer, *).
""",
    references=(AUTOCAST_DOC, HF_FIX),
)

COMPLEX_FROM_LOW_PRECISION_ANGLES = define_rule(
    "RP114", "complex-from-low-precision-angles", "error",
    "a complex rotary encoding is built from angles in a low-precision dtype",
    what="""
Finds `torch.polar(abs, angles)`, `torch.complex(re, im)`, `torch.view_as_complex(...)` and
`torch.exp(1j * angles)` whose angle operand (position * inv_freq) is converted to bf16/fp16 or
the input's dtype right there: `torch.polar(ones, freqs.to(x.dtype))`, `torch.exp(1j * angles.half())`.
Angles rounded earlier in the function are reported where they are rounded (RP101-RP111).
""",
    why="""
A complex encoding `e^(i m theta)` is only as good as its angle `m * theta`. In bf16 the angle at
position 8,191 keeps 8 significant bits (spacing 32 there), so it is off by up to 16 rad and the
rotation is noise; fp16 angles (`torch.polar` accepts Half on CUDA, giving complex32) are off by up
to 2 rad. `torch.polar` refuses bf16 inputs, which hides the problem on CPU tests only.
""",
    example="""
freqs = torch.outer(t, self.inv_freq)
freqs_cis = torch.polar(torch.ones_like(freqs), freqs.to(x.dtype))
""",
    fix="""
Build the angles and the complex numbers in float32 (complex64): torch.polar(ones, freqs.float());
convert the rotated real result, not the angles, to x.dtype.
""",
    references=(SEED_004, ROFORMER, "torch.polar documentation: abs and angle of the same dtype, float or double "
                                    "(Half on CUDA)"),
)
