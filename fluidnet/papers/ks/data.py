"""The paper's networks and printed numbers (Kunniyur & Srikant 2003).

Unstated constants (see "Conventions the paper does not state" in ``papers/ks/README.md``):
``kappa_r = beta_r = 1``, ``w_r = 1`` unless the paper gives them; packets of 32 bytes where
Experiment 1 says so and, for Experiments 2-3, the same (their packet size is not stated).
Experiment 1 measures time in units of 0.02 s (the paper's choice: round-trip delays 2 and 1
units) and rates in packets per 0.02 s.
"""

from __future__ import annotations

import math

import numpy as np
import sympy
from scipy.optimize import brentq, fsolve

from ...models import UserNetwork, log_utility, power_utility
from ...symbolic.symbols import t

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


# --- references typed from the paper's equations (plain sympy/scipy, independent of the models)
#: The network gain beta of the paper's examples.
BETA = 0.5
#: The exponent of the second user's utility -1/x^nu in the window example of Sec III-B.
WINDOW_NU = sympy.Rational(3, 2)


def paper_rate_law(r: str, x, q, nu=None):
    """(9) ``kappa (w/beta_r - beta (x - z))`` (``nu=None``) or (10) ``kappa (nu w/beta_r -
    beta x^nu (x - z))`` of user ``r``, with ``x - z = x ((1 - alpha) + alpha q)``."""
    k, w, br, a, beta = sympy.symbols(f"kappa_{r} w_{r} betar_{r} alpha_{r} beta", real=True)
    lost = x * ((1 - a) + a * q)
    return k * (w / br - beta * lost) if nu is None else k * (nu * w / br - beta * x**nu * lost)


def experiment1_rate_law(r: str, nu):
    """:func:`paper_rate_law` of Experiment 1's user ``r`` as functions of time."""
    x = sympy.Function(f"x_{r}", real=True)(t)
    q = sympy.Function(f"q_{r}", real=True)(t)
    return paper_rate_law(r, x, q, nu)


def paper_window_forms(r: str, nu):
    """(24)/(25) and (9)/(10) of user ``r`` in ``x = X_r``, ``q = Q_r``, ``d = d_r``."""
    d = sympy.Symbol(f"d_{r}", real=True)
    x, q = sympy.symbols(f"X_{r} Q_{r}")
    k, w, br, a, beta = sympy.symbols(f"kappa_{r} w_{r} betar_{r} alpha_{r} beta", real=True)
    lost = x * ((1 - a) + a * q)
    if nu is None:
        return k / d * (w / (br * d) - beta * lost), paper_rate_law(r, x, q)
    eq25 = k * d ** (nu - 1) * (nu * w / (br * d ** (nu + 1)) - lost * beta * x**nu)
    return eq25, paper_rate_law(r, x, q, nu)


def closed_form_b() -> tuple[float, float, float]:
    """Sec IV, ``-1/x^2`` against ``-1/x``: ``(2/lam)^(1/3) + lam^(-1/2) = 6`` (KKT, scipy)."""
    lam = brentq(lambda v: (2 / v) ** (1 / 3) + v**-0.5 - 6, 0.01, 1.0, xtol=1e-16, rtol=1e-15)
    return (2 / lam) ** (1 / 3), lam**-0.5, lam


def level_27(C: float, n_log: float, n_inv: float, beta: float = BETA) -> float:
    """The largest ``C~`` with ``n_log C/(beta (C - C~)) + n_inv sqrt(C/(beta (C - C~))) <= C``
    (27) for unit weights, by bisection on the printed inequality (plain scipy)."""

    def lhs(ct):
        r = C / (beta * (C - ct))
        return n_log * r + n_inv * math.sqrt(r) - C

    return brentq(lhs, 0.0, C * (1 - 1e-12), xtol=1e-10, rtol=1e-15)


def _class_rates(p) -> list[tuple[float, float]]:
    """Experiment 3: the (log, -1/x) rate of one user of each class at link marks ``p`` (unit
    weights: ``1/(beta q)`` and ``(1/(beta q))^(1/2)``, ``q`` the path's sum)."""
    q = (p[0] + p[1], p[0], p[1])  # path sums of classes 1, 2, 3
    return [(1 / (BETA * v), (1 / (BETA * v)) ** 0.5) for v in q]


def steady_levels(C, xi=(0.0, 0.0)) -> tuple[np.ndarray, np.ndarray]:
    """Experiment 3: the marks ``p`` that make both loads, with the unresponsive rates ``xi``,
    equal ``C`` and the levels ``C (1 - p)`` (plain scipy)."""

    def loads(p):
        r = _class_rates(p)
        return np.array([50 * (sum(r[0]) + sum(r[1])), 50 * (sum(r[0]) + sum(r[2]))])

    C, xi = np.asarray(C, dtype=float), np.asarray(xi, dtype=float)
    lp = fsolve(lambda z: (loads(np.exp(z)) + xi) / C - 1, np.log([0.02, 0.05]), xtol=1e-12)
    p = np.exp(lp)
    return p, C * (1 - p)


