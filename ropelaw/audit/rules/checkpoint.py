"""Checkpoint-audit rules (RP351-RP359, and RP310 from the auditor range of issue 21): rotary and ALiBi
tensors stored in a file.

Raised by :mod:`ropelaw.audit.checkpoint` from the stored values; numbers distinct from the
runtime rules (RP301-RP309).
"""

from __future__ import annotations

from ...findings import define_rule

_SEED = "Baichuan, 'Llama也中招,混合精度下位置编码竟有大坑' (seed 004)"
_ALIBI = "Press, Smith, Lewis 2022, ALiBi, arXiv 2108.12409, sec. 3: slopes 2^(-8h/H)"

CHECKPOINT_INV_FREQ_LOW_PRECISION = define_rule(
    "RP351", "checkpoint-inv-freq-low-precision", "warning",
    "a stored inv_freq is in bf16/fp16: loading it rounds every rotary frequency",
    what="""
Finds rotary frequency tensors: 1-D tensors named like `inv_freq`, and 1-D `freqs`, `bands` or
`theta` (the name after the last '.'; rotary-embedding-torch stores its frequencies as the
parameter `freqs`) whose values are a geometric sequence starting at 1. Reports their dtype,
infers the base and rotary dimension (fit of log inv_freq linear in the pair index) and the
largest relative deviation of the stored values from base^(-2i/d).
""",
    why="""
A checkpoint saved after model.bfloat16() carries inv_freq rounded to 8 significant bits. A
round-to-nearest cast to a format with p significant bits moves each value by at most half an
ulp, 2^-p relative: 2^-8 (3.9e-3) in bf16, 2^-11 (4.9e-4) in fp16. For base 10,000 and d = 128
the bf16 frequencies are up to 3.65e-3 off, and the phase error grows with position.
""",
    example="""
model.bfloat16(); torch.save(model.state_dict(), "ckpt.pt")   # inv_freq saved in bf16
""",
    fix="""
Do not persist inv_freq (register_buffer(..., persistent=False)) or save it in float32; recompute it from the base at load time.
""",
    references=(_SEED,),
)

CHECKPOINT_CACHE_INEXACT = define_rule(
    "RP352", "checkpoint-cache-inexact-rows", "error",
    "stored cos/sin (or freqs_cis) caches hold rows that are not the encoding of their position",
    what="""
Measures a stored rotary cache row by row: row p is exact when its angle vector lies closer to
the ideal angles p * theta (at the frequencies the cache itself uses) than half the distance
between the ideal encodings of p and p + 1.
""",
    why="""
A cache built from bf16 positions or bf16 angles (the seed 004 bug) gives neighbouring tokens
the same encoding; a model that loads the cache inherits the collisions.
""",
    example="""
t = torch.arange(n, dtype=torch.bfloat16); cos_cached = torch.outer(t, inv_freq).cos()
""",
    fix="""
Rebuild the cache from int64 positions and float32 angles (or drop it from the checkpoint).
""",
    references=(_SEED,),
)

CHECKPOINT_CACHE_NONFINITE = define_rule(
    "RP353", "checkpoint-cache-nonfinite", "error",
    "a stored rotary cache contains inf or NaN rows",
    what="""
Counts rows of stored cos/sin/freqs_cis caches with any inf or NaN value.
""",
    why="""
fp16 positions overflow at 65,520, giving cos(inf) = NaN rows that poison attention.
""",
    example="""
t = torch.arange(100_000, dtype=torch.float16)   # inf from 65,520 on
""",
    fix="""
Rebuild the cache from int64 positions and float32 angles.
""",
    references=(_SEED,),
)

CHECKPOINT_ALIBI_LOW_PRECISION = define_rule(
    "RP354", "checkpoint-alibi-low-precision", "warning",
    "stored ALiBi slopes or biases are in bf16/fp16 and lose distances",
    what="""
Finds ALiBi tensors (`slopes`, `alibi`): slopes are compared with 2^(-8h/H); a stored bias
(heads x distance) is checked column by column: column j is exact when bias / slope rounds back
to the distance j for every head.
""",
    why="""
bf16 cannot hold distances above 256 exactly: slope * j collapses neighbouring distances, so the
ALiBi penalty no longer separates nearby tokens (seed 004, section on ALiBi).
""",
    example="""
alibi = slopes[:, None] * torch.arange(n, dtype=torch.bfloat16)[None, :]
""",
    fix="""
Store slopes in float32 and build the bias from int64 distances in float32 (cast the bias last, and only if the kernel needs it).
""",
    references=(_SEED, _ALIBI),
)

CHECKPOINT_INV_FREQ_INVALID = define_rule(
    "RP355", "checkpoint-inv-freq-invalid", "error",
    "a stored inv_freq holds inf, NaN, zero or negative frequencies",
    what="""
Checks every value of a stored `inv_freq` tensor: a rotary frequency theta_i = base^(-2i/d)
is finite and > 0 (RoFormer, arXiv 2104.09864, eq. 15), so any inf, NaN, zero or negative
entry cannot come from the formula.
""",
    why="""
A model that loads such an inv_freq rotates its pairs by NaN or not at all (theta = 0): attention
outputs NaN or the affected pairs lose all position information. Typical causes: a frequency
computed in fp16 that underflowed to 0, an uninitialised buffer saved by mistake, a bad conversion.
""",
    example="""
inv_freq = 1.0 / (base ** (torch.arange(0, d, 2).half() / d))   # fp16: base**(...) overflows -> 0
""",
    fix="""
Recompute inv_freq = 1 / base^(2i/d) in float32 from the config's base and drop the stored tensor (persistent=False).
""",
    references=("Su et al. 2021, RoFormer, arXiv 2104.09864, eq. 15",),
)

CHECKPOINT_CACHE_FREQUENCIES_ROUNDED = define_rule(
    "RP310", "checkpoint-cache-frequencies-rounded", "warning",
    "a stored cos/sin cache was built from frequencies rounded to bf16/fp16",
    what="""
Recovers the per-pair frequencies a stored cache uses (from its rows 1, 2, 4, ..., exact in binary
floating point) and finds them to be base^(-2i/d) rounded to bf16 or fp16, in any layout: cos/sin,
complex freqs_cis, stacked (L, d/2, 2).
""",
    why="""
Every row of such a cache is consistent with its own frequencies, so a row-by-row exactness count
reads 100%; but the frequencies are off by up to 2^-8 relative (bf16), so the phase of pair i drifts by
p |omega_i - theta_i|: about 16 rad at position 8,191 for a frequency in [0.5, 1).
""",
    example="""
freqs = (1.0 / base ** (torch.arange(0, d, 2) / d)).to(torch.bfloat16).float()
cache = torch.stack([torch.cos(t[:, None] * freqs), torch.sin(t[:, None] * freqs)], dim=-1)
""",
    fix="""
Rebuild the cache from float32 frequencies (and int64 positions); cast only the finished cos/sin.
""",
    references=("Su et al. 2021, RoFormer, arXiv 2104.09864, eq. 34",),
)
