"""litgpt pre-training / fine-tuning YAML (litgpt==0.5.13, ``litgpt/pretrain.py``).

- ``model_name`` names a ``litgpt.Config`` (shipped table ``ropelaw/data/presets_litgpt.json``): ``head_size``,
  ``rope_n_elem = int(rotary_percentage * head_size)`` (or MLA's ``qk_rope_head_dim``),
  ``rope_base``, ``rope_condense_ratio`` (positions divided by it: linear interpolation),
  ``rope_adjustments`` (``low_freq_factor``: Llama 3.1 bands; ``beta_fast``: YaRN), ``block_size``.
- ``model_config``, when given, replaces the named config (pretrain.py: "Overrides the
  `model_name`"): its keys over ``Config``'s class defaults.
- training length: ``train.max_seq_length`` when set (``model.max_seq_length``), else
  ``block_size``; the target is ``block_size``. A run from ``initial_checkpoint_dir``'s weights with YaRN
  (``rope_adjustments.original_max_seq_len`` below ``train.max_seq_length``) is a fine-tune at
  ``train.max_seq_length`` of a model trained at the original length (``_framework.extension_lengths``). \
``precision`` as written (``bf16-mixed`` ...).
- ``block_size`` is the longest input litgpt runs (``GPT.max_seq_length`` raises above it), so a
  ``train.max_seq_length`` above it is RV020. Where litgpt caps a model below its Hugging Face
  context and says so in a comment (0.5.13, Mistral-7B-v0.1: ``block_size=4096,  # should be 32768 but
  sliding window attention is not implemented``; ``ropelaw/data/presets_litgpt.json`` ``hf_block_size``), the
  lint keeps litgpt's 4,096, which is what runs, and notes the difference; axolotl, which runs
  transformers, takes the 32,768 of the Hub's config.json.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ...numfmt import count as fmt_count
from ..model import Overrides, Value
from ._framework import Doc, Fields, derived, dialect, extension_lengths, head_dim_of, preset, presets, rotary_dims
from ..model import Problem
from ..rules.value_rules import BEYOND_CONTEXT

NAME = "litgpt"
# RV031's fix for a checkpoint_dir that is neither on disk nor a named Config: litgpt 0.5.13 reads
# checkpoint_dir/model_config.yaml (finetune/*.py Config.from_file), which convert_hf_checkpoint writes
# (scripts/download.py: litgpt download ORG/NAME, with --model_name for a repository no Config names)
LITGPT_HOW = ("pass the checkpoint directory's model_config.yaml (`litgpt download` writes it) with "
              "--model-config PATH "
              "(or the directory holding it)")


def detect(data: Mapping) -> bool:
    train = data.get("train")
    return "model_name" in data or (isinstance(data.get("model_config"), Mapping) and isinstance(train, Mapping)) \
        or (isinstance(train, Mapping) and "max_seq_length" in train and "precision" in data) \
        or (isinstance(data.get("checkpoint_dir"), str) and isinstance(train, Mapping))


def read(doc: Doc, o: Overrides | None = None) -> Fields:
    table = presets("litgpt")
    problems: list = []
    name_v = doc.get("model_name", expect="str")
    mc = doc.raw("model_config")
    get, src, arch, name_v, entry = _config_source(doc, table, o, name_v, mc)
    head, d = _rotary_dims(get, src, name_v, problems)
    base = get("rope_base")
    block = get("block_size", "int")
    scheme, params = _scaling(get, src)
    notes: list = []
    seq = doc.get("train.max_seq_length", expect="int")
    _past_block_size(seq, block, problems)
    hf_cap = entry.get("hf_block_size")
    if hf_cap and name_v is not None and block is not None:  # an entry with hf_block_size states its block_size
        notes.append(f"litgpt runs {name_v.raw} at most at block_size {fmt_count(block.number())}, below the "
                     f"{fmt_count(hf_cap['value'])} of its Hugging Face config ({hf_cap['source']})")
    train, tune = _lengths(doc, mc, seq, block, scheme, params, src, notes)
    window, some = _window(get, src, notes)
    dtype = doc.get("precision", expect="str")
    return Fields(arch=arch, head_dim=head, d=d, base=base, train_len=train, target=block, scheme=scheme, tune=tune,
                  params=params, original_max=params.get("original_max_position_embeddings"), dtype=dtype,
                  window=None if some else window, local_window=window if some else None, notes=notes,
                  problems=problems)


Getter = Callable[..., Value | None]  # get(key, expect="number"): a Config value with its provenance, None: unset


def _config_source(doc: Doc, table: dict, o: Overrides | None, name_v: Value | None,
                   mc: Any) -> tuple[Getter, str, str, Value | None, dict]:
    """``(get, src, arch, name_v, entry)``: the Config the run builds, as pretrain.py / finetune/*.py pick it:
    ``model_config`` (``mc``) over Config's class defaults, else the checkpoint directory's
    (:func:`_checkpoint_config`), else the named Config ``model_name``; ``entry`` is the named Config's table
    entry (none for a model_config), ``name_v`` the key the values point at."""
    entry: dict = {}
    if isinstance(mc, Mapping) and mc:
        src = "model_config"
        base_vals: dict[str, Any] = dict(table["defaults"]["values"])
        origin = table["defaults"]["source"]

        def get(key: str, expect: str = "number") -> Value | None:
            v = doc.get(f"model_config.{key}", expect=expect)
            if v is not None:
                return v
            raw = base_vals.get(key)
            return None if raw is None else preset(raw, f"{key}: {origin}", name_v, expect)
        return get, src, "litgpt model_config", name_v, entry
    if name_v is None and isinstance(doc.raw("checkpoint_dir"), str):
        ck = doc.require("checkpoint_dir", expect="str")
        ck_vals, ck_src, entry = _checkpoint_config(doc, ck, table, o)

        def get_checkpoint(key: str, expect: str = "number") -> Value | None:
            raw = ck_vals.get(key)
            return None if raw is None else preset(raw, f"{key} of {ck_src}", ck, expect)
        return get_checkpoint, ck_src, f"litgpt {ck.raw}", ck, entry
    if name_v is None or not isinstance(name_v.raw, str):
        raise _not_rope(doc, "no model_name, model_config or checkpoint_dir")
    named = table["presets"].get(name_v.raw)
    if named is None:
        raise _not_rope(doc, f"model_name {name_v.raw!r} is not a named Config of {table['package']}")
    vals, named_src, at = named["values"], f"litgpt Config {name_v.raw!r}", name_v

    def get_named(key: str, expect: str = "number") -> Value | None:
        raw = vals.get(key)
        return None if raw is None else preset(raw, f"{key} of {named_src}", at, expect)
    return get_named, named_src, f"litgpt {name_v.raw}", name_v, named


def _rotary_dims(get: Getter, src: str, name_v: Value | None, problems: list) -> tuple[Value, Value]:
    """``(head_size, rope_n_elem)``: ``head_size`` (else ``n_embd // n_head``); MLA's ``qk_rope_head_dim``, else
    ``int(rotary_percentage * head_size)``."""
    head = get("head_size", "int")
    if head is None:
        head = head_dim_of(get("n_embd", "int"), get("n_head", "int"), problems)
    latent = get("latent_attention", "mapping")
    if latent is not None and isinstance(latent.raw, Mapping) and latent.raw.get("qk_rope_head_dim"):
        d = derived(int(latent.raw["qk_rope_head_dim"]), f"latent_attention.qk_rope_head_dim of {src}", name_v)
    else:
        d = rotary_dims(head, get("rotary_percentage"), problems)
    return head, d


def _scaling(get: Getter, src: str) -> tuple[Value | None, dict[str, Value]]:
    """``(scheme, params)``: ``rope_adjustments`` (``beta_fast`` / ``beta_slow``: YaRN, else the Llama 3.1 bands),
    else ``rope_condense_ratio`` other than 1 (positions divided by it: linear)."""
    scheme = None
    params: dict[str, Value] = {}
    condense = get("rope_condense_ratio")
    adj = get("rope_adjustments", "mapping")
    if adj is not None and isinstance(adj.raw, Mapping):
        a = adj.raw
        at = adj
        orig = a.get("original_max_seq_len")
        if "beta_fast" in a or "beta_slow" in a:
            scheme = derived("yarn", f"rope_adjustments (beta_fast) of {src}: YaRN", at, "str")
            keys = {"factor": "factor", "beta_fast": "beta_fast", "beta_slow": "beta_slow"}
        else:
            scheme = derived("llama3", f"rope_adjustments of {src}: Llama 3.1 bands", at, "str")
            keys = {"factor": "factor", "low_freq_factor": "low_freq_factor", "high_freq_factor": "high_freq_factor"}
        for k, name in keys.items():
            if a.get(k) is not None:
                params[name] = derived(a[k], f"rope_adjustments.{k} of {src}", at, "number")
        if orig is not None:
            params["original_max_position_embeddings"] = derived(
                orig, f"rope_adjustments.original_max_seq_len of {src}", at, "int")
    elif condense is not None and (condense.number() or 1) != 1:
        scheme = derived("linear", f"rope_condense_ratio of {src}: positions / ratio", condense, "str")
        params["factor"] = condense
    return scheme, params


def _past_block_size(seq: Value | None, block: Value | None, problems: list) -> None:
    """RV020 for a ``train.max_seq_length`` above ``block_size``, the longest input litgpt runs."""
    if seq is None or block is None:
        return
    s, b = seq.number(), block.number()
    if s is None or b is None or s <= b:
        return
    problems.append(Problem(BEYOND_CONTEXT, seq,
                            f"train.max_seq_length {fmt_count(s)} exceeds block_size {fmt_count(b)} ({block.where}): "
                            f"litgpt refuses inputs that long (\"Cannot attend to {int(s)}, block size is only "
                            f"{int(b)}\")"))


def _lengths(doc: Doc, mc: Any, seq: Value | None, block: Value | None, scheme: Value | None,
             params: dict[str, Value], src: str, notes: list) -> tuple[Value | None, Value | None]:
    """``(train, tune)``: a fine-tune of a checkpoint's model (``checkpoint_dir``) is trained at its original
    length (``rope_adjustments``) or ``block_size`` and tuned at ``train.max_seq_length``; a run trains at
    ``train.max_seq_length`` (else ``block_size``), a YaRN run from ``initial_checkpoint_dir``'s weights past
    the original length is a fine-tune (:func:`~ropelaw.lint.dialects._framework.extension_lengths`)."""
    tune = None
    if doc.raw("checkpoint_dir") is not None and doc.raw("model_name") is None and not isinstance(mc, Mapping):
        # a fine-tune of the checkpoint's model (finetune/*.py: Config.from_file(checkpoint_dir/model_config.yaml)):
        # trained at its original length (rope_adjustments) or block_size, tuned at train.max_seq_length
        orig = params.get("original_max_position_embeddings")
        train = orig or (derived(block.raw, f"block_size of {src}", block) if block is not None else None)
        if seq is not None and train is not None:
            from .axolotl import fine_tune_length

            tune = fine_tune_length(seq, train, notes, "litgpt")
    else:
        train = seq or (derived(block.raw, f"block_size of {src} (train.max_seq_length not set)", block)
                        if block is not None else None)
        if doc.raw("initial_checkpoint_dir") and scheme is not None and scheme.raw == "yarn":  # from those weights
            train, tune = extension_lengths(seq, params.get("original_max_position_embeddings"), None, notes, "litgpt")
    return train, tune


def _window(get: Getter, src: str, notes: list) -> tuple[Value | None, bool]:
    """``(sliding_window_size, whether only some layers use it)``: litgpt==0.5.13 model.py applies the window where
    ``sliding_window_indices[block_idx]`` is 1 (Gemma 2 / 3: global layers between the windowed ones)."""
    window = get("sliding_window_size", "int")
    some = False
    idx_v = get("sliding_window_indices", "list")
    if window is not None and idx_v is not None and isinstance(idx_v.raw, list) and idx_v.raw:
        idx = idx_v.raw
        if not any(idx):
            window = None
            notes.append(f"sliding_window_indices of {src} marks no layer: no sliding window")
        else:
            some = not all(idx)
    return window, some


def _checkpoint_config(doc: Doc, ck: Value, table: dict, o: Overrides | None) -> tuple[dict, str, dict]:
    """``(Config values, where they came from, table entry)`` of the model in ``checkpoint_dir``, as litgpt's
    fine-tuning scripts load it (``Config.from_file(checkpoint_dir / "model_config.yaml")``, written by
    ``litgpt download`` from ``Config.from_name(<repo id>)``): that file when it is on disk; else
    ``--model-config`` (a model_config.yaml, or the directory holding it); else the named Config of the
    directory's name (``Config.from_checkpoint``) or of its Hub repository id (the last two path parts,
    as ``from_name`` matches ``hf_config``); else RV031."""
    import os

    from ..model import ModelNeeded
    from ..model_config import given_file
    from ..parse import read_document

    path = str(ck.raw)
    local = os.path.join(path, "model_config.yaml")
    given = given_file(o.model_config if o is not None else None, ("model_config.yaml",))
    for f, what in ((local if os.path.isfile(local) else None, local), (given, f"--model-config {given}")):
        if f is not None:
            data, _, _ = read_document(f)
            return {**table["defaults"]["values"], **dict(data)}, f"{what} (over {table['defaults']['source']})", {}
    parts = path.rstrip("/").split("/")
    name = parts[-1]
    entry = table["presets"].get(name)
    if entry is None and len(parts) >= 2:
        repo = "/".join(parts[-2:])
        entry = next((e for e in table["presets"].values() if e.get("hf_repo") == repo), None)
    if entry is None:
        raise ModelNeeded(f"{doc.path}: checkpoint_dir {path!r} names the model; its model_config.yaml is not on "
                          f"this machine (no {local}; not a named Config of {table['package']})", ck.line, ck.column,
                          fix=LITGPT_HOW)
    return entry["values"], f"checkpoint_dir {path!r} ({entry['source']})", entry


def _not_rope(doc: Doc, why: str):
    from ..model import NotARopeConfig

    return NotARopeConfig(f"{doc.path}: litgpt config: {why}")


def load(doc: Doc, o: Overrides):
    from ._framework import assemble

    return assemble(doc, read(doc, o), o)


DIALECT = dialect(NAME, detect, load=load)
