"""Regenerate the shipped preset tables from the frameworks' own source at pinned versions.

    pip download --no-deps -d DL/litgpt litgpt==0.5.13          # and the others in PINS
    python scripts/presets.py DL                                 # rewrites ropelaw/data/presets_*.json
    python scripts/presets.py DL --check                         # exit 1 if a table is out of date

``DL`` holds one folder per framework with its wheel (as ``pip download`` leaves it). Nothing
is imported from a framework package: the builders and flavors are read with :mod:`ast` (every
value a literal or arithmetic on literals), except litgpt's ``config.py``, which its authors
keep importable without torch ("so that users can import this file ... in Python
environments which do not include all the dependencies"), and which is loaded alone. No
network access; nothing here runs at lint time (this script is not part of the installed package).

The axolotl table of base models (by Hugging Face repository id) comes from litgpt's named
configs, each of which names the Hub repository it encodes (``hf_config``), plus the public
mirrors axolotl's examples use (NousResearch/...), which publish the same config.json.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import glob
import importlib.util
import operator
import os
import re
import sys
import zipfile
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # tune_builders beside this script

from tune_builders import component_entry, decoder_call  # noqa: E402

from ropelaw import data  # noqa: E402

# framework -> (registry package, pinned version); the tables record these
PINS = {
    "torchtitan": ("torchtitan", "0.2.2"),  # the last release configured by TOML ([model] name + flavor)
    "litgpt": ("litgpt", "0.5.13"),
    "torchtune": ("torchtune", "0.6.1"),
}


class Unknown(Exception):
    """An expression that is not a literal (a call result, a variable): not part of a preset."""


_OPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
        ast.FloorDiv: operator.floordiv, ast.Pow: operator.pow, ast.Mod: operator.mod}


def value(node: ast.AST, env: dict[str, Any] | None = None) -> Any:
    """A literal, arithmetic on literals, a name bound in ``env``, or a call ``Cls(k=v, ...)``
    (-> ``{"__class__": "Cls", k: v}``); :class:`Unknown` otherwise."""
    env = env or {}
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -value(node.operand, env)
    if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
        return _OPS[type(node.op)](value(node.left, env), value(node.right, env))
    if isinstance(node, (ast.List, ast.Tuple)):
        return [value(e, env) for e in node.elts]
    if isinstance(node, ast.Dict):
        return {value(k, env): value(v, env) for k, v in zip(node.keys, node.values, strict=True)}
    if isinstance(node, ast.Name) and node.id in env:
        return env[node.id]
    if isinstance(node, ast.Call) and isinstance(node.func, (ast.Name, ast.Attribute)):
        name = node.func.id if isinstance(node.func, ast.Name) else node.func.attr
        out: dict[str, Any] = {"__class__": name}
        for kw in node.keywords:
            if kw.arg is None:
                raise Unknown("**kwargs")
            try:
                out[kw.arg] = value(kw.value, env)
            except Unknown:
                out[kw.arg] = None  # a nested non-literal (an MoE args object, a function): not a RoPE value
        return out
    raise Unknown(ast.dump(node)[:60])


def wheel_sources(dl: str, package: str) -> tuple[zipfile.ZipFile, str]:
    """The wheel of ``package`` at the version pinned in :data:`PINS`, under ``dl`` (``dl/<package>/``, ``dl/`` or
    ``dl/<package>-*/``)."""
    norm = package.replace("-", "_")
    pin = PINS[package][1]
    name = f"{norm}-{pin}-*.whl"
    hits = sorted(set(glob.glob(os.path.join(dl, package, name)) + glob.glob(os.path.join(dl, name))
                      + glob.glob(os.path.join(dl, f"{package}-*", name))))
    if not hits:
        raise SystemExit(f"no wheel of {package}=={pin} under {dl} "
                         f"(pip download --no-deps -d {dl}/{package} {package}=={pin})")
    return zipfile.ZipFile(hits[-1]), pin


def _read(zf: zipfile.ZipFile, name: str) -> str:
    return zf.read(name).decode("utf-8")


# -------------------------------------------------------------------------------------- torchtitan
def dataclass_defaults(tree: ast.Module, cls: str, classes: dict[str, ast.ClassDef] | None = None) -> dict[str, Any]:
    """Field defaults of dataclass ``cls`` (literals; ``field(default_factory=X)`` -> X's defaults)."""
    classes = classes or {n.name: n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)}
    node = classes[cls]
    out: dict[str, Any] = {}
    for base in node.bases:
        if isinstance(base, ast.Name) and base.id in classes:
            out.update(dataclass_defaults(tree, base.id, classes))
    for stmt in node.body:
        if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value is not None:
            v = stmt.value
            if isinstance(v, ast.Call) and getattr(v.func, "id", "") == "field":
                fac = next((k.value for k in v.keywords if k.arg == "default_factory"), None)
                if isinstance(fac, ast.Name) and fac.id in classes:
                    out[stmt.target.id] = {"__class__": fac.id, **dataclass_defaults(tree, fac.id, classes)}
                continue
            with contextlib.suppress(Unknown):  # a default the reader cannot evaluate: left out
                out[stmt.target.id] = value(v)
    return out


