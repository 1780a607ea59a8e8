"""``ropelaw plan``: each option's bound is what ``ropelaw bound`` / ``ropelaw schemes`` print for its
spec, each parameter is checked against an independent derivation (closed forms in mpmath, brute
force over integers, a brute-force cast for the precision line), and bad input exits 2 in one line.
"""

from __future__ import annotations

import contextlib
import io
import json
import math

import mpmath
import pytest

from ropelaw import RopeSpec
from ropelaw.cli import main
from ropelaw.plan import plan, plan_config

T, B, D, L = 4096, 1e4, 128, 131072


def run(argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def llama2():
    """Liu et al.'s LLaMA 2 setting (d = 128, T = 4,096, base 10,000) to 128k."""
    return plan(RopeSpec(d=D, train_len=T, base=B), L, dtype="bf16")


def bound_argv(spec: RopeSpec) -> list[str]:
    """``ropelaw bound`` flags that state ``spec`` exactly (floats as repr, parameters as JSON)."""
    argv = ["bound", "--d", str(spec.d), "--train", str(spec.train_len), "--base", repr(spec.base),
            "--pretrain-base", repr(spec.pretrain_base), "--format", "json"]
    if spec.tune_len is not None:
        argv += ["--tune", str(spec.tune_len)]
    if spec.scheme != "default":
        argv += ["--scheme", spec.scheme]
        for k, v in spec.param_dict().items():
            argv += ["--param", f"{k}={json.dumps(v)}"]
    return argv


def test_every_option_bound_equals_ropelaw_bound(llama2):
    names = [o.name for o in llama2.options]
    assert set(names) == {"current", "train", "base", "linear", "ntk", "dynamic", "yarn", "llama3", "rerope",
                          "leaky_rerope"}, names
    for o in llama2.options:
        code, out, err = run(bound_argv(o.spec))
        assert code == 0, (o.name, err)
        got = json.loads(out)["extrapolation_bound"]
        if o.name == "leaky_rerope":  # two limits: the pair bound (what `bound` prints) and the safe length
            assert got == o.extra["pair_bound"] and o.bound == min(got, o.extra["safe_length"]), (got, o.bound)
            continue
        want = o.bound if math.isfinite(o.bound) else None  # JSON has no infinity: null
        assert got == want, (o.name, got, o.bound)


def test_static_scheme_periods_equal_ropelaw_schemes(llama2):
    """The critical pair's period in ``ropelaw schemes NAME`` is the option's bound (identity map)."""
    for name in ("linear", "yarn", "llama3"):
        o = llama2.option(name)
        s = o.spec
        argv = ["schemes", name, "--d", str(s.d), "--train", str(s.train_len), "--base", repr(s.base),
                "--format", "json"] + sum((["--param", f"{k}={json.dumps(v)}"] for k, v in s.param_dict().items()), [])
        code, out, err = run(argv)
        assert code == 0, err
        pairs = json.loads(out)["pairs"]
        assert pairs[o.critical_dimension // 2]["period"] == o.bound, name


def _period_k(base, k, d=D):
    return 2 * mpmath.pi * mpmath.mpf(base) ** (mpmath.mpf(2 * k) / d)


def test_parameters_against_closed_forms(llama2):
    """Independent derivations at 50 digits: d_extra = 92 (seed 001), pair k = 46 with period
    P = 2*pi*1e4^(92/128) = 4,711.7 (Liu's Lemma 1 and the README's dims table)."""
    with mpmath.workdps(50):
        k = 46
        P = _period_k(B, k)
        assert llama2.critical_dimension == 92
        # PI and the Llama 3.1 bands divide pair 46 (wavelength 4,711 > T/low = 4,096) by s: s >= L/P
        assert llama2.option("linear").extra["smallest_factor"] == int(mpmath.ceil(L / P)) == 28
        assert llama2.option("llama3").parameters["factor"] == 28
        # NTK-aware: period 2*pi*(b*s^(d/(d-2)))^(2k/d) >= L  <=>  s >= (L/P)^((d-2)/(2k))
        ntk = llama2.option("ntk")
        s_ntk = ntk.parameters["factor"]
        assert s_ntk == int(mpmath.ceil((L / P) ** (mpmath.mpf(D - 2) / (2 * k)))) == 96
        # written as its base, rounded up to 2 significant figures: b*96^(128/126) = 1.032e6 -> 1.1e6
        exact = mpmath.mpf(B) * mpmath.mpf(s_ntk) ** (mpmath.mpf(D) / (D - 2))
        assert ntk.extra["exact_scaled_base"] == pytest.approx(float(exact), rel=1e-15)
        assert ntk.parameters["base"] == ntk.spec.base == 1.1e6 and ntk.spec.scheme == "default"
        assert ntk.bound == pytest.approx(float(_period_k(1.1e6, k)), rel=1e-13) and ntk.bound >= L
        # YaRN and PI state the paper's s = L'/L
        assert llama2.option("yarn").parameters["factor"] == llama2.option("linear").parameters["factor"] == 32
        # Liu's base: the smallest float beta with 2*pi*beta^(92/128) >= L, decided exactly
        beta = llama2.option("base").extra["liu_base"]
        assert 2 * mpmath.pi * mpmath.mpf(beta) ** (mpmath.mpf(92) / 128) >= L
        assert 2 * mpmath.pi * mpmath.mpf(math.nextafter(beta, 0)) ** (mpmath.mpf(92) / 128) < L
        # dynamic NTK: at distance L the base is b*(s*(L+1)/T - (s-1))^(d/(d-2)); pair 46 must keep a period >= L
        s = llama2.option("dynamic").parameters["factor"]

        def dyn_period(s):
            eff = mpmath.mpf(s) * (L + 1) / T - (s - 1)
            return _period_k(mpmath.mpf(B) * eff ** (mpmath.mpf(D) / (D - 2)), k)
        assert dyn_period(s) >= L > dyn_period(s - 1)


def test_leaky_rerope_k_brute_force(llama2):
    o = llama2.option("leaky_rerope")
    w, k = o.parameters["window"], o.parameters["k"]
    assert w == T // 2
    safe = [w + 1 + (kk * (T - 1 - w)) for kk in range(2, 200)]  # integer k: floor is exact
    first = next(kk for kk, s in zip(range(2, 200), safe, strict=True) if s >= L)
    assert k == first == 64 and o.extra["safe_length"] == w + 1 + 64 * (T - 1 - w)
    assert math.isinf(llama2.option("rerope").bound)


def test_precision_line_brute_force(llama2):
    ml_dtypes = pytest.importorskip("ml_dtypes")
    import numpy as np

    pos = np.arange(L, dtype=np.float64)
    exact = int(np.sum(pos.astype(ml_dtypes.bfloat16).astype(np.float64) == pos))
    assert llama2.precision["exact"] == exact == 1408


def test_ranking_and_current(llama2):
    """Issue 34 (4): reaching first, then what a config can state (ReRoPE and Leaky ReRoPE: none), then
    ropelaw's measured evidence (dynamic NTK broke at 0.21-0.54 of its bound in every row: last of the
    stateable), then whether the measured low end still reaches the target, then cost."""
    assert llama2.options[0].name == "current" and not llama2.options[0].reaches
    rest = llama2.options[1:]
    keys = [o.rank_key(L) for o in rest]
    assert keys == sorted(keys)
    names = [o.name for o in rest]
    assert names[-2:] == ["rerope", "leaky_rerope"] and names[-3] == "dynamic"
    assert names[0] == "base" and llama2.recommended.name == "base"
    assert [o.evidence.verdict for o in rest if o.name == "dynamic"] == ["not predicted"]


def test_men_lower_bound_beside_base(llama2):
    """Men et al.'s grid bound for 128k at d = 128: 8.8e6 (the `base` command's README example)."""
    assert llama2.option("base").extra["men_lower_bound"] == 8.8e6
    assert llama2.option("train").parameters["base"] == 8.8e6


def test_one_base_satisfies_both_papers(llama2):
    """Issue 34 (4): the base option is the larger of Liu et al.'s base and Men et al.'s bound: its bound
    reaches the target and B_(m,theta) >= 0 for every m up to it (brute force over m, numpy float64)."""
    import numpy as np

    o = llama2.option("base")
    assert o.parameters["base"] == max(8.8e6, o.extra["liu_base"]) and o.reaches
    theta = 8.8e6 ** (-np.arange(0, D, 2) / D)
    worst = min(float(np.cos(np.outer(np.arange(lo, min(lo + 8192, L + 1)), theta)).sum(axis=1).min())
                for lo in range(0, L + 1, 8192))
    assert worst >= 0 and o.men_supported == L
    assert not any("below Men et al." in c.text for c in o.caveats)


@pytest.mark.parametrize("x,want", [(47731929.65109458, 4.8e7), (1.02212e6, 1.1e6), (8.8e6, 8.8e6), (1e6, 1e6),
                                    (1000001.0, 1.1e6), (6.25e-3, 6.3e-3), (999.5, 1000.0)])
def test_written_base_rounds_up_to_two_figures(x, want):
    from fractions import Fraction

    from ropelaw.plan_options import written_base

    got = written_base(x)
    assert got == want and Fraction(got) >= Fraction(x)


def test_leaky_bound_is_the_smaller_limit(llama2):
    """Issue 34 (4): "bound 44,668" beside "safe up to 34,801" was a contradiction: both limits hold, the
    bound is the smaller and the caveat names both."""
    o = llama2.option("leaky_rerope")
    assert o.bound == min(o.extra["pair_bound"], o.extra["safe_length"])
    assert any("the bound is the smaller" in c.text for c in o.caveats)


def test_verdict_line_first():
    code, out, _ = run(["plan", "tests/configs/llama-3.2-1b.json", "--target", "128k"])
    assert code == 0 and out.startswith("already reaches 131,072: nothing to change (bound 322,850;")
    code, out, _ = run(["plan", "--d", "128", "--train", "4096", "--base", "1e4", "--target", "128k"])
    assert out.splitlines()[0] == ("set base 8.8e6: reaches 131,072 (bound 615,924; the toy broke at 0.65-1.53 of "
                                   "its bound: 398,502-939,899); costs continued training at 4,096 tokens")
    code, out, _ = run(["plan", "tests/configs/llama-2-7b.json", "--target", "128k"])
    assert out.splitlines()[0].startswith("set rope_theta = 8800000.0; max_position_embeddings = 131072: reaches")


def test_config_plan_equals_bound_llama32(tmp_path):
    code, out, err = run(["plan", "tests/configs/llama-3.2-1b.json", "--target", "256k", "--format", "json"])
    assert code == 0, err
    data = json.loads(out)
    assert data["setup"]["scheme"] == "llama3" and data["setup"]["d"] == 64 and data["setup"]["train_len"] == 8192
    for o in data["options"]:
        spec = RopeSpec(**{k: v for k, v in o["spec"].items() if k != "params"}, params=o["spec"]["params"])
        c, bout, berr = run(bound_argv(spec))
        assert c == 0, berr
        got = json.loads(bout)["extrapolation_bound"]
        assert got == (o["pair_bound"] if o["name"] == "leaky_rerope" else o["bound"]), o["name"]
        for key in ("name", "parameters", "bound", "reaches", "cost", "source", "caveats", "edit", "spec",
                    "evidence", "measured", "expressible"):
            assert key in o
    current = data["options"][0]
    assert current["name"] == "current" and current["reaches"] and round(current["bound"]) == 322850
    assert data["verdict"].startswith("already reaches 262,144: nothing to change") and data["recommended"]


@pytest.mark.parametrize("argv, needle", [
    (["plan", "--d", "128", "--train", "4096", "--base", "1e4", "--target", "2048"], "below the training length"),
    (["plan", "tests/configs/llama-3.2-1b.json", "--target", "4k"], "below the training length"),
    (["plan", "tests/configs/llama-3.2-1b.json", "--target", "256k", "--apply", "nope", "-o", "x.json"],
     "no such option"),
    (["plan", "tests/configs/llama-3.2-1b.json", "--target", "256k", "--apply", "yarn", "-o",
      "tests/configs/llama-3.2-1b.json"], "is the input file"),
    (["plan", "tests/configs/llama-3.2-1b.json", "--target", "256k", "--apply", "yarn", "-o",
      "/nonexistent-dir/x.json"], "cannot write"),
    (["plan", "tests/configs/llama-3.2-1b.json", "--target", "256k", "--apply", "yarn"], "needs -o"),
    (["plan", "--d", "128", "--train", "4096", "--base", "1e4", "--target", "128k", "--apply", "yarn", "-o", "x"],
     "needs a CONFIG"),
    (["plan", "--d", "128", "--train", "4096", "--target", "128k"], "--base"),
    (["plan", "tests/configs/gpt-neox-20b.yml", "--target", "128k", "--apply", "yarn", "-o", "/tmp/x.yml"],
     "no writer"),
])
def test_bad_input_exits_2_one_line(argv, needle):
    code, out, err = run(argv)
    assert code == 2, (argv, out, err)
    assert err.count("\n") == 1 and err.startswith("ropelaw: error:") and needle in err, err


def test_text_output_lists_every_option():
    code, out, err = run(["plan", "--d", "128", "--train", "4096", "--base", "1e4", "--target", "128k"])
    assert code == 0, err
    for name in ("current", "base", "train", "linear", "ntk", "dynamic", "yarn", "llama3", "rerope", "leaky_rerope"):
        assert f"  {name} " in out or f" {name}:" in out, name
    assert "critical dimension 92 of 128" in out


def test_plan_imports_no_torch():
    import subprocess
    import sys

    code = ("import sys, ropelaw.cli as c; "
            "c.main(['plan','--d','128','--train','4096','--base','1e4','--target','128k']);"
            "bad=[m for m in ('torch','matplotlib','scipy','sympy') if m in sys.modules]; print(bad)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip().splitlines()[-1] == "[]"


def test_pretrained_with_scheme_plans_only_training():
    spec = RopeSpec(d=128, train_len=8192, base=5e5, pretrain_base=5e5, scheme="llama3",
                    params={"factor": 8, "original_max_position_embeddings": 8192}, pretrained_with_scheme=True)
    p = plan(spec, 131072)
    assert [o.name for o in p.options] == ["current", "train"]
    assert round(p.options[0].bound) == 11971  # the README's torchtitan figure
    assert any("plain RoPE in pre-training" in n for n in p.notes)


def test_sliding_window_group_noted_and_others_refused(tmp_path):
    from ropelaw.errors import UsageError
    from ropelaw.lint.loader import load_config
    from ropelaw.plan import plan_config

    cfg = load_config("tests/configs/gemma-2-9b.json")
    p = plan_config(cfg, 32768)
    assert any(n.startswith("local (21 layers): sliding window") for n in p.notes)
    cfg3 = load_config("tests/configs/gemma-3-4b-it.json")  # local layers: window 1,024 < T: planned as a note
    plan_config(cfg3, 262144)
    from pathlib import Path

    data = json.loads(Path("tests/configs/gemma-2-9b.json").read_text())
    data["sliding_window"] = 1 << 20  # a window past the training length: a second setup to plan
    path = tmp_path / "g.json"
    path.write_text(json.dumps(data))
    with pytest.raises(UsageError, match="layer groups"):
        plan_config(load_config(str(path)), 1 << 21)


def test_code_paths_against_audit_reports():
    """Each framework's audited exact fractions (bf16, 131,072 tokens, worst module per scenario) are the
    ones in its committed audit report."""
    from pathlib import Path

    from ropelaw.plan import CODE_PATHS, code_path

    for key, (report, fractions) in CODE_PATHS.items():
        data = json.loads((Path("audits/reports") / f"{report}.json").read_text())
        worst: dict = {}
        for r in data["results"]:
            if r["kind"] in ("hf", "module") and r.get("dtype") == "bf16" and r.get("length") == 131072 \
                    and r.get("json"):
                for sc in r["json"]["scenarios"]:
                    if sc.get("exact_fraction") is not None:
                        worst[sc["scenario"]] = min(worst.get(sc["scenario"], 2.0), sc["exact_fraction"])
        autocast = worst.get("autocast-cuda", worst.get("autocast"))  # CUDA's policy since issue 21
        assert (worst["cast"], worst["default"], autocast) == fractions, key
    assert "autocast" in code_path("nemo")["text"] and code_path("neox") is None
    assert code_path("axolotl", "transformers 4.57.1")["audit"] == "transformers-4.57.1"
    assert code_path("hf", "transformers 4.57.1", "llama") is not None
    assert code_path("hf", "transformers 4.57.1", "deepseek_v3") is None  # not run by the audit: not claimed


def test_audited_float32_architectures_against_the_reports():
    """``lint.rules.dtype.AUDITED_FLOAT32`` (RP202 is not reported for these): every architecture the
    transformers report ran, at fp16 and bf16 up to 131,072 tokens, every scenario exact."""
    from pathlib import Path

    from ropelaw.lint.rules.dtype import AUDITED_FLOAT32

    for version, models in AUDITED_FLOAT32.items():
        data = json.loads((Path("audits/reports") / f"transformers-{version}.json").read_text())
        assert sorted(data["hf_models"]) == list(models)
        seen = set()
        for r in data["results"]:
            if r["kind"] == "hf" and r["dtype"] in ("fp16", "bf16") and r.get("json"):
                assert all(sc["exact_fraction"] == 1.0 for sc in r["json"]["scenarios"]
                           if sc.get("exact_fraction") is not None), r["key"]
                seen.add((r["model"], r["dtype"], r["length"]))
        assert {(m, "fp16", 131072) for m in models} <= seen, version


def test_rp202_not_reported_where_the_audit_measured_float32(tmp_path):
    """Issue 34 (3): ``--apply yarn`` on a Llama-2 (fp16) config made ropelaw's own lint fail with RP202,
    though the plan's code path said positions stay in float32 (measured); a model type the audit did not run
    keeps RP202."""
    from ropelaw.lint.check import lint_config
    from ropelaw.lint.loader import load_config

    out = tmp_path / "y.json"
    code, _, err = run(["plan", "tests/configs/llama-2-7b.json", "--target", "128k", "--apply", "yarn", "-o", str(out)])
    assert code == 0, err
    codes = {f.code for f in lint_config(load_config(str(out), target=131072)).findings}
    assert "RP202" not in codes
    data = json.loads(out.read_text())
    data["model_type"] = "baichuan"  # remote code: not audited
    other = tmp_path / "b.json"
    other.write_text(json.dumps(data))
    assert "RP202" in {f.code for f in lint_config(load_config(str(other), target=131072)).findings}


def test_config_plan_names_the_code_path():
    code, out, err = run(["plan", "tests/configs/llama-3.2-1b.json", "--target", "256k"])
    assert code == 0, err
    assert "code path: transformers 4.57.1" in out or "code path: transformers 5.23.0" in out
    assert "positions and angles stay in float32 in every scenario" in out


def test_every_pair_trained_is_said():
    """d = 64 at 100 tokens and base 1.5: 2*pi*1.5^(62/64) = 9.2 < 100, so every pair completes a period
    (Lemma 1); the schemes' 'unbounded' comes with the note that Liu et al. give no sharp bound there."""
    assert 2 * math.pi * 1.5 ** (62 / 64) < 100
    p = plan(RopeSpec(d=64, train_len=100, base=1.5, pretrain_base=1.5), 1 << 20)
    assert p.critical_dimension == 64
    assert any("every pair completed a period" in n and "no sharp bound" in n for n in p.notes)


def test_reaches_follows_the_tuning_regime():
    """Issue 34 (1): tuned at the target, the bound is the tuning length (Liu et al. Theorem 3), so
    "reaches" is yes; plan used to re-decide it from the critical pair's period alone and said no."""
    from ropelaw.reach import reaches
    from ropelaw.theory import extrapolation_bound

    spec = RopeSpec(d=128, train_len=8192, base=5e5, pretrain_base=5e5, tune_len=131072, scheme="llama3",
                    params={"factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                            "original_max_position_embeddings": 8192})
    r = extrapolation_bound(spec)
    assert r.regime == "at_or_below_critical_base" and r.extrapolation_bound == 131072
    assert reaches(spec, 131072)[0] and not reaches(spec, 131073)[0]
    assert plan(spec, 131072).option("current").reaches


def test_exact_bound_decides_where_the_float_cannot():
    """A plain-RoPE bound in float64 equal to a target its exact value is below (mpmath at 60 digits, an
    independent evaluation of 2*pi*beta^(d_extra/d))."""
    import mpmath

    from ropelaw.reach import exact_bound, reaches
    from ropelaw.theory import critical_dimension, extrapolation_bound

    d, t = 128, 4096
    dx = critical_dimension(d, t, 1e4)
    for target in (131072, 100000, 262144):
        with mpmath.workdps(80):
            beta = mpmath.power(mpmath.mpf(target) / (2 * mpmath.pi), mpmath.mpf(d) / dx)
        for b in (float(beta), math.nextafter(float(beta), 0), math.nextafter(float(beta), math.inf)):
            spec = RopeSpec(d=d, train_len=t, base=b)
            r = extrapolation_bound(spec)
            with mpmath.workdps(80):
                truth = 2 * mpmath.pi * mpmath.power(mpmath.mpf(b), mpmath.mpf(dx) / d) >= target
            assert reaches(spec, target)[0] == bool(truth), (target, b)
            assert (exact_bound(spec, r) >= target) == bool(truth)


def test_plan_and_lint_agree_on_reaches_corpus_axolotl():
    """The issue's file: ``plan ... --target 128k --tune 128k`` printed "reaches: no" beside bound
    131,072 while lint said ok. Both decide through ``reach.reaches`` now."""
    import os

    from ropelaw.lint.check import lint_config
    from ropelaw.lint.loader import load_config

    corpus = os.environ.get("ROPELAW_CORPUS", "../shared/corpus")
    path = os.path.join(corpus, "frameworks/axolotl/llama-3-fft-8b.yaml")
    if not os.path.exists(path):
        pytest.skip(f"not in the corpus yet: {path}")
    cfg = load_config(path, target=131072, tune=131072)
    codes = {f.code for f in lint_config(cfg).findings}
    p = plan_config(load_config(path, tune=131072), 131072)
    assert p.option("current").reaches and not codes & {"RL101", "RL102"}
    assert p.option("train").reaches
