"""A vLLM / SGLang launch's model, read with its overrides at the length served (``serving.py`` says how)."""

from __future__ import annotations

import os
from dataclasses import replace
from typing import Any
from collections.abc import Mapping

from ..model import LoadedConfig, ModelNeeded, Overrides, UnreadConfig, Value
from ..rules.serving import IGNORES, RUNTIME_REFUSES, SERVED_OVERRIDE
from .serving_args import VLLM, Runtime
from .serving_gguf import PLUGIN, TRANSFORMERS, converted, is_gguf_name, local_gguf, remote_gguf, scaled_rope
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
        raise ModelNeeded(f"{path}: {_label(flag)} {raw!r} is computed by the program, not read here", at[0], at[1],
                          fix=HOW)
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
                             f"{label} {asked:,} is beyond the model's {derived:,} ({how}): {rt.title} {sem} "
                             "refuses it "
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
            if rt is not VLLM and isinstance(value, Mapping) and isinstance(current, Mapping):
                out[key] = {**current, **value}
            else:
                out[key] = value
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
    gguf_problems: list = []
    if (is_gguf_name(name_v.raw) or remote_gguf(name_v.raw) is not None) and not o.model_config:
        model, name_v, gguf_problems = gguf_model(path, launch, sem, name_v, args, rev)
    else:
        model = find(str(name_v.raw).strip(), given=o.model_config, revision=rev)
        if model is None:
            raise needed(path, name_v, rev)
        gpath = local_gguf(path, str(name_v.raw)) if is_gguf_name(name_v.raw) else None
        if gpath is not None:  # --model-config stands for the config the runtime reads: compared with the GGUF
            from ..gguf import read_gguf

            gguf_problems = _compare_gguf(read_gguf(gpath), model.data, gpath, name_v,
                                          f"--model-config {o.model_config} stands for the config.json {rt.title} "
                                          "reads for this GGUF")
    ov, where = gathered_overrides(path, sem, args, values)
    hf: Mapping = overlay(rt, sem, model.data, ov)
    served_hf = hf
    hf, ignored = vllm_dynamic(rt, sem, hf)
    _refuse_ntk(rt, path, sem, hf, name_v)
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
    problems = problems + gguf_problems + rope_changes(rt.title, model.data, ov, where)
    if ignored:
        problems.append(problem(IGNORES, Value("dynamic", name_v.key, name_v.line, name_v.column, "", "any"), ignored))
    target = cfg.target if o.target is not None else served(launch, sem, served_hf, args, values, problems)
    current = named.startswith("the current")
    notes = list(cfg.notes) + [f"{launch.launcher} at line {launch.at[0]:,}: read as {rt.title} {version} ({named}); "
                               f"its length and override rules from {rt.title} {sem}'s source"]
    return replace(cfg, target=target, problems=list(cfg.problems) + problems, notes=notes,
                   served_by=f"{rt.title} {version}" + (" (current)" if current else ""))


def gguf_model(path: str, launch: Launch, sem: str, name_v: Value, args: dict, rev: str | None) -> tuple:
    """``(ModelConfig, the Value naming it, RV042 problems)`` of a GGUF served by vLLM / SGLang, as the runtime
    builds its config (``serving_gguf.py``); RV031 where that config is not here, RV041 where the runtime
    refuses the file."""
    from ..model_config import HOW

    rt = launch.runtime
    raw = str(name_v.raw).strip()
    remote = remote_gguf(raw)
    gpath = local_gguf(path, raw) if remote is None else None
    if remote is not None and rt is not VLLM:
        raise ModelNeeded(f"{path}: {name_v.key} {raw!r}: SGLang {sem} downloads the GGUF of {remote[0]} named "
                          f"*-{remote[1]}.gguf (hf_transformers/common.py resolve_hf_gguf_reference), not read here: "
                          "download it and name the file", name_v.line, name_v.column, fix=HOW)
    if rt is VLLM:
        return _vllm_gguf_model(path, name_v, raw, sem, args, rev, remote, gpath)
    return _sglang_gguf_model(path, name_v, raw, sem, gpath)


