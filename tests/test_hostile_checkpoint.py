"""Hostile checkpoints against `ropelaw audit checkpoint` (issue 12): limits checked before reading.

safetensors headers are checked as the safetensors library checks them (header length within the
file and its 100 MB limit; int offsets, ordered, contiguous, within the file; shape x itemsize
equal to the byte range, in Python ints) and a corrupt file exits 2. torch files: zip members
are sized before decompressing, containers are walked once each (shared, cyclic, deep), expanded
views are never materialised, sparse / quantized / meta tensors are skipped with a note.
"""

from __future__ import annotations

import io
import json
import os
import struct
import sys
import threading
import warnings
import zipfile

import numpy as np
import pytest

from ropelaw.audit import checkpoint as ck
from ropelaw.audit.checkpoint import audit_checkpoint, read_checkpoint
from ropelaw.cli import main

torch = pytest.importorskip("torch")


def raw_safetensors(path, header, data: bytes = b"") -> str:
    h = header if isinstance(header, bytes) else json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(h)) + h + data)
    return str(path)


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def entry(offsets, shape=(2,), dtype="F32"):
    return {"a.inv_freq": {"dtype": dtype, "shape": list(shape), "data_offsets": offsets}}


@pytest.mark.parametrize("header, data, why", [
    (b'{"a.inv_freq": {"dtype": "F32", "shape": [2], "data_offsets": [0, 1e400]}}', 8,
     "tensor 'a.inv_freq': data_offsets must be two ordered integers within the 8 data bytes"),
    (entry([0, None]), 8, "data_offsets must be two ordered integers"),
    (entry(["0", "8"]), 8, "data_offsets must be two ordered integers"),
    (entry([0.0, 8.0]), 8, "data_offsets must be two ordered integers"),
    (entry([-8, 0]), 8, "data_offsets must be two ordered integers"),
    (entry([8, 0]), 8, "data_offsets must be two ordered integers"),
    (entry([0, 16]), 8, "data_offsets must be two ordered integers within the 8 data bytes"),
    (entry([0, 0], shape=(2**32, 2**32)), 0,
     "shape [4294967296, 4294967296] x 4 bytes does not match its 0-byte data range"),
    (entry([0, 0], shape=(2**62, 4)), 0, "x 4 bytes does not match its 0-byte data range"),
    (entry([0, 8], shape=(-2, -1)), 8, "shape must be a list of at most 64 non-negative integers"),
    (entry([0, 8], shape=(1.5,)), 8, "shape must be a list"),
    (entry([0, 4], shape=(1,)), 8, "tensors end at data byte 4 but the file holds 8 (truncated or padded)"),
    ({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]},
      "b": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}, 8, "overlap another tensor or leave a gap"),
    ({"a.inv_freq": [1, 2]}, 0, "entry 'a.inv_freq' is not an object"),
    ({"a.inv_freq": {"dtype": 7, "shape": [], "data_offsets": [0, 0]}}, 0, "dtype is not a string"),
])
def test_corrupt_safetensors_headers_exit_2(tmp_path, capsys, header, data, why):
    p = raw_safetensors(tmp_path / "x.safetensors", header, b"\0" * data)
    code, out, err = run(capsys, "audit", "checkpoint", p)
    assert (code, out) == (2, "")
    assert err.startswith(f"ropelaw: error: {p}: corrupt safetensors file (") and why in err
    assert err.count("\n") == 1


def test_header_nested_100k_deep_and_header_beyond_limits(tmp_path, capsys):
    p = raw_safetensors(tmp_path / "deep.safetensors", b'{"a":' * 100_000 + b"1" + b"}" * 100_000)
    code, _, err = run(capsys, "audit", "checkpoint", p)
    assert (code, err) == (2, f"ropelaw: error: {p}: not a safetensors file (header nested too deeply)\n")
    # 8 GiB header length in a sparse file of 8 GiB + 4 KiB: refused by the format's limit, not read
    sparse = tmp_path / "sparse.safetensors"
    with open(sparse, "wb") as fh:
        fh.write(struct.pack("<Q", 8 << 30) + b"{")
        fh.truncate((8 << 30) + 4096)
    code, _, err = run(capsys, "audit", "checkpoint", str(sparse))
    assert (code, err) == (2, f"ropelaw: error: {sparse}: not a safetensors file (header length 8,589,934,592 "
                              "beyond the format's limit of 100,000,000 bytes)\n")


