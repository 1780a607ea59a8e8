"""Every lint rule's failing path: a fixture, the exact finding (code, key), the numbers.

Numbers are re-derived here from the papers' formulas, not from the code under test:
Liu et al. 2023 (arXiv 2310.05209) Lemma 1 / Theorem 3; seed 000 (Leaky ReRoPE safe length);
HF dynamic NTK base; brute-force casts for float formats; numpy sums for Men et al.
"""

from __future__ import annotations

import json
import math
import pathlib

import mpmath
import numpy as np
import pytest

from ropelaw.findings import all_rules, get_rule
from ropelaw.lint.check import lint_config
from ropelaw.lint.loader import load_mapping, parse_text

BASE = {"hidden_size": 4096, "num_attention_heads": 32, "rope_theta": 5e5, "max_position_embeddings": 8192}


def lint(data, text=None, **kw):
    if text is not None:
        data, pos = parse_text(text, "json")
    else:
        text = json.dumps(data, indent=1)
        data, pos = parse_text(text, "json")
    return lint_config(load_mapping(data, pos, path="c.json", **kw)).findings


def codes(findings):
    return sorted(f.code for f in findings)


def only(findings, code):
    found = [f for f in findings if f.code == code]
    assert len(found) == 1, (code, [(f.code, f.message) for f in findings])
    return found[0]


def line_of(text, key):
    return next(i for i, line in enumerate(text.splitlines(), 1) if f'"{key}"' in line)


