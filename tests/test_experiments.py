"""The experiment harness (issue 13): determinism, metrics on known inputs, the break rule on
synthetic curves, the seed tables, and the three experiments end to end at smoke size.

These tests check the harness, never the research outcome: a smoke run trains for a few
steps and its accuracies mean nothing.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")

from ropelaw.cli import main  # noqa: E402
from ropelaw.experiments import data, metrics, runs, seeds  # noqa: E402
from ropelaw.experiments.model import Attention, ModelConfig, PositionMethod, TinyLM, score_factors  # noqa: E402

pytestmark = pytest.mark.torch


@pytest.fixture(autouse=True)
def _one_thread():
    old = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(old)


# -- data ----------------------------------------------------------------------------------------
def test_held_out_split_is_by_name_and_one_in_eight():
    names = [f"module_{i}.py" for i in range(4000)]
    share = sum(map(data.held_out, names)) / len(names)
    assert abs(share - 1 / 8) < 0.02
    assert [data.held_out(n) for n in names[:50]] == [data.held_out(n) for n in names[:50]]


def test_corpus_from_a_directory(tmp_path):
    names = [f"m{i}.py" for i in range(40)]
    test_names = [n for n in names if data.held_out(n)]
    assert test_names and len(test_names) < len(names)
    for i, n in enumerate(names):
        (tmp_path / n).write_bytes(f"# {n}\nx = {i}\n".encode())
    c = data.load_corpus(tmp_path)
    assert c.files_test == len(test_names) and c.files_train == len(names) - len(test_names)
    test_text = bytes(c.test.tolist())
    assert all(f"# {n}\n".encode() in test_text for n in test_names)
    assert b"# " + [n for n in names if n not in test_names][0].encode() not in test_text
    assert c.train.dtype == torch.uint8 and len(c.sha256) == 64
    with pytest.raises(ValueError, match="no Python sources"):
        data.load_corpus(tmp_path / "empty")


def test_the_stdlib_corpus_is_there():
    c = data.load_corpus(max_bytes=10_000)
    assert c.train.numel() == c.test.numel() == 10_000
    assert c.files_train > 100 and c.files_test > 10 and "standard library" in c.source


def test_windows_are_consecutive_and_fixed_by_the_seed():
    stream = torch.arange(1000) % 251
    w1 = data.nonrepeated_samples(stream.to(torch.uint8), 64, 5, seed=7)
    w2 = data.nonrepeated_samples(stream.to(torch.uint8), 64, 5, seed=7)
    assert w1.shape == (5, 65) and w1.dtype == torch.int64 and torch.equal(w1, w2)
    assert torch.all((w1[:, 1:] - w1[:, :-1]) % 251 == 1)  # consecutive stream tokens
    assert not torch.equal(w1, data.nonrepeated_samples(stream.to(torch.uint8), 64, 5, seed=8))
    with pytest.raises(ValueError, match="does not fit"):
        data.nonrepeated_samples(stream.to(torch.uint8), 1000, 1, seed=0)


def test_repeated_samples_repeat_with_the_period():
    stream = (torch.arange(5000) * 7 % 256).to(torch.uint8)
    r = data.repeated_samples(stream, 100, 16, 3, seed=1)
    assert r.shape == (3, 101)
    assert torch.equal(r[:, 16:], r[:, :-16])  # token t == token t - period
    first = r[:, :16]
    assert torch.all((first[:, 1:] - first[:, :-1]) % 256 == 7)  # one consecutive window


# -- metrics -------------------------------------------------------------------------------------
def test_token_metrics_on_known_logits():
    # position 0: uniform over 4 -> loss ln 4, argmax 0 (first max); position 1: logit 2 on the target
    logits = torch.tensor([[[0.0, 0.0, 0.0, 0.0], [0.0, 2.0, 0.0, 0.0]],
                           [[5.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0]]])  # (2, 2, 4)
    targets = torch.tensor([[3, 1], [0, 2]])
    loss, correct = metrics.token_metrics(logits, targets)
    lse = lambda xs: math.log(sum(math.exp(x) for x in xs))  # noqa: E731
    exp0 = math.log(4) + (lse([5, 0, 0, 0]) - 5)
    exp1 = (lse([0, 2, 0, 0]) - 2) + (lse([0, 0, 0, 1]) - 0)
    assert loss.tolist() == pytest.approx([exp0, exp1], rel=1e-6)
    assert correct.tolist() == [1.0, 1.0]  # (b1, p0) and (b0, p1) are right
    with pytest.raises(ValueError):
        metrics.token_metrics(logits, targets[:, :1])


def test_smoothed_is_a_trailing_mean():
    assert metrics.smoothed([1, 2, 3, 4, 5], 2) == [1, 1.5, 2.5, 3.5, 4.5]
    assert metrics.smoothed([4.0], 10) == [4.0]


def test_break_point_on_a_step():
    # T = 64: reference 2.0, window 16; a step of h = 1 at p0 = 300 is seen once (p - p0 + 1)/16 > 0.2,
    # i.e. at p = 303
    curve = [3.0] * 32 + [2.0] * 268 + [3.0] * 200
    assert metrics.break_point(curve, 64) == 303
    assert metrics.break_point(curve[:300], 64) is None  # flat in range and past it: no break


def test_break_point_on_a_ramp_matches_a_brute_force_scan():
    t = 64
    curve = [2.0] * t + [2.0 + 0.001 * (p - t) for p in range(t, 2000)]
    expected = next(p for p in range(t, len(curve))
                    if sum(curve[p - 15: p + 1]) / 16 > 2.0 + metrics.BREAK_MARGIN)
    assert metrics.break_point(curve, t) == expected == t + 208  # mean of the last 16 = 0.001 (p - T - 7.5)


def test_break_point_ignores_positions_before_t_and_dips():
    t = 64
    curve = [9.0] * 10 + [2.0] * 54 + [1.0] * 500  # high loss with no context; lower loss later
    assert metrics.break_point(curve, t) is None
    with pytest.raises(ValueError):
        metrics.break_point([1.0] * 10, t)


def test_agreement_rule():
    assert metrics.agreement(1000, 1400, 2048) == ("agrees", 1.4)
    assert metrics.agreement(1000, 600, 2048) == ("earlier", 0.6)
    assert metrics.agreement(1000, None, 2048) == ("later", None)
    assert metrics.agreement(3000, None, 2048) == ("agrees", None)
    assert metrics.agreement(math.inf, 500, 2048) == ("earlier", None)


def test_band_means_and_orderings():
    assert metrics.band_means([1, 2, 3, 4, 5, 6], [0, 2, 6]) == [1.5, 4.5]
    seed = {"a": 50.0, "b": 40.0, "c": 40.5, "d": 10.0}
    ours = {"a": 30.0, "b": 31.0, "c": 20.0, "d": 5.0}
    pairs = {(p["higher"], p["lower"]): p["match"] for p in metrics.ordering_agreement(ours, seed)}
    # b and c differ by 0.5 < 1 point in the seed: not a pair
    assert pairs == {("a", "b"): False, ("a", "c"): True, ("a", "d"): True, ("b", "d"): True, ("c", "d"): True}


# -- the seed tables ---------------------------------------------------------------------------
def test_seed_tables_hold_the_published_rows():
    assert seeds.SEED_000["ReRoPE-w=T/4-log n"] == (49.40, 85.47, 48.87)  # seed 000, ReRoPE-w128-log n
    assert seeds.SEED_000["ReRoPE-w=T"][1:] == (7.09, 8.25)  # w512: collapses
    assert seeds.SEED_000["Leaky ReRoPE-w=T/4-k8-log n"] == (49.40, 80.00, 48.11)
    assert seeds.SEED_003["KNA"] == (49.60, 61.08, 47.69) and seeds.SEED_003["CosA-log n-ReRoPE"][1] == 85.67
    # rows that both seeds print agree
    for label in ("Baseline", "Baseline-log n"):
        assert seeds.SEED_000[label] == seeds.SEED_003[label]
    assert seeds.SEED_003["Baseline-ReRoPE"] == seeds.SEED_000["ReRoPE-w=T/4"]
    assert seeds.window_label(32, 128) == "w=T/4" and seeds.window_label(96, 128) == "w=3T/4"
    assert seeds.window_label(30, 128) == "w=30"


# -- the model -----------------------------------------------------------------------------------
SMALL = ModelConfig(d_model=16, n_layers=1, n_heads=2, head_dim=8, train_len=16)


def test_model_init_is_fixed_by_the_seed():
    a, b, c = TinyLM(SMALL, seed=3), TinyLM(SMALL, seed=3), TinyLM(SMALL, seed=4)
    assert all(torch.equal(p, q) for p, q in zip(a.parameters(), b.parameters(), strict=True))
    assert not all(torch.equal(p, q) for p, q in zip(a.parameters(), c.parameters(), strict=True))


def test_training_is_deterministic():
    stream = data.load_corpus(max_bytes=20_000).train
    runs_ = []
    for _ in range(2):
        m = TinyLM(SMALL, seed=1)
        hist = runs.train(m, stream, steps=3, batch=2, lr=1e-3, seed=5)
        runs_.append((hist, [p.detach().clone() for p in m.parameters()]))
    assert runs_[0][0] == runs_[1][0]
    assert all(torch.equal(p, q) for p, q in zip(runs_[0][1], runs_[1][1], strict=True))


def test_model_config_rejects_bad_values():
    with pytest.raises(ValueError, match="attention"):
        ModelConfig(attention="flash")
    with pytest.raises(ValueError, match="even"):
        ModelConfig(head_dim=7)
    with pytest.raises(ValueError, match="window"):
        PositionMethod(leaky_k=8.0)


def _tokens(n=40, seed=0):
    return torch.randint(0, 256, (2, n), generator=torch.Generator().manual_seed(seed))


def test_methods_that_change_nothing_inside_the_window():
    m = TinyLM(SMALL, seed=0)
    with torch.no_grad():  # sharp attention, so that changed scores show in the logits
        for block in m.blocks:
            block.attn.qkv.weight.mul_(100)
    x = _tokens(40)
    plain = m(x)
    # ReRoPE with a window covering every distance is plain RoPE (seed 000)
    assert torch.allclose(m(x, PositionMethod(window=64)), plain, atol=1e-5)
    # PI with factor 1 is plain RoPE
    assert torch.allclose(m(x, PositionMethod(scheme="linear", params=(("factor", 1),))), plain, atol=1e-6)
    # log n-dagger is 1 inside the training length (16): the first 16 positions are unchanged
    dag = m(x, PositionMethod(logn_test=True))
    assert torch.allclose(dag[:, :16], plain[:, :16], atol=1e-6) and not torch.allclose(dag, plain, atol=1e-4)
    # a small window changes the far positions only
    small = m(x, PositionMethod(window=4))
    assert torch.allclose(small[:, :5], plain[:, :5], atol=1e-5) and not torch.allclose(small, plain, atol=1e-4)


def test_score_factors():
    pos = torch.arange(64)
    cfg = ModelConfig(train_len=16, attention="cosa", logn_train=True)
    row = score_factors(cfg, PositionMethod(), pos, attention_factor=1.2)
    expected = [1.44 * 4 * math.log(8) * math.log(p + 1) / math.log(16) for p in range(64)]
    assert row.tolist() == pytest.approx(expected, rel=1e-5)
    row = score_factors(ModelConfig(train_len=16), PositionMethod(logn_test=True), pos)
    assert row.tolist() == pytest.approx([max(1.0, math.log(p + 1) / math.log(16)) for p in range(64)], rel=1e-6)


@pytest.mark.parametrize("variant", ["kna", "qna", "cosa"])
@pytest.mark.parametrize("logn", [False, True])
def test_keynorm_attention_matches_ropelaw_methods(variant, logn):
    """The toy's KNA/QNA/CosA (plain RoPE, log n-dagger) equal ropelaw.methods.keynorm_attention."""
    from ropelaw.methods import apply_rope, keynorm_attention

    cfg = ModelConfig(d_model=16, n_layers=1, n_heads=2, head_dim=8, train_len=16, attention=variant)
    attn = Attention(cfg)
    torch.manual_seed(0)
    x = torch.randn(2, 40, 16)
    pm = PositionMethod(logn_test=logn)
    L = 40
    inv_freq = TinyLM(cfg).frequencies(pm, L)[0]
    row = score_factors(cfg, pm, torch.arange(L))
    ours = attn(x, inv_freq, row, pm)
    q, k, v = attn.qkv(x).view(2, L, 3, 2, 8).permute(2, 0, 3, 1, 4)
    pos = torch.arange(L)
    o = keynorm_attention(apply_rope(q, pos, inv_freq=inv_freq), apply_rope(k, pos, inv_freq=inv_freq), v,
                          variant, train_len=16, logn=logn)
    ref = attn.out(o.transpose(1, 2).reshape(2, L, -1))
    assert torch.allclose(ours, ref, atol=1e-5)


