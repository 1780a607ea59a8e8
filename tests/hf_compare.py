"""ropelaw's layer groups against the layers a transformers forward showed (``ropelaw.lint.layers.probes``).

Used by the per-type differential (``tests/test_hf_layers.py``: tiny models of each type's defaults) and the
differential over real files (``tests/test_hf_files.py``: published config.json files shrunk in place).

For each layer the probe observed, the group of ``ropelaw lint --format json`` whose ``indices`` hold it must
say the same: attention or none (Mamba, convolution, linear attention), cross-attention (keys from the image
states the probe gives a model whose forward takes ``cross_attention_states``: Mllama), RoPE or NoPE, the span
(a window or chunk shorter than the forward's input is seen as such; a longer one as full attention; causal or
bidirectional, the group's ``bidirectional``: every key, or a window |q - k| < W both ways), the frequencies
(``apply_scheme`` of the group's spec at the forward's sequence length against the runtime's float32
``inv_freq``, :data:`RTOL`), the attention factor (:data:`ATOL_FACTOR`). A position-dependent query scale
(Ministral 3's ``llama_4_scaling_beta``) is not seen here: the probe's identity re-run carries it too. Llama 4's
(its NoPE layers, by cache position) is measured by :func:`cached_query_scales`.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

from ropelaw.schemes import apply_scheme
from ropelaw.spec import RopeSpec

# Relative agreement of ropelaw's float64 frequencies with the runtime's float32 inv_freq buffer.
# transformers computes base ** (arange / d) in float32: the rounding of the exponent x (<= 2^-24 x)
# and of the power give a relative error up to about (1 + x ln base) 2^-24, below 2^-19 (1.9e-6) for
# any base <= 1e12; YaRN / Llama 3 blends add a few float32 operations. 2^-16 (1.5e-5) is noise; a
# semantic difference (another base, factor, original length, scheme) is 1e-3 or more.
# A test that runs a real file (changed or not) through transformers' shrunk forward runs in CI's real-files step under
# both versions (.ci/run's real_files: ROPELAW_HF_FILES=1), beside the differential over every real file; README's
# suite skips it (a few CPU-seconds to a minute each: the suite's time is for the rest)
REAL_FILES_STEP = pytest.mark.skipif(os.environ.get("ROPELAW_HF_FILES") != "1",
                                     reason="a real file through transformers' forward: CI's real-files step "
                                            "(ROPELAW_HF_FILES=1, both versions)")
ACKNOWLEDGED = {"RV021", "RV022", "RV024", "RV025", "RV008"}  # findings that say "not modelled" / "refused"
RTOL = 2.0 ** -16
ATOL_FACTOR = 1e-6  # attention factor: sqrt(cos^2 + sin^2) of float32 values, relative
# a rotary that keeps no inv_freq (computes it in forward): its frequencies are read as the slope of the
# float32 angles over the 24 positions: 6e-8 rad over 23 positions is 3e-9 absolute, 3e-5 of the
# slowest pair of base 1e4 at d = 128; 1e-3 still tells any other base, factor or scheme apart
RTOL_ESTIMATED = 1e-3
# and, where the forward ran at far positions p (a slope is too coarse there), each angle p f against ropelaw's:
# float32 rounds the product p f (2^-24 relative) and cos / sin add a few ulps: 2^-21 |p f| + 1e-5 rad
ANGLE_RTOL, ANGLE_ATOL = 2.0 ** -21, 1e-5

COUNTS: dict = {"max_rel": 0.0, "variant_rel": 0.0, "estimated": 0,
                "spans_unobserved": 0}  # largest deviation where they agree / this run


def spec_of(group: dict) -> RopeSpec:
    """The RopeSpec of a group of ``ropelaw lint --format json``."""
    sp = group["spec"]
    return RopeSpec(d=sp["d"], train_len=sp["train_len"], base=sp["base"], pretrain_base=sp["pretrain_base"],
                    scheme=sp["scheme"], params=sp["params"], pretrained_with_scheme=sp["pretrained_with_scheme"])


def _span_differences(obs, g: dict, where: str, length: int) -> list[str]:
    both = bool(g.get("bidirectional"))
    if obs.span == "bidirectional":  # later keys too: every key (size None) or |q - k| < W (size W)
        if not both:
            return [f"{where}: bidirectional attention ({'every key' if obs.size is None else f'|q - k| < {obs.size}'}"
                    f"), ropelaw says causal"]
        w = g.get("window")
        if obs.size is None:
            return [] if w is None or w >= length else [f"{where}: every key both ways, ropelaw says window {w}"]
        return [] if w == obs.size else [f"{where}: |q - k| < {obs.size} both ways, ropelaw says window {w}"]
    if both and obs.span in ("window", "chunk", "full"):
        return [f"{where}: causal {obs.span} attention, ropelaw says bidirectional"]
    if obs.span in ("window", "chunk"):
        if g.get(obs.span) != obs.size:
            return [f"{where}: {obs.span} of {obs.size} keys, ropelaw says window {g.get('window')}, chunk "
                    f"{g.get('chunk')}"]
        return []
    if obs.span == "full":
        return [f"{where}: full attention, ropelaw says {k} {g[k]}" for k in ("window", "chunk")
                if g.get(k) is not None and g[k] < length]
    if obs.span == "unobserved":  # attention by the layer's own matmul (GPT-J): rotary read, span not seen
        COUNTS["spans_unobserved"] += 1
        return []
    return [f"{where}: attention span {obs.span!r} (not full, window or chunk)"]


def _rotary_differences(rope, g: dict, where: str, seq_len: int) -> list[str]:
    spec = spec_of(g)
    try:
        ours = apply_scheme(spec, seq_len=seq_len)
    except ValueError as exc:
        return [f"{where}: applies RoPE, ropelaw's spec does not compute ({exc})"]
    mine, theirs = np.asarray(ours.inv_freq, dtype=float), np.asarray(rope.inv_freq, dtype=float)
    if mine.shape != theirs.shape:
        return [f"{where}: {theirs.size} rotating pairs, ropelaw {mine.size} (d={spec.d})"]
    out = []
    rel = np.abs(mine / theirs - 1)
    if rope.estimated:  # frequencies computed in forward: read from the angles
        COUNTS["estimated"] += 1
    if rope.estimated and rope.first_position:
        pos = rope.first_position + np.arange(rope.angles.shape[0], dtype=float)[:, None]
        pred = pos * mine[None, :]
        err = np.abs(np.angle(np.exp(1j * (rope.angles - pred))))
        bad = err > ANGLE_RTOL * np.abs(pred) + ANGLE_ATOL
        if bad.any():
            t, j = np.argwhere(bad)[0]
            out.append(f"{where}: pair {j} turns {rope.angles[t, j]:.6g} rad at position {int(pos[t, 0]):,}, ropelaw "
                       f"{np.angle(np.exp(1j * pred[t, j])):.6g} (frequency {mine[j]:.9g}; {spec.scheme}, base "
                       f"{spec.base:g})")
        rel = np.zeros_like(rel)
    elif rel.max() > (RTOL_ESTIMATED if rope.estimated else RTOL):
        j = int(rel.argmax())
        out.append(f"{where}: pair {j} frequency {theirs[j]:.9g}, ropelaw {mine[j]:.9g} ({spec.scheme}, base "
                   f"{spec.base:g})")
    if abs(ours.attention_factor / rope.attention_factor - 1) > ATOL_FACTOR:
        out.append(f"{where}: attention factor {rope.attention_factor:.7g}, ropelaw {ours.attention_factor:.7g}")
    if rope.query_scale is not None:  # observed, not compared: the identity re-run carries a scale applied to
        # the queries whatever the rotary (Ministral 3's), and a norm after the rotary rescales them (HunYuan)
        COUNTS["query_scales"] = COUNTS.get("query_scales", 0) + 1
    COUNTS["variant_rel"] = max(COUNTS["variant_rel"], float(rel.max()))
    return out


def compare(obs_layers: list, result: dict, *, seq_len: int, length: int, span: bool = True) -> list[str]:
    """The differences between the runtime's layers and ropelaw's groups (empty: they agree). ``seq_len``:
    the sequence length the forward's rotary ran at (its last position + 1); ``length``: its tokens;
    ``span``: compare the keys each layer attends (False for a forward at far positions, whose masks do
    not fit them)."""
    groups = result["layers"]
    out = []
    for obs in obs_layers:
        g = next((g for g in groups if g.get("indices") is not None and obs.index in g["indices"]), None)
        if g is None and len(groups) == 1 and groups[0].get("indices") is None:
            g = groups[0]  # one group for every layer (a type the per-layer table does not cover)
        if g is None:
            out.append(f"layer {obs.index}: in no group of ropelaw's ({[x['layers'] for x in groups]})")
            continue
        where = f"layer {obs.index} ({g['layers']})"
        if obs.span == "cross" or g.get("cross_attention"):  # keys from the image states the probe gave
            if obs.span != "cross" or not g.get("cross_attention"):
                out.append(f"{where}: " + ("cross-attention (keys from other states), ropelaw says it attends its "
                                           "tokens" if obs.span == "cross" else
                                           f"attends its tokens ({obs.span}), ropelaw says cross-attention"))
            elif obs.rope is not None:
                out.append(f"{where}: cross-attention that applies RoPE, ropelaw says none")
            continue
        if obs.span == "none":
            if g.get("attention", True):
                out.append(f"{where}: runs no attention, ropelaw says it attends")
            continue
        if not g.get("attention", True):
            out.append(f"{where}: attends, ropelaw says it has no attention")
            continue
        if span:
            out.extend(_span_differences(obs, g, where, length))
        if obs.rope is None:
            if g.get("rope", True):
                out.append(f"{where}: applies no RoPE, ropelaw says it does")
            continue
        if not g.get("rope", True):
            out.append(f"{where}: applies RoPE, ropelaw says NoPE")
        elif g["spec"] is None:
            out.append(f"{where}: applies RoPE, ropelaw has no spec ({g.get('error')})")
        else:
            out.extend(_rotary_differences(obs.rope, g, where, seq_len))
    return out


def cached_query_scales(mapping, offset: int, length: int = 24) -> dict:
    """Per attention layer, the factor transformers' forward multiplies its queries by at cache positions
    ``offset`` .. ``offset + length - 1``: Llama 4's attention temperature tuning, which follows the cache position
    (4.57.1: ``cache_position``; 5.23.0: ``past_key_values.get_seq_length()`` + arange), not ``position_ids``, so
    the probe's far forward (``position_ids`` only, no cache) does not reach it.

    The file is loaded as users load it and shrunk in place (``shrunk``), built with eager attention, and run on
    ``length`` tokens after a real ``DynamicCache`` already holding ``offset`` zero keys and values per layer. A
    forward pre-hook takes each attention module's hidden states, a wrapper of the modeling module's
    ``eager_attention_forward`` the queries attention gets; the factor is the norm of those queries over the
    norm of ``q_proj(hidden states)`` (through the module's ``qk_norm`` where it has one: an L2 norm, blind to the
    rotary), per position, mean over batch rows and heads. ``{layer index: (factors, max relative spread over
    rows and heads)}``; a layer whose queries are not scaled gives 1 at every position."""
    import importlib

    import torch
    from transformers import DynamicCache

    from ropelaw.lint.layers import probes, shrunk

    config = shrunk.load_as_users_do(dict(mapping))
    tc = shrunk.text_config(config)
    shrunk.shrink_in_place(tc)
    cls = shrunk.model_class(tc, config)
    tc._attn_implementation = "eager"
    torch.manual_seed(0)
    with shrunk.quiet():
        model = cls(tc).eval()
    module = importlib.import_module(type(model).__module__)
    attn = {m: i for i, m in enumerate(m for m in model.modules() if hasattr(m, "q_proj") and hasattr(m, "layer_idx"))}
    seen: dict = {}
    hidden: dict = {}

    def pre(m, args, kwargs):
        hidden[m] = kwargs.get("hidden_states", args[0] if args else None)

    original = module.eager_attention_forward

    def eager(m, query, *args, **kwargs):
        seen[m] = query
        return original(m, query, *args, **kwargs)

    handles = [m.register_forward_pre_hook(pre, with_kwargs=True) for m in attn]
    module.eager_attention_forward = eager
    try:
        cache = DynamicCache()
        kv, hd = tc.num_key_value_heads, tc.head_dim
        for i in range(tc.num_hidden_layers):
            cache.update(torch.zeros(2, kv, offset, hd), torch.zeros(2, kv, offset, hd), i)
        with torch.no_grad(), shrunk.quiet():
            model(input_ids=probes._input_ids(length), past_key_values=cache, use_cache=True)
            out = {}
            for m, i in attn.items():
                h = hidden[m]
                q0 = m.q_proj(h).view(*h.shape[:-1], -1, m.head_dim)  # (B, T, H, D)
                if hasattr(m, "qk_norm"):
                    q0 = m.qk_norm(q0)
                q = seen[m].transpose(1, 2)  # (B, H, T, D) -> (B, T, H, D)
                n0 = q0.norm(dim=-1)
                ratio = torch.where(n0 > 0, q.norm(dim=-1) / n0.clamp_min(1e-30), float("nan"))  # a pad token: 0
                ratio = ratio.transpose(1, 2).reshape(-1, length).double()  # (rows, T)
                mean = ratio.nanmean(0)
                spread = ((ratio - mean).abs() / mean).nan_to_num(0.0)
                out[i] = (tuple(float(x) for x in mean), float(spread.max()))
    finally:
        module.eager_attention_forward = original
        for h in handles:
            h.remove()
    return out
