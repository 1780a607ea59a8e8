"""The findings whose fix is one config edit that is proven, for ``ropelaw lint --fix`` / ``--diff``.

A fix is offered only where the edit is decided by the finding alone and its effect is measured: RV009
(a rope-block key its scheme does not take) and RV019 (a key transformers does not read) in a Hugging Face
config, at a key that ``ropelaw/data/hf_keys.json`` records as *ignored* by both transformers versions
ropelaw follows (``dialects.hf.SEMANTICS``) for the config's model type and scheme: perturbing the key and
removing it, in a real file of that type, changed nothing in either version's forward
(``scripts/hf_key_perturbation.py``). The fix removes that key; nothing else in the file changes. A key
measured for another scheme, under one version only, or not measured is not fixed (the finding says so).

:func:`removable_key` decides; :func:`with_fix` puts the edit's words on the finding; the command
(``commands/lint_fix.py``) applies the edits through ``lint.writers.apply_edit``, as ``plan --apply`` does;
:func:`fix_edit` gives one finding's edit as a region of the file's text (:func:`replacement`), for SARIF's ``fixes``.
"""

from __future__ import annotations

import dataclasses
from typing import Any

FIXABLE = ("RV009", "RV019")  # rules with a fix (where removable_key says so)


def _measured_ignored(version: str, arch: str, scheme: str, key: str) -> str | None:
    """The file on which ``version`` was measured to ignore rope-block key ``key`` (its dotted path in the
    config) for model type ``arch`` under ``scheme`` (that scheme's entry only), or None."""
    from .dialects.hf_keys import ROPE_BLOCKS, measured_versions

    parts = key.split(".")
    block = next((i for i, p in enumerate(parts) if p in ROPE_BLOCKS), None)
    if block is None:
        return None
    tail = parts[block:]
    for path, entry in measured_versions().get(version, {}).get(arch, {}).get(scheme, {}).items():
        p = path.split(".")
        if p[-len(tail):] == tail and entry["verdict"] == "ignores":
            return entry["file"]
    return None


def removable_key(cfg: Any, finding: Any) -> tuple[str, ...] | None:
    """The key path ``finding`` (RV009 / RV019 of ``cfg``, a loaded config) is about, when removing it is
    measured to change nothing under both transformers versions ropelaw follows; else None."""
    from .dialects.hf import SEMANTICS

    if finding.code not in FIXABLE or finding.path != cfg.path or cfg.kind != "hf" or not cfg.arch \
            or cfg.fmt not in ("json", "yaml", "toml"):
        return None
    at = (finding.line, finding.column)
    value = next((v for v in cfg.inputs if v.key and (v.line, v.column) == at), None)
    if value is None:
        return None
    schemes = {g.scheme.raw for g in cfg.layers if g.rope and g.scheme is not None and isinstance(g.scheme.raw, str)}
    if len(schemes) != 1:  # layer groups with different schemes: which measurement applies is not one answer
        return None
    scheme = schemes.pop()
    if all(_measured_ignored(version, cfg.arch, scheme, value.key) for version in SEMANTICS):
        return tuple(value.key.split("."))
    return None


def fix_words(cfg: Any, key: tuple[str, ...]) -> str:
    """What ``--fix`` does for a removable key, as the finding's ``fix:`` line says it."""
    from .dialects.hf import SEMANTICS

    from ..findings import FIX_MARK

    return (f"{FIX_MARK}`ropelaw lint --fix` removes {'.'.join(key)}: transformers {' and '.join(SEMANTICS)} "
            "were measured "
            f"to ignore it for {cfg.arch} (removing it changed nothing in the forward)")


def with_fix(cfg: Any, findings: list) -> list:
    """``findings`` with the fix of each fixable one said in its ``fix`` (``[*]``, as ruff marks a fix)."""
    out = []
    for f in findings:
        key = removable_key(cfg, f)
        out.append(dataclasses.replace(f, fix=fix_words(cfg, key)) if key else f)
    return out


def replacement(old: str, new: str, anchor: tuple[int, int] = (1, 1)) -> dict:
    """The one region of ``old`` that turns it into ``new``: ``{start, end, text}``, ``start`` and ``end`` each
    ``(line, column)`` (1-based, in code points as ropelaw's findings count them; ``end`` is the position just
    after the deleted text, SARIF 2.1.0 3.30.5-3.30.8) and ``text`` what is inserted there. The longest common
    prefix and then suffix of the two texts are kept, so replacing that region of ``old`` by ``text`` gives
    ``new`` exactly; a deletion is then slid back (the same text deleted, shifted while the character before it
    equals its last) as far as ``anchor`` (the finding's line and column): ``"beta_fast": 32, `` rather than
    ``fast": 32, "beta_`` when the next key is beta_slow."""
    n = min(len(old), len(new))
    p = next((i for i in range(n) if old[i] != new[i]), n)
    s = 0
    while s < n - p and old[len(old) - 1 - s] == new[len(new) - 1 - s]:
        s += 1
    lines = old.split("\n")
    floor = sum(len(ln) + 1 for ln in lines[:anchor[0] - 1]) + anchor[1] - 1
    end, text = len(old) - s, new[p:len(new) - s]
    if not text:  # a deletion
        while p > floor and old[p - 1] == old[end - 1]:
            p, end = p - 1, end - 1

    def at(offset: int) -> tuple[int, int]:
        return old.count("\n", 0, offset) + 1, offset - (old.rfind("\n", 0, offset) + 1) + 1

    return {"start": at(p), "end": at(end), "text": text}


def fix_edit(cfg: Any, finding: Any) -> dict | None:
    """The edit ``--fix`` would make for ``finding`` alone (its key removed from ``cfg``'s file, through
    ``lint.writers.apply_edit`` as ``--fix`` does), as :func:`replacement` of the file's text; None when the
    finding has no fix, or the file cannot be read or edited now (SARIF then says only that a fix is available)."""
    key = removable_key(cfg, finding)
    if key is None:
        return None
    from ..errors import UsageError
    from .loader import read_source_text
    from .writers import apply_edit
    from .writers.edit import Edit

    try:
        text = read_source_text(cfg.path)
        edit = Edit(cfg.kind, "--fix")
        edit.delete(key)
        return replacement(text, apply_edit(text, cfg.fmt, edit, cfg.path).text, (finding.line, finding.column))
    except (UsageError, ValueError, OSError):
        return None
