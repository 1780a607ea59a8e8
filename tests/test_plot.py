"""Figures: each renders to PNG under Agg without warnings, and draws the right numbers.

Every check compares the data of the drawn artists with an independent derivation made
here: brute-force period counts, mpmath, brute-force casts with ml_dtypes, brute-force
matrices and cosine sums, or numbers printed in the seeds / papers (cited at each use).
pytest runs with warnings as errors (pyproject), so any matplotlib warning fails a test.
"""

from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")

from matplotlib.collections import PathCollection  # noqa: E402
from matplotlib.image import AxesImage  # noqa: E402

from ropelaw import RopeSpec, plot  # noqa: E402
from ropelaw.cli import main  # noqa: E402
from ropelaw.errors import UsageError  # noqa: E402

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


# -- helpers ------------------------------------------------------------------------------
def render(fig, tmp_path, name="fig.png"):
    """Save ``fig`` as PNG and return its bytes (checks it is a real, non-trivial PNG)."""
    path = tmp_path / name
    fig.savefig(path, dpi=60)
    data = path.read_bytes()
    assert data[:8] == PNG_MAGIC and len(data) > 5000, (name, len(data))
    return data


def by_gid(ax, gid):
    found = [a for a in ax.get_children() if a.get_gid() == gid]
    assert len(found) == 1, f"expected one artist with gid {gid!r}, found {len(found)}"
    return found[0]


def legend_texts(ax):
    leg = ax.get_legend()
    assert leg is not None, "no legend"
    return [t.get_text() for t in leg.get_texts()]


