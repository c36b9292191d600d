"""Sec V-C and VI-B (Experiment 2, Fig 3): reacting to ECN marks instead of losses under random
losses, and Prop 6 (42).

Fluid analogue of Fig 3 (an ns-2 run): one 1 Mb/s link, three ``-1/x`` users with 5 % random loss,
time in units of 0.02 s and 32-byte packets (C = 78.125), unit weights, beta = 0.5 (unstated in
the paper), marking level 0.99 C. Reacting to losses the users are limited by random losses,
``1/x^2 = beta (1 - alpha)``; reacting only to marks, ``1/x^2 = beta alpha p(3x; C~)``.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.optimize import brentq

import fluidnet as fn

from ...models import penalty_optimum, utility_primal
from ..registry import Context
from ..targets import Value
from . import PAPER
from .data import BETA, exp2_network

LEVEL = 0.99


def rates() -> tuple[float, float]:
    """Per-user equilibrium rates reacting to losses and to marks (m.equilibrium)."""
    net = exp2_network()
    x_loss = utility_primal(net, beta=BETA).equilibrium()["x_1"]
    x_ecn = utility_primal(net, beta=BETA, feedback="ecn", levels=LEVEL * net.C[0]).equilibrium()
    return x_loss, x_ecn["x_1"]


@PAPER.item(
    title="Sec V-C/VI-B: ECN versus loss reaction, Prop 6, Fig 3 analogue", quick={"t_end": 200.0}
)
def experiment2(ctx: Context, t_end: float = 600.0) -> dict:
    """The two equilibria, Prop 6, and Fig 3's runs to ``t_end``."""
    net = exp2_network()
    C, a, Ct = net.C[0], net.alpha[0], LEVEL * net.C[0]
    x_loss, x_ecn = rates()
    ref = brentq(
        lambda x: 1 / x**2 - BETA * a * max(3 * x - Ct, 0) / (3 * x), 1.0, C, xtol=1e-14, rtol=1e-15
    )
    bound = 3 * math.sqrt(C / (BETA * (C - Ct)))
    x42 = penalty_optimum(net, BETA, levels=Ct, feedback="ecn")[0]
    values = {
        "loss": x_loss,
        "ecn": Value(x_ecn, expected=ref),
        "ratio": x_ecn / x_loss,
        "five": x_ecn / x_loss,
        "loss-free": Value(bound <= C, f"{bound:.2f} <= {C}"),
        "below C": Value(3 * x_ecn < C, f"{3 * x_ecn:.3f}"),
        "(42)": Value(x_ecn, expected=x42),
    }
    _fig3(ctx, net, Ct, t_end)
    return values


def _fig3(ctx: Context, net, Ct, t_end) -> None:
    t = np.linspace(0, t_end, 400)
    fig, ax = ctx.new_figure()
    for fb, kw, label in (
        ("loss", {}, "reacting to losses"),
        ("ecn", {"levels": Ct}, "reacting to ECN marks only"),
    ):
        m = utility_primal(net, beta=BETA, feedback=fb, **kw)
        sol = fn.simulate(m, t_end, history={"x_1": 1.0}, rtol=1e-8)
        ax.plot(t, [sol(tt)[0] for tt in t], label=label)
    ax.set_xlabel("t [units of 0.02 s]")
    ax.set_ylabel("rate per user [pkts per 0.02 s]")
    ax.set_title(
        "Experiment 2, fluid analogue of Fig 3 (ns-2 not reproducible): 5 % random loss",
        fontsize="small",
    )
    ax.legend(fontsize="small")
    ctx.figure("fig3_ecn_vs_loss_fluid", fig)
