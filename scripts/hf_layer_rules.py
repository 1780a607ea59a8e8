"""Default per-layer lists (``layer_types``, ``no_rope_layers``): the rule a config class follows when a
file has none, fitted to the class's own output for many depths and settings (part of
``scripts/hf_layers.py``'s measurement; the rules are expanded by :func:`ropelaw.lint.layers.expand_rule`).
Needs transformers.
"""

from __future__ import annotations

from typing import Any

from ropelaw.lint.layers import tiny, expand_rule

RULE_LAYERS = tuple(range(1, 14)) + (24, 37)  # depths at which a default-list rule is fitted


# -----------------------------------------------------------------------------------------
# default per-layer lists: a rule fitted to the config class
# -----------------------------------------------------------------------------------------
def class_list(cls, base: dict, key: str, n: int, **change) -> list | None:
    kw = {k: v for k, v in base.items() if k != key and not (isinstance(v, list) and len(v) == tiny.LAYERS)
          and not tiny.per_layer_mapping(v)}  # per-layer lists and overrides of the tiny depth: the class's own
    kw.update(change)
    kw[layers_key(cls)] = n
    try:
        with tiny.quiet():
            value = getattr(cls(**kw), key, None)
    except Exception:
        return None
    return list(value) if isinstance(value, (list, tuple)) else None


def layers_key(cls) -> str:
    return dict(getattr(cls, "attribute_map", None) or {}).get("num_hidden_layers", "num_hidden_layers")


def _periodic(values: list) -> tuple | None:
    """The shortest pattern p with values[i] == p[i % len(p)]."""
    for p in range(1, len(values) + 1):
        if all(values[i] == values[i % p] for i in range(len(values))):
            return tuple(values[:p])
    return None


def fit_rule(lists: dict[int, list], keyed: dict[str, dict[Any, list]], flags: dict[str, Any] | None = None) -> dict:
    """A rule for a default per-layer list from the class's lists at several depths (``lists``:
    depth -> list) and, per int key whose change alters the list, the list at depth 24 for other
    values of that key (``keyed``). Rules (layer i of n):

    - ``{"rule": "constant", "value": v}``;
    - ``{"rule": "pattern", "values": [...]}``: values[i % len(values)];
    - ``{"rule": "every", "key": K, "default": P, "value": a, "at": b, "phase": "last"}``: b where
      (i + 1) % P == 0 (``"first"``: where i % P == 0; an int o: where i % P == o, o the config's
      ``offset_key`` when the rule has one: Jamba's attn_layer_offset; ``"from_end"``: where (n - 1 - i) % P
      == 0, counted back from the last layer: Muse Spark), else a; P is the config's K (its
      default P; no key: always P);
    - any of these with ``"head": [v0, ...]``: the first layers are v0, ... (what holds from layer k on is
      periodic: LFM3, DeepSeek-V4, Flint; :func:`_fit_head`);
    - any of these with ``"last": v``: the last layer is always v (Gemma 4); ``"ensure_one": true``: the last
      layer is ``at`` when the rule gives no layer ``at`` (OLMo Hybrid below 4 layers); ``"refused_depths"``:
      depths the config class refuses (OLMo Hybrid: 1);
    - any of these with ``"indices": {"key": K, "at": a, "value": b}``: when the config writes K (a list of
      layer indices), a at those layers and b elsewhere instead (LFM2's ``full_attn_idxs``; found by
      :func:`_index_list`, not by this function);
    - any of these with ``"mapped": {"key": K, "map": [[entry, kind], ...], "longer": ...}``: when the config
      writes K and not the list, each layer's kind is its entry's (DeepSeek-V4's ``compress_ratios``; found by
      :func:`_mapped_list`, not by this function);
    - ``"unless": {flag: value}``: the rule holds only while the boolean ``flag`` is not ``value``
      (``flags``: the flags whose change alters the list, with the value that alters it);
    - ``{"rule": "unknown", "why": ...}``.
    """
    rule = _fit_periodic(lists)
    if rule is None:  # periodic counted back from the last layer (Muse Spark: full at (n - 1 - i) % 4 == 0)
        back = _fit_periodic({n: lst[::-1] for n, lst in lists.items()})
        if back is not None and back["rule"] == "every" and back["phase"] == "first":
            rule = {**back, "phase": "from_end"}
    if rule is None:  # periodic from 8 layers on, the last layer made the odd kind when the period gives none (OLMo
        # Hybrid: "ensure at least one full attention layer")
        tail = _fit_periodic({n: lst for n, lst in lists.items() if n >= 8})
        if tail is not None and tail["rule"] == "every" and all(
                expand_rule({**tail, "ensure_one": True}, n) == lst for n, lst in lists.items()):
            rule = {**tail, "ensure_one": True}
    if rule is None:
        lasts = {lst[-1] for lst in lists.values() if lst}
        body = {n: lst[:-1] for n, lst in lists.items() if len(lst) > 1}
        rule = _fit_periodic(body) if len(lasts) == 1 else None
        if rule is not None:
            rule["last"] = lasts.pop()
    if rule is None:  # periodic after its first few layers (LFM3, DeepSeek-V4; Flint with its last layer too)
        rule = _fit_head(lists)
    if rule is None:
        return {"rule": "unknown", "why": "the default list is not periodic in the layer index"}
    for key, variants in keyed.items():
        ok = rule["rule"] == "every" and "key" not in rule and all(
            isinstance(k, int) and k > 0 and lst == expand_rule({**rule, "key": key}, len(lst), k)
            for k, lst in variants.items())
        if ok:
            rule["key"] = key
            continue
        # the index within the period where the odd value sits (Jamba's attn_layer_offset)
        ok = rule["rule"] == "every" and isinstance(rule["phase"], int) and "offset_key" not in rule and all(
            isinstance(k, int) and lst == expand_rule(rule, len(lst), None, k) for k, lst in variants.items())
        if not ok:
            return {"rule": "unknown", "why": f"the default list also depends on {key}"}
        rule["offset_key"] = key
    if flags:
        rule["unless"] = dict(flags)
    return rule


