"""Where a value came from, said once: a finding's message names a value by its key, its full provenance is
the finding's ``sources`` (issue 36: messages under ~300 characters, the provenance once).

A value's ``where`` (:attr:`ropelaw.lint.model.Value.where`) can run long: ``block_size of checkpoint_dir
'checkpoints/meta-llama/Meta-Llama-3.1-8B' (litgpt==0.5.13 litgpt/config.py Config.from_name('Llama-3.1-8B'))``,
and a message naming three such values said the model and the runtime three times (654 characters). The message
says :func:`short` of it in brackets (``[block_size]``), and :class:`Sources` keeps the full text for the
finding: json ``"sources"``, full text a ``source:`` line under the finding (once per file, ``report.text_lines``).
Nothing is dropped: every shortened ``where`` is in the finding's sources word for word.

:func:`short`: first the citation of the runtime or file the value was read from (a parenthesis opening with
``package==version`` or ``owner/repo@commit``) goes; then, if what is left is longer than :data:`SHORT`
characters, the name it opens with (the text before `` of ``, `` from ``, ``: ``, `` (``, `` [`` or ``; ``).
"""

from __future__ import annotations

import re

__all__ = ["SHORT", "MESSAGE_LIMIT", "short", "Sources", "fit"]

MESSAGE_LIMIT = 300  # a finding's message says its fact and numbers within this (tests/test_lint_messages.py)
SHORT = 40  # a where longer than this (after its citation is gone) is said by the name it opens with
_CITATION = re.compile(r"[\w.\-]+==[\w.\-+]+[\s)]|[\w.\-]+/[\w.\-]+@[0-9a-f]{7,40}\b")
_CUTS = (" of ", " from ", ": ", " (", " [", "; ")


def _close(text: str, start: int) -> int:
    """Index of the ``)`` closing the ``(`` at ``start``, or -1."""
    depth = 0
    for k in range(start, len(text)):
        if text[k] == "(":
            depth += 1
        elif text[k] == ")":
            depth -= 1
            if depth == 0:
                return k
    return -1


def _without_citations(where: str) -> str:
    out, i = [], 0
    while True:
        j = where.find(" (", i)
        if j < 0:
            out.append(where[i:])
            return "".join(out)
        k = _close(where, j + 1) if _CITATION.match(where, j + 2) else -1
        if k < 0:
            out.append(where[i:j + 2])
            i = j + 2
            continue
        out.append(where[i:j])
        i = k + 1


def short(where: str) -> str:
    """``where`` as a message says it (module docstring); ``where`` itself when it is short already."""
    s = _without_citations(where).strip()
    if len(s) > SHORT:
        cut = min((k for k in (s.find(c) for c in _CUTS) if k > 0), default=-1)
        if cut > 0:
            s = s[:cut]
    return s or where


def fit(head: str, tail: str, instead: str = "") -> tuple[str, list[str]]:
    """``(message, notes)``: ``head + tail`` when it fits in :data:`MESSAGE_LIMIT` characters, else ``head +
    instead`` with ``tail`` (its leading ``"; "`` or `` (...)`` taken off) as the finding's note: a reason that
    runs long (a runtime's refusal with its version) is said beside the message, never cut."""
    if len(head) + len(tail) <= MESSAGE_LIMIT:
        return head + tail, []
    note = tail[2:] if tail.startswith("; ") else tail[2:-1] if tail.startswith(" (") and tail.endswith(")") else tail
    return head + instead, [note.strip()]


class Sources:
    """The full provenance of the values one finding's message names: ``src(where)`` gives the short form for
    the message and remembers ``where`` when it was shortened; :attr:`full` goes to ``Finding.of(sources=...)``."""

    def __init__(self) -> None:
        self.full: list[str] = []

    def __call__(self, where: str) -> str:
        s = short(where)
        if s != where and where not in self.full:
            self.full.append(where)
        return s
