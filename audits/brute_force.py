"""Brute-force counts for the issue-21 targets: numpy + ml_dtypes, independent of ropelaw's auditor.

For each target, the dtype flow of its own rotary code (read in the file the catalog pins) is
written out in numpy: which values are float32, which are rounded to bf16 / fp16 and where, in
the scenario that shows the target's verdict. Rounding to bf16 / fp16 goes through float32 first,
as torch computes a low-precision op in float32 and rounds its result; a product of two bf16
values is exact in float64, so rounding it once gives torch's bf16 product. Torch's rules that
matter here, each checked against torch in ``tests/test_audits_brute_force.py``:

- an int64 tensor times a bf16 one (``torch.outer``, ``einsum``) is computed in bf16: the positions
  are rounded to bf16 first (round to nearest even), then the product;
- ``int64 / int`` and ``arange(n) / k`` give the default dtype (bf16 under ``bf16-true``);
- ``python_scalar ** bf16_tensor`` converts the scalar to bf16 first (10,000 -> 9,984);
- CUDA autocast (``aten/src/ATen/autocast_mode.h``, lower-precision list) runs ``einsum`` / ``matmul``
  on bf16 copies of its float32 inputs; ``outer`` and ``mul`` are not on the list.

Counts, for positions p = 0 .. L-1 and the produced per-pair (cos, sin) (those the code returns,
in its output dtype), with w the frequencies the code multiplies by (the stored values: a power-of-two
position times a stored frequency is exact, so these are the frequencies an auditor recovers):

- ``distinct``: distinct (cos, sin) rows;
- ``exact``: ||wrap(atan2(sin, cos) - p w)||_2 < ||wrap(w)||_2 / 2, the produced encoding is nearer
  the ideal one of p than half the gap to its neighbour's (the auditor's definition, written out);
- ``nearest_own`` (L^2 x pairs <= 6e7): the ideal encoding nearest the produced one (over q = 0 .. L-1, by
  the same wrapped distance) is p's own.

Pure numpy: importable without torch (``audits/run.py`` stores the counts in each report).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import ml_dtypes
import numpy as np

BF16 = ml_dtypes.bfloat16
LOW = {"bf16": BF16, "fp16": np.float16}


# --------------------------------------------------------------------------- torch's rounding


def f32(x) -> np.ndarray:
    """Round to float32 (float64 result, exact)."""
    return np.asarray(x, np.float64).astype(np.float32).astype(np.float64)


def low(x, dtype: str) -> np.ndarray:
    """Round to bf16 / fp16 through float32, as torch rounds an op computed in float32."""
    return np.asarray(x, np.float64).astype(np.float32).astype(LOW[dtype]).astype(np.float64)


def theta32(d: int, base: float) -> np.ndarray:
    """``1.0 / (base ** (torch.arange(0, d, 2).float() / d))`` in float32 (within an ulp of torch's pow)."""
    x = f32(np.arange(0, d, 2) / d)
    return f32(1.0 / f32(base ** x))


def theta_default_low(d: int, base: float, dtype: str) -> np.ndarray:
    """The same under ``set_default_dtype(dtype)``: ``arange(0, d, 2) / d`` in dtype, the scalar base
    converted to dtype, ``pow`` and the reciprocal each rounded to dtype."""
    x = low(np.arange(0, d, 2) / d, dtype)
    return low(1.0 / low(float(low(base, dtype)) ** x, dtype), dtype)


# --------------------------------------------------------------------------- counts


def _wrap(x: np.ndarray) -> np.ndarray:
    return x - 2 * math.pi * np.round(x / (2 * math.pi))


def counts(angles: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]], w: np.ndarray, length: int,
           chunk: int = 16384, offset: np.ndarray | None = None) -> dict[str, int]:
    """``angles(p) -> (cos, sin)`` per pair for positions p (float64 arrays of values the code
    produces); w the stored frequencies. Returns exact / distinct (/ nearest_own for short L).
    ``offset``: the ideal angles at p = 0 where the code's coordinates do not start at 0 (coordinates
    centred in [-1, 1): ideal angle offset + p w, the gap to a neighbour still ||wrap(w)||)."""
    w = np.asarray(w, np.float64)
    off = np.zeros_like(w) if offset is None else np.asarray(offset, np.float64)
    keep = w != 0  # a pair at frequency 0 (half-truncated RoPE) never moves: no error, no gap
    half_gap = np.linalg.norm(_wrap(w[keep])) / 2
    exact, rows = 0, []
    phis = []
    for a in range(0, length, chunk):
        p = np.arange(a, min(length, a + chunk), dtype=np.float64)
        c, s = angles(p)
        rows.append(np.ascontiguousarray(np.concatenate([c, s], axis=1).astype(np.float32)).view(
            np.dtype((np.void, 8 * c.shape[1]))).ravel())
        phi = np.arctan2(s, c)[:, keep]
        err = _wrap(phi - off[keep][None, :] - p[:, None] * w[keep][None, :])
        exact += int((np.linalg.norm(err, axis=1) < half_gap).sum())
        if length * length * int(keep.sum()) <= 6e7:  # nearest-neighbour search: L^2 k distances
            phis.append(phi)
    out = {"exact": exact, "distinct": int(np.unique(np.concatenate(rows)).size)}
    if phis:
        phi = np.concatenate(phis)  # (L, k)
        q = np.arange(length, dtype=np.float64)
        nearest = 0
        for a in range(0, length, 256):
            d = _wrap(phi[a:a + 256, None, :] - off[keep][None, None, :]
                      - q[None, :, None] * w[keep][None, None, :])  # (n, L, k)
            nearest += int((np.argmin((d * d).sum(axis=2), axis=1) == np.arange(a, min(length, a + 256))).sum())
        out["nearest_own"] = nearest
    return out


