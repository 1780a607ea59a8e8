"""What every figure shares: matplotlib imported on demand, a new Axes without pyplot, the
refusals of setups a figure cannot show, and the sources named in titles."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from collections.abc import Mapping

from ..errors import UsageError
from ..numfmt import count, number
from ..spec import RopeSpec

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

MAX_POINTS = 1 << 21  # longest curve drawn point by point (distances m = 0 .. 2M)

LIU = "Liu et al. 2023, arXiv 2310.05209"
MEN = "Men et al. 2024, arXiv 2405.14591"
ROFORMER = "RoFormer, arXiv 2104.09864, §3.4.3"
BAICHUAN = "Baichuan 2023 (seed 004)"
SU = "Su 2023, ReRoPE, kexue.fm/archives/9708"


def require_matplotlib() -> Any:
    """Import matplotlib or raise UsageError naming the extra."""
    from ..errors import require

    return require("matplotlib", "plot", "plotting")


def new_axes(ax: Axes | None, figsize: tuple[float, float] = (7.5, 4.8)) -> tuple[Figure, Axes]:
    """``ax``'s figure, or a new Figure (no pyplot) with one Axes."""
    require_matplotlib()
    if ax is not None:  # an Axes of a SubFigure: its SubFigure, drawn on and returned as the figure
        return ax.figure, ax  # type: ignore[return-value]  # SubFigure has the Figure calls the plots make
    from matplotlib.figure import Figure

    fig = Figure(figsize=figsize, layout="constrained")
    return fig, fig.add_subplot()


def tokens_text(n: float) -> str:
    """4096 -> '4,096'; 131072 -> '128K'-style only for exact multiples of 1024 >= 16K."""
    n = float(n)
    if n >= 16384 and n == int(n) and int(n) % 1024 == 0:
        k = int(n) // 1024
        return f"{k // 1024}M" if k % 1024 == 0 else f"{k}K"
    return count(n)


def as_spec(spec: RopeSpec | Mapping[str, Any] | None, **default: Any) -> RopeSpec:
    if spec is None:
        return RopeSpec(**default)
    if isinstance(spec, RopeSpec):
        return spec
    if isinstance(spec, Mapping):
        return RopeSpec(**{**default, **dict(spec)})
    raise UsageError(f"expected a RopeSpec or a mapping of its fields, got {type(spec).__name__}")


_MAX_D = 4096  # rotary dims drawn pair by pair (real models use <= 512)
MAX_BASE = 1e30  # beyond this, periods overflow a log axis (real bases are <= ~1e9)


def check_figure_setup(spec: RopeSpec) -> RopeSpec:
    """Refuse setups a figure cannot show (one-line ValueError): huge d or base."""
    if spec.d > _MAX_D:
        shown = count(spec.d)
        raise UsageError(f"rotary dimension d must be <= {_MAX_D} for a figure, got {shown}")
    for name, value in (("base", spec.base), ("pretraining base", spec.pretrain_base)):
        if value > MAX_BASE:
            raise UsageError(f"{name} must be <= {number(MAX_BASE)} for a figure, got {number(value)}")
    return spec


def check_work(pairs: int, points: int, budget: int, what: str) -> None:
    """Refuse a figure whose sums would take minutes: pairs x points above ``budget``."""
    if pairs * points > budget:
        raise UsageError(f"{what}: d/2 x {points:,} points = {pairs * points:,} terms is too much for a figure "
                         f"(at most {budget:,}); lower d or the length")


def check_length(name: str, value: Any, minimum: int = 1) -> int:
    from ..spec import check_positive_int

    return check_positive_int(name, value, minimum=minimum)
