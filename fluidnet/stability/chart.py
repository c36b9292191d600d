"""Stability charts: the spectral abscissa over a grid of parameter values.

:func:`stability_chart` returns an :class:`xarray.Dataset`; ``ds.stability.plot()`` (an xarray
accessor registered by this module) draws the stable region. A chart read back from disk
(``xarray.open_dataset``) has the accessor once this module is imported: ``import
fluidnet.stability.chart`` (using ``fn.stability_chart`` or ``fn.nonlinear_chart`` does it;
``import fluidnet`` alone imports no analysis module).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
import xarray as xr

from ..errors import AnalysisError, FluidnetError, OptionError
from ..linear.batch import rightmost_roots
from ..linear.roots import certified_roots
from ..options import root_options as check_root_options
from ..overrides import merge_params
from ..sweep import SerialExecutor, grid_points, resolve_executor
from ..sweep.grid import grid_axes
from ..threads import single_threaded_blas
from .system import SystemFactory

if TYPE_CHECKING:
    import os

    from matplotlib.axes import Axes

    from ..sweep.executors import ExecutorSpec
    from ..sweep.store import Store
    from ..symbolic.model import Model

__all__ = ["stability_chart", "StabilityAccessor"]


#: Points per piece of work: a chart is cut along its first axis into pieces of about this
#: size, each solved as one batch (by a worker with a process executor). The cut does not
#: depend on the executor, so every executor gives the same numbers.
CHUNK_POINTS = 16384
#: ``method="auto"`` uses the batch from this many points on (below, the full method at each
#: point costs about as much, and a checkpoint store keeps every point on its own).
BATCH_MIN_POINTS = 64


class _ChartPoint:
    """Evaluate one grid point (picklable for process executors): ``method="pointwise"``."""

    def __init__(self, factory: SystemFactory, on_error: str, root_kw: Mapping[str, Any]):
        self.factory = factory
        self.on_error = on_error
        self.root_kw = dict(root_kw)

    def __call__(self, point: Mapping[str, float]) -> tuple[float, float, float, str, str]:
        try:
            lin = self.factory(**point)
            roots = certified_roots(lin, k=2, **self.root_kw)
            roots.require_certified("the rightmost root")
        except FluidnetError as exc:
            if self.on_error == "raise":
                where = ", ".join(f"{k}={v:g}" for k, v in point.items())
                raise type(exc)(f"stability chart at {where}: {exc}") from exc
            return math.nan, math.nan, math.nan, str(exc), ""
        top = roots[0]
        return top.real, abs(top.imag), roots.certificate, "", ""


class _ChartChunk:
    """Evaluate a block of the grid as one batch (picklable for process executors)."""

    def __init__(self, factory: SystemFactory, on_error: str, root_kw: Mapping[str, Any]):
        self.factory = factory
        self.on_error = on_error
        self.root_kw = dict(root_kw)

    def __call__(self, block: tuple[list[str], list[np.ndarray]]):
        names, axes = block
        shape = tuple(a.size for a in axes)
        mesh = np.meshgrid(*axes, indexing="ij")
        batch = self.factory.batch({n: m.ravel() for n, m in zip(names, mesh, strict=True)})
        K = batch.stack.K
        skip = np.zeros(K, dtype=bool)
        skip[list(batch.errors)] = True
        skip[list(batch.separate)] = True
        found = rightmost_roots(
            batch.stack, shape, system=batch.system, root_options=self.root_kw, skip=skip
        )
        root, line, reason = found.root.copy(), found.certificate.copy(), found.reason.copy()
        fallback = np.full(K, "", dtype=object)
        if found.fallback is not None:
            fallback[:] = found.fallback
        for k, why in batch.fallback.items():
            fallback[k] = why
        for k, lin in batch.separate.items():
            try:
                r = certified_roots(lin, k=2, **self.root_kw)
                r.require_certified("the rightmost root")
                root[k], line[k] = complex(r[0].real, abs(r[0].imag)), r.certificate
            except FluidnetError as exc:
                reason[k] = str(exc)
        for k, exc in batch.errors.items():
            if self.on_error == "raise":
                raise type(exc)(f"stability chart at {batch.where(k)}: {exc}") from exc
            reason[k] = str(exc)
        bad = ~np.isfinite(root)
        if self.on_error == "raise" and bad.any():
            k = int(np.flatnonzero(bad)[0])
            raise AnalysisError(f"stability chart at {batch.where(k)}: {reason[k]}")
        # the reasons as one array of strings: a checkpoint store writes an array as one
        # column, a list as one entry per element
        return (
            np.real(root),
            np.abs(np.imag(root)),
            line,
            np.array([str(r) for r in reason], dtype=str),
            np.array([str(r) for r in fallback], dtype=str),
        )


def _blocks(axes: list[np.ndarray], size: int | None = None) -> list[list[np.ndarray]]:
    """Cut the grid into blocks of about ``size`` (default :data:`CHUNK_POINTS`, read at each
    call) points, in the grid's C order: along its first axis into even blocks of rows; where
    one value of the first axis has more points than ``size``, each of its values on its own
    and the next axis cut alike (and so on): no block has more than ``size`` points."""
    size = CHUNK_POINTS if size is None else size
    sizes = [a.size for a in axes]
    # the first axis whose values (the points of the later axes each) fit in a block
    d = next(i for i in range(len(axes)) if math.prod(sizes[i + 1 :]) <= size)
    rows = max(1, size // math.prod(sizes[d + 1 :]))
    n_blocks = -(-sizes[d] // rows)
    rows = -(-sizes[d] // n_blocks)  # even blocks
    blocks = []
    for lead in itertools.product(*(range(s) for s in sizes[:d])):
        head = [axes[i][j : j + 1] for i, j in enumerate(lead)]
        blocks += [[*head, axes[d][i : i + rows], *axes[d + 1 :]] for i in range(0, sizes[d], rows)]
    return blocks


def stability_chart(
    model_or_factory: Model | Callable[..., Any],
    grid: Mapping[str, Any],
    *,
    executor: ExecutorSpec = None,
    store: Store | str | os.PathLike | None = None,
    progress: bool | None = None,
    on_error: str = "raise",
    root_options: Mapping[str, Any] | None = None,
    method: str = "auto",
    params: Mapping[str, float] | None = None,
    **fixed: float,
) -> xr.Dataset:
    """Linear stability over a grid of parameter values.

    At every point the model is linearized at its equilibrium (or the factory is called) and
    the rightmost characteristic root is computed and certified: the argument principle on a
    line just left of it counts exactly the roots found right of that line (see
    :mod:`fluidnet.linear.certificate`).

    With ``method="batch"`` (the default, ``"auto"``, for 64 points or more) each block of the
    grid (:data:`CHUNK_POINTS` points, fewer for a model whose dense matrices would not fit:
    :func:`~fluidnet.symbolic.linearize.dense_batch_points`) is one computation
    (:func:`fluidnet.linear.batch.rightmost_roots`): the linearizations of a model are
    evaluated for all its points at once, and each point's roots are continued by Newton's
    method from a solved neighbour, falling back to the full discretization of
    :func:`fluidnet.linear.roots.certified_roots` where the certificate fails (refined 1.5x at
    a time, up to ``max_nodes``, while its own certificate fails).
    ``method="pointwise"`` runs the full method (:func:`~fluidnet.linear.roots.certified_roots`)
    at every point.

    Parameters
    ----------
    model_or_factory : Model or callable
        See :mod:`fluidnet.stability.system` for what a factory may return.
    grid : dict
        ``{parameter name: 1-D values}``, one or more; one Dataset dimension per entry.
    executor : optional
        ``None``/``"serial"`` (default), ``"processes"``, a number of processes, ``"dask"``, or an
        executor (see :mod:`fluidnet.sweep`).
    store : path or fluidnet.sweep.Store, optional
        Checkpoint store: finished points are written as they complete; the same call with the
        same store computes only the points still missing (see :mod:`fluidnet.sweep.store`).
    progress : bool, optional
        tqdm progress bar (default: for 200 points or more).
    on_error : {"raise", "nan"}
        What to do when a point has no answer (e.g. no equilibrium): raise the error (naming the
        point), or store NaN and the message in the ``error`` variable.
    root_options : dict, optional
        Discretization options of :func:`~fluidnet.linear.roots.characteristic_roots`
        (``max_nodes``, ``n_nodes``: :data:`fluidnet.options.ROOT_OPTIONS`), used wherever
        the full method runs.
    method : {"auto", "batch", "pointwise"}
        See above; both give the same roots (to rounding) and the same certificates. With a
        ``store``, ``"batch"`` checkpoints blocks of rows of the grid, ``"pointwise"`` every
        point.
    params : dict, optional
        Values of the other parameters ``{name: value}``.
    **fixed
        The same as keywords (a name given both ways is an error).

    Returns
    -------
    xarray.Dataset
        ``abscissa`` (largest real part of the roots, 1/s), ``stable`` (``abscissa < 0``; a
        root at exactly 0 is not stable) and ``omega`` (``|Im|`` of the rightmost root, rad/s:
        the frequency of the oscillation that grows or decays slowest), ``certificate`` (the
        abscissa of the line right of which no other root exists, 1/s), ``fallback`` (str:
        why the batch did not settle a point that the pointwise method then computed -- its
        equilibrium or its rightmost root; ``""`` elsewhere and with ``method="pointwise"``),
        plus ``error`` (str) with ``on_error="nan"``. A point whose rightmost root cannot be
        certified has NaN there and the reason in ``error`` (with ``on_error="raise"``: an
        AnalysisError).
        ``ds.stability.plot()`` draws the region.

    Raises
    ------
    ParameterError
        For an empty grid, a grid or fixed value that is not a real number (see
        :mod:`fluidnet.overrides`), or an unknown parameter name (models).
    OptionError
        For a bad ``method``, ``on_error``, ``root_options`` or ``executor``.
    StoreError
        When ``store`` was made by a different call (the message says what differs).

    See Also
    --------
    stability_boundary : the exact boundary of the stable region in the same plane
    critical_value : where stability is lost along one parameter
    nonlinear_chart : the nonlinear model's behaviour over a plane

    Examples
    --------
    >>> import numpy as np, fluidnet as fn
    >>> ds = fn.stability_chart(fn.models.rcp(), {"alpha": [0.2, 0.8], "beta": [0.3]})
    >>> ds["stable"].values.ravel().tolist()
    [False, True]
    """
    if on_error not in ("raise", "nan"):
        raise OptionError(f"on_error = {on_error!r}: use 'raise' or 'nan'")
    fixed = merge_params(params, fixed, "stability_chart")
    root_kw = check_root_options(root_options, where="stability_chart")
    factory = SystemFactory(model_or_factory, fixed)
    # each axis checked on its own: the list of every point is only built when needed
    names, axes = grid_axes(grid)
    shape = tuple(a.size for a in axes)
    factory.check_names(names)
    overlap = sorted(set(names) & set(fixed))
    if overlap:
        raise OptionError(f"{overlap} given both as a grid and as a fixed value")
    if method not in ("auto", "batch", "pointwise"):
        raise OptionError(f"method = {method!r}: use 'auto', 'batch' or 'pointwise'")
    if method == "auto":
        method = "batch" if math.prod(shape) >= BATCH_MIN_POINTS else "pointwise"
    coords = dict(zip(names, axes, strict=True))
    run = resolve_executor(executor)
    if not isinstance(run, SerialExecutor):
        # built here once and shipped with the tasks: workers do not build the model again
        factory.prepare({n: coords[n][0] for n in names})
    desc = f"stability chart ({factory.name})"
    with single_threaded_blas():  # once per sweep (workers limit themselves)
        if method == "pointwise":
            task = _ChartPoint(factory, on_error, root_kw)
            points = grid_points(coords)[2]
            res = run.map(task, points, progress=progress, desc=desc, store=store)
            absc, omega, line = (np.array([r[i] for r in res], dtype=float) for i in range(3))
            error = np.array([r[3] for r in res], dtype=object)
            fallback = np.full(error.shape, "", dtype=object)
        else:
            # a model's batch holds its dense matrices for at most so many points (more go
            # one at a time, at many times the memory): the blocks are cut to fit
            limit = factory.batch_points()
            size = CHUNK_POINTS if limit is None else min(CHUNK_POINTS, limit)
            blocks = [(names, b) for b in _blocks([coords[n] for n in names], size)]
            task = _ChartChunk(factory, on_error, root_kw)
            res = run.map(task, blocks, progress=progress, desc=desc, store=store)
            absc, omega, line = (np.concatenate([r[i] for r in res]) for i in range(3))
            error = np.concatenate([r[3] for r in res]).astype(object)
            # (a checkpoint store written before the fallback column has four)
            fallback = np.concatenate(
                [r[4] if len(r) > 4 else np.full(len(r[0]), "") for r in res]
            ).astype(object)
    absc, omega, line = absc.reshape(shape), omega.reshape(shape), line.reshape(shape)
    data = {
        "abscissa": (names, absc, {"long_name": "spectral abscissa", "units": "1/s"}),
        "stable": (names, absc < 0, {"long_name": "linearly stable"}),
        "omega": (names, omega, {"long_name": "|Im| of the rightmost root", "units": "rad/s"}),
        "certificate": (
            names,
            line,
            {
                "long_name": "no root other than the rightmost ones right of Re s = this",
                "units": "1/s",
            },
        ),
    }
    if on_error == "nan":
        data["error"] = (names, error.reshape(shape))
    data["fallback"] = (
        names,
        fallback.reshape(shape),
        {"long_name": "why the batch did not settle the point (solved pointwise instead)"},
    )
    attrs = {"model": factory.name, **{f"fixed_{k}": v for k, v in fixed.items()}}
    return xr.Dataset(data, coords=coords, attrs=attrs)


class StabilityAccessor:
    """``ds.stability.plot()`` for a Dataset made by :func:`stability_chart` (or by
    :func:`~fluidnet.stability.nonlinear_chart`, whose ``stable`` region is drawn).

    ``import fluidnet`` makes ``ds.stability`` available on every Dataset, also one opened from
    a file in a new process (:mod:`fluidnet._accessors`).
    """

    def __init__(self, ds: xr.Dataset):
        self._ds = ds

    def plot(
        self,
        ax: Axes | None = None,
        *,
        color: str = "C0",
        boundary: bool = True,
        show_abscissa: bool = False,
        **kwargs: Any,
    ) -> Axes:
        """Draw the stable region (filled) and the boundary ``abscissa = 0``.

        Parameters
        ----------
        ax : matplotlib Axes, optional
        color : str
            Fill colour of the stable region.
        boundary : bool, default True
            Draw the zero contour of the abscissa (2-D charts).
        show_abscissa : bool, default False
            Shade the abscissa itself (diverging colormap) under the region.
        **kwargs
            Passed to ``contourf`` (2-D) or ``plot`` (1-D).

        Returns
        -------
        matplotlib Axes
        """
        import matplotlib.pyplot as plt

        ds = self._ds
        if "stable" not in ds:
            raise AnalysisError(
                "this Dataset has no 'stable' variable: make it with fluidnet.stability_chart "
                "or fluidnet.nonlinear_chart"
            )
        if "abscissa" not in ds:  # a nonlinear chart: draw the stable region only
            ds = ds.assign(abscissa=xr.where(ds["stable"], -1.0, 1.0))
            show_abscissa = False
        if ax is None:
            _, ax = plt.subplots()
        dims = list(ds["stable"].dims)
        if len(dims) == 1:
            x = ds[dims[0]].values
            a = ds["abscissa"].values
            ax.plot(x, a, **kwargs)
            ax.axhline(0.0, color="0.5", lw=0.8)
            st = ds["stable"].values
            ax.fill_between(
                x,
                np.nanmin(a),
                np.nanmax(a),
                where=st,
                color=color,
                alpha=0.15,
                step="mid",
                label="stable",
            )
            ax.set_xlabel(str(dims[0]))
            ax.set_ylabel("spectral abscissa (1/s)")
            return ax
        if len(dims) != 2:
            raise AnalysisError(f"plot needs a 1-D or 2-D chart, this one has dims {dims}")
        xdim, ydim = dims  # the first grid on the horizontal axis
        X = ds[xdim].values
        Y = ds[ydim].values
        st = ds["stable"].transpose(ydim, xdim).values.astype(float)
        a = ds["abscissa"].transpose(ydim, xdim).values
        if show_abscissa:
            lim = np.nanmax(np.abs(a)) or 1.0
            ax.pcolormesh(X, Y, a, cmap="RdBu_r", vmin=-lim, vmax=lim, shading="auto")
        if X.size > 1 and Y.size > 1:
            kwargs.setdefault("alpha", 0.5)
            ax.contourf(X, Y, st, levels=[0.5, 1.5], colors=[color], **kwargs)
            if boundary and np.nanmin(a) < 0 < np.nanmax(a):
                ax.contour(X, Y, a, levels=[0.0], colors=[color], linewidths=1.2)
        else:
            xx, yy = np.meshgrid(X, Y)
            ax.scatter(xx[st > 0], yy[st > 0], color=color, label="stable")
        ax.set_xlabel(str(xdim))
        ax.set_ylabel(str(ydim))
        ax.set_title(f"linear stability ({ds.attrs.get('model', '')})", fontsize="small")
        return ax
