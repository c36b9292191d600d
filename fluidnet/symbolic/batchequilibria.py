"""The equilibrium :meth:`fluidnet.Model.equilibrium` returns, at many parameter points at once.

A stability chart linearizes a model at thousands of parameter points; searching each point
from scratch (every start, every boundary configuration) cost 20 ms a point. Here the search is
done in full at a few *seed* points only (:func:`~fluidnet.symbolic.equilibrium.equilibria`,
which also tells how many equilibria there are), and the equilibrium it returns is continued to
every other point:

1. every point starts from the equilibrium of its nearest seed (parameters measured relative to
   their spread over the batch), all points in one vectorized damped Newton iteration
   (:func:`~fluidnet.symbolic.densenewton.newton`);
2. a point that does not settle there is started from its nearest settled point and followed
   along the straight path in the parameters (:func:`~fluidnet.symbolic.densenewton.track`),
   all such points at once;
3. what is left is searched in full point by point (at most :data:`POINTWISE_MAX` points),
   else reported.

A point is settled only where it passes the tests of the full search: converged to rounding
(every equation relative to its largest term), projected states not negative, the states held
at 0 by the projection the seed's (their equations still negative), the right-hand sides
defined, and the same kind as the seed's equilibrium (no negative state where it had none).
Continuation follows one branch; it returns the equilibrium the full search would only where
that branch is the one the full search ranks first. That holds where the seeds have one
equilibrium ranked first (others, if any, ranked after it by the documented order: boundary
ones after interior ones, negative states last); where a seed has several tied for first, no
point is settled here and every point is left to the full search. As a check, the full search
also runs at :data:`CHECKS` points settled by continuation; a disagreement leaves every point to
the full search. Points not settled come back with the reason (the caller computes them one
by one, as :meth:`fluidnet.Model.equilibrium` does, with its errors and warnings).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import FluidnetError
from ..nearest import nearest
from .densenewton import FLOOR, newton, track
from .equilibrium import RESIDUAL_TOL, equilibria, rank_key
from .rowscaling import row_scaling
from .steadycode import SteadyCode

__all__ = ["PointEquilibria", "equilibria_at_points"]

#: Seeds: points searched in full before continuation (fewer for a model of more than
#: :data:`~fluidnet.symbolic.equilibrium.DENSE_MAX_STATES` states, whose full search, sparse, costs
#: a few hundred milliseconds).
SEEDS = 3
SEEDS_LARGE = 2
#: Points settled by continuation where the full search runs as a check.
CHECKS = 2
CHECKS_LARGE = 1
#: Rounds of warm starts from the nearest settled point after the seeds' round.
WAVES = 4
#: Points searched in full, one by one, when continuation did not settle them.
POINTWISE_MAX = 32


@dataclass
class PointEquilibria:
    """Equilibria at ``K`` parameter points.

    Attributes
    ----------
    x : numpy.ndarray
        ``(K, n)`` (NaN where not settled).
    ok : numpy.ndarray of bool
        ``(K,)``.
    reasons : list of str
        Why a point is not settled (``""`` where it is).
    """

    x: np.ndarray
    ok: np.ndarray
    reasons: list[str]


def _order_key(eq) -> tuple:
    return rank_key(np.array(list(eq.values())), bool(eq.boundary))


def _spread_picks(size: int, count: int) -> np.ndarray:
    """Up to ``count`` positions spread evenly over ``range(size)``, ascending, each once."""
    picks = np.linspace(0, size - 1, min(count, size)).astype(int)
    return picks[np.concatenate(([True], picks[1:] > picks[:-1]))]


def _without(mask: np.ndarray, drop: np.ndarray) -> np.ndarray:
    """A copy of the boolean ``mask`` with the positions ``drop`` cleared."""
    out = mask.copy()
    out[drop] = False
    return out


def _spread(P: np.ndarray) -> np.ndarray:
    """Per parameter, the unit of distance: its spread over the batch (1 where constant)."""
    span = P.max(axis=1) - P.min(axis=1)
    return np.where(span > 0, span, 1.0)


def _nearest(
    P: np.ndarray, unit: np.ndarray, targets: np.ndarray, sources: np.ndarray
) -> np.ndarray:
    """For every target column index, the nearest source column index (scaled max-norm;
    :func:`fluidnet.nearest.nearest`: few pairs compared directly, many by a k-d tree --
    comparing every pair cost 0.3 s at 10 000 points, and the subsample of the sources it took
    beyond 4 million pairs missed the nearest)."""
    Pt = (P[:, targets] / unit[:, None]).T
    Ps = (P[:, sources] / unit[:, None]).T
    _, j = nearest(Ps, Pt, p=np.inf)
    return sources[j[:, 0]]


def _settled(
    code: SteadyCode,
    P: np.ndarray,
    held: np.ndarray,
    rows,
    nonneg: Sequence[int],
    kind: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """``(ok, x)``: the rows of a Newton result that pass the tests of the full search.

    ``held`` ``(k, n)`` are the states the projection must hold at 0, ``kind`` ``(k,)`` whether
    the seed's equilibrium had no negative state."""
    x = np.array(rows.x)
    ok = rows.converged & np.all(np.isfinite(x), axis=1)
    big = np.maximum(1.0, np.max(np.abs(np.where(np.isfinite(x), x, 0.0)), axis=1))
    for i in nonneg:
        ok &= ~(x[:, i] < -1e-12 * big)
        x[:, i] = np.where(np.abs(x[:, i]) <= 1e-12 * big, 0.0, x[:, i])
    ok &= ~(kind & np.any(x < 0, axis=1))
    Xt, Pt = x.T, P  # (n, k), (m, k)
    F = code.f(Xt, Pt).T
    scale = code.scales(Xt, Pt).T
    with np.errstate(all="ignore"):
        rel = np.where(F == 0, 0.0, np.abs(F) / scale)
    free_ok = np.where(held, True, rel <= RESIDUAL_TOL)
    held_ok = np.where(held, (x == 0) & (F < 0), True)
    # an equation held by the projection must push down by more than rounding
    held_ok &= np.where(held, np.abs(F) > RESIDUAL_TOL * np.maximum(1.0, scale), True)
    # a free projected state at 0 whose equation pushes down is held: another configuration
    pushed = np.zeros_like(held)
    for i in nonneg:
        pushed[:, i] = ~held[:, i] & (x[:, i] == 0) & (F[:, i] < 0) & (np.abs(F[:, i]) > 0)
    ok &= np.all(free_ok & held_ok & ~pushed, axis=1)
    z = x[:, code.lag_states] if code.lag_states.size else np.zeros((len(x), 0))
    raw = code.raw(Xt, z.T, Pt)
    ok &= np.all(np.isfinite(raw), axis=0)
    ok &= ~_singular(code, x, Pt, held, ok)
    return ok, x