def _vllm_gguf_model(path: str, name_v: Value, raw: str, sem: str, args: dict, rev: str | None,
                     remote: tuple | None, gpath: str | None) -> tuple:
    """:func:`gguf_model` under vLLM: the config.json vllm-gguf-plugin reads (``--hf-config-path``, ``--tokenizer``,
    the repository of ``repo_id:quant_type``, else the GGUF's folder), compared with the GGUF where it is here."""
    from ..gguf import read_gguf
    from ..model_config import HOW
    from ..resolve import find, needed

    if sem != "0.32.0":
        raise ModelNeeded(f"{path}: {name_v.key} {raw!r} is a GGUF: how vLLM {sem} builds a GGUF's config (in-tree, "
                          f"before {PLUGIN}) is not modelled here", name_v.line, name_v.column, fix=HOW)
    source = None
    for role, _flag in (("hf_config_path", "--hf-config-path"), ("tokenizer", "--tokenizer")):
        got = args.get(role)
        if got is not None and isinstance(got[0], str) and not (role == "tokenizer" and is_gguf_name(got[0])):
            source = Value(got[0], _label(got[2]), got[1][0], got[1][1], "", "str")
            break
    how = (f"vLLM {sem} serves a GGUF through {PLUGIN}, which reads the model's config.json from "
           + (f"{source.key} {source.raw!r}" if source else "the GGUF's folder") + ", not from the GGUF's "
           "metadata (plugin.py _get_gguf_config_source, config_parser.py)")
    if source is None and remote is not None:  # the plugin: the repository of repo_id:quant_type
        source = Value(remote[0], f"the repository of {name_v.key}", name_v.line, name_v.column, "", "str")
        how = how.replace("the GGUF's folder", f"the GGUF's repository {remote[0]!r}")
    if source is None:
        if gpath is None:
            raise ModelNeeded(f"{path}: {name_v.key} {raw!r}: the GGUF is not here (beside the file or in the "
                              f"working directory); {how}", name_v.line, name_v.column, fix=HOW)
        folder = os.path.dirname(gpath) or "."
        model = find(folder, revision=None, table=False)
        if model is None:
            raise ModelNeeded(f"{path}: {name_v.key} {raw!r}: {how}; {folder} has no config.json",
                              name_v.line, name_v.column,
                              fix=f"put the model's config.json beside the GGUF, name it with --hf-config-path, or "
                                  f"{HOW}")
        source = name_v
    else:
        model = find(str(source.raw).strip(), revision=rev)
        if model is None:
            exc = needed(path, source, rev)
            raise ModelNeeded(f"{exc}; {how}", source.line, source.column, fix=exc.fix)
    problems = []
    if gpath is not None:
        problems = _compare_gguf(read_gguf(gpath), model.data, gpath, source, how)
    return model, source, problems


def _sglang_gguf_model(path: str, name_v: Value, raw: str, sem: str, gpath: str | None) -> tuple:
    """:func:`gguf_model` under SGLang: the config.json beside the GGUF, else its metadata through transformers'
    GGUF conversion (RV042 for the RoPE scaling that conversion drops)."""
    from ..gguf import read_gguf
    from ..model_config import HOW
    from ..resolve import ModelConfig, find

    if gpath is None:
        raise ModelNeeded(f"{path}: {name_v.key} {raw!r}: the GGUF is not here (beside the file or in the working "
                          f"directory); SGLang {sem} reads its config from a config.json beside it, else from its "
                          f"metadata (transformers' GGUF conversion): give the file, or {HOW}",
                          name_v.line, name_v.column, fix=HOW)
    folder = os.path.dirname(gpath) or "."
    if os.path.isfile(os.path.join(folder, "config.json")):  # gguf_sidecar_dir: the config beside it wins
        model = find(folder, revision=None, table=False)
        if model is not None:
            how = (f"SGLang {sem} reads the config.json beside the GGUF, not its metadata (hf_transformers/config.py "
                   "get_config, gguf_sidecar_dir)")
            return model, name_v, _compare_gguf(read_gguf(gpath), model.data, gpath, name_v, how)
    g = read_gguf(gpath)
    try:
        data = converted(g.metadata)
    except ValueError as exc:
        what = "which ropelaw does not model" if type(exc).__name__ == "NotModelled" else "which refuses it"
        raise ModelNeeded(f"{path}: {name_v.key} {raw!r}: SGLang {sem} builds the config through {TRANSFORMERS}'s GGUF "
                          f"conversion, {what} ({exc}); put the model's config.json beside the GGUF",
                          name_v.line, name_v.column, fix=HOW) from None
    origin = (f"{gpath}'s metadata as {TRANSFORMERS}'s GGUF conversion builds the config (SGLang {sem} "
              "get_config: no config.json beside it)")
    model = ModelConfig(raw, data, "gguf", origin)
    problems = []
    lost = scaled_rope(g.metadata, g.rope)
    if lost and "rope_scaling" not in data:
        from ..rules.serving import SERVED_OVERRIDE

        problems.append(problem(SERVED_OVERRIDE, Value(raw, name_v.key, name_v.line, name_v.column, "", "any"),
                                f"SGLang {sem} builds this GGUF's config through {TRANSFORMERS}'s GGUF conversion, "
                                f"which carries no RoPE scaling for {g.architecture!r} (integrations/ggml.py) and no "
                                f"rope_freqs tensor: "
                                f"{', '.join(lost)} is not served; put the model's config.json beside the GGUF"))
    return model, name_v, problems



