"""Derived targets: the Hopf bifurcation at the critical delay, how far the smooth theory reaches.

Not in the dissertation, which finds the onset of oscillation by simulation (Sec 6.6.3). At the
critical delay of the nonlinear model (N = 30, c = 10 pkts/ms) a root pair of the linearization
crosses the axis; the first Lyapunov coefficient (with the state-dependent RTT delays) says
whether the oscillation grows smoothly, and the collocated orbit branch shows where it stops
being smooth: SBRM's queue crosses the marking threshold ``b0`` (the kink of
``[b - b0]^+`` in (6.4.7)), RED's queue empties (the projection of (6.4.6)). The simulated
oscillations past the critical delay (validated in ``nonlinear_validation``) are far beyond
that point: their amplitudes are set by these non-smooth surfaces, not by the normal form.
"""

from __future__ import annotations

import numpy as np

import fluidnet as fn

from ...models.reno import reno_red
from ...models.single_bit import sbrm
from ..registry import Context
from ..targets import Value
from . import PAPER
from .nonlinear import nonlinear_sweep
from .validation import sweep_delays

N, C = 30, 10  # flows, pkts/ms


def _model(proto: str) -> fn.Model:
    base = sbrm() if proto == "SBRM" else reno_red()
    return base.with_params(N=float(N), c=1000.0 * C)


def _surface(proto: str, hp) -> tuple[str, float]:
    """The first non-smooth surface and the queue's distance to it at the equilibrium."""
    b = hp.equilibrium["b"]
    if proto == "SBRM":
        return "the marking threshold b0", b - hp.params["b0"]
    return "an empty queue", b


@PAPER.item(
    title="Hopf bifurcation at the critical delay (derived): criticality",
    quick={"n_orbits": 12, "near_onset": True},
)
def bifurcation(ctx: Context, n_orbits: int = 40, near_onset: bool = False) -> dict:
    """Hopf points, normal forms and branches of ``n_orbits`` orbits, against the simulations of
    ``nonlinear_validation`` (``near_onset``: its delays near the onset only)."""
    fig, axes = ctx.new_figure(1, 2, figsize=(12.0, 4.4))
    rows, values = [], {}
    for ax, proto in zip(axes, ("SBRM", "RED"), strict=True):
        m = _model(proto)
        hp = fn.hopf_point(m, "d", 0.03, 0.2)
        values[proto, "d_c"] = 1e3 * hp.value
        shown = f"{hp.criticality}, l1 = {hp.lyapunov:.4g}"
        values[proto, "supercritical"] = Value(hp.criticality == "supercritical", shown)
        # normal form against a collocated orbit very close to onset (two methods)
        d1 = hp.value * (1 + 1e-5)
        orb = fn.periodic_orbit(hp, d1, floquet=False)
        values[proto, "amplitude"] = hp.predict(d1)["amplitude"]["b"] / orb.amplitude["b"]
        # the smooth branch ends where the queue reaches the first non-smooth surface;
        # the normal form's parabola predicts where: amplitude/2 = distance to the surface
        what, dist = _surface(proto, hp)
        K = hp.amplitude_coefficient["b"]
        dd_pred = (2 * dist / K) ** 2
        br = fn.continue_orbits(hp, n_orbits=n_orbits, floquet=False)
        ended = br.stop_reason.startswith("non-smooth")
        values[proto, "branch ends"] = Value(ended, br.stop_reason[:120])
        values[proto, "ends at"] = Value(
            1e6 * (br.x.max() - hp.value) if ended else float("nan"),
            expected=1e6 * dd_pred,
            note=(f"{dist:.3g}", f"{K:.4g}"),
        )
        # the simulated oscillations past d_c (nonlinear_validation's runs) that have settled
        # on a cycle reach the surface; a run still growing is a transient (Re lambda is small
        # just past d_c: e-folding over tens of seconds)
        sw = nonlinear_sweep(proto, N, C, sweep_delays(proto, near_onset))
        late = sw["t"] >= 0.5 * sw["t"][-1]
        sim = []
        for i, r in enumerate(sw["rows"]):
            if r["oscillating"] and r["d_ms"] / 1e3 > hp.value:
                status = fn.oscillation((sw["t"], sw["b"][i]), "b", after=0.5 * sw["t"][-1]).status
                bmin = float(np.min(sw["b"][i][late]))
                sim.append((r["d_ms"] / 1e3 - hp.value, r["amplitude_pkts"], bmin, status))
        settled = [x for x in sim if x[3] == "sustained"]
        reach = [
            (bmin < hp.params["b0"]) if proto == "SBRM" else (bmin <= 1e-9 * hp.equilibrium["b"])
            for _, _, bmin, _ in settled
        ]
        growing = [f"{1e3 * (x[0] + hp.value):.0f} ms" for x in sim if x[3] != "sustained"]
        shown = f"{sum(reach)}/{len(settled)} settled runs" + (
            f"; still growing at the end of the run: {', '.join(growing)}" if growing else ""
        )
        values[proto, "reaches"] = Value(bool(settled) and all(reach), shown)
        rows.append(
            {
                "protocol": proto, "d_c_ms": 1e3 * hp.value, "omega_rad_s": hp.omega,
                "dRe_dd": hp.root_speed.real, "l1": hp.lyapunov, "criticality": hp.criticality,
                "K_b": K, "smooth_until_us": 1e6 * (br.x.max() - hp.value),
                "predicted_us": 1e6 * dd_pred, "stop": br.stop_reason[:80],
            }
        )  # fmt: skip
        _panel(ax, proto, hp, br, sim, dist, what)
    ctx.table("bifurcation", rows)
    ctx.figure("bifurcation_diagram", fig)
    return values


def _panel(ax, proto, hp, br, sim, dist, what) -> None:
    K = hp.amplitude_coefficient["b"]
    dd = np.logspace(-7, -1.5, 200)
    ax.loglog(1e3 * dd, K * np.sqrt(dd), "C0-", lw=1, label="normal form K sqrt(d - d_c)")
    ax.loglog(1e3 * (br.x - hp.value), br.amplitude["b"], "C1o", ms=3,
              label="collocated orbits (smooth)")  # fmt: skip
    ax.axhline(2 * dist, color="k", ls=":", lw=1, label=f"2 x distance to {what}")
    for x, a, _, status in sim:
        settled = status == "sustained"
        ax.loglog(1e3 * x, a, "rs", ms=5, mfc="r" if settled else "none")
    ax.plot([], [], "rs", ms=5, label="simulated: settled (filled), still growing (open)")
    ax.set(
        xlabel="d - d_c [ms]",
        ylabel="queue peak-to-peak [pkts]",
        title=f"{proto}, N = {N}, c = {C} pkts/ms: d_c = {1e3 * hp.value:.2f} ms, {hp.criticality}",
    )
    ax.legend(fontsize=7)
