"""The loader's engine and the Hugging Face dialect: config shapes in use today, and the
runtime semantics of transformers 4.57.1 and 5.23.0 (``ropelaw/lint/dialects/hf.py``).

Each case is a config and the exact values / findings transformers' code implies; the
version-dependent ones run under both semantics (``ROPELAW_HF_SEMANTICS``), whichever
transformers is installed.
"""

from __future__ import annotations

import importlib
import math
import pathlib
import sys

import pytest

from ropelaw.lint import dialects
from ropelaw.lint.check import lint_config
from ropelaw.lint.dialects import hf
from ropelaw.lint.loader import load_config, load_mapping
from ropelaw.lint.parse import parse_text
from ropelaw.schemes import apply_scheme

CONFIGS = pathlib.Path(__file__).parent / "configs"
BOTH = pytest.mark.parametrize("semantics", hf.SEMANTICS)


@pytest.fixture
def sem(monkeypatch, semantics):
    monkeypatch.setenv("ROPELAW_HF_SEMANTICS", semantics)
    return semantics


def codes(cfg) -> list[str]:
    return sorted(f.code for f in lint_config(cfg).findings)


def yaml_config(text: str):
    data, positions = parse_text(text, "yaml", "t.yaml")
    return load_mapping(data, positions, path="t.yaml", fmt="yaml")


# -- the engine ------------------------------------------------------------------------------
def test_a_config_json_is_read_by_the_hf_dialect():
    assert dialects.pick({"model_type": "llama"}).name == "hf"
    assert dialects.pick({"seq_length": 4096, "kv_channels": 128}).name == "hf"  # training names, for now
    assert dialects.get("hf").keys("base") == ("rope_theta", "rotary_emb_base", "rotary_base")
    with pytest.raises(ValueError, match="unknown config dialect 'nope'"):
        dialects.get("nope")


def test_installed_versions_read_as_importlib_metadata_reads_them():
    """hf._dist_info_version reads METADATA directly (importlib.metadata costs 30 ms to import): the same
    version as importlib.metadata.version for installed distributions, None for a missing one."""
    from importlib.metadata import version

    for name in ("transformers", "numpy", "PyYAML", "pyyaml", "pytest", "hypothesis"):
        got = hf._dist_info_version(name)
        assert got is None or got == version(name), name
    assert hf._dist_info_version("transformers") == version("transformers")
    assert hf._dist_info_version("no-such-distribution-xyz") is None


