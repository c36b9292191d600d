"""Misra, Gong & Towsley (2000) with RED; Hollot et al. (2002): RED's averaging does not help."""

from __future__ import annotations

import math

import numpy as np
from scipy.optimize import brentq

import fluidnet as fn

from ...models.tcp_aqm import mgt_red as mgt_red_model
from ...models.tcp_aqm import red_stability_bound
from ..registry import Context
from ..targets import Value
from . import PAPER, mgt_loop
from .data import RED_K_QUICK, RED_K_VALUES


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


@PAPER.item(
    title="MGT model with RED: fixed point, loop gain, averaging (Hollot 2002)",
    quick={"averaging": RED_K_QUICK, "t_end": 150.0},
)
def mgt_red(ctx: Context, averaging=RED_K_VALUES, t_end: float = 300.0) -> dict:
    """Fixed point, loop gain, the sufficient condition, and the critical slope against the
    averaging poles ``averaging``; nonlinear runs of ``t_end`` seconds."""
    m = mgt_red_model()
    v = m.values
    fp = red_fixed_point(v["N"], v["C"], v["Tp"], v["p_max"], v["min_th"], v["max_th"])
    eq = m.equilibrium()
    values = {
        "q": Value(eq["q"], expected=fp["q"]),
        "W": Value(eq["W"], expected=fp["W"]),
        "x": Value(eq["x"], expected=eq["q"]),
    }
    # loop gain = RED filter and slope times the exact TCP/queue plant (hand-derived)
    L = m.loop_gain("p")
    K = -math.log1p(-v["weight"]) / v["delta"]
    L_red = v["p_max"] / (v["max_th"] - v["min_th"])
    w = np.logspace(-3, 2, 51)
    hand = mgt_loop.plant_exact(1j * w, v["N"], v["C"], fp["R0"]) * mgt_loop.red_controller(
        1j * w, L_red, K
    )
    values["loop"] = float(np.max(np.abs(L.freqresp(w) / hand - 1)))
    bound = red_stability_bound(v["N"], v["C"], fp["R0"], K)
    mg = fn.margins(L)
    shown = (
        f"L_red {L_red:.4g} <= bound {bound:.4g}; GM {mg.gain_margin:.3g}, "
        f"PM {mg.phase_margin:.1f} deg"
    )
    values["bound"] = Value(L_red <= bound and mg.gain_margin > 1 and mg.phase_margin > 0, shown)

    # queue averaging: the critical slope grows with K (less averaging tolerates more gain)
    rows = []
    for Kv in averaging:
        crit, ref, omega = critical_slope(m, Kv, eq)
        values["critical", Kv] = Value(crit, expected=ref)
        rows.append(
            {
                "K": Kv,
                "weight": -math.expm1(-Kv * v["delta"]),
                "critical_L_red": crit,
                "omega_c": omega,
                "sufficient_bound": red_stability_bound(v["N"], v["C"], fp["R0"], Kv),
            }
        )
    ctx.table("red_critical_slope", rows)
    shown = ", ".join(
        f"K={r['K']:g}: {r['critical_L_red']:.3g} > {r['sufficient_bound']:.3g}" for r in rows
    )
    values["sufficient"] = Value(
        all(r["critical_L_red"] > r["sufficient_bound"] for r in rows), shown
    )
    # nonlinear: stable default; a RED slope 1.5x the critical one oscillates
    runs = {"default": m, "p_max 0.5": m.with_params(weight=0.5, p_max=0.5)}
    labels = {"default": "default", "p_max 0.5": "no averaging, p_max = 0.5"}
    fig, ax = ctx.new_figure(1, 1)
    for key, mm in runs.items():
        sol = fn.simulate(mm, t_end, history={"W": 1.0, "q": 0.0, "x": 0.0})
        osc = fn.oscillation(sol, "q")
        tt = np.linspace(0, sol.t[-1], 3000)
        ax.plot(tt, sol(tt)[mm.state_names.index("q")], label=f"{labels[key]}: {osc.status}")
        values[key] = osc.status
    ax.set(xlabel="t [s]", ylabel="queue q [pkts]", title="TCP/RED fluid model")
    ax.legend()
    ctx.figure("mgt_red", fig)
    return values
