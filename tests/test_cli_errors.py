"""Bad input at the command line: exit 2 with exactly one line on stderr, never a traceback.

The contract (STYLE/brief, ruff's exit codes): bad input exits 2 with one line on stderr that
starts ``ropelaw: error:`` (argparse's own ``ropelaw COMMAND: error: ...`` is one line too),
nothing on stdout; findings exit 1; clean runs exit 0. Every case here runs in-process through
``ropelaw.cli.main`` (what the console script calls) and must finish quickly: a value that
would make a command loop for minutes (d = 1e308, a target of 10**30 tokens) is refused.

Also here: every ``--format json`` output parses with ``json.loads`` (no NaN/Infinity tokens)
and carries the documented keys; ``| head -1`` closes cleanly; importing ``ropelaw`` stays light.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ropelaw.cli import main

ROOT = Path(__file__).resolve().parents[1]
STATIC = ROOT / "tests" / "fixtures" / "static"
CONFIG = str(ROOT / "tests" / "configs" / "llama-2-7b.json")
BIG_INT = "1" + "0" * 30  # 10**30 as an integer string

BOUND = ["bound", "--d", "128", "--train", "4096", "--base", "1e6"]
BASE = ["base", "--d", "128", "--train", "4096", "--base", "1e4", "--target", "128k"]
DIMS = ["dims", "--d", "128", "--train", "4096", "--base", "5e5"]
SCHEME = ["schemes", "yarn", "--d", "128", "--train", "4096", "--base", "1e4", "--factor", "8"]
EXACT = ["exact", "--dtype", "bf16", "--length", "8192"]

# values every number-typed flag must refuse (argparse type or RopeSpec validation)
NOT_NUMBERS = ["abc", "", "nan", "inf", "-inf", "1e400", "0x10"]


def _with(argv: list[str], flag: str, value: str) -> list[str]:
    out = list(argv)
    out[out.index(flag) + 1] = value
    return out


def _without(argv: list[str], flag: str) -> list[str]:
    out = list(argv)
    i = out.index(flag)
    del out[i:i + 2]
    return out


def _cases() -> list[tuple[list[str], int]]:
    cases: list[tuple[list[str], int]] = []
    bad = lambda argv: cases.append((argv, 2))  # noqa: E731
    ok = lambda argv: cases.append((argv, 0))  # noqa: E731

    # --- shared RoPE flags: bound, dims, schemes NAME, and base's own
    for cmd in (BOUND, DIMS, SCHEME, BASE):
        for v in NOT_NUMBERS + ["0", "-1", "1", "3", "127", "1.5", "1e308", BIG_INT, "1e6", "1e5"]:
            bad(_with(cmd, "--d", v))  # odd, < 2, fractional, beyond any real model (> 65,536)
        for v in NOT_NUMBERS + ["0", "-1", "1.5", "1", "6", "1e308", BIG_INT, "9007199254740993"]:
            bad(_with(cmd, "--train", v))  # <= 2*pi, fractional, beyond 2**53
        if cmd is not BASE:
            bad(_without(cmd, "--d"))
        bad(_without(cmd, "--train"))
    for cmd in (BOUND, DIMS, SCHEME):
        for v in NOT_NUMBERS + ["0", "-1", "1", "1e-300"]:
            bad(_with(cmd, "--base", v))
    bad(_without(BOUND, "--base"))
    bad(_without(BASE, "--base"))  # the pretraining base is never assumed
    ok(_without(BASE, "--base") + ["--pretrain-base", "1e4"])
    ok(_with(BOUND, "--base", "1.0000001"))  # just above 1: a valid (tiny) base
    ok(_with(BOUND, "--base", "1e308"))
    ok(_with(BOUND, "--d", "2"))
    ok(_with(BOUND, "--train", "7"))  # the smallest whole length above 2*pi
    ok(_with(BOUND, "--train", "9007199254740992"))
    ok(_with(DIMS, "--d", "2048"))
    for v in NOT_NUMBERS + ["0", "1", "-1", "1e-300"]:
        bad(BOUND + ["--pretrain-base", v])
        bad(BASE + ["--pretrain-base", v])
    ok(BASE + ["--pretrain-base", "1.0000001"])
    for v in NOT_NUMBERS + ["0", "-1", "1.5", "2048", "1k", "1e308", BIG_INT]:
        bad(BOUND + ["--tune", v])  # tune < train, fractional, beyond 2**53
    ok(BOUND + ["--tune", "4096"])
    for v in NOT_NUMBERS + ["0", "-1", "1.5", "1e308", BIG_INT]:
        bad(_with(BASE, "--target", v))
        bad(DIMS + ["--seq-len", v])
        bad(SCHEME + ["--seq-len", v])
    bad(_without(BASE, "--target"))
    ok(_with(BASE, "--target", "1"))  # within the training length: no change needed
    ok(_with(BASE, "--d", "2048"))  # Men et al.'s search skipped (too costly), the scaling law given
    ok(_with(BASE, "--target", "9007199254740992"))
    # d = 2: B_(m,theta) = cos(m) < 0 at m = 2 whatever the base, so Men et al.'s bound does not
    # exist; that used to abort the whole command (exit 2) and hide the scaling-law answer
    ok(_with(BASE, "--d", "2"))

    # --- schemes and their parameters
    bad(BOUND + ["--scheme", "nope"])
    bad(BOUND + ["--scheme", ""])
    for scheme, _need in (("yarn", "factor"), ("dynamic", "factor"), ("linear", "factor"), ("ntk", "factor"),
                         ("llama3", "factor"), ("rerope", "window"), ("leaky_rerope", "window")):
        bad(BOUND + ["--scheme", scheme])  # missing required parameter
    for v in NOT_NUMBERS[:3] + ["0", "-1"]:
        bad(BOUND + ["--factor", v])  # plain RoPE takes no factor; non-numbers fail first
        bad(_with(SCHEME, "--factor", v))
    bad(BOUND + ["--factor", "8"])  # --factor without --scheme used to be ignored silently
    for p in ("factor=abc", "factor=[1,2]", "factor=0", "factor=-2", "factor=NaN", "factor=Infinity", "factor=1e400",
              "factor=true", "factor=null", "factor={}", "factor=", "noeq", "=3", "window=[1,2]", "window=abc",
              "beta_fast=abc", "original_max_position_embeddings=abc", "original_max_position_embeddings=1"):
        bad(BOUND + ["--scheme", "yarn", "--param", p] + ([] if p.startswith("factor") else ["--factor", "8"]))
    for p in ("window=[1,2]", "window=abc", "window=0", "window=-1"):
        bad(BOUND + ["--scheme", "rerope", "--param", p])
    bad(BOUND + ["--scheme", "leaky_rerope", "--param", "window=16", "--param", "k=abc"])
    bad(BOUND + ["--scheme", "yarn", "--factor", "4", "--param", "factor=8"])  # factor twice
    bad(BOUND + ["--scheme", "yarn", "--param", "factor=4", "--param", "factor=8"])
    bad(BOUND + ["--scheme", "longrope", "--factor", "4", "--param", "short_factor=[1,2]"])
    ok(BOUND + ["--scheme", "yarn", "--factor", "8"])
    # frequencies that underflow to 0 (period inf) used to crash the text output (round(inf), 2*pi/0)
    ok(BOUND + ["--scheme", "yarn", "--factor", "1e308"])
    ok(["schemes", "linear", "--d", "4", "--train", "7", "--base", "1e308", "--factor", "1e308"])
    # the NTK-scaled base b*s^(d/(d-2)) beyond float range: refused (was OverflowError)
    bad(["bound", "--d", "4", "--train", "7", "--base", "1.0000001", "--scheme", "ntk", "--factor", "1e308"])
    bad(["dims", "--d", "4", "--train", "7", "--scheme", "ntk", "--factor", "1e308"])
    ok(BOUND + ["--scheme", "leaky_rerope", "--param", "window=512", "--param", "k=16"])
    bad(["schemes", "nope"])
    bad(["schemes", "yarn"])  # needs --d and --train
    bad(["schemes", "default", "--d", "128", "--train", "4096", "--factor", "8"])
    bad(["schemes", "--d", "128"])  # a flag without a NAME
    bad(["schemes", "--format", "xml"])
    ok(["schemes"])

    # --- exact
    for v in NOT_NUMBERS + ["0", "-1", "1.5", "1e308", BIG_INT, "9007199254740993"]:
        bad(_with(EXACT, "--length", v))
    for v in ("nope", "", "float64", "int8"):
        bad(_with(EXACT, "--dtype", v))
    bad(_without(EXACT, "--dtype"))
    bad(_without(EXACT, "--length"))
    for dt in ("bf16", "fp16", "fp32", "tf32", "fp8_e4m3", "fp8_e5m2"):
        ok(_with(_with(EXACT, "--dtype", dt), "--length", "9007199254740992"))
        ok(_with(_with(EXACT, "--dtype", dt), "--length", "1"))

    # --- audit code / checkpoint: paths ({tmp} is a directory of odd files, see the fixture)
    for p in ("/nonexistent/x.py", "", "{tmp}/empty.json", "{tmp}/bin.safetensors", "/dev/null"):
        bad(["audit", "code", p])
    for p in ("{tmp}/empty.py", "{tmp}/dir"):
        ok(["audit", "code", p])
    for p in ("{tmp}/bin.py", "{tmp}/nonutf8.py"):  # unreadable source is a finding (RE0xx), not a crash
        cases.append((["audit", "code", p], 1))
    for v in NOT_NUMBERS + ["0", "1.5", BIG_INT]:
        bad(["audit", "code", "{tmp}/empty.py", "--length", v])
    bad(["audit", "code", "{tmp}/empty.py", "--format", "xml"])
    bad(["audit", "code", "{tmp}/empty.py", "--select", "ZZ9"])  # a typo used to select nothing, silently
    bad(["audit", "code", "{tmp}/empty.py", "--ignore", "RP1,XX"])
    ok(["audit", "code", "{tmp}/empty.py", "--select", "rp1,RE"])
    ok(["audit", "code", "{tmp}/empty.py", "--select", "ALL"])
    bad(["audit", "code"])
    bad(["audit"])
    bad(["audit", "nope"])
    for p in ("/nonexistent", "{tmp}/dir", "{tmp}/empty.safetensors", "{tmp}/bin.safetensors", "{tmp}/empty.py",
              "/dev/null"):
        bad(["audit", "checkpoint", p])

    # --- lint and rule (front-door contract only)
    for p in ("/nonexistent.json", "{tmp}/empty.json", "{tmp}/nonutf8.json", "{tmp}/bin.json", "{tmp}/empty.py",
              "{tmp}/dir"):  # a directory without config files: exit 2, like a missing path
        bad(["lint", p])
    for v in ("abc", "0", "nan", "1e400", str(2**31)):  # 2^31: past lint's length limit (RV013)
        bad(["lint", CONFIG, "--target", v])
    bad(["lint", CONFIG, "--format", "xml"])
    bad(["rule", "nope"])
    bad(["rule", ""])  # used to list every rule as if no code had been given
    bad(["rule", "RP101", "--format", "xml"])

    # --- the front door
    bad(["nope"])
    bad(["bound", "--format", "xml", "--d", "128", "--train", "4096", "--base", "1e6"])
    return cases


CASES = _cases()


@pytest.fixture(scope="module")
def odd_files(tmp_path_factory) -> Path:
    """Empty, binary, non-UTF-8 and truncated files, and a directory with one clean .py file."""
    tmp = tmp_path_factory.mktemp("odd")
    (tmp / "empty.py").write_bytes(b"")
    (tmp / "empty.json").write_bytes(b"")
    (tmp / "empty.safetensors").write_bytes(b"")
    noise = bytes(range(256)) * 8  # NUL bytes and invalid UTF-8
    for name in ("bin.py", "bin.json", "bin.safetensors"):
        (tmp / name).write_bytes(noise)
    (tmp / "nonutf8.py").write_bytes(b'x = "\xe9\xff"\n')
    (tmp / "nonutf8.json").write_bytes(b'\xff\xfe{"x": 1}')
    (tmp / "dir").mkdir()
    (tmp / "dir" / "ok.py").write_text("x = 1\n")
    return tmp


def run(capsys, argv):
    try:
        code = main(list(argv))
    except SystemExit as exc:  # argparse: exit 2 with one line (cli.CliParser.error)
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("argv,expected", CASES, ids=[" ".join(a) or "<none>" for a, _ in CASES])
def test_bad_input_is_one_line_exit_2(capsys, odd_files, argv, expected):
    argv = [a.replace("{tmp}", str(odd_files)) for a in argv]
    code, out, err = run(capsys, argv)
    assert "Traceback" not in err and "Exception" not in err
    assert code == expected, (code, err)
    if expected == 2:
        lines = err.splitlines()
        assert len(lines) == 1, err
        assert lines[0].startswith("ropelaw: error: ") or (
            lines[0].startswith("ropelaw ") and ": error: " in lines[0]), err
        assert out == ""
    else:
        assert err == ""
        assert out.strip()


def test_permission_denied_file_is_a_finding_or_a_one_line_error(capsys, tmp_path):
    """chmod 000: as root the file stays readable, so only check that nothing crashes either way."""
    p = tmp_path / "locked.py"
    p.write_text("x = 1\n")
    p.chmod(0)
    try:
        code, out, err = run(capsys, ["audit", "code", str(p)])
    finally:
        p.chmod(0o644)
    assert "Traceback" not in err
    if os.geteuid() == 0:
        assert code == 0  # root reads it anyway
    else:
        assert code == 1 and "RE003" in out  # unreadable-file finding


# ------------------------------------------------------------------ JSON outputs

def _strict(text: str):
    """json.loads that refuses NaN/Infinity (Python's json accepts them by default)."""
    def refuse(token):
        raise ValueError(f"non-standard JSON token {token}")
    return json.loads(text, parse_constant=refuse)


BOUND_KEYS = {"d", "train_len", "base", "pretrain_base", "tune_len", "critical_dimension", "critical_base", "regime",
              "extrapolation_bound", "updated_critical_dimension", "beta_1", "beta_2", "beta_3"}
EXACT_KEYS = {"dtype", "length", "exact", "exact_fraction", "distinct", "first_inexact", "spacing_at_end",
              "overflow_from", "overflow_count"}


@pytest.mark.parametrize("argv", [
    BOUND,
    BOUND + ["--tune", "16384", "--base", "500"],  # at or below the critical base
    ["bound", "--d", "128", "--train", "4096", "--base", "1e4", "--scheme", "rerope", "--param", "window=512"],  # inf
    ["bound", "--d", "2", "--train", "1e6", "--base", "1.0000001"],  # every pair saw a period
    ["bound", "--d", "128", "--train", "4096", "--base", "1e308", "--pretrain-base", "1e308"],
])
def test_bound_json_keys_and_no_nan(capsys, argv):
    code, out, _ = run(capsys, argv + ["--format", "json"])
    d = _strict(out)
    assert code == 0 and set(d) >= BOUND_KEYS
    assert d["regime"] in ("above_critical_base", "at_or_below_critical_base")
    # an unbounded scheme (ReRoPE, seed 000) is null in JSON, not Infinity
    if "rerope" in argv:
        assert d["extrapolation_bound"] is None


@pytest.mark.parametrize("argv", [BASE, _with(BASE, "--d", "4096"), _with(BASE, "--target", "1000")])
def test_base_json_keys(capsys, argv):
    code, out, _ = run(capsys, argv + ["--format", "json"])
    d = _strict(out)
    assert code == 0 and {"scaling_law_base", "men_lower_bound"} <= set(d)
    if argv[2] == "4096":
        assert d["men_lower_bound"] is None and "4,096" in d["men_not_computed"]
    else:
        assert d["men_lower_bound"] > 1


@pytest.mark.parametrize("dtype,length", [("bf16", "8192"), ("fp16", "70000"), ("fp8_e4m3", "1000"),
                                          ("fp8_e5m2", "1e6"), ("fp32", "9007199254740992"), ("tf32", "1")])
def test_exact_json_keys(capsys, dtype, length):
    code, out, _ = run(capsys, ["exact", "--dtype", dtype, "--length", length, "--format", "json"])
    d = _strict(out)
    assert code == 0 and set(d) >= EXACT_KEYS
    assert d["length"] == int(float(length))  # 2**53 read exactly, not through a float
    assert 0 <= d["exact"] <= d["length"] and math.isclose(d["exact_fraction"], d["exact"] / d["length"])


def test_audit_code_json_is_a_list_of_findings(capsys):
    code, out, _ = run(capsys, ["audit", "code", str(STATIC), "--format", "json"])
    items = _strict(out)
    assert code == 1 and isinstance(items, list) and items
    for f in items:
        assert {"code", "name", "message", "path", "line", "column"} <= set(f)


@pytest.mark.parametrize("argv", [
    DIMS, DIMS + ["--scheme", "dynamic", "--factor", "4", "--seq-len", "64k"],
    SCHEME, ["schemes", "rerope", "--d", "64", "--train", "4096", "--param", "window=512"], ["schemes"],
    ["rule", "--all"], ["rule", "RP101"], ["lint", CONFIG],
    ["schemes", "linear", "--d", "4", "--train", "7", "--base", "1e308", "--factor", "1e308"],  # period inf: null
    BOUND + ["--scheme", "yarn", "--factor", "1e308"],
])
def test_other_json_outputs_parse_strictly(capsys, argv):
    code, out, _ = run(capsys, argv + ["--format", "json"])
    assert code in (0, 1)
    _strict(out)


# ------------------------------------------------------------------ pipes and imports

@pytest.fixture(scope="module")
def many_findings(tmp_path_factory) -> Path:
    """300 copies of the seed-004 rotary file: audit output far larger than a pipe buffer (64 KiB)."""
    tmp = tmp_path_factory.mktemp("many")
    src = (STATIC / "seed004_llama_original.py").read_bytes()
    for i in range(300):
        (tmp / f"f{i:03d}.py").write_bytes(src)
    return tmp


@pytest.mark.parametrize("command", [
    "ropelaw dims --d 8192 --train 4096 --base 5e5 | head -1",  # ~400 KB of rows
    "ropelaw dims --d 8192 --train 4096 --base 5e5 --format json | head -1",
    "ropelaw audit code {many} | head -1",
    "ropelaw audit code {many} --format json | head -1",
])
def test_pipe_into_head_closes_cleanly(command, many_findings):
    exe = Path(sys.executable).parent
    env = dict(os.environ, PATH=f"{exe}{os.pathsep}{os.environ.get('PATH', '')}")
    proc = subprocess.run(["bash", "-o", "pipefail", "-c", command.format(many=many_findings)],
                          capture_output=True, text=True, env=env, timeout=60)
    assert proc.stdout.count("\n") == 1
    assert proc.stderr == ""  # no "Exception ignored ... BrokenPipeError", no traceback
    assert proc.returncode in (0, 1)  # the reader left early: not an error


def test_base_for_context_beyond_float_range_is_a_value_error():
    from ropelaw.theory import base_for_context

    with pytest.raises(ValueError, match="beyond float range"):
        base_for_context(128, 4096, 1e308)  # (1e308/2pi)^(128/92) overflows: was an OverflowError


def test_critical_dimension_of_a_huge_d_is_d():
    """d_extra = 2*ceil((d/2) log_b(T/2pi)) clamps to d (Lemma 1): for d = 1e308 the float
    argument overflows to inf, which used to raise OverflowError in round()."""
    from ropelaw.theory import critical_dimension

    d = int(1e308)  # an even integer
    assert critical_dimension(d, 4096, 10000.0) == d
    # a base so close to 1 that (d/2)*log_b(T/2pi) = 64*ln(651.9)/ln(1+2.2e-16) ~ 1.9e18 > d:
    # every pair completed a period; 2*ceil(...) is far above d and clamps to it
    assert critical_dimension(128, 4096, 1.0000000000000002) == 128


def test_findings_json_turns_infinite_data_into_null():
    """A finding may carry an unbounded length (inf) in its data: JSON gets null, not Infinity."""
    from ropelaw.findings import Finding, get_rule
    from ropelaw.report import render_json

    f = Finding.of(get_rule("RP101"), "message", path="x.py", line=1, column=1, bound=math.inf, ratio=math.nan)
    for out in (render_json([f]), render_json([f], extra={"bound": math.inf})):
        doc = _strict(out)
        items = doc if isinstance(doc, list) else doc["findings"]
        assert items[0]["data"] == {"bound": None, "ratio": None}
    assert _strict(render_json([f], extra={"bound": math.inf}))["bound"] is None


def test_emit_json_turns_infinite_values_into_null(capsys):
    from ropelaw.commands._common import emit_json

    emit_json({"a": math.inf, "b": [1.0, -math.inf, math.nan], "c": (2, 3)})
    assert _strict(capsys.readouterr().out) == {"a": None, "b": [1.0, None, None], "c": [2, 3]}


def test_text_numbers_never_round_to_a_misleading_value():
    """A base of 1.0000001 was shown as "1.0" (an invalid base), 1.0000000000000002 as "1"."""
    from ropelaw.numfmt import number

    assert [number(x) for x in (1.0000001, 1.04, 2607.5945876, 129027.0, math.inf)] == [
        "1.0000001", "1.04", "2,607.59", "129,027", "inf"]
    assert number(1.0000000000000002) == "1.0000000000000002" and number(1e8) == "100,000,000"
