"""``compare``: a fluid model's prediction next to packet runs, metric by metric.

Both sides are measured the same way over the same tail (the second half of the run by
default):

* ``mean_queue``, ``queue_std`` (packets);
* ``oscillating`` -- the fluid side from :func:`fluidnet.oscillation` (a sustained or growing
  oscillation), the packet side from the stated packet verdict of
  :mod:`fluidnet.packet.analysis` (1 or 0; over seeds, the fraction of seeds);
* ``swing`` (the relative swing of the queue averaged over one RTT, the packet criterion's
  quantity, on both sides), ``amplitude`` (peak to trough, packets) and ``period`` (s): the
  fluid's from :func:`fluidnet.oscillation`, the packets' from the autocorrelation of the
  smoothed queue;
* ``utilisation`` of the link, and ``convergence_time`` (s; when the queue averaged over
  five RTTs settles in a band around its tail mean, see
  :func:`fluidnet.packet.analysis.convergence_time`; NaN for a side that oscillates);
* ``mean_window`` (packets; not for RCP).

Over several packet runs (seeds) every metric has its mean and a confidence interval
(Student's t).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import ModelError, OptionError, ParameterError
from .analysis import convergence_time, queue_oscillation
from .mapping import _values, fluid_view
from .results import PacketRun

if TYPE_CHECKING:
    import xarray as xr
    from matplotlib.axes import Axes

    from ..dde.solution import Solution
    from ..symbolic.model import Model

__all__ = ["compare", "Comparison", "METRICS"]

#: The metrics of a comparison, in order.
METRICS = (
    "mean_queue",
    "queue_std",
    "oscillating",
    "swing",
    "amplitude",
    "period",
    "utilisation",
    "convergence_time",
    "mean_window",
)


@dataclass
class Comparison:
    """A fluid prediction and packet runs, measured alike (see :mod:`fluidnet.packet.comparison`).

    Attributes
    ----------
    fluid : dict
        Metric -> value for the fluid model.
    packets : dict
        Metric -> ndarray of values, one per packet run (seed).
    confidence : float
        Level of the intervals.
    solution : fluidnet.Solution
    runs : list of PacketRun
    after : float
        Start of the measured tail (s).
    queue_state : str
        The fluid model's state compared with the packet queue.
    link : int
        The bottleneck link measured (0-based).
    """

    fluid: dict[str, float]
    packets: dict[str, np.ndarray]
    confidence: float
    solution: Any = field(repr=False)
    runs: list = field(repr=False)
    after: float = 0.0
    queue_state: str = "q"
    link: int = 0

    def interval(self, metric: str) -> tuple[float, float, float]:
        """(mean, low, high) of a packet metric over the runs (low = high = NaN for one run).

        Runs where the metric is not finite are left out; the interval is Student's ``t`` at
        level ``confidence`` on the mean of the others.

        Parameters
        ----------
        metric : str
            One of the compared metrics (``"mean_queue"``, ``"queue_std"``, ``"oscillating"``,
            ``"swing"``, ``"amplitude"``, ``"period"``, ``"utilisation"``,
            ``"convergence_time"``, ``"mean_window"``).

        Returns
        -------
        (float, float, float)
            All NaN when no run has a finite value.
        """
        vals = np.asarray(self.packets[self._metric(metric)], dtype=float)
        vals = vals[np.isfinite(vals)]
        if vals.size == 0:
            return math.nan, math.nan, math.nan
        mean = float(np.mean(vals))
        if vals.size < 2:
            return mean, math.nan, math.nan
        from scipy import stats

        half = float(
            stats.t.ppf(0.5 + self.confidence / 2, vals.size - 1)
            * np.std(vals, ddof=1)
            / math.sqrt(vals.size)
        )
        return mean, mean - half, mean + half

    def _metric(self, metric: str) -> str:
        if metric not in self.packets:
            raise OptionError(f"unknown metric {metric!r}; measured: {sorted(self.packets)}")
        return metric

    def relative_difference(self, metric: str) -> float:
        """``(packets - fluid) / fluid`` for the mean over the runs.

        Parameters
        ----------
        metric : str
            One of the compared metrics (see :meth:`interval`).

        Returns
        -------
        float
            NaN when the fluid value is 0.
        """
        mean = self.interval(metric)[0]
        if metric not in self.fluid:
            raise OptionError(
                f"metric {metric!r} has no fluid value; compared: {sorted(self.fluid)}"
            )
        ref = self.fluid[metric]
        return (mean - ref) / ref if ref else math.nan

    def to_xarray(self) -> xr.Dataset:
        """Dataset with dimension ``metric``: ``fluid``, ``packet_mean``, ``packet_low``,
        ``packet_high``, and ``packet`` per ``seed``."""
        import xarray as xr

        rows = [self.interval(m) for m in METRICS]
        seeds = [run.seed for run in self.runs]
        return xr.Dataset(
            {
                "fluid": ("metric", [self.fluid[m] for m in METRICS]),
                "packet_mean": ("metric", [r[0] for r in rows]),
                "packet_low": ("metric", [r[1] for r in rows]),
                "packet_high": ("metric", [r[2] for r in rows]),
                "packet": (
                    ("metric", "seed"),
                    np.array([self.packets[m] for m in METRICS], dtype=float),
                ),
            },
            coords={"metric": list(METRICS), "seed": seeds},
            attrs={
                "confidence": self.confidence,
                "after": self.after,
                "model": self.solution.model.name,
            },
        )

    def plot(self, ax: Sequence[Axes] | None = None) -> np.ndarray:
        """Side by side: the queue of the fluid model and of every packet run over time, and
        every metric of the packet runs (mean and interval) against the fluid value.

        Parameters
        ----------
        ax : sequence of two matplotlib.axes.Axes, optional
            The two panels; a new figure by default.

        Returns
        -------
        array of matplotlib Axes

        Raises
        ------
        ParameterError
            When ``ax`` is not two axes.
        """
        import matplotlib.pyplot as plt

        if ax is None:
            _, made = plt.subplots(1, 2, figsize=(11, 3.8), width_ratios=[1.6, 1])
            axes = np.atleast_1d(made)
        else:
            axes = np.atleast_1d(np.asarray(ax, dtype=object))
        if axes.size != 2:
            raise ParameterError(f"{axes.size} axes given for the 2 panels")
        a = axes[0]
        for k, run in enumerate(self.runs):
            a.plot(
                run.time,
                run.queue[:, self.link],
                lw=0.5,
                alpha=0.6,
                color="C1",
                label="packets (ns-3)" if k == 0 else None,
            )
        t = np.linspace(self.solution.t0, self.solution.t_end, 4000)
        a.plot(t, self.solution(t, self.queue_state), color="C0", lw=1.2, label="fluid")
        a.axvline(self.after, color="0.6", lw=0.8, ls=":")
        a.set_xlabel("t (s)")
        a.set_ylabel("queue (pkts)")
        a.set_title(self.solution.model.name)
        a.legend(loc="upper right", fontsize=8)
        a = axes[1]
        # every metric scaled by the largest magnitude of its values, with the values written
        for i, m in enumerate(METRICS):
            mean, lo, hi = self.interval(m)
            ref = self.fluid[m]
            scale = np.nanmax(np.abs([ref, mean, lo, hi, 1e-300]))
            y = len(METRICS) - 1 - i
            if np.isfinite(ref):
                a.plot([ref / scale], [y + 0.12], "s", color="C0", ms=5)
            if np.isfinite(mean):
                a.plot([mean / scale], [y - 0.12], "o", color="C1", ms=5)
            if np.isfinite(lo):
                a.plot([lo / scale, hi / scale], [y - 0.12] * 2, color="C1", lw=1.5)
            a.text(1.08, y, f"{ref:.3g} | {mean:.3g}", va="center", fontsize=7)
        a.set_yticks(range(len(METRICS)), list(reversed(METRICS)), fontsize=8)
        a.set_xlim(-1.1, 1.55)
        a.axvline(0.0, color="0.8", lw=0.8)
        a.set_xlabel("value / largest (fluid \u25a0, packets \u25cf)")
        a.set_title(
            f"{len(self.runs)} run(s), {100 * self.confidence:g} % intervals; fluid | packets",
            fontsize=9,
        )
        return axes

    def __repr__(self) -> str:
        lines = [f"Comparison({self.solution.model.name}, {len(self.runs)} packet run(s))"]
        for m in METRICS:
            mean, lo, hi = self.interval(m)
            ci = f" [{lo:.4g}, {hi:.4g}]" if np.isfinite(lo) else ""
            lines.append(f"  {m:17s} fluid {self.fluid[m]:10.4g}   packets {mean:10.4g}{ci}")
        return "\n".join(lines)


def _fluid_metrics(sol, view: dict, after: float, smooth: float) -> dict[str, float]:
    from ..dde.oscillation import oscillation

    q_name, w_name = view["queue"], view["window"]
    t = np.linspace(sol.t0, sol.t_end, int(round((sol.t_end - sol.t0) * 100)) + 1)
    names = list(sol.state_names)
    values = dict(zip(names, np.atleast_2d(sol(t, names)), strict=True))
    q = values[q_name]
    tail = t >= after
    osc = oscillation(sol, q_name, after=after)
    qo = queue_oscillation(t, q, rtt=view["rtt"], after=after, smooth=smooth)
    arrival = np.asarray(view["arrival"](values), dtype=float)
    C = view["capacity"]
    served = np.where(q[tail] > 0, C, np.minimum(arrival[tail], C))
    return {
        "mean_queue": float(np.mean(q[tail])),
        "queue_std": float(np.std(q[tail])),
        "oscillating": float(osc.sustained),
        "swing": qo.swing,
        "amplitude": float(osc.amplitude),
        "period": float(osc.period) if osc.sustained else math.nan,
        "utilisation": float(np.mean(served) / C),
        "convergence_time": math.nan
        if osc.sustained
        else convergence_time(t, q, smooth=5 * view["rtt"], after=after),
        "mean_window": float(np.mean(values[w_name][tail])) if w_name else math.nan,
    }


def _packet_metrics(run: PacketRun, view: dict, after: float, smooth: float, link: int):
    q = run.queue[:, link]
    qo = queue_oscillation(run.time, q, rtt=view["rtt"], after=after, smooth=smooth)
    i0 = int(np.searchsorted(run.time, after))
    window = run.cwnd[i0:]
    return {
        "mean_queue": qo.mean,
        "queue_std": qo.std,
        "oscillating": float(qo.oscillating),
        "swing": qo.swing,
        "amplitude": qo.amplitude,
        "period": qo.period,
        "utilisation": run.utilisation(link=link, after=after),
        "convergence_time": math.nan
        if qo.oscillating
        else convergence_time(run.time, q, smooth=5 * view["rtt"], after=after),
        "mean_window": float(np.nanmean(window))
        if window.size and np.isfinite(window).any()
        else math.nan,
    }


#: Relative difference below which a fluid and a packet value of a parameter are the same.
SAME = 1e-9


def _check_same_point(model: Model, params: Mapping[str, float] | None, runs) -> None:
    """Refuse to compare the fluid model at one point with runs made at another (issue 33:
    without ``params=`` the model was compared at its defaults, silently).

    A run whose scenario records the fluid model it was mapped from (``scenario_for``:
    ``Scenario.fluid``) is checked parameter by parameter; a scenario built by hand is
    checked on what the mapping sets: the capacity, the number of long-lived flows and the
    round-trip propagation delay.
    """
    from .scenario import Flows

    values = _values(model, params)
    for k, run in enumerate(runs):
        sc = run.scenario
        recorded = sc.fluid_model()
        where = f"packet run {k} (seed {run.seed})"
        if recorded is not None:
            name, theirs = recorded
            if name != model.name:
                raise ParameterError(
                    f"{where} was mapped from the fluid model {name!r}, not {model.name!r}: "
                    f"compare it with fn.models.{name}(...)"
                )
            differ = {
                p: (values.get(p), v)
                for p, v in theirs.items()
                if p not in values or not _same(values[p], v)
            }
        else:
            view = fluid_view(model, params)
            long_lived = [g for g in sc.groups if isinstance(g, Flows)]
            observed = {
                "capacity (pkts/s)": (view["capacity"], sc.capacity(0)),
                "round-trip propagation delay (s)": (
                    view["rtt"],
                    long_lived[0].rtt if long_lived else math.nan,
                ),
            }
            if "N" in values:
                observed["N (long-lived flows)"] = (values["N"], sum(g.n for g in long_lived))
            differ = {p: (a, b) for p, (a, b) in observed.items() if not _same(a, b)}
        if differ:
            listed = ", ".join(f"{p}: fluid {a!r}, runs {b!r}" for p, (a, b) in differ.items())
            remedy = (
                f"pass params={ {p: b for p, (_, b) in differ.items()} } (the values the runs "
                "were made from), or runs of this point (fn.packet.scenario_for(model, "
                "params=...))"
                if recorded is not None
                else "pass the params= the scenario was built for, or compare runs of "
                "fn.packet.scenario_for(model, params=...)"
            )
            raise ParameterError(
                f"the fluid model and {where} are at different points ({listed}): {remedy}"
            )


def _same(a: Any, b: Any) -> bool:
    try:
        a, b = float(a), float(b)
    except (TypeError, ValueError):
        return a == b
    return abs(a - b) <= SAME * max(abs(a), abs(b), 1e-300)


def compare(
    fluid: Model | Solution,
    packets: PacketRun | Sequence[PacketRun],
    *,
    params: Mapping[str, float] | None = None,
    after: float | None = None,
    smooth: float | None = None,
    link: int = 0,
    confidence: float = 0.95,
) -> Comparison:
    """Measure a fluid model and packet runs of its scenario the same way.

    Parameters
    ----------
    fluid : fluidnet.Model or fluidnet.Solution
        A library model with a packet counterpart (``fn.packet.scenario_for``), simulated here
        over the packet runs' length from an empty queue (the mapping's history); or a
        solution of one.
    packets : PacketRun or sequence of PacketRun
        Runs of the scenario (typically several seeds).
    params : dict, optional
        Parameter values of the fluid model (as given to ``scenario_for``).
    after : float, optional
        Start of the measured tail (s; default: half the run).
    smooth : float, optional
        Averaging window of the queues (s; default: the round-trip propagation delay).
    link : int
        The packet scenario's link to measure.
    confidence : float
        Level of the intervals over the runs.

    Returns
    -------
    Comparison
        With ``.to_xarray()`` and ``.plot()``.

    Raises
    ------
    ParameterError
        For no runs, runs of different lengths, or a bad ``confidence``; and for runs made at
        another point than the fluid side's: a run of ``scenario_for`` records the model and
        every parameter value it was made from, and those must be the fluid side's (a
        scenario built by hand: its capacity, flows and round-trip delay), the message naming
        the parameters that differ and the ``params=`` that compares the runs' point.
    ModelError
        For a model without a packet counterpart.

    Examples
    --------
    Runs of a few seconds of CPU each (not run as doctests):

    >>> import fluidnet as fn  # doctest: +SKIP
    >>> m = fn.models.mgt_red(C=1250, weight=1e-3, delta=8e-4, max_th=200)  # doctest: +SKIP
    >>> sc = fn.packet.scenario_for(m, params={"N": 10, "Tp": 0.3})  # doctest: +SKIP
    >>> runs = [fn.packet.simulate(sc, 40, seed=s) for s in (1, 2, 3)]  # doctest: +SKIP
    >>> fn.compare(m, runs, params={"N": 10, "Tp": 0.3}, after=10).plot()  # doctest: +SKIP
    """
    from ..dde.simulation import simulate as fluid_simulate
    from ..dde.solution import Solution

    runs = [packets] if isinstance(packets, PacketRun) else list(packets)
    if not runs or not all(isinstance(r, PacketRun) for r in runs):
        raise ParameterError("packets must be a PacketRun or a non-empty sequence of them")
    t_end = runs[0].t_end
    if any(abs(r.t_end - t_end) > 1e-9 for r in runs):
        raise ParameterError("the packet runs must all have the same length (t_end)")
    if not 0 < confidence < 1:
        raise ParameterError(f"confidence = {confidence!r} must lie in (0, 1)")
    if isinstance(fluid, Solution):
        sol = fluid
        from ..symbolic.model import Model

        if not isinstance(sol.model, Model):  # a saved model: no symbolic form to map
            raise ModelError(
                f"compare needs a library model (fluidnet.Model) with a packet counterpart; "
                f"this solution is of {type(sol.model).__name__} {getattr(sol.model, 'name', '')!r}"
            )
        model = sol.model
        params = {**sol.params, **dict(params or {})}
    else:
        model = fluid
        _check_same_point(model, params, runs)  # before the fluid run
        view0 = fluid_view(model, params)
        sol = fluid_simulate(model, t_end, params=dict(params or {}), history=view0["history"])
    if isinstance(fluid, Solution):
        _check_same_point(model, params, runs)
    view = fluid_view(model, params)
    start = 0.5 * t_end if after is None else float(after)
    if not 0 <= start < min(t_end, sol.t_end):
        raise ParameterError(f"after = {start!r} is outside the runs [0, {t_end:g})")
    width = view["rtt"] if smooth is None else float(smooth)
    fl = _fluid_metrics(sol, view, start, width)
    per_run = [_packet_metrics(r, view, start, width, link) for r in runs]
    packets_ = {m: np.array([p[m] for p in per_run], dtype=float) for m in METRICS}
    return Comparison(
        fluid=fl,
        packets=packets_,
        confidence=float(confidence),
        solution=sol,
        runs=runs,
        after=start,
        queue_state=view["queue"],
        link=link,
    )
