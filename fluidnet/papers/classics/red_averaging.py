"""Misra, Gong & Towsley (2000) with RED; Hollot et al. (2002): RED's averaging does not help."""

from __future__ import annotations

import math

import numpy as np
from scipy.optimize import brentq

import fluidnet as fn

from ...models.tcp_aqm import mgt_red, red_stability_bound
from ..registry import Context
from . import PAPER, mgt_loop

#: Averaging poles K = -ln(1 - weight)/delta (rad/s) compared for the critical RED slope.
K_VALUES = (0.005, 0.05, 0.5, 5.0, 50.0)


def red_fixed_point(N, C, Tp, p_max, min_th, max_th) -> dict[str, float]:
    """The MGT/RED equilibrium by bracketing (plain floats): ``p(q) = 2/W^2``, ``W = R C/N``."""
    L = p_max / (max_th - min_th)

    def gap(q):
        W = (Tp + q / C) * C / N
        return L * (q - min_th) - 2.0 / W**2

    q = brentq(gap, min_th, max_th, xtol=1e-13, rtol=1e-15)
    W = (Tp + q / C) * C / N
    return {"q": q, "W": W, "p": 2.0 / W**2, "R0": Tp + q / C}


def critical_slope(m, K: float, eq: dict[str, float]) -> tuple[float, float, float]:
    """Critical RED slope at the fixed point ``eq`` with averaging pole ``K`` (rad/s):
    ``L_red`` times the gain margin of fluidnet's loop gain, the same from the hand-derived loop
    (numpy), and the phase crossover (rad/s)."""
    v = m.values
    weight = -math.expm1(-K * v["delta"])
    L_red = v["p_max"] / (v["max_th"] - v["min_th"])
    mg = fn.margins(m.loop_gain("p", weight=weight))
    R0 = v["Tp"] + eq["q"] / v["C"]
    ref = mgt_loop.margins_numpy(
        lambda s: (
            mgt_loop.plant_exact(s, v["N"], v["C"], R0) * mgt_loop.red_controller(s, L_red, K)
        ),
        1e-4,
        1e3,
    )
    return L_red * mg.gain_margin, L_red * ref["gain_margin"], mg.phase_crossover


@PAPER.item("mgt_red", title="MGT model with RED: fixed point, loop gain, averaging (Hollot 2002)")
def mgt_red_item(ctx: Context) -> None:
    """Fixed point, loop gain, the sufficient condition, and the critical slope against K."""
    m = mgt_red()
    v = m.values
    fp = red_fixed_point(v["N"], v["C"], v["Tp"], v["p_max"], v["min_th"], v["max_th"])
    eq = m.equilibrium()
    ctx.check(
        "MGT 2000",
        "RED fixed point queue [pkts]",
        fp["q"],
        eq["q"],
        tol=1e-9,
        rel=True,
        source="derived",
    )
    ctx.check(
        "MGT 2000",
        "fixed point window [pkts]",
        fp["W"],
        eq["W"],
        tol=1e-9,
        rel=True,
        source="derived",
    )
    ctx.check(
        "MGT 2000",
        "average queue x = q at rest",
        eq["q"],
        eq["x"],
        tol=1e-9,
        rel=True,
        source="derived",
    )

    # loop gain = RED filter and slope times the exact TCP/queue plant (hand-derived)
    L = m.loop_gain("p")
    K = -math.log1p(-v["weight"]) / v["delta"]
    L_red = v["p_max"] / (v["max_th"] - v["min_th"])
    w = np.logspace(-3, 2, 51)
    hand = mgt_loop.plant_exact(1j * w, v["N"], v["C"], fp["R0"]) * mgt_loop.red_controller(
        1j * w, L_red, K
    )
    dev = float(np.max(np.abs(L.freqresp(w) / hand - 1)))
    ctx.check("Hollot 2002", "max |L_fluidnet / L_hand - 1|", 0.0, dev, tol=1e-9, source="derived")

    bound = red_stability_bound(v["N"], v["C"], fp["R0"], K)
    mg = fn.margins(L)
    ctx.check_true(
        "Hollot 2002",
        "RED slope within the sufficient condition, and the loop stable",
        L_red <= bound and mg.gain_margin > 1 and mg.phase_margin > 0,
        value=f"L_red {L_red:.4g} <= bound {bound:.4g}; GM {mg.gain_margin:.3g}, "
        f"PM {mg.phase_margin:.1f} deg",
    )

    # queue averaging: the critical slope grows with K (less averaging tolerates more gain)
    rows = []
    for Kv in K_VALUES if not ctx.quick else K_VALUES[::2]:
        crit, ref, omega = critical_slope(m, Kv, eq)
        weight = -math.expm1(-Kv * v["delta"])
        ctx.check(
            "Hollot 2002",
            f"critical L_red at K = {Kv:g} (slope x gain margin)",
            ref,
            crit,
            tol=1e-7,
            rel=True,
            source="derived",
            note="fluidnet's margins against the hand-derived loop; the operating point is held "
            "(K does not move it) and the slope scaled, as Hollot et al. do",
        )
        rows.append(
            {
                "K": Kv,
                "weight": weight,
                "critical_L_red": crit,
                "omega_c": omega,
                "sufficient_bound": red_stability_bound(v["N"], v["C"], fp["R0"], Kv),
            }
        )
    ctx.table("red_critical_slope", rows)
    ctx.check_true(
        "Hollot 2002",
        "the sufficient condition is sufficient: critical slope above its bound at every K",
        all(r["critical_L_red"] > r["sufficient_bound"] for r in rows),
        value=", ".join(
            f"K={r['K']:g}: {r['critical_L_red']:.3g} > {r['sufficient_bound']:.3g}" for r in rows
        ),
        source="derived",
        note="heavier averaging (smaller K) allows a larger slope in this model: the benefit "
        "Hollot et al. deny RED's averaging is in speed, not in the stability limit",
    )
    # nonlinear: stable default; a RED slope 1.5x the critical one oscillates
    runs = {"default": m, "no averaging, p_max = 0.5": m.with_params(weight=0.5, p_max=0.5)}
    fig, ax = ctx.new_figure(1, 1)
    for label, mm in runs.items():
        sol = fn.simulate(
            mm, 300.0 if not ctx.quick else 150.0, history={"W": 1.0, "q": 0.0, "x": 0.0}
        )
        osc = fn.oscillation(sol, "q")
        tt = np.linspace(0, sol.t[-1], 3000)
        ax.plot(tt, sol(tt)[mm.state_names.index("q")], label=f"{label}: {osc.status}")
        want = "converged" if label == "default" else "sustained"
        ctx.check_equal("MGT 2000", f"nonlinear run, {label}", want, osc.status, source="derived")
    ax.set(xlabel="t [s]", ylabel="queue q [pkts]", title="TCP/RED fluid model")
    ax.legend()
    ctx.figure("mgt_red", fig)
