"""Prop 2: the team objective (3) is a Lyapunov function of the rate laws (9)/(10).

The paper defers the proof to Kelly, Maulloo & Tan (1998). Along (9)/(10),
``x_r' = kappa_r alpha_r c_r / U_r'(x_r) * dV/dx_r`` with ``V`` the objective of (3) (checked
symbolically in the tests), so ``V' = sum kappa_r alpha_r c_r / U_r' (dV/dx_r)^2 >= 0``. Here
``V`` is evaluated along integrated trajectories with random losses, from several starts.
"""

from __future__ import annotations

import numpy as np

import fluidnet as fn

from ...models import penalty_optimum, team_objective, utility_primal
from ..registry import Context
from ..targets import Value
from . import PAPER
from .data import LYAPUNOV_STARTS, exp1_network

ALPHA = (0.99, 0.95, 1.0)


def runs(t_end: float, starts=LYAPUNOV_STARTS):
    """Trajectories of (9)/(10) on Experiment 1 with random losses ``1 - ALPHA``, beta = 0.5."""
    net = exp1_network(alpha=ALPHA)
    m = utility_primal(net, beta=0.5, kappa=[0.5, 1.0, 2.0])
    t = np.linspace(0.0, t_end, 801)
    out = []
    for x0 in starts:
        sol = fn.simulate(
            m,
            t_end,
            history=dict(zip(("x_0", "x_1", "x_2"), x0, strict=True)),
            rtol=1e-10,
            atol=1e-10,
        )
        X = np.array([sol(tt) for tt in t])
        V = np.array([team_objective(net, x, 0.5) for x in X])
        out.append((t, X, V))
    return net, out


@PAPER.item(
    title="Prop 2: the objective (3) increases along trajectories",
    quick={"t_end": 300.0, "starts": LYAPUNOV_STARTS[:2]},
)
def lyapunov(ctx: Context, t_end: float = 1500.0, starts=LYAPUNOV_STARTS) -> dict:
    """The objective (3) along trajectories from ``starts``, run to ``t_end``."""
    net, traj = runs(t_end, starts)
    x_star = penalty_optimum(net, 0.5)
    v_star = team_objective(net, x_star, 0.5)
    values = {}
    for k, (_t, X, V) in enumerate(traj, start=1):
        worst = float(np.diff(V).min())
        values["rises", k] = Value(worst >= -1e-9 * max(1.0, abs(v_star)), f"{worst:.3g}")
        values["below", k] = bool(V.max() <= v_star + 1e-9 * abs(v_star))
        values["reaches", k] = float(np.max(np.abs(X[-1] / x_star - 1)))
    fig, ax = ctx.new_figure(1, 2, figsize=(11, 4))
    for k, (t, X, V) in enumerate(traj):
        ax[0].plot(t, v_star - V, label=f"start {k + 1}")
        ax[1].plot(t, X[:, 0], color=f"C{k}")
        ax[1].plot(t, X[:, 2], color=f"C{k}", ls="--")
    ax[0].set_yscale("log")
    ax[0].set_ylabel("V(x*) - V(x(t))")
    ax[1].axhline(x_star[0], color="0.5", lw=0.8)
    ax[1].axhline(x_star[2], color="0.5", lw=0.8, ls="--")
    ax[1].set_ylabel("x_0 (solid), x_2 (dashed)")
    for a in ax:
        a.set_xlabel("t [units of 0.02 s]")
    ax[0].legend(fontsize="small")
    ax[0].set_title("Experiment 1 with random losses: the objective (3) rises", fontsize="small")
    ctx.figure("lyapunov", fig)
    return values
