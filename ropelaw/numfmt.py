"""Short number formats for formulas and one-line messages (stdlib only, import-light)."""

from __future__ import annotations

__all__ = ["compact", "plain_exponent"]


def plain_exponent(text: str) -> str:
    """Drop the ``+`` and leading zero of a positive exponent: ``1e+06`` -> ``1e6``, ``3.1e+10`` -> ``3.1e10``."""
    return text.replace("e+0", "e").replace("e+", "e")


def compact(x: float) -> str:
    """``%g`` without exponent padding, for formulas: ``1e6`` -> ``1e6``, ``500000`` -> ``500000``,
    ``1.5e5`` -> ``150000``, ``1e-5`` -> ``1e-5``, ``1e100`` -> ``1e100``."""
    return plain_exponent(f"{x:g}").replace("e-0", "e-")