TITAN_FAMILIES = {  # family -> (flavors dict in __init__.py, args module, args class)
    "llama3": ("llama3_args", "model/args.py", "TransformerModelArgs"),
    "qwen3": ("qwen3_args", "model/args.py", "Qwen3ModelArgs"),
    "deepseek_v3": ("deepseekv3_args", "model/args.py", "DeepSeekV3ModelArgs"),
    "llama4": ("llama4_args", "model/args.py", "TransformerModelArgs"),
    "gpt_oss": ("gptoss_configs", "model/args.py", "GptOssModelArgs"),
}
TITAN_KEYS = ("dim", "n_layers", "n_heads", "head_dim", "rope_theta", "rope_scaling_args", "max_seq_len",
              "qk_rope_head_dim", "original_seq_len", "rope_factor", "beta_fast", "beta_slow", "mscale", "use_rope",
              "every_n_layers_nope", "nope_layer_interval", "fixed_attn_block_size", "attn_type",
              "sliding_window_size", "ntk_alpha", "ntk_beta")


def with_class_defaults(v: Any, tree: ast.Module) -> Any:
    """``v`` with every ``Cls(...)`` of a dataclass defined in ``tree`` completed by that class's field
    defaults (torchtitan==0.2.2 llama4 ``rope_scaling_args=RoPEScalingArgs()``: scaling_factor 16, low 1,
    high 1, original 8,192 from ``model/args.py``; the keywords given win)."""
    if isinstance(v, list):
        return [with_class_defaults(x, tree) for x in v]
    if not isinstance(v, dict):
        return v
    out = {k: with_class_defaults(x, tree) for k, x in v.items()}
    cls = out.get("__class__")
    if isinstance(cls, str) and any(isinstance(n, ast.ClassDef) and n.name == cls for n in ast.walk(tree)):
        out = {"__class__": cls, **dataclass_defaults(tree, cls), **{k: x for k, x in out.items() if k != "__class__"}}
    return out


def torchtitan_table(dl: str) -> dict[str, Any]:
    zf, version = wheel_sources(dl, "torchtitan")
    out: dict[str, Any] = {}
    for family, (var, args_path, cls) in TITAN_FAMILIES.items():
        base = f"torchtitan/models/{family}/"
        args_tree = ast.parse(_read(zf, base + args_path))
        defaults = dataclass_defaults(args_tree, cls)
        init = ast.parse(_read(zf, base + "__init__.py"))
        flavors = next(n.value for n in ast.walk(init) if isinstance(n, ast.Assign)
                       and any(getattr(t, "id", "") == var for t in n.targets))
        for key_node, call in zip(flavors.keys, flavors.values, strict=True):
            name = value(key_node)
            args = {**defaults, **{k: with_class_defaults(v, args_tree) for k, v in value(call).items()
                                   if k != "__class__"}}
            out[f"{family}/{name}"] = {
                "values": {k: args[k] for k in TITAN_KEYS if k in args},
                "source": f"torchtitan=={version} torchtitan/models/{family}/__init__.py {var}[{name!r}] "
                          f"({cls} defaults: {args_path})",
            }
    return {"framework": "torchtitan", "package": f"torchtitan=={version}", "presets": out}


