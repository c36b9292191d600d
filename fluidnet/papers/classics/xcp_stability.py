"""Katabi, Handley & Rohrs (2002): XCP's stability condition on (alpha, beta)."""

from __future__ import annotations

import math

import numpy as np
import sympy
from scipy.optimize import brentq

import fluidnet as fn

from ...models.xcp_fluid import xcp, xcp_beta
from ...symbolic.loopgain import loop_gain_expr
from ...symbolic.symbols import s as S
from ..registry import Context
from . import PAPER
from .data import XCP_ALPHA_BOUND, XCP_DEFAULTS


def exact_pm(alpha: float, beta: float, d: float = 1.0) -> tuple[float, float]:
    """Phase margin (deg) and crossover (rad/s) of ``(K1 s + K2) e^{-ds}/s^2`` in closed form.

    ``|G| = 1`` gives ``w^2 = (K1^2 + sqrt(K1^4 + 4 K2^2))/2``; the phase margin is
    ``atan(w K1/K2) - w d``.
    """
    K1, K2 = alpha / d, beta / d**2
    w = math.sqrt((K1**2 + math.sqrt(K1**4 + 4 * K2**2)) / 2)
    return math.degrees(math.atan2(w * K1, K2) - w * d), w


def alpha_range(beta: float) -> tuple[float, float]:
    """The stable alpha interval at ``beta`` from the boundary ``alpha = w sin w``,
    ``beta = w^2 cos w`` (``w = omega d``; D-subdivision, plain scipy)."""
    f = lambda w: w * w * math.cos(w) - beta  # noqa: E731
    w_top = brentq(lambda w: 2 * math.cos(w) - w * math.sin(w), 0.1, 1.5)  # max of w^2 cos w
    w1 = brentq(f, 1e-9, w_top)
    w2 = brentq(f, w_top, math.pi / 2)
    return w1 * math.sin(w1), w2 * math.sin(w2)


def _on_theorem_curve(a: float):
    return xcp(alpha=a, beta=xcp_beta(a)).linearize()


