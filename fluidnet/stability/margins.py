"""Gain, phase, delay and stability margins of a loop with exact delays, with the closed
loop's stability from Nyquist's criterion."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import AnalysisError
from ..linear.delaytf import DelayTF
from .frequency_grid import as_loop, frequency_grid, gain_crossovers, phase_crossovers
from .nyquist import NyquistResponse, nyquist

__all__ = ["Margins", "margins", "margins_from_grid"]


@dataclass(kw_only=True)
class Margins:
    """Stability margins of a loop ``L`` (closed loop ``1 + L = 0``), and whether that closed
    loop is stable.

    The gain, phase and delay margins are the factor, the phase lag and the added delay that
    bring the Nyquist curve onto -1 at a crossover, i.e. that put a closed-loop root on the
    imaginary axis. They measure robustness only when the closed loop is stable, which
    :attr:`closed_loop_stable` says (from the encirclement count of -1 along the full
    D-contour and the open loop's right-half-plane poles, :func:`fluidnet.nyquist`; computed
    on first use). When the closed loop is **unstable** the margins keep their definitions and
    are reported as such: each is the change that moves one more pair of roots across the
    imaginary axis, which may make the loop more unstable or less, so a positive phase or
    delay margin then says nothing about stability. For example ``30 e^{-2s} / (s (s + 0.3))``
    has a phase margin of 96 degrees and a delay margin of 0.31 s while 4 closed-loop roots lie
    in the right half-plane (the delay-free loop loses stability at a delay of 0.01 s and a
    second pair crosses at 1.16 s; 0.31 s more delay brings a third). The ``repr`` states the
    closed loop's verdict first.

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
        The margin at each crossover. A phase margin lies in ``(-180, 180]`` degrees (a
        crossover where ``L = +1`` has ``+180``) and the delay margin at a crossover is its
        phase margin in radians over its frequency (negative when the margin is).
    phase_crossover_intervals : numpy.ndarray, shape (k, 2)
        For an *undamped* loop (``L(jw)`` real at every ``w``: a rational ``L`` whose numerator
        and denominator are both even or both odd in ``s``), the intervals of ``w`` where
        ``L(jw) < 0`` (the upper end may be ``inf``). There the phase crossovers are not
        isolated: ``phase_crossovers`` holds one frequency per interval, where ``|L|`` is
        closest to 1, and the gain margin is taken there. Empty for other loops.
    note : str
        What the numbers mean when the loop is special (undamped); empty otherwise.
    closed_loop_stable : bool or None
        Property: all closed-loop roots in the open left half-plane (Nyquist's ``Z = N + P =
        0`` and no root on the imaginary axis); None when the count cannot be made (a loop
        whose ``|L|`` does not decay; see :attr:`closed_loop_note`).
    closed_loop_rhp_roots : int or None
        Property: ``Z``, the closed-loop roots in the open right half-plane with
        multiplicity (-1 when a root lies on the imaginary axis; None when not counted).
    open_loop_rhp_poles : int or None
        Property: ``P``, the open loop's poles in the right half-plane.
    closed_loop_note : str
        Property: why the closed loop is marginal or its stability is not known; empty
        otherwise.
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
    phase_crossover_intervals: np.ndarray = field(default_factory=lambda: np.zeros((0, 2)))
    note: str = ""
    loop: DelayTF | None = field(default=None, repr=False, compare=False)
    _closed_loop: tuple | None = field(default=None, init=False, repr=False, compare=False)

    # ------------------------------------------------------------------ the closed loop
    def _nyquist(self) -> tuple[NyquistResponse | None, str]:
        if self._closed_loop is None:
            if self.loop is None:
                self._closed_loop = (None, "no loop given: the closed loop was not analysed")
            else:
                try:
                    # the count never uses the drawn frequencies: give one
                    w = np.array([1.0 if math.isnan(self.gain_crossover) else self.gain_crossover])
                    self._closed_loop = (nyquist(self.loop, w), "")
                except AnalysisError as exc:
                    self._closed_loop = (None, f"closed-loop stability not determined: {exc}")
        return self._closed_loop

    @property
    def closed_loop_stable(self) -> bool | None:
        r, _ = self._nyquist()
        return None if r is None else bool(r.stable)

    @property
    def closed_loop_rhp_roots(self) -> int | None:
        r, _ = self._nyquist()
        return None if r is None else int(r.closed_loop_rhp_roots)

    @property
    def open_loop_rhp_poles(self) -> int | None:
        r, _ = self._nyquist()
        return None if r is None else int(r.open_loop_rhp_poles)

    @property
    def closed_loop_note(self) -> str:
        r, why = self._nyquist()
        if r is not None and r.marginal:
            return "a closed-loop root lies on the imaginary axis (1 + L vanishes on it)"
        return why

    def to_xarray(self) -> Any:
        """Every crossover and its margin as an :class:`xarray.Dataset`.

        Returns
        -------
        xarray.Dataset
            ``phase_margins`` (degrees) and ``delay_margins`` (s) along ``gain_crossover``
            (rad/s); ``gain_margins`` (ratio) along ``phase_crossover`` (rad/s); the reported
            margins and frequencies as scalars (``gain_margin``, ``phase_margin``,
            ``delay_margin``, ``stability_margin``, ``stability_margin_frequency``); the closed
            loop's verdict in the attribute ``closed_loop`` (and ``closed_loop_rhp_roots``,
            ``open_loop_rhp_poles`` when counted).
        """
        import xarray as xr

        data: dict[str, Any] = {
            "phase_margins": ("gain_crossover", self.phase_margins, {"units": "degree"}),
            "delay_margins": ("gain_crossover", self.delay_margins, {"units": "s"}),
            "gain_margins": ("phase_crossover", self.gain_margins),
        }
        for k in (
            "gain_margin",
            "phase_margin",
            "delay_margin",
            "stability_margin",
            "stability_margin_frequency",
        ):
            data[k] = ((), getattr(self, k))
        attrs: dict[str, Any] = {"closed_loop": self._verdict(), "note": self.note}
        for k in ("closed_loop_rhp_roots", "open_loop_rhp_poles"):
            v = getattr(self, k)
            if v is not None:
                attrs[k] = int(v)
        coords = {
            "gain_crossover": ("gain_crossover", self.gain_crossovers, {"units": "rad/s"}),
            "phase_crossover": ("phase_crossover", self.phase_crossovers, {"units": "rad/s"}),
        }
        return xr.Dataset(data, coords=coords, attrs=attrs)

    def plot(self, ax: Any = None, **kwargs: Any) -> Any:
        """The loop's Nyquist curve with the unit circle and the crossovers marked.

        The gain crossovers (``|L| = 1``, where the phase and delay margins are read) lie on the
        unit circle, the phase crossovers (``L`` real and negative, where the gain margin is
        read) on the negative real axis; the stability margin is the distance from -1 to the
        curve.

        Parameters
        ----------
        ax : matplotlib.axes.Axes, optional
            Where to draw (a new figure by default).
        **kwargs
            Passed to :meth:`fluidnet.stability.NyquistResponse.plot`.

        Returns
        -------
        matplotlib.axes.Axes

        Raises
        ------
        AnalysisError
            When the margins were computed without their loop (``loop`` is ``None``).
        """
        if self.loop is None:
            raise AnalysisError("these margins carry no loop to plot (Margins.loop is None)")
        ax = nyquist(self.loop).plot(ax, **kwargs)
        circle = np.exp(1j * np.linspace(0.0, 2.0 * np.pi, 361))
        ax.plot(np.real(circle), np.imag(circle), color="0.6", lw=0.6, ls="--")
        for freqs, marker, label in (
            (self.gain_crossovers, "o", "gain crossover"),
            (self.phase_crossovers, "s", "phase crossover"),
        ):
            pts = np.asarray(self.loop.freqresp(np.asarray(freqs, dtype=float)), dtype=complex)
            if pts.size:
                ax.plot(np.real(pts), np.imag(pts), marker, ms=5, ls="none", label=label)
        ax.legend(fontsize="small")
        return ax

    def _verdict(self) -> str:
        r, why = self._nyquist()
        if r is None:
            return why
        if r.marginal:
            return "closed loop marginal: a root on the imaginary axis"
        if r.stable:
            return "closed loop stable"
        z = r.closed_loop_rhp_roots
        return (
            f"closed loop UNSTABLE: {z} root{'s' if z != 1 else ''} in the right half-plane; "
            "the margins are distances to crossings of -1, not robustness"
        )

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
            f"Margins({self._verdict()}, "
            f"gain_margin={self.gain_margin:.6g}, phase_margin={self.phase_margin:.6g} "
            f"deg, delay_margin={self.delay_margin:.6g} s, gain_crossover="
            f"{self.gain_crossover:.6g} rad/s, phase_crossover={self.phase_crossover:.6g} "
            f"rad/s, stability_margin={self.stability_margin:.6g} at "
            f"{self.stability_margin_frequency:.6g} rad/s)"
        )


