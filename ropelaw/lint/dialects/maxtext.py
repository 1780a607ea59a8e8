"""MaxText YAML (AI-Hypercomputer/maxtext at the commit of ``ropelaw/data/presets_maxtext.json``): a config file
composed as MaxText composes it (``src/maxtext/configs/pyconfig.py`` ``_initialize_pydantic``):

- the config file and its ``base_config`` chain (``_load_config``: a parent is merged under its
  child; ``base.yml`` is the shipped default table, another parent is read from next to the file, else
  from the enclosing MaxText ``configs`` folder; neither: RV031);
- ``model_name`` (not ``default``; ``-Instruct`` dropped) loads ``configs/models/<model_name>.yml``,
  merged *over* the config file (a key set in both takes the model file's value) and under the overrides
  (a launch script's ``key=value`` words, a distillation trainer's keyword arguments);
  ``override_model_config: true`` keeps the overrides' keys from the model file, never the config file's;
  the model file is read from ``models/`` next to the file or one folder up, ``--model-config PATH``, or
  the shipped model table; none: RV031. A file without ``model_name`` that sets model keys
  (``configs/models/*.yml`` itself) is read as that model over ``base.yml``;
- a distillation config (``student_overrides`` / ``teacher_overrides``) is composed twice, as
  ``train_distill.py`` does (``pyconfig.initialize(argv, **student_overrides)``, the teacher with its
  own): the student's layer groups, then the teacher's, each label saying whose; the teacher is loaded,
  never trained (``teacher_overrides.load_parameters_path``).

Rotary, per ``layers/attentions.py`` ``init_rotary_embedding`` (lines 882-1021) and
``layers/embeddings.py``:

- dims: ``head_dim`` (base.yml 128); MLA (``attention_type: mla``) rotates ``qk_rope_head_dim``;
- base: ``rope_max_timescale`` (the timescale of the slowest pair: ``min_timescale * (max/min)^(2i/d)``
  with ``rope_min_timescale`` 1, so the base; another min_timescale is not RoPE's geometry: RV030);
- ``model_name`` starting ``llama3.1`` or ``rope_type: llama3.1``: ``LLaMARotaryEmbedding``, the Llama
  3.1 bands with factor 8, low 1, high 4, original 8,192 written in its code (lines 644-648),
  when ``rope_use_scale`` (default true);
- ``rope_type: yarn``: ``YarnRotaryEmbedding`` (``rope_factor``, ``original_max_position_embeddings``,
  ``beta_fast`` / ``beta_slow``, ``rope_truncate`` floors / ceils the correction range); it multiplies
  the rotated q/k by ``0.1 ln(rope_factor) + 1`` only with ``rope_attention_scaling: true`` (lines
  1021-1023), else by 1 (DeepSeek's mscale sits in the softmax scale). Its ``freqs_cis`` table
  holds ``max_position_embeddings`` positions (JAX clamps a position past it to the last row);
- otherwise ``RotaryEmbedding``, whose ``rope_linear_scaling_factor`` multiplies the timescales:
  linear interpolation;
- local sliding layers (``gpt_oss``: layers 0, 2, 4 ...; ``gemma2``: one local and one global
  attention per layer; ``gemma3``: five local, one global) attend ``sliding_window_size`` positions
  (``attention_op.py``: ``col > row - window``); Gemma 3's local layers use
  ``local_rope_max_timescale`` and no linear factor.

Decoder blocks whose rotary is not modelled here (MRoPE, ``qwen3_next`` / ``qwen3_5`` partial
rotary, ``gemma4``, ``llama4`` NoPE layers, ``deepseek4`` compressed attention, ``olmo3``, ``envy``)
are RV030, never read as plain RoPE; ``gpt3`` uses no rotary (``models/gpt3.py``).

Lengths: MaxText trains at ``max_target_length`` (base.yml 2,048); the context is YaRN's
``max_position_embeddings`` table, else ``max_target_length``. A scheme MaxText applies is in
force from the first step unless the run loads weights (``load_parameters_path`` /
``load_full_state_path``): ``pretrained_with_scheme``. A run that loads weights with YaRN and a stated
``original_max_position_embeddings`` below ``max_target_length`` is a fine-tune at ``max_target_length``
of a model trained at the original length (``_framework.extension_lengths``).

Precision: the angles are float32 whatever ``dtype`` says (``position / timescale`` with an int32
position and float32 timescales; YaRN's float32 outer product and complex64 ``exp``); the rotated
q/k are cast to ``dtype`` (activations, base.yml bfloat16; parameters in ``weight_dtype``).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any

from ..model import ModelNeeded, NoRopeFound, NotARopeConfig, Overrides, Value
from ..model_config import HOW, given_file
from ..parse import read_document
from ._framework import (Doc, Fields, assemble, derived, dialect, extension_lengths, preset, presets,
                         pretraining_with_scheme)
from ..model import Problem
from ..rules.value_rules import BEYOND_CONTEXT

NAME = "maxtext"
MODEL_KEYS = ("base_emb_dim", "base_num_query_heads", "base_num_kv_heads", "decoder_block")
MODELLED = {"llama2", "mistral", "mixtral", "qwen2", "qwen3", "qwen3_moe", "gemma", "gemma2", "gemma3", "gpt_oss",
            "deepseek", "default", "simple", "simple_mlp"}
LOCAL_PATTERN = {"gpt_oss": "layers 0, 2, 4, ... (GPT_OSS_ATTENTION_PATTERN)",
                 "gemma2": "one local and one global attention in every layer (gemma2.py)",
                 "gemma3": "five local layers, then one global (GEMMA3_ATTENTION_PATTERN)"}


def detect(data: Mapping) -> bool:
    return "base_config" in data or "rope_max_timescale" in data or any(k in data for k in MODEL_KEYS[:2])


class _Layer:
    """One source of values in MaxText's merge: the document (or one of its override mappings, at ``prefix``),
    a preset table, or another file."""

    def __init__(self, name: str, values: Mapping, doc: Doc | None = None, source: str = "",
                 key: Value | None = None, prefix: str = ""):
        self.name, self.values, self.doc, self.source, self.key, self.prefix = name, values, doc, source, key, prefix

    def get(self, key: str, expect: str) -> Value | None:
        if key not in self.values or self.values[key] is None:
            return None
        if self.doc is not None:
            return self.doc.get(self.prefix + key, expect=expect)
        return preset(self.values[key], f"{key} of {self.source}", self.key, expect)


def _model_file(doc: Doc, name_v: Value, o: Overrides) -> _Layer:
    """``configs/models/<name>.yml`` where pyconfig.py looks for it: next to the config (``models/``), one folder
    up (``../models/``: a config in ``configs/post_train/``), then ``--model-config``, then the shipped table."""
    name = str(name_v.raw)
    name = name.replace("-Instruct", "") if "-Instruct" in name else name
    here = os.path.dirname(os.path.abspath(doc.path)) if doc.path not in ("-", "") else os.getcwd()
    path = next((p for p in (os.path.join(d, "models", f"{name}.yml") for d in (here, os.path.dirname(here)))
                 if os.path.isfile(p)), None) or given_file(o.model_config, (f"{name}.yml",))
    if path is not None:
        data, _, _ = read_document(path)
        return _Layer("model", data, source=f"MaxText model file {path}", key=name_v)
    table = presets("maxtext")
    entry = table["presets"].get(name)
    if entry is None:
        raise ModelNeeded(f"{doc.path}: {name_v.key} {name_v.raw!r} names a MaxText model file (configs/models/"
                          f"{name}.yml) that is not next to this file nor in {table['package']}: {HOW}",
                          name_v.line, name_v.column)
    return _Layer("model", entry["values"], source=f"MaxText model {name!r} ({entry['source']})", key=name_v)


def _configs_folder(path: str) -> str | None:
    """MaxText's configs folder holding ``path`` (pyconfig.py looks for a relative ``base_config`` next to the
    config, then in ``MAXTEXT_CONFIGS_DIR``): the nearest enclosing folder named ``configs``."""
    d = os.path.dirname(os.path.abspath(path))
    while True:
        if os.path.basename(d) == "configs":
            return d
        up = os.path.dirname(d)
        if up == d:
            return None
        d = up


def _parent_path(doc: Doc, name: str) -> str:
    """Where ``_load_config`` finds the parent ``name``: absolute, next to the file, then the configs folder."""
    if os.path.isabs(name):
        return name
    here = os.path.join(os.path.dirname(os.path.abspath(doc.path)), name)
    folder = _configs_folder(doc.path)
    if not os.path.isfile(here) and folder is not None and os.path.isfile(os.path.join(folder, name)):
        return os.path.join(folder, name)
    if not os.path.isfile(here) and doc.fmt == "shell" and os.path.isfile(name):
        return name  # a launch script names its config from the working directory
    return here


def _parents(doc: Doc, depth: int = 0) -> list[_Layer]:
    """The base_config chain under the document, lowest first (base.yml: the shipped table)."""
    table = presets("maxtext")
    base = _Layer("base", table["base"]["values"], source=f"MaxText base.yml ({table['base']['source']})")
    name = doc.raw(CONFIG) if doc.fmt == "shell" else doc.raw("base_config")
    if not isinstance(name, str) or os.path.basename(name) == "base.yml" or depth > 8:
        return [base]
    path = _parent_path(doc, name)
    if not os.path.isfile(path) and doc.fmt == "shell":
        at = doc.require(CONFIG, expect="str")
        raise ModelNeeded(f"{doc.path}: the script runs MaxText with the config {name!r}, which is not on this "
                          f"machine (relative to the script or the working directory): lint that file, or run "
                          f"from the directory the script expects", at.line, at.column)
    if not os.path.isfile(path):
        at = doc.require("base_config", expect="str")
        raise ModelNeeded(f"{doc.path}: base_config {name!r} is neither next to this file nor in an enclosing "
                          f"MaxText configs folder (pyconfig.py looks there, then in the installed MaxText's "
                          f"configs folder, which ropelaw does not have): lint the file inside a MaxText checkout",
                          at.line, at.column)
    data, positions, fmt = read_document(path)
    parent = Doc(data, positions, fmt, path)
    return _parents(parent, depth + 1) + [_Layer("parent", data, source=f"MaxText config {path}")]


class _Composed:
    """A config as pyconfig.py composes it (``_initialize_pydantic``): the base_config chain (base.yml
    lowest), the model file of ``model_name``, then the overrides (a launch script's key=value words, or the
    keyword arguments a distillation trainer passes: ``student_overrides`` / ``teacher_overrides``). The file
    itself is part of the chain: the model file wins over it even with ``override_model_config: true``,
    which keeps only the overrides' own keys from the model file."""

    def __init__(self, doc: Doc, o: Overrides, kwargs: Mapping | None = None, prefix: str = ""):
        self.path = doc.path
        shell = doc.fmt == "shell"
        stack = _parents(doc)
        own = _Layer("file", doc.data, doc)
        kw = _Layer("overrides", kwargs, doc, prefix=prefix) if kwargs else None
        over = ([own] if shell else []) + ([kw] if kw else [])  # the overrides, lowest first
        chain = stack + ([] if shell else [own])
        self.name_v = next((v for v in (ly.get("model_name", "str") for ly in reversed(over + [own])) if v), None)
        name = self.name_v.raw if self.name_v is not None else next(
            (ly.values.get("model_name") for ly in reversed(stack) if ly.values.get("model_name")), "default")
        self.notes: list = []
        model = None
        stem = os.path.splitext(os.path.basename(doc.path))[0]
        if self.name_v is None and name == "default" and any(k in doc.data for k in MODEL_KEYS):
            # a model file (configs/models/<name>.yml) itself: MaxText runs it as model_name=<name>
            # (pyconfig.py loads models/<model_name>.yml); the name only decides Llama 3.1's bands here
            name = stem
            self.notes.append(f"model_name {stem!r} from the file name (MaxText loads configs/models/<model_name>.yml)")
        elif isinstance(name, str) and name != "default":
            model = _model_file(doc, self.name_v or preset(name, "model_name of the base_config chain", None, "str"), o)
        self.name = name if isinstance(name, str) else "default"
        self.layers = chain + ([model] if model is not None else []) + over
        overridden = {k for ly in over for k in ly.values}
        if model is not None and self.raw("override_model_config") is True:
            self.layers[len(chain)] = _Layer("model", {k: v for k, v in model.values.items() if k not in overridden},
                                             source=model.source, key=model.key)
        elif model is not None:
            both = sorted(k for k in model.values if k in overridden and any(
                ly.values.get(k) != model.values[k] for ly in over if k in ly.values))
            if both:
                self.notes.append(f"MaxText refuses {', '.join(both)} set both by the model file and by an override "
                                  "unless override_model_config is true (pyconfig.py "
                                  "validate_no_keys_overridden_twice)")

    def get(self, key: str, expect: str = "number") -> Value | None:
        for ly in reversed(self.layers):
            v = ly.get(key, expect)
            if v is not None:
                return v
        return None

    def require(self, key: str, expect: str = "number") -> Value:
        """:meth:`get` of a key the shipped base.yml sets (the lowest layer): ``NoRopeFound`` should it be
        missing all the same."""
        v = self.get(key, expect)
        if v is None:
            raise NoRopeFound(f"{self.path}: no {key} (not even MaxText's base.yml sets it)")
        return v

    def raw(self, key: str) -> Any:
        v = self.get(key, "any")
        return None if v is None else v.raw