@PAPER.item("xcp", title="Katabi et al. 2002: XCP stability (Theorem 1), chart, nonlinear runs")
def xcp_item(ctx: Context) -> None:
    """Theorem 1, the loop gain, margins, critical values, chart and nonlinear runs."""
    a0, b0 = XCP_DEFAULTS["alpha"], XCP_DEFAULTS["beta"]
    ctx.check("Sec. 3.5.1", "beta = sqrt(2) alpha^2 at alpha = 0.4", b0, xcp_beta(a0), tol=0.0005)
    m = xcp()
    alpha, beta, d = sympy.symbols("alpha beta d", real=True)
    ctx.check_expr(
        "App. B",
        "open loop G(s) = (alpha/d s + beta/d^2) e^{-ds}/s^2",
        (alpha / d * S + beta / d**2) * sympy.exp(-d * S) / S**2,
        loop_gain_expr(m, "y"),
    )
    # Theorem 1's bound: on beta = sqrt(2) alpha^2 the boundary is crossed at exactly
    # alpha = pi/(4 sqrt 2), w d = pi/4 (D-subdivision: sqrt(2) sin^2 w = cos w)
    cv = fn.critical_value(_on_theorem_curve, "a", 0.3, 0.9)
    ctx.check(
        "Theorem 1", "critical alpha on beta = sqrt(2) alpha^2", XCP_ALPHA_BOUND, cv.value, tol=1e-9
    )
    ctx.check(
        "Theorem 1",
        "crossing frequency omega d at the bound",
        math.pi / 4,
        cv.omega * m.values["d"],
        tol=1e-9,
        source="derived",
    )
    # margins at the defaults, and their independence of d and c
    pm_ref, w_ref = exact_pm(a0, b0)
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
        ctx.check(
            "Theorem 1",
            f"phase margin at defaults, d = {dd:g}, c = {cc:g} [deg]",
            pm_ref,
            mg.phase_margin,
            tol=1e-9,
            source="derived",
            note="closed form atan(w K1/K2) - w d; the same for every d and c",
        )
    ctx.table("xcp_margins", rows)
    pm_theorem = math.degrees(math.pi / 4 - math.sqrt(2) * a0)
    mg = fn.margins(xcp(beta=xcp_beta(a0)).loop_gain("y"))
    ctx.check(
        "App. B",
        "phase margin with beta = sqrt(2) alpha^2: 45 deg - sqrt(2) alpha",
        pm_theorem,
        mg.phase_margin,
        tol=1e-9,
        source="derived",
    )

    # the exact region at beta = 0.226: both ends by critical values and by D-subdivision
    lo_ref, hi_ref = alpha_range(b0)
    lo = fn.critical_value(m, "alpha", 0.01, 0.4)
    hi = fn.critical_value(m, "alpha", 0.4, 1.6)
    ctx.check(
        "region",
        "lowest stable alpha at beta = 0.226",
        lo_ref,
        lo.value,
        tol=1e-8,
        source="derived",
    )
    ctx.check(
        "region",
        "highest stable alpha at beta = 0.226",
        hi_ref,
        hi.value,
        tol=1e-8,
        source="derived",
    )
    ctx.check_true(
        "Theorem 1",
        "the defaults lie inside the region",
        lo_ref < a0 < hi_ref,
        value=f"{lo_ref:.4f} < 0.4 < {hi_ref:.4f}",
    )

    # stability chart against the exact boundary
    n = 21 if ctx.quick else 41
    ag, bg = np.linspace(0.02, 1.6, n), np.linspace(0.01, 0.6, n)
    chart = fn.stability_chart(m, {"alpha": ag, "beta": bg}, on_error="nan")
    stable = chart["stable"].transpose("alpha", "beta").values
    exact = np.zeros_like(stable, dtype=bool)
    for j, bv in enumerate(bg):
        if bv < 0.5497:
            lo_b, hi_b = alpha_range(bv)
            exact[:, j] = (ag > lo_b) & (ag < hi_b)
    ctx.check(
        "region",
        "chart cells disagreeing with the exact boundary",
        0,
        int(np.sum(stable != exact)),
        tol=0,
        source="derived",
    )
    _plot_chart(ctx, ag, bg, stable)

    # nonlinear runs from half the capacity. Beyond the bound the linearization (which drops the
    # projection of the queue at 0, as the paper does) is unstable, yet at alpha = 0.7 the
    # projected model settles: its rest point sits on q = 0, where an empty queue feeds nothing
    # back and y' = -(alpha/d)(y(t - d) - c) alone is stable for alpha < pi/2. At alpha = 1 the
    # queue term drives a sustained oscillation.
    runs = {
        "defaults": (m, "converged"),
        "alpha = 0.7 > bound": (xcp(alpha=0.7, beta=xcp_beta(0.7)), "converged"),
        "alpha = 1.0": (xcp(alpha=1.0, beta=xcp_beta(1.0)), "sustained"),
    }
    fig, axes = ctx.new_figure(1, 2, figsize=(13, 4.2))
    c = m.values["c"]
    for label, (mm, want) in runs.items():
        sol = fn.simulate(mm, 20.0, history={"y": 0.5 * c, "q": 0.0})
        osc = fn.oscillation(sol, "y")
        tt = np.linspace(0, 10.0, 2000)
        axes[0].plot(tt, sol(tt)[0] / c, label=f"{label}: {osc.status}")
        ctx.check_equal(
            "App. B",
            f"nonlinear run (q, y projected at 0), {label}",
            want,
            osc.status,
            source="derived",
        )
    axes[0].set(xlabel="t [s]", ylabel="y / c", title="XCP aggregate rate")
    # fairness controller: two flows from 0.8 c and 0.2 c share the link equally
    m2 = xcp(flows=2)
    sol = fn.simulate(m2, 20.0, history={"y": c, "q": 0.0, "r1": 0.8 * c, "r2": 0.2 * c})
    r1, r2 = (sol(20.0)[m2.state_names.index(k)] for k in ("r1", "r2"))
    ctx.check(
        "eq (17)",
        "fairness: r1/r2 after 20 s (AIMD shuffling)",
        1.0,
        r1 / r2,
        tol=0.01,
        source="derived",
    )
    tt = np.linspace(0, 20.0, 2000)
    for k in ("r1", "r2"):
        axes[1].plot(tt, sol(tt)[m2.state_names.index(k)] / c, label=k)
    axes[1].set(xlabel="t [s]", ylabel="r_i / c", title="fairness controller (17)")
    for ax in axes:
        ax.legend()
    ctx.figure("xcp_runs", fig)


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
