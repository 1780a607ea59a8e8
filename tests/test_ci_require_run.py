"""CI's guard against a step that checks nothing (tests/conftest.py ``pytest_sessionfinish``).

``.ci/run`` exports ``ROPELAW_REQUIRE_RUN=1``: a pytest run whose collected tests all skip exits 1, so a CI
step whose download or runtime went missing turns red instead of green. Checked here by running pytest itself
on a scratch directory holding this suite's conftest.
"""

from __future__ import annotations

import os
import pathlib
import shutil
import subprocess
import sys

import pytest

CONFTEST = pathlib.Path(__file__).with_name("conftest.py")


def _pytest(tmp_path: pathlib.Path, tests: dict[str, str], require: bool) -> subprocess.CompletedProcess:
    shutil.copy(CONFTEST, tmp_path / "conftest.py")
    for name, body in tests.items():
        (tmp_path / name).write_text(body)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ROPELAW_REQUIRE_RUN", "PYTEST_"))}
    if require:
        env["ROPELAW_REQUIRE_RUN"] = "1"
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
                           "-p", "no:randomly", str(tmp_path)], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=300)


SKIPS = "import pytest\n\ndef test_needs_a_download():\n    pytest.skip('no wheel')\n"
PASSES = "def test_checks_something():\n    assert 1 + 1 == 2\n"


@pytest.mark.parametrize("require, tests, code", [
    (True, {"test_s.py": SKIPS}, 1),                       # every test skipped: the step checked nothing
    (False, {"test_s.py": SKIPS}, 0),                      # outside CI, pytest's own verdict
    (True, {"test_s.py": SKIPS, "test_p.py": PASSES}, 0),  # one test passed: pytest's verdict stands
])
def test_a_run_that_passes_nothing_fails_in_ci(tmp_path, require, tests, code):
    done = _pytest(tmp_path, tests, require)
    assert done.returncode == code, done.stdout + done.stderr
    assert ("this step checked nothing" in done.stdout) == (code == 1)


def test_every_real_files_test_is_run_by_a_ci_step():
    """Each test file that gates a test on the real-files step (the ``hf_compare`` decorator, or the variable
    itself; README's suite skips them) is named by ``.ci/run``'s real_files or changed_files step, which runs it
    under both versions; else nothing would run it."""
    repo = CONFTEST.parents[1]
    marks = ("@hf_compare.REAL_FILES_STEP", '"ROPELAW_HF_FILES"')
    gated = sorted(p.relative_to(repo).as_posix() for p in (repo / "tests").rglob("test_*.py")
                   if p.name != pathlib.Path(__file__).name and any(m in p.read_text() for m in marks))
    run = (repo / ".ci" / "run").read_text()
    steps = run[run.index("real_files() {"):run.index("}", run.index("changed_files() {"))]
    assert len(gated) >= 10, gated
    assert [p for p in gated if p not in steps] == []
