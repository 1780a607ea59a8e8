"""pytest hooks shared by the suite (kept minimal)."""

from __future__ import annotations

import os
import sys

import pytest


@pytest.fixture(autouse=True)
def _reports_uncoloured(monkeypatch):
    """Text reports are compared byte for byte: a runner's FORCE_COLOR would colour them (ropelaw/colour.py)."""
    monkeypatch.delenv("FORCE_COLOR", raising=False)


def pytest_terminal_summary(terminalreporter):
    """Say how many hostile cases the fuzz suite ran (issue 12), also without -s."""
    fuzz = sys.modules.get("test_hostile_fuzz")
    if fuzz is not None and sum(fuzz.RAN.values()):
        terminalreporter.write_line(fuzz.summary())
    files = sys.modules.get("test_hf_files")  # the differential over real files (its own CI step)
    for line in (files.summary() if files is not None else []):
        terminalreporter.write_line(line)


def pytest_sessionfinish(session, exitstatus):
    """With ``ROPELAW_REQUIRE_RUN=1`` (``.ci/run`` exports it), a run that collected tests but passed none fails.

    Each CI step is one pytest run over tests that skip when their download or runtime is missing; a step
    whose every test skipped (a wheel that moved, an import that broke) would otherwise be green while
    checking nothing. Exit code 5 (nothing collected) is left to the caller, as pytest reports it.
    """
    if os.environ.get("ROPELAW_REQUIRE_RUN") != "1" or hasattr(session.config, "workerinput"):
        return  # xdist workers: the controller sees every worker's results
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if exitstatus == 0 and reporter is not None and not reporter.stats.get("passed"):
        reporter.write_line("ROPELAW_REQUIRE_RUN=1: tests ran but none passed (all skipped or deselected): "
                            "this step checked nothing", red=True)
        session.exitstatus = 1
