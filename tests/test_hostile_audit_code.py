"""Hostile inputs for `ropelaw audit code` (issue 12): never a silent all-clear, never a hang.

A file the checker cannot fully analyse is RE004 (exit 1); FIFOs and devices are refused before
reading (named: exit 2; in a directory: RE003); files over --max-file-size are not read.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ropelaw.audit import static
from ropelaw.audit.static import scan as static_scan
from ropelaw.audit.static import scan_source
from ropelaw.cli import main

BUGGY = (Path(__file__).parent / "fixtures" / "static" / "rp101_positions_in_buffer_dtype.py").read_text()
N_RP101 = 4  # the fixture's RP101 lines (tests/test_audit_static.py: lines 11, 15, 20, 24)


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def terms(n: int) -> str:
    return " + ".join(f"w{i}" for i in range(n))


def test_rp101_after_a_2900_term_sum_is_found():
    """The issue's case: a valid 2,900-term sum before the buggy lines hid RP101 ("All checks passed",
    exit 0): at module level every finding was lost, inside the method the RP101 after it."""
    assert [f.code for f in scan_source(BUGGY, "m.py")].count("RP101") == N_RP101
    module_level = "import torch\nW = " + terms(2900) + "\n" + BUGGY
    in_method = BUGGY.replace("        t = torch.arange(seq_len, device",
                              "        s = " + terms(2900) + "\n        t = torch.arange(seq_len, device", 1)
    for source in (module_level, in_method):
        codes = [f.code for f in scan_source(source, "m.py")]
        assert codes.count("RP101") == N_RP101 and "RE004" not in codes


def test_walk_stopped_by_recursion_is_re004_with_the_findings_before_it(monkeypatch):
    monkeypatch.setattr(static_scan, "_DEEP_RECURSION", 1200)  # as if the sum were deeper than the deep-stack limit
    found = scan_source(BUGGY + "\nW = " + terms(2900) + "\n", "m.py")
    codes = [f.code for f in found]
    assert codes.count("RP101") == N_RP101
    (re004,) = [f for f in found if f.code == "RE004"]
    assert re004.message == ("analysis stopped early: an expression nested deeper than 1,200 levels; findings "
                             "after it may be missing")


@pytest.mark.parametrize("source, message", [
    ("import torch\nx = " + " + ".join(["w"] * 300_000) + "\n",
     "not analysed: the parser ran out of recursion depth (nesting deeper than any real code)"),
    ("import torch\nx = " + "-" * 200_000 + "1\n",
     "not analysed: the parser gave up (MemoryError: nesting deeper than any real code, or too large)"),
])
def test_parser_limits_are_re004_not_a_crash(source, message):
    (f,) = scan_source(source, "deep.py")
    assert (f.code, f.message) == ("RE004", message)


def test_file_over_the_size_limit_is_re004_and_not_read(tmp_path, capsys):
    p = tmp_path / "big.py"
    p.write_text("x = 1\n" * 20_000 + BUGGY)  # 120 kB
    code, out, err = run(capsys, "audit", "code", str(p), "--max-file-size", "64k", "--no-fix")
    assert (code, err) == (1, "")
    assert out == (f"{p}:1:1: RE004 incomplete-analysis not analysed: larger than the 64 KiB limit "
                   "(--max-file-size to raise it)\nFound 1 finding (1 error) in 1 file (1 not analysed).\n")
    code, out, _ = run(capsys, "audit", "code", str(p), "--max-file-size", "1M", "--no-fix")
    assert code == 1 and "RE004" not in out and out.count("RP101") == N_RP101
    with pytest.raises(SystemExit) as exc:  # argparse's own exit for a bad option value
        main(["audit", "code", str(p), "--max-file-size", "lots"])
    assert exc.value.code == 2 and "expected a size such as 4096, 512k or 16M: 'lots'" in capsys.readouterr().err
    assert static.MAX_FILE_BYTES == 4 << 20


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_fifo_and_dev_zero_link_refused_before_reading(tmp_path, capsys):
    os.mkfifo(tmp_path / "pipe.py")
    (tmp_path / "zero.py").symlink_to("/dev/zero")
    (tmp_path / "ok.py").write_text("x = 1\n")
    code, out, err = run(capsys, "audit", "code", str(tmp_path / "zero.py"))
    assert (code, err) == (2, f"ropelaw: error: {tmp_path / 'zero.py'}: is a character device, not a regular file; "
                              "refused\n")
    code, out, err = run(capsys, "audit", "code", str(tmp_path / "pipe.py"))
    assert (code, err) == (2, f"ropelaw: error: {tmp_path / 'pipe.py'}: is a FIFO (named pipe), not a regular file; "
                              "refused\n")
    code, out, err = run(capsys, "audit", "code", str(tmp_path), "--no-fix")
    assert (code, err) == (1, "")
    assert out.splitlines() == [
        f"{tmp_path / 'pipe.py'}:1:1: RE003 unreadable-file cannot read the file: is a FIFO (named pipe), not a "
        "regular file; refused",
        f"{tmp_path / 'zero.py'}:1:1: RE003 unreadable-file cannot read the file: is a character device, not a "
        "regular file; refused",
        "Found 2 findings (2 errors) in 3 files (2 not analysed).",
    ]
