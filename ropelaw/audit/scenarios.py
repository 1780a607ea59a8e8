"""Precision scenarios: how the module is built and called, each measured on its own.

Precision scenarios (how the bug is triggered in practice; :data:`ropelaw.audit.policy.SCENARIO_DESCRIPTIONS`)
- ``cast``: built in float32, then ``.to(dtype)`` (``model.bfloat16()``, DeepSpeed, FSDP ``param_dtype``);
- ``default``: built and run under ``torch.set_default_dtype(dtype)`` (restored in a finally): what
  Lightning/Fabric ``precision="bf16-true"`` / ``"16-true"`` do while the model is built and run;
- ``autocast-cuda``: built in float32 (outside autocast), called inside an autocast region with CUDA's op lists,
  emulated on CPU tensors (:func:`ropelaw.audit.autocast.cuda_autocast`): ``bf16-mixed`` on a GPU;
- ``autocast-cpu``: built in float32, called inside ``torch.autocast("cpu", dtype)`` (CPU's lists).
``autocast`` names both autocast scenarios. In every scenario the input ``x`` has the scenario
dtype (activations are low precision).

Each scenario builds its own module from the factory and calls it the way the float32 build
was found to be called (:meth:`Probe.like`): a scenario that breaks the encoding (a cast that
makes complex frequencies real) is measured, not refused, and an exception in one scenario is
that scenario's result (:func:`failed_scenario`); the others still run.

torch is imported inside the functions only.
"""

from __future__ import annotations

import contextlib
import sys
from typing import Any
from collections.abc import Callable

import numpy as np

from ..errors import UsageError
from . import policy
from .probe import Probe, first_line, user_errors
from .target import init_cache_length, inv_freq_array
from .measure import (DRIFT_TOLERANCE, SCALED_TOLERANCE, EncodingStats, ScenarioResult, effective_frequencies,
                      frequency_uncertainty, resolve_frequencies, scenario_magnitude_tolerance, unit_roundoff)

SCENARIOS = tuple(policy.SCENARIO_DESCRIPTIONS)  # cast, default, autocast-cuda, autocast-cpu: the policy's list
SCENARIO_ALIASES = {"autocast": ("autocast-cuda", "autocast-cpu")}
_DTYPES = {
    "bf16": "bfloat16", "bfloat16": "bfloat16", "torch.bfloat16": "bfloat16",
    "fp16": "float16", "float16": "float16", "half": "float16", "torch.float16": "float16", "torch.half": "float16",
    "fp32": "float32", "float32": "float32", "float": "float32", "torch.float32": "float32", "torch.float": "float32",
}
_SHORT = {"bfloat16": "bf16", "float16": "fp16", "float32": "fp32"}


def canonical_dtype(name: str) -> str:
    """``bf16`` / ``fp16`` / ``fp32`` for any accepted alias; ValueError otherwise."""
    key = str(name).strip().lower()
    if key not in _DTYPES:
        raise UsageError(f"runtime audit supports bf16, fp16 and fp32, not {name!r} "
                         "(torch cannot run a module in fp8 or tf32 as a default dtype)")
    return _SHORT[_DTYPES[key]]


def _torch_dtype(name: str):
    import torch

    return getattr(torch, _DTYPES[canonical_dtype(name)])



# --------------------------------------------------------------------------- scenarios


def expand_scenarios(names) -> list[str]:
    """Scenario names with ``autocast`` expanded to both autocast scenarios; ValueError for an unknown one."""
    out: list[str] = []
    for s in names:
        for x in SCENARIO_ALIASES.get(s, (s,)):
            if x not in SCENARIOS:
                raise UsageError(f"unknown scenario {s!r}; choose one of {', '.join(SCENARIOS)}, autocast (both "
                                 "autocast scenarios) or all")
            if x not in out:
                out.append(x)
    return out


@contextlib.contextmanager
def _scenario(name: str, dtype, notes: list[str] | None = None):
    """Context in which the factory is built and the module called."""
    import torch

    if name == "default":
        old = torch.get_default_dtype()
        torch.set_default_dtype(dtype)
        try:
            yield
        finally:
            torch.set_default_dtype(old)
    elif name == "autocast-cuda":
        from .autocast import cuda_autocast

        with cuda_autocast(dtype) as record:
            yield
        diff = record.differences()
        if notes is not None and diff:
            notes.append("CUDA's autocast lists changed the run where CPU's would not: " + "; ".join(diff))
    elif name == "autocast-cpu":
        with torch.autocast("cpu", dtype=dtype):
            yield
    elif name in ("cast", "reference"):
        yield
    else:
        raise UsageError(f"unknown scenario {name!r}; choose one of {', '.join(SCENARIOS)} or all")


