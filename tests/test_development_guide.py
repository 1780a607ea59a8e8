"""docs/development.md's "Add a dialect" followed as written: in a temporary copy of the package, the page's
module is written as ``ropelaw/lint/dialects/toyfw.py`` and listed in ``MODULES``; the page's file of the made-up
framework is linted with it (in a fresh interpreter that imports the copy), and the dialect tests run against the
copy. The page and the package cannot drift apart: the code the page shows is the code that runs here.
"""

from __future__ import annotations

import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import textwrap

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
GUIDE = ROOT / "docs" / "development.md"


def section(title: str) -> str:
    text = GUIDE.read_text(encoding="utf-8")
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start:end if end > 0 else len(text)]


def blocks(text: str, lang: str) -> list[str]:
    """The fenced ``lang`` blocks of ``text`` (indented under a list item or not), dedented."""
    return [textwrap.dedent(m.group(2)) for m in re.finditer(rf"(?m)^( *)```{lang}\n(.*?)^\1```$", text, re.S)]


@pytest.fixture(scope="module")
def copy_with_toy_dialect(tmp_path_factory):
    guide = section("Add a dialect")
    (module,), (config,) = blocks(guide, "python"), blocks(guide, "yaml")
    assert "ropelaw/lint/dialects/<name>.py" in guide and "`MODULES`" in guide
    tmp = tmp_path_factory.mktemp("guide")
    shutil.copytree(ROOT / "ropelaw", tmp / "ropelaw", ignore=shutil.ignore_patterns("__pycache__"))
    (tmp / "ropelaw" / "lint" / "dialects" / "toyfw.py").write_text(module, encoding="utf-8")
    init = tmp / "ropelaw" / "lint" / "dialects" / "__init__.py"
    text = init.read_text(encoding="utf-8")
    listed = re.sub(r"(MODULES = \((?:[^)]*))\)", r'\1, "toyfw")', text, count=1)
    assert listed != text
    init.write_text(listed, encoding="utf-8")
    (tmp / "toy.yaml").write_text(config, encoding="utf-8")
    return tmp


def run(tmp: pathlib.Path, *args: str) -> subprocess.CompletedProcess:
    """A fresh interpreter in ``tmp``, which imports the copy there (its working directory and PYTHONPATH)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"} | {"PYTHONPATH": str(tmp)}
    return subprocess.run([sys.executable, *args], cwd=tmp, env=env, capture_output=True, text=True, timeout=600)


def test_the_toy_dialect_reads_the_toy_config(copy_with_toy_dialect):
    tmp = copy_with_toy_dialect
    where = run(tmp, "-c", "import ropelaw, sys; print(ropelaw.__file__)")
    assert where.stdout.strip() == str(tmp / "ropelaw" / "__init__.py"), where.stderr
    out = run(tmp, "-m", "ropelaw", "lint", "toy.yaml", "--format", "json")
    assert out.returncode in (0, 1), out.stderr
    config = json.loads(out.stdout)["configs"][0]
    derived = config["derived"]
    assert config["architecture"] == "toyfw" and config["kind"] == "training"
    assert (derived["d"]["value"], derived["d"]["from"]) == (128, "toyfw.head_dim")
    assert (derived["base"]["value"], derived["base"]["from"]) == (500000, "toyfw.rope_base")
    assert (derived["train_len"]["value"], derived["train_len"]["from"]) == (8192, "toyfw.seq_len")
    # the framework default when the key is absent, said as such
    (tmp / "toy.yaml").write_text("toyfw:\n  head_dim: 64\n  seq_len: 2048\n", encoding="utf-8")
    config = json.loads(run(tmp, "-m", "ropelaw", "lint", "toy.yaml", "--format", "json").stdout)["configs"][0]
    assert config["derived"]["base"] == {"value": 10000, "from": "rope_base: toyfw==1.0 toyfw/config.py ModelConfig "
                                         "default", "line": None, "column": None}


def test_the_dialect_tests_pass_with_the_toy_dialect(copy_with_toy_dialect):
    """The registry's own tests (one dialect per module, hf first; each framework's fixture still picks its own
    dialect; a config.json and a launch script still go to hf and megatron) run against the copy that lists toyfw."""
    tmp = copy_with_toy_dialect
    shutil.copytree(ROOT / "tests", tmp / "tests", ignore=shutil.ignore_patterns("__pycache__"),
                    dirs_exist_ok=True)
    shutil.copy(ROOT / "pyproject.toml", tmp / "pyproject.toml")
    out = run(tmp, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_lint_dialects.py",
              "-k", "one_dialect_per_module or picked_by_its_score or read_by_the")
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-2000:]
    assert " passed" in out.stdout
