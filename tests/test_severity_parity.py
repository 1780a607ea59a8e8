"""Severity parity with the runtime: an RV error means transformers refuses or crashes on the config.

Each case is a small config.json (written here), the RV rule it triggers, and what transformers 4.57.1 and
5.23.0 do with it: "raises" (the config class, the rotary, building a one-layer model or its forward
raises), "warns" (a logged warning matching the case's pattern, then it runs) or "runs". Two tests:

- ``test_transformers_does_what_the_table_says`` runs the installed transformers on every case
  (``tests/hf_runtime.py``): CI's first step checks the 4.57.1 column, its second step (``-m hf`` under
  5.23.0) the 5.23.0 column. The table is what transformers did, not what ropelaw says.
- ``test_ropelaw_severity_follows_the_runtime`` lints every case under both semantics
  (``ROPELAW_HF_SEMANTICS``; no transformers needed): the case's rule is reported; some RV finding is an
  error exactly when that version raises; where only the other version raises, RV022 says so.

The table of docs/lint/huggingface.md ("Severity follows the runtime") is this one.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import pytest

from ropelaw.lint.check import lint_config
from ropelaw.lint.dialects import hf
from ropelaw.lint.loader import load_mapping, parse_text

V4, V5 = hf.SEMANTICS
B = {"model_type": "llama", "hidden_size": 256, "num_attention_heads": 4, "num_key_value_heads": 4,
     "rope_theta": 5e5, "max_position_embeddings": 8192}
L3 = {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
      "original_max_position_embeddings": 2048}
P3 = {"model_type": "phi3", "hidden_size": 384, "num_attention_heads": 4, "num_key_value_heads": 4,
      "rope_theta": 10000.0, "max_position_embeddings": 131072, "original_max_position_embeddings": 4096}
LR = {"type": "longrope", "short_factor": [1.0] * 48, "long_factor": [2.0] * 48}
# Llama 4 Scout's text model (meta-llama/Llama-4-Scout-17B-16E config.json, RoPE keys as published; sizes
# shrunk): llama3 scaling with low_freq_factor = high_freq_factor = 1
SCOUT_RS = {"factor": 16.0, "high_freq_factor": 1.0, "low_freq_factor": 1.0,
            "original_max_position_embeddings": 8192, "rope_type": "llama3"}
L4T = {"hidden_size": 256, "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 128,
       "rope_theta": 500000.0, "max_position_embeddings": 10485760, "attention_chunk_size": 8192,
       "rope_scaling": SCOUT_RS, "num_hidden_layers": 4, "no_rope_layers": [1, 1, 1, 0], "intermediate_size": 64,
       "intermediate_size_mlp": 64, "num_local_experts": 2, "vocab_size": 64}
L4V = {"hidden_size": 32, "num_hidden_layers": 1, "num_attention_heads": 2, "intermediate_size": 32,
       "vision_output_dim": 32, "projector_input_dim": 32, "projector_output_dim": 32}
QVL = {"model_type": "qwen2_5_vl", "hidden_size": 256, "num_attention_heads": 4, "num_key_value_heads": 4,
       "rope_theta": 1e6, "max_position_embeddings": 128000, "vocab_size": 64, "intermediate_size": 64,
       "num_hidden_layers": 1, "vision_config": {"depth": 1, "hidden_size": 32, "out_hidden_size": 256,
                                                  "intermediate_size": 32, "num_heads": 2}}
# HunyuanOCR's flat layout (tencent/HunyuanOCR config.json: text keys at the top level; sizes shrunk)
HYOCR = {"model_type": "hunyuan_vl", "architectures": ["HunYuanVLForConditionalGeneration"], "hidden_size": 256,
         "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 128, "attention_head_dim": 128,
         "rope_theta": 10000.0, "max_position_embeddings": 32768, "num_hidden_layers": 1, "intermediate_size": 64,
         "vocab_size": 64, "rope_scaling": {"alpha": 1000.0, "beta_fast": 32, "beta_slow": 1, "factor": 1.0,
                                            "mscale": 1.0, "mscale_all_dim": 1.0, "type": "xdrope",
                                            "xdrope_section": [16, 16, 16, 16]},
         "vision_config": {"hidden_size": 32, "num_hidden_layers": 1, "num_attention_heads": 2,
                           "intermediate_size": 32, "out_hidden_size": 256}}


def rs(**k):
    return {"rope_scaling": k}


@dataclass
class Case:
    rule: str
    name: str
    config: dict
    v4: str  # what transformers 4.57.1 does: raises | warns | runs
    v5: str  # what transformers 5.23.0 does
    warn: str | None = None  # the warning a "warns" case logs (regex)
    far: int | None = None  # also run the forward at this position (past a switch point)
    codes: dict | None = None  # {version: codes ropelaw must report} (default: the rule; RV021 where refused)

    def runtime(self, version: str) -> str:
        return self.v4 if version == V4 else self.v5

    def expected_codes(self, version: str) -> tuple:
        if self.codes is not None:
            return self.codes[version]
        if self.rule == "RV021":  # the other version's refusal is RV022 (checked separately)
            return ("RV021",) if self.runtime(version) == "raises" else ()
        return (self.rule,)


def llama(rule, name, patch, v4, v5, warn=None, **kw) -> Case:
    return Case(rule, name, {**B, **patch}, v4, v5, warn, **kw)


FACTOR = r"factor field must be a float"
CASES = [
    # RV001 wrong type: a string in arithmetic crashes; a bool is 0 / 1 to arithmetic (5.23.0's strict int
    # fields refuse it); a length only plain RoPE never reads runs on 4.57.1
    llama("RV001", "rope_theta string", {"rope_theta": "1e6"}, "raises", "raises"),
    llama("RV001", "num_attention_heads true", {"num_attention_heads": True, "num_key_value_heads": 1},
          "runs", "raises"),
    llama("RV001", "max_position_embeddings string", {"max_position_embeddings": "8192"}, "runs", "raises"),
    llama("RV001", "max_position_embeddings string, dynamic", {"max_position_embeddings": "8192",
                                                               **rs(rope_type="dynamic", factor=2.0)},
          "raises", "raises"),
    llama("RV001", "factor string", rs(rope_type="linear", factor="4"), "raises", "raises"),
    llama("RV001", "truncate string", rs(rope_type="yarn", factor=4.0, original_max_position_embeddings=2048,
                                         truncate="false"), "runs", "runs"),
    llama("RV001", "head_dim string", {"head_dim": "64"}, "raises", "raises"),
    llama("RV001", "rope_scaling a number", {"rope_scaling": 3}, "raises", "raises"),
    llama("RV001", "rope_type a number", rs(rope_type=3, factor=2.0), "raises", "raises"),
    Case("RV001", "phi3 short_factor string", {**P3, **rs(**{**LR, "short_factor": "x"})}, "raises", "raises"),
    # RV002 non-finite: NaN / inf frequencies run; 5.23.0 refuses inf in an int field
    llama("RV002", "rope_theta NaN", {"rope_theta": float("nan")}, "runs", "runs"),
    llama("RV002", "rope_theta inf", {"rope_theta": float("inf")}, "runs", "runs"),
    llama("RV002", "max_position_embeddings inf", {"max_position_embeddings": float("inf")}, "runs", "raises"),
    llama("RV002", "linear factor inf", rs(rope_type="linear", factor=float("inf")), "runs", "runs"),
    # RV003 odd rotary dims
    llama("RV003", "odd head_dim", {"hidden_size": 252}, "raises", "raises"),
    Case("RV003", "phi odd partial", {**B, "model_type": "phi", "partial_rotary_factor": 0.3}, "raises", "raises"),
    # GPT-NeoX's odd partial count under a scheme that uses dim itself (yarn's ramp of dim // 2 entries against
    # ceil(dim / 2) frequencies fails to build; dynamic runs): RV003, not analysed (tests/test_odd_rotary.py)
    Case("RV003", "gpt_neox odd partial, yarn", {**B, "model_type": "gpt_neox", "rotary_pct": 0.3,
                                                 **rs(rope_type="yarn", factor=4.0,
                                                      original_max_position_embeddings=2048)}, "raises", "raises"),
    Case("RV003", "gpt_neox odd partial, dynamic", {**B, "model_type": "gpt_neox", "rotary_pct": 0.3,
                                                    **rs(rope_type="dynamic", factor=4.0)}, "runs", "runs"),
    Case("RV003", "gptj odd rotary_dim", {"model_type": "gptj", "n_embd": 256, "n_head": 4, "rotary_dim": 63,
                                         "n_positions": 2048}, "raises", "raises"),
    # RV004 truncation: GPT-NeoX rounds an odd int(64 * 0.3) = 19 up to 20 dims and runs (no RV003)
    Case("RV004", "gpt_neox odd partial rounds up", {**B, "model_type": "gpt_neox", "rotary_pct": 0.3},
         "runs", "runs"),
    Case("RV004", "nemotron odd partial rounds up", {**B, "model_type": "nemotron", "partial_rotary_factor": 0.55},
         "runs", "runs"),
    llama("RV004", "hidden not a multiple of heads", {"num_attention_heads": 6, "num_key_value_heads": 6},
          "runs", "raises"),
    # ... per type as measured (hf_head_split.json): GPT-NeoX's 4.57.1 config class refuses it too; with head_dim
    # given, 4.57.1's Llama runs it and 5.23.0's validate_architecture still refuses it (RV021: no RV004 then)
    Case("RV004", "gpt_neox hidden not a multiple of heads", {**B, "model_type": "gpt_neox", "num_attention_heads": 6,
                                                              "num_key_value_heads": 6}, "raises", "raises"),
    llama("RV021", "hidden not a multiple of heads, head_dim given", {"num_attention_heads": 6,
                                                                      "num_key_value_heads": 6, "head_dim": 32},
          "runs", "raises"),
    # RV005 base <= 1: the frequencies are 1, inf or NaN, and the model runs
    llama("RV005", "rope_theta 1", {"rope_theta": 1.0}, "runs", "runs"),
    llama("RV005", "rope_theta 0", {"rope_theta": 0}, "runs", "runs"),
    llama("RV005", "rope_theta -5", {"rope_theta": -5}, "runs", "runs"),
    # RV006 factor < 1: transformers warns "must be a float >= 1" and runs
    llama("RV006", "linear factor 0.5", rs(rope_type="linear", factor=0.5), "warns", "warns", FACTOR),
    llama("RV006", "yarn factor 0.5", rs(rope_type="yarn", factor=0.5, original_max_position_embeddings=8192),
          "warns", "warns", FACTOR),
    llama("RV006", "dynamic factor 0.5", rs(rope_type="dynamic", factor=0.5), "warns", "warns", FACTOR),
    # RV007 a parameter transformers requires: KeyError (5.23.0 fills llama3's original length)
    llama("RV007", "yarn without factor", {"max_position_embeddings": 16384, **rs(
        rope_type="yarn", original_max_position_embeddings=4096)}, "raises", "raises"),
    llama("RV007", "llama3 without low_freq_factor", rs(**{k: v for k, v in L3.items() if k != "low_freq_factor"}),
          "raises", "raises"),
    llama("RV007", "llama3 without original length",
          rs(**{k: v for k, v in L3.items() if k != "original_max_position_embeddings"}), "raises", "runs",
          codes={V4: ("RV007",), V5: ()}),
    llama("RV007", "longrope without long_factor", rs(rope_type="longrope", short_factor=[1.0] * 32, factor=2.0),
          "raises", "raises"),
    # RV008 a name nobody has: KeyError building the rotary
    llama("RV008", "rope_type yarn2", rs(type="yarn2", factor=4.0), "raises", "raises"),
    # RV009 unknown parameter: transformers warns "Unrecognized keys"
    llama("RV009", "linear with beta_fast", rs(rope_type="linear", factor=2.0, beta_fast=32), "warns", "warns",
          r"Unrecognized keys"),
    # RV010 YaRN factor vs lengths: 4.57.1 warns, 5.23.0 runs
    llama("RV010", "yarn factor vs max_position_embeddings", rs(rope_type="yarn", factor=4.0,
                                                                 original_max_position_embeddings=8192),
          "warns", "runs", r"does not match the ratio"),
    # RV011 llama3 bands: order warns, a zero factor divides by zero
    llama("RV011", "low above high", rs(**{**L3, "low_freq_factor": 4.0, "high_freq_factor": 1.0}),
          "warns", "warns", r"high_freq_factor field must be greater than low_freq_factor"),
    Case("RV011", "Llama 4 Scout: low = high = 1", {"model_type": "llama4", "text_config": {
        "model_type": "llama4_text", **L4T}, "vision_config": L4V}, "runs", "warns",  # 4.57.1 validates nothing here
         r"high_freq_factor field must be greater than low_freq_factor"),
    llama("RV011", "low_freq_factor 0", rs(**{**L3, "low_freq_factor": 0.0}), "raises", "raises"),
    llama("RV011", "low_freq_factor negative", rs(**{**L3, "low_freq_factor": -1.0}), "runs", "runs"),
    # RV012 LongRoPE factor lists
    Case("RV012", "phi3 short_factor of 24", {**P3, **rs(**{**LR, "short_factor": [1.0] * 24})},
         "raises", "raises"),
    llama("RV012", "llama longrope short_factor of 24", {"max_position_embeddings": 16384, **rs(
        rope_type="longrope", factor=4.0, short_factor=[1.0] * 24, long_factor=[1.0] * 32,
        original_max_position_embeddings=4096)}, "raises", "raises"),
    llama("RV012", "llama longrope long_factor of 24", {"max_position_embeddings": 16384, **rs(
        rope_type="longrope", factor=4.0, short_factor=[1.0] * 32, long_factor=[1.0] * 24,
        original_max_position_embeddings=4096)}, "raises", "raises", far=20000),  # past 16,384: the long factors
    Case("RV012", "phi3 short_factor with a 0", {**P3, **rs(**{**LR, "short_factor": [1.0] * 47 + [0.0]})},
         "runs", "runs"),
    # RV013 lengths: 5.23.0's int fields refuse floats; 4.57.1 runs them, but a float window breaks its mask
    llama("RV013", "max_position_embeddings 4096.5", {"max_position_embeddings": 4096.5}, "runs", "raises"),
    llama("RV013", "max_position_embeddings 4", {"max_position_embeddings": 4}, "runs", "runs"),
    llama("RV013", "max_position_embeddings 1e30", {"max_position_embeddings": 1e30}, "runs", "raises"),
    llama("RV013", "original length 1024.5 in rope_scaling", {"max_position_embeddings": 4096, **rs(
        rope_type="yarn", factor=4.0, original_max_position_embeddings=1024.5)}, "runs", "runs"),
    Case("RV013", "mistral sliding_window 4096.5", {**B, "model_type": "mistral", "sliding_window": 4096.5},
         "raises", "raises"),
    # RV014 original above max: 4.57.1 and 5.23.0 warn about the factor
    llama("RV014", "original above max_position_embeddings", {"max_position_embeddings": 4096, **rs(
        rope_type="yarn", factor=4.0, original_max_position_embeddings=131072)}, "warns", "warns",
          r"does not match the ratio"),
    # RV015 YaRN betas: inverted warns; negative is a math domain error
    llama("RV015", "beta_fast below beta_slow", rs(rope_type="yarn", factor=1.0, beta_fast=1.0, beta_slow=32.0,
                                                   original_max_position_embeddings=8192), "warns", "warns",
          r"beta_fast field must be greater than beta_slow"),
    llama("RV015", "negative beta_slow", rs(rope_type="yarn", factor=2.0, beta_fast=32.0, beta_slow=-1.0,
                                            original_max_position_embeddings=4096), "raises", "raises"),
    # RV016 ropelaw's own scheme with bad parameters (transformers has no such rope_type anyway)
    llama("RV016", "leaky_rerope without k", rs(rope_type="leaky_rerope", window=512, k=0.5), "raises", "raises"),
    # RV017 a factor beyond any model: transformers computes with it
    llama("RV017", "yarn factor 1e308", rs(rope_type="yarn", factor=1e308, original_max_position_embeddings=8192),
          "runs", "runs"),
    # RV019 a 0 beta is the default (`get("beta_slow") or 1`): runs
    llama("RV019", "yarn beta_slow 0", rs(rope_type="yarn", factor=2.0, beta_fast=32.0, beta_slow=0,
                                          original_max_position_embeddings=4096), "runs", "runs"),
    # RV021 / RV022: refusals no value rule names
    Case("RV021", "qwen2_5_vl rope_type mrope", {**QVL, **rs(rope_type="mrope", mrope_section=[8, 12, 12])},
         "raises", "runs"),
    Case("RV021", "qwen2_5_vl type mrope", {**QVL, **rs(type="mrope", mrope_section=[8, 12, 12])}, "runs", "runs"),
    llama("RV021", "llama rope_type mrope", rs(rope_type="mrope", mrope_section=[8, 12, 12]), "raises", "raises"),
    llama("RV021", "llama rope_type ntk", rs(rope_type="ntk", factor=2.0), "raises", "raises"),
    llama("RV021", "max_position_embeddings 8192.0", {"max_position_embeddings": 8192.0}, "runs", "raises"),
    llama("RV021", "explicit head_dim, hidden not a multiple of heads",
          {"num_attention_heads": 6, "num_key_value_heads": 6, "head_dim": 64}, "runs", "raises"),
    Case("RV021", "HunyuanOCR xdrope (flat file)", HYOCR, "raises", "runs"),
    Case("RV021", "flattened Llama 4 (text keys at the top level)", {"model_type": "llama4", **L4T,
                                                                      "vision_config": L4V},
         "runs", "raises", codes={V4: ("RV019",), V5: ("RV021",)}),
    Case("RV021", "olmo2 rope_scaling with rope_type", {**B, "model_type": "olmo2", **rs(
        rope_type="linear", factor=2.0)}, "raises", "runs"),
    Case("RV021", "olmo2 integer factor", {**B, "model_type": "olmo2", **rs(type="linear", factor=2)},
         "raises", "runs"),
    Case("RV021", "phi3 longrope with a factor key", {**P3, **rs(**{**LR, "factor": 32.0})}, "raises", "runs"),
    Case("RV021", "phi3 type su (first Phi-3 128k release)", {**P3, **rs(**{**LR, "type": "su"})},
         "runs", "raises"),
    llama("RV021", "a text_config under a text model's type", {"text_config": {
        "hidden_size": 256, "num_attention_heads": 4, "rope_theta": 1e6}}, "raises", "raises"),
]
IDS = [f"{c.rule} {c.name}" for c in CASES]


def lint(config: dict):
    text = json.dumps(config, indent=1)
    data, pos = parse_text(text, "json")
    return lint_config(load_mapping(data, pos, path="config.json"))


@pytest.mark.parametrize("case", CASES, ids=IDS)
@pytest.mark.parametrize("semantics", hf.SEMANTICS)
def test_ropelaw_severity_follows_the_runtime(case, semantics, monkeypatch):
    monkeypatch.setenv("ROPELAW_HF_SEMANTICS", semantics)
    found = lint(case.config).findings
    codes = [f.code for f in found]
    for code in case.expected_codes(semantics):
        assert code in codes, (code, [(f.code, f.severity, f.message) for f in found])
    rv_errors = [f for f in found if f.code.startswith("RV") and f.severity == "error"]
    runs_here = case.runtime(semantics) != "raises"
    assert (not rv_errors) == runs_here, (semantics, case.runtime(semantics),
                                          [(f.code, f.severity, f.message) for f in found])
    other = hf.other_version(semantics)
    refused_there = case.runtime(other) == "raises"
    assert ("RV022" in codes) == (runs_here and refused_there), (semantics, codes)


@pytest.mark.hf
@pytest.mark.torch
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_transformers_does_what_the_table_says(case):
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    import hf_runtime as hr

    installed = V4 if hr.transformers_version().startswith("4.") else V5
    o = hr.run_config(case.config, far=case.far)
    got = o.behaviour(case.warn) if case.warn else ("raises" if o.raised else "runs")
    assert got == case.runtime(installed), (installed, o.stage, o.error[:300], o.warnings[:5])


# -- the table docs/lint/huggingface.md shows ("Severity follows the runtime"), rendered from CASES and ropelaw itself
BEGIN = "<!-- severity-parity: generated by `python tests/test_severity_parity.py` from its CASES; do not edit -->"
END = "<!-- /severity-parity -->"


def ropelaw_says(case: Case, semantics: str) -> str:
    """What ropelaw reports for ``case`` under ``semantics``: the case's codes with their severities."""
    import os

    saved = os.environ.get("ROPELAW_HF_SEMANTICS")
    os.environ["ROPELAW_HF_SEMANTICS"] = semantics
    try:
        found = [f for f in lint(case.config).findings if f.code.startswith("RV")]
    finally:
        if saved is None:
            del os.environ["ROPELAW_HF_SEMANTICS"]
        else:
            os.environ["ROPELAW_HF_SEMANTICS"] = saved
    shown = sorted({(f.code, f.severity) for f in found if f.code in (case.rule, "RV021", "RV022", "RV019", "RV007")})
    return ", ".join(f"{code} {sev}" for code, sev in shown) or "-"


