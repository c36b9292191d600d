"""The sliding mode of the binary-feedback law on one link, measured; the linear analysis where
it applies; the paper's stability statements (Sec II, citing Movsichoff et al.).

Three TCP flows in congestion avoidance (RTTs 12, 22 and 80 ms, the first RTTs of the paper's
topology II) share a 20 Mb/s link. On the capacity surface ``x1 + x2 + x3 = B`` the binary
indicator switches infinitely fast in the fluid limit; the Filippov solution slides on the
surface with the link congested a fraction ``p`` of the time (the equivalent control). At the
optimum every flow has ``f(x_i) = p``, i.e. ``mu_i / (mu_i + beta x_i) = p``: rates
proportional to ``mu_i`` (to 1/RTT), ``p = sum mu / (sum mu + beta B)``.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import brentq

import fluidnet as fn

from ...errors import AnalysisError
from ...models.sliding_mode import single_link_network, tcp_law, topology_one_network
from ..registry import Context
from ..targets import Value
from . import PAPER
from .data import (
    B_LINK,
    BETA,
    RTT_LINK,
    T_LINK,
    TABLE_II_EXACT,
    X0_LINK,
    closed_form,
    mu,
)
from .rate_allocation import ratio

WIDTHS = (1e-2, 1e-3, 1e-4)


def link_network():
    return single_link_network([tcp_law(mu(r)) for r in RTT_LINK], B_LINK)


def smoothed_equilibrium(width: float) -> dict[str, float]:
    """Equilibrium with logistic marking: ``f(x_i) = p`` for every flow with the load
    ``y = B + width B logit(p)`` (brentq on p)."""
    m = np.array([mu(r) for r in RTT_LINK])

    def gap(p):
        return np.sum(m * (1 - p) / (BETA * p)) - B_LINK * (1 + width * np.log(p / (1 - p)))

    p = brentq(gap, 1e-9, 1 - 1e-9, xtol=1e-15)
    return {f"x_{i + 1}": float(m[i] * (1 - p) / (BETA * p)) for i in range(3)}


def duty_fraction_series(sol, tt: np.ndarray) -> np.ndarray:
    """The equivalent control along a solution: ``sum a / sum z`` on the surface, else 0/1."""
    m = np.array([mu(r) for r in RTT_LINK])[:, None]
    x = sol(tt)
    y = x.sum(axis=0)
    p = m.sum(axis=0) / np.sum(m + BETA * x, axis=0)
    return np.where(np.abs(y - B_LINK) <= 1e-9 * B_LINK, p, (y > B_LINK).astype(float))


@PAPER.item(title="The sliding mode on one link: duty fraction, no chattering, linear analysis")
def sliding_mode(ctx: Context) -> dict:
    """One link: sliding equilibrium, duty fraction, no chattering, discrete law, linearization."""
    net = link_network()
    m = net.model()
    hist = {f"x_{i + 1}": v for i, v in enumerate(X0_LINK)}
    sol = fn.simulate(m, T_LINK, history=hist)
    x_star, p_star = closed_form()
    v = sol(T_LINK)
    values = {("x", i): float(v[i]) for i in range(3)}
    surface = "-B_1 + x_1 + x_2 + x_3"
    t_hit = (B_LINK - sum(X0_LINK)) / sum(mu(r) for r in RTT_LINK)
    values["time sliding"] = sol.counters.time_sliding[surface]
    # continue from the steady state: the engine's averaged Filippov weight is the duty fraction
    late = fn.simulate(m, T_LINK + 200.0, history=sol)
    values["duty"] = late.counters.mean_sliding_weight[surface]
    fx = [mu(r) / (mu(r) + BETA * float(late(T_LINK + 200.0)[i])) for i, r in enumerate(RTT_LINK)]
    values["f = p"] = max(abs(f - p_star) for f in fx)
    tt = np.linspace(t_hit + 1.0, T_LINK, 4000)
    values["chattering"] = float(np.max(np.abs(sol(tt).sum(axis=0) - B_LINK)))
    shown = f"{sol.counters.steps} steps, {sol.counters.sliding_entries} sliding entry"
    values["few steps"] = Value(
        sol.counters.steps < 300 and sol.counters.sliding_entries == 1, shown
    )
    errs, disc = {}, None
    for dt in (0.1, 0.01):
        disc = net.discrete(T_LINK, dt, list(X0_LINK))
        errs[dt] = float(np.max(np.abs(disc.mean_rates / x_star - 1)))
    shown = ", ".join(f"dt = {dt:g}: max rel. error {e:.4f}" for dt, e in errs.items())
    values["discrete"] = Value(errs[0.01] < 0.005 and errs[0.1] / errs[0.01] > 3, shown)
    values["congested steps"] = float(disc.marking_fraction[0])
    # linear analysis: not on the switching surface, but of the sliding motion and smoothed models
    err = ""
    try:
        m.linearize(equilibrium={f"x_{i + 1}": float(late(T_LINK + 200.0)[i]) for i in range(3)})
    except AnalysisError as exc:
        err = str(exc)
    values["refused"] = Value("switching surface" in err, err[:80] + "...")
    sm = net.sliding_model()
    eq = sm.equilibrium(guess={"x_1": x_star[0], "x_2": x_star[1]})
    values["sliding x1"] = eq["x_1"]
    lam_slide = np.sort(np.linalg.eigvals(sm.linearize(equilibrium=eq).A0).real)
    values |= {("eig", k): lam_slide[k] for k in range(2)}
    values["stable"] = Value(bool(np.all(lam_slide < 0)), str(np.round(lam_slide, 5)))
    rows = [
        {
            "marking": "binary (sliding motion)",
            "width": 0.0,
            "load": B_LINK,
            "x1": x_star[0],
            "slow_eig_1": lam_slide[0],
            "slow_eig_2": lam_slide[1],
            "fast_eig": None,
        }
    ]
    gaps = []
    for w in WIDTHS:
        smooth = net.model(marking="smooth", width=w)
        e = smooth.equilibrium(guess=smoothed_equilibrium(w))
        lam = np.sort(np.linalg.eigvals(smooth.linearize(equilibrium=e).A0).real)
        gaps.append(float(np.max(np.abs(lam[1:] - lam_slide) / np.abs(lam_slide))))
        rows.append(
            {
                "marking": "smooth",
                "width": w,
                "load": sum(e.values()),
                "x1": e["x_1"],
                "slow_eig_1": lam[1],
                "slow_eig_2": lam[2],
                "fast_eig": lam[0],
            }
        )
    shown = ", ".join(f"{g:.2e}" for g in gaps)
    values["slow eigenvalues"] = Value(gaps[-1] < 1e-2 and gaps[0] > gaps[-1], shown)
    holds = all(r["fast_eig"] * r["width"] < 0 for r in rows[1:])
    holds = holds and abs(rows[-1]["fast_eig"] / rows[-2]["fast_eig"] - 10) < 1
    values["fast eigenvalue"] = Value(holds, ", ".join(f"{r['fast_eig']:.3g}" for r in rows[1:]))
    ctx.table("sliding_smoothed", rows, list(rows[0]))
    # global stability (claimed from Movsichoff et al.): topology I from several starts
    m1 = topology_one_network("I").model()
    starts = [(1, 1, 1, 1), (90, 5, 50, 9), (10, 20, 30, 60), (0.1, 99, 0.1, 0.5)]
    ends = [
        ratio(fn.simulate(m1, 4000.0, history={f"x_{i + 1}": s[i] for i in range(4)})(4000.0))
        for s in starts
    ]
    holds = all(abs(e - TABLE_II_EXACT["I"]) < 1e-4 for e in ends)
    values["global"] = Value(holds, ", ".join(f"{e:.5f}" for e in ends))
    # figure
    smooth = fn.simulate(net.model(marking="smooth", width=1e-2), 120.0, history=hist)
    dsc = net.discrete(120.0, 0.1, list(X0_LINK), record_every=1)
    tt = np.linspace(0.0, 120.0, 2400)
    fig, axes = ctx.new_figure(1, 3, figsize=(18.0, 4.4))
    xs = sol(tt)
    for i in range(3):
        axes[0].plot(tt, xs[i], label=f"x{i + 1} (RTT {RTT_LINK[i] * 1e3:.0f} ms)")
        axes[0].plot(dsc.t, dsc.x[i], lw=0.5, alpha=0.5)
    axes[0].set(
        xlabel="t (RTTs)",
        ylabel="rate (Mb/s)",
        title="binary feedback: Filippov (thick), discrete dt = 0.1 (thin)",
    )
    axes[0].legend(fontsize=8)
    axes[1].plot(tt, xs.sum(axis=0), label="binary, Filippov sliding")
    axes[1].plot(tt, smooth(tt).sum(axis=0), label="smoothed indicator (width 1% of B)")
    axes[1].plot(dsc.t, dsc.x.sum(axis=0), lw=0.5, label="discrete time, dt = 0.1 (chatters)")
    axes[1].set(
        xlabel="t (RTTs)",
        ylabel="load y (Mb/s)",
        ylim=(15, 21),
        title="the load on the switching surface",
    )
    axes[1].legend(fontsize=8)
    axes[2].plot(tt, duty_fraction_series(sol, tt), label="equivalent control sum a / sum z")
    axes[2].axhline(
        late.counters.mean_sliding_weight[surface],
        color="k",
        ls=":",
        label="engine's mean Filippov weight (steady state)",
    )
    axes[2].set(
        xlabel="t (RTTs)",
        ylabel="duty fraction p",
        ylim=(0, 0.15),
        title="the link's congestion duty fraction",
    )
    axes[2].legend(fontsize=8)
    ctx.figure("sliding_single_link", fig)
    return values
