"""Sec III-A's operating point (alpha, beta) = (0.1, 1.0): linearly unstable, stable in fact.

The rightmost root of eq (15) (against :data:`.data.OPERATING_ROOT`), the six phase-plane
trajectories of the fluid model, and the linear model eq (8) next to eqs (4)-(7) from the same
perturbation.
"""

from __future__ import annotations

import numpy as np

import fluidnet as fn

from ...models.rate_control import rcp, rcp_linearized
from ..registry import Context
from ..targets import Value
from . import PAPER
from .bode import bode_stable
from .data import T_END_RTT
from .phase_plane import converged, phase_plane_ics


def _plot_linear_vs_fluid(axes, lsol, nsol, C: float, d0: float, N: float) -> None:
    """Queue and rate deviations of eq (8) (``lsol``) and eqs (4)-(7) (``nsol``) against t / d0."""
    axes[0].plot(np.asarray(lsol.t) / d0, np.asarray(lsol["dq"]) / (C * d0), label="eq (8)")
    axes[0].plot(
        np.asarray(nsol.t) / d0, np.asarray(nsol["q"]) / (C * d0), label="eqs (4)-(7), q >= 0"
    )
    axes[0].axhline(0, color="k", lw=0.6)
    axes[0].set(
        xlabel="t / d0",
        ylabel="queue deviation / (C d0)",
        title="(0.1, 1.0): linear model grows, fluid model settles",
        ylim=(-1.5, 1.5),
    )
    axes[0].legend(fontsize=8)
    axes[1].plot(np.asarray(lsol.t) / d0, np.asarray(lsol["dR"]) * N / C, label="eq (8)")
    axes[1].plot(np.asarray(nsol.t) / d0, np.asarray(nsol["R"]) * N / C - 1, label="eqs (4)-(7)")
    axes[1].set(xlabel="t / d0", ylabel="N dR / C", title="rate deviation")
    axes[1].legend(fontsize=8)


@PAPER.item(
    title="(alpha, beta) = (0.1, 1.0): linearly unstable, stable in fact", quick={"t_rtt": 300.0}
)
def operating_point(ctx: Context, t_rtt: float = T_END_RTT) -> dict:
    """Sec III-A's operating point against the linear analysis of Sec IV: side by side."""
    al, be = 0.1, 1.0
    m = rcp(alpha=al, beta=be)
    v = m.resolve_params()
    C, d0, N = v["C"], v["d0"], v["N"]
    sa = m.linearize().spectral_abscissa()
    values = {
        "root": sa * d0,
        "unstable": Value(sa > 0 and not bode_stable(al, be), f"spectral abscissa {sa:.4f} 1/s"),
    }
    t_end = t_rtt * d0
    verdicts = [
        converged(fn.simulate(m, t_end, history=ic), after=0.6 * t_end) for ic in phase_plane_ics(m)
    ]
    values["converge"] = Value(all(verdicts), f"{sum(verdicts)}/6 converge")
    # side by side: eq (8) (queue may go negative) and (4)-(7) from the same perturbation
    t_show = 15.0 * d0
    dq0 = 0.05 * C * d0
    grid = np.linspace(0.0, t_show, 3001)
    lsol = fn.simulate(
        rcp_linearized(alpha=al, beta=be), t_show, history={"dR": 0.0, "dq": dq0}, t_eval=grid
    )
    nsol = fn.simulate(m, t_show, history={"R": C / N, "q": dq0}, t_eval=grid)
    fig, axes = ctx.new_figure(1, 2, figsize=(13.0, 4.4))
    _plot_linear_vs_fluid(axes, lsol, nsol, C, d0, N)
    ctx.figure("operating_point_linear_vs_fluid", fig)
    dq = np.asarray(lsol["dq"])
    grow = np.max(np.abs(dq[np.asarray(lsol.t) > 0.8 * t_show]))
    values["grows"] = Value(grow > dq0, f"late |dq| / dq0 = {grow / dq0:.2f}")
    values["negative"] = Value(bool(np.min(dq) < 0), f"min dq/(C d0) = {np.min(dq) / (C * d0):.3f}")
    return values
