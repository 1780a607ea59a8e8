"""Switch the attention of a Hugging Face model to ReRoPE / Leaky ReRoPE / log-n, for real generation.

Works with transformers 4.57 and 5.23 on every architecture of :data:`ARCHITECTURES` (those of
:data:`ONLY_5` under 5.23 only): the
models whose attention module projects q, k, v, rotates them with the model's rotary
embedding (``apply_rotary_pos_emb(q, k, cos, sin)``, rotate-half or interleaved pairs), updates the cache with
the ROTATED keys and calls the attention interface ``fn(module, q, k, v, mask, scaling=...,
**kwargs)``. :func:`patch_model` gives each patched attention module an attention function of
its own (through a view of its config that names it) and leaves everything else alone: the
projections, q/k norms, rotary embedding, cache and masks are the model's.

- ``"rerope"`` / ``"leaky_rerope"`` (seed 000, kexue.fm/archives/9708): the near pair is the
  model's own (R^i q_i, R^j k_j), the far pair is one more rotation of each
  (:func:`~ropelaw.methods.rerope.far_rotation`). The cache keeps the standard rotated keys,
  plus a second cache of far keys formed once per token, so a decode step is one score row
  with no re-rotation (O(1) extra work per step). With no pair at distance >= w the model's
  own attention function runs, so a window covering the input gives the unpatched logits
  bit for bit.
- ``"logn"`` (seed 000, "-log n"): query i multiplied by max(1, log(p_i + 1) / log(T_train)),
  then the model's own attention. ``train_len`` with a ReRoPE method adds the same factor.

Sliding windows, as transformers applies them (query i sees key j iff 0 <= i - j < s,
``masking_utils.sliding_window_overlay``; the cache keeps the last s - 1 keys): in a model that
also has full-attention layers (Gemma 2/3, Qwen2 with ``max_window_layers``) the sliding layers
are left as they are and keep plain RoPE inside their window. In a model whose every layer
slides (Mistral or Phi-3 configs that set ``sliding_window``: Mistral-7B-v0.1 4096,
Phi-3-mini-4k 2047) every layer is patched and ReRoPE applies inside the window: distances
below w keep their position, w <= i - j < s are clipped at w (Leaky: w + (i - j - w)/k), keys
at i - j >= s stay masked. If s <= ceil(w) the window already keeps every distance below w, so
the patch is refused. Padded batches must be padded on the left (what ``generate``
does): each row's keys are a contiguous run ending at the newest token, and its positions
(``position_ids``) count from its first real token. The frequencies are read from the model's
rotary embedding and checked against the cos/sin the model passes in every call.
"""

from __future__ import annotations

import contextlib
import contextvars
import inspect
import math
import sys
import types
import weakref
from typing import Any

import torch

from ..errors import UsageError
from ..errors import require
from .logn import logn_scale
from .rerope import check_window, far_rotation, rerope_attention_rotated, rerope_decode_rotated

__all__ = ["patch_model", "patch_llama", "unpatch", "RopePatch", "LlamaPatch", "METHODS", "ARCHITECTURES",
           "TRANSFORMERS_VERSIONS"]

METHODS = ("rerope", "leaky_rerope", "logn")
# model_type -> what was checked (tests/test_methods_hf_patch.py builds a tiny model of each)
ARCHITECTURES = ("llama", "mistral", "mixtral", "qwen2", "qwen3", "qwen3_moe", "gemma", "gemma2", "gemma3_text",
                 "gemma3", "phi3", "olmo2", "granite", "starcoder2", "cohere", "qwen2_moe", "stablelm")
TRANSFORMERS_VERSIONS = ("4.57", "5.23")  # major.minor read and tested (4.57.1, 5.23.0)
# model types whose 4.57.1 attention computes its scores inside its own classes (eager, sdpa, flash),
# not through the attention interface: patched under 5.23 only
ONLY_5 = {"qwen2_moe": "Qwen2MoeAttention", "stablelm": "StableLmAttention"}
INTERFACE = "ropelaw_rerope"  # key of the attention function in transformers' AttentionInterface
_ATTR = "_ropelaw_patch"
_CALL: contextvars.ContextVar = contextvars.ContextVar("ropelaw_attention_call", default=None)


