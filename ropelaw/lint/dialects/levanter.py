"""Levanter training YAML (stanford-crfm/levanter at the commit below, ``src/levanter/layers/rotary.py``
and ``src/levanter/models/*.py``): ``model: {type: llama, ..., rope: {type: ..., ...}}``.

- head dim: ``head_dim`` when set (``LlamaConfig``; Gemma's default 256), else ``hidden_dim // num_heads``
  (defaults 4,096 / 32); every rotary rotates the whole head;
- ``model.rope`` (``RotaryEmbeddingsConfig``, a draccus choice by ``type``; absent:
  ``DefaultRotaryEmbeddingsConfig``):
  ``default`` / ``linear`` (theta 10,000, ``factor`` 1: ``inv_freq / factor``, linear interpolation);
  ``llama3`` (theta 500,000, factor 8, low 1, high 4, original 8,192: transformers' Llama 3.1 bands);
  ``yarn`` (theta 10,000, factor 1, betas 32 / 1, original 2,048, mscale 1). Levanter's
  ``YarnRotaryEmbeddings`` is not YaRN as transformers runs it: its correction range uses half the
  head dim, it divides the positions by ``factor`` as well as the slow pairs' frequencies, and it
  multiplies cos / sin by ``sqrt(0.1 mscale ln(factor) + 1)``. With factor 1 every one of those is
  the identity (plain RoPE, read so); a larger factor is RV030, not a YaRN ropelaw would invent;
- ``model.seq_len`` (default 2,048) is the training length and the context;
- ``trainer.mp`` (a jmp policy, ``p=f32,c=bfloat16``): parameters in ``p``, compute in ``c``:
  reported as ``bf16-mixed`` when ``p`` is float32 and ``c`` bfloat16. The angles are float32
  (float32 ``inv_freq`` times the int32 position ids) whatever the policy;
- a scheme is applied from the first step unless the run starts from existing weights
  (``initialize_from_hf``, ``initialize_from_checkpoint_path``: ``main/train_lm.py``);
- ``use_hf_model_config`` with ``initialize_from_hf`` set (without it Levanter ignores the key: the YAML's model
  is read, and the notes say so), ``initialize_from_hf: true``, the eval harness's ``checkpoint_is_hf``, sampling and
  evaluation's ``hf_checkpoint`` and LoRA runs (``main/lora_lm.py``) read the named Hugging Face model
  (:func:`load`, :func:`load_lora`); so do SFT runs (``main/sft.py``, ``main/sft_mixture.py``) with
  ``initialize_from_hf``, at ``max_seq_len`` (:func:`load_sft`); without it they fine-tune the model section.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypeGuard

from ..model import NoRopeFound, NotARopeConfig, Value
from ._framework import Doc, Fields, derived, dialect, head_dim_of, preset, pretraining_with_scheme

NAME = "levanter"
SRC = "stanford-crfm/levanter@9263f81e8b453241332c2c0b2d2001bfb2d2241c"
ROT = f"{SRC} src/levanter/layers/rotary.py"
ROPE_TYPES = {  # type -> (scheme, defaults)
    "default": (None, {"theta": 10000.0, "factor": 1.0}),
    "linear": ("linear", {"theta": 10000.0, "factor": 1.0}),
    "llama3": ("llama3", {"theta": 500000.0, "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                          "original_max_position_embeddings": 8192}),
    "yarn": ("yarn", {"theta": 10000.0, "factor": 1.0, "beta_fast": 32.0, "beta_slow": 1.0,
                      "original_max_position_embeddings": 2048, "mscale": 1.0}),
}
CLASSES = {"default": "DefaultRotaryEmbeddingsConfig", "linear": "DefaultRotaryEmbeddingsConfig",
           "llama3": "Llama3RotaryEmbeddingsConfig", "yarn": "YarnRotaryEmbeddingsConfig"}
# the rotary model types registered at SRC (LmConfig.register_subclass): (class, its file and the line of its
# seq_len default, seq_len, hidden_dim, num_heads, head_dim or None, the Hugging Face checkpoint its
# hf_checkpoint_converter defaults to); subclasses inherit what they do not set (QwenConfig: LlamaConfig's)
ROPE_MODELS = {
    "llama": ("LlamaConfig", "models/llama.py:54", 2048, 4096, 32, None, "NousResearch/Llama-2-7b-hf"),
    "mistral": ("MistralConfig", "models/mistral.py:49", 8192, 4096, 32, None, "mistralai/Mistral-7B-v0.1"),
    "mixtral": ("MixtralConfig", "models/mixtral.py:64", 8192, 4096, 32, None, "mistralai/Mixtral-8x7B-v0.1"),
    "qwen": ("QwenConfig", "models/llama.py:54", 2048, 4096, 32, None, "NousResearch/Llama-2-7b-hf"),
    "qwen3": ("Qwen3Config", "models/llama.py:54", 2048, 4096, 32, None, "NousResearch/Llama-2-7b-hf"),
    "olmo2": ("Olmo2Config", "models/olmo.py:53", 4096, 4096, 32, None, "allenai/OLMo-2-1124-7B"),
    "gemma": ("GemmaConfig", "models/gemma.py:83", 8192, 2048, 8, 256, "google/gemma-2b"),
    "gemma2": ("Gemma2Config", "models/gemma.py:83", 8192, 2048, 8, 256, "google/gemma-2-2b"),
    "gemma3": ("Gemma3Config", "models/gemma.py:83", 8192, 2048, 8, 256, "google/gemma-3-1b-pt"),
}
LEARNED = {"gpt2": "learned position embeddings (Gpt2Config)",
           "gpt2_hyena": "Hyena long convolutions, no attention (Gpt2HyenaConfig)",
           "whisper": "Whisper's sinusoidal / learned position embeddings (WhisperConfig)"}


def detect(data: Mapping) -> bool:
    """A Levanter LM config: ``model.type`` names a registered model and the file is a Levanter run (a ``trainer``
    section) or its model section holds Levanter's keys (an export or conversion config: ``seq_len``,
    ``hidden_dim``, ``rope``); or a LoRA run (:func:`is_lora`), or a sampling / evaluation run of a Hugging Face
    checkpoint (:func:`is_sampling`)."""
    if is_lora(data) or is_sampling(data):
        return True
    m = data.get("model")
    if not isinstance(m, Mapping) or not isinstance(m.get("type"), str):
        return False
    known = m["type"].strip().lower() in ROPE_MODELS or m["type"].strip().lower() in LEARNED
    return (isinstance(data.get("trainer"), Mapping) and (known or "seq_len" in m or "hidden_dim" in m or "rope" in m
                                                         or "use_hf_model_config" in data or "initialize_from_hf"
                                                         in data)) or (known and ("seq_len" in m or "rope" in m))


def is_lora(data: Mapping) -> bool:
    """A ``main/lora_lm.py`` run (``LoraLmConfig``): ``initialize_from_hf`` names the model, no model section, a
    ``trainer``, and one of its own keys (``lora``, ``peft_save_path``, ``max_train_length``)."""
    return (isinstance(data.get("initialize_from_hf"), str) and "model" not in data
            and isinstance(data.get("trainer"), Mapping)
            and any(k in data for k in ("lora", "peft_save_path", "max_train_length", "merged_hf_save_path")))


SFT_KEYS = ("max_seq_len", "model_name_or_path", "supervised_data", "chat_train_urls", "dataset_type",
            "mixture_weights", "messages_field")  # fields of SFTConfig / SFTMixtureConfig that TrainLmConfig lacks
SFT_DEFAULT = {"main/sft.py": "NousResearch/Llama-2-7b-hf", "main/sft_mixture.py": "marin-community/marin-8b-base"}


def is_sft(data: Mapping) -> bool:
    """A ``main/sft.py`` or ``main/sft_mixture.py`` run (``SFTConfig`` line 58, ``SFTMixtureConfig`` line 59): a
    ``trainer``, no ``data`` section (TrainLmConfig's) and one of their own fields (:data:`SFT_KEYS`)."""
    return (isinstance(data.get("trainer"), Mapping) and "data" not in data and not is_lora(data)
            and any(k in data for k in SFT_KEYS))


def load_sft(doc: Doc, o):
    """``main/sft.py`` / ``main/sft_mixture.py`` (9263f81e lines 108-133 of each): with ``initialize_from_hf`` set
    the model is ``HFCheckpointConverter.from_hf(model_name_or_path)``'s ``default_config`` (the Hugging Face
    config of ``initialize_from_hf`` when it is a name, else of ``model_name_or_path``) with ``seq_len =
    max_seq_len`` (default 2,048): the file's model section is not read; without it the run must start from
    ``trainer.initialize_from`` (else Levanter raises "Must specify either --initialize_from_hf or
    --initialize_from") and builds the file's model section: never a pre-training."""
    from dataclasses import replace

    from ..resolve import read_model
    from ._framework import assemble
    from .axolotl import fine_tune_length

    main = "main/sft_mixture.py" if any(k in doc.data for k in ("mixture_weights", "mixture_block_size",
                                                                    "stop_strategy")) else "main/sft.py"
    init = doc.get("initialize_from_hf", expect="any")
    if not loads_weights(init):
        f = read(doc, sft=True)
        if not isinstance(doc.raw("trainer.initialize_from"), str):
            f.notes.append(f"Levanter's SFT ({main}) refuses this file without --trainer.initialize_from (or "
                           "initialize_from_hf): read as a fine-tune of the model section's weights")
        return assemble(doc, f, o)
    name_v = init if not names_default_checkpoint(init) else doc.get("model_name_or_path", expect="str")
    if name_v is None:
        name_v = Value(SFT_DEFAULT[main], init.key, init.line, init.column,
                       f"model_name_or_path: the default of {main} ({SRC})", "str")
    model = resolve_ref(doc, name_v, o)
    cfg = read_model(doc, o, name_v, model, {}, {}, f"levanter SFT {name_v.raw}")
    notes = [*cfg.notes, f"Levanter's SFT ({main}) builds {name_v.raw}'s own config; the model section is not read"]
    seq = doc.get("max_seq_len", expect="int") or Value(2048, init.key, init.line, init.column,
                                                        f"max_seq_len: the default of {main} ({SRC})", "int")
    tune = Value(o.tune, None, 1, 1, "--tune", "int") if o.tune is not None else \
        fine_tune_length(seq, cfg.train_len, notes, "Levanter SFT")
    return replace(cfg, tune_len=tune, dtype=_mp(doc, notes) or cfg.dtype, notes=notes,
                   considered=sorted(doc.considered))


def is_sampling(data: Mapping) -> bool:
    """A ``main/sample_lm.py`` or ``main/eval_lm.py`` run from a Hugging Face checkpoint (``hf_checkpoint``, no
    ``checkpoint_path``: the two exclude each other) with a ``trainer``: it loads that checkpoint's model."""
    return (isinstance(data.get("hf_checkpoint"), str) and data.get("checkpoint_path") is None
            and isinstance(data.get("trainer"), Mapping))


def resolve_ref(doc: Doc, name_v: Value, o):
    """:func:`ropelaw.lint.resolve.resolve` for a Levanter model reference, ``<model_name_or_path>@<revision>``
    (stanford-crfm/levanter@9263f81e ``compat/hf_checkpoints.py`` ``RepoRef.from_string`` splits it at the ``@``
    and loads that revision): the model looked up at that revision (lora/mpt_biomed.yaml names
    ``mosaicml/mpt-7b@68e1a8e0...``), not as a path named ``org/name@rev``."""
    from dataclasses import replace

    from ..resolve import resolve

    if isinstance(name_v.raw, str) and name_v.raw.count("@") == 1:
        name, rev = name_v.raw.split("@")
        return resolve(doc.path, replace(name_v, raw=name), o.model_config, replace(name_v, raw=rev))
    return resolve(doc.path, name_v, o.model_config)


def load_lora(doc: Doc, o):
    """``main/lora_lm.py`` (9263f81e lines 56-77): the model is ``HFCheckpointConverter.from_hf(initialize_from_hf)
    .default_config`` (its Hugging Face config; ``seq_len = max_position_embeddings``), adapters on it; it
    fine-tunes at ``max_train_length`` when set (``Pos.resize``), else at the model's length."""
    from dataclasses import replace

    from ..resolve import read_model
    from .axolotl import fine_tune_length

    name_v = doc.require("initialize_from_hf", expect="str")  # is_lora: a string
    model = resolve_ref(doc, name_v, o)
    cfg = read_model(doc, o, name_v, model, {}, {}, f"levanter LoRA {name_v.raw}")
    notes = list(cfg.notes)
    seq = doc.get("max_train_length", expect="int")
    if o.tune is not None:
        tune = Value(o.tune, None, 1, 1, "--tune", "int")
    elif seq is not None and seq.raw is not None:
        tune = fine_tune_length(seq, cfg.train_len, notes, "Levanter LoRA")
    else:
        tune = None
        notes.append(f"Levanter LoRA fine-tunes {name_v.raw} at its max_position_embeddings (no max_train_length)")
    return replace(cfg, tune_len=tune, dtype=_mp(doc, notes) or cfg.dtype, notes=notes,
                   considered=sorted(doc.considered))


def load(doc: Doc, o):
    """``use_hf_model_config: true`` with ``initialize_from_hf`` set: the model is the Hugging Face config of it
    (``main/train_lm.py``: ``converter.default_config``, ``LlamaConfig.from_hf_config``: rope_theta and
    rope_scaling as Levanter's rope config, ``seq_len = max_position_embeddings``); else ``read``."""
    from dataclasses import replace

    from ..resolve import read_model
    from ._framework import assemble

    if is_lora(doc.data):
        return load_lora(doc, o)
    if is_sft(doc.data):
        return load_sft(doc, o)
    use = doc.get("use_hf_model_config", expect="bool")
    hf_eval = doc.get("checkpoint_is_hf", expect="bool")  # eval_harness.py: the model is the checkpoint's own
    loads = None  # what loads a Hugging Face checkpoint with its own config, when one does
    if hf_eval is not None and hf_eval.raw is True and isinstance(doc.raw("checkpoint_path"), str):
        name_v, loads = doc.get("checkpoint_path", expect="str"), "checkpoint_is_hf: Levanter's eval harness"
    elif is_sampling(doc.data):
        name_v, loads = doc.get("hf_checkpoint", expect="str"), "hf_checkpoint: Levanter's sample_lm / eval_lm"
    elif use is None or use.raw is not True:
        return assemble(doc, read(doc), o)
    else:
        name_v = doc.get("initialize_from_hf", expect="any")
        if not loads_weights(name_v):
            return use_hf_model_config_ignored(doc, use, o)
        if names_default_checkpoint(name_v):
            name_v = doc.get("model_name_or_path", expect="str") or name_v
    if names_default_checkpoint(name_v):
        # initialize_from_hf: true: the checkpoint of the model class's hf_checkpoint_converter()
        name_v = default_checkpoint(doc, name_v)
    if name_v is None or not isinstance(name_v.raw, str):
        raise NoRopeFound(f"{doc.path}: use_hf_model_config without a model name (initialize_from_hf)")
    model = resolve_ref(doc, name_v, o)
    cfg = read_model(doc, o, name_v, model, {}, {}, f"levanter {name_v.raw} (use_hf_model_config)")
    unread = list(cfg.unread)
    g = cfg.layers[0]
    f = g.params.get("factor")
    if g.scheme.raw == "yarn" and f is not None and f.number() not in (None, 1.0):
        unread.append(Value(f.raw, f.key or "rope_scaling.factor", f.line, f.column,
                            "Levanter's YaRN also divides the positions by the factor", "any"))
    notes = list(cfg.notes) + [
        f"{loads} loads {name_v.raw} with its own config (load_pretrained)" if loads is not None else
        f"use_hf_model_config: Levanter trains {name_v.raw} at its max_position_embeddings "
        "(LlamaConfig.from_hf_config: seq_len)"]
    return replace(cfg, dtype=_mp(doc, notes) or cfg.dtype, notes=notes, unread=unread,
                   considered=sorted(doc.considered))


def loads_weights(v: Value | None) -> TypeGuard[Value]:
    """Whether ``initialize_from_hf`` / ``initialize_from_checkpoint_path`` starts the run from existing weights:
    Levanter tests the value's truth (``main/train_lm.py`` line 79, ``if config.initialize_from_hf:``), so true or a
    non-empty name; false, an empty name or the key absent start from scratch. draccus (>= 0.11.5, Levanter's pin;
    ``decode_bool`` and ``decode_union`` of 0.11.6) decodes a ``Union[bool, str]`` as a bool first, which takes only
    true / false and the strings ``"true"`` / ``"false"``: any other string is a name, ``"False"`` included."""
    return v is not None and v.raw is not False and v.raw not in (None, "", "false")


def names_default_checkpoint(v: Value | None) -> bool:
    """``initialize_from_hf: true`` (or the string ``"true"``, draccus's bool): the class's default checkpoint."""
    return v is None or v.raw is True or v.raw == "true"


def use_hf_model_config_ignored(doc: Doc, use: Value, o):
    """``use_hf_model_config: true`` without ``initialize_from_hf``: ``main/train_lm.py`` (9263f81e lines 79-96)
    reads ``use_hf_model_config`` only inside ``if config.initialize_from_hf:``, so the run builds the YAML's own
    model section from scratch; read as such, and said."""
    from dataclasses import replace

    from ._framework import assemble

    cfg = assemble(doc, read(doc), o)
    note = (f"use_hf_model_config: true (line {use.line}) is ignored: Levanter reads it only with initialize_from_hf "
            f"set (main/train_lm.py, {SRC}); the model is this file's model section, trained from scratch")
    return replace(cfg, notes=[*cfg.notes, note])


def default_checkpoint(doc: Doc, at: Value | None) -> Value | None:
    """The Hugging Face checkpoint ``hf_checkpoint_converter()`` of ``model.type`` loads (``initialize_from_hf:
    true``): the ``model.reference_checkpoint`` field of the classes that have one (Llama, Qwen, Qwen3, Mixtral,
    OLMo 2), else the class's default; Mistral and Gemma hard-code theirs. ``at``: the key to point at."""
    kind_v = doc.get("model.type", expect="str")
    kind = str(kind_v.raw).strip().lower() if kind_v is not None else None
    if kind_v is None or kind not in ROPE_MODELS or ROPE_MODELS[kind][6] is None:
        return at
    where = at or kind_v
    if kind not in ("mistral", "gemma", "gemma2", "gemma3"):
        ref = doc.get("model.reference_checkpoint", expect="str")
        if ref is not None and isinstance(ref.raw, str):
            return ref
    return Value(ROPE_MODELS[kind][6], where.key, where.line, where.column, f"the default checkpoint of Levanter's "
                 f"{kind_v.raw} (hf_checkpoint_converter, {SRC})", "str")


def read(doc: Doc, sft: bool = False) -> Fields:
    """The file's model section as Levanter builds it (``sft``: a run of ``main/sft.py``, which fine-tunes)."""
    kind_v = doc.get("model.type", expect="str")
    kind = str(kind_v.raw if kind_v is not None else None).strip().lower()  # none: not a registered type
    if kind in LEARNED:
        raise NotARopeConfig(f"{doc.path}: Levanter model type {kind!r} uses {LEARNED[kind]}, not RoPE")
    if kind not in ROPE_MODELS:
        raise NoRopeFound(f"{doc.path}: Levanter model type {kind!r} is not one of the model types registered at "
                          f"{SRC} (rotary: {', '.join(sorted(ROPE_MODELS))})")
    cls_name, line, seq_default, hidden_default, heads_default, head_default, _ = ROPE_MODELS[kind]
    defaults_at = f"Levanter {cls_name} default ({SRC} src/levanter/{line.split(':')[0]})"
    problems: list = []
    notes: list = []
    unread: list = []
    heads = doc.get("model.num_heads", expect="int") or preset(heads_default, f"num_heads: {defaults_at}", kind_v,
                                                               "int")
    head = doc.get("model.head_dim", expect="int")
    if head is None and head_default is not None:
        head = preset(head_default, f"head_dim: {defaults_at}", kind_v, "int")
    if head is None:
        hidden = doc.get("model.hidden_dim", expect="int") or preset(hidden_default, f"hidden_dim: {defaults_at}",
                                                                     kind_v, "int")
        head = head_dim_of(hidden, heads, problems)
    rope = doc.raw("model.rope")
    typ_v = doc.get("model.rope.type", expect="str")
    typ = str(typ_v.raw).strip().lower() if typ_v is not None else "default"
    at = typ_v or kind_v
    if typ_v is not None and typ not in ROPE_TYPES:  # no model.rope.type: "default"
        unread.append(Value(typ, typ_v.key, typ_v.line, typ_v.column, "not a Levanter rope type", "any"))
        typ = "default"
    scheme_name, defaults = ROPE_TYPES[typ]
    cls = CLASSES[typ]

    def get(key: str, expect: str = "number") -> Value | None:
        v = doc.get(f"model.rope.{key}", expect=expect) if isinstance(rope, Mapping) else None
        if v is None and key in defaults:
            v = preset(defaults[key], f"{key}: {cls} default ({ROT})", at, expect)
        return v
    base = get("theta")
    scheme: Value | None = None
    params: dict[str, Value | None] = {}
    orig = None
    factor = get("factor")
    if typ in ("default", "linear"):
        if factor is not None and factor.number() not in (None, 1.0):
            scheme = derived("linear", f"model.rope {typ}: DefaultRotaryEmbeddings divides inv_freq by factor", at,
                             "str")
            params = {"factor": factor}
    elif typ == "llama3":
        scheme = derived("llama3", f"model.rope type llama3: Llama3RotaryEmbeddings ({ROT})", at, "str")
        params = {"factor": factor, "low_freq_factor": get("low_freq_factor"),
                  "high_freq_factor": get("high_freq_factor"),
                  "original_max_position_embeddings": get("original_max_position_embeddings", "int")}
    else:  # yarn
        for k in ("beta_fast", "beta_slow", "original_max_position_embeddings", "mscale"):
            get(k, "int" if k.startswith("original") else "number")
        if factor is not None and factor.number() == 1.0:
            notes.append("Levanter YaRN with factor 1: the frequencies, positions and temperature are RoPE's")
        elif factor is not None:  # always: YarnRotaryEmbeddingsConfig's default factor is 1
            unread.append(Value(factor.raw, factor.key or f"model.rope.factor ({factor.where})", factor.line,
                                factor.column, "Levanter's YaRN also divides the positions by the factor", "any"))
    seq = doc.get("model.seq_len", expect="int") or preset(seq_default, f"seq_len: {defaults_at}", kind_v, "int")
    loaded = None
    for key in ("initialize_from_hf", "initialize_from_checkpoint_path", "trainer.initialize_from"):
        v = doc.get(key, expect="any")
        if loads_weights(v):
            loaded = v
            break
    if loaded is None and sft:  # main/sft.py line 124: no initialize_from_hf needs trainer.initialize_from
        loaded = derived("trainer.initialize_from", "Levanter's SFT starts from trainer.initialize_from (it "
                         "refuses a run without it or initialize_from_hf)", kind_v, "str")
    from_start = pretraining_with_scheme(scheme, loaded, "Levanter", "no initialize_from_hf or "
                                         "initialize_from_checkpoint_path, so this run is the model's pre-training",
                                         at, notes)
    return Fields(arch=f"levanter {kind}", head_dim=head, d=head, base=base, train_len=seq, target=seq,
                  scheme=scheme, params={k: v for k, v in params.items() if v is not None}, original_max=orig,
                  dtype=_mp(doc, notes), pretrained_with_scheme=from_start, notes=notes, problems=problems,
                  unread=unread)


_JMP = {"f32": "float32", "float32": "float32", "bf16": "bfloat16", "bfloat16": "bfloat16", "f16": "float16",
        "float16": "float16", "half": "float16", "full": "float32"}


def _mp(doc: Doc, notes: list) -> Value | None:
    """``trainer.mp``, a jmp policy string ``p=f32,c=bfloat16`` (params, compute, output)."""
    v = doc.get("trainer.mp", expect="str")
    if v is None or not isinstance(v.raw, str):
        return v
    parts = dict(p.split("=", 1) for p in v.raw.replace(" ", "").split(",") if "=" in p)
    params = _JMP.get(parts.get("p", parts.get("params", "")).lower())
    compute = _JMP.get(parts.get("c", parts.get("compute", "")).lower())
    notes.append("Levanter's rotary angles are float32 (float32 inv_freq times int32 positions) whatever "
                 "trainer.mp says")
    if params == "float32" and compute in ("bfloat16", "float16"):
        name = "bf16-mixed" if compute == "bfloat16" else "16-mixed"
        return Value(name, v.key, v.line, v.column, f"jmp policy {v.raw}: float32 parameters, {compute} compute", "str")
    if params is not None and params == compute:
        return Value({"float32": "fp32", "bfloat16": "bf16", "float16": "fp16"}[params], v.key, v.line, v.column,
                     f"jmp policy {v.raw}", "str")
    return v


DIALECT = dialect(NAME, detect, load=load)
