"""Active queue management at a bottleneck link: what ns-3 ships and what fluidnet adds.

``DropTail``
    a FIFO that drops arrivals when the buffer is full (ns-3's ``FifoQueueDisc``)
``RED``
    Random Early Detection (Floyd & Jacobson 1993; ns-3's ``RedQueueDisc``): gentle, adaptive
    (Floyd, Gummadi & Shenker 2001) and ECN variants, and ``RED.step(K)``, DCTCP's marking of every
    packet that finds more than ``K`` packets queued
``PIE``
    Proportional Integral controller Enhanced (RFC 8033; ns-3's ``PieQueueDisc``)
``CoDel``
    Controlled Delay (RFC 8289; ns-3's ``CoDelQueueDisc``)
``PI``
    the PI AQM of Hollot, Misra, Towsley & Gong (INFOCOM 2001), fluidnet's C++ component
    ``fluidnet::PiQueueDisc``
``SBRM``
    Zimmermann's Single Bit Resource Marking (2005, (5.4.1)), ``fluidnet::SbrmQueueDisc``: every
    departing packet is marked with probability ``1 - exp(-gamma [b - b0]^+)``
``RCP``
    the Rate Control Protocol router of Dukkipati & McKeown (2004, eq (2)),
    ``fluidnet::RcpQueueDisc`` (use it with ``transport="rcp"`` flows)
``DropFront``
    a FIFO that drops the packet at its head when an arriving one does not fit (Kunniyur &
    Srikant 2003, Sec VI-A), ``fluidnet::DropFrontQueueDisc``
``AVQ``
    Kunniyur & Srikant's marking level ``C~`` as a virtual queue (2003, Sec V and VI-B), fixed or
    adapted every ``K`` arrivals by the law of Sec V-D, ``fluidnet::AvqQueueDisc``
``ORED``
    RED on out-of-profile packets only (Misra, Baras & Ott 2000, Sec II),
    ``fluidnet::OredQueueDisc``: packets beyond their flow's assured rate
    (``Flows(assured_rate=...)``) are ECN-marked with the RED profile of the average queue,
    packets within it never
``XCP``
    the eXplicit Control Protocol router of Katabi, Handley & Rohrs (2002),
    ``fluidnet::XcpQueueDisc`` (use it with ``transport="xcp"`` flows)

Every AQM is a frozen dataclass validated when built: a value ns-3 cannot run is a
:class:`fluidnet.ParameterError` naming the field. Queue lengths are in packets, times in
seconds, probabilities in [0, 1].
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import Any, ClassVar

from ..errors import ParameterError

__all__ = [
    "AQM",
    "DropTail",
    "RED",
    "PIE",
    "CoDel",
    "PI",
    "SBRM",
    "RCP",
    "DropFront",
    "AVQ",
    "ORED",
    "XCP",
    "as_aqm",
    "AQM_NAMES",
]


def _number(
    owner: str,
    name: str,
    value: Any,
    *,
    low: float = 0.0,
    strict: bool = True,
    high: float | None = None,
) -> float:
    where = f"{owner}.{name}"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        try:
            value = float(value)  # numpy scalars
        except (TypeError, ValueError):
            raise ParameterError(f"{where} = {value!r} must be a number") from None
    value = float(value)
    bad = not math.isfinite(value) or value < low or (strict and value == low)
    if high is not None and value > high:
        bad = True
    if bad:
        rel = ">" if strict else ">="
        bound = f"{rel} {low:g}" + ("" if high is None else f" and <= {high:g}")
        raise ParameterError(f"{where} = {value!r} must be a finite number {bound}")
    return value


def _flag(owner: str, name: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise ParameterError(f"{owner}.{name} = {value!r} must be True or False")
    return value


def _text(x: float) -> str:
    return repr(float(x))


class AQM:
    """Base class: an AQM knows its ns-3 queue disc and attributes for a link."""

    #: Name used in scenario summaries and as ``aqm="..."``.
    name: ClassVar[str] = "aqm"
    #: Whether it marks packets with ECN (then the flows' endpoints are made ECN-capable).
    marks: ClassVar[bool] = False

    @property
    def uses_ecn(self) -> bool:
        return bool(getattr(self, "ecn", self.marks))

    def ns3(self, *, rate: float, delay: float, buffer: int, packet_size: int) -> tuple[str, dict]:
        """The ns-3 queue-disc TypeId and its attributes (as text) on a link.

        Each AQM defines it; the base class raises NotImplementedError.

        Parameters
        ----------
        rate : float
            Link rate in bit/s.
        delay : float
            One-way propagation delay of the link in seconds.
        buffer : int
            Buffer size in packets (the queue disc's ``MaxSize``).
        packet_size : int
            Packet size in bytes (IP packets).

        Returns
        -------
        type_id : str
            The ns-3 TypeId of the queue disc.
        attributes : dict
            ``{attribute name: value as text}``, as ns-3 reads them.
        """
        raise NotImplementedError

    def describe(self) -> str:
        vals = ", ".join(f"{f.name}={getattr(self, f.name)!r}" for f in fields(self))  # type: ignore[arg-type]
        return f"{type(self).__name__}({vals})"


@dataclass(frozen=True)
class DropTail(AQM):
    """A FIFO that drops arrivals when the buffer is full."""

    name: ClassVar[str] = "droptail"

    def ns3(self, *, rate: float, delay: float, buffer: int, packet_size: int) -> tuple[str, dict]:
        """``ns3::FifoQueueDisc`` holding ``buffer`` packets (the link's other values are not
        used).

        Parameters
        ----------
        rate : float
            Link rate in bit/s.
        delay : float
            One-way propagation delay of the link in seconds.
        buffer : int
            Buffer size in packets (the queue disc's ``MaxSize``).
        packet_size : int
            Packet size in bytes (IP packets).

        Returns
        -------
        type_id : str
            The ns-3 TypeId of the queue disc.
        attributes : dict
            ``{attribute name: value as text}``, as ns-3 reads them.
        """
        return "ns3::FifoQueueDisc", {"MaxSize": f"{buffer}p"}


@dataclass(frozen=True)
class RED(AQM):
    """Random Early Detection on the EWMA of the queue (ns-3's ``RedQueueDisc``).

    Parameters
    ----------
    min_th, max_th : float
        Thresholds on the average queue (packets): no early drop below ``min_th``, the
        probability rises linearly to ``p_max`` at ``max_th``.
    p_max : float
        Drop (or mark) probability at ``max_th``, in (0, 1].
    weight : float
        EWMA weight per arriving packet, in (0, 1] (1: the instantaneous queue).
    gentle : bool
        Above ``max_th`` the probability rises linearly to 1 at ``2 max_th`` (Floyd's gentle
        RED) instead of jumping to 1.
    adaptive : bool
        Adapt ``p_max`` every ``adapt_interval`` to keep the average queue between
        ``min_th + 0.4 (max_th - min_th)`` and ``min_th + 0.6 (max_th - min_th)`` (Floyd,
        Gummadi & Shenker's adaptive RED, with ns-3's AdaptMaxP: ``top``, ``bottom``,
        ``adapt_alpha``, ``adapt_beta``); the thresholds stay as given.
    ecn : bool
        Mark ECN-capable packets instead of dropping them.
    wait : bool
        RED's spacing of drops (the count since the last drop raises the probability, Floyd &
        Jacobson's uniformization; ns-3's default). The fluid models' marking probability is
        the profile itself: see :func:`fluidnet.packet.scenario_for` for what this means.
    hard_drop : bool
        Drop (not mark) above ``max_th`` when not gentle (ns-3's UseHardDrop).
    top, bottom : float
        With ``adaptive``: the bounds kept on ``p_max``.
    adapt_alpha : float
        With ``adaptive``: the increment of ``p_max`` when the average queue is too high.
    adapt_beta : float
        With ``adaptive``: the factor on ``p_max`` when the average queue is too low.
    adapt_interval : float
        With ``adaptive``: seconds between adaptations.
    """

    min_th: float = 5.0
    max_th: float = 15.0
    p_max: float = 0.1
    weight: float = 0.002
    gentle: bool = False
    adaptive: bool = False
    ecn: bool = False
    wait: bool = True
    hard_drop: bool = True
    top: float = 0.5
    bottom: float = 0.01
    adapt_alpha: float = 0.01
    adapt_beta: float = 0.9
    adapt_interval: float = 0.5

    name: ClassVar[str] = "red"

    def __post_init__(self):
        o = "RED"
        _number(o, "min_th", self.min_th, strict=False)
        _number(o, "max_th", self.max_th)
        if self.max_th <= self.min_th:
            raise ParameterError(
                f"RED.max_th = {self.max_th!r} must exceed RED.min_th = {self.min_th!r}"
            )
        _number(o, "p_max", self.p_max, high=1.0)
        _number(o, "weight", self.weight, high=1.0)
        for f in ("gentle", "adaptive", "ecn", "wait", "hard_drop"):
            _flag(o, f, getattr(self, f))
        _number(o, "top", self.top, high=1.0)
        _number(o, "bottom", self.bottom, strict=False, high=1.0)
        _number(o, "adapt_alpha", self.adapt_alpha, high=1.0)
        _number(o, "adapt_beta", self.adapt_beta, high=1.0)
        _number(o, "adapt_interval", self.adapt_interval)

    @classmethod
    def step(cls, K: float, *, ecn: bool = True) -> RED:
        """DCTCP's switch marking: every packet that arrives to more than ``K`` packets.

        RED on the instantaneous queue (``weight = 1``) with ``min_th = K``,
        ``max_th = K + 1`` and ``p_max = 1``: the queue in packets is a whole number, so the
        probability is 0 up to ``K`` and 1 above (Alizadeh et al. 2010, Sec 3.1).
        """
        K = _number("RED.step", "K", K, strict=False)
        return cls(
            min_th=K, max_th=K + 1.0, p_max=1.0, weight=1.0, ecn=ecn, wait=False, hard_drop=False
        )

    def ns3(self, *, rate: float, delay: float, buffer: int, packet_size: int) -> tuple[str, dict]:
        """``ns3::RedQueueDisc`` with this RED's thresholds, weight and flags; the link rate,
        delay and packet size set ``LinkBandwidth``, ``LinkDelay`` and ``MeanPktSize``.

        Parameters
        ----------
        rate : float
            Link rate in bit/s.
        delay : float
            One-way propagation delay of the link in seconds.
        buffer : int
            Buffer size in packets (the queue disc's ``MaxSize``).
        packet_size : int
            Packet size in bytes (IP packets).

        Returns
        -------
        type_id : str
            The ns-3 TypeId of the queue disc.
        attributes : dict
            ``{attribute name: value as text}``, as ns-3 reads them.
        """
        attrs = {
            "MaxSize": f"{buffer}p",
            "MinTh": _text(self.min_th),
            "MaxTh": _text(self.max_th),
            "LInterm": _text(1.0 / self.p_max),
            "QW": _text(self.weight),
            "Gentle": str(self.gentle).lower(),
            "Wait": str(self.wait).lower(),
            "UseEcn": str(self.ecn).lower(),
            "UseHardDrop": str(self.hard_drop).lower(),
            "MeanPktSize": str(int(packet_size)),
            "LinkBandwidth": f"{int(round(rate))}bps",
            "LinkDelay": f"{delay!r}s",
        }
        if self.adaptive:
            attrs.update(
                AdaptMaxP="true",
                Top=_text(self.top),
                Bottom=_text(self.bottom),
                Alpha=_text(self.adapt_alpha),
                Beta=_text(self.adapt_beta),
                Interval=f"{self.adapt_interval!r}s",
            )
        return "ns3::RedQueueDisc", attrs


@dataclass(frozen=True)
class PIE(AQM):
    """PIE (RFC 8033, ns-3's ``PieQueueDisc``): a PI controller on the queueing delay.

    Parameters
    ----------
    target : float
        Reference queueing delay (s).
    t_update : float
        Update interval of the drop probability (s).
    a, b : float
        Gains on the delay error and on its change (1/s).
    ecn : bool
        Mark ECN-capable packets (while the probability is below 10 %) instead of dropping.
    """

    target: float = 0.015
    t_update: float = 0.015
    a: float = 0.125
    b: float = 1.25
    ecn: bool = False

    name: ClassVar[str] = "pie"

    def __post_init__(self):
        for f in ("target", "t_update", "a", "b"):
            _number("PIE", f, getattr(self, f))
        _flag("PIE", "ecn", self.ecn)

    def ns3(self, *, rate: float, delay: float, buffer: int, packet_size: int) -> tuple[str, dict]:
        """``ns3::PieQueueDisc`` with this PIE's target delay, update interval and gains
        (``rate`` and ``delay`` are not used).

        Parameters
        ----------
        rate : float
            Link rate in bit/s.
        delay : float
            One-way propagation delay of the link in seconds.
        buffer : int
            Buffer size in packets (the queue disc's ``MaxSize``).
        packet_size : int
            Packet size in bytes (IP packets).

        Returns
        -------
        type_id : str
            The ns-3 TypeId of the queue disc.
        attributes : dict
            ``{attribute name: value as text}``, as ns-3 reads them.
        """
        return "ns3::PieQueueDisc", {
            "MaxSize": f"{buffer}p",
            "QueueDelayReference": f"{self.target!r}s",
            "Tupdate": f"{self.t_update!r}s",
            "A": _text(self.a),
            "B": _text(self.b),
            "UseEcn": str(self.ecn).lower(),
            "MeanPktSize": str(int(packet_size)),
        }


@dataclass(frozen=True)
class CoDel(AQM):
    """CoDel (RFC 8289, ns-3's ``CoDelQueueDisc``): drops when the sojourn time stays above
    ``target`` for an ``interval``.

    Parameters
    ----------
    target : float
        The acceptable standing sojourn time (s).
    interval : float
        How long the sojourn time must stay above ``target`` before the first drop (s).
    ecn : bool
        Mark ECN-capable packets instead of dropping them.
    """

    target: float = 0.005
    interval: float = 0.1
    ecn: bool = False

    name: ClassVar[str] = "codel"

    def __post_init__(self):
        _number("CoDel", "target", self.target)
        _number("CoDel", "interval", self.interval)
        _flag("CoDel", "ecn", self.ecn)

    def ns3(self, *, rate: float, delay: float, buffer: int, packet_size: int) -> tuple[str, dict]:
        """``ns3::CoDelQueueDisc`` with this CoDel's target and interval (``rate``, ``delay``
        and ``packet_size`` are not used).

        Parameters
        ----------
        rate : float
            Link rate in bit/s.
        delay : float
            One-way propagation delay of the link in seconds.
        buffer : int
            Buffer size in packets (the queue disc's ``MaxSize``).
        packet_size : int
            Packet size in bytes (IP packets).

        Returns
        -------
        type_id : str
            The ns-3 TypeId of the queue disc.
        attributes : dict
            ``{attribute name: value as text}``, as ns-3 reads them.
        """
        return "ns3::CoDelQueueDisc", {
            "MaxSize": f"{buffer}p",
            "Target": f"{self.target!r}s",
            "Interval": f"{self.interval!r}s",
            "UseEcn": str(self.ecn).lower(),
        }


@dataclass(frozen=True)
class PI(AQM):
    """The PI AQM of Hollot et al. (INFOCOM 2001), fluidnet's ``fluidnet::PiQueueDisc``.

    Every ``1/sample_rate`` seconds ``p <- p + a (q - q_ref) - b (q_old - q_ref)`` (``q`` the
    queue in packets, ``p`` clipped to [0, 1]); arrivals are dropped (or marked) with
    probability ``p``. :meth:`from_gains` discretizes the continuous controller
    ``K_pi (s/z + 1)/s`` of :func:`fluidnet.models.hollot_pi`.

    Parameters
    ----------
    q_ref : float
        Reference queue (packets).
    a, b : float
        Coefficients of the discrete law (``a > b`` for a stable zero).
    sample_rate : float
        Updates per second (Hollot et al.'s example: 160 Hz).
    ecn : bool
        Mark ECN-capable packets instead of dropping them.
    """

    q_ref: float = 175.0
    a: float = 1.822e-5
    b: float = 1.816e-5
    sample_rate: float = 160.0
    ecn: bool = False

    name: ClassVar[str] = "pi"

    def __post_init__(self):
        _number("PI", "q_ref", self.q_ref, strict=False)
        _number("PI", "a", self.a)
        _number("PI", "b", self.b, strict=False)
        _number("PI", "sample_rate", self.sample_rate)
        _flag("PI", "ecn", self.ecn)

    @classmethod
    def from_gains(
        cls, K_pi: float, z: float, q_ref: float, *, sample_rate: float = 160.0, ecn: bool = False
    ) -> PI:
        """Backward-difference discretization of ``C(s) = K_pi (s/z + 1)/s`` at ``sample_rate``.

        ``p(k) - p(k-1) = K_pi [(1/z + T) e(k) - e(k-1)/z]`` with ``T = 1/sample_rate``, so
        ``a = K_pi (1/z + T)`` and ``b = K_pi / z``. For Hollot et al.'s design example
        (``K_pi = 9.64e-6``, ``z = 0.53``, 160 Hz) this gives ``a = 1.8249e-5``,
        ``b = 1.8189e-5``; the paper prints ``a = 1.822e-5``, ``b = 1.816e-5``.
        """
        K_pi = _number("PI.from_gains", "K_pi", K_pi)
        z = _number("PI.from_gains", "z", z)
        T = 1.0 / _number("PI.from_gains", "sample_rate", sample_rate)
        return cls(
            q_ref=q_ref, a=K_pi * (1.0 / z + T), b=K_pi / z, sample_rate=sample_rate, ecn=ecn
        )

    def ns3(self, *, rate: float, delay: float, buffer: int, packet_size: int) -> tuple[str, dict]:
        """``fluidnet::PiQueueDisc`` with this PI's reference queue, gains and sampling interval
        (``rate``, ``delay`` and ``packet_size`` are not used).

        Parameters
        ----------
        rate : float
            Link rate in bit/s.
        delay : float
            One-way propagation delay of the link in seconds.
        buffer : int
            Buffer size in packets (the queue disc's ``MaxSize``).
        packet_size : int
            Packet size in bytes (IP packets).

        Returns
        -------
        type_id : str
            The ns-3 TypeId of the queue disc.
        attributes : dict
            ``{attribute name: value as text}``, as ns-3 reads them.
        """
        return "fluidnet::PiQueueDisc", {
            "MaxSize": f"{buffer}p",
            "QueueRef": _text(self.q_ref),
            "A": _text(self.a),
            "B": _text(self.b),
            "Interval": f"{1.0 / self.sample_rate!r}s",
            "UseEcn": str(self.ecn).lower(),
        }


@dataclass(frozen=True)
class SBRM(AQM):
    """Single Bit Resource Marking (Zimmermann 2005, (5.4.1)), ``fluidnet::SbrmQueueDisc``.

    Every departing packet is CE-marked with probability ``1 - exp(-gamma [b - b0]^+)``, ``b``
    the packets queued behind it. Use it with ``transport="sbrm"`` (ECN-capable sources).

    Parameters
    ----------
    gamma : float
        Marking scale (1/packet).
    b0 : float
        Marking threshold (packets).
    """

    gamma: float = 0.006
    b0: float = 50.0

    name: ClassVar[str] = "sbrm"
    marks: ClassVar[bool] = True

    def __post_init__(self):
        _number("SBRM", "gamma", self.gamma)
        _number("SBRM", "b0", self.b0, strict=False)

    def ns3(self, *, rate: float, delay: float, buffer: int, packet_size: int) -> tuple[str, dict]:
        """``fluidnet::SbrmQueueDisc`` with this SBRM's ``gamma`` and ``b0`` (``rate``, ``delay``
        and ``packet_size`` are not used).

        Parameters
        ----------
        rate : float
            Link rate in bit/s.
        delay : float
            One-way propagation delay of the link in seconds.
        buffer : int
            Buffer size in packets (the queue disc's ``MaxSize``).
        packet_size : int
            Packet size in bytes (IP packets).

        Returns
        -------
        type_id : str
            The ns-3 TypeId of the queue disc.
        attributes : dict
            ``{attribute name: value as text}``, as ns-3 reads them.
        """
        return "fluidnet::SbrmQueueDisc", {
            "MaxSize": f"{buffer}p",
            "Gamma": _text(self.gamma),
            "B0": _text(self.b0),
        }


@dataclass(frozen=True)
class RCP(AQM):
    """The RCP router of Dukkipati & McKeown (2004), ``fluidnet::RcpQueueDisc``.

    Every ``T_eff = min(interval, d0)`` the rate becomes
    ``R (1 + (T_eff/d0) (alpha (C - y) - beta q/d0)/C)`` (their eq (2)), ``y`` the input rate
    measured over the interval, ``q`` the queue, ``d0`` the moving average (weight
    ``rtt_gain`` per packet) of the RTTs the senders write into their packets; ``R`` stays in
    ``[min_rate C, C]``. Packets carry ``min(R_p, R)`` on.

    Parameters
    ----------
    alpha, beta : float
        Gains (the paper's packet simulations: 0.1 and 1).
    interval : float
        The update interval ``T`` (s).
    initial_rtt : float
        ``d0`` before any packet has carried an RTT (s).
    rtt_gain : float
        Weight of one packet's RTT in ``d0`` (0.02 in the paper).
    initial_rate : float
        ``R(0)/C`` (their Fig 5 starts from 0.05).
    min_rate : float
        Smallest ``R/C``.
    """

    alpha: float = 0.1
    beta: float = 1.0
    interval: float = 0.01
    initial_rtt: float = 0.1
    rtt_gain: float = 0.02
    initial_rate: float = 0.05
    min_rate: float = 1e-4

    name: ClassVar[str] = "rcp"

    def __post_init__(self):
        _number("RCP", "alpha", self.alpha, strict=False)
        _number("RCP", "beta", self.beta, strict=False)
        _number("RCP", "interval", self.interval)
        _number("RCP", "initial_rtt", self.initial_rtt)
        _number("RCP", "rtt_gain", self.rtt_gain, high=1.0)
        _number("RCP", "initial_rate", self.initial_rate, high=1.0)
        _number("RCP", "min_rate", self.min_rate, high=1.0)

    def ns3(self, *, rate: float, delay: float, buffer: int, packet_size: int) -> tuple[str, dict]:
        """``fluidnet::RcpQueueDisc`` with this router's gains and timers; its capacity is the
        link rate less the 2-byte PPP header of every packet (IP bit/s).

        Parameters
        ----------
        rate : float
            Link rate in bit/s.
        delay : float
            One-way propagation delay of the link in seconds.
        buffer : int
            Buffer size in packets (the queue disc's ``MaxSize``).
        packet_size : int
            Packet size in bytes (IP packets).

        Returns
        -------
        type_id : str
            The ns-3 TypeId of the queue disc.
        attributes : dict
            ``{attribute name: value as text}``, as ns-3 reads them.
        """
        ip_capacity = rate * packet_size / (packet_size + 2)  # bit/s of IP packets (PPP framing)
        return "fluidnet::RcpQueueDisc", {
            "MaxSize": f"{buffer}p",
            "Alpha": _text(self.alpha),
            "Beta": _text(self.beta),
            "Capacity": _text(ip_capacity),
            "UpdateInterval": f"{self.interval!r}s",
            "InitialRtt": f"{self.initial_rtt!r}s",
            "RttGain": _text(self.rtt_gain),
            "InitialRate": _text(self.initial_rate),
            "MinRate": _text(self.min_rate),
        }


@dataclass(frozen=True)
class DropFront(AQM):
    """A FIFO that drops the packet at its head when an arriving packet does not fit,
    ``fluidnet::DropFrontQueueDisc``.

    Kunniyur & Srikant (2003, Sec VI-A) use drop-front queues in all their ns-2 experiments: the
    losses then fall on the flows in proportion to their rates, as the fluid penalty
    ``(u - C)^+/u`` assumes, without the synchronization of drop-tail.
    """

    name: ClassVar[str] = "dropfront"

    def ns3(self, *, rate: float, delay: float, buffer: int, packet_size: int) -> tuple[str, dict]:
        """``fluidnet::DropFrontQueueDisc`` holding ``buffer`` packets (the link's other values
        are not used).

        Parameters
        ----------
        rate : float
            Link rate in bit/s.
        delay : float
            One-way propagation delay of the link in seconds.
        buffer : int
            Buffer size in packets (the queue disc's ``MaxSize``).
        packet_size : int
            Packet size in bytes (IP packets).

        Returns
        -------
        type_id : str
            The ns-3 TypeId of the queue disc.
        attributes : dict
            ``{attribute name: value as text}``, as ns-3 reads them.
        """
        return "fluidnet::DropFrontQueueDisc", {"MaxSize": f"{buffer}p"}


@dataclass(frozen=True)
class AVQ(AQM):
    """Kunniyur & Srikant's marking level as a virtual queue, ``fluidnet::AvqQueueDisc``.

    A virtual queue is served at the marking level ``C~`` and holds ``virtual_buffer`` packets;
    an arriving packet that does not fit in it is ECN-marked and not added to it (Sec VI-B: "a
    virtual queue whose capacity is C~ and marking packets in the real queue when the virtual
    queue exceeds its buffer capacity", without marking on until it empties). The packet itself
    joins the real queue, a drop-front FIFO of the link's buffer. With ``adaptive``, every
    ``update_every`` arrivals ``C~ <- C~ + alpha (gamma C dt - K)``, ``dt`` the time those ``K``
    packets took to arrive, kept in ``[0, gamma C]``: Sec V-D's law with the arrival rate
    measured over ``K`` packets (Sec VI-C). Flows through it must negotiate ECN.

    Parameters
    ----------
    level : float
        ``C~ / C`` at the start (Experiment 2: 0.99).
    virtual_buffer : float, optional
        Packets the virtual queue holds (default: the link's buffer).
    adaptive : bool
        Adapt ``C~`` (Sec V-D) or keep it.
    gamma : float
        Target utilisation, in ``(0, 1]``.
    alpha : float
        Step size of the adaptive law (1/s).
    update_every : int
        Arrivals ``K`` between two updates (Experiment 3: 1000).
    """

    level: float = 0.99
    virtual_buffer: float | None = None
    adaptive: bool = False
    gamma: float = 1.0
    alpha: float = 0.05
    update_every: int = 1000

    name: ClassVar[str] = "avq"
    marks: ClassVar[bool] = True

    def __post_init__(self):
        _number("AVQ", "level", self.level, strict=False, high=1.0)
        if self.virtual_buffer is not None:
            _number("AVQ", "virtual_buffer", self.virtual_buffer)
        _flag("AVQ", "adaptive", self.adaptive)
        _number("AVQ", "gamma", self.gamma, high=1.0)
        _number("AVQ", "alpha", self.alpha)
        every = self.update_every
        if isinstance(every, bool) or not float(every).is_integer() or every < 1:
            raise ParameterError(f"AVQ.update_every = {every!r} must be a whole number >= 1")
        if self.adaptive and self.level > self.gamma:
            raise ParameterError(
                f"AVQ.level = {self.level!r} must not exceed AVQ.gamma = {self.gamma!r} (the "
                "adaptive level is kept in [0, gamma C])"
            )

    def ns3(self, *, rate: float, delay: float, buffer: int, packet_size: int) -> tuple[str, dict]:
        """``fluidnet::AvqQueueDisc``: the capacity ``C`` and the level in bytes/s of IP packets
        (the link rate less the 2-byte PPP header of every packet), the virtual buffer in bytes.

        Parameters
        ----------
        rate : float
            Link rate in bit/s.
        delay : float
            One-way propagation delay of the link in seconds.
        buffer : int
            Buffer size in packets (the real queue's ``MaxSize``).
        packet_size : int
            Packet size in bytes (IP packets).

        Returns
        -------
        type_id : str
            The ns-3 TypeId of the queue disc.
        attributes : dict
            ``{attribute name: value as text}``, as ns-3 reads them.
        """
        capacity = rate / 8.0 * packet_size / (packet_size + 2)  # bytes/s of IP packets
        vbuf = buffer if self.virtual_buffer is None else self.virtual_buffer
        return "fluidnet::AvqQueueDisc", {
            "MaxSize": f"{buffer}p",
            "Capacity": _text(capacity),
            "Level": _text(self.level * capacity),
            "VirtualBuffer": _text(vbuf * packet_size),
            "Adaptive": str(self.adaptive).lower(),
            "Gamma": _text(self.gamma),
            "Alpha": _text(self.alpha),
            "UpdateEvery": str(int(self.update_every)),
        }


@dataclass(frozen=True)
class ORED(AQM):
    """RED on out-of-profile packets (Misra, Baras & Ott 2000, Sec II), ``fluidnet::OredQueueDisc``.

    Each flow of a group with an assured rate (``Flows(assured_rate=R)``) is metered at its
    source by a token bucket of rate ``R`` and depth ``bucket`` packets; a packet that finds a
    packet's worth of tokens is *in*, the others are *out*. At the link an arriving *out* packet
    is ECN-marked with probability ``f_mark(avg)``: 0 below ``min_th``, ``p_max (avg - min_th) /
    (max_th - min_th)`` up to ``max_th``, ``p_max`` above; *in* packets are never marked; both are
    dropped only when the buffer is full. ``avg`` is the EWMA of the queue (``weight`` per
    arriving packet, decaying over idle periods as RED's; ``weight=1``: the queue itself). Each
    packet is marked independently (no count spacing): the paper's marking probability.

    Parameters
    ----------
    min_th, max_th : float
        Thresholds on the average queue (packets).
    p_max : float
        Marking probability at and above ``max_th``, in (0, 1].
    weight : float
        EWMA weight per arriving packet, in (0, 1].
    """

    min_th: float = 20.0
    max_th: float = 100.0
    p_max: float = 0.01
    weight: float = 0.002

    name: ClassVar[str] = "ored"
    marks: ClassVar[bool] = True

    def __post_init__(self):
        _number("ORED", "min_th", self.min_th, strict=False)
        _number("ORED", "max_th", self.max_th)
        if self.max_th <= self.min_th:
            raise ParameterError(
                f"ORED.max_th = {self.max_th!r} must exceed ORED.min_th = {self.min_th!r}"
            )
        _number("ORED", "p_max", self.p_max, high=1.0)
        _number("ORED", "weight", self.weight, high=1.0)

    def profile(self, avg: float) -> float:
        """The marking probability ``f_mark`` of *out* packets at average queue ``avg``.

        Parameters
        ----------
        avg : float
            Average queue (packets).

        Returns
        -------
        float
        """
        if avg < self.min_th:
            return 0.0
        if avg < self.max_th:
            return self.p_max * (avg - self.min_th) / (self.max_th - self.min_th)
        return self.p_max

    def ns3(self, *, rate: float, delay: float, buffer: int, packet_size: int) -> tuple[str, dict]:
        """``fluidnet::OredQueueDisc`` with this ORED's thresholds, ``p_max`` and weight; the
        link rate and packet size set the decay of the average over idle periods.

        Parameters
        ----------
        rate : float
            Link rate in bit/s.
        delay : float
            One-way propagation delay of the link in seconds.
        buffer : int
            Buffer size in packets (the queue disc's ``MaxSize``).
        packet_size : int
            Packet size in bytes (IP packets).

        Returns
        -------
        type_id : str
            The ns-3 TypeId of the queue disc.
        attributes : dict
            ``{attribute name: value as text}``, as ns-3 reads them.
        """
        return "fluidnet::OredQueueDisc", {
            "MaxSize": f"{buffer}p",
            "MinTh": _text(self.min_th),
            "MaxTh": _text(self.max_th),
            "MaxP": _text(self.p_max),
            "QW": _text(self.weight),
            "LinkRate": _text(rate),
            "MeanPktSize": str(int(packet_size)),
        }


@dataclass(frozen=True)
class XCP(AQM):
    """The XCP router of Katabi, Handley & Rohrs (SIGCOMM 2002), ``fluidnet::XcpQueueDisc``.

    Every control interval ``d`` (the mean RTT of the flows, from their congestion headers) the
    efficiency controller computes the aggregate feedback ``phi = alpha d (C - y) - beta Q`` (``y``
    the input rate, ``Q`` the persistent queue) and the fairness controller spreads it, with
    ``gamma y d`` of shuffled traffic, as per-packet window changes ``xi_p rtt^2/cwnd - xi_n rtt``
    (packets) written into the packets' headers. Use it with ``transport="xcp"`` flows.

    Parameters
    ----------
    alpha, beta, gamma : float
        Gains (Katabi et al.: 0.4, 0.226 and 0.1).
    initial_interval : float
        The control interval before any packet has carried an RTT (s).
    """

    alpha: float = 0.4
    beta: float = 0.226
    gamma: float = 0.1
    initial_interval: float = 0.1

    name: ClassVar[str] = "xcp"

    def __post_init__(self):
        _number("XCP", "alpha", self.alpha)
        _number("XCP", "beta", self.beta, strict=False)
        _number("XCP", "gamma", self.gamma, strict=False, high=1.0)
        _number("XCP", "initial_interval", self.initial_interval)

    def ns3(self, *, rate: float, delay: float, buffer: int, packet_size: int) -> tuple[str, dict]:
        """``fluidnet::XcpQueueDisc`` with this router's gains; its capacity is the link rate
        less the 2-byte PPP header of every packet (IP bit/s).

        Parameters
        ----------
        rate : float
            Link rate in bit/s.
        delay : float
            One-way propagation delay of the link in seconds.
        buffer : int
            Buffer size in packets (the queue disc's ``MaxSize``).
        packet_size : int
            Packet size in bytes (IP packets).

        Returns
        -------
        type_id : str
            The ns-3 TypeId of the queue disc.
        attributes : dict
            ``{attribute name: value as text}``, as ns-3 reads them.
        """
        ip_capacity = rate * packet_size / (packet_size + 2)  # bit/s of IP packets (PPP framing)
        return "fluidnet::XcpQueueDisc", {
            "MaxSize": f"{buffer}p",
            "Capacity": _text(ip_capacity),
            "Alpha": _text(self.alpha),
            "Beta": _text(self.beta),
            "Gamma": _text(self.gamma),
            "InitialInterval": f"{self.initial_interval!r}s",
        }


#: AQMs by name, for ``aqm="red"`` and friends (their defaults).
AQM_NAMES: dict[str, type[AQM]] = {
    cls.name: cls for cls in (DropTail, RED, PIE, CoDel, PI, SBRM, RCP, DropFront, AVQ, ORED, XCP)
}


def as_aqm(value: Any, where: str = "aqm") -> AQM:
    """An AQM from an instance or a name (``"droptail"``, ``"red"``, ...).

    Raises
    ------
    ParameterError
        For an unknown name or another type, naming ``where``.
    """
    if isinstance(value, AQM):
        return value
    if isinstance(value, str):
        cls = AQM_NAMES.get(value.lower().replace("-", "").replace("_", ""))
        if cls is None:
            raise ParameterError(
                f"{where} = {value!r} is not an AQM fluidnet knows; use one of "
                f"{', '.join(sorted(AQM_NAMES))} (or an instance such as fn.packet.RED(...))"
            )
        return cls()
    raise ParameterError(
        f"{where} = {value!r} ({type(value).__name__}) is not an AQM: give a name such as "
        "'red' or an instance such as fn.packet.RED(min_th=50, max_th=600)"
    )
