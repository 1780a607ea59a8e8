"""``ropelaw.explore()`` (this module is ``ropelaw.explorer``): the plan in Jupyter, as widgets that recompute as you change the setup.

Two layers, so the numbers are testable without a browser: :func:`view` is pure (a setup in, the
bound, critical dimension, plan table and period-plot data out, all from :func:`ropelaw.plan.plan`
and ``theory``); :class:`Explorer` is the ipywidgets front (``pip install -e '.[notebooks]'``)
whose ``update()`` calls :func:`view` and shows the result. ipywidgets and matplotlib are
imported only when :func:`explore` is called.
"""

from __future__ import annotations

import html
import math
from dataclasses import dataclass, field, replace
from typing import Any

from .numfmt import count, number

__all__ = ["ExploreState", "View", "view", "explore", "Explorer"]

DTYPES = ("bf16", "fp16", "fp32", "fp8_e4m3", "fp8_e5m2")


@dataclass(frozen=True)
class ExploreState:
    """The inputs of the widget (one per control)."""

    d: int = 128
    train: int = 4096
    base: float = 10000.0
    target: int = 131072
    scheme: str = "yarn"  # an option of the plan: current, base, train, linear, ntk, dynamic, yarn, ...
    dtype: str = "bf16"


@dataclass
class View:
    """What the widget shows for one state (``error`` set when the inputs are not a valid setup)."""

    state: ExploreState
    error: str | None = None
    plan: Any = None  # ropelaw.plan.Plan
    option: Any = None  # the selected option
    bound: float | None = None
    critical_dimension: int | None = None
    rows: list = field(default_factory=list)
    periods: list = field(default_factory=list)  # (pair, period at inference) of the selected option

    def summary_html(self) -> str:
        if self.error:
            return f"<p style='color:#b00'><strong>not a valid setup:</strong> {html.escape(self.error)}</p>"
        o, p = self.option, self.plan
        b = "unbounded" if math.isinf(self.bound) else f"{count(round(self.bound))} tokens"
        prec = p.precision
        prec_txt = (f"; {count(prec['exact'])} of {count(p.target)} positions exact in {prec['dtype']}"
                    if prec and prec.get("exact") is not None else "")
        return (f"<p><strong>{html.escape(o.name)}</strong> ({html.escape(_params(o.parameters))}): bound "
                f"<strong>{b}</strong>, {'reaches' if o.reaches else 'does not reach'} {count(p.target)}; "
                f"critical dimension {self.critical_dimension} of {self.state.d}{prec_txt}</p>")


def _params(p: dict) -> str:
    from .plan import _params_text

    return _params_text(p)


def view(state: ExploreState) -> View:
    """The bound, critical dimension, plan table and per-pair periods for ``state`` (pure).

    The plan is :func:`ropelaw.plan.plan` of ``RopeSpec(d, train, base)`` to ``target``; the selected
    option's bound is that plan's (``theory.extrapolation_bound`` of its spec); the periods are
    ``theory.pair_table`` of the option's spec at the target. Bad inputs give ``View.error``."""
    from .plan import plan
    from .spec import RopeSpec
    from .theory import pair_table

    try:
        spec = RopeSpec(d=state.d, train_len=state.train, base=state.base, pretrain_base=state.base)
        p = plan(spec, state.target, dtype=state.dtype)
    except (ValueError, OverflowError) as exc:
        return View(state, error=str(exc))
    names = [o.name for o in p.options]
    if state.scheme not in names:
        return View(state, error=f"no option {state.scheme!r} for this setup (options: {', '.join(names)})", plan=p)
    o = p.option(state.scheme)
    periods = [(r.pair, r.inference_period) for r in pair_table(o.spec, state.target)]
    return View(state, plan=p, option=o, bound=o.bound, critical_dimension=o.critical_dimension,
                rows=p.rows(), periods=periods)


