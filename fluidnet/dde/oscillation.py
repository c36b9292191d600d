"""``oscillation``: does a trajectory settle, or oscillate for good?

The tail of a trajectory (after ``after``) is classified from its successive peak-to-peak
amplitudes, which tells a slowly decaying oscillation from a limit cycle:

``converged``  the tail varies by less than ``tol`` times the signal's scale;
``decaying``   it oscillates with amplitudes shrinking by more than ``decay_tol`` per cycle;
``settling``   it does not oscillate and approaches a value, slower and slower;
``sustained``  it oscillates with amplitudes constant within ``decay_tol`` per cycle;
``growing``    it oscillates with amplitudes growing by more than ``decay_tol`` per cycle;
``diverging``  it does not oscillate and moves away, faster and faster.

``Oscillation.converged`` is true for the first three, ``Oscillation.sustained`` for
``sustained`` and ``growing``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import AnalysisError, ParameterError
from ..overrides import parameter_value

__all__ = ["Oscillation", "oscillation"]

_CONVERGING = ("converged", "decaying", "settling")
_SUSTAINED = ("sustained", "growing")


@dataclass(frozen=True, kw_only=True)
class Oscillation:
    """Classification of the tail of one trajectory.

    Attributes
    ----------
    state : str
    status : str
        ``"converged"``, ``"decaying"``, ``"settling"``, ``"sustained"``, ``"growing"`` or
        ``"diverging"`` (see :mod:`fluidnet.dde.oscillation`).
    amplitude : float
        Peak-to-peak amplitude of the last full cycle; for a tail without cycles, its range.
    period : float
        Mean time between successive maxima over the last cycles (``nan`` without cycles).
    frequency : float
        ``1 / period`` in Hz (``nan`` without cycles).
    mean : float
        Time average over whole cycles (over the tail when it does not oscillate).
    decay_ratio : float
        Amplitude ratio per cycle fitted over the last cycles (``nan`` with fewer than two).
    n_cycles : int
        Full cycles found in the tail.
    peak_times : ndarray
        Times of the maxima.
    window : (float, float)
        The classified time interval.
    """

    state: str
    status: str
    amplitude: float
    period: float
    frequency: float
    mean: float
    decay_ratio: float
    n_cycles: int
    peak_times: np.ndarray = field(repr=False)
    window: tuple[float, float]

    @property
    def converged(self) -> bool:
        """True when the tail settles (converged, decaying or settling)."""
        return self.status in _CONVERGING

    @property
    def sustained(self) -> bool:
        """True for a sustained or growing oscillation."""
        return self.status in _SUSTAINED

    @property
    def omega(self) -> float:
        """Angular frequency ``2 pi / period`` (rad/s)."""
        return 2.0 * math.pi * self.frequency

    def to_xarray(self) -> Any:
        """The classification as an :class:`xarray.Dataset`.

        Returns
        -------
        xarray.Dataset
            Scalars ``amplitude`` (peak-to-peak), ``period``, ``frequency``, ``mean``,
            ``decay_ratio``,
            ``n_cycles``, ``status``; ``peak_times`` along ``peak``; attributes ``state`` and
            the classified ``window``.
        """
        import xarray as xr

        scalars = ("amplitude", "period", "frequency", "mean", "decay_ratio", "n_cycles", "status")
        data: dict[str, Any] = {k: ((), getattr(self, k)) for k in scalars}
        data["amplitude"] = ((), self.amplitude, {"long_name": "peak-to-peak amplitude"})
        data["peak_times"] = ("peak", np.asarray(self.peak_times, dtype=float))
        return xr.Dataset(
            data,
            attrs={
                "state": self.state,
                "window_start": self.window[0],
                "window_end": self.window[1],
            },
        )

    def plot(self, ax: Any = None, **kwargs: Any) -> Any:
        """The classified window: the mean, the peak-to-peak band around it and the maxima.

        Parameters
        ----------
        ax : matplotlib.axes.Axes, optional
            Where to draw (a new figure by default); draw the trajectory on it first to see
            both (``sol.plot(ax=ax)``).
        **kwargs
            Passed to ``ax.axhline`` for the mean.

        Returns
        -------
        matplotlib.axes.Axes
        """
        ax = envelope_axes(ax, self.mean, self.amplitude, **kwargs)
        for t in self.peak_times:
            ax.axvline(t, color="0.6", lw=0.5)
        ax.set_xlim(*self.window)
        ax.set_xlabel("t")
        ax.set_ylabel(self.state)
        ax.set_title(f"{self.state}: {self.status}, period {self.period:.4g}", fontsize="small")
        ax.legend(fontsize="small")
        return ax


def envelope_axes(ax: Any, mean: float, amplitude: float, **kwargs: Any) -> Any:
    """Draw an oscillation's mean (dashed) and its peak-to-peak band around it on ``ax`` (a new
    figure when ``None``); ``kwargs`` go to ``ax.axhline`` (default colour ``C1``). Shared by
    ``Oscillation.plot`` and ``fluidnet.packet.QueueOscillation.plot``."""
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots()
    kwargs.setdefault("color", "C1")
    ax.axhline(mean, ls="--", lw=0.9, label=f"mean {mean:.4g}", **kwargs)
    half = 0.5 * amplitude
    ax.axhspan(mean - half, mean + half, color=kwargs["color"], alpha=0.12)
    return ax


def _after(after: Any) -> float:
    """``after`` as a float: a real number (text is not read as one, see
    :mod:`fluidnet.overrides`), else a :class:`ParameterError` naming it."""
    return parameter_value("oscillation: after", after)


def _series(source: Any, state: str, after: float | None):
    """(t, y) of the tail, (t0, t_end) of the whole signal, and the signal's scale."""
    from .solution import Solution

    if isinstance(source, Solution):
        t0, t1 = source.t0, source.t_end
        start = t0 + 0.5 * (t1 - t0) if after is None else _after(after)
        if not t0 <= start < t1:
            raise ParameterError(f"after = {start:g} is outside the run [{t0:g}, {t1:g})")
        steps = int(np.sum(source.mesh >= start))
        npts = int(min(200_001, max(4001, 40 * steps)))
        t = np.linspace(start, t1, npts)
        y = np.asarray(source(t, state), dtype=float)
        whole = np.asarray(source(np.linspace(t0, t1, 4001), state), dtype=float)
        return t, y, whole
    if hasattr(source, "dims") and hasattr(source, "coords"):  # xarray
        da = source[state] if hasattr(source, "data_vars") else source
        if da.ndim != 1 or "time" not in da.coords:
            raise ParameterError(
                "an xarray input must be 1-D with a 'time' coordinate "
                "(select one member first, e.g. ds['q'].isel(member=3))"
            )
        source = (da["time"].values, da.values)
    try:
        t_all, y_all = source
    except (TypeError, ValueError):
        raise ParameterError(
            "oscillation() takes a Solution, a (t, values) pair or a 1-D xarray DataArray, "
            f"not {type(source).__name__}"
        ) from None
    t_all = np.asarray(t_all, dtype=float).reshape(-1)
    y_all = np.asarray(y_all, dtype=float).reshape(-1)
    if t_all.shape != y_all.shape or t_all.size < 3:
        raise ParameterError("t and values must be 1-D arrays of the same length (at least 3)")
    if np.any(np.diff(t_all) <= 0):
        raise ParameterError("the times must be strictly increasing")
    bad = ~np.isfinite(y_all)
    if np.any(bad):
        raise AnalysisError(
            f"{state!r} is not finite at t = {t_all[np.argmax(bad)]:g}; nothing to classify"
        )
    t0, t1 = t_all[0], t_all[-1]
    start = t0 + 0.5 * (t1 - t0) if after is None else _after(after)
    if not t0 <= start < t1:
        raise ParameterError(f"after = {start:g} is outside the data [{t0:g}, {t1:g})")
    keep = t_all >= start
    if np.count_nonzero(keep) < 3:
        raise ParameterError(f"fewer than 3 samples after t = {start:g}")
    return t_all[keep], y_all[keep], y_all


