"""Qwen2-MoE / Qwen3-MoE sliding windows (the ``window_after_layers`` rows of ropelaw/lint/table_rows.py), which
differ from Qwen2's: under 4.57.1 both, and under 5.23.0 Qwen3-MoE, give every layer the window when
``use_sliding_window`` is true (the config keeps ``sliding_window``; the eager / sdpa mask is the sliding one for
every layer; ``max_window_layers`` and ``layer_types`` unread); 5.23.0's Qwen2MoeConfig slides the even layers
below ``max_window_layers`` (``bool((i + 1) % 2) and i < max_window_layers``) unless the file writes
``layer_types``. Real files of the corpus (``heldout-r2/hub/mlc_qwen2moe.json``, 24 layers;
``heldout-r3/hub/whn09_..._qwen3moe__config.json``, 1 layer, given 6 here) are changed and run shrunk in place
through the installed transformers' forward with hooks (tests/test_hf_files.py ``differential``: every layer's
span and rotary against ropelaw's reading); ropelaw's sliding group is checked against the runtime's own config
object (its ``layer_types`` where the class has them, else every layer when its ``sliding_window`` is set).
Under either installed version; a file the corpus does not hold skips, naming it.
"""

from __future__ import annotations

import json
import sys
import pathlib

import pytest

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
import hf_compare  # noqa: E402
torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
QWEN2_MOE = "heldout-r2/hub/mlc_qwen2moe.json"
QWEN3_MOE = ("heldout-r3/hub/whn09__neuronx-distributed-inference__test__integration__tp64__models__qwen3moe__"
             "config.json")
SIX = {"num_hidden_layers": 6, "sliding_window": 4096}  # the qwen3_moe file has 1 layer and sliding_window null

VARIANTS = {  # name -> (file, changes)
    "qwen2_moe use_sliding_window true (max_window_layers 21)": (QWEN2_MOE, {"use_sliding_window": True}),
    "qwen2_moe max_window_layers 7": (QWEN2_MOE, {"use_sliding_window": True, "max_window_layers": 7}),
    "qwen2_moe max_window_layers 0": (QWEN2_MOE, {"use_sliding_window": True, "max_window_layers": 0}),
    "qwen2_moe layer_types written": (QWEN2_MOE, {"use_sliding_window": True,
                                                  "layer_types": ["full_attention", "sliding_attention"] * 12}),
    "qwen3_moe use_sliding_window true": (QWEN3_MOE, {**SIX, "use_sliding_window": True, "max_window_layers": 2}),
    "qwen3_moe layer_types written": (QWEN3_MOE, {**SIX, "use_sliding_window": True, "max_window_layers": 2,
                                                  "layer_types": ["full_attention"] * 5 + ["sliding_attention"]}),
}


def real_file(label: str) -> dict:
    import test_hf_top_keys

    data = test_hf_top_keys.corpus_file(label)  # sha256 checked against tests/corpus/hf_files.json
    if data is None:
        pytest.skip(f"{label} is not in the corpus yet")
    return data


def runtime_sliding(mapping: dict) -> list[int]:
    """The layers the installed transformers' config object makes slide: its ``layer_types`` where the model reads
    them (5.23.0 Qwen2-MoE), else every layer when its ``sliding_window`` is set (the mask of every layer)."""
    import hf_runtime

    tc = hf_runtime.text_config(hf_runtime.load_config(mapping))
    n = tc.num_hidden_layers
    if tc.model_type == "qwen2_moe" and transformers.__version__.startswith("5."):
        return [i for i, t in enumerate(tc.layer_types) if t == "sliding_attention"]
    return list(range(n)) if getattr(tc, "sliding_window", None) else []


@hf_compare.REAL_FILES_STEP
@pytest.mark.hf
@pytest.mark.torch
@pytest.mark.parametrize("name", list(VARIANTS))
def test_moe_window_as_transformers_runs_it(name, tmp_path, monkeypatch):
    import test_hf_files

    label, changes = VARIANTS[name]
    mapping = {**real_file(label), **changes}
    monkeypatch.setenv("ROPELAW_HF_SEMANTICS", test_hf_files.installed())
    path = tmp_path / "config.json"
    path.write_text(json.dumps(mapping))
    verdict, detail = test_hf_files.differential(path)
    assert verdict == "right", detail
    result = test_hf_files.ropelaw_reading(mapping, str(path))["result"]
    ours = sorted(i for g in result["layers"] if g["window"] is not None for i in g["indices"])
    want = runtime_sliding(mapping)
    assert ours == want, (ours, want)
    # every variant slides some layers, except 5.23.0's Qwen2-MoE below max_window_layers 0 (no layer)
    assert bool(want) != (name == "qwen2_moe max_window_layers 0" and transformers.__version__.startswith("5."))
    for g in result["layers"]:
        assert g["window"] in (None, mapping["sliding_window"]) and g["rope"], g["layers"]


