"""Exit codes mean what docs/usage.md says, on the streams users have (issue 30).

- ropelaw's own failure on one file of a lint is RE104 (not RE102 "Fix the syntax"), the other files
  are still linted, and the run exits 3; the finding cannot be ignored away.
- A closed stdout or stderr never gives exit 3: the command runs and its exit code still counts.
- ``PYTHONIOENCODING=ascii`` with a non-ASCII file name: the name is escaped, the findings kept.
- A full disk on stdout (``>/dev/full``) is exit 2, said on stderr.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ropelaw.cli import main

REPO = Path(__file__).resolve().parents[1]
LLAMA = REPO / "tests" / "configs" / "llama-2-7b.json"  # RL101 at --target 32768
EXE = [sys.executable, "-m", "ropelaw"]


def _boom_in_hf(monkeypatch):
    """A bug in the Hugging Face dialect's reading of Llama configs: KeyError, as torchtitan's preset once gave
    (the dialect's table replaced for the test; nothing else imports it)."""
    import dataclasses

    from ropelaw.lint.dialects import hf

    def broken(data, positions, path, fmt, overrides):
        if data.get("model_type") == "llama":
            raise KeyError("scaling_factor")
        from ropelaw.lint.loader import load_mapping

        return load_mapping(data, positions, path=path, fmt=fmt, dialect=hf.DIALECT.__class__(**{
            **{f.name: getattr(real, f.name) for f in dataclasses.fields(real)}}))

    real = hf.DIALECT
    monkeypatch.setattr(hf, "DIALECT", dataclasses.replace(real, load=broken))


def test_an_internal_error_on_one_file_is_re104_and_exit_3(tmp_path, capsys, monkeypatch):
    _boom_in_hf(monkeypatch)
    shutil.copy(LLAMA, tmp_path / "a-llama.json")
    shutil.copy(REPO / "tests" / "configs" / "falcon-7b.json", tmp_path / "b-falcon.json")
    monkeypatch.delenv("ROPELAW_DEBUG", raising=False)
    code = main(["lint", "-v", str(tmp_path), "--ignore", "RE104,RE102"])
    out, err = capsys.readouterr()
    assert code == 3, out + err
    lines = out.splitlines()
    assert any(line.startswith(f"{tmp_path / 'a-llama.json'}:1:1: RE104 internal-error ropelaw failed on this file: "
                               "KeyError: 'scaling_factor' (a bug in ropelaw") for line in lines), out
    assert "RE102" not in out and "malformed" not in out
    assert f"{tmp_path / 'b-falcon.json'}: ok" in out  # the other file was linted
    assert err == ""


def test_an_internal_error_on_the_only_file_is_exit_3_and_the_traceback_on_request(tmp_path, capsys, monkeypatch):
    _boom_in_hf(monkeypatch)
    monkeypatch.setenv("ROPELAW_DEBUG", "1")
    code = main(["lint", str(LLAMA)])
    out, err = capsys.readouterr()
    assert code == 3 and "RE104" in out
    assert "Traceback (most recent call last)" in err and "KeyError: 'scaling_factor'" in err


def _run(args, **kw):
    return subprocess.run(EXE + args, capture_output=True, text=True, timeout=120, cwd=REPO, **kw)


@pytest.mark.parametrize("args,code", [(["bound", "--d", "128", "--train", "4096", "--base", "1e6"], 0),
                                       (["lint", str(LLAMA), "--target", "32768"], 1),
                                       (["lint", str(LLAMA), "--format", "json", "--target", "32768"], 1)])
def test_closed_stdout_keeps_the_exit_code(args, code):
    proc = subprocess.run(EXE + args, stdout=None, stderr=subprocess.PIPE, text=True, timeout=120, cwd=REPO,
                          close_fds=True, preexec_fn=lambda: os.close(1))
    assert (proc.returncode, proc.stderr) == (code, "")


def test_closed_stderr_keeps_exit_2():
    proc = subprocess.run(EXE + ["lint", "no-such-file.json"], stdout=subprocess.PIPE, text=True, timeout=120,
                          cwd=REPO, preexec_fn=lambda: os.close(2))
    assert (proc.returncode, proc.stdout) == (2, "")


def test_ascii_stdout_escapes_a_non_ascii_name_and_keeps_the_findings(tmp_path):
    f = tmp_path / "r\u00e9sum\u00e9-llama.json"
    shutil.copy(LLAMA, f)
    proc = _run(["lint", str(f), "--target", "32768"], env={**os.environ, "PYTHONIOENCODING": "ascii"})
    assert proc.returncode == 1, proc.stderr
    assert f"{tmp_path}/r\\xe9sum\\xe9-llama.json:12:3: RL101 target-beyond-bound" in proc.stdout
    assert proc.stdout.splitlines()[-1] == "Found 2 findings (1 error, 1 warning) in 1 config."


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full on this system")
@pytest.mark.parametrize("fmt", ["text", "json"])
def test_a_full_disk_on_stdout_is_exit_2(fmt):
    with open("/dev/full", "w") as full:
        proc = subprocess.run(EXE + ["lint", str(LLAMA), "--target", "32768", "--format", fmt], stdout=full,
                              stderr=subprocess.PIPE, text=True, timeout=120, cwd=REPO)
    assert (proc.returncode, proc.stderr) == (2, "ropelaw: error: cannot write to standard output: "
                                                 "No space left on device\n")


def test_plan_escapes_the_names_it_prints(tmp_path, capsys):
    """plan printed the -o path and the config path raw: a newline in a file name put a forged
    ``::error`` line on stdout (lint and audit already escaped the same names)."""
    forged = "x\n::error file=FORGED,line=1::forged"
    src = tmp_path / f"in{forged}.json"
    shutil.copy(REPO / "tests" / "configs" / "llama-3.2-1b.json", src)
    out_path = tmp_path / f"out{forged}.json"
    assert main(["plan", str(src), "--target", "256k", "--apply", "yarn", "-o", str(out_path)]) == 0
    out = capsys.readouterr().out
    assert not any(line.startswith("::error") for line in out.splitlines()), out
    assert f"--- {tmp_path}/inx\\n::error file=FORGED,line=1::forged.json" in out
    assert f"wrote {tmp_path}/outx\\n::error file=FORGED,line=1::forged.json: option yarn" in out
    assert main(["plan", str(src), "--target", "256k"]) == 0
    out = capsys.readouterr().out
    assert not any(line.startswith("::error") for line in out.splitlines()), out
    assert f"read from {tmp_path}/inx\\n::error file=FORGED,line=1::forged.json (hf)" in out
    assert out_path.exists()


def test_plot_and_experiment_escape_the_paths_they_print(tmp_path, capsys, monkeypatch):
    """plot's -o and experiment's --out were printed raw ("wrote PATH"): a newline in the name put a forged
    ``::error`` line on stdout. The experiment itself is stubbed (only the printed line is under test)."""
    from ropelaw.commands import experiment
    from ropelaw.experiments import runs

    forged = "x\n::error file=FORGED,line=1::forged"
    (tmp_path / f"d{forged}").mkdir()
    out = tmp_path / f"d{forged}" / "relpos.png"
    assert main(["plot", "relpos", "-o", str(out)]) == 0
    text = capsys.readouterr().out
    assert out.exists() and not any(line.startswith("::error") for line in text.splitlines()), text
    assert text.startswith(f"wrote {tmp_path}/dx\\n::error file=FORGED,line=1::forged/relpos.png (")
    monkeypatch.setitem(runs.EXPERIMENTS, "keynorm", lambda size, **kw: {"experiment": "keynorm", "size": size.name})
    monkeypatch.setattr(runs, "render_text", lambda r: "table")
    monkeypatch.setattr(experiment, "write_outputs", lambda r, d: None)
    assert main(["experiment", "keynorm", "--smoke", "--out", str(tmp_path / f"d{forged}")]) == 0
    assert capsys.readouterr().out == (f"table\nwrote {tmp_path}/dx\\n::error "
                                       "file=FORGED,line=1::forged/keynorm-smoke.json and .png\n")
