"""torchtune's own model builders on every recipe config of its repository (pytorch/torchtune@bd2a0fc7,
2026-04-23; pinned: torchtune==0.6.1, the last release, 2025-04-07: the commit is 220 commits later, and its
Qwen3 builders are not in 0.6.1) against ropelaw's reading.

What torchtune does with a recipe, run here on CPU: OmegaConf loads it (``config/_parse.py``; omegaconf==2.3.0,
torchtune's own dependency) and ``torchtune.config.instantiate`` builds ``model`` (a PPO recipe:
``policy_model``) from its ``_component_`` with the YAML's arguments, under ``torch.device("meta")`` (no weights
are allocated: a 405B model is built in seconds). The rotary modules of the built model
(``RotaryPositionalEmbeddings``, ``Llama3ScaledRoPE``, ...) are re-initialised on the CPU with their own
``rope_init`` (the cache for 2 positions) and their ``theta`` compared with ropelaw's frequencies.

Stubbed, and why: the package ``__init__`` (it requires torchao); modules torchtune imports for data, tokenizers
and quantisation and never calls to build a model: torchao, torchdata, datasets, sentencepiece, tiktoken,
blobfile, kagglehub, PIL, psutil, tokenizers, torchvision (CLIP's image transforms) (an import of them gets a \
placeholder module; torchao's ``to_nf4``,
which a QLoRA builder calls on the frozen weights, is the identity). A recipe whose
builder is not in torchtune 0.6.1 cannot be built by it, and ropelaw must not claim to have read it.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
import types

import pytest

from frameworks import example, example_files, namespace, ropelaw_rotary, same_frequencies, unpacked
from ropelaw.lint.check import lint_config
from ropelaw.lint.loader import NotARopeConfig, UnreadConfig, load_config

FILES = example_files("torchtune")
STUBBED = ("torchao", "torchdata", "datasets", "sentencepiece", "tiktoken", "blobfile", "kagglehub", "PIL", "psutil",
           "tokenizers", "torchvision")
MODEL_KEYS = ("model", "policy_model")
# QLoRA builders quantise the frozen base weights with torchao's to_nf4 while building: identity here (the rotary
# does not depend on the weights' format)
EXPLICIT = {"torchao.dtypes.nf4tensor": {"to_nf4": lambda tensor, *args, **kwargs: tensor}}


class _Placeholder(types.ModuleType):
    """A module of a stubbed package: any name is a class that accepts anything (never called to build a model)."""

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return type(name, (), {"__init__": lambda self, *a, **k: None, "__call__": lambda self, *a, **k: None,
                               "__class_getitem__": classmethod(lambda cls, item: cls)})


class _Stubs(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, name, path, target=None):
        if name.split(".")[0] in STUBBED:
            return importlib.machinery.ModuleSpec(name, self, is_package=True)
        return None

    def create_module(self, spec):
        mod = _Placeholder(spec.name)
        mod.__path__ = []
        for name, value in EXPLICIT.get(spec.name, {}).items():
            setattr(mod, name, value)
        return mod

    def exec_module(self, module):
        pass


@pytest.fixture(scope="module")
def torchtune(tmp_path_factory):
    torch = pytest.importorskip("torch")
    pytest.importorskip("omegaconf", reason="omegaconf==2.3.0 not installed (the .ci/run step installs it)")
    root = unpacked(tmp_path_factory, "torchtune", "0.6.1") / "torchtune"
    keep = {k: v for k, v in sys.modules.items() if k.split(".")[0] in ("torchtune",) + STUBBED}
    for k in keep:
        del sys.modules[k]
    finder = _Stubs()
    sys.meta_path.insert(0, finder)
    namespace("torchtune", root)
    try:
        from torchtune import config

        yield types.SimpleNamespace(config=config, torch=torch)
    finally:
        sys.meta_path.remove(finder)
        for k in [k for k in sys.modules if k.split(".")[0] in ("torchtune",) + STUBBED]:
            del sys.modules[k]
        sys.modules.update(keep)


def rotaries(tt, model) -> list:
    """``(class, dim, base, max_seq_len, theta)`` of each distinct rotary module of a model built on meta, its
    ``theta`` recomputed on the CPU by the module's own ``rope_init`` (with a 2-position cache)."""
    out = {}
    for name, m in model.named_modules():
        if not (hasattr(m, "rope_init") and hasattr(m, "base") and hasattr(m, "dim")) or "encoder" in name:
            continue  # the vision encoder's rotary is not the language model's
        key = (type(m).__name__, m.dim, float(m.base), m.max_seq_len,
               tuple(getattr(m, k, None) for k in ("scale_factor", "low_freq_factor", "high_freq_factor",
                                                   "old_context_len")))
        if key not in out:
            full = m.max_seq_len
            m.max_seq_len = 2
            with tt.torch.device("cpu"):
                m.rope_init()
            m.max_seq_len = full
            out[key] = [float(x) for x in m.theta]
    return [(*k[:4], theta) for k, theta in out.items()]


def build(tt, cfg):
    """``(model, section)`` torchtune builds from the recipe; ``("unknown", section)`` when torchtune 0.6.1 has no
    such builder; ``(None, None)`` without a model. Warnings of torchtune's own imports (a deprecated import path
    in phi4) are not errors here."""
    import warnings

    section = next((k for k in MODEL_KEYS if k in cfg), None)
    if section is None:
        return None, None
    try:
        with warnings.catch_warnings(), tt.torch.device("meta"):
            warnings.simplefilter("ignore")
            return tt.config.instantiate(cfg[section]), section
    except tt.config._errors.InstantiationError as exc:
        if isinstance(exc.__cause__ or exc.__context__, (AttributeError, ModuleNotFoundError)):
            return "unknown", section
        raise


@pytest.mark.parametrize("rel", FILES)
def test_torchtune_reads_its_recipes_as_torchtune_builds_them(torchtune, rel):
    from omegaconf import OmegaConf

    path = example("torchtune", rel)
    cfg = OmegaConf.load(path)
    model, section = build(torchtune, cfg)
    if model is None:  # no model in the recipe (a dataset / generation helper): nothing to read
        with pytest.raises(NotARopeConfig):
            load_config(str(path))
        return
    if model == "unknown":  # torchtune 0.6.1 cannot build it: ropelaw says it did not read it (RV030), never "ok"
        with pytest.raises(UnreadConfig):
            load_config(str(path))
        return
    found = rotaries(torchtune, model)
    assert len(found) == 1, found
    cls, dim, base, max_seq_len, theta = found[0]
    r = lint_config(load_config(str(path)))
    ours = ropelaw_rotary(r)
    assert (ours.d, ours.base, ours.target) == (dim, base, max_seq_len), cls
    same_frequencies(theta, ours.inv_freq)
    tok = OmegaConf.select(cfg, "tokenizer.max_seq_len")
    if tok is not None:
        assert ours.train == tok
