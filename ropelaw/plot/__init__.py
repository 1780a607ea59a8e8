"""Figures: the scaling laws, precision and extrapolation methods, one call away.

Every function returns a :class:`matplotlib.figure.Figure` and takes ``ax=None`` (an
existing Axes to draw into; the multi-panel :func:`plot_relative_positions` takes ``axes``).
Figures are built without ``pyplot`` (no global figure registry, no backend switch), so they
can be saved with ``fig.savefig(...)`` anywhere and shown inline in Jupyter
(``%matplotlib inline`` registers the Figure display hook).

matplotlib is imported inside the functions: ``import ropelaw`` never pulls it in; without
it, every function raises :class:`ropelaw.errors.UsageError` naming ``pip install -e
'.[plot]'``.

The numbers come from the analytic modules (``theory``, ``basebound``, ``decay``,
``formats``, ``schemes``); nothing here re-derives them. Main artists carry a ``gid``
(listed as "Drawn (gid)" in each docstring) so that tests and users can find what is drawn:
``[a for a in ax.get_children() if a.get_gid() == "critical_base"]``.

One module per source (``liu``, ``men``, ``precision``, ``encoding``), helpers in ``_common``;
this package re-exports every figure, so ``ropelaw.plot.plot_bound_vs_base`` is the name to use.

Sources shown in titles:
- Liu et al. 2023, "Scaling Laws of RoPE-based Extrapolation", arXiv 2310.05209 (seed 001).
- Men et al. 2024, "Base of RoPE Bounds Context Length", arXiv 2405.14591.
- Su et al. 2021, RoFormer, arXiv 2104.09864, section 3.4.3 (seed 002).
- Baichuan 2023, position collisions of RoPE in bfloat16 (seed 004).
- Su 2023, ReRoPE / Leaky ReRoPE, kexue.fm/archives/9708 (seed 000).
"""

from __future__ import annotations

from .encoding import plot_decay, plot_relative_positions, plot_scheme_ratios, relative_position_panels
from .liu import PUBLISHED_LONG_CONTEXT_PPL, plot_bound_vs_base, plot_pair_periods
from .men import plot_base_lower_bound, plot_men_bmtheta
from .precision import plot_exact_fraction

__all__ = [
    "plot_bound_vs_base",
    "plot_pair_periods",
    "plot_exact_fraction",
    "plot_relative_positions",
    "relative_position_panels",
    "plot_men_bmtheta",
    "plot_base_lower_bound",
    "plot_decay",
    "plot_scheme_ratios",
    "PUBLISHED_LONG_CONTEXT_PPL",
]
