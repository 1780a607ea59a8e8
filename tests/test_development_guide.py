"""docs/development.md's "Add a dialect" and "Add a rule" followed as written: in a temporary copy of the package, \
the page's
module is written as ``ropelaw/lint/dialects/toyfw.py`` and listed in ``MODULES``; the page's file of the made-up
framework is linted with it (in a fresh interpreter that imports the copy), and the dialect tests run against the
copy. The page and the package cannot drift apart: the code the page shows is the code that runs here.
"Add a rule" likewise: the page's rule module is written under ``ropelaw/lint/rules/``, its check listed in
``checks()``, the page's config linted (and its boundary), the rule pages regenerated and the rule tests run.
"""

from __future__ import annotations

import fnmatch
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


@pytest.fixture(scope="module")
def copy_with_toy_rule(tmp_path_factory):
    guide = section("Add a rule")
    (module,), (config,) = blocks(guide, "python"), blocks(guide, "json")
    assert "`checks()`" in guide and "python scripts/rule_pages.py" in guide
    tmp = tmp_path_factory.mktemp("guide-rule")
    for part in ("ropelaw", "scripts", "docs", "tests"):
        shutil.copytree(ROOT / part, tmp / part, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp / "pyproject.toml")
    (tmp / "ropelaw" / "lint" / "rules" / "toy.py").write_text(module, encoding="utf-8")
    check = tmp / "ropelaw" / "lint" / "check.py"
    text = check.read_text(encoding="utf-8")
    body = text[text.index("def checks()"):text.index("def model_checks()")]
    listed = re.sub(r"(from \.rules import [^\n]+)", r"\1, toy", body, count=1)
    listed = re.sub(r"(dtype\.check)\)", r"\1, toy.check)", listed, count=1)
    assert listed.count("toy") == 2, listed
    check.write_text(text.replace(body, listed), encoding="utf-8")
    (tmp / "model.json").write_text(config, encoding="utf-8")
    return tmp


def lint_json(tmp: pathlib.Path, *args: str) -> dict:
    out = run(tmp, "-m", "ropelaw", "lint", "model.json", "--format", "json", *args)
    assert out.returncode in (0, 1), out.stderr
    return json.loads(out.stdout)


def test_the_toy_rule_reports_the_guides_config(copy_with_toy_rule):
    tmp = copy_with_toy_rule
    found = [f for f in lint_json(tmp, "--select", "RL190")["findings"]]
    assert [(f["code"], f["name"], f["severity"]) for f in found] == [
        ("RL190", "toy-target-not-multiple-of-64", "info")]
    target = json.loads((tmp / "model.json").read_text())["max_position_embeddings"]
    assert found[0]["message"] == (f"the target {target:,} tokens [max_position_embeddings] is {target % 64} past a "
                                   "multiple of 64")
    assert target % 64 != 0 and found[0]["message"] in section("Add a rule").replace("\n   ", " ")
    # the guide's boundary: a multiple of 64 (127 x 64) gives no finding, one more token gives 1 past
    for length, past in ((127 * 64, None), (127 * 64 + 1, 1)):
        data = json.loads((tmp / "model.json").read_text()) | {"max_position_embeddings": length}
        (tmp / "model.json").write_text(json.dumps(data), encoding="utf-8")
        messages = [f["message"] for f in lint_json(tmp, "--select", "RL190")["findings"]]
        assert messages == ([] if past is None else [f"the target {length:,} tokens [max_position_embeddings] is "
                                                     f"{past} past a multiple of 64"])
    shown = run(tmp, "-m", "ropelaw", "rule", "RL190")
    assert shown.returncode == 0 and "the target context is not a multiple of 64 tokens" in shown.stdout


def test_the_rule_pages_and_rule_tests_follow_the_toy_rule(copy_with_toy_rule):
    tmp = copy_with_toy_rule
    stale = run(tmp, "scripts/rule_pages.py", "--check")
    assert stale.returncode == 1 and "RL190" in stale.stdout + stale.stderr  # not regenerated yet: said
    assert run(tmp, "scripts/rule_pages.py").returncode == 0
    page = (tmp / "docs" / "rules" / "RL190.md").read_text(encoding="utf-8")
    assert "toy-target-not-multiple-of-64" in page and "RL190" in (tmp / "docs" / "rules" / "index.md").read_text()
    out = run(tmp, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist", "tests/test_rule_pages.py",
              "tests/test_one_place.py")
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-2000:]
    assert " passed" in out.stdout


# -- "How the package is laid out": the map names every module, and only what exists --------------------------------
PACKAGE = ROOT / "ropelaw"
ENTRY = re.compile(r"^( *)(\S+)(?: {2,}|$)")


