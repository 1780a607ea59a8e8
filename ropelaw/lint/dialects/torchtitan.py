"""torchtitan TOML (torchtitan==0.2.2, the last release configured by TOML).

``[model] name`` + ``flavor`` name a model-args entry (``presets/torchtitan.json``, from
``torchtitan/models/<name>/__init__.py``); ``[training] seq_len`` is the training length and
becomes the model's ``max_seq_len`` (``update_from_config``), so it is also the target.
Runtime semantics, per family:

- llama3: head dim ``dim // n_heads``; ``precompute_freqs_cis`` ALWAYS applies the Llama 3.1
  bands of ``rope_scaling_args`` (factor 8, low 1, high 4, original 8192), from the first step;
- qwen3: ``head_dim`` (default 128), plain RoPE at ``rope_theta``;
- deepseek_v3: MLA, rotates ``qk_rope_head_dim``; YaRN (``rope_factor``, ``beta_fast``,
  ``beta_slow``, ``original_seq_len``) only when ``seq_len > original_seq_len``;
- llama4: head dim ``dim // n_heads``, Llama 3.1 bands when ``rope_scaling_args`` is set.

A scheme torchtitan applies is in force from the first step of the run, so unless the run starts
from existing weights (``[checkpoint] enable`` with ``initial_load_path`` or
``initial_load_in_hf``, ``components/checkpoint.py`` ``CheckpointManager.load``) the model is
pre-trained with it: ``pretrained_with_scheme``, and the critical dimension counts the periods of
the scheme's frequencies (``theory.trained_critical_dimension``). From existing weights the
scheme is read as Liu et al.'s context extension of a plain-RoPE model.

dtype: ``[training] mixed_precision_param`` (default ``bfloat16``).
"""

from __future__ import annotations

from collections.abc import Mapping

from ..model import NoRopeFound, NotARopeConfig
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
    d, scheme, params, orig, notes = head, None, {}, None, []
    if family == "deepseek_v3":
        d = get("qk_rope_head_dim", "int")
        o = get("original_seq_len", "int")
        if seq.number() is not None and o is not None and seq.number() > o.number():
            scheme = derived("yarn", f"{src}: YaRN when seq_len > original_seq_len", flavor_v, "str")
            params = {"factor": get("rope_factor"), "beta_fast": get("beta_fast"), "beta_slow": get("beta_slow"),
                      "original_max_position_embeddings": o}
            orig = o
        else:
            notes.append(f"{src}: seq_len <= original_seq_len, so torchtitan applies no YaRN")
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
    from_start = pretraining_with_scheme(
        scheme, _initial_weights(doc) if scheme is not None else None, "torchtitan",
        "no [checkpoint] initial weights, so this run is the model's pre-training", flavor_v, notes)
    dtype = doc.get("training.mixed_precision_param", expect="str") or preset(
        DEFAULT_MIXED, "torchtitan default training.mixed_precision_param", None, "str")
    return Fields(arch=f"torchtitan {key}", head_dim=head, d=d, base=get("rope_theta"), train_len=seq, target=seq,
                  scheme=scheme, params=params, original_max=orig, dtype=dtype, notes=notes, problems=problems,
                  pretrained_with_scheme=from_start)


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
