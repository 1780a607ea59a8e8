"""Loss and accuracy per position band of any local Hugging Face causal LM, at several lengths.

The harness behind ``ropelaw eval-length MODEL_DIR --text FILE --lengths 4k,8k,16k``:

- the model is read from disk only: ``AutoModelForCausalLM.from_pretrained(MODEL_DIR,
  local_files_only=True, use_safetensors=True)`` (never a download, never a pickle);
- the text is tokenised with the model's own tokenizer from MODEL_DIR, or as UTF-8 bytes
  (``tokenizer="bytes"``, for byte-level models such as the tests' tiny Llama);
- at each length L, up to ``samples`` non-overlapping windows of L + 1 consecutive tokens
  are scored (next-token cross-entropy in nats, argmax accuracy) at every position, then
  averaged over ``bands`` equal position bands [k L/bands, (k+1) L/bands);
- a method from ``ropelaw.methods`` (ReRoPE, Leaky ReRoPE, log n) can be patched in with
  ``patch_model`` (the architectures and transformers versions it supports);
- the predicted bound comes from the model's ``config.json`` through ropelaw's config loader
  and :func:`ropelaw.theory.extrapolation_bound` (Liu et al.; through the scheme registry
  for the config's scaling scheme or the patched method).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import Any
from collections.abc import Sequence

import torch

from ..errors import UsageError, require
from .metrics import token_metrics

__all__ = ["eval_length", "predicted_bound", "tokenize", "band_edges", "LengthReport", "plot_length_report"]

METHODS = ("none", "rerope", "leaky_rerope", "logn")


def band_edges(length: int, bands: int) -> list[int]:
    """Edges of ``bands`` (nearly) equal bands over positions 0..length-1: [0, ..., length]."""
    if bands < 1 or length < 1:
        raise UsageError(f"need length >= 1 and bands >= 1, got {length}, {bands}")
    bands = min(bands, length)
    return [length * i // bands for i in range(bands + 1)]


def tokenize(text: bytes, model_dir: Path, tokenizer: str) -> torch.Tensor:
    """Token ids (N,) int64: the model's tokenizer (``auto``) or UTF-8 bytes (``bytes``)."""
    if tokenizer == "bytes":
        return torch.tensor(list(text), dtype=torch.int64)
    if tokenizer != "auto":
        raise UsageError(f"unknown tokenizer {tokenizer!r}; use 'auto' (the model's) or 'bytes'")
    if not any((model_dir / n).is_file() for n in ("tokenizer.json", "tokenizer_config.json", "tokenizer.model")):
        raise UsageError(f"{model_dir}: no tokenizer files (tokenizer.json, tokenizer_config.json); "
                         "pass --tokenizer bytes for a byte-level model")
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(model_dir), local_files_only=True)
    ids = tok(text.decode("utf-8", errors="replace"), add_special_tokens=False)["input_ids"]
    return torch.tensor(ids, dtype=torch.int64)


def predicted_bound(config_path: Path, method: str = "none", window: float | None = None,
                    leaky_k: float | None = None) -> tuple[float | None, str, int | None]:
    """(bound in tokens or None, how it was derived, training length) for a config.json."""
    from dataclasses import replace

    from ..lint.loader import load_config
    from ..theory import extrapolation_bound

    try:
        spec = load_config(str(config_path)).spec()
    except (ValueError, OSError) as exc:
        return None, f"no prediction: {exc}", None
    if method in ("rerope", "leaky_rerope"):
        if window is None:
            raise UsageError(f"--method {method} needs --window")
        params: dict[str, float | None] = {"window": int(math.ceil(window))}
        if method == "leaky_rerope":
            params["k"] = leaky_k
        spec = replace(spec, scheme=method, params=params)
    try:
        r = extrapolation_bound(spec)
    except ValueError as exc:
        return None, f"no prediction: {exc}", spec.train_len
    how = (f"d={spec.d}, base {spec.base:g}, trained {spec.train_len}, scheme {spec.scheme}: "
           f"{'unbounded' if r.unbounded else r.formula}")
    return (math.inf if r.unbounded else float(r.extrapolation_bound)), how, spec.train_len


@dataclass
class LengthReport:
    model_dir: str
    method: str
    window: float | None
    leaky_k: float | None
    predicted_bound: float | None
    prediction: str
    train_len: int | None
    tokens: int
    rows: list  # {length, band_start, band_end, loss, accuracy, samples}
    curves: dict  # length -> {"loss": [...], "accuracy": [...]} per position
    seconds: float

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def _load_model(model_dir: Path):
    require("transformers", "hf", "eval-length")
    from transformers import AutoModelForCausalLM

    if not (model_dir / "config.json").is_file():
        raise UsageError(f"{model_dir}: no config.json (a Hugging Face model directory is needed)")
    if not any(model_dir.glob("*.safetensors")):
        raise UsageError(f"{model_dir}: no .safetensors weights (ropelaw never loads pickled weights; convert "
                         "them to safetensors in a trusted environment)")
    model = AutoModelForCausalLM.from_pretrained(str(model_dir), local_files_only=True, use_safetensors=True,
                                                 dtype=torch.float32)  # `dtype`: 4.56+ and 5.x
    model.eval()
    return model


