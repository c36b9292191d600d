"""The results of :func:`~fluidnet.critical_value`: one critical value, and many.

:class:`~fluidnet.CriticalValue` is the first change of stability for one parameter
set, with its certificate. :class:`~fluidnet.CriticalValues` is what a ``grid`` of
parameter sets returns: an array of ``CriticalValue`` (a failed set holds its error message
instead), whose table of numbers is an :class:`xarray.Dataset` with the same variables as one
value's ``CriticalValue.to_xarray()``. Both have ``.to_xarray()`` and ``.plot()``.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import AnalysisError, OptionError

if TYPE_CHECKING:
    import xarray as xr
    from matplotlib.axes import Axes

__all__ = ["CriticalValue", "CriticalValues"]


@dataclass(frozen=True, kw_only=True)
class CriticalValue:
    """The first value of a parameter where stability changes.

    Attributes
    ----------
    name : str
        The swept parameter.
    value : float
        Its critical value.
    omega : float
        Crossing frequency ``|Im lambda|`` of the root on the imaginary axis (rad/s); 0 for a
        real root crossing at the origin.
    direction : str
        ``"destabilizing"`` when the system is stable below ``value`` and unstable above,
        ``"stabilizing"`` otherwise.
    bracket : (float, float)
        Two values around ``value`` where the number of right-half-plane roots was computed in
        full: ``count_before`` and ``count_after``.
    root : complex
        The root on the imaginary axis at ``value``.
    count_before, count_after : int
        Right-half-plane roots (with multiplicity) just below and just above ``value``.
    method : str
        ``"delay"`` (exact) or ``"continuation"``.
    checks : tuple of (float, int)
        Every parameter value where the right-half-plane count was computed in full, and the
        count: the certificate (see :mod:`fluidnet.stability.critical`).
    """

    name: str
    value: float
    omega: float
    direction: str
    bracket: tuple[float, float]
    root: complex
    count_before: int = 0
    count_after: int = 0
    method: str = ""
    checks: tuple[tuple[float, int], ...] = ()

    @property
    def frequency(self) -> float:
        """Crossing frequency in Hz (``omega / 2 pi``)."""
        return self.omega / (2.0 * math.pi)

    @property
    def period(self) -> float:
        """Period of the oscillation that sets in (s); ``inf`` for a real crossing."""
        return 2.0 * math.pi / self.omega if self.omega > 0 else math.inf

    def to_xarray(self) -> xr.Dataset:
        """The value and its certificate as an :class:`xarray.Dataset`.

        Returns
        -------
        xarray.Dataset
            Scalars ``value``, ``omega`` (rad/s), ``frequency`` (Hz), ``destabilizing``,
            ``count_before``, ``count_after``, ``method``, ``error`` (empty),
            ``bracket_lo``, ``bracket_hi`` (the variables of a grid's
            ``CriticalValues.to_xarray()``), and the certificate along dimension ``check``:
            ``check_value`` and ``check_count`` (right-half-plane roots counted in full there).
            The attribute ``parameter`` names the swept parameter.
        """
        import xarray as xr

        data: dict[str, Any] = {
            name: ((), val, attrs) for name, (val, attrs) in _row_variables(self).items()
        }
        data["check_value"] = ("check", [c[0] for c in self.checks])
        data["check_count"] = ("check", np.array([c[1] for c in self.checks], dtype=int))
        return xr.Dataset(data, attrs={"parameter": self.name})

    def plot(self, ax: Axes | None = None, **kwargs: Any) -> Axes:
        """The certificate: right-half-plane roots counted in full, against the parameter.

        The counts of ``checks`` are drawn as points joined by steps, and the critical
        value as a vertical line: the count changes there and nowhere else in the bracket.

        Parameters
        ----------
        ax : matplotlib.axes.Axes, optional
            Where to draw (a new figure by default).
        **kwargs
            Passed to ``ax.step`` for the counts.

        Returns
        -------
        matplotlib.axes.Axes
        """
        import matplotlib.pyplot as plt

        if ax is None:
            _, ax = plt.subplots()
        pts = sorted(self.checks)
        if pts:
            x = [p[0] for p in pts]
            n = [p[1] for p in pts]
            kwargs.setdefault("color", "C0")
            kwargs.setdefault("where", "post")
            ax.step(x, n, **kwargs)
            ax.plot(x, n, "o", color=kwargs["color"], ms=3)
        colour = "C3" if self.direction == "destabilizing" else "C2"
        ax.axvline(
            self.value, color=colour, ls="--", lw=0.9, label=f"{self.name} = {self.value:.6g}"
        )
        ax.set_xlabel(self.name)
        ax.set_ylabel("roots in the right half-plane")
        ax.set_title(f"critical {self.name} ({self.direction}, {self.omega:.4g} rad/s)")
        ax.legend(fontsize="small")
        return ax

    def __repr__(self) -> str:
        return (
            f"CriticalValue({self.name}={self.value:.12g}, omega={self.omega:.12g} rad/s "
            f"({self.frequency:.6g} Hz), {self.direction}, right-half-plane roots "
            f"{self.count_before} -> {self.count_after}, {self.method})"
        )


def _row_variables(cv: CriticalValue | None, error: str = "") -> dict[str, tuple[Any, dict]]:
    """One parameter set's variables (value and attributes), NaN for a failed set."""
    if cv is None:
        nan = math.nan
        vals: tuple = (nan, nan, nan, False, -1, -1, "", error, nan, nan)
    else:
        vals = (
            cv.value,
            cv.omega,
            cv.frequency,
            cv.direction == "destabilizing",
            cv.count_before,
            cv.count_after,
            cv.method,
            "",
            cv.bracket[0],
            cv.bracket[1],
        )
    name = "the parameter" if cv is None else cv.name
    attrs: tuple[dict, ...] = (
        {"long_name": f"critical {name}"},
        {"units": "rad/s"},
        {"units": "Hz"},
        {},
        {},
        {},
        {},
        {},
        {"long_name": "count computed in full below"},
        {"long_name": "count computed in full above"},
    )
    return dict(zip(_VARIABLES, zip(vals, attrs, strict=True), strict=True))


