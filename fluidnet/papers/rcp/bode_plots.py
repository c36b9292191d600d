"""App. III (Figs 47, 48): Bode plots of the loop gain eq (9) at (0.2, 0.4) and (0.4, 0.2).

The phase of ``G`` returns to ``-pi`` only if ``alpha > beta`` (eq (14)); the crossovers read off
fluidnet's Bode response and margins are checked against the closed forms of :mod:`.bode`.
"""

from __future__ import annotations

import numpy as np
from scipy import optimize

import fluidnet as fn

from ...linear.delaytf import DelayTF
from ...models.rate_control import rcp
from ..registry import Context
from . import PAPER
from .bode import omega_c, omega_m, omega_z
from .nyquist import negative_real_crossings

#: The two points of App. III: (alpha, beta, figure).
APPENDIX_POINTS = ((0.2, 0.4, "Fig 47"), (0.4, 0.2, "Fig 48"))


def gain_crossover(L: DelayTF, w: np.ndarray) -> float:
    """The frequency in ``[w[0], w[-1]]`` where ``|L(j w)| = 1`` (bracketed root)."""
    return optimize.brentq(lambda x: abs(L.freqresp(x)) - 1.0, w[0], w[-1], xtol=1e-14)


def _check_crossovers(
    ctx: Context,
    ref: str,
    al: float,
    be: float,
    L: DelayTF,
    w: np.ndarray,
    ph: np.ndarray,
    d0: float,
) -> None:
    """eqs (12)-(14) against the gain, the phase crossings and the phase maximum of ``L``."""
    wz = gain_crossover(L, w)
    ctx.check(
        ref,
        "gain crossover w_z d0, eq (12)",
        omega_z(al, be),
        wz * d0,
        tol=1e-9,
        source="derived",
    )
    cross = [c for c in negative_real_crossings(L, w_max=np.pi / d0) if c[0] > 1e-3]
    wc_paper = omega_c(al, be)
    if wc_paper is None:
        ctx.check_true(
            ref,
            "w_c does not exist: the phase stays below -pi for w > 0",
            not cross and bool(np.all(ph[1:] < -np.pi)),
            value=f"max phase + pi = {np.max(ph[1:]) + np.pi:.3g} rad",
        )
        return
    ctx.check_true(ref, "w_c exists", bool(cross), value=f"crossings {cross}")
    ctx.check(
        ref,
        "phase crossover w_c d0, eq (13)",
        wc_paper,
        cross[0][0] * d0 if cross else np.nan,
        tol=1e-8,
        source="derived",
    )
    wm = w[np.argmax(ph)]
    wm_formula = omega_m(al, be)
    ctx.check(
        ref,
        "phase maximum w_m d0 (App. III)",
        wm_formula,
        wm * d0,
        tol=2 * (w[1] / w[0] - 1) * wm_formula,
        source="derived",
        note="tolerance: two steps of the frequency grid",
    )
    ctx.check_true(
        ref,
        "w_z < w_c: stable by criterion (11)-(12)",
        omega_z(al, be) < wc_paper,
        value=f"w_z d0 = {omega_z(al, be):.4f}, w_c d0 = {wc_paper:.4f}",
    )


def _check_margins(ctx: Context, d0: float) -> None:
    """The library's margins on the same exact-delay ``G``."""
    for al, be, ref in APPENDIX_POINTS:
        L = rcp(alpha=al, beta=be, d0=d0).loop_gain("R")
        wc_paper = omega_c(al, be)
        mg = fn.margins(L)
        ctx.check(
            ref,
            "fn.margins gain crossover w_z d0",
            omega_z(al, be),
            mg.gain_crossover * d0,
            tol=1e-6,
            source="derived",
        )
        wpc = [x for x in np.atleast_1d(mg.phase_crossovers) if x > 0]
        if wc_paper is None:
            ctx.check_true(
                ref,
                "fn.margins finds no phase crossover below pi/d0",
                not [x for x in wpc if x < np.pi / d0],
                value=f"{wpc}",
            )
        else:
            ctx.check(
                ref,
                "fn.margins first phase crossover w_c d0",
                wc_paper,
                min(wpc) * d0 if wpc else np.nan,
                tol=1e-6,
                source="derived",
            )


@PAPER.item("bode_plots", title="Figs 47/48: Bode plots of G(s) at (0.2, 0.4) and (0.4, 0.2)")
def bode_plots(ctx: Context) -> None:
    """App. III: the phase of G returns to -pi only if alpha > beta (eq 14)."""
    d0 = 0.2
    fig, axes = ctx.new_figure(2, 2, figsize=(12.0, 7.0))
    w = np.geomspace(1e-2 / d0, 20.0 / d0, 3000)
    for col, (al, be, ref) in enumerate(APPENDIX_POINTS):
        L = rcp(alpha=al, beta=be, d0=d0).loop_gain("R")
        resp = fn.bode(L, w)
        ph = np.asarray(resp.phase)  # unwrapped from -pi, the double integrator's branch
        _check_crossovers(ctx, ref, al, be, L, w, ph, d0)
        mag_ax, ph_ax = axes[0, col], axes[1, col]
        resp.plot((mag_ax, ph_ax), db=False)
        mag_ax.set_title(
            f"{ref}: (alpha, beta) = ({al}, {be}), d0 = {d0} s\n{mag_ax.get_title()}",
            fontsize=9,
        )
        ph_ax.set(ylim=(-360, -150))
    ctx.figure("fig47_48_bode", fig)
    _check_margins(ctx, d0)
