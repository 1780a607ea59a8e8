"""Megatron-LM: argparse flags as YAML / JSON dicts (``--seq-length: 4096`` or ``seq_length: 4096``,
also under ``MODEL_ARGS`` as in Megatron's functional tests, and ``--yaml-cfg`` files with model keys
under ``language_model:`` and ``model_parallel:``) and shell launch scripts
(``ropelaw lint pretrain_gpt.sh``: the ``--flag value`` words of the script, with ``VAR=value``
assignments substituted).

Semantics (Megatron-LM ``megatron/training/arguments.py`` defaults; megatron-core==0.16.1
``models/gpt/gpt_model.py`` and ``transformer/transformer_config.py`` ``MLATransformerConfig``):

- RoPE when ``--position-embedding-type rope`` (or ``yarn``, or the deprecated
  ``--use-rotary-position-embeddings``), or with ``--multi-latent-attention`` (MLA applies its
  own rotary embedding to ``--qk-pos-emb-head-dim`` dims, default 64). The default
  ``learned_absolute`` is not RoPE.
- head dim ``--kv-channels``, else ``--hidden-size // --num-attention-heads``; rotary dims
  ``int(head_dim * --rotary-percent)`` (default 1.0); base ``--rotary-base`` (default 10,000).
- ``--seq-length`` is the training length; ``--max-position-embeddings`` the context (default:
  the training length). With YaRN and a stated ``--original-max-position-embeddings`` below
  ``--seq-length``, in a run that does not start the model: a fine-tune at ``--seq-length`` of a model
  trained at the original length (``_framework.extension_lengths``).
- schemes: ``--rotary-seq-len-interpolation-factor F`` -> linear F; ``--use-rope-scaling`` ->
  Llama 3.1 bands (``--rope-scaling-factor``, default 8; low 1, high 4, original 8192);
  YaRN for ``--position-embedding-type yarn`` or MLA (``--rope-type``, MLA default ``yarn``):
  factor ``--rotary-scaling-factor`` (default 1.0: no scaling), original
  ``--original-max-position-embeddings`` / ``--yarn-original-max-position-embeddings`` (MLA default
  4,096), ``--beta-fast`` / ``--beta-slow`` (``--yarn-beta-*``; MLA defaults 32 / 1).
- ``--enable-gpt-oss`` (Megatron-LM@d98e8a64 ``megatron/post_training/model_builder.py``, the ModelOpt
  builder) sets YaRN on the model's config whatever the script's ``--position-embedding-type`` and YaRN flags
  say: factor 32, original 131,072, beta 32 / 1, mscale 1 / 0 (attention factor 0.1 ln 32 + 1 = 1.3466),
  correction range not rounded; GPTModel builds ``YarnRotaryEmbedding(rotary_base=--rotary-base)`` from it.
  The flags it overrides are named in a note. Without MLA, ``--position-embedding-type yarn`` takes
  ``--yarn-original-max-position-embeddings``, ``--yarn-beta-fast`` / ``--yarn-beta-slow`` and
  ``--no-yarn-correction-range-round-to-int`` (``argument_utils.py`` ``_apply_yarn_config_from_args``).
- dtype: ``--bf16`` / ``--fp16``, else float32.
- sliding window: ``--window-size left,right`` (``tuple_type``; -1: unbounded) is
  ``TransformerConfig.window_size``: a query attends keys i - left .. i (megatron-core==0.16.1
  ``get_sliding_window_causal_mask``, Transformer Engine alike), a window of left + 1 positions
  (Hugging Face's ``sliding_window`` W covers W). ``--window-attn-skip-freq`` N (every N-th layer
  full) or a pattern ``"[1,1,1,0]*3"`` (0: full attention; read, never evaluated) leaves global
  layers: global + local groups.
- a scheme is applied by megatron-core's rotary embedding at every step of the run
  (``RotaryEmbedding.__init__`` scales ``inv_freq`` once), so a run that starts from no weights is
  the model's pre-training with it (``pretrained_with_scheme``, as for torchtitan): a launch script
  that runs ``pretrain_*.py`` with no ``--load``, ``--pretrained-checkpoint`` or ``--finetune``.
  Flag files (YAML / JSON) and scripts that only define arguments for another script to run say
  neither, and are read as an extension. ``--pretrained-checkpoint`` / ``--finetune`` start
  from existing weights (``arguments.py``: "Load model for finetuning"), read as Liu et al.'s
  context extension of a plain-RoPE model; so is ``--load`` alone, which resumes this run or loads
  a converted (release) checkpoint, and the note says which reading was taken.
"""

