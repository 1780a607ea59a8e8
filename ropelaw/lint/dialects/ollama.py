"""Ollama Modelfiles (``ropelaw lint Modelfile``): the GGUF a Modelfile builds from, read as llama.cpp reads it
(:mod:`ropelaw.lint.dialects.gguf`), served at the context Ollama gives each request.

Semantics: Ollama at ollama/ollama@fb3076099687 (2026-08-21; read from its source, not run):

- the file is parsed as ``parser/parser.go`` ``ParseFile`` parses it (:func:`parse_modelfile`, its state
  machine rune by rune: commands FROM, PARAMETER, TEMPLATE, ... case-insensitive, ``#`` comments, values
  quoted with ``"`` or ``\"\"\"``); a line it refuses is refused here (exit 2), and a file without FROM;
- ``FROM PATH`` is a file relative to the Modelfile's folder (``expandPath``); a path that is not there is a
  model from Ollama's library (``req.From``): RV031, give its GGUF with ``--model-config``; a directory (a
  safetensors model Ollama converts) is RV031 too: lint its config.json;
- ``PARAMETER name value``: a name that is not an ``api.Options`` field is refused by ``ollama create``
  ("unknown parameter", ``api.FormatParams``): RV041 (``rope_frequency_base`` and ``rope_frequency_scale``
  are gone); the deprecated names are ignored with a warning; the last value of a name wins;
- the context per request: ``num_ctx``, capped at the model's context_length (``llm/server.go``
  ``NewLlamaServer``: "requested context size too large for model"): RV043 when capped; Ollama then runs
  llama-server with ``-c num_ctx x P -np P`` (``llm/llama_server.go``), which gives each slot ``num_ctx``
  rounded up to 256. Without ``num_ctx`` the context is ``OLLAMA_CONTEXT_LENGTH`` or a default chosen from
  the machine's VRAM (4k / 32k / 256k, ``envconfig``): not known from the file; the model's context_length
  (the longest Ollama gives) is analysed, and the note says so.
"""

from __future__ import annotations

import os
from dataclasses import replace

from ..model import LoadedConfig, ModelNeeded, Overrides, Value
from ..model import Problem
from ..rules.serving import RUNTIME_REFUSES, SERVED_CONTEXT

NAME = "ollama"
OLLAMA = "Ollama (ollama/ollama@fb3076099687, 2026-08-21)"
COMMANDS = ("from", "license", "template", "system", "adapter", "draft", "renderer", "parser", "parameter",
            "message", "requires")
# api/types.go Options and Runner: the json names FormatParams accepts
PARAMETERS = frozenset(["num_ctx", "num_batch", "num_gpu", "main_gpu", "use_mmap", "num_thread", "draft_num_predict",
                        "num_keep", "seed", "num_predict", "top_k", "top_p", "min_p", "typical_p", "repeat_last_n",
                        "temperature", "repeat_penalty", "presence_penalty", "frequency_penalty", "stop"])
DEPRECATED = frozenset(["penalize_newline", "low_vram", "f16_kv", "logits_all", "vocab_only", "use_mlock", "mirostat",
                        "mirostat_tau", "mirostat_eta"])
NIL, NAME_, VALUE, PARAMETER, MESSAGE, COMMENT = range(6)


def is_modelfile(path: str) -> bool:
    """``Modelfile``, ``Modelfile.<anything>`` or ``<anything>.modelfile`` (Ollama's own examples' names)."""
    base = os.path.basename(path).lower()
    return base == "modelfile" or base.startswith("modelfile.") or base.endswith(".modelfile")


def _unquote(s: str) -> tuple[str, bool]:
    if s.startswith('"""'):
        return (s[3:-3], True) if len(s) >= 6 and s.endswith('"""') else ("", False)
    if s.startswith('"'):
        return (s[1:-1], True) if len(s) >= 2 and s.endswith('"') else ("", False)
    return s, True


