"""llama.cpp launch lines (``llama-server`` / ``llama-cli`` in a shell script): the GGUF they serve, read as
llama.cpp reads it with the line's RoPE flags, at the context each request gets.

Semantics: llama.cpp as vendored by llama-cpp-python==0.3.36 (:data:`ropelaw.runtimes.LLAMACPP`),
``common/arg.cpp``, ``src/llama-context.cpp``, ``tools/server/server.cpp`` and ``server-context.cpp``:

- the model ``-m`` / ``--model PATH`` (a GGUF beside the script, or from the working directory, or given
  with ``--model-config``); ``-hf`` / ``-mu`` (a download) or a missing file is RV031;
- RoPE flags override the GGUF's metadata: ``--rope-freq-base B``, ``--rope-scaling {none,linear,yarn}``,
  ``--rope-scale N`` (freq_scale 1/N), ``--rope-freq-scale x`` (factor 1/x), ``--yarn-orig-ctx N``; each
  that changes the model's value is RV042. llama.cpp takes ``--flag value`` only (``--flag=value`` is an
  invalid argument: RV041);
- the context: ``-c`` / ``--ctx-size N`` (0 or absent: the GGUF's context_length), padded to a multiple
  of 256. llama-server serves ``-np`` / ``--parallel N`` slots (absent: 4 slots sharing one unified KV
  cache, ``server.cpp``); without a unified cache (``-kvu``) each slot gets ``pad(n_ctx / N, 256)``
  (``llama_context``); every slot is capped at the model's training context ``n_ctx_train``, which a YaRN
  factor set on the line rescales to ``yarn_orig_ctx / freq_scale`` (``llama_init_from_model``;
  ``server_context::n_ctx_slot``). A context per request below the one asked for is RV043. llama-cli runs
  one sequence, uncapped. The served context is the target of the analysis; llama.cpp's memory fitting
  (``llama_params_fit``, machine-dependent) is not modelled.
"""

from __future__ import annotations

import os
import re
from dataclasses import replace
from typing import Any

from ..model import LoadedConfig, ModelNeeded, Overrides, Value
from ..model import Problem
from ..rules.serving import RUNTIME_REFUSES, SERVED_CONTEXT, SERVED_OVERRIDE

NAME = "llamacpp"
BINARIES = ("llama-server", "llama-cli")
ROPE_FLAGS = ("--rope-freq-base", "--rope-scaling", "--rope-scale", "--rope-freq-scale", "--yarn-orig-ctx")
ALIASES = {"-m": "--model", "-c": "--ctx-size", "-np": "--parallel", "-hf": "--hf-repo", "-hfr": "--hf-repo",
           "-mu": "--model-url", "-kvu": "--kv-unified", "-no-kvu": "--no-kv-unified"}
VALUED = ("--model", "--ctx-size", "--parallel", "--hf-repo", "--model-url", *ROPE_FLAGS)
SWITCHES = ("--kv-unified", "--no-kv-unified")
PAD = 256  # llama-context.cpp: GGML_PAD(n_ctx, 256)
Places = dict[str, tuple[int, int]]  # long flag -> (line, column) of the flag


def launch_of(text: str) -> tuple[str, int, dict, Places] | None:
    """``(binary, line, flags, places)`` of the script's first llama-server / llama-cli command, or None.
    ``flags``: long flag -> value (True for a switch); ``places``: long flag -> (line, column)."""
    from .megatron import shell_commands

    lines = text.split("\n")
    for first, last, words, env in shell_commands(text):
        for i, w in enumerate(words):
            if os.path.basename(w) in BINARIES:
                return os.path.basename(w), first, *_flags(words[i + 1:], env, lines, first, last)
    return None


def _flags(words: list[str], env: dict, lines: list[str], first: int, last: int) -> tuple[dict, Places]:
    from .megatron import substitute

    flags: dict[str, Any] = {}
    places: Places = {}
    for i, w in enumerate(words):
        name = ALIASES.get(w, w)
        if "=" in w and w.split("=", 1)[0] in ROPE_FLAGS + ("--ctx-size", "--parallel", "--model"):
            flags.setdefault("=", w)  # llama.cpp's parser has no --flag=value form
            places.setdefault("=", _place(lines, first, last, w))
            continue
        if name in SWITCHES:
            flags.pop(name, None)
            flags[name] = True
        elif name in VALUED and i + 1 < len(words):
            flags.pop(name, None)  # the last occurrence wins, as in llama.cpp; the dict's order is theirs
            got = substitute(words[i + 1], env)
            flags[name] = got if got is not None else words[i + 1]
        else:
            continue
        places[name] = _place(lines, first, last, w)
    return flags, places


