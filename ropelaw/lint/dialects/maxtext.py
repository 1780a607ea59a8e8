"""MaxText YAML (AI-Hypercomputer/maxtext at the commit of ``presets/maxtext.json``): a config file
composed as MaxText composes it (``src/maxtext/configs/pyconfig.py`` ``_initialize_pydantic``):

- the config file and its ``base_config`` chain (``_load_config``: a parent is merged under its
  child; ``base.yml`` is the shipped default table, another parent is read from next to the file);
- ``model_name`` (not ``default``; ``-Instruct`` dropped) loads ``configs/models/<model_name>.yml``,
  merged *over* the config file (a key set in both takes the model file's value; ``override_model_config:
  true`` keeps the file's): a local ``models/<name>.yml`` next to the file, ``--model-config PATH``, or
  the shipped model table; none: RV031. A file without ``model_name`` that sets model keys
  (``configs/models/*.yml`` itself) is read as that model over ``base.yml``.

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
``load_full_state_path``): ``pretrained_with_scheme``.

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
from ._framework import Doc, Fields, assemble, derived, dialect, preset, presets, pretraining_with_scheme

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
    """One source of values in MaxText's merge: the document, a preset table, or another file."""

    def __init__(self, name: str, values: Mapping, doc: Doc | None = None, source: str = "",
                 key: Value | None = None):
        self.name, self.values, self.doc, self.source, self.key = name, values, doc, source, key

    def get(self, key: str, expect: str) -> Value | None:
        if key not in self.values or self.values[key] is None:
            return None
        if self.doc is not None:
            return self.doc.get(key, expect=expect)
        return preset(self.values[key], f"{key} of {self.source}", self.key, expect)


def _model_file(doc: Doc, name_v: Value, o: Overrides) -> _Layer:
    name = str(name_v.raw)
    name = name.replace("-Instruct", "") if "-Instruct" in name else name
    here = os.path.dirname(os.path.abspath(doc.path)) if doc.path not in ("-", "") else os.getcwd()
    local = os.path.join(here, "models", f"{name}.yml")
    path = local if os.path.isfile(local) else given_file(o.model_config, (f"{name}.yml",))
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


def _parents(doc: Doc, depth: int = 0) -> list[_Layer]:
    """The base_config chain under the document, lowest first (base.yml: the shipped table)."""
    table = presets("maxtext")
    base = _Layer("base", table["base"]["values"], source=f"MaxText base.yml ({table['base']['source']})")
    name = doc.raw(CONFIG) if doc.fmt == "shell" else doc.raw("base_config")
    if not isinstance(name, str) or os.path.basename(name) == "base.yml" or depth > 8:
        return [base]
    here = os.path.dirname(os.path.abspath(doc.path))
    path = name if os.path.isabs(name) else os.path.join(here, name)
    if not os.path.isfile(path) and doc.fmt == "shell" and os.path.isfile(name):
        path = name  # a launch script names its config from the working directory
    if not os.path.isfile(path) and doc.fmt == "shell":
        at = doc.get(CONFIG, expect="str")
        raise ModelNeeded(f"{doc.path}: the script runs MaxText with the config {name!r}, which is not on this "
                          f"machine (relative to the script or the working directory): lint that file, or run "
                          f"from the directory the script expects", at.line, at.column)
    if not os.path.isfile(path):
        raise NoRopeFound(f"{doc.path}: {'the config' if doc.fmt == 'shell' else 'base_config'} {name!r} is not "
                          f"next to this file (MaxText looks there, "
                             "then in its configs folder)")
    data, positions, fmt = read_document(path)
    parent = Doc(data, positions, fmt, path)
    return _parents(parent, depth + 1) + [_Layer("parent", data, source=f"MaxText config {path}")]


