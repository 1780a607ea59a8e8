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
- ``dynamic``: ``{"rope_type": "dynamic", "factor": s}`` where ``max_position_embeddings`` is the training
  length T: transformers' dynamic NTK rescales past max_position_embeddings (4.57.1 / 5.23.0
  ``_compute_dynamic_ntk_parameters``), so the file cannot state the target (lint with --target); a file
  that advertises more than T is refused (lowering max_position_embeddings would change what it states).
No key is written that already holds the value (a ``rope_theta`` the runtime reads from the class default
is not added), and a null ``rope_scaling`` is no scaling already.
ReRoPE and Leaky ReRoPE have no rope_type in transformers (loading would fail): refused, with the
way to run them (``ropelaw.methods.patch_model``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from collections.abc import Mapping

from ..table_rows import row
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


def written_base(theta: float, power: float) -> float:
    """The base to write for the analysed base ``theta`` (``RopeLayer.written_power``: r / (r + 1) for an odd
    rotary count r read as r + 1 dims at the effective base): theta ** power to 12 significant figures (the file's
    own 10,000 comes back as 10000.0, not 9999.99999999999; at most 5e-13 relative from the exact power)."""
    return theta if power == 1.0 else float(f"{theta ** power:.12g}")


@dataclass
class _Form:
    """Where a file keeps its RoPE keys (``sec`` of ``node``) and in which form (``v5``: rope_parameters, per layer
    type or not; else rope_scaling and a top-level base ``theta_key``); ``stated``: the base the runtime reads."""

    e: Edit
    node: Mapping
    sec: tuple
    v5: bool
    per_type: bool
    theta_key: str
    stated: float | None
    power: float = 1.0  # the written base is the analysed one ** power (RopeLayer.written_power: odd rotary dims)
    unread: tuple = ()  # base keys of the file the runtime ignores (row base_key): set with theta_key

    def set_theta(self, theta: float) -> None:
        """``theta_key`` = ``theta``, and the unread base keys the file has the same (it states one base)."""
        for k in (self.theta_key,) + self.unread:
            self.e.set(self.sec + (k,), theta)

    def written(self, theta: float) -> float:
        return written_base(theta, self.power)

    def block(self, b: dict | None, theta: float) -> None:
        """Write scaling block ``b`` (None: no scaling) and base ``theta`` in the file's form."""
        e, node, sec, theta_key = self.e, self.node, self.sec, self.theta_key
        stated, theta = theta == self.stated, self.written(theta)
        if self.v5:
            entry = {"rope_type": "default"} if b is None else dict(b)
            entry["rope_theta"] = theta
            path = sec + (("rope_parameters", "full_attention") if self.per_type else ("rope_parameters",))
            e.set(path, entry)
            if node.get("rope_scaling") is not None:  # null is no scaling already
                e.delete(sec + ("rope_scaling",))
            if theta_key in node:
                self.set_theta(theta)
        else:
            if b is None:
                if node.get("rope_scaling") is not None:  # null is no scaling already
                    e.delete(sec + ("rope_scaling",))
            else:
                e.set(sec + ("rope_scaling",), b)
            if theta_key in node or not stated:  # the base the runtime reads already: no key added
                self.set_theta(theta)

    def top_original(self, value: int) -> None:
        if "original_max_position_embeddings" in self.node:  # 5.x lets it win over the block's
            self.e.set(self.sec + ("original_max_position_embeddings",), value)


def theta_keys(node: Mapping, cfg: Any) -> tuple[str, tuple]:
    """The top-level base key the runtime reads (row ``base_key`` of lint/table_rows.py: GPT-NeoX runs
    rotary_emb_base and ignores rope_theta, both transformers versions; else the first base key written) and the
    ignored base keys ``node`` has."""
    kr = row("base_key", cfg.arch) if cfg.kind == "hf" else None
    if kr is not None:
        return kr.values["key"], tuple(k for k in kr.values["ignored"] if k in node)
    return next((k for k in ("rope_theta", "rotary_emb_base", "rotary_base") if k in node), "rope_theta"), ()


def changes(data: Mapping, cfg: Any, option: Any, target: int, dialect: str = "hf", sec: tuple | None = None) -> Edit:
    """The top-level (section) key changes of ``option``, as an :class:`Edit` on ``data``."""
    name, spec = option.name, option.spec
    e = Edit(dialect, name)
    if name in ("rerope", "leaky_rerope"):
        leaky = f", leaky_k={spec.param('k')}" if name == "leaky_rerope" else ""
        return refuse(dialect, name, f"transformers has no {name} rope_type (loading such a config fails); run it "
                                     f"at inference: ropelaw.methods.patch_model(model, {name!r}, window="
                                     f"{spec.param('window')}{leaky})")
    if name in ("current", "longrope"):
        return refuse(dialect, name, "the config already states it: nothing to write")
    sec = section(cfg) if sec is None else sec
    node = _node(data, sec)
    rp = node.get("rope_parameters")
    v5 = isinstance(rp, Mapping) or str(data.get("transformers_version", "")).startswith("5")
    per_type = isinstance(rp, Mapping) and rp and all(isinstance(v, Mapping) for v in rp.values())
    theta_key, unread = theta_keys(node, cfg)
    t = spec.train_len

    power = cfg.layers[0].written_power
    if power != 1.0 and name in ("yarn", "dynamic"):  # lint/table.py odd_dims: they use dim itself
        return refuse(dialect, name, f"the model rotates an odd count of dims rounded up, and transformers' {name} "
                                     "uses that odd dim itself (yarn's ramp fails to build; dynamic's base power): "
                                     "not modelled")
    form = _Form(e, node, sec, v5, bool(per_type), theta_key, cfg.layers[0].base.number(), power, unread)
    block, top_original = form.block, form.top_original
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
                e.set(sec + ("rope_parameters", "rope_theta"), form.written(spec.base))
            if not v5 or theta_key in node:
                form.set_theta(form.written(spec.base))
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
        mp = cfg.max_pos.number() if cfg.max_pos is not None else None
        if mp is not None and mp != t:  # lowering the advertised context would change what the file states
            return refuse(dialect, name, f"transformers' dynamic NTK switches at max_position_embeddings ({mp:,.0f}), "
                                         f"not at the training length {t:,} the plan's bound assumes; ropelaw does not "
                                         "lower max_position_embeddings (the context the file advertises)")
        block({"rope_type": "dynamic", "factor": float(spec.param("factor"))}, spec.base)
        e.notes.append(f"transformers' dynamic NTK switches at max_position_embeddings ({t:,}): the file cannot "
                       f"state the target; lint it with --target {target}")
    else:
        return refuse(dialect, name, f"no Hugging Face keys for option {name!r}")
    return e


def version_conflict(data: Mapping, cfg: Any) -> str | None:
    """Why the installed transformers reads the file otherwise than the version the file names
    (``transformers_version``), or None. Both readings come from the loader (``semantics``): a
    transformers-5 file's ``rope_parameters.rope_theta`` 1e6 is read by 4.57.1 as the class default
    10,000, and an edit made from that reading would write 10,000 over what the file states."""
    from ..dialects.hf import SEMANTICS

    named = str(data.get("transformers_version") or "").strip()
    installed = (cfg.semantics or "").split()[-1] if cfg.semantics else ""
    major = named.split(".")[0]
    theirs = next((v for v in SEMANTICS if v.split(".")[0] == major), None)
    if theirs is None or not installed or installed.split(".")[0] == major:
        return None
    from ..loader import load_mapping

    other = load_mapping(data, None, path=cfg.path, fmt=cfg.fmt, semantics=theirs)
    ours, them = cfg.spec(0), other.spec(0)
    if (ours.to_dict(), cfg.train_len.raw) == (them.to_dict(), other.train_len.raw):
        return None
    diff = [f"{k} {_show(getattr(ours, k))} where {theirs} reads {_show(getattr(them, k))}"
            for k in ("base", "d", "train_len", "scheme", "params") if getattr(ours, k) != getattr(them, k)]
    return (f"the file names transformers {named}, but transformers {installed} is installed and reads it otherwise "
            f"({'; '.join(diff) or 'its lengths differ'}): an edit from this reading would change what the "
            "file states; "
            f"install transformers {major}.x (pip install 'transformers=={theirs}') and plan again")


def _show(v: Any) -> str:
    from ...numfmt import number

    return number(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else str(v)


def edit(data: Mapping, cfg: Any, option: Any, target: int) -> Edit:
    return changes(data, cfg, option, target)