def d_extra(d, t, b):
    with mpmath.workdps(50):
        return 2 * sum(1 for i in range(d // 2) if 2 * mpmath.pi * mpmath.mpf(b) ** (mpmath.mpf(2 * i) / d) <= t)


def test_clean_fixture_is_clean():
    assert lint(BASE) == []


# -- RV ------------------------------------------------------------------------------------
@pytest.mark.parametrize("patch,code,key", [
    ({"rope_theta": "1e6"}, "RV001", "rope_theta"),
    ({"num_attention_heads": True}, "RV001", "num_attention_heads"),
    ({"rope_scaling": {"type": "longrope", "short_factor": "x", "long_factor": [1.0] * 64,
                       "original_max_position_embeddings": 4096}}, "RV001", "short_factor"),
    ({"rope_scaling": 3}, "RV001", "rope_scaling"),
    ({"rotary_dim": 63}, "RV003", "rotary_dim"),
    ({"num_attention_heads": 48}, "RV004", "hidden_size"),
    ({"partial_rotary_factor": 0.3}, "RV004", "partial_rotary_factor"),
    ({"rope_theta": 1.0}, "RV005", "rope_theta"),
    ({"rope_theta": -5}, "RV005", "rope_theta"),
    ({"rope_scaling": {"rope_type": "linear", "factor": 0.5}}, "RV006", "factor"),
    ({"rope_scaling": {"rope_type": "yarn"}}, "RV007", "rope_scaling"),
    ({"rope_scaling": {"type": "yarn2", "factor": 4}}, "RV008", "type"),
    ({"rope_scaling": {"rope_type": "linear", "factor": 2, "beta_fast": 32}}, "RV009", "beta_fast"),
    ({"rope_scaling": {"rope_type": "llama3", "factor": 8, "low_freq_factor": 4, "high_freq_factor": 1,
                       "original_max_position_embeddings": 8192}}, "RV011", "low_freq_factor"),
    ({"rope_scaling": {"type": "longrope", "short_factor": [1.0] * 48, "long_factor": [1.0] * 64,
                       "original_max_position_embeddings": 4096}}, "RV012", "short_factor"),
    ({"rope_scaling": {"type": "longrope", "short_factor": [1.0] * 63 + [0.0], "long_factor": [1.0] * 64,
                       "original_max_position_embeddings": 4096}}, "RV012", "short_factor"),
    ({"max_position_embeddings": 4096.5}, "RV013", "max_position_embeddings"),
    ({"max_position_embeddings": 4}, "RV013", "max_position_embeddings"),
    ({"max_position_embeddings": 4096, "rope_scaling": {"rope_type": "yarn", "factor": 4,
                                                        "original_max_position_embeddings": 131072}},
     "RV014", "original_max_position_embeddings"),
    ({"rope_scaling": {"rope_type": "yarn", "factor": 1, "beta_fast": 1, "beta_slow": 32,
                       "original_max_position_embeddings": 8192}}, "RV015", "beta_fast"),
    ({"rope_scaling": {"rope_type": "leaky_rerope", "window": 512, "k": 0.5}}, "RV016", "rope_scaling"),
])
def test_value_rules(patch, code, key):
    data = {**BASE, **patch}
    text = json.dumps(data, indent=1)
    f = only(lint(None, text=text), code)
    assert f.line == line_of(text, key), (f.line, f.message)
    assert f.severity == get_rule(code).severity


def test_non_finite_values_point_at_their_keys():
    text = ('{"hidden_size": 4096, "num_attention_heads": 32,\n "rope_theta": NaN,\n'
            ' "max_position_embeddings": 1e400}')
    found = lint(None, text=text)
    assert [(f.code, f.line) for f in found] == [("RV002", 2), ("RV002", 3)]
    assert "nan" in found[0].message and "inf" in found[1].message


def test_yarn_factor_inconsistent_numbers():
    data = {**BASE, "rope_scaling": {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 8192}}
    f = only(lint(data), "RV010")
    assert "8,192 / 8,192 = 1" in f.message and "32,768" in f.message  # 4 x 8192
    data["max_position_embeddings"] = 32768
    assert "RV010" not in codes(lint(data))  # consistent: factor = 32768 / 8192


# -- RL ------------------------------------------------------------------------------------
def test_rl101_target_beyond_bound_numbers():
    f = only(lint(BASE, target=32768), "RL101")
    # Liu Lemma 1: d_extra(128, 8192, 5e5) = 70; from scratch the bound is T_train = 8192
    assert d_extra(128, 8192, 5e5) == 70 and f.data["critical_dimension"] == 70
    assert f.data["extrapolation_bound"] == 8192
    # Theorem 3 inverted: beta = (T/2pi)^(d/d_extra) reaches T = 32768
    beta = (32768 / (2 * math.pi)) ** (128 / 70)
    assert f.data["base_for_target"] == pytest.approx(beta, rel=1e-12)
    assert 2 * math.pi * f.data["base_for_target"] ** (70 / 128) >= 32768
    assert "target 32,768 tokens [--target] exceeds the extrapolation bound 8,192" in f.message


def test_rl101_llama2_ux_example():
    """UX.md: Llama 2 7B at 32K: bound 4,096, 'a base of 1.5e5 reaches it'."""
    data = {"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32, "max_position_embeddings": 4096}
    f = only(lint(data, target=32768), "RL101")
    assert f.data["extrapolation_bound"] == 4096 and round(f.data["base_for_target"], -4) == 150000


def test_rl102_through_scheme():
    data = {**BASE, "max_position_embeddings": 65536, "original_max_position_embeddings": 8192,
            "rope_scaling": {"rope_type": "linear", "factor": 2.0}}
    f = only(lint(data), "RL102")
    k = d_extra(128, 8192, 5e5) // 2
    expected = 2 * float(2 * mpmath.pi * mpmath.mpf(5e5) ** (mpmath.mpf(2 * k) / 128))
    assert f.data["extrapolation_bound"] == pytest.approx(expected, rel=1e-12)
    assert f.data["critical_pair"] == 35 and "'linear'" in f.message
    # tuned at the target: Theorem 3, the bound is at least T_tune
    assert "RL102" not in codes(lint(data, tune=65536))


def men_first_negative(theta: np.ndarray, length: int) -> int | None:
    """Smallest m in [0, length] with sum_i cos(m theta_i) < 0 (Men et al. 2024, B_{m,theta}), numpy."""
    m = np.arange(length + 1, dtype=np.float64)[:, None]  # (L+1, 1) float64
    neg = np.nonzero(np.cos(m * theta[None, :]).sum(axis=1) < 0)[0]  # (L+1,) -> indices
    return int(neg[0]) if neg.size else None


def men_count_negative(theta: np.ndarray, length: int) -> int:
    m = np.arange(length + 1, dtype=np.float64)[:, None]  # (L+1, 1) float64
    return int((np.cos(m * theta[None, :]).sum(axis=1) < 0).sum())


def men_grid_lower_bound(d: int, length: int) -> float:
    """Brute force: the smallest base with 2 significant figures (2, 2.1, ..., 99, 100, 110, ...) whose
    frequencies b^(-2i/d) keep sum_i cos(m theta_i) >= 0 for every m in [0, length]."""
    for e in range(-1, 16):
        for q in range(10, 100):
            b = float(f"{q}e{e}")
            if b >= 2.0 and men_first_negative(b ** (-2.0 * np.arange(d // 2) / d), length) is None:
                return b
    raise AssertionError("no grid base passes")


def plain(d: int, b: float) -> np.ndarray:
    return b ** (-2.0 * np.arange(d // 2) / d)  # (d/2,) float64, RoFormer eq. 15


def test_rl103_base_below_lower_bound():
    data = {**BASE, "rope_theta": 10000.0, "max_position_embeddings": 4096}
    f = only(lint(data), "RL103")
    # at the training length (max_position_embeddings 4,096 is both): information, not a warning
    assert f.severity == "info" and f.line == line_of(json.dumps(data, indent=1), "rope_theta")
    assert f.data["within_training_length"] is True
    # Men et al.: the smallest 2-significant-figure base supporting 4,096 tokens at d=128 (brute force);
    # their Table 1 prints 2.7e4 for "4k" = 4,000 tokens
    lb = men_grid_lower_bound(128, 4096)
    assert lb == 2.9e4 and f.data["base_lower_bound"] == lb and f.data["base"] == 1e4
    first = men_first_negative(plain(128, 1e4), 4096)
    assert f.data["supported_length"] == first - 1 == 1706
    assert f.data["violations"] == men_count_negative(plain(128, 1e4), 4096) == 420
    assert ("base 10,000 [rope_theta] is below Men et al.'s lower bound 29,000 for the target 4,096 tokens "
            "[max_position_embeddings] at d=128") in f.message
    assert "B_(m,theta) < 0 at 420 of 4,096 distances, first at 1,707" in f.message
    assert "raise the base to >= 29,000" in f.fix


def test_rl103_warns_past_the_training_length_only():
    """Men et al.'s bound is information at the trained length and a warning for context extension:
    the same base 1e4 (d=128) trained at 4,096, served at 8,192 (--target) or tuned there (--tune)."""
    data = {**BASE, "rope_theta": 10000.0, "max_position_embeddings": 4096}
    f = only(lint(data, target=8192), "RL103")
    assert f.severity == "warning" and f.data["within_training_length"] is False and "info:" not in f.message
    assert f.data["base_lower_bound"] == men_grid_lower_bound(128, 8192)
    assert only(lint(data, target=8192, tune=8192), "RL103").severity == "warning"  # extension, tuned or not
    assert only(lint(data, target=2048), "RL103").severity == "info"  # below the training length
    # the training length comes from the target's key: its source is said once, at the target
    assert only(lint(data), "RL103").message.endswith("; info: within the training length 4,096")
    assert "Past the training length (context extension" in get_rule("RL103").what  # the rule's page says when it warns


def test_rl100_missing_training_length():
    """A config with no length anywhere: RL100 at the base key, not RV016, and no bound rule ran."""
    text = '{\n "hidden_size": 4096,\n "num_attention_heads": 32,\n "rope_theta": 500000\n}'
    found = lint(None, text)
    assert [(f.code, f.severity, f.line, f.column) for f in found] == [("RL100", "warning", 4, 2)]
    assert found[0].message == ("no training length: no max_position_embeddings or seq_length (pass --train); "
                                "the bounds (RL101-RL104) were not checked")
    # --train supplies it: the bound rules run (8,192 at base 5e5, d=128: Men et al.'s bound holds)
    assert lint(None, text, train=8192) == []


def test_rl103_not_below_the_bound_is_clean():
    """Bases at or above the bound, or bases that support the context themselves, are not flagged."""
    # 6.4e5 >= the bound 6.3e5 for 32,768 tokens, although it dips below zero at 27,685 (not monotone)
    assert men_first_negative(plain(128, 6.4e5), 32768) == 27685
    assert "RL103" not in codes(lint({**BASE, "rope_theta": 6.4e5, "max_position_embeddings": 32768}))
    # 26,970 is below the grid bound 2.9e4 for 4,096 tokens but keeps B >= 0 itself: it supports 4,096
    assert men_first_negative(plain(128, 26970.0), 4096) is None
    assert "RL103" not in codes(lint({**BASE, "rope_theta": 26970.0, "max_position_embeddings": 4096}))
    # 2.8e4, the grid base below the bound, fails: flagged
    assert men_first_negative(plain(128, 2.8e4), 4096) is not None
    assert only(lint({**BASE, "rope_theta": 2.8e4, "max_position_embeddings": 4096}), "RL103").data["base"] == 2.8e4


def test_rl103_through_dynamic_ntk_scaled_base():
    """Dynamic NTK at the target uses the single base b' = b (s L/L0 - (s-1))^(d/(d-2)) (HF): RL103 on b'."""
    data = {**BASE, "rope_theta": 10000.0, "max_position_embeddings": 4096,
            "rope_scaling": {"type": "dynamic", "factor": 2.0}}
    f = only(lint(data, target=8192), "RL103")
    scaled = 10000.0 * (2 * 8192 / 4096 - 1) ** (128 / 126)
    assert f.data["base"] == pytest.approx(scaled, rel=1e-12)
    assert f.data["base_lower_bound"] == men_grid_lower_bound(128, 8192) == 8.4e4
    assert f.data["supported_length"] + 1 == men_first_negative(plain(128, scaled), 8192)
    assert "scheme 'dynamic' scaled base" in f.message and "RL104" not in codes(lint(data, target=8192))


def test_rl103_rerope_window_limits_the_distances():
    """ReRoPE encodes distances up to its window w only: Men et al.'s condition is checked to w."""
    rerope = {**BASE, "rope_theta": 10000.0, "max_position_embeddings": 65536,
              "rope_scaling": {"rope_type": "rerope", "window": 1024}}
    assert men_first_negative(plain(128, 1e4), 1024) is None  # B >= 0 up to 1,024
    assert not {"RL103", "RL104"} & set(codes(lint(rerope, train=4096)))
    rerope["rope_scaling"]["window"] = 2048  # first negative at 1,707 < 2,048
    f = only(lint(rerope, train=4096), "RL103")
    assert f.data["length"] == 2048 and f.data["base_lower_bound"] == men_grid_lower_bound(128, 2048)


def test_rl104_scheme_frequencies_below_lower_bound():
    """Linear scaling (Chen et al. 2023): theta_i / s, not of the form b^(-2i/d): RL104 (info), not RL103."""
    data = {**BASE, "rope_theta": 10000.0, "max_position_embeddings": 16384,
            "original_max_position_embeddings": 4096, "rope_scaling": {"rope_type": "linear", "factor": 4.0}}
    f = only(lint(data), "RL104")
    theta = plain(128, 1e4) / 4  # (64,) float64
    assert f.severity == "info" and "RL103" not in codes(lint(data))
    assert f.data["supported_length"] + 1 == men_first_negative(theta, 16384)
    assert f.data["violations"] == men_count_negative(theta, 16384)
    assert "scheme 'linear' frequencies (factor 4; d=128, base 10,000)" in f.message
    assert f.notes == ("scheme 'linear': factor 4",)  # every parameter, beside the message
    assert "NOT of the form b^(-2i/d)" in get_rule("RL104").what  # why no base is compared: the rule's page
    # the same scheme served at 4,096 tokens: theta/4 keeps B >= 0 for every m <= 4,096: no RL104
    assert men_first_negative(theta, 4096) is None and "RL104" not in codes(lint(data, target=4096))


# -- RS ------------------------------------------------------------------------------------
def test_rs101_leaky_rerope_safe_length():
    data = {**BASE, "max_position_embeddings": 65536, "rope_theta": 10000.0,
            "rope_scaling": {"rope_type": "leaky_rerope", "window": 512, "k": 4}}
    f = only(lint(data, train=4096), "RS101")
    # seed 000: encoded position w + (D - w)/k <= T - 1 for D = L - 1 -> L* = w + 1 + floor(k (T - 1 - w))
    assert f.data["safe_length"] == 512 + 1 + 4 * (4095 - 512) == 14845
    assert f.data["k_needed"] == pytest.approx((65535 - 512) / (4095 - 512))
    assert "RS101" not in codes(lint(data, train=4096, target=14845))
    assert "RS101" in codes(lint(data, train=4096, target=14846))


def test_rs102_rerope_window_beyond_training():
    data = {**BASE, "rope_theta": 10000.0, "rope_scaling": {"rope_type": "rerope", "window": 8192}}
    f = only(lint(data, train=4096, target=8192), "RS102")
    assert f.data == {"window": 8192, "train_len": 4096}


def test_rs103_dynamic_ntk_at_target():
    data = {**BASE, "rope_theta": 10000.0, "max_position_embeddings": 4096,
            "rope_scaling": {"type": "dynamic", "factor": 2.0}}
    f = only(lint(data, target=262144), "RS103")
    # HF dynamic: base * (s*L/L0 - (s-1))^(d/(d-2))
    expected = 10000.0 * (2 * 262144 / 4096 - 1) ** (128 / 126)
    assert f.data["base_at_target"] == pytest.approx(expected, rel=1e-12)
    assert f.data["extrapolation_bound"] < 262144
    assert "RL102" not in codes(lint(data, target=262144))  # dynamic is RS103's, not RL102's


# -- RP2xx ---------------------------------------------------------------------------------
def test_rp201_fp16_at_4096_ux_example():
    data = {**BASE, "max_position_embeddings": 4096, "rope_theta": 1e6, "torch_dtype": "float16"}
    f = only(lint(data), "RP201")
    pos = np.arange(4096)
    exact = int((pos.astype(np.float16).astype(np.int64) == pos).sum())
    assert f.data["exact"] == exact == 3072 and "75.0%" in f.message


def test_rp202_fp16_overflow():
    data = {**BASE, "max_position_embeddings": 131072, "torch_dtype": "float16"}
    f = only(lint(data), "RP202")
    pos = np.arange(131072, dtype=np.float64)
    with np.errstate(over="ignore"):
        inf = np.isinf(pos.astype(np.float16))
    assert f.data["overflow_from"] == int(np.argmax(inf)) == 65520
    assert f.data["overflow_count"] == int(inf.sum()) == 131072 - 65520
    assert "RP202" not in codes(lint({**data, "torch_dtype": "bfloat16"}))


# -- every rule has a failing test above and full documentation ----------------------------
LINT_FAMILIES = ("RV", "RL", "RS", "RP2", "RE1")


def test_re103_a_symlinked_directory_is_reported_not_scanned(tmp_path, capsys):
    from ropelaw.cli import main

    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "c.json").write_text(json.dumps({"hidden_size": 4096, "num_attention_heads": 32}))
    (tmp_path / "scan").mkdir()
    (tmp_path / "scan" / "ok.json").write_text(json.dumps({"hidden_size": 4096, "num_attention_heads": 32,
                                                          "rope_theta": 1e4, "max_position_embeddings": 4096}))
    (tmp_path / "scan" / "link").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    assert main(["lint", str(tmp_path / "scan")]) == 1
    out = capsys.readouterr().out
    assert (f"{tmp_path / 'scan' / 'link'}:1:1: RE103 config-directory-not-scanned not scanned: a symbolic link to a "
            "directory, not followed") in out
    assert out.rstrip().endswith("in 1 config (1 directory not scanned).")


def test_every_lint_rule_is_documented_and_tested():
    here = pathlib.Path(__file__).parent
    tested = "".join((here / n).read_text() for n in ("test_lint_rules.py", "test_lint_loader.py",
                                                    "test_lint_limits.py", "test_lint_dialects.py",
                                                    # llama.cpp and Ollama serving (RV040-RV045, RP203)
                                                    "test_lint_gguf.py",
                                                    "test_lint_frameworks.py",  # framework-only rules (RV020)
                                                    "test_lint_reading.py",
                                                    "test_lint_layers.py",  # per-layer semantics (RV024, RL105)
                                                    "test_lint_noqa.py"))  # inline suppression (RE105)
    rules = [r for r in all_rules() if r.code.startswith(LINT_FAMILIES)]
    assert len(rules) >= 25
    for r in rules:
        assert r.what and r.why and r.example and r.fix, r.code
        assert r.code in tested or r.name in tested, f"{r.code} has no failing-path test"


@pytest.mark.parametrize("fmt", ["json", "sarif", "github", "text"])
def test_cli_formats_and_exit_codes(tmp_path, capsys, fmt):
    from ropelaw.cli import main

    p = tmp_path / "config.json"
    p.write_text(json.dumps({**BASE, "torch_dtype": "float16"}, indent=2))
    assert main(["lint", str(p), "--format", fmt]) == 0
    capsys.readouterr()
    assert main(["lint", str(p), "--format", fmt, "--target", "128k"]) == 1
    out = capsys.readouterr().out
    if fmt == "json":
        doc = json.loads(out)
        assert {f["code"] for f in doc["findings"]} == {"RL101", "RL103", "RP202"}
        assert doc["configs"][0]["bound"]["extrapolation_bound"] == 8192
    elif fmt == "sarif":
        doc = json.loads(out)
        assert doc["version"] == "2.1.0" \
            and {r["ruleId"] for r in doc["runs"][0]["results"]} == {"RL101", "RL103", "RP202"}
    elif fmt == "github":
        assert "::error file=" in out and "title=RL101 target-beyond-bound" in out
    else:
        assert f"{p}:5:3: RL101 target-beyond-bound target 131,072 tokens [--target]" in out
        assert out.strip().endswith("Found 3 findings (2 errors, 1 warning) in 1 config.")


def test_cli_select_ignore_and_default_off(tmp_path, capsys):
    from ropelaw.cli import main

    p = tmp_path / "config.json"
    p.write_text(json.dumps({**BASE, "torch_dtype": "bfloat16"}))
    assert main(["lint", str(p)]) == 0  # RP201 is off by default
    assert main(["lint", str(p), "--select", "RP201"]) == 1
    assert "RP201 positions-inexact-in-dtype position ids in bf16 are exact for 10.9%" in capsys.readouterr().out
    assert main(["lint", str(p), "--select", "ALL", "--ignore", "RP"]) == 0
    assert main(["lint", str(p), "--target", "32768", "--ignore", "RL101,RL103"]) == 0


def test_rules_off_by_default_say_so_in_their_own_definition(capsys):
    """RP201 (most bf16 configs) and RL104 (a scheme's trade-off, information) are the only rules
    off by default; that is the rule's own ``default_on`` flag, and `ropelaw rule` says it."""
    from ropelaw.cli import main
    from ropelaw.commands.lint import default_select

    assert {r.code for r in all_rules() if not r.default_on} == {"RP201", "RL104"}
    assert set(default_select()) == {r.code for r in all_rules()} - {"RP201", "RL104"}
    assert main(["rule", "RL104"]) == 0
    assert "\nOff by default: enable with --select RL104.\n" in capsys.readouterr().out
    assert main(["rule", "RL103"]) == 0
    assert "Off by default" not in capsys.readouterr().out


def test_lint_library_does_not_import_the_cli_package():
    """lint/ is library code: linting every corpus config loads no ropelaw.commands module, and
    the rotary-dimension limit is one object shared with the CLI (ropelaw.limits)."""
    import glob
    import subprocess
    import sys

    code = ("import glob, sys\n"
            "from ropelaw.lint.check import lint_config\n"
            "from ropelaw.lint.loader import load_config\n"
            "for f in sorted(glob.glob(sys.argv[1] + '/*.json')):\n"
            "    lint_config(load_config(f))\n"
            "print(sorted(m for m in sys.modules if m.startswith('ropelaw.commands')))\n")
    configs = pathlib.Path(__file__).resolve().parent / "configs"
    assert glob.glob(str(configs / "*.json"))
    out = subprocess.run([sys.executable, "-c", code, str(configs)], capture_output=True,
                         text=True, check=True).stdout
    assert out.strip() == "[]"
    from ropelaw import limits, units
    from ropelaw.lint.rules import values

    assert values.MAX_D is limits.MAX_D and limits.MAX_D == 2**16  # _common no longer uses MAX_D
    assert values.MAX_CONTEXT == 2**31 - 1 and units.MAX_LENGTH is limits.MAX_LENGTH == 2**53  # the CLI's lengths


def test_rule_command_shows_docs(capsys):
    from ropelaw.cli import main

    for r in all_rules():
        if r.code.startswith(LINT_FAMILIES):
            assert main(["rule", r.code]) == 0
            out = capsys.readouterr().out
            assert out.startswith(f"{r.code} {r.name} ({r.severity})") and "## Why it matters" in out


def test_pre_commit_hook_file():
    import yaml

    hooks = yaml.safe_load((pathlib.Path(__file__).parent.parent / ".pre-commit-hooks.yaml").read_text())
    hook = next(h for h in hooks if h["id"] == "ropelaw-lint")
    assert hook["entry"] == "ropelaw lint --force-exclude"  # pre-commit names every file: the project's exclude holds
    import re

    rx = re.compile(hook["files"])
    assert rx.search("models/llama/config.json") and rx.search("train/llama.yaml")
    assert not rx.search("src/model.py")


@pytest.mark.parametrize("model_type, key, factor, want", [
    ("gpt_neox", "rotary_pct", 1.25, "error"),            # measured: the forward fails (tests/test_hf_refused_keys.py)
    ("phi", "partial_rotary_factor", 1.5, "error"),
    ("persimmon", "partial_rotary_factor", 1.25, "error"),  # not measured: the rule's own severity, said so
    ("gpt_neox", "rotary_pct", 1.0, None),
    ("phi", "partial_rotary_factor", 0.5, None),
])
def test_rv046_a_rotary_wider_than_the_head(model_type, key, factor, want):
    """RV046 where head_dim x factor exceeds head_dim (a factor above 1): the rotated dims and head_dim in the
    message (4096 / 32 = 128 per head), the measured runtime verdict for the types measured, "not measured"
    elsewhere; nothing at a factor of at most 1."""
    found = [f for f in lint(dict(BASE, model_type=model_type, **{key: factor})) if f.code == "RV046"]
    if want is None:
        assert found == []
        return
    (f,) = found
    assert f.severity == want
    assert f"rotary dimension {128 * factor:g} " in f.message and "head_dim 128" in f.message
    assert ("not measured" in f.message) == (model_type == "persimmon")


def test_rv046_not_for_an_mla_rope_head():
    """DeepSeek-V3's layout: qk_rope_head_dim 64 is not a partial factor, though hidden_size / heads is 56 there."""
    data = dict(BASE, model_type="deepseek_v3", hidden_size=7168, num_attention_heads=128, qk_rope_head_dim=64,
                qk_nope_head_dim=128, v_head_dim=128, kv_lora_rank=512)
    assert "RV046" not in codes(lint(data))
