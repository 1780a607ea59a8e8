"""Fuzz the loader and the rules: random config-like mappings and broken texts.

What is tried (hypothesis): mappings over the RoPE keys the loader knows (and a few others),
with values drawn from whole numbers (including 0, negatives, 10**30), floats (including NaN,
+-inf, 1e300), strings (numeric and not), booleans, null, lists and nested rope_scaling /
rope_parameters mappings with every scheme name and parameter; plus the JSON text of such
mappings truncated at a random offset, and random bytes. The only allowed outcomes are a
result or ``UsageError`` (the declared bad-input type): never another exception (not even a bare
``ValueError``: the CLI reports that as its own failure, exit 3).
"""

from __future__ import annotations

import json
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ropelaw.errors import UsageError
from ropelaw.lint.check import lint_config
from ropelaw.lint.loader import load_mapping, parse_text

KEYS = [
    "head_dim", "hidden_size", "num_attention_heads", "n_head", "kv_channels", "partial_rotary_factor", "rotary_pct",
    "rotary_dim", "qk_rope_head_dim", "rope_theta", "rotary_emb_base", "rotary_base", "rope_ratio",
    "rope_local_base_freq", "max_position_embeddings", "original_max_position_embeddings", "seq_length",
    "sliding_window", "use_sliding_window", "layer_types", "torch_dtype", "dtype", "model_type", "precision",
    "alibi", "pos_emb", "rope_scaling", "rope_parameters", "text_config",
]
SCHEME_KEYS = ["type", "rope_type", "factor", "original_max_position_embeddings", "beta_fast", "beta_slow", "mscale",
               "mscale_all_dim", "attention_factor", "low_freq_factor", "high_freq_factor", "short_factor",
               "long_factor", "window", "k", "seq_len", "truncate", "rope_theta", "partial_rotary_factor"]
SCHEMES = ["default", "linear", "dynamic", "ntk", "yarn", "llama3", "longrope", "su", "rerope", "leaky_rerope", "bogus"]

numbers = st.one_of(
    st.integers(min_value=-10, max_value=10**30),
    st.sampled_from([0, 1, 2, 3, 63, 64, 96, 128, 256, 4096, 8192, 32768, 131072, 10**6]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0.25, 0.5, 1.0, 1e4, 5e5, 1e6, 1e300, float("nan"), float("inf")]),
)
scalars = st.one_of(numbers, st.booleans(), st.none(), st.text(max_size=8),
                    st.sampled_from(["1e6", "bfloat16", "float16", "fp16", "bf16-mixed", "llama", "chatglm",
                                     "gemma3_text", "gpt_neox", "rotary", "learned"] + SCHEMES))
lists = st.lists(st.one_of(numbers, st.text(max_size=3)), max_size=70)
scheme_block = st.dictionaries(st.sampled_from(SCHEME_KEYS),
                               st.one_of(scalars, lists, st.sampled_from(SCHEMES)), max_size=8)
values = st.one_of(scalars, lists, scheme_block,
                   st.dictionaries(st.sampled_from(["full_attention", "sliding_attention"]), scheme_block, max_size=2))
configs = st.dictionaries(st.sampled_from(KEYS), values, max_size=14)
# bias towards configs that get past "no RoPE settings" to exercise the rules
rope_configs = st.builds(lambda base, extra: {**base, **extra},
                         st.fixed_dictionaries({"hidden_size": st.sampled_from([4096, 3072, 100, 0, -64, 4096.5]),
                                                "num_attention_heads": st.sampled_from([32, 24, 0, 7])}),
                         configs)

TRIED = {"mappings": 0, "linted": 0, "rejected": 0, "texts": 0}


def _run(data, **kw):
    TRIED["mappings"] += 1
    try:
        cfg = load_mapping(data, **kw)
        r = lint_config(cfg)
        r.setup()
        r.ok_line()
        TRIED["linted"] += 1
    except UsageError:
        TRIED["rejected"] += 1


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rope_configs, st.sampled_from(["json", "yaml", "toml"]))
def test_fuzz_mappings(data, fmt):
    _run(data, fmt=fmt)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(configs, st.one_of(st.none(), st.integers(min_value=1, max_value=1 << 20)))
def test_fuzz_any_mapping_with_overrides(data, target):
    _run(data, target=target)


@settings(max_examples=80, deadline=None)
@given(rope_configs, st.floats(min_value=0, max_value=1))
def test_fuzz_truncated_json(data, cut):
    text = json.dumps(data, allow_nan=True)
    text = text[: int(len(text) * cut)]
    TRIED["texts"] += 1
    try:
        parsed, pos = parse_text(text, "json")
        lint_config(load_mapping(parsed, pos))
    except UsageError:
        pass


@settings(max_examples=60, deadline=None)
@given(st.binary(max_size=200), st.sampled_from(["json", "yaml", "toml"]))
def test_fuzz_random_text(raw, fmt):
    text = raw.decode("utf-8", errors="replace")
    try:
        parsed, pos = parse_text(text, fmt)
        lint_config(load_mapping(parsed, pos, fmt=fmt))
    except UsageError:
        pass


def test_report_what_was_tried():
    """Printed with -s: how many mappings reached the rules and how many were rejected."""
    print(f"\nfuzz: {TRIED}")
    if TRIED["mappings"]:  # run after the fuzz tests above (file order)
        assert TRIED["linted"] > 0 and TRIED["rejected"] > 0, TRIED
