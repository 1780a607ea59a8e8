"""Ways to reach a target context: every option with its predicted bound, its cost and its sources.

``plan(spec, target)`` (or :func:`plan_config` for a loaded config) lists the options of the
papers ropelaw implements, each as a :class:`~ropelaw.spec.RopeSpec` whose bound is
``theory.extrapolation_bound`` of that spec, the very function ``ropelaw bound`` and
``ropelaw schemes`` use (a test checks them equal, option by option). Nothing here re-derives a
bound; this module only chooses the parameters and says what the sources say about them.

The model is Liu et al.'s (arXiv 2310.05209): pre-trained with plain RoPE at base ``b`` for
``T_train`` tokens (``spec.pretrain_base``, ``spec.train_len``), optionally tuned at
``T_tune`` (``spec.tune_len``). Options, and how each parameter is chosen:

- ``base``: Liu et al.'s scaling-law base ``theory.base_for_context`` (the smallest float base
  whose bound reaches the target, tuned at ``T_tune``), continued training at ``T_tune``; Men et
  al.'s lower bound (arXiv 2405.14591, ``basebound.base_lower_bound``, grid convention) beside it.
- ``train``: continued training at the target length (Liu et al. Theorem 3: the bound is at
  least ``T_tune``), at the base or, when the base is below it, at Men et al.'s lower bound.
- ``linear`` (PI) and ``yarn``: factor ``s = L/T_train``, the papers' definition (Chen et al.
  2306.15595 sec. 2.2, Peng et al. 2309.00071 sec. 3.2: s = L'/L), which is also how a
  Hugging Face config states it (YaRN's factor is max_position_embeddings / original, RV010;
  linear's training length is max_position_embeddings / factor); the smallest whole factor
  whose bound reaches the target is reported beside it (``smallest_factor``).
- ``ntk``, ``dynamic``, ``llama3``: the smallest whole factor whose bound reaches the target
  (their runtimes do not tie the factor to a context length).
- ``longrope``: only when the config has LongRoPE factors: its own factors, evaluated.
- ``rerope``: window ``w = floor(T_train / 2)`` (seed 000: the best window is 1/4 .. 1/2 of the
  training length, w = 256 of 512 best on non-repeated text); any ``w <= T_train - 1`` is
  unbounded by the bound's argument.
- ``leaky_rerope``: the same window and the smallest whole ``k >= 2`` whose safe length
  ``w + 1 + floor(k (T_train - 1 - w))`` (``schemes.leaky_rerope_safe_length``) reaches the
  target, decided exactly in rationals.

A whole factor is the smallest integer ``s`` with bound(s) >= target (bound non-decreasing in
s: the critical pair's period grows with s in every factor scheme); the comparison of a bound
with the target is decided exactly with mpmath when the float bound lies within 1e-9 of it.
Ranking: options that reach the target first, then by cost (none, training at ``T_train``,
training at the target), then by bound (larger first).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from .numfmt import count, number, short
from .reach import reaches
from .results import Result, table_html
from .spec import RopeSpec

__all__ = ["Caveat", "Option", "Plan", "plan", "plan_config", "OPTION_NAMES", "smallest_whole",
           "SOURCES"]

# the citations every option draws on (one place, so text and JSON name them the same way)
SOURCES = {
    "liu": "Liu et al. 2023, Scaling Laws of RoPE-based Extrapolation, arXiv 2310.05209 (seed 001)",
    "men": "Men et al. 2024, Base of RoPE Bounds Context Length, arXiv 2405.14591",
    "pi": "Chen et al. 2023, Position Interpolation, arXiv 2306.15595",
    "yarn": "Peng et al. 2023, YaRN, arXiv 2309.00071",
    "ntk": "bloc97 (r/LocalLLaMA 2023-06); Su, kexue.fm/archives/9675; YaRN arXiv 2309.00071 sec. 3.1",
    "dynamic": "Hugging Face _compute_dynamic_ntk_parameters; YaRN arXiv 2309.00071 sec. 3.3",
    "llama3": "Llama 3.1 bands: Hugging Face _compute_llama3_parameters (arXiv 2407.21783)",
    "longrope": "Ding et al. 2024, LongRoPE, arXiv 2402.13753; Hugging Face _compute_longrope_parameters",
    "rerope": "Su 2023, ReRoPE, kexue.fm/archives/9708 (seed 000)",
}

OPTION_NAMES = ("current", "base", "train", "linear", "ntk", "dynamic", "yarn", "llama3", "longrope", "rerope",
                "leaky_rerope")

COST_NONE, COST_TRAIN, COST_TARGET, COST_UNKNOWN = 0, 1, 2, 3
MAX_WHOLE_FACTOR = 2 ** 20  # RV017's limit on scaling factors (lint.rules.values.MAX_FACTOR)


@dataclass(frozen=True)
class Caveat:
    """One claim about an option, with the source that makes it."""

    text: str
    source: str

    def to_dict(self) -> dict[str, str]:
        return {"text": self.text, "source": self.source}


@dataclass
class Option(Result):
    """One way to reach the target: its spec, its bound through ``theory``, its cost and caveats."""

    name: str  # the --apply name
    title: str
    spec: RopeSpec  # the setup whose bound is given
    bound: float  # theory.extrapolation_bound(spec).extrapolation_bound (inf: unbounded)
    reaches: bool  # bound >= target, decided exactly at the boundary
    parameters: dict  # what the option sets: {"factor": 32}, {"base": 1.02e6}, {"window": 2048, "k": 31}
    cost: str  # "none (inference)", "continued training at 4,096 tokens", ...
    cost_rank: int
    source: str
    how: str  # how the parameters were chosen
    caveats: list = field(default_factory=list)  # list[Caveat]
    critical_dimension: int | None = None
    men_supported: int | None = None  # Men et al.: B_(m,theta) >= 0 for every m <= this (capped at the target)
    extra: dict = field(default_factory=dict)  # option-specific numbers (smallest_factor, safe_length, ...)
    edit: Any = None  # the config edit in the input's dialect (writers.Edit), or None

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name, "title": self.title, "parameters": dict(self.parameters),
            "bound": self.bound, "reaches": self.reaches, "cost": self.cost, "source": self.source,
            "how": self.how, "critical_dimension": self.critical_dimension,
            "men_supported": self.men_supported, **self.extra,
            "spec": self.spec.to_dict(),
            "caveats": [c.to_dict() for c in self.caveats],
            "edit": self.edit.to_dict() if self.edit is not None else None,
        }


@dataclass
class Plan(Result):
    """The options for one setup and target, ranked; the precision at the target; notes."""

    spec: RopeSpec  # the model as it is (its current scheme)
    target: int
    options: list  # list[Option], ranked
    critical_dimension: int
    precision: dict | None = None
    notes: list = field(default_factory=list)
    inputs: dict = field(default_factory=dict)  # where each input came from (config keys or flags)

    def option(self, name: str) -> Option:
        for o in self.options:
            if o.name == name:
                return o
        raise KeyError(name)

    def to_dict(self) -> dict[str, Any]:
        return {
            "target": self.target, "setup": self.spec.to_dict(), "inputs": dict(self.inputs),
            "critical_dimension": self.critical_dimension,
            "options": [o.to_dict() for o in self.options],
            "precision": self.precision, "notes": list(self.notes),
        }

    def rows(self) -> list[dict[str, Any]]:
        """One row per option, as the text table and the widget show them."""
        return [{"rank": i + 1, "option": o.name, "parameters": _params_text(o.parameters),
                 "bound": "unbounded" if math.isinf(o.bound) else count(round(o.bound)),
                 "reaches": "yes" if o.reaches else "no", "cost": o.cost} for i, o in enumerate(self.options)]

    def _repr_html_(self) -> str:
        return (f"<strong>Plan to {count(self.target)} tokens</strong> (d={self.spec.d}, trained "
                f"{count(self.spec.train_len)}, base {number(self.spec.base)}, critical dimension "
                f"{self.critical_dimension})" + table_html(self.rows()))


def _params_text(p: dict) -> str:
    out = []
    for k, v in p.items():
        if isinstance(v, float) and k in ("base",):
            out.append(f"{k} {short(v)}")
        elif isinstance(v, (int, float)) and not isinstance(v, bool):
            out.append(f"{k} {count(v) if float(v).is_integer() else number(v)}")
        else:
            out.append(f"{k} {v}")
    return ", ".join(out) if out else "-"


# -- exact decisions: reaches() (ropelaw.reach) is the one decision plan and lint share ------
def smallest_whole(make, target: int, limit: int = MAX_WHOLE_FACTOR) -> tuple[int | None, Any]:
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
    windows (positions, not frequencies, change) or when too costly (``commands.base``'s limits)."""
    from .commands.base import _men_too_costly
    from .schemes import apply_scheme

    if spec.scheme in ("rerope", "leaky_rerope") or _men_too_costly(spec.d, target) is not None:
        return None
    from .lint.rules.lengths import _supported

    inv = tuple(apply_scheme(spec, target).inv_freq)
    return _supported(inv, target)


