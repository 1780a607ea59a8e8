"""vLLM and SGLang launches as the runtime version they target runs them: the model they serve, with the
launch's overrides laid over its config, at the length the server accepts.

Where launches are found: :mod:`.serving_launch` (shell scripts, docker-compose / Kubernetes YAML, Python
``LLM(...)`` / ``Engine(...)``); how their arguments parse: :mod:`.serving_args`; the length served:
:mod:`.serving_length`. The model (``vllm serve MODEL``, ``--model``, ``--model-path``) is read as
:mod:`ropelaw.lint.resolve` finds it (``--model-config``, a local folder, the Hugging Face cache; else RV031
naming it) by the Hugging Face dialect, with the overrides laid over it as the runtime lays them:

- vLLM 0.32.0 ``--hf-overrides`` (``config/model.py``): a key holding a mapping replaces the config's key
  (``setattr``) unless the key is a sub-config (``text_config``...), which is updated key by key; other
  keys are set (``config.update``); 0.11.0 sets every key (``config.update``), and its ``--rope-scaling`` /
  ``--rope-theta`` are ``rope_scaling`` / ``rope_theta`` overrides;
- SGLang 0.5.23 ``--json-model-override-args`` (``srt/utils/hf_transformers/config.py`` ``get_config``): a
  sub-config is updated, a ``rope_scaling`` / ``rope_parameters`` mapping is merged into the model's block
  (``{**current, **value}``), other keys are set.

A RoPE block set by an override replaces the block the file has under either name (``rope_scaling`` or
``rope_parameters``: transformers 5 keeps one). The served length is the target of the analysis; an override
changing the model's RoPE keys or ``max_position_embeddings`` is RV042; what the runtime refuses (a flag it
no longer has, a length beyond the model's without the environment variable that allows it, a JSON argument
that does not parse) is RV041. A GGUF served by vLLM or SGLang: the config the runtime builds it from
(:mod:`.serving_gguf`: vLLM 0.32.0 with vllm-gguf-plugin 0.0.5 reads a config.json, never the GGUF's metadata;
SGLang 0.5.23 reads a config.json beside the GGUF, else transformers' conversion of its metadata), RV031 where
that is not here.
"""

from __future__ import annotations

import json
from typing import Any
from collections.abc import Mapping

from ..model import LoadedConfig, Overrides, UnreadConfig, Value
from .serving_args import VLLM, Runtime, parse_argv, vllm_int
from .serving_launch import Computed, Launch

__all__ = ["load_serving", "load_text"]



def arguments(launch: Launch, version: str) -> tuple[dict, list]:
    """``({role: (value, (line, column), flag)}, RV041 problems)`` of a launch at ``version``."""
    rt = launch.runtime
    problems: list = []
    out: dict[str, tuple] = {}
    if launch.kwargs is not None:
        for name, (value, at) in launch.kwargs.items():
            flag = "--" + name.replace("_", "-")
            if flag in rt.removed and _at_least(version, rt.removed[flag]):
                problems.append(_refused(f"{name}=", at, f"{name} is not a field of {rt.title} {version}'s engine "
                                                         f"arguments (removed in {rt.removed[flag]}): TypeError"))
            elif flag in rt.flags:
                out[rt.flags[flag]] = (value, at, f"{name}=")
        return out, problems
    parsed = parse_argv(rt, version, launch.words)
    for i, why in parsed.refused:
        problems.append(_refused(launch.words[i], launch.places[i], why))
    for flag, (value, i) in parsed.values.items():
        out[rt.flags[flag]] = (value, launch.places[i], flag)
    if launch.positional_model and "model" not in out and launch.words and not launch.words[0].startswith("-"):
        out["model"] = (launch.words[0], launch.places[0], f"{launch.launcher} MODEL")
    return out, problems


def _at_least(version: str, first: str) -> bool:
    from .serving_args import version_key

    return version_key(version) >= version_key(first)


def _refused(word: str, at: tuple, why: str) -> Any:
    from ..rules.serving import RUNTIME_REFUSES
    from .serving_read import problem

    return problem(RUNTIME_REFUSES, Value(word, word, at[0], at[1], "", "any"), why)


def typed(rt: Runtime, version: str, role: str, raw: Any, cli: bool) -> Any:
    """An argument's value as the runtime converts it (``ValueError`` where its parser refuses it)."""
    if isinstance(raw, Computed):
        return raw
    if role == "length":
        if not cli:
            if isinstance(raw, bool) or not isinstance(raw, int) and raw is not None:
                raise ValueError(f"{raw!r} is not a whole number")
            return raw
        if rt is VLLM:
            if str(raw).strip() in ("-1",) or (str(raw).strip().lower() == "auto" and _at_least(version, "0.11.1")):
                return -1
            return vllm_int(str(raw), version)
        return int(str(raw))
    if role in ("overrides", "rope_scaling"):
        if isinstance(raw, Mapping):
            return dict(raw)
        value = json.loads(str(raw))
        if not isinstance(value, dict):
            raise ValueError(f"{raw!r} is not a JSON object")
        return value
    if role == "rope_theta":
        return float(str(raw)) if cli else raw
    return raw


def load_serving(path: str, launch: Launch, text: str, fmt: str, o: Overrides) -> LoadedConfig:
    """The launch read as its runtime runs it (module docstring)."""
    from .serving_launch import target_version
    from .serving_length import semantics_version

    rt = launch.runtime
    version, named = target_version(rt, path, text, launch.image)
    sem = semantics_version(rt, version)
    args, problems = arguments(launch, version)
    if "config" in args:
        value, at, flag = args["config"]
        raise UnreadConfig(f"{path}: {flag} {value!r}: {rt.title} reads more arguments from that file, not read "
                           "here; lint a launch that gives them on its line", "RV030", *at)
    values: dict[str, Any] = {}
    for role, (raw, at, flag) in args.items():
        try:
            values[role] = typed(rt, version, role, raw, launch.kwargs is None)
        except (ValueError, TypeError, RecursionError) as exc:
            problems.append(_refused(flag, at, f"{flag} {str(raw)[:60]!r}: {rt.title} {version}'s parser refuses "
                                               f"it ({str(exc)[:80]})"))
    from .serving_read import read_launch

    return read_launch(path, launch, fmt, o, (version, named, sem), args, values, problems)


def load_text(path: str, text: str, fmt: str, o: Overrides, data: Any = None, positions: Any = None
              ) -> LoadedConfig | None:
    """A vLLM / SGLang launch of ``text`` (``fmt``: shell, yaml with its parsed ``data`` / ``positions``, or
    python) read as its runtime runs it; None when the file has none."""
    from ...errors import UsageError
    from .serving_launch import in_python, in_shell, in_yaml, in_yaml_stream

    if fmt == "shell":
        try:
            launch = in_shell(text)
        except UsageError:  # words the shell reader cannot split: the other launch readers say why
            return None
    elif fmt == "python":
        launch = in_python(text, path)
    else:
        launch = in_yaml(data, positions or {}, text) or in_yaml_stream(text, path)
    return None if launch is None else load_serving(path, launch, text, fmt, o)
