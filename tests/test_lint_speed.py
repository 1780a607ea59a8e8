"""Lint at corpus speed (issue 23) changes no output: what the linter remembers within a run
(Men et al.'s lower bounds, the grid bases seen to fail or pass, key maps of a document) and the
fast paths of its JSON conversion give the same bytes as a run that starts from nothing.

References: each corpus file linted in a state with every run-wide memo cleared (the output of a
fresh process), the standard library's ``dataclasses.asdict``, and ``json_safe``'s general
(isinstance) path reached through subclasses of the JSON types. The speed itself is measured by
``benchmarks/bench_lint.py`` (figures in the README), never here.
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import io
import json
import math
import os
import pathlib

import pytest

from ropelaw.cli import main

ROOT = pathlib.Path(__file__).resolve().parent.parent
CORPUS = pathlib.Path(os.environ.get("ROPELAW_CORPUS") or ROOT.parent / "shared" / "corpus")


def _forget_run_memos() -> None:
    """Clear every memo a lint run fills (a fresh process has none)."""
    from ropelaw import basebound
    from ropelaw.lint.rules import lengths
    from ropelaw.lint import unread

    basebound._forget_grid_searches()
    for cached in (lengths.lower_bound, lengths.men_supported_length, lengths._violations, unread._kind):
        cached.cache_clear()


def _lint_json(path: str) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = main(["lint", path, "--format", "json", "--select", "ALL"])
    return code, out.getvalue()


@pytest.mark.slow
@pytest.mark.skipif(not CORPUS.is_dir(), reason=f"corpus not present at {CORPUS} (ROPELAW_CORPUS)")
def test_every_corpus_file_lints_the_same_with_the_run_memos_warm_or_cold():
    """Each file of the real corpus, linted after clearing every run-wide memo, then again in one
    warm run in reverse order (the lower bounds, failures and passes left by all the other files):
    the same exit code and the same JSON, byte for byte (--select ALL: RL103's bound is in it)."""
    files = sorted(str(p) for p in CORPUS.rglob("*") if p.is_file() and p.suffix != ".md")
    assert len(files) > 100
    cold = {}
    for f in files:
        _forget_run_memos()
        cold[f] = _lint_json(f)
    _forget_run_memos()
    warm = {f: _lint_json(f) for f in reversed(files)}
    assert [f for f in files if warm[f] != cold[f]] == []
    assert sum('"RL103"' in out for _, out in cold.values()) > 20  # the bound was computed and printed


@pytest.mark.skipif(not CORPUS.is_dir(), reason=f"corpus not present at {CORPUS} (ROPELAW_CORPUS)")
def test_default_rule_output_decides_hidden_findings_as_the_full_run():
    """lint_config(shown_only=True) (what `ropelaw lint` without --select runs) against the full run, on every
    config of the corpus: the findings of the default rule set are the same (code, severity, place, message,
    data); the informational ones it hides (counted) are the same codes, severities and places; rules off by
    default are left out."""
    from ropelaw.commands.lint import default_select, iter_lint
    from ropelaw.findings import select_findings

    default = default_select()
    compared = hidden = 0
    for full, fast in zip(iter_lint([str(CORPUS)]), iter_lint([str(CORPUS)], shown_only=True), strict=True):
        assert full[0] == fast[0]
        if full[0] != "result":
            continue
        a, b = (select_findings(r.findings, default) for r in (full[1], fast[1]))
        assert [f for f in a if f.severity != "info"] == [f for f in b if f.severity != "info"]
        assert [f.data for f in a if f.severity != "info"] == [f.data for f in b if f.severity != "info"]
        place = lambda f: (f.code, f.severity, f.path, f.line, f.column)  # noqa: E731
        assert [place(f) for f in a if f.severity == "info"] == [place(f) for f in b if f.severity == "info"]
        assert not {f.code for f in b} - set(default)
        compared += 1
        hidden += sum(f.severity == "info" for f in b)
    assert compared > 100 and hidden > 50


def test_below_lower_bound_agrees_with_the_bound():
    """basebound.below_lower_bound(d, length, base) == (base < base_lower_bound(d, length)) (True where no base
    up to 1e15 supports the length), for bases far below, just below, at and above the bound, searched
    before and after the bound is known in the run."""
    from ropelaw.basebound import _forget_grid_searches, _grid, base_lower_bound, below_lower_bound

    for d, length in [(64, 1000), (128, 2048), (32, 1500), (16, 256)]:
        _forget_grid_searches()
        lb = base_lower_bound(d, length)
        grid = list(_grid(2, 2.0, 1e15))
        k = grid.index(lb)
        probes = [10.0, grid[k - 3], grid[k - 1], lb, grid[k + 1], 1e9, 2e15, lb * 0.999, lb * 1.001]
        for warm in (False, True):
            for base in probes:
                if not warm:
                    _forget_grid_searches()
                assert below_lower_bound(d, length, base) == (base < lb), (d, length, base, warm)
            base_lower_bound(d, length)  # known in the run from here on
    _forget_grid_searches()
    assert below_lower_bound(2, 100, 1e6)  # no base supports it (base_lower_bound raises ValueError)


def test_result_to_dict_is_dataclasses_asdict():
    """Result.to_dict skips copy.deepcopy for numbers and strings: equal to dataclasses.asdict, in
    key order and value types, on bounds of every kind of scheme and on pair tables."""
    from ropelaw.spec import RopeSpec
    from ropelaw.theory import extrapolation_bound, pair_table

    specs = [RopeSpec(d=128, train_len=4096, base=1e4, pretrain_base=1e4),
             RopeSpec(d=128, train_len=4096, base=5e5, pretrain_base=5e5, scheme="yarn", params={"factor": 8.0}),
             RopeSpec(d=96, train_len=4096, base=1e4, pretrain_base=1e4, scheme="longrope",
                      params={"short_factor": [1.0] * 48, "long_factor": [1.0 + i / 10 for i in range(48)],
                              "original_max_position_embeddings": 4096, "factor": 32.0})]
    for spec in specs:
        for result in [extrapolation_bound(spec)] + pair_table(spec)[:3]:
            got, want = result.to_dict(), dataclasses.asdict(result)
            assert json.dumps(got) == json.dumps(want)
            assert list(got) == list(want)
            assert [type(v) for v in got.values()] == [type(v) for v in want.values()]


def test_json_safe_fast_paths_equal_its_general_path():
    """json_safe's exact-type fast paths (str, int, bool, None, float, dict, list) give what its
    isinstance chain gives for the same values held in subclasses of those types."""
    from ropelaw.commands._common import json_safe

    class S(str):
        pass

    class F(float):
        pass

    class D(dict):
        pass

    class L(list):
        pass

    plain = {"a": [1, 2.5, math.inf, -math.inf, math.nan, None, True, "x"], "b": {"c": {1: 2.0, 2.5: [None]}},
             3: "three", None: False}
    sub = D({S("a"): L([1, F(2.5), F(math.inf), F(-math.inf), F(math.nan), None, True, S("x")]),
             S("b"): collections.OrderedDict({S("c"): D({1: F(2.0), F(2.5): L([None])})}), 3: S("three"),
             None: False})
    assert json.dumps(json_safe(plain), allow_nan=False) == json.dumps(json_safe(sub), allow_nan=False)
    assert json_safe([math.nan, math.inf, 1.5]) == [None, None, 1.5]