# ------------------------------------------------------------------------------------------ litgpt
LITGPT_KEYS = ("block_size", "n_embd", "n_head", "head_size", "rotary_percentage", "rope_n_elem", "rope_base",
               "rope_condense_ratio", "rope_adjustments", "rope_local_base_freq", "rope_indices",
               "sliding_window_size", "sliding_window_indices", "latent_attention")


def litgpt_table(dl: str) -> dict[str, Any]:
    zf, version = wheel_sources(dl, "litgpt")
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "litgpt_config.py")
        with open(path, "w") as fh:
            fh.write(_read(zf, "litgpt/config.py"))
        spec = importlib.util.spec_from_file_location("_litgpt_config", path)
        mod = importlib.util.module_from_spec(spec)
        sys.modules["_litgpt_config"] = mod
        try:
            spec.loader.exec_module(mod)
        finally:
            sys.modules.pop("_litgpt_config", None)
    out = {}
    flagged = _litgpt_block_size_comments(_read(zf, "litgpt/config.py"))
    for c in mod.configs:
        cfg = mod.Config(**c)
        vals = {k: getattr(cfg, k) for k in LITGPT_KEYS if hasattr(cfg, k)}
        hf = cfg.hf_config or {}
        out[cfg.name] = {"values": vals, "source": f"litgpt=={version} litgpt/config.py Config.from_name({cfg.name!r})",
                         "hf_repo": f"{hf['org']}/{hf['name']}" if hf.get("org") and hf.get("name") else None}
        for template, (should, comment) in flagged.items():
            if re.fullmatch(re.escape(template).replace(r"\{\}", ".*"), cfg.name):
                out[cfg.name]["hf_block_size"] = {
                    "value": should, "source": f"litgpt=={version} litgpt/config.py, the comment on block_size "
                                               f"{cfg.block_size} of {template!r}: {comment!r}"}
    base = mod.Config()  # the class defaults: what a model_config mapping without a key gets
    defaults = {k: getattr(base, k) for k in LITGPT_KEYS if k not in ("head_size", "rope_n_elem", "n_embd", "n_head")}
    defaults.update({k: getattr(base, k) for k in ("n_embd", "n_head")})
    return {"framework": "litgpt", "package": f"litgpt=={version}",
            "defaults": {"values": defaults, "source": f"litgpt=={version} litgpt/config.py Config defaults"},
            "presets": out}


def _litgpt_block_size_comments(text: str) -> dict[str, tuple[int, str]]:
    """Configs whose ``block_size`` litgpt's authors mark as below the Hugging Face value, from the
    comment on that line (litgpt 0.5.13, Mistral-7B-{}v0.1: ``block_size=4096,  # should be 32768 but
    sliding window attention is not implemented``): name template -> (that value, the comment)."""
    lines = text.splitlines()
    out = {}
    for node in ast.walk(ast.parse(text)):
        if not (isinstance(node, ast.Call) and getattr(node.func, "id", None) == "dict"):
            continue
        kw = {k.arg: k.value for k in node.keywords if k.arg}
        if "block_size" not in kw or not isinstance(kw.get("name"), ast.Constant):
            continue
        line = lines[kw["block_size"].lineno - 1]
        m = re.search(r"#\s*(should be (\d+)\b.*)$", line)
        if m:
            out[kw["name"].value] = (int(m.group(2)), m.group(1).strip())
    return out


# ---------------------------------------------------------------------------------------- torchtune
TUNE_ROPES = {  # rope class -> scheme; Llama3ScaledRoPE's own defaults are read from its __init__
    "RotaryPositionalEmbeddings": "default",
    "Phi3RotaryPositionalEmbeddings": "default",
    "Qwen2RotaryPositionalEmbeddings": "default",
    "Llama3ScaledRoPE": "llama3",
}


def _func_defaults(fn: ast.FunctionDef) -> dict[str, Any]:
    args = fn.args.args + fn.args.kwonlyargs
    defaults = [None] * (len(fn.args.args) - len(fn.args.defaults)) + list(fn.args.defaults) + list(fn.args.kw_defaults)
    out = {}
    for a, d in zip(args, defaults, strict=True):  # defaults padded with None to one per argument
        if d is not None:
            with contextlib.suppress(Unknown):
                out[a.arg] = value(d)
    return out


