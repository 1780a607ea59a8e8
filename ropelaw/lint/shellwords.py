"""Shell words of launch scripts expanded as bash expands them (bash(1), Parameter Expansion): ``$VAR``,
``${VAR}``, ``${VAR:-default}`` and ``${VAR-default}``, nested defaults included; nothing is run."""

from __future__ import annotations

import re

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _brace_end(word: str, start: int) -> int:
    """The index of the ``}`` closing the ``${`` at ``start`` (nested ``${...}`` counted), -1 if none."""
    depth, j = 0, start
    while j < len(word):
        if word.startswith("${", j):
            depth, j = depth + 1, j + 2
            continue
        if word[j] == "}":
            depth -= 1
            if depth == 0:
                return j
        j += 1
    return -1


def expand_word(word: str, env: dict[str, str], depth: int = 0) -> str | None:
    """``word`` with ``$VAR`` / ``${VAR}`` / ``${VAR:-default}`` / ``${VAR-default}`` substituted as bash does
    (bash(1), Parameter Expansion: ``:-`` takes the default when VAR is unset or empty, ``-`` only when unset;
    the default is itself expanded, so ``${A:-${B:-x}}`` nests); None if a variable is unknown and has no
    default. Other expansions (``${VAR:=x}``, ``$1`` ...) are kept as written; defaults nested deeper than 16
    are unknown (None), never a recursion without bound."""
    if depth > 16:
        return None
    out: list[str] = []
    i = 0
    while i < len(word):
        k = word.find("$", i)
        if k < 0:
            out.append(word[i:])
            break
        out.append(word[i:k])
        if word.startswith("${", k):
            end = _brace_end(word, k)
            m = _NAME.match(word, k + 2)
            if end < 0 or m is None:
                out.append(word[k:])
                break
            name, rest = m.group(), word[m.end():end]
            op = ":-" if rest.startswith(":-") else "-" if rest.startswith("-") else None
            if rest and op is None:  # ${VAR:=x}, ${VAR#x} ...: not modelled, kept as written
                out.append(word[k:end + 1])
            elif name in env and not (op == ":-" and env[name] == ""):
                out.append(env[name])
            elif op is not None:
                got = expand_word(rest[len(op):], env, depth + 1)
                if got is None:
                    return None
                out.append(got)
            else:
                return None
            i = end + 1
            continue
        m = _NAME.match(word, k + 1)
        if m is None:
            out.append("$")
            i = k + 1
            continue
        if m.group() not in env:
            return None
        out.append(env[m.group()])
        i = m.end()
    return "".join(out)
