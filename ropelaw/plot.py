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

Sources shown in titles:
- Liu et al. 2023, "Scaling Laws of RoPE-based Extrapolation", arXiv 2310.05209 (seed 001).
- Men et al. 2024, "Base of RoPE Bounds Context Length", arXiv 2405.14591.
- Su et al. 2021, RoFormer, arXiv 2104.09864, section 3.4.3 (seed 002).
- Baichuan 2023, position collisions of RoPE in bfloat16 (seed 004).
- Su 2023, ReRoPE / Leaky ReRoPE, kexue.fm/archives/9708 (seed 000).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from .numfmt import count, number, short as _num
from .spec import RopeSpec

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

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

# Seed 001 (Liu et al. 2023, arXiv 2310.05209, README table): LLaMA 2 7B tuned at 16K tokens,
# perplexity at 128K / 256K / 512K / 1M tokens, by base.
PUBLISHED_LONG_CONTEXT_PPL: dict[float, dict[int, float]] = {
    1e6: {128 << 10: 7.07, 256 << 10: 76.82, 512 << 10: 1520.41, 1 << 20: 8349.9},
    500.0: {128 << 10: 9.15, 256 << 10: 12.41, 512 << 10: 22.78, 1 << 20: 51.28},
}
# The setup those numbers were measured in: d, T_train, T_tune, pre-training base.
_PUBLISHED_SETUP = (128, 4096, 16384, 10000.0)
# perplexity at the model's training length is ~ 5-7; we call "fine" what stays below this
_PPL_FINE = 10.0

_MAX_POINTS = 1 << 21  # longest curve drawn point by point (distances m = 0 .. 2M)

_LIU = "Liu et al. 2023, arXiv 2310.05209"
_MEN = "Men et al. 2024, arXiv 2405.14591"
_ROFORMER = "RoFormer, arXiv 2104.09864, §3.4.3"
_BAICHUAN = "Baichuan 2023 (seed 004)"
_SU = "Su 2023, ReRoPE, kexue.fm/archives/9708"


# -- helpers ---------------------------------------------------------------------------
def _mpl() -> Any:
    """Import matplotlib or raise UsageError naming the extra."""
    from .errors import require

    return require("matplotlib", "plot", "plotting")


def _new_axes(ax: "Axes | None", figsize: tuple[float, float] = (7.5, 4.8)) -> tuple["Figure", "Axes"]:
    """``ax``'s figure, or a new Figure (no pyplot) with one Axes."""
    _mpl()
    if ax is not None:
        return ax.figure, ax
    from matplotlib.figure import Figure

    fig = Figure(figsize=figsize, layout="constrained")
    return fig, fig.add_subplot()


def _tokens(n: float) -> str:
    """4096 -> '4,096'; 131072 -> '128K'-style only for exact multiples of 1024 >= 16K."""
    n = float(n)
    if n >= 16384 and n == int(n) and int(n) % 1024 == 0:
        k = int(n) // 1024
        return f"{k // 1024}M" if k % 1024 == 0 else f"{k}K"
    return count(n)


def _as_spec(spec: RopeSpec | Mapping[str, Any] | None, **default: Any) -> RopeSpec:
    if spec is None:
        return RopeSpec(**default)
    if isinstance(spec, RopeSpec):
        return spec
    if isinstance(spec, Mapping):
        return RopeSpec(**{**default, **dict(spec)})
    raise ValueError(f"expected a RopeSpec or a mapping of its fields, got {type(spec).__name__}")


_MAX_D = 4096  # rotary dims drawn pair by pair (real models use <= 512)
_MAX_BASE = 1e30  # beyond this, periods overflow a log axis (real bases are <= ~1e9)


def _check_figure_setup(spec: RopeSpec) -> RopeSpec:
    """Refuse setups a figure cannot show (one-line ValueError): huge d or base."""
    if spec.d > _MAX_D:
        shown = count(spec.d)
        raise ValueError(f"rotary dimension d must be <= {_MAX_D} for a figure, got {shown}")
    for name, value in (("base", spec.base), ("pretraining base", spec.pretrain_base)):
        if value > _MAX_BASE:
            raise ValueError(f"{name} must be <= {number(_MAX_BASE)} for a figure, got {number(value)}")
    return spec


def _check_work(pairs: int, points: int, budget: int, what: str) -> None:
    """Refuse a figure whose sums would take minutes: pairs x points above ``budget``."""
    if pairs * points > budget:
        raise ValueError(f"{what}: d/2 x {points:,} points = {pairs * points:,} terms is too much for a figure "
                         f"(at most {budget:,}); lower d or the length")


