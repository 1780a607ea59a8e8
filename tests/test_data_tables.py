"""The generated tables of ``ropelaw/data/`` (one folder, one format, one writer, one reader: :mod:`ropelaw.data`)
and the scripts under ``scripts/`` that regenerate them from their sources (not shipped with the package).

The preset tables regenerate from the frameworks' wheels at the pinned versions when they are present
(``ROPELAW_FRAMEWORK_DL``: CI's framework step downloads them and runs this file); the other tables have their
tests beside their subject (``tests/test_hf_keys.py``, ``tests/test_plan_evidence.py``).
"""

from __future__ import annotations

import importlib
import json
import os
import pathlib
import sys

import pytest

from ropelaw import data

ROOT = pathlib.Path(__file__).resolve().parents[1]
# the wheels, as pip download leaves them
DL = pathlib.Path(os.environ.get("ROPELAW_FRAMEWORK_DL", ROOT.parent / "shared" / "dl"))


def script(name: str):
    """A module of ``scripts/`` (the generators live outside the package)."""
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(ROOT / "scripts"))


def test_every_table_is_the_one_writers_output():
    """Every file of ropelaw/data is JSON exactly as :func:`ropelaw.data.dump` writes it (so a regeneration
    changes only what changed), and :func:`ropelaw.data.read` reads each."""
    names = sorted(p.stem for p in pathlib.Path(data.FOLDER).glob("*.json"))
    assert {"hf_keys", "hf_types", "plan_evidence", "presets_axolotl", "presets_litgpt", "presets_maxtext",
            "presets_torchtitan", "presets_torchtune"} <= set(names)
    assert sorted(p.name for p in pathlib.Path(data.FOLDER).iterdir() if p.suffix != ".py"
                  and p.name != "__pycache__") == [f"{n}.json" for n in names]  # one format
    for name in names:
        text = pathlib.Path(data.path(name)).read_text(encoding="utf-8")
        assert data.dump(json.loads(text)) == text, name
        assert data.read(name) == json.loads(text)


def test_the_writer_writes_what_the_reader_reads(tmp_path, monkeypatch):
    monkeypatch.setattr(data, "FOLDER", str(tmp_path))
    data.read.cache_clear()
    try:
        table = {"b": [1, 2.5, None, True], "a": {"é": "x"}}
        path = data.write("t", table)
        assert path == str(tmp_path / "t.json") and data.read("t") == table
        assert (tmp_path / "t.json").read_text() == '{\n "b": [\n  1,\n  2.5,\n  null,\n  true\n ],\n "a": {\n  ' \
                                                    '"\\u00e9": "x"\n }\n}\n'
        data.write("t", table, sort_keys=True)
        assert list(json.loads((tmp_path / "t.json").read_text())) == ["a", "b"]
    finally:
        data.read.cache_clear()


def test_no_generator_in_the_package():
    """The scripts that regenerate the tables are not shipped (they import frameworks, read wheels)."""
    assert not (ROOT / "ropelaw" / "lint" / "presets").exists()
    assert (ROOT / "scripts" / "presets.py").is_file() and (ROOT / "scripts" / "tune_builders.py").is_file()


def test_presets_reads_litgpts_block_size_comments():
    text = ('configs = [\n    dict(\n        name="Mistral-7B-{}v0.1",\n'
            '        block_size=4096,  # should be 32768 but sliding window attention is not implemented\n'
            '    ),\n    dict(name="Other", block_size=2048),  # a comment elsewhere\n]\n')
    assert script("presets")._litgpt_block_size_comments(text) == {
        "Mistral-7B-{}v0.1": (32768, "should be 32768 but sliding window attention is not implemented")}


def test_presets_reads_sliding_window_patterns():
    """scripts/presets.py's reading of a component builder's per-layer sliding_window_size."""
    import ast

    tune_windows = script("presets")._tune_windows

    def windows(body: str, **args):
        fn = ast.parse("def comp(num_layers, sliding_window_size=4096):\n"
                       "    for layer_idx in range(num_layers):\n"
                       f"        layers.append(Attn({body}))\n").body[0]
        return tune_windows(fn, {"num_layers": 26, "sliding_window_size": 4096, **args})

    assert windows("sliding_window_size=sliding_window_size if (layer_idx % 2)==0 else None") == \
        {"sliding_window": 4096, "sliding_window_layers": "even", "num_layers": 26}
    assert windows("sliding_window_size=sliding_window_size")["sliding_window_layers"] == "all"
    assert windows("sliding_window_size=None") == {} and windows("head_dim=64") == {}
    with pytest.raises(SystemExit, match="unknown sliding-window layer pattern"):
        windows("sliding_window_size=sliding_window_size if layer_idx % 3 == 0 else None")


@pytest.mark.skipif(not (DL / "litgpt").is_dir(), reason=f"no downloaded framework wheels in {DL} "
                                                          f"(ROPELAW_FRAMEWORK_DL: CI's framework step)")
def test_preset_tables_regenerate_from_the_wheels():
    """With the wheels present (ROPELAW_FRAMEWORK_DL), the shipped tables are exactly what scripts/presets.py
    reads from them."""
    presets = script("presets")
    for name, table in presets.build(str(DL), ("torchtitan", "litgpt", "torchtune", "axolotl")).items():
        assert presets.dump(table) == pathlib.Path(data.path(f"presets_{name}")).read_text(), name
