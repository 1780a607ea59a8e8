"""The options of ``ropelaw.plan``: how each one's parameters are chosen, its bound, cost and caveats.

Each builder returns an :class:`~ropelaw.plan.Option` whose bound is ``theory.extrapolation_bound`` of its
spec, decided against the target by ``ropelaw.reach.reaches`` (exact at the boundary); the rules for
each parameter are in ``ropelaw.plan``'s docstring and docs/plan.md. A base is written as a person writes
it (:func:`written_base`: rounded up to 2 significant figures, and checked to still reach the target).
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

from .errors import UsageError
from .numfmt import count, number, short
from .limits import MAX_FACTOR  # the largest whole factor searched: RV017's limit
from .plan_types import COST_NONE, COST_TARGET, COST_TRAIN, COST_UNKNOWN, SOURCES, Caveat, Option
from .reach import reaches
from .spec import RopeSpec

__all__ = ["smallest_whole", "make_option", "written_base", "plain_spec", "base_option", "train_option",
           "factor_option", "rerope_options", "longrope_option"]


def smallest_whole(make, target: int, limit: int = MAX_FACTOR) -> tuple[int | None, Any]:
    """Smallest integer ``s`` in ``1 .. limit`` with ``make(s)``'s bound >= ``target``, by doubling
    then bisection (the bound does not decrease with s), and its BoundResult; ``(None, r)`` with the
    result at ``limit`` when none does."""
    ok, r = reaches(make(1), target)
    if ok:
        return 1, r
    lo, hi = 1, 2
    while True:
        ok, r_hi = reaches(make(hi), target)
        if ok:
            break
        lo = hi
        if hi >= limit:
            return None, r_hi
        hi = min(hi * 2, limit)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        ok, r_mid = reaches(make(mid), target)
        if ok:
            hi, r_hi = mid, r_mid
        else:
            lo = mid
    return hi, r_hi


# -- the options ---------------------------------------------------------------------------
def _men_supported(spec: RopeSpec, target: int) -> int | None:
    """Men et al.'s condition for the option's frequencies at the target: the largest L' <= target
    with B_(m,theta) >= 0 for every m <= L' (``basebound.supported_length``); None for ReRoPE
    windows (positions, not frequencies, change) or when too costly (``limits.men_too_costly``)."""
    from .limits import men_too_costly
    from .schemes import apply_scheme

    if spec.scheme in ("rerope", "leaky_rerope") or men_too_costly(spec.d, target) is not None:
        return None
    from .lint.rules.lengths import men_supported_length

    inv = tuple(apply_scheme(spec, target).inv_freq)
    return men_supported_length(inv, target)


def _men_lower_bound(d: int, target: int) -> float | None:
    from .limits import men_too_costly

    if men_too_costly(d, target) is not None:
        return None
    from .lint.rules.lengths import lower_bound

    return lower_bound(d, target)


def make_option(name: str, title: str, spec: RopeSpec, target: int, parameters: dict, cost: str, rank: int,
            source: str, how: str, caveats: list, r: Any = None, **extra: Any) -> Option:
    from .evidence import evidence_for

    ok, r = reaches(spec, target, r)
    return Option(name=name, title=title, spec=spec, bound=float(r.extrapolation_bound), reaches=ok,
                  parameters=parameters, cost=cost, cost_rank=rank, source=source, how=how, caveats=caveats,
                  critical_dimension=r.critical_dimension, men_supported=_men_supported(spec, target), extra=extra,
                  evidence=evidence_for(name, spec.scheme, r.regime))


def written_base(x: float, digits: int = 2) -> float:
    """``x`` rounded up to ``digits`` significant figures, as a person writes a base (4.8e7, not
    47,731,929.65): exact in decimal (``Decimal(x)`` is the float's exact value), so never below ``x``
    by rounding direction; the callers check that the rounded base still reaches the target."""
    from decimal import ROUND_CEILING, Decimal

    d = Decimal(x)
    q = Decimal(1).scaleb(d.adjusted() - digits + 1)
    return float(d.quantize(q, rounding=ROUND_CEILING))


def _next_written(x: float, digits: int = 2) -> float:
    """The next base on the ``digits``-significant-figure grid above ``x``."""
    from decimal import Decimal

    d = Decimal(repr(written_base(x, digits)))
    return float(d + Decimal(1).scaleb(d.adjusted() - digits + 1))


def _written_reaching(spec: RopeSpec, beta: float, target: int) -> tuple[float, RopeSpec, bool, Any]:
    """The first base on the 2-significant-figure grid, from ``written_base(beta)`` up, whose plain
    RoPE bound (``spec`` at that base) reaches ``target``: ``(base, spec, reaches, BoundResult)``."""
    base = written_base(beta)
    for _ in range(8):  # rounding up never lowers the bound; a float just below a grid value may need a step
        cand = spec.with_(base=base)
        ok, r = reaches(cand, target)
        if ok:
            break
        base = _next_written(base)
    return base, cand, ok, r


def _tokens(x: float) -> str:
    return count(math.floor(x)) if math.isfinite(x) else "never (no pair limits it)"


def plain_spec(spec: RopeSpec) -> RopeSpec:
    """The plain-RoPE model the options start from (its scheme removed)."""
    return spec.with_(scheme="default", params={}, pretrained_with_scheme=False)


def _training_cost(length: int) -> str:
    return f"continued training at {count(length)} tokens"


def _liu_base(spec: RopeSpec, target: int) -> float:
    """Liu et al.'s scaling-law base: the smallest float base whose bound, tuned at ``T_tune``, reaches
    the target (``theory.base_for_context``; tuned longer, the base must also pass ``beta_0``)."""
    from .theory import base_for_context

    t, b, tune = spec.train_len, spec.pretrain_base, spec.tuning_length
    beta = base_for_context(spec.d, t, target, b)
    ok, r = reaches(plain_spec(spec).with_(base=beta), target)
    if not ok and r.critical_base is not None and tune > t and beta <= r.critical_base:
        beta = math.nextafter(r.critical_base, math.inf)
        ok, r = reaches(plain_spec(spec).with_(base=beta), target)
    for _ in range(64):  # beta_0 is a float: the next float above it may not pass beta_0 exactly (tuned longer)
        if ok:
            break
        beta = math.nextafter(beta, math.inf)
        ok, r = reaches(plain_spec(spec).with_(base=beta), target)
    return beta


def base_option(spec: RopeSpec, target: int) -> Option:
    """One base for both papers: the larger of Liu et al.'s scaling-law base and Men et al.'s lower bound
    (where it is computed), rounded up to 2 significant figures (Men et al.'s grid)."""
    liu = _liu_base(spec, target)
    men = _men_lower_bound(spec.d, target)
    beta, cand, ok, r = _written_reaching(plain_spec(spec), max(liu, men or 0.0), target)
    cav = [Caveat("continued training with the larger base, even at the training length, extrapolates up to "
                  "the bound, and degrades sharply past it (faster than dynamic NTK)", SOURCES["liu"])]
    if men is None:
        cav.append(Caveat(f"Men et al.'s lower bound for {count(target)} tokens is not computed here (too costly at "
                          f"d={spec.d}): the base satisfies Liu et al. only", SOURCES["men"]))
        both = ""
    else:
        both = (f"; Men et al.'s lower bound for the target is {short(men)}: the larger of the two"
                if men > liu else f"; it is above Men et al.'s lower bound {short(men)}")
    raw = max(liu, men or 0.0)
    which = "Liu et al.'s scaling-law base" if liu >= (men or 0.0) else "Men et al.'s lower bound"
    rounding = (f"base {short(beta)}: {which} {number(raw)}" + (" rounded up to 2 significant figures" if beta != raw
                                                                 else "") +
                f"; its bound {count(round(r.extrapolation_bound))} reaches {count(target)}")
    how = (f"Liu et al.'s scaling-law base {number(liu)} (the smallest float base whose bound reaches the target, "
           f"theory.base_for_context){both}; rounded up to 2 significant figures: {short(beta)}, whose bound "
           f"{count(round(r.extrapolation_bound))} still reaches {count(target)}")
    return make_option("base", "larger base, continued training (Liu et al. and Men et al.)", cand, target,
                   {"base": beta}, _training_cost(spec.tuning_length), COST_TRAIN, SOURCES["liu"], how, cav, r,
                   men_lower_bound=men, liu_base=liu, rounding=rounding)


def train_option(spec: RopeSpec, target: int) -> Option:
    men = _men_lower_bound(spec.d, target)
    base = spec.base
    cav = [Caveat("tuning at T_tune makes the bound at least T_tune (Theorem 3)", SOURCES["liu"])]
    params: dict = {"train": target}
    if men is not None and spec.scheme == "default" and base < men:
        base = men
        params["base"] = men
        cav.append(Caveat(f"the base {number(spec.base)} is below Men et al.'s lower bound {short(men)} for "
                          f"{count(target)} tokens: trained at the target with it, Men et al. find superficial "
                          f"long context; the option raises it to the bound", SOURCES["men"]))
    cand = spec.with_(base=base, tune_len=max(target, spec.tuning_length))
    return make_option("train", "continued training at the target", cand, target, params,
                   _training_cost(target), COST_TARGET, SOURCES["liu"],
                   "tune at the target length" + (" at Men et al.'s lower bound" if "base" in params else
                                                  ", RoPE unchanged"), cav, men_lower_bound=men)


def factor_option(name: str, spec: RopeSpec, target: int, extra_params: dict | None = None) -> Option | None:
    """linear / ntk / dynamic / yarn / llama3 at the factor their convention or the bound asks."""
    base = plain_spec(spec).with_(tune_len=spec.tune_len)
    fixed = dict(extra_params or {})

    def make(s: float) -> RopeSpec:
        return base.with_(scheme=name, params={**fixed, "factor": float(s)})

    try:
        make(1)  # d = 2 cannot run NTK: no option
        from .schemes import apply_scheme

        apply_scheme(make(2), target)
    except ValueError:
        return None
    smallest, r_small = smallest_whole(make, target)
    t = spec.train_len
    conv = target / t
    extra: dict[str, Any] = {"smallest_factor": smallest}
    if name in ("linear", "yarn"):
        s = conv
        how = (f"s = target / T_train = {count(target)} / {count(t)} (the paper's s = L'/L; how a Hugging Face "
               f"config states it)" + (f"; the smallest whole factor whose bound reaches the target is {smallest}"
                                       if smallest is not None else "; no factor up to 2^20 reaches the target"))
        r = None
    else:
        if smallest is None:
            s, r = float(MAX_FACTOR), r_small
            how = "no whole factor up to 2^20 reaches the target: shown at 2^20"
        else:
            s, r = float(smallest), r_small
            how = "the smallest whole factor whose bound reaches the target (exact at the boundary)"
    cand = make(s)
    params = {"factor": s, **fixed}
    cand, r, how, cav, cost, rank, title = _factor_terms(name, spec, base, target, s, cand, r, how, params, extra)
    return make_option(name, title, cand, target, params, cost, rank, SOURCES[name if name != "linear" else "pi"],
                   how, cav, r, **extra)


def _factor_terms(name: str, spec: RopeSpec, base: RopeSpec, target: int, s: float, cand: RopeSpec, r: Any,
                  how: str, params: dict, extra: dict) -> tuple[RopeSpec, Any, str, list, str, int, str]:
    """What :func:`factor_option`'s scheme ``name`` at factor ``s`` adds: ``(spec, bound result, how, caveats, cost,
    rank, title)``; NTK-aware is a base, written rounded (``params`` and ``extra`` get it)."""
    t = spec.train_len
    if name == "linear":
        cav = [Caveat("PI needs fine-tuning at the extended length (Chen et al. fine-tune at most 1,000 steps); "
                      "without it the positions crowd: seed 000 measures PI at 8x below plain RoPE (13.54% vs "
                      "23.16% at 4,096 tokens, trained at 512)", SOURCES["pi"]),
               Caveat("positions m/s stay inside the trained range only for s >= target / T_train", SOURCES["pi"])]
        cost, rank, title = f"fine-tuning at {count(target)} tokens", COST_TARGET, "Position Interpolation (linear)"
    elif name == "ntk":
        from .schemes import ntk_scaled_base

        exact = ntk_scaled_base(spec.base, s, spec.d)
        written, cand, _, r = _written_reaching(base, exact, target)  # NTK-aware is this base: b*s^(d/(d-2))
        extra.update(scaled_base=written, exact_scaled_base=exact,
                     rounding=f"base {short(written)}: NTK-aware's b*s^(d/(d-2)) = {number(exact)} rounded up to 2 "
                              f"significant figures; its bound {count(round(r.extrapolation_bound))} still reaches "
                              f"{count(target)}")
        params["base"] = written
        how += (f"; NTK-aware at factor s is the base b*s^(d/(d-2)) = {number(exact)}, written rounded up to 2 "
                f"significant figures: {short(written)} (bound {count(round(r.extrapolation_bound))})")
        cav = [Caveat("works without fine-tuning by spreading the extrapolation over every pair, but still "
                      "extrapolates: its long-context quality stays below training (seed 000)", SOURCES["rerope"])]
        cost, rank, title = "none (inference)", COST_NONE, "NTK-aware base"
    elif name == "dynamic":
        from .schemes import dynamic_ntk_base

        extra["base_at_target"] = dynamic_ntk_base(spec.base, s, spec.d, target, t)
        cav = [Caveat(f"the base follows the running length L: base*(s*L/T - (s-1))^(d/(d-2)) past T; "
                      f"{short(extra['base_at_target'])} at the target, plain RoPE up to {count(t)}",
                      SOURCES["dynamic"]),
               Caveat("used without fine-tuning (YaRN sec. 3.3); past its bound a larger base with continued "
                      "training degrades faster than dynamic NTK, within it much better (seed 001)", SOURCES["liu"])]
        cost, rank, title = "none (inference)", COST_NONE, "dynamic NTK"
    elif name == "yarn":
        from .schemes import yarn_attention_factor

        extra["attention_factor"] = yarn_attention_factor(s)
        cav = [Caveat(f"fast pairs kept, slow pairs divided by s, a ramp between; attention factor 0.1 ln s + 1 "
                      f"= {number(extra['attention_factor'])}", SOURCES["yarn"]),
               Caveat("Peng et al. fine-tune at the extended length (10x fewer tokens and 2.5x fewer steps than "
                      "earlier methods, their abstract)", SOURCES["yarn"])]
        cost, rank, title = f"fine-tuning at {count(target)} tokens", COST_TARGET, "YaRN"
    elif name == "llama3":
        cav = [Caveat(f"wavelengths below T/high kept, above T/low divided by s, smoothed between "
                      f"(T = {count(t)})", SOURCES["llama3"]),
               Caveat("ropelaw cites no source for the training these bands need; Meta ships factor 8 "
                      "from 8,192 tokens for 131,072 (Llama 3.1 config.json)", SOURCES["llama3"])]
        cost, rank, title = "not stated by the sources", COST_UNKNOWN, "Llama 3.1 bands"
    else:  # pragma: no cover - the callers name only the schemes above
        raise UsageError(f"no factor option {name!r}")
    return cand, r, how, cav, cost, rank, title


def rerope_options(spec: RopeSpec, target: int) -> list[Option]:
    from .schemes import leaky_rerope_safe_length

    t = spec.train_len
    w = max(1, t // 2)
    base = plain_spec(spec).with_(tune_len=spec.tune_len)
    seed = Caveat("the best window is 1/4 .. 1/2 of the training length; w = T collapses (8.25% at w = 512 "
                  "of 512); no fine-tuning; two attention passes and no fused flash attention "
                  "(ropelaw.methods.patch_model runs it for Hugging Face models)", SOURCES["rerope"])
    out = [make_option("rerope", "ReRoPE (inference)", base.with_(scheme="rerope", params={"window": w}), target,
                   {"window": w}, "none (inference; two attention passes)", COST_NONE, SOURCES["rerope"],
                   f"w = floor(T_train / 2) = {count(w)}; any w <= T_train - 1 keeps every encoded position "
                   "trained", [seed], safe_length=None)]
    if w >= t - 1:
        return out
    need = Fraction(target - w - 1, t - 1 - w)  # k (T - 1 - w) >= target - w - 1
    k = max(2, math.ceil(need))
    leaky = base.with_(scheme="leaky_rerope", params={"window": w, "k": k})
    safe = leaky_rerope_safe_length(w, k, t)
    ok, r = reaches(leaky, target)
    while not (ok and safe >= target):  # the bound's own condition, should the safe length not decide
        k += 1
        leaky = base.with_(scheme="leaky_rerope", params={"window": w, "k": k})
        safe = leaky_rerope_safe_length(w, k, t)
        ok, r = reaches(leaky, target)
    o = make_option("leaky_rerope", "Leaky ReRoPE (inference)", leaky, target, {"window": w, "k": k},
                "none (inference; two attention passes)", COST_NONE, SOURCES["rerope"],
                f"w = {count(w)}; the smallest whole k >= 2 with safe length w + 1 + floor(k (T - 1 - w)) "
                f">= target (exact in rationals)",
                [seed, Caveat(f"a finite k caps the length: positions stay in the trained range up to {count(safe)} "
                              f"tokens (the safe length), and the critical pair's period is reached at "
                              f"{_tokens(r.extrapolation_bound)} (the pair bound): the bound is the smaller "
                              f"(seed 000: ReRoPE has no such limit)", SOURCES["rerope"])], r,
                safe_length=safe, pair_bound=float(r.extrapolation_bound))
    o.bound = float(min(r.extrapolation_bound, safe))  # both limits hold; both reach the target (the loop above)
    out.append(o)
    return out


def longrope_option(spec: RopeSpec, target: int) -> Option | None:
    if spec.scheme != "longrope":
        return None
    cav = [Caveat("the config's own factors, evaluated at the target; new factors need LongRoPE's search",
                  SOURCES["longrope"])]
    return make_option("longrope", "LongRoPE (the config's factors)", spec.with_(tune_len=spec.tune_len), target,
                   {"factors": "the config's"}, "none (inference)", COST_NONE, SOURCES["longrope"],
                   "long factors past the original length, as the config states them", cav)


