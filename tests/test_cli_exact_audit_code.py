"""CLI: `ropelaw exact` and `ropelaw audit code` (output formats, exit codes, bad input).

Run in-process through ``ropelaw.cli.main`` (capsys), which is what the console script calls.
"""

from __future__ import annotations

import json
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from ropelaw.cli import main

FIX = Path(__file__).parent / "fixtures" / "static"
SEED = str(FIX / "seed004_llama_original.py")


def run(capsys, *argv):
    try:
        code = main(list(argv))
    except SystemExit as exc:  # argparse rejects a flag's value: exit 2 with one line
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


# ------------------------------------------------------------------ exact

def test_exact_json_seed_figure(capsys):
    code, out, _ = run(capsys, "exact", "--dtype", "bf16", "--length", "8192", "--format", "json")
    d = json.loads(out)
    p = np.arange(8192, dtype=np.float64)
    c = p.astype(ml_dtypes.bfloat16).astype(np.float64)
    assert code == 0
    assert set(d) >= {"dtype", "length", "exact", "exact_fraction", "distinct", "first_inexact",
                      "spacing_at_end", "overflow_from", "overflow_count"}
    assert (d["dtype"], d["length"], d["exact"]) == ("bf16", 8192, int(np.sum(c == p)))  # 896 (seed 004)
    assert d["distinct"] == len(np.unique(c))
    assert d["overflow_from"] is None and d["overflow_count"] == 0


def test_exact_json_fp16_overflow(capsys):
    code, out, _ = run(capsys, "exact", "--dtype", "half", "--length", "70000", "--format", "json")
    d = json.loads(out)
    assert code == 0 and d["overflow_from"] == 65520 and d["overflow_count"] == 70000 - 65520
    assert d["spacing_at_end"] is None


def test_exact_text(capsys):
    code, out, _ = run(capsys, "exact", "--dtype", "torch.bfloat16", "--length", "8k")
    assert code == 0
    assert "896 of 8,192  (10.94%)" in out
    assert "first inexact     257" in out


@pytest.mark.parametrize("argv", [
    ["exact", "--dtype", "fp12", "--length", "10"],
    ["exact", "--dtype", "bf16", "--length", "0"],
    ["exact", "--dtype", "bf16", "--length", "1.5"],
    ["exact", "--dtype", "bf16", "--length", str(2 ** 53 + 2)],
    ["exact", "--dtype", "bf16"],
])
def test_exact_bad_input_exits_2(capsys, argv):
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert "error" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


# ------------------------------------------------------------------ audit code

def test_audit_code_text(capsys):
    code, out, _ = run(capsys, "audit", "code", SEED)
    lines = out.splitlines()
    assert code == 1
    assert lines[0].startswith(f"{SEED}:12:9: RP121 inv-freq-float-buffer ")
    assert lines[2] == (f"{SEED}:20:13: RP101 positions-in-buffer-dtype positions take the dtype of `self.inv_freq`, "
                        "which `model.to(bfloat16)` turns into bf16: 896 of 8,192 positions stay exact (path: made "
                        "at line 20 by `torch.arange`, cast at line 20, used at line 21 in `einsum`)")
    assert lines[3].startswith("  fix: build positions as int64")
    assert lines[-1] == "Found 4 findings (1 error, 3 warnings) in 1 file."  # + RP113: CUDA autocast lowers its einsum


def test_audit_code_clean_exits_0(capsys):
    code, out, _ = run(capsys, "audit", "code", str(FIX / "seed004_llama_fixed.py"), str(FIX / "clean_idioms.py"))
    assert code == 0 and out.strip() == "All checks passed: no findings in 2 files."


def test_audit_code_json(capsys):
    code, out, _ = run(capsys, "audit", "code", SEED, "--format", "json")
    items = json.loads(out)
    assert code == 1
    assert [(i["code"], i["line"], i["column"]) for i in items] == [("RP121", 12, 9), ("RP101", 20, 13),
                                                                   ("RP113", 21, 17), ("RP122", 30, 13)]
    for i in items:
        assert {"code", "name", "message", "path", "line", "column", "severity", "fix"} <= set(i)
        assert i["path"] == SEED


