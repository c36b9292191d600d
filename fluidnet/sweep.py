"""Parameter sweeps: run a function over a grid of parameter values, serially or in parallel.

An *executor* maps a picklable function over a list of items, keeps their order and shows a
tqdm progress bar. Three are provided:

* :class:`SerialExecutor` (the default): a plain loop in this process;
* :class:`ProcessExecutor`: a :class:`concurrent.futures.ProcessPoolExecutor`, items sent in
  chunks (the function must be picklable: a module-level function or a picklable object, not a
  lambda or a closure);
* :class:`DaskExecutor`: a ``dask.distributed`` client (``pip install fluidnet[dask]``).

Wherever a function takes ``executor=``, it accepts ``None`` or ``"serial"``, ``"processes"``,
an integer number of worker processes, ``"dask"``, one of the executor objects above, or any
:class:`concurrent.futures.Executor`.

:func:`sweep` builds an :class:`xarray.Dataset` from a function of the grid parameters.

Examples
--------
>>> import numpy as np
>>> from fluidnet.sweep import sweep
>>> ds = sweep(lambda a, b: {"sum": a + b}, {"a": [0.0, 1.0], "b": [10.0, 20.0, 30.0]})
>>> ds["sum"].shape, float(ds["sum"].sel(a=1.0, b=20.0))
((2, 3), 21.0)
"""

from __future__ import annotations

import concurrent.futures as cf
import itertools
import math
import os
import pickle
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from .errors import OptionError, ParameterError
from .progress import progress_bar
from .threads import one_blas_thread, single_threaded_blas

__all__ = [
    "SerialExecutor",
    "ProcessExecutor",
    "DaskExecutor",
    "FuturesExecutor",
    "resolve_executor",
    "grid_points",
    "sweep",
    "single_threaded_blas",
]


def _run_chunk(fn: Callable[[Any], Any], chunk: Sequence[Any]) -> list[Any]:
    return [fn(item) for item in chunk]


def _chunks(items: Sequence[Any], size: int) -> list[Sequence[Any]]:
    return [items[i : i + size] for i in range(0, len(items), size)]


def _check_picklable(fn, where: str) -> None:
    try:
        pickle.dumps(fn)
    except Exception as exc:  # pickling raises many types
        raise OptionError(
            f"executor={where!r} sends the function to other processes, but it cannot be "
            f"pickled ({type(exc).__name__}: {exc}); use a module-level function or a "
            "picklable object instead of a lambda or a closure, or executor='serial'"
        ) from exc


class SerialExecutor:
    """Run every item in this process, in order."""

    name = "serial"

    def map(
        self,
        fn: Callable[[Any], Any],
        items: Iterable[Any],
        *,
        progress: bool | None = None,
        desc: str | None = None,
    ) -> list[Any]:
        items = list(items)
        out = []
        with progress_bar(len(items), progress, desc) as bar:
            for item in items:
                out.append(fn(item))
                bar.update(1)
        return out

    def __repr__(self) -> str:
        return "SerialExecutor()"


class FuturesExecutor:
    """Adapt any :class:`concurrent.futures.Executor` (items sent in chunks).

    Parameters
    ----------
    pool : concurrent.futures.Executor
    chunksize : int, optional
        Items per task; default: about 4 tasks per worker.
    workers : int, optional
        Used for the default chunk size (default: the CPU count).
    """

    name = "futures"

    def __init__(self, pool: cf.Executor, chunksize: int | None = None, workers: int | None = None):
        self.pool = pool
        self.chunksize = chunksize
        self.workers = workers or os.cpu_count() or 1

    def _size(self, n: int) -> int:
        if self.chunksize is not None:
            return max(1, int(self.chunksize))
        return max(1, math.ceil(n / (4 * self.workers)))

    def map(
        self,
        fn: Callable[[Any], Any],
        items: Iterable[Any],
        *,
        progress: bool | None = None,
        desc: str | None = None,
    ) -> list[Any]:
        items = list(items)
        if isinstance(self.pool, cf.ProcessPoolExecutor):
            _check_picklable(fn, "processes")
        chunks = _chunks(items, self._size(len(items)))
        results: list[list[Any] | None] = [None] * len(chunks)
        with progress_bar(len(items), progress, desc) as bar:
            futures = {self.pool.submit(_run_chunk, fn, c): i for i, c in enumerate(chunks)}
            try:
                for fut in cf.as_completed(futures):
                    i = futures[fut]
                    results[i] = fut.result()
                    bar.update(len(chunks[i]))
            except BaseException:
                for fut in futures:
                    fut.cancel()
                raise
        return [r for chunk in results for r in chunk]  # type: ignore[union-attr]


