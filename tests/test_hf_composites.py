"""``ropelaw/data/hf_composites.json`` (scripts/hf_composites.py): what each composite config class does with a
config.json without ``text_config``, against its source (the composites of ``hf_types.json``), a sample measured again
under the installed transformers, ropelaw's reading of the table under both versions, and real files changed as
``scripts/hf_top_keys.py`` changed them run through transformers' shrunk forward (issue 31):

- Llama 4 Maverick's file without ``text_config``: both versions build ``Llama4TextConfig()`` from its defaults and
  run it; ropelaw reads those defaults (right on every layer) and says so (RV019 naming the class); under 5.23.0 it
  said RV021;
- Mllama's and Qwen3-VL's files without ``text_config``: 4.57.1's default text model does not build (ropelaw: RV021
  with the runtime's error; it linted them without an error), 5.23.0's builds (right);
- GLM-4.5's file as the ``text_config`` of a ``glm4v_moe`` composite (GLM-4.5V's layout: ``glm4v_moe_text``, its mrope
  sections [8, 12, 12]): 4.57.1 registers Glm4vMoeTextConfig as ``glm4v_moe_text`` although the class says
  ``Glm4vMoe_text``; ropelaw named the class attribute and said RV024 (RV003 at odd dims).
"""

from __future__ import annotations

import json
import pathlib
import sys

import pytest

from ropelaw import data
from ropelaw.lint.dialects import hf

REPO = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
import hf_compare  # noqa: E402

TABLE = data.read("hf_composites")
FORMS = ({"reads"}, {"refused"}, {"default"}, {"default", "unobserved"}, {"default", "top_rope_refused"},
         {"default", "unobserved", "top_rope_refused"})


def _generator():
    sys.path.insert(0, str(REPO / "scripts"))
    try:
        import hf_composites
    finally:
        sys.path.remove(str(REPO / "scripts"))
    return hf_composites


@pytest.mark.parametrize("version", hf.SEMANTICS)
def test_every_composite_of_the_version_is_measured(version):
    """The table holds both versions ropelaw follows, one entry for each composite of hf_types.json's text_types (its
    source), each of a documented form: a default text model of the type hf_types.json's rule says the class builds
    without a model_type, a refused rope_type one of the scaled types the generator tries."""
    gen = _generator()
    part = TABLE["versions"][version]
    assert set(part) == set(hf.types_table(version)["text_types"])
    for mt, entry in part.items():
        assert set(entry) in FORMS, (mt, entry)
        assert entry.get("reads", "top") == "top"
        if "default" in entry:  # the text type hf_types.json's rule says the class builds without a model_type
            want = hf.text_type(mt, None, version)[0]  # None: a text_config of {} raises there, no rule to compare
            assert want is None or entry["default"] == want, (mt, entry)
        assert set(entry.get("top_rope_refused", {})) <= set(gen.SCALED), (mt, entry)


@pytest.mark.hf
@pytest.mark.torch
def test_a_sample_measured_again_is_the_table():
    pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    part = TABLE["versions"][transformers.__version__]
    gen = _generator()
    sample = [mt for mt in ("llama4", "mllama", "qwen3_vl", "llava", "qwen2_vl", "glm4v_moe", "gemma3") if mt in part]
    assert len(sample) == 7, sample
    for mt in sample:
        assert gen.absent(mt) == part[mt], mt


@pytest.mark.parametrize("version", hf.SEMANTICS)
def test_ropelaw_reads_each_entry_as_the_table_says(version, monkeypatch):
    """Per version, a file of each composite type without text_config (a Llama-like text model's keys at the top
    level) as ropelaw lints it: RV021 with the measured error where the table says refused; RV019 naming the default
    text config class where it builds the default, and the top-level keys unread (the defaults' base, not the file's
    1234.5); RV021 with the measured error for a refused top-level rope_scaling."""
    from ropelaw.lint.check import lint_config
    from ropelaw.lint.loader import load_mapping
    from ropelaw.lint.model import NoRopeFound, NotARopeConfig

    monkeypatch.setenv("ROPELAW_HF_SEMANTICS", version)
    top = {"hidden_size": 256, "num_attention_heads": 4, "rope_theta": 1234.5, "max_position_embeddings": 4096}

    def lint(mapping: dict):
        try:
            cfg = load_mapping(mapping, path="config.json")
        except (NotARopeConfig, NoRopeFound):  # a default text model without RoPE (CLIP's): nothing to read
            return None, {}
        out: dict = {}
        for f in lint_config(cfg).findings:
            out.setdefault(f.code, []).append(f)
        return cfg, out

    checked = {"refused": 0, "default": 0, "rope": 0}
    for mt, entry in sorted(TABLE["versions"][version].items()):
        if "reads" in entry:
            continue
        cfg, found = lint({"model_type": mt, **top})
        if "refused" in entry:
            assert any(f.severity == "error" and entry["refused"] in f.message for f in found["RV021"]), (mt, found)
            checked["refused"] += 1
        elif cfg is not None:
            cls = hf.defaults(entry["default"], version).get("_class") or entry["default"]
            said = [f.message for f in found.get("RV019", ())]
            assert any(m.startswith("text_config is absent") and cls in m for m in said), (mt, said)
            assert "RV021" not in found, (mt, found["RV021"][0].message)
            assert all(lay.base is None or lay.base.raw != 1234.5 for lay in cfg.layers), mt
            checked["default"] += 1
        for name, why in entry.get("top_rope_refused", {}).items():
            block = dict(_generator().SCALED[name], rope_type=name)
            refused, found = lint({"model_type": mt, **top, "rope_scaling": block})
            if refused is not None:
                assert any(why in f.message for f in found["RV021"]), (mt, name, found)
                checked["rope"] += 1
    assert checked["refused"] >= 3 and checked["default"] >= 5, checked  # most default text models have no RoPE
    assert (checked["rope"] > 0) == (version != "4.57.1"), checked


