"""Characteristic roots of large systems: rectangles counted by the argument principle.

A system whose dense discretization would have more than :data:`DENSE_LIMIT` rows (a
200-state network needs ``n (N + 1) = 40 000`` rows, a dense eigenvalue problem of hours) is
solved without any discretization, from ``det Delta`` alone, evaluated through its sparse
factorization (:class:`~fluidnet.linear.sparse.SparseSystem`, about a millisecond for 200
states):

1. **Where the roots are.** Every root is an eigenvalue of ``A0 + sum_k A_k e^{-lambda
   tau_k}``, so ``Re lambda <= mu(A0) + sum_k ||A_k|| e^{-Re lambda tau_k}`` (``mu`` the
   logarithmic norm): no real part exceeds ``r*``, the root of
   ``r = mu(A0) + sum_k ||A_k|| e^{-r tau_k}``; and the roots with ``Re lambda >= sigma`` have
   ``|Im lambda|`` at most the bound ``Y(sigma)`` of :func:`~fluidnet.linear.roots._im_bound`.
2. **Counting.** The rectangle ``[sigma, r*] x [-Y(sigma), Y(sigma)]`` therefore holds every
   root right of ``sigma``; the argument principle on its boundary
   (:func:`~fluidnet.linear.contour.count_in_rectangle`) counts them, and gives their power
   sums.
3. **Locating.** A rectangle with at most :data:`MAX_LOCATED` roots gets them from the power
   sums (Newton's identities), refined by Newton's method on ``det Delta`` and verified by
   their inclusion discs (:mod:`~fluidnet.linear.inclusion`); when the verified roots inside do
   not account for the count, or there are more, the rectangle is halved and each half counted.
4. **Widening.** Without a region, ``sigma`` starts ``1 / tau_max`` left of ``r*`` and moves
   left (the width doubling) until ``k`` roots are found.

The result is certified on the line ``Re s = sigma`` of the last rectangle: every root right
of it has been counted and located. A rectangle whose boundary cannot be resolved (a root on
it, or more than :data:`MAX_SAMPLES` evaluations in all) makes the result not certified.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from ..threads import single_threaded_blas
from .contour import RectangleCount, count_in_rectangle, zeros_from_power_sums
from .sparse import SparseSystem

if TYPE_CHECKING:
    from .lineardde import LinearDDE
    from .roots import Roots

__all__ = ["DENSE_LIMIT", "LARGE_STATES", "abscissa_bound", "large_roots"]

#: Largest dense discretization (rows) solved by the dense eigenvalue problem.
DENSE_LIMIT = 1000
#: Fewest states for which the rectangle method is used (smaller systems stay dense).
LARGE_STATES = 12
#: Most evaluations of det Delta for one system.
MAX_SAMPLES = 60000
#: Most roots located at once from the power sums of a rectangle.
MAX_LOCATED = 4
#: Deepest halving of a rectangle.
MAX_DEPTH = 24
#: How far left of r* (in units of 1 / tau_max) the search for k roots goes.
MAX_WIDTH = 64.0


def abscissa_bound(system: SparseSystem, A0: np.ndarray) -> float:
    """``r*``: no root has a real part above it (see the module docstring)."""
    from scipy.optimize import brentq

    mu = float(np.max(np.linalg.eigvalsh(0.5 * (A0 + A0.conj().T))))
    _, nk = system.matrix_norms()
    tau = system.tau

    def excess(r):
        with np.errstate(over="ignore"):
            return mu + float(np.sum(nk * np.exp(-r * tau))) - r

    if excess(mu) <= 0:
        return mu
    hi = mu + float(np.sum(nk)) + 1.0  # the delayed terms are below sum(nk) right of 0
    while excess(hi) > 0:
        hi = 2.0 * hi + 1.0
    return float(brentq(excess, mu, hi, xtol=1e-9 * (1.0 + abs(hi))))


def _newton(system: SparseSystem, lam: np.ndarray, real: bool, maxiter: int = 40):
    """Newton on ``det Delta`` (as :func:`fluidnet.linear.roots._newton`)."""
    lam = np.array(lam, dtype=complex)
    last = np.full(lam.shape, np.inf)
    active = np.ones(lam.shape, dtype=bool)
    for _ in range(maxiter):
        idx = np.flatnonzero(active)
        if idx.size == 0:
            break
        with np.errstate(all="ignore"):
            step = 1.0 / system.logderiv(lam[idx])
        step[~np.isfinite(step)] = 0.0
        if real:
            on_axis = lam[idx].imag == 0.0
            step[on_axis] = step[on_axis].real
        lam[idx] -= step
        size = np.abs(step)
        scale = 1.0 + np.abs(lam[idx])
        done = size <= 1e-11 * scale
        done |= (size >= 0.9 * last[idx]) & (size <= 1e-8 * scale)
        done |= ~np.isfinite(lam[idx])
        last[idx] = size
        active[idx[done]] = False
    return lam, last


class _Locator:
    """Counts and locates the roots of one system in rectangles (see the module docstring)."""

    def __init__(self, lin: LinearDDE, system: SparseSystem, norms):
        from .roots import _is_real

        self.lin, self.system, self.norms = lin, system, norms
        self.real = _is_real(lin)
        self.spacing = 0.5 / lin.max_delay
        self.used = 0
        self.reason = ""
        # det Delta(s) / (s - c)^n, c the mean eigenvalue of A0: far from the roots det Delta
        # turns like (s - c)^n, which for a large n would need many samples; the quotient
        # turns slowly, and its n-fold pole at c is added back when c is inside
        self.center = complex(np.trace(lin.A0)) / lin.n
        if self.real:
            self.center = complex(self.center.real, 0.0)

    def _evaluate(self, s):
        f, g = self.system.det_logderiv_fast(s)
        w = s - self.center
        with np.errstate(all="ignore"):
            f = f * np.exp(-1j * self.lin.n * np.angle(w))
            g = g - self.lin.n / w
        return f, g

    def count(self, lo, hi, y0, y1, symmetric, powers):
        budget = MAX_SAMPLES - self.used
        rc = count_in_rectangle(
            self._evaluate,
            lo,
            hi,
            y0,
            y1,
            symmetric=symmetric,
            powers=powers,
            spacing=self.spacing,
            max_samples=max(budget, 0),
        )
        self.used += rc.samples
        c = self.center
        inside = lo < c.real < hi and (
            (symmetric and abs(c.imag) < y1) or (not symmetric and y0 < c.imag < y1)
        )
        if rc.count is not None and inside:
            n = self.lin.n
            p = np.arange(1, powers + 1)
            rc = RectangleCount(rc.count + n, rc.power_sums + n * c**p, rc.samples)
        if rc.count is not None and rc.count < 0:
            return RectangleCount(None, rc.power_sums, rc.samples)
        return rc

    def locate(self, lo, hi, y0, y1, symmetric, depth=0):
        """The roots in ``[lo, hi] x [y0, y1]`` (for a real system's symmetric rectangle, the
        upper half's), verified, as ``(values, residuals, multiplicities, errors)``; None when
        they cannot be counted."""
        from .roots import RESIDUAL_TOL, _verified

        rc = self.count(lo, hi, y0, y1, symmetric, MAX_LOCATED)
        if rc.count is None:
            self.reason = (
                f"the boundary of [{lo:.6g}, {hi:.6g}] x [{y0:.6g}, {y1:.6g}] was not resolved "
                f"({'a root on it, or ' if self.used < MAX_SAMPLES else ''}"
                f"{self.used} evaluations of det Delta)"
            )
            return None
        empty = (np.zeros(0, dtype=complex), np.zeros(0), np.zeros(0, dtype=int), np.zeros(0))
        if rc.count == 0:
            return empty
        if rc.count <= MAX_LOCATED:
            z = zeros_from_power_sums(rc.power_sums, rc.count)
            if symmetric:
                z = np.where(z.imag < 0, z.conj(), z)
            if self.real:
                near = np.abs(z.imag) <= 1e-6 * (1.0 + np.abs(z))
                z = np.where(near, z.real + 0j, z)
            lam, _ = _newton(self.system, z, self.real)
            lam = lam[np.isfinite(lam)]
            res = self.system.residual(lam, self.norms) if lam.size else np.zeros(0)
            lam, res = lam[res <= RESIDUAL_TOL], res[res <= RESIDUAL_TOL]
            if self.real:
                lam = np.where(lam.imag < 0, lam.conj(), lam)
            keep = _distinct(lam)
            lam, res = lam[keep], res[keep]
            inside = (lam.real > lo) & (lam.real < hi) & (lam.imag < y1)
            inside &= lam.imag >= 0 if symmetric else lam.imag > y0
            if inside.any():
                vals, rr, mult, err = _verified(
                    self.lin, lam[inside], res[inside], self.norms, self.system
                )
                weight = np.where(symmetric & (vals.imag != 0), 2, 1) * mult
                ok = (vals.real > lo) & (vals.real < hi) & (np.abs(vals.imag) < max(abs(y0), y1))
                if ok.all() and int(weight.sum()) == rc.count:
                    return vals, rr, mult, err
        if depth >= MAX_DEPTH:
            self.reason = (
                f"{rc.count} roots in [{lo:.6g}, {hi:.6g}] x [{y0:.6g}, {y1:.6g}] not located"
            )
            return None
        parts = self._halves(lo, hi, y0, y1, symmetric)
        out = []
        for part in parts:
            got = self.locate(*part, depth=depth + 1)
            if got is None:
                return None
            out.append(got)
        return tuple(np.concatenate(col) for col in zip(*out, strict=True))

    @staticmethod
    def _halves(lo, hi, y0, y1, symmetric):
        """Two rectangles covering this one; the cut is off-centre (a root of a real system
        often lies on the centre line of a symmetric range)."""
        if symmetric:
            if y1 > hi - lo:
                ys = 0.4617 * y1
                return [(lo, hi, -ys, ys, True), (lo, hi, ys, y1, False)]
            xs = lo + 0.5383 * (hi - lo)
            return [(lo, xs, y0, y1, True), (xs, hi, y0, y1, True)]
        if y1 - y0 > hi - lo:
            ys = y0 + 0.5383 * (y1 - y0)
            return [(lo, hi, y0, ys, False), (lo, hi, ys, y1, False)]
        xs = lo + 0.5383 * (hi - lo)
        return [(lo, xs, y0, y1, False), (xs, hi, y0, y1, False)]


def _distinct(lam: np.ndarray) -> np.ndarray:
    """Indices of the values that are not within 1e-6 (relative) of an earlier one."""
    keep = []
    for i, v in enumerate(lam):
        if all(abs(v - lam[j]) > 1e-6 * (1.0 + abs(v)) for j in keep):
            keep.append(i)
    return np.array(keep, dtype=int)


def large_roots(lin: LinearDDE, k: int, box, *, system: SparseSystem | None = None) -> Roots:
    """The roots :func:`~fluidnet.linear.roots.characteristic_roots` returns, for a large
    system (see the module docstring; ``lin`` is balanced, and the options of the
    discretization do not apply). ``system`` is ``lin`` as a :class:`SparseSystem`, when
    already built."""
    with single_threaded_blas():
        return _large_roots(lin, k, box, system or SparseSystem.from_lineardde(lin))


def _large_roots(lin: LinearDDE, k: int, box, system: SparseSystem) -> Roots:
    from .roots import (
        CharacteristicRoot,
        Roots,
        _a0_spectrum,
        _im_bound,
        _select,
        _zero_root_exists,
    )

    norms = system.matrix_norms()
    spectrum = _a0_spectrum(lin)

    def im_bound(sigma: float) -> float:
        return _im_bound(lin, sigma, norms, spectrum)

    r_star = abscissa_bound(system, lin.A0)
    tau = lin.max_delay
    loc = _Locator(lin, system, norms)
    hi = r_star + 0.05 / tau
    found = None
    line = math.nan
    if box is None:
        width = 1.0 / tau
        while True:
            lo = hi - width
            got = _rectangle(loc, lin, lo, hi, im_bound(lo))
            if got is None:
                found = None  # the roots right of lo are not all known
                break
            found, line = got, lo
            total = int(got[2].sum())
            if total >= k or width >= MAX_WIDTH / tau or loc.used >= MAX_SAMPLES:
                break
            width *= 2.0
    else:
        lo = box[0] - 0.02 / tau  # roots on the line Re = box[0] are inside
        top = max(abs(box[2]), abs(box[3]))
        Y = min(top, im_bound(lo))
        hi = min(hi, box[1] + 0.02 / tau)
        if hi <= lo:
            found, line = _rectangle_empty(), lo
        else:
            got = _rectangle(loc, lin, lo, hi, Y)
            if got is not None:
                found, line = got, lo
    certified = found is not None
    if found is None:
        found = _rectangle_empty()
    vals, res, mult, err = found
    if vals.size and _zero_root_exists(lin, norms):
        i = int(np.argmin(np.abs(vals)))
        if abs(vals[i]) <= 1e-6 * max(1.0 / tau, norms[0] + float(np.sum(norms[1]))):
            err = err.copy()
            err[i] += abs(vals[i])
            vals = vals.copy()
            vals[i] = 0.0
    roots = [
        CharacteristicRoot(value=complex(v), residual=float(r), multiplicity=int(m), error=float(e))
        for v, r, m, e in zip(vals, res, mult, err, strict=True)
    ]
    roots.sort(key=lambda r: (-r.real, -r.imag))
    if box is not None and (
        math.isfinite(box[1]) or math.isfinite(box[2]) or math.isfinite(box[3])
    ):
        cert: bool | None = None
    else:
        cert = certified
    out = Roots(roots, 0, cert, line if certified else math.nan, reason=loc.reason)
    return _select(out, k, box)


def _rectangle_empty():
    return (np.zeros(0, dtype=complex), np.zeros(0), np.zeros(0, dtype=int), np.zeros(0))


def _rectangle(loc: _Locator, lin: LinearDDE, lo: float, hi: float, Y: float):
    """Every root in ``[lo, hi] x [-Y, Y]`` (both halves for a real system), or None."""
    Y = Y * (1.0 + 1e-6) + 1e-6 / lin.max_delay  # strictly above every root
    if loc.real:
        got = loc.locate(lo, hi, -Y, Y, True)
        if got is None:
            return None
        vals, res, mult, err = got
        pair = vals.imag > 0
        return (
            np.concatenate([vals, vals[pair].conj()]),
            np.concatenate([res, res[pair]]),
            np.concatenate([mult, mult[pair]]),
            np.concatenate([err, err[pair]]),
        )
    return loc.locate(lo, hi, -Y, Y, False)
