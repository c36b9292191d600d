"""Steady states of large models: sparse, scaled, damped Newton on the steady-state equations.

The equilibrium search of a small model (:mod:`fluidnet.symbolic.equilibrium`) expands the
steady-state equations, differentiates them into a dense Jacobian and runs a root finder with
finite-difference Jacobians from a set of starts: for a network of a thousand flows the
expansion, the dense Jacobian (a million derivatives) and the root finder's Jacobians took
minutes. A large model is solved here instead:

* the equations are kept as written (not expanded) and split into one definition per operation
  (:func:`~fluidnet.symbolic.jacobians.forward_jacobian`): shared subexpressions (a link's load
  in the equation of every flow on the link) are evaluated once and the Jacobian is built
  sparsely, its cost growing with its nonzero entries, not with ``n^2``;
* the size of each equation is measured without expanding it, from its sensitivity to the
  states: ``size_i = sum_j |df_i/dx_j| |x_j|``, so that ``|f_i| / size_i`` is the relative
  change of the states that would explain the residual (a componentwise backward error, to
  first order; for a sum of monomials the size is their absolute values weighted by their
  degrees);
* Newton's method runs from every start at once (the compiled functions evaluated on arrays),
  each step an LU solve of the Jacobian (sparse, or NumPy's dense LU up to
  :data:`DENSE_STATES` states) with its rows scaled by the equations' sizes
  (equations whose values fall geometrically, from 1 to 1e-90, are solved to their own
  precision), damped by backtracking on the scaled residual;
* a projected state ``x_i >= 0`` is handled by an active set: while ``x_i = 0`` and its
  equation is negative, the state is held (its equation is replaced by ``x_i = 0``), otherwise
  its equation must vanish, so each start settles on a boundary configuration of its own.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import cast

import numpy as np

from ..threads import single_threaded_blas
from .densenewton import LeadingRows
from .npsource import GeneratedFunction, real_function_source
from .steadycode import run_source

__all__ = ["SparseSteadyState"]

#: Newton iterations per start.
MAX_ITERATIONS = 60
#: Halvings of a Newton step before a start is given up.
MAX_HALVINGS = 30
#: Rounds (evaluations of every running start's trial point) of one search: starts still
#: running then are given up (a smooth network law takes up to a hundred rounds from a start
#: spread over six decades, a switching one such as Kelly's dual law with capped rates up to
#: about 250).
MAX_ROUNDS = 300
#: Up to this many states the Jacobian's solves and its condition number are dense (NumPy's
#: LAPACK: 0.1-0.3 ms for a 100-state network), and SciPy's sparse LU only beyond: its import
#: (0.34 s) was most of the first equilibrium of a 100-state network in a process.
DENSE_STATES = 400
#: A scaled residual below which a start that stops improving is at its rounding floor (far
#: from a root the scaled residual of a power law is flat: about 1/5 for ``x^5 = c``).
FLOOR = 1e-10


def _module_source(n: int, rows, cols, args, exprs, definitions) -> str | None:
    """A module defining ``N``, ``ROWS``, ``COLS`` and ``fj(x, p)``: the values of the
    equations and the Jacobian's entries at ``(ROWS, COLS)`` (``None`` where an expression
    has no generated form)."""
    fj = real_function_source("fj", args, exprs, definitions=definitions)
    if fj is None:
        return None
    return "\n".join(
        [
            f"N = {int(n)}",
            f"ROWS = {tuple(int(r) for r in rows)!r}",
            f"COLS = {tuple(int(c) for c in cols)!r}",
            fj,
        ]
    )


class SparseSteadyState:
    """The steady-state equations ``f(x, p) = 0`` of a large model, compiled sparsely.

    Parameters
    ----------
    eqs : list of sympy.Expr
        The steady-state equations (every delayed value replaced by the current one), as
        written.
    x, p : tuple of sympy.Symbol
        State and parameter symbols.
    nonnegative : tuple of int
        Projected states.
    """

    def __init__(self, eqs, x, p, nonnegative=()):
        from .jacobians import forward_jacobian
        from .numeric import to_numpy

        values, derivs, outputs, entries = forward_jacobian(eqs, list(x))
        args = (tuple(x), tuple(p))
        rows = [e[0] for e in entries]
        cols = [e[1] for e in entries]
        # one function for the values and the Jacobian's entries: the definitions they share
        # are evaluated once
        exprs = [*outputs, *(e[2] for e in entries)]
        #: the same function as generated source (see :meth:`from_source`), or None where an
        #: expression has no numpy form in :mod:`~fluidnet.symbolic.npsource`
        self.source = _module_source(len(x), rows, cols, args, exprs, values + derivs)
        if self.source is not None:
            evaluate = GeneratedFunction(run_source(self.source, "sparse steady state")["fj"])
        else:
            evaluate = to_numpy(args, exprs, definitions=values + derivs)
        self._setup(len(x), rows, cols, evaluate, nonnegative)

    @classmethod
    def from_source(cls, source: str, n: int, nonnegative=()) -> SparseSteadyState:
        """The steady state of ``n`` states from the :attr:`source` of an earlier one (a
        model's record: a later process reads it instead of differentiating and printing
        again); raises :class:`ValueError` for the source of another number of states."""
        ns = run_source(source, "sparse steady state")
        if int(ns["N"]) != n:
            raise ValueError(f"a kept steady state of {ns['N']} states, not {n}")
        self = cls.__new__(cls)
        self.source = source
        self._setup(int(ns["N"]), ns["ROWS"], ns["COLS"], GeneratedFunction(ns["fj"]), nonnegative)
        return self

    def _setup(self, n: int, rows, cols, evaluate, nonnegative) -> None:
        self.n = n
        self.rows = np.array(rows, dtype=np.intp)
        self.cols = np.array(cols, dtype=np.intp)
        self.evaluate = evaluate
        self.nonnegative = np.array(sorted(nonnegative), dtype=np.intp)
        self._layouts: dict[bytes, tuple[np.ndarray, np.ndarray, np.ndarray] | None] = {}

    # ------------------------------------------------------------------ single points
    def f(self, x: np.ndarray, p: np.ndarray) -> np.ndarray:
        """The values of the steady-state equations at ``x``."""
        return self._real(self.evaluate(x, p))[: self.n]

    def sizes(self, x: np.ndarray, p: np.ndarray) -> np.ndarray:
        """``sum_j |df_i/dx_j| |x_j|`` for every equation ``i`` (NaN where not finite)."""
        return self._sizes(x, self._real(self.evaluate(x, p))[self.n :])

    def dense_jacobian(self, x: np.ndarray, p: np.ndarray) -> np.ndarray:
        """The Jacobian at ``x`` as a dense array (NaN everywhere where it is not finite)."""
        vals = self._real(self.evaluate(x, p))[self.n :]
        if not np.all(np.isfinite(vals)):
            return np.full((self.n, self.n), np.nan)
        return self._dense(vals, self.rows, self.cols)

    def _dense(self, vals: np.ndarray, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
        """The ``(n, n)`` array of the entries ``vals`` at ``(rows, cols)``, entries that
        share a place summed (as SciPy's conversion from coordinates does)."""
        J = np.zeros((self.n, self.n))
        np.add.at(J, (rows, cols), vals)
        return J

    def _sizes(self, x: np.ndarray, E: np.ndarray) -> np.ndarray:
        return np.bincount(self.rows, weights=np.abs(E) * np.abs(x[self.cols]), minlength=self.n)

    @staticmethod
    def _real(values: np.ndarray) -> np.ndarray:
        """Complex values (a root of a negative number) are not finite real ones: NaN."""
        if np.iscomplexobj(values):
            return np.where(np.imag(values) == 0, np.real(values), np.nan)
        return values

    def well_conditioned(self, x: np.ndarray, p: np.ndarray, free, limit: float = 1e10) -> bool:
        """Whether the Jacobian of the equations ``free`` in the states ``free`` at ``x``, its
        rows scaled by the equations' sizes, is nonsingular with a condition number
        (1-norm, computed from the dense inverse up to :data:`DENSE_STATES` states, beyond
        estimated from its sparse LU factors) below ``limit``."""
        E = self._real(self.evaluate(x, p))[self.n :]  # one evaluation: entries and sizes
        if not np.all(np.isfinite(E)):
            return False
        free = np.asarray(free, dtype=np.intp)
        rows = self._sizes(x, E)[free]
        rows = np.where((rows > 0) & np.isfinite(rows), rows, 1.0)
        if self.n <= DENSE_STATES:
            J = self._dense(E, self.rows, self.cols)[np.ix_(free, free)] / rows[:, None]
            with single_threaded_blas():
                try:
                    inverse = np.linalg.inv(J)
                except np.linalg.LinAlgError:
                    return False  # exactly singular
            with np.errstate(all="ignore"):
                cond = float(np.abs(J).sum(axis=0).max() * np.abs(inverse).sum(axis=0).max())
            return bool(np.isfinite(cond) and cond < limit)
        from scipy import sparse
        from scipy.sparse.linalg import LinearOperator, onenormest, splu

        J = sparse.csc_matrix((E, (self.rows, self.cols)), shape=(self.n, self.n))
        J = sparse.diags(1.0 / rows) @ J[free][:, free]
        try:
            lu = splu(sparse.csc_matrix(J))
        except (RuntimeError, ValueError):
            return False  # exactly singular
        size = J.shape[0]
        # LinearOperator(shape, matvec=...) builds scipy's _CustomLinearOperator in __new__;
        # pyright checks the arguments against the abstract base's __init__(dtype, shape)
        inverse = LinearOperator(  # pyright: ignore[reportCallIssue]
            (size, size),
            matvec=lu.solve,  # pyright: ignore[reportCallIssue]
            rmatvec=lambda v: lu.solve(v, trans="T"),  # pyright: ignore[reportCallIssue]
        )
        with np.errstate(all="ignore"):
            # a number: onenormest returns a tuple only with compute_v or compute_w
            est = cast(float, onenormest(inverse))
            cond = float(abs(J).sum(axis=0).max()) * est
        return bool(np.isfinite(cond) and cond < limit)

    # ------------------------------------------------------------------ Newton from many starts
    def solve(
        self,
        starts: np.ndarray,
        p: np.ndarray,
        *,
        tol: float = 1e-15,
        accept: float = 1e-8,
        until: Callable[[np.ndarray, np.ndarray, int, int], bool] | None = None,
    ) -> list[np.ndarray]:
        """Damped Newton from every row of ``starts`` at once; the points where it settled.

        A start is followed until the scaled residual of every equation that must vanish is
        below ``tol`` or stops decreasing; one whose equations or Jacobian are not finite is
        dropped (where the Jacobian is singular, the step is the least-squares step of least
        norm, which reaches a point of a continuum of solutions). The points returned are
        those where the largest scaled residual reached (each equation relative to its size)
        is at most ``accept``.

        Every round evaluates the trial point of every start still running in one call of the
        compiled functions (whose cost hardly depends on the number of points): a start whose
        trial point lowers its scaled residual takes its next Newton step from there, one whose
        trial point does not halves its step, so starts needing many halvings do not hold up
        the others.

        ``until(x, found, a, b)``, when given, is called whenever starts ``a`` to ``b - 1``
        have joined the leading starts that are finished (every start before them finished
        too: their best points ``x[a:b]`` and whether they settled, ``found[a:b]``, are final),
        and for the starts left when the rounds end. When it returns True the iteration stops
        there and the points of the finished leading starts are returned (a caller that wants
        the first starts' outcome, in order, does not wait for the others). Every start's
        iteration is its own (one evaluation per point, one factorization per start), so a
        leading start finishes exactly as it does in the full run.
        """
        n = self.n
        X = np.array(starts, dtype=float, copy=True)
        if len(self.nonnegative):
            X[:, self.nonnegative] = np.maximum(X[:, self.nonnegative], 0.0)
        K = len(X)
        running = np.ones(K, dtype=bool)
        found = np.zeros(K, dtype=bool)
        best = np.full(K, np.inf)
        best_x = X.copy()
        steps = np.zeros((K, n))
        scale = np.ones((K, n))
        held = np.zeros((K, n), dtype=bool)
        phi = np.zeros(K)
        lam = np.ones(K)
        iterations = np.zeros(K, dtype=int)
        halvings = np.zeros(K, dtype=int)

        def newton_step(k: int, x: np.ndarray, values: np.ndarray) -> None:
            """From the accepted point ``x`` (its evaluation ``values``): stop, or the next
            step of start ``k``."""
            F, E = values[:n], values[n:]
            if not (np.all(np.isfinite(F)) and np.all(np.isfinite(E))):
                running[k] = False
                return
            held[k] = self._held(x, F)
            r, scale[k] = self._scaled_residual(x, F, self._sizes(x, E), held[k])
            err = float(np.max(np.abs(r))) if n else 0.0
            if err < best[k]:
                best[k], best_x[k] = err, x
            if err <= tol or (err > best[k] and best[k] <= FLOOR):
                running[k] = False  # converged, or no progress at the rounding floor
                found[k] = best[k] <= accept
                return
            if iterations[k] >= MAX_ITERATIONS:
                running[k] = False
                found[k] = best[k] <= accept
                return
            step = self._step(E, held[k], scale[k], r)
            if not np.all(np.isfinite(step)):
                running[k] = False
                return
            with np.errstate(over="ignore"):
                phi_k = float(np.linalg.norm(r))
            steps[k], phi[k], lam[k], halvings[k] = step, phi_k, 1.0, 0
            iterations[k] += 1

        leading = LeadingRows(until, K)
        A = self._real(self.evaluate.batch(X.T, p))  # values and Jacobian entries
        for k in range(K):
            newton_step(k, X[k], A[k])
        for _ in range(MAX_ROUNDS):
            if leading(running, best_x, found):
                return [best_x[k] for k in range(leading.done) if found[k]]
            ks = np.flatnonzero(running)
            if not ks.size:
                break
            trial = X[ks] - lam[ks, None] * steps[ks]
            if len(self.nonnegative):
                trial[:, self.nonnegative] = np.maximum(trial[:, self.nonnegative], 0.0)
            At = self._real(self.evaluate.batch(trial.T, p))
            for i, k in enumerate(ks):
                F = At[i, :n]
                merit = np.inf
                if np.all(np.isfinite(F)):
                    with np.errstate(over="ignore"):  # a norm beyond the doubles: no decrease
                        merit = float(np.linalg.norm(np.where(held[k], trial[i], F) / scale[k]))
                if merit <= (1.0 - 1e-4 * lam[k]) * phi[k]:
                    X[k] = trial[i]
                    newton_step(int(k), X[k], At[i])
                elif halvings[k] < MAX_HALVINGS:
                    lam[k] /= 2.0
                    halvings[k] += 1
                else:  # no decrease however short the step: at the rounding floor
                    running[k] = False
                    found[k] = best[k] <= accept
        found |= running & (best <= accept)  # given up, but already at a solution
        leading(running, best_x, found, last=True)
        return [best_x[k] for k in range(K) if found[k]]

    def _step(self, E: np.ndarray, held: np.ndarray, scale: np.ndarray, r: np.ndarray):
        """The Newton step of the active system (rows scaled); where the Jacobian is singular,
        the least-squares step of least norm (a continuum is then flagged, not lost)."""
        if self.n <= DENSE_STATES:
            J = self._dense_system(E, held, scale)
            with single_threaded_blas():
                try:
                    return np.linalg.solve(J, r)
                except np.linalg.LinAlgError:
                    return np.linalg.lstsq(J, r, rcond=None)[0]
        from scipy.sparse.linalg import lsmr, splu

        J = self._system(E, held, scale)
        try:
            return splu(J).solve(r)
        except (RuntimeError, ValueError):
            return lsmr(J, r, atol=1e-15, btol=1e-15)[0]

    def _held(self, x: np.ndarray, F: np.ndarray) -> np.ndarray:
        """Projected states at 0 whose equation pushes them below: held by the projection."""
        held = np.zeros(self.n, dtype=bool)
        if len(self.nonnegative):
            i = self.nonnegative
            held[i] = (x[i] <= 0.0) & (F[i] < 0.0)
        return held

    def _scaled_residual(self, x, F, size, held) -> tuple[np.ndarray, np.ndarray]:
        """The residual of the active system (``x_i`` for a held state) and its row scales
        (each equation's size; 1 for held states and equations of size 0)."""
        scale = np.where(held | ~(size > 0) | ~np.isfinite(size), 1.0, size)
        return np.where(held, x, F) / scale, scale

    def _dense_system(self, E: np.ndarray, held: np.ndarray, rows_scale: np.ndarray):
        """:meth:`_system` as a dense array."""
        keep = ~held[self.rows]
        J = self._dense(E[keep] / rows_scale[self.rows[keep]], self.rows[keep], self.cols[keep])
        h = np.flatnonzero(held)
        J[h, h] = 1.0
        return J

    def _system(self, E: np.ndarray, held: np.ndarray, rows_scale: np.ndarray):
        """The Jacobian of the active system, rows scaled (a held state's row is ``e_i``)."""
        from scipy import sparse

        keep = ~held[self.rows]
        vals = E[keep] / rows_scale[self.rows[keep]]
        h = np.flatnonzero(held)
        if h.size:
            vals = np.concatenate([vals, np.ones(h.size)])
        layout = self._layout(held, keep, h)
        if layout is None:
            rows = np.concatenate([self.rows[keep], h])
            cols = np.concatenate([self.cols[keep], h])
            return sparse.csc_matrix((vals, (rows, cols)), shape=(self.n, self.n))
        order, indices, indptr = layout
        return sparse.csc_matrix((vals[order], indices, indptr), shape=(self.n, self.n))

    def _layout(self, held: np.ndarray, keep: np.ndarray, h: np.ndarray):
        """``(order, indices, indptr)``: the compressed-column form of the active system's
        pattern (the entries ``keep`` of the Jacobian's, then ``h``'s diagonal; sorted by
        column, then row: the matrix SciPy's conversion from coordinates makes), kept per set
        of held states (up to 64); ``None`` where two entries share a place (the conversion
        sums them). Building the matrix from it skips the conversion (0.16 ms of each Newton
        step of a 100-state network)."""
        key = held.tobytes()
        if key in self._layouts:
            return self._layouts[key]
        rows = np.concatenate([self.rows[keep], h])
        cols = np.concatenate([self.cols[keep], h])
        order = np.lexsort((rows, cols))
        r, c = rows[order], cols[order]
        kept: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        if not np.any((r[1:] == r[:-1]) & (c[1:] == c[:-1])):
            indptr = np.zeros(self.n + 1, dtype=np.int32)
            np.cumsum(np.bincount(c, minlength=self.n), out=indptr[1:])
            kept = (order, r.astype(np.int32), indptr)
        if len(self._layouts) >= 64:
            self._layouts.clear()  # one call (threads of a sweep may share the model)
        self._layouts[key] = kept
        return kept
