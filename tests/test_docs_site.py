"""The documentation site's links and navigation, checked without mkdocs.

CI builds the site with ``mkdocs build --strict`` (.ci/run, the ``docs`` extra), which fails on
any broken link or anchor; this test makes the same checks in every test run, so a landing that
breaks a link fails here first. Links are checked as GitHub resolves them (README.md at the
repository root links to ``docs/<page>.md``; a page links relative to its own folder) and anchors
by GitHub's heading ids, which mkdocs.yml's ``toc`` slugify reproduces on the site.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
_spec = importlib.util.spec_from_file_location("mkdocs_hooks", ROOT / "scripts" / "mkdocs_hooks.py")
hooks = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(hooks)

PAGES = sorted(DOCS.rglob("*.md"))
SOURCES = [ROOT / "README.md", *PAGES]
# inline links and images; reference-style links are not used in these pages
LINK = re.compile(r"(!?)\[((?:[^\]`]|`[^`]*`)*)\]\(([^)\s]+)\)")


def _prose(text: str) -> str:
    """The text outside fenced code blocks (links and headings in code are not links)."""
    out, fence = [], None
    for line in text.splitlines():
        stripped = line.lstrip()
        if fence is None and (stripped.startswith("```") or stripped.startswith("~~~")):
            fence = stripped[:3]
            out.append("")
        elif fence is not None and stripped.startswith(fence):
            fence = None
            out.append("")
        else:
            out.append("" if fence else line)
    return "\n".join(out)


def github_slug(heading: str) -> str:
    """GitHub's id of a heading: the rendered text lowercased, punctuation dropped, spaces to '-'."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link shows its text
    text = re.sub(r"<[^>]+>", "", text).replace("`", "").replace("\\", "").strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    ids: set[str] = set()
    seen: dict[str, int] = {}
    for line in _prose(path.read_text(encoding="utf-8")).splitlines():
        m = re.match(r"#{1,6} (.*?)\s*#*\s*$", line)
        if m:
            slug = github_slug(m.group(1))
            n = seen.get(slug, 0)
            seen[slug] = n + 1
            ids.add(slug if n == 0 else f"{slug}-{n}")
    return ids


def links_of_text(text: str) -> list[tuple[int, str, str]]:
    """(line, "!" for an image, target) of every link in the prose of ``text``."""
    out = []
    for number, line in enumerate(_prose(text).splitlines(), start=1):
        # a link's text may hold code spans; a link inside a code span is no link
        for m in LINK.finditer(re.sub(r"`[^`]*`", lambda c: "`" + "x" * (len(c.group(0)) - 2) + "`", line)):
            out.append((number, m.group(1), m.group(3)))
    return out


def links(path: Path) -> list[tuple[int, str, str]]:
    return links_of_text(path.read_text(encoding="utf-8"))


def _broken(source: Path, target: str, base: Path) -> str | None:
    if re.match(r"[a-z][a-z0-9+.-]*:", target):
        return None  # a URL
    path, _, anchor = target.partition("#")
    dest = (base / path).resolve() if path else source
    if not dest.exists():
        return f"{target}: no such file"
    if ROOT not in dest.parents and dest != ROOT:
        return f"{target}: outside the repository"
    if anchor and dest.suffix == ".md" and anchor not in anchors(dest):
        return f"{target}: no heading with id {anchor!r} in {dest.relative_to(ROOT)}"
    return None


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_link_resolves_on_github(source: Path):
    problems = [f"{source.relative_to(ROOT)}:{line}: {why}" for line, _, target in links(source)
                if (why := _broken(source, target, source.parent))]
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_pages_link_only_to_pages_and_their_own_files(page: Path):
    # a page of the site can only link to what the site serves: files under docs/, and URLs
    problems = []
    for line, _, target in links(page):
        path = target.partition("#")[0]
        if path and not re.match(r"[a-z][a-z0-9+.-]*:", path):
            dest = (page.parent / path).resolve()
            if DOCS not in dest.parents:
                problems.append(f"{page.relative_to(ROOT)}:{line}: {target} is outside docs/ "
                                "(name the file in a code span, or link a page)")
    assert not problems, "\n".join(problems)


