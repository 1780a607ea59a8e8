"""litgpt YAML (0.5.13): an option as ``model_config`` keys (``rope_base``, ``rope_condense_ratio``,
``rope_adjustments``, ``block_size``) and ``train.max_seq_length`` (the inverse of ``dialects.litgpt``).

A file that names a model (``model_name``) gets litgpt's ``Config.from_name`` whole; stating other RoPE
settings needs a complete ``model_config`` (pretrain.py: it replaces the named config), which ropelaw
does not have: refused, except continued training at the target within that model's ``block_size``.
``rope_condense_ratio`` is an int in litgpt (``Config``): a linear factor that is not whole is refused.
"""

from __future__ import annotations

from typing import Any
from collections.abc import Mapping

from .edit import Edit, refuse

MC = "model_config"


def edit(data: Mapping, cfg: Any, option: Any, target: int) -> Edit:
    name, spec = option.name, option.spec
    e = Edit("litgpt", name)
    mc = data.get(MC)
    if name == "train":
        e.set(("train", "max_seq_length"), target)
        if isinstance(mc, Mapping) and mc:
            e.set((MC, "block_size"), max(target, int(mc.get("block_size") or 0)))
            if option.parameters.get("base") is not None:
                e.set((MC, "rope_base"), spec.base)
        elif (option.parameters.get("base") is not None
              or (cfg.max_pos is not None and (cfg.max_pos.number() or 0) < target)):
            return refuse("litgpt", name, f"the named model's block_size is below {target:,} or its base must change: "
                                          "that needs a complete model_config (litgpt pretrain --model_config)")
        return e
    if not (isinstance(mc, Mapping) and mc):
        return refuse("litgpt", name, "the file names a model (model_name): changing its RoPE needs a complete "
                                      "model_config (litgpt pretrain: it replaces the named Config), which "
                                      "ropelaw does "
                                      "not have")
    t = spec.train_len
    clear = [k for k in ("rope_adjustments",) if mc.get(k) is not None]
    if name in ("base", "ntk"):
        e.set((MC, "rope_base"), spec.base if name == "base" else option.extra["scaled_base"])
    elif name == "linear":
        s = float(spec.param("factor"))
        if not s.is_integer():
            return refuse("litgpt", name, f"litgpt's rope_condense_ratio is an int; factor {s:g} is not whole")
        e.set((MC, "rope_condense_ratio"), int(s))
    elif name == "yarn":
        e.set((MC, "rope_adjustments"), {"factor": float(spec.param("factor")), "beta_fast": 32.0, "beta_slow": 1.0,
                                         "original_max_seq_len": t})
        clear = []
    elif name == "llama3":
        e.set((MC, "rope_adjustments"), {"factor": float(spec.param("factor")),
                                         "low_freq_factor": float(spec.param("low_freq_factor", 1.0)),
                                         "high_freq_factor": float(spec.param("high_freq_factor", 4.0)),
                                         "original_max_seq_len": t})
        clear = []
    else:
        return refuse("litgpt", name, f"litgpt 0.5.13 has no setting for {name!r} (its rope: base, condense ratio, "
                                      "Llama 3.1 or YaRN adjustments)")
    for k in clear:
        e.set((MC, k), None)
    if name != "linear" and (mc.get("rope_condense_ratio") or 1) != 1:
        e.set((MC, "rope_condense_ratio"), 1)
    e.set((MC, "block_size"), target)
    tuned = name == "yarn" and bool(data.get("initial_checkpoint_dir"))
    if tuned:  # the option's cost: fine-tuning at the target, from the pre-trained weights
        e.set(("train", "max_seq_length"), target)
        e.notes.append(f"train.max_seq_length {target:,}: the option's cost is fine-tuning at the target; YaRN scales "
                       f"from rope_adjustments.original_max_seq_len {t:,}, the length the model was trained at, and "
                       "lint reads this run as that fine-tune")
    elif not (isinstance(data.get("train"), Mapping) and data["train"].get("max_seq_length")):
        e.set(("train", "max_seq_length"), t)  # the training length stays T (block_size alone would say target)
    if name in ("yarn", "linear") and not tuned:
        why = (", and start from the pre-trained weights (initial_checkpoint_dir): without them litgpt pretrain "
               "trains with YaRN from the first step") if name == "yarn" else (
               f" (litgpt states no training length beside rope_condense_ratio, so this file at {target:,} would "
               f"read as a model trained at {target:,}: lint it then with --train {t} --tune {target})")
        e.notes.append(f"train.max_seq_length stays {t:,}: set it to {target:,} for the fine-tuning the option "
                       f"costs{why}")
    return e