@torch.no_grad()
def eval_length(model_dir: str | Path, text: bytes, lengths: Sequence[int], *, method: str = "none",
                window: float | None = None, leaky_k: float | None = None, train_len: int | None = None,
                bands: int = 8, samples: int = 4, tokenizer: str = "auto", model: Any = None,
                progress=None) -> LengthReport:
    """Score ``model_dir`` on ``text`` at each length (see the module docstring)."""
    t0 = time.perf_counter()
    model_dir = Path(model_dir)
    if method not in METHODS:
        raise UsageError(f"unknown method {method!r}; known: {', '.join(METHODS)}")
    if samples < 1:
        raise UsageError(f"--samples must be >= 1, got {samples}")
    model = _load_model(model_dir) if model is None else model
    ids = tokenize(text, model_dir, tokenizer)
    vocab = model.get_input_embeddings().weight.shape[0]
    if ids.numel() and int(ids.max()) >= vocab:
        raise UsageError(f"token id {int(ids.max())} is outside the model's vocabulary of {vocab}")
    bound, how, cfg_train = predicted_bound(model_dir / "config.json", method, window, leaky_k)
    handle = None
    if method != "none":
        from ..methods import patch_model

        tl = train_len or cfg_train
        if method == "logn":
            handle = patch_model(model, "logn", train_len=tl)
        else:
            handle = patch_model(model, method, window=window, leaky_k=leaky_k,
                                 train_len=train_len)  # log n with ReRoPE only when asked
    rows, curves = [], {}
    try:
        for length in lengths:
            n = min(samples, (ids.numel() - 1) // length)
            if n < 1:
                raise UsageError(f"the text has {ids.numel():,} tokens: too short for one window of {length:,} + 1")
            loss_sum = acc_sum = None
            for i in range(n):
                w = ids[i * length: i * length + length + 1].unsqueeze(0)  # (1, L+1)
                logits = model(input_ids=w[:, :-1], use_cache=False).logits  # (1, L, V)
                ls, cs = token_metrics(logits, w[:, 1:])
                loss_sum = ls if loss_sum is None else loss_sum + ls
                acc_sum = cs if acc_sum is None else acc_sum + cs
                if progress:
                    progress(1)
            if loss_sum is None or acc_sum is None:  # pragma: no cover - n >= 1 windows, checked above
                raise UsageError(f"no window of {length:,} tokens")
            loss, acc = (loss_sum / n).tolist(), (acc_sum / n).tolist()
            curves[str(length)] = {"loss": [round(x, 5) for x in loss], "accuracy": [round(x, 5) for x in acc]}
            edges = band_edges(length, bands)
            for lo, hi in pairwise(edges):
                rows.append({"length": length, "band_start": lo, "band_end": hi,
                             "loss": sum(loss[lo:hi]) / (hi - lo), "accuracy": sum(acc[lo:hi]) / (hi - lo),
                             "samples": n})
    finally:
        if handle is not None:
            handle.undo()
    return LengthReport(str(model_dir), method, window, leaky_k, bound, how, cfg_train, int(ids.numel()), rows,
                        curves, round(time.perf_counter() - t0, 2))


def plot_length_report(report: LengthReport):
    """Loss per band at each length, with the predicted bound and the training length drawn."""
    require("matplotlib", "plot", "plotting")
    from matplotlib.figure import Figure

    fig = Figure(figsize=(8.0, 4.8), layout="constrained")
    ax = fig.subplots()
    longest = 0
    for length in sorted({r["length"] for r in report.rows}):
        rs = [r for r in report.rows if r["length"] == length]
        ax.plot([(r["band_start"] + r["band_end"]) / 2 for r in rs], [r["loss"] for r in rs], "o-", ms=3,
                label=f"length {length:,}", gid=f"loss-{length}")
        longest = max(longest, length)
    if report.train_len:
        ax.axvline(report.train_len, color="k", ls=":", lw=0.9, label=f"training length {report.train_len:,}",
                   gid="train_len")
    b = report.predicted_bound
    if b is not None and math.isfinite(b) and b <= 2 * longest:
        ax.axvline(b, color="C3", ls="--", lw=1.2, label=f"predicted bound {b:,.0f}", gid="predicted_bound")
    note = "" if b is None else " (predicted bound: unbounded)" if not math.isfinite(b) else \
        f" (predicted bound {b:,.0f} beyond the plot)" if b > 2 * longest else ""
    method = "" if report.method == "none" else f", {report.method}" + (
        f" w={report.window:g}" if report.window else "") + (f" k={report.leaky_k:g}" if report.leaky_k else "")
    ax.set_title(f"{Path(report.model_dir).name}{method}: loss per position band{note}", fontsize=9)
    ax.set_xlabel("position (tokens)")
    ax.set_ylabel("loss, nats")
    ax.legend(fontsize=8)
    return fig
