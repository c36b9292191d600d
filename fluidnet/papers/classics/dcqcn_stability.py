"""Zhu et al. (2015, 2016): DCQCN's fixed point, phase margin against N, critical delay."""

from __future__ import annotations

import numpy as np

import fluidnet as fn

from ...models.dcqcn_fluid import dcqcn, dcqcn_fixed_point, dcqcn_p_approx
from ..registry import Context
from . import PAPER
from .data import DCQCN_PM_FIGURE, DCQCN_PM_ZERO_100US

N_CURVE = (2, 4, 6, 8, 10, 12, 16, 20, 25, 30, 36, 40, 50, 64, 80, 100)


def rest(n: float) -> dict[str, float]:
    """The fixed point of Theorem 1 as model states."""
    fp = dcqcn_fixed_point(N=float(n))
    return {k: fp[k] for k in ("alpha", "R_T", "R_C", "q")}


def phase_margin(m, n: float, delay: float):
    """Margins and Nyquist count of the loop cut at the marking probability."""
    L = m.loop_gain("p", N=float(n), tau_star=float(delay), equilibrium=rest(n))
    return fn.margins(L), fn.nyquist(L)


def critical_delay(m, n: float, lo: float, hi: float, n_scan: int):
    """``fn.critical_value`` on ``tau_star`` at the fixed point of ``n`` flows."""
    eq = rest(n)

    def factory(tau_star):
        return m.linearize(equilibrium=eq, N=float(n), tau_star=tau_star)

    return fn.critical_value(factory, "tau_star", lo, hi, n_scan=n_scan)


