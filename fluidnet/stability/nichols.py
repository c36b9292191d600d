"""Nichols charts of loops with exact delays: gain (dB) against unwrapped phase (degrees)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ..linear.delaytf import DelayTF
from .bode import bode
from .margins import margins_from_grid

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from numpy.typing import ArrayLike

__all__ = ["NicholsResponse", "nichols"]

#: Closed-loop gains ``|L / (1 + L)|`` (dB) of the grid lines (python-control's M-circles).
GRID_DB = (-20.0, -12.0, -6.0, -3.0, -1.0, 0.0, 0.5, 1.0, 3.0, 6.0, 12.0)


@dataclass(kw_only=True)
class NicholsResponse:
    """The open-loop frequency response ``L(j omega)`` as a Nichols chart.

    Attributes
    ----------
    omega : numpy.ndarray
        Angular frequencies (rad/s), ascending.
    response : numpy.ndarray
        ``L(j omega)``, delays exact.
    phase : numpy.ndarray
        Continuously unwrapped phase (rad), as :class:`fluidnet.stability.BodeResponse`'s.
    L : DelayTF
        The loop.
    """

    omega: np.ndarray
    response: np.ndarray
    phase: np.ndarray
    L: DelayTF = field(repr=False)

    @property
    def magnitude_db(self) -> np.ndarray:
        """``20 log10 |L(j omega)|``."""
        with np.errstate(divide="ignore"):
            return 20.0 * np.log10(np.abs(self.response))

    @property
    def phase_deg(self) -> np.ndarray:
        """The unwrapped phase in degrees."""
        return np.degrees(self.phase)

    def to_xarray(self) -> Any:
        """The chart's data along ``omega`` as an :class:`xarray.Dataset`.

        Returns
        -------
        xarray.Dataset
            ``magnitude_db`` (dB), ``phase_deg`` (degrees, unwrapped) and ``response``
            (complex) along ``omega`` (rad/s).
        """
        import xarray as xr

        dim = "omega"
        return xr.Dataset(
            {
                "magnitude_db": (dim, self.magnitude_db, {"units": "dB"}),
                "phase_deg": (dim, self.phase_deg, {"units": "degree"}),
                "response": (dim, self.response),
            },
            coords={dim: (dim, self.omega, {"units": "rad/s"})},
        )

    def plot(
        self,
        ax: Axes | None = None,
        *,
        grid: bool = True,
        margins: bool = True,
        w_max: float | None = None,
        **kwargs: Any,
    ) -> Axes:
        """Gain (dB) against phase (degrees), with the critical points and the margins.

        The critical point ``L = -1`` is ``(-180 deg, 0 dB)`` (and its copies every 360
        degrees that the unwrapped phase passes). The gain margin is drawn as a vertical
        segment at each phase crossover, from the curve up (or down) to 0 dB; the phase margin
        as a horizontal segment at each gain crossover, from the curve to the nearest critical
        phase. A delay turns the phase without end as the frequency grows, so by default the
        curve is drawn up to three times the highest crossover where a margin is read.

        Parameters
        ----------
        ax : matplotlib.axes.Axes, optional
            Where to draw (default: a new figure).
        grid : bool, default True
            Draw lines of constant closed-loop gain ``|L/(1+L)|`` in dB (the M-circles of a
            Nichols chart).
        margins : bool, default True
            Mark the critical points, the crossovers and the margins, with the margins in the
            title.
        w_max : float, optional
            The highest frequency drawn (rad/s); default three times the highest of the gain
            crossover and the phase crossover where the margins are read (all frequencies when
            there is neither).
        **kwargs
            Line properties of the curve.

        Returns
        -------
        matplotlib.axes.Axes
        """
        import matplotlib.pyplot as plt

        if ax is None:
            ax = plt.subplots()[1]
        m = margins_from_grid(self.L, self.omega)
        if w_max is None:
            reads = [w for w in (m.gain_crossover, m.phase_crossover) if np.isfinite(w) and w > 0]
            w_max = 3.0 * max(reads) if reads else float(self.omega[-1])
        gain, ph = self.magnitude_db, self.phase_deg
        ok = np.isfinite(gain) & np.isfinite(ph) & (self.omega <= w_max)
        line = ax.plot(ph[ok], gain[ok], **kwargs)[0]
        lo_p, hi_p = float(np.min(ph[ok])), float(np.max(ph[ok]))
        lo_g, hi_g = float(np.min(gain[ok])), float(np.max(gain[ok]))
        lo_g, hi_g = max(lo_g, -40.0), min(hi_g, 40.0)
        lo_g, hi_g = min(lo_g, -12.0), max(hi_g, 12.0)
        criticals = [-180.0 + 360.0 * k for k in range(-100, 101)]
        criticals = [c for c in criticals if lo_p - 30 <= c <= hi_p + 30]
        if grid:
            self._grid(ax, (lo_p - 30, hi_p + 30), (lo_g, hi_g))
        if margins:
            for c in criticals:
                ax.plot(c, 0.0, "r+", ms=10, mew=1.5)
            for w, gm in zip(m.phase_crossovers, m.gain_margins, strict=True):
                if w <= 0 or w > w_max or not np.isfinite(gm):
                    continue
                at = float(np.interp(w, self.omega, ph))
                g = -20.0 * float(np.log10(gm))
                ax.plot([at, at], [g, 0.0], color="C2", lw=1.2, ls=":")
                ax.plot(at, g, "s", color="C2", ms=4)
            for w in m.gain_crossovers:
                if w > w_max:
                    continue
                at = float(np.interp(w, self.omega, ph))
                target = min(criticals, key=lambda c: abs(c - at)) if criticals else -180.0
                ax.plot([at, target], [0.0, 0.0], color="C1", lw=1.2, ls=":")
                ax.plot(at, 0.0, "o", color="C1", ms=4)
            ax.set_title(
                f"GM = {m.gain_margin:.3g} ({m.gain_margin_db:.3g} dB), PM = "
                f"{m.phase_margin:.3g} deg, DM = {m.delay_margin:.3g} s",
                fontsize="small",
            )
        ax.set_xlabel("phase (deg)")
        ax.set_ylabel("|L| (dB)")
        ax.set_xlim(lo_p - 30, hi_p + 30)
        ax.set_ylim(lo_g - 3, hi_g + 3)
        line.set_zorder(3)
        return ax

    @staticmethod
    def _grid(ax: Axes, phases: tuple[float, float], gains: tuple[float, float]) -> None:
        ph = np.linspace(phases[0], phases[1], 400)
        g = np.linspace(gains[0], gains[1], 300)
        P, G = np.meshgrid(np.radians(ph), g)
        L = 10.0 ** (G / 20.0) * np.exp(1j * P)
        with np.errstate(all="ignore"):
            M = 20.0 * np.log10(np.abs(L / (1.0 + L)))
        cs = ax.contour(ph, g, M, levels=sorted(GRID_DB), colors="0.8", linewidths=0.6)
        ax.clabel(cs, fmt="%g dB", fontsize="x-small")

    def __repr__(self) -> str:
        return (
            f"NicholsResponse({self.omega.size} frequencies in "
            f"[{float(self.omega[0]):.3g}, {float(self.omega[-1]):.3g}] rad/s)"
        )


def nichols(
    L: Any, w: ArrayLike | None = None, *, w_range: tuple[float, float] | None = None
) -> NicholsResponse:
    """Nichols chart of the loop ``L`` with exact delays: gain in dB against unwrapped phase.

    The data are those of :func:`fluidnet.bode` (the same adaptive frequency grid and phase
    unwrapping); :meth:`NicholsResponse.plot` draws the chart with the critical points, the
    gain and phase margins marked, and lines of constant closed-loop gain.

    Parameters
    ----------
    L : DelayTF, control.TransferFunction or sympy expression
        The loop (closed loop ``1 + L = 0``).
    w : array_like, optional
        Angular frequencies (rad/s). Default: an adaptive grid.
    w_range : (w_min, w_max), optional
        Range of the adaptive grid.

    Returns
    -------
    NicholsResponse

    See Also
    --------
    fluidnet.bode : the same data against frequency.
    fluidnet.margins : the margins marked on the chart.
    fluidnet.nyquist : the same curve in the complex plane, with the encirclement count.

    Examples
    --------
    >>> import numpy as np, fluidnet as fn
    >>> L = fn.models.rcp().loop_gain("R")       # Dukkipati & McKeown eq (9)
    >>> n = fn.nichols(L)
    >>> i = np.argmin(np.abs(n.magnitude_db))    # the gain crossover: 0 dB
    >>> pm = fn.margins(L).phase_margin
    >>> bool(abs(n.phase_deg[i] + 180 - pm) < 1.0)
    True
    """
    b = bode(L, w, w_range=w_range)
    return NicholsResponse(omega=b.omega, response=b.response, phase=b.phase, L=b.L)
