"""The RV0xx value rules of :mod:`ropelaw.lint.rules.values`: each rule's code, name and documentation
(what, why, example, fix), the plausibility limits they cite, and whether they explain a missing bound
(``explains_unanalysed``). The checks that raise them are in :mod:`.values`."""

from __future__ import annotations

from ...findings import define_rule
from ...limits import MAX_CONTEXT, MAX_FACTOR


# -- plausibility limits (values of the right type that no real model has): ropelaw.limits, each with its
# reason: lengths MAX_CONTEXT = 2**31 - 1 tokens, rotary dims MAX_D = 2**16, scaling factors MAX_FACTOR = 2**20
LENGTH_LIMIT = f"2^31 - 1 = {MAX_CONTEXT:,} tokens, the int32 limit of sequence offsets"
FACTOR_LIMIT = f"2^20 = {MAX_FACTOR:,}"

HF_ROPE = "transformers: src/transformers/modeling_rope_utils.py (ROPE_INIT_FUNCTIONS, rope_config_validation)"
# each rule's "what": how its severity follows the runtime (rules/runtime.py)
SEV = ("Severity, for a config.json: error where the transformers version ropelaw follows refuses or crashes on "
       "the case, else warning (the message and JSON data.refused_by say which version does what; "
       "tests/test_severity_parity.py runs the cases in both versions). ")

