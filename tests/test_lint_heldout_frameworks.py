"""Every current file of the held-out framework corpus (``$ROPELAW_CORPUS/heldout-r2/frameworks`` and
``frameworks-variants``) reads as before issue 22 or better, with the expectations reviewed here by hand
(rotary dims, base, training length, length at the target, scheme, tuning length, the non-info finding
codes; or the reason it is skipped; or its file-level finding). Changes against the previous round are
marked. A file without an expectation fails: every current file is checked; a missing file is skipped
by name.
"""

from __future__ import annotations

import os
import pathlib

import pytest

from ropelaw.lint.check import lint_config
from ropelaw.lint.loader import NotARopeConfig, UnreadConfig, load_config

ROOT = pathlib.Path(__file__).resolve().parents[1]
HELDOUT = pathlib.Path(os.environ.get("ROPELAW_CORPUS", ROOT.parent / "shared" / "corpus")) / "heldout-r2"
SUFFIXES = (".yaml", ".yml", ".toml", ".json", ".sh")

# file -> (d, base, train_len, length, scheme, tune_len, non-info finding codes) | ("skip", reason) | (code,)
EXPECTED = {
    # base_model is a local path not on this machine: RV031 (was a skip)
    "frameworks/axolotl-branch-context-extension-yarn_v2_8k.yaml": ("RV031",),
    # sequence_len 8,192 kept as the tuning length; the model from ropelaw's table, said (RV032)
    "frameworks/axolotl-llama-3-fft-8b.yaml": (128, 500000.0, 8192, 131072, 'llama3', 8192, ['RL102', 'RV032']),
    # sequence_len 8,192 read as the tuning length (was not read); the model from ropelaw's table, said (RV032)
    "frameworks/axolotl-qwen3-8b-fsdp-tp-cp.yaml": (128, 1000000.0, 40960, 40960, 'default', 8192, ['RV032']),
    "frameworks/gpt-neox-llama2-7B.yml": (128, 10000.0, 4096, 4096, 'default', None, []),
    "frameworks/gpt-neox-llama2-codellama_7B.yml": (128, 1000000.0, 16384, 16384, 'default', None, []),
    "frameworks/gpt-neox-mistral-7B.yml": (128, 10000.0, 8192, 4097, 'default', None, []),
    "frameworks/gpt-neox-pythia-1-4B.yml": (32, 10000.0, 2048, 2048, 'default', None, []),
    # checkpoint_dir's Config, tuned at 512 (was a skip)
    "frameworks/litgpt-finetune-llama-3.1-8b-full.yaml": (128, 500000.0, 8192, 131072, 'llama3', 512, ['RL102']),
    "frameworks/litgpt-pretrain-tinyllama.yaml": (64, 10000.0, 2048, 2048, 'default', None, []),
    "frameworks/litgpt-pretrain-tinystories.yaml": (48, 10000.0, 256, 256, 'default', None, []),
    "frameworks/megatron-functional-deepseekv3-proxy-model_config.yaml": (64, 10000.0, 4096, 4096, 'yarn', None, []),
    "frameworks/megatron-functional-gpt3_15b_8t-model_config.yaml": (64, 10000.0, 4096, 4096, 'default', None, []),
    "frameworks/megatron-functional-qwen3-8b-grpo-model_config.yaml": (128, 1000000.0, 1024, 1024, 'default', None, []),
    "frameworks/megatron-yaml-cfg-examples-gpt3-gpt_config.yaml": (32, 10000.0, 4096, 4096, 'default', None, []),
    "frameworks/nanotron-config_qwen.yaml": (128, 10000.0, 4096, 4096, 'default', None, []),
    "frameworks/nanotron-config_tiny_llama.yaml": (128, 10000.0, 4096, 128256, 'default', None, ['RL101', 'RL103']),
    "frameworks/nemo-megatron_gpt_config.yaml": ("skip", "NeMo position_embedding_type 'learned_absolute' is not RoPE"),
    "frameworks/nemo-megatron_llama_config.yaml": (128, 10000.0, 4096, 4096, 'default', None, []),
    "frameworks/olmo-OLMo2-7B-stage1.yaml": (128, 500000.0, 4096, 4096, 'default', None, []),
    "frameworks/torchtitan-v0.2.2-deepseek_v3_16b.toml": (64, 10000.0, 4096, 4096, 'default', None, []),
    "frameworks/torchtitan-v0.2.2-llama3_8b.toml": (128, 500000.0, 8192, 8192, 'llama3', None, []),
    "frameworks/torchtitan-v0.2.2-qwen3_1.7b.toml": (128, 1000000.0, 4096, 4096, 'default', None, []),
    "frameworks/torchtune-llama3_1-8B_full.yaml": (128, 500000.0, 8192, 131072, 'llama3', None, ['RL102']),
    "frameworks-variants/github-workflow-ci.yml": ("skip", 'no RoPE settings found (need head_dim, rotary_dim, '
                                                           'kv_channels or hidden_size with num_attention_heads)'),
    "frameworks-variants/litgpt-tinystories.rope_base-500000.head_size-64.yaml": (64, 500000.0, 256, 256, 'default',
                                                                                  None, []),
    # MLA d 64, YaRN x40 (was 128 default)
    "frameworks-variants/megatron-deepseekv3-proxy-MODEL_ARGS-flattened.yaml": (64, 10000.0, 4096, 4096, 'yarn', None,
                                                                                []),
    # read by Megatron now (was the generic table)
    "frameworks-variants/megatron-gpt3_15b-MODEL_ARGS-flattened.yaml": (64, 10000.0, 4096, 4096, 'default', None, []),
    # read by Megatron now (was the generic table)
    "frameworks-variants/megatron-qwen3-8b-MODEL_ARGS-flattened.yaml": (128, 1000000.0, 1024, 1024, 'default', None,
                                                                        []),
    "frameworks-variants/neox-mistral-7B.sliding_window-renamed.yml": (128, 10000.0, 8192, 131072, 'default', None,
                                                                       ['RL101', 'RL103']),
    "frameworks-variants/olmo2-7B.n_heads-renamed.yaml": (128, 500000.0, 4096, 4096, 'default', None, []),
}