def _check_length(name: str, value: Any, minimum: int = 1) -> int:
    from .spec import check_positive_int

    return check_positive_int(name, value, minimum=minimum)


# -- Liu et al.: bound against base ------------------------------------------------------
def plot_bound_vs_base(
    d: int = 128,
    train_len: int = 4096,
    tune_len: int = 16384,
    pretrain_base: float = 10000.0,
    bases: Sequence[float] | None = None,
    observations: bool | None = None,
    ax: "Axes | None" = None,
) -> "Figure":
    """Extrapolation bound against the base beta, log-log (Liu et al. 2023, Theorem 3).

    Above the critical base beta_0 = b^(log_{T_train/2pi}(T_tune/2pi)) the bound is
    T_extra = 2*pi*beta^(d_extra/d); at or below beta_0 it is the tuning length T_tune, and
    bases below beta_1 = 2T_tune/pi, beta_2 = T_tune/pi, beta_3 = T_tune/(2pi) degrade ever
    more slowly past it. Values come from :func:`ropelaw.theory.extrapolation_bound`, one
    :class:`RopeSpec` per base. ``bases`` defaults to 500 points from 100 to 1e8 (plus
    beta_0 and its neighbours at 1e-12, so the step is drawn where it is).

    ``observations``: overlay seed 001's perplexities (base 1e6: 7.07 at 128K, 76.82 at 256K;
    base 500: 9.15 at 128K rising slowly to 51.28 at 1M). ``None`` overlays them only for
    the setup they were measured in (d=128, T_train=4096, T_tune=16384, b=10000).

    Drawn (gid): ``bound_above``, ``bound_below`` (lines), ``critical_base``, ``beta_1``,
    ``beta_2``, ``beta_3`` (vertical lines), ``regime_below``, ``regime_above`` (spans),
    ``train_len``, ``tune_len``, and ``observed_fine_1e6``, ``observed_broken_1e6``,
    ``observed_slow_500`` (scatters).
    """
    _mpl()
    import numpy as np

    from .theory import extrapolation_bound

    tune = tune_len if tune_len is not None else train_len
    setup = _check_figure_setup(RopeSpec(d=d, train_len=train_len, base=pretrain_base,
                                         pretrain_base=pretrain_base, tune_len=tune))
    d, train_len, tune, pretrain_base = setup.d, setup.train_len, setup.tuning_length, setup.pretrain_base
    probe = extrapolation_bound(setup).to_dict()
    beta0 = float(probe["critical_base"])
    betas = {k: float(probe[k]) for k in ("beta_1", "beta_2", "beta_3")}
    d_extra = int(probe["critical_dimension"])
    if bases is None:
        grid = np.geomspace(100.0, 1e8, 500)
    else:
        grid = np.asarray([float(b) for b in bases], dtype=float)
        if grid.size == 0:
            raise ValueError("bases must not be empty")
        if np.any(grid <= 1) or not np.all(np.isfinite(grid)) or np.any(grid > _MAX_BASE):
            raise ValueError(f"every base must be a number > 1 and <= {_MAX_BASE:g}")
    if bases is None or (grid.min() <= beta0 <= grid.max()):
        # both sides of the step at beta_0 (the side of beta_0's float is decided exactly by theory)
        grid = np.concatenate([grid, [beta0 * (1 - 1e-12), beta0, beta0 * (1 + 1e-12)]])
    grid = np.unique(grid)

    rows = [extrapolation_bound(RopeSpec(d=d, train_len=train_len, base=float(b),
                                         pretrain_base=pretrain_base, tune_len=tune)).to_dict()
            for b in grid]
    bound = np.array([float(r["extrapolation_bound"]) for r in rows])
    above = np.array([r["regime"] == "above_critical_base" for r in rows])

    fig, ax = _new_axes(ax, figsize=(11, 5.2))
    lo, hi = float(grid.min()), float(grid.max())
    if lo < beta0:
        ax.axvspan(lo, min(beta0, hi), color="tab:orange", alpha=0.08, lw=0,
                   label="β ≤ β₀: bound = T_tune, slow degradation past it", gid="regime_below")
    if hi > beta0:
        ax.axvspan(max(beta0, lo), hi, color="tab:blue", alpha=0.07, lw=0,
                   label=f"β > β₀: bound 2π·β^(d_extra/d), d_extra = {d_extra}", gid="regime_above")
    if above.any():
        ax.plot(grid[above], bound[above], color="tab:blue", lw=2,
                label="extrapolation bound (β > β₀)", gid="bound_above")
    if (~above).any():
        ax.plot(grid[~above], bound[~above], color="tab:orange", lw=2,
                label="extrapolation bound = T_tune (β ≤ β₀)", gid="bound_below")
    ax.axvline(beta0, color="black", ls="--", lw=1.2,
               label=f"critical base β₀ = {_num(beta0)}", gid="critical_base")
    for (key, value), style in zip(betas.items(), (":", "-.", (0, (1, 3)))):
        if lo <= value <= hi:
            ax.axvline(value, color="tab:red", ls=style, lw=1,
                       label=f"β_{key[-1]} = {_num(value)}", gid=key)
    ax.axhline(train_len, color="gray", lw=0.8, ls="--", label=f"T_train = {_tokens(train_len)} tokens",
               gid="train_len")
    if tune != train_len:
        ax.axhline(tune, color="gray", lw=0.8, ls=":", label=f"T_tune = {_tokens(tune)} tokens", gid="tune_len")

    show = observations
    if show is None:
        show = (d, train_len, tune, float(pretrain_base)) == _PUBLISHED_SETUP
    if show:
        for base, ppl in PUBLISHED_LONG_CONTEXT_PPL.items():
            if not lo <= base <= hi:
                continue
            lengths = sorted(ppl)
            fine = [n for n in lengths if ppl[n] < _PPL_FINE]
            bad = [n for n in lengths if ppl[n] >= _PPL_FINE]
            tag = _num(base)
            if base >= beta0:
                for n in lengths:
                    ax.annotate(f"ppl {ppl[n]:,}", (base, n), xytext=(6, 0), textcoords="offset points",
                                fontsize=6.5, va="center", color="dimgray")
                if fine:
                    ax.scatter([base] * len(fine), fine, marker="o", s=45, color="tab:green", zorder=5,
                               label=f"base {tag} tuned at 16K: fine (ppl {ppl[fine[-1]]} at {_tokens(fine[-1])})",
                               gid=f"observed_fine_{tag}")
                if bad:
                    ax.scatter([base] * len(bad), bad, marker="x", s=55, color="tab:red", zorder=5,
                               label=f"base {tag}: broken (ppl {ppl[bad[0]]} at {_tokens(bad[0])}, "
                                     f"{ppl[bad[-1]]:,} at {_tokens(bad[-1])})",
                               gid=f"observed_broken_{tag}")
            else:
                for n in lengths:
                    ax.annotate(f"ppl {ppl[n]:,}", (base, n), xytext=(6, 0), textcoords="offset points",
                                fontsize=6.5, va="center", color="dimgray")
                ax.scatter([base] * len(lengths), lengths, marker="^", s=45, color="tab:purple", zorder=5,
                           label=f"base {tag} tuned at 16K: ppl {ppl[lengths[0]]} → {ppl[lengths[-1]]} "
                                 f"from {_tokens(lengths[0])} to {_tokens(lengths[-1])}, no sharp bound",
                           gid=f"observed_slow_{tag}")
        ax.text(0.99, 0.01, "observations: seed 001, LLaMA 2 7B (Liu et al. 2023)", transform=ax.transAxes,
                ha="right", va="bottom", fontsize=7, color="dimgray")

    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(lo, hi)
    ax.set_xlabel("base β at tuning / inference (unitless; pair i turns β^(−2i/d) rad/token)")
    ax.set_ylabel("extrapolation bound; measured context (tokens)")
    ax.set_title(f"Extrapolation bound vs. base: d = {d}, T_train = {_tokens(train_len)}, "
                 f"T_tune = {_tokens(tune)}, b = {_num(pretrain_base)}\n{_LIU}, Theorem 3", fontsize=10)
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5))
    ax.grid(True, which="major", alpha=0.3)
    return fig


