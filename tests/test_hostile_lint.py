"""Hostile config files against `ropelaw lint` (issue 12): each class with its exact outcome.

Bounded by design: a FIFO or a link to /dev/zero is refused before reading; YAML recursive
anchors and alias bombs are refused before construction; positions are resolved lazily (no
per-element path); integers beyond the float range become RV002 findings, never broken JSON.
"""

from __future__ import annotations

import json
import os
import re

import pytest

from ropelaw.cli import main
from ropelaw.errors import UsageError
from ropelaw.lint.parse import MAX_DEPTH, JsonPositions, parse_text, read_document

HEAD = '{"hidden_size": 4096, "num_attention_heads": 32, "rope_theta": 10000, "max_position_embeddings": 4096'


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def billion_laughs(levels: int = 12) -> str:
    lines = ['a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for i in range(1, levels):
        prev, cur = chr(96 + i), chr(97 + i)
        lines.append(f"{cur}: &{cur} [" + ", ".join([f"*{prev}"] * 9) + "]")
    return ("hidden_size: 4096\nnum_attention_heads: 32\nrope_theta: 10000\nmax_position_embeddings: 4096\n"
            "rope_scaling:\n  type: linear\n  factor: 2\n  x:\n" + "".join(f"    {ln}\n" for ln in lines))


def test_json_nested_900_deep_is_refused_at_the_depth_limit():
    inner = "[" + ",".join(["1"] * 2000) + "]"
    text = HEAD + ', "x": ' + "[" * 899 + ",".join([inner] * 500) + "]" * 899 + "}"
    assert len(text) > 2_000_000
    with pytest.raises(UsageError, match=f"deep.json: malformed JSON: nested deeper than {MAX_DEPTH} levels"):
        parse_text(text, "json", "deep.json")


def test_json_positions_index_only_the_containers_on_the_looked_up_path():
    wide = "[" + ",".join(["[1, 2, 3]"] * 10_000) + "]"
    text = '{"a": ' + wide + ',\n "b": {"c": [' + '{"d": ' * 50 + "1" + "}" * 50 + "]}}"
    data, pos = parse_text(text, "json")
    assert isinstance(pos, JsonPositions)
    assert pos and len(pos._members) == 1  # truth (load_mapping's `positions or {}`) indexes the root only
    line2 = text.split("\n")[1]
    second_d = line2.index('"d"', line2.index('"d"') + 1) + 1  # 1-based column, found independently
    assert pos[("b", "c", 0, "d", "d")] == (2, second_d) == (2, 21)
    assert pos.get(("b", "zz"), (1, 1)) == (1, 1)
    assert ("a", 9_999, 2) in pos and ("a", 10_000) not in pos
    # the root, b, b.c, b.c[0], b.c[0].d and a (for the membership check) were indexed; nothing else
    assert sum(m is not None for m in pos._members.values()) <= 8


def test_recursive_yaml_anchor_is_malformed_not_a_traceback(tmp_path, capsys):
    p = tmp_path / "rec.yaml"
    p.write_text("hidden_size: 4096\nrope_theta: 10000\nrope_scaling: &a [*a]\n")
    code, out, err = run(capsys, "lint", str(p))
    assert (code, out) == (2, "")
    assert err == (f"ropelaw: error: {p}: malformed YAML: recursive YAML anchor (an alias inside the node it names); "
                   "refused\n")


def test_billion_laughs_is_refused_quickly(tmp_path, capsys):
    with pytest.raises(UsageError, match="YAML aliases expand to more than 1,000,000 extra nodes"):
        parse_text(billion_laughs(), "yaml", "lol.yaml")
    # a few small anchors, as real configs use them, are fine
    data, pos = parse_text("base: &b {rope_theta: 10000}\nmodel:\n  <<: *b\n  hidden_size: 64\n", "yaml")
    assert data["model"] == {"rope_theta": 10000, "hidden_size": 64}
    assert pos[("model", "hidden_size")] == (4, 3)


def test_directory_scan_goes_on_past_recursive_and_exploding_yaml(tmp_path, capsys):
    (tmp_path / "a.yaml").write_text("rope_scaling: &a [*a]\n")
    (tmp_path / "b.yaml").write_text(billion_laughs())
    (tmp_path / "c.json").write_text(HEAD + ', "torch_dtype": "float32"}')
    code, out, err = run(capsys, "lint", "-v", str(tmp_path))
    assert code == 1 and err == ""
    assert re.search(r"a\.yaml:1:1: RE102 malformed-config malformed YAML: recursive YAML anchor", out)
    assert re.search(r"b\.yaml:1:1: RE102 malformed-config malformed YAML: YAML aliases expand", out)
    assert "c.json" in out and out.endswith("in 3 configs (2 not analysed).\n")  # the good file was still linted


@pytest.mark.parametrize("name, text", [
    ("dec.json", HEAD.replace("10000", "9" * 5000) + "}"),
    ("dec.yaml", "hidden_size: 4096\nnum_attention_heads: 32\nrope_theta: " + "9" * 5000 + "\n"),
    ("hex.yaml", "hidden_size: 4096\nnum_attention_heads: 32\nrope_theta: 0x" + "f" * 5000 + "\n"),
    ("hex.toml", "hidden_size = 4096\nnum_attention_heads = 32\nrope_theta = 0x" + "f" * 5000 + "\n"),
])
def test_integers_beyond_4300_digits_are_findings_and_json_stays_valid(tmp_path, capsys, name, text):
    p = tmp_path / name
    p.write_text(text)
    code, out, err = run(capsys, "lint", str(p), "--format", "json")
    assert code == 1 and err == ""
    doc = json.loads(out)
    (f,) = [f for f in doc["findings"] if f["code"] == "RV002"]
    assert re.fullmatch(r"rope_theta is an integer of [\d,]+ digits: beyond float range", f["message"])
    assert f["line"] == (1 if name.endswith(".json") else 3)


def test_decimal_toml_integer_beyond_python_limit_is_one_line_bad_input(tmp_path, capsys):
    p = tmp_path / "dec.toml"
    p.write_text("rope_theta = " + "9" * 5000 + "\n")
    code, out, err = run(capsys, "lint", str(p), "--format", "json")
    assert (code, out) == (2, "")
    assert err.startswith(f"ropelaw: error: {p}: malformed TOML: Exceeds the limit") and err.count("\n") == 1


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_fifo_and_device_links_are_refused_before_reading(tmp_path, capsys):
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    code, out, err = run(capsys, "lint", str(fifo))
    assert (code, err) == (2, f"ropelaw: error: {fifo}: is a FIFO (named pipe), not a regular file; refused\n")
    (tmp_path / "zero.yaml").symlink_to("/dev/zero")
    with pytest.raises(UsageError, match="is a character device, not a regular file; refused"):
        read_document(str(tmp_path / "zero.yaml"))
    (tmp_path / "ok.json").write_text(HEAD + "}")
    code, out, err = run(capsys, "lint", "-v", str(tmp_path))
    assert code == 1 and err == ""
    assert "pipe.json:1:1: RE101 unreadable-config is a FIFO (named pipe), not a regular file; refused" in out
    assert "zero.yaml:1:1: RE101 unreadable-config is a character device, not a regular file; refused" in out
    assert "ok.json" in out and out.endswith("in 3 configs (2 not analysed).\n")
