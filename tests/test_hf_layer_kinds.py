"""Layers without attention or without rotary, and per-layer kinds a config class computes, against
transformers' own config classes and forward (issue 31).

Configs the real corpus has no file of are built here from the type's config class defaults in
transformers plus the keys its published config.json writes (named per config below, from memory of the
published files: the keys that decide the layers are the ones checked):

- Jamba (AI21 Jamba 1.5/1.6: ``attn_layer_period`` 8, ``attn_layer_offset`` 4, 32 layers): 28 Mamba layers
  (no attention) and 4 attention layers that apply no rotary;
- LFM2 (LiquidAI/LFM2-1.2B: ``full_attn_idxs`` [2, 5, 8, 10, 12, 14] of 16 layers, no ``layer_types``):
  10 convolution layers (no attention) and 6 RoPE layers;
- EXAONE 4.5 (LGAI EXAONE-4.5-33B: composite ``exaone4_5`` whose ``text_config.model_type`` is
  ``exaone4_5_text``, which transformers 5.23.0's Exaone4_5_Config renames to ``exaone4``; 64 layers,
  3 sliding of every 4, Llama 3 x16 rope scaling): 48 sliding layers with Llama 3 x16 and 16 full-attention
  layers without RoPE. 4.57.1 has no exaone4_5: ropelaw must say RV021.

Each goes through ``tests/test_hf_files.differential`` (loaded as users load it, shrunk in place, one forward
with hooks, every layer compared with ropelaw's groups) under the installed transformers, and through
``ropelaw lint`` for the groups and findings the issue asks for. The real Jamba file of the corpus
(``hf/intel__...jamba__config.json``) runs in tests/test_hf_files.py.
"""

from __future__ import annotations

import json
import os
import pathlib

import pytest

transformers = pytest.importorskip("transformers")

from ropelaw.lint import layers as layer_table  # noqa: E402
from ropelaw.lint.check import lint_config  # noqa: E402
from ropelaw.lint.dialects.hf import SEMANTICS  # noqa: E402
from ropelaw.lint.loader import load_mapping  # noqa: E402

V4 = transformers.__version__.startswith("4.")
INSTALLED = SEMANTICS[0] if V4 else SEMANTICS[1]


def _has(model_type: str) -> bool:
    from transformers import CONFIG_MAPPING

    return model_type in CONFIG_MAPPING


def jamba() -> dict:
    from transformers import JambaConfig

    d = JambaConfig().to_dict()
    d.update({"model_type": "jamba", "architectures": ["JambaForCausalLM"], "attn_layer_offset": 4,
              "attn_layer_period": 8, "num_hidden_layers": 32, "max_position_embeddings": 262144,
              "hidden_size": 4096, "num_attention_heads": 32, "num_key_value_heads": 8})
    return d


def lfm2() -> dict:
    from transformers import Lfm2Config

    d = Lfm2Config().to_dict()
    for k in ("layer_types", "full_attn_idxs", "rope_parameters"):  # the published file writes neither list
        d.pop(k, None)
    d.update({"model_type": "lfm2", "architectures": ["Lfm2ForCausalLM"], "num_hidden_layers": 16,
              "hidden_size": 2048, "num_attention_heads": 32, "num_key_value_heads": 8,
              "full_attn_idxs": [2, 5, 8, 10, 12, 14], "max_position_embeddings": 128000, "rope_theta": 1e6})
    return d


def exaone45() -> dict:
    n = 64
    text = {"model_type": "exaone4_5_text", "architectures": ["Exaone4ForCausalLM"], "hidden_size": 5120,
            "num_attention_heads": 40, "num_key_value_heads": 8, "head_dim": 128, "num_hidden_layers": n,
            "intermediate_size": 27392, "vocab_size": 102400, "max_position_embeddings": 131072,
            "rope_theta": 1e6, "rope_scaling": {"factor": 16.0, "high_freq_factor": 4.0, "low_freq_factor": 1.0,
                                                "original_max_position_embeddings": 8192, "rope_type": "llama3"},
            "sliding_window": 4096, "sliding_window_pattern": "LLLG",
            "layer_types": ["full_attention" if (i + 1) % 4 == 0 else "sliding_attention" for i in range(n)]}
    return {"model_type": "exaone4_5", "architectures": ["Exaone4_5_ForConditionalGeneration"], "text_config": text,
            "vision_config": {"model_type": "exaone4_5_vision"}}


def lint(data: dict) -> dict:
    return lint_config(load_mapping(data, path="config.json")).setup()


