"""Zeros of scalar functions along a path, as generators the continuation loop can drive."""

from __future__ import annotations

import math

from .engine import run

__all__ = ["illinois_steps", "illinois"]

#: Relative agreement of two successive estimates of a zero that ends its search.
RTOL = 1e-13


def illinois_steps(a: float, b: float, fa: float, fb: float, rtol: float = RTOL, atol: float = 0.0):
    """A zero of ``f`` in ``[a, b]`` (``fa fb < 0``) by the Illinois variant of regula falsi, as
    a generator: yields each point where ``f`` is wanted, receives ``f`` there, returns the zero.

    Iterates until two successive estimates agree to ``rtol`` relative, or to ``atol`` (a zero
    at ``0`` itself, which no relative tolerance reaches before the estimates underflow; the
    convergence is superlinear: the last one is then accurate to rounding); the sign change is
    kept at every step, so the zero is never lost.

    An estimate that rounding puts on the point computed last (or beyond it) ends the search
    there: the step from that point is below its rounding. Its value is the function's own;
    the Illinois method halves only the other end's, which lengthens the step, so the plain
    secant's step is shorter still. (Bisecting from the far end instead, as the method would,
    took 24 more values at a crossing of the PI AQM model whose last value was 2e-17.)
    """
    side = 0
    previous = math.nan
    for _ in range(100):
        c = b - fb * (b - a) / (fb - fa)
        if not (min(a, b) < c < max(a, b)):
            if abs(c - previous) <= max(rtol * max(abs(c), 1e-300), atol):
                return previous  # on (or an ulp beyond) the point computed last
            c = 0.5 * (a + b)
        if abs(b - a) <= max(rtol * max(abs(a), abs(b), 1e-300), atol):
            break
        if abs(c - previous) <= max(rtol * max(abs(c), 1e-300), atol):
            return c  # the secant iterates agree to a few ulps
        previous = c
        fc = yield c
        if fc == 0.0:
            return c
        if (fc > 0) == (fb > 0):
            b, fb = c, fc
            if side == -1:
                fa *= 0.5
            side = -1
        else:
            a, fa = c, fc
            if side == 1:
                fb *= 0.5
            side = 1
    return a if abs(fa) < abs(fb) else b


def illinois(
    f, a: float, b: float, fa: float, fb: float, rtol: float = RTOL, atol: float = 0.0
) -> float:
    """:func:`illinois_steps` with ``f`` called directly."""
    return run(illinois_steps(a, b, fa, fb, rtol, atol), f)