# -- Liu et al.: per-pair periods --------------------------------------------------------
def plot_pair_periods(spec: RopeSpec | Mapping[str, Any] | None = None, ax: "Axes | None" = None) -> "Figure":
    """Period 2*pi/theta_i of every rotation pair against the training length.

    theta_i comes from :func:`ropelaw.schemes.apply_scheme` (the inference base and scheme);
    when the inference frequencies differ from pre-training ones, the pre-training periods
    2*pi*b^(2i/d) are drawn dashed. The critical dimension d_extra
    (:func:`ropelaw.theory.critical_dimension`, Liu et al. 2023, Lemma 1) is marked between
    pair d_extra/2 - 1 (last pair that saw a full period in training) and pair d_extra/2.
    ``spec`` defaults to LLaMA 2 (d=128, T_train=4096, base 10000).

    Drawn (gid): ``periods``, ``pretrain_periods`` (when different), ``train_len``,
    ``tune_len``, ``critical_dimension`` (at x = d_extra/2 - 0.5), ``critical_pair``,
    ``full_period_pairs``.
    """
    _mpl()
    import numpy as np

    from .schemes import apply_scheme, default_inv_freq
    from .theory import critical_dimension

    spec = _check_figure_setup(_as_spec(spec, d=128, train_len=4096, base=10000.0))
    inv = np.asarray(apply_scheme(spec, spec.tuning_length).inv_freq, dtype=float)  # (d/2,) rad/token
    pre = np.asarray(default_inv_freq(spec.d, spec.pretrain_base), dtype=float)  # (d/2,) rad/token
    idx = np.arange(spec.pairs)
    d_extra = int(critical_dimension(spec.d, spec.train_len, spec.pretrain_base))
    k = d_extra // 2  # pairs 0 .. k-1 saw a full period

    fig, ax = _new_axes(ax)
    periods = 2 * math.pi / inv
    ax.plot(idx, periods, marker="o", ms=3, lw=1.2, color="tab:blue",
            label=f"period 2π/θ_i at inference (base {_num(spec.base)}, scheme {spec.scheme})", gid="periods")
    if not np.allclose(inv, pre, rtol=1e-12, atol=0):
        ax.plot(idx, 2 * math.pi / pre, ls="--", lw=1, color="tab:gray",
                label=f"period in pre-training (base {_num(spec.pretrain_base)})", gid="pretrain_periods")
    ax.axhline(spec.train_len, color="black", lw=1, ls="--",
               label=f"training length T_train = {_tokens(spec.train_len)} tokens", gid="train_len")
    if spec.tuning_length != spec.train_len:
        ax.axhline(spec.tuning_length, color="black", lw=1, ls=":",
                   label=f"tuning length T_tune = {_tokens(spec.tuning_length)} tokens", gid="tune_len")
    if 0 < k < spec.pairs:
        ax.axvspan(-0.5, k - 0.5, color="tab:green", alpha=0.08, lw=0,
                   label=f"pairs 0–{k - 1} saw a full period in training", gid="full_period_pairs")
    ax.axvline(k - 0.5, color="tab:red", lw=1.5,
               label=f"critical dimension d_extra = {d_extra} of {spec.d} (first pair without a full period: {k})",
               gid="critical_dimension")
    if 0 <= k < spec.pairs:
        note = " (= Liu's bound when β > β₀)" if spec.scheme == "default" else ""
        ax.scatter([k], [periods[k]], color="tab:red", zorder=5, s=30, gid="critical_pair",
                   label=f"pair {k} at inference: period {number(periods[k])} tokens{note}")
    ax.set_yscale("log")
    ax.set_xlim(-0.5, spec.pairs - 0.5)
    ax.set_xlabel("rotation pair i (dims 2i, 2i+1)")
    ax.set_ylabel("period 2π/θ_i (tokens)")
    ax.set_title(f"Per-pair periods: d = {spec.d}, T_train = {_tokens(spec.train_len)}\n"
                 f"critical dimension, {_LIU}, Lemma 1", fontsize=10)
    ax.legend(fontsize=7, loc="upper left")
    ax.grid(True, which="major", alpha=0.3)
    return fig


