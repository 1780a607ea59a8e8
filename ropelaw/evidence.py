"""What ropelaw's own experiments measured for each option of ``ropelaw plan``.

The table ``ropelaw/data/plan_evidence.json`` is generated from the committed results in
``docs/experiments/*.json`` by ``scripts/plan_evidence.py`` (see there for what each entry
aggregates; ``tests/test_plan_evidence.py`` checks it against its source). Each entry gives the
measured break over the predicted bound on ropelaw's toy model (``low`` .. ``high``), how many rows
agree with the prediction (within a factor 1.5, the rule fixed before the runs) and a verdict:
``predicted``, ``partly``, ``not predicted`` or ``not measured``. ``ropelaw plan`` ranks options by
the verdict, prints the range beside each bound and cites the runs.

Which entry an option draws on: plain RoPE (the current setup, a larger base, continued training)
by its regime, ``law`` above the critical base (Liu et al.'s ``2*pi*beta^(d_extra/d)``), else
``tuning_length`` (the bound is the tuning length); NTK-aware (written as its base) ``ntk``; every
other scheme its own entry; LongRoPE none.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

from .data import read as read_table

__all__ = ["Evidence", "evidence_for", "VERDICT_RANK", "table"]

VERDICT_RANK = {"predicted": 0, "partly": 1, "not measured": 2, "not predicted": 3}
_WHAT = {"law": "the bound sweep (4 sizes x 2 seeds)", "tuning_length": "the bound runs at or below the critical base",
         "rerope": "the extrapolation runs", "leaky_rerope": "the extrapolation runs"}


@functools.lru_cache(maxsize=1)
def table() -> dict:
    return read_table("plan_evidence")["options"]


@dataclass(frozen=True)
class Evidence:
    """One entry of the table: measured break / predicted bound on the toy, and the verdict."""

    key: str
    low: float | None
    high: float | None
    rows: int
    agree: int
    verdict: str
    runs: tuple
    accuracy: tuple | None = None  # ReRoPE / Leaky ReRoPE: accuracy at 8T (%), and plain RoPE's
    plain_accuracy: tuple | None = None

    def range_text(self) -> str:
        """``0.65-1.53``: the stored three-digit ratios to two decimals, rounded half up."""
        from decimal import ROUND_HALF_UP, Decimal

        two = [Decimal(repr(x)).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP) for x in (self.low, self.high)]
        return f"{two[0]}-{two[1]}"

    @property
    def rank(self) -> int:
        return VERDICT_RANK[self.verdict]

    def tokens(self, bound: float) -> tuple[int, int] | None:
        """The measured range in tokens for a bound: ``(floor(low * bound), floor(high * bound))``."""
        if self.low is None or self.high is None or not math.isfinite(bound):
            return None
        return math.floor(self.low * bound), math.floor(self.high * bound)

    def text(self) -> str:
        """One line for the caveats, naming the runs."""
        where = _WHAT.get(self.key, "the schemes runs (factors 4 and 8, 3 runs)")
        files = "docs/experiments/" + ", ".join(self.runs)
        if self.low is None:
            if self.accuracy is None:
                return "not measured by ropelaw's experiments"
            if self.plain_accuracy is None:  # the table states both (scripts/plan_evidence.py)
                raise ValueError(f"plan_evidence {self.key}: accuracy without plain RoPE's")
            return (f"no bound measured: accuracy at 8T {self.accuracy[0]:g}-{self.accuracy[1]:g}% against "
                    "plain RoPE's "
                    f"{self.plain_accuracy[0]:g}-{self.plain_accuracy[1]:g}% ({where}; {files})")
        said = {"predicted": "predicted", "partly": "partly predicted",
                "not predicted": "not predicted: breaks earlier"}
        tail = "; read the bound as an upper limit" if self.verdict == "not predicted" else ""
        return (f"{said[self.verdict]}: the toy broke at {self.range_text()} of its bound, {self.agree} of "
                f"{self.rows} rows within a factor 1.5 ({where}; {files}){tail}")

    def to_dict(self) -> dict:
        return {"entry": self.key, "low": self.low, "high": self.high, "rows": self.rows, "agree": self.agree,
                "verdict": self.verdict, "runs": [f"docs/experiments/{f}" for f in self.runs], "text": self.text()}


def evidence_for(name: str, scheme: str, regime: str) -> Evidence:
    """The entry for option ``name`` whose spec runs ``scheme`` in ``regime`` (``theory`` regimes)."""
    if name == "ntk":
        key = "ntk"
    elif scheme == "default":
        key = "law" if regime == "above_critical_base" else "tuning_length"
    else:
        key = scheme
    e = table().get(key)
    if e is None:
        return Evidence(key, None, None, 0, 0, "not measured", ())
    return Evidence(key, e["low"], e["high"], e["rows"], e["agree"], e["verdict"], tuple(e["runs"]),
                    tuple(e["accuracy"]) if e.get("accuracy") else None,
                    tuple(e["plain_accuracy"]) if e.get("plain_accuracy") else None)
