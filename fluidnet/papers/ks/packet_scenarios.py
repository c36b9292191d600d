"""The paper's ns-2 experiments as ns-3 scenarios, and what each fluid parameter became.

Fig 1's network is a chain of two core links, n0-n1 (2 Mb/s of 32-byte packets: 7812.5 packets/s)
and n1-n2 (3906.25 packets/s), 10 ms each, with access links of 0.005 ms. ns-3 cannot send
32-byte packets (a TCP/IP header alone is 52 bytes), so the packets are 1000 bytes and the links
keep the paper's capacities in packets per second (the paper: "the packet sizes and acks can be
taken to be arbitrary as long as we scale the bandwidth appropriately"); the laws count packets,
so nothing else changes. Time in the laws is in units of 0.02 s (Experiment 1's choice): round
trips d = 1 and 2, capacities 156.25 and 78.125 packets per unit.

Every sender runs ``fluidnet::TcpKelly`` (the window laws (12)/(13), ``kappa = w_r/beta_r = 1``,
``beta = 0.5``): one ACK per packet (the laws count every ACK), the network's losses reported to
their senders as the negative acknowledgments of (12)/(13) (``Experiment 1``, ``2a``) or ECN
marks echoed per packet by DCTCP receivers (``2b``, ``3``, ``4``). Queues are drop-front FIFOs of
100 packets (40 in Experiment 2), the virtual queue (AVQ) of the marking level keeps the real
queue's buffer. The minimum retransmission timeout is 0.2 s (ns-2's two 100-ms ticks).
"""

from __future__ import annotations

from ...packet.aqm import AVQ, DropFront
from ...packet.scenario import Dumbbell, Flows, Link, ParkingLot, ShortFlows
from ...packet.transport import Transport
from .data import (
    BETA,
    CORE_PKTS_PER_S,
    EXP3_ETA,
    EXP3_K,
    LINK_DELAY,
    PACKET_SIZE,
    RTT_ONE,
    RTT_TWO,
    SHORT_MAX,
    SHORT_MEAN,
    SHORT_RATE,
    SHORT_SHAPE,
    TIME_UNIT,
)

__all__ = [
    "BUFFER",
    "MIN_RTO",
    "experiment1_scenario",
    "experiment2_scenario",
    "experiment3_scenario",
    "common_mapping",
]

#: Buffer of every queue (packets; Experiment 1's, also used in Experiments 3 and 4).
BUFFER = 100
#: Smallest retransmission timeout (s).
MIN_RTO = 0.2
#: Fig 1's routes: class 1 (links 1 and 2), class 2 (link 1), class 3 (link 2).
ROUTES = ((1, 1), (1, 0), (0, 1))
RTTS = (RTT_TWO, RTT_ONE, RTT_ONE)
DELAYS = (2.0, 1.0, 1.0)  # d of the laws, units of 0.02 s


def _core(aqm, buffer: int = BUFFER) -> list[Link]:
    return [
        Link.from_packets(c, PACKET_SIZE, delay=LINK_DELAY, buffer=buffer, aqm=aqm)
        for c in CORE_PKTS_PER_S
    ]


def _kelly(nu: float, d: float, ecn: bool) -> Transport:
    return Transport("kelly", ecn=ecn, kappa=1.0, w=1.0, beta=BETA, nu=nu, d=d)


def experiment1_scenario() -> ParkingLot:
    """Sec VI-A: user 0 (``-1/sqrt(x)``) over both links, user 1 (``log x``) over link 1, user 2
    (``-1/x``) over link 2; drop-front queues of 100 packets, reaction to losses."""
    nus = (0.5, 0.0, 1.0)
    flows = [
        Flows(n=1, rtt=rtt, transport=_kelly(nu, d, False))
        for nu, d, rtt in zip(nus, DELAYS, RTTS, strict=True)
    ]
    return ParkingLot(
        links=_core(DropFront()),
        routing=[[r[0] for r in ROUTES], [r[1] for r in ROUTES]],
        flows=flows,
        packet_size=PACKET_SIZE,
        min_rto=MIN_RTO,
    )


