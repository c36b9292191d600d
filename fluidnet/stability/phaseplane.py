"""The nonlinear picture: phase portraits and nonlinear stability charts.

Both integrate the model's nonlinear delay equations with :func:`fluidnet.simulate_ensemble`
(one compiled integrator, all initial conditions and parameter points in one parallel call).
Initial conditions are constant histories ``{state: value}`` (or any history spec accepted by
:func:`fluidnet.simulate`); states left out start at the equilibrium.
"""

from __future__ import annotations

import inspect
import math
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import AnalysisError, FluidnetError, ModelError, OptionError, ParameterError
from ..options import count_option, number_option
from ..overrides import merge_params, reject_keywords
from ..progress import progress_bar
from ..sweep import grid_points

if TYPE_CHECKING:
    from collections.abc import Sequence

    import xarray as xr
    from matplotlib.axes import Axes
    from numpy.typing import ArrayLike

    from ..symbolic.model import Model

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


def _initial_value(
    spec: float | Callable[[float], float] | tuple[ArrayLike, ArrayLike], t0: float
) -> float:
    """The value at t0 of a history spec (number, callable of t, or (t, values) samples)."""
    if callable(spec):
        return float(spec(t0))
    if isinstance(spec, tuple) and len(spec) == 2:
        return float(np.asarray(spec[1], dtype=float).reshape(-1)[-1])
    return float(spec)


