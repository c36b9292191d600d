"""Derived targets: the Hopf boundary of RCP and why the smooth bifurcation theory stops there.

The linear region's boundary (Sec IV-D) is a curve of Hopf points: a root pair ``+- i w / d0``
crosses the axis on ``alpha = w sin w``, ``beta = w^2 cos w`` (the D-subdivision of eq (8)).
Continued in the (beta, alpha) plane from the crossing at alpha = 1.4, it reproduces that
curve. But RCP's equilibrium has an empty queue (q* = 0, eq (7)): any oscillation about it
sends the unprojected queue below 0 half of the time, where the projection ``max(y - C, 0)``
acts. So the first Lyapunov coefficient, the normal form's amplitude and smooth orbits describe
a different (unprojected) model, and the analysis says so instead of returning them. The limit
cycle of Fig 43 at (alpha, beta) = (1.4, 0.8), well past the boundary, keeps returning to
q = 0: it is a non-smooth cycle, outside the reach of collocation of the smooth equations.
"""

from __future__ import annotations

import numpy as np

import fluidnet as fn

from ...models.rate_control import rcp
from ..registry import Context
from ..targets import Value
from . import PAPER
from .data import HOPF_ALPHA


@PAPER.item(
    title="Hopf boundary (derived); the smooth theory and the queue at 0", quick={"n_points": 10}
)
def bifurcation(ctx: Context, n_points: int = 40) -> dict:
    """The Hopf point at alpha = 1.4, the continued boundary, and Fig 43's non-smooth cycle."""
    m = rcp()
    d0 = m.resolve_params()["d0"]
    hp = fn.hopf_point(m, "beta", 0.1, 0.8, alpha=HOPF_ALPHA)
    values = {
        "beta_c": hp.value,
        "omega": hp.omega * d0,
        "speed": Value(hp.root_speed.real > 0, f"{hp.root_speed.real:.4g}"),
        "nonsmooth": Value(not hp.applies, hp.nonsmooth[:90] + "..."),
    }
    curve = fn.continue_hopf(
        hp, "alpha", n_points=n_points, lyapunov=False, step=0.05, max_step=0.15
    )
    more = fn.continue_hopf(
        hp, "alpha", n_points=n_points, lyapunov=False, step=0.05, max_step=0.15, direction=-1
    )
    betas = np.concatenate([more.x[::-1], curve.x[1:]])
    alphas = np.concatenate([more.y[::-1], curve.y[1:]])
    omegas = np.concatenate([more.omega[::-1], curve.omega[1:]])
    w = omegas * d0
    values["curve"] = float(
        np.max(np.abs(alphas - w * np.sin(w)) + np.abs(betas - w * w * np.cos(w)))
    )
    # Fig 43: the cycle at (1.4, 0.8) returns to q = 0, so it is not a smooth orbit
    m43 = m.with_params(alpha=1.4, beta=0.8)
    v = m43.resolve_params()
    C = v["C"]
    sol = fn.simulate(m43, 150 * d0, history={"R": 0.01 * C, "q": 2 * C * d0})
    try:
        fn.periodic_orbit(sol, state="R")
        refused, why = False, "accepted"
    except fn.NonSmoothError as exc:
        refused, why = True, str(exc)[:90] + "..."
    values["refused"] = Value(refused, why)
    fig, (ax, ax2) = ctx.new_figure(1, 2, figsize=(12.0, 4.4))
    ww = np.linspace(0.05, 1.6, 300)
    ax.plot(ww * ww * np.cos(ww), ww * np.sin(ww), "k-", lw=3, alpha=0.25,
            label="D-subdivision alpha = w sin w, beta = w^2 cos w")  # fmt: skip
    ax.plot(betas, alphas, "C0.", ms=4, label="continued Hopf curve (fn.continue_hopf)")
    ax.plot([hp.value], [1.4], "ko", label="Hopf point at alpha = 1.4")
    ax.plot([0.8], [1.4], "r*", ms=10, label="Fig 43: (1.4, 0.8)")
    ax.set(xlabel="beta", ylabel="alpha", title="Hopf boundary of the linear region (q* = 0)")
    ax.legend(fontsize=7)
    tt = np.linspace(100 * d0, 150 * d0, 4000)
    ax2.plot(tt / d0, sol(tt, "q") / (C * d0), lw=0.8)
    ax2.set(
        xlabel="t / d0",
        ylabel="q / (C d0)",
        title="Fig 43's cycle: the queue returns to 0 (non-smooth)",
    )
    ctx.figure("bifurcation_hopf_boundary", fig)
    return values