def read(doc: Doc, o: Overrides, kwargs: Mapping | None = None, prefix: str = "") -> Fields:
    c = _Composed(doc, o, kwargs, prefix)
    get, raw, name = c.get, c.raw, c.name
    block = str(raw("decoder_block") or "llama2")
    arch = f"maxtext {name if name != 'default' else block}"
    if block == "gpt3":
        raise NotARopeConfig(f"{doc.path}: MaxText decoder_block gpt3 applies no rotary embedding (models/gpt3.py "
                             "Gpt3MultiHeadAttention)")
    problems: list = []
    notes: list = list(c.notes)
    attention = str(raw("attention_type") or "global").lower()
    unread = _unmodelled(c, block, attention)
    head = c.require("head_dim", "int")
    d = c.require("qk_rope_head_dim", "int") if attention == "mla" else head
    base = get("rope_max_timescale")
    min_ts = get("rope_min_timescale")
    if min_ts is not None and min_ts.number() != 1:
        unread.append(Value(min_ts.raw, min_ts.key or min_ts.where, min_ts.line, min_ts.column,
                            "rope_min_timescale other than 1", "any"))
    seq = get("max_target_length", "int")
    scheme, params, orig, target = _scheme(c, seq, notes, problems)
    local_window, local_rope = _local_layers(c, block, base)
    loaded = next((v for v in (get("load_parameters_path", "str"), get("load_full_state_path", "str"))
                   if v is not None and isinstance(v.raw, str) and v.raw), None)
    if prefix == "teacher_overrides." and loaded is None and scheme is not None:
        # train_distill.py refuses a teacher without teacher_overrides.load_parameters_path (unless it reads
        # saved teacher logits): the teacher is an existing model, never trained here
        loaded = derived(True, "the distillation teacher (train_distill.py loads it)", scheme, "bool")
    from_start = pretraining_with_scheme(scheme, loaded, "MaxText",
                                         "no load_parameters_path / load_full_state_path, so this run is the model's "
                                         "pre-training", scheme, notes)
    dtype = get("dtype", "str")
    if dtype is not None:
        wd = raw("weight_dtype")
        notes.append(f"MaxText computes the rotary angles in float32 and casts the rotated q/k to {dtype.raw} "
                     f"(parameters in {wd or 'float32'})")
    for key in _rope_keys(doc):  # every MaxText rotary key of the file was weighed above
        doc.consider(key)
    train, tune = seq, None
    if scheme is not None and scheme.raw == "yarn" and orig is not None and orig.key is not None:
        train, tune = extension_lengths(seq, orig, from_start, notes, "MaxText")  # a fine-tune past YaRN's original
    return Fields(arch=arch, head_dim=head, d=d, base=base, train_len=train, tune=tune, target=target, scheme=scheme,
                  params={k: v for k, v in params.items() if v is not None}, original_max=orig, dtype=dtype,
                  local_window=local_window, local_rope=local_rope, pretrained_with_scheme=from_start,
                  notes=notes, problems=problems, unread=unread)


