"""Hollot et al. (2001, 2002): the PI AQM on the Misra-Gong-Towsley model, design example."""

from __future__ import annotations

import numpy as np

import fluidnet as fn

from ...models.tcp_aqm import hollot_pi, hollot_pi_design, hollot_plant
from ..registry import Context
from . import PAPER, mgt_loop
from .data import HOLLOT_GAINS, HOLLOT_NETWORK, NS2_PI

#: Simulated time of the nonlinear response (s) and the start the design is tested from.
T_END = 100.0
START = {"W": 1.0, "q": 0.0, "p": 0.0}


def operating_point() -> dict[str, float]:
    """``R0``, ``W0``, ``p0`` of the design example from its definition (plain arithmetic)."""
    N, C, Tp, q0 = (HOLLOT_NETWORK[k] for k in ("N", "C", "Tp", "q_ref"))
    R0 = Tp + q0 / C
    W0 = R0 * C / N
    return {"R0": R0, "W0": W0, "p0": 2.0 / W0**2}


def exact_pi_loop(s, K: float, z: float):
    """The exact linearized loop with the PI controller (hand-derived, numpy)."""
    N, C = HOLLOT_NETWORK["N"], HOLLOT_NETWORK["C"]
    R0 = operating_point()["R0"]
    return mgt_loop.plant_exact(s, N, C, R0) * mgt_loop.pi_controller(s, K, z)


def settling_time(t: np.ndarray, q: np.ndarray, target: float, band: float) -> float:
    """Last time ``|q - target|`` exceeds ``band * target`` (the 5 % settling time for 0.05)."""
    out = np.flatnonzero(np.abs(q - target) > band * target)
    return float(t[out[-1]]) if out.size else float(t[0])


@PAPER.item("hollot_pi", title="Hollot et al.: PI AQM design example (N=60, C=3750, Tp=0.2 s)")
def hollot_pi_item(ctx: Context) -> None:
    """Equilibrium, linearization, gains, margins and the nonlinear response of the PI design."""
    m = hollot_pi()
    op = operating_point()
    N, C = HOLLOT_NETWORK["N"], HOLLOT_NETWORK["C"]
    eq = m.equilibrium()
    ctx.check("design example", "equilibrium queue = q_ref [pkts]", 175.0, eq["q"], tol=1e-9)
    ctx.check(
        "design example",
        "W0 = R0 C/N [pkts]",
        op["W0"],
        eq["W"],
        tol=1e-12,
        rel=True,
        source="derived",
    )
    ctx.check(
        "design example", "p0 = 2/W0^2", op["p0"], eq["p"], tol=1e-12, rel=True, source="derived"
    )

    # linearization: fluidnet's Jacobians against Hollot et al.'s linearized equations
    lin = m.linearize()
    R0 = op["R0"]
    (tau,) = lin.delays
    ctx.check("linearization", "loop delay = R0 [s]", R0, tau, tol=1e-12, source="derived")
    A0, A1 = lin.A0, lin.A[0]
    iW, iq, ip = (lin.state_names.index(k) for k in ("W", "q", "p"))
    expect = {
        "dW'/dW = -N/(R0^2 C)": (A0[iW, iW], -N / (R0 * R0 * C)),
        "dW'/dW(t-R0) = -N/(R0^2 C)": (A1[iW, iW], -N / (R0 * R0 * C)),
        "dW'/dq = -1/(R0^2 C)": (A0[iW, iq], -1 / (R0 * R0 * C)),
        "dW'/dq(t-R0) = +1/(R0^2 C)": (A1[iW, iq], 1 / (R0 * R0 * C)),
        "dW'/dp(t-R0) = -R0 C^2/(2 N^2)": (A1[iW, ip], -R0 * C * C / (2 * N * N)),
        "dq'/dW = N/R0": (A0[iq, iW], N / R0),
        "dq'/dq = -1/R0": (A0[iq, iq], -1 / R0),
    }
    for name, (got, want) in expect.items():
        ctx.check("linearization", name, want, got, tol=1e-10, rel=True)

    # the printed gains against the design rule (z on the TCP pole, unit loop gain at z)
    design = hollot_pi_design(N, C, R0, omega_g=HOLLOT_GAINS["z"])
    ctx.check(
        "PI design",
        "z = 2N/(R0^2 C) [rad/s]",
        HOLLOT_GAINS["z"],
        design["z"],
        tol=0.005,
        note="the TCP pole 0.5259 rad/s, printed to two decimals",
    )
    ctx.check(
        "PI design",
        "K_pi = omega_g (2N)^2/(R0 C)^3 at omega_g = 0.53",
        HOLLOT_GAINS["K_pi"],
        design["K_pi_low"],
        tol=0.005e-6,
        note="the printed gain is the low-frequency rule; with the queue pole's factor "
        f"|1 + j omega_g R0| the unit-crossover gain would be {design['K_pi']:.4g}",
    )
    # the authors' discrete implementation: Tustin at w Hz
    Ts = 1.0 / NS2_PI["w"]
    K, z = HOLLOT_GAINS["K_pi"], HOLLOT_GAINS["z"]
    ctx.check("ns-2 PI", "a = K (1/z + Ts/2)", NS2_PI["a"], K * (1 / z + Ts / 2), tol=0.0005e-5)
    ctx.check("ns-2 PI", "b = K (1/z - Ts/2)", NS2_PI["b"], K * (1 / z - Ts / 2), tol=0.0005e-5)

    # loop gain: fluidnet's symbolic loop against the hand-derived exact loop
    L = m.loop_gain("p")
    w = np.logspace(-2, 2, 41)
    dev = float(np.max(np.abs(L.freqresp(w) / exact_pi_loop(1j * w, K, z) - 1)))
    ctx.check("loop gain", "max |L_fluidnet / L_hand - 1|", 0.0, dev, tol=1e-10, source="derived")

    mg = fn.margins(L)
    ref = mgt_loop.margins_numpy(lambda s: exact_pi_loop(s, K, z), 1e-2, 1e2)
    for name, got, want in (
        ("phase margin [deg]", mg.phase_margin, ref["phase_margin"]),
        ("gain crossover [rad/s]", mg.gain_crossover, ref["w_gc"]),
        ("gain margin", mg.gain_margin, ref["gain_margin"]),
        ("phase crossover [rad/s]", mg.phase_crossover, ref["w_pc"]),
    ):
        ctx.check("margins (exact model)", name, want, got, tol=1e-8, rel=True, source="derived")
    ctx.check_true(
        "PI design",
        "the design is stable with positive margins (Nyquist: no encirclement)",
        mg.phase_margin > 0 and mg.gain_margin > 1 and m.linearize().is_stable(),
        value=f"PM {mg.phase_margin:.2f} deg, GM {mg.gain_margin:.3f} "
        f"({20 * np.log10(mg.gain_margin):.1f} dB), DM {mg.delay_margin:.3f} s",
    )
    approx = fn.margins(hollot_plant(N, C, R0) * _pi_tf(K, z))
    ref_a = mgt_loop.margins_numpy(
        lambda s: mgt_loop.plant_hollot(s, N, C, R0) * mgt_loop.pi_controller(s, K, z), 1e-2, 1e2
    )
    ctx.check(
        "margins (Hollot plant)",
        "phase margin [deg]",
        ref_a["phase_margin"],
        approx.phase_margin,
        tol=1e-8,
        rel=True,
        source="derived",
    )
    ctx.check(
        "margins (Hollot plant)",
        "gain margin",
        ref_a["gain_margin"],
        approx.gain_margin,
        tol=1e-8,
        rel=True,
        source="derived",
    )
    ctx.table(
        "hollot_pi_margins",
        [
            {
                "loop": name,
                "phase_margin_deg": x.phase_margin,
                "gain_crossover": x.gain_crossover,
                "gain_margin": x.gain_margin,
                "phase_crossover": x.phase_crossover,
                "delay_margin_s": x.delay_margin,
            }
            for name, x in (("exact model", mg), ("Hollot plant", approx))
        ],
    )

    # nonlinear: from an empty queue, and with twice the load (N = 120)
    rows, fig_data = [], []
    for n in (60.0, 120.0) if not ctx.quick else (60.0,):
        sol = fn.simulate(m.with_params(N=n), T_END, history=START)
        tt = np.linspace(0, T_END, 4001)
        yy = sol(tt)
        q = yy[m.state_names.index("q")]
        ts = settling_time(tt, q, 175.0, 0.05)
        rows.append(
            {"N": n, "q_end": float(q[-1]), "settling_time_5pc_s": ts, "q_max": float(q.max())}
        )
        fig_data.append((n, tt, yy))
        ctx.check(
            "PI response",
            f"q(100 s) = q_ref with N = {n:g} [pkts]",
            175.0,
            float(q[-1]),
            tol=0.5,
            source="derived",
            note="the integral action removes the steady-state error at any load",
        )
    ctx.table("hollot_pi_response", rows)
    _plot(ctx, m, fig_data, L)


