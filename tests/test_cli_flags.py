"""Repeated list flags accumulate on every command that has them, as ruff's do (issue 30).

``ropelaw lint --select RV --select RL`` kept only the last flag and said "All checks passed" where
``--select RL,RV`` found 2 findings. lint and audit code now share one parser of rule selection
(``commands._common.add_rule_selection`` / ``rule_selection``): --select, --extend-select and
--ignore, each repeatable and comma-separated.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ropelaw.cli import main

REPO = Path(__file__).resolve().parents[1]
LLAMA = str(REPO / "tests" / "configs" / "llama-2-7b.json")  # RL101 + RL103 at --target 32768
STATIC = str(REPO / "tests" / "fixtures" / "static")


def _codes(capsys, argv) -> tuple[int, list[str]]:
    code = main(argv)
    out = capsys.readouterr().out
    return code, sorted({line.split(": ")[1].split()[0] for line in out.splitlines()
                         if line.startswith("/") and ": R" in line})


@pytest.mark.parametrize("flags", [["--select", "RL"], ["--select", "RV", "--select", "RL"], ["--select", "RV,RL"],
                                   ["--select", "RL101", "--select", "RL103"], ["--select", "RL101,RL103"]])
def test_lint_select_accumulates(capsys, flags):
    assert _codes(capsys, ["lint", LLAMA, "--target", "32768", *flags]) == (1, ["RL101", "RL103"])


@pytest.mark.parametrize("flags", [["--ignore", "RL101", "--ignore", "RL103"], ["--ignore", "RL101,RL103"]])
def test_lint_ignore_accumulates(capsys, flags):
    assert _codes(capsys, ["lint", LLAMA, "--target", "32768", *flags]) == (0, [])


def test_lint_extend_select_adds_to_the_default_set(capsys):
    """RL103 within the training length is informational, hidden by default; --extend-select shows it
    and keeps the default rules (RL101 at 32,768 still reported)."""
    assert _codes(capsys, ["lint", LLAMA]) == (0, [])
    assert _codes(capsys, ["lint", LLAMA, "--extend-select", "RL103"]) == (1, ["RL103"])
    assert _codes(capsys, ["lint", LLAMA, "--target", "32768", "--extend-select", "RP201", "--extend-select",
                           "RL104"]) == (1, ["RL101", "RL103", "RP201"])  # RP201 (off by default) added


def test_audit_code_select_accumulates(capsys):
    both = _codes(capsys, ["audit", "code", STATIC, "--select", "RP101,RP102"])
    assert both[1] and set(both[1]) <= {"RP101", "RP102"}
    assert _codes(capsys, ["audit", "code", STATIC, "--select", "RP101", "--select", "RP102"]) == both
    one = _codes(capsys, ["audit", "code", STATIC, "--select", "RP101,RP102", "--ignore", "RP102"])
    assert one[1] == ["RP101"]
    assert _codes(capsys, ["audit", "code", STATIC, "--select", "RP101", "--extend-select", "RP102"]) == both


@pytest.mark.parametrize("command", [["lint", LLAMA], ["audit", "code", STATIC]])
@pytest.mark.parametrize("flag", ["--select", "--extend-select", "--ignore"])
def test_an_unknown_code_in_any_repeat_is_bad_input(capsys, command, flag):
    assert main([*command, flag, "RL101", flag, "XX9"]) == 2
    assert "'XX9' is not a rule code or prefix" in capsys.readouterr().err