def _unmodelled(c: _Composed, block: str, attention: str) -> list:
    """RV030 for a decoder block whose rotary path ropelaw does not model (see the module docstring)."""
    if block in MODELLED and c.raw("use_mrope") is not True and attention in ("global", "mla", "local_sliding"):
        return []
    why = c.require("use_mrope", "bool") if c.raw("use_mrope") is True else (
        c.require("attention_type", "str") if attention not in ("global", "mla", "local_sliding")
        else c.require("decoder_block", "str"))
    return [Value(why.raw, why.key or why.where, why.line, why.column,
                  f"MaxText's {block} rotary path is not modelled by ropelaw", "any")]


def _scheme(c: _Composed, seq: Value | None, notes: list, problems: list) -> tuple:
    """``(scheme, params, original length, target)`` as ``Attention.init_rotary_embedding`` picks the rotary."""
    get, name = c.get, c.name
    rope_type = str(c.raw("rope_type") or "default").lower()
    if name.startswith("llama3.1") or rope_type.startswith("llama3.1"):
        use = get("rope_use_scale", "bool")
        if use is not None and use.raw is False:
            notes.append("rope_use_scale false: LLaMARotaryEmbedding without the Llama 3.1 bands")
            return None, {}, None, seq
        at = get("rope_type", "str") if rope_type.startswith("llama3.1") else (c.name_v or use)
        src = "MaxText LLaMARotaryEmbedding._apply_scaling_factor (layers/embeddings.py)"
        why = "rope_type llama3.1" if rope_type.startswith("llama3.1") else f"model_name {name!r}"
        params = {"factor": preset(8.0, f"scale_factor = 8 in {src}", at),
                  "low_freq_factor": preset(1.0, f"low_freq_factor = 1 in {src}", at),
                  "high_freq_factor": preset(4.0, f"high_freq_factor = 4 in {src}", at),
                  "original_max_position_embeddings": preset(8192, f"old_context_len = 8192 in {src}", at, "int")}
        return derived("llama3", f"{why}: {src}", at, "str"), params, None, seq
    if rope_type.startswith("yarn"):
        return _yarn(c, seq, problems)
    lin = get("rope_linear_scaling_factor")
    if lin is not None and lin.number() not in (None, 1.0):
        return derived("linear", f"{lin.where}: RotaryEmbedding multiplies the timescales", lin, "str"), \
            {"factor": lin}, None, seq
    return None, {}, None, seq


