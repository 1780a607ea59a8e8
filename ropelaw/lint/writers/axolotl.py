"""axolotl YAML: the Hugging Face keys of an option under ``overrides_of_model_config`` (the inverse of
``dialects.axolotl``, which lays those keys over the base model's config.json as axolotl passes them
to ``AutoConfig``), and ``sequence_len`` for continued training at the target. The base model's
config.json is read the way the loader reads it (local path, Hugging Face cache, shipped table);
the keys are written in the ``rope_scaling`` form, which transformers 4.x and 5.x both read, with the
model's ``rope_theta`` in it: axolotl 0.18.0 sets overrides after transformers 5 built ``rope_parameters``,
which a ``rope_scaling`` without its base replaces whole (the rotary cannot be built), and where a
top-level ``rope_theta`` changes nothing (``dialects/axolotl.py`` ``set_overrides``)."""

from __future__ import annotations

import math
from typing import Any
from collections.abc import Mapping

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
    changes = _base_in_mapping(dict(inner.changes), data, base_cfg, cfg)
    if changes is None:
        return refuse("axolotl", option.name, "the base model's rope_theta is not known")
    why = _partial_in_mapping(changes, base_cfg, cfg)
    if why is not None:
        return refuse("axolotl", option.name, why)
    for path, value in changes.items():
        key = path[-1] if len(path) == 1 else None
        if key is None:  # a nested key (rope_parameters.*): axolotl replaces top-level keys only
            return refuse("axolotl", option.name, f"cannot state {'.'.join(path)} as an override")
        value = None if value is DELETE else value
        if base_cfg.get(key) == value and not (isinstance(over, Mapping) and key in over):
            continue  # the base model states it already
        e.set((SECTION, key), value)
    return e


def model_base(data: Mapping, base_cfg: Mapping, cfg: Any) -> float | None:
    """The base the model runs, to write into the mapping: the value the loader read (at its key in the axolotl
    file ``data``, else the base model's key the runtime reads, ``hf.theta_keys``) when it reads back as the analysed
    base, else the analysed base as written (``hf.written_base``, as the Hugging Face writer writes it). For an odd
    rotary count r read as r + 1 dims the analysed base is the effective base^((r + 1)/r), never the model's own."""
    from .hf import theta_keys, written_base

    g = cfg.layers[0] if getattr(cfg, "layers", None) else None
    analysed = g.base.number() if g is not None else None
    if g is None or analysed is None:
        return None
    if g.base.key:
        stated: Any = data
        for part in g.base.key.split("."):
            stated = stated.get(part) if isinstance(stated, Mapping) else None
    else:
        stated = base_cfg.get(theta_keys(base_cfg, cfg)[0])
    written = written_base(analysed, g.written_power)
    if isinstance(stated, (int, float)) and not isinstance(stated, bool) and stated > 0 \
            and math.isclose(float(stated) ** (1 / g.written_power), analysed, rel_tol=1e-9):
        return float(stated)  # the model's own bytes: they read back as the analysed base
    return written


def _base_in_mapping(changes: dict, data: Mapping, base_cfg: Mapping, cfg: Any) -> dict | None:
    """``changes`` with the base inside the RoPE mapping they write (a new ``rope_theta``, else the model's), and
    no top-level ``rope_theta``: a changed base alone is written as the model's own mapping with it. None when the
    base is needed and not known."""
    theta = changes.pop(("rope_theta",), None)
    changed = theta is not None and theta is not DELETE and base_cfg.get("rope_theta") != theta
    if theta is None or theta is DELETE:
        theta = model_base(data, base_cfg, cfg)
    keys = [k for k in changes if k[-1] in ("rope_scaling", "rope_parameters")]
    if changed and not keys:
        own = base_cfg.get("rope_scaling") or base_cfg.get("rope_parameters")
        changes[("rope_scaling",)] = dict(own) if isinstance(own, Mapping) else {"rope_type": "default"}
        keys = [("rope_scaling",)]
    for k in keys:
        value = changes[k]
        if isinstance(value, Mapping) and "rope_theta" not in value:
            if theta is None:
                return None
            changes[k] = {**value, "rope_theta": theta}
    return changes


def _partial_in_mapping(changes: dict, base_cfg: Mapping, cfg: Any) -> str | None:
    """The model's partial rotary factor inside each RoPE mapping ``changes`` writes: transformers 5 keeps it in
    ``rope_parameters``, which axolotl's override replaces whole (measured under 5.23.0: GLM-4.5 with head_dim 130 x
    0.5 and a ``rope_scaling`` override without it builds 65 frequencies over the whole head, not 33 over 66 dims).
    Why the mapping cannot be written (a factor the model takes from its class default, not stated), or None."""
    keys = [k for k in changes if k[-1] in ("rope_scaling", "rope_parameters") and isinstance(changes[k], Mapping)
            and "partial_rotary_factor" not in changes[k]]
    if not keys:
        return None
    rp = base_cfg.get("rope_parameters")
    stated = next((v for v in (base_cfg.get("partial_rotary_factor"), base_cfg.get("rotary_pct"),
                               rp.get("partial_rotary_factor") if isinstance(rp, Mapping) else None)
                   if isinstance(v, (int, float)) and not isinstance(v, bool)), None)
    g = cfg.layers[0] if getattr(cfg, "layers", None) else None
    head = cfg.head_dim.number() if getattr(cfg, "head_dim", None) is not None else None
    if stated is None:
        if g is not None and head is not None and g.d.number() is not None and g.d.number() < head:
            return (f"the model rotates {g.d.number():g} of {head:g} dims by its class's partial rotary factor, "
                    "which an override mapping replaces under transformers 5 and the base model does not state")
        return None
    for k in keys:
        changes[k] = {**changes[k], "partial_rotary_factor": float(stated)}
    return None