_VARIABLES = (
    "value",
    "omega",
    "frequency",
    "destabilizing",
    "count_before",
    "count_after",
    "method",
    "error",
    "bracket_lo",
    "bracket_hi",
)
_DTYPES = (float, float, float, bool, int, int, str, str, float, float)


def _variable(var: str, doc: str) -> Any:
    """A read-only property returning one variable of the table, as an xarray.DataArray."""
    return property(lambda self: self._table[var], doc=f"xarray.DataArray: {doc}.")


class CriticalValues:
    """Critical values over a grid of parameter sets (:func:`~fluidnet.critical_value` with
    ``grid=``).

    A collection of :class:`~fluidnet.CriticalValue`, one per parameter set, shaped
    like the grid (one dimension per grid entry, in order). A set whose critical value could
    not be found (with ``on_error="nan"``) holds its error message instead.

    Parameters
    ----------
    name : str
        The swept parameter.
    dims : sequence of str
        The grid's parameters, one per dimension.
    coords : mapping
        ``{parameter: 1-D values}`` for each of ``dims``.
    items : sequence
        Per parameter set in C order: a ``CriticalValue``, or the error message (str) of a set
        that failed.
    attrs : mapping, optional
        Attributes of the table (the fixed parameter values, the interval).
    intervals : (array_like, array_like), optional
        Each set's own ``lo`` and ``hi`` when they differ between sets.

    Attributes
    ----------
    name, dims, coords, attrs
        As given.
    shape : tuple of int
        The grid's shape.
    value, omega, frequency, destabilizing, count_before, count_after, method, error, \
bracket_lo, bracket_hi : xarray.DataArray
        The same quantities as one ``CriticalValue``'s, over the grid (NaN, ``False``, ``-1``
        or ``""`` for a failed set; ``error`` is ``""`` where it succeeded).

    Notes
    -----
    ``res[i, j]`` (positions) and ``res.sel(N=10)`` (parameter values) give one
    ``CriticalValue``; ``res["value"]`` gives a variable of ``to_xarray()``, as on a Dataset;
    iterating yields every set's ``CriticalValue`` (or error message) in C order.
    """

    def __init__(
        self,
        name: str,
        dims: tuple[str, ...] | list[str],
        coords: Mapping[str, Any],
        items: list[CriticalValue | str],
        attrs: Mapping[str, Any] | None = None,
        intervals: tuple[Any, Any] | None = None,
    ) -> None:
        self.name = name
        self.dims = tuple(dims)
        self.coords = {d: np.asarray(coords[d], dtype=float).reshape(-1) for d in self.dims}
        self.shape = tuple(self.coords[d].size for d in self.dims)
        if len(items) != math.prod(self.shape):
            raise OptionError(f"{len(items)} results for a grid of shape {self.shape}")
        self._items = np.empty(len(items), dtype=object)
        self._items[:] = items
        self._items = self._items.reshape(self.shape)
        self.attrs = dict(attrs or {})
        self._intervals = intervals
        self._table = self._build_table()

    def _build_table(self) -> xr.Dataset:
        import xarray as xr

        rows = [
            _row_variables(None, it) if isinstance(it, str) else _row_variables(it)
            for it in self._items.reshape(-1)
        ]
        data: dict[str, Any] = {}
        for var, dtype in zip(_VARIABLES, _DTYPES, strict=True):
            vals = np.array([r[var][0] for r in rows], dtype=object).astype(dtype)
            attrs = dict(rows[0][var][1]) if rows else {}
            if var == "value":
                attrs = {"long_name": f"critical {self.name}"}
            data[var] = (self.dims, vals.reshape(self.shape), attrs)
        if self._intervals is not None:
            lo, hi = self._intervals
            data["lo"] = (self.dims, np.broadcast_to(lo, self.shape).copy())
            data["hi"] = (self.dims, np.broadcast_to(hi, self.shape).copy())
        return xr.Dataset(
            data, coords=dict(self.coords), attrs={"parameter": self.name, **self.attrs}
        )

    def to_xarray(self) -> xr.Dataset:
        """The table of every set's numbers, one variable per quantity (a copy).

        Returns
        -------
        xarray.Dataset
            ``value``, ``omega``, ``frequency``, ``destabilizing``, ``count_before``,
            ``count_after``, ``method``, ``error``, ``bracket_lo``, ``bracket_hi`` (and ``lo``,
            ``hi`` when the sets have their own intervals) over the grid's dimensions.
        """
        return self._table.copy(deep=True)

    value = _variable("value", "critical value of each set (NaN where it failed)")
    omega = _variable("omega", "crossing frequency (rad/s)")
    frequency = _variable("frequency", "crossing frequency (Hz)")
    destabilizing = _variable("destabilizing", "stable below the value, unstable above")
    count_before = _variable("count_before", "right-half-plane roots just below the value")
    count_after = _variable("count_after", "right-half-plane roots just above the value")
    method = _variable("method", "the method used: delay or continuation")
    error = _variable("error", "the error message of a failed set, empty otherwise")
    bracket_lo = _variable("bracket_lo", "nearest value below where the count was computed")
    bracket_hi = _variable("bracket_hi", "nearest value above where the count was computed")

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, str):
            return self._table[key]
        item = self._items[key]
        if isinstance(item, np.ndarray):
            raise OptionError(
                "index every grid dimension to get one CriticalValue (use to_xarray() for slices)"
            )
        return _checked(item, self._where(key))

    def sel(self, **point: float) -> CriticalValue:
        """The critical value at the grid point with these parameter values.

        Parameters
        ----------
        **point : float
            One value per grid dimension (exactly one of the grid's values).

        Returns
        -------
        CriticalValue

        Raises
        ------
        OptionError
            For a missing or unknown dimension, or a value that is not on the grid.
        AnalysisError
            When that set failed (the message it failed with).
        """
        if set(point) != set(self.dims):
            raise OptionError(f"sel needs one value for each of {list(self.dims)}, got {point}")
        index = []
        for d in self.dims:
            hit = np.flatnonzero(self.coords[d] == float(point[d]))
            if hit.size == 0:
                raise OptionError(f"{d} = {point[d]!r} is not on the grid {list(self.coords[d])}")
            index.append(int(hit[0]))
        return self[tuple(index)]

    def _where(self, key: Any) -> str:
        idx = key if isinstance(key, tuple) else (key,)
        try:
            return ", ".join(
                f"{d}={self.coords[d][i]:g}" for d, i in zip(self.dims, idx, strict=True)
            )
        except (TypeError, ValueError, IndexError):
            return str(key)

    def __iter__(self) -> Iterator[CriticalValue | str]:
        return iter(self._items.reshape(-1).tolist())

    def __len__(self) -> int:
        return int(self._items.size)

    def plot(self, ax: Axes | None = None, **kwargs: Any) -> Axes:
        """The critical value over the grid: a line (1-D grid) or a coloured map (2-D grid).

        Failed sets are left out (gaps in the line, blank cells in the map).

        Parameters
        ----------
        ax : matplotlib.axes.Axes, optional
            Where to draw (a new figure by default).
        **kwargs
            Passed to ``ax.plot`` (1-D) or ``ax.pcolormesh`` (2-D).

        Returns
        -------
        matplotlib.axes.Axes

        Raises
        ------
        AnalysisError
            For a grid of more than two dimensions (select a slice with ``to_xarray()``).
        """
        import matplotlib.pyplot as plt

        if len(self.dims) > 2:
            raise AnalysisError(
                f"plot draws a 1-D or 2-D grid; this one has dimensions {list(self.dims)}"
            )
        if ax is None:
            _, ax = plt.subplots()
        value = self._table["value"].values
        if len(self.dims) == 1:
            kwargs.setdefault("marker", "o")
            ax.plot(self.coords[self.dims[0]], value, **kwargs)
            ax.set_xlabel(self.dims[0])
            ax.set_ylabel(f"critical {self.name}")
            return ax
        xd, yd = list(self.dims)
        mesh = ax.pcolormesh(self.coords[xd], self.coords[yd], value.T, shading="nearest", **kwargs)
        ax.figure.colorbar(mesh, ax=ax, label=f"critical {self.name}")
        ax.set_xlabel(xd)
        ax.set_ylabel(yd)
        return ax

    def __repr__(self) -> str:
        failed = sum(isinstance(it, str) for it in self)
        grid = " x ".join(f"{d}[{n}]" for d, n in zip(self.dims, self.shape, strict=True))
        return (
            f"CriticalValues({self.name} over {grid}: {len(self) - failed} found, {failed} failed)"
        )


def _checked(item: CriticalValue | str, where: str) -> CriticalValue:
    if isinstance(item, str):
        raise AnalysisError(f"at {where}: {item}")
    return item