def read(doc: Doc, o: Overrides) -> Fields:
    stack = _parents(doc)
    name_v = doc.get("model_name", expect="str")
    own = _Layer("file", doc.data, doc)
    model = None
    composed_name = name_v.raw if name_v is not None else next(
        (ly.values.get("model_name") for ly in reversed(stack) if ly.values.get("model_name")), "default")
    stem = os.path.splitext(os.path.basename(doc.path))[0]
    if name_v is None and composed_name == "default" and any(k in doc.data for k in MODEL_KEYS):
        # a model file (configs/models/<name>.yml) itself: MaxText runs it as model_name=<name>
        # (pyconfig.py loads models/<model_name>.yml); the name only decides Llama 3.1's bands here
        composed_name = stem
        notes_name = f"model_name {stem!r} from the file name (MaxText loads configs/models/<model_name>.yml)"
    else:
        notes_name = None
        if isinstance(composed_name, str) and composed_name != "default":
            model = _model_file(doc, name_v or preset(composed_name, "model_name of the base_config chain", None,
                                                      "str"), o)
    if model is not None and doc.raw("override_model_config") is True:
        model = _Layer("model", {k: v for k, v in model.values.items() if k not in doc.data}, source=model.source,
                       key=model.key)
    mine = [model] if model is not None else []
    # a launch script's key=value words are MaxText's command-line overrides, merged last (over the model file);
    # a YAML file is the config file, under it
    layers = stack + (mine + [own] if doc.fmt == "shell" else [own] + mine)

    def get(key: str, expect: str = "number") -> Value | None:
        for ly in reversed(layers):
            v = ly.get(key, expect)
            if v is not None:
                return v
        return None

    def raw(key: str) -> Any:
        v = get(key, "any")
        return None if v is None else v.raw

    block = str(raw("decoder_block") or "llama2")
    name = composed_name if isinstance(composed_name, str) else "default"
    arch = f"maxtext {name if name != 'default' else block}"
    if block == "gpt3":
        raise NotARopeConfig(f"{doc.path}: MaxText decoder_block gpt3 applies no rotary embedding (models/gpt3.py "
                             "Gpt3MultiHeadAttention)")
    problems: list = []
    notes: list = [notes_name] if notes_name else []
    if doc.fmt == "shell" and model is not None and doc.raw("override_model_config") is not True:
        both = sorted(k for k in model.values if k in doc.data and model.values[k] != doc.data[k])
        if both:
            notes.append(f"MaxText refuses {', '.join(both)} set both by the model file and on the command line "
                         "unless override_model_config=true (pyconfig.py validate_no_keys_overridden_twice)")
    unread: list = []
    attention = str(raw("attention_type") or "global").lower()
    rope_type = str(raw("rope_type") or "default").lower()
    if block not in MODELLED or raw("use_mrope") is True or attention not in ("global", "mla", "local_sliding"):
        why = get("use_mrope", "bool") if raw("use_mrope") is True else (
            get("attention_type", "str") if attention not in ("global", "mla", "local_sliding")
            else get("decoder_block", "str"))
        unread.append(Value(why.raw, why.key or why.where, why.line, why.column,
                            f"MaxText's {block} rotary path is not modelled by ropelaw", "any"))
    head = get("head_dim", "int")
    d = get("qk_rope_head_dim", "int") if attention == "mla" else head
    base = get("rope_max_timescale")
    min_ts = get("rope_min_timescale")
    if min_ts is not None and min_ts.number() != 1:
        unread.append(Value(min_ts.raw, min_ts.key or min_ts.where, min_ts.line, min_ts.column,
                            "rope_min_timescale other than 1", "any"))
    seq = get("max_target_length", "int")
    target, scheme, params, orig = seq, None, {}, None
    llama31 = name.startswith("llama3.1") or rope_type.startswith("llama3.1")
    if llama31:
        use = get("rope_use_scale", "bool")
        if use is None or use.raw is not False:
            at = get("rope_type", "str") if rope_type.startswith("llama3.1") else (name_v or use)
            src = "MaxText LLaMARotaryEmbedding._apply_scaling_factor (layers/embeddings.py)"
            why = "rope_type llama3.1" if rope_type.startswith("llama3.1") else f"model_name {name!r}"
            scheme = derived("llama3", f"{why}: {src}", at, "str")
            params = {"factor": preset(8.0, f"scale_factor = 8 in {src}", at),
                      "low_freq_factor": preset(1.0, f"low_freq_factor = 1 in {src}", at),
                      "high_freq_factor": preset(4.0, f"high_freq_factor = 4 in {src}", at),
                      "original_max_position_embeddings": preset(8192, f"old_context_len = 8192 in {src}", at, "int")}
        else:
            notes.append("rope_use_scale false: LLaMARotaryEmbedding without the Llama 3.1 bands")
    elif rope_type.startswith("yarn"):
        rt = get("rope_type", "str")
        scheme = derived("yarn", f"{rt.where}: MaxText YarnRotaryEmbedding", rt, "str")
        orig = get("original_max_position_embeddings", "int")
        factor = get("rope_factor")
        scaling = get("rope_attention_scaling", "bool")
        s = factor.number() if factor is not None else None
        att = 1.0 if (scaling is None or scaling.raw is not True or s is None or s <= 1) else None
        params = {"factor": factor, "original_max_position_embeddings": orig, "beta_fast": get("beta_fast"),
                  "beta_slow": get("beta_slow"),
                  "truncate": get("rope_truncate", "bool")}
        if att is not None:
            params["attention_factor"] = derived(att, f"{scaling.where if scaling else 'rope_attention_scaling'} "
                                                      "false: YarnRotaryEmbedding does not scale q/k", scaling, "number")
        # with rope_attention_scaling the factor is 0.1 ln(s) + 1: the registry's YaRN default
        max_pos = get("max_position_embeddings", "int")
        target = max_pos or seq
        if max_pos is not None and seq is not None and (seq.number() or 0) > (max_pos.number() or 0):
            problems.append(("training-length-beyond-context", seq,
                             f"{seq.where} {seq.raw} exceeds {max_pos.where} {max_pos.raw}: MaxText's YaRN table "
                             f"holds that many positions and JAX clamps later ones to the last row"))
    else:
        lin = get("rope_linear_scaling_factor")
        if lin is not None and lin.number() not in (None, 1.0):
            scheme = derived("linear", f"{lin.where}: RotaryEmbedding multiplies the timescales", lin, "str")
            params = {"factor": lin}
    window = get("sliding_window_size", "int")
    local_window, local_rope = None, None
    if block in LOCAL_PATTERN and window is not None and (window.number() or 0) > 0:
        local_window = Value(window.raw, window.key, window.line, window.column,
                             f"{window.where}: {LOCAL_PATTERN[block]}", "int")
        if block == "gemma3":
            lb = get("local_rope_max_timescale")
            local_rope = ((lb if lb is not None and (lb.number() or -1) > 0 else base),
                          derived("default", "gemma3 local layers: no linear factor (attentions.py)", window, "str"),
                          {})
    loaded = next((v for v in (get("load_parameters_path", "str"), get("load_full_state_path", "str"))
                   if v is not None and isinstance(v.raw, str) and v.raw), None)
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
    return Fields(arch=arch, head_dim=head, d=d, base=base, train_len=seq, target=target, scheme=scheme,
                  params={k: v for k, v in params.items() if v is not None}, original_max=orig, dtype=dtype,
                  local_window=local_window, local_rope=local_rope, pretrained_with_scheme=from_start,
                  notes=notes, problems=problems, unread=unread)


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
    from .megatron import _ASSIGN, MAX_SHELL_ENV, MAX_SHELL_VALUE, _logical_lines, _subst

    env: dict[str, str] = {}
    env_bytes = 0
    lines = text.splitlines()
    try:
        commands = _logical_lines(text)  # a quote never closed: UsageError, as bash fails there
    except UsageError as exc:
        raise UsageError(f"{path}: {exc}") from None
    for first, _last, line in commands:
        try:
            words = shlex.split(line, comments=True, posix=True)
        except ValueError:
            continue
        if len(words) == 1 or (len(words) == 2 and words[0] == "export"):
            m = _ASSIGN.match(words[-1])
            if m:
                got = _subst(m.group(2), env)
                if got is not None and m.group(1) not in env:
                    env_bytes += len(got)
                    if len(got) > MAX_SHELL_VALUE or env_bytes > MAX_SHELL_ENV:  # as megatron.parse_shell
                        raise UsageError(f"{path}: line {first:,}: shell variables expand to more than "
                                         f"{MAX_SHELL_VALUE if len(got) > MAX_SHELL_VALUE else MAX_SHELL_ENV:,} "
                                         "characters (a variable doubled again and again?); refused")
                    env[m.group(1)] = got
                continue
        words = [_subst(w, env) or w for w in words]
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
            key, val = m.group(1), _subst(m.group(2), env)
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
    return assemble(doc, read(doc, o), o)


DIALECT = dialect(NAME, detect, load=load)