def _next(r: str, cs: int) -> tuple[int, str]:
    """parseRuneForState: (next state, rune kept or ''); ValueError(kind) where Go returns an error."""
    alpha, space, newline = r.isascii() and r.isalpha(), r in " \t", r in "\r\n"
    if cs == NIL:
        return (COMMENT, "") if r == "#" else (NIL, "") if space or newline else (NAME_, r)
    if cs == NAME_:
        if alpha:
            return NAME_, r
        if space:
            return VALUE, ""
        raise ValueError("command")
    if cs == VALUE:
        return (NIL, r) if newline or space else (VALUE, r)
    if cs in (PARAMETER, MESSAGE):
        if alpha or (cs == PARAMETER and (r.isascii() and r.isdigit() or r == "_")):
            return cs, r
        if space:
            return VALUE, ""
        raise ValueError("eof")
    return (NIL, "") if newline else (COMMENT, "")


def parse_modelfile(text: str) -> list[tuple[str, str, int]]:
    """``[(command, argument, line)]`` as ParseFile reads ``text`` (PARAMETER's command is its name, FROM's
    ``model``); ValueError(message) where ParseFile returns an error."""
    cmds: list[tuple[str, str, int]] = []
    buf: list[str] = []
    cur, line, name, role, start = NIL, 1, "", "", 1
    for r in text.lstrip("\ufeff"):
        if r in "\r\n":
            line += 1
        try:
            nxt, keep = _next(r, cur)
        except ValueError as exc:
            raise ValueError(f"line {line}: " + ("command must be one of " + ", ".join(COMMANDS) if str(exc) ==
                                                 "command" else "unexpected end of a name")) from None
        if nxt != cur:
            b = "".join(buf)
            if cur == NAME_:
                if b.lower() not in COMMANDS:
                    raise ValueError(f"line {line}: command must be one of {', '.join(COMMANDS)} (got {b!r})")
                s = b.lower()
                name, start = ("model" if s == "from" else s), line
                nxt = PARAMETER if s == "parameter" else MESSAGE if s == "message" else nxt
            elif cur == PARAMETER:
                name = b
            elif cur == MESSAGE:
                if b not in ("system", "user", "assistant"):
                    raise ValueError(f"line {line}: message role must be one of system, user, assistant")
                role = b
            elif cur == VALUE:
                s, ok = _unquote(b.strip())
                if not ok or r in " \t":
                    buf.append(r)
                    continue
                cmds.append((name, (role + ": " + s) if role else s, start))
                role = ""
            buf, cur = [], nxt
        if keep and keep.isprintable():
            buf.append(keep)
    if cur == VALUE:
        s, ok = _unquote("".join(buf).strip())
        if not ok:
            raise ValueError("unexpected end of file inside a quoted value")
        cmds.append((name, (role + ": " + s) if role else s, start))
    elif cur not in (NIL, COMMENT):
        raise ValueError("unexpected end of file")
    if not any(c == "model" for c, _, _ in cmds):
        raise ValueError("no FROM line")
    return cmds


def load_modelfile(path: str, text: str, o: Overrides) -> LoadedConfig:
    """The Modelfile at ``path`` read as Ollama serves it (module docstring)."""
    from ...errors import UsageError
    from ..gguf import read_gguf
    from ..unread import check_read
    from . import gguf as G
    from ._framework import assemble, guarded

    try:
        cmds = parse_modelfile(text)
    except ValueError as exc:
        raise UsageError(f"{path}: not a Modelfile Ollama reads ({exc})") from None
    gpath, at = model_path(path, cmds, o)
    g = read_gguf(gpath)
    data, positions = G.mapping(g)
    arch = g.architecture if isinstance(g.architecture, str) else ""
    doc = G.GgufDoc(data, positions, "modelfile", path)
    fields = guarded(G.NAME, path, lambda: G.read(doc))
    served, problems, notes = served_context(path, cmds, data, arch, at)
    fields.target = served
    fields.problems = list(fields.problems) + problems
    fields.notes = list(fields.notes) + notes + [f"{OLLAMA}: FROM {gpath}"]
    cfg = guarded(G.NAME, path, lambda: assemble(doc, fields, replace(o, model_config=None)))
    cfg = replace(cfg, semantics=f"{OLLAMA} over {G.LLAMACPP}", notes=list(cfg.notes) + list(g.notes))
    return check_read(data, positions, cfg)


