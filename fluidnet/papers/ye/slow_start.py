"""Sec IV: a fixed slow-start threshold x_s (Case I delays).

* x_s > B/2 (Figs 7, 8): the optimum of (8)+(12) has flows 1-3 at x_s and flow 4 at B - x_s;
* x_s < B/2 (Figs 9-11, Table III): with the approximate law (18) and its utility (19) for the
  flows that fall below x_s at each congestion event;
* the exact fluid TCP law with the same thresholds, for contrast: it does not give Table III
  (the packet-level halving below x_s followed by slow start is what (18) models).

Each optimum is checked from the fluid law at steady state (Filippov sliding, exact) and from
the discrete-time law with seeded random marking (a noisy cross-check).
"""

from __future__ import annotations

import numpy as np
import sympy
from scipy.optimize import minimize_scalar

import fluidnet as fn

from ...models.sliding_mode import RATE, tcp_utility, topology_one_network
from ..registry import Context
from ..targets import Value
from . import PAPER
from .data import (
    B_TOPOLOGY_ONE,
    FIXED_LARGE,
    RTTS,
    T_DISCRETE,
    T_DISCRETE_QUICK,
    TABLE_III,
    TABLE_III_EXACT,
    mu,
)
from .rate_allocation import T_END, ratio

#: Start below every threshold (slow start first), in Mb/s.
X0 = {"x_1": 1.0, "x_2": 2.0, "x_3": 3.0, "x_4": 1.0}
#: Random marking of the noisy cross-check: width 0.1 % of B, step 0.01 RTT, seed 1.
RANDOM = {"dt": 0.01, "width": 1e-3, "seed": 1}
#: (threshold, flows on the approximate law (18)) of Table III
TABLE_III_SETUP = {10: (4,), 20: (4,), 40: (1, 2, 3, 4)}


def fluid(x_s: float, approximate=(), t_end: float = T_END):
    """Solution of the binary-feedback law of topology I (Case I) with threshold ``x_s``."""
    net = topology_one_network("I", x_s=x_s, approximate=approximate)
    return fn.simulate(net.model(), t_end, history=X0)


def library_optimum(x_s: float, case: str = "I") -> float:
    """x4 maximizing 3 U(B - x4) + U(x4) with :func:`fluidnet.models.tcp_utility`."""
    r13, r4 = RTTS[case]
    U13 = sympy.lambdify(RATE, tcp_utility(mu(r13), x_s=x_s), np)
    U4 = sympy.lambdify(RATE, tcp_utility(mu(r4), x_s=x_s), np)
    B = B_TOPOLOGY_ONE
    res = minimize_scalar(
        lambda v: -(3 * U13(B - v) + U4(v)),
        bounds=(0.0, B),
        method="bounded",
        options={"xatol": 1e-10},
    )
    return float(res.x)


def noisy(x_s: float, approximate=(), t_end: float = T_DISCRETE):
    """Mean rates of the discrete-time law with random marking (:data:`RANDOM`)."""
    net = topology_one_network("I", x_s=x_s, approximate=approximate)
    run = net.discrete(
        t_end,
        RANDOM["dt"],
        list(X0.values()),
        marking="random",
        width=RANDOM["width"],
        seed=RANDOM["seed"],
    )
    return run.mean_rates


@PAPER.item(
    title="Sec IV: fixed x_s > B/2, Table III, exact-law contrast; Figs 7-11",
    quick={"t_noisy": T_DISCRETE_QUICK},
)
def fixed_threshold(ctx: Context, t_noisy: float = T_DISCRETE) -> dict:
    """Sec IV: fixed threshold x_s > B/2, Table III, the exact law, the Sec IV claims (the
    random-marking cross-checks run for ``t_noisy`` RTTs)."""
    B = B_TOPOLOGY_ONE
    sols, rows, values = {}, [], {}
    # x_s > B/2
    for xs, printed in FIXED_LARGE.items():
        sol = fluid(xs)
        v = sol(T_END)
        sols[f"x_s = {xs} (Fig {7 if xs == 80 else 8})"] = sol
        if xs == 80:
            values["x4:x", xs] = values["optimum", xs] = ratio(v)
        else:
            values["x4", xs] = float(v[3])
        values["flows 1-3", xs] = float(np.mean(v[:3]))
        nv = noisy(xs, t_end=t_noisy)
        values["random", xs] = ratio(nv) if xs == 80 else float(nv[3])
        rows.append(
            {
                "x_s": xs,
                "law": "TCP (8)+(12)",
                "paper": printed,
                "fluid": round(ratio(v), 6),
                "random_marking": round(ratio(nv), 4),
            }
        )
    # the claim for other thresholds, from the library's utility (8)+(12)+(14)
    gets = {xs: library_optimum(xs) for xs in (60.0, 70.0, 80.0, 90.0, 100.0)}
    holds = all(abs(v - (B - xs)) < 1e-6 for xs, v in gets.items())
    values["B - x_s"] = Value(
        holds, ", ".join(f"x_s = {xs:g}: x4 = {v:.4f}" for xs, v in gets.items())
    )
    # Table III with the approximate law
    for xs, setup in TABLE_III_SETUP.items():
        sol = fluid(xs, setup)
        sols[f"x_s = {xs}, (18) for flows {setup} (Fig {9 + (xs > 10) + (xs > 20)})"] = sol
        v = ratio(sol(T_END))
        values |= {("Table III", xs): v, ("(19)", xs): v, ("brentq", xs): v}
        nv = noisy(xs, setup, t_end=t_noisy)
        values["random (19)", xs] = ratio(nv)
        rows.append(
            {
                "x_s": xs,
                "law": f"(18) for flows {setup}",
                "paper": TABLE_III[xs],
                "fluid": round(v, 6),
                "random_marking": round(ratio(nv), 4),
            }
        )
    shares = [TABLE_III_EXACT[xs] for xs in (10, 20, 40)]
    values["share"] = Value(bool(np.all(np.diff(shares) > 0)), str(shares))
    # the exact fluid TCP law with the same thresholds
    for xs in (10, 20, 40):
        v = ratio(fluid(xs)(T_END))
        values["exact", xs] = values["exact optimum", xs] = v
        nv = noisy(xs, t_end=t_noisy)
        values["exact random", xs] = ratio(nv)
        rows.append(
            {
                "x_s": xs,
                "law": "TCP (8)+(12)",
                "paper": None,
                "fluid": round(v, 6),
                "random_marking": round(ratio(nv), 4),
            }
        )
    ctx.table("fixed_threshold", rows, ["x_s", "law", "paper", "fluid", "random_marking"])
    fig, axes = ctx.new_figure(1, 5, figsize=(22.0, 4.0))
    tt = np.linspace(0.0, 600.0, 1200)
    for ax, (label, sol) in zip(axes, sols.items(), strict=True):
        v = sol(tt)
        for i in range(4):
            ax.plot(tt, v[i], label=f"x{i + 1}")
        ax.set(xlabel="t (RTTs)", ylabel="rate (Mb/s)", title=label)
        ax.legend(fontsize=7)
    ctx.figure("fig07_11_fixed_threshold", fig)
    return values
