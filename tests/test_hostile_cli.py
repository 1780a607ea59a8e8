"""Hostile arguments, output forgery, internal errors and user code in `audit module` (issue 12)."""

from __future__ import annotations

import json
import struct
import textwrap

import pytest

from ropelaw.cli import EXIT_INTERNAL_ERROR, main
from ropelaw.report import clean

FORGE = "x\n::error file=FORGED,line=1::forged\x1b[31m\u202e"


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


# -- numbers and lengths -------------------------------------------------------------------
@pytest.mark.parametrize("argv", [
    ["bound", "--d", "128", "--base", "1e6", "--train"],
    ["exact", "--dtype", "bf16", "--length"],
    ["lint", "x.json", "--train"],
    ["audit", "code", ".", "--length"],
    ["plot", "-o", "x.png", "--d", "128", "--base", "1e6", "--train"],
])
@pytest.mark.parametrize("value", ["1e308k", "1e308M", "9" * 5000, "1e400", "-1e308k"])
def test_length_overflow_is_one_line_bad_input(capsys, argv, value):
    with pytest.raises(SystemExit) as exc:  # argparse's exit for a bad option value
        main(argv[:-1] + [f"{argv[-1]}={value}"])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and err.count("\n") == 1 and len(err) < 250
    assert "Traceback" not in err and "must be" in err


def test_param_nested_100k_deep_and_huge_ints_are_bad_input(capsys):
    base = ["bound", "--d", "128", "--train", "4096", "--base", "1e6", "--scheme", "yarn", "--factor", "4"]
    for value, why in (("[" * 100_000 + "]" * 100_000, "value nested too deeply"),
                       ("[" * 9 + "1" + "]" * 9, "value nested deeper than 8 levels"),
                       ("9" * 5000, "integer of more than 309 digits (beyond float range)"),
                       ("[1, NaN]", "must be finite")):
        with pytest.raises(SystemExit) as exc:
            main(base + ["--param", f"beta_fast={value}"])
        err = capsys.readouterr().err
        assert exc.value.code == 2 and why in err and err.count("\n") == 1 and len(err) < 250


# -- internal errors -----------------------------------------------------------------------
def _crash(monkeypatch):
    from ropelaw.commands import exact

    def boom(args):
        raise RuntimeError("something broke\non two lines")

    monkeypatch.setattr(exact, "run", boom)


def test_internal_error_is_one_line_exit_3(capsys, monkeypatch):
    _crash(monkeypatch)
    monkeypatch.delenv("ROPELAW_DEBUG", raising=False)
    code, out, err = run(capsys, "exact", "--dtype", "bf16", "--length", "4096")
    assert (code, out) == (EXIT_INTERNAL_ERROR, "") and EXIT_INTERNAL_ERROR == 3
    assert err == ("ropelaw: internal error: RuntimeError: something broke on two lines (a bug in ropelaw, not in "
                   "your input: please report it with the command line and the traceback, shown with --debug or "
                   "ROPELAW_DEBUG=1)\n")


@pytest.mark.parametrize("exc", [ValueError("bad"), OSError(2, "No such file or directory", "/pkg/presets/x.json"),
                                 KeyError("scaling_factor"), TypeError("unsupported operand")])
def test_undeclared_errors_are_ropelaws_exit_3(capsys, monkeypatch, exc):
    """Only UsageError (the declared bad-input type) is the user's: a ValueError, an OSError on a file of the
    package, a KeyError or TypeError in ropelaw's code is exit 3, said as ropelaw's bug (they were exit 2)."""
    from ropelaw.commands import exact

    def boom(args):
        raise exc

    monkeypatch.setattr(exact, "run", boom)
    monkeypatch.delenv("ROPELAW_DEBUG", raising=False)
    code, out, err = run(capsys, "exact", "--dtype", "bf16", "--length", "4096")
    assert (code, out) == (3, "")
    assert err.startswith(f"ropelaw: internal error: {type(exc).__name__}") and "a bug in ropelaw" in err
    assert err.count("\n") == 1


def test_usage_error_is_the_users_exit_2(capsys, monkeypatch):
    from ropelaw.commands import exact
    from ropelaw.errors import UsageError

    def bad(args):
        raise UsageError("x.json: rope_theta must be > 1")

    monkeypatch.setattr(exact, "run", bad)
    code, out, err = run(capsys, "exact", "--dtype", "bf16", "--length", "4096")
    assert (code, out, err) == (2, "", "ropelaw: error: x.json: rope_theta must be > 1\n")


@pytest.mark.parametrize("how", ["flag", "env"])
def test_internal_error_traceback_on_request(capsys, monkeypatch, how):
    _crash(monkeypatch)
    argv = ["exact", "--dtype", "bf16", "--length", "4096"]
    if how == "flag":
        argv.append("--debug")
    else:
        monkeypatch.setenv("ROPELAW_DEBUG", "1")
    code, out, err = run(capsys, *argv)
    assert code == 3
    assert err.startswith("Traceback (most recent call last):") and "RuntimeError: something broke" in err
    assert err.splitlines()[-1].startswith("ropelaw: internal error: RuntimeError")


# -- output forgery ------------------------------------------------------------------------
def test_clean_escapes_controls_and_keeps_text():
    assert clean("rope.inv_freq  α ünïcode") == "rope.inv_freq  α ünïcode"
    assert clean(FORGE) == "x\\n::error file=FORGED,line=1::forged\\x1b[31m\\u202e"
    assert clean("a\rb\tc\x00d\x7fe\x9bf\u2028") == "a\\rb\\tc\\x00d\\x7fe\\x9bf\\u2028"
    assert clean("\udcff\udcfe.json") == "\\udcff\\udcfe.json"  # a file name that is not UTF-8


