"""Config files -> :class:`~ropelaw.spec.RopeSpec`, remembering where every value came from.

The mapping layer is a small engine (:func:`load_mapping`) driven by one dialect per config
family in ``ropelaw/lint/dialects/`` (how to add one: that package's docstring): the dialect
whose ``detect`` scores the document highest reads it. The training frameworks (torchtitan,
torchtune, axolotl, litgpt, nanotron, Megatron-LM, NeMo, OLMo, OLMo-core, GPT-NeoX) read their documents
with a ``load`` of their own; the ``hf`` dialect is a table read by the engine below: Hugging
Face ``config.json`` files (``rope_scaling`` and the newer ``rope_parameters``, flat or per layer
type such as Gemma 3's ``{"full_attention": {...}, "sliding_attention": {...}}``; multimodal
``text_config`` / ``language_config`` / ``llm_config`` sections; ``mrope``; Llama 4; Qwen v1) and
YAML or TOML that no framework claims but that uses Megatron-LM / NeMo / GPT-NeoX key names. OmegaConf interpolations \
(``${.encoder_seq_length}``,
``${model.seq_length}``) are resolved when a value is read; one that cannot be resolved is
finding RV018 at its key. Nothing else derives the rotary dimension or the base.

Semantics are the runtime's: rotary dims, the scheme's parameters, its original length and
switch point are what transformers computes (the installed one: 4.x -> 4.57.1, 5.x -> 5.23.0;
without one, 5.23.0), see ``dialects/hf.py:runtime_params``; ``LoadedConfig.semantics`` names
the version and the lint JSON reports it. A key transformers ignores is finding RV019 (info).

Normalisation (the key each value came from is kept, with its line and column):

- rotary dims ``d``: ``qk_rope_head_dim`` (DeepSeek MLA: only that part rotates) or
  ``rotary_dim``; else ``head_dim`` (or ``kv_channels``, or ``hidden_size /
  num_attention_heads``) times ``partial_rotary_factor`` / ``rotary_pct`` /
  ``rotary_percent``, truncated as transformers does: ``int(head_dim * factor)`` in float64
  (phi-2: 80 x 0.4 = 32; 80 x 0.6 = 48, where the exact product would give 47). ChatGLM
  rotates half of ``kv_channels`` (its ``RotaryEmbedding(rotary_dim // 2)``).
- base: ``rope_theta`` / ``rotary_emb_base`` / ``rotary_base`` (or inside
  ``rope_parameters``); ChatGLM ``10000 * rope_ratio``; absent, the default of the
  ``model_type``'s transformers config class (``ropelaw/data/hf_defaults.json``, generated from
  transformers 4.57.1 and 5.23.0, e.g. 10000 for ``llama``), and the value says so.
- scheme: ``rope_type`` or the older ``type`` (``su`` is LongRoPE's old name; ``mrope`` is
  plain RoPE over sections, as transformers runs it).
- layer groups: for a ``model_type`` transformers has, what each layer runs comes from the table
  measured on transformers (``ropelaw/lint/layers/``: its rotary, NoPE, its window or chunk, from
  ``layer_types`` / ``no_rope_layers`` or the config class's default rule); layers alike are one
  :class:`RopeLayer` group with their indices; what the table cannot tell is RV024, and a key that
  changes the rotary but is not read is RV025. Other model types (remote code, training configs):
  Gemma-2/3-style ``sliding_window`` with ``rope_local_base_freq``, ``layer_types`` lists,
  Mistral's all-layer window.
- dtype: ``torch_dtype`` / ``dtype`` / ``params_dtype`` / ``precision`` / ``fp16`` / ``bf16``.

Lengths. ``max_position_embeddings`` is the *advertised* context, not always the length the
model was trained at. Derived, in order (each value records which rule produced it):

- ``train_len``: ``--train``; a training config's ``seq_length``; with a scaling scheme,
  the original length (scheme dict or top level, Phi-3: whichever the runtime reads); linear scaling
  without it: ``max_position_embeddings / factor`` (position interpolation maps the
  advertised context onto the trained one); otherwise ``max_position_embeddings``.
- ``target``: ``--target``, else ``max_position_embeddings``, else ``train_len``.
- ``tune_len``: ``--tune`` only (a config does not say how long a context-extension run was).

Bad files raise :class:`~ropelaw.errors.UsageError` (one line); bad *values* do not: they
are kept as found and the rules in ``ropelaw/lint/rules/values.py`` report them at their key.
"""

from __future__ import annotations

from typing import Any
from collections.abc import Mapping

from ..errors import UsageError
from ..numfmt import count as fmt_count, short as fmt_short  # noqa: F401  (re-exported)
# the shared types (values with provenance, layer groups, the loaded config) live in model.py, the
# document's sections in sections.py, the table engine in table.py; re-exported here
from .model import (LoadedConfig, ModelNeeded, NoRopeFound, NotARopeConfig, OptionError, Overrides,  # noqa: F401
                    RopeLayer, UnreadConfig, Value, NUMERIC_STR, canonical_scheme, show_value)