def torchtune_table(dl: str) -> dict[str, Any]:
    zf, version = wheel_sources(dl, "torchtune")
    names = zf.namelist()
    scaled = ast.parse(_read(zf, "torchtune/models/llama3_1/_position_embeddings.py"))
    scaled_init = next(n for n in ast.walk(scaled) if isinstance(n, ast.FunctionDef) and n.name == "__init__")
    scaled_defaults = _func_defaults(scaled_init)
    components: dict[str, tuple[str, dict, ast.FunctionDef]] = {}
    for name in names:
        if name.startswith("torchtune/models/") and name.endswith("/_component_builders.py"):
            family = name.split("/")[2]
            for fn in ast.parse(_read(zf, name)).body:
                if isinstance(fn, ast.FunctionDef):
                    components[f"{family}.{fn.name}"] = (family, _func_defaults(fn), fn)
    out = {}
    for name in sorted(names):
        if not (name.startswith("torchtune/models/") and name.endswith("/_model_builders.py")):
            continue
        family = name.split("/")[2]
        for fn in ast.parse(_read(zf, name)).body:
            if not isinstance(fn, ast.FunctionDef) or not fn.body or not isinstance(fn.body[-1], ast.Return):
                continue
            call, comp = decoder_call(fn, family, components)
            if comp is None:
                continue
            kwargs = {}
            for k in call.keywords:
                try:
                    if k.arg:
                        kwargs[k.arg] = value(k.value)
                except Unknown:
                    pass  # a builder parameter passed on (tie_word_embeddings): not a RoPE value
            args = {**comp[1], **kwargs}
            rope = _tune_rope(comp[2], args, scaled_defaults)
            if rope is None:
                continue
            rope.update(_tune_windows(comp[2], args))
            out[f"torchtune.models.{family}.{fn.name}"] = {
                "values": rope,
                "source": f"torchtune=={version} {name} {fn.name}() -> {call.func.id}() "
                          f"(torchtune/models/{comp[0]}/_component_builders.py)",
            }
    # aliases: `llama3_3_70b = llama3_1_70b` (imported from another family's builders)
    for name in sorted(names):
        if not (name.startswith("torchtune/models/") and name.endswith("/_model_builders.py")):
            continue
        family = name.split("/")[2]
        tree = ast.parse(_read(zf, name))
        imported = {a.asname or a.name: f"torchtune.models.{n.module.split('.')[2]}.{a.name}"
                    for n in tree.body
                    if isinstance(n, ast.ImportFrom) and (n.module or "").startswith("torchtune.models.")
                    for a in n.names}
        for n in tree.body:
            if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name) \
                    and isinstance(n.value, ast.Name):
                src = imported.get(n.value.id, f"torchtune.models.{family}.{n.value.id}")
                if src in out:
                    out[f"torchtune.models.{family}.{n.targets[0].id}"] = {
                        "values": out[src]["values"],
                        "source": f"torchtune=={version} {name} {n.targets[0].id} = {n.value.id} ({src})"}
    return {"framework": "torchtune", "package": f"torchtune=={version}", "presets": out,
            "components": {f"torchtune.models.{k}": v for k, (fam, defaults, fn) in sorted(components.items())
                           if (v := component_entry(fn, defaults, scaled_defaults, version, fam,
                                                    TUNE_ROPES)) is not None}}


# the per-layer conditions a component builder writes for its local (sliding-window) layers -> which
# layers are local; torchtune 0.6.1 gemma2 / lora_gemma2: `sliding_window_size if (layer_idx % 2)==0 else None`
TUNE_LOCAL_LAYERS = {"layer_idx % 2 == 0": "even"}


def _tune_windows(fn: ast.FunctionDef, args: dict[str, Any]) -> dict[str, Any]:
    """The sliding window a component builder gives its attention layers: the ``sliding_window_size=``
    keyword inside its per-layer loop, either for every layer or as ``size if <condition> else None``
    (a local/global mix; the condition must be one of :data:`TUNE_LOCAL_LAYERS`). ``{}`` when there is
    none; ``{"sliding_window": size, "sliding_window_layers": "all" | "even", "num_layers": n}``."""
    for node in ast.walk(fn):
        if not (isinstance(node, ast.keyword) and node.arg == "sliding_window_size"):
            continue
        v = node.value
        layers = "all"
        if isinstance(v, ast.IfExp):
            cond = ast.unparse(v.test)
            if not (isinstance(v.orelse, ast.Constant) and v.orelse.value is None) or cond not in TUNE_LOCAL_LAYERS:
                raise SystemExit(f"{fn.name}: unknown sliding-window layer pattern {ast.unparse(v)!r}")
            layers, v = TUNE_LOCAL_LAYERS[cond], v.body
        size = value(v, args)
        if size is None:
            return {}
        return {"sliding_window": size, "sliding_window_layers": layers, "num_layers": args.get("num_layers")}
    return {}


