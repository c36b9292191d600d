"""Frequency-domain analysis with exact delays: Bode, Nyquist and stability margins.

Every function takes a loop transfer function ``L`` — a :class:`fluidnet.DelayTF`, a
:class:`control.TransferFunction` or a sympy expression in ``s`` — with the closed loop
characteristic equation ``1 + L(s) = 0``. Delays stay exact ``exp(-s tau)``: no Padé
approximation is made.

Conventions
-----------
* ``gain_margin`` is a ratio (``20 log10`` of it is the margin in dB), ``phase_margin`` is in
  degrees, ``delay_margin`` in seconds; frequencies are angular (rad/s).
* As in :func:`control.stability_margins`: the phase margin at a gain crossover ``w`` is
  ``(angle L(jw) mod 360) - 180`` degrees, the reported phase margin is the one smallest in
  magnitude, and the reported gain margin is the one closest to 1 (in log) over every phase
  crossover (``L(jw)`` real and negative, ``w = 0`` included).
* ``delay_margin = min over gain crossovers of PM / w`` (PM in radians): the smallest extra
  loop delay that puts the Nyquist curve through -1. It is negative when some crossover
  already has a negative phase margin.
* The Nyquist count is the number ``N`` of **clockwise** encirclements of -1 along the
  D-contour (up the imaginary axis, indented to the right around open-loop poles on the
  axis, closed through the right half-plane); ``Z = N + P`` is the number of closed-loop roots
  in the right half-plane, with ``P`` the open-loop right-half-plane poles.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import brentq

from ..delaytf import DelayTF, as_delay_tf
from ..errors import AnalysisError
from ..quasipoly import QuasiPolynomial

__all__ = [
    "BodeResponse",
    "NyquistResponse",
    "Margins",
    "bode",
    "nyquist",
    "margins",
    "frequency_grid",
    "open_loop_poles",
]


# ---------------------------------------------------------------------- quasi-polynomial facts
def _taylor_at_zero(qp: QuasiPolynomial, order: int) -> np.ndarray:
    """Taylor coefficients ``c_0 .. c_order`` of ``qp`` at ``s = 0`` (lowest power first)."""
    out = np.zeros(order + 1, dtype=complex)
    for tau, c in qp.terms.items():
        poly = np.asarray(c)[::-1]  # lowest power first
        expo = np.array([(-tau) ** m / math.factorial(m) for m in range(order + 1)])
        prod = np.convolve(poly, expo)[: order + 1]
        out[: len(prod)] += prod
    return out


def _order_at_zero(qp: QuasiPolynomial) -> tuple[int, complex]:
    """Order of the zero of ``qp`` at ``s = 0`` and its first non-zero Taylor coefficient."""
    order = qp.degree + 4
    coef = _taylor_at_zero(qp, order)
    size = sum(float(np.sum(np.abs(c))) for c in qp.coeffs) or 1.0
    for m, cm in enumerate(coef):
        if abs(cm) > 1e-12 * size:
            return m, complex(cm)
    return order, 0j


def _abs_poly_bound(c: np.ndarray, r: np.ndarray) -> np.ndarray:
    """``sum |c_i| r^i`` (an upper bound of ``|p(s)|`` on ``|s| = r``)."""
    return np.polyval(np.abs(np.asarray(c)), r)


def _tail_bound(L: DelayTF, r: np.ndarray) -> np.ndarray:
    """Upper bound of ``|L(s)|`` on ``Re s >= 0, |s| = r`` (``inf`` where it cannot bound)."""
    num = sum((_abs_poly_bound(c, r) for c in L.num.coeffs), np.zeros_like(r))
    den = L.den
    lead_c = np.asarray(den.terms.get(0.0, np.zeros(1)))
    n = len(lead_c) - 1
    low = np.polyval(np.abs(lead_c[1:]), r) if n > 0 else np.zeros_like(r)
    lower = abs(lead_c[0]) * r**n - low
    for tau, c in den.terms.items():
        if tau != 0.0:
            lower = lower - _abs_poly_bound(c, r)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(lower > 0, num / np.where(lower > 0, lower, 1.0), np.inf)


def _check_supported(L: DelayTF) -> None:
    if not (L.den.is_rational or L.den.is_retarded):
        raise AnalysisError(
            "the denominator of L is not retarded (its delay-free term must carry the highest "
            f"power of s): {L.den!r}; neutral loops are not supported"
        )


def _tail_radius(L: DelayTF, level: float) -> float:
    """A radius beyond which ``|L(s)| < level`` on the closed right half-plane (rigorous bound)."""
    _check_supported(L)
    r = np.logspace(-8, 14, 2201)
    b = _tail_bound(L, r)
    above = np.flatnonzero(~(b < level))
    if above.size == 0:
        return float(r[0])
    if above[-1] == r.size - 1:
        raise AnalysisError(
            f"|L(s)| does not fall below {level:g} at high frequency (L is not strictly proper "
            "or its high-frequency gain is too large): the Nyquist count would not converge"
        )
    return float(r[above[-1] + 1])


def _characteristic_frequencies(L: DelayTF) -> np.ndarray:
    freqs = []
    for qp in (L.num, L.den):
        for tau, c in qp.terms.items():
            if tau > 0:
                freqs.append(1.0 / tau)
            if len(c) > 1:
                r = np.abs(np.roots(c))
                freqs.extend(r[(r > 0) & np.isfinite(r)])
    return np.asarray(freqs, dtype=float)


def frequency_grid(
    L, w_range: tuple[float, float] | None = None, *, level: float = 0.1
) -> np.ndarray:
    """An adaptive angular-frequency grid (rad/s) for ``L``.

    The range spans two decades beyond the poles, zeros and ``1/tau`` of every delay, and
    reaches the frequency beyond which ``|L| < level`` (rigorously bounded), so every gain
    crossover lies inside it. Points are added until the phase changes by less than 0.15 rad
    and the magnitude by less than 15 % between neighbours; gain and phase crossovers are
    inserted exactly.

    Parameters
    ----------
    L : DelayTF, control.TransferFunction or sympy expression
    w_range : (w_min, w_max), optional
        Override the automatic range.
    level : float, default 0.1
        The magnitude below which the tail is cut.
    """
    L = as_delay_tf(L)
    if w_range is None:
        char = _characteristic_frequencies(L)
        lo = char.min() / 100 if char.size else 1e-2
        hi = char.max() * 100 if char.size else 1e2
        try:
            hi = max(hi, 2.0 * _tail_radius(L, level))
        except AnalysisError:
            pass
        lo = min(lo, hi / 1e4)
    else:
        lo, hi = (float(v) for v in w_range)
        if not (0 < lo < hi and math.isfinite(hi)):
            raise AnalysisError(f"w_range = {w_range!r}: need 0 < w_min < w_max < inf")
    w = np.logspace(math.log10(lo), math.log10(hi), int(40 * math.log10(hi / lo)) + 2)
    w = _refine(lambda x: L(1j * x), w, max_points=200_000)
    cross = np.concatenate([_gain_crossovers(L, w), _phase_crossovers(L, w)])
    return np.unique(np.concatenate([w, cross]))


def _refine(f, w: np.ndarray, *, dphase: float = 0.15, dmag: float = 0.15, max_points: int):
    """Bisect (geometrically) every interval where ``f`` turns or grows too much."""
    vals = f(w)
    for _ in range(60):
        with np.errstate(all="ignore"):
            ratio = vals[1:] / vals[:-1]
            bad = (np.abs(np.angle(ratio)) > dphase) | (np.abs(np.log(np.abs(ratio))) > dmag)
        bad &= np.isfinite(vals[1:]) & np.isfinite(vals[:-1])
        bad &= (w[1:] - w[:-1]) > 1e-12 * w[1:]
        if not bad.any() or w.size > max_points:
            break
        i = np.flatnonzero(bad)
        mid = np.sqrt(w[i] * w[i + 1]) if w[0] > 0 else 0.5 * (w[i] + w[i + 1])
        w = np.insert(w, i + 1, mid)
        vals = np.insert(vals, i + 1, f(mid))
    return w


# ---------------------------------------------------------------------- crossovers
def _bracketed_root(g, a: float, b: float) -> float:
    fa, fb = float(g(a)), float(g(b))
    if fa == 0.0 or fb == 0.0 or fa * fb > 0:  # rounding at an inserted crossover
        return a if abs(fa) <= abs(fb) else b
    return brentq(g, a, b, xtol=1e-300, rtol=1e-15)


def _roots_of(g, w: np.ndarray) -> np.ndarray:
    vals = g(w)
    sign = np.sign(vals)
    idx = np.flatnonzero(
        (sign[:-1] * sign[1:] < 0) & np.isfinite(vals[:-1]) & np.isfinite(vals[1:])
    )
    out = [_bracketed_root(g, w[i], w[i + 1]) for i in idx]
    out += list(w[vals == 0])
    return np.unique(np.asarray(out, dtype=float))


def _gain_crossovers(L: DelayTF, w: np.ndarray) -> np.ndarray:
    def g(x):
        with np.errstate(all="ignore"):
            return np.log(np.abs(L(1j * np.asarray(x))))

    return _roots_of(g, w)


def _phase_crossovers(L: DelayTF, w: np.ndarray) -> np.ndarray:
    """Frequencies where ``L(jw)`` is real and negative (``w = 0`` when ``L(0) < 0``)."""

    def g(x):
        with np.errstate(all="ignore"):
            v = L(1j * np.asarray(x))
            return v.imag / np.abs(v)

    cand = _roots_of(g, w)
    with np.errstate(all="ignore"):
        v = L(1j * cand)
    ok = np.isfinite(v) & (v.real < 0) & (np.abs(v.imag) <= 1e-8 * np.abs(v))
    cand = cand[ok]
    with np.errstate(all="ignore"):
        v0 = complex(L(0.0))
    if np.isfinite(v0) and v0.real < 0 and abs(v0.imag) <= 1e-12 * abs(v0):
        cand = np.concatenate([[0.0], cand])
    return cand


# ---------------------------------------------------------------------- open-loop poles
def open_loop_poles(L, *, axis_tol: float = 1e-9) -> tuple[int, np.ndarray]:
    """Open-loop poles of ``L`` in the right half-plane and on the imaginary axis.

    Returns
    -------
    P : int
        Zeros of the denominator with positive real part, counted with multiplicity
        (from :func:`numpy.roots` for a rational denominator, from the characteristic roots of
        its companion system otherwise).
    axis : numpy.ndarray of float
        Frequencies ``w`` of the denominator zeros ``j w`` on the imaginary axis
        (``|Re| <= axis_tol * max(1, |s|)``), one entry per distinct pole.
    """
    L = as_delay_tf(L)
    _check_supported(L)
    den = L.den
    if den.is_rational:
        c = den.coeffs[0]
        r = np.roots(c) if len(c) > 1 else np.zeros(0)
        mult = np.ones(r.size, dtype=int)
        if r.size:
            # np.roots splits multiple roots by ~eps^(1/m): merge them
            vals, mult = _merge_close(r)
            r = vals
    else:
        roots = den.companion().roots(region=-1e-6)
        r = roots.values
        mult = np.array([x.multiplicity for x in roots], dtype=int)
    tol = axis_tol * np.maximum(1.0, np.abs(r))
    on_axis = np.abs(r.real) <= np.maximum(tol, 1e-7 * np.maximum(1.0, np.abs(r)) * den.is_rational)
    P = int(np.sum(mult[(r.real > 0) & ~on_axis]))
    axis = np.unique(np.round(r.imag[on_axis], 12))
    return P, axis


def _merge_close(r: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    vals: list[complex] = []
    mult: list[int] = []
    for v in r[np.argsort(-r.real)]:
        for i, u in enumerate(vals):
            if abs(u - v) <= 1e-5 * max(1.0, abs(v)):
                vals[i] = (u * mult[i] + v) / (mult[i] + 1)
                mult[i] += 1
                break
        else:
            vals.append(complex(v))
            mult.append(1)
    return np.array(vals), np.array(mult)


# ---------------------------------------------------------------------- winding number
def _winding_along(F, path, t: np.ndarray):
    """Total argument change of ``F(path(t))`` over the sorted parameters ``t``, refined.

    Intervals are bisected until ``F`` turns by less than pi/8 and changes modulus by less
    than a factor e^0.5 between samples. Returns ``(increment, t, values, min_modulus)``;
    ``increment`` is ``nan`` when ``F`` vanishes on the path (a closed-loop root on it).
    """
    vals = F(path(t))
    for _ in range(80):
        with np.errstate(all="ignore"):
            ratio = vals[1:] / vals[:-1]
            bad = (np.abs(np.angle(ratio)) > np.pi / 8) | (np.abs(np.log(np.abs(ratio))) > 0.5)
        if not bad.any():
            break
        width = t[1:] - t[:-1]
        tiny = width <= 1e-13 * np.maximum(np.maximum(np.abs(t[1:]), np.abs(t[:-1])), 1e-300)
        if np.any(bad & tiny):
            return math.nan, t, vals, 0.0
        i = np.flatnonzero(bad)
        mid = 0.5 * (t[i] + t[i + 1])
        t = np.insert(t, i + 1, mid)
        vals = np.insert(vals, i + 1, F(path(mid)))
        if t.size > 2_000_000:
            raise AnalysisError("the Nyquist contour needs more than 2e6 points; is L finite?")
    with np.errstate(all="ignore"):
        inc = float(np.sum(np.angle(vals[1:] / vals[:-1])))
    mod = np.abs(vals)
    return inc, t, vals, float(np.min(mod)) if np.all(np.isfinite(mod)) else 0.0


@dataclass
class _Contour:
    increment: float
    s: np.ndarray
    F: np.ndarray
    min_distance: float


def _axis_samples(a: float, b: float, W: float, rho: float, tau: float) -> np.ndarray:
    """Initial samples of the axis interval [a, b]: uniform plus log-spaced around 0."""
    n_lin = int(min(4000, 100 + 8 * (b - a) * tau))
    logs = np.geomspace(max(rho * 1e-2, 1e-10 * W), W, 400)
    t = np.concatenate([np.linspace(a, b, n_lin), logs, -logs, [0.0]])
    return np.unique(t[(t >= a) & (t <= b)])


def _nyquist_contour(L: DelayTF, axis_poles: np.ndarray, W: float) -> _Contour:
    """Argument change of ``F = 1 + L`` along the indented D-contour."""

    def F(s):
        with np.errstate(all="ignore"):
            return 1.0 + L(s)

    poles = np.sort(axis_poles[np.abs(axis_poles) < W])
    gaps = np.diff(np.concatenate([[-W], poles, [W]]))
    rho = max(min(1e-6 * W, 0.25 * float(gaps.min())), 1e-10 * W)
    tau = _max_delay(L)
    total, ss, Fs, dmin = 0.0, [], [], math.inf
    start = -W

    def axis_piece(a, b):
        nonlocal total, dmin
        if b <= a:
            return
        inc, t, v, m = _winding_along(F, lambda x: 1j * x, _axis_samples(a, b, W, rho, tau))
        total += inc
        ss.append(1j * t)
        Fs.append(v)
        dmin = min(dmin, m)

    for wp in poles:
        axis_piece(start, wp - rho)
        theta = np.linspace(-np.pi / 2, np.pi / 2, 65)
        inc, t, v, m = _winding_along(F, lambda th, wp=wp: 1j * wp + rho * np.exp(1j * th), theta)
        total += inc
        ss.append(1j * wp + rho * np.exp(1j * t))
        Fs.append(v)
        dmin = min(dmin, m)
        start = wp + rho
    axis_piece(start, W)
    # tail: |L| < 1/2 on the closed right half-plane beyond W, so F stays in |F - 1| < 1/2
    total += float(np.angle(F(-1j * W) / F(1j * W)))
    return _Contour(total, np.concatenate(ss), np.concatenate(Fs), dmin)


def _max_delay(L: DelayTF) -> float:
    return max(L.delays, default=0.0)


# ---------------------------------------------------------------------- results
@dataclass
class BodeResponse:
    """Frequency response on an adaptive grid.

    Attributes
    ----------
    omega : numpy.ndarray
        Angular frequencies (rad/s), ascending.
    response : numpy.ndarray
        ``L(j omega)``.
    phase : numpy.ndarray
        Continuously unwrapped phase (rad); at low frequency it starts on the branch of the
        asymptote ``arg(K) - m pi / 2`` of ``L ~ K s^-m`` (e.g. ``-pi`` for a double
        integrator with positive gain, as in RCP's eq (10)).
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

    def to_frd(self):
        """The response as :class:`control.FrequencyResponseData`."""
        import control

        return control.frd(self.response, self.omega)

    def plot(
        self,
        *,
        db: bool = True,
        deg: bool = True,
        hz: bool = False,
        margins: bool = True,
        axes=None,
        **kwargs,
    ):
        """Magnitude and phase against frequency (log axis); returns the two axes.

        Parameters
        ----------
        db, deg, hz : bool
            Magnitude in dB, phase in degrees, frequency in Hz.
        margins : bool, default True
            Mark the gain and phase crossovers and the margins.
        axes : (ax_mag, ax_phase), optional
        """
        import matplotlib.pyplot as plt

        if axes is None:
            _, axes = plt.subplots(2, 1, sharex=True)
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


@dataclass
class NyquistResponse:
    """The Nyquist curve of ``L`` and the encirclement count of -1.

    Attributes
    ----------
    omega, response : numpy.ndarray
        Positive frequencies and ``L(j omega)`` for plotting.
    encirclements : int
        ``N``, clockwise encirclements of -1 along the D-contour.
    open_loop_rhp_poles : int
        ``P``, computed from the denominator's roots.
    closed_loop_rhp_roots : int
        ``Z = N + P``.
    stable : bool
        ``Z == 0`` and no closed-loop root on the imaginary axis.
    marginal : bool
        ``1 + L`` vanishes on the contour (a closed-loop root on the axis); then the counts
        are not defined and are set to -1.
    axis_poles : numpy.ndarray
        Frequencies of the open-loop poles on the imaginary axis (indented around).
    min_distance : float
        Minimum of ``|1 + L|`` along the sampled contour.
    """

    omega: np.ndarray
    response: np.ndarray
    encirclements: int
    open_loop_rhp_poles: int
    closed_loop_rhp_roots: int
    stable: bool
    marginal: bool
    axis_poles: np.ndarray
    min_distance: float
    contour: np.ndarray = field(repr=False)
    contour_response: np.ndarray = field(repr=False)

    @property
    def count(self) -> int:
        """Alias of :attr:`encirclements` (the name python-control uses)."""
        return self.encirclements

    def plot(self, ax=None, *, max_magnitude: float | None = None, mirror: bool = True, **kwargs):
        """Draw the Nyquist curve with -1 marked; huge values are pulled onto a circle.

        Parameters
        ----------
        max_magnitude : float, optional
            Radius beyond which points are drawn radially compressed onto that circle
            (dotted), like python-control. Default: 1.5 x the largest finite magnitude away
            from the poles, at least 3.
        mirror : bool, default True
            Also draw the negative-frequency half (dashed).
        """
        import matplotlib.pyplot as plt

        if ax is None:
            _, ax = plt.subplots()
        z = self.response
        if max_magnitude is None:
            mags = np.abs(z[np.isfinite(z)])
            typical = np.percentile(mags, 90) if mags.size else 1.0
            max_magnitude = max(3.0, 1.5 * float(typical))
        R = max_magnitude
        big = np.abs(z) > R
        zc = np.where(big, z / np.abs(z) * R, z)
        inner = np.where(big, np.nan, zc)
        outer = np.where(big, zc, np.nan)
        line = ax.plot(inner.real, inner.imag, **kwargs)[0]
        ax.plot(outer.real, outer.imag, ls=":", color=line.get_color())
        if mirror:
            ax.plot(inner.real, -inner.imag, ls="--", color=line.get_color(), alpha=0.6)
        n = z.size
        for frac in (0.25, 0.5):
            i = int(frac * n)
            if 0 < i < n - 1 and np.all(np.isfinite(inner[i : i + 2])):
                ax.annotate(
                    "",
                    xy=(inner[i + 1].real, inner[i + 1].imag),
                    xytext=(inner[i].real, inner[i].imag),
                    arrowprops={"arrowstyle": "->", "color": line.get_color()},
                )
        ax.plot([-1], [0], "r+", ms=10)
        ax.axhline(0, color="0.85", lw=0.8)
        ax.axvline(0, color="0.85", lw=0.8)
        verdict = "marginal" if self.marginal else ("stable" if self.stable else "unstable")
        ax.set_title(
            f"N = {self.encirclements}, P = {self.open_loop_rhp_poles}, "
            f"Z = {self.closed_loop_rhp_roots} ({verdict})",
            fontsize="small",
        )
        ax.set_xlabel("Re L(jw)")
        ax.set_ylabel("Im L(jw)")
        ax.set_aspect("equal", adjustable="datalim")
        return ax


@dataclass
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


# ---------------------------------------------------------------------- public functions
def _coerce(L) -> DelayTF:
    try:
        return as_delay_tf(L)
    except (TypeError, ValueError) as exc:
        raise AnalysisError(f"cannot use {L!r} as a loop transfer function: {exc}") from exc


def _unwrapped_phase(L: DelayTF, w: np.ndarray, resp: np.ndarray) -> np.ndarray:
    jn, kn = _order_at_zero(L.num)
    jd, kd = _order_at_zero(L.den)
    if kn == 0 or kd == 0:
        start = float(np.angle(resp[0]))
    else:
        start = float(np.angle(kn / kd)) + (jn - jd) * np.pi / 2
        start += float(np.angle(resp[0] * np.exp(-1j * start)))
    with np.errstate(all="ignore"):
        inc = np.angle(resp[1:] / resp[:-1])
    inc = np.where(np.isfinite(inc), inc, 0.0)
    return start + np.concatenate([[0.0], np.cumsum(inc)])


def bode(L, w=None, *, w_range: tuple[float, float] | None = None) -> BodeResponse:
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

    Examples
    --------
    >>> import fluidnet as fn
    >>> L = fn.models.rcp().loop_gain("R")        # seed 004 eq (9)
    >>> b = fn.bode(L)
    >>> bool(abs(b.phase[0] + 3.14159) < 1e-2)    # the phase starts at -pi (App. III)
    True
    """
    L = _coerce(L)
    if w is None:
        w = frequency_grid(L, w_range)
    else:
        w = np.unique(np.asarray(w, dtype=float).ravel())
        if w.size == 0 or not np.all(np.isfinite(w)) or w[0] < 0:
            raise AnalysisError("w must hold finite, non-negative frequencies")
    with np.errstate(all="ignore"):
        resp = L(1j * w)
    return BodeResponse(w, resp, _unwrapped_phase(L, w, resp), L)


def nyquist(L, w=None, *, axis_tol: float = 1e-9) -> NyquistResponse:
    """Nyquist analysis of ``L`` with exact delays.

    The encirclements of -1 are counted along the full D-contour (negative frequencies,
    indentations to the right of open-loop poles on the imaginary axis, the closing arc) by
    adaptive sampling until ``1 + L`` turns by less than pi/8 between samples; the high
    frequency part is closed with a rigorous bound ``|L| < 1/2``. ``P`` comes from the roots
    of the denominator of ``L`` (see :func:`open_loop_poles`), so ``Z = N + P`` is automatic.

    Parameters
    ----------
    L : DelayTF, control.TransferFunction or sympy expression
        ``L`` is kept unreduced: for a :meth:`fluidnet.Model.loop_gain`, ``Z`` then counts
        every closed-loop root, including modes a cancellation would hide.
    w : array_like, optional
        Frequencies for the drawn curve (default adaptive). The count never uses them.

    Returns
    -------
    NyquistResponse

    Raises
    ------
    AnalysisError
        When ``|L|`` does not decay at high frequency or the denominator is not retarded.

    Examples
    --------
    >>> import fluidnet as fn
    >>> s, e = fn.s, fn.sympy.exp
    >>> beta, d0 = 0.3, 1.0                         # RCP's G1 (seed 004 Sec IV-D)
    >>> G1 = fn.DelayTF.from_expr(d0*s*e(-s*d0) / (d0**2*s**2 + beta*e(-s*d0)))
    >>> r = fn.nyquist(0.8 * G1)                    # alpha = 0.8 in (0.3427, 1.4061)
    >>> r.open_loop_rhp_poles, r.encirclements, r.stable
    (2, -2, True)
    """
    L = _coerce(L)
    P, axis = open_loop_poles(L, axis_tol=axis_tol)
    W = _tail_radius(L, 0.5)
    W = max(W, 2.0 * float(np.max(np.abs(axis), initial=0.0)), 1e-6)
    c = _nyquist_contour(L, axis, W)
    winding = c.increment / (2 * np.pi)
    if not math.isfinite(winding):
        marginal = True
    else:
        marginal = abs(winding - round(winding)) > 0.05 or c.min_distance == 0.0
    if marginal:
        N = Z = -1
    else:
        N = -int(round(winding))
        Z = N + P
    if w is None:
        w = frequency_grid(L)
    w = np.asarray(w, dtype=float)
    with np.errstate(all="ignore"):
        resp = L(1j * w)
    return NyquistResponse(
        w, resp, N, P, Z, (Z == 0) and not marginal, marginal, axis, c.min_distance, c.s, c.F - 1.0
    )


def margins_from_grid(L: DelayTF, w: np.ndarray) -> Margins:
    """Margins of ``L`` from crossovers bracketed on the grid ``w`` (see :func:`margins`)."""
    wgc = _gain_crossovers(L, w)
    wpc = _phase_crossovers(L, w)
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
    return Margins(gm, pm, dm, w_gc, w_pc, sm, w_sm, wgc, wpc, gm_all, pm_all, dm_all)


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
    L = _coerce(L)
    w = frequency_grid(L, w_range)
    return margins_from_grid(L, w)
