"""Congestion-control laws written from scratch with :class:`fluidnet.Model`, as a user would.

None of these comes from :mod:`fluidnet.models`: each is typed here from the equations of its
source, with this module's own choice of default values (said where they are ours). They are
the test bed of issue 34 (equilibria, charts, boundaries and critical values on the user's own
law) and of ``benchmarks/bench_user_laws.py``.

Every function returns a :class:`fluidnet.Model` with all parameters given a default, so that
``law().equilibrium()`` and ``fn.stability_chart(law(), {...})`` work as they are. ``LAWS`` lists
them by name, with the (small) parameter plane the benchmarks and tests chart.

Sources
-------
* [MGT] V. Misra, W.-B. Gong, D. Towsley, "Fluid-based analysis of a network of AQM routers
  supporting TCP flows with an application to RED", ACM SIGCOMM 2000, eqs. (1)-(2) (window and
  queue, RTT = propagation + queueing delay).
* [HMTG] C. V. Hollot, V. Misra, D. Towsley, W.-B. Gong, "On designing improved controllers for
  AQM routers supporting TCP flows", IEEE INFOCOM 2001, Sec. III-IV (PI controller
  ``C(s) = K (s/z + 1)/s`` on the queue error; example N = 60, C = 3750, Tp = 0.2,
  q0 = 175, K = 9.64e-6, z = 0.53).
* [KMT] F. P. Kelly, A. K. Maulloo, D. K. H. Tan, "Rate control for communication networks:
  shadow prices, proportional fairness and stability", J. Oper. Res. Soc. 49 (1998), eq. (5)
  (the primal algorithm ``x_r' = kappa_r (w_r - x_r sum_l mu_l)``).
* [S] R. Srikant, "The Mathematics of Internet Congestion Control", Birkhauser 2004, Ch. 3
  (primal-dual algorithm: source ``x' = kappa (U'(x) - q)``, link price
  ``p' = h (y - c)^+_p``) and Ch. 5-6 (the same laws with feedback delays).
* [LMS] J.-W. Lee, R. R. Mazumdar, N. B. Shroff, "Non-convex optimization and rate control for
  multi-class services in the Internet", IEEE/ACM Trans. Networking 13(4), 2005, Sec. II
  (sigmoidal utilities of real-time traffic, ``U(x) = 1/(1 + exp(-a (x - b)))``, under which
  the rate law has several equilibria).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

import fluidnet as fn

sympy = fn.sympy
t = fn.t

__all__ = [
    "tcp_red_rtt",
    "primal_dual",
    "kelly_three_routes",
    "pi_over_tcp",
    "sigmoid_rate",
    "tandem_two_class",
    "kelly_network",
    "dumbbell",
    "kelly_twenty",
    "kelly_thirty_unequal",
    "kelly_thirty_delays",
    "kelly_hundred",
    "LAWS",
    "UserLaw",
]


# --------------------------------------------------------------------------- (a) [MGT] + RED
def tcp_red_rtt(**values: float) -> fn.Model:
    """Window/queue TCP on one link with linear RED and an RTT that includes the queue.

    Exactly the law of issue 34 (after [MGT] eqs. (1)-(2), with the RTT of the return path taken
    at time ``t``)::

        W' = 1/R - W(t) W(t - R) p(t - R) / (2 R)
        q' = N W / R - C              (q projected at 0)
        p  = K q,   R = d + q / C

    Defaults ``N = 50`` flows, ``C = 3750`` pkts/s, ``d = 0.2`` s, ``K = 1e-4`` /pkt (the
    issue's). The equilibrium solves the cubic ``(d + q/C)^2 C^2 K q = 2 N^2``.
    """
    W, q = fn.states("W q")
    p = fn.signals("p")
    N, C, d, K = fn.params("N C d K")
    R = d + q(t) / C
    m = fn.Model(
        rhs={
            W: 1 / R - W(t) * W(t - R) * p(t - R) / (2 * R),
            q: N * W(t) / R - C,
        },
        params={
            N: fn.Param(50.0, "1", "number of TCP flows", (0, None)),
            C: fn.Param(3750.0, "pkts/s", "link capacity", (0, None)),
            d: fn.Param(0.2, "s", "round-trip propagation delay", (0, None)),
            K: fn.Param(1e-4, "1/pkt", "slope of the linear RED profile", (0, None)),
        },
        signals={p: K * q(t)},
        nonnegative=[q],
        name="user_tcp_red_rtt",
    )
    return m.with_params(**values) if values else m


# ----------------------------------------------------------------------------- (b) [S] Ch. 3
def primal_dual(**values: float) -> fn.Model:
    """Primal-dual rate control of one source on one link, with feedback delays ([S] Ch. 3, 6).

    ::

        x' = kappa (w - x(t) p(t - Tb))          (source: log utility w log x, times x)
        p' = gamma (x(t - Tf) - c) / c           (link price, projected at 0)

    Equilibrium ``x = c``, ``p = w / c``. Defaults (ours): ``kappa = 1``, ``gamma = 1``,
    ``w = 1``, ``c = 10``, ``Tf = Tb = 0.05`` s.
    """
    x, p = fn.states("x p")
    kappa, gamma, w, c, Tf, Tb = fn.params("kappa gamma w c Tf Tb")
    m = fn.Model(
        rhs={
            x: kappa * (w - x(t) * p(t - Tb)),
            p: gamma * (x(t - Tf) - c) / c,
        },
        params={
            kappa: fn.Param(1.0, "1/s", "source gain", (0, None)),
            gamma: fn.Param(1.0, "1/s", "price gain", (0, None)),
            w: fn.Param(1.0, "pkts/s", "willingness to pay", (0, None)),
            c: fn.Param(10.0, "pkts/s", "link capacity", (0, None)),
            Tf: fn.Param(0.05, "s", "forward delay source -> link", (0, None)),
            Tb: fn.Param(0.05, "s", "backward delay link -> source", (0, None)),
        },
        nonnegative=[p],
        name="user_primal_dual",
    )
    return m.with_params(**values) if values else m


# -------------------------------------------------------------------- (c) [KMT] three routes
#: Routes of the three-route network: route 0 crosses both links, routes 1 and 2 one each.
THREE_ROUTES = ((0, 1), (0,), (1,))


def kelly_three_routes(**values: float) -> fn.Model:
    """Kelly's primal algorithm on two links and three routes with exponential marking.

    [KMT] eq. (5) with a round-trip delay ``T_r`` per route::

        x_r' = kappa (w_r - x_r(t - T_r) q_r(t - T_r)),   q_r = sum over links l of r of p_l
        p_l  = exp(B (y_l / C_l - 1)) / 100,              y_l = sum over routes r through l of x_r

    Route 0 crosses links 0 and 1; routes 1 and 2 cross link 0 and link 1 alone. Defaults (ours):
    ``kappa = 1``, ``w_r = 1``, ``C_0 = C_1 = 10`` pkts/s, ``T = (0.1, 0.2, 0.3)`` s and
    ``B = 12`` (the case of issue 34). The equilibrium is unique: the law is the gradient flow of
    a strictly concave utility ([KMT] Theorem 1).
    """
    x = fn.states("x0 x1 x2")
    p = fn.signals("p0 p1")
    kappa, B, C0, C1, T0, T1, T2 = fn.params("kappa B C0 C1 T0 T1 T2")
    w = fn.params("w0 w1 w2")
    Cs, Ts = (C0, C1), (T0, T1, T2)
    y = [sum(x[r](t) for r, links in enumerate(THREE_ROUTES) if link in links) for link in (0, 1)]
    rhs = {}
    for r, links in enumerate(THREE_ROUTES):
        q_back = sum(p[link](t - Ts[r]) for link in links)
        rhs[x[r]] = kappa * (w[r] - x[r](t - Ts[r]) * q_back)
    params: dict = {
        kappa: fn.Param(1.0, "1/s", "source gain", (0, None)),
        B: fn.Param(12.0, "1", "steepness of the exponential marking", (0, None)),
        C0: fn.Param(10.0, "pkts/s", "capacity of link 0", (0, None)),
        C1: fn.Param(10.0, "pkts/s", "capacity of link 1", (0, None)),
    }
    for r in range(3):
        params[w[r]] = fn.Param(1.0, "pkts/s", f"willingness to pay of route {r}", (0, None))
        params[Ts[r]] = fn.Param(0.1 * (r + 1), "s", f"round-trip delay of route {r}", (0, None))
    m = fn.Model(
        rhs=rhs,
        params=params,
        signals={p[link]: sympy.exp(B * (y[link] / Cs[link] - 1)) / 100 for link in (0, 1)},
        nonnegative=list(x),
        name="user_kelly_three_routes",
    )
    return m.with_params(**values) if values else m


# ------------------------------------------------------------------------- (d) [HMTG] PI AQM
def pi_over_tcp(**values: float) -> fn.Model:
    """TCP flows on a queue regulated by a PI controller, the integrator as a state.

    [MGT] window/queue with the PI law of [HMTG], ``C(s) = K_I (s/z + 1)/s`` written as
    ``p = K_P e + K_I z_int``, ``z_int' = e``, ``e = q - q_ref`` with ``K_P = K_I / z``::

        W' = 1/R - W(t) W(t - R) p(t - R) / (2 R),   R = Tp + q/C
        q' = N W / R - C                               (q projected at 0)
        s' = q - q_ref,                                p = K_P (q - q_ref) + K_I s

    Defaults: [HMTG]'s design example ``N = 60``, ``C = 3750`` pkts/s, ``Tp = 0.2`` s,
    ``q_ref = 175`` pkts, ``K_I = 9.64e-6``, ``K_P = 9.64e-6 / 0.53``. The equilibrium has
    ``q = q_ref`` (integral action), ``W = R C / N`` and ``p = 2 / W^2``.
    """
    W, q, s = fn.states("W q s")
    p = fn.signals("p")
    N, C, Tp, q_ref, K_I, K_P = fn.params("N C Tp q_ref K_I K_P")
    R = Tp + q(t) / C
    m = fn.Model(
        rhs={
            W: 1 / R - W(t) * W(t - R) * p(t - R) / (2 * R),
            q: N * W(t) / R - C,
            s: q(t) - q_ref,
        },
        params={
            N: fn.Param(60.0, "1", "number of TCP flows", (0, None)),
            C: fn.Param(3750.0, "pkts/s", "link capacity", (0, None)),
            Tp: fn.Param(0.2, "s", "round-trip propagation delay", (0, None)),
            q_ref: fn.Param(175.0, "pkts", "reference queue", (0, None)),
            K_I: fn.Param(9.64e-6, "1/(pkt s)", "integral gain", (0, None)),
            K_P: fn.Param(9.64e-6 / 0.53, "1/pkt", "proportional gain", (0, None)),
        },
        signals={p: K_P * (q(t) - q_ref) + K_I * s(t)},
        nonnegative=[q],
        name="user_pi_over_tcp",
    )
    return m.with_params(**values) if values else m


# ------------------------------------------------------------------ (e) [LMS] several equilibria
def sigmoid_rate(**values: float) -> fn.Model:
    """A rate law with a sigmoidal utility: three equilibria ([LMS] Sec. II).

    The source moves its rate along the delayed report of its marginal utility minus the price::

        x' = kappa (U'(x(t - T)) - g x(t - T)),    U(x) = 1 / (1 + exp(-a (x - b)))

    so ``U'(x) = a sigma (1 - sigma)``, ``sigma = U(x)``. Defaults (ours): ``a = 2``, ``b = 5``,
    ``g = 0.05``, ``kappa = 1``, ``T = 1`` s: ``U'(x) = g x`` has three roots (near 0.0018, 3.96
    and 5.78). Linearized at a root ``x*``: ``s = kappa f'(x*) e^{-s T}`` with
    ``f = U' - g x``; it is stable iff ``f'(x*) < 0`` and ``kappa |f'(x*)| T < pi/2``.
    """
    x = fn.states("x")
    kappa, a, b, g, T = fn.params("kappa a b g T")
    xd = x(t - T)
    sig = 1 / (1 + sympy.exp(-a * (xd - b)))
    m = fn.Model(
        rhs={x: kappa * (a * sig * (1 - sig) - g * xd)},
        params={
            kappa: fn.Param(1.0, "1/s", "source gain", (0, None)),
            a: fn.Param(2.0, "1/(pkts/s)", "steepness of the utility", (0, None)),
            b: fn.Param(5.0, "pkts/s", "inflection rate of the utility", (0, None)),
            g: fn.Param(0.05, "1/(pkts/s)", "price per unit rate", (0, None)),
            T: fn.Param(1.0, "s", "feedback delay", (0, None)),
        },
        nonnegative=[x],
        name="user_sigmoid_rate",
    )
    return m.with_params(**values) if values else m


# --------------------------------------------------------------- (g) [MGT] two links in tandem
def tandem_two_class(**values: float) -> fn.Model:
    """Two TCP classes over two RED links in tandem (the 4-state law of issue 34).

    [MGT] window/queue equations per class; class 1 (``N1`` flows) crosses links 1 and 2,
    class 2 (``N2`` flows) link 2 only; each RTT includes the queues it crosses; linear RED
    ``p_l = K_l q_l``, class 1 marked by both links (``p1 + p2``, marks rare)::

        R1 = d1 + q1/C1 + q2/C2,   R2 = d2 + q2/C2
        W1' = 1/R1 - W1(t) W1(t - R1) (p1 + p2)(t - R1) / (2 R1)
        W2' = 1/R2 - W2(t) W2(t - R2) p2(t - R2) / (2 R2)
        q1' = N1 W1/R1 - C1,   q2' = N1 W1/R1 + N2 W2/R2 - C2      (queues projected at 0)

    (the second link sees class 1's sending rate, not the first queue's output: the usual
    network simplification of [MGT] Sec. 3). Defaults (ours): ``N1 = 40``, ``N2 = 20``,
    ``C1 = 2000``, ``C2 = 3750`` pkts/s, ``d1 = 0.15``, ``d2 = 0.1`` s, ``K1 = K2 = 1e-4``: both
    links congested, ``N1 W1/R1 = C1`` and ``N2 W2/R2 = C2 - C1`` (``q1 = 44``, ``q2 = 139``
    pkts); with longer ``d1`` the first queue empties (``q1 = 2`` at ``d1 = 0.2``).
    """
    W1, W2, q1, q2 = fn.states("W1 W2 q1 q2")
    p1, p2 = fn.signals("p1 p2")
    N1, N2, C1, C2, d1, d2, K1, K2 = fn.params("N1 N2 C1 C2 d1 d2 K1 K2")
    R1 = d1 + q1(t) / C1 + q2(t) / C2
    R2 = d2 + q2(t) / C2
    m = fn.Model(
        rhs={
            W1: 1 / R1 - W1(t) * W1(t - R1) * (p1(t - R1) + p2(t - R1)) / (2 * R1),
            W2: 1 / R2 - W2(t) * W2(t - R2) * p2(t - R2) / (2 * R2),
            q1: N1 * W1(t) / R1 - C1,
            q2: N1 * W1(t) / R1 + N2 * W2(t) / R2 - C2,
        },
        params={
            N1: fn.Param(40.0, "1", "flows of class 1", (0, None)),
            N2: fn.Param(20.0, "1", "flows of class 2", (0, None)),
            C1: fn.Param(2000.0, "pkts/s", "capacity of link 1", (0, None)),
            C2: fn.Param(3750.0, "pkts/s", "capacity of link 2", (0, None)),
            d1: fn.Param(0.15, "s", "propagation RTT of class 1", (0, None)),
            d2: fn.Param(0.1, "s", "propagation RTT of class 2", (0, None)),
            K1: fn.Param(1e-4, "1/pkt", "RED slope of link 1", (0, None)),
            K2: fn.Param(1e-4, "1/pkt", "RED slope of link 2", (0, None)),
        },
        signals={p1: K1 * q1(t), p2: K2 * q2(t)},
        nonnegative=[q1, q2],
        name="user_tandem_two_class",
    )
    return m.with_params(**values) if values else m


# ------------------------------------------------------------------- (f), (h) [KMT] networks
def kelly_network(
    routes: Sequence[Sequence[int]],
    n_links: int,
    *,
    delay_classes: int = 3,
    filtered: bool = False,
    heterogeneous: bool = False,
    name: str = "user_kelly_network",
) -> fn.Model:
    """Kelly's primal algorithm ([KMT] eq. (5)) on any routing, power-law marking.

    ::

        x_r' = kappa (w - x_r(t - T_r) sum_{l in r} p_l(t - T_r))
        p_l  = (u_l / C)^m,   u_l = y_l = sum_{r through l} x_r    (filtered=False)
        u_l' = beta (y_l - u_l)                                     (filtered=True: a state)

    Route ``r`` has the round-trip delay ``T (1 + (r mod delay_classes) / delay_classes)``, so
    the system has ``delay_classes`` distinct delays. ``filtered`` adds one low-pass (RED-like
    averaging) state per link. ``heterogeneous`` gives route ``r`` the willingness to pay
    ``w (1 + ((3 r) mod 7)/7)`` (otherwise all routes are alike, and a ring's symmetry makes
    many characteristic roots multiple). Defaults (ours): ``kappa = 0.5``, ``w = 1``, ``C = 10``,
    ``m = 4``, ``T = 0.1`` s, ``beta = 5`` /s.
    """
    R = len(routes)
    x = fn.states([f"x{r}" for r in range(R)])
    x = x if isinstance(x, tuple) else (x,)
    kappa, w, C, mexp, T, beta = fn.params("kappa w C m T beta")
    p = fn.signals([f"p{link}" for link in range(n_links)])
    p = p if isinstance(p, tuple) else (p,)
    y = [sum(x[r](t) for r in range(R) if link in routes[r]) for link in range(n_links)]
    rhs: dict = {}
    signals: dict = {}
    if filtered:
        u = fn.states([f"u{link}" for link in range(n_links)])
        u = u if isinstance(u, tuple) else (u,)
        level = [u[link](t) for link in range(n_links)]
    else:
        level = y
    for r, links in enumerate(routes):
        Tr = T * (1 + sympy.Rational(r % delay_classes, delay_classes))
        wr = w * (1 + sympy.Rational((3 * r) % 7, 7)) if heterogeneous else w
        rhs[x[r]] = kappa * (wr - x[r](t - Tr) * sum(p[link](t - Tr) for link in links))
    if filtered:
        for link in range(n_links):
            rhs[u[link]] = beta * (y[link] - u[link](t))
    for link in range(n_links):
        signals[p[link]] = (level[link] / C) ** mexp
    params = {
        kappa: fn.Param(0.5, "1/s", "source gain", (0, None)),
        w: fn.Param(1.0, "pkts/s", "willingness to pay (every route)", (0, None)),
        C: fn.Param(10.0, "pkts/s", "link capacity (every link)", (0, None)),
        mexp: fn.Param(4.0, "1", "exponent of the marking", (0, None)),
        T: fn.Param(0.1, "s", "base round-trip delay", (0, None)),
    }
    if filtered:
        params[beta] = fn.Param(5.0, "1/s", "bandwidth of the load filter", (0, None))
    return fn.Model(rhs=rhs, params=params, signals=signals, nonnegative=list(x), name=name)


def dumbbell(n_flows: int = 16) -> fn.Model:
    """Kelly's primal algorithm on one link shared by ``n_flows`` flows, flow ``r`` with the
    round-trip delay ``T (1 + r / n_flows)`` (every flow its own): :func:`kelly_network` with a
    single route and as many delay classes as flows. Its flows are one group of
    :func:`fluidnet.linear.aggregate.grouped` (a 1 x 1 Schur complement)."""
    return kelly_network(
        [(0,)] * n_flows, 1, delay_classes=n_flows, name=f"user_dumbbell_{n_flows}"
    )


def _ring_routes(n_routes: int, n_links: int, hops: int) -> list[tuple[int, ...]]:
    """Route ``r`` crosses ``1 + r mod hops`` consecutive links of a ring, from link ``r``."""
    return [tuple((r + j) % n_links for j in range(1 + r % hops)) for r in range(n_routes)]


def kelly_twenty(**values: float) -> fn.Model:
    """(f) 20 flows on a ring of 5 links (routes of 1 to 3 hops), :func:`kelly_network`."""
    m = kelly_network(_ring_routes(20, 5, 3), 5, name="user_kelly_twenty")
    return m.with_params(**values) if values else m


def kelly_thirty_unequal(**values: float) -> fn.Model:
    """(g) 30 flows on a ring of 6 links (1 to 3 hops) with unequal willingness to pay and no load
    filter, :func:`kelly_network` with ``heterogeneous=True``: the five flows of a route differ
    in rate, and each is fed back the route's price in proportion to its own, so they are not
    alike but row-coupled (:mod:`fluidnet.linear.aggregate`), with a four-fold root for each
    route's differences."""
    m = kelly_network(
        _ring_routes(30, 6, 3), 6, heterogeneous=True, name="user_kelly_thirty_unequal"
    )
    return m.with_params(**values) if values else m


