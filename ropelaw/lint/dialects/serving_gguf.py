"""A GGUF served by vLLM or SGLang: which config the runtime builds the model from, read from the runtimes' source.

- vLLM 0.32.0 has no GGUF loader of its own (``model_executor/model_loader/__init__.py``: no ``gguf`` load format;
  ``transformers_utils/config.py`` ``get_config`` wants a ``config.json`` in a directory): a GGUF is served through
  ``vllm-gguf-plugin==0.0.5`` (vLLM's ``extra-quant`` extra, ``vllm-gguf-plugin>=0.0.2``), whose
  ``plugin.py`` ``_get_gguf_config_source`` takes the model's config from ``--hf-config-path``, else
  ``--tokenizer`` (unless that is a GGUF too), else the GGUF's folder, and whose ``config_parser.py``
  ``GGUFConfigParser`` reads that ``config.json`` with transformers (only ``vocab_size`` and
  ``tie_word_embeddings`` are then taken from the GGUF): the GGUF's RoPE metadata is never read. Where the GGUF
  is here, its RoPE (read by the GGUF dialect's reader) is compared with that config.json (RV042 where they
  differ). vLLM before 0.32.0 read a GGUF in-tree: not modelled (RV031).
- SGLang 0.5.23 (``srt/utils/hf_transformers/config.py`` ``get_config``): a ``config.json`` beside the GGUF wins
  (``gguf_sidecar_dir``); else transformers' GGUF conversion of the file's metadata
  (``AutoConfig.from_pretrained(folder, gguf_file=...)``, transformers==5.19.0, SGLang's pin), modelled by
  :func:`converted`: ``modeling_gguf_pytorch_utils.py`` ``load_gguf_checkpoint`` with the tables of
  ``integrations/ggml.py`` (``ropelaw/data/transformers_gguf.json``). That conversion carries ``{arch}.rope.freq_base``,
  ``context_length`` and (llama / mistral) ``rope.dimension_count``, and no ``rope.scaling.*`` key (for gpt-oss
  it reads each key's length field instead of its value: not modelled, RV031); the ``rope_freqs.weight`` tensor \
(Llama 3.1's bands) is named nowhere in SGLang 0.5.23 or
  transformers 5.19.0: a GGUF whose RoPE is scaled is served without its scaling (RV042 says so).

The GGUF itself is looked for beside the linted file, then in the working directory (as ``llamacpp_launch``);
absent, RV031 names it.
"""

from __future__ import annotations

import os
from typing import Any
from collections.abc import Mapping

__all__ = ["is_gguf_name", "remote_gguf", "local_gguf", "converted", "scaled_rope", "NotModelled", "PLUGIN",
           "TRANSFORMERS"]

PLUGIN = "vllm-gguf-plugin==0.0.5"
TRANSFORMERS = "transformers==5.19.0"


def is_gguf_name(raw: Any) -> bool:
    """A model argument naming a GGUF file (vllm-gguf-plugin ``_is_gguf_reference``: ``model.endswith('.gguf')``;
    SGLang ``check_gguf_file``: a file with the ``.gguf`` suffix)."""
    return isinstance(raw, str) and raw.strip().endswith(".gguf")


# gguf==0.19.0 (the [test] pin; vllm-gguf-plugin 0.0.5 asks gguf>=0.17.0): GGMLQuantizationType's names and
# LlamaFileType's MOSTLY_ names without the prefix, for the plugin's is_valid_gguf_quant_type
GGML_TYPES = frozenset(["F32", "F16", "Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0", "Q8_1", "Q2_K", "Q3_K", "Q4_K", "Q5_K",
                        "Q6_K", "Q8_K", "IQ2_XXS", "IQ2_XS", "IQ3_XXS", "IQ1_S", "IQ4_NL", "IQ3_S", "IQ2_S", "IQ4_XS",
                        "I8", "I16", "I32", "I64", "F64", "IQ1_M", "BF16", "TQ1_0", "TQ2_0", "MXFP4", "NVFP4", "Q1_0"])
FILE_TYPES = frozenset(["F16", "Q4_0", "Q4_1", "Q8_0", "Q5_0", "Q5_1", "Q2_K", "Q3_K_S", "Q3_K_M", "Q3_K_L", "Q4_K_S",
                        "Q4_K_M", "Q5_K_S", "Q5_K_M", "Q6_K", "IQ2_XXS", "IQ2_XS", "Q2_K_S", "IQ3_XS", "IQ3_XXS",
                        "IQ1_S", "IQ4_NL", "IQ3_S", "IQ3_M", "IQ2_S", "IQ2_M", "IQ4_XS", "IQ1_M", "BF16", "TQ1_0",
                        "TQ2_0", "MXFP4_MOE", "NVFP4", "Q1_0"])
_REMOTE = r"[a-zA-Z0-9][a-zA-Z0-9._-]*/[a-zA-Z0-9][a-zA-Z0-9._-]*:[A-Za-z0-9_+-]+"


def _valid_quant(q: str) -> bool:
    """vllm-gguf-plugin 0.0.5 ``is_valid_gguf_quant_type``: a file type, a tensor type, or a tensor type with a
    ``_M`` / ``_S`` / ``_L`` / ``_XL`` / ``_XS`` / ``_XXS`` suffix."""
    if q in FILE_TYPES or q in GGML_TYPES:
        return True
    return any(q.endswith(sfx) and q[:-len(sfx)] in GGML_TYPES for sfx in ("_M", "_S", "_L", "_XL", "_XS", "_XXS"))


