"""The training-framework dialects: which framework wrote a config, and its reader.

One module per framework (built on ``_framework``): torchtitan, litgpt, torchtune,
axolotl, nanotron, olmo, megatron (YAML / JSON flag dicts and shell launch scripts), nemo,
neox. :func:`load_framework` tries them in order; a document none of them claims is read as a
Hugging Face config (``loader.load_mapping``).
"""

from __future__ import annotations

from typing import Mapping

from . import axolotl, litgpt, megatron, nanotron, nemo, neox, olmo, torchtitan, torchtune
from ._framework import Doc, Overrides, apply_fill_ins, assemble

__all__ = ["FRAMEWORKS", "Overrides", "apply_fill_ins", "detect", "load_framework", "load_shell"]

# order: the most specific markers first (a torchtune YAML also has a `model` section, ...)
FRAMEWORKS = (torchtitan, torchtune, axolotl, litgpt, nanotron, megatron, nemo, olmo, neox)


def detect(data: Mapping):
    """The framework dialect module that claims ``data``, or None (a Hugging Face config)."""
    for fw in FRAMEWORKS:
        if fw.detect(data):
            return fw
    return None


def load_framework(data: Mapping, positions, *, path: str, fmt: str, overrides: Overrides):
    """A ``LoadedConfig`` if a framework dialect claims ``data``, else None."""
    fw = detect(data)
    if fw is None:
        return None
    doc = (megatron.FlagDoc if fw is megatron else Doc)(data, positions, fmt, path)
    return _guarded(fw, path, lambda: fw.load(doc, overrides) if hasattr(fw, "load")
                    else assemble(doc, fw.read(doc), overrides))


def _guarded(fw, path: str, build):
    """A dialect meets values of any type in a hostile file; a value it cannot use is a one-line
    error (a finding in a directory scan), never a traceback."""
    from ...errors import UsageError

    try:
        return build()
    except UsageError:
        raise
    except (TypeError, AttributeError, KeyError, IndexError, ValueError, OverflowError, ZeroDivisionError) as exc:
        raise UsageError(f"{path}: malformed {fw.NAME} config: a value has an unusable type or range "
                         f"({type(exc).__name__}: {str(exc)[:80]})") from None


def load_shell(path: str, overrides: Overrides):
    """A Megatron launch script (``*.sh``)."""
    flags, positions = megatron.read_shell(path)
    doc = megatron.FlagDoc(flags, positions, "shell", path)
    return _guarded(megatron, path, lambda: assemble(doc, megatron.read(doc), overrides))
