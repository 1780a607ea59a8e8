"""NeMo (1.x Megatron GPT / Llama YAML, e.g. ``examples/nlp/language_modeling/conf/megatron_llama_config.yaml``).

The ``model:`` section holds Megatron's settings with underscores: ``encoder_seq_length`` (the
training length), ``max_position_embeddings`` (the context, usually ``${.encoder_seq_length}``),
``hidden_size``, ``num_attention_heads``, ``kv_channels`` (null: ``hidden_size //
num_attention_heads``), ``position_embedding_type`` (``rope``; NeMo's GPT default is
``learned_absolute``), ``rotary_percentage``, ``rotary_base`` (default 10,000),
``seq_len_interpolation_factor`` (linear interpolation). OmegaConf interpolations ``${model.x}`` /
``${.x}`` that point inside the document are resolved (the value keeps the position of the key
that holds the interpolation); ``${oc.env:...}`` and other resolvers are not.

A fine-tuning config names its model with ``model.restore_from_path`` (a .nemo archive; ``???`` in
NeMo's examples: to be given on the command line) and holds no dims of its own: NeMo starts from the
archive's model config and sets the fine-tuning config's model keys on it (``merge_cfg_with``). The
archive's ``model_config.yaml`` is read from ``--model-config`` (the file, the .nemo or the directory
holding it), or from the .nemo or extracted directory at that path (the tar is read, never extracted);
otherwise RV031 names the model, never a skip. ``model.data.train_ds.max_seq_length`` is then the tuning
length.

Sliding window (nemo_toolkit==2.5.0 ``megatron_base_model.py`` ``build_transformer_config``
copies every model key named like a field of megatron-core's ``TransformerConfig``):
``model.window_size: [left, right]`` (megatron-core==0.16.1 ``transformer_config.py``; -1 is
"infinite"), read only by Megatron Core models (``model.mcore_gpt: true``; the legacy
``GPTModel`` has no window). A query at position i attends keys i - left .. i
(``transformer/utils.py`` ``get_sliding_window_causal_mask``: ``triu(diagonal=-left)``), i.e.
relative distances 0..left: ``left + 1`` positions, where Hugging Face's ``sliding_window`` W
covers distances 0..W-1 (transformers 4.57.1 ``masking_utils.sliding_window_overlay``). NeMo's
converters map one to the other unchanged (``llm/gpt/model/mistral.py``: ``window_size =
[sliding_window, 0]``), so a converted Mistral attends one position further than in
transformers; ropelaw reports what Megatron runs, ``left + 1``. ``window_attn_skip_freq`` (an int
N: every N-th layer attends fully; a list: 1 for windowed layers) and NeMo's Gemma 2 spec
(``model.name: megatron_gemma2``: windows on even layers, ``gemma2_modules.py``) leave some layers
global: the config is then linted as global + local layer groups.

dtype (nemo_toolkit==2.5.0 ``megatron_base_model.py`` and ``parts/utils_funcs.py``
``torch_dtype_from_precision``): ``model.precision``, else ``trainer.precision``; ``bf16`` /
``bf16-mixed`` -> bfloat16, ``16`` / ``16-mixed`` -> float16, ``32`` / ``32-true`` -> float32,
anything else (Lightning's ``bf16-true``, ``64``, ``transformer-engine``) is refused by NeMo 1.x.
A half precision holds the parameters in that dtype only with ``model.megatron_amp_O2: true``
(``params_dtype``; NeMo's ``Float16Module``); without it the parameters stay float32 and NeMo
autocasts, reported as ``bf16-mixed`` / ``16-mixed`` (Lightning's names for it: lightning==2.4.0
``fabric/plugins/precision/precision.py``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from dataclasses import replace

from ..model import LoadedConfig, ModelNeeded, NotARopeConfig, Overrides, Value, show_value
from ._framework import (Doc, Fields, assemble, derived, dialect, head_dim_of, preset, pretraining_with_scheme,
                         rotary_dims)
from ..model import Problem
from ..rules.value_rules import INVALID_TYPE

NAME = "nemo"
NEMO = "nemo_toolkit==2.5.0"
MCORE = "megatron-core==0.16.1"
_REF = re.compile(r"^\$\{(\.*)([A-Za-z_][\w.]*)\}$")


def detect(data: Mapping) -> bool:
    m = data.get("model")
    if isinstance(m, Mapping) and isinstance(data.get("trainer"), Mapping) and (
            "encoder_seq_length" in m or "position_embedding_type" in m or "restore_from_path" in m):
        return True
    return _archive_config(data)


def load(doc: Doc, o: Overrides) -> LoadedConfig:
    """A training config, or a fine-tuning config whose model is a .nemo named by ``model.restore_from_path``
    (its dims and RoPE are the archive's: NeMo's ``merge_cfg_with`` starts from the archive's model config and
    sets the fine-tuning config's model keys on it)."""
    model = doc.data.get("model")
    m = model if isinstance(model, Mapping) else {}
    named = doc.get("model.restore_from_path", expect="any")
    if named is None or any(k in m for k in ("hidden_size", "num_attention_heads", "kv_channels")):
        return assemble(doc, read(doc), o)
    archive = archive_model_config(str(named.raw), o.model_config)
    if archive is None:
        raise ModelNeeded(f"{doc.path}: model.restore_from_path {named.raw!r} names the model (a .nemo archive); "
                          "its model_config.yaml is needed (not an archive or extracted directory on this machine): "
                          "pass it with --model-config PATH (the model_config.yaml, the .nemo, or the directory "
                          "holding it)", named.line, named.column)
    cfg, origin = archive
    merged = {**doc.data, "model": {**cfg, **{k: v for k, v in m.items() if v is not None and v != "???"}}}
    inner = Doc(merged, doc.positions, doc.fmt, doc.path)
    loaded = assemble(inner, read(inner), o)
    tune = doc.get("model.data.train_ds.max_seq_length", expect="int")
    notes = list(loaded.notes) + [f"the model's settings come from {origin} (model.restore_from_path)"]
    if tune is not None and o.tune is None:
        from .axolotl import fine_tune_length

        tune = fine_tune_length(tune, loaded.train_len, notes, "NeMo")
        return replace(loaded, tune_len=tune, notes=notes, inputs=inner.inputs + doc.inputs)
    return replace(loaded, notes=notes, inputs=inner.inputs + doc.inputs)


def archive_model_config(named: str, given: str | None) -> tuple[dict, str] | None:
    """``(model config, where it came from)`` of a .nemo: ``--model-config`` (a model_config.yaml, a .nemo or a
    directory holding one), else ``named`` itself when it is on this machine; None when neither is."""
    import os

    for path in ([given] if given else []) + [named]:
        if os.path.isdir(path) and os.path.isfile(os.path.join(path, "model_config.yaml")):
            path = os.path.join(path, "model_config.yaml")
        if os.path.isfile(path) and path.endswith((".yaml", ".yml")):
            from ..parse import read_document

            data, _, _ = read_document(path)
            return dict(data), path
        if os.path.isfile(path) and path.endswith(".nemo"):
            got = _from_archive(path)
            if got is not None:
                return got, f"{path}: model_config.yaml"
    return None


def _from_archive(path: str) -> dict | None:
    """model_config.yaml of a .nemo (a tar), read without extracting anything (16 MiB at most)."""
    import tarfile

    import yaml

    try:
        with tarfile.open(path) as tar:
            for member in tar:
                if member.isfile() and member.name.lstrip("./") == "model_config.yaml" and member.size < 16 << 20:
                    f = tar.extractfile(member)  # a regular file: never None
                    data = yaml.safe_load(f.read()) if f is not None else None
                    return dict(data) if isinstance(data, Mapping) else None
    except (tarfile.TarError, OSError, yaml.YAMLError):
        return None
    return None


def _archive_config(data: Mapping) -> bool:
    """A .nemo archive's model_config.yaml: the model section itself at the top level (NeMo saves
    ``cfg.model``, with its ``target`` class and the ``nemo_version``)."""
    target = data.get("target")
    return "encoder_seq_length" in data and (
        (isinstance(target, str) and target.startswith("nemo.")) or "nemo_version" in data or "mcore_gpt" in data)


def resolve(data: Any, depth: int = 0) -> Any:
    """Copy of ``data`` with whole-string ``${a.b}`` / ``${.b}`` references replaced by their targets."""

    def walk(node: Any, parents: list) -> Any:
        if isinstance(node, Mapping):
            return {k: walk(v, parents + [node]) for k, v in node.items()}
        if isinstance(node, list):
            return [walk(v, parents) for v in node]
        return look(node, parents, 0)

    def look(node: Any, parents: list, hops: int) -> Any:
        if not isinstance(node, str) or hops > 16:
            return node
        m = _REF.match(node.strip())
        if not m:
            return node
        dots, path = m.groups()
        if dots:
            up = len(dots) - 1
            if up >= len(parents):
                return node
            base, scope = parents[len(parents) - 1 - up], parents[: len(parents) - up]
        else:
            base, scope = data, [data]
        cur: Any = base
        for part in path.split("."):
            if not isinstance(cur, Mapping) or part not in cur:
                return node
            scope = scope + [cur]
            cur = cur[part]
        return look(cur, scope[:-1] if isinstance(cur, Mapping) else scope, hops + 1)
    return walk(data, [])


def read(doc: Doc) -> Fields:
    archive = not isinstance(doc.data.get("model"), Mapping) and _archive_config(doc.data)
    if archive:
        doc.top_level = "model."  # model.x is x: the file is the model section
    resolved = resolve(doc.data)
    doc = Resolved(resolved, doc)
    pe = str(doc.raw("model.position_embedding_type") or "learned_absolute").strip().lower()
    if pe not in ("rope", "rotary"):
        raise NotARopeConfig(f"{doc.path}: NeMo position_embedding_type {pe!r} is not RoPE"
                             + (" (the default)" if doc.raw("model.position_embedding_type") is None else ""))
    problems: list = []
    head = doc.get("model.kv_channels", expect="int") or head_dim_of(
        doc.get("model.hidden_size", expect="int"), doc.get("model.num_attention_heads", expect="int"), problems)
    d = rotary_dims(head, doc.get("model.rotary_percentage", "model.rotary_percent"), problems)
    base = doc.get("model.rotary_base") or preset(10000, "rotary_base: NeMo / Megatron default", None)
    seq = doc.get("model.encoder_seq_length", "model.seq_length", expect="int")
    max_pos = doc.get("model.max_position_embeddings", expect="int")
    scheme, params = None, {}
    interp = doc.get("model.seq_len_interpolation_factor")
    notes: list = []
    from_start = None
    if interp is not None:
        scheme = derived("linear", "seq_len_interpolation_factor: positions / factor", interp, "str")
        params = {"factor": interp}
        if archive:
            notes.append("a saved model's config: whether it was pre-trained with the interpolation is not "
                         "recorded; read as a context extension")
        else:
            # megatron-core's RotaryEmbedding divides the positions at every step of the run: from no weights,
            # the model is pre-trained with it (as torchtitan and Megatron-LM runs are read)
            loaded = next((v for v in (doc.get(f"model.{k}", expect="any") for k in _LOADS)
                           if v is not None and v.raw not in (None, False, "")), None)
            from_start = pretraining_with_scheme(
                scheme, loaded, "NeMo (megatron-core RotaryEmbedding)",
                f"no model.{', model.'.join(_LOADS)}, so this run is the model's pre-training", interp, notes)
    window, some = _window(doc, problems, notes)
    return Fields(arch="nemo" + (" model_config" if archive else ""), head_dim=head, d=d, base=base,
                  train_len=seq or max_pos, target=max_pos or seq, scheme=scheme, params=params,
                  dtype=_precision(doc, notes), window=None if some else window, local_window=window if some else None,
                  notes=notes, problems=problems, pretrained_with_scheme=from_start)


# the model keys of NeMo 1.x training configs that start the run from existing weights (megatron_gpt_sft,
# continued training: nemo_toolkit==2.5.0 examples/nlp/language_modeling/conf and tuning/conf)
_LOADS = ("restore_from_path", "init_from_nemo_model", "init_from_ptl_ckpt", "pretrained_checkpoint")


def _int(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _window(doc: Doc, problems: list, notes: list) -> tuple[Value | None, bool]:
    """``(window as positions attended, whether some layers attend fully)`` (see the module docstring)."""
    v = doc.get("model.window_size", expect="list")
    if v is None:
        return None, False
    raw = v.raw
    if not (isinstance(raw, list) and len(raw) == 2 and all(_int(x) for x in raw)):
        problems.append(Problem(INVALID_TYPE, v, f"model.window_size must be [left, right], two whole numbers "
                                                   f"(-1: unbounded; {MCORE} TransformerConfig.window_size), "
                                                   f"got {show_value(raw)}",
                                fix="write model.window_size as [left, right], two whole numbers, e.g. [4095, 0] "
                                    "(left -1: no window)"))
        return None, False
    left, right = raw
    if doc.raw("model.mcore_gpt") is not True:
        notes.append("model.window_size is read by Megatron Core models only (model.mcore_gpt: true); "
                     "the legacy GPTModel attends to the whole context")
        return None, False
    if left < 0:
        notes.append("model.window_size left -1: no window (Megatron's 'infinite window size')")
        return None, False
    window = Value(left + 1, v.key, v.line, v.column,
                   f"[{left}, {right}]: keys up to {left:,} back, {left + 1:,} positions "
                   f"({MCORE} get_sliding_window_causal_mask)", "int")
    skip = doc.get("model.window_attn_skip_freq", expect="any")
    if skip is not None:
        s = skip.raw
        if _int(s) and s >= 1:
            if s == 1:  # layer_number % 1 == 0: every layer attends fully
                notes.append("model.window_attn_skip_freq 1: every layer attends fully, no window")
                return None, False
            return window, True
        if isinstance(s, list) and s and all(_int(x) or isinstance(x, bool) for x in s):
            if not any(s):
                notes.append("model.window_attn_skip_freq lists no windowed layer (1 marks one)")
                return None, False
            return window, not all(s)
        problems.append(Problem(INVALID_TYPE, skip, f"model.window_attn_skip_freq must be a whole number >= 1 or "
                                                      f"a list of 0/1 per layer ({MCORE} "
                                                      f"is_layer_window_attention), got {show_value(s)}",
                                fix="write model.window_attn_skip_freq as a whole number N >= 1 (every N-th layer "
                                    "attends fully) or a list of 0/1 per layer (1: windowed)"))
        return window, True
    if str(doc.raw("model.name") or "") == "megatron_gemma2":
        notes.append(f"NeMo's Gemma 2 layers put the window on even layers only ({NEMO} gemma2_modules.py)")
        return window, True
    return window, False


_HALF = {"bf16": "bf16", "bf16-mixed": "bf16", "16": "fp16", "16-mixed": "fp16"}
_FULL = {"32": "fp32", "32-true": "fp32"}


def _precision(doc: Doc, notes: list) -> Value | None:
    """The dtype NeMo 1.x trains with (see the module docstring), at the precision key."""
    v = doc.get("model.precision", "trainer.precision", expect="any")
    if v is None:
        return None
    raw = v.raw
    name = str(raw).strip().lower() if (isinstance(raw, str) or _int(raw)) else None
    src = f"{NEMO} torch_dtype_from_precision"
    if name in _HALF:
        half = _HALF[name]
        o2 = doc.raw("model.megatron_amp_O2")
        if o2 is True or (isinstance(o2, str) and o2.strip().lower() == "true"):
            return Value(half, v.key, v.line, v.column,
                         f"{raw} with model.megatron_amp_O2: parameters in {half} ({src}, params_dtype)", "str")
        mixed = "bf16-mixed" if half == "bf16" else "16-mixed"
        return Value(mixed, v.key, v.line, v.column,
                     f"{raw} without model.megatron_amp_O2: float32 parameters, {half} autocast ({src})", "str")
    if name in _FULL:
        return Value("fp32", v.key, v.line, v.column, f"{raw}: float32 ({src})", "str")
    notes.append(f"{v.key} {show_value(raw)} is not a precision NeMo 1.x reads ({src} knows 16, bf16, 32 and "
                 f"16-mixed, bf16-mixed, 32-true; it raises ValueError for others): read as written")
    return v


class Resolved(Doc):
    """The resolved document, positions and recorded inputs shared with the original."""

    def __init__(self, data: Mapping, orig: Doc):
        super().__init__(data, orig.positions, orig.fmt, orig.path)
        self.inputs = orig.inputs
        self.considered = orig.considered
        self.top_level = orig.top_level
        self._orig = orig

    def get(self, *dotted: str, expect: str = "number", note: str = ""):
        for name in dotted:
            before = self._orig.raw(name)
            if before is None or self.raw(name) is None:
                continue
            n = f"{before} resolved" if isinstance(before, str) and before.strip().startswith("${") else note
            return super().get(name, expect=expect, note=n)
        return None


DIALECT = dialect(NAME, detect, load=load)