def test_safetensors_tensors_are_memory_mapped_not_read(tmp_path):
    a = np.arange(1 << 16, dtype=np.float32)
    p = raw_safetensors(tmp_path / "m.safetensors", entry([0, a.nbytes], shape=a.shape), a.tobytes())
    _, tensors, _ = read_checkpoint(p)
    arr = tensors["a.inv_freq"][2]()
    assert isinstance(arr.base, np.memmap) or isinstance(arr, np.memmap)
    assert arr[12345] == 12345.0


@pytest.mark.parametrize("shape", [(), (2,)])
def test_zero_and_one_dimensional_caches_are_not_measured_and_not_passed(tmp_path, capsys, shape):
    n = int(np.prod(shape))
    hdr = {"cos_cached": {"dtype": "F32", "shape": list(shape), "data_offsets": [0, 4 * n]},
           "sin_cached": {"dtype": "F32", "shape": list(shape), "data_offsets": [4 * n, 8 * n]}}
    p = raw_safetensors(tmp_path / "c.safetensors", hdr, b"\0" * 8 * n)
    code, out, err = run(capsys, "audit", "checkpoint", p)
    assert code == 1 and err == ""  # issue 23: an unmeasured rotary tensor is RP356, never "All checks passed"
    assert (f"  cos_cached  cos_sin_cache float32 [{'x'.join(map(str, shape))}]: not measured: a cos/sin cache "
            "has one row per position (at least 2-D, the same shape as sin_cached)") in out
    assert "RP356 checkpoint-tensor-not-measured" in out and "All checks passed" not in out


def test_long_cache_is_measured_on_its_first_rows_in_chunks(tmp_path, monkeypatch):
    L, k = 5000, 4
    inv = 10000.0 ** (-np.arange(k) / k)
    ang = np.outer(np.arange(L, dtype=np.float64), inv)
    cos, sin = np.cos(ang).astype(np.float32), np.sin(ang).astype(np.float32)  # per-pair (L, k)
    hdr = {"cos_cached": {"dtype": "F32", "shape": [L, k], "data_offsets": [0, cos.nbytes]},
           "sin_cached": {"dtype": "F32", "shape": [L, k], "data_offsets": [cos.nbytes, 2 * cos.nbytes]}}
    p = raw_safetensors(tmp_path / "c.safetensors", hdr, cos.tobytes() + sin.tobytes())
    monkeypatch.setattr(ck, "MAX_ROWS", 1000)
    monkeypatch.setattr(ck, "CHUNK_ELEMENTS", 64)  # 16 rows per chunk
    a = audit_checkpoint(p)
    (t,) = a.rotary
    assert (t.details["rows"], t.details["rows_in_tensor"]) == (1000, 5000)
    assert a.notes == ["cos_cached: measured the first 1,000 of its 5,000 rows"]
    monkeypatch.setattr(ck, "CHUNK_ELEMENTS", 1 << 20)  # one chunk: the same counts
    assert audit_checkpoint(p).rotary[0].details["exact"] == t.details["exact"]


def _save_deep(obj, path):
    """torch.save of a 5,000-deep list needs a deep stack (it pickles recursively)."""
    errors = []

    def save():
        try:
            torch.save(obj, path)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    old = sys.getrecursionlimit()
    sys.setrecursionlimit(60_000)
    threading.stack_size(256 << 20)
    try:
        t = threading.Thread(target=save)
        t.start()
        t.join()
    finally:
        threading.stack_size(0)
        sys.setrecursionlimit(old)
    assert not errors


def test_torch_containers_shared_cyclic_and_deep_are_walked_once(tmp_path, capsys):
    x = [torch.ones(1)]
    for _ in range(40):
        x = [x, x]  # 2^40 paths to one tensor
    torch.save({"a": x, "rope.inv_freq": torch.tensor([1.0, 0.1, 0.01])}, tmp_path / "shared.pt")
    a = audit_checkpoint(str(tmp_path / "shared.pt"))
    assert a.tensor_count == 2 and [t.name for t in a.rotary] == ["rope.inv_freq"]
    c: list = []
    c.append(c)
    c.append(torch.ones(3))
    torch.save(c, tmp_path / "cyclic.pt")
    assert audit_checkpoint(str(tmp_path / "cyclic.pt")).tensor_count == 1
    d = torch.ones(2)
    for _ in range(5000):
        d = [d]
    _save_deep(d, tmp_path / "deep.pt")
    code, out, err = run(capsys, "audit", "checkpoint", str(tmp_path / "deep.pt"))
    # issue 23: its one tensor lies below the search depth: nothing was analysed, so not a checkpoint
    assert (code, out) == (2, "")
    assert err == (f"ropelaw: error: {tmp_path / 'deep.pt'}: not a checkpoint: it holds no tensors within "
                   f"{ck.MAX_NESTING} levels of nesting (1 container nested deeper not searched)\n")
    _save_deep({"rope.inv_freq": torch.tensor([1.0, 0.1, 0.01]), "deep": d}, tmp_path / "deep2.pt")
    code, out, err = run(capsys, "audit", "checkpoint", str(tmp_path / "deep2.pt"))
    assert (code, err) == (1, "")  # a tensor found, but part of the file unsearched: RP359, never a pass
    assert f"  note: 1 container nested deeper than {ck.MAX_NESTING} levels not searched for tensors" in out
    assert "RP359 checkpoint-not-searched 1 container nested deeper than 64 levels was not searched" in out


