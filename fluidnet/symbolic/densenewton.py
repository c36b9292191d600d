"""Damped Newton's method on a small model's steady-state equations, many rows at once.

Every row is one problem: a start ``x0``, a parameter point ``p`` and the projected states it
holds at 0 (a boundary configuration). All rows still running are evaluated in one call of the
generated steady-state code (:class:`~fluidnet.symbolic.steadycode.SteadyCode`) per round, so
that a few hundred starts, or the points of a whole stability chart, cost little more than one.

* The equations are scaled by their sizes (``size_i = sum_j |df_i/dx_j| |x_j|``: ``|f_i| /
  size_i`` is the relative change of the states that would explain the residual) and the
  states by their magnitudes, so that rates of 1e4 and probabilities of 1e-3 weigh alike.
* Each step is damped by backtracking on the scaled residual; a row whose trial point does not
  lower it halves its step in the next round, without holding up the others.
* :func:`newton` can *deflate* known roots (Farrell, Birkisson & Funke, SIAM J. Sci. Comput.
  37 (2015) A2026): Newton's method on ``M(x) f(x)`` with ``M(x) = prod_r (1/|x - r|^2 + 1)``
  (norms scaled by the root), which no longer converges to the roots ``r`` already found, so the
  same starts reach further ones. The deflated step is the Newton step of ``f`` times
  ``1 / (1 + grad(log M) . step)`` (Sherman-Morrison).
* :func:`track` follows a homotopy ``f(x, p(s)) - (1 - s) f0 = 0`` from ``s = 0`` to ``1``
  (secant predictor, Newton corrector, step control), every row its own path: in the
  parameters from a point where the equilibrium is known (``f0 = 0``), or the global Newton
  homotopy from a start (``p`` fixed, ``f0 = f(x0)``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

__all__ = ["LeadingRows", "NewtonRows", "newton", "track", "solve_rows"]

#: Rounds (one evaluation of every running row each) of one call of :func:`newton` (rows that
#: converge do within about 30 on the laws of the tests; the rest only cost time).
MAX_ROUNDS = 60
#: Newton steps per row.
MAX_STEPS = 60
#: Step halvings before a row is given up.
MAX_HALVINGS = 30
#: Scaled residual at which a row has converged.
TOL = 1e-14
#: Scaled residual below which a row that stops improving is at its rounding floor.
FLOOR = 1e-10
#: Largest change of a state in one step, relative to ``max(|x|, 1)``: a longer Newton step is
#: shortened to it.
MAX_RELATIVE_STEP = 1e6
#: A Newton step longer than this, relative to ``max(|x|, 1)``, stops the row: the linear model
#: is degenerate. (Where an equation does not depend on a state but through terms that cancel
#: — ``W/d - W/(b/c + d)`` at ``b = 0`` —, its Jacobian entry is rounding noise, the step
#: ``1e17``, and shortened steps driven by noise reach ``W = 1e16``, where the cancelling terms
#: round the residual to 0: a "root" at infinity.)
DEGENERATE_STEP = 1e14


@dataclass
class NewtonRows:
    """What :func:`newton` reached, row by row.

    Attributes
    ----------
    x : numpy.ndarray
        ``(K, n)``: the best point of every row (its start where nothing finite was reached).
    residual : numpy.ndarray
        ``(K,)``: the largest scaled residual there (``inf`` where never finite).
    converged : numpy.ndarray of bool
        ``(K,)``: the scaled residual fell below :data:`FLOOR` (a root to rounding).
    held : numpy.ndarray of bool or None
        ``(K, n)``: the states held at 0 at ``x`` (with an active set: see :func:`newton`).
    """

    x: np.ndarray
    residual: np.ndarray
    converged: np.ndarray
    held: np.ndarray | None = None


def _sizes(J: np.ndarray, X: np.ndarray, absX: np.ndarray | None = None) -> np.ndarray:
    """``sum_j |J_ij| |x_j|`` per row of every matrix, 1 where it is 0 or not finite
    (``absX``: ``|X|`` when the caller has it)."""
    s = np.einsum("kij,kj->ki", np.abs(J), np.abs(X) if absX is None else absX)
    return np.where((s > 0) & np.isfinite(s), s, 1.0)


#: From this many states on, a stack of systems whose matrices are mostly zeros is solved as
#: one sparse block-diagonal system (LAPACK's dense solve of 1000 systems of 100 states: 0.7 s).
SPARSE_FROM = 24
#: ... and from this much dense work on (``K n^3`` for ``K`` systems of ``n`` states: about
#: 15 ms of LAPACK): a smaller stack is solved densely at once, where the sparse path would
#: import scipy.sparse (0.18 s of CPU, once per process) to save less than that.
SPARSE_WORK = 2e7


def solve_rows(A: np.ndarray, b: np.ndarray, singular: list[bool] | None = None) -> np.ndarray:
    """``A[k] y[k] = b[k]`` for a stack of square systems; a singular one by least squares (the
    step of least norm), a non-finite one NaN.

    ``singular``: a one-element list kept by a caller that solves a stack round after round
    (a Newton iteration), True when the last stack held a singular system (updated here). The
    stack then goes straight to :func:`_solve_with_singular`, without the batched solve that
    would stop at a singular system and be done again: the same solutions (each system is
    solved on its own either way, the regular ones by the same LU)."""
    out = np.full(b.shape, np.nan)
    finite = np.all(np.isfinite(A), axis=(1, 2)) & np.all(np.isfinite(b), axis=1)
    idx = np.flatnonzero(finite)
    if not idx.size:
        return out
    As = A if idx.size == len(A) else A[idx]
    bs = b if idx.size == len(b) else b[idx]
    n = A.shape[1]
    if n >= SPARSE_FROM and len(As) * n**3 >= SPARSE_WORK:
        y = _sparse_blocks(As, bs)
        if y is not None:
            out[idx] = y
            return out
    if singular is not None and singular[0]:
        out[idx], singular[0] = _solve_with_singular(As, bs)
        return out
    try:
        out[idx] = np.linalg.solve(As, bs[:, :, None])[..., 0]
    except np.linalg.LinAlgError:
        out[idx], found = _solve_with_singular(As, bs)
        if singular is not None:
            singular[0] = found
    return out


def _solve_with_singular(A: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, bool]:
    """:func:`solve_rows` of a stack where some systems are singular, still as stacks: a
    system whose LU factorization has a zero pivot (``slogdet``'s sign 0: exactly where
    ``numpy.linalg.solve`` refuses it) by least squares (its pseudo-inverse, with
    ``numpy.linalg.lstsq``'s cut ``n eps`` of the largest singular value), the others by LU.
    One row at a time cost 1.3 s per Newton step of a 10 000-point chart whose boundary
    configurations make many systems singular. Returns the solutions, and whether one system
    was singular."""
    n = A.shape[1]
    sign, _ = np.linalg.slogdet(A)
    singular = sign == 0
    y = np.empty(b.shape)
    regular = ~singular
    if regular.any():
        y[regular] = np.linalg.solve(A[regular], b[regular][:, :, None])[..., 0]
    if singular.any():
        pinv = np.linalg.pinv(A[singular], rcond=n * np.finfo(float).eps)
        y[singular] = (pinv @ b[singular][:, :, None])[..., 0]
    return y, bool(singular.any())


def _sparse_blocks(A: np.ndarray, b: np.ndarray) -> np.ndarray | None:
    """The systems as one sparse block-diagonal system (one LU), or ``None`` when they are not
    sparse (more than a quarter of the entries nonzero) or one is singular."""
    K, n, _ = A.shape
    k, i, j = np.nonzero(A)
    if k.size > 0.25 * K * n * n:
        return None
    from scipy import sparse
    from scipy.sparse.linalg import splu

    M = sparse.csc_matrix((A[k, i, j], (k * n + i, k * n + j)), shape=(K * n, K * n))
    try:
        return splu(M).solve(b.reshape(-1)).reshape(K, n)
    except RuntimeError:  # exactly singular: the dense path, least squares where needed
        return None


class _Rows:
    """Evaluation of the active (held-state) systems of a set of rows."""

    def __init__(self, code, P: np.ndarray, held: np.ndarray, f0: np.ndarray | None = None):
        self.code = code
        self.P = P  # (K, m)
        self.held = held  # (K, n)
        self.f0 = f0  # (K, n) or None: subtract f0 * (1 - s)
        # every row's boundary configuration (its equations have those states set to 0)
        found: dict[bytes, int] = {}
        self.config = np.empty(len(held), dtype=np.intp)
        self.subsets: list[tuple[int, ...]] = []
        for k, row in enumerate(held):
            key = row.tobytes()
            c = found.get(key)
            if c is None:
                c = found[key] = len(self.subsets)
                self.subsets.append(tuple(int(i) for i in np.flatnonzero(row)))
            self.config[k] = c

    def evaluate(self, X: np.ndarray, ks: np.ndarray, s: np.ndarray | None = None):
        """``(F, J)`` of the active systems of rows ``ks`` at ``X`` (``(len(ks), n)``)."""
        code = self.code
        k = len(ks)
        n = code.n
        F = np.empty((k, n))
        J = np.zeros((k, n, n))
        config = self.config[ks]
        # one function for every configuration (the held states' values are 0): one call
        subsets = self.subsets if len(code.subsets) > 1 else [()]
        for c, sub in enumerate(subsets):
            if len(subsets) == 1:  # every row: no copies
                Fc, E = code.values_and_entries(X.T, self.P[ks].T, sub)
                rows, cols = code.sparsity(sub)
                F[:] = Fc.T
                J[:, rows, cols] = E.T
                break
            sel = np.flatnonzero(config == c)
            if not sel.size:
                continue
            Fc, E = code.values_and_entries(X[sel].T, self.P[ks[sel]].T, sub)
            rows, cols = code.sparsity(sub)
            F[sel] = Fc.T
            Jc = np.zeros((len(sel), n, n))
            Jc[:, rows, cols] = E.T
            J[sel] = Jc
        if self.f0 is not None and s is not None:
            F -= (1.0 - s)[:, None] * self.f0[ks]
        return _held_system(F, J, X, self.held[ks], own=True)


def _held_system(F: np.ndarray, J: np.ndarray, X: np.ndarray, held: np.ndarray, own=False):
    """The system with every held state's equation replaced by ``x_i = 0`` (``own``: ``J`` is
    the caller's to change in place)."""
    if held.any():
        F = np.where(held, X, F)
        J = J if own else J.copy()
        hk, hi = np.nonzero(held)
        J[hk, hi, :] = 0.0
        J[hk, hi, hi] = 1.0
    return F, J


def _step(F: np.ndarray, J: np.ndarray, X: np.ndarray):
    """The Newton steps (rows scaled by size, columns by the states' magnitudes), the scaled
    residuals and the row scales."""
    with np.errstate(all="ignore"):
        return _step_in(F, J, X)


#: Below this many states, the steps of a stack are taken by the compiled kernel
#: ``scaled_steps`` of ``fluidnet/linear/src/samples.c`` (NumPy's batched solve and its
#: least-norm fallback cost 100-200 us a round whatever the stack's size; the kernel 1-3 us a
#: system). Above, NumPy's (sparse) solves.
KERNEL_BELOW = SPARSE_FROM


@lru_cache(maxsize=1)
def _kernel():
    """The compiled ``scaled_steps``, or ``None`` where the module is not built (or stale)."""
    from ..linear.samples import compiled_samples

    module = compiled_samples()
    return getattr(module, "scaled_steps", None) if module is not None else None


def _step_in(F: np.ndarray, J: np.ndarray, X: np.ndarray, singular: list[bool] | None = None):
    """:func:`_step` inside the caller's ``numpy.errstate(all="ignore")`` (``singular``: see
    :func:`solve_rows`): by the compiled kernel below :data:`KERNEL_BELOW` states, else
    :func:`_step_numpy` (its reference)."""
    K, n = X.shape
    kernel = _kernel() if 0 < n < KERNEL_BELOW and K else None
    if kernel is None:
        return _step_numpy(F, J, X, singular)
    dX, r, rows, flags = np.empty((K, n)), np.empty((K, n)), np.empty((K, n)), np.empty(K)
    kernel(
        np.ascontiguousarray(J, dtype=float),
        np.ascontiguousarray(F, dtype=float),
        np.ascontiguousarray(X, dtype=float),
        dX, r, rows, flags, K, n,
    )  # fmt: skip
    if singular is not None:
        singular[0] = bool(flags.any())
    return dX, r, rows


def _step_numpy(F: np.ndarray, J: np.ndarray, X: np.ndarray, singular: list[bool] | None = None):
    """:func:`_step_in` in NumPy: LAPACK's solves, ``numpy.linalg.pinv`` where one is singular
    (the compiled kernel's reference)."""
    absX = np.abs(X)
    rows = _sizes(J, X, absX)
    cols = np.where(absX > 0, np.maximum(absX, 1e-300), 1.0)
    A = J * cols[:, None, :] / rows[:, :, None]
    r = F / rows
    y = solve_rows(A, r, singular)
    return y * cols, r, rows


def _deflation_weights(R: np.ndarray) -> np.ndarray:
    """The scale of each root's distance (its magnitude, state by state, floored at 1e-8 of its
    largest): ``(K, n)``, one root per row, 1 where it is not finite or 0."""
    w = np.maximum(np.abs(R), 1e-8 * np.maximum(1.0, np.max(np.abs(R), axis=1, keepdims=True)))
    return np.where(np.isfinite(w) & (w > 0), w, 1.0)


def _deflation(
    X: np.ndarray,
    dX: np.ndarray | None,
    roots: list[np.ndarray],
    weights: list[np.ndarray] | None = None,
):
    """``(M, tau)``: the deflation factor at ``X`` and the factor of the deflated step
    (``weights``: :func:`_deflation_weights` of ``roots``, when the caller kept them;
    ``dX=None``: the factor only, ``tau`` is then None)."""
    M = np.ones(X.shape[0])
    h_dot = np.zeros(X.shape[0])
    for j, R in enumerate(roots):  # R: (K, n), one root per row (NaN rows: nothing to deflate)
        w = _deflation_weights(R) if weights is None else weights[j]
        d = (X - R) / w
        rho2 = np.sum(d * d, axis=1)
        ok = np.isfinite(rho2)
        rho2 = np.where(ok & (rho2 > 0), rho2, np.inf)
        term = 1.0 / rho2 + 1.0
        M *= np.where(ok, term, 1.0)
        if dX is None:
            continue
        # grad log(1/rho^2 + 1) = -2 (x - r)/w^2 / rho^4 / (1/rho^2 + 1)
        g = -2.0 * d / w / (rho2**2 * term)[:, None]
        h_dot += np.where(ok, np.sum(g * dX, axis=1), 0.0)
    if dX is None:
        return M, None
    with np.errstate(all="ignore"):
        tau = 1.0 / (1.0 + h_dot)  # the deflated step: x - tau dX
    return M, np.where(np.isfinite(tau), tau, 1.0)


def newton(
    code,
    X0: np.ndarray,
    P: np.ndarray,
    held: np.ndarray | None = None,
    *,
    roots: list[np.ndarray] | None = None,
    nonnegative: np.ndarray | None = None,
    active: np.ndarray | None = None,
    quiet: int | None = None,
    until: Callable[[np.ndarray, np.ndarray, int, int], bool] | None = None,
) -> NewtonRows:
    """Damped Newton's method from every row of ``X0`` at once.

    Parameters
    ----------
    code : SteadyCode
        The model's steady-state functions.
    X0 : numpy.ndarray
        ``(K, n)`` starts.
    P : numpy.ndarray
        ``(K, m)`` parameter values of every row (or ``(m,)`` for all).
    held : numpy.ndarray of bool, optional
        ``(K, n)``: states held at 0 (their equation replaced by ``x_i = 0``).
    roots : list of numpy.ndarray, optional
        Roots to deflate, each ``(K, n)`` (one per row; NaN rows deflate nothing).
    nonnegative : numpy.ndarray of int, optional
        States that trial points may not take below 0 (clipped: projected states).
    active : numpy.ndarray of int, optional
        Projected states handled by an *active set* instead of fixed configurations (a model
        with too many of them to try every combination): trial points are clipped at 0, and
        at every accepted point a projected state at 0 whose equation is negative is held
        (its equation replaced by ``x_i = 0``), any other is free; ``held`` is then only the
        start's set.
    quiet : int, optional
        Stop every row once no row has halved its scaled residual for this many rounds (rows
        still running then are stalled between halvings of their steps: a search from many
        starts, which deflates and continues where this finds nothing, does not wait for
        them).
    until : callable, optional
        ``until(x, residual, a, b)``, called whenever rows ``a`` to ``b - 1`` have joined the
        leading rows that are finished (every row before them finished too, so that their
        best points ``x[a:b]`` and scaled residuals ``residual[a:b]`` are final), and for the
        rows left when the iteration ends. When it returns True the iteration stops there:
        the rows after ``b`` are then left unfinished (a caller that wants the first rows'
        outcome, in order, does not wait for the others). Every row's iteration is its own,
        and a row runs at least as long as it would alone or among fewer rows (the ``quiet``
        rule counts the progress of every row), so a leading row finishes exactly as it does
        in the full run.

    Returns
    -------
    NewtonRows
    """
    X = np.array(X0, dtype=float)
    K, n = X.shape
    P = np.broadcast_to(np.asarray(P, dtype=float), (K, np.shape(P)[-1])) if K else P
    held = np.zeros((K, n), dtype=bool) if held is None else np.array(held, dtype=bool)
    dynamic = active is not None and len(active) > 0
    if dynamic:
        nonnegative = active
        rows = _Rows(code, np.asarray(P), np.zeros((K, n), dtype=bool))
    else:
        rows = _Rows(code, np.asarray(P), held)
    X[held] = 0.0
    best_held = held.copy()
    roots = roots or []
    weights = [_deflation_weights(R) for R in roots]  # every round's, computed once
    best = np.full(K, np.inf)
    best_x = X.copy()
    step = np.zeros((K, n))
    scale = np.ones((K, n))
    phi = np.zeros(K)
    lam = np.ones(K)
    steps = np.zeros(K, dtype=int)
    halvings = np.zeros(K, dtype=int)
    running = np.ones(K, dtype=bool)
    if not K:
        return NewtonRows(X, best, np.zeros(0, dtype=bool))

    def accepted(ks: np.ndarray, Xk: np.ndarray, F: np.ndarray, J: np.ndarray) -> None:
        """From accepted points: record, stop, or the next step (inside the iteration's
        ``numpy.errstate``; rows are selected only where some are left out)."""
        finite = np.isfinite(F).all(axis=1) & np.isfinite(J).all(axis=(1, 2))
        if not finite.all():
            running[ks[~finite]] = False
            ks, Xk, F, J = ks[finite], Xk[finite], F[finite], J[finite]
            if not ks.size:
                return
        if dynamic:  # the active set at this point, then its system
            h = np.zeros((len(ks), n), dtype=bool)
            h[:, active] = (Xk[:, active] <= 0.0) & (F[:, active] < 0.0)
            held[ks] = h
            F, J = _held_system(F, J, Xk, h)
        dX, r, rs = _step_in(F, J, Xk, singular)
        err = np.abs(r).max(axis=1)
        best_k = best[ks]
        if (err < 0.5 * best_k).any():
            progress[0] = True
        better = err < best_k
        if better.any():
            kb = ks[better]
            best[kb] = err[better]
            best_x[kb] = Xk[better]
            best_held[kb] = held[kb]
        best_k = best[ks]
        stop = (err <= TOL) | ((err > best_k) & (best_k <= FLOOR)) | (steps[ks] >= MAX_STEPS)
        stop |= ~np.isfinite(dX).all(axis=1)
        reach = (np.abs(dX) / np.maximum(np.abs(Xk), 1.0)).max(axis=1)
        stop |= ~(reach <= DEGENERATE_STEP)
        if stop.any():
            running[ks[stop]] = False
            go = ~stop
            ks, dX, r, rs, Xk, reach = ks[go], dX[go], r[go], rs[go], Xk[go], reach[go]
        if roots:
            M, tau = _deflation(Xk, dX, [R[ks] for R in roots], [W[ks] for W in weights])
            assert tau is not None
            dX = dX * tau[:, None]
            r = r * M[:, None]
        step[ks] = dX
        scale[ks] = rs
        phi[ks] = np.linalg.norm(r, axis=1)
        lam[ks] = np.minimum(1.0, MAX_RELATIVE_STEP / np.maximum(reach, 1e-300))
        halvings[ks] = 0
        steps[ks] += 1

    leading = LeadingRows(until, K)
    singular = [False]  # the last round's stack held a singular system (see solve_rows)

    def settled(last: bool = False) -> bool:
        return leading(running, best_x, best, last)

    all_k = np.arange(K)
    progress = [False]
    with np.errstate(all="ignore"):  # overflows of far iterates: not finite, so stopped
        F, J = rows.evaluate(X, all_k)
        accepted(all_k, X, F, J)
        last_progress = 0
        stopped = settled()
        for round_ in range(MAX_ROUNDS):
            ks = np.flatnonzero(running)
            if stopped or not ks.size:
                break
            if progress[0]:
                last_progress, progress[0] = round_, False
            if quiet is not None and round_ - last_progress >= quiet:
                break  # no row has halved its residual for `quiet` rounds
            lam_k = lam[ks]
            trial = X[ks] - lam_k[:, None] * step[ks]
            if nonnegative is not None and len(nonnegative):
                trial[:, nonnegative] = np.maximum(trial[:, nonnegative], 0.0)
            F, J = rows.evaluate(trial, ks)
            Fm = np.where(held[ks], trial, F) if dynamic else F  # the accepted point's system
            r = Fm / scale[ks]
            if roots:
                M, _ = _deflation(trial, None, [R[ks] for R in roots], [W[ks] for W in weights])
                r = r * M[:, None]
            merit = np.linalg.norm(r, axis=1)
            # a decrease of at least 1e-10 (relative): not rounding noise
            ok = np.isfinite(merit) & (merit <= (1.0 - np.maximum(1e-4 * lam_k, 1e-10)) * phi[ks])
            if ok.all():
                X[ks] = trial
                accepted(ks, trial, F, J)
            else:
                good = ks[ok]
                X[good] = trial[ok]
                if good.size:
                    accepted(good, trial[ok], F[ok], J[ok])
                bad = ks[~ok]
                lam[bad] /= 2.0
                halvings[bad] += 1
                running[bad[halvings[bad] > MAX_HALVINGS]] = False
            stopped = settled()
        if not stopped:
            settled(last=True)
    return NewtonRows(best_x, best, best <= FLOOR, best_held)


class LeadingRows:
    """The rows of an iteration (its starts) handed to ``until(x, values, a, b)`` in their
    order as they finish: rows ``a`` to ``b - 1`` once they and every row before them have
    finished (their best points ``x[a:b]`` and ``values[a:b]`` final), the rest when the
    iteration ends (``last``). :func:`newton` and the sparse search of
    :meth:`~fluidnet.symbolic.newton.SparseSteadyState.solve` stop where it returns True."""

    def __init__(self, until: Callable | None, K: int):
        self.until, self.K = until, K
        #: the rows before this one have been handed over
        self.done = 0

    def __call__(self, running: np.ndarray, x: np.ndarray, values: np.ndarray, last=False):
        """True when ``until`` stops the iteration (False without an ``until``)."""
        if self.until is None:
            return False
        b = self.K if last or not running.any() else int(np.argmax(running))
        if b <= self.done:
            return False
        a, self.done = self.done, b
        return bool(self.until(x, values, a, b))


def track(
    code,
    X0: np.ndarray,
    P0: np.ndarray,
    P1: np.ndarray,
    held: np.ndarray | None = None,
    *,
    f0: np.ndarray | None = None,
    max_steps: int = 400,
    min_step: float = 1e-7,
) -> NewtonRows:
    """Follow ``f(x, p0 + s (p1 - p0)) - (1 - s) f0 = 0`` from ``s = 0`` (where ``X0`` solves
    it) to ``s = 1``, every row its own path.

    Parameters
    ----------
    code : SteadyCode
    X0 : numpy.ndarray
        ``(K, n)`` solutions at ``s = 0``.
    P0, P1 : numpy.ndarray
        ``(K, m)`` parameter values at ``s = 0`` and ``s = 1``.
    held : numpy.ndarray of bool, optional
        ``(K, n)`` states held at 0.
    f0 : numpy.ndarray, optional
        ``(K, n)``: the global Newton homotopy's ``f(x0)`` (default none: a path in the
        parameters).
    max_steps : int
        Steps per path.
    min_step : float
        A path whose step falls below this (a fold in the parameter, or the end of the branch)
        is given up.

    Returns
    -------
    NewtonRows
        The point reached at ``s = 1`` (``converged``), else the last point of the path.
    """
    X = np.array(X0, dtype=float)
    K, n = X.shape
    held = np.zeros((K, n), dtype=bool) if held is None else held
    P0 = np.asarray(P0, dtype=float)
    P1 = np.asarray(P1, dtype=float)
    s = np.zeros(K)
    ds = np.full(K, 0.1)
    prev = X.copy()
    prev_s = np.full(K, -1.0)
    running = np.ones(K, dtype=bool)
    done = np.zeros(K, dtype=bool)
    res = np.full(K, np.inf)
    for _ in range(max_steps):
        ks = np.flatnonzero(running)
        if not ks.size:
            break
        s_new = np.minimum(s[ks] + ds[ks], 1.0)
        # secant predictor from the previous point of the path (the current one at the start)
        have = prev_s[ks] >= 0
        slope = np.where(
            have[:, None],
            (X[ks] - prev[ks]) / np.where(have, s[ks] - prev_s[ks], 1.0)[:, None],
            0.0,
        )
        Y = X[ks] + slope * (s_new - s[ks])[:, None]
        Y[held[ks]] = 0.0
        Pk = P0[ks] + s_new[:, None] * (P1[ks] - P0[ks])
        rows = _Rows(code, Pk, held[ks], None if f0 is None else f0[ks])
        local = np.arange(len(ks))
        ok = np.zeros(len(ks), dtype=bool)
        err = np.full(len(ks), np.inf)
        last = np.full(len(ks), np.inf)
        alive = np.ones(len(ks), dtype=bool)
        for _it in range(8):  # the corrector: plain Newton, must contract
            a = local[alive]
            if not a.size:
                break
            F, J = rows.evaluate(Y[a], a, s_new[a])
            dX, r, _ = _step(F, J, Y[a])
            e = np.max(np.abs(r), axis=1)
            e = np.where(np.isfinite(e), e, np.inf)
            err[a] = e
            conv = e <= 1e-12
            ok[a[conv]] = True
            diverge = ~np.isfinite(e) | (e > 0.5 * last[a]) & (_it > 1)
            last[a] = e
            alive[a[conv | diverge]] = False
            keep = ~(conv | diverge)
            Y[a[keep]] -= dX[keep]
        good = ks[ok]
        bad = ks[~ok]
        prev[good], prev_s[good] = X[good], s[good]
        X[good], s[good] = Y[ok], s_new[ok]
        res[good] = err[ok]
        ds[good] = np.minimum(ds[good] * 1.5, 0.25)
        finished = good[s[good] >= 1.0]
        done[finished] = True
        running[finished] = False
        ds[bad] /= 4.0
        running[bad[ds[bad] < min_step]] = False
    return NewtonRows(X, np.where(done, res, np.inf), done)
