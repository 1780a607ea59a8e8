"""Writers: the inverse of a dialect. A planned option (``ropelaw.plan.Option``) written back in the
keys that dialect reads, so that the loader reads the edited file as that option.

``edit_for(dialect, data, cfg, option, target) -> Edit``: the changes (``set`` a key path to a value,
``delete`` one) or, when the dialect has no key for the option, ``Edit.refused`` saying why.
``apply_edit(text, fmt, edit) -> Applied`` applies an edit to a file's text (the one read it was
planned on) and gives the new text and its diff; ``write`` writes that to a copy of the file,
atomically (never in place). JSON is edited in place (``jsonedit``; re-dumped with its key order and
indentation where that fails); YAML and TOML are edited line by line, so comments and the rest of the
file stay as they were (a YAML file whose edited keys are in flow style is refused); a Megatron launch
script has its flags' values replaced where they are written (``shell``). The edited text is parsed again and must \
hold exactly the
edited mapping, else nothing is written.

One module per dialect: ``hf`` (config.json: ``rope_scaling`` for transformers 4.x,
``rope_parameters`` for 5.x), ``axolotl`` (the same keys under ``overrides_of_model_config``),
``megatron`` (flag files), ``litgpt`` (``model_config``), ``torchtitan`` (``[training]``), ``llamafactory``
(``rope_scaling`` + ``cutoff_len``, where its own factor is the plan's), ``maxtext`` (its rotary keys).
Round trips, read back through the loader, are tested per dialect (tests/test_plan_writers.py).
"""

from __future__ import annotations

import importlib
import os
from dataclasses import dataclass
from typing import Any
from collections.abc import Mapping

from ...errors import UsageError
from .edit import DELETE, Edit, apply_to_mapping, leaf_changes, refuse  # noqa: F401  (DELETE: the marker writers use)

__all__ = ["Edit", "Applied", "WRITERS", "edit_for", "edits_for", "apply_edit", "check_output", "write",
           "apply_to_mapping"]

# dialect name -> writer module (each has ``edit(data, cfg, option, target) -> Edit``)
WRITERS = {"hf": "hf", "axolotl": "axolotl", "megatron": "megatron", "litgpt": "litgpt", "torchtitan": "torchtitan",
           "llamafactory": "llamafactory", "maxtext": "maxtext"}

def edits_for(dialect: str, data: Mapping, cfg: Any, options: list, target: int) -> tuple[list[Edit], str | None]:
    """The edit of every option, and why none can be written (None: they can): a Hugging Face config
    that the installed transformers reads otherwise than the version it names (``hf.version_conflict``)
    gets every edit refused with that reason."""
    why = None
    if dialect == "hf":
        from .hf import version_conflict

        why = version_conflict(data, cfg)
    edits = [refuse(dialect, o.name, why) if why else edit_for(dialect, data, cfg, o, target) for o in options]
    for e in edits:
        if not e.refused:  # the keys that change in this file: what the plan shows and the diff holds
            e.changes = leaf_changes(data, e.changes)
    return edits, why


def edit_for(dialect: str, data: Mapping, cfg: Any, option: Any, target: int) -> Edit:
    """The edit that states ``option`` in ``dialect``'s keys (``Edit.refused`` when it cannot)."""
    mod = WRITERS.get(dialect)
    if mod is None:
        return refuse(dialect, option.name, f"ropelaw has no writer for {dialect} configs "
                                            f"(writers: {', '.join(WRITERS)})")
    return importlib.import_module(f"{__name__}.{mod}").edit(data, cfg, option, target)


@dataclass(frozen=True)
class Applied:
    """An edit applied to a file's text: the new text and the unified diff from the old."""

    text: str
    diff: str
    notes: tuple = ()


def apply_edit(text: str, fmt: str, edit: Edit, path: str = "-") -> Applied:
    """``text`` (a config's content, as read once) with ``edit`` applied, and the diff: the one
    function every writer's edit goes through (``plan --apply``; ``lint --fix``).

    The new text must parse to exactly the edited mapping, else :class:`UsageError` and nothing is
    returned. ``UsageError`` also when the edit was refused."""
    from ..parse import parse_text
    from . import text as textedit

    if edit.refused:
        raise UsageError(f"--apply {edit.option}: {edit.refused}")
    if fmt == "shell":
        return _shell_edit(text, edit, path)
    if fmt not in ("json", "yaml", "toml"):
        raise UsageError(f"--apply {edit.option}: {path}: ropelaw edits JSON, YAML and TOML configs, not {fmt} files")
    data, positions = parse_text(text, fmt, path)
    expected = apply_to_mapping(data, edit.changes)
    changes = leaf_changes(data, edit.changes)  # the file's own keys, smallest edits first
    notes = list(edit.notes)
    new = _edited_text(text, fmt, data, positions, changes)
    if new is None or parse_text(new, fmt, path)[0] != expected:
        if fmt != "json":  # a dump would drop the file's comments and layout: refused instead
            raise UsageError(f"--apply {edit.option}: {path}: the keys to change cannot be edited line by line (a "
                             "flow-style mapping or a shared line); a rewrite would lose the file's comments "
                             "and layout")
        new = textedit.dump(expected, fmt)
        notes.append("the JSON could not be edited in place: the file is re-dumped with its key order and indentation")
    if parse_text(new, fmt, path)[0] != expected:  # pragma: no cover - dump is the mapping itself
        raise UsageError(f"{path}: the edited file would not read back as the edit (nothing written)")
    diff = unified_diff(text, new, path, path)
    return Applied(new, diff, tuple(notes))


