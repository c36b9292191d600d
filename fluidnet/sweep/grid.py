"""Rectangular parameter grids, and :func:`sweep`: a function evaluated over one.

:func:`sweep` streams: the grid's points are made one chunk at a time (:class:`GridPoints`)
and each result is written into the output arrays as it arrives, so a sweep holds its result
and little more (a 10^7-point sweep of a float function: see ``benchmarks/bench_reliability.py``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, SupportsIndex, overload

import numpy as np

from ..errors import OptionError, ParameterError
from ..overrides import parameter_values
from .executors import resolve_executor

if TYPE_CHECKING:
    import os

    import xarray as xr

    from .executors import ExecutorSpec
    from .store import Store

__all__ = ["GridPoints", "grid_axes", "grid_points", "sweep"]


def grid_axes(grid: Mapping[str, Any]) -> tuple[list[str], list[np.ndarray]]:
    """Names and values (1-D float arrays) of a rectangular grid, checked.

    Raises
    ------
    ParameterError
        For an empty mapping, or a grid that is not a non-empty 1-D sequence of finite real
        numbers (text, ``True``/``False`` and complex numbers are not; see
        :mod:`fluidnet.overrides`), naming the parameter and the value.
    """
    if not isinstance(grid, Mapping) or not grid:
        raise ParameterError("grid must be a non-empty dict {parameter name: 1-D values}")
    names, axes = [], []
    for name, values in grid.items():
        arr = parameter_values(f"grid of {str(name)!r}", values)
        if arr.ndim == 0:
            arr = arr.reshape(1)
        if arr.ndim != 1 or arr.size == 0:
            raise ParameterError(
                f"grid of {name!r} must be a non-empty 1-D sequence, got shape {arr.shape}"
            )
        names.append(str(name))
        axes.append(arr)
    return names, axes


class GridPoints(Sequence[dict[str, float]]):
    """The points ``{name: value}`` of a rectangular grid, in C order (the last name varies
    fastest), made when asked for: ``len()`` and indexing without a list of every point.

    Parameters
    ----------
    grid : dict
        ``{name: 1-D values}``.

    Raises
    ------
    ParameterError
        As :func:`grid_axes`.

    Examples
    --------
    >>> points = GridPoints({"a": [0.0, 1.0], "b": [10.0, 20.0, 30.0]})
    >>> len(points), points.shape, points[4]
    (6, (2, 3), {'a': 1.0, 'b': 20.0})
    """

    def __init__(self, grid: Mapping[str, Any]):
        self.names, self.axes = grid_axes(grid)
        self.shape = tuple(a.size for a in self.axes)
        self._size = math.prod(self.shape)

    def __len__(self) -> int:
        return self._size

    @overload
    def __getitem__(self, index: SupportsIndex) -> dict[str, float]: ...
    @overload
    def __getitem__(self, index: slice) -> list[dict[str, float]]: ...
    def __getitem__(
        self, index: SupportsIndex | slice
    ) -> dict[str, float] | list[dict[str, float]]:
        if isinstance(index, slice):
            span = range(*index.indices(self._size))
            if len(span) <= 16:
                return [self._point(i) for i in span]
            flat = np.arange(span.start, span.stop, span.step)  # every axis at once
            subs = np.unravel_index(flat, self.shape)
            columns = [axis[sub].tolist() for axis, sub in zip(self.axes, subs, strict=True)]
            names = self.names
            return [dict(zip(names, values, strict=True)) for values in zip(*columns, strict=True)]
        i = int(index)
        if i < 0:
            i += self._size
        if not 0 <= i < self._size:
            raise IndexError(f"grid point {index} out of range ({self._size} points)")
        return self._point(i)

    def _point(self, i: int) -> dict[str, float]:
        values = []
        for axis in reversed(self.axes):
            i, j = divmod(i, axis.size)
            values.append(float(axis[j]))
        return dict(zip(self.names, reversed(values), strict=True))

    def __iter__(self) -> Iterator[dict[str, float]]:
        return (self._point(i) for i in range(self._size))

    def __repr__(self) -> str:
        return f"GridPoints({dict(zip(self.names, self.shape, strict=True))} points)"


def grid_points(grid: Mapping[str, Any]) -> tuple[list[str], tuple[int, ...], list[dict]]:
    """Names, shape and the list of ``{name: value}`` points of a rectangular grid
    (:class:`GridPoints` makes them one at a time instead).

    Parameters
    ----------
    grid : dict
        ``{name: 1-D values}``; the last name varies fastest.

    Returns
    -------
    names : list of str
    shape : tuple of int
    points : list of dict

    Raises
    ------
    ParameterError
        As :func:`grid_axes`.
    """
    points = GridPoints(grid)
    return points.names, points.shape, list(points)


class _Call:
    """``fn(**point, **fixed)`` as a picklable one-argument function returning
    ``(value, "")``, or ``(None, reason)`` for a point that raised with ``on_error="nan"``."""

    def __init__(self, fn, fixed, on_error: str = "raise"):
        self.fn = fn
        self.fixed = dict(fixed)
        self.on_error = on_error

    def __call__(self, point):
        try:
            return self.fn(**point, **self.fixed), ""
        except Exception as exc:
            if self.on_error == "raise":
                exc.add_note(f"(sweep at {_where(point)})")
                raise
            return None, f"{type(exc).__name__}: {exc}"


def _where(point: Mapping[str, float]) -> str:
    return ", ".join(f"{k}={v:g}" for k, v in point.items())


def sweep(
    fn: Callable[..., Any],
    grid: Mapping[str, Any],
    *,
    executor: ExecutorSpec = None,
    store: Store | str | os.PathLike | None = None,
    on_error: str = "raise",
    progress: bool | None = None,
    desc: str | None = None,
    **fixed: Any,
) -> xr.Dataset:
    """Evaluate ``fn(**point, **fixed)`` on a rectangular grid and collect an xarray Dataset.

    Parameters
    ----------
    fn : callable
        Returns a number or a dict ``{variable: number or array}`` (the same keys and shapes
        at every point). Picklable for process executors (a module-level function).
    grid : dict
        ``{name: 1-D values}``; the Dataset has one dimension per entry, in this order.
    executor : optional
        ``None``/``"serial"`` (default), ``"processes"``, a number of processes, ``"dask"``, a
        Dask scheduler address or ``Client``, or an executor (see :mod:`fluidnet.sweep`).
    store : path or fluidnet.sweep.Store, optional
        Checkpoint store: finished points are written as they complete, and the same call
        with the same store computes only the points still missing (see
        :mod:`fluidnet.sweep.store`).
    on_error : {"raise", "nan"}
        A point where ``fn`` raises: raise (the exception notes the point), or store NaN in
        every variable and the reason in the variable ``error``.
    progress : bool, optional
        Show a tqdm bar (default: when there are at least 200 points).
    desc : str, optional
        Label of the progress bar.
    **fixed
        Passed to every call.

    Returns
    -------
    xarray.Dataset
        One variable per returned key (``"value"`` for plain numbers; an array value adds
        dimensions ``<key>_dim_0``, ...), plus ``error`` (str,
        empty where the point succeeded) with ``on_error="nan"``. Variables of failed points
        are NaN (so integer and boolean variables become floats when a point failed).

    Raises
    ------
    OptionError
        For a bad ``executor`` or ``on_error``.
    StoreError
        When ``store`` was made by a different call.
    """
    import xarray as xr

    if on_error not in ("raise", "nan"):
        raise OptionError(f"on_error = {on_error!r}: use 'raise' or 'nan'")
    points = GridPoints(grid)
    columns = _Columns(points, on_error == "nan")
    resolve_executor(executor).map_chunks(
        _Call(fn, fixed, on_error),
        points,
        columns.receive,
        progress=progress,
        desc=desc,
        store=store,
    )
    coords = dict(zip(points.names, points.axes, strict=True))
    return xr.Dataset(columns.variables(), coords=coords)


class _Columns:
    """The variables of a sweep, filled in place as results arrive (in any order).

    Each variable is one array of the grid's shape (plus the shape of its values), made when
    the first result arrives, with the dtype of the values seen so far (numpy's promotion:
    ints and floats give floats, as an array of all the values would).
    """

    def __init__(self, points: GridPoints, keep_errors: bool):
        self.points = points
        self.n = len(points)
        self.arrays: dict[str, np.ndarray] = {}
        self.keys: list[str] | None = None
        self.keys_from = self.n  # the index whose result gave the variables' order
        self.failed = np.zeros(self.n, dtype=bool) if keep_errors else None
        self.errors = np.full(self.n, "", dtype=object) if keep_errors else None
        self.received = 0

    def receive(self, indices: Sequence[int] | np.ndarray, results: list) -> None:
        """Write the results of the points ``indices`` (increasing) into the variables."""
        self.received += len(results)
        where, rows = [], []
        for i, (value, error) in zip(indices, results, strict=True):
            if value is None and error:  # failed, with on_error="nan"
                assert self.failed is not None and self.errors is not None  # keep_errors
                self.failed[i] = True
                self.errors[i] = error
            else:
                where.append(int(i))
                rows.append(value)
        if not rows:
            return
        mapping = isinstance(rows[0], Mapping)
        if self.keys is None:
            self._start(where[0], rows[0] if mapping else {"value": rows[0]})
        for i, row in zip(where, rows, strict=True):
            if isinstance(row, Mapping) != mapping or (mapping and list(row) != self.keys):
                self._check_keys(i, row if isinstance(row, Mapping) else {"value": row})
        keys = self.keys
        assert keys is not None  # set by _start
        for key in keys:
            column = [row[key] for row in rows] if mapping else rows
            self._put_column(key, where, column)

    def _start(self, i: int, row: Mapping[str, Any]) -> None:
        self.keys, self.keys_from = list(row), i
        for key, value in row.items():
            v = np.asarray(value)
            self.arrays[key] = np.empty((self.n, *v.shape), dtype=v.dtype)

    def _check_keys(self, i: int, row: Mapping[str, Any]) -> None:
        assert self.keys is not None  # set by _start
        if set(row) != set(self.keys):
            raise OptionError(
                f"fn returned the keys {sorted(row)} at {_where(self.points[i])} but "
                f"{sorted(self.keys)} at {_where(self.points[self.keys_from])}: sweep needs the "
                "same keys at every point"
            )
        if i < self.keys_from:  # the order of the first point's keys, as a list would give
            self.keys, self.keys_from = list(row), i

    def _put_column(self, key: str, where: list[int], column: list[Any]) -> None:
        arr = self.arrays[key]
        if len(where) == 1:  # one point (a sweep with a store goes point by point)
            self._put(key, where[0], column[0])
            return
        try:
            block = np.asarray(column)
        except ValueError:  # values of different shapes: find the first one
            block = None
        if block is None or block.shape[1:] != arr.shape[1:]:
            for i, value in zip(where, column, strict=True):  # raises for the first culprit
                self._put(key, i, value)
            return
        if block.dtype != arr.dtype:
            arr = self._promote(key, block.dtype)
        arr[where] = block

    def _put(self, key: str, i: int, value: Any) -> None:
        arr = self.arrays[key]
        v = np.asarray(value)
        if v.shape != arr.shape[1:]:
            raise OptionError(
                f"fn returned {key!r} of shape {v.shape} at {_where(self.points[i])} but of "
                f"shape {arr.shape[1:]} at another point: sweep needs the same shapes at "
                "every point"
            )
        if v.dtype != arr.dtype:
            arr = self._promote(key, v.dtype)
        arr[i] = v

    def _promote(self, key: str, dtype: np.dtype) -> np.ndarray:
        arr = self.arrays[key]
        try:
            wider = np.result_type(arr.dtype, dtype)
        except TypeError:  # no common type (e.g. numbers and strings): keep the objects
            wider = np.dtype(object)
        if wider != arr.dtype:
            arr = self.arrays[key] = arr.astype(wider)
        return arr

    def variables(self) -> dict[str, tuple]:
        if self.received != self.n:  # pragma: no cover - map_chunks hands every item over once
            raise RuntimeError(f"sweep received {self.received} results for {self.n} points")
        names, shape = self.points.names, self.points.shape
        data: dict[str, tuple] = {}
        failed = self.failed if self.failed is not None and self.failed.any() else None
        for key in self.keys or []:
            arr = self.arrays[key]
            if failed is not None:
                arr = self._promote(key, np.dtype(float))
                arr[failed] = math.nan
            extra = [f"{key}_dim_{i}" for i in range(arr.ndim - 1)]
            data[key] = ([*names, *extra], arr.reshape(shape + arr.shape[1:]))
        if self.errors is not None:
            data["error"] = (names, self.errors.reshape(shape))
        return data