class ProcessExecutor:
    """A process pool (created per :meth:`map` call, so nothing lingers between sweeps).

    Parameters
    ----------
    max_workers : int, optional
        Default: the CPU count.
    chunksize : int, optional
        Items per task; default: about 4 tasks per worker.
    mp_context : multiprocessing context, optional
    """

    name = "processes"

    def __init__(
        self, max_workers: int | None = None, chunksize: int | None = None, mp_context=None
    ):
        if max_workers is not None and (isinstance(max_workers, bool) or int(max_workers) < 1):
            raise OptionError(f"max_workers = {max_workers!r} must be a positive integer")
        self.max_workers = int(max_workers) if max_workers is not None else (os.cpu_count() or 1)
        self.chunksize = chunksize
        self.mp_context = mp_context

    def map(
        self,
        fn: Callable[[Any], Any],
        items: Iterable[Any],
        *,
        progress: bool | None = None,
        desc: str | None = None,
    ) -> list[Any]:
        items = list(items)
        _check_picklable(fn, "processes")
        if not items:
            return []
        workers = min(self.max_workers, len(items))
        with cf.ProcessPoolExecutor(
            max_workers=workers, mp_context=self.mp_context, initializer=one_blas_thread
        ) as pool:
            runner = FuturesExecutor(pool, self.chunksize, workers)
            return runner.map(fn, items, progress=progress, desc=desc)

    def __repr__(self) -> str:
        return f"ProcessExecutor(max_workers={self.max_workers})"


class DaskExecutor:
    """Run on a ``dask.distributed`` cluster.

    Parameters
    ----------
    client : dask.distributed.Client, optional
        Default: the current client, or a new local one.
    chunksize : int, optional
        Items per task; default: about 4 tasks per worker.

    Raises
    ------
    ImportError
        When ``dask.distributed`` is not installed.
    """

    name = "dask"

    def __init__(self, client=None, chunksize: int | None = None):
        try:
            from dask import distributed
        except ImportError as exc:
            raise ImportError(
                "executor='dask' needs dask.distributed: pip install 'fluidnet[dask]'"
            ) from exc
        if client is None:
            try:
                client = distributed.get_client()
            except ValueError:
                client = distributed.Client()
        self.client = client
        self.chunksize = chunksize

    def map(
        self,
        fn: Callable[[Any], Any],
        items: Iterable[Any],
        *,
        progress: bool | None = None,
        desc: str | None = None,
    ) -> list[Any]:
        from dask.distributed import as_completed

        items = list(items)
        workers = max(1, len(self.client.scheduler_info().get("workers", {})))
        size = self.chunksize or max(1, math.ceil(len(items) / (4 * workers)))
        chunks = _chunks(items, size)
        futures = [self.client.submit(_run_chunk, fn, c, pure=False) for c in chunks]
        index = {f.key: i for i, f in enumerate(futures)}
        results: list[list[Any] | None] = [None] * len(chunks)
        with progress_bar(len(items), progress, desc) as bar:
            for fut in as_completed(futures):
                i = index[fut.key]
                results[i] = fut.result()
                bar.update(len(chunks[i]))
        return [r for chunk in results for r in chunk]  # type: ignore[union-attr]