def _pi_tf(K: float, z: float):
    from ...linear.delaytf import DelayTF
    from ...linear.quasipoly import QuasiPolynomial

    return DelayTF(QuasiPolynomial([K / z, K]), QuasiPolynomial([1.0, 0.0]))


def _plot(ctx: Context, m, fig_data, L) -> None:
    fig, axes = ctx.new_figure(1, 3, figsize=(16, 4.2))
    for n, tt, yy in fig_data:
        axes[0].plot(tt, yy[m.state_names.index("q")], label=f"N = {n:g}")
        axes[1].plot(tt, yy[m.state_names.index("p")], label=f"N = {n:g}")
    axes[0].axhline(175.0, color="k", lw=0.6, ls="--")
    axes[0].set(xlabel="t [s]", ylabel="queue q [pkts]", title="PI: queue settles at q_ref")
    axes[1].set(xlabel="t [s]", ylabel="marking p", title="marking probability")
    w = np.logspace(-2, 1.5, 400)
    N, C = HOLLOT_NETWORK["N"], HOLLOT_NETWORK["C"]
    R0 = operating_point()["R0"]
    K, z = HOLLOT_GAINS["K_pi"], HOLLOT_GAINS["z"]
    axes[2].loglog(w, np.abs(L.freqresp(w)), label="exact model (fluidnet)")
    approx = mgt_loop.plant_hollot(1j * w, N, C, R0) * mgt_loop.pi_controller(1j * w, K, z)
    axes[2].loglog(w, np.abs(approx), "--", label="Hollot plant")
    axes[2].axhline(1.0, color="k", lw=0.6)
    axes[2].set(xlabel="omega [rad/s]", ylabel="|L(j omega)|", title="PI loop gain")
    for ax in axes:
        ax.legend()
    ctx.figure("hollot_pi", fig)
