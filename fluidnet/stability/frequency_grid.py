"""Frequency grids for loop transfer functions with exact delays, and their crossovers.

The shared layer of :mod:`~fluidnet.stability.bode`, :mod:`~fluidnet.stability.nyquist` and
:mod:`~fluidnet.stability.margins`: rigorous high-frequency bounds of ``|L|``, an adaptive grid
that resolves phase and magnitude, gain and phase crossovers located to machine precision, and
the continuously unwrapped phase.

Conventions (all three modules)
-------------------------------
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

import numpy as np

from ..errors import AnalysisError
from ..linear.delaytf import DelayTF, as_delay_tf
from ..linear.quasipoly import QuasiPolynomial
from ..options import range_option

__all__ = [
    "as_loop",
    "check_supported",
    "continuous_phase",
    "frequency_grid",
    "gain_crossovers",
    "max_delay",
    "phase_crossovers",
    "refine_grid",
    "tail_radius",
    "unwrapped_phase",
]


def as_loop(L) -> DelayTF:
    """``L`` as a :class:`~fluidnet.DelayTF`, or an :class:`AnalysisError` saying why not."""
    try:
        return as_delay_tf(L)
    except (TypeError, ValueError) as exc:
        raise AnalysisError(f"cannot use {L!r} as a loop transfer function: {exc}") from exc


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


def check_supported(L: DelayTF) -> None:
    """Refuse a neutral loop (a denominator whose delayed terms carry the highest power)."""
    if not (L.den.is_rational or L.den.is_retarded):
        raise AnalysisError(
            "the denominator of L is not retarded (its delay-free term must carry the highest "
            f"power of s): {L.den!r}; neutral loops are not supported"
        )


def tail_radius(L: DelayTF, level: float) -> float:
    """A radius beyond which ``|L(s)| < level`` on the closed right half-plane (rigorous bound)."""
    check_supported(L)
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
            hi = max(hi, 2.0 * tail_radius(L, level))
        except AnalysisError:
            pass
        lo = min(lo, hi / 1e4)
    else:
        lo, hi = range_option("w_range", w_range, positive=True)
    w = np.logspace(math.log10(lo), math.log10(hi), int(40 * math.log10(hi / lo)) + 2)
    w = refine_grid(lambda x: L(1j * x), w, max_points=200_000)
    cross = np.concatenate([gain_crossovers(L, w), phase_crossovers(L, w)])
    return np.unique(np.concatenate([w, cross]))


def refine_grid(f, w: np.ndarray, *, dphase: float = 0.15, dmag: float = 0.15, max_points: int):
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


def _bracketed_root(g, a: float, b: float) -> float:
    fa, fb = float(g(a)), float(g(b))
    if fa == 0.0 or fb == 0.0 or fa * fb > 0:  # rounding at an inserted crossover
        return a if abs(fa) <= abs(fb) else b
    from ..brent import brentq  # scipy: imported when a crossover is refined

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


def gain_crossovers(L: DelayTF, w: np.ndarray) -> np.ndarray:
    """Frequencies where ``|L(jw)| = 1``, bracketed on ``w`` and located by Brent's method."""

    def g(x):
        with np.errstate(all="ignore"):
            return np.log(np.abs(L(1j * np.asarray(x))))

    return _roots_of(g, w)


def phase_crossovers(L: DelayTF, w: np.ndarray) -> np.ndarray:
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


def max_delay(L: DelayTF) -> float:
    """The largest delay of ``L`` (0 for a rational ``L``)."""
    return max(L.delays, default=0.0)


def _asymptote_phase(L: DelayTF) -> float | None:
    """The phase ``arg(K) + m pi / 2`` of the low-frequency asymptote ``L(s) ~ K s^m`` (from the
    first non-zero Taylor coefficients of numerator and denominator at ``s = 0``), or ``None``
    when a Taylor expansion is zero to the order examined."""
    jn, kn = _order_at_zero(L.num)
    jd, kd = _order_at_zero(L.den)
    if kn == 0 or kd == 0:
        return None
    return float(np.angle(kn / kd)) + (jn - jd) * np.pi / 2


