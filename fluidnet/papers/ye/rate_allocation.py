"""Sec III: the rate allocation of topology I (Table II), from the optimality condition (16)
and from the binary-feedback fluid law run to steady state (Filippov sliding on the three
capacity surfaces), with the smoothed, discrete-time and randomly marked variants; the fluid
analogue of Figs 4-6; the qualitative claims (17): independence of beta and B, the n-th power
for n bottlenecks, x4 : x ~ 1/3 for equal additive increase."""

from __future__ import annotations

import numpy as np
import sympy
from scipy.optimize import minimize_scalar

import fluidnet as fn

from ...models.sliding_mode import (
    RATE,
    BinaryFeedbackNetwork,
    tcp_law,
    tcp_utility,
    topology_one_network,
)
from ..registry import Context
from ..targets import Value
from . import PAPER
from .data import B_TOPOLOGY_ONE, BETA_SWEEP, RTTS, T_DISCRETE, T_DISCRETE_QUICK, TABLE_II, mu

#: A start far from the optimum with unequal one-link flows (in Mb/s).
X0 = {"x_1": 10.0, "x_2": 20.0, "x_3": 30.0, "x_4": 5.0}
#: The symmetric start of the synchronized discrete-law run (DISCRETE_SYNCHRONIZED).
X0_SYMMETRIC = {"x_1": 10.0, "x_2": 10.0, "x_3": 10.0, "x_4": 5.0}
#: Per-RTT time to steady state: the slowest sliding mode decays like exp(-0.0075 t).
T_END = 4000.0


def ratio(v) -> float:
    """x4 : x with x the mean rate of flows 1-3."""
    v = np.asarray(v, dtype=float)
    return float(v[3] / np.mean(v[:3]))


def fluid_ratio(case: str = "I", t_end: float = T_END, history=None, **params) -> tuple:
    """``(x4 : x, Solution)`` of the binary-feedback law of topology I at ``t_end``."""
    m = topology_one_network(case).model()
    sol = fn.simulate(m, t_end, history=history or X0, params=params or None)
    return ratio(sol(t_end)), sol


def optimum_ratio(case: str = "I") -> float:
    """x4 : x maximizing (15) with the library's utilities (bounded scalar search)."""
    r13, r4 = RTTS[case]
    U13 = sympy.lambdify(RATE, tcp_utility(mu(r13)), np)
    U4 = sympy.lambdify(RATE, tcp_utility(mu(r4)), np)
    B = B_TOPOLOGY_ONE
    res = minimize_scalar(
        lambda v: -(3 * U13(B - v) + U4(v)),
        bounds=(1e-9, B - 1e-9),
        method="bounded",
        options={"xatol": 1e-10},
    )
    return float(res.x / (B - res.x))


def n_bottleneck_network(n: int, mu13: float, mu4: float, B: float = B_TOPOLOGY_ONE):
    """``n`` one-link flows and one flow crossing all ``n`` links (topology I for n = 3)."""
    routes = np.zeros((n, n + 1), dtype=int)
    for k in range(n):
        routes[k, k] = 1
        routes[k, n] = 1
    laws = [tcp_law(mu13)] * n + [tcp_law(mu4)]
    return BinaryFeedbackNetwork(routes, B, laws)


