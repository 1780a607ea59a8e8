"""Issue 33's rotary-code corpus: real implementations beyond audits/catalog.py's targets, each file pinned
(``package==version path`` + sha256; never committed), each static finding judged against the code's dtype
flow, each miss named, and a numpy + ml_dtypes brute force (``audits/brute_force.py``) of the scenario that
shows its verdict, compared with the runtime audit where the code can be called.

The files come from wheels / sdists that ``pip download --no-deps PACKAGE==VERSION`` fetches into
``$ROPELAW_AUDIT_CORPUS`` (CI's corpus step; ``tests/test_audits_corpus.py`` reads them from there and skips,
naming them, the entries whose archive is absent). ``python audits/precision.py`` writes the precision table
of docs/audits.md from this manifest and the committed reports.

Verdicts: "TP" a finding whose mechanism loses precision in the run it names (cast, default dtype,
autocast; "cast only" in the reason when only a ``model.to(dtype)`` reaches it); "FP" a finding whose
claim does not hold, with the reason it remains. A miss: a loss the brute force or the runtime audit shows
that no finding names.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Truth:
    """A scenario and its brute force (``audits/brute_force.py`` function); ``factory``: the runtime audit's
    ``audits/targets/corpus_factories.py`` function for the same code (None: not called at run time)."""

    scenario: str
    dtype: str
    length: int
    brute: str
    what: str
    factory: str | None = None
    exact: int = -1      # the brute force's counts, recorded (the test recomputes them)
    distinct: int = -1
    not_run: str = ""    # why the runtime audit does not call this code (factory None), where it was tried


@dataclass(frozen=True)
class Entry:
    name: str
    package: str
    version: str
    archive: str         # the file pip download writes
    path: str            # inside the archive (an sdist: below its top folder)
    sha256: str          # of that file
    findings: tuple[tuple[str, int, str, str], ...] = ()  # (code, line, "TP" | "FP", why)
    misses: tuple[tuple[str, int, str], ...] = ()          # (rule it would be, line, why no finding)
    truths: tuple[Truth, ...] = field(default_factory=tuple)
    # a file published only in a repository: read at ``repo@commit`` (``path`` inside it), never committed; looked
    # up as ``<owner>__<name>@<commit>/<path>`` under audits/run.py's ``source_roots()`` (``archive`` is "")
    repo: str = ""
    commit: str = ""

    @property
    def pin(self) -> str:
        return f"{self.repo}@{self.commit[:7]}" if self.repo else f"{self.package}=={self.version}"

    @property
    def local(self) -> str:
        """Where a repository file is kept in a source store (audits/run.py ``source_roots()``)."""
        return f"{self.repo.replace('/', '__')}@{self.commit}/{self.path}"


def _github(name: str, repo: str, commit: str, path: str, sha256: str, **kw) -> Entry:
    """An entry read from a public repository at a pinned commit (its ``package`` the repository's name)."""
    return Entry(name, repo.split("/")[1], commit[:7], "", path, sha256, repo=repo, commit=commit, **kw)


CAST = "cast only: `model.to(bf16)` rounds the buffer"
# why the runtime audit does not call an entry's code (``Truth.not_run``)
_JAX = ("JAX code: the runtime audit calls torch modules, and jax is not installed where it runs (the test venv); "
        "brute force only")
_CENTRED = ("coordinates centred in [-1, 1) (not 0 at the first position): the runtime audit's conventions take "
            "integer positions from 0, none fits; brute force, checked against the library's code run by torch "
            "(tests/test_audits_corpus.py)")
_GRID = ("2-D tables built at construction for one patch grid, `forward(x, patch_resolution)`: no convention the "
         "runtime audit calls fits; brute force, checked against the library's code run by torch "
         "(tests/test_audits_corpus.py)")

ENTRIES: tuple[Entry, ...] = (
    Entry("torchscale XPos", "torchscale", "0.3.0", "torchscale-0.3.0-py3-none-any.whl",
          "torchscale/component/xpos_relative_position.py",
          "d337ba30c5b837018839d6c442832fe12cf237f9d9b7422d53db7b20fd18b991",
          findings=(("RP111", 12, "TP", "float32 angles `.to(x)`: rounded to x's dtype before sin / cos (bf16 cast: "
                                        "350 of 2,048 exact, brute force and runtime)"),
                    ("RP113", 12, "TP", "the einsum is on CUDA autocast's lower-precision list (policy table)"),
                    ("RP101", 53, "TP", "XPos positions `arange(...).to(self.scale)`: bf16 after a cast, the "
                                        "scale zeta^(p/gamma) from rounded positions (|p| up to L/2)")),
          misses=(("RP116", 10,
                   "bf16 default dtype only (bf16-true): `arange(0, dim) / dim` is int64 / int, the default "
                                "dtype (bf16, checked with torch 2.13), so the frequencies are rounded before the "
                                "einsum; `arange(0, dim)` over a feature dimension is not read as exponents: read so, "
                                "BS-RoFormer's time embedding (`arange(half_dim)`, flow_bs_roformer.py:331) "
                                "would get a "
                                "false RP116"),),
          truths=(Truth("cast", "fp16", 2048, "torchscale_xpos_cast", "angles rounded to fp16: every position "
                        "keeps its encoding", "make_torchscale_xpos", 2048, 2048),
                  Truth("cast", "bf16", 2048, "torchscale_xpos_cast", "angles rounded to bf16",
                        "make_torchscale_xpos", 350, 2042))),
    Entry("torchscale RetNet", "torchscale", "0.3.0", "torchscale-0.3.0-py3-none-any.whl",
          "torchscale/architecture/retnet.py",
          "ed643b6dc5ea27fbb5a7e7135349235926aa4dcca91978d726c724a32bb23f2c",
          findings=(("RP121", 28, "TP", f"`angle` (1 / 10000 ** linspace): {CAST}"),
                    ("RP101", 38, "TP", "chunkwise form: `arange(slen).to(self.decay)`, bf16 after a cast"),
                    ("RP101", 42, "TP", "chunk positions `.to(self.decay)` for the decay mask: rounded beyond 256 "
                                        "(recurrent_chunk_size 512 and up)"),
                    ("RP101", 59, "TP", "parallel form: bf16 positions times the bf16 `angle`: 293 of 2,048 exact"),
                    ("RP111", 34, "TP",
                     "recurrent form: `self.angle * (slen - 1)`, the cast buffer times a Python int: "
                                        "the product is bf16 (the int is not rounded first, the angle is)"),
                    ("RP111", 35, "TP", "as line 34, for the cosine")),
          truths=(Truth("cast", "bf16", 2048, "torchscale_retnet_cast", "positions and angles in bf16",
                        "make_torchscale_retnet", 293, 641),)),
    Entry("PaLM-rlhf", "palm-rlhf-pytorch", "0.8.0", "palm_rlhf_pytorch-0.8.0-py3-none-any.whl",
          "palm_rlhf_pytorch/palm.py", "32b6465ea835d01833df25ceb66d024cfe6e6ffcdec61eefd8cf957cfdf2c125",
          findings=(("RP121", 75, "TP", CAST),
                    ("RP101", 83, "TP", "`arange(n).type_as(self.inv_freq)`: bf16 after a cast (as fairseq's)"),
                    ("RP113", 84, "TP", "einsum outside autocast(enabled=False): bf16 under CUDA AMP")),
          truths=(Truth("cast", "bf16", 2048, "einsum_cast", "positions and product in bf16 (d = 64)", None,
                        355, 641),)),
    Entry("torchtune RoPE", "torchtune", "0.6.1", "torchtune-0.6.1-py3-none-any.whl",
          "torchtune/modules/position_embeddings.py",
          "3dc8b1e3eed7461d80255e7b7c1acef391a9bea56a4cdca388c126033bfa1666",
          truths=(Truth("cast", "bf16", 2048, "gpt_fast", "cache built once from float32 theta; a cast rounds its "
                        "values only", None, 2048, 2048),)),
    Entry("torchtune Llama 3.1 RoPE", "torchtune", "0.6.1", "torchtune-0.6.1-py3-none-any.whl",
          "torchtune/models/llama3_1/_position_embeddings.py",
          "122f6c5f727d60ca6c76c2520a2fe7639f8f67e7bd6d6e8b675375646c8497c9",
          findings=(("RP101", 90, "FP", "build_rope_cache runs at construction (rope_init) from theta = "
                                        "apply_scaling(freqs), float32 (`torch.tensor(..., dtype=freqs.dtype)` of an "
                                        "explicit .float()); the scan does not follow a method's return dtype"),)),
    Entry("torchtune Qwen2 RoPE", "torchtune", "0.6.1", "torchtune-0.6.1-py3-none-any.whl",
          "torchtune/models/qwen2/_positional_embeddings.py",
          "ea430b83077ebca9ab68e3719dfa7562b8f9c9e3982cb5c69e73246ba67cfe2b"),
    Entry("torchtune Phi-3 RoPE", "torchtune", "0.6.1", "torchtune-0.6.1-py3-none-any.whl",
          "torchtune/models/phi3/_position_embeddings.py",
          "e00c07a8f98415761bdbcdf81c2ee88fd7d3c0b981dc0c6f9a90e96c78e9acf9"),
    Entry("OLMo-core RoPE", "ai2-olmo-core", "3.0.0", "ai2_olmo_core-3.0.0-py3-none-any.whl",
          "olmo_core/nn/rope.py", "a3ea5e4274068e3b8a31f87f2470e1a16f56c7528f94cf425c7fc50761e6ba7c",
          truths=(Truth("cast", "bf16", 2048, "olmo", "inv_freq recomputed in float32 under autocast(enabled=False)",
                        None, 2048, 2048),)),
    Entry("ESM3 rotary", "esm", "3.2.1.post1", "esm-3.2.1.post1-py3-none-any.whl", "esm/layers/rotary.py",
          "6595c71ceaa676d5ccbb07a7e1f0289a57b22ec94bf690024608f03bfa018939",
          findings=(("RP121", 127, "TP", f"{CAST}; `.to(torch.float32)` of the cast buffer restores nothing"),
                    ("RP101", 172, "TP", "the pos_idx_in_fp32=False path (opt-in): positions in inv_freq's dtype"),
                    ("RP101", 184, "TP",
                     "the XPos path (scale_base set, opt-in): positions in the scale buffer's dtype"),
                    ("RP122", 207, "TP", "the cache is rebuilt from the cast inv_freq (cast only)"))),
    Entry("local-attention rotary", "local-attention", "1.11.2", "local_attention-1.11.2-py3-none-any.whl",
          "local_attention/rotary.py", "87993b31458e6f464a4892908f3fe342677a03842d1cb5b6357f31a8adc83ea2",
          findings=(("RP121", 21, "TP", CAST),
                    ("RP101", 37, "TP", "`arange(n).type_as(self.inv_freq)`: bf16 after a cast")),
          truths=(Truth("cast", "bf16", 2048, "einsum_cast", "positions and product in bf16 (d = 64)", None,
                        355, 641),)),
    Entry("Moshi RoPE", "moshi", "0.2.13", "moshi-0.2.13-py3-none-any.whl", "moshi/modules/rope.py",
          "95845e4521fd15a914e3f841f1158e7533f114bf5106575e24db053a50c871e8"),
    Entry("AudioCraft RoPE", "audiocraft", "1.3.0", "audiocraft-1.3.0.tar.gz", "audiocraft/modules/rope.py",
          "782ec2eb0c68d31bcd3ee749393078f9972faf854b1740d3885a03230454e51a",
          findings=(("RP121", 70, "TP", f"`frequencies`: {CAST} (positions stay float32: self.dtype asserted)"),)),
    Entry("stable-audio-tools", "stable-audio-tools", "0.0.19", "stable_audio_tools-0.0.19-py3-none-any.whl",
          "stable_audio_tools/models/transformer.py",
          "d6e692ddb79dd1410837829ab4a5b0efe94703bb04f184ddf65336c08f3f8527",
          findings=(("RP121", 77, "TP", f"ScaledSinusoidalEmbedding `inv_freq`: {CAST}"),
                    ("RP101", 88, "TP", "int64 positions times the cast buffer: bf16 product"),
                    ("RP113", 88, "TP", "the same einsum without a cast: CUDA AMP runs it on a bf16 copy of the "
                                        "buffer, int64 positions times it in bf16"),
                    ("RP121", 109, "TP", f"RotaryEmbedding `inv_freq`: {CAST}"))),
    Entry("llm-foundry ALiBi", "llm-foundry", "0.22.0", "llm_foundry-0.22.0-py3-none-any.whl",
          "llmfoundry/models/layers/attention.py",
          "3ec6d3dae459e7b871c9cdf7c156880fc29503932328afff5525ad4cfcfe457a",
          findings=(("RP132", 1137, "TP", "the bias slope * distance `.to(dtype)` of the model: bf16 distances "
                                          "beyond 256 share a bias"),)),
    Entry("diffusers embeddings (Flux, HunyuanDiT, CogVideoX rotary)", "diffusers", "0.42.1",
          "diffusers-0.42.1-py3-none-any.whl", "diffusers/models/embeddings.py",
          "512e9bb699552661ba5323b7a84f1d52a6f3ee0d1390bb35d69caeacd8caf903",
          findings=(("RP116", 1140, "TP", "SinusoidalPositionalEmbedding's frequencies in the default dtype are "
                                          "rounded under bf16-true; its 32 positions stay exact (no RP115)"),)),
    Entry("OpenCLIP sin-cos embeddings", "open-clip-torch", "3.3.0", "open_clip_torch-3.3.0-py3-none-any.whl",
          "open_clip/pos_embed.py", "153ba2e3de1e50ca1d3b5ffe20309ac8ec085a682c9d1b3f802844b2cc418cbf"),
    Entry("MEGABYTE", "MEGABYTE-pytorch", "0.3.6", "MEGABYTE_pytorch-0.3.6-py3-none-any.whl",
          "MEGABYTE_pytorch/megabyte.py", "702e673327071d69eefce30469c14e72cf067615cc37958f4ee1f6f0e0f56eb8",
          findings=(("RP121", 78, "TP", CAST),
                    ("RP101", 86, "TP", "`arange(n).type_as(self.inv_freq)`: bf16 after a cast (forward under "
                                        "autocast(enabled=False): no RP113)")),
          truths=(Truth("cast", "bf16", 2048, "einsum_cast", "positions and product in bf16 (dim_head 64)", None,
                        355, 641),)),
    Entry("Block-Recurrent Transformer", "block-recurrent-transformer-pytorch", "0.4.4",
          "block_recurrent_transformer_pytorch-0.4.4-py3-none-any.whl",
          "block_recurrent_transformer_pytorch/block_recurrent_transformer_pytorch.py",
          "c7a5c79a82ff0b7ee3332cb3e4e5764abed1e2e0f6bf976d3f5537911a4cb825",
          findings=(("RP121", 141, "TP", CAST), ("RP101", 162, "TP", "`type_as(self.inv_freq)`: bf16 after a cast"),
                    ("RP113", 163, "TP", "einsum outside autocast(enabled=False): bf16 under CUDA AMP"))),
    Entry("BS-RoFormer (flow)", "bs-roformer", "1.2.4", "bs_roformer-1.2.4-py3-none-any.whl",
          "bs_roformer/flow_bs_roformer.py", "cee0d2ea3d9e1a3afb56e1ce802a365116760182c82a73f7a54ae05272570a82",
          findings=(("RP121", 332, "FP", "SinusoidalPosEmb of the flow-matching time t in [0, 1], not positions: "
                                         "a rounded frequency moves its phase by at most 2^-9 rad; the scan cannot "
                                         "know what the embedding is fed"),)),
    Entry("CoLT5", "colt5-attention", "0.11.2", "colt5_attention-0.11.2-py3-none-any.whl",
          "colt5_attention/transformer_block.py", "f98d9fd1019eed0464f941230424f86fea8922ffbdde4eb6f8ef45b78b528aaa",
          findings=(("RP121", 69, "TP", CAST), ("RP101", 76, "TP", "`type_as(self.inv_freq)`: bf16 after a cast"),
                    ("RP113", 77, "TP", "einsum outside autocast(enabled=False): bf16 under CUDA AMP")),
          truths=(Truth("cast", "bf16", 2048, "einsum_cast", "positions and product in bf16 (dim_head 64)", None,
                        355, 641),)),
    Entry("Recurrent Memory Transformer", "recurrent-memory-transformer-pytorch", "0.7.0",
          "recurrent_memory_transformer_pytorch-0.7.0-py3-none-any.whl",
          "recurrent_memory_transformer_pytorch/recurrent_memory_transformer.py",
          "2cadc43bede617c638515e1a42e50f076c8c8df5e6bf8ad306e827b945a2360d",
          findings=(("RP121", 81, "TP", CAST),
                    ("RP101", 84, "TP",
                     "int64 `positions` times the cast buffer: a bf16 product (positions from 10,000 "
                                        "on: bf16 keeps every 64th); its callers `self.rotary_pos_emb(q_pos)`, q_pos "
                                        "= `torch.arange(n) + 10000` padded, are followed through the attribute"),
                    ("RP113", 84, "TP", "einsum outside autocast(enabled=False): bf16 under CUDA AMP"))),
    Entry("RoFormer (TensorFlow)", "roformer", "0.4.3", "roformer-0.4.3-py3-none-any.whl",
          "roformer/modeling_tf_roformer.py", "50abf76efe3b4b361b9a85c8c9006c7b8189d03b48eb2356520f9f38be89cd04",
          findings=(("RP117", 22, "TP", "TensorFlow rotary code, not analysed: said, never passed"),)),
    Entry("RoFormer (torch)", "roformer", "0.4.3", "roformer-0.4.3-py3-none-any.whl",
          "roformer/modeling_roformer.py", "3ba23b64ef56c23971cb2af6bca262cc558d2752db274eca42d916f76c4326f1"),
    Entry("F5-TTS", "f5-tts", "1.1.22", "f5_tts-1.1.22-py3-none-any.whl", "f5_tts/model/modules.py",
          "92a1d97756bc7773a75c20e0e2fc913b3220f2ae2e6f042126f3ad8a57da9ce8"),
    Entry("Perceiver AR", "perceiver-ar-pytorch", "0.0.10", "perceiver_ar_pytorch-0.0.10-py3-none-any.whl",
          "perceiver_ar_pytorch/perceiver_ar_pytorch.py",
          "290ac9d5519e2b30aac32cc8423f8e5af763671a0176cb3a8f39ea9609fc05db",
          findings=(("RP121", 31, "TP", CAST),
                    ("RP101", 34, "TP", "`arange(n, dtype=self.inv_freq.dtype)`: the seed-004 line"),
                    ("RP113", 35, "TP", "einsum outside autocast(enabled=False): bf16 under CUDA AMP"))),
    Entry("SoundStorm", "soundstorm-pytorch", "0.6.1", "soundstorm_pytorch-0.6.1-py3-none-any.whl",
          "soundstorm_pytorch/soundstorm.py", "aa111ed24a78f811151ecc0aa9df06fb8276e03ed2fc242f366b9cfc34fc9085",
          findings=(("RP121", 137, "TP", CAST), ("RP101", 145, "TP", "`type_as(self.inv_freq)`: bf16 after a cast"))),
    Entry("Voicebox", "voicebox-pytorch", "0.5.0", "voicebox_pytorch-0.5.0-py3-none-any.whl",
          "voicebox_pytorch/voicebox_pytorch.py", "052a388e2f90fa9bad6f7d91af537cfc1df86dfc548ce660b1b2bb5345813999",
          findings=(("RP121", 176, "TP", CAST), ("RP101", 188, "TP", "`t.type_as(self.inv_freq)`: bf16 after a cast"))),
    # ------------------------------------------------------------------ issue 33, second part: 26 more files
    # (the first file with rotary / sinusoid frequencies that grep finds in each package of a list made before
    # scanning; packages whose code audits/catalog.py already audits (torchtitan, nanotron) left out; SAM 2 from
    # torchao's wheel: the sam2 sdist makes pip download build its metadata with torch, 4 minutes)
    Entry("NeMo 1.x RoPE", "nemo-toolkit", "1.23.0", "nemo_toolkit-1.23.0-py3-none-any.whl",
          "nemo/collections/nlp/modules/common/megatron/position_embedding/rotary_position_embedding.py",
          "66e20b9042ee40d7a42db5bf2489d72758e9639125a6ddfacaab5490497f0e3d",
          findings=(("RP121", 48, "TP", f"{CAST} (`megatron_amp_O2`'s Float16Module casts the model)"),
                    ("RP101", 53, "TP", "`seq.type_as(self.inv_freq)`: bf16 after the cast"),
                    ("RP113", 63, "TP", "einsum not under autocast(enabled=False): bf16 under CUDA AMP (O1)")),
          truths=(Truth("cast", "bf16", 4096, "einsum_cast_d128", "positions and product in bf16 (kv channels "
                        "128)", "make_nemo_rope", 307, 769),)),
    Entry("NeMo 1.x XPos", "nemo-toolkit", "1.23.0", "nemo_toolkit-1.23.0-py3-none-any.whl",
          "nemo/collections/nlp/modules/common/megatron/position_embedding/xpos_position_embedding.py",
          "643b1760b991680826353daf69acfe3abffdcfb3c6c2b650900fd55e9b4a71a5",
          findings=(("RP113", 24, "TP", "the einsum is on CUDA autocast's lower-precision list"),
                    ("RP111", 24, "TP", "float32 angles `.to(x)`: rounded to the scale's dtype before sin / cos "
                                        "(torchscale's code, scale_base 2048)"),
                    ("RP101", 65, "TP", "`arange(...).to(self.scale)`: bf16 positions of the XPos scale after a "
                                        "cast")),
          misses=(("RP116", 23,
                   "bf16 default dtype only (bf16-true): `arange(0, dim) / dim` is int64 / int, the default "
                                "dtype (bf16, checked with torch 2.13), so the frequencies are rounded before the "
                                "einsum; `arange(0, dim)` over a feature dimension is not read as exponents: read so, "
                                "BS-RoFormer's time embedding (`arange(half_dim)`, flow_bs_roformer.py:331) "
                                "would get a "
                                "false RP116"),),
          truths=(Truth("cast", "bf16", 2048, "nemo_xpos_cast", "angles rounded to bf16", "make_nemo_xpos", 350,
                        2044),
                  Truth("cast", "fp16", 2048, "nemo_xpos_cast", "angles rounded to fp16: every position keeps "
                        "its encoding", "make_nemo_xpos", 2048, 2048))),
    Entry("SAM 2 axial RoPE (torchao's copy)", "torchao", "0.18.0",
          "torchao-0.18.0-cp310-abi3-manylinux_2_24_x86_64.manylinux_2_28_x86_64.whl",
          "torchao/_models/sam2/modeling/position_encoding.py",
          "864393dc31e513941da3fa9be14fe6bad16e10541c9980557d1982fa2c29d131",
          truths=(Truth("cast", "bf16", 64, "llama_complex", "float32 frequencies and axial positions (64 per "
                        "axis), complex64, held as a plain attribute (`.to()` leaves it)", None, 64, 64),)),
    Entry("fla rotary (flash-attn's)", "fla-core", "0.6.0", "fla_core-0.6.0-py3-none-any.whl",
          "fla/modules/rotary/ops.py", "dfeb4bbf0afecad7f708d3b9a795ce78d14c23947a62b16b41455546adda08a0",
          findings=(("RP121", 398, "TP", f"{CAST}; read by the pos_idx_in_fp32=False path (opt-in; the "
                                         "default path recomputes float32 frequencies, line 456), as ESM3's"),
                    ("RP101", 461, "TP", "the pos_idx_in_fp32=False path (opt-in): positions in inv_freq's dtype"),
                    ("RP101", 471, "TP", "XPos branch (scale_base set): decay positions in the scale buffer's dtype "
                                         "(flash-attn's RP101, cast only)"),
                    ("RP122", 512, "TP", "the rebuild from the cast inv_freq on the opt-in path (ESM3's verdict)"),
                    ("RP122", 514, "TP", "as line 512")),
          truths=(Truth("cast", "bf16", 2048, "gpt_fast", "default path: float32 positions and recomputed "
                        "frequencies, tables `.to(q.dtype)`", None, 2048, 2048),)),
    Entry("Moirai RoPE projection", "uni2ts", "2.0.0", "uni2ts-2.0.0-py3-none-any.whl",
          "uni2ts/module/position/attn_projection.py",
          "52911ba9ffb23647f21a072f3b67a3582144f46250d2de1e44c92b6add6f7208",
          findings=(("RP121", 69, "TP", f"`theta`: {CAST}; read again only when a sequence outgrows max_len"),
                    ("RP101", 85, "TP", "`arange(max_len, dtype=self.theta.dtype)`: bf16 when forward rebuilds the "
                                        "tables past max_len (512) after a cast; the tables built in __init__ are "
                                        "float32")),
          truths=(Truth("cast", "bf16", 512, "gpt_fast", "within max_len the float32 tables built in __init__, "
                        "rounded by the cast", None, 512, 512),)),
    Entry("StripedHyena scaled RoPE", "stripedhyena", "0.2.2", "stripedhyena-0.2.2-py3-none-any.whl",
          "stripedhyena/positional_embeddings.py",
          "8661df228d597d2e765aa67e0a954d6e0cbd7e6c2268aae79be5f386d181501c",
          findings=(("RP101", 67, "TP", "the pos_idx_in_fp32=False path (opt-in): positions in inv_freq's dtype"),
                    ("RP101", 79, "TP", "XPos branch: decay positions in the scale buffer's dtype (cast only)")),
          truths=(Truth("cast", "bf16", 2048, "gpt_fast", "default path: float32 positions, float32 recomputed "
                        "frequencies, tables `.to(dtype)`", None, 2048, 2048),)),
    Entry("EVA-02 RoPE (mmpretrain)", "mmpretrain", "1.2.0", "mmpretrain-1.2.0-py2.py3-none-any.whl",
          "mmpretrain/models/utils/position_encoding.py",
          "4a0b1bda70c831267d81829d96d69f81284a1b94c270dc74c2ba681f31f0a31e",
          findings=(("RP115", 215, "FP", "under a bf16 default dtype `th` is bf16 and `th[:, None] @ frequency` "
                                         "(float32: `.float()`) raises (matmul needs one dtype), so no run rounds "
                                         "these positions; i / h * half_dim is exact for EVA-02's 16 and 32 "
                                         "grids anyway"),
                    ("RP115", 216, "FP", "as line 215 (`tw`)")),
          truths=(Truth("cast", "bf16", 16, "eva02_cast", "16 x 16 grid (EVA-02 at 224): float32 tables built at "
                        "construction, rounded by the cast", None, 16, 16, not_run=_GRID),
                  Truth("cast", "fp16", 16, "eva02_cast", "as in bf16", None, 16, 16, not_run=_GRID),
                  Truth("cast", "bf16", 32, "eva02_cast", "32 x 32 grid (EVA-02 at 448)", None, 32, 32,
                        not_run=_GRID))),
    Entry("SpeechBrain RoPE and RelPosEncXL", "speechbrain", "1.1.2", "speechbrain-1.1.2-py3-none-any.whl",
          "speechbrain/nnet/attention.py", "f101b9716bb3bc16eea380d9f4e903f9b1f4bcbff605f8d8fccc040d690929dc",
          findings=(("RP121", 355, "TP", f"RelPosEncXL `inv_freq`: {CAST} (its comment invites "
                                         "`posenc.to(torch.float16)`); float32 positions times it stay float32"),),
          truths=(Truth("cast", "bf16", 2048, "gpt_fast", "PrecomputedRoPESinusoids: float32 build, tables stored "
                        "in the model's dtype", None, 2048, 2048),)),
    Entry("Modalities GPT-2 RoPE", "modalities", "0.5.0", "modalities-0.5.0-py3-none-any.whl",
          "modalities/models/gpt2/gpt2_model.py", "7522735f3ec35fb20d8ac33cceaeb1c2e2d1741b52304d9d1e31d2342de7c5e5",
          findings=(("RP121", 149, "TP", CAST),
                    ("RP111", 178, "TP", "`inv_freq.to(x.dtype)`: bf16 frequencies in every bf16 run (FSDP mixed "
                                         "precision), float32 positions, a float32 product of rounded frequencies"),
                    ("RP113", 178, "TP", "CUDA AMP only: the einsum would run in bf16 under autocast; Modalities "
                                         "trains under FSDP mixed precision (nanotron's verdict)")),
          truths=(Truth("default", "bf16", 2048, "xformers_cast", "frequencies rounded, positions exact, tables "
                        "`.to(x.dtype)` (head dim 64)", None, 2048, 2048),)),
    Entry("vit-pytorch N-d rotary", "vit-pytorch", "1.26.11", "vit_pytorch-1.26.11-py3-none-any.whl",
          "vit_pytorch/vit_nd_rotary.py", "b13e3727b8e5c396de117dd1e8428cf92250ac950769fc1691c341157e8b0a79",
          findings=(("RP121", 74, "TP", f"`freqs` (directions * omega, omega up to 10,000): {CAST}; float32 "
                                        "coordinates times the rounded buffer"),),
          truths=(Truth("cast", "bf16", 256, "vit_nd_cast", "one axis of 256 patches: float32 coordinates times the "
                        "rounded frequencies, float32 angles", "make_vit_nd_rope", 256, 256),
                  Truth("cast", "fp16", 256, "vit_nd_cast", "as in bf16", "make_vit_nd_rope", 256, 256))),
    Entry("vit-pytorch ViT-5 axial RoPE", "vit-pytorch", "1.26.11", "vit_pytorch-1.26.11-py3-none-any.whl",
          "vit_pytorch/vit_5.py", "cf9b62918ec53af0d245524ec08f815ee42c316dc56faf401fb168f556263a0b",
          findings=(("RP121", 57, "TP", f"`patch_inv_freq`: {CAST}"),
                    ("RP121", 60, "TP", f"`reg_inv_freq`: {CAST}"),
                    ("RP111", 70, "FP", "angles of at most sqrt(num_patches) positions per axis: up to 256 every one "
                                        "keeps its encoding in bf16 and fp16 (brute force vit5_axial_cast); the "
                                        "scan does not bound `arange(n)` by the patch grid"),
                    ("RP111", 80, "FP", "4 register positions: exact")),
          truths=(Truth("cast", "bf16", 256, "vit5_axial_cast", "one axis of 256 patches, positions, frequencies "
                        "and product in bf16", None, 256, 256),)),
    Entry("vit-pytorch LeJEPA video rotary", "vit-pytorch", "1.26.11", "vit_pytorch-1.26.11-py3-none-any.whl",
          "vit_pytorch/levjepa.py", "a1ff488784d01994e5de0214916afad34254919052d004c8c1717a74c037fbc3",
          truths=(Truth("cast", "bf16", 16, "levjepa_cast", "16 frames, coordinates in [-1, 1) float32 times the "
                        "rounded scales: float32 angles", None, 16, 16, not_run=_CENTRED),)),
    Entry("Ring Attention rotary", "ring-attention-pytorch", "0.5.20",
          "ring_attention_pytorch-0.5.20-py3-none-any.whl", "ring_attention_pytorch/ring_attention.py",
          "7216bf5c6cf74b5688a1ee5456005b7037a4db714ace7bb6797bb89d5e8724ad",
          findings=(("RP121", 118, "TP", CAST),
                    ("RP101", 159, "TP", "`pos.type_as(self.inv_freq)`: bf16 after a cast (forward under "
                                         "autocast(enabled=False): no RP113)")),
          truths=(Truth("cast", "bf16", 2048, "einsum_cast", "positions and product in bf16 (dim_head 64)",
                        "make_ring_rope", 355, 641),)),
    Entry("FlagAI Transformer-XL sinusoid", "flagai", "1.8.4", "flagai-1.8.4-py3-none-any.whl",
          "flagai/model/layers/embeddings.py", "cc0fcb5213ed8be830222695e1521c587af0160a9127d9faa58dd479d181df2b",
          findings=(("RP121", 56, "TP", f"relative sinusoid `inv_freq`: {CAST}"),),
          misses=(("RP101", 59, "`torch.ger(pos_seq, self.inv_freq)`: GLM (glm_model.py:231, another file) passes "
                                "`arange(..., dtype=hidden_states.dtype)`, bf16 positions after a cast, and "
                                "the product "
                                "is bf16 (281 of 1,024 exact); `pos_seq` is an untyped argument and the scan "
                                "reads one file "
                                "at a time: the caller that makes it bf16 is in another file"),),
          truths=(Truth("cast", "bf16", 1024, "flagai_txl_cast", "GLM-large (hidden 1,024): positions in bf16 (as "
                        "CUDA's arange makes them), product and sin / cos in bf16", "make_flagai_txl", 281, 513),
                  Truth("cast", "fp16", 1024, "flagai_txl_cast", "fp16 positions exact below 2,049; the fp16 "
                        "product keeps every encoding", "make_flagai_txl", 1024, 1024))),
    Entry("FlagAI Aquila2", "flagai", "1.8.4", "flagai-1.8.4-py3-none-any.whl",
          "flagai/model/aquila2/modeling_aquila.py",
          "894005eeb9a1b36bf2f62584f889218a679b64e1100d17e712474fc0abd86098",
          findings=(("RP121", 112, "TP", CAST),
                    ("RP101", 121, "TP", "transformers 4.3x's line: the cache rebuilt past max_position_embeddings "
                                         "after a cast has bf16 positions (seed 004)"),
                    ("RP113", 123, "TP", "CUDA AMP, when the cache is rebuilt (transformers' verdict)"),
                    ("RP122", 132, "TP", "the rebuild from the cast inv_freq (cast only)"),
                    ("RP101", 149, "TP", "linear scaling: as line 121"),
                    ("RP113", 152, "TP", "as line 123"),
                    ("RP113", 178, "TP", "dynamic NTK, as line 123 (its positions are float32: no RP101)")),
          truths=(Truth("cast", "bf16", 4096, "einsum_cast_d128", "the cache rebuilt past 2,048 in bf16 (head "
                        "dim 128)", None, 307, 769),)),
    Entry("Chronos-2 RoPE", "chronos-forecasting", "2.3.2", "chronos_forecasting-2.3.2-py3-none-any.whl",
          "chronos/chronos2/layers.py", "73493f306ecfaa21fa57636ff46321ccb5d50ded02a382598cf759dbfc9dd60f",
          findings=(("RP121", 48, "TP", f"{CAST} (transformers' current RoPE: float32 positions and product of "
                                        "the rounded frequencies)"),),
          truths=(Truth("cast", "bf16", 2048, "xformers_cast", "frequencies rounded, positions exact (d_kv 64)",
                        "make_chronos2_rope", 2048, 2048),)),
    Entry("RecurrentGemma RoPE (torch)", "recurrentgemma", "1.0.1", "recurrentgemma-1.0.1-py3-none-any.whl",
          "recurrentgemma/torch/modules.py", "5295d0a52d5dd5b7c7e5281c8d6eccd1a3298090a4f239de9c5c678cf9deed7c",
          findings=(("RP116", 73, "TP", "bf16 default dtype only: `2 * arange(x_rope.shape[-1] // 2) / d` and the "
                                        "frequencies take the default dtype, int64 positions times them are rounded "
                                        "(309 of 2,048 exact); `arange(x.shape[-1] // 2)` is read as pair indices "
                                        "(exponents), as `arange(0, d, 2)`"),),
          truths=(Truth("default", "bf16", 2048, "recurrentgemma_default", "frequencies and positions in the "
                        "default dtype", None, 309, 641),)),
    Entry("RecurrentGemma RoPE (JAX)", "recurrentgemma", "1.0.1", "recurrentgemma-1.0.1-py3-none-any.whl",
          "recurrentgemma/jax/modules.py", "81c492ccc61b387552edefebe820dfae50a6bc5ec12b8d73c547e70902312b2d",
          findings=(("RP117", 19, "TP", "JAX rotary code, not analysed: said, never passed"),),
          truths=(Truth("bf16 inputs", "bf16", 2048, "gpt_fast", "float32 frequencies and angles (rotary on 128 of "
                        "head dim 256), sin / cos `.astype(inputs.dtype)`: gpt-fast's flow", None, 2048, 2048,
                        not_run=_JAX),)),
    Entry("X-CLIP rotary", "x-clip", "0.14.4", "x_clip-0.14.4-py3-none-any.whl", "x_clip/x_clip.py",
          "29e7631193c2388fc5700754a75111e3b6b93970b4a38820e8a78dc6423c09f0",
          findings=(("RP121", 159, "TP", CAST), ("RP101", 163, "TP", "`type_as(inv_freq)`: bf16 after a cast"),
                    ("RP113", 164, "TP", "einsum not under autocast(enabled=False): bf16 under CUDA AMP")),
          truths=(Truth("cast", "bf16", 2048, "einsum_cast", "positions and product in bf16 (dim_head 64)",
                        "make_xclip_rope", 355, 641),)),
    Entry("Gemma (JAX) RoPE", "gemma", "3.3.0", "gemma-3.3.0-py3-none-any.whl",
          "gemma/gm/math/_positional_embeddings.py",
          "6359116b5c74e58ef0d60c5e0f8d7b44ddc8ddaefa7e988e5104945eb54f430e",
          findings=(("RP117", 17, "TP", "JAX rotary code, not analysed: said, never passed"),),
          truths=(Truth("bf16 inputs", "bf16", 8192, "gemma_jax", "head dim 256: int32 positions / float32 "
                        "timescale, float32 sin / cos (the rotated values rounded only)", None, 8192, 8192,
                        not_run=_JAX),)),
    Entry("TimesFM 3 RoPE", "timesfm", "3.0.2", "timesfm-3.0.2-py3-none-any.whl", "timesfm3/torch/transformer.py",
          "fc23e20a6cb65c41080ed7a2afc5442f89760ce6756bcf10d186bd8b533382a6",
          findings=(("RP121", 103, "TP", f"`timescale`: {CAST}; float32 positions divided by it"),),
          truths=(Truth("cast", "bf16", 2048, "timesfm3_cast", "float32 positions / the rounded timescale: float32 "
                        "angles (head dim 80)", "make_timesfm3_rope", 2048, 2048),
                  Truth("cast", "fp16", 2048, "timesfm3_cast", "as in bf16", "make_timesfm3_rope", 2048, 2048))),
    Entry("WhisperSpeech rotary", "WhisperSpeech", "0.8.9", "WhisperSpeech-0.8.9-py3-none-any.whl",
          "whisperspeech/modules.py", "6d184612427fcacb9de0c6b764c36aa05f1ca601596b0c8b0d61fa37f1cf599f",
          findings=(("RP121", 161, "TP", CAST),
                    ("RP101", 172, "TP", "`arange(2500).type_as(self.inv_freq)`: bf16 after a cast"),
                    ("RP113", 173, "TP", "einsum outside autocast(enabled=False): bf16 under CUDA AMP")),
          truths=(Truth("cast", "bf16", 2048, "einsum_cast", "positions and product in bf16 (head dim 64)", None,
                        355, 641),)),
    Entry("ESM efficient rotary", "esm-efficient", "0.0.9", "esm_efficient-0.0.9-py3-none-any.whl",
          "esme/rotary.py", "40eed83b2f6185372196242b2567b961b9653f7d59d69da6b719ce20bdb2a661",
          findings=(("RP121", 104, "TP", f"{CAST}; read by the pos_idx_in_fp32=False path (opt-in; the "
                                         "default path recomputes float32 frequencies, line 137), as ESM3's"),
                    ("RP101", 142, "TP", "the pos_idx_in_fp32=False path (opt-in): positions in inv_freq's dtype"),
                    ("RP122", 163, "TP", "the rebuild from the cast inv_freq on the opt-in path (ESM3's verdict)")),
          truths=(Truth("cast", "bf16", 2048, "gpt_fast", "default path: float32 positions and recomputed "
                        "frequencies, tables `.to(q.dtype)`", None, 2048, 2048),)),
    Entry("Fish Speech text2semantic RoPE", "fish-speech", "0.1.0", "fish_speech-0.1.0-py3-none-any.whl",
          "fish_speech/models/text2semantic/llama.py",
          "7eee00cdfba3f50fd22cdfbd4cc5630e2c2e975bb1720f21c4d54c49fc8e983c",
          truths=(Truth("cast", "bf16", 2048, "gpt_fast", "gpt-fast's cache: float32 build, stored bf16",
                        "make_fish_speech_rope", 2048, 2048),)),
    Entry("LTX-Video fractional RoPE", "ltx-video", "0.1.2", "ltx_video-0.1.2-py3-none-any.whl",
          "ltx_video/models/transformers/transformer3d.py",
          "eed52784c19145dca531bb20cb6f98e2f7e01862b55e3c13ee86b7c1b8399f81",
          truths=(Truth("cast", "bf16", 64, "ltx_video_cast", "one spatial axis of 64 latent rows: float32 fractional "
                        "positions and angles, cos / sin `.to(self.dtype)`", None, 64, 64, not_run=_CENTRED),)),
    Entry("Cosmos-Predict2 3-D RoPE", "cosmos-predict2", "1.0.9", "cosmos_predict2-1.0.9-py3-none-any.whl",
          "cosmos_predict2/models/text2image_dit.py",
          "65cf184a8522545ad93763b224abdc86b59b161cc55b2ea40116bcc871aa3152",
          findings=(("RP121", 711, "FP", "FourierFeatures of the noise level (random EDM frequencies), not "
                                         "positions; the scan cannot know what the embedding is fed"),),
          truths=(Truth("cast", "bf16", 256, "cosmos_axis_cast", "VideoRopePosition3DEmb after `net.to(bf16)`: its "
                        "`seq` and exponent buffers rounded, angles in bf16; 256 positions of an axis keep their "
                        "encoding (no miss)", None, 256, 256),)),
    # ------------------------------------------------------------------ issue 33, third part: the implementations the
    # issue names that are published only on GitHub, each at one commit (the newest of its snapshot; InternLM at its
    # fix 2863575 "Fix the error that RotaryEmbedding is converted to a non-fp32 format during training" and its
    # parent on that file, 54f85a6); kept outside the repository (/work/fetched/i33-precision/git), sha256 below
    _github("text-generation-inference rotary", "huggingface/text-generation-inference",
            "db931fcf42da018a3657580c64bf2720f167f9ab", "server/text_generation_server/layers/rotary.py",
            "63167eb5c87519c80a27a255103d47f83df341508c62dd579f9c5d0ec0002817",
            truths=(Truth("cast", "bf16", 2048, "tgi_serve", "inv_freq a plain float32 attribute (never a buffer), "
                          "float32 positions and product, cos / sin in the model's dtype", "make_tgi_rope", 2048, 2048),
                    Truth("cast", "fp16", 2048, "tgi_serve", "the same in fp16", "make_tgi_rope", 2048, 2048))),
    _github("YaRN reference (LlamaYaRNScaledRotaryEmbedding)", "jquesnelle/yarn",
            "995db5b575e75230b3384d658f8b944c9662f775", "scaled_rope/LlamaYaRNScaledRotaryEmbedding.py",
            "fa097066e5792239ff4375dd84ed65d6c01bce8a2b6f1083dd4504151210a4af",
            findings=(("RP101", 62, "TP", "the cache rebuild in `forward` (seq_len > max_position_embeddings, 65,536 "
                                          "for Yarn-Llama-2-7b-64k): positions in the cast `inv_freq`'s dtype"),
                      ("RP113", 63, "TP", "the rebuild's einsum outside autocast(enabled=False): bf16 under CUDA AMP "
                                          "(YaRN's fine-tuning runs accelerate in bf16)"),
                      ("RP121", 83, "TP", f"{CAST}; read again only by the rebuild (line 62)")),
            truths=(Truth("cast", "bf16", 2048, "yarn_reference_cast", "cache built at construction from float32 "
                          "inv_freq (mscale 1.277); the cast rounds its values only", "make_yarn_reference",
                          2048, 2048),)),
    _github("YaRN reference (modeling_llama_yarn)", "jquesnelle/yarn", "995db5b575e75230b3384d658f8b944c9662f775",
            "scaled_rope/modeling_llama_yarn.py", "e0f9ff6d1ea79045f63309f0b26814b84aa23a5a0cbf19a442d544e93f4a0c84",
            findings=(("RP121", 155, "TP", f"{CAST}; read again by a rebuild past max_position_embeddings"),
                      ("RP101", 164, "TP", "`_set_cos_sin_cache` from `forward` (seq_len > the cache): positions in "
                                           "the cast `inv_freq`'s dtype (transformers 4.3x's llama code)"),
                      ("RP122", 175, "TP", "that rebuild, from the rounded `inv_freq` (cast only)"),
                      ("RP101", 192, "TP", "the linear-scaling subclass's rebuild: as line 164"),
                      ("RP101", 261, "TP", "the rebuild in `forward`: positions in the cast `inv_freq`'s dtype"),
                      ("RP113", 262, "TP", "the rebuild's einsum: bf16 under CUDA AMP"),
                      ("RP121", 282, "TP", f"{CAST}; read again by the rebuild (line 261)"),
                      ("RP113", 327, "TP", "the dynamic rebuild's einsum: bf16 under CUDA AMP"))),
    _github("InternLM rotary before its fix", "InternLM/InternLM", "54f85a6e9aff6eea7f5fdce647e887678d5ce44c",
            "internlm/model/embedding.py", "a6bd997a015b7a6739e5a6e33ebdd4c17dffb7e1030074b8f43018a2b24e50dc",
            findings=(("RP121", 141, "TP", f"{CAST} (InternLM's training casts the model: its fix's message)"),
                      ("RP101", 166, "TP", "`arange(seqlen, dtype=self.inv_freq.dtype)`: bf16 after the cast; 306 of "
                                           "2,048 exact (brute force and runtime)"),
                      ("RP101", 175, "TP", "the XPos path (scale_base > 0, opt-in; InternLM's default 0): positions "
                                           "in the scale buffer's dtype")),
            truths=(Truth("cast", "bf16", 2048, "internlm_cast", "positions, inv_freq and product in bf16 (d = 128)",
                          "make_internlm_rope", 306, 641),)),
    _github("InternLM rotary after its fix", "InternLM/InternLM", "28635755f52adef113099856756fb1195dc9a8c6",
            "internlm/model/embedding.py", "eb37af1b89f2a468a569621004ba5e22daf0c0e5c2f5965fb5916b81b158bd88",
            truths=(Truth("cast", "bf16", 2048, "internlm_fixed", "inv_freq a plain float32 attribute: the cast "
                          "leaves it, cos / sin rounded only", "make_internlm_rope", 2048, 2048),)),
    _github("EasyLM LLaMA rotary", "young-geng/EasyLM", "fe5b2c354e25d697fce7cd225e23bbbe72570da3",
            "EasyLM/models/llama/llama_model.py", "65852a41eda19da1ab43514124e3a828c2095b59674ec9e6c48de28046d66c6c",
            findings=(("RP117", 5, "TP", "JAX rotary code, not analysed: said, never passed"),),
            truths=(Truth("bf16 inputs", "bf16", 2048, "easylm", "float32 frequencies and positions, complex64, "
                          "queries cast to float32", None, 2048, 2048, not_run=_JAX),)),
    _github("Flux rope (2x2 matrices)", "black-forest-labs/flux", "802fb4713906133fcbd0d8dc5351620ca4773036",
            "src/flux/math.py", "deb49b7873d5dae369ff83945f8fea67c9eb7b73efdbb198518a72a349024128",
            truths=(Truth("cast", "bf16", 128, "flux_axis", "float32 ids and omega (the denoising loop runs outside "
                          "autocast); 128 latent rows = 2,048 px", "make_flux_rope", 128, 128),)),
    _github("Gemma PyTorch precompute_freqs_cis", "google/gemma_pytorch", "014acb7ac4563a5f77c76d7ff98f31b568c16508",
            "gemma/model.py", "0a8d3617867caad99adf5428b3e68242b5c067c9666e5efa578837d34db9b089",
            truths=(Truth("default", "bf16", 2048, "gemma_pytorch_default", "built under set_default_dtype(bf16) "
                          "(scripts/run.py): `.float()` frequencies, complex64", "make_gemma_pytorch", 2048, 2048),)),
)


def archives() -> list[str]:
    """``package==version`` of every archive the corpus reads (CI's pip download step; not the repository files)."""
    return sorted({e.pin for e in ENTRIES if not e.repo})


if __name__ == "__main__":  # `python audits/corpus.py`: the pins CI's corpus step downloads, one a line
    print("\n".join(archives()))