def test_semantics_follow_the_installed_transformers(monkeypatch):
    from importlib.metadata import PackageNotFoundError, version

    monkeypatch.delenv("ROPELAW_HF_SEMANTICS", raising=False)
    try:
        installed = version("transformers")
        expected = "4.57.1" if installed.startswith("4.") else "5.23.0"
    except PackageNotFoundError:
        expected = "5.23.0"
    assert hf.semantics_version() == expected
    cfg = load_mapping({"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32})
    assert cfg.semantics == f"transformers {expected}"
    assert lint_config(cfg).to_dict()["semantics"] == f"transformers {expected}"


# -- config shapes ---------------------------------------------------------------------------
@BOTH
def test_phi2_rotates_32_dims_and_lints_without_value_findings(sem):
    cfg = load_config(str(CONFIGS / "phi-2.json"))
    assert cfg.spec().d == 32  # int(80 * 0.4) = int(32.0): transformers' float product
    assert not [c for c in codes(cfg) if c.startswith("RV")]


@pytest.mark.parametrize("head_dim,factor,dims", [(80, 0.4, 32), (80, 0.6, 48), (64, 0.25, 16), (96, 0.5, 48)])
def test_rotary_dims_are_transformers_float_product(head_dim, factor, dims):
    # exact rational arithmetic would give 47 for 80 x 0.6 (0.6 is 0.59999999999999997780 in binary)
    assert int(head_dim * factor) == dims
    cfg = load_mapping({"model_type": "phi", "hidden_size": head_dim * 8, "num_attention_heads": 8,
                        "partial_rotary_factor": factor})
    assert cfg.layers[0].d.raw == dims
    assert "RV004" not in codes(cfg) and "RV003" not in codes(cfg)


@BOTH
def test_qwen25_vl_mrope_is_default_rope_over_128_dims(sem):
    cfg = load_config(str(CONFIGS / "qwen2.5-vl-7b-instruct.json"))
    spec = cfg.spec()
    assert (spec.d, spec.base, spec.scheme, dict(spec.params)) == (128, 1e6, "default", {})
    assert not [c for c in codes(cfg) if c.startswith("RV")]
    assert any("mrope_section" in n for n in cfg.notes)


def test_llava_text_config_is_read_with_llama_defaults():
    cfg = load_config(str(CONFIGS / "llava-1.5-7b-hf.json"))
    assert cfg.arch == "llama"
    spec = cfg.spec()
    assert (spec.d, spec.base, spec.train_len) == (128, 1e4, 4096)  # 4096 / 32 and 1e4: LlamaConfig defaults
    assert "LlamaConfig" in cfg.head_dim.where
    assert cfg.max_pos.key == "text_config.max_position_embeddings"


def test_nemo_relative_interpolation_resolves_to_4096():
    cfg = load_config(str(CONFIGS / "nemo-llama2-7b-interpolation.yaml"))
    assert cfg.max_pos.raw == 4096 and cfg.max_pos.key == "model.max_position_embeddings"
    assert "${.encoder_seq_length}" in cfg.max_pos.note
    assert cfg.spec().train_len == 4096
    assert not [c for c in codes(cfg) if c.startswith("RV")]


@pytest.mark.parametrize("text,value", [
    ("model:\n  seq: 2048\n  max_position_embeddings: ${model.seq}\n  hidden_size: 512\n  num_attention_heads: 8\n",
     2048),
    ("seq: 1024\nmodel:\n  max_position_embeddings: ${..seq}\n  hidden_size: 512\n  num_attention_heads: 8\n", 1024),
    ("a: ${b}\nb: 3072\nmax_position_embeddings: ${a}\nhidden_size: 512\nnum_attention_heads: 8\n", 3072),
])
def test_interpolations_relative_absolute_and_chained(text, value):
    assert yaml_config(text).max_pos.raw == value


@pytest.mark.parametrize("ref,why", [
    ("${.seq_length}", "no key model.seq_length in the file"),
    ("${oc.env:SEQ}", "an OmegaConf expression ropelaw does not evaluate"),
    ("${a}", "a cycle"),
])
def test_unresolvable_interpolation_is_a_finding_naming_it(ref, why):
    text = ("a: ${b}\nb: ${a}\nmodel:\n  max_position_embeddings: " + ref +
            "\n  hidden_size: 512\n  num_attention_heads: 8\n")
    r = lint_config(yaml_config(text))
    found = [f for f in r.findings if f.code == "RV018"]
    assert len(found) == 1 and ref in found[0].message and why in found[0].message
    assert (found[0].line, found[0].column) == (4, 3)


# -- runtime semantics -----------------------------------------------------------------------
def base_cfg(**extra):
    cfg = {"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32, "rope_theta": 1e4,
           "max_position_embeddings": 16384}
    cfg.update(extra)
    return cfg


@BOTH
def test_dynamic_ignores_the_original_length_inside_rope_scaling(sem):
    cfg = load_mapping(base_cfg(rope_scaling={"rope_type": "dynamic", "factor": 4.0,
                                              "original_max_position_embeddings": 4096}))
    spec = cfg.spec()
    assert spec.param("original_max_position_embeddings") == 16384  # transformers' switch point
    assert spec.train_len == 4096  # what the author says it was trained at
    # at 16,384 tokens transformers still runs plain RoPE (seq_len <= max_position_embeddings)
    assert apply_scheme(spec, 16384).inv_freq == apply_scheme(spec.with_(scheme="default", params={})).inv_freq
    info = [f for f in lint_config(cfg).findings if f.code == "RV019"]
    assert len(info) == 1 and info[0].severity == "info"
    assert "rope_scaling.original_max_position_embeddings is ignored" in info[0].message


@BOTH
def test_yarn_with_a_top_level_original_length(sem):
    cfg = load_mapping(base_cfg(original_max_position_embeddings=4096,
                                rope_scaling={"rope_type": "yarn", "factor": 4.0}))
    orig = cfg.spec().param("original_max_position_embeddings")
    if sem == "4.57.1":  # _compute_yarn_parameters reads rope_scaling only, else max_position_embeddings
        assert orig == 16384 and "RV019" in codes(cfg)
    else:  # standardize_rope_params: the top-level attribute wins
        assert orig == 4096 and "RV019" not in codes(cfg)


@BOTH
@pytest.mark.parametrize("written,truncated", [("null", False), ('"false"', True), ("false", False), ("true", True)])
def test_yarn_truncate_is_read_by_its_truth_value(sem, written, truncated):
    text = ('{"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32, "rope_theta": 10000.0, '
            '"max_position_embeddings": 16384, "rope_scaling": {"rope_type": "yarn", "factor": 4.0, '
            '"original_max_position_embeddings": 4096, "truncate": ' + written + '}}')
    data, positions = parse_text(text, "json", "t.json")
    cfg = load_mapping(data, positions)
    low, high = apply_scheme(cfg.spec()).detail("correction_range")
    assert (isinstance(low, int) and isinstance(high, int)) == truncated
    assert ("RV001" in codes(cfg)) == (written == '"false"')


@BOTH
def test_longrope_with_the_original_length_only_inside_rope_scaling(sem):
    # MiniCPM style: no top-level original_max_position_embeddings
    short, long = [1.0] * 64, [4.0] * 64
    cfg = load_mapping(base_cfg(max_position_embeddings=32768, rope_scaling={
        "rope_type": "longrope", "short_factor": short, "long_factor": long,
        "original_max_position_embeddings": 4096, "factor": 8.0}))
    spec = cfg.spec()
    if sem == "4.57.1":  # reads only a top-level original, else max_position_embeddings
        assert spec.param("original_max_position_embeddings") == 32768 and "RV019" in codes(cfg)
        assert apply_scheme(spec, 8192).detail("factors_used") == "short"
    else:
        assert spec.param("original_max_position_embeddings") == 4096 and "RV019" not in codes(cfg)
        assert apply_scheme(spec, 8192).detail("factors_used") == "long"
    assert apply_scheme(spec).attention_factor == pytest.approx(
        math.sqrt(1 + math.log(8.0) / math.log(spec.param("original_max_position_embeddings"))))


@BOTH
def test_phi3_top_level_original_with_rope_scaling_factor(sem):
    cfg = load_mapping({"model_type": "phi3", "hidden_size": 3072, "num_attention_heads": 32, "rope_theta": 1e4,
                        "max_position_embeddings": 131072, "original_max_position_embeddings": 4096,
                        "rope_scaling": {"type": "longrope", "short_factor": [1.0] * 48,
                                         "long_factor": [2.0] * 48, "factor": 16.0}})
    att = apply_scheme(cfg.spec()).attention_factor
    s = 32.0 if sem == "4.57.1" else 16.0  # 4.57.1: max / original, factor ignored; 5.23.0: factor
    assert att == pytest.approx(math.sqrt(1 + math.log(s) / math.log(4096)), rel=1e-12)
    assert ("RV019" in codes(cfg)) == (sem == "4.57.1")


@BOTH
def test_llama4_reads_rope_type_as_its_transformers_does(sem):
    cfg = load_mapping({"model_type": "llama4_text", "hidden_size": 5120, "num_attention_heads": 40,
                        "head_dim": 128, "rope_theta": 500000.0, "max_position_embeddings": 131072,
                        "rope_scaling": {"rope_type": "linear", "factor": 2.0}})
    # 4.57.1: Llama4TextRotaryEmbedding sets rope_type = "llama3" whenever rope_scaling is set
    assert cfg.spec().scheme == ("llama3" if sem == "4.57.1" else "linear")


def test_llama4_scaling_has_no_smoothing_band():
    cfg = load_mapping({"model_type": "llama4", "text_config": {
        "model_type": "llama4_text", "hidden_size": 5120, "num_attention_heads": 40, "head_dim": 128,
        "rope_theta": 500000.0, "max_position_embeddings": 10485760,
        "rope_scaling": {"factor": 16.0, "high_freq_factor": 1.0, "low_freq_factor": 1.0,
                         "original_max_position_embeddings": 8192, "rope_type": "llama3"}}})
    res = apply_scheme(cfg.spec())
    assert set(res.detail("band")) == {"high", "low"}  # wavelength < 8192 kept, > 8192 divided by 16
    for t, t0, band in zip(res.inv_freq, apply_scheme(cfg.spec().with_(scheme="default", params={})).inv_freq,
                           res.detail("band"), strict=True):
        assert t == (t0 if 2 * math.pi / t0 < 8192 else t0 / 16)
        assert band == ("high" if 2 * math.pi / t0 < 8192 else "low")  # low = high factor: no smoothed band


@BOTH
def test_hunyuan_dynamic_with_alpha_is_a_fixed_ntk_base(sem):
    # Tencent Hunyuan-MT-7B's config.json: type dynamic, alpha 1e5 (+ yarn-style keys nobody reads)
    cfg = load_mapping({"model_type": "hunyuan_v1_dense", "hidden_size": 4096, "num_attention_heads": 32,
                        "head_dim": 128, "rope_theta": 10000.0, "max_position_embeddings": 32768,
                        "rope_scaling": {"alpha": 100000.0, "beta_fast": 32, "beta_slow": 1, "factor": 1.0,
                                         "mscale": 1.0, "mscale_all_dim": 1.0, "type": "dynamic"}})
    spec = cfg.spec()
    assert spec.scheme == "default"
    assert spec.base == pytest.approx(1e4 * 1e5 ** (128 / 126), rel=1e-15)  # HunYuan's DynamicNTKAlphaRotary
    info = sorted(f.message.split(" is ignored")[0] for f in lint_config(cfg).findings if f.code == "RV019")
    assert info == ["rope_scaling.beta_fast", "rope_scaling.beta_slow", "rope_scaling.factor",
                    "rope_scaling.mscale", "rope_scaling.mscale_all_dim"]


def test_qwen_v1_reads_kv_channels_rotary_pct_and_seq_length():
    cfg = load_mapping({"architectures": ["QWenLMHeadModel"], "model_type": "qwen", "kv_channels": 128,
                        "hidden_size": 4096, "num_attention_heads": 32, "rotary_pct": 1.0,
                        "rotary_emb_base": 10000, "seq_length": 8192, "max_position_embeddings": 32768,
                        "use_dynamic_ntk": True, "use_logn_attn": True})
    spec = cfg.spec()
    assert (spec.d, spec.base, spec.train_len, cfg.target.raw) == (128, 1e4, 8192, 32768)
    assert (spec.scheme, spec.param("original_max_position_embeddings")) == ("qwen_dynamic", 8192)
    assert apply_scheme(spec, 32768).detail("ntk_alpha") == 7  # 2^ceil(log2(4) + 1) - 1
    assert any(n.startswith("use_dynamic_ntk: true") for n in cfg.notes)
    assert any(n.startswith("use_logn_attn: true") for n in cfg.notes)


@BOTH
def test_rope_parameters_flat_and_per_layer_type(sem):
    flat = load_mapping({"model_type": "llama", "hidden_size": 2048, "num_attention_heads": 16,
                         "rope_parameters": {"rope_type": "yarn", "rope_theta": 1e6, "factor": 4.0,
                                             "original_max_position_embeddings": 8192,
                                             "partial_rotary_factor": 0.5}, "max_position_embeddings": 32768})
    spec = flat.spec()
    if sem == "4.57.1":
        # 4.57.1 has no rope_parameters (it reads rope_scaling and rope_theta): LlamaConfig's defaults run,
        # plain RoPE at base 10,000 over the whole head; a warning says the block is not read
        assert (spec.d, spec.base, spec.scheme) == (128, 1e4, "default")
        f = next(f for f in lint_config(flat).findings if f.code == "RV019")
        assert f.severity == "warning" and f.message.startswith("rope_parameters is ignored by transformers 4.57.1")
        return
    assert (spec.d, spec.base, spec.scheme, spec.param("factor")) == (64, 1e6, "yarn", 4.0)
    per = load_mapping({"model_type": "gemma3_text", "hidden_size": 2560, "num_attention_heads": 8, "head_dim": 256,
                        "sliding_window": 1024, "max_position_embeddings": 131072, "num_hidden_layers": 2,
                        "layer_types": ["sliding_attention", "full_attention"],
                        "rope_parameters": {"full_attention": {"rope_type": "linear", "factor": 8.0, "rope_theta": 1e6},
                                            "sliding_attention": {"rope_type": "default", "rope_theta": 1e4}}})
    assert [(g.label, g.base.raw) for g in per.layers] == [("global (1 layer)", 1e6), ("local (1 layer)", 1e4)]
    assert per.spec(0).scheme == "linear" and per.spec(1).scheme == "default"


# -- defaults come from transformers' config classes -----------------------------------------
@pytest.mark.hf
def test_defaults_table_is_the_installed_transformers():
    pytest.importorskip("transformers")
    import transformers

    from ropelaw import data

    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "scripts"))
    try:
        gen = importlib.import_module("hf_defaults")  # scripts/hf_defaults.py: the generator, not shipped
    finally:
        sys.path.pop(0)
    tables = data.hf_defaults()
    installed = transformers.__version__
    assert installed in tables, "regenerate: .venv/bin/python scripts/hf_defaults.py"
    # the bytes the generator would write for this version (ints stay ints, floats floats) are the committed ones
    assert data.dump(gen.table(), sort_keys=True) == data.dump(tables[installed], sort_keys=True), \
        "regenerate: .venv/bin/python scripts/hf_defaults.py"