@pytest.mark.parametrize("version", ["4.57.1", "5.23.0"])
def test_moe_window_layers_from_the_flag(version):
    """The plan's sliding layers against each config class's rule (its source, quoted in the rows) by brute force:
    every layer (4.57.1 both, 5.23.0 Qwen3-MoE) or the even layers below max_window_layers (5.23.0 Qwen2-MoE),
    none when the flag is false or the window null."""
    from ropelaw.lint.layers import plan

    class V:
        def __init__(self, raw):
            self.raw, self.where, self.key = raw, "file", None

    for mt in ("qwen2_moe", "qwen3_moe"):
        even_below = mt == "qwen2_moe" and version.startswith("5.")
        for flag, m, w in ((True, 21, 32768), (False, 21, 32768), (True, 30, 8), (True, 7, 8), (True, 0, 8),
                           (True, 21, None)):
            given = {"use_sliding_window": V(flag), "max_window_layers": V(m), "sliding_window": V(w)}
            p = plan(mt, 24, given.get, lambda k: None, version)
            if even_below and flag and w is None:  # the class keeps the sliding layers without a window
                assert "forward fails" in p.refused and p.refused_at == "sliding_window"  # RV021
                continue
            assert p.problem is None, p.problem
            slides = [r.span == "window" for r in p.roles]
            on = bool(flag) and w is not None
            assert slides == [on and ((i < m and (i + 1) % 2 == 1) if even_below else True) for i in range(24)]


@hf_compare.REAL_FILES_STEP
@pytest.mark.hf
@pytest.mark.torch
def test_qwen2_moe_null_window_as_transformers_runs_it(tmp_path, monkeypatch):
    """use_sliding_window true with sliding_window null: 4.57.1 slides no layer (the config drops the window; right
    on every layer, ropelaw reads no window and says nothing); 5.23.0's Qwen2MoeConfig still makes the even layers
    sliding and its forward fails for want of a window, which ropelaw says as RV021 (an error, at sliding_window)
    with the runtime's error."""
    import test_hf_files

    mapping = {**real_file(QWEN2_MOE), "use_sliding_window": True, "sliding_window": None}
    monkeypatch.setenv("ROPELAW_HF_SEMANTICS", test_hf_files.installed())
    path = tmp_path / "config.json"
    path.write_text(json.dumps(mapping))
    verdict, detail = test_hf_files.differential(path)
    reading = test_hf_files.ropelaw_reading(mapping, str(path))
    assert all(g["window"] is None for g in reading["result"]["layers"])
    if transformers.__version__.startswith("4."):
        assert verdict == "right", detail
        assert not {"RV021", "RV024"} & set(reading["codes"]), reading["findings"]
    else:
        assert verdict == "refused" and "Could not find a `sliding_window`" in detail, (verdict, detail)
        assert reading["codes"].get("RV021") == "error", reading["findings"]
        said = [f["message"] for f in reading["result"]["findings"] if f["code"] == "RV021"]
        assert any("Could not find a `sliding_window`" in m for m in said), said


@hf_compare.REAL_FILES_STEP
@pytest.mark.hf
@pytest.mark.torch
def test_qwen2_moe_window_zero_as_transformers_runs_it(tmp_path, monkeypatch):
    """use_sliding_window false with a written layer_types naming sliding layers: 5.23.0's Qwen2MoeConfig sets
    sliding_window to 0 and keeps the layer types; the sliding layers' mask (the probe's, no cache) lets no query
    attend any key, and the forward as users run it (the default cache) raises: ropelaw says RV021 (degenerate).
    4.57.1 reads no layer_types for Qwen2-MoE: no layer slides, right on every layer."""
    import hf_runtime
    import test_hf_files

    from ropelaw.lint.layers import shrunk

    n = real_file(QWEN2_MOE)["num_hidden_layers"]
    kinds = ["sliding_attention" if i % 2 == 0 else "full_attention" for i in range(n)]
    mapping = {**real_file(QWEN2_MOE), "use_sliding_window": False, "layer_types": kinds}
    monkeypatch.setenv("ROPELAW_HF_SEMANTICS", test_hf_files.installed())
    path = tmp_path / "config.json"
    path.write_text(json.dumps(mapping))
    reading = test_hf_files.ropelaw_reading(mapping, str(path))
    if transformers.__version__.startswith("4."):
        verdict, detail = test_hf_files.differential(path)
        assert verdict == "right", detail
        assert all(g["window"] is None for g in reading["result"]["layers"])
        return
    tc = hf_runtime.text_config(hf_runtime.load_config(mapping))
    assert tc.sliding_window == 0 and list(tc.layer_types) == kinds
    run = shrunk.run_file(mapping)  # no cache: the masks as the layers get them
    assert run.problem is None, run.problem
    for o in run.probe.layers:  # window 0: no key at all for the sliding layers; causal for the others
        assert (o.span, o.size) == (("window", 0) if kinds[o.index] == "sliding_attention" else ("full", None))
    small = dict(mapping, hidden_size=64, intermediate_size=64, moe_intermediate_size=32, num_experts=4,
                 num_experts_per_tok=2, shared_expert_intermediate_size=32, num_attention_heads=2,
                 num_key_value_heads=1, num_hidden_layers=2, layer_types=kinds[:2], vocab_size=128,
                 bos_token_id=None, eos_token_id=None)
    model = transformers.AutoModelForCausalLM.from_config(hf_runtime.load_config(small)).eval()
    with torch.no_grad(), pytest.raises(RuntimeError, match="must match the size"):
        model(torch.arange(10)[None] + 3)  # the default cache: the sliding layer's mask is one key short
    assert reading["codes"].get("RV021") == "error", reading["findings"]
    said = [f["message"] for f in reading["result"]["findings"] if f["code"] == "RV021"]
    assert any("sliding_window to 0" in m for m in said), said