def resolve_executor(spec=None):
    """An executor object from a specification (see the module docstring).

    Raises
    ------
    ParameterError
        For an unknown specification.
    """
    if spec is None or (isinstance(spec, str) and spec.lower() == "serial"):
        return SerialExecutor()
    if isinstance(spec, str):
        key = spec.lower()
        if key in ("processes", "process"):
            return ProcessExecutor()
        if key == "dask":
            return DaskExecutor()
        raise OptionError(
            f"executor = {spec!r}: use 'serial', 'processes', 'dask', a number of processes, "
            "an executor object or a concurrent.futures.Executor"
        )
    if isinstance(spec, (int, np.integer)) and not isinstance(spec, bool):
        if spec < 1:
            raise OptionError(f"executor = {spec!r}: the number of processes must be >= 1")
        return SerialExecutor() if spec == 1 else ProcessExecutor(int(spec))
    if isinstance(spec, cf.Executor):
        return FuturesExecutor(spec)
    if callable(getattr(spec, "map", None)) and hasattr(spec, "name"):
        return spec
    raise OptionError(
        f"executor = {spec!r} ({type(spec).__name__}) is not an executor: use 'serial', "
        "'processes', 'dask', a number of processes or a concurrent.futures.Executor"
    )


def grid_points(grids: Mapping[str, Any]) -> tuple[list[str], tuple[int, ...], list[dict]]:
    """Names, shape and the list of ``{name: value}`` points of a rectangular grid.

    Raises
    ------
    ParameterError
        For an empty mapping, or a grid that is not a non-empty 1-D sequence of finite numbers.
    """
    if not isinstance(grids, Mapping) or not grids:
        raise ParameterError("grids must be a non-empty dict {parameter name: 1-D values}")
    names, axes = [], []
    for name, values in grids.items():
        arr = np.asarray(values)
        if arr.ndim == 0:
            arr = arr.reshape(1)
        if arr.ndim != 1 or arr.size == 0:
            raise ParameterError(
                f"grid of {name!r} must be a non-empty 1-D sequence, got shape {arr.shape}"
            )
        try:
            arr = arr.astype(float)
        except (TypeError, ValueError) as exc:
            raise ParameterError(f"grid of {name!r} must hold numbers") from exc
        if not np.all(np.isfinite(arr)):
            raise ParameterError(
                f"grid of {name!r} has a non-finite value {arr[~np.isfinite(arr)][0]}"
            )
        names.append(str(name))
        axes.append(arr)
    shape = tuple(a.size for a in axes)
    points = [
        dict(zip(names, (float(v) for v in combo), strict=True))
        for combo in itertools.product(*axes)
    ]
    return names, shape, points


class _Call:
    """``fn(**point, **fixed)`` as a picklable one-argument function."""

    def __init__(self, fn, fixed):
        self.fn = fn
        self.fixed = dict(fixed)

    def __call__(self, point):
        return self.fn(**point, **self.fixed)


def sweep(
    fn: Callable[..., Any],
    grids: Mapping[str, Any],
    *,
    executor=None,
    progress: bool | None = None,
    desc: str | None = None,
    **fixed: Any,
):
    """Evaluate ``fn(**point, **fixed)`` on a rectangular grid and collect an xarray Dataset.

    Parameters
    ----------
    fn : callable
        Returns a number or a dict ``{variable: number}`` (the same keys at every point).
    grids : dict
        ``{name: 1-D values}``; the Dataset has one dimension per entry, in this order.
    executor : optional
        See the module docstring (serial by default).
    progress : bool, optional
        Show a tqdm bar (default: when there are at least 200 points).
    **fixed
        Passed to every call.

    Returns
    -------
    xarray.Dataset
        One variable per returned key (``"value"`` for plain numbers).
    """
    import xarray as xr

    names, shape, points = grid_points(grids)
    results = resolve_executor(executor).map(_Call(fn, fixed), points, progress=progress, desc=desc)
    if not results:
        return xr.Dataset()
    rows = [r if isinstance(r, Mapping) else {"value": r} for r in results]
    keys = list(rows[0])
    data = {}
    for key in keys:
        vals = np.asarray([row[key] for row in rows])
        data[key] = (names, vals.reshape(shape + vals.shape[1:]))
    coords = {n: np.asarray(grids[n], dtype=float).reshape(-1) for n in names}
    return xr.Dataset(data, coords=coords)