def _men_lower_bound(d: int, target: int) -> float | None:
    from .commands.base import _men_too_costly

    if _men_too_costly(d, target) is not None:
        return None
    from .lint.rules.lengths import lower_bound

    return lower_bound(d, target)


def _option(name: str, title: str, spec: RopeSpec, target: int, parameters: dict, cost: str, rank: int,
            source: str, how: str, caveats: list, r: Any = None, **extra: Any) -> Option:
    ok, r = reaches(spec, target, r)
    return Option(name=name, title=title, spec=spec, bound=float(r.extrapolation_bound), reaches=ok,
                  parameters=parameters, cost=cost, cost_rank=rank, source=source, how=how, caveats=caveats,
                  critical_dimension=r.critical_dimension, men_supported=_men_supported(spec, target), extra=extra)


def _plain(spec: RopeSpec) -> RopeSpec:
    """The plain-RoPE model the options start from (its scheme removed)."""
    return spec.with_(scheme="default", params={}, pretrained_with_scheme=False)


def _training_cost(length: int) -> str:
    return f"continued training at {count(length)} tokens"


def _base_option(spec: RopeSpec, target: int) -> Option:
    from .theory import base_for_context

    t, b, tune = spec.train_len, spec.pretrain_base, spec.tuning_length
    beta = base_for_context(spec.d, t, target, b)
    cand = _plain(spec).with_(base=beta)
    ok, r = reaches(cand, target)
    if not ok and r.critical_base is not None and tune > t and beta <= r.critical_base:
        beta = math.nextafter(r.critical_base, math.inf)  # tuned longer: the base must pass beta_0 too
        cand = _plain(spec).with_(base=beta)
        ok, r = reaches(cand, target)
    for _ in range(64):  # beta_0 is a float: the next float above it may not pass beta_0 exactly (tuned longer)
        if ok:
            break
        beta = math.nextafter(beta, math.inf)
        cand = _plain(spec).with_(base=beta)
        ok, r = reaches(cand, target)
    men = _men_lower_bound(spec.d, target)
    cav = [Caveat(f"continued training with the larger base, even at the training length, extrapolates up to "
                  f"the bound, and degrades sharply past it (faster than dynamic NTK)", SOURCES["liu"])]
    if men is not None and beta < men:
        cav.append(Caveat(f"{short(beta)} is below Men et al.'s lower bound {short(men)} for {count(target)} "
                          f"tokens: B_(m,theta) < 0 within the target, where Men et al. find low perplexity "
                          f"without long-range retrieval (superficial long context)", SOURCES["men"]))
    return _option("base", "larger base, continued training (Liu et al.)", cand, target,
                   {"base": beta}, _training_cost(tune), COST_TRAIN, SOURCES["liu"],
                   "the smallest float base whose bound 2*pi*beta^(d_extra/d) reaches the target "
                   "(theory.base_for_context, decided exactly at the boundary)", cav, r, men_lower_bound=men)


