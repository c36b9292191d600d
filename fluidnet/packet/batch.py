"""Many packet runs: a scenario over a grid of values and seeds, through :mod:`fluidnet.sweep`.

:func:`sweep` maps one picklable task (:class:`PacketPoint`: build the scenario of a grid
point, run it, measure it) over the outer product of the grid and the seeds with the executors
and checkpoint stores of :mod:`fluidnet.sweep`: serially, on local processes, or on a Dask
cluster, resuming what a killed sweep left. Every worker process has its own packet server
(loaded once per process), every run its own forked process.

A run that fails inside ns-3 (a crash, a signal, a timeout) is kept as NaN with the worker's
report in the variable ``error`` (``on_error="nan"``, the default), so the other runs of the
sweep are kept; ``on_error="raise"`` stops the sweep instead.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import OptionError, ParameterError
from .analysis import summary
from .scenario import Scenario

if TYPE_CHECKING:
    import os

    import xarray as xr
    from numpy.typing import ArrayLike

    from ..sweep.executors import ExecutorSpec
    from ..sweep.store import Store

__all__ = ["sweep", "PacketPoint"]


class PacketPoint:
    """The task of a packet sweep: ``measure(simulate(scenario at the point, t_end, seed))``.

    Parameters
    ----------
    scenario : Scenario or callable
        A scenario whose fields the grid names as paths (``"flows[0].n"``, see
        :meth:`Scenario.with_values`), or a module-level function ``f(**point) -> Scenario``.
    t_end : float
    measure : callable
        ``measure(run) -> dict of numbers`` (default :func:`fluidnet.packet.analysis.summary`).
    n_points, timeout
        Passed to :func:`fluidnet.packet.simulate`.
    """

    def __init__(
        self,
        scenario: Scenario | Callable[..., Scenario],
        t_end: float,
        measure: Callable[[Any], Mapping[str, float]] = summary,
        n_points: int | None = None,
        timeout: float | None = None,
    ):
        self.scenario = scenario
        self.t_end = float(t_end)
        self.measure = measure
        self.n_points = n_points
        self.timeout = timeout

    def build(self, **point: float) -> Scenario:
        values = {k: v for k, v in point.items() if k != "seed"}
        if isinstance(self.scenario, Scenario):
            return self.scenario.with_values(values)
        sc = self.scenario(**values)
        if not isinstance(sc, Scenario):
            raise ParameterError(f"the scenario function returned {sc!r}, not a Scenario")
        return sc

    def __call__(self, **point: float) -> dict[str, float]:
        from .runner import simulate

        seed = int(point.get("seed", 0))
        run = simulate(
            self.build(**point), self.t_end, seed=seed, n_points=self.n_points, timeout=self.timeout
        )
        return {k: float(v) for k, v in self.measure(run).items()}


def sweep(
    scenario: Scenario | Callable[..., Scenario],
    t_end: float,
    *,
    grid: Mapping[str, ArrayLike] | None = None,
    seeds: Sequence[int] = (0,),
    measure: Callable[[Any], Mapping[str, float]] = summary,
    executor: ExecutorSpec = None,
    store: Store | str | os.PathLike | None = None,
    on_error: str = "nan",
    progress: bool | None = None,
    n_points: int | None = None,
    timeout: float | None = None,
) -> xr.Dataset:
    """Run a scenario over the outer product of ``grid`` and ``seeds``; measure every run.

    Parameters
    ----------
    scenario : Scenario or callable
        See :class:`PacketPoint`.
    t_end : float
        Simulated seconds of every run.
    grid : dict, optional
        ``{path or argument: values}``; the Dataset has one dimension per entry, then ``seed``.
    seeds : sequence of int
        Seeds of the runs at every grid point.
    measure : callable
        ``measure(run) -> {name: number}``, the same names at every point (a module-level
        function for process and Dask executors); default :func:`fluidnet.packet.analysis.summary`.
    executor, store
        As for every sweep (:mod:`fluidnet.sweep`): ``"processes"``, a number, ``"dask"``, a
        scheduler address, ...; a checkpoint directory that a rerun resumes from.
    on_error : {"nan", "raise"}
        A run that fails inside ns-3: NaN and its report in ``error``, or stop the sweep.
    progress : bool, optional
    n_points, timeout
        Passed to :func:`fluidnet.packet.simulate` (``timeout`` in wall seconds per run).

    Returns
    -------
    xarray.Dataset
        One variable per measured quantity, dimensions ``(*grid, "seed")``; ``error`` (text,
        empty where the run succeeded) with ``on_error="nan"``.

    Raises
    ------
    OptionError
        For a bad ``on_error``, executor or empty ``seeds``.
    """
    from ..sweep.grid import sweep as grid_sweep

    if on_error not in ("nan", "raise"):
        raise OptionError(f"on_error = {on_error!r}: use 'nan' or 'raise'")
    seeds = [int(s) for s in np.atleast_1d(np.asarray(seeds))]
    if not seeds:
        raise OptionError("seeds is empty: give at least one seed")
    grids = {**dict(grid or {}), "seed": seeds}
    task = PacketPoint(scenario, t_end, measure, n_points, timeout)
    if isinstance(scenario, Scenario):  # check the paths before any run
        for name, values in (grid or {}).items():
            task.build(**{name: np.atleast_1d(values)[0]})
    ds = grid_sweep(
        task,
        grids,
        executor=executor,
        store=store,
        on_error=on_error,
        progress=progress,
        desc="packet runs",
    )
    ds.attrs["t_end"] = float(t_end)
    ds.attrs["scenario"] = (
        scenario.describe() if isinstance(scenario, Scenario) else getattr(scenario, "__name__", "")
    )
    return ds
