"""Fuzz suite of issue 12 (runs in CI, well under 2 minutes): every class of hostile input.

Part 1 runs the generators of ``tests/hostile_cases.py`` (the same ones the hand-run sweep
``benchmarks/hostile_sweep.py`` runs at full size in subprocesses) in-process through
``ropelaw.cli.main``: each case must end with an allowed exit code, never a traceback or an
internal error (exit 3), one line on stderr for exit 2, no raw control character in text output.
Part 2 is hypothesis over the two readers with the widest input: safetensors headers (any JSON)
and YAML documents with anchors and aliases. ``test_report_cases`` prints how many cases ran
(shown with ``-s``; the count is also asserted).
"""

from __future__ import annotations

import json
import os
import struct
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import hostile_cases as H
from ropelaw.cli import main
from ropelaw.errors import UsageError

RAN: Counter = Counter()
PER_CLASS = {"checkpoint-memory": 10, "safetensors-header": 40, "torch-valid": 10, "lint": 36, "non-regular": 16,
             "audit-code": 16, "output-forgery": 12, "cli-arguments": 30, "audit-module": 9,
             "checkpoint-garbage": 10,  # all 50: test_hostile_checkpoint.py
             "reader-time": 17, "reader-memory": 8, "internal-errors": 12, "partial-scans": 6, "scan-scale": 5,
             "wrong-results": 5}
CASES = H.all_cases(seed=12, per_class=PER_CLASS, scale="ci")


def _run_case(case: H.Case, tmp_path, capsys) -> list[str]:
    case.write(tmp_path)
    try:
        code = main(case.args(tmp_path))
    except SystemExit as exc:  # argparse's exit for a bad option value
        code = exc.code if isinstance(exc.code, int) else 2
    out, err = capsys.readouterr()
    return H.problems(case, code, out, err)


@pytest.mark.parametrize("cls", H.CLASSES)
def test_hostile_class(cls, tmp_path_factory, capsys, monkeypatch):
    if cls in ("checkpoint-memory", "torch-valid", "audit-module", "checkpoint-garbage", "reader-memory",
               "internal-errors"):
        pytest.importorskip("torch")
    if cls == "non-regular" and not hasattr(os, "mkfifo"):
        pytest.skip("needs FIFOs")
    monkeypatch.delenv("ROPELAW_DEBUG", raising=False)
    cases = [c for c in CASES if c.cls == cls]
    assert len(cases) == PER_CLASS[cls]
    failures = []
    for case in cases:
        where = tmp_path_factory.mktemp("case")
        bad = _run_case(case, where, capsys)
        H.remove_tree(where)  # deep trees: pytest's clean-up of old directories would hit RecursionError
        RAN[cls] += 1
        if bad:
            failures.append(f"{case.name}: {'; '.join(bad)}")
    assert not failures, "\n".join(failures)


# -- hypothesis: any JSON as a safetensors header ------------------------------------------
json_scalars = st.one_of(st.none(), st.booleans(), st.integers(min_value=-2**70, max_value=2**70),
                         st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=6))
json_values = st.recursive(json_scalars, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                                 st.dictionaries(st.text(max_size=4), inner,
                                                                                 max_size=4)),
                           max_leaves=20)
entries = st.fixed_dictionaries({}, optional={"dtype": st.one_of(st.sampled_from(["F32", "BF16", "F16", "I64", "X"]),
                                                                 json_values),
                                              "shape": st.one_of(st.lists(st.integers(-2, 2**40), max_size=3),
                                                                 json_values),
                                              "data_offsets": st.one_of(st.lists(st.integers(-8, 64), min_size=2,
                                                                                 max_size=2), json_values)})
headers = st.dictionaries(st.sampled_from(["rope.inv_freq", "rope.cos_cached", "rope.sin_cached", "alibi_slopes",
                                           "x.freqs_cis", "__metadata__", "w"]), st.one_of(entries, json_values),
                          max_size=4)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                   HealthCheck.too_slow])
@given(header=headers, data=st.binary(max_size=64))
def test_fuzz_safetensors_headers(tmp_path, header, data):
    from ropelaw.audit.checkpoint import audit_checkpoint

    p = tmp_path / "f.safetensors"
    h = json.dumps(header).encode()
    p.write_bytes(struct.pack("<Q", len(h)) + h + data)
    RAN["hypothesis-safetensors"] += 1
    try:
        audit_checkpoint(str(p))
    except UsageError as exc:
        assert "\n" not in str(exc)


# -- hypothesis: YAML with anchors and aliases ---------------------------------------------
@st.composite
def yaml_docs(draw):
    lines, anchors = [], []
    for i in range(draw(st.integers(1, 8))):
        kind = draw(st.sampled_from(["anchor-list", "alias-list", "scalar", "merge", "self"]))
        if kind == "anchor-list" or not anchors:
            items = [f"*{a}" for a in draw(st.lists(st.sampled_from(anchors), max_size=9))] if anchors else []
            items += draw(st.lists(st.sampled_from(["1", "x", "1e400", "0x" + "f" * 400, "[]"]), max_size=3))
            lines.append(f"k{i}: &a{i} [{', '.join(items)}]")
            anchors.append(f"a{i}")
        elif kind == "alias-list":
            lines.append(f"k{i}: [{', '.join('*' + a for a in draw(st.lists(st.sampled_from(anchors), max_size=12)))}]")
        elif kind == "merge":
            lines.append(f"k{i}: {{<<: *{draw(st.sampled_from(anchors))}}}")
        elif kind == "self":
            lines.append(f"k{i}: &s{i} [*s{i}]")
        else:
            lines.append(f"k{i}: {draw(st.sampled_from(['4096', 'null', '9' * 5000, '-.inf']))}")
    return "\n".join(lines) + "\n"


@settings(max_examples=150, deadline=None)
@given(text=yaml_docs())
def test_fuzz_yaml_anchors(text):
    from ropelaw.lint.loader import load_mapping
    from ropelaw.lint.parse import parse_text

    RAN["hypothesis-yaml"] += 1
    try:
        data, pos = parse_text(text, "yaml")
        load_mapping(data, pos, fmt="yaml")
    except UsageError as exc:  # the declared bad-input type (a bare ValueError is ropelaw's bug: exit 3)
        assert "\n" not in str(exc)


def summary() -> str:
    """One line: how many hostile cases ran, per class (printed by tests/conftest.py after the run)."""
    return f"hostile fuzz: {sum(RAN.values()):,} cases: " + ", ".join(f"{k} {v}" for k, v in sorted(RAN.items()))


def test_report_cases():
    """Every generated case ran (file order: after the tests above); the count is printed at the end."""
    if RAN:
        assert sum(RAN.values()) >= sum(PER_CLASS.values())