def groups(result: dict) -> dict:
    return {g["layers"]: g for g in result["layers"]}


# -----------------------------------------------------------------------------------------
# the per-layer kinds the config class computes: the table's rule against the class itself
# -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("n,period,offset", [(32, 8, 4), (4, 4, 2), (9, 3, 0), (13, 5, 4), (1, 2, 1)])
def test_jamba_kinds_are_the_config_class_s(n, period, offset):
    """plan()'s kinds for Jamba (the table's rule: attention where i % attn_layer_period == attn_layer_offset)
    equal JambaConfig(...).layers_block_type of the installed transformers."""
    from transformers import JambaConfig

    from ropelaw.lint.loader import Value

    cfg = {"attn_layer_period": period, "attn_layer_offset": offset}
    got = layer_table.plan("jamba", n, lambda k: Value(cfg[k], k, 1, 1) if k in cfg else None,
                           lambda k: None, INSTALLED)
    want = JambaConfig(num_hidden_layers=n, **cfg).layers_block_type
    assert got.problem is None and [r.kind for r in got.roles] == want
    assert [r.attention for r in got.roles] == [k == "attention" for k in want]
    assert all(r.rotary == "none" for r in got.roles)


def test_jamba_offset_not_below_period_is_refused_by_both():
    from transformers import JambaConfig

    from ropelaw.lint.loader import Value

    with pytest.raises(Exception, match="offset"):  # 4.57.1 ValueError; 5.23.0 StrictDataclassClassValidationError
        JambaConfig(attn_layer_period=4, attn_layer_offset=4)
    cfg = {"attn_layer_period": 4, "attn_layer_offset": 4}
    got = layer_table.plan("jamba", 8, lambda k: Value(cfg[k], k, 1, 1) if k in cfg else None, lambda k: None,
                           INSTALLED)
    assert got.problem and "offset" in got.problem and not got.roles


@pytest.mark.parametrize("idx", [[2, 5, 8, 10, 12, 14], [0], [], [15, 40]])
def test_lfm2_full_attn_idxs_are_the_config_class_s(idx):
    from transformers import Lfm2Config

    from ropelaw.lint.loader import Value

    got = layer_table.plan("lfm2", 16, lambda k: Value(idx, k, 1, 1) if k == "full_attn_idxs" else None,
                           lambda k: None, INSTALLED)
    want = Lfm2Config(num_hidden_layers=16, full_attn_idxs=idx).layer_types
    assert [r.kind for r in got.roles] == want
    assert [r.attention for r in got.roles] == [k == "full_attention" for k in want]


# -----------------------------------------------------------------------------------------
# what ropelaw says (lint)
# -----------------------------------------------------------------------------------------
def test_jamba_reads_mamba_and_nope_layers_and_claims_no_bound():
    r = lint(jamba())
    g = groups(r)
    assert set(g) == {"without attention (28 layers)", "NoPE (4 layers)"}
    assert g["NoPE (4 layers)"]["indices"] == [4, 12, 20, 28]
    assert g["NoPE (4 layers)"]["rope"] is False and g["NoPE (4 layers)"]["bound"] is None
    assert g["without attention (28 layers)"]["attention"] is False
    assert r["bound"] is None
    assert not any(a.startswith("base 10,000 assumed") for a in r["assumptions"])


def test_lfm2_full_attn_idxs_reads_convolution_layers():
    g = groups(lint(lfm2()))
    assert set(g) == {"global (6 layers)", "without attention (10 layers)"}
    assert g["global (6 layers)"]["indices"] == [2, 5, 8, 10, 12, 14]
    assert g["global (6 layers)"]["spec"]["base"] == 1e6


def test_exaone45_llama3_on_sliding_layers_nope_on_full():
    r = lint(exaone45())
    g = groups(r)
    local = next(v for k, v in g.items() if k.startswith("local"))
    assert local["count"] == 48 and local["spec"]["scheme"] == "llama3" and local["spec"]["params"]["factor"] == 16
    nope = next(v for k, v in g.items() if k.startswith("NoPE"))
    assert nope["count"] == 16 and nope["indices"] == list(range(3, 64, 4))
    codes = {f["code"]: f["severity"] for f in r["findings"]}
    if V4:  # 4.57.1 has no exaone4_5: the analysis is 5.23.0's, and the refusal is said
        assert codes.get("RV021") == "error"
    else:
        assert codes.get("RV022") == "warning"


# -----------------------------------------------------------------------------------------
# against transformers' forward
# -----------------------------------------------------------------------------------------
BUILT = {"jamba": (jamba, "jamba"), "lfm2": (lfm2, "lfm2"), "exaone45": (exaone45, "exaone4_5")}


