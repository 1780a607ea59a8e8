"""veRL's own config composition on every launch script and Hydra config of volcengine/verl@b178a3cd in the
corpus, against what ropelaw reads: the model trained (``actor_rollout_ref.model.path``), the overrides veRL
applies to its config (``override_config``) and the rollout length (``data.max_prompt_length`` +
``data.max_response_length``, with veRL's defaults).

What runs is veRL's config loading: Hydra 1.3.2 composes ``verl/trainer/config/<config-name>.yaml`` of that very
commit (held in the corpus) with the script's overrides, as ``python3 -m verl.trainer.main_ppo`` does through
``@hydra.main``. veRL's workers (which apply ``override_config`` to the Hugging Face config with
``update_model_config`` and build the model) import Ray, vLLM / SGLang and CUDA kernels and cannot run here; the
model's RoPE is the Hugging Face config transformers builds (tests/test_hf_differential.py), so the comparison
stops at the model's name and the config keys veRL overrides, ``tests/configs/llama-2-7b.json`` standing in for the
model to read the lengths. The overrides are the script's ``key=value`` words as ropelaw's shell reader expands
them (variables, ``$((...))``; the script is never run).

Runs where ``hydra`` imports (the CI step "NeMo and OpenRLHF" installs hydra-core==1.3.2 beside omegaconf).
"""

from __future__ import annotations

import csv
import os
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
CORPUS = pathlib.Path(os.environ.get("ROPELAW_CORPUS", ROOT.parent / "shared" / "corpus"))
VERL = CORPUS / "frameworks-examples" / "verl"
STAND_IN = str(ROOT / "tests" / "configs" / "llama-2-7b.json")


def scripts() -> list[str]:
    src = CORPUS / "frameworks-examples" / "SOURCES.tsv"
    if not src.is_file():
        return []
    with open(src, encoding="utf-8") as fh:
        return sorted(r["path"] for r in csv.DictReader(fh, delimiter="\t")
                      if r["framework"] == "verl" and r["path"].endswith(".sh"))


def verl_config(path: pathlib.Path):
    """``(veRL's composed config, the overrides left out)`` for the script, or None when it runs no
    ``verl.trainer`` entry point."""
    from hydra import compose, initialize_config_dir

    from ropelaw.lint.dialects.verl import launch_overrides
    from ropelaw.lint.dialects.megatron import shell_commands, substitute

    text = path.read_text()
    got = launch_overrides(text)
    if got is None:
        return None
    _, _, module, overrides = got
    words, env = next((w, e) for _, _, w, e in shell_commands(text) if module in w)
    words = [substitute(w, env) or w for w in words]
    name = next((w.split("=", 1)[1] for w in words if w.startswith("--config-name=")),
                next((words[i + 1] for i, w in enumerate(words[:-1]) if w == "--config-name"), None))
    default = "sft_trainer" if "sft" in module else "generation" if "generation" in module else "ppo_trainer"
    name = (name or default).strip("'\"").removesuffix(".yaml")
    keep = [o for o in overrides if "$" not in o]  # a value from the environment: any value veRL accepts
    config_dir = VERL / "verl" / "trainer" / "config"
    if not (config_dir / f"{name}.yaml").is_file():  # --config-path of an example's own configs ($PROJECT_DIR/...)
        config_dir = next((p.parent for p in sorted((VERL / "examples").rglob(f"{name}.yaml"))), config_dir)
    here = os.getcwd()
    os.chdir(VERL)  # the examples' hydra.searchpath is file://verl/trainer/config, from the repository's root
    try:
        with initialize_config_dir(config_dir=str(config_dir), version_base=None):
            return compose(config_name=name, overrides=keep), [o for o in overrides if "$" in o]
    finally:
        os.chdir(here)


@pytest.mark.parametrize("script", scripts())
def test_verl_script(script):
    pytest.importorskip("hydra", reason="the CI step 'NeMo and OpenRLHF' installs hydra-core==1.3.2 beside the suite")
    from omegaconf import OmegaConf

    from ropelaw.lint.loader import ModelNeeded, NotARopeConfig, load_config

    path = VERL / script
    if not path.is_file():
        pytest.skip(f"volcengine/verl@b178a3cd {script} is not under {CORPUS} yet")
    try:
        got = verl_config(path)
    except Exception as exc:  # noqa: BLE001  Hydra refuses the overrides: so does veRL
        pytest.xfail(f"veRL's Hydra refuses the script's overrides: {type(exc).__name__}: {str(exc)[:120]}")
    if got is None:
        with pytest.raises(NotARopeConfig):
            load_config(str(path))
        return
    cfg, from_environment = got
    sft = "model" in cfg and "partial_pretrain" in cfg.model
    generation = "actor_rollout_ref" not in cfg and "model" in cfg and "path" in cfg.model  # main_generation
    model = cfg.model.partial_pretrain if sft else cfg.model.path if generation else cfg.actor_rollout_ref.model.path
    env_model = next((o.split("=", 1)[1] for o in from_environment
                      if o.lstrip("+").split("=")[0] in ("actor_rollout_ref.model.path", "model.partial_pretrain")),
                      None)
    try:
        alone = load_config(str(path))
        assert model in alone.layers[0].base.note
    except ModelNeeded as named:  # named as the script writes it when it comes from the environment
        assert repr(env_model if env_model is not None else model) in str(named)
    ours = load_config(str(path), model_config=STAND_IN)
    if generation:  # inference only: prompts cut at rollout.prompt_length, up to response_length more tokens
        assert ours.tune_len is None
        assert ours.target.raw == cfg.rollout.prompt_length + cfg.rollout.response_length
        return
    if sft:
        assert ours.tune_len.raw == cfg.data.max_length
        return
    assert ours.tune_len.raw == ours.target.raw == cfg.data.max_prompt_length + cfg.data.max_response_length
    node = cfg.actor_rollout_ref.model.get("override_config")
    over = OmegaConf.to_container(node, resolve=True) if node is not None else {}
    flat = {**{k: v for k, v in over.items() if k != "model_config"}, **(over.get("model_config") or {})}
    for key, value in flat.items():  # every key veRL sets on the model's config: read, or named in a note
        if key == "max_position_embeddings":
            assert any(f"max_position_embeddings {value!r} lets the model" in n for n in ours.notes)


