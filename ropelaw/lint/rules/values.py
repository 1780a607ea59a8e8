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
from typing import TYPE_CHECKING, Any
from collections.abc import Iterator

from ...findings import Finding
from ...limits import MAX_CONTEXT, MAX_D, MAX_FACTOR
from ...numfmt import count as fmt_count
from ..dialects import hf_keys
from ..dialects.hf import REQUIRED, SEMANTICS, TRANSFORMERS_SCHEMES
from ..model import LoadedConfig, Value, as_problem, show_value, canonical_scheme
from .runtime import hf_version, value_refusals, with_runtime
from . import runtime
# the RV rules, their limits and codes: value_rules.py
from .value_rules import (BAD_LENGTH, BAD_SCHEME, BAND_ORDER, BASE_LE_ONE, FACTOR_LT_ONE, IGNORED_KEY, INVALID_TYPE,
                          LONGROPE_LEN, MISSING_PARAM, NON_FINITE, NOT_INTEGER, ODD_DIM, ORIG_GT_MAX,
                          OUT_OF_RANGE, UNKNOWN_PARAM, UNKNOWN_SCHEME, YARN_BETAS, YARN_FACTOR, FACTOR_LIMIT,
                          LENGTH_LIMIT, WIDE_ROTARY)

if TYPE_CHECKING:
    from ..check import Linting


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
        return f"{name} = {fmt_count(x)} is beyond any real context (> {LENGTH_LIMIT})"
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
        return f, (f"{f.key or 'factor'} = {fmt_count(s)} is beyond any real scaling factor (> {FACTOR_LIMIT}; "
                   f"public configs use 2 .. 40)")
    orig = g.params.get("original_max_position_embeddings") or cfg.train_len
    on = orig.number() if orig is not None else None
    if on is None or length_problem(orig) is not None or on < 1:
        return None
    designed = Fraction(s) * Fraction(on)
    if designed > MAX_CONTEXT:
        return f, (f"{f.key or 'factor'} {fmt_count(s)} x original context {fmt_count(on)} [{orig.where}] = "
                   f"{fmt_count(float(designed))} tokens is beyond any real context (> {LENGTH_LIMIT})")
    return None


def _at(cfg: LoadedConfig, rule, v: Value, message: str, fix: str | None = None, *, refused: dict | None = None,
        **data: Any) -> Finding:
    """A finding of ``rule`` at ``v``. ``refused``: {transformers version: why it refuses or crashes} for this
    case ({}: both run it); for a Hugging Face config it sets the severity (rules/runtime.py)."""
    f = Finding.of(rule, message, path=cfg.path, line=v.line, column=v.column, fix=fix, **data)
    return with_runtime(cfg, f, refused)


# training frameworks whose own code was run on equal band factors (tests/differential/): what it does
BAND_RUNTIMES = {"torchtitan": "torchtitan runs it: precompute_freqs_cis, as in its Llama 4 flavors"}


def _band_runtime(cfg: LoadedConfig) -> str:
    """Who runs a Llama 3 band with low = high: transformers for a Hugging Face config, the framework where its
    own code was run on it (:data:`BAND_RUNTIMES`), else said as the formula's result only."""
    if cfg.kind == "hf":
        return "transformers runs it"
    framework = (cfg.arch or "").split(" ", 1)[0]
    return BAND_RUNTIMES.get(framework, "the Llama 3.1 band formula; this framework's code was not run on it")


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
                      v, f"{v.key} must be a whole number, got {show_value(x)}",
                      refused=value_refusals(cfg, v, "float"))
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
    elif v.expect == "mapping" and not isinstance(x, dict):
        yield _at(cfg, INVALID_TYPE, v, f"{v.key} must be a mapping, got {_type_name(x)}",
                  refused=value_refusals(cfg, v, "type"))


def check(lt: Linting) -> list[Finding]:
    """Every RV finding of the config's values and of its loader's problems, each at the key it concerns
    (rules/runtime.py adds the transformers versions' refusals next)."""
    cfg = lt.cfg
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
    for p in map(as_problem, cfg.problems):
        v, rule = p.value, p.rule
        if v is None or rule in runtime.PROBLEMS:  # reported by rules/runtime.py
            continue
        if rule is INVALID_TYPE and (v.line, v.column) in bad_keys:
            continue
        f = _at(cfg, rule, v, p.message, p.fix, refused=_problem_refusals(cfg, rule, v, p.message), notes=p.notes)
        if p.severity is not None:
            f = replace(f, severity=p.severity)
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
        wide = _wider_than_head(cfg, g, d)
        if wide is not None:
            out.append(wide)
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
    mxn, ogn = mx.number() if mx is not None else None, og.number() if og is not None else None
    if mx is not None and og is not None and mxn and ogn and ogn > mxn \
            and cfg.layers[0].scheme.raw not in (None, "default") and _context_keys_matter(cfg):
        out.append(_at(cfg, ORIG_GT_MAX, og, f"{og.key or og.where} {fmt_count(og.number())} exceeds {mx.where} "
                                             f"{fmt_count(mx.number())}: the scheme shrinks the context", refused={}))
    return _dedupe(out)