# -- seed 004: exact positions --------------------------------------------------------------
def _default_lengths(lo: int = 16, hi: int = 1 << 20, points: int = 200) -> list[int]:
    import numpy as np

    grid = {int(round(x)) for x in np.geomspace(lo, hi, points)}
    grid |= {1 << p for p in range(int(math.log2(lo)), int(math.log2(hi)) + 1)}
    return sorted(grid)


def plot_exact_fraction(
    dtypes: Sequence[str] = ("bf16", "fp16", "fp8_e4m3", "fp8_e5m2"),
    lengths: Sequence[int] | None = None,
    ax: "Axes | None" = None,
) -> "Figure":
    """Fraction of positions 0 .. L-1 that a float format represents exactly, against L.

    The seed 004 figure (Baichuan 2023): positions built in bf16 lose exactness past 256;
    at L = 8192 only 896 of 8192 (10.9 %) survive. Counts come from
    :func:`ropelaw.formats.exact_positions`. ``lengths`` defaults to ~200 lengths from 16
    to 1M (log-spaced plus every power of two). Both axes are logarithmic: fp8 formats keep
    a few dozen exact positions, so their fraction falls by decades.

    Drawn (gid): ``exact_<format>`` per format (e.g. ``exact_bf16``), ``bf16_8192``.
    """
    _mpl()
    from matplotlib.ticker import FuncFormatter, NullFormatter

    from .formats import exact_positions, get_format

    if isinstance(dtypes, str):
        dtypes = (dtypes,)
    formats = list({get_format(n).name: get_format(n) for n in dtypes}.values())  # canonical, deduplicated
    if not formats:
        raise ValueError("dtypes must name at least one float format")
    Ls = _default_lengths() if lengths is None else sorted({_check_length("length", n) for n in lengths})
    fig, ax = _new_axes(ax)
    for fmt in formats:
        fracs = [float(exact_positions(fmt, n).to_dict()["exact_fraction"]) for n in Ls]
        ax.plot(Ls, fracs, lw=1.5, label=fmt.name, gid=f"exact_{fmt.name}")
    if any(f.name == "bf16" for f in formats) and Ls[0] <= 8192 <= Ls[-1]:
        c = exact_positions("bf16", 8192).to_dict()
        ax.scatter([8192], [c["exact_fraction"]], color="black", zorder=5, s=30, gid="bf16_8192",
                   label=f"bf16 at 8,192: {c['exact']:,} exact ({100 * c['exact_fraction']:.1f} %), {_BAICHUAN}")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.yaxis.set_major_formatter(FuncFormatter(lambda y, _pos: f"{100 * y:g}%"))
    ax.yaxis.set_minor_formatter(NullFormatter())
    ax.set_ylim(top=1.5)
    ax.set_xlabel("context length L (tokens; positions 0 … L−1)")
    ax.set_ylabel("positions represented exactly (% of L)")
    ax.set_title(f"Exact positions by float format (position ids cast to the format)\n{_BAICHUAN}", fontsize=10)
    ax.legend(fontsize=8, loc="lower left")
    ax.grid(True, which="major", alpha=0.3)
    return fig


