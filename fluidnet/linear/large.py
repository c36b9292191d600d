"""Characteristic roots of large systems: boxes counted by the argument principle.

A system whose dense discretization would have more than :data:`DENSE_LIMIT` rows (a
200-state network needs ``n (N + 1) = 40 000`` rows, a dense eigenvalue problem of hours) is
solved without any discretization, from ``det Delta`` alone, evaluated through one LU
factorization per point (:class:`~fluidnet.linear.sparse.SparseSystem`, about a millisecond
for 200 states):

1. **Where the roots are.** Every root is an eigenvalue of ``A0 + sum_k A_k e^{-lambda
   tau_k}``, so ``Re lambda <= mu(A0) + sum_k ||A_k|| e^{-Re lambda tau_k}`` (``mu`` the
   logarithmic norm): no real part exceeds ``r*``, the root of
   ``r = mu(A0) + sum_k ||A_k|| e^{-r tau_k}``; and the roots with ``Re lambda >= sigma`` have
   ``|Im lambda|`` at most the bound ``Y(sigma)`` of :func:`~fluidnet.linear.rootcheck.imag_bound`.
2. **Counting.** The box ``[sigma, r*] x [-Y(sigma), Y(sigma)]`` therefore holds every root
   right of ``sigma``; the argument principle on its boundary
   (:func:`~fluidnet.linear.contour.count_in_rectangle`) counts them and gives their power
   sums. ``det Delta`` is divided first by a polynomial whose zeros are the roots already
   located, the means of the boxes still to be resolved (with their counts as orders) and
   ``c = trace(A0) / n`` for the rest of the ``n`` turns of ``det Delta ~ s^n``: the quotient
   turns slowly away from the unresolved roots, so a contour needs few samples (a 200-state
   network's box costs tens, not thousands), and the poles it has inside a box are added back
   to its count. A box's mean is a pole only where it lies farther from the contour than
   twice the reach of its box (the distance from the mean to the box's farthest corner):
   closer, the box's roots may lie on both sides of the contour, and the pole's field cancel
   theirs at the samples, which then miss a turn of the argument.
3. **Locating, rightmost first.** The unresolved box reaching farthest right is taken next. A
   box with at most :data:`MAX_LOCATED` roots gets them from its power sums (Newton's
   identities), refined by Newton's method on ``det Delta`` (run again on ``det Delta``
   divided by the roots found, where those account for fewer than its count) and verified by
   their inclusion discs (:mod:`~fluidnet.linear.inclusion`). Failing that, a box of at most
   :data:`MAX_ON_CIRCLE` roots gets them so from the power sums on a circle around it
   (:meth:`_Locator.circle_sums`: the trapezoidal rule converges geometrically there, and
   not on the box's own edges when a root lies close to one; the circle may hold roots of a
   neighbouring box too). Otherwise, or when the verified roots do not account for its
   count, it is halved and both halves are counted (their counts must add up). A box still
   unresolved, smaller than :data:`CLUSTER_RTOL` of its modulus, is reported as one entry:
   the mean of its roots (from the power sums on a circle that holds exactly them, else its
   own), their count as multiplicity and its diameter as error (a network of 199 almost
   equal flows has 198 roots within 2e-3 of -0.030; the 30-flow ring with five delays has 8
   roots within 6e-5, located one by one). With ``k``, the search stops once ``k`` roots lie
   right of every unresolved box.
4. **Widening.** Without a region, ``sigma`` starts ``1 / tau_max`` left of ``r*`` and moves
   left (the width doubling) until ``k`` roots are found.

The result is certified on the line right of which every root has been counted and located
(the right edge of the rightmost unresolved box, or ``sigma``). A box whose boundary cannot be
resolved (a root on it, or more than :data:`MAX_SAMPLES` evaluations in all), or whose halves'
counts disagree, makes the result not certified, and its ``reason`` says which.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from ..brent import brentq
from ..threads import single_threaded_blas
from .contour import count_in_rectangle, zeros_from_power_sums
from .newton import newton_roots
from .rootcheck import (
    RESIDUAL_TOL,
    a0_spectrum,
    imag_bound,
    is_real_system,
    verified_roots,
    zero_root_exists,
)
from .rootset import CharacteristicRoot, Roots, select_roots
from .sparse import SparseSystem

if TYPE_CHECKING:
    from .lineardde import LinearDDE

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
MAX_DEPTH = 64
#: How far left of r* (in units of 1 / tau_max) the search for k roots goes.
MAX_WIDTH = 64.0
#: A box whose roots are not located, smaller than this (relative to its modulus, at least
#: 1 / max(tau_max, 1)), is reported as one entry: their mean, their count as multiplicity,
#: the box's diameter as error.
CLUSTER_RTOL = 1e-3
#: Most roots of a box located one by one from the power sums on a circle around it (before
#: it is halved, or reported as one entry).
MAX_ON_CIRCLE = 12


def abscissa_bound(system: SparseSystem, A0: np.ndarray) -> float:
    """``r*``: no root has a real part above it (see the module docstring)."""
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
    return brentq(excess, mu, hi, xtol=1e-9 * (1.0 + abs(hi)))


def _distinct(lam: np.ndarray) -> np.ndarray:
    """Indices of the values that are not within 1e-9 (relative) of an earlier one."""
    keep: list[int] = []
    for i, v in enumerate(lam):
        if all(abs(v - lam[j]) > 1e-9 * (1.0 + abs(v)) for j in keep):
            keep.append(i)
    return np.array(keep, dtype=int)


@dataclass
class _Box:
    """A rectangle ``[lo, hi] x [y0, y1]`` (for a real system's symmetric box, ``[lo, hi] x
    [-y1, y1]``) holding ``count`` roots not yet located, with their power sums."""

    lo: float
    hi: float
    y0: float
    y1: float
    symmetric: bool
    count: int = 0
    sums: np.ndarray = field(default_factory=lambda: np.zeros(MAX_LOCATED, dtype=complex))
    depth: int = 0

    @property
    def centroid(self) -> complex:
        c = self.sums[0] / self.count if self.count else complex(0.5 * (self.lo + self.hi))
        # the mean of points in a box lies in it (the quadrature may stray): kept just inside
        # (a pole this close to another box's boundary is left out when that box is counted)
        w, h = self.hi - self.lo, self.y1 - self.y0
        re = min(max(c.real, self.lo + 1e-3 * w), self.hi - 1e-3 * w)
        im = 0.0 if self.symmetric else min(max(c.imag, self.y0 + 1e-3 * h), self.y1 - 1e-3 * h)
        return complex(re, im)

    @property
    def spread(self) -> float:
        """About how far the roots of the box lie from their mean (from the power sums)."""
        if self.count < 2:
            return 0.0
        mean = self.sums[0] / self.count
        return float(np.sqrt(abs(self.sums[1] / self.count - mean * mean)))

    def distance(self, z: np.ndarray) -> np.ndarray:
        """Distance of points to the boundary of the box."""
        z = np.asarray(z, dtype=complex)
        y0 = -self.y1 if self.symmetric else self.y0
        dx = np.maximum(np.maximum(self.lo - np.real(z), np.real(z) - self.hi), 0.0)
        dy = np.maximum(np.maximum(y0 - np.imag(z), np.imag(z) - self.y1), 0.0)
        outside = np.hypot(dx, dy)
        inside = np.minimum.reduce(
            [np.real(z) - self.lo, self.hi - np.real(z), np.imag(z) - y0, self.y1 - np.imag(z)]
        )
        return np.where(self.holds(z), inside, outside)

    @property
    def reach(self) -> float:
        """The largest distance from :attr:`centroid` to a point of the box: to its farthest
        corner (a symmetric box's corners are those of ``[lo, hi] x [-y1, y1]``)."""
        c = self.centroid
        y0 = -self.y1 if self.symmetric else self.y0
        return max(abs(complex(x, y) - c) for x in (self.lo, self.hi) for y in (y0, self.y1))

    @property
    def diameter(self) -> float:
        y0 = -self.y1 if self.symmetric else self.y0
        return math.hypot(self.hi - self.lo, self.y1 - y0)

    def holds(self, z: np.ndarray) -> np.ndarray:
        z = np.asarray(z, dtype=complex)
        y0 = -self.y1 if self.symmetric else self.y0
        return (
            (np.real(z) > self.lo)
            & (np.real(z) < self.hi)
            & (np.imag(z) > y0)
            & (np.imag(z) < self.y1)
        )

    def halves(self) -> list[_Box]:
        """Two boxes covering this one; the cut is off-centre (a root of a real system often
        lies on the centre line of a symmetric range)."""
        d = self.depth + 1
        lo, hi, y0, y1 = self.lo, self.hi, self.y0, self.y1
        if self.symmetric:
            if y1 > hi - lo:
                ys = 0.4617 * y1
                return [_Box(lo, hi, -ys, ys, True, depth=d), _Box(lo, hi, ys, y1, False, depth=d)]
            xs = lo + 0.5383 * (hi - lo)
            return [_Box(lo, xs, y0, y1, True, depth=d), _Box(xs, hi, y0, y1, True, depth=d)]
        if y1 - y0 > hi - lo:
            ys = y0 + 0.5383 * (y1 - y0)
            return [_Box(lo, hi, y0, ys, False, depth=d), _Box(lo, hi, ys, y1, False, depth=d)]
        xs = lo + 0.5383 * (hi - lo)
        return [_Box(lo, xs, y0, y1, False, depth=d), _Box(xs, hi, y0, y1, False, depth=d)]


class _Locator:
    """Counts and locates the roots of one system in boxes (see the module docstring)."""

    def __init__(self, lin: LinearDDE, system: SparseSystem, norms):
        self.lin, self.system, self.norms = lin, system, norms
        self.real = is_real_system(lin)
        self.spacing = 0.5 / lin.max_delay
        self.used = 0
        self.reason = ""
        # det Delta(s) is divided by a polynomial with the known roots and clusters as zeros,
        # and (s - c)^(n - known), c the mean eigenvalue of A0: far from the roots det Delta
        # turns like (s - c)^n, which for a large n would need many samples; the quotient
        # turns slowly, and the poles it has inside a box are added back to its count
        self.center = complex(np.trace(lin.A0)) / lin.n
        if self.real:
            self.center = complex(self.center.real, 0.0)
        self.roots: list[tuple[complex, float, int, float]] = []  # (value, res, mult, error)
        self.frontier: list[_Box] = []

    # ------------------------------------------------------------------ deflation
    def _poles(self, box: _Box) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Points, orders, and whether each stands for located roots, for counting ``box``
        (the mean of another box's roots is left out when it lies close to this boundary,
        compared with their spread: a pole that does not stand for nearby roots would only
        cost samples there)."""
        pts, orders, known = [], [], []

        def add(p, o, k):
            pts.append(p)
            orders.append(o)
            known.append(k)
            if self.real and p.imag != 0:
                pts.append(p.conjugate())
                orders.append(o)
                known.append(k)

        total = 0
        for v, _, m, _ in self.roots:
            add(complex(v), m, True)
            total += m * (2 if self.real and v.imag != 0 else 1)
        y0 = -box.y1 if box.symmetric else box.y0
        floor = 1e-2 * min(box.hi - box.lo, box.y1 - y0)
        for b in self.frontier:
            c = b.centroid
            # the roots of b lie anywhere in it: a pole at their mean this close to the
            # boundary (within the reach of b's corners from it, twice over) would stand for
            # roots on both sides of it, and its field cancel theirs at the samples (the lower
            # half of a box with 4 roots, one 0.013 inside the cut and three just outside,
            # was counted 0 with the box's mean 0.039 outside as a pole of order 4)
            near = max(floor, 2.0 * b.reach)
            d = box.distance(np.array([c, c.conjugate()]))
            if b is not box and (d[0] < near or (self.real and not b.symmetric and d[1] < near)):
                continue
            add(c, b.count, False)
            total += b.count * (2 if self.real and not b.symmetric else 1)
        pts.append(self.center)
        orders.append(self.lin.n - total)
        known.append(False)
        return np.array(pts, dtype=complex), np.array(orders, dtype=float), np.array(known)

    def count(self, box: _Box) -> bool:
        """Count the roots not yet located in ``box`` (and their power sums); False when the
        boundary cannot be resolved."""
        pts, orders, known = self._poles(box)

        def evaluate(s):
            f, g = self.system.det_logderiv_fast(s)
            w = s[:, None] - pts[None, :]
            with np.errstate(all="ignore"):
                f = f * np.exp(-1j * np.sum(orders * np.angle(w), axis=1))
                g = g - np.sum(orders / w, axis=1)
            return f, g

        y0 = -box.y1 if box.symmetric else box.y0
        rc = count_in_rectangle(
            evaluate,
            box.lo,
            box.hi,
            y0,
            box.y1,
            symmetric=box.symmetric,
            powers=MAX_LOCATED,
            spacing=min(self.spacing, 0.25 * min(box.hi - box.lo, box.y1 - y0)),
            max_samples=max(MAX_SAMPLES - self.used, 0),
        )
        self.used += rc.samples
        if rc.count is None:
            self.reason = (
                f"the boundary of [{box.lo:.6g}, {box.hi:.6g}] x [{y0:.6g}, {box.y1:.6g}] was "
                "not resolved ("
                + ("a root on it" if self.used < MAX_SAMPLES else f"{MAX_SAMPLES} evaluations")
                + " of det Delta)"
            )
            return False
        inside = box.holds(pts) & ~known
        p = np.arange(1, MAX_LOCATED + 1)
        box.count = int(rc.count + round(float(np.sum(orders[inside]))))
        box.sums = rc.power_sums + np.sum(orders[inside, None] * pts[inside, None] ** p, axis=0)
        if box.count < 0:
            self.reason = f"a negative count in [{box.lo:.6g}, {box.hi:.6g}]"
            return False
        return True

    # ------------------------------------------------------------------ locating
    def _weight(self, v: complex, m: int) -> int:
        return m * (2 if self.real and v.imag != 0 else 1)

    def locate(self, box: _Box, z: np.ndarray | None = None) -> bool:
        """The roots of ``box`` from its power sums (or from the candidates ``z``), refined
        and verified; False when they do not account for its count.

        Where the verified roots account for fewer, Newton's method is run again from the
        same candidates on ``det Delta`` divided by the roots found (twice at most): two
        candidates that converged to one root of a pair 1e-10 apart (the 30-flow ring with
        five delays has such pairs) then find the other."""
        if z is None:
            z = zeros_from_power_sums(box.sums, box.count)
        if self.real:
            z = np.where(np.imag(z) < 0, z.conj(), z)
            z = np.where(np.abs(np.imag(z)) <= 1e-6 * (1.0 + np.abs(z)), np.real(z) + 0j, z)
        found: list[tuple[complex, float, int, float]] = []
        for _ in range(3):
            new = self._verified(box, z, found)
            if new is None:
                return False
            found.extend(new)
            # a symmetric box holds the mirror of each complex root too; an upper box does not
            weight = sum(m * (2 if box.symmetric and v.imag != 0 else 1) for v, _, m, _ in found)
            if weight == box.count:
                self.roots.extend(found)
                return True
            if weight > box.count or not new:
                return False
        return False

    def _verified(self, box: _Box, z: np.ndarray, found: list) -> list | None:
        """Newton's method from ``z`` on ``det Delta`` divided by the ``found`` roots, the
        limits verified (:func:`~.rootcheck.verified_roots`) that are new; None when one
        lies outside the box."""
        poles = np.array([v for v, *_ in found], dtype=complex)
        orders = np.array([m for _, _, m, _ in found], dtype=float)
        if self.real:
            off = np.imag(poles) != 0
            poles = np.concatenate([poles, poles[off].conj()])
            orders = np.concatenate([orders, orders[off]])

        def logderiv(s):
            g = self.system.logderiv(s)
            if poles.size:
                g = g - np.sum(orders / (s[:, None] - poles[None, :]), axis=1)
            return g

        lam, _ = newton_roots(logderiv, z, self.real, 40)
        lam = lam[np.isfinite(lam)]
        if self.real:
            lam = np.where(np.imag(lam) < 0, lam.conj(), lam)
        lam = lam[box.holds(lam)]
        for v, _, _, e in self.roots:  # not a root located before
            lam = lam[np.abs(lam - v) > max(e, 1e-9 * (1.0 + abs(v)))]
        for v, _, _, e in found:  # nor one found here (its pair may lie 1e-10 away)
            lam = lam[np.abs(lam - v) > e]
        if lam.size == 0:
            return []
        lam = lam[_distinct(lam)]
        res = self.system.residual(lam, self.norms)
        lam, res = lam[res <= RESIDUAL_TOL], res[res <= RESIDUAL_TOL]
        if lam.size == 0:
            return []
        vals, rr, mult, err = verified_roots(self.lin, lam, res, self.norms, self.system)
        if not box.holds(vals).all():
            return None
        new = []
        for v, r, m, e in zip(vals, rr, mult, err, strict=True):
            if all(abs(v - w) > e + f for w, _, _, f in found):
                new.append((complex(v), float(r), int(m), float(e)))
        return new

    def cluster(self, box: _Box) -> None:
        """Report the roots of a small box as one entry: their mean, count and the box's size."""
        c = self.cluster_mean(box)
        res = float(self.system.residual(np.array([c]), self.norms)[0])
        self.roots.append((c, res, box.count, box.diameter))

    def cluster_mean(self, box: _Box) -> complex:
        """The mean of the roots of a small box, from :meth:`circle_sums` (on the box's own
        boundary, close to the roots, the trapezoidal rule converges slowly); the centroid
        from the box's power sums when no circle holds exactly its roots."""
        got = self.circle_sums(box, 1, (1.5, 1.2, 2.0), (box.count, box.count))
        if got is None:
            return box.centroid
        centre, _, sums = got
        mean = complex(centre + sums[0] / box.count)
        return complex(mean.real, 0.0) if self.real and box.symmetric else mean

    def locate_on_circle(self, box: _Box, factors=(1.5,)) -> bool:
        """:meth:`locate` from the power sums of :meth:`circle_sums` (a root close to the
        box's boundary spoils the sums on it: two real roots of the 20-flow ring, 4.4e-4
        apart, one 2.8e-6 inside a box's edge, were never located and were reported as one
        cluster at their mean). The circle may hold other roots too, up to
        :data:`MAX_ON_CIRCLE` in all: a cut through a cluster leaves roots just outside
        each half (8 roots of the 30-flow ring with five delays within 3e-5, cut 2 and 6)."""
        got = self.circle_sums(box, MAX_ON_CIRCLE, factors, (box.count, MAX_ON_CIRCLE))
        if got is None:
            return False
        centre, m, sums = got
        # in units of the circle's radius, where the sums are of order 1
        r = 0.5 * box.diameter
        p = np.arange(1, m + 1)
        return self.locate(box, centre + r * zeros_from_power_sums(sums[:m] / r**p, m))

    def circle_sums(
        self, box: _Box, powers: int, factors, counts: tuple[int, int]
    ) -> tuple[complex, int, np.ndarray] | None:
        """``(c, m, [sum (r - c)^p for p = 1..powers])`` over the ``m`` roots ``r`` in a
        circle around the box's centre ``c``: the trapezoidal rule on the circle (it converges
        geometrically there), with the exact ``(det Delta)'/det Delta`` and the nodes doubled
        until two estimates agree. Circles of ``factors`` times the box's half-diagonal are
        tried until one holds a number of roots in ``counts`` (low, high); None when none
        does or the rule does not settle within 128 nodes."""
        y0 = -box.y1 if box.symmetric else box.y0
        centre = complex(0.5 * (box.lo + box.hi), 0.5 * (y0 + box.y1))
        for factor in factors:
            got = self._circle_sums(centre, factor * 0.5 * box.diameter, powers, counts)
            if got is not None:
                return centre, got[0], got[1]
        return None

    def _circle_sums(self, centre: complex, radius: float, powers: int, counts):
        p = np.arange(1, powers + 1)
        n = 16
        z = radius * np.exp(2j * np.pi * np.arange(n) / n)
        g = self.system.logderiv(centre + z)
        self.used += n
        previous = None
        while np.all(np.isfinite(g)):
            count = np.mean(z * g)
            sums = np.mean(z[None, :] ** (p[:, None] + 1) * g[None, :], axis=1)
            m = round(count.real)
            if previous is not None and abs(count - previous[0]) < 0.25:
                if not counts[0] <= m <= counts[1]:
                    return None  # about to settle on a count that is not wanted
                if abs(count - previous[0]) <= 1e-8 * max(m, 1) and abs(count - m) <= 1e-6:
                    # settled: the count, and the sums with it
                    if np.all(np.abs(sums - previous[1]) <= 1e-10 * max(m, 1) * radius**p):
                        return m, sums
            if n >= 128 or self.used >= MAX_SAMPLES:
                return None
            previous = (count, sums)
            extra = z * np.exp(1j * np.pi / n)
            g = np.concatenate([g, self.system.logderiv(centre + extra)])
            z = np.concatenate([z, extra])
            self.used += n
            n *= 2
        return None

    def solve(self, box: _Box, k: int | None) -> float | None:
        """Count and locate the roots in ``box`` (rightmost first); with ``k``, stop once
        ``k`` roots lie right of every box still unresolved. Returns the line right of which
        every root is located (None on failure)."""
        if not self.count(box):
            return None
        self.frontier = [box] if box.count else []
        while self.frontier:
            line = max(b.hi for b in self.frontier)
            if k is not None:
                right = sum(self._weight(v, m) for v, _, m, _ in self.roots if v.real > line)
                if right >= k:
                    return line
            b = max(self.frontier, key=lambda x: (x.hi, x.y1))
            # (a box that is not is halved, and tried again)
            if (b.count <= MAX_LOCATED and self.locate(b)) or (
                b.count <= MAX_ON_CIRCLE and self.locate_on_circle(b)
            ):
                self.frontier.remove(b)
                continue
            scale = max(abs(b.centroid), 1.0 / max(self.lin.max_delay, 1.0))
            if b.count > 1 and b.diameter <= CLUSTER_RTOL * scale:
                # other circles than the one just tried
                small = b.count <= MAX_ON_CIRCLE
                if not (small and self.locate_on_circle(b, (1.2, 2.0))):
                    self.cluster(b)
                self.frontier.remove(b)
                continue
            if b.depth >= MAX_DEPTH or self.used >= MAX_SAMPLES:
                self.reason = (
                    f"{b.count} roots in [{b.lo:.6g}, {b.hi:.6g}] x [{b.y0:.6g}, {b.y1:.6g}] "
                    f"not located ({self.used} evaluations of det Delta)"
                )
                return None
            parts = b.halves()
            for part in parts:
                if not self.count(part):
                    return None
            weights = [
                p.count * (2 if self.real and b.symmetric and not p.symmetric else 1) for p in parts
            ]
            if sum(weights) != b.count:
                self.reason = (
                    f"the counts of [{b.lo:.6g}, {b.hi:.6g}] x [{b.y0:.6g}, {b.y1:.6g}] and of "
                    "its halves disagree"
                )
                return None
            self.frontier.remove(b)
            self.frontier.extend(p for p in parts if p.count)
        return box.lo


def large_roots(lin: LinearDDE, k: int, box, *, system: SparseSystem | None = None) -> Roots:
    """The roots :func:`~fluidnet.linear.roots.characteristic_roots` returns, for a large
    system (see the module docstring; ``lin`` is balanced, and the options of the
    discretization do not apply). ``system`` is ``lin`` as a :class:`SparseSystem`, when
    already built."""
    with single_threaded_blas():
        return _large_roots(lin, k, box, system or SparseSystem.from_lineardde(lin))


def _large_roots(lin: LinearDDE, k: int, box, system: SparseSystem) -> Roots:
    norms = system.matrix_norms()
    spectrum = a0_spectrum(lin)

    def im_bound(sigma: float) -> float:
        # strictly above every root with Re >= sigma
        return imag_bound(lin, sigma, norms, spectrum) * (1.0 + 1e-6) + 1e-6 / tau

    r_star = abscissa_bound(system, lin.A0)
    tau = lin.max_delay
    loc = _Locator(lin, system, norms)
    hi = r_star + 0.05 / tau
    line = None
    if box is None:
        width = 1.0 / tau
        while True:
            lo = hi - width
            # a box at least a quarter as tall as it is wide (it still holds every root right
            # of lo): far right, where no root is, the bound shrinks to 1e-6 and a box of
            # 3.3 x 7e-6 was sampled at its height's spacing along its width, past the budget
            Y = max(im_bound(lo), 0.25 * (hi - lo))
            region = _Box(lo, hi, -Y, Y, True) if loc.real else _Box(lo, hi, -Y, Y, False)
            line = loc.solve(region, k)
            if line is None:
                break
            total = sum(loc._weight(v, m) for v, _, m, _ in loc.roots)
            if line > lo or total >= k or width >= MAX_WIDTH / tau or loc.used >= MAX_SAMPLES:
                break
            # widen by at most 1 / tau at a time: the bound on |Im| grows like exp(-lo tau)
            # as lo moves left, and one doubling from an empty box could reach a box of
            # thousands of roots (100 states: from [1.7, 15] x 93 to [-11.6, 15] x 919)
            width = min(2.0 * width, width + 1.0 / tau)
    else:
        lo = box[0] - 0.02 / tau  # roots on the line Re = box[0] are inside
        Y = min(max(abs(box[2]), abs(box[3])) * (1 + 1e-9), im_bound(lo))
        hi = min(hi, box[1] + 0.02 / tau)
        if hi <= lo:
            line = lo
        else:
            region = _Box(lo, hi, -Y, Y, True) if loc.real else _Box(lo, hi, -Y, Y, False)
            line = loc.solve(region, None)
    certified = line is not None
    rows = []
    for v, r, m, e in loc.roots:
        rows.append((complex(v), r, m, e))
        if loc.real and v.imag != 0:
            rows.append((complex(v).conjugate(), r, m, e))
    if rows and zero_root_exists(lin, norms):
        i = int(np.argmin([abs(v) for v, *_ in rows]))
        v, r, m, e = rows[i]
        if abs(v) <= 1e-6 * max(1.0 / tau, norms[0] + float(np.sum(norms[1]))):
            rows[i] = (0j, r, m, e + abs(v))
    roots = [
        CharacteristicRoot(value=v, residual=float(r), multiplicity=int(m), error=float(e))
        for v, r, m, e in rows
    ]
    roots.sort(key=lambda r: (-r.real, -r.imag))
    if box is not None and (
        math.isfinite(box[1]) or math.isfinite(box[2]) or math.isfinite(box[3])
    ):
        cert: bool | None = None
    else:
        cert = certified
    out = Roots(roots, 0, cert, line if certified else math.nan, reason=loc.reason)
    return select_roots(out, k, box)
