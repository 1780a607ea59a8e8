"""What `audits/run.py` audits: the targets, their pinned installs, and what each audit runs.

Every target is a package version from PyPI, installed with ``pip install --no-deps --target
audits/_work/site/<name>`` together with pinned dependencies of its own time, so that several
versions live side by side and each audit subprocess sees exactly one of them through
PYTHONPATH (torch is the venv's ``torch==2.13.0`` CPU build for all of them).

Edit this file to add a target; ``notes.py`` holds what we concluded by reading each target's code.
"""

from __future__ import annotations

from dataclasses import dataclass, field

DTYPES = ("bf16", "fp16")
LENGTHS = (8192, 32768, 131072)  # 8K / 32K / 128K positions
SCENARIO = "all"                 # cast, default, autocast

# Architectures audited at runtime in every transformers version that has them (the rotary
# embedding built from a default config of that version, no weights). Static scans cover more.
HF_RUNTIME_MODELS = ("llama", "mistral", "mixtral", "gpt_neox", "falcon", "qwen2", "gemma", "phi3")
HF_STATIC_MODELS = HF_RUNTIME_MODELS + ("phi", "gptj", "persimmon", "stablelm", "gemma2", "qwen3", "olmo",
                                        "cohere")
# Extra runtime audits with a released checkpoint's config where the default config hides the bug:
# MistralConfig and MixtralConfig default to max_position_embeddings = 131,072, so the float32 cache
# built at __init__ covers every audited length; the released checkpoints ship 32,768, beyond which
# the cache is rebuilt from the cast buffer.
HF_RUNTIME_VARIANTS = (
    ("mistral", "max_position_embeddings=32768", "as in Mistral-7B-v0.1's config"),
    ("mixtral", "max_position_embeddings=32768", "as in Mixtral-8x7B-v0.1's config"),
)
# Checkpoints written by the version's own save_pretrained after model.to(bf16 / fp16).
HF_CHECKPOINT_MODELS = ("llama", "gpt_neox")


@dataclass(frozen=True)
class Target:
    """One package version to audit (see the module docstring)."""

    name: str                    # report name and install directory: "<package>-<version>"
    package: str                 # PyPI name
    version: str
    pins: tuple[str, ...]        # requirements installed with --no-deps into the target's dir
    what: str                    # one line for the README: what the target is
    scan: tuple[str, ...] = ()   # files/dirs (relative to the install dir) for `audit code`
    hf_models: tuple[str, ...] = ()                 # `audit hf MODEL` (transformers targets)
    hf_variants: tuple[tuple[str, str, str], ...] = ()  # (MODEL, "KEY=VALUE", why): `audit hf MODEL --config`
    modules: tuple[tuple[str, str], ...] = ()       # (label, "audits/targets/file.py:make")
    checkpoints: tuple[str, ...] = ()               # kinds for audits/targets/make_checkpoints.py
    runtime_note: str = ""       # why there is no runtime audit, when there is none
    deps_note: str = ""          # how the install was made to import under torch 2.13
    tags: tuple[str, ...] = field(default_factory=tuple)


# transformers version -> (tokenizers, huggingface_hub) pins of its own time: each version's
# dependency_versions_check rejects the venv's tokenizers 0.22 before 4.57, so every version gets
# the tokenizers / hub its setup.py accepted when it was released.
TRANSFORMERS = {
    "4.28.1": ("0.13.3", "0.14.1"),
    "4.31.0": ("0.13.3", "0.16.4"),
    "4.34.0": ("0.14.1", "0.17.3"),
    "4.36.2": ("0.15.2", "0.20.1"),
    "4.38.2": ("0.15.2", "0.21.4"),
    "4.40.2": ("0.19.1", "0.23.0"),
    "4.45.2": ("0.20.3", "0.25.2"),
    "4.48.3": ("0.21.0", "0.28.1"),
    "4.57.1": ("0.22.2", "0.36.2"),
    "5.23.0": ("0.23.1", "1.31.0"),
}


