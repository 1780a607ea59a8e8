"""Loader: position trackers, alias normalisation, length derivation, bad files.

Positions are checked against a text search for the key (independent of the trackers);
derived values against the formulas of the published model code (cited per test).
"""

from __future__ import annotations

import json
import pathlib
import re

import pytest

from ropelaw.errors import UsageError
from ropelaw.lint.loader import (
    NotARopeConfig, json_positions, load_config, load_mapping, parse_text, toml_positions, yaml_positions,
)

CORPUS = pathlib.Path(__file__).parent / "configs"


# -- position trackers ----------------------------------------------------------------------
@pytest.mark.parametrize("path", sorted(CORPUS.glob("*.json")), ids=lambda p: p.name)
def test_json_positions_match_text_search(path):
    text = path.read_text()
    pos = json_positions(text)
    data = json.loads(text)
    for key in data:
        # top-level keys sit at indent 2 in these files; find the line independently
        n = next(i for i, line in enumerate(text.splitlines(), 1) if line.startswith(f'  "{key}":'))
        assert pos[(key,)] == (n, 3), key


def test_json_positions_nested_lists_escapes_and_nan():
    text = '{"a": {"b": [1, {"c": "x\\"}y"}]},\n "rope_scaling": {"factor": NaN,\n   "l": [1e400, 2]}}'
    pos = json_positions(text)
    assert pos[("a", "b", 1, "c")] == (1, 18)
    assert pos[("rope_scaling", "factor")] == (2, 19)
    assert pos[("rope_scaling", "l", 0)] == (3, 10)
    assert pos[("rope_scaling", "l", 1)] == (3, 17)


def test_json_positions_deep_nesting_is_iterative():
    text = "[" * 5000 + "]" * 5000
    assert json_positions(text) is not None  # no RecursionError


def test_yaml_positions():
    text = "model:\n  rope:\n    rotary_base: 10000\n  list:\n    - 1\n    - 2\n"
    pos = yaml_positions(text)
    assert pos[("model", "rope", "rotary_base")] == (3, 5)
    assert pos[("model", "list", 1)] == (6, 7)


def test_toml_positions():
    text = ('title = "x"\n[model]\nrope_theta = 1e6  # c\n"quoted.key" = 1\n'
            'dotted.inner = 2\n[[layers]]\nwindow = 1\n[[layers]]\nwindow = 2\n')
    pos = toml_positions(text)
    assert pos[("model", "rope_theta")] == (3, 1)
    assert pos[("model", "quoted.key")] == (4, 1)
    assert pos[("model", "dotted", "inner")] == (5, 1)
    assert pos[("layers", 1, "window")] == (9, 1)


def test_toml_config_loads_with_positions(tmp_path):
    p = tmp_path / "train.toml"
    p.write_text('[model]\nhidden_size = 4096\nnum_attention_heads = 32\nrotary_base = 500000\n'
                 'seq_length = 8192\nmax_position_embeddings = 32768\n')
    cfg = load_config(str(p))
    assert cfg.layers[0].base.raw == 500000 and (cfg.layers[0].base.line, cfg.layers[0].base.column) == (4, 1)
    assert cfg.train_len.key == "model.seq_length" and cfg.target.raw == 32768


# -- aliases -----------------------------------------------------------------------------------
def spec_of(data, **kw):
    return load_mapping(data, **kw).spec()


def test_head_dim_vs_hidden_over_heads():
    assert spec_of({"hidden_size": 4096, "num_attention_heads": 32, "max_position_embeddings": 4096}).d == 128
    # explicit head_dim wins (Gemma 7B: 3072 / 16 = 192 but head_dim 256)
    assert spec_of({"hidden_size": 3072, "num_attention_heads": 16, "head_dim": 256,
                    "max_position_embeddings": 8192}).d == 256


@pytest.mark.parametrize("key", ["partial_rotary_factor", "rotary_pct", "rotary_percent", "rotary_percentage"])
def test_partial_rotary(key):
    # transformers: rotary dims = int(head_dim * partial_rotary_factor); GPT-NeoX: int(head_size * rotary_pct)
    assert spec_of({"hidden_size": 2560, "num_attention_heads": 32, key: 0.5, "max_position_embeddings": 2048}).d == 40


def test_rotary_dim_and_qk_rope_head_dim():
    assert spec_of({"hidden_size": 4096, "num_attention_heads": 16, "rotary_dim": 64, "n_positions": 2048}).d == 64
    assert spec_of({"hidden_size": 7168, "num_attention_heads": 128, "qk_rope_head_dim": 64,
                    "max_position_embeddings": 4096}).d == 64


