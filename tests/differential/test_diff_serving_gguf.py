"""transformers' own GGUF conversion (``modeling_gguf_pytorch_utils.load_gguf_checkpoint``, what SGLang 0.5.23's
``get_config`` runs for a GGUF with no config.json beside it) against ropelaw's model of it
(``ropelaw/lint/dialects/serving_gguf.py`` ``converted``), on GGUF files written with the ``gguf`` package.

- with the installed transformers (the [test] pin 4.57.1; CI's third step runs ``-m hf`` again under 5.23.0):
  its ``load_gguf_checkpoint`` on each file, against ``converted`` given that version's own tables
  (``integrations/ggml.py``); both refuse an architecture the table lacks. ``tie_word_embeddings`` (read from
  the weight tensors' names) and ``vocab_size`` (from the tokenizer) are not RoPE settings and are not modelled;
- SGLang's pin, transformers==5.19.0: its ``integrations/ggml.py`` tables (read with ``ast`` from the wheel, nothing
  imported) must be the committed ``ropelaw/data/transformers_gguf.json``; and its ``load_gguf_checkpoint`` source
  must still carry no RoPE-scaling key but gpt-oss's and never name the ``rope_freqs`` tensor (what RV042 says).
  Runs when ``ROPELAW_TF_GGUF_WHEEL`` names the wheel (CI step 'serving runtimes').
"""

from __future__ import annotations

import json
import os
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

from ropelaw.lint.dialects.serving_gguf import NotModelled, _tables, converted
from ropelaw.lint.gguf import read_gguf
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: gguf_files
from gguf_files import LLAMA31_8B, llama31, write_gguf  # noqa: E402

WHEEL = os.environ.get("ROPELAW_TF_GGUF_WHEEL")

QWEN = {"{arch}.context_length": 32768, "{arch}.embedding_length": 3584, "{arch}.block_count": 28,
        "{arch}.attention.head_count": 28, "{arch}.attention.head_count_kv": 4, "{arch}.rope.freq_base": 1000000.0,
        "{arch}.rope.dimension_count": 128}
CASES = {
    "llama31-tensor": lambda p: llama31(p),
    "llama-yarn-keys": lambda p: llama31(p, llama__rope__scaling__type="yarn", llama__rope__scaling__factor=4.0,
                                         llama__rope__scaling__original_context_length=32768),
    "mistral-by-name": lambda p: write_gguf(p, "llama", {**LLAMA31_8B, "general.name": "mistral"}),
    "qwen2-yarn": lambda p: write_gguf(p, "qwen2", {**QWEN, "{arch}.rope.scaling.type": "yarn",
                                                    "{arch}.rope.scaling.factor": 4.0}),
    "qwen3moe": lambda p: write_gguf(p, "qwen3moe", {**QWEN, "{arch}.attention.key_length": 128,
                                                     "{arch}.expert_count": 8}),
    "gemma3": lambda p: write_gguf(p, "gemma3", {**QWEN, "{arch}.attention.key_length": 256,
                                                 "{arch}.attention.sliding_window": 1024}),
    "gpt-oss": lambda p: write_gguf(p, "gpt-oss", {**QWEN, "{arch}.rope.scaling.type": "yarn",
                                                   "{arch}.rope.scaling.factor": 32.0,
                                                   "{arch}.rope.scaling.original_context_length": 4096}),
    "unsupported": lambda p: write_gguf(p, "olmo2", QWEN),
}
NOT_ROPE = ("tie_word_embeddings", "vocab_size")


@pytest.mark.hf
@pytest.mark.parametrize("name", sorted(CASES))
def test_transformers_converts_as_ropelaw_reads(tmp_path, name):
    ggml = pytest.importorskip("transformers.integrations.ggml")
    pytest.importorskip("gguf")
    from transformers.modeling_gguf_pytorch_utils import load_gguf_checkpoint

    path = CASES[name](tmp_path / f"{name}.gguf")
    tables = {"config": ggml.GGUF_CONFIG_MAPPING, "defaults": getattr(ggml, "GGUF_CONFIG_DEFAULTS_MAPPING", {})}
    try:
        theirs = load_gguf_checkpoint(path)["config"]
    except ValueError as exc:
        assert "is not supported yet" in str(exc)
        with pytest.raises(ValueError, match="is not supported yet"):
            converted(read_gguf(path).metadata, tables)
        return
    except TypeError:  # 5.x's gpt-oss branch: float() of the key's length field (parts[0]), not its value
        assert name == "gpt-oss"
        with pytest.raises(NotModelled, match="length field"):
            converted(read_gguf(path).metadata, tables)
        return
    if name == "gpt-oss":  # converted without error: the block holds the fields' lengths, not the file's values
        block = theirs["rope_scaling"]
        assert block.get("factor") != 32.0 or block.get("original_max_position_embeddings") != 4096
        with pytest.raises(NotModelled):
            converted(read_gguf(path).metadata, tables)
        return
    ours = converted(read_gguf(path).metadata, tables)
    assert {k: v for k, v in theirs.items() if k not in NOT_ROPE} == ours
    if name.startswith(("llama", "qwen2")):  # the scaling keys and the rope_freqs tensor are not carried over
        assert "rope_scaling" not in ours and "rope_parameters" not in ours
        assert ours["rope_theta"] == read_gguf(path).metadata[f"{read_gguf(path).architecture}.rope.freq_base"]


@pytest.mark.skipif(not WHEEL, reason="ROPELAW_TF_GGUF_WHEEL not set (CI step 'serving runtimes')")
def test_committed_table_is_transformers_5_19_0s():
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
    try:
        import transformers_gguf as gen
    finally:
        sys.path.pop(0)

    with zipfile.ZipFile(WHEEL) as z:
        assert Path(WHEEL).name.startswith("transformers-5.19.0-")
        got = gen.tables(z.read(gen.MEMBER).decode("utf-8"))
        loader = z.read("transformers/modeling_gguf_pytorch_utils.py").decode("utf-8")
    committed = _tables()
    assert committed["generated_by"] == "scripts/transformers_gguf.py"
    assert committed["config"] == json.loads(json.dumps(got["GGUF_CONFIG_MAPPING"]))
    assert committed["defaults"] == json.loads(json.dumps(got["GGUF_CONFIG_DEFAULTS_MAPPING"]))
    scaling = [k for arch, keys in committed["config"].items() for k in keys if "scaling" in k]
    assert scaling == []  # no rope.scaling key is mapped for any architecture ...
    # ... but gpt-oss's,
    assert loader.count('"rope_scaling"') == 1 and 'if updated_architecture == "gpt_oss":' in loader
    assert loader.count("reader.fields[key].parts[0]") == 2  # read from each key's length field (NotModelled)
    assert "rope_freqs" not in loader and "rope_freqs" not in json.dumps(committed)


def test_scaled_gguf_served_by_sglang_loses_its_scaling(tmp_path):
    """Through the committed 5.19.0 tables: a Llama 3.1 GGUF (its bands in rope_freqs.weight) becomes plain RoPE at
    its base up to its context_length."""
    path = llama31(tmp_path / "m.gguf")
    ours = converted(read_gguf(path).metadata)
    assert ours["rope_theta"] == 500000.0 and ours["max_position_embeddings"] == 131072
    assert ours["head_dim"] == 128 and "rope_scaling" not in ours
    assert np.asarray(read_gguf(path).values["rope_freqs.weight"]).shape == (64,)