def _tune_rope(fn: ast.FunctionDef, args: dict[str, Any], scaled_defaults: dict[str, Any]) -> dict[str, Any] | None:
    """The RoPE a component builder constructs (its first ``rope = Cls(...)``) with ``args``."""
    env = dict(args)
    for stmt in fn.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            target = stmt.targets[0].id
            if target == "head_dim" and "head_dim" not in args:
                with contextlib.suppress(Unknown, TypeError, ZeroDivisionError):
                    env["head_dim"] = value(stmt.value, env)
            if target == "rope" and isinstance(stmt.value, ast.Call):
                cls = getattr(stmt.value.func, "id", None)
                if cls not in TUNE_ROPES:
                    return None
                kw = {}
                for k in stmt.value.keywords:
                    try:
                        kw[k.arg] = value(k.value, env)
                    except Unknown:
                        return None
                if "dim" not in kw and "head_dim" in env:
                    kw["dim"] = env["head_dim"]
                rope: dict[str, Any] = {"rope_class": cls, "scheme": TUNE_ROPES[cls], "dim": kw.get("dim"),
                                        "base": kw.get("base", 10000), "max_seq_len": kw.get("max_seq_len", 4096),
                                        "embed_dim": env.get("embed_dim"), "num_heads": env.get("num_heads")}
                if cls == "Llama3ScaledRoPE":
                    for p in ("scale_factor", "low_freq_factor", "high_freq_factor", "old_context_len"):
                        rope[p] = kw.get(p, scaled_defaults.get(p))
                if rope["dim"] is None:
                    return None
                return rope
    return None


# ------------------------------------------------------------------------------------- axolotl bases
# Public mirrors used in axolotl's examples that publish the same config.json as the original.
MIRRORS = {
    "NousResearch/Llama-2-7b-hf": "meta-llama/Llama-2-7b-hf",
    "NousResearch/Meta-Llama-3-8B": "meta-llama/Meta-Llama-3-8B",
    "NousResearch/Meta-Llama-3.1-8B": "meta-llama/Meta-Llama-3.1-8B",
    "NousResearch/Llama-3.2-1B": "meta-llama/Llama-3.2-1B",
    "unsloth/Llama-3.2-1B": "meta-llama/Llama-3.2-1B",
}


def hf_config_of(v: dict[str, Any]) -> dict[str, Any]:
    """The RoPE keys of a Hugging Face config.json as litgpt's Config encodes that model
    (litgpt's ``convert_hf_checkpoint`` maps the checkpoint under these values)."""
    out: dict[str, Any] = {"hidden_size": v["n_embd"], "num_attention_heads": v["n_head"], "head_dim": v["head_size"],
                           "rope_theta": v["rope_base"], "max_position_embeddings": v["block_size"]}
    if v.get("latent_attention"):
        out["qk_rope_head_dim"] = v["latent_attention"]["qk_rope_head_dim"]
    elif v["rotary_percentage"] != 1:
        out["partial_rotary_factor"] = v["rotary_percentage"]
    adj = v.get("rope_adjustments")
    if adj:
        rs = {k: adj[k] for k in ("factor", "low_freq_factor", "high_freq_factor", "beta_fast", "beta_slow")
              if k in adj}
        rs["rope_type"] = "yarn" if "beta_fast" in adj or "beta_slow" in adj else "llama3"
        if "original_max_seq_len" in adj:
            rs["original_max_position_embeddings"] = adj["original_max_seq_len"]
        out["rope_scaling"] = rs
    elif v.get("rope_condense_ratio", 1) != 1:
        out["rope_scaling"] = {"rope_type": "linear", "factor": v["rope_condense_ratio"]}
    idx = v.get("sliding_window_indices")
    if v.get("sliding_window_size") and (not idx or all(idx)):
        out["sliding_window"] = v["sliding_window_size"]  # every layer: local/global mixes are left out
    return out


