"""torchtune recipes that name a component builder with its own arguments, train a PPO policy, or use a builder
that torchtune 0.6.1 does not have (written here in torchtune's recipe format; the same forms in every recipe of
the repository are checked against torchtune's own builders in tests/differential/test_diff_torchtune.py)."""

from __future__ import annotations

import pytest

from ropelaw.lint.check import lint_config
from ropelaw.lint.dialects.torchtune import component_values
from ropelaw.lint.dialects._framework import presets
from ropelaw.lint.loader import UnreadConfig, load_config


def write(tmp_path, name: str, text: str) -> str:
    p = tmp_path / name
    p.write_text(text)
    return str(p)


LLAMA2 = """model:
  _component_: torchtune.models.llama2.llama2
  vocab_size: 32000
  num_layers: 22
  num_heads: 32
  num_kv_heads: 4
  embed_dim: 2048
  max_seq_len: 2048
"""


def test_a_component_builder_with_its_own_arguments(tmp_path):
    """llama2(embed_dim=2048, num_heads=32, max_seq_len=2048): RotaryPositionalEmbeddings(dim=embed_dim //
    num_heads = 64, base=rope_base, default 10,000), as llama2() builds it (torchtune==0.6.1)."""
    r = lint_config(load_config(write(tmp_path, "qat.yaml", LLAMA2)))
    s = r.layers[0].spec
    assert (s.d, s.base, s.train_len, r.layers[0].length) == (64, 10000.0, 2048, 2048)
    assert "llama2() with this file's arguments" in r.setup()["derived"]["base"]["from"]
    r = lint_config(load_config(write(tmp_path, "b.yaml", LLAMA2 + "  rope_base: 500000.0\n")))
    assert r.layers[0].spec.base == 500000.0


def test_component_values_need_every_argument():
    entry = presets("torchtune")["components"]["torchtune.models.llama2.llama2"]
    assert component_values(entry, {"embed_dim": 4096, "num_heads": 32, "max_seq_len": 4096}) == {
        "rope_class": "RotaryPositionalEmbeddings", "scheme": "default", "dim": 128, "base": 10000.0,
        "max_seq_len": 4096}
    assert component_values(entry, {"embed_dim": 4096, "max_seq_len": 4096}) is None  # num_heads missing
    assert component_values(entry, {"embed_dim": "x", "num_heads": 32, "max_seq_len": 4096}) is None


def test_a_ppo_recipe_trains_its_policy_model(tmp_path):
    text = LLAMA2.replace("model:", "policy_model:") + "reward_and_value_model:\n  _component_: x\n"
    r = lint_config(load_config(write(tmp_path, "ppo.yaml", text)))
    assert r.layers[0].spec.d == 64 and any("policy_model" in n for n in r.config.notes)


def test_a_builder_torchtune_0_6_1_does_not_have_is_rv030(tmp_path):
    """Qwen3 builders came after torchtune 0.6.1: the recipe is not read, and says so (never a pass, never a skip)."""
    with pytest.raises(UnreadConfig) as exc:
        load_config(write(tmp_path, "q3.yaml", "model:\n  _component_: torchtune.models.qwen3.qwen3_4b_instruct\n"))
    assert exc.value.code == "RV030" and "is not in torchtune==0.6.1" in str(exc.value)
    assert (exc.value.line, exc.value.column) == (2, 3)
