"""``ropelaw.explore()`` (this module is ``ropelaw.explorer``): ``ropelaw plan`` in Jupyter, as widgets that
recompute as you change the setup, or open a config: ``explore("config.json")``.

Two layers, so the numbers are testable without a browser: :func:`view` is pure (a state in, the plan out:
verdict, ranked rows, caveats, the selected option's edit and period-plot data), and makes the plan
exactly as the CLI does (``plan_run.parse`` + ``evaluated`` of the same arguments: the same ranks,
verdict, caveats and edits, which ``tests/test_explore.py`` checks against ``ropelaw plan``);
:class:`Explorer` is the ipywidgets front (``pip install -e '.[notebooks]'``): sliders for d and the base
(log scale), text inputs that take ``4k`` / ``128k`` / ``500k`` as the CLI does, the tuning length, the
model's current scheme and factor, the option shown and the dtype. An input that is not valid keeps the
last plan on screen, marked, and says why. ipywidgets and matplotlib are imported only by :func:`explore`.
"""

from __future__ import annotations

import html
import math
from dataclasses import dataclass, field, replace
from typing import Any

from .numfmt import count

__all__ = ["ExploreState", "View", "view", "explore", "Explorer", "arguments"]

DTYPES = ("bf16", "fp16", "fp32", "fp8_e4m3", "fp8_e5m2")
SCHEMES = ("default", "linear", "ntk", "dynamic", "yarn", "llama3")


@dataclass(frozen=True)
class ExploreState:
    """The inputs of the widget (one per control); lengths and bases as numbers or as the CLI's text."""

    d: int = 128
    train: Any = 4096  # 4096 or "4k"
    base: Any = 10000.0  # the base the model runs with (10000, "500k")
    target: Any = 131072  # 131072 or "128k"
    tune: Any = None  # the tuning length already done, or None
    pretrain_base: Any = None  # None: the model was pre-trained at `base`
    scheme: str = "default"  # the scheme the model runs now
    factor: float | None = None
    option: str = ""  # the option shown in detail; "" = the one the verdict names
    dtype: str = "bf16"
    config: str | None = None  # a config file: the setup comes from it (d, train, base, scheme)


def arguments(s: ExploreState) -> list[str]:
    """The ``ropelaw plan`` arguments of a state: what the widget computes is what this command prints."""
    argv = [s.config] if s.config else ["--d", str(s.d), "--train", str(s.train), "--base", str(s.base)]
    if not s.config and s.pretrain_base not in (None, ""):
        argv += ["--pretrain-base", str(s.pretrain_base)]
    if not s.config and s.scheme != "default":
        argv += ["--scheme", s.scheme] + (["--factor", repr(float(s.factor))] if s.factor else [])
    argv += ["--target", str(s.target)]
    if s.tune not in (None, ""):
        argv += ["--tune", str(s.tune)]
    if not s.config:
        argv += ["--dtype", s.dtype]
    return argv


@dataclass
class View:
    """What the widget shows for one state (``error`` set when the inputs are not a valid setup)."""

    state: ExploreState
    error: str | None = None
    plan: Any = None  # ropelaw.plan.Plan
    option: Any = None  # the option shown in detail
    verdict: str = ""
    rows: list = field(default_factory=list)
    caveats: list = field(default_factory=list)  # the CLI's "how and caveats" lines
    edit: str = ""  # the shown option's diff (a config), or why it cannot be written
    periods: list = field(default_factory=list)  # (pair, period at inference) of the shown option

    @property
    def bound(self) -> float | None:
        return self.option.bound if self.option is not None else None

    @property
    def critical_dimension(self) -> int | None:
        return self.option.critical_dimension if self.option is not None else None

    def summary_html(self) -> str:
        if self.error:
            return ("<p class='ropelaw-error' style='color:#b00'><strong>not a valid setup:</strong> "
                    f"{html.escape(self.error)}</p>")
        o, p = self.option, self.plan
        b = "unbounded" if math.isinf(o.bound) else f"{count(round(o.bound))} tokens"
        prec = p.precision
        prec_txt = (f"; {count(prec['exact'])} of {count(p.target)} positions exact in {prec['dtype']}"
                    if prec and prec.get("exact") is not None else "")
        return (f"<p class='ropelaw-verdict'><strong>{html.escape(self.verdict)}</strong></p>"
                f"<p><strong>{html.escape(o.name)}</strong> ({html.escape(_params(o.parameters))}): bound "
                f"<strong>{b}</strong>, {'reaches' if o.reaches else 'does not reach'} {count(p.target)}; "
                f"critical dimension {o.critical_dimension} of {p.spec.d}{prec_txt}</p>")


