"""``PacketRun``: the traces of one ns-3 run, as arrays, an xarray Dataset and a figure."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import ParameterError
from ..options import index_option

if TYPE_CHECKING:
    import xarray as xr

__all__ = ["PacketRun"]


class PacketRun:
    """The traces of one packet simulation (:func:`fluidnet.packet.simulate`).

    Attributes
    ----------
    scenario : Scenario
    seed : int
    t_end : float
    time : ndarray, shape (T,)
        Sample times (s).
    queue, drops, marks, departed, aqm_state : ndarray, shape (T, links)
        Per bottleneck link: packets in the queue; cumulative drops and ECN marks; cumulative
        bytes sent on the link; the AQM's state (PI: ``p``; RCP: ``R/C``; SBRM: the marking
        probability of the current backlog; NaN for the others).
    cwnd, rtt, received : ndarray, shape (T, flows)
        Per long-lived flow: congestion window (packets; NaN for RCP flows), last RTT sample
        (s), cumulative bytes received by its sink.
    sender_rate : ndarray, shape (T, flows)
        RCP flows: the rate they send at (packets/s); TCP flows: ``cwnd / rtt``.
    flow_group : ndarray
        Group of every long-lived flow (index into ``scenario.groups``).
    short_start, short_size, short_done, short_group : ndarray
        Start time, size (packets), completion time (NaN: unfinished) and group of every
        finite flow.
    events : int
        ns-3 events executed.
    cpu_time, wall_time : float
        CPU seconds of the worker's simulation (when it ran, for a run read from a store) and
        wall seconds of the whole call.
    stored : str or None
        The run store (:class:`fluidnet.packet.RunStore`) the run was read from; ``None`` when
        it ran in this call.

    Other Parameters
    ----------------
    arrays : dict of str to ndarray
        The traces as the worker wrote them (made by :func:`fluidnet.packet.simulate`, not by
        hand).
    """

    def __init__(
        self,
        *,
        scenario,
        t_end: float,
        seed: int,
        arrays: dict[str, np.ndarray],
        stored: str | None = None,
    ) -> None:
        self.scenario = scenario
        self.stored = stored
        self.t_end = float(t_end)
        self.seed = int(seed)
        self.time = arrays["time"]
        self.queue = arrays["queue"]
        self.drops = arrays["drops"]
        self.marks = arrays["marks"]
        self.departed = arrays["departed"]
        self.aqm_state = arrays["aqm_state"]
        groups = arrays["flow_group"]
        traced = arrays["traced_flow"]
        kinds = np.array(
            ["rcp" if scenario.groups[g].transport.is_rcp else "tcp" for g in groups[traced]]
        )
        raw = arrays["cwnd"]
        is_rcp = kinds == "rcp"
        self.rtt = arrays["rtt"]
        self.cwnd = np.where(is_rcp[None, :], np.nan, raw)
        with np.errstate(divide="ignore", invalid="ignore"):
            tcp_rate = np.where(self.rtt > 0, raw / self.rtt, np.nan)
        self.sender_rate = np.where(is_rcp[None, :], raw, tcp_rate)
        self.received = arrays["rx"]
        self.flow_group = groups[traced]
        self.flow_kind = kinds
        finite = arrays["flow_size"] > 0
        self.short_start = arrays["flow_start"][finite]
        self.short_size = arrays["flow_size"][finite]
        self.short_done = arrays["flow_done"][finite]
        self.short_group = groups[finite]
        self.events = int(arrays["events"])
        self.cpu_time = float(arrays["cpu_time"])
        self.build_cpu_time = float(arrays.get("build_cpu_time", np.nan))
        self.wall_time = float(arrays.get("wall_time", np.nan))

    # ------------------------------------------------------------------ derived series
    @property
    def n_links(self) -> int:
        return self.queue.shape[1]

    @property
    def n_flows(self) -> int:
        """Long-lived (traced) flows."""
        return self.cwnd.shape[1]

    def _payload(self) -> np.ndarray:
        size = self.scenario.packet_size
        return np.where(self.flow_kind == "rcp", size - 28, size - 52).astype(float)

    def throughput(self) -> np.ndarray:
        """Packets per second sent on each link over each sample interval, shape (T, links)
        (the first row repeats the second)."""
        out = np.diff(self.departed, axis=0) / np.diff(self.time)[:, None]
        out = out / self.scenario.packet_size
        return np.vstack([out[:1], out]) if len(out) else out

    def utilisation(self, link: int = 0, after: float | None = None) -> float:
        """Fraction of link ``link``'s capacity used after ``after`` (default: half the run).

        Parameters
        ----------
        link : int, default 0
            Bottleneck link index (0-based).
        after : float, optional
            Start of the measured tail (s); default ``t_end / 2``.

        Returns
        -------
        float
            Bits sent (framing included) over the link's rate times the tail's length; NaN for an
            empty tail.

        Raises
        ------
        ParameterError
            When ``after`` is outside ``[0, t_end)``.
        """
        link = index_option("link", link, len(self.scenario.link_list), where="utilisation")
        i0 = self._index(after)
        link_ = self.scenario.link_list[link]
        size = self.scenario.packet_size
        sent = (self.departed[-1, link] - self.departed[i0, link]) * (size + 2) / size
        span = self.time[-1] - self.time[i0]
        return float(8.0 * sent / (link_.rate * span)) if span > 0 else float("nan")

    def flow_rate(self) -> np.ndarray:
        """Goodput of every long-lived flow (packets/s) over each sample interval."""
        if self.n_flows == 0:
            return np.zeros((self.time.size, 0))
        out = np.diff(self.received, axis=0) / np.diff(self.time)[:, None] / self._payload()
        return np.vstack([out[:1], out])

    def mean_queue(self, link: int = 0, after: float | None = None) -> float:
        """Time average of the queue of ``link`` after ``after`` (default: half the run).

        Parameters
        ----------
        link : int, default 0
            Bottleneck link index (0-based).
        after : float, optional
            Start of the measured tail (s); default ``t_end / 2``.

        Returns
        -------
        float
            Mean of the queue samples (packets) from ``after`` on.

        Raises
        ------
        ParameterError
            When ``after`` is outside ``[0, t_end)``.
        """
        link = index_option("link", link, self.queue.shape[1], where="mean_queue")
        return float(np.mean(self.queue[self._index(after) :, link]))

    def completion_times(self) -> np.ndarray:
        """Completion time (s) of every finite flow: from its start (SYN) until its sink
        received its last byte; NaN for a flow that did not finish."""
        return self.short_done - self.short_start

    def _index(self, after: float | None) -> int:
        t = 0.5 * self.t_end if after is None else float(after)
        if not 0 <= t < self.t_end:
            raise ParameterError(f"after = {t!r} is outside the run [0, {self.t_end:g})")
        return int(np.searchsorted(self.time, t))

    # ------------------------------------------------------------------ export
    def to_xarray(self) -> xr.Dataset:
        """The traces as an :class:`xarray.Dataset`.

        Dimensions ``time``, ``link``, ``flow`` (long-lived flows) and ``short_flow``.
        Variables: ``queue``, ``drops``, ``marks`` (cumulative), ``throughput`` (packets/s),
        ``aqm_state`` per link; ``cwnd``, ``rtt``, ``sender_rate``, ``rate`` (goodput,
        packets/s), ``received`` per flow; ``start``, ``size``, ``completion_time`` per short
        flow. The scenario's description, the seed and the cost are in ``attrs``.
        """
        import xarray as xr

        ds = xr.Dataset(
            {
                "queue": (("time", "link"), self.queue),
                "drops": (("time", "link"), self.drops),
                "marks": (("time", "link"), self.marks),
                "throughput": (("time", "link"), self.throughput()),
                "aqm_state": (("time", "link"), self.aqm_state),
                "cwnd": (("time", "flow"), self.cwnd),
                "rtt": (("time", "flow"), self.rtt),
                "sender_rate": (("time", "flow"), self.sender_rate),
                "rate": (("time", "flow"), self.flow_rate()),
                "received": (("time", "flow"), self.received),
                "flow_group": ("flow", self.flow_group),
                "start": ("short_flow", self.short_start),
                "size": ("short_flow", self.short_size),
                "completion_time": ("short_flow", self.completion_times()),
                "short_group": ("short_flow", self.short_group),
            },
            coords={
                "time": self.time,
                "link": np.arange(self.n_links),
                "flow": np.arange(self.n_flows),
                "short_flow": np.arange(self.short_size.size),
            },
            attrs={
                "scenario": self.scenario.describe(),
                "seed": self.seed,
                "t_end": self.t_end,
                "events": self.events,
                "cpu_time": self.cpu_time,
            },
        )
        ds["queue"].attrs["units"] = "packets"
        ds["throughput"].attrs["units"] = "packets/s"
        ds["cwnd"].attrs["units"] = "packets"
        ds["rtt"].attrs["units"] = "s"
        ds["rate"].attrs["units"] = "packets/s"
        ds["completion_time"].attrs["units"] = "s"
        return ds

    def plot(self, ax: Any = None, *, link: int = 0, **kwargs: Any) -> Any:
        """Queue of ``link``, the windows (mean and range over the flows) or sender rates, and
        the completion times of short flows against their sizes (when there are any).

        Parameters
        ----------
        ax : sequence of matplotlib.axes.Axes, optional
            One axes per panel (1 to 3: the queue, long-lived flows if any, short flows if any);
            a new figure by default.
        link : int, default 0
            The link whose queue is drawn (0-based).
        **kwargs
            Passed to ``ax.plot`` for the queue.

        Returns
        -------
        array of matplotlib Axes

        Raises
        ------
        ParameterError
            When the number of axes given is not the number of panels.
        """
        import matplotlib.pyplot as plt

        panels = 1 + (self.n_flows > 0) + (self.short_size.size > 0)
        if ax is None:
            _, ax = plt.subplots(panels, 1, figsize=(6.4, 1.2 + 2.0 * panels), squeeze=False)
            ax = ax[:, 0]
        axes = np.atleast_1d(ax)
        if axes.size != panels:
            raise ParameterError(f"{axes.size} axes given for {panels} panels")
        a = axes[0]
        a.plot(self.time, self.queue[:, link], lw=0.8, **kwargs)
        a.set_ylabel(f"queue, link {link} (pkts)")
        a.set_xlabel("t (s)")
        a.set_title(f"{type(self.scenario).__name__}, seed {self.seed}")
        k = 1
        if self.n_flows:
            a = axes[k]
            k += 1
            rcp = bool(np.all(self.flow_kind == "rcp"))
            series = self.sender_rate if rcp else self.cwnd
            mean = np.nanmean(series, axis=1)
            a.fill_between(
                self.time, np.nanmin(series, axis=1), np.nanmax(series, axis=1), alpha=0.25, lw=0
            )
            a.plot(self.time, mean, lw=0.8)
            a.set_ylabel("rate (pkts/s)" if rcp else "window (pkts)")
            a.set_xlabel("t (s)")
        if self.short_size.size:
            a = axes[k]
            a.loglog(self.short_size, self.completion_times(), ".", ms=2)
            a.set_xlabel("flow size (pkts)")
            a.set_ylabel("completion time (s)")
        return axes

    def __repr__(self) -> str:
        return (
            f"PacketRun({type(self.scenario).__name__}, t_end={self.t_end:g}, seed={self.seed}, "
            f"links={self.n_links}, flows={self.n_flows}, short_flows={self.short_size.size}, "
            f"events={self.events})"
        )