def unified_diff(old: str, new: str, fromfile: str, tofile: str, n: int = 3) -> str:
    """The unified diff of two texts as GNU ``diff -u`` writes it and ``patch`` reads it: lines end at ``\n`` only
    (not at the other separators ``str.splitlines`` breaks at: ``\r`` alone, ``\x0b``, ``\u2028`` ...), and a last
    line without one is followed by ``\\ No newline at end of file`` (difflib leaves it unterminated, so the next
    line of the diff ran into it)."""
    import difflib

    out = []
    for line in difflib.unified_diff(_lines(old), _lines(new), fromfile=fromfile, tofile=tofile, n=n):
        out.append(line)
        if not line.endswith("\n"):
            out.append("\n\\ No newline at end of file\n")
    return "".join(out)


def _lines(text: str) -> list[str]:
    """``text``'s lines, each with its ``\n`` (the last one without, where the text does not end in one)."""
    parts = text.split("\n")
    lines = [p + "\n" for p in parts[:-1]]
    return lines + [parts[-1]] if parts[-1] else lines


def _shell_edit(text: str, edit: Edit, path: str) -> Applied:
    """A Megatron launch script edited in place (``shell.edited``) and read again: it must hold exactly
    the edited flags (values as words), else ``UsageError`` naming the hand edit."""
    from ..dialects.megatron import parse_shell
    from . import shell

    crlf = "\r\n" in text
    lf = text.replace("\r\n", "\n") if crlf else text
    flags, positions = parse_shell(lf)
    changes = leaf_changes(flags, edit.changes)
    try:
        new = shell.edited(lf, flags, positions, changes)
    except UsageError as exc:
        raise UsageError(f"--apply {edit.option}: {path}: {exc}") from None
    want = {k: (v if v is True else shell.shell_word(v)) for k, v in apply_to_mapping(flags, changes).items()}
    got = parse_shell(new)[0]
    if {k: (v if v is True else str(v)) for k, v in got.items()} != {k: (v if v is True else str(v)) for k,
                                                                     v in want.items()}:
        raise UsageError(f"--apply {edit.option}: {path}: the edited script would not read as the edit; edit it by "
                         f"hand: {shell.hand_edit(changes)}")
    new = new.replace("\n", "\r\n") if crlf else new
    diff = unified_diff(text, new, path, path)
    return Applied(new, diff, tuple(edit.notes))


def _edited_text(text: str, fmt: str, data: Mapping, positions: Any, changes: list) -> str | None:
    """The text with ``changes`` made in place (line endings kept: a CRLF file is edited as LF and
    turned back), or None where that is not possible."""
    from . import jsonedit, text as textedit

    if fmt == "json":
        return jsonedit.edited(text, changes)
    crlf = "\r\n" in text
    if crlf:
        text = text.replace("\r\n", "\n")
        from ..parse import parse_text

        data, positions = parse_text(text, fmt)
    new = textedit.edited(text, fmt, data, positions, changes)
    return new.replace("\n", "\r\n") if new is not None and crlf else new


def check_output(path: str, out: str) -> None:
    """Refuse ``-o OUT`` before any work (exit 2): the input itself, a FIFO, device or directory, a
    folder that does not exist (:func:`ropelaw.safeio.writable_target`)."""
    from ...safeio import writable_target

    real = writable_target(out)
    if os.path.realpath(path) == real or (os.path.exists(real) and os.path.samefile(path, real)):
        raise UsageError(f"-o {out} is the input file: ropelaw plan never edits in place; name another file")


def write(path: str, text: str, fmt: str, edit: Edit, out: str) -> Applied:
    """Write ``text`` (``path``'s content, the one read the plan was made from) with ``edit`` applied to
    ``out``, atomically (:func:`ropelaw.safeio.write_atomic`); ``UsageError`` (exit 2) when ``out`` is the
    input or cannot be written, or the edit was refused."""
    from ...safeio import write_atomic

    check_output(path, out)
    applied = apply_edit(text, fmt, edit, path)
    write_atomic(out, applied.text)
    return applied
