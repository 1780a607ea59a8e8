"""Python files that are training configs: which framework writes its runs in Python, and what lint does with them.

Some frameworks configure a run in Python instead of a YAML / TOML file. ropelaw never runs such a file (it
is code, and running it would run the user's imports); a directory scan recognises them by what they import
(the text is read, never executed) and says, once in its summary, how many it did not read and what to lint
instead; a file named on the command line is skipped with that reason. Other Python files are source code,
not configs, and are not counted.

- torchtitan after 0.2.2: ``config_registry.py`` (functions returning ``Trainer.Config``) and the model-flavor
  modules beside them (``models/<family>/__init__.py``, ``model_registry``);
- OLMo-core experiment scripts (``src/scripts/train/*.py``: ``from olmo_core ...``, ``TransformerConfig.olmo2_7B
  (...)``): the run saves its whole config as ``config.json`` in its save folder (``ConfigSaverCallback``), which
  the ``olmo_core`` dialect reads; the script's ``dry_run`` command only pretty-prints it;
- nanotron config scripts (``examples/config_*.py``: ``from nanotron.config import ...``): they write the YAML
  the ``nanotron`` dialect reads (``config.save_as_yaml``).
"""

from __future__ import annotations

import os
import re

SUFFIX = ".py"
HEAD_BYTES = 1 << 16  # the imports are at the top: 64 KiB of each Python file is read, never more

# kind -> (what the file is, what lint does / what to lint instead), in the order the summary lists them
KINDS = {
    "torchtitan-registry": ("torchtitan config registry (Python)",
                            "lint the TOML of a torchtitan 0.2.2 run or the model's config.json"),
    "torchtitan-flavors": ("torchtitan model flavors (Python)",
                           "lint the model's config.json"),
    "olmo-core-script": ("OLMo-core Python launch script",
                         "lint the config.json the run saves in its save folder (ConfigSaverCallback); "
                         "the script's dry_run only pretty-prints it"),
    "nanotron-script": ("nanotron Python config script", "lint the YAML it writes (config.save_as_yaml)"),
}
_IMPORTS = {name: re.compile(rf"^\s*(?:from|import)\s+{name}\b", re.M) for name in ("torchtitan", "olmo_core",
                                                                                     "nanotron")}


def kind_of(path: str) -> str | None:
    """The :data:`KINDS` key of the Python file at ``path`` (its first :data:`HEAD_BYTES` read as text), or None:
    source code that is no training config (or a file that cannot be read: nothing to say about it)."""
    from ..errors import UsageError
    from ..safeio import open_regular

    try:
        with open_regular(path) as fh:
            text = fh.read(HEAD_BYTES).decode("utf-8", "replace")
    except (OSError, UsageError):
        return None
    name = os.path.basename(path)
    if _IMPORTS["torchtitan"].search(text):
        if name == "config_registry.py":
            return "torchtitan-registry"
        if name == "__init__.py" and re.search(r"^def model_registry\(", text, re.M):
            return "torchtitan-flavors"
        return None
    if _IMPORTS["olmo_core"].search(text):
        return "olmo-core-script"
    if _IMPORTS["nanotron"].search(text) and re.search(r"\bfrom\s+nanotron\.config\b", text):
        return "nanotron-script"
    return None


def reason(kind: str) -> str:
    """The one-line skip reason of a file of ``kind``."""
    what, instead = KINDS[kind]
    return f"{what}: not read; {instead}"


def summary(counts: dict) -> str:
    """What a directory scan says, once, of the Python configs it found and did not read (``{kind: n}``)."""
    total = sum(counts.values())
    parts = [f"{KINDS[k][0]} ({n:,}): {KINDS[k][1]}" for k, n in ((k, counts.get(k, 0)) for k in KINDS) if n]
    return f"{total:,} Python config file{'s' if total != 1 else ''} not read (ropelaw never runs Python): " + \
        "; ".join(parts)
