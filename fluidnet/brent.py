"""Brent's root finder on a bracket, in plain Python.

Brent's method (R. P. Brent, *Algorithms for Minimization without Derivatives*, 1973, ch. 4)
keeps a bracket ``[b, c]`` with a sign change and takes an inverse quadratic (or secant) step
from the best point ``b`` when it falls well inside the bracket and shrinks fast enough, a
bisection otherwise: never slower than bisection by more than a small factor, superlinear
near a simple root. The tolerance and the options are those of :func:`scipy.optimize.brentq`
(``|x - root| <= xtol + rtol |x|``), whose import (``scipy.optimize``, 0.3 s of CPU in a new
process) was most of a first :func:`fluidnet.margins` call of a process (issue 34): each
crossover and equilibrium it refines needs tens of evaluations of a scalar function, which
plain Python runs as fast.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from .errors import OptionError

__all__ = ["brentq"]

#: The smallest relative tolerance taken (as SciPy's brentq): 4 machine epsilons.
RTOL_MIN = 4 * 2.220446049250313e-16
_OPTIONS = {"xtol", "rtol", "maxiter", "args", "disp"}


def brentq(f: Callable[..., Any], a: float, b: float, **options: Any) -> float:
    """The root of ``f`` bracketed by ``[a, b]``, by Brent's method.

    Parameters
    ----------
    f : callable
        A scalar function with ``f(a)`` and ``f(b)`` of opposite signs (or one of them 0).
    a, b : float
        The bracket.
    **options
        ``xtol`` (default ``2e-12``) and ``rtol`` (default and least ``4 eps``): the root is
        located to ``xtol + rtol |x|``; ``maxiter`` (100) evaluations after the ends;
        ``args``: extra arguments of ``f``; ``disp`` (True): raise when ``maxiter`` is reached
        (False: return the best point then). As :func:`scipy.optimize.brentq`, whose
        ``full_output`` form is not taken.

    Returns
    -------
    float
        The root.

    Raises
    ------
    ValueError
        ``f(a)`` and ``f(b)`` of the same sign, ``f`` not finite at a point it was asked for,
        or a tolerance out of range.
    RuntimeError
        ``maxiter`` reached with ``disp`` true.

    Examples
    --------
    >>> import math
    >>> from fluidnet.brent import brentq
    >>> abs(brentq(math.cos, 0.0, 2.0, xtol=1e-14) - math.pi / 2) < 1e-13
    True
    """
    if options.get("full_output"):
        raise OptionError("fluidnet.brent.brentq returns the root only: full_output is not taken")
    unknown = sorted(set(options) - _OPTIONS - {"full_output"})
    if unknown:
        raise OptionError(f"brentq: unknown option(s) {unknown}; it takes {sorted(_OPTIONS)}")
    xtol = float(options.get("xtol", 2e-12))
    rtol = float(options.get("rtol", RTOL_MIN))
    maxiter = int(options.get("maxiter", 100))
    args = tuple(options.get("args", ()))
    disp = bool(options.get("disp", True))
    if not xtol > 0:
        raise ValueError(f"brentq: xtol must be positive, got {xtol!r}")
    if not rtol >= RTOL_MIN:
        raise ValueError(f"brentq: rtol {rtol!r} is below 4 machine epsilons ({RTOL_MIN!r})")
    if maxiter < 0:
        raise ValueError(f"brentq: maxiter must be >= 0, got {maxiter!r}")

    def value(x: float) -> float:
        y = float(f(x, *args))
        if not math.isfinite(y):
            raise ValueError(f"brentq: f({x!r}) = {y!r} is not finite")
        return y

    a, b = float(a), float(b)
    fa, fb = value(a), value(b)
    if fa == 0.0:
        return a
    if fb == 0.0:
        return b
    if (fa > 0) == (fb > 0):
        raise ValueError(f"brentq: f(a) = {fa!r} and f(b) = {fb!r} have the same sign")
    # b: the best point; c: the other end of the bracket; a: the previous b
    c, fc = a, fa
    step = previous = b - a
    # the bracket's width two iterations ago: the interpolation steps must halve it in two
    # (else a bisection: near a multiple root they creep, Brent's own safeguard allows
    # tens of times the bisection's count). Starting from the bracket makes the first step a
    # bisection: as few evaluations or fewer than interpolating first on the tests' functions.
    widths = [abs(b - a)] * 2
    for _ in range(maxiter):
        if (fb > 0) == (fc > 0):  # the sign change is between a and b: a becomes the end
            c, fc = a, fa
            step = previous = b - a
        if abs(fc) < abs(fb):
            a, fa = b, fb
            b, fb = c, fc
            c, fc = a, fa
        tol = 0.5 * (xtol + rtol * abs(b))
        half = 0.5 * (c - b)
        if abs(half) <= tol or fb == 0.0:
            return b
        bisect = True
        creeping = abs(c - b) > 0.5 * widths[0]
        widths = [widths[1], abs(c - b)]
        if not creeping and abs(previous) >= tol and abs(fa) > abs(fb):
            s = fb / fa
            if a == c:  # two points: the secant
                p, q = 2.0 * half * s, 1.0 - s
            else:  # three: inverse quadratic interpolation
                qa, r = fa / fc, fb / fc
                p = s * (2.0 * half * qa * (qa - r) - (b - a) * (r - 1.0))
                q = (qa - 1.0) * (r - 1.0) * (s - 1.0)
            if p > 0:
                q = -q
            p = abs(p)
            # inside the bracket, and shorter than half the step before last
            if 2.0 * p < min(3.0 * half * q - abs(tol * q), abs(previous * q)):
                previous, step = step, p / q
                bisect = False
        if bisect:
            step = previous = half
        a, fa = b, fb
        b += step if abs(step) > tol else math.copysign(tol, half)
        fb = value(b)
    if disp:
        raise RuntimeError(f"brentq: no convergence in {maxiter} iterations (last x = {b!r})")
    return b
