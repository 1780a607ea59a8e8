"""Checkpoint audit: rotary/ALiBi tensors read without running code, measured row by row.

safetensors files are written by hand here (8-byte header length, JSON header, raw bytes)
with ml_dtypes for bf16, so the reader is checked against the format's definition and not
against the safetensors library. Expected numbers are independent brute-force counts.
"""

from __future__ import annotations

import json
import os
import pickle
import struct

import ml_dtypes
import numpy as np
import pytest

from ropelaw.audit.checkpoint import alibi_slopes, audit_checkpoint
from ropelaw.cli import main

D = 128
_CODES = {np.dtype(np.float32): "F32", np.dtype(ml_dtypes.bfloat16): "BF16", np.dtype(np.float16): "F16",
          np.dtype(np.float64): "F64", np.dtype(np.int64): "I64"}


def write_safetensors(path, tensors: dict[str, np.ndarray]) -> str:
    header, blobs, off = {}, [], 0
    for name, a in tensors.items():
        a = np.ascontiguousarray(a)
        raw = a.tobytes()
        header[name] = {"dtype": _CODES[a.dtype], "shape": list(a.shape), "data_offsets": [off, off + len(raw)]}
        blobs.append(raw)
        off += len(raw)
    h = json.dumps(header).encode()
    with open(path, "wb") as fh:
        fh.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))
    return str(path)


def theta(base=10000.0, d=D) -> np.ndarray:
    """float32 inv_freq computed as transformers does, 1 / base^(2i/d) in float32."""
    e = (np.arange(0, d, 2, dtype=np.float32) / np.float32(d)).astype(np.float32)
    return (np.float32(1.0) / np.power(np.float32(base), e)).astype(np.float32)


def bf16(x):
    return np.asarray(x).astype(ml_dtypes.bfloat16)


def cache(positions: np.ndarray, inv: np.ndarray, dtype) -> tuple[np.ndarray, np.ndarray]:
    """HF layout (1, 1, L, d) rotate-half caches from float32 angles."""
    ang = np.outer(positions.astype(np.float32), inv.astype(np.float32)).astype(np.float32)  # (L, d/2) float32
    emb = np.concatenate([ang, ang], axis=1)
    return (np.cos(emb).astype(dtype)[None, None], np.sin(emb).astype(dtype)[None, None])


def test_positions_rounded_cache_rows_match_brute_force(tmp_path):
    """Cache built from bf16-rounded positions (float32 product): exact rows = bf16-exact integers."""
    L = 8192
    p = np.arange(L, dtype=np.float64)
    rounded = bf16(p).astype(np.float64)
    c, s = cache(rounded, theta(), np.float32)
    f = write_safetensors(tmp_path / "m.safetensors", {
        "model.rotary_emb.inv_freq": theta(), "model.rotary_emb.cos_cached": c, "model.rotary_emb.sin_cached": s})
    a = audit_checkpoint(f)
    cs = next(t for t in a.rotary if t.kind == "cos_sin_cache")
    assert cs.details["exact"] == int((rounded == p).sum()) == 896  # seed 004: 896 of 8,192
    assert cs.details["distinct"] == np.unique(rounded).size
    assert cs.details["first_inexact"] == 257
    assert (cs.details["rotary_dim"], cs.details["layout"]) == (128, "rotate-half")
    assert [x.code for x in a.findings] == ["RP352"]


def test_clean_cache_and_float32_inv_freq_no_findings(tmp_path):
    L = 4096
    c, s = cache(np.arange(L, dtype=np.float64), theta(500000.0, 96), ml_dtypes.bfloat16)
    f = write_safetensors(tmp_path / "m.safetensors", {
        "rope.inv_freq": theta(500000.0, 96), "rope.cos_cached": c, "rope.sin_cached": s,
        "w": np.zeros((3, 3), np.float32)})
    a = audit_checkpoint(f)
    inv = next(t for t in a.rotary if t.kind == "inv_freq")
    assert (inv.details["rotary_dim"], inv.details["base"], inv.details["formula_exact"]) == (96, 500000.0, True)
    cs = next(t for t in a.rotary if t.kind == "cos_sin_cache")
    assert cs.details["exact"] == L and cs.details["nonfinite"] == 0
    assert a.tensor_count == 4 and a.findings == []


