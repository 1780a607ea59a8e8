"""Per-position metrics and the break-point rule (pure tensor / list code, no training).

Defined before any run was looked at (issue 13):

- loss and accuracy per position: mean over samples of the next-token cross-entropy (nats)
  and of [argmax logit == target] at each 0-based position of the input;
- the break point of a loss curve (:func:`break_point`): with the training length T,
  reference = mean loss over positions [T/2, T) (in range, with enough context); smoothed
  loss at p = mean over the trailing window [p - s + 1, p], s = T/4; the break is the first
  position p >= T whose smoothed loss exceeds the reference by ``margin`` = 0.2 nats
  (a 22% rise in perplexity). No such position: no break within the tested length (None).
  The trailing window never looks past p, so a sharp rise is reported at most s*margin/rise
  positions late, and never early;
- agreement of a predicted bound P with a measured break M (:func:`agreement`): "agrees"
  when both are beyond the tested length, or when M/P lies in [1/1.5, 1.5]; otherwise the
  ratio is reported as it is.

Added after the quick schemes run (issue 25), a reading of the curves, never a verdict:
:func:`steepest_rise`, where a curve jumps the most, for curves whose loss creeps up before it
jumps (the break rule then fires on the creep, as it was written to).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from itertools import pairwise

import torch
import torch.nn.functional as F

from ..errors import UsageError

__all__ = ["token_metrics", "break_point", "smoothed", "agreement", "band_means", "ordering_agreement",
           "steepest_rise", "BREAK_MARGIN", "AGREEMENT_FACTOR"]

BREAK_MARGIN = 0.2  # nats above the in-range loss: exp(0.2) = 1.22x perplexity
AGREEMENT_FACTOR = 1.5  # measured break within a factor 1.5 of the predicted bound


def token_metrics(logits: torch.Tensor, targets: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-position sums over the batch: (loss_sum (L,) float64, correct_sum (L,) float64).

    logits (B, L, V), targets (B, L) int64. Divide by B (or the summed count) for means.
    """
    if logits.dim() != 3 or targets.shape != logits.shape[:2]:
        raise UsageError(f"logits (B, L, V) and targets (B, L) expected, got {tuple(logits.shape)} and "
                         f"{tuple(targets.shape)}")
    nll = F.cross_entropy(logits.float().transpose(1, 2), targets, reduction="none")  # (B, L)
    correct = (logits.argmax(-1) == targets)  # (B, L) bool
    return nll.double().sum(0), correct.double().sum(0)


def smoothed(curve: Sequence[float], window: int) -> list[float]:
    """Trailing mean: out[p] = mean(curve[max(0, p - window + 1) .. p])."""
    if window < 1:
        raise UsageError(f"smoothing window must be >= 1, got {window}")
    out, acc = [], 0.0
    for p, x in enumerate(curve):
        acc += x
        if p >= window:
            acc -= curve[p - window]
        out.append(acc / min(p + 1, window))
    return out


def break_point(loss: Sequence[float], train_len: int, margin: float = BREAK_MARGIN,
                window: int | None = None) -> int | None:
    """First position p >= T where the trailing-mean loss exceeds the in-range loss by ``margin``.

    Reference: mean of loss[T/2 : T]; window defaults to T/4 (see the module docstring).
    Returns None when the loss never breaks within ``len(loss)`` positions.
    """
    t = int(train_len)
    if t < 4 or len(loss) < t:
        raise UsageError(f"the curve ({len(loss)} positions) must cover the training length {t} (>= 4)")
    ref = sum(loss[t // 2: t]) / (t - t // 2)
    sm = smoothed(list(loss), window or max(1, t // 4))
    for p in range(t, len(loss)):
        if sm[p] > ref + margin:
            return p
    return None


def steepest_rise(loss: Sequence[float], train_len: int, window: int | None = None) -> tuple[int, float] | None:
    """(p, rise): the position p >= T where the mean loss over [p, p + s) exceeds the mean over
    [p - s, p) by the most (s = T/4 by default, the break rule's window), and that excess in nats.

    A two-window change point: for a step of height h at p0 on a flat curve the rise is h at
    p = p0 exactly and less elsewhere. Positions p with p - s >= T/2 and p + s <= len(loss) are
    scanned from T on; None when there is none. A reading of the curve, not the break rule.
    """
    t = int(train_len)
    s = window or max(1, t // 4)
    if t < 4 or len(loss) < t:
        raise UsageError(f"the curve ({len(loss)} positions) must cover the training length {t} (>= 4)")
    prefix = [0.0]
    for x in loss:
        prefix.append(prefix[-1] + x)
    best = None
    for p in range(max(t, t // 2 + s), len(loss) - s + 1):
        rise = (prefix[p + s] - prefix[p]) / s - (prefix[p] - prefix[p - s]) / s
        if best is None or rise > best[1]:
            best = (p, rise)
    return best


def agreement(predicted: float, measured: int | None, tested: int) -> tuple[str, float | None]:
    """("agrees" | "earlier" | "later", measured/predicted) under the rule of the module docstring.

    ``tested``: the longest position measured (a bound beyond it cannot be seen break).
    """
    if measured is None:
        if predicted >= tested:
            return "agrees", None
        return "later", None  # predicted a break inside the tested range, none seen
    if not math.isfinite(predicted):
        return "earlier", None
    ratio = measured / predicted
    if 1 / AGREEMENT_FACTOR <= ratio <= AGREEMENT_FACTOR:
        return "agrees", ratio
    return ("earlier" if ratio < 1 else "later"), ratio


def band_means(values: Sequence[float], edges: Sequence[int]) -> list[float]:
    """Means of ``values`` over [edges[i], edges[i+1])."""
    out = []
    for lo, hi in pairwise(edges):
        if not 0 <= lo < hi <= len(values):
            raise UsageError(f"band [{lo}, {hi}) outside 0..{len(values)}")
        out.append(sum(values[lo:hi]) / (hi - lo))
    return out


def ordering_agreement(ours: dict[str, float], seed: dict[str, float], min_gap: float = 1.0) -> list[dict]:
    """Pairwise orderings: for every pair of labels in both tables whose seed values differ by at
    least ``min_gap`` (percentage points), does ours order them the same way?

    Returns one dict per pair: ``higher`` / ``lower`` (the seed's order), the seed gap, our
    gap (ours[higher] - ours[lower]) and ``match`` (our gap > 0).
    """
    labels = [k for k in seed if k in ours]
    rows = []
    for i, a in enumerate(labels):
        for b in labels[i + 1:]:
            gap = seed[a] - seed[b]
            if abs(gap) < min_gap:
                continue
            hi, lo = (a, b) if gap > 0 else (b, a)
            rows.append({"higher": hi, "lower": lo, "seed_gap": round(abs(gap), 2),
                         "our_gap": round(ours[hi] - ours[lo], 2), "match": ours[hi] > ours[lo]})
    return rows