INVALID_TYPE = define_rule(
    "RV001", "invalid-value-type", "error",
    "a RoPE setting holds a value of the wrong type",
    what="Checks that every RoPE-related setting the loader reads (rotary dims, heads, base, lengths, "
         "scheme parameters, factor lists) has the type the model code needs: a number, a whole number, "
         "a list of numbers, a string. " + SEV + "Error: a string or list transformers computes with, a "
         "non-mapping rope_scaling, a non-string rope_type, and (5.23.0) a bool or string in a strict int field; "
         "warning: `true` where 4.57.1 reads 1, a string `truncate` (tested for truth), a string length plain "
         "RoPE never reads (4.57.1).",
    why="transformers does arithmetic on these values when it builds the rotary frequencies; a string "
        "`\"10000\"` or `true` either crashes at model load or, worse, silently becomes 1.",
    example='{"rope_theta": "1e6"}',
    fix="Write the value as a JSON number (`1000000.0`), a whole number for dims and lengths, a list for "
        "LongRoPE factors.",
    references=(HF_ROPE,),
)
NON_FINITE = define_rule(
    "RV002", "non-finite-value", "warning",
    "a RoPE setting is NaN, infinite or too large for a float",
    what="Flags NaN, Infinity and numbers beyond float64 range (e.g. `1e400`, which JSON parsers turn into inf). "
         + SEV + "transformers computes NaN / zero frequencies and runs (warning), except a non-finite value in a "
         "5.23.0 strict int field (error there).",
    why="A non-finite base or factor makes every rotary frequency NaN or 0: attention loses all position "
        "information without an error.",
    example='{"rope_theta": NaN}',
    fix="Write the intended finite value.",
    references=("IEEE 754-2019, sec. 6 (infinity and NaN)",),
)
ODD_DIM = define_rule(
    "RV003", "odd-rotary-dimension", "error",
    "the rotary dimension is odd or below 2",
    what="Checks that the number of rotated dims per head (head_dim x partial_rotary_factor, rotary_dim, "
         "qk_rope_head_dim, ...) is an even whole number >= 2.",
    why="RoPE rotates pairs of dims (RoFormer eq. 14-15); an odd count leaves one dim unrotated or breaks "
        "the cos/sin concatenation at load time: an odd head_dim or rotary_dim fails in transformers' forward "
        "(5.23.0 refuses an odd head_dim at load), as does an odd int(head_dim * partial_rotary_factor) in "
        "Phi, StableLM and Persimmon. GPT-NeoX, Nemotron, Phi-3 and the GLM family (glm, glm4, glm4_moe, "
        "glm4v_text, glm4v_moe_text) rotate that count rounded up to even "
        "(their rotary slices the head by cos.shape): read that way, RV004 (warning), no RV003, at the effective "
        "base base^((r+1)/r) (their ceil(r/2) frequencies are base^(-2k/r) with r odd) for default, linear, "
        "llama3 and longrope; dynamic and yarn use dim itself: RV003 (an error for yarn, which fails to build "
        "the rotary; a warning for dynamic, which runs) and the group is not analysed.",
    example='{"hidden_size": 4096, "num_attention_heads": 32, "rotary_dim": 63}',
    fix="Choose a partial factor or rotary_dim giving an even number of dims.",
    references=("Su et al. 2021, RoFormer, arXiv 2104.09864, eq. 14-15",),
)
WIDE_ROTARY = define_rule(
    "RV046", "rotary-wider-than-head", "error",
    "a partial rotary factor above 1 asks for more rotated dims than the head has",
    what="Flags partial_rotary_factor / rotary_pct above 1: head_dim x factor rotated dims in a head of head_dim.",
    why="RoPE rotates dims of the head (RoFormer eq. 14-15); a model's rotary built for head_dim x factor dims does "
        "not fit the head. Measured 2026-12-07 on the corpus's files with the factor changed to 1.25, shrunk in "
        "place through each transformers version's forward: GPT-NeoX, StableLM and Phi fail in the forward "
        "(a size mismatch: cos/sin of 100 dims against 80), Phi-3 is refused when its config loads (4.57.1: the "
        "LongRoPE factor lists no longer match; 5.23.0: validate_rope); under both versions (tests/"
        "test_hf_refused_keys.py). GLM-4.5's file failed the same way once, but its check takes a minute (92 layers, "
        "160 experts), so it is not in the rule's measured list. For another model type the error says it was not "
        "measured there.",
    example='{"hidden_size": 2560, "num_attention_heads": 32, "rotary_pct": 1.25}',
    fix="Write a factor of at most 1 (the share of each head that rotates).",
    references=("Su et al. 2021, RoFormer, arXiv 2104.09864, eq. 14-15",),
)
NOT_INTEGER = define_rule(
    "RV004", "rotary-dimension-not-integer", "warning",
    "head_dim or the rotary dims are not a whole number and get truncated",
    what="Flags hidden_size not divisible by num_attention_heads, and head_dim x partial_rotary_factor "
         "(or rotary_pct) that is not a whole number. For a Hugging Face config the first is an error where the "
         "transformers version ropelaw follows was measured to refuse it, per model type "
         "(`ropelaw/data/hf_head_split.json`, scripts/hf_head_split.py: the config class, the model build or the "
         "forward raises; the message quotes the runtime's error), a warning where that version runs it.",
    why="transformers truncates (`int(head_dim * partial_rotary_factor)`), so the model rotates fewer dims "
        "than the config suggests, and a reimplementation that rounds will disagree with the checkpoint.",
    example='{"hidden_size": 4096, "num_attention_heads": 48}',
    fix="Set head_dim explicitly, or pick a factor that gives a whole number of dims.",
    references=(HF_ROPE,),
    explains_unanalysed=False,
)
BASE_LE_ONE = define_rule(
    "RV005", "base-not-above-one", "warning",
    "the RoPE base is <= 1",
    what="Checks rope_theta (and its aliases, and per-layer bases) is > 1.",
    why="theta_i = base^(-2i/d): base 1 makes every pair rotate at 1 rad/token (no long-range signal), "
        "a base below 1 makes later pairs rotate faster than earlier ones, and <= 0 is undefined.",
    example='{"rope_theta": 1.0}',
    fix="Use a base > 1: 10000 (RoFormer), 5e5 (Llama 3), 1e6 (Qwen2).",
    references=("Su et al. 2021, RoFormer, arXiv 2104.09864, eq. 15",),
)
FACTOR_LT_ONE = define_rule(
    "RV006", "factor-below-one", "warning",
    "a scaling factor is below 1",
    what="Checks the `factor` of linear, dynamic, NTK, YaRN, Llama 3 and LongRoPE scaling is >= 1.",
    why="These schemes extend the context by the factor; below 1 they compress it (and transformers rejects "
        "factor < 1 for most of them).",
    example='{"rope_scaling": {"rope_type": "linear", "factor": 0.5}}',
    fix="Use factor = target context / trained context (>= 1), or drop rope_scaling.",
    references=(HF_ROPE, "Chen et al. 2023, arXiv 2306.15595 (Position Interpolation)"),
)
MISSING_PARAM = define_rule(
    "RV007", "missing-scheme-parameter", "error",
    "the scaling scheme lacks a parameter it needs",
    what="Checks that rope_scaling / rope_parameters holds every parameter the named scheme requires "
         "(e.g. `factor` for yarn, `short_factor` and `long_factor` for longrope).",
    why="transformers fails at model load or falls back to a default that is not what the config's author meant.",
    example='{"rope_scaling": {"rope_type": "yarn"}}',
    fix="Add the parameter; `ropelaw schemes` lists what each scheme takes.",
    references=(HF_ROPE,),
)
UNKNOWN_SCHEME = define_rule(
    "RV008", "unknown-scheme", "error",
    "rope_type names no known scaling scheme",
    what="Checks that `rope_type` (or the older `type`) is a scheme ropelaw knows: default, linear, dynamic, "
         "ntk, yarn, llama3, longrope (su), rerope, leaky_rerope.",
    why="An unknown name either fails at load or is silently ignored, leaving plain RoPE past the trained length.",
    example='{"rope_scaling": {"type": "yarn2", "factor": 4}}',
    fix="Use one of the names listed by `ropelaw schemes`.",
    references=(HF_ROPE,),
)
UNKNOWN_PARAM = define_rule(
    "RV009", "unknown-scheme-parameter", "warning",
    "rope_scaling holds a parameter its scheme does not take",
    what="Flags keys in rope_scaling / rope_parameters that the named scheme does not take. For a Hugging Face "
         "config the message says what perturbing real files under transformers showed (ropelaw/data/hf_keys.json: "
         "the key changed and removed, the forward compared): that the runtime ignores it for this model type, or "
         "that this is not proven. A key the runtime is measured to read for the model type is never RV009: it is "
         "modelled (Phi-3.5-MoE's short_mscale / long_mscale) or reported as RV025.",
    why="Usually a typo (`orignal_max_position_embeddings`) or a parameter of another scheme: the value the "
        "author tuned is not used.",
    example='{"rope_scaling": {"rope_type": "linear", "factor": 4, "beta_fast": 32}}',
    fix="Remove the key or fix its spelling.",
    references=(HF_ROPE,),
    fix_available="in a Hugging Face config, where ropelaw/data/hf_keys.json records the key as ignored by both "
                  "transformers versions ropelaw follows for the model type and scheme (changing and removing it "
                  "changed nothing in the forward): the fix removes the key, nothing else.",
    explains_unanalysed=False,
)
YARN_FACTOR = define_rule(
    "RV010", "yarn-factor-inconsistent", "warning",
    "YaRN factor differs from max_position_embeddings / original_max_position_embeddings",
    what="For rope_type yarn, compares `factor` with max_position_embeddings / original_max_position_embeddings, "
         "in configs that transformers runs (a config.json, axolotl's base model); a training framework's YaRN "
         "(Megatron-Core, torchtitan, OLMo-core) never reads the context it runs at, so it is not checked there.",
    why="YaRN's factor s is the ratio of the extended to the original context (Peng et al. sec. 3); when they "
        "disagree, either the advertised context or the interpolation is wrong (transformers warns about the "
        "same mismatch).",
    example='{"max_position_embeddings": 32768, "rope_scaling": {"rope_type": "yarn", "factor": 4.0, '
            '"original_max_position_embeddings": 32768}}',
    fix="Set max_position_embeddings = factor x original_max_position_embeddings (or fix the factor).",
    references=("Peng et al. 2023, YaRN, arXiv 2309.00071, sec. 3", HF_ROPE),
    explains_unanalysed=False,
)
BAND_ORDER = define_rule(
    "RV011", "llama3-band-order", "warning",
    "Llama 3 scaling: low_freq_factor is not below high_freq_factor",
    what="Checks 0 < low_freq_factor < high_freq_factor for rope_type llama3. " + SEV + "transformers warns "
         "about the order and runs it (equal factors: an empty smoothing band, Llama 4 Scout's 1 and 1): warning; "
         "a factor of 0 divides by zero in _compute_llama3_parameters (ZeroDivisionError): error.",
    why="The bands are wavelengths above original/low (divided by the factor) and below original/high (kept); "
        "low >= high makes the smoothing band empty or inverted (at equality the smoothing formula divides by "
        "high - low = 0, but no wavelength falls in the empty band, so transformers' frequencies stay finite).",
    example='{"rope_scaling": {"rope_type": "llama3", "factor": 8, "low_freq_factor": 4, "high_freq_factor": 1}}',
    fix="Llama 3.1 uses low_freq_factor 1, high_freq_factor 4.",
    references=("Meta, The Llama 3 Herd of Models, arXiv 2407.21783", HF_ROPE),
)
LONGROPE_LEN = define_rule(
    "RV012", "longrope-factor-length", "error",
    "LongRoPE factor list has the wrong length or a non-positive entry",
    what="Checks short_factor and long_factor each have d/2 entries (one per rotation pair), all > 0. " + SEV +
         "A list of another length is refused (4.57.1 Phi-3, 5.23.0 validation) or fails computing the "
         "frequencies (error); a non-positive entry runs with inf / negative frequencies (warning).",
    why="Each entry divides one pair's frequency; a list of another length belongs to another head size, "
        "and transformers fails at load.",
    example='{"head_dim": 96, "rope_scaling": {"type": "longrope", "short_factor": [1.0, 1.0], ...}}',
    fix="Give d/2 factors (48 for Phi-3-mini's head_dim 96).",
    references=("Ding et al. 2024, LongRoPE, arXiv 2402.13753", HF_ROPE),
)
BAD_LENGTH = define_rule(
    "RV013", "invalid-length", "warning",
    "a context length is not a whole number in the range 2*pi .. 2^31 - 1",
    what="Checks max_position_embeddings, original_max_position_embeddings, seq_length and sliding windows "
         "are whole numbers, at most 2^31 - 1 = 2,147,483,647 tokens, and (for the lengths a bound is "
         "computed from) above 2*pi. A config with an invalid length gets no bound, scheme or dtype checks: "
         "they would be computed on a typo. " + SEV + "transformers runs tiny and huge lengths (warning); 5.23.0's "
         "strict int fields refuse a float (4096.5, 1e30) and 4.57.1's sliding-window mask a fractional "
         "window (error).",
    why="A fractional or tiny length cannot be a context; the scaling law needs T_train > 2*pi (no pair can "
        "complete a period otherwise). A length beyond 2^31 - 1 cannot be indexed by the int32 sequence "
        "offsets of attention kernels (FlashAttention's cu_seqlens) and is ~200x the longest context any "
        "public RoPE model advertises (10,485,760, Llama 4 Scout): it is a typo such as 1e30.",
    example='{"max_position_embeddings": 4096.5}  # or 1e30',
    fix="Write the length in tokens as a whole number within range (131072, not 131072.5 or 1e30).",
    references=("Liu et al. 2023, arXiv 2310.05209, Lemma 1",
                "FlashAttention: flash_attn_varlen_func takes cu_seqlens as torch.int32"),
)
ORIG_GT_MAX = define_rule(
    "RV014", "original-exceeds-max", "warning",
    "original_max_position_embeddings exceeds max_position_embeddings",
    what="Flags a scaling scheme whose original (trained) context is longer than the advertised context, in "
         "configs that transformers runs (a training framework's scheme never reads the context it runs at).",
    why="The scheme then shrinks rather than extends the context; usually the two keys are swapped.",
    example='{"max_position_embeddings": 4096, "rope_scaling": {"original_max_position_embeddings": 131072, ...}}',
    fix="Set original_max_position_embeddings to the pre-training length and max_position_embeddings to "
        "the extended context.",
    references=(HF_ROPE,),
    explains_unanalysed=False,
)
YARN_BETAS = define_rule(
    "RV015", "yarn-beta-order", "warning",
    "YaRN beta_fast is below beta_slow",
    what="Checks beta_fast >= beta_slow > 0 for rope_type yarn (equal betas, as in Kimi K2, make the ramp a "
         "step; transformers runs them). " + SEV + "An inverted pair: transformers warns and runs (warning); a "
         "negative beta is a math domain error in find_correction_dim (error); a 0 is read as the default "
         "(`get(\"beta_slow\") or 1`: RV019, not this rule).",
    why="The NTK-by-parts ramp runs from beta_slow to beta_fast rotations (Peng et al. sec. 3.2); inverted, "
        "the ramp is empty and pairs are interpolated or kept the wrong way round.",
    example='{"rope_scaling": {"rope_type": "yarn", "factor": 4, "beta_fast": 1, "beta_slow": 32}}',
    fix="The paper's values for LLaMA: beta_fast 32, beta_slow 1.",
    references=("Peng et al. 2023, YaRN, arXiv 2309.00071, sec. 3.2",),
)
BAD_SCHEME = define_rule(
    "RV016", "invalid-scheme-setup", "error",
    "the scaling scheme rejects its parameters",
    what="Runs the scheme from the scheme registry with the config's parameters and reports any other "
         "error it raises (a value out of its domain that the specific RV rules do not name). For a config.json "
         "whose scheme transformers has, a warning (transformers computes frequencies from any finite values; "
         "ropelaw cannot analyse them); a scheme only ropelaw has (ReRoPE, Leaky ReRoPE) is an error.",
    why="A scheme that cannot compute its frequencies fails at model load, or leaves plain RoPE in place.",
    example='{"rope_scaling": {"rope_type": "leaky_rerope", "window": 512, "k": 0.5}}',
    fix="Follow the message: it names the parameter and its domain.",
    references=(HF_ROPE,),
)

