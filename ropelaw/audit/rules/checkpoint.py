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
Do not persist inv_freq (register_buffer(..., persistent=False)) or save it in float32; recompute it from the base at \
load time.
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
Store slopes in float32 and build the bias from int64 distances in float32 (cast the bias last, and only if the \
kernel needs it).
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

CHECKPOINT_TENSOR_NOT_MEASURED = define_rule(
    "RP356", "checkpoint-tensor-not-measured", "warning",
    "a rotary or ALiBi tensor of the checkpoint could not be measured",
    what="""
Reports a tensor found by its name as rotary or ALiBi (`inv_freq`, a cos/sin cache, `freqs_cis`,
ALiBi `slopes` or biases) whose values the audit could not measure, with the reason: a sparse,
quantized or meta tensor; an expanded (stride-0) view, which holds one value repeated; a dtype
the reader does not know or that cannot hold the quantity; a shape that is not that of its kind
(a 1-D cos/sin cache or a 0-d / 1-d `freqs_cis`, which have one row per position; a 0-d ALiBi
slope, which has one value per head; a 0-d, single-valued or multi-axis `inv_freq`, which is a
vector of d/2 frequencies; a 1-D ALiBi bias or one of fewer than 2 key positions, which has a row
of distances per head; more frequencies than any rotary dimension); a cache of 0 or 1 rows (its
frequencies are read from rows 1, 2, 4, ...: "0 of 0 rows exact" is no measurement); a cos cache
without its sin partner.
""",
    why="""
A checkpoint whose rotary tensors were skipped has not been audited: passing it as clean would
vouch for values nobody read. The finding makes the gap visible (and the exit code 1).
""",
    example="""
torch.save({"rope.inv_freq": torch.ones(1).expand(64)}, "ckpt.pt")   # a stride-0 view
""",
    fix="""
Save the tensor densely (.contiguous(), .to_dense(), .dequantize()) in a floating-point dtype with the shape its kind \
has, or drop it from the checkpoint if the model recomputes it.
""",
)

CHECKPOINT_NOT_ROTARY_FREQUENCIES = define_rule(
    "RP357", "checkpoint-not-rotary-frequencies", "error",
    "a stored inv_freq is not a set of rotary frequencies (wrong dtype, above 1 rad/token, or not decreasing)",
    what="""
Checks what every rotary frequency set is: real floating-point values (not bool, integer or
complex), finite and positive (RP355 reports those that are not), at most 1 rad/token
(theta_0 = base^0 = 1 for RoPE, divided by a factor >= 1 under position interpolation) and
decreasing with the pair index (base^(-2i/d) with base > 1; in a format of 8 bits or fewer of
precision neighbours may round to the same value, but the last stays below the first).
""",
    why="""
Such a tensor cannot be the output of base^(-2i/d): all ones rotates every pair at the same
speed, increasing values invert the frequency bands, 1e30 rad/token turns positions into noise. A
bool or complex tensor read as numbers would show a meaningless base (a complex one as base 1).
A model loading it runs with broken positions whatever the audit would say about its precision.
""",
    example="""
state_dict["model.layers.0.self_attn.rotary_emb.inv_freq"] = torch.ones(64)
""",
    fix="""
Recompute inv_freq = 1 / base^(2i/d) in float32 from the config's base, or drop the stored tensor (persistent=False) \
so the model recomputes it.
""",
    references=("Su et al. 2021, RoFormer, arXiv 2104.09864, eq. 15",),
)

CHECKPOINT_ALIBI_SLOPES_INVALID = define_rule(
    "RP358", "checkpoint-alibi-slopes-invalid", "error",
    "stored ALiBi slopes are not real, finite and positive",
    what="""
Checks stored ALiBi `slopes`: one real, finite, positive value per head (Press et al.: 2^(-8h/H)).
A zero, negative, inf or NaN slope, or a bool / integer / complex tensor, is reported.
""",
    why="""
A zero slope removes the position bias of its head entirely; a negative one rewards distant
tokens; NaN poisons the attention scores.
""",
    example="""
state_dict["transformer.alibi_slopes"] = torch.zeros(32)
""",
    fix="""
Store the slopes 2^(-8h/H) (h = 1 .. H) in float32, or recompute them from the head count at load time.
""",
    references=(_ALIBI,),
)

CHECKPOINT_NOT_SEARCHED = define_rule(
    "RP359", "checkpoint-not-searched", "warning",
    "part of a torch checkpoint is nested too deeply to be searched for rotary tensors",
    what="""
Reports containers (dicts, lists, tuples) of a weights-only torch file nested deeper than 64
levels: the audit walks containers down to that depth and does not search below it. (A file
with no tensor at all within that depth is not a checkpoint: exit 2.)
""",
    why="""
A rotary tensor below the search depth is never measured; reporting the file as clean would
vouch for it.
""",
    example="""
x = torch.ones(2)
for _ in range(100): x = [x]
torch.save({"rope.inv_freq": inv_freq, "deep": x}, "ckpt.pt")
""",
    fix="""
Save a flat state dict (model.state_dict()); state dicts nest a handful of levels.
""",
)