def kelly_thirty_delays(**values: float) -> fn.Model:
    """(h) 30 flows on a ring of 6 links (1 to 3 hops) and five round-trip delays, no load
    filter, :func:`kelly_network` with ``delay_classes=5``: the five flows of a route each have
    their own delay, so no two states are alike or row-coupled, but each route's flows are a
    group of :func:`fluidnet.linear.aggregate.grouped` (a 6 x 6 Schur complement)."""
    m = kelly_network(_ring_routes(30, 6, 3), 6, delay_classes=5, name="user_kelly_thirty_delays")
    return m.with_params(**values) if values else m


def kelly_hundred(**values: float) -> fn.Model:
    """A 100-state network: 90 flows on a ring of 10 links (1 to 3 hops) and one load filter
    per link, :func:`kelly_network` with ``filtered=True`` and unequal willingness to pay."""
    m = kelly_network(
        _ring_routes(90, 10, 3), 10, filtered=True, heterogeneous=True, name="user_kelly_hundred"
    )
    return m.with_params(**values) if values else m


# ------------------------------------------------------------------------------------ registry
@dataclass(frozen=True)
class UserLaw:
    """A law of this module and the parameter plane charted for it."""

    name: str
    build: Callable[..., fn.Model]
    #: ``{parameter: (lo, hi)}``: the plane of the chart (two parameters)
    plane: dict[str, tuple[float, float]]
    #: ``(parameter, (lo, hi))``: the 1-D range of critical_value
    sweep: tuple[str, tuple[float, float]]
    #: the number of states
    states: int = field(default=0)


