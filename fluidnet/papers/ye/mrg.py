"""Sec V: the minimum-rate-guaranteed law (20)-(22) in the fluid model.

The paper tests MRG only by ns-2 on topology II, whose paths and delays are in the missing
Fig 12; those runs cannot be regenerated. Our fluid check instead: one 20 Mb/s
link shared by a TCP flow (RTT 12 ms) and an MRG flow (RTT 80 ms, target theta), both in
congestion avoidance. Averaged over the sliding motion, the MRG flow below theta acts as if its
marginal utility were ``U' + log r_max``: the guarantee holds iff ``r_max >= r_crit =
exp(U'_tcp(B - theta) - U'_mrg(theta))``; below, the flow settles between its TCP rate and theta.
"""

from __future__ import annotations

import math

import numpy as np

import fluidnet as fn

from ...models.sliding_mode import RATE, mrg_law, single_link_network, tcp_law
from ..registry import Context
from ..targets import Value
from . import PAPER
from .data import MRG_LINK, MRG_PREDICTED, MRG_R_CRIT, mrg_prediction, mu

T_MRG = 4000.0


def slope(law, x: float) -> float:
    """``U'(x) = log(1 + a/d)`` of a library law at its parameter values."""
    vals = {law.symbol(k): v for k, v in law.values().items()}
    return float(law.reverse_engineered.marginal_utility.xreplace(vals).subs(RATE, x))


def r_crit(theta: float) -> float:
    """The smallest r_max that holds the MRG flow at theta, from the library's laws."""
    B = MRG_LINK["B"]
    tcp = tcp_law(mu(MRG_LINK["rtt_tcp"]))
    own = tcp_law(mu(MRG_LINK["rtt_mrg"]))
    return math.exp(slope(tcp, B - theta) - slope(own, theta))


def mrg_rate(r: float, theta: float, t_end: float = T_MRG) -> float:
    """The MRG flow's rate at ``t_end`` from the binary-feedback law (Filippov)."""
    net = single_link_network(
        [tcp_law(mu(MRG_LINK["rtt_tcp"])), mrg_law(mu(MRG_LINK["rtt_mrg"]), theta, r)],
        MRG_LINK["B"],
    )
    sol = fn.simulate(net.model(), t_end, history={"x_1": 1.0, "x_2": 1.0})
    return float(sol(t_end)[1])


@PAPER.item(
    title="Sec V: MRG law, r_crit and the guarantee against r (fluid)",
    quick={"r_points": (1.0, 1.2)},
)
def mrg(ctx: Context, r_points=(1.0, 1.05, 1.1, 1.2, 1.3)) -> dict:
    """Sec V: r_crit of the MRG law and the guarantee against r_max, in the fluid model (the
    figure's fluid runs at ``r_points``)."""
    B, th = MRG_LINK["B"], MRG_LINK["theta"]
    mt, mm = mu(MRG_LINK["rtt_tcp"]), mu(MRG_LINK["rtt_mrg"])
    rows, values = [], {}
    for theta in MRG_R_CRIT:
        values["r_crit", theta] = values["closed form", theta] = rc = r_crit(theta)
        rows.append({"theta": theta, "r_crit": round(rc, 6)})
    ctx.table("mrg_r_crit", rows)
    rows = []
    for r in MRG_PREDICTED:
        values["rate", r] = values["brentq", r] = sim = mrg_rate(r, th)
        rows.append(
            {
                "r_max": r,
                "predicted": round(mrg_prediction(r, th, B, mt, mm), 6),
                "fluid": round(sim, 6),
            }
        )
    ctx.table("mrg_single_link", rows)
    holds = abs(mrg_rate(3.0, th) - th) < 1e-6 and abs(mrg_rate(5.0, th) - th) < 1e-6
    values["held"] = Value(holds, "x = theta for r_max = 3 and 5")
    below = mrg_rate(1.05, 8.0)
    shown = f"theta = 8, r_max = 1.05 < r_crit = {r_crit(8.0):.3f}: x = {below:.3f}"
    values["out of reach"] = Value(mrg_rate(1.0, 8.0) < below < 8.0, shown)
    holds = bool(np.all(np.diff([r_crit(t) for t in MRG_R_CRIT]) > 0))
    values["rises"] = Value(holds, ", ".join(f"{r_crit(t):.3f}" for t in MRG_R_CRIT))
    values["3 Mb/s"] = r_crit(3.0)
    fig, ax = ctx.new_figure()
    rs = np.linspace(1.0, 1.4, 200)
    for theta in (3.0, 5.0, 8.0):
        ax.plot(rs, [mrg_prediction(r, theta, B, mt, mm) for r in rs], label=f"theta = {theta:g}")
        ax.plot(r_points, [mrg_rate(r, theta) for r in r_points], "ko", ms=3)
        ax.axvline(r_crit(theta), color="gray", lw=0.5, ls=":")
    ax.set(
        xlabel="r_max",
        ylabel="MRG rate (Mb/s)",
        title="MRG on a 20 Mb/s link with a TCP flow: prediction (lines), fluid law (dots)",
    )
    ax.legend(fontsize=8)
    ctx.figure("mrg_rate_vs_r", fig)
    return values
