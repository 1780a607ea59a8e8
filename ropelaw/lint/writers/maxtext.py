"""MaxText YAML: an option as the keys ``dialects.maxtext`` reads (``rope_max_timescale``,
``rope_linear_scaling_factor``, ``rope_type: yarn`` with ``rope_factor`` / ``original_max_position_embeddings``
/ ``max_position_embeddings`` / ``rope_attention_scaling: true`` (YaRN's 0.1 ln s + 1 on q/k), and
``max_target_length`` for continued training, and for YaRN's fine-tuning at the target in a run that loads
weights: ``dialects.maxtext`` reads it then as the tuning length past the original length). MaxText merges \
``configs/models/<model_name>.yml`` over
the config file unless ``override_model_config: true``, and that switch changes which file wins for
every key both set: a file with a ``model_name`` and without it gets only ``max_target_length``, and
the other options are refused with that reason."""

from __future__ import annotations

from typing import Any
from collections.abc import Mapping

from .edit import Edit, refuse


def edit(data: Mapping, cfg: Any, option: Any, target: int) -> Edit:
    name, spec = option.name, option.spec
    e = Edit("maxtext", name)
    if name == "train":
        e.set(("max_target_length",), target)
        mp = data.get("max_position_embeddings")
        if str(data.get("rope_type", "")).lower().startswith("yarn") and isinstance(mp, int) and mp < target:
            e.set(("max_position_embeddings",), target)  # YaRN's table must hold the target's positions (RV020)
        if not (data.get("load_parameters_path") or data.get("load_full_state_path")):
            e.notes.append("no load_parameters_path: MaxText trains from scratch at max_target_length; set it to "
                           "continue from the pre-trained weights")
        if option.parameters.get("base") is None:
            return e
    if data.get("model_name") and data.get("override_model_config") is not True:
        return refuse("maxtext", name, "MaxText merges configs/models/<model_name>.yml over this file; set "
                                       "override_model_config: true yourself (every key both files set then takes "
                                       "this file's value), then apply")
    t = spec.train_len
    if name in ("base", "ntk", "train"):
        e.set(("rope_max_timescale",), option.extra["scaled_base"] if name == "ntk" else spec.base)
    elif name == "linear":
        e.set(("rope_linear_scaling_factor",), float(spec.param("factor")))
    elif name == "yarn":
        e.set(("rope_type",), "yarn")
        e.set(("rope_factor",), float(spec.param("factor")))
        e.set(("original_max_position_embeddings",), t)
        e.set(("max_position_embeddings",), target)
        e.set(("rope_attention_scaling",), True)
    else:
        return refuse("maxtext", name, f"MaxText has no key for {name!r} (its rotary: rope_max_timescale, "
                                       "rope_linear_scaling_factor, YaRN, the Llama 3.1 bands of its code)")
    if name != "yarn" and str(data.get("rope_type", "")).lower().startswith("yarn"):
        e.set(("rope_type",), "default")
    if name in ("yarn", "linear"):  # the option's cost: fine-tuning at the target
        keep = f"max_target_length stays {t:,}: set it to {target:,} for the fine-tuning the option costs"
        if name == "linear":
            e.notes.append(f"{keep} (MaxText states no training length beside rope_linear_scaling_factor, so this "
                           f"file at {target:,} would read as a model trained at {target:,}: lint it then with "
                           f"--train {t} --tune {target})")
        elif not (data.get("load_parameters_path") or data.get("load_full_state_path")):
            e.notes.append(f"{keep}, and load the pre-trained weights (load_parameters_path): without them MaxText "
                           "pre-trains with YaRN from the first step")
        else:
            e.set(("max_target_length",), target)
            e.notes.append(f"max_target_length {target:,}: the option's cost is fine-tuning at the target; YaRN scales "
                           f"from original_max_position_embeddings {t:,}, the length the model was trained at, and "
                           "lint reads this run as that fine-tune")
    return e