def test_audit_code_sarif(capsys):
    code, out, _ = run(capsys, "audit", "code", SEED, "--format", "sarif")
    doc = json.loads(out)
    assert code == 1 and doc["version"] == "2.1.0"
    run0 = doc["runs"][0]
    assert run0["tool"]["driver"]["name"] == "ropelaw"
    rule_ids = [r["id"] for r in run0["tool"]["driver"]["rules"]]
    assert sorted(rule_ids) == ["RP101", "RP113", "RP121", "RP122"]
    assert [r["ruleId"] for r in run0["results"]] == ["RP121", "RP101", "RP113", "RP122"]
    for r in run0["results"]:
        assert r["message"]["text"]
        loc = r["locations"][0]["physicalLocation"]
        # SARIF 2.1.0 section 3.4.3: a URI; an absolute path is a file:// URI (issue 23)
        assert loc["artifactLocation"]["uri"] == Path(SEED).absolute().as_uri() and loc["region"]["startLine"] >= 1
        assert rule_ids[r["ruleIndex"]] == r["ruleId"]


def test_audit_code_github(capsys):
    code, out, _ = run(capsys, "audit", "code", SEED, "--format", "github")
    lines = out.splitlines()
    assert code == 1 and len(lines) == 4
    assert lines[1].startswith(f"::error file={SEED},line=20,col=13,title=RP101 positions-in-buffer-dtype::")
    assert lines[0].startswith("::warning ")


def test_audit_code_select_ignore(capsys):
    code, out, _ = run(capsys, "audit", "code", SEED, "--format", "json", "--select", "RP1", "--ignore",
                       "RP113,RP121,RP122")
    assert code == 1 and [i["code"] for i in json.loads(out)] == ["RP101"]
    code, out, _ = run(capsys, "audit", "code", SEED, "--format", "json", "--ignore", "RP")
    assert code == 0 and json.loads(out) == []


def test_audit_code_directory_and_syntax_error(capsys):
    code, out, _ = run(capsys, "audit", "code", str(FIX), "--format", "json", "--no-progress")
    items = json.loads(out)
    assert code == 1
    assert ("RE001", "re001_syntax_error.py") in {(i["code"], Path(i["path"]).name) for i in items}


def test_audit_code_length_flag(capsys):
    code, out, _ = run(capsys, "audit", "code", SEED, "--length", "4096", "--select", "RP101", "--no-fix")
    p = np.arange(4096, dtype=np.float64)
    exact = int(np.sum(p.astype(ml_dtypes.bfloat16).astype(np.float64) == p))  # 256 + 4 binades x 128 = 768
    assert f"{exact:,} of 4,096 positions stay exact" in out
    assert "fix:" not in out


@pytest.mark.parametrize("argv,msg", [
    (["audit", "code", "does/not/exist.py"], "no such file"),
    (["audit", "code", "pyproject.toml"], "not a Python file"),
    (["audit"], "say what to audit"),
])
def test_audit_code_bad_input_exits_2(capsys, argv, msg):
    code, out, err = run(capsys, *argv)
    assert code == 2 and msg in err and "Traceback" not in err


def test_audit_code_bad_format_exits_2():
    with pytest.raises(SystemExit) as exc:
        main(["audit", "code", SEED, "--format", "xml"])
    assert exc.value.code == 2


def test_rule_command_explains_static_rules(capsys):
    code, out, _ = run(capsys, "rule", "RP101")
    assert code == 0 and out.startswith("RP101 positions-in-buffer-dtype (error)")
    for heading in ("## What it does", "## Why it matters", "## Example", "## Fix", "## References"):
        assert heading in out


def _stderr_on_terminal(argv: list[str]) -> bytes:
    """Run the console script with stderr on a 100-column pseudo-terminal; return what it drew."""
    import fcntl
    import os
    import pty
    import select
    import struct
    import subprocess
    import sys
    import termios

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))
    proc = subprocess.Popen([sys.executable, "-m", "ropelaw", *argv], stdout=subprocess.DEVNULL, stderr=slave)
    os.close(slave)
    out = b""
    while select.select([master], [], [], 20)[0]:
        try:
            chunk = os.read(master, 4096)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    proc.wait(timeout=60)
    os.close(master)
    return out


def test_progress_bar_only_on_a_terminal_and_not_in_json():
    drawn = _stderr_on_terminal(["audit", "code", str(FIX)])
    assert b"scanning" in drawn and b"file" in drawn
    assert b"scanning" not in _stderr_on_terminal(["audit", "code", str(FIX), "--format", "json"])
    assert b"scanning" not in _stderr_on_terminal(["audit", "code", str(FIX), "--no-progress"])
