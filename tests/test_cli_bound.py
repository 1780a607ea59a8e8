"""`ropelaw bound`, `ropelaw base`, `ropelaw dims`: output and exit codes.

Numbers are checked against closed forms evaluated here (mpmath) and the seed's values;
every bad input must give exit 2 with exactly one line on stderr and no traceback.
"""

from __future__ import annotations

import json
import math
import re

import mpmath
import pytest

from ropelaw.cli import main

REQUIRED_BOUND_KEYS = {"d", "train_len", "base", "pretrain_base", "tune_len", "critical_dimension", "critical_base",
                       "regime", "extrapolation_bound", "updated_critical_dimension", "beta_1", "beta_2", "beta_3"}


def run(capsys, *argv):
    try:
        code = main(list(argv))
    except SystemExit as exc:  # argparse errors
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


def test_bound_text_states_assumptions_regime_and_formula(capsys):
    code, out, err = run(capsys, "bound", "--d", "128", "--train", "4096", "--pretrain-base", "1e4", "--base", "1e6")
    assert code == 0 and err == ""
    assert "92 of 128" in out and "pairs 0-45 saw a full period in training, 46-63 did not" in out
    assert "129,027 tokens" in out and "2*pi * 1e6^(92/128)" in out  # UX.md sketch
    assert "10,000          (--pretrain-base)" in out
    assert "same as training (--tune to change)" in out
    assert "your base is above it" in out
    # 2T/pi, T/pi, T/2pi at T = 4096 are 2607.594.., 1303.797.., 651.898..
    # seed 001 prints them with one decimal: 2607.6, 1303.8, 651.9 (2T/pi, T/pi, T/2pi at T = 4096)
    assert "beta_1 2,607.6  beta_2 1,303.8  beta_3 651.9" in out


def test_bound_json_keys_and_values(capsys):
    code, out, _ = run(capsys, "bound", "--d", "128", "--train", "4096", "--pretrain-base", "1e4", "--base", "1e6",
                       "--format", "json")
    data = json.loads(out)
    assert code == 0 and set(data) >= REQUIRED_BOUND_KEYS
    with mpmath.workdps(40):
        expected = float(2 * mpmath.pi * mpmath.mpf(10) ** (mpmath.mpf(6 * 92) / 128))
    assert data["extrapolation_bound"] == pytest.approx(expected, rel=1e-13)
    assert (data["regime"], data["critical_dimension"], data["updated_critical_dimension"]) == (
        "above_critical_base", 92, None)
    assert data["tune_len"] == 4096 and data["pretrain_base"] == 10000.0


def test_bound_json_tuned_below_critical_base(capsys):
    code, out, _ = run(capsys, "bound", "--d", "128", "--train", "4096", "--tune", "16k", "--pretrain-base", "1e4",
                       "--base", "500",
                       "--format", "json")
    data = json.loads(out)
    assert code == 0
    assert data["regime"] == "at_or_below_critical_base" and data["extrapolation_bound"] == 16384
    assert round(data["critical_base"]) == 71738  # seed 001
    # d'_extra = 2*ceil(64*log_500(16384/2pi)) = 2*ceil(80.8) > 128: capped
    assert data["updated_critical_dimension"] == 128 and data["capped"] is True


def test_bound_unbounded_scheme_is_null_in_json(capsys):
    code, out, _ = run(capsys, "bound", "--d", "128", "--train", "4096", "--base", "1e4", "--scheme", "rerope",
                       "--param", "window=512", "--format", "json")
    data = json.loads(out)
    assert code == 0 and data["extrapolation_bound"] is None and data["unbounded"] is True
    code, out, _ = run(capsys, "bound", "--d", "128", "--train", "4096", "--base", "1e4", "--scheme", "rerope",
                       "--param", "window=512")
    assert code == 0 and "unbounded" in out


def test_bound_with_scheme_text(capsys):
    code, out, _ = run(capsys, "bound", "--d", "128", "--train", "4096", "--base", "1e4", "--scheme", "linear",
                       "--factor", "4")
    assert code == 0
    assert f"{round(4 * 2 * math.pi * 1e4 ** (92 / 128)):,} tokens" in out
    assert "scheme" in out and "plain-RoPE bound" in out


def test_base_json(capsys):
    code, out, _ = run(capsys, "base", "--d", "128", "--train", "4096", "--base", "1e4", "--target", "8000", "--format",
                       "json")
    data = json.loads(out)
    assert code == 0 and {"scaling_law_base", "men_lower_bound"} <= set(data)
    with mpmath.workdps(40):
        formula = float((mpmath.mpf(8000) / (2 * mpmath.pi)) ** (mpmath.mpf(128) / 92))
    assert data["scaling_law_base"] == pytest.approx(formula, rel=1e-12)
    assert data["men_lower_bound"] == 8.4e4  # Men et al. Table, 8k (= 8,000 tokens), d = 128


def test_base_text(capsys):
    code, out, _ = run(capsys, "base", "--d", "128", "--train", "4096", "--base", "1e4", "--target", "2000")
    assert code == 0 and "already within the training length" in out and "1.6e4" in out


