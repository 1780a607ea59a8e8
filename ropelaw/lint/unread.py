"""Never a misread: RoPE-looking keys that no reader used (RV030, ``rules/reading.py``).

A dialect reads the keys it knows; a key it does not know may still change the rotary
(MaxText's ``rope_max_timescale`` read by the generic table would leave RoPE's default base
10,000 where MaxText runs 150,000). After a config is loaded, every leaf of the document whose
key looks like a RoPE setting (a ``rope`` / ``rotary`` / ``yarn`` word in its name, or any key
inside such a block: ``rope: {theta: ...}``, ``rope_scaling: {factor: ...}``) must be a value
the reader took (``LoadedConfig.inputs``) or one it looked at and judged
(``LoadedConfig.considered``: a switch, a key of another model's rotary path). Whatever is left is
recorded in ``LoadedConfig.unread`` and reported as RV030 at the first such key, and a base the
reader fell back to (RoPE's default 10,000, no key of its own) is dropped when an unread key holds
a base: the layer is then not analysed instead of analysed with an invented base.

Hugging Face model configs (``kind == "hf"``, a ``model_type``) are left to the HF engine, whose
keys are transformers' (issue 20 reports the architecture keys it does not model).

Not RoPE settings of the language model, so never reported: kernel switches (``*_fusion``,
``fused_*``) and the rotaries of vision / audio encoders (``rope_theta_for_vit``,
``max_timescale_for_audio``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping  # typing.Mapping's isinstance is 2.5x slower, once per key of every file
from dataclasses import replace
from functools import lru_cache
from typing import Any
from collections.abc import Iterator

from .model import LoadedConfig, NotARopeConfig, UnreadConfig, Value

_WORD = re.compile(r"[a-z0-9]+")
ROPE_WORDS = {"rope", "rotary", "yarn", "rotaryemb"}
# exact names of RoPE settings without one of those words (Megatron / NeMo / GPT-NeoX flags)
ROPE_NAMES = {"seq_len_interpolation_factor", "qk_pos_emb_head_dim", "position_embedding_type", "pos_emb"}
NOT_FREQUENCY = {"fusion", "fused", "vit", "vision", "audio"}  # kernels and encoder rotaries
BASE_WORDS = {"theta", "base", "timescale", "freq"}


def _words(key: Any) -> list[str]:
    return _WORD.findall(str(key).strip().lstrip("-").lower())


def is_rope_key(key: Any) -> bool:
    """``key`` names a RoPE setting by itself (``rope_theta``, ``--rotary-base``, ``rope``)."""
    return _kind(key) == "rope"


def _excluded(key: Any) -> bool:
    return _kind(key) == "excluded"


@lru_cache(maxsize=8192, typed=True)  # typed: 1 and True are one dict key but name "1" and "True"
def _kind(key: Any) -> str:
    """"excluded" (a kernel switch, an encoder's rotary), "rope" (names a RoPE setting) or "": decided
    once per distinct key of the run (every key of every file is asked, most keys recur)."""
    words = set(_words(key))
    if NOT_FREQUENCY & words:
        return "excluded"
    return "rope" if ROPE_WORDS & words or "_".join(_words(key)) in ROPE_NAMES else ""


def rope_leaves(data: Mapping) -> Iterator[tuple[tuple, Any]]:
    """``(path, value)`` of every non-null leaf (a list counts as one) that is a RoPE setting: its own
    key looks like one, or it lies inside a mapping whose key does."""

    def walk(node: Mapping, path: tuple, inside: bool):
        for k, v in node.items():
            if _excluded(k):
                continue
            here = inside or is_rope_key(k)
            if isinstance(v, Mapping):
                yield from walk(v, path + (k,), here)
            elif v is not None and here:
                yield path + (k,), v
    yield from walk(data, (), False)


def dotted(path: tuple) -> str:
    return ".".join(str(p) for p in path)


def _is_base(path: tuple) -> bool:
    return bool(BASE_WORDS & set(_words(path[-1])))


def unread_values(data: Mapping, positions: Mapping, cfg: LoadedConfig) -> list[Value]:
    """The RoPE-looking leaves of ``data`` the reader of ``cfg`` neither used nor judged."""
    read = {v.key for v in cfg.inputs if v.key} | set(cfg.considered)
    blocks = {v.key for v in cfg.inputs if v.key and v.expect == "mapping"}
    out = []
    for path, raw in rope_leaves(data):
        key = dotted(path)
        if key in read or any(dotted(path[:i]) in blocks for i in range(1, len(path))):
            continue
        line, col = positions.get(path, (1, 1))
        out.append(Value(raw, key, line, col, "base" if _is_base(path) else "", "any"))
    return out


def check_read(data: Mapping, positions: Mapping, cfg: LoadedConfig) -> LoadedConfig:
    """``cfg`` with ``unread`` filled in (and no invented base next to an unread base key)."""
    if cfg.kind == "hf":
        return cfg
    known = {v.key for v in cfg.unread}
    unread = list(cfg.unread) + [v for v in unread_values(data, positions, cfg) if v.key not in known]
    if not unread:
        return cfg
    layers, notes = cfg.layers, list(cfg.notes)
    bases = [v for v in unread if v.note == "base"]
    if bases:
        keys = ", ".join(v.key for v in bases)
        fixed = []
        for g in layers:
            b = g.base
            if b.key is None and "RoPE's default" in b.note:
                b = Value(None, None, bases[0].line, bases[0].column,
                          f"not read: {keys} holds the base and ropelaw does not interpret it here")
            fixed.append(replace(g, base=b))
        if fixed != list(layers):
            notes = [n for n in notes if not n.startswith("base 10,000 assumed")]
            notes.append(f"no base assumed: {keys} is not read")
        layers = fixed
    return replace(cfg, unread=unread, layers=layers, notes=notes)


def unread_file(data: Mapping, positions: Mapping, path: str, why: str) -> NotARopeConfig:
    """What a dialect that read nothing becomes: RV030 when the file has RoPE-looking keys, else the skip."""
    leaves = list(rope_leaves(data))
    reason = why[len(path) + 2:] if why.startswith(path + ": ") else why
    if not leaves:
        return NotARopeConfig(why)
    keys = [dotted(p) for p, _ in leaves]
    line, col = positions.get(leaves[0][0], (1, 1))
    from .sources import fit

    # the reader's reason, beside the message when it would run past the limit (a runtime's refusal, its version)
    message, notes = fit(f"unread RoPE settings: {list_keys(keys)}", f" ({reason})", " (not read: the note says why)")
    return UnreadConfig(f"{path}: {message}", "RV030", line, col, notes=(*notes, *all_keys(keys)))


def list_keys(keys: list[str], most: int = 5) -> str:
    """The first ``most`` keys and how many more: a message's list (every key: :func:`all_keys`)."""
    shown = ", ".join(keys[:most])
    return shown + (f" and {len(keys) - most} more" if len(keys) > most else "")


def all_keys(keys: list[str], most: int = 5) -> list[str]:
    """The note listing every key when :func:`list_keys` left some out, else none."""
    return [f"unread keys: {', '.join(keys)}"] if len(keys) > most else []
