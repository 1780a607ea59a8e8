"""The one description of a RoPE setup.

Every entry point (CLI, config loader, linter, notebooks) builds a :class:`RopeSpec` and
hands it on; nothing else re-derives the rotary dimension or the base.

Vocabulary (Liu et al. 2023, "Scaling Laws of RoPE-based Extrapolation", arXiv 2310.05209):

- ``d``: rotary dimension, the number of rotated dims per head (``head_dim`` times
  ``partial_rotary_factor``, or ``rotary_dim``); there are ``d/2`` rotation pairs and pair
  ``i`` turns at ``theta_i = base^(-2i/d)`` radians per token (RoFormer, arXiv 2104.09864,
  eq. 15).
- ``pretrain_base`` (b): the base the model was pre-trained with, at ``train_len`` tokens.
- ``base`` (beta): the base used when tuning and at inference.
- ``tune_len``: the length of the tuning run; ``None`` means no tuning beyond ``train_len``.
- ``scheme`` and ``params``: the scaling scheme applied at inference (``ropelaw.schemes``).
- ``pretrained_with_scheme``: the scheme was in force from the first pre-training step
  (torchtitan's Llama 3 flavors apply the Llama 3.1 bands from step 0), so the frequencies the
  model was trained with are the scheme's at ``pretrain_base`` and ``train_len``, not
  ``pretrain_base^(-2i/d)``; Liu et al.'s critical dimension counts the periods of those
  (``theory.trained_critical_dimension``). False (the default) is the paper's setting: plain
  RoPE in pre-training, the scheme added afterwards to extend the context.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any
from collections.abc import Mapping

from .errors import UsageError

__all__ = ["RopeSpec", "check_base", "check_positive_int", "check_real", "check_rotary_dim"]


def check_real(name: str, value: Any) -> float:
    """Return ``value`` as a finite float or raise ``ValueError`` naming ``name``."""
    if isinstance(value, bool):
        raise UsageError(f"{name} must be a number, got {value!r}")
    try:
        x = float(value)
    except (TypeError, ValueError, OverflowError):
        raise UsageError(f"{name} must be a number, got {value!r}") from None
    if not math.isfinite(x):
        raise UsageError(f"{name} must be finite, got {value!r}")
    return x


def check_positive_int(name: str, value: Any, minimum: int = 1) -> int:
    """Return ``value`` as an int >= ``minimum``; integral floats (``4096.0``, ``1e6``) pass."""
    x = check_real(name, value)
    if x != int(x):
        raise UsageError(f"{name} must be a whole number, got {value!r}")
    n = int(x)
    if n < minimum:
        raise UsageError(f"{name} must be >= {minimum}, got {value!r}")
    return n


def check_rotary_dim(d: Any) -> int:
    """``d`` as an even int >= 2 (integral floats such as ``128.0`` pass), else ``ValueError``.

    Even: dims rotate in pairs (RoFormer, arXiv 2104.09864, eq. 15); at least one pair.
    """
    if isinstance(d, bool) or not isinstance(d, (int, float, str)):
        raise UsageError(f"rotary dimension d must be an even integer >= 2, got {d!r}")
    try:
        n = check_positive_int("rotary dimension d", d, minimum=2)
    except ValueError:
        raise UsageError(f"rotary dimension d must be an even integer >= 2, got {d!r}") from None
    if n % 2:
        raise UsageError(f"rotary dimension d must be even, an even integer >= 2 (pairs of dims rotate), got {n}")
    return n


def check_base(name: str, b: Any) -> float:
    """``b`` as a finite float > 1 (a RoPE base: theta_i = b^(-2i/d) must decrease), else
    ``ValueError`` naming ``name``."""
    x = check_real(name, b)
    if x <= 1:
        raise UsageError(f"{name} must be > 1, got {b!r}")
    return x


def _freeze(value: Any) -> Any:
    """Make scheme parameters hashable: lists become tuples, dicts sorted item tuples."""
    if isinstance(value, Mapping):
        return tuple(sorted((str(k), _freeze(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return tuple(_freeze(v) for v in value)
    return value


@dataclass(frozen=True)
class RopeSpec:
    """A RoPE setup: rotary dims, bases, lengths and the inference scaling scheme.

    Validated on construction; bad values raise ``ValueError`` with a one-line message.
    ``params`` may be given as a dict; it is stored as a sorted tuple of pairs so the spec
    stays hashable. Read parameters with :meth:`param`.
    """

    d: int  # rotated dims per head; even, >= 2 (not always head_dim: partial rotary)
    train_len: int = 4096  # pre-training context; LLaMA 2's 4096 is the paper's example
    base: float = 10000.0  # beta: base at tuning / inference
    pretrain_base: float = 10000.0  # b: Liu et al. assume LLaMA 2's 10000 unless told
    tune_len: int | None = None  # None: no tuning run longer than train_len
    scheme: str = "default"  # key of ropelaw.schemes.SCHEMES
    params: Any = field(default=())  # scheme parameters, e.g. {"factor": 8}
    source: Any = field(default=(), compare=False)  # field -> where it came from (lint)
    # the scheme was in force from the first pre-training step (torchtitan Llama 3); False is
    # Liu et al.'s setting, a model pre-trained with plain RoPE and scaled afterwards
    pretrained_with_scheme: bool = False

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        d = check_rotary_dim(self.d)
        set_(self, "d", d)
        train = check_positive_int("training length", self.train_len)
        if train <= 2 * math.pi:
            raise UsageError(
                f"training length must exceed 2*pi (no pair can complete a period otherwise), got {train}"
            )
        set_(self, "train_len", train)
        for name, label in (("base", "base"), ("pretrain_base", "pretraining base")):
            set_(self, name, check_base(label, getattr(self, name)))
        if self.tune_len is not None:
            tune = check_positive_int("tuning length", self.tune_len)
            if tune < train:
                raise UsageError(
                    f"tuning length must be >= training length {train}, got {tune}"
                )
            set_(self, "tune_len", tune)
        if not isinstance(self.scheme, str) or not self.scheme:
            raise UsageError(f"scheme must be a name, got {self.scheme!r}")
        if not isinstance(self.pretrained_with_scheme, bool):
            raise UsageError(f"pretrained_with_scheme must be true or false, got {self.pretrained_with_scheme!r}")
        if self.pretrained_with_scheme and self.scheme == "default":
            raise UsageError("pretrained_with_scheme needs a scaling scheme: plain RoPE in pre-training is "
                             "the default (pick the scheme the model was trained with)")
        set_(self, "params", _freeze(dict(self.params) if isinstance(self.params, Mapping) else dict(self.params)))
        set_(self, "source", _freeze(dict(self.source) if isinstance(self.source, Mapping) else dict(self.source)))

    # -- derived values -------------------------------------------------------------
    @property
    def pairs(self) -> int:
        """Number of rotation pairs, d/2."""
        return self.d // 2

    @property
    def tuning_length(self) -> int:
        """T_tune: ``tune_len`` or, when there was no longer tuning run, ``train_len``."""
        return self.tune_len if self.tune_len is not None else self.train_len

    def param(self, name: str, default: Any = None) -> Any:
        """The scheme parameter ``name`` (tuples for lists), or ``default``."""
        for key, value in self.params:
            if key == name:
                return value
        return default

    def param_dict(self) -> dict[str, Any]:
        return {k: (list(v) if isinstance(v, tuple) else v) for k, v in self.params}

    def source_of(self, name: str) -> Any:
        """Where field ``name`` came from (a config key path), if recorded."""
        for key, value in self.source:
            if key == name:
                return value
        return None

    def with_(self, **changes: Any) -> RopeSpec:
        """A copy with some fields changed (re-validated)."""
        return replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        return {
            "d": self.d,
            "train_len": self.train_len,
            "base": self.base,
            "pretrain_base": self.pretrain_base,
            "tune_len": self.tuning_length,
            "scheme": self.scheme,
            "params": self.param_dict(),
            "pretrained_with_scheme": self.pretrained_with_scheme,
        }
