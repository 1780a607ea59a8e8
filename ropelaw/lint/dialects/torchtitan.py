"""torchtitan TOML (torchtitan==0.2.2, the last release configured by TOML).

``[model] name`` + ``flavor`` name a model-args entry (``ropelaw/data/presets_torchtitan.json``, from
``torchtitan/models/<name>/__init__.py``); ``[training] seq_len`` is the training length and
becomes the model's ``max_seq_len`` (``update_from_config``), so it is also the target.
Runtime semantics, per family:

- llama3: head dim ``dim // n_heads``; ``precompute_freqs_cis`` ALWAYS applies the Llama 3.1
  bands of ``rope_scaling_args`` (factor 8, low 1, high 4, original 8192), from the first step;
- qwen3: ``head_dim`` (default 128), plain RoPE at ``rope_theta``;
- deepseek_v3: MLA, rotates ``qk_rope_head_dim``; YaRN (``rope_factor``, ``beta_fast``,
  ``beta_slow``, ``original_seq_len``) only when ``seq_len > original_seq_len``, and then the softmax
  scale times ``(0.1 mscale ln(rope_factor) + 1)^2`` (``Attention``; the 16B flavors' ``mscale`` 0.7);
- llama4: head dim ``dim // n_heads``, the bands of ``rope_scaling_args`` when it is set (``RoPEScalingArgs()``:
  factor 16, low 1, high 1, original 8,192, the defaults of ``models/llama4/model/args.py``); the
  ``_irope`` flavors (``every_n_layers_nope`` 4) apply no rotary on layers 0, 4, 8, ... and their rotary
  layers attend within blocks of ``fixed_attn_block_size`` (8,192; flex attention);
- gpt_oss: ``head_dim`` 64, YaRN (``rope_factor`` 32 from ``original_seq_len`` 4,096, ``ntk_beta`` /
  ``ntk_alpha`` 32 / 1, no rounding, cos / sin times ``0.1 ln(factor) + 1``) at every length; layers
  0, 2, 4, ... attend ``sliding_window_size`` (128) positions.

A scheme torchtitan applies is in force from the first step of the run, so unless the run starts
from existing weights (``[checkpoint] enable`` with ``initial_load_path`` or
``initial_load_in_hf``, ``components/checkpoint.py`` ``CheckpointManager.load``) the model is
pre-trained with it: ``pretrained_with_scheme``, and the critical dimension counts the periods of
the scheme's frequencies (``theory.trained_critical_dimension``). From existing weights the
scheme is read as Liu et al.'s context extension of a plain-RoPE model.

dtype: ``[training] mixed_precision_param`` (default ``bfloat16``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from ..model import NoRopeFound, Value
from ._framework import Doc, Fields, derived, dialect, head_dim_of, preset, presets, pretraining_with_scheme

NAME = "torchtitan"
DEFAULT_SEQ_LEN = 2048  # torchtitan==0.2.2 config/job_config.py Training.seq_len
DEFAULT_MIXED = "bfloat16"  # torchtitan==0.2.2 config/job_config.py Training.mixed_precision_param


def detect(data: Mapping) -> bool:
    m = data.get("model")
    return isinstance(m, Mapping) and "name" in m and "flavor" in m and isinstance(data.get("training", {}), Mapping)


def read(doc: Doc) -> Fields:
    table = presets("torchtitan")
    name_v, flavor_v = doc.get("model.name", expect="str"), doc.get("model.flavor", expect="str")
    if name_v is None or flavor_v is None or not isinstance(name_v.raw, str) or not isinstance(flavor_v.raw, str):
        raise NoRopeFound(f"{doc.path}: torchtitan [model] name and flavor must both be strings")
    key = f"{name_v.raw}/{flavor_v.raw}"
    entry = table["presets"].get(key)
    if entry is None:
        families = sorted({k.split("/")[0] for k in table["presets"]})
        if name_v.raw not in families:
            raise NoRopeFound(f"{doc.path}: torchtitan model {name_v.raw!r} has no RoPE preset in "
                                 f"{table['package']} (known: {', '.join(families)})")
        raise NoRopeFound(f"{doc.path}: torchtitan {name_v.raw!r} has no flavor {flavor_v.raw!r} in {table['package']}")
    vals, src = entry["values"], f"torchtitan {key}"
    problems: list = []

    def get(k: str, expect: str = "number"):
        return None if vals.get(k) is None else preset(vals[k], f"{k} of {src}", flavor_v, expect)
    family = str(name_v.raw)
    seq = doc.get("training.seq_len", expect="int") or preset(DEFAULT_SEQ_LEN, "torchtitan default training.seq_len",
                                                              None, "int")
    head = get("head_dim", "int") or head_dim_of(get("dim", "int"), get("n_heads", "int"), problems)
    d, scheme, params, orig, notes, local_window = head, None, {}, None, [], None
    if family == "deepseek_v3":
        d = get("qk_rope_head_dim", "int")
        o = get("original_seq_len", "int")
        if seq.number() is not None and o is not None and seq.number() > o.number():
            scheme = derived("yarn", f"{src}: YaRN when seq_len > original_seq_len", flavor_v, "str")
            params = {"factor": get("rope_factor"), "beta_fast": get("beta_fast"), "beta_slow": get("beta_slow"),
                      "original_max_position_embeddings": o}
            ms, f = get("mscale"), params["factor"]
            if ms is not None and f is not None and ms.number() is not None and (f.number() or 0) > 0:
                # Attention.__init__: softmax_scale *= mscale ** 2, mscale = 0.1 * args.mscale * ln(factor) + 1:
                # q and k each scaled by it
                params["attention_factor"] = derived(0.1 * ms.number() * math.log(f.number()) + 1.0,
                                                     f"0.1 x {ms.where} x ln({f.where}) + 1 (Attention.softmax_scale)",
                                                     flavor_v, "number")
            orig = o
        else:
            notes.append(f"{src}: seq_len <= original_seq_len, so torchtitan applies no YaRN")
    elif family == "gpt_oss":
        scheme, params, orig, local_window = _gpt_oss(get, src, flavor_v)
    else:
        sc = vals.get("rope_scaling_args")
        if isinstance(sc, Mapping):
            scheme = derived("llama3", f"rope_scaling_args of {src}: Llama 3.1 bands, applied from the first step",
                             flavor_v, "str")
            params = {"factor": preset(sc["scaling_factor"], f"rope_scaling_args.scaling_factor of {src}", flavor_v),
                      "low_freq_factor": preset(sc["low_freq_factor"], f"rope_scaling_args.low_freq_factor of {src}",
                                                flavor_v),
                      "high_freq_factor": preset(sc["high_freq_factor"], f"rope_scaling_args.high_freq_factor of {src}",
                                                 flavor_v),
                      "original_max_position_embeddings": preset(
                          sc["original_max_position_embeddings"],
                          f"rope_scaling_args.original_max_position_embeddings of {src}", flavor_v, "int")}
            # not cfg.original_max: the bands are part of the model at every length (no context it shrinks, RV014)
    nope, n_layers, chunk = _irope(vals, src, flavor_v, notes)
    from_start = pretraining_with_scheme(
        scheme, _initial_weights(doc) if scheme is not None else None, "torchtitan",
        "no [checkpoint] initial weights, so this run is the model's pre-training", flavor_v, notes)
    dtype = doc.get("training.mixed_precision_param", expect="str") or preset(
        DEFAULT_MIXED, "torchtitan default training.mixed_precision_param", None, "str")
    return Fields(arch=f"torchtitan {key}", head_dim=head, d=d, base=get("rope_theta"), train_len=seq, target=seq,
                  scheme=scheme, params=params, original_max=orig, dtype=dtype, notes=notes, problems=problems,
                  pretrained_with_scheme=from_start, nope_layers=nope, n_layers=n_layers, chunk=chunk,
                  local_window=local_window)


def _gpt_oss(get, src: str, at) -> tuple:
    """``(scheme, params, original length, local window)`` of a gpt_oss flavor (torchtitan==0.2.2
    ``models/gpt_oss/model/model.py``): ``precompute_rope_cache`` applies YaRN whenever ``rope_factor`` > 1,
    at every length: the correction range ``d/2 ln(original_seq_len / (beta 2 pi)) / ln(theta)`` with
    ``ntk_beta`` (fast) and ``ntk_alpha`` (slow) unrounded, and cos / sin times ``0.1 ln(factor) + 1``;
    layers 0, 2, 4, ... (``layer_id % 2 == 0``) attend ``sliding_window_size`` positions
    (``get_sliding_window_mask_mod``: ``q - kv < window``)."""
    factor = get("rope_factor")
    window = get("sliding_window_size", "int")
    local = None
    if window is not None:
        local = Value(window.raw, None, window.line, window.column,
                      f"{window.where}: layers 0, 2, 4, ... (layer_id % 2 == 0)", "int")
    if factor is None or not isinstance(factor.raw, (int, float)) or factor.raw <= 1:
        return None, {}, None, local
    orig = get("original_seq_len", "int")
    scheme = derived("yarn", f"{src}: precompute_rope_cache applies YaRN when rope_factor > 1", at, "str")
    params = {"factor": factor, "beta_fast": get("ntk_beta"), "beta_slow": get("ntk_alpha"),
              "original_max_position_embeddings": orig,
              "truncate": preset(False, f"{src}: precompute_rope_cache does not round the correction range", at,
                                 "bool")}
    return scheme, params, orig, local


def _irope(vals: Mapping, src: str, at, notes: list) -> tuple:
    """``(NoPE layers, n_layers, chunk)`` of a llama4 flavor with ``every_n_layers_nope`` k (torchtitan==0.2.2
    ``models/llama4/model/model.py`` ``TransformerBlock``: layer i applies no rotary when ``i % k == 0``; the
    other layers' flex attention adds ``get_fixed_block_mask_mod(fixed_attn_block_size)``, so a query sees
    the earlier keys of its block only); ``(None, None, None)`` for every other flavor."""
    k, n = vals.get("every_n_layers_nope"), vals.get("n_layers")
    if not isinstance(k, int) or isinstance(k, bool) or not isinstance(n, int) or k <= 1:
        return None, None, None
    nope = tuple(i for i in range(n) if i % k == 0)
    chunk = None
    if vals.get("attn_type") == "flex":
        size = vals.get("fixed_attn_block_size")
        chunk = preset(size, f"fixed_attn_block_size of {src}: flex attention within blocks of {size:,} tokens "
                             "on the rotary layers (get_fixed_block_mask_mod)", at, "int")
    notes.append(f"every_n_layers_nope {k} of {src}: layers {', '.join(map(str, nope[:4]))}, ... apply no rotary")
    return nope, n, chunk


def _initial_weights(doc: Doc):
    """The key that makes torchtitan 0.2.2 load existing weights before step 0 (``CheckpointManager.load``:
    ``[checkpoint] enable`` and ``initial_load_path`` or ``initial_load_in_hf``), or None."""
    enable = doc.get("checkpoint.enable", expect="bool")
    if enable is None or enable.raw is not True:
        return None
    path = doc.get("checkpoint.initial_load_path", expect="str")
    if path is not None and isinstance(path.raw, str) and path.raw:
        return path
    hf = doc.get("checkpoint.initial_load_in_hf", expect="bool")
    return hf if hf is not None and hf.raw is True else None


DIALECT = dialect(NAME, detect, read)