def test_bf16_inv_freq_flagged_with_its_rounding(tmp_path):
    inv = bf16(theta())
    f = write_safetensors(tmp_path / "m.safetensors", {"layers.0.attn.rotary.inv_freq": inv})
    a = audit_checkpoint(f)
    t = a.rotary[0]
    nominal = 10000.0 ** (-2.0 * np.arange(64) / 128)
    assert t.dtype == "bfloat16" and t.details["base"] == 10000.0 and t.details["rotary_dim"] == 128
    assert t.details["max_rel_deviation"] == pytest.approx(
        float(np.max(np.abs(inv.astype(np.float64) / nominal - 1))), rel=1e-12)
    assert [x.code for x in a.findings] == ["RP351"]


def test_fp16_positions_cache_nonfinite_rows(tmp_path):
    L = 70000
    p = np.arange(L, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        r = p.astype(np.float16).astype(np.float64)  # inf from 65,520
        inv = theta()[:4]  # 4 pairs keep the file small
        ang = np.outer(r, inv.astype(np.float64)).astype(np.float32)
        c, s = np.cos(ang), np.sin(ang)
    f = write_safetensors(tmp_path / "m.safetensors", {"cos_cached": c, "sin_cached": s})
    a = audit_checkpoint(f)
    d = a.rotary[0].details
    assert d["nonfinite"] == int(np.isinf(r).sum()) == 4480
    assert {x.code for x in a.findings} == {"RP352", "RP353"}


def test_alibi_slopes_paper_values_and_bf16_bias_columns(tmp_path):
    # Press et al. 2022, sec. 3: for 8 heads the slopes are 1/2, 1/4, ..., 1/256
    assert alibi_slopes(8).tolist() == [2.0**-k for k in range(1, 9)]
    # BLOOM's extension for 12 heads: 8 slopes 2^-1..2^-8, then 2^-0.5, 2^-1.5, 2^-2.5, 2^-3.5
    assert alibi_slopes(12).tolist() == [2.0**-k for k in range(1, 9)] + [2.0**-(k + 0.5) for k in range(4)]
    L = 2048
    slopes = alibi_slopes(8)
    dist = bf16(np.arange(L, dtype=np.float64)).astype(np.float64)  # distances held in bf16
    bias = bf16(slopes[:, None] * dist[None, :])[:, None, :]  # (8, 1, L); powers of two: exact products
    f = write_safetensors(tmp_path / "m.safetensors", {"alibi_slopes": bf16(slopes), "alibi": bias})
    a = audit_checkpoint(f)
    b = next(t for t in a.rotary if t.kind == "alibi_bias")
    assert b.details["exact"] == int((dist == np.arange(L)).sum())
    sl = next(t for t in a.rotary if t.kind == "alibi_slopes")
    assert sl.details["max_rel_deviation"] == 0.0  # powers of two are exact in bf16: no finding
    assert [x.code for x in a.findings] == ["RP354"]


torch = pytest.importorskip("torch")


def test_torch_file_weights_only_freqs_cis_and_nested_state(tmp_path):
    L = 2048
    inv = torch.from_numpy(theta())
    f = torch.outer(torch.arange(L).float(), inv)  # (L, 64) float32 angles from int64 positions
    path = tmp_path / "ckpt.pt"
    torch.save({"model": {"layers": [{"freqs_cis": torch.polar(torch.ones_like(f), f)}]},
                "step": 3}, path)
    a = audit_checkpoint(str(path))
    t = a.rotary[0]
    assert a.file_format == "torch" and t.name == "model.layers.0.freqs_cis" and t.kind == "freqs_cis"
    assert t.details["exact"] == L and a.findings == []


class _Payload:
    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


@pytest.mark.parametrize("writer", ["pickle", "torch.save"])
def test_malicious_pickle_refused_and_never_runs(tmp_path, capsys, writer):
    marker = tmp_path / "PWNED"
    path = tmp_path / "evil.pt"
    obj = {"inv_freq": torch.ones(4), "x": _Payload(marker)}
    if writer == "pickle":
        with open(path, "wb") as fh:
            pickle.dump(obj, fh, protocol=2)
    else:
        torch.save(obj, path)
    assert not marker.exists()
    code = main(["audit", "checkpoint", str(path)])
    _, err = capsys.readouterr()
    assert code == 2
    assert "refused" in err and "weights-only" in err and "system" in err  # names the payload's callable
    assert len(err.strip().splitlines()) == 1
    assert not marker.exists()


@pytest.mark.parametrize("content,message", [
    (None, "no such file"),
    (b"hello, not a checkpoint\n", "not a checkpoint"),
    (struct.pack("<Q", 10**9) + b"{}", "not a safetensors file"),
])
def test_bad_files_exit_2(tmp_path, capsys, content, message):
    path = tmp_path / ("x.safetensors" if content and content[8:9] == b"{" else "x.bin")
    if content is not None:
        path.write_bytes(content)
    code = main(["audit", "checkpoint", str(path)])
    _, err = capsys.readouterr()
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1


def test_cli_json_and_text(tmp_path, capsys):
    c, s = cache(bf16(np.arange(1024.0)).astype(np.float64), theta(), np.float32)
    f = write_safetensors(tmp_path / "m.safetensors", {"inv_freq": bf16(theta()), "cos_cached": c, "sin_cached": s})
    code = main(["audit", "checkpoint", f, "--format", "json"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 1
    assert [t["kind"] for t in doc["rotary"]] == ["inv_freq", "cos_sin_cache"]
    assert [x["code"] for x in doc["findings"]] == ["RP351", "RP352"]
    code = main(["audit", "checkpoint", f])
    out = capsys.readouterr().out
    assert code == 1 and "inv_freq bfloat16 [64]: rotary dims 128, base 10,000" in out


@pytest.mark.parametrize("values,invalid", [
    ([np.nan, 1.0, 0.1, 0.01], 1),  # an uninitialised / corrupted entry
    ([1.0, 0.0, 0.0, 0.0], 3),  # fp16 underflow: base**(2i/d) overflowed, 1/inf = 0
    ([1.0, -0.1, np.inf, 0.001], 2),
])
def test_inv_freq_with_nonfinite_or_nonpositive_values_is_an_error(tmp_path, values, invalid):
    """theta_i = base^(-2i/d) is finite and > 0 (RoFormer eq. 15): anything else is RP355.
    Found by the QA sweep: such files used to pass with "All checks passed" and exit 0."""
    path = write_safetensors(tmp_path / "bad.safetensors",
                             {"model.rotary_emb.inv_freq": np.asarray(values, np.float32)})
    a = audit_checkpoint(path)
    assert [(f.code, f.data["invalid"]) for f in a.findings] == [("RP355", invalid)]


def test_valid_float32_inv_freq_is_not_rp355(tmp_path):
    path = write_safetensors(tmp_path / "ok.safetensors", {"model.rotary_emb.inv_freq": theta()})
    assert audit_checkpoint(path).findings == []


def test_rotary_embedding_torch_freqs_parameter_recognised(tmp_path):
    """rotary-embedding-torch stores its frequencies as the parameter `freqs` = 1/theta^(arange(0, d, 2)/d)
    (bf16 after model.bfloat16()): audits found "no rotary or ALiBi tensors". 1-D geometric `freqs`, `bands`,
    `theta` are now frequencies; non-geometric ones (the 'pixel' linspace * pi, a 2-element theta) are not."""
    d = 64
    freqs = bf16(theta(10000.0, d))  # (32,) bf16, as in the real checkpoint
    bands = theta(500000.0, 96)  # (48,) float32
    pixel = (np.linspace(1.0, 5.0, 32) * np.pi).astype(np.float32)  # rotary-embedding-torch 'pixel' freqs
    f = write_safetensors(tmp_path / "m.safetensors", {
        "freqs": freqs, "enc.rotary.bands": bands, "vis.rotary.freqs": pixel,
        "blocks.0.theta": np.asarray([1.0, 0.5], np.float32), "x.cached_freqs": np.zeros((4, 64), np.float32)})
    a = audit_checkpoint(f)
    got = {t.name: t for t in a.rotary}
    assert sorted(got) == ["enc.rotary.bands", "freqs"]
    t = got["freqs"]
    nominal = 10000.0 ** (-2.0 * np.arange(d // 2) / d)
    assert (t.kind, t.dtype, t.details["rotary_dim"], t.details["base"]) == ("inv_freq", "bfloat16", 64, 10000.0)
    assert t.details["max_rel_deviation"] == pytest.approx(
        float(np.max(np.abs(freqs.astype(np.float64) / nominal - 1))), rel=1e-12)
    b = got["enc.rotary.bands"]
    assert (b.details["rotary_dim"], b.details["base"], b.details["formula_exact"]) == (96, 500000.0, True)
    assert [(x.code, x.data["name_in_file"]) for x in a.findings] == [("RP351", "freqs")]


def test_geometric_frequencies_exact_test():
    from ropelaw.audit.checkpoint import geometric_frequencies

    for base, d in ((10000.0, 128), (500000.0, 128), (10000.0, 16), (1e6, 64)):
        t = theta(base, d)
        assert geometric_frequencies(t, "float32")
        assert geometric_frequencies(bf16(t).astype(np.float64), "bfloat16")
        assert geometric_frequencies(t.astype(np.float16).astype(np.float64), "float16")
    t = theta().astype(np.float64)
    assert not geometric_frequencies(bf16(t).astype(np.float64), "float32")  # bf16 noise is not float32
    assert not geometric_frequencies(t * 0.5, "float32")  # theta_0 != 1
    assert not geometric_frequencies(np.linspace(1.0, 0.01, 64), "float32")  # linear, not geometric
    assert not geometric_frequencies(np.ones(8), "float32")  # ratio 1: no base > 1
    assert not geometric_frequencies(t[:2], "float32")  # two values are always geometric


def test_rp351_text_gives_the_2_pow_minus_p_bound():
    from ropelaw.audit.rules.checkpoint import CHECKPOINT_INV_FREQ_LOW_PRECISION as rule

    assert "2^-8" in rule.why and "2^-9" not in rule.why and "2^-p" in rule.why


# ---------------------------------------------------------------- stacked caches (issue 21)

def stacked(positions: np.ndarray, inv: np.ndarray, dtype) -> np.ndarray:
    """torch.stack([cos, sin], -1) of float32 angles: (L, d/2, 2), as lit-llama / litgpt / torchtune store it."""
    ang = np.outer(positions.astype(np.float32), inv.astype(np.float32)).astype(np.float32)  # (L, d/2)
    return np.stack([np.cos(ang), np.sin(ang)], axis=-1).astype(dtype)


@pytest.mark.parametrize("name", ["transformer.h.0.attn.rope_cache", "layers.0.attn.pos_embeddings.cache"])
def test_stacked_cache_read_with_every_pair(tmp_path, name):
    L = 2048
    st = stacked(np.arange(L), theta(), ml_dtypes.bfloat16)
    a = audit_checkpoint(write_safetensors(tmp_path / "m.safetensors", {name: st}))
    (t,) = a.rotary
    assert (t.kind, t.details["rotary_dim"], t.details["layout"]) == ("stacked_cache", D, "stacked (cos, sin)")
    rows = st.astype(np.float32).reshape(L, -1)  # brute force: every pair's bf16 (cos, sin), row by row
    assert t.details["distinct"] == np.unique(rows, axis=0).shape[0] == L  # pair 0 alone: far fewer
    assert np.unique(st[:, 0, :].astype(np.float32), axis=0).shape[0] < 0.5 * L  # 815 of 2,048
    assert t.details["exact"] == L and a.findings == []


def test_stacked_cache_with_bf16_frequencies_is_rp310(tmp_path):
    L = 8192
    inv_rounded = bf16(theta()).astype(np.float32)  # frequencies rounded to bf16, product in float32
    a = audit_checkpoint(write_safetensors(tmp_path / "m.safetensors",
                                           {"model.rope_cache": stacked(np.arange(L), inv_rounded, np.float32)}))
    (t,) = a.rotary
    nominal = 10000.0 ** (-2.0 * np.arange(D // 2) / D)
    assert t.details["exact"] == L  # consistent with its own frequencies
    assert (t.details["base"], t.details["frequencies_rounded_to"]) == (10000.0, "bf16")
    expected = float(np.max(np.abs(inv_rounded.astype(np.float64) / nominal - 1)))
    assert t.details["frequency_drift"] == pytest.approx(expected, rel=1e-6)
    assert [f.code for f in a.findings] == ["RP310"]
    assert "rounded to bf16" in a.findings[0].message


def test_a_pair_tensor_without_identity_row_zero_is_not_measured(tmp_path):
    st = stacked(np.arange(64), theta(), np.float32)
    st[0] = 0.0  # fairseq2 keeps a padding row first
    a = audit_checkpoint(write_safetensors(tmp_path / "m.safetensors", {"encoder.cache": st}))
    (t,) = a.rotary
    # issue 23: a rotary tensor that was not measured is RP356, never a silent pass
    assert "not measured" in t.details["note"] and [f.code for f in a.findings] == ["RP356"]
