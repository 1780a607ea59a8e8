"""What a decoder layer applied, read from what the probe recorded (:mod:`.probes`): its span from the mask it
attended with, and its rotary from the queries and keys it handed to attention against those of the identity
re-run (the pair tables it received, the frequencies of its rotary module, the attention factor, the rotated
channels, a scale on the queries that survives the norms).

Needs torch (the probe's callers import it; the linter never does).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

@dataclass
class RopeObs:
    """The rotary one layer applies: pair frequencies (float32 values as Python floats, pairs
    with frequency 0 dropped), attention factor, rotated channels and how they pair."""

    inv_freq: tuple
    attention_factor: float
    channels: int  # channels the cos/sin cover (2 x pairs, zero-frequency pairs included)
    zero_pairs: int  # pairs with frequency exactly 0 (proportional RoPE): not rotated
    layout: str  # "half" (i, i + r/2) or "interleaved" (2i, 2i + 1)
    where: str  # "first" or "last" r channels of the head
    # True: no inv_freq buffer holds the frequencies (computed in forward): the slope of the angles
    # over the input's positions (float32 cos / sin: about 1e-5 relative for the slowest pairs)
    estimated: bool = False
    # a factor the layer multiplies its rotated queries by, the same for every head at a position (Ministral 3's
    # llama_4_scaling_beta: 1 + beta ln(1 + floor(p / original))): (at the first position, at the last); None: 1
    query_scale: tuple | None = None
    # estimated frequencies: the angles each rotating pair turned by, (positions, pairs) float64 as atan2 gives
    # them, and the first position (to compare with a model's frequencies where a slope is too coarse)
    angles: Any = None
    first_position: int = 0


@dataclass
class LayerObs:
    index: int
    rope: RopeObs | None  # None: the layer applies no rotary (NoPE)
    span: str  # "full", "window", "chunk", "bidirectional", "other", "cross" (keys from other states: images),
    # "extra" (keys appended to the tokens': DeepSeek-V4's compressed keys)
    size: int | None  # W (keys a query sees, itself included; "bidirectional": |q - k| < W) or C (chunk length);
    # "extra": (query, key) pairs
    problem: str | None = None  # why the layer could not be read (then rope/span are not meaningful)
    # per position, the mean norm of the queries its attention gets with the rotary replaced by the identity (a
    # NoPE layer: its queries): a factor applied to the queries whatever the rotary (Ministral 3's
    # llama_4_scaling_beta) shows as the ratio of two forwards' norms at different positions (same tokens)
    query_norm: tuple | None = None


def _table(t, length: int, offset: int = 0):
    """A cos / sin / complex rotary tensor as (length, channels), batch and section axes dropped
    (the probe's batch rows share their positions; text-only multimodal RoPE has equal sections); a table
    of every position up to the last (4.57.1's Phi-3.5-MoE: the layer indexes it) as its last ``length`` rows."""
    while t.dim() > 2:
        t = t[0]
    if offset and t.shape[0] == offset + length:
        t = t[offset:]
    if t.shape[0] != length:
        raise ValueError(f"rotary table of shape {tuple(t.shape)}: no axis of {length} positions first")
    return t


def span_of(mask, causal, length: int) -> tuple[str, int | None]:
    """(kind, size) of the keys each query may attend: "full" (causal, every earlier key), "window"
    (the last W keys, itself included), "chunk" (earlier keys of its chunk of C), "bidirectional" (every key, size
    None, or the keys within W - 1 positions either side, |q - k| < W, size W), "other";
    "extra" where the mask lets queries see keys past the input's (entries appended to the tokens' keys:
    DeepSeek-V4's compressed keys) and the tokens' part is none of the others."""
    import torch

    if mask is None:
        return ("full", None) if causal is not False else ("bidirectional", None)
    m = mask
    while m.dim() > 2:
        m = m[0]
    allowed = m if m.dtype == torch.bool else (m > torch.finfo(m.dtype).min / 2)
    allowed = allowed[-length:].cpu()
    extra = allowed.shape[1] > length and bool(allowed[:, length:].any())
    pairs = int(allowed.sum())  # an "extra" span's size: the (query, key) pairs it allows (what changes it shows)
    if allowed.shape[1] > length:  # a mask padded past the input (4.57.1 static shapes): extra keys unused
        allowed = allowed[:, :length] if not extra else allowed[:, -length:]
    kind = _token_span(allowed, length)
    return ("extra", pairs) if extra and kind[0] not in ("full", "window", "chunk") else kind


def _token_span(allowed, length: int) -> tuple[str, int | None]:
    """:func:`span_of` of a (length, length) boolean mask."""
    import torch

    i = torch.arange(length)
    causal_m = i[None, :] <= i[:, None]
    if bool((allowed & ~causal_m).any()):  # later keys too: every key, or a window both sides (|q - k| < W)
        if bool(allowed.all()):
            return "bidirectional", None
        dist = (i[:, None] - i[None, :]).abs()
        w = int(dist[allowed].max()) + 1
        return ("bidirectional", w) if bool((allowed == (dist < w)).all()) else ("other", None)
    counts = allowed.sum(-1)
    if bool((allowed == causal_m).all()):
        return "full", None
    w = int(counts.max())
    if bool((allowed == (causal_m & (i[:, None] - i[None, :] < w))).all()):
        return "window", w
    c = int(counts.max())
    if bool((allowed == (causal_m & ((i[:, None] // c) == (i[None, :] // c)))).all()):
        return "chunk", c
    return "other", None


def _rotate(q, cos, sin, layout: str, where: str):
    """``q`` (..., T, D) with its first / last r channels rotated by (T, r) cos / sin."""
    import torch

    r = cos.shape[-1]
    x = q[..., :r] if where == "first" else q[..., q.shape[-1] - r:]
    if layout == "half":
        x1, x2 = x[..., : r // 2], x[..., r // 2:]
        rot = torch.cat((-x2, x1), dim=-1)
    else:
        x1, x2 = x[..., 0::2], x[..., 1::2]
        rot = torch.stack((-x2, x1), dim=-1).flatten(-2)
    y = x * cos + rot * sin
    if where == "first":
        return torch.cat((y, q[..., r:]), dim=-1)
    return torch.cat((q[..., : q.shape[-1] - r], y), dim=-1)


def _pair_tables(received, length: int, offset: int = 0) -> list:
    """Per-pair (cos, sin) tables, float64 (T, pairs), that the received rotary can mean: a complex
    tensor (one entry per pair); a real table whose halves repeat (pairs = first half), whose even and
    odd channels repeat (pairs = even channels), or neither (one entry per pair, as gpt-oss builds it)."""
    import torch

    if torch.is_tensor(received) and received.is_complex():
        z = _table(received, length, offset).to(torch.complex128)
        return [(z.real, z.imag)]
    cos, sin = (_table(t, length, offset).double() for t in received)
    r = cos.shape[-1]
    out = []
    if r % 2 == 0 and torch.equal(cos[:, : r // 2], cos[:, r // 2:]) and torch.equal(sin[:, : r // 2], sin[:, r // 2:]):
        out.append((cos[:, : r // 2], sin[:, : r // 2]))
    if r % 2 == 0 and torch.equal(cos[:, 0::2], cos[:, 1::2]) and torch.equal(sin[:, 0::2], sin[:, 1::2]):
        out.append((cos[:, 0::2], sin[:, 0::2]))
    if not out:
        out.append((cos, sin))
    return out


def _channels(c, layout: str):
    """A per-pair table (T, pairs) spread over the channels of ``layout``."""
    import torch

    return torch.cat((c, c), -1) if layout == "half" else torch.repeat_interleave(c, 2, -1)


def _pair_angles(cos, sin):
    import torch

    return torch.atan2(sin, cos), torch.hypot(cos, sin)


def _inv_freq_candidates(module):
    """Every 1-D float tensor of ``module`` whose name says inv_freq (buffers and plain attributes)."""
    import torch

    seen, out = set(), []
    items = list(module.named_buffers()) + [(k, v) for k, v in vars(module).items() if torch.is_tensor(v)]
    for name, t in items:
        if "inv_freq" in name and torch.is_tensor(t) and t.dim() == 1 and t.is_floating_point() and id(t) not in seen:
            seen.add(id(t))
            out.append((name, t.detach().double()))
    return out


def read_layers(calls, state, n: int, length: int, layers) -> list:
    import torch

    out = []
    for i in range(n):
        mine = [c for c in calls if c["layer"] == i]
        rot = next((c for c in mine if not c["identity"]), None)
        plain = next((c for c in mine if c["identity"] and rot is not None and c["module"] is rot["module"]), None)
        if rot is None:
            out.append(LayerObs(i, None, "none", None, "the layer calls no attention (not an attention layer)"))
            continue
        span, size = span_of(rot["mask"], rot["causal"], length)
        if state.get("cross") and rot["k"].shape[-2] == state["cross"] != length:
            span, size = "cross", state["cross"]  # its keys are the image states the probe gave, not the tokens
        if plain is None:
            out.append(LayerObs(i, None, span, size, "no identity re-run of its attention was recorded"))
            continue
        q, qp = rot["q"].double(), plain["q"].double()
        norm = query_norms(qp, length)
        if q.shape != qp.shape:
            out.append(LayerObs(i, None, span, size, "queries change shape under the identity rotary"))
            continue
        if torch.equal(rot["q"], plain["q"]) and torch.equal(rot["k"], plain["k"]):
            # NoPE: it received a rotary and does not apply it, or it receives none and no
            # RotaryEmbedding module runs inside it (transformers builds every rotary in one)
            out.append(LayerObs(i, None, span, size, query_norm=norm))
            continue
        received = state["received"].get(i)
        if received is None:  # computed inside the layer
            inner = [v for v in state["outputs"].values() if v[2] == i]
            received = inner[0][1] if inner else None
        if received is None:
            out.append(LayerObs(i, None, span, size, "rotates its queries but no rotary output reached it"))
            continue
        found, why = None, "nothing it received is a rotary table"
        for cand in _rotary_candidates(received):
            try:
                found = read_rope(i, q, qp, cand, state, length, span, size)
                break
            except (ValueError, TypeError, RuntimeError, AttributeError, IndexError) as exc:
                why = str(exc)
        found = found or LayerObs(i, None, span, size, f"rotary not read: {why}")
        found.query_norm = norm
        out.append(found)
    return out


def query_norms(q, length: int) -> tuple:
    """Per position, the mean over batch rows and heads of the queries' norms (``q``: (B, H, T, D) or
    (B, T, H, D))."""
    n = q.norm(dim=-1)
    n = n if n.shape[-1] == length else n.transpose(-1, -2)
    return tuple(float(x) for x in n.reshape(-1, n.shape[-1]).mean(0))


def _rotary_candidates(x):
    """The rotary tables inside what a layer received: a (cos, sin) pair, a complex tensor, or the
    values of a dict / the items of a tuple of those."""
    import torch

    if torch.is_tensor(x):
        return [x] if x.is_complex() else []
    if isinstance(x, (tuple, list)) and len(x) == 2 and all(torch.is_tensor(t) and not t.is_complex() for t in x):
        return [x]
    items = list(x.values()) if isinstance(x, dict) else list(x) if isinstance(x, (tuple, list)) else []
    return [c for item in items for c in _rotary_candidates(item)]


def read_rope(i, q, qp, received, state, length, span, size) -> LayerObs:
    import torch

    tables = _pair_tables(received, length, int(state.get("offset") or 0))
    # q: (B, H, T, D) or (B, T, H, D): put the positions second to last
    if q.shape[-2] != length:
        q, qp = q.transpose(-2, -3), qp.transpose(-2, -3)
    scale = float(q.abs().max()) + 1.0
    fit = None
    for pc, ps in tables:
        if 2 * pc.shape[-1] > q.shape[-1]:
            continue
        for layout in ("half", "interleaved"):
            cos, sin = _channels(pc, layout).to(qp.dtype), _channels(ps, layout).to(qp.dtype)
            for where in ("first", "last"):
                pred = _rotate(qp, cos, sin, layout, where)
                err = float((pred - q).abs().max()) / scale
                if err >= 1e-4:  # an L2 norm after the rotary (Llama 4's qk_norm): compare directions
                    unit = lambda x: x / x.norm(dim=-1, keepdim=True).clamp_min(1e-30)  # noqa: E731
                    err = 1e-4 + float((unit(pred) - unit(q)).abs().max())
                    err = err if err < 2e-4 else 1.0
                if err < 2e-4 and (fit is None or err < fit[0]):
                    fit = (err, layout, where, pc, ps)
    if fit is None:
        raise ValueError("its queries are not the identity-run queries rotated by the cos/sin it received "
                         "(half or interleaved pairs, first or last channels)")
    _, layout, where, pc, ps = fit
    qscale = _query_scale(q, _rotate(qp, _channels(pc, layout).to(qp.dtype), _channels(ps, layout).to(qp.dtype),
                                     layout, where), float(_pair_angles(pc, ps)[1].median()))
    r = 2 * pc.shape[-1]
    angles, mag = _pair_angles(pc, ps)
    factor = float(mag.median())
    entry = state["outputs"].get(id(received)) or (state["outputs"].get(id(received[0]))
                                                    if isinstance(received, (tuple, list)) else None)
    modules = ([entry[0]] if entry is not None else []) + state["rotaries"]
    freq = None
    first = int(state.get("offset") or 0)
    for module in modules:  # the module that produced it first; else any rotary of the model
        best = None
        for _name, f in _inv_freq_candidates(module):
            if f.shape[0] != angles.shape[-1]:
                continue
            err = _angle_error(angles, f, first)
            if err < 1e-6 + 1e-6 * float(f.abs().max()) and (best is None or err < best[0]):
                best = (err, f)
        if best is not None:
            freq = best[1]
            break
    estimated = freq is None
    if freq is None:  # computed in forward, kept nowhere (Phi-3.5-MoE in 4.57.1): the slope of the angles
        import numpy as np

        a = np.unwrap(angles.numpy(), axis=0)  # (T, pairs): (offset + m) * f mod 2 pi, unwrapped along the positions
        m = np.arange(a.shape[0], dtype=float)[:, None]
        if state.get("offset"):  # a + 2 pi k = (offset + m) f: least squares with an intercept
            m, a = m - m.mean(), a - a.mean(0)
        freq = torch.from_numpy((m * a).sum(0) / (m * m).sum(0))
        freq = torch.where(freq.abs() < 1e-12, torch.zeros_like(freq), freq)
    zero = int((freq == 0).sum())
    kept = tuple(float(x) for x in freq if x != 0)
    table = angles[:, freq != 0].numpy() if estimated else None
    return LayerObs(i, RopeObs(kept, factor, r, zero, layout, where, estimated, qscale, table,
                               int(state.get("offset") or 0)), span, size)


def _angle_error(angles, f, first: int) -> float:
    """How far the angles a layer's pairs turned (positions, pairs; from ``first`` on) are from ``p f``: at the
    second position when the forward starts at 0 (the table's own f, to float32), else past float32's
    rounding of p f (2^-21 |p f|, the far positions of a position offset)."""
    import math

    import torch

    if not first:
        return float((angles[1] - f).abs().max())
    pos = (first + torch.arange(angles.shape[0], dtype=torch.float64))[:, None]
    pred = pos * f[None, :]
    diff = torch.remainder(angles - pred + math.pi, 2 * math.pi) - math.pi
    excess = diff.abs() - 2.0 ** -21 * pred.abs()
    return max(float(excess.max()), 0.0)


def _query_scale(q, pred, factor: float) -> tuple | None:
    """``(first, last)`` of the factor by which the layer's queries ``q`` exceed ``pred`` (the identity-run
    queries rotated by the cos/sin it received, of magnitude ``factor``), position by position (positions second
    to last), when every head and batch row shares it (a positional query scale); None when it is 1, when it is
    not shared (a norm after the rotary rescales each head on its own: Llama 4's qk_norm), or when it is
    1 / ``factor`` everywhere (a norm after the rotary takes the attention factor back out: HunYuan's
    query_layernorm)."""
    ratio = q.norm(dim=-1) / pred.norm(dim=-1).clamp_min(1e-30)  # (..., T)
    ratio = ratio.reshape(-1, ratio.shape[-1])  # (rows, T)
    lo, hi = ratio.min(0).values, ratio.max(0).values
    if float((hi / lo - 1).abs().max()) > 1e-5 or float((hi - 1).abs().max()) < 1e-6 \
            or float((hi * factor - 1).abs().max()) < 1e-4:
        return None
    return float(hi[0]), float(hi[-1])
