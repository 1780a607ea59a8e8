"""Writers: the inverse of a dialect. A planned option (``ropelaw.plan.Option``) written back in the
keys that dialect reads, so that the loader reads the edited file as that option.

``edit_for(dialect, data, cfg, option, target) -> Edit``: the changes (``set`` a key path to a value,
``delete`` one) or, when the dialect has no key for the option, ``Edit.refused`` saying why.
``write(path, edit, out)`` applies an edit to a copy of the file (never in place): JSON is re-dumped
with the file's key order and indentation; YAML and TOML are edited line by line, so comments and
the rest of the file stay as they were (a YAML file whose edited keys are in flow style is
re-dumped, and the edit's notes say so). The edited text is parsed again and must hold exactly the
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
from typing import Any, Mapping

from ...errors import UsageError
from .edit import DELETE, Edit, apply_to_mapping, refuse  # noqa: F401  (DELETE: the marker writers use)

__all__ = ["Edit", "WRITERS", "edit_for", "write", "apply_to_mapping"]

# dialect name -> writer module (each has ``edit(data, cfg, option, target) -> Edit``)
WRITERS = {"hf": "hf", "axolotl": "axolotl", "megatron": "megatron", "litgpt": "litgpt", "torchtitan": "torchtitan",
           "llamafactory": "llamafactory", "maxtext": "maxtext"}

def edit_for(dialect: str, data: Mapping, cfg: Any, option: Any, target: int) -> Edit:
    """The edit that states ``option`` in ``dialect``'s keys (``Edit.refused`` when it cannot)."""
    mod = WRITERS.get(dialect)
    if mod is None:
        return refuse(dialect, option.name, f"ropelaw has no writer for {dialect} configs "
                                            f"(writers: {', '.join(WRITERS)})")
    return importlib.import_module(f"{__name__}.{mod}").edit(data, cfg, option, target)


def write(path: str, edit: Edit, out: str) -> list[str]:
    """Write ``path`` with ``edit`` applied to ``out``; returns notes. ``UsageError`` (exit 2) when
    ``out`` is the input, cannot be written, or the edit was refused."""
    from ..parse import parse_text, read_document
    from . import text as textedit

    if edit.refused:
        raise UsageError(f"--apply {edit.option}: {edit.refused}")
    if os.path.exists(out) and os.path.samefile(path, out) or os.path.abspath(out) == os.path.abspath(path):
        raise UsageError(f"-o {out} is the input file: ropelaw plan never edits in place; name another file")
    parent = os.path.dirname(os.path.abspath(out))
    if not os.path.isdir(parent) or not os.access(parent, os.W_OK) or (os.path.exists(out) and
                                                                      not os.access(out, os.W_OK)):
        raise UsageError(f"-o {out}: cannot write there (no such directory or no permission)")
    if os.path.isdir(out):
        raise UsageError(f"-o {out}: is a directory")
    data, positions, fmt = read_document(path)
    with open(path, encoding="utf-8-sig") as fh:
        original = fh.read()
    expected = apply_to_mapping(data, edit.changes)
    notes = list(edit.notes)
    new = textedit.edited(original, fmt, data, positions, edit.changes)
    if new is None or parse_text(new, fmt, out)[0] != expected:
        new = textedit.dump(expected, fmt)
        if fmt != "json":
            notes.append(f"the edited keys could not be changed line by line: {out} is a fresh dump "
                         f"(comments not kept)")
    if parse_text(new, fmt, out)[0] != expected:  # pragma: no cover - dump is the mapping itself
        raise UsageError(f"-o {out}: the edited file would not read back as the edit (nothing written)")
    try:
        with open(out, "w", encoding="utf-8") as fh:
            fh.write(new)
    except OSError as exc:
        raise UsageError(f"-o {out}: cannot write: {exc.strerror or exc}") from None
    return notes
