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
class Source:
    """One file read from a public repository at a pinned commit (never committed here).

    ``run.py`` looks for it as ``<root>/<owner>__<name>@<commit>/<path>`` under the first of
    :data:`SOURCE_ROOTS` that has it, checks its sha256 and copies it into the target's install
    directory at ``path`` (so the static scan prints repository paths and factories import it).
    """

    repo: str    # owner/name on GitHub
    commit: str  # 40 hex digits
    path: str    # inside the repository
    sha256: str  # of the bytes at that commit (``git show <commit>:<path> | sha256sum``)

    @property
    def local(self) -> str:
        return f"{self.repo.replace('/', '__')}@{self.commit}/{self.path}"


@dataclass(frozen=True)
class Module:
    """One ``ropelaw audit module`` target of a Target: a factory, the CLI options it needs, and the
    dtypes / lengths it is audited at (None: the target's)."""

    label: str
    spec: str                      # "audits/targets/file.py:make"
    args: tuple[str, ...] = ()     # extra CLI options, e.g. ("--head-dim", "128", "--base", "1e6")
    dtypes: tuple[str, ...] | None = None
    lengths: tuple[int, ...] | None = None


@dataclass(frozen=True)
class Show:
    """Where a target's verdict shows, and the independent brute force that must agree with it.

    The runtime row (module label, dtype, length, scenario) of the report gives the auditor's
    ``exact`` and ``distinct`` counts; ``audits/brute_force.py`` function ``brute`` recomputes
    them with numpy / ml_dtypes from the dtype flow of the target's own code (what the auditor
    would have to measure). ``mismatch``: why the two differ, when they do (then the test checks
    that they still differ, so a fix shows).
    """

    module: str
    dtype: str
    length: int
    scenario: str
    brute: str                     # function name in audits/brute_force.py
    what: str                      # one line: the mechanism the scenario shows
    mismatch: str = ""


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
    modules: tuple = ()          # (label, "audits/targets/file.py:make") or Module(...)
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
    # fetch == "git": the files read from public repositories at pinned commits (``Source``), copied
    # from a local store (:data:`SOURCE_ROOTS`), never from this repository
    sources: tuple[Source, ...] = ()
    lengths: tuple[int, ...] = ()      # runtime lengths; () = LENGTHS (a target's own training length added here)
    shows: tuple[Show, ...] = ()       # issue 21: the scenario that shows the verdict + its brute force
    verdict: str = ""                  # issue 21 targets: the verdict in one line (README's brute-force table)

    def module_list(self) -> tuple[Module, ...]:
        return tuple(m if isinstance(m, Module) else Module(*m) for m in self.modules)

    @property
    def provenance(self) -> str:
        """How the code was obtained, for the reports: ``repo@commit path`` or ``package==version``."""
        if self.fetch == "git":
            return "; ".join(f"`{s.repo}@{s.commit} {s.path}` (sha256 {s.sha256[:12]}...)" for s in self.sources)
        return ", ".join(f"`{p}`" for p in self.pins)


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


# huggingface_hub 1.x imports httpx at import time; the venv (transformers 4.57.1's hub 0.36) has no httpx,
# so the 5.x target gets httpx and its dependencies of the same time
TRANSFORMERS_EXTRA = {
    "5.23.0": ("httpx==0.28.1", "httpcore==1.0.9", "h11==0.16.0", "anyio==4.11.0", "sniffio==1.3.1"),
}