# partial_rotary_factor giving an odd int(head_dim * factor): what the model's attention does with it
# (tests/test_severity_parity.py runs each under both versions). Phi, StableLM and Persimmon slice the
# query to int(head_dim * factor) dims and rotate it with cos/sin of 2 * ceil(dims / 2): a size mismatch
# in the forward. GPT-NeoX, Nemotron, Phi-3 and the GLM family slice by cos.shape[-1] and so rotate the
# rounded-up even count (the loader reads that, row odd_dims_round_up: no RV003 there).
ODD_PARTIAL_CRASHES = ("phi", "stablelm", "persimmon")


# partial factor above 1, measured (RV046): the model types whose forward fails or whose config is refused
WIDE_PARTIAL_REFUSED = {"gpt_neox": "fails in the forward (a size mismatch: cos/sin wider than the head)",
                        "stablelm": "fails in the forward (a size mismatch: cos/sin wider than the head)",
                        "phi": "fails in the forward (a size mismatch: cos/sin wider than the head)",
                        "phi3": "refuses it when the config loads (the rope validation)"}


def _wider_than_head(cfg: LoadedConfig, g, d: float | None) -> Finding | None:
    """RV046 for a group whose rotated dims come from a partial factor above 1 (d > head_dim), with the runtime's
    measured verdict for the types of :data:`WIDE_PARTIAL_REFUSED` (None elsewhere: the rule's own severity)."""
    head = cfg.head_dim.number() if cfg.head_dim is not None else None
    partial = any(k in g.d.note for k in ("partial_rotary_factor", "rotary_pct", "rotary_percent"))
    if not partial or d is None or head is None or d <= head:
        return None
    why = WIDE_PARTIAL_REFUSED.get(cfg.arch)
    return _at(cfg, WIDE_ROTARY, g.d, f"rotary dimension {fmt_count(d)} from {g.d.where} exceeds head_dim "
                                      f"{fmt_count(head)}: a factor above 1" +
               ("" if why else " (not measured for this model type)"), refused=_both(why) if why else None)


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


def _problem_refusals(cfg: LoadedConfig, rule, v: Value, message: str = "") -> dict | None:
    """The runtime verdict of a problem the loader noticed (see check, step 2)."""
    if rule is INVALID_TYPE and v.expect == "bool":
        return {}  # yarn truncate "false": transformers tests the string's truth value and runs
    if rule is NOT_INTEGER and ((v.key or "").split(".")[-1] in ("hidden_size", "n_embd", "d_model")
                                or (v.key is None and message.startswith("hidden_size "))):
        return runtime.split_refusals(cfg, explicit=False)  # RV004 of hidden_size / heads: no head_dim given
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
    sem = hf_version(cfg) if cfg.kind == "hf" else None
    for p in sorted(given - allowed):
        v = g.params[p]
        # a config.json's key: what the perturbation of real files shows (data/hf_keys.json; a key measured as
        # read never gets here: the loader reports it as RV025)
        seen = f"; {hf_keys.evidence(hf_keys.rope_key_entry(sem, cfg.arch, info.name, v.key), sem, cfg.arch)}" \
            if sem and v.key else ""
        yield _at(cfg, UNKNOWN_PARAM, v, f"{v.key} is not a parameter of scheme {info.name!r} (takes: "
                                         f"{', '.join(info.required + info.optional)}){seen}", refused={})
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
                    f"original / {lo_n:g} are divided by the factor, the rest kept; {_band_runtime(cfg)})"
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
    if fn is None or on is None or mn is None or on <= 0 or fn < 1:
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


def unanalysed(lt: Linting) -> list[Finding]:
    """RV016 for the first layer group the analysis left without a spec, scheme or bound, when no finding so
    far says why (``Rule.explains_unanalysed``; severity no longer tells: RV005, RV013, RV017 ... are warnings
    where transformers runs the value) and a training length is given (else RL100 says what is missing)."""
    from .lengths import MISSING_TRAINING_LENGTH

    if any(f.code.startswith("RV") and f.rule.explains_unanalysed or f.code == MISSING_TRAINING_LENGTH.code
           for f in lt.found):
        return []
    errors = [(g, a.error) for g, a in zip(lt.cfg.layers, lt.layers, strict=True) if a.error]
    return [scheme_error(lt.cfg, *errors[0])] if errors else []


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
