"""Numbers as the command line and a project file take them (stdlib only): a finite real, a length of
tokens with binary suffixes (``128k`` = 131,072) and a RoPE base with decimal ones (``500k`` = 500,000).

The argparse types of every subcommand (``commands/_common.py`` re-exports them) and the lengths of
``[tool.ropelaw.lint]`` (``project.py``) are these functions; a value that is not one raises
``argparse.ArgumentTypeError`` with the one-line reason. The help of the base flags and ``--format``
are here too, for ``plan_run`` (the arguments ``ropelaw plan`` and ``ropelaw.explore()`` share).
"""

from __future__ import annotations

import argparse
import math
from typing import Any

from .limits import MAX_LENGTH

__all__ = ["short_repr", "number", "LENGTH_SUFFIXES", "BASE_SUFFIXES", "LENGTH_HELP", "BASE_HELP", "SuffixedInt",
           "SuffixedFloat", "suffix_note", "base", "length", "PRETRAIN_HELP", "add_format"]


def short_repr(text: str, limit: int = 40) -> str:
    """repr of an argument cut to ``limit`` characters (a 5,000-digit argument stays one short line)."""
    r = repr(text)
    return r if len(r) <= limit else r[: limit - 4] + "...'"


def number(text: str) -> float:
    """argparse type: a finite real number; accepts ``1e6`` and ``1_000_000``."""
    try:
        x = float(text.replace("_", ""))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {short_repr(text)}") from None
    if not math.isfinite(x):
        raise argparse.ArgumentTypeError(f"must be finite: {short_repr(text)}")
    return x


# Suffixes. Lengths are counted in binary units, as context sizes are quoted (a "4k" context
# is 4,096 tokens); bases in decimal ones, as rope_theta values are quoted (Llama 3's "500k"
# is 500,000; "1M" is 1,000,000). The help of every flag and the text output say which.
LENGTH_SUFFIXES = {"k": 1024, "m": 1024 * 1024}
BASE_SUFFIXES = {"k": 10**3, "m": 10**6}
LENGTH_HELP = "4096, 4e3, 128k, 1M: k = 1,024 and M = 1,048,576 tokens"
BASE_HELP = "1e6, 500k, 1M; for bases k = 1,000 and M = 1,000,000, not 1,024 as for lengths"


class _Suffixed:
    """Mixin: the number remembers the flag text it was read from when a suffix was used."""

    text: str = ""
    unit: int = 1

    def suffix_note(self) -> str:
        """``"128k = 128 x 1,024"`` when the value was given with a suffix, else ``""``."""
        if not self.text:
            return ""
        return f"{self.text} = {self.text[:-1]} x {self.unit:,}"


class SuffixedInt(_Suffixed, int):
    pass


class SuffixedFloat(_Suffixed, float):
    pass


def suffix_note(value: Any) -> str:
    """The note of a value read with a suffix (``"1M = 1 x 1,000,000"``), else ``""``."""
    return value.suffix_note() if isinstance(value, _Suffixed) else ""


def _with_text(value: Any, cls: type, text: str, unit: int) -> Any:
    out = cls(value)
    out.text, out.unit = text, unit
    return out


def base(text: str) -> float:
    """argparse type: a RoPE base, a finite real number with an optional decimal suffix
    (``1e6``, ``500k`` = 500,000, ``1M`` = 1,000,000); RopeSpec checks that it is > 1."""
    t = text.strip().replace("_", "")
    unit = BASE_SUFFIXES.get(t[-1:].lower(), 1) if not t.lower().endswith(("inf", "nan")) else 1
    if unit == 1:
        return number(text)
    try:
        x = number(t[:-1]) * unit
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(f"not a number: {short_repr(text)}") from None
    if not math.isfinite(x):
        raise argparse.ArgumentTypeError(f"must be finite: {short_repr(text)}")
    return _with_text(x, SuffixedFloat, t, unit)


def length(text: str) -> int:
    """argparse type: a whole number of tokens, 1 .. 2**53 (``4096``, ``4e3``, ``128k``, ``1M``;
    k = 1,024, M = 1,048,576).

    Digit strings are read exactly (``9007199254740993`` is not rounded to a float first).
    """
    n = _whole_length(text)
    t = text.strip().replace("_", "")
    unit = LENGTH_SUFFIXES.get(t[-1:].lower(), 1)
    return _with_text(n, SuffixedInt, t, unit) if unit != 1 else n


def _whole_length(text: str) -> int:
    t = text.strip().replace("_", "")
    mult = 1
    if t[-1:].lower() in ("k", "m"):
        mult = 1024 if t[-1].lower() == "k" else 1024 * 1024
        t = t[:-1]
    if t.isdigit():  # exact: no float rounding of long integer strings
        if len(t.lstrip("0")) > 20:  # beyond 2**53 whatever the suffix; int() of 4,300+ digits would fail
            raise argparse.ArgumentTypeError(f"must be at most 2**53 = {MAX_LENGTH:,} tokens: {short_repr(text)}")
        n = int(t) * mult
    else:
        x = number(t) * mult
        if not math.isfinite(x):  # 1e308k: finite, then beyond float range once multiplied
            raise argparse.ArgumentTypeError(f"must be at most 2**53 = {MAX_LENGTH:,} tokens: {short_repr(text)}")
        if x != int(x) or x < 1:
            raise argparse.ArgumentTypeError(f"must be a whole number >= 1: {text!r}")
        n = int(x)
    if n < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number >= 1: {text!r}")
    if n > MAX_LENGTH:
        raise argparse.ArgumentTypeError(f"must be at most 2**53 = {MAX_LENGTH:,} tokens: {text!r}")
    return n


# One meaning in every command (bound, base, dims, schemes, plan): --base is the base the model runs
# with (a config's rope_theta); --pretrain-base the base it was pre-trained with, which is --base unless
# given. Liu et al.'s setting (LLaMA 2 pre-trained at 10,000, tuned at a larger base) is
# --pretrain-base 1e4 --base 1e6: never assumed (a Llama 3 user, pre-trained at 5e5, got a bound 22x
# too high from the old default of 10,000).
PRETRAIN_HELP = ("the base the model was pre-trained with (default: --base, the model as trained; Liu et al.'s "
                 "LLaMA 2 setting, tuned at a larger base after pre-training at 10,000, is --pretrain-base 1e4; "
                 "k and M as for --base)")


def add_format(parser: argparse.ArgumentParser, choices=("text", "json")) -> None:
    parser.add_argument("--format", choices=choices, default="text", help="output format (default: text)")
