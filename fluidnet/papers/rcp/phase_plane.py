"""Sec IV-E/F: the phase-plane rule on the nonlinear fluid model and its region (Figs 40/44).

A point (alpha, beta) is stable when the trajectories of eqs (4)-(7) from the six initial states
of Sec IV-F all end at the equilibrium. The helpers here are shared by the phase portraits, the
operating point, the flow-step scenario and the invariance check.
"""

from __future__ import annotations

import numpy as np
import xarray as xr

import fluidnet as fn

from ...models.rate_control import rcp
from ...symbolic.model import Model
from ..registry import Context
from ..targets import Value
from . import PAPER
from .bode import bode_stable, exact_boundary
from .data import (
    GAMMA_INIT,
    GRID,
    NOTE_ONSET,
    PAPER_ONSET,
    QUEUE_INIT,
    QUICK_REGION,
    T_END_RTT,
    T_END_RTT_REGION,
)


def phase_plane_ics(model: Model) -> list[dict[str, float]]:
    """The six initial states of Sec IV-F: gamma in {0.5, 0.1, 0.01} x q in {2 C d0, 0}.

    The paper states them for its N = 10 flows (equilibrium gamma = 0.1), i.e. aggregate
    loads N gamma of 5, 1 and 0.1 times C. For another N we keep those aggregate loads
    (gamma scaled by 10/N), which is how we read "the same region for N = 10 ... 5000": with
    gamma itself fixed, N = 5000 would start 2500 times overloaded.
    """
    v = model.resolve_params()
    C, d0 = v["C"], v["d0"]
    scale = 10.0 / v["N"] if "N" in v else 1.0
    return [{"R": g * scale * C, "q": x * C * d0} for g in GAMMA_INIT for x in QUEUE_INIT]


def onset_alpha(alphas, stable) -> float | None:
    """Smallest grid alpha from which every larger grid alpha is unstable (None: none is)."""
    alphas = np.asarray(alphas, dtype=float)
    bad = ~np.asarray(stable, dtype=bool)
    if not bad[-1]:
        return None
    k = alphas.size - 1
    while k > 0 and bad[k - 1]:
        k -= 1
    return float(alphas[k])


def chart_stable(ds: xr.Dataset) -> np.ndarray:
    """Boolean ``[beta, alpha]`` array "converged from every initial condition"."""
    return np.asarray(ds["stable"].transpose("beta", "alpha").values, dtype=bool)


def phase_plane_region(
    model: Model, alphas, betas, *, t_end_rtt: float = T_END_RTT
) -> tuple[np.ndarray, xr.Dataset]:
    """Classify a grid of (alpha, beta) with the phase-plane rule of Sec IV-F.

    A point is stable when the trajectories from all six initial states of
    :func:`phase_plane_ics` end at the equilibrium; computed by :func:`fluidnet.nonlinear_chart`.
    Returns the boolean array ``stable[beta, alpha]`` and the chart dataset.
    """
    d0 = model.resolve_params()["d0"]
    ds = fn.nonlinear_chart(
        model,
        {"alpha": np.asarray(alphas, dtype=float), "beta": np.asarray(betas, dtype=float)},
        ics=phase_plane_ics(model),
        t_end=t_end_rtt * d0,
    )
    return chart_stable(ds), ds


def converged(sol, *, after: float) -> bool:
    """Trajectory ends at the equilibrium: no sustained oscillation of R after ``after``."""
    osc = fn.oscillation(sol, "R", after=after)
    return bool(osc.converged)


def onset_rows(alphas, betas, stable: np.ndarray) -> list[dict]:
    """Onset alpha*(beta) per grid row, with the paper's where it prints one."""
    rows = []
    for j, beta in enumerate(betas):
        a_star = onset_alpha(alphas, stable[j])
        b = round(float(beta), 10)
        rows.append({"beta": b, "alpha_star_fluid": a_star, "alpha_star_paper": PAPER_ONSET.get(b)})
    return rows


def _plot_region(ctx: Context, alphas, betas, stable: np.ndarray, rows: list[dict]) -> None:
    """Figs 40/44: the classified grid, the linear lobe, the fluid and the printed onsets."""
    A, B = np.meshgrid(alphas, betas)
    fig, ax = ctx.new_figure(figsize=(6.4, 5.4))
    ax.plot(A[stable], B[stable], "s", color="#a1d99b", ms=6, label="fluid model: stable")
    ax.plot(A[~stable], B[~stable], "x", color="#de2d26", ms=5, label="fluid model: unstable")
    xa, xb = exact_boundary()
    ax.plot(xa, xb, "k-", label="linear region (exact boundary)")
    on = [(r["alpha_star_fluid"], r["beta"]) for r in rows if r["alpha_star_fluid"] is not None]
    if on:
        ax.plot(*zip(*on, strict=True), "b-*", label="onset alpha*(beta), fluid")
    ax.plot(
        list(PAPER_ONSET.values()),
        list(PAPER_ONSET),
        "ko",
        mfc="none",
        ms=9,
        label="paper: onset from simulations",
    )
    ax.plot([0.1], [1.0], "m*", ms=12, label="operating point (0.1, 1.0)")
    ax.set(
        xlabel="alpha",
        ylabel="beta",
        xlim=(0, 2.1),
        ylim=(0, 2.1),
        title="Figs 40/44: stable region, phase-plane rule on the fluid model",
    )
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    ctx.figure("fig40_44_nonlinear_region", fig)


@PAPER.item(
    title="Figs 40/44: nonlinear stable region and onset alpha*(beta)",
    quick={**QUICK_REGION, "t_rtt": T_END_RTT},
)
def nonlinear_region(
    ctx: Context,
    alphas=GRID,
    betas=GRID,
    t_rtt: float = T_END_RTT_REGION,
) -> dict:
    """Sec IV-E/F: the phase-plane region on the paper's grid, its onset, the linear lobe inside.

    The full run follows the slow starts at small alpha (see ``T_END_RTT_REGION``); the quick
    grid only covers alpha >= 1, near the onset, where the shorter horizon serves.
    """
    stable, _ = phase_plane_region(rcp(), alphas, betas, t_end_rtt=t_rtt)
    rows = onset_rows(alphas, betas, stable)
    ctx.table("nonlinear_onset", rows, columns=["beta", "alpha_star_fluid", "alpha_star_paper"])
    values = {
        ("onset", r["beta"]): np.nan if r["alpha_star_fluid"] is None else r["alpha_star_fluid"]
        for r in rows
        if r["beta"] in PAPER_ONSET or r["beta"] in NOTE_ONSET
    }
    # the linear lobe lies inside the nonlinear region (Sec IV-E hypothesis)
    lin = np.array([[bode_stable(a, b) for a in alphas] for b in betas])
    inside = bool(np.all(stable[lin])) if lin.any() else True
    shown = f"{int(lin.sum())} linear-stable points, {int(np.sum(lin & ~stable))} outside"
    values["lobe inside"] = Value(inside, shown)
    shown = f"{int(stable.sum())} vs {int(lin.sum())} grid points"
    values["larger"] = Value(int(stable.sum()) > int(lin.sum()), shown)
    _plot_region(ctx, alphas, betas, stable, rows)
    return values
