"""The published numbers the toy experiments are compared with (orderings, not values).

Token accuracy in %, (at the training length 512, at 4096 repeated, at 4096 non-repeated),
of a 100M-parameter GAU model trained at 512 tokens (Su's setup; 8x extrapolation).

- Seed 000: Su, "Transformer升级之路:12、无限外推的ReRoPE?", kexue.fm/archives/9708,
  three tables (main, ReRoPE window ablation, Leaky ReRoPE).
- Seed 003: Su, "Transformer升级之路:15、Key归一化助力长度外推", kexue.fm/archives/9859,
  two tables (KeyNorm; KeyNorm with NTK / YaRN / ReRoPE on top).

Labels use the seed's names with the window as a fraction of the training length
(w64 = T/8 ... w512 = T at T = 512), so that a toy trained at T = 128 maps onto them.
"NTK" is the seed's NTK-RoPE-fixed (base b*s^(d/(d-2)), ropelaw's ``ntk`` scheme);
"log n" is trained in, "log n†" is applied at test only. The ReRoPE of seed 003's second
table is w = 128 = T/4 (its Baseline-ReRoPE row equals seed 000's ReRoPE-w128).
"""

from __future__ import annotations

__all__ = ["SEED_000", "SEED_003", "SEED_001_CLAIMS", "window_label"]

# seed 000, kexue.fm/archives/9708 (YaRN rows: seed 003's Baseline-YaRN and Baseline-log n-YaRN)
SEED_000: dict[str, tuple[float, float, float]] = {
    "Baseline": (49.41, 24.17, 23.16),
    "Baseline-log n": (49.40, 24.60, 24.02),
    "PI": (49.41, 15.04, 13.54),
    "PI-log n": (49.40, 14.99, 16.51),
    "NTK": (49.41, 51.86, 39.61),
    "NTK-log n†": (49.41, 55.94, 41.11),
    "NTK-log n": (49.40, 62.85, 44.14),
    "YaRN": (49.41, 80.10, 47.45),
    "YaRN-log n": (49.40, 82.57, 46.52),
    "ReRoPE-w=T/8": (49.41, 69.39, 45.19),
    "ReRoPE-w=T/8-log n†": (49.41, 78.58, 47.42),
    "ReRoPE-w=T/8-log n": (49.40, 84.38, 48.14),
    "ReRoPE-w=T/4": (49.41, 76.11, 47.82),
    "ReRoPE-w=T/4-log n†": (49.41, 82.28, 48.78),
    "ReRoPE-w=T/4-log n": (49.40, 85.47, 48.87),
    "ReRoPE-w=T/2": (49.41, 77.90, 48.48),
    "ReRoPE-w=T/2-log n†": (49.41, 82.40, 48.85),
    "ReRoPE-w=T/2-log n": (49.40, 85.12, 49.07),
    "ReRoPE-w=3T/4": (49.41, 70.72, 48.15),
    "ReRoPE-w=3T/4-log n†": (49.41, 76.42, 48.31),
    "ReRoPE-w=3T/4-log n": (49.40, 83.24, 48.62),
    "ReRoPE-w=T": (49.41, 7.09, 8.25),
    "ReRoPE-w=T-log n†": (49.41, 7.08, 8.25),
    "ReRoPE-w=T-log n": (49.40, 15.84, 10.83),
    "Leaky ReRoPE-w=T/4-k64-log n": (49.40, 85.29, 48.96),
    "Leaky ReRoPE-w=T/4-k32-log n": (49.40, 85.31, 49.03),
    "Leaky ReRoPE-w=T/4-k16-log n": (49.40, 85.15, 49.10),
    "Leaky ReRoPE-w=T/4-k8-log n": (49.40, 80.00, 48.11),
    "Leaky ReRoPE-w=T/2-k64-log n": (49.40, 84.60, 49.03),
    "Leaky ReRoPE-w=T/2-k32-log n": (49.40, 84.30, 48.97),
    "Leaky ReRoPE-w=T/2-k16-log n": (49.40, 83.59, 48.87),
    "Leaky ReRoPE-w=T/2-k8-log n": (49.40, 69.80, 45.72),
}

# seed 003, kexue.fm/archives/9859 (both tables; "-ReRoPE" is w = T/4)
SEED_003: dict[str, tuple[float, float, float]] = {
    "Baseline": (49.41, 24.17, 23.16),
    "Baseline-NTK": (49.41, 60.57, 42.20),
    "Baseline-YaRN": (49.41, 80.10, 47.45),
    "Baseline-ReRoPE": (49.41, 76.11, 47.82),
    "Baseline-log n": (49.40, 24.60, 24.02),
    "Baseline-log n-NTK": (49.40, 75.86, 47.06),
    "Baseline-log n-YaRN": (49.40, 82.57, 46.52),
    "Baseline-log n-ReRoPE": (49.40, 85.47, 48.87),
    "QNA": (49.55, 22.45, 22.18),
    "QNA-NTK": (49.55, 52.28, 39.88),
    "QNA-YaRN": (49.55, 82.53, 47.50),
    "QNA-ReRoPE": (49.55, 78.22, 47.72),
    "QNA-log n": (49.42, 19.55, 18.74),
    "QNA-log n-NTK": (49.42, 57.44, 41.56),
    "QNA-log n-YaRN": (49.42, 80.08, 45.16),
    "QNA-log n-ReRoPE": (49.42, 84.71, 48.31),
    "KNA": (49.60, 61.08, 47.69),
    "KNA-NTK": (49.60, 64.44, 43.02),
    "KNA-YaRN": (49.60, 84.19, 47.44),
    "KNA-ReRoPE": (49.60, 77.76, 47.73),
    "KNA-log n": (49.58, 63.17, 46.40),
    "KNA-log n-NTK": (49.58, 79.05, 47.43),
    "KNA-log n-YaRN": (49.58, 83.95, 47.16),
    "KNA-log n-ReRoPE": (49.58, 85.48, 48.78),
    "CosA": (49.73, 58.90, 46.98),
    "CosA-NTK": (49.73, 62.50, 42.77),
    "CosA-YaRN": (49.73, 83.40, 47.80),
    "CosA-ReRoPE": (49.73, 77.82, 47.80),
    # the first table prints 48.95 non-repeated for CosA-log n, the second 48.39; the second is used
    "CosA-log n": (49.67, 64.74, 48.39),
    "CosA-log n-NTK": (49.67, 78.97, 47.46),
    "CosA-log n-YaRN": (49.67, 82.28, 45.72),
    "CosA-log n-ReRoPE": (49.67, 85.67, 48.39),
}

# seed 001 (Liu et al. 2023, arXiv 2310.05209): what continued training at a new base shows
SEED_001_CLAIMS = (
    "above the critical base, the loss stays flat up to a bound and then rises sharply; "
    "the bound grows with the base",
    "below the critical base, the loss rises past the tuning length without a sharp bound, "
    "the more slowly the smaller the base",
)


def window_label(window: int, train_len: int) -> str:
    """``w=T/4`` for window 32 at T = 128 (the seed's windows as fractions of T); else ``w=32``."""
    for num, den, text in ((1, 8, "T/8"), (1, 4, "T/4"), (1, 2, "T/2"), (3, 4, "3T/4"), (1, 1, "T")):
        if window * den == train_len * num:
            return f"w={text}"
    return f"w={window}"