def steady_rates(C, xi=(0.0, 0.0)) -> np.ndarray:
    """Experiment 3: the rate (per unit of the law) of one log and one ``-1/x`` user of each class
    at :func:`steady_levels`, shape (3, 2)."""
    p, _ = steady_levels(C, xi)
    return np.array(_class_rates(p))


def price_only_closed_form(p: float = 1 / 6) -> float:
    """Delayed extension: ``kappa beta T_c`` with only the price delayed, ``a = p``,
    ``b = 1 - p`` (per kappa beta): ``arccos(-a/b)/sqrt(b^2 - a^2)``."""
    a, b = p, 1 - p
    return math.acos(-a / b) / math.sqrt(b * b - a * a)


# --- the packet items (ns-3): the paper's scenarios in packets (papers/ks/README.md, "Fluid
# against packets"); every expected value below is computed before the runs
#: Bytes of an ns-3 data packet (the paper's 32 cannot carry TCP/IP headers): the capacities
#: stay in packets per second, the link rates in bit/s follow.
PACKET_SIZE = 1000
#: One-way propagation delay of each core link (s), and of every access link (0.005 ms).
LINK_DELAY = 0.010
ACCESS_DELAY = 0.005e-3
#: Round-trip propagation delays (s) over one and over both core links.
RTT_ONE = 2 * (LINK_DELAY + 2 * ACCESS_DELAY)
RTT_TWO = 2 * (2 * LINK_DELAY + 2 * ACCESS_DELAY)
#: Experiment 1: the fluid equilibrium of (5) at beta = 0.5 (pkts per 0.02 s; the target of the
#: fluid item ``experiment1``, maximum of (5) solved independently with scipy).
EXP1_FLUID = (16.712, 141.773, 61.454)
#: Experiment 2: the fluid rates per user (pkts per 0.02 s): loss reaction 1/x^2 = beta (1 -
#: alpha) and ECN reaction 1/x^2 = beta alpha p(3x; 0.99 C) (targets of ``experiment2``).
EXP2_FLUID_LOSS = 1.0 / math.sqrt(BETA * 0.05)
EXP2_FLUID_ECN = 25.863
#: Experiment 2 as printed: ECN throughput "about five times" the loss-based one.
EXP2_PRINTED_RATIO = 5.0
#: Experiment 3 in packets: the step size of the adaptive law per 0.02 s (the fluid item's
#: eta = 0.05 per second for rates in pkt/s; see ``packet_marking``) and the paper's K.
EXP3_ETA = 0.05
EXP3_K = 1000
#: Experiment 4 substitute (Fig 7 is lost): short flows on every route of Fig 1, Poisson at one
#: flow per time unit of the law (0.02 s), Pareto sizes of mean 10 truncated at 20 packets
#: (printed), shape 1.5 (ns-2's Pareto default; not printed).
SHORT_RATE = 1 / TIME_UNIT
SHORT_MEAN, SHORT_MAX, SHORT_SHAPE = 10.0, 20, 1.5


def truncated_pareto_mean(mean: float, shape: float, top: int) -> float:
    """Mean of ``min(ceil(X), top)`` for a Pareto ``X`` of mean ``mean`` and shape ``shape``:
    ``sum_{k=0}^{top-1} P(X > k)``."""
    scale = mean * (shape - 1) / shape
    return float(sum(min(1.0, (scale / k) ** shape) if k > 0 else 1.0 for k in range(top)))


def short_flow_load() -> np.ndarray:
    """Packets/s the short flows bring to each core link (two routes each)."""
    per_route = SHORT_RATE * truncated_pareto_mean(SHORT_MEAN, SHORT_SHAPE, SHORT_MAX)
    return np.array([2 * per_route, 2 * per_route])


# --- the sizes of the items: full runs, and the reduced ones of a quick run
#: beta of Experiment 1's equilibria (continued upwards); the quick run takes three.
EXP1_BETAS = (0.5, 5.0, 50.0, 500.0, 5000.0)
EXP1_BETAS_QUICK = (0.5, 5.0, 5000.0)
#: Starts (x_0, x_1, x_2) of the Lyapunov runs; the quick run takes the first two.
LYAPUNOV_STARTS = ((1.0, 1.0, 1.0), (60.0, 5.0, 150.0), (5.0, 300.0, 2.0))
#: kappa of the collocated Kelly cycles checked against simulations; quick: two.
KELLY_KAPPAS = (0.35, 0.4, 0.45, 0.5, 0.55)
KELLY_KAPPAS_QUICK = (0.4, 0.5)
#: ns-3 runs (simulated seconds) of the packet items, full and quick; the tail measured starts
#: at half the run.
PACKET_T = {"experiment1": 40.0, "experiment2": 30.0, "experiment3": 30.0}
PACKET_T_QUICK = {"experiment1": 6.0, "experiment2": 8.0, "experiment3": 10.0}
