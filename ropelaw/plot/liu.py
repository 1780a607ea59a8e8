"""Liu et al. 2023 (arXiv 2310.05209, seed 001): the extrapolation bound against the base, and
the per-pair periods against the training length."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any
from collections.abc import Mapping, Sequence

from ..errors import UsageError
from ..numfmt import number, short as _num
from ..spec import RopeSpec
from ._common import LIU, MAX_BASE, as_spec, check_figure_setup, require_matplotlib, new_axes, tokens_text

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure


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
# perplexity at the model's training length is ~ 5-7; we call "fine" what stays below this


# -- Liu et al.: bound against base ------------------------------------------------------
def plot_bound_vs_base(
    d: int = 128,
    train_len: int = 4096,
    tune_len: int = 16384,
    pretrain_base: float = 10000.0,
    bases: Sequence[float] | None = None,
    observations: bool | None = None,
    ax: Axes | None = None,
) -> Figure:
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
    require_matplotlib()
    import numpy as np

    from ..theory import extrapolation_bound

    tune = tune_len if tune_len is not None else train_len
    setup = check_figure_setup(RopeSpec(d=d, train_len=train_len, base=pretrain_base,
                                         pretrain_base=pretrain_base, tune_len=tune))
    d, train_len, tune, pretrain_base = setup.d, setup.train_len, setup.tuning_length, setup.pretrain_base
    probe = extrapolation_bound(setup).to_dict()
    beta0 = float(probe["critical_base"])
    betas = {k: float(probe[k]) for k in ("beta_1", "beta_2", "beta_3")}
    d_extra = int(probe["critical_dimension"])
    grid = _base_grid(bases, beta0)

    rows = [extrapolation_bound(RopeSpec(d=d, train_len=train_len, base=float(b),
                                         pretrain_base=pretrain_base, tune_len=tune)).to_dict()
            for b in grid]
    bound = np.array([float(r["extrapolation_bound"]) for r in rows])
    above = np.array([r["regime"] == "above_critical_base" for r in rows])

    fig, ax = new_axes(ax, figsize=(11, 5.2))
    lo, hi = float(grid.min()), float(grid.max())
    _draw_bound(ax, grid, bound, above, beta0, betas, d_extra, train_len, tune)

    show = observations
    if show is None:
        show = (d, train_len, tune, float(pretrain_base)) == _PUBLISHED_SETUP
    if show:
        _draw_observations(ax, lo, hi, beta0)

    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(lo, hi)
    ax.set_xlabel("base β at tuning / inference (unitless; pair i turns β^(−2i/d) rad/token)")
    ax.set_ylabel("extrapolation bound; measured context (tokens)")
    ax.set_title(f"Extrapolation bound vs. base: d = {d}, T_train = {tokens_text(train_len)}, "
                 f"T_tune = {tokens_text(tune)}, b = {_num(pretrain_base)}\n{LIU}, Theorem 3", fontsize=10)
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5))
    ax.grid(True, which="major", alpha=0.3)
    return fig


def _base_grid(bases: Sequence[float] | None, beta0: float):
    """The bases :func:`plot_bound_vs_base` evaluates: ``bases`` (checked), else 500 points from 100 to 1e8; with
    beta_0 and its neighbours at 1e-12 where beta_0 is in range, sorted, each once."""
    import numpy as np

    if bases is None:
        grid = np.geomspace(100.0, 1e8, 500)
    else:
        grid = np.asarray([float(b) for b in bases], dtype=float)
        if grid.size == 0:
            raise UsageError("bases must not be empty")
        if np.any(grid <= 1) or not np.all(np.isfinite(grid)) or np.any(grid > MAX_BASE):
            raise UsageError(f"every base must be a number > 1 and <= {MAX_BASE:g}")
    if bases is None or (grid.min() <= beta0 <= grid.max()):
        # both sides of the step at beta_0 (the side of beta_0's float is decided exactly by theory)
        grid = np.concatenate([grid, [beta0 * (1 - 1e-12), beta0, beta0 * (1 + 1e-12)]])
    grid = np.unique(grid)
    return grid


def _draw_bound(ax, grid, bound, above, beta0: float, betas: dict, d_extra: int, train_len: int, tune: int) -> None:
    """The regimes (spans), the bound on each side of beta_0, beta_0..3 and the training / tuning lengths."""
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
    for (key, value), style in zip(betas.items(), (":", "-.", (0, (1, 3))), strict=True):
        if lo <= value <= hi:
            ax.axvline(value, color="tab:red", ls=style, lw=1,
                       label=f"β_{key[-1]} = {_num(value)}", gid=key)
    ax.axhline(train_len, color="gray", lw=0.8, ls="--", label=f"T_train = {tokens_text(train_len)} tokens",
               gid="train_len")
    if tune != train_len:
        ax.axhline(tune, color="gray", lw=0.8, ls=":", label=f"T_tune = {tokens_text(tune)} tokens", gid="tune_len")


def _draw_observations(ax, lo: float, hi: float, beta0: float) -> None:
    """Seed 001's perplexities (``PUBLISHED_LONG_CONTEXT_PPL``) at the bases within ``lo .. hi``: fine and broken
    lengths above beta_0, the slow degradation below."""
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
                           label=f"base {tag} tuned at 16K: fine (ppl {ppl[fine[-1]]} at {tokens_text(fine[-1])})",
                           gid=f"observed_fine_{tag}")
            if bad:
                ax.scatter([base] * len(bad), bad, marker="x", s=55, color="tab:red", zorder=5,
                           label=f"base {tag}: broken (ppl {ppl[bad[0]]} at {tokens_text(bad[0])}, "
                                 f"{ppl[bad[-1]]:,} at {tokens_text(bad[-1])})",
                           gid=f"observed_broken_{tag}")
        else:
            for n in lengths:
                ax.annotate(f"ppl {ppl[n]:,}", (base, n), xytext=(6, 0), textcoords="offset points",
                            fontsize=6.5, va="center", color="dimgray")
            ax.scatter([base] * len(lengths), lengths, marker="^", s=45, color="tab:purple", zorder=5,
                       label=f"base {tag} tuned at 16K: ppl {ppl[lengths[0]]} → {ppl[lengths[-1]]} "
                             f"from {tokens_text(lengths[0])} to {tokens_text(lengths[-1])}, no sharp bound",
                       gid=f"observed_slow_{tag}")
    ax.text(0.99, 0.01, "observations: seed 001, LLaMA 2 7B (Liu et al. 2023)", transform=ax.transAxes,
            ha="right", va="bottom", fontsize=7, color="dimgray")


# -- Liu et al.: per-pair periods --------------------------------------------------------
def plot_pair_periods(spec: RopeSpec | Mapping[str, Any] | None = None, ax: Axes | None = None) -> Figure:
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
    require_matplotlib()
    import numpy as np

    from ..schemes import apply_scheme, default_inv_freq
    from ..theory import critical_dimension

    spec = check_figure_setup(as_spec(spec, d=128, train_len=4096, base=10000.0))
    inv = np.asarray(apply_scheme(spec, spec.tuning_length).inv_freq, dtype=float)  # (d/2,) rad/token
    pre = np.asarray(default_inv_freq(spec.d, spec.pretrain_base), dtype=float)  # (d/2,) rad/token
    idx = np.arange(spec.pairs)
    d_extra = int(critical_dimension(spec.d, spec.train_len, spec.pretrain_base))
    k = d_extra // 2  # pairs 0 .. k-1 saw a full period

    fig, ax = new_axes(ax)
    periods = 2 * math.pi / inv
    ax.plot(idx, periods, marker="o", ms=3, lw=1.2, color="tab:blue",
            label=f"period 2π/θ_i at inference (base {_num(spec.base)}, scheme {spec.scheme})", gid="periods")
    if not np.allclose(inv, pre, rtol=1e-12, atol=0):
        ax.plot(idx, 2 * math.pi / pre, ls="--", lw=1, color="tab:gray",
                label=f"period in pre-training (base {_num(spec.pretrain_base)})", gid="pretrain_periods")
    ax.axhline(spec.train_len, color="black", lw=1, ls="--",
               label=f"training length T_train = {tokens_text(spec.train_len)} tokens", gid="train_len")
    if spec.tuning_length != spec.train_len:
        ax.axhline(spec.tuning_length, color="black", lw=1, ls=":",
                   label=f"tuning length T_tune = {tokens_text(spec.tuning_length)} tokens", gid="tune_len")
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
    ax.set_title(f"Per-pair periods: d = {spec.d}, T_train = {tokens_text(spec.train_len)}\n"
                 f"critical dimension, {LIU}, Lemma 1", fontsize=10)
    ax.legend(fontsize=7, loc="upper left")
    ax.grid(True, which="major", alpha=0.3)
    return fig
