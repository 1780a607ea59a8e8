"""A ``sliding_window`` written null, as transformers runs it, against ropelaw's reading, per model type.

A null window is not an absent one: the config class keeps None (no class default fills it in). Measured per
type and version (2026-12-07, the real files below changed to ``sliding_window: null``, the Qwen types with
``use_sliding_window`` true, run shrunk in place through the installed transformers' forward): Mistral, Phi-3,
StarCoder2, Qwen2, Qwen3 and Qwen3-MoE (both versions) and 4.57.1's Qwen2-MoE run every layer with full causal
attention (no window); Gemma 2, Gemma 3 and gpt-oss (both versions) and 5.23.0's Qwen2-MoE keep sliding layers and
their forward fails (``ValueError: Could not find a `sliding_window` argument in the config, or it is not set``).
ropelaw follows: no window (no RV024 "write it out") where the runtime uses none, RV021 with the runtime's error
where it fails (the per-layer table's measured failure for the type's "no window" condition, or the
``window_after_layers`` row's ``null_window``). Each file's expectation is the runtime's own behaviour in the test,
not a recorded one. Under either installed version; a file the corpus does not hold skips, naming it.
"""

from __future__ import annotations

import json
import pathlib
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
import hf_compare  # noqa: E402

FILES = {  # model type -> a real file of the corpus that writes an integer sliding_window (or the Qwen flag)
    "gemma2": "heldout-r2/hub/mlc_gemma2_27b.json",
    "gemma3_text": "heldout-r2/hub/mlc_gemma3_1b_it.json",
    "gpt_oss": "hf/EchoCog__gpt-oss-20b__config.json",
    "mistral": "heldout-r3/hub/whn09__neuronx-distributed-inference__test__integration__tp32__models__mistral__7b__"
               "mistral_7b_0.1_4L_config.json",
    "phi3": "hf/Liamoiknine__TheNorthJerseyProject__merged_model__config.json",
    "starcoder2": "heldout-r2/hub/mlc_starcoder2.json",
    "qwen2": "hf/infinityarpan__qwen-25-api__models__Qwen2.5-0.5B-Instruct__config.json",
    "qwen3": "hf/sanjithudupa__compute-aware-arch-search__Qwen3-8B__config.json",
    "qwen3_moe": "heldout-r3/hub/whn09__neuronx-distributed-inference__test__integration__tp64__models__qwen3moe__"
                 "config.json",
}
FAILS = {"gemma2", "gemma3_text", "gpt_oss"}  # measured in both versions (the test checks it again)


def null_window(model_type: str) -> dict:
    import test_hf_top_keys

    data = test_hf_top_keys.corpus_file(FILES[model_type])  # sha256 checked against tests/corpus/hf_files.json
    if data is None:
        pytest.skip(f"{FILES[model_type]} is not in the corpus yet")
    data = dict(data, sliding_window=None)
    if model_type.startswith("qwen"):  # the flag that would keep a window
        data["use_sliding_window"] = True
    return data


@hf_compare.REAL_FILES_STEP
@pytest.mark.parametrize("model_type", FILES)
def test_null_window_as_transformers_runs_it(model_type, tmp_path, monkeypatch):
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    import test_hf_files

    from ropelaw.lint.layers import shrunk

    mapping = null_window(model_type)
    monkeypatch.setenv("ROPELAW_HF_SEMANTICS", test_hf_files.installed())
    path = tmp_path / "config.json"
    path.write_text(json.dumps(mapping))
    reading = test_hf_files.ropelaw_reading(mapping, str(path))
    near = shrunk.run_file(mapping)
    fails = test_hf_files.runtime_fails(near)
    assert fails == (model_type in FAILS), (near.problem, near.refused)
    verdict, detail = test_hf_files.differential(path)
    if fails:  # ropelaw: RV021 with the runtime's own error
        assert verdict == "refused", (verdict, detail)
        error = (near.problem or near.refused).split(": ", 1)[-1][:60]
        assert reading["codes"].get("RV021") == "error", reading["findings"]
        said = [f["message"] for f in reading["result"]["findings"] if f["code"] == "RV021"]
        assert any(error in m for m in said), (error, said)
    else:  # no window: every layer full causal attention, as ropelaw reads it, and no "write it out"
        assert verdict == "right", detail
        assert "RV024" not in reading["codes"], reading["findings"]
        assert all(g["window"] is None for g in reading["result"]["layers"])
        assert {(o.span, o.size) for o in near.probe.layers} == {("full", None)}
