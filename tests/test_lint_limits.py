"""Nonsense values are findings, never "ok" (QA regressions of ``ropelaw lint``).

The limits (``ropelaw/limits.py``: MAX_CONTEXT, MAX_D; documented in ``ropelaw rule RV013`` / ``RV017``):

- a length is a whole number in (2*pi, 2^31 - 1]; 2^31 - 1 is the largest int32, derived here as
  ``np.iinfo(np.int32).max`` (int32 sequence offsets: FlashAttention's ``cu_seqlens``);
- a scaling factor is at most 2^20, and factor x original context is at most 2^31 - 1 (exact
  integer arithmetic here);
- rotary dims at most 2^16; every scheme frequency in [smallest normal float64, pi] rad/token
  (``np.finfo(np.float64).tiny``; pi: aliasing).

A config breaking one of them gets the RV finding at the key and NO bound, scheme or dtype
findings (those would be computed on a typo), and messages print huge numbers compactly
(``1e30``, ``1e308``), never as dozens of digits. Expected numbers are derived here (numpy's
int32 and float64 limits, integer arithmetic, mpmath), not read back from the linter.
"""

from __future__ import annotations

import json
import re

import mpmath
import numpy as np
import pytest

from ropelaw.cli import main
from ropelaw.lint.check import lint_config
from ropelaw.lint.dialects.hf import semantics_version
from ropelaw.lint.loader import fmt_count, load_mapping, parse_text

INT32_MAX = int(np.iinfo(np.int32).max)  # 2,147,483,647
TINY = float(np.finfo(np.float64).tiny)  # smallest normal float64, 2.2250738585072014e-308
BASE = {"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32, "rope_theta": 5e5,
        "max_position_embeddings": 8192}
# a number printed with 13 or more digits, plain or grouped (1,000,000,000,000)
LONG_NUMBER = re.compile(r"\d{13,}|(?:\d{1,3},){4,}\d{3}")
ANALYSIS = ("RL", "RS", "RP2")  # families computed from a spec: none may appear on nonsense


def lint_text(text: str, fmt: str = "json", **kw):
    data, pos = parse_text(text, fmt)
    return lint_config(load_mapping(data, pos, path=f"c.{fmt}", fmt=fmt, **kw))


def lint(data: dict, **kw):
    text = json.dumps(data, indent=1)
    return text, lint_text(text, **kw)


def line_of(text: str, key: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if f'"{key}"' in line)


def assert_not_analysed(result) -> None:
    codes = [f.code for f in result.findings]
    assert not [c for c in codes if c.startswith(ANALYSIS)], codes
    assert all(a.spec is None and a.bound is None for a in result.layers)
    assert result.setup()["bound"] is None
    for f in result.findings:
        assert not LONG_NUMBER.search(f.message + " " + (f.fix or "")), f.message


# -- 1. lengths ---------------------------------------------------------------------------
@pytest.mark.parametrize("value,shown", [
    (1e30, "1e30"),  # transformers' VERY_LARGE_INTEGER, as a float
    (10**30, "1e30"),  # the same as a JSON integer
    (2**53 + 1, "9.0072e15"),  # 9,007,199,254,740,993: not even a float64
    (1e308, "1e308"),
    (INT32_MAX + 1, f"{INT32_MAX + 1:,}"),  # first length past the limit: 2,147,483,648
    (4096.5, "4096.5"),  # not a whole number
])
def test_nonsense_max_position_embeddings_is_rv013_and_nothing_else(value, shown):
    text, r = lint({**BASE, "max_position_embeddings": value, "torch_dtype": "float16"})
    # RV022 (the other transformers refuses it): 5.23.0's LlamaConfig declares the field int, so a float is
    # refused there (tests/test_severity_parity.py), an int of any size is taken by both
    found = [f for f in r.findings if f.code != "RV022"]
    assert [(f.code, f.line) for f in found] == [("RV013", line_of(text, "max_position_embeddings"))]
    assert shown in found[0].message
    refused_by_5 = isinstance(value, float)
    assert (found[0].severity == "error") == (refused_by_5 and semantics_version() == "5.23.0")
    assert ("RV022" in [f.code for f in r.findings]) == (refused_by_5 and semantics_version() == "4.57.1")
    assert_not_analysed(r)  # no RL101/RL103 on the nonsense target, no RP202 fp16 overflow count