def _phase_margins(values: np.ndarray) -> np.ndarray:
    """``angle(L) + 180`` degrees, in ``(-180, 180]`` (``L = +1`` gives ``+180``, whatever the
    sign of a rounding error in its imaginary part)."""
    pm = 180.0 - np.remainder(-np.angle(values, deg=True), 360.0)
    return np.where(pm <= -180.0 + 1e-9, 180.0, pm)


def margins_from_grid(L: DelayTF, w: np.ndarray) -> Margins:
    """Margins of ``L`` from crossovers bracketed on the grid ``w`` (see :func:`margins`)."""
    undamped = _undamped_crossovers(L, (float(w[0]), float(w[-1])))
    if undamped is None:
        wgc = gain_crossovers(L, w)
        wpc = phase_crossovers(L, w)
        intervals, note = np.zeros((0, 2)), ""
    else:
        wgc, wpc, intervals = undamped
        note = (
            "undamped loop: L(jw) is real at every frequency, so the Nyquist curve runs along "
            "the real axis and the phase crossovers fill the intervals in "
            "phase_crossover_intervals (one frequency per interval is reported); the closed "
            "loop, whose characteristic function is even in s, is never asymptotically stable"
        )
    with np.errstate(all="ignore"):
        gm_all = 1.0 / np.abs(L(1j * wpc))
        pm_all = _phase_margins(L(1j * wgc))
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
    if undamped is not None:  # |1 + L| has a kink, not a smooth minimum, where L crosses -1
        minus_one = wgc[np.abs(pm_all) < 1e-9] if wgc.size else wgc
        if minus_one.size:
            sm, w_sm = 0.0, float(minus_one[0])
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
        phase_crossover_intervals=intervals,
        note=note,
        loop=L,
    )


