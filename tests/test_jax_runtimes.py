"""Differential tests against the JAX frameworks' own rotary code: MaxText's ``layers/embeddings.py``
(AI-Hypercomputer/maxtext@e591f30c) and Levanter's ``layers/rotary.py`` (stanford-crfm/levanter@9263f81e),
run on CPU against what ropelaw reads from the same configs.

Neither is on PyPI at the commit whose configs ropelaw reads, and their modules import their whole
frameworks (flax nnx, MaxText's sharding utilities; draccus, equinox, haliax), so the tests run only where
``ROPELAW_JAX_SOURCES`` names a directory holding ``maxtext/layers/embeddings.py`` and
``levanter/layers/rotary.py`` (``git archive <commit> <path>`` of each repository) and, for Levanter,
haliax's ``src/haliax`` (stanford-crfm/haliax@f41e7d40: the PyPI release 1.3 does not import with current
jax), with jax, equinox and draccus installed; otherwise they are skipped, naming what is missing. CI has
neither. Patches, stated where applied: MaxText's rotary classes are taken out of embeddings.py with
:mod:`ast` (their methods and ``__init__`` unchanged) onto a plain class, since their base class
``nnx.Module`` and the sharding helpers only place arrays on devices (``create_sharding`` is given ``None``,
``ShardMode.AUTO``); haliax's ``quantization`` module imports ``aqt`` (int8 training), given as an empty
stand-in: the rotary code does not use it.
"""

from __future__ import annotations

import ast
import math
import os
import pathlib
import types

import pytest

from ropelaw.lint.check import lint_config
from ropelaw.lint.loader import load_config

SOURCES = pathlib.Path(os.environ.get("ROPELAW_JAX_SOURCES", "/nonexistent"))
FIX = pathlib.Path(__file__).resolve().parent / "fixtures" / "frameworks" / "examples"


def _source(rel: str) -> str:
    hits = sorted(SOURCES.glob(f"**/{rel}")) if SOURCES.is_dir() else []
    if not hits:
        pytest.skip(f"no {rel} under ROPELAW_JAX_SOURCES={SOURCES} (git archive of the pinned commit)")
    return hits[0].read_text()


def maxtext_classes(*names: str) -> dict:
    """The named classes of MaxText's embeddings.py, their bodies unchanged, on a plain base class."""
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", False)
    tree = ast.parse(_source("maxtext/layers/embeddings.py"))
    shard = types.SimpleNamespace(AUTO="auto", EXPLICIT="explicit")
    ns = {"jax": jax, "jnp": jnp, "lax": jax.lax, "math": math, "Any": object, "Mesh": object, "DType": object,
          "Array": object, "ShardMode": shard, "nnx": types.SimpleNamespace(Module=object, Rngs=object),
          "create_sharding": lambda *a, **k: None}
    out = {}
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name in ("RotaryEmbedding", *names):
            node.bases = [ast.Name(b.id if isinstance(b, ast.Name) and b.id in out else "object", ast.Load())
                          for b in node.bases]
            node.decorator_list = []
            exec(compile(ast.fix_missing_locations(ast.Module([node], [])), "embeddings.py", "exec"), ns)
            out[node.name] = ns[node.name]
    return out


def test_maxtext_yarn_frequencies_and_scaling_are_maxtexts():
    """gpt-oss-20b's YaRN as MaxText's YarnRotaryEmbedding builds it (d 64, rope_max_timescale 150,000,
    factor 32 from 4,096, rope_truncate false): its float32 freqs_cis angles at position 1 are ropelaw's
    inverse frequencies, and __call__ scales the rotated vector by ropelaw's attention factor
    (rope_attention_scaling); without it, by 1."""
    cls = maxtext_classes("YarnRotaryEmbedding")["YarnRotaryEmbedding"]
    import jax.numpy as jnp
    import numpy as np

    r = lint_config(load_config(str(FIX / "maxtext_gpt-oss-20b.yml")))
    ours = r.layers[0].scheme_result
    for scaling in (True, False):
        emb = cls(embedding_dims=64, mesh=None, max_position_embeddings=8, original_max_position_embeddings=4096,
                  beta_fast=32, beta_slow=1, rope_theta=150000.0, rope_factor=32, interleave=False, truncate=False,
                  attention_scaling=scaling, fprop_dtype=jnp.float32)
        angles = np.angle(np.asarray(emb.freqs_cis[1]))
        np.testing.assert_allclose(angles, np.asarray(ours.inv_freq, dtype=np.float64), rtol=2e-6, atol=0)
        x = jnp.zeros((1, 2, 1, 64), jnp.float32).at[..., 0].set(1.0)
        y = np.asarray(emb(x, jnp.array([[0, 0]])))
        want = ours.attention_factor if scaling else 1.0
        assert abs(float(y[0, 0, 0, 0]) - want) < 1e-6, (scaling, y[0, 0, 0, 0])


def test_maxtext_llama31_bands_are_maxtexts(tmp_path):
    """LLaMARotaryEmbedding.timescale (its hard-coded factor 8, low 1, high 4, original 8,192) against the
    llama3 frequencies ropelaw reads for MaxText's llama3.1-8b (d 128, base 500,000)."""
    import numpy as np

    cls = maxtext_classes("LLaMARotaryEmbedding")["LLaMARotaryEmbedding"]
    p = tmp_path / "llama3.1-8b.yml"
    p.write_text("base_emb_dim: 4096\nbase_num_query_heads: 32\nhead_dim: 128\nrope_max_timescale: 500_000\n"
                 "decoder_block: \"llama2\"\n")
    ours = lint_config(load_config(str(p))).layers[0].scheme_result
    emb = cls(min_timescale=1, max_timescale=500000, mesh=None, embedding_dims=128, use_scale=True)
    timescale = np.asarray(emb.timescale).reshape(-1)[::2]  # each pair's timescale, repeated
    np.testing.assert_allclose(1.0 / timescale, np.asarray(ours.inv_freq, dtype=np.float64), rtol=2e-6, atol=0)


