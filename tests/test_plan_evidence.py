"""``ropelaw/data/plan_evidence.json`` (what ``plan`` ranks by and prints beside each bound) against its
source, the committed experiment results in ``docs/experiments/*.json``: regenerated exactly by
``scripts/plan_evidence.py``, and the figures the docs and the issue quote recomputed here from the raw
rows by a separate reading."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "docs" / "experiments"


def rows(pattern: str):
    for path in sorted(RESULTS.glob(pattern)):
        yield from json.loads(path.read_text())["rows"]


def test_table_is_fresh():
    proc = subprocess.run([sys.executable, "scripts/plan_evidence.py", "--check"], cwd=ROOT, capture_output=True,
                          text=True)
    assert proc.returncode == 0, proc.stderr


def test_figures_against_the_raw_rows():
    from ropelaw.evidence import evidence_for, table

    t = table()
    dyn = [r["ratio"] for r in rows("schemes-*.json") if r["scheme"] == "dynamic"]
    assert (min(dyn), max(dyn), len(dyn)) == (t["dynamic"]["low"], t["dynamic"]["high"], 12) == (0.211, 0.542, 12)
    assert all(r["agreement"] == "earlier" for r in rows("schemes-*.json") if r["scheme"] == "dynamic")
    assert t["dynamic"]["verdict"] == "not predicted" and t["ntk"]["verdict"] == "predicted"
    ntk = [r for r in rows("schemes-*.json") if r["scheme"] == "ntk"]
    assert all(r["agreement"] == "agrees" for r in ntk) and len(ntk) == 12
    medians = [json.loads(p.read_text())["summary"] for p in sorted(RESULTS.glob("bound-sweep-*.json"))]
    assert (min(m["median_min"] for m in medians), max(m["median_max"] for m in medians)) == (0.647, 1.526)
    law = evidence_for("base", "default", "above_critical_base")
    assert law.range_text() == "0.65-1.53" and law.tokens(100000) == (64700, 152600)
    assert evidence_for("dynamic", "dynamic", "above_critical_base").range_text() == "0.21-0.54"
    assert evidence_for("current", "default", "at_or_below_critical_base").key == "tuning_length"
    assert evidence_for("ntk", "default", "above_critical_base").key == "ntk"  # NTK-aware written as its base
    assert evidence_for("longrope", "longrope", "above_critical_base").verdict == "not measured"
    ext = [r["nonrepeated_accuracy"] for r in rows("extrapolation-*.json") if r["method"] == "rerope"]
    assert t["rerope"]["accuracy"] == [min(ext), max(ext)]
