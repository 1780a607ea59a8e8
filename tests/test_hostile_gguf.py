"""Hostile GGUF files against `ropelaw lint` and `ropelaw audit checkpoint` (ropelaw/lint/gguf.py): lying sizes,
offsets, counts, string lengths, array nesting, truncation. Each gets exit 2 with one line, never a traceback
(exit 3), and its reading stays bounded: nothing proportional to a count the file claims is allocated or walked
before the bytes are there (tracemalloc's peak below 32 MB; strings walked at most MAX_ARRAY_STRINGS)."""

from __future__ import annotations

import struct
import tracemalloc

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gguf_files import llama31
from ropelaw.cli import main
from ropelaw.errors import UsageError
from ropelaw.lint import gguf as G


def s(text: str | bytes) -> bytes:
    b = text.encode() if isinstance(text, str) else text
    return struct.pack("<Q", len(b)) + b


def kv_u32(key: str, v: int) -> bytes:
    return s(key) + struct.pack("<II", 4, v)


def header(n_tensors: int, n_kv: int, version: int = 3) -> bytes:
    return b"GGUF" + struct.pack("<Iqq", version, n_tensors, n_kv)


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def refused(capsys, path, why: str, *commands) -> None:
    for cmd in commands or (("lint",), ("audit", "checkpoint")):
        tracemalloc.start()
        try:
            code, out, err = run(capsys, *cmd, str(path))
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert code == 2 and out == "", (cmd, code, out, err)
        assert err.count("\n") == 1 and why in err, err
        assert peak < 32 << 20, peak


ARCH = kv_u32("llama.context_length", 4096)


@pytest.mark.parametrize("name, data, why", [
    ("short", b"GGUF\x03\x00", "shorter than GGUF's 24-byte header"),
    ("magic", b"GGML" + bytes(40), "no 'GGUF' magic"),
    ("v1", header(0, 0, 1) + bytes(8), "GGUF version 1 is not read"),
    ("tensors-negative", header(-1, 0), "-1 tensors"),
    ("tensors-huge", header(1 << 62, 0), "tensors; ropelaw reads files of 0 to 65,536"),
    ("kv-huge", header(0, 1 << 62), "metadata keys; ropelaw reads files of 0 to 65,536"),
    ("kv-missing", header(0, 3) + ARCH, "past the end"),
    ("key-length-lies", header(0, 1) + struct.pack("<Q", 1 << 63) + b"abc", "past the end"),
    ("key-empty", header(0, 1) + s("") + struct.pack("<II", 4, 1), "key 1 is empty"),
    ("key-twice", header(0, 2) + ARCH + ARCH, "duplicate key 'llama.context_length'"),
    ("value-type", header(0, 1) + s("a") + struct.pack("<I", 13), "unknown value type 13"),
    ("string-lies", header(0, 1) + s("a") + struct.pack("<IQ", 8, (1 << 64) - 1) + b"x", "past the end"),
    ("nested-array", header(0, 1) + s("a") + struct.pack("<IIQ", 9, 9, 1), "an array of arrays"),
    ("array-count-lies", header(0, 1) + s("a") + struct.pack("<IIQ", 9, 10, 1 << 61) + bytes(16), "past the end"),
    ("array-item-type", header(0, 1) + s("a") + struct.pack("<IIQ", 9, 77, 1), "unknown type 77"),
    ("strings-lie", header(0, 1) + s("a") + struct.pack("<IIQ", 9, 8, 3) + s("x") + struct.pack("<Q", 1 << 40),
     "past the end"),
    ("alignment-type", header(0, 1) + s("general.alignment") + struct.pack("<IQ", 10, 32), "must be a uint32"),
    ("alignment-not-pow2", header(0, 1) + kv_u32("general.alignment", 24), "is not a power of 2"),
    ("alignment-zero", header(0, 1) + kv_u32("general.alignment", 0), "is not a power of 2"),
    ("tensor-name-long", header(1, 0) + s("x" * 64) + struct.pack("<I", 1), "64 bytes or longer"),
    ("tensor-dims", header(1, 0) + s("t") + struct.pack("<I", 5), "5 dimensions"),
    ("tensor-dim-negative", header(1, 0) + s("t") + struct.pack("<Iq", 1, -4), "negative dimension"),
    ("tensor-elements-overflow", header(1, 0) + s("t") + struct.pack("<Iqqqq", 4, 1 << 40, 1 << 40, 1 << 40, 1),
     "2^63 elements or more"),
    ("tensor-type", header(1, 0) + s("t") + struct.pack("<IqI", 1, 4, 4), "unknown ggml type 4"),
    ("tensor-block", header(1, 0) + s("t") + struct.pack("<IqI", 1, 31, 12), "not a multiple of its block size 256"),
    ("tensor-offset", header(1, 0) + s("t") + struct.pack("<IqIQ", 1, 4, 0, 64), "has offset 64, but the tensors"),
    ("tensor-twice", header(2, 0) + (s("t") + struct.pack("<IqIQ", 1, 4, 0, 0)) * 2, "duplicate tensor name 't'"),
    ("tensor-past-end", header(1, 0) + s("t") + struct.pack("<IqIQ", 1, 1 << 40, 0, 0), "its tensors end at byte"),
])
def test_corrupt_gguf_exits_2(tmp_path, capsys, name, data, why):
    path = tmp_path / f"{name}.gguf"
    path.write_bytes(data)
    refused(capsys, path, why)