@contextlib.contextmanager
def float32_context():
    """float32 default dtype, autocast off: how the reference build is made and called."""
    import torch

    old = torch.get_default_dtype()
    torch.set_default_dtype(torch.float32)
    try:
        with torch.autocast("cpu", enabled=False):
            yield
    finally:
        torch.set_default_dtype(old)


def _complex_tensors(owner: Any) -> dict[str, Any]:
    """Complex buffers, parameters and tensor attributes of ``owner`` (recursively for modules)."""
    import torch

    found: dict[str, Any] = {}
    if isinstance(owner, torch.nn.Module):
        for name, t in list(owner.named_buffers()) + list(owner.named_parameters()):
            if t is not None and t.is_complex():
                found[name] = t
    for name, v in (vars(owner).items() if hasattr(owner, "__dict__") else ()):
        if isinstance(v, torch.Tensor) and v.is_complex():
            found.setdefault(name, v)
    return found


def _build(factory: Callable[[], Any], scenario: str, dtype, notes: list[str] | None = None):
    """Call the factory; in the ``cast`` scenario cast the result (or its owner) to dtype.

    ``notes`` receives what the cast did that matters: complex tensors it made real (``.to``
    of a real dtype drops the imaginary part, with torch's UserWarning, recorded here instead
    of raised), or that there was nothing to cast (a plain function).
    """
    import warnings

    try:
        obj = factory()
    except Exception as exc:
        raise UsageError(f"the factory raised {type(exc).__name__}: {exc}") from None
    if obj is None:
        raise UsageError("the factory returned None; it must return the rotary module or callable")
    if scenario == "cast":
        owner = obj if hasattr(obj, "to") else getattr(obj, "__self__", None)
        if owner is not None and hasattr(owner, "to"):
            before = _complex_tensors(owner)
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                res = owner.to(dtype)
            if owner is obj and res is not None:
                obj = res
            after = _complex_tensors(res if res is not None else owner)
            lost = [n for n in before if n not in after]
            if notes is not None and lost:
                said = next((str(w.message).split(" (Triggered internally")[0] for w in caught
                             if "imaginary" in str(w.message)), None)
                notes.append(f"complex {', '.join(lost)} made real by .to({str(dtype).replace('torch.', '')})"
                             + (f", torch warned: {said.strip().splitlines()[0]}" if said else ""))
        elif notes is not None:
            notes.append(f"nothing to cast: the factory returns a {type(obj).__name__} without .to(), "
                         "so this is the float32 build called with inputs in the dtype")
    return obj


def _pow2_positions(length: int, limit: int | None = None) -> list[int]:
    top = length - 1 if limit is None else min(length - 1, limit)
    out, p = [], 1
    while p <= top:
        out.append(p)
        p *= 2
    return out


def _progress(total: int, desc: str, enabled: bool):
    if not enabled:
        return None
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, unit="pos", unit_scale=True, leave=False, file=sys.stderr)


def values_precision(cos: np.ndarray, sin: np.ndarray, output_dtype: str) -> str:
    """The precision the cos/sin values really carry: the output dtype, or bf16 / fp16 when a float32
    output holds only values of that format (vLLM and sglang keep their cos/sin cache in the model dtype,
    bf16 by default, and hand it back in float32 for a float32 query): frequencies measured from such
    values are uncertain to that format's rounding, not float32's."""
    if output_dtype not in ("float32", "float64", "complex64", "complex128"):
        return output_dtype
    from ..formats import round_to_format

    v = np.concatenate([np.asarray(cos, np.float64).ravel(), np.asarray(sin, np.float64).ravel()])
    v = v[np.isfinite(v)]
    for fmt, name in (("bf16", "bfloat16"), ("fp16", "float16")):
        if v.size and np.array_equal(np.asarray(round_to_format(v, fmt), np.float64), v):
            return name
    return output_dtype


def failed_scenario(scenario: str, dtype_name: str, length: int, exc: BaseException) -> ScenarioResult:
    """The result of a scenario that raised: the exception in one line, no measurements (NaN)."""
    nan = float("nan")
    return ScenarioResult(
        scenario=scenario, dtype=dtype_name, length=length, exact=0, exact_fraction=nan, distinct=0,
        distinct_fraction=nan, nonfinite=0, first_inexact=None, frequency_drift=nan, max_phase_error=nan,
        max_phase_error_at=None, path="error", output_dtype="?", frequency_source="-",
        magnitude_error=nan, error=first_line(exc, 160))