def _float32_path(theta: np.ndarray, out_dtype: str | None = None):
    """Positions exact (int64 or float32 below 2^24), angle product in float32, cos/sin in float32,
    optionally stored in ``out_dtype``: the clean path of most targets."""

    def angles(p):
        a = f32(p[:, None] * theta[None, :])
        c, s = f32(np.cos(a)), f32(np.sin(a))
        return (c, s) if out_dtype is None else (low(c, out_dtype), low(s, out_dtype))

    return angles


def _low_positions_path(theta_low: np.ndarray, dtype: str, out_dtype: str | None):
    """Positions rounded to ``dtype``, the product of two ``dtype`` values rounded to ``dtype``,
    cos/sin in float32 of that angle, stored in ``out_dtype`` (None: float32)."""

    def angles(p):
        a = low(low(p, dtype)[:, None] * theta_low[None, :], dtype)
        c, s = f32(np.cos(a)), f32(np.sin(a))
        return (c, s) if out_dtype is None else (low(c, out_dtype), low(s, out_dtype))

    return angles


# --------------------------------------------------------------------------- targets


def modded_2024_10_autocast(dtype: str, length: int) -> dict[str, int]:
    """modded-nanogpt 2024-10-14 under CUDA autocast: ``inv_freq`` float32 (``.float()``), positions
    ``arange(T).type_as(inv_freq)`` float32, ``torch.outer`` (not autocast) float32, cos/sin float32."""
    th = theta32(128, 10000.0)
    return counts(_float32_path(th), th, length)


def modded_2024_12_cast(dtype: str, length: int) -> dict[str, int]:
    """modded-nanogpt 2024-12-04 after ``model.bfloat16()``: the ``inv_freq`` buffer
    ``(1 / base) ** (arange(0, dim, 2) / dim)`` (float32) rounded to bf16, ``torch.outer(int64 t,
    bf16 inv_freq)`` in bf16 (positions rounded), ``freqs.cos()`` bf16, rotation output bf16."""
    th = low(f32((1e-4) ** f32(np.arange(0, 128, 2) / 128)), dtype)
    return counts(_low_positions_path(th, dtype, dtype), th, length)


def modded_2026_08(dtype: str, length: int) -> dict[str, int]:
    """modded-nanogpt 2026-08-01 ``Yarn``: ``(1/1024) ** linspace(0, 1, 32)`` float32 (plus 32 pairs at
    frequency 0), float32 positions and angles, cos/sin stored in bf16 (in every scenario)."""
    af = f32(f32(1 / 1024) ** f32(np.linspace(0, 1, 32)))
    th = np.concatenate([af, np.zeros(32)])
    return counts(_float32_path(th, "bf16"), th, length)


def einsum_autocast_cuda(dtype: str, length: int) -> dict[str, int]:
    """ESM / fairseq / xformers under CUDA AMP: ``einsum("i,j->ij", t, inv_freq)`` with float32 t and
    inv_freq (d = 64, base 10,000) runs on their ``dtype`` copies, the product is rounded to ``dtype``,
    ``emb.cos()`` of a ``dtype`` tensor is ``dtype``."""
    th = low(theta32(64, 10000.0), dtype)
    return counts(_low_positions_path(th, dtype, dtype), th, length)


def einsum_cast(dtype: str, length: int) -> dict[str, int]:
    """ESM / fairseq after a cast: the ``inv_freq`` buffer is ``dtype``, ``arange(n).type_as(inv_freq)``
    rounds the positions to it, ``einsum`` of two ``dtype`` tensors gives the rounded product, cos / sin
    in ``dtype``: the same flow as :func:`einsum_autocast_cuda` reached another way."""
    th = low(theta32(64, 10000.0), dtype)
    return counts(_low_positions_path(th, dtype, dtype), th, length)


