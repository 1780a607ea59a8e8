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
- Parameters are read and validated by the shared helpers below (``_factor``,
  ``_original_length``, ``_seq_len`` ...): a bad value raises ``ValueError`` with one line
  naming the scheme, the parameter, the rule and the value.

Parameter names follow the Hugging Face ``rope_scaling`` keys, so a config's dict can be
passed through unchanged (minus ``rope_type``/``type``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from fractions import Fraction
from functools import lru_cache
from typing import Any, Callable

from .spec import RopeSpec, check_positive_int, check_real

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
    fn: Callable[[RopeSpec, "int | None"], SchemeResult]
    required: tuple[str, ...]  # params the scheme cannot run without
    optional: tuple[str, ...]
    summary: str
    source: str
    aliases: tuple[str, ...] = ()
    # The same frequencies in arbitrary precision, ``exact(spec, seq_len, mp) -> [mpf]``, for the
    # analytic decisions of ``theory`` (a trained period against T_train); None: not available
    exact: "Callable[[RopeSpec, int | None, Any], list] | None" = None


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
        raise ValueError(f"scheme {info.name!r} has no exact frequencies")
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
        from .errors import did_you_mean

        raise ValueError(f"unknown scheme {name!r}; known: {', '.join(scheme_names())}{did_you_mean(name, SCHEMES)}")
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
        raise ValueError(f"scheme {info.name!r} needs parameter(s): {', '.join(missing)}")
    unknown = sorted(given - set(info.required) - set(info.optional))
    if unknown:
        raise ValueError(
            f"scheme {info.name!r} does not take parameter(s): {', '.join(unknown)}"
            + (f" (takes: {', '.join(info.required + info.optional)})" if info.required + info.optional else "")
        )
    return info.fn(spec, seq_len)


# ---------------------------------------------------------------------------------------
# shared parameter readers: one place for the preamble every scheme needs
# ---------------------------------------------------------------------------------------

_MISSING = object()


def _fail(spec: RopeSpec, message: str) -> ValueError:
    return ValueError(f"scheme {scheme_info(spec.scheme).name!r}: {message}")


def _real(spec: RopeSpec, name: str, default: Any = _MISSING) -> float:
    """Parameter ``name`` as a finite float (``default`` when absent)."""
    value = spec.param(name)
    if value is None:
        if default is _MISSING:
            raise _fail(spec, f"needs parameter {name}")
        return default
    try:
        return check_real(name, value)
    except ValueError as exc:
        raise _fail(spec, str(exc)) from None


def _positive(spec: RopeSpec, name: str, default: Any = _MISSING) -> float:
    x = _real(spec, name, default)
    if x is not None and x <= 0:
        raise _fail(spec, f"{name} must be > 0, got {spec.param(name)!r}")
    return x


def _factor(spec: RopeSpec, name: str = "factor", default: Any = _MISSING) -> float:
    """The scaling factor s >= 1 (s = 1 is the identity for every scheme)."""
    s = _real(spec, name, default)
    if s is not None and s < 1:
        raise _fail(spec, f"{name} must be >= 1 (a context extension), got {spec.param(name)!r}")
    return s


def _length(spec: RopeSpec, name: str, value: Any) -> int:
    try:
        n = check_positive_int(name, value)
    except ValueError as exc:
        raise _fail(spec, str(exc)) from None
    return n


def _original_length(spec: RopeSpec) -> int:
    """L_orig: param ``original_max_position_embeddings``, else ``spec.train_len``."""
    value = spec.param("original_max_position_embeddings")
    if value is None:
        return spec.train_len
    n = _length(spec, "original_max_position_embeddings", value)
    if n <= 2 * math.pi:
        raise _fail(spec, f"original_max_position_embeddings must exceed 2*pi, got {value!r}")
    return n


def _seq_len(spec: RopeSpec, seq_len: int | None) -> int:
    """Current input length: the ``seq_len`` argument, else param ``seq_len``, else train_len."""
    if seq_len is not None:
        return _length(spec, "seq_len", seq_len)
    value = spec.param("seq_len")
    return spec.train_len if value is None else _length(spec, "seq_len", value)


def _flag(spec: RopeSpec, name: str, default: bool) -> bool:
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
    raise _fail(spec, f"{name} must be true or false, got {value!r}")


def _choice(spec: RopeSpec, name: str, choices: tuple[str, ...]) -> str:
    value = spec.param(name)
    if value is None:
        return choices[0]
    if value not in choices:
        raise _fail(spec, f"{name} must be one of {', '.join(choices)}, got {value!r}")
    return value


def _pair_factors(spec: RopeSpec, name: str) -> tuple[float, ...]:
    """A list of d/2 per-pair factors, each a finite number > 0."""
    value = spec.param(name)
    if not isinstance(value, tuple):
        raise _fail(spec, f"{name} must be a list of {spec.pairs} numbers (one per pair), got {value!r}")
    if len(value) != spec.pairs:
        raise _fail(spec, f"{name} must have d/2 = {spec.pairs} entries, got {len(value)}")
    out = []
    for i, v in enumerate(value):
        try:
            x = check_real(f"{name}[{i}]", v)
        except ValueError as exc:
            raise _fail(spec, str(exc)) from None
        if x <= 0:
            raise _fail(spec, f"{name}[{i}] must be > 0, got {v!r}")
        out.append(x)
    return tuple(out)


def _blend(inv_freq: tuple[float, ...], factor: float, weight: list[float]) -> tuple[float, ...]:
    """theta'_i = (1 - w_i)*theta_i + w_i*theta_i/s: w = 0 keeps the pair, w = 1 interpolates it."""
    return tuple(t if w == 0 else t / factor if w == 1 else (1 - w) * t + w * t / factor
                 for t, w in zip(inv_freq, weight))


# ---------------------------------------------------------------------------------------
# closed forms shared by schemes, the CLI and the tests of other modules
# ---------------------------------------------------------------------------------------


@lru_cache(maxsize=4096, typed=True)  # typed: a numpy float base gives numpy floats, kept apart
def default_inv_freq(d: int, base: float) -> tuple[float, ...]:
    """theta_i = base^(-2i/d), i = 0 .. d/2-1 (RoFormer, arXiv 2104.09864, eq. 15).

    The one place this formula is written: ``theory.pair_table``, ``basebound.default_frequencies``
    and ``decay`` call it. No validation here (callers pass a validated even d >= 2 and base > 1);
    each theta is the Python float ``base ** (-2.0*i/d)``. Memoized (an immutable tuple): a lint scan
    asks for the same few (d, base) for every file.
    """
    return tuple(base ** (-2.0 * i / d) for i in range(d // 2))


def ntk_scaled_base(base: float, factor: float, d: int) -> float:
    """NTK-aware base b' = b * s^(d/(d-2)) (bloc97, reddit r/LocalLLaMA 2023-06; Su, "Transformer
    upgrade road 10", kexue.fm/archives/9675; YaRN arXiv 2309.00071 sec. 3.1 eq. for b').

    The exponent d/(d-2) makes the lowest-frequency pair i = d/2-1 exactly an interpolation
    by s: theta'_{d/2-1} = b'^(-(d-2)/d) = theta_{d/2-1}/s, while pair 0 (theta = 1) is
    untouched. Domain: d even >= 4, s >= 1 (s = 1 gives b). For d = 2 the only pair has
    theta = 1 whatever the base, so no base change can interpolate it: ValueError.
    """
    if d < 4:
        raise ValueError(f"NTK-aware scaling needs d >= 4 (the base cannot move the single pair of d = 2), got d = {d}")
    try:
        scaled = base * factor ** (d / (d - 2))
    except OverflowError:
        scaled = math.inf
    if not math.isfinite(scaled):  # an inf base would zero frequencies that are not negligible
        raise ValueError(f"the NTK-scaled base {base:.8g} * {factor:.8g}^({d}/{d - 2}) is beyond float range")
    return scaled


def dynamic_ntk_base(base: float, factor: float, d: int, seq_len: int, original: int) -> float:
    """Dynamic NTK base at sequence length L (Hugging Face ``_compute_dynamic_ntk_parameters``).

    base' = base * (s*L/L_orig - (s-1))^(d/(d-2)) when L > L_orig, else base: the NTK-aware
    base (:func:`ntk_scaled_base`) at the effective factor s_eff = s*L/L_orig - (s-1)
    = 1 + s*(L - L_orig)/L_orig, which is 1 at L = L_orig and grows linearly (s + 1 at
    L = 2*L_orig). Edge cases: L <= L_orig returns base exactly (Hugging Face clamps L to
    max(L, L_orig)); d = 2 with L > L_orig: ValueError.
    """
    if seq_len <= original:
        return base
    effective = factor * seq_len / original - (factor - 1)
    return ntk_scaled_base(base, effective, d)


def yarn_correction_dim(num_rotations: float, d: int, base: float, original: int) -> float:
    """Pair index (fractional) at which a pair turns ``num_rotations`` times in L_orig tokens.

    Solves L_orig * theta_i / (2*pi) = r for i with theta_i = b^(-2i/d):
    i(r) = d * ln(L_orig / (2*pi*r)) / (2 ln b)  (YaRN, arXiv 2309.00071, sec. 3.2 with
    r(d) = L/lambda_d; Hugging Face ``_compute_yarn_parameters.find_correction_dim``).
    Domain: r > 0, b > 1. Smaller i = faster pair = more rotations.
    """
    ratio = original / (num_rotations * 2 * math.pi)
    if not (math.isfinite(ratio) and ratio > 0):
        raise ValueError(f"YaRN correction dimension undefined for {num_rotations!r} rotations "
                         "(beta_fast / beta_slow must be finite and > 0)")
    return d * math.log(ratio) / (2 * math.log(base))


def yarn_correction_range(
    d: int, base: float, original: int, beta_fast: float = 32, beta_slow: float = 1, truncate: bool = True
) -> tuple[float, float]:
    """YaRN's correction range (low, high) in pair indices (Hugging Face ``find_correction_range``).

    low = i(beta_fast), high = i(beta_slow) with :func:`yarn_correction_dim`; with
    ``truncate`` (the default, and the only behaviour before transformers added the
    option) low is floored and high ceiled, so both are ints. Then clamped as the
    reference code does: low to >= 0, high to <= d - 1. Note: d - 1, not the last pair
    index d/2 - 1 (both the YaRN authors' code and transformers 4.57 / 5.23 clamp at dim - 1); a
    high above d/2 - 1 leaves the slowest pairs partway up the ramp instead of fully
    interpolated. The floor and ceiling are taken in float64, as transformers does
    (``math.floor`` / ``math.ceil`` of ``find_correction_dim``): they decide the frequencies
    the model runs with, so they follow the runtime's float arithmetic even where the exact
    value would round the other way (Liu et al.'s critical dimension, an analytic quantity, is
    decided exactly in :mod:`ropelaw.theory`). Example (published): d = 128, b = 1e4,
    L = 4096 -> (20, 46). Domain: beta_fast >= beta_slow > 0.
    """
    if not beta_fast >= beta_slow > 0:
        raise ValueError(f"YaRN needs beta_fast >= beta_slow > 0, got beta_fast={beta_fast}, beta_slow={beta_slow}")
    low = yarn_correction_dim(beta_fast, d, base, original)
    high = yarn_correction_dim(beta_slow, d, base, original)
    if truncate:
        low, high = math.floor(low), math.ceil(high)
    return max(low, 0), min(high, d - 1)


def yarn_attention_factor(factor: float, mscale: float | None = None, mscale_all_dim: float | None = None) -> float:
    """YaRN attention factor sqrt(1/t) multiplying cos/sin (logits scale by 1/t).

    Paper (arXiv 2309.00071, sec. 3.4, "YaRN"): sqrt(1/t) = 0.1 ln(s) + 1, e.g. 1.2079 at
    s = 8. Hugging Face (``_compute_yarn_parameters.get_mscale``; DeepSeek-V2/V3 configs):
    get_mscale(s, m) = 0.1*m*ln(s) + 1 for s > 1, else 1; when ``mscale`` and
    ``mscale_all_dim`` are both given and non-zero the factor is
    get_mscale(s, mscale)/get_mscale(s, mscale_all_dim) (1 when they are equal, as in
    DeepSeek-V3, which applies the mscale to the softmax scale instead); otherwise
    get_mscale(s, 1), the paper's value. Transformers ignores a lone ``mscale``; so do we.
    """

    def get_mscale(m: float) -> float:
        return 0.1 * m * math.log(factor) + 1.0 if factor > 1 else 1.0

    if mscale and mscale_all_dim:
        return get_mscale(mscale) / get_mscale(mscale_all_dim)
    return get_mscale(1.0)


def longrope_attention_factor(factor: float, original: int) -> float:
    """LongRoPE / Phi-3 attention factor sqrt(1 + ln(s)/ln(L_orig)) for s > 1, else 1.

    Source: Hugging Face ``_compute_longrope_parameters`` (Phi-3 "su" scaling; LongRoPE,
    Ding et al. 2024, arXiv 2402.13753). E.g. Phi-3-mini-128k: s = 131072/4096 = 32,
    sqrt(1 + 5/12) = 1.1902.
    """
    if factor <= 1:
        return 1.0
    return math.sqrt(1 + math.log(factor) / math.log(original))


# ---------------------------------------------------------------------------------------
# relative-position maps (seed 000: Su, "ReRoPE", kexue.fm/archives/9708)
# ---------------------------------------------------------------------------------------


def _check_map(window: Any, leaky_k: Any, interpolation: Any = 1.0) -> tuple[int | None, float | None, float]:
    w = None if window is None else check_positive_int("window", window)
    k = None
    if leaky_k is not None:
        if w is None:
            raise ValueError("leaky_k needs a window (Leaky ReRoPE is defined beyond a window w)")
        k = check_real("leaky k", leaky_k)
        if k <= 1:
            raise ValueError(f"leaky k must be > 1 (k = 1 is plain RoPE; k -> inf is ReRoPE), got {leaky_k!r}")
    s = check_real("interpolation", interpolation)
    if s < 1:
        raise ValueError(f"interpolation must be >= 1, got {interpolation!r}")
    if s != 1 and w is not None:
        raise ValueError("interpolation and window cannot be combined (seed 000 defines them separately)")
    return w, k, s


def encoded_relative_position(delta: float, window: float | None = None, leaky_k: float | None = None,
                              interpolation: float = 1.0) -> float:
    """The relative position the encoding uses for query-key distance ``delta >= 0`` (seed 000).

    RoPE: delta. Position Interpolation by k (``interpolation``): delta/k. ReRoPE (window w):
    delta for delta < w, w beyond (min(delta, w)). Leaky ReRoPE (window w, slope 1/k):
    delta for delta < w, w + (delta - w)/k beyond. Continuous at delta = w.
    """
    if interpolation != 1:
        if window is not None:
            raise ValueError("interpolation and window cannot be combined (seed 000 defines them separately)")
        return float(delta) / interpolation
    if window is None or delta < window:
        return float(delta)
    if leaky_k is None:
        return float(window)
    return window + (delta - window) / leaky_k


def relative_position_matrix(length: int, window: int | None = None, leaky_k: float | None = None,
                             interpolation: float = 1.0):
    """The (length, length) relative-position matrix of seed 000, as a float64 numpy array.

    Entry [i, j] (query i, key j) is ``encoded_relative_position(i - j, ...)`` for j <= i and
    NaN above the diagonal (causal mask). Without a window: RoPE's Toeplitz matrix (eq.
    "rope"), or Position Interpolation's (i-j)/k with ``interpolation`` = k; ``window`` w:
    ReRoPE (entries min(i-j, w)); ``window`` and ``leaky_k`` k: Leaky ReRoPE (w + (i-j-w)/k
    beyond the window). ``length`` is capped at 8192 (512 MB); use
    :func:`encoded_relative_position` for longer inputs.
    """
    import numpy as np

    n = check_positive_int("length", length)
    if n > 8192:
        raise ValueError(f"length {n} too large for a dense matrix (max 8192); use encoded_relative_position")
    w, k, s = _check_map(window, leaky_k, interpolation)
    delta = np.subtract.outer(np.arange(n), np.arange(n)).astype(np.float64)  # (n, n) float64, i - j
    if w is None:
        out = delta / s
    elif k is None:
        out = np.minimum(delta, float(w))
    else:
        out = np.where(delta < w, delta, w + (delta - w) / k)
    out[delta < 0] = np.nan  # (n, n) float64, upper triangle masked
    return out


def max_relative_position(length: int, window: int | None = None, leaky_k: float | None = None) -> float:
    """Largest encoded relative position in a causal input of ``length`` tokens (seed 000).

    The largest distance is length - 1 (first token to last), and the map is nondecreasing,
    so the maximum is f(length - 1): length - 1 for RoPE or inside the window, w for
    ReRoPE, w + (length - 1 - w)/k for Leaky ReRoPE.
    """
    n = check_positive_int("length", length)
    w, k, _ = _check_map(window, leaky_k)
    return encoded_relative_position(n - 1, w, k)


def leaky_rerope_safe_length(window: int, k: float | None, train_len: int) -> int | float:
    """Longest input length (tokens) whose Leaky ReRoPE positions all stay in the trained range.

    Convention: a model trained on T_train-token sequences saw relative positions
    0 .. T_train - 1; an input of L tokens has distances 0 .. L - 1 and its largest encoded
    position is f(L - 1) (:func:`max_relative_position`). For w <= T_train - 1,
    f(L - 1) = w + (L - 1 - w)/k <= T_train - 1 gives (seed 000, "positions must not exceed
    the training length")

        L* = w + 1 + floor(k * (T_train - 1 - w)),

    computed exactly (k as an exact fraction). For w >= T_train - 1 the window already
    spans the trained range and L* = T_train. ``k=None`` (ReRoPE, k -> inf): unbounded
    (``math.inf``) when w <= T_train - 1, else T_train.

    The often-quoted w + k*(T_train - w) is the continuous form: the largest *distance* D
    whose encoded position w + (D - w)/k reaches T_train (one past the largest trained
    distance). For integer k it exceeds L* by exactly k - 1 tokens, e.g. w = 256, k = 16,
    T_train = 4096: 61,696 vs L* = 61,681.
    """
    w = check_positive_int("window", window)
    t = check_positive_int("training length", train_len)
    if k is None:  # ReRoPE: positions min(delta, w) stay trained while w <= T_train - 1
        return math.inf if w <= t - 1 else t
    if w >= t - 1:
        return t
    kk = check_real("leaky k", k)
    if kk <= 1:
        raise ValueError(f"leaky k must be > 1, got {k!r}")
    exact_k = Fraction(k) if isinstance(k, (int, Fraction)) else Fraction(kk)
    return w + 1 + math.floor(exact_k * (t - 1 - w))


# ---------------------------------------------------------------------------------------
# the schemes
# ---------------------------------------------------------------------------------------


@register(
    "default",
    summary="plain RoPE at the inference base",
    source="RoFormer, arXiv 2104.09864, eq. 15",
)
def _default(spec: RopeSpec, seq_len: int | None = None) -> SchemeResult:
    """Plain RoPE: theta_i = beta^(-2i/d), i = 0 .. d/2-1, attention factor 1.

    Source: RoFormer, Su et al., arXiv 2104.09864, eq. 15. Domain: what RopeSpec accepts
    (d even >= 2, beta > 1). No parameters; ``seq_len`` is ignored.
    """
    return SchemeResult(default_inv_freq(spec.d, spec.base))


@register(
    "linear",
    aliases=("pi",),
    required=("factor",),
    summary="Position Interpolation: theta_i / s",
    source="Chen et al. 2023, arXiv 2306.15595, sec. 2.2; HF _compute_linear_scaling_rope_parameters",
)
def _linear(spec: RopeSpec, seq_len: int | None = None) -> SchemeResult:
    """Position Interpolation (linear scaling): theta'_i = theta_i / s.

    Source: Chen et al. 2023, "Extending Context Window of Large Language Models via
    Positional Interpolation", arXiv 2306.15595, sec. 2.2, f'(x, m) = f(x, m L/L'):
    position m becomes m/s (s = L'/L), which for RoPE is the same as dividing every
    frequency by s. Hugging Face
    ``_compute_linear_scaling_rope_parameters``. Domain: s >= 1; s = 1 is plain RoPE.
    Attention factor 1.
    """
    s = _factor(spec)
    return SchemeResult(tuple(t / s for t in default_inv_freq(spec.d, spec.base)), details=(("factor", s),))


@register(
    "ntk",
    aliases=("ntk-aware",),
    required=("factor",),
    summary="NTK-aware: base b' = b * s^(d/(d-2))",
    source="bloc97 (r/LocalLLaMA, 2023-06) / Su (kexue.fm/archives/9675); YaRN arXiv 2309.00071 sec. 3.1",
)
def _ntk(spec: RopeSpec, seq_len: int | None = None) -> SchemeResult:
    """NTK-aware scaled RoPE: theta'_i = b'^(-2i/d) with b' = b * s^(d/(d-2)).

    Source: bloc97, "NTK-Aware Scaled RoPE" (r/LocalLLaMA, June 2023); Su Jianlin,
    kexue.fm/archives/9675; written up in YaRN, arXiv 2309.00071, sec. 3.1. The same base
    change as Hugging Face "dynamic" at a fixed factor. Check: s = 2, b = 1e4, d = 128
    gives b' = 20221.3. Domain: s >= 1, d >= 4 (ValueError for d = 2). Attention factor 1.
    Details: ``scaled_base``.
    """
    s = _factor(spec)
    try:
        b = ntk_scaled_base(spec.base, s, spec.d)
    except ValueError as exc:
        raise _fail(spec, str(exc)) from None
    return SchemeResult(default_inv_freq(spec.d, b), details=(("factor", s), ("scaled_base", b)))


@register(
    "dynamic",
    aliases=("dynamic-ntk",),
    required=("factor",),
    optional=("original_max_position_embeddings", "seq_len"),
    summary="dynamic NTK: NTK-aware base at s_eff = s*L/L_orig - (s-1) once L > L_orig",
    source="HF _compute_dynamic_ntk_parameters (emozilla, r/LocalLLaMA 2023-07); YaRN arXiv 2309.00071 sec. 3.3",
)
def _dynamic(spec: RopeSpec, seq_len: int | None = None) -> SchemeResult:
    """Dynamic NTK scaling at the current sequence length L.

    base' = base * ((s*L/L_orig) - (s-1))^(d/(d-2)) when L > L_orig, else base.
    Source: Hugging Face ``_compute_dynamic_ntk_parameters`` (after emozilla's "Dynamically
    Scaled RoPE", r/LocalLLaMA, July 2023). L: the ``seq_len`` argument, else param
    ``seq_len``, else train_len (so by default the frequencies are plain RoPE). L_orig: param
    ``original_max_position_embeddings``, else train_len. Domain: s >= 1, L >= 1; d = 2 with
    L > L_orig is a ValueError. Attention factor 1. Details: ``seq_len``,
    ``effective_factor``, ``scaled_base``.
    """
    s = _factor(spec)
    orig = _original_length(spec)
    length = _seq_len(spec, seq_len)
    effective = 1.0 if length <= orig else s * length / orig - (s - 1)
    try:
        b = dynamic_ntk_base(spec.base, s, spec.d, length, orig)
    except ValueError as exc:
        raise _fail(spec, str(exc)) from None
    return SchemeResult(default_inv_freq(spec.d, b),
                        details=(("factor", s), ("original_max_position_embeddings", orig), ("seq_len", length),
                                 ("effective_factor", effective), ("scaled_base", b)))


def qwen_ntk_alpha(seq_len: int, original: int) -> float:
    """Qwen v1's dynamic-NTK alpha at input length L (Qwen-7B/14B remote code, ``modeling_qwen.py``,
    ``QWenModel.get_ntk_alpha``): alpha = max(2^ceil(log2(L/L_orig) + 1) - 1, 1), a step function
    in float arithmetic as written there: 1 up to L_orig, 3 up to 2 L_orig, 7 up to 4 L_orig, ..."""
    context_value = math.log(seq_len / original, 2) + 1
    return max(2 ** math.ceil(context_value) - 1, 1)


@register(
    "qwen_dynamic",
    aliases=("qwen-dynamic-ntk",),
    optional=("original_max_position_embeddings", "seq_len"),
    summary="Qwen v1 dynamic NTK: base * alpha^(d/(d-2)), alpha = 2^ceil(log2(L/L_orig)+1) - 1 past L_orig",
    source="Qwen-7B remote code modeling_qwen.py (use_dynamic_ntk: get_ntk_alpha, RotaryEmbedding)",
)
def _qwen_dynamic(spec: RopeSpec, seq_len: int | None = None) -> SchemeResult:
    """Qwen v1 (``use_dynamic_ntk: true``): at input length L the base becomes
    base * alpha^(d/(d-2)) with alpha = :func:`qwen_ntk_alpha` (1 while L <= L_orig), the NTK-aware
    base of :func:`ntk_scaled_base` at the integer factor alpha. Source: Qwen-7B's remote code
    ``modeling_qwen.py`` (``get_ntk_alpha``, ``RotaryEmbedding.update_rotary_pos_emb_cache``).
    L: the ``seq_len`` argument, else param ``seq_len``, else train_len; L_orig: param
    ``original_max_position_embeddings`` (the config's ``seq_length``), else train_len. Domain:
    d >= 4 once L > L_orig. Attention factor 1 (``use_logn_attn`` scales queries separately).
    Details: ``seq_len``, ``ntk_alpha``, ``scaled_base``.
    """
    orig = _original_length(spec)
    length = _seq_len(spec, seq_len)
    alpha = qwen_ntk_alpha(length, orig)
    try:
        b = spec.base if alpha == 1 else ntk_scaled_base(spec.base, alpha, spec.d)
    except ValueError as exc:
        raise _fail(spec, str(exc)) from None
    return SchemeResult(default_inv_freq(spec.d, b),
                        details=(("original_max_position_embeddings", orig), ("seq_len", length),
                                 ("ntk_alpha", alpha), ("scaled_base", b)))


@register(
    "yarn",
    required=("factor",),
    optional=("beta_fast", "beta_slow", "original_max_position_embeddings", "truncate", "mscale",
              "mscale_all_dim", "attention_factor", "variant"),
    summary="YaRN: ramp between theta (fast pairs) and theta/s (slow pairs), attention factor 0.1 ln s + 1",
    source="Peng et al. 2023, arXiv 2309.00071, sec. 3.2 (NTK-by-parts) and 3.4; HF _compute_yarn_parameters",
)
def _yarn(spec: RopeSpec, seq_len: int | None = None) -> SchemeResult:
    """YaRN: NTK-by-parts frequencies plus an attention temperature.

    theta'_i = (1 - w_i) * theta_i + w_i * theta_i / s, where the interpolation weight w_i
    rises from 0 (fast pairs, many rotations in L_orig: kept) to 1 (slow pairs: divided
    by s). Source: Peng et al. 2023, "YaRN", arXiv 2309.00071, sec. 3.2 ("NTK-by-parts",
    h(theta_d) = (1 - gamma(r(d))) theta_d/s + gamma(r(d)) theta_d, with gamma = 1 - w) and
    sec. 3.4; Hugging Face ``_compute_yarn_parameters``.

    The two variants differ in BOTH the ramp and the attention factor:

    - ``variant=hf`` (default; transformers and the YaRN authors' code): the ramp is linear
      in the pair index, w_i = clamp((i - low)/(high - low), 0, 1), with (low, high) =
      :func:`yarn_correction_range` (floor/ceil unless ``truncate`` is false, high clamped
      at d-1; if low == high, high += 0.001 as transformers does). Attention factor:
      :func:`yarn_attention_factor` with ``mscale`` / ``mscale_all_dim``.
    - ``variant=paper``: the ramp is linear in the rotation count r_i = L_orig*theta_i/(2*pi)
      (paper: gamma(r) = 0 for r < alpha, 1 for r > beta, (r - alpha)/(beta - alpha) between,
      alpha = beta_slow, beta = beta_fast), so w_i = 1 - gamma(r_i); no rounding, no clamp.
      Attention factor sqrt(1/t) = 0.1 ln(s) + 1; ``mscale``, ``mscale_all_dim`` and
      ``truncate`` are hf-only and rejected here.

    Both variants agree outside the ramp (pairs with r_i >= beta_fast kept, r_i <= beta_slow
    divided by s, up to the hf rounding of the range) and differ inside it. An explicit
    ``attention_factor`` (> 0) overrides either. Defaults: beta_fast 32, beta_slow 1 (the
    paper's alpha = 1, beta = 32 for LLaMA). Domain: s >= 1, beta_fast >= beta_slow > 0 (equal
    betas, as in Kimi K2's config, make the ramp a step: transformers runs them).
    Details: ``variant``, ``correction_range`` ((low, high) pair indices; for the paper
    variant the unrounded dims of beta_fast, beta_slow), ``interpolation_weight``.
    """
    s = _factor(spec)
    orig = _original_length(spec)
    variant = _choice(spec, "variant", ("hf", "paper"))
    beta_fast = _positive(spec, "beta_fast", 32.0)
    beta_slow = _positive(spec, "beta_slow", 1.0)
    if not beta_fast >= beta_slow:
        raise _fail(spec, f"beta_fast must be >= beta_slow, got beta_fast={beta_fast:g}, beta_slow={beta_slow:g}")
    explicit = _positive(spec, "attention_factor", None)
    theta = default_inv_freq(spec.d, spec.base)
    if variant == "hf":
        truncate = _flag(spec, "truncate", True)
        low, high = yarn_correction_range(spec.d, spec.base, orig, beta_fast, beta_slow, truncate)
        top = high + 0.001 if low == high else high
        weight = [min(max((i - low) / (top - low), 0.0), 1.0) for i in range(spec.pairs)]
        mscale = _real(spec, "mscale", None)
        mscale_all_dim = _real(spec, "mscale_all_dim", None)
        factor = yarn_attention_factor(s, mscale, mscale_all_dim)
    else:
        hf_only = [p for p in ("truncate", "mscale", "mscale_all_dim") if spec.param(p) is not None]
        if hf_only:
            raise _fail(spec, f"{', '.join(hf_only)} apply to variant 'hf' only (the paper has no such parameter)")
        low = yarn_correction_dim(beta_fast, spec.d, spec.base, orig)
        high = yarn_correction_dim(beta_slow, spec.d, spec.base, orig)
        weight = []
        for t in theta:
            r = orig * t / (2 * math.pi)  # rotations of pair i in L_orig tokens
            gamma = (0.0 if r < beta_slow else 1.0 if r >= beta_fast else
                     (r - beta_slow) / (beta_fast - beta_slow))
            weight.append(1.0 - gamma)
        factor = yarn_attention_factor(s)
    return SchemeResult(
        _blend(theta, s, weight),
        attention_factor=explicit if explicit is not None else factor,
        details=(("variant", variant), ("factor", s), ("original_max_position_embeddings", orig),
                 ("beta_fast", beta_fast), ("beta_slow", beta_slow), ("correction_range", (low, high)),
                 ("interpolation_weight", tuple(weight))),
    )


@register(
    "llama3",
    required=("factor",),
    optional=("low_freq_factor", "high_freq_factor", "original_max_position_embeddings"),
    summary="Llama 3.1 wavelength bands: keep short, divide long by s, smooth between",
    source="Meta Llama 3.1 (arXiv 2407.21783); HF _compute_llama3_parameters",
)
def _llama3(spec: RopeSpec, seq_len: int | None = None) -> SchemeResult:
    """Llama 3.1 frequency bands by wavelength lambda_i = 2*pi/theta_i.

    With L_orig, low = ``low_freq_factor`` and high = ``high_freq_factor``:
    lambda_i < L_orig/high -> theta_i (kept); lambda_i > L_orig/low -> theta_i/s;
    otherwise smooth = (L_orig/lambda_i - low)/(high - low) and
    theta'_i = (1 - smooth)*theta_i/s + smooth*theta_i (continuous at both edges).
    Source: Hugging Face ``_compute_llama3_parameters`` (Meta's reference code for Llama
    3.1, "The Llama 3 Herd of Models", arXiv 2407.21783). Llama 3.1: s = 8, low = 1,
    high = 4, L_orig = 8192, base 500000, d = 128: wavelength thresholds 2048 and 8192.
    Defaults: low_freq_factor 1, high_freq_factor 4 (Llama 3.1's); L_orig: param
    ``original_max_position_embeddings``, else train_len. Domain: s >= 1,
    0 < low <= high (ValueError "band factors out of order" otherwise; Llama 4 uses low = high = 1:
    no smoothing band). Attention factor 1.
    Details: ``band`` per pair ("high": kept, "medium": smoothed, "low": divided),
    ``interpolation_weight``, ``low_freq_wavelen``, ``high_freq_wavelen``.
    """
    s = _factor(spec)
    orig = _original_length(spec)
    low = _positive(spec, "low_freq_factor", 1.0)
    high = _positive(spec, "high_freq_factor", 4.0)
    if not low <= high:
        raise _fail(spec, f"band factors out of order: low_freq_factor ({low:g}) must be <= high_freq_factor ({high:g})")
    low_freq_wavelen = orig / low  # longer than this: divided by s
    high_freq_wavelen = orig / high  # shorter than this: kept
    theta = default_inv_freq(spec.d, spec.base)
    bands, weight = [], []
    for t in theta:
        wavelen = 2 * math.pi / t
        if wavelen < high_freq_wavelen:
            bands.append("high")
            weight.append(0.0)
        elif wavelen > low_freq_wavelen:
            bands.append("low")
            weight.append(1.0)
        elif high == low:  # Llama 4 (low = high = 1): no smoothing band; a wavelength of exactly L_orig is kept
            bands.append("high")
            weight.append(0.0)
        else:
            bands.append("medium")
            weight.append(1.0 - (orig / wavelen - low) / (high - low))
    return SchemeResult(
        _blend(theta, s, weight),
        details=(("factor", s), ("low_freq_factor", low), ("high_freq_factor", high),
                 ("original_max_position_embeddings", orig), ("low_freq_wavelen", low_freq_wavelen),
                 ("high_freq_wavelen", high_freq_wavelen), ("band", tuple(bands)),
                 ("interpolation_weight", tuple(weight))),
    )


@register(
    "longrope",
    aliases=("su",),
    required=("short_factor", "long_factor"),
    optional=("factor", "max_position_embeddings", "original_max_position_embeddings", "attention_factor",
              "seq_len"),
    summary="LongRoPE / Phi-3: per-pair factors theta_i / f_i, long factors past L_orig",
    source="Ding et al. 2024, arXiv 2402.13753; HF _compute_longrope_parameters (Phi-3 'su')",
)
def _longrope(spec: RopeSpec, seq_len: int | None = None) -> SchemeResult:
    """LongRoPE per-pair rescaling: theta'_i = theta_i / f_i.

    f = ``long_factor`` when the current length L > L_orig, else ``short_factor`` (each a
    list of d/2 numbers > 0). Attention factor sqrt(1 + ln(s)/ln(L_orig)) for s > 1, else 1
    (:func:`longrope_attention_factor`), with s = max_position_embeddings/L_orig when
    ``max_position_embeddings`` is given (Phi-3's configs), else ``factor``; an explicit
    ``attention_factor`` overrides. One of the three must be given; ``factor`` and
    ``max_position_embeddings`` must agree when both are. Source: Ding et al. 2024,
    "LongRoPE", arXiv 2402.13753; Hugging Face ``_compute_longrope_parameters``. L: the
    ``seq_len`` argument, else param ``seq_len``, else train_len (short factors, as
    transformers at initialisation). L_orig: param ``original_max_position_embeddings``,
    else train_len. Details: ``factors_used`` ("short"/"long"), ``seq_len``, ``factor``,
    ``ext_factors``.
    """
    short = _pair_factors(spec, "short_factor")
    long = _pair_factors(spec, "long_factor")
    orig = _original_length(spec)
    length = _seq_len(spec, seq_len)
    factor = _factor(spec, default=None)
    max_pos = spec.param("max_position_embeddings")
    if max_pos is not None:
        implied = _length(spec, "max_position_embeddings", max_pos) / orig
        if factor is not None and not math.isclose(factor, implied, rel_tol=1e-9):
            raise _fail(spec, f"factor {factor:g} disagrees with max_position_embeddings/original length "
                              f"= {max_pos}/{orig} = {implied:g}")
        factor = implied
    explicit = _positive(spec, "attention_factor", None)
    if factor is None and explicit is None:
        raise _fail(spec, "needs factor, max_position_embeddings or attention_factor to set the attention factor")
    if factor is not None and factor < 1:
        raise _fail(spec, f"max_position_embeddings must be >= the original length {orig}, got {max_pos!r}")
    used = "long" if length > orig else "short"
    ext = long if used == "long" else short
    theta = default_inv_freq(spec.d, spec.base)
    return SchemeResult(
        tuple(t / f for t, f in zip(theta, ext)),
        attention_factor=explicit if explicit is not None else longrope_attention_factor(factor, orig),
        details=(("factors_used", used), ("seq_len", length), ("original_max_position_embeddings", orig),
                 ("factor", factor), ("ext_factors", ext)),
    )


@register(
    "proportional",
    required=("head_dim",),
    optional=("factor",),
    summary="proportional RoPE (Gemma 4): theta_i = b^(-2i/D) / s over the first d/2 pairs of a D-dim head",
    source="transformers 5.23.0 modeling_rope_utils._compute_proportional_rope_parameters",
)
def _proportional(spec: RopeSpec, seq_len: int | None = None) -> SchemeResult:
    """Proportional RoPE: theta_i = b^(-2i/D) / s for i = 0 .. d/2 - 1, the exponent over the whole
    head dim D while only d = 2 * int(p * D // 2) dims rotate (p: partial_rotary_factor); the other
    D - d dims do not rotate (frequency 0 in transformers' table).

    Source: transformers 5.23.0 ``modeling_rope_utils._compute_proportional_rope_parameters``
    (rope_angles = int(p * head_dim // 2); inv_freq = 1 / base^(arange(0, 2 rope_angles, 2) / head_dim),
    zeros appended, then divided by ``factor``); Gemma 4's full-attention layers. The same
    frequencies as plain RoPE over d dims at base b^(d/D). Domain: D a whole number >= d, s >= 1
    (default 1). Attention factor 1. Details: ``head_dim``, ``factor``.
    """
    D = _length(spec, "head_dim", spec.param("head_dim"))
    if D < spec.d:
        raise _fail(spec, f"head_dim {D} is smaller than the rotated dims d = {spec.d}")
    s = _factor(spec, default=1.0)
    return SchemeResult(tuple(spec.base ** (-2.0 * i / D) / s for i in range(spec.d // 2)),
                        details=(("head_dim", D), ("factor", s)))


def _window_params(spec: RopeSpec) -> tuple[int, float | None]:
    """ReRoPE's window w (a whole number >= 1) and Leaky ReRoPE's k (> 1) when given."""
    try:
        w, k, _ = _check_map(spec.param("window"), spec.param("k"))
    except ValueError as exc:
        raise _fail(spec, str(exc).replace("leaky k", "k")) from None
    return w, k


@register(
    "rerope",
    required=("window",),
    summary="ReRoPE: relative position min(i-j, w); frequencies unchanged",
    source="Su 2023, kexue.fm/archives/9708 (seed 000)",
)
def _rerope(spec: RopeSpec, seq_len: int | None = None) -> SchemeResult:
    """ReRoPE (Rectified RoPE): encoded relative position min(i - j, w), frequencies unchanged.

    Source: Su Jianlin, "Transformer upgrade road 12: ReRoPE for infinite extrapolation?",
    kexue.fm/archives/9708, 2023-08-07 (seed 000, matrix "rerope"). The largest encoded
    position is w whatever the input length, so it stays in the trained range when
    w <= T_train - 1 (the seed asks for w < T_train; w of 1/4..1/2 of T_train worked best).
    Domain: window a whole number >= 1. Details: ``safe_length`` (math.inf when
    w <= T_train - 1, else T_train).
    """
    w, _ = _window_params(spec)
    return SchemeResult(default_inv_freq(spec.d, spec.base), window=w,
                        details=(("safe_length", leaky_rerope_safe_length(w, None, spec.train_len)),))


@register(
    "leaky_rerope",
    aliases=("leaky-rerope",),
    required=("window", "k"),
    summary="Leaky ReRoPE: i-j inside window w, w + (i-j-w)/k beyond; frequencies unchanged",
    source="Su 2023, kexue.fm/archives/9708 (seed 000)",
)
def _leaky_rerope(spec: RopeSpec, seq_len: int | None = None) -> SchemeResult:
    """Leaky ReRoPE: encoded position i - j inside the window, w + (i - j - w)/k beyond.

    Source: seed 000 (Su, kexue.fm/archives/9708), matrix "leaky-rerope"; k -> inf gives
    ReRoPE, k = 1 plain RoPE. Frequencies unchanged. The longest input whose encoded
    positions stay inside the trained range is :func:`leaky_rerope_safe_length`
    (w + 1 + floor(k (T_train - 1 - w)); ~ w + k (T_train - w)). Domain: window a whole
    number >= 1, k > 1. Details: ``safe_length``.
    """
    w, k = _window_params(spec)
    return SchemeResult(default_inv_freq(spec.d, spec.base), window=w, leaky_k=k,
                        details=(("safe_length", leaky_rerope_safe_length(w, k, spec.train_len)),))


# ---------------------------------------------------------------------------------------
# exact twins (arbitrary precision) of the frequency schemes, for theory's exact decisions;
# ReRoPE and Leaky ReRoPE change positions, not frequencies, and have none
# ---------------------------------------------------------------------------------------


def _exact_theta(mp: Any, d: int, base: Any) -> list:
    """theta_i = base^(-2i/d) with the exponent as the exact rational -2i/d (RoFormer eq. 15)."""
    b = mp.mpf(base)
    return [b ** (-mp.mpf(2 * i) / d) for i in range(d // 2)]


def _exact_blend(mp: Any, theta: list, factor: float, weight: list) -> list:
    """:func:`_blend` exactly: (1 - w_i)*theta_i + w_i*theta_i/s."""
    s = mp.mpf(factor)
    return [(1 - w) * t + w * t / s for t, w in zip(theta, weight)]


def _exact_ntk_theta(mp: Any, spec: RopeSpec, factor: Any) -> list:
    """theta_i at the NTK-aware base b * s^(d/(d-2)) (:func:`ntk_scaled_base`), s exact."""
    s = mp.mpf(factor)
    base = mp.mpf(spec.base) * (s ** (mp.mpf(spec.d) / (spec.d - 2)) if s != 1 else 1)
    return _exact_theta(mp, spec.d, base)


@exact_frequencies("default")
def _default_exact(spec: RopeSpec, seq_len: int | None, mp: Any) -> list:
    return _exact_theta(mp, spec.d, spec.base)


@exact_frequencies("linear")
def _linear_exact(spec: RopeSpec, seq_len: int | None, mp: Any) -> list:
    s = mp.mpf(_factor(spec))
    return [t / s for t in _exact_theta(mp, spec.d, spec.base)]


@exact_frequencies("proportional")
def _proportional_exact(spec: RopeSpec, seq_len: int | None, mp: Any) -> list:
    D, s, b = int(spec.param("head_dim")), mp.mpf(_factor(spec, default=1.0)), mp.mpf(spec.base)
    return [b ** (-mp.mpf(2 * i) / D) / s for i in range(spec.d // 2)]


@exact_frequencies("ntk")
def _ntk_exact(spec: RopeSpec, seq_len: int | None, mp: Any) -> list:
    return _exact_ntk_theta(mp, spec, _factor(spec))


@exact_frequencies("dynamic")
def _dynamic_exact(spec: RopeSpec, seq_len: int | None, mp: Any) -> list:
    s, orig, length = _factor(spec), _original_length(spec), _seq_len(spec, seq_len)
    if length <= orig:
        return _exact_theta(mp, spec.d, spec.base)
    return _exact_ntk_theta(mp, spec, mp.mpf(s) * length / orig - (mp.mpf(s) - 1))


@exact_frequencies("qwen_dynamic")
def _qwen_dynamic_exact(spec: RopeSpec, seq_len: int | None, mp: Any) -> list:
    alpha = _qwen_dynamic(spec, seq_len).detail("ntk_alpha")  # the runtime's step (float decision)
    return _exact_ntk_theta(mp, spec, alpha)


@exact_frequencies("yarn")
def _yarn_exact(spec: RopeSpec, seq_len: int | None, mp: Any) -> list:
    res = _yarn(spec, seq_len)
    s, orig = res.detail("factor"), res.detail("original_max_position_embeddings")
    theta = _exact_theta(mp, spec.d, spec.base)
    if res.detail("variant") == "hf":  # the ramp over pair indices, range as the runtime rounded it
        low, high = res.detail("correction_range")
        top = high + 0.001 if low == high else high  # the float the runtime divides by
        lo, span = mp.mpf(low), mp.mpf(top) - mp.mpf(low)
        weight = [min(max((i - lo) / span, mp.mpf(0)), mp.mpf(1)) for i in range(spec.pairs)]
    else:  # the paper's ramp over rotation counts r_i = L_orig*theta_i/(2*pi)
        fast, slow = mp.mpf(res.detail("beta_fast")), mp.mpf(res.detail("beta_slow"))
        weight = []
        for t in theta:
            r = orig * t / (2 * mp.pi)
            gamma = mp.mpf(0) if r < slow else mp.mpf(1) if r >= fast else (r - slow) / (fast - slow)
            weight.append(1 - gamma)
    return _exact_blend(mp, theta, s, weight)


@exact_frequencies("llama3")
def _llama3_exact(spec: RopeSpec, seq_len: int | None, mp: Any) -> list:
    res = _llama3(spec, seq_len)
    s, orig = res.detail("factor"), res.detail("original_max_position_embeddings")
    low, high = mp.mpf(res.detail("low_freq_factor")), mp.mpf(res.detail("high_freq_factor"))
    theta = _exact_theta(mp, spec.d, spec.base)
    weight = []
    for t, band in zip(theta, res.detail("band")):  # bands as the runtime decided them (float)
        if band == "high":
            weight.append(mp.mpf(0))
        elif band == "low":
            weight.append(mp.mpf(1))
        else:  # smooth = (L_orig/lambda_i - low)/(high - low), lambda_i = 2*pi/theta_i
            weight.append(1 - (orig * t / (2 * mp.pi) - low) / (high - low))
    return _exact_blend(mp, theta, s, weight)


@exact_frequencies("longrope")
def _longrope_exact(spec: RopeSpec, seq_len: int | None, mp: Any) -> list:
    ext = _longrope(spec, seq_len).detail("ext_factors")  # short or long, as the runtime chose
    return [t / mp.mpf(f) for t, f in zip(_exact_theta(mp, spec.d, spec.base), ext)]
