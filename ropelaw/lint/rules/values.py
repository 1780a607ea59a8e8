"""RV0xx: invalid or inconsistent values in a config (``ropelaw lint``).

Each check reads the values the loader found (with their keys and positions) and reports at
the key. These run first; a config with an RV error may not yield a :class:`RopeSpec`, and
then the bound, dtype and scheme checks are skipped for that layer group (said in the
output).
"""

from __future__ import annotations

import math
from dataclasses import replace
from fractions import Fraction
from typing import Any, Iterator

from ...findings import Finding, define_rule
from ...limits import MAX_CONTEXT, MAX_D
from ...numfmt import count as fmt_count
from ..dialects.hf import REQUIRED, SEMANTICS, TRANSFORMERS_SCHEMES, heads_divide_hidden
from ..loader import LoadedConfig, Value, show_value, canonical_scheme
from .runtime import hf_version, value_refusals, with_runtime
from . import runtime
from .layers import LAYER_SEMANTICS_UNKNOWN, UNMODELLED_ROTARY_KEY  # noqa: F401  (problems of the loader)

# -- plausibility limits (values of the right type that no real model has) --------------------
# Lengths: MAX_CONTEXT = 2**31 - 1 tokens, the int32 limit of sequence offsets (ropelaw.limits);
# rotary dims: MAX_D = 2**16 (ropelaw.limits, shared with the CLI).
# Scaling factors: 2**20. A factor s is designed for s x the original context; with 2,048, the
# shortest pre-training context in the corpus (tests/configs: GPT-NeoX-20B, Pythia, Falcon),
# s = 2**20 designs 2**31 tokens, beyond MAX_CONTEXT. Public configs use 2 .. 40 (Qwen2.5 YaRN 4,
# Llama 3.1 8, DeepSeek-V3 40; Phi-3-128k's LongRoPE ratio is 32). Independently, a factor
# with s x original > MAX_CONTEXT is flagged for the config's own original length. (Far beyond
# the limit the scaled frequencies underflow: base 1e4, d 128, s 1e308 gives
# 1e4^(-126/128) / 1e308 = 1.2e-312, a subnormal float64.)
MAX_FACTOR = 2**20
_LENGTH_LIMIT = f"2^31 - 1 = {MAX_CONTEXT:,} tokens, the int32 limit of sequence offsets"
_FACTOR_LIMIT = f"2^20 = {MAX_FACTOR:,}"

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
        "Phi, StableLM and Persimmon. GPT-NeoX, Nemotron and Phi-3 rotate that count rounded up to even "
        "(their rotary slices the head by cos.shape): read that way, RV004 (warning), no RV003.",
    example='{"hidden_size": 4096, "num_attention_heads": 32, "rotary_dim": 63}',
    fix="Choose a partial factor or rotary_dim giving an even number of dims.",
    references=("Su et al. 2021, RoFormer, arXiv 2104.09864, eq. 14-15",),
)
NOT_INTEGER = define_rule(
    "RV004", "rotary-dimension-not-integer", "warning",
    "head_dim or the rotary dims are not a whole number and get truncated",
    what="Flags hidden_size not divisible by num_attention_heads, and head_dim x partial_rotary_factor "
         "(or rotary_pct) that is not a whole number.",
    why="transformers truncates (`int(head_dim * partial_rotary_factor)`), so the model rotates fewer dims "
        "than the config suggests, and a reimplementation that rounds will disagree with the checkpoint.",
    example='{"hidden_size": 4096, "num_attention_heads": 48}',
    fix="Set head_dim explicitly, or pick a factor that gives a whole number of dims.",
    references=(HF_ROPE,),
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
    what="Flags keys in rope_scaling / rope_parameters that the named scheme ignores.",
    why="Usually a typo (`orignal_max_position_embeddings`) or a parameter of another scheme: the value the "
        "author tuned is not used.",
    example='{"rope_scaling": {"rope_type": "linear", "factor": 4, "beta_fast": 32}}',
    fix="Remove the key or fix its spelling.",
    references=(HF_ROPE,),
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
    what="Transformers computes with such values (warning). Flags a scheme's `factor` above 2^20 = 1,048,576, or whose designed context factor x original "
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
# value findings that do not explain a layer group left unanalysed (lint_config adds RV016 then)
NOT_EXPLAINING = frozenset({"RV004", "RV009", "RV010", "RV014", "RV019", "RV021", "RV022"})
_PROBLEM_RULES = {"rotary-dimension-not-integer": "NOT_INTEGER", "unresolved-interpolation": "UNRESOLVED",
                  "runtime-ignores-key": "IGNORED_KEY", "runtime-ignores-block": "IGNORED_KEY",
                  "training-length-beyond-context": "BEYOND_CONTEXT",
                  "layer-semantics-unknown": "LAYER_SEMANTICS_UNKNOWN", "unmodelled-rotary-key": "UNMODELLED_ROTARY_KEY"}


def length_problem(v: Value | None, *, minimum: bool = True) -> str | None:
    """Why ``v`` is not a usable context length, or None (also None when it is not a finite
    number at all: RV001/RV002 report that). A length is a whole number <= MAX_CONTEXT and,
    with ``minimum``, > 2*pi (Liu et al. Lemma 1 needs T > 2*pi). Integers are compared exactly."""
    if v is None:
        return None
    x = v.raw
    n = v.number()
    if n is None:
        return None
    name = v.key or v.where
    whole = x.is_integer() if isinstance(x, float) else isinstance(x, int)
    if not whole:
        return f"{name} must be a whole number, got {show_value(x)}"
    if (x if isinstance(x, int) else n) > MAX_CONTEXT:
        return f"{name} = {fmt_count(x)} is beyond any real context (> {_LENGTH_LIMIT})"
    if minimum and n <= 2 * math.pi:
        return f"{name} = {fmt_count(n)} is not a context length (must exceed 2*pi)"
    return None


def factor_problem(cfg: LoadedConfig, g) -> tuple[Value, str] | None:
    """``(factor value, message)`` when layer group ``g``'s scaling factor is out of range:
    above MAX_FACTOR, or factor x original context > MAX_CONTEXT (exact: Fraction). The
    original context is the scheme's original_max_position_embeddings, else the training length."""
    f = g.params.get("factor")
    if f is None or f.number() is None:
        return None
    s = f.number()
    if s > MAX_FACTOR:
        return f, (f"{f.key or 'factor'} = {fmt_count(s)} is beyond any real scaling factor (> {_FACTOR_LIMIT}; "
                   f"public configs use 2 .. 40)")
    orig = g.params.get("original_max_position_embeddings") or cfg.train_len
    on = orig.number() if orig is not None else None
    if on is None or length_problem(orig) is not None or on < 1:
        return None
    designed = Fraction(s) * Fraction(on)
    if designed > MAX_CONTEXT:
        return f, (f"{f.key or 'factor'} {fmt_count(s)} x original context {fmt_count(on)} [{orig.where}] = "
                   f"{fmt_count(float(designed))} tokens is beyond any real context (> {_LENGTH_LIMIT})")
    return None


def _at(cfg: LoadedConfig, rule, v: Value, message: str, fix: str | None = None, *, refused: dict | None = None,
        **data: Any) -> Finding:
    """A finding of ``rule`` at ``v``. ``refused``: {transformers version: why it refuses or crashes} for this
    case ({}: both run it); for a Hugging Face config it sets the severity (rules/runtime.py)."""
    f = Finding.of(rule, message, path=cfg.path, line=v.line, column=v.column, fix=fix, **data)
    return with_runtime(cfg, f, refused)


def _both(why: str) -> dict:
    """Both supported transformers versions refuse or crash, for the same reason."""
    return {version: why for version in SEMANTICS}


def _type_name(x: Any) -> str:
    if x is None:
        return "null"
    if isinstance(x, bool):
        return "boolean"
    if isinstance(x, str):
        return "string"
    if isinstance(x, (list, tuple)):
        return "list"
    if isinstance(x, dict):
        return "mapping"
    return type(x).__name__


def _check_value(cfg: LoadedConfig, v: Value) -> Iterator[Finding]:
    """RV001/RV002 for one value read from the file."""
    x = v.raw
    if v.expect in ("number", "int"):
        if isinstance(x, bool) or not isinstance(x, (int, float)):
            yield _at(cfg, INVALID_TYPE, v, f"{v.key} must be a number, got {_type_name(x)} {show_value(x)}",
                      refused=value_refusals(cfg, v, "type"))
            return
        try:
            f = float(x)
        except OverflowError:
            yield _at(cfg, NON_FINITE, v, f"{v.key} = {fmt_count(x)} is beyond float range",
                      refused=value_refusals(cfg, v, "nonfinite"))
            return
        if hasattr(x, "digits"):  # parse.OverflowInt: a literal of hundreds of digits, kept as inf
            yield _at(cfg, NON_FINITE, v, f"{v.key} is {x!r}: beyond float range",
                      refused=value_refusals(cfg, v, "nonfinite"))
            return
        if not math.isfinite(f):
            yield _at(cfg, NON_FINITE, v, f"{v.key} is {f!r} (not a finite number)",
                      refused=value_refusals(cfg, v, "nonfinite"))
            return
        if v.expect == "int" and f != int(f):
            yield _at(cfg, BAD_LENGTH if "position" in (v.key or "") or "length" in (v.key or "")
                      or "window" in (v.key or "") else INVALID_TYPE,
                      v, f"{v.key} must be a whole number, got {show_value(x)}", refused=value_refusals(cfg, v, "float"))
    elif v.expect == "list":
        # a factor list that is not a list of numbers: 4.57.1 Phi-3 refuses it (ValueError), Llama's
        # longrope and 5.23.0 fail building the frequencies (torch.tensor of strings)
        crash = _both(f"refuses {v.key}: LongRoPE factors must be a list of numbers")
        if not isinstance(x, (list, tuple)):
            yield _at(cfg, INVALID_TYPE, v, f"{v.key} must be a list of numbers, got {_type_name(x)}", refused=crash)
            return
        for i, e in enumerate(x):
            if isinstance(e, bool) or not isinstance(e, (int, float)):
                yield _at(cfg, INVALID_TYPE, v, f"{v.key}[{i}] must be a number, got {_type_name(e)} {show_value(e)}",
                          refused=crash)
                return
            try:
                ok = math.isfinite(float(e))
            except OverflowError:
                ok = False
            if not ok:  # inf / NaN factors: every affected frequency is 0 or NaN, and the model runs
                yield _at(cfg, NON_FINITE, v, f"{v.key}[{i}] is {show_value(e)} (not a finite number)", refused={})
                return
    elif v.expect == "str":
        if not isinstance(x, str):  # rope_type 3: ROPE_INIT_FUNCTIONS[3] is a KeyError
            yield _at(cfg, INVALID_TYPE, v, f"{v.key} must be a string, got {_type_name(x)} {show_value(x)}",
                      refused=_both(f"has no rope_type {x!r} (KeyError at model load)"))
    elif v.expect == "bool":
        if not isinstance(x, bool) and not (isinstance(x, str) and x.lower() in ("true", "false")):
            yield _at(cfg, INVALID_TYPE, v, f"{v.key} must be true or false, got {_type_name(x)} {show_value(x)}",
                      refused={})  # transformers tests its truth value: any value runs
    elif v.expect == "mapping":
        if not isinstance(x, dict):
            yield _at(cfg, INVALID_TYPE, v, f"{v.key} must be a mapping, got {_type_name(x)}",
                      refused=value_refusals(cfg, v, "type"))


def check(cfg: LoadedConfig) -> list[Finding]:
    """Every RV finding of ``cfg``, each at the key it concerns."""
    out: list[Finding] = []
    seen: set[tuple] = set()
    # 1. types and finiteness of every value read from the file
    for v in cfg.inputs:
        if v.key is None or (v.key, v.line, v.column) in seen:
            continue
        seen.add((v.key, v.line, v.column))
        out.extend(_check_value(cfg, v))
    bad_keys = {f.data.get("key") for f in out} | {(f.line, f.column) for f in out}
    # 2. problems the loader noticed while deriving (truncated dims, bad rope_scaling type)
    for name, v, message in cfg.problems:
        if v is None or name in runtime.PROBLEMS:  # reported by rules/runtime.py
            continue
        rule = globals()[_PROBLEM_RULES[name]] if name in _PROBLEM_RULES else INVALID_TYPE
        if rule is INVALID_TYPE and (v.line, v.column) in bad_keys:
            continue
        f = _at(cfg, rule, v, message, refused=_problem_refusals(cfg, rule, v))
        if name == "runtime-ignores-block":  # a whole block or text model unread: other frequencies run
            f = replace(f, severity="warning")
        out.append(f)
    # 3. per layer group: dims, base, scheme (a value shared by two groups is reported once)
    shared: set[int] = set()
    for g in cfg.layers:
        if not g.rope:
            continue  # NoPE layers / layers without attention: no rotary to check
        label = "" if g.label == "all layers" else f" ({g.label})"
        d = g.d.number()
        if id(g.d) in shared:
            d = None
        shared.update((id(g.d),))
        if d is not None and d > MAX_D:
            out.append(_at(cfg, OUT_OF_RANGE, g.d, f"rotary dimension {fmt_count(g.d.raw)} from {g.d.where}{label} "
                                                   f"is beyond any real model (> 2^16 = {MAX_D:,}): not analysed",
                           fix="check head_dim / rotary_dim / partial_rotary_factor: public models rotate 16 to "
                               "256 dims per head", refused={}))
        elif d is not None and (d != int(d) or int(d) < 2 or int(d) % 2):
            out.append(_at(cfg, ODD_DIM, g.d, f"rotary dimension {fmt_count(d)} from {g.d.where}{label} is "
                                              f"{'below 2' if d < 2 else 'odd'}: RoPE rotates pairs of dims",
                           refused=_odd_dim_refusals(cfg, g, d)))
        b = g.base.number() if id(g.base) not in shared else None
        shared.add(id(g.base))
        if b is not None and b <= 1:  # base ** arange: 1 -> every frequency 1, <= 0 -> inf / NaN; both run
            out.append(_at(cfg, BASE_LE_ONE, g.base, f"base {b:g} from {g.base.where}{label} must be > 1", refused={}))
        out.extend(_scheme_values(cfg, g, label))
    # 4. lengths
    # (fractional ones were reported by _check_value at their key; here: too small, too large)
    windows = [g.window for g in cfg.layers if g.window is not None]
    for v in (cfg.max_pos, cfg.original_max, cfg.train_len, cfg.target, *windows):
        if v is None or v.key is None:
            continue
        why = length_problem(v, minimum=not any(v is w for w in windows))
        if why is not None and "whole number" not in why:  # too short / too long: transformers runs both
            out.append(_at(cfg, BAD_LENGTH, v, why, length=v.raw if isinstance(v.raw, int) else v.number(),
                           max_length=MAX_CONTEXT,
                           refused=value_refusals(cfg, v, "float") if isinstance(v.raw, float) else {}))
    mx, og = cfg.max_pos, cfg.original_max
    if mx is not None and og is not None and mx.number() and og.number() and og.number() > mx.number() \
            and cfg.layers[0].scheme.raw not in (None, "default") and _context_keys_matter(cfg):
        out.append(_at(cfg, ORIG_GT_MAX, og, f"{og.key or og.where} {fmt_count(og.number())} exceeds {mx.where} "
                                             f"{fmt_count(mx.number())}: the scheme shrinks the context", refused={}))
    out = _dedupe(out)
    return out + runtime.check(cfg, out)


# partial_rotary_factor giving an odd int(head_dim * factor): what the model's attention does with it
# (tests/test_severity_parity.py runs each under both versions). Phi, StableLM and Persimmon slice the
# query to int(head_dim * factor) dims and rotate it with cos/sin of 2 * ceil(dims / 2): a size mismatch
# in the forward. GPT-NeoX, Nemotron and Phi-3 slice by cos.shape[-1] and so rotate the rounded-up even
# count (the loader reads that: no RV003 there).
ODD_PARTIAL_CRASHES = ("phi", "stablelm", "persimmon")


def _odd_dim_refusals(cfg: LoadedConfig, g, d: float) -> dict | None:
    """RV003's runtime verdict: an odd head_dim / rotary_dim fails in both versions (5.23.0 validate_rope
    refuses an odd head_dim > 4; otherwise the cos/sin of 2 * ceil(d / 2) dims do not fit the d dims); an
    odd count from partial_rotary_factor depends on the model (ODD_PARTIAL_CRASHES); None: not verified."""
    partial = any(k in g.d.note for k in ("partial_rotary_factor", "rotary_pct", "rotary_percent"))
    if partial and cfg.arch not in ODD_PARTIAL_CRASHES:
        return None
    if d < 2 and not partial:
        return None  # head_dim <= 4 is a test fixture's size that 5.23.0 allows; not verified
    return _both(f"fails in the forward: cos/sin of {2 * math.ceil(d / 2)} dims against {fmt_count(d)} rotated "
                 f"dims (a size mismatch)")


def _problem_refusals(cfg: LoadedConfig, rule, v: Value) -> dict | None:
    """The runtime verdict of a problem the loader noticed (see check, step 2)."""
    if rule is INVALID_TYPE and v.expect == "bool":
        return {}  # yarn truncate "false": transformers tests the string's truth value and runs
    if rule is NOT_INTEGER and (v.key or "").split(".")[-1] in ("hidden_size", "n_embd", "d_model"):
        if heads_divide_hidden(cfg.arch, SEMANTICS[1]):
            return {SEMANTICS[1]: f"refuses {v.key}: hidden_size not a multiple of num_attention_heads "
                                  f"(its config class's validate_architecture)"}
        return {}
    if rule is NOT_INTEGER:
        return None
    return {} if rule is IGNORED_KEY else None


def _context_keys_matter(cfg: LoadedConfig) -> bool:
    """RV010 and RV014 compare a scheme's original context with ``max_position_embeddings``, as
    transformers does (it warns about the same YaRN mismatch) for a config it runs (a config.json,
    axolotl's base model). A training framework's rotary code (megatron-core's
    ``YarnRotaryEmbedding`` and Llama 3.1 bands, torchtitan, OLMo-core, litgpt) takes the factor and
    the original length only and never reads the context it is run at (megatron-core==0.16.1
    ``models/common/embeddings/yarn_rotary_pos_embedding.py``): there the two keys cannot disagree."""
    return cfg.kind == "hf" or cfg.semantics is not None


def _dedupe(findings: list[Finding]) -> list[Finding]:
    seen, out = set(), []
    for f in findings:
        k = (f.code, f.line, f.column, f.message)
        if k not in seen:
            seen.add(k)
            out.append(f)
    return out


def _scheme_values(cfg: LoadedConfig, g, label: str) -> Iterator[Finding]:
    from ...schemes import SCHEMES

    sv = g.scheme
    if not isinstance(sv.raw, str):
        return  # RV001 reported it
    name = canonical_scheme(sv.raw)
    info = SCHEMES.get(name)
    if info is None:
        yield _at(cfg, UNKNOWN_SCHEME, sv, f"{sv.key or 'rope_type'} {sv.raw!r}{label} is not a known scheme "
                                           f"(known: {', '.join(sorted({i.name for i in SCHEMES.values()}))})",
                  refused=_both(f"has no rope_type {sv.raw!r} (KeyError at model load)"))
        return
    given = set(g.params)
    # loader-provided context parameters are not the user's typo
    allowed = set(info.required) | set(info.optional) | {"max_position_embeddings"}
    anchor = g.block or sv
    yield from _missing_params(cfg, g, info, anchor, label)
    for p in sorted(given - allowed):
        v = g.params[p]
        yield _at(cfg, UNKNOWN_PARAM, v, f"{v.key} is not a parameter of scheme {info.name!r} (takes: "
                                         f"{', '.join(info.required + info.optional)})", refused={})
    f = g.params.get("factor")
    bad_factor = factor_problem(cfg, g)
    if bad_factor is not None:  # transformers computes with any finite factor (underflowing frequencies)
        yield _at(cfg, OUT_OF_RANGE, bad_factor[0], bad_factor[1] + label,
                  factor=bad_factor[0].number(), max_factor=MAX_FACTOR, refused={})
    if f is not None and f.number() is not None and f.number() < 1:  # transformers warns ("must be >= 1") and runs
        yield _at(cfg, FACTOR_LT_ONE, f, f"{f.key} = {f.number():g}{label} is below 1: scheme {info.name!r} "
                                         f"would shrink the context", refused={})
    if info.name == "yarn":
        yield from _yarn_values(cfg, g, f if bad_factor is None else None)
    if info.name == "llama3":
        lo, hi = g.params.get("low_freq_factor"), g.params.get("high_freq_factor")
        lo_n = lo.number() if lo else 1.0
        hi_n = hi.number() if hi else 4.0
        if lo_n is not None and hi_n is not None and not (0 < lo_n < hi_n):
            v = lo or hi
            # _compute_llama3_parameters divides by both factors (Python floats: ZeroDivisionError at 0);
            # otherwise transformers warns "high_freq_factor must be greater than low_freq_factor" and runs
            # (equal factors: an empty smoothing band, Llama 4 Scout's 1 and 1)
            zero = [n for n, x in (("low_freq_factor", lo_n), ("high_freq_factor", hi_n)) if x == 0]
            what = (f"low_freq_factor {lo_n:g} equals high_freq_factor {hi_n:g}: no smoothing band (wavelengths above "
                    f"original / {lo_n:g} are divided by the factor, the rest kept; transformers runs it)"
                    if lo_n == hi_n and lo_n > 0 else
                    f"low_freq_factor {lo_n:g} must be > 0 and below high_freq_factor {hi_n:g} (wavelength bands "
                    f"original/low > original/high)")
            yield _at(cfg, BAND_ORDER, v, what,
                      refused=_both(f"crashes building the frequencies: original / {zero[0]} divides by zero "
                                    f"(ZeroDivisionError)") if zero else {})
    if info.name == "longrope":
        d = g.d.number()
        pairs = int(d) // 2 if d is not None and d == int(d) and 2 <= d <= MAX_D else None  # else RV003/RV017
        for p in ("short_factor", "long_factor"):
            v = g.params.get(p)
            if v is None or not isinstance(v.raw, list) or pairs is None:
                continue
            if len(v.raw) != pairs:
                # 4.57.1 Phi-3 / 5.23.0 validation raise ValueError; elsewhere ext_factors * base^... is a size
                # mismatch at init (short) or at the first input past the original length (long)
                yield _at(cfg, LONGROPE_LEN, v, f"{v.key} has {len(v.raw)} entries; rotary dims {fmt_count(d)} "
                                                f"({g.d.where}) need d/2 = {pairs}",
                          refused=_both(f"refuses {v.key}: {len(v.raw)} factors for {pairs} frequencies (ValueError, "
                                        f"or a size mismatch computing them)"))
                continue
            for i, e in enumerate(v.raw):
                if isinstance(e, (int, float)) and not isinstance(e, bool) and e <= 0 and \
                        (isinstance(e, int) or math.isfinite(e)):
                    yield _at(cfg, LONGROPE_LEN, v, f"{v.key}[{i}] = {show_value(e)} must be > 0 "
                                                    f"(it divides pair {i}'s frequency)", refused={})  # inf / < 0: runs
                    break


def _yarn_values(cfg: LoadedConfig, g, f: Value | None) -> Iterator[Finding]:
    bf, bs = g.params.get("beta_fast"), g.params.get("beta_slow")
    bf_n = bf.number() if bf else 32.0
    bs_n = bs.number() if bs else 1.0
    if bf_n is not None and bs_n is not None and not (bf_n >= bs_n > 0):
        v = bf or bs
        # a negative beta: find_correction_dim takes log(L / (beta 2 pi)) (math domain error); an inverted
        # pair: transformers warns "beta_fast field must be greater than beta_slow" and runs (0 is read as the
        # default by `get("beta_fast") or 32`: the loader reports that, RV019)
        yield _at(cfg, YARN_BETAS, v, f"beta_fast {bf_n:g} must be at least beta_slow {bs_n:g} > 0",
                  refused=_both("crashes building the frequencies: log of a negative number (math domain error)")
                  if min(bf_n, bs_n) < 0 else {})
    orig = g.params.get("original_max_position_embeddings")
    mx = cfg.max_pos
    if f is None or orig is None or mx is None or not _context_keys_matter(cfg):
        return
    fn, on, mn = f.number(), orig.number(), mx.number()
    if None in (fn, on, mn) or on <= 0 or fn < 1:
        return
    ratio = Fraction(mn) / Fraction(on)
    # transformers' own check (4.57.1 / 5.23.0 modeling_rope_utils: implicit_factor = max_position_embeddings /
    # original_max_position_embeddings; warns if implicit_factor != factor) divides in float64: a factor that
    # is that quotient (3.2 = 131,072 / 40,960) is consistent even where the exact ratio is not a float
    if fn != mn / on:
        implied = fn * on
        yield _at(cfg, YARN_FACTOR, f,
                  f"YaRN factor {fn:g} but {mx.where} / {orig.key or orig.where} = {fmt_count(mn)} / {fmt_count(on)} = "
                  f"{float(ratio):g}: the factor implies a context of {fmt_count(implied)}",
                  fix=f"set max_position_embeddings to {fmt_count(implied)} if that is the context you serve, "
                      f"or factor to {float(ratio):g}",
                  factor=fn, implied_context=implied, max_position_embeddings=mn, refused={})


def scheme_error(cfg: LoadedConfig, g, message: str) -> Finding:
    """RV016 for an error the registry raised that no specific RV rule covers. For a Hugging Face config whose
    scheme transformers has (it computes frequencies from any finite values, at worst zero or NaN ones) it is
    a warning: ropelaw cannot analyse what transformers runs; a scheme only ropelaw has (ReRoPE, Leaky
    ReRoPE) is refused by transformers anyway (RV021)."""
    v = g.block or (g.scheme if g.scheme.key else g.base)  # plain RoPE: the base is what is left to blame
    sem = hf_version(cfg)
    runs = sem is not None and canonical_scheme(g.scheme.raw) in TRANSFORMERS_SCHEMES[sem]
    return _at(cfg, BAD_SCHEME, v, message, refused={} if runs else None)


def _missing_params(cfg: LoadedConfig, g, info, anchor: Value, label: str) -> Iterator[Finding]:
    """RV007. For a Hugging Face config: the keys transformers' validation requires (KeyError when one is
    missing: hf.REQUIRED, per version; a key only the other version misses is RV022); otherwise the
    registry's required parameters."""
    sem = hf_version(cfg)
    block = g.block.raw if g.block is not None and isinstance(g.block.raw, dict) else None
    if sem is None or block is None or info.name not in REQUIRED[sem]:
        for p in info.required:
            if p not in g.params:
                yield _at(cfg, MISSING_PARAM, anchor, f"scheme {info.name!r}{label} needs {p!r} in "
                                                      f"{anchor.key or 'rope_scaling'}")
        return
    keys = {str(k) for k in block}
    missing = {ver: [p for p in REQUIRED[ver].get(info.name, ()) if p not in keys] for ver in SEMANTICS}
    refused = {ver: f"refuses it: KeyError: missing {', '.join(ps)} in {anchor.key or 'rope_scaling'}"
               for ver, ps in missing.items() if ps}
    for p in missing[sem]:
        yield _at(cfg, MISSING_PARAM, anchor, f"scheme {info.name!r}{label} needs {p!r} in "
                                              f"{anchor.key or 'rope_scaling'}", refused=refused)
    other = [ver for ver in refused if ver != sem]
    if other and not missing[sem]:
        cfg.refusals.append((other[0], anchor, refused[other[0]]))