def package_map() -> tuple[dict[str, str], dict[str, set[str]]]:
    """The tree of the section, read as it is written: an entry is ``name/`` or ``name.py`` at two spaces more than
    its directory's entry (its description on the same line, continued on lines indented further). Returns directory
    (relative to ropelaw/, ``""`` for the top, ``"lint/layers/"``) -> its own text (its entries and their
    descriptions, without those of its subdirectories), and directory -> the names of its entries."""
    tree = blocks(section("How the package is laid out"), "")[0].splitlines()
    assert tree[0] == "ropelaw/", tree[0]
    own: dict[str, list[str]] = {"": []}
    entries: dict[str, set[str]] = {"": set()}
    stack = [(0, "")]  # (indent of the entry, directory)
    current = ""
    for line in tree[1:]:
        if line and not line[0].isspace():
            break  # scripts/ and what else lies beside the package
        m = ENTRY.match(line)
        indent = len(m.group(1)) if m else -1
        if m and indent % 2 == 0 and indent <= stack[-1][0] + 2 and m.group(2).endswith(("/", ".py")):
            while len(stack) > 1 and stack[-1][0] >= indent:
                stack.pop()
            parent, name = stack[-1][1], m.group(2)
            entries[parent].add(name)
            current = parent
            if name.endswith("/"):
                current = parent + name
                stack.append((indent, current))
                own.setdefault(current, [])
                entries.setdefault(current, set())
        own[current].append(line)
    return {d: "\n".join(lines) for d, lines in own.items()}, entries


def _named(rel: str, own: dict[str, str], entries: dict[str, set[str]]) -> bool:
    """Whether module ``rel`` (``lint/layers/observed.py``) is named: an entry of its directory; its name in its
    directory's text (``observed.py``, or bare as a list of them writes it: ``one reader each for torchtitan,
    litgpt``); its path from ropelaw/ anywhere in the tree; or a stated glob (``audit/rules/static_*.py``, or
    ``static_*.py`` in its directory's text). A package's ``__init__.py`` is its directory's entry."""
    folder, _, name = rel.rpartition("/")
    folder = folder + "/" if folder else ""
    if folder not in own:
        return False
    if name in entries[folder] or (name == "__init__.py" and folder):
        return True
    text = own[folder]
    if re.search(rf"(?<![\w/.-]){re.escape(name.removesuffix('.py'))}(\.py)?(?![\w-])", text):
        return True
    everything = "\n".join(own.values())
    if re.search(rf"(?<![\w/.-])(ropelaw/)?{re.escape(rel)}\b", everything):
        return True
    globs = [(g, "") for g in re.findall(r"[\w/]+/[\w]*\*[\w]*\.py", everything)]
    globs += [(g, folder) for g in re.findall(r"(?<![\w/])[\w]*\*[\w]*\.py", text)]
    return any(fnmatch.fnmatchcase(rel, base + g.removeprefix("ropelaw/")) for g, base in globs)


def test_the_package_map_names_every_module():
    own, entries = package_map()
    modules = sorted(p.relative_to(PACKAGE).as_posix() for p in PACKAGE.rglob("*.py"))
    assert len(modules) > 150 and "lint/layers/observed.py" in modules  # the walk sees the package
    unnamed = [m for m in modules if not _named(m, own, entries)]
    assert not unnamed, f"modules docs/development.md's package map does not name (one line each): {unnamed}"


def test_the_package_map_names_only_what_exists():
    """Every entry of the map is a file or directory of the package, and every ``x.py`` its text names in a directory
    is there (or, written as a path, exists from ropelaw/, from the repository or from that directory): a module
    moved or deleted takes its line with it."""
    own, entries = package_map()
    assert {"lint/", "lint/layers/", "audit/rules/", "methods/", "commands/"} <= set(own)
    missing = [f"{d}{n}" for d, names in entries.items() for n in names if not (PACKAGE / d / n).exists()]
    for folder, text in own.items():
        for token in re.findall(r"(?<![\w/.*<-])([\w/.-]*\w\.py)\b", text):
            where = [PACKAGE / folder / token] + ([PACKAGE / token, ROOT / token] if "/" in token else [])
            if not any(p.exists() for p in where):
                missing.append(f"{token} (in the text of {folder or 'ropelaw/'})")
    assert not missing, f"docs/development.md's package map names what is not there: {missing}"


def test_the_package_map_reader_sees_a_missing_module():
    """The reader itself: a map without observed.py's mention leaves exactly that module unnamed, and one that names
    a deleted module is refused (so the tests above cannot pass by reading nothing)."""
    own, entries = package_map()
    assert _named("lint/layers/observed.py", own, entries)
    assert _named("audit/rules/static_io.py", own, entries)  # through the stated glob audit/rules/static_*.py
    cut = dict(own, **{"lint/layers/": own["lint/layers/"].replace("observed.py", "")})
    assert not _named("lint/layers/observed.py", cut, entries)
    assert not _named("lint/layers/_generate.py", own, entries)  # moved to scripts/hf_layers.py
    assert not _named("lint/layers/_coverage.py", own, entries)  # moved to scripts/hf_coverage.py
    assert not _named("lint/nothing_here.py", own, entries)
