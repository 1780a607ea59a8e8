"""axolotl fine-tuning YAML: ``base_model`` -> that model's Hugging Face config.json.

The config comes from ``--model-config``, a local directory (``base_model`` is a path with a
config.json), the Hugging Face cache (at ``revision_of_model`` when set), or, said by RV032, the
shipped table of base models (``lint/resolve.py``); never a download; none of them: RV031.
``base_model_config``, when set, names the config instead of ``base_model`` (as axolotl loads it). It is read as any \
Hugging
Face config (the HF dialect), then ``overrides_of_model_config`` / ``model_config`` keys are set on it as
axolotl 0.18.0 does, after transformers 5 (its pin: 5.14.1) built the config's ``rope_parameters``: a
``rope_theta`` override then changes nothing (RV019, a warning), a ``rope_scaling`` / ``rope_parameters``
mapping replaces the parameters whole and, without its own ``rope_theta``, cannot be built (RV033); the other
keys take effect (measured on transformers 5.23.0: tests/differential/test_diff_axolotl.py). ``sequence_len`` is the \
length this
fine-tuning run trains at (axolotl packs and truncates samples to it): the tuning length
(``tune_len``) of a fine-tune of ``base_model``, whose own training length stays the model's.
Past that length it is a context extension (Liu et al.'s tuning length); within it, the bound is
the pre-trained model's (``sequence_len`` absent: axolotl's default 512). A top-level ``rope_scaling``
is refused by axolotl 0.18.0 (it belongs under ``overrides_of_model_config``): RV033. dtype: ``bf16`` / ``fp16``
(true or auto), else the base config's
``torch_dtype``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from ..model import LoadedConfig, Overrides, Value
from ..resolve import ModelConfig, find, read_model, resolve
from ._framework import Doc, dialect
from ..model import Problem
from ..rules.value_rules import FRAMEWORK_REFUSES, IGNORED_KEY
from ..table_rows import row

NAME = "axolotl"
PKG = "axolotl==0.18.0"


def detect(data: Mapping) -> bool:
    return isinstance(data.get("base_model"), str) and ("sequence_len" in data or "datasets" in data)


def hf_config(base: str, given: str | None = None) -> tuple[dict, str] | None:
    """``(config dict, where it came from)`` of ``base_model`` (:func:`ropelaw.lint.resolve.find`:
    ``--model-config``, local directory, Hugging Face cache, the table), or None; kept for the plan writers."""
    got = find(base, given=given)
    return None if got is None else (dict(got.data), got.origin)


def load_with_model(doc: Doc, o: Overrides, name_v: Value, model: ModelConfig, overrides: dict[str, str],
                    computed: dict, arch: str) -> LoadedConfig:
    """:func:`ropelaw.lint.resolve.read_model` (kept under this name for the dialects that import it)."""
    return read_model(doc, o, name_v, model, overrides, computed, arch)


def load(doc: Doc, o: Overrides) -> LoadedConfig:
    """axolotl==0.18.0 ``loaders/utils.py`` ``load_model_config``: ``AutoConfig.from_pretrained(base_model_config
    or base_model, revision=revision_of_model)``, then ``setattr`` of each ``overrides_of_model_config`` key."""
    base_v = doc.require("base_model_config", "base_model", expect="str")  # detect(): base_model is a string
    rev_v = doc.get("revision_of_model", "model_revision", expect="str")
    model = resolve(doc.path, base_v, o.model_config, rev_v)
    hf, overrides, problems = set_overrides(doc, dict(model.data))
    cfg = read_model(doc, o, base_v, replace(model, data=hf), overrides, {}, f"axolotl {base_v.raw}")
    notes = list(cfg.notes)
    problems = list(cfg.problems) + problems
    top = doc.get("rope_scaling", expect="any")
    if top is not None and top.raw:  # schemas/deprecated.py DeprecatedParameters.validate_rope_scaling raises
        problems.append(Problem(FRAMEWORK_REFUSES, top, f"{PKG} refuses a top-level rope_scaling (\"`rope_scaling` "
                         "is no longer supported, it should now be be a key under `model_config`\", "
                         "utils/schemas/deprecated.py): the run stops; read without it"))
    seq = doc.get("sequence_len", expect="int") or Value(
        512, None, base_v.line, base_v.column, f"sequence_len default 512 ({PKG} utils/schemas/config.py)", "int")
    tune = None
    if o.tune is not None:
        tune = Value(o.tune, None, 1, 1, "--tune", "int")
    elif seq is not None:
        tune = fine_tune_length(seq, cfg.train_len, notes, "axolotl")
    dtype = None
    for name in ("bf16", "fp16"):
        if doc.raw(name) in (True, "auto", "true"):
            v = doc.require(name, expect="any")
            dtype = Value(name, v.key, v.line, v.column,
                          "auto: bf16 where the GPU supports it" if v.raw == "auto" else "",
                          "str")
            break
    if dtype is None and o.dtype is not None:
        dtype = Value(o.dtype, None, 1, 1, "--dtype", "str")
    return replace(cfg, tune_len=tune, dtype=dtype if dtype is not None else cfg.dtype, notes=notes,
                   inputs=cfg.inputs, problems=problems, considered=sorted(doc.considered))


TF5 = "transformers 5 (axolotl==0.18.0 pins 5.14.1; measured on 5.23.0)"


def _top_base_keys(hf: Mapping) -> tuple[str, ...]:
    """The top-level keys the HF engine reads a base from for this model: rope_theta, and the row ``base_key``'s
    key where one applies (GPT-NeoX's rotary_emb_base: the engine ignores its rope_theta)."""
    kr = row("base_key", str(hf.get("model_type", "")))
    return ("rope_theta",) if kr is None else ("rope_theta", kr.values["key"])


def set_overrides(doc: Doc, hf: dict) -> tuple[dict, dict, list]:
    """``(config, {key: the override's dotted key}, problems)`` of ``overrides_of_model_config`` (alias
    ``model_config``) as axolotl 0.18.0 applies it: ``setattr`` on the config object after
    ``AutoConfig.from_pretrained`` built it, under transformers 5, which keeps the RoPE in ``rope_parameters``
    from then on (measured: tests/differential/test_diff_axolotl.py). So ``rope_theta`` changes nothing (the
    rotary keeps the model's base: RV019 as a warning); ``rope_scaling`` / ``rope_parameters`` replace the
    parameters whole, and without their own ``rope_theta`` the rotary cannot be built (TypeError: RV033);
    ``partial_rotary_factor``, ``head_dim`` and the rest take effect."""
    overrides: dict[str, str] = {}
    problems: list = []
    for section in ("overrides_of_model_config", "model_config"):
        sec = doc.raw(section)
        if not isinstance(sec, Mapping):
            continue
        for k, v in sec.items():
            k, at = str(k), f"{section}.{k}"
            if k == "rope_theta":
                problems.append(Problem(IGNORED_KEY, doc.get(at, expect="any"), f"{at} changes nothing: {TF5} "
                                 "keeps the base in rope_parameters, set when the config was built, and axolotl sets "
                                 "overrides after (loaders/utils.py load_model_config): the model keeps its base",
                                        severity="warning"))  # the override is lost whole: above RV019's info
                continue
            if k in ("rope_scaling", "rope_parameters") and isinstance(v, Mapping) and "rope_theta" not in v:
                problems.append(Problem(FRAMEWORK_REFUSES, doc.get(at, expect="any"), f"{at} replaces the model's "
                                 f"rope_parameters whole under {TF5}, without rope_theta: building the rotary raises "
                                 "TypeError (base None); read without it (add rope_theta to it)"))
                continue
            if isinstance(v, Mapping) and "rope_theta" in v:  # the base of the parameters it replaces
                for key in _top_base_keys(hf):
                    hf[key] = v["rope_theta"]
                    overrides[key] = f"{at}.rope_theta"
                doc.consider(f"{at}.rope_theta")
                v = {x: y for x, y in v.items() if x != "rope_theta"}
            hf[k] = v
            overrides[k] = at
    return hf, overrides, problems


def fine_tune_length(seq: Value, train: Value, notes: list, framework: str) -> Value:
    """``tune_len`` of a fine-tune of a pre-trained model running at ``seq`` tokens: a context extension
    past the model's training length ``train``, else a run within it (kept and said; the bound is the
    pre-trained model's)."""
    s, t = seq.number(), train.number()
    if s is not None and t is not None and s > t:
        return Value(seq.raw, seq.key, seq.line, seq.column, "the fine-tuning length, past the model's training "
                                                             "length: a context extension", "int")
    if s is not None and t is not None:
        notes.append(f"{framework} fine-tunes at {seq.key} {s:,.0f} tokens, within the model's training length "
                     f"{t:,.0f} ({train.where}): no context extension")
    return Value(seq.raw, seq.key, seq.line, seq.column, "the fine-tuning length", "int")


DIALECT = dialect(NAME, detect, load=load)
