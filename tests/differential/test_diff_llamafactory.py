"""LLaMA-Factory's own config loading on every example config of its repository (hiyouga/LLaMA-Factory@ff6d4d12,
2026-08-18; pinned: llamafactory==0.9.5, the release 54 commits before it) against ropelaw's reading.

From the wheel, run unchanged on CPU: the argument dataclasses (``hparams/model_args.py``, ``data_args.py``,
``finetuning_args.py``; v1: ``v1/config/model_args.py``, ``training_args.py``) parsed by transformers'
``HfArgumentParser.parse_dict`` as ``hparams/parser.py`` does; ``model/loader.py`` ``load_config``
(``AutoConfig.from_pretrained(model_name_or_path, revision=model_revision, ...)``) and
``model/model_utils/rope.py`` ``configure_rope`` on it. The model's config.json comes from a fake Hugging Face
cache of real config.json files (tests/corpus/hub_models.json) with ``HF_HUB_OFFLINE=1``; an example naming a
model whose file is not in the corpus is skipped, naming it. The rotary is transformers' own
(the text model's ``*RotaryEmbedding`` class of the installed version, built from its config).

Not run, and stubbed: the package ``__init__`` modules (they import trl, peft, the trainers); ``peft.utils``'s two
file-name constants that ``extras/constants.py`` imports; ``omegaconf`` (``model_args.py`` uses it only for
``new_special_tokens_config``); ``extras/misc.py``'s ``skip_check_imports`` and
``try_download_model_from_other_hub`` (identity without ``USE_MODELSCOPE_HUB`` / ``USE_OPENMIND_HUB``). Of
``get_train_args`` / ``get_infer_args`` (which check GPUs, DeepSpeed and dependencies) the lines that set
``model_args.model_max_length`` are mirrored: ``cutoff_len`` for training (parser.py 518), for an export on CPU
only a non-default ``cutoff_len`` (563-565), none for inference. transformers: the installed 4.57.1 (llamafactory
0.9.5 accepts 4.55 to 5.6).
"""

from __future__ import annotations

import ast
import sys
import types

import pytest
import yaml

from frameworks import (example, example_files, fake_hub, namespace, offline_hub, ropelaw_rotary, same_frequencies,
                        refused_by_transformers, transformers_rotary, unpacked)
from ropelaw.lint.check import lint_config
from ropelaw.lint.loader import NotARopeConfig, load_config

FILES = example_files("LLaMA-Factory")
MODULES = ("llamafactory", "peft", "omegaconf")


@pytest.fixture(scope="module")
def lf(tmp_path_factory):
    pytest.importorskip("transformers")
    root = unpacked(tmp_path_factory, "llamafactory", "0.9.5") / "llamafactory"
    saved = {k: v for k, v in sys.modules.items() if k.split(".")[0] in MODULES}
    for k in list(saved):
        del sys.modules[k]
    for name, sub in (("llamafactory", ""), ("llamafactory.extras", "extras"), ("llamafactory.hparams", "hparams"),
                      ("llamafactory.model", "model"), ("llamafactory.model.model_utils", "model/model_utils"),
                      ("llamafactory.v1", "v1"), ("llamafactory.v1.config", "v1/config"),
                      ("llamafactory.v1.utils", "v1/utils")):
        namespace(name, root / sub)
    peft = namespace("peft")
    peft.utils = types.SimpleNamespace(SAFETENSORS_WEIGHTS_NAME="adapter_model.safetensors",
                                       WEIGHTS_NAME="adapter_model.bin")
    sys.modules["peft.utils"] = peft.utils
    sys.modules["omegaconf"] = types.SimpleNamespace(OmegaConf=None)
    try:
        import llamafactory.extras.constants  # noqa: F401  (with the peft stub: then the stub goes, before transformers
        for k in ("peft", "peft.utils"):     # 5.x's training_args asks whether peft is installed)
            sys.modules.pop(k, None)
        from llamafactory.hparams.data_args import DataArguments
        from llamafactory.hparams.finetuning_args import FinetuningArguments
        from llamafactory.hparams.model_args import ModelArguments
        from llamafactory.model.model_utils.rope import configure_rope
        from llamafactory.v1.config.model_args import ModelArguments as V1Model
        from llamafactory.v1.config.training_args import TrainingArguments as V1Training

        sys.modules.pop("omegaconf", None)

        yield types.SimpleNamespace(v0=(ModelArguments, DataArguments, FinetuningArguments), v1=(V1Model, V1Training),
                                    configure_rope=configure_rope, load_config=_load_config(root))
    finally:
        for k in [k for k in sys.modules if k.split(".")[0] in MODULES]:
            del sys.modules[k]
        sys.modules.update(saved)


