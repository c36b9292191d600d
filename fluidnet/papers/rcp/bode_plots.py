"""App. III (Figs 47, 48): Bode plots of the loop gain eq (9) at (0.2, 0.4) and (0.4, 0.2).

The phase of ``G`` returns to ``-pi`` only if ``alpha > beta`` (eq (14)); the crossovers read off
fluidnet's Bode response and margins are checked against the closed forms of
:mod:`~fluidnet.papers.rcp.data`.
"""

from __future__ import annotations

import numpy as np
from scipy import optimize

import fluidnet as fn

from ...linear.delaytf import DelayTF
from ...models.rate_control import rcp
from ..registry import Context
from ..targets import Value
from . import PAPER
from .data import BODE_FREQS, omega_c, omega_z
from .nyquist import negative_real_crossings

#: The two points of App. III: (alpha, beta, figure).
APPENDIX_POINTS = ((0.2, 0.4, "Fig 47"), (0.4, 0.2, "Fig 48"))


def gain_crossover(L: DelayTF, w: np.ndarray) -> float:
    """The frequency in ``[w[0], w[-1]]`` where ``|L(j w)| = 1`` (bracketed root)."""
    return optimize.brentq(lambda x: abs(L.freqresp(x)) - 1.0, w[0], w[-1], xtol=1e-14)


def crossover_values(ref: str, al: float, be: float, L: DelayTF, ph: np.ndarray, d0: float):
    """eqs (12)-(14) against the gain, the phase crossings and the phase maximum of ``L``."""
    w = BODE_FREQS
    values = {(ref, "w_z"): gain_crossover(L, w) * d0}
    cross = [c for c in negative_real_crossings(L, w_max=np.pi / d0) if c[0] > 1e-3]
    wc_paper = omega_c(al, be)
    if wc_paper is None:
        holds = not cross and bool(np.all(ph[1:] < -np.pi))
        values[ref, "no w_c"] = Value(holds, f"max phase + pi = {np.max(ph[1:]) + np.pi:.3g} rad")
        return values
    values[ref, "w_c exists"] = Value(bool(cross), f"crossings {cross}")
    values[ref, "w_c"] = cross[0][0] * d0 if cross else np.nan
    values[ref, "w_m"] = w[np.argmax(ph)] * d0
    shown = f"w_z d0 = {omega_z(al, be):.4f}, w_c d0 = {wc_paper:.4f}"
    values[ref, "w_z < w_c"] = Value(omega_z(al, be) < wc_paper, shown)
    return values


def margin_values(d0: float) -> dict:
    """The library's margins on the same exact-delay ``G``."""
    values = {}
    for al, be, ref in APPENDIX_POINTS:
        L = rcp(alpha=al, beta=be, d0=d0).loop_gain("R")
        mg = fn.margins(L)
        values[ref, "margins w_z"] = mg.gain_crossover * d0
        wpc = [x for x in np.atleast_1d(mg.phase_crossovers) if x > 0]
        if omega_c(al, be) is None:
            values[ref, "margins no w_c"] = Value(not [x for x in wpc if x < np.pi / d0], f"{wpc}")
        else:
            values[ref, "margins w_c"] = min(wpc) * d0 if wpc else np.nan
    return values


@PAPER.item(title="Figs 47/48: Bode plots of G(s) at (0.2, 0.4) and (0.4, 0.2)")
def bode_plots(ctx: Context) -> dict:
    """App. III: the phase of G returns to -pi only if alpha > beta (eq 14)."""
    d0 = 0.2
    values = {}
    fig, axes = ctx.new_figure(2, 2, figsize=(12.0, 7.0))
    for col, (al, be, ref) in enumerate(APPENDIX_POINTS):
        L = rcp(alpha=al, beta=be, d0=d0).loop_gain("R")
        resp = fn.bode(L, BODE_FREQS)
        ph = np.asarray(resp.phase)  # unwrapped from -pi, the double integrator's branch
        values |= crossover_values(ref, al, be, L, ph, d0)
        mag_ax, ph_ax = axes[0, col], axes[1, col]
        resp.plot((mag_ax, ph_ax), db=False)
        mag_ax.set_title(
            f"{ref}: (alpha, beta) = ({al}, {be}), d0 = {d0} s\n{mag_ax.get_title()}",
            fontsize=9,
        )
        ph_ax.set(ylim=(-360, -150))
    ctx.figure("fig47_48_bode", fig)
    return values | margin_values(d0)
