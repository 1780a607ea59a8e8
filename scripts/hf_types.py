"""Regenerate ``ropelaw/data/hf_types.json``: which model types each transformers version knows, and which RoPE
keys its config classes declare as strict integer fields (read by ``ropelaw.lint.dialects.hf.types_table``).

    .venv/bin/python scripts/hf_types.py      # transformers 4.57.1
    .venv-tf5/bin/python scripts/hf_types.py  # transformers 5.23.0

Each run rewrites the tables of its own transformers version and keeps the other one.
``tests/test_severity_parity.py`` checks the installed version's tables against transformers.

Why: a ``config.json`` whose ``model_type`` the installed transformers does not know (and that has
no ``auto_map`` to remote code) is refused by ``AutoConfig`` ("does not recognize this
architecture"); and 5.x config classes are strict dataclasses (``@strict``): a field annotated
``int`` (or ``int | None``) refuses a float, even a whole one (``"max_position_embeddings":
8192.0``), a bool and a string (``StrictDataclassFieldValidationError``). 4.57.1's classes are
plain ``__init__`` methods and take any value.
"""

from __future__ import annotations

import dataclasses
import logging
import types
import typing
import warnings

# the top-level keys the hf dialect reads as lengths or dims (dialects/hf.py ALIASES)
INT_KEYS = ("hidden_size", "n_embd", "d_model", "num_attention_heads", "n_head", "num_heads", "head_dim",
            "kv_channels", "qk_rope_head_dim", "rotary_dim", "max_position_embeddings", "max_sequence_length",
            "n_positions", "seq_length", "original_max_position_embeddings", "sliding_window",
            "attention_chunk_size")


def _is_int_field(annotation) -> bool:
    """``int`` or ``int | None`` (what strict validation checks as an integer)."""
    if annotation is int:
        return True
    args = typing.get_args(annotation)
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        rest = [a for a in args if a is not type(None)]
        return rest == [int]
    return False


def strict_int_fields(cls) -> tuple[str, ...]:
    """The keys of INT_KEYS that ``cls`` (a 5.x strict config dataclass) declares as integers."""
    if not dataclasses.is_dataclass(cls):
        return ()
    import sys

    fields = {f.name: f.type for f in dataclasses.fields(cls)}
    out = []
    for k in INT_KEYS:
        t = fields.get(k)
        if isinstance(t, str):  # a postponed annotation: evaluate it where the class was defined
            t = eval(t, vars(sys.modules[cls.__module__]), {"int": int})  # noqa: S307 - transformers' own source
        if t is not None and _is_int_field(t):
            out.append(k)
    return tuple(out)


def tables() -> dict:
    """``{"model_types": [...], "strict_int": {(keys...): [model_types]}, "heads_divide_hidden": [...],
    "takes_text_config": [...]}`` of the installed transformers (the last: config classes with a text_config
    sub-config; any other class keeps a file's ``text_config`` as a plain dict, and building the model then
    fails: AttributeError: 'dict' object has no attribute 'to_dict').

    A composite (multimodal) config class without such fields of its own gets its text config's
    (``sub_configs["text_config"]``): a flat file of the older layout is read into that class."""
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING, CONFIG_MAPPING_NAMES

    disabled = logging.root.manager.disable
    logging.disable(logging.WARNING)
    try:
        return _tables(CONFIG_MAPPING, CONFIG_MAPPING_NAMES)
    finally:
        logging.disable(disabled)


def _tables(CONFIG_MAPPING, CONFIG_MAPPING_NAMES) -> dict:  # noqa: N803 - transformers' names
    out: dict = {"model_types": sorted(CONFIG_MAPPING_NAMES), "strict_int": {}, "takes_text_config": []}
    by_type: dict = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for mt in sorted(CONFIG_MAPPING_NAMES):
            try:
                cls = CONFIG_MAPPING[mt]
            except Exception:  # noqa: BLE001 - a class that does not import here (optional dependency)
                continue
            keys = strict_int_fields(cls)
            subs = getattr(cls, "sub_configs", None)
            text = subs.get("text_config") if isinstance(subs, dict) else None
            if not isinstance(subs, dict) or "text_config" in subs:  # (a property: not known here, assume it does)
                out["takes_text_config"].append(mt)
            if not keys and isinstance(text, type):
                keys = strict_int_fields(text)
            if keys:
                by_type[mt] = keys
    for mt, keys in sorted(by_type.items()):
        out["strict_int"].setdefault(keys, []).append(mt)
    out["heads_divide_hidden"] = sorted(mt for mt in by_type if refuses_indivisible_heads(CONFIG_MAPPING[mt]))
    out["text_types"] = {mt: rule for mt in out["takes_text_config"]
                         if (rule := text_type_rule(CONFIG_MAPPING, CONFIG_MAPPING_NAMES, mt)) is not None}
    return out


UNKNOWN = "ropelaw_no_such_type"  # a text_config model_type no transformers has


