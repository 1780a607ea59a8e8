"""ropelaw's GGUF reader (ropelaw/lint/gguf.py) against the ``gguf`` package's own reader (gguf==0.19.0,
the [test] pin) on files its writer made: every key, value and type, the RoPE tensors' infos and values.
The size table of ggml types against gguf's, and the reading of a sparse multi-GB file."""

from __future__ import annotations

import os

import numpy as np
import pytest

from gguf_files import llama31, write_gguf
from ropelaw.errors import UsageError
from ropelaw.lint import gguf as G

gguf = pytest.importorskip("gguf")


def _their_value(field) -> object:
    """A field of gguf.GGUFReader as a Python value."""
    from gguf import GGUFValueType

    t = field.types
    if t[0] == GGUFValueType.ARRAY:
        if t[1] == GGUFValueType.STRING:
            return [bytes(field.parts[i]).decode("utf-8", "replace") for i in field.data]
        return [field.parts[i].tolist()[0] for i in field.data]
    if t[0] == GGUFValueType.STRING:
        return bytes(field.parts[field.data[0]]).decode("utf-8", "replace")
    return field.parts[field.data[0]].tolist()[0]


def test_every_key_and_type_as_gguf_reads_them(tmp_path):
    from gguf import GGUFReader, GGUFValueType as T

    kv = {"t.u8": (200, T.UINT8), "t.i8": (-5, T.INT8), "t.u16": (60000, T.UINT16), "t.i16": (-300, T.INT16),
          "t.u32": (2**32 - 1, T.UINT32), "t.i32": (-(2**31), T.INT32), "t.f32": (0.1, T.FLOAT32),
          "t.bool": (True, T.BOOL), "t.str": ("héllo", T.STRING), "t.u64": (2**64 - 1, T.UINT64),
          "t.i64": (-(2**63), T.INT64), "t.f64": (1e300, T.FLOAT64), "t.arr_i32": [1, -2, 3],
          "t.arr_f32": [0.5, 1.5], "t.arr_str": ["a", "bc", ""], "t.arr_bool": [True, False, True],
          "t.long": "x" * (G.MAX_KEPT_STRING + 1), "t.vocab": [f"tok{i}" for i in range(1000)],
          "t.big": list(range(G.MAX_KEPT_ARRAY + 1))}
    path = write_gguf(tmp_path / "types.gguf", "llama", kv, {"rope_freqs.weight": np.arange(1, 65, dtype=np.float32),
                                                              "token_embd.weight": np.ones((3, 32), np.float16)})
    ours = G.read_gguf(path)
    theirs = GGUFReader(path)
    assert list(ours.metadata) == [k for k in theirs.fields if not k.startswith("GGUF.")]
    for key, field in theirs.fields.items():
        if key.startswith("GGUF."):
            continue
        v = ours.metadata[key]
        if isinstance(v, G.ArrayInfo):
            assert v.count == len(field.data), key
        elif isinstance(v, G.StringInfo):
            assert v.length == len(field.parts[field.data[0]]), key
        elif isinstance(v, float):
            assert v == pytest.approx(_their_value(field), rel=0, abs=0) or np.float32(v) == _their_value(field), key
        else:
            assert v == _their_value(field), key
    assert ours.version == theirs.fields["GGUF.version"].parts[-1][0]
    assert ours.tensor_count == len(theirs.tensors) == 2
    t = next(x for x in theirs.tensors if x.name == "rope_freqs.weight")
    mine = ours.rope["rope_freqs.weight"]
    assert (mine.type, mine.shape, mine.offset, mine.nbytes) == ("F32", tuple(int(x) for x in t.shape),
                                                                 int(t.data_offset), int(t.n_bytes))
    assert np.array_equal(ours.values["rope_freqs.weight"], np.asarray(t.data, np.float64))
    assert ours.types["t.arr_str"] == "array of string" and ours.types["t.f64"] == "float64"


