"""The paper's networks and printed numbers (Kunniyur & Srikant 2003).

Unstated constants (see "Conventions the paper does not state" in ``papers/ks/README.md``):
``kappa_r = beta_r = 1``, ``w_r = 1`` unless the paper gives them; packets of 32 bytes where
Experiment 1 says so and, for Experiments 2-3, the same (their packet size is not stated).
Experiment 1 measures time in units of 0.02 s (the paper's choice: round-trip delays 2 and 1
units) and rates in packets per 0.02 s.
"""

from __future__ import annotations

from ...models import UserNetwork, log_utility, power_utility

#: Experiment 1 (Sec VI-A): the NLP rates as printed ("x_3" is x_2, a misprint).
EXP1_PRINTED = (16.56, 139.69, 61.57)
#: Experiment 1: the ns-2 average rates (a packet simulation; not a fluid target).
EXP1_NS2 = (16.81, 140.83, 60.34)
#: Packet size of Experiment 1 (bytes) and the time unit of its window law (s).
PACKET_BYTES = 32
TIME_UNIT = 0.02

#: Capacities of the two core links of Fig 1, n0-n1 (2 Mb/s) and n1-n2 (1 Mb/s), in pkt/s.
CORE_PKTS_PER_S = (2e6 / (8 * PACKET_BYTES), 1e6 / (8 * PACKET_BYTES))


def exp1_network(**changes) -> UserNetwork:
    """Fig 1 with Experiment 1's users: user 0 on both links (``-1/sqrt(x)``, d = 2), user 1 on
    link 1 (``log``, d = 1), user 2 on link 2 (``-1/x``, d = 1); rates in pkts per 0.02 s."""
    kw = dict(
        A=[[1, 1, 0], [1, 0, 1]],
        utilities=[power_utility(0.5), log_utility(), power_utility(1)],
        C=[c * TIME_UNIT for c in CORE_PKTS_PER_S],  # 156.25 and 78.125
        d=[2.0, 1.0, 1.0],
        names=["0", "1", "2"],
        rate_unit="pkts/(0.02 s)",
        time_unit="0.02 s",
    )
    kw.update(changes)
    return UserNetwork(**kw)


def exp2_network(**changes) -> UserNetwork:
    """Experiment 2 (Sec VI-B): one 1 Mb/s link, three ``-1/x`` users with 5 % random loss,
    RTT 40 ms = 2 units of 0.02 s; rates in pkts per 0.02 s (as in
    Experiment 1; the paper states neither units nor packet size here)."""
    kw = dict(
        A=[[1]],
        utilities=power_utility(1),
        C=CORE_PKTS_PER_S[1] * TIME_UNIT,  # 78.125
        N=3,
        alpha=0.95,
        d=2.0,
        rate_unit="pkts/(0.02 s)",
        time_unit="0.02 s",
    )
    kw.update(changes)
    return UserNetwork(**kw)


def exp3_network(**changes) -> UserNetwork:
    """Experiment 3 (Sec VI-C): Fig 1 with 300 users in three classes of 100 (class 1 on both
    links, class 2 on link 1, class 3 on link 2), 50 ``log`` and 50 ``-1/x`` users per class;
    rates in pkt/s (with pkts per 0.02 s no marking level is feasible at beta = 0.5)."""
    kw = dict(
        A=[[1, 1, 1, 1, 0, 0], [1, 1, 0, 0, 1, 1]],
        utilities=[log_utility(), power_utility(1)] * 3,
        C=list(CORE_PKTS_PER_S),  # 7812.5 and 3906.25
        N=50,
        d=[0.04, 0.04, 0.02, 0.02, 0.02, 0.02],
        names=["1log", "1inv", "2log", "2inv", "3log", "3inv"],
    )
    kw.update(changes)
    return UserNetwork(**kw)


def sec4_network(nu_first: float = 0.0) -> UserNetwork:
    """Sec IV: C = 300 shared by 50 users with ``log`` (``nu_first = 0``) or ``-1/x^2``
    (``nu_first = 2``) and 50 TCP-like ``-1/x`` users."""
    first = log_utility() if nu_first == 0 else power_utility(nu_first)
    return UserNetwork([[1, 1]], [first, power_utility(1)], C=300.0, N=50, names=["i", "j"])
