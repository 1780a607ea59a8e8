"""The code gates of issue 37: ruff and mypy over the project, at 0, with the rule set, the strictness and the
debt that ``pyproject.toml`` states (``[tool.ruff]``, ``[tool.mypy]``). Both are pinned in the ``test`` extra.

A debt entry that is no longer needed (a rule with no violation left, a module that checks clean) fails too, so
the stated debt is the real one.
"""

from __future__ import annotations

import fnmatch
import pathlib
import re
import subprocess
import sys
import tomllib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
CONFIG = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def _tool(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, timeout=900)


def test_ruff_passes_with_the_stated_rules():
    pytest.importorskip("ruff", reason="ruff is in the test extra: pip install -e '.[test]'")
    done = _tool("ruff", "check", "--no-cache", "--output-format", "concise", ".")
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]


def test_ruff_debt_is_real():
    """Every ignored rule still has a violation, and every per-file ignore still has one in a file its pattern
    matches: checked with the debt list and the per-file ignores off, one run."""
    pytest.importorskip("ruff", reason="ruff is in the test extra")
    debt = CONFIG["tool"]["ruff"]["lint"].get("ignore", [])  # absent: no rule is debt
    per_file = CONFIG["tool"]["ruff"]["lint"]["per-file-ignores"]
    rules = sorted(set(debt).union(*per_file.values()))
    done = _tool("ruff", "check", "--no-cache", "--output-format", "concise", "--config", "lint.ignore = []",
                 "--config", "lint.per-file-ignores = {}", "--select", ",".join(rules), ".")
    # concise lines: path:line:col: CODE message (a notebook's path is followed by "cell N:")
    found = [m.groups() for m in map(re.compile(r"^(.+?):(?:cell \d+:)?\d+:\d+: ([A-Z]+\d+) ").match,
                                      done.stdout.splitlines()) if m]
    seen = {code for _, code in found}
    assert set(debt) <= seen, f"rules at 0 still listed as debt in pyproject.toml: {sorted(set(debt) - seen)}"
    stale = [(pattern, rule) for pattern, listed in per_file.items() for rule in listed
             if not any(code == rule and fnmatch.fnmatch(path, pattern) for path, code in found)]
    assert not stale, f"per-file ignores in pyproject.toml with no violation left: {stale}"


def test_mypy_at_zero_outside_the_stated_debt(tmp_path):
    """mypy with pyproject's settings but its debt overrides off, once: no error outside the debt modules (what
    ``mypy`` with the overrides passes), and every debt module still has one (the list is the real debt)."""
    pytest.importorskip("mypy", reason="mypy is in the test extra: pip install -e '.[test]'")
    mypy = CONFIG["tool"]["mypy"]
    debt = [m for o in mypy.get("overrides", []) if o.get("ignore_errors") for m in o["module"]]
    lines = [f"{k} = {v!r}".replace("'", '"').replace("True", "true") for k, v in mypy.items() if k != "overrides"]
    (tmp_path / "mypy.toml").write_text("[tool.mypy]\n" + "\n".join(lines) + "\n", encoding="utf-8")
    done = _tool("mypy", "--config-file", str(tmp_path / "mypy.toml"), "--cache-dir", str(ROOT / ".mypy_cache"))
    failing: dict[str, list[str]] = {}
    for line in done.stdout.splitlines():
        path = line.partition(":")[0]
        if path.endswith(".py") and ": error:" in line:
            failing.setdefault(path[:-3].replace("/", ".").removesuffix(".__init__"), []).append(line)
    assert done.returncode in (0, 1) and "Traceback" not in done.stderr, done.stderr[-2000:]
    new = [e for m, errors in sorted(failing.items()) if m not in debt for e in errors]
    assert not new, "\n".join(new[:40])
    assert set(debt) <= set(failing), (
        f"modules that check clean, still listed as debt: {sorted(set(debt) - set(failing))}")
