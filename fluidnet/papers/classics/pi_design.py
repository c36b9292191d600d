"""Hollot et al. (2001, 2002): the PI AQM on the Misra-Gong-Towsley model, design example."""

from __future__ import annotations

import numpy as np

import fluidnet as fn

from ...models.tcp_aqm import hollot_pi as hollot_pi_model
from ...models.tcp_aqm import hollot_pi_design, hollot_plant
from ..registry import Context
from ..targets import Value
from . import PAPER, mgt_loop
from .data import HOLLOT_GAINS, HOLLOT_NETWORK, NS2_PI

#: Simulated time of the nonlinear response (s) and the start the design is tested from.
T_END = 100.0
START = {"W": 1.0, "q": 0.0, "p": 0.0}


def settling_time(t: np.ndarray, q: np.ndarray, target: float, band: float) -> float:
    """Last time ``|q - target|`` exceeds ``band * target`` (the 5 % settling time for 0.05)."""
    out = np.flatnonzero(np.abs(q - target) > band * target)
    return float(t[out[-1]]) if out.size else float(t[0])


@PAPER.item(
    title="Hollot et al.: PI AQM design example (N=60, C=3750, Tp=0.2 s)",
    quick={"loads": (60.0,)},
)
def hollot_pi(ctx: Context, loads=(60.0, 120.0)) -> dict:
    """Equilibrium, linearization, gains, margins and the nonlinear response of the PI design
    (from an empty queue with ``loads`` flows)."""
    m = hollot_pi_model()
    N, C = HOLLOT_NETWORK["N"], HOLLOT_NETWORK["C"]
    R0 = mgt_loop.operating_point()["R0"]
    eq = m.equilibrium()
    # linearization: fluidnet's Jacobians against Hollot et al.'s linearized equations
    lin = m.linearize()
    (tau,) = lin.delays
    A0, A1 = lin.A0, lin.A[0]
    iW, iq, ip = (lin.state_names.index(k) for k in ("W", "q", "p"))
    values = {"q": eq["q"], "W0": eq["W"], "p0": eq["p"], "R0": tau}
    values |= {
        "dW'/dW = -N/(R0^2 C)": A0[iW, iW],
        "dW'/dW(t-R0) = -N/(R0^2 C)": A1[iW, iW],
        "dW'/dq = -1/(R0^2 C)": A0[iW, iq],
        "dW'/dq(t-R0) = +1/(R0^2 C)": A1[iW, iq],
        "dW'/dp(t-R0) = -R0 C^2/(2 N^2)": A1[iW, ip],
        "dq'/dW = N/R0": A0[iq, iW],
        "dq'/dq = -1/R0": A0[iq, iq],
    }
    # the printed gains against the design rule (z on the TCP pole, unit loop gain at z)
    design = hollot_pi_design(N, C, R0, omega_g=HOLLOT_GAINS["z"])
    values["z"] = design["z"]
    values["K_pi"] = Value(design["K_pi_low"], note=f"{design['K_pi']:.4g}")
    # the authors' discrete implementation: Tustin at w Hz
    Ts = 1.0 / NS2_PI["w"]
    K, z = HOLLOT_GAINS["K_pi"], HOLLOT_GAINS["z"]
    values |= {"a": K * (1 / z + Ts / 2), "b": K * (1 / z - Ts / 2)}

    # loop gain: fluidnet's symbolic loop against the hand-derived exact loop
    L = m.loop_gain("p")
    w = np.logspace(-2, 2, 41)
    values["loop"] = float(np.max(np.abs(L.freqresp(w) / mgt_loop.exact_pi_loop(1j * w, K, z) - 1)))
    mg = fn.margins(L)
    values |= {
        ("exact", "phase margin [deg]"): mg.phase_margin,
        ("exact", "gain crossover [rad/s]"): mg.gain_crossover,
        ("exact", "gain margin"): mg.gain_margin,
        ("exact", "phase crossover [rad/s]"): mg.phase_crossover,
    }
    shown = (
        f"PM {mg.phase_margin:.2f} deg, GM {mg.gain_margin:.3f} "
        f"({20 * np.log10(mg.gain_margin):.1f} dB), DM {mg.delay_margin:.3f} s"
    )
    holds = mg.phase_margin > 0 and mg.gain_margin > 1 and m.linearize().is_stable()
    values["stable"] = Value(holds, shown)
    approx = fn.margins(hollot_plant(N, C, R0) * _pi_tf(K, z))
    values |= {("hollot", "pm"): approx.phase_margin, ("hollot", "gm"): approx.gain_margin}
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
    for n in loads:
        sol = fn.simulate(m.with_params(N=n), T_END, history=START)
        tt = np.linspace(0, T_END, 4001)
        yy = sol(tt)
        q = yy[m.state_names.index("q")]
        ts = settling_time(tt, q, 175.0, 0.05)
        rows.append(
            {"N": n, "q_end": float(q[-1]), "settling_time_5pc_s": ts, "q_max": float(q.max())}
        )
        fig_data.append((n, tt, yy))
        values["q_end", n] = float(q[-1])
    ctx.table("hollot_pi_response", rows)
    _plot(ctx, m, fig_data, L)
    return values


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
    R0 = mgt_loop.operating_point()["R0"]
    K, z = HOLLOT_GAINS["K_pi"], HOLLOT_GAINS["z"]
    axes[2].loglog(w, np.abs(L.freqresp(w)), label="exact model (fluidnet)")
    approx = mgt_loop.plant_hollot(1j * w, N, C, R0) * mgt_loop.pi_controller(1j * w, K, z)
    axes[2].loglog(w, np.abs(approx), "--", label="Hollot plant")
    axes[2].axhline(1.0, color="k", lw=0.6)
    axes[2].set(xlabel="omega [rad/s]", ylabel="|L(j omega)|", title="PI loop gain")
    for ax in axes:
        ax.legend()
    ctx.figure("hollot_pi", fig)
