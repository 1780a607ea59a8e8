"""Static-scan rules for values made without a dtype (RP115, RP116) and for code the scan does not read (RP117).

torch gives a tensor made without a dtype the *default* dtype whenever it is a float: ``arange`` of a
float (``arange(8.0)``, ``arange(float(n))``), the true division of an int64 tensor (``arange(n) / k``,
``arange(0, d, 2) / d``), ``linspace``. The default dtype is float32 until a trainer changes it:
Lightning/Fabric ``precision="bf16-true"`` builds and runs the model under
``torch.set_default_dtype(torch.bfloat16)`` (lightning_fabric 2.6.6 ``HalfPrecision``,
:data:`ropelaw.audit.policy.TRAINER_PRECISIONS`). TinyLlama's lit_gpt (``torch.arange(seq_len) /
condense_ratio``) and lit-llama (``arange(0, n_elem, 2, dtype=idx.dtype) / n_elem`` with int64 token
ids) train that way: 641 of 2,048 positions distinct.
"""

from __future__ import annotations

from ...findings import define_rule
from .static_positions import ROFORMER, SEED_004

FABRIC = ("lightning_fabric==2.6.6 plugins/precision/half.py:37-55: HalfPrecision ('bf16-true', '16-true') "
          "sets torch.set_default_dtype in module_init_context and forward_context")

POSITIONS_IN_IMPLICIT_DEFAULT_DTYPE = define_rule(
    "RP115", "positions-in-implicit-default-dtype", "warning",
    "positions made without a dtype take torch's default dtype, bf16 under Lightning 'bf16-true'",
    what="""
Finds positions that become a float in torch's default dtype because no dtype is given, once they
reach an angle product or cos/sin: `torch.arange(seq_len) / condense_ratio` (true division of int64),
`torch.arange(float(n))`, `torch.arange(8.0)`; and int64 positions multiplied with frequencies that are
themselves in the default dtype (type promotion gives the product that dtype: lit-llama's
`torch.outer(arange(seq_len, dtype=int64), theta)`).
""",
    why="""
The default dtype is float32 only until a trainer sets it: Lightning/Fabric precision='bf16-true'
builds and runs the model under torch.set_default_dtype(torch.bfloat16), and then these positions are
bf16, which holds integers exactly only up to 256: 896 of 8,192 positions stay exact, 641 of 2,048
distinct. A warning, since it depends on how the model is trained; the runtime audit's `default`
scenario measures it.
""",
    example="""
seq_idx = torch.arange(seq_len, device=device) / condense_ratio
idx_theta = torch.outer(seq_idx, theta)
""",
    fix="""
Name the dtype: torch.arange(seq_len, dtype=torch.float32) / condense_ratio (or .float() before dividing),
so that no default dtype can reach the positions.
""",
    references=(SEED_004, FABRIC, "torch.set_default_dtype documentation"),
)

FREQUENCIES_IN_IMPLICIT_DEFAULT_DTYPE = define_rule(
    "RP116", "frequencies-in-implicit-default-dtype", "warning",
    "rotary frequencies made without a dtype take torch's default dtype, bf16 under Lightning 'bf16-true'",
    what="""
Finds rotary frequencies whose exponents become floats in torch's default dtype because no dtype is
given, once they reach an angle product or cos/sin: `1.0 / (base ** (torch.arange(0, d, 2) / d))`
(true division of int64), `torch.arange(0, d, 2.0)`, `torch.linspace(...)` without a dtype.
""",
    why="""
Under Lightning/Fabric precision='bf16-true' (torch.set_default_dtype(torch.bfloat16)) every frequency
is computed and held in bf16: off by up to 2^-8 relative, a phase error of about 16 rad at position
8,191 for a frequency near 1, and the product with the positions runs in bf16 too.
""",
    example="""
theta = 1.0 / (base ** (torch.arange(0, n_elem, 2, device=device) / n_elem))
""",
    fix="""
Name the dtype: torch.arange(0, d, 2, dtype=torch.float32) / d (or .float() before dividing).
""",
    references=(ROFORMER, FABRIC),
)

FRAMEWORK_NOT_ANALYSED = define_rule(
    "RP117", "framework-not-analysed", "info",
    "the file computes with a framework the static scan does not read (keras.ops, jax.numpy, mlx, TensorFlow)",
    what="""
Notes a scanned file that imports keras / keras_nlp / keras_hub (keras.ops), jax (jax.numpy), mlx,
TensorFlow or paddle at module level and holds rotary or ALiBi code (an identifier of the file, not a
comment or string, has `rotary`, `rope`, `alibi` or `xpos` as a word, or is `RoPE`, `rotate_half`,
`rotate_every_two`, `freqs_cis`): the static scan follows torch's dtype rules only, so that code was
not analysed. An info finding, so that such a file is never counted in an "All checks passed".

Not noted: files of other position code (learned or sinusoidal absolute / relative position
embeddings: transformers' TF Transformer-XL names its sinusoid's frequencies `inv_freq`), files that
only hand RoPE settings on (an upper-case constant such as `DEFAULT_ROPE_BASE_FREQUENCY`, a keyword
argument such as `rope_base_frequency=`: Gemma's JAX config and transformer files), and torch
files that import another framework only inside a function (transformers' `load_tf_weights_in_*`).
""",
    why="""
A rotary bug written with keras.ops or jax.numpy passes a torch-only scan silently: keras-nlp's
RotaryEmbedding computed positions in the layer's compute dtype (bf16) until keras-nlp PR 1508
("Always run the rotary embedding layer in float32") fixed it.
""",
    example="""
from keras import ops
positions = ops.arange(seq_len, dtype=self.compute_dtype)
""",
    fix="""
Check such code by running it (the framework's own layer at bf16 against float32, or a torch port through `ropelaw \
audit module`); --ignore RP117 once checked.
""",
    references=("keras-team/keras-hub PR 1508, Always run the rotary embedding layer in float32",),
)
