"""torchtune recipe YAML (torchtune==0.6.1): ``model._component_`` names a model builder.

The builder's RoPE (``ropelaw/data/presets_torchtune.json``, read from ``torchtune/models/*/_model_builders.py``
and the component builders they call): ``RotaryPositionalEmbeddings(dim=head_dim,
max_seq_len, base)`` or ``Llama3ScaledRoPE`` (Llama 3.1 bands: ``scale_factor``, low 1, high 4,
``old_context_len`` 8,192), ``head_dim = embed_dim // num_heads``. Sliding windows: Gemma 2's
``gemma2()`` gives the even layers (``layer_idx % 2 == 0``) ``sliding_window_size`` (4,096) and the
odd ones full attention, so the config has a global and a local layer group, as a Hugging Face
gemma2 config.json does (``scripts/presets.py`` reads the pattern from the component builder). LoRA / QLoRA builders
(``lora_llama2_7b``, ``qlora_...``) add adapters to the same model: their RoPE is the base
builder's. Builder arguments given in the YAML (``max_seq_len``, ``rope_base``) override. A recipe
that names a component builder with its own arguments (``torchtune.models.llama2.llama2`` with ``embed_dim``,
``num_heads`` ...) gets that builder's rotary evaluated with them (its arguments' expressions are read from the
builder's source: ``ropelaw/data/presets_torchtune.json`` ``components``); Llama 3.2 Vision's language decoder is read
from the ``decoder = llama3_2_vision_decoder(...)`` its builders make. A PPO recipe trains its
``policy_model``, which is read. A builder that is not in torchtune 0.6.1 (the Qwen3 and Llama 4 builders of
later commits) is RV030: not read, never a pass.

Lengths: the builder's ``max_seq_len`` is the context (the RoPE cache); the training length is
``tokenizer.max_seq_len`` (or ``dataset.max_seq_len``) when set, else the base model's
pre-training length (``old_context_len`` under Llama 3.1 scaling, else ``max_seq_len``).
dtype: top-level ``dtype``.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..model import NoRopeFound, NotARopeConfig, Value
from ._framework import Doc, Fields, derived, dialect, preset, presets

NAME = "torchtune"


SECTIONS = ("model", "policy_model")  # a PPO recipe trains its policy_model


def _section(data: Mapping) -> str | None:
    return next((k for k in SECTIONS if isinstance(data.get(k), Mapping)
                 and str(data[k].get("_component_", "")).startswith("torchtune.models.")), None)


def detect(data: Mapping) -> bool:
    return _section(data) is not None


def component_values(entry: dict, args: Mapping) -> dict | None:
    """The rotary values of a component builder named with its own arguments (``ropelaw/data/presets_torchtune.json``
    ``components``: its defaults and its rotary's arguments as expressions of its parameters, read from the
    builder's source), evaluated with ``args``; None when an argument it needs is missing or not a number."""
    import ast
    import operator

    ops = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
           ast.FloorDiv: operator.floordiv}
    env = {**entry["defaults"], **{str(k): v for k, v in args.items()}}

    def ev(node):
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
            return node.value
        if isinstance(node, ast.Name) and isinstance(env.get(node.id), (int, float)) \
                and not isinstance(env.get(node.id), bool):
            return env[node.id]
        if isinstance(node, ast.BinOp) and type(node.op) in ops:
            return ops[type(node.op)](ev(node.left), ev(node.right))
        raise ValueError(ast.unparse(node))
    out = {}
    for k, expr in entry["rope"].items():
        try:
            out[k] = expr if k in ("rope_class", "scheme") else ev(ast.parse(expr, mode="eval").body)
        except (ValueError, ZeroDivisionError, SyntaxError):
            return None
    return out


def _entry(table: dict, component: str) -> tuple[str, dict] | None:
    if component in table:
        return component, table[component]
    mod, _, fn = component.rpartition(".")
    for prefix in ("lora_", "qlora_"):
        if fn.startswith(prefix) and f"{mod}.{fn[len(prefix):]}" in table:
            return f"{mod}.{fn[len(prefix):]}", table[f"{mod}.{fn[len(prefix):]}"]
    return None


