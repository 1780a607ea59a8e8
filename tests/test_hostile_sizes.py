"""Hostile inputs at issue 30's sizes: bounded memory, and a result or bad input (never a crash).

- A config whose ``model_type`` is a 10 MB string: every step matched and copied it (1.2 GB peak,
  6 s); now refused before it is read as a model type (``limits.MAX_MODEL_TYPE``), the memory that of
  the file's text and its parse.
- A launch script with 40,000 quoted shell flags (over 30 s once): read, its RoPE flags found.

Memory is measured with tracemalloc (deterministic, unlike time): a bound a few times the input's size.
"""

from __future__ import annotations

import json
import tracemalloc

import pytest

from ropelaw.errors import UsageError
from ropelaw.lint.check import lint_config
from ropelaw.lint.loader import load_config


def _peak(run) -> tuple[object, int]:
    tracemalloc.start()
    try:
        out = run()
    except UsageError as exc:
        out = exc
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return out, peak


def test_a_10_mb_model_type_is_refused_in_bounded_memory(tmp_path):
    f = tmp_path / "config.json"
    f.write_text(json.dumps({"model_type": "x" * 10_000_000, "hidden_size": 4096, "num_attention_heads": 32,
                             "rope_theta": 10000, "max_position_embeddings": 4096}))
    out, peak = _peak(lambda: lint_config(load_config(str(f))))
    assert isinstance(out, UsageError) and "model_type is 10,000,000 characters long" in str(out)
    assert len(str(out)) < 300
    assert peak < 6 * 10_000_000, f"peak {peak:,} bytes for a 10 MB file"  # the bytes, the text, the parse


def test_a_long_but_plausible_model_type_is_read(tmp_path):
    f = tmp_path / "config.json"
    f.write_text(json.dumps({"model_type": "m" * 256, "hidden_size": 4096, "num_attention_heads": 32,
                             "rope_theta": 10000, "max_position_embeddings": 4096}))
    assert lint_config(load_config(str(f))).config.head_dim.raw == 128


@pytest.mark.slow
def test_40000_quoted_shell_flags_are_read_in_bounded_memory(tmp_path):
    rope = '"--num-layers" "32" "--hidden-size" "4096" "--num-attention-heads" "32" "--seq-length" "4096" ' \
           '"--max-position-embeddings" "4096" "--position-embedding-type" "rope" "--rotary-base" "500000"'
    noise = " ".join(f'"--f{i}" "{i % 10}"' for i in range(40_000))
    f = tmp_path / "pretrain_gpt.sh"
    f.write_text(f"#!/bin/bash\npython pretrain_gpt.py {rope} \\\n{noise}\n")
    assert f.stat().st_size < 1 << 20
    out, peak = _peak(lambda: lint_config(load_config(str(f))))
    assert not isinstance(out, Exception), out
    assert out.config.layers[0].base.raw == 500000
    assert peak < 40 * f.stat().st_size, f"peak {peak:,} bytes for a {f.stat().st_size:,}-byte script"


@pytest.mark.parametrize("keys,said", [
    ({"head_dim": 1e308}, "head_dim: rotary dimension d=1e308"),
    ({"hidden_size": 1e308}, "hidden_size / num_attention_heads = 1e308 / 32: rotary dimension d=3.125e306"),
])
def test_plan_refuses_an_absurd_rotary_dimension_before_any_per_pair_work(tmp_path, capsys, keys, said):
    """``head_dim: 1e308`` made plan build 10^308 frequencies (MemoryError, exit 3): now exit 2, one line
    naming the key, as lint's RV017 does (its limit, limits.MAX_D = 2^16); the library's plan() the same."""
    from ropelaw.cli import main
    from ropelaw.limits import MAX_D
    from ropelaw.plan import plan
    from ropelaw.spec import RopeSpec

    f = tmp_path / "config.json"
    f.write_text(json.dumps({"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32,
                             "rope_theta": 10000, "max_position_embeddings": 4096, **keys}))
    assert main(["plan", str(f), "--target", "32k"]) == 2
    err = capsys.readouterr().err
    assert err == f"ropelaw: error: {f}: {said} is beyond any real model (at most 2^16 = 65,536; " \
                  "see `ropelaw rule RV017`)\n"
    with pytest.raises(UsageError, match="beyond any real model"):
        plan(RopeSpec(d=2 * MAX_D, base=1e4, train_len=4096), 32768)
    assert plan(RopeSpec(d=MAX_D, base=1e4, train_len=4096), 32768) is not None  # the limit itself is planned