def _place(lines: list[str], first: int, last: int, word: str) -> tuple[int, int]:
    pat = re.compile(r"(?<![\w-])" + re.escape(word) + r"(?![\w-])")
    for n in range(first - 1, min(last, len(lines))):
        m = pat.search(lines[n])
        if m:
            return n + 1, m.start() + 1
    return first, 1


def model_path(path: str, flags: dict, places: Places, o: Overrides) -> str:
    """The GGUF the line serves (module docstring), or ModelNeeded (RV031)."""
    if o.model_config:
        return o.model_config
    where = places.get("--model") or places.get("--hf-repo") or places.get("--model-url") or (1, 1)
    if "--model" not in flags:
        how = next((f"{k} {flags[k]!r}" for k in ("--hf-repo", "--model-url") if k in flags), "no -m")
        raise ModelNeeded(f"{path}: the model is downloaded by llama.cpp ({how}), not read here; give the GGUF with "
                          "--model-config", *where)
    m = str(flags["--model"])
    for cand in (os.path.join(os.path.dirname(os.path.abspath(path)), m), m):
        if os.path.isfile(cand):
            return cand
    raise ModelNeeded(f"{path}: -m {m!r} is not a file here (beside the script or in the working directory); give "
                      "the GGUF with --model-config", *where)


def load_launch(path: str, text: str, o: Overrides) -> LoadedConfig | None:
    """The launch line of ``text`` read as llama.cpp runs it (module docstring); None without one."""
    from ...errors import UsageError
    from ..gguf import read_gguf
    from ..unread import check_read
    from . import gguf as G
    from ._framework import assemble, guarded

    try:
        launch = launch_of(text)
    except UsageError:  # a script these words cannot split: the other launch readers say why (MaxText's reads lines)
        return None
    if launch is None:
        return None
    binary, line, flags, places = launch
    gpath = model_path(path, flags, places, o)
    if not gpath.lower().endswith(".gguf"):
        raise UsageError(f"{path}: the model {gpath!r} is not a .gguf file (llama.cpp serves GGUF files)")
    g = read_gguf(gpath)
    data, positions = G.mapping(g)
    arch = g.architecture if isinstance(g.architecture, str) else ""
    before: dict = {}
    problems = _apply_flags(path, arch, data, positions, flags, places, before)
    doc = G.GgufDoc(data, positions, "shell", path)
    fields = guarded(G.NAME, path, lambda: G.read(doc))
    served, more = served_context(binary, data, before, arch, flags, places, line, path)
    fields.target = served
    fields.problems = list(fields.problems) + problems + more
    fields.notes = list(fields.notes) + [f"{binary} on line {line:,} serving {gpath}"]
    cfg = guarded(G.NAME, path, lambda: assemble(doc, fields, replace(o, model_config=None)))
    cfg = replace(cfg, semantics=G.LLAMACPP, notes=list(cfg.notes) + list(g.notes))
    return check_read(data, positions, cfg)


def _number(flag: str, raw: Any, path: str) -> float:
    from ...errors import UsageError

    try:
        return float(raw)
    except (TypeError, ValueError):
        raise UsageError(f"{path}: {flag} {raw!r} is not a number (llama.cpp refuses the line)") from None


def _integer(flag: str, raw: Any, path: str) -> int:
    """An integer flag as llama.cpp's std::stoi reads it (a leading whole number), else UsageError."""
    from ...errors import UsageError

    m = re.match(r"\s*([+-]?\d+)", str(raw))
    if m is None:
        raise UsageError(f"{path}: {flag} {raw!r} is not a whole number (llama.cpp refuses the line)")
    return int(m.group(1))


