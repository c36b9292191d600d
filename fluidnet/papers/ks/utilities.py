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


def rate_law_identities() -> list[tuple[str, sympy.Expr, sympy.Expr]]:
    """``(route, model rhs, paper's (9)/(10))`` for Experiment 1's users (with random losses).

    The paper's forms are typed here: (9) ``kappa (w/beta_r - beta (x - z))`` and (10)
    ``kappa (nu w/beta_r - beta x^nu (x - z))`` with ``x - z = x ((1 - alpha) + alpha q)``.
    """
    m = utility_primal(exp1_network(alpha=0.9))
    out = []
    for r, nu in (("0", sympy.Rational(1, 2)), ("1", None), ("2", sympy.Integer(1))):
        k, w, br, a, beta = sympy.symbols(f"kappa_{r} w_{r} betar_{r} alpha_{r} beta", real=True)
        x = sympy.Function(f"x_{r}", real=True)(fn.t)
        q = sympy.Function(f"q_{r}", real=True)(fn.t)
        lost = x * ((1 - a) + a * q)
        paper = (
            k * (w / br - beta * lost) if nu is None else k * (nu * w / br - beta * x**nu * lost)
        )
        out.append((r, m.rhs[f"x_{r}"], paper))
    return out


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


@PAPER.item("utilities", title="Sec II-III: rate laws (9)/(10)/(38), M/M/1/B limit, (14), (16)")
def utilities(ctx: Context) -> None:
    for r, ours, paper in rate_law_identities():
        ctx.check_expr(
            "eqs (9)/(10)",
            f"Experiment 1 user {r}: kappa c (w/beta_r - beta f/U'(x)) is the printed law",
            paper,
            ours,
            note="random-loss form x - z = x((1 - alpha) + alpha sum p), from z = alpha y and (2)",
        )
    r = sympy.Symbol("r", positive=True)
    ctx.check_expr(
        "Sec II",
        "M/M/1/B loss, K -> oo with B -> K B, at rho = 1 + r: (u - C)^+/u",
        r / (1 + r),
        mm1b_limit(),
    )
    # (14): ack +1/W, nack -0.5 W; with x = W/d acks arrive at rate x and nacks at x f
    W, q = sympy.symbols("W Q")
    law = tcp_window_law().subs(
        {sympy.Function("W_1", real=True)(fn.t): W, sympy.Function("q_1", real=True)(fn.t): q}
    )
    x = W / 2
    ctx.check_expr(
        "eq (14)",
        "window law (13) with nu = kappa = 1, w/beta_j = 1/d^2, beta = 0.5 is TCP's",
        x / W - sympy.Rational(1, 2) * W * x * q,  # no random loss: f = q
        law,
    )
    N = sympy.Symbol("N")
    coeff = sympy.series(sympy.Rational(1, 2) ** N, N, 0, 2).removeO().coeff(N)
    ctx.check("eq (16)", "beta = ln 2 from (1/2)^N ~ 1 - N ln 2", 0.6931, float(-coeff), tol=5e-5)
    lead = sympy.limit(sympy.log(X / (1 + X)) * X, X, sympy.oo)
    ctx.check_expr(
        "Sec III-A",
        "TCP utility log(x/(1+x)) of Hurley et al. ~ -1/x for large x (x U -> -1)",
        -1,
        lead,
    )
    tcp = Utility.from_expr(sympy.log(X / (1 + X)), name="log(x/(1+x))")
    ctx.check_expr(
        "eq (38)",
        "general utility log(x/(1+x)): decrease term 1/U'(x)",
        X * (1 + X),
        tcp.decrease(),
        source="derived",
    )
    rows = []
    for label, beta in (("0.5", 0.5), ("ln 2", math.log(2)), ("2/3", 2 / 3)):
        K = 1 / math.sqrt(beta)
        rows.append({"beta": label, "K = 1/sqrt(beta)": K})
        expected = {"0.5": 1.414, "ln 2": 1.201, "2/3": 1.2247}[label]
        ctx.check(
            "Sec IV",
            f"TCP-friendly constant K = 1/sqrt(beta) for beta = {label}",
            expected,
            K,
            tol=5e-4 if label != "2/3" else 5e-5,
            source="derived",
            note="from (18): TCP's throughput is 1/(sqrt(beta) d sqrt(1 - alpha))",
        )
    ctx.table("tcp_friendly_constants", rows)