@dataclass(kw_only=True)
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

    def to_xarray(self) -> Any:
        """The trajectories as an :class:`xarray.Dataset` (what
        :func:`fluidnet.simulate_ensemble` returned, every state along ``member`` and ``t``).

        Returns
        -------
        xarray.Dataset
            A copy; attributes ``x_name``, ``y_name`` and the equilibrium's values
            (``equilibrium_<state>``) added.
        """
        ds = self.data.copy()
        ds.attrs.update(x_name=self.x_name, y_name=self.y_name)
        ds.attrs.update({f"equilibrium_{k}": float(v) for k, v in self.equilibrium.items()})
        return ds

    def plot(
        self,
        ax: Axes | None = None,
        *,
        x_scale: float = 1.0,
        y_scale: float = 1.0,
        arrows: bool = True,
        **kwargs: Any,
    ) -> Axes:
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
    model: Model,
    ics: Mapping[str, Any] | Sequence[Mapping[str, Any]],
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
        When ``x`` or ``y`` is not a state, or an initial condition names a state the model
        does not have.
    AnalysisError
        For malformed ``ics``.
    ParameterError
        For an unknown parameter or a value that is not a real number.
    OptionError
        For a bad ``n_points`` (or another option of :func:`fluidnet.simulate_ensemble`).

    See Also
    --------
    simulate : one run
    nonlinear_chart : the nonlinear verdict over a plane of parameters
    """
    from ..dde import simulate_ensemble

    # the integration options phase_portrait passes on (it sets params, history, n_points)
    passed = {
        k
        for k, p in inspect.signature(simulate_ensemble).parameters.items()
        if p.kind is inspect.Parameter.KEYWORD_ONLY
    } - {"params", "history", "n_points"}
    reject_keywords({k: v for k, v in options.items() if k not in passed}, "phase_portrait",
                    model, valid=passed)  # fmt: skip
    _check_state(model, x, "x")
    _check_state(model, y, "y")
    ics = _as_ics(ics)
    n_points = count_option("n_points", n_points, minimum=2, where="phase_portrait")
    params = merge_params(params, {}, "phase_portrait")
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
        x_name=x,
        y_name=y,
        t=ds["time"].values,
        x=ds[x].values,
        y=ds[y].values,
        starts=starts,
        equilibrium={k: float(v) for k, v in eq.items()},
        params=model.resolve_params(params),
        data=ds,
    )


#: Trajectories held in memory at once by :func:`nonlinear_chart` (one batch of members).
_BATCH_MEMBERS = 256


def _classify(
    model, fixed, point, series_by_ic, t, state, after, rtol, status, amp, freq, at_eq
) -> None:
    """Fill the verdicts of one grid point (one row per initial condition) from its runs."""
    from ..dde import oscillation

    try:
        target = float(model.equilibrium(**fixed, **point)[state])
    except FluidnetError:
        target = math.nan
    for h, series in enumerate(series_by_ic):
        if not np.all(np.isfinite(series)):
            continue
        osc = oscillation((t, series), state, after=after)
        status[h] = osc.status
        amp[h] = osc.amplitude
        freq[h] = osc.frequency
        scale = max(abs(target), float(np.max(np.abs(series))), np.finfo(float).tiny)
        at_eq[h] = abs(series[-1] - target) <= rtol * scale


def nonlinear_chart(
    model: Model,
    grid: Mapping[str, Any],
    *,
    ics: Mapping[str, Any] | Sequence[Mapping[str, Any]],
    t_end: float,
    state: str | None = None,
    after: float | None = None,
    n_points: int = 4001,
    equilibrium_rtol: float = 1e-2,
    params: Mapping[str, float] | None = None,
    **options: Any,
) -> xr.Dataset:
    """Nonlinear stability over a parameter grid: does every initial condition settle?

    Every (grid point, initial condition) pair is one member of :func:`fluidnet.simulate_ensemble`
    calls over batches of the grid; the tail of each trajectory of ``state`` is classified by
    :func:`fluidnet.oscillation` (settles, or oscillates for good, with the amplitude and
    frequency of the oscillation) as soon as its batch ends, and only the verdicts are kept:
    memory holds one batch of trajectories whatever the size of the grid.

    Parameters
    ----------
    model : fluidnet.Model
    grid : dict
        ``{parameter: 1-D values}``, one Dataset dimension per entry.
    ics : dict or list of dict
        Initial conditions (see :func:`phase_portrait`).
    t_end : float
        Integration horizon; it must be long enough for the slowest transient.
    state : str, optional
        The state classified (default: the first state).
    after : float, optional
        Start of the classified tail (default: the middle of the run, see
        :func:`fluidnet.oscillation`).
    n_points : int, default 4001
        Output times per trajectory; they must resolve the oscillation's period.
    equilibrium_rtol : float, default 1e-2
        A trajectory ends *at the equilibrium* when its last value is within this fraction of
        ``max(|equilibrium value|, max |trajectory|)``.
    params : dict, optional
        Values of the other parameters ``{name: value}`` (scalars, the same at every grid
        point).
    **options
        Passed to :func:`fluidnet.simulate_ensemble` (``rtol``, ``max_step``, ``workers``,
        ``executor``, ``store`` ...). Failed members are NaN (``on_error="nan"`` by default)
        and count as neither stable nor oscillating.

    Returns
    -------
    xarray.Dataset
        Dimensions: the grid names, plus ``ic`` for the per-initial-condition variables:

        * ``stable``: every trajectory is stable (``ic_stable``): it does not oscillate for good
          and either settles (``Oscillation.converged``) or ends at the equilibrium;
        * ``at_equilibrium``: every trajectory ends at the equilibrium of its parameters (a
          slowly settling one may not have arrived by ``t_end``);
        * ``oscillating``: some trajectory oscillates for good (``Oscillation.sustained``);
        * ``amplitude`` (peak to peak) and ``frequency`` (Hz) of the largest such oscillation
          (0 and NaN when there is none);
        * ``ic_stable``, ``ic_status`` (the :func:`fluidnet.oscillation` status, ``"failed"``
          for a failed integration), ``ic_amplitude``, ``ic_frequency``, ``ic_at_equilibrium``.

        ``ds.stability.plot()`` draws the ``stable`` region.

    Raises
    ------
    ModelError
        When ``state`` is not a state.
    AnalysisError
        For malformed ``ics``.
    ParameterError
        For a grid name or a name in ``params`` that is not a parameter of the model, or a
        value that is not a real number.
    OptionError
        For a name both in the grid and in ``params``, or a bad ``n_points``,
        ``equilibrium_rtol`` or ``after``.

    See Also
    --------
    stability_chart : the linear verdict over the same plane
    phase_portrait : runs in a plane of two states

    Examples
    --------
    >>> import fluidnet as fn
    >>> m = fn.models.rcp()
    >>> C, d0 = 18750.0, 0.2
    >>> ds = fn.nonlinear_chart(m, {"alpha": [0.6, 1.4], "beta": [0.8]},
    ...                         ics=[{"R": 0.01 * C, "q": 2 * C * d0}], t_end=300 * d0)
    >>> ds["stable"].values.ravel().tolist()       # Dukkipati & McKeown Figs 42, 43
    [True, False]
    """
    import xarray as xr

    from ..dde import simulate_ensemble

    state = model.state_names[0] if state is None else state
    _check_state(model, state, "state")
    ics = _as_ics(ics)
    n_points = count_option("n_points", n_points, minimum=2, where="nonlinear_chart")
    equilibrium_rtol = number_option(
        "equilibrium_rtol", equilibrium_rtol, positive=True, where="nonlinear_chart"
    )
    if after is not None:
        after = number_option("after", after, where="nonlinear_chart")
    names, shape, points = grid_points(grid)
    fixed = merge_params(params, {}, "nonlinear_chart")
    overlap = sorted(set(names) & set(fixed))
    if overlap:
        raise OptionError(f"{overlap} given both as a grid and in params")
    for n in [*names, *fixed]:
        if n not in model.param_names:
            raise ParameterError(
                f"nonlinear_chart: {n!r} is not a parameter of model {model.name!r} "
                f"(parameters: {', '.join(model.param_names)})"
            )
    table = {n: np.array([p[n] for p in points]) for n in names}
    table.update({k: np.full(len(points), float(v)) for k, v in fixed.items()})
    options.setdefault("on_error", "nan")
    on_error = options["on_error"]
    show = options.pop("progress", None)
    n_ic, n_pts = len(ics), len(points)
    status = np.full((n_pts, n_ic), "failed", dtype=object)
    amp = np.full((n_pts, n_ic), np.nan)
    freq = np.full((n_pts, n_ic), np.nan)
    at_eq = np.zeros((n_pts, n_ic), dtype=bool)
    # Trajectories are reduced to their verdicts batch by batch: memory holds one batch of
    # trajectories (_BATCH_MEMBERS of them), not the whole grid's.
    per_batch = max(1, _BATCH_MEMBERS // n_ic)
    failed = 0
    bar = progress_bar(
        n_pts * n_ic,
        show,
        f"{model.name} chart",
        min_items=0,
        unit="run",
        delay=0.0 if show else 1.0,
    )
    try:
        for start in range(0, n_pts, per_batch):
            rows = range(start, min(start + per_batch, n_pts))
            with warnings.catch_warnings():
                warnings.filterwarnings("ignore", "of .* ensemble members failed")
                ds = simulate_ensemble(
                    model,
                    t_end,
                    params={k: v[rows.start : rows.stop] for k, v in table.items()},
                    history=ics,
                    n_points=n_points,
                    progress=False,
                    **options,
                )
            failed += int(np.sum(ds["error"].values != ""))
            t = ds["time"].values
            values = ds[state].values
            del ds
            for p in rows:
                _classify(
                    model,
                    fixed,
                    points[p],
                    values[(p - rows.start) * n_ic :][:n_ic],
                    t,
                    state,
                    after,
                    equilibrium_rtol,
                    status[p],
                    amp[p],
                    freq[p],
                    at_eq[p],
                )
            del values
            bar.update(len(rows) * n_ic)
    finally:
        bar.close()
    if failed and on_error == "nan":
        warnings.warn(
            f"{failed} of {n_pts * n_ic} ensemble members failed; they count as neither "
            "stable nor oscillating (ic_status 'failed')",
            RuntimeWarning,
            stacklevel=2,
        )
    settled = np.isin(status, ("converged", "decaying", "settling"))
    sustained = np.isin(status, ("sustained", "growing"))
    # a trajectory that does not oscillate and ends at the equilibrium is stable even when a
    # late small transient (e.g. the queue emptying) makes its tail look "diverging"
    ic_stable = ~sustained & (status != "failed") & (settled | at_eq)
    big = np.where(sustained, amp, -np.inf).argmax(axis=1)
    rows = np.arange(n_pts)
    any_osc = sustained.any(axis=1)
    gshape = tuple(shape)
    dims_ic = [*names, "ic"]
    data = {
        "stable": (names, ic_stable.all(axis=1).reshape(gshape)),
        "at_equilibrium": (names, at_eq.all(axis=1).reshape(gshape)),
        "oscillating": (names, any_osc.reshape(gshape)),
        "amplitude": (names, np.where(any_osc, amp[rows, big], 0.0).reshape(gshape)),
        "frequency": (names, np.where(any_osc, freq[rows, big], np.nan).reshape(gshape)),
        "ic_stable": (dims_ic, ic_stable.reshape(gshape + (n_ic,))),
        "ic_status": (dims_ic, status.astype(str).reshape(gshape + (n_ic,))),
        "ic_amplitude": (dims_ic, amp.reshape(gshape + (n_ic,))),
        "ic_frequency": (dims_ic, freq.reshape(gshape + (n_ic,))),
        "ic_at_equilibrium": (dims_ic, at_eq.reshape(gshape + (n_ic,))),
    }
    coords = {n: np.asarray(grid[n], dtype=float).reshape(-1) for n in names}
    coords["ic"] = np.arange(n_ic)
    attrs = {
        "model": model.name,
        "state": state,
        "t_end": float(t_end),
        **{f"fixed_{k}": float(v) for k, v in fixed.items()},
    }
    return xr.Dataset(data, coords=coords, attrs=attrs)
