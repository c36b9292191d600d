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
from .data import BETA

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


@PAPER.item(title="Sec III-A/IV: square-root law (18), (19), throughput laws")
def tcp(ctx: Context) -> dict:
    rows, values = [], {}
    for d, loss in ((1.0, 0.05), (2.0, 0.05), (1.0, 0.01), (0.5, 0.2)):
        values["sqrt", d, loss] = x = tcp_rate(d, loss)
        rows.append(
            {"d": d, "1-alpha": loss, "x*": x, "(18)": 1 / (math.sqrt(BETA) * d * math.sqrt(loss))}
        )
    values["6.3246"] = tcp_rate(1.0, 0.05)
    values["(19)"] = values["100.02"] = tcp_rate(1.0, 0.0)
    values["threshold"] = thr = 1 / (BETA * C**2)
    values["losses"] = tcp_rate(1.0, 10 * thr) < C / 3 and tcp_rate(1.0, thr / 10) > 0.99 * C
    # Sec IV: a controller with throughput ~ 1/(d (1-alpha)^(1/(nu+1))) has utility -1/x^nu
    for nu, d, loss in ((1.0, 2.0, 0.05), (2.0, 1.5, 0.01), (0.5, 3.0, 0.1)):
        values["(21)", nu] = window_rate(nu, d, loss)
    ratios = [window_rate(1.0, 1.0, loss) * math.sqrt(loss) for loss in (0.01, 0.04, 0.16)]
    values["sqrt(1 - alpha)"] = bool(np.ptp(ratios) < 1e-9 * ratios[0])
    ctx.table("square_root_law", rows)
    return values
