"""Megatron-LM flag files (YAML / JSON dicts of argparse flags, ``MODEL_ARGS`` sections): an option
as the flags ``dialects.megatron`` reads, written in the file's own spelling (``--seq-length``,
``seq-length`` or ``seq_length``).

- ``base`` / ``ntk``: ``--rotary-base``; ``train``: ``--seq-length`` and ``--max-position-embeddings``;
- ``linear``: ``--rotary-seq-len-interpolation-factor`` (an int in arguments.py: a factor that is not
  whole is refused);
- ``yarn``: ``--position-embedding-type yarn``, ``--rotary-scaling-factor``,
  ``--original-max-position-embeddings``, ``--beta-fast 32``, ``--beta-slow 1``;
- ``llama3``: ``--use-rope-scaling`` and ``--rope-scaling-factor``: Megatron-Core fixes the bands
  (low 1, high 4, original 8,192), so only a plan with exactly those is written.
Every option also sets ``--max-position-embeddings`` to the target. Dynamic NTK, ReRoPE and Leaky
ReRoPE have no Megatron flag: refused. ``--rotary-base`` is an int in arguments.py (``type=int``): a base
is written whole, one that is not is refused. Launch scripts (``*.sh``) are the same flags, edited in place
by ``writers.shell`` (the data is ``parse_shell``'s flags)."""

from __future__ import annotations

from typing import Any, Mapping

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


def edit(data: Mapping, cfg: Any, option: Any, target: int) -> Edit:
    from ..dialects.megatron import _flag

    name, spec = option.name, option.spec
    sec = ("MODEL_ARGS",) if isinstance(data.get("MODEL_ARGS"), Mapping) else ()
    node = data["MODEL_ARGS"] if sec else data
    keys = [str(k) for k in node]
    pre, sep = _style(keys)
    existing = {_flag(k): k for k in keys}
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
            return refuse("megatron", name, f"--rotary-seq-len-interpolation-factor is an int; factor {s:g} is not whole")
        for n in SCHEME_FLAGS:
            drop(n)
        flag("rotary_seq_len_interpolation_factor", int(s))
    elif name == "yarn":
        for n in SCHEME_FLAGS:
            drop(n)
        if not mla:
            flag("position_embedding_type", "yarn")
        flag("rotary_scaling_factor", float(spec.param("factor")))
        flag("original_max_position_embeddings", t)
        flag("beta_fast", 32)
        flag("beta_slow", 1)
    elif name == "llama3":
        lo, hi = float(spec.param("low_freq_factor", 1.0)), float(spec.param("high_freq_factor", 4.0))
        if (t, lo, hi) != (8192, 1.0, 4.0):
            return refuse("megatron", name, "Megatron-Core's --use-rope-scaling fixes the Llama 3.1 bands (low 1, high 4, "
                                            f"original 8,192); this plan needs original {t:,}, low {lo:g}, high {hi:g}")
        for n in SCHEME_FLAGS:
            drop(n)
        flag("use_rope_scaling", True)
        flag("rope_scaling_factor", float(spec.param("factor")))
    else:
        return refuse("megatron", name, f"Megatron-LM has no flag for {name!r}")
    if mla and name not in ("yarn", "base", "ntk", "train"):
        return refuse("megatron", name, "multi-latent attention runs its own YaRN (rope_type): only yarn, base and train")
    flag("max_position_embeddings", target)
    if name != "train" and "seq_length" not in existing:
        flag("seq_length", t)
    kept = {p for p, v in e.changes if v is not DELETE}  # a flag dropped and set again is changed where it is
    e.changes = [(p, v) for p, v in e.changes if v is not DELETE or p not in kept]
    return e
