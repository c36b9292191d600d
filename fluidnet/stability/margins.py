"""Gain, phase, delay and stability margins of a loop with exact delays."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.optimize import brentq

from ..linear.delaytf import DelayTF
from .frequency_grid import as_loop, frequency_grid, gain_crossovers, phase_crossovers

__all__ = ["Margins", "margins", "margins_from_grid"]


@dataclass(kw_only=True)
class Margins:
    """Stability margins of a loop ``L`` (closed loop ``1 + L = 0``).

    Attributes
    ----------
    gain_margin : float
        Ratio (not dB); ``inf`` when there is no phase crossover.
    phase_margin : float
        Degrees; ``inf`` when there is no gain crossover.
    delay_margin : float
        Seconds; ``inf`` when there is no gain crossover.
    gain_crossover, phase_crossover : float
        rad/s, where the reported phase and gain margins are attained (``nan`` if none).
    stability_margin : float
        Minimum distance from the Nyquist curve to -1, over ``w >= 0``.
    stability_margin_frequency : float
        Where it is attained (rad/s).
    gain_crossovers, phase_crossovers : numpy.ndarray
        Every crossover found (rad/s).
    gain_margins, phase_margins, delay_margins : numpy.ndarray
        The margin at each crossover.
    """

    gain_margin: float
    phase_margin: float
    delay_margin: float
    gain_crossover: float
    phase_crossover: float
    stability_margin: float
    stability_margin_frequency: float
    gain_crossovers: np.ndarray
    phase_crossovers: np.ndarray
    gain_margins: np.ndarray
    phase_margins: np.ndarray
    delay_margins: np.ndarray

    @property
    def gain_margin_db(self) -> float:
        return 20.0 * math.log10(self.gain_margin) if self.gain_margin > 0 else -math.inf

    def as_control(self) -> tuple[float, float, float, float, float, float]:
        """``(gm, pm, sm, wpc, wgc, wms)`` in the order of :func:`control.stability_margins`."""
        return (
            self.gain_margin,
            self.phase_margin,
            self.stability_margin,
            self.phase_crossover,
            self.gain_crossover,
            self.stability_margin_frequency,
        )

    def __repr__(self) -> str:
        return (
            f"Margins(gain_margin={self.gain_margin:.6g}, phase_margin={self.phase_margin:.6g} "
            f"deg, delay_margin={self.delay_margin:.6g} s, gain_crossover="
            f"{self.gain_crossover:.6g} rad/s, phase_crossover={self.phase_crossover:.6g} "
            f"rad/s, stability_margin={self.stability_margin:.6g} at "
            f"{self.stability_margin_frequency:.6g} rad/s)"
        )


def margins_from_grid(L: DelayTF, w: np.ndarray) -> Margins:
    """Margins of ``L`` from crossovers bracketed on the grid ``w`` (see :func:`margins`)."""
    wgc = gain_crossovers(L, w)
    wpc = phase_crossovers(L, w)
    with np.errstate(all="ignore"):
        gm_all = 1.0 / np.abs(L(1j * wpc))
        pm_all = np.remainder(np.angle(L(1j * wgc), deg=True), 360.0) - 180.0
    dm_all = np.where(wgc > 0, np.radians(pm_all) / np.where(wgc > 0, wgc, 1.0), np.nan)
    if wpc.size and not np.all(np.isinf(gm_all)):
        with np.errstate(divide="ignore"):
            i = int(np.argmin(np.abs(np.log(gm_all))))
        gm, w_pc = float(gm_all[i]), float(wpc[i])
    else:
        gm, w_pc = math.inf, math.nan
    if wgc.size:
        j = int(np.argmin(np.abs(pm_all)))
        pm, w_gc = float(pm_all[j]), float(wgc[j])
        dm = float(np.nanmin(dm_all)) if np.any(np.isfinite(dm_all)) else math.inf
    else:
        pm, w_gc, dm = math.inf, math.nan, math.inf
    sm, w_sm = _stability_margin(L, w)
    return Margins(
        gain_margin=gm,
        phase_margin=pm,
        delay_margin=dm,
        gain_crossover=w_gc,
        phase_crossover=w_pc,
        stability_margin=sm,
        stability_margin_frequency=w_sm,
        gain_crossovers=wgc,
        phase_crossovers=wpc,
        gain_margins=gm_all,
        phase_margins=pm_all,
        delay_margins=dm_all,
    )


def _stability_margin(L: DelayTF, w: np.ndarray) -> tuple[float, float]:
    """Global minimum of ``|1 + L(jw)|`` over the grid, polished where its slope vanishes."""
    dnum, dden = L.num.derivative(), L.den.derivative()

    def slope(x):
        # d/dw |1 + L(jw)|^2 = 2 Re(conj(1 + L) j L'(jw)),  L' = (N' D - N D') / D^2
        s = 1j * np.asarray(x, dtype=float)
        with np.errstate(all="ignore"):
            num, den = L.num(s), L.den(s)
            dL = (dnum(s) * den - num * dden(s)) / den**2
            return 2.0 * np.real(np.conj(1.0 + num / den) * 1j * dL)

    with np.errstate(all="ignore"):
        d = np.abs(1.0 + L(1j * w))
    d = np.where(np.isfinite(d), d, np.inf)
    i = int(np.argmin(d))
    best_w, best = float(w[i]), float(d[i])
    for lo, hi in ((max(i - 1, 0), i), (i, min(i + 1, w.size - 1))):
        a, b = w[lo], w[hi]
        if b > a and slope(a) < 0 < slope(b):
            x = brentq(slope, a, b, xtol=1e-300, rtol=1e-15)
            with np.errstate(all="ignore"):
                val = float(np.abs(1.0 + L(1j * x)))
            if val <= best:
                best_w, best = float(x), val
    return best, best_w


def margins(L, *, w_range: tuple[float, float] | None = None) -> Margins:
    """Gain, phase and delay margins of ``L`` with exact delays.

    Every gain crossover (``|L(jw)| = 1``) and phase crossover (``L(jw)`` real negative) on an
    adaptive grid is located to machine precision with Brent's method. For a rational ``L`` the
    results equal :func:`control.stability_margins` (``margins(L).as_control()`` has its
    order); for a delayed ``L`` the grid reaches the frequency beyond which ``|L| < 0.1``, so
    phase crossovers with a gain margin above 10 may be left out.

    Parameters
    ----------
    L : DelayTF, control.TransferFunction or sympy expression
    w_range : (w_min, w_max), optional
        Restrict the search.

    Returns
    -------
    Margins

    Examples
    --------
    >>> import fluidnet as fn
    >>> k, tau = 1.0, 0.5                 # L = k e^{-s tau} / s
    >>> m = fn.margins(fn.DelayTF.from_expr(k * fn.sympy.exp(-tau * fn.s) / fn.s))
    >>> round(m.phase_margin, 6), round(m.delay_margin, 6)     # 90 - k tau (deg), pi/2k - tau
    (61.35211, 1.070796)
    """
    L = as_loop(L)
    w = frequency_grid(L, w_range)
    return margins_from_grid(L, w)