def test_expanded_views_sparse_quantized_meta_are_skipped_and_reported(tmp_path, capsys):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # quantize_per_tensor is deprecated
        q = torch.quantize_per_tensor(torch.ones(4), 0.1, 0, torch.qint8)
    torch.save({"big.inv_freq": torch.ones(1).expand(2**29),
                "rope.cos_cached": torch.ones(1, 1).expand(2**20, 1024),
                "rope.sin_cached": torch.zeros(1, 1).expand(2**20, 1024),
                "s.inv_freq": torch.ones(4).to_sparse(), "q.inv_freq": q,
                "m.inv_freq": torch.ones(4, device="meta")}, tmp_path / "v.pt")
    code, out, err = run(capsys, "audit", "checkpoint", str(tmp_path / "v.pt"))
    assert (code, err) == (1, "")  # issue 23: skipped rotary tensors are RP356 findings, not a pass
    rp356 = sorted(ln.split(" ")[3] for ln in out.splitlines() if " RP356 " in ln)
    assert rp356 == ["big.inv_freq", "m.inv_freq", "q.inv_freq", "rope.cos_cached", "s.inv_freq"]
    assert "big.inv_freq (float32, shape [536870912]) is stored as rotary frequencies (inv_freq) but was not " \
           "measured: an expanded view (stride 0: more elements than its storage holds)" in out
    notes = [ln for ln in out.splitlines() if ln.startswith("  note:")]
    assert notes == [
        "  note: skipped 3 tensors (an expanded view (stride 0: more elements than its storage holds)): "
        "big.inv_freq, rope.cos_cached, rope.sin_cached",
        "  note: skipped 1 tensor (sparse_coo layout): s.inv_freq",
        "  note: skipped 1 tensor (quantized): q.inv_freq",
        "  note: skipped 1 tensor (meta (no data)): m.inv_freq",
    ]


def test_zip_bomb_is_refused_before_decompressing(tmp_path, capsys):
    buf = io.BytesIO()
    torch.save({"rope.inv_freq": torch.ones(8)}, buf)
    src = zipfile.ZipFile(io.BytesIO(buf.getvalue()))
    bomb = tmp_path / "bomb.pt"
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as out:
        for info in src.infolist():
            data = src.read(info.filename)
            if info.filename.endswith("/data/0"):
                data = b"\0" * (64 << 20)
            out.writestr(info.filename, data)
    size = os.path.getsize(bomb)
    code, _, err = run(capsys, "audit", "checkpoint", str(bomb))
    assert code == 2
    assert err.startswith(f"ropelaw: error: {bomb}: corrupt torch zip file (members expand to ")
    assert f"from a {size:,}-byte file; torch.save never compresses: a zip bomb?); refused\n" in err


def test_bf16_torch_tensors_are_read_without_a_float32_copy(tmp_path):
    torch.save({"rope.inv_freq": torch.tensor([1.0, 0.1, 0.01]).to(torch.bfloat16)}, tmp_path / "b.pt")
    _, tensors, _ = read_checkpoint(str(tmp_path / "b.pt"))
    arr = tensors["rope.inv_freq"][2]()
    assert str(arr.dtype) == "bfloat16" and arr.astype(np.float64).tolist() == [1.0, 0.10009765625, 0.010009765625]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_fifo_and_device_are_refused(tmp_path, capsys):
    fifo = tmp_path / "m.safetensors"
    os.mkfifo(fifo)
    code, _, err = run(capsys, "audit", "checkpoint", str(fifo))
    assert (code, err) == (2, f"ropelaw: error: {fifo}: is a FIFO (named pipe), not a regular file; refused\n")
    (tmp_path / "z.pt").symlink_to("/dev/zero")
    code, _, err = run(capsys, "audit", "checkpoint", str(tmp_path / "z.pt"))
    assert (code, err) == (2, f"ropelaw: error: {tmp_path / 'z.pt'}: is a character device, not a regular file; "
                              "refused\n")