# ------------------------------------------------------------------------- undamped loops
def _in_w(c: np.ndarray) -> np.ndarray:
    """Coefficients (highest power first) of ``p(jw)`` as a polynomial in ``w``."""
    deg = len(c) - 1
    return np.asarray(c, dtype=complex) * (1j ** np.arange(deg, -1, -1))


def _real_roots(c: np.ndarray, lo: float, hi: float) -> np.ndarray:
    """Real roots in ``[lo, hi]`` of the real polynomial ``c`` (highest power first)."""
    c = np.trim_zeros(np.real_if_close(np.asarray(c), tol=1e6).real, "f")
    if c.size <= 1:
        return np.zeros(0)
    r = np.roots(c)
    scale = max(1.0, float(np.max(np.abs(r)))) if r.size else 1.0
    real = np.sort(r[np.abs(r.imag) <= 1e-7 * scale].real)
    real = real[(real >= lo - 1e-12 * scale) & (real <= hi)]
    return np.clip(real, lo, hi)


def _undamped_crossovers(
    L: DelayTF, w_range: tuple[float, float]
) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """For a loop with ``L(jw)`` real at every ``w``: exact gain crossovers, one phase
    crossover per interval of ``L(jw) < 0``, and those intervals; ``None`` for other loops.

    ``L = N/D`` is real on the imaginary axis exactly when it has no delay and ``N`` and ``D``
    are both even or both odd in ``s``. Then ``sign L(jw) = sign Re(N(jw) conj D(jw))``, a
    polynomial in ``w``, and ``|L(jw)| = 1`` where ``|N(jw)|^2 - |D(jw)|^2 = 0``: both are
    solved as polynomials, so no crossover is missed between grid points.
    """
    if not (L.num.is_rational and L.den.is_rational) or L.num.is_zero:
        return None
    n, d = L.num.coeffs[0], L.den.coeffs[0]

    def parity(c):
        powers = np.arange(len(c) - 1, -1, -1)
        nz = powers[np.asarray(c) != 0]
        return set(nz % 2)

    pn, pd = parity(n), parity(d)
    if len(pn) != 1 or pn != pd:
        return None
    lo, hi = w_range
    nw, dw = _in_w(n), _in_w(d)
    sign_poly = np.real(np.polymul(nw, _conj_in_w(d)))
    nn = np.real(np.polymul(nw, _conj_in_w(n)))  # |N(jw)|^2
    dd = np.real(np.polymul(dw, _conj_in_w(d)))  # |D(jw)|^2
    mag_poly = np.polysub(nn, dd)
    # intervals of w >= lo where L(jw) < 0, between consecutive sign changes
    cuts = np.unique(np.concatenate([[lo], _real_roots(sign_poly, lo, np.inf), [np.inf]]))
    intervals = []
    for a, b in zip(cuts[:-1], cuts[1:], strict=True):
        mid = a + 1.0 if math.isinf(b) else 0.5 * (a + b)
        if np.polyval(sign_poly, mid) < 0:
            intervals.append((a, b))
    wgc = _real_roots(mag_poly, lo, np.inf) if np.any(mag_poly) else np.zeros(0)
    wgc = wgc[(wgc > 0) | (lo == 0.0)]
    wpc = []
    for a, b in intervals:
        inside = wgc[(wgc > a) & (wgc < b)]
        if inside.size:  # L(jw) = -1 inside: the loop is at the gain margin there
            wpc.append(float(inside[0]))
            continue
        # otherwise |L| closest to 1 at a finite end or where d|L|^2/dw = 0
        crit = np.polysub(np.polymul(np.polyder(nn), dd), np.polymul(nn, np.polyder(dd)))
        cand = list(_real_roots(crit, a, min(b, hi)) if np.any(crit) else [])
        with np.errstate(all="ignore"):
            cand += [x for x in (a, b) if math.isfinite(x) and 0 < abs(L(1j * x)) < np.inf]
        if not cand:
            cand = [a if math.isfinite(b) else max(a, lo)]
        with np.errstate(all="ignore"):
            dist = [abs(math.log(abs(complex(L(1j * x))))) for x in cand]
        wpc.append(float(cand[int(np.argmin(dist))]))
    return wgc, np.asarray(wpc, dtype=float), np.asarray(intervals, dtype=float).reshape(-1, 2)


