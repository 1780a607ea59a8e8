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
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

from .spec import RopeSpec

__all__ = [
    "SchemeResult",
    "SchemeInfo",
    "SCHEMES",
    "register",
    "apply_scheme",
    "scheme_names",
    "default_inv_freq",
]


@dataclass(frozen=True)
class SchemeResult:
    """What a scheme does at inference."""

    inv_freq: tuple[float, ...]  # theta_i, rad/token, i = 0 .. d/2-1
    attention_factor: float = 1.0  # multiplies cos/sin; logits scale by its square
    window: float | None = None  # ReRoPE / Leaky ReRoPE window w
    leaky_k: float | None = None  # Leaky ReRoPE slope 1/k beyond the window; None: ReRoPE

    def relative_position(self, delta: float) -> float:
        """Position the encoding uses for a query-key distance ``delta >= 0`` (seed 000).

        Identity without a window; ReRoPE: min(delta, w); Leaky ReRoPE:
        delta for delta < w, w + (delta - w)/k beyond.
        """
        if self.window is None or delta < self.window:
            return float(delta)
        if self.leaky_k is None:
            return float(self.window)
        return self.window + (delta - self.window) / self.leaky_k

    def max_relative_position(self, length: int) -> float:
        """Largest encoded relative position in a causal input of ``length`` tokens."""
        return self.relative_position(max(length - 1, 0))

    @property
    def periods(self) -> tuple[float, ...]:
        """Period 2*pi/theta_i of each pair, in tokens."""
        return tuple(2 * math.pi / t for t in self.inv_freq)


@dataclass(frozen=True)
class SchemeInfo:
    name: str
    fn: Callable[[RopeSpec, "int | None"], SchemeResult]
    required: tuple[str, ...]  # params the scheme cannot run without
    optional: tuple[str, ...]
    summary: str
    source: str


SCHEMES: dict[str, SchemeInfo] = {}


def register(
    name: str,
    *,
    required: tuple[str, ...] = (),
    optional: tuple[str, ...] = (),
    summary: str = "",
    source: str = "",
    aliases: tuple[str, ...] = (),
) -> Callable:
    """Register a scheme function under ``name`` (and ``aliases``)."""

    def deco(fn: Callable[[RopeSpec, "int | None"], SchemeResult]):
        info = SchemeInfo(name, fn, required, optional, summary or (fn.__doc__ or "").strip().splitlines()[0], source)
        for key in (name, *aliases):
            if key in SCHEMES:
                raise RuntimeError(f"scheme {key!r} registered twice")
            SCHEMES[key] = info
        return fn

    return deco


def scheme_names() -> list[str]:
    """Canonical scheme names (aliases excluded), in registration order."""
    seen: list[str] = []
    for info in SCHEMES.values():
        if info.name not in seen:
            seen.append(info.name)
    return seen


def apply_scheme(spec: RopeSpec, seq_len: int | None = None) -> SchemeResult:
    """Run ``spec.scheme`` on ``spec``: the one entry point for every caller.

    Raises ``ValueError`` for an unknown scheme, a missing required parameter, or an
    unknown parameter name.
    """
    info = SCHEMES.get(spec.scheme)
    if info is None:
        raise ValueError(
            f"unknown scheme {spec.scheme!r}; known: {', '.join(scheme_names())}"
        )
    given = {k for k, _ in spec.params}
    missing = [p for p in info.required if p not in given]
    if missing:
        raise ValueError(f"scheme {info.name!r} needs parameter(s): {', '.join(missing)}")
    unknown = sorted(given - set(info.required) - set(info.optional))
    if unknown:
        raise ValueError(
            f"scheme {info.name!r} does not take parameter(s): {', '.join(unknown)}"
        )
    return info.fn(spec, seq_len)


def default_inv_freq(d: int, base: float) -> tuple[float, ...]:
    """theta_i = base^(-2i/d), i = 0 .. d/2-1 (RoFormer, arXiv 2104.09864, eq. 15)."""
    return tuple(base ** (-2.0 * i / d) for i in range(d // 2))


@register(
    "default",
    summary="plain RoPE at the inference base",
    source="RoFormer, arXiv 2104.09864, eq. 15",
)
def _default(spec: RopeSpec, seq_len: int | None = None) -> SchemeResult:
    """Plain RoPE: theta_i = beta^(-2i/d)."""
    return SchemeResult(default_inv_freq(spec.d, spec.base))