# -- issue 23: nothing unanalysed or nonsensical passes ---------------------------------------
def _garbage_expected(name: str) -> tuple[int, str]:
    """The exit code and the rule (or error text) each checkpoint-garbage case must give, from
    what each value is (written here from the rules' definitions, not from the audit's output)."""
    key = name.split("-", 1)[1]
    if key.startswith("no-tensors"):
        return 2, "no tensors"
    if key == "deflated-member":
        return 0, "rotary dims 64, base 10,000"
    if key in ("inv-freq-zeros", "inv-freq-nan"):
        return 1, "RP355"  # inf, NaN, zero or negative
    if key in ("alibi-slopes-zero", "alibi-slopes-negative", "alibi-slopes-nan"):
        return 1, "RP358"
    if key.startswith("inv-freq-") and key[9:] in ("ones", "increasing", "1e30", "1e-30", "above-one", "bool",
                                                   "complex", "int64", "uint8", "dtype-U16"):
        return 1, "RP357"  # a known dtype or finite positive values that are no frequency set
    return 1, "RP356"  # not measured: scalar slopes, 0-d/1-d freqs_cis, 1-D cache, unknown dtype, views


def test_every_garbage_case_is_a_finding_or_bad_input(tmp_path, capsys):
    import random

    import hostile_cases as H

    cases = list(H.checkpoint_garbage(random.Random(0), 50, "ci"))
    assert len({c.name for c in cases}) == 50
    for case in cases:
        d = tmp_path / case.name
        d.mkdir()
        case.write(d)
        code, out, err = run(capsys, *case.args(d))
        want_code, want_text = _garbage_expected(case.name)
        assert code == want_code, (case.name, out, err)
        assert want_text in (err if code == 2 else out), (case.name, out, err)
        assert "All checks passed" not in out or code == 0, case.name
        if code == 1:  # the audit says what the tensor is not, and only the one rule fires per tensor
            rules = {ln.split(" ")[1] for ln in out.splitlines() if ln.startswith(str(d))}
            assert rules == {want_text}, (case.name, out)


@pytest.mark.parametrize("tensors, name, why", [
    ({"rotary.cos_cached": torch.zeros(0, 64), "rotary.sin_cached": torch.zeros(0, 64)}, "rotary.cos_cached",
     "0 rows: a cache is measured from positions 0 and 1 on"),
    ({"cos_cached": torch.ones(1, 64), "sin_cached": torch.zeros(1, 64)}, "cos_cached", "1 row: a cache"),
    ({"freqs_cis": torch.zeros(0, 32, 2)}, "freqs_cis", "0 rows"),
    ({"rope_cache": torch.zeros(0, 32, 2)}, "rope_cache", "0 rows"),
    ({"rotary.inv_freq": torch.tensor(0.5)}, "rotary.inv_freq", "a 0-d tensor (one number)"),
    ({"rotary.inv_freq": torch.tensor([1.0])}, "rotary.inv_freq", "a single frequency"),
    ({"rotary.inv_freq": torch.ones(2, 32)}, "rotary.inv_freq", "2 axes longer than 1"),
    ({"alibi": -torch.arange(64.0)}, "alibi", "(heads, L) with L >= 2 (ALiBi slopes are measured when named"),
    ({"alibi": torch.zeros(8, 1)}, "alibi", "(heads, L) with L >= 2"),
])
def test_nothing_measured_is_never_clean(tmp_path, capsys, tensors, name, why):
    """Issue 30: a 0-row cos/sin cache read "0 of 0 rows exact (100.00%)", a 0-d inv_freq and a 1-D ALiBi bias
    "no rotary tensors found", all exit 0. Each is now RP356 naming the tensor and why (exit 1)."""
    from safetensors.torch import save_file

    path = tmp_path / "c.safetensors"
    save_file(tensors, str(path))
    code, out, err = run(capsys, "audit", "checkpoint", str(path))
    assert (code, err) == (1, "")
    (line,) = [ln for ln in out.splitlines() if " RP356 " in ln]
    assert f" {name} (" in line and why in line
    assert "All checks passed" not in out and "100.00%" not in out