def model_path(path: str, cmds: list, o: Overrides) -> tuple[str, tuple[int, int]]:
    """``(GGUF path, place of FROM)``: ``--model-config``, else FROM's file (ModelNeeded, RV031, otherwise)."""
    line = next(n for c, _, n in cmds if c == "model")
    arg = [a for c, a, _ in cmds if c == "model"][-1]
    if o.model_config:
        return o.model_config, (line, 1)
    full = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(path)), os.path.expanduser(arg)))
    if os.path.isdir(full):
        raise ModelNeeded(f"{path}: FROM {arg!r} is a model folder Ollama converts; lint its config.json, or give the "
                          "GGUF with --model-config", line, 1)
    if not os.path.isfile(full):
        raise ModelNeeded(f"{path}: FROM {arg!r} is not a file beside the Modelfile: a model from Ollama's library, "
                          "not read here; give its GGUF with --model-config", line, 1)
    if not full.lower().endswith(".gguf"):
        from ...errors import UsageError

        raise UsageError(f"{path}: FROM {arg!r} is not a .gguf file (ropelaw reads Ollama models from their GGUF)")
    return full, (line, 1)


def served_context(path: str, cmds: list, data: dict, a: str, at: tuple[int, int]) -> tuple[Value, list, list]:
    """``(context per request, problems, notes)`` from the PARAMETER lines (module docstring)."""
    problems: list = []
    num_ctx: tuple[str, int] | None = None
    for name, arg, line in cmds:
        if name in COMMANDS or name == "model":
            continue
        if name in DEPRECATED:
            continue
        if name not in PARAMETERS:  # ollama create refuses the whole file; said at the parameter
            v = Value(arg, name, line, 1, "PARAMETER", "any")
            problems.append(Problem(RUNTIME_REFUSES, v, f"PARAMETER {name}: ollama create refuses the Modelfile "
                             "('unknown parameter', api.FormatParams)" + ("; the model's own RoPE would run without it"
                                                                          if "rope" in name else "")))
            continue
        if name == "num_ctx":
            num_ctx = (arg, line)
    train = data.get(f"{a}.context_length")
    if num_ctx is None:
        note = ("no PARAMETER num_ctx: Ollama's context is OLLAMA_CONTEXT_LENGTH or a default chosen from the "
                "machine's VRAM (4k / 32k / 256k), not known here; the model's context_length, the longest Ollama "
                "gives a request, is analysed")
        return Value(train, f"{a}.context_length", *at, note, "int"), problems, [note]
    raw, line = num_ctx
    try:
        asked = int(raw, 10)
    except ValueError:
        from ...errors import UsageError

        raise UsageError(f"{path}: line {line}: PARAMETER num_ctx {raw!r} is not a whole number (ollama create "
                         "refuses it: 'invalid int value')") from None
    capped = min(asked, train) if isinstance(train, int) and train > 0 else asked
    slot = -(-capped // 256) * 256
    slot = min(slot, train) if isinstance(train, int) and train > 0 else slot
    how = f"PARAMETER num_ctx {asked:,}" + (f", capped at the model's context_length {train:,}" if capped < asked
                                            else "") + (f", {slot:,} per slot (llama-server pads to 256)"
                                                        if slot != capped else "")
    value = Value(slot, "num_ctx", line, 1, how, "int")
    if slot < asked:
        problems.append(Problem(SERVED_CONTEXT, value, f"{how}: each request gets {slot:,} tokens, not the "
                         f"{asked:,} the Modelfile asks for (Ollama: 'requested context size too large for model')"))
    return value, problems, []