from __future__ import annotations

import contextlib
import re
import shlex
from collections.abc import Mapping
from typing import Any

from ..model import ModelNeeded, NoRopeFound, NotARopeConfig, Value
from ..shellwords import expand_word
from ._framework import (Doc, Fields, derived, dialect, extension_lengths, head_dim_of, preset,
                         pretraining_with_scheme, rotary_dims)
from ._megatron_yarn import concentration, gpt_oss_yarn, yarn_concentration_factor  # noqa: F401 (re-exported)
from ..model import Problem
from ..rules.value_rules import INVALID_TYPE

NAME = "megatron"
ARGS = "Megatron-LM arguments.py default"
MLA = "megatron-core==0.16.1 MLATransformerConfig default"
YARN_ARGS = "Megatron-LM@d98e8a64 argument_utils.py _apply_yarn_config_from_args default"


def flag_name(key: Any) -> str:
    """An argparse flag as its dest: ``--seq-length``, ``seq-length`` and ``seq_length`` are ``seq_length``."""
    return str(key).strip().lstrip("-").lower().replace("-", "_")


def detect(data: Mapping) -> bool:
    if isinstance(data.get("MODEL_ARGS"), Mapping):
        return True
    if isinstance(data.get("language_model"), Mapping) and ("seq_length" in data or "position_embedding_type" in data):
        return True  # --yaml-cfg files (examples/gpt3/gpt_config.yaml): model keys under language_model
    keys = [str(k) for k in data]
    if any(k.startswith("--") for k in keys):
        return any(flag_name(k) in ("num_attention_heads", "seq_length") for k in keys)
    # MODEL_ARGS flattened to hyphenated names (seq-length: 4096): GPT-NeoX writes hyphens too, so a flag only
    # Megatron-LM has must be there (NeoX says pos-emb, not position-embedding-type)
    dashed = {flag_name(k) for k in keys if "-" in k}
    return bool(dashed & {"num_attention_heads", "seq_length"}) and bool(dashed & _MEGATRON_ONLY) \
        and "pos_emb" not in dashed


_MEGATRON_ONLY = {"position_embedding_type", "use_rotary_position_embeddings", "multi_latent_attention",
                  "use_mcore_models", "kv_channels", "rotary_base"}


def _sections(data: Mapping) -> tuple[str, ...]:
    """Where flags live: MODEL_ARGS (functional tests), the top level, and the --yaml-cfg sections."""
    if isinstance(data.get("MODEL_ARGS"), Mapping):
        return ("MODEL_ARGS.",)
    return ("",) + tuple(f"{k}." for k in ("language_model", "model_parallel") if isinstance(data.get(k), Mapping))


class FlagDoc(Doc):
    """A Doc whose keys are argparse flags: ``--seq-length``, ``seq-length`` and ``seq_length`` match."""

    def _find(self, dotted: str):
        node: Any = self.data
        prefix: tuple = ()
        parts = dotted.split(".")
        for part in parts[:-1]:
            if not isinstance(node, Mapping) or part not in node:
                return None
            node, prefix = node[part], prefix + (part,)
        if not isinstance(node, Mapping):
            return None
        k = self._flags(node).get(flag_name(parts[-1]))
        return None if k is None else (prefix + (k,), node[k])

    def _flags(self, node: Mapping) -> dict:
        """``{flag_name(key): the first such key}`` of a section, made once per section (a launch script has
        hundreds of flags, looked up dozens of times)."""
        hit = self._key_maps.get(("flags", id(node)))
        if hit is None or hit[0] is not node or hit[1] != len(node):
            flags: dict = {}
            for k in node:
                flags.setdefault(flag_name(k), k)
            hit = (node, len(node), flags)
            self._key_maps[("flags", id(node))] = hit
        return hit[2]


