"""Sec V-A and V-B-2: marking levels for loss-free operation, Prop 3 (27) and Prop 5 (39).

On a single link with ``N`` identical users (27) is tight: at the largest level the equilibrium
load is exactly ``C``. On a network a link's level is chosen alone (decentralised), and the other
links' marks only lower the load, so the equilibrium is loss-free with room to spare.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.optimize import brentq

from ...models import UserNetwork, log_utility, marking_level, power_utility, utility_primal
from ..registry import Context
from . import PAPER
from .data import exp3_network

BETA = 0.5


def level_27(C: float, n_log: float, n_inv: float, beta: float = BETA) -> float:
    """The largest ``C~`` with ``n_log C/(beta (C - C~)) + n_inv sqrt(C/(beta (C - C~))) <= C``
    (27) for unit weights, by bisection on the printed inequality (plain scipy)."""

    def lhs(ct):
        r = C / (beta * (C - ct))
        return n_log * r + n_inv * math.sqrt(r) - C

    return brentq(lhs, 0.0, C * (1 - 1e-12), xtol=1e-10, rtol=1e-15)


def ecn_equilibrium(net: UserNetwork, levels, guess=None, **kw) -> np.ndarray:
    m = utility_primal(net, beta=BETA, feedback="ecn", levels=levels, **kw)
    eq = m.equilibrium(guess=guess)
    return np.array([eq[f"x_{n}"] for n in net.names])


@PAPER.item("marking_levels", title="Sec V-A: loss-free marking levels, Props 3 and 5")
def marking_levels(ctx: Context) -> None:
    rows = []
    for u, name, closed in (
        (log_utility(), "log", lambda N, C: C - N / BETA),
        (power_utility(1), "-1/x", lambda N, C: C - N**2 / (BETA * C)),
    ):
        net = UserNetwork([[1]], u, C=100.0, N=10)
        lv = float(marking_level(net, BETA)[0])
        ctx.check(
            "Sec V-A",
            f"10 {name} users, C = 100, beta = 0.5: largest loss-free level",
            closed(10, 100.0),
            lv,
            tol=1e-9,
            rel=True,
            note="log: N x = C~ + N/beta (printed); -1/x: from (27)",
        )
        load = 10 * ecn_equilibrium(net, lv)[0]
        ctx.check(
            "Prop 3",
            f"{name}: the load at that level is exactly C (27 is tight)",
            100.0,
            load,
            tol=1e-9,
            rel=True,
            source="derived",
        )
        rows.append(
            {
                "network": f"1 link, 10 {name} users",
                "link": 1,
                "level": lv,
                "load": load,
                "C": 100.0,
            }
        )
    ctx.check(
        "Sec V-A",
        "10 log users, C = 100: loss-free level",
        80.0,
        rows[0]["level"],
        tol=1e-9,
        source="derived",
        note="N x = C~ + N/beta at load C: C~ = C - N/beta",
    )
    ctx.check(
        "Sec V-A",
        "10 -1/x users, C = 100: loss-free level",
        98.0,
        rows[1]["level"],
        tol=1e-9,
        source="derived",
        note="N x = C~ + N/beta at load C: C~ = C - N^2/(beta C)",
    )
    # Prop 3 on Experiment 3's network: each link alone, 100 log and 100 -1/x users
    net = exp3_network()
    lv = marking_level(net, BETA)
    for ll in range(2):
        ctx.check(
            "Prop 3 (27)",
            f"Experiment 3, link {ll + 1}: level from (27)",
            level_27(net.C[ll], 100, 100),
            lv[ll],
            tol=1e-9,
            rel=True,
            source="derived",
        )
    x = ecn_equilibrium(
        net,
        lv,
        guess={f"x_{n}": v for n, v in zip(net.names, (28, 5, 110, 10, 38, 6), strict=True)},
    )
    loads = net.loads(x)
    ctx.check_true(
        "Prop 3",
        "Experiment 3 network at the (27) levels: every load <= C",
        bool(np.all(loads <= net.C * (1 + 1e-12))),
        value=", ".join(f"{v:.2f}" for v in loads),
    )
    for ll in range(2):
        rows.append(
            {
                "network": "Experiment 3",
                "link": ll + 1,
                "level": lv[ll],
                "load": loads[ll],
                "C": net.C[ll],
            }
        )
    # Prop 5 (39): a mean disturbance xi on one link with 10 log users;
    # sum w/(beta beta_r) / p(C~, C) <= C - xi at equality
    one = UserNetwork([[1]], log_utility(), C=100.0, N=10)
    lv5 = float(marking_level(one, BETA, disturbance=10.0)[0])
    ctx.check(
        "Prop 5 (39)",
        "level with mean disturbance 10: C - (N/beta) C/(C - xi)",
        100.0 - 20.0 * 100.0 / 90.0,
        lv5,
        tol=1e-9,
        rel=True,
        source="derived",
        note="(39) prints p at sum x_j; in (38) p's argument includes xi, = C at the bound",
    )
    x5 = ecn_equilibrium(one, lv5, disturbance=10.0)[0]
    ctx.check(
        "Prop 5",
        "(38) at that level: controlled load = C - xi",
        90.0,
        10 * x5,
        tol=1e-9,
        rel=True,
        source="derived",
    )
    ctx.table("marking_levels", rows)
