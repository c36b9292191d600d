"""Sec III-A's operating point (alpha, beta) = (0.1, 1.0): linearly unstable, stable in fact.

The rightmost root of eq (15) in closed form, the six phase-plane trajectories of the fluid
model, and the linear model eq (8) next to eqs (4)-(7) from the same perturbation.
"""

from __future__ import annotations

import numpy as np
from scipy import optimize

import fluidnet as fn

from ...models.rate_control import rcp, rcp_linearized
from ..registry import Context
from . import PAPER
from .bode import bode_stable
from .constants import T_END_RTT
from .phase_plane import converged, phase_plane_ics


def rightmost_root_closed_form(alpha: float, beta: float) -> complex:
    """Rightmost root of ``lambda^2 + (alpha lambda + beta) e^{-lambda} = 0`` (eq (15), s d0).

    Independent of fluidnet: Newton (scipy) from a grid of starting points, keeping the root
    with the largest real part.
    """

    def f(z):
        return z * z + (alpha * z + beta) * np.exp(-z)

    def fp(z):
        return 2 * z + alpha * np.exp(-z) - (alpha * z + beta) * np.exp(-z)

    best = None
    for re in np.linspace(-1.0, 1.0, 9):
        for im in np.linspace(0.1, 3.0, 12):
            try:
                z = optimize.newton(f, complex(re, im), fprime=fp, tol=1e-14, maxiter=100)
            except RuntimeError:
                continue
            if abs(f(z)) < 1e-10 and (best is None or z.real > best.real + 1e-9):
                best = z
    return best


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
    "operating_point", title="(alpha, beta) = (0.1, 1.0): linearly unstable, stable in fact"
)
def operating_point(ctx: Context) -> None:
    """Sec III-A's operating point against the linear analysis of Sec IV: side by side."""
    al, be = 0.1, 1.0
    m = rcp(alpha=al, beta=be)
    v = m.resolve_params()
    C, d0, N = v["C"], v["d0"], v["N"]
    lam = rightmost_root_closed_form(al, be)
    lin = m.linearize()
    sa = lin.spectral_abscissa()
    ctx.check(
        "eq (15)",
        "rightmost characteristic root, Re(s) d0",
        lam.real,
        sa * d0,
        tol=1e-8,
        source="derived",
        note=f"scipy Newton on eq (15): lambda = {lam:.6f}",
    )
    ctx.check_true(
        "Sec IV",
        "(0.1, 1.0) is linearly unstable",
        sa > 0 and not bode_stable(al, be),
        value=f"spectral abscissa {sa:.4f} 1/s",
    )
    t_end = (300.0 if ctx.quick else T_END_RTT) * d0
    verdicts = [
        converged(fn.simulate(m, t_end, history=ic), after=0.6 * t_end) for ic in phase_plane_ics(m)
    ]
    ctx.check_true(
        "Sec II-C.3",
        "(0.1, 1.0): all six trajectories of the fluid model converge",
        all(verdicts),
        value=f"{sum(verdicts)}/6 converge",
    )
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
    grow = np.max(np.abs(np.asarray(lsol["dq"])[np.asarray(lsol.t) > 0.8 * t_show]))
    ctx.check_true(
        "Sec IV-E",
        "eq (8) from a 5% queue perturbation: oscillation grows",
        grow > dq0,
        value=f"late |dq| / dq0 = {grow / dq0:.2f}",
    )
    ctx.check_true(
        "Sec IV-E",
        "eq (8) drives the queue negative",
        bool(np.min(np.asarray(lsol["dq"])) < 0),
        value=f"min dq/(C d0) = {np.min(np.asarray(lsol['dq'])) / (C * d0):.3f}",
    )
