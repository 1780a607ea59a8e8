"""Directory scans and line lookups that never pass what they did not analyse (issue 23).

`audit code DIR` and `lint DIR` walk iteratively (any depth), report every directory they could
not enter (RE005 / RE103: unreadable, a path over PATH_MAX, a symbolic link not followed), refuse
a directory with nothing to check (exit 2), keep scanning past one bad file, and say in the
summary what was not analysed. `# noqa` is looked up on the line Python numbers (a form feed or
U+2028 is not a line break in Python). Expected values are written from the definitions: the
fixture RP101 file's finding line found by a text search, the files created here.
"""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path

import pytest

from ropelaw.cli import main

HERE = Path(__file__).resolve().parent
BUGGY = (HERE / "fixtures" / "static" / "rp101_positions_in_buffer_dtype.py").read_text()
HEAD = {"hidden_size": 4096, "num_attention_heads": 32, "rope_theta": 10000, "max_position_embeddings": 4096}


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def _rp101_line(text: str) -> int:
    """The line of the RP101 finding in the fixture: `torch.arange(...)` in the buffer's dtype."""
    return next(i for i, ln in enumerate(text.split("\n"), 1) if "torch.arange(" in ln and "dtype=self" in ln)


# -- # noqa on Python's own lines -------------------------------------------------------------
@pytest.mark.parametrize("sep", ["\f", "\u2028", "\x1c", "\x85", "\x1d\x1e"])
def test_a_non_python_line_break_before_the_code_keeps_the_finding(tmp_path, capsys, sep):
    # U+2028 etc. inside a comment: legal Python, not a line break for Python's tokenizer
    src = f"# header{sep}comment\n" + BUGGY
    p = tmp_path / "m.py"
    p.write_text(src, encoding="utf-8")
    line = _rp101_line(src)
    # the line before the finding carries a noqa for RP101: it must not be taken for the finding's
    lines = src.split("\n")
    lines[line - 2] += "  # noqa: RP101"
    p.write_text("\n".join(lines), encoding="utf-8")
    code, out, err = run(capsys, "audit", "code", p, "--select", "RP101")
    assert code == 1 and f"m.py:{line}:" in out, out  # without the fix this finding disappeared
    lines[line - 1] += "  # noqa: RP101"  # on the finding's own line it applies
    p.write_text("\n".join(lines), encoding="utf-8")
    code, out, err = run(capsys, "audit", "code", p, "--select", "RP101")
    assert f"m.py:{line}:" not in out, out


# -- directories that cannot be entered -------------------------------------------------------
def _tree(root: Path, make) -> None:
    (root / "ok").mkdir(parents=True)
    make(root)


def test_symlinked_directory_is_reported_not_passed(tmp_path, capsys):
    target = tmp_path / "elsewhere"
    target.mkdir()
    (target / "m.py").write_text(BUGGY)
    (tmp_path / "scan").mkdir()
    (tmp_path / "scan" / "clean.py").write_text("x = 1\n")
    (tmp_path / "scan" / "link").symlink_to(target, target_is_directory=True)
    code, out, err = run(capsys, "audit", "code", tmp_path / "scan")
    assert code == 1 and err == ""
    assert f"{tmp_path / 'scan' / 'link'}:1:1: RE005 directory-not-scanned not scanned: a symbolic link to a " \
           "directory, not followed" in out
    assert out.rstrip().endswith("in 1 file (1 directory not scanned).")
    (tmp_path / "cfg").mkdir()
    (tmp_path / "cfg" / "c.json").write_text(json.dumps(HEAD))
    (target / "c.json").write_text(json.dumps(HEAD))
    (tmp_path / "cfg" / "more").symlink_to(target, target_is_directory=True)
    code, out, err = run(capsys, "lint", tmp_path / "cfg")
    assert code == 1 and "RE103 config-directory-not-scanned not scanned: a symbolic link" in out


def test_unlistable_directory_is_reported(tmp_path, capsys, monkeypatch):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "m.py").write_text("x = 1\n")
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "m.py").write_text(BUGGY)
    real = os.scandir

    def scandir(path="."):  # as for a directory of mode 000 to a user who is not root
        if str(path).endswith("/b"):
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        return real(path)
    monkeypatch.setattr(os, "scandir", scandir)
    code, out, err = run(capsys, "audit", "code", tmp_path)
    assert code == 1
    assert f"{tmp_path / 'b'}:1:1: RE005 directory-not-scanned not scanned: cannot list the directory: " \
           "Permission denied" in out