@PAPER.item("dcqcn", title="Zhu et al. 2016: DCQCN fixed point, phase margin vs N, delay")
def dcqcn_item(ctx: Context) -> None:
    """Fixed point two ways, the printed approximation, Fig. 3(a), the 85 us claim, runs."""
    m = dcqcn()
    eq = m.equilibrium()
    fp = dcqcn_fixed_point()
    for k in ("q", "R_T", "alpha"):
        ctx.check(
            "Theorem 1",
            f"fixed point {k}: model equilibrium vs fixed-point equation",
            fp[k],
            eq[k],
            tol=1e-8,
            rel=True,
            source="derived",
        )
    ctx.check("Theorem 1", "R_C* = C/N [pkts/us]", 0.5, eq["R_C"], tol=1e-12, rel=True)
    ctx.check(
        "Theorem 1",
        "approximation of p* (cube root) at N = 10",
        dcqcn_p_approx(),
        fp["p"],
        tol=0.05,
        rel=True,
        mismatch="the Taylor expansion at p = 0 keeps the p^3 term only, but tau R_C p* = 0.15 "
        "is not small: the approximation is 30 % above the root of the exact equation",
    )

    mr = dcqcn(marking="ramp")
    curve = {1.0: N_CURVE, 50.0: N_CURVE, 100.0: N_CURVE}
    if ctx.quick:
        curve = {1.0: (2, 10, 64), 100.0: (10, 30, 40)}
    rows = []
    for delay, ns in curve.items():
        for n in ns:
            mg, ny = phase_margin(mr, n, delay)
            rows.append(
                {
                    "delay_us": delay,
                    "N": n,
                    "phase_margin": mg.phase_margin,
                    "gain_crossover": mg.gain_crossover,
                    "nyquist_stable": ny.stable,
                    "paper": DCQCN_PM_FIGURE[delay].get(n),
                }
            )
    ctx.table("dcqcn_phase_margin", rows)
    for r in rows:
        if (r["phase_margin"] > 0) != r["nyquist_stable"]:
            ctx.check_true(
                "Fig. 3(a)", f"PM sign = Nyquist verdict, N={r['N']}, {r['delay_us']:g} us", False
            )
    ctx.check_true(
        "Fig. 3(a)",
        "phase-margin sign agrees with the Nyquist count everywhere",
        all((r["phase_margin"] > 0) == r["nyquist_stable"] for r in rows),
        source="derived",
    )
    for delay in curve:
        pts = [r for r in rows if r["delay_us"] == delay and r["paper"] is not None]
        worst = max(abs(r["phase_margin"] - r["paper"]) for r in pts)
        ctx.check(
            "Fig. 3(a)",
            f"largest |PM - printed PM| at {delay:g} us [deg]",
            0.0,
            worst,
            tol=2.0,
            mismatch="the paper linearizes a Taylor-approximated model (Appendix A) at the "
            "approximate p*, which is 30 % off at N = 10; fluidnet linearizes the model of "
            "Fig. 2 exactly at its exact fixed point",
        )
    if not ctx.quick:
        for delay in curve:
            pm = [r["phase_margin"] for r in rows if r["delay_us"] == delay]
            k = int(np.argmin(pm))
            ctx.check_true(
                "Fig. 3(a)",
                f"non-monotonic in N at {delay:g} us: a dip, then a rise",
                0 < k < len(pm) - 1 and pm[-1] > pm[k] + 10,
                value=f"min {pm[k]:.2f} deg at N = {N_CURVE[k]}",
            )
        pm100 = [r for r in rows if r["delay_us"] == 100.0]
        ctx.check_true(
            "Fig. 3(a)",
            "at 100 us the margin is negative for some N",
            min(r["phase_margin"] for r in pm100) < 0,
        )
        ctx.check_true(
            "Fig. 3(a)",
            "at 1 us the margin is positive for every N",
            all(r["phase_margin"] > 0 for r in rows if r["delay_us"] == 1.0),
        )
        cross = next(r["N"] for r in pm100 if r["phase_margin"] > 0 and r["N"] > 12)
        ctx.check(
            "Fig. 3(a)",
            "first N with a positive margin at 100 us (grid point)",
            DCQCN_PM_ZERO_100US,
            cross,
            tol=3.0,
            mismatch="with the exact linearization the 100 us curve turns positive "
            "between N = 25 and 30, not at 34.3 (see the largest-difference targets)",
        )

    # Sec. 3.2 text: at 85 us unstable for 10 flows, stable for 2 and 64 flows
    for n, want in ((2, True), (10, False), (64, True)):
        mg, ny = phase_margin(mr, n, 85.0)
        ctx.check_equal(
            "Sec. 3.2",
            f"stable at 85 us with N = {n}",
            want,
            ny.stable,
            note=f"PM {mg.phase_margin:.2f} deg",
        )
    cv = critical_delay(m, 10, 40.0 if ctx.quick else 5.0, 100.0, 4 if ctx.quick else 16)
    mg, _ = phase_margin(m, 10, cv.value * 0.999)
    mg2, _ = phase_margin(m, 10, cv.value * 1.001)
    ctx.check_true(
        "Sec. 3.2",
        "critical delay for N = 10: the phase margin changes sign across it",
        mg.phase_margin > 0 > mg2.phase_margin,
        value=f"tau* = {cv.value:.3f} us, omega {cv.omega:.5f} rad/us; PM "
        f"{mg.phase_margin:.3f} / {mg2.phase_margin:.3f} deg",
        source="derived",
    )
    ctx.check_true(
        "Sec. 3.2",
        "N = 10: stable at 4 us, unstable at 85 us",
        4.0 < cv.value < 85.0,
        value=f"critical delay {cv.value:.2f} us",
    )

    # nonlinear fluid runs (marking of Fig. 2) from the fixed point with R_C 20 % high:
    # 4 us returns to it, 85 us settles on a limit cycle (the queue empties on every cycle).
    # (From line rate with an empty queue the integration currently fails where the rates are
    # ~1e-3 C/N; see papers/classics/README.md.)
    fig, axes = ctx.new_figure(1, 2, figsize=(13, 4.2))
    t_end = 30000.0
    start = {**eq, "R_C": 1.2 * eq["R_C"]}
    for delay, want in ((4.0, ("converged", "decaying")), (85.0, ("sustained",))):
        sol = fn.simulate(m.with_params(tau_star=delay), t_end, history=start)
        osc = fn.oscillation(sol, "q")
        ctx.check_true(
            "Sec. 3.2",
            f"fluid run, N = 10, tau* = {delay:g} us: {' or '.join(want)}",
            osc.status in want,
            value=f"{osc.status}, amplitude {osc.amplitude:.1f} pkts",
            source="derived",
        )
        tt = np.linspace(0, t_end, 4000)
        y = sol(tt)
        axes[0].plot(tt / 1e3, y[m.state_names.index("R_C")] * 8, label=f"{delay:g} us")
        axes[1].plot(tt / 1e3, y[m.state_names.index("q")], label=f"{delay:g} us")
    axes[0].set(xlabel="t [ms]", ylabel="R_C [Gb/s]", title="DCQCN, N = 10")
    axes[1].set(xlabel="t [ms]", ylabel="queue [KB]", title="queue")
    for ax in axes:
        ax.legend()
    ctx.figure("dcqcn_runs", fig)
    _plot_pm(ctx, rows, curve)


def _plot_pm(ctx: Context, rows, curve) -> None:
    fig, ax = ctx.new_figure(1, 1)
    for delay in curve:
        pts = [r for r in rows if r["delay_us"] == delay]
        line = ax.plot(
            [r["N"] for r in pts],
            [r["phase_margin"] for r in pts],
            "o-",
            label=f"fluidnet, {delay:g} us",
        )
        pub = DCQCN_PM_FIGURE[delay]
        ax.plot(
            list(pub),
            list(pub.values()),
            "--",
            color=line[0].get_color(),
            label=f"Fig. 3(a), {delay:g} us",
        )
    ax.axhline(0, color="k", lw=0.6)
    ax.set(
        xlabel="number of flows N",
        ylabel="phase margin [deg]",
        title="DCQCN phase margin (ramp marking beyond K_max)",
    )
    ax.legend(fontsize=8)
    ctx.figure("dcqcn_phase_margin", fig)
