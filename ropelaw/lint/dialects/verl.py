"""veRL (volcengine/verl) RL post-training: Hydra configs (``ppo_trainer.yaml`` and the YAML that extend it)
and launch scripts (``python3 -m verl.trainer.main_ppo key=value ...``).

veRL trains a Hugging Face model named by ``actor_rollout_ref.model.path`` (SFT: ``model.partial_pretrain``):
its config.json holds the RoPE, read as :mod:`ropelaw.lint.resolve` says (``--model-config``, a local
directory, the Hugging Face cache, else ropelaw's table, said by RV032; none of them: RV031 naming the model). veRL \
applies
``actor_rollout_ref.model.override_config`` to that config before building the model (verl@b178a3cd
``verl/workers/fsdp_workers.py``: ``update_model_config(actor_model_config,
override_config_kwargs=override_model_config)``; the Megatron workers take the keys under
``override_config.model_config``), so ``override_config.max_position_embeddings`` or
``override_config.rope_scaling`` replace the model's keys (each pointing at the override).

Lengths: a rollout is ``data.max_prompt_length`` + ``data.max_response_length`` tokens (defaults 512 + 512,
``verl/trainer/config/data/legacy_data.yaml``; SFT: ``data.max_length``, default 1,024): the length the
policy is trained and served at, read as the tuning length and the target. Past the model's training
length it is a context extension (veRL's example raising ``max_position_embeddings`` to 32,768 without a
scaling scheme runs 10,240-token rollouts: a plain-RoPE model asked past its bound). A launch script's
overrides are read as Hydra reads them (``+key=value`` adds a key, ``~key`` deletes one; values are YAML
scalars), with shell variables and ``$((...))`` arithmetic substituted; nothing is run.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from ..model import LoadedConfig, ModelNeeded, NotARopeConfig, Overrides, Value
from ..model_config import HOW
from ..resolve import find, needed, read_model
from ._framework import Doc, dialect, preset

NAME = "verl"
VERL = "verl@b178a3cd"
MODEL_KEYS = ("actor_rollout_ref.model.path", "model.partial_pretrain", "model.path")
OVERRIDES = ("actor_rollout_ref.model.override_config", "actor_rollout_ref.model.override_config.model_config")
LAUNCH = "(verl entry point)"
DEFAULT_MODEL = "~/models/deepseek-llm-7b-chat"  # verl/trainer/config/model/hf_model.yaml path
_MODULE = re.compile(r"^verl\.trainer\.\w+$")


def detect(data: Mapping) -> bool:
    if isinstance(data.get("actor_rollout_ref"), Mapping):
        return True
    model = data.get("model")
    return LAUNCH in data or (isinstance(model, Mapping) and "partial_pretrain" in model
                              and isinstance(data.get("data"), Mapping))


def load(doc: Doc, o: Overrides) -> LoadedConfig:
    from .axolotl import fine_tune_length

    name_v = doc.get(*MODEL_KEYS, expect="str")
    if name_v is None:
        if not isinstance(doc.raw("actor_rollout_ref"), Mapping) and "main_ppo" not in str(doc.raw(LAUNCH)):
            raise NotARopeConfig(f"{doc.path}: a veRL config that names no model ({', '.join(MODEL_KEYS)})")
        name_v = Value(DEFAULT_MODEL, None, 1, 1, f"actor_rollout_ref.model.path: {VERL} "
                                                  "verl/trainer/config/model/hf_model.yaml default", "str")
    model = find(str(name_v.raw).strip(), given=o.model_config)
    if model is None:
        if name_v.key is None:
            raise ModelNeeded(f"{doc.path}: no actor_rollout_ref.model.path: veRL trains its default model "
                              f"{DEFAULT_MODEL!r} ({name_v.note}); its config.json is needed: {HOW}", 1, 1)
        raise needed(doc.path, name_v)
    hf = dict(model.data)
    overrides: dict[str, str] = {}
    raised = None
    for section in OVERRIDES:
        sec = doc.raw(section)
        if isinstance(sec, Mapping):
            for k, v in sec.items():
                if k == "max_position_embeddings":  # the positions accepted, not the length trained at
                    raised = doc.get(f"{section}.{k}", expect="int")
                elif k != "model_config":
                    hf[str(k)] = v
                    overrides[str(k)] = f"{section}.{k}"
    doc.consider_tree(OVERRIDES[0])
    cfg = read_model(doc, o, name_v, replace(model, data=hf), overrides, {}, f"verl {name_v.raw}")
    notes = list(cfg.notes)
    if raised is not None:
        notes.append(f"{raised.key} {raised.raw!r} lets the model take that many positions; it was trained at "
                     f"{cfg.train_len.raw!r} ({cfg.train_len.where}), and the frequencies do not change")
    length = rollout_length(doc)
    if o.tune is not None:
        tune = Value(o.tune, None, 1, 1, "--tune", "int")
    elif is_generation(doc):
        tune = None
        notes.append(f"veRL's main_generation only generates (no training): {length.raw!r}-token sequences at most "
                     f"({length.where})")
    else:
        tune = fine_tune_length(length, cfg.train_len, notes, "veRL")
    target = cfg.target if o.target is not None else length
    return replace(cfg, tune_len=tune, target=target, notes=notes, considered=sorted(doc.considered))


def is_generation(doc: Doc) -> bool:
    """A ``verl.trainer.main_generation`` run (``verl/trainer/config/generation.yaml``: ``model.path``, no
    ``actor_rollout_ref``)."""
    return "main_generation" in str(doc.raw(LAUNCH)) and not isinstance(doc.raw("actor_rollout_ref"), Mapping)


def rollout_length(doc: Doc) -> Value:
    """``data.max_prompt_length + data.max_response_length`` (PPO), else ``data.max_length`` (SFT); main_generation:
    ``rollout.prompt_length + rollout.response_length`` (:func:`generation_length`)."""
    if is_generation(doc):
        return generation_length(doc)
    sft = doc.get("data.max_length", expect="int")
    prompt = doc.get("data.max_prompt_length", expect="int")
    response = doc.get("data.max_response_length", expect="int")
    if sft is not None and prompt is None and response is None:
        return sft
    src = f"{VERL} verl/trainer/config/data/legacy_data.yaml default"
    prompt = prompt or preset(512, f"data.max_prompt_length: {src}", None, "int")
    response = response or preset(512, f"data.max_response_length: {src}", None, "int")
    p, r = prompt.number(), response.number()
    total = None if p is None or r is None else int(p) + int(r)
    at = response if response.key else prompt
    return Value(total, None, at.line, at.column,
                 f"{prompt.where} + {response.where}: a rollout's prompt and response", "int")


def generation_length(doc: Doc) -> Value:
    """``rollout.prompt_length + rollout.response_length`` (defaults 1,536 + 512, ``verl/trainer/config/
    generation.yaml``): ``main_generation.py`` (verl@b178a3cd line 109) truncates each prompt at
    ``prompt_length``, and the rollout generates up to ``response_length + prompt_length - len(prompt)`` tokens
    (``vllm_async_server.py`` line 472): at most their sum positions."""
    src = f"{VERL} verl/trainer/config/generation.yaml default"
    prompt = doc.get("rollout.prompt_length", expect="int") or preset(1536, f"rollout.prompt_length: {src}", None,
                                                                       "int")
    response = doc.get("rollout.response_length", expect="int") or preset(512, f"rollout.response_length: {src}",
                                                                           None, "int")
    p, r = prompt.number(), response.number()
    at = response if response.key else prompt
    return Value(None if p is None or r is None else int(p) + int(r), None, at.line, at.column,
                 f"{prompt.where} + {response.where}: a prompt and its generation", "int")


DIALECT = dialect(NAME, detect, load=load)


# ----------------------------------------------------------------------------------------- launch scripts
def launch_overrides(text: str) -> tuple[int, int, str, list[str]] | None:
    """``(first line, last line, entry point, overrides)`` of the ``verl.trainer.*`` command of a launch script:
    its ``key=value`` words (``+`` / ``++`` / ``~`` kept, as Hydra takes them) with shell variables and
    ``$((...))`` substituted; None for another script. Nothing is run."""
    from .megatron import join_arithmetic, shell_commands, substitute

    for first, last, words, env in shell_commands(text):
        at = next((i for i, w in enumerate(words) if _MODULE.match(w) or w.endswith(("main_ppo.py",
                                                                                      "fsdp_sft_trainer.py"))), None)
        if at is None:
            continue
        out = []
        for w in words[at + 1:]:
            got = substitute(w, env) or w
            pieces = join_arithmetic(got.split())
            # an unquoted variable holding several overrides (ACTOR="a.b=1 c.d=2" ... ${ACTOR}): bash splits it
            split = got != w and len(pieces) > 1 and all("=" in p for p in pieces)
            for piece in pieces if split else [got]:
                key, eq, raw = piece.partition("=")
                if eq and not key.startswith("-"):
                    out.append(f"{key}={shell_arithmetic(raw, env)}")
        return first, last, words[at], out
    return None


def read_launch_text(text: str) -> tuple[dict, dict] | None:
    """The Hydra overrides of the ``verl.trainer.*`` command of a launch script as a nested mapping and its
    positions (``{LAUNCH: module, "data": {"max_prompt_length": 2048, ...}}``); None for another script."""
    import yaml

    got = launch_overrides(text)
    if got is None:
        return None
    first, last, module, overrides = got
    lines = text.split("\n")
    data: dict[str, Any] = {LAUNCH: module}
    positions: dict[tuple, tuple[int, int]] = {(LAUNCH,): _place(lines, first, last, module)}
    for w in overrides:
        key, _, value = w.partition("=")
        if key.startswith("~"):
            continue
        key = key.lstrip("+")
        try:
            parsed = yaml.safe_load(value) if value else None
        except yaml.YAMLError:
            parsed = value
        _put(data, key.split("."), parsed)
        positions[tuple(key.split("."))] = _place(lines, first, last, key + "=")
    return data, positions


def _put(data: dict, parts: list[str], value: Any) -> None:
    node = data
    for p in parts[:-1]:
        if not isinstance(node.get(p), dict):
            node[p] = {}
        node = node[p]
    node[parts[-1]] = value


def _place(lines: list[str], first: int, last: int, text: str) -> tuple[int, int]:
    for n in range(first - 1, min(last, len(lines))):
        col = lines[n].find(text)
        if col >= 0:
            return n + 1, col + 1
    return first, 1


_ARITH = re.compile(r"\$\(\((.*)\)\)")


def shell_arithmetic(text: str, env: dict[str, str], depth: int = 0) -> str:
    """``text`` with bash's ``$((...))`` integer arithmetic evaluated (+ - * / % and parentheses over numbers
    and the script's variables); left as written when it holds anything else."""
    import ast

    def value(node: ast.AST) -> int:
        if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
            return node.value
        if isinstance(node, ast.Name) and node.id in env and depth < 8:
            return int(shell_arithmetic(env[node.id].strip(), env, depth + 1))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return -value(node.operand)
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv,
                                                                 ast.Mod)):
            a, b = value(node.left), value(node.right)
            if isinstance(node.op, ast.Add):
                return a + b
            if isinstance(node.op, ast.Sub):
                return a - b
            if isinstance(node.op, ast.Mult):
                if abs(a) > 1 << 62 or abs(b) > 1 << 62:
                    raise ValueError("too large")
                return a * b
            return int(a / b) if isinstance(node.op, ast.FloorDiv) else a - b * int(a / b)  # bash truncates
        raise ValueError("not bash arithmetic")

    def one(m: re.Match) -> str:
        expr = re.sub(r"\$\{?(\w+)\}?", r"\1", m.group(1)).replace("/", "//")
        try:
            return str(value(ast.parse(expr, mode="eval").body))
        except (ValueError, SyntaxError, ZeroDivisionError, RecursionError):
            return m.group(0)
    return _ARITH.sub(one, text) if len(text) < 4096 else text