def _load_config(root):
    """``model/loader.py``'s ``_get_init_kwargs`` and ``load_config``, taken from its source alone."""
    from transformers import AutoConfig

    src = (root / "model" / "loader.py").read_text()
    fns = [n for n in ast.parse(src).body if isinstance(n, ast.FunctionDef) and n.name in ("_get_init_kwargs",
                                                                                            "load_config")]
    ns = {"AutoConfig": AutoConfig, "Any": object, "skip_check_imports": lambda: None,
          "try_download_model_from_other_hub": lambda args: args.model_name_or_path}
    exec(compile(ast.Module(fns, []), "llamafactory/model/loader.py", "exec"), ns)
    return ns["load_config"]


@pytest.fixture(scope="module")
def hub(tmp_path_factory):
    return fake_hub(tmp_path_factory.mktemp("lf-hub"))


def llamafactory_run(lf, data: dict):
    """``(config after configure_rope, model_max_length)`` as LLaMA-Factory builds them, or None when the file
    is not a LLaMA-Factory model config (an accelerate / DeepSpeed file)."""
    from transformers import HfArgumentParser

    if isinstance(data.get("model"), str):  # v1: v1/config/arg_parser.py, v1/core/model_engine.py
        model_args, training = HfArgumentParser(lf.v1).parse_dict(data, allow_extra_keys=True)
        from transformers import AutoConfig

        return AutoConfig.from_pretrained(model_args.model, trust_remote_code=model_args.trust_remote_code), \
            training.cutoff_len
    if not isinstance(data.get("model_name_or_path"), str):
        return None
    model_args, data_args, finetuning = HfArgumentParser(lf.v0).parse_dict(data, allow_extra_keys=True)
    exporting = model_args.export_dir is not None and model_args.export_device == "cpu" and "cutoff_len" in data
    if "stage" in data or "do_train" in data or exporting:  # training, or an export on CPU with a cutoff
        model_args.model_max_length = data_args.cutoff_len
    config = lf.load_config(model_args)
    lf.configure_rope(config, model_args)
    return config, model_args.model_max_length


@pytest.mark.parametrize("rel", FILES)
def test_llamafactory_reads_its_examples_as_llamafactory_runs_them(lf, hub, monkeypatch, rel):
    path = example("LLaMA-Factory", rel)
    cache, held = hub
    data = yaml.safe_load(path.read_text()) if path.suffix in (".yaml", ".yml") else None
    name = (data.get("model") or data.get("model_name_or_path")) if isinstance(data, dict) else None
    if isinstance(name, str) and name not in held:
        pytest.skip(f"{rel} names {name}, whose config.json is not in the corpus yet (tests/corpus/hub_models.json)")
    offline_hub(monkeypatch, cache)
    run = llamafactory_run(lf, data) if isinstance(data, dict) else None
    if run is None:  # LLaMA-Factory builds no model from it: ropelaw reads no RoPE from it either
        with pytest.raises(NotARopeConfig):
            load_config(str(path))
        return
    config, mml = run
    r = lint_config(load_config(str(path)))
    if refused_by_transformers(config, r):
        return
    theirs, attention = transformers_rotary(config)
    ours = ropelaw_rotary(r)
    same_frequencies(theirs, ours.inv_freq)
    assert ours.attention == pytest.approx(attention, rel=1e-12)
    assert ours.tune == mml and r.config.model.source == "hf-cache"