@pytest.mark.parametrize("key", ["rope_theta", "rotary_emb_base", "rotary_base"])
def test_base_aliases(key):
    cfg = load_mapping({"hidden_size": 4096, "num_attention_heads": 32, key: 5e5, "max_position_embeddings": 8192})
    assert cfg.spec().base == 5e5 and cfg.layers[0].base.key == key


def test_absent_base_is_the_architecture_default_and_said_so():
    cfg = load_mapping({"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32,
                        "max_position_embeddings": 4096})
    assert cfg.spec().base == 10000.0
    assert cfg.layers[0].base.key is None and "LlamaConfig default" in cfg.layers[0].base.note
    assert any("assumed" in n for n in cfg.notes)
    cfg = load_mapping({"hidden_size": 4096, "num_attention_heads": 32, "max_position_embeddings": 4096})
    assert "RoFormer" in cfg.layers[0].base.note


def test_chatglm_rope_ratio_and_half_rotation():
    # ChatGLM: RotaryEmbedding(rotary_dim // 2, base=10000 * rope_ratio), rotary_dim = kv_channels
    cfg = load_mapping({"model_type": "chatglm", "kv_channels": 128, "num_attention_heads": 32,
                        "hidden_size": 4096, "seq_length": 32768, "rope_ratio": 50})
    s = cfg.spec()
    assert (s.d, s.base, s.train_len) == (64, 500000.0, 32768)


def test_megatron_kv_channels_rotates_in_full():
    cfg = load_mapping({"kv_channels": 128, "num_attention_heads": 32, "hidden_size": 4096,
                        "seq_length": 4096, "max_position_embeddings": 8192, "rotary_percent": 0.5}, fmt="yaml")
    s = cfg.spec()
    assert (s.d, s.train_len, cfg.target.raw) == (64, 4096, 8192)
    assert cfg.kind == "training"


def test_rope_type_vs_type_and_su_alias():
    base = {"hidden_size": 3072, "num_attention_heads": 32, "max_position_embeddings": 8192}
    assert spec_of({**base, "rope_scaling": {"type": "linear", "factor": 2.0}}).scheme == "linear"
    assert spec_of({**base, "rope_scaling": {"rope_type": "linear", "factor": 2.0}}).scheme == "linear"
    s = spec_of({**base, "original_max_position_embeddings": 4096,
                 "rope_scaling": {"type": "su", "short_factor": [1.0] * 48, "long_factor": [2.0] * 48}})
    assert s.scheme == "longrope" and s.param("original_max_position_embeddings") == 4096


