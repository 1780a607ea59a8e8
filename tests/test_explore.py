"""``ropelaw.explore()``: the pure update (``explorer.view``) makes the plan exactly as ``ropelaw plan`` does
(same ranks, verdict, caveats and edits, checked against the CLI's own JSON and text); the widget itself (its
sliders and text inputs, redraw, errors that keep the last plan) when ipywidgets is installed. The widget in
a real browser: tests/browser/ (a CI step of its own)."""

from __future__ import annotations

import contextlib
import io
import json
import math

import pytest

from ropelaw.cli import main
from ropelaw.explorer import ExploreState, arguments, view
from ropelaw.theory import critical_dimension, extrapolation_bound


def cli(argv):
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = main(["plan", *argv])
    return code, out.getvalue()


@pytest.mark.parametrize("state", [
    ExploreState(target="128k"),
    ExploreState(d=64, train="8k", base=5e5, target="256k", tune="16k"),
    ExploreState(base=1e6, pretrain_base="1e4", target="64k", scheme="yarn", factor=4.0, option="ntk"),
    ExploreState(config="tests/configs/llama-2-7b.json", target="32k", option="yarn"),
    ExploreState(config="tests/configs/llama-3.2-1b.json", target="256k"),
])
def test_view_is_the_cli_plan(state):
    v = view(state)
    assert v.error is None, v.error
    code, out = cli(arguments(state) + ["--format", "json"])
    doc = json.loads(out)
    assert code == 0 and v.verdict == doc["verdict"]
    assert [r["option"] for r in v.rows] == [o["name"] for o in doc["options"]]  # the same ranks
    assert v.option.name == (state.option or doc["recommended"])
    code, text = cli(arguments(state))
    assert text.splitlines()[0] == v.verdict
    assert all(line in text for line in v.caveats)  # every caveat line as the CLI prints it
    if state.config:
        o = next(o for o in doc["options"] if o["name"] == v.option.name)
        if o["edit"]["refused"]:
            assert v.edit == f"not written: {o['edit']['refused']}"
        else:
            code, dry = cli(arguments(state) + ["--apply", v.option.name, "--dry-run"])
            assert v.edit.strip() and v.edit.rstrip("\n") in dry  # the edit --apply prints


def test_view_numbers_against_the_laws():
    v = view(ExploreState(target="128k", option="yarn"))
    assert critical_dimension(128, 4096, 1e4) == 92 == v.critical_dimension  # seed 001: LLaMA 2
    assert v.bound == extrapolation_bound(v.option.spec).extrapolation_bound
    assert v.option.parameters["factor"] == 32 and v.option.reaches
    k = 46  # YaRN divides pair 46 by s = 32
    assert v.periods[k][1] == pytest.approx(32 * 2 * math.pi * 1e4 ** (2 * k / 128), rel=1e-12)
    assert "bound <strong>150,775 tokens</strong>" in v.summary_html()
    assert "1,408 of 131,072 positions exact in bf16" in v.summary_html()


@pytest.mark.parametrize("state, needle", [
    (ExploreState(d=63), "even"),
    (ExploreState(target="1k"), "below the training length"),
    (ExploreState(base=1.0), "> 1"),
    (ExploreState(target="12q"), "--target"),
    (ExploreState(option="nope"), "no option 'nope'"),
])
def test_view_reports_bad_inputs(state, needle):
    v = view(state)
    assert v.error and needle in v.error
    assert "not a valid setup" in v.summary_html()


def test_widget_sliders_text_inputs_and_errors():
    pytest.importorskip("ipywidgets")
    pytest.importorskip("matplotlib")
    import ipywidgets

    import ropelaw

    e = ropelaw.explore(target="128k")
    assert isinstance(e.controls["base"], ipywidgets.FloatLogSlider) and isinstance(e.controls["d"],
                                                                                    ipywidgets.IntSlider)
    assert e.view.verdict == view(ExploreState(target="128k")).verdict
    png = e.plot.value
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    e.controls["d"].value = 64  # an observer recomputes
    assert e.state.d == 64 and e.view.plan.critical_dimension == 46 and e.plot.value != png
    e.controls["target"].value = "256k"  # the CLI's suffixes: 256 x 1,024
    assert e.view.plan.target == 262144
    e.controls["option"].value = "rerope"
    assert math.isinf(e.view.bound) and "unbounded" in e.summary.value
    good = e.plot.value
    e.controls["target"].value = "1000"
    assert e.view.error and "not a valid setup" in e.summary.value
    assert "last valid inputs" in e.table.value and "<table>" in e.table.value  # the last plan stays
    assert e.plot.value[:8] == b"\x89PNG\r\n\x1a\n" and e.plot.value != good  # the last plot, marked
    e.controls["target"].value = "128k"
    assert e.view.error is None and "last valid" not in e.table.value


def test_widget_opens_a_config():
    pytest.importorskip("ipywidgets")
    pytest.importorskip("matplotlib")
    import ropelaw

    e = ropelaw.explore("tests/configs/llama-2-7b.json", target="32k", option="yarn")
    assert e.controls["d"].disabled and not e.controls["target"].disabled
    assert e.view.plan.spec.d == 128 and "max_position_embeddings" in e.edit.value
    e.controls["tune"].value = "8k"
    assert e.view.plan.spec.tune_len == 8192
