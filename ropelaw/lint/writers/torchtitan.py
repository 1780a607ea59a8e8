"""torchtitan TOML (0.2.2): ``[training] seq_len`` is the one RoPE-relevant key a job config has.

The rotary settings (``rope_theta``, ``rope_scaling_args``, YaRN's ``rope_factor``) live in the model
flavor (``torchtitan/models/<name>/__init__.py``); ``torchtitan.config.job_config.Model`` has only
``name``, ``flavor``, ``hf_assets_path``, ``tokenizer_path``, ``converters`` and
``print_after_conversion``. So continued training at the target is written (``seq_len``), and every
option that changes the RoPE is refused with that reason."""

from __future__ import annotations

from typing import Any
from collections.abc import Mapping

from .edit import Edit, refuse


def edit(data: Mapping, cfg: Any, option: Any, target: int) -> Edit:
    if option.name != "train" or option.parameters.get("base") is not None:
        return refuse("torchtitan", option.name,
                      "torchtitan 0.2.2 takes RoPE settings from the model flavor "
                      "(torchtitan/models/<name>/__init__.py), "
                      "no TOML key sets them; define a flavor with them, or pick option 'train'")
    e = Edit("torchtitan", option.name).set(("training", "seq_len"), target)
    ck = data.get("checkpoint")
    if not isinstance(ck, Mapping):
        ck = {}
    if not (ck.get("enable") and (ck.get("initial_load_path") or ck.get("initial_load_in_hf"))):
        e.notes.append("[checkpoint] loads no initial weights: torchtitan trains from scratch at seq_len; set "
                       "enable = true and initial_load_path to continue from the pre-trained model")
    return e