def test_ggml_type_sizes_are_gguf_packages():
    """GGML_TYPES against gguf==0.19.0's GGML_QUANT_SIZES; Q8_1 and Q2_0 are ggml's at llama-cpp-python
    0.3.36's commit (block_q8_1: a half2 + 32 int8 = 36 bytes; Q2_0 is newer than gguf 0.19.0)."""
    from gguf import GGML_QUANT_SIZES, GGMLQuantizationType

    theirs = {int(t): (t.name, *GGML_QUANT_SIZES[t]) for t in GGMLQuantizationType if t in GGML_QUANT_SIZES}
    differ = {code for code in set(theirs) | set(G.GGML_TYPES) if theirs.get(code) != G.GGML_TYPES.get(code)}
    assert differ == {9, 42}, differ
    assert G.GGML_TYPES[9] == ("Q8_1", 32, 36) and theirs[9] == ("Q8_1", 32, 40)


def test_rope_tensor_types_are_read_exactly(tmp_path):
    import ml_dtypes

    f = np.linspace(1, 8, 64)
    for dt, name in ((np.float32, "F32"), (np.float16, "F16"), (np.float64, "F64")):
        path = write_gguf(tmp_path / f"{name}.gguf", "llama", {}, {"rope_freqs.weight": f.astype(dt)})
        g = G.read_gguf(path)
        assert g.rope["rope_freqs.weight"].type == name
        assert np.array_equal(g.values["rope_freqs.weight"], f.astype(dt).astype(np.float64))
    bf = f.astype(ml_dtypes.bfloat16)
    from gguf import GGMLQuantizationType, GGUFWriter

    path = str(tmp_path / "bf16.gguf")  # a BF16 tensor: its bytes with raw_dtype, as gguf's converters write it
    w = GGUFWriter(path, "llama")
    w.add_tensor("rope_freqs.weight", bf.view(np.uint8), raw_dtype=GGMLQuantizationType.BF16)
    w.write_header_to_file(), w.write_kv_data_to_file(), w.write_tensors_to_file(), w.close()
    g = G.read_gguf(path)
    assert g.rope["rope_freqs.weight"].type == "BF16"
    assert np.array_equal(g.values["rope_freqs.weight"], bf.astype(np.float64))


def test_sparse_multi_gigabyte_file_reads_only_its_header(tmp_path):
    """A GGUF whose 3 GB of weights were never written (a sparse file): read as any other, from its header."""
    import gguf as gg

    path = str(tmp_path / "big.gguf")
    w = gg.GGUFWriter(path, "llama")
    w.add_context_length(8192)
    w.add_tensor_info("rope_freqs.weight", (64,), np.dtype(np.float32), 256)
    for i in range(3):
        w.add_tensor_info(f"blk.{i}.w.weight", (10**9 // 144 * 144,), np.dtype(np.uint8), 10**9 // 144 * 144,
                          raw_dtype=gg.GGMLQuantizationType.Q4_K)
    w.write_header_to_file(), w.write_kv_data_to_file(), w.write_ti_data_to_file(), w.close()
    with open(path, "r+b") as fh:
        fh.seek(0, 2)
        start = -(-fh.tell() // 32) * 32
        fh.seek(start)
        fh.write(np.full(64, 2.0, np.float32).tobytes())
        fh.truncate(start + 256 + 3 * (10**9 // 144 * 144))
    assert os.path.getsize(path) > 2.9e9 and os.stat(path).st_blocks * 512 < 1 << 20
    g = G.read_gguf(path)
    assert g.tensor_count == 4 and np.all(g.values["rope_freqs.weight"] == 2.0)
    with open(path, "r+b") as fh:  # one byte short of the last tensor: refused as llama.cpp's loader refuses it
        fh.truncate(os.path.getsize(path) - 1)
    with pytest.raises(UsageError, match="its tensors end at byte .* the file has .*truncated"):
        G.read_gguf(path)


def test_llama31_file_and_big_endian_and_v1_refused(tmp_path):
    path = llama31(tmp_path / "l.gguf")
    raw = bytearray((tmp_path / "l.gguf").read_bytes())
    assert G.read_gguf(path).architecture == "llama"
    for version, why in ((1, "GGUF version 1 is not read"), (3 << 24, "the other byte order"),
                         (4, "GGUF version 4 is not read")):
        raw[4:8] = version.to_bytes(4, "little")
        bad = tmp_path / f"v{version}.gguf"
        bad.write_bytes(bytes(raw))
        with pytest.raises(UsageError, match=why):
            G.read_gguf(str(bad))
