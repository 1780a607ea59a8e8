"""MaxText's own config loading and rotary, run on CPU: maxtext==0.2.4 (the PyPI release closest to the
corpus commit AI-Hypercomputer/maxtext@e591f30c, ten commits later: its configs differ only by
``managed_mldiagnostics_storage_path``; ``layers/``, ``models/`` and ``pyconfig.py`` are the same). The
wheel declares Python >= 3.12; it is downloaded with ``pip download --no-deps --python-version 3.12
--only-binary=:all: maxtext==0.2.4`` and imported from the unpacked wheel under Python 3.11, with jax[cpu].

Patches, stated: modules MaxText imports for checkpoints, data pipelines, serving, TPU pathways and
telemetry (:data:`STUBBED`), none of which the config or the rotary code runs, are stand-ins whose
every attribute is a do-nothing object; each config is composed with ``skip_jax_distributed_system=true``
(a one-host CPU run: MaxText otherwise asks for a coordinator). Everything else is MaxText's code:
``pyconfig.initialize`` (base.yml, the ``base_config`` chain, ``configs/models/<model_name>.yml``,
command-line and keyword overrides, the pydantic ``MaxTextConfig``), ``Attention.init_rotary_embedding``
(called on a namespace holding the attributes ``Attention.__init__`` gives it) and the rotary modules of
``layers/embeddings.py``, applied to unit vectors.
"""

from __future__ import annotations

import glob
import os
import sys
import types
import zipfile

from rotation import pair_angles as measured
from stubs import Stubs

VERSION = "0.2.4"
STUBBED = ("orbax", "tensorstore", "pathwaysutils", "fastapi", "starlette", "opentelemetry", "grain", "tensorflow",
           "transformers", "sentencepiece", "tiktoken", "cloud_tpu_diagnostics", "jetstream",
           "google_cloud_mldiagnostics", "aqt", "tokamax", "qwix", "maxtext.checkpoint_conversion")
CPU = ["skip_jax_distributed_system=true"]


def wheel(dl: str) -> str | None:
    hits = sorted(glob.glob(os.path.join(dl, "**", f"maxtext-{VERSION}-*.whl"), recursive=True))
    return hits[-1] if hits else None


def load(dl: str, workdir: str) -> types.SimpleNamespace:
    """MaxText's pyconfig, attentions and embeddings modules from the wheel under ``dl``."""
    import warnings

    whl = wheel(dl)
    root = os.path.join(workdir, f"maxtext-{VERSION}")
    if not os.path.isdir(root):
        zipfile.ZipFile(whl).extractall(root)
    sys.meta_path.insert(0, Stubs(STUBBED))
    sys.path.insert(0, root)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from maxtext.configs import pyconfig
        from maxtext.layers import attentions, embeddings
    patterns = {m: layer_pattern(os.path.join(root, "maxtext", "models", f"{m}.py"), attentions)
                for m in ("gpt_oss", "gemma3")}
    return types.SimpleNamespace(pyconfig=pyconfig, attentions=attentions, embeddings=embeddings, patterns=patterns,
                                 configs=os.path.join(root, "maxtext", "configs"))


def layer_pattern(path: str, attentions):
    """``get_attention_type`` of a MaxText decoder module and the ``*_ATTENTION_PATTERN`` it reads, taken out
    of the module with :mod:`ast` unchanged (the module itself imports the MoE and checkpointing stack)."""
    import ast

    with open(path, encoding="utf-8") as fh:
        tree = ast.parse(fh.read())
    keep = [n for n in tree.body if (isinstance(n, ast.Assign) and any(getattr(t, "id", "").endswith("_PATTERN")
                                                                       for t in n.targets))
            or (isinstance(n, ast.FunctionDef) and n.name == "get_attention_type")]
    ns = {"AttentionType": attentions.AttentionType, "attentions": attentions}
    exec(compile(ast.Module(keep, []), path, "exec"), ns)
    return ns["get_attention_type"]


