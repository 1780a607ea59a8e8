"""Scaling schemes: one registry, one signature.

Every scheme is a function ``(spec: RopeSpec, seq_len: int | None) -> SchemeResult`` that
returns the per-pair inference frequencies and the attention factor. The CLI, the linter,
the notebooks and the bound analysis all dispatch through :func:`apply_scheme`; a new
scheme is one function and one ``@register`` line.

Conventions
- ``inv_freq[i]`` is theta_i in radians per token for pair i = 0 .. d/2-1, computed from
  ``spec.base`` (the inference base beta) unless the scheme says otherwise.
- ``attention_factor`` multiplies cos and sin (the Hugging Face convention); the attention
  logits are therefore scaled by ``attention_factor**2``.
- ``window`` / ``leaky_k`` describe a non-linear relative-position map (ReRoPE, Leaky
  ReRoPE, seed 000); ``None`` means the identity map (relative position i - j).
- The original (pre-scaling) context length L_orig of every scheme that needs one is the
  parameter ``original_max_position_embeddings`` when given, else ``spec.train_len``.
- A parameter whose value is ``None`` (JSON null) counts as absent, as in transformers.
- Parameters are read and validated by the shared helpers below (``factor_param``,
  ``original_length_param``, ``seq_len_param`` ...): a bad value raises ``ValueError`` with one line
  naming the scheme, the parameter, the rule and the value.

The package: :mod:`.registry` (the registry and :func:`apply_scheme`), :mod:`.frequencies` (one
function per scheme, registered in order), :mod:`.exact` (their mpmath twins), :mod:`.params`
(reading and validating parameters), :mod:`.formulas` (NTK, dynamic NTK, YaRN, LongRoPE closed
forms), :mod:`.positions` (ReRoPE / Leaky ReRoPE position maps).

Parameter names follow the Hugging Face ``rope_scaling`` keys, so a config's dict can be
passed through unchanged (minus ``rope_type``/``type``).
"""

from __future__ import annotations

from .registry import (SCHEMES, SchemeInfo, SchemeResult, apply_scheme, exact_frequencies,  # noqa: F401
                       exact_inv_freq, register, scheme_info, scheme_names)
from .formulas import (default_inv_freq, dynamic_ntk_base, longrope_attention_factor, ntk_scaled_base,
                       qwen_ntk_alpha, yarn_attention_factor, yarn_correction_dim, yarn_correction_range)
from .positions import (encoded_relative_position, leaky_rerope_safe_length, max_relative_position,
                        relative_position_matrix)
from . import frequencies  # noqa: F401,E402  (registers every scheme, in order)
from . import exact  # noqa: F401,E402  (attaches their exact twins)

__all__ = [
    "SchemeResult",
    "SchemeInfo",
    "SCHEMES",
    "register",
    "apply_scheme",
    "exact_inv_freq",
    "scheme_names",
    "scheme_info",
    "default_inv_freq",
    "ntk_scaled_base",
    "dynamic_ntk_base",
    "qwen_ntk_alpha",
    "yarn_correction_dim",
    "yarn_correction_range",
    "yarn_attention_factor",
    "longrope_attention_factor",
    "encoded_relative_position",
    "relative_position_matrix",
    "max_relative_position",
    "leaky_rerope_safe_length",
]
