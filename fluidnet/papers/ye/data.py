"""Ye et al.'s printed values, and references derived from the printed equations with plain
numpy/scipy (independent of fluidnet's models).

Conventions: rates in Mb/s, ``mu_i = w / RTT_i`` with ``w = 8000`` bits, ``beta = 1/2``,
``alpha = 1``, bottleneck ``B = 100`` Mb/s, time in per-flow RTTs.
"""

from __future__ import annotations

import math

import numpy as np
import sympy
from scipy.optimize import brentq, minimize_scalar

from ...models.sliding_mode import RATE

#: packet size in Mb (1000 bytes)
W_MB = 8000e-6
B_TOPOLOGY_ONE = 100.0
BETA = 0.5
ALPHA = 1.0
#: Table I / Sec III: RTTs (s) of flows 1-3 and of flow 4 (flow 4 the longer; see README)
RTTS = {"I": (0.030, 0.050), "II": (0.018, 0.050), "III": (0.030, 0.038)}

# --- printed values
#: Table II, theoretical x4 : x (2 decimals)
TABLE_II = {"I": 0.2, "II": 0.12, "III": 0.26}
#: Table III, theoretical x4 : x with the approximate utility (19), Case I delays
TABLE_III = {10: 0.223, 20: 0.373, 40: 0.769}
#: Sec IV, x_s > B/2: theoretical x4 : x (x_s = 80) and x4 (x_s = 100)
FIXED_LARGE = {80: 0.25, 100: 0.0}
#: Fig 1 parameters
FIG1 = {"mu": 0.1, "x_s": 1.0}
#: Sec V ns-2 observation: the target is reached for r_max >= 2 and missed below
NS2_R_THRESHOLD = 2.0

# --- derived from the paper's equations independently of fluidnet with numpy/scipy (checked here
# again by the functions below)
#: Fig 1: C (14), U at sample points, crossing of U with log(1+x) (raw and U/log 3), the limit of
#: U - (mu/beta) log x
FIG1_C = 1.218456
FIG1_U = {
    1.5: 1.1737,
    2.0: 1.2281,
    3.0: 1.3061,
    5.0: 1.4057,
    10.0: 1.5423,
    20.0: 1.6800,
    100.0: 2.0011,
}
FIG1_CROSSING = 2.5877
FIG1_CROSSING_NORMALIZED = 2.0791
FIG1_LIMIT = 1.07983
#: Table II: exact roots of (16) and the approximation (17)
TABLE_II_EXACT = {"I": 0.1987, "II": 0.1188, "III": 0.2614}
TABLE_II_APPROX = {"I": 0.2000, "II": 0.1200, "III": 0.2632}
#: Table II: beta-insensitivity, Case I
BETA_SWEEP = {0.3: 0.1979, 0.5: 0.1987, 0.7: 0.1991, 0.9: 0.1993}
#: Table III: exact optima with (19)
TABLE_III_EXACT = {10: 0.2215, 20: 0.3741, 40: 0.7633}
#: Sec IV: the exact fluid TCP law with a fixed threshold (KKT of (8)/(12))
FIXED_EXACT = {10: 0.1987, 20: 0.25, 40: 2.0 / 3.0, 80: 0.25, 100: 0.0}
#: Sec V, our fluid check: single-link MRG case: B = 20, TCP flow RTT 12 ms, MRG flow RTT 80 ms
MRG_LINK = {"B": 20.0, "rtt_tcp": 0.012, "rtt_mrg": 0.080, "theta": 5.0}
MRG_R_CRIT = {2: 0.976, 3: 1.011, 4: 1.032, 5: 1.047, 8: 1.084, 10: 1.111, 15: 1.250}
MRG_PREDICTED = {1.0: 2.609, 1.02: 3.386, 1.04: 4.513, 1.06: 5.0}
#: An independent integration of the deterministic discrete law on topology I, Case I:
#: synchronized (symmetric start) and desynchronized (asymmetric start)
DISCRETE_SYNCHRONIZED = 0.600
DISCRETE_DESYNCHRONIZED = 0.1974


def mu(rtt: float) -> float:
    """``w / RTT`` in Mb/s per RTT."""
    return W_MB / rtt


