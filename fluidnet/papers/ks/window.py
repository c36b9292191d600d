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
from ..targets import Value
from . import PAPER
from .data import EXP1_PRINTED, WINDOW_NU, exp1_network


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


@PAPER.item(title="Sec III-B: (22)/(23) -> (24)/(25) by sympy; Remark 3 (26)")
def window(ctx: Context) -> dict:
    net = UserNetwork([[1, 1]], [log_utility(), power_utility(WINDOW_NU)], C=10.0, d=[2.0, 3.0])
    ignoring = utility_window(net, rtt_compensated=False)
    compensated = utility_window(net, rtt_compensated=True)
    values = {}
    for r in ("1", "2"):
        values["(24)/(25)", r] = rate_form(ignoring, r)[0]
        values["(9)/(10)", r] = rate_form(compensated, r)[0]
    # Remark 3 on Experiment 1's network
    exp1 = exp1_network()
    m = utility_window(exp1, beta=0.5, rtt_compensated=False)
    eq = m.equilibrium()
    x = np.array([eq[f"W_{r}"] for r in "012"]) / exp1.d
    ref = penalty_optimum(exp1, 0.5, rtt_weighted=True)
    values |= {("(26)", i): Value(x[i], expected=ref[i]) for i in range(3)}
    nlp = capacity_optimum(exp1, rtt_weighted=True).x
    values |= {("oo", i): nlp[i] for i in range(3)}
    values["(12)/(13)"] = bool(np.max(np.abs(nlp - np.array(EXP1_PRINTED))) > 1.0)
    return values