def _truthy(v: Any) -> bool:
    return v is True or (isinstance(v, str) and v.strip().lower() in ("true", "1", "yes"))


class _Flags:
    """A Megatron config's flags, each looked up in its sections (:func:`_sections`) in order."""

    def __init__(self, doc: Doc):
        self.doc, self.secs = doc, _sections(doc.data)

    def raw(self, name: str) -> Any:
        return next((self.doc.raw(p + name) for p in self.secs if self.doc.raw(p + name) is not None), None)

    def get(self, name: str, expect: str = "number") -> Value | None:
        return self.doc.get(*(p + name for p in self.secs), expect=expect)

    def require(self, name: str, expect: str = "number") -> Value:
        """:meth:`get` of a flag :meth:`raw` found set."""
        v = self.get(name, expect)
        if v is None:
            raise NoRopeFound(f"{self.doc.path}: no --{name.replace('_', '-')}")
        return v


def read(doc: Doc) -> Fields:
    flags = _Flags(doc)
    get, raw = flags.get, flags.raw
    mla = _truthy(raw("multi_latent_attention"))
    mla_v = get("multi_latent_attention", "any") if mla else None  # MLA's defaults point at this flag
    deprecated = _truthy(raw("use_rotary_position_embeddings"))  # the deprecated switch, read either way
    pe = str(raw("position_embedding_type") or ("rope" if deprecated else "learned_absolute")).strip().lower()
    gpt_oss = get("enable_gpt_oss", "any") if _truthy(raw("enable_gpt_oss")) and not mla else None
    if gpt_oss is not None:
        pe = "yarn"  # the ModelOpt builder sets config.position_embedding_type, which GPTModel obeys
    if not mla and pe not in ("rope", "yarn"):
        raise NotARopeConfig(f"{doc.path}: Megatron position embedding {pe!r} is not RoPE"
                             + (" (learned_absolute is the default)" if raw("position_embedding_type") is None else ""))
    problems: list = []
    rope_type = str(raw("rope_type") or ("yarn" if (mla or pe == "yarn") else "rope")).lower()
    head, d = _dims(flags, mla, mla_v, rope_type, problems)
    base = get("rotary_base") or preset(10000, f"rotary_base: {ARGS}", None)
    seq = get("seq_length", "int")
    max_pos = get("max_position_embeddings", "int")
    notes: list[str] = []
    scheme, params, orig = _scheme(flags, gpt_oss, rope_type, mla, mla_v, notes)
    dtype = None
    for name in ("bf16", "fp16"):
        if _truthy(raw(name)):
            v = flags.require(name, "any")
            dtype = Value(name, v.key, v.line, v.column, "", "str")
            break
    from_start = _from_start(flags, scheme, notes)
    if _truthy(raw("rotary_interleaved")):
        notes.append("--rotary-interleaved: pairs (2i, 2i+1) rotate together; the bound does not depend on the layout")
    window, some = _window(get("window_size", "any"), get("window_attn_skip_freq", "any"), problems, notes)
    train, tune = _lengths(scheme, seq, max_pos, orig, from_start, notes)
    return Fields(arch="megatron" + (" MLA" if mla else ""), head_dim=head, d=d, base=base, train_len=train, tune=tune,
                  target=max_pos or seq, scheme=scheme, params=params, original_max=orig, dtype=dtype, notes=notes,
                  problems=problems, pretrained_with_scheme=from_start, window=None if some else window,
                  local_window=window if some else None)