LAWS: dict[str, UserLaw] = {
    law.name: law
    for law in (
        UserLaw(
            "tcp_red_rtt",
            tcp_red_rtt,
            {"d": (0.05, 0.4), "K": (2e-5, 3e-4)},
            ("d", (0.01, 1.0)),
            2,
        ),
        UserLaw(
            "primal_dual",
            primal_dual,
            {"kappa": (0.5, 20.0), "Tb": (0.01, 0.5)},
            ("Tb", (0.01, 2.0)),
            2,
        ),
        UserLaw(
            "kelly_three_routes",
            kelly_three_routes,
            {"kappa": (0.2, 5.0), "B": (4.0, 16.0)},
            ("kappa", (0.1, 20.0)),
            3,
        ),
        UserLaw(
            "pi_over_tcp",
            pi_over_tcp,
            {"N": (10.0, 120.0), "Tp": (0.05, 1.0)},
            ("Tp", (0.05, 1.0)),
            3,
        ),
        UserLaw(
            "sigmoid_rate",
            sigmoid_rate,
            {"kappa": (1.0, 20.0), "T": (0.5, 5.0)},
            ("T", (0.1, 60.0)),
            1,
        ),
        UserLaw(
            "tandem_two_class",
            tandem_two_class,
            {"d1": (0.05, 1.0), "K2": (2e-5, 1e-3)},
            ("d1", (0.01, 2.0)),
            4,
        ),
        UserLaw(
            "kelly_twenty",
            kelly_twenty,
            {"kappa": (0.1, 2.0), "T": (0.02, 0.3)},
            ("kappa", (0.05, 20.0)),
            20,
        ),
        UserLaw(
            "kelly_thirty_unequal",
            kelly_thirty_unequal,
            {"kappa": (0.1, 2.0), "T": (0.02, 0.3)},
            ("kappa", (0.05, 20.0)),
            30,
        ),
        UserLaw(
            "kelly_thirty_delays",
            kelly_thirty_delays,
            {"kappa": (0.1, 2.0), "T": (0.02, 0.3)},
            ("kappa", (0.05, 20.0)),
            30,
        ),
        UserLaw(
            "kelly_hundred",
            kelly_hundred,
            {"kappa": (0.1, 2.0), "T": (0.02, 0.3)},
            ("kappa", (0.05, 20.0)),
            100,
        ),
    )
}


def plane_axes(law: UserLaw, n: int) -> dict[str, np.ndarray]:
    """The chart grid of ``law``: ``n`` points per axis of its plane."""
    return {k: np.linspace(lo, hi, n) for k, (lo, hi) in law.plane.items()}
