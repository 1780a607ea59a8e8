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

A training config (``stage`` or ``do_train``) fine-tunes the named model at ``cutoff_len`` (the tuning
length; a context extension past the model's training length); an inference config (``llamafactory-cli
chat``: neither key) has no ``model_max_length``, and ``configure_rope`` then scales by 2; an export
(``export_dir``) has one only when ``cutoff_len`` is given (``hparams/parser.py`` 563-565). A v1 config
(``llamafactory/v1``: the model is ``model:``, with ``model_class`` / ``peft_config`` / ``train_dataset``
...) loads that model's config unchanged and fine-tunes it at ``cutoff_len`` (default 2,048), in bf16
unless ``bf16: false``. Unless ``train_from_scratch: true`` (``hparams/model_args.py``),
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


V1_KEYS = ("model_class", "peft_config", "kernel_config", "dist_config", "init_config", "quant_config",
           "train_dataset", "micro_batch_size", "sample_backend", "batching_strategy")  # llamafactory/v1/config/


def detect(data: Mapping) -> bool:
    return (isinstance(data.get("model_name_or_path"), str) and any(
        k in data for k in ("stage", "cutoff_len", "finetuning_type", "template"))) or is_v1(data)


def is_v1(data: Mapping) -> bool:
    """A LLaMA-Factory v1 config (``llamafactory/v1/config/model_args.py``: the model is ``model:``)."""
    return isinstance(data.get("model"), str) and any(k in data for k in V1_KEYS)


def configure_rope(config: dict, rope_scaling: str, model_max_length: int | None) -> tuple[dict | None, str]:
    """``(the new rope_scaling keys to set, what happened)``: llamafactory==0.9.5 ``configure_rope``; None when
    it changes nothing. ``model_max_length`` None is an inference or export run (factor 2)."""
    rs = config.get("rope_scaling")
    if isinstance(rs, Mapping) and "original_max_position_embeddings" in rs:
        old, where = rs["original_max_position_embeddings"], "rope_scaling.original_max_position_embeddings"
    elif "max_position_embeddings" in config:
        old, where = config["max_position_embeddings"], "max_position_embeddings"
    else:
        return None, "the model config has no max_position_embeddings: LLaMA-Factory scales nothing"
    if model_max_length is None:
        factor, how = 2.0, "factor 2 (an inference run: no model_max_length)"
    elif model_max_length <= old:
        return None, (f"model_max_length {model_max_length:,} <= the model's {where} {old:,}: LLaMA-Factory "
                      "disables rope scaling")
    else:
        factor = float(math.ceil(model_max_length / old))
        how = f"factor ceil({model_max_length:,} / {where} {old:,}) = {factor:g}"
    kw: dict[str, Any] = {"rope_type": rope_scaling, "factor": factor}
    if rope_scaling in ("dynamic", "yarn"):
        kw["original_max_position_embeddings"] = old
    elif rope_scaling == "llama3":
        kw.update(original_max_position_embeddings=old, low_freq_factor=1.0, high_freq_factor=4.0)
    return {"rope_scaling": kw, "max_position_embeddings": old * factor}, (
        f"{how}, max_position_embeddings {old * factor:,.0f} ({PKG} configure_rope)")


def model_max_length(doc: Doc) -> tuple[Value | None, str]:
    """``(model_max_length, the run)``, as ``hparams/parser.py`` sets it: a training config (``stage`` or
    ``do_train``, ``llamafactory-cli train``): ``cutoff_len`` (default 2,048; less 1 with ``packing`` /
    ``neat_packing``, ``DataArguments.__post_init__``); an export (``export_dir``, ``llamafactory-cli export``):
    ``cutoff_len`` when given and ``export_device`` is cpu (the default), else none; otherwise an inference
    config (``llamafactory-cli chat``): none."""
    cut = doc.get("cutoff_len", expect="int")
    kind = "train" if doc.has("stage") or doc.has("do_train") else "export" if doc.has("export_dir") else "infer"
    if kind == "infer" or (kind == "export" and (cut is None or doc.raw("export_device") not in (None, "cpu"))):
        return None, kind
    packing = any(doc.raw(k) is True for k in ("packing", "neat_packing"))
    n = cut.number() if cut is not None else DEFAULT_CUTOFF
    if n is None:
        return cut, kind  # not a number: the value rules say so
    mml = int(n) - 1 if packing else int(n)
    return Value(mml, cut.key if cut else None, cut.line if cut else 1, cut.column if cut else 1,
                 ("cutoff_len - 1 (packing)" if packing else "") if cut else
                 f"cutoff_len default {DEFAULT_CUTOFF:,} ({PKG} DataArguments)" + (" - 1 (packing)" if packing else ""),
                 "int"), kind