# --- independent references (formulas typed from the paper)
def u_tcp(x, mu_, x_s=None, beta=BETA, alpha=ALPHA):
    """(8) below x_s, (12) + C (14) above; (12) with C = 0 when ``x_s`` is None."""
    x = np.asarray(x, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        ca = (mu_ / beta + x) * (np.log(mu_ + beta * x) - 1) - x * (np.log(beta * x) - 1)
    if x_s is None:
        return ca
    c = (
        x_s * math.log((alpha + beta) * x_s / (mu_ + beta * x_s))
        - mu_ / beta * math.log(mu_ + beta * x_s)
        + mu_ / beta
    )
    return np.where(x < x_s, x * math.log(1 + alpha / beta), ca + c)


def u2(x, mu_, x_s):
    """(19)."""
    v = np.asarray(x, dtype=float) - x_s
    return (mu_ + v) * np.log(mu_ + v) - v * np.log(v)


def eq16_root(mu13: float, mu4: float, B: float = B_TOPOLOGY_ONE, beta: float = BETA, n: int = 3):
    """x4 solving (16) with exponent ``n``: ``[(mu/beta + B - x4)/(B - x4)]^n =
    (mu4/beta + x4)/x4``."""

    def g(x4):
        return n * math.log((mu13 / beta + B - x4) / (B - x4)) - math.log((mu4 / beta + x4) / x4)

    return brentq(g, 1e-9 * B, B * (1 - 1e-12), xtol=1e-14)


def table_three_root(x_s: float, mu13: float, mu4: float, B: float = B_TOPOLOGY_ONE):
    """x4 maximizing 3 U1(B - x4) + U2(x4) (x_s = 10, 20) or 3 U2(B - x4) + U2(x4) (x_s = 40),
    from the first-order condition with U1' = log(1 + mu/(beta x)), U2' = log(1 + mu/(x - x_s))."""

    def u2p(x, m):
        return math.log(1 + m / (x - x_s))

    def u1p(x, m):
        return math.log(1 + m / (BETA * x))

    if x_s >= 40:
        return brentq(lambda v: u2p(v, mu4) - 3 * u2p(B - v, mu13), x_s + 1e-12, B - x_s - 1e-12)
    return brentq(lambda v: u2p(v, mu4) - 3 * u1p(B - v, mu13), x_s + 1e-12, B - 1e-9)


def fixed_threshold_optimum(x_s: float, mu13: float, mu4: float, B: float = B_TOPOLOGY_ONE):
    """x4 maximizing 3 U(B - x4) + U(x4) with the composite TCP utility (8)/(12)/(14) (a
    concave function of x4 when alpha x_s >= mu), by bounded scalar search."""
    res = minimize_scalar(
        lambda v: -(3 * u_tcp(B - v, mu13, x_s) + u_tcp(v, mu4, x_s)),
        bounds=(0.0, B),
        method="bounded",
        options={"xatol": 1e-10},
    )
    return float(res.x)


def mrg_prediction(r: float, theta: float, B: float, mu_tcp: float, mu_mrg: float):
    """The MRG flow's rate on one link shared with one TCP flow (both congestion avoidance):
    ``U'_tcp(B - x) = U'_mrg(x) + log(r) [x < theta]`` (the averaged (20)); a kink at theta."""

    def up(x, m):
        return math.log(1 + m / (BETA * x))

    def gap(x, bonus):
        return up(B - x, mu_tcp) - up(x, mu_mrg) - bonus

    lo, hi = 1e-9, B - 1e-9
    below = brentq(lambda v: gap(v, math.log(r)), lo, hi)
    if below < theta:
        return below
    above = brentq(lambda v: gap(v, 0.0), lo, hi)
    return above if above > theta else theta


def mrg_r_crit(theta: float, B: float, mu_tcp: float, mu_mrg: float) -> float:
    """``exp(lambda(theta) - U'(theta))``, ``lambda(theta) = U'_tcp(B - theta)``."""
    lam = math.log(1 + mu_tcp / (BETA * (B - theta)))
    return math.exp(lam - math.log(1 + mu_mrg / (BETA * theta)))


# --- the formulas as printed (sympy), with the (18) misprint fixed (see the README)
al, be, mu_, xs_, r_ = sympy.symbols("alpha beta mu x_s r_max", positive=True)


def printed() -> dict[str, sympy.Expr]:
    """The paper's formulas in the rate ``x`` and ``alpha, beta, mu, x_s, r_max``."""
    x = RATE
    return {
        "(8)": x * sympy.log(1 + al / be),
        "(9)": (al + be) * x,
        "(12)": (mu_ / be + x) * (sympy.log(mu_ + be * x) - 1) - x * (sympy.log(be * x) - 1),
        "(13)": mu_ + be * x,
        "(14)": xs_ * sympy.log((al + be) * xs_ / (mu_ + be * xs_))
        - mu_ / be * sympy.log(mu_ + be * xs_)
        + mu_ / be,
        "(19)": (mu_ + x - xs_) * sympy.log(mu_ + x - xs_) - (x - xs_) * sympy.log(x - xs_),
        "(22) slow start": (3 * r_ - 1) * x / 2,
        "(22) congestion avoidance": (r_ - 1) * x / 2 + mu_ * r_,
    }


# --- the single link of the sliding-mode item: three TCP flows (RTTs 12, 22, 80 ms), 20 Mb/s
RTT_LINK = (0.012, 0.022, 0.080)
B_LINK = 20.0
X0_LINK = (1.0, 1.0, 1.0)
T_LINK = 1500.0


def closed_form() -> tuple[np.ndarray, float]:
    """Rates ``B mu_i / sum mu`` and duty fraction ``sum mu / (sum mu + beta B)``."""
    m = np.array([mu(r) for r in RTT_LINK])
    return B_LINK * m / m.sum(), float(m.sum() / (m.sum() + BETA * B_LINK))


def averaged_field(x12: np.ndarray) -> np.ndarray:
    """The sliding motion typed from (3): ``x_i' = mu_i - (mu_i + beta x_i) p`` with
    ``p = sum mu / sum (mu + beta x)`` on ``x3 = B - x1 - x2`` (numpy, for the Jacobian)."""
    m = np.array([mu(r) for r in RTT_LINK])
    x = np.array([x12[0], x12[1], B_LINK - x12[0] - x12[1]])
    p = m.sum() / np.sum(m + BETA * x)
    return (m - (m + BETA * x) * p)[:2]


def numeric_jacobian(x12: np.ndarray, h: float = 1e-6) -> np.ndarray:
    """Central differences of :func:`averaged_field`."""
    J = np.zeros((2, 2))
    for j in range(2):
        e = np.zeros(2)
        e[j] = h
        J[:, j] = (averaged_field(x12 + e) - averaged_field(x12 - e)) / (2 * h)
    return J


#: Tolerance of the random-marking cross-checks of Sec IV: the noise smooths the kinks at x_s;
#: an independent random-marking run deviated by up to 0.03 (0.237, 0.259, 0.695 against 0.25,
#: 0.25, 0.667).
RANDOM_TOL = 0.03

# --- the packet items (ns-3); every expected value below is computed before the runs
#: Packets of 1000 bytes (w = 8000 bits, printed); a rate in Mb/s is packets/s x 8000e-6.
PACKET_SIZE = 1000
#: Bottleneck capacity of topology I in ns-3 (Mb/s of 1000-byte packets): the paper's 100 Mb/s
#: scaled to 20 to keep the runs to seconds of CPU; (16)'s ratio moves by 0.005 (0.1938 against
#: 0.1987 in Case I).
PACKET_B = 20.0
#: Link delays t_1 (s) of the bottlenecks (Table I): 5 ms in every case.
T1 = 0.005
#: RED of every router (ns-2's defaults: the paper gives none) and buffer (packets).
RED_PACKET = {"min_th": 5.0, "max_th": 15.0, "p_max": 0.1, "weight": 0.002}
RED_BUFFER = 100
#: Topology II (Fig 12 is lost), reconstructed: three 20 Mb/s links in a chain (5 sources, 5
#: sinks, 4 routers: the 14 nodes of Fig 12), flows 1-3 on one link each, flows 4 and 5 over all
#: three; RTTs as printed (12, 14, 50, 22, 80 ms) but those of flows 4 and 5 swapped: with the
#: printed order flow 4 (22 ms) would get more than flow 5 (80 ms) on the same path, against
#: Fig 13; swapped, the square-root law gives 13.2, 13.2, 13.2, 1.5, 5.4 Mb/s (Fig 13: about 12,
#: 12, 12, below 2, about 5).
TOPOLOGY_TWO_RTTS = (0.012, 0.014, 0.050, 0.080, 0.022)
B_TOPOLOGY_TWO = 20.0
#: Fig 13 (all TCP-Reno), printed: flows 1-3 about 12 Mb/s, flow 5 about 5, flow 4 below 2.
FIG13 = {"flows 1-3": 12.0, "flow 5": 5.0, "flow 4 below": 2.0}
#: Sec V: the MRG target of flow 4 (Mb/s) and the r_max of the runs (1: all TCP; 1.25 < 2;
#: Figs 14 and 15).
MRG_THETA = 3.0
MRG_R_PACKET = (1.0, 1.25, 2.0, 3.0)


def mbps(pkts_per_s):
    """Packets/s of 1000-byte packets in Mb/s."""
    return np.asarray(pkts_per_s, dtype=float) * W_MB


def square_root_rate(rtt: float, loss: float) -> float:
    """Mathis et al.'s TCP rate ``sqrt(3/2) / (RTT sqrt(p))`` in packets/s (independent losses
    at rate ``p`` per packet, one halving per loss)."""
    return math.sqrt(1.5 / loss) / rtt


def topology_two_fluid(
    r: float = 1.0, theta: float = MRG_THETA, x4=None
) -> tuple[np.ndarray, float]:
    """The averaged binary-feedback law on the reconstructed topology II (rates in Mb/s, time in
    RTTs, congestion avoidance): flows 1-3 at ``U'(x_l) = lambda_l``, flow 5 at ``U'(x_5) =
    lambda_1 + lambda_2 + lambda_3``, flow 4 at ``U'(x_4) + log(r) [x_4 < theta] = sum lambda``
    (the MRG law (20) averaged), or held at ``x4``; ``U' = log(1 + mu/(beta x))``. Returns the
    rates of flows 1-5 and the path price (plain scipy)."""
    from scipy.optimize import fsolve

    m = [mu(t) for t in TOPOLOGY_TWO_RTTS]

    def up(x, mu_):
        return math.log(1 + mu_ / (BETA * x))

    def held(v):
        """The other flows' equilibrium with flow 4 at ``v``: rates and path price."""

        def eqs(z):
            lam = np.exp(z)
            x = [mu_ / (BETA * math.expm1(p)) for mu_, p in zip(m[:3], lam, strict=False)]
            x5 = m[4] / (BETA * math.expm1(lam.sum()))
            return [x[k] + v + x5 - B_TOPOLOGY_TWO for k in range(3)]

        lam = np.exp(fsolve(eqs, np.log([0.05, 0.05, 0.02]), xtol=1e-13))
        S = float(lam.sum())
        x = [m[k] / (BETA * math.expm1(lam[k])) for k in range(3)]
        return np.array([*x, v, m[4] / (BETA * math.expm1(S))]), S

    if x4 is not None:
        return held(x4)

    def gap(v, bonus):
        return up(v, m[3]) + bonus - held(v)[1]

    bonus = math.log(r)
    if gap(theta, bonus) < 0:  # below theta, even with the bonus
        return held(brentq(gap, 1e-6, theta, args=(bonus,), xtol=1e-12))
    if gap(theta, 0.0) > 0:  # above theta, without it
        return held(brentq(gap, theta, B_TOPOLOGY_TWO * (1 - 1e-9), args=(0.0,), xtol=1e-12))
    return held(theta)  # held at theta: the sliding mode on x_4 = theta


def topology_two_r_crit(theta: float = MRG_THETA) -> float:
    """The r_max above which the averaged law holds flow 4 at ``theta``: ``exp(lambda(theta) -
    U'_4(theta))``, ``lambda(theta)`` the path price with flow 4 held there."""
    _, S = topology_two_fluid(theta=theta, x4=theta)
    return math.exp(S - math.log(1 + mu(TOPOLOGY_TWO_RTTS[3]) / (BETA * theta)))


def utility_optimum(B: float, mus, thresholds) -> tuple[float, float]:
    """Fig 3's theoretical maximum: the largest ``sum_l U(B - x4; mu_l, xs_l) + U(x4; mu_4,
    xs_4)`` over ``x4`` (each link full), ``U`` the TCP utility (8)/(12)/(14) of each flow's
    measured threshold; returns (the maximum, the maximiser x4)."""
    mus, xs = list(mus), list(thresholds)

    def total(x4):
        return sum(float(u_tcp(B - x4, mus[k], xs[k])) for k in range(3)) + float(
            u_tcp(x4, mus[3], xs[3])
        )

    res = minimize_scalar(
        lambda v: -total(v), bounds=(1e-9, B - 1e-9), method="bounded", options={"xatol": 1e-10}
    )
    # the utility has kinks at the thresholds: compare the search with them
    cands = [float(res.x)] + [v for v in (xs[3], *(B - x for x in xs[:3])) if 0 < v < B]
    best = max(cands, key=total)
    return total(best), best


# --- the sizes of the items: full runs, and the reduced ones of a quick run
#: Length (RTTs) of the discrete-time runs of Table II and of the random-marking cross-checks.
T_DISCRETE = 3000.0
T_DISCRETE_QUICK = 1500.0
#: ns-3 runs of the packet items (simulated seconds), full and quick; rates over the second half.
PACKET_T = 40.0
PACKET_T_QUICK = 10.0
