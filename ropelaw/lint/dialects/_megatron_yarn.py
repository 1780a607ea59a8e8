"""Megatron-Core's YaRN as Megatron-LM configures it: the concentration (attention) factor of its
``YarnRotaryEmbedding`` and the YaRN that ``--enable-gpt-oss``'s ModelOpt builder sets (read by the
``megatron`` dialect)."""

from __future__ import annotations

import math

from ..model import Value
from ._framework import Doc, derived, preset

ARGS = "Megatron-LM arguments.py default"


GPT_OSS = "Megatron-LM@d98e8a64 megatron/post_training/model_builder.py modelopt_gpt_hybrid_builder (--enable-gpt-oss)"
# what that builder sets on the TransformerConfig (lines 298-310); GPTModel then builds
# YarnRotaryEmbedding(kv_channels, rotary_base=--rotary-base, scaling_factor=..., ...) from it
GPT_OSS_YARN = {"factor": 32.0, "original_max_position_embeddings": 131072, "beta_fast": 32.0, "beta_slow": 1.0,
                "mscale": 1.0, "mscale_all_dim": 0.0, "truncate": False}


def gpt_oss_yarn(flag: Value, doc: Doc, notes: list) -> tuple[Value, dict, Value]:
    """``(scheme, params, original length)`` of ``--enable-gpt-oss``: the ModelOpt model builder overwrites
    the config's position embedding with YaRN x32 (original 131,072, beta 32 / 1, mscale 1 / 0, correction
    range not rounded: ``yarn_correction_range_round_to_int = False``), whatever the script's
    --position-embedding-type and YaRN flags say; GPTModel takes the config's type (``gpt_model.py``
    147-150). Attention factor get_mscale(32, 1) / get_mscale(32, 0) = 0.1 ln 32 + 1."""
    y = GPT_OSS_YARN
    overridden = [k for k in ("position_embedding_type", "rotary_scaling_factor",
                              "yarn_original_max_position_embeddings",
                              "yarn_beta_fast", "yarn_beta_slow", "mscale", "mscale_all_dim",
                              "yarn_correction_range_round_to_int") if doc.raw(k) is not None]
    if overridden:
        doc.consider(*overridden)
        notes.append("--enable-gpt-oss: the ModelOpt builder overrides "
                     f"{', '.join('--' + k.replace('_', '-') for k in overridden)}")
    params = {k: preset(v, f"{k}: {GPT_OSS}", flag, "int" if k == "original_max_position_embeddings" else
                        "bool" if k == "truncate" else "number")
              for k, v in y.items() if k not in ("mscale", "mscale_all_dim")}
    params["attention_factor"] = derived(
        yarn_concentration_factor(y["factor"], y["mscale"], y["mscale_all_dim"]),
        f"Megatron-Core YaRN concentration get_mscale(32, mscale 1) / get_mscale(32, mscale_all_dim 0) ({GPT_OSS}; "
        "megatron-core _yarn_get_concentration_factor)", flag, "number")
    notes.append("--enable-gpt-oss: YaRN x32 from the ModelOpt model builder (position_embedding_type 'yarn')")
    scheme = derived("yarn", f"{GPT_OSS}: config.position_embedding_type = 'yarn'", flag, "str")
    return scheme, params, params["original_max_position_embeddings"]


def yarn_concentration_factor(s: float, mscale: float, mscale_all_dim: float) -> float:
    """The factor Megatron-Core multiplies YaRN's cos and sin by (megatron-core==0.16.1
    ``models/common/embeddings/yarn_rotary_pos_embedding.py``: ``_yarn_get_concentration_factor``,
    lines 259-271, from ``_yarn_get_mscale`` lines 252-255): ``get_mscale(s, mscale) /
    get_mscale(s, mscale_all_dim)`` with ``get_mscale(s, m) = 0.1 * m * ln(s) + 1`` for s > 1, else 1.
    Megatron-LM passes ``--mscale`` (default 1.0) and ``--mscale-all-dim`` (default 0.0) for MLA and
    for ``--position-embedding-type yarn`` alike (Megatron-LM@d98e8a64 ``megatron/training/arguments.py``
    3560-3563, ``argument_utils.py`` 411-412). DeepSeek-V3 / Kimi-K2 scripts set both to 1.0: factor 1
    (MLA puts ``get_mscale(s, mscale_all_dim)^2`` into the softmax scale instead,
    ``multi_latent_attention.py`` 123-124), the value transformers gives their config.json. Unlike
    transformers, a zero ``mscale_all_dim`` is not "unset": the default gives ``0.1 ln s + 1``."""

    def get_mscale(m: float) -> float:
        return 1.0 if s <= 1 else 0.1 * m * math.log(s) + 1.0
    return get_mscale(mscale) / get_mscale(mscale_all_dim)


def concentration(factor: Value, mscale: Value | None, mscale_all_dim: Value | None, at: Value | None) -> Value:
    """``attention_factor`` of a Megatron YaRN run, with where it came from."""
    m = mscale or preset(1.0, f"mscale: {ARGS} (--mscale)", None)
    a = mscale_all_dim or preset(0.0, f"mscale_all_dim: {ARGS} (--mscale-all-dim)", None)
    s, mv, av = factor.number(), m.number(), a.number()
    if s is None or mv is None or av is None:
        return derived(None, "not derivable: --rotary-scaling-factor, --mscale and --mscale-all-dim must be numbers",
                       at, "number")
    return derived(yarn_concentration_factor(s, mv, av),
                   f"Megatron-Core YaRN concentration get_mscale(s, {m.where} {mv:g}) / get_mscale(s, "
                   f"{a.where} {av:g}) "
                   "(megatron-core==0.16.1 _yarn_get_concentration_factor)", at, "number")
