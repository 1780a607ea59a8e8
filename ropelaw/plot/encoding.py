"""What an encoding does to positions: ReRoPE's relative-position matrices (seed 000), RoFormer's
long-term decay, and the per-pair frequency ratios of the scaling schemes."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from collections.abc import Mapping, Sequence

from ..errors import UsageError
from ..numfmt import short as _num
from ..spec import RopeSpec
from ._common import (MAX_POINTS, ROFORMER, SU, as_spec, check_figure_setup, check_length, check_work,
                      require_matplotlib, new_axes, tokens_text)

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure


# -- seed 000: relative-position matrices ----------------------------------------------------
def relative_position_panels(length: int = 12, window: int = 4, k: float = 4.0) -> list[tuple[str, str, Any]]:
    """(title, formula, matrix) for RoPE, PI, ReRoPE and Leaky ReRoPE (seed 000).

    Matrices come from :func:`ropelaw.schemes.relative_position_matrix`; entries above the
    diagonal (future keys, masked by causal attention) are masked.
    """
    import numpy as np

    from ..schemes import relative_position_matrix

    L = check_length("length", length, minimum=2)
    w = check_length("window", window)
    if not float(k) > 1:
        raise UsageError(f"k (interpolation / leak factor) must be > 1, got {k!r}")
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
    axes: Sequence[Axes] | None = None,
    annotate: bool | None = None,
) -> Figure:
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
    require_matplotlib()
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
            raise UsageError(f"axes must be 4 Axes (RoPE, PI, ReRoPE, Leaky ReRoPE), got {len(axs)}")
        fig = axs[0].figure
    vmax = max(float(np.max(m)) for _, _, m in panels)
    write = (L <= 16) if annotate is None else bool(annotate)
    size = min(7.0, 80.0 / L)
    images = []
    for a, (title, formula, m) in zip(axs, panels, strict=True):
        im = a.imshow(m, cmap="viridis", vmin=0.0, vmax=vmax, origin="upper", interpolation="nearest")
        images.append(im)
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
    fig.colorbar(images[-1], ax=axs, shrink=0.85, label="relative position used (tokens)")
    if axes is None:
        fig.suptitle(f"Relative-position matrices, L = {L} ({SU}, seed 000)", fontsize=10)
    return fig


# -- RoFormer: long-term decay ------------------------------------------------------------
def plot_decay(d: int = 128, base: float = 10000.0, max_distance: int = 256,
               ax: Axes | None = None) -> Figure:
    """RoFormer's relative upper bound of the attention logit against relative distance.

    (1/(d/2)) * sum_{i=1}^{d/2} |S_i| with S_i = sum_{k=0}^{i-1} exp(1j*m*theta_k)
    (Su et al. 2021, arXiv 2104.09864, §3.4.3 and Figure 2: d = 128, distances up to ~256).
    Values from :func:`ropelaw.decay.decay_curve`; at m = 0 every |S_i| = i and the curve
    starts at (d/2 + 1)/2.

    Drawn (gid): ``decay``.
    """
    require_matplotlib()
    import numpy as np

    spec = check_figure_setup(RopeSpec(d=d, base=base))
    n = check_length("max_distance", max_distance)
    if n > MAX_POINTS:
        raise UsageError(f"max_distance must be <= {MAX_POINTS:,} for a figure, got {n:,}")
    check_work(spec.pairs, n, 1 << 28, "decay curve")
    m = np.arange(n + 1)  # (M,) int64
    from ..decay import decay_curve

    y = np.asarray(decay_curve(spec.d, spec.base, m), dtype=float)  # (M,) float64
    fig, ax = new_axes(ax)
    ax.plot(m, y, lw=1.2, color="tab:blue", label=f"relative upper bound, d = {spec.d}, base {_num(spec.base)}",
            gid="decay")
    ax.set_xlim(0, n)
    ax.set_xlabel("relative distance m (tokens)")
    ax.set_ylabel("relative upper bound (1/(d/2))·Σ_i |S_i| (unitless)")
    ax.set_title(f"Long-term decay of RoPE\n{ROFORMER}", fontsize=10)
    ax.legend(fontsize=8, loc="upper right")
    ax.grid(True, alpha=0.3)
    return fig


# -- schemes: per-pair frequency ratios ------------------------------------------------------
def _scheme_specs(spec: RopeSpec, schemes: Sequence[str] | Mapping[str, Mapping[str, Any]] | None,
                  factor: float) -> list[RopeSpec]:
    from ..schemes import SCHEMES, scheme_names

    if schemes is None:
        schemes = [n for n in scheme_names() if n != "default" and "factor" in SCHEMES[n].required]
    items = schemes.items() if isinstance(schemes, Mapping) else ((n, None) for n in schemes)
    out = []
    for name, params in items:
        info = SCHEMES.get(name)
        if info is None:
            raise UsageError(f"unknown scheme {name!r}; known: {', '.join(scheme_names())}")
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
    ax: Axes | None = None,
) -> Figure:
    """Per-pair frequency ratio theta_i(scheme) / theta_i(plain RoPE) for scaling schemes.

    Each scheme runs through :func:`ropelaw.schemes.apply_scheme` on the same setup
    (``spec_or_params``: a RopeSpec or a mapping of its fields; LLaMA 2 by default) with
    ``factor`` unless a scheme's own parameters are given (``schemes`` as a mapping
    name -> params). Ratio 1 keeps a pair's rotation speed (extrapolation); 1/factor
    interpolates it (PI); NTK-style schemes move smoothly between the two from high to low
    frequency. ``seq_len`` is passed to dynamic schemes (default: factor x T_train).

    Drawn (gid): ``ratio_<scheme>`` per scheme, ``one``, ``inverse_factor``.
    """
    require_matplotlib()
    import numpy as np

    from ..schemes import apply_scheme, default_inv_freq

    base_spec = check_figure_setup(as_spec(spec_or_params, d=128, train_len=4096, base=10000.0))
    f = float(factor)
    if not 1 <= f <= 1e6:
        raise UsageError(f"factor must be between 1 and 1e6, got {factor!r}")
    specs = _scheme_specs(base_spec, schemes, f)
    if not specs:
        raise UsageError("no scheme to plot")
    n = seq_len if seq_len is not None else int(round(f * base_spec.train_len))
    ref = np.asarray(default_inv_freq(base_spec.d, base_spec.base), dtype=float)  # (d/2,)
    idx = np.arange(base_spec.pairs)
    fig, ax = new_axes(ax)
    for s in specs:
        r = apply_scheme(s, n)
        ratio = np.asarray(r.inv_freq, dtype=float) / ref  # (d/2,)
        extra = f", attention ×{r.attention_factor:.3g}" if abs(r.attention_factor - 1) > 1e-12 else ""
        if tuple(apply_scheme(s, base_spec.train_len).inv_freq) != tuple(r.inv_freq):
            extra += f", at {tokens_text(n)} tokens"  # length-dependent (dynamic NTK)
        ax.plot(idx, ratio, marker=".", ms=3, lw=1.3, label=f"{s.scheme}{extra}", gid=f"ratio_{s.scheme}")
    ax.axhline(1.0, color="black", lw=0.8, ls="--", label="1: unchanged (extrapolate)", gid="one")
    ax.axhline(1.0 / f, color="gray", lw=0.8, ls=":", label=f"1/{f:g}: interpolate by the factor", gid="inverse_factor")
    ax.set_yscale("log")
    ax.set_xlim(-0.5, base_spec.pairs - 0.5)
    ax.set_xlabel("rotation pair i (dims 2i, 2i+1; high → low frequency)")
    ax.set_ylabel("θ_i(scheme) / θ_i(plain RoPE) (ratio)")
    ax.set_title(f"Scaling schemes, per-pair frequency ratio: d = {base_spec.d}, base {_num(base_spec.base)}, "
                 f"factor {f:g}, T_train = {tokens_text(base_spec.train_len)}\nropelaw.schemes (sources: "
                 "`ropelaw schemes`)",
                 fontsize=10)
    ax.legend(fontsize=8, loc="lower left")
    ax.grid(True, which="major", alpha=0.3)
    return fig
