"""Runtime audit of rotary modules: run the real code, recover its encoding, measure it.

The ground truth for the seed 004 bug (Baichuan: positions or angles pass through bf16/fp16):
the module is built and called the way a training stack holds it, and the cos/sin it
produces are compared with the ideal encoding.

The audit is split by role:
- :mod:`ropelaw.audit.target`: loading the user's factory, what a built module holds;
- :mod:`ropelaw.audit.conventions`: which parameters a callable has and the calls to try;
- :mod:`ropelaw.audit.probe`: calling it and reading its output layout into per-pair (cos, sin);
- :mod:`ropelaw.audit.scenarios`: cast / default / autocast, each measured on its own;
- :mod:`ropelaw.audit.measure`: exactness, drift, phase error;
- :mod:`ropelaw.audit.module`: :func:`audit_module` runs them (the float32 reference first, then
  each scenario isolated from the others) and :func:`runtime_findings` turns measurements into
  findings (RP301-RP308);
- :mod:`ropelaw.audit.hf`: building real Hugging Face architectures from small configs.
This module re-exports their public names (``ropelaw.audit_module`` and ``ropelaw.audit_hf``
resolve here); it imports the parts, none of them imports it.
"""

from __future__ import annotations

from .conventions import convention_of
from .hf import audit_hf, hf_rotary_factory, rebuild_max_positions
from .measure import (DEFAULT_CHUNK, DRIFT_TOLERANCE, EncodingStats, ScenarioResult,  # noqa: F401
                      effective_frequencies, fit_base, frequency_uncertainty, neighbours_in_format,
                      resolve_frequencies, unit_roundoff)
from .module import MAX_RUNTIME_LENGTH, ModuleAudit, audit_module, require_torch, runtime_findings  # noqa: F401
from .probe import Probe, TableTooShort  # noqa: F401
from .scenarios import SCENARIOS, canonical_dtype
from .target import init_cache_length, load_factory

__all__ = ["SCENARIOS", "DRIFT_TOLERANCE", "ModuleAudit", "ScenarioResult", "EncodingStats", "Probe",
           "audit_module", "audit_hf", "load_factory", "hf_rotary_factory", "effective_frequencies",
           "fit_base", "canonical_dtype", "neighbours_in_format", "frequency_uncertainty", "resolve_frequencies",
           "runtime_findings", "init_cache_length", "convention_of", "rebuild_max_positions", "unit_roundoff"]
