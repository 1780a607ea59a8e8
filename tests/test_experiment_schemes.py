"""The schemes experiment and the bound sweep (issue 25): the predicted bounds against independent
derivations, dynamic NTK's evaluation at each length against a brute force, the sweep's base rule
and summary, determinism, the CLI, at smoke size.

These tests check the harness, never the research outcome: a smoke run trains for a few steps.
"""

from __future__ import annotations

import json
import math
import statistics

import pytest

torch = pytest.importorskip("torch")

from ropelaw.cli import main  # noqa: E402
from ropelaw.experiments import data, metrics, runs, scheme_bounds, sweep  # noqa: E402
from ropelaw.experiments.model import ModelConfig, PositionMethod, TinyLM  # noqa: E402

pytestmark = pytest.mark.torch

SMOKE = runs.SIZES["smoke"]


@pytest.fixture(autouse=True)
def _one_thread():
    old = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(old)


@pytest.fixture(scope="module")
def schemes_smoke():
    torch.set_num_threads(1)
    return runs.run_schemes(SMOKE)


@pytest.fixture(scope="module")
def sweep_smoke():
    torch.set_num_threads(1)
    return runs.run_bound_sweep(SMOKE)


def _d_extra(d: int, t: int, b: float = 1e4) -> int:
    """Lemma 1 by counting: pairs whose period 2*pi*b^(2i/d) fits in T."""
    return 2 * sum(2 * math.pi * b ** (2 * i / d) <= t for i in range(d // 2))


# -- evaluation at each length (dynamic NTK) ---------------------------------------------------
def test_growing_lengths_by_hand_and_their_bound():
    assert scheme_bounds.growing_lengths(4, 20, 2) == [4, 6, 9, 14, 20]
    assert scheme_bounds.growing_lengths(16, 10, 4) == [10]
    for t, n, r in ((16, 300, 16), (128, 2048, 16), (32, 512, 3), (7, 100, 1)):
        ends = scheme_bounds.growing_lengths(t, n, r)
        assert ends[0] == t and ends[-1] == n and ends == sorted(set(ends))
        for p in range(t, n):  # the length position p runs at: the first end > p
            e = next(x for x in ends if x > p)
            assert p + 1 <= e <= p + math.ceil(p / r)
    with pytest.raises(ValueError):
        scheme_bounds.growing_lengths(16, 100, 0)


def _brute_force_losses(model, samples, pm):
    """Loss at every position p from a forward of exactly p + 1 tokens (the scheme at seq_len p + 1)."""
    out = []
    with torch.no_grad():
        for p in range(samples.shape[1] - 1):
            w = samples[:, :p + 2]
            loss, _ = metrics.token_metrics(model(w[:, :-1], pm), w[:, 1:])
            out.append(loss[p].item() / samples.shape[0])
    return out


def test_evaluate_as_it_runs_equals_a_forward_per_length():
    cfg = ModelConfig(d_model=16, n_layers=2, n_heads=2, head_dim=8, train_len=16)
    model = TinyLM(cfg, seed=0)
    with torch.no_grad():  # sharp attention, so that the frequencies show in the losses
        for block in model.blocks:
            block.attn.qkv.weight.mul_(30)
    samples = torch.randint(0, 256, (3, 61), generator=torch.Generator().manual_seed(1))
    pm = PositionMethod(scheme="dynamic", params=(("factor", 4),))
    exact = _brute_force_losses(model, samples, pm)
    # one length per position (R >= L): every position exactly as it runs
    every = scheme_bounds.evaluate_as_it_runs(model, samples, pm, resolution=10_000, batch=2)
    assert every == pytest.approx(exact, rel=1e-5, abs=1e-6)
    # R = 4: the last position of each length is exact; inside T the frequencies are plain RoPE's
    grouped = scheme_bounds.evaluate_as_it_runs(model, samples, pm, resolution=4)
    for end in scheme_bounds.growing_lengths(16, 60, 4):
        assert grouped[end - 1] == pytest.approx(exact[end - 1], rel=1e-5, abs=1e-6)
    plain, _ = runs.evaluate(model, samples, PositionMethod())
    assert grouped[:16] == pytest.approx(plain[:16], rel=1e-5, abs=1e-6)
    # one forward over all 60 tokens runs every position at seq_len 60: not what dynamic NTK does as it runs
    whole, _ = runs.evaluate(model, samples, pm)
    assert max(abs(a - b) for a, b in zip(whole[16:], exact[16:], strict=True)) > 1e-3


# -- the steepest rise (a reading of the curves, added after the quick run) ------------------
def test_steepest_rise_finds_a_step_behind_a_creep():
    t, s = 64, 16
    # flat to 300, then a creep of 0.3 nats over 300 positions (the rule fires on it), then a step of 1
    curve = [2.0] * 300 + [2.0 + 0.001 * i for i in range(300)] + [3.3] * 400
    assert metrics.break_point(curve, t) < 600  # the rule: on the creep
    p, rise = metrics.steepest_rise(curve, t)
    # the step, seen whole at 600: 3.3 minus the creep's mean over [584, 600), 2 + 0.001 * 291.5
    assert p == 600 and rise == pytest.approx(1.3 - 0.001 * (300 - (s + 1) / 2), abs=1e-9)
    # against a direct scan of the two window means
    direct = max(((sum(curve[q:q + s]) - sum(curve[q - s:q])) / s, q) for q in range(t, len(curve) - s + 1))
    assert (round(direct[0], 9), direct[1]) == (round(rise, 9), p)
    assert metrics.steepest_rise([1.0] * 70, t) is None  # no room for two windows past T
    with pytest.raises(ValueError):
        metrics.steepest_rise([1.0] * 10, t)


# -- predicted bounds ----------------------------------------------------------------------------
def _independent_bound(scheme: str, factor: float | None, d: int, t: int) -> float:
    """The bound of the first pair k = d_extra/2 without a full period, derived here.

    PI: its period times s. Llama 3 (low_freq_factor 1, L_orig = T): pair k's wavelength exceeds
    T = L_orig/low, so it is divided by s: PI's. YaRN (beta_slow 1, L_orig = T): the ramp ends at
    ceil of the pair turning once in T tokens, which is k itself (Lemma 1), so pair k is divided by
    s: PI's. NTK-aware: base b*s^(d/(d-2)). Dynamic NTK: the largest D with D <= the period of
    pair k at the base b*(s(D+1)/T - (s-1))^(d/(d-2)), by a scan. Plain RoPE at b = beta_0: T.
    """
    b, k = 1e4, _d_extra(d, t) // 2
    if scheme == "default":
        return float(t)
    if scheme in ("linear", "llama3", "yarn"):
        return factor * 2 * math.pi * b ** (2 * k / d)
    if scheme == "ntk":
        return 2 * math.pi * (b * factor ** (d / (d - 2))) ** (2 * k / d)
    assert scheme == "dynamic"
    best = 0
    for dist in range(1, 100 * t):
        n = dist + 1
        s_eff = factor * n / t - (factor - 1) if n > t else 1.0
        if dist <= 2 * math.pi * (b * s_eff ** (d / (d - 2))) ** (2 * k / d):
            best = dist
    return float(best)


@pytest.mark.parametrize("scheme", scheme_bounds.SCHEMES_TESTED)
@pytest.mark.parametrize("d,t", [(16, 32), (32, 128)])
def test_predicted_bounds_against_independent_derivations(scheme, d, t):
    for factor in ((None,) if scheme == "default" else (4.0, 8.0)):
        got = scheme_bounds.predicted_bound(d, t, scheme, factor).extrapolation_bound
        want = _independent_bound(scheme, factor, d, t)
        assert got == pytest.approx(want, rel=1e-9, abs=1.0 if scheme == "dynamic" else 1e-6)


def test_schemes_rows_carry_what_ropelaw_bound_prints(schemes_smoke, capsys):
    r = schemes_smoke
    assert r["experiment"] == "schemes" and (r["train_len"], r["test_len"]) == (32, 512)
    combos = {(row["scheme"], row["factor"], row["training"]) for row in r["rows"]}
    assert combos == {("default", None, tr) for tr in ("inference", "tuned")} | {
        (s, f, tr) for s in scheme_bounds.SCHEMES_TESTED[1:] for f in (4.0, 8.0) for tr in ("inference", "tuned")}
    for row in r["rows"]:
        args = ["bound", "--d", "16", "--train", "32", "--base", "1e4", "--scheme", row["scheme"], "--format", "json"]
        if row["factor"] is not None:
            args += ["--param", f"factor={row['factor']:g}"]
        assert main(args) == 0
        printed = json.loads(capsys.readouterr().out)["extrapolation_bound"]
        assert row["predicted_bound"] == round(printed, 1)
        curve = r["curves"][row["curve"]]
        assert len(curve) == r["test_len"]
        assert row["measured_break"] == metrics.break_point(curve, 32)
        jump = metrics.steepest_rise(curve, 32)
        # the run reads the unrounded curve, the JSON keeps 4 decimals
        assert row["steepest_rise_at"] == jump[0] and row["steepest_rise_nats"] == pytest.approx(jump[1], abs=1e-3)
        verdict, ratio = metrics.agreement(printed, row["measured_break"], r["test_len"])
        assert row["agreement"] == verdict and row["ratio"] == (None if ratio is None else round(ratio, 3))
        assert row["length_dependent"] == (row["scheme"] == "dynamic")
        assert row["shares_tuning_with"] == ("default" if row["scheme"] == "dynamic" and
                                             row["training"] == "tuned" else None)
    text = runs.render_text(r)
    assert "predicted" in text and "rows agree" in text and "CPU" in text


def test_schemes_plain_rows_are_the_bound_experiments(schemes_smoke):
    # the same pre-training, continued training and windows as `experiment bound` at base 1e4
    bound = runs.run_bound(SMOKE, bases=(1e4,))
    tuned = next(row for row in schemes_smoke["rows"] if row["scheme"] == "default" and row["training"] == "tuned")
    assert schemes_smoke["curves"][tuned["curve"]] == bound["curves"]["10000"]["loss"]
    assert tuned["measured_break"] == bound["rows"][0]["measured_break"]


def test_schemes_run_is_deterministic_and_the_figure_marks_bounds(schemes_smoke):
    again = runs.run_schemes(SMOKE)
    assert again["rows"] == schemes_smoke["rows"] and again["curves"] == schemes_smoke["curves"]
    pytest.importorskip("matplotlib")
    fig = runs.plot_result(schemes_smoke)
    assert len(fig.axes) == 6
    gids = {a.get_gid() for ax in fig.axes for a in ax.get_children()}
    assert {"loss-linear-4-tuned", "predicted-linear-8-inference", "loss-dynamic-8-inference",
            "train_len-llama3"} <= gids


# -- the sweep -----------------------------------------------------------------------------------
def test_sweep_size_keeps_tokens_per_step_and_per_window():
    quick = runs.SIZES["quick"]
    s = sweep.sweep_size(quick, 64, 256)
    assert (s.head_dim, s.train_len) == (64, 256)
    assert s.batch * s.train_len == quick.batch * quick.train_len
    assert s.bound_samples * s.train_len == quick.bound_samples * quick.train_len
    assert sweep.sweep_size(quick, 32, 128) == quick


@pytest.mark.parametrize("name", ["smoke", "quick", "full"])
def test_sweep_bases_follow_the_rule(name):
    size = runs.SIZES[name]
    for d, t in size.sweep:
        k2 = _d_extra(d, t)
        want = tuple(b for b in sorted(size.sweep_bases)
                     if 2 * t <= 2 * math.pi * b ** (k2 / d) <= 16 * t / 1.5)  # Theorem 3, above beta_0 = 1e4
        assert sweep.sweep_bases(size, d, t) == want and want
    # the design: both quick bases at all four sizes; four of five full bases at each
    assert all(sweep.sweep_bases(runs.SIZES["quick"], d, t) == (1e5, 1e6) for d, t in runs.SIZES["quick"].sweep)
    assert [len(sweep.sweep_bases(runs.SIZES["full"], d, t)) for d, t in runs.SIZES["full"].sweep] == [4, 4, 4, 4]


def test_critical_pair_seen_fraction_by_counting():
    for (d, t), printed in {(32, 128): 0.644, (64, 128): 0.859, (32, 256): 0.725, (64, 256): 0.966}.items():
        k = _d_extra(d, t) // 2
        f = t / (2 * math.pi * 1e4 ** (2 * k / d))
        assert sweep.critical_pair_seen_fraction(d, t) == pytest.approx(f, rel=1e-12)
        assert round(f, 3) == printed  # the values the module docstring states


def test_sweep_rows_and_summary(sweep_smoke):
    r = sweep_smoke
    assert r["experiment"] == "bound-sweep" and [tuple(p) for p in r["sweep"]] == list(SMOKE.sweep)
    for run in r["runs"]:
        d, t = run["d"], run["train_len"]
        rows = [row for row in r["rows"] if (row["d"], row["train_len"]) == (d, t)]
        assert [row["base"] for row in rows] == list(sweep.sweep_bases(SMOKE, d, t)) == run["bases"]
        assert run["test_len"] == 16 * t and run["critical_dimension"] == _d_extra(d, t)
        for row in rows:
            curve = r["curves"][f"d{d}-T{t}-{row['base']:g}"]
            assert len(curve) == 16 * t and row["measured_break"] == metrics.break_point(curve, t)
            assert row["predicted_bound"] == pytest.approx(2 * math.pi * row["base"] ** (_d_extra(d, t) / d), abs=0.06)
            if row["measured_break"] is None:
                assert row["ratio"] is None
            else:
                assert row["ratio"] == pytest.approx(row["measured_break"] / row["predicted_bound"], abs=1e-3)
        ratios = [row["ratio"] for row in rows if row["ratio"] is not None]
        assert run["median_ratio"] == (round(statistics.median(ratios), 3) if ratios else None)
    meds = [run["median_ratio"] for run in r["runs"] if run["median_ratio"] is not None]
    s = r["summary"]
    if len(meds) > 1:
        assert s["median_spread"] == round(max(meds) / min(meds), 3)
        assert s["constant"] == (max(meds) / min(meds) <= sweep.CONSTANT_FACTOR)
    text = runs.render_text(r)
    assert "median ratio" in text and "across sizes" in text


def test_sweep_first_size_is_the_bound_experiment(sweep_smoke):
    d, t = SMOKE.sweep[0]
    assert (d, t) == (SMOKE.head_dim, SMOKE.train_len)  # the size itself: run_bound at the sweep's bases
    bound = runs.run_bound(SMOKE, bases=sweep.sweep_bases(SMOKE, d, t))
    rows = [row for row in sweep_smoke["rows"] if (row["d"], row["train_len"]) == (d, t)]
    assert [row["measured_break"] for row in rows] == [row["measured_break"] for row in bound["rows"]]


def test_sweep_figure(sweep_smoke):
    pytest.importorskip("matplotlib")
    fig = runs.plot_result(sweep_smoke)
    gids = {a.get_gid() for ax in fig.axes for a in ax.get_children()}
    assert "ratio-1" in gids and "ratio-equals-f" in gids


# -- CLI -----------------------------------------------------------------------------------------
def test_cli_schemes_and_sweep_write_json_and_png(tmp_path, capsys):
    assert main(["experiment", "schemes", "--smoke", "--format", "json", "--out", str(tmp_path)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["experiment"] == "schemes" and out["cpu_seconds"] >= 0
    assert json.loads((tmp_path / "schemes-smoke.json").read_text())["rows"] == out["rows"]
    assert (tmp_path / "schemes-smoke.png").stat().st_size > 10_000
    assert main(["experiment", "bound", "--sweep", "--smoke", "--seed", "2", "--out", str(tmp_path)]) == 0
    assert "across sizes" in capsys.readouterr().out
    assert (tmp_path / "bound-sweep-smoke-seed2.json").is_file() \
        and (tmp_path / "bound-sweep-smoke-seed2.png").is_file()


@pytest.mark.parametrize("argv,message", [
    (["experiment", "keynorm", "--smoke", "--sweep"], "--sweep applies to `ropelaw experiment bound` only"),
    (["experiment", "bound", "--smoke", "--sweep", "--bases", "1e5"], "cannot be combined"),
])
def test_cli_sweep_bad_input(argv, message, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


def test_corpus_passed_to_run_bound_is_used():
    corpus = data.load_corpus(max_bytes=SMOKE.corpus_bytes)
    a = runs.run_bound(SMOKE, bases=(1e6,), corpus=corpus)
    b = runs.run_bound(SMOKE, bases=(1e6,))
    assert a["rows"] == b["rows"] and a["corpus"] == b["corpus"]
