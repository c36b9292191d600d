"""Bode responses of loops with exact delays."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import OptionError
from ..linear.delaytf import DelayTF
from ..options import numbers_option
from .frequency_grid import as_loop, continuous_phase, frequency_grid
from .margins import margins_from_grid

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

__all__ = ["BodeResponse", "bode", "bode_axes"]


@dataclass(kw_only=True)
class BodeResponse:
    """Frequency response on an adaptive grid.

    Attributes
    ----------
    omega : numpy.ndarray
        Angular frequencies (rad/s), ascending.
    response : numpy.ndarray
        ``L(j omega)``.
    phase : numpy.ndarray
        Continuous phase (rad): followed from a frequency low enough that it lies on the branch
        of the asymptote ``arg(K) - m pi / 2`` of ``L ~ K s^-m`` (e.g. ``-pi`` for a double
        integrator with positive gain, as in RCP's eq (10)), so that it does not depend on
        where ``omega`` starts.
    """

    omega: np.ndarray
    response: np.ndarray
    phase: np.ndarray
    L: DelayTF = field(repr=False)

    @property
    def magnitude(self) -> np.ndarray:
        """``|L(j omega)|`` (a ratio)."""
        return np.abs(self.response)

    @property
    def magnitude_db(self) -> np.ndarray:
        return 20.0 * np.log10(self.magnitude)

    @property
    def phase_deg(self) -> np.ndarray:
        return np.degrees(self.phase)

    def to_xarray(self) -> Any:
        """The response along ``omega`` as an :class:`xarray.Dataset`.

        Returns
        -------
        xarray.Dataset
            ``response`` (complex), ``magnitude``, ``magnitude_db``, ``phase`` (rad, unwrapped)
            and ``phase_deg`` along ``omega`` (rad/s).
        """
        import xarray as xr

        dim = "omega"
        return xr.Dataset(
            {
                "response": (dim, self.response),
                "magnitude": (dim, self.magnitude),
                "magnitude_db": (dim, self.magnitude_db, {"units": "dB"}),
                "phase": (dim, self.phase, {"units": "rad"}),
                "phase_deg": (dim, self.phase_deg, {"units": "degree"}),
            },
            coords={dim: (dim, self.omega, {"units": "rad/s"})},
        )

    def to_frd(self):
        """The response as :class:`control.FrequencyResponseData`."""
        import control

        return control.frd(self.response, self.omega)

    def plot(
        self,
        ax=None,
        *,
        db: bool = True,
        deg: bool = True,
        hz: bool = False,
        margins: bool = True,
        **kwargs,
    ):
        """Magnitude and phase against frequency (log axis); returns the two axes.

        Parameters
        ----------
        ax : (ax_mag, ax_phase), matplotlib.axes.Axes or matplotlib.figure.Figure, optional
            Where to draw: the two axes for magnitude and phase; or one axes of a grid of
            subplots, whose place is split into the two (so ``fig, axes = plt.subplots(1, 2)``
            then ``.plot(ax=axes[1])`` draws the Bode plot in the right panel); or a figure,
            filled with two rows. Default: a new figure with two rows.
        db, deg, hz : bool
            Magnitude in dB, phase in degrees, frequency in Hz.
        margins : bool, default True
            Mark the gain and phase crossovers and the margins.
        **kwargs
            Line properties of the magnitude curve.

        Returns
        -------
        (matplotlib.axes.Axes, matplotlib.axes.Axes)
            The magnitude and phase axes.

        Raises
        ------
        OptionError
            For an ``ax`` that is none of these (or an axes outside a grid of subplots).
        """
        axes = bode_axes(ax)
        ax_m, ax_p = axes
        f = self.omega / (2 * np.pi) if hz else self.omega
        mag = self.magnitude_db if db else self.magnitude
        ph = self.phase_deg if deg else self.phase
        line = ax_m.semilogx(f, mag, **kwargs)[0] if db else ax_m.loglog(f, mag, **kwargs)[0]
        ax_p.semilogx(f, ph, color=line.get_color())
        one = 0.0 if db else 1.0
        half = 180.0 if deg else np.pi
        ax_m.axhline(one, color="0.6", lw=0.8, ls="--")
        if margins:
            m = margins_from_grid(self.L, self.omega)
            for wc in m.gain_crossovers:
                ax_m.axvline(wc / (2 * np.pi) if hz else wc, color="C1", lw=0.8, ls=":")
            for wpc in m.phase_crossovers:
                if wpc > 0:
                    ax_p.axvline(wpc / (2 * np.pi) if hz else wpc, color="C2", lw=0.8, ls=":")
            lo, hi = np.nanmin(ph), np.nanmax(ph)
            for kk in range(
                int(np.floor((lo - half) / (2 * half))), int(np.ceil((hi + half) / (2 * half))) + 1
            ):
                y = -half + 2 * half * kk
                if lo - 0.1 * half <= y <= hi + 0.1 * half:
                    ax_p.axhline(y, color="0.6", lw=0.8, ls="--")
            ax_m.set_title(
                f"GM = {m.gain_margin:.3g}, PM = {m.phase_margin:.3g} deg, "
                f"DM = {m.delay_margin:.3g} s",
                fontsize="small",
            )
        ax_m.set_ylabel("|L| (dB)" if db else "|L|")
        ax_p.set_ylabel("phase (deg)" if deg else "phase (rad)")
        ax_p.set_xlabel("frequency (Hz)" if hz else "frequency (rad/s)")
        return axes


def bode_axes(ax: Any) -> tuple[Any, Any]:
    """The magnitude and phase axes of a Bode plot for the ``ax`` given to
    :meth:`BodeResponse.plot` (see there)."""
    import matplotlib.pyplot as plt
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    if ax is None:
        top, bottom = plt.subplots(2, 1, sharex=True)[1]
        return top, bottom
    if isinstance(ax, Figure):
        top, bottom = ax.subplots(2, 1, sharex=True)
        return top, bottom
    if isinstance(ax, Axes):
        spec = ax.get_subplotspec()
        if spec is None:
            raise OptionError(
                "ax: a single axes is split into magnitude and phase only when it is a subplot "
                "of a grid (plt.subplots); pass (ax_mag, ax_phase) instead"
            )
        fig = ax.get_figure()
        assert isinstance(fig, Figure)
        ax.remove()
        rows = spec.subgridspec(2, 1, hspace=0.1)
        top = fig.add_subplot(rows[0])
        bottom = fig.add_subplot(rows[1], sharex=top)
        top.tick_params(labelbottom=False)
        return top, bottom
    try:
        top, bottom = ax
    except (TypeError, ValueError) as exc:
        raise OptionError(
            f"ax must be (ax_mag, ax_phase), one axes of a grid or a figure, got {ax!r}"
        ) from exc
    return top, bottom


def bode(
    L: Any, w: ArrayLike | None = None, *, w_range: tuple[float, float] | None = None
) -> BodeResponse:
    """Bode response of ``L`` with exact delays.

    Parameters
    ----------
    L : DelayTF, control.TransferFunction or sympy expression
    w : array_like, optional
        Angular frequencies (rad/s). Default: :func:`frequency_grid` (adaptive).
    w_range : (w_min, w_max), optional
        Range for the adaptive grid.

    Returns
    -------
    BodeResponse
        With ``magnitude`` (ratio), ``phase`` (continuously unwrapped, rad) and ``.plot()``.

    See Also
    --------
    nyquist : the same response in the complex plane, with the encirclement count
    margins : gain, phase and delay margins, and the closed loop's verdict
    nichols : gain against phase

    Examples
    --------
    >>> import fluidnet as fn
    >>> L = fn.models.rcp().loop_gain("R")        # Dukkipati & McKeown eq (9)
    >>> b = fn.bode(L)
    >>> bool(abs(b.phase[0] + 3.14159) < 1e-2)    # the phase starts at -pi (App. III)
    True
    """
    L = as_loop(L)
    if w is None:
        w = frequency_grid(L, w_range)
    else:
        w = np.unique(numbers_option("w", w, where="bode").ravel())
        if w.size == 0 or w[0] < 0:
            raise OptionError("w must hold finite, non-negative frequencies")
    with np.errstate(all="ignore"):
        resp = L(1j * w)
    # the phase is followed from a frequency low enough for the low-frequency asymptote to
    # fix its branch, on a grid fine enough for the delays' rotation, then read at w: it does
    # not depend on where w (or w_range) starts
    phase = continuous_phase(L, w)
    return BodeResponse(omega=w, response=resp, phase=phase, L=L)
