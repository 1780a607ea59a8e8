"""An odd rotary count rounded up (ropelaw/lint/table_rows.py row ``odd_dims_round_up``: GPT-NeoX, Nemotron, Phi-3,
and the GLM family: glm, glm4, glm4_moe, glm4v_text, glm4v_moe_text; 5.23.0's glm_image_text, glm_ocr_text and the
composites GLM-4.6V / GLMGA (text model glm4v_text)). Measured and left out of the row: 5.23.0's glm4_moe_lite and
glm_moe_dsa (an odd qk_rope_head_dim is refused by validate_rope when the config loads), glm5_next_text (NoPE).

transformers' RotaryEmbedding of these models makes ceil(r / 2) frequencies base^(-2k / r) with r = int(head_dim x
partial factor) odd (``arange(0, r, 2) / r``) and rotates r + 1 dims. ropelaw reads r + 1 dims at the effective base
base^((r + 1) / r), exact for the schemes whose frequencies are a function of the unscaled ones (default, linear,
llama3, longrope); dynamic and yarn use dim itself and are not analysed (RV003).

- ``test_reading_is_the_formula`` (no transformers): every frequency ropelaw reads equals base^(-2k / r) / factor,
  computed here from the formula of modeling_rope_utils (4.57.1 and 5.23.0).
- ``test_reading_is_the_runtime`` (``-m hf``): equals the installed transformers' inv_freq (relative 1e-6: float32).
- ``test_changed_real_glm4_moe_file_as_transformers_runs_it`` (``-m hf``): a real GLM-4.5 file made odd, every
  layer's forward cos/sin against ropelaw's reading.
"""

from __future__ import annotations

import json
import math

import pytest

from ropelaw.lint.check import lint_config
from ropelaw.lint.dialects import hf
from ropelaw.lint.loader import load_mapping, parse_text
from ropelaw.numfmt import short as fmt_short
import hf_compare  # noqa: E402

V4, V5 = hf.SEMANTICS
BASE = 10000.0
R = 19  # int(76 * 0.25): head_dim 304 / 4 = 76
HEAD = {"hidden_size": 304, "num_attention_heads": 4, "num_key_value_heads": 4, "max_position_embeddings": 8192,
        "rope_theta": BASE}
TYPES = {"gpt_neox": {**HEAD, "model_type": "gpt_neox", "rotary_pct": 0.25, "rotary_emb_base": BASE},
         "nemotron": {**HEAD, "model_type": "nemotron", "partial_rotary_factor": 0.25},
         "phi3": {**HEAD, "model_type": "phi3", "partial_rotary_factor": 0.25}}
# the GLM family (head_dim written: GLM and GLM-4 default it to 128); GLM-4V's text models rotate by mrope_section
# (its 3 sections sum to the ceil(19 / 2) = 10 frequencies; text positions are equal in all three, so the sections
# pick the same table)
GLM_TYPES = ("glm", "glm4", "glm4_moe", "glm4v_text", "glm4v_moe_text")
# 5.23.0's newer GLM text models (multimodal rotary by mrope_section as GLM-4V; not types of 4.57.1)
GLM5_TYPES = ("glm_image_text", "glm_ocr_text")
MROPE = {"mrope_section": [2, 4, 4]}
TYPES.update({mt: {**HEAD, "model_type": mt, "head_dim": 76, "partial_rotary_factor": 0.25}
              for mt in GLM_TYPES + GLM5_TYPES})
LINEAR = {"rope_type": "linear", "factor": 4.0}
LLAMA3 = {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
          "original_max_position_embeddings": 2048}
