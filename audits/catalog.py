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
    # how the source gets into audits/_work/site/<name>: "install" (pip install --no-deps --target),
    # "wheel" (pip download the wheel with fetch_args, e.g. for another Python, and unpack it) or
    # "sdist" (pip download the source distribution and unpack it): for targets that need Python
    # 3.12 or CUDA to install, whose source is audited as published
    fetch: str = "install"
    fetch_args: tuple[str, ...] = ()
    extra_pins: tuple[str, ...] = ()  # installed with --no-deps --target next to a fetched source (its runtime deps)


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


# The eight training / inference frameworks of issue 11, at the versions a new user tried. Static scans
# cover each framework's rotary files; runtime audits run where the rotary code imports on CPU under
# torch 2.13.0 (directly, or by loading the rotary class from its file with the device patches each
# factory states).
PY312 = ("--python-version", "3.12", "--only-binary=:all:")
FRAMEWORKS: tuple[Target, ...] = (
    Target(
        name="megatron-core-0.19.2", package="megatron-core", version="0.19.2",
        pins=("megatron-core==0.19.2",), fetch="wheel",
        fetch_args=(*PY312, "--platform", "manylinux_2_28_x86_64"),
        what="NVIDIA Megatron-core: `RotaryEmbedding` / `MultimodalRotaryEmbedding` (MRoPE) / YaRN in "
             "`megatron/core/models/common/embeddings/`, and the NeMo audio encoder's `compute_rope_params`",
        scan=("megatron/core/models/common/embeddings", "megatron/core/models/audio/nemo_transformer_encoder.py"),
        modules=(("MultimodalRotaryEmbedding (MRoPE), adapter: forward(position_ids, mrope_section) -> angles",
                  "audits/targets/megatron_factory.py:make_mrope"),
                 ("RotaryEmbedding, native: forward(max_seq_len) -> angles (seq, 1, 1, dim)",
                  "audits/targets/megatron_factory.py:make_native"),),
        deps_note="needs Python >= 3.12 (every release from 0.17 on), so the cp312 wheel is downloaded and "
                  "unpacked, not installed; the runtime factory loads the rotary module's classes from that "
                  "source (device patches stated in `audits/targets/megatron_factory.py`)",
        tags=("frameworks",),
    ),
    Target(
        name="litgpt-0.5.13", package="litgpt", version="0.5.13", pins=("litgpt==0.5.13",),
        what="Lightning AI's litgpt: `build_rope_cache(seq_len, n_elem, ...) -> (cos, sin)` and `apply_rope` "
             "in `litgpt/model.py`",
        scan=("litgpt",),
        modules=(("GPT rotary path, adapter: cos/sin buffers from build_rope_cache + apply_rope",
                  "audits/targets/litgpt_factory.py:make"),
                 ("build_rope_cache, native: f(seq_len, n_elem) -> (cos, sin)",
                  "audits/targets/litgpt_factory.py:make_native"),),
        deps_note="installed with --no-deps; `import litgpt` needs lightning, so the factory loads "
                  "`litgpt/model.py`'s two rotary functions from the installed file (stated in "
                  "`audits/targets/litgpt_factory.py`)",
        tags=("frameworks",),
    ),
    Target(
        name="torchtitan-0.3.0", package="torchtitan", version="0.3.0", pins=("torchtitan==0.3.0",),
        what="PyTorch torchtitan: `ComplexRoPE` / `CosSinRoPE` (`torchtitan/models/common/rope.py`) and "
             "the vision encoders' 2-D rotary embeddings",
        scan=("torchtitan/models",),
        modules=(("ComplexRoPE, native (complex64 cache buffer): forward(query, key, positions)",
                  "audits/targets/torchtitan_factory.py:make_complex_native"),
                 ("CosSinRoPE, native: forward(query, key, positions)",
                  "audits/targets/torchtitan_factory.py:make_cossin_native")),
        deps_note="installed with --no-deps; the rope module imports spmd_types and torchtitan's Module "
                  "protocol, which the factory replaces by stand-ins (stated in "
                  "`audits/targets/torchtitan_factory.py`)",
        tags=("frameworks",),
    ),
    Target(
        name="flash-attn-2.8.3", package="flash-attn", version="2.8.3", pins=("flash-attn==2.8.3",),
        fetch="sdist", extra_pins=("einops==0.8.2",),
        what="Dao-AILab flash-attention: `flash_attn.layers.rotary.RotaryEmbedding` (pure-torch cos/sin cache, "
             "XPos `scale_base`), the rotary layer of `flash_attn.modules.mha`",
        scan=("flash_attn",),
        # make_xpos (XPos, scale_base=512) is run by hand only: see notes.py (its tables overflow at long
        # contexts in any precision, which an angle audit would count as collisions)
        modules=(("RotaryEmbedding cos/sin cache + apply_rotary_emb_torch, adapter (forward is triton)",
                  "audits/targets/flash_attn_factory.py:make"),),
        deps_note="needs CUDA to build, so the source distribution is downloaded and unpacked (pip runs its "
                  "setup.py for metadata only, with FLASH_ATTENTION_SKIP_CUDA_BUILD=TRUE); the factory "
                  "imports `flash_attn.layers.rotary` without the package `__init__` (which loads the CUDA "
                  "extension) and with the triton kernel module stubbed: the pure-torch path",
        tags=("frameworks",),
    ),
    Target(
        name="liger-kernel-0.8.5", package="liger-kernel", version="0.8.5", pins=("liger-kernel==0.8.5",),
        what="LinkedIn Liger-Kernel: triton RoPE kernels (`liger_kernel/ops/rope.py`, qwen2-VL mRoPE, llama4) "
             "patched into Hugging Face models",
        scan=("liger_kernel",),
        runtime_note="static scan only: every Liger rotary op is a triton kernel (`import triton` at module "
                     "level; no CPU path), and it only applies the cos/sin that the patched Hugging Face "
                     "model computes (those are audited under transformers)",
        tags=("frameworks",),
    ),
    Target(
        name="nanotron-0.4", package="nanotron", version="0.4", pins=("nanotron==0.4",),
        what="Hugging Face nanotron: `RotaryEmbedding` / `LlamaRotaryEmbedding` (llama) and "
             "`StarcoderRotaryEmbedding` (starcoder2, lazy float32 re-initialisation)",
        scan=("nanotron",),
        modules=(("StarcoderRotaryEmbedding, native: forward(query, key) -> (query, key), (b, s, h, d)",
                  "audits/targets/nanotron_factory.py:make_starcoder2_native"),),
        deps_note="installed with --no-deps; the model modules import flash_attn and nanotron's parallel "
                  "stack, so the factory loads the rotary class from the installed file, with its hard-coded "
                  "\"cuda\" device replaced by \"cpu\" (stated in `audits/targets/nanotron_factory.py`)",
        tags=("frameworks",),
    ),
    Target(
        name="vllm-0.33.0", package="vllm", version="0.33.0", pins=("vllm==0.33.0",), fetch="wheel",
        fetch_args=(*PY312, "--platform", "manylinux_2_28_x86_64"),
        what="vLLM: the rotary embeddings of `vllm/model_executor/layers/rotary_embedding/` (base, scaling "
             "variants, MRoPE, FoPE) and its vendored flash-attn rotary layer",
        scan=("vllm/model_executor/layers/rotary_embedding", "vllm/vllm_flash_attn/layers/rotary.py"),
        runtime_note="static scan only: vLLM 0.33.0 needs Python >= 3.12 (the wheel is downloaded and unpacked, "
                     "not installed) and its rotary layers import the compiled `vllm._C` custom ops and the "
                     "platform layer at module level",
        tags=("frameworks",),
    ),
    Target(
        name="axolotl-0.21.0", package="axolotl", version="0.21.0", pins=("axolotl==0.21.0",), fetch="wheel",
        fetch_args=PY312,
        what="axolotl: fine-tuning on Hugging Face models: its model support code (e.g. Bailing MoE v3's "
             "`BailingMoeV3RotaryEmbedding`, a subclass of transformers' `DeepseekV3RotaryEmbedding`; Dream's "
             "default-RoPE `inv_freq` function), monkeypatches and kernel integrations",
        scan=("axolotl",),
        runtime_note="static scan only: axolotl 0.21.0 needs Python >= 3.12 (the wheel is downloaded and "
                     "unpacked, not installed); its rotary classes subclass transformers' (audited above) and "
                     "its one frequency function builds inv_freq from int64 `.float()` in float32",
        tags=("frameworks",),
    ),
)

TARGETS = TARGETS + FRAMEWORKS


def by_name(name: str) -> Target:
    for t in TARGETS:
        if t.name == name:
            return t
    raise KeyError(name)
