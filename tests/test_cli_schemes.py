"""``ropelaw schemes``: the listing, one scheme's table, and exit 2 on bad input.

Expected numbers are derived independently here (mpmath, the papers' closed forms), not
copied from the command's output.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys

import mpmath
import pytest

from ropelaw.cli import main
from ropelaw.schemes import SCHEMES, scheme_names


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_list_text(capsys):
    code, out, err = run(capsys, "schemes")
    assert code == 0 and err == ""
    for name in scheme_names():
        assert any(line.startswith(name) for line in out.splitlines()), name
    assert "linear (pi)" in out and "longrope (su)" in out
    assert "required: short_factor, long_factor" in out
    assert "source:   Peng et al. 2023, arXiv 2309.00071" in out


def test_list_json_matches_registry(capsys):
    code, out, _ = run(capsys, "schemes", "--format", "json")
    assert code == 0
    listed = json.loads(out)
    assert [s["name"] for s in listed] == scheme_names()
    for s in listed:
        info = SCHEMES[s["name"]]
        assert (s["required"], s["optional"], s["aliases"]) == (list(info.required), list(info.optional),
                                                               list(info.aliases))
    yarn = next(s for s in listed if s["name"] == "yarn")
    assert {"beta_fast", "beta_slow", "mscale", "mscale_all_dim", "attention_factor", "truncate", "variant",
            "original_max_position_embeddings"} == set(yarn["optional"])


def test_yarn_json(capsys):
    code, out, err = run(capsys, "schemes", "yarn", "--d", "128", "--train", "4096", "--base", "1e4",
                         "--factor", "8", "--format", "json")
    assert code == 0 and err == ""
    data = json.loads(out)
    expected = mpmath.mpf("0.1") * mpmath.log(8) + 1  # paper sec. 3.4: 1.2079 at s = 8
    assert abs(data["attention_factor"] - expected) < 1e-15
    assert abs(data["logit_scale"] - expected ** 2) < 1e-14
    assert data["correction_range"] == [20, 46]  # published for d = 128, b = 1e4, L = 4096
    assert data["scheme"] == "yarn" and data["variant"] == "hf" and len(data["pairs"]) == 64
    for row in data["pairs"]:
        theta = mpmath.mpf(10000) ** (-mpmath.mpf(2 * row["pair"]) / 128)
        assert abs(row["default_inv_freq"] - theta) <= 1e-15 * theta
        assert row["ratio"] == pytest.approx(row["inv_freq"] / row["default_inv_freq"], rel=1e-15)
        assert row["period"] == pytest.approx(2 * math.pi / row["inv_freq"], rel=1e-15)
        if row["pair"] <= 20:
            assert row["ratio"] == 1.0
        if row["pair"] >= 46:
            assert row["ratio"] == pytest.approx(1 / 8, rel=1e-15)


def test_yarn_text(capsys):
    code, out, _ = run(capsys, "schemes", "yarn", "--d", "128", "--train", "4096", "--factor", "8")
    assert code == 0
    assert "correction range" in out and "(20, 46)" in out
    assert "attention factor                  1.20794" in out
    assert len([line for line in out.splitlines() if line.strip()[:1].isdigit()]) == 64


def test_pi_alias_and_ntk(capsys):
    code, out, _ = run(capsys, "schemes", "ntk-aware", "--d", "128", "--train", "4096", "--factor", "2",
                       "--format", "json")
    assert code == 0
    data = json.loads(out)
    assert data["scheme"] == "ntk"
    exact = mpmath.mpf(10000) * mpmath.mpf(2) ** (mpmath.mpf(128) / 126)  # 20221.26
    assert abs(data["scaled_base"] - exact) < 1e-9
    code, out, _ = run(capsys, "schemes", "pi", "--d", "8", "--train", "4096", "--factor", "4", "--format", "json")
    assert [r["ratio"] for r in json.loads(out)["pairs"]] == [0.25] * 4


def test_dynamic_seq_len(capsys):
    argv = ["schemes", "dynamic", "--d", "128", "--train", "4k", "--factor", "2", "--format", "json"]
    _, out, _ = run(capsys, *argv)
    assert json.loads(out)["scaled_base"] == 10000.0  # no --seq-len: at the training length, plain
    _, out, _ = run(capsys, *argv, "--seq-len", "8k")
    data = json.loads(out)
    assert data["effective_factor"] == 3.0  # 2 * 8192/4096 - (2 - 1)
    assert abs(data["scaled_base"] - 10000 * mpmath.mpf(3) ** (mpmath.mpf(128) / 126)) < 1e-9


def test_leaky_rerope(capsys):
    code, out, _ = run(capsys, "schemes", "leaky_rerope", "--d", "8", "--train", "4096", "--param", "window=256",
                       "--param", "k=16", "--seq-len", "100000", "--format", "json")
    assert code == 0
    data = json.loads(out)
    # seed 000: w + (L-1-w)/k; longest safe input w + 1 + k (T - 1 - w)
    assert data["max_relative_position"] == 256 + (100000 - 1 - 256) / 16
    assert data["safe_length"] == 256 + 1 + 16 * (4096 - 1 - 256)
    assert all(r["ratio"] == 1.0 for r in data["pairs"])
    code, out, _ = run(capsys, "schemes", "rerope", "--d", "8", "--train", "4096", "--param", "window=256",
                       "--format", "json")
    assert json.loads(out)["safe_length"] is None  # unbounded


def test_longrope_list_param(capsys):
    code, out, _ = run(capsys, "schemes", "su", "--d", "8", "--train", "4096", "--param", "short_factor=[1,1,1,1]",
                       "--param", "long_factor=[1,2,4,8]", "--param", "max_position_embeddings=131072",
                       "--seq-len", "5000", "--format", "json")
    assert code == 0
    data = json.loads(out)
    assert data["factors_used"] == "long"
    assert [r["ratio"] for r in data["pairs"]] == [1.0, 0.5, 0.25, 0.125]
    assert abs(data["attention_factor"] - mpmath.sqrt(mpmath.mpf(17) / 12)) < 1e-14  # s = 32: 1 + 5/12


@pytest.mark.parametrize("argv,message", [
    (["schemes", "rope9", "--d", "128", "--train", "4096"], "unknown scheme 'rope9'"),
    (["schemes", "yarn", "--train", "4096", "--factor", "8"], "needs --d"),
    (["schemes", "yarn", "--d", "128", "--factor", "8"], "needs --train"),
    (["schemes", "yarn", "--d", "128", "--train", "4096"], "needs parameter(s): factor"),
    (["schemes", "yarn", "--d", "127", "--train", "4096", "--factor", "8"], "must be even"),
    (["schemes", "yarn", "--d", "128", "--train", "4096", "--factor", "0.5"], "factor must be >= 1"),
    (["schemes", "yarn", "--d", "128", "--train", "4096", "--factor", "8", "--param", "beta_fast=0.5"],
     "beta_fast must be >= beta_slow"),
    (["schemes", "llama3", "--d", "128", "--train", "8192", "--factor", "8", "--param", "low_freq_factor=4",
      "--param", "high_freq_factor=1"], "band factors out of order"),
    (["schemes", "linear", "--d", "128", "--train", "4096", "--factor", "2", "--param", "window=3"],
     "does not take parameter(s): window"),
    (["schemes", "leaky_rerope", "--d", "128", "--train", "4096", "--param", "window=16", "--param", "k=1"],
     "k must be > 1"),
    (["schemes", "--d", "128"], "needs a scheme NAME"),
    (["schemes", "yarn", "--d", "abc", "--train", "4096"], "not a number"),
    (["schemes", "yarn", "--d", "128", "--train", "4096", "--factor", "8", "--param", "nokey"], "KEY=VALUE"),
    (["schemes", "dynamic", "--d", "128", "--train", "4096", "--factor", "2", "--seq-len", "0"], "must be"),
])
def test_bad_input_exits_2_with_one_line(capsys, argv, message):
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse errors exit directly
        code = exc.code
    out, err = capsys.readouterr()
    assert code == 2
    assert message in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_console_entry_point_runs():
    proc = subprocess.run([sys.executable, "-m", "ropelaw", "schemes", "ntk", "--d", "128", "--train", "4096",
                           "--factor", "2"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "scaled base" in proc.stdout and "20,221.3" in proc.stdout