def text_type_rule(CONFIG_MAPPING, CONFIG_MAPPING_NAMES, mt: str) -> tuple | None:  # noqa: N803
    """How composite ``mt`` builds its ``text_config``, run here: ``("fixed", T)`` (one class of type T whatever
    the file says), or ``("mapping", default, renames)`` (``CONFIG_MAPPING[text_config["model_type"]]``: a type the
    version does not have raises; ``default`` the type of a text_config without one, None when that raises;
    ``renames``: written type -> the type it builds, probed with ``<mt>_text`` (EXAONE 4.5's released
    ``exaone4_5_text`` is built as ``exaone4`` by 5.23.0). None: the class does not build from a dict here."""
    import contextlib
    import io

    cls = CONFIG_MAPPING[mt]

    def built(tc: dict):
        with contextlib.redirect_stdout(io.StringIO()):
            t = getattr(cls(text_config=tc), "text_config", None)
        return None if t is None or isinstance(t, dict) else registered_type(CONFIG_MAPPING_NAMES, type(t))

    try:
        fixed = built({"model_type": UNKNOWN})
    except Exception:  # noqa: BLE001 - KeyError / ValueError: the written type is looked up
        fixed = None
    else:
        return ("fixed", fixed) if isinstance(fixed, str) else None
    try:
        default = built({})
    except Exception:  # noqa: BLE001
        default = None
    renames = {}
    cand = f"{mt}_text"
    if cand not in CONFIG_MAPPING_NAMES:
        try:
            got = built({"model_type": cand})
        except Exception:  # noqa: BLE001
            got = None
        if isinstance(got, str) and got != cand:
            renames[cand] = got
    return ("mapping", default, renames)


def registered_type(CONFIG_MAPPING_NAMES, cls) -> str | None:  # noqa: N803 - transformers' name
    """The model type under which ``cls`` is registered in CONFIG_MAPPING (its ``model_type`` when that is the key of
    its class), else its ``model_type`` attribute. 4.57.1's Glm4vMoeTextConfig says ``model_type = "Glm4vMoe_text"``
    but is registered as ``glm4v_moe_text``, the type its per-layer entry and its files name."""
    own = getattr(cls, "model_type", None)
    if CONFIG_MAPPING_NAMES.get(own) == cls.__name__:
        return own
    keys = sorted(k for k, name in CONFIG_MAPPING_NAMES.items() if name == cls.__name__)
    return keys[0] if keys else own


def refuses_indivisible_heads(cls) -> bool:
    """``cls(hidden_size=60, num_attention_heads=7, ...)`` raises "not a multiple of" / "not divisible by
    the number of attention heads" (5.x ``validate_architecture`` of some classes: llama, gemma2, gpt_neox, ...), run
    here."""
    import contextlib
    import io
    import re

    for kwargs in ({"head_dim": 8, "num_key_value_heads": 7}, {"num_key_value_heads": 7}, {}):
        try:
            with contextlib.redirect_stdout(io.StringIO()):  # a few classes print while they build
                cls(hidden_size=60, num_attention_heads=7, **kwargs)
        except Exception as exc:  # noqa: BLE001 - any other refusal is not this check
            if re.search(r"(multiple of|divisible by) the number of attention heads", str(exc)):
                return True
    return False


def head_dim_table() -> dict:
    """``{model_type: head_dim_absent(model_type)}`` of the installed transformers, the types it says nothing of left
    out (tiny models built: about 3.5 CPU-minutes under 5.23.0, so ``tables()`` leaves it to ``main``; the test
    derives a sample again)."""
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING_NAMES

    disabled = logging.root.manager.disable
    logging.disable(logging.WARNING)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return {mt: got for mt in sorted(CONFIG_MAPPING_NAMES) if (got := head_dim_absent(mt))}
    finally:
        logging.disable(disabled)


def head_dim_absent(mt: str) -> dict | None:
    """What ``mt``'s config class makes of a file without ``head_dim``, where it is not hidden_size /
    num_attention_heads (run here): ``{"fixed": N}`` / ``{"from": K}`` (the class keeps its own default N whatever
    the two say, or takes the value of another key K: :func:`_head_dim_source`;
    built with (hidden_size, num_attention_heads) = (192, 3) and (320, 4), quotients 64 and 80, head_dim N both
    times; a fixed N only where the tiny model runs it: :func:`_model_keeps_head_dim`),
    ``{"refused": error}`` (the class leaves head_dim None and the tiny model of ``probes.observe`` does not build
    with it: the runtime's error), else None (derived from the two, or the model derives it itself)."""
    import contextlib
    import io

    from transformers.models.auto.configuration_auto import CONFIG_MAPPING

    try:
        cls = CONFIG_MAPPING[mt]
        with contextlib.redirect_stdout(io.StringIO()):
            got = [getattr(cls(hidden_size=h, num_attention_heads=n, num_key_value_heads=n), "head_dim", 0)
                   for h, n in ((192, 3), (320, 4))]
    except Exception:  # noqa: BLE001 - a class that does not take these (no attention heads, a sub-config)
        return None
    if got[0] == got[1] and isinstance(got[0], int) and not isinstance(got[0], bool) and got[0] > 0:
        source = _head_dim_source(cls, got[0])
        return source if "from" in source or _model_keeps_head_dim(mt, cls) else None
    if got != [None, None]:
        return None
    return _head_dim_none(mt, cls)


