"""What reading each target's code showed: verdicts that the measurements alone cannot give.

``verdict_for`` judges one static finding (REAL / REAL (cast only) / FALSE POSITIVE ...); the
report prints it with the runtime evidence of the same class next to it, so a note that the
measurements contradict is visible. ``target_notes`` adds per-version paragraphs, and
``target_verdict`` writes a target's summary line from its numbers. Facts, not code, are
recorded here.
"""

from __future__ import annotations

import re
from typing import Any

FROM_PRETRAINED = ("`from_pretrained(..., torch_dtype=torch.bfloat16)` and `from_config(..., torch_dtype=...)` "
                   "keep inv_freq in float32 (checked with 4.31.0, 4.38.2, 4.57.1 and 5.23.0: the buffer is "
                   "created with an explicit `.float()`), while `model.to(torch.bfloat16)`, `.half()`, "
                   "`.bfloat16()` and the trainers that call them (DeepSpeed, the seed's case) cast it")


def _v(version: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", version)[:3])


# (package, code, buffer regex, scope regex, min version, max version, "VERDICT: why"): rules about one named
# buffer (the finding's ``data["buffer"]``); checked before RULES.
BUFFER_RULES: list[tuple[str, str, str, str, str, str, str]] = [
    ("transformers", "RP121", r"^original_inv_freq$", r"RotaryEmbedding\.__init__$", "5.0.0", "",
     "REAL (cast only): from 5.0 the copy that dynamic and long-rope scaling restore inv_freq from is a buffer "
     "too (`self.original_inv_freq = nn.Buffer(inv_freq.clone(), persistent=False)`; up to 4.57 it was a plain "
     "attribute holding the float32 tensor, which `.to()` does not touch), so `model.to(bf16)` rounds it as well: "
     "`dynamic_frequency_update` re-registers inv_freq from it and `longrope_frequency_update` copies it into "
     "inv_freq, so the float32 frequencies can no longer be restored after a cast. With the default rope type it "
     "is never read (the rounding that matters there is inv_freq's, the finding on the line above). "
     + "{from_pretrained}"),
]

# (package, code, scope regex, path regex, min version, max version, "VERDICT: why"); first match wins.
RULES: list[tuple[str, str, str, str, str, str, str]] = [
    # ---------------------------------------------------------------- transformers
    ("transformers", "RP101", r"DynamicNTKScalingRotaryEmbedding\._set_cos_sin_cache$", "", "", "",
     "FALSE POSITIVE: from forward this only runs when the sequence is longer than max_position_embeddings, "
     "and then the lines just above re-register inv_freq from a fresh float32 tensor, so the positions are "
     "built in float32; at __init__ no cast has happened yet"),
    ("transformers", "RP101", r"RotaryEmbedding\.__init__$", "", "", "",
     "FALSE POSITIVE: in __init__ the buffer has just been created in float32 (explicit `.float()`), no cast "
     "can have happened yet, so the cache built here is exact (from 4.38 on it is also a backward-"
     "compatibility cache that the attention no longer reads)"),
    ("transformers", "RP101",
     r"(RotaryEmbedding\._set_cos_sin_cache|RotaryEmbedding\.forward|RotaryEmbedding\.cos_sin)$",
     "", "", "",
     "REAL (cast only): runs from forward whenever the sequence outgrows the cached length "
     "(max_position_embeddings at first), after `model.to(bf16)` has turned inv_freq into bf16: positions "
     "`arange(..., dtype=self.inv_freq.dtype)` and the angle product are then bf16, the seed 004 bug. "
     "Contexts within max_position_embeddings use the float32 cache built at __init__ and stay exact"),
    ("transformers", "RP122", r"", "", "", "",
     "REAL (cast only): this call rebuilds the cos/sin cache from the cast inv_freq when the sequence "
     "outgrows max_position_embeddings (the RP101 finding in the method it calls is the line that rounds)"),
    ("transformers", "RP121",
     r"(_dynamic_frequency_update|_longrope_frequency_update|DynamicNTKScalingRotaryEmbedding\.(forward|_set_cos_sin_cache))$",
     "", "", "",
     "FALSE POSITIVE (duplicate): this re-registers inv_freq during forward (dynamic / long-rope scaling) "
     "from a freshly computed float32 tensor or the float32 original, i.e. after any cast; it restores "
     "float32 frequencies rather than rounding them (the cast rounding is the __init__ finding)"),
    ("transformers", "RP121", r"^GemmaRotaryEmbedding\.__init__$", "", "4.38.0", "4.40.99",
     "FALSE POSITIVE: here the buffer is registered as None and inv_freq is computed in float32 at the first "
     "forward, i.e. after a cast made when the model is loaded, so the cast never rounds it (the runtime drift "
     "is at float32 level); only a cast made after the first forward would. From 4.45 Gemma uses the shared "
     "init and the cast does round it"),
    ("transformers", "RP121", r"RotaryEmbedding\.__init__$", "", "", "",
     "REAL (cast only): inv_freq is a float buffer, so a cast rounds every frequency (bf16: up to 2^-8 "
     "relative, 3.65e-3 measured for base 10000), and the phase error grows with the position. "
     + FROM_PRETRAINED),
    ("transformers", "RP131", r"build_alibi_tensor", "falcon", "", "",
     "REAL (ALiBi Falcon configs only): the slopes are converted to bfloat16 explicitly before they multiply "
     "the token distances, in every precision, so the bias is bf16 whatever the model dtype; for a power-of-"
     "two head count the slopes are powers of two and the bias is exact only where the distance is: 896 of "
     "8,192 distances (`ropelaw exact --dtype bf16 --length 8192`). Reached when `config.alibi` is true (the "
     "falcon-rw models); the rotary Falcon models never call it. Not measured at runtime (the runtime audit "
     "measures rotary modules)"),
    # ---------------------------------------------------------------- rotary-embedding-torch
    ("rotary-embedding-torch", "RP102", r"get_seq_pos", "", "", "",
     "REAL: `rotate_queries_or_keys(q)` passes q's dtype here, so with bf16/fp16 queries (any mixed-precision "
     "run: under autocast the q/k projections return bf16 too) positions are `arange(n, dtype=bf16)`; the "
     "`freqs` parameter is also rounded by a cast and the product is taken in its dtype"),
    # ---------------------------------------------------------------- x-transformers
    ("x-transformers", "RP121", r"^RotaryEmbedding\.__init__$", "", "", "",
     "REAL (cast only): a persistent float inv_freq buffer (rounded by a cast and saved so in the state "
     "dict, see the checkpoint audit); worse, forward converts the int64 positions with "
     "`t.type_as(self.inv_freq)`, so after a cast positions and angles are bf16 (the runtime collapse; the "
     "RP101 finding in `RotaryEmbedding.forward`)"),
    ("x-transformers", "RP101", r"^RotaryEmbedding\.forward$", "", "", "",
     "REAL (cast only): `torch.einsum('b i , j -> b i j', t.type_as(self.inv_freq), self.inv_freq)` converts "
     "the int64 positions to the buffer's dtype; `@disable_autocast` keeps autocast out and inv_freq is created "
     "with an explicit `.float()` (so `set_default_dtype` does not reach it either), but after `model.to(bf16)` "
     "positions and angles are bf16: the cast scenario collapses to 4.36% exact at 8K, fp16 overflows from "
     "65,520 on, while default and autocast stay exact"),
    ("x-transformers", "RP101", r"^PolarEmbedding\.forward$", "", "", "",
     "REAL (cast only), by reading: the same line as `RotaryEmbedding.forward` "
     "(`einsum(..., t.type_as(self.inv_freq), self.inv_freq)` under `@disable_autocast`, inv_freq a persistent "
     "float buffer), so after a cast the positions and angles are bf16; `apply_polar_pos_emb` upcasts only "
     "the input (`t.float()`), not the already rounded angles. Not run at runtime (the factory builds "
     "`RotaryEmbedding`)"),
    ("x-transformers", "RP101", r"^ScaledSinusoidalEmbedding\.forward$", "", "", "",
     "REAL (cast only), by reading: `einsum('i, j -> i j', pos, self.inv_freq)` with `pos = arange(seq_len)` "
     "(int64) and inv_freq a float buffer (non-persistent, still cast by `.to()`): torch.einsum promotes the "
     "pair to the buffer's dtype, so after `model.to(bf16)` positions are bf16 (checked with torch 2.13.0: "
     "position 4,097 becomes 4,096); exact in a float32 model. Absolute sinusoidal embedding "
     "(`scaled_sinu_pos_emb=True`), not rotary; not run at runtime"),
    ("x-transformers", "RP121", r"^PolarEmbedding\.__init__$", "", "", "",
     "REAL (cast only), by reading: the same pattern as RotaryEmbedding (persistent float inv_freq, "
     "positions converted with `t.type_as(self.inv_freq)` in forward); not run at runtime"),
    ("x-transformers", "RP121", r"^ScaledSinusoidalEmbedding\.__init__$", "", "", "",
     "REAL (cast only), by reading: absolute sinusoidal embedding (`scaled_sinu_pos_emb=True`), not rotary; "
     "forward takes `einsum('i, j -> i j', pos, self.inv_freq)` with int64 positions, which type promotion "
     "turns into bf16 once the buffer is cast (position 4,097 becomes 4,096); not run at runtime"),
    # ---------------------------------------------------------------- timm
    ("timm", "RP121", r"^(RotaryEmbedding|RotaryEmbeddingCat)\.__init__$", "pos_embed_sincos", "", "0.99.99",
     "REAL (cast only), by reading: when no feat_shape is given the frequency bands are kept as a float buffer "
     "`bands` (`freq_bands` / `pixel_freq_bands`, computed in float32) and `get_embed` rebuilds the sin/cos "
     "tables from them at every call; `model.half()` / `.to(bf16)` rounds the bands (bf16: up to 2^-8 "
     "relative). The grid positions are built in float32 and `grid * bands` promotes to float32, so positions "
     "do not collide; only the frequencies are off. With feat_shape given, the sin/cos tables are cached "
     "buffers computed in float32 and cast afterwards (no rounded frequencies). EVA (`timm/models/eva.py`) "
     "builds `RotaryEmbeddingCat` with `feat_shape=None` when `dynamic_img_size=True`, i.e. takes the bands path "
     "then; no model in this version builds the plain `RotaryEmbedding`. Not run at runtime"),
    ("timm", "RP121", r"^FourierEmbed\.__init__$", "pos_embed_sincos", "", "0.99.99",
     "REAL (cast only), by reading: Fourier-feature embedding (concatenated to the input, not rotary) whose "
     "`bands` (`pixel_freq_bands`, float32) are a non-persistent float buffer, rounded by a cast; the grid "
     "stays float32, the product is float32 with rounded bands. Exported from timm.layers, used by no timm "
     "model in this version. Not run at runtime"),
    ("timm", "RP121", r"^FourierEmbed\.__init__$", "pos_embed_sincos", "1.0.0", "",
     "REAL (cast only), by reading: the one frequency buffer 1.0.31 leaves without the `_apply` repair. "
     "`register_buffer('bands', torch.empty(num_bands, dtype=dtype))` is filled by `copy_` from "
     "`pixel_freq_bands` (float32) and is not created through `_freq_buffer_dtype`, and FourierEmbed does not "
     "override `_apply`: `model.to(bf16)` rounds the bands (and building it with `dtype=torch.bfloat16` does "
     "too; `init_non_persistent_buffers` copies back into the rounded dtype). The grid stays float32 and the "
     "product is float32 with rounded bands, so no position collides. A Fourier-feature embedding (not "
     "rotary), exported from timm.layers and used by no timm model in this version. Not run at runtime"),
    # ---------------------------------------------------------------- megatron-core
    ("megatron-core", "RP113", r"^MultimodalRotaryEmbedding\.forward$", "", "", "",
     "REAL (autocast): `freqs = (inv_freq_expanded @ seq_expanded)` is a matrix product with no "
     "`autocast(enabled=False)` around it, so under a caller's bf16 autocast (Megatron's own mixed-precision "
     "training runs the model in bf16 params, but any user autocast reaches it) the angles are computed in bf16: "
     "the runtime audit of the MRoPE module measures 4.03% of 8,192 positions exact under autocast, exact "
     "under cast and default dtype (inv_freq is a plain float32 attribute, which `.to()` does not cast)"),
    # ---------------------------------------------------------------- torchtitan
    ("torchtitan", "RP123", r"^RoPE\.__init__$", "common/rope", "", "",
     "REAL (`.to(dtype)` casts): `RoPE.__init__` registers `self._precompute_cache()` as a (non-persistent) "
     "buffer, and `ComplexRoPE._precompute_cache` returns `torch.polar(...)` (complex64). `model.to(torch.bfloat16)` "
     "(also fp16, even float64) converts it to a real tensor holding cos(m*theta) only (torch warns 'Casting "
     "complex values to real discards the imaginary part'); `apply_rotary_emb` then multiplies the complex query "
     "by a real cache: every pair is scaled by the cosine and nothing rotates. `.bfloat16()` / `.half()` leave "
     "complex tensors alone, and torchtitan's own training keeps buffers in float32 (FSDP2 mixed precision casts "
     "parameters for compute, not buffers), so the bug needs an explicit `.to(dtype)` (export, inference, "
     "a user's cast). `CosSinRoPE` (a real float32 table) is not affected"),
    ("torchtitan", "RP121", r"^(VisionRotaryEmbedding2D|VisionRotaryEmbedding|VisionRopeFreq)\.__init__$",
     "vision_encoder", "", "",
     "REAL (cast only), by reading: the vision tower's inv_freq is a float buffer built in float32 (explicit "
     "`dtype=torch.float` / `float32`); `_init_self_buffers` recomputes it once after `to_empty()` (torchtitan's "
     "initialisation), not after a cast, so `model.to(bf16)` rounds the frequencies (bf16: up to 2^-8 relative). "
     "Not run at runtime (the factories build the text `ComplexRoPE` / `CosSinRoPE`)"),
    ("torchtitan", "RP101", r"^(VisionRotaryEmbedding2D|VisionRotaryEmbedding)\.forward$", "vision_encoder", "", "",
     "REAL (cast only), by reading: `torch.arange(seqlen, dtype=self.inv_freq.dtype)` takes the buffer's dtype, "
     "bf16 after a cast; here `seqlen` is the side of the image patch grid (rows / columns, a few hundred at most), "
     "so only positions beyond 256 per axis collide in bf16 (bf16 holds every integer up to 256): large images "
     "only. Not run at runtime"),
    # ---------------------------------------------------------------- flash-attn
    ("flash-attn", "RP101", r"^RotaryEmbedding\._update_cos_sin_cache$", "layers/rotary", "", "",
     "REAL (cast only, XPos only), by reading: in the `scale_base` (XPos) branch, `power = (torch.arange(seqlen, "
     "dtype=self.scale.dtype) - seqlen // 2) / self.scale_base` takes the `scale` buffer's dtype, bf16 after "
     "`model.to(bf16)`, so the positions of the XPos decay are rounded and neighbouring positions share one "
     "scale: the magnitude of q and k (not their angle) is wrong. The angles themselves are float32 (the "
     "inv_freq guard). Measured by hand at 8K (`audit module audits/targets/flash_attn_factory.py:make_xpos`): "
     "every angle exact, magnitude off by up to 9.08% after a bf16 cast (RP306; 0.78% from output rounding "
     "alone), 0.73% after an fp16 cast. Without `scale_base` (the default) the line never runs"),
    # ---------------------------------------------------------------- vllm
    ("vllm", "RP121", r"^FourierRotaryEmbedding\.__init__$", "rotary_embedding/fope", "", "",
     "REAL (cast only), by reading: FoPE keeps inv_freq as a float buffer, read in `_compute_cos_sin_cache` at the "
     "first forward (`einsum(t_float32, self.inv_freq)`: rounded frequencies after a cast, positions stay float32). "
     "vLLM's model loader builds models under `set_default_torch_dtype` and never calls `.to(dtype)` on a built "
     "model, so inside vLLM the buffer stays float32 (explicit `dtype=torch.float`); a user's cast would round it"),
    ("vllm", "RP121", r"^RotaryEmbedding\.__init__$", "vllm_flash_attn", "", "",
     "REAL (cast only, with `pos_idx_in_fp32=False`), by reading: vLLM's vendored copy of an older flash-attn "
     "rotary layer. With the default `pos_idx_in_fp32=True` every read of inv_freq is behind the float32 "
     "recompute guard (the flash-attn 2.8.3 pattern), but the `else` branch reads the cast buffer directly: "
     "`arange(seqlen, dtype=self.inv_freq.dtype)` and `outer(t, self.inv_freq)`. vLLM itself imports only "
     "`apply_rotary_emb` from this file, not the class"),
    ("vllm", "RP101", r"^RotaryEmbedding\._update_cos_sin_cache$", "vllm_flash_attn", "", "",
     "REAL (cast only; `pos_idx_in_fp32=False` for the inv_freq line, XPos `scale_base` for the `self.scale` "
     "line), by reading: positions in the dtype of a buffer that `model.to(bf16)` casts. Both are opt-in paths of "
     "the vendored flash-attn class, which vLLM does not instantiate"),
    ("vllm", "RP122", r"^RotaryEmbedding\.forward$", "vllm_flash_attn", "", "",
     "REAL (cast only, with `pos_idx_in_fp32=False`), by reading: the cache rebuild reads the cast inv_freq on "
     "that path (see RP121 above); with the default `pos_idx_in_fp32=True` the rebuild recomputes inv_freq in "
     "float32"),
    ("timm", "RP121", r"RotaryEmbeddingMRope\.", "", "1.0.0", "",
     "FALSE POSITIVE: the class overrides `_apply` so that after any `.to(dtype)` / `.half()` / "
     "`.bfloat16()` it re-registers inv_freq in float32 (`_freq_buffer_dtype` never returns a dtype under "
     "32 bits), and builds positions in float32; the finding at `_apply` is that very repair"),
    # ---------------------------------------------------------------- CUDA autocast policy (issue 21)
    ("transformers", "RP113", r"RotaryEmbedding\.(_set_cos_sin_cache|forward|cos_sin)$", "", "", "4.44.99",
     "REAL (CUDA AMP, when the cache is rebuilt): `torch.einsum(\"i,j->ij\", t, self.inv_freq)` is on CUDA "
     "autocast's lower-precision list, so when forward rebuilds the cache inside a bf16 autocast region "
     "(sequences past the cached length; dynamic NTK) positions and angles are bf16; the cache built at "
     "__init__ is outside autocast"),
    ("transformers", "RP116", r"^create_sinusoidal_positions$", "gptj", "", "",
     "REAL (bf16 default dtype): `1.0 / (10000 ** (arange(0, dim, 2, dtype=int64) / dim))` takes the default "
     "dtype, and GPT-J builds this table in `GPTJAttention.__init__`, which `from_pretrained(torch_dtype="
     "torch.bfloat16)` runs under a bf16 default dtype: the frequencies are rounded (the positions are "
     "float32: `.float()`). Not measured at runtime (gptj is scanned, not run)"),
    ("transformers", "RP113", r"^create_sinusoidal_positions$", "gptj", "", "",
     "FALSE POSITIVE: the einsum runs once, in `GPTJAttention.__init__`, never inside an autocast region"),
    ("x-transformers", "RP113", r"^(RotaryEmbedding|PolarEmbedding)\.forward$", "", "", "",
     "FALSE POSITIVE: the method is decorated with x-transformers' `@disable_autocast` (autocast off inside), "
     "which the scan does not recognise; the runtime audit's autocast-cuda scenario is exact"),
    ("x-transformers", "RP113", r"^ScaledSinusoidalEmbedding\.forward$", "", "", "",
     "REAL (CUDA AMP), by reading: unlike RotaryEmbedding.forward this forward has no `@disable_autocast` and runs "
     "at every call, and `einsum('i, j -> i j', pos, self.inv_freq)` is on CUDA autocast's lower-precision list: "
     "inside a bf16 autocast region the int64 positions and the angles are bf16 even in a float32 model (found "
     "when the scan learned that int64 positions meet the buffer inside the einsum, issue 33). Absolute "
     "sinusoidal embedding (`scaled_sinu_pos_emb=True`), not rotary; not run at runtime"),
    ("nanotron", "RP113", r"^StarcoderRotaryEmbedding\.cos_sin$", "", "", "",
     "REAL (CUDA AMP only): the einsum would run in bf16 under torch autocast; nanotron trains bf16 weights "
     "without autocast, so its own runs do not reach it"),
    ("vllm", "RP113", r"\._compute_cos_sin_cache$", "", "", "",
     "FALSE POSITIVE: the cos/sin cache is computed once at construction, outside any autocast region "
     "(vLLM does not run its model under autocast)"),
    ("axolotl", "RP115", r"^cart_weights$", "", "", "",
     "REAL (bf16 default dtype only; not a rotary): Dream CART's context weights compute token distances "
     "`(distance - 1) * math.log(1 - cart_p)` in the default dtype; axolotl does not set a bf16 default "
     "dtype, so its runs keep float32"),
    # ---------------------------------------------------------------- issue 21 targets
    ("fair-esm", "RP113", r"RotaryEmbedding\._update_cos_sin_tables$", "", "", "",
     "REAL (CUDA AMP): `einsum(\"i,j->ij\", t, self.inv_freq)` runs on bf16 copies under CUDA autocast: the "
     "issue-21 bug, measured by the autocast-cuda scenario and the brute force"),
    ("fairseq", "RP113", r"RotaryPositionalEmbedding\.forward$", "", "", "",
     "REAL (CUDA AMP, fairseq's --amp): the einsum runs on bf16 / fp16 copies under CUDA autocast, measured "
     "by the autocast-cuda scenario and the brute force"),
    ("xformers", "RP113", r"RotaryEmbedding\._update_cos_sin_tables$", "", "", "",
     "REAL (CUDA AMP): the einsum of the float32 positions runs in bf16 under CUDA autocast (autocast-cuda "
     "scenario and brute force)"),
    ("gpt-neox", "RP113", r"^SinusoidalPositionalEmbedding\.forward$", "", "", "",
     "REAL (CUDA AMP only; not how GPT-NeoX trains): the einsum would be bf16 under torch autocast; NeoX's "
     "DeepSpeed fp16 / bf16 engines cast the model instead (the RP101 line above)"),
    ("gpt-neox", "RP111", r"^RotaryEmbedding\.get_emb$", "", "", "",
     "REAL: the TransformerEngine path: the float32 angles `.to(self.precision)` are rounded to params_dtype "
     "before TE takes their cos / sin (measured by the get_emb runtime audit; the brute force agrees)"),
    ("TinyLlama", "RP116", r"^build_rope_cache$", "", "", "",
     "REAL (Lightning `bf16-true`): `arange(0, n_elem, 2) / n_elem` takes the default dtype, bf16 under "
     "bf16-true: the frequencies are rounded (the default scenario and the brute force)"),
    ("TinyLlama", "RP115", r"^build_rope_cache$", "", "", "",
     "REAL (Lightning `bf16-true`): `arange(seq_len) / condense_ratio` is bf16 under bf16-true, so positions "
     "collide (the default scenario and the brute force)"),
    ("GPT-J (mesh-transformer-jax)", "RP117", r"", "", "", "",
     "REAL (info): the file is JAX / haiku, which the scan does not analyse; the numpy rotary in it is "
     "audited at runtime instead (exact in every scenario)"),
    ("GPT-J (mesh-transformer-jax)", "RP116", r"^fixed_pos_embedding$", "", "", "",
     "FALSE POSITIVE: `np.arange(0, dim, 2) / dim` is numpy float64, not torch's default dtype; no torch "
     "precision setting reaches it (the runtime audit is exact in every scenario)"),
    ("GPT-J (mesh-transformer-jax)", "RP115", r"^fixed_pos_embedding$", "", "", "",
     "FALSE POSITIVE: `np.einsum(..., np.arange(x.shape[seq_dim]), inv_freq)` is numpy float64, not torch's "
     "default dtype (the runtime audit is exact in every scenario)"),
    ("modded-nanogpt", "RP121", r"^Rotary\.__init__$", "", "", "",
     "REAL: the 2024-12-04 script runs `model.cuda().bfloat16()` and only turns the `CastedLinear` layers back "
     "to float, so this buffer trains in bf16: the frequencies are rounded and, through `torch.outer`, the "
     "positions too (the RP101 line)"),
    ("modded-nanogpt", "RP101", r"^Rotary\.forward$", "", "", "",
     "REAL: this is the record's bug: `torch.outer(arange(T), inv_freq)` with the bf16 buffer computes in bf16, "
     "so the 64 x 1,024 positions of a training sequence collapse onto 1,281 bf16 values (the cast scenario "
     "measures it; the brute force agrees)"),
    ("fair-esm", "RP121", r"RotaryEmbedding\.__init__$", "", "", "",
     "REAL (cast only): a `.half()` / `.to(bf16)` of an ESM model (common for inference) rounds `inv_freq`; "
     "ESM trains and ships float32, where it is exact"),
    ("fair-esm", "RP101", r"RotaryEmbedding\._update_cos_sin_tables$", "", "", "",
     "REAL (cast only): `arange(seq_len).type_as(self.inv_freq)` takes the buffer's dtype, bf16 / fp16 after a "
     "cast (the cast scenario measures it). Under CUDA AMP, which ESM-style fine-tuning uses, `einsum` itself "
     "is on the lower-precision list, a mechanism this line does not describe"),
    ("fairseq", "RP121", r"RotaryPositionalEmbedding\.__init__$", "", "", "",
     "REAL (cast only): fairseq's `--fp16` / `--bf16` trainers convert the model (`model.half()` / "
     "`.bfloat16()`), which rounds `inv_freq`"),
    ("fairseq", "RP101", r"RotaryPositionalEmbedding\.forward$", "", "", "",
     "REAL (cast only): positions `type_as(self.inv_freq)` become bf16 / fp16 after the trainer's cast (the cast "
     "scenario measures it); under `--amp` the float32 model goes through CUDA autocast, where `einsum` "
     "rounds them instead"),
    ("xformers", "RP121", r"RotaryEmbedding\.__init__$", "", "", "",
     "REAL (cast only): a cast rounds `inv_freq`; the forward rounds it to the input's dtype anyway "
     "(`self.inv_freq.to(x.dtype)`, the RP111 line)"),
    ("xformers", "RP111", r"RotaryEmbedding\._update_cos_sin_tables$", "", "", "",
     "REAL: `einsum(t, self.inv_freq.to(x.dtype))` rounds the frequencies to the input dtype whenever the "
     "queries are bf16 / fp16 (measured: frequencies rounded in every scenario, drift 3.65e-3); the float32 "
     "positions stay exact except under CUDA AMP, where einsum runs in bf16"),
    ("gpt-neox", "RP121", r"^SinusoidalPositionalEmbedding\.__init__$", "", "", "",
     "REAL (cast only; `pos_emb: sinusoidal` runs): DeepSpeed's fp16 / bf16 engine converts the module, "
     "which rounds this buffer (absolute sinusoidal embeddings, not the rotary)"),
    ("gpt-neox", "RP101", r"^SinusoidalPositionalEmbedding\.forward$", "", "", "",
     "REAL (cast only; `pos_emb: sinusoidal` runs): positions `type_as(self.inv_freq)` take the converted "
     "buffer's dtype"),
    ("gpt-neox", "RP121", r"^RotaryEmbedding\.__init__$", "", "", "",
     "FALSE POSITIVE: `forward` and `get_emb` never read `inv_freq`; they return `cos_cached` / `sin_cached` / "
     "`emb`, computed in float32 at `__init__` (`_prepare_cache`) before any cast. The real rounding is "
     "`get_emb`'s `.to(self.precision)` of the angles (TransformerEngine path), which the scan does not report "
     "(false negative; the runtime audit of `get_emb` measures it)"),
    ("lit-llama", "RP102", r"^build_rope_cache$", "", "", "",
     "REAL, WRONG MECHANISM: positions are rounded under Lightning's `bf16-true` (the default-dtype scenario "
     "measures it), but not through `dtype`: `LLaMA.build_rope_cache` passes `idx.dtype`, the int64 token ids, "
     "and the rounding comes from the default dtype (`arange(0, n_elem, 2, dtype=int64) / n_elem` and "
     "`torch.outer` with it); making `dtype` float32 as the fix says changes nothing"),
    ("lit-llama", "RP116", r"^build_rope_cache$", "", "", "",
     "REAL (Lightning `bf16-true`): `LLaMA.build_rope_cache` passes `idx.dtype`, the int64 token ids, so "
     "`arange(0, n_elem, 2, dtype=int64) / n_elem` is a true division that takes the default dtype, bf16 under "
     "bf16-true: the frequencies are rounded (the default scenario and the brute force: 309 / 641 of 2,048)"),
    ("lit-llama", "RP115", r"^build_rope_cache$", "", "", "",
     "REAL (Lightning `bf16-true`): the int64 `seq_idx` times those default-dtype frequencies in `torch.outer` "
     "gives a bf16 product under bf16-true, so positions collide (the default scenario and the brute force)"),
    ("DeepSeek-V3", "RP123", r"^Transformer\.__init__$", "", "", "",
     "REAL (cast only, not reached by DeepSeek's own code): `model.to(torch.bfloat16)` would make the complex64 "
     "`freqs_cis` buffer real (the cast scenario measures it: sine lost), but `generate.py` builds the model "
     "under `torch.set_default_dtype(torch.bfloat16)` and never casts it"),
    # ---------------------------------------------------------------- issue 21, static scan only
    ("sglang", "RP123", r"^FourierRotaryEmbedding\.__init__$", "", "", "",
     "FALSE POSITIVE: FourierRotaryEmbedding's `cos_sin_cache` is a real float32 (cos, sin) table; the scan "
     "resolved `self._compute_cos_sin_cache()` by its name to another class of the file, "
     "`Llama4VisionRotaryEmbedding`, whose method does build a complex table (`torch.view_as_complex`). That "
     "other table would lose its sine in `RotaryEmbedding.__init__` (base.py: `cache.to(dtype)` on platforms other "
     "than CUDA / HIP / XPU, unless SGLANG_ROPE_CACHE_FP32), but sglang's models do not use that class (mllama4 "
     "defines its own, keeping the complex table as a plain attribute)"),
    ("sglang", "RP121", r"^FourierRotaryEmbedding\.__init__$", "", "", "",
     "REAL (cast only), by reading: the first `forward` rebuilds `cos_sin_cache` from the `inv_freq` buffer "
     "(`einsum(t_float32, self.inv_freq)`), so after a `.to(bf16)` of the module the frequencies are rounded "
     "(positions stay float32). sglang builds models under `set_default_torch_dtype` with an explicit float32 "
     "`inv_freq` and its loader moves models with `.to(target_device)` only, so sglang itself keeps it float32"),
    ("sglang", "RP113", r"^FourierRotaryEmbedding\._compute_cos_sin_cache$", "", "", "",
     "REAL (CUDA AMP only; not reached by sglang): the first `forward` rebuilds the cache with this einsum, "
     "which a caller's CUDA bf16 autocast would run in bf16; sglang serves without autocast (its only "
     "`torch.autocast` calls turn it off)"),
    ("sglang", "RP113", r"^Phi3LongRoPEScaledRotaryEmbedding\._compute_cos_sin_cache$", "", "", "",
     "FALSE POSITIVE: the short and long caches are computed once, in the class's own `__init__` (the scan does "
     "not see that only `__init__` calls this method), outside any autocast region, from float32 positions"),
    ("sglang", "RP113", r"\._compute_cos_sin_cache$", "", "", "",
     "FALSE POSITIVE: the cache is computed once, from `RotaryEmbedding.__init__` (base.py calls the "
     "subclass's override; the scan does not follow that call across files), outside any autocast region, "
     "from float32 positions (`arange(..., dtype=torch.float)`)"),
    ("sglang", "RP113", r"^(RotaryEmbedding\._ensure_cos_sin_cache_length|_extend_yarn_cache)$", "", "", "",
     "REAL (CUDA AMP only; not reached by sglang): the cache extension runs while serving (the QSA indexer asks "
     "for positions past the cache) and its einsum would be bf16 under a caller's CUDA autocast; sglang serves "
     "without autocast (its only `torch.autocast` calls turn it off), and the positions are float32 "
     "(`arange(..., dtype=inv_freq.dtype)` of a fresh float32 inv_freq)"),
    ("keras-hub", "RP117", r"", "", "", "",
     "REAL (info): keras.ops code, which the scan does not analyse. By reading: positions "
     "(`ops.arange(seq_len, dtype=\"float32\")`, given positions `ops.cast(..., \"float32\")`) and inverse "
     "frequencies are float32 explicitly (KerasNLP's #1508 fix), the angle einsum runs on them, and only cos / "
     "sin are cast to the layer's compute dtype: clean by reading, not measured here (no keras)"),
    ("mlx-lm", "RP117", r"", "", "", "",
     "REAL (info): MLX code, which the scan does not analyse. By reading: the frequencies handed to "
     "`mx.fast.rope` are float32 arrays (`mx.arange(..., dtype=mx.float32)`, or `mx.arange(0, dims, 2) / dims`, "
     "int32 / int, which MLX computes in float32); positions are the kernel's own (an integer offset); not "
     "measured here (no mlx)"),
]


def verdict_for(package: str, version: str, finding: dict[str, Any]) -> tuple[str, str] | None:
    scope = finding.get("scope") or ""
    path = finding.get("path") or ""
    buffer = (finding.get("data") or {}).get("buffer") or ""
    for pkg, code, buffer_re, scope_re, lo, hi, verdict_why in BUFFER_RULES:
        if pkg != package or code != finding["code"] or not buffer or not re.search(buffer_re, buffer):
            continue
        if not re.search(scope_re, scope) or (lo and _v(version) < _v(lo)) or (hi and _v(version) > _v(hi)):
            continue
        verdict, _, why = verdict_why.format(from_pretrained=FROM_PRETRAINED).partition(": ")
        return verdict, why
    for pkg, code, scope_re, path_re, lo, hi, verdict_why in RULES:
        if pkg != package or (code != "*" and code != finding["code"]):
            continue
        if not re.search(scope_re, scope) or not re.search(path_re, path):
            continue
        if (lo and _v(version) < _v(lo)) or (hi and _v(version) > _v(hi)):
            continue
        verdict, _, why = verdict_why.partition(": ")
        return verdict, why
    return None


def runtime_covers(package: str, finding: dict[str, Any]) -> bool:
    """Whether the first module factory of a non-transformers target runs the finding's code path."""
    scope = finding.get("scope") or ""
    if package == "megatron-core":
        return scope.startswith("MultimodalRotaryEmbedding.")  # the first factory is the MRoPE module
    if package in ("flash-attn", "torchtitan", "vllm"):
        return False  # the flagged lines are XPos magnitude / complex cache / code no factory runs: by reading
    return scope.startswith("RotaryEmbedding.") or scope in ("apply_rotary_emb", "apply_rotary_pos_emb")


# --------------------------------------------------------------------------- per-version paragraphs

_TRANSFORMERS = [
    ("4.28.0", "4.36.99",
     "**Reading the code.** `LlamaRotaryEmbedding` (and the GPT-NeoX, Mistral, Falcon, Persimmon, Phi "
     "copies) keeps inv_freq as a float buffer and, when a sequence is longer than the cache (built at "
     "__init__ for max_position_embeddings positions), rebuilds cos/sin in forward from "
     "`torch.arange(seq_len, dtype=self.inv_freq.dtype)`: after `model.to(torch.bfloat16)` the positions and "
     "the angle product are bf16. This is the bug of seed 004, reachable in this version, exactly as the cast "
     "scenario measures it (`default` and `autocast` stay exact: there inv_freq is still float32). "
     "{legacy_cache}{init_cache}{falcon}"),
    ("4.38.0", "4.40.99",
     "**Reading the code.** Llama, Gemma (and the classes copied from Llama in 4.38, e.g. OLMo, Cohere) were "
     "fixed in 4.38 (transformers PR 29285: positions and the product in float32 with autocast disabled, "
     "cos/sin cast last). Mistral, Mixtral, Qwen2, GPT-NeoX, Falcon, Persimmon, Phi and StableLM still carry "
     "the pre-4.38 class in this version: cache rebuilt in forward from `arange(dtype=self.inv_freq.dtype)`, "
     "so they collide under a cast once the sequence outgrows max_position_embeddings. inv_freq stays a "
     "float buffer everywhere, which a cast rounds. {legacy_cache}"),
    ("4.41.0", "4.99.99",
     "**Reading the code.** Every architecture audited at runtime computes positions and the angle product "
     "in float32 with autocast disabled and casts only cos/sin: the seed 004 collision is gone, except in "
     "Mixtral, which still has the pre-4.38 class in 4.45.2 (fixed by 4.48.3; {legacy_cache_short}). What "
     "remains is "
     "inv_freq registered as a float buffer: a cast (`model.to(bf16)`) rounds the frequencies themselves "
     "(drift 3.65e-3 in bf16, phase error growing with the position), while `from_pretrained(torch_dtype=...)` "
     "keeps them float32. Falcon's ALiBi helper still builds its bias in bf16 explicitly."),
    ("5.0.0", "5.99.99",
     "**Reading the code.** As in 4.4x-4.57: positions and products in float32, only cos/sin cast. inv_freq "
     "is now declared with `self.inv_freq = nn.Buffer(..., persistent=False)` instead of `register_buffer`, "
     "still a float buffer that `model.to(bf16)` rounds (the runtime drift shows it). New in 5.x: "
     "`original_inv_freq`, the copy dynamic / long-rope scaling restore inv_freq from, is an `nn.Buffer` too "
     "(in 4.x a plain attribute that kept the float32 tensor through a cast), so a cast rounds it as well and "
     "the float32 frequencies cannot be restored. {nn_buffer}"),
]

_OTHER = {
    ("rotary-embedding-torch", ""):
        "**Reading the code.** `rotate_queries_or_keys(t)` calls `get_seq_pos(seq_len, dtype=t.dtype)`, i.e. "
        "`torch.arange(n, dtype=q.dtype)`: with bf16 queries the positions are bf16 before anything else "
        "happens, in every precision scenario, and `forward` multiplies them by `freqs` (an nn.Parameter, "
        "rounded by a cast) in that dtype. The decorator `autocast('cuda', enabled=False)` does not help: the "
        "dtype comes from the input, not from autocast. The same code is in 0.5.3, 0.8.9 and 0.9.1. The "
        "positions are rounded the same way under cast, default dtype and autocast (the input query has the "
        "scenario dtype in all three).",
    ("x-transformers", ""):
        "**Reading the code.** `RotaryEmbedding.forward` computes "
        "`einsum(t.type_as(self.inv_freq), self.inv_freq)` under `disable_autocast`: autocast cannot reach it, "
        "and with a float32 model it is exact, but inv_freq is a persistent float buffer, so after "
        "`model.to(bf16)` the int64 positions become bf16 and the angles are bf16 products: the cast scenario "
        "collapses (worse than rounded positions alone) and fp16 overflows from 65,520 on.",
    ("timm", "0.9.16"):
        "**Reading the code.** `RotaryEmbedding` / `RotaryEmbeddingCat` keep their frequency bands as a float "
        "buffer named `bands` (when no feat_shape is given) and build grid positions in float32; "
        "`model.half()` / `.to(bf16)` rounds the bands, so every frequency drifts by up to 2^-8 (bf16), the "
        "RP121 situation. Positions themselves are float32, so no collisions.",
    ("megatron-core", ""):
        "**Reading the code.** `RotaryEmbedding` keeps inv_freq as a plain float32 attribute (not a buffer: "
        "`.to(dtype)` leaves it alone) and builds positions in its dtype (`arange(..., dtype=self.inv_freq.dtype)`, "
        "float32) and the angles with `torch.outer`: exact in every scenario. `MultimodalRotaryEmbedding` (MRoPE, "
        "Qwen2-VL) computes the angles as a matrix product `inv_freq_expanded @ seq_expanded` outside "
        "`autocast(enabled=False)`: under a bf16 autocast the product runs in bf16 (RP113, measured: 4.03% exact at "
        "8K). The NeMo audio encoder's `compute_rope_params(..., dtype=torch.float32)` builds positions in its "
        "`dtype` argument, whose float32 default no caller overrides (it has no caller in the package): clean, "
        "and the scanner no longer reports it (it did, RP102, before issue 11).",
    ("litgpt", ""):
        "**Reading the code.** `build_rope_cache` computes theta with `.float()`, positions as "
        "`torch.arange(seq_len).float() / condense_ratio` and the angles with `torch.outer`, all float32 whatever "
        "the default dtype or autocast; `GPT` stores cos/sin as buffers, which a cast rounds as values (not as "
        "positions). Clean, as the runtime audit measures.",
    ("torchtitan", ""):
        "**Reading the code.** `ComplexRoPE` precomputes `freqs_cis = torch.polar(ones, outer(t, freqs).float())` "
        "(complex64) and `RoPE.__init__` registers it as the buffer `cache`. `model.to(torch.bfloat16)` keeps its "
        "real part only (torch: 'Casting complex values to real discards the imaginary part'); "
        "`apply_rotary_emb` then multiplies the complex query by cos(m*theta) and nothing rotates any more. "
        "`.bfloat16()` / `.half()` leave complex buffers alone. The static scan finds it (RP123 at the "
        "registration, naming `ComplexRoPE._precompute_cache`), and the runtime audit of the native module "
        "(`forward(query, key, positions)` on (batch, seq, heads, dim), found by probing) measures it: after the "
        "cast no position has a nonzero sine (RP305 at `rope.py`, 'sine lost'), while default dtype and autocast "
        "stay exact. `CosSinRoPE` keeps a real float32 table: a cast "
        "rounds the cos/sin values only. The vision encoders' 2-D rotary embeddings keep inv_freq as a float "
        "buffer and build patch positions in its dtype (RP121 / RP101, real under a cast, positions beyond 256 "
        "per axis only).",
    ("flash-attn", ""):
        "**Reading the code.** `RotaryEmbedding._update_cos_sin_cache` builds positions in float32 and "
        "recomputes inv_freq in float32 whenever the buffer is not float32 (`if self.inv_freq.dtype != "
        "torch.float32: inv_freq = self._compute_inv_freq(...)`): a repair guard, so a cast cannot round the "
        "frequencies it uses (runtime drift 7.6e-08, float32 level). The static scan recognises the guard (before "
        "issue 11 it reported RP121 and two RP122 here). The XPos branch (`scale_base`) still builds its decay "
        "positions in the `scale` buffer's dtype (RP101, real under a cast): a magnitude error, not an angle one. "
        "The XPos module (`audits/targets/flash_attn_factory.py:make_xpos`, `scale_base=512`) is not in the table: "
        "run by hand (2026-11-24, this auditor) its angles are exact at 8K in bf16 and fp16 in every scenario, "
        "but its scaled tables overflow at long contexts, which an angle audit reports as collisions: in fp16 "
        "from 32K on (the scale (1/zeta)^(p/512) passes 65,504 a few thousand positions from the middle), and at "
        "128K already in float32 (zeta_min = 25.6/89.6 = 0.286 and 0.286^(-65536/512) = 3.5^128 > 3.4e38; "
        "measured: 29,376 of 131,072 query positions non-finite after a bf16 cast). XPos with `scale_base=512` "
        "does not fit 128K in any precision. At 8K its magnitude is measured (runtime RP306, by hand with this "
        "auditor): a bf16 cast changes it by up to 9.08% (output rounding alone allows 0.78%), fp16 by 0.73% "
        "(0.10%); default dtype and autocast stay within rounding: the RP101 line below.",
    ("liger-kernel", ""):
        "**Reading the code.** Liger's RoPE ops (`liger_kernel/ops/rope.py`, qwen2-VL mRoPE, llama4 rope) are "
        "triton kernels that take the cos/sin (or freqs_cis) the patched Hugging Face model computed; Liger "
        "computes no positions or frequencies of its own. The static scan finds nothing, correctly.",
    ("nanotron", ""):
        "**Reading the code.** `StarcoderRotaryEmbedding` registers an empty float32 inv_freq buffer and "
        "re-initialises it in float32 on the first forward (`init_rotary_embeddings`, which asserts the dtype), "
        "i.e. after any cast made while loading; positions take the buffer's dtype, float32 then. The static "
        "scan recognises the lazy re-initialisation (before issue 11: RP121 + RP101 here); the runtime audit "
        "measures every position exact. A cast made after the first forward would not be repaired (the "
        "re-initialisation runs once). The llama `RotaryEmbedding` uses the same lazy pattern.",
    ("vllm", ""):
        "**Reading the code.** vLLM's rotary layers build `cos_sin_cache` in float32 (`torch.arange(..., "
        "dtype=torch.float)`) and cast it to the model dtype once; positions arrive as int64 tensors and index "
        "the cache, so no position is ever rounded. MRoPE's `np.arange(..., dtype=out.dtype)` writes into the "
        "runner's int64 numpy position buffer (annotated `np.ndarray`): the scanner no longer reports it (RP102 "
        "before issue 11). FoPE keeps inv_freq as a float buffer (RP121; vLLM never casts a built model). The "
        "vendored `vllm_flash_attn/layers/rotary.py` is an older flash-attn rotary layer whose "
        "`pos_idx_in_fp32=False` path and XPos branch use buffer dtypes (findings real, but vLLM imports only "
        "its `apply_rotary_emb`).",
    ("axolotl", ""):
        "**Reading the code.** axolotl trains Hugging Face models: its model-support rotary classes subclass "
        "transformers' (Bailing MoE v3's `BailingMoeV3RotaryEmbedding` extends `DeepseekV3RotaryEmbedding`) and "
        "its own default-RoPE helper (Dream) builds inv_freq from int64 `.float()` in float32. The static scan "
        "finds nothing, correctly.",
    ("sglang", ""):
        "**Reading the code.** Like vLLM's, sglang's rotary layers build `cos_sin_cache` from float32 positions "
        "(`torch.arange(..., dtype=torch.float)`) and float32 frequencies, keep it in float32 on CUDA / HIP / XPU "
        "(cast to the model dtype elsewhere: values rounded, positions exact), and index it with int64 positions. "
        "The einsums flagged RP113 run at construction or in cache extensions; sglang never runs them under "
        "autocast. One static finding is a scan error (RP123 on FourierRotaryEmbedding: a method resolved by "
        "name in another class).",
    ("fairseq2", ""):
        "**Reading the code.** `RotaryEncoder` fills a float32 `(max_seq_len + 1, d / 2, 2)` buffer `freqs` "
        "with `torch.polar` of float32 angles (steps and indices `arange(..., dtype=torch.float32)`, "
        "`torch.outer`), and `forward` multiplies the queries by it as complex64 in float32; a cast of the buffer "
        "would round table values, never positions. The static scan finds nothing (issue 21: before, RP121 on "
        "this float32 table named `freqs` and RP102 on its frequency indices).",
    ("timm", "1.0.31"):
        "**Reading the code.** Fixed deliberately in the rotary classes: `_freq_buffer_dtype` keeps their "
        "frequency and grid buffers at >= float32, and `_apply` re-registers the bands / inv_freq / periods in "
        "float32 after any `.to()`/`.half()`; angles are computed in float32 and cast once at the end.",
}


def _long_default_note(version: str) -> str:
    """Which legacy classes only collide by default because the runtime audit lowers their cache length."""
    names = [n for n, since in (("Mistral", "4.34"), ("Mixtral", "4.36"), ("Qwen2", "4.37"))
             if _v(version) >= _v(since)]
    if not names:
        return "."
    defaults = {"Mistral": "131,072", "Mixtral": "131,072", "Qwen2": "32,768"}
    txt = (", which is why " + ", ".join(names[:-1]) + (" and " if len(names) > 1 else "") + names[-1]
           + (", whose configs default to " if len(names) > 1 else ", whose config defaults to ")
           + " / ".join(defaults[n] for n in names)
           + (" positions, report" if len(names) > 1 else " positions, reports") + " the collision by default.")
    extra = [n.lower() for n in names if n != "Qwen2"]
    return txt + (" The extra " + " / ".join(f"`{n}`" for n in extra) + " runs with `--config "
                  "max_position_embeddings=32768` (the value the released checkpoints ship) audit the cache as "
                  "built at __init__: exact at 8K and 32K, collision at 128K.")


def _flagged(findings: list[dict[str, Any]], codes: tuple[str, ...], scope_re: str) -> bool:
    return any(f["code"] in codes and re.search(scope_re, f.get("scope") or "") for f in findings)


def target_notes(package: str, version: str, findings: list[dict[str, Any]]) -> str:
    """Per-version paragraphs; statements about the scanner are checked against its actual findings."""
    if package == "transformers":
        rp121 = [f for f in findings if f["code"] == "RP121" and re.search(r"RotaryEmbedding", f.get("scope") or "")]
        bufs = {}
        for f in rp121:
            b = (f.get("data") or {}).get("buffer") or "inv_freq"
            bufs[b] = bufs.get(b, 0) + 1
        classes = len({f.get("scope") for f in rp121})
        fill = {
            "nn_buffer": (f"The static scan flags both buffers in each of the {classes} rotary classes it scans "
                          f"(RP121 x{len(rp121)}: " + ", ".join(f"`{b}` x{n}" for b, n in sorted(bufs.items()))
                          + "), all real under a cast (see the table below).") if rp121 else
                         "The static scan does not see it: no RP121 in this version (a false negative of the "
                         "scanner: `nn.Buffer` assigned as an attribute is not recognised as a buffer).",
            "legacy_cache": (
                "The cos/sin cache built at __init__ covers max_position_embeddings positions and is exact (the "
                "buffer is still float32 then), so only a sequence longer than that reaches the rebuild; the "
                "runtime audit therefore builds these legacy classes with max_position_embeddings lowered "
                "below the audited length (2,048 at 8K, 8,192 at 32K, 32,768 at 128K; the note is in each "
                "run's JSON)" + _long_default_note(version)),
            "legacy_cache_short": ("its default runs lower max_position_embeddings below the audited length to "
                                   "reach the cache rebuild; the `max_position_embeddings=32768` runs are exact "
                                   "up to 32K and collide at 128K"),
            "init_cache": (
                " In 4.28 the cache line appears twice, in __init__ and in forward; the scanner flags only the "
                "forward copy (RP101), correctly: the __init__ copy runs before any cast can happen."
                if _v(version) < _v("4.29") else ""),
            "falcon": (
                " Falcon's rotary class in this version is called on the pair, `rotary_emb(q, k, ...)` returning "
                "the rotated `(q, k)`; the runtime audit runs it through that convention (rotate-callable"
                + (", now including the `past_key_values_length` / `position_ids` arguments 4.34 added, so "
                   "Falcon is measured at runtime in this version" if _v(version) >= _v("4.34") else "")
                + ") and measures the same collapse as the others under a cast (bf16 4.36% exact at 8K)."
                if _v("4.31") <= _v(version) < _v("4.36") else ""),
        }
        return "\n\n".join(text.format(**fill) for lo, hi, text in _TRANSFORMERS if _v(lo) <= _v(version) <= _v(hi))
    text = _OTHER.get((package, version)) or _OTHER.get((package, ""), "")
    if package == "x-transformers":
        hit = _flagged(findings, ("RP101", "RP102", "RP103", "RP104", "RP111"), r"^RotaryEmbedding\.forward$")
        text += (" The static scan flags that conversion (RP101 in `RotaryEmbedding.forward`), and the same line in "
                 "`PolarEmbedding.forward` and the int64-by-buffer einsum of `ScaledSinusoidalEmbedding.forward` "
                 "(not run at runtime; real by reading, see the table)." if hit else
                 " The static scan flagged only the buffer (RP121), not the `type_as` conversion that does the "
                 "damage (a false negative).")
    if package == "timm" and version == "0.9.16":
        n = sum(f["code"] == "RP121" for f in findings)
        text += (" The static scan reports nothing: the buffer is not called `inv_freq` / `freq` (a false "
                 "negative)." if not n else
                 f" The static scan flags the three `bands` buffers (RP121 x{n}: `RotaryEmbedding`, "
                 "`RotaryEmbeddingCat` and the Fourier-feature `FourierEmbed`), all real under a cast.")
    if package == "timm" and version == "1.0.31":
        mrope = sum(re.search(r"RotaryEmbeddingMRope", f.get("scope") or "") is not None for f in findings)
        fourier = sum(re.search(r"^FourierEmbed\.", f.get("scope") or "") is not None for f in findings)
        if mrope:
            text += (f" The {mrope} RP121 finding(s) in `RotaryEmbeddingMRope` are false positives: the "
                     "scanner does not recognise the `_apply` repair.")
        else:
            text += (" The static scan recognises the `_apply` repair: no finding in the rotary classes.")
        if fourier:
            text += (" The one exception is `FourierEmbed` (a Fourier-feature embedding, not rotary, used by no "
                     "timm model): its `bands` buffer is not created through `_freq_buffer_dtype` and the class "
                     "has no `_apply` override, so a cast rounds it; the scanner flags it (RP121), real.")
    return text


# --------------------------------------------------------------------------- verdict line


def _pct(x: float) -> str:
    return f"{100 * x:.2f}%" if x < 1 else "100%"


def target_verdict(doc, rt, st_counts, verdicts, ck_counts) -> dict[str, str]:
    """Summary verdict of a target from its measurements (short for the table, long for the report);
    ``st_counts``: static findings judged REAL, by code."""
    collide: dict[str, set[str]] = {}
    overflow: set[str] = set()
    drift: set[str] = set()
    sine_lost: set[str] = set()
    magnitude: dict[str, float] = {}
    for (m, _dtype, _n, scen), row in rt.rows.items():
        if row.get("path") == "sine lost":  # not a collision: the complex cache came back real (RP305)
            sine_lost.add(scen)
            continue
        if row.get("path") == "magnitude off":
            magnitude[m] = max(magnitude.get(m, 0.0), float(row.get("magnitude_error") or 0.0))
        if row["exact_fraction"] < 1.0:
            collide.setdefault(m, set()).add(scen)
        if row["nonfinite"]:
            overflow.add(m)
        if scen == "cast" and row["frequency_drift"] > 1e-5:
            drift.add(m)
    if doc["package"] != "transformers":  # one audited module: name it plainly
        collide = {"the module": set().union(*collide.values())} if collide else {}
        overflow = {"the module"} if overflow else set()
        drift = {"the module"} if drift else set()
    real_static = sum(n for v, n in verdicts.items() if v.startswith("REAL"))
    false_static = sum(n for v, n in verdicts.items() if v.startswith("FALSE"))
    parts_short, parts_long = [], []
    if collide:
        scen = sorted({s for ss in collide.values() for s in ss})
        worst = min((row["exact_fraction"], m if doc["package"] == "transformers" else s)
                    for (m, d, n, s), row in rt.rows.items() if d == "bf16" and n == min(k[2] for k in rt.rows))
        what = "configurations" if doc["package"] == "transformers" else "module"
        parts_short.append(f"**BUG: positions collide** ({'/'.join(scen)}; {len(collide)} of {len(rt.meta)} "
                           f"audited {what})" if what != "module" else
                           f"**BUG: positions collide** ({'/'.join(scen)})")
        parts_long.append(
            f"- **Seed 004 bug reachable**: positions collide in {', '.join(sorted(collide))} "
            f"(scenarios: {', '.join(scen)}); worst bf16 exact fraction at the shortest length "
            f"{_pct(worst[0])} ({worst[1]}).")
    if overflow:
        parts_short.append("fp16 inf")
        parts_long.append(f"- **fp16 overflow**: non-finite encodings in {', '.join(sorted(overflow))} "
                          "(positions from 65,520 on).")
    if drift:
        parts_short.append("cast rounds the frequencies")
        parts_long.append(f"- **Frequencies rounded by a cast** (RP303) in {', '.join(sorted(drift))}: "
                          "`model.to(bf16)` rounds the stored frequencies (inv_freq buffer or parameter); positions "
                          "may still be "
                          "exact.")
    if sine_lost:
        lost = sorted(((k[2], k[1], row) for k, row in rt.rows.items() if row.get("path") == "sine lost"),
                      key=lambda x: (x[0], x[1]))
        n, d, row = lost[0]
        parts_short.append(f"**BUG: sine lost after `.to(dtype)`** ({'/'.join(sorted(sine_lost))}; RP305)")
        parts_long.append(f"- **The cast drops the sine** (runtime RP305, {', '.join(sorted(sine_lost))}): the complex "
                          f"cache comes back real; {row['exact']:,} of {n:,} positions keep their encoding ({d}).")
    if magnitude:
        parts_short.append("magnitude off (RP306)")
        parts_long.append("- **Magnitude of the encoding off** (runtime RP306): up to "
                          + ", ".join(f"{100 * v:.2f}% in {m}" for m, v in sorted(magnitude.items())) + ".")
    failed = {m: sorted(set(e.split(": ", 2)[-1] for e in errs)) for m, errs in rt.errors.items() if errs}
    if rt.meta and not collide and not overflow and not sine_lost:
        parts_long.append("- Positions exact in every " + ("completed " if failed else "")
                          + "runtime audit (architecture / module, scenario, dtype and length).")
    for m, msgs in failed.items():
        why = RUNTIME_GAPS.get(doc["package"], "")
        parts_short.append(f"runtime audit of {m.split(':')[0].split(' (')[0]} did not complete")
        parts_long.append(f"- **Runtime audit did not complete** for {m}: "
                          f"{'; '.join(msgs)[:300]}" + (f" {why}" if why else ""))
    if st_counts.get("RP131") and doc["package"] == "transformers":
        parts_short.append("ALiBi in bf16 (falcon)")
        parts_long.append("- Falcon's ALiBi bias is built in bf16 explicitly (`.bfloat16()` on the slopes) (static "
                          "RP131, real for alibi "
                          "configs; not measured at runtime).")
    if ck_counts:
        parts_short.append("inv_freq saved in bf16/fp16")
        parts_long.append("- Checkpoints written by this version after a cast carry inv_freq in bf16/fp16 "
                          f"({', '.join(f'{c} x{n}' for c, n in sorted(ck_counts.items()))}).")
    if st_counts.get("RP123"):
        parts_short.append("**BUG: complex cache made real by `.to(dtype)`** (RP123)")
        parts_long.append("- **Complex rotary cache made real by a cast** (static RP123): `model.to(torch.bfloat16)` "
                          "drops the imaginary part (the sine) of the complex64 `freqs_cis` buffer, so "
                          "nothing rotates.")
    if not rt.meta:
        n121 = st_counts.get("RP121", 0)
        extra = {("timm", "0.9.16"): f"frequency bands rounded by a cast (real, cast only: RP121 x{n121} on `bands`)",
                 ("timm", "1.0.31"): "rotary classes clean (their `_apply` restores float32); FourierEmbed `bands` "
                                     f"rounded by a cast (real, cast only: RP121 x{n121})",
                 ("liger-kernel", "0.8.5"): "clean (triton kernels applying the cos/sin of the patched HF model)",
                 ("axolotl", "0.21.0"): "clean (rotary classes from transformers; float32 inv_freq helper)",
                 ("sglang", "0.5.23"): "float32 cos/sin caches indexed by int64 positions; RP113: 3 einsums real "
                                       "under CUDA AMP, which sglang never runs, 6 false positives (construction); "
                                       "RP121 on FoPE's buffer (cast only); RP123 false positive",
                 ("fairseq2", "0.8.1"): "clean (float32 frequencies and tables)",
                 ("keras-hub", "0.32.0"): "not analysed (keras.ops, RP117); float32 positions and frequencies "
                                          "by reading",
                 ("mlx-lm", "0.32.2"): "not analysed (MLX, RP117); float32 frequencies by reading",
                 ("vllm", "0.33.0"): "positions int64, cos/sin built in float32; float buffers rounded by a cast "
                                     f"only on paths vLLM does not take (RP121 x{n121}: FoPE, vendored flash-attn "
                                     "layer)"}.get(
            (doc["package"], doc["version"]), "static scan only")
        parts_short.append(extra)
        parts_long.append(f"- Static scan only: {extra}.")
    if not parts_short:
        parts_short.append("clean" if not real_static else
                           f"clean at runtime; {real_static} real static finding{'s' if real_static > 1 else ''} on "
                           "paths the runtime audit does not run (see the report)")
    parts_short.sort(key=lambda part: not part.startswith("**BUG"))  # bugs first (stable)
    total = sum(verdicts.values())
    if total:
        parts_long.append(f"- Static findings: {total} ({real_static} real, {false_static} false positives, "
                          f"{total - real_static - false_static} other; see the table below).")
    return {"short": "; ".join(parts_short), "long": "\n".join(parts_long)}


# why a runtime audit could not complete, where the auditor (not the target) is the reason
RUNTIME_GAPS: dict[str, str] = {}


README_NOTES = """## What the table says

- **transformers before 4.38** (and Mistral, Qwen2, GPT-NeoX, Falcon, Persimmon, Phi, StableLM until
  4.40; Mixtral until 4.45): the seed 004 bug is live. After `model.to(torch.bfloat16)` the rotary class
  rebuilds its cos/sin cache from `arange(seq_len, dtype=self.inv_freq.dtype)` for any sequence longer
  than max_position_embeddings. Llama in bf16: 3.76% of 8,192 positions keep their own encoding, 0.24% of
  131,072 (the angle product is rounded too, so it is worse than the 10.9% of rounded positions alone);
  fp16 gives non-finite encodings for every position from 65,520 on. `from_pretrained(torch_dtype=...)`
  does not trigger it (inv_freq stays float32); casting the model does (DeepSpeed, `.half()`,
  `.bfloat16()`). The cache built at __init__ is exact, so the runtime audit builds these classes with
  max_position_embeddings lowered below the audited length (2,048 at 8K, 8,192 at 32K, 32,768 at 128K)
  to reach the rebuild: Mistral, Mixtral and Qwen2 (config defaults 131,072 / 131,072 / 32,768) therefore
  report the collision by default; the extra `max_position_embeddings=32768` runs of Mistral and Mixtral
  (the value their released checkpoints ship) are exact up to 32K and collide at 128K. Falcon 4.31-4.34
  (called as `rotary_emb(q, k, ...)`) is measured through that convention, 4.34 included.
- **transformers 4.38+ (Llama, Gemma), 4.45+ (every audited architecture but Mixtral) and 4.48+ (all)**:
  positions and angles in float32 with autocast disabled; every position exact in every scenario. inv_freq
  is still a float buffer that a cast rounds: frequencies drift by 3.65e-3 (bf16), a phase error of 160 rad
  at position 131,071 for Llama; relative positions stay distinct, but not at the frequencies the model was
  trained with. In 5.x `original_inv_freq` (the copy dynamic / long-rope scaling restore from) is a buffer
  too, so a cast rounds it as well (RP121 x30: both buffers in each of the 15 scanned classes, all real).
- **rotary-embedding-torch (0.5.3, 0.8.9, 0.9.1)**: positions are created in the query's dtype, so they
  collide in bf16/fp16 in every scenario, autocast included: exactly the seed's 896 of 8,192 (10.94%)
  under default dtype and autocast, 4.36% after a cast (which also rounds the `freqs` parameter).
- **x-transformers 2.31.10**: exact in float32 and under autocast; after a cast, positions and angles
  become bf16 (4.36% exact at 8K, 0.28% at 128K) and fp16 overflows from 65,520. The scanner flags the
  `t.type_as(self.inv_freq)` line (RP101) in the rotary path and in `PolarEmbedding`, and the int64-by-buffer
  einsum of `ScaledSinusoidalEmbedding`: all real, cast only.
- **timm** (static scan only): 0.9.16 lets a cast round its frequency bands (RP121 x3 on `bands`, real,
  cast only; positions stay float32). 1.0.31 repairs the rotary classes' buffers after every cast (`_apply`);
  the one remaining finding is `FourierEmbed`'s `bands` (a Fourier-feature embedding used by no timm model),
  which has no such repair: real, cast only.

- **The eight training / inference frameworks** (issue 11: what a new user tried; megatron-core 0.19.2,
  vLLM 0.33.0 and axolotl 0.21.0 need Python 3.12 and flash-attn needs CUDA to build, so their published
  wheel / sdist source is unpacked and audited as is; runtime audits load the rotary module from that
  source with the import and device patches each factory in `audits/targets/` states):
  - **torchtitan 0.3.0**: `ComplexRoPE` registers its complex64 `freqs_cis` cache as a buffer, which
    `model.to(torch.bfloat16)` turns real: the sine is dropped and nothing rotates. Found statically
    (RP123) and at run time (RP305 "sine lost" in the cast scenario: 1 of 8,192 positions keeps its
    encoding; default dtype and autocast exact). `CosSinRoPE` is exact everywhere.
    The vision encoders' 2-D rotary buffers are rounded by a cast (RP121, RP101 beyond 256 patches per
    axis).
  - **megatron-core 0.19.2**: `RotaryEmbedding` exact in every scenario (inv_freq is a plain float32
    attribute); MRoPE's angle product is a matrix product outside `autocast(enabled=False)`: under bf16
    autocast 4.03% of 8,192 positions exact (0.25% at 128K), fp16 autocast overflows from 65,520 (RP113,
    real). The NeMo encoder's float32 `dtype` default is no longer reported.
  - **flash-attn 2.8.3** (pure-torch path): inv_freq is recomputed in float32 whenever a cast changed it
    (drift 7.6e-08, exact everywhere) and the scanner now recognises that guard (it reported RP121 and two
    RP122 before). The XPos branch builds its decay positions in the `scale` buffer's dtype (RP101, real:
    run by hand at 8K, a bf16 cast changes the magnitude by up to 9.08% against 0.78% from output
    rounding, RP306; angles exact).
  - **nanotron 0.4**: the starcoder2 rotary re-initialises inv_freq in float32 at the first forward; exact
    in every scenario; no finding (two before).
  - **vLLM 0.33.0** (static only): positions stay int64 and index a float32-built cos/sin cache; the
    `np.arange(..., dtype=out.dtype)` over the runner's int64 numpy buffer is no longer reported. Findings
    remain on FoPE's float buffer and on the opt-in paths of the vendored flash-attn rotary class, which
    vLLM does not instantiate (real under a cast, not reached by vLLM).
  - **litgpt 0.5.13, liger-kernel 0.8.5, axolotl 0.21.0**: clean (litgpt measured exact everywhere; Liger's
    RoPE is triton kernels over Hugging Face's cos/sin; axolotl's rotary classes come from transformers).

- **Issue 21: real implementations published as repositories or wheels** (the table above gives each one's
  verdict, the scenario that shows it, and the auditor's counts beside an independent brute force):
  - **modded-nanogpt 2024-12-04**: the record's script casts the model with `.bfloat16()`, so
    `torch.outer(arange(T), inv_freq)` runs in bf16 and a 65,536-token training sequence keeps only the
    positions bf16 can hold. The 2024-10-14 record (float32 under CUDA autocast, `outer` not autocast) and
    the 2026-08-01 script (float32 angles, bf16 tables by design) are exact.
  - **ESM, fairseq, xformers**: `einsum("i,j->ij", t, inv_freq)` on float32 positions is exact in float32
    and under CPU autocast, but `einsum` is on CUDA's autocast lower-precision list, so under CUDA bf16 AMP the
    positions are rounded; fairseq and ESM also round them after a cast (`type_as(inv_freq)`), xformers
    rounds its frequencies to the query dtype in every run.
  - **lit-llama, TinyLlama**: positions and frequencies come out of `arange` / integer division without a
    dtype, i.e. in the default dtype, which Lightning's `bf16-true` sets to bf16 (the `default` scenario).
  - **GPT-NeoX**: the torch and fused paths apply cos/sin computed in float32 (exact; the tables are stored in
    params_dtype); the TransformerEngine path hands over the angles themselves `.to(params_dtype)`, rounded.
  - **gpt-fast, Llama, llama-models, llm.c, mistral-inference, DeepSeek-V3, nanochat, OLMo, OpenNMT-py, GPT-J**:
    positions int64 or float32 and angles in float32 (GPT-J: numpy float64): exact in every scenario.

Where the auditor got a finding wrong, the report says so (findings marked FALSE POSITIVE, false negatives
named in the "Reading the code" paragraphs). In this run every static finding of every target was judged
real (most of them only after a cast: "REAL (cast only)"); the former false positives (construction-time
caches in transformers 4.28, timm 1.0.31's `_apply`-repaired buffers) are no longer reported.
"""
