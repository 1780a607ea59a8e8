"""Layer groups of a Hugging Face config as transformers runs them: from the per-layer table measured
on transformers (:mod:`ropelaw.lint.layers`) each layer's rotary (main, local base, none) and span
(full, window, chunk), grouped into :class:`~ropelaw.lint.model.RopeLayer` s with their indices and
labels; rotary keys the table says change the rotary but nothing reads (RV025).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any
from collections.abc import Callable, Mapping

from ..numfmt import count as fmt_count
from .model import RopeLayer, Value, finite, plain, canonical_scheme, show_value
from .sections import dotted, norm_key, Section
from .model import Problem
from .table_rows import row
from .rules.layers import LAYER_SEMANTICS_UNKNOWN, UNMODELLED_ROTARY_KEY
from .rules.value_rules import IGNORED_KEY

# (the model types whose attention rotates 2 * ceil(d / 2) dims for an odd d: ropelaw/lint/table_rows.py)


def rotary_dims(head: float, frac: float | None) -> tuple[int, float]:
    """``(int(head_dim * factor), head_dim * factor)`` in float64, exactly as transformers computes
    ``dim = int(head_dim * partial_rotary_factor)`` (modeling_rope_utils, 4.57.1 and 5.23.0): phi-2
    80 x 0.4 = 32.0 -> 32, 80 x 0.6 = 48.0 -> 48 (the exact product 47.99... would give 47)."""
    prod = float(head) * (1.0 if frac is None else float(frac))
    if not math.isfinite(prod):  # 128 x 1e308: beyond float range; the exact product says how far (RV017)
        return int(Fraction(head) * Fraction(1.0 if frac is None else frac)), prod
    return int(prod), prod



# -----------------------------------------------------------------------------------------
# layer groups from the per-layer table (ropelaw/lint/layers/)
# -----------------------------------------------------------------------------------------
def _proportional_group(grp: RopeLayer, e: dict, s: Section, idx: tuple, kinds: tuple, head_v: Value | None,
                        defaults: dict, dclass: str, at: tuple[int, int], frac_v: Value | None) -> RopeLayer:
    """Proportional RoPE (Gemma 4): the exponent runs over the layers' head dim D (their own, e.g.
    ``global_head_dim``, measured per layer kind in the table; a file's ``per_layer_config`` first) and
    d = 2 * int(p * D // 2) dims rotate (transformers 5.23.0 ``_compute_proportional_rope_parameters``)."""
    from dataclasses import replace

    hd_v = None
    plc = s.raw("per_layer_config")
    if isinstance(plc, Mapping):
        entry = plc.get(str(idx[0])) if isinstance(plc.get(str(idx[0])), Mapping) else None
        if entry is not None and isinstance(entry.get("head_dim"), int):
            line, col = s.positions.get(s.prefix + ("per_layer_config",), (1, 1))
            hd_v = Value(entry["head_dim"], f"per_layer_config.{idx[0]}.head_dim", line, col, "", "int")
    spec = next((e.get("head_dims", {}).get(k) for k in kinds if k in e.get("head_dims", {})), None)
    if hd_v is None and spec is not None:
        if spec.get("key"):
            hd_v = s.get(spec["key"], expect="int")
        if hd_v is None:
            hd_v = Value(spec["default"], None, at[0], at[1],
                         f"{spec.get('key') or 'head dim'} of {', '.join(kinds)} layers absent: {dclass} default",
                         "int")
    hd_v = hd_v or head_v
    D = finite(hd_v.raw) if hd_v is not None else None
    p = finite(frac_v.raw) if frac_v is not None else 1.0
    if hd_v is None or D is None or p is None:
        return grp
    dims = 2 * int(p * D // 2)
    note = f"proportional RoPE: 2 x int({p:g} x {fmt_count(D)} // 2) of the {fmt_count(D)}-dim head [{hd_v.where}]"
    d_v = Value(dims, None, hd_v.line, hd_v.column, note, "int")
    params = dict(grp.params)
    params["head_dim"] = Value(int(D), hd_v.key, hd_v.line, hd_v.column, hd_v.note, "int")
    return replace(grp, d=d_v, params=params,
                   pretrained_with_scheme=Value(True, None, grp.scheme.line, grp.scheme.column,
                                                "proportional RoPE: the model is built with it", "bool"))


def layer_arch(arch: str, root_type: Any, semantics: str) -> str:
    """The model_type whose per-layer entry describes ``arch``: itself, or its text model's
    (``llama4`` -> ``llama4_text``), also when only the file's top level names the composite type."""
    from . import layers as layer_table

    if layer_table.entry(arch, semantics) is not None:
        return arch
    return (layer_table.text_type(arch, semantics)
            or (layer_table.text_type(root_type, semantics) if isinstance(root_type, str) else None) or arch)


def unread_rotary_keys(measured: dict | None, arch: str, s: Section, inputs: list, semantics: str) -> list:
    """RV025 for each key of the file that changes ``arch``'s rotary when transformers runs it
    (``rotary_keys`` of the table, measured) and that the reading above did not use."""
    if not measured:
        return []
    read = {v.key for v in inputs if v.key}
    out = []
    for name in measured.get("rotary_keys", ()):
        leaf = name.split(".")[-1]
        for path in ((leaf,), ("rope_parameters", leaf), ("rope_scaling", leaf)):
            node: Any = s.data
            full = s.prefix
            for part in path:
                k = next((x for x in node if norm_key(x) == part), None) if isinstance(node, Mapping) else None
                if k is None:
                    node = None
                    break
                node, full = node[k], full + (k,)
            if node is None or dotted(full) in read:
                continue
            line, col = s.positions.get(full, (1, 1))
            v = Value(plain(node), dotted(full), line, col, "", "any")
            out.append(Problem(UNMODELLED_ROTARY_KEY, v,
                        f"{v.key} changes the rotary of {arch} in transformers {semantics} (measured: changing it "
                        f"alone changes some layer's frequencies, rotated dims, NoPE or span) and ropelaw does not "
                        f"read it: the analysis leaves it out"))
    return out


def layers_entry(layer_arch: str | None, semantics: str) -> dict | None:
    from . import layers as layer_table

    return layer_table.entry(layer_arch, semantics) if layer_arch else None


_SPAN_LABEL = {"full": "global", "window": "local", "chunk": "chunked"}


@dataclass
class _Groups:
    """What every layer group of one config is built from (:func:`runtime_groups`)."""

    arch: str
    s: Section
    defaults: dict
    dclass: str
    tf: str  # "transformers 4.57.1"
    main: RopeLayer
    own_block: Callable[[str], Any]
    problems: list
    notes: list
    at: tuple[int, int]
    head_v: Value | None
    partial_of: Callable[[str | None], Value | None] | None
    e: dict | None
    base_list: Value | None
    window_v: Value | None
    chunk_v: Value | None


def runtime_groups(arch: str, s: Section, defaults: dict, dclass: str, semantics: str, main: RopeLayer,
                   own_block: Callable[[str], Any], problems: list, notes: list, at: tuple[int, int],
                   head_v: Value | None = None, partial_of: Callable[[str | None], Value | None] | None = None,
                   refusals: list | None = None) -> list[RopeLayer]:
    """The layer groups of a Hugging Face config as transformers ``semantics`` runs them: each layer's
    role from :func:`ropelaw.lint.layers.plan` (measured on the runtime), layers with the same rotary and
    span grouped. A config the table cannot answer for gets RV024 and one group of every layer with the
    main rotary and full attention (said in the finding); one the runtime was measured to refuse (a per-layer list
    of another length: ``plan.refused``) also adds ``(semantics, value, why)`` to ``refusals`` (RV021)."""
    from . import layers as layer_table

    e = layer_table.entry(arch, semantics)
    n_key = e["layers_key"] if e else "num_hidden_layers"
    n_v = s.get(n_key, expect="int")
    if n_v is None and defaults.get("num_hidden_layers") is not None:
        n_v = Value(defaults["num_hidden_layers"], None, at[0], at[1], f"{n_key} absent: {dclass} default", "int")
    runs = row("layer_runs", arch, version=semantics)
    if runs is not None:  # layers that run several times in one forward, each run a layer (HRM)
        n_v = layer_runs(runs.values, s, n_v)

    def get(key: str) -> Value | None:
        if key == "sliding_window" and s.raw(key) is None and key in s.keys:  # written null: not absent (the plan
            line, col = s.positions.get(s.prefix + (s.keys[key],), at)       # tells them apart)
            return Value(None, dotted(s.prefix + (s.keys[key],)), line, col, "null in the file", "int")
        if key in ("sliding_window", "attention_chunk_size"):
            return s.get(key, expect="int")
        return s.get(key, expect="layers" if e and any(e.get(f) and e[f]["key"] == key
                                                        for f in ("kinds", "nope", "bases")) else "any")

    def default(key: str) -> Any:  # the class's default, unless the file writes the key (null included)
        return None if key in s.keys else defaults.get(key)

    n = n_v.raw if n_v is not None else None
    if e is not None and e.get("window_key"):  # the name the config class stores sliding_window under (attribute_map)
        get, default = _window_alias(e["window_key"], get, default, s)
    plan = layer_table.plan(arch, n, get, default, semantics)
    if plan.problem is not None or not plan.roles:
        anchor = next((v for v, _ in plan.sources.values() if v is not None), None) or n_v or main.base
        anchor = (get(plan.refused_at) if plan.refused_at else None) or anchor
        if plan.refused is not None and refusals is not None:
            refusals.append((semantics, anchor, plan.refused))
        problems.append(Problem(LAYER_SEMANTICS_UNKNOWN, anchor,
                         f"per-layer semantics unknown: {plan.problem or 'no layers'}; every layer is analysed as "
                         f"running the main rotary over the full context"))
        idx = tuple(range(n)) if isinstance(n, int) and not isinstance(n, bool) and 0 < n <= 1 << 20 else None
        return [replace(main, indices=idx)]
    for name, (v, how) in plan.sources.items():
        if how and v is None or (v is not None and how and how != v.key):
            notes.append(f"{'layer kinds' if name == 'kinds' else 'NoPE layers'}: {how}")
    if e is not None and e["nope"] is not None and e["nope"].get("truth"):
        problems.extend(_bases_not_read(e["nope"]["key"], plan.sources["nope"][0], len(plan.roles), main, arch,
                                        f"transformers {semantics}"))
    window_v = get("sliding_window")
    window_v = None if window_v is not None and window_v.raw is None else window_v  # null: no window
    if window_v is None and default("sliding_window") is not None:
        window_v = Value(defaults["sliding_window"], None, at[0], at[1], f"sliding_window absent: {dclass} default",
                         "int")
    both = _bidirectional(arch, s, semantics, window_v, notes, problems, refusals)
    if both is not None:
        window_v = both[1]
    chunk_v = s.get("attention_chunk_size", expect="int")
    if chunk_v is None and default("attention_chunk_size") is not None:
        chunk_v = Value(defaults["attention_chunk_size"], None, at[0], at[1],
                        f"attention_chunk_size absent: {dclass} default", "int")
    bases = e.get("bases") if e else None
    base_list = s.get(bases["key"], expect="layers") if bases else None
    ctx = _Groups(arch, s, defaults, dclass, f"transformers {semantics}", main, own_block, problems, notes, at,
                  head_v, partial_of, e, base_list, window_v, chunk_v)
    out = [_group(ctx, key, g) for key, g in _role_groups(plan.roles, base_list).items()]
    if both is not None:
        out = [replace(g, bidirectional=True) if g.attention else g for g in out]
    return _ordered(out, main)


def _bidirectional(arch: str, s: Section, semantics: str, window_v: Value | None,
                   notes: list, problems: list, refusals: list | None = None) -> tuple[Value, Value | None] | None:
    """``(the flag, the window the layers attend)`` where a ``bidirectional_flag`` row of
    :mod:`ropelaw.lint.table_rows` applies and the file writes its key true (Python truth, as the config class and
    the model test it: Gemma 3's ``use_bidirectional_attention``), else None (RV025 in ``problems`` where the row
    says the runtime's span depends on the attention implementation: 5.23.0's Gemma / Gemma 2; RV021 in
    ``refusals`` for a value the version's strict field refuses). The window is the config class's
    ``sliding_window // 2 + 1`` (its mask: ``|q - k| <`` that), with a note saying so."""
    from .table_rows import row

    r = row("bidirectional_flag", arch, version=semantics)
    flag = s.get(r.values["key"], expect="any") if r is not None else None
    if r is None or flag is None:
        return None
    if not isinstance(flag.raw, bool) and any(semantics.startswith(v) for v in r.values.get("strict_bool", ())) \
            and refusals is not None:
        refusals.append((semantics, flag, f"refuses {flag.key} = {show_value(flag.raw)}: the config class declares it "
                                          f"bool | None (strict dataclass, StrictDataclassFieldValidationError)"))
    if not flag.raw:
        return None
    if r.values.get("unmodelled"):  # the runtime's span depends on the attention implementation: said, not read
        problems.append(Problem(UNMODELLED_ROTARY_KEY, flag, f"{flag.key} true: transformers {semantics} "
                                                              f"{r.values['unmodelled']}"))
        return None
    w = window_v
    if r.values.get("halves") and w is not None and isinstance(w.raw, int) and not isinstance(w.raw, bool):
        half = w.raw // 2 + 1
        note = (f"{flag.key} true: transformers {semantics} sets sliding_window to {fmt_count(w.raw)} // 2 + 1 = "
                f"{fmt_count(half)}; the local layers attend |m - n| < {fmt_count(half)}, both ways")
        w = Value(half, w.key, w.line, w.column, note if not w.note else f"{w.note}; {note}", "int")
    notes.append(f"{flag.key} true: every attention layer attends later keys too (bidirectional); the largest |m - n| "
                 f"is that of the causal span of the same size")
    return flag, w


def layer_runs(values: Mapping[str, Any], s: Section, n_v: Value | None) -> Value | None:
    """The layer count of a config whose decoder layers run several times in one forward (a row of effect
    ``layer_runs``, :mod:`.table_rows`: HRM's stacks run H_cycles x (L_cycles + 1) times): the per-stack count
    (``values['per_stack']`` when the file writes it, else the count ``n_v`` the file writes) times the product of
    (key + add) over ``values['cycles']``, each key the file's or its class default; ``n_v`` unchanged when the file
    writes neither count (the class's default counts the runs already) or a count that is not an int."""
    per = s.get(norm_key(values["per_stack"]), expect="int")
    if per is None and (n_v is None or n_v.key is None):
        return n_v
    per = per if per is not None else n_v
    if per is None or not isinstance(per.raw, int) or isinstance(per.raw, bool):
        return n_v
    total, parts = per.raw, []
    for key, add, default in values["cycles"]:
        v = s.get(norm_key(key), expect="int")
        x = v.raw if v is not None else default
        if not isinstance(x, int) or isinstance(x, bool):
            return n_v
        total *= x + add
        parts.append(f"({key} {x}{f' + {add}' if add else ''})")
    return Value(total, per.key, per.line, per.column, f"{per.raw} x {' x '.join(parts)}: the runs of the layers",
                 "int")


def _bases_not_read(key: str, v: Value | None, n: int, main: RopeLayer, arch: str, tf: str) -> list:
    """RV019 when a list the runtime reads by its truth (the table's ``"truth"``: Muse's ``layer_rope_theta``)
    holds, for one of the ``n`` layers, a non-zero entry other than the main base: the layer runs the main rotary,
    not that base (measured)."""
    if v is None or not isinstance(v.raw, list):
        return []
    b = finite(main.base.raw) if main.base is not None else None
    odd = [j for j, x in enumerate(v.raw[:n]) if x and finite(x) != b]
    if not odd:
        return []
    j = odd[0]
    more = f" (and {fmt_count(len(odd) - 1)} more)" if len(odd) > 1 else ""
    return [Problem(IGNORED_KEY, v, f"{key}[{j}] is {v.raw[j]!r}{more}: {tf} reads only whether an entry is 0 "
                                    f"(no RoPE) for {arch}; the layer runs the main rotary, base "
                                    f"{main.base.raw!r} [{main.base.where}] (measured)")]


def _window_alias(alias: str, get: Callable, default: Callable, s: Section) -> tuple[Callable, Callable]:
    """``get`` / ``default`` that read ``sliding_window`` under ``alias`` too (Inkling 2's attribute_map: the config
    class stores it as ``sliding_window_size``, the name its files write)."""
    def get_w(key: str) -> Value | None:
        return s.get(key, alias, expect="int") if key == "sliding_window" else get(key)

    def default_w(key: str) -> Any:
        return None if key == "sliding_window" and alias in s.keys else default(key)

    return get_w, default_w


def _span_value(v: Value | None, offset: int | None, what: str, tf: str) -> Value | None:
    """A window / chunk the runtime shifts by ``offset`` keys (``tf``: the runtime's name)."""
    if v is None or not isinstance(v.raw, int) or isinstance(v.raw, bool):
        return v
    off = offset or 0
    if not off:
        return v
    note = (f"{what}: {tf} attends {'the last ' if what == 'window' else ''}{fmt_count(v.raw + off)} keys "
            f"({v.key or 'the default'} {'+' if off > 0 else '-'} {abs(off)})")
    return Value(v.raw + off, v.key, v.line, v.column, note if not v.note else f"{v.note}; {note}", "int")


def _label_of(kinds: tuple, idx: tuple) -> str:
    return (f"{', '.join(kinds)} layers" if kinds else "layers") + f" ({fmt_count(len(idx))})"


def _role_groups(roles: list, base_list: Value | None) -> dict[tuple, dict]:
    """The layers grouped by ``(what they run, span, offset)``: ``{key: {"indices": [...], "kinds": [...]}}``."""
    groups: dict[tuple, dict] = {}
    for i, role in enumerate(roles):
        if not role.attention or role.span == "cross":  # cross: keys from other states (Mllama's image states)
            key: tuple = ("cross",) if role.attention else ("no attention",)
        elif role.rotary == "none":
            key = ("none", role.span, role.offset)
        else:
            rot = role.rotary
            if rot == "main" and base_list is not None and isinstance(base_list.raw, list) \
                    and i < len(base_list.raw):
                b = base_list.raw[i]
                rot = "nope" if b == 0 else f"base:{b!r}"
            key = ("rope", rot, role.span, role.offset) if rot != "nope" else ("none", role.span, role.offset)
        g = groups.setdefault(key, {"indices": [], "kinds": []})
        g["indices"].append(i)
        if role.kind and role.kind not in g["kinds"]:
            g["kinds"].append(role.kind)
    return groups


def _group(ctx: _Groups, key: tuple, g: dict) -> RopeLayer:
    """One group of layers (``key``: :func:`_role_groups`) as a RopeLayer."""
    main = ctx.main
    idx, kinds = tuple(g["indices"]), tuple(g["kinds"])
    if key[0] in ("no attention", "cross"):
        cross = key[0] == "cross"
        return replace(main, label=_group_label("cross-attention" if cross else "without attention", idx),
                       rope=False, attention=False, cross_attention=cross, indices=idx, kinds=kinds)
    span, offset = key[-2], key[-1]
    window = _span_value(ctx.window_v, offset, "window", ctx.tf) if span == "window" else None
    chunk = _span_value(ctx.chunk_v, offset, "chunk", ctx.tf) if span == "chunk" else None
    if key[0] == "none":
        label = _group_label("NoPE" + _span_words(span, chunk), idx)
        return replace(main, label=label, rope=False, window=window, chunk=chunk, indices=idx, kinds=kinds)
    rot = key[1]
    grp = replace(main, label=_group_label(_SPAN_LABEL[span] + _span_words(span, chunk, local=False), idx),
                  window=window, chunk=chunk, indices=idx, kinds=kinds)
    grp = _rotary_of(ctx, grp, rot, idx, kinds)
    if isinstance(grp.scheme.raw, str) and canonical_scheme(grp.scheme.raw) == "proportional":
        grp = _proportional_group(grp, ctx.e or {}, ctx.s, idx, kinds, ctx.head_v, ctx.defaults, ctx.dclass, ctx.at,
                                  ctx.partial_of(rot[4:] if rot.startswith("own:") else None) if ctx.partial_of
                                  else None)
    return grp


def _rotary_of(ctx: _Groups, grp: RopeLayer, rot: str, idx: tuple, kinds: tuple) -> RopeLayer:
    """``grp`` with the rotary the table names for it (``own:<type>``, ``key:<key>``, ``main-plain``,
    ``base:<b>``, ``main``)."""
    main, tf = ctx.main, ctx.tf
    if rot.startswith("own:"):
        return _own_rotary(ctx, grp, rot[4:], kinds)
    if rot.startswith("key:"):
        k = rot[4:]
        lb = ctx.s.get(k)
        if lb is None and ctx.defaults.get(k) is not None:
            lb = Value(ctx.defaults[k], None, ctx.at[0], ctx.at[1], f"{k} absent: {ctx.dclass} default")
        return replace(grp, base=lb or main.base, params={}, block=None,
                       scheme=Value("default", None, 1, 1, f"{', '.join(kinds)} layers: plain RoPE at {k}", "str"))
    if rot == "main-plain":  # the main base without the main scaling (measured: Nemotron in 4.57.1)
        grp = replace(grp, params={}, block=None,
                      scheme=Value("default", None, main.scheme.line, main.scheme.column,
                                   f"{', '.join(kinds) or 'these'} layers run the main base without its scaling "
                                   f"in {tf} (measured)", "str"))
        if main.block is not None and isinstance(main.scheme.raw, str) \
                and canonical_scheme(main.scheme.raw) != "default" and main.block.key:
            ctx.problems.append(Problem(IGNORED_KEY, main.block,
                                        f"{main.block.key} is ignored by {tf} for {ctx.arch}'s "
                                        f"{_label_of(kinds, idx)}: they run plain RoPE at the main base (measured)"))
        return grp
    if rot.startswith("base:") and ctx.base_list is not None:
        j, bl = idx[0], ctx.base_list
        return replace(grp, base=Value(bl.raw[j], f"{bl.key}[{j}]", bl.line, bl.column, "the base of these layers",
                                       "number"))
    if rot != "main":
        ctx.problems.append(Problem(LAYER_SEMANTICS_UNKNOWN, main.base,
                                    f"layers {', '.join(map(str, idx[:6]))}: the table's rotary {rot!r} is not one "
                                    f"ropelaw reads; analysed with the main rotary"))
    return grp


def _own_rotary(ctx: _Groups, grp: RopeLayer, t: str, kinds: tuple) -> RopeLayer:
    """``grp`` running layer type ``t``'s own block (its partial factor too), else the type's base key
    (rope_local_base_freq) as plain RoPE, else the main rotary (RL-layer-semantics-unknown)."""
    main, head_v = ctx.main, ctx.head_v
    found = ctx.own_block(t)
    if found is not None:
        b, sv, sp, blk = found
        grp = replace(grp, base=b or main.base, scheme=sv, params=sp, block=blk)
        fv = ctx.partial_of(t) if ctx.partial_of else None
        hd = finite(head_v.raw) if head_v is not None else None
        if head_v is not None and hd is not None and (fv is None or finite(fv.raw) is not None):
            dims, _ = rotary_dims(hd, finite(fv.raw) if fv is not None else None)
            if dims != finite(grp.d.raw):  # its own block's partial factor, not the main one's
                grp = replace(grp, d=Value(dims, None, (fv or head_v).line, (fv or head_v).column,
                                           f"{head_v.where}" + (f" x {fv.where}" if fv is not None else
                                                                f" (rope_parameters[{t!r}] has no "
                                                                f"partial_rotary_factor)"), "int"))
        return grp
    lb = ctx.s.get("rope_local_base_freq") if t == "sliding_attention" else None
    dflt = ctx.defaults.get("rope_local_base_freq") if t == "sliding_attention" else None
    if lb is None and dflt is not None:
        lb = Value(dflt, None, ctx.at[0], ctx.at[1], f"{t} layers' base absent: {ctx.dclass} default")
    if lb is None:
        ctx.problems.append(Problem(LAYER_SEMANTICS_UNKNOWN, main.base,
                                    f"{', '.join(kinds) or t} layers run their own rotary "
                                    f"(rope_parameters[{t!r}] in {ctx.tf}) and the config gives none: analysed "
                                    f"with the main rotary"))
        return grp
    return replace(grp, base=lb, scheme=Value("default", None, 1, 1, f"{t} layers: plain RoPE", "str"), params={},
                   block=None)


def _ordered(out: list[RopeLayer], main: RopeLayer) -> list[RopeLayer]:
    """The main group first (layers[0] is what single-group readers use): the main rotary over the full context,
    else the main rotary, else any rotary; one group is "all layers"; groups alike but for their rotary are
    named by their kinds."""
    def rank(g: RopeLayer) -> tuple:
        is_main = g.rope and g.base is main.base and g.scheme is main.scheme
        return (not g.rope, not is_main, g.window is not None or g.chunk is not None, g.indices[0] if g.indices else 0)

    out.sort(key=rank)
    if len(out) == 1:
        out = [replace(out[0], label="all layers")]
    labels = [g.label for g in out]
    for j, g in enumerate(out):
        if labels.count(g.label) > 1:  # two groups alike but for their rotary: name their kinds
            head, _, tail = g.label.rpartition(" (")
            first = g.indices[0] if g.indices else 0
            out[j] = replace(g, label=f"{head} {'/'.join(g.kinds) or 'from layer ' + str(first)} ({tail}")
    return out


def _group_label(role: str, idx: tuple) -> str:
    """``global (24 layers)``, ``chunked 8,192 (36 layers)``, ``NoPE (12 layers)``."""
    return f"{role} ({fmt_count(len(idx))} layer{'s' if len(idx) != 1 else ''})"


def _span_words(span: str, chunk: Value | None, local: bool = True) -> str:
    """What a group's span adds to its label: the chunk's size for chunked layers (``local``: the span's
    own word too, for NoPE groups)."""
    if span == "chunk":
        size = chunk.raw if chunk is not None and isinstance(chunk.raw, int) else None
        return (" chunked" if local else "") + (f" {fmt_count(size)}" if size is not None else "")
    return " local" if local and span == "window" else ""