FRAMEWORK_FIX = pathlib.Path(__file__).parent / "fixtures" / "frameworks"


@pytest.mark.parametrize("rel,name", [
    ("examples/torchtitan_llama3_8b.toml", "torchtitan"), ("torchtune/llama2_7B_full.yaml", "torchtune"),
    ("axolotl/tinker_sft.yaml", "axolotl"), ("examples/litgpt_tinyllama.yaml", "litgpt"),
    ("examples/nanotron_tiny_llama.yaml", "nanotron"), ("examples/megatron_mla.yaml", "megatron"),
    ("examples/nemo_llama.yaml", "nemo"), ("examples/olmo_1b.yaml", "olmo"),
    ("examples/neox_mistral_7b.yml", "neox"),
])
def test_every_training_framework_is_a_dialect_picked_by_its_score(rel, name):
    from ropelaw.lint.parse import read_document

    data, _, _ = read_document(str(FRAMEWORK_FIX / rel))
    got = dialects.pick(data)
    assert got.name == name and got.detect(data) == dialects.CLAIM and got.load is not None
    assert dialects.get("hf").detect(data) < dialects.CLAIM  # a framework's markers outrank any hf score


def test_one_dialect_per_module_hf_first():
    assert [d.name for d in dialects.dialects()] == list(dialects.MODULES)
    assert dialects.MODULES[0] == "hf" and dialects.get("hf").load is None  # hf: the table engine
    # axolotl sets model_type (AutoModelForCausalLM) beside its own markers: the framework still wins
    assert dialects.pick({"base_model": "x/y", "sequence_len": 4096,
                          "model_type": "LlamaForCausalLM"}).name == "axolotl"
    # hf's score counts distinct keys: repeated spellings of one key cannot outrank a framework
    many = {" " * i + "rope_theta": 1 for i in range(2 * dialects.CLAIM)}
    assert dialects.get("hf").detect(many) == 1