def xformers_cast(dtype: str, length: int) -> dict[str, int]:
    """xformers with ``dtype`` queries (after a cast, or a ``dtype`` model): ``t`` float32 (exact),
    ``inv_freq.to(x.dtype)`` rounded to ``dtype``, ``einsum`` of float32 and ``dtype`` promoted to
    float32, the tables ``.to(x.dtype)``: frequencies rounded, positions exact."""
    th = low(theta32(64, 10000.0), dtype)
    return counts(_float32_path(th, dtype), th, length)


def neox_te_bf16(dtype: str, length: int) -> dict[str, int]:
    """GPT-NeoX ``get_emb()``: the float32 angles ``einsum(t, inv_freq)`` (d = 24, base 10,000)
    ``.to(precision)``; TransformerEngine takes cos/sin of the rounded angles. The auditor reads
    an angles output in float64, as here. Frequencies recovered: the rounded stored ones."""
    th = theta32(24, 10000.0)

    def angles(p):
        a = low(f32(p[:, None] * th[None, :]), dtype)
        return f32(np.cos(a)), f32(np.sin(a))

    return counts(angles, low(th, dtype), length)


def neox_forward_bf16(dtype: str, length: int) -> dict[str, int]:
    """GPT-NeoX ``forward``: cos/sin of float32 angles stored ``.to(precision)``."""
    th = theta32(24, 10000.0)
    return counts(_float32_path(th, dtype), th, length)


def lit_llama_default(dtype: str, length: int) -> dict[str, int]:
    """lit-llama under ``bf16-true``: theta from ``arange(0, 128, 2, dtype=int64) / 128`` in the default
    dtype, ``torch.outer(int64 seq_idx, theta)`` in it, then ``.float()``: float32 cos/sin (the
    cache is halved only for a float16 / bf16 / int8 ``dtype`` argument, and it is int64)."""
    th = theta_default_low(128, 10000.0, dtype)
    return counts(_low_positions_path(th, dtype, None), th, length)


def tinyllama_default(dtype: str, length: int) -> dict[str, int]:
    """TinyLlama under ``bf16-true``: theta (n_elem 64) and ``arange(seq_len) / condense_ratio`` in the
    default dtype, their outer product in it, cos/sin bf16."""
    th = theta_default_low(64, 10000.0, dtype)
    return counts(_low_positions_path(th, dtype, "bf16"), th, length)


def gpt_fast(dtype: str, length: int) -> dict[str, int]:
    """gpt-fast: float32 frequencies, int64 positions, float32 polar, the stacked cache ``.to(bf16)``."""
    th = theta32(128, 10000.0)
    return counts(_float32_path(th, "bf16"), th, length)


def llama_complex(dtype: str, length: int) -> dict[str, int]:
    """Llama / llama-models: float32 frequencies (``.float()``), positions int64 or float32, complex64."""
    th = theta32(128, 10000.0)
    return counts(_float32_path(th), th, length)


def llm_c(dtype: str, length: int) -> dict[str, int]:
    """llm.c ``train_llama3.py``: theta 500,000, Llama 3.1 scaling (factor 8, low / high frequency
    factors 1 / 4, original 8,192 positions; ``apply_scaling``), float32 positions and product."""
    th = theta32(128, 500000.0)
    low_wl, high_wl = 8192 / 1.0, 8192 / 4.0
    new = []
    for f in th:
        wl = 2 * math.pi / f
        if wl < high_wl:
            new.append(f)
        elif wl > low_wl:
            new.append(f / 8.0)
        else:
            smooth = (8192 / wl - 1.0) / (4.0 - 1.0)
            new.append((1 - smooth) * f / 8.0 + smooth * f)
    th = f32(new)
    return counts(_float32_path(th), th, length)


def mistral(dtype: str, length: int) -> dict[str, int]:
    """mistral-inference with theta 1e6 (``--base``): float32 frequencies, int64 positions, complex64."""
    th = theta32(128, 1e6)
    return counts(_float32_path(th), th, length)


