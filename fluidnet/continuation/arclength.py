"""Pseudo-arclength continuation of a curve ``F(u) = 0``, ``F: R^d -> R^(d-1)``.

The curve is a *problem* object in scaled coordinates (each unknown divided by its scale,
so that unit steps are comparable) with

``residual(u) -> (d-1,)`` and ``jacobian(u) -> (d-1, d)``
    the defining system and its derivative;
``solve(J, row, rhs)`` (optional)
    the bordered linear system ``[J; row] x = rhs`` (default: dense LU, with a least-squares
    fallback when nearly singular); structured problems (collocation) provide their own;
``correct(guess, point, row, target)`` (optional)
    their own corrector, returning ``(u, iterations)`` or raising :class:`CorrectionFailed`;
``admissible(point, u) -> str`` (optional)
    ``""`` when the corrected ``u`` is acceptable, else why not (the step is then rejected).

:class:`ArclengthStepper` is the stepper of the continuation loop
(:func:`fluidnet.continuation.follow`): it predicts along the unit tangent, corrects on the
hyperplane through the prediction orthogonal to it (Newton, or the chord method with the
Jacobian of the last point), rejects a correction that moved more than ``max_move`` steps, and
orients each new tangent (the null vector of the Jacobian) along the previous one, so the curve
is followed through folds. Events -- sign changes of test functions between two points -- are
located on the curve by :func:`locate_event`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .controller import Attempt
from .engine import Stop, run
from .scalar import illinois_steps

__all__ = [
    "CorrectionFailed",
    "CurvePoint",
    "ArclengthStepper",
    "newton",
    "null_tangent",
    "bordered_solve",
    "locate_event",
]


class CorrectionFailed(Exception):
    """The corrector did not converge (or left the problem's domain)."""


@dataclass
class CurvePoint:
    """A point of a curve: scaled coordinates, unit tangent, Jacobian, the problem's data."""

    u: np.ndarray
    tangent: np.ndarray
    J: np.ndarray | None = None
    data: Any = None
    s: float = 0.0  # arclength (scaled) from the start
    extra: dict = field(default_factory=dict)


def bordered_solve(
    J: np.ndarray, row: np.ndarray, rhs: np.ndarray, cond_limit: float | None = 1e12
) -> np.ndarray | None:
    """``[J; row] x = rhs`` by LU, or by least squares when the condition number exceeds
    ``cond_limit`` (always by LU when it is ``None``); ``None`` for non-finite systems."""
    A = np.vstack([J, row])
    if not np.all(np.isfinite(A)) or not np.all(np.isfinite(rhs)):
        return None
    if cond_limit is not None and np.linalg.cond(A) >= cond_limit:
        return np.linalg.lstsq(A, rhs, rcond=None)[0]
    return np.linalg.solve(A, rhs)


def newton(
    residual,
    jacobian,
    u: np.ndarray,
    row: np.ndarray,
    target: float,
    *,
    J: np.ndarray | None = None,
    tol: float = 1e-12,
    loose_tol: float | None = 1e-9,
    maxiter: int = 20,
    cond_limit: float | None = 1e12,
    solve=None,
) -> tuple[np.ndarray, int]:
    """Newton's method on ``[F(u) = 0, row . u = target]``.

    With ``J`` given, the chord method (``J`` kept for every iteration); otherwise the
    Jacobian is recomputed at each iterate. Converged when the largest component of a step is
    at most ``tol``; after ``maxiter`` iterations a last step at most ``loose_tol`` is accepted.

    Returns
    -------
    (u, iterations)

    Raises
    ------
    CorrectionFailed
    """
    chord = J is not None
    A = None
    if chord:
        A = np.vstack([J, row])
        if not np.all(np.isfinite(A)):
            raise CorrectionFailed("non-finite Jacobian")
        use_lstsq = cond_limit is not None and np.linalg.cond(A) >= cond_limit
    size = math.inf
    for it in range(1, maxiter + 1):
        g = residual(u)
        rhs = -np.concatenate([g, [row @ u - target]])
        if not np.all(np.isfinite(rhs)):
            raise CorrectionFailed("non-finite residual")
        if A is not None:  # the chord method
            if use_lstsq:
                step = np.linalg.lstsq(A, rhs, rcond=None)[0]
            else:
                step = np.linalg.solve(A, rhs)
        else:
            Jk = jacobian(u)
            if solve is not None:
                step = solve(Jk, row, rhs)
            else:
                step = bordered_solve(Jk, row, rhs, cond_limit)
            if step is None:
                raise CorrectionFailed("non-finite Jacobian")
        u = u + step
        size = float(np.max(np.abs(step)))
        if not math.isfinite(size):
            raise CorrectionFailed("the iterate diverged")
        if size <= tol:
            return u, it
    if loose_tol is not None and size <= loose_tol:
        return u, maxiter
    raise CorrectionFailed(f"no convergence in {maxiter} iterations (last step {size:.3g})")


def null_tangent(J: np.ndarray, prev: np.ndarray | None = None, sign: float = 1.0) -> np.ndarray:
    """The unit null vector of the ``(m, m + 1)`` matrix ``J``, oriented along ``prev`` (or, with
    no ``prev``, with ``sign`` times a positive last component)."""
    t = np.linalg.svd(J)[2][-1]
    if prev is not None:
        return t if t @ prev >= 0 else -t
    return t if t[-1] * sign >= 0 else -t


class ArclengthStepper:
    """The pseudo-arclength stepper of :func:`fluidnet.continuation.follow`.

    Parameters
    ----------
    curve : problem object
        See the module docstring.
    chord : bool
        Chord corrector (the Jacobian of the last point) instead of Newton's method.
    tol, loose_tol, maxiter : float, float, int
        Corrector convergence (see :func:`newton`).
    max_move : float
        A correction that ends farther than ``max_move * h`` from the last point is rejected
        (it jumped to another curve).
    cond_limit : float or None
        Bordered systems with a larger condition number are solved by least squares.

    The accepted points are collected in :attr:`points`. Subclasses (or the caller, through
    :meth:`accepted`'s hooks) add stops and events.
    """

    def __init__(
        self,
        curve,
        *,
        chord: bool = False,
        tol: float = 1e-12,
        loose_tol: float | None = 1e-9,
        maxiter: int = 20,
        max_move: float = 2.0,
        cond_limit: float | None = 1e12,
    ):
        self.curve = curve
        self.chord = chord
        self.tol, self.loose_tol, self.maxiter = tol, loose_tol, maxiter
        self.max_move = max_move
        self.cond_limit = cond_limit
        self.points: list[CurvePoint] = []
        self.stop_reason = ""

    # ------------------------------------------------------------------ building blocks
    def correct(
        self, guess: np.ndarray, point: CurvePoint, row: np.ndarray, target: float
    ) -> tuple[np.ndarray, int]:
        """``(u, iterations)`` on the curve and the hyperplane ``row . u = target``."""
        own = getattr(self.curve, "correct", None)
        if own is not None:
            return own(guess, point, row, target)
        return newton(
            self.curve.residual,
            self.curve.jacobian,
            guess,
            row,
            target,
            J=point.J if self.chord else None,
            tol=self.tol,
            loose_tol=self.loose_tol,
            maxiter=self.maxiter,
            cond_limit=self.cond_limit,
            solve=getattr(self.curve, "solve", None),
        )

    def tangent(self, J: np.ndarray, u: np.ndarray, prev: np.ndarray | None, sign: float = 1.0):
        own = getattr(self.curve, "tangent", None)
        if own is not None:
            return own(J, u, prev, sign)
        return null_tangent(J, prev, sign)

    def make_point(self, u: np.ndarray, prev: CurvePoint | None = None, sign: float = 1.0):
        """The :class:`CurvePoint` at ``u`` (Jacobian, tangent oriented along ``prev``)."""
        J = self.curve.jacobian(u)
        t = self.tangent(J, u, None if prev is None else prev.tangent, sign)
        s = 0.0 if prev is None else prev.s + float(np.linalg.norm(u - prev.u))
        data = self.curve.data(u) if hasattr(self.curve, "data") else None
        return CurvePoint(u=u, tangent=t, J=J, data=data, s=s)

    # ------------------------------------------------------------------ the stepper
    def attempt(self, point: CurvePoint, h: float, rejects: int) -> Attempt:
        u_pred = point.u + h * point.tangent
        try:
            u, it = self.correct(u_pred, point, point.tangent, float(point.tangent @ u_pred))
        except CorrectionFailed as exc:
            return Attempt(ok=False, h=h, reason="corrector", data={"why": str(exc)})
        if np.linalg.norm(u - point.u) > self.max_move * h:
            return Attempt(ok=False, h=h, reason="jump", iterations=it)
        check = getattr(self.curve, "admissible", None)
        why = check(point, u) if check is not None else ""
        if why:
            return Attempt(ok=False, h=h, reason="admissible", iterations=it, data={"why": why})
        return Attempt(ok=True, point=u, h=h, iterations=it)

    def accepted(self, point: CurvePoint, attempt: Attempt, h_next: float):
        new = self.make_point(attempt.point, point)
        self.points.append(new)
        return new

    def failed(self, point: CurvePoint, error):
        why = error.attempt.data.get("why", error.attempt.reason)
        self.stop_reason = f"the step failed at its smallest length ({why})"
        return self.points

    def finish(self, point: CurvePoint):
        self.stop_reason = self.stop_reason or f"{len(self.points)} points computed"
        return self.points


def locate_event(
    stepper: ArclengthStepper,
    point: CurvePoint,
    h: float,
    g,
    g0: float,
    g1: float,
    *,
    rtol: float = 1e-13,
) -> tuple[np.ndarray, float]:
    """The point of the curve between ``point`` and the next one (at step ``h``) where the
    scalar test function ``g(u)`` vanishes (``g0``, ``g1`` its values at the two ends).

    Points between are corrected from the predictor ``point.u + s t`` on the hyperplane
    orthogonal to the tangent ``t`` (so ``s`` parametrizes the chord), and the zero of
    ``g(u(s))`` is found by the Illinois method to ``rtol`` in ``s``.

    Returns
    -------
    (u, s)

    Raises
    ------
    CorrectionFailed
        When a point between cannot be corrected.
    """
    t = point.tangent
    memo: dict[float, np.ndarray] = {}

    def at(s: float) -> np.ndarray:
        if s not in memo:
            guess = point.u + s * t
            memo[s] = stepper.correct(guess, point, t, float(t @ guess))[0]
        return memo[s]

    s = run(illinois_steps(0.0, h, g0, g1, rtol), lambda s: g(at(s)))
    return at(s), s


def stop_with(result) -> Stop:
    """A :class:`Stop` carrying ``result`` (re-exported for steppers)."""
    return Stop(result)