def _transformers():
    require("transformers", "hf", "patch_model")
    import transformers

    return transformers


def _arch_name(model: Any) -> str:
    cfg = getattr(model, "config", None)
    return f"{type(model).__name__} (model_type {getattr(cfg, 'model_type', None)!r})"


class _ConfigView:
    """The module's config with ``_attn_implementation`` naming the ropelaw attention function."""

    def __init__(self, config: Any):
        object.__setattr__(self, "_ropelaw_config", config)

    @property
    def _attn_implementation(self) -> str:
        return INTERFACE

    def __getattr__(self, name: str) -> Any:
        return getattr(object.__getattribute__(self, "_ropelaw_config"), name)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(object.__getattribute__(self, "_ropelaw_config"), name, value)


class _FarKeys:
    """Far keys of one layer of one cache: ``n`` of them from slot ``lo`` of a (B, Hk, capacity, d)
    buffer, grown by doubling; a sliding-window cache drops keys at the front (``drop``)."""

    def __init__(self, first: torch.Tensor, offset: torch.Tensor, last_source: torch.Tensor):
        B, Hk, n, D = first.shape
        self.buf = first.new_empty(B, Hk, max(2 * n, 256), D)
        self.buf[:, :, :n] = first
        self.lo, self.n = 0, n
        self.offset = offset  # (B,) position minus index of each row's keys
        self.last_source = last_source  # (B, Hk, d): the rotated key the last far key was made from

    def drop(self, d: int) -> None:
        self.lo, self.n = self.lo + d, self.n - d
        self.offset = self.offset + d

    def append(self, new: torch.Tensor, last_source: torch.Tensor) -> None:
        lo, n, t = self.lo, self.n, new.shape[2]
        if lo + n + t > self.buf.shape[2]:  # move the live keys to the front of a buffer twice their size
            buf = self.buf
            if 2 * (n + t) > buf.shape[2]:
                buf = buf.new_empty(*buf.shape[:2], 2 * (n + t), buf.shape[3])
            buf[:, :, :n] = self.buf[:, :, lo: lo + n].clone()
            self.buf, self.lo, lo = buf, 0, 0
        self.buf[:, :, lo + n: lo + n + t] = new
        self.n = n + t
        self.last_source = last_source

    def keys(self) -> torch.Tensor:
        return self.buf[:, :, self.lo: self.lo + self.n]


class RopePatch:
    """Handle of an applied patch; a context manager that unpatches on exit."""

    def __init__(self, model: Any, method: str, window: float | None, leaky_k: float | None,
                 train_len: float | None, modules: list, skipped: list, sliding: dict | None = None):
        self.model, self.method, self.window, self.leaky_k, self.train_len = model, method, window, leaky_k, train_len
        self.modules = modules  # the patched attention modules
        self.skipped = skipped  # (module, sliding window) left as they are
        self.sliding = sliding or {}  # id(patched module) -> its sliding window (models whose every layer slides)
        self.arch = _arch_name(model)
        self._far: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # cache -> {layer_idx: _FarKeys}
        self._rotary: dict = {}  # id(module) -> (rotary module, inv_freq attribute, scaling attribute)

    def rerope_window(self) -> float:
        """The window w of a ReRoPE method (:func:`patch_model` refuses one without it)."""
        if self.window is None:
            raise UsageError(f"{self.arch}: method {self.method!r} has no window; patch_model needs window=w")
        return self.window

    def undo(self) -> None:
        for m in self.modules:
            if getattr(m, _ATTR, None) is self:
                del m.forward
                m.config = object.__getattribute__(m.config, "_ropelaw_config")
                delattr(m, _ATTR)
        self.modules = []
        self._far = weakref.WeakKeyDictionary()

    def __enter__(self) -> RopePatch:
        return self

    def __exit__(self, *exc: object) -> None:
        self.undo()

    def __repr__(self) -> str:
        return (f"RopePatch({self.arch}, method={self.method!r}, window={self.window}, leaky_k={self.leaky_k}, "
                f"train_len={self.train_len}, patched={len(self.modules)}, sliding_kept={len(self.skipped)})")