def test_every_current_file_has_an_expectation():
    present = [f"{sub}/{p.name}" for sub in ("frameworks", "frameworks-variants") if (HELDOUT / sub).is_dir()
               for p in sorted((HELDOUT / sub).iterdir()) if p.suffix in SUFFIXES]
    if not present:
        pytest.skip(f"no held-out framework files under {HELDOUT} (ROPELAW_CORPUS)")
    assert sorted(set(present) - set(EXPECTED)) == []


@pytest.mark.parametrize("key", sorted(EXPECTED))
def test_heldout_framework_file(key):
    path = HELDOUT / key
    if not path.is_file():
        pytest.skip(f"{key} is not under {HELDOUT}")
    want = EXPECTED[key]
    if want[0] == "skip":
        with pytest.raises(NotARopeConfig) as exc:
            load_config(str(path))
        assert not isinstance(exc.value, UnreadConfig)
        assert str(exc.value).split(": ", 1)[1] == want[1]
        return
    if len(want) == 1:
        with pytest.raises(UnreadConfig) as exc:
            load_config(str(path))
        assert exc.value.code == want[0]
        return
    r = lint_config(load_config(str(path)))
    a = r.layers[0]
    s = a.spec
    tune = r.config.tune_len.raw if r.config.tune_len is not None else None
    codes = sorted({f.code for f in r.findings if f.severity != "info"})
    assert (s.d, s.base, s.train_len, a.length, s.scheme, tune, codes) == want
    assert "RV030" not in codes  # nothing unread in these files


def test_no_base_is_invented_next_to_a_base_key():
    """Across the whole corpus ($ROPELAW_CORPUS: hf, frameworks, heldout-r2), no config read gets RoPE's default
    base while its file holds a base-like key (rope_theta, rope_max_timescale, rotary_base, theta in a rope
    block ...) that no reader used: that key is RV030 instead. (Files with no base key at all keep the
    runtime's 10,000, said in their notes: GPT-J, Baichuan, phi-msft remote code.)"""
    from ropelaw.errors import UsageError
    from ropelaw.lint.parse import read_document
    from ropelaw.lint.unread import _is_base, rope_leaves

    root = HELDOUT.parent
    files = [p for p in sorted(root.rglob("*")) if p.is_file() and p.suffix in SUFFIXES[:-1]]
    if not files:
        pytest.skip(f"no corpus under {root} (ROPELAW_CORPUS)")
    checked = 0
    for p in files:
        try:
            cfg = load_config(str(p))
        except UsageError:
            continue
        checked += 1
        data = read_document(str(p))[0]
        base_keys = [".".join(map(str, path)) for path, _ in rope_leaves(data) if _is_base(path)]
        for g in cfg.layers:
            invented = g.base.key is None and "RoPE's default" in (g.base.note or "")
            assert not (invented and base_keys), (str(p), base_keys)
    assert checked >= 100
