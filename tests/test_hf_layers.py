"""Every layer as the model runs it: ropelaw's per-layer reading against transformers' own forward.

For every RoPE decoder model_type of the installed transformers (4.57.1 in the main run, 5.23.0 in
CI's second step) a tiny model is built from the config class's defaults (two heads of the default
head_dim, 8 layers, small MLPs: ``probes.tiny_overrides``) and from variants with each scaling scheme
(linear, dynamic, yarn, llama3, longrope), a partial rotary factor, sliding windows and chunk sizes
shorter than the input, and shifted per-layer lists (``layer_types``, ``no_rope_layers``). Each runs
a forward on CPU; hooks record, per decoder layer, the rotary its attention really applies (the
``inv_freq`` of the rotary that produced its cos/sin, checked against its rotated queries; none for a
NoPE layer) and the keys its mask lets each query see (``probes.observe``).

The same config, as a config.json would hold it (the constructor arguments, the rest left to the
class's defaults), goes through ``ropelaw lint --format json`` (``lint_config(...).setup()``); for
each layer, the group whose ``indices`` hold it must say the same thing: rotary or none (attention or
none), frequencies (``apply_scheme`` of the group's spec at the forward's length) equal to the
runtime's float32 ``inv_freq`` within :data:`RTOL`, attention factor within 1e-6, window or chunk
equal. A difference is allowed only where the lint result carries a finding that says ropelaw does
not model the config (RV024, RV025) or that transformers refuses it (RV021, RV022, RV008), or an
error finding with no analysis of the group (RV003: odd rotary dims): never a silent "ok". The counts (types covered, \
variants run, variants the type does not accept, types that
cannot be built, with the reasons) are printed.
"""

from __future__ import annotations

import importlib
import os
import pathlib
import sys
import time

import pytest

pytestmark = [pytest.mark.hf, pytest.mark.torch]

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

import hf_compare  # noqa: E402

from ropelaw.lint import layers as layer_table  # noqa: E402
from ropelaw.lint.check import lint_config  # noqa: E402
from ropelaw.lint.dialects.hf import semantics_version  # noqa: E402
from ropelaw.lint.layers import probes  # noqa: E402
from ropelaw.lint.loader import load_mapping  # noqa: E402

RTOL, RTOL_ESTIMATED = hf_compare.RTOL, hf_compare.RTOL_ESTIMATED  # tolerances: tests/hf_compare.py
ACKNOWLEDGED = hf_compare.ACKNOWLEDGED  # findings that say "not modelled" / "refused"
SEMANTICS = semantics_version()
# the whole differential and the full table check take minutes (every type, built again and again): they
# run in their own CI step (.ci/run sets ROPELAW_LAYERS=1 under both transformers versions); the suite
# checks the gpt-oss entry only. ROPELAW_LAYERS_TYPES=jamba,lfm2 limits the differential to those types
FULL = os.environ.get("ROPELAW_LAYERS") == "1"


def _rope_block(d: dict, rope_type: str, params: dict) -> dict:
    """Constructor arguments that put the main RoPE settings on ``rope_type`` with ``params``, the
    way this transformers reads them (5.x ``rope_parameters``, per layer type for types that have
    them; 4.x ``rope_scaling``)."""
    block = {"rope_type": rope_type, **params}
    rp = d.get("rope_parameters")
    if isinstance(rp, dict) and rp and all(isinstance(v, dict) or v is None for v in rp.values()) \
            and any(isinstance(v, dict) for v in rp.values()):
        out = dict(rp)
        t = "full_attention" if isinstance(rp.get("full_attention"), dict) else next(
            k for k, v in rp.items() if isinstance(v, dict))
        out[t] = {**{k: v for k, v in rp[t].items() if k in ("rope_theta", "partial_rotary_factor",
                                                             "mrope_section", "mrope_interleaved")}, **block}
        return {"rope_parameters": out}
    if isinstance(rp, dict):
        keep = {k: v for k, v in rp.items() if k in ("rope_theta", "partial_rotary_factor", "mrope_section",
                                                     "mrope_interleaved")}
        return {"rope_parameters": {**keep, **block}}
    rs = d.get("rope_scaling")
    if isinstance(rs, dict) and (rs.get("type") == "mrope" or rs.get("rope_type") == "mrope" or "mrope_section" in rs):
        return {}  # Qwen2-VL in 4.x: the mrope block is the scheme slot
    return {"rope_scaling": {"type": rope_type, **block}}  # 4.x: some classes validate the older "type"


