"""Megatron-LM flag files (YAML / JSON dicts of argparse flags, ``MODEL_ARGS`` sections): an option
as the flags ``dialects.megatron`` reads, written in the file's own spelling (``--seq-length``,
``seq-length`` or ``seq_length``).

- ``base`` / ``ntk``: ``--rotary-base``; ``train``: ``--seq-length`` and ``--max-position-embeddings``;
- ``linear``: ``--rotary-seq-len-interpolation-factor`` (an int in arguments.py: a factor that is not
  whole is refused);
- ``yarn``: ``--position-embedding-type yarn``, ``--rotary-scaling-factor``,
  ``--yarn-original-max-position-embeddings``, ``--yarn-beta-fast 32``, ``--yarn-beta-slow 1`` (with
  multi-latent attention its own ``--original-max-position-embeddings``, ``--beta-fast``, ``--beta-slow``),
  as ``dialects.megatron`` reads them;
- ``llama3``: ``--use-rope-scaling`` and ``--rope-scaling-factor``: Megatron-Core fixes the bands
  (low 1, high 4, original 8,192), so only a plan with exactly those is written.
Every option also sets ``--max-position-embeddings`` to the target. Dynamic NTK, ReRoPE and Leaky
ReRoPE have no Megatron flag: refused. ``--rotary-base`` is an int in arguments.py (``type=int``): a base
is written whole, one that is not is refused. Launch scripts (``*.sh``) are the same flags, edited in place
by ``writers.shell`` (the data is ``parse_shell``'s flags)."""

from __future__ import annotations

from typing import Any
from collections.abc import Callable, Mapping

from .edit import DELETE, Edit, refuse

SCHEME_FLAGS = ("use_rope_scaling", "rope_scaling_factor", "rotary_seq_len_interpolation_factor",
                "rotary_scaling_factor")


def _style(keys: list[str]) -> tuple[str, str]:
    """(prefix, separator) of the file's flags: ('--', '-'), ('', '-') or ('', '_')."""
    if any(k.startswith("--") for k in keys):
        return "--", "-"
    if any("-" in k for k in keys):
        return "", "-"
    return "", "_"


TUNED = ("--seq-length {target:,}: the option's cost is fine-tuning at the target; YaRN scales from the original "
         "max position embeddings {t:,}, the length the model was trained at, and lint reads this run as "
         "that fine-tune")


def _tuning_length(name: str, node: Mapping, existing: dict, target: int, t: int) -> str | None:
    """Why ``--seq-length`` stays where it is for option ``name`` (fine-tuning at ``target``), or None: it
    is set to the target for YaRN in a run that does not start the model (its original length states T)."""
    from ..dialects.megatron import LAUNCH

    keep = f"--seq-length stays {t:,}: set it to {target:,} for the fine-tuning the option costs"
    if name == "linear":
        return (f"{keep} (Megatron-LM states no training length beside --rotary-seq-len-interpolation-factor, so "
                f"this file at {target:,} would read as a model trained at {target:,}: lint it then with --train {t} "
                f"--tune {target})")
    loads = any(str(node.get(existing.get(k, ""), "")).lower() not in ("", "false", "none")
                for k in ("pretrained_checkpoint", "finetune", "load"))
    if LAUNCH in node and not loads:
        return (f"{keep}, and start the run from the pre-trained weights (--pretrained-checkpoint or --load): the "
                f"script runs {node[LAUNCH]} from no weights, a pre-training with YaRN")
    return None


