"""OpenRLHF (OpenRLHF/OpenRLHF) launch scripts: ``python3 -m openrlhf.cli.train_ppo_ray --flag value ...``
(also ``deepspeed --module openrlhf.cli.train_sft``), read with its argparse flags (openrlhf@3c3be623
``openrlhf/cli/*.py``).

The trained model is a Hugging Face model named by ``--actor.model_name_or_path`` (PPO) or
``--model.model_name_or_path`` (SFT, DPO, RM; ``--pretrain`` in releases before 0.10): its config.json holds
the RoPE, read as :mod:`ropelaw.lint.resolve` says (``--model-config``, a local directory, the Hugging
Face cache, else ropelaw's table, said by RV032; none of them: RV031 naming the model). OpenRLHF sets no RoPE option \
of its own: the
model runs as transformers builds it from that config.

Length: ``--data.max_len``, the longest sample (PPO: "Max total sequence length (prompt + response)"), default
2,048 for PPO and SFT, 512 for DPO and RM: the length the model is trained at, read as the tuning length and
the target (past the model's training length: a context extension). dtype: ``--ds.param_dtype``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace

from ...errors import UsageError
from ..model import LoadedConfig, NotARopeConfig, Overrides, Value
from ..resolve import read_model, resolve
from ._framework import Doc, dialect, preset

NAME = "openrlhf"
PKG = "openrlhf@3c3be623"
LAUNCH = "(openrlhf entry point)"
MODEL_FLAGS = ("actor.model_name_or_path", "model.model_name_or_path", "pretrain")  # --flags, dotted
# the default --data.max_len of each entry point (openrlhf/cli/<module>.py)
MAX_LEN = {"train_ppo_ray": 2048, "train_sft": 2048, "train_dpo": 512, "train_rm": 512, "serve_rm": 2048}
_MODULE = re.compile(r"^openrlhf\.cli\.(\w+)$")


def detect(data: Mapping) -> bool:
    return LAUNCH in data


def load(doc: Doc, o: Overrides) -> LoadedConfig:
    from .axolotl import fine_tune_length

    module = str(doc.raw(LAUNCH))
    doc.consider(LAUNCH)
    name_v = doc.get(*MODEL_FLAGS, *(("reward.model_name_or_path",) if module == "serve_rm" else ()), expect="str")
    if name_v is None:
        raise NotARopeConfig(f"{doc.path}: runs openrlhf.cli.{module} without a model "
                             f"(--{', --'.join(MODEL_FLAGS[:2])})")
    model = resolve(doc.path, name_v, o.model_config)
    cfg = read_model(doc, o, name_v, model, {}, {}, f"openrlhf {name_v.raw}")
    notes = list(cfg.notes)
    length = doc.get("data.max_len", "max_len", expect="int") or preset(
        MAX_LEN.get(module, 2048), f"--data.max_len: {PKG} openrlhf/cli/{module}.py default",
        doc.get(LAUNCH, expect="str"), "int")
    tune = Value(o.tune, None, 1, 1, "--tune", "int") if o.tune is not None else fine_tune_length(
        length, cfg.train_len, notes, "OpenRLHF")
    target = cfg.target if o.target is not None else length
    dtype = cfg.dtype
    v = doc.get("ds.param_dtype", expect="str")
    if v is not None and str(v.raw) in ("bf16", "fp16"):
        dtype = Value(str(v.raw), v.key, v.line, v.column, "DeepSpeed parameters", "str")
    return replace(cfg, tune_len=tune, target=target, dtype=dtype, notes=notes, considered=sorted(doc.considered))


DIALECT = dialect(NAME, detect, load=load)


def read_launch_text(text: str) -> tuple[dict, dict] | None:
    """The flags of an OpenRLHF launch script (``--flag value`` pairs, as the Megatron reader takes them) with
    the entry point under LAUNCH; None for a script that runs no ``openrlhf.cli`` module."""
    from .megatron import parse_shell, shell_commands

    for part in command_texts(text):
        module = None
        for line, _last, words, _env in shell_commands(part):
            module = next((m.group(1) for w in words if (m := _MODULE.match(w))), None)
            if module is not None:
                first = line  # the command's line: where the entry point is
                break
        if module is not None:
            break
    if module is None:
        return None
    flags, places = parse_shell(part)
    if part is not text:  # a here-document or a command string: each flag where the script writes it
        lines = text.split("\n")
        places = {k: next(((n + 1, line.find(k[0]) + 1) for n, line in enumerate(lines) if k[0] in line), (1, 1))
                  for k in places}
        first = next((n + 1 for n, line in enumerate(lines) if f"openrlhf.cli.{module}" in line), 1)
    data: dict = {LAUNCH: module}
    positions: dict[tuple, tuple[int, int]] = {(LAUNCH,): (first, 1)}
    for k, v in flags.items():  # --data.max_len 2048 -> data: {max_len: 2048}, as argparse's dest "data.max_len"
        if not k.startswith("--"):
            continue
        parts = k[2:].split(".")
        node = data
        for p in parts[:-1]:
            node = node.setdefault(p, {}) if isinstance(node.get(p, {}), dict) else {}
        node[parts[-1]] = v
        positions[tuple(parts)] = places.get((k,), (first, 1))
    return data, positions


_HEREDOC_BODY = re.compile(r"<<-?\s*(['\"]?)(\w+)\1[^\n]*\n(.*?)\n\s*\2\s*$", re.S | re.M)


def command_texts(text: str):
    """The script, then the bodies of its here-documents (``read -d '' cmd <<EOF ... EOF``, run later as
    ``deepspeed --module $cmd``) and the command strings it hands another program (``bash -c "python -m
    ..."``): where OpenRLHF's examples keep their flags."""

    yield text
    start = 0
    for _ in range(16):  # the first 16 here-documents: each match may scan to the end of the script (1 MiB)
        at = text.find("<<", start)
        if at < 0:
            break
        m = _HEREDOC_BODY.match(text, at)
        if m is not None:
            yield m.group(3)
        start = at + 2
    from .megatron import shell_commands

    try:
        for _first, _last, words, _env in shell_commands(text):
            for w in words:
                if "openrlhf.cli." in w and any(c.isspace() for c in w.strip()):
                    yield w
    except UsageError:
        return