def deepseek_v3(dtype: str, length: int) -> dict[str, int]:
    """DeepSeek-V3 ``precompute_freqs_cis``: rope head dim 64, base 10,000, YaRN factor 40 over 4,096
    original positions (beta_fast 32, beta_slow 1): ``freqs / factor * (1 - smooth) + freqs * smooth``
    in float32, ``torch.outer(int64 t, freqs)`` float32, complex64."""
    dim, base, factor, orig = 64, 10000.0, 40.0, 4096
    th = f32(1.0 / f32(base ** f32(np.arange(0, dim, 2) / dim)))

    def corr(rot):
        return dim * math.log(orig / (rot * 2 * math.pi)) / (2 * math.log(base))

    lo, hi = max(math.floor(corr(32)), 0), min(math.ceil(corr(1)), dim - 1)
    hi = hi + 0.001 if lo == hi else hi
    ramp = np.clip(f32((np.arange(dim // 2) - lo) / (hi - lo)), 0, 1)
    smooth = f32(1 - ramp)
    th = f32(f32(f32(th / factor) * f32(1 - smooth)) + f32(th * smooth))
    return counts(_float32_path(th), th, length)


def nanochat(dtype: str, length: int) -> dict[str, int]:
    """nanochat: base 100,000, float32 positions and product, cos/sin stored in bf16 (COMPUTE_DTYPE)."""
    th = theta32(128, 100000.0)
    return counts(_float32_path(th, "bf16"), th, length)


def olmo(dtype: str, length: int) -> dict[str, int]:
    """OLMo: float32 with autocast disabled; the rotation returns ``.type_as(q)`` (float32 under AMP)."""
    th = theta32(128, 10000.0)
    return counts(_float32_path(th), th, length)


def opennmt(dtype: str, length: int) -> dict[str, int]:
    """OpenNMT-py ``rotaryembeddings``: int64 positions times float32 frequencies, complex rope table."""
    th = theta32(128, 10000.0)
    return counts(_float32_path(th), th, length)


def gptj(dtype: str, length: int) -> dict[str, int]:
    """GPT-J ``fixed_pos_embedding``: numpy float64 throughout, float32 when JAX takes it (d = 64)."""
    th = 1.0 / (10000 ** (np.arange(0, 64, 2) / 64))

    def angles(p):
        a = p[:, None] * th[None, :]
        return f32(np.cos(a)), f32(np.sin(a))

    return counts(angles, th, length)


# --------------------------------------------------------------------------- issue 33's corpus (audits/corpus.py)


def xpos_cast(dtype: str, length: int, scale_base: float) -> dict[str, int]:
    """An XPos module of head dim 64 after a cast (torchscale 0.3.0 ``XPOS``, NeMo 1.23 ``XPOSPositionEmbedding``,
    the same code): ``fixed_pos_embedding(scale)`` computes float32 frequencies ``1 / 10000 ** (arange(0, 32) /
    32)`` and float32 positions on every call, their product ``.to(x)`` (the ``scale`` tensor, in the cast
    dtype): the angles are rounded; sin / cos in that dtype; both multiplied by the XPos scale
    ``scale_buf ** (p_c / scale_base)``: the buffer cast, the centred positions ``torch.arange(min_pos, max_pos)
    .to(self.scale)`` rounded to its dtype (bf16 keeps integers exact only up to 256 in magnitude: 257 -> 256; fp16
    up to 2,048), divided by a power of two (exact), the power rounded; ``t * scale`` rounded, before the rotation
    reads them back. w = the float32 frequencies it multiplies by. The rounded p_c changes the magnitudes only,
    never the angles (the exact count), but neighbours then share a scale, and a few rows coincide: 2,042
    (torchscale) and 2,044 (NeMo) distinct of 2,048 in bf16, as the runtime audit measures."""
    th = f32(1.0 / f32(10000.0 ** f32(np.arange(0, 32) / 32)))
    sbuf = low(f32((np.arange(0, 64, 2) + 0.4 * 64) / (1.4 * 64)), dtype)  # (32,)

    def angles(p):
        a = low(f32(p[:, None] * th[None, :]), dtype)
        # min_pos = -(L // 2): positions -L/2 .. L/2 - 1, `.to(self.scale)`: rounded to the cast dtype
        pc = low(p - length // 2, dtype)
        scale = low(sbuf[None, :] ** (pc[:, None] / scale_base), dtype)
        c, s = low(np.cos(a), dtype), low(np.sin(a), dtype)
        return low(c * scale, dtype), low(s * scale, dtype)

    return counts(angles, th, length)


def torchscale_xpos_cast(dtype: str, length: int) -> dict[str, int]:
    """torchscale 0.3.0 ``XPOS(64)`` (``scale_base`` 512) after a cast: :func:`xpos_cast`."""
    return xpos_cast(dtype, length, 512.0)


def nemo_xpos_cast(dtype: str, length: int) -> dict[str, int]:
    """NeMo 1.23 ``XPOSPositionEmbedding(64)`` (``scale_base`` 2048, its default) after a cast (NeMo's
    ``megatron_amp_O2`` wraps the model in ``Float16Module``, which casts it): :func:`xpos_cast`."""
    return xpos_cast(dtype, length, 2048.0)


def torchscale_retnet_cast(dtype: str, length: int) -> dict[str, int]:
    """torchscale 0.3.0 ``RetNetRelPos`` (head dim 256: 128 frequencies) after a cast: the ``angle`` buffer
    ``1 / 10000 ** linspace(0, 1, 128)`` rounded, positions ``arange(slen).to(self.decay)`` rounded,
    ``index[:, None] * angle[None, :]`` in the cast dtype, sin / cos in it."""
    th = low(f32(1.0 / f32(10000.0 ** f32(np.linspace(0, 1, 128)))), dtype)
    return counts(_low_positions_path(th, dtype, dtype), th, length)


def einsum_cast_d128(dtype: str, length: int) -> dict[str, int]:
    """:func:`einsum_cast` at head dim 128: NeMo 1.23's ``RotaryEmbedding`` after ``Float16Module`` casts the
    model (``seq.type_as(self.inv_freq)``, ``einsum`` of two bf16 tensors); FlagAI's Aquila2 (transformers 4.3x
    copy) after a cast, when the cache is rebuilt past ``max_position_embeddings``."""
    th = low(theta32(128, 10000.0), dtype)
    return counts(_low_positions_path(th, dtype, dtype), th, length)


def vit5_axial_cast(dtype: str, length: int) -> dict[str, int]:
    """vit-pytorch 1.26.11 ``vit_5.AxialRotaryEmbedding`` (dim_head 64: ``patch_inv_freq`` from half_dim 32,
    base 100,000) with ``dtype`` queries (a cast model): ``arange(n, dtype=x.dtype)`` (exact below 257), the
    frequencies ``.to(dtype)``, the einsum of two ``dtype`` tensors rounded, sin / cos in ``dtype``; one axis
    of ``length`` patches."""
    th = low(theta32(32, 100000.0), dtype)
    return counts(_low_positions_path(th, dtype, dtype), th, length)


def cosmos_axis_cast(dtype: str, length: int) -> dict[str, int]:
    """cosmos-predict2 1.0.9 ``VideoRopePosition3DEmb`` (head dim 128: the height axis has dim_h 42, 21
    frequencies, theta 10,000 with NTK factor 1) after ``net.to(bf16)``: the ``seq`` buffer (positions, exact
    below 257) and the ``dim_spatial_range`` buffer (``arange(0, 42, 2) / 42``) are rounded; ``theta **
    range`` and ``1.0 / ...`` are computed in ``dtype``; ``torch.outer`` of two ``dtype`` tensors rounds the
    angle; cos / sin of it in float32 (read as the auditor reads an angles output)."""
    rng = low(f32(np.arange(0, 42, 2) / 42), dtype)
    w = low(1.0 / low(10000.0 ** rng, dtype), dtype)

    def angles(p):
        a = low(low(p, dtype)[:, None] * w[None, :], dtype)
        return f32(np.cos(a)), f32(np.sin(a))

    return counts(angles, w, length)


def recurrentgemma_default(dtype: str, length: int) -> dict[str, int]:
    """recurrentgemma 1.0.1 torch ``_apply_rope`` (rotary on 128 of head dim 256) under a ``dtype`` default
    dtype: ``2 * arange(64) / 128`` and ``10_000 ** ...`` and its reciprocal in the default dtype, int64
    ``segment_pos`` times them rounded to it, sin / cos ``.type_as(inputs)``."""
    th = theta_default_low(128, 10000.0, dtype)
    return counts(_low_positions_path(th, dtype, dtype), th, length)


def _torch_linspace32(start: float, end: float, steps: int) -> np.ndarray:
    """``torch.linspace(start, end, steps)`` in float32 as torch's CUDA kernel computes it
    (``aten/src/ATen/native/cuda/RangeFactories.cu``, ``linspace_cuda_out``): step = (end - start) / (steps - 1)
    in float32, the first half ``start + step * i``, the second ``end - step * (steps - 1 - i)``, each op in
    float32. Torch 2.13's CPU kernel gives some values an ulp apart (27 of ``linspace(0, 1, 341)``'s here); no
    count of this module changes."""
    start32, end32 = float(f32(start)), float(f32(end))
    step = float(f32((end32 - start32) / (steps - 1)))
    i = np.arange(steps, dtype=np.float64)
    head = f32(start32 + f32(step * i))
    tail = f32(end32 - f32(step * (steps - 1 - i)))
    return np.where(i < steps // 2, head, tail)


def eva02_cast(dtype: str, length: int) -> dict[str, int]:
    """mmpretrain 1.2.0 ``RotaryEmbeddingFast`` of EVA-02 (head dim 64: half_dim 32, 16 frequencies
    ``1 / 10000 ** (arange(0, 32, 2).float() / 32)``, float32) on a ``length`` x ``length`` patch grid, after
    a cast: the ``freqs_cos`` / ``freqs_sin`` buffers are built at construction in float32 from the coordinates
    ``arange(h) / h * half_dim`` (float32) and ``th[:, None] @ frequency[None, :]`` (float32), then rounded to
    ``dtype`` by the cast. One axis: patch index p, coordinate p * 32 / length (exact for the 16 and 32 grids
    of EVA-02's 224 and 448 models); w = the per-patch step 32 / length x frequency."""
    freq = f32(1.0 / f32(10000.0 ** f32(np.arange(0, 32, 2) / 32)))
    w = f32(32 / length * freq)

    def angles(p):
        t = f32(f32(p / length) * 32)
        a = f32(t[:, None] * freq[None, :])
        return low(np.cos(a), dtype), low(np.sin(a), dtype)

    return counts(angles, w, length)


def _golden_gate_freqs(heads: int, dim_head: int, dim_pos: int) -> np.ndarray:
    """vit-pytorch 1.26.11 ``GoldenGateRoPENd`` frequencies (h, f, p) in float32, as its ``__init__`` builds
    them (rope_min_freq 1, rope_max_freq 10,000, no zero frequencies): ``make_directions`` in float64
    (golden-ratio generalisation, ``erfinv``, l2-normalised), ``.float()``, times ``omega = 10000.0 **
    linspace(0, 1, f)`` in float32."""
    from scipy.special import erfinv  # float64, as torch.erfinv on a float64 tensor (to the last ulp or so)

    n_freqs = dim_head // 2
    x = 2.0
    for _ in range(10):
        x = (1 + x) ** (1.0 / (dim_pos + 1.0))
    alpha = (1.0 / x) ** np.arange(1, dim_pos + 1, dtype=np.float64)
    i = np.arange(1, heads * n_freqs + 1, dtype=np.float64)[:, None]
    z = np.fmod(i * alpha, 1.0)
    d = erfinv(2.0 * z - 1.0)
    d = d / np.maximum(np.linalg.norm(d, axis=1, keepdims=True), 1e-12)
    d = f32(d).reshape(heads, n_freqs, dim_pos)
    omega = f32(10000.0 ** _torch_linspace32(0.0, 1.0, n_freqs))
    return f32(d * omega[None, :, None])


def vit_nd_cast(dtype: str, length: int) -> dict[str, int]:
    """vit-pytorch 1.26.11 ``GoldenGateRoPENd`` (heads 8, dim_head 64: 32 frequencies, 3 position axes) after
    a cast: the ``freqs`` buffer (h, f, p) rounded to ``dtype``; the coordinates ``arange(d, dtype=float32)``
    of the patch grid, ``pos.float()``; ``freqs * positions`` promoted to float32 and summed over the axes;
    cos / sin in float32. Head 0, positions along the first axis (the others 0: their terms are exact zeros);
    w = the rounded frequencies of that axis."""
    w = low(_golden_gate_freqs(8, 64, 3)[0, :, 0], dtype)

    def angles(p):
        a = f32(p[:, None] * w[None, :])
        return f32(np.cos(a)), f32(np.sin(a))

    return counts(angles, w, length)


def levjepa_cast(dtype: str, length: int) -> dict[str, int]:
    """vit-pytorch 1.26.11 LeJEPA ``VideoRotaryEmbedding(64)`` (``scales = linspace(1, 5, 10)``, a buffer)
    after a cast, on one axis of ``length`` frames: coordinates ``(arange(n) / n - 0.5) * 2`` in float32 (in
    [-1, 1)), ``coords * scales * pi`` promoted to float32 (the scales rounded to ``dtype``), sin / cos in
    float32. The ideal angle of frame p is (2 p / n - 1) s pi: w = 2 s pi / n, offset -s pi."""
    s = low(_torch_linspace32(1.0, 5.0, 10), dtype)
    pi32 = float(f32(math.pi))

    def angles(p):
        c = f32(f32(f32(p / length) - 0.5) * 2)
        a = f32(f32(c[:, None] * s[None, :]) * pi32)
        return f32(np.cos(a)), f32(np.sin(a))

    return counts(angles, 2 * s * math.pi / length, length, offset=-s * math.pi)


def flagai_txl_cast(dtype: str, length: int) -> dict[str, int]:
    """FlagAI 1.8.4 ``PositionalEmbedding(1024)`` (GLM's relative encoding, hidden size 1,024: 512
    frequencies) after a cast: the ``inv_freq`` buffer ``1 / 10000 ** (arange(0.0, 1024, 2.0) / 1024)``
    rounded; ``glm_model.py`` passes ``arange(key_length - 1, -1, -1.0, dtype=hidden_states.dtype)``, the
    positions in ``dtype``; ``torch.ger`` of two ``dtype`` tensors rounds the product; sin / cos in ``dtype``."""
    th = low(theta32(1024, 10000.0), dtype)
    return counts(_low_positions_path(th, dtype, dtype), th, length)


def gemma_jax(dtype: str, length: int) -> dict[str, int]:
    """gemma 3.3.0 ``apply_rope`` (JAX; head dim 256, base 10,000, scale_factor 1) with ``dtype`` inputs:
    ``(2.0 / 256) * arange(128, float32)``, ``10_000 ** ...`` float32, int32 positions divided by the
    timescale in float32 (``int32 / float32`` promotes to float32), sin / cos float32 (JAX promotes the
    ``dtype`` input times them to float32, then ``.astype(inputs.dtype)`` rounds the rotated values only).
    w = 1 / timescale in float32."""
    ts = f32(10000.0 ** f32(f32(2.0 / 256) * np.arange(128)))

    def angles(p):
        a = f32(p[:, None] / ts[None, :])
        return f32(np.cos(a)), f32(np.sin(a))

    return counts(angles, f32(1.0 / ts), length)


def timesfm3_cast(dtype: str, length: int) -> dict[str, int]:
    """timesfm 3.0.2 ``RotaryPositionalEmbedding(80)`` (model dims 1,280, 16 heads) after a cast: the
    ``timescale`` buffer ``1 * (10000 / 1) ** (2.0 * arange(40, float32) / 80)`` rounded to ``dtype``;
    ``pos.float() / ts`` promoted to float32; sin / cos float32. w = 1 / (rounded timescale)."""
    ts = low(f32(10000.0 ** f32(f32(2.0 * np.arange(40)) / 80)), dtype)

    def angles(p):
        a = f32(p[:, None] / ts[None, :])
        return f32(np.cos(a)), f32(np.sin(a))

    return counts(angles, f32(1.0 / ts), length)


def ltx_video_cast(dtype: str, length: int) -> dict[str, int]:
    """ltx-video 0.1.2 ``Transformer3DModel.precompute_freqs_cis`` (inner dim 2,048: 341 frequencies per axis,
    theta 10,000, max_pos [20, 2048, 2048], spacing "exp") with the model in ``dtype``: the pipeline's
    coordinates are float32 pixels (latent index x 32, the VAE's spatial factor); fractional positions
    ``y / 2048``; ``indices = 10000 ** linspace(0, 1, 341)`` float32, ``* pi / 2``; angles ``indices * (2 frac
    - 1)`` float32; cos / sin ``.to(self.dtype)``. One spatial axis of ``length`` latent rows; the ideal angle
    of row p is indices (64 p / 2048 - 1): w = indices / 32, offset -indices."""
    ind = f32(f32(f32(10000.0 ** _torch_linspace32(0.0, 1.0, 341)) * float(f32(math.pi))) / 2)

    def angles(p):
        frac = f32(f32(p * 32) / 2048)
        a = f32(ind[None, :] * f32(f32(frac * 2) - 1)[:, None])
        return low(np.cos(a), dtype), low(np.sin(a), dtype)

    return counts(angles, ind / 32, length, offset=-ind)


# --------------------------------------------------------------------------- issue 33's GitHub-only implementations
# (audits/corpus.py, entries with ``repo``: files read at a pinned commit, never committed)


def tgi_serve(dtype: str, length: int) -> dict[str, int]:
    """text-generation-inference ``PositionRotaryEmbedding`` (layers/rotary.py; head dim 128, base 10,000) serving a
    ``dtype`` model: ``inv_freq`` a plain float32 attribute (``_create_inv_freq``, or the checkpoint's read with
    ``weights.dtype = torch.float32``; never a buffer, so the model's dtype never reaches it), positions
    ``arange(seqlen, dtype=self.inv_freq.dtype)`` float32, ``torch.outer`` in float32, cos / sin ``.to(dtype)``."""
    th = theta32(128, 10000.0)
    return counts(_float32_path(th, dtype), th, length)


def internlm_cast(dtype: str, length: int) -> dict[str, int]:
    """InternLM before 2863575 (``internlm/model/embedding.py``; InternLM-7B: head dim 128, base 10,000) after
    its training casts the model: the ``inv_freq`` buffer rounded to ``dtype``, positions ``arange(seqlen,
    dtype=self.inv_freq.dtype)`` in ``dtype`` (round to nearest below 2,048: checked with torch),
    ``torch.outer`` of two ``dtype`` tensors rounded, cos / sin ``.to(x.dtype)``."""
    th = low(theta32(128, 10000.0), dtype)
    return counts(_low_positions_path(th, dtype, dtype), th, length)


def internlm_fixed(dtype: str, length: int) -> dict[str, int]:
    """InternLM at 2863575 (its fix): ``self.inv_freq`` a plain float32 attribute that a cast does not touch,
    positions float32, ``torch.outer`` float32, cos / sin ``.to(x.dtype)``: :func:`tgi_serve`'s flow."""
    th = theta32(128, 10000.0)
    return counts(_float32_path(th, dtype), th, length)


def yarn_theta(d: int = 128, base: float = 10000.0, scale: float = 16.0, original: int = 4096,
               beta_fast: float = 32.0, beta_slow: float = 1.0) -> np.ndarray:
    """``LlamaYaRNScaledRotaryEmbedding.yarn`` (jquesnelle/yarn) in float32: Yarn-Llama-2-7b-64k's settings
    (scale 16, original 4,096, extrapolation_factor 1); find_correction_range in Python floats."""
    pos = f32(base ** f32(np.arange(0, d, 2) / d))
    extra, inter = f32(1.0 / pos), f32(1.0 / f32(scale * pos))

    def corr(rot: float) -> float:
        return (d * math.log(original / (rot * 2 * math.pi))) / (2 * math.log(base))

    lo, hi = max(math.floor(corr(beta_fast)), 0), min(math.ceil(corr(beta_slow)), d - 1)
    if lo == hi:
        hi += 0.001
    ramp = f32(np.clip(f32(f32(np.arange(d // 2) - lo) / (hi - lo)), 0, 1))
    mask = f32(1 - ramp)
    return f32(f32(inter * f32(1 - mask)) + f32(extra * mask))


def yarn_reference_cast(dtype: str, length: int) -> dict[str, int]:
    """jquesnelle/yarn ``LlamaYaRNScaledRotaryEmbedding`` (Yarn-Llama-2-7b-64k: max_position_embeddings 65,536)
    after a cast, within the cache: ``__init__`` builds the cache from the float32 ``inv_freq`` (float32
    positions, einsum, cos / sin times mscale 0.1 ln 16 + 1, the default dtype float32); the cast rounds the
    cached values only; ``forward`` slices it (``seq_len`` <= 65,536 never rebuilds it)."""
    th = yarn_theta()
    mscale = float(0.1 * math.log(16.0) + 1.0)

    def angles(p):
        a = f32(p[:, None] * th[None, :])
        return low(f32(f32(np.cos(a)) * mscale), dtype), low(f32(f32(np.sin(a)) * mscale), dtype)

    return counts(angles, th, length)


def flux_axis(dtype: str, length: int) -> dict[str, int]:
    """Flux (black-forest-labs/flux ``math.rope``; an image axis: ``axes_dim`` 56, theta 10,000) in a ``dtype``
    model: ``img_ids`` float32 (``torch.zeros`` + ``arange``, sampling.py), ``scale = arange(0, 56, 2,
    dtype=pos.dtype) / 56`` and ``omega`` float32, the einsum float32 (the denoising loop runs outside autocast),
    the 2x2 matrices ``.float()``: positions = latent rows (16 px each)."""
    th = theta32(56, 10000.0)
    return counts(_float32_path(th), th, length)


def gemma_pytorch_default(dtype: str, length: int) -> dict[str, int]:
    """google/gemma_pytorch ``precompute_freqs_cis`` (head dim 256, base 10,000) under ``set_default_dtype(dtype)``
    (scripts/run.py builds the model so): ``arange(0, 256, 2)[:128].float()`` float32 frequencies, int64
    positions, ``torch.outer(int64, float32)`` float32, ``torch.polar`` complex64, a buffer nothing casts."""
    th = theta32(256, 10000.0)
    return counts(_float32_path(th), th, length)


def easylm(dtype: str, length: int) -> dict[str, int]:
    """EasyLM ``apply_rotary_emb`` (JAX; LLaMA head dim 128, base 10,000) with ``dtype`` activations: float32
    frequencies, int32 positions, ``jnp.outer`` float32, complex64; the queries ``.astype(float32)`` first."""
    th = theta32(128, 10000.0)
    return counts(_float32_path(th), th, length)


def run(name: str, dtype: str, length: int) -> dict[str, int]:
    """The named brute force (a function of this module) at dtype and length."""
    fn = globals().get(name)
    if not callable(fn) or name.startswith("_") or name in ("run", "counts", "f32", "low"):
        raise KeyError(name)
    return fn(dtype, length)
