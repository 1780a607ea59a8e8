"""Which keys of a real ``config.json`` change the rotary transformers runs, proven by perturbation.

Needs torch and transformers (``scripts/hf_key_perturbation.py`` writes ``ropelaw/data/hf_keys.json`` with it,
``tests/test_hf_keys.py`` derives a sample again; the linter reads only the data file). The file is run as
the differential over real files runs it (:mod:`.shrunk`: loaded as users load it, its language model shrunk in
place, every layer and RoPE key kept): a forward over 24 tokens with every window and chunk made short, and one at
the far positions (just past the original length, else up to max_position_embeddings). What the two show of the
rotary is the file's *signature*: per layer, attention or none, NoPE or RoPE, the frequencies (7 significant
digits), the attention factor (6 digits), the rotated pairs, the query scale the probe sees, the span attended
(near run); and the factor the first attention layer's queries get whatever the rotary (their norms at the far
positions over the near ones, same tokens: Ministral 3's ``llama_4_scaling_beta``).

Then each key of the rope blocks (``rope_scaling`` / ``rope_parameters`` of the language model's section, the
blocks themselves and what they hold, per-layer-type blocks included) is changed (a value of the same type near
it: an integer + 2 if even else + 1, then twice it; a float x 1.25, then x 0.5; a bool flipped; a list's numbers
x 1.25 or + 1; a list of distinct names rotated; a rope block's type another scheme) and removed, one key at a
time, and the signature taken again. Verdicts:

- ``reads``: some change changes the signature (the forward runs, and a layer's rotary, span or query scale is
  not what it was);
- ``ignores``: the changes and the removal were tried and none changes it;
- ``unproven``: no conclusion: only the removal could be tried (a string, a null) and changed nothing, or
  transformers refused a change.

The keys outside the rope blocks (the top-level keys and the language model section's: sizes, dropouts, norms,
the layer layout) are changed by :func:`top_changes` and listed by :func:`top_key_paths`; their differential
(the perturbed forward against ropelaw's reading of the perturbed file) is ``scripts/hf_top_keys.py``.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from collections.abc import Set as AbstractSet
from typing import Any

from . import probes, shrunk

SECTIONS = ("text_config", "language_config", "llm_config")
ROPE_BLOCKS = ("rope_scaling", "rope_parameters")
ROOT = "(root)"  # a top-level key of a composite file, outside its language model's section


@dataclass
class Measured:
    """A file as measured: its data, section path, far offsets and signature parts."""

    data: dict
    section: tuple
    offsets: tuple
    near: tuple
    far: tuple
    run: Any  # the near shrunk.FileRun (model type, shrunk attributes)
    entries: dict = field(default_factory=dict)  # dotted relative path -> entry


def section_path(data: dict) -> tuple:
    """The key path of the file's language-model section (() for a flat file)."""
    return next(((k,) for k in SECTIONS if isinstance(data.get(k), dict)), ())


def key_paths(data: dict) -> list[tuple]:
    """Every key of the language-model section (nested mappings walked, three levels), then every top-level
    key outside it (not walked)."""
    sec = section_path(data)
    out: list[tuple] = []

    def walk(node: dict, path: tuple, depth: int) -> None:
        for k, v in node.items():
            out.append(path + (k,))
            if isinstance(v, dict) and depth < 3:
                walk(v, path + (k,), depth + 1)

    walk(data[sec[0]] if sec else data, sec, 1)
    if sec:
        out += [(k,) for k in data if k != sec[0]]
    return out


def relative(path: tuple, sec: tuple) -> str:
    """``path`` as the table names it: dotted, relative to the section (outside it: under ``(root)``)."""
    if sec and path[: len(sec)] == sec:
        return ".".join(map(str, path[len(sec):]))
    return ".".join((ROOT,) + tuple(map(str, path))) if sec else ".".join(map(str, path))


def changes(path: tuple, value: Any) -> list:
    """Values of the same type near ``value`` (the removal is tried apart)."""
    if isinstance(value, bool):
        return [not value]
    if isinstance(value, int):  # an even size stays even (head dims); then one twice as far
        return [value + 2 if value % 2 == 0 else value + 1] + ([value * 2] if value > 1 else [])
    if isinstance(value, float):  # a nearby number, then half of it (a rounded threshold such as YaRN's
        return [value * 1.25, value * 0.5] if value else [0.5]  # correction range may not move for the first)
    if isinstance(value, list) and value and all(isinstance(x, (int, float)) and not isinstance(x, bool)
                                                 for x in value):
        return [[x * 1.25 if isinstance(x, float) else x + 1 for x in value]]
    if isinstance(value, list) and len({json.dumps(x, sort_keys=True) for x in value}) > 1:
        return [value[1:] + value[:1]]
    if isinstance(value, str) and path[-1] in ("rope_type", "type") and any(p in ROPE_BLOCKS for p in path):
        return ["dynamic" if value == "linear" else "linear"]
    return []