def unwrapped_phase(L: DelayTF, w: np.ndarray, resp: np.ndarray) -> np.ndarray:
    """The phase of ``resp = L(jw)``, unwrapped from the branch of the low-frequency asymptote
    nearest ``resp[0]``: right only when ``w[0]`` is low enough for the asymptote to hold there
    (see :func:`continuous_phase` for any frequencies)."""
    start = _asymptote_phase(L)
    if start is None:
        start = float(np.angle(resp[0]))
    else:
        start += float(np.angle(resp[0] * np.exp(-1j * start)))
    with np.errstate(all="ignore"):
        inc = np.angle(resp[1:] / resp[:-1])
    inc = np.where(np.isfinite(inc), inc, 0.0)
    return start + np.concatenate([[0.0], np.cumsum(inc)])


#: Largest distance (rad) of the phase from its low-frequency asymptote where unwrapping starts.
ANCHOR_TOL = 0.05
#: Largest turn (rad) of the fastest delay term between neighbouring points of the phase grid.
DELAY_STEP = 0.5
#: Largest number of points of the grid the phase is followed on.
MAX_PHASE_POINTS = 4_000_000


def continuous_phase(L: DelayTF, w: np.ndarray) -> np.ndarray:
    """The continuous phase of ``L(jw)`` (rad) at the ascending, non-negative frequencies ``w``,
    whatever frequency ``w`` starts at.

    The phase is followed from an *anchor* frequency below ``w[0]`` and every characteristic
    frequency of ``L``, where it lies within ``ANCHOR_TOL`` of the asymptote ``arg(K) + m pi/2``
    of ``L(s) ~ K s^m`` at ``s -> 0`` (the anchor is lowered by decades until it does), up to
    ``w[-1]``: on a grid with steps that turn the fastest delay term ``e^{-s tau}`` by at most
    ``DELAY_STEP`` rad and twenty points per decade, refined until neighbouring values of ``L``
    turn by less than 0.15 rad (:func:`refine_grid`). The phase at ``w = 0`` is the asymptote's.

    Raises
    ------
    AnalysisError
        When no anchor is found (``L`` does not approach its asymptote down to 1e-30 of the
        first frequency) or the phase would need more than ``MAX_PHASE_POINTS`` points (a
        delay turning by millions of radians up to ``w[-1]``).
    """
    w = np.asarray(w, dtype=float)
    out = np.empty(w.shape)
    start = _asymptote_phase(L)
    pos = w > 0
    if start is None:  # no asymptote to start from: unwrap from the first frequency given
        with np.errstate(all="ignore"):
            resp = L(1j * w)
        return unwrapped_phase(L, w, resp)
    out[~pos] = start
    if not pos.any():
        return out
    wp = w[pos]
    char = _characteristic_frequencies(L)
    low = min(float(wp[0]), float(char.min()) / 100 if char.size else 1e-2)
    for _ in range(30):
        with np.errstate(all="ignore"):
            v = complex(L(1j * np.array([low]))[0])
        if np.isfinite(v) and v != 0 and abs(np.angle(v * np.exp(-1j * start))) <= ANCHOR_TOL:
            break
        low /= 10.0
    else:
        raise AnalysisError(
            f"the phase of L(jw) does not approach its low-frequency asymptote {start:.6g} rad "
            f"down to w = {10 * low:.3g} rad/s: no frequency to unwrap it from"
        )
    tau = sum((max(map(abs, qp.delays), default=0.0) for qp in (L.num, L.den)), 0.0)
    top = float(wp[-1])
    n_lin = int(math.ceil(top * tau / DELAY_STEP)) + 1 if tau > 0 else 0
    n_log = int(20 * math.log10(top / low)) + 2
    if n_lin + n_log + wp.size > MAX_PHASE_POINTS:
        raise AnalysisError(
            f"the phase of L(jw) up to w = {top:.6g} rad/s turns by about {top * tau:.3g} rad "
            f"(delays {tau:g} s): more than {MAX_PHASE_POINTS} points would be needed to follow "
            "it; ask for lower frequencies"
        )
    grid = np.unique(
        np.concatenate([np.geomspace(low, top, n_log), np.linspace(low, top, max(n_lin, 2)), wp])
    )
    fine = refine_grid(lambda x: L(1j * x), grid, max_points=grid.size + 200_000)
    with np.errstate(all="ignore"):
        phase = unwrapped_phase(L, fine, L(1j * fine))
    out[pos] = phase[np.searchsorted(fine, wp)]
    return out