def parity_table() -> str:
    rows = ["| rule | case | transformers 4.57.1 | transformers 5.23.0 | ropelaw (4.57.1 semantics) | "
            "ropelaw (5.23.0 semantics) |", "|---|---|---|---|---|---|"]
    for c in CASES:
        rows.append(f"| {c.rule} | {c.name} | {c.v4} | {c.v5} | {ropelaw_says(c, V4)} | {ropelaw_says(c, V5)} |")
    return "\n".join(rows)


PAGE = ("docs", "lint", "huggingface.md")  # the documentation page that shows the table


def test_docs_table_is_the_case_table():
    from pathlib import Path

    text = Path(__file__).resolve().parents[1].joinpath(*PAGE).read_text(encoding="utf-8")
    assert BEGIN in text and END in text, "docs/lint/huggingface.md lacks the severity-parity table markers"
    shown = text.split(BEGIN, 1)[1].split(END, 1)[0].strip()
    assert shown == parity_table(), "regenerate: python tests/test_severity_parity.py"


if __name__ == "__main__":  # rewrite the table of docs/lint/huggingface.md
    from pathlib import Path

    readme = Path(__file__).resolve().parents[1].joinpath(*PAGE)
    text = readme.read_text(encoding="utf-8")
    head, rest = text.split(BEGIN, 1)
    tail = rest.split(END, 1)[1]
    readme.write_text(f"{head}{BEGIN}\n{parity_table()}\n{END}{tail}", encoding="utf-8")


