"""Run the lint rules over one loaded config: ``lint_config(cfg) -> LintResult``.

Order: the value checks (RV) first, on the values as found; then, for every layer group whose
values make a valid :class:`~ropelaw.spec.RopeSpec`, the scheme is run through the registry
(``schemes.apply_scheme``) and the bound through ``theory.extrapolation_bound``, and the
length (RL), scheme (RS) and dtype (RP2xx) checks read those. A layer group whose spec
cannot be built gets no RL/RS findings (its RV findings say why) and ``"spec": null`` in json.

Nonsense is not analysed: a layer group gets no spec (and so no RL/RS/RP2xx findings) when a
length it depends on is not a whole number in (2*pi, 2^31 - 1] (RV013), its rotary dims exceed
2^16 or its scaling factor is out of range (RV017), its head_dim is not a whole number (RV001),
or the scheme's frequencies come out non-finite, zero, subnormal or above pi rad/token (RV016);
the limits and their reasons are in ``rules/values.py`` and :func:`_frequency_problem`.

Model assumptions (said in every finding that uses them):
- trained from scratch with the config's base: ``pretrain_base = base = rope_theta``;
- no tuning run at a longer length unless ``--tune`` is given;
- the layer group's longest relative distance is ``min(target, sliding window)``.
"""

from __future__ import annotations

import functools
import math
import sys
from dataclasses import dataclass, field
from typing import Any

from ..findings import Finding
from ..jsonout import json_safe  # JSON as every command writes it: inf and nan -> null
from ..results import Result
from ..spec import RopeSpec
from ..numfmt import count as fmt_count, number as fmt_num
from .model import LoadedConfig
from ..limits import MAX_CONTEXT, MAX_D
from .rules.values import factor_problem, length_problem

__all__ = ["LayerAnalysis", "LintResult", "Linting", "checks", "lint_config", "length_problems"]

SMALLEST_NORMAL = sys.float_info.min  # 2.2250738585072014e-308: below it a frequency has lost precision
# Fastest meaningful rotation: pi rad/token. A pair turning theta > pi per token is indistinguishable from
# one turning 2*pi - theta the other way (aliasing, Nyquist); RoPE's fastest pair turns 1 rad/token and
# every scaling scheme slows pairs down. Only a LongRoPE factor below 1/pi gets here.
FASTEST = math.pi


@dataclass
class LayerAnalysis:
    """One layer group: its spec, the length it must reach, the registry's output and the bound."""

    label: str
    spec: RopeSpec | None
    error: str | None  # why no spec / scheme / bound could be computed
    length: int  # longest relative distance at the target (min(target, window))
    length_note: str  # "the target context 32,768 (max_position_embeddings)" or "its sliding window ..."
    window: int | None
    scheme_result: Any = None  # schemes.SchemeResult at seq_len = length
    bound: Any = None  # theory.BoundResult
    group: Any = None  # the loader's RopeLayer
    chunk: int | None = None  # chunked attention: keys per chunk

    def to_dict(self) -> dict[str, Any]:
        g = self.group
        out: dict[str, Any] = {"layers": self.label, "window": self.window, "chunk": self.chunk, "length": self.length,
                               "length_from": self.length_note}
        if g is not None:
            out["indices"] = list(g.indices) if g.indices is not None else None
            out["count"] = len(g.indices) if g.indices is not None else None
            out["kinds"] = list(g.kinds)
            out["rope"] = bool(g.rope)
            out["attention"] = bool(g.attention)
            # attends later keys too (|m - n| < window, or every key): the length is the largest |m - n| + 1 alike
            out["bidirectional"] = bool(g.bidirectional)
            if g.cross_attention:  # only where true: attention over other states (Mllama's images), no rotary
                out["cross_attention"] = True
            if not g.rope:
                out["bounded_by"] = (None if not g.attention else "window" if self.window else
                                     "chunk" if self.chunk else "nothing")
        out["spec"] = self.spec.to_dict() if self.spec is not None else None
        out["attention_factor"] = (self.scheme_result.attention_factor if self.scheme_result is not None else None)
        out["bound"] = json_safe(self.bound.to_dict()) if self.bound is not None else None
        if self.error:
            out["error"] = self.error
        return out


