"""Reading a scheme's parameters from a :class:`~ropelaw.spec.RopeSpec`: each helper validates one kind
(a real, a positive real, a factor, a length, the original length, a flag, a choice, per-pair
factors) and raises ``UsageError`` (a ``ValueError``) with one line naming the scheme, the parameter, the rule and \
the value."""

from __future__ import annotations

import math
from typing import Any

from ..errors import UsageError
from ..spec import RopeSpec, check_positive_int, check_real
from .registry import scheme_info


_MISSING = object()


def scheme_error(spec: RopeSpec, message: str) -> UsageError:
    return UsageError(f"scheme {scheme_info(spec.scheme).name!r}: {message}")


def real_param(spec: RopeSpec, name: str, default: Any = _MISSING) -> float:
    """Parameter ``name`` as a finite float (``default`` when absent)."""
    value = spec.param(name)
    if value is None:
        if default is _MISSING:
            raise scheme_error(spec, f"needs parameter {name}")
        return default
    try:
        return check_real(name, value)
    except ValueError as exc:
        raise scheme_error(spec, str(exc)) from None


def positive_param(spec: RopeSpec, name: str, default: Any = _MISSING) -> float:
    x = real_param(spec, name, default)
    if x is not None and x <= 0:
        raise scheme_error(spec, f"{name} must be > 0, got {spec.param(name)!r}")
    return x


def factor_param(spec: RopeSpec, name: str = "factor", default: Any = _MISSING) -> float:
    """The scaling factor s >= 1 (s = 1 is the identity for every scheme)."""
    s = real_param(spec, name, default)
    if s is not None and s < 1:
        raise scheme_error(spec, f"{name} must be >= 1 (a context extension), got {spec.param(name)!r}")
    return s


def length_param(spec: RopeSpec, name: str, value: Any) -> int:
    try:
        n = check_positive_int(name, value)
    except ValueError as exc:
        raise scheme_error(spec, str(exc)) from None
    return n


def original_length_param(spec: RopeSpec) -> int:
    """L_orig: param ``original_max_position_embeddings``, else ``spec.train_len``."""
    value = spec.param("original_max_position_embeddings")
    if value is None:
        return spec.train_len
    n = length_param(spec, "original_max_position_embeddings", value)
    if n <= 2 * math.pi:
        raise scheme_error(spec, f"original_max_position_embeddings must exceed 2*pi, got {value!r}")
    return n


def seq_len_param(spec: RopeSpec, seq_len: int | None) -> int:
    """Current input length: the ``seq_len`` argument, else param ``seq_len``, else train_len."""
    if seq_len is not None:
        return length_param(spec, "seq_len", seq_len)
    value = spec.param("seq_len")
    return spec.train_len if value is None else length_param(spec, "seq_len", value)


def flag_param(spec: RopeSpec, name: str, default: bool) -> bool:
    """A switch read the way transformers reads it: ``params.get(name, default)`` tested for
    truth (YaRN's ``truncate`` in ``_compute_yarn_parameters``, 4.57.1 and 5.23.0). So the string
    ``"false"`` is true (a non-empty string), and an explicit ``None`` (JSON null) counts as absent
    here (the loader passes ``False`` for a null, which transformers reads as false); the linter
    reports a quoted boolean (RV001). Lists and mappings are rejected."""
    value = spec.param(name)
    if value is None:
        return default
    if isinstance(value, (bool, int, float, str)):
        return bool(value)
    raise scheme_error(spec, f"{name} must be true or false, got {value!r}")


def choice_param(spec: RopeSpec, name: str, choices: tuple[str, ...]) -> str:
    value = spec.param(name)
    if value is None:
        return choices[0]
    if value not in choices:
        raise scheme_error(spec, f"{name} must be one of {', '.join(choices)}, got {value!r}")
    return value


def pair_factors_param(spec: RopeSpec, name: str) -> tuple[float, ...]:
    """A list of d/2 per-pair factors, each a finite number > 0."""
    value = spec.param(name)
    if not isinstance(value, tuple):
        raise scheme_error(spec, f"{name} must be a list of {spec.pairs} numbers (one per pair), got {value!r}")
    if len(value) != spec.pairs:
        raise scheme_error(spec, f"{name} must have d/2 = {spec.pairs} entries, got {len(value)}")
    out = []
    for i, v in enumerate(value):
        try:
            x = check_real(f"{name}[{i}]", v)
        except ValueError as exc:
            raise scheme_error(spec, str(exc)) from None
        if x <= 0:
            raise scheme_error(spec, f"{name}[{i}] must be > 0, got {v!r}")
        out.append(x)
    return tuple(out)


def blend(inv_freq: tuple[float, ...], factor: float, weight: list[float]) -> tuple[float, ...]:
    """theta'_i = (1 - w_i)*theta_i + w_i*theta_i/s: w = 0 keeps the pair, w = 1 interpolates it."""
    return tuple(t if w == 0 else t / factor if w == 1 else (1 - w) * t + w * t / factor
                 for t, w in zip(inv_freq, weight, strict=True))
