"""Packet-level scenarios: links, flow groups and topologies, validated before ns-3 sees them.

A scenario is plain data (frozen dataclasses), so it can be pickled to a worker, described in a
checkpoint store and changed field by field (:meth:`Scenario.with_values`). Two topologies:

* :class:`Dumbbell`: flow groups sharing one bottleneck :class:`Link`, each group with its own
  round-trip propagation delay;
* :class:`ParkingLot`: a chain of bottleneck links, flow group ``n`` using the links ``l`` with
  ``routing[l, n] = 1`` -- the routing matrix of :mod:`fluidnet.models`' networks
  (:func:`fluidnet.models.network.routing_matrix`); in a chain a route is a run of consecutive
  links.

Flow groups are :class:`Flows` (long-lived, traced: window, RTT, rate) and :class:`ShortFlows`
(Poisson arrivals, Pareto sizes, their completion times recorded).

Units: rates of links in bit/s on the wire, delays and times in seconds, buffers and flow sizes
in packets of ``packet_size`` bytes (the IP packet; a point-to-point link adds 2 bytes of
framing, so a link of rate ``r`` serves ``r / (8 (packet_size + 2))`` packets per second --
:meth:`Link.from_packets` and :meth:`Link.capacity` convert).
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import ModelError, OptionError, ParameterError
from ..options import index_option
from .aqm import AQM, as_aqm
from .transport import Transport, as_transport

__all__ = [
    "Link",
    "Flows",
    "ShortFlows",
    "Scenario",
    "Dumbbell",
    "ParkingLot",
    "FRAMING_BYTES",
    "MAX_FLOWS",
]

#: Bytes a point-to-point link adds to every IP packet (PPP header).
FRAMING_BYTES = 2
#: Access links run this many times faster than the fastest bottleneck (default).
ACCESS_SPEEDUP = 10.0
#: Most flows a group may start in one run (long-lived flows, or short flows' arrivals).
MAX_FLOWS = 50_000


def _positive(where: str, value: Any, *, strict: bool = True) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ParameterError(f"{where} = {value!r} must be a number") from None
    if isinstance(value, bool) or not math.isfinite(v) or v < 0 or (strict and v == 0):
        rel = "> 0" if strict else ">= 0"
        raise ParameterError(f"{where} = {value!r} must be a finite number {rel}")
    return v


def _count(where: str, value: Any, *, low: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer, float, np.floating)):
        raise ParameterError(f"{where} = {value!r} must be a whole number >= {low}")
    if not float(value).is_integer() or value < low:
        raise ParameterError(f"{where} = {value!r} must be a whole number >= {low}")
    return int(value)


@dataclass(frozen=True)
class Link:
    """A bottleneck link: rate, propagation delay, buffer and AQM (on its forward direction).

    Parameters
    ----------
    rate : float
        Bit/s on the wire (> 0).
    delay : float
        One-way propagation delay (s, >= 0).
    buffer : int
        Packets the queue holds (>= 1).
    aqm : AQM or str
        :class:`~fluidnet.packet.DropTail` (default), :class:`~fluidnet.packet.RED`, ... or its
        name.
    """

    rate: float
    delay: float = 0.0
    buffer: int = 1000
    aqm: AQM = field(default="droptail")  # type: ignore[assignment]

    def __post_init__(self):
        object.__setattr__(self, "rate", _positive("Link.rate (bit/s)", self.rate))
        object.__setattr__(self, "delay", _positive("Link.delay (s)", self.delay, strict=False))
        object.__setattr__(self, "buffer", _count("Link.buffer (packets)", self.buffer))
        object.__setattr__(self, "aqm", as_aqm(self.aqm, "Link.aqm"))

    @classmethod
    def from_packets(cls, capacity: float, packet_size: int = 1000, **kwargs: Any) -> Link:
        """A link serving ``capacity`` packets/s of ``packet_size`` bytes (framing included).

        Examples
        --------
        >>> from fluidnet.packet import Link
        >>> Link.from_packets(3750, 1000).rate        # MGT/RED's C = 3750 pkts/s
        30060000.0
        """
        cap = _positive("capacity (packets/s)", capacity)
        size = _count("packet_size (bytes)", packet_size, low=64)
        return cls(rate=cap * 8.0 * (size + FRAMING_BYTES), **kwargs)

    def capacity(self, packet_size: int = 1000) -> float:
        """Packets of ``packet_size`` bytes served per second.

        Parameters
        ----------
        packet_size : int, default 1000
            IP packet size in bytes; the 2-byte framing of every packet is added.

        Returns
        -------
        float
            ``rate / (8 (packet_size + 2))`` packets/s.
        """
        return self.rate / (8.0 * (packet_size + FRAMING_BYTES))


def _start(where: str, value: Any) -> tuple[float, float]:
    if isinstance(value, (tuple, list)):
        if len(value) != 2:
            raise ParameterError(f"{where} = {value!r}: give a time or a range (lo, hi)")
        lo = _positive(where + "[0]", value[0], strict=False)
        hi = _positive(where + "[1]", value[1], strict=False)
        if hi < lo:
            raise ParameterError(f"{where} = {value!r}: the range must have lo <= hi")
        return lo, hi
    t = _positive(where, value, strict=False)
    return t, t


@dataclass(frozen=True)
class Flows:
    """``n`` long-lived flows with one transport and one round-trip propagation delay.

    Parameters
    ----------
    n : int
        Number of flows (>= 1).
    rtt : float
        Round-trip propagation delay (s): the access links make up what the route's links do
        not (it must be at least twice the route's one-way delay).
    transport : Transport or str
        ``"newreno"`` (default), ``"cubic"``, ``"dctcp"``, ``"vegas"``, ``"bbr"``, ``"sbrm"``,
        ``"rcp"``, or a :class:`~fluidnet.packet.Transport` with options.
    start : float or (lo, hi)
        Start time of every flow (s), or a range from which each flow's start is drawn
        uniformly with the run's seed.
    loss : float
        Probability that a data packet of the group is lost at random (not by congestion) on
        the access link into its sink, independently of the others; in ``[0, 1)``.
    assured_rate : float
        The Assured Service profile of every flow (bit/s of IP packets; 0: none): a token
        bucket of this rate and ``bucket`` packets at the source tags the packets within it
        *in*, the others *out* (what :class:`~fluidnet.packet.ORED` marks).
    bucket : float
        Depth of that token bucket (packets; Misra, Baras & Ott: 20).
    stop : float, optional
        Time (s) at which every flow of the group stops sending (default: the end of the run).
    """

    n: int = 1
    rtt: float = 0.1
    transport: Transport = field(default="newreno")  # type: ignore[assignment]
    start: Any = 0.0
    loss: float = 0.0
    assured_rate: float = 0.0
    bucket: float = 20.0
    stop: float | None = None

    if TYPE_CHECKING:  # the constructor takes a transport's name too (made a Transport below)

        def __init__(
            self,
            n: int = 1,
            rtt: float = 0.1,
            transport: Transport | str = "newreno",
            start: float | tuple[float, float] = 0.0,
            loss: float = 0.0,
            assured_rate: float = 0.0,
            bucket: float = 20.0,
            stop: float | None = None,
        ) -> None: ...

    def __post_init__(self):
        object.__setattr__(self, "n", _count("Flows.n", self.n))
        if self.n > MAX_FLOWS:  # refused before any array of n entries is made
            raise ParameterError(
                f"Flows.n = {self.n!r}: a group runs at most {MAX_FLOWS} flows in ns-3; use "
                "fewer flows (a fluid model scales N without packets)"
            )
        object.__setattr__(self, "rtt", _positive("Flows.rtt (s)", self.rtt))
        object.__setattr__(self, "transport", as_transport(self.transport, "Flows.transport"))
        object.__setattr__(self, "start", _start("Flows.start (s)", self.start))
        loss = _positive("Flows.loss", self.loss, strict=False)
        if loss >= 1:
            raise ParameterError(f"Flows.loss = {self.loss!r} must be < 1 (a probability)")
        object.__setattr__(self, "loss", loss)
        object.__setattr__(
            self,
            "assured_rate",
            _positive("Flows.assured_rate (bit/s)", self.assured_rate, strict=False),
        )
        object.__setattr__(self, "bucket", _positive("Flows.bucket (packets)", self.bucket))
        if self.stop is not None:
            stop = _positive("Flows.stop (s)", self.stop)
            if stop <= self.start[1]:
                raise ParameterError(
                    f"Flows.stop = {stop!r} must be after the flows' start {self.start!r}"
                )
            object.__setattr__(self, "stop", stop)

    def starts(self, rng: np.random.Generator) -> np.ndarray:
        """Start time of every flow of the group (s).

        Parameters
        ----------
        rng : numpy.random.Generator
            Draws the starts when ``start`` is a range (uniformly in it); not used for a single
            start time.

        Returns
        -------
        numpy.ndarray
            ``n`` start times.
        """
        lo, hi = self.start
        return np.full(self.n, lo) if hi == lo else rng.uniform(lo, hi, self.n)


@dataclass(frozen=True)
class ShortFlows:
    """Flows arriving as a Poisson process, with Pareto sizes, until ``stop``.

    Give either ``arrival_rate`` (flows/s) or ``load`` (the offered load on the first link of
    the route, ``arrival_rate * mean_size / capacity``).

    Parameters
    ----------
    mean_size : float
        Mean flow size of the continuous Pareto law (packets); sizes are rounded up to whole
        packets, which adds about half a packet to the mean.
    shape : float
        Pareto shape (> 1; the RCP paper uses 1.2).
    arrival_rate, load : float
        Exactly one of the two.
    rtt : float
        Round-trip propagation delay (s).
    transport : Transport or str
    start, stop : float
        Arrivals in ``[start, stop)`` (``stop`` default: the end of the run).
    max_size : float, optional
        Sizes above it are cut to it (packets): a truncated Pareto law, whose mean is then
        below ``mean_size`` (Kunniyur & Srikant's short flows: mean 10, truncated at 20).
    """

    mean_size: float = 25.0
    shape: float = 1.2
    arrival_rate: float | None = None
    load: float | None = None
    rtt: float = 0.1
    transport: Transport = field(default="newreno")  # type: ignore[assignment]
    start: float = 0.0
    stop: float | None = None
    max_size: float | None = None

    if TYPE_CHECKING:  # the constructor takes a transport's name too (made a Transport below)

        def __init__(
            self,
            mean_size: float = 25.0,
            shape: float = 1.2,
            arrival_rate: float | None = None,
            load: float | None = None,
            rtt: float = 0.1,
            transport: Transport | str = "newreno",
            start: float = 0.0,
            stop: float | None = None,
            max_size: float | None = None,
        ) -> None: ...

    def __post_init__(self):
        object.__setattr__(self, "mean_size", _positive("ShortFlows.mean_size", self.mean_size))
        shape = _positive("ShortFlows.shape", self.shape)
        if shape <= 1:
            raise ParameterError(f"ShortFlows.shape = {shape!r} must exceed 1 (a finite mean)")
        object.__setattr__(self, "shape", shape)
        if (self.arrival_rate is None) == (self.load is None):
            raise ParameterError("ShortFlows needs exactly one of arrival_rate= and load=")
        if self.arrival_rate is not None:
            object.__setattr__(
                self, "arrival_rate", _positive("ShortFlows.arrival_rate", self.arrival_rate)
            )
        else:
            load = _positive("ShortFlows.load", self.load)
            if load >= 1:
                raise ParameterError(f"ShortFlows.load = {load!r} must be < 1")
            object.__setattr__(self, "load", load)
        object.__setattr__(self, "rtt", _positive("ShortFlows.rtt (s)", self.rtt))
        object.__setattr__(self, "transport", as_transport(self.transport, "ShortFlows.transport"))
        object.__setattr__(self, "start", _positive("ShortFlows.start", self.start, strict=False))
        if self.stop is not None:
            stop = _positive("ShortFlows.stop", self.stop)
            if stop <= self.start:
                raise ParameterError(f"ShortFlows.stop = {stop!r} must exceed start")
            object.__setattr__(self, "stop", stop)
        if self.max_size is not None:
            object.__setattr__(
                self, "max_size", float(_count("ShortFlows.max_size", self.max_size))
            )

    def rate(self, capacity: float) -> float:
        """Arrivals per second (from ``load`` and the first link's capacity in packets/s).

        Parameters
        ----------
        capacity : float
            Capacity of the first link of the route in packets/s; used only when the flows are
            given by ``load`` (``arrival_rate = load * capacity / mean_size``).

        Returns
        -------
        float
            Flow arrivals per second.
        """
        if self.arrival_rate is not None:
            return self.arrival_rate
        assert self.load is not None  # __post_init__ requires exactly one of the two
        return self.load * capacity / self.mean_size

    def draw(
        self, rng: np.random.Generator, capacity: float, t_end: float
    ) -> tuple[np.ndarray, np.ndarray]:
        """Arrival times and sizes (whole packets) of one run.

        Arrivals are Poisson at :meth:`rate` from ``start`` until ``stop`` or ``t_end``, whichever
        comes first; sizes are Pareto draws rounded up to whole packets (at most ``max_size``,
        and ``2**31``).

        Parameters
        ----------
        rng : numpy.random.Generator
            Source of the random draws.
        capacity : float
            Capacity of the first link of the route in packets/s (see :meth:`rate`).
        t_end : float
            End of the run (s).

        Returns
        -------
        times : numpy.ndarray
            Arrival times (s), increasing.
        sizes : numpy.ndarray
            Flow sizes in packets, one per arrival.
        """
        from ..models.flow_level import pareto_scale

        stop = min(self.stop if self.stop is not None else t_end, t_end)
        lam = self.rate(capacity)
        times = []
        t = self.start
        while True:
            t += rng.exponential(1.0 / lam)
            if t >= stop:
                break
            times.append(t)
            if len(times) > MAX_FLOWS:  # stopped here: the list never grows past the bound
                raise ParameterError(
                    f"ShortFlows: more than {MAX_FLOWS} flows arrive in [{self.start:g}, "
                    f"{stop:g}) s at {lam:.6g} flows/s (about {lam * (stop - self.start):.3g} "
                    "expected): lower the arrival rate or load, or the run's length"
                )
        scale = pareto_scale(self.mean_size, self.shape)
        u = 1.0 - rng.random(len(times))  # in (0, 1]
        sizes = np.ceil(scale * u ** (-1.0 / self.shape))
        top = 2.0**31 if self.max_size is None else self.max_size
        return np.asarray(times, dtype=float), np.minimum(sizes, top)


_PATH = re.compile(r"([A-Za-z_]\w*)(?:\[(\d+)\])?$")


@dataclass(frozen=True)
class Scenario:
    """Base of the topologies: options shared by every scenario.

    Parameters
    ----------
    packet_size : int
        IP packet size of data packets (bytes); TCP's segment carries ``packet_size - 52``
        bytes (IP and TCP headers with the timestamp option).
    ack_every : int
        A receiver acknowledges every ``ack_every``-th segment (ns-3's DelAckCount; ns-3's
        default is 2, the fluid window laws assume 1).
    min_rto : float
        Smallest retransmission timeout (s; ns-3's default and RFC 6298's 1 s). A smaller one
        (Linux's 0.2 s) fires spurious timeouts in ns-3, which has no spurious-timeout
        detection, whenever the queueing delay grows faster than the RTT estimate (measured:
        60 NewReno flows over MGT/RED's default link with 0.2 s collapse into repeated
        timeouts, 71 % utilisation); the fluid models have no timeouts.
    initial_window : int
        TCP's initial window (segments).
    access_rate : float, optional
        Bit/s of the access links (default: 10 times the fastest bottleneck).
    notes : tuple of str
        Modelling assumptions, for people reading the scenario (``scenario_for`` fills them).
    fluid : tuple
        The fluid model the scenario was mapped from, as ``scenario_for`` records it:
        ``(model name, ((parameter, value), ...))`` with every parameter's value; empty for a
        scenario built by hand. :func:`fluidnet.compare` checks it against the fluid side.
    """

    packet_size: int = 1000
    ack_every: int = 1
    min_rto: float = 1.0
    initial_window: int = 10
    access_rate: float | None = None
    notes: tuple = ()
    fluid: tuple = ()

    def _check_common(self) -> None:
        object.__setattr__(
            self, "packet_size", _count("Scenario.packet_size (bytes)", self.packet_size, low=100)
        )
        object.__setattr__(self, "ack_every", _count("Scenario.ack_every", self.ack_every))
        object.__setattr__(self, "min_rto", _positive("Scenario.min_rto (s)", self.min_rto))
        object.__setattr__(
            self, "initial_window", _count("Scenario.initial_window", self.initial_window)
        )
        if self.access_rate is not None:
            object.__setattr__(
                self, "access_rate", _positive("Scenario.access_rate", self.access_rate)
            )
        object.__setattr__(self, "notes", tuple(str(n) for n in self.notes))
        if self.fluid:
            try:
                name, values = self.fluid
                fluid = (str(name), tuple((str(k), float(v)) for k, v in values))
            except (TypeError, ValueError):
                raise ParameterError(
                    f"Scenario.fluid = {self.fluid!r}: give (model name, ((parameter, value), "
                    "...)), as scenario_for records it, or leave it empty"
                ) from None
            object.__setattr__(self, "fluid", fluid)

    def fluid_model(self) -> tuple[str, dict[str, float]] | None:
        """The fluid model the scenario was mapped from: ``(name, {parameter: value})``, or
        ``None`` for a scenario built by hand.

        Returns
        -------
        tuple of (str, dict) or None
        """
        if not self.fluid:
            return None
        name, values = self.fluid
        return name, dict(values)

    # -- what subclasses provide
    @property
    def link_list(self) -> tuple[Link, ...]:
        raise NotImplementedError

    @property
    def groups(self) -> tuple[Flows | ShortFlows, ...]:
        raise NotImplementedError

    def routes(self) -> list[tuple[int, int]]:
        """``(first, last)`` link of every flow group."""
        raise NotImplementedError

    # -- shared
    def _check_groups(self, groups: Sequence[Any], where: str) -> tuple:
        out = tuple(groups)
        if not out:
            raise ParameterError(f"{where} is empty: a scenario needs at least one flow group")
        for i, g in enumerate(out):
            if not isinstance(g, (Flows, ShortFlows)):
                raise ParameterError(
                    f"{where}[{i}] = {g!r} is not a flow group (fn.packet.Flows or ShortFlows)"
                )
        return out

    def _check_paths(self) -> None:
        links = self.link_list
        for i, (g, (first, last)) in enumerate(zip(self.groups, self.routes(), strict=True)):
            one_way = sum(links[k].delay for k in range(first, last + 1))
            if g.rtt < 2 * one_way:
                raise ParameterError(
                    f"flows[{i}].rtt = {g.rtt!r} s is shorter than twice the one-way delay of "
                    f"its route ({2 * one_way!r} s)"
                )
            on_rcp = [links[k].aqm.name == "rcp" for k in range(first, last + 1)]
            if g.transport.is_rcp and not all(on_rcp):
                raise ParameterError(
                    f"flows[{i}] uses transport 'rcp' over a link without the RCP router "
                    "(give those links aqm=fn.packet.RCP(...))"
                )
            if any(on_rcp) and not g.transport.is_rcp:
                raise ParameterError(
                    f"flows[{i}] ({g.transport.name}) crosses an RCP router: only "
                    "transport='rcp' flows understand its rate field"
                )
            on_xcp = [links[k].aqm.name == "xcp" for k in range(first, last + 1)]
            if g.transport.is_xcp and not all(on_xcp):
                raise ParameterError(
                    f"flows[{i}] uses transport 'xcp' over a link without the XCP router "
                    "(give those links aqm=fn.packet.XCP(...)): its window would never grow"
                )
            if links[first].aqm.marks and not g.transport.ecn:
                raise ParameterError(
                    f"flows[{i}] ({g.transport.name}) crosses a marking-only AQM "
                    f"({links[first].aqm.name}) without ECN"
                )

    def with_values(self, values: Mapping[str, Any] | None = None, **kwargs: Any) -> Scenario:
        """A copy with fields changed, addressed by paths: ``{"link.buffer": 400,
        "flows[0].n": 20, "link.aqm.p_max": 0.05}`` (keywords change top-level fields).

        Parameters
        ----------
        values : dict, optional
            ``{path: value}``; a path is dotted field names, with ``[i]`` to pick an element of a
            list field (``"flows[0].n"``).
        **kwargs
            ``field=value`` for top-level fields (a name may not be given in both).

        Returns
        -------
        Scenario
            Of the same class, every changed object validated again.

        Raises
        ------
        ParameterError
            For a path that names no field, or a value the field refuses.
        OptionError
            For a field given both in ``values`` and as a keyword.
        """
        both = sorted(set(values or {}) & set(kwargs))
        if both:
            raise OptionError(f"with_values: {both} given both in values and as keywords")
        out: Any = self
        for path, value in {**(values or {}), **kwargs}.items():
            out = _set_path(out, str(path).split("."), value, str(path))
        return out

    def capacity(self, link: int = 0) -> float:
        """Packets/s served by bottleneck ``link``.

        Parameters
        ----------
        link : int, default 0
            Index of the bottleneck link (0-based, in route order).

        Returns
        -------
        float
            Packets of ``packet_size`` bytes per second.
        """
        i = index_option("link", link, len(self.link_list), where="Scenario.capacity")
        return self.link_list[i].capacity(self.packet_size)

    def describe(self) -> str:
        lines = [f"{type(self).__name__}: {len(self.link_list)} bottleneck link(s)"]
        for i, link in enumerate(self.link_list):
            lines.append(
                f"  link {i}: {link.rate / 1e6:g} Mb/s ({link.capacity(self.packet_size):.6g} "
                f"pkts/s), delay {link.delay:g} s, buffer {link.buffer} pkts, "
                f"{link.aqm.describe()}"
            )
        for i, (g, (first, last)) in enumerate(zip(self.groups, self.routes(), strict=True)):
            route = f"links {first}..{last}" if last > first else f"link {first}"
            if isinstance(g, Flows):
                what = f"{g.n} long-lived {g.transport.name} flow(s), start {g.start}"
                if g.transport.options or g.transport.ecn:
                    opts = ", ".join(f"{k}={v:g}" for k, v in g.transport.options.items())
                    what += f" ({opts}{', ' if opts else ''}ecn={g.transport.ecn})"
                if g.loss:
                    what += f", random loss {g.loss:g}"
                if g.assured_rate:
                    what += f", assured {g.assured_rate / 1e6:g} Mb/s (bucket {g.bucket:g} pkts)"
                if g.stop is not None:
                    what += f", stop {g.stop:g} s"
            else:
                what = (
                    f"short {g.transport.name} flows, "
                    f"Pareto(mean {g.mean_size:g}, shape {g.shape:g})"
                )
            lines.append(f"  flows[{i}]: {what}, rtt {g.rtt:g} s, over {route}")
        lines.append(
            f"  packets {self.packet_size} B, one ACK per {self.ack_every} segment(s), "
            f"min RTO {self.min_rto:g} s, initial window {self.initial_window}"
        )
        if self.fluid:
            name, values = self.fluid
            shown = ", ".join(f"{k}={v:g}" for k, v in values)
            lines.append(f"  mapped from the fluid model {name}: {shown}")
        lines += [f"  note: {n}" for n in self.notes]
        return "\n".join(lines)

    def plan(self, t_end: float, seed: int) -> dict:
        """Everything the ns-3 worker needs, as plain data (random draws made here, from
        ``seed``): links with their queue discs, flow groups with their start times and sizes.

        Parameters
        ----------
        t_end : float
            Length of the run (s), > 0.
        seed : int
            Seed of the random starts and short-flow draws; the same seed gives the same plan.

        Returns
        -------
        dict
            Packet size, ACK and RTO settings, access rate, socket buffer, ``ecn_endpoints``,
            ``links`` (rate, delay, queue disc and its attributes) and ``groups`` (transport,
            route, access delay, start times and sizes, random loss, and ``options``: an edge
            meter's rate and depth, a stop time, XCP receivers).

        Raises
        ------
        ParameterError
            For a ``t_end`` that is not a positive number, or a group that would start more than
            50000 flows.
        """
        t_end = _positive("t_end", t_end)
        links = self.link_list
        fastest = max(link.rate for link in links)
        access = self.access_rate if self.access_rate is not None else ACCESS_SPEEDUP * fastest
        rng = np.random.default_rng([int(seed), 20261128])
        plan_links = []
        for link in links:
            qdisc, attrs = link.aqm.ns3(
                rate=link.rate, delay=link.delay, buffer=link.buffer, packet_size=self.packet_size
            )
            plan_links.append(
                {"rate": link.rate, "delay": link.delay, "qdisc": qdisc, "attrs": attrs}
            )
        plan_groups = []
        longest = 0.0
        for i, (g, (first, last)) in enumerate(zip(self.groups, self.routes(), strict=True)):
            one_way = sum(links[k].delay for k in range(first, last + 1))
            if isinstance(g, Flows):
                starts = g.starts(rng)
                sizes = np.zeros(g.n)
            else:
                try:
                    starts, sizes = g.draw(rng, links[first].capacity(self.packet_size), t_end)
                except ParameterError as exc:
                    raise ParameterError(f"flows[{i}]: {exc}") from None
            congestion, attrs, sink = g.transport.ns3()
            options: dict[str, float] = {}
            if isinstance(g, Flows) and g.assured_rate > 0:
                options.update(profile_rate=g.assured_rate, profile_depth=g.bucket)
            if isinstance(g, Flows) and g.stop is not None:
                options["stop"] = g.stop
            if g.transport.is_xcp:
                options["xcp_sink"] = 1.0
            plan_groups.append(
                {
                    "kind": "rcp" if g.transport.is_rcp else "tcp",
                    "congestion": congestion,
                    "attrs": attrs,
                    "ecn": bool(g.transport.ecn),
                    "sink": sink,
                    "first": first,
                    "last": last,
                    "access_delay": (g.rtt / 2 - one_way) / 2,
                    "starts": [float(x) for x in starts],
                    "sizes": [float(x) for x in sizes],
                    "loss": float(g.loss) if isinstance(g, Flows) else 0.0,
                    "long_lived": isinstance(g, Flows),
                    **({"options": options} if options else {}),
                }
            )
            longest = max(longest, g.rtt)
        bdp = max(link.rate * longest / 8 + link.buffer * self.packet_size for link in links)
        ecn = any(link.aqm.uses_ecn for link in links) or any(g.transport.ecn for g in self.groups)
        return {
            "packet_size": self.packet_size,
            "ack_every": self.ack_every,
            "min_rto": self.min_rto,
            "initial_window": self.initial_window,
            "access_rate": access,
            "socket_buffer": int(min(2**31 - 1, max(2**20, 4 * bdp))),
            "ecn_endpoints": bool(ecn),
            "links": plan_links,
            "groups": plan_groups,
        }


@dataclass(frozen=True)
class Dumbbell(Scenario):
    """Flow groups sharing one bottleneck link (each group its own round-trip delay).

    Parameters
    ----------
    link : Link
        The bottleneck.
    flows : sequence of Flows or ShortFlows
    packet_size, ack_every, min_rto, initial_window, access_rate, notes, fluid
        See :class:`Scenario`.

    Examples
    --------
    >>> import fluidnet as fn
    >>> sc = fn.packet.Dumbbell(
    ...     link=fn.packet.Link.from_packets(3750, buffer=1200,
    ...                                      aqm=fn.packet.RED(min_th=50, max_th=600)),
    ...     flows=[fn.packet.Flows(n=60, rtt=0.2)])
    >>> round(sc.capacity())
    3750
    """

    link: Link = None  # type: ignore[assignment]
    flows: Sequence[Flows | ShortFlows] = ()

    def __post_init__(self):
        self._check_common()
        if not isinstance(self.link, Link):
            raise ParameterError(f"Dumbbell.link = {self.link!r} must be a fn.packet.Link")
        object.__setattr__(self, "flows", self._check_groups(self.flows, "Dumbbell.flows"))
        self._check_paths()

    @property
    def link_list(self) -> tuple[Link, ...]:
        return (self.link,)

    @property
    def groups(self) -> tuple[Flows | ShortFlows, ...]:
        return tuple(self.flows)  # a tuple already (made one in __post_init__)

    def routes(self) -> list[tuple[int, int]]:
        return [(0, 0)] * len(self.flows)


@dataclass(frozen=True)
class ParkingLot(Scenario):
    """A chain of bottleneck links; flow group ``n`` uses the links ``l`` with
    ``routing[l, n] = 1`` (consecutive links of the chain).

    Parameters
    ----------
    links : sequence of Link
        The chain, in order.
    routing : array_like, shape (links, groups)
        0/1 routing matrix, as for :func:`fluidnet.models.sbrm_network`.
    flows : sequence of Flows or ShortFlows
        One per column of ``routing``.
    packet_size, ack_every, min_rto, initial_window, access_rate, notes, fluid
        See :class:`Scenario`.
    """

    links: Sequence[Link] = ()
    routing: Any = None
    flows: Sequence[Flows | ShortFlows] = ()

    def __post_init__(self):
        from ..models.network import routing_matrix

        self._check_common()
        links = tuple(self.links)
        if not links:
            raise ParameterError("ParkingLot.links is empty: give at least one Link")
        for i, link in enumerate(links):
            if not isinstance(link, Link):
                raise ParameterError(f"ParkingLot.links[{i}] = {link!r} must be a fn.packet.Link")
        object.__setattr__(self, "links", links)
        try:
            A = routing_matrix(self.routing)
        except ModelError as exc:
            raise ParameterError(f"ParkingLot.routing: {exc}") from None
        flows = tuple(self.flows)
        if A.shape != (len(links), len(flows)):
            raise ParameterError(
                f"ParkingLot.routing has shape {A.shape}; it needs one row per link and one "
                f"column per flow group: ({len(links)}, {len(flows)})"
            )
        for n in range(A.shape[1]):
            used = np.flatnonzero(A[:, n])
            if np.any(np.diff(used) != 1):
                raise ParameterError(
                    f"ParkingLot.routing column {n} uses links {used.tolist()}: a route in a "
                    "chain must be consecutive links"
                )
        object.__setattr__(self, "routing", tuple(tuple(int(v) for v in row) for row in A))
        object.__setattr__(self, "flows", self._check_groups(flows, "ParkingLot.flows"))
        self._check_paths()

    @property
    def link_list(self) -> tuple[Link, ...]:
        return tuple(self.links)  # a tuple already (made one in __post_init__)

    @property
    def groups(self) -> tuple[Flows | ShortFlows, ...]:
        return tuple(self.flows)  # a tuple already (made one in __post_init__)

    @property
    def routing_matrix(self) -> np.ndarray:
        """The routing matrix as an array (links x groups)."""
        return np.array(self.routing, dtype=int)

    def routes(self) -> list[tuple[int, int]]:
        A = self.routing_matrix
        out = []
        for n in range(A.shape[1]):
            used = np.flatnonzero(A[:, n])
            out.append((int(used[0]), int(used[-1])))
        return out


def _set_path(obj: Any, parts: list[str], value: Any, full: str) -> Any:
    if isinstance(obj, Transport):
        if len(parts) != 1:
            raise ParameterError(f"{full!r} does not name a field of the scenario")
        key = parts[0]
        if key == "name":
            return Transport(value, ecn=obj.ecn, **obj.options)
        if key == "ecn":
            return Transport(obj.name, ecn=value, **obj.options)
        return Transport(obj.name, ecn=obj.ecn, **{**obj.options, key: value})
    m = _PATH.match(parts[0])
    if m is None or not dataclasses.is_dataclass(obj) or isinstance(obj, type):
        raise ParameterError(f"{full!r} does not name a field of the scenario")
    name, index = m.group(1), m.group(2)
    names = {f.name for f in dataclasses.fields(obj)}
    if name not in names:
        raise ParameterError(
            f"{full!r}: {type(obj).__name__} has no field {name!r} "
            f"(fields: {', '.join(sorted(names))})"
        )
    current = getattr(obj, name)
    if index is not None:
        seq = list(current)
        i = int(index)
        if i >= len(seq):
            raise ParameterError(f"{full!r}: {name} has only {len(seq)} entries")
        seq[i] = value if len(parts) == 1 else _set_path(seq[i], parts[1:], value, full)
        new = tuple(seq)
    else:
        new = value if len(parts) == 1 else _set_path(current, parts[1:], value, full)
    if isinstance(new, float) and isinstance(current, int) and float(new).is_integer():
        new = int(new)  # grids hold floats; whole numbers go back into integer fields
    return dataclasses.replace(obj, **{name: new})
