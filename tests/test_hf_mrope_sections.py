"""``ropelaw/data/hf_mrope_sections.json`` (scripts/hf_mrope_sections.py): what transformers does with multimodal
RoPE sections not summing to half the rotated dims, per decoder type and version, against its source: the types of
``hf_layers.json``, verdicts of the documented form, and every entry of the installed version measured again here
on its tiny model (``probes.observe``); then ropelaw's reading of a HunyuanOCR-layout config follows it."""

from __future__ import annotations

import json
import pathlib
import sys

import pytest

from ropelaw import data

REPO = pathlib.Path(__file__).resolve().parents[1]
TABLE = data.read("hf_mrope_sections")
VERDICT = ("runs", "refused: config: ", "refused: model: ", "refused: forward: ", "ran otherwise: ")


def _generator():
    sys.path.insert(0, str(REPO / "scripts"))
    try:
        import hf_mrope_sections
    finally:
        sys.path.remove(str(REPO / "scripts"))
    return hf_mrope_sections


@pytest.mark.parametrize("version", sorted(TABLE["versions"]))
def test_every_entry_is_a_measured_type(version):
    from ropelaw.lint.dialects.hf import SEMANTICS

    assert sorted(TABLE["versions"]) == sorted(SEMANTICS)
    types = data.hf_layers()[version]["types"]
    part = TABLE["versions"][version]
    assert part, version
    for mt, got in part.items():
        assert mt in types, mt
        assert got["block"] in ("rope_parameters", "rope_scaling") and got["key"] in ("mrope_section", "xdrope_section")
        assert got["longer"].startswith(VERDICT) and got["shorter"].startswith(VERDICT), (mt, got)
        assert all(k in ("alias", "head_dim") for k in got["head_dim_aliases"].values()), (mt, got)


@pytest.mark.hf
@pytest.mark.torch
def test_every_entry_measured_again_is_the_table():
    pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    part = TABLE["versions"][transformers.__version__]
    gen = _generator()
    for mt in sorted(part):
        assert gen.sections(mt) == part[mt], mt


HUNYUAN_OCR = {  # the published HunyuanOCR layout (tencent/HunyuanOCR config.json), its text keys
    "model_type": "hunyuan_vl", "hidden_size": 1024, "num_attention_heads": 16, "num_key_value_heads": 8,
    "head_dim": 128, "attention_head_dim": 128, "num_hidden_layers": 24, "max_position_embeddings": 32768,
    "rope_theta": 10000.0,
    "rope_scaling": {"alpha": 1000.0, "beta_fast": 32, "beta_slow": 1, "factor": 1.0, "mscale": 1.0,
                     "mscale_all_dim": 1.0, "type": "xdrope", "xdrope_section": [16, 16, 16, 16]}}


@pytest.mark.parametrize("head", [128, 130, 129])
def test_hunyuan_vl_sections_against_attention_head_dim(head, tmp_path, monkeypatch):
    """5.23.0's HunYuanVLTextConfig keeps attention_head_dim over head_dim (measured: ``head_dim_aliases``) and
    refuses sections not summing to half of it (measured: ``longer`` / ``shorter``): ropelaw's reading under that
    version takes attention_head_dim as the head and names the refusal for 130 (sections 64 for 65 pairs); 128 is
    no refusal of the sections; 129, odd, is read as 129 (RV003's error: the sections' check leaves an odd head to
    it)."""
    from ropelaw.lint.loader import load_config

    part = TABLE["versions"].get("5.23.0", {}).get("hunyuan_vl_text")
    if part is None:
        pytest.skip("5.23.0 has no hunyuan_vl_text entry")
    assert part["head_dim_aliases"] == {"attention_head_dim": "alias"}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(dict(HUNYUAN_OCR, attention_head_dim=head)))
    monkeypatch.setenv("ROPELAW_HF_SEMANTICS", "5.23.0")
    cfg = load_config(str(path))
    assert cfg.head_dim.raw == head and cfg.head_dim.key == "attention_head_dim"  # the value the class keeps
    got = [why for version, _, why in cfg.refusals if version == "5.23.0" and "rotated pairs" in why]
    if head == 128:
        assert got == []
    elif head == 130:
        assert got and "(sum 64) for 65 rotated pairs (a head of 130: attention_head_dim" in got[0], got
        assert part["shorter"].split(": ", 2)[2][:40] in got[0]