def test_dims_text_and_json(capsys):
    code, out, _ = run(capsys, "dims", "--d", "128", "--train", "4096", "--base", "1e4")
    assert code == 0
    lines = out.strip().splitlines()
    assert len(lines) == 2 + 64
    assert sum(" inside " in line for line in lines[2:]) == 46
    code, out, _ = run(capsys, "dims", "--d", "8", "--train", "4096", "--base", "1e6", "--format", "json")
    rows = json.loads(out)
    assert [r["pair"] for r in rows] == [0, 1, 2, 3]
    assert rows[2]["inference_period"] == pytest.approx(2 * math.pi * 1e6 ** 0.5)


BAD = [
    ["bound", "--d", "127", "--train", "4096", "--base", "1e6"],  # odd d
    ["bound", "--d", "abc", "--train", "4096", "--base", "1e6"],  # non-numeric d
    ["bound", "--d", "128.5", "--train", "4096", "--base", "1e6"],
    ["bound", "--d", "128", "--train", "4096", "--base", "1"],  # base <= 1
    ["bound", "--d", "128", "--train", "4096", "--base", "0.5"],
    ["bound", "--d", "128", "--train", "4096", "--base", "1e6", "--pretrain-base", "1"],
    ["bound", "--d", "128", "--train", "0", "--base", "1e6"],  # length < 1
    ["bound", "--d", "128", "--train", "6", "--base", "1e6"],  # T_train < 2*pi
    ["bound", "--d", "128", "--train", "4096", "--tune", "2048", "--base", "1e6"],  # tune < train
    ["bound", "--d", "128", "--train", "4096", "--base", "nan"],
    ["bound", "--d", "128", "--train", "4096", "--base", "inf"],
    ["bound", "--d", "nan", "--train", "4096", "--base", "1e6"],
    ["bound", "--d", "128", "--train", "4096", "--base", "1e6", "--scheme", "nope"],  # unknown scheme
    ["bound", "--d", "128", "--train", "4096", "--base", "1e6", "--scheme", "yarn"],  # missing factor
    ["bound", "--d", "128", "--train", "4096", "--base", "1e6", "--scheme", "leaky_rerope",
     "--param", "window=256"],  # missing k
    ["bound", "--d", "128", "--train", "4096"],  # missing --base
    ["base", "--d", "127", "--train", "4096", "--base", "1e4", "--target", "8k"],
    ["base", "--d", "128", "--train", "4096", "--base", "1e4", "--target", "0"],
    ["base", "--d", "128", "--train", "5", "--base", "1e4", "--target", "8k"],
    ["base", "--d", "128", "--train", "4096", "--target", "8k"],  # no base: never assumed
    ["base", "--d", "128", "--train", "4096", "--target", "8k", "--pretrain-base", "0.9"],
    ["dims", "--d", "3", "--train", "4096", "--base", "1e4"],
    ["dims", "--d", "128", "--train", "4096"],  # no base: never assumed
    ["dims", "--d", "128", "--train", "4096", "--base", "1e4", "--scheme", "nope"],
]


@pytest.mark.parametrize("argv", BAD, ids=[" ".join(a[1:]) for a in BAD])
def test_bad_input_exits_2_with_one_line(capsys, argv):
    code, out, err = run(capsys, *argv)
    assert code == 2, (argv, out, err)
    assert "Traceback" not in err
    assert len(err.strip().splitlines()) == 1, err
    assert err.startswith("ropelaw")


@pytest.mark.parametrize("x,want", [
    (1e6, "1e6"), (500000.0, "500000"), (1.5e5, "150000"), (1e-5, "1e-5"), (2.5e-7, "2.5e-7"),
    (1e100, "1e100"), (1e-100, "1e-100"), (10000.0, "10000"),
])
def test_compact_numbers_in_formulas(x, want):
    # %g, then the exponent's sign '+' and leading zero dropped (1e+06 -> 1e6, 1e-05 -> 1e-5)
    from ropelaw import numfmt, theory

    assert numfmt.compact(x) == want
    assert theory.compact is numfmt.compact  # one implementation for theory and the commands


def test_bound_formula_uses_the_compact_base(capsys):
    code, out, _ = run(capsys, "bound", "--d", "128", "--train", "4096", "--pretrain-base", "1e4", "--base", "1e6")
    assert code == 0 and "2*pi * 1e6^(92/128)" in out


def test_columns_never_run_into_each_other(capsys):
    """--train 1M --base 1e6: d_extra = d, so the bound is 2*pi*1e6 = 6,283,185.3 tokens (14+ chars)."""
    code, out, _ = run(capsys, "bound", "--d", "128", "--train", "1M", "--pretrain-base", "1e4", "--base", "1e6")
    assert code == 0
    assert f"{round(2 * math.pi * 1e6):,} tokens  = 2*pi * 1e6^(128/128)" in out
    for line in out.splitlines():
        if line.startswith("  ") and line.strip():
            assert re.match(r"  \S.{0,19}  +\S", line), line  # label, then at least two spaces


