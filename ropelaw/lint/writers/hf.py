"""Hugging Face ``config.json``: an option as the keys transformers reads (the inverse of ``dialects.hf``).

Form: ``rope_parameters`` (with ``rope_theta`` inside, transformers 5.x) when the file already has
it or names ``transformers_version`` 5.x; else ``rope_scaling`` and a top-level ``rope_theta``
(4.x; 5.23.0 reads that form too). Per option, in the section the loader read (``text_config``...):

- ``base`` / ``ntk``: ``rope_theta`` = the new base (NTK-aware is the base b*s^(d/(d-2)):
  transformers has no static NTK rope_type), no scaling block, ``max_position_embeddings`` = target;
- ``train``: ``max_position_embeddings`` = target (and ``rope_theta`` when the option raises it);
- ``linear``: ``{"rope_type": "linear", "factor": s}``, ``max_position_embeddings`` = target (the
  loader, like PI, reads the training length as max_position_embeddings / factor; a top-level
  ``original_max_position_embeddings`` states it when that division is not exact);
- ``yarn``: ``{"rope_type": "yarn", "factor": s, "original_max_position_embeddings": T}`` with
  ``max_position_embeddings`` = target = s*T (RV010: transformers' own consistency check);
- ``llama3``: factor, the bands, ``original_max_position_embeddings`` T, max = target;
- ``dynamic``: ``{"rope_type": "dynamic", "factor": s}`` and ``max_position_embeddings`` = T:
  transformers' dynamic NTK rescales past max_position_embeddings (4.57.1 / 5.23.0
  ``_compute_dynamic_ntk_parameters``), so the file cannot state the target (lint with --target).
ReRoPE and Leaky ReRoPE have no rope_type in transformers (loading would fail): refused, with the
way to run them (``ropelaw.methods.patch_model``).
"""

from __future__ import annotations

from typing import Any, Mapping

from .edit import Edit, refuse

_LEAVES = {"rope_scaling", "rope_parameters", "rope_theta", "rotary_emb_base", "rotary_base",
           "max_position_embeddings", "head_dim", "hidden_size", "num_attention_heads", "partial_rotary_factor",
           "original_max_position_embeddings", "sliding_window", "torch_dtype", "dtype", "model_type"}


def section(cfg: Any) -> tuple:
    """The key path of the mapping the loader read (``()`` or ``("text_config",)``...)."""
    g = cfg.layers[0]
    for v in (g.block, g.base, cfg.max_pos, cfg.head_dim, g.d):
        if v is not None and v.key:
            parts = tuple(v.key.split("."))
            for i, p in enumerate(parts):
                if p in _LEAVES:
                    return parts[:i]
    return ()


def _node(data: Mapping, path: tuple) -> Mapping:
    for k in path:
        data = data.get(k, {}) if isinstance(data, Mapping) else {}
    return data if isinstance(data, Mapping) else {}


def changes(data: Mapping, cfg: Any, option: Any, target: int, dialect: str = "hf", sec: tuple | None = None) -> Edit:
    """The top-level (section) key changes of ``option``, as an :class:`Edit` on ``data``."""
    name, spec = option.name, option.spec
    e = Edit(dialect, name)
    if name in ("rerope", "leaky_rerope"):
        return refuse(dialect, name, f"transformers has no {name} rope_type (loading such a config fails); run it "
                                     f"at inference: ropelaw.methods.patch_model(model, {name!r}, window="
                                     f"{spec.param('window')}" + (f", leaky_k={spec.param('k')}" if name == "leaky_rerope"
                                                                  else "") + ")")
    if name in ("current", "longrope"):
        return refuse(dialect, name, "the config already states it: nothing to write")
    sec = section(cfg) if sec is None else sec
    node = _node(data, sec)
    rp = node.get("rope_parameters")
    v5 = isinstance(rp, Mapping) or str(data.get("transformers_version", "")).startswith("5")
    per_type = isinstance(rp, Mapping) and rp and all(isinstance(v, Mapping) for v in rp.values())
    theta_key = next((k for k in ("rope_theta", "rotary_emb_base", "rotary_base") if k in node), "rope_theta")
    t = spec.train_len

    def block(b: dict | None, theta: float) -> None:
        if v5:
            entry = {"rope_type": "default"} if b is None else dict(b)
            entry["rope_theta"] = theta
            path = sec + (("rope_parameters", "full_attention") if per_type else ("rope_parameters",))
            e.set(path, entry)
            if "rope_scaling" in node:
                e.delete(sec + ("rope_scaling",))
            if theta_key in node:
                e.set(sec + (theta_key,), theta)
        else:
            if b is None:
                if "rope_scaling" in node:
                    e.delete(sec + ("rope_scaling",))
            else:
                e.set(sec + ("rope_scaling",), b)
            e.set(sec + (theta_key,), theta)

    def top_original(value: int) -> None:
        if "original_max_position_embeddings" in node:  # 5.x lets it win over the block's
            e.set(sec + ("original_max_position_embeddings",), value)

    if name == "base":
        block(None, spec.base)
        e.set(sec + ("max_position_embeddings",), target)
        e.notes.append("lint reads rope_theta as the pre-training base and max_position_embeddings as the training "
                       "length; the plan's bound is for continued training from the original base")
    elif name == "ntk":
        block(None, option.extra["scaled_base"])
        e.set(sec + ("max_position_embeddings",), target)
        e.notes.append("NTK-aware scaling is the base b*s^(d/(d-2)) (transformers has no static NTK rope_type)")
    elif name == "train":
        if spec.base != cfg.layers[0].base.number():  # raised to Men et al.'s lower bound
            if v5 and isinstance(rp, Mapping) and not per_type:
                e.set(sec + ("rope_parameters", "rope_theta"), spec.base)
            if not v5 or theta_key in node:
                e.set(sec + (theta_key,), spec.base)
        e.set(sec + ("max_position_embeddings",), target)
    elif name == "linear":
        s = spec.param("factor")
        block({"rope_type": "linear", "factor": float(s)}, spec.base)
        e.set(sec + ("max_position_embeddings",), target)
        if int(target // float(s)) != t or "original_max_position_embeddings" in node:
            e.set(sec + ("original_max_position_embeddings",), t)
    elif name == "yarn":
        block({"rope_type": "yarn", "factor": float(spec.param("factor")), "original_max_position_embeddings": t},
              spec.base)
        e.set(sec + ("max_position_embeddings",), target)
        top_original(t)
    elif name == "llama3":
        b = {"rope_type": "llama3", "factor": float(spec.param("factor")),
             "low_freq_factor": float(spec.param("low_freq_factor", 1.0)),
             "high_freq_factor": float(spec.param("high_freq_factor", 4.0)), "original_max_position_embeddings": t}
        block(b, spec.base)
        e.set(sec + ("max_position_embeddings",), target)
        top_original(t)
    elif name == "dynamic":
        block({"rope_type": "dynamic", "factor": float(spec.param("factor"))}, spec.base)
        e.set(sec + ("max_position_embeddings",), t)
        e.notes.append(f"transformers' dynamic NTK switches at max_position_embeddings ({t:,}): the file cannot "
                       f"state the target; lint it with --target {target}")
    else:
        return refuse(dialect, name, f"no Hugging Face keys for option {name!r}")
    return e


def edit(data: Mapping, cfg: Any, option: Any, target: int) -> Edit:
    return changes(data, cfg, option, target)