# MaxText refuses some model files with base.yml's defaults, naming the setting they need; none of these
# settings touches the rotary: composed again with it (message -> command-line word)
NEEDS = {"requires scan_layers=False": "scan_layers=false", "only supported with dot_product attention":
         "attention=dot_product", "only supported with `dot_product` attention": "attention=dot_product"}


def compose(mx, argv: list[str], **kwargs):
    """``pyconfig.initialize(["train", *argv], **kwargs)`` on one CPU host (MaxText's own composition), with the
    settings of :data:`NEEDS` a refusal names."""
    import logging
    import warnings

    logging.disable(logging.WARNING)
    extra: list[str] = []
    while True:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return mx.pyconfig.initialize(["train", *argv, *CPU, *extra], **kwargs)
        except Exception as exc:
            add = [w for k, w in NEEDS.items() if k in str(exc) and w not in extra]
            if not add:
                raise
            extra += add


def attention_types(mx, cfg) -> list[str]:
    """Each decoder layer's attention type as MaxText's decoder layers give it (``models/gpt_oss.py`` and
    ``models/gemma3.py`` ``get_attention_type``; Gemma 2's layer holds one local and one global attention;
    otherwise ``config.attention_type`` for every layer)."""
    block = str(cfg.decoder_block.value if hasattr(cfg.decoder_block, "value") else cfg.decoder_block)
    n = int(cfg.num_decoder_layers)
    if block in mx.patterns:
        return [str(getattr(t, "value", t)) for t in map(mx.patterns[block], range(n))]
    if block == "gemma2":
        return ["local_sliding", "global"] * n
    return [str(getattr(cfg.attention_type, "value", cfg.attention_type))] * n


def rotary(mx, cfg, attention_type: str):
    """The rotary module ``Attention.init_rotary_embedding`` builds for a layer of ``attention_type``."""
    import jax.numpy as jnp

    rope_type = str(getattr(cfg.rope_type, "value", cfg.rope_type))
    ns = types.SimpleNamespace(
        config=cfg, qk_rope_head_dim=cfg.qk_rope_head_dim, head_dim=cfg.head_dim, rope_type=rope_type.lower(),
        is_vision=False, use_mrope=bool(cfg.use_mrope), rope_max_timescale=cfg.rope_max_timescale,
        mesh=one_device_mesh(cfg), dtype=jnp.float32, rngs=None, mrope_section=getattr(cfg, "mrope_section", None),
        partial_rotary_factor=None, is_qwen3_hybrid=False,
        attention_type=mx.attentions.AttentionType(attention_type))
    return mx.attentions.Attention.init_rotary_embedding(ns)


def one_device_mesh(cfg):
    """A mesh of this one CPU device over the config's mesh axes (``shard_mode: explicit`` places the rotary's
    tables on it)."""
    import jax
    import numpy as np

    axes = tuple(cfg.mesh_axes)
    return jax.sharding.Mesh(np.array(jax.devices()[:1]).reshape((1,) * len(axes)), axes)


def pair_angles(module, d: int) -> tuple[list[float], float]:
    """Each pair's rotation at position 1 (radians, fastest first: ``rotation.pair_angles``) and the magnitude
    the module gives a unit vector, from ``module`` applied to the unit vectors e_0 .. e_{d-1} (as d heads) at
    positions 0 and 1."""
    import jax.numpy as jnp
    import numpy as np

    x = jnp.broadcast_to(jnp.eye(d, dtype=jnp.float32)[None, None], (1, 2, d, d))  # (batch, seq, heads, dim)
    pos = jnp.array([[0, 1]], dtype=jnp.int32)
    y = np.asarray(module(x, pos), dtype=np.float64)[0]  # (seq, heads, dim): row a is e_a's image
    return measured(y[0], y[1]), float(np.linalg.norm(y[0][0]))