def test_huge_and_barely_valid_bases_print_compactly_and_exactly(capsys):
    # 2*pi * (1e308)^(92/128) = 2*pi * 10^221.375 (mpmath): a 222-digit count printed as 1.48998e222
    want = mpmath.mpf(2) * mpmath.pi * mpmath.power(10, mpmath.mpf(308) * 92 / 128)
    code, out, _ = run(capsys, "bound", "--d", "128", "--train", "4096", "--pretrain-base", "1e4", "--base", "1e308")
    assert code == 0 and f"extrapolation bound   {mpmath.nstr(want, 6).replace('e+', 'e')} tokens" in out
    assert max(len(word) for word in out.split()) < 40
    code, out, _ = run(capsys, "bound", "--d", "128", "--train", "4096", "--pretrain-base", "1e4", "--base",
                       "1.0000000000000002")
    assert code == 0 and "base                  1.0000000000000002  at tuning" in out


def test_base_names_men_et_al_k_convention_and_the_published_value(capsys):
    """Men et al.'s Table 1 (d = 128) prints 7.8e6 for "128k". ropelaw reads --target 128k as
    131,072 tokens, where 7.8e6 does not hold: B_(m,theta) at m = 128,915 is -1.016 (mpmath, 40
    digits, theta_i = 7.8e6^(-2i/128)), so the computed bound differs and the output says why."""
    with mpmath.workdps(40):
        b = mpmath.mpf("7.8e6")
        assert mpmath.fsum(mpmath.cos(128915 * b ** (-mpmath.mpf(2 * i) / 128)) for i in range(64)) < -1
    code, out, _ = run(capsys, "base", "--d", "128", "--train", "4096", "--base", "1e4", "--target", "128k")
    assert code == 0
    assert "  target context          131,072 tokens  --target 128k = 128 x 1,024\n" in out
    assert ('  Men et al. Table 1      7.8e6         published for "128k" (d = 128); this target reads k as '
            "1,024, the table's grid as 1,000: --target 128000 to compare\n") in out
    code, out, _ = run(capsys, "base", "--d", "128", "--train", "4096", "--base", "1e4", "--target", "128k", "--format",
                       "json")
    assert json.loads(out)["men_published"] == {
        "table": "Men et al. 2024, arXiv 2405.14591, Table 1 (d = 128)", "entry": "128k", "lower_bound": 7.8e6,
        "target_reads_k_as": 1024}
    code, out, _ = run(capsys, "base", "--d", "128", "--train", "4096", "--base", "1e4", "--target", "8000")
    assert ('  Men et al. Table 1      8.4e4         published for "8k" (d = 128), read as 8,000 tokens like '
            'this target') \
        in out
    code, out, _ = run(capsys, "base", "--d", "64", "--train", "4096", "--base", "1e4", "--target", "8000")
    assert "Table 1" not in out  # the table is for d = 128 only


def test_base_means_the_same_in_bound_base_and_plan(capsys):
    """Issue 34 (6): ``--base`` is the base the model runs with everywhere, and the pretraining base is
    ``--base`` unless ``--pretrain-base`` says otherwise. A Llama 3 user (pre-trained at 5e5, 8k):
    bound 8,192 in both ``bound`` and ``plan``, where ``bound`` used to assume a pretraining base of
    10,000 and print 178,033. Liu et al.'s setting is asked for by name and gives that number."""
    code, out, _ = run(capsys, "bound", "--d", "128", "--train", "8192", "--base", "5e5", "--format", "json")
    same = json.loads(out)
    assert code == 0 and same["pretrain_base"] == 5e5 and same["extrapolation_bound"] == 8192
    code, out, _ = run(capsys, "plan", "--d", "128", "--train", "8192", "--base", "5e5", "--target", "8192",
                       "--format", "json")
    current = json.loads(out)["options"][0]
    assert current["name"] == "current" and current["bound"] == 8192
    code, out, _ = run(capsys, "bound", "--d", "128", "--train", "8192", "--base", "5e5", "--pretrain-base", "1e4",
                       "--format", "json")
    liu = json.loads(out)
    with mpmath.workdps(40):  # d_extra = 2*ceil(64*log_1e4(8192/2pi)) = 100: 2*pi*5e5^(100/128)
        want = 2 * mpmath.pi * mpmath.mpf(5e5) ** (mpmath.mpf(100) / 128)
    assert liu["critical_dimension"] == 100 and round(liu["extrapolation_bound"]) == round(float(want)) == 178033
    code, out, _ = run(capsys, "plan", "--d", "128", "--train", "8192", "--base", "5e5", "--pretrain-base", "1e4",
                       "--target", "8192", "--format", "json")
    assert round(json.loads(out)["options"][0]["bound"]) == 178033
    code, out, _ = run(capsys, "base", "--d", "128", "--train", "8192", "--base", "5e5", "--target", "128k",
                       "--format", "json")
    assert json.loads(out)["pretrain_base"] == 5e5
    code, out, _ = run(capsys, "bound", "--d", "128", "--train", "8192", "--base", "5e5")
    assert "pretraining base      500,000         same as --base: pre-trained at it (--pretrain-base to change)" in out