def edit(data: Mapping, cfg: Any, option: Any, target: int) -> Edit:
    from ..dialects.megatron import flag_name

    name, spec = option.name, option.spec
    sec = ("MODEL_ARGS",) if isinstance(data.get("MODEL_ARGS"), Mapping) else ()
    node = data["MODEL_ARGS"] if sec else data
    keys = [str(k) for k in node]
    pre, sep = _style(keys)
    existing = {flag_name(k): k for k in keys}
    e = Edit("megatron", name)

    def flag(n: str, value: Any) -> None:
        e.set(sec + (existing.get(n) or pre + n.replace("_", sep),), value)

    def drop(n: str) -> None:
        if n in existing:
            e.delete(sec + (existing[n],))

    mla = str(node.get(existing.get("multi_latent_attention", ""), "")).lower() in ("true", "1")
    t = spec.train_len
    if name in ("base", "ntk", "train"):
        if name != "train" or option.parameters.get("base") is not None:
            b = float(spec.base if name != "ntk" else option.extra["scaled_base"])
            if not b.is_integer():
                return refuse("megatron", name, f"--rotary-base is an int in Megatron-LM's arguments.py; base {b:g} "
                                                "is not whole")
            flag("rotary_base", int(b))
        if name != "train":  # plain RoPE at the new base: no scaling flag stays
            if mla:
                return refuse("megatron", name, "multi-latent attention runs its own YaRN (rope_type): a plain base "
                                                "cannot be stated")
            for n in SCHEME_FLAGS:
                drop(n)
            pet = existing.get("position_embedding_type")
            if pet is not None and str(node.get(pet)).lower() == "yarn":
                e.set(sec + (pet,), "rope")
        if name == "train":
            flag("seq_length", target)
    elif name == "linear":
        s = float(spec.param("factor"))
        if not s.is_integer():
            return refuse("megatron", name,
                          f"--rotary-seq-len-interpolation-factor is an int; factor {s:g} is not whole")
        for n in SCHEME_FLAGS:
            drop(n)
        flag("rotary_seq_len_interpolation_factor", int(s))
    elif name == "yarn":
        for n in SCHEME_FLAGS:
            drop(n)
        if not mla:
            flag("position_embedding_type", "yarn")
        flag("rotary_scaling_factor", float(spec.param("factor")))
        pre_ = "" if mla else "yarn_"  # MLATransformerConfig's own fields; else argument_utils.py's --yarn-* flags
        flag(pre_ + "original_max_position_embeddings", t)
        flag(pre_ + "beta_fast", 32)
        flag(pre_ + "beta_slow", 1)
    elif name == "llama3":
        lo, hi = float(spec.param("low_freq_factor", 1.0)), float(spec.param("high_freq_factor", 4.0))
        if (t, lo, hi) != (8192, 1.0, 4.0):
            return refuse("megatron", name,
                          "Megatron-Core's --use-rope-scaling fixes the Llama 3.1 bands (low 1, high 4, "
                          f"original 8,192); this plan needs original {t:,}, low {lo:g}, high {hi:g}")
        for n in SCHEME_FLAGS:
            drop(n)
        flag("use_rope_scaling", True)
        flag("rope_scaling_factor", float(spec.param("factor")))
    else:
        return refuse("megatron", name, f"Megatron-LM has no flag for {name!r}")
    if mla and name not in ("yarn", "base", "ntk", "train"):
        return refuse("megatron", name,
                      "multi-latent attention runs its own YaRN (rope_type): only yarn, base and train")
    return _lengths(e, name, node, existing, target, t, flag)


def _lengths(e: Edit, name: str, node: Mapping, existing: dict, target: int, t: int,
             flag: Callable[[str, Any], None]) -> Edit:
    """Every option's lengths: max_position_embeddings at the target, seq_length at the target when the option is
    tuned there (else at the training length ``t`` when the file has none); a flag dropped and set again is
    changed where it is."""
    flag("max_position_embeddings", target)
    why = _tuning_length(name, node, existing, target, t) if name in ("yarn", "linear") else "not tuned at the target"
    if why is None:  # the option's cost: fine-tuning at the target
        flag("seq_length", target)
        e.notes.append(TUNED.format(target=target, t=t))
    elif name in ("yarn", "linear"):
        e.notes.append(why)
    if why is not None and name != "train" and "seq_length" not in existing:
        flag("seq_length", t)
    kept = {p for p, v in e.changes if v is not DELETE}  # a flag dropped and set again is changed where it is
    e.changes = [(p, v) for p, v in e.changes if v is not DELETE or p not in kept]
    return e
