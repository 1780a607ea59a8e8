"""llm-foundry training / eval YAML (llm-foundry==0.22.0): ``model`` (or each entry of an eval file's
``models``), OmegaConf ``${variables.x}`` references resolved within the file.

MPT (``name: mpt_causal_lm``), ``models/mpt/configuration_mpt.py`` and ``modeling_mpt.py``:

- positions: ``attn_config.rope`` (default false: ``utils/config_defaults.py``); else ALiBi
  (``attn_config.alibi``) or ``learned_pos_emb`` (default true): not RoPE;
- ``gen_rotary_embedding`` (``modeling_mpt.py`` 136-172): ``rope_impl`` ``dail`` (default) builds
  flash-attn's ``RotaryEmbedding(dim=d_model // n_heads, base=rope_theta)``, plain RoPE for
  ``rope_dail_config.type: original`` (``xpos`` scales the keys: not modelled, RV030); ``hf``
  builds transformers' ``LlamaRotaryEmbedding`` from ``rope_hf_config`` (``type`` ``no_scaling`` ->
  ``default``, ``linear``, ``dynamic``, ``llama3``, with its keys) and ``max_position_embeddings =
  max_seq_len``, over ``head_dim`` when set, else ``d_model // n_heads``;
- ``rope_theta`` default 10,000; ``max_seq_len`` (default 2,048) is the training length and the
  context; ``block_overrides`` (per-layer changes, e.g. NoPE layers) is not modelled (RV030).

Hugging Face models (``name: hf_causal_lm``, ``models/hf/hf_causal_lm.py``):
``pretrained_model_name_or_path`` names the model (:mod:`ropelaw.lint.resolve`; none: RV031),
``config_overrides`` are set on its config as ``utils/config_utils.py`` ``set_config_overrides`` does (a dict
such as ``rope_scaling`` is updated, not replaced; keys it does not hold are refused: RV033);
``pretrained`` (default true) fine-tunes it at
``max_seq_len`` (the tuning length), ``pretrained: false`` trains it from its config at
``max_seq_len`` with its scheme from the first step.

An mcli run file (MosaicML's launcher: ``command``, ``image``, ``compute``) is read through its
``parameters:``, the YAML its command reads (``/mnt/config/parameters.yaml``); one whose command runs
another file or no training says so.

dtype: Composer's ``precision`` (``amp_bf16``: float32 parameters, bf16 autocast, reported as
``bf16-mixed``; ``amp_fp16`` -> ``16-mixed``; ``fp32``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..model import LoadedConfig, NotARopeConfig, Overrides, Value
from ..resolve import read_model, resolve
from ._framework import Doc, Fields, assemble, derived, dialect, head_dim_of, preset, pretraining_with_scheme
from ..model import Problem
from ..rules.value_rules import FRAMEWORK_REFUSES

NAME = "llmfoundry"
PKG = "llm-foundry==0.22.0"
DEFAULTS = f"{PKG} llmfoundry/models/utils/config_defaults.py attn_config_defaults"
MPT = f"{PKG} llmfoundry/models/mpt/configuration_mpt.py MPTConfig"
HF_TYPES = {"no_scaling": "default", "linear": "linear", "dynamic": "dynamic", "llama3": "llama3"}
_PRECISION = {"amp_bf16": ("bf16-mixed", "float32 parameters, bf16 autocast"),
              "amp_fp16": ("16-mixed", "float32 parameters, fp16 autocast"),
              "amp_fp8": ("fp8-mixed", "float32 parameters, fp8 autocast"), "fp32": ("fp32", "float32")}


def _root(data: Mapping) -> str:
    """``"parameters."`` for an mcli run file (MosaicML's launcher injects its ``parameters:`` as the YAML the
    command reads: ``composer train/train.py /mnt/config/parameters.yaml``), else ``""``."""
    params = data.get("parameters")
    return "parameters." if isinstance(params, Mapping) and isinstance(data.get("command"), str) else ""


def _model_of(data: Mapping) -> str | None:
    root = _root(data)
    if root:
        data = data["parameters"]
    m = data.get("model")
    if isinstance(m, Mapping) and isinstance(m.get("name"), str) and str(m["name"]).endswith("causal_lm"):
        return root + "model"
    ms = data.get("models")
    if isinstance(ms, list) and ms and isinstance(ms[0], Mapping) and isinstance(ms[0].get("model"), Mapping) \
            and str(ms[0]["model"].get("name", "")).endswith("causal_lm"):
        return root + "models.0.model"
    return None


def detect(data: Mapping) -> bool:
    return _model_of(data) is not None or is_mcli(data)


def is_mcli(data: Mapping) -> bool:
    """A MosaicML launcher (mcli) run file: a ``command`` with ``integrations`` / ``image`` / ``compute``."""
    return isinstance(data.get("command"), str) and any(k in data for k in ("integrations", "image", "compute"))


def mcli_without_model(doc: Doc) -> NotARopeConfig:
    """Why an mcli file holds no model to read: its command trains another file, or runs no llm-foundry
    training or evaluation (data preparation, conversion, benchmarks, generation)."""
    import re

    cmd = str(doc.data.get("command"))
    m = re.search(r"composer\s+(?:train|eval)/(?:train|eval)\.py\s+(\S+)", cmd)
    if m and m.group(1) != "/mnt/config/parameters.yaml":
        return NotARopeConfig(f"{doc.path}: an mcli run file whose command runs llm-foundry on {m.group(1)} "
                              "(in the repository's scripts/): lint that file")
    params = doc.data.get("parameters")
    models = params.get("models") if isinstance(params, Mapping) else None
    names = sorted({str(e["model"].get("name")) for e in models if isinstance(e, Mapping)
                    and isinstance(e.get("model"), Mapping)}) if isinstance(models, list) else []
    if names and all(n.startswith("openai") for n in names):
        return NotARopeConfig(f"{doc.path}: an mcli run file evaluating OpenAI API models ({', '.join(names)}): no "
                              "local model, no RoPE")
    first = next((ln.strip() for ln in cmd.splitlines() if ln.strip().startswith(("python", "composer"))), cmd[:60])
    first = first.split(" \\")[0][:80]
    return NotARopeConfig(f"{doc.path}: an mcli run file with no model in its parameters (its command: {first})")


def _doc(doc: Doc) -> Doc:
    """The document with OmegaConf ``${...}`` references resolved (an mcli file's from its ``parameters``, the
    root of the YAML llm-foundry reads)."""
    from .nemo import Resolved, resolve

    if _root(doc.data):
        return Resolved({**doc.data, "parameters": resolve(doc.data["parameters"])}, doc)
    return Resolved(resolve(doc.data), doc)


def _find(doc: Doc, dotted: str) -> Any:
    node: Any = doc.data
    for part in dotted.split("."):
        if isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        elif isinstance(node, Mapping) and part in node:
            node = node[part]
        else:
            return None
    return node


def _precision(doc: Doc, root: str = "") -> Value | None:
    v = doc.get(f"{root}precision", expect="str")
    if v is None or not isinstance(v.raw, str) or v.raw.strip().lower() not in _PRECISION:
        return v
    name, why = _PRECISION[v.raw.strip().lower()]
    return Value(name, v.key, v.line, v.column, f"Composer {v.raw}: {why}", "str")


def read_mpt(doc: Doc, p: str) -> Fields:
    a = f"{p}.attn_config"

    def get(key: str, expect: str = "number") -> Value | None:
        return doc.get(f"{p}.{key}", expect=expect)

    def att(key: str, expect: str = "number") -> Value | None:
        return doc.get(f"{a}.{key}", expect=expect)
    rope = att("rope", "bool")
    if rope is None or rope.raw is not True:
        alibi = att("alibi", "bool")
        learned = get("learned_pos_emb", "bool")
        what = ("ALiBi (attn_config.alibi)" if alibi is not None and alibi.raw is True else
                "no position embedding (learned_pos_emb false, attn_config.rope false)"
                if learned is not None and learned.raw is False else
                "learned positions (learned_pos_emb, default true; attn_config.rope is not true)")
        raise NotARopeConfig(f"{doc.path}: llm-foundry MPT model uses {what}, not RoPE")
    problems: list = []
    notes: list = []
    unread: list = []
    heads = get("n_heads", "int") or preset(16, f"n_heads: {MPT} default", None, "int")
    hidden = get("d_model", "int") or preset(2048, f"d_model: {MPT} default", None, "int")
    per_head = head_dim_of(hidden, heads, problems)
    impl = att("rope_impl", "str") or preset("dail", f"rope_impl: {DEFAULTS}", rope, "str")
    base = att("rope_theta") or preset(10000, f"rope_theta: {DEFAULTS}", rope)
    seq = get("max_seq_len", "int") or preset(2048, f"max_seq_len: {MPT} default", None, "int")
    scheme, params = None, {}
    head = per_head
    if impl.raw == "hf":
        head = get("head_dim", "int") or per_head
        hf = doc.raw(f"{a}.rope_hf_config")
        kind = hf.get("type", "no_scaling") if isinstance(hf, Mapping) else "no_scaling"
        typ = att("rope_hf_config.type", "str") or preset("no_scaling", f"rope_hf_config.type: {DEFAULTS}", rope, "str")
        if kind not in HF_TYPES:
            unread.append(Value(kind, typ.key or typ.where, typ.line, typ.column,
                                "llm-foundry accepts no_scaling, linear, dynamic, llama3", "any"))
        elif HF_TYPES[kind] != "default":
            scheme = derived(HF_TYPES[kind], f"{typ.where} {kind!r}: transformers' LlamaRotaryEmbedding "
                                             f"({PKG} gen_rotary_embedding)", typ, "str")
            for k in hf:
                if k != "type":
                    v = att(f"rope_hf_config.{k}", "int" if k == "original_max_position_embeddings" else "number")
                    if v is not None:
                        params[str(k)] = v
            if "factor" not in params:
                params["factor"] = preset(1.0, f"rope_hf_config.factor: {DEFAULTS}", typ)
            if kind == "dynamic":
                params["original_max_position_embeddings"] = derived(
                    seq.raw, f"{seq.where}: the PartialLlamaConfig's max_position_embeddings", seq, "int")
        doc.consider(*(f"{a}.rope_dail_config.{k}" for k in ("type", "pos_idx_in_fp32", "xpos_scale_base")))
    elif impl.raw == "dail":
        typ = att("rope_dail_config.type", "str") or preset("original", f"rope_dail_config.type: {DEFAULTS}", rope,
                                                            "str")
        if typ.raw == "xpos":
            unread.append(Value(typ.raw, typ.key or typ.where, typ.line, typ.column,
                                "xPos scales queries and keys by position: not modelled", "any"))
        pos32 = att("rope_dail_config.pos_idx_in_fp32", "bool")
        if pos32 is not None and pos32.raw is False:
            notes.append("rope_dail_config.pos_idx_in_fp32 false: flash-attn builds the position index in the "
                         "dtype of inv_freq")
        else:
            notes.append("flash-attn RotaryEmbedding builds positions in float32 (pos_idx_in_fp32, default true)")
        doc.consider(f"{a}.rope_dail_config.xpos_scale_base", *(f"{a}.rope_hf_config.{k}" for k in (
            doc.raw(f"{a}.rope_hf_config") or {})))
    else:
        unread.append(Value(impl.raw, impl.key or impl.where, impl.line, impl.column,
                            "llm-foundry accepts rope_impl dail or hf", "any"))
    overrides = doc.raw(f"{p}.block_overrides")
    if isinstance(overrides, Mapping) and overrides:
        bo = doc.require(f"{p}.block_overrides", expect="mapping")
        unread.append(Value("block_overrides", bo.key, bo.line, bo.column,
                            "per-layer overrides (NoPE layers, other attention) are not modelled", "any"))
    doc.consider(f"{a}.alibi")
    return Fields(arch="llm-foundry mpt", head_dim=head, d=head, base=base, train_len=seq, target=seq,
                  scheme=scheme, params=params, dtype=_precision(doc, _root(doc.data)), notes=notes, problems=problems,
                  unread=unread)


def load(doc: Doc, o: Overrides) -> LoadedConfig:
    from dataclasses import replace

    rdoc = _doc(doc)
    p = _model_of(rdoc.data)
    if p is None:
        raise mcli_without_model(doc)
    name = str(_find(rdoc, f"{p}.name"))
    notes = []
    many = _find(rdoc, f"{_root(doc.data)}models")
    if p.startswith("models") and isinstance(many, list) and len(many) > 1:
        notes.append(f"{len(many)} models in this eval file: the first is read")
    if name != "hf_causal_lm":
        if name != "mpt_causal_lm":
            raise NotARopeConfig(f"{doc.path}: llm-foundry model {name!r} has no RoPE reader in ropelaw "
                                 "(mpt_causal_lm and hf_causal_lm are read)")
        f = read_mpt(rdoc, p)
        f.notes.extend(notes)
        return assemble(doc, f, o)
    from .axolotl import fine_tune_length

    name_v = rdoc.get(f"{p}.pretrained_model_name_or_path", expect="str")
    if name_v is None:
        raise NotARopeConfig(f"{doc.path}: hf_causal_lm without pretrained_model_name_or_path")
    model = resolve(doc.path, name_v, o.model_config)
    hf, overrides, problems = set_config_overrides(rdoc, dict(model.data), f"{p}.config_overrides")
    cfg = read_model(rdoc, o, name_v, replace(model, data=hf), overrides, {}, f"llm-foundry hf_causal_lm {name_v.raw}")
    cfg = replace(cfg, problems=list(cfg.problems) + problems)
    seq = rdoc.get(f"{_root(doc.data)}max_seq_len", f"{p}.max_seq_len", expect="int")
    pretrained = rdoc.get(f"{p}.pretrained", expect="bool")
    train, tune, layers = cfg.train_len, None, cfg.layers
    if o.tune is not None:
        tune = Value(o.tune, None, 1, 1, "--tune", "int")
    elif pretrained is not None and pretrained.raw is False and seq is not None and o.train is None:
        train = seq
        g = layers[0]
        if g.scheme.raw not in (None, "default"):
            pws = pretraining_with_scheme(g.scheme, None, "llm-foundry (pretrained: false)",
                                          "pretrained false: the run trains the model from its config", pretrained,
                                          notes)
            layers = [replace(x, pretrained_with_scheme=pws) for x in layers]
    elif seq is not None and o.train is None:
        tune = fine_tune_length(seq, train, notes, "llm-foundry")
    dtype = _precision(rdoc, _root(doc.data)) or cfg.dtype
    return replace(cfg, train_len=train, tune_len=tune, layers=layers, dtype=dtype, notes=list(cfg.notes) + notes,
                   considered=sorted(doc.considered))


SUB_CONFIGS = ("text_config", "vision_config", "audio_config", "language_config", "llm_config")  # PretrainedConfigs


def set_config_overrides(doc: Doc, hf: dict, at: str) -> tuple[dict, dict, list]:
    """``(config, {key: the override's dotted key}, problems)``: llm-foundry==0.22.0 ``utils/config_utils.py``
    ``set_config_overrides`` on the model's config: a dict attribute is updated in place (``rope_scaling``,
    MPT's ``attn_config``: keys it does not hold are refused, ``ValueError``, RV033), a None attribute given a
    dict takes it, a sub-config (``text_config``) gets each key set, anything else is replaced. An attribute
    the config.json does not hold is taken from the override: llm-foundry raises unless the model's config
    class defines it (ropelaw knows a transformers class's defaults for RoPE keys only)."""
    over = doc.raw(at)
    overrides: dict[str, str] = {}
    problems: list = []
    if not isinstance(over, Mapping):
        return hf, overrides, problems
    for k, v in over.items():
        k = str(k)
        cur = hf.get(k)
        if isinstance(cur, Mapping) and isinstance(v, Mapping) and k not in SUB_CONFIGS:
            extra = [x for x in v if x not in cur]
            if extra:
                val = doc.get(f"{at}.{k}.{extra[0]}", expect="any")  # at the first key it refuses
                problems.append(Problem(FRAMEWORK_REFUSES, val, f"{PKG} refuses config_overrides.{k}: \"Config dict "
                                 f"override got unknown keys. Extra keys: {extra}. Expected (a subset of) keys: "
                                 f"{list(cur)}\" (set_config_overrides): the run stops; read without it"))
                continue
            hf[k] = {**cur, **v}
        elif isinstance(cur, Mapping) and isinstance(v, Mapping):
            hf[k] = {**cur, **v}
        else:
            hf[k] = v
        overrides[k] = f"{at}.{k}"
    return hf, overrides, problems


DIALECT = dialect(NAME, detect, load=load)
