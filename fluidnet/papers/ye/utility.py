"""Fig 1: the TCP utility (8) + (12) + (14) with mu = 0.1, x_s = 1 (alpha = 1, beta = 1/2)
against log(1 + x); its constant C, kink, crossing with log(1 + x) and large-x limit."""

from __future__ import annotations

import math

import numpy as np
import sympy
from scipy.optimize import brentq

from ...models.sliding_mode import RATE, continuity_constant, tcp_law, tcp_utility
from ..registry import Context
from ..targets import Value
from . import PAPER
from .data import FIG1, FIG1_U


def fig1_utility():
    """The Fig 1 utility as a numpy function (from :func:`fluidnet.models.tcp_utility`)."""
    U = tcp_utility(FIG1["mu"], sympy.Rational(1, 2), 1, FIG1["x_s"])
    return sympy.lambdify(RATE, U, np)


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


@PAPER.item(title="Fig 1: the TCP utility against log(1 + x)")
def fig1(ctx: Context) -> dict:
    """Fig 1: C of (14), U at sample points, its crossings with log(1 + x), its large-x limit."""
    mu_, xs_ = FIG1["mu"], FIG1["x_s"]
    U = fig1_utility()
    values = {"C": float(continuity_constant(mu_, 0.5, 1.0, xs_)), "U(x_s)": float(U(1.0))}
    values |= {("U", x): float(U(x)) for x in FIG1_U}
    # the slopes on both sides of the kink, from the law's marginal utility log(1 + a/d)
    tl = tcp_law(mu_, x_s=xs_)
    vals = {tl.symbol(k): v for k, v in tl.values().items()}
    up = sympy.lambdify(RATE, tl.reverse_engineered.marginal_utility.xreplace(vals), np)
    values["slope below"], values["slope above"] = float(up(0.5)), float(up(1.0 + 1e-12))
    holds = 1.0 * xs_ >= mu_ and float(up(0.5)) >= float(up(1.0 + 1e-12))
    values["concave"] = Value(holds, f"alpha x_s = {xs_:g} >= mu = {mu_:g}")
    values["crossing"], values["crossing / log 3"] = crossing(U), crossing(U, math.log(3))
    big = 1e7
    values["limit"] = float(U(big) - mu_ / 0.5 * math.log(big))
    ratio = float(U(1.0) / U(10.0))
    values["slow start"] = Value(ratio > 0.5, f"U(1)/U(10) = {ratio:.3f}")
    xs = np.linspace(0.5, 50, 400)
    ctx.table(
        "fig1_utility",
        [{"x": float(v), "U": float(U(v)), "log1p": float(np.log1p(v))} for v in xs[::20]],
    )
    fig, ax = ctx.new_figure()
    plot_fig1(ax, U)
    ctx.figure("fig1_utility", fig)
    return values