def _dims(flags: _Flags, mla: bool, mla_v: Value | None, rope_type: str, problems: list) -> tuple[Value, Value]:
    """``(head dim, rotary dims)``: ``--kv-channels``, else ``--hidden-size // --num-attention-heads``; rotary
    ``int(head dim * --rotary-percent)``, or MLA's ``--qk-pos-emb-head-dim``."""
    get = flags.get
    heads = get("num_attention_heads", "int")
    head = get("kv_channels", "int") or head_dim_of(get("hidden_size", "int"), heads, problems)
    percent = get("rotary_percent") or get("rotary_percentage")
    if mla:
        qk = get("qk_pos_emb_head_dim", "int") or preset(64, f"qk_pos_emb_head_dim: {ARGS}", mla_v, "int")
        # megatron-core==0.16.1 multi_latent_attention.py: RotaryEmbedding(qk_pos_emb_head_dim, rotary_percent)
        # for rope_type 'rope'; YarnRotaryEmbedding(qk_pos_emb_head_dim) without it for 'yarn'
        d = rotary_dims(qk, percent, problems) if rope_type == "rope" else qk
    else:
        d = rotary_dims(head, percent, problems)
    return head, d


def _scheme(flags: _Flags, gpt_oss: Value | None, rope_type: str, mla: bool, mla_v: Value | None,
            notes: list) -> tuple[Value | None, dict[str, Value], Value | None]:
    """``(scheme, params, original length)``: ``--enable-gpt-oss``'s YaRN, else YaRN (:func:`_yarn`); then
    ``--use-rope-scaling`` (Llama 3.1 bands) replaces it; ``--rotary-seq-len-interpolation-factor`` applies
    when neither did (linear)."""
    get = flags.get
    scheme: Value | None = None
    params: dict[str, Value] = {}
    orig: Value | None = None
    if gpt_oss is not None:
        scheme, params, orig = gpt_oss_yarn(gpt_oss, flags.doc, notes)
    elif rope_type == "yarn":
        scheme, params, orig = _yarn(flags, mla, mla_v, notes)
    if _truthy(flags.raw("use_rope_scaling")):
        flag = get("use_rope_scaling", "any")
        scheme = derived("llama3", "Megatron-Core rope scaling (--use-rope-scaling): Llama 3.1 bands", flag, "str")
        params = {"factor": get("rope_scaling_factor") or preset(8.0, "rope_scaling_factor: Megatron-Core default",
                                                                 None),
                  "low_freq_factor": preset(1.0, "Megatron-Core Llama 3.1 bands", None),
                  "high_freq_factor": preset(4.0, "Megatron-Core Llama 3.1 bands", None),
                  "original_max_position_embeddings": preset(8192, "Megatron-Core Llama 3.1 bands", None, "int")}
    interp = get("rotary_seq_len_interpolation_factor")
    if interp is not None and scheme is None:
        scheme = derived("linear", "--rotary-seq-len-interpolation-factor: positions / factor", interp, "str")
        params = {"factor": interp}
    return scheme, params, orig


def _yarn(flags: _Flags, mla: bool, mla_v: Value | None,
          notes: list) -> tuple[Value | None, dict[str, Value], Value | None]:
    """``(scheme, params, original length)`` of YaRN (``--position-embedding-type yarn`` or MLA's rope_type):
    none with factor 1 (``--rotary-scaling-factor``, default 1)."""
    get, raw = flags.get, flags.raw
    factor = get("rotary_scaling_factor") or preset(1.0, f"rotary_scaling_factor: {ARGS}", None)
    if (factor.number() or 1.0) == 1.0:
        notes.append("YaRN with factor 1 (--rotary-scaling-factor): the frequencies are RoPE's")
        return None, {}, None
    at = factor if factor.key else None
    scheme = derived("yarn", "MLA rope_type 'yarn'" if mla else "--position-embedding-type yarn", at, "str")
    if mla:  # MLATransformerConfig's own fields
        orig = get("original_max_position_embeddings", "int") or preset(
            4096, f"original_max_position_embeddings: {MLA}", mla_v, "int")
        fast, slow = get("beta_fast"), get("beta_slow")
    else:  # argument_utils.py _apply_yarn_config_from_args: config.yarn_* from --yarn-* flags
        orig = get("yarn_original_max_position_embeddings", "int") or preset(
            4096, f"yarn_original_max_position_embeddings: {YARN_ARGS}", None, "int")
        fast, slow = get("yarn_beta_fast"), get("yarn_beta_slow")
    params = {"factor": factor, "original_max_position_embeddings": orig,
              "beta_fast": fast or preset(32, f"beta_fast: {MLA if mla else YARN_ARGS}", mla_v),
              "beta_slow": slow or preset(1, f"beta_slow: {MLA if mla else YARN_ARGS}", mla_v)}
    for name, rounds in (("no_yarn_correction_range_round_to_int", False),
                         ("yarn_correction_range_round_to_int", True)):  # store_false / store_true
        v = get(name, "any") if not mla and _truthy(raw(name)) else None
        if v is not None:
            params["truncate"] = Value(rounds, v.key, v.line, v.column, "config.yarn_correction_range_round_to_int",
                                       "bool")
            break
    params["attention_factor"] = concentration(factor, get("mscale"), get("mscale_all_dim"), at)
    return scheme, params, orig