def critical_pairs_brute(d, train_len, base):
    """Pairs whose period 2*pi*base^(2i/d) fits in the training length (Liu et al., Lemma 1)."""
    return sum(1 for i in range(d // 2) if 2 * math.pi * base ** (2 * i / d) <= train_len)


# -- Liu et al.: bound vs base --------------------------------------------------------------
def test_bound_vs_base_draws_the_critical_base_thresholds_and_both_regimes(tmp_path):
    import mpmath

    fig = plot.plot_bound_vs_base(d=128, train_len=4096, tune_len=16384)
    render(fig, tmp_path)
    ax = fig.axes[0]
    assert (ax.get_xscale(), ax.get_yscale()) == ("log", "log")
    assert "base" in ax.get_xlabel() and "tokens" in ax.get_ylabel()
    assert "2310.05209" in ax.get_title()

    # critical base beta_0 = b^(ln(T_tune/2pi)/ln(T_train/2pi)), at 50 digits
    with mpmath.workdps(50):
        beta0 = float(mpmath.mpf(10000) ** (mpmath.log(16384 / (2 * mpmath.pi)) / mpmath.log(4096 / (2 * mpmath.pi))))
    assert round(beta0) == 71738  # seed 001 / Liu et al.: "critical base 71738" for 4K -> 16K
    line = by_gid(ax, "critical_base")
    assert line.get_xdata()[0] == pytest.approx(beta0, rel=1e-12)
    # beta_1..3 = 2T/pi, T/pi, T/(2pi) of T_tune (Theorem 3)
    for gid, value in (("beta_1", 2 * 16384 / math.pi), ("beta_2", 16384 / math.pi), ("beta_3", 16384 / (2 * math.pi))):
        assert by_gid(ax, gid).get_xdata()[0] == pytest.approx(value, rel=1e-12)

    # above beta_0: T_extra = 2*pi*beta^(d_extra/d), d_extra from a brute-force period count
    d_extra = 2 * critical_pairs_brute(128, 4096, 10000.0)
    assert d_extra == 92  # seed 001: "LLaMA2 ... d_extra = 92"
    above = by_gid(ax, "bound_above")
    x, y = np.asarray(above.get_xdata()), np.asarray(above.get_ydata())
    assert x.size > 100 and np.all(x >= beta0 * (1 - 2e-12))
    np.testing.assert_allclose(y, 2 * np.pi * x ** (d_extra / 128), rtol=1e-12)
    # at or below beta_0: the bound is the tuning length; the step is drawn at beta_0 (to 1e-12)
    below = by_gid(ax, "bound_below")
    xb, yb = np.asarray(below.get_xdata()), np.asarray(below.get_ydata())
    assert np.all(xb <= x.min()) and np.all(yb == 16384)
    assert xb.max() == pytest.approx(beta0, rel=2e-12) and x.min() == pytest.approx(beta0, rel=2e-12)
    # the two regimes are shaded on each side of beta_0
    lo_span, hi_span = by_gid(ax, "regime_below"), by_gid(ax, "regime_above")  # Rectangles, x in data units
    assert lo_span.get_x() == 100 and lo_span.get_x() + lo_span.get_width() == pytest.approx(beta0, rel=1e-12)
    assert hi_span.get_x() == pytest.approx(beta0, rel=1e-12)
    assert hi_span.get_x() + hi_span.get_width() == pytest.approx(1e8, rel=1e-12)

    texts = legend_texts(ax)
    assert any("critical base β₀ = 71,738" in t for t in texts), texts
    assert any(t.startswith("β_1 = 10,430.4") for t in texts), texts


def test_bound_vs_base_overlays_seed_001_observations(tmp_path):
    fig = plot.plot_bound_vs_base()
    render(fig, tmp_path)
    ax = fig.axes[0]
    # seed 001 table: base 1e6 tuned at 16K: ppl 7.07 at 128K, 76.82 at 256K (broken)
    fine = by_gid(ax, "observed_fine_1e6")
    broken = by_gid(ax, "observed_broken_1e6")
    assert isinstance(fine, PathCollection)
    assert fine.get_offsets().tolist() == [[1e6, 128 * 1024]]
    assert broken.get_offsets().tolist() == [[1e6, 256 * 1024], [1e6, 512 * 1024], [1e6, 1024 * 1024]]
    # base 500: 9.15, 12.41, 22.78, 51.28 from 128K to 1M: slow degradation, no sharp bound
    slow = by_gid(ax, "observed_slow_500")
    assert slow.get_offsets().tolist() == [[500, n * 1024] for n in (128, 256, 512, 1024)]
    texts = legend_texts(ax)
    assert any("ppl 7.07 at 128K" in t for t in texts)
    assert any("ppl 76.82 at 256K" in t for t in texts)
    assert any("9.15 → 51.28" in t and "no sharp bound" in t for t in texts)
    # the published bound at base 1e6 (seed 001 / UX: 129,027 tokens) lies between 128K-ish and 256K
    bound_1e6 = 2 * math.pi * 1e6 ** (92 / 128)
    assert round(bound_1e6) == 129027 and bound_1e6 < 256 * 1024


def test_bound_vs_base_hides_observations_for_another_setup_and_draws_thresholds_at_4k(tmp_path):
    fig = plot.plot_bound_vs_base(tune_len=4096)
    render(fig, tmp_path)
    ax = fig.axes[0]
    gids = {a.get_gid() for a in ax.get_children()}
    assert not any(str(g).startswith("observed") for g in gids)
    # T_tune = T_train: beta_0 = b; thresholds 2607.6 / 1303.8 / 651.9 (seed 001: "2608 .. 652")
    assert by_gid(ax, "critical_base").get_xdata()[0] == 10000.0
    assert [round(by_gid(ax, g).get_xdata()[0], 1) for g in ("beta_1", "beta_2", "beta_3")] == [2607.6, 1303.8, 651.9]


def test_bound_vs_base_rejects_bad_bases():
    with pytest.raises(ValueError, match="base"):
        plot.plot_bound_vs_base(bases=[0.5, 10])
    with pytest.raises(ValueError, match="empty"):
        plot.plot_bound_vs_base(bases=[])


# -- Liu et al.: periods --------------------------------------------------------------------
def test_pair_periods_mark_the_critical_dimension(tmp_path):
    spec = RopeSpec(d=128, train_len=4096, base=1e6, tune_len=16384)
    fig = plot.plot_pair_periods(spec)
    render(fig, tmp_path)
    ax = fig.axes[0]
    assert ax.get_yscale() == "log" and "tokens" in ax.get_ylabel() and "pair" in ax.get_xlabel()
    i = np.arange(64)
    line = by_gid(ax, "periods")
    np.testing.assert_array_equal(line.get_xdata(), i)
    np.testing.assert_allclose(line.get_ydata(), 2 * np.pi * 1e6 ** (2 * i / 128), rtol=1e-12)
    pre = by_gid(ax, "pretrain_periods")
    np.testing.assert_allclose(pre.get_ydata(), 2 * np.pi * 1e4 ** (2 * i / 128), rtol=1e-12)
    k = critical_pairs_brute(128, 4096, 1e4)  # 46 pairs saw a full period (d_extra = 92)
    assert by_gid(ax, "critical_dimension").get_xdata()[0] == k - 0.5 == 45.5
    assert by_gid(ax, "train_len").get_ydata()[0] == 4096
    assert by_gid(ax, "tune_len").get_ydata()[0] == 16384
    # pair 46's inference period is Liu's bound 2*pi*1e6^(92/128) = 129,027 tokens (UX sketch)
    point = by_gid(ax, "critical_pair").get_offsets()[0]
    assert point[0] == 46 and round(point[1]) == 129027
    assert any("d_extra = 92 of 128" in t for t in legend_texts(ax))


def test_pair_periods_under_position_interpolation(tmp_path):
    # PI (Chen et al. 2023, arXiv 2306.15595) divides every frequency by s: periods grow s-fold
    spec = RopeSpec(d=64, train_len=2048, scheme="linear", params={"factor": 4})
    fig = plot.plot_pair_periods(spec)
    render(fig, tmp_path)
    ax = fig.axes[0]
    i = np.arange(32)
    np.testing.assert_allclose(by_gid(ax, "periods").get_ydata(), 4 * 2 * np.pi * 1e4 ** (2 * i / 64), rtol=1e-12)
    np.testing.assert_allclose(by_gid(ax, "pretrain_periods").get_ydata(), 2 * np.pi * 1e4 ** (2 * i / 64), rtol=1e-12)
    k = critical_pairs_brute(64, 2048, 1e4)
    assert by_gid(ax, "critical_dimension").get_xdata()[0] == k - 0.5
    assert not any("Liu's bound" in t for t in legend_texts(ax))  # that note is for plain RoPE only


def test_pair_periods_default_spec_has_no_pretraining_line(tmp_path):
    fig = plot.plot_pair_periods()
    render(fig, tmp_path)
    gids = {a.get_gid() for a in fig.axes[0].get_children()}
    assert "pretrain_periods" not in gids and "tune_len" not in gids


# -- seed 004: exact positions ----------------------------------------------------------------
def _brute_exact_fraction(dtype, lengths):
    """Exact fraction of positions 0..L-1 by casting every position with ml_dtypes."""
    import ml_dtypes

    np_dtype = {"bf16": ml_dtypes.bfloat16, "fp16": np.float16, "fp8_e4m3": ml_dtypes.float8_e4m3fn,
                "fp8_e5m2": ml_dtypes.float8_e5m2}[dtype]
    n = max(lengths)
    p = np.arange(n, dtype=np.float64)  # (n,) float64
    with np.errstate(over="ignore", invalid="ignore"):
        back = p.astype(np_dtype).astype(np.float64)  # (n,) float64, overflow -> inf / nan
    exact = np.cumsum(back == p)  # (n,) exact count among 0..i
    return np.array([exact[L - 1] / L for L in lengths])


def test_exact_fraction_curves_match_a_brute_force_cast(tmp_path):
    lengths = [16, 100, 256, 257, 300, 1000, 2048, 2049, 4096, 5000, 8192, 10000, 65536, 1 << 18]
    fig = plot.plot_exact_fraction(lengths=lengths)
    render(fig, tmp_path)
    ax = fig.axes[0]
    for dtype in ("bf16", "fp16", "fp8_e4m3", "fp8_e5m2"):
        line = by_gid(ax, f"exact_{dtype}")
        assert list(line.get_xdata()) == lengths
        np.testing.assert_array_equal(line.get_ydata(), _brute_exact_fraction(dtype, lengths))
    # seed 004: at 8192 tokens only ~10% of bf16 positions are exact: 896 of 8192
    bf16 = by_gid(ax, "exact_bf16")
    at = list(bf16.get_xdata()).index(8192)
    assert bf16.get_ydata()[at] == 896 / 8192 == _brute_exact_fraction("bf16", [8192])[0]
    assert by_gid(ax, "bf16_8192").get_offsets().tolist() == [[8192, 896 / 8192]]
    assert (ax.get_xscale(), ax.get_yscale()) == ("log", "log")
    assert "tokens" in ax.get_xlabel() and "%" in ax.get_ylabel()
    texts = legend_texts(ax)
    assert texts[:4] == ["bf16", "fp16", "fp8_e4m3", "fp8_e5m2"]
    assert any("896 exact (10.9 %)" in t for t in texts)


def test_exact_fraction_default_grid_and_aliases(tmp_path):
    fig = plot.plot_exact_fraction(dtypes=("bfloat16", "bf16"))  # aliases of one format: one curve
    render(fig, tmp_path)
    line = by_gid(fig.axes[0], "exact_bf16")
    x = np.asarray(line.get_xdata())
    assert x[0] == 16 and x[-1] == 1 << 20 and 8192 in x and np.all(np.diff(x) > 0)
    np.testing.assert_array_equal(line.get_ydata(), _brute_exact_fraction("bf16", list(x)))


def test_exact_fraction_rejects_unknown_format():
    with pytest.raises(ValueError, match="unknown float format"):
        plot.plot_exact_fraction(dtypes=("fp7",))


# -- seed 000: relative-position matrices ---------------------------------------------------
def test_relative_position_heatmaps_equal_brute_force_matrices(tmp_path):
    L, w, k = 10, 3, 4.0
    fig = plot.plot_relative_positions(length=L, window=w, k=k)
    render(fig, tmp_path)
    axes = [a for a in fig.axes if a.images]
    assert len(axes) == 4
    # seed 000: RoPE i-j; PI (i-j)/k; ReRoPE min(i-j, w); Leaky ReRoPE w + (i-j-w)/k beyond w
    maps = {
        "RoPE": lambda r: r,
        "PI": lambda r: r / k,
        "ReRoPE": lambda r: min(r, w),
        "Leaky ReRoPE": lambda r: r if r < w else w + (r - w) / k,
    }
    for ax, (gid, f) in zip(axes, maps.items(), strict=True):
        (im,) = ax.images
        assert isinstance(im, AxesImage) and im.get_gid() == gid
        arr = im.get_array()
        for i in range(L):
            for j in range(L):
                if j > i:
                    assert arr.mask[i, j], (gid, i, j)  # future keys: masked (causal)
                else:
                    assert not arr.mask[i, j] and arr[i, j] == f(i - j), (gid, i, j, arr[i, j])
        assert ax.get_xlabel() == "key position j (tokens)"
    assert axes[0].get_ylabel() == "query position i (tokens)"
    # cells are annotated with their values (L <= 16): the Leaky ReRoPE corner is w + (L-1-w)/k = 5
    corner = [t.get_text() for t in axes[3].texts if t.get_position() == (0, L - 1)]
    assert corner == [f"{w + (L - 1 - w) / k:g}"]
    assert "kexue.fm/archives/9708" in fig.get_suptitle()
    # one colour scale for all four, labelled in tokens
    assert {im.get_clim() for ax in axes for im in ax.images} == {(0.0, float(L - 1))}
    assert any("tokens" in a.get_ylabel() for a in fig.axes if not a.images)


def test_relative_positions_into_given_axes_and_bad_input():
    from matplotlib.figure import Figure

    fig = Figure()
    axs = fig.subplots(2, 2).ravel()
    assert plot.plot_relative_positions(axes=axs) is fig
    with pytest.raises(ValueError, match="4 Axes"):
        plot.plot_relative_positions(axes=axs[:3])
    with pytest.raises(ValueError, match="k"):
        plot.plot_relative_positions(k=1)


# -- Men et al.: B_{m,theta} and the base lower bound ---------------------------------------
def test_men_bmtheta_curve_and_first_violation(tmp_path):
    import mpmath

    fig = plot.plot_men_bmtheta(d=128, base=10000.0, max_m=3000)
    render(fig, tmp_path)
    ax = fig.axes[0]
    theta = 10000.0 ** (-2.0 * np.arange(64) / 128)
    m = np.arange(3001)
    brute = np.cos(np.outer(m, theta)).sum(axis=1)  # (M,) B_{m,theta}, Men et al. Theorem 1
    line = by_gid(ax, "b_m_theta")
    np.testing.assert_array_equal(line.get_xdata(), m)
    np.testing.assert_allclose(line.get_ydata(), brute, atol=1e-9)
    first = int(np.flatnonzero(brute < 0)[0])
    # the sign at the boundary, at 40 digits: B(first) < 0 <= B(m) for m < first
    with mpmath.workdps(40):
        exact = lambda mm: mpmath.fsum(mpmath.cos(mm * mpmath.mpf(float(t))) for t in theta)  # noqa: E731
        assert exact(first) < 0 and exact(first - 1) >= 0
    assert by_gid(ax, "first_violation").get_xdata()[0] == first
    assert by_gid(ax, "first_violation_point").get_offsets().tolist() == [[first, pytest.approx(brute[first])]]
    assert any(f"first violation m = {first:,}" in t and f"supported length {first - 1:,}" in t
               for t in legend_texts(ax))
    assert "tokens" in ax.get_xlabel() and "2405.14591" in ax.get_title()


def test_men_bmtheta_default_range_is_twice_the_supported_length(tmp_path):
    fig = plot.plot_men_bmtheta(d=64, base=10000.0)
    render(fig, tmp_path)
    theta = 10000.0 ** (-2.0 * np.arange(32) / 64)
    m = np.arange(20000)
    first = int(np.flatnonzero(np.cos(np.outer(m, theta)).sum(axis=1) < 0)[0])  # brute force
    line = by_gid(fig.axes[0], "b_m_theta")
    assert line.get_xdata()[-1] == max(256, 2 * (first - 1))
    assert by_gid(fig.axes[0], "first_violation").get_xdata()[0] == first


def test_men_bmtheta_without_violation(tmp_path):
    fig = plot.plot_men_bmtheta(d=128, base=1e6, max_m=500)  # large base: B > 0 over short distances
    render(fig, tmp_path)
    gids = {a.get_gid() for a in fig.axes[0].get_children()}
    assert "first_violation" not in gids
    assert any("no violation up to m = 500" in t.get_text() for t in fig.axes[0].texts)


def test_base_lower_bound_against_published_table(tmp_path):
    fig = plot.plot_base_lower_bound(d=128, lengths=[1024, 2048])
    render(fig, tmp_path)
    ax = fig.axes[0]
    assert (ax.get_xscale(), ax.get_yscale()) == ("log", "log")
    line = by_gid(ax, "base_lower_bound")
    assert list(line.get_xdata()) == [1024, 2048]
    for L, base in zip(line.get_xdata(), line.get_ydata(), strict=True):
        # the drawn base supports L: B_{m,theta} >= 0 for every m <= L (brute force)
        theta = base ** (-2.0 * np.arange(64) / 128)
        assert np.cos(np.outer(np.arange(L + 1), theta)).sum(axis=1).min() >= 0
    # Men et al. 2024, arXiv 2405.14591, table of base lower bounds (d = 128), 2 significant figures
    published = {1: 4.3e3, 2: 1.6e4, 4: 2.7e4, 8: 8.4e4, 16: 3.1e5, 32: 6.4e5, 64: 2.1e6, 128: 7.8e6,
                 256: 3.6e7, 512: 6.4e7, 1024: 5.1e8}
    points = by_gid(ax, "published").get_offsets().tolist()
    assert points == [[1024 * k, v] for k, v in published.items()]
    # at 1K and 2K the computed bound rounds (up, 2 s.f.) to the published value
    for L, base in zip(line.get_xdata(), line.get_ydata(), strict=True):
        e = math.floor(math.log10(base)) - 1
        assert math.ceil(base / 10 ** e) * 10 ** e == pytest.approx(published[L // 1024])
    assert any('published Table 1 (d = 128), Men et al. 2024: "k" drawn as 1,024 tokens' in t for t in legend_texts(ax))


def test_base_lower_bound_table_only_for_d128(tmp_path):
    fig = plot.plot_base_lower_bound(d=64, lengths=[1024])
    render(fig, tmp_path)
    assert "published" not in {a.get_gid() for a in fig.axes[0].get_children()}


# -- RoFormer: decay -------------------------------------------------------------------------
def test_decay_curve_matches_roformer_sum(tmp_path):
    pytest.importorskip("ropelaw.decay")
    fig = plot.plot_decay(d=128, base=10000.0, max_distance=200)
    render(fig, tmp_path)
    ax = fig.axes[0]
    m = np.arange(201)
    theta = 10000.0 ** (-2.0 * np.arange(64) / 128)
    # RoFormer §3.4.3: (1/(d/2)) sum_{i=1}^{d/2} |S_i|, S_i = sum_{k<i} exp(1j*m*theta_k)
    s = np.cumsum(np.exp(1j * np.outer(m, theta)), axis=1)  # (M, d/2) complex
    brute = np.abs(s).mean(axis=1)
    line = by_gid(ax, "decay")
    np.testing.assert_array_equal(line.get_xdata(), m)
    np.testing.assert_allclose(line.get_ydata(), brute, rtol=1e-9)
    # at m = 0 every S_i = i: the mean of 1..64 = 32.5
    assert line.get_ydata()[0] == pytest.approx(32.5)
    assert "tokens" in ax.get_xlabel() and "2104.09864" in ax.get_title()


# -- scaling schemes --------------------------------------------------------------------------
def test_scheme_ratios_linear_and_ntk(tmp_path):
    fig = plot.plot_scheme_ratios(RopeSpec(d=128, train_len=4096, base=10000.0), schemes=["linear", "ntk"], factor=8)
    render(fig, tmp_path)
    ax = fig.axes[0]
    i = np.arange(64)
    # Position Interpolation (Chen et al. 2023, arXiv 2306.15595): every frequency / s
    np.testing.assert_allclose(by_gid(ax, "ratio_linear").get_ydata(), np.full(64, 1 / 8), rtol=1e-12)
    # NTK-aware scaling (bloc97 2023): base' = base * s^(d/(d-2)), so the ratio is s^(-2i/(d-2))
    np.testing.assert_allclose(by_gid(ax, "ratio_ntk").get_ydata(), 8.0 ** (-2 * i / 126), rtol=1e-9)
    assert by_gid(ax, "inverse_factor").get_ydata()[0] == 1 / 8
    assert ax.get_yscale() == "log" and "pair" in ax.get_xlabel()
    assert legend_texts(ax)[:2] == ["linear", "ntk"]


def test_scheme_ratios_default_set_and_unknown_scheme(tmp_path):
    fig = plot.plot_scheme_ratios()
    render(fig, tmp_path)
    ax = fig.axes[0]
    drawn = [str(a.get_gid()) for a in ax.get_children() if str(a.get_gid()).startswith("ratio_")]
    assert "ratio_linear" in drawn and "ratio_yarn" in drawn and len(drawn) >= 3
    for gid in drawn:  # every scheme keeps each ratio within [1/s, 1] up to float noise... or above for none
        y = np.asarray(by_gid(ax, gid).get_ydata())
        assert np.all(y > 0) and np.all(y <= 1 + 1e-12), gid
    with pytest.raises(ValueError, match="unknown scheme"):
        plot.plot_scheme_ratios(schemes=["nope"])


# -- general contract ----------------------------------------------------------------------------
def test_functions_draw_into_a_given_axes():
    from matplotlib.figure import Figure

    fig = Figure()
    ax = fig.add_subplot()
    assert plot.plot_pair_periods(ax=ax) is fig
    assert ax.lines  # drawn into the given Axes


def test_import_does_not_load_matplotlib():
    code = "import sys, ropelaw, ropelaw.plot; print('matplotlib' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_missing_matplotlib_names_the_extra(monkeypatch, capsys, tmp_path):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(UsageError, match=r"pip install -e '\.\[plot\]'"):
        plot.plot_pair_periods()
    assert main(["plot", "periods", "-o", str(tmp_path / "p.png")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "pip install -e '.[plot]'" in err
    assert not (tmp_path / "p.png").exists()


# -- CLI -------------------------------------------------------------------------------------------
CLI_CASES = {
    "bound": [],
    "periods": ["--base", "1e6", "--tune", "16k"],
    "exact": ["--dtypes", "bf16,fp16", "--max-length", "64k"],
    "relpos": ["--length", "8", "--window", "3", "--k", "2"],
    "men": ["--max-m", "2000"],
    "base-bound": ["--max-length", "2k"],
    "schemes": ["--schemes", "linear,ntk", "--factor", "4"],
}


@pytest.mark.parametrize("name", sorted(CLI_CASES))
def test_cli_writes_each_figure(name, tmp_path, capsys):
    out = tmp_path / f"{name}.png"
    assert main(["plot", name, *CLI_CASES[name], "-o", str(out), "--dpi", "50"]) == 0
    assert out.read_bytes()[:8] == PNG_MAGIC
    assert capsys.readouterr().out.startswith(f"wrote {out}")


def test_cli_decay(tmp_path):
    pytest.importorskip("ropelaw.decay")
    out = tmp_path / "decay.png"
    assert main(["plot", "decay", "--max-distance", "100", "-o", str(out), "--dpi", "50"]) == 0
    assert out.read_bytes()[:8] == PNG_MAGIC


@pytest.mark.parametrize("ext,magic", [(".svg", b"<?xml"), (".pdf", b"%PDF-")])
def test_cli_vector_formats(ext, magic, tmp_path):
    out = tmp_path / f"periods{ext}"
    assert main(["plot", "periods", "-o", str(out)]) == 0
    assert out.read_bytes()[:5] == magic


@pytest.mark.parametrize(
    "argv,message",
    [
        (["plot", "nope", "-o", "x.png"], "unknown figure 'nope'; choose one of bound, periods"),
        (["plot", "bound", "-o", "x.jpg"], "must end in .png, .svg, .pdf"),
        (["plot", "exact", "--base", "3", "-o", "x.png"], "figure 'exact' does not take --base"),
        (["plot", "periods", "--d", "7", "-o", "x.png"], "rotary dimension d must be even"),
        (["plot", "relpos", "--k", "1", "-o", "x.png"], "k"),
        (["plot", "exact", "--dtypes", "fp7", "-o", "x.png"], "unknown float format"),
        (["plot", "bound", "-o", "/no/such/dir/x.png"], "does not exist"),
        (["plot", "bound", "--dpi", "5", "-o", "x.png"], "--dpi must be between 10 and 1200"),
        # values a figure cannot show, or would take minutes to compute: refused, not attempted
        (["plot", "periods", "--d", "1e308", "-o", "x.png"], "d must be <= 4096 for a figure, got 1e308"),
        (["plot", "periods", "--base", "1e300", "-o", "x.png"], "base must be <= 1e30 for a figure"),
        (["plot", "schemes", "--factor", "1e300", "-o", "x.png"], "factor must be between 1 and 1e6"),
        (["plot", "men", "--max-m", "3000000", "-o", "x.png"], "max_m must be <= 2,097,152"),
        (["plot", "decay", "--d", "4096", "--max-distance", "2000000", "-o", "x.png"], "too much for a figure"),
        (["plot", "base-bound", "--d", "4096", "-o", "x.png"], "too much for a figure"),
        (["plot", "schemes", "--schemes", "rerope", "-o", "x.png"], "needs parameter(s): window"),
        (["plot", "relpos", "--length", "9000", "-o", "x.png"], "too large"),
    ],
)
def test_cli_bad_input_is_one_line_exit_2(argv, message, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("ropelaw: error:") and message in err, err
    assert not list(tmp_path.iterdir())


def test_cli_requires_output(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["plot", "bound"])
    assert exc.value.code == 2
    assert "-o/--output" in capsys.readouterr().err
