"""The diff ``plan --apply --dry-run`` prints (``ropelaw.lint.writers.unified_diff``) is a unified diff as GNU
``diff -u`` writes it and ``patch`` applies it.

The independent references are the GNU tools themselves (diffutils ``diff -u``, GNU ``patch``), run on the same
texts: a file without a final newline gets ``\\ No newline at end of file`` after its last line (before, difflib's
unterminated last line ran into the next line of the diff: ``-old+new`` on one line), and lines end at ``\\n`` only
(``str.splitlines`` also breaks at a lone ``\\r``, form feed, ``\\u2028``, which ``patch`` does not). Skipped, naming
the tool, where ``diff`` or ``patch`` is not installed.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from ropelaw.lint.writers import unified_diff

needs_diff = pytest.mark.skipif(shutil.which("diff") is None, reason="GNU diff (diffutils) is not installed")
needs_patch = pytest.mark.skipif(shutil.which("patch") is None, reason="GNU patch is not installed")

ONE = '{"rope_theta": 10000.0, "max_position_embeddings": 4096}'
ONE_NEW = '{"rope_theta": 10000.0, "max_position_embeddings": 32768}'
MANY = '{\n  "model_type": "llama",\n  "rope_theta": 10000.0,\n  "max_position_embeddings": 4096\n}'
MANY_NEW = '{\n  "model_type": "llama",\n  "rope_theta": 10000.0,\n  "max_position_embeddings": 32768\n}'
CASES = {
    "one-line-no-newline": (ONE, ONE_NEW),
    "no-newline-either": (MANY, MANY_NEW),
    "newline-added": (MANY, MANY_NEW + "\n"),
    "newline-dropped": (MANY + "\n", MANY_NEW),
    "both-newline": (MANY + "\n", MANY_NEW + "\n"),
    "crlf-no-newline": (MANY.replace("\n", "\r\n"), MANY_NEW.replace("\n", "\r\n")),
    "separators-inside-lines": ('{\n  "note": "a\u2028b\x0cc\rd",\n  "max_position_embeddings": 4096\n}',
                                '{\n  "note": "a\u2028b\x0cc\rd",\n  "max_position_embeddings": 32768\n}'),
}


def write(path, text: str) -> None:
    path.write_bytes(text.encode("utf-8"))


def gnu_diff(tmp_path, old: str, new: str, n: int) -> str:
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    write(a, old)
    write(b, new)
    done = subprocess.run(["diff", f"-U{n}", str(a), str(b)], capture_output=True)
    assert done.returncode == 1, done.stderr  # 1: the files differ
    return done.stdout.decode("utf-8")


def hunks(diff: str) -> str:
    """The diff from its first hunk on (GNU diff's header names the files and their times)."""
    return diff[diff.index("@@"):]


@needs_diff
@pytest.mark.parametrize("n", [1, 3])
@pytest.mark.parametrize("case", sorted(CASES))
def test_the_diff_is_gnu_diffs(case, n, tmp_path):
    """Byte for byte the hunks of ``diff -U n`` on the same two texts, the no-newline markers included."""
    old, new = CASES[case]
    ours = unified_diff(old, new, "a.json", "b.json", n=n)
    assert ours.startswith("--- a.json\n+++ b.json\n@@ ")
    assert hunks(ours) == hunks(gnu_diff(tmp_path, old, new, n)), ours
    assert ours.endswith("\n") and all(x[:1] in "-+ @\\" for x in ours.split("\n")[2:-1]), ours
    assert ("\\ No newline at end of file\n" in ours) == (not (old.endswith("\n") and new.endswith("\n")))


@needs_patch
@pytest.mark.parametrize("case", sorted(CASES))
def test_patch_applies_the_diff(case, tmp_path):
    """GNU ``patch`` turns the old text into the new one, byte for byte, with the diff ropelaw prints."""
    old, new = CASES[case]
    target = tmp_path / "config.json"
    write(target, old)
    done = subprocess.run(["patch", "--binary", "-s", "-o", str(tmp_path / "out.json"), str(target)],
                          input=unified_diff(old, new, "config.json", "config.json", n=1).encode("utf-8"),
                          capture_output=True)
    assert done.returncode == 0, (done.stdout, done.stderr)
    assert (tmp_path / "out.json").read_bytes() == new.encode("utf-8")


@needs_patch
@pytest.mark.parametrize("indent", [None, 2], ids=["one-line", "indented"])
def test_dry_run_diff_applies_to_a_file_without_final_newline(indent, tmp_path):
    """``ropelaw plan --apply linear --dry-run`` on a config.json without a final newline: the diff it prints, fed
    to ``patch``, gives exactly the file ``-o`` writes."""
    cfg = {"model_type": "llama", "hidden_size": 256, "num_attention_heads": 4, "rope_theta": 10000.0,
           "max_position_embeddings": 4096}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg, indent=indent))  # no final newline

    def plan(*extra):
        return subprocess.run([sys.executable, "-m", "ropelaw", "plan", str(path), "--train", "4096", "--target",
                               "32768", "--apply", "linear", *extra], capture_output=True, text=True,
                              env={**os.environ, "ROPELAW_HF_SEMANTICS": "5.23.0"})

    dry = plan("--dry-run")
    assert dry.returncode == 0, dry.stderr
    lines = dry.stdout.splitlines(keepends=True)
    start = next(i for i, x in enumerate(lines) if x.startswith("--- "))
    end = next(i for i, x in enumerate(lines) if x.startswith("nothing written"))
    diff = "".join(lines[start:end])
    assert "\\ No newline at end of file\n" in diff
    assert all(x[:1] in "-+ @\\" for x in diff.splitlines()), diff  # no line run into another
    out = tmp_path / "out.json"
    assert plan("-o", str(out)).returncode == 0
    if shutil.which("patch") is None:
        pytest.skip("GNU patch is not installed")
    done = subprocess.run(["patch", "--binary", "-s", "-o", str(tmp_path / "patched.json"), str(path)],
                          input=diff.encode("utf-8"), capture_output=True)
    assert done.returncode == 0, (done.stdout, done.stderr)
    assert (tmp_path / "patched.json").read_bytes() == out.read_bytes()
