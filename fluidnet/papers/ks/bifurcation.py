"""Derived targets: the Hopf bifurcation of the delayed primal law, past kappa beta T = pi/2.

Not in the paper (see :mod:`.delay`). Two delayed primal laws on one link:

* the paper's law (9) with its penalty ``p = (y - C)^+ / y`` and log utilities, every feedback
  delayed: above capacity ``beta x(t-T) p(N x(t-T)) = beta (x(t-T) - C/N)``, so the law is
  *linear* wherever the link is overloaded. Its Hopf point at ``kappa beta T = pi/2`` is
  degenerate (``c1 = 0``): the cubic normal form fixes no amplitude, and the oscillation past it
  grows until the rate crosses ``y = C``, the kink of the penalty, which then sets the cycle.
  The analysis reports the degeneracy and refuses the (non-smooth) cycle.
* Kelly's primal law with a smooth price ``(y/c)^B`` (``fn.models.kelly_primal``, Zimmermann's
  (3.2.16) with a delay): a supercritical Hopf bifurcation at ``kappa (B + 1) T = pi/2`` (for
  ``w = c = 1``, ``x* = 1``), as known for the delayed primal algorithm. Its branch of stable
  cycles, continued by collocation, matches long simulations, and ends at a fold of cycles
  beyond which the simulated rate blows up; by then the rate swings below 0 (a fluid law
  without projection; outside the physical range).
"""

from __future__ import annotations

import numpy as np

import fluidnet as fn

from ...models import kelly_primal, utility_primal
from ..registry import Context
from ..targets import Value
from . import PAPER
from .data import BETA, KELLY_KAPPAS, KELLY_KAPPAS_QUICK
from .delay import network

B = 4.0  # exponent of Kelly's smooth price (y/c)^B
T = 1.0


def _amplitude_run(m, kappa: float, orb, t_end: float) -> tuple[float, float]:
    """Simulated (peak-to-peak, period) at ``kappa``, started 2 % off the collocated orbit."""
    ht = np.linspace(-1.5 * T, 0.0, 300)
    sol = fn.simulate(
        m, t_end, params={"kappa_1": kappa}, history={"x_1": (ht, 1.02 * orb(ht, "x_1"))},
        rtol=1e-10, atol=1e-12,
    )  # fmt: skip
    o = fn.oscillation(sol, "x_1", after=0.6 * t_end)
    return o.amplitude, o.period


@PAPER.item(
    title="Hopf bifurcation of the delayed primal law (derived)",
    quick={"n_orbits": 16, "kappas": KELLY_KAPPAS_QUICK},
)
def bifurcation(ctx: Context, n_orbits: int = 30, kappas=KELLY_KAPPAS) -> dict:
    """The degenerate Hopf point of (9), Kelly's supercritical one, its branch of ``n_orbits``
    cycles against simulations at ``kappas``, and the fold."""
    # the paper's law: linear above capacity -> degenerate Hopf, cycle set by the kink y = C
    m9 = utility_primal(network(), beta=BETA, delay="full", T=T)
    hp9 = fn.hopf_point(m9, "kappa_1", 0.2 / (BETA * T), 5.0 / (BETA * T))
    values = {
        "hopf (9)": hp9.value * BETA * T,
        "degenerate": Value(hp9.criticality, note=f"{hp9.c1.real:.2g}"),
    }
    sol9 = fn.simulate(m9, 300.0, params={"kappa_1": 1.7 / BETA}, history={"x_1": 10.0}, rtol=1e-8)
    try:
        fn.periodic_orbit(sol9)
        why = "accepted"
    except fn.NonSmoothError as exc:
        why = f"refused: {exc}"
    values["kink"] = Value(why.startswith("refused") and "Max" in why, why[:100])
    # Kelly's primal law with a smooth price: supercritical, branch, fold
    mk = kelly_primal([[1]], T=T, B=B)
    hp = fn.hopf_point(mk, "kappa_1", 0.05, 5.0)
    values["hopf kelly"] = hp.value * (B + 1) * T
    values["supercritical"] = Value(hp.criticality, note=f"{hp.lyapunov:.4g}")
    br = fn.continue_orbits(hp, n_orbits=n_orbits)
    values["stable start"] = bool(br.stable[0])
    # collocation against long simulations on the stable branch
    sims = []
    for kappa in kappas:
        i = int(np.argmin(np.abs(br.x - kappa) + 10 * (~br.stable)))
        orb = fn.periodic_orbit(br.orbits[i], params={"kappa_1": kappa})
        amp, per = _amplitude_run(mk, kappa, orb, 120.0)
        sims.append((kappa, amp))
        values["cycle", kappa] = orb.amplitude["x_1"] / amp
    if br.folds:
        _, k_fold = br.folds[0]
        values["fold"] = Value(_blows_up(mk, k_fold * 1.02), f"fold at kappa = {k_fold:.4f}")
    else:
        values["fold"] = Value(False, "no fold on the branch")
    fig, (ax, ax2) = ctx.new_figure(1, 2, figsize=(12.0, 4.4))
    br.plot(ax=ax, state="x_1")
    k, a = zip(*sims, strict=True)
    ax.plot(k, a, "rs", ms=5, label="simulated")
    kk = np.linspace(hp.value, hp.value * 1.15, 100)
    ax.plot(kk, hp.amplitude_coefficient["x_1"] * np.sqrt(kk - hp.value), "k:", lw=1,
            label="normal form")  # fmt: skip
    ax.legend(fontsize=7)
    ax.set(title=f"Kelly primal, price (y/c)^{B:g}, T = {T:g}: supercritical Hopf, fold")
    t9 = np.linspace(200.0, 300.0, 4000)
    ax2.plot(t9, sol9(t9, "x_1"), lw=0.8)
    ax2.axhline(hp9.params["C_1"] / hp9.params["N_1"], color="k", ls=":", lw=1, label="y = C")
    ax2.set(xlabel="t", ylabel="x_1", title="law (9) at kappa beta T = 1.7: cycle set by y = C")
    ax2.legend(fontsize=7)
    ctx.figure("bifurcation_primal_delay", fig)
    return values


def _blows_up(m, kappa: float) -> bool:
    try:
        fn.simulate(m, 200.0, params={"kappa_1": kappa}, history={"x_1": 0.9}, rtol=1e-8)
    except fn.IntegrationError:
        return True
    return False