LlamaPatch = RopePatch  # the name of ropelaw <= 0.1


# ---------------------------------------------------------------------------------------------
# finding what to patch


def _modeling_module(m: Any):
    return sys.modules.get(type(m).__module__)


def _is_rotary_attention(m: Any) -> bool:
    """An attention module of the standard rotary + attention-interface kind."""
    mod = _modeling_module(m)
    if not (type(m).__name__.endswith("Attention") and hasattr(m, "layer_idx") and mod is not None
            and callable(getattr(mod, "apply_rotary_pos_emb", None))
            and callable(getattr(mod, "eager_attention_forward", None))):
        return False
    try:
        params = inspect.signature(type(m).forward).parameters
    except (TypeError, ValueError):
        return False
    return "position_embeddings" in params


def _sliding_window(m: Any) -> int | None:
    """The layer's sliding window, None for full attention, read as the modeling code reads it: the
    module's own attribute where it has one (Gemma 2/3, Qwen2), else the config's ``layer_types``
    (transformers 5.23 Qwen2-MoE sets the attribute on sliding layers only), else the config's
    ``sliding_window`` (Mistral, Phi-3). 0 means none (Qwen2-MoE without ``use_sliding_window``)."""
    if hasattr(m, "sliding_window"):
        return m.sliding_window or None
    types = getattr(m.config, "layer_types", None)
    if types is not None and 0 <= m.layer_idx < len(types) and types[m.layer_idx] != "sliding_attention":
        return None
    return getattr(m.config, "sliding_window", None) or None


def _check_version(arch: str, model_type: Any) -> None:
    tf = _transformers()
    mm = ".".join(tf.__version__.split(".")[:2])
    if mm not in TRANSFORMERS_VERSIONS:
        raise UsageError(f"patch_model supports transformers {' and '.join(TRANSFORMERS_VERSIONS)} "
                         f"(read and tested), not {tf.__version__}; cannot patch {arch}")
    if mm == "4.57" and model_type in ONLY_5:
        raise UsageError(f"patch_model supports {arch} under transformers 5.23 only: in {tf.__version__} "
                         f"{ONLY_5[model_type]} computes its attention itself, not through the attention interface")


def _register_interface() -> None:
    from transformers import AttentionInterface

    AttentionInterface.register(INTERFACE, _attention)


def _original_interface(module: Any, impl: str):
    from transformers.modeling_utils import ALL_ATTENTION_FUNCTIONS

    if impl != "eager" and impl in ALL_ATTENTION_FUNCTIONS:
        return ALL_ATTENTION_FUNCTIONS[impl]
    return _modeling_module(module).eager_attention_forward


# ---------------------------------------------------------------------------------------------
# the frequencies: the model's rotary embedding, checked against the cos/sin of every call


def _rotary_candidates(model: Any) -> list[tuple[Any, str, str]]:
    out = []
    for r in model.modules():
        if not type(r).__name__.endswith("RotaryEmbedding"):
            continue
        for name in list(getattr(r, "_buffers", {})):
            if name.endswith("inv_freq") and "original" not in name:
                scaling = name[: -len("inv_freq")] + "attention_scaling"
                out.append((r, name, scaling))
    return out


def _expected_cos(cand, positions: torch.Tensor) -> torch.Tensor:
    r, name, scaling = cand
    inv = getattr(r, name).to(torch.float32)
    ang = positions.to(torch.float32)[..., None] * inv.to(positions.device)  # as transformers forms it
    return torch.cos(ang) * float(getattr(r, scaling, 1.0))


