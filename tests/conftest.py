"""pytest hooks shared by the suite (kept minimal)."""

from __future__ import annotations

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
