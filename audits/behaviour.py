"""What the committed reports' results depend on, measured on inputs committed with the project.

A report is stale when the auditor would now give different results on its target. Where the
target's code is on this machine (``audits/_work/site/<target>`` after ``python audits/run.py``),
``tests/test_audits_reports.py`` re-runs the static scan and the short runtime audits and compares
them with the report. Where it is not (CI: the targets' code is never committed), results are
pinned through what determines them, re-measured on committed inputs:

- the audit rule set: code, name and severity of every RP rule and of the audit's own RE0xx rules
  (``ropelaw rule --all``; RE1xx are the linter's);
- the static scan's findings (code, line, column) on every file of ``tests/fixtures/static``;
- the runtime audit (convention, layout, rotary dims; per scenario exact / distinct / path) of the
  committed runtime fixtures in :data:`RUNTIME_FIXTURES` at bf16, 2,048 positions.

``python audits/run.py`` writes this snapshot to ``audits/reports/_auditor.json`` with the reports;
the test recomputes it. A change of the auditor's behaviour on these inputs fails the test until the
reports are regenerated; a refactor that keeps the behaviour does not.
"""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

# committed runtime fixtures, one per calling convention and evidence path (tests/fixtures/runtime);
# not torchtitan's complex cache: torch warns "discards the imaginary part" once per process, and
# tests/test_audit_runtime_frameworks.py checks that the audit records that warning
RUNTIME_FIXTURES = (
    "frameworks.py:megatron_rotary", "frameworks.py:litgpt_rope_cache", "frameworks.py:torchtitan_precompute_freqs_cis",
    "frameworks.py:nanotron_rotary", "frameworks.py:vllm_forward_native", "frameworks.py:flash_rotary",
    "frameworks.py:megatron_positions_bf16",
    "frameworks.py:litgpt_positions_bf16", "frameworks.py:vllm_positions_bf16",
    "rotary.py:legacy_buggy", "rotary.py:current_positions_buggy", "rotary.py:current_frequencies_buggy",
    "rotary.py:current_product_buggy", "gpt_neox_legacy.py:gpt_neox_rotary_512",
    # issue 33: 2x2 rotation matrices, a 2-D axial layout (refused), angles rounded after a float32 product
    "layouts.py:flux_rope_factory", "layouts.py:axial_2d", "layouts.py:xpos_rounded_angles",
)
LENGTH = 2048


def rule_set() -> list[list[str]]:
    from ropelaw.findings import all_rules

    return sorted([r.code, r.name, r.severity] for r in all_rules() if r.code.startswith(("RP", "RE0")))


def static_fixtures(root: Path) -> dict[str, list[list[Any]]]:
    from ropelaw.audit.static import scan_file

    out = {}
    for f in sorted((root / "tests" / "fixtures" / "static").glob("*.py")):
        out[f.name] = sorted([fd.code, fd.line, fd.column] for fd in scan_file(str(f)))
    return out


def runtime_fixtures(root: Path) -> dict[str, Any]:
    from ropelaw.audit.runtime import audit_module

    out: dict[str, Any] = {}
    for spec in RUNTIME_FIXTURES:
        file, name = spec.split(":")
        target = f"{root / 'tests' / 'fixtures' / 'runtime' / file}:{name}"
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            try:
                a = audit_module(target, "bf16", LENGTH)
            except Exception as exc:  # recorded as such: a change in what raises is a change too
                out[spec] = {"error": type(exc).__name__}
                continue
        out[spec] = {"convention": a.convention, "layout": a.layout, "rotary_dim": a.rotary_dim,
                     "scenarios": [[s.scenario, s.exact, s.distinct, s.path] for s in a.scenarios],
                     "findings": sorted(f.code for f in a.findings)}
    return out


def snapshot(root: Path) -> dict[str, Any]:
    return {"rules": rule_set(), "static_fixtures": static_fixtures(root), "runtime_fixtures": runtime_fixtures(root)}


def diff(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """Human-readable differences (for the test's message)."""
    out = []
    for part in ("rules", "static_fixtures", "runtime_fixtures"):
        a, b = old.get(part), new.get(part)
        if a == b:
            continue
        if isinstance(a, dict) and isinstance(b, dict):
            for k in sorted(set(a) | set(b)):
                if a.get(k) != b.get(k):
                    out.append(f"{part} {k}: {json.dumps(a.get(k))} -> {json.dumps(b.get(k))}")
        else:
            sa, sb = {tuple(x) for x in a or []}, {tuple(x) for x in b or []}
            out.append(f"{part}: removed {sorted(sa - sb)}, added {sorted(sb - sa)}")
    return out
