"""Regenerate ``ropelaw/data/plan_evidence.json``: what ropelaw's own experiments measured for each
option of ``ropelaw plan``, read from the committed results in ``docs/experiments/*.json``.

    python scripts/plan_evidence.py            # rewrite the table
    python scripts/plan_evidence.py --check    # exit 1 when it is out of date (tests/test_plan_evidence.py)

Per entry: ``low``-``high`` is the measured break over the predicted bound (the break rule of
``ropelaw.experiments.metrics.break_point``; a row agrees within a factor 1.5), over every committed
run (every size and seed), with the rows and how many agree:

- ``law``: plain RoPE above the critical base (Liu et al.'s ``2*pi*beta^(d_extra/d)``), the bound
  sweep (``bound-sweep-*.json``, four (d, T) pairs): the range of its per-size medians (the sweep's
  ``summary.median_min`` / ``median_max``), as docs/scaling-laws.md reads it ("0.65-1.53");
- ``tuning_length``: plain RoPE at or below the critical base, where the bound is the tuning length
  (the ``at_or_below_critical_base`` rows of ``bound-full.json`` and ``bound-quick-9bases.json``, and
  plain RoPE's rows of the schemes runs): min and max of the rows;
- ``linear``, ``ntk``, ``dynamic``, ``yarn``, ``llama3``: the rows of ``schemes-*.json`` (factors 4 and
  8, at inference and after continued training): min and max of the rows;
- ``rerope``, ``leaky_rerope``: the extrapolation runs (``extrapolation-*.json``) measure accuracy at 8T,
  not a break: no ratio; the accuracy ranges are kept for the text.

``verdict``: ``predicted`` when at least 3 in 4 rows agree, ``partly`` when some do, ``not predicted``
when none does, ``not measured`` without rows. The plan ranks by it (``ropelaw.evidence``).
"""

from __future__ import annotations

import glob
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RESULTS = os.path.join(ROOT, "docs", "experiments")
OUT = os.path.join(ROOT, "ropelaw", "data", "plan_evidence.json")
SCHEMES = ("linear", "ntk", "dynamic", "yarn", "llama3")


def _runs(pattern: str) -> list[tuple[str, dict]]:
    out = []
    for path in sorted(glob.glob(os.path.join(RESULTS, pattern))):
        with open(path, encoding="utf-8") as fh:
            out.append((os.path.basename(path), json.load(fh)))
    return out


def verdict(rows: int, agree: int) -> str:
    if rows == 0:
        return "not measured"
    if 4 * agree >= 3 * rows:
        return "predicted"
    return "partly" if agree else "not predicted"


def _entry(files: list[str], ratios: list[float], agree: int, rows: int, low=None, high=None, **extra) -> dict:
    return {"low": round(min(ratios) if low is None else low, 3), "high": round(max(ratios) if high is None else high,
                                                                                3),
            "rows": rows, "agree": agree, "verdict": verdict(rows, agree), "runs": files, **extra}


def law() -> dict:
    runs = _runs("bound-sweep-*.json")
    rows = [r for _, d in runs for r in d["rows"]]
    ratios = [r["ratio"] for r in rows if r["ratio"] is not None]
    return _entry([f for f, _ in runs], ratios, sum(r["agreement"] == "agrees" for r in rows), len(rows),
                  low=min(d["summary"]["median_min"] for _, d in runs),
                  high=max(d["summary"]["median_max"] for _, d in runs), measure="per-size medians")


def tuning_length() -> dict:
    runs = _runs("bound-full.json") + _runs("bound-quick-9bases.json")
    rows = [r for _, d in runs for r in d["rows"] if r["regime"] == "at_or_below_critical_base"]
    schemes = _runs("schemes-*.json")
    rows += [r for _, d in schemes for r in d["rows"] if r["scheme"] == "default"]
    ratios = [r["ratio"] for r in rows]
    return _entry([f for f, _ in runs + schemes], ratios, sum(r["agreement"] == "agrees" for r in rows), len(rows),
                  measure="rows")


def scheme(name: str) -> dict:
    runs = _runs("schemes-*.json")
    rows = [r for _, d in runs for r in d["rows"] if r["scheme"] == name]
    cost = max(r["in_range_cost"] for r in rows if r["training"] == "inference")
    return _entry([f for f, _ in runs], [r["ratio"] for r in rows], sum(r["agreement"] == "agrees" for r in rows),
                  len(rows), measure="rows", in_range_cost_at_inference=round(cost, 3))


def windows() -> dict:
    """ReRoPE and Leaky ReRoPE: accuracy at 8T (non-repeated, %) against plain RoPE's, every run."""
    runs = _runs("extrapolation-*.json")
    out = {}
    for method in ("rerope", "leaky_rerope"):
        acc = [r["nonrepeated_accuracy"] for _, d in runs for r in d["rows"] if r["method"] == method]
        base = [r["nonrepeated_accuracy"] for _, d in runs for r in d["rows"]
                if r["method"] == "baseline" and r["logn"] == "none"]
        out[method] = {"low": None, "high": None, "rows": 0, "agree": 0, "verdict": "not measured",
                       "runs": [f for f, _ in runs], "measure": "accuracy at 8T",
                       "accuracy": [min(acc), max(acc)], "plain_accuracy": [min(base), max(base)],
                       "test_over_train": runs[0][1]["test_len"] // runs[0][1]["train_len"]}
    return out


def table() -> dict:
    options = {"law": law(), "tuning_length": tuning_length(), **{s: scheme(s) for s in SCHEMES}, **windows()}
    return {"generated_by": "python scripts/plan_evidence.py", "source": "docs/experiments/*.json",
            "break_rule": "first position where the trailing mean loss over T/4 exceeds the mean over [T/2, T) "
                          "by 0.2 nats; agrees within a factor 1.5 of the bound", "options": options}


def render() -> str:
    from ropelaw import data

    return data.dump(table(), sort_keys=True)


def main(argv: list[str]) -> int:
    sys.path.insert(0, ROOT)
    text = render()
    if argv == ["--check"]:
        with open(OUT, encoding="utf-8") as fh:
            stale = fh.read() != text
        if stale:
            print("ropelaw/data/plan_evidence.json is out of date: python scripts/plan_evidence.py", file=sys.stderr)
        return 1 if stale else 0
    from ropelaw import data

    data.write("plan_evidence", table(), sort_keys=True)
    print(f"{os.path.relpath(OUT, ROOT)}: {len(table()['options'])} entries")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
