"""llama.cpp's YaRN, read from its C/C++ source (llama-cpp-python==0.3.36's vendored llama.cpp: not built here),
against what ropelaw's GGUF dialect says (``ropelaw/lint/dialects/gguf.py`` ``_yarn``).

Read, with the lines cited (0.3.36's files):

- ``src/llama-context.cpp`` 173-174: ``yarn_ext_factor`` unset (-1) becomes 1 for a YaRN model, else 0;
  177-211: with ``ext_factor != 0`` the magnitude is ``get_mscale(s, 1) = 0.1 ln s + 1`` (``s <= 1``: 1), or
  ``get_mscale(s, m) / get_mscale(s, log_mul)`` when ``rope_yarn_log_mul`` is set, then divided by
  ``1 + 0.1 ln s`` (211); 214: times ``rope.scaling.attn_factor``;
- ``ggml/src/ggml-cpu/ops.cpp`` 6187-6204 ``rope_yarn``: with ``ext_factor != 0`` the magnitude is multiplied by
  ``1 + 0.1 ln(1 / freq_scale)`` (6198), which cancels 211: every (cos, sin) carries
  ``get_mscale(...) x attn_factor`` — the attention factor ropelaw reports;
- ``src/models/<arch>.cpp`` ``load_arch_hparams``: the ``yarn_*`` keys are loaded only by grok (ext_factor,
  attn_factor, betas; beta_fast default 8), mistral3 (betas, log_mul) and deepseek2 / deepseek32 (log_mul, divided
  by 0.1); ``src/llama-model.cpp`` ``load_hparams`` loads none of them (``rope.scaling.attn_factor`` only).

DeepSeek's graph also pre-scales its ``kq_scale`` by ``(attn_factor_org (1 + 0.1 log_mul ln s))^2``
(``src/models/deepseek2.cpp`` 437-443): that is the attention's softmax scale, not the rotary's magnitude, and is
not compared here.

Runs when ``ROPELAW_LLAMACPP_SRC`` names the extracted sdist with those files (CI step 'llama.cpp conversion').
"""

from __future__ import annotations

import math
import os
import sys
import re
from pathlib import Path

import numpy as np
import pytest

from ropelaw.lint.dialects.gguf import ARCH_BETA_FAST, YARN_KEYS_READ
from ropelaw.lint.loader import load_config
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: gguf_files
from gguf_files import write_gguf  # noqa: E402

SRC = os.environ.get("ROPELAW_LLAMACPP_SRC")
ROOT = Path(SRC, "vendor", "llama.cpp") if SRC else None
pytestmark = pytest.mark.skipif(not SRC or not (ROOT / "src" / "models" / "grok.cpp").is_file(),
                                reason="ROPELAW_LLAMACPP_SRC with vendor/llama.cpp/src not set (CI step 'llama.cpp "
                                       "conversion')")

KEYS = {"yarn_beta_fast": "YARN_BETA_FAST", "yarn_beta_slow": "YARN_BETA_SLOW", "yarn_ext_factor": "YARN_EXT_FACTOR",
        "yarn_attn_factor": "YARN_ATTN_FACTOR", "yarn_log_multiplier": "YARN_LOG_MUL"}


def line(path: str, text: str) -> int:
    """The 1-based line of ``path`` (under vendor/llama.cpp) holding ``text``, exactly once."""
    lines = (ROOT / path).read_text(encoding="utf-8").split("\n")
    hits = [n + 1 for n, ln in enumerate(lines) if text in ln]
    assert len(hits) == 1, (path, text, hits)
    return hits[0]


def test_the_cited_lines():
    assert line("src/llama-context.cpp", "cparams.yarn_ext_factor = cparams.rope_scaling_type == "
                "LLAMA_ROPE_SCALING_TYPE_YARN ? 1.0f : 0.0f;") == 174
    assert line("src/llama-context.cpp", "return scale <= 1.0f ? 1.0f : (0.1f * mscale * logf(scale) + 1.0f);") == 179
    assert line("src/llama-context.cpp", "cparams.yarn_attn_factor *= 1.0f / (1.0f + 0.1f * logf(factor));") == 211
    assert line("src/llama-context.cpp", "cparams.yarn_attn_factor *= hparams.rope_attn_factor;") == 214
    assert line("ggml/src/ggml-cpu/ops.cpp", "static void rope_yarn(") == 6187
    assert line("ggml/src/ggml-cpu/ops.cpp", "mscale *= 1.0f + 0.1f * logf(1.0f / freq_scale);") == 6198
    assert line("src/models/grok.cpp", "hparams.yarn_beta_fast = 8.0f;") == 5
    assert line("src/models/deepseek2.cpp", "hparams.rope_yarn_log_mul /= 0.1f;") == 37