def _transformers(version: str) -> Target:
    tok, hub = TRANSFORMERS[version]
    scan = tuple(f"transformers/models/{m}/modeling_{m}.py" for m in HF_STATIC_MODELS)
    scan += ("transformers/modeling_rope_utils.py",)  # frequencies live here from 4.45 on
    return Target(
        name=f"transformers-{version}", package="transformers", version=version,
        pins=(f"transformers=={version}", f"tokenizers=={tok}", f"huggingface_hub=={hub}",
              *TRANSFORMERS_EXTRA.get(version, ())),
        what="Hugging Face transformers: the rotary embeddings of llama, mistral, mixtral, gpt_neox, "
             "falcon, qwen2, gemma, phi3 (those present in this version)",
        scan=scan, hf_models=HF_RUNTIME_MODELS, hf_variants=HF_RUNTIME_VARIANTS,
        checkpoints=tuple(f"hf:{m}" for m in HF_CHECKPOINT_MODELS),
        deps_note="tokenizers and huggingface_hub pinned to versions of its release time, so that its "
                  "import-time dependency check passes" + ("; httpx and its dependencies, which huggingface_hub 1.x "
                  "imports" if version in TRANSFORMERS_EXTRA else "") + "; numpy, torch, safetensors, regex, "
                  "requests, filelock and tqdm come from the venv",
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


# Issue 21: real rotary implementations beyond the packages above, most of them published only as
# repositories. Files read from a public repository at a pinned commit are never committed here: each
# is a ``Source`` (repo@commit path + sha256) that ``run.py`` copies from a local store into the
# target's install directory. Each target names the scenario that shows its verdict and the brute force
# (``audits/brute_force.py``) that recomputes the auditor's counts there.
def _git(repo: str, commit: str, *files: tuple[str, str]) -> tuple[Source, ...]:
    return tuple(Source(repo, commit, path, sha) for path, sha in files)


_MODDED = "KellerJordan/modded-nanogpt", "f411b3d346aa52d3504324ca93c230fd84c6c07f"
_NEOX = "EleutherAI/gpt-neox", "ea7aefd8f8e183256992d9fede4d7c71a46d67a5"
_F = "audits/targets/"
_HD128 = ("--head-dim", "128")

ISSUE21: tuple[Target, ...] = (
    Target(
        name="modded-nanogpt-2024-10-14", package="modded-nanogpt", version="2024-10-14", pins=(), fetch="git",
        sources=_git(*_MODDED, ("records/track_1_short/2024-10-14_ModernArch/train_gpt2.py",
                                "7199ba9f956c20aceffc7112a0e430db68964fa19d4fa427f743fc3d5f33bd4b")),
        what="Keller Jordan's modded-nanogpt speedrun record of 2024-10-14 (ModernArch): `Rotary(dim).forward(x)` "
             "-> (cos, sin), float32 `inv_freq` buffer, positions `arange(T).type_as(inv_freq)`, `torch.outer`; "
             "the model trains in float32 under CUDA bf16 autocast",
        scan=("records/track_1_short/2024-10-14_ModernArch/train_gpt2.py",),
        modules=(Module("Rotary (2024-10-14), native: forward(x) -> (cos, sin)",
                        _F + "modded_nanogpt_factory.py:make_2024_10"),),
        lengths=(1024, *LENGTHS),
        deps_note="a training script: only the `Rotary` class is executed from it "
                  "(`audits/targets/modded_nanogpt_factory.py`)",
        shows=(Show("Rotary (2024-10-14), native: forward(x) -> (cos, sin)", "bf16", 1024, "autocast-cuda",
                    "modded_2024_10_autocast",
                    "as the record trains: CUDA bf16 autocast; `torch.outer` is not on CUDA's lower-precision list, "
                    "so positions and angles stay float32"),),
        verdict="clean as it trains (CUDA bf16 autocast); a `.bfloat16()` cast would round positions "
                "(`type_as(inv_freq)`)",
        tags=("issue21",),
    ),
    Target(
        name="modded-nanogpt-2024-12-04", package="modded-nanogpt", version="2024-12-04", pins=(), fetch="git",
        sources=_git(*_MODDED, ("records/track_1_short/2024-12-04_ValueEmbed/train_gpt2.py",
                                "189e5c3bca9dd296225a81c0310d96551acbd4bd902fb34dee334e1f3d58c0db")),
        what="modded-nanogpt record of 2024-12-04 (ValueEmbed): `Rotary(dim).forward(x)` -> x rotated, `inv_freq` "
             "a registered float buffer, `torch.outer(arange(T), inv_freq)`; the script runs "
             "`model.cuda().bfloat16()` and trains on 64 x 1,024-token sequences",
        scan=("records/track_1_short/2024-12-04_ValueEmbed/train_gpt2.py",),
        modules=(Module("Rotary (2024-12-04), native: forward(x) -> x rotated",
                        _F + "modded_nanogpt_factory.py:make_2024_12"),),
        lengths=(8192, 32768, 65536, 131072),
        deps_note="a training script: only the `Rotary` class is executed from it "
                  "(`audits/targets/modded_nanogpt_factory.py`)",
        shows=(Show("Rotary (2024-12-04), native: forward(x) -> x rotated", "bf16", 65536, "cast",
                    "modded_2024_12_cast",
                    "`model.bfloat16()` makes `inv_freq` bf16; `torch.outer(int64 positions, bf16 inv_freq)` "
                    "promotes the positions to bf16"),),
        verdict="BUG as it trains: `model.bfloat16()` makes the buffer bf16 and `torch.outer` rounds the positions",
        tags=("issue21",),
    ),
    Target(
        name="modded-nanogpt-2026-08-01", package="modded-nanogpt", version="2026-08-01", pins=(), fetch="git",
        sources=_git(*_MODDED, ("train_gpt.py", "5afd951e0cde5e42c3e4e25a39288685f62aae13bd0d833a9a27de84f852d232")),
        what="modded-nanogpt `train_gpt.py` of 2026-08-01: `Yarn(head_dim, max_seq_len).rotary(x)`, half-truncated "
             "RoPE (half the pairs at frequency 0) with bf16 cos/sin tables built from float32 angles",
        scan=("train_gpt.py",),
        modules=(Module("Yarn.rotary (2026-08-01), adapter: forward(x) = yarn.rotary(x)",
                        _F + "modded_nanogpt_factory.py:make_2026_08"),),
        lengths=(2048, *LENGTHS),
        deps_note="a training script: only the `Yarn` class is executed from it, with the module-level `device` "
                  "set to \"cpu\" (`audits/targets/modded_nanogpt_factory.py`)",
        shows=(Show("Yarn.rotary (2026-08-01), adapter: forward(x) = yarn.rotary(x)", "bf16", 131072, "default",
                    "modded_2026_08",
                    "angles in float32 (`arange(..., dtype=torch.float32)`), only the tables are bf16"),),
        verdict="clean: float32 angles, bf16 tables by design",
        tags=("issue21",),
    ),
    Target(
        name="fair-esm-2.0.0", package="fair-esm", version="2.0.0", pins=("fair-esm==2.0.0",),
        what="Meta's ESM protein language models (ESM-2): `esm/rotary_embedding.py` "
             "`RotaryEmbedding(dim).forward(q, k)`, "
             "`einsum(\"i,j->ij\", t, inv_freq)` on float32 positions",
        scan=("esm/rotary_embedding.py", "esm/multihead_attention.py"),
        modules=(Module("RotaryEmbedding(64), native: forward(q, k) -> (q, k)",
                        _F + "einsum_rotary_factories.py:make_esm"),),
        lengths=(1024, 2048, *LENGTHS),
        deps_note="installed with --no-deps; the factory imports the rotary module without `esm/__init__`",
        shows=(Show("RotaryEmbedding(64), native: forward(q, k) -> (q, k)", "bf16", 1024, "autocast-cuda",
                    "einsum_autocast_cuda",
                    "CUDA bf16 AMP casts einsum's float32 inputs to bf16: positions rounded"),
               Show("RotaryEmbedding(64), native: forward(q, k) -> (q, k)", "bf16", 2048, "cast", "einsum_cast",
                    "a cast makes `inv_freq` bf16 and `arange(n).type_as(inv_freq)` rounds the positions"),),
        verdict="BUG under CUDA bf16 AMP (einsum is on CUDA's lower-precision list); a cast rounds the positions too",
        tags=("issue21",),
    ),
    Target(
        name="fairseq-3d262bb", package="fairseq", version="3d262bb", pins=(), fetch="git",
        sources=_git("facebookresearch/fairseq", "3d262bb25690e4eb2e7d3c1309b1e9c406ca4b99",
                     ("fairseq/modules/rotary_positional_embedding.py",
                      "5f11ef639a42ccff4852b32b9e3b549d7e702ea20ec60c6ad8df27d4e41fbea7")),
        what="fairseq's `RotaryPositionalEmbedding(dim, base, precision).forward(x, seq_len)` -> (cos, sin) "
             "(wav2vec 2.0 conformer), `einsum(\"i,j->ij\", t, inv_freq)`",
        scan=("fairseq/modules/rotary_positional_embedding.py",),
        modules=(Module("RotaryPositionalEmbedding(64), native: forward(x, seq_len) -> (cos, sin)",
                        _F + "einsum_rotary_factories.py:make_fairseq"),),
        lengths=(1024, 2048, *LENGTHS),
        deps_note="the rotary file imports only torch and is imported as is",
        shows=(Show("RotaryPositionalEmbedding(64), native: forward(x, seq_len) -> (cos, sin)", "bf16", 2048,
                    "autocast-cuda",
                    "einsum_autocast_cuda", "CUDA bf16 AMP casts einsum's float32 inputs to bf16: positions rounded"),
               Show("RotaryPositionalEmbedding(64), native: forward(x, seq_len) -> (cos, sin)", "bf16", 2048, "cast",
                    "einsum_cast",
                    "the trainer's `.half()` / `.bfloat16()` makes `inv_freq` low precision; `type_as` rounds "
                    "the positions"),),
        verdict="BUG under CUDA bf16 AMP (einsum); a cast rounds the positions too (`type_as(inv_freq)`)",
        tags=("issue21",),
    ),
    Target(
        name="xformers-0.0.22.post7", package="xformers", version="0.0.22.post7", pins=("xformers==0.0.22.post7",),
        what="xformers' `components/positional_embedding/rotary.py` `RotaryEmbedding(dim_model).forward(q, "
             "k)`: float32 "
             "positions, `einsum(\"i,j->ij\", t, inv_freq.to(x.dtype))`, tables cast to the input dtype",
        scan=("xformers/components/positional_embedding/rotary.py",),
        modules=(Module("RotaryEmbedding(64), native: forward(q, k) -> (q, k)",
                        _F + "einsum_rotary_factories.py:make_xformers"),),
        lengths=(1024, 2048, *LENGTHS),
        deps_note="the cp311 wheel installed with --no-deps (its CUDA extension is never loaded); the factory imports "
                  "the rotary module without `xformers/__init__`",
        shows=(Show("RotaryEmbedding(64), native: forward(q, k) -> (q, k)", "bf16", 2048, "autocast-cuda",
                    "einsum_autocast_cuda",
                    "CUDA bf16 AMP casts einsum's float32 positions to bf16"),
               Show("RotaryEmbedding(64), native: forward(q, k) -> (q, k)", "bf16", 2048, "cast", "xformers_cast",
                    "bf16 queries: `inv_freq.to(x.dtype)` rounds the frequencies, float32 positions stay exact"),),
        verdict="BUG under CUDA bf16 AMP (einsum); with bf16 inputs the frequencies are rounded in every run",
        tags=("issue21",),
    ),
    Target(
        name="gpt-neox-ea7aefd", package="gpt-neox", version="ea7aefd", pins=(), fetch="git",
        sources=_git(*_NEOX,
                     ("megatron/model/positional_embeddings.py",
                      "f30533e2c4e29d0296054612d5c7e17dacb5533fdcb15f20a174d1553aa6a840"),
                     ("megatron/model/transformer.py",
                      "68533208f74c2f0dda28f3a740d3409b3caa4a51b8fa9485ca80223b88dc6798"),
                     ("megatron/model/transformer_engine.py",
                      "adf8098983153aa2156d89cb91f4a59c14c3dc078a067dfb1da35090a7609738")),
        what="EleutherAI GPT-NeoX: `RotaryEmbedding(dim, max_seq_len, base, precision)` along its three paths: "
             "`forward(x, seq_len)` (cos, sin) in params_dtype for the torch and the fused kernels, and "
             "`get_emb()`, the angles `.to(precision)` that TransformerEngine applies",
        scan=("megatron/model/positional_embeddings.py", "megatron/model/transformer.py",
              "megatron/model/transformer_engine.py"),
        modules=(Module("forward(x, seq_len), params_dtype bf16 (torch and fused paths)",
                        _F + "gpt_neox_factory.py:make_forward_bf16", dtypes=("bf16",)),
                 Module("forward(x, seq_len), params_dtype fp16 (torch and fused paths)",
                        _F + "gpt_neox_factory.py:make_forward_fp16", dtypes=("fp16",)),
                 Module("get_emb() angles (TransformerEngine path), params_dtype bf16",
                        _F + "gpt_neox_factory.py:make_te_bf16", dtypes=("bf16",)),
                 Module("get_emb() angles (TransformerEngine path), params_dtype fp16",
                        _F + "gpt_neox_factory.py:make_te_fp16", dtypes=("fp16",))),
        lengths=(2048,),
        deps_note="`positional_embeddings.py` imports only torch and math; stated patch: `get_emb`'s `.cuda()` is "
                  "`.cpu()` (`audits/targets/gpt_neox_factory.py`); audited at seq_length 2,048 (the cache is "
                  "built for it and `forward` asserts `seq_len <= max_seq_len`)",
        shows=(Show("get_emb() angles (TransformerEngine path), params_dtype bf16", "bf16", 2048, "default",
                    "neox_te_bf16",
                    "TransformerEngine gets the float32 angles `.to(bf16)`: angles rounded"),
               Show("forward(x, seq_len), params_dtype bf16 (torch and fused paths)", "bf16", 2048, "cast",
                    "neox_forward_bf16",
                    "cos/sin computed in float32, stored in bf16: values rounded, positions exact")),
        verdict="BUG on the TransformerEngine path (`get_emb`: angles rounded to params_dtype); the torch / fused "
                "paths are exact",
        tags=("issue21",),
    ),
    Target(
        name="lit-llama-2a464de", package="lit-llama", version="2a464de", pins=(), fetch="git",
        sources=_git("Lightning-AI/lit-llama", "2a464de2a1d2f266614d15091d3d7f30330c3ede",
                     ("lit_llama/model.py", "7bf3cc3fba785b4fddaacc0d3172b61a0cdab4f8fa28c002cca1dc9bb1a22d44")),
        what="Lightning AI's lit-llama: `build_rope_cache(seq_len, n_elem, dtype=idx.dtype, device)` -> stacked "
             "`(seq, n_elem / 2, 2)` cache; `arange(0, n_elem, 2, dtype=int64) / n_elem` takes the default dtype",
        scan=("lit_llama/model.py",),
        modules=(Module("build_rope_cache, native: f(seq_len) -> stacked (seq, 64, 2) cache",
                        _F + "lit_factories.py:make_lit_llama",
                        args=_HD128),),
        lengths=(2048, *LENGTHS),
        deps_note="imports lightning: only `build_rope_cache` is executed from the file "
                  "(`audits/targets/lit_factories.py`)",
        shows=(Show("build_rope_cache, native: f(seq_len) -> stacked (seq, 64, 2) cache", "bf16", 2048, "default",
                    "lit_llama_default",
                    "under Fabric `bf16-true` (default dtype bf16) the int64 / int division gives bf16 frequencies, "
                    "and `torch.outer(int64 positions, bf16)` bf16 positions"),),
        verdict="BUG under `bf16-true` (default dtype): positions and frequencies in bf16",
        tags=("issue21",),
    ),
    Target(
        name="tinyllama-bf12224", package="TinyLlama", version="bf12224", pins=(), fetch="git",
        sources=_git("jzhang38/TinyLlama", "bf122247c486b6b897050e98cbb7bedae8eeba73",
                     ("lit_gpt/model.py", "42e8a2c983a8a4a65bc57e30e52793f1285102b7aa8b1251254436dd01dc6fa8")),
        what="TinyLlama's lit_gpt: `build_rope_cache(seq_len, n_elem, dtype=torch.bfloat16, device, condense_ratio)`, "
             "positions `arange(seq_len) / condense_ratio` in the default dtype",
        scan=("lit_gpt/model.py",),
        modules=(Module("build_rope_cache, native: f(seq_len) -> (cos, sin) bf16",
                        _F + "lit_factories.py:make_tinyllama",
                        args=("--head-dim", "64")),),
        lengths=(2048, *LENGTHS),
        deps_note="imports lightning: only `build_rope_cache` is executed from the file "
                  "(`audits/targets/lit_factories.py`)",
        shows=(Show("build_rope_cache, native: f(seq_len) -> (cos, sin) bf16", "bf16", 2048, "default",
                    "tinyllama_default",
                    "under Fabric `bf16-true` (default dtype bf16) `arange(seq_len) / condense_ratio` is bf16"),),
        verdict="BUG under `bf16-true` (default dtype): positions and frequencies in bf16",
        tags=("issue21",),
    ),
    Target(
        name="gpt-fast-32971d3", package="gpt-fast", version="32971d3", pins=(), fetch="git",
        sources=_git("pytorch-labs/gpt-fast", "32971d3129541c5bfb4f715abc33d1c5f408d204",
                     ("model.py", "2fa1bf3c9b768c4986ac6a4960770e0e2bb2ff9d4e1bffcca2daeeb2bf1f468b")),
        what="PyTorch gpt-fast: `precompute_freqs_cis(seq_len, n_elem, base, dtype=torch.bfloat16)` -> stacked "
             "`(seq, n_elem / 2, 2)` (cos, sin) cache cast to bf16",
        scan=("model.py",),
        modules=(Module("precompute_freqs_cis, native: f(seq_len, n_elem) -> stacked bf16 cache",
                        _F + "llama_family_factories.py:make_gpt_fast",
                        args=_HD128),),
        lengths=(2048, *LENGTHS),
        deps_note="the file imports only torch; its two rotary functions are executed from it",
        shows=(Show("precompute_freqs_cis, native: f(seq_len, n_elem) -> stacked bf16 cache", "bf16", 131072, "default",
                    "gpt_fast",
                    "int64 positions times float32 frequencies; only the stacked table is bf16"),),
        verdict="clean (positions int64, angles float32; the bf16 table rounds values only)",
        tags=("issue21",),
    ),
    Target(
        name="llama-689c7f2", package="meta-llama/llama", version="689c7f2", pins=(), fetch="git",
        sources=_git("meta-llama/llama", "689c7f261b9c5514636ecc3c5fefefcbb3e6eed7",
                     ("llama/model.py", "b409ea3db2a4029afd4129246d3b5e76ea95b6503364842545403dbcd7476281")),
        what="Meta's Llama 2 reference: `precompute_freqs_cis(dim, end, theta=10000.0)` -> complex64 `(end, dim / 2)`",
        scan=("llama/model.py",),
        modules=(Module("precompute_freqs_cis, native: f(dim, end) -> complex64",
                        _F + "llama_family_factories.py:make_llama", args=_HD128),),
        deps_note="imports fairscale: only `precompute_freqs_cis` is executed from the file",
        shows=(Show("precompute_freqs_cis, native: f(dim, end) -> complex64", "bf16", 131072, "default",
                    "llama_complex",
                    "float32 frequencies (`.float()`), int64 positions: complex64 in every scenario"),),
        verdict="clean",
        tags=("issue21",),
    ),
    Target(
        name="llama-models-0.3.0", package="llama-models", version="0.3.0", pins=("llama-models==0.3.0",),
        fetch="wheel",
        what="Meta's llama-models: Llama 3 `precompute_freqs_cis(dim, end, theta, use_scaled)` -> complex64",
        scan=("llama_models/llama3/model.py", "llama_models/llama4/model.py"),
        modules=(Module("llama3 precompute_freqs_cis, native: f(dim, end) -> complex64",
                        _F + "llama_family_factories.py:make_llama_models",
                        args=_HD128),),
        deps_note="the wheel is unpacked (its dependencies are not needed); only `apply_scaling` and "
                  "`precompute_freqs_cis` are executed from the file (it imports fairscale)",
        shows=(Show("llama3 precompute_freqs_cis, native: f(dim, end) -> complex64", "bf16", 131072, "default",
                    "llama_complex",
                    "float32 frequencies and positions (`dtype=torch.float32`)"),),
        verdict="clean",
        tags=("issue21",),
    ),
    Target(
        name="llm.c-f1e2ace", package="llm.c", version="f1e2ace", pins=(), fetch="git",
        sources=_git("karpathy/llm.c", "f1e2ace651495b74ae22d45d1723443fd00ecd3a",
                     ("train_llama3.py", "b49f74b5c429676f930cede4f4539197e65b24705d4e23ade8bb79bb38200816")),
        what="Karpathy's llm.c, the PyTorch reference of its Llama 3 trainer (`train_llama3.py`): "
             "`precompute_freqs_cis(dim, end, theta, use_scaled)` with Llama 3.1 scaling",
        scan=("train_llama3.py",),
        modules=(Module("precompute_freqs_cis(theta=500000, use_scaled=True), native: f(dim, end) -> complex64",
                        _F + "llama_family_factories.py:make_llm_c", args=_HD128),),
        deps_note="a training script: only `apply_scaling` and `precompute_freqs_cis` are executed from it",
        shows=(Show("precompute_freqs_cis(theta=500000, use_scaled=True), native: f(dim, end) -> complex64", "bf16",
                    131072,
                    "default", "llm_c", "float32 positions and (scaled) frequencies"),),
        verdict="clean",
        tags=("issue21",),
    ),
    Target(
        name="mistral-inference-1.6.0", package="mistral-inference", version="1.6.0", pins=("mistral-inference==1.6.0",
                                                                                            ),
        what="Mistral AI's mistral-inference: `precompute_freqs_cis(dim, end, theta)` (theta required) -> complex64",
        scan=("mistral_inference/rope.py", "mistral_inference/transformer.py"),
        modules=(Module("precompute_freqs_cis, native: f(dim, end, theta) -> complex64 (--base 1e6)",
                        _F + "llama_family_factories.py:make_mistral", args=(*_HD128, "--base", "1000000")),),
        deps_note="installed with --no-deps; the factory imports `mistral_inference/rope.py` without the package "
                  "`__init__`",
        shows=(Show("precompute_freqs_cis, native: f(dim, end, theta) -> complex64 (--base 1e6)", "bf16", 131072,
                    "default",
                    "mistral", "theta from --base; float32 frequencies, int64 positions"),),
        verdict="clean (audited natively with `--base 1e6`)",
        tags=("issue21",),
    ),
    Target(
        name="deepseek-v3-9b4e978", package="DeepSeek-V3", version="9b4e978", pins=(), fetch="git",
        sources=_git("deepseek-ai/DeepSeek-V3", "9b4e9788e4a3a731f7567338ed15d3ec549ce03b",
                     ("inference/model.py", "fdb7995bc234badbf0011b5af8cf391be94343abc51305428cb9a04452116f02")),
        what="DeepSeek-V3 inference: `precompute_freqs_cis(args)` (YaRN, factor 40 over 4,096 positions) registered "
             "as the complex64 `freqs_cis` buffer of 16,384 rows, sliced by `forward`",
        scan=("inference/model.py",),
        modules=(Module("freqs_cis buffer, adapter: forward(seq_len) = freqs_cis[:seq_len]",
                        _F + "deepseek_v3_factory.py:make"),),
        lengths=(16384, *LENGTHS),
        deps_note="imports its triton kernels: only `ModelArgs` and `precompute_freqs_cis` are executed from the file",
        shows=(Show("freqs_cis buffer, adapter: forward(seq_len) = freqs_cis[:seq_len]", "bf16", 16384, "default",
                    "deepseek_v3",
                    "as generate.py builds it (default dtype bf16): float32 angles, complex64 buffer"),),
        verdict="clean as generate.py runs it; lengths past the 16,384-row buffer are refused; a cast would drop the "
                "sine (RP123)",
        tags=("issue21",),
    ),
    Target(
        name="nanochat-92d63d4", package="nanochat", version="92d63d4", pins=(), fetch="git",
        sources=_git("karpathy/nanochat", "92d63d4e8bb4df75c3b71618f31ddde2378b2bcd",
                     ("nanochat/gpt.py", "8cdedc2e418b9d4dc45884e07f59904fcdec066bb3d76664b2adf2d415f704e3")),
        what="Karpathy's nanochat: `GPT._precompute_rotary_embeddings(seq_len, head_dim, base=100000)` -> (cos, sin) "
             "in the compute dtype, computed in float32",
        scan=("nanochat/gpt.py",),
        modules=(Module("_precompute_rotary_embeddings, native: f(seq_len) -> (cos, sin) bf16",
                        _F + "small_factories.py:make_nanochat"),),
        lengths=(2048, *LENGTHS),
        deps_note="only the `GPT` class is executed from the file, with `COMPUTE_DTYPE` bf16 "
                  "(`audits/targets/small_factories.py`)",
        shows=(Show("_precompute_rotary_embeddings, native: f(seq_len) -> (cos, sin) bf16", "bf16", 131072, "default",
                    "nanochat",
                    "float32 positions and frequencies, tables cast to bf16"),),
        verdict="clean",
        tags=("issue21",),
    ),
    Target(
        name="ai2-olmo-0.6.0", package="ai2-olmo", version="0.6.0", pins=("ai2-olmo==0.6.0",), fetch="wheel",
        what="AI2's OLMo (1.x): `olmo/model.py` `RotaryEmbedding(config, cache).forward(q, k)`, tables in float32 with "
             "autocast disabled",
        scan=("olmo/model.py",),
        modules=(Module("RotaryEmbedding (OLMo-7B), native: forward(q, k) -> (q, k)",
                        _F + "small_factories.py:make_olmo"),),
        lengths=(2048, *LENGTHS),
        deps_note="the wheel is unpacked (.py files of `olmo`; it also ships data sets); `BufferCache`, "
                  "`_non_meta_init_device` and `RotaryEmbedding` are executed from the file",
        shows=(Show("RotaryEmbedding (OLMo-7B), native: forward(q, k) -> (q, k)", "bf16", 2048, "autocast-cuda", "olmo",
                    "`torch.autocast(enabled=False)` around float32 positions"),
               Show("RotaryEmbedding (OLMo-7B), native: forward(q, k) -> (q, k)", "bf16", 2048, "cast", "olmo",
                    "no buffer to cast: the tables are a float32 cache built with autocast disabled"),),
        verdict="clean",
        tags=("issue21",),
    ),
    Target(
        name="opennmt-py-3.5.1", package="OpenNMT-py", version="3.5.1", pins=("OpenNMT-py==3.5.1",), fetch="wheel",
        what="OpenNMT-py: `onmt/modules/multi_headed_attn.py` `rotaryembeddings(dim, maxseqlen=2048, base, device)` -> "
             "(complex rope, cos, sin)",
        scan=("onmt/modules/multi_headed_attn.py",),
        modules=(Module("rotaryembeddings, native: f(dim, maxseqlen) -> (rope, cos, sin)",
                        _F + "small_factories.py:make_opennmt",
                        args=_HD128),),
        lengths=(2048, *LENGTHS),
        deps_note="the wheel is unpacked; only `rotaryembeddings` is executed from the file",
        shows=(Show("rotaryembeddings, native: f(dim, maxseqlen) -> (rope, cos, sin)", "bf16", 2048, "default",
                    "opennmt",
                    "int64 positions times float32 frequencies; the complex rope `cat((rope, rope), 1)` read as "
                    "rotate-half (rotary dims 128)"),),
        verdict="clean",
        tags=("issue21",),
    ),
    Target(
        name="mesh-transformer-jax-f8315e3", package="GPT-J (mesh-transformer-jax)", version="f8315e3", pins=(),
        fetch="git",
        sources=_git("kingoflolz/mesh-transformer-jax", "f8315e3003033b23f21d78361b288953064e0e76",
                     ("mesh_transformer/layers.py",
                      "5ee2eafd07329c183ecd44cc3459e50b79444f97244438bda4a5ac197643d984")),
        what="GPT-J-6B's training code (JAX / haiku): `fixed_pos_embedding(x, seq_dim)`, numpy float64 sin / cos",
        scan=("mesh_transformer/layers.py",),
        modules=(Module("fixed_pos_embedding, adapter: forward(x) -> (cos, sin) float32",
                        _F + "small_factories.py:make_gptj"),),
        lengths=(2048, *LENGTHS),
        deps_note="JAX code: only the numpy function `fixed_pos_embedding` is executed from the file (the "
                  "torch adapter "
                  "converts its output to float32 as JAX does); the static scan reads torch only",
        shows=(Show("fixed_pos_embedding, adapter: forward(x) -> (cos, sin) float32", "bf16", 2048, "default", "gptj",
                    "numpy float64 positions and angles; no torch precision setting reaches them"),),
        verdict="clean (numpy float64; the torch scenarios cannot reach it)",
        tags=("issue21",),
    ),
)

TARGETS = TARGETS + ISSUE21

# issue 21's implementations audited by the static scan only (no runtime factory: what each runs on is
# stated in runtime_note); no brute-force row, so they are not in ISSUE21's table
ISSUE21_STATIC: tuple[Target, ...] = (
    Target(
        name="sglang-0.5.23", package="sglang", version="0.5.23", pins=("sglang==0.5.23",), fetch="wheel",
        what="SGLang: the rotary embeddings of `sglang/srt/layers/rotary_embedding/` (base, YaRN, MRoPE, "
             "Bailing MRoPE, Llama 4 vision and the other variants)",
        scan=("sglang/srt/layers/rotary_embedding",),
        runtime_note="static scan only: `base.py` imports sglang's platform layer, server environment and runtime "
                     "context at module level (and `sgl_kernel` on CUDA / XPU); by reading, its cos/sin cache is "
                     "built from float32 positions (`arange(..., dtype=torch.float)`), as vLLM's",
        tags=("issue21",),
    ),
    Target(
        name="fairseq2-0.8.1", package="fairseq2", version="0.8.1", pins=("fairseq2==0.8.1",), fetch="wheel",
        what="fairseq2: `fairseq2/nn/position_encoder.py` (`RotaryEncoder`, `ReferenceRotaryEncoder`, sinusoidal "
             "and learned encoders)",
        scan=("fairseq2/nn/position_encoder.py",),
        runtime_note="static scan only: fairseq2 imports its native library `fairseq2n` (a compiled wheel pinned to "
                     "one torch version) at package import",
        tags=("issue21",),
    ),
    Target(
        name="keras-hub-0.32.0", package="keras-hub", version="0.32.0", pins=("keras-hub==0.32.0",), fetch="wheel",
        what="KerasHub (formerly KerasNLP): `keras_hub/src/layers/modeling/rotary_embedding.py` `RotaryEmbedding`, "
             "written in `keras.ops`",
        scan=("keras_hub/src/layers/modeling/rotary_embedding.py",),
        runtime_note="static scan only, which reads torch, not keras.ops (RP117 says so in the output); keras is "
                     "not installed here",
        tags=("issue21",),
    ),
    Target(
        name="mlx-lm-0.32.2", package="mlx-lm", version="0.32.2", pins=("mlx-lm==0.32.2",), fetch="wheel",
        what="mlx-lm: `mlx_lm/models/rope_utils.py` (Llama 3, YaRN, SuScaled and the other RoPE classes over "
             "`mx.fast.rope`), written in MLX",
        scan=("mlx_lm/models/rope_utils.py",),
        runtime_note="static scan only, which reads torch, not mlx (RP117 says so in the output); mlx is not "
                     "installed here",
        tags=("issue21",),
    ),
)

TARGETS = TARGETS + ISSUE21_STATIC