def _conj_in_w(c: np.ndarray) -> np.ndarray:
    """Coefficients of ``conj(p(jw))`` for real ``w`` and real coefficients ``c``."""
    deg = len(c) - 1
    return np.asarray(c, dtype=complex) * ((-1j) ** np.arange(deg, -1, -1))


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
            from ..brent import brentq  # scipy: imported when a minimum is refined

            x = brentq(slope, a, b, xtol=1e-300, rtol=1e-15)
            with np.errstate(all="ignore"):
                val = float(np.abs(1.0 + L(1j * x)))
            if val <= best:
                best_w, best = float(x), val
    return best, best_w


def margins(L: Any, *, w_range: tuple[float, float] | None = None) -> Margins:
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
        With the closed loop's stability (:attr:`Margins.closed_loop_stable`): the margins
        measure robustness only when it is stable (see :class:`Margins`).

    See Also
    --------
    bode, nyquist, nichols : the curves the margins are read from
    critical_value : how far a parameter may move (not a delay margin: see Concepts)
    root_locus : the gain margin as the first crossing gain

    Examples
    --------
    >>> import fluidnet as fn
    >>> k, tau = 1.0, 0.5                 # L = k e^{-s tau} / s
    >>> m = fn.margins(fn.DelayTF.from_expr(k * fn.sympy.exp(-tau * fn.s) / fn.s))
    >>> round(m.phase_margin, 6), round(m.delay_margin, 6)     # 90 - k tau (deg), pi/2k - tau
    (61.35211, 1.070796)
    >>> m.closed_loop_stable
    True
    """
    L = as_loop(L)
    w = frequency_grid(L, w_range)
    return margins_from_grid(L, w)