def test_which_architectures_load_the_yarn_keys():
    readers: dict[str, set[str]] = {k: set() for k in KEYS}
    for f in sorted((ROOT / "src" / "models").glob("*.cpp")):
        text = f.read_text(encoding="utf-8")
        for key, kv in KEYS.items():
            if re.search(rf"get_key\(\s*LLM_KV_ROPE_SCALING_{kv}\b", text):
                readers[key].add(f.stem)
    assert readers == {k: set(v) for k, v in YARN_KEYS_READ.items()}
    generic = (ROOT / "src" / "llama-model.cpp").read_text(encoding="utf-8")
    assert not re.search(r"LLM_KV_ROPE_SCALING_YARN_", generic)
    assert "ml.get_key(LLM_KV_ROPE_SCALING_ATTN_FACTOR, hparams.rope_attn_factor, false);" in generic
    grok = (ROOT / "src" / "models" / "grok.cpp").read_text(encoding="utf-8")
    assert float(re.search(r"hparams\.yarn_beta_fast = ([\d.]+)f;", grok).group(1)) == ARCH_BETA_FAST["grok"]


def llamacpp_magnitude(s: float, attn: float, log_mul: float = 0.0, deepseek2: bool = False) -> float:
    """The magnitude of every (cos, sin) llama.cpp computes (the cited lines), in float32 as it does."""
    f = np.float32

    def get_mscale(scale, mscale):
        return f(1) if scale <= 1 else f(0.1) * f(mscale) * np.log(f(scale)) + f(1)

    factor = f(1) / (f(1) / f(s))  # freq_scale = 1 / factor; factor = 1 / freq_scale
    if log_mul != 0.0:
        mscale = f(log_mul) if deepseek2 and log_mul != 1.0 else f(1)
        y = get_mscale(factor, mscale) / get_mscale(factor, f(log_mul))
    else:
        y = get_mscale(factor, f(1))
    y = y * (f(1) / (f(1) + f(0.1) * np.log(factor)))  # llama-context.cpp 211
    y = y * f(attn)  # 214
    return float(y * (f(1) + f(0.1) * np.log(f(1) / (f(1) / factor))))  # ops.cpp 6198


@pytest.mark.parametrize("arch, s, attn, log_mul", [
    ("qwen2", 4.0, 1.0, None), ("llama", 8.0, 1.0, None), ("qwen2", 32.0, 0.8, None),
    ("deepseek2", 40.0, 1.0, 0.0707), ("deepseek2", 40.0, 1.0, 0.1), ("mistral3", 16.0, 1.0, 1.0),
    ("llama", 16.0, 1.0, 0.0707),  # llama does not load yarn_log_multiplier: 0.1 ln s + 1
])
def test_attention_factor_is_what_llamacpp_multiplies_by(tmp_path, arch, s, attn, log_mul):
    kv = {"{arch}.context_length": 131072, "{arch}.embedding_length": 4096, "{arch}.attention.head_count": 32,
          "{arch}.attention.key_length": 128, "{arch}.rope.dimension_count": 128, "{arch}.rope.freq_base": 1e4,
          "{arch}.rope.scaling.type": "yarn", "{arch}.rope.scaling.factor": s,
          "{arch}.rope.scaling.original_context_length": 4096, "{arch}.rope.scaling.attn_factor": attn}
    if log_mul is not None:
        kv["{arch}.rope.scaling.yarn_log_multiplier"] = log_mul
    cfg = load_config(write_gguf(tmp_path / "m.gguf", arch, kv))
    ours = cfg.layers[0].params["attention_factor"].number()
    read = log_mul if log_mul is not None and arch in YARN_KEYS_READ["yarn_log_multiplier"] else 0.0
    if arch.startswith("deepseek") and read:
        read = float(np.float32(read) / np.float32(0.1))  # deepseek2.cpp 37
    want = llamacpp_magnitude(float(np.float32(s)), float(np.float32(attn)), read, arch == "deepseek2")
    assert ours == pytest.approx(want, rel=1e-6)  # float32 rounding of llama.cpp's arithmetic
    assert math.isfinite(ours)