def read(doc: Doc) -> Fields:
    table = presets("torchtune")
    sec = _section(doc.data)
    if sec is None:  # detect() found a model section naming its torchtune builder
        raise NoRopeFound(f"{doc.path}: no torchtune model section with a _component_")
    comp_v = doc.require(f"{sec}._component_", expect="str")
    hit = _entry(table["presets"], str(comp_v.raw))
    comp = table.get("components", {}).get(str(comp_v.raw))
    args = doc.raw(sec) or {}
    notes = [] if sec == "model" else [f"a PPO recipe: the policy it trains ({sec}) is read"]
    evaluated = component_values(comp, args) if hit is None and comp is not None else None
    vals: dict
    if hit is None and evaluated is not None:
        name, vals = str(comp_v.raw), evaluated
        src = f"torchtune {name.rsplit('.', 1)[-1]}() with this file's arguments ({comp['source']})"
        doc.consider(*(f"{sec}.{k}" for k in args if k != "_component_"))
    elif hit is None:
        from ..model import UnreadConfig

        raise UnreadConfig(f"{doc.path}: torchtune builder {comp_v.raw!r} is not in {table['package']} (the pinned "
                           "release; ropelaw reads the builders of that release): its RoPE is not read", "RV030",
                           comp_v.line, comp_v.column)
    else:
        name, entry = hit
        vals, src = entry["values"], f"torchtune {name.rsplit('.', 1)[-1]}()"
        if name != comp_v.raw:
            notes.append(f"{comp_v.raw} adds adapters to {name}: same RoPE")

    def get(k: str, arg: str | None = None, expect: str = "number") -> Value | None:
        if arg is not None:
            v = doc.get(f"{sec}.{arg}", expect=expect)
            if v is not None:
                return v
        return None if vals.get(k) is None else preset(vals[k], f"{k} of {src}", comp_v, expect)
    head = get("dim", None, "int")
    if head is None:  # every builder of the table states its rotary's dim
        raise NoRopeFound(f"{doc.path}: torchtune {name}: no rotary dim in {table['package']}'s builder")
    base = get("base", "rope_base")
    max_seq = get("max_seq_len", "max_seq_len", "int")
    scheme, params = None, {}
    if vals.get("scheme") == "llama3":
        scheme = derived("llama3", f"{vals['rope_class']} of {src}: Llama 3.1 bands", comp_v, "str")
        params = {"factor": get("scale_factor", "scale_factor"), "low_freq_factor": get("low_freq_factor"),
                  "high_freq_factor": get("high_freq_factor"),
                  "original_max_position_embeddings": get("old_context_len", None, "int")}
    train = doc.get("tokenizer.max_seq_len", "dataset.max_seq_len", expect="int")
    if train is None:
        pre = params.get("original_max_position_embeddings") or max_seq
        train = None if pre is None else derived(
            pre.raw, f"{pre.where}: the base model's pre-training length (no tokenizer.max_seq_len)", comp_v)
    window, local_window = None, None
    if vals.get("sliding_window") is not None:
        layers = vals.get("sliding_window_layers")
        if layers == "even":  # gemma2(): sliding_window_size if (layer_idx % 2)==0 else None
            local_window = preset(vals["sliding_window"], f"sliding_window_size of {src} on the even layers "
                                  "(layer_idx % 2 == 0; the odd layers attend globally)", comp_v, "int")
        elif layers == "all":
            window = preset(vals["sliding_window"], f"sliding_window_size of {src} on every layer", comp_v, "int")
        else:
            raise NotARopeConfig(f"{doc.path}: torchtune {name}: unknown sliding-window layer pattern {layers!r}")
    return Fields(arch=f"torchtune {name}", head_dim=head, d=head, base=base, train_len=train, target=max_seq,
                  scheme=scheme, params=params, original_max=params.get("original_max_position_embeddings"),
                  dtype=doc.get("dtype", expect="str"), notes=notes, window=window, local_window=local_window)


DIALECT = dialect(NAME, detect, read)