def _yarn(c: _Composed, seq: Value | None, problems: list) -> tuple:
    get = c.get
    rt = c.require("rope_type", "str")
    scheme = derived("yarn", f"{rt.where}: MaxText YarnRotaryEmbedding", rt, "str")
    orig = get("original_max_position_embeddings", "int")
    factor = get("rope_factor")
    scaling = get("rope_attention_scaling", "bool")
    s = factor.number() if factor is not None else None
    params = {"factor": factor, "original_max_position_embeddings": orig, "beta_fast": get("beta_fast"),
              "beta_slow": get("beta_slow"), "truncate": get("rope_truncate", "bool")}
    if scaling is None or scaling.raw is not True or s is None or s <= 1:
        params["attention_factor"] = derived(1.0, f"{scaling.where if scaling else 'rope_attention_scaling'} "
                                                  "false: YarnRotaryEmbedding does not scale q/k", scaling, "number")
    # with rope_attention_scaling the factor is 0.1 ln(s) + 1: the registry's YaRN default
    max_pos = get("max_position_embeddings", "int")
    if max_pos is not None and seq is not None and (seq.number() or 0) > (max_pos.number() or 0):
        problems.append(Problem(BEYOND_CONTEXT, seq,
                         f"{seq.where} {seq.raw} exceeds {max_pos.where} {max_pos.raw}: MaxText's YaRN table "
                         f"holds that many positions and JAX clamps later ones to the last row"))
    return scheme, params, orig, max_pos or seq


