"""``ropelaw/data/hf_layer_lengths.json`` (scripts/hf_layer_lengths.py): what transformers does with a per-layer list
one entry longer or shorter than the layers, per type, against its source: the types of ``hf_layers.json`` with
such a list, and a sample measured again here on the installed transformers' tiny models (``probes.observe``)."""

from __future__ import annotations

import pathlib
import sys

import pytest

from ropelaw import data

REPO = pathlib.Path(__file__).resolve().parents[1]
TABLE = data.read("hf_layer_lengths")
VERDICT = ("first", "refused: ", "ran otherwise: ")


def _generator():
    sys.path.insert(0, str(REPO / "scripts"))
    try:
        import hf_layer_lengths
    finally:
        sys.path.remove(str(REPO / "scripts"))
    return hf_layer_lengths


@pytest.mark.parametrize("version", sorted(TABLE["versions"]))
def test_every_entry_is_a_measured_list_of_its_types(version):
    """Every entry is a type of hf_layers.json and the key its kinds / nope list is read under, with a verdict of
    the documented form for both lengths; the table covers both versions ropelaw follows."""
    from ropelaw.lint.dialects.hf import SEMANTICS

    assert sorted(TABLE["versions"]) == sorted(SEMANTICS)
    types, uncovered = data.hf_layers()[version]["types"], data.hf_layers()[version]["not_covered"]
    gen = _generator()
    for mt, keys in TABLE["versions"][version].items():
        if mt in uncovered:  # no model class: its config class alone, a refusal kept (config_lengths)
            for key, got in keys.items():
                assert key in gen.UNCOVERED_KEYS, (mt, key)
                assert sorted(got) == ["longer", "shorter"], got
                assert all(v.startswith("refused: ") or v == gen.ACCEPTS for v in got.values()), got
                assert any(v.startswith("refused: ") for v in got.values()), got
            continue
        assert mt in types, mt
        listed = {types[mt][slot]["key"] for slot in ("kinds", "nope") if types[mt].get(slot)}
        for key, got in keys.items():
            assert key in listed, (mt, key)
            assert sorted(got) == ["longer", "shorter"] and all(v.startswith(VERDICT) for v in got.values()), got


SAMPLE = ("gpt_oss", "lfm2", "olmo3", "qwen3", "smollm3", "ministral", "mistral_large4_text", "gemma3_text")
UNCOVERED_SAMPLE = ("qwen2_5_omni_text", "t5gemma2_text", "qwen2_5_omni")  # the last a composite: none


@pytest.mark.hf
@pytest.mark.torch
def test_a_sample_measured_again_is_the_table():
    pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    version = transformers.__version__
    part = TABLE["versions"][version]
    gen = _generator()
    sample = [mt for mt in SAMPLE if mt in part]
    assert len(sample) >= 4, sample
    for mt in sample:
        for key, want in part[mt].items():
            assert gen.lengths(mt, key) == want, (mt, key)


@pytest.mark.hf
def test_the_uncovered_types_measured_again_are_the_table():
    """The types hf_layers.json does not cover, by their config class alone (``config_lengths``): each of a sample
    (two the table holds under 5.23.0, a composite it does not) derives again as the table holds it (nothing where
    it holds nothing), and so does every type of the installed version's ``not_covered`` list that the table
    holds."""
    transformers = pytest.importorskip("transformers")
    version = transformers.__version__
    part, gen = TABLE["versions"][version], _generator()
    uncovered = data.hf_layers()[version]["not_covered"]
    for mt in sorted({*(m for m in UNCOVERED_SAMPLE if m in uncovered), *(m for m in part if m in uncovered)}):
        assert gen.config_lengths(mt) == part.get(mt, {}), mt
