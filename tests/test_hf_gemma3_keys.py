"""Gemma 3's legacy keys as transformers runs them, against ropelaw's per-layer groups: ``sliding_window_pattern``
(Gemma3TextConfig / Cohere2Config derive ``layer_types`` from it when the file writes none: every P-th layer
global) and, under 5.23.0, ``rope_local_base_freq`` (``convert_rope_params_to_dict`` puts it into
``rope_parameters["sliding_attention"]["rope_theta"]``). Both were silent defects that
``scripts/hf_top_keys.py`` measured on ``heldout-r2/hub/mlc_gemma3_1b_it.json``; here the real file is changed as
there and run shrunk in place through transformers (``tests/test_hf_files.py`` ``differential``: every layer's
rotary and span compared with ropelaw's reading), and ropelaw's groups are checked against the runtime's own
config object (its ``layer_types`` and the sliding layers' base). Under either installed transformers version;
the file skips, naming it, when the corpus does not hold it.
"""

from __future__ import annotations

import json
import os
import pathlib
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
import hf_compare  # noqa: E402
torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
CORPUS = pathlib.Path(os.environ.get("ROPELAW_CORPUS", REPO.parent / "shared" / "corpus"))
LABEL = "heldout-r2/hub/mlc_gemma3_1b_it.json"

CHANGES = {  # name -> the keys changed in the real file (the table's trials, and both at once, and layer_types)
    "pattern 8": {"sliding_window_pattern": 8},
    "local base 10002": {"rope_local_base_freq": 10002},
    "pattern 8, local base 10002": {"sliding_window_pattern": 8, "rope_local_base_freq": 10002},
    "pattern 4": {"sliding_window_pattern": 4},
    # a written layer_types wins over the pattern (the class derives the list only when it is None)
    "layer_types and pattern 8": {"sliding_window_pattern": 8,
                                  "layer_types": ["sliding_attention"] * 25 + ["full_attention"]},
}


def real_file() -> dict:
    import test_hf_top_keys

    data = test_hf_top_keys.corpus_file(LABEL)  # sha256 checked against tests/corpus/hf_files.json
    if data is None:
        pytest.skip(f"{LABEL} is not in {CORPUS} yet")
    return data


def runtime_layers(mapping: dict) -> tuple[list[str], float | None]:
    """transformers' own ``(layer_types, the sliding layers' own base)`` of ``mapping``, loaded as users load it
    (None: they have none, as Cohere 2's)."""
    import hf_runtime

    tc = hf_runtime.text_config(hf_runtime.load_config(mapping))
    rp = getattr(tc, "rope_parameters", None)
    if isinstance(rp, dict) and isinstance(rp.get("sliding_attention"), dict):  # 5.x
        return list(tc.layer_types), float(rp["sliding_attention"]["rope_theta"])
    local = getattr(tc, "rope_local_base_freq", None)  # 4.57.1: rotary_emb_local's base
    return list(tc.layer_types), float(local) if local is not None else None


def check(mapping: dict, tmp_path: pathlib.Path) -> None:
    """ropelaw's groups of ``mapping`` are transformers' layers: the differential is right, each group's indices
    are those of one layer type in the runtime's layer_types, and the sliding group runs the runtime's local base."""
    import test_hf_files

    path = tmp_path / "config.json"
    path.write_text(json.dumps(mapping))
    verdict, detail = test_hf_files.differential(path)
    assert verdict == "right", detail
    types, local_base = runtime_layers(mapping)
    result = test_hf_files.ropelaw_reading(mapping, str(path))["result"]
    for g in result["layers"]:
        assert g["kinds"] and len(g["kinds"]) == 1, g["layers"]
        assert g["indices"] == [i for i, t in enumerate(types) if t == g["kinds"][0]], g["layers"]
        if g["kinds"] == ["sliding_attention"] and local_base is not None:
            assert g["spec"]["base"] == local_base


@hf_compare.REAL_FILES_STEP
@pytest.mark.parametrize("name", CHANGES)
def test_changed_real_file_as_transformers_runs_it(name, tmp_path):
    changed = dict(real_file(), **CHANGES[name])
    check(changed, tmp_path)
    types, local_base = runtime_layers(changed)
    if "layer_types" in CHANGES[name]:
        assert types == CHANGES[name]["layer_types"]
    elif "sliding_window_pattern" in CHANGES[name]:  # the runtime follows the pattern: every P-th layer global
        p = CHANGES[name]["sliding_window_pattern"]
        assert [i for i, t in enumerate(types) if t == "full_attention"] == list(range(p - 1, 26, p))
    if "rope_local_base_freq" in CHANGES[name]:
        assert local_base == 10002


@hf_compare.REAL_FILES_STEP
def test_cohere2_pattern_as_transformers_runs_it(tmp_path):
    """Cohere2Config reads sliding_window_pattern the same way (a tiny config, 8 layers, pattern 3)."""
    mapping = {"model_type": "cohere2", "architectures": ["Cohere2ForCausalLM"], "hidden_size": 64,
               "intermediate_size": 128, "num_attention_heads": 4, "num_key_value_heads": 2, "num_hidden_layers": 8,
               "vocab_size": 256, "sliding_window": 16, "sliding_window_pattern": 3, "max_position_embeddings": 512}
    check(mapping, tmp_path)
    types, _ = runtime_layers(mapping)
    assert [i for i, t in enumerate(types) if t == "full_attention"] == [2, 5]
