"""Rectangular parameter grids, and :func:`sweep`: a function evaluated over one."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from ..errors import OptionError, ParameterError
from ..overrides import parameter_values
from .executors import resolve_executor

__all__ = ["grid_axes", "grid_points", "sweep"]


def grid_axes(grids: Mapping[str, Any]) -> tuple[list[str], list[np.ndarray]]:
    """Names and values (1-D float arrays) of a rectangular grid, checked.

    Raises
    ------
    ParameterError
        For an empty mapping, or a grid that is not a non-empty 1-D sequence of finite real
        numbers (text, ``True``/``False`` and complex numbers are not; see
        :mod:`fluidnet.overrides`), naming the parameter and the value.
    """
    if not isinstance(grids, Mapping) or not grids:
        raise ParameterError("grids must be a non-empty dict {parameter name: 1-D values}")
    names, axes = [], []
    for name, values in grids.items():
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


def grid_points(grids: Mapping[str, Any]) -> tuple[list[str], tuple[int, ...], list[dict]]:
    """Names, shape and the list of ``{name: value}`` points of a rectangular grid.

    Raises
    ------
    ParameterError
        As :func:`grid_axes`.
    """
    names, axes = grid_axes(grids)
    shape = tuple(a.size for a in axes)
    points = [
        dict(zip(names, (float(v) for v in combo), strict=True))
        for combo in itertools.product(*axes)
    ]
    return names, shape, points


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
    grids: Mapping[str, Any],
    *,
    executor=None,
    store=None,
    on_error: str = "raise",
    progress: bool | None = None,
    desc: str | None = None,
    **fixed: Any,
):
    """Evaluate ``fn(**point, **fixed)`` on a rectangular grid and collect an xarray Dataset.

    Parameters
    ----------
    fn : callable
        Returns a number or a dict ``{variable: number or array}`` (the same keys and shapes
        at every point). Picklable for process executors (a module-level function).
    grids : dict
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
    names, shape, points = grid_points(grids)
    results = resolve_executor(executor).map(
        _Call(fn, fixed, on_error), points, progress=progress, desc=desc, store=store
    )
    coords = dict(zip(names, grid_axes(grids)[1], strict=True))
    rows = [r if isinstance(r, Mapping) or r is None else {"value": r} for r, _ in results]
    first = next((r for r in rows if r is not None), None)
    data = {}
    if first is not None:
        for key in first:
            ok = np.asarray(first[key])
            filler = np.full(ok.shape, math.nan)
            vals = np.asarray([filler if row is None else row[key] for row in rows])
            extra = [f"{key}_dim_{i}" for i in range(vals.ndim - 1)]
            data[key] = ([*names, *extra], vals.reshape(shape + vals.shape[1:]))
    if on_error == "nan":
        errors = np.array([e for _, e in results], dtype=object)
        data["error"] = (names, errors.reshape(shape))
    return xr.Dataset(data, coords=coords)