def yaml_configs() -> list[str]:
    src = CORPUS / "frameworks-examples" / "SOURCES.tsv"
    if not src.is_file():
        return []
    with open(src, encoding="utf-8") as fh:
        return sorted(r["path"] for r in csv.DictReader(fh, delimiter="\t")
                      if r["framework"] == "verl" and r["path"].endswith((".yaml", ".yml")))


@pytest.mark.parametrize("config", yaml_configs())
def test_verl_yaml(config):
    """Every YAML of veRL in the corpus composed by Hydra as its primary config (what ``--config-name`` does):
    a config that composes to an ``actor_rollout_ref`` is read by ropelaw as veRL (RV031 naming the model veRL
    trains, its default one included) with the rollout length veRL composes; one that does not (a component
    of a config group, a tool or Ray file) is not read as a model."""
    pytest.importorskip("hydra", reason="the CI step 'NeMo and OpenRLHF' installs hydra-core==1.3.2 beside the suite")
    from hydra import compose, initialize_config_dir

    from ropelaw.errors import UsageError
    from ropelaw.lint.loader import ModelNeeded, NotARopeConfig, load_config

    path = VERL / config
    if not path.is_file():
        pytest.skip(f"volcengine/verl@b178a3cd {config} is not under {CORPUS} yet")
    here = os.getcwd()
    os.chdir(VERL)
    try:
        with initialize_config_dir(config_dir=str(path.parent), version_base=None):
            cfg = compose(config_name=path.stem)
        composed = "actor_rollout_ref" in cfg and "model" in cfg.actor_rollout_ref
    except Exception:  # noqa: BLE001  not a primary config veRL can be launched with
        composed = False
    finally:
        os.chdir(here)
    if not composed:
        with pytest.raises((NotARopeConfig, UsageError)):
            load_config(str(path))
        return
    model = cfg.actor_rollout_ref.model.path
    with pytest.raises(ModelNeeded) as named:
        load_config(str(path))
    assert repr(model) in str(named.value)
    ours = load_config(str(path), model_config=STAND_IN)
    assert ours.tune_len.raw == cfg.data.max_prompt_length + cfg.data.max_response_length


@pytest.mark.parametrize("script", [s for s in scripts() if "/generation/" in s])
@pytest.mark.parametrize("mutation", ["drop rollout.prompt_length", "rollout.response_length=30000",
                                      "drop both"])
def test_main_generation_lengths_mutated(script, mutation, tmp_path):
    """veRL's main_generation scripts with their lengths changed: Hydra composes generation.yaml with the
    mutated overrides (a dropped key: generation.yaml's default), and ropelaw's length must be their
    prompt_length + response_length (main_generation.py line 109, vllm_async_server.py line 472)."""
    pytest.importorskip("hydra", reason="the CI step 'NeMo and OpenRLHF' installs hydra-core==1.3.2 beside the suite")
    from ropelaw.lint.loader import load_config

    path = VERL / script
    if not path.is_file():
        pytest.skip(f"volcengine/verl@b178a3cd {script} is not under {CORPUS} yet")
    lines = path.read_text().split("\n")
    if mutation.startswith("drop"):
        gone = ("rollout.prompt_length=",) if "prompt" in mutation else ("rollout.prompt_length=",
                                                                         "rollout.response_length=")
        lines = [ln for ln in lines if not ln.strip().startswith(gone)]
    else:
        lines = [("    " + mutation + " \\") if ln.strip().startswith("rollout.response_length=") else ln
                 for ln in lines]
    copy = tmp_path / pathlib.Path(script).name
    copy.write_text("\n".join(lines))
    cfg, _ = verl_config(copy)
    ours = load_config(str(copy), model_config=STAND_IN)
    assert ours.tune_len is None
    assert ours.target.raw == cfg.rollout.prompt_length + cfg.rollout.response_length
