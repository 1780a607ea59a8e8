"""RP360-RP361: the rotary llama.cpp computes from a GGUF (``ropelaw audit checkpoint model.gguf``).

Raised by :mod:`ropelaw.audit.checkpoint_gguf` from the file's RoPE tensors and ggml's float32 arithmetic.
"""

from __future__ import annotations

from ...findings import define_rule
from ...runtimes import LLAMACPP_VENDORED


GGUF_FACTORS_ROUNDED = define_rule(
    "RP360", "gguf-rope-factors-rounded-in-file", "warning",
    "the frequency factors a GGUF stores were rounded to float16 / bfloat16",
    what="Reads `rope_freqs.weight` (the factors llama.cpp divides each pair's angle by: Llama 3.1's bands) and "
         "finds them stored as F16 / BF16, or stored as F32 with every smooth-band factor exactly a float16 "
         "(bfloat16) number; reports how far the frequencies llama.cpp then runs drift from the Llama 3 formula "
         "the factors fit, and the phase error at the last position of the training context.",
    why="The conversion computes the factors in float64 and stores float32; rounded to float16 each smooth pair's "
        "frequency is off by up to 2^-11 (relative), and the angle error grows linearly with the position.",
    example="rope_freqs.weight  F16 [64]",
    fix="Keep 1-D tensors in F32 when quantising, or convert the model again from its config.json.",
    references=(f"{LLAMACPP_VENDORED}: conversion/llama.py generate_extra_tensors, ggml-cpu/ops.cpp rope_yarn",),
)
GGUF_POSITIONS_INEXACT = define_rule(
    "RP361", "gguf-positions-inexact", "warning",
    "positions of the GGUF's training context do not get their own encoding in llama.cpp's rotary",
    what="Computes every position's cos/sin as ggml's CPU rope does (float32 positions, float32 angles, the "
         "file's frequency factors) and counts the positions whose encoding lies closer to a neighbour's than "
         "to the intended one (the module audit's measure).",
    why="A position that is not encoded as itself is not told apart from its neighbours by attention.",
    example="a GGUF whose factors were rounded so far that the phase error exceeds half a step",
    fix="Store the factors in F32 (or re-convert); a context beyond 2^24 positions is past float32's integers.",
    references=(f"{LLAMACPP_VENDORED}: ggml-cpu/ops.cpp ggml_rope_cache_init",),
)
