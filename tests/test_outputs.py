"""Outputs that hold for every input (issue 23): JSON for every YAML/TOML value type, SARIF
locations that are URIs, images never replaced by partial ones, and --timeout values out of
range as one line. References: Python's json, datetime and base64 modules, RFC 3986 as
urllib.parse.urlsplit reads it, the bytes of the file before the failed write."""

from __future__ import annotations

import base64
import errno
import json
import os
from urllib.parse import unquote, urlsplit

import pytest

from ropelaw.cli import main
from ropelaw.report import sarif_uri

HEAD = "hidden_size: 4096\nnum_attention_heads: 32\n"


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("name, text, value", [
    ("bin.yaml", HEAD + "rope_theta: !!binary aGVsbG8=\nmax_position_embeddings: 4096\n",
     base64.b64encode(b"hello").decode()),
    ("date.yaml", HEAD + "rope_theta: 10000\nmax_position_embeddings: 2001-12-14\n", "2001-12-14"),
    ("stamp.yaml", HEAD + "rope_theta: 2001-12-14t21:59:43.10-05:00\nmax_position_embeddings: 4096\n",
     "2001-12-14T21:59:43.100000-05:00"),
    ("set.yaml", HEAD + "rope_theta: !!set {b, a}\nmax_position_embeddings: 4096\n", ["a", "b"]),
    ("time.toml",
     'hidden_size = 4096\nnum_attention_heads = 32\nrope_theta = 10000\nmax_position_embeddings = 07:32:00\n',
     "07:32:00"),
    ("datetime.toml", 'hidden_size = 4096\nnum_attention_heads = 32\nrope_theta = 1979-05-27T07:32:00Z\n'
     'max_position_embeddings = 4096\n', "1979-05-27T07:32:00+00:00"),
])
def test_json_output_encodes_every_yaml_and_toml_value(tmp_path, capsys, name, text, value):
    (tmp_path / name).write_text(text)
    code, out, err = run(capsys, "lint", tmp_path / name, "--format", "json")
    assert code == 1 and err == ""
    doc = json.loads(out)
    derived = doc["configs"][0]["derived"]
    got = [v["value"] for v in (derived["base"], derived["max_position_embeddings"]) if v and v["value"] == value]
    assert got == [value]
    assert all(f["code"] == "RV001" for f in doc["findings"])  # reported as values of the wrong type


def test_json_output_takes_a_date_as_a_mapping_key(tmp_path, capsys):
    (tmp_path / "k.yaml").write_text(HEAD + "rope_theta: 10000\nmax_position_embeddings: 4096\n"
                                     "rope_scaling:\n  type: linear\n  factor: 2\n  2001-01-01: x\n")
    code, out, err = run(capsys, "lint", tmp_path / "k.yaml", "--format", "json")
    assert code in (0, 1) and err == "" and json.loads(out)["summary"]["configs"] == 1


@pytest.mark.parametrize("path", ["tests/a b.py", "/tmp/x#y/100%.py", "rel/dir/m.py", "/abs/é.py",
                                  os.fsdecode(b"/tmp/bad\xff.py")])
def test_sarif_locations_are_uris(path):
    uri = sarif_uri(path)
    parts = urlsplit(uri)
    assert " " not in uri and "#" not in uri.split("//", 1)[-1] and all(ord(c) < 128 for c in uri)
    if path.startswith("/"):
        assert parts.scheme == "file" \
            and os.fsencode(unquote(parts.path, errors="surrogateescape")) == os.fsencode(path)
    else:
        assert parts.scheme == "" and unquote(uri) == path


def test_sarif_output_uses_them(tmp_path, capsys):
    p = tmp_path / "a b.py"
    p.write_text("import torch\ndef rotary(n, x):\n    return torch.arange(n, dtype=x.dtype)\n")
    code, out, err = run(capsys, "audit", "code", p, "--format", "sarif")
    uri = json.loads(out)["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert uri == "file://" + str(p).replace(" ", "%20")


def test_a_failed_image_write_leaves_the_old_image(tmp_path, capsys, monkeypatch):
    pytest.importorskip("matplotlib")
    import matplotlib.figure

    out = tmp_path / "bound.png"
    out.write_bytes(b"the old image")

    def full_disk(self, fname, **kw):  # writes part of the file, then the disk is full
        with open(fname, "wb") as fh:
            fh.write(b"\x89PNG partial")
        raise OSError(errno.ENOSPC, "No space left on device")
    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", full_disk)
    code, stdout, err = run(capsys, "plot", "bound", "-o", out)
    assert code == 2 and err == (f"ropelaw: error: {out}: cannot write: No space left on device; the existing file "
                                 "is unchanged\n")
    assert out.read_bytes() == b"the old image" and sorted(os.listdir(tmp_path)) == ["bound.png"]


@pytest.mark.parametrize("value", ["1e308", "1e-300", "0.0005", "4e7"])
def test_timeouts_out_of_range_are_one_line(capsys, value):
    pytest.importorskip("torch")
    code, out, err = run(capsys, "audit", "module", "tests/fixtures/runtime/rotary.py:legacy_buggy", "--length", "64",
                         "--timeout", value)
    assert (code, out) == (2, "") and err.count("\n") == 1 and "out of range: 0 (no limit) or 0.001" in err