def _from_start(flags: _Flags, scheme: Value | None, notes: list) -> Value | None:
    """``pretrained_with_scheme``: only a script running ``pretrain_*.py`` says whether weights load (module
    docstring): without ``--load``, ``--pretrained-checkpoint`` or ``--finetune`` the run is the pre-training."""
    doc = flags.doc
    launch = doc.get(LAUNCH, expect="str") if doc.fmt == "shell" else None
    if scheme is None or launch is None:
        return None
    loaded = next((flags.get(k, "any") for k in ("pretrained_checkpoint", "finetune", "load")
                   if flags.raw(k) not in (None, False, "", "false", "False")), None)
    resumes = loaded is not None and flag_name(loaded.key) == "load"
    return pretraining_with_scheme(
        scheme, loaded, "Megatron-Core", f"the script runs {launch.raw} with no --load, --pretrained-checkpoint "
        "or --finetune, so this run is the model's pre-training", launch, notes,
        " (if --load resumes a run pre-trained with them, the bound is lower)" if resumes else "")


def _lengths(scheme: Value | None, seq: Value | None, max_pos: Value | None, orig: Value | None,
             from_start: Value | None, notes: list) -> tuple[Value | None, Value | None]:
    """``(training length, tuning length)``: ``--seq-length`` (else ``--max-position-embeddings``), or with
    YaRN and a stated original length below it, a fine-tune of a model trained there (``extension_lengths``)."""
    if scheme is not None and scheme.raw == "yarn" and orig is not None and orig.key is not None:
        train, tune = extension_lengths(seq, orig, from_start, notes, "Megatron-LM")
        return train or max_pos, tune
    return seq or max_pos, None


def _window(size: Value | None, skip: Value | None, problems: list, notes: list) -> tuple[Value | None, bool]:
    """``(window in positions, whether some layers attend fully)`` from --window-size and
    --window-attn-skip-freq (see the module docstring)."""
    if size is None:
        return None, False
    raw = size.raw
    parts = raw if isinstance(raw, (list, tuple)) else (str(raw).strip().strip("()[]").split(",")
                                                          if isinstance(raw, (str, int)) else ())
    try:
        left, right = (int(str(x).strip()) for x in parts)
    except (TypeError, ValueError):
        problems.append(Problem(INVALID_TYPE, size, f"{size.key} must be 'left,right', two whole numbers "
                                                      f"(arguments.py tuple_type), got {raw!r}",
                                fix="write --window-size as two whole numbers left,right, e.g. 4095,0 "
                                    "(left -1: no window)"))
        return None, False
    if left < 0:
        notes.append(f"{size.key} left -1: no window (Megatron's 'infinite window size')")
        return None, False
    window = Value(left + 1, size.key, size.line, size.column,
                   f"({left}, {right}): keys up to {left:,} back, {left + 1:,} positions "
                   f"(megatron-core==0.16.1 get_sliding_window_causal_mask)", "int")
    if skip is None:
        return window, False
    s = str(skip.raw).strip()
    if re.fullmatch(r"\d+", s):
        if int(s) == 1:  # layer_number % 1 == 0 everywhere: every layer full
            notes.append(f"{skip.key} 1: every layer attends fully, no window")
            return None, False
        return window, int(s) > 1
    flags = set(re.findall(r"\d+", " ".join(re.findall(r"\[([^\]]*)\]", s))))
    if not flags or not flags <= {"0", "1"}:
        problems.append(Problem(INVALID_TYPE, skip, f"{skip.key} must be N or a pattern of 0/1 per layer such as "
                                                      f"\"[1,1,1,0]*3\", got {s!r}",
                                fix="write --window-attn-skip-freq as N (every N-th layer attends fully) or a "
                                    "pattern of 0/1 per layer (1: windowed), e.g. \"[1,1,1,0]*3\""))
        return window, True
    if flags == {"0"}:
        notes.append(f"{skip.key} marks no windowed layer (1 marks one)")
        return None, False
    return window, "0" in flags



