"""The rule reference in docs/rules/ is what scripts/rule_pages.py makes from the rule registry.

As ruff's rule pages come from its rules: a rule added to or edited in the registry without
``python scripts/rule_pages.py`` fails here. The pages are also read back: un-escaped, each one
holds every section of ``ropelaw rule CODE`` (``Rule.doc()``) word for word.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

from ropelaw.findings import all_rules

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("rule_pages", ROOT / "scripts" / "rule_pages.py")
rule_pages = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(rule_pages)


def test_rule_pages_are_up_to_date():
    problems = rule_pages.stale(rule_pages.pages())
    assert not problems, (
        "docs/rules/ is out of date with the rule registry; regenerate it and commit the result:\n"
        "    python scripts/rule_pages.py && git add -A docs/rules\n" + "\n".join(problems))


def test_every_rule_has_a_page_and_a_row_in_the_index():
    index = (rule_pages.OUT / "index.md").read_text(encoding="utf-8")
    for rule in all_rules():
        assert (rule_pages.OUT / f"{rule.code}.md").is_file(), rule.code
        fix = " [*]" if rule.fix_available else ""  # a rule --fix fixes is marked as ruff marks it
        assert f"| [{rule.code}]({rule.code}.md) | {rule.name}{fix} | {rule.severity}" in index, rule.code
        page = (rule_pages.OUT / f"{rule.code}.md").read_text(encoding="utf-8")
        assert ("Fix sometimes available (`ropelaw lint --fix`" in page) == bool(rule.fix_available), rule.code


def _unescape(markdown: str) -> str:
    """The characters a reader sees: backslash escapes and &lt; undone outside code spans."""
    out, last = [], 0
    for m in re.finditer(r"(`+)(.+?)\1", markdown, re.S):
        out.append(re.sub(r"\\(.)", r"\1", markdown[last:m.start()]).replace("&lt;", "<"))
        out.append(m.group(0))
        last = m.end()
    out.append(re.sub(r"\\(.)", r"\1", markdown[last:]).replace("&lt;", "<"))
    return "".join(out)


@pytest.mark.parametrize("rule", all_rules(), ids=lambda r: r.code)
def test_a_rule_page_says_what_ropelaw_rule_prints(rule):
    page = _unescape((rule_pages.OUT / f"{rule.code}.md").read_text(encoding="utf-8"))
    assert f"# {rule.code} {rule.name}\n" in page
    assert f"**{rule.severity}**" in page
    assert ("off by default" in page) == (not rule.default_on)
    # Rule.doc(), the text of `ropelaw rule CODE`: each section's body is on the page, in order
    doc = rule.doc()
    sections = re.split(r"^## .*$", doc, flags=re.M)
    titles = re.findall(r"^## (.*)$", doc, flags=re.M)
    assert titles == ["What it does", "Why it matters", "Example", "Fix", "References"]
    at = 0
    for title, body in zip(titles, sections[1:], strict=True):
        at = page.index(f"## {title}\n", at)
        body = body.strip()
        if title == "References" and body == "-":
            continue
        where = page.find(body, at)
        assert where >= 0, f"{rule.code}: section {title!r} differs from `ropelaw rule {rule.code}`"
    assert rule.summary.strip() in page


def test_escaping_keeps_code_spans_and_escapes_markup_elsewhere():
    text = "B_(m,theta) = sum_i cos(m*theta_i) >= 0 for m <= L; `x_1 * y` stays; [0.5, 1) | #3"
    escaped = rule_pages.escape(text)
    assert "`x_1 * y`" in escaped
    assert "m\\*theta\\_i" in escaped and "&lt;=" in escaped and "\\[0.5" in escaped and "\\|" in escaped
    assert _unescape(escaped) == text


def test_a_rule_of_an_unknown_family_stops_the_generator():
    with pytest.raises(SystemExit, match="no family"):
        rule_pages.family("RZ001")