# one list for short and long (the rotary's inv_freq at build is the short one; ropelaw reads at the target)
PAIRS = [1.0 + 0.25 * k for k in range((R + 1) // 2)]
LONGROPE = {"rope_type": "longrope", "short_factor": PAIRS, "long_factor": PAIRS, "factor": 4.0,
            "original_max_position_embeddings": 2048}
DYNAMIC = {"rope_type": "dynamic", "factor": 4.0}
YARN = {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 2048}


def config(mt: str, scaling: dict | None) -> dict:
    if mt.startswith("glm4v") or mt in GLM5_TYPES:  # their text attention reads rope_scaling["mrope_section"]
        scaling = {"rope_type": "default", **(scaling or {}), **MROPE}
    return {**TYPES[mt], **({"rope_scaling": scaling} if scaling else {})}


def lint(cfg: dict, semantics: str, monkeypatch):
    monkeypatch.setenv("ROPELAW_HF_SEMANTICS", semantics)
    data, pos = parse_text(json.dumps(cfg, indent=1), "json")
    return lint_config(load_mapping(data, pos, path="config.json"))


def read_inv_freq(result) -> list[float]:
    """ropelaw's frequencies of the (one) analysed layer group."""
    [a] = [a for a in result.layers if a.spec is not None]
    return [float(t) for t in a.scheme_result.inv_freq]


def close(ours, theirs, rel: float) -> bool:
    return len(ours) == len(theirs) and all(math.isclose(a, b, rel_tol=rel) for a, b in zip(ours, theirs, strict=True))


def semantics_of(mt: str) -> tuple[str, ...]:
    """The transformers versions that have type ``mt``."""
    return (V5,) if mt in GLM5_TYPES else hf.SEMANTICS


@pytest.mark.parametrize("mt,semantics", [(mt, s) for mt in sorted(TYPES) for s in semantics_of(mt)])
def test_reading_is_the_formula(mt, semantics, monkeypatch):
    """Plain RoPE: base^(-2k/19), k = 0..9 (modeling_rope_utils' inv_freq; 10 frequencies, 20 dims)."""
    res = lint(config(mt, None), semantics, monkeypatch)
    want = [BASE ** (-2 * k / R) for k in range((R + 1) // 2)]
    got = read_inv_freq(res)
    assert close(got, want, 1e-12), (got, want)
    assert got[9] < 1.7e-4  # the 10th pair: 1.62e-4 (the reading as 20 dims at base 10,000 gave 2.51e-4)
    [a] = [a for a in res.layers if a.spec is not None]
    assert a.spec.d == R + 1 and "effective base 10,000^(20/19)" in dict(a.spec.source)["base"]


@pytest.mark.parametrize("semantics", hf.SEMANTICS)
@pytest.mark.parametrize("mt", ["gpt_neox", "nemotron"])
def test_linear_is_the_formula(mt, semantics, monkeypatch):
    """Linear: base^(-2k/19) / 4, as transformers 5.23.0 (and 4.57.1 for GPT-NeoX) runs it; 4.57.1's Nemotron runs
    plain RoPE whatever rope_scaling says (measured, tests/test_hf_layers.py)."""
    res = lint(config(mt, LINEAR), semantics, monkeypatch)
    plain = mt == "nemotron" and semantics == V4
    want = [BASE ** (-2 * k / R) / (1 if plain else 4) for k in range((R + 1) // 2)]
    assert close(read_inv_freq(res), want, 1e-12)


@pytest.mark.parametrize("semantics", hf.SEMANTICS)
@pytest.mark.parametrize("mt", ["gpt_neox", "glm4_moe"])
@pytest.mark.parametrize("scaling", [DYNAMIC, YARN], ids=["dynamic", "yarn"])
def test_dim_dependent_schemes_are_not_analysed(scaling, mt, semantics, monkeypatch):
    """dynamic (base x (...)^(dim/(dim-2))) and yarn (a ramp of dim // 2 entries) use dim itself: RV003, no spec;
    an error for yarn, which fails to build the rotary for an odd dim (measured in both versions), a warning for
    dynamic, which runs."""
    res = lint(config(mt, scaling), semantics, monkeypatch)
    assert all(a.spec is None for a in res.layers)
    [f] = [f for f in res.findings if f.code == "RV003"]
    assert "19 are odd" in f.message and "not analysed" in f.message
    assert f.severity == ("error" if scaling is YARN else "warning")
    assert "RV016" not in {g.code for g in res.findings}


RUNTIME_CASES = [("gpt_neox", None), ("gpt_neox", LINEAR), ("gpt_neox", LLAMA3), ("gpt_neox", LONGROPE),
                 ("nemotron", None), ("nemotron", LINEAR), ("nemotron", LLAMA3), ("nemotron", LONGROPE),
                 ("phi3", None)] + [(mt, s) for mt in GLM_TYPES + GLM5_TYPES for s in (None, LINEAR, LLAMA3, LONGROPE)]


@pytest.mark.hf
@pytest.mark.torch
@pytest.mark.parametrize("mt,scaling", RUNTIME_CASES,
                         ids=[f"{m}-{(s or {}).get('rope_type', 'default')}" for m, s in RUNTIME_CASES])
def test_reading_is_the_runtime(mt, scaling, monkeypatch):
    """Every frequency of ropelaw's reading is the installed transformers' inv_freq (its RotaryEmbedding built from
    the config as AutoConfig loads it; the forward runs). Phi-3 takes longrope only (its config class refuses the
    other types), and longrope with an odd dim is refused there too (4.57.1 wants dim // 2 factors, the forward
    ceil(dim / 2))."""
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    import hf_runtime as hr

    installed = V4 if hr.transformers_version().startswith("4.") else V5
    if installed not in semantics_of(mt):
        pytest.skip(f"{mt} is not a type of transformers {installed}")
    o = hr.run_config(config(mt, scaling))
    assert not o.raised, (o.stage, o.error)
    inv, _ = hr.rotary_tables(o.rotary)["all"]
    theirs = [float(x) for x in inv]
    assert len(theirs) == (R + 1) // 2
    ours = read_inv_freq(lint(config(mt, scaling), installed, monkeypatch))
    assert close(ours, theirs, 1e-6), (ours, theirs)
    if mt in GLM5_TYPES:  # the width its apply_rotary_pos_emb slices the head by: cos.shape[-1] = 20 dims rotate
        import torch

        cos, _ = o.rotary(torch.zeros(1, 4, 8), torch.arange(4)[None])
        assert cos.shape[-1] == R + 1, cos.shape


@pytest.mark.hf
@pytest.mark.torch
@pytest.mark.parametrize("mt", ["gpt_neox", "glm4_moe"])
@pytest.mark.parametrize("scaling", [DYNAMIC, YARN], ids=["dynamic", "yarn"])
def test_refusals_are_the_runtime(scaling, mt):
    """What the RV003 of :func:`test_dim_dependent_schemes_are_not_analysed` says the runtime does: yarn fails to
    build the rotary (a size mismatch), dynamic runs."""
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    import hf_runtime as hr

    o = hr.run_config(config(mt, scaling))
    assert o.raised == (scaling is YARN), (o.stage, o.error)
    if scaling is YARN:
        assert o.stage == "rotary" and "size of tensor" in o.error


def test_effective_base_beyond_float64_is_not_analysed(monkeypatch):
    """1e300^(20/19) overflows float64 (> 1.8e308): the group is not analysed and RV016 names the base (no crash)."""
    neox = {k: v for k, v in TYPES["gpt_neox"].items() if k != "rope_theta"}  # 4.57.1 reads rotary_emb_base
    res = lint({**neox, "rotary_emb_base": 1e300}, V4, monkeypatch)
    assert all(a.spec is None for a in res.layers)
    [f] = [f for f in res.findings if f.code == "RV016"]
    assert "effective base 1e300^(20/19) = inf" in f.message


@pytest.mark.parametrize("semantics", hf.SEMANTICS)
def test_advised_base_is_the_written_one(semantics, monkeypatch):
    """RL101's advice for an odd count names the effective base and the base to write, x^(19/20) rounded up to 2
    figures: 1.48e6 effective is 1.48e6^0.95 = 7.27e5 -> 7.3e5 written. Read back, writing 7.3e5 gives an effective
    base 7.3e5^(20/19) = 1.486e6 >= 1.48e6, and 7.2e5 (one step lower) gives 1.464e6 < 1.48e6."""
    def read(base: float):
        cfg = {**TYPES["gpt_neox"], "rope_theta": base, "rotary_emb_base": base, "max_position_embeddings": 131072}
        monkeypatch.setenv("ROPELAW_HF_SEMANTICS", semantics)
        data, pos = parse_text(json.dumps(cfg, indent=1), "json")
        return lint_config(load_mapping(data, pos, path="config.json", train=4096))

    [f] = [f for f in read(BASE).findings if f.code == "RL101"]
    written = float(f.fix.split("written base ")[1].split(")")[0])
    effective = f.data["base_for_target"]
    assert f"raise the base to >= {fmt_short(effective)} (effective; written base" in f.fix
    assert written == pytest.approx(math.ceil(effective ** (R / (R + 1)) / 1e4) * 1e4)
    assert read(written).layers[0].spec.base >= effective > read(written - 1e4).layers[0].spec.base


@pytest.mark.parametrize("option,written", [("base", 2.7e10 ** (R / (R + 1))), ("yarn", None), ("dynamic", None)])
def test_plan_writes_the_written_base(option, written, tmp_path):
    """`ropelaw plan --apply`: the plan's base 2.7e10 (Men et al.'s bound for 131,072 tokens at d = 20, in the
    analysed, effective space) is written as rope_theta = 2.7e10^(19/20) = 8.12e9, which reads back as 2.7e10;
    yarn and dynamic, which use the odd dim itself, are refused (exit 2)."""
    import subprocess
    import sys

    cfg = {**TYPES["gpt_neox"], "max_position_embeddings": 131072}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg) + "\n")
    done = subprocess.run([sys.executable, "-m", "ropelaw", "plan", str(path), "--train", "4096", "--target", "131072",
                           "--apply", option, "--dry-run"], capture_output=True, text=True,
                          env={**__import__("os").environ, "ROPELAW_HF_SEMANTICS": V5})
    if written is None:
        assert done.returncode == 2 and "odd count of dims" in done.stderr, done.stderr
        return
    assert done.returncode == 0, done.stderr
    line = next(x for x in (done.stdout + done.stderr).splitlines() if x.startswith("+{"))
    theta = json.loads(line[1:])["rope_theta"]
    assert theta == pytest.approx(written, rel=5e-12)
    assert theta ** ((R + 1) / R) == pytest.approx(2.7e10, rel=1e-9)


GLM45 = "hf/alibaba__rtp-llm__rtp_llm__test__model_test__fake_test__testdata__glm45__tokenizer__config.json"


@hf_compare.REAL_FILES_STEP
@pytest.mark.hf
@pytest.mark.torch
def test_changed_real_glm4_moe_file_as_transformers_runs_it(tmp_path, monkeypatch):
    """A real GLM-4.5 config.json (head_dim 128, 92 layers, rope_theta 1e6) with partial_rotary_factor 19/128
    (0.1484375: int(128 x 0.1484375) = 19, odd), shrunk in place and run through the installed transformers'
    forward with hooks (tests/test_hf_files.py ``differential``: every layer's cos/sin frequencies and span against
    ropelaw's reading): right on every layer, and ropelaw reads 20 dims at 1e6^(20/19) = 2.069e6 with RV004 (the
    rounding), no RV003."""
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    import test_hf_files
    import test_hf_top_keys

    data = test_hf_top_keys.corpus_file(GLM45)  # sha256 checked against tests/corpus/hf_files.json
    if data is None:
        pytest.skip(f"{GLM45} is not in the corpus yet")
    changed = {**data, "partial_rotary_factor": R / 128}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(changed))
    monkeypatch.setenv("ROPELAW_HF_SEMANTICS", test_hf_files.installed())
    verdict, detail = test_hf_files.differential(path)
    assert verdict == "right", detail
    reading = test_hf_files.ropelaw_reading(changed, str(path))
    assert "RV004" in reading["codes"] and "RV003" not in reading["codes"], reading["codes"]
    [g] = reading["result"]["layers"]
    assert g["spec"]["d"] == R + 1 and g["spec"]["base"] == pytest.approx(1e6 ** ((R + 1) / R), rel=1e-12)


COMPOSITES = {"glm4v": "glm4v_text", "glm4v_moe": "glm4v_moe_text", "glm46v": "glm4v_text", "glmga": "glm4v_text",
              "glm_image": "glm_image_text", "glm_ocr": "glm_ocr_text"}


@pytest.mark.hf
@pytest.mark.torch
@pytest.mark.parametrize("mt", sorted(COMPOSITES))
def test_composite_reading_is_the_runtime(mt, monkeypatch):
    """A GLM-4V composite (its text_config the odd text model above): ropelaw reads the text model's 10 frequencies
    as the installed transformers builds them, under 4.57.1 for glm4v_moe too: its text config class says
    "Glm4vMoe_text" but is registered as glm4v_moe_text, the name hf_types.json's rule now gives it (ropelaw said
    RV003 and RV024 there before)."""
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    import hf_runtime as hr

    installed = V4 if hr.transformers_version().startswith("4.") else V5
    if installed == V4 and mt not in ("glm4v", "glm4v_moe"):
        pytest.skip(f"{mt} is not a type of transformers {installed}")
    cfg = {"model_type": mt, "text_config": config(COMPOSITES[mt], None)}
    o = hr.run_config(cfg, forward=False)
    assert not o.raised, (o.stage, o.error)
    inv, _ = hr.rotary_tables(o.rotary)["all"]
    theirs = [float(x) for x in inv]
    res = lint(cfg, installed, monkeypatch)
    assert "RV003" not in {f.code for f in res.findings}
    assert not [f for f in res.findings if f.code == "RV024" and "not probed" in f.message]  # its text type is read
    assert close(read_inv_freq(res), theirs, 1e-6), (read_inv_freq(res), theirs)


MLA = {**HEAD, "qk_rope_head_dim": R, "qk_nope_head_dim": 64, "v_head_dim": 64, "kv_lora_rank": 32, "q_lora_rank": 32}


@pytest.mark.parametrize("mt", ["glm4_moe_lite", "glm_moe_dsa"])
def test_odd_mla_rope_dims_are_not_read_as_rounded_up(mt, monkeypatch):
    """5.23.0's GLM MLA types rotate qk_rope_head_dim dims (their head_dim): an odd count is RV003, not analysed
    (the row does not name them; :func:`test_odd_mla_rope_dims_are_refused_by_the_runtime` measures why)."""
    res = lint({**MLA, "model_type": mt}, V5, monkeypatch)
    assert all(a.spec is None for a in res.layers)
    [f] = [f for f in res.findings if f.code == "RV003"]
    assert "rotary dimension 19 from qk_rope_head_dim is odd" in f.message


@pytest.mark.hf
@pytest.mark.torch
@pytest.mark.parametrize("mt", ["glm4_moe_lite", "glm_moe_dsa"])
def test_odd_mla_rope_dims_are_refused_by_the_runtime(mt):
    """transformers 5.23.0 refuses an odd qk_rope_head_dim when the config loads (modeling_rope_utils validate_rope:
    "RoPE requires an even rotary dimension"): nothing rotates an odd count rounded up."""
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    import hf_runtime as hr

    if hr.transformers_version().startswith("4."):
        pytest.skip(f"{mt} is not a type of transformers 4.57.1")
    o = hr.run_config({**MLA, "model_type": mt})
    assert o.raised and o.stage == "config" and "RoPE requires an even rotary dimension" in o.error, o.error


# GLM-4.5 with 65 rotary dims (head_dim 130 x 0.5): read as 66 at base^(66/65); with and without the file's base
ODD_GLM = {"model_type": "glm4_moe", "hidden_size": 512, "num_attention_heads": 4, "num_key_value_heads": 4,
           "head_dim": 130, "partial_rotary_factor": 0.5, "max_position_embeddings": 8192, "num_hidden_layers": 1,
           "intermediate_size": 64, "moe_intermediate_size": 32, "vocab_size": 64}


def plan_apply(path, out, option: str = "linear"):
    import os
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-m", "ropelaw", "plan", str(path), "--train", "8192", "--target", "65536",
                           "--apply", option, "-o", str(out)], capture_output=True, text=True,
                          env={**os.environ, "ROPELAW_HF_SEMANTICS": V5})


@pytest.mark.parametrize("theta", [1e6, None], ids=["rope_theta-1e6", "class-default"])
def test_axolotl_writes_the_model_base_not_the_effective_one(theta, tmp_path):
    """`plan --apply linear` on an axolotl file whose base model rotates 65 dims: the override's rope_scaling carries
    the model's own base (1e6; the class default 10,000 when the model has none), as the Hugging Face writer writes
    it for the model's config.json, never the analysed effective base^(66/65) (11,522.3 for 10,000, which was
    written); the edited file reads back at the same effective base, 10,000^(66/65) or 1e6^(66/65)."""
    import yaml

    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text(json.dumps({**ODD_GLM, **({"rope_theta": theta} if theta else {})}))
    ax = tmp_path / "ax.yml"
    ax.write_text(f"base_model: {model}\nsequence_len: 8192\n")
    done = plan_apply(ax, tmp_path / "out.yml")
    assert done.returncode == 0, done.stderr
    written = yaml.safe_load((tmp_path / "out.yml").read_text())["overrides_of_model_config"]["rope_scaling"]
    want = theta or 10000.0  # Glm4MoeConfig's rope_theta default (ropelaw/data/hf_defaults.json, both versions)
    # with the model's partial factor: the override replaces rope_parameters whole under transformers 5
    assert written == {"rope_type": "linear", "factor": 8.0, "rope_theta": want, "partial_rotary_factor": 0.5}
    # the Hugging Face writer, on the model's own config.json
    hf_out = tmp_path / "hf_out.json"
    assert plan_apply(model / "config.json", hf_out).returncode == 0
    hf_written = json.loads(hf_out.read_text())
    assert hf_written.get("rope_theta", want) == want and hf_written["rope_scaling"]["factor"] == 8.0
    monkey = pytest.MonkeyPatch()
    try:
        monkey.setenv("ROPELAW_HF_SEMANTICS", V5)
        from ropelaw.lint.loader import load_config

        [g] = [a for a in lint_config(load_config(str(tmp_path / "out.yml"))).layers if a.spec is not None]
    finally:
        monkey.undo()
    assert g.spec.d == 66 and g.spec.base == pytest.approx(want ** (66 / 65), rel=1e-12)
