"""Runtime-audit rules (RP301-RP309): precision measured by running a rotary module.

Each rule is raised by :mod:`ropelaw.audit.runtime` from a measurement, never from a
pattern in the source: the numbers in the message are what the module produced.
"""

from __future__ import annotations

from ...findings import define_rule

_SEED = "Baichuan, 'Llama也中招,混合精度下位置编码竟有大坑' (seed 004): bf16 keeps 896 of 8,192 positions"
_ROFORMER = "Su et al. 2021, RoFormer, arXiv 2104.09864, eq. 34: theta_i = 10000^(-2i/d)"

RUNTIME_POSITIONS_ROUNDED = define_rule(
    "RP301", "runtime-positions-rounded", "error",
    "the module's encodings collide because positions pass through a low-precision dtype",
    what="""
Runs the module in the chosen precision scenario, recovers the angle of every rotary pair at
every position, and finds positions whose encoding is the ideal encoding of a *different*
integer position: exactly the position rounded to the dtype (bf16 keeps integers exactly only
up to 256, fp16 up to 2048).
""",
    why="""
Neighbouring tokens get the same rotary encoding: at 8,192 tokens in bf16 only 896 positions
(10.9%) keep their own encoding, the rest share it with up to 31 neighbours, and the model
cannot tell them apart by position.
""",
    example="""
t = torch.arange(seq_len, dtype=self.inv_freq.dtype)   # inv_freq is bf16 after model.bfloat16()
freqs = torch.outer(t.float(), self.inv_freq.float())
""",
    fix="""
Build positions as int64 and convert them to float32 only for the product: torch.arange(n, dtype=torch.int64).float().
Never derive their dtype from a buffer, from the input (x.dtype) or from the default dtype.
""",
    references=(_SEED, _ROFORMER),
)

RUNTIME_PRODUCT_ROUNDED = define_rule(
    "RP302", "runtime-angle-product-rounded", "error",
    "the angle position * inv_freq is computed or stored in a low-precision dtype",
    what="""
Finds positions whose produced angles are neither the ideal angles nor those of a rounded
position: the product p * theta_i itself was rounded (bf16 keeps 8 significant bits, so the
angle at p = 8,000 is off by up to 16 radians).
""",
    why="""
Rounding the angle destroys the encoding of almost every position beyond a few hundred:
exact fractions collapse towards zero and the phase error grows with the position.
""",
    example="""
freqs = torch.einsum("i,j->ij", t, self.inv_freq)   # t and inv_freq both bf16
emb = torch.cat((freqs, freqs), dim=-1)              # bf16 angles
""",
    fix="""
Compute the product in float32 with autocast disabled, then take cos/sin, and cast only cos/sin
to the model dtype: with torch.autocast(device_type, enabled=False): freqs = inv_freq.float() @ pos.float().
""",
    references=(_SEED, _ROFORMER),
)

RUNTIME_FREQUENCIES_ROUNDED = define_rule(
    "RP303", "runtime-frequencies-rounded", "warning",
    "the rotary frequencies (inv_freq) the module uses were rounded to a low-precision dtype",
    what="""
Recovers the per-pair frequencies the module effectively uses (from its angles at positions
1, 2, 4, ..., where no rounding of positions or products can hide) and compares them with the
nominal base^(-2i/d), the base inferred from a float32 build or given with --base.
""",
    why="""
A float inv_freq buffer is cast with the model (model.bfloat16(), DeepSpeed). A round-to-nearest
cast to a format with p significant bits moves each value by at most half an ulp, 2^-p relative:
2^-8 (3.9e-3) in bf16, 2^-11 (4.9e-4) in fp16; for base 10,000 and d = 128 the bf16 frequencies
drift up to 3.65e-3. The phase error grows linearly with the position and the model sees
positions differently from how it was trained in float32.
""",
    example="""
self.register_buffer("inv_freq", inv_freq)   # becomes bf16 with model.to(torch.bfloat16)
""",
    fix="""
Keep inv_freq out of the cast: recompute it in float32 in forward, keep it as a plain attribute,
or restore it after the cast (module.inv_freq = module.inv_freq.float()).
""",
    references=(_SEED, _ROFORMER),
)

RUNTIME_NONFINITE = define_rule(
    "RP304", "runtime-nonfinite-encoding", "error",
    "the module produces inf or NaN encodings at some positions",
    what="""
Counts positions where any cos or sin the module produces is inf or NaN.
""",
    why="""
fp16 overflows at 65,520: a position (or angle) held in fp16 becomes inf and cos(inf) is NaN,
which poisons attention for every token that sees it.
""",
    example="""
t = torch.arange(seq_len, dtype=torch.float16)   # 65520 and above round to inf
""",
    fix="""
Keep positions and angles in int64/float32 (fp16 cannot hold 65,520 or more); cast only cos/sin.
""",
    references=(_SEED,),
)