def test_paths_over_path_max_are_reported(tmp_path, capsys):
    fd = os.open(tmp_path, os.O_RDONLY)
    depth, name = 0, "d" * 200
    try:
        while depth * 201 < 4200:  # nest until the absolute path exceeds PATH_MAX (4,096 on Linux)
            os.mkdir(name, dir_fd=fd)
            new = os.open(name, os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = new
            depth += 1
        with open(os.open("m.py", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd), "w") as fh:
            fh.write(BUGGY)
    finally:
        os.close(fd)
    (tmp_path / "top.py").write_text("x = 1\n")
    code, out, err = run(capsys, "audit", "code", tmp_path)
    assert code == 1 and "RE005 directory-not-scanned" in out and "longer than the system allows" in out


def test_deep_trees_are_walked_iteratively(tmp_path, capsys):
    fd = os.open(tmp_path, os.O_RDONLY)
    try:
        for _ in range(1100):  # os.walk raised RecursionError here (exit 3)
            os.mkdir("d", dir_fd=fd)
            new = os.open("d", os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = new
    finally:
        os.close(fd)
    (tmp_path / "m.py").write_text(BUGGY)
    (tmp_path / "c.json").write_text(json.dumps(HEAD))
    (tmp_path / ("d/" * 1100) / "deep.py").write_text(BUGGY)
    code, out, err = run(capsys, "audit", "code", tmp_path, "--select", "RP101")
    assert code == 1 and err == "" and "RE005" not in out
    assert {Path(ln.split(":")[0]).name for ln in out.splitlines() if " RP101 " in ln} == {"m.py", "deep.py"}
    code, out, err = run(capsys, "lint", tmp_path)
    assert code == 0 and err == "" and out.rstrip().endswith("no findings in 1 config.")
    import hostile_cases

    hostile_cases.remove_tree(tmp_path / "d")  # shutil.rmtree (pytest's clean-up) recurses per level


def test_a_directory_with_nothing_to_check_is_bad_input(tmp_path, capsys):
    (tmp_path / "README.md").write_text("# x\n")
    code, out, err = run(capsys, "audit", "code", tmp_path)
    assert (code, out) == (2, "") and err == f"ropelaw: error: no Python files found in {tmp_path}\n"
    code, out, err = run(capsys, "lint", tmp_path)
    assert (code, out) == (2, "") and err == f"ropelaw: error: no config files found in {tmp_path}\n"


# -- one bad file never stops the scan -----------------------------------------------------------
def test_one_malformed_interpolation_is_that_files_finding(tmp_path, capsys):
    good = "".join(f"{k}: {v}\n" for k, v in HEAD.items())
    (tmp_path / "a.yaml").write_text(good.replace("max_position_embeddings: 4096", "max_position_embeddings: 32768"))
    (tmp_path / "b.yaml").write_text(good + "rope_scaling:\n  factor: ${a.²}\n  type: linear\na: [1, 2]\n")
    (tmp_path / "c.yaml").write_text(good)
    code, out, err = run(capsys, "lint", tmp_path, "--format", "json")
    doc = json.loads(out)
    assert code == 1 and err == ""
    assert [Path(c["path"]).name for c in doc["configs"]] == ["a.yaml", "b.yaml", "c.yaml"]
    b = next(f for f in doc["findings"] if f["path"].endswith("b.yaml"))
    assert b["code"] == "RV018" and "no key a.²" in b["message"]


def test_an_acyclic_chain_of_interpolations_resolves(tmp_path, capsys):
    chain = "".join(f"k{i}: ${{k{i + 1}}}\n" for i in range(40)) + "k40: 500000\n"
    (tmp_path / "c.yaml").write_text("".join(f"{k}: {v}\n" for k, v in HEAD.items() if k != "rope_theta")
                                     + "rope_theta: ${k0}\n" + chain)
    code, out, err = run(capsys, "lint", tmp_path / "c.yaml", "--format", "json")
    doc = json.loads(out)
    assert doc["configs"][0]["derived"]["base"]["value"] == 500000, out
    (tmp_path / "c.yaml").write_text("".join(f"{k}: {v}\n" for k, v in HEAD.items() if k != "rope_theta")
                                     + "rope_theta: ${k0}\nk0: ${k1}\nk1: ${k2}\nk2: ${k0}\n")
    code, out, err = run(capsys, "lint", tmp_path / "c.yaml")
    assert code == 1 and "RV018" in out and "cycle" in out


def test_summary_says_what_was_not_analysed(tmp_path, capsys):
    (tmp_path / "bad.py").write_text("def f(:\n")
    (tmp_path / "good.py").write_text("x = 1\n")
    code, out, err = run(capsys, "audit", "code", tmp_path)
    assert code == 1 and out.rstrip().endswith("Found 1 finding (1 error) in 2 files (1 not analysed).")


def test_lint_json_is_streamed_one_config_per_line(tmp_path, capsys):
    for i in range(3):
        (tmp_path / f"c{i}.json").write_text(json.dumps(dict(HEAD, max_position_embeddings=4096 * (i + 1))))
    code, out, err = run(capsys, "lint", tmp_path, "--format", "json")
    doc = json.loads(out)
    assert doc["summary"]["configs"] == 3 and len(doc["configs"]) == 3
    assert sum(1 for ln in out.splitlines() if ln.startswith('    {"path": ')) == 3