def test_largest_int32_length_is_still_a_length():
    text, r = lint({**BASE, "max_position_embeddings": INT32_MAX}, train=8192)
    codes = [f.code for f in r.findings]
    assert "RV013" not in codes and r.layers[0].length == INT32_MAX
    assert codes == ["RL101"]  # analysed: 2^31 - 1 tokens is far beyond the bound of base 5e5 at 8,192


@pytest.mark.parametrize("patch,key", [
    ({"model_type": "mistral", "sliding_window": 1e30}, "sliding_window"),  # llama does not read the key (RV024)
    ({"max_position_embeddings": 32768, "rope_scaling": {"rope_type": "yarn", "factor": 4.0,
                                                          "original_max_position_embeddings": 1e30}},
     "original_max_position_embeddings"),
])
def test_nonsense_lengths_elsewhere(patch, key):
    text, r = lint({**BASE, **patch})
    f = next(f for f in r.findings if f.code == "RV013")
    assert f.line == line_of(text, key) and "1e30" in f.message
    assert_not_analysed(r)


def test_nonsense_training_length_in_yaml():
    text = ("model:\n  seq_length: 1.0e+30\n  hidden_size: 4096\n  num_attention_heads: 32\n"
            "  position_embedding_type: rope\n  rotary_base: 10000\n")
    r = lint_text(text, "yaml")
    assert [(f.code, f.line, f.column) for f in r.findings] == [("RV013", 2, 3)]
    assert_not_analysed(r)


