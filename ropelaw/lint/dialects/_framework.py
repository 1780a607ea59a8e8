"""Shared machinery of the training-framework dialects: read values with provenance, fill
named presets, and assemble one :class:`~ropelaw.lint.loader.LoadedConfig`.

A framework dialect is a module with ``NAME``, ``detect(data) -> bool``,
``read(doc: Doc) -> Fields`` and ``DIALECT = dialect(NAME, detect, read)`` (listed in
``dialects.MODULES``); everything it reads goes through :class:`Doc` (values found in the
file, with their key, line and column) or :func:`preset` (values of a named preset from the
framework's own code, pointing at the key that named the preset). :func:`assemble` applies the
command line (--train / --target / --tune override; --head-dim / --base / --dtype fill in what
the config and the framework lack) and builds the config the rules read.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from functools import lru_cache
from typing import Any

from . import CLAIM, Dialect
from ..model import LoadedConfig, OptionError, Overrides, RopeLayer, Value
from ...numfmt import count as fmt_count
from ..parse import Positions

PRESETS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "presets")


@lru_cache(maxsize=None)
def presets(framework: str) -> dict[str, Any]:
    """The shipped preset table of ``framework`` (``ropelaw/lint/presets/<framework>.json``)."""
    with open(os.path.join(PRESETS, f"{framework}.json"), encoding="utf-8") as fh:
        return json.load(fh)


def _norm(key: Any) -> str:
    return str(key).strip().lower().replace("-", "_")


class Doc:
    """A parsed document and its positions; :meth:`get` returns :class:`Value` s with the key path,
    line and column of the value, and records them (the RV rules type-check every value read)."""

    def __init__(self, data: Mapping, positions: Positions | None, fmt: str, path: str):
        self.data, self.positions, self.fmt, self.path = data, positions or {}, fmt, path
        self.inputs: list[Value] = []
        # a section the file holds at its top level: "model." (a .nemo archive's model_config.yaml) makes
        # "model.x" look up "x"
        self.top_level: str | None = None
        # dotted keys of single values the dialect looked at (raw / has / get) or judged (consider): with
        # inputs, what the unread check (lint/unread.py) counts as read
        self.considered: set[str] = set()
        self._key_maps: dict = {}  # id(mapping) -> (mapping, len, {normalised key: key})

    def _keys(self, node: Mapping) -> dict:
        """``{_norm(key): key}`` of a mapping of the document, made once per mapping (a dialect looks up
        dozens of keys in the same few sections: rebuilding it per lookup was a tenth of a lint run)."""
        hit = self._key_maps.get(id(node))
        if hit is None or hit[0] is not node or hit[1] != len(node):
            hit = (node, len(node), {_norm(k): k for k in node})
            self._key_maps[id(node)] = hit
        return hit[2]

    def _find(self, dotted: str) -> tuple[tuple, Any] | None:
        node: Any = self.data
        path: tuple = ()
        if self.top_level and dotted.startswith(self.top_level):
            dotted = dotted[len(self.top_level):]
        for part in dotted.split("."):
            if isinstance(node, list) and part.isdigit() and int(part) < len(node):  # models.0.model
                node, path = node[int(part)], path + (int(part),)
                continue
            if not isinstance(node, Mapping):
                return None
            k = self._keys(node).get(_norm(part))
            if k is None:
                return None
            node = node[k]
            path += (k,)
        return path, node

    def raw(self, dotted: str) -> Any:
        hit = self._find(dotted)
        if hit is None:
            return None
        if not isinstance(hit[1], Mapping):  # a whole section looked at is not each of its keys read
            self.considered.add(".".join(str(p) for p in hit[0]))
        return hit[1]

    def consider_tree(self, dotted: str) -> None:
        """Mark every key under the mapping at ``dotted`` as judged (a block compared as a whole)."""
        hit = self._find(dotted)
        if hit is None:
            return
        stack = [hit]
        while stack:
            path, node = stack.pop()
            if isinstance(node, Mapping):
                stack.extend((path + (k,), v) for k, v in node.items())
            else:
                self.considered.add(".".join(str(p) for p in path))

    def consider(self, *dotted: str) -> None:
        """Mark keys as judged by the dialect without being values of the setup (a key that only applies
        to another model's rotary path, a kernel switch): the unread check does not report them."""
        for name in dotted:
            hit = self._find(name)
            if hit is not None:
                self.considered.add(".".join(str(p) for p in hit[0]))

    def has(self, dotted: str) -> bool:
        return self.raw(dotted) is not None

    def at(self, path: tuple) -> tuple[int, int]:
        pos = self.positions.get(path)
        return pos if pos is not None else (1, 1)

    def get(self, *dotted: str, expect: str = "number", note: str = "") -> Value | None:
        """The first of ``dotted`` present with a non-null value (YAML/TOML numeric strings such
        as ``"1e6"`` read as numbers, said in the note)."""
        from ..model import _NUMERIC_STR

        for name in dotted:
            hit = self._find(name)
            if hit is None or hit[1] is None:
                continue
            path, raw = hit
            n = note
            if expect in ("number", "int") and isinstance(raw, str) and _NUMERIC_STR.match(raw):
                text = raw.strip().replace("_", "")
                raw = int(text) if text.lstrip("+-").isdigit() else float(text)
                if self.fmt != "shell":  # every word of a launch script is a string
                    n = (note + "; " if note else "") + "a string, read as a number"
            line, col = self.at(path)
            v = Value(raw, ".".join(str(p) for p in path), line, col, n, expect)
            self.inputs.append(v)
            return v
        return None


def preset(raw: Any, source: str, at: Value | None, expect: str = "number") -> Value:
    """A value from a named preset or a framework default: no key of its own, pointing at ``at``
    (the key that named the preset) and saying where it came from."""
    line, col = (at.line, at.column) if at is not None else (1, 1)
    return Value(raw, None, line, col, source, expect)


def derived(raw: Any, note: str, at: Value | None, expect: str = "int") -> Value:
    return preset(raw, note, at, expect)


def pretraining_with_scheme(scheme: Value | None, loaded: Value | None, runtime: str, why: str,
                            at: Value | None, notes: list, caveat: str = "") -> Value | None:
    """``Fields.pretrained_with_scheme`` of a run whose framework applies ``scheme`` from its first
    step: ``True`` (said in a note) unless ``loaded``, the key that starts the run from existing
    weights, is set; then None, and a note says the scheme is read as Liu et al.'s context extension
    of a plain-RoPE model (``caveat`` added to it)."""
    if scheme is None:
        return None
    if loaded is None:
        notes.append(f"{runtime} trains with the {scheme.raw} frequencies from the first step: the critical "
                     "dimension counts their periods")
        return derived(True, f"{scheme.where}; {why}", at, "bool")
    notes.append(f"the run starts from existing weights ({loaded.where}): the {scheme.raw} frequencies are "
                 "read as a context extension of a model pre-trained with plain RoPE" + caveat)
    return None


def extension_lengths(seq: Value | None, orig: Value | None, from_start: Value | None, notes: list,
                      framework: str) -> tuple[Value | None, Value | None]:
    """``(train_len, tune)`` of a run at ``seq`` tokens whose scheme states ``orig``, the length it scales
    from (YaRN's ``original_max_position_embeddings``: the pre-training context, Peng et al. 2309.00071).
    A run that does not start the model (``from_start`` None) past ``orig`` is a fine-tune of a model
    trained at ``orig``, as axolotl's ``sequence_len`` over its base model: ``(orig, seq)``. Otherwise
    ``(seq, None)``: the run's length is the training length."""
    s = seq.number() if seq is not None else None
    t = orig.number() if orig is not None else None
    if from_start is not None or s is None or t is None or s <= t:
        return seq, None
    notes.append(f"{framework} runs at {seq.where} {s:,.0f} tokens past the {t:,.0f} the scheme scales from "
                 f"({orig.where}): read as a model trained at {t:,.0f}, fine-tuned at {s:,.0f}")
    return orig, Value(seq.raw, seq.key, seq.line, seq.column, "the fine-tuning length, past the model's training "
                                                                "length: a context extension", "int")


def rotary_dims(head: Value, frac: Value | None, problems: list) -> Value:
    """``int(head_dim * fraction)`` in float64, as the frameworks compute it: litgpt==0.5.13
    ``Config.rope_n_elem = int(rotary_percentage * head_size)``, megatron-core==0.16.1
    ``RotaryEmbedding``: ``dim = int(dim * rotary_percent)``, NeoX and NeMo through Megatron,
    ai2-olmo-core==3.0.0 ``int(head_size * partial_rotary_factor)``. 80 x 0.6 is 48.0 in float
    (48 dims) where the exact product 47.99... would give 47."""
    hd = head.number()
    fr = frac.number() if frac is not None else 1.0
    if hd is None or fr is None:
        return Value(None, None, head.line, head.column, "not derivable (see the values it comes from)", "int")
    if frac is None or fr == 1:
        return head
    prod = float(hd) * float(fr)
    n = int(prod) if math.isfinite(prod) else int(Fraction(hd) * Fraction(fr))  # beyond float: RV017 says how far
    if prod != n:
        problems.append(("rotary-dimension-not-integer", frac,
                         f"rotary dims {head.where} x {frac.where} {fr:g} = {prod:g} is not a whole number "
                         f"(the framework truncates to {fmt_count(n)})"))
    anchor = frac if frac.key else head
    return Value(n, None, anchor.line, anchor.column, f"{head.where} x {frac.where} {fr:g}", "int")


def head_dim_of(hidden: Value | None, heads: Value | None, problems: list) -> Value:
    """``hidden / heads`` (integer division, as every framework computes it) with provenance."""
    h = hidden.number() if hidden is not None else None
    n = heads.number() if heads is not None else None
    anchor = hidden or heads
    if h is None or n is None or n <= 0:
        return Value(None, None, anchor.line if anchor else 1, anchor.column if anchor else 1,
                     "not derivable: needs the hidden size and the number of heads", "int")
    q = Fraction(h) / Fraction(n)
    if q.denominator != 1:
        problems.append(("rotary-dimension-not-integer", hidden,
                         f"hidden size {fmt_count(h)} is not divisible by {fmt_count(n)} heads: head dim "
                         f"{float(q):g} (truncated to {fmt_count(int(q))})"))
    return Value(int(q), None, anchor.line, anchor.column, f"{hidden.where} / {heads.where}", "int")


@dataclass
class Fields:
    """What a framework dialect reads; :func:`assemble` turns it into a ``LoadedConfig``."""

    arch: str  # "torchtitan llama3/8B", "litgpt tiny-llama-1.1b", "megatron", ...
    head_dim: Value
    d: Value
    base: Value | None
    train_len: Value | None
    target: Value | None = None  # the advertised / served context; None: the training length
    scheme: Value | None = None
    params: dict = field(default_factory=dict)
    block: Value | None = None
    original_max: Value | None = None
    dtype: Value | None = None
    window: Value | None = None  # a sliding window on every layer (Mistral-style)
    # a sliding window on the local layers of a local/global mix (Gemma 2): two layer groups, as the
    # Hugging Face dialect makes them for gemma2 (global: full attention; local: this window)
    local_window: Value | None = None
    pretrained_with_scheme: Value | None = None  # True: the scheme ran from the first training step
    tune: Value | None = None  # the length a fine-tune of an existing model runs at (litgpt checkpoint_dir)
    local_rope: tuple | None = None  # (base, scheme, params) of those local layers when they differ (Gemma 3)
    # per-layer groups beyond global/local: the layers (0-based) that apply no rotary (torchtitan llama4
    # every_n_layers_nope) and a chunk the rotary layers attend within (its fixed_attn_block_size)
    nope_layers: tuple | None = None
    n_layers: int | None = None
    chunk: Value | None = None
    unread: list = field(default_factory=list)  # Values of RoPE settings the dialect read but cannot model (RV030)
    notes: list = field(default_factory=list)
    problems: list = field(default_factory=list)


def _cli(value: Any, flag: str, expect: str = "int") -> Value | None:
    return None if value is None else Value(value, None, 1, 1, flag, expect)


def assemble(doc: Doc, f: Fields, o: Overrides) -> LoadedConfig:
    """One ``LoadedConfig`` from a dialect's fields and the command line."""
    notes = list(f.notes)
    head, d = f.head_dim, f.d
    if o.head_dim is not None and head.raw is None:
        head = _cli(o.head_dim, "--head-dim")
        d = head if d.raw is None else d
    base = f.base
    if base is None or base.raw is None:
        if o.base is not None:
            base = _cli(float(o.base), "--base", "number")
        else:
            base = Value(10000.0, None, 1, 1, "no base in the config: RoPE's default 10000 (RoFormer; --base to set)")
            notes.append("base 10,000 assumed (--base to set)")
    if o.train is not None:
        train = _cli(o.train, "--train")
    elif f.train_len is not None:
        train = f.train_len
    else:
        train = Value(None, None, 1, 1, "the config gives no training length (pass --train)", "int")
    target = _cli(o.target, "--target") if o.target is not None else (f.target or train)
    tune = _cli(o.tune, "--tune") if o.tune is not None else f.tune
    if o.tune is not None and train.number() is not None and o.tune < train.number():
        raise OptionError(f"{doc.path}: --tune {o.tune} is shorter than the training length "
                          f"{fmt_count(train.number())} ({train.where}); a tuning run is at least as long")
    dtype = f.dtype if f.dtype is not None else _cli(o.dtype, "--dtype", "str")
    scheme = f.scheme or Value("default", None, 1, 1, "plain RoPE", "str")
    pws = f.pretrained_with_scheme
    if f.nope_layers is not None or f.chunk is not None:
        layers = nope_and_chunked_groups(f, d, base, scheme, pws)
    elif f.local_window is None:
        layers = [RopeLayer("all layers", d, base, scheme, dict(f.params), f.block, f.window, pws)]
    else:
        lbase, lscheme, lparams = f.local_rope or (base, scheme, f.params)
        layers = [RopeLayer("global layers", d, base, scheme, dict(f.params), f.block, None, pws),
                  RopeLayer("local layers", d, lbase, lscheme or Value("default", None, 1, 1, "plain RoPE", "str"),
                            dict(lparams), f.block if f.local_rope is None else None, f.local_window,
                            pws if f.local_rope is None else None)]
    return LoadedConfig(path=doc.path, fmt=doc.fmt, arch=f.arch, kind="training", head_dim=head, layers=layers,
                        max_pos=f.target, original_max=f.original_max, train_len=train, target=target,
                        tune_len=tune, dtype=dtype, inputs=doc.inputs, problems=list(f.problems), notes=notes,
                        considered=sorted(doc.considered), unread=list(f.unread))


def nope_and_chunked_groups(f: Fields, d: Value, base: Value, scheme: Value, pws: Value | None) -> list[RopeLayer]:
    """The layer groups of a model whose rotary layers may attend within chunks (``f.chunk``) and whose
    ``f.nope_layers`` apply no rotary: ``chunked 8,192 (36 layers)`` and ``NoPE (12 layers)``, as the
    Hugging Face dialect groups Llama 4's ``no_rope_layers`` and ``attention_chunk_size``."""
    n = f.n_layers or 0
    nope = tuple(sorted(set(f.nope_layers or ())))
    rot = tuple(i for i in range(n) if i not in nope) if n else None
    size = f" {fmt_count(f.chunk.raw)}" if f.chunk is not None and isinstance(f.chunk.raw, int) else ""

    def label(role: str, idx: tuple | None) -> str:
        return f"{role} ({fmt_count(len(idx))} layer{'s' if len(idx) != 1 else ''})" if idx else f"{role} layers"
    main = RopeLayer(label(("chunked" + size) if f.chunk is not None else "global", rot), d, base, scheme,
                     dict(f.params), f.block, f.window, pws, chunk=f.chunk, indices=rot)
    if not nope:
        return [main]
    return [main, RopeLayer(label("NoPE", nope), d, base, scheme, {}, None, None, None, rope=False, indices=nope)]


def dialect(name: str, detect, read=None, *, load=None, doc_class: type = Doc) -> Dialect:
    """The :class:`~ropelaw.lint.dialects.Dialect` of a training framework: it scores ``CLAIM``
    when ``detect(data)`` holds, and its ``load`` wraps the document in ``doc_class`` and
    assembles ``read(doc)`` with the command line, or, for a framework that builds the whole
    config itself (axolotl: a Hugging Face config plus overrides), calls ``load(doc, overrides)``."""

    def load_doc(data: Mapping, positions: Positions | None, path: str, fmt: str, overrides: Overrides) -> LoadedConfig:
        doc = doc_class(data, positions, fmt, path)
        return _guarded(name, path, lambda: load(doc, overrides) if load is not None
                        else assemble(doc, read(doc), overrides))

    return Dialect(name=name, aliases={}, detect=lambda data: CLAIM if detect(data) else 0, load=load_doc)


def _guarded(name: str, path: str, build):
    """Build a dialect's config. A dialect meets values of any type in a hostile file: it validates
    what it reads and raises ``UsageError`` naming the key (exit 2, or RE102 in a scan); any other
    exception is a bug in the dialect, left to the CLI to report as ropelaw's (exit 3, RE104), never
    as the user's malformed config."""
    return build()


guarded = _guarded  # the public name, for dialects in other modules (dialects/gguf.py, llamacpp_launch.py, ollama.py)
