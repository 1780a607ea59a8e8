"""The model a fine-tuning config names elsewhere: where its settings come from.

axolotl (``base_model``), LLaMA-Factory (``model_name_or_path``), llm-foundry
(``pretrained_model_name_or_path``) and litgpt (``checkpoint_dir``) configs hold no rotary dims
or base: the model's own config does. It is read, in order, from

1. a local directory of that name holding a ``config.json`` (what the framework itself loads);
2. ``--model-config PATH`` (a config.json, or a directory holding one);
3. the Hugging Face cache (``$HF_HUB_CACHE``, ``$HF_HOME/hub`` or ``~/.cache/huggingface/hub``),
   the snapshot the framework would load offline;
4. ropelaw's table of published models (``presets/axolotl.json``: each Hub repository's RoPE
   as litgpt==0.5.13's named configs encode it, read by ``presets/regenerate.py``).

Never the network. When none has the model, the dialect raises :class:`ModelNeeded` (RV031),
naming the model and how to give it.
"""

from __future__ import annotations

import glob
import os
from typing import Any

from ..errors import UsageError
from .model import ModelNeeded, Value
from .parse import read_document

HOW = "pass its config.json with --model-config PATH (or the directory holding it)"


def check_model_config_path(path: str) -> None:
    """``--model-config`` must name a readable file, or a directory with a config.json or model_config.yaml."""
    if os.path.isdir(path):
        if not any(os.path.isfile(os.path.join(path, n)) for n in ("config.json", "model_config.yaml")):
            raise UsageError(f"--model-config {path}: the directory holds no config.json (or litgpt model_config.yaml)")
        return
    if not os.path.isfile(path):
        raise UsageError(f"--model-config {path}: no such file or directory")
    if not os.access(path, os.R_OK):
        raise UsageError(f"--model-config {path}: cannot read: permission denied")


def _read(path: str) -> dict:
    data, _, _ = read_document(path)
    return dict(data)


def given_file(given: str | None, names: tuple[str, ...] = ("config.json",)) -> str | None:
    """The file ``--model-config`` names: the path itself, or the first of ``names`` in that directory."""
    if given is None:
        return None
    if os.path.isdir(given):
        return next((os.path.join(given, n) for n in names if os.path.isfile(os.path.join(given, n))), None)
    return given


def hf_model_config(name: str, given: str | None) -> tuple[dict, str] | None:
    """``(config dict, where it came from)`` of Hugging Face model ``name`` (see the module docstring), or None."""
    from .dialects._framework import presets

    local = os.path.join(name, "config.json")
    if os.path.isdir(name) and os.path.isfile(local):
        return _read(local), local
    path = given_file(given)
    if path is not None:
        return _read(path), f"--model-config {path}"
    hub = os.environ.get("HF_HUB_CACHE") or os.path.join(
        os.environ.get("HF_HOME", os.path.join(os.path.expanduser("~"), ".cache", "huggingface")), "hub")
    snaps = sorted(glob.glob(os.path.join(hub, "models--" + name.replace("/", "--"), "snapshots", "*", "config.json")),
                   key=os.path.getmtime)
    if snaps:
        return _read(snaps[-1]), snaps[-1]
    entry = presets("axolotl")["presets"].get(name)
    if entry is not None:
        return dict(entry["values"]), entry["source"]
    return None


def needed(path: str, key: Value, what: str = "its config.json") -> ModelNeeded:
    """RV031 for the model named at ``key``."""
    return ModelNeeded(f"{path}: {key.key} {key.raw!r} names the model; {what} is needed (not a local directory, "
                       f"not in the Hugging Face cache, not among ropelaw's presets of published models): {HOW}",
                       key.line, key.column)


def preset_note(name: str, origin: str) -> str | None:
    """The table's note on ``name`` when its values came from the table (e.g. a public mirror), else None."""
    from .dialects._framework import presets

    entry = presets("axolotl")["presets"].get(name)
    if entry is not None and origin == entry["source"] and entry.get("note"):
        return f"{name}: {entry['note']}"
    return None