def test_cli_length_beyond_limit_is_bad_input(tmp_path, capsys):
    p = tmp_path / "config.json"
    p.write_text(json.dumps(BASE))
    assert main(["lint", str(p), "--target", str(INT32_MAX + 1)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1
    assert err.startswith("ropelaw: error: --target 2,147,483,648 is beyond the longest context")
    assert main(["lint", str(p), "--target", str(INT32_MAX), "--format", "json"]) == 1  # RL101, not bad input


def test_cli_text_never_says_ok_on_nonsense(tmp_path, capsys):
    p = tmp_path / "config.json"
    p.write_text(json.dumps({**BASE, "max_position_embeddings": 1e30}))
    assert main(["lint", str(p)]) == 1
    out = capsys.readouterr().out
    assert ": ok (" not in out and "RV013 invalid-length max_position_embeddings = 1e30 is beyond" in out
    assert main(["lint", str(p), "--format", "json"]) == 1
    doc = json.loads(capsys.readouterr().out, parse_constant=lambda c: pytest.fail(f"non-JSON {c}"))
    assert doc["configs"][0]["bound"] is None and doc["configs"][0]["layers"][0]["spec"] is None


# -- 2. scaling factors -------------------------------------------------------------------
L64 = [1.0] * 64  # LongRoPE lists for d = 128 (4096 / 32)


@pytest.mark.parametrize("scaling", [
    {"rope_type": "yarn", "factor": 1e308, "original_max_position_embeddings": 4096},
    {"rope_type": "yarn", "factor": 1e308},  # no original: the training length is max_position_embeddings
    {"rope_type": "linear", "factor": 1e308},
    {"rope_type": "dynamic", "factor": 1e308},
    {"rope_type": "ntk", "factor": 1e308},
    {"rope_type": "llama3", "factor": 1e308, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
     "original_max_position_embeddings": 8192},
    {"rope_type": "longrope", "factor": 1e308, "short_factor": L64, "long_factor": L64,
     "original_max_position_embeddings": 4096},
    {"rope_type": "yarn", "factor": 1e30, "original_max_position_embeddings": 4096},
])
def test_absurd_factor_is_rv017_not_ok(scaling):
    text, r = lint({**BASE, "max_position_embeddings": 32768, "rope_scaling": scaling})
    # RV019 (info): transformers 4.57.1's LongRoPE does not read an original length inside rope_scaling;
    # RV021: transformers has no rope_type "ntk" (ropelaw's own name: KeyError at model load)
    assert ("RV021" in [f.code for f in r.findings]) == (scaling["rope_type"] == "ntk")
    found = [f for f in r.findings if f.code not in ("RV019", "RV021")]
    assert [(f.code, f.line) for f in found] == [("RV017", line_of(text, "factor"))]
    assert "is beyond any real scaling factor (> 2^20 = 1,048,576" in found[0].message
    assert_not_analysed(r)


def test_why_2_20_excludes_underflow():
    # the documented reason: with factor 1e308 YaRN's slowest pair (base 1e4, d 128) is theta/s,
    # below the smallest normal float64: the pair would stop rotating and the bound read "unbounded"
    slowest = mpmath.mpf(10000) ** (-mpmath.mpf(126) / 128) / mpmath.mpf("1e308")
    assert slowest < TINY and INT32_MAX + 1 == 2**20 * 2048


@pytest.mark.parametrize("factor,original,flagged", [
    (2**20, 8, False),  # at the factor limit, designed context 2^23: fine
    (2**20 + 1, 8, True),  # just above the factor limit
    (2**19, 4096, True),  # 2^19 x 4096 = 2^31 > INT32_MAX: designs a context beyond any length
    (2**19 - 1, 4096, False),  # 2,147,479,552 <= INT32_MAX
])
def test_factor_limits_are_exact(factor, original, flagged):
    designed = factor * original  # exact integers
    assert (factor > 2**20 or designed > INT32_MAX) == flagged
    scaling = {"rope_type": "yarn", "factor": factor, "original_max_position_embeddings": original}
    max_pos = designed if designed <= INT32_MAX else 32768
    text, r = lint({**BASE, "max_position_embeddings": max_pos, "rope_scaling": scaling})
    codes = [f.code for f in r.findings]
    assert ("RV017" in codes) == flagged, [(f.code, f.message) for f in r.findings]
    if flagged:
        assert_not_analysed(r)
        assert "RV010" not in codes  # the factor is the problem, not its ratio to max_position_embeddings
    if (factor, original) == (2**19, 4096):
        f = next(f for f in r.findings if f.code == "RV017")
        assert "x original context 4,096" in f.message and f"= {2**31:,} tokens" in f.message


@pytest.mark.parametrize("entry,why", [
    (0.1, "above pi"),  # 1 / 0.1 = 10 rad/token > pi for pair 0 (base^0 = 1)
    (1e-300, "above pi"),  # 1e300 rad/token; used to take minutes in the Men et al. sums
    (1e308, "not a finite number >= 2.23e-308"),  # 1 / 1e308 = 1e-308 < smallest normal float64
])
def test_longrope_factor_entries_that_break_frequencies(entry, why):
    assert (1 / entry > np.pi) if why == "above pi" else (1 / entry < TINY)
    scaling = {"type": "longrope", "short_factor": L64, "long_factor": [entry] + [1.0] * 63}
    # Phi-3's layout (original length at the top level): transformers 4.57.1 and 5.23.0 read it alike
    text, r = lint({**BASE, "max_position_embeddings": 131072, "original_max_position_embeddings": 4096,
                    "rope_scaling": scaling})
    assert [(f.code, f.line) for f in r.findings] == [("RV016", line_of(text, "rope_scaling"))]
    assert "inverse frequency of pair 0" in r.findings[0].message and why in r.findings[0].message
    assert_not_analysed(r)


# -- 3. huge numbers print compactly ------------------------------------------------------
@pytest.mark.parametrize("n,text", [
    (10**30, "1e30"), (1e30, "1e30"), (1e308, "1e308"), (10**400, "1e400"), (-(10**400), "-1e400"),
    (123456789 * 10**400, "1.23457e408"), (2**53 + 1, "9.0072e15"), (10**12, "1e12"),
    (10**12 - 1, "999,999,999,999"), (32768, "32,768"), (4096.5, "4,096.5"), (float("inf"), "inf"),
])
def test_fmt_count(n, text):
    assert fmt_count(n) == text


def test_head_dim_1e308_message_is_compact():
    text, r = lint({**BASE, "head_dim": 1e308})
    assert [(f.code, f.line) for f in r.findings] == [("RV017", line_of(text, "head_dim"))]
    assert "rotary dimension 1e308 from head_dim is beyond any real model (> 2^16 = 65,536)" in r.findings[0].message
    assert_not_analysed(r)


SWEEP_BASES = [
    BASE,
    {**BASE, "max_position_embeddings": 32768, "rope_scaling": {"rope_type": "yarn", "factor": 4.0,
                                                                "original_max_position_embeddings": 8192}},
    {"model_type": "phi3", "hidden_size": 3072, "num_attention_heads": 32, "rope_theta": 1e4,
     "max_position_embeddings": 131072, "original_max_position_embeddings": 4096,
     "rope_scaling": {"type": "longrope", "short_factor": [1.0] * 48, "long_factor": [2.0] * 48}},
    {"model_type": "gemma2", "head_dim": 256, "num_attention_heads": 8, "hidden_size": 2048,
     "rope_theta": 1e4, "max_position_embeddings": 8192, "sliding_window": 4096, "torch_dtype": "float16"},
    {"model_type": "gpt_neox", "hidden_size": 4096, "num_attention_heads": 32, "rotary_pct": 0.25,
     "rotary_emb_base": 1e4, "max_position_embeddings": 2048, "rope_scaling": 7},
]
HUGE = [1e308, -1e308, 10**30, 10**400, -(10**400), 2**53 + 1]
LIMITED = {"max_position_embeddings", "original_max_position_embeddings", "sliding_window", "factor", "head_dim"}


def _leaves(d, pre=()):
    for k, v in d.items():
        if isinstance(v, dict):
            yield from _leaves(v, pre + (k,))
        elif isinstance(v, list):
            yield pre + (k, 0)
        elif not isinstance(v, str):
            yield pre + (k,)


def _patched(d, path, x):
    d = json.loads(json.dumps(d))
    c = d
    for k in path[:-1]:
        c = c[k]
    c[path[-1]] = x
    return d


def test_huge_values_anywhere_never_print_long_numbers_or_pass_a_limited_key():
    """Every numeric leaf of five configs set to +-1e308, +-10**400, 10**30, 2**53 + 1 (174 configs):
    no crash, no message with 13+ digits, and a limited key (lengths, factor, head_dim) never passes."""
    tried = 0
    for base in SWEEP_BASES:
        for path in _leaves(base):
            for x in HUGE:
                text, r = lint(_patched(base, path, x))
                tried += 1
                for f in r.findings:
                    assert not LONG_NUMBER.search(f.message + " " + (f.fix or "")), (path, x, f.message)
                if path[-1] in LIMITED and x > 0:  # (a negative window is a "no window" convention)
                    # an error where transformers refuses the value, a warning where it runs it: never a pass
                    assert any(f.severity in ("error", "warning") and f.code.startswith(("RV", "RE"))
                               for f in r.findings), (path, x, [f.code for f in r.findings])
    assert tried == 6 * sum(len(list(_leaves(b))) for b in SWEEP_BASES)


# -- 4. a directory with nothing to lint is bad input -------------------------------------
def test_empty_directory_is_bad_input(tmp_path, capsys):
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["lint", str(empty)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err == f"ropelaw: error: no config files found in {empty}\n"


def test_directory_without_config_files_is_bad_input(tmp_path, capsys):
    d = tmp_path / "docs"
    (d / ".hidden").mkdir(parents=True)
    (d / "README.md").write_text("# configs\n")
    (d / "model.safetensors").write_bytes(b"\x00" * 16)
    (d / ".hidden" / "config.json").write_text(json.dumps(BASE))  # hidden dirs are not scanned
    assert main(["lint", str(d)]) == 2
    assert capsys.readouterr().err == f"ropelaw: error: no config files found in {d}\n"


def test_an_empty_directory_among_good_paths_is_still_bad_input(tmp_path, capsys):
    good = tmp_path / "good"
    good.mkdir()
    (good / "config.json").write_text(json.dumps(BASE))
    empty = tmp_path / "typo"
    empty.mkdir()
    assert main(["lint", str(good)]) == 0
    capsys.readouterr()
    assert main(["lint", str(good), str(empty)]) == 2
    assert capsys.readouterr().err == f"ropelaw: error: no config files found in {empty}\n"


def test_directory_of_configs_without_rope_settings_is_skipped_not_an_error(tmp_path, capsys):
    # config files were found (a tokenizer config): they are skipped and counted, exit 0
    d = tmp_path / "tok"
    d.mkdir()
    (d / "tokenizer_config.json").write_text(json.dumps({"model_max_length": 10**30}))
    assert main(["lint", str(d)]) == 0
    assert capsys.readouterr().out == "No findings: no config analysed (1 file without RoPE settings).\n"
    assert main(["lint", "--verbose", str(d)]) == 0
    assert "Skipped 1 file without RoPE settings." in capsys.readouterr().out
