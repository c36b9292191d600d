"""The roots of ``det Delta`` inside a rectangle: their number and power sums, from samples
of ``det Delta`` and ``(det Delta)'/det Delta`` along its boundary.

The argument principle counts the zeros of ``f = det Delta`` inside a closed contour ``C`` as
``(1 / 2 pi) [arg f]_C``, and the same samples give the power sums of those zeros,
``S_p = (1 / 2 pi i) oint_C s^p f'(s)/f(s) ds`` (``p = 1, 2, ...``), from which a few zeros
follow by Newton's identities. The boundary is sampled adaptively, as in
:mod:`fluidnet.linear.certificate`: an interval between neighbouring samples is halved until
the principal increment of ``arg f`` over it is at most ``pi/4`` and ``h |f'/f| <= 1`` at both
ends (``h`` its length; ``|f'/f|`` is about the inverse distance to the nearest zero), so that
``arg f`` cannot turn by a hidden full circle between samples.

For a real system the zeros are symmetric about the real axis, and a rectangle
``[lo, hi] x [-y, y]`` is sampled on its upper half only (from ``hi`` up, across, down to
``lo``): ``f`` is real at both ends, the count is ``[arg f] / pi`` and the power sums are
``Im(int s^p f'/f ds) / pi`` along that half.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

__all__ = ["RectangleCount", "count_in_rectangle", "zeros_from_power_sums"]

#: Largest principal increment of arg f between neighbouring samples.
MAX_ARG_STEP = math.pi / 4

DetLogDeriv = Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]


@dataclass(frozen=True)
class RectangleCount:
    """Zeros of ``f`` in a rectangle (see :func:`count_in_rectangle`).

    Attributes
    ----------
    count : int or None
        Zeros minus poles inside, with multiplicity (the winding number); None when the
        boundary could not be resolved (a zero on it, or more than ``max_samples`` samples
        needed).
    power_sums : numpy.ndarray
        ``S_1 ... S_p`` of the zeros inside (trapezoidal rule on the samples: a first guess
        to be refined).
    samples : int
        Evaluations of ``f`` used.
    """

    count: int | None
    power_sums: np.ndarray
    samples: int


def _sample_path(evaluate: DetLogDeriv, vertices: np.ndarray, spacing: float, budget: int):
    """Adaptive samples of the polyline through ``vertices``: ``(s, f, g)`` or None."""
    pieces = []
    for a, b in zip(vertices[:-1], vertices[1:], strict=True):
        m = max(2, int(math.ceil(abs(b - a) / spacing)))
        pieces.append(a + (b - a) * np.arange(m) / m)
    pieces.append(vertices[-1:])
    s = np.concatenate(pieces)
    if s.size > budget:
        return None
    f, g = evaluate(s)
    while True:
        if not (np.all(np.isfinite(f)) and np.all(f != 0) and np.all(np.isfinite(g))):
            return None  # a zero on the path
        with np.errstate(all="ignore"):
            step = np.angle(f[1:] / f[:-1])
            rate = np.maximum(np.abs(g[1:]), np.abs(g[:-1]))
        h = np.abs(s[1:] - s[:-1])
        bad = (np.abs(step) > MAX_ARG_STEP) | (h * rate > 1.0)
        if not bad.any():
            return s, f, g
        i = np.flatnonzero(bad)
        if s.size + i.size > budget or np.any(h[i] <= 1e-13 * (1.0 + np.abs(s[i]))):
            return None
        mid = 0.5 * (s[i] + s[i + 1])
        fm, gm = evaluate(mid)
        s = np.insert(s, i + 1, mid)
        f = np.insert(f, i + 1, fm)
        g = np.insert(g, i + 1, gm)


def count_in_rectangle(
    evaluate: DetLogDeriv,
    lo: float,
    hi: float,
    y0: float,
    y1: float,
    *,
    symmetric: bool,
    powers: int,
    spacing: float,
    max_samples: int,
) -> RectangleCount:
    """Zeros of ``f`` in ``[lo, hi] x [y0, y1]`` and their first ``powers`` power sums.

    Parameters
    ----------
    evaluate : callable
        ``evaluate(s)`` returns ``f(s)`` (or any nonzero multiple of it by a positive number:
        only its argument is used) and ``f'(s)/f(s)``.
    symmetric : bool
        ``f`` is real on the real axis and ``y0 = -y1``: only the upper half is sampled.
    powers : int
        How many power sums.
    spacing : float
        Initial distance between samples.
    max_samples : int
        Budget of evaluations.
    """
    if symmetric:
        vertices = np.array([hi, hi + 1j * y1, lo + 1j * y1, lo], dtype=complex)
    else:
        vertices = np.array(
            [lo + 1j * y0, hi + 1j * y0, hi + 1j * y1, lo + 1j * y1, lo + 1j * y0], dtype=complex
        )
    out = _sample_path(evaluate, vertices, spacing, max_samples)
    if out is None:
        return RectangleCount(None, np.zeros(powers), max_samples)
    s, f, g = out
    with np.errstate(all="ignore"):
        turn = float(np.sum(np.angle(f[1:] / f[:-1])))
    count = turn / (math.pi if symmetric else 2.0 * math.pi)
    if not abs(count - round(count)) < 0.05:
        return RectangleCount(None, np.zeros(powers), s.size)
    ds = s[1:] - s[:-1]
    sums = np.empty(powers, dtype=complex)
    for p in range(1, powers + 1):
        F = s**p * g
        integral = np.sum(0.5 * ds * (F[1:] + F[:-1]))
        sums[p - 1] = integral.imag / math.pi if symmetric else integral / (2j * math.pi)
    return RectangleCount(int(round(count)), sums, s.size)


def zeros_from_power_sums(sums: np.ndarray, count: int) -> np.ndarray:
    """The ``count`` numbers whose first power sums are ``sums`` (Newton's identities)."""
    e = np.zeros(count + 1, dtype=complex)
    e[0] = 1.0
    for j in range(1, count + 1):
        acc = 0.0 + 0.0j
        for i in range(1, j + 1):
            acc += (-1) ** (i - 1) * e[j - i] * sums[i - 1]
        e[j] = acc / j
    coeffs = np.array([(-1) ** j * e[j] for j in range(count + 1)])
    return np.roots(coeffs) if count else np.zeros(0, dtype=complex)
