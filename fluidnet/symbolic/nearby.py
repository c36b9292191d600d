"""Linearizations at parameter points next to points whose equilibria are known.

A continuation (a root followed along a parameter, a stability boundary traced in a plane)
asks for the linear system at a point a small step away from one it has just solved. The
equilibrium there lies on the same branch, a few Newton steps from the known one: searching
it from scratch (every start, every boundary configuration) costs tens of milliseconds, the
Newton steps tens of microseconds. :func:`linearize_near` takes those steps for many points at
once (the generated steady-state code of :mod:`~fluidnet.symbolic.steadycode`, the damped
Newton iteration of :mod:`~fluidnet.symbolic.densenewton`) and linearizes there (the compiled
plan of :func:`~fluidnet.symbolic.linearize.linearize_batch`).

It continues a branch; it does not choose one. A point is settled only where the Newton
iteration converges and the result passes the tests of the full search (projected states not
negative, the states held at 0 by the projection still held there, the same sign pattern as
the start), with every state free or in the start's boundary configuration: where the branch
folds, ends, or a queue empties or starts to fill, the point is left to the full search
(``ok`` False, with the reason), which the caller runs.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ..errors import ModelError
from .batchequilibria import _settled
from .densenewton import FLOOR, TOL, _Rows, _step, newton
from .equilibrium import _plan as _equilibrium_plan
from .linearize import LinearizedBatch, _linearized_at, _parameter_table, _plan
from .steadycode import steady_code

__all__ = ["linearize_near"]


def linearize_near(model, values: Mapping[str, Any], start: np.ndarray) -> LinearizedBatch:
    """Linearize ``model`` at ``K`` parameter points, each equilibrium continued from a start.

    Parameters
    ----------
    model : fluidnet.Model
    values : dict
        ``{parameter name: value or 1-D array}`` (arrays broadcast to one length ``K``); the
        other parameters take their model values.
    start : numpy.ndarray
        ``(K, n)`` (or ``(n,)`` for all): the equilibrium of a nearby point on the branch to
        follow, states in ``model.state_names`` order. Where the steady-state equations do
        not settle a point with every state free, the projected states exactly 0 in its start
        are held at 0 by the projection (the start's boundary configuration).

    Returns
    -------
    LinearizedBatch
        Points where Newton's method from the start does not settle are ``ok = False``, with
        the reason in ``reasons`` (the caller linearizes them in full).

    Examples
    --------
    >>> import numpy as np
    >>> import fluidnet as fn
    >>> from fluidnet.symbolic.nearby import linearize_near
    >>> m = fn.models.rcp()
    >>> x0 = np.array([m.equilibrium()[s] for s in m.state_names])
    >>> lb = linearize_near(m, {"N": np.array([10.0, 10.5])}, x0)
    >>> lb.ok.tolist(), lb.equilibrium[:, 0].round(3).tolist()
    ([True, True], [1875.0, 1785.714])
    """
    plan = _plan(model)
    if plan.time_error:
        raise ModelError(plan.time_error)
    P, ok, why = _parameter_table(model, values)
    K, n = P.shape[1], len(model.state_names)
    X0 = np.array(np.broadcast_to(np.asarray(start, dtype=float), (K, n)))
    eq_plan = _equilibrium_plan(model)
    code = eq_plan.code
    if code is None:
        code = model.cached("batch steady code", lambda: steady_code(model))
    X = np.zeros((K, n))
    if code is None:
        for j in np.flatnonzero(ok):
            why[j] = "an expression numpy cannot write: solved one point at a time"
        return _linearized_at(plan, P, X, np.zeros(K, dtype=bool), why)
    for j in np.flatnonzero(ok & ~np.all(np.isfinite(X0), axis=1)):
        why[j] = "no start (its state is not finite): the full search decides"
        ok[j] = False
    nonneg = [int(i) for i in model.form.nonnegative]
    at_zero = np.zeros((K, n), dtype=bool)
    for i in nonneg:
        at_zero[:, i] = X0[:, i] == 0.0
    settled = np.zeros(K, dtype=bool)
    # every state free first; then, where that fails, projected states at 0 in the start held
    # there (a queue held empty by the projection)
    for held in (np.zeros((K, n), dtype=bool), at_zero):
        live = np.flatnonzero(ok & ~settled)
        if held.any():
            live = live[held[live].any(axis=1)]
        if not live.size:
            continue
        rows = _plain_newton(code, X0[live], P[:, live].T, held[live])
        again = ~rows.converged
        if again.any():  # the damped iteration of the full search where the plain one fails
            damped = newton(
                code,
                X0[live[again]],
                P[:, live[again]].T,
                held[live[again]],
                nonnegative=np.array(nonneg, dtype=int),
            )
            rows.x[again], rows.residual[again] = damped.x, damped.residual
            rows.converged[again] = damped.converged
        good, x = _settled(
            code, P[:, live], held[live], rows, nonneg, ~np.any(X0[live] < 0, axis=1)
        )
        X[live[good]] = x[good]
        settled[live[good]] = True
    for j in np.flatnonzero(ok & ~settled):
        why[j] = (
            "Newton's method from the nearby equilibrium did not settle (a fold, the end of "
            "the branch, or a projected state changing): the full search decides"
        )
    ok &= settled
    return _linearized_at(plan, P, X, ok, why)


#: Steps of the plain Newton iteration from a nearby start.
PLAIN_STEPS = 8


def _plain_newton(code, X0: np.ndarray, P: np.ndarray, held: np.ndarray):
    """Newton's method without damping from starts close to the roots (a continuation's next
    point), all rows at once, until the scaled residual (each equation by its size) stops
    halving: converged where it reached the rounding floor; the others are left to the damped
    iteration."""
    from .densenewton import NewtonRows

    X = np.array(X0, dtype=float)
    K = len(X)
    X[held] = 0.0
    rows = _Rows(code, P, held)
    best = np.full(K, np.inf)
    best_x = X.copy()
    active = np.arange(K)
    last = np.full(K, np.inf)
    for _ in range(PLAIN_STEPS):
        if not active.size:
            break
        F, J = rows.evaluate(X[active], active)
        finite = np.all(np.isfinite(F), axis=1) & np.all(np.isfinite(J), axis=(1, 2))
        dX, r, _ = _step(
            np.where(finite[:, None], F, 0.0), np.where(finite[:, None, None], J, 0.0), X[active]
        )
        err = np.where(finite, np.max(np.abs(r), axis=1), np.inf)
        better = err < best[active]
        best[active[better]] = err[better]
        best_x[active[better]] = X[active[better]]
        # on to the rounding level, while each step still gains (quadratic convergence)
        go = finite & (err > TOL) & (err < 0.5 * last[active]) & np.all(np.isfinite(dX), axis=1)
        last[active] = err
        active, dX = active[go], dX[go]
        X[active] -= dX
    return NewtonRows(best_x, best, best <= FLOOR)
