"""The generated tables ropelaw reads at run time: one folder, one format (JSON), one writer, one reader.

Each file says which script regenerates it (``generated_by``, a script under ``scripts/``, not shipped)
and what it was derived from; each table has a test against its source. The files:

- ``hf_keys.json``: which rope-block keys transformers reads, proven by perturbation
  (``scripts/hf_key_perturbation.py``)
- ``hf_top_keys.json``: the keys outside the rope blocks, each changed and removed, transformers' forward against
  ropelaw's reading of the changed file (``scripts/hf_top_keys.py``, under each version)
- ``plan_evidence.json``: the toy-model evidence ``ropelaw plan`` cites (``scripts/plan_evidence.py``)
- ``hf_types.json``: the model types each transformers version knows, the keys its config classes declare
  strict ``int``, how composites build their text config (``scripts/hf_types.py``, under each version)
- ``transformers_gguf.json``: transformers 5.19.0's GGUF-to-config tables (SGLang 0.5.23's conversion of a
  GGUF; ``scripts/transformers_gguf.py``)
- ``serving_flags.json``: every long flag of ``vllm serve`` 0.32.0 and SGLang 0.5.23's server, for argparse's
  abbreviations (``scripts/serving_flags.py``)
- ``presets_<framework>.json``: named presets read from the frameworks' own code at pinned versions
  (torchtitan, litgpt, torchtune, axolotl's base models, MaxText; ``scripts/presets.py``)
- ``hf_defaults.json``: the defaults of each transformers config class, per version and model type
  (``scripts/hf_defaults.py``, under each version; read through :func:`hf_defaults`)
- ``hf_layers.json``: per-layer semantics of every RoPE decoder, measured by running tiny models of each type
  under each version (``scripts/hf_layers.py``; read through :func:`hf_layers`)
- ``hf_composites.json``: what each composite (multimodal) config class does with a config.json without
  ``text_config``: reads the top level, builds its text config's defaults, or refuses (``scripts/hf_composites.py``,
  under each version)

:func:`read` is the one reader (cached: the tables are never changed at run time, so callers must not
mutate what it returns), :func:`dump` the one serialisation and :func:`write` the one writer (through
:func:`ropelaw.safeio.write_atomic`); :func:`hf_defaults` and :func:`hf_layers` are :func:`read` typed for the
two transformers tables.
"""

from __future__ import annotations

import functools
import json
import os
from typing import Any, TypedDict

__all__ = ["FOLDER", "path", "read", "dump", "write", "LayerTable", "hf_defaults", "hf_layers"]

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


def write_versions(name: str, version: str, table: Any, *, about: str, generated_by: str, source: str) -> str:
    """Write a file of one table per transformers version (hf_types, hf_defaults, hf_layers) with ``table`` as
    ``version``'s, keeping the other versions': ``{about, generated_by, source, versions}``, keys sorted. ``{versions}``
    in ``source`` names every version the file then holds ("transformers==4.57.1, transformers==5.23.0")."""
    try:
        versions = dict(read(name)["versions"])
    except FileNotFoundError:
        versions = {}
    versions[version] = table
    held = ", ".join("transformers==" + v for v in sorted(versions))
    return write(name, {"about": about, "generated_by": generated_by, "source": source.format(versions=held),
                        "versions": versions}, sort_keys=True)


class LayerTable(TypedDict):
    """One transformers version's part of ``hf_layers.json`` (``scripts/hf_layers.py`` says what an entry's
    fields mean and how each is measured)."""

    types: dict[str, dict[str, Any]]  # model_type -> entry: class, layers_key, kinds, nope, behaviour, ...
    wrappers: dict[str, str]  # composite model_type -> the model_type of its text model
    not_covered: dict[str, str]  # model_type -> why it has no entry


def hf_defaults() -> dict[str, dict[str, dict[str, Any]]]:
    """transformers version -> model_type -> the defaults of its config class (``_class`` names the class;
    ``hf_defaults.json``, cached: do not mutate)."""
    versions: dict[str, dict[str, dict[str, Any]]] = read("hf_defaults")["versions"]
    return versions


def hf_layers() -> dict[str, LayerTable]:
    """transformers version -> its per-layer table (``hf_layers.json``, cached: do not mutate)."""
    versions: dict[str, LayerTable] = read("hf_layers")["versions"]
    return versions
