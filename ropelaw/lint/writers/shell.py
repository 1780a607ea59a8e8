"""Edit a Megatron-LM launch script (``*.sh``) in place: a flag's value replaced where it is written,
every other byte (comments, line structure, the rest of the command) kept.

The flags are those ``dialects.megatron.parse_shell`` reads (the last occurrence of each, ``VAR=value``
substituted). For each change:

- a flag that is there gets its new value in place: the word after it on its line (or after ``=``), in
  the same quotes; a value written as ``$VAR`` / ``${VAR}`` is changed at the one ``VAR=value`` that sets
  it when nothing else in the script names ``VAR``, else replaced by the value at the flag;
- a flag that is not there is added on a line of its own below a Megatron flag of the same command, only
  where bash reads such a line as part of the command: after a line continued with ``\\`` (the new line
  continued too) or inside an array ``NAME=( ... )``;
- a flag removed loses its words; its line goes when nothing else is on it, except the last line of a
  continued command (the line above would then continue into the next command).

Where that is not possible :class:`ropelaw.errors.UsageError` says why and what to edit by hand. The
caller (``writers.apply_edit``) reads the edited script again and refuses it unless it reads as exactly
the edited flags.
"""

from __future__ import annotations

import re
from typing import Any
from collections.abc import Mapping

from ...errors import UsageError
from .edit import DELETE

# where a flag missing from the script is added: below the first of these the script has
ANCHORS = ("--seq-length", "--max-position-embeddings", "--rotary-base", "--position-embedding-type",
           "--num-attention-heads", "--hidden-size")
_VALUE = re.compile(r"""("[^"]*"|'[^']*'|[^\s"'\\]+)""")
_REF = re.compile(r"""^(["']?)\$(?:\{([A-Za-z_]\w*)\}|([A-Za-z_]\w*))\1$""")


def shell_word(value: Any) -> str | None:
    """A flag's value as a word of the script (None: a switch, written without one)."""
    if value is True:
        return None
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return repr(value)  # 4.0: a float flag keeps its point
    return str(value)


def hand_edit(changes: list) -> str:
    """The changes as a person makes them: ``set --rotary-base 1700000; remove --use-rope-scaling``."""
    out = []
    for flag, value in {path[0]: value for path, value in changes}.items():
        if value is DELETE:
            out.append(f"remove {flag}")
        else:
            word = shell_word(value)
            out.append(f"set {flag}" + (f" {word}" if word is not None else ""))
    return "; ".join(out)


def edited(text: str, flags: Mapping, positions: Mapping, changes: list) -> str:
    """``text`` (LF line ends) with ``changes`` [((flag,), value or DELETE)] made in place; ``UsageError``
    naming the hand edit where one cannot be made safely."""
    lines = text.split("\n")
    ops, adds = [], []
    final = {path[0]: value for path, value in changes}  # a flag removed and set again: set
    for flag, value in final.items():
        where = positions.get((flag,)) if flag in flags else None
        if where is None:
            if value is not DELETE:
                adds.append((flag, value))
        else:
            ops.append((where, flag, value))
    if adds:  # below the anchor's line: made after the edits further down, before those above
        places = [positions[(a,)] for a in ANCHORS if a in flags and (a,) in positions]
        anchor = next((w for w in places if _joins(lines, w[0] - 1)), None)
        if anchor is None:
            raise _refuse(f"no line of {', '.join(a for a in ANCHORS if a in flags) or 'a Megatron model flag'} "
                          "continues with \\ or is in an array, so a flag on a new line below it would be a "
                          "command of its own", changes)
        ops.append(((anchor[0], -1), None, adds))
    for where, flag, value in sorted(ops, key=lambda op: op[0], reverse=True):  # bottom up: lines above stay put
        if flag is None:
            _add(lines, where[0] - 1, value, changes)
        elif value is DELETE:
            _remove(lines, where, flag, flags[flag] is not True, changes)
        else:
            _replace(lines, where, flag, value, changes)
    return "\n".join(lines)


def _refuse(why: str, changes: list) -> UsageError:
    return UsageError(f"a launch script is edited only where bash reads it the same way: {why}; edit the script "
                      f"by hand: {hand_edit(changes)}")