@dataclass
class LintResult(Result):
    """Findings and derived setup of one config file."""

    path: str
    config: LoadedConfig
    layers: list = field(default_factory=list)  # list[LayerAnalysis]
    findings: list = field(default_factory=list)  # list[Finding]

    def setup(self) -> dict[str, Any]:
        """The derived setup with its provenance and the bound of the main layer group.

        Top-level keys of ``bound`` are exactly those of ``ropelaw bound --format json``
        (``theory.BoundResult.to_dict()``: critical_dimension, extrapolation_bound, ...).
        """
        cfg = self.config
        main = self.layers[0] if self.layers else None
        g = cfg.layers[0]

        def val(v):
            if v is None:
                return None
            return {"value": json_safe(v.raw), "from": v.where, "line": v.line if v.key else None,
                    "column": v.column if v.key else None}

        return {
            "path": self.path,
            "architecture": cfg.arch or None,
            "kind": cfg.kind,
            "semantics": cfg.semantics,  # whose arithmetic the frequencies follow, e.g. "transformers 5.23.0"
            "derived": {
                "d": val(g.d), "head_dim": val(cfg.head_dim), "base": val(g.base),
                "scheme": val(g.scheme), "params": {k: val(v) for k, v in g.params.items()},
                "max_position_embeddings": val(cfg.max_pos), "original_max_position_embeddings": val(cfg.original_max),
                "train_len": val(cfg.train_len), "target": val(cfg.target), "tune_len": val(cfg.tune_len),
                "dtype": val(cfg.dtype), "pretrained_with_scheme": val(g.pretrained_with_scheme),
            },
            "assumptions": list(cfg.notes) + [
                "pretrain_base = base: trained from scratch with the config's base",
                "tune_len = train_len unless --tune" if cfg.tune_len is None
                else f"tune_len {fmt_count(cfg.tune_len.raw)} ({cfg.tune_len.where})",
            ],
            "bound": (json_safe(main.bound.to_dict()) if main is not None and main.bound is not None else None),
            "query_scale": self._query_scale(),  # a position-dependent query scale (RL106), else None
            "model": cfg.model.to_dict() if cfg.model is not None else None,  # a model named elsewhere: its config
            "layers": [a.to_dict() for a in self.layers],
            "findings": [f.to_dict() for f in self.findings],
        }

    def to_dict(self) -> dict[str, Any]:
        return self.setup()

    def _query_scale(self) -> dict | None:
        from .rules.layers import query_scale_points

        return json_safe(query_scale_points(Linting(self.config, self.layers)))

    def ok_line(self) -> str:
        """``path: ok (d=128, base 1e6, trained 32,768, target 32,768, bound 129,027)``."""
        parts = []
        for a in self.layers:
            g = a.group
            prefix = "" if a.label == "all layers" else f"{a.label}: "
            if g is not None and g.cross_attention:
                parts.append(prefix + "no RoPE, attends the image states")
                continue
            if g is not None and not g.attention:
                parts.append((prefix.rstrip(": ")
                              + ("" if a.label.startswith("without attention") else " (no attention)"))
                             if prefix else "no attention")
                continue
            if g is not None and not g.rope:
                span = (f"window {fmt_count(a.window)}" if a.window else f"chunk {fmt_count(a.chunk)}" if a.chunk
                        else "full attention")
                parts.append(prefix + f"no RoPE, {span}" + (", bidirectional" if g.bidirectional else ""))
                continue
            if a.spec is None:
                continue
            s = a.spec
            bits = [f"d={s.d}", f"base {fmt_num(s.base)}"]
            if s.scheme != "default":
                factor = s.param_dict().get("factor")
                name = s.scheme + (f" x{fmt_num(factor)}" if isinstance(factor, (int, float)) and g is not None
                                   and g.indices is not None else "")
                bits.append(f"{name} from step 0" if s.pretrained_with_scheme else name)
                af = a.scheme_result.attention_factor if a.scheme_result is not None else 1.0
                if g is not None and g.indices is not None and af != 1.0:
                    bits.append(f"attention factor {af:.5g}")
            if a is self.layers[0]:
                bits.append(f"trained {fmt_count(s.train_len)}")
                tune = self.config.tune_len.number() if self.config.tune_len is not None else None
                if tune is not None:
                    bits.append(f"tuned {fmt_count(tune)}")
            what = ("window" if a.window and a.length == a.window else "chunk" if a.chunk and a.length == a.chunk
                    else "target")
            bits.append(f"{what} {fmt_count(a.length)}" + (" both ways" if g is not None and g.bidirectional else ""))
            if a.bound is not None:
                b = a.bound.extrapolation_bound
                bits.append(f"bound {'unbounded' if math.isinf(b) else fmt_count(round(b))}")
            parts.append(prefix + ", ".join(bits))
        if self.config.served_by:
            parts.append(f"served by {self.config.served_by}")
        m = self.config.model
        if m is not None:  # a model named elsewhere: where its values came from
            parts.append(f"model {m.name} from " + ("the Hugging Face cache" if m.source == "hf-cache" else
                                                    "ropelaw's table" if m.source == "table" else m.file))
        return f"{self.path}: ok ({'; '.join(parts)})"


