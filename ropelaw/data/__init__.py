"""The generated tables ropelaw reads at run time: one folder, one format (JSON), one writer, one reader.

Each file says which script regenerates it (``generated_by``, a script under ``scripts/``, not shipped)
and what it was derived from; each table has a test against its source. The files:

- ``hf_keys.json``: which rope-block keys transformers reads, proven by perturbation
  (``scripts/hf_key_perturbation.py``)
- ``plan_evidence.json``: the toy-model evidence ``ropelaw plan`` cites (``scripts/plan_evidence.py``)
- ``hf_types.json``: the model types each transformers version knows, the keys its config classes declare
  strict ``int``, how composites build their text config (``scripts/hf_types.py``, under each version)
- ``transformers_gguf.json``: transformers 5.19.0's GGUF-to-config tables (SGLang 0.5.23's conversion of a
  GGUF; ``scripts/transformers_gguf.py``)
- ``serving_flags.json``: every long flag of ``vllm serve`` 0.32.0 and SGLang 0.5.23's server, for argparse's
  abbreviations (``scripts/serving_flags.py``)
- ``presets_<framework>.json``: named presets read from the frameworks' own code at pinned versions
  (torchtitan, litgpt, torchtune, axolotl's base models, MaxText; ``scripts/presets.py``)

:func:`read` is the one reader (cached: the tables are never changed at run time, so callers must not
mutate what it returns), :func:`dump` the one serialisation and :func:`write` the one writer (through
:func:`ropelaw.safeio.write_atomic`).
"""

from __future__ import annotations

import functools
import json
import os
from typing import Any

__all__ = ["FOLDER", "path", "read", "dump", "write"]

FOLDER = os.path.dirname(os.path.abspath(__file__))


def path(name: str) -> str:
    """The file of table ``name`` (``name`` without ``.json``)."""
    return os.path.join(FOLDER, f"{name}.json")


@functools.cache
def read(name: str) -> Any:
    """Table ``name`` as parsed JSON (cached; do not mutate it)."""
    with open(path(name), encoding="utf-8") as fh:
        return json.load(fh)


def dump(table: Any, *, sort_keys: bool = False) -> str:
    """The text of a table file: JSON, one-space indent, ASCII, a final newline. ``sort_keys`` for tables
    whose key order means nothing (keep the generator's order where a reader takes the first match)."""
    return json.dumps(table, indent=1, sort_keys=sort_keys) + "\n"


def write(name: str, table: Any, *, sort_keys: bool = False) -> str:
    """Write table ``name`` atomically (:func:`dump`); returns its path."""
    from ..safeio import write_atomic

    target = path(name)
    write_atomic(target, dump(table, sort_keys=sort_keys))
    read.cache_clear()
    return target