OUT_OF_RANGE = define_rule(
    "RV017", "value-out-of-range", "warning",
    "a scaling factor or the rotary dimension is far beyond any real model",
    what="Transformers computes with such values (warning). Flags a scheme's `factor` above 2^20 = 1,048,576, or whose "
         "designed context factor x original "
         "context exceeds 2^31 - 1 tokens (the length limit of RV013), and rotary dims above 2^16 = 65,536. "
         "A config with such a value gets no bound, scheme or dtype checks.",
    why="A factor s stretches the slow pairs' periods by s for a context of s x the original one. Public configs "
        "use 2 to 40 (Qwen2.5 YaRN: 4, Llama 3.1: 8, DeepSeek-V3: 40); 2^20 on a 2,048-token pre-training "
        "context (GPT-NeoX-20B, Pythia, Falcon) already designs for 2^31 tokens. Far beyond that the scaled "
        "frequencies underflow to 0 (theta/1e308 is subnormal) and every slow pair stops rotating: the bound "
        "then reads 'unbounded' for a config that is a typo. Rotary dims: public models rotate 16 to 256 "
        "dims per head; 2^16 per head is a typo, and the per-pair checks would cost minutes.",
    example='{"rope_scaling": {"rope_type": "yarn", "factor": 1e308}}',
    fix="Set factor = target context / original context (e.g. 131072 / 8192 = 16); check head_dim.",
    references=("Peng et al. 2023, YaRN, arXiv 2309.00071, sec. 3 (s = L'/L)", HF_ROPE),
)