def _head_dim_source(cls, n: int) -> dict | None:
    """``{"from": K}`` when head_dim ``n`` follows another key K of the class holding the same default (DeepSeek-V2:
    ``qk_rope_head_dim``; K set to 2n alone, head_dim 2n), else ``{"fixed": n}``."""
    import contextlib
    import io

    with contextlib.redirect_stdout(io.StringIO()):
        same = sorted(k for k, v in cls().to_dict().items() if k not in ("head_dim", "hidden_size",
                      "num_attention_heads", "num_key_value_heads") and v == n and type(v) is int)
        for k in same:
            try:
                if getattr(cls(**{k: 2 * n}), "head_dim", None) == 2 * n:
                    return {"from": k}
            except Exception:  # noqa: BLE001 - a value the class refuses there: not the source
                continue
    return {"fixed": n}


def _model_keeps_head_dim(mt: str, cls) -> bool:
    """The tiny model of ``mt`` without head_dim (``probes.tiny_overrides`` less it) rotates the same channels with
    hidden_size doubled: its modeling code runs the class's head_dim, not hidden_size / num_attention_heads. False
    when it does not build or rotates nothing (the entry is then left out: not proven)."""
    from ropelaw.lint.layers import probes

    name = probes.candidate(mt)
    if name is None:
        return False
    try:
        base = {k: v for k, v in probes.tiny_overrides(cls).items() if k != "head_dim"}
    except KeyError:  # not a text decoder's config (tiny_overrides names what it lacks)
        return False
    if not isinstance(base.get("hidden_size"), int):
        return False
    seen = []
    for h in (base["hidden_size"], 2 * base["hidden_size"]):
        p = probes.observe(mt, name, dict(base, hidden_size=h))
        rotated = [o.rope.channels for o in p.layers if o.rope is not None]
        if p.error or not rotated:
            return False
        seen.append(rotated)
    return seen[0] == seen[1]


def _head_dim_none(mt: str, cls) -> dict | None:
    """``{"refused": error}`` when the tiny model of ``mt`` builds and runs with its head_dim but not with None."""
    from ropelaw.lint.layers import probes

    name = probes.candidate(mt)
    if name is None:
        return None
    try:
        base = probes.tiny_overrides(cls)
    except KeyError:  # not a text decoder's config
        return None
    if probes.observe(mt, name, base).error:
        return None
    err = probes.observe(mt, name, dict(base, head_dim=None)).error
    return {"refused": err.removeprefix("cannot build: ")[:160]} if err else None


def version_json(t: dict) -> dict:
    """One version's :func:`tables` as the JSON file holds it: sorted lists, ``strict_int`` as a list of
    ``{"keys": [...], "model_types": [...]}``, each text rule a list."""
    return {"model_types": sorted(t["model_types"]),
            "strict_int": [{"keys": list(k), "model_types": sorted(v)} for k, v in sorted(t["strict_int"].items())],
            "heads_divide_hidden": sorted(t.get("heads_divide_hidden", ())),
            "takes_text_config": sorted(t.get("takes_text_config", ())),
            "text_types": {mt: list(rule) for mt, rule in sorted(t.get("text_types", {}).items())},
            "head_dim_absent": dict(sorted(t.get("head_dim_absent", {}).items()))}


ABOUT = ("Model types known to each transformers version, and the RoPE keys its config classes declare as strict "
         "integer fields (5.x @strict dataclasses refuse a float, a bool or a string there): versions: "
         "transformers version -> model_types (CONFIG_MAPPING), strict_int (keys -> the types declaring them int), "
         "heads_divide_hidden (classes refusing hidden_size not a multiple of the heads), takes_text_config "
         "(classes with a text_config sub-config), text_types (composite -> [\"fixed\", type] or "
         "[\"mapping\", default, renames]: how it builds its text_config), head_dim_absent (type -> {fixed: N}, the "
         "class keeps head_dim N when a file has none, or {refused: error}, the class leaves it None and the model "
         "does not build)")


def main() -> None:
    import transformers

    from ropelaw import data

    print(data.write_versions("hf_types", transformers.__version__,
                              version_json(tables() | {"head_dim_absent": head_dim_table()}), about=ABOUT,
                              generated_by="python scripts/hf_types.py (under each transformers version; it keeps the "
                                           "other version's)",
                              source="transformers.models.auto.configuration_auto.CONFIG_MAPPING and the type hints "
                                     "of each config class ({versions})"))


if __name__ == "__main__":
    main()
