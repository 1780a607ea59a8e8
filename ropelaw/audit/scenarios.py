"""Precision scenarios: how the module is built and called, each measured on its own.

Precision scenarios (how the bug is triggered in practice)
- ``cast``: built in float32, then ``.to(dtype)`` (``model.bfloat16()``, DeepSpeed);
- ``default``: built and run under ``torch.set_default_dtype(dtype)`` (restored in a finally);
- ``autocast``: built in float32, called inside ``torch.autocast("cpu", dtype)``.
In every scenario the input ``x`` has the scenario dtype (activations are low precision).


torch is imported inside the functions only.
"""

from __future__ import annotations

import contextlib
import sys
from typing import Any, Callable

import numpy as np

from .conventions import Probe, _inv_freq_array, _user_errors, init_cache_length
from .measure import (DRIFT_TOLERANCE, EncodingStats, ScenarioResult, effective_frequencies,
                      frequency_uncertainty, resolve_frequencies)

SCENARIOS = ("cast", "default", "autocast")
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
        raise ValueError(f"runtime audit supports bf16, fp16 and fp32, not {name!r} "
                         "(torch cannot run a module in fp8 or tf32 as a default dtype)")
    return _SHORT[_DTYPES[key]]


def _torch_dtype(name: str):
    import torch

    return getattr(torch, _DTYPES[canonical_dtype(name)])



# --------------------------------------------------------------------------- scenarios


@contextlib.contextmanager
def _scenario(name: str, dtype):
    """Context in which the factory is built and the module called."""
    import torch

    if name == "default":
        old = torch.get_default_dtype()
        torch.set_default_dtype(dtype)
        try:
            yield
        finally:
            torch.set_default_dtype(old)
    elif name == "autocast":
        with torch.autocast("cpu", dtype=dtype):
            yield
    elif name in ("cast", "reference"):
        yield
    else:
        raise ValueError(f"unknown scenario {name!r}; choose one of {', '.join(SCENARIOS)} or all")


def _build(factory: Callable[[], Any], scenario: str, dtype):
    """Call the factory; in the ``cast`` scenario cast the result (or its owner) to dtype."""
    try:
        obj = factory()
    except Exception as exc:
        raise ValueError(f"the factory raised {type(exc).__name__}: {exc}") from None
    if obj is None:
        raise ValueError("the factory returned None; it must return the rotary module or callable")
    if scenario == "cast":
        owner = obj if hasattr(obj, "to") else getattr(obj, "__self__", None)
        if owner is not None and hasattr(owner, "to"):
            res = owner.to(dtype)
            if owner is obj and res is not None:
                obj = res
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


def _measure_scenario(factory, scenario: str, dtype_name: str, length: int, nominal: np.ndarray,
                      reference: np.ndarray, head_dim: int | None, chunk: int, progress: bool) -> ScenarioResult:
    import torch

    dtype = _torch_dtype(dtype_name)
    with torch.no_grad(), _scenario(scenario, dtype):
        obj = _build(factory, scenario, dtype)
        with _user_errors(f"scenario {scenario}: "):
            probe = Probe.detect(obj, dtype, length, head_dim)
            probe.prepare()
        p2 = _pow2_positions(length)
        if p2:
            with _user_errors(f"scenario {scenario}: "):
                c, s = probe.at(p2)
            measured = effective_frequencies(p2, c, s)
        else:
            measured = reference.copy()
        if measured.size != nominal.size:
            raise ValueError(f"scenario {scenario}: {2 * measured.size} rotary dims, float32 build had "
                             f"{2 * nominal.size}")
        from ..formats import round_to_format

        unc = frequency_uncertainty(measured, p2[-1] if p2 else 1, probe.output_dtype)
        omega, freq_source = resolve_frequencies(measured, unc, [
            ("inv_freq attribute", _inv_freq_array(obj)),
            ("float32 build", reference),
            (f"float32 build rounded to {dtype_name}", np.asarray(round_to_format(reference, dtype_name), np.float64)),
        ])
        stats = EncodingStats(omega, nominal, dtype_name, length)
        bar = _progress(length, scenario, progress)
        try:
            for start in range(0, length, chunk):
                stop = min(start + chunk, length)
                with _user_errors(f"scenario {scenario}: "):
                    c, s = probe.rows(start, stop)
                stats.update(np.arange(start, stop), c, s)
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
    return ScenarioResult(
        scenario=scenario, dtype=dtype_name, length=length, exact=stats.exact,
        exact_fraction=stats.exact / length, distinct=distinct, distinct_fraction=distinct / length,
        nonfinite=stats.nonfinite, first_inexact=stats.first_inexact, frequency_drift=drift,
        max_phase_error=stats.max_phase_error, max_phase_error_at=stats.max_phase_error_at,
        path=stats.path(drift), output_dtype=out_dtype, frequency_source=freq_source,
        effective_frequencies=omega.tolist())



def _reference(factory, length: int, head_dim: int | None) -> tuple[Probe, np.ndarray, int | None]:
    """A float32 build: convention, layout, rotary dim, the float32 frequencies, the init cache rows."""
    import torch

    old = torch.get_default_dtype()
    torch.set_default_dtype(torch.float32)
    try:
        with torch.no_grad():
            obj = _build(factory, "reference", torch.float32)
            cached = init_cache_length(obj)
            ref_len = min(length, 2**12 + 1)  # frequencies from p <= 4096: float32-exact enough
            with _user_errors(""):
                probe = Probe.detect(obj, torch.float32, ref_len, head_dim)
                probe.prepare()
                p2 = _pow2_positions(ref_len)
                if not p2:
                    p2 = [1]
                    probe.length = 2
                    probe.prepare()
                c, s = probe.at(p2)
            measured = effective_frequencies(p2, c, s)
            attr = _inv_freq_array(obj)
            unc = frequency_uncertainty(measured, p2[-1], probe.output_dtype)
            omega, source = resolve_frequencies(measured, unc, [("inv_freq attribute", attr)])
    finally:
        torch.set_default_dtype(old)
    return probe, omega, cached


