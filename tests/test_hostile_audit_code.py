"""Hostile inputs for `ropelaw audit code` (issue 12): never a silent all-clear, never a hang.

A file the checker cannot fully analyse is RE004 (exit 1); FIFOs and devices are refused before
reading (named: exit 2; in a directory: RE003); files over --max-file-size are not read.
"""

from __future__ import annotations

import os
import sys
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


# --------------------------------------------------------------------------- linear time (issue 30)
# Not timed (timings belong in benchmarks/): the work is counted as the function calls of the scan, at n and 2n; the
# issue's sizes run once, for their findings
# (benchmarks/hostile_sweep.py runs them as subprocesses and times them).

def product_chain(n: int) -> str:
    """`t * self.inv_freq * self.inv_freq * ...`: n factors (a left-nested BinOp n deep)."""
    return ("import torch\nclass RotaryEmbedding(torch.nn.Module):\n    def __init__(self):\n"
            "        super().__init__()\n        self.register_buffer('inv_freq', torch.ones(4))\n"
            "    def forward(self, x):\n        t = torch.arange(x.shape[1])\n"
            "        y = t" + " * self.inv_freq" * n + "\n        return y.cos()\n")


def float_scalar_chain(n: int) -> str:
    """`1.5 * t * t * ...`: the float scalar sits at the bottom of the whole left operand at every level."""
    return ("import torch\ndef rope(x, inv_freq):\n    t = torch.arange(x.shape[1])\n"
            "    y = 1.5" + " * t" * n + "\n    return (y * inv_freq).cos()\n")


def self_calling_classes(n: int) -> str:
    """n classes whose methods call each other through self (tests/hostile_cases.py's case)."""
    return "import torch\n" + "".join(
        f"class C{i}(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        f"        self.register_buffer('inv_freq', torch.ones(3))\n    def a(self, x):\n        return self.b(x)\n"
        f"    def b(self, x):\n        return torch.arange(x.shape[0], dtype=self.inv_freq.dtype)\n"
        f"    def forward(self, x):\n        return self.a(x)\n" for i in range(n))


def einsum_equation(chars: int) -> str:
    """An einsum whose equation is `iii...i->jjj...ji` (`chars` characters): every left index is kept."""
    half = chars // 2
    eq = "i" * half + "->" + "j" * (chars - half - 3) + "i"
    return ("import torch\ndef rope(inv_freq):\n    t = torch.arange(10)\n"
            f"    return torch.einsum('{eq}', t, inv_freq).cos()\n")


def calls(source: str) -> int:
    """Python and C function calls made while scanning ``source`` (a profile hook counts them, in every thread:
    the scan runs on a deep-stack thread)."""
    import threading

    count = 0

    def hook(frame, event, arg):
        nonlocal count
        if event in ("call", "c_call"):
            count += 1

    threading.setprofile(hook)
    sys.setprofile(hook)
    try:
        scan_source(source, "hostile.py")
    finally:
        sys.setprofile(None)
        threading.setprofile(None)
    return count


@pytest.mark.parametrize("make, n", [(product_chain, 500), (float_scalar_chain, 500), (self_calling_classes, 100)])
def test_work_is_linear_in_the_input(make, n):
    """Twice the input, at most 2.2 times the calls (a quadratic walk gives nearly 4 times)."""
    small, large = calls(make(n)), calls(make(2 * n))
    assert large <= 2.2 * small, (make.__name__, small, large)


def codes_of(source: str) -> list[tuple[str, int]]:
    return sorted((f.code, f.line) for f in scan_source(source, "hostile.py"))


def test_issue_sizes_end_with_their_findings():
    """8,000 factors `* inv_freq` (more than 30 s before), 1,000 self-calling classes (4,000 in
    benchmarks/hostile_sweep.py: 4 times the work, by the test above), a 1.5M-character einsum: the same
    findings as at small sizes. Positions are int64 times a float buffer: RP101 at the
    product (line 8), RP121 at the buffer (line 5); each class's `arange(..., dtype=self.inv_freq.dtype)` is
    RP101; an einsum of positions and frequencies outside `autocast(enabled=False)` is RP113."""
    assert codes_of(product_chain(8000)) == [("RP101", 8), ("RP121", 5)]
    assert codes_of(float_scalar_chain(8000)) == [("RP115", 4)]
    found = codes_of(self_calling_classes(1000))
    assert len(found) == 1000 and {c for c, _ in found} == {"RP101"}
    assert codes_of(einsum_equation(1_500_000)) == [("RP113", 4)]
