"""Runtime-audit rules (RP301-RP309): precision measured by running a rotary module.

RP301-RP304 angles and positions, RP305 complex frequencies made real, RP306 magnitude of a
scaled encoding, RP307 a scenario that raised, RP308 frequencies the module rounds itself.

Each rule is raised by :mod:`ropelaw.audit.module` from a measurement, never from a
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

RUNTIME_SINE_LOST = define_rule(
    "RP305", "runtime-sine-lost", "error",
    "a cast made the complex rotary frequencies real: the imaginary part, the sine, is lost",
    what="""
Runs the module in the chosen precision scenario and finds that no position has a nonzero sine:
the complex frequencies (``freqs_cis = torch.polar(1, angles)``, complex64) came back real. The
finding names the complex buffers the cast turned real and quotes torch's warning.
""",
    why="""
``module.to(torch.bfloat16)`` casts complex buffers to the real dtype and keeps only the real part,
cos(p theta): q * freqs_cis then scales each pair by its cosine instead of rotating it, and no
position is encoded any more (torchtitan 0.3.0 ComplexRoPE's ``cache`` after ``model.to(bf16)``;
``.bfloat16()`` and ``.half()`` leave complex tensors alone, ``.to(dtype)`` does not).
""",
    example="""
self.register_buffer("cache", torch.polar(torch.ones_like(freqs), freqs), persistent=False)  # complex64
model.to(torch.bfloat16)   # cache is now bf16 cos(p theta): the sine is gone
""",
    fix="""
Keep complex frequencies out of the cast: recompute them after .to() (torchtitan's
_init_self_buffers), store them as a real (cos, sin) pair or view_as_real in float32 and restore
the dtype after the cast, or cast with .bfloat16()/.half(), which skip complex tensors.
""",
    references=("issue 11: torchtitan 0.3.0 torchtitan/models/common/rope.py ComplexRoPE",
                "torch.nn.Module.to: complex tensors cast to a real dtype discard the imaginary part"),
)

RUNTIME_MAGNITUDE_ERROR = define_rule(
    "RP306", "runtime-magnitude-error", "warning",
    "a rotary that scales its encoding computes the scale in low precision",
    what="""
For rotaries whose float32 build gives |(cos, sin)| != 1 (XPos, an attention factor folded into
cos/sin, YaRN's mscale), compares the magnitude of every produced (cos, sin) pair with the float32
build's at the same position and reports the largest relative error, when it exceeds what output
rounding alone can cause (twice the unit roundoff: 0.78% in bf16, 0.098% in fp16). A plain
rotation is compared with magnitude 1. Angles are judged separately (RP301-RP303).
""",
    why="""
The scale multiplies the attention logits: XPos's zeta^(p/gamma) computed from bf16 positions and a
bf16 ``scale`` buffer after ``model.to(bf16)`` is off by up to 9.08% at 8,192 positions (flash-attn
2.8.3 RotaryEmbedding(scale_base=512)), against 0.39% from rounding cos and sin to bf16. The model
attends with a decay it was not trained with, although every angle may still be exact.
""",
    example="""
power = (torch.arange(seqlen, dtype=self.scale.dtype) - seqlen // 2) / self.scale_base   # scale is bf16 after .to()
scale = self.scale ** power[:, None]
""",
    fix="""
Compute the scale in float32 from int64 positions (torch.arange(seqlen).float()) and a float32
copy of the scale buffer, multiply cos/sin by it in float32, and cast only the product.
""",
    references=("Sun et al. 2022, A Length-Extrapolatable Transformer (XPos), arXiv 2212.10554, eq. 3-4",
                "Peng et al. 2023, YaRN, arXiv 2309.00071, eq. 22 (mscale = 0.1 ln s + 1)"),
)

RUNTIME_SCENARIO_RAISED = define_rule(
    "RP307", "runtime-scenario-raised", "warning",
    "the module raised an exception in one precision scenario (the others were measured)",
    what="""
Each scenario (cast, default, autocast-cuda, autocast-cpu) builds and calls the module on its own. When one raises,
its result is the exception in one line and the other scenarios are still measured and reported.
""",
    why="""
A rotary that works in float32 but raises once cast or under autocast (a dtype mismatch in an
index or a matmul, a complex view of a bf16 tensor) fails in training in that precision; the
exception says where.
""",
    example="""
torch.view_as_complex(x)   # x became bf16 after model.to(bf16): view_as_complex needs float32/float64
""",
    fix="""
Make the rotary run in the precision the model uses, typically by computing in float32 internally
and casting the result (x.float() ... .type_as(x)).
""",
    references=("issue 11: scenario isolation",),
)

RUNTIME_FREQUENCIES_ROUNDED_IN_MODULE = define_rule(
    "RP308", "runtime-frequencies-rounded-in-module", "warning",
    "the module's own frequencies are base^(-2i/d) rounded to bf16/fp16, in every precision",
    what="""
Recovers the frequencies of the module's float32 build (from its angles at positions 1, 2, 4, ...,
or its own inv_freq) and finds that they are not base^(-2i/d) but exactly base^(-2i/d) rounded to
bf16 or fp16: the module rounds its frequencies itself (`inv_freq.to(torch.bfloat16)`, a table built
from bf16 frequencies), so the drift is there before any cast, autocast or default dtype. Reported
once; a scenario gets RP303 only when it rounds them further. The nominal base is the simplest base
whose rounded frequencies the measurement matches exactly.
""",
    why="""
A frequency rounded to bf16 moves by up to 2^-8 relative (3.65e-3 for base 10,000, d = 128): the
phase of pair i drifts by p |omega_i - theta_i|, about 16 rad at position 8,191 for a frequency in
[0.5, 1). Positions stay distinct (the module is consistent with itself), so an exactness count
alone reads 100%: only the frequencies show it.
""",
    example="""
freqs = (1.0 / (base ** (torch.arange(0, d, 2).float() / d))).to(torch.bfloat16)
cache = torch.stack([torch.cos(t[:, None] * freqs.float()), torch.sin(t[:, None] * freqs.float())], -1)
""",
    fix="""
Compute and keep the frequencies in float32 (no .to(bf16) / .half() on inv_freq); cast only the finished cos/sin.
""",
    references=(_ROFORMER, "issue 21: a stacked (L, d/2, 2) cache with bf16 frequencies read as 100% exact"),
)