def test_maxtext_linear_factor_is_maxtexts(tmp_path):
    """RotaryEmbedding multiplies its timescales by rope_linear_scaling_factor: position interpolation."""
    import numpy as np

    cls = maxtext_classes()["RotaryEmbedding"]
    p = tmp_path / "gemma3-4b.yml"
    p.write_text("base_emb_dim: 2560\nhead_dim: 256\nrope_max_timescale: 1_000_000\n"
                 "rope_linear_scaling_factor: 8.0\ndecoder_block: \"llama2\"\n")
    ours = lint_config(load_config(str(p))).layers[0].scheme_result
    emb = cls(min_timescale=1, max_timescale=1_000_000, mesh=None, embedding_dims=256, rope_linear_scaling_factor=8.0)
    np.testing.assert_allclose(1.0 / np.asarray(emb.timescale), np.asarray(ours.inv_freq, dtype=np.float64),
                               rtol=2e-6, atol=0)


# ------------------------------------------------------------------------------------------ Levanter
@pytest.fixture(scope="module")
def levanter_rotary():
    """Levanter's layers/rotary.py, imported from the source with haliax from its source (aqt stubbed)."""
    import importlib.abc
    import importlib.machinery
    import importlib.util
    import sys

    pytest.importorskip("jax")
    pytest.importorskip("equinox")
    pytest.importorskip("draccus")
    rotary = _source("levanter/layers/rotary.py")
    hal = sorted(SOURCES.glob("**/haliax/__init__.py"))
    if not hal:
        pytest.skip(f"no haliax source under ROPELAW_JAX_SOURCES={SOURCES}")

    class Stub(importlib.abc.MetaPathFinder, importlib.abc.Loader):
        def find_spec(self, name, path, target=None):
            if name == "aqt" or name.startswith("aqt."):
                return importlib.machinery.ModuleSpec(name, self, is_package=True)

        def create_module(self, spec):
            m = types.ModuleType(spec.name)
            m.__path__ = []
            m.__getattr__ = lambda attr: type(attr, (), {})
            return m

        def exec_module(self, module):
            pass
    stub = Stub()
    sys.meta_path.insert(0, stub)
    sys.path.insert(0, str(hal[0].parent.parent))
    mod = types.ModuleType("levanter_rotary")
    sys.modules["levanter_rotary"] = mod
    try:
        exec(compile(rotary, "rotary.py", "exec"), mod.__dict__)
        yield mod
    finally:
        sys.meta_path.remove(stub)
        sys.modules.pop("levanter_rotary", None)


def _levanter_angles(mod, cfg, d: int, position: int = 1):
    """Each pair's rotation angle at ``position`` and the cos/sin magnitude, from Levanter's own module."""
    import haliax as hax
    import jax.numpy as jnp
    import numpy as np

    head = hax.Axis("head", d)
    pos = hax.Axis("position", position + 1)
    out = []
    for j in range(d // 2):  # a unit vector in pair j: (x_j, x_{j+d/2}) -> rotated by the pair's angle
        q = hax.named(jnp.zeros((position + 1, d), jnp.float32).at[:, j].set(1.0), (pos, head))
        y = np.asarray(cfg.build(head)(q, hax.arange(pos)).array)[position]
        out.append((math.atan2(float(y[j + d // 2]), float(y[j])), math.hypot(float(y[j]), float(y[j + d // 2]))))
    return out


@pytest.mark.parametrize("rope", ['    type: "llama3"', "    type: default\n    theta: 10000",
                                  "    type: linear\n    factor: 4.0",
                                  "    type: yarn\n    factor: 1.0\n    original_max_position_embeddings: 256"])
def test_levanter_rope_is_levanters(tmp_path, levanter_rotary, rope):
    """The pair angles Levanter's rotary applies at position 1 are ropelaw's inverse frequencies for the same
    config (float32), at magnitude 1."""
    import draccus

    text = (f"model:\n  type: llama\n  hidden_dim: 1024\n  num_heads: 16\n  seq_len: 4096\n  rope:\n{rope}\ntrainer:\n "
            " mp: p=f32\n")
    p = tmp_path / "c.yaml"
    p.write_text(text)
    ours = lint_config(load_config(str(p))).layers[0].scheme_result
    import yaml

    block = yaml.safe_load(text)["model"]["rope"]
    cfg = draccus.decode(levanter_rotary.RotaryEmbeddingsConfig, block)
    for j, (angle, mag) in enumerate(_levanter_angles(levanter_rotary, cfg, 64)):
        assert math.isclose(angle, float(ours.inv_freq[j]), rel_tol=3e-6), (j, angle, float(ours.inv_freq[j]))
        assert math.isclose(mag, 1.0, rel_tol=1e-6)


def test_levanter_yarn_past_factor_1_is_not_transformers_yarn(levanter_rotary):
    """Why a Levanter YaRN factor above 1 is RV030: its fastest pair turns 1/factor per token (transformers'
    YaRN keeps it at 1) and its cos/sin magnitude is sqrt(0.1 ln s + 1), not 0.1 ln s + 1."""
    cfg = levanter_rotary.YarnRotaryEmbeddingsConfig(factor=4.0, original_max_position_embeddings=256)
    angles = _levanter_angles(levanter_rotary, cfg, 64)
    assert math.isclose(angles[0][0], 0.25, rel_tol=1e-6)
    assert math.isclose(angles[0][1], math.sqrt(0.1 * math.log(4.0) + 1), rel_tol=1e-6)