REMOVE = object()


def changed(data: dict, edits: list) -> dict:
    """``data`` with each ``(path, value)`` of ``edits`` set (``REMOVE``: deleted); a path whose parent an
    earlier edit removed is skipped."""
    out = copy.deepcopy(data)
    for path, value in edits:
        node: Any = out
        for p in path[:-1]:
            node = node.get(p) if isinstance(node, dict) else None
        if not isinstance(node, dict) or (value is REMOVE and path[-1] not in node):
            continue
        if value is REMOVE:
            del node[path[-1]]
        else:
            node[path[-1]] = value
    return out


def _rope(o) -> tuple | None:
    r = o.rope
    if r is None:
        return None
    scale = None if r.query_scale is None else tuple(round(x, 4) for x in r.query_scale)
    return (tuple(float(f"{f:.7g}") for f in r.inv_freq), round(r.attention_factor, 6), r.zero_pairs, r.channels,
            scale)


def _first_attention(layers) -> int | None:
    return next((o.index for o in layers if o.query_norm is not None and o.span != "none"), None)


def near_part(data: dict) -> tuple[tuple, Any]:
    """``(signature, run)`` of the forward at positions 0-23 with short windows and chunks."""
    small, _ = shrunk.with_small_spans(data)
    run = shrunk.run_file(small)
    if run.refused:
        return ("refused", ":".join(run.refused.split(":")[:2])), run
    if run.problem:
        return ("problem", run.problem[:100]), run
    return tuple((o.span, o.size, o.problem is not None, _rope(o)) for o in run.probe.layers), run


def far_part(data: dict, offset: int, near_run) -> tuple:
    """The signature of the forward at positions ``offset`` .. ``offset`` + 23: every layer's rotary, and the
    first attention layer's query norms there over the near run's (``near_run``)."""
    return far_signature(shrunk.run_file(data, offset=offset), near_run)


def far_signature(run, near_run) -> tuple:
    """:func:`far_part` of a far forward already run (``run``)."""
    if run.refused or run.problem:
        return ("refused" if run.refused else "problem", (run.refused or run.problem or "")[:100])
    ratio = None
    i = _first_attention(near_run.probe.layers)
    if i is not None and i < len(run.probe.layers) and run.probe.layers[i].query_norm is not None:
        a, b = near_run.probe.layers[i].query_norm, run.probe.layers[i].query_norm
        if len(a) == len(b) and a[0] and a[-1]:
            ratio = (round(b[0] / a[0], 4), round(b[-1] / a[-1], 4))
    return tuple(_rope(o) for o in run.probe.layers) + (("query norms far / near", ratio),)


def describe(old: tuple, new: tuple, where: str) -> str:
    """What differs between two signature parts, in words (the first difference)."""
    if new and new[0] in ("refused", "problem"):
        return f"{new[0]}: {new[1]}"
    if len(old) != len(new):
        return f"{len(new)} layers in the {where} forward, not {len(old)}"
    names = ("span", "span size", "unobserved", "rotary") if where == "near" else None
    for i, (a, b) in enumerate(zip(old, new, strict=True)):  # lengths compared above
        if a == b:
            continue
        if names is None:
            return f"{where} forward: layer {i}'s rotary" if i < len(old) - 1 else \
                f"{where} forward: the queries' scale ({a[1]} -> {b[1]})"
        part = next(n for n, x, y in zip(names, a, b, strict=True) if x != y)  # near_part's 4 parts
        if part == "rotary" and a[3] is not None and b[3] is not None:
            part = next(n for n, x, y in zip(("frequencies", "attention factor", "unrotated pairs", "rotated dims",
                                              "query scale"), a[3], b[3], strict=True) if x != y)  # _rope's 5
        elif part == "rotary":
            part = "NoPE" if b[3] is None else "RoPE"
        return f"{where} forward: layer {i}'s {part}"
    return "no difference"


def measure_base(data: dict) -> Measured | None:
    """The file's signature (None: transformers refuses it, or it is not observed)."""
    near, run = near_part(data)
    if near and near[0] in ("refused", "problem"):
        return None
    end = shrunk.far_end(run)
    offsets = (end - probes.LENGTH,) if end and end > probes.LENGTH else ()
    far = tuple(far_part(data, o, run) for o in offsets)
    if any(f and f[0] in ("refused", "problem") for f in far):
        return None
    return Measured(data, section_path(data), offsets, near, far, run)


def difference(m: Measured, data: dict) -> str | None:
    """How ``data`` (``m``'s file changed) differs from ``m`` in the signature; None: it does not."""
    near, run = near_part(data)
    if near != m.near:
        return describe(m.near, near, "near")
    for offset, want in zip(m.offsets, m.far, strict=True):  # one far part per offset
        got = far_part(data, offset, run)
        if got != want:
            return describe(want, got, "far")
    return None