def test_a_launch_script_is_read_by_the_megatron_dialect():
    cfg = load_config(str(FRAMEWORK_FIX / "examples" / "megatron_pretrain_llama3.sh"))
    assert (cfg.fmt, cfg.arch, cfg.layers[0].d.raw, cfg.train_len.where) == ("shell", "megatron", 128, "--seq-length")


# -- what each transformers version does with a file: RV021 (the followed one refuses), RV022 (the other) ---
RUNTIME_FIX = pathlib.Path(__file__).parent / "fixtures" / "hf_runtime"


def by_code(cfg):
    out: dict = {}
    for f in lint_config(cfg).findings:
        out.setdefault(f.code, []).append(f)
    return out


@BOTH
def test_hunyuan_ocr_xdrope_is_dynamic_with_alpha(sem):
    """HunyuanOCR's rope_scaling type xdrope: transformers 5.23.0's HunYuanVLTextConfig renames it dynamic
    (configuration_hunyuan_vl.py convert_rope_params_to_dict), and HunYuanVLRotaryEmbedding runs dynamic
    with an alpha as a fixed NTK base rope_theta * alpha^(d/(d-2)) over the head (d = head_dim = 128):
    10000 * 1000^(128/126) = 1.11588e7. 4.57.1 has no hunyuan_vl (RV021 there, read as 5.23.0 runs it)."""
    cfg = load_config(str(RUNTIME_FIX / "hunyuan-ocr.json"))
    spec = cfg.spec()
    assert (spec.d, spec.scheme) == (128, "default")
    assert spec.base == pytest.approx(1e4 * 1000.0 ** (128 / 126), rel=1e-15)
    assert f"{spec.base:.6g}" == "1.11588e+07"
    found = by_code(cfg)
    assert "RV008" not in found and "RV001" not in found  # xdrope is a scheme, xdrope_section its sections
    assert sorted(f.message.split(" is ignored")[0] for f in found["RV019"]) == [
        "rope_scaling.beta_fast", "rope_scaling.beta_slow", "rope_scaling.factor", "rope_scaling.mscale",
        "rope_scaling.mscale_all_dim"]
    code = "RV021" if sem == "4.57.1" else "RV022"
    (f,) = found[code]
    assert f.message.startswith("transformers 4.57.1 does not know model_type 'hunyuan_vl'")
    assert (f.severity, f.line) == (("error" if sem == "4.57.1" else "warning"), 19)