DIALECT = dialect(NAME, detect, read, doc_class=FlagDoc)


# ----------------------------------------------------------------------------- shell launch scripts
ASSIGN = re.compile(r"^(?:export\s+|local\s+|declare\s+(?:-\w+\s+)?)?([A-Za-z_][A-Za-z0-9_]*)=(.*)$", re.S)


_SPECIAL_OUT = re.compile(r"""[\\'"#]""")  # what changes the quoting state outside quotes
_SPECIAL_DQ = re.compile(r'[\\"]')  # inside double quotes
_HEREDOC = re.compile(r"""<<-?\s*(['"]?)([A-Za-z_][A-Za-z0-9_]*)\1""")
# Variable values a launch script may build: a value of at most 1 MiB (the script's own size
# limit), 4 MiB for all. A variable doubled 27 times ("B=$A$A", ...) is 128 MiB of text.
MAX_SHELL_VALUE = 1 << 20
MAX_SHELL_ENV = 4 << 20


def logical_lines(text: str) -> list[tuple[int, int, str]]:
    """``(first line, last line, text)`` of each command line, as bash reads them: backslash
    continuations joined (by a space), a quoted string that spans lines kept whole with its
    newlines (``MODEL_ARGS="`` ... ``"``), here-document bodies skipped. Linear: each line is
    scanned from one quoting character to the next. ``UsageError`` for a quote never closed
    (bash fails on such a script; its lines used to be dropped without a word)."""
    from ...errors import UsageError

    out: list[tuple[int, int, str]] = []
    buf: list[str] = []
    start = quote_line = 0
    quote = ""  # "", "'" or '"'
    heredoc = None
    for n, line in enumerate(text.split("\n"), start=1):
        line = line.removesuffix("\r")
        if heredoc is not None:
            if line.lstrip("\t") == heredoc:
                heredoc = None
            continue
        if not buf:
            start = n
        j, size = 0, len(line)
        comment = False
        while j < size:
            if quote == "'":
                k = line.find("'", j)
                if k < 0:
                    break
                quote, j = "", k + 1
            elif quote == '"':
                m = _SPECIAL_DQ.search(line, j)
                if m is None:
                    break
                j = m.end() + (1 if m.group() == "\\" else 0)
                if m.group() == '"':
                    quote = ""
            else:
                m = _SPECIAL_OUT.search(line, j)
                if m is None:
                    break
                c = m.group()
                if c == "\\":
                    j = m.end() + 1
                elif c == "#":
                    if m.start() == 0 or line[m.start() - 1] in " \t;&|(":
                        comment = True
                        break  # a comment: the rest of the line (a backslash there continues nothing)
                    j = m.end()
                else:
                    quote, quote_line, j = c, n, m.end()
        if quote != "'" and not comment and line.rstrip().endswith("\\"):
            buf.append(line.rstrip()[:-1] + " ")  # a continuation, also inside double quotes
            continue
        if quote:
            buf.append(line + "\n")  # the string goes on: its newline is part of it
            continue
        logical = "".join(buf) + line
        buf = []
        out.append((start, n, logical))
        h = _HEREDOC.search(logical)
        if h is not None:
            heredoc = h.group(2)
    if quote:
        kind = "single" if quote == "'" else "double"
        raise UsageError(f"the {kind} quote opened on line {quote_line:,} is never closed (bash stops there: "
                         "the script does not run as written)")
    if buf:
        out.append((start, start + len(buf) - 1, "".join(buf)))
    return out




def substitute(word: str, env: dict[str, str]) -> str | None:
    """``word`` with the script's variables substituted (None if one is unknown): for the other launch readers."""
    return expand_word(word, env)


