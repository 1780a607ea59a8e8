"""Static-scan rules for rotary state kept in modules (RP121-RP123).

``nn.Module.to(dtype)`` / ``.half()`` / ``.bfloat16()`` cast every floating-point parameter
*and buffer* (PyTorch ``nn.Module.to`` documentation); plain attributes are left alone.
Complex parameters and buffers differ by method: ``.half()`` / ``.bfloat16()`` / ``.float()``
convert floating-point tensors only and leave them complex, while ``.to(dtype)`` with a real
dtype converts complex tensors too, keeping only the real part (checked with torch 2.13.0:
``Module.to(torch.bfloat16)``, ``torch.float16`` and even ``torch.float64`` turn a complex64
buffer real, with the warning "Casting complex values to real discards the imaginary part").
"""

from __future__ import annotations

from ...findings import define_rule
from .static_positions import SEED_004

MODULE_TO = "PyTorch nn.Module.to: 'casts all floating point parameters and buffers to dtype'"

INV_FREQ_FLOAT_BUFFER = define_rule(
    "RP121", "inv-freq-float-buffer", "warning",
    "the rotary frequencies are a float buffer, which model.to(bfloat16) rounds",
    what="""
Finds frequency buffers that a cast will round: `self.register_buffer("inv_freq", ...)` or
`self.inv_freq = nn.Buffer(...)`, reported where they are created at construction (`__init__`
or a method it calls).

A buffer holds frequencies when it is named like one (inv_freq, freq, freqs, theta, omega,
bands, periods; not cis/cos/sin/cache/emb/pos names), or when its value is built like one
(also through a local name or a function of the same file): `base ** (arange(0, d, 2) / d)`,
`base ** -(...)`, `1.0 / (base ** ...)`, `exp(arange(...) * -log(base) / d)`, `logspace(...)`,
`2 ** linspace(...)`, `linspace(...) * pi`. A value that also takes sin/cos, an outer product
or an einsum is a table of angles, not frequencies; `2 ** arange(bits)` (integer powers) is not
a frequency either. Heuristic: a buffer of frequencies named and built otherwise is missed.

Not reported: complex tensors (`freqs_cis`: RP123 says what a cast does to them);
`register_buffer("inv_freq", None)` (filled later); buffers the class repairs: re-registered or
reassigned from a fresh computation in an `_apply` / `to` override, which runs after every cast
(timm 1.0; upcasting the cast buffer, `self.inv_freq.float()`, restores nothing and is no repair);
read after construction only behind a dtype check that recomputes them in float32
(`if self.inv_freq.dtype != torch.float32: inv_freq = self._compute_inv_freq() else: inv_freq =
self.inv_freq`, flash-attn 2.8.3); lazily re-initialised in explicit float32 by a method that
`forward` calls, unconditionally at that method's top level (nanotron 0.4's
`init_rotary_embeddings`; a cast made after the first forward is then not seen);
re-registrations in code that runs only after construction (dynamic-scaling updates in
forward) or again after `__init__` created the buffer, when their value is not visibly low
precision: they replace whatever a cast left with freshly computed float32 frequencies.
""",
    why="""
A cast of the model rounds the buffer: in bf16 each frequency moves by up to 2^-8 = 0.39%
(relative); a frequency in [0.5, 1) moves by up to 2^-9 (half the bf16 spacing there), so at
position 8,191 its phase is off by up to 16 rad even if the product itself runs in float32
(`.float()` cannot restore the lost bits). Positions
taken from its dtype also become bf16 (RP101). A warning: whether a cast happens depends on
how the model is loaded and trained.
""",
    example="""
inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2).float() / dim))
self.register_buffer("inv_freq", inv_freq, persistent=False)
""",
    fix="""
Keep the frequencies as a plain float32 attribute (self.inv_freq = inv_freq), or recompute them in float32 when the \
buffer is not float32
(override `_apply` to re-register them after a cast).
""",
    references=(SEED_004, MODULE_TO, "PyTorch torch.finfo(torch.bfloat16).eps = 2^-7 (unit roundoff 2^-8)"),
)