@PAPER.item(
    title="Table II: x4 : x from (16) and from the fluid law; Figs 4-6 analogue",
    quick={"t_discrete": T_DISCRETE_QUICK},
)
def table2(ctx: Context, t_discrete: float = T_DISCRETE) -> dict:
    """Table II from (16) and from the fluid law, and the variants of the multi-link marking
    (the discrete-time law run for ``t_discrete`` RTTs)."""
    rows, traces, values = [], {}, {}
    for case, printed in TABLE_II.items():
        opt = optimum_ratio(case)
        law4 = topology_one_network(case).laws[3]
        law1 = topology_one_network(case).laws[0]
        approx = law4.params["mu"].value / (3 * law1.params["mu"].value)
        fluid, sol = fluid_ratio(case)
        values |= {("Table II", case): opt, ("(16)", case): opt, ("(17)", case): approx}
        values["fluid", case] = fluid
        traces[case] = sol
        rows.append(
            {
                "case": case,
                "paper": printed,
                "eq16": round(opt, 6),
                "eq17": round(approx, 6),
                "fluid_filippov": round(fluid, 6),
                "x4": round(float(sol(T_END)[3]), 4),
            }
        )
    # the same from a symmetric start: three surfaces reached at once
    values["symmetric"], _ = fluid_ratio("I", history=X0_SYMMETRIC)
    # variants of the path indicator (note: the product form is what (16) assumes)
    net = topology_one_network("I")
    sm = net.model(marking="smooth", width=1e-3)
    ssol = fn.simulate(sm, T_END, history=X0)
    sync = fn.simulate(
        net.model(marking="smooth", width=1e-3, correlation="synchronized"), T_END, history=X0
    )
    d_sym = net.discrete(t_discrete, 0.01, list(X0_SYMMETRIC.values()))
    d_asym = net.discrete(t_discrete, 0.01, list(X0.values()))
    d_rand = net.discrete(t_discrete, 0.01, list(X0_SYMMETRIC.values()), marking="random", seed=1)
    values |= {"smooth": ratio(ssol(T_END)), "synchronized": ratio(sync(T_END))}
    values["discrete symmetric"] = ratio(d_sym.mean_rates)
    values["discrete asymmetric"] = ratio(d_asym.mean_rates)
    values["discrete random"] = ratio(d_rand.mean_rates)
    rows.append({"case": "I smooth", "fluid_filippov": round(ratio(ssol(T_END)), 6)})
    rows.append({"case": "I smooth synchronized", "fluid_filippov": round(ratio(sync(T_END)), 6)})
    rows.append(
        {"case": "I discrete symmetric", "fluid_filippov": round(ratio(d_sym.mean_rates), 6)}
    )
    rows.append(
        {"case": "I discrete asymmetric", "fluid_filippov": round(ratio(d_asym.mean_rates), 6)}
    )
    rows.append({"case": "I discrete random", "fluid_filippov": round(ratio(d_rand.mean_rates), 6)})
    ctx.table("table2", rows, ["case", "paper", "eq16", "eq17", "fluid_filippov", "x4"])
    fig, axes = ctx.new_figure(1, 2, figsize=(13.0, 4.4))
    tt = np.linspace(1.0, T_END, 800)
    for case, sol in traces.items():
        v = sol(tt)
        axes[0].plot(tt, v[3] / v[:3].mean(axis=0), label=f"Case {case} (Filippov)")
        axes[0].axhline(TABLE_II[case], color="k", lw=0.5, ls=":")
    axes[0].plot(
        d_rand.t[1:],
        d_rand.x[3, 1:] / d_rand.x[:3, 1:].mean(axis=0),
        lw=0.5,
        alpha=0.6,
        label="Case I, discrete, random marking",
    )
    axes[0].set(
        xlabel="t (RTTs)",
        ylabel="x4 : x",
        ylim=(0, 0.8),
        title="Figs 4-6, fluid analogue: rate ratio (dotted: Table II)",
    )
    axes[0].legend(fontsize=8)
    v = traces["I"](tt)
    for i in range(4):
        axes[1].plot(tt, v[i], label=f"x{i + 1}")
    axes[1].plot(tt, v[0] + v[3], "k--", lw=0.8, label="load of link 1 (= B while sliding)")
    axes[1].set(xlabel="t (RTTs)", ylabel="rate (Mb/s)", title="Case I: rates, binary feedback")
    axes[1].legend(fontsize=8)
    ctx.figure("fig04_06_rate_ratio", fig)
    return values


@PAPER.item(title="Sec III: beta, B, n bottlenecks, equal additive increase")
def claims_sec3(ctx: Context) -> dict:
    """The claims of Sec III: beta and B do not matter, n bottlenecks, equal additive increase."""
    m = topology_one_network("I").model()
    vals = {}
    for b in BETA_SWEEP:
        sol = fn.simulate(m, T_END, history=X0, params={f"beta_{i}": b for i in range(1, 5)})
        vals[b] = ratio(sol(T_END))
    values = {("beta", b): v for b, v in vals.items()}
    spread = max(vals.values()) - min(vals.values())
    values["beta spread"] = Value(spread < 0.002, f"spread {spread:.4f}")
    mu13, mu4 = mu(RTTS["I"][0]), mu(RTTS["I"][1])
    byB = {}
    for B in (50.0, 100.0, 200.0):
        sol = fn.simulate(
            m,
            T_END,
            history={k: v * B / 100 for k, v in X0.items()},
            params={"B_1": B, "B_2": B, "B_3": B},
        )
        values["B", B] = byB[B] = ratio(sol(T_END))
    holds = all(abs(v - mu4 / (3 * mu13)) < 0.005 for v in byB.values())
    values["B"] = Value(holds, ", ".join(f"{v:.4f}" for v in byB.values()))
    for n in (1, 2, 3, 4):
        net = n_bottleneck_network(n, mu13, mu4)
        hist = {f"x_{k + 1}": 10.0 + 5 * k for k in range(n)}
        hist[f"x_{n + 1}"] = 5.0
        v = fn.simulate(net.model(), T_END, history=hist)(T_END)
        values["(16) n", n] = values["(17) n", n] = float(v[n] / np.mean(v[:n]))
    sol = fn.simulate(m, T_END, history=X0, params={"mu_4": mu13})
    values["mu4 = mu"] = ratio(sol(T_END))
    return values
