"""axolotl fine-tuning YAML: ``base_model`` -> that model's Hugging Face config.json.

The config comes from a local directory (``base_model`` is a path with a config.json),
``--model-config``, the Hugging Face cache, or the shipped table of base models
(``lint/model_config.py``); never a download; none of them: RV031. It is read as any Hugging
Face config (the HF dialect), then ``overrides_of_model_config`` / ``model_config`` keys replace
its keys, as axolotl passes them to ``AutoConfig``. ``sequence_len`` is the length this
fine-tuning run trains at (axolotl packs and truncates samples to it): the tuning length
(``tune_len``) of a fine-tune of ``base_model``, whose own training length stays the model's.
Past that length it is a context extension (Liu et al.'s tuning length); within it, the bound is
the pre-trained model's. dtype: ``bf16`` / ``fp16`` (true or auto), else the base config's
``torch_dtype``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from ..model import LoadedConfig, Overrides, Value
from ..model_config import hf_model_config, needed, preset_note
from ._framework import Doc, dialect

NAME = "axolotl"


def detect(data: Mapping) -> bool:
    return isinstance(data.get("base_model"), str) and ("sequence_len" in data or "datasets" in data)


def hf_config(base: str, given: str | None = None) -> tuple[dict, str] | None:
    """``(config dict, where it came from)`` of ``base_model`` (:func:`ropelaw.lint.model_config.hf_model_config`:
    local directory, ``--model-config``, Hugging Face cache, presets), or None; kept for the plan writers."""
    return hf_model_config(base, given)


def load_with_model(doc: Doc, o: Overrides, name_v: Value, hf: dict, origin: str, overrides: dict[str, str],
                    computed: dict, arch: str) -> LoadedConfig:
    """The Hugging Face config ``hf`` of the model named at ``name_v`` (from ``origin``), read by the HF
    dialect, each value pointing back at this document: ``overrides`` (hf key -> dotted key of this
    file that replaced it), ``computed`` (hf key -> (the key of this file that made the framework
    compute it, how)), the rest at ``name_v``. Lengths: the model's; tuning and dtype: the caller's."""
    from ..loader import load_mapping

    cfg = load_mapping(hf, {}, path=doc.path, fmt=doc.fmt, dialect="hf")
    src = f"{name_v.key} {name_v.raw!r} ({origin})"

    def repoint(v: Value | None) -> Value | None:
        if v is None or v.key is None and not v.note:
            return v
        top = (v.key or "").split(".")[0]
        if top in overrides:
            line, col = doc.at(tuple(overrides[top].split(".")))
            return Value(v.raw, overrides[v.key] if v.key in overrides else f"{overrides[top]}{v.key[len(top):]}",
                         line, col, v.note, v.expect)
        if top in computed:
            at, why = computed[top]
            return Value(v.raw, None, at.line, at.column, f"{v.key or v.note} from {at.key} {at.raw!r}: {why}",
                         v.expect)
        what = f"{v.key} of {src}" if v.key else f"{v.note} [{src}]"
        return Value(v.raw, None, name_v.line, name_v.column, what if v.key is None else
                     (what + (f"; {v.note}" if v.note else "")), v.expect)
    layers = [replace(g, d=repoint(g.d), base=repoint(g.base), scheme=repoint(g.scheme), block=repoint(g.block),
                      window=repoint(g.window), chunk=repoint(g.chunk),
                      params={k: repoint(p) for k, p in g.params.items()})
              for g in cfg.layers]
    inputs = [repoint(v) for v in cfg.inputs if (v.key or "").split(".")[0] in overrides] + doc.inputs
    notes = list(cfg.notes)
    note = preset_note(str(name_v.raw), origin)
    if note:
        notes.append(note)
    train = Value(o.train, None, 1, 1, "--train", "int") if o.train is not None else repoint(cfg.train_len)
    target = Value(o.target, None, 1, 1, "--target", "int") if o.target is not None else repoint(cfg.target)
    return replace(cfg, arch=arch, kind="training", head_dim=repoint(cfg.head_dim), layers=layers,
                   max_pos=repoint(cfg.max_pos), original_max=repoint(cfg.original_max), train_len=train,
                   target=target, tune_len=None, dtype=repoint(cfg.dtype), inputs=inputs, notes=notes,
                   considered=sorted(doc.considered))


def load(doc: Doc, o: Overrides) -> LoadedConfig:
    base_v = doc.get("base_model", expect="str")
    got = hf_model_config(str(base_v.raw), o.model_config)
    if got is None:
        raise needed(doc.path, base_v)
    hf, origin = got
    overrides: dict[str, str] = {}
    for section in ("overrides_of_model_config", "model_config"):
        sec = doc.raw(section)
        if isinstance(sec, Mapping):
            for k, v in sec.items():
                hf[str(k)] = v
                overrides[str(k)] = f"{section}.{k}"
    cfg = load_with_model(doc, o, base_v, hf, origin, overrides, {}, f"axolotl {base_v.raw}")
    notes = list(cfg.notes)
    seq = doc.get("sequence_len", expect="int")
    tune = None
    if o.tune is not None:
        tune = Value(o.tune, None, 1, 1, "--tune", "int")
    elif seq is not None:
        tune = fine_tune_length(seq, cfg.train_len, notes, "axolotl")
    dtype = None
    for name in ("bf16", "fp16"):
        if doc.raw(name) in (True, "auto", "true"):
            v = doc.get(name, expect="any")
            dtype = Value(name, v.key, v.line, v.column, "auto: bf16 where the GPU supports it" if v.raw == "auto" else "",
                          "str")
            break
    if dtype is None and o.dtype is not None:
        dtype = Value(o.dtype, None, 1, 1, "--dtype", "str")
    return replace(cfg, tune_len=tune, dtype=dtype if dtype is not None else cfg.dtype, notes=notes,
                   inputs=cfg.inputs, considered=sorted(doc.considered))


def fine_tune_length(seq: Value, train: Value, notes: list, framework: str) -> Value:
    """``tune_len`` of a fine-tune of a pre-trained model running at ``seq`` tokens: a context extension
    past the model's training length ``train``, else a run within it (kept and said; the bound is the
    pre-trained model's)."""
    s, t = seq.number(), train.number()
    if s is not None and t is not None and s > t:
        return Value(seq.raw, seq.key, seq.line, seq.column, "the fine-tuning length, past the model's training "
                                                             "length: a context extension", "int")
    if s is not None and t is not None:
        notes.append(f"{framework} fine-tunes at {seq.key} {s:,.0f} tokens, within the model's training length "
                     f"{t:,.0f} ({train.where}): no context extension")
    return Value(seq.raw, seq.key, seq.line, seq.column, "the fine-tuning length", "int")


DIALECT = dialect(NAME, detect, load=load)