def _apply_flags(path: str, a: str, data: dict, positions: dict, flags: dict, places: Places, before: dict) -> list:
    """Write the line's RoPE flags over the GGUF's keys (at the flag's place; the GGUF's values into ``before``);
    RV042 / RV041 problems."""
    import numpy as np

    problems: list = []
    if "=" in flags:
        at = places["="]
        problems.append(Problem(RUNTIME_REFUSES, Value(flags["="], flags["="], *at, "", "any"),
                         f"{flags['=']!r}: llama.cpp's argument parser has no --flag=value form ('invalid argument'); "
                         "write the value after a space"))
    p = f"{a}.rope."
    # llama.cpp: std::stof (a value past float32's range becomes inf here, said by the rules)
    def f32(x: float) -> float:
        with np.errstate(over="ignore"):
            return float(np.float32(x))
    wanted: dict[str, tuple[str, Any]] = {}
    if "--rope-freq-base" in flags:
        wanted[p + "freq_base"] = ("--rope-freq-base", f32(_number("--rope-freq-base", flags["--rope-freq-base"],
                                                                   path)))
    if "--rope-scaling" in flags:
        wanted[p + "scaling.type"] = ("--rope-scaling", str(flags["--rope-scaling"]))
    for flag in [f for f in flags if f in ("--rope-scale", "--rope-freq-scale")]:  # the later of the two wins
        x = f32(_number(flag, flags[flag], path))
        scale = f32(1.0 / x) if flag == "--rope-scale" and x else x
        wanted[p + "scaling.factor"] = (flag, f32(1.0 / scale) if scale else 0.0)
    if "--yarn-orig-ctx" in flags:
        wanted[p + "scaling.original_context_length"] = ("--yarn-orig-ctx",
                                                         _integer("--yarn-orig-ctx", flags["--yarn-orig-ctx"], path))
    for key, (flag, value) in wanted.items():
        was_value = before[key] = data.get(key)
        data[key] = value
        positions[(key,)] = places[flag]
        if was_value != value and not (key.endswith("scaling.factor") and was_value in (None, 0.0) and value == 1.0):
            was = f"{was_value!r}" if was_value is not None else "unset (llama.cpp's default)"
            problems.append(Problem(SERVED_OVERRIDE, Value(value, key, *places[flag], f"{flag} on the launch line",
                                                           "any"),
                             f"{flag} {flags[flag]} sets {key} to {value!r}; the GGUF has {was}: the model runs RoPE "
                             "it was not trained with unless it was tuned for it"))
    return problems


def served_context(binary: str, data: dict, before: dict, a: str, flags: dict, places: Places,
                   line: int, path: str = "") -> tuple[Value, list]:
    """``(context per request, RV043 problems)`` (module docstring); ``before``: the GGUF's values the line
    replaced."""

    train = data.get(f"{a}.context_length")
    asked = _integer("--ctx-size", flags["--ctx-size"], path) if "--ctx-size" in flags else 0
    n_ctx = asked if asked > 0 else (train if isinstance(train, int) else 0)
    n_ctx = -(-n_ctx // PAD) * PAD
    at = places.get("--ctx-size", (line, 1))
    if binary != "llama-server":
        return Value(n_ctx, "--ctx-size" if asked else f"{a}.context_length", *at,
                     f"{binary}: one sequence of {n_ctx:,} (padded to {PAD})", "int"), []
    auto = "--parallel" not in flags or _integer("--parallel", flags["--parallel"], path) < 0
    slots = 4 if auto else _integer("--parallel", flags["--parallel"], path)
    unified = (auto and "--no-kv-unified" not in flags) or "--kv-unified" in flags
    seq = n_ctx if unified else -(-(n_ctx // max(slots, 1)) // PAD) * PAD
    cap = _train_cap(data, before, a, train)
    slot = min(seq, cap) if cap else seq
    how = (f"llama-server: {slots} slots{' sharing a unified KV cache' if unified else ''}, n_ctx {n_ctx:,}"
           + (f" / {slots} = {seq:,} per slot" if not unified else "")
           + (f", capped at the training context {cap:,}" if cap and seq > cap else ""))
    value = Value(slot, "--ctx-size" if asked else f"{a}.context_length", *at, how, "int")
    problems = []
    if slot < n_ctx:
        problems.append(Problem(SERVED_CONTEXT, value, f"{how}: each request gets {slot:,} tokens, not the {n_ctx:,} "
                         "the line asks for"))
    return value, problems


def _train_cap(data: dict, before: dict, a: str, train: Any) -> int | None:
    """n_ctx_train as llama_init_from_model leaves it: when the run's scaling type is YaRN and its freq_scale is
    not the GGUF's (the line set a factor), ``n_ctx_orig_yarn / freq_scale`` in float32, truncated."""
    import numpy as np

    if not isinstance(train, int):
        return None
    f32 = np.float32

    def freq_scale(factor: Any) -> float:
        return float(f32(1) / f32(factor)) if isinstance(factor, (int, float)) and factor else 1.0

    key = f"{a}.rope.scaling.factor"
    if data.get(f"{a}.rope.scaling.type", "linear") != "yarn" or freq_scale(data.get(key)) == freq_scale(
            before.get(key, data.get(key))):
        return train
    orig = data.get(f"{a}.rope.scaling.original_context_length")
    orig = orig if isinstance(orig, int) and not isinstance(orig, bool) and orig > 0 else train
    with np.errstate(all="ignore"):
        cap = f32(orig) / f32(freq_scale(data.get(key)))
    return int(cap) if np.isfinite(cap) else train