LAUNCH = "(launches)"  # pseudo-flag of a launch script: the pretrain_*.py entry point it runs
_PRETRAIN = re.compile(r"(?:^|/)pretrain_\w+\.py$")


def shell_commands(text: str):
    """Each command line of a launch script as ``(first line, last line, words, env)``: the words shlex
    splits, with ``VAR=value`` assignments taken into ``env`` (the live mapping of variables set so far,
    each value substituted as bash would, at most 1 MiB each and 4 MiB for all) and the words of an
    assignment holding flags (``MODEL_ARGS="--num-layers 27 ..."``) put in place of it. Nothing is run."""
    from ...errors import UsageError

    env: dict[str, str] = {}
    env_bytes = 0
    for first, last, line in logical_lines(text):
        try:
            words = shlex.split(line, comments=True, posix=True)
        except ValueError as exc:
            raise UsageError(f"line {first:,}: cannot split the command into words ({exc}); the flags on it "
                             "would go unread") from None
        words = join_arithmetic(words)
        if words and words[0] in ("export", "local", "declare", "readonly") and len(words) >= 2:
            words = words[1:]
        expanded: list[str] = []
        for w in words:
            m = ASSIGN.match(w)
            if m and not w.endswith("="):
                name, val = m.groups()
                if "--" in val:  # MODEL_ARGS=" --num-layers 27 ... ": the flags are in the string
                    with contextlib.suppress(ValueError):  # a quote never closed: not read
                        expanded.extend(shlex.split(val, comments=False, posix=True))
                elif len(words) == 1:
                    got = expand_word(val, env)
                    if got is not None and name not in env:
                        env_bytes += len(got)
                        if len(got) > MAX_SHELL_VALUE or env_bytes > MAX_SHELL_ENV:
                            raise UsageError(f"line {first:,}: shell variables expand to more than "
                                             f"{MAX_SHELL_VALUE if len(got) > MAX_SHELL_VALUE else MAX_SHELL_ENV:,} "
                                             "characters (a variable doubled again and again?); refused")
                        env[name] = got
                continue
            expanded.append(w)
        yield first, last, expanded, env


def join_arithmetic(words: list[str]) -> list[str]:
    """Words split inside ``$(( ... ))`` (shlex splits at its spaces; bash keeps it one word) joined again."""
    out: list[str] = []
    for w in words:
        if out and out[-1].count("$((") > out[-1].count("))"):
            out[-1] += " " + w
        else:
            out.append(w)
    return out


def parse_shell(text: str) -> tuple[dict, dict]:
    """The ``--flag value`` pairs of a launch script: ``(flags, positions)``; the last occurrence of a flag
    wins, as argparse keeps it (the script's words in order, as :func:`script_argv` gives them), and its
    position is that occurrence's; a flag followed by another flag (or nothing) is ``True``; a value naming a variable
    the script does not set is kept as written (``$SEQ_LEN``) and reported by the value rules."""
    flags: dict[str, Any] = {}
    positions: dict[tuple, tuple[int, int]] = {}
    lines = [ln.removesuffix("\r") for ln in text.split("\n")]
    for first, last, words, env in shell_commands(text):
        seen_at: dict[str, tuple[int, int]] | None = None  # last place of each --flag in this command
        for i, w in enumerate(words):
            if LAUNCH not in flags and _PRETRAIN.search(w):  # torchrun ... pretrain_gpt.py: this script is a run
                flags[LAUNCH] = w.rsplit("/", 1)[-1]
                positions[(LAUNCH,)] = _locate(lines, first, w, last)
            if not w.startswith("--") or len(w) < 3:
                continue
            name, _, inline = w.partition("=")
            if inline:
                val: Any = inline
            elif i + 1 < len(words) and not words[i + 1].startswith("--") and words[i + 1] not in (")", "\\"):
                val = words[i + 1]
            else:
                val = True
            if isinstance(val, str):
                got = expand_word(val, env)
                val = got if got is not None else val
            flags[name] = val
            if seen_at is None:
                seen_at = _flag_places(lines, first, last)
            positions[(name,)] = seen_at.get(name) or _locate(lines, first, name, last)
    return flags, positions