def _png(v: View) -> bytes:
    """The selected option's per-pair periods against the target and training length (PNG)."""
    import io

    import matplotlib

    matplotlib.use("Agg", force=False)
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6.4, 3.2))
    ax = fig.add_subplot()
    if v.error is None:
        xs = [i for i, _ in v.periods]
        ys = [p if math.isfinite(p) else float("nan") for _, p in v.periods]
        ax.semilogy(xs, ys, ".-", label=f"period at inference ({v.option.name})")
        ax.axhline(v.state.train, color="gray", ls="--", label=f"training length {count(v.state.train)}")
        ax.axhline(v.state.target, color="C3", ls=":", label=f"target {count(v.state.target)}")
        if v.critical_dimension is not None and v.critical_dimension < v.state.d:
            ax.axvline(v.critical_dimension // 2, color="C2", ls="-.", label=f"critical pair {v.critical_dimension // 2}")
        ax.set_xlabel("pair i")
        ax.set_ylabel("tokens")
        ax.legend(fontsize=7)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=80)
    return buf.getvalue()


class Explorer:
    """The widget: ``.widget`` (an ipywidgets VBox, what Jupyter displays), ``.controls`` (name ->
    input widget), ``.state``, ``.view`` (the last :class:`View`) and :meth:`update`."""

    def __init__(self, state: ExploreState):
        import ipywidgets as w

        self.state = state
        self.controls = {
            "d": w.BoundedIntText(value=state.d, min=2, max=1 << 16, step=2, description="d"),
            "train": w.BoundedIntText(value=state.train, min=7, max=2 ** 31 - 1, description="T train"),
            "base": w.BoundedFloatText(value=state.base, min=1.0001, max=1e15, description="base"),
            "target": w.BoundedIntText(value=state.target, min=7, max=2 ** 31 - 1, description="target"),
            "scheme": w.Dropdown(options=["current", "base", "train", "linear", "ntk", "dynamic", "yarn", "llama3",
                                          "rerope", "leaky_rerope"], value=state.scheme, description="option"),
            "dtype": w.Dropdown(options=list(DTYPES), value=state.dtype, description="dtype"),
        }
        self.summary = w.HTML()
        self.table = w.HTML()
        self.plot = w.Image(format="png")
        for c in self.controls.values():
            c.observe(self._changed, names="value")
        self.widget = w.VBox([w.HBox([self.controls[k] for k in ("d", "train", "base")]),
                              w.HBox([self.controls[k] for k in ("target", "scheme", "dtype")]),
                              self.summary, self.plot, self.table])
        self.view: View | None = None
        self.update()

    def _changed(self, change: Any) -> None:
        self.update()

    def update(self) -> View:
        """Read the controls, recompute (:func:`view`) and redraw."""
        from .results import table_html

        c = self.controls
        self.state = replace(self.state, d=int(c["d"].value), train=int(c["train"].value), base=float(c["base"].value),
                             target=int(c["target"].value), scheme=str(c["scheme"].value), dtype=str(c["dtype"].value))
        v = view(self.state)
        self.view = v
        self.summary.value = v.summary_html()
        self.table.value = table_html(v.rows) if v.rows else ""
        self.plot.value = _png(v)
        return v

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return self.widget._repr_mimebundle_(**kwargs)

    def _repr_html_(self) -> str:
        """Without a widget front end: the summary and the table."""
        return self.summary.value + self.table.value


def explore(d: int = 128, train: int = 4096, base: float = 10000.0, target: int = 131072, scheme: str = "yarn",
            dtype: str = "bf16") -> Explorer:
    """An interactive plan: inputs for d, T, base, target, option and dtype update the bound, the
    critical dimension, the plan table and the period plot. Needs ipywidgets and matplotlib
    (``pip install -e '.[notebooks]'``)."""
    from .errors import require

    require("ipywidgets", "notebooks", "ropelaw.explore()", also=("matplotlib",))
    return Explorer(ExploreState(d=d, train=train, base=float(base), target=target, scheme=scheme, dtype=dtype))