class Reference:
    """The float32 build: how it is called, its frequencies, init cache, and magnitudes if scaled."""

    def __init__(self, probe: Probe, omega: np.ndarray, cached: int | None, scaled: bool, factory, length: int,
                 uncertainty: np.ndarray | None = None):
        self.probe = probe
        self.omega = omega  # (d/2,) float64 effective frequencies of the float32 build
        # (d/2,) bound on |omega - true frequency| (0 when omega is the module's own inv_freq attribute)
        self.uncertainty = np.zeros_like(omega) if uncertainty is None else uncertainty
        self.cached = cached  # rows of a cos/sin cache built at init
        self.scaled = scaled  # |(cos, sin)| != 1: magnitudes are compared with this build's
        self._factory = factory
        self._length = length
        self._full: Probe | None = None

    def settle(self, nominal: np.ndarray, rounded_to: str | None) -> None:
        """Replace frequencies measured from a low-precision output by the exact values they were found
        to be (:func:`ropelaw.audit.measure.geometric_nominal`): base^(-2i/d), or those values rounded to
        ``rounded_to`` as torch rounds float32 (``via_float32``); pair by pair, only where the measurement
        agrees within its uncertainty. Scenarios then compare with exact values, not with measurement noise."""
        if not np.any(self.uncertainty):
            return  # already exact (the module's own inv_freq) or float32-resolved
        from ..formats import round_to_format

        exact = np.asarray(nominal, np.float64)
        if rounded_to:  # the value of the format nearest the measurement (its error is far below a spacing)
            exact = np.asarray(round_to_format(self.omega, rounded_to), np.float64)
        ok = np.abs(self.omega - exact) <= self.uncertainty + 4 * 2.0**-24 * np.abs(exact)
        self.omega = np.where(ok, exact, self.omega)
        self.uncertainty = np.where(ok, 0.0, self.uncertainty)

    def magnitudes(self, start: int, stop: int) -> np.ndarray | None:
        """|(cos, sin)| ``(n, d/2)`` of the float32 build at [start, stop), or None (nominal 1)."""
        if not self.scaled:
            return None
        import torch

        with torch.no_grad(), float32_context():
            if self._full is None:
                obj = _build(self._factory, "reference", torch.float32)
                self._full = Probe.like(self.probe, obj, torch.float32, self._length)
                self._full.prepare()
            c, s = self._full.rows(start, stop)
        return np.hypot(c.astype(np.float64), s.astype(np.float64))


def _multiplied_by(probe: Probe, measured: np.ndarray, unc: np.ndarray, candidates, length: int,
                   omega: np.ndarray, source: str) -> tuple[np.ndarray, str]:
    """Which frequency vector the module multiplies positions by: measured, not assumed.

    At p = 1, 2, 4, ... an angle p * theta rounded to a low-precision dtype reads as p * round(theta) (a
    power of two commutes with rounding): torchscale's XPos computes float32 angles and rounds them
    `.to(x)`, so its powers of two show frequencies "rounded to fp16" although it multiplies by float32
    ones. At other positions the vector it multiplies by keeps the phase error at the angle's rounding;
    any other drifts by p |theta - round(theta)|. Candidates within the output's rounding of the
    measurement at the powers of two (u |omega| more than :func:`resolve_frequencies` allows) are compared
    on up to 64 positions that are not powers of two by the trend of the wrapped phase error in p (its
    least-squares slope per pair, summed in squares: rounding noise has none); one replaces the first
    choice only when its trend is under a quarter of the first choice's (torchscale XPos, bf16 cast, 2,048
    positions: 1.35 for the float32 frequencies it multiplies by, 37.7 for their bf16 rounding)."""
    from .measure import TWO_PI

    u = unit_roundoff(probe.output_dtype) if probe.output_dtype in ("bfloat16", "float16") else 2.0**-24
    wide = unc + u * np.abs(measured)
    ok = []
    for name, cand in candidates:
        if cand is None or np.shape(cand) != measured.shape or not np.all(np.isfinite(cand)):
            continue
        cand = np.asarray(cand, np.float64)
        if np.all(np.abs(measured - cand) <= wide) and not np.array_equal(cand, omega):
            ok.append((name, cand))
    if not ok:
        return omega, source
    sample = sorted({int(p) for p in np.linspace(3, length - 1, 64)} - {1 << k for k in range(64)})
    if not sample:
        return omega, source
    c, s = probe.at(sample)
    phi = np.arctan2(s.astype(np.float64), c.astype(np.float64))
    p = np.asarray(sample, np.float64)[:, None]
    finite = np.all(np.isfinite(phi), axis=1)

    pf = p[finite]
    norm = float(np.sum(pf * pf)) or 1.0

    def trend(cand: np.ndarray) -> float:
        """sum_i (sum_p p e_i(p))^2 / sum_p p^2: the phase error's part that grows with p (a frequency
        other than the one multiplied by), not the rounding noise around it."""
        e = phi[finite] - pf * cand[None, :]
        e -= TWO_PI * np.round(e / TWO_PI)
        return float(np.sum(np.sum(pf * e, axis=0) ** 2) / norm)

    name, cand = min(ok, key=lambda nc: trend(nc[1]))
    if trend(cand) < trend(np.asarray(omega, np.float64)) / 4:
        return cand, name
    return omega, source


