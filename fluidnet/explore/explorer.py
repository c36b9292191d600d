"""The explorer application: sliders, numbers and a picture over the analysis stages.

:class:`Explorer` holds the widgets (ipywidgets: one slider per parameter, an HTML table of
numbers, a PNG picture, a button that recomputes the chart) and the state a test drives without
a browser (:meth:`Explorer.set`, then :attr:`Explorer.margins`, :attr:`Explorer.roots`, ...).
Every number comes from :func:`fluidnet.explore.point.snapshot`, which asks the stages; the
chart is one :func:`fluidnet.stability_chart`, computed when the explorer starts (and again on
request), on which only the current point moves. What does not change between updates is
computed once: the chart, and each point already visited (the last :data:`CACHE_SIZE` snapshots
are kept); the stages cache the model's compiled and symbolic forms themselves.
"""

from __future__ import annotations

import base64
import html
import math
import time
import warnings
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from ..errors import ParameterError
from .debounce import Throttle
from .figure import ChartFigure, PanelsFigure
from .numbers import numbers_html
from .point import Snapshot, snapshot
from .sliders import SliderSpec, slider_specs

if TYPE_CHECKING:
    import xarray as xr
    from numpy.typing import ArrayLike

    from ..dde.solution import Solution
    from ..linear.rootset import Roots
    from ..stability.margins import Margins
    from ..stability.nyquist import NyquistResponse
    from ..symbolic.equilibrium import Equilibrium
    from ..symbolic.model import Model

__all__ = ["Explorer", "CACHE_SIZE", "CHART_POINTS"]

#: Snapshots kept, so that returning to a point visited before costs only the drawing.
CACHE_SIZE = 64

#: Points per axis of the default chart (a plane: 15 x 15; one parameter: 41).
CHART_POINTS = {1: 41, 2: 15}


def _chart_grid(
    chart: Sequence[str] | Mapping[str, ArrayLike], specs: Mapping[str, SliderSpec], model: Model
) -> dict[str, np.ndarray]:
    if isinstance(chart, str):
        chart = [chart]
    if isinstance(chart, Mapping):
        grid = {str(k): np.asarray(v, dtype=float) for k, v in chart.items()}
    else:
        names = list(chart)
        if not 1 <= len(names) <= 2:
            raise ParameterError(f"chart={names!r}: name one or two parameters")
        grid = {}
        for name in names:
            if name not in specs:
                raise ParameterError(
                    f"chart parameter {name!r} has no slider: give its values as "
                    f"chart={{{name!r}: values, ...}} or add it to the sliders"
                )
            s = specs[name]
            grid[name] = np.linspace(s.lo, s.hi, CHART_POINTS[len(names)])
    unknown = [k for k in grid if k not in model.params]
    if unknown:
        raise ParameterError(f"chart: no parameter {unknown[0]!r} in model {model.name!r}")
    if not 1 <= len(grid) <= 2:
        raise ParameterError(f"chart: one or two parameters, not {len(grid)}")
    return grid


