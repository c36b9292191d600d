"""Agreement maps: where a fluid model's stability verdict and packets' verdict agree.

Over a grid of two parameters of a library model (say the number of flows and the round-trip
delay of MGT/RED):

* the **fluid verdict** at every point is fluidnet's linear stability analysis
  (:func:`fluidnet.stability_chart`: stable, or an unstable equilibrium, whose nonlinear
  model settles on a limit cycle); the **fluid boundary** is drawn from a finer chart;
* the **packet verdict** is the stated criterion of :mod:`fluidnet.packet.analysis` on ns-3
  runs of the model's scenario (:func:`fluidnet.packet.scenario_for`), one per seed (the
  majority over seeds);
* the two **agree** where "stable" meets "no packet oscillation" and "unstable" meets
  "packet oscillation". The points where they differ form the disagreement band that
  :meth:`AgreementMap.plot` draws next to the fluid boundary.

Every point also keeps what was measured: the packet mean queue, swing and period, the fluid
model's equilibrium queue and, from a nonlinear fluid run from the same start, its swing and
limit-cycle period.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import OptionError, ParameterError
from .analysis import queue_oscillation, summary
from .batch import sweep
from .mapping import fluid_view, scenario_for

if TYPE_CHECKING:
    import os

    import xarray as xr
    from matplotlib.axes import Axes

    from ..sweep.executors import ExecutorSpec
    from ..sweep.store import Store
    from ..symbolic.model import Model

__all__ = ["agreement_map", "AgreementMap", "ModelScenario"]


class ModelScenario:
    """Picklable ``f(**params) -> scenario_for(model, params=params, **options)``."""

    def __init__(self, model, options: Mapping[str, Any] | None = None):
        self.model = model
        self.options = dict(options or {})

    def __call__(self, **params: float):
        return scenario_for(self.model, params=params, **self.options)


class AgreementMap:
    """The result of :func:`agreement_map`.

    Attributes
    ----------
    data : xarray.Dataset
        Dimensions ``(x, y)`` named after the two parameters: ``fluid_stable``,
        ``fluid_omega`` (rad/s), ``fluid_queue`` (equilibrium), ``fluid_swing``,
        ``fluid_period`` (nonlinear run), ``packet_oscillating`` (fraction of seeds),
        ``packet_swing``, ``packet_period``, ``packet_queue``, ``agree``, ``error``; and the
        per-seed packet measurements with a ``seed`` dimension (``runs_*``).
    boundary : xarray.Dataset
        The finer fluid chart the boundary is drawn from.
    x_name, y_name : str
    """

    def __init__(self, data, boundary, x_name: str, y_name: str) -> None:
        self.data = data
        self.boundary = boundary
        self.x_name = x_name
        self.y_name = y_name

    @property
    def x(self) -> np.ndarray:
        return self.data[self.x_name].values

    @property
    def y(self) -> np.ndarray:
        return self.data[self.y_name].values

    def agreement(self) -> float:
        """Fraction of the grid points (with both verdicts) where the verdicts agree."""
        agree = self.data["agree"].values.astype(float)
        ok = np.isfinite(agree)
        return float(np.mean(agree[ok])) if ok.any() else math.nan

    def to_xarray(self) -> xr.Dataset:
        return self.data

    def plot(self, ax: Axes | None = None) -> Axes:
        """The plane: the fluid-unstable region shaded, the fluid boundary, every grid point
        marked by its packet verdict (o steady, x oscillating) and coloured by agreement,
        and the disagreement band (the cells of the points that disagree) hatched.

        Parameters
        ----------
        ax : matplotlib.axes.Axes, optional
            Axes to draw on; a new figure by default.

        Returns
        -------
        matplotlib Axes
        """
        import matplotlib.pyplot as plt
        from matplotlib.patches import Rectangle

        if ax is None:
            _, ax = plt.subplots(figsize=(6.4, 4.8))
        b = self.boundary
        bx, by = b[self.x_name].values, b[self.y_name].values
        stable = b["stable"].values.astype(float).T
        ax.contourf(bx, by, 1 - stable, levels=[0.5, 1.5], colors=["#f3d9d2"])
        ax.contour(bx, by, stable, levels=[0.5], colors="C3", linewidths=1.5)
        xs, ys = self.x, self.y
        dx = np.diff(xs).min() / 2 if xs.size > 1 else 0.5
        dy = np.diff(ys).min() / 2 if ys.size > 1 else 0.5
        for i, xv in enumerate(xs):
            for j, yv in enumerate(ys):
                agree = self.data["agree"].values[i, j]
                osc = self.data["packet_oscillating"].values[i, j]
                if not (np.isfinite(agree) and np.isfinite(osc)):
                    ax.plot(xv, yv, "s", color="0.6", ms=6)
                    continue
                color = "C2" if agree else "C3"
                ax.plot(xv, yv, "x" if osc >= 0.5 else "o", color=color, ms=8, mew=2, mfc="none")
                if not agree:
                    ax.add_patch(
                        Rectangle(
                            (xv - dx, yv - dy),
                            2 * dx,
                            2 * dy,
                            fill=False,
                            hatch="///",
                            edgecolor="C3",
                            lw=0,
                        )
                    )
        ax.set_xlabel(self.x_name)
        ax.set_ylabel(self.y_name)
        ax.set_title(
            f"fluid boundary (line, unstable shaded) vs packets: "
            f"{100 * self.agreement():.0f} % agree",
            fontsize=10,
        )
        ax.plot([], [], "o", color="C2", mfc="none", label="packets steady, agree")
        ax.plot([], [], "x", color="C2", label="packets oscillate, agree")
        ax.plot([], [], "o", color="C3", mfc="none", label="disagree")
        ax.legend(fontsize=7, loc="best")
        return ax

    def __repr__(self) -> str:
        return (
            f"AgreementMap({self.x_name} x {self.y_name}: {self.x.size} x {self.y.size} points, "
            f"{self.data.sizes.get('seed', 1)} seed(s), agreement {self.agreement():.2f})"
        )


def _fluid_point(model, params, t_end: float, after: float):
    from ..dde.simulation import simulate

    view = fluid_view(model, params)
    sol = simulate(model, t_end, params=dict(params), history=view["history"])
    t = np.linspace(0.0, t_end, int(round(t_end * 100)) + 1)
    q = sol(t, view["queue"])
    osc = queue_oscillation(t, q, rtt=view["rtt"], after=after)
    from ..dde.oscillation import oscillation

    cyc = oscillation(sol, view["queue"], after=after)
    return osc.swing, (cyc.period if cyc.sustained else math.nan)


def agreement_map(
    model: Model,
    grid: Mapping[str, Sequence[float]],
    t_end: float,
    *,
    seeds: Sequence[int] = (1,),
    after: float | None = None,
    params: Mapping[str, float] | None = None,
    scenario_options: Mapping[str, Any] | None = None,
    boundary_points: int = 24,
    executor: ExecutorSpec = None,
    store: Store | str | os.PathLike | None = None,
    progress: bool | None = None,
    timeout: float | None = None,
) -> AgreementMap:
    """Fluid and packet verdicts over a two-parameter grid (see :mod:`fluidnet.packet.agreement`).

    Parameters
    ----------
    model : fluidnet.Model
        A library model with a packet counterpart (``fn.packet.scenario_for``).
    grid : dict
        ``{x: values, y: values}``: the two parameters, the first on the plot's x axis.
    t_end : float
        Simulated seconds of every packet (and fluid) run.
    seeds : sequence of int
        Packet runs per point.
    after : float, optional
        Start of the measured tail (default: half the run).
    params : dict, optional
        Other parameter values of the model.
    scenario_options : dict, optional
        Passed to :func:`fluidnet.packet.scenario_for` (``red_spacing``, ``buffer``, ...).
    boundary_points : int
        Points per axis of the chart the fluid boundary is drawn from (a chart of MGT/RED,
        whose delay depends on the queue, costs about 0.08 s of CPU per point).
    executor, store, progress
        For the packet runs, as in every sweep (:mod:`fluidnet.sweep`): a Dask cluster, local
        processes, a checkpoint directory to resume from.
    timeout : float, optional
        Wall seconds per packet run.

    Returns
    -------
    AgreementMap
        ``.to_xarray()``, ``.plot()``, ``.agreement()``.

    Raises
    ------
    ParameterError
        For a grid that is not two parameters of the model.
    """
    import xarray as xr

    from ..stability.chart import stability_chart

    if not isinstance(grid, Mapping) or len(grid) != 2:
        raise ParameterError("grid must name exactly two parameters: {x: values, y: values}")
    (x_name, xs), (y_name, ys) = ((k, np.asarray(v, dtype=float)) for k, v in grid.items())
    base = dict(params or {})
    unknown = [k for k in (x_name, y_name, *base) if k not in model.values]
    if unknown:
        raise ParameterError(
            f"{', '.join(map(repr, unknown))} not parameter(s) of model {model.name!r}"
        )
    if boundary_points < 4:
        raise OptionError(f"boundary_points = {boundary_points!r} must be at least 4")
    m = model.with_params(**base) if base else model
    start = 0.5 * t_end if after is None else float(after)
    chart = stability_chart(m, {x_name: xs, y_name: ys}, on_error="nan")
    fine = stability_chart(
        m,
        {
            x_name: np.linspace(xs.min(), xs.max(), boundary_points),
            y_name: np.linspace(ys.min(), ys.max(), boundary_points),
        },
        on_error="nan",
    )
    runs = sweep(
        ModelScenario(m, scenario_options),
        t_end,
        grid={x_name: xs, y_name: ys},
        seeds=seeds,
        measure=_measure_after(start),
        executor=executor,
        store=store,
        progress=progress,
        timeout=timeout,
    )
    shape = (xs.size, ys.size)
    fluid_queue = np.full(shape, math.nan)
    fluid_swing = np.full(shape, math.nan)
    fluid_period = np.full(shape, math.nan)
    for i, xv in enumerate(xs):
        for j, yv in enumerate(ys):
            point = {x_name: float(xv), y_name: float(yv)}
            try:
                view = fluid_view(m, point)
                fluid_queue[i, j] = m.equilibrium(params=point)[view["queue"]]
                fluid_swing[i, j], fluid_period[i, j] = _fluid_point(m, point, t_end, start)
            except Exception:  # noqa: BLE001 - no equilibrium or a failed run: left NaN
                pass
    stable = chart["stable"].values.astype(float)
    stable[~np.isfinite(chart["abscissa"].values)] = math.nan
    osc = runs["oscillating"].mean("seed").values
    agree = np.where(
        np.isfinite(stable) & np.isfinite(osc),
        ((stable < 0.5) == (osc >= 0.5)).astype(float),
        math.nan,
    )
    data = xr.Dataset(
        {
            "fluid_stable": ((x_name, y_name), stable),
            "fluid_omega": ((x_name, y_name), chart["omega"].values),
            "fluid_queue": ((x_name, y_name), fluid_queue),
            "fluid_swing": ((x_name, y_name), fluid_swing),
            "fluid_period": ((x_name, y_name), fluid_period),
            "packet_oscillating": ((x_name, y_name), osc),
            "packet_swing": ((x_name, y_name), runs["swing"].mean("seed").values),
            "packet_period": ((x_name, y_name), runs["period"].mean("seed").values),
            "packet_queue": ((x_name, y_name), runs["mean_queue"].mean("seed").values),
            "agree": ((x_name, y_name), agree),
        },
        coords={x_name: xs, y_name: ys},
        attrs={
            "model": m.name,
            "t_end": float(t_end),
            "after": start,
            "seeds": list(map(int, seeds)),
            "criterion": "packet queue averaged over one RTT swings over its mean "
            "((q95 - q5)/mean >= 1) in the tail",
        },
    )
    for var in runs.data_vars:
        data[f"runs_{var}"] = runs[var]
    return AgreementMap(data, fine, x_name, y_name)


class _Measure:
    """Picklable ``summary(run, after=after)``."""

    def __init__(self, after: float):
        self.after = float(after)

    def __call__(self, run):
        return summary(run, after=self.after)


def _measure_after(after: float) -> _Measure:
    return _Measure(after)
