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
the start), with every state free or in the start's boundary configuration, tried in that
order. Where a queue empties or starts to fill on the way, those attempts converge to points
the tests reject, and the rejection names the new configuration: a projected state driven
below 0 is held at 0 (its equation must then push down), a held state whose equation turned
positive is freed. Newton's method from the start in those configurations, with the same
tests, settles the point; of two that pass, the one the full search ranks first (no state
held, then no negative state, then fewer zero states). Where the branch folds or ends, where
no configuration passes, or where two are tied in that order, the point is left to the full
search (``ok`` False, with the reason), which the caller runs. A start that is, bit for bit, an
equilibrium settled here before at a point that differs only in parameters that scale the
equations' rows or delay them (:func:`~fluidnet.symbolic.rowscaling.known_equilibria`: a gain, a
delay) is that point's equilibrium: it is linearized without the Newton steps and tests.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from ..errors import ModelError
from ..linear.lineardde import LinearDDE
from .batchequilibria import _settled
from .densenewton import FLOOR, KERNEL_BELOW, TOL, _kernel, _Rows, _sizes, _step, _step_in, newton
from .equilibrium import _plan as _equilibrium_plan
from .equilibrium import rank_key
from .linearize import LinearizedBatch, _linearized_at, _parameter_table, _plan
from .rowscaling import keep_equilibria, known_equilibria, recalls_between
from .steadycode import steady_code

