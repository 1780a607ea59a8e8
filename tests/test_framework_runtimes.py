"""Differential tests: the frameworks' own RoPE code, run on CPU, against what ropelaw reads.

Each framework's function is run from its registry package at the pinned version (a wheel under
``$ROPELAW_FRAMEWORK_DL``, as ``pip download --no-deps -d DIR/<name> <name>==<version>`` leaves it;
default ``../shared/dl``), extracted to a temporary directory and imported from there. A test whose
wheel is not present is skipped, naming the wheel; the README's "Development" section says how to
fetch them. Patches made to run on CPU are stated where they are applied.

- megatron-core==0.16.1: ``YarnRotaryEmbedding`` and ``_yarn_get_concentration_factor``
  (``models/common/embeddings/yarn_rotary_pos_embedding.py``); the package imports on CPU without
  Transformer Engine or Apex (it warns); ``get_emb`` moves its buffers to
  ``torch.cuda.current_device()``, patched here to return ``"cpu"``.
- llamafactory==0.9.5: ``configure_rope`` (``model/model_utils/rope.py``), loaded alone (see its fixture).

Not run here, and why:

- llm-foundry==0.22.0 ``gen_rotary_embedding``: ``llmfoundry.models.mpt.modeling_mpt`` imports Composer and
  the rest of the training stack, which are not installed; its ``dail`` path builds flash-attn's
  ``RotaryEmbedding`` (a CUDA build), its ``hf`` path transformers' ``LlamaRotaryEmbedding``, which
  tests/test_hf_differential.py runs against ropelaw's schemes.
- MaxText and Levanter are JAX programs whose configs are read at a source commit (neither is on PyPI at
  that version); their rotary code needs jax, flax / haliax and the fetched sources, which CI does not
  have. tests/test_jax_runtimes.py runs them where ``ROPELAW_JAX_SOURCES`` points at the sources and jax
  is installed.
"""

from __future__ import annotations

import glob
import math
import os
import pathlib
import sys
import zipfile

import pytest

from ropelaw.lint.check import lint_config
from ropelaw.lint.loader import load_config

ROOT = pathlib.Path(__file__).resolve().parents[1]
DL = pathlib.Path(os.environ.get("ROPELAW_FRAMEWORK_DL", ROOT.parent / "shared" / "dl"))


def wheel(package: str, version: str) -> str | None:
    norm = package.replace("-", "_")
    hits = sorted(glob.glob(str(DL / "**" / f"{norm}-{version}-*.whl"), recursive=True))
    return hits[-1] if hits else None


def extracted(tmp_path_factory, package: str, version: str) -> pathlib.Path:
    """The wheel of ``package==version`` unpacked (once per session); skip when it is not under DL."""
    whl = wheel(package, version)
    if whl is None:
        pytest.skip(f"no {package}=={version} wheel under {DL} (pip download --no-deps -d {DL}/{package} "
                    f"{package}=={version}; ROPELAW_FRAMEWORK_DL)")
    out = tmp_path_factory.getbasetemp() / f"{package}-{version}"
    if not out.is_dir():
        zipfile.ZipFile(whl).extractall(out)
    return out


# --------------------------------------------------------------------------------- megatron-core
@pytest.fixture(scope="module")
def megatron_yarn(tmp_path_factory):
    torch = pytest.importorskip("torch")
    root = extracted(tmp_path_factory, "megatron-core", "0.16.1")
    sys.path.insert(0, str(root))
    try:
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "Transformer Engine and Apex are not installed"
            from megatron.core.models.common.embeddings import yarn_rotary_pos_embedding as mod
        yield mod, torch
    finally:
        sys.path.remove(str(root))


# the MLA scripts of NVIDIA/Megatron-LM@d98e8a64 examples/post_training/modelopt/conf: factor, mscale, all_dim
MEGATRON_YARN = {
    "DeepSeek-R1": (40.0, 1.0, 1.0, 10000.0),
    "Kimi-K2-Instruct": (32.0, 1.0, 1.0, 50000.0),
    "DeepSeek-V2-Lite": (40.0, 0.707, 0.707, 10000.0),
    "defaults": (40.0, 1.0, 0.0, 10000.0),
    "odd": (8.0, 0.5, 0.0, 10000.0),  # a lone mscale: Megatron uses it, transformers would not
}