CACHE_REBUILT_AFTER_CAST = define_rule(
    "RP122", "cache-rebuilt-after-cast", "warning",
    "the cos/sin cache is rebuilt in forward, with the input's dtype, from a cast frequency buffer",
    what="""
Finds a call like `self._set_cos_sin_cache(seq_len=seq_len, device=x.device, dtype=x.dtype)`
(a method of the module whose name mentions a cache, given the input's dtype) in a module that
keeps its frequencies in a float buffer.
""",
    why="""
The cache built in `__init__` is float32, but the rebuild for a longer sequence runs after
`model.to(bfloat16)`: it computes from the rounded buffer (and, in the seed's Llama, with bf16
positions), so exactly the long contexts that trigger it get the damaged encoding.
""",
    example="""
if seq_len > self.max_seq_len_cached:
    self._set_cos_sin_cache(seq_len=seq_len, device=x.device, dtype=x.dtype)
""",
    fix="""
Keep inv_freq out of buffers (or recompute it in float32) and build the cache in float32; cast only the returned \
cos/sin to x.dtype.
""",
    references=(SEED_004, MODULE_TO),
)

COMPLEX_BUFFER_CAST_TO_REAL = define_rule(
    "RP123", "complex-buffer-cast-to-real", "error",
    "a complex rotary buffer or parameter, which model.to(dtype) turns real: the sine is lost",
    what="""
Finds buffers and parameters that hold complex numbers: `self.register_buffer("freqs_cis", v)`,
`self.X = nn.Buffer(v)`, `self.X = nn.Parameter(v)` / `register_parameter` where `v` is built with
`torch.polar`, `torch.view_as_complex`, `torch.complex`, `torch.exp(1j * ...)` or a complex dtype
(`complex64`, `cfloat`, ...), directly, through a local name, or through a function or method of the
same file that returns one (`precompute_freqs_cis(...)`; `self._precompute_cache()` when the class
or a subclass in the file implements it so: torchtitan's `ComplexRoPE`).

Not reported: complex values kept as plain attributes (`self.freqs_cis = ...`, which `Module.to`
does not touch) and buffers that an `_apply` / `to` override re-registers after every cast.
""",
    why="""
`model.to(torch.bfloat16)` (also `torch.float16`, even `torch.float64`) converts complex buffers
and parameters to that real dtype and keeps only the real part: `cos(m * theta)` survives, the
sine is dropped (torch warns "Casting complex values to real discards the imaginary part"). The
product `x * freqs_cis` then scales each pair by the cosine instead of rotating it, so the
encoding no longer depends on relative position and the model breaks silently (or fails later on
a shape/dtype mismatch). `model.bfloat16()` / `.half()` leave complex tensors alone, which is why
the bug appears only with the `.to(dtype)` spelling (FSDP / DeepSpeed / trainers use it).
""",
    example="""
freqs_cis = torch.polar(torch.ones_like(freqs), freqs)  # complex64
self.register_buffer("freqs_cis", freqs_cis, persistent=False)
""",
    fix="""
Keep the complex table out of the module's buffers (a plain attribute, rebuilt on the right device),
or store cos and sin as real float32 buffers and form the complex numbers in forward; or override
`_apply` to recompute it after a cast. Cast models with `.bfloat16()` / `.half()`, which leave complex
tensors alone, rather than `.to(dtype)`.
""",
    references=(MODULE_TO, "torch 2.13.0: Module.to(torch.bfloat16) on a complex64 buffer warns 'Casting complex "
                           "values to real discards the imaginary part'",
                "torchtitan 0.3.0 torchtitan/models/common/rope.py ComplexRoPE (cache = torch.polar(...))"),
)