# Repositories whose config.json litgpt's Config does not encode (what transformers runs differs from
# what litgpt runs): left out of the table, so that a config naming one gets RV031 (fetch the file), never
# litgpt's reading. Each with the evidence: a real config.json of the corpus ($ROPELAW_CORPUS) or the
# transformers class.
NOT_THE_HUB_CONFIG = (
    (r"microsoft/Phi-3(\.5)?-.*|microsoft/Phi-4-mini-.*",
     "the Hub's config.json runs LongRoPE (rope_scaling su / longrope, short and long factors over an original "
     "4,096) for the 128k models, Phi-3.5 and Phi-4-mini, and a sliding window of 2,047 for Phi-3-mini-4k; litgpt "
     "encodes plain RoPE and a window of 2,048 (heldout-r2/hub onnxdiag_Phi-3.5-mini-instruct.json, "
     "onnxdiag_Phi-4-mini-reasoning.json, onnxdiag_Phi-3-mini-4k-instruct.json)"),
    (r"Qwen/Qwen2\.5-(1\.5|7|14|32|72)B(-Instruct)?(-1M)?",
     "litgpt's block_size is the context Qwen's model cards reach with YaRN (131,072) or Dual Chunk Attention "
     "(1,010,000), not the config.json transformers loads: Qwen2.5 Instruct configs say 32,768 and no rope_scaling "
     "(as hf/infinityarpan__qwen-25-api__models__Qwen2.5-0.5B-Instruct__config.json, where litgpt agrees: 32,768; "
     "issue 22), and which base models say 131,072 no file here proves"),
    (r"Qwen/QwQ-32B",
     "litgpt's block_size 131,072 is the YaRN-extended context of the model card, not its config.json"),
)


def not_the_hub_config(repo: str) -> str | None:
    """Why ``repo``'s row is left out of the axolotl table (:data:`NOT_THE_HUB_CONFIG`), or None."""
    return next((why for pattern, why in NOT_THE_HUB_CONFIG if re.fullmatch(pattern, repo)), None)


def axolotl_table(litgpt: dict[str, Any]) -> dict[str, Any]:
    """Base models by Hugging Face repository id, from litgpt's named configs (each names its
    ``hf_config`` org/name), plus the public mirrors axolotl's examples use; without the repositories
    whose config.json litgpt does not encode (:data:`NOT_THE_HUB_CONFIG`)."""
    out = {}
    for e in litgpt["presets"].values():
        repo = e.get("hf_repo")
        v = e["values"]
        if not repo or v.get("rope_local_base_freq") or (v.get("sliding_window_indices")
                                                         and not all(v["sliding_window_indices"])):
            continue  # local/global layer mixes (Gemma 2/3) need the model's own config.json
        if not_the_hub_config(repo):
            continue
        out[repo] = {"values": hf_config_of(v), "source": f"{repo} as {e['source']}"}
        cap = e.get("hf_block_size")
        if cap:  # transformers runs the Hub's config.json, not litgpt's cap
            out[repo]["values"]["max_position_embeddings"] = cap["value"]
            out[repo]["source"] += " (max_position_embeddings: see note)"
            out[repo]["note"] = (f"max_position_embeddings {cap['value']:,} as in the Hub's config.json, not litgpt's "
                                 f"block_size {v['block_size']:,} ({cap['source']})")
    for mirror, original in MIRRORS.items():
        if original in out:
            out[mirror] = {"values": out[original]["values"],
                           "source": f"{mirror}: a public mirror of {original}; " + out[original]["source"]}
    return {"framework": "axolotl", "package": f"base models of {litgpt['package']}",
            "presets": dict(sorted(out.items()))}