def _local_layers(c: _Composed, block: str, base: Value | None) -> tuple:
    """``(local window, local rotary)`` of the sliding layers of gpt_oss / gemma2 / gemma3."""
    window = c.get("sliding_window_size", "int")
    if block not in LOCAL_PATTERN or window is None or (window.number() or 0) <= 0:
        return None, None
    local_window = Value(window.raw, window.key, window.line, window.column,
                         f"{window.where}: {LOCAL_PATTERN[block]}", "int")
    if block != "gemma3":
        return local_window, None
    lb = c.get("local_rope_max_timescale")
    return local_window, ((lb if lb is not None and (lb.number() or -1) > 0 else base),
                          derived("default", "gemma3 local layers: no linear factor (attentions.py)", window, "str"),
                          {})


def _rope_keys(doc: Doc) -> list[str]:
    """The file's top-level keys that are MaxText's own (base.yml's) RoPE keys."""
    from ..unread import is_rope_key

    known = set(presets("maxtext")["base"]["values"]) | set(presets("maxtext")["rope_keys"])
    return [str(k) for k in doc.data if is_rope_key(k) and str(k) in known]


CONFIG = "(config)"  # a launch script's config file (its first *.yml argument), a pseudo-key as Megatron's
_TRAIN = re.compile(r"(?:^|[/.])train(?:\.py)?$")
_KV = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)=(.*)$")