# -- seed 000: relative-position matrices ----------------------------------------------------
def relative_position_panels(length: int = 12, window: int = 4, k: float = 4.0) -> list[tuple[str, str, Any]]:
    """(title, formula, matrix) for RoPE, PI, ReRoPE and Leaky ReRoPE (seed 000).

    Matrices come from :func:`ropelaw.schemes.relative_position_matrix`; entries above the
    diagonal (future keys, masked by causal attention) are masked.
    """
    import numpy as np

    from .schemes import relative_position_matrix

    L = _check_length("length", length, minimum=2)
    w = _check_length("window", window)
    if not float(k) > 1:
        raise ValueError(f"k (interpolation / leak factor) must be > 1, got {k!r}")
    k = float(k)
    mats = [
        ("RoPE", "i − j", relative_position_matrix(L)),
        (f"PI (k = {k:g})", "(i − j)/k", relative_position_matrix(L, interpolation=k)),
        (f"ReRoPE (w = {w})", "min(i − j, w)", relative_position_matrix(L, window=w)),
        (f"Leaky ReRoPE (w = {w}, k = {k:g})", "i − j < w ? i − j : w + (i − j − w)/k",
         relative_position_matrix(L, window=w, leaky_k=k)),
    ]
    causal = np.tril(np.ones((L, L), dtype=bool))  # (L, L) True where j <= i
    out = []
    for title, formula, m in mats:
        arr = np.asarray(m, dtype=float)  # (L, L) float64
        if arr.shape != (L, L):
            raise RuntimeError(f"relative_position_matrix returned shape {arr.shape}, expected {(L, L)}")
        out.append((title, formula, np.ma.masked_array(arr, mask=~causal)))
    return out


