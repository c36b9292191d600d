"""The equilibrium enclosed over a parameter box: Krawczyk's operator.

For a box ``X`` of states, a point ``c`` of it, a nonsingular matrix ``Y`` (an approximate inverse
of the Jacobian) and every parameter ``p`` of a box ``P``, Krawczyk's operator

``K(X) = c - Y F(c, P) + (I - Y J(X, P)) (X - c)``

encloses ``x - Y F(x, p)`` for all ``x`` in ``X`` (mean value theorem, with ``J`` enclosing
``dF/dx`` on ``X x P``). When ``K(X)`` lies in the interior of ``X``, then for every ``p`` in
``P`` the steady-state equations ``F(x, p) = 0`` have exactly one solution in ``X`` (Krawczyk
1969, Moore 1977; the inclusion also proves every matrix of ``J(X, P)`` nonsingular, so the
solution depends continuously, indeed smoothly, on ``p``).

:func:`krawczyk_holds` is the test a checker runs on a stored ``X``; :func:`enclose_equilibrium`
searches for such an ``X`` around an approximate equilibrium (epsilon-inflation), rounds it
outward to decimals and returns it only after the test passed on the rounded box.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import numpy as np

from .arbcode import NotProved
from .exact import Interval, ball, interval_of, read_interval
from .problem import Problem

__all__ = ["enclose_equilibrium", "krawczyk_holds", "rounded_box"]


def _flint():
    import flint

    return flint


def _mid_float(b) -> float:
    return float(b.mid())


def krawczyk_holds(problem: Problem, X: Sequence[Interval], P: Sequence[Any]) -> list:
    """Check ``K(X) in int(X)`` over the parameter balls ``P``; return the state balls of ``X``.

    Raises
    ------
    NotProved
        When the inclusion fails (or a residual or Jacobian entry is not finite on the box).
    """
    K = _krawczyk_image(problem, X, P)
    for i, k in enumerate(K):
        if not k.is_finite():
            raise NotProved("Krawczyk's operator is not finite on the box")
        lo, hi = interval_of(k)
        if not (X[i][0] < lo and hi < X[i][1]):
            raise NotProved(
                f"Krawczyk's test fails for state {problem.record.states[i]!r}: "
                f"K encloses [{float(lo):.6g}, {float(hi):.6g}], not inside "
                f"[{float(X[i][0]):.6g}, {float(X[i][1]):.6g}]"
            )
    return [ball(iv) for iv in X]


def rounded_box(K: Sequence[Any], widen: float) -> list[Interval]:
    """Decimal intervals enclosing the balls ``K``, each widened by ``widen`` times its width
    (plus a floor relative to the value) and rounded outward."""
    from .exact import interval_strings

    out = []
    for k in K:
        lo, hi = interval_of(k)
        w = hi - lo
        pad = (
            Fraction(widen) * w + Fraction(1, 10**12) * max(abs(lo), abs(hi)) + Fraction(1, 10**300)
        )
        out.append(read_interval(interval_strings((lo - pad, hi + pad))))
    return out


def enclose_equilibrium(
    problem: Problem, P: Sequence[Any], x0: Sequence[float], *, tries: int = 12
) -> list[Interval]:
    """A decimal box ``X`` around the approximate equilibrium ``x0`` that passes
    :func:`krawczyk_holds` over the parameter balls ``P``.

    Raises
    ------
    NotProved
        When no box is found within ``tries`` inflations (the last failure says why).
    """
    flint = _flint()
    n = problem.n
    # a Newton step in floating point at the box centre sharpens the start
    pmid = [flint.arb(b.mid()) for b in P]
    x = np.array(x0, dtype=float)
    for _ in range(3):
        F = problem.residuals([flint.arb(float(v)) for v in x] + pmid)
        J = problem.jacobian([flint.arb(float(v)) for v in x] + pmid)
        try:
            Fv = np.array([_mid_float(flint.arb(v)) for v in F])
            Jv = np.array([_mid_float(flint.arb(v)) for v in J]).reshape(n, n)
            step = np.linalg.solve(Jv, Fv)
        except (np.linalg.LinAlgError, ValueError, TypeError):
            break
        if not np.all(np.isfinite(step)):
            break
        x = x - step
    scale = np.maximum(np.abs(x), 1e-300)
    radius = 1e-9 * scale + 1e-12 * float(np.max(np.abs(x), initial=1.0))
    X = rounded_box([flint.arb(float(v), float(r)) for v, r in zip(x, radius, strict=True)], 0.0)
    last = NotProved("no enclosure tried")
    for attempt in range(tries):
        try:
            krawczyk_holds(problem, X, P)
            return X
        except NotProved as exc:
            last = exc
        try:
            K = _krawczyk_image(problem, X, P)
        except NotProved as exc:
            last = exc
            K = None
        if K is None or not all(k.is_finite() for k in K):
            K = [ball(iv) for iv in X]  # no image: inflate the box itself
        X = rounded_box(K, 0.1 * 2**attempt)
    raise NotProved(
        f"the equilibrium could not be enclosed over the box ({last}): the steady-state "
        "Jacobian may be singular in the box (a root at 0, as where the steady state is not "
        "isolated) or vary too much over it (a smaller box may succeed)"
    )


def _krawczyk_image(problem: Problem, X: Sequence[Interval], P: Sequence[Any]) -> list:
    """The balls of ``K(X)`` (no test)."""
    flint = _flint()
    n = problem.n
    Xb = [ball(iv) for iv in X]
    c = [b.mid() for b in Xb]
    F = problem.residuals(c + list(P))
    J = problem.jacobian(Xb + list(P))
    F = [flint.arb(v) for v in F]
    J = [flint.arb(v) for v in J]
    if not all(v.is_finite() for v in F + J):
        raise NotProved("a steady-state residual or Jacobian entry is not finite on the box")
    Jmid = np.array([_mid_float(v) for v in J], dtype=float).reshape(n, n)
    try:
        Yf = np.linalg.inv(Jmid)
    except np.linalg.LinAlgError:
        raise NotProved("the steady-state Jacobian is singular at the box centre") from None
    if not np.all(np.isfinite(Yf)):
        raise NotProved("the steady-state Jacobian is singular at the box centre")
    Y = flint.arb_mat([[flint.arb(float(v)) for v in row] for row in Yf])
    Jm = flint.arb_mat([[flint.arb(J[i * n + j]) for j in range(n)] for i in range(n)])
    Fm = flint.arb_mat([[flint.arb(v)] for v in F])
    d = flint.arb_mat([[Xb[i] - c[i]] for i in range(n)])
    cm = flint.arb_mat([[v] for v in c])
    eye = flint.arb_mat(n, n, [1 if i == j else 0 for i in range(n) for j in range(n)])
    K = cm - Y * Fm + (eye - Y * Jm) * d
    return [K[i, 0] for i in range(n)]
