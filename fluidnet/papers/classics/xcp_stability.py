"""Katabi, Handley & Rohrs (2002): XCP's stability condition on (alpha, beta)."""

from __future__ import annotations

import math

import numpy as np

import fluidnet as fn

from ...models.xcp_fluid import xcp as xcp_model
from ...models.xcp_fluid import xcp_beta
from ...symbolic.loopgain import loop_gain_expr
from ..registry import Context
from ..targets import Value
from . import PAPER
from .data import XCP_ALPHA_BOUND, XCP_DEFAULTS, xcp_alpha_range


def _on_theorem_curve(a: float):
    return xcp_model(alpha=a, beta=xcp_beta(a)).linearize()


@PAPER.item(
    title="Katabi et al. 2002: XCP stability (Theorem 1), chart, nonlinear runs", quick={"n": 21}
)
def xcp(ctx: Context, n: int = 41) -> dict:
    """Theorem 1, the loop gain, margins, critical values, an ``n`` x ``n`` chart and nonlinear
    runs."""
    a0, b0 = XCP_DEFAULTS["alpha"], XCP_DEFAULTS["beta"]
    m = xcp_model()
    values = {"beta": xcp_beta(a0), "G": loop_gain_expr(m, "y")}
    # Theorem 1's bound: on beta = sqrt(2) alpha^2 the boundary is crossed at exactly
    # alpha = pi/(4 sqrt 2), w d = pi/4 (D-subdivision: sqrt(2) sin^2 w = cos w)
    cv = fn.critical_value(_on_theorem_curve, "a", 0.3, 0.9)
    values |= {"alpha_c": cv.value, "omega d": cv.omega * m.values["d"]}
    # margins at the defaults, and their independence of d and c
    rows = []
    for dd, cc in ((0.08, 12500.0), (0.01, 1e3), (0.5, 1e6), (2.0, 50.0)):
        mg = fn.margins(m.loop_gain("y", d=dd, c=cc))
        rows.append(
            {
                "d": dd,
                "c": cc,
                "phase_margin": mg.phase_margin,
                "omega_d": mg.gain_crossover * dd,
                "gain_margin": mg.gain_margin,
                "delay_margin_over_d": mg.delay_margin / dd,
            }
        )
        values["pm", dd, cc] = mg.phase_margin
    ctx.table("xcp_margins", rows)
    values["pm theorem"] = fn.margins(xcp_model(beta=xcp_beta(a0)).loop_gain("y")).phase_margin

    # the exact region at beta = 0.226: both ends by critical values and by D-subdivision
    lo_ref, hi_ref = xcp_alpha_range(b0)
    values["lo"] = fn.critical_value(m, "alpha", 0.01, 0.4).value
    values["hi"] = fn.critical_value(m, "alpha", 0.4, 1.6).value
    values["inside"] = Value(lo_ref < a0 < hi_ref, f"{lo_ref:.4f} < 0.4 < {hi_ref:.4f}")

    # stability chart against the exact boundary
    ag, bg = np.linspace(0.02, 1.6, n), np.linspace(0.01, 0.6, n)
    chart = fn.stability_chart(m, {"alpha": ag, "beta": bg}, on_error="nan")
    stable = chart["stable"].transpose("alpha", "beta").values
    exact = np.zeros_like(stable, dtype=bool)
    for j, bv in enumerate(bg):
        if bv < 0.5497:
            lo_b, hi_b = xcp_alpha_range(bv)
            exact[:, j] = (ag > lo_b) & (ag < hi_b)
    values["chart"] = int(np.sum(stable != exact))
    _plot_chart(ctx, ag, bg, stable)

    # nonlinear runs from half the capacity. Beyond the bound the linearization (which drops the
    # projection of the queue at 0, as the paper does) is unstable, yet at alpha = 0.7 the
    # projected model settles: its rest point sits on q = 0, where an empty queue feeds nothing
    # back and y' = -(alpha/d)(y(t - d) - c) alone is stable for alpha < pi/2. At alpha = 1 the
    # queue term drives a sustained oscillation.
    runs = {
        "defaults": m,
        "alpha = 0.7 > bound": xcp_model(alpha=0.7, beta=xcp_beta(0.7)),
        "alpha = 1.0": xcp_model(alpha=1.0, beta=xcp_beta(1.0)),
    }
    fig, axes = ctx.new_figure(1, 2, figsize=(13, 4.2))
    c = m.values["c"]
    for label, mm in runs.items():
        sol = fn.simulate(mm, 20.0, history={"y": 0.5 * c, "q": 0.0})
        osc = fn.oscillation(sol, "y")
        tt = np.linspace(0, 10.0, 2000)
        axes[0].plot(tt, sol(tt)[0] / c, label=f"{label}: {osc.status}")
        values["run", label] = osc.status
    axes[0].set(xlabel="t [s]", ylabel="y / c", title="XCP aggregate rate")
    # fairness controller: two flows from 0.8 c and 0.2 c share the link equally
    m2 = xcp_model(flows=2)
    sol = fn.simulate(m2, 20.0, history={"y": c, "q": 0.0, "r1": 0.8 * c, "r2": 0.2 * c})
    r1, r2 = (sol(20.0)[m2.state_names.index(k)] for k in ("r1", "r2"))
    values["fairness"] = r1 / r2
    tt = np.linspace(0, 20.0, 2000)
    for k in ("r1", "r2"):
        axes[1].plot(tt, sol(tt)[m2.state_names.index(k)] / c, label=k)
    axes[1].set(xlabel="t [s]", ylabel="r_i / c", title="fairness controller (17)")
    for ax in axes:
        ax.legend()
    ctx.figure("xcp_runs", fig)
    return values


def _plot_chart(ctx: Context, ag, bg, stable) -> None:
    fig, ax = ctx.new_figure(1, 1)
    ax.contourf(
        ag, bg, stable.T.astype(float), levels=[-0.5, 0.5, 1.5], colors=["#f4c7c3", "#c8e6c9"]
    )
    w = np.linspace(1e-3, math.pi / 2, 400)
    ax.plot(w * np.sin(w), w * w * np.cos(w), "k", lw=1, label="exact boundary")
    a = np.linspace(0, 0.7, 100)
    ax.plot(a, np.sqrt(2) * a * a, "b--", lw=1, label="beta = sqrt(2) alpha^2")
    ax.plot([0.4], [0.226], "ro", label="defaults (0.4, 0.226)")
    ax.axvline(XCP_ALPHA_BOUND, color="gray", ls=":", label="pi/(4 sqrt 2)")
    ax.set(
        xlabel="alpha", ylabel="beta", title="XCP linear stability (green: stable)", ylim=(0, 0.6)
    )
    ax.legend()
    ctx.figure("xcp_chart", fig)
