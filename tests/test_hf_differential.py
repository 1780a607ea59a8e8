"""Differential test: ropelaw's frequencies against transformers' own ``ROPE_INIT_FUNCTIONS``.

Thousands of generated Hugging Face configurations (every rope type, partial rotary factors,
head dims, bases, and ``seq_len`` below, at and above each switch point) go through both paths:

- the API path: a :class:`RopeSpec` built from the runtime's parameters -> ``apply_scheme``;
- the linter path: the config dict -> ``load_mapping`` -> ``.spec()`` -> ``apply_scheme``;

and each result is compared with the installed transformers (4.57.1 under ``.venv``, 5.23.0 in CI's
second step). ropelaw computes in float64, transformers in float32: a result must equal transformers'
algorithm re-run in float64 (``hf_reference.reference_inv_freq(float64=True)``) to 1e-12, and be
within float32 rounding (rtol 1e-5) of the float32 run, or else differ from it only where the
float32 run itself departs from the float64 run (then it is float32 noise, counted and reported).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

pytestmark = [pytest.mark.hf, pytest.mark.torch]

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

import hf_reference as ref  # noqa: E402

from ropelaw.lint.dialects.hf import semantics_version  # noqa: E402
from ropelaw.lint.loader import load_mapping  # noqa: E402
from ropelaw.schemes import apply_scheme  # noqa: E402
from ropelaw.spec import RopeSpec  # noqa: E402

CONFIGS = 5000  # generated configurations (each checked at several seq_len)
SHARDS = 5  # of CONFIGS / SHARDS each, seeded 0..4: the suite's workers (pytest-xdist) run them side by side
V4 = ref.transformers_version()[0] == 4
COUNTS = {"configs": 0, "checks": 0, "float32_noise": 0, "rejected_by_transformers": 0, "partial_ignored_by_model": 0}
TYPES = ("default", "mrope", "linear", "dynamic", "yarn", "longrope", "llama3")


@st.composite
def hf_configs(draw):
    rope_type = draw(st.sampled_from(TYPES))
    head_dim = draw(st.sampled_from((16, 32, 48, 64, 80, 96, 112, 128, 160, 192, 256)))
    heads = draw(st.integers(1, 8))
    frac = draw(st.one_of(st.none(), st.sampled_from((0.25, 0.4, 0.5, 0.6, 0.75, 1.0)),
                          st.floats(0.1, 1.0).map(lambda x: round(x, 3))))
    dims = int(head_dim * (1.0 if frac is None else frac))
    if dims < 4 or dims % 2:
        frac = None
        dims = head_dim
    base = draw(st.one_of(st.sampled_from((1e4, 5e5, 1e6, 1e7, 150000.0)), st.floats(500.0, 1e8)))
    max_pos = draw(st.sampled_from((2048, 4096, 8192, 32768, 131072)))
    cfg = {"hidden_size": heads * head_dim, "num_attention_heads": heads, "max_position_embeddings": max_pos,
           "rope_theta": base, "model_type": "llama"}
    if draw(st.booleans()):
        cfg["head_dim"] = head_dim
    if frac is not None:
        cfg["partial_rotary_factor"] = frac
    rs: dict = {"rope_type": rope_type}
    factor = draw(st.one_of(st.sampled_from((1.0, 2.0, 4.0, 8.0, 16.0, 32.0)), st.floats(1.0, 64.0)))
    switch = max_pos  # where a length-dependent scheme changes
    if rope_type == "mrope":
        rs = {"type": "mrope", "mrope_section": [dims // 8, dims // 8, dims // 2 - 2 * (dims // 8)]}
    elif rope_type in ("linear", "dynamic"):
        rs["factor"] = factor
        if rope_type == "dynamic" and draw(st.booleans()):  # ignored by transformers: RV019
            rs["original_max_position_embeddings"] = max_pos // draw(st.sampled_from((2, 4)))
    elif rope_type == "yarn":
        rs["factor"] = factor
        for key, choices in (("beta_fast", (32, 16, 64, 8.5)), ("beta_slow", (1, 2, 0.5))):
            if draw(st.booleans()):
                rs[key] = draw(st.sampled_from(choices))
        if draw(st.integers(0, 7)) == 0:  # Kimi K2: equal betas, the ramp is a step
            rs["beta_fast"] = rs["beta_slow"] = draw(st.sampled_from((1.0, 2.0)))
        t = draw(st.sampled_from(("absent", True, False, None)))
        if t != "absent":
            rs["truncate"] = t
        if draw(st.booleans()):
            rs["original_max_position_embeddings"] = max_pos // draw(st.sampled_from((1, 2, 4, 8, 32)))
        if draw(st.integers(0, 3)) == 0:
            cfg["original_max_position_embeddings"] = max_pos // draw(st.sampled_from((2, 4, 16)))
        m = draw(st.integers(0, 3))
        if m == 1:
            rs["mscale"], rs["mscale_all_dim"] = draw(st.sampled_from(((1.0, 1.0), (0.707, 0.707), (1.0, 0.5))))
        elif m == 2:
            rs["attention_factor"] = draw(st.floats(0.5, 2.0))
    elif rope_type == "llama3":
        rs["factor"] = factor
        rs["low_freq_factor"], rs["high_freq_factor"] = draw(st.sampled_from(((1.0, 4.0), (1.0, 1.0), (2.0, 8.0))))
        rs["original_max_position_embeddings"] = max_pos // draw(st.sampled_from((1, 2, 4, 16)))
    elif rope_type == "longrope":
        pairs = dims // 2
        rs["short_factor"] = [round(draw(st.floats(1.0, 4.0)), 4) for _ in range(pairs)]
        rs["long_factor"] = [round(draw(st.floats(1.0, 64.0)), 4) for _ in range(pairs)]
        where = draw(st.sampled_from(("top", "inner", "both", "none")))
        orig = max_pos // draw(st.sampled_from((4, 16, 32)))
        if where in ("top", "both"):
            cfg["original_max_position_embeddings"] = orig
        if where in ("inner", "both"):
            rs["original_max_position_embeddings"] = orig if where == "inner" else orig * 2
        if draw(st.booleans()) or where in ("inner", "none"):
            rs["factor"] = float(max(factor, 1.0))
        switch = orig
    if rope_type != "default" or draw(st.booleans()):
        cfg["rope_scaling"] = rs
    seq_lens = sorted({None, switch - 1, switch, switch + 1, 2 * switch,
                       draw(st.integers(1, 4 * switch))}, key=lambda x: -1 if x is None else x)
    if rope_type not in ("dynamic", "longrope"):
        seq_lens = [None]
    return cfg, seq_lens


def runtime_spec(cfg: dict) -> tuple[RopeSpec, str]:
    """The API path: a RopeSpec from the runtime parameters of ``cfg``, written here from
    transformers' code independently of the loader (``hf_reference`` docstring)."""
    rs = dict(cfg.get("rope_scaling") or {})
    rtype = rs.pop("rope_type", None) or rs.pop("type", None) or "default"
    rs.pop("type", None)
    head = cfg.get("head_dim") or cfg["hidden_size"] // cfg["num_attention_heads"]
    d = int(head * cfg.get("partial_rotary_factor", 1.0))
    max_pos = cfg["max_position_embeddings"]
    top = cfg.get("original_max_position_embeddings")
    params: dict = {}
    if rtype == "mrope":
        return RopeSpec(d=d, train_len=max_pos, base=cfg["rope_theta"]), "default"
    if rtype in ("linear",):
        params = {"factor": rs["factor"]}
    elif rtype == "dynamic":
        params = {"factor": rs["factor"], "original_max_position_embeddings": max_pos}
    elif rtype == "yarn":
        orig = rs.get("original_max_position_embeddings") or max_pos if V4 else (
            top or rs.get("original_max_position_embeddings") or max_pos)
        params = {k: rs[k] for k in ("factor", "beta_fast", "beta_slow", "mscale", "mscale_all_dim",
                                     "attention_factor") if k in rs}
        params["original_max_position_embeddings"] = orig
        if "truncate" in rs:
            params["truncate"] = bool(rs["truncate"])
    elif rtype == "llama3":
        params = {k: rs[k] for k in ("factor", "low_freq_factor", "high_freq_factor")}
        params["original_max_position_embeddings"] = (rs["original_max_position_embeddings"] if V4 else
                                                      top or rs["original_max_position_embeddings"])
    elif rtype == "longrope":
        if V4:
            orig = top or max_pos
            factor = max_pos / top if top else rs.get("factor")
        else:
            orig = top or rs.get("original_max_position_embeddings") or max_pos
            factor = rs.get("factor") or max_pos / orig
        params = {"short_factor": rs["short_factor"], "long_factor": rs["long_factor"], "factor": factor,
                  "original_max_position_embeddings": orig}
    # trained at the original length (seq_len None: transformers' initial frequencies, the short factors)
    train = params.get("original_max_position_embeddings", max_pos)
    return RopeSpec(d=d, train_len=train, base=cfg["rope_theta"], scheme=rtype, params=params), rtype