def plot_relative_positions(
    length: int = 12,
    window: int = 4,
    k: float = 4.0,
    axes: Sequence["Axes"] | None = None,
    annotate: bool | None = None,
) -> "Figure":
    """The relative-position matrices of seed 000 as four heatmaps.

    Row i is the query, column j the key; the entry is the relative position the encoding
    uses (seed 000, eqs. 1, 2, leaky-rerope, rerope): RoPE i − j, position interpolation
    (i − j)/k, ReRoPE min(i − j, w), Leaky ReRoPE i − j inside the window and
    w + (i − j − w)/k beyond it. One colour scale (tokens) for all four; values are written
    in the cells when ``length <= 16`` (``annotate``). ``axes``: four Axes to draw into.
    Defaults (L = 12, w = 4, k = 4) keep every cell readable.

    Drawn (gid): one image per panel, ``RoPE``, ``PI``, ``ReRoPE``, ``Leaky ReRoPE``
    (masked arrays, upper triangle masked).
    """
    _mpl()
    import numpy as np

    panels = relative_position_panels(length, window, k)
    L = panels[0][2].shape[0]
    if axes is None:
        from matplotlib.figure import Figure

        fig = Figure(figsize=(13, 4.2), layout="constrained")
        axs = list(fig.subplots(1, 4, sharey=True))
    else:
        axs = list(axes)
        if len(axs) != 4:
            raise ValueError(f"axes must be 4 Axes (RoPE, PI, ReRoPE, Leaky ReRoPE), got {len(axs)}")
        fig = axs[0].figure
    vmax = max(float(np.max(m)) for _, _, m in panels)
    write = (L <= 16) if annotate is None else bool(annotate)
    size = min(7.0, 80.0 / L)
    im = None
    for a, (title, formula, m) in zip(axs, panels):
        im = a.imshow(m, cmap="viridis", vmin=0.0, vmax=vmax, origin="upper", interpolation="nearest")
        im.set_gid(title.split(" (")[0])
        a.set_title(f"{title}\n{formula}", fontsize=9)
        a.set_xlabel("key position j (tokens)")
        if write:
            for i in range(L):
                for j in range(i + 1):
                    v = float(m[i, j])
                    txt = f"{v:g}" if v == int(v) else f"{v:.2f}".rstrip("0").lstrip("0")
                    a.text(j, i, txt, ha="center", va="center", fontsize=size,
                           color="white" if v < 0.6 * vmax else "black")
    axs[0].set_ylabel("query position i (tokens)")
    fig.colorbar(im, ax=axs, shrink=0.85, label="relative position used (tokens)")
    if axes is None:
        fig.suptitle(f"Relative-position matrices, L = {L} ({_SU}, seed 000)", fontsize=10)
    return fig


