"""pytest hooks shared by the suite (kept minimal)."""

from __future__ import annotations

import sys


def pytest_terminal_summary(terminalreporter):
    """Say how many hostile cases the fuzz suite ran (issue 12), also without -s."""
    fuzz = sys.modules.get("test_hostile_fuzz")
    if fuzz is not None and sum(fuzz.RAN.values()):
        terminalreporter.write_line(fuzz.summary())
    files = sys.modules.get("test_hf_files")  # the differential over real files (its own CI step)
    for line in (files.summary() if files is not None else []):
        terminalreporter.write_line(line)