#: A point whose scaled Jacobian has singular values spread wider than this is left to the
#: full search (a continuum of equilibria, which it represents by a chosen point and flags, or
#: a fold).
SINGULAR_RATIO = 1e-10
#: Models of more states are not checked for singular Jacobians (an SVD of every point).
SINGULAR_CHECK_MAX = 40


def _singular(code: SteadyCode, x: np.ndarray, P: np.ndarray, held: np.ndarray, ok: np.ndarray):
    """``(k,)``: the points (among ``ok``) where the Jacobian of the active system, rows scaled
    by their sizes and columns by the states' magnitudes, is singular to rounding."""
    out = np.zeros(len(x), dtype=bool)
    idx = np.flatnonzero(ok)
    if not idx.size or code.n > SINGULAR_CHECK_MAX:
        return out
    J = code.jacobian(x[idx].T, P[:, idx])  # (k, n, n)
    h = held[idx]
    hk, hi = np.nonzero(h)
    J[hk, hi, :] = 0.0
    J[hk, hi, hi] = 1.0
    cols = np.where(x[idx] != 0, np.abs(x[idx]), 1.0)
    with np.errstate(all="ignore"):
        A = J * cols[:, None, :]
        rows = np.sum(np.abs(A), axis=2)
        A = A / np.where(rows > 0, rows, 1.0)[:, :, None]
    finite = np.all(np.isfinite(A), axis=(1, 2))
    sv = np.zeros((len(idx), code.n))
    if finite.any():
        sv[finite] = np.linalg.svd(A[finite], compute_uv=False)
    out[idx] = ~finite | (sv[:, -1] <= SINGULAR_RATIO * sv[:, 0])
    return out


