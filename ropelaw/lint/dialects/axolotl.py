"""axolotl fine-tuning YAML: ``base_model`` -> that model's Hugging Face config.json.

The config comes from a local directory (``base_model`` is a path with a config.json), the
Hugging Face cache (``$HF_HUB_CACHE``, ``$HF_HOME/hub`` or ``~/.cache/huggingface/hub``) when the
model is there, or the shipped table of base models (``presets/axolotl.json``: the RoPE of each
Hub repository that litgpt==0.5.13's named configs encode); never a
download. It is read as any Hugging Face config (the HF dialect), then
``overrides_of_model_config`` / ``model_config`` keys replace its keys, as axolotl passes them
to ``AutoConfig``. ``sequence_len`` is the fine-tuning length: when it exceeds the model's
training length it is a tuning run at that length (``--tune``). dtype: ``bf16`` / ``fp16`` (true
or auto), else the base config's ``torch_dtype``.
"""

from __future__ import annotations

import glob
import json
import os
from dataclasses import replace
from typing import Any, Mapping

from ..loader import LoadedConfig, NotARopeConfig, Overrides, Value
from ._framework import Doc, dialect, presets

NAME = "axolotl"


def detect(data: Mapping) -> bool:
    return isinstance(data.get("base_model"), str) and ("sequence_len" in data or "datasets" in data)


def hf_config(base: str) -> tuple[dict, str] | None:
    """``(config dict, where it came from)`` for ``base`` without the network, or None."""
    if os.path.isdir(base) and os.path.isfile(os.path.join(base, "config.json")):
        path = os.path.join(base, "config.json")
        with open(path, encoding="utf-8") as fh:
            return json.load(fh), path
    hub = os.environ.get("HF_HUB_CACHE") or os.path.join(
        os.environ.get("HF_HOME", os.path.join(os.path.expanduser("~"), ".cache", "huggingface")), "hub")
    snaps = sorted(glob.glob(os.path.join(hub, "models--" + base.replace("/", "--"), "snapshots", "*", "config.json")),
                   key=os.path.getmtime)
    if snaps:
        with open(snaps[-1], encoding="utf-8") as fh:
            return json.load(fh), snaps[-1]
    entry = presets("axolotl")["presets"].get(base)
    if entry is not None:
        return dict(entry["values"]), entry["source"]
    return None


def load(doc: Doc, o: Overrides) -> LoadedConfig:
    from ..loader import load_mapping

    base_v = doc.get("base_model", expect="str")
    got = hf_config(str(base_v.raw))
    if got is None:
        known = ", ".join(list(presets("axolotl")["presets"])[:6])
        raise NotARopeConfig(f"{doc.path}: base_model {base_v.raw!r} is not a local path, not in the Hugging Face "
                             f"cache and not in ropelaw's table of common bases ({known}, ...); pass its config.json")
    hf, origin = got
    overrides: dict[str, str] = {}
    for section in ("overrides_of_model_config", "model_config"):
        sec = doc.raw(section)
        if isinstance(sec, Mapping):
            for k, v in sec.items():
                hf[str(k)] = v
                overrides[str(k)] = f"{section}.{k}"
    cfg = load_mapping(hf, {}, path=doc.path, fmt=doc.fmt, dialect="hf")
    src = f"base_model {base_v.raw!r} ({origin})"

    def repoint(v: Value | None) -> Value | None:
        if v is None or v.key is None and not v.note:
            return v
        top = (v.key or "").split(".")[0]
        if top in overrides:
            line, col = doc.at(tuple(overrides[top].split(".")))
            return Value(v.raw, overrides[v.key] if v.key in overrides else f"{overrides[top].split('.')[0]}.{v.key}",
                         line, col, v.note, v.expect)
        what = f"{v.key} of {src}" if v.key else f"{v.note} [{src}]"
        return Value(v.raw, None, base_v.line, base_v.column, what if v.key is None else
                     (what + (f"; {v.note}" if v.note else "")), v.expect)
    layers = [replace(g, d=repoint(g.d), base=repoint(g.base), scheme=repoint(g.scheme), block=repoint(g.block),
                      window=repoint(g.window), params={k: repoint(p) for k, p in g.params.items()})
              for g in cfg.layers]
    inputs = [repoint(v) for v in cfg.inputs if (v.key or "").split(".")[0] in overrides] + doc.inputs
    seq = doc.get("sequence_len", expect="int")
    train = repoint(cfg.train_len)
    tune = None
    notes = list(cfg.notes)
    entry = presets("axolotl")["presets"].get(str(base_v.raw))
    if entry is not None and origin == entry["source"] and entry.get("note"):
        notes.append(f"{base_v.raw}: {entry['note']}")
    if o.train is not None:
        train = Value(o.train, None, 1, 1, "--train", "int")
    if o.tune is not None:
        tune = Value(o.tune, None, 1, 1, "--tune", "int")
    elif seq is not None and seq.number() is not None and train.number() is not None and seq.number() > train.number():
        tune = Value(seq.raw, seq.key, seq.line, seq.column, "fine-tuning length above the training length", "int")
    elif seq is not None:
        notes.append(f"sequence_len {seq.raw} is within the base model's training length: no context extension")
    target = Value(o.target, None, 1, 1, "--target", "int") if o.target is not None else repoint(cfg.target)
    dtype = None
    for name in ("bf16", "fp16"):
        if doc.raw(name) in (True, "auto", "true"):
            v = doc.get(name, expect="any")
            dtype = Value(name if v.raw is not True else name, v.key, v.line, v.column,
                          "auto: bf16 where the GPU supports it" if v.raw == "auto" else "", "str")
            break
    if dtype is None and o.dtype is not None:
        dtype = Value(o.dtype, None, 1, 1, "--dtype", "str")
    return replace(cfg, arch=f"axolotl {base_v.raw}", kind="training", head_dim=repoint(cfg.head_dim), layers=layers,
                   max_pos=repoint(cfg.max_pos), original_max=repoint(cfg.original_max), train_len=train,
                   target=target, tune_len=tune, dtype=dtype if dtype is not None else repoint(cfg.dtype),
                   inputs=inputs, notes=notes)


DIALECT = dialect(NAME, detect, load=load)
