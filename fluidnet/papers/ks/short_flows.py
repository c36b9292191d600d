"""Sec V-B-1: short (unresponsive) flows, Lemma 1 and Prop 4 (35), printed and reconstructed.

(35) is printed as ``sum_i (w_i/beta_i) / p(C~, C) <= C - xi^``: without the ``1/beta`` of (27)
and with ``p`` evaluated at ``C``. Its proof applies Prop 3 to the disturbance-free system (37)
with capacity ``C - xi^``, which needs ``C~ + sum w_i/(beta beta_i) <= C - xi^``
(:func:`fluidnet.models.marking_level` with ``kind="bound"``). With ``1/beta`` restored the
printed condition is Prop 5's (``kind="mean"``), tight for a constant ``xi = xi^`` but not for a
time-varying ``xi``: when the short
flows pause, the users fill the link up to ``C~ + sum w/(beta beta_i)``, and when they resume the
load jumps by ``xi^``. Example (derived): ``beta = 1``, ``sum w/beta_i = 10``, ``C = 100``,
``xi^ = 10``: reconstructed ``C~ = 80``, printed ``C~ = 88.89``, peak load 108.9.
"""

from __future__ import annotations

import numpy as np
import sympy

import fluidnet as fn

from ...models import UserNetwork, log_utility, marking_level, utility_primal
from ..registry import Context
from ..targets import Value
from . import PAPER

BETA, C, XI, W_SUM = 1.0, 100.0, 10.0, 10.0
PERIOD = 40.0  # the short flows are on for PERIOD/2, off for PERIOD/2


def printed_level() -> float:
    """(35) at equality with ``1/beta`` restored: ``W_SUM / (beta p(C~, C)) = C - xi^``."""
    return C - W_SUM * C / (BETA * (C - XI))


def network() -> UserNetwork:
    return UserNetwork([[1]], log_utility(), C=C, w=W_SUM)  # one aggregate log user, w = 10


def square_wave() -> sympy.Expr:
    """``xi(t) = xi^`` on the second half of every period, 0 on the first."""
    return XI * sympy.Heaviside(-sympy.sin(2 * sympy.pi * fn.t / PERIOD))


def peak_load(level: float, t_end: float):
    """Run (31) with the square-wave disturbance; the largest total load after one period."""
    m = utility_primal(
        network(), beta=BETA, feedback="ecn", levels=level, disturbance=square_wave()
    )
    sol = fn.simulate(m, t_end, history={"x_1": 50.0}, rtol=1e-9, atol=1e-9, max_step=0.5)
    t = sol.t
    xi = XI * (np.sin(2 * np.pi * t / PERIOD) < 0)
    total = sol["x_1"] + xi
    late = t > PERIOD
    return float(total[late].max()), sol


@PAPER.item(title="Sec V-B: Prop 4 (35) printed and reconstructed; Lemma 1", quick={"periods": 3})
def prop4(ctx: Context, periods: int = 6) -> dict:
    """The two levels, and runs of ``periods`` periods of the square-wave disturbance."""
    rec = float(marking_level(network(), BETA, disturbance=XI, kind="bound")[0])
    pr = printed_level()
    values = {"reconstructed": rec, "printed": pr}
    values["Prop 5"] = float(marking_level(network(), BETA, disturbance=XI, kind="mean")[0])
    # constant disturbance xi = xi^: the printed level gives load exactly C
    m = utility_primal(network(), beta=BETA, feedback="ecn", levels=pr, disturbance=XI)
    values["constant xi"] = m.equilibrium()["x_1"] + XI
    t_end = periods * PERIOD
    values["peak"], sol_pr = peak_load(pr, t_end)
    peak_rec, sol_rec = peak_load(rec, t_end)
    values["<= C"] = Value(peak_rec <= C * (1 + 1e-9), f"{peak_rec:.4f}")
    # Lemma 1: the disturbed sum x(t) stays below the undisturbed comparison system y(t) (32)
    m0 = utility_primal(network(), beta=BETA, feedback="ecn", levels=rec)
    sol0 = fn.simulate(m0, t_end, history={"x_1": 50.0}, rtol=1e-9, atol=1e-9)
    gap = sol_rec["x_1"] - np.array([sol0(tt)[0] for tt in sol_rec.t])
    values["Lemma 1"] = Value(bool(gap.max() <= 1e-6), f"{gap.max():.3g}")
    fig, ax = ctx.new_figure()
    for sol, lv, name in ((sol_pr, pr, "printed (35)"), (sol_rec, rec, "reconstructed")):
        xi = XI * (np.sin(2 * np.pi * sol.t / PERIOD) < 0)
        ax.plot(sol.t, sol["x_1"] + xi, label=f"{name}: C~ = {lv:.2f}")
    ax.axhline(C, color="k", lw=0.8, ls="--")
    ax.set_xlabel("t")
    ax.set_ylabel("total load x(t) + xi(t)")
    ax.set_title("Prop 4: square-wave short flows (xi in {0, 10}), C = 100", fontsize="small")
    ax.legend(fontsize="small")
    ctx.figure("prop4_short_flows", fig)
    return values