HEAD_MAX = 4  # the most first layers a rule fixes (``head``)


def _fit_head(lists: dict[int, list]) -> dict | None:
    """A periodic rule in the layer index that holds from layer k on (k <= :data:`HEAD_MAX`, the fewest that
    fit), the first k layers fixed (``"head"``), optionally the last layer fixed too (``"last"``): the class's
    own lists at every depth must be what the rule expands to (:func:`ropelaw.lint.layers.expand_rule`).
    Lfm3Config (5.23.0): "full_attention" if i % 4 == 2, "sliding_attention" if i % 4 == 0 and i > 0, else
    "conv"; Flint: full if i < 2 or i % 4 == 1 or i == n - 1; DeepSeek-V4: two HCA layers, then HCA / CSA."""
    longest = lists[max(lists)]
    for k in range(1, HEAD_MAX + 1):
        for trim in (0, 1):  # 1: the last layer is fixed too
            pat = _pattern_from(lists, k, trim)
            if pat is None:
                continue
            rule = _fit_periodic({len(longest): [pat[i % len(pat)] for i in range(len(longest))]})
            if rule is None:
                continue
            rule["head"] = list(longest[:k])
            if trim:
                rule["last"] = longest[-1]
            if all(expand_rule(rule, n) == lst for n, lst in lists.items()):
                return rule
    return None


