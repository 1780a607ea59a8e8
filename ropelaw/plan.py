"""Ways to reach a target context: every option with its predicted bound, its cost and its sources.

``plan(spec, target)`` (or :func:`plan_config` for a loaded config) lists the options of the
papers ropelaw implements, each as a :class:`~ropelaw.spec.RopeSpec` whose bound is
``theory.extrapolation_bound`` of that spec, the very function ``ropelaw bound`` and
``ropelaw schemes`` use (a test checks them equal, option by option). Nothing here re-derives a
bound; this module only chooses the parameters and says what the sources say about them.

The model is Liu et al.'s (arXiv 2310.05209): pre-trained with plain RoPE at base ``b`` for
``T_train`` tokens (``spec.pretrain_base``, ``spec.train_len``), optionally tuned at
``T_tune`` (``spec.tune_len``). Options, and how each parameter is chosen:

- ``base``: one base for both papers: the larger of Liu et al.'s scaling-law base
  ``theory.base_for_context`` (the smallest float base whose bound reaches the target, tuned at
  ``T_tune``) and Men et al.'s lower bound (arXiv 2405.14591, ``basebound.base_lower_bound``, grid
  convention), rounded up to 2 significant figures (``plan_options.written_base``), continued
  training at ``T_tune``.
- ``train``: continued training at the target length (Liu et al. Theorem 3: the bound is at
  least ``T_tune``), at the base or, when the base is below it, at Men et al.'s lower bound.
- ``linear`` (PI) and ``yarn``: factor ``s = L/T_train``, the papers' definition (Chen et al.
  2306.15595 sec. 2.2, Peng et al. 2309.00071 sec. 3.2: s = L'/L), which is also how a
  Hugging Face config states it (YaRN's factor is max_position_embeddings / original, RV010;
  linear's training length is max_position_embeddings / factor); the smallest whole factor
  whose bound reaches the target is reported beside it (``smallest_factor``).
- ``ntk``, ``dynamic``, ``llama3``: the smallest whole factor whose bound reaches the target
  (their runtimes do not tie the factor to a context length); NTK-aware is then the plain base
  ``b*s^(d/(d-2))``, rounded up to 2 significant figures, and its spec is plain RoPE at that base.
- ``longrope``: only when the config has LongRoPE factors: its own factors, evaluated.
- ``rerope``: window ``w = floor(T_train / 2)`` (seed 000: the best window is 1/4 .. 1/2 of the
  training length, w = 256 of 512 best on non-repeated text); any ``w <= T_train - 1`` is
  unbounded by the bound's argument.
- ``leaky_rerope``: the same window and the smallest whole ``k >= 2`` whose safe length
  ``w + 1 + floor(k (T_train - 1 - w))`` (``schemes.leaky_rerope_safe_length``) reaches the
  target, decided exactly in rationals; its bound is the smaller of that safe length and the pair
  bound (``extra["pair_bound"]``, what ``ropelaw bound`` prints).

A whole factor is the smallest integer ``s`` with bound(s) >= target (bound non-decreasing in
s: the critical pair's period grows with s in every factor scheme); the comparison of a bound
with the target is ``reach.reaches``, exact at the boundary (the decision ``ropelaw lint`` makes).
The builders are in :mod:`ropelaw.plan_options`. Each option carries what ropelaw's experiments
measured for bounds of its kind (:mod:`ropelaw.evidence`). Ranking (:meth:`Option.rank_key`):
reaching first; then what the user's format can state; then the measured evidence (predicted,
partly, not measured, not predicted) and whether its low end still reaches the target; then cost
(none, training at ``T_train``, training at the target, not stated); then the measured low end.
:meth:`Plan.verdict` is the answer in one line.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from .errors import UsageError
from .numfmt import count, number, short
from .plan_types import COST_NONE, OPTION_NAMES, SOURCES, Caveat, Option  # noqa: F401  (re-exported)
from .results import Result, table_html
from .spec import RopeSpec

__all__ = ["Caveat", "Option", "Plan", "plan", "plan_config", "OPTION_NAMES", "SOURCES", "code_path",
           "measured_text"]

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

    def rank(self) -> None:
        """Sort the options after ``current`` by :meth:`Option.rank_key` (again once the edits are known)."""
        self.options[1:] = sorted(self.options[1:], key=lambda o: o.rank_key(self.target))

    @property
    def recommended(self) -> Option | None:
        """The first option that reaches the target and the format can state (None: none)."""
        return next((o for o in self.options[1:] if o.reaches and o.expressible), None)

    def verdict(self) -> str:
        """The answer in one line: nothing to change, or the edit, what it reaches and what it costs."""
        cur = self.options[0]
        if cur.reaches:
            return f"already reaches {count(self.target)}: nothing to change ({_bound_words(cur)})"
        best = self.recommended
        if best is None:
            return (f"no option this format can state reaches {count(self.target)}"
                    + (": see the options below" if any(o.reaches for o in self.options) else ""))
        return "set " + self.option_line(best)

    def option_line(self, o: Option) -> str:
        """``<the edit or the option>: reaches <target> (<bound>, measured range); costs <cost>``."""
        params = params_text(o.parameters)
        what = (_edit_words(o.edit) if o.edit is not None and not o.edit.refused else
                params if params.startswith(o.name) else f"{o.name} ({params})")
        reach = "reaches" if o.reaches else "does not reach"
        return f"{what}: {reach} {count(self.target)} ({_bound_words(o)}); costs {o.cost}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "target": self.target, "verdict": self.verdict(),
            "recommended": self.recommended.name if self.recommended else None,
            "setup": self.spec.to_dict(), "inputs": dict(self.inputs),
            "critical_dimension": self.critical_dimension,
            "options": [o.to_dict() for o in self.options],
            "precision": self.precision, "notes": list(self.notes),
        }

    def rows(self) -> list[dict[str, Any]]:
        """One row per option, as the text table and the widget show them (rank "-" for ``current``)."""
        return [{"rank": "-" if i == 0 else str(i), "option": o.name, "parameters": params_text(o.parameters),
                 "bound": "unbounded" if math.isinf(o.bound) else count(round(o.bound)),
                 "measured": measured_text(o), "reaches": "yes" if o.reaches else "no",
                 "format": "-" if i == 0 else "yes" if o.expressible else "no", "cost": o.cost}
                for i, o in enumerate(self.options)]

    def _repr_html_(self) -> str:
        return (f"<strong>Plan to {count(self.target)} tokens</strong> (d={self.spec.d}, trained "
                f"{count(self.spec.train_len)}, base {number(self.spec.base)}, critical dimension "
                f"{self.critical_dimension})" + table_html(self.rows()))


def measured_text(o: Option) -> str:
    """``0.65-1.53: 85,300-201,300`` (the measured range of the bound, and in tokens), or ``-``."""
    m, e = o.measured, o.evidence
    if m is None:
        return "-"
    return f"{e.range_text()}: {count(m[0])}-{count(m[1])}"


def _bound_words(o: Option) -> str:
    if math.isinf(o.bound):
        return "unbounded"
    m = o.measured
    return f"bound {count(round(o.bound))}" + (f"; the toy broke at {o.evidence.range_text()} of its bound: "
                                               f"{count(m[0])}-{count(m[1])}" if m else "")


def _edit_words(e: Any) -> str:
    import json

    d = e.to_dict()
    parts = [f"{k} = {json.dumps(v)}" for k, v in d["set"].items()] + [f"del {k}" for k in d["delete"]]
    return "; ".join(parts)


def params_text(p: dict) -> str:
    out = []
    for k, v in p.items():
        if isinstance(v, float) and k in ("base",):
            out.append(f"{k} {short(v)}")
        elif isinstance(v, (int, float)) and not isinstance(v, bool):
            out.append(f"{k} {count(v) if float(v).is_integer() else number(v)}")
        else:
            out.append(f"{k} {v}")
    return ", ".join(out) if out else "-"


def plan(spec: RopeSpec, target: int, *, dtype: str | int | None = None, inputs: dict | None = None,
         notes: list | None = None, runtime: dict | None = None) -> Plan:
    """Every option to reach ``target`` tokens from ``spec`` (the model as it is), ranked.

    ``spec``: pre-trained with plain RoPE at ``spec.pretrain_base`` for ``spec.train_len`` tokens, run
    with ``spec.scheme`` now (the "current" option). ``ValueError`` for a target below the training
    length. A model pre-trained with its scheme from the first step (torchtitan's Llama 3) gets only
    the current setup and continued training: Liu et al.'s options assume plain RoPE in pre-training.
    """
    from .plan_options import (base_option, factor_option, longrope_option, make_option, plain_spec,
                               rerope_options, train_option)
    from .spec import check_positive_int
    from .theory import extrapolation_bound

    from .limits import check_rotary_dim

    check_rotary_dim(spec.d)  # before any per-pair work: every option is O(d)
    target = check_positive_int("target", target)
    if target < spec.train_len:
        raise UsageError(f"target {count(target)} is below the training length {count(spec.train_len)}: "
                         "nothing to extend")
    notes = list(notes or [])
    current = make_option("current", "as it is" if spec.scheme == "default" else f"as it is ({spec.scheme})", spec,
                      target, {} if spec.scheme == "default" else
                      {"scheme": spec.scheme, **({"factor": spec.param("factor")} if spec.param("factor") else {})},
                      "none", COST_NONE, SOURCES["liu"], "the setup as given", [])
    options = [current, train_option(spec, target)]
    if spec.pretrained_with_scheme:
        notes.append(f"pre-trained with {spec.scheme!r} from the first step: Liu et al.'s options (a new base, a "
                     "scaling scheme, ReRoPE) assume plain RoPE in pre-training, so only continued training is planned")
    else:
        options.append(base_option(spec, target))
        llama3 = {}
        if spec.scheme == "llama3":  # keep the config's bands
            llama3 = {k: spec.param(k) for k in ("low_freq_factor", "high_freq_factor") if spec.param(k) is not None}
        for name, extra in (("linear", None), ("ntk", None), ("dynamic", None), ("yarn", None), ("llama3", llama3)):
            o = factor_option(name, spec, target, extra)
            if o is not None:
                options.append(o)
        lr = longrope_option(spec, target)
        if lr is not None:
            options.append(lr)
        options.extend(rerope_options(spec, target))
    plain = extrapolation_bound(plain_spec(spec))
    if plain.critical_dimension >= spec.d and not spec.pretrained_with_scheme:
        notes.append(f"every pair completed a period in {count(spec.train_len)} training tokens (base "
                     f"{number(spec.base)} "
                     f"at or below Liu et al.'s critical base): no pair limits a scheme, hence 'unbounded'; Liu et al. "
                     f"give no sharp bound here, only a slow degradation past the tuning length (seed 001)")
    precision = _precision(dtype, target, runtime) if dtype else None
    p = Plan(spec=spec, target=target, options=options, critical_dimension=plain.critical_dimension,
             precision=precision, notes=notes, inputs=dict(inputs or {}))
    p.rank()
    return p


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


def code_path(dialect: str | None, semantics: str | None = None, arch: str | None = None) -> dict | None:
    """What the audit measured in the code that runs ``dialect``'s configs, or None (not audited; for
    transformers: an architecture the runtime audit did not run, ``lint.rules.dtype.AUDITED_FLOAT32``)."""
    from .lint.rules.dtype import AUDITED_FLOAT32

    d = _RUNS.get(dialect or "", dialect)
    if d == "hf":
        version = (semantics or "").split()[-1] if semantics else None
        d = f"hf {version}" if version and (arch is None or arch in AUDITED_FLOAT32.get(version, ())) else None
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


def _precision(dtype: str | int, target: int, code_path: dict | None = None) -> dict | None:
    """Exact positions 0 .. target-1 in ``dtype`` (``formats.exact_positions``)."""
    from .formats import exact_positions
    from .lint.rules.dtype import dtype_format

    fmt = dtype_format(dtype)
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
    from .limits import check_rotary_dim

    check_rotary_dim(cfg.layers[0].d.number(), cfg.layers[0].d.where)  # the path: said by the caller
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
                notes=notes + list(cfg.notes), runtime=code_path(dialect, cfg.semantics, cfg.arch or ""))
