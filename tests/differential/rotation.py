"""A rotary's per-pair angle, measured from what it does to unit vectors (whatever its layout: halves,
interleaved, a permuted output)."""

from __future__ import annotations

import math

import numpy as np


def pair_angles(y0, y1) -> list[float]:
    """Each pair's rotation per token, fastest first, from the images of the unit vectors e_0 .. e_{d-1} at
    positions 0 (``y0``, shape (d, d): row a is e_a's image) and 1 (``y1``): the angle between a vector's two
    images, ``atan2(|y1 - (y1.y0 / |y0|^2) y0|, y1.y0 / |y0|)`` scaled to unit length (the perpendicular part is
    computed directly, so a pair turning 1e-7 rad per token is measured to its float32 precision). Both members
    of a pair turn alike, so the sorted angles come in twos: every other one is returned."""
    y0, y1 = np.asarray(y0, dtype=np.float64), np.asarray(y1, dtype=np.float64)
    n0 = np.linalg.norm(y0, axis=1)
    along = np.sum(y0 * y1, axis=1) / n0  # |y1| cos(theta)
    perp = np.linalg.norm(y1 - (along / n0)[:, None] * y0, axis=1)  # |y1| sin(theta)
    angles = sorted((math.atan2(s, c) for s, c in zip(perp, along, strict=True)), reverse=True)
    return angles[::2]