def _value_span(line: str, col: int, flag: str) -> tuple[int, int] | None:
    """``(start, end)`` of the value word of ``flag`` at 0-based ``col`` of ``line``: after ``=`` or after
    the spaces that follow the flag; None when it is not on this line."""
    end = col + len(flag)
    if line[end:end + 1] == "=":
        m = _VALUE.match(line, end + 1)
        return (m.start(), m.end()) if m else None
    m = re.compile(r"[ \t]+").match(line, end)
    if m is None:
        return None
    v = _VALUE.match(line, m.end())
    if v is None or v.group().startswith(("--", "#")):
        return None
    return v.start(), v.end()


def _replace(lines: list[str], where: tuple[int, int], flag: str, value: Any, changes: list) -> None:
    n, col = where[0] - 1, where[1] - 1
    line = lines[n]
    word = shell_word(value)
    span = _value_span(line, col, flag)
    if word is None or span is None:
        raise _refuse(f"{flag} on line {n + 1} has no value word on its line to replace", changes)
    old = line[span[0]:span[1]]
    ref = _REF.match(old)
    if ref and _set_variable(lines, ref.group(2) or ref.group(3), word):
        return
    q = old[0] if old[0] in "\"'" else ""
    lines[n] = line[:span[0]] + f"{q}{word}{q}" + line[span[1]:]


def _set_variable(lines: list[str], name: str, word: str) -> bool:
    """Change ``name=value`` where the script sets ``name`` once and names it once (at the flag)."""
    text = "\n".join(lines)
    uses = re.findall(r"\$(?:\{" + name + r"[}:]|" + name + r"(?!\w))", text)
    sets = [i for i, ln in enumerate(lines) if re.match(r"^\s*(?:export\s+)?" + name + r"=", ln)]
    if len(uses) != 1 or len(sets) != 1:
        return False
    i = sets[0]
    m = re.match(r"^(\s*(?:export\s+)?" + name + r"=)([\"']?)([^\s\"'$()`;]*)\2(\s*(?:#.*)?)$", lines[i])
    if m is None:
        return False
    lines[i] = f"{m.group(1)}{m.group(2)}{word}{m.group(2)}{m.group(4)}"
    return True


def _remove(lines: list[str], where: tuple[int, int], flag: str, has_value: bool, changes: list) -> None:
    n, col = where[0] - 1, where[1] - 1
    line = lines[n]
    end = col + len(flag)
    if has_value:
        span = _value_span(line, col, flag)
        if span is None:
            raise _refuse(f"{flag} on line {n + 1} has its value on another line", changes)
        end = span[1]
    rest = (line[:col].rstrip(" \t") + " " + line[end:].lstrip(" \t")).rstrip(" \t")
    if rest.strip() in ("", "\\"):
        continued_above = n > 0 and lines[n - 1].rstrip().endswith("\\")
        if continued_above and not line.rstrip().endswith("\\"):
            raise _refuse(f"{flag} ends the command continued above it (line {n + 1})", changes)
        del lines[n]
        return
    lead = line[:len(line) - len(line.lstrip(" \t"))]
    lines[n] = lead + rest.lstrip(" \t")


def _in_array(lines: list[str], n: int) -> bool:
    """Whether line ``n`` (0-based) is an element line of a multi-line array ``NAME=(`` ... ``)``."""
    if ")" in lines[n] or "(" in lines[n]:
        return False
    for i in range(n - 1, -1, -1):
        s = lines[i].split("#", 1)[0]
        if ")" in s:
            return False
        if re.search(r"[A-Za-z_]\w*\+?=\(\s*$", s.rstrip()):
            return True
    return False


def _joins(lines: list[str], n: int) -> bool:
    """Whether bash reads a line inserted below line ``n`` (0-based) as part of its command."""
    return lines[n].rstrip().endswith("\\") or _in_array(lines, n)


def _add(lines: list[str], n: int, adds: list, changes: list) -> None:
    """Lines for the flags ``adds`` [(flag, value)] below line ``n`` (0-based), as part of its command."""
    line = lines[n]
    indent = line[:len(line) - len(line.lstrip(" \t"))]
    continued = line.rstrip().endswith("\\")
    new = []
    for flag, value in adds:
        word = shell_word(value)
        new.append(indent + flag + (f" {word}" if word is not None else "") + (" \\" if continued else ""))
    lines[n + 1:n + 1] = new
