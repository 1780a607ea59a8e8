"""LLaMA-Factory YAML (llamafactory==0.9.5): ``rope_scaling`` (``linear``, ``dynamic``, ``yarn``, ``llama3``)
and ``cutoff_len`` are its RoPE keys (the inverse of ``dialects.llamafactory``). Its ``configure_rope``
computes the factor itself, ``ceil(cutoff_len / original)``, and fine-tunes at ``cutoff_len``; so an
option is written only when that factor is the plan's (PI and YaRN at s = L/T when L/T is whole), else
refused with both factors. ``train``: ``cutoff_len`` = target and no ``rope_scaling``. With ``packing``
LLaMA-Factory trains at ``cutoff_len - 1``: the writer adds 1."""

from __future__ import annotations

import math
from typing import Any
from collections.abc import Mapping

from .edit import Edit, refuse


def edit(data: Mapping, cfg: Any, option: Any, target: int) -> Edit:
    from ..dialects.llamafactory import SCHEMES

    name, spec = option.name, option.spec
    packing = any(data.get(k) is True for k in ("packing", "neat_packing"))
    cutoff = target + 1 if packing else target
    e = Edit("llamafactory", name)
    if name == "train" and option.parameters.get("base") is None:
        if data.get("rope_scaling") is not None:  # configure_rope would recompute the factor from the new cutoff_len
            return refuse("llamafactory", name,
                          f"LLaMA-Factory recomputes rope_scaling {data['rope_scaling']}'s factor "
                                                "from cutoff_len (configure_rope): training at the target changes the "
                                                "scheme the plan keeps; pick that scheme's option instead")
        e.set(("cutoff_len",), cutoff)
        return e
    if name not in SCHEMES:
        return refuse("llamafactory", name, "LLaMA-Factory's RoPE keys are rope_scaling (linear, dynamic, yarn, "
                                            "llama3) and cutoff_len; the model's base is in its config.json")
    t = spec.train_len
    lf = float(math.ceil(target / t))
    want = float(spec.param("factor"))
    if lf != want:
        return refuse("llamafactory", name, f"LLaMA-Factory sets the factor to ceil(cutoff_len / {t:,}) = {lf:g} "
                                            f"(configure_rope); this plan's {name} factor is {want:g}")
    if name == "llama3" and (spec.param("low_freq_factor", 1.0), spec.param("high_freq_factor", 4.0)) != (1.0, 4.0):
        return refuse("llamafactory", name, "LLaMA-Factory writes the Llama 3.1 bands with low 1, high 4 only")
    e.set(("rope_scaling",), name)
    e.set(("cutoff_len",), cutoff)
    e.notes.append(f"LLaMA-Factory fine-tunes at cutoff_len {cutoff:,} with factor ceil({target:,} / {t:,}) = {lf:g}")
    return e
