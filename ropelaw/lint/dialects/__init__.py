"""Dialects: one declarative table per config family, read by the loader's engine.

The engine (:func:`ropelaw.lint.loader.load_mapping`) knows *what* a RoPE setup is made of
(rotary dims, base, scheme and its parameters, lengths, dtype, layer groups); a dialect says
*where* a family of config files keeps each of those, like transformers' ``attribute_map``:

- ``aliases``: canonical name -> the keys that hold it, in priority order
  (``"base": ("rope_theta", "rotary_emb_base", "rotary_base")``); the first key present
  with a non-null value wins, and its line and column are kept;
- ``sections``: nested mappings that may hold the model settings (``text_config``,
  ``language_config``, ``model``...); the engine reads the one with the most RoPE keys;
- ``defaults(model_type)``: values the family's code uses when a key is absent (for Hugging
  Face: the transformers config class of that ``model_type``), each reported as a default;
- ``non_rope``: model types that use other positions (the engine says so instead of linting);
- ``detect(data)``: how strongly a parsed document looks like this family (0: not at all);
  the engine reads a document with the highest-scoring dialect, the first of :data:`MODULES`
  on a tie (``hf`` first). A training framework scores :data:`CLAIM` when its markers are
  present (above any score ``hf`` gives), so among frameworks the order of :data:`MODULES`
  decides: the most specific markers first (a torchtune YAML also has a ``model`` section);
- ``load``: optional: the family reads the document itself, ``load(data, positions, path, fmt,
  overrides) -> LoadedConfig`` (the training frameworks, whose presets and derivations are not
  key aliases: see ``_framework.py``); None: the engine reads it through the table above.

The training frameworks (one module each: torchtitan, torchtune, axolotl, maxtext, litgpt, nanotron,
megatron, nemo, llmfoundry, llamafactory, levanter, olmo, olmo_core, neox) are dialects like ``hf``: \
``_framework.dialect`` builds their
``Dialect`` from the module's ``detect(data) -> bool`` and ``read(doc) -> Fields``. Megatron's
shell launch scripts (``*.sh``) are parsed by ``megatron.read_shell`` and read by the same
dialect.

Adding a dialect (e.g. ``myframework.py``): write a module with a ``DIALECT = Dialect(...)``
table (for a training framework: ``DIALECT = dialect(NAME, detect, read)`` from
``_framework``), and list the module in :data:`MODULES`. No new branch in the engine: if a
family needs a behaviour the table cannot express, add one optional field here (default: no
effect) and use it in the engine once, for every dialect.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any
from collections.abc import Callable

from ...errors import UsageError

__all__ = ["CLAIM", "Dialect", "MODULES", "dialects", "pick", "get", "script_readers"]


def _no_defaults(model_type: str) -> dict[str, Any]:
    return {}


def _never(data: Mapping) -> int:
    return 0


@dataclass(frozen=True)
class Dialect:
    """Where one config family keeps each RoPE setting (see the module docstring)."""

    name: str
    aliases: Mapping[str, tuple[str, ...]]
    sections: tuple[str, ...] = ()
    defaults: Callable[[str], dict[str, Any]] = _no_defaults
    non_rope: Mapping[str, str] = field(default_factory=dict)
    detect: Callable[[Mapping], int] = _never
    load: Callable[..., Any] | None = None  # (data, positions, path, fmt, overrides) -> LoadedConfig

    def keys(self, name: str) -> tuple[str, ...]:
        """The keys holding canonical setting ``name`` (empty if the family has none)."""
        return self.aliases.get(name, ())

    def all_keys(self) -> set[str]:
        return {k for keys in self.aliases.values() for k in keys}


# every dialect module, in the order they are tried (hf first: the tie-breaker; then the
# training frameworks, the most specific markers first)
MODULES = ("hf", "torchtitan", "torchtune", "axolotl", "maxtext", "litgpt", "nanotron", "megatron", "nemo",
           "llmfoundry",
           "llamafactory", "levanter", "olmo", "olmo_core", "neox", "verl", "openrlhf", "gguf")

# the score of a training framework whose markers are present: above anything hf.detect gives
# (10 for a model_type, else one point per known key)
CLAIM = 1000


def dialects() -> list[Dialect]:
    """Every registered dialect (imports their modules on first use)."""
    return [m.DIALECT for m in _modules(MODULES)]


@lru_cache(maxsize=4)
def _modules(names: tuple[str, ...]) -> tuple:
    """The dialect modules, imported once (import_module per module per file was 5% of a scan)."""
    return tuple(importlib.import_module(f"{__name__}.{m}") for m in names)


def script_readers() -> list:
    """``(name, read_launch_text)`` of each dialect that reads launch scripts of its own (veRL, OpenRLHF):
    ``read_launch_text(text) -> (data, positions) | None``."""
    return [(m.NAME, m.read_launch_text) for m in _modules(MODULES) if hasattr(m, "read_launch_text")]


def get(name: str) -> Dialect:
    for d in dialects():
        if d.name == name:
            return d
    raise UsageError(f"unknown config dialect {name!r}; known: {', '.join(d.name for d in dialects())}")


def pick(data: Mapping) -> Dialect:
    """The dialect that reads ``data``: the highest ``detect`` score, the first listed on a tie."""
    found = dialects()
    scores = [d.detect(data) for d in found]
    best = max(range(len(found)), key=scores.__getitem__)  # max keeps the first of equal scores
    return found[best] if scores[best] > 0 else found[0]