def script_argv(text: str) -> list[str]:
    """Every word of the script's commands in order, variables substituted where the script sets them: the
    argument vector ropelaw assumes the script hands Megatron-LM (the differential parses it with Megatron's
    own argparse)."""
    out: list[str] = []
    for _, _, words, env in shell_commands(text):
        out.extend(w if (got := expand_word(w, env)) is None else got for w in words)
    return out


_FLAG_TOKEN = re.compile(r"--[\w-]+")


def _flag_places(lines: list[str], first: int, last: int) -> dict[str, tuple[int, int]]:
    """``--flag -> (line, column)`` of its last appearance in lines ``first`` .. ``last``: one pass
    per command (a lookup per flag from its first line was quadratic: a command continued over
    10,000 lines took 10 s)."""
    places: dict[str, tuple[int, int]] = {}
    for n in range(first - 1, min(last, len(lines))):
        for m in _FLAG_TOKEN.finditer(lines[n]):
            places[m.group()] = (n + 1, m.start() + 1)
    return places


def _locate(lines: list[str], first: int, flag: str, last: int | None = None) -> tuple[int, int]:
    pat = re.compile(re.escape(flag) + r"(?![\w-])")
    for n in range(first - 1, len(lines) if last is None else min(last, len(lines))):
        m = pat.search(lines[n])
        if m:
            return n + 1, m.start() + 1
    return first, 1


def read_script(path: str) -> str:
    """The text of launch script ``path`` (a regular file, at most 1 MiB, UTF-8), read once."""
    from ...errors import UsageError
    from ...safeio import read_regular

    raw = read_regular(path, 1 << 20, "launch script")
    if b"\x00" in raw[:8192]:
        raise UsageError(f"{path}: binary file, not a launch script")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise UsageError(f"{path}: not UTF-8 text (byte {exc.start}); not a launch script") from None


def read_shell(path: str) -> tuple[dict, dict]:
    return shell_flags(path, read_script(path))


def shell_flags(path: str, text: str) -> tuple[dict, dict]:
    """The Megatron flags of launch script ``text`` (:func:`parse_shell`); ``NotARopeConfig`` without any."""
    from ...errors import UsageError

    try:
        flags, positions = parse_shell(text)
    except UsageError as exc:
        raise UsageError(f"{path}: {exc}") from None
    if not any(flag_name(k) in ("num_attention_heads", "seq_length", "hidden_size") for k in flags):
        elsewhere = model_elsewhere(text, flags, positions)
        if elsewhere is not None:
            raise ModelNeeded(f"{path}: {elsewhere[0]}", *elsewhere[1])
        raise NotARopeConfig(f"{path}: no Megatron model flags (--num-attention-heads, --seq-length) in the script")
    return flags, positions


def model_elsewhere(text: str, flags: dict, positions: dict) -> tuple[str, tuple[int, int]] | None:
    """``(why, (line, column))`` when a script without model flags runs a model whose flags are elsewhere: it
    loads a checkpoint (``--load``, ``--pretrained-checkpoint``, ``--finetune``, ``--use-checkpoint-args``; the
    arguments are in that checkpoint) or sources another script (ModelOpt's examples: ``source conf/arguments.sh``,
    which sources ``conf/<model>.sh``, the model named by its first argument). None otherwise."""
    for flag in ("--pretrained-checkpoint", "--load", "--finetune", "--use-checkpoint-args"):
        if flag in flags:
            value = flags[flag]
            where = f"{flag} {value!r}" if value is not True else flag
            return (f"{where} runs a model this script gives no flags for (--num-attention-heads, --seq-length): they "
                    "are in that checkpoint or another script, not read here; lint the script that sets them",
                    positions.get((flag,), (1, 1)))
    for first, _last, words, _env in shell_commands(text):
        if len(words) >= 2 and words[0] in ("source", "."):
            return (f"the model flags come from {words[1]!r} (sourced on line {first:,}), not read here; lint the "
                    "script that sets them (ModelOpt's conf/<org>/<model>.sh)", (first, 1))
    return None