def variants(d: dict, dims: int, entry: dict | None = None, base: dict | None = None) -> dict[str, dict]:
    """name -> constructor arguments (added to the tiny model's, ``base``) for a type whose default config
    (tiny) is ``d`` and whose main rotary has ``dims`` rotated dims (``entry``: its table entry, for the keys of
    its per-layer lists)."""
    pairs = max(dims // 2, 1)
    out: dict[str, dict] = {"default": {}}
    mx = d.get("max_position_embeddings") or 4096
    orig = max(mx // 4, 64)
    out["linear"] = _rope_block(d, "linear", {"factor": 4.0})
    out["dynamic"] = _rope_block(d, "dynamic", {"factor": 4.0})
    out["yarn"] = _rope_block(d, "yarn", {"factor": 8.0, "original_max_position_embeddings": orig,
                                          "beta_fast": 32.0, "beta_slow": 1.0})
    out["llama3"] = _rope_block(d, "llama3", {"factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                                              "original_max_position_embeddings": orig})
    out["longrope"] = _rope_block(d, "longrope", {"short_factor": [1.0 + 0.01 * i for i in range(pairs)],
                                                  "long_factor": [1.0 + 0.5 * i for i in range(pairs)],
                                                  "original_max_position_embeddings": orig, "factor": 4.0})
    if "rope_parameters" in d and isinstance(d["rope_parameters"], dict) and "rope_theta" in d["rope_parameters"]:
        out["partial"] = {"rope_parameters": {**d["rope_parameters"], "partial_rotary_factor": 0.5}}
    else:
        out["partial"] = {"partial_rotary_factor": 0.5}
    n = probes.LAYERS
    nope = (entry or {}).get("nope") or {}
    lists = {k: v for k, v in d.items() if k in ("layer_types", "no_rope_layers", nope.get("key"))
             and isinstance(v, list) and len(v) == n and len(set(map(str, v))) > 1}
    if lists:
        # per-layer overrides the probe writes (Dots 3 Note's, shrunk) move with their layer; those the class derives
        # (Gemma 4's) it derives again
        out["shifted lists"] = {**{k: v[1:] + v[:1] for k, v in lists.items()},
                                **probes.shifted_per_layer(base or {}, n)}
    bases = ((entry or {}).get("bases") or {}).get("key") or (nope.get("key") if nope.get("truth") else None)
    if bases is not None:  # a list of per-layer bases (Granite SWA, Muse): each layer its own, layer 1 a 0
        out["per-layer bases"] = {bases: [0 if i == 1 else (3_100.0, 71_000.0, 530_000.0)[i % 3] for i in range(n)]}
    for k in probes.INDEX_KINDS:  # a list of layer indices (Mllama's cross_attention_layers): one layer later
        if isinstance(d.get(k), list) and d[k]:
            out["shifted lists"] = {k: [i + 1 for i in d[k]]}
    return out


def ropelaw_layers(config: dict, model_type: str) -> tuple[dict, list]:
    """``ropelaw lint --format json`` of ``config`` (a config.json holding ``config``), at a target of
    the forward's length; and its findings."""
    wrapper = None if model_type not in probes.PROBED_TEXT_MODELS else next(
        (w for w in transformers.CONFIG_MAPPING if layer_table.text_type(w, SEMANTICS) == model_type), None)
    if wrapper is not None:  # Mllama's text model: inside its composite, as the published files write it (4.57.1
        # registers no mllama_text_model type; the composite's defaults are the text config's)
        mapping = {"model_type": wrapper, "text_config": {"model_type": model_type, **config}}
    else:
        mapping = {"model_type": model_type, **config}
    cfg = load_mapping(mapping, target=probes.LENGTH)
    result = lint_config(cfg).setup()
    if any(f["code"] == "RL100" for f in result["findings"]):  # no training length in the config (RecurrentGemma
        # has none): read as a user who passes --train, at the forward's length
        result = lint_config(load_mapping(mapping, train=probes.LENGTH, target=probes.LENGTH)).setup()
    return result, result["findings"]


def compare(obs_layers: list, result: dict) -> list[str]:
    """The differences between the runtime's layers and ropelaw's groups (empty: they agree)."""
    return hf_compare.compare(obs_layers, result, seq_len=probes.LENGTH, length=probes.LENGTH)


COUNTS = hf_compare.COUNTS  # largest deviation over agreeing variants / this variant


@pytest.fixture(scope="module")
def candidates():
    torch.set_num_threads(1)
    cands, _, _ = probes.candidate_types()
    return dict(cands)


# Configs the per-type differential does not write (it varies one setting at a time from the defaults), each run by
# transformers and read by ropelaw: a list of per-layer bases that Muse's layers follow only by whether an entry is 0
# (the others run the main base: RV019), longer than the layers (the first ones are read); Inkling 2's window under
# the name its config class stores it (sliding_window_size), which its files write
ODD_CONFIGS = {
    "muse_spark_text bases": ("muse_spark_text", {"sliding_window": probes.WINDOW, "layer_rope_theta": [
        0, 3_100.0, 500_000.0, 71_000.0, 0, 0, 500_000.0, 1, 9_999.0]}, {"RV019"}),
    "muse_glimmer_text bases": ("muse_glimmer_text", {"sliding_window": probes.WINDOW, "layer_rope_theta": [
        500_000.0, 0, 0, 2.5, 500_000.0, 500_000.0, 500_000.0, 500_000.0]}, {"RV019"}),
    "muse_spark_text default bases": ("muse_spark_text", {"sliding_window": probes.WINDOW,
                                                          "layer_types": ["sliding_attention"] * 8}, set()),
    "inkling2_text window": ("inkling2_text", {"sliding_window_size": probes.WINDOW}, set()),
}


@pytest.mark.parametrize("name", sorted(ODD_CONFIGS))
def test_odd_config_as_transformers_runs_it(name):
    """Every layer of these configs as the runtime runs it (``hf_compare``: rotary or none, frequencies, span),
    with no finding that says ropelaw does not model it, and the informational findings named."""
    model_type, extra, want = ODD_CONFIGS[name]
    class_name = probes.candidate(model_type) if transformers.__version__ == SEMANTICS else None
    if class_name is None:
        pytest.skip(f"{model_type} is not a type of transformers {transformers.__version__}'s table")
    torch.set_num_threads(1)
    over = {**probes.tiny_overrides(probes.config_class(model_type)), **extra}
    probe = probes.observe(model_type, class_name, over)
    assert probe.error is None and probe.layers, probe.error
    result, findings = ropelaw_layers(over, model_type)
    codes = {f["code"] for f in findings}
    unmodelled = {"RV024", "RV025"}  # RV022: transformers 4.57.1 has no such type (not this runtime)
    assert not codes & unmodelled, [f["message"] for f in findings if f["code"] in unmodelled]
    assert compare(probe.layers, result) == []
    assert want <= codes
    nope = {o.index for o in probe.layers if o.rope is None}
    assert nope == {i for g in result["layers"] if not g.get("rope", True) for i in g["indices"]}
    assert nope  # the configs have NoPE layers (Muse's 0 entries; Inkling 2 runs no RoPE at all)


# HRM's layer runs (table_rows' "layer_runs" row): the count the file writes is per stack unless it writes
# num_layers_per_stack; the cycles the file's or the class defaults (H 2, L 3)
HRM_RUNS = ({"num_hidden_layers": 2}, {"num_hidden_layers": 1, "H_cycles": 1, "L_cycles": 1},
            {"num_hidden_layers": 8, "num_layers_per_stack": 1}, {"num_hidden_layers": 3, "L_cycles": 0})


@pytest.mark.parametrize("layers", HRM_RUNS, ids=lambda m: ",".join(f"{k}={v}" for k, v in m.items()))
def test_layers_that_run_several_times_as_the_forward_runs_them(layers):
    """Every run of HRM's layers is a layer (the probe numbers them by call order): ropelaw's groups cover as many
    layers as the forward runs, each as it runs it."""
    if probes.candidate("hrm_text") is None or transformers.__version__ != SEMANTICS:
        pytest.skip(f"hrm_text is not a type of transformers {transformers.__version__}'s table")
    torch.set_num_threads(1)
    over = {**probes.tiny_overrides(probes.config_class("hrm_text")), **layers}
    probe = probes.observe("hrm_text", probes.candidate("hrm_text"), over)
    assert probe.error is None, probe.error
    result, _ = ropelaw_layers(over, "hrm_text")
    assert sorted(i for g in result["layers"] for i in g["indices"]) == [o.index for o in probe.layers]
    assert compare(probe.layers, result) == []


@pytest.mark.skipif(not FULL, reason="the per-layer differential is its own CI step (ROPELAW_LAYERS=1)")
def test_every_layer_of_every_type_as_transformers_runs_it(candidates, capsys):
    types, not_covered = layer_table.covered(SEMANTICS)
    installed = transformers.__version__
    if installed != SEMANTICS:
        pytest.skip(f"the table is for {SEMANTICS}; transformers {installed} is installed")
    start = time.perf_counter()
    silent, acknowledged, refused, ran, layers = [], [], [], 0, 0
    per_type: dict[str, set] = {}  # model type -> what its variants that ran showed (empty: right on every layer)
    only = {t for t in os.environ.get("ROPELAW_LAYERS_TYPES", "").split(",") if t}  # a few types, when asked
    unknown = sorted(only - set(types))
    assert not unknown, f"ROPELAW_LAYERS_TYPES names {unknown}: not a model type the table of {SEMANTICS} covers"
    selected = sorted(t for t in types if not only or t in only)
    for mt in selected:
        name = candidates.get(mt)
        assert name is not None, f"{mt}: in the table, not a candidate of transformers {installed}"
        cls = probes.config_class(mt)
        base = probes.tiny_overrides(cls)
        with probes.quiet():
            d = cls(**base).to_dict()
        for key, value in ((probes.window_key(cls), probes.WINDOW), ("attention_chunk_size", probes.CHUNK)):
            if d.get(key) is not None:  # under the name the class stores it (Inkling 2: sliding_window_size)
                base[key] = value
        probe0 = probes.observe(mt, name, base)
        dims = next((2 * len(o.rope.inv_freq) for o in probe0.layers if o.rope is not None), 64)
        for vname, extra in variants(d, dims, types[mt], base).items():
            over = {**base, **extra}
            probe = probe0 if vname == "default" else probes.observe(mt, name, over)
            if probe.error:
                refused.append(f"{mt} {vname}: {probe.error[:100]}")
                continue
            unread = [o for o in probe.layers if o.problem and o.span != "none"]
            if unread:
                refused.append(f"{mt} {vname}: layer {unread[0].index} not observed: {unread[0].problem[:100]}")
                continue
            ran += 1
            per_type.setdefault(mt, set())
            result, findings = ropelaw_layers(over, mt)
            COUNTS["variant_rel"] = 0.0
            diffs = compare(probe.layers, result)
            if not diffs:
                COUNTS["max_rel"] = max(COUNTS["max_rel"], COUNTS["variant_rel"])
            layers += len(probe.layers)
            if diffs:
                codes = {f["code"] for f in findings}
                unanalysed = any(g["spec"] is None and g.get("rope", True) for g in result["layers"]) and \
                    any(f["severity"] == "error" and f["code"].startswith("RV") for f in findings)
                if unanalysed:  # an error finding says ropelaw could not analyse the config (odd rotary dims)
                    codes |= {"error, not analysed"}
                said = codes & (ACKNOWLEDGED | {"error, not analysed"})
                if said:
                    acknowledged.append(f"{mt} {vname}: {sorted(said)}: {diffs[0]}")
                    per_type.setdefault(mt, set()).update(said)
                else:
                    silent.append(f"{mt} {vname}: " + "; ".join(diffs[:3]))
                    per_type.setdefault(mt, set()).add("silent")
    with capsys.disabled():
        print(f"\n[per-layer differential, transformers {installed}] {len(types)} model types covered, "
              f"{ran} variants run, {layers} layers compared in {time.perf_counter() - start:.0f} s; "
              f"largest frequency deviation where they agree {COUNTS['max_rel']:.2e} (bound {RTOL:.2e}); "
              f"{COUNTS['estimated']} layers whose rotary keeps no inv_freq (compared to {RTOL_ESTIMATED:g}); "
              f"{len(acknowledged)} variants differ with a finding that says so; {len(refused)} variants the "
              f"type does not accept; {len(not_covered)} model types not covered")
        right = sorted(t for t, said in per_type.items() if not said)
        print(f"[per type] {len(right)} right on every layer of every variant that ran; "
              f"{len(per_type) - len(right)} differ in some variant with a finding that says so or silently "
              f"({', '.join(f'{t} {sorted(v)}' for t, v in sorted(per_type.items()) if v) or 'none'}); "
              f"{len(selected) - len(per_type)} with no variant the runtime ran "
              f"({', '.join(sorted(set(selected) - set(per_type))) or 'none'})")
        if os.environ.get("ROPELAW_LAYERS_VERBOSE"):
            for line in (["SILENT " + x for x in silent] + ["ACK " + x for x in acknowledged] +
                         ["REFUSED " + x for x in refused] + [f"NOT COVERED {k}: {v}" for k, v in not_covered.items()]):
                print("  ", line)
    assert not silent, f"{len(silent)} variants where ropelaw silently differs from the runtime:\n" + \
        "\n".join(silent[:40])


# The table against the installed transformers: the entries of the types issue 20 names (and a few
# whose layers differ from each other) are derived again and must equal the committed ones. The
# differential above checks the consequences of every entry; this checks the entries themselves.
SAMPLE = ("gpt_oss", "gemma3_text", "llama4_text", "smollm3", "cohere2", "exaone4", "mistral", "granite_swa",
          "jamba", "lfm2", "mllama_text_model", "muse_spark_text", "inkling2_text", "lfm3", "flint",
          "deepseek_v4", "hrm_text", "idefics", "voxtral_realtime_text")
# jamba: kinds from attn_layer_period / _offset; lfm2: full_attn_idxs; mllama_text_model:
# cross_attention_layers (indices); muse_spark_text: counted from the end, layer_rope_theta read by its truth;
# inkling2_text: sliding_window_size; lfm3, flint, deepseek_v4 (5.23.0 only): periodic after their first layers;
# hrm_text, idefics, voxtral_realtime_text (5.23.0 only): layers numbered by call order, image encoder states given,
# a layer keyword (t_cond) given


@pytest.mark.parametrize("model_type", SAMPLE if FULL else SAMPLE[:1])
def test_table_entry_is_what_transformers_does(model_type):
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "scripts"))
    try:
        generate = importlib.import_module("hf_layers")  # scripts/hf_layers.py: the generator, not shipped
    finally:
        sys.path.pop(0)
    types, not_covered = layer_table.covered(SEMANTICS)
    if transformers.__version__ != SEMANTICS:
        pytest.skip(f"the table is for {SEMANTICS}; transformers {transformers.__version__} is installed")
    name = probes.candidate(model_type)
    if name is None:
        assert model_type not in types
        pytest.skip(f"{model_type} is not in transformers {SEMANTICS}")
    torch.set_num_threads(1)
    entry = generate.derive(model_type, name)
    if "error" in entry:
        assert not_covered.get(model_type) == entry["error"]
    else:
        assert types.get(model_type) == entry, f"regenerate: python scripts/hf_layers.py {model_type}"
