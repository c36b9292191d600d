"""The result of every stationary-distribution method: :class:`WindowDistribution`."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..errors import AnalysisError, OptionError

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["WindowDistribution"]

#: Statistics listed by :meth:`WindowDistribution.summary` (and given intervals by Monte Carlo).
STATISTICS = ("mean", "var", "std", "cov", "skew", "mode", "mark_probability")
#: Quantile levels listed by :meth:`WindowDistribution.summary`.
QUANTILES = (0.05, 0.25, 0.5, 0.75, 0.95)


def _trapezoid(y: np.ndarray, x: np.ndarray) -> float:
    return float(np.sum(0.5 * (y[1:] + y[:-1]) * np.diff(x)))


def _cumtrapz(y: np.ndarray, x: np.ndarray) -> np.ndarray:
    return np.concatenate(([0.0], np.cumsum(0.5 * (y[1:] + y[:-1]) * np.diff(x))))


def quantile_label(q: float) -> str:
    """``0.05 -> "q05"``, ``0.5 -> "q50"``, ``0.975 -> "q97.5"``."""
    pct = 100.0 * q
    return f"q{pct:02.0f}" if abs(pct - round(pct)) < 1e-9 else f"q{pct:g}"


class WindowDistribution:
    """A stationary window distribution with its statistics.

    Returned by :func:`~fluidnet.stochastic.stationary_distribution` (PDMP solver),
    :func:`~fluidnet.stochastic.constant_mark_distribution` (closed-form series) and
    :func:`~fluidnet.stochastic.monte_carlo` (simulation of the chain). All statistics are
    *per-ACK* averages (the law of ``W_n``); :attr:`time_average` is the same object for the
    distribution of the window at a random time, which weighs each window by the time between
    ACKs, ``1/ack_rate(w)``.

    Parameters
    ----------
    w : array
        Increasing window grid (bin centres for Monte Carlo).
    pdf : array
        Density on ``w`` (normalized here by the trapezoid rule).
    method : str
        ``"pdmp"``, ``"series"`` or ``"monte carlo"``.
    average : {"ack", "time"}
    exact : dict, optional
        Statistics known more accurately than the grid gives them: raw moments
        ``{"moments": {k: E[W^k]}}`` and any of :data:`STATISTICS`; they take precedence.
    ci : dict, optional
        ``{statistic: (low, high)}`` confidence intervals (Monte Carlo).
    info : dict, optional
        Method details: grid size, error estimates, run lengths, ...
    time_average : WindowDistribution, optional
        The per-time companion.
    edges, counts : array, optional
        Histogram bin edges and counts (Monte Carlo): the distribution function is then
        piecewise linear through the edges, which the quantiles use.
    name : str, optional
        The name of the chain it describes (the attribute ``name``).

    Attributes
    ----------
    mean, var, std, cov, skew, mode, mark_probability : float
        ``cov`` is the coefficient of variation ``std / mean``; ``mark_probability`` the
        fraction of ACKs that are marked, ``E[mark(W)]``.
    ci : dict or None
    info : dict
    """

    def __init__(
        self,
        w: ArrayLike,
        pdf: ArrayLike,
        *,
        method: str,
        average: str = "ack",
        exact: Mapping[str, Any] | None = None,
        ci: Mapping[str, tuple[float, float]] | None = None,
        info: Mapping[str, Any] | None = None,
        time_average: WindowDistribution | None = None,
        edges: ArrayLike | None = None,
        counts: ArrayLike | None = None,
        name: str = "",
    ) -> None:
        w = np.asarray(w, dtype=float)
        pdf = np.asarray(pdf, dtype=float)
        if w.ndim != 1 or w.shape != pdf.shape or w.size < 3:
            raise AnalysisError(f"need matching 1-d grid and density, got {w.shape}, {pdf.shape}")
        if not np.all(np.diff(w) > 0):
            raise AnalysisError("the window grid must be strictly increasing")
        if not np.all(np.isfinite(pdf)) or np.any(pdf < 0):
            raise AnalysisError("the density must be finite and non-negative")
        mass = _trapezoid(pdf, w)
        if not mass > 0:
            raise AnalysisError("the density has no mass on the grid")
        if average not in ("ack", "time"):
            raise OptionError(f"average must be 'ack' or 'time', got {average!r}")
        self.w = w
        self.pdf = pdf / mass
        self.method = str(method)
        self.average = average
        self.name = name
        self._exact = dict(exact or {})
        self.ci = dict(ci) if ci is not None else None
        self.info = dict(info or {})
        self._time = time_average
        self._edges: tuple[NDArray[np.float64], NDArray[np.float64]] | None = None
        if edges is not None:
            e = np.asarray(edges, dtype=float)
            n = np.asarray(counts, dtype=float)
            if e.shape != (w.size + 1,) or n.shape != w.shape:
                raise AnalysisError("histogram edges/counts do not match the grid")
            cum = np.concatenate(([0.0], np.cumsum(n)))
            self._edges = (e, cum / cum[-1])

    # ------------------------------------------------------------------------------ basics
    @property
    def cdf(self) -> np.ndarray:
        """The distribution function on :attr:`w` (trapezoid rule; 1 at the last point)."""
        c = _cumtrapz(self.pdf, self.w)
        return c / c[-1]

    def moment(self, k: float) -> float:
        """The raw moment ``E[W^k]``.

        Parameters
        ----------
        k : float
            Order of the moment (exact when the solver gave it in closed form, else the trapezoid
            rule on the grid).

        Returns
        -------
        float
        """
        exact = self._exact.get("moments", {})
        if k in exact:
            return float(exact[k])
        return _trapezoid(self.w**k * self.pdf, self.w)

    def central_moment(self, k: int) -> float:
        """``E[(W - E W)^k]`` (from raw moments when they are exact, else on the grid).

        Parameters
        ----------
        k : int
            Order of the moment, ``k >= 0``.

        Returns
        -------
        float
        """
        exact = self._exact.get("moments", {})
        if all(j in exact for j in range(1, k + 1)):
            m = self.moment(1)
            return float(
                sum(math.comb(k, j) * self.moment(j) * (-m) ** (k - j) for j in range(k + 1))
            )
        m = self.mean
        return _trapezoid((self.w - m) ** k * self.pdf, self.w)

    def _stat(self, name: str, compute) -> float:
        return float(self._exact[name]) if name in self._exact else float(compute())

    @property
    def mean(self) -> float:
        return self._stat("mean", lambda: self.moment(1))

    @property
    def var(self) -> float:
        return self._stat("var", lambda: self.central_moment(2))

    @property
    def std(self) -> float:
        return self._stat("std", lambda: math.sqrt(self.var))

    @property
    def cov(self) -> float:
        """Coefficient of variation ``std / mean``."""
        return self._stat("cov", lambda: self.std / self.mean)

    @property
    def skew(self) -> float:
        return self._stat("skew", lambda: self.central_moment(3) / self.var**1.5)

    @property
    def mode(self) -> float:
        """The most likely window (vertex of the parabola through the grid maximum)."""

        def compute() -> float:
            i = int(np.argmax(self.pdf))
            if i == 0 or i == self.w.size - 1:
                return float(self.w[i])
            x, y = self.w[i - 1 : i + 2], self.pdf[i - 1 : i + 2]
            a, b, _ = np.polyfit(x - x[1], y, 2)
            return float(x[1] - b / (2 * a)) if a < 0 else float(x[1])

        return self._stat("mode", compute)

    @property
    def mark_probability(self) -> float:
        """``E[mark(W)]``: the fraction of ACKs that are marked (NaN when unknown)."""
        return float(self._exact.get("mark_probability", math.nan))

    def quantile(self, q: float | Sequence[float]) -> float | np.ndarray:
        """The ``q``-quantile(s) of the window (linear interpolation of the CDF).

        Parameters
        ----------
        q : float or sequence of float
            Levels in ``[0, 1]``.

        Returns
        -------
        float or numpy.ndarray
            Windows (packets): a float for a scalar ``q``, an array of the length of ``q`` else.

        Raises
        ------
        OptionError
            For a level outside ``[0, 1]``.
        """
        qs = np.atleast_1d(np.asarray(q, dtype=float))
        if np.any((qs < 0) | (qs > 1)):
            raise OptionError(f"quantile levels must lie in [0, 1], got {q!r}")
        x, c = self._edges if self._edges is not None else (self.w, self.cdf)
        out = np.empty_like(qs)
        for n, level in enumerate(qs):
            i = int(np.searchsorted(c, level, side="left"))
            if i == 0:
                out[n] = x[0]
            elif i >= c.size:
                out[n] = x[-1]
            else:
                c0, c1 = c[i - 1], c[i]
                f = 0.0 if c1 == c0 else (level - c0) / (c1 - c0)
                out[n] = x[i - 1] + f * (x[i] - x[i - 1])
        return float(out[0]) if np.ndim(q) == 0 else out

    def probability(self, lo: float = -np.inf, hi: float = np.inf) -> float:
        """``P(lo < W <= hi)`` from the CDF on the grid.

        Parameters
        ----------
        lo, hi : float, default -inf and inf
            Ends of the window interval (packets); the CDF is interpolated linearly between grid
            points, 0 below the grid and 1 above it.

        Returns
        -------
        float
        """
        c = self.cdf
        return float(np.interp(hi, self.w, c, 0.0, 1.0) - np.interp(lo, self.w, c, 0.0, 1.0))

    @property
    def time_average(self) -> WindowDistribution:
        """The distribution of the window at a random *time* (weights ``1/ack_rate(w)``)."""
        if self.average == "time":
            return self
        if self._time is None:
            raise AnalysisError(f"no per-time distribution was computed by {self.method!r}")
        return self._time

    # ------------------------------------------------------------------------------ output
    def summary(self) -> dict[str, float]:
        """Every statistic and the quantiles of :data:`QUANTILES`, per ACK, and the per-time
        mean, standard deviation and CoV (keys ``mean_time``, ``std_time``, ``cov_time``)."""
        out = {s: getattr(self, s) for s in STATISTICS}
        for q in QUANTILES:
            out[quantile_label(q)] = self.quantile(q)
        if self.average == "ack" and self._time is not None:
            t = self._time
            out.update(mean_time=t.mean, std_time=t.std, cov_time=t.cov)
        return out

    def interval(self, statistic: str) -> tuple[float, float]:
        """The confidence interval of a statistic (Monte Carlo only).

        Parameters
        ----------
        statistic : str
            A key of ``ci``, e.g. ``"mean"``, ``"std"`` or ``"q95"``.

        Returns
        -------
        (float, float)
            ``(low, high)``.

        Raises
        ------
        AnalysisError
            When the method gives no confidence intervals, or none for ``statistic``.
        """
        if self.ci is None:
            raise AnalysisError(f"{self.method!r} gives no confidence intervals")
        if statistic not in self.ci:
            raise AnalysisError(
                f"no confidence interval for {statistic!r}; available: {', '.join(self.ci)}"
            )
        return self.ci[statistic]

    def to_xarray(self) -> Any:
        """The density and its distribution function along ``w`` as an
        :class:`xarray.Dataset`.

        Returns
        -------
        xarray.Dataset
            ``pdf`` and ``cdf`` along ``w``; the statistics of :meth:`summary` and the
            ``method``, ``average`` and ``name`` as attributes.
        """
        import xarray as xr

        attrs: dict[str, Any] = {"method": self.method, "average": self.average, "name": self.name}
        attrs.update({k: float(v) for k, v in self.summary().items()})
        return xr.Dataset(
            {"pdf": ("w", self.pdf), "cdf": ("w", np.asarray(self.cdf, dtype=float))},
            coords={"w": self.w},
            attrs=attrs,
        )

    def plot(
        self,
        ax: Axes | None = None,
        *,
        average: str = "ack",
        label: str | None = None,
        **kwargs: Any,
    ) -> Axes:
        """Draw the density on ``ax`` (a new figure if None) and return ``ax``.

        Monte Carlo densities are drawn as histograms (steps).

        Parameters
        ----------
        ax : matplotlib.axes.Axes, optional
            Axes to draw on; a new figure by default.
        average : {"ack", "time", "both"}, default "ack"
            The per-ACK density, the per-time density (:attr:`time_average`) or both.
        label : str, optional
            Legend label; default the method's name (with the average appended for ``"both"``).
        **kwargs
            Passed to ``ax.plot``.

        Returns
        -------
        matplotlib.axes.Axes

        Raises
        ------
        OptionError
            For an unknown ``average``.
        AnalysisError
            When the per-time density is asked for and was not computed.
        """
        if ax is None:
            import matplotlib.pyplot as plt

            _, ax = plt.subplots()
        if average not in ("ack", "time", "both"):
            raise OptionError(f"average must be 'ack', 'time' or 'both', got {average!r}")
        # the per-time companion only when asked for (it may not exist)
        drawn = [self] if average == "ack" else [self.time_average]
        if average == "both":
            drawn.insert(0, self)
        for d in drawn:
            lab = label if label is not None else self.method
            if average == "both":
                lab = f"{lab} (per {'ACK' if d.average == 'ack' else 'time'})"
            kw = dict(kwargs)
            if d.method == "monte carlo":
                kw.setdefault("drawstyle", "steps-mid")
            ax.plot(d.w, d.pdf, label=lab, **kw)
        ax.set_xlabel("window w (segments)")
        ax.set_ylabel("density")
        return ax

    def __repr__(self) -> str:
        per = "per ACK" if self.average == "ack" else "per time"
        return (
            f"WindowDistribution({self.method}, {per}: mean={self.mean:.6g}, var={self.var:.6g}, "
            f"cov={self.cov:.4g}, skew={self.skew:.4g}, mode={self.mode:.6g})"
        )
