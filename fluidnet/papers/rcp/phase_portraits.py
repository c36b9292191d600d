"""Sec IV-F (Figs 41-43): phase portraits at (0.6, 0.2), (0.6, 0.8), (1.4, 0.8) and the cycle.

Trajectories of eqs (4)-(7) from the six initial states in the (gamma, q) plane, and the limit
cycle of Fig 43 from (gamma, q) = (0.01, 2 C d0).
"""

from __future__ import annotations

import numpy as np

import fluidnet as fn

from ...models.rate_control import rcp
from ...symbolic.model import Model
from ..registry import Context
from ..targets import Value
from . import PAPER
from .phase_plane import converged, phase_plane_ics

#: The portraits: ((alpha, beta), figure, the paper's verdict "all trajectories converge").
PORTRAITS = (
    ((0.6, 0.2), "Fig 41", True),
    ((0.6, 0.8), "Fig 42", True),
    ((1.4, 0.8), "Fig 43", False),
)


def portrait_ends(pp, C: float, d0: float, t_end: float) -> tuple[list, list[bool]]:
    """Final ``(gamma, q / (C d0))`` of each trajectory of a phase portrait and its verdict."""
    finals, verdicts = [], []
    for xr_, yr_ in zip(pp.x, pp.y, strict=True):
        gam = np.asarray(xr_) / C
        finals.append((gam[-1], float(yr_[-1]) / (C * d0)))
        verdicts.append(converged((pp.t, xr_), after=0.5 * t_end))
    return finals, verdicts


def portrait_values(ref: str, want: bool, finals, verdicts, N: float) -> dict:
    """The paper's verdict on one portrait: all six converge to (1/N, 0), or not all do."""
    shown = f"{sum(verdicts)}/6 converge"
    if not want:
        return {(ref, "diverges"): Value(not all(verdicts), shown)}
    dev = max(abs(g - 1 / N) for g, _ in finals)
    return {
        (ref, "converge"): Value(all(verdicts), shown),
        (ref, "gamma"): 1 / N + dev,
        (ref, "q"): max(q for _, q in finals),
    }


def limit_cycle(base: Model, ax, t_rtt: float) -> dict:
    """Fig 43 bottom: the limit cycle from (gamma, q) = (0.01, 2 C d0)."""
    v = base.resolve_params()
    C, d0, N = v["C"], v["d0"], v["N"]
    m = base.with_params(alpha=1.4, beta=0.8)
    t_cyc = t_rtt * d0
    sol = fn.simulate(
        m,
        t_cyc,
        history={"R": 0.01 * C, "q": 2 * C * d0},
        t_eval=np.linspace(0.0, t_cyc, 40001),
    )
    osc = fn.oscillation(sol, "R", after=0.6 * t_cyc)
    tt = np.asarray(sol.t)
    late = tt >= 0.6 * t_cyc
    g_agg = N * np.asarray(sol["R"])[late] / C
    qn = np.asarray(sol["q"])[late] / (C * d0)
    ax.plot(N * np.asarray(sol["R"]) / C / N, np.asarray(sol["q"]) / (C * d0), lw=0.7)
    ax.plot(0.01, 2.0, "ko", ms=3)
    ax.plot(1 / N, 0, "r*", ms=10)
    ax.set(
        xlabel="gamma = R/C",
        ylabel="q / (C d0)",
        xscale="log",
        title="Fig 43 bottom: (1.4, 0.8) from (0.01, 2 C d0)",
    )
    return {
        "oscillates": Value(not osc.converged, f"peak-to-peak R/C {osc.amplitude / C:.4f}"),
        "cycle R": float(np.max(np.abs(g_agg - 1))),
        "cycle q": float(np.max(qn)),
        "q returns to 0": Value(bool(np.min(qn) <= 1e-9), f"min q/(C d0) {np.min(qn):.2e}"),
    }


@PAPER.item(
    title="Figs 41-43: phase portraits at (0.6,0.2), (0.6,0.8), (1.4,0.8)", quick={"t_cycle": 150.0}
)
def phase_portraits(ctx: Context, t_cycle: float = 400.0) -> dict:
    """Sec IV-F: trajectories from the six initial states in the (gamma, q) plane; the limit
    cycle of Fig 43 followed for ``t_cycle`` RTTs."""
    base = rcp()
    v = base.resolve_params()
    C, d0, N = v["C"], v["d0"], v["N"]
    t_end = 300.0 * d0  # the gamma = 0.5 starts need ~200 RTTs to drain their queue
    values = {}
    fig, axes = ctx.new_figure(1, 4, figsize=(20.0, 4.6))
    for ax, ((al, be), ref, want) in zip(axes, PORTRAITS, strict=False):
        m = base.with_params(alpha=al, beta=be)
        ics = phase_plane_ics(m)
        pp = fn.phase_portrait(m, ics, x="R", y="q", t_end=t_end)
        for ic, xr_, yr_ in zip(ics, pp.x, pp.y, strict=True):
            ax.plot(np.asarray(xr_) / C, np.asarray(yr_) / (C * d0), lw=0.8)
            ax.plot(ic["R"] / C, ic["q"] / (C * d0), "ko", ms=3)
        ax.plot(1 / N, 0, "r*", ms=10)
        ax.set(
            xlabel="gamma = R/C",
            ylabel="q / (C d0)",
            xscale="log",
            title=f"{ref}: (alpha, beta) = ({al}, {be})",
        )
        finals, verdicts = portrait_ends(pp, C, d0, t_end)
        values |= portrait_values(ref, want, finals, verdicts, N)
    values |= limit_cycle(base, axes[3], t_cycle)
    ctx.figure("fig41_43_phase_portraits", fig)
    return values
