"""Scaling laws of RoPE-based extrapolation (Liu et al. 2023, arXiv 2310.05209; seed 001).

Notation (the paper's): ``d`` rotary dims (``d/2`` pairs), pair ``n`` turns at
``theta_n = b^(-2n/d)`` rad/token (RoFormer, arXiv 2104.09864, eq. 15), so its period is
``T_n = 2*pi*b^(2n/d)`` tokens. ``b`` is the pretraining base (10000 in the paper; general
here), ``T_train`` the pretraining length, ``beta`` the base used when tuning and at
inference, ``T_tune >= T_train`` the tuning length.

- Lemma 1 (critical dimension): ``d_extra = 2*ceil((d/2)*log_b(T_train/(2*pi)))``.
- Theorem 3 (extended scaling law): critical base
  ``beta_0 = b^(log_{T_train/2pi}(T_tune/2pi))``; if ``beta > beta_0`` the bound is
  ``T_extra = 2*pi*beta^(d_extra/d)``; if ``beta <= beta_0`` it is ``T_tune`` and the
  critical dimension becomes ``d'_extra = 2*ceil((d/2)*log_beta(T_tune/2pi)) >= d_extra``;
  bases below ``beta_1 = 2T_tune/pi``, ``beta_2 = T_tune/pi``, ``beta_3 = T_tune/(2pi)``
  extrapolate markedly better (no sharp upper bound).

Exactness. Every ceiling and every ``beta`` vs ``beta_0`` comparison is decided in float
first; when the float lands within ~1e-9 of the boundary it is re-decided with mpmath at
60, then 120, then 240 significant digits (imported lazily, only then). For float bases and
integer lengths the ceiling arguments are never integers (``T/2pi`` is transcendental while
``b^(p/q)`` is algebraic), so a high-precision evaluation always separates them.

Lengths and distances are identified as in the paper and in seed 000 (a context of ``T``
tokens is treated as covering relative distances up to ``T``; the off-by-one is ignored).

Inputs are validated with :func:`ropelaw.spec.check_positive_int` / :func:`ropelaw.spec.check_real`
(:func:`~ropelaw.spec.check_rotary_dim`, :func:`~ropelaw.spec.check_base`, which RopeSpec uses too), so
integral floats (``4096.0``, ``1e6``) are accepted and non-integral lengths or dims are a ``ValueError``.

This module is pure Python (``math``); the scheme registry (also pure Python) is imported only
by :func:`pair_table` and for a spec whose scheme is not ``"default"``, so ``ropelaw bound``
with the default scheme does not load it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any
from collections.abc import Callable

from .errors import UsageError
from .numfmt import compact
from .pair_bound import inference_result, inverse_position, period_of, scheme_formula, scheme_pair_bound
from .results import Result
from .spec import RopeSpec, check_base, check_positive_int, check_real, check_rotary_dim  # noqa: F401  (re-exported)

__all__ = [
    "critical_dimension",
    "trained_critical_dimension",
    "trained_inv_freq",
    "critical_base",
    "extrapolation_bound",
    "base_for_context",
    "pair_table",
    "threshold_bases",
    "check_rotary_dim",
    "check_base",
    "BoundResult",
    "PairRow",
    "ABOVE",
    "AT_OR_BELOW",
]

ABOVE = "above_critical_base"
AT_OR_BELOW = "at_or_below_critical_base"

_TWO_PI = 2.0 * math.pi
_NEAR = 1e-9  # relative distance to a boundary below which floats are not trusted
_DIGITS = (60, 120, 240)  # mpmath precisions tried in turn


# -- exact decisions ----------------------------------------------------------------------
def _exact_ceil(approx: float, exact: Callable[[Any], Any]) -> int:
    """ceil(x) for a real x whose float value is ``approx``.

    ``exact(mp)`` recomputes x with the mpmath context ``mp`` (working precision already
    set). Used only when ``approx`` is within ``_NEAR`` (relative) of an integer.
    """
    n = round(approx)
    if abs(approx - n) > _NEAR * max(1.0, abs(approx)):
        return math.ceil(approx)
    import mpmath  # lazy: only at an integer boundary

    for digits in _DIGITS:
        with mpmath.workdps(digits):
            x = exact(mpmath.mp)
            gap = x - n
            if abs(gap) > mpmath.mpf(10) ** (10 - digits):
                return n + 1 if gap > 0 else n
    return n  # indistinguishable from the integer n at 240 digits: ceil(n) = n


def _exact_sign(approx: float, scale: float, exact: Callable[[Any], Any]) -> int:
    """Sign (-1, 0, 1) of a real whose float value is ``approx`` (magnitude ~``scale``)."""
    if abs(approx) > _NEAR * max(1.0, abs(scale)):
        return 1 if approx > 0 else -1
    import mpmath  # lazy

    for digits in _DIGITS:
        with mpmath.workdps(digits):
            x = exact(mpmath.mp)
            if abs(x) > mpmath.mpf(10) ** (10 - digits) * max(1, abs(scale)):
                return 1 if x > 0 else -1
    return 0


# -- input checks (shared with basebound and decay) -----------------------------------------
def _check_length(name: str, t: Any) -> int:
    """A context length: a whole number of tokens > 2*pi (so some pair can complete a period)."""
    n = check_positive_int(name, t)
    if n <= _TWO_PI:
        raise UsageError(f"{name} must exceed 2*pi (no pair completes a period otherwise), got {t!r}")
    return n


def _ceil_half_d_log(d: int, length: float, base: float) -> int:
    """ceil((d/2) * log_base(length/(2*pi))), decided exactly (see module docstring)."""
    approx = (d / 2) * math.log(length / _TWO_PI) / math.log(base)
    if not math.isfinite(approx) or approx > d:
        # callers clamp to [0, d] (d_extra) or only ask whether it exceeds d (capped): past d
        # the exact ceiling does not matter, and huge d (1e308) would overflow round()
        return d + 1
    return _exact_ceil(
        approx, lambda mp: mp.mpf(d) / 2 * mp.log(mp.mpf(length) / (2 * mp.pi)) / mp.log(mp.mpf(base))
    )


# -- Lemma 1, Theorem 3 -------------------------------------------------------------------
def critical_dimension(d: int, train_len: float, base: float = 10000.0) -> int:
    """Critical dimension for RoPE extrapolation (Liu et al. 2023, arXiv 2310.05209, Lemma 1).

    ``d_extra = 2*ceil((d/2) * log_base(T_train/(2*pi)))``, clamped to ``[0, d]``.

    The number of rotary dims whose pair completes a full period within the training
    length: pair ``n`` has period ``2*pi*base^(2n/d)`` and counts iff that is ``<= T_train``,
    so ``d_extra/2`` is the index of the first pair that did *not* see a full period.

    Domain: ``d`` even >= 2, ``base > 1``, ``T_train`` a whole number > 2*pi (``ValueError``
    otherwise; integral floats such as ``4096.0`` pass).
    Edge cases: when ``T_train/(2*pi) > base^((d-2)/d)`` every pair completed a period and
    the formula would exceed ``d``: the result is clamped to ``d``. The ceiling is decided
    exactly (mpmath when the float argument is within 1e-9 of an integer).
    LLaMA 2 (d=128, T_train=4096, base 1e4): 92 (seed 001).
    """
    d = check_rotary_dim(d)
    t = _check_length("training length", train_len)
    b = check_base("base", base)
    return max(0, min(d, 2 * _ceil_half_d_log(d, t, b)))


def trained_inv_freq(spec: RopeSpec) -> tuple[float, ...]:
    """The frequencies theta_i (rad/token) pre-training ran with, i = 0 .. d/2-1.

    Liu et al.'s setting (``spec.pretrained_with_scheme`` false): plain RoPE at the pretraining
    base, ``b^(-2i/d)`` (RoFormer, arXiv 2104.09864, eq. 15). With ``pretrained_with_scheme``:
    the scheme's frequencies at the pretraining base and the training length,
    ``apply_scheme(spec with base = b, seq_len = T_train)`` (torchtitan 0.2.2's Llama 3
    ``precompute_freqs_cis`` applies the Llama 3.1 bands this way from step 0).
    """
    from .schemes import apply_scheme, default_inv_freq  # lazy: not needed by the default bound

    if not spec.pretrained_with_scheme:
        return default_inv_freq(spec.d, spec.pretrain_base)
    return tuple(apply_scheme(_pretraining_spec(spec), spec.train_len).inv_freq)


def _pretraining_spec(spec: RopeSpec) -> RopeSpec:
    """The spec as it stood in pre-training: base b, no tuning run."""
    return spec.with_(base=spec.pretrain_base, tune_len=None)


def trained_critical_dimension(spec: RopeSpec) -> int:
    """Critical dimension of the frequencies actually trained (Liu et al. 2023, arXiv 2310.05209,
    Lemma 1, its defining display).

    Lemma 1 defines ``d_extra`` by the periods of pre-training:
    ``T_n = 2*pi/theta_n <= T_train`` for ``n = 0 .. d_extra/2 - 1`` and ``> T_train`` from
    ``n = d_extra/2`` on; for plain RoPE (``theta_n = b^(-2n/d)``) that is the closed form
    ``2*ceil((d/2)*log_b(T_train/2pi))`` of :func:`critical_dimension`, which this returns when
    ``spec.pretrained_with_scheme`` is false. With it, ``theta_n`` are the scheme's frequencies
    in pre-training (:func:`trained_inv_freq`) and ``d_extra = 2k`` with ``k`` the first pair whose
    trained period exceeds ``T_train`` (``d`` when none does). A pair is decided in float when
    ``T_train*theta_n/(2*pi)`` is farther than 1e-9 (relative) from 1, else with the scheme's
    exact twin (``schemes.exact_inv_freq``: its formula in mpmath at 60/120/240 digits, with the
    runtime's discrete choices such as the Llama 3.1 band of each pair); a period equal to
    ``T_train`` counts as seen (Lemma 1's ``<=``). A frequency that underflowed to 0 never turns.
    Domain: every scheme with frequencies (not ReRoPE / Leaky ReRoPE, which change positions:
    ``ValueError``). Schemes whose trained periods do not grow with the pair index (arbitrary
    LongRoPE factors) are cut at the first unseen pair, the one Theorem 3's bound is taken at.
    torchtitan Llama 3 8B (d = 128, b = 500,000, T_train = 8,192, bands s = 8, low 1, high 4,
    L_orig = 8,192): 64, against 70 for plain RoPE at that base.
    """
    if not spec.pretrained_with_scheme:
        return critical_dimension(spec.d, spec.train_len, spec.pretrain_base)
    from .schemes import exact_inv_freq, scheme_info

    info = scheme_info(spec.scheme)
    if info.exact is None:
        raise UsageError(f"scheme {info.name!r} changes relative positions, not frequencies: "
                         "pretrained_with_scheme is defined for frequency schemes only")
    pre = _pretraining_spec(spec)
    t = spec.train_len
    for n, theta in enumerate(trained_inv_freq(spec)):
        # sign of T_train*theta_n/(2*pi) - 1: >= 0 means the period 2*pi/theta_n <= T_train
        approx = t * theta / _TWO_PI - 1.0

        def exact(mp: Any, n: int = n) -> Any:
            return t * exact_inv_freq(pre, t, mp)[n] / (2 * mp.pi) - 1

        if theta <= 0 or _exact_sign(approx, 1.0, exact) < 0:
            return 2 * n
    return spec.d


def critical_base(train_len: float, tune_len: float, pretrain_base: float = 10000.0) -> float:
    """Critical base (Liu et al. 2023, arXiv 2310.05209, Theorem 3).

    ``beta_0 = b^(log_{T_train/2pi}(T_tune/2pi))`` with ``b`` the pretraining base.

    Tuning with a base above ``beta_0`` leaves the critical dimension as pre-trained, and the
    bound is ``2*pi*beta^(d_extra/d)``; at or below it, the bound is ``T_tune``.
    Domain: whole numbers ``2*pi < T_train <= T_tune``, ``b > 1``. ``T_tune == T_train`` gives ``b``
    exactly (the exponent is 1). Beyond float range (T_train just above 2*pi): ``inf``
    (every base is below it). LLaMA 2 tuned 4K -> 16K: ~71738 (seed 001).
    """
    t = _check_length("training length", train_len)
    u = _check_length("tuning length", tune_len)
    b = check_base("pretraining base", pretrain_base)
    if u < t:
        raise UsageError(f"tuning length must be >= training length {t:g}, got {u:g}")
    if u == t:
        return b
    try:
        return b ** (math.log(u / _TWO_PI) / math.log(t / _TWO_PI))
    except OverflowError:  # e.g. T_train just above 2*pi: the exponent explodes
        return math.inf


def _above_critical_base(beta: float, b: float, t: float, u: float) -> bool:
    """``beta > beta_0``, decided exactly.

    Equivalent (all logs positive) to ``ln(beta)*ln(T_train/2pi) > ln(b)*ln(T_tune/2pi)``;
    with ``T_tune == T_train`` it is the exact float comparison ``beta > b``.
    """
    if u == t:
        return beta > b
    lt, lu = math.log(t / _TWO_PI), math.log(u / _TWO_PI)
    approx = math.log(beta) * lt - math.log(b) * lu
    scale = abs(math.log(beta) * lt)

    def exact(mp: Any) -> Any:
        two_pi = 2 * mp.pi
        return mp.log(mp.mpf(beta)) * mp.log(mp.mpf(t) / two_pi) - mp.log(mp.mpf(b)) * mp.log(mp.mpf(u) / two_pi)

    return _exact_sign(approx, scale, exact) > 0


def threshold_bases(tune_len: float) -> tuple[float, float, float]:
    """``(beta_1, beta_2, beta_3) = (2T/pi, T/pi, T/(2pi))`` for ``T = T_tune`` (Theorem 3).

    Below ``beta_1`` the longest period ``2*pi*beta`` is under ``4*T_tune``: every pair
    sees at least a quarter period in tuning; below ``beta_2`` half a period; below
    ``beta_3`` a full period. The paper (seed 001) reports that bases shrinking through
    2608 .. 652 (at T_tune = 4096) improve extrapolation fastest; such bases have no sharp
    upper bound, perplexity rises slowly past the tuning length, and base 500 (log-scaled)
    beats dynamic NTK at long lengths. Domain: ``T_tune`` a whole number >= 1.
    """
    u = check_positive_int("tuning length", tune_len)
    return 2 * u / math.pi, u / math.pi, u / _TWO_PI


# -- results ------------------------------------------------------------------------------
@dataclass(frozen=True)
class BoundResult(Result):
    """Outcome of :func:`extrapolation_bound` (plain Python numbers; ``inf`` = unbounded)."""

    d: int
    train_len: int
    base: float
    pretrain_base: float
    tune_len: int
    scheme: str
    critical_dimension: int  # d_extra of pretraining (Lemma 1), of the trained frequencies
    critical_base: float | None  # beta_0 (Theorem 3); None when pre-training used the scheme
    regime: str  # ABOVE or AT_OR_BELOW
    extrapolation_bound: float  # tokens; math.inf when no pair limits it
    updated_critical_dimension: int | None  # d'_extra in the at-or-below regime, else None
    capped: bool  # d'_extra's formula exceeded d and was capped at d
    beta_1: float
    beta_2: float
    beta_3: float
    below_thresholds: list  # names of beta_1..3 that the base is below
    critical_pair: int | None  # first pair that did not see a full period (None: all did)
    critical_pair_period: float | None  # its period at inference (tokens)
    liu_bound: float  # Liu's bound for plain RoPE at this base (== bound for "default")
    trained_range_length: float  # longest distance whose encoded position stays <= T_tune
    unbounded: bool
    formula: str
    note: str
    params: dict = field(default_factory=dict)
    pretrained_with_scheme: bool = False  # the scheme's frequencies were trained from step 0


@dataclass(frozen=True)
class PairRow(Result):
    """One rotation pair in :func:`pair_table`."""

    pair: int  # i = 0 .. d/2-1 (dims 2i, 2i+1)
    frequency: float  # theta_i of pretraining (the scheme's if pretrained with it), rad/token
    period: float  # 2*pi/theta_i, tokens
    periods_seen: float  # T_train / period
    full_period_in_training: bool  # period <= T_train, i.e. 2i < d_extra (decided exactly)
    # The same fact in Lemma 1's words (2i < d_extra). Both JSON keys are public (``ropelaw
    # dims --format json`` and the notebooks read either), so both stay; this one is derived
    # from ``full_period_in_training`` in __post_init__ and can never disagree with it.
    inside_critical_dimension: bool = field(init=False)
    inference_frequency: float  # theta_i after the scheme (registry)
    inference_period: float  # 2*pi/theta_i after the scheme (inf if theta_i == 0)

    def __post_init__(self) -> None:
        object.__setattr__(self, "inside_critical_dimension", self.full_period_in_training)


# -- Liu's bound, and the bound through the registry --------------------------------------
def _liu(spec: RopeSpec) -> dict[str, Any]:
    d, t, u, b, beta = spec.d, spec.train_len, spec.tuning_length, spec.pretrain_base, spec.base
    d_extra = critical_dimension(d, t, b)
    beta_0 = critical_base(t, u, b)
    if _above_critical_base(beta, b, t, u):
        # d_extra < d: 2*pi*beta^(d_extra/d) > T_tune automatically; d_extra = d (clamped) can
        # fall below it, and Theorem 3 says tuning never lowers the bound: floor at T_tune
        return dict(d_extra=d_extra, beta_0=beta_0, regime=ABOVE, bound=max(_TWO_PI * beta ** (d_extra / d), float(u)),
                    updated=None, capped=False)
    raw = 2 * _ceil_half_d_log(d, u, beta)
    return dict(d_extra=d_extra, beta_0=beta_0, regime=AT_OR_BELOW, bound=float(u),
                updated=max(0, min(d, raw)), capped=raw > d)


def extrapolation_bound(spec: RopeSpec) -> BoundResult:
    """Extrapolation bound of a RoPE setup (Liu et al. 2023, arXiv 2310.05209, Theorem 3).

    Scheme ``"default"`` (plain RoPE at the inference base beta), the paper exactly:
    ``beta > beta_0``: ``T_extra = 2*pi*beta^(d_extra/d)`` (regime ``above_critical_base``);
    ``beta <= beta_0``: bound ``T_tune``, ``d'_extra = 2*ceil((d/2)*log_beta(T_tune/2pi))``
    capped at ``d`` (``capped`` says when the formula exceeded ``d``), regime
    ``at_or_below_critical_base``. ``beta > beta_0`` is decided exactly (``beta = b`` with
    ``T_tune = T_train`` gives ``beta_0 = b``: at or below, bound ``T_train``). When every
    pair completed a period in training (``d_extra`` clamped to ``d``) the formula
    ``2*pi*beta`` can fall below ``T_tune``; the bound is then floored at ``T_tune``
    (Theorem 3: tuning never lowers extrapolation). For ``d_extra < d`` the floor never
    binds: ``beta > beta_0`` implies ``2*pi*beta^(d_extra/d) > T_tune``.
    ``beta_1..3`` are :func:`threshold_bases` of ``T_tune``; ``below_thresholds`` lists the
    ones the base is under.

    Any other scheme goes through the registry (``ropelaw.schemes.apply_scheme``), which is
    Liu's argument with the scheme's frequencies and relative-position map: pairs
    ``0 .. d_extra/2-1`` saw a full period in pre-training (period ``2*pi*b^(2i/d) <=
    T_train``); the first one that did not, ``k = d_extra/2``, limits extrapolation at the
    distance where its inference period ``2*pi/theta_k`` (from the scheme) is reached by the
    encoded relative position: ``2*pi/theta_k`` for the identity map, ``inf`` for ReRoPE
    with window ``w <= 2*pi/theta_k``, ``w + k_leaky*(2*pi/theta_k - w)`` for Leaky ReRoPE.
    If that distance exceeds ``T_tune`` the regime is ``above_critical_base``; otherwise the
    tuning length is the bound (Theorem 3: tuning never lowers it) and the regime
    ``at_or_below_critical_base``. When every pair saw a full period (``d_extra = d``) no
    pair limits a scheme: ``inf``. For ``"default"`` the same pair argument gives Liu's
    ``2*pi*beta^(d_extra/d)`` in the above regime (tests check this).
    ``liu_bound`` always holds the paper's bound for plain RoPE at ``spec.base``;
    ``trained_range_length`` the longest distance whose encoded position stays within
    ``T_tune`` (for Leaky ReRoPE ``w + k*(T_train - w)``, seed 000).

    Scheme in force from the first pre-training step (``spec.pretrained_with_scheme``, e.g.
    torchtitan's Llama 3): the pairs that saw a full period are counted over the frequencies
    actually trained (:func:`trained_critical_dimension`, Lemma 1's definition) and the first
    unseen pair ``k`` limits the bound as above: its period at inference, which is its trained
    period when inference runs the same scheme at the same base and length. ``critical_base``
    is ``None`` (Theorem 3's ``beta_0`` assumes plain RoPE in pre-training); ``liu_bound`` is
    still the plain-RoPE figure, what the model would reach had it been pre-trained without the
    scheme. torchtitan Llama 3 8B at 8,192 tokens: pair 32's trained period, 11,971 tokens,
    instead of 65,750 for the same bands added after plain-RoPE pre-training.
    """
    liu = _liu(spec)
    d, u = spec.d, spec.tuning_length
    from_start = spec.pretrained_with_scheme
    d_extra = trained_critical_dimension(spec) if from_start else liu["d_extra"]
    k = d_extra // 2 if d_extra < d else None
    b1, b2, b3 = threshold_bases(u)
    below = [name for name, value in (("beta_1", b1), ("beta_2", b2), ("beta_3", b3)) if spec.base < value]
    pairs_note = ("every pair saw a full period in training" if k is None else
                  "no pair saw a full period in training" if k == 0 else  # a scheme from step 0 can slow pair 0
                  f"pairs 0-{k - 1} saw a full period in training, {k}-{d // 2 - 1} did not")
    if from_start:
        pairs_note += f" (pre-trained with scheme {spec.scheme!r} from the first step)"
    if spec.scheme == "default":
        regime, bound, updated, capped, period, trained, formula, note = _plain_rope_bound(
            spec, liu, k, d_extra, pairs_note, below)
    else:
        regime, bound, updated, capped, period, trained, formula, note = _scheme_bound(spec, k, pairs_note)
    return BoundResult(
        d=d, train_len=spec.train_len, base=spec.base, pretrain_base=spec.pretrain_base, tune_len=u,
        scheme=spec.scheme, critical_dimension=d_extra, critical_base=None if from_start else liu["beta_0"],
        regime=regime,
        extrapolation_bound=float(bound), updated_critical_dimension=updated, capped=capped,
        beta_1=b1, beta_2=b2, beta_3=b3, below_thresholds=below, critical_pair=k,
        critical_pair_period=period, liu_bound=float(liu["bound"]), trained_range_length=float(trained),
        unbounded=math.isinf(bound), formula=formula, note=note, params=spec.param_dict(),
        pretrained_with_scheme=from_start,
    )


def _plain_rope_bound(spec: RopeSpec, liu: dict, k: int | None, d_extra: int, pairs_note: str,
                      below: list[str]) -> tuple:
    """:func:`extrapolation_bound` of plain RoPE (Liu et al., Theorem 3, :func:`_liu`): ``(regime, bound,
    updated critical dimension, capped, critical pair's period, trained range, formula, note)``."""
    d, u = spec.d, spec.tuning_length
    regime, bound, updated, capped = liu["regime"], liu["bound"], liu["updated"], liu["capped"]
    period = _TWO_PI * spec.base ** (2 * k / d) if k is not None else None
    trained = float(u)
    if regime == ABOVE and bound == u and d_extra == d:
        formula = f"T_tune (floor: 2*pi * {compact(spec.base)}^({d}/{d}) is below it)"
        note = f"{pairs_note}; the paper's formula falls below the tuning length, which is the bound"
    elif regime == ABOVE:
        formula = f"2*pi * {compact(spec.base)}^({d_extra}/{d})"
        note = f"{pairs_note}; the base is above the critical base, so the bound follows from the critical dimension"
    else:
        formula = "T_tune"
        note = (f"{pairs_note}; the base is at or below the critical base: the bound is the tuning length "
                f"and the critical dimension becomes {updated}" + (" (capped at d)" if capped else ""))
        if below:
            note += ("; below " + "/".join(below) + " extrapolation improves markedly past the tuning "
                     "length, degrading slowly with no sharp upper bound (Liu et al., seed 001)")
    return regime, bound, updated, capped, period, trained, formula, note


def _scheme_bound(spec: RopeSpec, k: int | None, pairs_note: str) -> tuple:
    """:func:`extrapolation_bound` under a scheme: the first untrained pair ``k``'s inference period, reached
    through the scheme's position map, else the tuning length; the same tuple as :func:`_plain_rope_bound`."""
    u = spec.tuning_length
    if k is None:
        bound, period = math.inf, None
        res = inference_result(spec, u)
    else:
        bound, period = scheme_pair_bound(spec, k)
        res = inference_result(spec, u)
    trained = inverse_position(res, float(u))
    updated, capped = None, False
    if bound > u:
        regime = ABOVE
        formula = scheme_formula(spec, res, k, period)
        note = f"{pairs_note}; the first untrained pair sets the bound under scheme {spec.scheme!r}"
    else:
        regime, bound, formula = AT_OR_BELOW, float(u), "T_tune"
        note = f"{pairs_note}; under scheme {spec.scheme!r} the tuning length is the bound"
    return regime, bound, updated, capped, period, trained, formula, note


# -- the inverse --------------------------------------------------------------------------
def _liu_bound(d: int, t: float, b: float, beta: float, d_extra: int) -> float:
    """Liu's bound with T_tune = T_train (the setting of :func:`base_for_context`)."""
    return _TWO_PI * beta ** (d_extra / d) if beta > b else float(t)


def base_for_context(d: int, train_len: float, target: float, pretrain_base: float = 10000.0) -> float:
    """Smallest base whose extrapolation bound reaches ``target`` (Liu et al. 2023, Theorem 3, inverted).

    Tuning at the training length (``T_tune = T_train``, so ``beta_0 = b``): for
    ``beta > b`` the bound ``2*pi*beta^(d_extra/d)`` grows with beta, and solving it for
    ``target`` gives ``beta = lambda*b`` with ``lambda = b^-1 * (T_target/2pi)^(d/d_extra)``.

    Conventions at the edges:
    - ``target <= T_train``: the pretraining base already reaches it; returns ``b``.
    - ``T_train < target <= 2*pi*b^(d_extra/d)``: the bound jumps from ``T_train`` at
      ``beta = b`` to ``2*pi*b^(d_extra/d)`` just above it, so the infimum ``b`` is not
      attained; returns the smallest float above ``b``.
    - otherwise the formula, then adjusted by float ulps so that the returned base reaches
      ``target`` and the next smaller float does not, each comparison of ``2*pi*beta^(d_extra/d)``
      with ``target`` decided exactly (mpmath within 1e-9 of the boundary, :func:`_exact_sign`),
      so the answer is the one an exact bound check of the returned base (``plan``) agrees with.
    Domain: ``d`` even >= 2, ``T_train`` a whole number > 2*pi, ``target`` a real > 0, ``b > 1``.
    """
    d = check_rotary_dim(d)
    t = _check_length("training length", train_len)
    target = check_real("target length", target)  # a real distance the bound must reach
    if target <= 0:
        raise UsageError(f"target length must be > 0, got {target!r}")
    b = check_base("pretraining base", pretrain_base)
    if target <= t:
        return b
    d_extra = critical_dimension(d, t, b)
    try:
        beta = max((target / _TWO_PI) ** (d / d_extra), math.nextafter(b, math.inf))
    except OverflowError:  # e.g. target 1e308 at d_extra < d: beyond float range
        beta = math.inf
    if not math.isfinite(beta):
        raise UsageError(f"target length {target:g} needs a base beyond float range")

    def reaches(x: float) -> bool:  # 2*pi*x^(d_extra/d) >= target, exactly; x > b on this path
        if x <= b:
            return t >= target
        return _exact_sign(_liu_bound(d, t, b, x, d_extra) - target, target,
                           lambda mp: 2 * mp.pi * mp.mpf(x) ** (mp.mpf(d_extra) / d) - mp.mpf(target)) >= 0

    while not reaches(beta):
        beta = math.nextafter(beta, math.inf)
    while True:
        lower = math.nextafter(beta, 0.0)
        if reaches(lower):
            beta = lower
        else:
            return beta


# -- per-pair table -----------------------------------------------------------------------
def pair_table(spec: RopeSpec, seq_len: int | None = None) -> list[PairRow]:
    """Per pair: pretraining frequency and period, periods seen in training, the side of the
    critical dimension, and the inference frequency through the registry.

    ``frequency = b^(-2i/d)`` (RoFormer eq. 15, pretraining base b), ``period =
    2*pi/frequency``, ``periods_seen = T_train/period``; ``full_period_in_training`` is
    ``2i < d_extra`` (Liu et al. Lemma 1, decided exactly, so a pair whose period equals
    T_train up to float noise is classified correctly). ``inference_frequency`` comes from
    ``apply_scheme(spec, seq_len)`` (plain ``beta^(-2i/d)`` for ``"default"``). With
    ``spec.pretrained_with_scheme`` the pretraining columns are the scheme's trained frequencies
    (:func:`trained_inv_freq`) and ``d_extra`` is :func:`trained_critical_dimension`.
    """
    from .schemes import default_inv_freq  # lazy: ``ropelaw bound`` never builds a pair table

    d, t = spec.d, spec.train_len
    d_extra = trained_critical_dimension(spec)
    if spec.scheme == "default":
        inference = default_inv_freq(d, spec.base)
    else:
        inference = tuple(inference_result(spec, seq_len).inv_freq)
    rows = []
    for i, theta in enumerate(trained_inv_freq(spec)):
        period = period_of(theta)
        rows.append(PairRow(
            pair=i, frequency=theta, period=period, periods_seen=t / period,
            full_period_in_training=2 * i < d_extra,  # inside_critical_dimension follows (__post_init__)
            inference_frequency=float(inference[i]), inference_period=period_of(float(inference[i])),
        ))
    return rows