# -- Men et al.: B_{m,theta} and the base lower bound ------------------------------------------
def plot_men_bmtheta(d: int = 128, base: float = 10000.0, max_m: int | None = None,
                     ax: "Axes | None" = None) -> "Figure":
    """B_{m,theta} = sum_i cos(m*theta_i) against the relative distance m (Men et al. 2024).

    Men et al. (arXiv 2405.14591, Theorem 1 / eq. for B_{m,theta}) require B_{m,theta} >= 0
    for every m up to the context length; the first m where it turns negative is the
    supported length of the base. Values from :func:`ropelaw.basebound.b_m_theta` and
    :func:`ropelaw.basebound.supported_length`. ``max_m`` defaults to about twice the first
    violation (at least 256, at most 2^18); at most 2^21.

    Drawn (gid): ``b_m_theta``, ``zero``, ``first_violation``, ``first_violation_point``.
    """
    _mpl()
    import numpy as np

    from .basebound import b_m_theta, supported_length
    from .schemes import default_inv_freq

    spec = _check_figure_setup(RopeSpec(d=d, base=base))  # validates d and base
    inv = np.asarray(default_inv_freq(spec.d, spec.base), dtype=float)  # (d/2,) rad/token
    if max_m is None:
        limit = min(1 << 18, (1 << 28) // spec.pairs)
        supported = int(supported_length(inv, limit))
        max_m = int(min(max(256, 2 * supported), limit))
    else:
        max_m = _check_length("max_m", max_m)
        if max_m > _MAX_POINTS:
            raise ValueError(f"max_m must be <= {_MAX_POINTS:,} for a figure, got {max_m:,}")
        _check_work(spec.pairs, max_m, 1 << 28, "B_(m,theta) curve")
        supported = int(supported_length(inv, max_m))
    m = np.arange(max_m + 1)  # (M,) int64
    b = np.concatenate([np.asarray(b_m_theta(m[a:a + 65536], inv), dtype=float)  # (M,) float64, in chunks
                        for a in range(0, m.size, 65536)])
    negative = np.flatnonzero(b < 0)

    fig, ax = _new_axes(ax)
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
    ax.set_title(f"Long-term decay condition $B_{{m,\\theta}} \\geq 0$: d = {spec.d}, base {_num(spec.base)}\n{_MEN}",
                 fontsize=10)
    ax.legend(fontsize=8, loc="upper right")
    ax.grid(True, alpha=0.3)
    return fig


def plot_base_lower_bound(d: int = 128, lengths: Sequence[int] | None = None,
                          published: bool | None = None, ax: "Axes | None" = None) -> "Figure":
    """Lower bound of the base whose B_{m,theta} stays >= 0 up to each context length (Men et al. 2024).

    Values from :func:`ropelaw.basebound.base_lower_bound` (its default convention); ``lengths`` defaults to the
    published table's 1K .. 1M (powers of two). The published table (d = 128) is overlaid
    when ``published`` is True, or by default when d == 128. Log-log: the bound spans five
    decades.

    Drawn (gid): ``base_lower_bound``, ``published``.
    """
    _mpl()
    from .basebound import PUBLISHED_LOWER_BOUNDS, base_lower_bound

    # tokens -> base. The table labels lengths "1k" .. "1M"; drawn at k = 1,024 tokens (the paper's
    # Figure 1 fit uses x = 1024*k), which the label says, since its grid reproduces best at k = 1,000
    # (see basebound.base_lower_bound).
    table = {1024 * k: v for k, v in PUBLISHED_LOWER_BOUNDS.items()}
    d = _check_figure_setup(RopeSpec(d=d)).d
    Ls = sorted(table) if lengths is None else sorted(
        {_check_length("length", n, minimum=2) for n in lengths})
    _check_work(d // 2, Ls[-1], 1 << 26, "base lower bound")
    values = [float(base_lower_bound(d, n)) for n in Ls]
    fig, ax = _new_axes(ax)
    ax.plot(Ls, values, marker="o", ms=4, lw=1.5, color="tab:blue",
            label=f"computed (ropelaw.basebound): base keeping $B_{{m,\\theta}} \\geq 0$ for all m ≤ L (d = {d})",
            gid="base_lower_bound")
    if published is None:
        published = d == 128
    if published:
        pl = sorted(table)
        ax.scatter(pl, [table[n] for n in pl], marker="s", s=40, facecolors="none",
                   edgecolors="tab:red", zorder=5, label='published Table 1 (d = 128), Men et al. 2024: "k" drawn as 1,024 tokens',
                   gid="published")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("context length L (tokens)")
    ax.set_ylabel("lower bound of the base (unitless)")
    ax.set_title(f"Base lower bound against context length: d = {d}\n{_MEN}", fontsize=10)
    ax.legend(fontsize=8, loc="upper left")
    ax.grid(True, which="major", alpha=0.3)
    return fig


# -- RoFormer: long-term decay ------------------------------------------------------------
def plot_decay(d: int = 128, base: float = 10000.0, max_distance: int = 256,
               ax: "Axes | None" = None) -> "Figure":
    """RoFormer's relative upper bound of the attention logit against relative distance.

    (1/(d/2)) * sum_{i=1}^{d/2} |S_i| with S_i = sum_{k=0}^{i-1} exp(1j*m*theta_k)
    (Su et al. 2021, arXiv 2104.09864, §3.4.3 and Figure 2: d = 128, distances up to ~256).
    Values from :func:`ropelaw.decay.decay_curve`; at m = 0 every |S_i| = i and the curve
    starts at (d/2 + 1)/2.

    Drawn (gid): ``decay``.
    """
    _mpl()
    import numpy as np

    spec = _check_figure_setup(RopeSpec(d=d, base=base))
    n = _check_length("max_distance", max_distance)
    if n > _MAX_POINTS:
        raise ValueError(f"max_distance must be <= {_MAX_POINTS:,} for a figure, got {n:,}")
    _check_work(spec.pairs, n, 1 << 28, "decay curve")
    m = np.arange(n + 1)  # (M,) int64
    from .decay import decay_curve

    y = np.asarray(decay_curve(spec.d, spec.base, m), dtype=float)  # (M,) float64
    fig, ax = _new_axes(ax)
    ax.plot(m, y, lw=1.2, color="tab:blue", label=f"relative upper bound, d = {spec.d}, base {_num(spec.base)}",
            gid="decay")
    ax.set_xlim(0, n)
    ax.set_xlabel("relative distance m (tokens)")
    ax.set_ylabel("relative upper bound (1/(d/2))·Σ_i |S_i| (unitless)")
    ax.set_title(f"Long-term decay of RoPE\n{_ROFORMER}", fontsize=10)
    ax.legend(fontsize=8, loc="upper right")
    ax.grid(True, alpha=0.3)
    return fig


# -- schemes: per-pair frequency ratios ------------------------------------------------------
def _scheme_specs(spec: RopeSpec, schemes: Sequence[str] | Mapping[str, Mapping[str, Any]] | None,
                  factor: float) -> list[RopeSpec]:
    from .schemes import SCHEMES, scheme_names

    if schemes is None:
        schemes = [n for n in scheme_names() if n != "default" and "factor" in SCHEMES[n].required]
    items = schemes.items() if isinstance(schemes, Mapping) else ((n, None) for n in schemes)
    out = []
    for name, params in items:
        info = SCHEMES.get(name)
        if info is None:
            raise ValueError(f"unknown scheme {name!r}; known: {', '.join(scheme_names())}")
        p: dict[str, Any] = dict(params or {})
        if "factor" not in p and ("factor" in info.required or "factor" in info.optional):
            p["factor"] = factor
        for key in info.required:  # lengths a scheme needs default to the spec's training length
            if key not in p and "original" in key:
                p[key] = spec.train_len
        out.append(spec.with_(scheme=info.name, params=p))
    return out


def plot_scheme_ratios(
    spec_or_params: RopeSpec | Mapping[str, Any] | None = None,
    schemes: Sequence[str] | Mapping[str, Mapping[str, Any]] | None = None,
    factor: float = 8.0,
    seq_len: int | None = None,
    ax: "Axes | None" = None,
) -> "Figure":
    """Per-pair frequency ratio theta_i(scheme) / theta_i(plain RoPE) for scaling schemes.

    Each scheme runs through :func:`ropelaw.schemes.apply_scheme` on the same setup
    (``spec_or_params``: a RopeSpec or a mapping of its fields; LLaMA 2 by default) with
    ``factor`` unless a scheme's own parameters are given (``schemes`` as a mapping
    name -> params). Ratio 1 keeps a pair's rotation speed (extrapolation); 1/factor
    interpolates it (PI); NTK-style schemes move smoothly between the two from high to low
    frequency. ``seq_len`` is passed to dynamic schemes (default: factor x T_train).

    Drawn (gid): ``ratio_<scheme>`` per scheme, ``one``, ``inverse_factor``.
    """
    _mpl()
    import numpy as np

    from .schemes import apply_scheme, default_inv_freq

    base_spec = _check_figure_setup(_as_spec(spec_or_params, d=128, train_len=4096, base=10000.0))
    f = float(factor)
    if not 1 <= f <= 1e6:
        raise ValueError(f"factor must be between 1 and 1e6, got {factor!r}")
    specs = _scheme_specs(base_spec, schemes, f)
    if not specs:
        raise ValueError("no scheme to plot")
    n = seq_len if seq_len is not None else int(round(f * base_spec.train_len))
    ref = np.asarray(default_inv_freq(base_spec.d, base_spec.base), dtype=float)  # (d/2,)
    idx = np.arange(base_spec.pairs)
    fig, ax = _new_axes(ax)
    for s in specs:
        r = apply_scheme(s, n)
        ratio = np.asarray(r.inv_freq, dtype=float) / ref  # (d/2,)
        extra = f", attention ×{r.attention_factor:.3g}" if abs(r.attention_factor - 1) > 1e-12 else ""
        if tuple(apply_scheme(s, base_spec.train_len).inv_freq) != tuple(r.inv_freq):
            extra += f", at {_tokens(n)} tokens"  # length-dependent (dynamic NTK)
        ax.plot(idx, ratio, marker=".", ms=3, lw=1.3, label=f"{s.scheme}{extra}", gid=f"ratio_{s.scheme}")
    ax.axhline(1.0, color="black", lw=0.8, ls="--", label="1: unchanged (extrapolate)", gid="one")
    ax.axhline(1.0 / f, color="gray", lw=0.8, ls=":", label=f"1/{f:g}: interpolate by the factor", gid="inverse_factor")
    ax.set_yscale("log")
    ax.set_xlim(-0.5, base_spec.pairs - 0.5)
    ax.set_xlabel("rotation pair i (dims 2i, 2i+1; high → low frequency)")
    ax.set_ylabel("θ_i(scheme) / θ_i(plain RoPE) (ratio)")
    ax.set_title(f"Scaling schemes, per-pair frequency ratio: d = {base_spec.d}, base {_num(base_spec.base)}, "
                 f"factor {f:g}, T_train = {_tokens(base_spec.train_len)}\nropelaw.schemes (sources: `ropelaw schemes`)",
                 fontsize=10)
    ax.legend(fontsize=8, loc="lower left")
    ax.grid(True, which="major", alpha=0.3)
    return fig