@pytest.mark.hf
@pytest.mark.torch
@pytest.mark.parametrize("name", sorted(BUILT))
def test_built_config_as_transformers_runs_it(name, tmp_path, monkeypatch):
    pytest.importorskip("torch")
    import torch

    import test_hf_files

    make, mt = BUILT[name]
    torch.set_num_threads(1)
    monkeypatch.setenv("ROPELAW_HF_SEMANTICS", INSTALLED)
    path = pathlib.Path(tmp_path, "config.json")
    path.write_text(json.dumps(make()))
    verdict, detail = test_hf_files.differential(path)
    if not _has(mt):  # the installed transformers lacks the type: it refuses, and ropelaw must say so
        assert verdict == "refused" and "RV021" in detail, detail
        return
    assert verdict == "right", detail


# -----------------------------------------------------------------------------------------
# a position-dependent query scale (Ministral 3's llama_4_scaling_beta): RL106, against the forward
# -----------------------------------------------------------------------------------------
def ministral3() -> dict:
    """Ministral3Config's defaults with the published Devstral-Small-2 keys (mistralai: yarn x48, beta 0.1,
    original 8,192, max_position_embeddings 393,216), as a text-only ministral3 config.json."""
    from transformers import Ministral3Config

    d = Ministral3Config().to_dict()
    d.update({"model_type": "ministral3", "architectures": ["Ministral3ForCausalLM"], "head_dim": 128,
              "max_position_embeddings": 393216, "sliding_window": None,
              "rope_parameters": {"beta_fast": 32.0, "beta_slow": 1.0, "factor": 48.0, "llama_4_scaling_beta": 0.1,
                                  "mscale": 1.0, "mscale_all_dim": 1.0, "original_max_position_embeddings": 8192,
                                  "rope_theta": 100000000.0, "rope_type": "yarn"}})
    return d


@pytest.mark.parametrize("tokens,want", [(1, 1.0), (8192, 1.0), (8193, 1.0693147180559945),
                                         (393216, 1.3871201010907890), (16385, 1.1098612288668110)])
def test_llama4_query_scale_formula(tokens, want):
    """1 + 0.1 ln(1 + floor((tokens - 1) / 8192)), against the values written out by hand: ln 2, ln 48, ln 3."""
    import math

    from ropelaw.lint.rules.layers import llama4_query_scale

    assert llama4_query_scale(0.1, 8192, tokens) == pytest.approx(want, rel=1e-15)
    assert want == pytest.approx(1 + 0.1 * math.log({1: 1, 8192: 1, 8193: 2, 393216: 48, 16385: 3}[tokens]), rel=1e-15)


@pytest.mark.skipif(not _has("ministral3"), reason=f"transformers {transformers.__version__} has no ministral3")
def test_ministral3_query_scale_in_the_output():
    r = lint(ministral3())
    qs = r["query_scale"]
    assert qs["beta"] == 0.1 and qs["original"] == 8192 and qs["target"] == 393216
    assert qs["at_target"] == pytest.approx(1 + 0.1 * __import__("math").log(48), rel=1e-12)
    assert qs["bound"] is not None and qs["at_bound"] >= 1
    codes = [f["code"] for f in r["findings"]]
    assert "RL106" in codes and "RV025" not in codes and "RV009" not in codes


@pytest.mark.hf
@pytest.mark.torch
@pytest.mark.skipif(not _has("ministral3"), reason=f"transformers {transformers.__version__} has no ministral3")
@pytest.mark.parametrize("offset", [8192 - 12, 3 * 8192 - 12, 393216 - 24])
def test_ministral3_query_scale_is_the_forward_s(offset):
    """The first attention layer's query norms (its identity re-run: the scale, no rotary) over 24 tokens at
    positions offset .. offset + 23, over the same tokens at 0 .. 23 (scale 1): ropelaw's scale at each position."""
    pytest.importorskip("torch")
    import torch

    from ropelaw.lint.layers import shrunk
    from ropelaw.lint.rules.layers import llama4_query_scale

    torch.set_num_threads(1)
    data = ministral3()
    near, far = shrunk.run_file(data), shrunk.run_file(data, offset=offset)
    assert near.problem is None and far.problem is None, (near.problem, far.problem)
    i = next(o.index for o in near.probe.layers if o.query_norm is not None and o.span != "none")
    a, b = near.probe.layers[i].query_norm, far.probe.layers[i].query_norm
    got = [y / x for x, y in zip(a, b, strict=True)]
    want = [llama4_query_scale(0.1, 8192, offset + t + 1) for t in range(len(got))]
    assert len(set(round(w, 6) for w in want)) == (2 if offset % 8192 else 1) or offset == 393216 - 24
    for g, w in zip(got, want, strict=True):
        assert g == pytest.approx(w, rel=1e-5)  # float32 queries and norms


