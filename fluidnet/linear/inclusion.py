"""Inclusion discs of characteristic roots: the argument principle on small circles.

A point ``z`` that Newton's method brought close to a zero of ``f(s) = det Delta(s)`` is
accepted as a root only when a circle around it is shown to enclose zeros of ``f``: the
number of zeros inside a circle is the winding number of ``f`` along it,
``(1 / 2 pi) [arg f]``, and the winding number is read off samples of ``f`` on the circle.
A circle is **resolved** when, between any two neighbouring samples, the principal increment
of ``arg f`` is at most ``pi/4`` and ``h |f'/f| <= 1`` at both ends (``h`` the arc between
them; ``|f'/f|`` is about the inverse distance to the nearest zero): ``arg f`` then cannot
turn by a hidden full circle between samples, as in :mod:`fluidnet.linear.certificate`. Near
the rounding floor ``f`` is noise, its samples are not resolved, and no claim is made.

For each candidate ``z`` (with a size ``scale``, see :func:`enclose`), circles of radius
``max(4 eta, 1e-13 scale)`` (``eta = |f/f'|`` at ``z``, Newton's next correction), growing
by 4, are tried until one is resolved and winds ``m >= 1`` times: its ``m`` zeros lie within
that radius of ``z``. A simple root, converged, is enclosed by the first circle; the two
zeros of a double root, which rounding splits by about ``sqrt(eps)``, are enclosed together
once the circle is larger than that split (no smaller circle is resolved): the root is
reported with multiplicity ``m``, and its value is the mean of the ``m`` zeros,
``z + (1/m) (1 / 2 pi i) oint (s - z) f'/f ds``, which, unlike each zero of a cluster, is
well conditioned. Distinct roots farther apart than their inclusion radii stay distinct. A
candidate with no resolved winding circle below ``MULTIPLICITY_RADIUS * scale`` is not a
root.

This is a numerical certificate (floating-point samples with step control), not interval
arithmetic: it is as strong as the sampling test, which is the one the line certificate uses.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

__all__ = ["Inclusion", "enclose", "winding_numbers"]

#: Radius (relative to the scale) of the circle that counts a cluster's multiplicity.
MULTIPLICITY_RADIUS = 1e-4
#: Smallest inclusion radius tried (relative to the scale).
FLOOR = 1e-13
#: Step (relative to the scale) at which ``f'/f`` is read again where Newton's correction at a
#: candidate would start its circles beyond the largest radius (about the square root of the
#: machine epsilon: the split of a double root by rounding).
NOISE_STEP = 1.5e-8
#: ... and the largest first radius (relative to the scale) taken from that second reading:
#: a cluster this tight is a multiple root split by rounding, not roots that are only close.
NOISE_RADIUS = 1e-6
#: Factor between successive inclusion radii.
GROWTH = 4.0
#: Samples per circle: tried in turn until the circle is resolved.
SAMPLES = (32, 128, 512)
#: Largest principal increment of arg f between neighbouring samples.
MAX_ARG_STEP = np.pi / 4

DetLogDeriv = Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]


@dataclass(frozen=True)
class Inclusion:
    """Verified roots (see :func:`enclose`); arrays of one entry per candidate.

    Attributes
    ----------
    value : numpy.ndarray of complex
        The candidate (``m = 1``) or the mean of the zeros enclosed (``m > 1``).
    radius : numpy.ndarray of float
        The ``multiplicity`` zeros enclosed lie within this distance of ``value`` (NaN where
        not verified).
    multiplicity : numpy.ndarray of int
        Zeros enclosed; 0 where the candidate is not verified.
    """

    value: np.ndarray
    radius: np.ndarray
    multiplicity: np.ndarray

    @property
    def verified(self) -> np.ndarray:
        return self.multiplicity > 0


def winding_numbers(
    det_logderiv: DetLogDeriv, centers: np.ndarray, radii: np.ndarray, samples: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Winding numbers of ``f`` on circles, from ``samples`` points each.

    Returns ``(count, resolved, h, g)``: the winding numbers (int), whether each circle is
    resolved (see the module docstring), and the offsets ``h = s - center`` and ``f'/f`` at
    the samples, shape ``(P, samples)``.
    """
    P = centers.size
    theta = 2.0 * np.pi * (np.arange(samples) + 0.5) / samples
    h = radii[:, None] * np.exp(1j * theta)[None, :]
    s = (centers[:, None] + h).ravel()
    f, g = det_logderiv(s)
    f, g = f.reshape(P, samples), g.reshape(P, samples)
    with np.errstate(all="ignore"):
        step = np.angle(np.roll(f, -1, axis=1) / f)
        rate = np.maximum(np.abs(g), np.abs(np.roll(g, -1, axis=1)))
        arc = 2.0 * np.pi * radii / samples
        ok = np.isfinite(f) & (f != 0) & np.isfinite(g)
        resolved = np.all(ok, axis=1)
        resolved &= np.all(np.abs(step) <= MAX_ARG_STEP, axis=1)
        resolved &= np.all(arc[:, None] * rate <= 1.0, axis=1)
        count = np.rint(np.sum(np.where(np.isfinite(step), step, 0.0), axis=1) / (2 * np.pi))
    return count.astype(int), resolved, h, g