@pytest.mark.parametrize("name", sorted(MEGATRON_YARN))
def test_megatron_yarn_attention_factor_is_megatron_cores(tmp_path, megatron_yarn, name):
    """The attention factor ropelaw reads from a Megatron MLA script is megatron-core's
    _yarn_get_concentration_factor; the frequencies are YarnRotaryEmbedding.get_emb's (float32)."""
    mod, torch = megatron_yarn
    s, m, m_all, base = MEGATRON_YARN[name]
    flags = (f"--num-attention-heads 64 --kv-channels 128 --hidden-size 7168 --multi-latent-attention "
             f"--qk-pos-emb-head-dim 64 --seq-length 4096 --max-position-embeddings 131072 --rotary-base {base:g} "
             f"--rotary-scaling-factor {s:g}")
    if name != "defaults" and name != "odd":
        flags += f" --mscale {m:g} --mscale-all-dim {m_all:g}"
    elif name == "odd":
        flags += f" --mscale {m:g}"
    p = tmp_path / "model.sh"
    p.write_text(f'MODEL_ARGS=" {flags} "\n')
    r = lint_config(load_config(str(p)))
    a = r.layers[0]
    ours = a.scheme_result.attention_factor
    theirs = mod._yarn_get_concentration_factor(s, m, m_all)
    assert ours == theirs  # the same float64 arithmetic, exactly
    if name in ("DeepSeek-R1", "Kimi-K2-Instruct"):
        assert ours == 1.0
    # the constructor, on CPU: use_cpu_initialization, and get_emb's one CUDA call (moving the buffers to
    # torch.cuda.current_device()) patched to stay on the CPU
    real = torch.cuda.current_device
    torch.cuda.current_device = lambda: "cpu"
    try:
        emb = mod.YarnRotaryEmbedding(64, rotary_base=base, scaling_factor=s, original_max_position_embeddings=4096,
                                      beta_fast=32.0, beta_slow=1.0, mscale=m, mscale_all_dim=m_all,
                                      use_cpu_initialization=True)
        freqs, mscale = emb.get_emb(2)
    finally:
        torch.cuda.current_device = real
    assert mscale == theirs
    inv = freqs[1, 0, 0, :32].double().tolist()  # position 1: the inverse frequencies, in float32
    for j, (x, y) in enumerate(zip(inv, a.scheme_result.inv_freq)):
        assert math.isclose(x, float(y), rel_tol=2e-7), (j, x, float(y))  # float32 vs float64


# --------------------------------------------------------------------------------- LLaMA-Factory
@pytest.fixture(scope="module")
def llamafactory_rope(tmp_path_factory):
    """``configure_rope`` from llamafactory==0.9.5 ``model/model_utils/rope.py``, run as LLaMA-Factory runs it.
    Importing the package pulls in trl, peft and the trainers; instead rope.py is loaded alone, its two
    relative imports given: ``extras.logging.get_logger`` (a logger with LLaMA-Factory's ``*_rank0``
    methods) and ``extras.constants.RopeScaling``, the class itself taken from the wheel's constants.py
    (executed alone: the module's other imports are peft and transformers constants)."""
    import ast
    import enum
    import importlib.util
    import logging
    import types

    root = extracted(tmp_path_factory, "llamafactory", "0.9.5")
    const_src = (root / "llamafactory" / "extras" / "constants.py").read_text()
    cls = next(n for n in ast.parse(const_src).body if isinstance(n, ast.ClassDef) and n.name == "RopeScaling")
    ns: dict = {"StrEnum": enum.StrEnum, "unique": enum.unique}
    exec(compile(ast.Module([cls], []), "constants.py", "exec"), ns)
    log = logging.getLogger("llamafactory-test")
    log.warning_rank0 = log.warning
    log.info_rank0 = log.info
    pkg = {"lf": types.ModuleType("lf"), "lf.extras": types.ModuleType("lf.extras"),
           "lf.extras.logging": types.ModuleType("lf.extras.logging"),
           "lf.extras.constants": types.ModuleType("lf.extras.constants"),
           "lf.model": types.ModuleType("lf.model")}
    pkg["lf.extras.logging"].get_logger = lambda name: log
    pkg["lf.extras.constants"].RopeScaling = ns["RopeScaling"]
    for name, mod in pkg.items():
        mod.__path__ = []
        sys.modules[name] = mod
    sys.modules["lf.model.model_utils"] = types.ModuleType("lf.model.model_utils")
    sys.modules["lf.model.model_utils"].__path__ = []
    spec = importlib.util.spec_from_file_location("lf.model.model_utils.rope",
                                                  root / "llamafactory" / "model" / "model_utils" / "rope.py")
    mod = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(mod)
        yield mod.configure_rope, ns["RopeScaling"]
    finally:
        for name in list(pkg) + ["lf.model.model_utils"]:
            sys.modules.pop(name, None)


@pytest.mark.parametrize("kind", ["linear", "dynamic", "yarn", "llama3"])
def test_llamafactory_configure_rope_is_llamafactorys(llamafactory_rope, kind):
    """Over model lengths and cutoffs (within, at, past the model's length; a model whose config already
    has an original length), ropelaw's configure_rope sets exactly the rope_scaling and
    max_position_embeddings LLaMA-Factory's does, and nothing where it disables scaling."""
    import types

    from ropelaw.lint.dialects.llamafactory import configure_rope

    theirs_fn, RopeScaling = llamafactory_rope
    for old, existing in ((4096, None), (32768, None), (40960, None), (8192, {"rope_type": "llama3", "factor": 8.0,
                          "original_max_position_embeddings": 8192})):
        for mml in (2048, old - 1, old, old + 1, 2 * old, 65536, 131072, 262144, 81920):
            cfg = {"max_position_embeddings": 131072 if existing else old, "rope_scaling": existing}
            hf = types.SimpleNamespace(**cfg)
            args = types.SimpleNamespace(rope_scaling=RopeScaling(kind), model_max_length=mml)
            theirs_fn(hf, args)
            change, _ = configure_rope(cfg, kind, mml)
            ours = {**cfg, **(change or {})}
            assert (ours["rope_scaling"], ours["max_position_embeddings"]) == (hf.rope_scaling,
                                                                             hf.max_position_embeddings), (old, mml)