def launch_of(path: str, text: str) -> tuple[dict, dict] | None:
    """The text of a shell script that runs MaxText's trainer (``python3 -m maxtext.train CONFIG.yml key=value ...``,
    ``MaxText/train.py``): ``({"base_config": CONFIG, key: value ...}, positions)`` with the values parsed as
    OmegaConf's ``from_cli`` parses them (YAML scalars) and shell variables substituted; None for any other
    script (Megatron's launch scripts are read by the megatron dialect)."""
    import shlex

    import yaml

    from ...errors import UsageError
    from ..shellwords import expand_word
    from .megatron import ASSIGN, MAX_SHELL_ENV, MAX_SHELL_VALUE, logical_lines

    env: dict[str, str] = {}
    env_bytes = 0
    lines = text.splitlines()
    try:
        commands = logical_lines(text)  # a quote never closed: UsageError, as bash fails there
    except UsageError as exc:
        raise UsageError(f"{path}: {exc}") from None
    for first, _last, line in commands:
        try:
            words = shlex.split(line, comments=True, posix=True)
        except ValueError:
            continue
        if len(words) == 1 or (len(words) == 2 and words[0] == "export"):
            m = ASSIGN.match(words[-1])
            if m:
                got = expand_word(m.group(2), env)
                if got is not None and m.group(1) not in env:
                    env_bytes += len(got)
                    if len(got) > MAX_SHELL_VALUE or env_bytes > MAX_SHELL_ENV:  # as megatron.parse_shell
                        raise UsageError(f"{path}: line {first:,}: shell variables expand to more than "
                                         f"{MAX_SHELL_VALUE if len(got) > MAX_SHELL_VALUE else MAX_SHELL_ENV:,} "
                                         "characters (a variable doubled again and again?); refused")
                    env[m.group(1)] = got
                continue
        words = [expand_word(w, env) or w for w in words]
        at = next((i for i, w in enumerate(words) if _TRAIN.search(w)), None)
        if at is None:
            continue
        rest = words[at + 1:]
        cfg = next((i for i, w in enumerate(rest) if w.endswith((".yml", ".yaml"))), None)
        if cfg is None:
            continue
        data: dict = {CONFIG: rest[cfg]}
        positions = {(CONFIG,): _where(lines, first, rest[cfg].rsplit("/", 1)[-1])}
        for w in rest[cfg + 1:]:
            m = _KV.match(w)
            if not m:
                continue
            key, val = m.group(1), expand_word(m.group(2), env)
            try:
                data[key] = yaml.safe_load(val) if val is not None else m.group(2)
            except yaml.YAMLError:
                data[key] = val
            positions[(key,)] = _where(lines, first, f"{key}=")
        return data, positions
    return None


def _where(lines: list[str], first: int, word: str) -> tuple[int, int]:
    for n in range(first - 1, len(lines)):
        col = lines[n].find(word)
        if col >= 0:
            return n + 1, col + 1
    return first, 1


def load(doc: Doc, o: Overrides):
    """A config, or a distillation config's student and teacher (``student_overrides`` /
    ``teacher_overrides``: see :func:`distillation`)."""
    if isinstance(doc.raw("student_overrides"), Mapping) or isinstance(doc.raw("teacher_overrides"), Mapping):
        return distillation(doc, o)
    return assemble(doc, read(doc, o), o)


def distillation(doc: Doc, o: Overrides):
    """MaxText's distillation trainer (``trainers/post_train/distillation/train_distill.py``) composes the file
    twice: the student as ``pyconfig.initialize(argv, **student_overrides)``, the teacher as
    ``pyconfig.initialize([argv[0], argv[1]], **teacher_overrides)``; both read the same batches
    (``max_target_length`` of the file). One config with the student's layer groups, then the teacher's, each
    label saying whose."""
    from dataclasses import replace

    roles = {}
    for role in ("student", "teacher"):
        kw = doc.raw(f"{role}_overrides")
        roles[role] = assemble(doc, read(doc, o, kw if isinstance(kw, Mapping) else None, f"{role}_overrides."), o)
    s, t = roles["student"], roles["teacher"]
    layers = [replace(g, label=f"{role} {g.label}") for role, cfg in roles.items() for g in cfg.layers]
    notes = s.notes + [f"teacher: {n}" for n in t.notes if n not in s.notes]
    return replace(s, arch=f"maxtext distillation: student {s.arch.removeprefix('maxtext ')}, teacher "
                           f"{t.arch.removeprefix('maxtext ')}", layers=layers, notes=notes,
                   problems=s.problems + [p for p in t.problems if p not in s.problems],
                   unread=s.unread + [u for u in t.unread if u not in s.unread],
                   inputs=s.inputs, considered=sorted(doc.considered))


DIALECT = dialect(NAME, detect, load=load)