def _resolved_count(det_logderiv, centers, radii, min_samples=None):
    """Winding numbers with as many samples as it takes (``SAMPLES``); ``-1`` where no sample
    count resolves the circle. Also returns the resolving samples' ``(h, g)`` per circle."""
    P = centers.size
    count = np.full(P, -1)
    hs: list[np.ndarray | None] = [None] * P
    gs: list[np.ndarray | None] = [None] * P
    pending = np.ones(P, dtype=bool)
    todo = np.arange(P)
    for M in SAMPLES:
        if todo.size == 0:
            break
        if min_samples is not None:
            use = todo[min_samples[todo] <= M]
            if use.size == 0:
                continue
        else:
            use = todo
        c, res, h, g = winding_numbers(det_logderiv, centers[use], radii[use], M)
        for j in np.flatnonzero(res):
            i = use[j]
            count[i] = c[j]
            hs[i], gs[i] = h[j], g[j]
        pending[use[res]] = False  # (np.setdiff1d's first call imports numpy.ma: 14 ms)
        todo = np.flatnonzero(pending)
    return count, hs, gs


def enclose(
    det_logderiv: DetLogDeriv,
    z: np.ndarray,
    scale: np.ndarray,
    *,
    real_system: bool = False,
    limit_rtol: float = MULTIPLICITY_RADIUS,
) -> Inclusion:
    """Verify candidate roots ``z`` of ``f`` (see the module docstring).

    Parameters
    ----------
    det_logderiv : callable
        ``det_logderiv(s)`` returns ``f(s)`` (or its phase) and ``f'(s)/f(s)`` on a 1-D
        complex array.
    z : numpy.ndarray of complex
        Candidates (Newton-refined).
    scale : numpy.ndarray of float
        Size of each candidate's neighbourhood (the radii are relative to it).
    real_system : bool
        ``f`` is real on the real axis: the mean of zeros enclosed around a real candidate is
        real.
    limit_rtol : float
        Largest radius tried, relative to ``scale``.

    Returns
    -------
    Inclusion
    """
    z = np.asarray(z, dtype=complex).ravel()
    scale = np.asarray(scale, dtype=float).ravel()
    P = z.size
    mult = np.zeros(P, dtype=int)
    value = z.copy()
    radius = np.full(P, np.nan)
    if P == 0:
        return Inclusion(value, radius, mult)
    _, g0 = det_logderiv(z)
    with np.errstate(all="ignore"):
        eta = np.where(np.isfinite(g0) & (g0 != 0), 1.0 / np.abs(g0), 0.0)
    r = np.maximum(4.0 * eta, FLOOR * scale)
    limit = limit_rtol * scale
    far = np.flatnonzero(r > limit)
    if far.size:
        # on a multiple root f and f' are rounding noise, and so is Newton's correction (1/6
        # at 8e-16 from the double root -1 of s + exp(-s - 1)): a step NOISE_STEP away, f'/f
        # is that of the cluster (about m / distance). Where the circles would then start
        # within NOISE_RADIUS, the zeros are that close: they start there. A candidate far
        # from any zero has about the same f'/f there as at itself and is refused as before.
        step = NOISE_STEP * scale[far]
        _, g1 = det_logderiv(z[far] + step)
        with np.errstate(all="ignore"):
            eta1 = np.where(np.isfinite(g1) & (g1 != 0), 1.0 / np.abs(g1), np.inf)
        r1 = np.maximum(4.0 * (eta1 + step), FLOOR * scale[far])
        r[far] = np.where(r1 <= NOISE_RADIUS * scale[far], r1, r[far])
    pending = r <= limit
    while pending.any():
        idx = np.flatnonzero(pending)
        count, hs, gs = _resolved_count(det_logderiv, z[idx], r[idx])
        for j in np.flatnonzero(count >= 1):
            i = idx[j]
            m = int(count[j])
            mult[i], radius[i] = m, r[i]
            if m > 1:
                h, g = hs[j], gs[j]
                assert h is not None and g is not None  # a resolved circle has its samples
                v = z[i] + np.mean(h * h * g) / m
                if real_system and np.imag(z[i]) == 0.0:
                    v = complex(v.real, 0.0)
                value[i] = v
                radius[i] += abs(v - z[i])
            pending[i] = False
        grow = idx[count < 1]
        r[grow] *= GROWTH
        pending[grow] = r[grow] <= limit[grow]
    return Inclusion(value, radius, mult)
