"""The scheme registry: one entry per scheme (:class:`SchemeInfo`), filled by :func:`register` and
:func:`exact_frequencies` when :mod:`ropelaw.schemes` imports the scheme modules, and the one entry
point every caller dispatches through (:func:`apply_scheme`)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any
from collections.abc import Callable

from ..errors import UsageError
from ..spec import RopeSpec
from .positions import encoded_relative_position


@dataclass(frozen=True)
class SchemeResult:
    """What a scheme does at inference.

    ``details`` carries scheme-specific intermediate values as (name, value) pairs, e.g.
    YaRN's ``correction_range`` or the per-pair ``interpolation_weight`` (0: theta kept,
    1: theta/s); read them with :meth:`detail`.
    """

    inv_freq: tuple[float, ...]  # theta_i, rad/token, i = 0 .. d/2-1
    attention_factor: float = 1.0  # multiplies cos/sin; logits scale by its square
    window: float | None = None  # ReRoPE / Leaky ReRoPE window w
    leaky_k: float | None = None  # Leaky ReRoPE slope 1/k beyond the window; None: ReRoPE
    details: tuple[tuple[str, Any], ...] = field(default=(), compare=False)

    def relative_position(self, delta: float) -> float:
        """Position the encoding uses for a query-key distance ``delta >= 0`` (seed 000).

        Identity without a window; ReRoPE: min(delta, w); Leaky ReRoPE:
        delta for delta < w, w + (delta - w)/k beyond.
        """
        return encoded_relative_position(delta, self.window, self.leaky_k)

    def max_relative_position(self, length: int) -> float:
        """Largest encoded relative position in a causal input of ``length`` tokens."""
        return self.relative_position(max(length - 1, 0))

    @property
    def periods(self) -> tuple[float, ...]:
        """Period 2*pi/theta_i of each pair, in tokens; ``math.inf`` for theta_i = 0 (a pair
        whose frequency underflowed never turns)."""
        return tuple(math.inf if t == 0 else 2 * math.pi / t for t in self.inv_freq)

    def detail(self, name: str, default: Any = None) -> Any:
        """The scheme-specific value ``name`` (see each scheme's docstring), or ``default``."""
        for key, value in self.details:
            if key == name:
                return value
        return default

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "inv_freq": list(self.inv_freq),
            "attention_factor": self.attention_factor,
            "window": self.window,
            "leaky_k": self.leaky_k,
        }
        for key, value in self.details:
            out[key] = list(value) if isinstance(value, tuple) else value
        return out


@dataclass(frozen=True)
class SchemeInfo:
    """A registry entry: the scheme function and its parameter names (HF ``rope_scaling`` keys)."""

    name: str
    fn: Callable[[RopeSpec, int | None], SchemeResult]
    required: tuple[str, ...]  # params the scheme cannot run without
    optional: tuple[str, ...]
    summary: str
    source: str
    aliases: tuple[str, ...] = ()
    # The same frequencies in arbitrary precision, ``exact(spec, seq_len, mp) -> [mpf]``, for the
    # analytic decisions of ``theory`` (a trained period against T_train); None: not available
    exact: Callable[[RopeSpec, int | None, Any], list] | None = None


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

    def deco(fn: Callable[[RopeSpec, int | None], SchemeResult]):
        info = SchemeInfo(name, fn, required, optional,
                          summary or (fn.__doc__ or "").strip().splitlines()[0], source, aliases)
        for key in (name, *aliases):
            if key in SCHEMES:
                raise RuntimeError(f"scheme {key!r} registered twice")
            SCHEMES[key] = info
        return fn

    return deco


def exact_frequencies(name: str) -> Callable:
    """Attach the arbitrary-precision twin of scheme ``name``'s frequencies to its registry entry.

    The twin has the signature ``(spec, seq_len, mp) -> list`` (``mp``: an mpmath context at the
    working precision) and evaluates the scheme's formula exactly, taking the runtime's discrete
    choices (Llama 3.1 bands, YaRN's float floor/ceil, LongRoPE's short/long switch) from the
    float result, so the two describe the same model.
    """

    def deco(fn: Callable) -> Callable:
        info = SCHEMES[name]
        twin = replace(info, exact=fn)  # one object under the name and every alias, as register makes it
        for key in (info.name, *info.aliases):
            SCHEMES[key] = twin
        return fn

    return deco


def exact_inv_freq(spec: RopeSpec, seq_len: int | None, mp: Any) -> list:
    """``apply_scheme(spec, seq_len).inv_freq`` evaluated in the mpmath context ``mp`` (see
    :func:`exact_frequencies`); ``ValueError`` for a scheme without an exact twin."""
    info = scheme_info(spec.scheme)
    if info.exact is None:
        raise UsageError(f"scheme {info.name!r} has no exact frequencies")
    apply_scheme(spec, seq_len)  # validates the parameters exactly as the float path does
    return info.exact(spec, seq_len, mp)


def scheme_names() -> list[str]:
    """Canonical scheme names (aliases excluded), in registration order."""
    seen: list[str] = []
    for info in SCHEMES.values():
        if info.name not in seen:
            seen.append(info.name)
    return seen


def scheme_info(name: str) -> SchemeInfo:
    """The registry entry for ``name`` (a canonical name or an alias); ValueError if unknown."""
    info = SCHEMES.get(name)
    if info is None:
        from ..errors import did_you_mean

        raise UsageError(f"unknown scheme {name!r}; known: {', '.join(scheme_names())}{did_you_mean(name, SCHEMES)}")
    return info


def apply_scheme(spec: RopeSpec, seq_len: int | None = None) -> SchemeResult:
    """Run ``spec.scheme`` on ``spec``: the one entry point for every caller.

    ``seq_len`` is the current input length; only length-dependent schemes (``dynamic``,
    ``longrope``) use it. Raises ``ValueError`` for an unknown scheme, a missing required
    parameter, an unknown parameter name, or an invalid parameter value.
    """
    info = scheme_info(spec.scheme)
    given = {k for k, v in spec.params if v is not None}  # null in a config means absent
    missing = [p for p in info.required if p not in given]
    if missing:
        raise UsageError(f"scheme {info.name!r} needs parameter(s): {', '.join(missing)}")
    unknown = sorted(given - set(info.required) - set(info.optional))
    if unknown:
        raise UsageError(
            f"scheme {info.name!r} does not take parameter(s): {', '.join(unknown)}"
            + (f" (takes: {', '.join(info.required + info.optional)})" if info.required + info.optional else "")
        )
    return info.fn(spec, seq_len)