# -----------------------------------------------------------------------------------------
# Llama 4's attention temperature tuning (its NoPE layers' queries): RL106, against the forward
# -----------------------------------------------------------------------------------------
CORPUS = pathlib.Path(os.environ.get("ROPELAW_CORPUS",
                                     pathlib.Path(__file__).resolve().parents[1].parent / "shared" / "corpus"))
# a real llama4 file (text_config: 4 layers, layer 3 NoPE)
LLAMA4_FILE = pathlib.Path(CORPUS, "heldout-r3/hub/whn09__neuronx-distributed-inference__test__integration__tp64__"
                           "models__llama4__config_16E_4layer.json")


def llama4_real() -> dict:
    if not LLAMA4_FILE.exists():
        pytest.skip(f"{LLAMA4_FILE.name} not in the corpus {CORPUS} (set ROPELAW_CORPUS)")
    return json.loads(LLAMA4_FILE.read_text())


def llama4_built(**keys) -> dict:
    """Llama4TextConfig's defaults (48 layers, every fourth NoPE; tuning on, attn_scale 0.1, floor_scale 8192) as a
    text-only llama4_text config.json, with ``keys`` over them."""
    from transformers import Llama4TextConfig

    d = Llama4TextConfig().to_dict()
    if "num_hidden_layers" in keys:  # the per-layer lists the class wrote for 48 layers: derived again
        d.pop("layer_types", None)
        d.pop("no_rope_layers", None)
    d.update({"model_type": "llama4_text", "architectures": ["Llama4ForCausalLM"], **keys})
    return d


@pytest.mark.parametrize("tokens,n", [(1, 0), (8191, 0), (8192, 1), (16383, 1), (16384, 2), (10485760, 1280)])
def test_llama4_temperature_formula(tokens, n):
    """1 + 0.1 ln(1 + floor(tokens / 8192)) at the last position p = tokens - 1 (transformers' (p + 1) / floor_scale):
    the floor written out by hand, 1280 = 10,485,760 / 8,192."""
    import math

    from ropelaw.lint.rules.layers import llama4_query_scale

    assert llama4_query_scale(0.1, 8192, tokens, 1, True) == pytest.approx(1 + 0.1 * math.log(1 + n), rel=1e-15)
    assert llama4_query_scale(0.1, 8192, tokens, 1, False) == pytest.approx(1 + 0.1 * math.log(1 + n), rel=1e-15)


@pytest.mark.torch
@pytest.mark.parametrize("floor_scale", [8192, 3, 1000, 7919])
def test_llama4_temperature_floor_is_torch_float32(floor_scale):
    """The floor ropelaw computes is torch's ``torch.floor((p.float() + 1.0) / floor_scale)`` (float32, as
    Llama4TextAttention.forward runs it) at positions around multiples of floor_scale and past 2^24, where float32
    no longer holds every integer (there it may differ from the integer floor: torch's is the one that runs)."""
    torch = pytest.importorskip("torch")
    import math

    from ropelaw.lint.rules.layers import llama4_query_scale

    ps = sorted({max(p, 0) for k in (1, 2, 1000, 2048, 2049, 70000)
                 for p in range(k * floor_scale - 3, k * floor_scale + 3)}
                | {p for c in (2 ** 24, 3 * 2 ** 24, 5 * 2 ** 25) for p in range(c - 4, c + 4)})
    floors = torch.floor((torch.tensor(ps, dtype=torch.int64).float() + 1.0) / floor_scale)
    differs = 0
    for p, f in zip(ps, floors.tolist(), strict=True):
        assert llama4_query_scale(1.0, floor_scale, p + 1, 1, True) == pytest.approx(1 + math.log1p(f), rel=1e-15), p
        differs += f != (p + 1) // floor_scale
    if floor_scale in (3, 1000, 7919):
        assert differs > 0  # the float32 rounding does move the floor somewhere past 2^24


