"""Static-scan rules for rotary state kept in modules (RP121-RP122).

``nn.Module.to(dtype)`` / ``.half()`` / ``.bfloat16()`` cast every floating-point parameter
*and buffer* (PyTorch ``nn.Module.to`` documentation); plain attributes and complex tensors
are left alone.
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

Not reported: complex tensors (`freqs_cis`, never cast by a float dtype);
`register_buffer("inv_freq", None)` (filled later); buffers a class re-registers or reassigns
in an `_apply` / `to` override, which runs after every cast (the class repairs them);
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
Keep the frequencies as a plain float32 attribute (self.inv_freq = inv_freq), or recompute them in float32 when the buffer is not float32
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
Keep inv_freq out of buffers (or recompute it in float32) and build the cache in float32; cast only the returned cos/sin to x.dtype.
""",
    references=(SEED_004, MODULE_TO),
)
