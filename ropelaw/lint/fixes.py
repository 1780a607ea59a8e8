"""The findings whose fix is one config edit that is proven, for ``ropelaw lint --fix`` / ``--diff``.

A fix is offered only where the edit is decided by the finding alone and its effect is measured: RV009
(a rope-block key its scheme does not take) and RV019 (a key transformers does not read) in a Hugging Face
config, at a key that ``ropelaw/data/hf_keys.json`` records as *ignored* by both transformers versions
ropelaw follows (``dialects.hf.SEMANTICS``) for the config's model type and scheme: perturbing the key and
removing it, in a real file of that type, changed nothing in either version's forward
(``scripts/hf_key_perturbation.py``). The fix removes that key; nothing else in the file changes. A key
measured for another scheme, under one version only, or not measured is not fixed (the finding says so).

:func:`removable_key` decides; :func:`with_fix` puts the edit's words on the finding; the command
(``commands/lint_fix.py``) applies the edits through ``lint.writers.apply_edit``, as ``plan --apply`` does.
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

    return (f"[*] `ropelaw lint --fix` removes {'.'.join(key)}: transformers {' and '.join(SEMANTICS)} were measured "
            f"to ignore it for {cfg.arch} (removing it changed nothing in the forward)")


def with_fix(cfg: Any, findings: list) -> list:
    """``findings`` with the fix of each fixable one said in its ``fix`` (``[*]``, as ruff marks a fix)."""
    out = []
    for f in findings:
        key = removable_key(cfg, f)
        out.append(dataclasses.replace(f, fix=fix_words(cfg, key)) if key else f)
    return out