# the parse layer (files -> mapping + positions, with limits) lives in parse.py; re-exported here
from .parse import (CONFIG_SUFFIXES, MAX_BYTES, Path, Positions, config_files, json_positions,  # noqa: F401
                    format_of, parse_text, read_document, read_text, toml_positions,
                    yaml_positions)
from .sections import INTERP, cli_value  # noqa: F401  (INTERP re-exported)
from .table import ROPE_DEFAULT_BASE, load_table  # noqa: F401

__all__ = [
    "Value", "RopeLayer", "LoadedConfig", "NotARopeConfig", "NoRopeFound", "UnreadConfig", "ModelNeeded", "OptionError",
    "CONFIG_SUFFIXES", "canonical_scheme",
    "read_document", "load_config", "load_text", "read_source_text", "load_mapping", "config_files", "fmt_count",
    "fmt_short", "show_value",
    "json_positions", "yaml_positions", "toml_positions",
]


SHELL_SUFFIXES = (".sh", ".bash")  # launch scripts: read for Megatron flags when named
GGUF_SUFFIXES = (".gguf",)  # llama.cpp model files: header, metadata and RoPE tensors (lint/gguf.py)
PYTHON_SUFFIXES = (".py",)  # vLLM LLM(...) / SGLang Engine(...) calls, read with ast when named


def load_config(path: str, *, train: int | None = None, target: int | None = None,
                tune: int | None = None, head_dim: int | None = None, base: float | None = None,
                dtype: str | None = None, model_config: str | None = None) -> LoadedConfig:
    """Read ``path`` and normalise it (``UsageError`` for a file that cannot be used).

    The dialect whose ``detect`` scores the document highest reads it (:func:`load_mapping`);
    a launch script (``*.sh``) is parsed for its flags and read by the ``megatron`` dialect.
    --train / --target / --tune override; --head-dim / --base / --dtype fill in values the
    config (and its framework) lack; ``model_config`` (--model-config) is the config of the model a
    fine-tuning config names elsewhere (``base_model``, ``model_name_or_path``, ``checkpoint_dir``).
    """
    kw = dict(train=train, target=target, tune=tune, head_dim=head_dim, base=base, dtype=dtype,
              model_config=model_config)
    if path.lower().endswith(GGUF_SUFFIXES):
        from .dialects.gguf import load_file

        return load_file(path, Overrides(train=train, target=target, tune=tune, head_dim=head_dim, base=base,
                                         dtype=dtype, model_config=model_config))
    from .dialects.ollama import is_modelfile

    if is_modelfile(path):
        from .dialects.megatron import read_script
        from .dialects.ollama import load_modelfile

        return load_modelfile(path, read_script(path), Overrides(train=train, target=target, tune=tune,
                                                                  head_dim=head_dim, base=base, dtype=dtype,
                                                                  model_config=model_config))
    return load_text(path, read_source_text(path), **kw)


def read_source_text(path: str) -> str:
    """The text :func:`load_text` reads for ``path`` (a config file or a launch script), read once."""
    if path.lower().endswith(SHELL_SUFFIXES):
        from .dialects.megatron import read_script

        return read_script(path)
    if path.lower().endswith(PYTHON_SUFFIXES):
        return read_text(path, "Python file")
    return read_text(path)


def load_text(path: str, text: str, **kw: Any) -> LoadedConfig:
    """:func:`load_config` of ``text``, the file's content already read (``read_source_text``): a
    command that also edits the file (``plan --apply``) reads it once and edits what it planned on."""
    if path.lower().endswith(SHELL_SUFFIXES):
        from .dialects.llamacpp_launch import load_launch
        from .dialects.maxtext import launch_of
        from .dialects.megatron import shell_flags

        served = load_launch(path, text, Overrides(**kw))  # llama-server / llama-cli serving a GGUF
        if served is not None:
            return served
        served = serving().load_text(path, text, "shell", Overrides(**kw))  # vLLM / SGLang
        if served is not None:
            return served

        launch = launch_of(path, text)  # MaxText's trainer with key=value overrides
        if launch is not None:
            return load_mapping(launch[0], launch[1], path=path, fmt="shell", dialect="maxtext", **kw)
        rl = read_rl_launch(path, text)  # veRL's Hydra overrides, OpenRLHF's flags
        if rl is not None:
            return load_mapping(rl[1], rl[2], path=path, fmt="shell", dialect=rl[0], **kw)
        flags, flag_positions = shell_flags(path, text)
        return load_mapping(flags, flag_positions, path=path, fmt="shell", dialect="megatron", **kw)
    if path.lower().endswith(PYTHON_SUFFIXES):
        served = serving().load_text(path, text, "python", Overrides(**kw))
        if served is None:
            raise UsageError(f"{path}: no vLLM LLM(...) or SGLang Engine(...) call (the Python files lint reads)")
        return served
    fmt = format_of(path)
    data, positions = parse_text(text, fmt, path)
    if fmt == "yaml":
        served = serving().load_text(path, text, fmt, Overrides(**kw), data, positions)  # docker-compose / Kubernetes
        if served is not None:
            return served
    return load_mapping(data, positions, path=path, fmt=fmt, **kw)