def test_the_front_page_is_readme_with_its_links_made_relative_to_docs():
    assert not (DOCS / "index.md").exists(), "README.md is the front page; docs/index.md would shadow it"
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    front = hooks.front_page(readme)
    problems = []
    for number, _bang, target in links_of_text(front):
        path = target.partition("#")[0]
        if not path or re.match(r"[a-z][a-z0-9+.-]*:", target):
            continue
        if not (DOCS / path).exists() or (DOCS / path).is_dir():
            problems.append(f"index.md:{number}: {target} is no file of the site")
    assert not problems, "\n".join(problems)
    # the rewriting itself
    assert hooks.front_page("[MaxText](docs/lint/maxtext.md#keys) ![f](docs/img/a.png)") == \
        "[MaxText](lint/maxtext.md#keys) ![f](img/a.png)"
    assert hooks.front_page("see [`audits/README.md`](audits/README.md).") == "see `audits/README.md`."
    assert hooks.front_page("[x](https://arxiv.org/abs/2310.05209) [y](#development)") == \
        "[x](https://arxiv.org/abs/2310.05209) [y](#development)"
    assert hooks.front_page("[gone](no/such/file.md)") == "[gone](no/such/file.md)"  # left for --strict


class _Loader(yaml.SafeLoader):
    """mkdocs.yml with its ``!!python/...`` tags read as plain data (nothing is constructed)."""


_Loader.add_multi_constructor("tag:yaml.org,2002:python/", lambda loader, suffix, node: None)


def _nav_pages(nav) -> list[str]:
    out = []
    for item in nav:
        value = next(iter(item.values())) if isinstance(item, dict) else item
        out += _nav_pages(value) if isinstance(value, list) else [value]
    return out


def test_every_page_is_in_the_navigation_and_every_entry_is_a_page():
    config = yaml.load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"), Loader=_Loader)
    nav = _nav_pages(config["nav"])
    assert len(nav) == len(set(nav)), "a page twice in the navigation"
    missing = [p for p in nav if p != "index.md" and not (DOCS / p).is_file()]
    assert not missing, f"mkdocs.yml nav names pages that do not exist: {missing}"
    # the rule pages are reached from rules/index.md (mkdocs.yml's not_in_nav)
    listed = set(nav)
    unlisted = [str(p.relative_to(DOCS)) for p in PAGES if str(p.relative_to(DOCS)) not in listed
                and not re.fullmatch(r"rules/R[A-Z]\d{3}\.md", str(p.relative_to(DOCS)))]
    assert not unlisted, f"pages missing from mkdocs.yml's nav: {unlisted}"


def test_the_slug_is_githubs():
    # ids GitHub gives these README headings (README's own contents list links to them)
    assert github_slug("Scaling laws: `bound`, `base`, `dims`") == "scaling-laws-bound-base-dims"
    assert github_slug("Precision: `exact` and `audit`") == "precision-exact-and-audit"
    assert github_slug("Experiments: predict, then verify") == "experiments-predict-then-verify"
    assert github_slug("A -- b") == "a----b"


def test_readme_starts_with_the_two_commands_and_ci_runs_the_test_command_verbatim():
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("```"))
    end = next(i for i in range(start + 1, len(lines)) if lines[i].startswith("```"))
    assert start < 12, "README's first code block (the two commands for a fresh machine) comes first"
    commands = [line for line in lines[start + 1:end] if line.strip() and not line.startswith("#")]
    assert len(commands) == 2, commands
    install, test = commands
    assert install.startswith("python3 -m venv .venv && ") and " ropelaw bound " in install, install
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert test in ci, f"README's test command is not a line of .ci/run: {test}"


def test_readme_is_a_front_page_and_the_manual_lives_in_docs():
    # README.md is the front page (what ropelaw answers, the two commands, one example per command,
    # links); the manual is the pages under docs/ (docs/development.md, "The documentation site")
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 200, f"README.md has {len(lines)} lines: move the new text to its page under docs/"
    targets = {target.partition("#")[0] for _, _, target in links(ROOT / "README.md")}
    nav = set(_nav_pages(yaml.load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"), Loader=_Loader)["nav"]))
    unlinked = sorted(p for p in nav if p != "index.md" and not p.startswith("lint/") and f"docs/{p}" not in targets)
    assert not unlinked, f"README's list of pages misses {unlinked}"


def test_markdown_inside_html_blocks_is_rendered_on_the_site_too():
    """GitHub renders Markdown inside <details>; mkdocs does only with md_in_html and markdown="1"
    on the tag (without them the severity-parity table showed as raw pipes on the site)."""
    config = yaml.load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"), Loader=_Loader)
    names = [e if isinstance(e, str) else next(iter(e)) for e in config["markdown_extensions"]]
    assert "md_in_html" in names
    bare = [f"{p.relative_to(ROOT)}:{i}" for p in SOURCES
            for i, line in enumerate(_prose(p.read_text(encoding="utf-8")).splitlines(), 1)
            if re.match(r"\s*<details(?![^>]*\bmarkdown=)", line)]
    assert not bare, f"<details> without markdown=\"1\" (its Markdown shows raw on the site): {bare}"
