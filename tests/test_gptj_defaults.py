"""GPT-J without ``rotary_dim`` / ``n_positions``: transformers runs its config class's defaults (GPTJConfig
rotary_dim 64, n_positions 2048 under 4.57.1 and 5.23.0, recorded in ropelaw/data/hf_defaults.json by
scripts/hf_defaults.py), and so does ropelaw. Each variant of a real file is run through transformers' own model
(the per-layer differential of tests/test_hf_files.py) under the installed version."""

from __future__ import annotations

import json
import os
import pathlib

import pytest

REPO = pathlib.Path(__file__).resolve().parents[1]
CORPUS = pathlib.Path(os.environ.get("ROPELAW_CORPUS", REPO.parent / "shared" / "corpus"))
GPTJ = CORPUS / "heldout-r2" / "hub" / "mlc_gpt_j.json"


def _variant(removed: str) -> dict:
    if not GPTJ.is_file():
        pytest.skip(f"{GPTJ.name} not in the corpus yet")
    data = json.loads(GPTJ.read_text())
    del data[removed]
    return data


@pytest.mark.hf
@pytest.mark.torch
@pytest.mark.parametrize("removed", ["rotary_dim", "n_positions"])
def test_gptj_default_as_transformers_runs_it(removed, tmp_path, monkeypatch):
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    import test_hf_files

    monkeypatch.setenv("ROPELAW_HF_SEMANTICS", test_hf_files.installed())
    path = tmp_path / "config.json"
    path.write_text(json.dumps(_variant(removed)))
    assert test_hf_files.differential(path) == ("right", "")


@pytest.mark.parametrize("version", ["4.57.1", "5.23.0"])
@pytest.mark.parametrize("removed", ["rotary_dim", "n_positions"])
def test_gptj_reads_the_class_default(removed, version, monkeypatch):
    """The spec ropelaw analyses: the class default in place of the removed key (64 rotary dims of the 256-dim
    head, training length 2048: GPTJConfig's signature defaults, the same in both versions), no RL100."""
    import test_hf_files

    monkeypatch.setenv("ROPELAW_HF_SEMANTICS", version)
    got = test_hf_files.ropelaw_reading(_variant(removed), "config.json")
    (group,) = got["result"]["layers"]
    assert (group["spec"]["d"], group["spec"]["train_len"]) == (64, 2048)
    assert "RL100" not in got["codes"]
