"""The nonlinear picture: phase portraits and nonlinear stability charts.

Both integrate the model's nonlinear delay equations with :func:`fluidnet.simulate_ensemble`
(one compiled integrator, all initial conditions and parameter points in one parallel call).
Initial conditions are constant histories ``{state: value}`` (or any history spec accepted by
:func:`fluidnet.simulate`); states left out start at the equilibrium.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import AnalysisError, FluidnetError, ModelError
from ..sweep import grid_points

__all__ = ["PhasePortrait", "phase_portrait", "nonlinear_chart"]


def _check_state(model, name: str, what: str) -> None:
    if name not in model.state_names:
        raise ModelError(
            f"{what} = {name!r} is not a state of model {model.name!r} "
            f"(states: {', '.join(model.state_names)})"
        )


def _as_ics(ics) -> list[Mapping[str, Any]]:
    if isinstance(ics, Mapping):
        return [ics]
    try:
        out = list(ics)
    except TypeError as exc:
        raise AnalysisError(
            "ics must be a dict {state: value} or a list of such dicts (one per initial "
            f"condition), got {type(ics).__name__}"
        ) from exc
    if not out:
        raise AnalysisError("ics is empty: give at least one initial condition")
    for i, ic in enumerate(out):
        if not isinstance(ic, Mapping):
            raise AnalysisError(f"ics[{i}] must be a dict {{state: value}}, got {ic!r}")
    return out


def _initial_value(spec, t0: float) -> float:
    """The value at t0 of a history spec (number, callable of t, or (t, values) samples)."""
    if callable(spec):
        return float(spec(t0))
    if isinstance(spec, tuple) and len(spec) == 2:
        return float(np.asarray(spec[1], dtype=float).reshape(-1)[-1])
    return float(spec)


@dataclass
class PhasePortrait:
    """Trajectories of a model projected onto two states.

    Attributes
    ----------
    x_name, y_name : str
    t : numpy.ndarray
        Common output times.
    x, y : numpy.ndarray, shape (n_ics, len(t))
        The two states along each trajectory (NaN after a failed integration).
    starts : numpy.ndarray, shape (n_ics, 2)
        The initial points.
    equilibrium : dict
        The equilibrium ``{state: value}`` at the run's parameters.
    params : dict
        Parameter values used.
    data : xarray.Dataset
        Everything :func:`fluidnet.simulate_ensemble` returned.
    """

    x_name: str
    y_name: str
    t: np.ndarray
    x: np.ndarray
    y: np.ndarray
    starts: np.ndarray
    equilibrium: dict[str, float]
    params: dict[str, float]
    data: Any = field(repr=False)

    def plot(
        self, ax=None, *, x_scale: float = 1.0, y_scale: float = 1.0, arrows: bool = True, **kwargs
    ):
        """Draw every trajectory, the initial points (circles) and the equilibrium (star).

        Parameters
        ----------
        x_scale, y_scale : float
            Multiply the coordinates (e.g. ``x_scale=1/C`` to plot a normalized rate).
        arrows : bool
            Mark the direction of time along each trajectory.

        Returns
        -------
        matplotlib Axes
        """
        import matplotlib.pyplot as plt

        if ax is None:
            _, ax = plt.subplots()
        for i in range(self.x.shape[0]):
            xs, ys = self.x[i] * x_scale, self.y[i] * y_scale
            line = ax.plot(xs, ys, lw=1.0, **kwargs)[0]
            ok = np.flatnonzero(np.isfinite(xs) & np.isfinite(ys))
            if arrows and ok.size > 10:
                j = ok[ok.size // 8]
                ax.annotate(
                    "",
                    xy=(xs[j + 1], ys[j + 1]),
                    xytext=(xs[j], ys[j]),
                    arrowprops={"arrowstyle": "->", "color": line.get_color()},
                )
            ax.plot(
                self.starts[i, 0] * x_scale,
                self.starts[i, 1] * y_scale,
                "o",
                color=line.get_color(),
                ms=5,
            )
        ax.plot(
            self.equilibrium[self.x_name] * x_scale,
            self.equilibrium[self.y_name] * y_scale,
            "k*",
            ms=12,
            label="equilibrium",
        )
        ax.set_xlabel(self.x_name if x_scale == 1.0 else f"{self.x_name} x {x_scale:g}")
        ax.set_ylabel(self.y_name if y_scale == 1.0 else f"{self.y_name} x {y_scale:g}")
        return ax


def phase_portrait(
    model,
    ics,
    *,
    x: str,
    y: str,
    t_end: float,
    params: Mapping[str, float] | None = None,
    n_points: int = 2001,
    **options: Any,
) -> PhasePortrait:
    """Trajectories from several initial conditions, projected onto the states ``x`` and ``y``.

    Parameters
    ----------
    model : fluidnet.Model
    ics : dict or list of dict
        Initial conditions: ``{state: value}`` constant histories (or any history spec of
        :func:`fluidnet.simulate`); states left out start at the equilibrium.
    x, y : str
        The two states to plot.
    t_end : float
        Integration horizon.
    params : dict, optional
        Parameter overrides.
    n_points : int, default 2001
        Output times (equally spaced).
    **options
        Passed to :func:`fluidnet.simulate_ensemble` (``rtol``, ``atol``, ``max_step``,
        ``method``, ``on_error`` ...).

    Returns
    -------
    PhasePortrait
        With ``.plot()``.

    Raises
    ------
    ModelError
        When ``x`` or ``y`` is not a state.
    AnalysisError
        For malformed ``ics``.
    """
    from ..dde import simulate_ensemble

    _check_state(model, x, "x")
    _check_state(model, y, "y")
    ics = _as_ics(ics)
    params = dict(params or {})
    eq = model.equilibrium(**params)
    ds = simulate_ensemble(
        model,
        t_end,
        params={k: [v] for k, v in params.items()} or None,
        history=ics,
        n_points=n_points,
        **options,
    )
    t0 = float(ds.attrs.get("t0", 0.0))
    starts = np.array(
        [[_initial_value(ic.get(x, eq[x]), t0), _initial_value(ic.get(y, eq[y]), t0)] for ic in ics]
    )
    return PhasePortrait(
        x,
        y,
        ds["time"].values,
        ds[x].values,
        ds[y].values,
        starts,
        {k: float(v) for k, v in eq.items()},
        model.resolve_params(params),
        ds,
    )


def nonlinear_chart(
    model,
    grids: Mapping[str, Any],
    *,
    ics,
    t_end: float,
    state: str | None = None,
    after: float | None = None,
    n_points: int = 2001,
    **options: Any,
):
    """Nonlinear stability over a parameter grid: convergence from every initial condition.

    Every (grid point, initial condition) pair is one member of a single
    :func:`fluidnet.simulate_ensemble` call; each trajectory of ``state`` is then classified by
    :func:`fluidnet.oscillation` (converged to a constant, or a sustained oscillation with its
    amplitude and frequency).

    Parameters
    ----------
    model : fluidnet.Model
    grids : dict
        ``{parameter: 1-D values}``, one Dataset dimension per entry.
    ics : dict or list of dict
        Initial conditions (see :func:`phase_portrait`).
    t_end : float
        Integration horizon; it must be long enough for the slowest transient.
    state : str, optional
        The state classified (default: the first state).
    after : float, optional
        Only the trajectory after this time is classified (default: see
        :func:`fluidnet.oscillation`).
    n_points : int, default 2001
        Output times per trajectory.
    **options
        Passed to :func:`fluidnet.simulate_ensemble`; other fixed parameter values go in
        ``params={...}``.

    Returns
    -------
    xarray.Dataset
        Dimensions: the grid names, plus ``ic`` for the per-initial-condition variables.
        ``converged`` (bool, every initial condition converged), ``oscillating`` (bool, some
        sustained oscillation), ``amplitude`` and ``frequency`` (Hz) of the largest oscillation,
        and per initial condition ``ic_converged``, ``ic_amplitude``, ``ic_frequency``.
        ``ds.stability.plot()`` is not meant for it; plot ``ds["converged"]`` directly.
    """
    import xarray as xr

    from ..dde import oscillation, simulate_ensemble

    state = model.state_names[0] if state is None else state
    _check_state(model, state, "state")
    ics = _as_ics(ics)
    names, shape, points = grid_points(grids)
    fixed = dict(options.pop("params", None) or {})
    overlap = sorted(set(names) & set(fixed))
    if overlap:
        raise AnalysisError(f"{overlap} given both as a grid and in params")
    for n in names:
        if n not in model.param_names:
            raise AnalysisError(
                f"grid parameter {n!r} is not a parameter of model {model.name!r} "
                f"(parameters: {', '.join(model.param_names)})"
            )
    table = {n: np.array([p[n] for p in points]) for n in names}
    table.update({k: np.full(len(points), float(v)) for k, v in fixed.items()})
    options.setdefault("on_error", "nan")
    ds = simulate_ensemble(model, t_end, params=table, history=ics, n_points=n_points, **options)
    n_ic = len(ics)
    conv = np.zeros((len(points), n_ic), dtype=bool)
    amp = np.full((len(points), n_ic), np.nan)
    freq = np.full((len(points), n_ic), np.nan)
    t = ds["time"].values
    for member in range(ds.sizes["member"]):
        p, h = divmod(member, n_ic)
        series = ds[state].values[member]
        if not np.all(np.isfinite(series)):
            continue
        try:
            osc = oscillation((t, series), state, after=after)
        except FluidnetError:
            continue
        conv[p, h] = bool(osc.converged)
        amp[p, h] = float(getattr(osc, "amplitude", math.nan) or 0.0)
        freq[p, h] = float(getattr(osc, "frequency", math.nan) or math.nan)
    grid_shape = tuple(shape)
    coords = {n: np.asarray(grids[n], dtype=float).reshape(-1) for n in names}
    coords["ic"] = np.arange(n_ic)
    all_conv = conv.all(axis=1)
    osc_any = ~conv & np.isfinite(amp)
    big = np.where(np.isfinite(amp), amp, -np.inf).argmax(axis=1)
    rows = np.arange(len(points))
    data = {
        "converged": (names, all_conv.reshape(grid_shape)),
        "oscillating": (names, osc_any.any(axis=1).reshape(grid_shape)),
        "amplitude": (names, np.where(all_conv, 0.0, amp[rows, big]).reshape(grid_shape)),
        "frequency": (names, np.where(all_conv, np.nan, freq[rows, big]).reshape(grid_shape)),
        "ic_converged": ([*names, "ic"], conv.reshape(grid_shape + (n_ic,))),
        "ic_amplitude": ([*names, "ic"], amp.reshape(grid_shape + (n_ic,))),
        "ic_frequency": ([*names, "ic"], freq.reshape(grid_shape + (n_ic,))),
    }
    attrs = {"model": model.name, "state": state, "t_end": float(t_end)}
    return xr.Dataset(data, coords=coords, attrs=attrs)