def _refine(t: np.ndarray, y: np.ndarray, i: int) -> tuple[float, float]:
    """Extremum near sample ``i`` from the parabola through its neighbours."""
    if i <= 0 or i >= len(y) - 1:
        return t[i], y[i]
    y0, y1, y2 = y[i - 1], y[i], y[i + 1]
    den = y0 - 2 * y1 + y2
    if den == 0:
        return t[i], y[i]
    d = 0.5 * (y0 - y2) / den
    if abs(d) > 1:
        return t[i], y[i]
    h = 0.5 * (t[i + 1] - t[i - 1])
    return t[i] + d * h, y1 - 0.25 * (y0 - y2) * d


def oscillation(
    sol: Any,
    state: str,
    after: float | None = None,
    *,
    tol: float = 1e-3,
    decay_tol: float = 5e-3,
) -> Oscillation:
    """Classify the tail of a trajectory: converged, or a sustained oscillation.

    Parameters
    ----------
    sol : Solution, (t, values) or xarray.DataArray
        A run of :func:`fluidnet.simulate` (its dense output is sampled finely), samples of one
        state, or one member of :func:`fluidnet.simulate_ensemble` (1-D, with ``time``).
    state : str
        The state (a label when ``sol`` holds samples).
    after : float, optional
        Start of the classified tail; default: the middle of the run.
    tol : float
        The tail counts as constant when its range is below ``tol`` times the signal's scale
        (its largest absolute value over the whole run); extrema less prominent than this are
        ignored.
    decay_tol : float
        Amplitudes changing by less than this fraction per cycle make a sustained oscillation;
        a slower decay than that is not told apart from a limit cycle over the tail.

    Returns
    -------
    Oscillation
        Its ``status``, and the ``amplitude`` (peak-to-peak: maximum minus minimum over the
        last full cycle), ``period`` and ``mean`` of the tail.

    Raises
    ------
    ParameterError
        For ``after`` outside the run, malformed samples, or an ``after``, ``tol`` or
        ``decay_tol`` that is not a real number (``tol`` and ``decay_tol`` positive).
    AnalysisError
        For samples that are not finite.

    See Also
    --------
    simulate : the run it classifies
    periodic_orbit : the limit cycle itself, by collocation, with its stability

    Examples
    --------
    >>> import numpy as np, fluidnet as fn
    >>> t = np.linspace(0, 100, 20001)
    >>> osc = fn.oscillation((t, 1 + np.exp(-0.05 * t) * np.sin(t)), "x")
    >>> osc.status, round(osc.period, 3)
    ('decaying', 6.283)
    """
    tol = parameter_value("oscillation: tol", tol)
    decay_tol = parameter_value("oscillation: decay_tol", decay_tol)
    if not tol > 0 or not decay_tol > 0:
        raise ParameterError("tol and decay_tol must be positive")
    t, y, whole = _series(sol, state, after)
    scale = max(float(np.max(np.abs(whole))), np.finfo(float).tiny)
    atol = tol * scale
    window = (float(t[0]), float(t[-1]))
    span = float(np.max(y) - np.min(y))
    nan = math.nan
    empty = np.zeros(0)
    if span <= atol:
        return Oscillation(
            state=state,
            status="converged",
            amplitude=span,
            period=nan,
            frequency=nan,
            mean=float(np.mean(y)),
            decay_ratio=nan,
            n_cycles=0,
            peak_times=empty,
            window=window,
        )
    from scipy.signal import find_peaks  # slow import, only when classifying

    prominence = max(0.5 * atol, 0.02 * span)
    imax, _ = find_peaks(y, prominence=prominence)
    imin, _ = find_peaks(-y, prominence=prominence)
    peaks = [_refine(t, y, i) for i in imax]
    troughs = [_refine(t, -y, i) for i in imin]
    amps = []
    for (ta, ya), (tb, _) in zip(peaks[:-1], peaks[1:], strict=True):
        between = [-v for (tt, v) in troughs if ta < tt < tb]
        if between:
            amps.append(ya - min(between))
    n_cycles = len(amps)
    if n_cycles < 2:
        # no oscillation: is the tail approaching a value or running away?
        half = len(y) // 2
        d1 = abs(y[half] - y[0])
        d2 = abs(y[-1] - y[half])
        status = "settling" if d2 < d1 else "diverging"
        if n_cycles == 1:
            period = peaks[1][0] - peaks[0][0]
            return Oscillation(
                state=state,
                status=status,
                amplitude=amps[0],
                period=period,
                frequency=1.0 / period,
                mean=float(np.mean(y)),
                decay_ratio=nan,
                n_cycles=1,
                peak_times=np.array([p[0] for p in peaks]),
                window=window,
            )
        return Oscillation(
            state=state,
            status=status,
            amplitude=span,
            period=nan,
            frequency=nan,
            mean=float(np.mean(y)),
            decay_ratio=nan,
            n_cycles=0,
            peak_times=np.array([p[0] for p in peaks]),
            window=window,
        )
    last = np.array(amps[-8:])
    k = np.arange(last.size)
    if np.all(last > 0):
        slope = np.polyfit(k, np.log(last), 1)[0]
        ratio = float(math.exp(slope))
    else:
        ratio = 0.0
    if ratio < 1.0 - decay_tol:
        status = "decaying"
    elif ratio > 1.0 + decay_tol:
        status = "growing"
    else:
        status = "sustained"
    tp = np.array([p[0] for p in peaks])
    period = float(np.mean(np.diff(tp[-9:])))
    first, final = tp[0], tp[-1]
    sel = (t > first) & (t < final)
    ts = np.concatenate([[first], t[sel], [final]])
    ys = np.concatenate([[np.interp(first, t, y)], y[sel], [np.interp(final, t, y)]])
    mean = float(np.trapezoid(ys, ts) / (final - first)) if final > first else float(np.mean(y))
    return Oscillation(
        state=state,
        status=status,
        amplitude=float(amps[-1]),
        period=period,
        frequency=1.0 / period,
        mean=mean,
        decay_ratio=ratio,
        n_cycles=n_cycles,
        peak_times=tp,
        window=window,
    )
