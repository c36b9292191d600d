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

Each point's run length and measured tail come from the fluid time constants at the point
(:mod:`fluidnet.packet.timescales`) unless the call fixes them: a point near the boundary, whose
slowest mode decays slowly, runs longer than one far from it, and a fluid-unstable point's tail
holds whole periods of its fluid cycle. The charts, the fluid points and the ns-3 runs are
tasks of one executor (a Dask cluster: one task per point and per run), and the runs go
through the content-keyed run store (:mod:`fluidnet.packet.store`).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import OptionError, ParameterError
from .analysis import queue_oscillation
from .mapping import fluid_view, scenario_for

if TYPE_CHECKING:
    import os

    import xarray as xr
    from matplotlib.axes import Axes

    from ..sweep.executors import ExecutorSpec
    from ..symbolic.model import Model
    from .store import RunStore

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
        ``fluid_period`` (nonlinear run), ``fluid_cycle`` (the fluid cycle's period that set
        the tail, unstable points), ``t_end`` and ``after`` (each point's run and tail),
        ``packet_oscillating`` (fraction of seeds), ``packet_swing``, ``packet_period``,
        ``packet_queue``, ``agree``; and the per-seed packet measurements with a ``seed``
        dimension (``runs_*``, ``runs_error``: why a run or its point failed, empty if not).
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


class _FluidPoint:
    """Picklable: the fluid side of one grid point, and its tail (one task per point).

    ``(point, abscissa, omega)`` -> ``{queue, swing, period, after, t_end, cycle, error}``:
    the equilibrium queue, the tail from the fluid time constants
    (:mod:`fluidnet.packet.timescales`) unless the call fixed it, and the nonlinear fluid run's
    swing and cycle period over that tail.
    """

    def __init__(self, model, t_end: float | None, after: float | None, start: float) -> None:
        self.model = model
        self.t_end = t_end
        self.after = after
        self.start = start

    def __call__(self, item: tuple[dict, float, float]) -> dict[str, Any]:
        from ..dde.oscillation import oscillation
        from ..dde.simulation import simulate
        from .timescales import averaging_time, fluid_cycle, transient_rule

        point, abscissa, omega = item
        out: dict[str, Any] = dict.fromkeys(("queue", "swing", "period", "cycle"), math.nan)
        out["error"] = ""
        m = self.model
        try:
            view = fluid_view(m, point)
            q_eq = float(m.equilibrium(params=point)[view["queue"]])
            out["queue"] = q_eq
            if self.t_end is not None and self.after is not None:
                length, begin = float(self.t_end), float(self.after)
            else:
                cycle = math.nan
                if abscissa > 0 and omega > 0:
                    cycle = fluid_cycle(m, point, 2 * math.pi / omega)
                rule = transient_rule(
                    abscissa,
                    omega,
                    rtt=view["rtt"] + q_eq / view["capacity"],
                    start=self.start,
                    averaging=averaging_time(m, point),
                    cycle=cycle,
                )
                out["cycle"] = rule.cycle
                length = float(self.t_end) if self.t_end is not None else rule.t_end
                begin = float(self.after) if self.after is not None else rule.after
                if not begin < length:
                    raise ParameterError(
                        f"t_end = {length:g} s is too short: the tail starts at {begin:g} s "
                        f"({rule.describe()})"
                    )
            out["t_end"], out["after"] = length, begin
            sol = simulate(m, length, params=dict(point), history=view["history"])
            t = np.linspace(0.0, length, int(round(length * 100)) + 1)
            osc = queue_oscillation(t, sol(t, view["queue"]), rtt=view["rtt"], after=begin)
            cyc = oscillation(sol, view["queue"], after=begin)
            out["swing"] = osc.swing
            out["period"] = cyc.period if cyc.sustained else math.nan
        except Exception as exc:  # noqa: BLE001 - kept with the point, the others go on
            out["error"] = f"{type(exc).__name__}: {exc}"
            out.setdefault("t_end", math.nan)
            out.setdefault("after", math.nan)
        return out


def agreement_map(
    model: Model,
    grid: Mapping[str, Sequence[float]],
    t_end: float | None = None,
    *,
    seeds: Sequence[int] = (1,),
    after: float | None = None,
    params: Mapping[str, float] | None = None,
    scenario_options: Mapping[str, Any] | None = None,
    boundary_points: int = 24,
    executor: ExecutorSpec = None,
    store: RunStore | str | os.PathLike | bool | None = None,
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
    t_end : float, optional
        Simulated seconds of every packet (and fluid) run; default, at every point, from the
        fluid time constants (:func:`fluidnet.packet.transient`).
    seeds : sequence of int
        Packet runs per point.
    after : float, optional
        Start of the measured tail; default, at every point, from the fluid time constants
        (after the flows' start-up, five time constants of the slowest mode and of the AQM's
        averaging at a fluid-stable point, three periods of the fluid cycle at an unstable
        one), so that a still-settling queue is not called oscillating and the tail holds
        whole cycles.
    params : dict, optional
        Other parameter values of the model.
    scenario_options : dict, optional
        Passed to :func:`fluidnet.packet.scenario_for` (``red_spacing``, ``buffer``, ...).
    boundary_points : int
        Points per axis of the chart the fluid boundary is drawn from (a chart of MGT/RED,
        whose delay depends on the queue, costs about 0.08 s of CPU per point).
    executor : executor specification, optional
        Where the charts, the fluid points and the packet runs go, one task per point and per
        run (default: the Dask scheduler of ``$FLUIDNET_SCHEDULER`` when set, else serial;
        :func:`fluidnet.packet.batch.packet_executor`).
    store : RunStore, path or bool, optional
        The content-keyed store of the packet runs (:mod:`fluidnet.packet.store`; default
        ``$FLUIDNET_PACKET_STORE``): a rerun, or a kill and rerun, runs only what is missing.
    progress : bool, optional
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
    from .analysis import summary
    from .batch import packet_executor, simulate_many

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
    run = packet_executor(executor)
    m = model.with_params(**base) if base else model
    options = dict(scenario_options or {})
    chart = stability_chart(m, {x_name: xs, y_name: ys}, on_error="nan", executor=run)
    fine = stability_chart(
        m,
        {
            x_name: np.linspace(xs.min(), xs.max(), boundary_points),
            y_name: np.linspace(ys.min(), ys.max(), boundary_points),
        },
        on_error="nan",
        executor=run,
    )
    shape = (xs.size, ys.size)
    points = [{x_name: float(xv), y_name: float(yv)} for xv in xs for yv in ys]
    absc = chart["abscissa"].values.ravel()
    omega = chart["omega"].values.ravel()
    task = _FluidPoint(m, t_end, after, float(options.get("start", 1.0)))
    fluid = run.map(
        task,
        [(p, float(a), float(w)) for p, a, w in zip(points, absc, omega, strict=True)],
        progress=progress,
        desc="fluid points",
    )
    ok = [k for k, f in enumerate(fluid) if not f["error"]]
    batch = simulate_many(
        [scenario_for(m, params=points[k], **options) for k in ok],
        [fluid[k]["t_end"] for k in ok],
        seeds=seeds,
        timeout=timeout,
        executor=run,
        store=store,
        on_error="return",
        progress=progress,
    )
    seeds = [int(s) for s in seeds]
    measured = [[{} for _ in seeds] for _ in points]
    errors = [["" for _ in seeds] for _ in points]
    for k, runs in zip(ok, batch, strict=True):
        for j, r in enumerate(runs):
            if isinstance(r, Exception):
                errors[k][j] = str(r)
            else:
                measured[k][j] = summary(r, after=fluid[k]["after"])
    for k, f in enumerate(fluid):
        if f["error"]:
            errors[k] = [f"fluid side: {f['error']}"] * len(seeds)
    names = next((list(d) for row in measured for d in row if d), list(_SUMMARY_KEYS))
    runs_vars = {
        f"runs_{name}": (
            (x_name, y_name, "seed"),
            np.array(
                [[d.get(name, math.nan) for d in row] for row in measured], dtype=float
            ).reshape(*shape, len(seeds)),
        )
        for name in names
    }
    runs_vars["runs_error"] = (
        (x_name, y_name, "seed"),
        np.array(errors, dtype=object).reshape(*shape, len(seeds)),
    )

    def grid_of(key: str) -> np.ndarray:
        return np.array([f[key] for f in fluid], dtype=float).reshape(shape)

    def over_seeds(name: str) -> np.ndarray:
        vals = runs_vars[f"runs_{name}"][1]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # a point whose runs all failed
            return np.nanmean(vals, axis=-1)

    stable = chart["stable"].values.astype(float)
    stable[~np.isfinite(chart["abscissa"].values)] = math.nan
    osc = over_seeds("oscillating")
    agree = np.where(
        np.isfinite(stable) & np.isfinite(osc),
        ((stable < 0.5) == (osc >= 0.5)).astype(float),
        math.nan,
    )
    data = xr.Dataset(
        {
            "fluid_stable": ((x_name, y_name), stable),
            "fluid_omega": ((x_name, y_name), chart["omega"].values),
            "fluid_queue": ((x_name, y_name), grid_of("queue")),
            "fluid_swing": ((x_name, y_name), grid_of("swing")),
            "fluid_period": ((x_name, y_name), grid_of("period")),
            "fluid_cycle": ((x_name, y_name), grid_of("cycle")),
            "t_end": ((x_name, y_name), grid_of("t_end")),
            "after": ((x_name, y_name), grid_of("after")),
            "packet_oscillating": ((x_name, y_name), osc),
            "packet_swing": ((x_name, y_name), over_seeds("swing")),
            "packet_period": ((x_name, y_name), over_seeds("period")),
            "packet_queue": ((x_name, y_name), over_seeds("mean_queue")),
            "agree": ((x_name, y_name), agree),
            **runs_vars,
        },
        coords={x_name: xs, y_name: ys, "seed": seeds},
        attrs={
            "model": m.name,
            "tail": "given (t_end, after)"
            if t_end is not None and after is not None
            else "from the fluid time constants at every point (fluidnet.packet.transient)",
            "seeds": seeds,
            "criterion": "packet queue averaged over one RTT swings over its mean "
            "((q95 - q5)/mean >= 1) in the tail",
        },
    )
    return AgreementMap(data, fine, x_name, y_name)


#: What :func:`fluidnet.packet.analysis.summary` measures (the variables of a map whose every
#: run failed).
_SUMMARY_KEYS = ("mean_queue", "swing", "period", "oscillating")