def length_problems(cfg: LoadedConfig) -> list[str]:
    """Why the config's lengths (advertised, original, training, target, tuning, windows) are not
    usable context lengths (``values.length_problem``); empty when they all are."""
    out = []
    for v in (cfg.max_pos, cfg.original_max, cfg.train_len, cfg.target, cfg.tune_len):
        why = length_problem(v)
        if why is not None:
            out.append(why)
    for g in cfg.layers:
        why = length_problem(g.window, minimum=False)
        if why is not None:
            out.append(why)
    return out


def _frequency_problem(inv_freq) -> str | None:
    """inv_freq must lie in [smallest normal float64, pi]: a zero or subnormal frequency means a
    parameter pushed it out of float range (the pair stops rotating); one above pi rad/token is
    aliased (:data:`FASTEST`) and makes ``m * theta`` lose all precision in float64."""
    for j, t in enumerate(inv_freq):
        t = float(t)
        if not math.isfinite(t) or t < SMALLEST_NORMAL:
            return (f"inverse frequency of pair {j} is {t:.3g}: not a finite number >= {SMALLEST_NORMAL:.3g} "
                    f"(the smallest normal float64): the base or a scaling parameter is out of range")
        if t > FASTEST:
            return (f"inverse frequency of pair {j} is {t:.3g} rad/token, above pi (aliased: RoPE's fastest "
                    f"pair turns 1 rad/token): a scaling parameter is out of range")
    return None


def _whole(v) -> bool:
    """``v`` holds a whole number (or nothing usable: other rules say so)."""
    x = v.raw if v is not None else None
    return not isinstance(x, float) or not math.isfinite(x) or x.is_integer()


def _analyse(cfg: LoadedConfig, i: int, bad_lengths: list[str]) -> LayerAnalysis:
    from ..schemes import apply_scheme
    from ..theory import extrapolation_bound

    g = cfg.layers[i]
    w = g.window.number() if g.window is not None else None
    window = int(w) if w is not None and w == int(w) and 1 <= w <= MAX_CONTEXT else None
    c = g.chunk.number() if g.chunk is not None else None
    chunk = int(c) if c is not None and c == int(c) and 1 <= c <= MAX_CONTEXT else None
    if bad_lengths:
        return LayerAnalysis(g.label, None, f"{bad_lengths[0]}: not analysed", 0, "no usable target", window,
                             group=g, chunk=chunk)
    try:
        length, note = cfg.target_for(i)
    except (ValueError, OverflowError):
        length, note = 0, "no usable target"
    if not g.rope:  # NoPE layers, layers without attention: no rotary, no RoPE bound
        return LayerAnalysis(g.label, None, None, length, note, window, group=g, chunk=chunk)
    for v in (cfg.head_dim, g.d):
        if not _whole(v):
            return LayerAnalysis(g.label, None, f"{v.where} {v.raw!r} is not a whole number: not analysed",
                                 length, note, window, group=g, chunk=chunk)
    d = g.d.number()
    if d is not None and d > MAX_D:
        return LayerAnalysis(g.label, None, f"rotary dimension {fmt_count(d)} is beyond any real model "
                                           f"(> {MAX_D:,}): not analysed", length, note, window, group=g,
                             chunk=chunk)
    bad_factor = factor_problem(cfg, g)
    if bad_factor is not None:
        return LayerAnalysis(g.label, None, f"{bad_factor[1]}: not analysed", length, note, window, group=g,
                             chunk=chunk)
    try:
        spec = cfg.spec(i)
    except (ValueError, OverflowError) as exc:
        return LayerAnalysis(g.label, None, str(exc), length, note, window, group=g, chunk=chunk)
    a = LayerAnalysis(g.label, spec, None, length, note, window, group=g, chunk=chunk)
    try:
        a.scheme_result = apply_scheme(spec, seq_len=max(length, 1))
        why = _frequency_problem(a.scheme_result.inv_freq)
        if why is not None:
            a.spec, a.scheme_result, a.error = None, None, f"scheme {spec.scheme!r}: {why}"
            return a
        a.bound = extrapolation_bound(spec)
    except (ValueError, OverflowError, ZeroDivisionError) as exc:
        a.error = str(exc)
    return a


