"""Root locus in a gain with exact delays: the characteristic roots of ``1 + k L(s) = 0``.

For ``L = N/D`` the closed loop's characteristic function is the quasi-polynomial
``F_k(s) = D(s) + k N(s)``. A delay system has infinitely many roots, so the locus shows those
right of a vertical line ``Re s = re_min`` (the *window*). At each gain of a grid the roots in
the window are computed by the project's root finder
(:func:`fluidnet.linear.roots.characteristic_roots` on the companion form of ``F_k``), with the
argument-principle certificate that none is missing; consecutive gains are linked by
*continuation*: each root is moved along its tangent ``d lambda / dk = -N / F_k'`` and corrected
by Newton's method at the next gain (:func:`fluidnet.linear.newton.newton_roots`), and the
corrected root must be one of the roots computed there. Where that fails (two roots meeting on
the real axis and leaving it as a pair, or a step too long) the gain step is halved, up to
:data:`MAX_HALVINGS` times, before the roots are linked by distance.

The gains at which a root crosses the imaginary axis are exact: they are ``k = -1/L(j w)`` at
the frequencies where ``L(j w)`` is real and negative (the phase crossovers of
:func:`fluidnet.margins`), inserted in the grid.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import AnalysisError, OptionError
from ..linear.delaytf import DelayTF
from ..linear.newton import newton_roots
from ..linear.quasipoly import QuasiPolynomial
from ..linear.realization import NeutralSystemError
from ..options import number_option
from .frequency_grid import as_loop
from .margins import margins

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from numpy.typing import ArrayLike

__all__ = ["RootLocus", "root_locus"]

#: Halvings of a gain step whose roots cannot be linked by continuation.
MAX_HALVINGS = 8
#: A continued root is the computed root within this relative distance.
LINK_RTOL = 1e-6


@dataclass(kw_only=True)
class RootLocus:
    """The characteristic roots of ``1 + k L(s) = 0`` for a range of gains ``k``.

    Attributes
    ----------
    gains : numpy.ndarray
        The gains ``k``, ascending (a grid, refined where the roots move fast, with the
        crossing gains and ``k = 1``, the loop as given, inserted).
    roots : numpy.ndarray of complex, shape (gains, branches)
        Each column a branch: one root followed in ``k``; ``nan`` where the branch is outside
        the window (left of ``re_min``).
    rhp_roots : numpy.ndarray of int
        The number of roots in the open right half-plane at each gain (with multiplicity,
        certified complete).
    crossing_gains, crossing_frequencies : numpy.ndarray
        The gains at which a root crosses the imaginary axis, and its frequency (rad/s),
        exact.
    re_min : float
        The left edge of the window (1/s).
    poles : numpy.ndarray of complex
        The open-loop poles in the window (the roots of ``D``: where the locus starts at
        ``k = 0``).
    zeros : numpy.ndarray of complex
        The open-loop zeros in the window (the roots of ``N``, where branches end as
        ``k -> inf``); empty when ``N`` is not retarded.
    L : DelayTF
        The loop.
    """

    gains: np.ndarray
    roots: np.ndarray
    rhp_roots: np.ndarray
    crossing_gains: np.ndarray
    crossing_frequencies: np.ndarray
    re_min: float
    poles: np.ndarray
    zeros: np.ndarray
    L: DelayTF = field(repr=False)

    @property
    def stable_intervals(self) -> list[tuple[float, float]]:
        """The intervals of gains (within the range computed) where the closed loop is stable
        (no root in the closed right half-plane), bounded by crossing gains or the range."""
        cuts = np.unique(np.concatenate([[self.gains[0]], self.crossing_gains, [self.gains[-1]]]))
        out: list[tuple[float, float]] = []
        for a, b in zip(cuts[:-1], cuts[1:], strict=True):
            inside = (self.gains > a) & (self.gains < b)
            if np.any(inside) and np.all(self.rhp_roots[inside] == 0):
                if out and out[-1][1] == a:
                    out[-1] = (out[-1][0], float(b))
                else:
                    out.append((float(a), float(b)))
        return out

    def to_xarray(self) -> Any:
        """The locus as an :class:`xarray.Dataset`.

        Returns
        -------
        xarray.Dataset
            ``roots`` (complex) along ``gain`` and ``branch``, ``rhp_roots`` along ``gain``,
            ``crossing_gain`` and ``crossing_frequency`` (rad/s) along ``crossing``, ``poles``
            and ``zeros``; the window's edge in the attribute ``re_min``.
        """
        import xarray as xr

        return xr.Dataset(
            {
                "roots": (("gain", "branch"), self.roots, {"units": "1/s"}),
                "rhp_roots": ("gain", self.rhp_roots),
                "crossing_gain": ("crossing", self.crossing_gains),
                "crossing_frequency": ("crossing", self.crossing_frequencies, {"units": "rad/s"}),
                "poles": ("pole", self.poles),
                "zeros": ("zero", self.zeros),
            },
            coords={"gain": self.gains, "branch": np.arange(self.roots.shape[1])},
            attrs={"re_min": self.re_min},
        )

    def plot(self, ax: Axes | None = None, **kwargs: Any) -> Axes:
        """The branches in the complex plane, with the open-loop poles (x), zeros (o) and the
        crossings of the imaginary axis (labelled with their gains).

        Parameters
        ----------
        ax : matplotlib.axes.Axes, optional
            Where to draw (default: a new figure).
        **kwargs
            Line properties of the branches.

        Returns
        -------
        matplotlib.axes.Axes
        """
        import matplotlib.pyplot as plt

        if ax is None:
            ax = plt.subplots()[1]
        kwargs.setdefault("color", "C0")
        kwargs.setdefault("lw", 1.2)
        for j in range(self.roots.shape[1]):
            r = self.roots[:, j]
            ax.plot(np.real(r), np.imag(r), **kwargs)
        ax.plot(np.real(self.poles), np.imag(self.poles), "x", color="k", ms=7, label="poles")
        if self.zeros.size:
            ax.plot(
                np.real(self.zeros), np.imag(self.zeros), "o", mfc="none", color="k", label="zeros"
            )
        for k, w in zip(self.crossing_gains, self.crossing_frequencies, strict=True):
            ax.plot([0.0, 0.0], [w, -w], "*", color="C3", ms=9)
            ax.annotate(f"k = {k:.4g}", (0.0, w), textcoords="offset points", xytext=(6, 4))
        ax.axvline(0.0, color="0.6", lw=0.8)
        ax.axhline(0.0, color="0.85", lw=0.8)
        ax.axvline(self.re_min, color="0.8", lw=0.6, ls=":")
        ax.set_xlabel(r"Re $\lambda$ (1/s)")
        ax.set_ylabel(r"Im $\lambda$ (rad/s)")
        ax.set_title(
            f"root locus of 1 + k L(s), k in [{self.gains[0]:.3g}, {self.gains[-1]:.3g}]",
            fontsize="small",
        )
        ax.legend(fontsize="small")
        return ax

    def __repr__(self) -> str:
        cross = ", ".join(
            f"k = {k:.6g} at {w:.6g} rad/s"
            for k, w in zip(self.crossing_gains, self.crossing_frequencies, strict=True)
        )
        stable = ", ".join(f"({a:.6g}, {b:.6g})" for a, b in self.stable_intervals) or "none"
        return (
            f"RootLocus({self.gains.size} gains in [{self.gains[0]:.6g}, {self.gains[-1]:.6g}], "
            f"{self.roots.shape[1]} branches right of Re = {self.re_min:.4g}; crossings: "
            f"{cross or 'none'}; stable for k in {stable})"
        )


# ----------------------------------------------------------------------------- the roots
def _normalized(qp: QuasiPolynomial) -> QuasiPolynomial:
    """``qp`` with its smallest delay removed (a factor ``e^{-s tau}`` has no root)."""
    return qp.shift(-qp.delays[0]) if qp.delays and qp.delays[0] > 0 else qp


def _window_roots(qp: QuasiPolynomial, re_min: float, what: str) -> np.ndarray:
    """The roots of ``qp`` with real part ``>= re_min``, repeated by multiplicity."""
    qp = _normalized(qp)
    if qp.is_rational:
        c = qp.coeffs[0]
        r = np.roots(c) if len(c) > 1 else np.zeros(0, dtype=complex)
        return np.sort_complex(r[np.real(r) >= re_min].astype(complex))
    lin = qp.companion()
    # the certificate counts roots right of a line; a root right on it defeats the count, so
    # the line is moved a little left when it does (the roots kept are still those >= re_min)
    for shift in (0.0, 0.013, 0.037, 0.071):
        # candidates far left overflow in the residual check before they are dropped
        with np.errstate(over="ignore", invalid="ignore"):
            roots = lin.roots(region=re_min - shift * max(1.0, abs(re_min)))
        if roots.certified is not False:
            break
    roots.require_certified(what)
    vals = np.array([r.value for r in roots for _ in range(r.multiplicity)], dtype=complex)
    return vals[np.real(vals) >= re_min]


def _check_retarded(L: DelayTF, lo: float, hi: float) -> None:
    """Refuse a range of gains where ``D + k N`` is not retarded (it then has infinitely many
    roots in a right half-plane, or loses roots to infinity)."""
    probes = {lo, hi, 0.5 * (lo + hi)}
    d0 = L.den.terms.get(0.0)
    n0 = L.num.terms.get(0.0)
    if d0 is not None and n0 is not None and len(n0) == len(d0) and n0[0] != 0:
        k_star = -float(np.real(d0[0] / n0[0]))
        if lo <= k_star <= hi:
            probes.add(k_star)
    for k in sorted(probes):
        F = _normalized(L.den + k * L.num)
        if not F.is_retarded:
            raise NeutralSystemError(
                f"at k = {k:.6g} the characteristic function D + k N is not retarded (its "
                "delay-free term does not carry the highest power of s): roots run to "
                "infinity there, and a root locus is drawn only for retarded loops (more poles "
                "than zeros in every delayed term); choose lo, hi without this gain"
            )


def _continued(L: DelayTF, vals: np.ndarray, k0: float, k1: float) -> tuple[np.ndarray, np.ndarray]:
    """Roots at ``k0`` moved to ``k1``: tangent predictor, Newton corrector. Returns the roots
    and whether Newton converged."""
    if vals.size == 0:
        return vals, np.zeros(0, dtype=bool)
    D, N = L.den, L.num
    dD, dN = D.derivative(), N.derivative()
    with np.errstate(all="ignore"):
        slope = -N(vals) / (dD(vals) + k0 * dN(vals))
    pred = vals + np.where(np.isfinite(slope), slope, 0.0) * (k1 - k0)

    def logderiv(lam: np.ndarray) -> np.ndarray:
        return (dD(lam) + k1 * dN(lam)) / (D(lam) + k1 * N(lam))

    real = _is_real(L)
    out, last = newton_roots(logderiv, pred, real)
    ok = np.isfinite(out) & (last <= 1e-8 * (1.0 + np.abs(out)))
    return out, ok


def _is_real(L: DelayTF) -> bool:
    return not any(np.iscomplexobj(c) for c in (*L.num.coeffs, *L.den.coeffs))


def _link(prev: np.ndarray, pred: np.ndarray, ok: np.ndarray, new: np.ndarray, re_min: float):
    """Assign continued roots to the roots computed at the next gain.

    Returns ``(pairs, good)``: ``pairs`` maps indices of ``prev`` to indices of ``new``;
    ``good`` is False when some root could not be followed (a step to halve).
    """
    from scipy.optimize import linear_sum_assignment

    if prev.size == 0 or new.size == 0:
        good = bool(np.all(np.real(new) < re_min + _edge(new, re_min)))
        return {}, good and bool(np.all(~ok | (np.real(pred) < re_min)))
    cost = np.abs(pred[:, None] - new[None, :])
    cost[~ok] = np.abs(prev[~ok, None] - new[None, :])  # not converged: by distance
    rows, cols = linear_sum_assignment(cost)
    tol = LINK_RTOL * (1.0 + np.abs(new[cols]))
    close = cost[rows, cols] <= tol
    pairs = {int(r): int(c) for r, c, g in zip(rows, cols, close, strict=True) if g}
    # every converged root that stays in the window must land on a computed root, and every
    # computed root away from the window's edge must come from a followed one
    lost = [i for i in range(prev.size) if ok[i] and np.real(pred[i]) >= re_min and i not in pairs]
    got = set(pairs.values())
    born = [
        j
        for j in range(new.size)
        if j not in got and np.real(new[j]) >= re_min + _edge(new, re_min)
    ]
    return pairs, not lost and not born and bool(np.all(ok | (np.real(prev) < re_min)))


def _edge(vals: np.ndarray, re_min: float) -> float:
    """How far right of the window's edge a root may enter without being followed there."""
    return 0.05 * max(1.0, abs(re_min))


