"""Men et al. 2024 (arXiv 2405.14591): B_{m,theta} and the base lower bound."""

from __future__ import annotations

from typing import TYPE_CHECKING
from collections.abc import Sequence

from ..errors import UsageError
from ..numfmt import short as _num
from ..spec import RopeSpec
from ._common import MAX_POINTS, MEN, check_figure_setup, check_length, check_work, require_matplotlib, new_axes

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure


# -- Men et al.: B_{m,theta} and the base lower bound ------------------------------------------
def plot_men_bmtheta(d: int = 128, base: float = 10000.0, max_m: int | None = None,
                     ax: Axes | None = None) -> Figure:
    """B_{m,theta} = sum_i cos(m*theta_i) against the relative distance m (Men et al. 2024).

    Men et al. (arXiv 2405.14591, Theorem 1 / eq. for B_{m,theta}) require B_{m,theta} >= 0
    for every m up to the context length; the first m where it turns negative is the
    supported length of the base. Values from :func:`ropelaw.basebound.b_m_theta` and
    :func:`ropelaw.basebound.supported_length`. ``max_m`` defaults to about twice the first
    violation (at least 256, at most 2^18); at most 2^21.

    Drawn (gid): ``b_m_theta``, ``zero``, ``first_violation``, ``first_violation_point``.
    """
    require_matplotlib()
    import numpy as np

    from ..basebound import b_m_theta, supported_length
    from ..schemes import default_inv_freq

    spec = check_figure_setup(RopeSpec(d=d, base=base))  # validates d and base
    inv = np.asarray(default_inv_freq(spec.d, spec.base), dtype=float)  # (d/2,) rad/token
    if max_m is None:
        limit = min(1 << 18, (1 << 28) // spec.pairs)
        supported = int(supported_length(inv, limit))
        max_m = int(min(max(256, 2 * supported), limit))
    else:
        max_m = check_length("max_m", max_m)
        if max_m > MAX_POINTS:
            raise UsageError(f"max_m must be <= {MAX_POINTS:,} for a figure, got {max_m:,}")
        check_work(spec.pairs, max_m, 1 << 28, "B_(m,theta) curve")
        supported = int(supported_length(inv, max_m))
    m = np.arange(max_m + 1)  # (M,) int64
    b = np.concatenate([np.asarray(b_m_theta(m[a:a + 65536], inv), dtype=float)  # (M,) float64, in chunks
                        for a in range(0, m.size, 65536)])
    negative = np.flatnonzero(b < 0)

    fig, ax = new_axes(ax)
    ax.plot(m, b, lw=0.8, color="tab:blue", label=r"$B_{m,\theta} = \sum_i \cos(m\,\theta_i)$", gid="b_m_theta")
    ax.axhline(0, color="black", lw=0.8, gid="zero")
    if negative.size:
        first = int(negative[0])
        ax.axvline(first, color="tab:red", ls="--", lw=1.2,
                   label=f"first violation m = {first:,} ($B < 0$): supported length {supported:,} tokens",
                   gid="first_violation")
        ax.scatter([first], [b[first]], color="tab:red", zorder=5, s=25, gid="first_violation_point")
    else:
        ax.text(0.98, 0.04, f"no violation up to m = {max_m:,}", transform=ax.transAxes,
                ha="right", va="bottom", fontsize=8)
    ax.set_xlim(0, max_m)
    ax.set_xlabel("relative distance m (tokens)")
    ax.set_ylabel(r"$B_{m,\theta}$ (sum of d/2 cosines, unitless)")
    ax.set_title(f"Long-term decay condition $B_{{m,\\theta}} \\geq 0$: d = {spec.d}, base {_num(spec.base)}\n{MEN}",
                 fontsize=10)
    ax.legend(fontsize=8, loc="upper right")
    ax.grid(True, alpha=0.3)
    return fig


def plot_base_lower_bound(d: int = 128, lengths: Sequence[int] | None = None,
                          published: bool | None = None, ax: Axes | None = None) -> Figure:
    """Lower bound of the base whose B_{m,theta} stays >= 0 up to each context length (Men et al. 2024).

    Values from :func:`ropelaw.basebound.base_lower_bound` (its default convention); ``lengths`` defaults to the
    published table's 1K .. 1M (powers of two). The published table (d = 128) is overlaid
    when ``published`` is True, or by default when d == 128. Log-log: the bound spans five
    decades.

    Drawn (gid): ``base_lower_bound``, ``published``.
    """
    require_matplotlib()
    from ..basebound import PUBLISHED_LOWER_BOUNDS, base_lower_bound

    # tokens -> base. The table labels lengths "1k" .. "1M"; drawn at k = 1,024 tokens (the paper's
    # Figure 1 fit uses x = 1024*k), which the label says, since its grid reproduces best at k = 1,000
    # (see basebound.base_lower_bound).
    table = {1024 * k: v for k, v in PUBLISHED_LOWER_BOUNDS.items()}
    d = check_figure_setup(RopeSpec(d=d)).d
    Ls = sorted(table) if lengths is None else sorted(
        {check_length("length", n, minimum=2) for n in lengths})
    check_work(d // 2, Ls[-1], 1 << 26, "base lower bound")
    values = [float(base_lower_bound(d, n)) for n in Ls]
    fig, ax = new_axes(ax)
    ax.plot(Ls, values, marker="o", ms=4, lw=1.5, color="tab:blue",
            label=f"computed (ropelaw.basebound): base keeping $B_{{m,\\theta}} \\geq 0$ for all m ≤ L (d = {d})",
            gid="base_lower_bound")
    if published is None:
        published = d == 128
    if published:
        pl = sorted(table)
        ax.scatter(pl, [table[n] for n in pl], marker="s", s=40, facecolors="none",
                   edgecolors="tab:red", zorder=5,
                   label='published Table 1 (d = 128), Men et al. 2024: "k" drawn as 1,024 tokens',
                   gid="published")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("context length L (tokens)")
    ax.set_ylabel("lower bound of the base (unitless)")
    ax.set_title(f"Base lower bound against context length: d = {d}\n{MEN}", fontsize=10)
    ax.legend(fontsize=8, loc="upper left")
    ax.grid(True, which="major", alpha=0.3)
    return fig
