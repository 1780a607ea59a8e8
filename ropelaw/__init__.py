"""ropelaw: scaling laws, precision audits and config linting for RoPE settings.

The analytic core (``spec``, ``theory``, ``schemes``, ``basebound``, ``decay``,
``formats``) is pure Python; torch (``methods``, ``audit.runtime``) and matplotlib
(``plot``) are imported only when those parts are used.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.2.0"

from .spec import RopeSpec  # noqa: E402  (light: stdlib only)

# public name -> module that defines it; resolved on first access (PEP 562)
_LAZY: dict[str, str] = {
    "critical_dimension": "ropelaw.theory",
    "critical_base": "ropelaw.theory",
    "extrapolation_bound": "ropelaw.theory",
    "base_for_context": "ropelaw.theory",
    "pair_table": "ropelaw.theory",
    "threshold_bases": "ropelaw.theory",
    "apply_scheme": "ropelaw.schemes",
    "scheme_names": "ropelaw.schemes",
    "relative_position_matrix": "ropelaw.schemes",
    "leaky_rerope_safe_length": "ropelaw.schemes",
    "SCHEMES": "ropelaw.schemes",
    "b_m_theta": "ropelaw.basebound",
    "supported_length": "ropelaw.basebound",
    "base_lower_bound": "ropelaw.basebound",
    "violations": "ropelaw.basebound",
    "decay_curve": "ropelaw.decay",
    "get_format": "ropelaw.formats",
    "exact_positions": "ropelaw.formats",
    "audit_module": "ropelaw.audit.runtime",
    "audit_hf": "ropelaw.audit.runtime",
    "audit_checkpoint": "ropelaw.audit.checkpoint",
    "Finding": "ropelaw.findings",
    "explore": "ropelaw.explorer",  # a function; its module is explorer, so importing it never shadows it
}

_SUBMODULES = {"spec", "theory", "schemes", "basebound", "decay", "formats", "findings", "report",
               "audit", "lint", "methods", "plot", "results", "plan", "explorer"}

__all__ = ["RopeSpec", "__version__", *_LAZY]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    if name in _SUBMODULES:
        return importlib.import_module(f"ropelaw.{name}")
    raise AttributeError(f"module 'ropelaw' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY) | _SUBMODULES)
