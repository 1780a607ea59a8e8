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

    @property
    def pin(self) -> str:
        return f"{self.package}=={self.version}"


CAST = "cast only: `model.to(bf16)` rounds the buffer"

ENTRIES: tuple[Entry, ...] = (
    Entry("torchscale XPos", "torchscale", "0.3.0", "torchscale-0.3.0-py3-none-any.whl",
          "torchscale/component/xpos_relative_position.py",
          "d337ba30c5b837018839d6c442832fe12cf237f9d9b7422d53db7b20fd18b991",
          findings=(("RP111", 12, "TP", "float32 angles `.to(x)`: rounded to x's dtype before sin / cos (bf16 cast: "
                                        "350 of 2,048 exact, brute force and runtime)"),
                    ("RP113", 12, "TP", "the einsum is on CUDA autocast's lower-precision list (policy table)"),
                    ("RP101", 53, "TP", "XPos positions `arange(...).to(self.scale)`: bf16 after a cast, the "
                                        "scale zeta^(p/gamma) from rounded positions (|p| up to L/2)")),
          truths=(Truth("cast", "fp16", 2048, "torchscale_xpos_cast", "angles rounded to fp16: every position "
                        "keeps its encoding", "make_torchscale_xpos", 2048, 2048),
                  Truth("cast", "bf16", 2048, "torchscale_xpos_cast", "angles rounded to bf16",
                        "make_torchscale_xpos", 350, 2048))),
    Entry("torchscale RetNet", "torchscale", "0.3.0", "torchscale-0.3.0-py3-none-any.whl",
          "torchscale/architecture/retnet.py",
          "ed643b6dc5ea27fbb5a7e7135349235926aa4dcca91978d726c724a32bb23f2c",
          findings=(("RP121", 28, "TP", f"`angle` (1 / 10000 ** linspace): {CAST}"),
                    ("RP101", 38, "TP", "chunkwise form: `arange(slen).to(self.decay)`, bf16 after a cast"),
                    ("RP101", 42, "TP", "chunk positions `.to(self.decay)` for the decay mask: rounded beyond 256 "
                                        "(recurrent_chunk_size 512 and up)"),
                    ("RP101", 59, "TP", "parallel form: bf16 positions times the bf16 `angle`: 293 of 2,048 exact")),
          misses=(("RP111", 34, "recurrent form: `self.angle * (slen - 1)`, a bf16 buffer times a Python int in "
                                "bf16; an int is not read as a position"),),
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
                    ("RP101", 184, "TP", "the XPos path (scale_base set, opt-in): positions in the scale buffer's dtype"),
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
                    ("RP113", 84, "TP", "einsum outside autocast(enabled=False): bf16 under CUDA AMP")),
          misses=(("RP101", 84, "int64 `positions` (its callers pass torch.arange) times the cast buffer: a bf16 "
                                "product; an argument named `positions` is not known to be int64"),)),
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
)


def archives() -> list[str]:
    """``package==version`` of every archive the corpus reads (CI's pip download step)."""
    return sorted({e.pin for e in ENTRIES})


if __name__ == "__main__":  # `python audits/corpus.py`: the pins CI's corpus step downloads, one a line
    print("\n".join(archives()))
