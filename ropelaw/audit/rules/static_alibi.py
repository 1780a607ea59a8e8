"""Static-scan rules for ALiBi (RP131-RP132): distances and biases in the model dtype.

ALiBi (Press et al. 2022, arXiv 2108.12409, section 3) adds ``-m_h * (i - j)`` to the
attention scores. Seed 004 (Baichuan) reports that ALiBi implementations suffer the same
collisions as RoPE: distances built in bf16 keep 896 of 8,192 values, and a bias built from
*absolute* key positions and cast to bf16 merges neighbouring keys far from the start.
"""

from __future__ import annotations

from ...findings import define_rule
from .static_positions import SEED_004

ALIBI = "Press, Smith, Lewis 2022, ALiBi, arXiv 2108.12409, section 3"

ALIBI_DISTANCES_IN_MODEL_DTYPE = define_rule(
    "RP131", "alibi-distances-in-model-dtype", "error",
    "ALiBi positions or distances are built in the model's (or a low-precision) dtype",
    what="""
In an ALiBi function or class (its name mentions alibi), finds positions or distances created
with or converted to a low-precision, input, caller-given, buffer or default dtype
(`torch.arange(n, dtype=dtype)`, `.to(x.dtype)`), and slopes * positions where a side is low precision.
""",
    why="""
In bf16 only 896 of 8,192 distances are exact: keys at different distances get the same bias.
""",
    example="""
def build_alibi_tensor(attention_mask, num_heads, dtype):
    arange_tensor = torch.arange(attention_mask.shape[-1], dtype=dtype)
""",
    fix="""
Build distances as int64 (or float32) and the bias in float32; if the attention kernel needs the model dtype, build \
it from relative distances so near keys stay exact (seed 004).
""",
    references=(ALIBI, SEED_004),
)

ALIBI_BIAS_IN_MODEL_DTYPE = define_rule(
    "RP132", "alibi-bias-in-model-dtype", "warning",
    "the ALiBi bias slopes * positions is converted to the model's (or a low-precision) dtype",
    what="""
In an ALiBi function or class, finds the product of slopes and positions converted to a
low-precision, input or caller-given dtype (`alibi.to(dtype)`).
""",
    why="""
The bias -m * j at absolute key position j >= 256 is rounded in bf16 to a spacing of at least
2m: near keys far from the start share one bias (seed 004: "相对距离越近的 token 则会碰撞").
Kernels such as xformers need the bias in the query's dtype, so this can be a deliberate
trade-off: a warning.
""",
    example="""
alibi = slopes[..., None] * arange_tensor
return alibi.reshape(batch_size * num_heads, 1, seq_length).to(dtype)
""",
    fix="""
Keep the bias in float32 where the kernel allows it; otherwise build it from relative distances (i - j), which stay \
small and exact near the diagonal.
""",
    references=(ALIBI, SEED_004),
)