# -- the experiments at smoke size ----------------------------------------------------------
SMOKE = runs.SIZES["smoke"]


@pytest.fixture(scope="module")
def smoke_results():
    torch.set_num_threads(1)
    return {name: runs.EXPERIMENTS[name](SMOKE) for name in ("bound", "extrapolation", "keynorm")}


def test_bound_rows_carry_the_predicted_bound_of_the_scaling_law(smoke_results):
    r = smoke_results["bound"]
    assert r["experiment"] == "bound" and r["train_len"] == 32 and r["test_len"] == 16 * 32
    d, t = SMOKE.head_dim, SMOKE.train_len
    # Lemma 1 by brute force: pairs with period 2*pi*1e4^(2i/d) <= T saw a full period
    d_extra = 2 * sum(2 * math.pi * 1e4 ** (2 * i / d) <= t for i in range(d // 2))
    for row in r["rows"]:
        assert set(row) >= {"base", "predicted_bound", "measured_break"}
        if row["base"] > 1e4:  # above the critical base (T_tune = T_train): 2*pi*beta^(d_extra/d)
            assert row["predicted_bound"] == pytest.approx(2 * math.pi * row["base"] ** (d_extra / d), abs=0.06)
        else:  # at or below it: the tuning length
            assert row["predicted_bound"] == t
        assert row["measured_break"] is None or t <= row["measured_break"] < r["test_len"]
        curve = r["curves"][f"{row['base']:g}"]["loss"]
        assert len(curve) == r["test_len"]
        assert row["measured_break"] == metrics.break_point(curve, t)
    assert len(r["seed_comparison"]) == 2
    text = runs.render_text(r)
    assert "predicted bound" in text and "machine:" in text and "time:" in text


def test_extrapolation_rows_and_keys(smoke_results):
    r = smoke_results["extrapolation"]
    assert r["experiment"] == "extrapolation" and (r["train_len"], r["test_len"]) == (32, 256)
    labels = [row["label"] for row in r["rows"]]
    for needed in ("Baseline", "Baseline-log n", "PI", "NTK", "YaRN", "ReRoPE-w=T/8", "ReRoPE-w=T",
                   "ReRoPE-w=T/4-log n†", "Leaky ReRoPE-w=T/4-k8-log n"):
        assert needed in labels
    for row in r["rows"]:
        assert set(row) >= {"method", "window", "k", "logn", "repeated_accuracy", "nonrepeated_accuracy"}
        assert row["logn"] in ("none", "test", "train")
        assert 0 <= row["repeated_accuracy"] <= 100 and 0 <= row["nonrepeated_accuracy"] <= 100
    assert {row["window"] for row in r["rows"] if row["method"] == "rerope"} == {4, 8, 16, 24, 32}
    comp = r["seed_comparison"]["nonrepeated_accuracy"]
    assert comp["pairs"] > 100 and 0 <= comp["matching"] <= comp["pairs"]
    text = runs.render_text(r)
    assert "85.47" in text and "orderings" in text  # the seed's numbers beside ours


def test_keynorm_rows(smoke_results):
    r = smoke_results["keynorm"]
    got = {(row["attention"], row["logn"], row["on_top"]) for row in r["rows"]}
    assert len(got) == 4 * 2 * 4
    assert all(row["seed"] is not None for row in r["rows"])  # every row has its seed-003 counterpart


def test_an_experiment_is_deterministic_from_its_seed(smoke_results):
    again = runs.run_extrapolation(SMOKE)
    assert again["rows"] == smoke_results["extrapolation"]["rows"]


def test_figures(smoke_results):
    pytest.importorskip("matplotlib")
    fig = runs.plot_result(smoke_results["bound"])
    gids = {a.get_gid() for a in fig.axes[0].get_children()}
    assert "train_len" in gids and "loss-10000" in gids
    assert len(runs.plot_result(smoke_results["keynorm"]).axes) == 2


# -- the CLI -------------------------------------------------------------------------------------
def test_cli_experiment_json_and_outputs(tmp_path, capsys):
    assert main(["experiment", "keynorm", "--smoke", "--format", "json", "--out", str(tmp_path)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["experiment"] == "keynorm" and out["size"] == "smoke" and out["rows"]
    saved = json.loads((tmp_path / "keynorm-smoke.json").read_text())
    assert saved["rows"] == out["rows"]
    assert (tmp_path / "keynorm-smoke.png").stat().st_size > 1000


def test_cli_experiment_bad_input(capsys):
    assert main(["experiment", "bound", "--smoke", "--threads", "0"]) == 2
    assert "threads" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        main(["experiment", "nonsense"])
    assert exc.value.code == 2


def test_experiment_commands_import_no_torch_until_run():
    code = ("import sys, ropelaw.cli\n"
            "p = ropelaw.cli.build_parser()\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in {'torch', 'matplotlib', 'transformers'}))\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


def test_cli_bound_with_custom_bases(tmp_path, capsys):
    assert main(["experiment", "bound", "--smoke", "--bases", "1e6,2000", "--format", "json",
                 "--out", str(tmp_path)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [r["base"] for r in out["rows"]] == [2000.0, 1e6] and out["tag"] == "2bases"
    assert (tmp_path / "bound-smoke-2bases.json").is_file()
    assert main(["experiment", "bound", "--smoke", "--bases", "1e6", "--seed", "3", "--out", str(tmp_path)]) == 0
    assert (tmp_path / "bound-smoke-1bases-seed3.png").is_file()
    capsys.readouterr()
    assert main(["experiment", "keynorm", "--smoke", "--bases", "1e6"]) == 2
    assert "applies to `ropelaw experiment bound` only" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["experiment", "bound", "--smoke", "--bases", "0.5"])


def test_compact_json_round_trips_and_keeps_number_lists_on_one_line():
    from ropelaw.commands.experiment import compact_json

    result = {"experiment": "bound", "rows": [{"base": 500.0, "loss": [2.5, 2.25, None], "ok": True}],
              "empty": [], "nested": {"a": [1, [2, 3]]}}
    text = compact_json(result)
    assert json.loads(text) == result
    assert '   "loss": [2.5, 2.25, null],' in text.splitlines()
    # a list that holds a list is spread one item per line, as json.dumps(indent=1) would
    assert text.splitlines()[-7:] == [' "nested": {', '  "a": [', "   1,", "   [2, 3]", "  ]", " }", "}"]
