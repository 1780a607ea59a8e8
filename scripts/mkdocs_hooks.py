"""mkdocs hooks: README.md is the site's front page.

README.md stays at the repository root (GitHub and PyPI show it there) and links to the pages as
``docs/<page>.md``; the site serves it as ``index.md`` with those links made relative to ``docs/``.
A link from README to another file of the repository (``audits/README.md``, a directory) is valid
on GitHub but is no page of the site: there it is shown as its text, unlinked, when the file
exists, and left as it is (so ``mkdocs build --strict`` fails on it) when it does not.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# an inline Markdown link or image: ![text](target) / [text](target), target without spaces
_LINK = re.compile(r"(!?)\[([^\]]*)\]\(([^)\s]+)\)")


def _site_link(m: re.Match) -> str:
    bang, text, target = m.groups()
    if re.match(r"[a-z][a-z0-9+.-]*:|#", target):  # a URL or an anchor of the page itself
        return m.group(0)
    path = target.split("#", 1)[0]
    if path.startswith("docs/") and (bang or path.endswith(".md")):
        return f"{bang}[{text}]({target[len('docs/'):]})"
    if not bang and (ROOT / path).exists():
        return text  # a repository file or directory that is no page of the site
    return m.group(0)


def front_page(readme: str) -> str:
    """README's text as the site's index.md (see the module docstring)."""
    return _LINK.sub(_site_link, readme)


def on_files(files, config):
    from mkdocs.structure.files import File  # here, so that tests import front_page without mkdocs

    if files.get_file_from_path("index.md") is not None:
        raise RuntimeError("docs/index.md must not exist: README.md is the front page (scripts/mkdocs_hooks.py)")
    text = front_page((ROOT / "README.md").read_text(encoding="utf-8"))
    files.append(File.generated(config, "index.md", content=text))
    return files
