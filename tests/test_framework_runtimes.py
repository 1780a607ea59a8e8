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