def _compare_gguf(g: Any, config: Mapping, gpath: str, source: Value, how: str) -> list:
    """RV042 where the config.json vLLM reads and the GGUF it serves hold a different base, length or scaling."""
    import numpy as np

    from ..rules.serving import SERVED_OVERRIDE
    from .serving_length import rope_blocks, text_config

    md = g.metadata
    arch = md.get("general.architecture")
    text = text_config(config)
    theta = text.get("rope_theta")
    blocks = rope_blocks(text)
    if theta is None and blocks:
        theta = blocks[0].get("rope_theta")
    base = md.get(f"{arch}.rope.freq_base")
    pairs = []
    if isinstance(theta, (int, float)) and isinstance(base, (int, float)) and float(np.float32(theta)) != base:
        pairs.append(f"rope_theta {theta:g} where the GGUF's {arch}.rope.freq_base is {base:g}")
    ctx = md.get(f"{arch}.context_length")
    mpe = text.get("max_position_embeddings")
    if isinstance(ctx, int) and isinstance(mpe, int) and ctx != mpe:
        pairs.append(f"max_position_embeddings {mpe:,} where the GGUF's {arch}.context_length is {ctx:,}")
    kinds = {str(b.get("rope_type", b.get("type", "default"))) for b in blocks} - {"default"}
    lost = scaled_rope(md, g.rope)
    if lost and not kinds:
        pairs.append(f"no RoPE scaling where the GGUF has {', '.join(lost)}")
    elif kinds and not lost:
        pairs.append(f"{'/'.join(sorted(kinds))} scaling where the GGUF has none")
    if not pairs:
        return []
    return [problem(SERVED_OVERRIDE, Value(source.raw, source.key, source.line, source.column, "", "any"),
                    f"{how}: that config has {'; '.join(pairs)} ({gpath}): the weights were converted with other RoPE "
                    "settings than those served; serve the config.json of the model the GGUF was converted from")]


def _refuse_ntk(rt: Runtime, path: str, sem: str, hf: Mapping, name_v: Value) -> None:
    """RV030 for a rope_type 'ntk' block served by vLLM or SGLang. SGLang 0.5.23's ``get_rope``
    (``srt/layers/rotary_embedding/factory.py``) has no 'ntk' branch: ``ValueError('Unknown RoPE scaling type
    ntk')`` (line 438) for a model built with it. vLLM 0.32.0's ``NTKScalingRotaryEmbedding``
    (``rotary_embedding/ntk_scaling_rope.py``) runs ``theta_i = (b f)^(-2i/d) f^(-2/d)`` (with ``mixed_b``:
    ``b^(-2i/d) / exp(ln f ((i+1) / (d/2))^mixed_b)``), measured against its own cache in
    tests/differential/test_diff_vllm_rope.py; neither is ropelaw's NTK-aware ``ntk`` (``b f^(d/(d-2))``), so the
    analysis is not made rather than made with another formula."""
    from .serving_length import rope_blocks, text_config

    for b in rope_blocks(text_config(hf)):
        if str(b.get("rope_type", b.get("type", ""))) == "ntk" and rt is not VLLM:
            raise UnreadConfig(f"{path}: SGLang {sem}'s get_rope has no rope_type 'ntk' (ValueError 'Unknown RoPE "
                               "scaling type ntk', srt/layers/rotary_embedding/factory.py 438): the model is not "
                               "served as configured; not analysed", "RV030", name_v.line, name_v.column)
        if str(b.get("rope_type", b.get("type", ""))) == "ntk":
            formula = ("b^(-2i/d) / exp(ln f ((i+1) / (d/2))^mixed_b)" if b.get("mixed_b") is not None
                       else "(b f)^(-2i/d) f^(-2/d)")
            how = (f"vLLM {sem} serves rope_type 'ntk' (factor {b.get('factor')}) as NTKScalingRotaryEmbedding, "
                   f"theta_i = {formula} (rotary_embedding/ntk_scaling_rope.py)" if sem == "0.32.0" else
                   f"how vLLM {sem} serves rope_type 'ntk' is not read here (vLLM 0.32.0 runs theta_i = {formula})")
            raise UnreadConfig(f"{path}: {how}, which ropelaw does not model (its 'ntk' is NTK-aware, b f^(d/(d-2))): "
                               "not analysed", "RV030", name_v.line, name_v.column)
