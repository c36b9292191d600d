"""Alizadeh, Javanmard & Prabhakar (2011): the DCTCP fluid model's limit cycle."""

from __future__ import annotations

import math

import numpy as np

import fluidnet as fn

from ...models.dctcp_fluid import dctcp as dctcp_model
from ...models.dctcp_fluid import dctcp_sawtooth
from ..registry import Context
from ..targets import Value
from . import PAPER
from .data import DCTCP_GRID, DCTCP_K_GUIDELINE, DCTCP_QUICK

START = {"W": 1.0, "alpha": 1.0, "q": 0.0}


def sliding_point(N: float, C: float, d: float, K: float) -> dict[str, float]:
    """The only rest point: ``q = K`` on the marking surface, ``W = C R*/N`` and, from
    ``W' = 0`` with ``alpha = p`` (Filippov), ``alpha = sqrt(2/W)``."""
    W = C * (d + K / C) / N
    return {"W": W, "alpha": math.sqrt(2.0 / W), "q": K}


def cycle(m, t_end: float, **params: float) -> dict[str, float]:
    """Simulate and measure the tail: queue amplitude (max - min), period, means."""
    mm = m.with_params(**params) if params else m
    sol = fn.simulate(mm, t_end, history=START)
    osc = fn.oscillation(sol, "q")
    # a whole number of periods of the tail, so that cycle means carry no end effects
    n_per = max(1, int((t_end / 2) // osc.period)) if np.isfinite(osc.period) else 0
    t0 = t_end - n_per * osc.period if n_per else t_end / 2
    tt = np.linspace(t0, t_end, 20001)
    y = sol(tt)
    names = mm.state_names
    q, W, a = y[names.index("q")], y[names.index("W")], y[names.index("alpha")]
    v = mm.resolve_params()
    R = v["d"] + q / v["C"]
    Rs = v["d"] + v["K"] / v["C"]
    marked = np.asarray(sol(tt - Rs)[names.index("q")] > v["K"], dtype=float)
    return {
        "status": osc.status,
        "q_max": float(q.max()),
        "q_min": float(q.min()),
        "amplitude": float(q.max() - q.min()),
        "period": float(osc.period),
        "mean_alpha_over_R": float(np.mean(a / R) / np.mean(1 / R)),
        "marked_over_R": float(np.mean(marked / R) / np.mean(1 / R)),
        "utilization": float(np.mean(v["N"] * W / R) / v["C"]),
        "empties": bool(q.min() <= 0.0),
    }


@PAPER.item(
    title="Alizadeh et al. 2011: DCTCP fluid model, limit cycle vs K and g",
    quick={"grid": DCTCP_QUICK, "t_end": 0.1},
)
def dctcp(ctx: Context, grid=DCTCP_GRID, t_end: float = 0.2) -> dict:
    """No linearization; the limit cycle (runs of ``t_end`` seconds); amplitude and period on
    the ``grid`` of (K, g)."""
    m = dctcp_model()
    v = m.resolve_params()
    rest = sliding_point(v["N"], v["C"], v["d"], v["K"])
    try:
        m.linearize(equilibrium=rest)
        refused = False
    except fn.AnalysisError:
        refused = True
    saw = dctcp_sawtooth(v["N"], v["C"], v["d"], v["K"])
    values = {
        "refused": Value(refused, f"AnalysisError: {refused}"),
        "alpha*": Value(rest["alpha"], expected=saw["alpha"]),
    }
    rows = []
    for K, g in grid:
        c = cycle(m, t_end, K=K, g=g)
        sw = dctcp_sawtooth(v["N"], v["C"], v["d"], K)
        rows.append(
            {
                "K": K,
                "g": g,
                **c,
                "sawtooth_amplitude": sw["amplitude"],
                "sawtooth_period": sw["period"],
                "sawtooth_q_min": sw["q_min"],
            }
        )
        values["cycle", K, g] = c["status"]
        values["alpha", K, g] = Value(c["mean_alpha_over_R"], expected=c["marked_over_R"])
    ctx.table("dctcp_limit_cycle", rows)
    by_k = [r for r in rows if r["g"] == 1 / 16]
    amps = [r["amplitude"] for r in by_k]
    shown = ", ".join(f"K={r['K']:g}: {r['amplitude']:.1f}" for r in by_k)
    values["amplitude"] = Value(all(b > a for a, b in zip(amps, amps[1:], strict=False)), shown)
    k_guide = DCTCP_K_GUIDELINE * v["C"] * v["d"]
    holds = all(r["empties"] == (r["K"] < k_guide) for r in by_k) and all(
        r["utilization"] > 0.999 for r in by_k if not r["empties"]
    )
    shown = ", ".join(
        f"K={r['K']:g}: " + ("empties" if r["empties"] else f"q_min {r['q_min']:.1f}") for r in by_k
    )
    values["empties"] = Value(holds, shown)
    _plot(ctx, m, rows, t_end)
    return values


def _plot(ctx: Context, m, rows, t_end) -> None:
    fig, axes = ctx.new_figure(1, 3, figsize=(17, 4.2))
    sol = fn.simulate(m, t_end, history=START)
    tt = np.linspace(t_end - 0.01, t_end, 3000)
    y = sol(tt)
    axes[0].plot((tt - tt[0]) * 1e3, y[m.state_names.index("q")])
    axes[0].axhline(m.values["K"], color="k", ls="--", lw=0.6)
    axes[0].set(xlabel="t [ms]", ylabel="queue [pkts]", title="DCTCP limit cycle (K = 40)")
    axes[1].plot(y[m.state_names.index("W")], y[m.state_names.index("q")])
    axes[1].set(xlabel="W [pkts]", ylabel="q [pkts]", title="phase portrait of the cycle")
    by_k = [r for r in rows if r["g"] == 1 / 16]
    axes[2].plot([r["K"] for r in by_k], [r["amplitude"] for r in by_k], "o-", label="fluid")
    axes[2].plot(
        [r["K"] for r in by_k],
        [r["sawtooth_amplitude"] for r in by_k],
        "s--",
        label="sawtooth (2010)",
    )
    axes[2].set(xlabel="K [pkts]", ylabel="queue amplitude [pkts]", title="amplitude vs K")
    axes[2].legend()
    ctx.figure("dctcp_cycle", fig)
