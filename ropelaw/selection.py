"""Which rules are on for a file: ruff's rule selection, layer by layer.

A layer is one source of settings (a project config file, then the command line), each with ``select``
(``None``: not given), ``extend-select`` and ``ignore`` (lists of codes, prefixes or ``ALL``). Layers apply in
order to the default set (every rule that is on by default): a layer's ``select`` replaces the set,
``extend-select`` adds to it, ``ignore`` removes from it; within a layer the most specific selector that
matches a code decides (``select = ["RL"]``, ``ignore = ["RL103"]`` turns RL103 off; ``ignore = ["RL"]``,
``extend-select = ["RL103"]`` leaves only RL103 of the family on), and an ``ignore`` as specific as a
``select`` wins. A file's ``per-file-ignores`` are one more ``ignore`` after the layers.

A code turned on by a selector a user wrote (not the default set) is *explicit*: ``lint`` shows
informational findings only for explicit codes (the others are counted: "N informational findings not
shown"), and reads a config in full only when some code is explicit (``lint_config(shown_only=...)``).
"""

from __future__ import annotations

from dataclasses import dataclass
from collections.abc import Iterable, Sequence

__all__ = ["Layer", "Selection", "select"]


@dataclass(frozen=True)
class Layer:
    """One source's selectors: ``select`` is ``None`` when that source does not set it."""

    select: tuple[str, ...] | None = None
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    source: str = "--select / --ignore"  # where the selectors were written (error messages, --show-settings)


@dataclass(frozen=True)
class Selection:
    """The rules on for a file, and which of them a user asked for by name or prefix (``explicit``)."""

    enabled: frozenset[str]
    explicit: frozenset[str]

    def on(self, code: str) -> bool:
        return code in self.enabled

    @property
    def default(self) -> bool:
        """No code was asked for explicitly (informational findings hidden, configs read for shown rules only)."""
        return not self.explicit


def _specificity(code: str, selectors: Iterable[str]) -> int | None:
    """Length of the longest selector matching ``code`` (``ALL``: 0), or None when none matches."""
    best = None
    for s in selectors:
        s = s.strip().upper()
        n = 0 if s == "ALL" else len(s) if s and code.startswith(s) else None
        if n is not None and (best is None or n > best):
            best = n
    return best


def select(codes: Sequence[str], default: Iterable[str], layers: Sequence[Layer],
           per_file_ignore: Sequence[str] = ()) -> Selection:
    """The :class:`Selection` of ``codes`` (every rule's code) after ``layers`` over the ``default`` set, then
    ``per_file_ignore`` (see the module docstring)."""
    enabled = set(default)
    explicit: set[str] = set()
    for layer in list(layers) + ([Layer(ignore=tuple(per_file_ignore))] if per_file_ignore else []):
        chosen = list(layer.select or ()) + list(layer.extend_select)
        for code in codes:
            s = _specificity(code, chosen)
            i = _specificity(code, layer.ignore)
            on = (s is not None) if layer.select is not None else (code in enabled or s is not None)
            if i is not None and (s is None or i >= s):
                on = False
            if on:
                enabled.add(code)
                if s is not None and (i is None or s > i):
                    explicit.add(code)
            else:
                enabled.discard(code)
                explicit.discard(code)
    return Selection(frozenset(enabled), frozenset(explicit))
