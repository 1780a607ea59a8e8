"""litgpt's own code on every config of its repository's config_hub (Lightning-AI/litgpt@26857050, the commit
of litgpt==0.5.13: no gap) against ropelaw's reading.

litgpt==0.5.13 from its wheel: ``litgpt/config.py`` (``Config``, ``from_name``, ``from_file``), ``litgpt/args.py``
(``TrainArgs``), ``litgpt/utils.py``'s ``save_config`` and ``litgpt/model.py`` (``GPT.rope_cache``,
``build_rope_cache``) run unchanged on CPU. The package's ``__init__`` (which imports Lightning) is not run;
``model.py``'s one import outside these, ``litgpt.scripts.convert_hf_checkpoint.qkv_reassemble`` (weight
conversion, not the rotary), is a stub.

What litgpt does with a config (its CLI hands the YAML's keys to ``pretrain.setup`` / ``finetune/*.setup``):

- pre-training (``model_name``): ``Config(**model_config)`` when given, else ``Config.from_name(model_name)``; the
  model runs at ``train.max_seq_length`` (``pretrain.py``: ``model.max_seq_length = train.max_seq_length``), else
  at ``block_size``;
- fine-tuning (``checkpoint_dir``): ``Config.from_file(checkpoint_dir / "model_config.yaml")``, the file
  ``litgpt download`` writes (``convert_hf_checkpoint``: ``save_config(Config.from_name(checkpoint_dir.name))``):
  made here the same way in a temporary checkpoint directory; the run is capped at ``train.max_seq_length``
  (``finetune/lora.py``: ``min(longest sample, train.max_seq_length)``), within ``block_size``.

The rotary is ``GPT.rope_cache``'s: the angle of position 1 (``atan2(sin, cos)``, float32) is each pair's
inverse frequency, the magnitude at position 0 the attention factor.
"""

from __future__ import annotations

import math
import sys
import types

import pytest
import yaml

from frameworks import example, example_files, namespace, ropelaw_rotary, same_frequencies, unpacked
from ropelaw.lint.check import lint_config
from ropelaw.lint.loader import load_config

FILES = example_files("litgpt")


@pytest.fixture(scope="module")
def litgpt(tmp_path_factory):
    torch = pytest.importorskip("torch")
    root = unpacked(tmp_path_factory, "litgpt", "0.5.13")
    saved = {k: v for k, v in sys.modules.items() if k == "litgpt" or k.startswith("litgpt.")}
    namespace("litgpt", root / "litgpt")
    namespace("litgpt.scripts", root / "litgpt" / "scripts")
    stub = types.ModuleType("litgpt.scripts.convert_hf_checkpoint")
    stub.qkv_reassemble = None  # weight conversion: never called for the rotary
    sys.modules[stub.__name__] = stub
    try:
        import litgpt.config as config
        import litgpt.model as model
        from litgpt.args import TrainArgs

        yield types.SimpleNamespace(Config=config.Config, GPT=model.GPT, TrainArgs=TrainArgs, torch=torch,
                                    save_config=_save_config(root))
    finally:
        for k in [k for k in sys.modules if k == "litgpt" or k.startswith("litgpt.")]:
            del sys.modules[k]
        sys.modules.update(saved)


def _save_config(root):
    """``litgpt.utils.save_config`` (utils.py imports Lightning: the function is taken from its source alone)."""
    import ast

    src = (root / "litgpt" / "utils.py").read_text()
    fn = next(n for n in ast.parse(src).body if isinstance(n, ast.FunctionDef) and n.name == "save_config")
    ns = {"asdict": __import__("dataclasses").asdict, "yaml": yaml, "Path": __import__("pathlib").Path}
    exec(compile(ast.Module([fn], []), "litgpt/utils.py", "exec"), ns)
    return ns["save_config"]


def litgpt_run(lg, data: dict, tmp_path):
    """``(Config, length the model runs at, tuning cap or None)`` as litgpt's setup gets them."""
    import warnings

    with warnings.catch_warnings():  # TrainArgs warns about schedules (lr_warmup_steps > max_steps): not the rotary
        warnings.simplefilter("ignore")
        train = lg.TrainArgs(**{k: v for k, v in (data.get("train") or {}).items()
                                if k in lg.TrainArgs.__dataclass_fields__})
    if data.get("checkpoint_dir"):
        ck = tmp_path / data["checkpoint_dir"]
        ck.mkdir(parents=True)
        lg.save_config(lg.Config.from_name(ck.name), ck)  # what `litgpt download` leaves there
        cfg = lg.Config.from_file(ck / "model_config.yaml")
        return cfg, None, train.max_seq_length
    cfg = lg.Config(**data["model_config"]) if data.get("model_config") else lg.Config.from_name(data["model_name"])
    return cfg, train.max_seq_length or cfg.block_size, None


def rotary(lg, cfg):
    """``(inverse frequencies, attention factor)`` of ``GPT.rope_cache`` (float32, CPU)."""
    cos, sin = lg.GPT.rope_cache(types.SimpleNamespace(config=cfg, max_seq_length=2), device="cpu")
    half = cfg.rope_n_elem // 2
    theta = lg.torch.atan2(sin[1, :half].double(), cos[1, :half].double()).tolist()
    return theta, math.hypot(float(cos[0, 0]), float(sin[0, 0]))


@pytest.mark.parametrize("rel", FILES)
def test_litgpt_reads_its_config_hub_as_litgpt_runs_it(litgpt, tmp_path, monkeypatch, rel):
    path = example("litgpt", rel)
    data = yaml.safe_load(path.read_text())
    cfg, runs_at, tune = litgpt_run(litgpt, data, tmp_path)
    theirs, attention = rotary(litgpt, cfg)
    monkeypatch.chdir(tmp_path)  # checkpoint_dir is relative: the directory litgpt download made
    for where in ("model_config.yaml", "named Config"):
        if where == "named Config" and data.get("checkpoint_dir"):
            import shutil

            shutil.rmtree(tmp_path / data["checkpoint_dir"])  # no download: ropelaw reads litgpt's named Config
        r = lint_config(load_config(str(path)))
        ours = ropelaw_rotary(r)
        assert ours.d == cfg.rope_n_elem and ours.base == cfg.rope_base, where
        same_frequencies(theirs, ours.inv_freq)
        assert math.isclose(ours.attention, attention, rel_tol=1e-6), where
        assert ours.target == cfg.block_size, where
        if runs_at is not None:
            assert ours.train == runs_at, where
        else:
            assert ours.tune == tune, where
        if not data.get("checkpoint_dir"):
            break
