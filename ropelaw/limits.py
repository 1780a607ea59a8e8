"""Plausibility limits on inputs, each defined once with the reason for its value (stdlib only).

Two length limits with different meanings, hence different names:

- :data:`MAX_LENGTH` (2**53): the longest length the CLI's formulas take (``--train``,
  ``--target`` ... of ``bound``, ``base``, ``dims``, ``audit``): beyond it token positions are no
  longer exact integers in float64, so no formula over positions means anything.
- :data:`MAX_CONTEXT` (2**31 - 1): the longest context ``ropelaw lint`` accepts in a config or
  on its command line (RV013): the int32 limit of sequence offsets in attention kernels.

:data:`MAX_FACTOR` (2**20) bounds scaling factors: lint's RV017 and the whole factors ``plan`` searches.

:data:`MAX_D` is the same limit everywhere: the CLI refuses larger ``--d`` and the linter
reports a larger rotary dimension (RV017) without analysing it.
"""

from __future__ import annotations

__all__ = ["MAX_D", "MAX_LENGTH", "MAX_CONTEXT", "MAX_FACTOR", "MAX_MODEL_TYPE", "check_rotary_dim", "MEN_MAX_D",
           "MEN_MAX_TERMS", "men_too_costly"]

# Rotary dimensions: 2**16. Real models rotate 32 .. 512 dims per head (DeepSeek MLA 64, Gemma
# 256); beyond 65,536 the value is a typo, and the per-pair work (O(d)) would be wasted on it.
MAX_D = 1 << 16

# Lengths the CLI's formulas take: 2**53, the first integer after which float64 has gaps
# (2**53 + 1 is not representable), so positions stop being exact integers. No real context
# is anywhere near.
MAX_LENGTH = 2**53

# Contexts in configs (lint): 2**31 - 1 tokens. Sequence offsets are int32 in the attention
# kernels long-context training relies on (FlashAttention's varlen ``cu_seqlens`` must be
# torch.int32), so a longer sequence cannot be indexed there; it is ~200x the longest context a
# public RoPE config advertises (Llama 4 Scout, max_position_embeddings 10,485,760). Anything
# above is a typo (1e30 is transformers' VERY_LARGE_INTEGER sentinel, found in tokenizer configs).
MAX_CONTEXT = 2**31 - 1

# Scaling factors: 2**20 (RV017 in lint; the largest whole factor `plan` searches). A factor s is
# designed for s x the original context; with 2,048, the shortest pre-training context in the corpus
# (tests/configs: GPT-NeoX-20B, Pythia, Falcon), s = 2**20 designs 2**31 tokens, beyond MAX_CONTEXT.
# Public configs use 2 .. 40 (Qwen2.5 YaRN 4, Llama 3.1 8, DeepSeek-V3 40; Phi-3-128k's LongRoPE ratio
# is 32). Independently, lint flags a factor with s x original > MAX_CONTEXT for the config's own
# original length. (Far beyond the limit the scaled frequencies underflow: base 1e4, d 128, s 1e308
# gives 1e4^(-126/128) / 1e308 = 1.2e-312, a subnormal float64.)
MAX_FACTOR = 2**20

# The longest ``model_type`` a config may give: an identifier (transformers' longest is under 40
# characters). The linter matches it against its tables dozens of times and quotes it in messages; a
# 10 MB string made that 1.2 GB and 6 s, so a longer one is refused before anything reads it.
MAX_MODEL_TYPE = 256


def check_rotary_dim(d: float | None, where: str = "") -> None:
    """Refuse a rotary dimension above :data:`MAX_D` before anything is allocated for its pairs (the
    frequencies, a scheme's per-pair factors and every bound are O(d): ``head_dim: 1e308`` in a config made
    ``plan`` build a list of 10^308 frequencies, a MemoryError); ``UsageError`` naming ``where`` (the key or
    flag it came from, as the caller says it)."""
    if d is None or not d > MAX_D:  # NaN and the small values are the callers' to judge (RopeSpec, RV003)
        return
    from .errors import UsageError
    from .numfmt import number

    raise UsageError(f"{where + ': ' if where else ''}rotary dimension d={number(d)} is beyond any real model "
                     f"(at most 2^16 = {MAX_D:,}; see `ropelaw rule RV017`)")


MEN_MAX_D = 1024  # Men et al.'s search checks every m <= L for each grid base, O(d*L) each:
MEN_MAX_TERMS = 1 << 28  # d*L budget; measured: d=128, L=4M in ~3 s; d=16384, L=16384 (2^28) takes > 60 s


def men_too_costly(d: int, target: int) -> str | None:
    """Why Men et al.'s lower bound is skipped (None: it is computed): ``ropelaw base`` and ``plan``."""
    from . import numfmt

    if d > MEN_MAX_D:
        return f"d={d:,} is above {MEN_MAX_D:,}, where the search over B_(m,theta) gets too slow"
    if d * target > MEN_MAX_TERMS:
        return (f"d x target = {numfmt.number(float(d * target))} is above 2^28 terms per base tried "
                "(every m <= target is checked)")
    return None