def equilibria_at_points(
    model,
    plan,
    code: SteadyCode | Callable[[], SteadyCode],
    P: np.ndarray,
    valid: np.ndarray,
    *,
    guess=None,
) -> PointEquilibria:
    """The equilibrium the full search returns at every column of ``P`` (see the module).

    Parameters
    ----------
    model : fluidnet.Model
    plan : the model's equilibrium plan
    code : SteadyCode or callable
        The model's steady-state code, or a function that builds it: called only when points
        are continued (not when the full search settles every point, as at one point per
        class of :func:`_one_per_class`; a 100-state network's dense code is 0.28 s of
        sympy).
    P : numpy.ndarray
        ``(m, K)`` parameter values (``model.param_names`` order).
    valid : numpy.ndarray of bool
        ``(K,)``: points to settle (the others are skipped: out of bounds).
    guess : dict, optional
        ``{state: value}`` for the full search at the seeds (the equilibrium nearest to it is
        continued).

    Returns
    -------
    PointEquilibria
    """
    names = model.param_names
    m, K = P.shape
    n = len(plan.states)
    X = np.full((K, n), np.nan)
    ok = np.zeros(K, dtype=bool)
    reasons = ["" if v else "a parameter value out of its bounds" for v in valid]
    todo = np.flatnonzero(valid)
    if not todo.size:
        return PointEquilibria(X, ok, reasons)
    shared = _one_per_class(model, P, todo)
    if shared is not None:  # points whose equilibria are equal by the equations' structure
        found = equilibria_at_points(model, plan, code, P, shared.valid, guess=guess)
        X[todo] = found.x[shared.of[todo]]
        ok[todo] = found.ok[shared.of[todo]]
        for k in todo:
            reasons[k] = found.reasons[shared.of[k]]
        return PointEquilibria(X, ok, reasons)
    held_of = np.zeros((K, n), dtype=bool)
    kind_of = np.zeros(K, dtype=bool)
    nonneg = list(plan.nonneg)
    tied: list[int] = []

    def full_search(k: int) -> bool:
        """The full search at point ``k``: True when it settles the point unambiguously."""
        point: dict[str, Any] = {nm: float(P[i, k]) for i, nm in enumerate(names)}
        try:
            found = equilibria(model, guess=guess, **point)
        except FluidnetError as exc:
            reasons[k] = str(exc)
            return False
        first = found[0]
        rivals = [e for e in found[1:] if e.isolated and bool(e.boundary) == bool(first.boundary)]
        if guess is None and any(_order_key(e) == _order_key(first) for e in rivals):
            tied.append(k)
            reasons[k] = (
                f"{len(rivals) + 1} equilibria tied by the documented order: the full search "
                "chooses (and warns)"
            )
            return False
        if not first.isolated:
            reasons[k] = "the equilibrium is not isolated: the full search decides (and warns)"
            return False
        X[k] = [first[s] for s in plan.states]
        held_of[k] = [s in first.boundary for s in plan.states]
        kind_of[k] = not np.any(X[k] < 0)
        ok[k] = True
        return True

    n_seeds, n_checks = (SEEDS_LARGE, CHECKS_LARGE) if plan.large else (SEEDS, CHECKS)
    # (index arithmetic, not np.unique or np.setdiff1d: their first call imports numpy.ma, 14 ms)
    seeds = todo[_spread_picks(todo.size, n_seeds)]
    settled_seeds = [int(k) for k in seeds if full_search(int(k))]
    if tied or not settled_seeds:
        # several equilibria tied for first, or none found: every point to the full search
        for k in todo:
            if not ok[k] and not reasons[k]:
                first = tied[0] if tied else seeds[0]
                reasons[k] = reasons[first] or "no seed equilibrium to continue from"
        return PointEquilibria(X, ok, reasons)
    # the steady code, built at the first continuation that needs it
    steady = (lambda: code) if isinstance(code, SteadyCode) else functools.cache(code)

    unit = _spread(P)
    rest = np.flatnonzero(_without(valid, seeds))
    if rest.size:
        src = _nearest(P, unit, rest, np.array(settled_seeds))
        _continue_rows(steady(), X, ok, held_of, kind_of, P, rest, src, nonneg, False, plan.active)
    # outwards from what is settled: warm starts from the nearest settled point, in waves
    # while they settle points (cheaper than every configuration at every point left)
    for _ in range(WAVES):
        left = np.flatnonzero(valid & ~ok & np.array([not r for r in reasons]))
        if not left.size or not ok.any():
            break
        before = int(ok.sum())
        src = _nearest(P, unit, left, np.flatnonzero(ok))
        _continue_rows(steady(), X, ok, held_of, kind_of, P, left, src, nonneg, False, plan.active)
        if int(ok.sum()) == before:
            break
    left = np.flatnonzero(valid & ~ok & np.array([not r for r in reasons]))
    if left.size and ok.any() and len(plan.subsets) > 1:
        src = _nearest(P, unit, left, np.flatnonzero(ok))
        _other_configurations(steady(), plan.subsets, X, ok, held_of, kind_of, P, left, src, nonneg)
    left = np.flatnonzero(valid & ~ok & np.array([not r for r in reasons]))
    if left.size and ok.any():
        src = _nearest(P, unit, left, np.flatnonzero(ok))
        _continue_rows(steady(), X, ok, held_of, kind_of, P, left, src, nonneg, True, plan.active)
    # the check: the full search at a few points settled by continuation
    continued = np.flatnonzero(_without(ok, seeds))
    if continued.size:
        for k in continued[_spread_picks(continued.size, n_checks)]:
            mine = X[k].copy()
            ok[k] = False
            if not full_search(int(k)) or not np.allclose(X[k], mine, rtol=1e-8, atol=1e-12):
                where = ", ".join(f"{nm}={P[i, k]:g}" for i, nm in enumerate(names))
                why = reasons[k] or (
                    f"continuation reached another equilibrium than the full search at {where}"
                )
                for j in todo:
                    if j not in seeds:
                        ok[j] = False
                        reasons[j] = f"not continued: {why}"
                break
    left = [int(k) for k in todo if not ok[k] and not reasons[k]]
    for k in left[:POINTWISE_MAX]:
        full_search(k)
    for k in left[POINTWISE_MAX:]:
        reasons[k] = (
            "continuation from the neighbouring points did not settle it (a fold, the end of "
            "a branch, or a change of boundary configuration): search it on its own"
        )
    X[~ok] = np.nan
    return PointEquilibria(X, ok, reasons)


