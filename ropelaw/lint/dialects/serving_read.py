"""A vLLM / SGLang launch's model, read with its overrides at the length served (``serving.py`` says how)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Mapping

from ..model import LoadedConfig, ModelNeeded, Overrides, UnreadConfig, Value
from ..rules.serving import IGNORES, RUNTIME_REFUSES, SERVED_OVERRIDE
from .serving_args import VLLM, Runtime
from .serving_launch import Computed, Launch

__all__ = ["read_launch", "overlay", "problem", "ROPE_KEYS"]

ROPE_KEYS = ("rope_theta", "rope_scaling", "rope_parameters", "partial_rotary_factor", "rotary_emb_base",
             "rotary_pct", "head_dim", "max_position_embeddings")
_BLOCKS = ("rope_scaling", "rope_parameters")


def problem(rule: Any, value: Value, message: str) -> Any:
    """A loader problem of ``rule`` (a Rule of ``rules/serving.py``): ``lint.model.Problem`` where the package has
    it, else ``(rule name, value, message)``, the form the value rules read."""
    from .. import model

    make = getattr(model, "Problem", None)
    return make(rule, value, message) if make is not None else (rule.name, value, message)


def _label(flag: str) -> str:
    return flag.rstrip("=")


def model_value(path: str, launch: Launch, args: dict) -> Value:
    """The model a launch serves, as a Value at its argument (RV031 when it names none or computes it)."""
    from ..model_config import HOW

    rt = launch.runtime
    if "model" not in args:
        if launch.words and not launch.words[0].startswith("-") and not launch.positional_model:
            raise ModelNeeded(f"{path}: {launch.words[0]!r} is given as a positional model to {launch.launcher}, which "
                              "reads the model from --model (vLLM's docker/Dockerfile at vllm-project/vllm@0000977e: "
                              "python3 -m vllm.entrypoints.openai.api_server); name it with --model", *launch.places[0],
                              fix=HOW)
        raise ModelNeeded(f"{path}: {launch.launcher} names no model ({'MODEL or ' if launch.positional_model else ''}"
                          f"{'--model' if rt.name == 'vllm' else '--model-path'}): the runtime's default model is not "
                          "read", *launch.at, fix=HOW)
    raw, at, flag = args["model"]
    if isinstance(raw, Computed) or not isinstance(raw, str):
        raise ModelNeeded(f"{path}: {_label(flag)} {raw!r} is computed by the program, not read here", *at, fix=HOW)
    if raw.strip().lower().endswith(".gguf"):
        raise ModelNeeded(f"{path}: {_label(flag)} {raw!r} is a GGUF: {rt.title} builds its config through "
                          "transformers' GGUF conversion, not modelled here", *at, fix=HOW)
    return Value(raw, _label(flag), at[0], at[1], "", "str")


def gathered_overrides(path: str, sem: str, args: dict, values: dict) -> tuple[dict, dict]:
    """``(config key -> value, config key -> (label, (line, column)))`` of the launch's overrides, in the order
    the runtime applies them (vLLM 0.11.0's --rope-scaling / --rope-theta after --hf-overrides)."""
    ov: dict[str, Any] = {}
    where: dict[str, tuple] = {}
    for role in ("overrides", "rope_scaling", "rope_theta"):
        if role not in values:
            continue
        value, (_, at, flag) = values[role], args[role]
        if isinstance(value, Computed):
            raise UnreadConfig(f"{path}: {_label(flag)} {value!r} is computed by the program, not read here: the "
                               "overrides it makes are unknown", "RV030", *at)
        if role == "overrides":
            for k, v in value.items():
                ov[str(k)], where[str(k)] = v, (f"{_label(flag)}.{k}", at)
        else:
            key = role
            ov[key], where[key] = value, (_label(flag), at)
    return ov, where


def rope_changes(rt_title: str, data: Mapping, ov: Mapping, where: Mapping) -> list:
    """RV042 for each override of a RoPE key (or of max_position_embeddings) that differs from the model's."""
    out = []
    for key, value in ov.items():
        if key.endswith("_config") and isinstance(value, Mapping) and isinstance(data.get(key), Mapping):
            out += rope_changes(rt_title, data[key], {f"{key}.{k}": v for k, v in value.items()},
                                {f"{key}.{k}": (f"{where[key][0]}.{k}", where[key][1]) for k in value})
            continue
        leaf = key.rsplit(".", 1)[-1]
        if leaf not in ROPE_KEYS:
            continue
        was = data.get(leaf)
        if leaf in ("rope_scaling", "rope_parameters"):
            was = data.get("rope_parameters") or data.get("rope_scaling")
        if was == value:
            continue
        label, at = where[key]
        shown = "none" if was is None else repr(was)[:120]
        why = ("raises the length the runtime accepts; the model's frequencies do not change, and it was not trained "
               "past its own length" if leaf == "max_position_embeddings"
               else "the model runs RoPE it was not trained with unless it was tuned for it")
        out.append(problem(SERVED_OVERRIDE, Value(value, label, at[0], at[1], f"{label} on the launch", "any"),
                           f"{label} sets {leaf} to {repr(value)[:120]}; the model's config has {shown}: {why}"))
    return out


def served(launch: Launch, sem: str, hf: Mapping, args: dict, values: dict, problems: list) -> Value:
    """The length served as a Value (at the length argument, else the launcher), RV041 when refused."""
    from .serving_length import allows_longer, derived_length, served_default

    rt = launch.runtime
    derived, how = derived_length(rt, sem, hf)
    asked = values.get("length")
    raw, at, flag = args.get("length", (None, launch.at, ""))
    label = _label(flag) or None
    if isinstance(asked, Computed) or asked is None or asked == -1:
        length, why = served_default(rt, sem, hf, derived)
        said = {None: "no length argument", -1: f"{label} {raw} (fitted to the GPU's memory: at most this)"}
        what = said.get(asked, f"{label} {asked!r} is computed by the program: the longest {rt.title} accepts") \
            if not isinstance(asked, Computed) else f"{label} {asked!r} is computed: the longest {rt.title} accepts"
        return Value(length, None, at[0], at[1], f"{what}: {why or how} ({rt.title} {sem})", "int")
    note = ""
    if asked > derived:
        allowed = allows_longer(rt, hf, asked, launch.env)
        if allowed is None:
            problems.append(problem(RUNTIME_REFUSES, Value(asked, label, at[0], at[1], "", "any"),
                             f"{label} {asked:,} is beyond the model's {derived:,} ({how}): {rt.title} {sem} refuses it "
                             f"(ValueError) unless {rt.allow_long}=1"))
        else:
            note = f"beyond the model's {derived:,}: allowed by {allowed}"
    return Value(asked, label, at[0], at[1], note, "int")


def overlay(rt: Runtime, sem: str, data: Mapping, overrides: Mapping) -> dict:
    """The model's config with ``overrides`` laid over it as the runtime lays them (module docstring)."""
    out = dict(data)
    for key, value in overrides.items():
        current = out.get(key)
        if key in _BLOCKS:
            current = next((out[b] for b in _BLOCKS if isinstance(out.get(b), Mapping)), None)
            for b in _BLOCKS:
                out.pop(b, None)
            merge = rt is not VLLM and isinstance(value, Mapping) and isinstance(current, Mapping)
            out[key] = {**current, **value} if merge else value
        elif isinstance(value, Mapping) and isinstance(current, Mapping) and key.endswith("_config") \
                and not (rt is VLLM and sem == "0.11.0"):
            out[key] = _deep(current, value) if rt is VLLM else {**current, **value}
        else:
            out[key] = value
    return out


def _deep(current: Mapping, value: Mapping) -> dict:
    """vLLM's ``_update_nested``: mappings merged key by key, at every depth."""
    out = dict(current)
    for k, v in value.items():
        out[k] = _deep(out[k], v) if isinstance(v, Mapping) and isinstance(out.get(k), Mapping) else v
    return out


def read_launch(path: str, launch: Launch, fmt: str, o: Overrides, ver: tuple, args: dict, values: dict,
                problems: list) -> LoadedConfig:
    """The launch's model read by the Hugging Face dialect with its overrides, at the length served."""
    from ..resolve import find, needed, read_model
    from ._framework import Doc
    from .serving_length import vllm_dynamic

    version, named, sem = ver
    rt = launch.runtime
    name_v = model_value(path, launch, args)
    rev = values.get("revision") if isinstance(values.get("revision"), str) else None
    model = find(str(name_v.raw).strip(), given=o.model_config, revision=rev)
    if model is None:
        raise needed(path, name_v, rev)
    ov, where = gathered_overrides(path, sem, args, values)
    hf = overlay(rt, sem, model.data, ov)
    served_hf = hf
    hf, ignored = vllm_dynamic(rt, sem, hf)
    data: dict = {}
    positions: dict = {}
    for key, (label, at) in where.items():
        node = data
        parts = label.split(".")
        for p in parts[:-1]:
            node = node.setdefault(p, {})
            positions.setdefault(tuple(parts[:parts.index(p) + 1]), at)
        node[parts[-1]] = ov[key]
        positions[tuple(parts)] = at
    doc = Doc(data, positions, fmt, path)
    cfg = read_model(doc, o, name_v, replace(model, data=hf), {k: w[0] for k, w in where.items()}, {},
                     f"{rt.title} {name_v.raw}")
    problems = problems + rope_changes(rt.title, model.data, ov, where)
    if ignored:
        problems.append(problem(IGNORES, Value("dynamic", name_v.key, name_v.line, name_v.column, "", "any"), ignored))
    target = cfg.target if o.target is not None else served(launch, sem, served_hf, args, values, problems)
    current = named.startswith("the current")
    notes = list(cfg.notes) + [f"{launch.launcher} at line {launch.at[0]:,}: read as {rt.title} {version} ({named}); "
                               f"its length and override rules from {rt.title} {sem}'s source"]
    return replace(cfg, target=target, problems=list(cfg.problems) + problems, notes=notes,
                   served_by=f"{rt.title} {version}" + (" (current)" if current else ""))