def node_at(data: dict, path: tuple) -> Any:
    for p in path:
        data = data[p]
    return data


def single(m: Measured, path: tuple) -> dict:
    """The entry of one key: each change, then the removal, until one changes the signature."""
    value = node_at(m.data, path)
    tried, refused = [], False
    for label, edit in [(json.dumps(v)[:40], v) for v in changes(path, value)] + [("removed", REMOVE)]:
        found = difference(m, changed(m.data, [(path, edit)]))
        if found is not None and not found.startswith(("refused", "problem")):
            return {"verdict": "reads", "how": f"{label}: {found}"}
        refused = refused or found is not None
        tried.append(f"{label}: {found or 'no change'}")
    only_removal = len(tried) == 1
    verdict = "unproven" if refused or only_removal else "ignores"
    return {"verdict": verdict, "how": "; ".join(tried)[:300]}


def rope_block_paths(data: dict) -> list[tuple]:
    """The key paths of the language model's rope blocks: each block and every key inside it."""
    return [p for p in key_paths(data) if any(b in p for b in ROPE_BLOCKS)]


def measure_rope_blocks(data: dict, skip: AbstractSet = frozenset()) -> Measured | None:
    """Each key of the rope blocks (:func:`rope_block_paths`) measured one by one, except the relative paths in
    ``skip`` (the keys RV009 is about: a rope-block key transformers does not read). None: transformers does not
    build the file, or it is not observed."""
    paths = [p for p in rope_block_paths(data) if relative(p, section_path(data)) not in skip]
    m = measure_base(data) if paths else None
    if m is not None:
        m.entries = {relative(p, m.section): single(m, p) for p in paths}
    return m



# -----------------------------------------------------------------------------------------
# the keys outside the rope blocks (scripts/hf_top_keys.py)
# -----------------------------------------------------------------------------------------
def top_key_paths(data: dict) -> list[tuple]:
    """Every top-level key of the file, then every key of its language model's section (not walked), except
    the rope blocks (:data:`ROPE_BLOCKS`, measured by :func:`measure_rope_blocks`) and :data:`NOT_MEASURED`."""
    sec = section_path(data)
    out = [(k,) for k in data if k not in ROPE_BLOCKS + NOT_MEASURED]
    if sec:
        out += [sec + (k,) for k in data[sec[0]] if k not in ROPE_BLOCKS + NOT_MEASURED]
    return out


# model_type is not measured: a string with no other value to set, and without it AutoConfig matches model-type
# names in the loading folder's path, whose random part (a temporary folder) makes the outcome vary from run to run
NOT_MEASURED = ("model_type",)


def top_relative(path: tuple, sec: tuple) -> str:
    """:func:`relative`, with the section's own key named as a top-level key (``(root).text_config``)."""
    return f"{ROOT}.{path[0]}" if sec and path == sec else relative(path, sec)


# keys that are not about the model's layers (names, versions, dtypes, token ids, the vocabulary, caching, tying,
# initialisation): scripts/hf_top_keys.py measures them in its second pass
NOT_ABOUT_THE_MODEL = ("transformers_version", "architectures", "_name_or_path", "torch_dtype", "dtype", "vocab_size",
                       "use_cache", "tie_word_embeddings", "initializer_range", "auto_map")
NOT_ABOUT_THE_MODEL_SUFFIXES = ("_token_id", "_token_ids", "_token_index")


def about_the_model(path: tuple) -> bool:
    """Whether the key is measured in the first pass (not one of :data:`NOT_ABOUT_THE_MODEL` and its suffixes)."""
    leaf = str(path[-1])
    return leaf not in NOT_ABOUT_THE_MODEL and not leaf.endswith(NOT_ABOUT_THE_MODEL_SUFFIXES)


# string keys with another value the config classes accept (transformers' ACT2FN names, torch dtypes)
STRING_CHANGES = {"hidden_act": ("silu", "gelu"), "hidden_activation": ("gelu_pytorch_tanh", "silu"),
                  "activation_function": ("gelu_new", "silu"), "torch_dtype": ("bfloat16", "float16"),
                  "dtype": ("bfloat16", "float16")}


def top_changes(path: tuple, value) -> list:
    """The candidate changes of a key outside the rope blocks, in order; the measurement makes the first and
    the next only when transformers refuses it: an integer + 2 if even else + 1 (then + 1 / + 2), a float x 1.25
    (then x 0.5), a bool flipped, a list as :func:`changes`, a string of :data:`STRING_CHANGES` the other
    value; other strings, nulls and mappings: none (the removal only)."""
    if isinstance(value, bool):
        return [not value]
    if isinstance(value, int):
        return [value + 2, value + 1] if value % 2 == 0 else [value + 1, value + 2]
    if isinstance(value, str):
        pair = STRING_CHANGES.get(path[-1])
        return [pair[1] if value == pair[0] else pair[0]] if pair else []
    return changes(path, value)
