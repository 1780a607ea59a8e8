"""One place for each decision (issue 37): the JSON encoding of non-finite numbers, the scaling-factor
and context limits, the config spellings of scheme names, the spellings of products in rotary code.
Each test reads the package's source and fails if a second place decides the same thing again."""

from __future__ import annotations

import ast
import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "ropelaw"


def _sources() -> dict[str, str]:
    return {str(p.relative_to(PACKAGE)): p.read_text(encoding="utf-8") for p in sorted(PACKAGE.rglob("*.py"))}


def _assignments(name: str) -> list[str]:
    """The modules assigning a value to the module-level name ``name`` (other than importing it)."""
    out = []
    for rel, text in _sources().items():
        for node in ast.parse(text).body:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target] \
                if isinstance(node, ast.AnnAssign) else []
            if any(isinstance(t, ast.Name) and t.id == name for t in targets):
                out.append(rel)
    return out


def test_json_infinity_is_decided_by_jsonout_only():
    """Every JSON document goes through ``jsonout.dumps`` / ``json_safe`` (inf and NaN -> null, allow_nan=False as
    a guard); no module calls ``json.dumps`` with ``allow_nan`` itself or wraps json_safe in a helper of its own."""
    offenders = {rel for rel, text in _sources().items()
                 if rel != "jsonout.py" and re.search(r"allow_nan\s*=", text) and rel != "commands/experiment.py"}
    assert offenders == set()
    report = (PACKAGE / "report.py").read_text(encoding="utf-8")
    assert "json.dumps(doc" not in report  # SARIF: jsonout.dumps as well
    assert "def _clean(" not in (PACKAGE / "lint" / "check.py").read_text(encoding="utf-8")


def test_experiment_json_gives_json_safe_values_to_its_compact_writer():
    """commands/experiment.py writes its result with its own indentation (a loss curve on one line): the values
    are json_safe'd first, so allow_nan=False there is a guard, not a second decision."""
    text = (PACKAGE / "commands" / "experiment.py").read_text(encoding="utf-8")
    assert "compact_json(json_safe(result))" in text


def test_a_non_finite_number_is_null_in_every_json_writer():
    import json

    from ropelaw.findings import Finding, get_rule
    from ropelaw.report import JsonStream, render_json, render_sarif

    f = Finding.of(get_rule("RL101"), "m", path="a.json", length=float("inf"), other=float("nan"))
    assert json.loads(render_json([f]))[0]["data"] == {"length": None, "other": None}
    json.loads(render_sarif([f], "0"))

    class Out:
        text = ""

        def write(self, s):
            Out.text += s

        def flush(self):
            pass

    s = JsonStream(Out())
    s.value("bound", {"x": float("inf")})
    s.begin_list("configs")
    s.item({"y": float("-inf")})
    s.end_list()
    s.close()
    assert json.loads(Out.text) == {"bound": {"x": None}, "configs": [{"y": None}]}


def test_limits_are_defined_in_limits_only():
    from ropelaw import limits
    from ropelaw.lint.rules import values

    for name in ("MAX_CONTEXT", "MAX_FACTOR", "MAX_D", "MAX_LENGTH"):
        assert _assignments(name) == ["limits.py"], name
    assert not _assignments("MAX_WHOLE_FACTOR")  # plan's copy of the factor limit
    assert limits.MAX_FACTOR == 2**20 and limits.MAX_CONTEXT == 2**31 - 1
    assert values.MAX_FACTOR is limits.MAX_FACTOR
    # a factor of 2**20 on the shortest pre-training context in the corpus (2,048) designs 2**31 tokens
    assert limits.MAX_FACTOR * 2048 == limits.MAX_CONTEXT + 1
    literal = re.compile(r"(?<![\w.])(2\s*\*\*\s*20|2\s*\*\*\s*31|1\s*<<\s*31|2147483647|2_147_483_647)(?![\w.])")
    code_lines = [(rel, line) for rel, text in _sources().items() if rel != "limits.py"
                  for line in text.splitlines() if literal.search(line.split("#")[0])
                  and not line.lstrip().startswith(("#", '"', "'"))]
    assert code_lines == []


def test_plan_searches_whole_factors_up_to_lints_limit():
    import inspect

    from ropelaw import limits, plan_options

    assert inspect.signature(plan_options.smallest_whole).parameters["limit"].default == limits.MAX_FACTOR


def test_scheme_spellings_of_configs_are_one_table():
    """``lint.model.SCHEME_ALIASES`` (read by canonical_scheme) is the one table of a config's spellings; the
    ``Dialect.scheme_aliases`` field that repeated it was never read and is gone. Its targets are registry names."""
    from dataclasses import fields

    from ropelaw.lint.dialects import Dialect
    from ropelaw.lint.model import SCHEME_ALIASES, canonical_scheme
    from ropelaw.schemes import SCHEMES

    assert "scheme_aliases" not in {f.name for f in fields(Dialect)}
    assert _assignments("SCHEME_ALIASES") == ["lint/model.py"]
    assert all(SCHEMES[target].name == target for target in SCHEME_ALIASES.values())
    assert canonical_scheme("SU") == "longrope" and canonical_scheme(None) == "default"


def test_product_spellings_come_from_the_precision_policy():
    """The static checker's sets of product calls are drawn from ``policy.PYTHON_PRODUCTS`` (spelling -> the ATen
    op autocast sees), not typed again."""
    from ropelaw.audit import policy
    from ropelaw.audit.static import names

    sets = {"MATMUL_FUNCS": {"matmul", "mm", "bmm", "mv"},
            "ADD_PRODUCTS": {"addr", "baddbmm", "addmm", "addbmm", "addmv"},
            "ELEMENTWISE_PRODUCTS": {"outer", "ger", "mul", "multiply"}}
    for name, spelled in sets.items():
        assert getattr(names, name) == spelled, name  # the same sets as before they were derived
        assert spelled <= set(policy.PYTHON_PRODUCTS)
    text = (PACKAGE / "audit" / "static" / "names.py").read_text(encoding="utf-8")
    assert not re.search(r'^(MATMUL_FUNCS|ADD_PRODUCTS|ELEMENTWISE_PRODUCTS) = \{', text, re.M)


def test_rule_selection_flags_are_declared_and_parsed_in_one_place():
    """--select / --extend-select / --ignore: declared by commands/_common.add_rule_selection, split and checked
    by findings.parse_selectors, for every command that has them (lint, audit code)."""
    declared = {rel for rel, text in _sources().items() if re.search(r"add_argument\(\s*\"--(select|ignore)\"", text)}
    assert declared == {"commands/_common.py"}
    parsed = {rel for rel, text in _sources().items() if re.search(r"\.select\b.*split\(|split\(\",\"\).*select", text)}
    assert parsed == set()
    from ropelaw.findings import parse_selectors

    assert parse_selectors(["RV001,rl", " RP2 "], "--select") == ["RV001", "rl", "RP2"]
