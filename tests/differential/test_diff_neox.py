"""GPT-NeoX: a read-the-code test standing in for a differential. GPT-NeoX is not on PyPI (no wheel or sdist
at any version), so its code cannot be installed by CI; it was read at the corpus commit
(EleutherAI/gpt-neox@ea7aefd8, not committed here) and what it does with a config is written out again
below, line by line with its source, independently of ropelaw's dialect; every GPT-NeoX config of the corpus
(``frameworks-examples/gpt-neox``, with the rows kept elsewhere in the corpus) is read both ways.

- ``NeoXArgs.from_ymls`` (``megatron/neox_arguments/arguments.py``): each YAML file's keys with ``-`` read as
  ``_``; a key left out takes the dataclass default (``neox_args.py``);
- ``attention_config`` expands to one type per layer (``megatron/utils.py`` ``expand_attention_types``;
  default all ``global``); ``mamba`` / ``rwkv`` / ``gmlp`` / ``amlp`` layers are not attention
  (``megatron/model/gpt2_model.py``);
- ``pos_emb`` (default ``"learned"``, ``neox_args.py`` line 207): rotary only for ``"rotary"``;
- head dim ``hidden_size // num_attention_heads``; ``rotary_pct`` 1 rotates the whole head, else
  ``int(head_dim * rotary_pct)`` dims (``megatron/model/transformer.py`` lines 383-388);
  ``rotary_emb_base`` (default 10000, ``neox_args.py`` line 377);
- ``seq_length`` is the training length, ``max_position_embeddings`` the context (required by
  ``validate_values``); ``sliding_window_width`` W: flash-attn's window (W, -1), W + 1 positions.

A file without ``hidden_size`` / ``num_attention_heads`` is a part of a run (data paths, cluster setup),
which NeoX merges with a model file: ropelaw skips it, saying it holds no RoPE settings.
"""

from __future__ import annotations

import corpus_examples as examples
import pytest
import yaml

from ropelaw.lint.check import lint_config
from ropelaw.lint.loader import NoRopeFound, NotARopeConfig, load_config

NOT_ATTENTION = {"mamba", "rwkv", "gmlp", "amlp"}


def neox_reading(data: dict) -> dict | str:
    """What GPT-NeoX builds from one config file: the rotary setup, or why it has none."""
    a = {str(k).replace("-", "_"): v for k, v in data.items()}
    n = a.get("num_layers")
    types: list = []
    for item in a.get("attention_config") or []:  # absent: every layer global
        types += (item[0] * (n // len(item[0])) if isinstance(n, int) else item[0]) if item[1] == "all" else \
            item[0] * item[1]
    if types and set(types) <= NOT_ATTENTION:
        return "no attention"
    if a.get("hidden_size") is None or a.get("num_attention_heads") is None:
        return "not a model config"
    if a.get("pos_emb", "learned") != "rotary":
        return "not rotary"
    head = a["hidden_size"] // a["num_attention_heads"]
    pct = a.get("rotary_pct", 1.0)
    width = a.get("sliding_window_width")
    return {"d": head if pct == 1 else int(head * pct), "base": a.get("rotary_emb_base", 10000),
            "train": a.get("seq_length"), "target": a.get("max_position_embeddings"),
            "window": width + 1 if isinstance(width, int) and width > 0 else None}


@pytest.mark.parametrize("key", examples.keys("gpt-neox", {}) or ["(no corpus)"])
def test_neox_file(key):
    if key == "(no corpus)":
        pytest.skip(f"no {examples.SOURCES} (ROPELAW_CORPUS)")
    path = examples.path_of("gpt-neox", key, {})
    want = neox_reading(yaml.safe_load(path.read_text()) or {})
    try:
        r = lint_config(load_config(str(path)))
    except (NoRopeFound, NotARopeConfig) as exc:
        assert isinstance(want, str), (key, want, str(exc))
        said = {"no attention": "no attention, no rotary", "not rotary": "is not rotary",
                "not a model config": "no RoPE settings found"}[want]
        assert said in str(exc), (key, want, str(exc))
        return
    assert isinstance(want, dict), (key, want, r.ok_line())
    g = r.layers[0]
    got = {"d": g.spec.d, "base": g.spec.base, "train": g.spec.train_len, "target": r.config.target.raw,
           "window": g.window}
    assert got == want, key