def _frequencies(patch: RopePatch, module: Any, cos: torch.Tensor, positions: torch.Tensor):
    """(inv_freq float32, rotary dim, pair layout) of this layer, verified against ``cos``.

    The layout is read from the table: rotate-half repeats the half table (``cat((f, f))``, Llama),
    interleaved repeats each angle (``repeat_interleave(f, 2)``, Cohere, whose ``rotate_half``
    pairs x[2i] with x[2i+1]).
    """
    half = cos.shape[-1] // 2
    c = cos.to(torch.float32)
    if torch.equal(c[..., :half], c[..., half:]):
        layout = "rotate_half"
    elif torch.equal(c[..., 0::2], c[..., 1::2]):
        layout, c = "interleaved", c[..., 0::2].repeat(*([1] * (c.dim() - 1)), 2)  # the half table first
    else:
        raise UsageError(f"{patch.arch}: the rotary cos table is neither rotate-half nor interleaved; not supported")
    c = c.expand(positions.shape[0], -1, -1)  # one table for the batch when no row is padded
    pos = positions
    tol = 1e-5 if cos.dtype in (torch.float32, torch.float64) else 2e-2

    def error(cand) -> float:
        r, name, _ = cand
        if getattr(r, name).numel() != half:
            return math.inf
        return float((_expected_cos(cand, pos) - c[..., :half]).abs().max())

    cand = patch._rotary.get(id(module))
    if cand is None or not error(cand) <= tol:
        found = sorted((error(x), i, x) for i, x in enumerate(_rotary_candidates(patch.model)))
        if not found or not found[0][0] <= tol:
            raise UsageError(f"{patch.arch}: cannot match the cos/sin of layer {module.layer_idx} to a rotary "
                             "embedding of the model; not supported")
        cand = found[0][2]  # the closest table (Gemma 3: global vs local base)
        patch._rotary[id(module)] = cand
    r, name, scaling = cand
    return getattr(r, name).to(torch.float32), 2 * half, layout


# ---------------------------------------------------------------------------------------------
# masks and positions


def _row_starts(mask: torch.Tensor | None, B: int, T: int, N: int, arch: str,
                sliding: int | None = None) -> torch.Tensor:
    """First key index of each row (left padding), checked: keys start..N-1 exist, causal over them
    (and, with a sliding window s, query i sees key j only if i - j < s).

    ``mask`` is the model's 4-D mask (B|1, 1, T, N'): bool (True = attend) or additive float.
    Query rows before a row's start (padding) are not checked: their output is never used.
    """
    dev = mask.device if mask is not None else None
    if mask is None:
        return torch.zeros(B, dtype=torch.int64, device=dev)
    if not isinstance(mask, torch.Tensor) or mask.dim() != 4:
        raise UsageError(f"{arch}: ReRoPE patch needs a 4-D tensor attention mask, got {type(mask).__name__}")
    m = mask[:, 0, -T:, :N]
    allowed = m if m.dtype == torch.bool else m == 0  # (B|1, T, N) bool
    allowed = allowed.expand(B, T, N)
    kidx = torch.arange(N, device=m.device)
    qidx = torch.arange(N - T, N, device=m.device)  # (T,)
    if sliding is None:
        seen = allowed[:, -1]  # (B, N): the keys of the newest token
    else:  # the newest token may no longer see the row's first key: every causal row counts
        causal_rows = ~(allowed & (kidx[None, None, :] > qidx[None, :, None])).any(-1)  # (B, T)
        seen = (allowed & causal_rows[:, :, None]).any(1)  # (B, N)
    starts = torch.where(seen.any(-1), torch.argmax(seen.to(torch.int8), dim=-1), torch.full_like(seen[:, 0], N,
                                                                                                 dtype=torch.int64))
    want = (kidx[None, None, :] >= starts[:, None, None]) & (kidx[None, None, :] <= qidx[None, :, None])  # (B,T,N)
    if sliding is not None:
        want &= kidx[None, None, :] > qidx[None, :, None] - sliding
    real_rows = qidx[None, :] >= starts[:, None]  # (B, T)
    if bool((allowed & (kidx[None, None, :] > qidx[None, :, None]) & real_rows[:, :, None]).any()):
        raise UsageError(f"{arch}: the attention mask lets tokens see later tokens (bidirectional attention, e.g. "
                         "Gemma 3's image tokens); ReRoPE is causal: text-only prompts are supported")
    if bool(((allowed != want) & real_rows[:, :, None]).any()):
        raise UsageError(f"{arch}: the attention mask is not causal over one run of keys per row ending at the "
                         "newest token; ReRoPE supports left padding (tokenizer padding_side='left') and a "
                         "DynamicCache only")
    return starts.to(torch.int64)


