"""Sec III-A and Sec IV: TCP-like users, the square-root law (18), (19) and throughput laws.

(18) is printed as ``1/(sqrt(beta d) sqrt(1 - alpha))``; its derivation from (17) and its
restatement in Sec IV give ``1/(sqrt(beta) d sqrt(1 - alpha))`` (used here). (17) is printed
without the ``1/alpha_j`` of (15), with which (18) follows exactly. (19) says "alpha_j = 0" for
the case without random losses, i.e. ``alpha_j = 1``.
"""

from __future__ import annotations

import math

import numpy as np

from ...models import UserNetwork, power_utility, utility_primal, utility_window
from ..registry import Context
from . import PAPER

BETA = 0.5
C = 100.0


def tcp_rate(d: float, loss: float, *, C: float = C) -> float:
    """Equilibrium of (10) for one ``-1/x`` user with TCP's ``w/beta_j = 1/d^2`` (m.equilibrium)."""
    net = UserNetwork([[1]], power_utility(1), C=C, w=1 / d**2, alpha=1 - loss, d=d)
    return utility_primal(net, beta=BETA).equilibrium(guess={"x_1": min(C, 1.0)})["x_1"]


def window_rate(nu: float, d: float, loss: float, w: float = 1.0) -> float:
    """Rate at the equilibrium of the RTT-ignoring window law (20)/(21), far below capacity."""
    net = UserNetwork([[1]], power_utility(nu), C=1e9, w=w, alpha=1 - loss, d=d)
    W = utility_window(net, beta=BETA, rtt_compensated=False).equilibrium()["W_1"]
    return W / d


@PAPER.item("tcp", title="Sec III-A/IV: square-root law (18), (19), throughput laws")
def tcp(ctx: Context) -> None:
    rows = []
    for d, loss in ((1.0, 0.05), (2.0, 0.05), (1.0, 0.01), (0.5, 0.2)):
        x = tcp_rate(d, loss)
        closed = 1 / (math.sqrt(BETA) * d * math.sqrt(loss))
        rows.append({"d": d, "1-alpha": loss, "x*": x, "(18)": closed})
        ctx.check(
            "eq (18)",
            f"square-root law, d = {d:g}, 1 - alpha = {loss:g}",
            closed,
            x,
            tol=1e-9,
            rel=True,
            note="printed 1/(sqrt(beta d) sqrt(1-alpha)) is garbled; "
            "Sec IV's 1/(sqrt(beta) d sqrt(1-alpha)) is used",
        )
    ctx.check(
        "eq (18)",
        "x* at beta = 0.5, d = 1, 1 - alpha = 0.05",
        6.3246,
        tcp_rate(1.0, 0.05),
        tol=5e-5,
        source="derived",
        note="(18) evaluated by hand",
    )
    x19 = tcp_rate(1.0, 0.0)
    ctx.check(
        "eq (19)",
        "no random loss (printed 'alpha = 0' means alpha = 1), C = 100, d = 1",
        0.5 * (C + math.sqrt(C**2 + 4 / BETA)),
        x19,
        tol=1e-9,
        rel=True,
    )
    ctx.check(
        "eq (19)", "x* = 100.02", 100.02, x19, tol=5e-3, source="derived", note="(19) by hand"
    )
    thr = 1 / (BETA * C**2)
    ctx.check(
        "Sec III-A",
        "threshold 1 - alpha > 1/(beta d^2 C^2)",
        2e-4,
        thr,
        tol=1e-15,
        source="derived",
    )
    ctx.check_true(
        "Sec III-A",
        "random losses 10x above the threshold cut the rate below C/3; "
        "10x below it they leave it at C",
        tcp_rate(1.0, 10 * thr) < C / 3 and tcp_rate(1.0, thr / 10) > 0.99 * C,
    )
    # Sec IV: a controller with throughput ~ 1/(d (1-alpha)^(1/(nu+1))) has utility -1/x^nu
    for nu, d, loss in ((1.0, 2.0, 0.05), (2.0, 1.5, 0.01), (0.5, 3.0, 0.1)):
        x = window_rate(nu, d, loss)
        closed = (nu / BETA) ** (1 / (nu + 1)) / (d * loss ** (1 / (nu + 1)))
        ctx.check(
            "Sec IV",
            f"window law (21), nu = {nu:g}: x = (nu w/(beta_j beta))^(1/(nu+1)) "
            "/ (d (1-alpha)^(1/(nu+1)))",
            closed,
            x,
            tol=1e-9,
            rel=True,
            source="derived",
        )
    ratios = [window_rate(1.0, 1.0, loss) * math.sqrt(loss) for loss in (0.01, 0.04, 0.16)]
    ctx.check_true(
        "Sec IV",
        "TCP (nu = 1) throughput ~ 1/sqrt(1 - alpha)",
        bool(np.ptp(ratios) < 1e-9 * ratios[0]),
        source="derived",
    )
    ctx.table("square_root_law", rows)
