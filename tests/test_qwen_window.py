"""Qwen2 / Qwen3 sliding windows (the ``window_after_layers`` row of ropelaw/lint/table_rows.py): the config class
keeps ``sliding_window`` only when ``use_sliding_window`` is true, and then slides the layers from
``max_window_layers`` on. Each variant of a real file is run through transformers' own model (the per-layer
differential of tests/test_hf_files.py: the forward's spans and rotaries against ropelaw's groups) under the
installed version, 4.57.1 or 5.23.0."""

from __future__ import annotations

import json
import os
import pathlib

import pytest

REPO = pathlib.Path(__file__).resolve().parents[1]
CORPUS = pathlib.Path(os.environ.get("ROPELAW_CORPUS", REPO.parent / "shared" / "corpus"))
QWEN25 = CORPUS / "hf" / "infinityarpan__qwen-25-api__models__Qwen2.5-0.5B-Instruct__config.json"

VARIANTS = {  # the file's changes; the span of each layer is the runtime's, compared by the differential
    "use_sliding_window true (max_window_layers 21: layers 21-23 slide)": {"use_sliding_window": True},
    "use_sliding_window true, max_window_layers 0 (all slide)": {"use_sliding_window": True, "max_window_layers": 0},
    "use_sliding_window true, sliding_window null (none slides)": {"use_sliding_window": True,
                                                                   "sliding_window": None},
    "use_sliding_window true, layer_types written": {
        "use_sliding_window": True, "layer_types": ["sliding_attention", "full_attention"] * 12},
    "qwen3, use_sliding_window true": {"use_sliding_window": True, "model_type": "qwen3",
                                       "architectures": ["Qwen3ForCausalLM"], "head_dim": 64},
}


def _file() -> dict:
    if not QWEN25.is_file():
        pytest.skip(f"{QWEN25.name} not in the corpus yet")
    return json.loads(QWEN25.read_text())


@pytest.mark.hf
@pytest.mark.torch
@pytest.mark.parametrize("name", list(VARIANTS))
def test_qwen_window_as_transformers_runs_it(name, tmp_path, monkeypatch):
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    import test_hf_files

    data = {**_file(), **VARIANTS[name]}
    monkeypatch.setenv("ROPELAW_HF_SEMANTICS", test_hf_files.installed())
    path = tmp_path / "config.json"
    path.write_text(json.dumps(data))
    assert test_hf_files.differential(path) == ("right", "")


@pytest.mark.parametrize("version", ["4.57.1", "5.23.0"])
def test_qwen_window_layers_from_the_flag(version):
    """The plan's kinds: the class's list comprehension (its source, quoted in the row) by brute force."""
    from ropelaw.lint.layers import plan

    class V:
        def __init__(self, raw):
            self.raw, self.where, self.key = raw, "file", None

    for flag, m, w in ((True, 21, 32768), (False, 21, 32768), (True, 30, 8), (True, 21, None)):
        given = {"use_sliding_window": V(flag), "max_window_layers": V(m), "sliding_window": V(w)}
        p = plan("qwen2", 24, given.get, lambda k: None, version)
        assert p.problem is None
        slides = [r.span == "window" for r in p.roles]
        assert slides == [bool(flag) and w is not None and i >= m for i in range(24)]
    given = {"use_sliding_window": V(False), "sliding_window": V(8),
             "layer_types": V(["sliding_attention"] * 24)}
    assert "does not model" in plan("qwen2", 24, given.get, lambda k: None, version).problem
