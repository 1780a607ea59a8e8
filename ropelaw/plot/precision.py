"""Baichuan 2023 (seed 004): the fraction of positions a float format keeps exact."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING
from collections.abc import Sequence

from ..errors import UsageError
from ._common import BAICHUAN, check_length, require_matplotlib, new_axes

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure


# -- seed 004: exact positions --------------------------------------------------------------
def default_lengths(lo: int = 16, hi: int = 1 << 20, points: int = 200) -> list[int]:
    import numpy as np

    grid = {int(round(x)) for x in np.geomspace(lo, hi, points)}
    grid |= {1 << p for p in range(int(math.log2(lo)), int(math.log2(hi)) + 1)}
    return sorted(grid)


def plot_exact_fraction(
    dtypes: Sequence[str] = ("bf16", "fp16", "fp8_e4m3", "fp8_e5m2"),
    lengths: Sequence[int] | None = None,
    ax: Axes | None = None,
) -> Figure:
    """Fraction of positions 0 .. L-1 that a float format represents exactly, against L.

    The seed 004 figure (Baichuan 2023): positions built in bf16 lose exactness past 256;
    at L = 8192 only 896 of 8192 (10.9 %) survive. Counts come from
    :func:`ropelaw.formats.exact_positions`. ``lengths`` defaults to ~200 lengths from 16
    to 1M (log-spaced plus every power of two). Both axes are logarithmic: fp8 formats keep
    a few dozen exact positions, so their fraction falls by decades.

    Drawn (gid): ``exact_<format>`` per format (e.g. ``exact_bf16``), ``bf16_8192``.
    """
    require_matplotlib()
    from matplotlib.ticker import FuncFormatter, NullFormatter

    from ..formats import exact_positions, get_format

    if isinstance(dtypes, str):
        dtypes = (dtypes,)
    formats = list({get_format(n).name: get_format(n) for n in dtypes}.values())  # canonical, deduplicated
    if not formats:
        raise UsageError("dtypes must name at least one float format")
    Ls = default_lengths() if lengths is None else sorted({check_length("length", n) for n in lengths})
    fig, ax = new_axes(ax)
    for fmt in formats:
        fracs = [float(exact_positions(fmt, n).to_dict()["exact_fraction"]) for n in Ls]
        ax.plot(Ls, fracs, lw=1.5, label=fmt.name, gid=f"exact_{fmt.name}")
    if any(f.name == "bf16" for f in formats) and Ls[0] <= 8192 <= Ls[-1]:
        c = exact_positions("bf16", 8192).to_dict()
        ax.scatter([8192], [c["exact_fraction"]], color="black", zorder=5, s=30, gid="bf16_8192",
                   label=f"bf16 at 8,192: {c['exact']:,} exact ({100 * c['exact_fraction']:.1f} %), {BAICHUAN}")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.yaxis.set_major_formatter(FuncFormatter(lambda y, _pos: f"{100 * y:g}%"))
    ax.yaxis.set_minor_formatter(NullFormatter())
    ax.set_ylim(top=1.5)
    ax.set_xlabel("context length L (tokens; positions 0 … L−1)")
    ax.set_ylabel("positions represented exactly (% of L)")
    ax.set_title(f"Exact positions by float format (position ids cast to the format)\n{BAICHUAN}", fontsize=10)
    ax.legend(fontsize=8, loc="lower left")
    ax.grid(True, which="major", alpha=0.3)
    return fig