class Explorer:
    """An interactive explorer of a fluid model (made by :func:`fluidnet.explore`).

    Displaying it (the last expression of a notebook cell, or ``display(ex)``) shows the
    sliders, the numbers and the picture; a slider moved updates them. Without a browser,
    :meth:`set` moves sliders and updates at once.

    Parameters
    ----------
    model : fluidnet.Model
        The model explored.
    sliders : sequence of str or dict, optional
        See :func:`fluidnet.explore`.
    params : dict, optional
        Starting values ``{name: value}`` other than the model's defaults.
    cut : str, optional
        Where the loop is cut for the Nyquist panel and the margins.
    chart : sequence of str, dict, None or False
        The stability chart's parameters or grid; False for none.
    t_end : float, optional
        End of the nonlinear response (s).
    history : dict, optional
        Initial history of the nonlinear response.
    states : sequence of str, optional
        The states of the response panel.
    k : int
        How many rightmost roots.
    n_points : int
        Output samples of the response.
    interval : float
        Least time (s) between two updates while a slider moves.

    Attributes
    ----------
    model : fluidnet.Model
    specs : dict of str to SliderSpec
        The sliders' names, ranges, units and meanings.
    sliders : dict of str to ipywidgets.FloatSlider
    widget : ipywidgets.VBox
        The whole application (what is displayed).
    chart : xarray.Dataset or None
        The stability chart (:func:`fluidnet.stability_chart`), or None.
    chart_values : dict of str to float
        The other parameters' values the chart was computed at.
    last_update : dict of str to float
        CPU seconds of the last update: ``"compute"`` (the stages; 0 for a point visited
        before), ``"draw"`` (the picture and the numbers) and ``"total"``.
    """

    def __init__(
        self,
        model: Model,
        sliders: Sequence[str] | Mapping[str, Any] | None = None,
        *,
        params: Mapping[str, float] | None = None,
        cut: str | None = None,
        chart: Sequence[str] | Mapping[str, ArrayLike] | Literal[False] | None = None,
        t_end: float | None = None,
        history: Mapping[str, Any] | None = None,
        states: Sequence[str] | None = None,
        k: int = 6,
        n_points: int = 400,
        interval: float = 0.1,
    ) -> None:
        self.model = model
        start = dict(params or {})
        if start:
            model.with_params(**start)  # names and values checked here, with the model's words
        self.specs = {s.name: s for s in slider_specs(model, sliders, start)}
        self._fixed = {k_: float(v) for k_, v in start.items() if k_ not in self.specs}
        self.cut = cut if cut is not None else model.state_names[0]
        if self.cut not in model.state_names and self.cut not in model.signal_names:
            raise ParameterError(
                f"cut={self.cut!r}: not a state or signal of model {model.name!r} (states: "
                f"{', '.join(model.state_names)})"
            )
        self.states = list(states) if states is not None else list(model.state_names)[:4]
        bad = [s for s in self.states if s not in model.state_names]
        if bad:
            raise ParameterError(f"states: {bad[0]!r} is not a state of model {model.name!r}")
        self.k = int(k)
        self.n_points = int(n_points)
        self.history = history
        self._cache: OrderedDict[tuple, Snapshot] = OrderedDict()
        self.t_end = float(t_end) if t_end is not None else self._default_t_end()
        if chart is None:
            chart = list(self.specs)[:2]
        self._chart_grid = None if chart is False else _chart_grid(chart, self.specs, model)
        self.chart: xr.Dataset | None = None
        self.chart_values: dict[str, float] = {}
        self._compute_chart()
        self.last_update: dict[str, float] = {}
        self._snapshot: Snapshot | None = None
        self._build_widgets()
        self._throttle = Throttle(self._update_shown, interval)
        self._update()

    # ------------------------------------------------------------------------ set-up
    def _default_t_end(self) -> float:
        """Long enough to see the response settle or grow: five decay times of the rightmost
        root, between 20 and 100 times the longest delay of the linearization at the start."""
        try:
            with warnings.catch_warnings():  # the first snapshot shows them
                warnings.simplefilter("ignore")
                lin = self.model.linearize(params=self.values)
                tau = max(lin.delays, default=0.0) or 1.0
                a = lin.roots(k=2).abscissa
        except Exception:  # no equilibrium or roots at the start: the snapshot will say why
            return 10.0
        if not math.isfinite(a) or a >= 0:
            return 30.0 * tau
        return float(np.clip(5.0 / abs(a), 20.0 * tau, 100.0 * tau))

    def _compute_chart(self) -> None:
        if self._chart_grid is None:
            return
        from ..stability.chart import stability_chart

        grid = self._chart_grid
        others = {k: v for k, v in self.values.items() if k not in grid}
        with warnings.catch_warnings():  # a point's warnings are shown by its snapshot
            warnings.simplefilter("ignore")
            self.chart = stability_chart(
                self.model, grid, params=others, on_error="nan", progress=False
            )
        self.chart_values = others

    def _build_widgets(self) -> None:
        import ipywidgets as w

        self.sliders = {}
        rows = []
        for s in self.specs.values():
            slider = w.FloatSlider(
                value=s.value,
                min=s.lo,
                max=s.hi,
                step=s.step,
                description=s.name,
                continuous_update=True,
                readout_format=".4g",
                style={"description_width": "6em"},
                layout=w.Layout(width="24em"),
                tooltip=s.doc,
            )
            slider.add_class(f"fn-slider-{s.name}")
            slider.observe(self._on_slide, names="value")
            self.sliders[s.name] = slider
            unit = "" if s.unit in ("", "1") else s.unit
            label = w.HTML(
                f"{html.escape(unit)} "
                f"<span style='color:#666;font-size:85%'>{html.escape(s.doc)}</span>"
            )
            rows.append(w.HBox([slider, label]))
        self._numbers = w.HTML()
        self._numbers.add_class("fn-explore-numbers")
        self._panels = PanelsFigure(self.states)
        self._chart_figure = ChartFigure(self.chart, tuple(self._chart_grid or ()))
        width = round(self._panels.figure.get_figwidth() * self._panels.figure.dpi)
        self._picture = w.Image(format="png", layout=w.Layout(width=f"{width}px"))
        self._picture.add_class("fn-explore-picture")
        self._chart_picture = w.Image(format="png")
        self._chart_picture.add_class("fn-explore-chart")
        self._status = w.HTML()
        self._status.add_class("fn-explore-status")
        self._chart_button = w.Button(
            description="Recompute chart here",
            tooltip="compute the stability chart again at the other sliders' current values",
            disabled=self.chart is None,
            layout=w.Layout(width="auto"),
        )
        self._chart_button.on_click(lambda _: self._recompute_chart_shown())
        title = w.HTML(
            f"<b>{html.escape(self.model.name)}</b>: loop cut at "
            f"<code>{html.escape(self.cut)}</code>; the picture updates as the sliders move"
        )
        chart_box = w.VBox([self._chart_picture, self._chart_button])
        self.widget = w.VBox(
            [
                title,
                w.VBox(rows),
                w.HBox([self._numbers, chart_box]),
                self._picture,
                self._status,
            ]
        )
        self.widget.add_class("fn-explore")

    # ------------------------------------------------------------------------ state
    @property
    def values(self) -> dict[str, float]:
        """Every parameter's current value: the sliders', else the fixed ones'."""
        out = {k: float(v) for k, v in self.model.values.items() if v is not None}
        out.update(self._fixed)
        sliders = getattr(self, "sliders", None)
        for name, s in self.specs.items():
            out[name] = float(sliders[name].value) if sliders else s.value
        return out

    def _snapshot_at(self, values: Mapping[str, float]) -> Snapshot:
        key = tuple(sorted(values.items()))
        snap = self._cache.get(key)
        if snap is None:
            snap = snapshot(
                self.model,
                values,
                cut=self.cut,
                t_end=self.t_end,
                history=self.history,
                k=self.k,
                n_points=self.n_points,
            )
            self._cache[key] = snap
            if len(self._cache) > CACHE_SIZE:
                self._cache.popitem(last=False)
        else:
            self._cache.move_to_end(key)
        return snap

    def _chart_note(self, values: Mapping[str, float]) -> str:
        if self.chart is None:
            return ""
        moved = [k for k, v in self.chart_values.items() if values.get(k) != v]
        if not moved:
            return ""
        at = ", ".join(f"{k} = {self.chart_values[k]:.4g}" for k in moved)
        return f"(chart computed at {at}: recompute it here)"

    def _update(self) -> None:
        t0 = time.process_time()
        values = self.values
        cached = tuple(sorted(values.items())) in self._cache
        snap = self._snapshot_at(values)
        t1 = time.process_time()
        self._panels.draw(snap)
        self._chart_figure.draw(snap, self._chart_note(values))
        self._picture.value = self._panels.png()
        self._chart_picture.value = self._chart_figure.png()
        self._numbers.value = numbers_html(snap, list(self.specs))
        t2 = time.process_time()
        self._snapshot = snap
        compute = 0.0 if cached else t1 - t0
        self.last_update = {"compute": compute, "draw": t2 - t1, "total": compute + t2 - t1}
        self._status.value = (
            f"<span style='color:#666;font-size:85%'>update: {1e3 * (t2 - t0):.0f} ms of CPU "
            f"(stages {1e3 * (t1 - t0):.0f} ms, picture {1e3 * (t2 - t1):.0f} ms)</span>"
        )

    def _update_shown(self) -> None:
        """An update from the browser: a failure becomes a message in the application (the
        stages' errors are messages already; this catches the explorer's own defects)."""
        try:
            self._update()
        except Exception as exc:
            self._status.value = (
                f"<span style='color:#c0392b'>update failed: {html.escape(repr(exc))} "
                "(please report this as a fluidnet bug)</span>"
            )

    def _on_slide(self, change: Any) -> None:
        if not getattr(self, "_holding", False):
            self._throttle()

    def set(self, **values: float) -> Explorer:
        """Move sliders (or change fixed parameters) and update at once.

        Parameters
        ----------
        **values
            ``name=value`` for model parameters. A value outside its slider's range widens the
            range.

        Returns
        -------
        Explorer
            This explorer, updated (so that ``ex.set(alpha=0.6).margins`` reads the result).

        Raises
        ------
        ParameterError
            For an unknown parameter or an invalid value (the model's own checks).
        """
        self.model.with_params(**values)  # unknown names and out-of-bounds values refused
        self._holding = True
        try:
            for name, v in values.items():
                v = float(v)
                if name in self.sliders:
                    s = self.sliders[name]
                    if v < s.min:
                        s.min = v
                    if v > s.max:
                        s.max = v
                    s.value = v
                else:
                    self._fixed[name] = v
        finally:
            self._holding = False
        self._throttle.cancel()
        self._update()
        return self

    def recompute_chart(self) -> None:
        """Compute the stability chart again at the other parameters' current values."""
        if self._chart_grid is None:
            return
        self._status.value = "<i>computing the chart ...</i>"
        self._compute_chart()
        self._chart_figure = ChartFigure(self.chart, tuple(self._chart_grid))
        self._update()

    def _recompute_chart_shown(self) -> None:
        try:
            self.recompute_chart()
        except Exception as exc:
            self._status.value = (
                f"<span style='color:#c0392b'>the chart was not computed: "
                f"{html.escape(str(exc))}</span>"
            )

    # ------------------------------------------------------------------------ results
    @property
    def snapshot(self) -> Snapshot:
        """Every panel's result at the current values."""
        assert self._snapshot is not None  # set by the first update, in the constructor
        return self._snapshot

    @property
    def equilibrium(self) -> Equilibrium | None:
        """The equilibrium at the current values (None where there is none)."""
        return self.snapshot.equilibrium

    @property
    def roots(self) -> Roots | None:
        """The rightmost characteristic roots at the current values."""
        return self.snapshot.roots

    @property
    def margins(self) -> Margins | None:
        """The loop gain's margins at the current values."""
        return self.snapshot.margins

    @property
    def nyquist(self) -> NyquistResponse | None:
        """The loop gain's Nyquist curve and count at the current values."""
        return self.snapshot.nyquist

    @property
    def solution(self) -> Solution | None:
        """The nonlinear response at the current values."""
        return self.snapshot.solution

    @property
    def stable(self) -> bool | None:
        """The linear verdict at the current values (None: undecided)."""
        return self.snapshot.stable

    @property
    def message(self) -> str:
        """What the panels could not show at the current values, one line each."""
        return self.snapshot.message

    @property
    def png(self) -> bytes:
        """The picture of the panels shown (roots, Nyquist, response), as PNG."""
        return bytes(self._picture.value)

    @property
    def chart_png(self) -> bytes:
        """The chart shown, with the current point, as PNG."""
        return bytes(self._chart_picture.value)

    @property
    def numbers(self) -> str:
        """The numbers shown, as HTML."""
        return str(self._numbers.value)

    def to_xarray(self) -> Any:
        """The numbers at the current values (:meth:`Snapshot.to_xarray`).

        Returns
        -------
        xarray.Dataset
        """
        return self.snapshot.to_xarray()

    def plot(self) -> Any:
        """The panels at the current values in a new figure (:meth:`Snapshot.plot`).

        Returns
        -------
        matplotlib.figure.Figure
        """
        return self.snapshot.plot(self.states)

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        """The widget, and a static HTML copy for renderers without a kernel (a notebook on
        GitHub or in the documentation site shows the starting point's numbers and pictures)."""
        bundle = dict(self.widget._repr_mimebundle_(**kwargs) or {})
        bundle["text/html"] = self.static_html()
        return bundle

    def static_html(self) -> str:
        """The numbers and pictures shown now, as self-contained HTML (no widgets).

        Returns
        -------
        str
        """
        pictures = "".join(
            f'<img src="data:image/png;base64,{base64.b64encode(png).decode()}" alt="{alt}">'
            for png, alt in ((self.chart_png, "stability chart"), (self.png, "panels"))
            if png
        )
        return (
            f'<div class="fn-explore-static">{self.numbers}{pictures}'
            "<p><i>A picture of the explorer at these values: run the notebook to move the "
            "sliders.</i></p></div>"
        )

    def __repr__(self) -> str:
        vals = ", ".join(f"{k}={v:.4g}" for k, v in self.values.items())
        return f"Explorer({self.model.name!r}, {vals})"
