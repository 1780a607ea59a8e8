"""llm-foundry's own config loading on every example config of its repository (mosaicml/llm-foundry@8c8dd48f,
2025-07-21; pinned: llm-foundry==0.22.0, released 2025-07-29 after it) against ropelaw's reading.

What llm-foundry does with a file, run here on CPU: OmegaConf resolves it (omegaconf==2.3.0, llm-foundry's own
dependency; ``command_utils/train.py`` ``make_dataclass_and_log_config``: ``to_container(resolve=True)``; an mcli
file's ``parameters:`` is the YAML its command reads, ``/mnt/config/parameters.yaml``); the model is built from
``model`` (an eval file: each of ``models``, the first compared): ``mpt_causal_lm`` ->
``models/mpt/configuration_mpt.py`` ``MPTConfig(**model)`` from the wheel, unchanged (its defaults:
``attn_config`` from ``models/utils/config_defaults.py``, ``learned_pos_emb`` off under ALiBi or RoPE), and its
rotary as ``modeling_mpt.py`` ``gen_rotary_embedding`` builds it; ``hf_causal_lm`` -> ``AutoConfig`` of
``pretrained_model_name_or_path`` from a fake Hugging Face cache of real config.json files
(tests/corpus/hub_models.json), then ``utils/config_utils.py`` ``set_config_overrides`` (taken from its source
alone) with ``config_overrides``, and transformers' rotary on it. A file naming a model whose config.json is
not in the corpus is skipped, naming it.

Stubbed, and why: the package ``__init__`` (Composer, the trainer); ``layers_registry.ffns_with_megablocks``
(a registry of MoE layers: empty); ``models/layers/attention.py``'s ``check_alibi_support`` and
``is_flash_v2_installed`` (they ask the installed flash-attn, a CUDA build: answered "supported" here, so
``MPTConfig`` validates a ``rope_impl: dail`` config as on a GPU machine). flash-attn's ``RotaryEmbedding`` (the
``dail`` rotary) cannot be built on CPU: its frequencies, ``1 / base ** (arange(0, dim, 2) / dim)`` in float32
(flash_attn/layers/rotary.py ``_compute_inv_freq``), stand in, read from its code. transformers: the installed
4.57.1 (llm-foundry 0.22.0 pins 4.51).
"""

from __future__ import annotations

import ast
import sys
import types
import warnings

import pytest
import yaml

from frameworks import (CORPUS, example, example_files, fake_hub, namespace, offline_hub, ropelaw_rotary,
                        same_frequencies,
                        unpacked)
from ropelaw.lint.check import lint_config
from ropelaw.lint.loader import NotARopeConfig, UnreadConfig, load_config

FILES = example_files("llm-foundry")
# other real llm-foundry configs of the corpus (sha256 checked by tests/test_lint_frameworks.py and
# tests/test_lint_frameworks_r3.py): the examples of this commit build no RoPE MPT, these do (DBRX-style)
EXTRA = ["frameworks/llmfoundry/dbrx-9b.yaml", "frameworks/llmfoundry/dbrx-73b.yaml",
         "heldout-r3/frameworks/llmfoundry__eval__dbrx-9b.yaml"]


@pytest.fixture(scope="module")
def foundry(tmp_path_factory):
    pytest.importorskip("transformers")
    pytest.importorskip("omegaconf", reason="omegaconf==2.3.0 not installed (the .ci/run step installs it: "
                                            "pip install --no-deps omegaconf==2.3.0 antlr4-python3-runtime==4.9.3)")
    root = unpacked(tmp_path_factory, "llm-foundry", "0.22.0") / "llmfoundry"
    saved = {k: v for k, v in sys.modules.items() if k.split(".")[0] == "llmfoundry"}
    for k in list(saved):
        del sys.modules[k]
    for name, sub in (("llmfoundry", ""), ("llmfoundry.models", "models"), ("llmfoundry.models.mpt", "models/mpt"),
                      ("llmfoundry.models.utils", "models/utils"), ("llmfoundry.models.layers", "models/layers"),
                      ("llmfoundry.utils", "utils")):
        namespace(name, root / sub)
    sys.modules["llmfoundry.layers_registry"] = types.SimpleNamespace(ffns_with_megablocks=())
    sys.modules["llmfoundry.models.layers.attention"] = types.SimpleNamespace(
        check_alibi_support=lambda *a, **k: True, is_flash_v2_installed=lambda *a, **k: True)
    try:
        from llmfoundry.models.mpt.configuration_mpt import MPTConfig

        yield types.SimpleNamespace(MPTConfig=MPTConfig, set_config_overrides=_set_config_overrides(root))
    finally:
        for k in [k for k in sys.modules if k.split(".")[0] == "llmfoundry"]:
            del sys.modules[k]
        sys.modules.update(saved)