@dataclass
class Linting:
    """What every lint check reads, its one argument (``check(linting) -> list[Finding]``, :func:`checks`): the
    loaded config, its layer groups' analyses, the findings of the checks before it, whether the output shows
    the default rule set only (``rules.lengths._men``), and why the config's lengths are not usable."""

    cfg: LoadedConfig
    layers: list = field(default_factory=list)  # list[LayerAnalysis], one per cfg.layers
    found: list = field(default_factory=list)  # list[Finding]: what the checks before this one found
    shown_only: bool = False
    bad_lengths: list = field(default_factory=list)  # length_problems(cfg)
    only: int | None = None  # set by each_group: the one layer group a per-group check looks at

    def groups(self):
        """``(i, analysis)`` of the layer groups with a spec, a bound and a length (what RL / RS checks read)."""
        for i, a in enumerate(self.layers):
            if (self.only is None or i == self.only) and a.spec is not None and a.bound is not None and a.length >= 1:
                yield i, a


def each_group(*group_checks):
    """One check running ``group_checks`` over the analysed layer groups in turn: group 0's findings of every
    check, then group 1's (the order the findings are listed in)."""
    from dataclasses import replace

    def run(lt: Linting) -> list[Finding]:
        return [f for i, _ in lt.groups() for check in group_checks for f in check(replace(lt, only=i))]

    return run


def named_model(lt: Linting) -> list[Finding]:
    """A model named elsewhere (axolotl's base_model ...): its own file's findings, at its lines, linted alone
    with :func:`model_checks` (its lengths aside: the config naming it sets those)."""
    m = lt.cfg.model
    if m is None or m.loaded is None:
        return []
    return _run(Linting(m.loaded), model_checks())


@functools.lru_cache(maxsize=1)
def checks() -> tuple:
    """The one dispatch list of the lint rules, in the order their findings are listed; each is
    ``check(linting) -> list[Finding]`` and sees the findings of those before it in ``linting.found``."""
    from .rules import dtype, lengths, layers, reading, runtime, schemes, values

    return (values.check, runtime.check, reading.check, named_model, lengths.missing_training_length,
            values.unanalysed, each_group(lengths.check, schemes.check), layers.check, dtype.check)


@functools.lru_cache(maxsize=1)
def model_checks() -> tuple:
    """The checks of a model's config.json named by another config (:func:`named_model`)."""
    from .rules import reading, runtime, values

    return (values.check, runtime.check, reading.check)


def _run(lt: Linting, dispatch: tuple) -> list[Finding]:
    for check in dispatch:
        lt.found.extend(check(lt))
    return lt.found


def lint_config(cfg: LoadedConfig, *, shown_only: bool = False) -> LintResult:
    """All findings for ``cfg`` (unfiltered; ``findings.select_findings`` filters): every check of
    :func:`checks` in turn. ``shown_only``: for an output of the default rule set, which hides informational
    findings and leaves out rules that are off by default: those are then decided but not detailed
    (``rules.lengths._men``; the same codes and severities, a shorter message for the hidden ones)."""
    bad_lengths = length_problems(cfg)
    layers = [_analyse(cfg, i, bad_lengths) for i in range(len(cfg.layers))]
    lt = Linting(cfg, layers, [], shown_only, bad_lengths)
    return LintResult(cfg.path, cfg, layers, _run(lt, checks()))
