"""Never a misread (issue 22): what lint cannot read is a finding with a code, never a pass or a skip.

RV030 unread-rope-settings: RoPE-looking keys no reader used; RV031 model-config-needed: a
fine-tuning config whose model is named elsewhere and not given. Fixtures written here, imitating
the real files the issue names (a MaxText model file read by the generic table, an axolotl config
of a private base model).
"""

from __future__ import annotations

import json

import pytest

from ropelaw.cli import main
from ropelaw.lint.check import lint_config
from ropelaw.lint.loader import ModelNeeded, NotARopeConfig, UnreadConfig, load_config, load_mapping
from ropelaw.lint.unread import is_rope_key, rope_leaves


def write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text)
    return str(p)


def test_rope_looking_keys():
    for k in ("rope_theta", "rope_max_timescale", "rotary_base", "rotary_emb_base", "rope_scaling", "rope",
              "--rotary-base", "qk-pos-emb-head-dim", "yarn_beta_fast", "seq_len_interpolation_factor",
              "partial_rotary_factor", "use_rope"):
        assert is_rope_key(k), k
    for k in ("apply_rope_fusion", "--no-rope-fusion", "rope_theta_for_vit", "max_timescale_for_audio", "hidden_size",
              "dropout", "europe"):
        assert not is_rope_key(k), k
    # a key inside a RoPE block is a RoPE setting whatever its name (Levanter's rope: {theta: ...})
    leaves = dict((".".join(p), v) for p, v in rope_leaves({"model": {"rope": {"type": "llama3", "theta": 5e5},
                                                                      "seq_len": 4096, "rope_scaling": None}}))
    assert leaves == {"model.rope.type": "llama3", "model.rope.theta": 5e5}


# a file no dialect claims, with a base key the generic table does not know (llama.cpp's name for it)
GENERIC = "hidden_size: 2880\nnum_attention_heads: 64\nhead_dim: 64\nmax_position_embeddings: 131072\n" \
          "n_layers: 24\nrope_freq_base: 150000\n"


def test_unread_base_key_is_rv030_and_no_base_is_invented(tmp_path, capsys):
    """The generic table reads head_dim and the lengths but not rope_freq_base: before, RoPE's default
    10,000 and a clean 'ok' (as MaxText's rope_max_timescale got before the maxtext dialect); now RV030
    at that key, and the layer is not analysed (no base)."""
    p = write(tmp_path, "model.yml", GENERIC)
    r = lint_config(load_config(p))
    assert [(f.code, f.line, f.column) for f in r.findings] == [("RV030", 6, 1)]
    assert r.findings[0].message.startswith("unread RoPE settings: rope_freq_base")
    assert r.config.layers[0].base.raw is None and r.layers[0].spec is None
    assert main(["lint", p]) == 1
    out = capsys.readouterr().out
    assert "RV030 unread-rope-settings" in out and "10,000" not in out and "All checks passed" not in out


def test_unread_scaling_key_is_reported_the_base_read_stays(tmp_path):
    p = write(tmp_path, "c.yaml", "hidden_size: 4096\nnum_attention_heads: 32\nrope_theta: 500000\n"
                                  "max_position_embeddings: 8192\nrope_scaling_factor: 8\napply_rope_fusion: true\n")
    r = lint_config(load_config(p))
    assert r.config.layers[0].base.raw == 500000
    (f,) = [f for f in r.findings if f.code == "RV030"]
    assert (f.line, f.data["keys"]) == (5, ["rope_scaling_factor"])  # the kernel switch is not a setting