def _default_window(L: DelayTF, lo: float, hi: float) -> float:
    """Left of the four rightmost roots at both ends of the range, by a tenth of their spread:
    the dominant roots, not deep into the chains of roots a delay adds (which crowd towards
    the left and make a window there expensive to certify)."""
    reals = []
    for k in (lo, hi):
        F = _normalized(L.den + k * L.num)
        if F.is_rational:
            c = F.coeffs[0]
            reals += list(np.real(np.roots(c))) if len(c) > 1 else []
        else:
            reals += list(np.real(F.companion().roots(k=4).values))
    if not reals:
        return -1.0
    lo_re, hi_re = min(reals), max(reals)
    span = max(hi_re - lo_re, 0.1 * max(abs(lo_re), abs(hi_re)), 1e-3)
    return float(lo_re - 0.1 * span)


def _crossings(L: DelayTF, lo: float, hi: float) -> tuple[np.ndarray, np.ndarray]:
    """Exact gains in ``[lo, hi]`` at which a root is on the imaginary axis."""
    m = margins(L)
    freqs = np.asarray(m.phase_crossovers, dtype=float)
    with np.errstate(all="ignore"):
        gains = -1.0 / np.real(L.freqresp(freqs)) if freqs.size else np.zeros(0)
    keep = np.isfinite(gains) & (gains >= lo) & (gains <= hi) & (gains > 0)
    order = np.argsort(gains[keep])
    return gains[keep][order], freqs[keep][order]


