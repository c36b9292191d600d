"""Sec III-B: the window laws (22)/(23) reduce to the rate laws (24)/(25) (sympy), and their
equilibrium solves Remark 3's (26): a bias 1/d (log) or 1/d^(nu+1) (-1/x^nu) in the weights.

(20) prints the decrease term with the user's ``beta_r``; (22), which it becomes, has the network
``beta``, as does (12): the model uses ``beta``.
"""

from __future__ import annotations

import numpy as np
import sympy

import fluidnet as fn

from ...models import (
    UserNetwork,
    capacity_optimum,
    log_utility,
    penalty_optimum,
    power_utility,
    utility_window,
)
from ..registry import Context
from . import PAPER
from .data import EXP1_PRINTED, exp1_network

NU = sympy.Rational(3, 2)


def rate_form(m, r: str):
    """``(x_r', x, q, d)`` from the window model: ``W_r = d_r x_r`` substituted, divided by d."""
    d = sympy.Symbol(f"d_{r}", real=True)
    x, q = sympy.symbols(f"X_{r} Q_{r}")
    sub = {
        sympy.Function(f"W_{r}", real=True)(fn.t): d * x,
        sympy.Function(f"x_{r}", real=True)(fn.t): x,
        sympy.Function(f"q_{r}", real=True)(fn.t): q,
    }
    return sympy.simplify(m.rhs[f"W_{r}"].xreplace(sub) / d), x, q, d


def paper_forms(r: str, x, q, d, nu):
    """(24)/(25) and (9)/(10) as printed, with ``x - z = x ((1 - alpha) + alpha q)``."""
    k, w, br, a, beta = sympy.symbols(f"kappa_{r} w_{r} betar_{r} alpha_{r} beta", real=True)
    lost = x * ((1 - a) + a * q)
    if nu is None:
        return k / d * (w / (br * d) - beta * lost), k * (w / br - beta * lost)
    eq25 = k * d ** (nu - 1) * (nu * w / (br * d ** (nu + 1)) - lost * beta * x**nu)
    return eq25, k * (nu * w / br - beta * x**nu * lost)


@PAPER.item("window", title="Sec III-B: (22)/(23) -> (24)/(25) by sympy; Remark 3 (26)")
def window(ctx: Context) -> None:
    net = UserNetwork([[1, 1]], [log_utility(), power_utility(NU)], C=10.0, d=[2.0, 3.0])
    ignoring = utility_window(net, rtt_compensated=False)
    compensated = utility_window(net, rtt_compensated=True)
    for r, nu, label in (("1", None, "log"), ("2", NU, f"-1/x^{NU}")):
        xdot, x, q, d = rate_form(ignoring, r)
        e2425, e910 = paper_forms(r, x, q, d, nu)
        ctx.check_expr(
            "eqs (22)-(25)", f"{label}: (22)/(23) with x = W/d is (24)/(25)", e2425, xdot
        )
        xdot, x, q, d = rate_form(compensated, r)
        ctx.check_expr(
            "eqs (12)/(13), (9)/(10)",
            f"{label}: window law with d in the increments is (9)/(10)",
            e910,
            xdot,
        )
    # Remark 3 on Experiment 1's network
    exp1 = exp1_network()
    m = utility_window(exp1, beta=0.5, rtt_compensated=False)
    eq = m.equilibrium()
    x = np.array([eq[f"W_{r}"] for r in "012"]) / exp1.d
    ref = penalty_optimum(exp1, 0.5, rtt_weighted=True)
    for i in range(3):
        ctx.check(
            "Remark 3 (26)",
            f"RTT-ignoring windows, beta = 0.5: x_{i} maximises (26)",
            ref[i],
            x[i],
            tol=1e-9,
            rel=True,
            source="derived",
        )
    nlp = capacity_optimum(exp1, rtt_weighted=True).x
    for i, e in enumerate((8.623, 147.627, 69.502)):
        ctx.check(
            "Remark 3 (26)",
            f"beta -> oo with the weights of (26): x_{i}",
            e,
            nlp[i],
            tol=5e-4,
            source="derived",
            note="NLP (6)-(8) with the weights of (26), solved independently",
        )
    ctx.check_true(
        "Sec VI-A",
        "the printed NLP rates are not those of the RTT-ignoring law: Experiment 1 used (12)/(13)",
        bool(np.max(np.abs(nlp - np.array(EXP1_PRINTED))) > 1.0),
        source="derived",
    )
