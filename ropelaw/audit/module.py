"""`audit module`: run a rotary module in each precision scenario, measure it, turn it into findings.

:func:`audit_module` builds the float32 reference first, then each scenario isolated from the
others (:mod:`ropelaw.audit.scenarios`), and :func:`runtime_findings` turns the measurements
into findings (RP301-RP304 positions, products, frequencies, inf/NaN; RP305 sine lost; RP306
magnitude; RP307 a scenario that raised; RP308 frequencies the module rounds itself), located at
the class or function that computes the encoding (:func:`~ropelaw.audit.target.source_of_encoding`).
:mod:`ropelaw.audit.hf` builds transformers' classes and calls this; :mod:`ropelaw.audit.runtime`
re-exports the public names of both.

torch is imported inside the functions only.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any
from collections.abc import Callable, Iterable

import numpy as np

from ..errors import UsageError
from ..findings import Finding
from ..results import Result
from .measure import DEFAULT_CHUNK, DRIFT_TOLERANCE, ScenarioResult, geometric_nominal, scenario_magnitude_tolerance
from .probe import TableTooShort
from .rules.runtime import (RUNTIME_FREQUENCIES_ROUNDED, RUNTIME_FREQUENCIES_ROUNDED_IN_MODULE, RUNTIME_MAGNITUDE_ERROR,
                            RUNTIME_NONFINITE, RUNTIME_POSITIONS_ROUNDED, RUNTIME_PRODUCT_ROUNDED,
                            RUNTIME_SCENARIO_RAISED,
                            RUNTIME_SINE_LOST)
from .scenarios import (SCENARIOS, Reference, build_reference, canonical_dtype, expand_scenarios, failed_scenario,
                        measure_scenario)
from .target import load_factory, source_of, source_of_encoding

MAX_RUNTIME_LENGTH = 1 << 23  # 8,388,608 positions: a (L, 128) float32 cache is 4 GiB; 1M takes ~10 s per scenario


@dataclass
class ModuleAudit(Result):
    """The runtime audit of one rotary module: per-scenario results and findings."""

    target: str
    convention: str  # hf-legacy | hf-current | rotate-callable | length | positions-rotate
    layout: str  # pair layout: rotate-half | interleaved | per-pair
    rotary_dim: int
    head_dim: int | None
    base: float | None  # nominal base (None: nominal frequencies are the float32 build's own)
    base_source: str  # given | inferred | float32 build
    base_fit_residual: float
    dtype: str
    length: int
    scenarios: list[ScenarioResult]
    findings: list[Finding] = field(default_factory=list)
    path: str = "-"  # file of the factory / class, for findings
    line: int = 1
    call: str = ""  # how the module was called (Probe.call_form)
    init_cache_length: int | None = None  # rows of a cos/sin cache built at init (None: none)
    max_position_embeddings: int | None = None  # audit hf: the value the module was built with
    notes: list[str] = field(default_factory=list)  # what the audit did not exercise, and why
    inputs: str = ""  # a length | x + a length | x + position ids | positions + q + k | q | q + k
    output: str = ""  # (cos, sin) | angles | complex | cos|sin | rotated | (q, k)
    tensor_layout: str | None = None  # the query's layout, e.g. (batch, seq, heads, dim)
    scaled: bool = False  # the float32 build's |(cos, sin)| != 1 (XPos, attention factor, mscale)
    reference_drift: float = 0.0  # max |omega_i / theta_i - 1| of the float32 build itself
    reference_phase_error: float = 0.0  # (L - 1) max |omega_i - theta_i| of the float32 build
    frequencies_rounded_to: str | None = None  # bf16 | fp16: the module rounds its own frequencies (RP308)

    def to_dict(self) -> dict[str, Any]:
        return {
            "target": self.target, "convention": self.convention, "layout": self.layout,
            "rotary_dim": self.rotary_dim, "head_dim": self.head_dim, "base": self.base,
            "base_source": self.base_source,
            "base_fit_residual": self.base_fit_residual if math.isfinite(self.base_fit_residual) else None,
            "dtype": self.dtype, "length": self.length, "call": self.call, "inputs": self.inputs,
            "output": self.output, "tensor_layout": self.tensor_layout, "scaled": self.scaled,
            "reference_drift": self.reference_drift, "frequencies_rounded_to": self.frequencies_rounded_to,
            "init_cache_length": self.init_cache_length, "max_position_embeddings": self.max_position_embeddings,
            "notes": list(self.notes),
            "scenarios": [s.to_dict() for s in self.scenarios],
            "findings": [f.to_dict() for f in self.findings],
        }

    def scenario(self, name: str) -> ScenarioResult:
        for s in self.scenarios:
            if s.scenario == name:
                return s
        raise KeyError(name)


def audit_module(target: str | Callable[[], Any], dtype: str = "bf16", length: int = 8192,
                 scenarios: Iterable[str] = SCENARIOS, base: float | None = None,
                 head_dim: int | None = None, chunk: int = DEFAULT_CHUNK, progress: bool = False,
                 name: str | None = None) -> ModuleAudit:
    """Run a rotary module in each precision scenario and measure its encoding.

    ``target``: ``path/file.py:NAME``, ``package.module:NAME`` or a zero-argument factory.
    ``dtype``: bf16 | fp16 | fp32 (aliases accepted). ``length``: positions 0 .. length-1.
    ``base``: nominal base; inferred from a float32 build when None. Raises ValueError /
    UsageError (one line) for bad input. Definitions: see the module docstring.
    """
    require_torch()
    dtype_name = canonical_dtype(dtype)
    if not isinstance(length, int) or length < 2:
        raise UsageError(f"length must be an integer >= 2, got {length!r}")
    if length > MAX_RUNTIME_LENGTH:
        raise UsageError(f"length {length:,} is beyond {MAX_RUNTIME_LENGTH:,} (2^23) positions: the module's own "
                         "(L, d) tensors would not fit in memory; `ropelaw exact` counts exact positions in closed "
                         "form")
    if base is not None and not (base > 1 and math.isfinite(base)):
        raise UsageError(f"base must be a finite number > 1, got {base!r}")
    scen = expand_scenarios(scenarios)
    factory, label, path, line = _factory_of(target, name)
    try:
        reference = build_reference(factory, length, head_dim, base)
    except TableTooShort as exc:
        raise _short_table(exc, length) from None
    ref, cached = reference.probe, reference.cached
    src_path, src_line = source_of_encoding(ref.obj)  # the code that computes the encoding, not the factory
    if src_path is not None:
        path, line = src_path, src_line
    nominal, base_val, base_source, residual, rounded_to = _nominal_frequencies(reference, base)
    omega_ref = reference.omega
    results = []
    for s in scen:  # each scenario on its own: an exception is that scenario's result
        try:
            results.append(measure_scenario(factory, s, dtype_name, length, nominal, reference, chunk, progress))
        except TableTooShort as exc:  # the module's table ends before `length`: a bad length, not a finding
            raise _short_table(exc, length) from None
        except Exception as exc:
            results.append(failed_scenario(s, dtype_name, length, exc))
    audit = ModuleAudit(target=label, convention=ref.convention, layout=ref.layout, rotary_dim=ref.rotary_dim,
                        head_dim=ref.head_dim, base=base_val, base_source=base_source, base_fit_residual=residual,
                        dtype=dtype_name, length=length, scenarios=results, path=path, line=line,
                        call=ref.call_form, init_cache_length=cached, inputs=ref.inputs, output=ref.output,
                        tensor_layout=ref.tensor_layout, scaled=reference.scaled,
                        reference_drift=float(np.max(np.abs(omega_ref / nominal - 1))),
                        reference_phase_error=float((length - 1) * np.max(np.abs(omega_ref - nominal))),
                        frequencies_rounded_to=rounded_to)
    if ref.convention == "hf-legacy" and cached is not None and cached >= length:
        audit.notes.append(
            f"cache-rebuild path not exercised: the module builds a cos/sin cache for {cached:,} positions "
            f"at init, which covers the audited {length:,}; forward rebuilds it only beyond {cached:,} "
            f"(where legacy classes round positions in a cast inv_freq's dtype): audit with --length above "
            f"{cached:,} or build the module with a smaller max_position_embeddings")
    for r in results:  # what a scenario did that no finding says (a finding quotes its own note)
        if r.note and r.path != "sine lost":
            audit.notes.append(f"{r.scenario}: {r.note}")
    audit.findings = runtime_findings(audit)
    return audit


def _factory_of(target: str | Callable[[], Any], name: str | None) -> tuple[Callable[[], Any], str, str, int]:
    """``(factory, label, source path, line)`` of a ``path/file.py:NAME`` / ``module:NAME`` target or a
    factory (labelled ``name``, else its qualified name; path "-" when it has no source file)."""
    if isinstance(target, str):
        factory, path, line = load_factory(target)
        return factory, target, path, line
    src, line = source_of(target)
    qualname: str = getattr(target, "__qualname__", repr(target))
    return target, name or qualname, src or "-", line


def _nominal_frequencies(reference: Reference, base: float | None
                         ) -> tuple[np.ndarray, float | None, str, float, str | None]:
    """``(nominal frequencies, base, base source, fit residual, rounded to)`` the scenarios are judged against.

    A given ``base``: base^(-2i/d), unless the float32 build's frequencies differ from it by more than
    :data:`DRIFT_TOLERANCE` (then the build's own). Else the base fitted to the float32 build
    (:func:`geometric_nominal`; found only within what a low-precision output resolves, ``reference``
    settles on the exact values), or, not geometric (scaled or custom frequencies), the build itself.
    """
    omega_ref = reference.omega
    npairs = omega_ref.size
    d = 2 * npairs
    if base is not None:
        nominal = base ** (-2.0 * np.arange(npairs) / d)
        residual = float(np.max(np.abs(omega_ref / nominal - 1)))
        if residual <= DRIFT_TOLERANCE:
            return nominal, float(base), "given", residual, None
        # the float32 build does not use base^(-2i/d) for this base (a scaled scheme, another base): judged
        # against its own frequencies, so that no scenario shows a drift that every build, float32 too, has
        return omega_ref, float(base), (f"given; the float32 build's frequencies differ from base^(-2i/d) by up to "
                                        f"{residual:.2e} (relative): measured against them"), residual, None
    fitted, residual, rounded_to, how = geometric_nominal(omega_ref, reference.uncertainty)
    if fitted is None:  # not geometric (scaled or custom frequencies): the float32 build is the nominal
        return omega_ref, None, "float32 build", residual, rounded_to
    nominal = fitted ** (-2.0 * np.arange(npairs) / d)
    if how != "fit":  # found only within what a low-precision output resolves: use the exact values
        reference.settle(nominal, rounded_to)
        residual = float(np.max(np.abs(reference.omega / nominal - 1.0)))
    return nominal, fitted, "inferred", residual, rounded_to


def _run_of(scenario: str, dtype: str) -> str:
    """How a scenario happens in training (ropelaw.audit.policy.TRAINER_PRECISIONS), for its position findings."""
    from .policy import TRAINER_PRECISIONS

    if scenario == "default":
        names = [p.name for p in TRAINER_PRECISIONS if p.default_dtype == dtype]
        return f" (the default dtype is {dtype} under Lightning/Fabric precision='{names[0]}')" if names else ""
    if scenario == "autocast-cuda":
        names = [p.name for p in TRAINER_PRECISIONS if p.autocast == dtype]
        return (f" (CUDA autocast: Lightning precision='{names[0]}' on a GPU, torch.autocast('cuda'))"
                if names else " (CUDA autocast)")
    return ""


def _short_table(exc: TableTooShort, length: int):
    """A table shorter than the length asked for: a usage error naming the table's length."""
    from ..errors import UsageError

    return UsageError(f"the module's table has {exc.rows:,} rows (positions 0..{exc.rows - 1:,}), shorter than the "
                      f"{length:,} positions asked for (--length {length}): audit with --length {exc.rows} or less, "
                      f"or build the module with a longer table")


def _number(x) -> str:
    from ..numfmt import number

    return number(x)


def require_torch():
    from ..errors import require

    return require("torch", "torch", "the runtime audit")


# --------------------------------------------------------------------------- findings


def _pct(x: float) -> str:
    return f"{100 * x:.2f}%"


def runtime_findings(audit: ModuleAudit) -> list[Finding]:
    """RP3xx findings from the measurements (one per scenario and cause)."""
    out: list[Finding] = []
    loc: dict[str, Any] = dict(path=audit.path, line=audit.line, column=1)  # where every finding points
    if audit.frequencies_rounded_to:
        fmt = audit.frequencies_rounded_to
        out.append(Finding.of(
            RUNTIME_FREQUENCIES_ROUNDED_IN_MODULE,
            f"the module's own frequencies (its float32 build) are base^(-2i/d), base {_number(audit.base)}, rounded "
            f"to {fmt}: they drift up to {audit.reference_drift:.2e} (relative), a phase error of up to "
            f"{audit.reference_phase_error:.3g} rad at position {audit.length - 1:,}, in every precision",
            **loc, frequency_drift=audit.reference_drift, rounded_to=fmt, length=audit.length))
    for s in audit.scenarios:
        tag = f"[{s.scenario}, {s.dtype}]"
        if s.error is not None:
            out.append(Finding.of(
                RUNTIME_SCENARIO_RAISED, f"{tag} the module raised {s.error}; the other scenarios were measured",
                fix="make the rotary run in this precision: compute in float32 inside and cast the result",
                **loc, scenario=s.scenario, dtype=s.dtype, error=s.error))
            continue
        common: dict[str, Any] = dict(scenario=s.scenario, dtype=s.dtype, length=s.length, exact=s.exact,
                      exact_fraction=s.exact_fraction, distinct=s.distinct)
        run = _run_of(s.scenario, s.dtype)  # the training run this scenario is
        if s.path == "sine lost":
            out.append(Finding.of(
                RUNTIME_SINE_LOST,
                f"{tag} the sine is lost: no position has a nonzero sine, the complex frequencies came back "
                f"real: {s.note or 'imaginary part dropped'}; {s.exact:,} of {s.length:,} positions "
                f"({_pct(s.exact_fraction)}) keep their encoding",
                fix="recompute complex frequencies after .to() or keep them as float32 (cos, sin); "
                    ".bfloat16()/.half() leave complex buffers alone, .to(dtype) does not",
                **loc, **common))
            continue
        if s.path == "product rounded":
            out.append(Finding.of(
                RUNTIME_PRODUCT_ROUNDED,
                f"{tag} the angle position * inv_freq is rounded: {s.exact:,} of {s.length:,} positions "
                f"({_pct(s.exact_fraction)}) keep their encoding, {s.distinct:,} distinct, max phase error "
                f"{s.max_phase_error:.3g} rad at position {s.max_phase_error_at}{run}",
                fix="compute positions (int64 -> float32) and the product in float32 with autocast disabled; "
                    "cast only cos/sin to the model dtype", **loc, **common))
        elif s.path == "positions rounded":
            out.append(Finding.of(
                RUNTIME_POSITIONS_ROUNDED,
                f"{tag} positions pass through {s.dtype}: {s.exact:,} of {s.length:,} positions "
                f"({_pct(s.exact_fraction)}) keep their own encoding, {s.distinct:,} distinct; "
                f"first collision at {s.first_inexact}{run}",
                fix="build positions as int64 and convert to float32: torch.arange(n, dtype=torch.int64).float()",
                **loc, **common))
        if s.frequency_drift > DRIFT_TOLERANCE and s.frequency_drift > audit.reference_drift + DRIFT_TOLERANCE:
            out.append(Finding.of(
                RUNTIME_FREQUENCIES_ROUNDED,
                f"{tag} effective rotary frequencies drift up to {s.frequency_drift:.2e} (relative) from "
                f"{'base^(-2i/d)' if audit.base else 'the float32 build'}; max phase error "
                f"{s.max_phase_error:.3g} rad at position {s.max_phase_error_at}",
                fix="keep inv_freq in float32 outside the cast (recompute it in forward or restore it after .to())",
                **loc, frequency_drift=s.frequency_drift, scenario=s.scenario, dtype=s.dtype))
        tol = scenario_magnitude_tolerance(s.output_dtype, s.dtype)
        if s.magnitude_error > tol:
            ref = "the float32 build's" if s.magnitude_reference != "1" else "1"
            out.append(Finding.of(
                RUNTIME_MAGNITUDE_ERROR,
                f"{tag} the magnitude of the encoding is off by up to {100 * s.magnitude_error:.2f}% (relative, "
                f"at position {s.magnitude_error_at}) from {ref}; output rounding alone allows {100 * tol:.2f}%",
                fix="compute the scale (XPos power, attention factor, mscale) in float32 from int64 positions "
                    "and cast only the scaled cos/sin",
                **loc, magnitude_error=s.magnitude_error, scenario=s.scenario, dtype=s.dtype))
        if s.nonfinite:
            out.append(Finding.of(
                RUNTIME_NONFINITE,
                f"{tag} {s.nonfinite:,} of {s.length:,} positions give inf/NaN encodings",
                fix="keep positions and angles in int64/float32; fp16 overflows at 65,520",
                **loc, nonfinite=s.nonfinite, scenario=s.scenario, dtype=s.dtype))
    return out