def remote_gguf(raw: Any) -> tuple[str, str] | None:
    """``(repository, quant type)`` of a ``repo_id:quant_type`` model (vllm-gguf-plugin 0.0.5 ``is_remote_gguf``:
    the quant type valid, or ``PREFIX-`` + a valid one), else None."""
    import re

    if not isinstance(raw, str) or not re.fullmatch(_REMOTE, raw.strip()):
        return None
    repo, quant = raw.strip().rsplit(":", 1)
    ok = _valid_quant(quant) or ("-" in quant and _valid_quant(quant.rsplit("-", 1)[1]))
    return (repo, quant) if ok else None


def local_gguf(path: str, raw: str) -> str | None:
    """The GGUF named ``raw`` beside the linted file ``path``, else in the working directory, else None."""
    raw = raw.strip()
    for cand in (os.path.join(os.path.dirname(path), raw), raw):
        if os.path.isfile(cand):
            return os.path.normpath(cand)
    return None


def _tables() -> dict:
    from ... import data

    return data.read("transformers_gguf")


def converted(metadata: Mapping, tables: Mapping | None = None) -> dict:
    """The config dict transformers' ``load_gguf_checkpoint`` builds from a GGUF's ``metadata`` (flat keys, values
    as the file holds them), with the GGUF-to-config ``tables`` (``{"config": GGUF_CONFIG_MAPPING, "defaults":
    GGUF_CONFIG_DEFAULTS_MAPPING}``; default: transformers 5.19.0's). ``ValueError`` where transformers refuses
    the architecture. Step by step as ``load_gguf_checkpoint`` (5.19.0) does it, tokenizer keys left out."""
    t = tables if tables is not None else _tables()
    mapping, defaults = t["config"], t.get("defaults", {})
    arch = metadata.get("general.architecture")
    if not isinstance(arch, str):
        raise ValueError("the GGUF has no general.architecture")
    name = metadata.get("general.name")
    names = [name] if name is not None else []  # read_field: a list, so `"mistral" in model_name` is equality
    out: dict[str, Any] = {}
    if "llama" in arch and "mistral" in names:
        updated = "mistral"
    elif "t5" in arch or "t5encoder" in arch:
        out["is_gated_act"] = True
        updated = "umt5" if names and "umt5" in str(names[0]).lower() else "t5"
    else:
        updated = arch
    for part, new in (("qwen2moe", "qwen2_moe"), ("gpt-oss", "gpt_oss"), ("gpt_oss", "gpt_oss"),
                      ("qwen3moe", "qwen3_moe"), ("minimax-m2", "minimax_m2")):
        if part in arch:
            updated = new
            break
    if arch not in mapping and updated not in mapping:  # GGUF_SUPPORTED_ARCHITECTURES: the table's prefixes
        raise ValueError(f"GGUF model with architecture {arch} is not supported yet.")
    for key, value in (defaults.get(updated) or defaults.get(arch) or {}).items():
        out.setdefault(key, value)
    for key, value in metadata.items():
        key = key.replace(arch, updated)
        prefix, _, suffix = key.partition(".")
        if isinstance(value, (list, tuple)) and len(value) == 1:
            value = value[0]
        if isinstance(value, str) and arch in value:
            value = value.replace(arch, updated)
        renames = mapping.get(prefix)
        if isinstance(renames, Mapping) and suffix in renames and renames[suffix] not in (None, -1):
            out[renames[suffix]] = list(value) if isinstance(value, tuple) else value
    if out.get("model_type") == "gemma3":
        out["model_type"] = "gemma3_text"
    if out.get("model_type") == "gemma4":
        out["model_type"] = "gemma4_text"
    if updated == "gpt_oss" and "gpt-oss.rope.scaling.type" in metadata:
        # 5.19.0 lines 730-765 rebuild rope_scaling from reader.fields[key].parts[0], which is the key's length
        # field (gguf's ReaderField parts: key length, key, type, value...), not its value: the block it builds
        # holds no value of the file (and float() of that array raises TypeError under numpy 2.4)
        raise NotModelled("transformers' GGUF conversion rebuilds gpt-oss's rope_scaling from each key's length "
                          "field, not its value (modeling_gguf_pytorch_utils.py 730-765: reader.fields[key].parts[0])")
    return out


class NotModelled(ValueError):
    """transformers' conversion does something ropelaw does not model (said, never guessed)."""


def scaled_rope(metadata: Mapping, tensors: Mapping) -> list[str]:
    """The RoPE scaling a GGUF holds, as llama.cpp would run it (``gguf.py``): a ``rope.scaling.type`` other than
    none with a factor other than 0 / 1, a ``rope_freqs`` / ``rope_factors_*`` tensor. Each as ``key value``."""
    arch = metadata.get("general.architecture")
    out = []
    kind = metadata.get(f"{arch}.rope.scaling.type")
    factor = metadata.get(f"{arch}.rope.scaling.factor", metadata.get(f"{arch}.rope.scale_linear"))
    if kind not in (None, "none") and isinstance(factor, (int, float)) and factor not in (0, 1):
        out.append(f"{arch}.rope.scaling.type {kind!r} factor {factor:g}")
    out += [f"the {name} tensor" for name in sorted(tensors) if name.startswith(("rope_freqs", "rope_factors"))]
    return out
