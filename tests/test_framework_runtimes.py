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
    for j, (x, y) in enumerate(zip(inv, a.scheme_result.inv_freq, strict=True)):
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


# --------------------------------------------------------------------------------- Megatron --enable-gpt-oss
CORPUS = pathlib.Path(os.environ.get("ROPELAW_CORPUS", ROOT.parent / "shared" / "corpus"))
# NVIDIA/Megatron-LM@d98e8a64ddf34856e74b24714e3bedb2f5a39553: the two ModelOpt scripts with --enable-gpt-oss
# (the 20b one is not in the corpus yet: recorded in tests/differential/megatron_examples.json)
GPT_OSS_SCRIPTS = {
    "examples/post_training/modelopt/conf/openai/gpt-oss-120b.sh":
        "frameworks-examples/Megatron-LM/examples/post_training/modelopt/conf/openai/gpt-oss-120b.sh",
    "examples/post_training/modelopt/conf/openai/gpt-oss-20b.sh":
        "frameworks-examples/Megatron-LM/examples/post_training/modelopt/conf/openai/gpt-oss-20b.sh",
}


@pytest.mark.parametrize("script", sorted(GPT_OSS_SCRIPTS))
def test_megatron_gpt_oss_builder_yarn_is_megatron_cores(megatron_yarn, script):
    """``--enable-gpt-oss`` (Megatron-LM's ModelOpt builder sets YaRN x32, original 131,072, beta 32 / 1, mscale
    1 / 0, correction range not rounded; GPTModel builds ``YarnRotaryEmbedding(kv_channels, rotary_base=--rotary-base,
    ...)`` from it): ropelaw's frequencies and attention factor are those of megatron-core's YarnRotaryEmbedding
    built with the same arguments, on CPU. Was "'learned_absolute' is not RoPE", exit 0."""
    from ropelaw.lint.dialects._megatron_yarn import GPT_OSS_YARN

    path = CORPUS / GPT_OSS_SCRIPTS[script]
    if not path.is_file():
        pytest.skip(f"NVIDIA/Megatron-LM@d98e8a64 {script} is not under {CORPUS} yet")
    mod, torch = megatron_yarn
    r = lint_config(load_config(str(path)))
    global_layers = r.layers[0]
    assert (global_layers.spec.d, global_layers.spec.base, global_layers.spec.scheme) == (64, 150000.0, "yarn")
    assert [f.code for f in r.findings if f.severity != "info"] == ["RL102"]  # 40,960 tokens past YaRN's bound
    y = GPT_OSS_YARN
    real = torch.cuda.current_device
    torch.cuda.current_device = lambda: "cpu"  # get_emb moves its buffers to the GPU: kept on the CPU
    try:
        emb = mod.YarnRotaryEmbedding(64, rotary_base=150000, scaling_factor=y["factor"],
                                      original_max_position_embeddings=y["original_max_position_embeddings"],
                                      beta_fast=y["beta_fast"], beta_slow=y["beta_slow"], mscale=y["mscale"],
                                      mscale_all_dim=y["mscale_all_dim"],
                                      correction_range_round_to_int=y["truncate"], use_cpu_initialization=True)
        freqs, mscale = emb.get_emb(2)
    finally:
        torch.cuda.current_device = real
    assert global_layers.scheme_result.attention_factor == mscale == pytest.approx(0.1 * math.log(32) + 1, abs=0)
    assert round(mscale, 4) == 1.3466
    # the ramp's ends, unrounded (float64 on both sides): exactly megatron-core's
    low, high = mod._yarn_find_correction_range(y["beta_fast"], y["beta_slow"], 64, 150000,
                                                y["original_max_position_embeddings"], False)
    assert dict(global_layers.scheme_result.details)["correction_range"] == pytest.approx((low, high), rel=1e-15)
    assert (math.floor(low), math.ceil(high)) == (17, 27)  # pairs 18-26 in the ramp, 0-17 kept, 27-31 divided by 32
    inv = freqs[1, 0, 0, :32].double().tolist()
    # megatron-core computes in float32, ropelaw in float64: outside the ramp within 2 ulps (torch's float32
    # pow); inside it the mask (i - low) / (high - low) is float32 too, and 1 - mask near the ramp's end
    # loses digits to cancellation (17 ulps at pair 26 here): 64 ulps, 2^-18
    for j, (x, y_) in enumerate(zip(inv, global_layers.scheme_result.inv_freq, strict=True)):
        ulps = 2 if j <= 17 or j >= 27 else 64
        assert math.isclose(x, float(y_), rel_tol=ulps * 2.0 ** -24), (j, x, float(y_))
    # the local layers (--window-size 127,0 on every layer but each 2nd: --window-attn-skip-freq 2): 128 positions
    assert [g.window for g in r.layers] == [None, 128]