def _set_config_overrides(root):
    from collections.abc import Mapping

    from transformers import PretrainedConfig

    src = (root / "utils" / "config_utils.py").read_text()
    fn = next(n for n in ast.parse(src).body if isinstance(n, ast.FunctionDef) and n.name == "set_config_overrides")
    ns = {"Mapping": Mapping, "PretrainedConfig": PretrainedConfig, "Any": object}
    exec(compile(ast.Module([fn], []), "llmfoundry/utils/config_utils.py", "exec"), ns)
    return ns["set_config_overrides"]


@pytest.fixture(scope="module")
def hub(tmp_path_factory):
    return fake_hub(tmp_path_factory.mktemp("foundry-hub"))


def model_section(data: dict) -> dict | None:
    """The YAML llm-foundry reads (an mcli file's parameters, when its command reads them), resolved by OmegaConf,
    and the model it builds (the first of an eval file's), or None when it builds none."""
    from omegaconf import OmegaConf

    if isinstance(data.get("parameters"), dict) and isinstance(data.get("command"), str):
        if "/mnt/config/parameters.yaml" not in data["command"]:
            return None  # the command runs another file, or no llm-foundry training / eval at all
        data = data["parameters"]
    cfg = OmegaConf.to_container(OmegaConf.create(data), resolve=True)
    if isinstance(cfg.get("model"), dict):
        return cfg["model"]
    models = cfg.get("models")
    return models[0]["model"] if isinstance(models, list) and models and isinstance(models[0], dict) else None


def mpt_rotary(foundry, model: dict):
    """``(d, base, inverse frequencies, attention factor, max_seq_len)`` of an MPT model, or None without RoPE."""
    import torch

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "alibi or rope is turned on, setting learned_pos_emb to False"
        cfg = foundry.MPTConfig(**{k: v for k, v in model.items() if k != "name"})
    a = cfg.attn_config
    if not a["rope"]:
        return None
    if a["rope_impl"] == "dail":  # flash_attn RotaryEmbedding(dim=d_model // n_heads, base=rope_theta)
        dim = cfg.d_model // cfg.n_heads
        inv = 1.0 / (a["rope_theta"] ** (torch.arange(0, dim, 2, dtype=torch.float32) / dim))
        return dim, float(a["rope_theta"]), inv.tolist(), 1.0, cfg.max_seq_len
    from transformers import LlamaConfig
    from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS

    rs = dict(a["rope_hf_config"])
    rs["rope_type"] = rs.pop("type")
    rs["rope_type"] = "default" if rs["rope_type"] == "no_scaling" else rs["rope_type"]
    llama = LlamaConfig(rope_scaling=rs, rope_theta=a["rope_theta"], max_position_embeddings=cfg.max_seq_len,
                        hidden_size=cfg.d_model, num_attention_heads=cfg.n_heads, head_dim=model.get("head_dim"))
    inv, attention = ROPE_INIT_FUNCTIONS[rs["rope_type"]](llama, "cpu")
    return len(inv) * 2, float(a["rope_theta"]), inv.tolist(), float(attention), cfg.max_seq_len


@pytest.mark.parametrize("rel", FILES + EXTRA)
def test_llmfoundry_reads_its_examples_as_llmfoundry_builds_them(foundry, hub, monkeypatch, rel):
    if rel in EXTRA:
        path = CORPUS / rel
        if not path.is_file():
            pytest.skip(f"{rel} is not in {CORPUS}")
    else:
        path = example("llm-foundry", rel)
    cache, held = hub
    model = model_section(yaml.safe_load(path.read_text()))
    name = model.get("name") if model else None
    if name == "hf_causal_lm":
        repo = model["pretrained_model_name_or_path"]
        if repo not in held:
            pytest.skip(f"{rel} names {repo}, whose config.json is not in the corpus yet "
                        "(tests/corpus/hub_models.json)")
        pytest.fail(f"{rel}: no hf_causal_lm example's model was in the corpus when this test was written: compare it")
    theirs = mpt_rotary(foundry, model) if name == "mpt_causal_lm" else None
    offline_hub(monkeypatch, cache)
    if theirs is None:  # llm-foundry builds no rotary from this file (learned positions, ALiBi, no model, T5)
        with pytest.raises(NotARopeConfig) as exc:
            load_config(str(path))
        assert not isinstance(exc.value, UnreadConfig), str(exc.value)
        return
    d, base, inv, attention, max_seq_len = theirs
    r = lint_config(load_config(str(path)))
    ours = ropelaw_rotary(r)
    assert (ours.d, ours.base, ours.train) == (d, base, max_seq_len)
    same_frequencies(inv, ours.inv_freq)
    assert ours.attention == pytest.approx(attention, rel=1e-12)