def _forged_checkpoint(tmp_path) -> str:
    name = f"{FORGE}.inv_freq"
    h = json.dumps({name: {"dtype": "BF16", "shape": [4], "data_offsets": [0, 8]}}).encode()
    p = tmp_path / "f.safetensors"
    p.write_bytes(struct.pack("<Q", len(h)) + h + b"\x80\x3f\x00\x3f\x80\x3e\x00\x3e")
    return str(p)


def _assert_not_forged(out: str, fmt: str):
    """The payload stays inside its line, escaped: no raw ESC / bidi override, no forged annotation line."""
    assert "\x1b" not in out and "\u202e" not in out
    assert not any(line.startswith("::error file=FORGED") for line in out.splitlines())
    if fmt == "github":
        assert all(line.startswith(("::error ", "::warning ", "::notice ")) for line in out.splitlines())
    else:
        assert not any(line.startswith("::") for line in out.splitlines())


@pytest.mark.parametrize("fmt", ["text", "github"])
def test_tensor_names_cannot_forge_lines(tmp_path, capsys, fmt):
    code, out, err = run(capsys, "audit", "checkpoint", _forged_checkpoint(tmp_path), "--format", fmt)
    assert code == 1 and err == ""
    _assert_not_forged(out, fmt)
    if fmt == "text":
        assert "x\\n::error file=FORGED,line=1::forged\\x1b[31m\\u202e.inv_freq" in out


@pytest.mark.parametrize("fmt", ["text", "github"])
def test_config_keys_and_file_names_cannot_forge_lines(tmp_path, capsys, fmt):
    d = tmp_path / "cfgs"
    d.mkdir()
    (d / f"{FORGE}.json").write_text(json.dumps({"hidden_size": 4096, "num_attention_heads": 32,
                                                  "rope_theta": "abc", f"{FORGE}": 1}))
    code, out, err = run(capsys, "lint", str(d), "--format", fmt)
    assert code == 1 and err == ""
    _assert_not_forged(out, fmt)


def test_error_lines_cannot_forge_lines(tmp_path, capsys):
    p = tmp_path / f"{FORGE}.json"
    p.write_text("{")
    code, out, err = run(capsys, "lint", str(p))
    assert code == 2 and err.count("\n") == 1 and "\x1b" not in err


# -- audit module: user code ---------------------------------------------------------------
USER = textwrap.dedent('''
    import sys, time, warnings
    import numpy as np
    sys.path.insert(0, {fixtures!r})
    import rotary

    def exit0():
        sys.exit(0)

    def exit_text():
        raise SystemExit("bye\\nsecond line")

    def interrupt():
        raise KeyboardInterrupt

    def multiline():
        raise ValueError("first line\\nsecond line")

    def noisy():
        warnings.warn("careful")
        np.float32(1) / np.float32(0)
        print("hello from user code")
        return rotary.legacy_buggy()

    def forever():
        while True:
            pass

    def sleeps():
        time.sleep(1000)
''')


@pytest.fixture()
def user_module(tmp_path):
    import pathlib

    fixtures = str(pathlib.Path(__file__).parent / "fixtures" / "runtime")
    p = tmp_path / "user_code.py"
    p.write_text(USER.format(fixtures=fixtures))
    return str(p)


@pytest.mark.parametrize("factory, message", [
    ("exit0", "called sys.exit(0) while being imported or run; nothing was measured"),
    ("exit_text", "called sys.exit('bye\\nsecond line') while being imported or run; nothing was measured"),
    ("interrupt", "was interrupted (KeyboardInterrupt); nothing was measured"),
    ("multiline", None),
])
def test_user_exits_and_exceptions_are_one_line(capsys, user_module, factory, message):
    pytest.importorskip("torch")
    code, out, err = run(capsys, "audit", "module", f"{user_module}:{factory}", "--length", "64")
    assert (code, out) == (2, "") and err.count("\n") == 1
    if message is not None:
        assert err == f"ropelaw: error: {user_module}:{factory} {message}\n"
    else:
        assert "first line second line" in err


@pytest.mark.parametrize("factory", ["forever", "sleeps"])
def test_timeout_stops_user_code(capsys, user_module, factory):
    pytest.importorskip("torch")
    code, out, err = run(capsys, "audit", "module", f"{user_module}:{factory}", "--timeout", "1")
    assert (code, out) == (2, "")
    assert err == f"ropelaw: error: {user_module}:{factory} did not finish within 1 s (--timeout to change)\n"


def test_warnings_and_prints_are_notes_and_json_stays_clean(capsys, user_module):
    pytest.importorskip("torch")
    code, out, err = run(capsys, "audit", "module", f"{user_module}:noisy", "--length", "64", "--format", "json")
    assert code == 0 and err == ""
    notes = json.loads(out)["notes"]
    assert "the audited code raised 2 warnings: UserWarning: careful (and 1 more)" in notes
    assert any(n.startswith("the audited code printed ") and n.endswith(" on stdout (not shown)") for n in notes)


def test_help_says_the_target_is_imported_and_run(capsys):
    with pytest.raises(SystemExit):
        main(["audit", "module", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "This IMPORTS AND RUNS the named code" in out and "with your privileges" in out
    assert "--timeout SECONDS" in out