@BOTH
def test_flattened_llama4_is_ignored_by_4_and_refused_by_5(sem):
    cfg = load_config(str(RUNTIME_FIX / "llama-4-flattened.json"))
    spec = cfg.spec()
    found = by_code(cfg)
    if sem == "4.57.1":
        # Llama4Config builds Llama4TextConfig() from its defaults: plain RoPE, base 500,000, 131,072 positions
        assert (spec.d, spec.base, spec.scheme, cfg.target.number()) == (128, 5e5, "default", 131072)
        ignored = {f.message.split(" is ignored")[0]: f.severity for f in found["RV019"]}
        assert ignored["rope_scaling"] == ignored["rope_theta"] == "warning"
        assert "max_position_embeddings" in ignored and "_source" not in ignored
        assert found["RV022"][0].message.startswith("transformers 5.23.0 refuses a llama4 config without text_config")
        assert "RV021" not in found
    else:
        # the file's own values (llama3 x8) with the refusal as an error
        assert (spec.d, spec.base, spec.scheme, spec.param("factor")) == (128, 5e5, "llama3", 8.0)
        (f,) = found["RV021"]
        assert f.severity == "error" and "AttributeError: 'Llama4Config' object has no attribute" in f.message
        assert "RV019" not in found and "RV022" not in found


