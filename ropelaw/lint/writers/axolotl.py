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
    from ..dialects.axolotl import hf_config
    from . import hf

    e = Edit("axolotl", option.name)
    if option.name == "train":
        e.set(("sequence_len",), target)
        e.notes.append("sequence_len above the base model's training length is a tuning run at that length")
        return e
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
    for path, value in inner.changes:
        key = path[-1] if len(path) == 1 else None
        if key is None:  # a nested key (rope_parameters.*): axolotl replaces top-level keys only
            return refuse("axolotl", option.name, f"cannot state {'.'.join(path)} as an override")
        e.set((SECTION, key), None if value is DELETE else value)
    e.notes.extend(inner.notes)
    return e

