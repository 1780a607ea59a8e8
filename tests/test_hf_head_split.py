"""``ropelaw/data/hf_head_split.json`` (scripts/hf_head_split.py): what transformers does with hidden_size not a
multiple of num_attention_heads, per decoder type and version, against its source: the types of ``hf_layers.json``,
verdicts of the documented form, and a sample measured again here on the installed transformers' tiny models
(``probes.observe``); then ropelaw's verdict on a config of a sampled type follows the table (an error naming the
runtime's refusal where the followed version refuses it, a warning where it runs)."""

from __future__ import annotations

import pathlib
import sys

import pytest

from ropelaw import data

REPO = pathlib.Path(__file__).resolve().parents[1]
TABLE = data.read("hf_head_split")
VERDICT = ("runs", "refused: config: ", "refused: model: ", "refused: forward: ", "ran otherwise: ")


def _generator():
    sys.path.insert(0, str(REPO / "scripts"))
    try:
        import hf_head_split
    finally:
        sys.path.remove(str(REPO / "scripts"))
    return hf_head_split


@pytest.mark.parametrize("version", sorted(TABLE["versions"]))
def test_every_entry_is_a_measured_type(version):
    """Every entry is a type of hf_layers.json with a verdict of the documented form for one or both ways of writing
    the head; the table covers both versions ropelaw follows, and most of each version's types (a type is left out
    only when its tiny model does not run at all)."""
    from ropelaw.lint.dialects.hf import SEMANTICS

    assert sorted(TABLE["versions"]) == sorted(SEMANTICS)
    types = data.hf_layers()[version]["types"]
    part = TABLE["versions"][version]
    assert len(part) >= len(types) // 2, (len(part), len(types))
    for mt, got in part.items():
        assert mt in types, mt
        assert got and set(got) <= {"absent", "explicit"}, (mt, got)
        assert all(v.startswith(VERDICT) for v in got.values()), (mt, got)


# refusing at each stage and running, under both versions (each is in its version's table: checked below)
SAMPLE = ("gpt_neox", "qwen2_vl_text", "chameleon", "llama", "qwen2", "arcee", "bitnet", "gemma3_text")


@pytest.mark.hf
@pytest.mark.torch
def test_a_sample_measured_again_is_the_table():
    pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    part = TABLE["versions"][transformers.__version__]
    gen = _generator()
    sample = [mt for mt in SAMPLE if mt in part]
    assert len(sample) >= 6, sample
    kinds = set()
    for mt in sample:
        got = gen.split(mt)
        assert got == part[mt], (mt, got, part[mt])
        kinds |= {v.split(":")[0] if v.startswith("runs") else ":".join(v.split(":")[:2]) for v in got.values()}
    assert "runs" in kinds and any(k.startswith("refused") for k in kinds), kinds


@pytest.mark.parametrize("version", sorted(TABLE["versions"]))
@pytest.mark.parametrize("explicit", [False, True])
def test_ropelaw_says_what_the_table_measured(version, explicit):
    """A Llama-layout config of each type the table measured refusing, and of one it measured running, under
    each version's semantics: hidden_size not a multiple of the heads is an error naming the measured refusal
    where the followed version refuses it (RV004 when head_dim is absent, RV021 when it is given), and no error
    where it runs."""
    from ropelaw.lint.rules import runtime
    from ropelaw.lint.model import LoadedConfig

    part = TABLE["versions"][version]
    way = "explicit" if explicit else "absent"
    for mt in ("gpt_neox", "qwen2_vl_text", "llama"):
        verdict = part.get(mt, {}).get(way)
        if verdict is None:
            continue
        cfg = LoadedConfig(path="c.json", fmt="json", arch=mt, kind="hf", head_dim=None, layers=[], max_pos=None,
                           original_max=None, train_len=None, target=None, tune_len=None, dtype=None)
        got = runtime.split_refusals(cfg, explicit)
        if verdict.startswith("refused: "):
            assert verdict.split(": ", 2)[2][:60] in got[version], (mt, got)
        else:
            assert version not in got, (mt, got)
