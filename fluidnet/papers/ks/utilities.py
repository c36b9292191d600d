"""Sec II-III: utilities, the rate laws (9)/(10) in the general form (38), the penalty's M/M/1/B
origin, TCP's parameters (14), beta = ln 2 (16) and the TCP utility of Hurley et al."""

from __future__ import annotations

import math

import sympy

import fluidnet as fn

from ...models import UserNetwork, mm1b_loss, utility_primal, utility_window
from ...models.utility import Utility, X
from ..registry import Context
from . import PAPER
from .data import exp1_network


def rate_law_models() -> dict[str, sympy.Expr]:
    """The model's rate laws (9)/(10) of Experiment 1's users (with random losses), by user."""
    m = utility_primal(exp1_network(alpha=0.9))
    return {r: m.rhs[f"x_{r}"] for r in "012"}


def mm1b_limit() -> sympy.Expr:
    """``lim_{K->oo}`` of the M/M/1/B loss with ``B -> K B`` at ``rho = 1 + r > 1``."""
    r, K, B = sympy.symbols("r K B", positive=True)
    return sympy.simplify(sympy.limit(mm1b_loss(1 + r, 1, K * B), K, sympy.oo))


def tcp_window_law() -> sympy.Expr:
    """The RTT-compensated window law (13) of a ``-1/x`` user with TCP's parameters (14)."""
    d = 2.0
    net = UserNetwork([[1]], fn.models.power_utility(1), C=10.0, w=1 / d**2, d=d)
    m = utility_window(net, beta=0.5, kappa=1.0)
    vals = {sympy.Symbol(k, real=True): v for k, v in m.resolve_params().items()}
    W = sympy.Function("W_1", real=True)(fn.t)
    x = sympy.Function("x_1", real=True)(fn.t)
    return sympy.nsimplify(m.rhs["W_1"].xreplace(vals).xreplace({x: W / d}))


@PAPER.item(title="Sec II-III: rate laws (9)/(10)/(38), M/M/1/B limit, (14), (16)")
def utilities(ctx: Context) -> dict:
    values = {("law", r): rhs for r, rhs in rate_law_models().items()}
    values["mm1b"] = mm1b_limit()
    # (14): ack +1/W, nack -0.5 W; with x = W/d acks arrive at rate x and nacks at x f
    W, q = sympy.symbols("W Q")
    values["tcp law"] = tcp_window_law().subs(
        {sympy.Function("W_1", real=True)(fn.t): W, sympy.Function("q_1", real=True)(fn.t): q}
    )
    N = sympy.Symbol("N")
    coeff = sympy.series(sympy.Rational(1, 2) ** N, N, 0, 2).removeO().coeff(N)
    values["ln 2"] = float(-coeff)
    values["hurley"] = sympy.limit(sympy.log(X / (1 + X)) * X, X, sympy.oo)
    values["decrease"] = Utility.from_expr(sympy.log(X / (1 + X)), name="log(x/(1+x))").decrease()
    rows = []
    for label, beta in (("0.5", 0.5), ("ln 2", math.log(2)), ("2/3", 2 / 3)):
        values["K", label] = K = 1 / math.sqrt(beta)
        rows.append({"beta": label, "K = 1/sqrt(beta)": K})
    ctx.table("tcp_friendly_constants", rows)
    return values