def _params(p: dict) -> str:
    from .plan import params_text

    return params_text(p)


def view(state: ExploreState) -> View:
    """The plan for ``state``, as ``ropelaw plan`` (:func:`arguments`) makes it (pure). Bad inputs give
    ``View.error``, one line, as the CLI's."""
    from .plan_run import evaluated, option_lines, parse
    from .errors import UsageError
    from .theory import pair_table

    try:
        args = parse(arguments(state))
        p, cfg, dialect, text, checked = evaluated(args)
    except (ValueError, OverflowError, UsageError) as exc:
        return View(state, error=str(exc))
    names = [o.name for o in p.options]
    name = state.option or (p.recommended.name if p.recommended else names[0])
    if name not in names:
        return View(state, error=f"no option {name!r} in this plan (options: {', '.join(names)})", plan=p)
    o = p.option(name)
    edit = ""
    if o.edit is not None:
        edit = (_diff(text, checked[name][0].text, state.config or "") if name in checked
                else f"not written: {o.edit.refused}")
    periods = [(r.pair, r.inference_period) for r in pair_table(o.spec, p.target)]
    caveats = [ln for x in p.options for ln in option_lines(p, x)] + [f"note: {n}" for n in p.notes]
    return View(state, plan=p, option=o, verdict=p.verdict(), rows=p.rows(), caveats=caveats, edit=edit,
                periods=periods)


def _diff(old: str, new: str, path: str) -> str:
    from .lint.writers import unified_diff

    return unified_diff(old, new, path, path, n=1)


def _png(v: View, last: View | None) -> bytes:
    """The shown option's per-pair periods against the target and training length (PNG); with an error, the
    last valid plot under the error (never an empty plot)."""
    import io

    import matplotlib

    matplotlib.use("Agg", force=False)
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6.4, 3.2))
    ax = fig.add_subplot()
    shown = v if v.error is None else last
    if shown is not None and shown.error is None:
        xs = [i for i, _ in shown.periods]
        ys = [p if math.isfinite(p) else float("nan") for _, p in shown.periods]
        ax.semilogy(xs, ys, ".-", label=f"period at inference ({shown.option.name})")
        ax.axhline(shown.plan.spec.train_len, color="gray", ls="--",
                   label=f"training length {count(shown.plan.spec.train_len)}")
        ax.axhline(shown.plan.target, color="C3", ls=":", label=f"target {count(shown.plan.target)}")
        cd = shown.option.critical_dimension
        if cd is not None and cd < shown.plan.spec.d:
            ax.axvline(cd // 2, color="C2", ls="-.", label=f"critical pair {cd // 2}")
        ax.set_xlabel("pair i")
        ax.set_ylabel("tokens")
        ax.legend(fontsize=7)
    if v.error is not None:
        ax.set_title(f"not a valid setup (showing the last one): {v.error[:80]}", fontsize=7, color="#b00")
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=80)
    return buf.getvalue()


