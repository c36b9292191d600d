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
from . import PAPER
from .bode import bode_stable, exact_boundary
from .constants import (
    GAMMA_INIT,
    NOTE_ONSET,
    PAPER_ONSET,
    QUEUE_INIT,
    T_END_RTT,
    T_END_RTT_REGION,
    parameter_grid,
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


def nonlinear_region(
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


def _check_onsets(ctx: Context, alphas, betas, stable: np.ndarray) -> list[dict]:
    """Onset alpha*(beta) per grid row against the paper's and an Euler check's; the rows."""
    rows = []
    for j, beta in enumerate(betas):
        a_star = onset_alpha(alphas, stable[j])
        b = round(float(beta), 10)
        rows.append({"beta": b, "alpha_star_fluid": a_star, "alpha_star_paper": PAPER_ONSET.get(b)})
        if b in PAPER_ONSET:
            ctx.check(
                "Figs 37-40",
                f"onset alpha* at beta = {b} (phase-plane rule, fluid model)",
                PAPER_ONSET[b],
                np.nan if a_star is None else a_star,
                tol=0.1 + 1e-9,
                note="tolerance: one step of the paper's 0.1 grid",
            )
        elif b in NOTE_ONSET:
            ctx.check(
                "Fig 44",
                f"onset alpha* at beta = {b}",
                NOTE_ONSET[b],
                np.nan if a_star is None else a_star,
                tol=0.1 + 1e-9,
                source="derived",
                note="independent Euler integration of (4)-(7); tolerance one grid step",
            )
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


@PAPER.item("nonlinear_region", title="Figs 40/44: nonlinear stable region and onset alpha*(beta)")
def nonlinear_region_item(ctx: Context) -> None:
    """Sec IV-E/F: the phase-plane region on the paper's grid, its onset, the linear lobe inside."""
    m = rcp()
    alphas = parameter_grid() if not ctx.quick else parameter_grid(0.1, 1.0, 2.0)
    betas = parameter_grid() if not ctx.quick else np.array([0.1, 0.4, 0.6, 1.0])
    # the full run follows the slow starts at small alpha (see T_END_RTT_REGION); the quick
    # grid only covers alpha >= 1, near the onset
    t_rtt = T_END_RTT if ctx.quick else T_END_RTT_REGION
    stable, _ = nonlinear_region(m, alphas, betas, t_end_rtt=t_rtt)
    rows = _check_onsets(ctx, alphas, betas, stable)
    ctx.table("nonlinear_onset", rows, columns=["beta", "alpha_star_fluid", "alpha_star_paper"])

    # the linear lobe lies inside the nonlinear region (Sec IV-E hypothesis)
    lin = np.array([[bode_stable(a, b) for a in alphas] for b in betas])
    inside = bool(np.all(stable[lin])) if lin.any() else True
    ctx.check_true(
        "Fig 44",
        "every linearly stable grid point is nonlinearly stable",
        inside,
        value=f"{int(lin.sum())} linear-stable points, {int(np.sum(lin & ~stable))} outside",
    )
    ctx.check_true(
        "Fig 44",
        "the nonlinear region is larger than the linear one",
        int(stable.sum()) > int(lin.sum()),
        value=f"{int(stable.sum())} vs {int(lin.sum())} grid points",
    )
    _plot_region(ctx, alphas, betas, stable, rows)