# -----------------------------------------------------------------------------------------
# real files changed, through transformers' forward (CI's real-files step, both versions)
# -----------------------------------------------------------------------------------------
MAVERICK = "heldout-r3/hub/kvcache-ai__ktransformers__doc__en__maverick_config.json"
MLLAMA = ("heldout-r3/hub/whn09__neuronx-distributed-inference__test__integration__tp32__models__mllama__"
          "config_4layer.json")
QWEN3_VL = "heldout-r3/hub/nikolay-grudanov__Team_5_AI_Tutor__models__Qwen3-VL-4B-Instruct__config.json"
GLM45 = "hf/alibaba__rtp-llm__rtp_llm__test__model_test__fake_test__testdata__glm45__tokenizer__config.json"


def without_text_config(d: dict) -> dict:
    return {k: v for k, v in d.items() if k != "text_config"}


def as_glm4v_moe(d: dict) -> dict:
    """GLM-4.5's text model in GLM-4.5V's layout: a glm4v_moe composite whose text_config is glm4v_moe_text with the
    mrope sections [8, 12, 12] (32 pairs: half of its 128-dim heads rotate) in a ``type`` rope_scaling."""
    text = dict(d, model_type="glm4v_moe_text", rope_scaling={"type": "default", "mrope_section": [8, 12, 12]})
    text.pop("architectures", None)
    return {"architectures": ["Glm4vMoeForConditionalGeneration"], "model_type": "glm4v_moe", "text_config": text}


CASES = {  # name -> (file, change)
    "llama4 text_config removed": (MAVERICK, without_text_config),
    "mllama text_config removed": (MLLAMA, without_text_config),
    "qwen3_vl text_config removed": (QWEN3_VL, without_text_config),
    "glm4_moe as glm4v_moe_text": (GLM45, as_glm4v_moe),
}


@hf_compare.REAL_FILES_STEP
@pytest.mark.hf
@pytest.mark.torch
@pytest.mark.parametrize("name", CASES)
def test_changed_real_file_right_or_refused_as_the_runtime(name, tmp_path):
    """``right`` (every layer as the forward runs it) where transformers builds the changed file, ``refused`` (RV021
    naming text_config) where it does not; a default text model is said (RV019 naming its config class)."""
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    import test_hf_files
    import test_hf_top_keys

    from ropelaw.lint.layers import shrunk

    label, change = CASES[name]
    original = test_hf_top_keys.corpus_file(label)  # sha256 checked against tests/corpus/hf_files.json
    if original is None:
        pytest.skip(f"{label} is not in the corpus yet")
    changed = change(original)
    path = tmp_path / "config.json"
    path.write_text(json.dumps(changed))
    verdict, detail = test_hf_files.differential(path)
    run = shrunk.run_file(changed)
    refused = test_hf_files.runtime_fails(run)
    assert verdict == ("refused" if refused else "right"), (verdict, detail, run.refused, run.problem)
    reading = test_hf_files.ropelaw_reading(changed, str(path))
    messages = [f["message"] for f in reading["result"]["findings"]]
    if refused:
        assert any(m.startswith(f"transformers {test_hf_files.installed()}") and "text_config" in m for m in messages)
    elif "text_config" not in changed:  # the class's default text model runs, and ropelaw says so
        assert run.model_type == hf.text_config_absent(changed, test_hf_files.installed())["default"]
        assert any(m.startswith("text_config is absent") for m in messages), messages