@pytest.mark.hf
def test_types_table_is_the_installed_transformers():
    """``ropelaw/data/hf_types.json`` (known model types, strict int fields, the heads check) is what the installed
    transformers' config classes say (regenerate: python scripts/hf_types.py), and it reads back as the hf dialect
    uses it (``hf.types_table``)."""
    pytest.importorskip("transformers")
    import pathlib
    import sys

    import transformers

    from ropelaw import data
    from ropelaw.lint.dialects.hf import types_table

    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "scripts"))
    import hf_types as gen

    installed = transformers.__version__
    assert installed in data.read("hf_types")["versions"], "regenerate: python scripts/hf_types.py"
    now, table = gen.tables(), types_table(installed)
    stored = dict(data.read("hf_types")["versions"][installed])
    head_dim = stored.pop("head_dim_absent")  # tiny models: a sample derived again below
    assert {k: v for k, v in gen.version_json(now).items() if k != "head_dim_absent"} == stored
    assert table["head_dim_absent"] == head_dim
    assert set(now["model_types"]) == table["model_types"]
    assert {k: set(v) for k, v in now["strict_int"].items()} == {k: set(v) for k, v in table["strict_int"].items()}
    assert set(now["heads_divide_hidden"]) == table["heads_divide_hidden"]
    assert set(now["takes_text_config"]) == table["takes_text_config"]
    assert now["text_types"] == table["text_types"]


HEAD_DIM_SAMPLE = ("gpt_oss", "qwen3", "deepseek_v2", "hunyuan_v1_dense", "ministral", "mistral", "llama")


@pytest.mark.hf
@pytest.mark.torch
def test_head_dim_absent_sample_is_the_installed_transformers():
    """``hf_types.json``'s ``head_dim_absent`` (scripts/hf_types.py): a sample of types measured again on the installed
    transformers (config classes, and tiny models for a fixed default or a None): each type's entry is what the
    generator derives now (absent where it derives nothing), and the sample holds each kind of entry."""
    pytest.importorskip("torch")
    import pathlib
    import sys

    import transformers

    from ropelaw import data

    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "scripts"))
    import hf_types as gen

    stored = data.read("hf_types")["versions"][transformers.__version__]["head_dim_absent"]
    got = {mt: gen.head_dim_absent(mt) for mt in HEAD_DIM_SAMPLE}
    assert got == {mt: stored.get(mt) for mt in HEAD_DIM_SAMPLE}
    assert {next(iter(v)) for v in got.values() if v} == {"fixed", "from", "refused"}
