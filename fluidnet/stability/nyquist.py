"""Nyquist analysis with exact delays: the encirclement count along the full D-contour."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import AnalysisError
from ..linear.delaytf import DelayTF
from ..options import number_option, numbers_option
from .frequency_grid import as_loop, check_supported, frequency_grid, max_delay, tail_radius

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from numpy.typing import ArrayLike

__all__ = ["NyquistResponse", "nyquist"]


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
    tau = max_delay(L)
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


@dataclass(kw_only=True)
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

    def to_xarray(self) -> Any:
        """The response and the contour's image as an :class:`xarray.Dataset`.

        Returns
        -------
        xarray.Dataset
            ``response`` (complex) along ``omega`` (rad/s); ``contour`` and
            ``contour_response`` along ``contour_point`` (the D-contour and its image, the
            curve the encirclements are counted on); ``axis_poles`` along ``axis_pole``;
            the verdict in the attributes (``encirclements``, ``open_loop_rhp_poles``,
            ``closed_loop_rhp_roots``, ``stable``, ``marginal``, ``min_distance``).
        """
        import xarray as xr

        attrs = {
            k: (int(v) if isinstance(v, (bool, np.bool_)) else v)
            for k, v in (
                ("encirclements", self.encirclements),
                ("open_loop_rhp_poles", self.open_loop_rhp_poles),
                ("closed_loop_rhp_roots", self.closed_loop_rhp_roots),
                ("stable", self.stable),
                ("marginal", self.marginal),
                ("min_distance", self.min_distance),
            )
        }
        return xr.Dataset(
            {
                "response": ("omega", self.response),
                "contour": ("contour_point", self.contour),
                "contour_response": ("contour_point", self.contour_response),
                "axis_poles": ("axis_pole", np.asarray(self.axis_poles)),
            },
            coords={"omega": ("omega", self.omega, {"units": "rad/s"})},
            attrs=attrs,
        )

    def plot(
        self,
        ax: Axes | None = None,
        *,
        max_magnitude: float | None = None,
        mirror: bool = True,
        **kwargs: Any,
    ) -> Axes:
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
        line = ax.plot(np.real(inner), np.imag(inner), **kwargs)[0]
        ax.plot(np.real(outer), np.imag(outer), ls=":", color=line.get_color())
        if mirror:
            ax.plot(np.real(inner), -np.imag(inner), ls="--", color=line.get_color(), alpha=0.6)
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


def nyquist(L: Any, w: ArrayLike | None = None, *, axis_tol: float = 1e-9) -> NyquistResponse:
    """Nyquist analysis of ``L`` with exact delays.

    The encirclements of -1 are counted along the full D-contour (negative frequencies,
    indentations to the right of open-loop poles on the imaginary axis, the closing arc) by
    adaptive sampling until ``1 + L`` turns by less than pi/8 between samples; the high
    frequency part is closed with a rigorous bound ``|L| < 1/2``. ``P`` comes from the roots
    of the denominator of ``L`` (:meth:`fluidnet.DelayTF.pole_census`), so ``Z = N + P`` is
    automatic.

    Parameters
    ----------
    L : DelayTF, control.TransferFunction or sympy expression
        ``L`` is kept unreduced: for a :meth:`fluidnet.Model.loop_gain`, ``Z`` then counts
        every closed-loop root, including modes a cancellation would hide.
    w : array_like, optional
        Frequencies for the drawn curve (default adaptive). The count never uses them.
    axis_tol : float, default 1e-9
        Open-loop poles with ``|Re(p)| <= axis_tol * max(1, |p|)`` count as on the imaginary
        axis: the contour is indented around them (see :meth:`fluidnet.DelayTF.pole_census`).

    Returns
    -------
    NyquistResponse

    Raises
    ------
    AnalysisError
        When ``|L|`` does not decay at high frequency or the denominator is not retarded.

    See Also
    --------
    bode : gain and phase against frequency
    margins : the distances to -1 read off this curve
    root_locus : the closed loop's roots as the loop gain grows

    Examples
    --------
    >>> import fluidnet as fn
    >>> s, e = fn.s, fn.sympy.exp
    >>> beta, d0 = 0.3, 1.0                         # RCP's G1 (Dukkipati & McKeown, Sec IV-D)
    >>> G1 = fn.DelayTF.from_expr(d0*s*e(-s*d0) / (d0**2*s**2 + beta*e(-s*d0)))
    >>> r = fn.nyquist(0.8 * G1)                    # alpha = 0.8 in (0.3427, 1.4061)
    >>> r.open_loop_rhp_poles, r.encirclements, r.stable
    (2, -2, True)
    """
    L = as_loop(L)
    check_supported(L)
    if w is not None:
        w = numbers_option("w", w, where="nyquist")
    axis_tol = number_option("axis_tol", axis_tol, positive=True, where="nyquist")
    census = L.pole_census(axis_tol=axis_tol)
    P, axis = census.rhp, census.axis_frequencies
    W = tail_radius(L, 0.5)
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
        omega=w,
        response=resp,
        encirclements=N,
        open_loop_rhp_poles=P,
        closed_loop_rhp_roots=Z,
        stable=(Z == 0) and not marginal,
        marginal=marginal,
        axis_poles=axis,
        min_distance=c.min_distance,
        contour=c.s,
        contour_response=c.F - 1.0,
    )