def measure_scenario(factory, scenario: str, dtype_name: str, length: int, nominal: np.ndarray,
                      ref: Reference, chunk: int, progress: bool) -> ScenarioResult:
    """Build, call and measure one scenario (raises on failure: the caller isolates it)."""
    import torch

    reference = ref.omega
    dtype = _torch_dtype(dtype_name)
    notes: list[str] = []
    if scenario.startswith("autocast"):  # a model is built outside autocast, which wraps only its forward
        with torch.no_grad(), float32_context():
            obj = _build(factory, scenario, dtype, notes)
    with torch.no_grad(), _scenario(scenario, dtype, notes):
        if not scenario.startswith("autocast"):
            obj = _build(factory, scenario, dtype, notes)
        probe = Probe.like(ref.probe, obj, dtype, length)
        probe.prepare()
        p2 = _pow2_positions(length)
        if p2:
            c, s = probe.at(p2)
            measured = effective_frequencies(p2, c, s)
        else:
            measured = reference.copy()
        if measured.size != nominal.size:
            raise UsageError(f"{2 * measured.size} rotary dims, float32 build had {2 * nominal.size}")
        from ..formats import round_to_format

        unc = frequency_uncertainty(measured, p2[-1] if p2 else 1, values_precision(c, s, probe.output_dtype)
                                    if p2 else probe.output_dtype)
        if probe.output == "angles":  # the angle itself is rounded to the output dtype: u |angle| at p_max
            u = unit_roundoff(probe.output_dtype) if probe.output_dtype in ("bfloat16", "float16") else 2.0**-24
            unc = unc + u * np.abs(measured)
        sine_lost = bool(p2) and not np.any(s != 0)  # complex frequencies made real: no angle to measure
        candidates = [
            ("inv_freq attribute", inv_freq_array(obj)),
            ("float32 build", reference),
            (f"float32 build rounded to {dtype_name}", np.asarray(round_to_format(reference, dtype_name), np.float64)),
        ]
        omega, freq_source = resolve_frequencies(measured, unc, candidates)
        omega, freq_source = _multiplied_by(probe, measured, unc, candidates, length, omega, freq_source)
        if sine_lost:  # judge the encoding against the float32 build's frequencies
            omega, freq_source = np.asarray(reference, np.float64), "float32 build (sine lost)"
        stats = EncodingStats(omega, nominal, dtype_name, length)
        bar = _progress(length, scenario, progress)
        try:
            for start in range(0, length, chunk):
                stop = min(start + chunk, length)
                c, s = probe.rows(start, stop)
                stats.update(np.arange(start, stop), c, s, ref.magnitudes(start, stop))
                if bar is not None:
                    bar.update(stop - start)
        finally:
            if bar is not None:
                bar.close()
        out_dtype = probe.output_dtype
    rel = np.abs(omega / nominal - 1.0)  # (d/2,)
    if freq_source == "measured":  # only pairs whose frequency the measurement resolves
        rel = rel[unc / np.abs(nominal) <= DRIFT_TOLERANCE / 2]
    drift = float(rel.max()) if rel.size else 0.0
    distinct = stats.distinct()
    if probe.imaginary_dropped and not any("made real" in n for n in notes):
        notes.append("the complex frequencies came back real")
    # the path says "frequencies rounded" by the criterion of RP303: a drift beyond the float32 build's own
    # (frequencies the module rounds in every build are RP308, not a loss of this scenario)
    ref_drift = float(np.max(np.abs(np.asarray(reference, np.float64) / nominal - 1.0))) if nominal.size else 0.0
    path = stats.path(drift if drift > ref_drift + DRIFT_TOLERANCE else 0.0)
    if path == "clean" and stats.max_magnitude_error > scenario_magnitude_tolerance(out_dtype, dtype_name):
        path = "magnitude off"  # angles exact, the scale (XPos, attention factor) computed in low precision
    return ScenarioResult(
        scenario=scenario, dtype=dtype_name, length=length, exact=stats.exact,
        exact_fraction=stats.exact / length, distinct=distinct, distinct_fraction=distinct / length,
        nonfinite=stats.nonfinite, first_inexact=stats.first_inexact, frequency_drift=drift,
        max_phase_error=stats.max_phase_error, max_phase_error_at=stats.max_phase_error_at,
        path=path, output_dtype=out_dtype, frequency_source=freq_source,
        effective_frequencies=omega.tolist(), magnitude_error=stats.max_magnitude_error,
        magnitude_error_at=stats.max_magnitude_error_at,
        magnitude_reference="float32 build" if ref.scaled else "1", note="; ".join(notes) or None)


