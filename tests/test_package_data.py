"""What users install: the sdist and the wheel built from it carry every file of the package.

pre-commit installs the hook repository with ``pip install .`` and users install the wheel, so a
file that the package reads at run time but the build leaves out (the lint presets were: 23 of the
corpus's configs exited 2 from an installed wheel) breaks only outside an editable checkout. This
test builds the sdist, then the wheel from that sdist (``python -m build``, as a release is made),
from exactly the files git holds, and compares both with ``git ls-files ropelaw``: every tracked
file under ``ropelaw/`` must be in both, whatever its suffix, wherever it lives (issue 37 moves the
generated tables to ``ropelaw/data/``; the rule is MANIFEST.in's ``graft ropelaw``).
"""

from __future__ import annotations

import os
import pathlib
import shutil
import subprocess
import sys
import tarfile
import zipfile

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _tracked() -> list[str]:
    """The files git holds in this checkout (committed or added, and new files not ignored)."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout: the package's file list is git's (CI runs on a clean clone)")
    out = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                         check=True, capture_output=True).stdout.decode("utf-8", "surrogateescape")
    return sorted(p for p in out.split("\0") if p and (ROOT / p).is_file())


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> tuple[set[str], set[str], list[str]]:
    """(files in the sdist under its top folder, files in the wheel, tracked files) of a build of
    the tracked tree; ``--no-isolation`` uses this venv's setuptools and build ([test] pins them)."""
    tracked = _tracked()
    src = tmp_path_factory.mktemp("src")
    for rel in tracked:
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / rel, src / rel)
    dist = tmp_path_factory.mktemp("dist")
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    run = subprocess.run([sys.executable, "-m", "build", "--no-isolation", "--outdir", str(dist), str(src)],
                         capture_output=True, text=True, env=env)
    assert run.returncode == 0, f"python -m build failed:\n{run.stdout[-3000:]}\n{run.stderr[-3000:]}"
    (sdist,) = dist.glob("*.tar.gz")
    (wheel,) = dist.glob("*.whl")
    with tarfile.open(sdist) as t:
        in_sdist = {m.name.split("/", 1)[1] for m in t.getmembers() if m.isfile() and "/" in m.name}
    with zipfile.ZipFile(wheel) as z:
        in_wheel = {n for n in z.namelist() if not n.endswith("/")}
    return in_sdist, in_wheel, tracked


def test_every_file_of_the_package_is_in_the_sdist_and_the_wheel(built):
    in_sdist, in_wheel, tracked = built
    package = [p for p in tracked if p.startswith("ropelaw/")]
    data = [p for p in package if not p.endswith(".py")]
    assert "ropelaw/py.typed" in data and any(p.endswith(".json") for p in data), data  # the test sees data files
    assert {"ropelaw/data/hf_defaults.json", "ropelaw/data/hf_layers.json"} <= set(data), data  # read at run time
    missing_sdist = [p for p in package if p not in in_sdist]
    missing_wheel = [p for p in package if p not in in_wheel]
    assert not missing_sdist, f"tracked under ropelaw/ but not in the sdist: {missing_sdist}"
    assert not missing_wheel, f"tracked under ropelaw/ but not in the wheel built from the sdist: {missing_wheel}"


def test_the_wheel_holds_only_the_package(built):
    """Nothing untracked or compiled rides along (a stray __pycache__ or a scratch file of a checkout)."""
    _, in_wheel, tracked = built
    extra = sorted(n for n in in_wheel if not n.startswith("ropelaw-") and n not in set(tracked))
    assert not extra, f"in the wheel but not tracked by git: {extra}"