__all__ = ["NearbyPoint", "linearize_near"]


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
        are held at 0 by the projection (the start's boundary configuration); where that fails
        too, the configurations the rejected attempts point to (see the module).

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
    kind = ~np.any(X0 < 0, axis=1)
    # a start settled at a point of the same class (only parameters that scale the rows
    # differ): an equilibrium here too, which the attempts below would return unchanged (kept
    # and looked up only where the points vary in such parameters alone)
    recall = recalls_between(model, values)
    known = ok & known_equilibria(model, P, X0) if recall else np.zeros(K, dtype=bool)
    X[known], settled[known] = X0[known], True

    def attempt(held: np.ndarray, live: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Newton's method at rows ``live`` with ``held`` ``(K, n)``: ``(passed, reached)``,
        the rows that pass the tests (their equilibria in ``X``, ``settled``) and the points
        converged to (NaN where not)."""
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
        reached = np.where(rows.converged[:, None], rows.x, np.nan)
        good, x = _settled(code, P[:, live], held[live], rows, nonneg, kind[live])
        X[live[good]] = x[good]
        settled[live[good]] = True
        return good, reached

    # every state free first; then, where that fails, projected states at 0 in the start held
    # there (a queue held empty by the projection)
    changed: list[tuple[np.ndarray, np.ndarray]] = []  # (rows, configuration of each)
    for held in (np.zeros((K, n), dtype=bool), at_zero):
        live = np.flatnonzero(ok & ~settled)
        if held.any():
            live = live[held[live].any(axis=1)]
        if not live.size:
            continue
        good, reached = attempt(held, live)
        # where a converged point was rejected: the configuration it points to
        back = ~good & np.all(np.isfinite(reached), axis=1)
        if back.any():
            rows, at = live[back], reached[back]
            F = code.f(at.T, P[:, rows]).T if held[rows].any() else None
            new = np.array(
                [
                    _changed(at[r], None if F is None else F[r], held[j], nonneg)
                    for r, j in enumerate(rows)
                ]
            )
            changed.append((rows, new))
    # a queue that empties or fills on the way: the configurations pointed to, each row's
    # equilibria ranked as the full search ranks them
    found: dict[int, list] = {}
    tried: dict[int, list] = {}  # the configurations tried at a row
    for rows, new in changed:
        for j in rows:
            tried.setdefault(int(j), [np.zeros(n, dtype=bool), at_zero[j]])
        fresh = np.array(
            [
                not settled[j] and not any(np.array_equal(new[r], h) for h in tried[int(j)])
                for r, j in enumerate(rows)
            ],
            dtype=bool,
        )
        rows, new = rows[fresh], new[fresh]
        if not rows.size:
            continue
        for r, j in enumerate(rows):
            tried[int(j)].append(new[r])
        held = np.zeros((K, n), dtype=bool)
        held[rows] = new
        keep = X[rows].copy()
        good, _ = attempt(held, rows)
        for r, j in enumerate(rows):
            if good[r]:
                x = X[j].copy()
                mine = found.setdefault(int(j), [])
                if not any(np.allclose(x, y, rtol=1e-9, atol=1e-12) for _, y in mine):
                    mine.append((rank_key(x, bool(held[j].any())), x))
                X[j], settled[j] = keep[r], False  # decided by the ranking below
    for j, mine in found.items():
        x, reason = _first_ranked(mine)
        if x is not None:
            X[j], settled[j] = x, True
        else:
            why[j] = reason
    for j in np.flatnonzero(ok & ~settled):
        why[j] = why[j] or NOT_SETTLED
    ok &= settled
    if recall:
        keep_equilibria(model, P, X, ok & ~known)
    return _linearized_at(plan, P, X, ok, why)


#: Steps of the plain Newton iteration from a nearby start.
PLAIN_STEPS = 8

NOT_SETTLED = (
    "Newton's method from the nearby equilibrium did not settle (a fold, the end of the "
    "branch, or a projected state changing): the full search decides"
)
TIED = (
    "equilibria in two boundary configurations tied by the documented order: the full "
    "search decides"
)


def _changed(reached: np.ndarray, F: np.ndarray | None, held: np.ndarray, nonneg) -> np.ndarray:
    """The boundary configuration a converged but rejected attempt points to: the projected
    states it drove below 0 held at 0 (a queue that empties), the held states whose equation
    ``F`` (all equations, at ``reached``) is positive there freed (a queue that fills)."""
    new = held.copy()
    big = max(1.0, float(np.max(np.abs(reached))))
    for i in nonneg:
        if not held[i] and reached[i] < -1e-12 * big:
            new[i] = True
        elif held[i] and F is not None and F[i] > 0:
            new[i] = False
    return new


def _first_ranked(found: list) -> tuple[np.ndarray | None, str]:
    """``(x, "")`` for the ``(key, x)`` ranked first, ``(None, reason)`` for none or a tie."""
    if not found:
        return None, NOT_SETTLED
    found = sorted(found, key=lambda f: f[0])
    if len(found) > 1 and found[0][0] == found[1][0]:
        return None, TIED
    return found[0][1], ""


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
        F = np.where(finite[:, None], F, 0.0)
        J = np.where(finite[:, None, None], J, 0.0)
        with np.errstate(all="ignore"):
            r = F / _sizes(J, X[active])  # the scaled residuals of _step, before its solve
        err = np.where(finite, np.max(np.abs(r), axis=1), np.inf)
        better = err < best[active]
        best[active[better]] = err[better]
        best_x[active[better]] = X[active[better]]
        # on to the rounding level, while each step still gains (quadratic convergence); the
        # step is solved only for those rows (a converged start, as a continuation's next
        # point often is, costs no solve)
        go = finite & (err > TOL) & (err < 0.5 * last[active])
        last[active] = err
        dX = _step(F[go], J[go], X[active[go]])[0] if go.any() else np.zeros((0, X.shape[1]))
        ok = np.all(np.isfinite(dX), axis=1)
        active, dX = active[go][ok], dX[ok]
        X[active] -= dX
    return NewtonRows(best_x, best, best <= FLOOR)


class NearbyPoint:
    """:func:`linearize_near` at one parameter point at a time, for a continuation that asks
    for one point per step (a root followed along a parameter).

    The same iteration and the same acceptance tests as :func:`linearize_near` with ``K = 1``
    (every state free first, then the start's boundary configuration, then the configurations
    the rejected attempts point to, ranked as the full search ranks them; plain Newton, the
    damped iteration where it fails; the tests of the full search: converged, projected states not
    negative, no negative state where the start had none, relative residuals of the free
    equations below ``RESIDUAL_TOL``, held equations pushing down by more than rounding, no free
    projected state at 0 pushed down, the right-hand sides as written finite, the scaled
    Jacobian not singular; Jacobian entries and delays finite and real, the point off every
    switching surface), written for one point: the generated code evaluated on scalars, the
    parameter table built once, the residuals of the last Newton round reused by the tests.
    A single point through :func:`linearize_near` costs about ten times more in array
    overhead.

    Parameters
    ----------
    model : fluidnet.Model
    fixed : dict
        Parameter values of every point (the model's values for the others).

    Examples
    --------
    >>> import numpy as np
    >>> import fluidnet as fn
    >>> from fluidnet.symbolic.nearby import NearbyPoint
    >>> m = fn.models.rcp()
    >>> x0 = np.array([m.equilibrium()[s] for s in m.state_names])
    >>> lin, x, why = NearbyPoint(m, {})({"N": 10.5}, x0)
    >>> round(float(x[0]), 3), why
    (1785.714, '')
    """

    def __init__(self, model, fixed: Mapping[str, float]):
        from .batchequilibria import SINGULAR_CHECK_MAX
        from .equilibrium import RESIDUAL_TOL
        from .linearize import BATCH_ENTRIES

        self.model = model
        self._recalls: dict[frozenset, bool] = {}
        plan = self.plan = _plan(model)
        if plan.time_error:
            raise ModelError(plan.time_error)
        P, ok, why = _parameter_table(model, {k: float(v) for k, v in fixed.items()})
        self.base = P[:, 0].copy()
        self.base_why = "" if ok[0] else why[0]
        self.index = {k: i for i, k in enumerate(model.param_names)}
        self.bounds = {k: model.params[k].bounds for k in model.param_names}
        code = _equilibrium_plan(model).code
        if code is None:
            code = model.cached("batch steady code", lambda: steady_code(model))
        self.code = code
        n = self.n = len(model.state_names)
        self.nonneg = [int(i) for i in model.form.nonnegative]
        self.residual_tol = RESIDUAL_TOL
        self.check_singular = n <= SINGULAR_CHECK_MAX
        form = plan.form
        self.L, self.G = len(form.lags), plan.n_groups
        self.too_big = self.G * n * n > BATCH_ENTRIES
        self.first = np.unique(plan.delay_group, return_index=True)[1] if self.L else None
        n0 = plan.n0
        lag_k = plan.cols[n0:]
        self.at = (plan.delay_group[lag_k], plan.rows[n0:], plan.lag_states[lag_k])
        if code is not None:
            self.rows, self.cols = code.sparsity(())
            self.one_config = len(code.subsets) == 1

    def _recall(self, values: Mapping[str, float]) -> bool:
        """Whether the points vary only in parameters that scale rows or delay (see
        :func:`linearize_near`), per set of names."""
        names = frozenset(values)
        got = self._recalls.get(names)
        if got is None:
            got = self._recalls[names] = recalls_between(self.model, names)
        return got

    def parameters(self, values: Mapping[str, float]) -> tuple[np.ndarray, str]:
        """The parameter vector of a point, and why it is not valid (``""`` when it is)."""
        p = self.base.copy()
        why = self.base_why
        for k, v in values.items():
            i = self.index.get(k)
            if i is None:
                self.model.resolve_params({k: 0.0})  # raises the unknown-parameter error
                raise ModelError(f"unknown parameter {k!r}")  # pragma: no cover
            v = float(v)
            p[i] = v
            lo, hi = self.bounds[k]
            if not math.isfinite(v) or (lo is not None and v < lo) or (hi is not None and v > hi):
                why = why or f"parameter {k!r} = {v:g} is not finite or out of its bounds"
        return p, why

    def __call__(
        self, values: Mapping[str, float], start: np.ndarray
    ) -> tuple[LinearDDE | None, np.ndarray | None, str]:
        """``(system, equilibrium, "")`` at ``values``, the equilibrium continued from
        ``start`` (``(n,)``), or ``(None, None, reason)`` where :func:`linearize_near` would
        leave the point to the full search."""
        p, why = self.parameters(values)
        if why:
            return None, None, why
        if self.code is None:
            return None, None, "an expression numpy cannot write: solved one point at a time"
        x0 = np.array(start, dtype=float).reshape(self.n)
        if not np.all(np.isfinite(x0)):
            return None, None, "no start (its state is not finite): the full search decides"
        recall = self._recall(values)
        if recall and known_equilibria(self.model, p[:, None], x0[None])[0]:
            lin, why = self._linearized(x0, p)  # see linearize_near
            return (None, None, why) if lin is None else (lin, x0, "")
        kind = not bool(np.any(x0 < 0))
        free = np.zeros(self.n, dtype=bool)
        at_zero = np.zeros(self.n, dtype=bool)
        for i in self.nonneg:
            at_zero[i] = x0[i] == 0.0
        x, why = None, NOT_SETTLED
        changed: list[np.ndarray] = []
        for held in (free, at_zero):
            if held is at_zero and not held.any():
                break
            x, reached = self._settle(x0, p, held, kind)
            if x is not None:
                break
            if reached is not None:
                F = self._evaluate(reached, p, ())[0] if held.any() else None
                changed.append(_changed(reached, F, held, self.nonneg))
        if x is None:  # a queue that empties or fills on the way: its new configuration
            x, why = self._changed_configuration(x0, p, kind, changed, (free, at_zero))
        if x is None:
            return None, None, why
        if recall:
            keep_equilibria(self.model, p[:, None], x[None], np.ones(1, dtype=bool))
        lin, why = self._linearized(x, p)
        if lin is None:
            return None, None, why
        return lin, x, ""

    def _changed_configuration(
        self, x0: np.ndarray, p: np.ndarray, kind: bool, changed: list, tried: tuple
    ) -> tuple[np.ndarray | None, str]:
        """``(x, "")``: the equilibrium in a configuration the first two attempts point to
        (:func:`_changed`), by the same iteration and tests; of two that pass, the one the
        full search ranks first. ``(None, reason)`` where none passes or two are tied."""
        found: list[tuple[tuple, np.ndarray]] = []
        seen = list(tried)
        for held in changed:
            if any(np.array_equal(held, h) for h in seen):
                continue
            seen.append(held)
            x, _ = self._settle(x0, p, held, kind)
            if x is None or any(np.allclose(x, y, rtol=1e-9, atol=1e-12) for _, y in found):
                continue
            found.append((rank_key(x, bool(held.any())), x))
        return _first_ranked(found)

    # -- the steady state
    def _evaluate(self, x: np.ndarray, p: np.ndarray, sub: tuple) -> tuple[np.ndarray, np.ndarray]:
        """The residuals and dense Jacobian of configuration ``sub`` at ``x`` (raw: the held
        states' equations as written)."""
        code = self.code
        F, E = code.values_and_entries(x, p, sub)
        rows, cols = code.sparsity(sub)
        J = np.zeros((self.n, self.n))
        J[rows, cols] = E
        return np.asarray(F, dtype=float), J

    def _settle(
        self, x0: np.ndarray, p: np.ndarray, held: np.ndarray, kind: bool
    ) -> tuple[np.ndarray | None, np.ndarray | None]:
        """``(x, reached)``: the equilibrium from ``x0`` with ``held`` at 0 if it passes the
        tests (else None), and the point Newton's method converged to (None where it did
        not)."""
        code = self.code
        sub = tuple(int(i) for i in np.flatnonzero(held))
        x = x0.copy()
        x[held] = 0.0
        best, best_x, best_FJ = math.inf, x.copy(), None
        last = math.inf
        for _ in range(PLAIN_STEPS):
            F, J = self._evaluate(x, p, sub)
            Fh, Jh = F, J
            if sub:
                Fh = np.where(held, x, F)
                Jh = J.copy()
                Jh[sub, :] = 0.0
                Jh[sub, sub] = 1.0
            finite = bool(np.isfinite(Fh).all() and np.isfinite(Jh).all())
            if not finite:
                break
            dx, err = _point_step(Fh, Jh, x)
            if err < best:
                best, best_x, best_FJ = err, x.copy(), (F, J)
            if not (err > TOL and err < 0.5 * last and np.isfinite(dx).all()):
                break
            last = err
            x = x - dx
        converged = best <= FLOOR
        if not converged:  # the damped iteration of the full search where the plain one fails
            damped = newton(
                code,
                x0[None],
                p[None],
                held[None],
                nonnegative=np.array(self.nonneg, dtype=int),
            )
            best_x, converged, best_FJ = damped.x[0].copy(), bool(damped.converged[0]), None
        if not converged:
            return None, None
        reached = best_x.copy()
        return self._tested(best_x, p, held, kind, best_FJ, sub), reached

    def _tested(self, x, p, held, kind: bool, FJ, sub: tuple):
        """``x`` (projected states within rounding of 0 set to 0) when it passes the tests of
        the full search (those of ``batchequilibria._settled``), else None."""
        code = self.code
        if not np.all(np.isfinite(x)):
            return None
        big = max(1.0, float(np.max(np.abs(x))))
        snapped = False
        for i in self.nonneg:
            if x[i] < -1e-12 * big:
                return None
            if abs(x[i]) <= 1e-12 * big and x[i] != 0.0:
                x[i] = 0.0
                snapped = True
        if kind and np.any(x < 0):
            return None
        # the raw residuals and Jacobian of the full equations at x (those of the last Newton
        # round when x is where they were evaluated, with the same function)
        if FJ is None or snapped or (sub and not self.one_config):
            FJ = self._evaluate(x, p, ())
        F, J = FJ
        scale = code.scales(x, p)
        with np.errstate(all="ignore"):
            rel = np.where(F == 0, 0.0, np.abs(F) / scale)
        tol = self.residual_tol
        free_ok = np.where(held, True, rel <= tol)
        held_ok = np.where(held, (x == 0) & (F < 0), True)
        held_ok &= np.where(held, np.abs(F) > tol * np.maximum(1.0, scale), True)
        if not np.all(free_ok & held_ok):
            return None
        for i in self.nonneg:
            if not held[i] and x[i] == 0 and F[i] < 0:
                return None
        z = x[code.lag_states] if code.lag_states.size else np.zeros(0)
        if not np.all(np.isfinite(code.raw(x, z, p))):
            return None
        if self.check_singular and _singular_point(J, x, held):
            return None
        return x

    # -- the linearization
    def _linearized(self, x: np.ndarray, p: np.ndarray) -> tuple[LinearDDE | None, str]:
        plan = self.plan
        n, G = self.n, self.G
        if self.too_big:
            return None, "too many delays for dense stacked matrices: one point at a time"
        bad = "a Jacobian entry or delay not finite and real, or the point on a switching surface"
        vals = plan.entries(x, p)
        taus = plan.delays(x, p) if self.L else np.zeros(0)
        for M in (vals, taus):
            if np.iscomplexobj(M):
                if not np.all(np.abs(np.imag(M)) <= 1e-12 * np.maximum(1.0, np.abs(np.real(M)))):
                    return None, bad
        vals, taus = np.real(vals), np.real(taus)
        if not (np.all(np.isfinite(vals)) and np.all(np.isfinite(taus) & (taus >= 0))):
            return None, bad
        if _on_switching_surface(plan, x, p):
            return None, bad
        n0 = plan.n0
        A0 = np.zeros((n, n))
        A0[plan.rows[:n0], plan.cols[:n0]] = vals[:n0]
        A = np.zeros((G, n, n))
        np.add.at(A, self.at, vals[n0:])
        tau = taus[self.first] if self.L else np.zeros(0)
        return LinearDDE(A0, list(zip(tau, A, strict=True))), ""


def _point_step(F: np.ndarray, J: np.ndarray, x: np.ndarray) -> tuple[np.ndarray, float]:
    """The Newton step of one point and its largest scaled residual, scaled as
    ``densenewton._step`` scales them (rows by size, columns by the states' magnitudes); a zero
    step, unsolved, where the residual is at the rounding level ``TOL`` (no step is taken).
    By the compiled kernel of ``densenewton._step_in`` where it is built, else in NumPy."""
    if not (0 < x.size < KERNEL_BELOW and _kernel() is not None):
        return _point_step_numpy(F, J, x)
    with np.errstate(all="ignore"):
        dX, r, _ = _step_in(F[None, :], J[None, :, :], x[None, :])
    err = float(np.abs(r).max())
    if err > TOL:
        return dX[0], err
    if np.isfinite(dX).all():  # converged: no step
        return np.zeros(x.shape), err
    # not finite: a system that is not finite (a NaN step) or an overflowing solve (no step)
    return _point_step_numpy(F, J, x)


def _point_step_numpy(F: np.ndarray, J: np.ndarray, x: np.ndarray) -> tuple[np.ndarray, float]:
    """:func:`_point_step` in NumPy (LAPACK's solve, ``numpy.linalg.pinv`` where singular)."""
    with np.errstate(all="ignore"):
        ax = np.abs(x)
        s = np.abs(J) @ ax
        rows = np.where((s > 0) & np.isfinite(s), s, 1.0)
        cols = np.where(ax > 0, np.maximum(ax, 1e-300), 1.0)
        A = J * cols[None, :] / rows[:, None]
        r = F / rows
    err = float(np.abs(r).max())
    if not (np.isfinite(A).all() and np.isfinite(r).all()):
        return np.full(x.shape, np.nan), err
    if not err > TOL:  # converged: the caller takes no step (no solve)
        return np.zeros(x.shape), err
    try:
        y = np.linalg.solve(A, r)
    except np.linalg.LinAlgError:  # singular: the step of least norm, as solve_rows takes it
        y = np.linalg.pinv(A, rcond=A.shape[0] * np.finfo(float).eps) @ r
    return y * cols, err


def _singular_point(J: np.ndarray, x: np.ndarray, held: np.ndarray) -> bool:
    """Whether the Jacobian of the active system at one point, rows scaled by their sizes and
    columns by the states' magnitudes, is singular to rounding (``batchequilibria._singular``
    for one point)."""
    from .batchequilibria import SINGULAR_RATIO

    J = J.copy()
    for i in np.flatnonzero(held):
        J[i, :] = 0.0
        J[i, i] = 1.0
    cols = np.where(x != 0, np.abs(x), 1.0)
    with np.errstate(all="ignore"):
        A = J * cols[None, :]
        rows = np.sum(np.abs(A), axis=1)
        A = A / np.where(rows > 0, rows, 1.0)[:, None]
    if not np.all(np.isfinite(A)):
        return True
    sv = np.linalg.svd(A, compute_uv=False)
    return bool(sv[-1] <= SINGULAR_RATIO * sv[0])


def _on_switching_surface(plan, x: np.ndarray, p: np.ndarray) -> bool:
    """Whether the steady state lies on a switching surface (the test of
    ``linearize._on_switching_surfaces_batch`` for one point)."""
    from .linearize import SURFACE_TOL

    switches, values, scales = plan.switch_check()
    if not switches:
        return False
    w = np.zeros(len(switches))
    s = w
    for _ in range(len(switches)):  # nested switches: inner weights first
        s = values(x, p, w)
        w = (s > 0).astype(float)
    scale = scales(x, p, w)
    return bool(np.any(np.abs(s) <= SURFACE_TOL * np.maximum(1.0, np.abs(scale))))