def agree(result, theirs32, theirs64) -> str:
    """"exact" (within float32 of theirs and 1e-12 of their float64 run), "noise" (float32
    departs from float64; ours matches float64), else a message."""
    ours = np.asarray(result.inv_freq)
    inv32, att32 = theirs32
    inv64, att64 = theirs64
    if ours.shape != inv64.shape:
        return f"{ours.shape[0]} frequencies, transformers {inv64.shape[0]}"
    if not np.allclose(ours, inv64, rtol=1e-12, atol=0):
        worst = int(np.argmax(np.abs(ours / inv64 - 1)))
        return f"pair {worst}: ours {ours[worst]!r}, transformers in float64 {inv64[worst]!r}"
    if not math.isclose(result.attention_factor, att64, rel_tol=1e-12):
        return f"attention factor ours {result.attention_factor!r}, transformers {att64!r}"
    if np.allclose(ours, inv32, rtol=1e-5, atol=0):
        return "exact"
    return "noise"  # ours equals the float64 run; only transformers' float32 run departs


def check_one(case):
    cfg, seq_lens = case
    rtype = ((cfg.get("rope_scaling") or {}).get("rope_type") or (cfg.get("rope_scaling") or {}).get("type")
             or "default")
    fn = "default" if rtype == "mrope" else rtype
    try:
        config = ref.make_config({k: v for k, v in cfg.items() if k != "model_type"}
                                 if rtype != "mrope" else {k: v for k, v in cfg.items()
                                                           if k not in ("model_type", "rope_scaling")})
        ref.reference_inv_freq(config, fn, None)
    except (KeyError, TypeError, ValueError, ZeroDivisionError):
        COUNTS["rejected_by_transformers"] += 1
        return
    api, _ = runtime_spec(cfg)
    loaded = load_mapping(cfg)
    lint = loaded.spec(0)
    # the model may not read every key ROPE_INIT_FUNCTIONS reads: LlamaModel of 5.23.0 rotates the
    # whole head whatever partial_rotary_factor says (measured, tests/test_hf_layers.py); the lint
    # path follows the model and says so (RV019), the API path follows the function
    model_ignores = any(p.rule.name == "runtime-ignores-key" and p.value.key and "partial_rotary_factor" in p.value.key
                        for p in loaded.problems)
    if model_ignores:
        COUNTS["partial_ignored_by_model"] += 1
    else:
        assert lint.d == api.d
    COUNTS["configs"] += 1
    for seq_len in seq_lens:
        theirs32 = ref.reference_inv_freq(config, fn, seq_len)
        theirs64 = ref.reference_inv_freq(config, fn, seq_len, float64=True)
        for path, spec in (("api", api), ("lint", lint)):
            if path == "lint" and model_ignores:
                continue
            verdict = agree(apply_scheme(spec, seq_len=seq_len), theirs32, theirs64)
            assert verdict in ("exact", "noise"), f"{path} path, {cfg}, seq_len {seq_len}: {verdict}"
            COUNTS["float32_noise"] += verdict == "noise"
            COUNTS["checks"] += 1