def _positions(kwargs: dict, call: dict | None, B: int, T: int, N: int, device) -> torch.Tensor:
    pos = kwargs.get("position_ids")
    if pos is None and call is not None:
        pos = call.get("position_ids")
    if pos is None:
        pos = torch.arange(N - T, N, device=device)[None]
    return pos.to(device=device, dtype=torch.int64).expand(B, T)


# ---------------------------------------------------------------------------------------------
# the attention function


def _attention(module: Any, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, attention_mask: Any,
               scaling: float | None = None, dropout: float = 0.0, **kwargs: Any):
    patch: RopePatch = getattr(module, _ATTR)
    impl = object.__getattribute__(module.config, "_ropelaw_config")._attn_implementation
    original = _original_interface(module, impl)
    call = _CALL.get()
    if module.training and dropout:
        raise UsageError(f"{patch.arch}: the ReRoPE patch is for inference; call model.eval() (attention dropout)")
    sliding = patch.sliding.get(id(module))
    if "sliding_window" in kwargs and (kwargs["sliding_window"] or None) != sliding:  # Qwen2-MoE passes none
        raise UsageError(f"{patch.arch}: layer {module.layer_idx} runs with sliding window "
                         f"{kwargs.get('sliding_window')}, patched for {sliding}; not supported")
    B, H, T, D = query.shape
    N = key.shape[2]
    pos = _positions(kwargs, call, B, T, N, query.device)  # (B, T) int64
    if patch.train_len is not None:
        query = query * logn_scale(pos, patch.train_len, device=query.device)[:, None, :, None].to(query.dtype)
    if patch.method == "logn":
        return original(module, query, key, value, attention_mask, scaling=scaling, dropout=dropout, **kwargs)
    scale = module.scaling if scaling is None else scaling
    window = patch.rerope_window()
    W = math.ceil(window)
    starts = _row_starts(attention_mask, B, T, N, patch.arch, sliding)  # (B,)
    cache = call.get("cache") if call else None
    no_far = int((N - 1 - starts).max()) < W or (sliding is not None and sliding <= W)
    if no_far:  # no pair at distance >= w: the model's own attention, exactly
        if cache is not None:
            patch._far.get(cache, {}).pop(module.layer_idx, None)  # far keys would go stale
        return original(module, query, key, value, attention_mask, scaling=scaling, dropout=dropout, **kwargs)
    cos = call["cos"] if call else None
    if cos is None:
        raise UsageError(f"{patch.arch}: the attention module received no position_embeddings")
    inv_freq, rd, layout = _frequencies(patch, module, cos, pos)
    rot = dict(inv_freq=inv_freq, rotary_dim=rd, layout=layout)
    kidx = torch.arange(N, device=query.device)
    # positions are contiguous from each row's first key: p_j = j + offset
    offset = pos[:, -1] - (N - 1)  # (B,)
    if bool((pos != torch.arange(N - T, N, device=pos.device)[None] + offset[:, None])[
            torch.arange(N - T, N, device=pos.device)[None] >= starts[:, None]].any()):
        raise UsageError(f"{patch.arch}: position_ids are not consecutive within a row; not supported")
    kf = _far_keys(patch, module, cache, key, T, offset, rot)
    softcap = kwargs.get("softcap")
    qf = far_rotation(query, pos[:, None, :], window, patch.leaky_k, "query", **rot)
    if T == 1:
        lo = 0 if sliding is None else max(0, N - sliding)  # the keys the sliding window leaves visible
        key_mask = None if not bool((starts > lo).any()) else kidx[None, lo:] >= starts[:, None]
        out = rerope_decode_rotated(query, qf, key[:, :, lo:], kf[:, :, lo:], value[:, :, lo:], window,
                                    scale=scale, key_mask=key_mask, softcap=softcap)
    else:
        out = query.new_zeros(B, H, T, value.shape[-1])
        for b in range(B):
            s = int(starts[b])
            q0 = max(N - T, s)  # the first real query
            if q0 >= N:
                continue
            sl = slice(q0 - (N - T), T)
            if N - 1 - s < W:  # this row has no far pair: plain causal attention on the model's rotation
                qk = torch.nn.functional.scaled_dot_product_attention
                kk, vv = (x[b: b + 1, :, s:].repeat_interleave(H // key.shape[1], dim=1) for x in (key, value))
                visible = kidx[s:][None, :] <= kidx[q0:][:, None]
                if softcap is None:
                    out[b: b + 1, :, sl] = qk(query[b: b + 1, :, sl], kk, vv, attn_mask=visible, scale=scale)
                    continue
            out[b: b + 1, :, sl] = rerope_attention_rotated(
                query[b: b + 1, :, sl], key[b: b + 1, :, s:], qf[b: b + 1, :, sl], kf[b: b + 1, :, s:],
                value[b: b + 1, :, s:], window, scale=scale, softcap=softcap, sliding_window=sliding)
    return out.transpose(1, 2).contiguous(), None


def _far_keys(patch: RopePatch, module: Any, cache: Any, key: torch.Tensor, T: int, offset: torch.Tensor,
              rot: dict) -> torch.Tensor:
    """Far keys of positions 0 .. N-1 of this layer: only the T new ones are rotated when cached."""
    N = key.shape[2]
    kpos = torch.arange(N, device=key.device)[None, :] + offset[:, None]  # (B, N)
    window = patch.rerope_window()

    def make(lo: int) -> torch.Tensor:
        return far_rotation(key[:, :, lo:], kpos[:, None, lo:], window, patch.leaky_k, "key", **rot)

    if cache is None:
        return make(0)
    if cache not in patch._far:
        _watch(patch, cache)
    layers = patch._far.setdefault(cache, {})
    far = layers.get(module.layer_idx)
    o = N - T
    if (far is not None and far.n >= o > 0 and far.buf.shape[0] == key.shape[0]
            and torch.equal(far.offset + (far.n - o), offset) and torch.equal(far.last_source, key[:, :, o - 1])):
        far.drop(far.n - o)  # a sliding-window cache dropped its oldest keys (0 otherwise)
        far.append(make(o), key[:, :, N - 1])
    else:  # a new cache, or one cropped / reordered / refilled: rebuild from the rotated keys
        far = _FarKeys(make(0), offset.clone(), key[:, :, N - 1])
        layers[module.layer_idx] = far
    return far.keys()


_CACHE_EDITS = ("reorder_cache", "crop", "batch_repeat_interleave", "batch_select_indices", "reset")


def _watch(patch: RopePatch, cache: Any) -> None:
    """Drop the far keys of ``cache`` whenever it is reordered, cropped or reset (beam search,
    assisted decoding): they are rebuilt from the rotated keys at the next step."""
    ref = weakref.ref(patch)
    for name in _CACHE_EDITS:
        method = getattr(cache, name, None)
        if method is None or getattr(method, "_ropelaw", False):
            continue

        def edited(*args: Any, _method=method, **kwargs: Any):
            p = ref()
            if p is not None:
                p._far.pop(cache, None)
            return _method(*args, **kwargs)

        edited._ropelaw = True  # type: ignore[attr-defined]  # a marker on the wrapper: never wrapped twice
        with contextlib.suppress(AttributeError):
            setattr(cache, name, edited)


# ---------------------------------------------------------------------------------------------
# public API


def _wrapped_forward(patch: RopePatch, names: list[str]):
    def forward(self, *args: Any, **kwargs: Any):
        bound = dict(zip(names, args, strict=False))  # the positional arguments fill the leading parameters
        bound.update(kwargs)
        pe = bound.get("position_embeddings")
        call = {"cache": bound.get("past_key_values", bound.get("past_key_value")),
                "cos": pe[0] if isinstance(pe, (tuple, list)) else None,
                "position_ids": bound.get("position_ids")}
        token = _CALL.set(call)
        try:
            return type(self).forward(self, *args, **kwargs)
        finally:
            _CALL.reset(token)

    return forward


def _check_params(method: str, window: Any, leaky_k: Any, train_len: Any) -> None:
    if method not in METHODS:
        raise UsageError(f"unknown method {method!r}; known: {', '.join(METHODS)}")
    if method in ("rerope", "leaky_rerope"):
        if window is None:
            raise UsageError(f"{method} needs a window > 0")
        if method == "rerope" and leaky_k is not None:
            raise UsageError("rerope takes no leaky_k; use method='leaky_rerope'")
        if method == "leaky_rerope" and leaky_k is None:
            raise UsageError("leaky_rerope needs leaky_k > 1")
        check_window(window, leaky_k)
    else:
        if window is not None or leaky_k is not None:
            raise UsageError("logn takes no window / leaky_k")
        if train_len is None:
            raise UsageError("logn needs train_len")
    if train_len is not None and (isinstance(train_len, bool) or not isinstance(train_len, (int, float))
                                  or not train_len > 1 or not math.isfinite(train_len)):
        raise UsageError(f"train_len must be a finite number > 1, got {train_len!r}")


def patch_model(model: Any, method: str = "rerope", *, window: float | None = None, leaky_k: float | None = None,
                train_len: float | None = None) -> RopePatch:
    """Switch the full-attention layers of a Hugging Face causal LM to ``method``; returns a handle.

    method "rerope" needs ``window`` w > 0; "leaky_rerope" ``window`` and ``leaky_k`` k > 1;
    "logn" ``train_len`` (with a ReRoPE method it adds log-n query scaling, seed 000). The
    handle is a context manager; :func:`unpatch` or ``handle.undo()`` restore the model.
    Raises ValueError (one line, naming the architecture) for a model outside
    :data:`ARCHITECTURES`, a transformers version outside :data:`TRANSFORMERS_VERSIONS`, a model
    whose every layer slides with a window s <= ceil(w) (nothing would change), a model already
    patched, or bad parameters.
    """
    arch = _arch_name(model)
    _check_params(method, window, leaky_k, train_len)
    model_type = getattr(getattr(model, "config", None), "model_type", None)
    _check_version(arch, model_type)
    if model_type not in ARCHITECTURES:
        raise UsageError(f"patch_model does not support {arch}; supported model types: {', '.join(ARCHITECTURES)}")
    attn = [m for m in model.modules() if _is_rotary_attention(m)]
    if not attn:
        raise UsageError(f"{arch}: no attention module with the standard rotary interface found")
    if any(hasattr(m, _ATTR) for m in attn):
        raise UsageError(f"{arch} is already patched; call unpatch(model) first")
    skipped = [(m, _sliding_window(m)) for m in attn if _sliding_window(m) is not None]
    modules = [m for m in attn if _sliding_window(m) is None]
    sliding = {}
    if not modules:  # every layer slides (Mistral, Phi-3): ReRoPE inside the window
        sliding = {id(m): int(sw) for m, sw in skipped if sw is not None}  # every one has a window
        modules, skipped = [m for m, _ in skipped], []
        s = min(sliding.values())
        if window is not None and method != "logn" and max(sliding.values()) <= math.ceil(window):
            raise UsageError(f"{arch}: every attention layer has a sliding window of {s}, which already keeps every "
                             f"relative position at most {s - 1} < w = {window}; ReRoPE would change nothing "
                             f"(use w < {s})")
    _register_interface()
    patch = RopePatch(model, method, window, leaky_k, train_len, modules, skipped, sliding)
    for m in modules:
        names = [p for p in inspect.signature(type(m).forward).parameters][1:]
        m.forward = types.MethodType(_wrapped_forward(patch, names), m)
        m.config = _ConfigView(m.config)
        setattr(m, _ATTR, patch)
    return patch


def patch_llama(model: Any, method: str = "rerope", *, window: float | None = None, leaky_k: float | None = None,
                train_len: float | None = None) -> RopePatch:
    """Alias of :func:`patch_model` (kept from ropelaw 0.1, when only Llama was supported)."""
    return patch_model(model, method, window=window, leaky_k=leaky_k, train_len=train_len)


def unpatch(model: Any) -> int:
    """Restore the original attention of every patched module of ``model``; returns how many."""
    n = 0
    for m in model.modules():
        patch = getattr(m, _ATTR, None)
        if patch is not None:
            del m.forward
            m.config = object.__getattribute__(m.config, "_ropelaw_config")
            delattr(m, _ATTR)
            n += 1
    return n
