"""axolotl YAML: the Hugging Face keys of an option under ``overrides_of_model_config`` (the inverse of
``dialects.axolotl``, which lays those keys over the base model's config.json as axolotl passes them
to ``AutoConfig``), and ``sequence_len`` for continued training at the target. The base model's
config.json is read the way the loader reads it (local path, Hugging Face cache, shipped table);
the keys are written in the ``rope_scaling`` form, which transformers 4.x and 5.x both read."""

from __future__ import annotations

from typing import Any, Mapping

from .edit import DELETE, Edit, refuse

SECTION = "overrides_of_model_config"


def edit(data: Mapping, cfg: Any, option: Any, target: int) -> Edit:
    from ...plan_types import COST_TARGET

    e = Edit("axolotl", option.name)
    if option.name != "train" or option.parameters.get("base") is not None:
        inner = _overrides(data, cfg, option, target)
        if inner.refused:
            return inner
        e.changes.extend(inner.changes)
        e.notes.extend(inner.notes)
    if option.cost_rank == COST_TARGET and data.get("sequence_len") != target:  # the run the option costs
        e.set(("sequence_len",), target)
        e.notes.append(f"sequence_len {target:,}: the option's cost is training at the target, and axolotl trains "
                       "at sequence_len (lint reads it as the tuning length)")
    return e


def _overrides(data: Mapping, cfg: Any, option: Any, target: int) -> Edit:
    """The Hugging Face keys of ``option`` under ``overrides_of_model_config``, only those whose value differs
    from what the base model's config.json (with the file's overrides) already says."""
    from ..dialects.axolotl import hf_config
    from . import hf

    got = hf_config(str(data.get("base_model")))
    if got is None:
        return refuse("axolotl", option.name, "the base model's config.json is not available locally")
    base_cfg = dict(got[0])
    over = data.get(SECTION)
    if isinstance(over, Mapping):
        base_cfg.update(over)
    base_cfg["transformers_version"] = "4"  # the rope_scaling form, unless the base model has rope_parameters
    inner = hf.changes(base_cfg, cfg, option, target, dialect="axolotl", sec=())
    if inner.refused:
        return inner
    e = Edit("axolotl", option.name, notes=list(inner.notes))
    for path, value in inner.changes:
        key = path[-1] if len(path) == 1 else None
        if key is None:  # a nested key (rope_parameters.*): axolotl replaces top-level keys only
            return refuse("axolotl", option.name, f"cannot state {'.'.join(path)} as an override")
        value = None if value is DELETE else value
        if base_cfg.get(key) == value and not (isinstance(over, Mapping) and key in over):
            continue  # the base model states it already
        e.set((SECTION, key), value)
    return e
