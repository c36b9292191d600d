"""FAST TCP: local stability with delay under the static and the integrator link models."""

from __future__ import annotations

import math

import numpy as np
from scipy.optimize import brentq

import fluidnet as fn

from ...models.fast_window import fast_equilibrium, fast_static_critical_gamma, fast_tcp
from ..registry import Context
from ..targets import Value
from . import PAPER
from .data import FAST_DELAYS, FAST_QUICK

ROOTS = {"max_nodes": 600}


def integrator_critical_gamma(rho: float) -> float:
    """Smallest gamma where ``(l + g(1-rho))(l + e^{-l rho}) + g rho e^{-l rho}`` has a root
    ``l = j W`` (D-subdivision: ``g`` is linear in the equation; plain numpy/scipy)."""

    def gam(W):
        lam = 1j * W
        E = np.exp(-lam * rho)
        return -lam * (lam + E) / ((1 - rho) * (lam + E) + rho * E)

    W = np.linspace(1e-4, 60.0, 60001)
    g = gam(W)
    idx = np.flatnonzero(np.sign(g.imag[:-1]) != np.sign(g.imag[1:]))
    out = []
    for i in idx:
        Wc = brentq(lambda x: gam(x).imag, W[i], W[i + 1], xtol=1e-15, rtol=1e-15)
        gc = gam(Wc)
        if gc.real > 0 and abs(gc.imag) < 1e-9 * abs(gc):
            out.append(gc.real)
    return min(out) if out else math.inf


@PAPER.item(
    title="FAST TCP: stability with delay, static vs integrator link model",
    quick={"delays": FAST_QUICK},
)
def fast(ctx: Context, delays=FAST_DELAYS) -> dict:
    """Equilibria, critical gains at the propagation ``delays`` against the closed form /
    D-subdivision, nonlinear runs."""
    base = {"N": 10.0, "c": 12500.0, "alpha": 20.0}
    values = {}
    for link in ("static", "integrator"):
        eq = fast_tcp(link).equilibrium()
        ref = fast_equilibrium(base["N"], base["c"], 0.1, base["alpha"])
        values["w*", link] = Value(eq["w"], expected=ref["w"])
    q_star = fast_equilibrium(base["N"], base["c"], 0.1, base["alpha"])["q"]
    rows = []
    for d in delays:
        rho = d / (d + q_star)
        row = {"d": d, "rho": rho}
        for link, ref in (
            ("static", fast_static_critical_gamma(rho)),
            ("integrator", integrator_critical_gamma(rho)),
        ):
            m = fast_tcp(link, d=d)
            rest = fast_equilibrium(base["N"], base["c"], d, base["alpha"])
            eq = {"w": rest["w"]} | ({"q": rest["q"]} if link == "integrator" else {})

            def factory(gamma, m=m, eq=eq):
                return m.linearize(equilibrium=eq, gamma=gamma)

            try:
                cv = fn.critical_value(factory, "gamma", 0.05, 4.0, root_options=ROOTS)
                got = cv.value
            except fn.AnalysisError:
                got = math.inf
            row[f"gamma_c_{link}"] = got
            row[f"gamma_c_{link}_reference"] = ref
            if math.isfinite(ref) and ref < 4.0:  # else no target: the scan ends at 4
                values["gamma_c", d, link] = Value(got, expected=ref)
        rows.append(row)
    ctx.table("fast_critical_gamma", rows)
    shown = ", ".join(f"d={r['d']:g}: {r['gamma_c_static']:.3g}" for r in rows)
    holds = all(r["gamma_c_static_reference"] > 1 and r["gamma_c_static"] > 1 for r in rows)
    values["static"] = Value(holds, shown)
    integ = [r["gamma_c_integrator"] for r in rows]
    shown = ", ".join(f"d={r['d']:g}: {r['gamma_c_integrator']:.3g}" for r in rows)
    holds = all(b < a for a, b in zip(integ, integ[1:], strict=False)) and integ[-1] < 1
    values["integrator"] = Value(holds, shown)
    # critical delay at gamma = 0.7, integrator link (gamma_c 0.865 at d = 0.1 s, 0.643 at 0.3 s)
    cv = fn.critical_value(fast_tcp("integrator", gamma=0.7), "d", 0.1, 0.5, root_options=ROOTS)
    rho_c = brentq(lambda r: integrator_critical_gamma(r) - 0.7, 0.862, 0.97)
    values["d_c"] = Value(cv.value, expected=rho_c * q_star / (1 - rho_c))
    # nonlinear runs at gamma = 1, d = 0.1 s: the link models disagree
    fig, ax = ctx.new_figure(1, 1)
    w_star = fast_equilibrium(base["N"], base["c"], 0.1, base["alpha"])["w"]
    for link in ("static", "integrator"):
        m = fast_tcp(link, gamma=1.0)
        hist = {"w": 0.5 * w_star} | ({"q": 0.0} if link == "integrator" else {})
        sol = fn.simulate(m, 30.0, history=hist)
        osc = fn.oscillation(sol, "w")
        tt = np.linspace(0, 30.0, 3000)
        ax.plot(tt, sol(tt)[0], label=f"{link} link: {osc.status}")
        values["run", link] = osc.status
    ax.set(xlabel="t [s]", ylabel="window w [pkts]", title="FAST TCP, gamma = 1")
    ax.legend()
    ctx.figure("fast_runs", fig)
    fig, ax = ctx.new_figure(1, 1)
    rr = np.linspace(0.55, 0.99, 45)
    dd = rr * q_star / (1 - rr)
    ax.semilogx(dd, [fast_static_critical_gamma(r) for r in rr], label="static link")
    ax.semilogx(dd, [integrator_critical_gamma(r) for r in rr], label="integrator link")
    ax.set(
        xlabel="propagation delay d [s]",
        ylabel="critical gamma",
        title="FAST TCP: critical gain against delay (alpha = 20, N = 10)",
        ylim=(0, 5),
    )
    ax.legend()
    ctx.figure("fast_critical_gamma", fig)
    return values