class Explorer:
    """The widget: ``.widget`` (an ipywidgets VBox, what Jupyter displays), ``.controls`` (name -> input
    widget), ``.state``, ``.view`` (the last :class:`View`) and :meth:`update`."""

    def __init__(self, state: ExploreState):
        import ipywidgets as w

        self.state = state
        flags = state.config is None
        text = dict(continuous_update=False, layout=w.Layout(width="190px"))
        self.controls = {
            "d": w.IntSlider(value=state.d, min=2, max=512, step=2, description="d", continuous_update=False,
                             disabled=not flags),
            "base": w.FloatLogSlider(value=float(state.base) if flags else 1e4, base=10, min=1, max=12, step=0.01,
                                     description="base", readout_format=".3g", continuous_update=False,
                                     disabled=not flags),
            "train": w.Text(value=str(state.train), description="T train", disabled=not flags, **text),
            "pretrain_base": w.Text(value=str(state.pretrain_base or ""), description="pretrain b",
                                    placeholder="= base", disabled=not flags, **text),
            "target": w.Text(value=str(state.target), description="target", **text),
            "tune": w.Text(value=str(state.tune or ""), description="tuned at", placeholder="not tuned", **text),
            "scheme": w.Dropdown(options=list(SCHEMES), value=state.scheme, description="scheme now",
                                 disabled=not flags),
            "factor": w.FloatText(value=state.factor or 0.0, description="factor", disabled=not flags,
                                  layout=w.Layout(width="190px")),
            "option": w.Dropdown(options=[""], value="", description="option"),
            "dtype": w.Dropdown(options=list(DTYPES), value=state.dtype, description="dtype", disabled=not flags),
        }
        self.summary = w.HTML()
        self.table = w.HTML()
        self.caveats = w.HTML()
        self.edit = w.HTML()
        self.plot = w.Image(format="png")
        for c in self.controls.values():
            c.observe(self._changed, names="value")
        rows = [("d", "base", "train", "pretrain_base"), ("target", "tune", "scheme", "factor"), ("option", "dtype")]
        head = [w.HTML(f"<code>{html.escape(state.config)}</code>")] if state.config else []
        self.widget = w.VBox(head + [w.HBox([self.controls[k] for k in r]) for r in rows]
                             + [self.summary, self.plot, self.table, self.edit, self.caveats])
        self.view: View | None = None
        self._last: View | None = None
        self._busy = False
        self.update()

    def _changed(self, change: Any) -> None:
        if not self._busy:
            self.update()

    def _read(self) -> ExploreState:
        c = self.controls
        if self.state.config is not None:
            return replace(self.state, target=c["target"].value.strip(), tune=c["tune"].value.strip() or None,
                           option=c["option"].value)
        factor = float(c["factor"].value) if c["scheme"].value != "default" and c["factor"].value else None
        return replace(self.state, d=int(c["d"].value), base=float(c["base"].value), train=c["train"].value.strip(),
                       pretrain_base=c["pretrain_base"].value.strip() or None, target=c["target"].value.strip(),
                       tune=c["tune"].value.strip() or None, scheme=str(c["scheme"].value), factor=factor,
                       option=c["option"].value, dtype=str(c["dtype"].value))

    def update(self) -> View:
        """Read the controls, recompute (:func:`view`) and redraw; an invalid input keeps the last plan."""
        from .results import table_html

        self.state = self._read()
        v = view(self.state)
        self.view = v
        self.summary.value = v.summary_html()
        self.plot.value = _png(v, self._last)
        if v.error is None:
            self._last = v
            self._busy = True  # the option list follows the plan; setting it must not recompute
            try:
                names = [""] + [o.name for o in v.plan.options]
                opt = self.controls["option"]
                opt.options = names
                opt.value = self.state.option if self.state.option in names else ""
            finally:
                self._busy = False
            self.table.value = table_html(v.rows)
            self.caveats.value = ("<details><summary>how and caveats</summary><pre>"
                                  + html.escape("\n".join(v.caveats)) + "</pre></details>")
            self.edit.value = f"<pre class='ropelaw-edit'>{html.escape(v.edit)}</pre>" if v.edit else ""
        else:
            self.table.value = ("<p style='color:#b00'>the plan below is for the last valid inputs</p>"
                                + (table_html(self._last.rows) if self._last else ""))
        return v

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return self.widget._repr_mimebundle_(**kwargs)

    def _repr_html_(self) -> str:
        """Without a widget front end: the summary and the table."""
        return self.summary.value + self.table.value


def explore(config: str | None = None, *, d: int = 128, train: Any = 4096, base: Any = 10000.0, target: Any = 131072,
            tune: Any = None, pretrain_base: Any = None, scheme: str = "default", factor: float | None = None,
            option: str = "", dtype: str = "bf16") -> Explorer:
    """``ropelaw plan`` as a widget: a config (``explore("config.json")``: its setup as ``ropelaw lint`` reads
    it, target and tuning length yours) or a setup (d and the base on sliders, the base on a log scale; lengths
    as ``4k`` / ``128k``; the tuning length; the model's current scheme). Shows the verdict, the ranked plan with
    each bound's measured range, the caveats and the chosen option's edit, all as ``ropelaw plan`` prints them.
    Needs ipywidgets and matplotlib (``pip install -e '.[notebooks]'``)."""
    from .errors import require

    require("ipywidgets", "notebooks", "ropelaw.explore()", also=("matplotlib",))
    return Explorer(ExploreState(d=d, train=train, base=base, target=target, tune=tune, pretrain_base=pretrain_base,
                                 scheme=scheme, factor=factor, option=option, dtype=dtype, config=config))
