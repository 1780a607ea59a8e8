"""``--model-config``: the file the flag names and how to say it, shared by every reader of a model
named elsewhere (:mod:`ropelaw.lint.resolve` for Hugging Face models; litgpt's ``model_config.yaml``,
MaxText's model files). No reading happens here (this module imports nothing of the linter, so any
dialect can use it)."""

from __future__ import annotations

import os

from ..errors import UsageError

__all__ = ["HOW", "check_model_config_path", "fetch_command", "given_file"]

HOW = "pass its config.json with --model-config PATH (or the directory holding it)"


def given_file(given: str | None, names: tuple[str, ...] = ("config.json",)) -> str | None:
    """The file ``--model-config`` names: the path itself, or the first of ``names`` in that directory."""
    if given is None:
        return None
    if os.path.isdir(given):
        return next((os.path.join(given, n) for n in names if os.path.isfile(os.path.join(given, n))), None)
    return given


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


def fetch_command(name: str, revision: str | None = None, filename: str = "config.json") -> str:
    """The command that puts ``filename`` of Hub model ``name`` into the Hugging Face cache (``hf`` is
    huggingface_hub's command line since 0.34; older releases spell it ``huggingface-cli download``)."""
    return f"hf download {name} {filename}" + (f" --revision {revision}" if revision else "")
