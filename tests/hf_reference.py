"""transformers' own RoPE initialisation, the same way under 4.57.1 and 5.23.0, and re-run in float64.

The differential tests compare ropelaw with ``transformers.modeling_rope_utils.ROPE_INIT_FUNCTIONS``
of the *installed* transformers. The two major versions differ in where they read parameters
(4.x: ``config.rope_scaling`` and top-level attributes; 5.x: ``config.rope_parameters`` after
``standardize_rope_params``), and 5.x has no ``"default"`` entry (each model class computes plain
RoPE itself), so this module hides only those plumbing differences; the arithmetic is always
transformers' code.

:func:`reference_inv_freq` with ``float64=True`` runs the very same transformers functions with
``torch.float`` / ``torch.float32`` mapped to ``torch.float64`` (a proxy replaces the module's
``torch`` global for the call) and ``Tensor.float()`` meaning ``Tensor.double()``. A difference between ropelaw \
(float64) and transformers (float32)
counts as float32 noise only if ropelaw agrees with that float64 re-run.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import logging
import warnings

import numpy as np


def transformers_version() -> tuple[int, int, int]:
    import transformers

    return tuple(int(p) for p in transformers.__version__.split(".")[:3])


@contextlib.contextmanager
def quiet():
    """transformers logs (and warns) about unusual but valid configs; tests want neither."""
    logger = logging.getLogger("transformers")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        logger.setLevel(level)


@functools.cache
def config_class(model_type: str):
    from transformers import CONFIG_MAPPING

    return CONFIG_MAPPING[model_type]


def make_config(cfg: dict, model_type: str = "llama"):
    """transformers' config object for a config.json-style mapping (deep-copied: transformers mutates it);
    the same class ``AutoConfig.for_model(model_type, ...)`` builds."""
    with quiet():
        return config_class(model_type)(**copy.deepcopy(cfg))


class _Float64Torch:
    """``torch`` with its 32-bit float dtypes replaced by float64 (for re-running transformers' code)."""

    def __init__(self, torch):
        self._torch = torch

    def __getattr__(self, name):
        if name in ("float", "float32"):
            return self._torch.float64
        return getattr(self._torch, name)


def _default_fn():
    from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS

    if "default" in ROPE_INIT_FUNCTIONS:  # 4.x
        return ROPE_INIT_FUNCTIONS["default"]
    # 5.x: each model computes plain RoPE itself; Phi's is the generic one (it honours partial_rotary_factor)
    from transformers.models.phi.modeling_phi import PhiRotaryEmbedding

    return PhiRotaryEmbedding.compute_default_rope_parameters


def reference_inv_freq(config, rope_type: str, seq_len: int | None = None, *, float64: bool = False):
    """``(inv_freq as float64 numpy, attention_factor)`` from transformers' function for ``rope_type``."""
    import sys

    import torch
    from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS

    fn = _default_fn() if rope_type == "default" else ROPE_INIT_FUNCTIONS[rope_type]
    module = sys.modules[fn.__module__]
    config = copy.deepcopy(config)
    with quiet():
        if not float64:
            inv, attention = fn(config, "cpu", seq_len=seq_len)
        else:
            saved, saved_float = module.torch, torch.Tensor.float
            module.torch = _Float64Torch(torch)
            torch.Tensor.float = torch.Tensor.double  # longrope's ``arange(...).float()``
            try:
                inv, attention = fn(config, "cpu", seq_len=seq_len)
            finally:
                module.torch, torch.Tensor.float = saved, saved_float
    return inv.double().numpy(), float(attention)


def float32_noise(ours, config, rope_type: str, seq_len: int | None = None, *, rtol: float = 1e-9) -> bool:
    """True if ``ours`` (a SchemeResult) agrees with transformers' algorithm re-run in float64."""
    inv64, attention64 = reference_inv_freq(config, rope_type, seq_len, float64=True)
    return (len(ours.inv_freq) == len(inv64)
            and np.allclose(np.asarray(ours.inv_freq), inv64, rtol=rtol, atol=0)
            and abs(ours.attention_factor - attention64) <= rtol * abs(attention64))