# ---------------------------------------------------------------------------------------- MaxText
# MaxText is not released on PyPI at a version that has these configs: its table is read from the
# source tree at a pinned commit, ``DL/maxtext-<commit>/src/maxtext/configs`` (``git archive <commit>
# src/maxtext/configs | tar -x -C DL/maxtext-<commit>`` from a clone of AI-Hypercomputer/maxtext).
MAXTEXT = ("AI-Hypercomputer/maxtext", "e591f30cbbf217ed67ef71263ec0538239f9c3b8")
# the base.yml keys the maxtext dialect reads (the rest of base.yml is parallelism, data, optimiser ...)
MAXTEXT_BASE_KEYS = ("model_name", "decoder_block", "head_dim", "attention_type", "qk_rope_head_dim", "rope_type",
                     "rope_use_scale", "rope_min_timescale", "rope_max_timescale", "rope_linear_scaling_factor",
                     "local_rope_max_timescale", "max_position_embeddings", "original_max_position_embeddings",
                     "rope_factor", "beta_fast", "beta_slow", "mscale", "rope_truncate", "rope_attention_scaling",
                     "max_target_length", "dtype", "weight_dtype", "sliding_window_size", "use_mrope",
                     "partial_rotary_factor", "load_parameters_path", "load_full_state_path", "base_emb_dim",
                     "base_num_query_heads", "base_num_kv_heads", "override_model_config")


def maxtext_table(dl: str) -> dict[str, Any]:
    import yaml

    repo, commit = MAXTEXT
    root = os.path.join(dl, f"maxtext-{commit}", "src", "maxtext", "configs")
    if not os.path.isdir(root):
        raise SystemExit(f"no MaxText configs at {root} (git -C <clone of {repo}> archive {commit} "
                         f"src/maxtext/configs | tar -x -C {os.path.join(dl, 'maxtext-' + commit)})")
    pkg = f"{repo}@{commit}"

    def load(path: str) -> dict[str, Any]:
        with open(path, encoding="utf-8") as fh:
            return yaml.safe_load(fh) or {}
    base = load(os.path.join(root, "base.yml"))
    from ropelaw.lint.unread import is_rope_key

    rope_keys = sorted(k for k in base if is_rope_key(k))
    # a model file's keys the dialect reads (the rest: MLP, MoE, vocabulary, parallelism ...)
    keep = set(MAXTEXT_BASE_KEYS) | set(rope_keys) | {"nope_layer_interval", "mrope_section",
                                                      "inhomogeneous_layer_cycle_interval"}
    models = {}
    for path in sorted(glob.glob(os.path.join(root, "models", "*.yml"))):
        name = os.path.basename(path)[:-4]
        models[name] = {"values": {k: v for k, v in load(path).items() if k in keep},
                        "source": f"{pkg} src/maxtext/configs/models/{name}.yml"}
    return {"framework": "maxtext", "package": pkg,
            "base": {"values": {k: base[k] for k in MAXTEXT_BASE_KEYS if k in base},
                     "source": f"{pkg} src/maxtext/configs/base.yml"},
            "rope_keys": rope_keys, "presets": models}


TABLES = {
    "torchtitan": torchtitan_table,
    "litgpt": litgpt_table,
    "torchtune": torchtune_table,
    "maxtext": maxtext_table,
}


def build(dl: str, only: tuple[str, ...] | None = None) -> dict[str, dict[str, Any]]:
    """Every table (``only``: those named), from the wheels / sources under ``dl``."""
    want = set(only or (*TABLES, "axolotl"))
    out = {name: fn(dl) for name, fn in TABLES.items() if name in want or (name == "litgpt" and "axolotl" in want)}
    if "axolotl" in want:
        out["axolotl"] = axolotl_table(out["litgpt"])
    return {k: v for k, v in out.items() if k in want}


def dump(table: dict[str, Any]) -> str:
    """The text of a preset file (the one table format, :func:`ropelaw.data.dump`; the generator's key order kept:
    litgpt's Hub-repository lookup takes the first preset that names the repository)."""
    return data.dump(table)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("dl", help="folder with the downloaded wheels (one sub-folder per framework)")
    p.add_argument("--check", action="store_true", help="compare with the shipped tables instead of writing")
    p.add_argument("--only", default=None, help="comma-separated tables to build (default: all)")
    args = p.parse_args(argv)
    stale = []
    for name, table in build(args.dl, tuple(args.only.split(",")) if args.only else None).items():
        if args.check:
            with open(data.path(f"presets_{name}"), encoding="utf-8") as fh:
                if fh.read() != dump(table):
                    stale.append(name)
        else:
            path = data.write(f"presets_{name}", table)
            print(f"{path}: {len(table['presets'])} presets ({table['package']})")
    if stale:
        print(f"out of date: {', '.join(stale)} (run without --check)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