def _pattern_from(lists: dict[int, list], k: int, trim: int) -> tuple | None:
    """The shortest p with lst[i] == p[i % len(p)] for every list and every i from k to its last layer (but
    ``trim`` layers), seen at least twice over in the longest list."""
    span = max(lists) - k - trim
    for p in range(1, span // 2 + 1):
        pat: dict[int, Any] = {}
        fits = all(pat.setdefault(i % p, lst[i]) == lst[i] for lst in lists.values() for i in range(k, len(lst) - trim))
        if fits and len(pat) == p:
            return tuple(pat[j] for j in range(p))
    return None


def _fit_periodic(lists: dict[int, list]) -> dict | None:
    longest = lists[max(lists)]
    pat = _periodic(longest)
    if pat is None or len(pat) > len(longest) // 2 or \
            not all(lst == [pat[i % len(pat)] for i in range(len(lst))] for lst in lists.values()):
        return None
    if len(set(pat)) == 1:
        return {"rule": "constant", "value": pat[0]}
    # two values, one of them once per period: at its end ("last", tried first: the usual way config
    # classes write it, (i + 1) % P == 0), else at its start (deterministic for P = 2, where both fit)
    if len(set(pat)) == 2 and pat.count(pat[-1]) == 1:
        return {"rule": "every", "default": len(pat), "value": pat[0], "at": pat[-1], "phase": "last"}
    if len(set(pat)) == 2 and pat.count(pat[0]) == 1:
        return {"rule": "every", "default": len(pat), "value": pat[-1], "at": pat[0], "phase": "first"}
    for at in sorted(set(pat), key=str) if len(set(pat)) == 2 else ():  # once per period, inside it (Jamba: 4 of 8)
        if pat.count(at) == 1:
            other = next(x for x in pat if x != at)
            return {"rule": "every", "default": len(pat), "value": other, "at": at, "phase": pat.index(at)}
    return {"rule": "pattern", "values": list(pat)}


# Keys a config class reads only from its ``**kwargs`` (neither a parameter nor an attribute, so the probes of
# :func:`default_rule` never see them) that real files write: Gemma 3's and Cohere 2's ``sliding_window_pattern``
# (found by scripts/hf_top_keys.py on a real gemma3_text file: transformers derives layer_types from it).
LEGACY_KWARGS = ("sliding_window_pattern",)


def _legacy_keyed(cls, base: dict, key: str, ref: list, seen: set, listed=None) -> dict[str, dict]:
    """``{legacy key: {value: list}}`` for each of :data:`LEGACY_KWARGS` the class is not seen to take otherwise
    and whose value changes its default ``key`` list of 24 layers (probed at the list's period + 1 and + 2);
    ``listed``: how the list is read (:func:`default_rule`'s: by its entries' truth for Muse's ``layer_rope_theta``,
    which ``ref`` is too)."""
    listed = listed or class_list
    pat = _periodic(ref)
    period = len(pat) if pat is not None else 1
    out: dict[str, dict] = {}
    for k in LEGACY_KWARGS:
        if k in seen or k == key:
            continue
        variants = _variants(cls, base, key, listed, k, (period + 1, period + 2), ref)
        if variants:
            out[k] = variants
    return out


def _variants(cls, base: dict, key: str, listed, k: str, values: tuple, ref: list) -> dict:
    """``{value: list}``: ``key``'s list of 24 layers (read by ``listed``: :func:`class_list`, or
    :func:`default_rule`'s reading) with setting ``k`` at each of ``values``, where it differs from ``ref``."""
    out = {}
    for new in values:
        lst = listed(cls, base, key, 24, **{k: new})
        if lst is not None and lst != ref:
            out[new] = lst
    return out


def default_rule(cls, base: dict, key: str, truth: bool = False) -> dict:
    """The rule of ``key``'s default list (:func:`fit_rule`); ``truth``: of its entries' truth, 0 / 1 (a list the
    layers follow only by whether an entry is 0: Muse's ``layer_rope_theta``)."""
    def listed(*args, **kw) -> list | None:
        lst = class_list(*args, **kw)
        return [int(bool(x)) for x in lst] if truth and lst is not None else lst

    lists, refused = {}, []
    for n in RULE_LAYERS:
        lst = listed(cls, base, key, n)
        if lst is None and n == 1:  # the class refuses one layer (OLMo Hybrid needs a linear-attention layer)
            refused.append(n)
            continue
        if lst is None or len(lst) != n:
            return {"rule": "unknown", "why": f"the config class gives no {key} of {n} entries for {n} layers"}
        lists[n] = lst
    keyed: dict[str, dict] = {}
    with tiny.quiet():
        d = cls(**{k: v for k, v in base.items() if k != key}).to_dict()
    ref = lists[24]
    flags: dict[str, Any] = {}
    params = {k: v for k, v in _signature_params(cls).items() if k not in d}  # 4.x: read in __init__, not kept
    for k, v in list(d.items()) + list(params.items()):
        if isinstance(v, bool) and k not in (key,):
            lst = listed(cls, base, key, 24, **{k: not v})
            if lst is not None and lst != ref:
                flags[k] = not v
            continue
        if k in (key, layers_key(cls)) or not isinstance(v, int) or not 0 < v <= 64:
            continue
        variants = _variants(cls, base, key, listed, k, (v + 1, v + 2), ref)
        if variants:
            variants[v] = ref
            keyed[k] = variants
    keyed.update(_legacy_keyed(cls, base, key, ref, set(d) | set(params), listed))
    rule = fit_rule(lists, keyed, flags)
    if refused and rule.get("rule") != "unknown":
        rule["refused_depths"] = refused
    found = None if truth else _index_list(cls, base, key, d)
    if found is not None and rule.get("rule") != "unknown":
        rule["indices"] = found
    mapped = _mapped_list(cls, base, key)
    if mapped is not None:
        rule["mapped"] = mapped
    return rule


# per-layer lists some config classes turn into ``layer_types`` when a file has none, one entry per layer
# (DeepseekV4Config's compress_ratios: "legacy V4 kwargs ... that older checkpoints still ship", its source
# says); what each entry becomes is measured for the entries of MAPPED_VALUES (0 and the powers of two to 256)
MAPPED_LISTS = ("compress_ratios",)
MAPPED_VALUES = (0,) + tuple(2 ** k for k in range(9))


def _mapped_list(cls, base: dict, key: str) -> dict | None:
    """``{"key": K, "map": [[entry, kind], ...], "longer": "first" | "refused"}`` for a list K of
    :data:`MAPPED_LISTS` whose entries the class maps to ``key``'s kinds one layer each (the entries of
    :data:`MAPPED_VALUES` it accepts; at least two kinds, else it is not read), checked on a mixed list of 5
    layers; ``longer``: a list longer than the layers is cut to its first entries (DeepSeek-V4) or refused."""
    for name in MAPPED_LISTS:
        pairs = []
        for v in MAPPED_VALUES:
            lst = class_list(cls, base, key, 2, **{name: [v, v]})
            if lst is not None and len(lst) == 2 and lst[0] == lst[1]:
                pairs.append([v, lst[0]])
        if len({kind for _, kind in pairs}) < 2:
            continue
        kinds = dict((v, kind) for v, kind in pairs)
        mixed = [pairs[i % len(pairs)][0] for i in range(5)]
        want = [kinds[v] for v in mixed]
        if class_list(cls, base, key, 5, **{name: mixed}) != want:
            continue
        longer = class_list(cls, base, key, 4, **{name: mixed}) == want[:4]
        return {"key": name, "map": pairs, "longer": "first" if longer else "refused"}
    return None


INDEX_PROBES = ([1, 3], [0, 2, 5])  # lists of layer indices tried for a key that marks layers by index


def _index_list(cls, base: dict, key: str, d: dict) -> dict | None:
    """A setting that lists layer indices and, when the file has no ``key``, makes those layers one kind and
    the others another (LFM2's ``full_attn_idxs``: "full_attention" there, "conv" elsewhere):
    ``{"key": K, "at": a, "value": b}``, found by giving list-valued (or None) settings :data:`INDEX_PROBES`."""
    names = [k for k, v in d.items() if k != key and (v is None or (isinstance(v, list) and all(
        isinstance(x, int) and not isinstance(x, bool) for x in v)))]
    names += [k for k, v in _signature_params(cls, none=True).items() if v is None and k not in d and k != key]
    for name in names:
        got = {}
        for idx in INDEX_PROBES:
            lst = class_list(cls, base, key, 24, **{name: list(idx)})
            if lst is None or len(lst) != 24:
                break
            got[tuple(idx)] = lst
        if len(got) != len(INDEX_PROBES):
            continue
        first = got[tuple(INDEX_PROBES[0])]
        at, value = first[INDEX_PROBES[0][0]], first[0]
        if at != value and all(lst == [at if i in idx else value for i in range(24)] for idx, lst in got.items()):
            return {"key": name, "at": at, "value": value}
    return None


def _signature_params(cls, none: bool = False) -> dict:
    """Constructor parameters with int / bool defaults (``none``: also those defaulting to None) that are not
    stored as attributes (4.x)."""
    import inspect

    out = {}
    try:
        for name, p in inspect.signature(cls.__init__).parameters.items():
            if (isinstance(p.default, (int, bool)) or (none and p.default is None)) and name not in ("self",):
                out[name] = p.default
    except (TypeError, ValueError):
        pass
    return out
