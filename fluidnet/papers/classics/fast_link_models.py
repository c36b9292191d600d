"""FAST TCP: local stability with delay under the static and the integrator link models."""

from __future__ import annotations

import math

import numpy as np
from scipy.optimize import brentq

import fluidnet as fn

from ...models.fast_window import fast_equilibrium, fast_static_critical_gamma, fast_tcp
from ..registry import Context
from . import PAPER

#: Propagation delays (s) of the critical-gain sweep; N = 10, c = 12500 pkts/s, alpha = 20.
DELAYS = (0.05, 0.1, 0.3, 0.5)
ROOTS = {"max_points": 600}


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


@PAPER.item("fast", title="FAST TCP: stability with delay, static vs integrator link model")
def fast_item(ctx: Context) -> None:
    """Equilibria, critical gains against the closed form / D-subdivision, nonlinear runs."""
    base = {"N": 10.0, "c": 12500.0, "alpha": 20.0}
    for link in ("static", "integrator"):
        eq = fast_tcp(link).equilibrium()
        ref = fast_equilibrium(base["N"], base["c"], 0.1, base["alpha"])
        ctx.check(
            "Jin et al. 2004",
            f"equilibrium window, {link} link: c d/N + alpha [pkts]",
            ref["w"],
            eq["w"],
            tol=1e-9,
            rel=True,
            source="derived",
        )
    q_star = fast_equilibrium(base["N"], base["c"], 0.1, base["alpha"])["q"]
    rows = []
    for d in DELAYS if not ctx.quick else (0.1, 0.3):
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
                cv = fn.critical_value(factory, "gamma", 0.05, 4.0, n_scan=12, root_options=ROOTS)
                got = cv.value
            except fn.AnalysisError:
                got = math.inf
            row[f"gamma_c_{link}"] = got
            row[f"gamma_c_{link}_reference"] = ref
            if math.isfinite(ref) and ref < 4.0:
                ctx.check(
                    "linearization",
                    f"critical gamma, {link} link, d = {d:g} s",
                    ref,
                    got,
                    tol=1e-7,
                    rel=True,
                    source="derived",
                    note="reference: closed form (static) / D-subdivision scan (integrator), "
                    "independent of fluidnet",
                )
        rows.append(row)
    ctx.table("fast_critical_gamma", rows)
    ctx.check_true(
        "Wang et al. 2007",
        "static (ACK-clocked) link: stable for every delay when gamma <= 1",
        all(r["gamma_c_static_reference"] > 1 and r["gamma_c_static"] > 1 for r in rows),
        value=", ".join(f"d={r['d']:g}: {r['gamma_c_static']:.3g}" for r in rows),
        note="closed form: the critical gain decreases to pi/2 as the queueing delay vanishes",
    )
    integ = [r["gamma_c_integrator"] for r in rows]
    ctx.check_true(
        "Wang et al. 2007",
        "integrator link: the critical gain falls with the delay, below 1 at large delay",
        all(b < a for a, b in zip(integ, integ[1:], strict=False)) and integ[-1] < 1,
        value=", ".join(f"d={r['d']:g}: {r['gamma_c_integrator']:.3g}" for r in rows),
    )
    # critical delay at gamma = 0.7, integrator link (gamma_c 0.865 at d = 0.1 s, 0.643 at 0.3 s)
    cv = fn.critical_value(
        fast_tcp("integrator", gamma=0.7), "d", 0.1, 0.5, n_scan=8, root_options=ROOTS
    )
    rho_c = brentq(lambda r: integrator_critical_gamma(r) - 0.7, 0.862, 0.97)
    ctx.check(
        "linearization",
        "critical delay at gamma = 0.7, integrator link [s]",
        rho_c * q_star / (1 - rho_c),
        cv.value,
        tol=1e-5,
        rel=True,
        source="derived",
    )
    # nonlinear runs at gamma = 1, d = 0.1 s: the link models disagree
    fig, ax = ctx.new_figure(1, 1)
    w_star = fast_equilibrium(base["N"], base["c"], 0.1, base["alpha"])["w"]
    for link, want in (("static", "converged"), ("integrator", "sustained")):
        m = fast_tcp(link, gamma=1.0)
        hist = {"w": 0.5 * w_star} | ({"q": 0.0} if link == "integrator" else {})
        sol = fn.simulate(m, 30.0, history=hist)
        osc = fn.oscillation(sol, "w")
        tt = np.linspace(0, 30.0, 3000)
        ax.plot(tt, sol(tt)[0], label=f"{link} link: {osc.status}")
        ctx.check_equal(
            "Wang et al. 2007",
            f"gamma = 1, d = 0.1 s, {link} link",
            want,
            osc.status,
            source="derived",
        )
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