def test_a_file_nothing_reads_is_rv030_not_a_skip(tmp_path, capsys):
    p = write(tmp_path, "overrides.yaml", "rope_theta: 1000000\nrope_scaling:\n  type: yarn\n  factor: 4\n")
    with pytest.raises(UnreadConfig) as exc:
        load_config(p)
    assert exc.value.code == "RV030" and (exc.value.line, exc.value.column) == (1, 1)
    assert "unread RoPE settings: rope_theta, rope_scaling.type, rope_scaling.factor (no RoPE settings found" \
        in str(exc.value)
    assert main(["lint", p, "--format", "json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert [f["code"] for f in doc["findings"]] == ["RV030"] and doc["skipped"] == []
    # a file without any RoPE-looking key is still skipped, with the reason
    q = write(tmp_path, "ci.yml", "name: ci\non: [push]\n")
    assert main(["lint", "-v", q]) == 0
    assert "skipped: no RoPE settings found" in capsys.readouterr().out


def test_decisive_skips_stay_skips():
    """A model that uses other positions is skipped even when RoPE-looking keys sit unused in its file."""
    with pytest.raises(NotARopeConfig) as exc:
        load_mapping({"model": {"d_model": 2048, "n_heads": 16, "rope": False, "rope_theta": 10000}})
    assert not isinstance(exc.value, UnreadConfig) and "OLMo model uses learned positions" in str(exc.value)
    with pytest.raises(NotARopeConfig, match="rope is false"):
        load_mapping({"hidden_size": 64, "num_attention_heads": 4, "rope": False})
    cfg = load_mapping({"hidden_size": 64, "num_attention_heads": 4, "rope": True, "rope_theta": 1e4,
                        "max_position_embeddings": 2048})
    assert cfg.unread == [] and cfg.considered == ["rope"]


def test_axolotl_base_model_not_given_is_rv031(tmp_path, capsys):
    text = "base_model: someone/private-model\nsequence_len: 8192\ndatasets:\n  - path: x\n"
    p = write(tmp_path, "ax.yaml", text)
    with pytest.raises(ModelNeeded) as exc:
        load_config(p)
    assert exc.value.code == "RV031" and (exc.value.line, exc.value.column) == (1, 1)
    assert "base_model 'someone/private-model' names the model" in str(exc.value)
    assert "--model-config PATH" in exc.value.fix and "`hf download someone/private-model config.json`" in exc.value.fix
    assert main(["lint", p]) == 1
    out = capsys.readouterr().out
    assert "RV031 model-config-needed" in out and "skipped" not in out
    assert "  fix: run `hf download someone/private-model config.json` and lint again" in out
    # given with --model-config (a file, or the directory holding config.json)
    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text(json.dumps({
        "model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32, "rope_theta": 500000.0,
        "max_position_embeddings": 8192}))
    for given in (str(model / "config.json"), str(model)):
        r = lint_config(load_config(p, model_config=given))
        assert (r.layers[0].spec.d, r.layers[0].spec.base, r.layers[0].spec.train_len) == (128, 5e5, 8192)
        assert r.config.tune_len.raw == 8192 and r.layers[0].spec.tune_len is None
    assert main(["lint", p, "--model-config", str(model)]) == 0
    capsys.readouterr()


def test_a_key_the_framework_refuses_is_rv033(tmp_path):
    """RV033 framework-refuses-config: llm-foundry's set_config_overrides raises on a rope_scaling override with a key
    the model's rope_scaling does not hold; axolotl 0.18.0 raises on a top-level rope_scaling. At the key; the rest is
    read as the framework would without it (tests/test_lint_hub_frameworks.py: the same on a Hugging Face cache)."""
    model = "tests/configs/llama-3.2-1b.json"  # llama3 rope_scaling {factor, low/high_freq_factor, original, rope_type}
    foundry = write(tmp_path, "f.yaml", "model:\n  name: hf_causal_lm\n  pretrained_model_name_or_path: m/x\n"
                                        "  config_overrides:\n    rope_scaling:\n      rope_factor: 16.0\n")
    r = lint_config(load_config(foundry, model_config=model))
    assert [(f.code, f.name, f.line, f.column) for f in r.findings if f.code == "RV033"] == [
        ("RV033", "framework-refuses-config", 6, 7)]
    assert r.layers[0].spec.param_dict()["factor"] == 32.0  # read without the refused override
    ax = write(tmp_path, "a.yaml", "base_model: m/x\nsequence_len: 4096\nrope_scaling:\n  type: linear\n  factor: 2\n")
    r = lint_config(load_config(ax, model_config=model))
    assert [(f.code, f.line, f.column) for f in r.findings if f.code == "RV033"] == [("RV033", 3, 1)]
    assert r.layers[0].spec.scheme == "llama3"


def test_model_config_path_must_exist(tmp_path, capsys):
    p = write(tmp_path, "ax.yaml", "base_model: someone/private-model\nsequence_len: 8192\n")
    assert main(["lint", p, "--model-config", str(tmp_path / "nope.json")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--model-config" in err and "no such file or directory" in err


def test_re104_internal_error_is_ropelaws_and_re102_stays_the_users(tmp_path, capsys, monkeypatch):
    """RE104 internal-error: an exception that is not the declared bad-input type, raised while a file is
    read, is ropelaw's failure on that file (exit 3), not RE102 malformed-config; a truncated file stays RE102."""
    from ropelaw.cli import main
    from ropelaw.lint.dialects import torchtitan

    good = tmp_path / "a.toml"
    good.write_text('[model]\nname = "llama3"\nflavor = "8B"\n[training]\nseq_len = 8192\n')
    cut = tmp_path / "b.json"
    cut.write_text('{"hidden_size": 4096, "rope_theta": ')
    assert main(["lint", str(tmp_path)]) in (0, 1)
    out = capsys.readouterr().out
    assert "b.json:1:1: RE102 malformed-config" in out and "RE104" not in out

    def broken(doc):
        raise KeyError("scaling_factor")

    import dataclasses

    monkeypatch.setattr(torchtitan, "DIALECT", dataclasses.replace(torchtitan.DIALECT, load=lambda *a,
                                                                   **k: broken(None)))
    assert main(["lint", str(tmp_path)]) == 3
    out = capsys.readouterr().out
    assert "a.toml:1:1: RE104 internal-error ropelaw failed on this file: KeyError: 'scaling_factor'" in out
    assert "b.json:1:1: RE102 malformed-config" in out