@pytest.mark.parametrize("shard", range(SHARDS))
def test_ropelaw_frequencies_are_transformers_frequencies(shard, capsys):
    """Every generated configuration of this shard on both paths; then the count, printed (``-s`` not needed).
    Each shard draws its own CONFIGS / SHARDS configurations from a fixed seed: the same on every run."""
    run = seed(shard)(settings(max_examples=CONFIGS // SHARDS, deadline=None, database=None,
                               suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])(
        given(case=hf_configs())(check_one)))
    for key in COUNTS:
        COUNTS[key] = 0
    run()
    with capsys.disabled():
        print(f"\n[differential vs transformers {'.'.join(map(str, ref.transformers_version()))}, shard {shard} of "
              f"{SHARDS}, ropelaw semantics {semantics_version()}] {COUNTS['configs']} configurations, "
              f"{COUNTS['checks']} "
              f"comparisons (2 paths x seq_len), {COUNTS['float32_noise']} differing only by float32 noise, "
              f"{COUNTS['rejected_by_transformers']} that transformers itself rejects, "
              f"{COUNTS['partial_ignored_by_model']} whose partial_rotary_factor the model ignores (lint path: RV019)")
    assert COUNTS["configs"] + COUNTS["rejected_by_transformers"] >= CONFIGS // SHARDS
    assert COUNTS["configs"] >= 0.9 * (CONFIGS // SHARDS)
