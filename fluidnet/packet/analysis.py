"""Measurements on packet traces: smoothed queues, oscillation, convergence, a run's summary.

A packet queue is a noisy staircase; its oscillation is measured on the queue averaged over a
window (default: one round-trip time of the scenario's longest flows, which removes packet
noise and per-RTT bursts but keeps the slower cycles a fluid model predicts).

The **packet verdict** (does the queue oscillate for good?) is a stated criterion:

    over the tail of the run (the second half by default), the queue averaged over one RTT
    swings over at least its own mean: ``(q_95 - q_5) / mean(q) >= 1`` (``SWING_THRESHOLD``),
    ``q_5`` and ``q_95`` the 5th and 95th percentiles of the smoothed tail.

A fluid model's stable operating point leaves a packet queue fluctuating around it by less than
its level; the limit cycles of the fluid models (MGT/RED, Reno/RED, DCTCP) swing the queue
from empty to well above its mean. Near a fluid stability boundary the fluid limit cycle is
small and this criterion says "stable": that is where the two verdicts are expected to differ.

A first criterion -- a periodic return of the smoothed queue, an autocorrelation peak of at
least 0.3 between 2 RTTs and a third of the tail -- was dropped before any agreement map was
run: on the MGT/RED study network it called two fluid-stable points oscillating (noise excites
their lightly damped mode: autocorrelation 0.31 and 0.53 at the period of the fluid's damped
root) and a fluid-unstable point with five flows steady (its queue empties 66 % of the time,
without a common period). The autocorrelation's peak and lag are still measured
(``acf_peak``, ``period``): the period of a packet oscillation.

The amplitude is the mean peak-to-trough height of the smoothed queue's cycles
(:func:`fluidnet.oscillation` on it).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import ParameterError

if TYPE_CHECKING:
    from .results import PacketRun

__all__ = [
    "QueueOscillation",
    "moving_average",
    "queue_oscillation",
    "convergence_time",
    "summary",
    "SWING_THRESHOLD",
]

#: The relative swing of the smoothed queue that makes a packet oscillation (module docstring).
SWING_THRESHOLD = 1.0


def moving_average(t: np.ndarray, y: np.ndarray, window: float) -> np.ndarray:
    """Centred moving average of samples ``y(t)`` (equally spaced) over ``window`` seconds."""
    t = np.asarray(t, dtype=float)
    y = np.asarray(y, dtype=float)
    if t.size < 2 or window <= 0:
        return y.copy()
    dt = (t[-1] - t[0]) / (t.size - 1)
    k = max(1, int(round(window / dt)))
    if k <= 1:
        return y.copy()
    kernel = np.ones(k) / k
    pad = np.pad(y, (k // 2, k - 1 - k // 2), mode="edge")
    return np.convolve(pad, kernel, mode="valid")


@dataclass(frozen=True)
class QueueOscillation:
    """The oscillation of a queue trace (see :mod:`fluidnet.packet.analysis`).

    Attributes
    ----------
    oscillating : bool
        The packet verdict (the stated criterion): ``swing >= SWING_THRESHOLD``.
    swing : float
        ``(q_95 - q_5) / mean`` of the smoothed tail.
    period : float
        Lag of the autocorrelation's first maximum after its first zero, between 2 RTTs and
        a third of the tail (s; NaN without one).
    acf_peak : float
        Height of that maximum (NaN without one).
    amplitude : float
        Mean peak-to-trough height of the smoothed queue's cycles (packets).
    mean, std : float
        Of the raw queue over the tail (packets).
    empty_fraction : float
        Fraction of the tail's samples with an empty queue.
    smooth : float
        The averaging window used (s).
    window : (float, float)
        The tail analysed.
    """

    oscillating: bool
    swing: float
    period: float
    acf_peak: float
    amplitude: float
    mean: float
    std: float
    empty_fraction: float
    smooth: float
    window: tuple[float, float]

    def to_dict(self) -> dict:
        return asdict(self)

    def to_xarray(self) -> Any:
        """The measures as scalars of an :class:`xarray.Dataset` (the tail analysed in the
        attributes ``window_start``, ``window_end``).

        Returns
        -------
        xarray.Dataset
        """
        import xarray as xr

        values = {k: v for k, v in self.to_dict().items() if k != "window"}
        return xr.Dataset(
            {k: ((), v) for k, v in values.items()},
            attrs={"window_start": self.window[0], "window_end": self.window[1]},
        )

    def plot(self, ax: Any = None, **kwargs: Any) -> Any:
        """The tail analysed: the queue's mean, its mean peak-to-trough band and its swing.

        Parameters
        ----------
        ax : matplotlib.axes.Axes, optional
            Where to draw (a new figure by default); draw the trace on it first to see both.
        **kwargs
            Passed to ``ax.axhline`` for the mean.

        Returns
        -------
        matplotlib.axes.Axes
        """
        from ..dde.oscillation import envelope_axes

        ax = envelope_axes(ax, self.mean, self.amplitude, **kwargs)
        ax.set_xlim(*self.window)
        ax.set_xlabel("t (s)")
        ax.set_ylabel("queue (packets)")
        verdict = "oscillating" if self.oscillating else "quiet"
        ax.set_title(
            f"{verdict}: swing {self.swing:.3g}, period {self.period:.3g} s", fontsize="small"
        )
        ax.legend(fontsize="small")
        return ax


def _acf(y: np.ndarray) -> np.ndarray:
    y = y - y.mean()
    n = y.size
    f = np.fft.rfft(y, 2 * n)
    acf = np.fft.irfft(f * np.conj(f))[:n]
    return acf / acf[0] if acf[0] > 0 else np.zeros(n)


def queue_oscillation(
    t: np.ndarray,
    q: np.ndarray,
    *,
    rtt: float,
    after: float | None = None,
    smooth: float | None = None,
    threshold: float = SWING_THRESHOLD,
) -> QueueOscillation:
    """Measure the oscillation of queue samples ``q(t)`` (packet or fluid).

    Parameters
    ----------
    t, q : array_like
        Equally spaced samples.
    rtt : float
        Round-trip time of the flows (s): the shortest period considered is ``2 rtt``.
    after : float, optional
        Start of the analysed tail (default: the middle of the samples).
    smooth : float, optional
        Averaging window (s; default ``rtt``).
    threshold : float
        Relative swing that makes an oscillation (see the module docstring).

    Returns
    -------
    QueueOscillation
    """
    from ..dde.oscillation import oscillation

    t = np.asarray(t, dtype=float)
    q = np.asarray(q, dtype=float)
    if t.shape != q.shape or t.ndim != 1 or t.size < 8:
        raise ParameterError("t and q must be 1-D arrays of the same length (at least 8)")
    if not (rtt > 0 and math.isfinite(rtt)):
        raise ParameterError(f"rtt = {rtt!r} must be a positive number of seconds")
    start = t[0] + 0.5 * (t[-1] - t[0]) if after is None else float(after)
    if not t[0] <= start < t[-1]:
        raise ParameterError(f"after = {start!r} is outside the samples [{t[0]:g}, {t[-1]:g}]")
    width = rtt if smooth is None else float(smooth)
    keep = t >= start
    tt, raw = t[keep], q[keep]
    ys = moving_average(t, q, width)[keep]
    dt = (tt[-1] - tt[0]) / max(tt.size - 1, 1)
    period = peak = math.nan
    if np.ptp(ys) > 0 and tt.size >= 8:
        acf = _acf(ys)
        lo = max(1, int(math.ceil(2 * rtt / dt)))
        hi = int(tt.size / 3)
        neg = np.flatnonzero(acf[: hi + 1] < 0)
        if neg.size and hi > lo:
            first = max(lo, int(neg[0]))
            seg = acf[first : hi + 1]
            if seg.size >= 3:
                inner = np.flatnonzero((seg[1:-1] >= seg[:-2]) & (seg[1:-1] > seg[2:])) + 1
                if inner.size:
                    j = inner[np.argmax(seg[inner])]
                    peak = float(seg[j])
                    period = float((first + j) * dt)
    level = float(np.mean(raw))
    q5, q95 = np.percentile(ys, [5.0, 95.0])
    swing = float((q95 - q5) / level) if level > 0 else math.inf if q95 > q5 else 0.0
    oscillating = bool(swing >= threshold)
    amplitude = float(np.ptp(ys))
    try:
        osc = oscillation((tt, ys), "q", tol=1e-3)
        if osc.n_cycles >= 1 and math.isfinite(osc.amplitude):
            amplitude = float(osc.amplitude)
    except Exception:  # noqa: BLE001 - a flat or too short tail: keep the range
        pass
    return QueueOscillation(
        oscillating=oscillating,
        swing=swing,
        period=period,
        acf_peak=peak,
        amplitude=amplitude,
        mean=level,
        std=float(np.std(raw)),
        empty_fraction=float(np.mean(raw <= 0.5)),
        smooth=width,
        window=(float(tt[0]), float(tt[-1])),
    )


def convergence_time(
    t: np.ndarray, q: np.ndarray, *, smooth: float, after: float | None = None, band: float = 0.2
) -> float:
    """When the queue settles: the end of its last excursion, begun before ``after``, out of
    the band around its tail mean (NaN when it is still out of the band at ``after``).

    The queue is averaged over ``smooth`` seconds; the band is the largest of ``band`` times
    the tail's mean, three standard deviations of the averaged tail (a packet queue's
    stationary fluctuation) and 2 packets. Excursions that begin in the tail are fluctuations
    of the settled queue and do not count.
    """
    t = np.asarray(t, dtype=float)
    q = np.asarray(q, dtype=float)
    ys = moving_average(t, q, smooth)
    start = t[0] + 0.5 * (t[-1] - t[0]) if after is None else float(after)
    tail = t >= start
    target = float(np.mean(q[tail]))
    tol = max(band * abs(target), 3.0 * float(np.std(ys[tail])), 2.0)
    outside = np.abs(ys - target) > tol
    i0 = int(np.argmax(tail))
    if outside[i0]:
        return math.nan
    before = np.flatnonzero(outside[:i0])
    return float(t[0]) if before.size == 0 else float(t[before[-1] + 1])


def summary(
    run: PacketRun, *, link: int = 0, after: float | None = None, smooth: float | None = None
) -> dict:
    """Numbers that describe one packet run (what :func:`fluidnet.packet.sweep` keeps).

    Keys: ``mean_queue``, ``queue_std``, ``empty_fraction``, ``oscillating`` (1.0 or 0.0, the
    packet verdict), ``period``, ``acf_peak``, ``amplitude``, ``utilisation``, ``drop_rate``
    and ``mark_rate`` (per packet sent on the link), ``mean_window``, ``mean_rtt``,
    ``convergence_time``, ``mean_completion_time`` and ``completed`` (finite flows),
    ``cpu_time``, ``events``.

    Parameters
    ----------
    run : PacketRun
    link : int
        The bottleneck link measured (0-based).
    after : float, optional
        Start of the measured tail (default: the middle of the run).
    smooth : float, optional
        Averaging window of the oscillation test (s; see :func:`queue_oscillation`).

    Returns
    -------
    dict of str to float
    """
    rtt = max(g.rtt for g in run.scenario.groups)
    start = 0.5 * run.t_end if after is None else float(after)
    q = run.queue[:, link]
    osc = queue_oscillation(run.time, q, rtt=rtt, after=start, smooth=smooth)
    i0 = int(np.searchsorted(run.time, start))
    sent = (run.departed[-1, link] - run.departed[i0, link]) / run.scenario.packet_size
    drops = run.drops[-1, link] - run.drops[i0, link]
    marks = run.marks[-1, link] - run.marks[i0, link]
    fct = run.completion_times()
    with np.errstate(invalid="ignore"):
        window = (
            float(np.nanmean(run.cwnd[i0:]))
            if run.n_flows and np.isfinite(run.cwnd[i0:]).any()
            else math.nan
        )
        rtts = run.rtt[i0:]
        mean_rtt = float(np.nanmean(np.where(rtts > 0, rtts, np.nan))) if rtts.size else math.nan
    return {
        "mean_queue": osc.mean,
        "queue_std": osc.std,
        "empty_fraction": osc.empty_fraction,
        "oscillating": float(osc.oscillating),
        "swing": osc.swing,
        "period": osc.period,
        "acf_peak": osc.acf_peak,
        "amplitude": osc.amplitude,
        "utilisation": run.utilisation(link=link, after=start),
        "drop_rate": float(drops / sent) if sent > 0 else math.nan,
        "mark_rate": float(marks / sent) if sent > 0 else math.nan,
        "mean_window": window,
        "mean_rtt": mean_rtt,
        "convergence_time": convergence_time(run.time, q, smooth=5 * rtt, after=start),
        "mean_completion_time": float(np.nanmean(fct)) if np.isfinite(fct).any() else math.nan,
        "completed": float(np.mean(np.isfinite(fct))) if fct.size else math.nan,
        "cpu_time": run.cpu_time,
        "events": float(run.events),
    }