UNRESOLVED = define_rule(
    "RV018", "unresolved-interpolation", "error",
    "an OmegaConf interpolation in a YAML config cannot be resolved",
    what="Resolves `${key}` (absolute: from the top of the file) and `${.key}` / `${..key}` (relative: the mapping "
         "holding the value, one level up per extra dot) as OmegaConf does, also chains of them, and flags a "
         "reference to a key that is not in the file, a cycle, or an expression ropelaw does not evaluate "
         "(resolvers such as `${oc.env:SEQ}`, text around the reference).",
    why="NeMo and other Hydra configs write lengths as `${.encoder_seq_length}`. One that does not resolve fails "
        "when the framework loads the config, and nobody can tell which length it stands for.",
    example="model:\n  encoder_seq_length: 4096\n  max_position_embeddings: ${.seq_length}  # no model.seq_length",
    fix="Point the interpolation at a key that exists (here `${.encoder_seq_length}`), or write the number.",
    references=("OmegaConf 2.3 documentation, 'Variable interpolation' (omegaconf.readthedocs.io)",),
)
IGNORED_KEY = define_rule(
    "RV019", "runtime-ignores-key", "info",
    "transformers does not read a RoPE key this config sets",
    what="Names a key that transformers (the installed one, else 5.23.0; the JSON output says which) does not read "
         "for this scheme, e.g. `rope_scaling.original_max_position_embeddings` with `dynamic` (its dynamic NTK "
         "rescales from `max_position_embeddings`), a top-level `original_max_position_embeddings` with YaRN "
         "(4.57.1), LongRoPE's `factor` next to a top-level original length (4.57.1) or an original length only "
         "inside `rope_scaling` (4.57.1, MiniCPM style). The numbers ropelaw reports are what really runs.",
    why="The author meant something the model does not do: the frequencies at inference differ from the ones the "
        "config suggests, by 3 to 95% per pair in the cases above.",
    example='{"rope_scaling": {"rope_type": "dynamic", "factor": 4, "original_max_position_embeddings": 4096}, '
            '"max_position_embeddings": 16384}',
    fix="Write the setting where transformers reads it (the message says what it reads instead), or drop the key.",
    references=(HF_ROPE,),
    fix_available="in a Hugging Face config, where ropelaw/data/hf_keys.json records the key as ignored by both "
                  "transformers versions ropelaw follows for the model type and scheme (changing and removing it "
                  "changed nothing in the forward): the fix removes the key, nothing else.",
    explains_unanalysed=False,
)
BEYOND_CONTEXT = define_rule(
    "RV020", "training-length-beyond-context", "error",
    "the training length exceeds the longest input the framework builds the model for",
    what="Flags a training length above the context a framework sizes the model's RoPE cache and mask for, when "
         "the framework refuses it: litgpt's `train.max_seq_length` above the model's `block_size` "
         "(litgpt==0.5.13 `GPT.max_seq_length` raises \"Cannot attend to N, block size is only B\": pretrain.py "
         "sets it from train.max_seq_length; the finetune scripts from the longest kept sequence, capped by it).",
    why="Pre-training stops before its first step, fine-tuning as soon as the data holds a sequence longer than "
        "the block size; the length the config promises is never trained.",
    example="model_name: Mistral-7B-v0.1   # litgpt block_size 4096\ntrain:\n  max_seq_length: 8192",
    fix="Train at most at the block size, or give a model_config with a larger block_size (its RoPE cache "
        "grows with it).",
    references=("litgpt==0.5.13 litgpt/model.py GPT.max_seq_length",),
)
FRAMEWORK_REFUSES = define_rule(
    "RV033", "framework-refuses-config", "error",
    "the training framework itself refuses this config before its first step",
    what="Flags a key of a training config that the framework's own config loading rejects, at that key, with the "
         "framework's reason: llm-foundry `config_overrides` naming an attribute the model's config does not have, "
         "or a dict override with keys the model's dict lacks (llm-foundry==0.22.0 `utils/config_utils.py` "
         "`set_config_overrides` raises ValueError); axolotl's top-level `rope_scaling` (axolotl==0.18.0 "
         "`utils/schemas/deprecated.py` raises: it belongs under `overrides_of_model_config`). ropelaw reads the "
         "rest of the config as if the key were absent.",
    why="A run its framework refuses never starts: the RoPE the file seems to ask for is never trained, and the "
        "fix is in the key the framework names.",
    example="model:\n  name: hf_causal_lm\n  pretrained_model_name_or_path: meta-llama/Llama-3.2-1B\n"
            "  config_overrides:\n    max_seq_len: 8192   # LlamaConfig has no max_seq_len: llm-foundry raises",
    fix="Write the key the framework accepts (the message names it): `max_position_embeddings` for a Hugging Face "
        "model's length, the keys of the model's own `rope_scaling`, axolotl's `overrides_of_model_config`.",
    references=("llm-foundry==0.22.0 llmfoundry/utils/config_utils.py set_config_overrides",
                "axolotl==0.18.0 src/axolotl/utils/schemas/deprecated.py"),
)
