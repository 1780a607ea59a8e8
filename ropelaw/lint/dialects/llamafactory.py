"""LLaMA-Factory training YAML (llamafactory==0.9.5): ``model_name_or_path`` names the model, whose
config.json holds the RoPE (read as :mod:`ropelaw.lint.resolve` says: ``--model-config``, a local
directory, the Hugging Face cache at ``model_revision``, else the presets, said by RV032; none: RV031).

``rope_scaling`` (one of ``linear``, ``dynamic``, ``yarn``, ``llama3``: ``extras/constants.py``
``RopeScaling``) is applied to that config by ``model/model_utils/rope.py`` ``configure_rope``
(llamafactory==0.9.5, lines 35-84), mirrored by :func:`configure_rope` below:

- the model's length ``old`` is its ``rope_scaling.original_max_position_embeddings`` when it has
  one, else ``max_position_embeddings``;
- training (``model_max_length`` = ``cutoff_len``, default 2,048, less 1 with ``packing`` /
  ``neat_packing``: ``hparams/data_args.py`` 188-189, ``parser.py`` 518): nothing when it is at most
  ``old`` ("Disabling rope scaling"); else factor ``ceil(model_max_length / old)``,
  ``max_position_embeddings = old * factor``, and a new ``rope_scaling`` replaces the model's:
  ``{rope_type, factor}`` plus ``original_max_position_embeddings: old`` for dynamic and yarn, and
  ``low_freq_factor 1``, ``high_freq_factor 4`` for llama3.

The run fine-tunes the named model at ``cutoff_len`` (the tuning length; a context extension past
the model's training length), unless ``train_from_scratch: true`` (``hparams/model_args.py``),
which pre-trains a new model from that config at ``cutoff_len``, with its scheme from the first
step. dtype: ``pure_bf16`` (parameters in bf16), ``bf16`` / ``fp16`` (the model is loaded in that
compute dtype, ``parser.py`` 512-515).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from ..model import LoadedConfig, Overrides, Value
from ..resolve import read_model, resolve
from ._framework import Doc, dialect

NAME = "llamafactory"
PKG = "llamafactory==0.9.5"
SCHEMES = ("linear", "dynamic", "yarn", "llama3")
DEFAULT_CUTOFF = 2048  # hparams/data_args.py DataArguments.cutoff_len


def detect(data: Mapping) -> bool:
    return isinstance(data.get("model_name_or_path"), str) and any(
        k in data for k in ("stage", "cutoff_len", "finetuning_type", "template"))


def configure_rope(config: dict, rope_scaling: str, model_max_length: int) -> tuple[dict | None, str]:
    """``(the new rope_scaling keys to set, what happened)``: llamafactory==0.9.5 ``configure_rope``
    for a training run (``model_max_length`` set); None when it changes nothing."""
    rs = config.get("rope_scaling")
    if isinstance(rs, Mapping) and "original_max_position_embeddings" in rs:
        old, where = rs["original_max_position_embeddings"], "rope_scaling.original_max_position_embeddings"
    elif "max_position_embeddings" in config:
        old, where = config["max_position_embeddings"], "max_position_embeddings"
    else:
        return None, "the model config has no max_position_embeddings: LLaMA-Factory scales nothing"
    if model_max_length <= old:
        return None, (f"model_max_length {model_max_length:,} <= the model's {where} {old:,}: LLaMA-Factory "
                      "disables rope scaling")
    factor = float(math.ceil(model_max_length / old))
    kw: dict[str, Any] = {"rope_type": rope_scaling, "factor": factor}
    if rope_scaling in ("dynamic", "yarn"):
        kw["original_max_position_embeddings"] = old
    elif rope_scaling == "llama3":
        kw.update(original_max_position_embeddings=old, low_freq_factor=1.0, high_freq_factor=4.0)
    return {"rope_scaling": kw, "max_position_embeddings": old * factor}, (
        f"factor ceil({model_max_length:,} / {where} {old:,}) = {factor:g}, max_position_embeddings "
        f"{old * factor:,.0f} ({PKG} configure_rope)")


def load(doc: Doc, o: Overrides) -> LoadedConfig:
    from dataclasses import replace

    from .axolotl import fine_tune_length

    name_v = doc.get("model_name_or_path", expect="str")
    model = resolve(doc.path, name_v, o.model_config, doc.get("model_revision", expect="str"))
    hf = dict(model.data)
    cut = doc.get("cutoff_len", expect="int")
    packing = any(doc.raw(k) is True for k in ("packing", "neat_packing"))
    n = cut.number() if cut is not None else DEFAULT_CUTOFF
    mml = int(n) - 1 if (n is not None and packing) else (int(n) if n is not None else None)
    mml_v = Value(mml, cut.key if cut else None, cut.line if cut else 1, cut.column if cut else 1,
                  ("cutoff_len - 1 (packing)" if packing else "") if cut else
                  f"cutoff_len default {DEFAULT_CUTOFF:,} ({PKG} DataArguments)" + (" - 1 (packing)" if packing else ""),
                  "int")
    rs_v = doc.get("rope_scaling", expect="any")
    computed: dict[str, tuple[Value, str]] = {}
    notes: list = []
    unread: list = []
    if rs_v is not None:
        if isinstance(rs_v.raw, str) and rs_v.raw.strip().lower() in SCHEMES and mml is not None:
            change, why = configure_rope(hf, rs_v.raw.strip().lower(), mml)
            notes.append(f"rope_scaling {rs_v.raw}: {why}")
            if change is not None:
                hf = {**hf, **change}
                computed = {"rope_scaling": (rs_v, why), "max_position_embeddings": (rs_v, why)}
        else:
            unread.append(Value(rs_v.raw, rs_v.key, rs_v.line, rs_v.column,
                                f"{PKG} takes rope_scaling as one of {', '.join(SCHEMES)}", "any"))
    cfg = read_model(doc, o, name_v, replace(model, data=hf), {}, computed, f"llamafactory {name_v.raw}")
    scratch = doc.get("train_from_scratch", expect="bool")
    train, tune = cfg.train_len, None
    if o.tune is not None:
        tune = Value(o.tune, None, 1, 1, "--tune", "int")
    elif scratch is not None and scratch.raw is True and o.train is None:
        train = mml_v
        notes.append(f"train_from_scratch: LLaMA-Factory pre-trains a new model from {name_v.raw}'s config at "
                     f"{mml:,} tokens")
    elif o.train is None and mml is not None:
        tune = fine_tune_length(mml_v, train, notes, "LLaMA-Factory")
    dtype = None
    for key, name in (("pure_bf16", "bf16"), ("bf16", "bf16"), ("fp16", "fp16")):
        v = doc.get(key, expect="any")
        if v is not None and v.raw is True:
            dtype = Value(name, v.key, v.line, v.column,
                          "parameters in bf16 (no AMP)" if key == "pure_bf16" else f"model loaded in {name}", "str")
            break
    if dtype is None and o.dtype is not None:
        dtype = Value(o.dtype, None, 1, 1, "--dtype", "str")
    layers = cfg.layers
    if train is not cfg.train_len:
        from ._framework import pretraining_with_scheme

        g = layers[0]
        if g.scheme.raw not in (None, "default"):
            pws = pretraining_with_scheme(g.scheme, None, "LLaMA-Factory (train_from_scratch)",
                                          "train_from_scratch: the run is the model's pre-training", scratch, notes)
            layers = [replace(x, pretrained_with_scheme=pws) for x in layers]
    return replace(cfg, train_len=train, tune_len=tune, dtype=dtype or cfg.dtype, layers=layers,
                   notes=list(cfg.notes) + notes, unread=list(cfg.unread) + unread)


DIALECT = dialect(NAME, detect, load=load)