def rope_scaling(doc: Doc, hf: dict, mml: int | None) -> tuple[dict, dict, list, list]:
    """``(config, computed, notes, unread)`` after ``rope_scaling`` (:func:`configure_rope`)."""
    rs_v = doc.get("rope_scaling", expect="any")
    if rs_v is None:
        return hf, {}, [], []
    if not (isinstance(rs_v.raw, str) and rs_v.raw.strip().lower() in SCHEMES):
        return hf, {}, [], [Value(rs_v.raw, rs_v.key, rs_v.line, rs_v.column,
                                  f"{PKG} takes rope_scaling as one of {', '.join(SCHEMES)}", "any")]
    change, why = configure_rope(hf, rs_v.raw.strip().lower(), mml)
    if change is None:
        return hf, {}, [f"rope_scaling {rs_v.raw}: {why}"], []
    return {**hf, **change}, {"rope_scaling": (rs_v, why), "max_position_embeddings": (rs_v, why)}, \
        [f"rope_scaling {rs_v.raw}: {why}"], []


def dtype_of(doc: Doc, o: Overrides, default: str | None = None) -> Value | None:
    """``pure_bf16`` (parameters in bf16), ``bf16`` / ``fp16`` (the model loaded in that dtype), else
    ``default`` (v1: ``bf16`` is true unless set false), else --dtype."""
    for key, name in (("pure_bf16", "bf16"), ("bf16", "bf16"), ("fp16", "fp16")):
        v = doc.get(key, expect="any")
        if v is not None and v.raw is True:
            return Value(name, v.key, v.line, v.column,
                         "parameters in bf16 (no AMP)" if key == "pure_bf16" else f"model loaded in {name}", "str")
    if default is not None and doc.raw("bf16") is None:
        return Value(default, None, 1, 1, f"bf16 default true ({PKG} llamafactory/v1/config/training_args.py)", "str")
    return Value(o.dtype, None, 1, 1, "--dtype", "str") if o.dtype is not None else None


def load(doc: Doc, o: Overrides) -> LoadedConfig:
    from dataclasses import replace

    from .axolotl import fine_tune_length

    if is_v1(doc.data):
        return load_v1(doc, o)
    name_v = doc.require("model_name_or_path", expect="str")  # detect(): a string
    model = resolve(doc.path, name_v, o.model_config, doc.get("model_revision", expect="str"))
    mml_v, kind = model_max_length(doc)
    mml = int(mml_v.raw) if mml_v is not None and isinstance(mml_v.raw, int) else None
    hf, computed, notes, unread = rope_scaling(doc, dict(model.data), mml)
    cfg = read_model(doc, o, name_v, replace(model, data=hf), {}, computed, f"llamafactory {name_v.raw}")
    scratch = doc.get("train_from_scratch", expect="bool")
    train, tune = cfg.train_len, None
    if o.tune is not None:
        tune = Value(o.tune, None, 1, 1, "--tune", "int")
    elif scratch is not None and scratch.raw is True and o.train is None and mml_v is not None:
        train = mml_v
        at = f"{mml:,} tokens" if mml is not None else f"{mml_v.where} {mml_v.raw!r} (not a whole number)"
        notes.append(f"train_from_scratch: LLaMA-Factory pre-trains a new model from {name_v.raw}'s config at {at}")
    elif o.train is None and mml_v is not None and kind == "train":
        tune = fine_tune_length(mml_v, train, notes, "LLaMA-Factory")
    elif kind != "train":
        notes.append(f"an {'export' if kind == 'export' else 'inference'} config (no stage / do_train): not a "
                     "training run")
    layers = cfg.layers
    if train is not cfg.train_len:
        from ._framework import pretraining_with_scheme

        g = layers[0]
        if g.scheme.raw not in (None, "default"):
            pws = pretraining_with_scheme(g.scheme, None, "LLaMA-Factory (train_from_scratch)",
                                          "train_from_scratch: the run is the model's pre-training", scratch, notes)
            layers = [replace(x, pretrained_with_scheme=pws) for x in layers]
    return replace(cfg, train_len=train, tune_len=tune, dtype=dtype_of(doc, o) or cfg.dtype, layers=layers,
                   notes=list(cfg.notes) + notes, unread=list(cfg.unread) + unread)


def load_v1(doc: Doc, o: Overrides) -> LoadedConfig:
    """A v1 config (``llamafactory/v1``, ``llamafactory==0.9.5``): ``core/model_engine.py`` loads
    ``AutoConfig.from_pretrained(model, trust_remote_code)`` and applies no RoPE scaling; the run fine-tunes
    that model at ``cutoff_len`` (``config/training_args.py``, default 2,048) in bf16 unless ``bf16: false``."""
    from dataclasses import replace

    from .axolotl import fine_tune_length

    name_v = doc.require("model", expect="str")  # is_v1(): a string
    model = resolve(doc.path, name_v, o.model_config)
    cfg = read_model(doc, o, name_v, model, {}, {}, f"llamafactory v1 {name_v.raw}")
    notes = list(cfg.notes)
    cut = doc.get("cutoff_len", expect="int") or Value(
        DEFAULT_CUTOFF, None, name_v.line, name_v.column, f"cutoff_len default {DEFAULT_CUTOFF:,} ({PKG} "
                                                          "llamafactory/v1/config/training_args.py)", "int")
    tune = Value(o.tune, None, 1, 1, "--tune", "int") if o.tune is not None else (
        fine_tune_length(cut, cfg.train_len, notes, "LLaMA-Factory v1") if o.train is None else None)
    return replace(cfg, tune_len=tune, dtype=dtype_of(doc, o, "bf16") or cfg.dtype, notes=notes)


DIALECT = dialect(NAME, detect, load=load)