def root_locus(
    L: Any,
    lo: float = 0.0,
    hi: float | None = None,
    *,
    gains: ArrayLike | None = None,
    re_min: float | None = None,
    n_points: int = 100,
) -> RootLocus:
    """The root locus of the loop ``L`` with exact delays: the roots of ``1 + k L(s) = 0`` for
    gains ``k`` from ``lo`` to ``hi``, followed in ``k``.

    ``k = 1`` is the loop as given: its roots are the closed loop's. Each root is certified
    complete in the window ``Re s >= re_min`` at every gain, and branches are linked by
    continuation (see :mod:`fluidnet.stability.rootlocus`). The gains at which a branch crosses
    the imaginary axis are computed exactly from the frequency response.

    Parameters
    ----------
    L : DelayTF, control.TransferFunction or sympy expression
        The loop; ``D + k N`` must be retarded for every gain of the range.
    lo, hi : float
        The range of gains; ``hi`` defaults to three times the smallest crossing gain (the
        gain margin), or 10 when no root crosses.
    gains : array_like, optional
        The gains to compute, instead of ``n_points`` gains from ``lo`` to ``hi`` (python-control's
        ``gains=``); the crossing gains in their range, and 1, are added.
    re_min : float, optional
        The window's left edge (1/s). Default: left of the four rightmost roots at ``lo`` and
        ``hi`` by a tenth of their spread.
    n_points : int, default 100
        Number of gains on the default grid (more are added where the roots move fast).

    Returns
    -------
    RootLocus
        ``gains``, ``roots`` (one column per branch), ``rhp_roots``, the crossing gains and
        frequencies, ``stable_intervals``; ``.plot()`` and ``.to_xarray()``.

    Raises
    ------
    NeutralSystemError
        When ``D + k N`` is neutral at some gain of the range (e.g. a loop with as many zeros as
        poles in a delayed term).
    OptionError
        For ``lo >= hi``, a negative ``lo``, or ``gains`` together with ``lo``/``hi``.
    AnalysisError
        When the roots at some gain are not certified complete.

    See Also
    --------
    fluidnet.margins : the gain margin is the smallest crossing gain.
    fluidnet.nyquist : the encirclement count that the root count agrees with.
    fluidnet.LinearDDE.roots : the root finder used at each gain.

    Examples
    --------
    RCP's loop (Dukkipati & McKeown eq (9)) loses stability when its gain grows by the gain
    margin:

    >>> import fluidnet as fn
    >>> L = fn.models.rcp().loop_gain("R")
    >>> rl = fn.root_locus(L, 0.0, 4.0, n_points=40)
    >>> gm = fn.margins(L).gain_margin
    >>> bool(abs(rl.crossing_gains[0] - gm) < 1e-9 * gm), rl.stable_intervals[0][0]
    (True, 0.0)
    """
    L = as_loop(L)
    if gains is not None:
        if lo != 0.0 or hi is not None:
            raise OptionError("give either gains= or the range lo, hi, not both")
        grid = np.unique(np.asarray(gains, dtype=float).reshape(-1))
        if grid.size < 2 or not np.all(np.isfinite(grid)) or grid[0] < 0:
            raise OptionError("gains must hold at least two finite gains >= 0")
        lo, hi = float(grid[0]), float(grid[-1])
    else:
        lo = number_option("lo", lo, where="root_locus")
        if lo < 0:
            raise OptionError(f"lo = {lo!r}: the gains of a root locus are >= 0")
        if hi is None:
            gm = margins(L).gain_margin
            hi = 3.0 * gm if math.isfinite(gm) and gm > 0 else 10.0
            hi = max(hi, lo + 1.0)
        hi = number_option("hi", hi, where="root_locus")
        if not hi > lo:
            raise OptionError(f"need lo < hi, got lo = {lo!r}, hi = {hi!r}")
        if isinstance(n_points, bool) or not isinstance(n_points, (int, np.integer)):
            raise OptionError(f"n_points must be an integer >= 2, got {n_points!r}")
        if n_points < 2:
            raise OptionError(f"n_points must be an integer >= 2, got {n_points!r}")
        grid = np.linspace(lo, hi, int(n_points))
    _check_retarded(L, lo, hi)
    if re_min is None:
        re_min = _default_window(L, lo, hi)
    re_min = number_option("re_min", re_min, where="root_locus")
    kc, wc = _crossings(L, lo, hi)
    given = [1.0] if lo <= 1.0 <= hi else []  # the loop as given: the closed loop's roots
    grid = np.unique(np.concatenate([grid, kc, given]))

    def at(k: float) -> tuple[float, np.ndarray]:
        # the root finder can miss a double root (where two real roots meet): the certificate
        # then fails, and a gain a little off is used instead
        tried = []
        for offset in (0.0, 1e-6, -1e-6, 1e-4, -1e-4):
            kk = min(max(k + offset * (hi - lo), lo), hi)
            try:
                return kk, _window_roots(L.den + kk * L.num, re_min, "")
            except AnalysisError as exc:
                tried.append(f"k = {kk:.10g}: {exc}")
        raise AnalysisError(
            f"root_locus: the roots of 1 + k L right of Re = {re_min:.6g} are not certified "
            f"complete near k = {k:.6g} ({'; '.join(tried[:2])}); give a different re_min"
        )

    k_first, first = at(float(grid[0]))
    gains_out = [k_first]
    sets = [first]
    branches: list[dict[int, complex]] = [{0: complex(v)} for v in sets[0]]
    current = list(range(len(sets[0])))  # branch of each root of the last set
    pending = list(grid[1:])
    halvings = 0
    while pending:
        k0 = gains_out[-1]
        k1, new = at(float(pending[0]))
        if k1 <= k0:  # moved onto the last gain: nothing new there
            pending.pop(0)
            continue
        prev = sets[-1]
        pred, ok = _continued(L, prev, k0, k1)
        pairs, good = _link(prev, pred, ok, new, re_min)
        if not good and halvings < MAX_HALVINGS:
            pending.insert(0, 0.5 * (k0 + k1))
            halvings += 1
            continue
        if not good:  # linked by distance (roots meeting on the real axis, say)
            pairs = _by_distance(prev, new)
        halvings = 0
        pending.pop(0)
        j = len(gains_out)
        gains_out.append(k1)
        sets.append(new)
        nxt = []
        for idx, v in enumerate(new):
            src = [i for i, c in pairs.items() if c == idx]
            if src:
                b = current[src[0]]
            else:
                branches.append({})
                b = len(branches) - 1
            branches[b][j] = complex(v)
            nxt.append(b)
        current = nxt
    K = len(gains_out)
    roots = np.full((K, len(branches)), np.nan + 1j * np.nan, dtype=complex)
    for b, pts in enumerate(branches):
        for j, v in pts.items():
            roots[j, b] = v
    rhp = np.array([int(np.sum(np.real(s) > 0)) for s in sets], dtype=int)
    poles = _window_roots(L.den, re_min, "the open-loop poles")
    try:
        zeros = _window_roots(L.num, re_min, "the open-loop zeros") if not L.num.is_zero else None
    except (AnalysisError, ValueError):  # a numerator that is not retarded: no zeros shown
        zeros = None
    return RootLocus(
        gains=np.asarray(gains_out),
        roots=roots,
        rhp_roots=rhp,
        crossing_gains=kc,
        crossing_frequencies=wc,
        re_min=float(re_min),
        poles=poles,
        zeros=np.zeros(0, dtype=complex) if zeros is None else zeros,
        L=L,
    )


def _by_distance(prev: np.ndarray, new: np.ndarray) -> dict[int, int]:
    from scipy.optimize import linear_sum_assignment

    if prev.size == 0 or new.size == 0:
        return {}
    rows, cols = linear_sum_assignment(np.abs(prev[:, None] - new[None, :]))
    return {int(r): int(c) for r, c in zip(rows, cols, strict=True)}
