"""Ye et al.'s ns-2 topologies as ns-3 scenarios, and what each quantity became.

Topology I (Fig 2, reconstructed in the README): three bottlenecks R1-R2-R3-R4 in a chain, flows 1-3
over one each, flow 4 over all three; link delays t_0 (access of flows 1-3), t_1 (bottlenecks),
t_2 (access of flow 4) of Table I, so that the round trips are 30/18/30 ms (flows 1-3) and
50/50/38 ms (flow 4) in Cases I/II/III. The paper's bottlenecks carry 100 Mb/s and the other
links 200 Mb/s; here 20 and 40 Mb/s of 1000-byte packets (2500 and 5000 packets/s), to keep each
run to seconds of CPU ((16)'s ratio hardly depends on B: 0.1938 against 0.1987 in Case I). Every
router has a RED FIFO (the paper's choice; its parameters are not printed: ns-2's defaults,
thresholds 5 and 15 packets, p_max 0.1, weight 0.002, buffer 100). Every flow runs
``fluidnet::TcpSlidingMode`` with alpha = 1, mu = 1, beta = 1/2 (the paper's TCP law, TCP-Reno's
window), one ACK per packet, minimum RTO 0.2 s (ns-2's), starts spread over the first second.

Topology II (Fig 12) is lost; :data:`~fluidnet.papers.ye.data.TOPOLOGY_TWO_RTTS` gives the
reconstruction used (the chain with five flows), and flow 4 runs ``fluidnet::TcpMrg`` with the
target Theta = 3 Mb/s.
"""

from __future__ import annotations

from ...packet.aqm import RED
from ...packet.scenario import Flows, Link, ParkingLot
from ...packet.transport import Transport
from .data import (
    B_TOPOLOGY_TWO,
    MRG_THETA,
    PACKET_B,
    PACKET_SIZE,
    RED_BUFFER,
    RED_PACKET,
    RTTS,
    T1,
    TOPOLOGY_TWO_RTTS,
    W_MB,
)

__all__ = ["topology_one_scenario", "topology_two_scenario", "common_mapping", "MIN_RTO"]

#: Smallest retransmission timeout (s).
MIN_RTO = 0.2
#: The flows start uniformly over [0, START) (s).
START = 1.0


#: Link delay of topology II's chain (s): not printed; a flow over the three links has a round
#: trip of 22 ms, so each link has at most 3.7 ms.
T_TWO = 0.002


def _chain(capacity_mbps: float, delay: float = T1) -> list[Link]:
    pkts = capacity_mbps / W_MB
    return [
        Link.from_packets(pkts, PACKET_SIZE, delay=delay, buffer=RED_BUFFER, aqm=RED(**RED_PACKET))
        for _ in range(3)
    ]


def topology_one_scenario(case: str) -> ParkingLot:
    """Topology I in Case ``case`` ("I", "II", "III") with the TCP law on every flow."""
    rtt13, rtt4 = RTTS[case]
    links = _chain(PACKET_B)
    flows = [Flows(n=1, rtt=rtt13, transport="sliding", start=(0.0, START)) for _ in range(3)]
    flows.append(Flows(n=1, rtt=rtt4, transport="sliding", start=(0.0, START)))
    routing = [[1, 0, 0, 1], [0, 1, 0, 1], [0, 0, 1, 1]]
    return ParkingLot(
        links=links,
        routing=routing,
        flows=flows,
        packet_size=PACKET_SIZE,
        min_rto=MIN_RTO,
        access_rate=2 * links[0].rate,
    )


def topology_two_scenario(r_max: float, theta: float = MRG_THETA) -> ParkingLot:
    """The reconstructed topology II: flows 1-3 on one 20 Mb/s link each, flows 4 and 5 over all
    three; flow 4 runs the MRG law (r_max = 1: the TCP law), the others the TCP law."""
    links = _chain(B_TOPOLOGY_TWO, T_TWO)
    theta_pkts = theta / W_MB
    flows = []
    for k, rtt in enumerate(TOPOLOGY_TWO_RTTS):
        t = Transport("mrg", theta=theta_pkts, r_max=r_max) if k == 3 else Transport("sliding")
        flows.append(Flows(n=1, rtt=rtt, transport=t, start=(0.0, START)))
    routing = [[1, 0, 0, 1, 1], [0, 1, 0, 1, 1], [0, 0, 1, 1, 1]]
    return ParkingLot(
        links=links,
        routing=routing,
        flows=flows,
        packet_size=PACKET_SIZE,
        min_rto=MIN_RTO,
        access_rate=2 * links[0].rate,
    )


def common_mapping() -> dict[str, tuple[str, str]]:
    """What the paper's quantities became in ns-3, for every item."""
    return {
        "packets": (
            "1000 bytes (w = 8000 bits)",
            f"{PACKET_SIZE} bytes, rates in Mb/s = pkts/s x 8000e-6",
        ),
        "routers": (
            "RED FIFO (parameters not printed)",
            "ns-3 RedQueueDisc: min_th 5, max_th "
            "15, p_max 0.1, weight 0.002, not gentle, buffer 100 packets (ns-2's "
            "defaults)",
        ),
        "law": (
            "TCP-Reno: slow start, then +1 packet per RTT, halving on congestion",
            "fluidnet::TcpSlidingMode (alpha = 1, mu = 1 packet per RTT, beta = 1/2), "
            "ns-3's loss recovery (SACK)",
        ),
        "ACK policy": ("one ACK per packet (ns-2's TCP sink)", "DelAckCount = 1"),
        "timeouts": ("ns-2", f"minimum RTO {MIN_RTO:g} s"),
        "starts": ("not printed", f"uniform over [0, {START:g}) s"),
    }
