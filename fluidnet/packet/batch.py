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

import os
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import OptionError, ParameterError
from .analysis import summary
from .errors import PacketRunError
from .runner import RunRequest
from .scenario import Scenario
from .store import RunStore, resolve_store

if TYPE_CHECKING:
    import xarray as xr
    from numpy.typing import ArrayLike

    from ..sweep.executors import Executor, ExecutorSpec
    from ..sweep.store import Store

__all__ = ["sweep", "simulate_many", "packet_executor", "PacketPoint", "SCHEDULER_ENV"]

#: The environment variable naming a Dask scheduler for packet batches (``tcp://host:8786``).
SCHEDULER_ENV = "FLUIDNET_SCHEDULER"


def packet_executor(executor: ExecutorSpec = None) -> Executor:
    """The executor of a packet batch: ``executor`` when given, else a Dask cluster when
    ``$FLUIDNET_SCHEDULER`` names its scheduler (each run one task), else this process.

    ``fluidnet reproduce --scheduler ADDRESS`` sets the variable, so that every packet batch
    and agreement map of the paper items runs on that cluster.

    Parameters
    ----------
    executor : executor specification, optional
        As for every sweep (:func:`fluidnet.sweep.resolve_executor`).

    Returns
    -------
    fluidnet.sweep.Executor

    Raises
    ------
    OptionError
        For an executor specification that is not one.
    """
    from ..sweep.executors import DaskExecutor, resolve_executor

    if executor is None:
        address = os.environ.get(SCHEDULER_ENV, "").strip()
        if address:
            return DaskExecutor(address, chunksize=1)
    return resolve_executor(executor)


class _RunTask:
    """Picklable ``request -> traces``: one ns-3 run on whatever worker gets it (with
    ``keep_errors``, a failed run's :class:`PacketRunError` is returned, not raised)."""

    def __init__(self, keep_errors: bool = False) -> None:
        self.keep_errors = keep_errors

    def __call__(self, request: RunRequest) -> dict[str, np.ndarray] | PacketRunError:
        try:
            return request.arrays()
        except PacketRunError as exc:
            if self.keep_errors:
                return exc
            raise


def simulate_many(
    scenarios: Sequence[Scenario],
    t_end: float | Sequence[float],
    *,
    seeds: Sequence[int] = (0,),
    n_points: int | None = None,
    timeout: float | None = None,
    executor: ExecutorSpec = None,
    store: RunStore | str | os.PathLike | bool | None = None,
    on_error: str = "raise",
    progress: bool | None = None,
) -> list[list[Any]]:
    """Every scenario with every seed, as one batch: runs already in the store are read back,
    the others run on ``executor`` (one task each) and are stored as they finish.

    The result does not depend on the executor: a run is determined by its scenario and seed.
    An interrupted batch keeps the runs that finished in the store, so the same call again
    runs only the others.

    Parameters
    ----------
    scenarios : sequence of Scenario
    t_end : float or sequence of float
        Simulated seconds of every run, or of the runs of each scenario (one per scenario).
    seeds : sequence of int
        The seeds of every scenario.
    n_points, timeout
        As for :func:`fluidnet.packet.simulate`.
    executor : executor specification, optional
        Where the runs go (:func:`packet_executor`): default a Dask cluster when
        ``$FLUIDNET_SCHEDULER`` names one, else this process, one run after the other.
    store : RunStore, path or bool, optional
        The run store (:mod:`fluidnet.packet.store`); default ``$FLUIDNET_PACKET_STORE``.
        Read and written in this process only (workers never see it).
    on_error : {"raise", "return"}
        A run that fails inside ns-3 (crash, signal, timeout): raise its
        :class:`PacketRunError` (after the runs that finished are stored), or put the error in
        the run's place and go on.
    progress : bool, optional
        A progress bar over the runs that are not stored.

    Returns
    -------
    list of list
        ``out[i][k]``: the :class:`PacketRun` of scenario ``i`` with ``seeds[k]`` (with
        ``on_error="return"``, a :class:`PacketRunError` where that run failed).

    Raises
    ------
    ParameterError, OptionError
        For a bad scenario, length, seed or option, before anything runs.
    NotInstalledError, PacketRunError
        As :func:`fluidnet.packet.simulate` (the first run that fails).

    Examples
    --------
    >>> import fluidnet as fn
    >>> sc = fn.packet.Dumbbell(link=fn.packet.Link(10e6), flows=[fn.packet.Flows(n=2)])
    >>> runs = fn.packet.simulate_many([sc], 5.0, seeds=(1, 2))  # doctest: +SKIP
    >>> [r.seed for r in runs[0]]  # doctest: +SKIP
    [1, 2]
    """
    if on_error not in ("raise", "return"):
        raise OptionError(f"on_error = {on_error!r}: use 'raise' or 'return'")
    seeds = [int(s) for s in np.atleast_1d(np.asarray(seeds))]
    if not seeds:
        raise OptionError("seeds is empty: give at least one seed")
    scenarios = list(scenarios)
    if isinstance(t_end, (str, bytes)) or np.ndim(t_end) == 0:
        lengths = [t_end] * len(scenarios)
    else:
        lengths = list(t_end)  # type: ignore[arg-type]
        if len(lengths) != len(scenarios):
            raise OptionError(
                f"t_end: {len(lengths)} lengths for {len(scenarios)} scenarios; give one "
                "length, or one per scenario"
            )
    requests = [
        RunRequest.checked(sc, length, seed, n_points, timeout)
        for sc, length in zip(scenarios, lengths, strict=True)
        for seed in seeds
    ]
    runs = resolve_store(store)
    results: list[Any] = [None] * len(requests)
    if runs is not None:
        for i, req in enumerate(requests):
            results[i] = req.read(runs)
    todo = [i for i, r in enumerate(results) if r is None]
    if todo:
        started = time.perf_counter()

        def receive(indices: Sequence[int] | np.ndarray, out: list[Any]) -> None:
            wall = time.perf_counter() - started
            for k, arrays in zip(indices, out, strict=True):
                i = todo[k]
                if isinstance(arrays, PacketRunError):
                    results[i] = arrays
                    continue
                if runs is not None:
                    runs.put(requests[i].key(), arrays)
                results[i] = requests[i].result(arrays, wall)

        packet_executor(executor).map_chunks(
            _RunTask(keep_errors=on_error == "return"),
            [requests[i] for i in todo],
            receive,
            progress=progress,
            desc="ns-3 runs",
        )
    n = len(seeds)
    return [results[k * n : (k + 1) * n] for k in range(len(scenarios))]


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
        scheduler address, ...; a checkpoint directory that a rerun resumes from. Default
        executor: the Dask scheduler of ``$FLUIDNET_SCHEDULER`` when set (one task per run),
        else serial (:func:`packet_executor`). Every run also goes through the run store of
        ``$FLUIDNET_PACKET_STORE`` when that is set (:mod:`fluidnet.packet.store`).
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
        executor=packet_executor(executor),
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
