"""Sec V-A and V-B-2: marking levels for loss-free operation, Prop 3 (27) and Prop 5 (39).

On a single link with ``N`` identical users (27) is tight: at the largest level the equilibrium
load is exactly ``C``. On a network a link's level is chosen alone (decentralised), and the other
links' marks only lower the load, so the equilibrium is loss-free with room to spare.
"""

from __future__ import annotations

import numpy as np

from ...models import UserNetwork, log_utility, marking_level, power_utility, utility_primal
from ..registry import Context
from ..targets import Value
from . import PAPER
from .data import BETA, exp3_network


def ecn_equilibrium(net: UserNetwork, levels, guess=None, **kw) -> np.ndarray:
    m = utility_primal(net, beta=BETA, feedback="ecn", levels=levels, **kw)
    eq = m.equilibrium(guess=guess)
    return np.array([eq[f"x_{n}"] for n in net.names])


@PAPER.item(title="Sec V-A: loss-free marking levels, Props 3 and 5")
def marking_levels(ctx: Context) -> dict:
    rows, values = [], {}
    for u, name in ((log_utility(), "log"), (power_utility(1), "-1/x")):
        net = UserNetwork([[1]], u, C=100.0, N=10)
        lv = float(marking_level(net, BETA)[0])
        load = 10 * ecn_equilibrium(net, lv)[0]
        values |= {("level", name): lv, ("load", name): load, ("exact", name): lv}
        rows.append(
            {
                "network": f"1 link, 10 {name} users",
                "link": 1,
                "level": lv,
                "load": load,
                "C": 100.0,
            }
        )
    # Prop 3 on Experiment 3's network: each link alone, 100 log and 100 -1/x users
    net = exp3_network()
    lv = marking_level(net, BETA)
    values |= {("(27)", ll): lv[ll] for ll in range(2)}
    x = ecn_equilibrium(
        net,
        lv,
        guess={f"x_{n}": v for n, v in zip(net.names, (28, 5, 110, 10, 38, 6), strict=True)},
    )
    loads = net.loads(x)
    holds = bool(np.all(loads <= net.C * (1 + 1e-12)))
    values["loads"] = Value(holds, ", ".join(f"{v:.2f}" for v in loads))
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
    values["Prop 5"] = lv5 = float(marking_level(one, BETA, disturbance=10.0)[0])
    values["C - xi"] = 10 * ecn_equilibrium(one, lv5, disturbance=10.0)[0]
    ctx.table("marking_levels", rows)
    return values
