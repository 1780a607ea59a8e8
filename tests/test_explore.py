"""``ropelaw.explore()``: the pure update (``explorer.view``) is checked against the plan and the laws
without ipywidgets; the widget itself (its controls, state and redraw) when ipywidgets is installed
(the ``notebooks`` and ``test`` extras)."""

from __future__ import annotations

import math

import pytest

from ropelaw import RopeSpec
from ropelaw.explorer import ExploreState, view
from ropelaw.theory import critical_dimension, extrapolation_bound


def test_view_matches_plan_and_theory():
    v = view(ExploreState(d=128, train=4096, base=1e4, target=131072, scheme="yarn", dtype="bf16"))
    assert v.error is None
    assert v.critical_dimension == critical_dimension(128, 4096, 1e4) == 92  # seed 001: LLaMA 2
    assert v.bound == extrapolation_bound(v.option.spec).extrapolation_bound
    assert v.option.parameters["factor"] == 32 and v.option.reaches
    assert [r["option"] for r in v.rows][0] == "current" and len(v.rows) == len(v.plan.options)
    # the plotted periods are pair_table's inference periods: YaRN divides pair 46 by s = 32
    k = 46
    assert v.periods[k][1] == pytest.approx(32 * 2 * math.pi * 1e4 ** (2 * k / 128), rel=1e-12)
    assert "bound <strong>150,775 tokens</strong>" in v.summary_html()
    assert "1,408 of 131,072 positions exact in bf16" in v.summary_html()  # formats.exact_positions


def test_view_updates_with_each_input():
    base = ExploreState()
    d64 = view(ExploreState(d=64))
    assert d64.critical_dimension == critical_dimension(64, 4096, 1e4) == 46
    longer = view(ExploreState(train=8192))
    assert longer.option.parameters["factor"] == 16  # s = L/T
    ntk = view(ExploreState(scheme="ntk"))
    assert ntk.option.name == "ntk" and ntk.bound >= base.target
    fp16 = view(ExploreState(dtype="fp16", target=262144))
    assert fp16.plan.precision["overflow_from"] == 65520  # fp16: positions from 65,520 become inf
    pretrained = view(ExploreState(base=1e6, scheme="current"))  # pre-trained at base 1e6: the bound is T (Theorem 3)
    spec = RopeSpec(d=128, train_len=4096, base=1e6, pretrain_base=1e6)
    assert pretrained.bound == extrapolation_bound(spec).extrapolation_bound == 4096


@pytest.mark.parametrize("state, needle", [
    (ExploreState(d=63), "even"),
    (ExploreState(target=1024), "below the training length"),
    (ExploreState(base=1.0), "> 1"),
])
def test_view_reports_bad_inputs(state, needle):
    v = view(state)
    assert v.error and needle in v.error
    assert "not a valid setup" in v.summary_html()


def test_widget_state_and_redraw():
    pytest.importorskip("ipywidgets")
    pytest.importorskip("matplotlib")
    import ropelaw

    e = ropelaw.explore(d=128, train=4096, base=1e4, target=131072, scheme="yarn")
    assert e.view.bound == view(ExploreState()).bound
    png = e.plot.value
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    e.controls["d"].value = 64  # an observer recomputes
    assert e.state.d == 64 and e.view.critical_dimension == 46
    assert "critical dimension 46 of 64" in e.summary.value and e.plot.value != png
    e.controls["scheme"].value = "rerope"
    assert math.isinf(e.view.bound) and "unbounded" in e.summary.value
    e.controls["target"].value = 1000
    assert e.view.error and "not a valid setup" in e.summary.value and e.table.value == ""
    assert "<table>" not in e._repr_html_()
    e.controls["target"].value = 262144
    assert e.view.error is None and "<table>" in e.table.value
