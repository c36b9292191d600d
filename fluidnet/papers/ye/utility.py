"""Fig 1: the TCP utility (8) + (12) + (14) with mu = 0.1, x_s = 1 (alpha = 1, beta = 1/2)
against log(1 + x); its constant C, kink, crossing with log(1 + x) and large-x limit."""

from __future__ import annotations

import math

import numpy as np
import sympy
from scipy.optimize import brentq

from ...models.sliding_mode import RATE, continuity_constant, tcp_law, tcp_utility
from ..registry import Context
from . import PAPER
from .data import (
    FIG1,
    FIG1_C,
    FIG1_CROSSING,
    FIG1_CROSSING_NORMALIZED,
    FIG1_LIMIT,
    FIG1_U,
)


def fig1_utility():
    """The Fig 1 utility as a numpy function (from :func:`fluidnet.models.tcp_utility`)."""
    U = tcp_utility(FIG1["mu"], sympy.Rational(1, 2), 1, FIG1["x_s"])
    return sympy.lambdify(RATE, U, "numpy")


def crossing(U, scale: float = 1.0) -> float:
    """Where ``U(x) / scale`` meets ``log(1 + x)`` above the threshold."""
    return brentq(lambda v: U(v) / scale - math.log1p(v), 1.01, 50.0, xtol=1e-13)


def plot_fig1(ax, U) -> None:
    xs = np.linspace(1e-3, 10.0, 1000)
    ax.plot(xs, U(xs), label="TCP utility (8)+(12)+(14), mu = 0.1, x_s = 1")
    ax.plot(xs, U(xs) / math.log(3), "--", label="the same / log 3")
    ax.plot(xs, np.log1p(xs), ":", label="log(1 + x)")
    ax.axvline(FIG1["x_s"], color="k", lw=0.6)
    ax.annotate("slow start | congestion avoidance", (FIG1["x_s"], 0.2), fontsize=8)
    ax.set(xlabel="rate x (units of x_s)", ylabel="utility", title="Fig 1: utility functions")
    ax.legend(fontsize=8)


@PAPER.item("fig1", title="Fig 1: the TCP utility against log(1 + x)")
def fig1(ctx: Context) -> None:
    """Fig 1: C of (14), U at sample points, its crossings with log(1 + x), its large-x limit."""
    mu_, xs_ = FIG1["mu"], FIG1["x_s"]
    U = fig1_utility()
    C = float(continuity_constant(mu_, 0.5, 1.0, xs_))
    ctx.check("(14)", "C for mu = 0.1, x_s = 1", FIG1_C, C, tol=5e-7, source="derived")
    ctx.check("(8)", "U(x_s) = x_s log 3", math.log(3), float(U(1.0)), tol=1e-12, source="derived")
    for x, v in FIG1_U.items():
        ctx.check("Fig 1", f"U({x:g})", v, float(U(x)), tol=5e-5, source="derived")
    # the slopes on both sides of the kink, from the law's marginal utility log(1 + a/d)
    tl = tcp_law(mu_, x_s=xs_)
    vals = {tl.symbol(k): v for k, v in tl.values().items()}
    up = sympy.lambdify(RATE, tl.reverse_engineered.marginal_utility.xreplace(vals), "numpy")
    ctx.check(
        "(8)",
        "slope below x_s: log(1 + alpha/beta)",
        1.0986,
        float(up(0.5)),
        tol=5e-5,
        source="derived",
    )
    ctx.check(
        "(12)",
        "slope above x_s: log(1 + mu/(beta x_s))",
        0.1823,
        float(up(1.0 + 1e-12)),
        tol=5e-5,
        source="derived",
    )
    ctx.check_true(
        "Sec II",
        "the utility is concave (alpha x_s >= mu, a condition the paper does not state)",
        1.0 * xs_ >= mu_ and float(up(0.5)) >= float(up(1.0 + 1e-12)),
        value=f"alpha x_s = {xs_:g} >= mu = {mu_:g}",
        source="derived",
    )
    ctx.check(
        "Fig 1", "U meets log(1 + x) at", FIG1_CROSSING, crossing(U), tol=5e-5, source="derived"
    )
    ctx.check(
        "Fig 1",
        "U / log 3 meets log(1 + x) at",
        FIG1_CROSSING_NORMALIZED,
        crossing(U, math.log(3)),
        tol=5e-5,
        source="derived",
    )
    big = 1e7
    ctx.check(
        "Sec II",
        "U(x) - (mu/beta) log x for large x (weighted proportional fairness)",
        FIG1_LIMIT,
        float(U(big) - mu_ / 0.5 * math.log(big)),
        tol=1e-5,
        source="derived",
    )
    ctx.check_true(
        "Sec II",
        "the slow-start part is a significant part of the utility (U(x_s)/U(10) > 0.5)",
        float(U(1.0) / U(10.0)) > 0.5,
        value=f"U(1)/U(10) = {float(U(1.0) / U(10.0)):.3f}",
    )
    xs = np.linspace(0.5, 50, 400)
    ctx.table(
        "fig1_utility",
        [{"x": float(v), "U": float(U(v)), "log1p": float(np.log1p(v))} for v in xs[::20]],
    )
    fig, ax = ctx.new_figure()
    plot_fig1(ax, U)
    ctx.figure("fig1_utility", fig)