def test_every_truncation_of_a_real_file_exits_2(tmp_path, capsys):
    """Each prefix of a converted-Llama-3.1-shaped GGUF (cut inside the header, every key, the tensor infos and
    the data) is refused with one line."""
    full = (tmp_path / "l.gguf")
    llama31(full)
    raw = full.read_bytes()
    data_start = min(t.offset for t in G.read_gguf(str(full)).rope.values())
    cuts = sorted(set(range(0, 64)) | set(range(64, data_start, 7)) | {data_start, len(raw) - 1})
    for cut in cuts:
        p = tmp_path / "cut.gguf"
        p.write_bytes(raw[:cut])
        code, out, err = run(capsys, "lint", str(p))
        assert code == 2 and out == "" and err.count("\n") == 1, (cut, err)


def test_a_vocabulary_of_lies_is_not_walked(tmp_path, capsys):
    """2^29 strings claimed in a sparse 8 GB file (room for their lengths): refused by MAX_ARRAY_STRINGS before one
    is walked."""
    p = tmp_path / "vocab.gguf"
    with open(p, "wb") as fh:
        fh.write(header(0, 1) + s("tokenizer.ggml.tokens") + struct.pack("<IIQ", 9, 8, 1 << 29))
        fh.truncate(8 << 30)
    refused(capsys, p, "refused: more than 4,194,304 strings in metadata arrays", ("lint",))


def test_zero_length_strings_up_to_the_limit_are_walked_then_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(G, "MAX_ARRAY_STRINGS", 1000)
    p = tmp_path / "many.gguf"
    body = s("a") + struct.pack("<IIQ", 9, 8, 600) + bytes(8 * 600)
    body += s("b") + struct.pack("<IIQ", 9, 8, 600) + bytes(8 * 600)
    p.write_bytes(header(0, 2) + body)
    with pytest.raises(UsageError, match="more than 1,000 strings"):
        G.read_gguf(str(p))


def _mutations():
    return st.lists(st.tuples(st.integers(min_value=0, max_value=4095), st.sampled_from(
        [b"\xff" * 8, b"\x00" * 8, struct.pack("<Q", 1 << 62), struct.pack("<q", -1), b"\x09\x00\x00\x00",
         b"\x08\x00\x00\x00", struct.pack("<I", 99), b"\x01"])), min_size=1, max_size=4)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(mutations=_mutations(), cut=st.one_of(st.none(), st.integers(min_value=24, max_value=8192)))
def test_fuzz_lying_fields(tmp_path, capsys, mutations, cut):
    """Overwrite fields of a valid GGUF (lengths, counts, types, offsets) with lies and cut it anywhere: every
    outcome is a result or exit 2 with one line, within 32 MB of Python allocations."""
    base = tmp_path / "base.gguf"
    if not base.exists():
        llama31(base)
    raw = bytearray(base.read_bytes())
    for at, patch in mutations:
        at = at % max(1, len(raw) - len(patch))
        raw[at:at + len(patch)] = patch
    p = tmp_path / "fuzz.gguf"
    p.write_bytes(bytes(raw[:cut] if cut else raw))
    tracemalloc.start()
    try:
        code, out, err = run(capsys, "lint", str(p))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert code in (0, 1, 2), (code, err)
    assert code != 2 or (out == "" and err.count("\n") == 1), err
    assert peak < 32 << 20


def test_huge_rope_tensor_is_not_read(tmp_path, capsys):
    """A rope_freqs.weight of 2^16 values (beyond any rotary's pairs): noted, not read, never a pass."""
    from gguf_files import LLAMA31_8B, write_gguf

    path = write_gguf(tmp_path / "h.gguf", "llama", LLAMA31_8B,
                      {"rope_freqs.weight": np.ones(G.MAX_ROPE_ELEMENTS + 32, np.float32)})
    g = G.read_gguf(path)
    assert "rope_freqs.weight" not in g.values and "not read" in g.notes[0]
    code, out, _ = run(capsys, "lint", path)
    assert code == 1 and "RV030 unread-rope-settings" in out and "rope_freqs.weight" in out
