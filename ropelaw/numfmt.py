"""Short number formats for formulas and one-line messages (stdlib only, import-light)."""

from __future__ import annotations

__all__ = ["compact"]


def compact(x: float) -> str:
    """``%g`` without exponent padding, for formulas: ``1e6`` -> ``1e6``, ``500000`` -> ``500000``,
    ``1.5e5`` -> ``150000``, ``1e-5`` -> ``1e-5``, ``1e100`` -> ``1e100``."""
    return f"{x:g}".replace("e+0", "e").replace("e+", "e").replace("e-0", "e-")