def _transformers(version: str) -> Target:
    tok, hub = TRANSFORMERS[version]
    scan = tuple(f"transformers/models/{m}/modeling_{m}.py" for m in HF_STATIC_MODELS)
    scan += ("transformers/modeling_rope_utils.py",)  # frequencies live here from 4.45 on
    return Target(
        name=f"transformers-{version}", package="transformers", version=version,
        pins=(f"transformers=={version}", f"tokenizers=={tok}", f"huggingface_hub=={hub}"),
        what="Hugging Face transformers: the rotary embeddings of llama, mistral, mixtral, gpt_neox, "
             "falcon, qwen2, gemma, phi3 (those present in this version)",
        scan=scan, hf_models=HF_RUNTIME_MODELS, hf_variants=HF_RUNTIME_VARIANTS, checkpoints=tuple(f"hf:{m}" for m in HF_CHECKPOINT_MODELS),
        deps_note="tokenizers and huggingface_hub pinned to versions of its release time, so that its "
                  "import-time dependency check passes; numpy, torch, safetensors, regex, requests, filelock "
                  "and tqdm come from the venv",
        tags=("transformers",),
    )


TARGETS: tuple[Target, ...] = (
    *(_transformers(v) for v in TRANSFORMERS),
    *(Target(
        name=f"rotary-embedding-torch-{v}", package="rotary-embedding-torch", version=v,
        pins=(f"rotary-embedding-torch=={v}", "einops==0.8.2", *extra),
        what="lucidrains' rotary-embedding-torch: `RotaryEmbedding(dim=64).rotate_queries_or_keys(q)`",
        scan=("rotary_embedding_torch",),
        modules=(("RotaryEmbedding(dim=64).rotate_queries_or_keys",
                  "audits/targets/rotary_embedding_torch_factory.py:make"),),
        checkpoints=("rotary-embedding-torch",),
        deps_note="torch from the venv",
        tags=("rotary-embedding-torch",),
    ) for v, extra in (("0.5.3", ("beartype==0.18.5",)), ("0.8.9", ()), ("0.9.1", ()))),
    Target(
        name="x-transformers-2.31.10", package="x-transformers", version="2.31.10",
        pins=("x-transformers==2.31.10", "einops==0.8.2", "einx==0.3.0", "frozendict==2.4.6",
              "loguru==0.7.3", "torch-einops-utils==0.2.0"),
        what="lucidrains' x-transformers: the `Decoder(rotary_pos_emb=True)` path, "
             "`RotaryEmbedding(64)(arange(n))` then `apply_rotary_pos_emb(q, freqs)`",
        scan=("x_transformers/x_transformers.py",),
        modules=(("Decoder rotary path: RotaryEmbedding(64) + apply_rotary_pos_emb",
                  "audits/targets/x_transformers_factory.py:make"),),
        checkpoints=("x-transformers",),
        deps_note="torch, numpy and sympy from the venv",
        tags=("x-transformers",),
    ),
    *(Target(
        name=f"timm-{v}", package="timm", version=v, pins=(f"timm=={v}",),
        what="timm (PyTorch Image Models): 2-D rotary embeddings for ViTs (EVA, ViT-RoPE), "
             "`timm/layers/pos_embed_sincos.py` and the models that use it",
        scan=("timm/layers/pos_embed_sincos.py", "timm/models/eva.py"),
        runtime_note="static scan only: timm's rotary embeddings index a 2-D image grid (positions are "
                     "patch coordinates, a few hundred per side), not a 1-D token sequence of 8K-128K, and "
                     "importing any timm.layers module imports torchvision, which is not installed here "
                     "(only torch 2.13.0 is)",
        tags=("timm",),
    ) for v in ("0.9.16", "1.0.31")),
)


def by_name(name: str) -> Target:
    for t in TARGETS:
        if t.name == name:
            return t
    raise KeyError(name)