def test_rope_parameters_flat_and_per_layer_type():
    flat = load_mapping({"hidden_size": 4096, "num_attention_heads": 32, "max_position_embeddings": 8192,
                         "rope_parameters": {"rope_type": "default", "rope_theta": 5e5}})
    assert flat.spec().base == 5e5 and flat.layers[0].base.key == "rope_parameters.rope_theta"
    per = load_mapping({"hidden_size": 2560, "num_attention_heads": 8, "head_dim": 256,
                        "max_position_embeddings": 131072, "sliding_window": 1024,
                        "layer_types": ["sliding_attention"] * 5 + ["full_attention"],
                        "rope_parameters": {
                            "full_attention": {"rope_type": "linear", "factor": 8.0, "rope_theta": 1e6},
                            "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0}}})
    g, l_ = per.spec(0), per.spec(1)
    assert (g.scheme, g.base, g.train_len) == ("linear", 1e6, 16384)  # max / factor for linear
    assert (l_.scheme, l_.base) == ("default", 10000.0) and per.layers[1].window.raw == 1024


def test_dtype_aliases():
    base = {"hidden_size": 4096, "num_attention_heads": 32, "max_position_embeddings": 4096}
    assert load_mapping({**base, "torch_dtype": "float16"}).dtype.raw == "float16"
    assert load_mapping({**base, "dtype": "bfloat16"}).dtype.key == "dtype"
    assert load_mapping({**base, "bf16": {"enabled": True}}, fmt="yaml").dtype.raw == "bf16"


def test_lengths_derivation_and_overrides():
    data = {"hidden_size": 4096, "num_attention_heads": 32, "max_position_embeddings": 131072, "rope_theta": 5e5,
            "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "original_max_position_embeddings": 8192}}
    cfg = load_mapping(data)
    assert (cfg.train_len.raw, cfg.target.raw) == (8192, 131072)
    cfg = load_mapping(data, train=4096, target=65536, tune=16384)
    assert (cfg.train_len.raw, cfg.train_len.note, cfg.target.note) == (4096, "--train", "--target")
    assert cfg.spec().tune_len == 16384
    plain = {"hidden_size": 4096, "num_attention_heads": 32, "max_position_embeddings": 32768}
    assert load_mapping(plain).train_len.key == "max_position_embeddings"
    dyn = {**plain, "rope_scaling": {"type": "dynamic", "factor": 2.0}}
    assert load_mapping(dyn).train_len.raw == 32768  # transformers' dynamic uses max_position_embeddings


def test_text_config_section():
    cfg = load_mapping({"model_type": "gemma3", "text_config": {"model_type": "gemma3_text", "hidden_size": 2560,
                                                                "rope_scaling": {"rope_type": "linear", "factor": 8}}})
    assert cfg.arch == "gemma3_text" and cfg.spec().d == 256


def test_not_rope_configs():
    with pytest.raises(NotARopeConfig, match="learned"):
        load_mapping({"model_type": "gpt2", "n_embd": 768, "n_head": 12})
    with pytest.raises(NotARopeConfig, match="ALiBi"):
        load_mapping({"alibi": True, "hidden_size": 4096, "num_attention_heads": 32})
    with pytest.raises(NotARopeConfig, match="GPT-NeoX pos-emb 'learned' is not rotary"):
        load_mapping({"pos-emb": "learned", "hidden-size": 1024, "num-attention-heads": 16}, fmt="yaml")
    with pytest.raises(NotARopeConfig, match="no RoPE settings"):
        load_mapping({"name": "ci", "on": ["push"]})


# -- bad files ---------------------------------------------------------------------------------
@pytest.mark.parametrize("text,fmt,match", [
    ('{"hidden_size": 4096, "rope_theta": ', "json", "malformed JSON"),
    ("[1, 2]", "json", "not a config: its top level is a list, not a mapping of settings"),
    ("a: [1, 2\n", "yaml", "malformed YAML"),
    ("- 1\n- 2\n", "yaml", "not a config: its top level is a list"),
    ("# comments only\n", "yaml", "not a config: its top level is empty"),
    ("---\n---\nkind: Service\n", "yaml", "not a config: its top level is empty"),  # the first document
    ("42\n", "yaml", "not a config: its top level is a number"),
    ("a = = 1\n", "toml", "malformed TOML"),
    ("", "json", "malformed JSON"),
])
def test_malformed_text(text, fmt, match):
    with pytest.raises(UsageError, match=match):
        parse_text(text, fmt, "x")


def test_bad_files(tmp_path):
    binary = tmp_path / "model.json"
    binary.write_bytes(b"\x00\x01safetensors\xff")
    with pytest.raises(UsageError, match="binary file"):
        load_config(str(binary))
    latin = tmp_path / "latin.json"
    latin.write_bytes(b'{"a": "\xe9"}')
    with pytest.raises(UsageError, match="not UTF-8"):
        load_config(str(latin))
    d = tmp_path / "dir.json"
    d.mkdir()
    with pytest.raises(UsageError, match="is a directory"):
        load_config(str(d))
    with pytest.raises(UsageError, match="cannot read"):
        load_config(str(tmp_path / "missing.json"))
    with pytest.raises(UsageError, match="not a config file"):
        load_config(str(tmp_path / "x.txt"))


def test_values_kept_as_found_not_raised():
    """NaN, 1e400 and wrong types load; the RV rules report them (see test_lint_rules)."""
    text = '{"hidden_size": 4096, "num_attention_heads": 32, "rope_theta": NaN, "max_position_embeddings": 1e400}'
    data, pos = parse_text(text, "json")
    cfg = load_mapping(data, pos)
    assert cfg.layers[0].base.number() is None and cfg.max_pos.raw == float("inf")
    with pytest.raises(ValueError):
        cfg.spec()


def test_yaml_numeric_strings_are_numbers():
    """PyYAML reads 1e6 (no dot) as a string; training launchers read it as a number."""
    data, pos = parse_text("hidden_size: 4096\nnum_attention_heads: 32\nrotary_base: 1e6\nseq_length: 4096\n", "yaml")
    cfg = load_mapping(data, pos, fmt="yaml")
    assert cfg.spec().base == 1e6 and "string" in cfg.layers[0].base.note


def test_cli_bad_input_one_line_exit_2(tmp_path, capsys):
    from ropelaw.cli import main

    bad = tmp_path / "config.json"
    bad.write_text('{"hidden_size": 4096,')
    for args in (["lint", str(bad)], ["lint", str(tmp_path / "nope.json")], ["lint", str(bad), "--select", "X!"],
                 ["lint", str(bad), "--bogus"]):
        try:
            rc = main(args)
        except SystemExit as exc:  # argparse exits for unknown options
            rc = exc.code
        assert rc == 2, args
        err = capsys.readouterr().err
        assert len(err.strip().splitlines()) == 1 and "error" in err, (args, err)
        assert "Traceback" not in err


def test_cli_directory_bad_file_is_a_finding(tmp_path, capsys):
    from ropelaw.cli import main

    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "bad.json").write_text('{"hidden_size": ')
    (tmp_path / "a" / "blob.json").write_bytes(b"\x00\x00\x00")
    (tmp_path / "ci.yaml").write_text("on: [push]\njobs: {}\n")
    (tmp_path / "ok.json").write_text(json.dumps({"hidden_size": 4096, "num_attention_heads": 32,
                                                  "rope_theta": 5e5, "max_position_embeddings": 8192}))
    rc = main(["lint", "-v", str(tmp_path)])
    out = capsys.readouterr().out
    assert rc == 1
    assert re.search(r"bad\.json:1:1: RE102 malformed-config malformed JSON", out)
    assert re.search(r"blob\.json:1:1: RE101 unreadable-config binary file", out)
    assert "ok.json: ok (d=128, base 500,000, trained 8,192, target 8,192, bound 8,192)" in out
    assert "Skipped 1 file without RoPE settings." in out
    assert out.strip().endswith("Found 2 findings (2 errors) in 3 configs (2 not analysed).")


def test_megatron_rope_scaling_flag_is_llama3():
    """Megatron-Core's --use-rope-scaling applies Llama 3.1's bands (factor 8, low 1, high 4, 8192)."""
    data, pos = parse_text("hidden_size: 4096\nnum_attention_heads: 32\nrotary_base: 500000\n"
                           "seq_length: 8192\nmax_position_embeddings: 131072\nrope_scaling: true\n"
                           "rope_scaling_factor: 8.0\n", "yaml")
    cfg = load_mapping(data, pos, fmt="yaml")
    s = cfg.spec()
    assert (s.scheme, s.param("factor"), s.param("original_max_position_embeddings")) == ("llama3", 8.0, 8192)
    assert cfg.layers[0].scheme.line == 6
    data["rope_scaling"] = False  # Megatron's default: no scaling, not a type error
    from ropelaw.lint.check import lint_config

    off = load_mapping(data, pos, fmt="yaml")
    assert off.spec().scheme == "default" and not [f for f in lint_config(off).findings if f.code == "RV001"]


def test_shared_value_reported_once_for_two_layer_groups():
    from ropelaw.lint.check import lint_config

    cfg = load_mapping({"model_type": "gemma2", "head_dim": 256, "hidden_size": 3584, "num_attention_heads": 16,
                        "rope_theta": 1.0, "max_position_embeddings": 8192, "sliding_window": 4096})
    assert len(cfg.layers) == 2
    assert [f.code for f in lint_config(cfg).findings if f.code == "RV005"] == ["RV005"]


def test_tune_shorter_than_training_is_bad_input(capsys):
    from ropelaw.cli import main

    assert main(["lint", str(CORPUS / "llama-3.1-8b.json"), "--tune", "4096"]) == 2
    err = capsys.readouterr().err
    assert "--tune 4096 is shorter than the training length 8,192" in err and len(err.splitlines()) == 1


def test_directory_scan_with_progress_bar(tmp_path, capsys):
    from ropelaw.commands.lint import lint_paths

    for i in range(3):
        (tmp_path / f"c{i}.json").write_text(json.dumps({"hidden_size": 4096, "num_attention_heads": 32,
                                                         "max_position_embeddings": 4096 * (i + 1)}))
    results, bad, skipped = lint_paths([str(tmp_path)], progress=True)
    assert [r.config.target.raw for r in results] == [4096, 8192, 12288] and not bad and not skipped
    assert "lint" in capsys.readouterr().err  # tqdm wrote its bar to stderr