def serving() -> Any:
    """``dialects/serving.py`` (vLLM / SGLang launches), imported by name as every dialect is (``dialects._modules``):
    it reads the served model through ``resolve``, which imports this engine."""
    import importlib

    return importlib.import_module(".dialects.serving", __package__)


def read_rl_launch(path: str, text: str) -> tuple[str, dict, dict] | None:
    """``(dialect, data, positions)`` of a launch script (``text``) that runs veRL or OpenRLHF, else None."""
    from .dialects import script_readers

    for name, reader in script_readers():
        try:
            got = reader(text)
        except UsageError as exc:
            raise UsageError(f"{path}: {exc}") from None
        if got is not None:
            return (name,) + got
    return None


def load_mapping(data: Mapping, positions: Positions | None = None, *, path: str = "-", fmt: str = "json",
                 train: int | None = None, target: int | None = None, tune: int | None = None,
                 head_dim: int | None = None, base: float | None = None, dtype: str | None = None,
                 dialect: Any = None, model_config: str | None = None, semantics: str | None = None) -> LoadedConfig:
    """Normalise an already-parsed config mapping (see the module docstring for the rules).

    ``dialect``: a :class:`~ropelaw.lint.dialects.Dialect`, or its name; default: the dialect
    whose ``detect`` scores ``data`` highest (:func:`ropelaw.lint.dialects.pick`). ``semantics``: the
    transformers version a Hugging Face config is read as (default: the installed one). A dialect with
    a ``load`` of its own (the training frameworks) reads the document; any other is read by the
    table engine (:func:`load_table`), and --head-dim / --base / --dtype fill what it lacks.

    Never a misread (``unread.py``): a RoPE-looking key that the reader neither used nor judged is
    RV030 at that key, and no base is invented while one is unread; a dialect that finds nothing it
    can read (:class:`NoRopeFound`) in a file with RoPE-looking keys is RV030 for the file, not a skip.
    """
    from . import dialects
    from .unread import check_read, unread_file

    if not isinstance(data, Mapping):
        from .parse import not_a_config

        raise not_a_config(path, data)
    check_model_types(data, path)
    dia = dialects.get(dialect) if isinstance(dialect, str) else (dialect or dialects.pick(data))
    o = Overrides(train=train, target=target, tune=tune, head_dim=head_dim, base=base, dtype=dtype,
                  model_config=model_config)
    try:
        if dia.load is not None:
            cfg = dia.load(data, positions, path, fmt, o)
        else:
            cfg = _fill_in(load_table(data, positions, path=path, fmt=fmt, train=train, target=target, tune=tune,
                                       dia=dia, semantics=semantics), o)
    except NoRopeFound as exc:
        raise unread_file(data, positions or {}, path, str(exc)) from None
    return check_read(data, positions or {}, cfg)


def _fill_in(cfg: LoadedConfig, o: Overrides) -> LoadedConfig:
    """--head-dim / --base / --dtype for a config read by a table dialect (Hugging Face): used only
    where that config lacks the value (no head dim derivable, no base key and no architecture
    default, no dtype)."""
    from dataclasses import replace

    if o.head_dim is None and o.base is None and o.dtype is None:
        return cfg
    layers = []
    head = cfg.head_dim
    given = cli_value(o.head_dim, "--head-dim", "int")  # None: no --head-dim
    if given is not None and (head is None or head.raw is None):
        head = given
    for g in cfg.layers:
        d = head if (g.d.raw is None and head is not None and head.raw is not None) else g.d
        base = g.base
        if o.base is not None and base.key is None and base.note.startswith("no base key"):
            base = cli_value(float(o.base), "--base", "number")
        layers.append(replace(g, d=d, base=base))
    dtype = cfg.dtype if cfg.dtype is not None else cli_value(o.dtype, "--dtype", "str")
    notes = [n for n in cfg.notes if not (o.base is not None and n.startswith("base ") and "no base key" in n)]
    return replace(cfg, head_dim=head, layers=layers, dtype=dtype, notes=notes)


def check_model_types(data: Mapping, path: str) -> None:
    """``UsageError`` for a ``model_type`` (at the top level or in a section: ``text_config``) longer than
    :data:`~ropelaw.limits.MAX_MODEL_TYPE`: it is no model type, and every later step would copy and match it."""
    from ..limits import MAX_MODEL_TYPE

    for node in (data, *(v for v in data.values() if isinstance(v, Mapping))):
        mt = node.get("model_type")
        if isinstance(mt, str) and len(mt) > MAX_MODEL_TYPE:
            raise UsageError(f"{path}: malformed config: model_type is {len(mt):,} characters long; a model type is "
                             f"an identifier of at most {MAX_MODEL_TYPE} characters")
