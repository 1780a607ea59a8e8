"""RV021 / RV022: what transformers does with a config.json it is given (``ropelaw lint``).

Severity follows the runtime. For a Hugging Face ``config.json`` (a ``model_type``), an RV finding is
an **error** only when the transformers version whose semantics ropelaw follows (``semantics`` in the
JSON output: the installed one, 4.57.1 or 5.23.0) refuses the config or crashes on it (the config
class raises, the rotary cannot be built, the forward fails); where transformers warns and runs, or
runs silently, ropelaw **warns**. Each value rule says, per case, what each version does
(:func:`with_runtime` attaches it to the finding: ``data["refused_by"]``), and
``tests/test_severity_parity.py`` runs both versions on every case.

- RV021 runtime-refuses-config: the followed version refuses the config for a reason no value rule
  names (a ``model_type`` it does not know, a rope_type it has no function for, a model-specific
  validator, a strict integer field holding a float, a flattened Llama 4 file).
- RV022 other-runtime-refuses-config: the *other* supported version refuses it (for any reason, also
  those a value rule reports): a config that runs on one and not the other.

Training-framework configs keep each rule's declared severity (their runtime is not transformers).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ...findings import Finding, define_rule
from ...numfmt import count as fmt_count
from ..dialects import hf
from ..model import LoadedConfig, as_problem, show_value

if TYPE_CHECKING:
    from ..check import Linting

V4, V5 = hf.SEMANTICS
HF_CONFIG = "transformers: src/transformers/configuration_utils.py, models/auto/configuration_auto.py"

REFUSED = define_rule(
    "RV021", "runtime-refuses-config", "error",
    "the transformers version ropelaw follows refuses this config or crashes building the model",
    what="For a Hugging Face config.json, names what the transformers version ropelaw follows (the installed "
         "one: 4.57.1 or 5.23.0; `semantics` in the JSON output) refuses and no value rule reports: a "
         "`model_type` it does not know (and no `auto_map` to remote code), a `rope_type` it has no function "
         "for (KeyError at model load: 'mrope' outside Qwen2-VL / Qwen2.5-VL, or written as `rope_type` in "
         "4.57.1; ropelaw's own 'ntk', 'rerope', 'leaky_rerope'), a config class's own validation "
         "(4.57.1 OLMo / Chameleon / Fuyu want exactly {type, factor > 1.0 as a float}; Phi-3 exactly {type, "
         "short_factor, long_factor}; 5.23.0 Phi-3 refuses type 'su'), 5.23.0's strict integer fields "
         "holding a float (`\"max_position_embeddings\": 8192.0`), hidden_size not a multiple of "
         "num_attention_heads with head_dim given where the runtime was measured to refuse it "
         "(`hf_head_split.json`: config class, model build or forward), a per-layer list of another length than "
         "the layers (`hf_layer_lengths.json`), multimodal RoPE sections (`mrope_section` / `xdrope_section`) not "
         "summing to half the rotated dims where the version was measured to refuse them "
         "(`hf_mrope_sections.json`), and a Llama 4 file with the text model's keys at "
         "the top level (no text_config), which 5.23.0 refuses. The numbers ropelaw reports are its reading "
         "of the file as the other version (or the file's own values) would run it; the message says which.",
    why="A config the runtime refuses never becomes a model: the frequencies and bounds of a file nobody can "
        "load are not the ones anyone runs. An error here means transformers itself raises.",
    example='{"model_type": "qwen2_5_vl", "rope_scaling": {"rope_type": "mrope", "mrope_section": [16, 24, 24]}}  '
            '# transformers 4.57.1: KeyError: \'mrope\'',
    fix="Write the config the way this version reads it (the message says what it wants), or run it with the "
        "transformers version that loads it.",
    references=(HF_CONFIG, "transformers: src/transformers/modeling_rope_utils.py (ROPE_INIT_FUNCTIONS)"),
    explains_unanalysed=False,
)
OTHER_REFUSED = define_rule(
    "RV022", "other-runtime-refuses-config", "warning",
    "the other supported transformers version refuses this config",
    what="ropelaw follows one transformers version (the installed one: 4.57.1 or 5.23.0); this finding says "
         "that the other one refuses or crashes on the config, and why (the same conditions as RV021 and the "
         "value rules' runtime cases: e.g. 4.57.1 cannot build a Qwen2.5-VL config with `\"rope_type\": "
         "\"mrope\"` (KeyError), 5.23.0 refuses `\"max_position_embeddings\": 8192.0` (a strict int field).",
    why="A config.json is loaded by whichever transformers its users have; one that only one supported "
        "version can load breaks for the others.",
    example='{"model_type": "llama", "max_position_embeddings": 8192.0}  # runs on 4.57.1, refused by 5.23.0',
    fix="Write the value so both versions read it (an integer, the key the older version reads), or pin "
        "the version that runs it.",
    references=(HF_CONFIG,),
    explains_unanalysed=False,
)

REMOTE = define_rule(
    "RV023", "remote-code-model", "error",
    "the transformers version ropelaw follows builds this model only by running its repository's own code",
    what="Names a config.json with an `auto_map` (code in the model's repository) whose `model_type` the "
         "transformers version ropelaw follows does not have: `AutoConfig.from_pretrained` builds it only with "
         "`trust_remote_code=True`, running that code, which ropelaw never runs. The message says what the "
         "numbers are instead: the other supported version's reading where it has the type (Kimi-K2.5's "
         "`kimi_k25` under 4.57.1), ropelaw's encoding of the code for the families it encodes (ChatGLM, "
         "InternLM2, Qwen v1), else the RoPE keys read by their transformers names (`rope_theta`, "
         "`rope_scaling`, `partial_rotary_factor` ...). A type the version has runs its own class whatever the "
         "auto_map says: no finding.",
    why="Without the repository's code the runtime loads nothing, and the numbers are a reading of the keys, not "
        "of the code that runs: that code may read them differently (another default base, its own scaling), "
        "and nothing here checked it. An error, never an \"ok\" for a model nobody here built.",
    example='{"model_type": "phi-msft", "auto_map": {"AutoModelForCausalLM": "modeling_phi.PhiForCausalLM"}, ...}',
    fix="Check the repository's modeling code for how it builds its rotary, or use the transformers class of the "
        "same architecture (microsoft/phi-2 is model_type phi since transformers 4.37), or the transformers "
        "version that has the type.",
    references=(HF_CONFIG,),
)
PROBLEMS = (REMOTE,)  # the rules of loader problems this module reports (rules/values.py reports the others)


def hf_version(cfg: LoadedConfig) -> str | None:
    """The transformers version whose semantics ``cfg`` follows, or None for a config transformers does not
    run itself (a training framework's)."""
    sem = cfg.semantics or ""
    if cfg.kind != "hf" or not sem.startswith("transformers "):
        return None
    v = sem.split()[1]
    return v if v in hf.SEMANTICS else None


def with_runtime(cfg: LoadedConfig, f: Finding, refused: dict | None) -> Finding:
    """``f`` with the runtime's verdict: ``refused`` maps a transformers version to why it refuses or crashes
    ({} or no entry: it runs). For a Hugging Face config the severity becomes error when the followed version
    refuses, else at most warning; the reason is appended to the message and kept in ``data["refused_by"]``.
    ``refused=None`` (no verdict for this case) keeps the rule's declared severity."""
    sem = hf_version(cfg)
    if sem is None or refused is None:
        return f
    refused = {k: v for k, v in refused.items() if v}
    severity = "error" if sem in refused else ("warning" if f.severity == "error" else f.severity)
    message = f.message + (f" (transformers {sem} {refused[sem]})" if sem in refused else "")
    data = dict(f.data)
    if refused:
        data["refused_by"] = {k: refused[k] for k in sorted(refused)}
    return replace(f, severity=severity, message=message, data=data)


def _field(v) -> str | None:
    """The config-class field a value is (its last key), or None for a value inside a rope block."""
    parts = (v.key or "").split(".")
    if not v.key or any(p in ("rope_scaling", "rope_parameters") for p in parts[:-1]):
        return None
    return parts[-1]


def split_refusals(cfg: LoadedConfig, explicit: bool) -> dict:
    """{version: why it refuses} for ``cfg``'s hidden_size not a multiple of num_attention_heads, head_dim given
    (``explicit``) or not: measured per decoder type on tiny models (``hf_head_split.json``, scripts/hf_head_split.py:
    the config class, the model build or the forward raises), else the config class's own check
    (``hf_types.json``'s ``heads_divide_hidden``, 5.x ``validate_architecture``) for a type that table has not."""
    from ..layer_groups import layer_arch
    from ..layers import head_split_refusal, head_split_verdict

    out = {}
    for version in hf.SEMANTICS:
        arch = layer_arch(cfg.arch, None, version)
        if head_split_verdict(arch, explicit, version) is not None:
            why = head_split_refusal(arch, explicit, version)
        elif hf.heads_divide_hidden(cfg.arch, version):
            why = (f"refuses hidden_size not a multiple of num_attention_heads (its config class's "
                   f"validate_architecture{', even with head_dim given' if explicit else ''})")
        else:
            why = None
        if why:
            out[version] = why
    return out


# top-level keys by what a non-integer does there in 4.57.1 (no strict fields): sizes of weights crash
# at model build (torch.empty wants ints), a window crashes the mask (slice indices), lengths run
DIM_FIELDS = {"hidden_size", "n_embd", "d_model", "num_attention_heads", "n_head", "num_heads", "head_dim",
              "kv_channels", "qk_rope_head_dim", "rotary_dim"}
WINDOW_FIELDS = {"sliding_window", "sliding_window_size"}
LENGTH_FIELDS = {"max_position_embeddings", "max_sequence_length", "n_positions", "seq_length",
                 "original_max_position_embeddings"}
READS_MAX_POS = {"dynamic", "yarn", "longrope", "llama3"}  # 4.57.1 schemes that compute with max_position_embeddings


def value_refusals(cfg: LoadedConfig, v, problem: str) -> dict:
    """What each transformers version does with value ``v`` that has ``problem``: "type" (not the type the
    key needs), "nonfinite" (NaN / inf), "float" (a float where an int is needed, whole or not). Returns
    {version: why it refuses}; a version absent runs it (RV001 / RV002 / RV013 become warnings there)."""
    x, field, out = v.raw, _field(v), {}
    if field is not None and field in hf.strict_int_keys(cfg.arch, V5) and \
            not (isinstance(x, int) and not isinstance(x, bool)):
        out[V5] = (f"refuses {v.key} = {show_value(x)}: the config class declares it int "
                   f"(strict dataclass, StrictDataclassFieldValidationError)")
    scheme = cfg.layers[0].scheme.raw if cfg.layers else None
    scheme = scheme if isinstance(scheme, str) else "default"
    if problem == "type":
        if isinstance(x, bool) or (isinstance(x, str) and v.expect == "bool"):
            return out  # True is 1 to arithmetic; a non-empty string is truthy: both run it
        if isinstance(x, str) and field in LENGTH_FIELDS and scheme not in READS_MAX_POS:
            return out  # 4.57.1's plain / linear rotary never reads the length; 5.23.0 strict (above)
        why = f"crashes on {v.key} = {show_value(x)}: a {type(x).__name__} where its code computes with a number"
        if v.expect == "mapping" or v.expect == "list":
            why = (f"refuses {v.key}: a {type(x).__name__} where it needs a "
                   f"{'dict' if v.expect == 'mapping' else 'list'}")
        out.setdefault(V4, why)
        out.setdefault(V5, why)
    elif problem in ("float", "nonfinite"):
        if field in DIM_FIELDS:
            out.setdefault(V4, f"builds no model: {v.key} = {show_value(x)} sizes a weight (torch.empty wants ints)")
        elif field in WINDOW_FIELDS:
            out.setdefault(V4, f"crashes in the forward: {v.key} = {show_value(x)} slices the attention mask "
                               f"(slice indices must be integers)")
    return out


def check(lt: Linting) -> list[Finding]:
    """RV021 for the followed version's refusals no value rule reported (``cfg.refusals`` from the loader,
    strict integer fields holding a whole float); RV022 for every refusal of the other version, those
    carried by value findings (``data["refused_by"]``) included. ``lt.found``: the value findings so far
    (it runs right after rules/values.py's check)."""
    cfg, found = lt.cfg, lt.found
    out: list[Finding] = [Finding.of(p.rule, p.message, path=cfg.path, line=p.value.line, column=p.value.column,
                                     fix=p.fix) for p in map(as_problem, cfg.problems) if p.rule in PROBLEMS]
    sem = hf_version(cfg)
    if sem is None:
        return out
    other = hf.other_version(sem)
    reported = {(f.line, f.column) for f in found if f.code.startswith("RV")}
    refusals = list(getattr(cfg, "refusals", ()))
    hidden = next((v for v in cfg.inputs if _field(v) in ("hidden_size", "n_embd", "d_model")), None)
    heads = next((v for v in cfg.inputs if _field(v) in ("num_attention_heads", "n_head", "num_heads")), None)
    if hidden is not None and heads is not None and (hidden.line, hidden.column) not in reported \
            and all(isinstance(x.raw, int) and not isinstance(x.raw, bool) and x.raw > 0 for x in (hidden, heads)) \
            and hidden.raw % heads.raw:
        explicit = any(_field(v) in ("head_dim", "kv_channels") for v in cfg.inputs)
        for version, why in split_refusals(cfg, explicit).items():  # measured: a head_dim may not spare it
            refusals.append((version, hidden, f"{why} ({hidden.key} = {fmt_count(hidden.raw)}, {heads.key} = "
                                              f"{fmt_count(heads.raw)})"))
    for v in cfg.inputs:  # 8192.0 where the class wants an int: no value rule objects to a whole float
        if isinstance(v.raw, float) and v.raw.is_integer() and (v.line, v.column) not in reported \
                and v.expect in ("int", "number"):
            for version, why in value_refusals(cfg, v, "float").items():
                refusals.append((version, v, why))
    # RV022 only where the followed version runs what the other refuses (where both refuse, the error says it)
    sem_refuses = {(v.line, v.column) for version, v, _ in refusals if version == sem}
    seen = set()
    for version, v, why in refusals:
        key = (version, v.line, v.column, why)
        if key in seen or (version != sem and (v.line, v.column) in sem_refuses):
            continue
        seen.add(key)
        rule = REFUSED if version == sem else OTHER_REFUSED
        out.append(Finding.of(rule, f"transformers {version} {why}", path=cfg.path, line=v.line, column=v.column,
                              fix=None, version=version))
    for f in found:
        refused_by = f.data.get("refused_by", {})
        why = refused_by.get(other)
        if why and sem not in refused_by and (other, f.line, f.column, why) not in seen:
            seen.add((other, f.line, f.column, why))
            out.append(Finding.of(OTHER_REFUSED, f"transformers {other} {why} ({f.code} {f.name})", path=cfg.path,
                                  line=f.line, column=f.column, version=other))
    return out


def refusal(version: str, v, why: str) -> tuple[str, Any, str]:
    """One entry of ``LoadedConfig.refusals``."""
    return (version, v, why)