def _train_option(spec: RopeSpec, target: int) -> Option:
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
    return _option("train", "continued training at the target", cand, target, params,
                   _training_cost(target), COST_TARGET, SOURCES["liu"],
                   "tune at the target length" + (" at Men et al.'s lower bound" if "base" in params else
                                                  ", RoPE unchanged"), cav, men_lower_bound=men)


def _factor_option(name: str, spec: RopeSpec, target: int, extra_params: dict | None = None) -> Option | None:
    """linear / ntk / dynamic / yarn / llama3 at the factor their convention or the bound asks."""
    base = _plain(spec).with_(tune_len=spec.tune_len)
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
            s, r = float(MAX_WHOLE_FACTOR), r_small
            how = "no whole factor up to 2^20 reaches the target: shown at 2^20"
        else:
            s, r = float(smallest), r_small
            how = "the smallest whole factor whose bound reaches the target (exact at the boundary)"
    cand = make(s)
    params = {"factor": s, **fixed}
    if name == "linear":
        cav = [Caveat("PI needs fine-tuning at the extended length (Chen et al. fine-tune at most 1,000 steps); "
                      "without it the positions crowd: seed 000 measures PI at 8x below plain RoPE (13.54% vs "
                      "23.16% at 4,096 tokens, trained at 512)", SOURCES["pi"]),
               Caveat("positions m/s stay inside the trained range only for s >= target / T_train", SOURCES["pi"])]
        cost, rank, title = f"fine-tuning at {count(target)} tokens", COST_TARGET, "Position Interpolation (linear)"
    elif name == "ntk":
        from .schemes import ntk_scaled_base

        extra["scaled_base"] = ntk_scaled_base(spec.base, s, spec.d)
        cav = [Caveat("works without fine-tuning by spreading the extrapolation over every pair, but still "
                      "extrapolates: its long-context quality stays below training (seed 000)", SOURCES["rerope"])]
        cost, rank, title = "none (inference)", COST_NONE, "NTK-aware base"
    elif name == "dynamic":
        from .schemes import dynamic_ntk_base

        extra["base_at_target"] = dynamic_ntk_base(spec.base, s, spec.d, target, t)
        cav = [Caveat(f"the base follows the running length L: base*(s*L/T - (s-1))^(d/(d-2)) past T; "
                      f"{short(extra['base_at_target'])} at the target, plain RoPE up to {count(t)}", SOURCES["dynamic"]),
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
        raise ValueError(f"no factor option {name!r}")
    return _option(name, title, cand, target, params, cost, rank, SOURCES[name if name != "linear" else "pi"],
                   how, cav, r, **extra)


def _rerope_options(spec: RopeSpec, target: int) -> list[Option]:
    from .schemes import leaky_rerope_safe_length

    t = spec.train_len
    w = max(1, t // 2)
    base = _plain(spec).with_(tune_len=spec.tune_len)
    seed = Caveat("the best window is 1/4 .. 1/2 of the training length; w = T collapses (8.25% at w = 512 "
                  "of 512); no fine-tuning; two attention passes and no fused flash attention "
                  "(ropelaw.methods.patch_model runs it for Hugging Face models)", SOURCES["rerope"])
    out = [_option("rerope", "ReRoPE (inference)", base.with_(scheme="rerope", params={"window": w}), target,
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
    out.append(_option("leaky_rerope", "Leaky ReRoPE (inference)", leaky, target, {"window": w, "k": k},
                       "none (inference; two attention passes)", COST_NONE, SOURCES["rerope"],
                       f"w = {count(w)}; the smallest whole k >= 2 with safe length w + 1 + floor(k (T - 1 - w)) "
                       f">= target (exact in rationals)",
                       [seed, Caveat(f"a finite k caps the length: safe up to {count(safe)} tokens; past it positions "
                                     f"leave the trained range (seed 000: ReRoPE has no such limit)",
                                     SOURCES["rerope"])], r, safe_length=safe))
    return out


def _longrope_option(spec: RopeSpec, target: int) -> Option | None:
    if spec.scheme != "longrope":
        return None
    cav = [Caveat("the config's own factors, evaluated at the target; new factors need LongRoPE's search",
                  SOURCES["longrope"])]
    return _option("longrope", "LongRoPE (the config's factors)", spec.with_(tune_len=spec.tune_len), target,
                   {"factors": "the config's"}, "none (inference)", COST_NONE, SOURCES["longrope"],
                   "long factors past the original length, as the config states them", cav)


def plan(spec: RopeSpec, target: int, *, dtype: str | None = None, inputs: dict | None = None,
         notes: list | None = None, runtime: dict | None = None) -> Plan:
    """Every option to reach ``target`` tokens from ``spec`` (the model as it is), ranked.

    ``spec``: pre-trained with plain RoPE at ``spec.pretrain_base`` for ``spec.train_len`` tokens, run
    with ``spec.scheme`` now (the "current" option). ``ValueError`` for a target below the training
    length. A model pre-trained with its scheme from the first step (torchtitan's Llama 3) gets only
    the current setup and continued training: Liu et al.'s options assume plain RoPE in pre-training.
    """
    from .spec import check_positive_int
    from .theory import extrapolation_bound

    target = check_positive_int("target", target)
    if target < spec.train_len:
        raise ValueError(f"target {count(target)} is below the training length {count(spec.train_len)}: "
                         "nothing to extend")
    notes = list(notes or [])
    current = _option("current", "as it is" if spec.scheme == "default" else f"as it is ({spec.scheme})", spec,
                      target, {} if spec.scheme == "default" else
                      {"scheme": spec.scheme, **({"factor": spec.param("factor")} if spec.param("factor") else {})},
                      "none", COST_NONE, SOURCES["liu"], "the setup as given", [])
    options = [current, _train_option(spec, target)]
    if spec.pretrained_with_scheme:
        notes.append(f"pre-trained with {spec.scheme!r} from the first step: Liu et al.'s options (a new base, a "
                     "scaling scheme, ReRoPE) assume plain RoPE in pre-training, so only continued training is planned")
    else:
        options.append(_base_option(spec, target))
        llama3 = {}
        if spec.scheme == "llama3":  # keep the config's bands
            llama3 = {k: spec.param(k) for k in ("low_freq_factor", "high_freq_factor") if spec.param(k) is not None}
        for name, extra in (("linear", None), ("ntk", None), ("dynamic", None), ("yarn", None), ("llama3", llama3)):
            o = _factor_option(name, spec, target, extra)
            if o is not None:
                options.append(o)
        lr = _longrope_option(spec, target)
        if lr is not None:
            options.append(lr)
        options.extend(_rerope_options(spec, target))
    plain = extrapolation_bound(_plain(spec))
    if plain.critical_dimension >= spec.d and not spec.pretrained_with_scheme:
        notes.append(f"every pair completed a period in {count(spec.train_len)} training tokens (base {number(spec.base)} "
                     f"at or below Liu et al.'s critical base): no pair limits a scheme, hence 'unbounded'; Liu et al. "
                     f"give no sharp bound here, only a slow degradation past the tuning length (seed 001)")
    head = options[0]
    ranked = [head] + sorted(options[1:], key=lambda o: (not o.reaches, o.cost_rank, -o.bound, o.name))
    precision = _precision(dtype, target, runtime) if dtype else None
    return Plan(spec=spec, target=target, options=ranked,
                critical_dimension=plain.critical_dimension,
                precision=precision, notes=notes, inputs=dict(inputs or {}))


# What ropelaw's runtime audit measured in each framework's own rotary code (audits/reports/<report>.json,
# `python audits/run.py`): the worst fraction of exact positions over the audited modules at 131,072
# tokens in bf16, per scenario (cast: built in float32 then .to(bf16); default: torch.set_default_dtype;
# autocast). tests/test_plan.py checks each number against the report. dialect -> report (hf: by the
# transformers whose semantics the loader follows).
CODE_PATHS: dict[str, tuple[str, tuple[float, float, float]]] = {
    "hf 4.57.1": ("transformers-4.57.1", (1.0, 1.0, 1.0)),
    "hf 5.23.0": ("transformers-5.23.0", (1.0, 1.0, 1.0)),
    "litgpt": ("litgpt-0.5.13", (1.0, 1.0, 1.0)),
    "nanotron": ("nanotron-0.4", (1.0, 1.0, 0.0025482177734375)),
    "megatron": ("megatron-core-0.19.2", (1.0, 1.0, 0.0025482177734375)),
    "torchtitan": ("torchtitan-0.3.0", (7.62939453125e-06, 1.0, 1.0)),
}
_RUNS = {"axolotl": "hf", "nemo": "megatron"}  # axolotl runs transformers; NeMo runs megatron-core


def code_path(dialect: str | None, semantics: str | None = None) -> dict | None:
    """What the audit measured in the code that runs ``dialect``'s configs, or None (not audited)."""
    d = _RUNS.get(dialect or "", dialect)
    if d == "hf":
        d = f"hf {(semantics or '').split()[-1]}" if semantics else None
    entry = CODE_PATHS.get(d or "")
    if entry is None:
        return None
    report, (cast, default, autocast) = entry
    fr = {"cast": cast, "default": default, "autocast": autocast}
    low = [k for k, v in fr.items() if v < 1]
    text = (f"{report.replace('-', ' ', 1)} (ropelaw's runtime audit, audits/reports/{report}.md): at 131,072 tokens "
            f"in bf16, " + ", ".join(f"{k} {100 * v:.4g}%" for k, v in fr.items()) + " of positions exact; "
            + (f"positions or angles pass through bf16 under {', '.join(low)}" if low else
               "positions and angles stay in float32 in every scenario"))
    return {"audit": report, "exact_fraction_bf16_131072": fr, "text": text}


def _precision(dtype: str, target: int, code_path: dict | None = None) -> dict | None:
    """Exact positions 0 .. target-1 in ``dtype`` (``formats.exact_positions``)."""
    from .formats import exact_positions
    from .lint.rules.dtype import _format

    fmt = _format(dtype)
    if fmt is None:
        return {"dtype": str(dtype), "exact": None,
                "note": "mixed precision or an unknown dtype: the positions' dtype is not stated by it"}
    c = exact_positions(fmt, target)
    return {"dtype": c.dtype, "length": target, "exact": c.exact, "exact_fraction": c.exact_fraction,
            "first_inexact": c.first_inexact, "overflow_from": c.overflow_from,
            "code_path": code_path["text"] if code_path else None, "code_path_audit": code_path}


def plan_config(cfg: Any, target: int, dialect: str | None = None) -> Plan:
    """:func:`plan` for a loaded config (``lint.loader.LoadedConfig``): its main layer group, with the
    other groups checked: a sliding-window group whose window lies within the training length needs
    no change (said in a note); any other second RoPE setup is refused (``UsageError``), since one
    plan would pretend a single spec."""
    from .errors import UsageError

    spec = cfg.spec(0)
    notes: list[str] = []
    for g in cfg.layers[1:]:
        w = g.window.number() if g.window is not None else None
        if w is not None and w <= spec.train_len:
            notes.append(f"{g.label}: sliding window {count(w)} within the training length {count(spec.train_len)}: "
                         "their positions never pass it, the plan leaves them as they are")
            continue
        raise UsageError(f"{cfg.path}: {len(cfg.layers)} layer groups with different RoPE setups "
                         f"({', '.join(x.label for x in cfg.layers)}): ropelaw plan handles one RoPE group plus "
                         "sliding-window groups within the training length")
    inputs = {"path": cfg.path, "dialect": dialect, "d": cfg.layers[0].d.where, "base": cfg.layers[0].base.where,
              "train_len": cfg.train_len.where, "scheme": cfg.layers[0].scheme.where,
              "dtype": cfg.dtype.where if cfg.dtype is not None else None}
    dtype = cfg.dtype.raw if cfg.dtype is not None else None
    return plan(spec, target, dtype=dtype if isinstance(dtype, (str, int)) else None, inputs=inputs,
                notes=notes + list(cfg.notes), runtime=code_path(dialect, cfg.semantics))