@dataclass
class _Classes:
    """Points of equal equilibria: ``of[k]`` the point that stands for ``k``, ``valid`` those."""

    of: np.ndarray
    valid: np.ndarray


def _one_per_class(model, P: np.ndarray, todo: np.ndarray) -> _Classes | None:
    """The points of ``todo`` grouped by :meth:`~fluidnet.symbolic.rowscaling.RowScaling.keys`
    (values that differ only in parameters the equilibria do not depend on: the same equations
    up to positive factors of their rows), one point standing for each group; ``None`` when no
    two points share one."""
    scaling = row_scaling(model)
    if not scaling.any_free or todo.size < 2:
        return None
    of = np.arange(P.shape[1])
    first: dict[str, int] = {}
    for k, key in zip(todo, scaling.keys(P[:, todo]), strict=True):
        if key is not None:
            of[k] = first.setdefault(key, int(k))
    if len(first) == todo.size:
        return None
    valid = np.zeros(P.shape[1], dtype=bool)
    valid[of[todo]] = True
    return _Classes(of, valid)


def _continue_rows(
    code, X, ok, held_of, kind_of, P, targets, sources, nonneg, path: bool, active=None
):
    """Settle ``targets`` from the equilibria at ``sources`` (warm starts, or paths in the
    parameters); with an ``active`` set the held states may change on the way."""
    H = held_of[sources]
    if path:
        rows = track(code, X[sources], P[:, sources].T, P[:, targets].T, H)
        start = np.where(rows.converged[:, None], rows.x, X[sources])
    else:
        start = X[sources]
    rows = newton(code, start, P[:, targets].T, H, active=active)
    if active is not None and rows.held is not None:
        H = rows.held
    good, x = _settled(code, P[:, targets], H, rows, nonneg, kind_of[sources])
    good &= rows.residual <= FLOOR
    k = targets[good]
    X[k] = x[good]
    ok[k] = True
    held_of[k] = H[good]
    kind_of[k] = kind_of[sources][good]


def _other_configurations(
    code, subsets, X, ok, held_of, kind_of, P, targets, sources, nonneg
) -> None:
    """Settle ``targets`` where the boundary configuration changes (a queue that empties or
    fills between points): Newton's method from the neighbour's equilibrium in every
    configuration, and of the equilibria that pass, the one the full search ranks first (no
    state held first, then no negative state, then fewer zeros); a tie is left unsettled."""
    masks = np.zeros((len(subsets), code.n), dtype=bool)
    for c, sub in enumerate(subsets):
        masks[c, list(sub)] = True
    C = len(masks)
    rows_t = np.repeat(targets, C)
    rows_s = np.repeat(sources, C)
    H = np.tile(masks, (len(targets), 1))
    start = np.where(H, 0.0, X[rows_s])
    rows = newton(code, start, P[:, rows_t].T, H)
    good, x = _settled(code, P[:, rows_t], H, rows, nonneg, kind_of[rows_s])
    good &= rows.residual <= FLOOR
    for i, t in enumerate(targets):
        found = []
        for r in range(i * C, (i + 1) * C):
            if not good[r] or any(np.allclose(x[r], y, rtol=1e-9, atol=1e-12) for y, _, _ in found):
                continue
            key = rank_key(x[r], bool(H[r].any()))
            found.append((x[r], H[r], key))
        if not found:
            continue
        found.sort(key=lambda f: f[2])
        if len(found) > 1 and found[0][2] == found[1][2]:
            continue  # tied: the full search decides
        X[t], held_of[t], ok[t] = found[0][0], found[0][1], True
        kind_of[t] = kind_of[sources[i]]
