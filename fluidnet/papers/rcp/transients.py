"""Transient scenarios of the fluid model: flow steps (Figs 37-39) and mixed RTPDs (Fig 19).

Fluid analogues of the paper's ns-2 runs: 5 -> 10 -> 5 flows with the onset of sustained
oscillation in alpha (Sec IV-E), and 20/40/20 flows whose RTPDs spread over 20-200 ms
(Sec III-B.6).
"""

from __future__ import annotations

import numpy as np
from scipy import integrate

import fluidnet as fn

from ...models.rate_control import PACKET_BITS, rcp_flow_schedule, rcp_heterogeneous
from ..registry import Context
from . import PAPER
from .data import GRID, PAPER_ONSET, parameter_grid
from .phase_plane import onset_alpha


def rate_levels(sol, times, C: float) -> list[float]:
    """``R/C`` just before each of ``times`` (linear interpolation of the solution)."""
    tt, rr = np.asarray(sol.t), np.asarray(sol["R"])
    return [float(np.interp(x, tt, rr)) / C for x in times]


def heterogeneous_utilization(sol, rtts, C: float) -> np.ndarray:
    """Bottleneck utilization of the Fig 19 run: 1 with a queue, else the arrivals over C.

    The arrivals are the rate each group sent one RTPD ago, weighted by its flow count (2 per
    group, 4 between 40 s and 100 s).
    """
    tt, rr, qq = np.asarray(sol.t), np.asarray(sol["R"]), np.asarray(sol["q"])
    counts = np.where((tt >= 40.0) & (tt < 100.0), 4.0, 2.0)
    y = sum(counts * np.interp(tt - d, tt, rr) for d in rtts)
    return np.where(qq > 0, 1.0, np.minimum(y / C, 1.0))


@PAPER.item(
    title="Figs 37-39 (fluid analogue): 5 -> 10 -> 5 flows, onset in alpha",
    quick={"alphas": parameter_grid(0.1, 1.1, 1.7)},
)
def flow_step(ctx: Context, alphas=GRID) -> dict:
    """Sec IV-E: 5 flows, 5 more at t = 40 s, the first 5 leave at t = 100 s."""
    base = rcp_flow_schedule((5, 10, 5), (40.0, 100.0))
    C = base.resolve_params()["C"]
    t_end = 160.0
    # the router starts at R(0) = 0.05 C, the initial rate of the paper's Fig 5 run
    hist = {"R": 0.05 * C, "q": 0.0}
    # the paper's operating point: the rate follows C/N(t)
    sol = fn.simulate(base.with_params(alpha=0.1, beta=1.0), t_end, history=hist)
    values = {("R/C", t): rate_levels(sol, [t], C)[0] for t in (39.0, 99.0, 159.0)}
    betas = (0.1, 0.4, 0.6)
    fig, axes = ctx.new_figure(3, 3, figsize=(16.0, 9.0))
    shown = (-0.2, 0.0, 0.2)  # alpha* - 0.2, alpha* and alpha* + 0.2 (paper's alpha*)
    rows = []
    for col, beta in enumerate(betas):
        stable = []
        for al in alphas:
            s = fn.simulate(base.with_params(alpha=float(al), beta=beta), t_end, history=hist)
            osc = fn.oscillation(s, "R", after=120.0)
            stable.append(bool(osc.converged))
            for row, k in enumerate(shown):
                if abs(al - (PAPER_ONSET[beta] + k)) < 1e-9:
                    ax = axes[row, col]
                    ax.plot(s.t, np.asarray(s["R"]) / C, lw=0.6)
                    ax.set(ylabel="R/C", ylim=(0.0, 0.45))
                    ax.set_title(
                        f"Fig {37 + col} analogue: beta = {beta}, alpha = {al:g} ({osc.status})",
                        fontsize=9,
                    )
        a_star = onset_alpha(alphas, stable)
        rows.append(
            {"beta": beta, "alpha_star_flow_step": a_star, "alpha_star_paper": PAPER_ONSET[beta]}
        )
        values["onset", beta] = np.nan if a_star is None else a_star
        axes[-1, col].set(xlabel="t [s]")
    ctx.table("flow_step_onset", rows, columns=list(rows[0]))
    ctx.figure("fig37_39_flow_step", fig)
    return values


@PAPER.item(title="Fig 19 (fluid analogue): 20/40/20 flows, RTPD 20-200 ms")
def heterogeneous(ctx: Context) -> dict:
    """Sec III-B.6: long flows with RTPDs spread over 20-200 ms, alpha = 0.1, beta = 1.0."""
    rtts = tuple(np.round(np.arange(0.02, 0.2001, 0.02), 10))
    m = rcp_heterogeneous(
        rtts,
        flows=[[2] * 10, [4] * 10, [2] * 10],
        times=[40.0, 100.0],
        alpha=0.1,
        beta=1.0,
        C=150e6 / PACKET_BITS,
        T=0.01,
    )
    v = m.resolve_params()
    C = v["C"]
    t_end = 140.0
    # R(0) is not stated; start five times below the 20-flow fair share, 0.01 C
    sol = fn.simulate(
        m, t_end, history={"R": 0.01 * C, "q": 0.0}, t_eval=np.linspace(0.0, t_end, 28001)
    )
    tt, rr = np.asarray(sol.t), np.asarray(sol["R"])
    util = heterogeneous_utilization(sol, rtts, C)
    values = {("gamma", t): rate_levels(sol, [t], C)[0] for t in (39.0, 99.0, 139.0)}
    for lo, hi in ((20.0, 40.0), (80.0, 100.0), (120.0, 140.0)):
        sel = (tt >= lo) & (tt < hi)
        values["util", lo] = float(
            integrate.trapezoid(util[sel], tt[sel]) / (tt[sel][-1] - tt[sel][0])
        )
    fig, axes = ctx.new_figure(2, 1, figsize=(8.0, 6.0))
    axes[0].plot(tt, rr / C)
    axes[0].set(ylabel="gamma = R/C", title="Fig 19 analogue: RTPD 20-200 ms, (0.1, 1.0)")
    axes[1].plot(tt, util)
    axes[1].set(xlabel="t [s]", ylabel="utilization", ylim=(0, 1.05))
    ctx.figure("fig19_heterogeneous", fig)
    return values