def experiment2_scenario(ecn: bool) -> Dumbbell:
    """Sec VI-B: three ``-1/x`` users with 5 % random loss on one 1-Mb/s node (3906.25 pkts/s,
    buffer 40), round trip 40 ms (d = 2); reacting to losses (drop-front queue) or, with ``ecn``,
    only to the marks of a virtual queue at 0.99 C."""
    aqm = AVQ(level=0.99, virtual_buffer=40) if ecn else DropFront()
    link = Link.from_packets(CORE_PKTS_PER_S[1], PACKET_SIZE, delay=LINK_DELAY, buffer=40, aqm=aqm)
    return Dumbbell(
        link=link,
        flows=[Flows(n=3, rtt=0.040, transport=_kelly(1.0, 2.0, ecn), loss=0.05)],
        packet_size=PACKET_SIZE,
        min_rto=MIN_RTO,
    )


def experiment3_scenario(short_flows: bool = False) -> ParkingLot:
    """Sec VI-C with one user per class and utility (six groups): each stands for the 50 users of
    the paper's class and utility (see ``packet_marking``); adaptive AVQ on both links (gamma =
    1, K = 1000, from C~ = C/2), reaction to marks only. With ``short_flows``, the Experiment 4
    substitute: short flows on every route."""
    aqm = AVQ(
        level=0.5,
        adaptive=True,
        gamma=1.0,
        alpha=EXP3_ETA / TIME_UNIT,
        update_every=EXP3_K,
        virtual_buffer=BUFFER,
    )
    flows: list = []
    routing: list[list[int]] = [[], []]
    for route, rtt, d in zip(ROUTES, RTTS, DELAYS, strict=True):
        for nu in (0.0, 1.0):
            flows.append(Flows(n=1, rtt=rtt, transport=_kelly(nu, d, True)))
            routing[0].append(route[0])
            routing[1].append(route[1])
    if short_flows:
        for route, rtt, d in zip(ROUTES, RTTS, DELAYS, strict=True):
            flows.append(
                ShortFlows(
                    arrival_rate=SHORT_RATE,
                    mean_size=SHORT_MEAN,
                    shape=SHORT_SHAPE,
                    max_size=SHORT_MAX,
                    rtt=rtt,
                    transport=_kelly(0.0, d, True),
                )
            )
            routing[0].append(route[0])
            routing[1].append(route[1])
    return ParkingLot(
        links=_core(aqm),
        routing=routing,
        flows=flows,
        packet_size=PACKET_SIZE,
        min_rto=MIN_RTO,
    )


def common_mapping() -> dict[str, tuple[str, str]]:
    """What the paper's (or the fluid model's) quantities became in ns-3, for every item."""
    c1, c2 = CORE_PKTS_PER_S
    return {
        "packets": ("32 bytes (acks 16)", f"{PACKET_SIZE} bytes (ns-3's ACKs, 52-64 bytes)"),
        "link 1 (n0-n1)": (
            f"2 Mb/s = {c1:g} pkts/s = {c1 * TIME_UNIT:g} pkts per 0.02 s, 10 ms",
            f"{c1:g} pkts/s of {PACKET_SIZE} bytes ({c1 * 8 * (PACKET_SIZE + 2) / 1e6:.4g} Mb/s "
            "with 2 bytes of framing), 10 ms",
        ),
        "link 2 (n1-n2)": (
            f"1 Mb/s = {c2:g} pkts/s = {c2 * TIME_UNIT:g} pkts per 0.02 s, 10 ms",
            f"{c2:g} pkts/s ({c2 * 8 * (PACKET_SIZE + 2) / 1e6:.4g} Mb/s), 10 ms",
        ),
        "reverse links": ("1000 Mb/s", "the same rate as the forward link (ACKs use < 7 %)"),
        "access links": ("1000 Mb/s, 0.005 ms", "10 x the fastest core link, 0.005 ms"),
        "round trips": (
            "40 ms (class 1, user 0), 20 ms; d = 2 and 1 units of 0.02 s",
            f"{RTT_TWO * 1e3:g} and {RTT_ONE * 1e3:g} ms propagation; d = 2 and 1 in the law",
        ),
        "law": (
            "(12)/(13), kappa = w = beta_r = 1, beta = 0.5",
            "fluidnet::TcpKelly, per ACK +kappa c w d^2/W, per signal -kappa beta W^nu d^(1-nu)",
        ),
        "ACK policy": ("one ACK per packet", "DelAckCount = 1 (one ACK per segment)"),
        "loss signal": (
            "nack per lost packet",
            "every packet the network drops, reported to its sender one propagation delay later",
        ),
        "mark signal": ("mark per packet", "ECN CE, echoed per packet by DCTCP receivers"),
        "timeouts": ("ns-2 (not stated)", f"ns-3 TCP, minimum RTO {MIN_RTO:g} s"),
    }
