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