@BOTH
def test_qwen25_vl_rope_type_mrope(sem):
    cfg = load_config(str(RUNTIME_FIX / "qwen2.5-vl-rope-type-mrope.json"))
    spec = cfg.spec()
    assert (spec.d, spec.base, spec.scheme) == (128, 1e6, "default")  # mrope: plain RoPE over sections
    found = by_code(cfg)
    code = "RV021" if sem == "4.57.1" else "RV022"
    (f,) = found[code]
    assert f.message == "transformers 4.57.1 has no rope_type 'mrope' (KeyError at model load)"


@BOTH
def test_llama4_scout_warns_like_transformers(sem):
    """Scout's llama3 block with low_freq_factor = high_freq_factor = 1: transformers 5.23.0 warns and runs it
    (4.57.1 validates nothing there); an empty smoothing band, so RV011 is a warning, never an error."""
    found = by_code(load_config(str(RUNTIME_FIX / "llama-4-scout.json")))
    (f,) = found["RV011"]
    assert f.severity == "warning" and "no smoothing band" in f.message and "transformers runs it" in f.message
    assert not [g for fs in found.values() for g in fs if g.code.startswith("RV") and g.severity == "error"]


@BOTH
def test_remote_code_is_named_not_passed(sem):
    """An auto_map model_type the followed transformers does not have runs the repository's code: RV023, an
    error (never an "ok" for a model nothing here built), saying what the numbers are instead (the keys by their
    transformers names; ropelaw's encoding for ChatGLM; the other version's reading where it has the type); a
    known model_type with an auto_map runs transformers' own class (AutoConfig without trust_remote_code)."""
    remote = {"model_type": "phi-msft", "auto_map": {"AutoModelForCausalLM": "modeling_phi.PhiForCausalLM"},
              "n_embd": 2560, "n_head": 32, "rotary_dim": 32, "n_positions": 2048}
    (f,) = by_code(load_mapping(remote))["RV023"]
    assert f.severity == "error" and f.message.startswith(f"transformers {sem} does not know model_type 'phi-msft'")
    assert f.message.endswith("its RoPE keys are read by their transformers names, not checked against that code")
    known = {**remote, "model_type": "phi3", "hidden_size": 3072, "num_attention_heads": 32}
    assert "RV023" not in by_code(load_mapping(known))
    chatglm = {"model_type": "chatglm", "auto_map": {"AutoModel": "modeling_chatglm.ChatGLMForConditionalGeneration"},
               "kv_channels": 128, "num_attention_heads": 32, "hidden_size": 4096, "seq_length": 32768}
    (f,) = by_code(load_mapping(chatglm))["RV023"]
    assert f.severity == "error" and "ropelaw's encoding of ChatGLMConfig (THUDM remote code)" in f.message
    assert "RV021" not in by_code(load_mapping(chatglm))
    # the same ChatGLM file without its auto_map: no transformers loads it
    bare = {k: v for k, v in chatglm.items() if k != "auto_map"}
    assert [f.code for f in lint_config(load_mapping(bare)).findings if f.code.startswith("RV02")] == ["RV021"]
    # Kimi-K2.5: kimi_k25 is 5.23.0's own type; 4.57.1 runs the repository's code
    kimi = {"model_type": "kimi_k25", "auto_map": {"AutoConfig": "configuration_kimi_k25.KimiK25Config"},
            "text_config": {"model_type": "deepseek_v3", "hidden_size": 7168, "num_attention_heads": 64,
                            "qk_rope_head_dim": 64, "max_position_embeddings": 262144}}
    found = by_code(load_mapping(kimi))
    if sem == "4.57.1":
        (f,) = found["RV023"]
        assert f.severity == "error" and f.message.endswith("the numbers are transformers 5.23.0's reading (it "
                                                            "has the type)")
    else:
        assert "RV023" not in found


@BOTH
def test_gptj_base_is_fixed(sem):
    """GPT-J rotates rotary_dim dims at base 10,000 (modeling_gptj.create_sinusoidal_positions) and reads no rope
    settings: a rope_scaling there is not read (RV019 warning), not an unknown scheme."""
    cfg = load_mapping({"model_type": "gptj", "n_embd": 4096, "n_head": 16, "rotary_dim": 64, "n_positions": 2048,
                        "rope_scaling": {"rope_type": "gptj"}, "rope_theta": 5e5})
    spec = cfg.spec()
    assert (spec.d, spec.base, spec.scheme) == (64, 1e4, "default")
    found = by_code(cfg)
    assert "RV008" not in found
    assert sorted((f.message.split(" is ignored")[0], f.severity) for f in found["RV019"]) == [
        ("rope_scaling", "warning"), ("rope_theta", "warning")]