def test_llama4_temperature_in_the_output():
    """The real file sets none of the keys: Llama4TextConfig's defaults (True, 0.1, 8192) on its NoPE layer 3; off,
    or no NoPE layer: no query_scale and no RL106; the file's own keys are read."""
    import math

    r = lint(llama4_real())
    qs = r["query_scale"]
    assert (qs["beta"], qs["original"], qs["shift"], qs["layers"], qs["position"]) == (0.1, 8192, 1, [3],
                                                                                       "cache position")
    assert qs["train"] == 8192 and qs["at_train"] == pytest.approx(1 + 0.1 * math.log(2), rel=1e-15)
    assert qs["target"] == 10485760 and qs["at_target"] == pytest.approx(1 + 0.1 * math.log(1281), rel=1e-15)
    assert qs["bound"] is None and qs["at_bound"] is None and "no RoPE bound" in qs["bounded_by"]
    f = [f for f in r["findings"] if f["code"] == "RL106"]
    assert len(f) == 1 and "x1.0693 at the training length 8,192" in f[0]["message"] and f[0]["data"]["layers"] == [3]
    assert "x1 up to 8,191 tokens, x1.0693 from 8,192" in f[0]["message"]
    for keys in ({"attn_temperature_tuning": False}, {"no_rope_layers": [1, 1, 1, 1]}):
        data = llama4_real()
        data["text_config"].update(keys)  # a composite llama4 file: its language model is text_config
        r = lint(data)
        assert r["query_scale"] is None and "RL106" not in [f["code"] for f in r["findings"]], keys
    data = llama4_real()
    data["text_config"]["attn_temperature_tuning"] = None  # 4.57.1: None, off (5.23.0's class refuses a null)
    r = lint(data)
    assert r["query_scale"] is None and any("attn_temperature_tuning: null" in n for n in r["assumptions"])
    data = llama4_real()
    data["text_config"]["floor_scale"] = "8192"
    r = lint(data)
    f = [f for f in r["findings"] if f["code"] == "RL106"]
    assert r["query_scale"] is None and len(f) == 1 and "the scale is not computed" in f[0]["message"]
    r = lint(llama4_built(attn_scale=0.3, floor_scale=4096, max_position_embeddings=65536))
    qs = r["query_scale"]
    assert (qs["beta"], qs["original"], qs["from"][1:]) == (0.3, 4096, ["attn_scale", "floor_scale"])
    assert qs["layers"] == list(range(3, 48, 4))
    assert qs["at_target"] == pytest.approx(1 + 0.3 * math.log(17), rel=1e-15)  # floor(65536 / 4096) = 16


@pytest.mark.hf
@pytest.mark.torch
@pytest.mark.parametrize("which,offset", [("real", 0), ("real", 8192 - 12), ("real", 2 * 8192 - 12),
                                          ("real", 9 * 8192 - 12), ("built", 4096 - 12), ("off", 8192 - 12)])
def test_llama4_temperature_is_the_forward_s(which, offset):
    """Each attention layer's queries in transformers' own forward (hooks: ``hf_compare.cached_query_scales``) after a
    cache of ``offset`` tokens, over the same layer's unscaled projection: ropelaw's scale at each cache position on
    the layers ``query_scale`` names, 1 on every other layer (and everywhere with the tuning off)."""
    pytest.importorskip("torch")
    import torch

    import hf_compare
    from ropelaw.lint.rules.layers import llama4_query_scale

    torch.set_num_threads(1)
    data = {"real": llama4_real, "built": lambda: llama4_built(attn_scale=0.3, floor_scale=4096, num_hidden_layers=8),
            "off": lambda: llama4_built(attn_temperature_tuning=False, num_hidden_layers=4)}[which]()
    qs = lint(data)["query_scale"]
    assert (qs is None) == (which == "off")
    got = hf_compare.cached_query_scales(data, offset)
    assert len(got) == data.get("text_config", data)["num_hidden_layers"]
    steps = set()
    for i, (scales, spread) in got.items():
        assert spread < 1e-5  # the same factor for every head and batch row: a positional scale
        for t, g in enumerate(scales):
            want = llama4_query_scale(qs["beta"], qs["original"], offset + t + 1, 1, True) \
                if qs is not None and i in qs["layers"] else 1.0
            steps.add(round(want, 6))
            assert g != g or g == pytest.approx(want, rel=1e-5), (i, offset + t)  # g != g: a pad token's zero query
    # the window crosses a step: 1 (RoPE layers, NoPE before it) and one or two NoPE values (8,180: 1 | ln 2 steps;
    # 16,372: ln 2 | ln 3; 73,716: ln 9 | ln 10; built 4,084: 1 | 0.3 ln 2)
    assert len(steps) == ({0: 1, 8180: 2, 16372: 3, 73716: 3, 4084: 2}[offset] if which != "off" else 1)