def build_reference(factory, length: int, head_dim: int | None, base: float | None = None) -> Reference:
    """A float32 build: how to call it, its float32 frequencies, the init cache rows, scaled or not."""
    import torch

    with float32_context(), torch.no_grad():
        obj = _build(factory, "reference", torch.float32)
        cached = init_cache_length(obj)
        ref_len = min(length, 2**12 + 1)  # frequencies from p <= 4096: float32-exact enough
        with user_errors(""):
            probe = Probe.detect(obj, torch.float32, ref_len, head_dim, base)
            if probe.plan.kind == "positions" and probe.output not in ("rotated", "(q, k)"):
                _check_table_covers(probe, length)
            probe.prepare()
            p2 = _pow2_positions(ref_len)
            if not p2:
                p2 = [1]
                probe.length = 2
                probe.prepare()
            c, s = probe.at(p2)
        measured = effective_frequencies(p2, c, s)
        attr = inv_freq_array(obj)
        unc = frequency_uncertainty(measured, p2[-1], values_precision(c, s, probe.output_dtype))
        omega, source = resolve_frequencies(measured, unc, [("inv_freq attribute", attr)])
        _check_position_times_frequency(probe, p2, c, s)
        mag = np.hypot(c.astype(np.float64), s.astype(np.float64))
        scaled = bool(np.any(np.abs(mag - 1.0) > SCALED_TOLERANCE))
    return Reference(probe, omega, cached, scaled, factory, length,
                     np.zeros_like(omega) if source != "measured" else unc)


def _check_position_times_frequency(probe: Probe, p2: list[int], cos: np.ndarray, sin: np.ndarray) -> None:
    """The float32 build, read as the probe reads it, must be a phase linear in position at positions 1, 2, 4,
    ...: each doubling of the position doubles every pair's phase (mod 2 pi), up to the output's rounding.
    That holds for rounded positions, products and angles too (a power of two times a rounded value is
    rounded alike). When it does not, the output's layout was not identified (2-D / 3-D position axes, a
    table the probe misread) and every number measured from it would be a guess: one line, exit 2, never a
    report on what was not understood. Tolerance 0.25 rad: a bf16 table's phase is good to 2^-8 rad, a
    misread one is off by up to pi."""
    from ..errors import UsageError
    from .measure import TWO_PI

    phi = np.arctan2(np.asarray(sin, np.float64), np.asarray(cos, np.float64))  # (len(p2), d/2)
    for k in range(1, len(p2)):
        if p2[k] != 2 * p2[k - 1]:
            continue
        step = phi[k] - 2 * phi[k - 1]
        step -= TWO_PI * np.round(step / TWO_PI)
        ok = np.isfinite(step)
        if np.any(np.abs(step[ok]) > 0.25):
            i = int(np.argmax(np.where(ok, np.abs(step), 0)))
            raise UsageError(
                f"layout not identified: the float32 build's output read as {probe.call_form} ({probe.layout}, "
                f"rotary dims {probe.rotary_dim}) is not a phase linear in position: pair {i}'s phase at position "
                f"{p2[k]:,} is not twice its phase at {p2[k - 1]:,} (off by {abs(step[i]):.2f} rad): 2-D / 3-D "
                "position axes or a layout the audit does not read; not audited")


def _check_table_covers(probe: Probe, length: int) -> None:
    """A module that answers positions from a table of fixed rows (DeepSeek-V3's ``freqs_cis`` buffer
    indexed by positions) fails past its last row: find that row (bisection over float32 calls) and
    raise :class:`TableTooShort`, so a length beyond the table is a usage error, not three failed scenarios."""
    from .probe import TableTooShort

    def works(p: int) -> bool:
        try:
            probe.at_fresh([p])
            return True
        except Exception:
            return False

    if works(length - 1):
        return
    lo, hi = 0, length - 1  # works(lo) (position 0 was probed at detection), not works(hi)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if works(mid) else (lo, mid)
    raise TableTooShort(lo + 1, length)