MEGATRON_LM = os.environ.get("ROPELAW_MEGATRON_LM")  # a clone (or bare git dir) of NVIDIA/Megatron-LM
MEGATRON_LM_COMMIT = "d98e8a64ddf34856e74b24714e3bedb2f5a39553"


def megatron_lm_source(path: str) -> str:
    """``path`` of Megatron-LM at the corpus commit, from ``$ROPELAW_MEGATRON_LM`` (skip without it: its training
    code is not on PyPI for Python 3.11; megatron-core's wheels hold megatron/core and, from 0.17, megatron/training,
    never megatron/post_training)."""
    import subprocess

    if not MEGATRON_LM:
        pytest.skip("Megatron-LM's megatron/post_training is in no registry package: set ROPELAW_MEGATRON_LM to a "
                    f"clone of NVIDIA/Megatron-LM holding {MEGATRON_LM_COMMIT[:8]} to read it")
    git_dir = MEGATRON_LM if os.path.isfile(os.path.join(MEGATRON_LM, "HEAD")) else os.path.join(MEGATRON_LM, ".git")
    return subprocess.run(["git", "--git-dir", git_dir, "show", f"{MEGATRON_LM_COMMIT}:{path}"], check=True,
                          capture_output=True, text=True).stdout


def test_megatron_gpt_oss_builder_values_are_read_from_its_source():
    """The read-the-code stand-in for the ModelOpt builder (not importable here: it needs ModelOpt and the
    training loop): the ``config.<field> = <constant>`` assignments under ``if ... args.enable_gpt_oss`` in
    ``megatron/post_training/model_builder.py`` are exactly ropelaw's GPT_OSS_YARN, and GPTModel takes the
    config's position_embedding_type over its argument (``gpt_model.py``)."""
    import ast

    from ropelaw.lint.dialects._megatron_yarn import GPT_OSS_YARN

    tree = ast.parse(megatron_lm_source("megatron/post_training/model_builder.py"))
    block = next(n for n in ast.walk(tree) if isinstance(n, ast.If) and "enable_gpt_oss" in ast.unparse(n.test))
    set_ = {t.targets[0].attr: ast.literal_eval(t.value) for t in block.body
            if isinstance(t, ast.Assign) and isinstance(t.targets[0], ast.Attribute)
            and ast.unparse(t.targets[0].value) == "config"}
    names = {"yarn_rotary_scaling_factor": "factor", "yarn_original_max_position_embeddings":
             "original_max_position_embeddings", "yarn_beta_fast": "beta_fast", "yarn_beta_slow": "beta_slow",
             "yarn_mscale": "mscale", "yarn_mscale_all_dim": "mscale_all_dim",
             "yarn_correction_range_round_to_int": "truncate"}
    assert set_.pop("position_embedding_type") == "yarn"
    assert {names[k]: v for k, v in set_.items()} == GPT_OSS_YARN
    gpt = megatron_lm_source("megatron/core/models/gpt/gpt_model.py")
    assert ("if hasattr(self.config, 'position_embedding_type'):\n"
            "            self.position_embedding_type = self.config.position_embedding_type") in gpt
