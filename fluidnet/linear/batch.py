"""The rightmost characteristic root at every point of a parameter grid, as one computation.

:func:`rightmost_roots` takes the systems of a grid as a :class:`~.stacked.Stack` and finds the
rightmost root of each by **continuation over the grid**:

1. The first point of the grid is solved by the full method of
   :func:`~fluidnet.linear.roots.characteristic_roots` (spectral discretization, Newton
   refinement, convergence in the discretization size); a large system's by the batched
   discretization of step 3 first.
2. The grid is then refined level by level (strides halved, :func:`grid_levels`); every new
   point starts Newton's method from the few rightmost roots of an already solved neighbour,
   all points of a level at once (vectorized over points and roots). Converged roots must pass
   the residual test of :mod:`~fluidnet.linear.roots`. A large system's roots (a network's:
   one per flow, in clusters) are followed along the segment between the two points' systems
   and refined by the Ehrlich-Aberth iteration, which keeps the candidates on distinct roots.
3. Every point is **certified** by the argument principle
   (:mod:`~fluidnet.linear.certificate`): the number of roots right of a line just left of its
   rightmost root must equal the number of roots Newton found there. The points whose count
   differs (a root that was not continued, a branch that overtook, a double root) are solved
   again by the spectral discretization at one size for all of them at once (one stacked
   eigenvalue problem, Newton, the certificate), and what still fails by the full per-point
   method, certified the same way.

Real scalar systems with at most one delayed term (the factors of a network's alike flows,
:mod:`~fluidnet.linear.aggregate`) need none of this: their rightmost root and a line that
certifies it come from the Lambert W function
(:func:`~fluidnet.linear.lambertw.rightmost_one_delay`).

A point that even the full method cannot certify is reported as such (``certified`` False,
``root`` NaN, and a reason), never with a verdict. Systems are balanced (a diagonal similarity,
:func:`~.stacked.balance_scales`) before anything is computed, so that badly scaled models (a
gain of 1e-7 against a rate of 1e7) have sound norms, residuals and discretizations.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import FluidnetError
from ..threads import single_threaded_blas
from .aggregate import Aggregation, aggregation, grouped
from .certificate import LINE_OFFSETS, count_right_of
from .contour import zeros_from_power_sums
from .inclusion import winding_numbers
from .lambertw import rightmost_one_delay
from .large import DENSE_LIMIT
from .roots import MERGE_RTOL, RESIDUAL_TOL, certified_roots
from .stacked import Stack, aberth, balance_scales, schur_segment, singular_values

__all__ = ["RightmostRoots", "rightmost_roots", "grid_levels", "generator_matrices"]

#: Systems of at least this many states are treated as networks whose slow roots cluster (one
#: per flow): more roots carried (:data:`N_SEEDS_LARGE`), followed along a homotopy and refined
#: by the Ehrlich-Aberth iteration, the first points by a coarse discretization, the
#: certificate line halfway to the next root known. The 20-flow ring's reduced system has 15
#: states: treated so, its 20 x 20 chart took 2.8 s instead of 3.7 s and its boundary 1.1 s
#: instead of 1.7 s, the same values to 1e-15.
CLUSTERED_STATES = 12
#: Roots carried from a solved point to its neighbours (upper half-plane representatives).
N_SEEDS = 4
#: ... for systems of at least :data:`CLUSTERED_STATES` states: an oscillatory pair that
#: overtakes a cluster of real roots from further down must be among them.
N_SEEDS_LARGE = 12
#: Rounds of continuation from certified neighbours for the points that failed, before the
#: full per-point method (each round costs a batch of them; a round that certifies none ends).
RETRY_ROUNDS = 4
#: Points of the coarse subgrid solved by the full method before continuation starts.
COARSE_POINTS = 1
#: Systems of many states are discretized at this size first (an eigenvalue problem of
#: ``n (COARSE_NODES + 1)`` rows per point), at the full method's size where that fails. Its
#: eigenvalues only start Newton's method; the certificate decides. On the 100 x 100 charts of
#: tests/user_laws.py, 4 nodes certified every point that 8 did (230 of the 30-flow ring with
#: five delays, 132 of the 100-state network's reduced system; the same roots to 3e-13) in a
#: third of the time (4.9 -> 1.9 s and 4.1 -> 1.4 s); 2 nodes left one point to the full size.
COARSE_NODES = 4
#: Largest number of matrix entries of one stacked eigenvalue problem of the batched
#: discretization (16 M doubles, 128 MB): larger batches are solved in parts.
DISCRETIZED_ENTRIES = 16_000_000


@dataclass
class RightmostRoots:
    """The rightmost root of every system of a batch.

    Attributes
    ----------
    root : numpy.ndarray
        ``(K,)`` complex: the rightmost root (its representative with ``Im >= 0``); NaN where
        not certified.
    certificate : numpy.ndarray
        ``(K,)``: the abscissa ``sigma`` of the line right of which the argument principle
        counted exactly the roots found (``-inf`` for delay-free systems); NaN where not
        certified.
    certified : numpy.ndarray of bool
    reason : numpy.ndarray of str
        Why a point is not certified (or the error the full method raised); ``""`` otherwise.
    full : numpy.ndarray of bool
        Points solved by the full per-point method (coarse grid and continuation failures).
    stats : dict
        How many points were continued, solved by the batched discretization, by the full
        per-point method, and in closed form (``closed_form``: scalar systems with one delayed
        term, :func:`~fluidnet.linear.lambertw.rightmost_one_delay`); for a factored system,
        :mod:`.aggregate`: the sums over its parts, and ``factored_classes``, the number of
        classes of alike states.
    fallback : numpy.ndarray of str
        Why the batch did not settle a point that the full per-point method then solved
        (``""`` for the points the batch settled, and for the starting points of the
        continuation, which the full method solves by design).
    """

    root: np.ndarray
    certificate: np.ndarray
    certified: np.ndarray
    reason: np.ndarray
    full: np.ndarray
    stats: dict
    fallback: np.ndarray | None = None

    @property
    def abscissa(self) -> np.ndarray:
        return np.real(self.root)

    @property
    def omega(self) -> np.ndarray:
        return np.abs(np.imag(self.root))


def grid_levels(shape: tuple[int, ...], coarse: int = 8) -> list[tuple[np.ndarray, np.ndarray]]:
    """Points of a grid (flat indices) in the order of continuation, with their parents.

    Returns ``[(points, parents), ...]``: the first entry is a coarse subgrid (stride ``S``,
    a power of two, about ``coarse`` to ``4 coarse`` points; parents ``-1``); each later entry
    holds the points of the next finer stride ``s`` and, for each, a point of the previous
    strides at most ``s`` index steps away along every axis.
    """
    dims = np.array(shape, dtype=int)
    S = 1
    while S < dims.max() and np.prod(-(-dims // (2 * S))) >= coarse:
        S *= 2
    coords = np.indices(tuple(shape)).reshape(len(shape), -1).T
    on = np.all(coords % S == 0, axis=1)
    levels: list[tuple[np.ndarray, np.ndarray]] = [(np.flatnonzero(on), np.full(int(on.sum()), -1))]
    s = S
    while s > 1:
        s //= 2
        new = np.all(coords % s == 0, axis=1) & ~np.all(coords % (2 * s) == 0, axis=1)
        parent = np.asarray(
            np.ravel_multi_index(((coords[new] // (2 * s)) * (2 * s)).T, tuple(shape))
        )
        levels.append((np.flatnonzero(new), parent))
    return levels


def _newton(
    stack: Stack, lam: np.ndarray, idx: np.ndarray, maxiter: int = 40, tol: float = 1e-11
) -> np.ndarray:
    """Newton on ``det Delta`` for candidates ``lam`` of systems ``idx`` (real systems: real
    candidates stay real). Stops as :func:`fluidnet.linear.roots._newton` does. Large systems
    (clustered roots) by the Ehrlich-Aberth iteration (:meth:`~.stacked.Stack.aberth`)."""
    if stack.n >= CLUSTERED_STATES and not stack.is_complex():
        lam, active = stack.aberth(lam, idx, tol=tol, stall_tol=max(tol, 1e-8), maxiter=maxiter)
    else:
        lam, active = stack.newton(
            lam, idx, tol=tol, stall_tol=max(tol, 1e-8), keep_real=True, maxiter=maxiter
        )
    lam[active] = np.nan  # did not converge
    return lam


class _State:
    """Per-point results while the grid is being solved."""

    def __init__(self, K: int, n_seeds: int = N_SEEDS):
        self.R = n_seeds
        self.root = np.full(K, np.nan + 0j)
        self.line = np.full(K, np.nan)
        self.certified = np.zeros(K, dtype=bool)
        self.reason = np.full(K, "", dtype=object)
        self.full = np.zeros(K, dtype=bool)
        self.fallback = np.full(K, "", dtype=object)
        self.seeds = np.full((K, n_seeds), np.nan + 0j)
        #: discretization size for the batched fallback: the largest the full method used
        self.n_nodes = 16
        self.stats = {
            "continued": 0,
            "discretized": 0,
            "full": 0,
            "batch_errors": 0,
            "closed_form": 0,
        }
        #: a large system's continuation goes along the homotopy (see :data:`TRACK_SHARE`)
        self.track_first = False
        #: grid levels' points continued directly, and how many the certificate refused
        self.direct_tried = 0
        self.direct_failed = 0


#: Raw numerical errors of a batched step (over its stacked arrays), caught so that its points
#: fall back to the full per-point method instead of failing the whole batch.
BATCH_ERRORS = (np.linalg.LinAlgError, FloatingPointError, ValueError, ZeroDivisionError)


def _guarded(state: _State, what: str, step: Callable[..., np.ndarray], *args: Any) -> np.ndarray:
    """``step(state, stack, points, ...)`` (a batched step over ``points``, returning the mask
    of its failures); every point failed where it raised a raw numerical error (recorded as
    the points' fallback reason)."""
    points = args[1]
    try:
        return step(state, *args)
    except BATCH_ERRORS as exc:
        state.stats["batch_errors"] += 1
        state.fallback[points] = f"the batched {what} raised {type(exc).__name__}: {exc}"
        return np.ones(points.size, dtype=bool)


def rightmost_roots(
    stack: Stack,
    shape: tuple[int, ...] | None = None,
    *,
    system: Callable[[int], Any] | None = None,
    root_options: Mapping[str, Any] | None = None,
    skip: np.ndarray | None = None,
) -> RightmostRoots:
    """The certified rightmost characteristic root of every system of ``stack``.

    Parameters
    ----------
    stack : Stack
        ``K`` systems (see :mod:`fluidnet.linear.stacked`).
    shape : tuple of int, optional
        The grid the systems come from (C order, ``prod(shape) == K``): neighbours in it
        seed each other (see the module docstring). Default: a line of ``K`` points.
    system : callable, optional
        ``system(k)`` returns point ``k`` as a :class:`~fluidnet.linear.lineardde.LinearDDE`
        for the full method (default: built from the stack).
    root_options : dict, optional
        Keyword arguments of :func:`~fluidnet.linear.roots.characteristic_roots` for the full
        method (e.g. ``max_nodes``).
    skip : numpy.ndarray of bool, optional
        ``(K,)`` points to leave out (their rows of the stack are ignored; root NaN).

    Returns
    -------
    RightmostRoots
    """
    K = stack.K
    shape = (K,) if shape is None else tuple(int(d) for d in shape)
    if int(np.prod(shape)) != K:
        raise ValueError(f"shape {shape} does not hold {K} systems")
    opts = dict(root_options or {})
    if system is None:
        system = _system_from(stack)
    if not (np.iscomplexobj(stack.A0) or np.iscomplexobj(stack.A)):
        if stack.n == 1:
            return _rightmost_scalar(stack, shape, system, opts, skip)
        agg = aggregation(stack, None if skip is None else ~skip)
        if agg is not None:
            return _rightmost_aggregated(stack, agg, shape, system, opts, skip)
    return _rightmost_plain(stack, shape, system, opts, skip)


def _rightmost_scalar(
    stack: Stack,
    shape: tuple[int, ...],
    system: Callable[[int], Any],
    opts: dict,
    skip: np.ndarray | None,
) -> RightmostRoots:
    """:func:`rightmost_roots` of real scalar systems: those with at most one delayed term
    (a network's factors of alike flows, :mod:`.aggregate`) in closed form
    (:func:`~fluidnet.linear.lambertw.rightmost_one_delay`), the others, and any the closed
    form does not settle, by :func:`_rightmost_plain`. The 100-state network's 100 x 100 chart
    has 30 such factors at every point: their continuation and certificates took 2.3 of its
    20.5 s, the closed form 0.3 s (the same roots to 3e-16, the same verdicts)."""
    K = stack.K
    a = stack.A0[:, 0, 0]
    D = stack.A[:, :, 0, 0]  # (K, m)
    nonzero = D != 0
    one = np.count_nonzero(nonzero, axis=1) <= 1
    b, tau = np.zeros(K), np.zeros(K)
    if stack.m:
        j = np.argmax(nonzero, axis=1)  # the delayed term (any, where there is none: b = 0)
        rows = np.arange(K)
        b = np.where(one, D[rows, j], 0.0)
        tau = np.where(one & (b != 0), stack.tau[rows, j], 0.0)
    todo = one if skip is None else one & ~skip
    root = np.full(K, complex("nan"))
    line = np.full(K, np.nan)
    closed = np.zeros(K, dtype=bool)
    if todo.any():
        r, ln, ok = rightmost_one_delay(a[todo], b[todo], tau[todo])
        at = np.flatnonzero(todo)
        root[at], line[at], closed[at] = r, ln, ok
    rest = closed if skip is None else closed | skip
    if rest.all():
        empty = np.full(K, "", dtype=object)
        stats = dict(_State(0).stats, closed_form=int(closed.sum()))
        return RightmostRoots(
            root,
            line,
            closed.copy(),
            empty.astype(str),
            np.zeros(K, bool),
            stats,
            empty.astype(str),
        )
    plain = _rightmost_plain(stack, shape, system, opts, rest)
    out_root = np.where(closed, root, plain.root)
    out_line = np.where(closed, line, plain.certificate)
    certified = np.where(closed, True, plain.certified)
    stats = dict(plain.stats)
    stats["closed_form"] = int(closed.sum())
    fallback = plain.fallback if plain.fallback is not None else np.full(K, "", dtype=str)
    return RightmostRoots(
        out_root,
        out_line,
        certified,
        np.where(closed, "", plain.reason).astype(str),
        np.where(closed, False, plain.full),
        stats,
        np.where(closed, "", fallback).astype(str),
    )


def _rightmost_plain(
    stack: Stack,
    shape: tuple[int, ...],
    system: Callable[[int], Any],
    opts: dict,
    skip: np.ndarray | None,
) -> RightmostRoots:
    """:func:`rightmost_roots` without the factorization of alike flows."""
    K = stack.K
    state = _State(K, N_SEEDS_LARGE if stack.n >= CLUSTERED_STATES else N_SEEDS)
    with single_threaded_blas():
        if np.iscomplexobj(stack.A0) or np.iscomplexobj(stack.A):
            _full(state, np.arange(K) if skip is None else np.flatnonzero(~skip), system, opts)
        else:
            # a network's flows of one route with unequal delays, or routes of several links:
            # a similar stack with a small Schur complement (fluidnet.linear.aggregate.grouped)
            stack = grouped(stack) or stack
            d = balance_scales(np.abs(stack.A0) + np.sum(np.abs(stack.A), axis=1))
            bal = stack.scaled(d)
            live = np.any(bal.A != 0, axis=(0, 2, 3))  # delays with a matrix somewhere
            bal = Stack(bal.A0, bal.A[:, live], bal.tau[:, live], bal.given_split)
            if bal.n > 1:  # the certificate's balancing, once: every part taken inherits it
                _ = bal.full_scales
            delay_free = bal.max_delay() == 0.0
            coords = np.indices(shape).reshape(len(shape), -1).T
            deferred: list[np.ndarray] = []
            for points, parents in grid_levels(shape, COARSE_POINTS):
                if skip is not None:
                    points, parents = points[~skip[points]], parents[~skip[points]]
                direct = delay_free[points] | (parents < 0)
                # a point whose parent was not certified starts from the nearest point that was
                orphan = ~direct & ~np.isfinite(state.seeds[np.maximum(parents, 0), 0])
                if orphan.any():
                    parents = parents.copy()
                    parents[orphan] = _nearest_certified(state, coords, points[orphan])
                    lost = orphan & (parents < 0)
                    deferred.append(points[lost])
                    points, parents, direct = points[~lost], parents[~lost], direct[~lost]
                first = points[direct]
                if bal.n >= CLUSTERED_STATES and first.size:
                    # a large system's first points by the batched discretization (the full
                    # method's discretization sizes converge slowly at 40 states: 1.2 s)
                    delayed = _discretized(state, bal, first[~delay_free[first]])
                    first = np.concatenate([first[delay_free[first]], delayed])
                _full(state, first, system, opts)
                cont, par = points[~direct], parents[~direct]
                left = _continue_or_discretize(state, bal, cont, par, discretize=False, level=True)
                if left.size:
                    # again from the nearest other certified point (a neighbour solved at this
                    # level may carry a root the parent did not: the 100-state network's 20 x
                    # 20 chart discretized 19 points instead of 226), then the discretization
                    was = par[np.isin(cont, left)]  # in the order of `left`
                    other = _nearest_certified(state, coords, left, exclude=was)
                    go = other >= 0
                    rest = _continue_or_discretize(
                        state, bal, left[go], other[go], discretize=False
                    )
                    left = np.concatenate([left[~go], rest]).astype(int)
                    deferred.append(_discretized(state, bal, left) if left.size else left)
            # what failed: again from the nearest certified points while that certifies more,
            # then the full per-point method
            todo = np.concatenate([np.zeros(0, dtype=int), *deferred]).astype(int)
            for _ in range(RETRY_ROUNDS):
                if not todo.size:
                    break
                par = _nearest_certified(state, coords, todo)
                go = par >= 0
                if not go.any():
                    break
                left = _continue_or_discretize(state, bal, todo[go], par[go], discretize=False)
                if left.size == int(go.sum()):
                    break
                todo = np.concatenate([todo[~go], left])
            if todo.size:
                unset = state.fallback[todo] == ""
                state.fallback[todo[unset]] = (
                    "not certified by continuation from a neighbour nor by the batched "
                    "discretization"
                )
            _full(state, todo, system, opts)
    return RightmostRoots(
        state.root,
        state.line,
        state.certified,
        state.reason,
        state.full,
        state.stats,
        state.fallback.astype(str),
    )


#: Rightmost roots of two parts of a factored system closer than this (relative) are tied.
TIE_RTOL = 1e-10


def _rightmost_aggregated(
    stack: Stack,
    agg: Aggregation,
    shape: tuple[int, ...],
    system: Callable[[int], Any],
    opts: dict,
    skip: np.ndarray | None,
) -> RightmostRoots:
    """:func:`rightmost_roots` of a system whose alike flows factor its determinant
    (:mod:`.aggregate`): the rightmost roots of the reduced systems and of the scalar factors,
    each certified on its own, combined.

    Where the rightmost part is ``P`` (certified on its line ``l_P``) and the others' rightmost
    roots lie at most at ``r'`` left of it, no root of the whole system other than ``P``'s
    rightmost ones lies right of ``max(l_P, (Re P + r') / 2)``: that line is the certificate.
    A point where a part is not certified is solved without the factorization.
    """
    K, G = stack.K, agg.G
    skip_g = None if skip is None else np.tile(skip, G)
    red = rightmost_roots(agg.reduced, shape, root_options=opts, skip=skip)
    fac = rightmost_roots(agg.factors, (G, *shape), root_options=opts, skip=skip_g)
    roots = np.concatenate([red.root[None], fac.root.reshape(G, K)])  # (G + 1, K)
    lines = np.concatenate([red.certificate[None], fac.certificate.reshape(G, K)])
    ok = red.certified & np.all(fac.certified.reshape(G, K), axis=0)
    re = np.where(np.isfinite(roots), np.real(roots), -np.inf)
    top = np.max(re, axis=0)
    tied = re >= (top - TIE_RTOL * (1.0 + np.abs(top)))[None]
    below = np.max(np.where(tied, -np.inf, re), axis=0)
    with np.errstate(invalid="ignore"):
        line = np.max(np.where(tied, lines, -np.inf), axis=0)
        line = np.where(np.isfinite(below), np.maximum(line, 0.5 * (top + below)), line)
    # the rightmost root reported: of the tied parts, the one of largest imaginary part
    which = np.argmax(np.where(tied, np.imag(roots), -np.inf), axis=0)
    root = roots[which, np.arange(K)]
    root = np.where(ok, root, np.nan + 0j)
    line = np.where(ok, line, np.nan)
    stats = {key: red.stats.get(key, 0) + fac.stats.get(key, 0) for key in red.stats}
    stats["factored_classes"] = G
    reason = np.where(ok, "", red.reason).astype(object)
    full = red.full | np.any(fac.full.reshape(G, K), axis=0)
    fallback = np.full(K, "", dtype=object)
    for part in (fac, red):  # the reduced system's reason first where both have one
        if part.fallback is not None:
            why = part.fallback.reshape(-1, K)
            for row in why:
                fallback = np.where(row != "", row, fallback)
    bad = np.flatnonzero(~ok & (np.ones(K, bool) if skip is None else ~skip))
    if bad.size:
        # a part not certified: these points without the factorization
        others = np.ones(K, dtype=bool)  # left out of this second pass
        others[bad] = False
        plain = _rightmost_plain(stack, shape, system, opts, others)
        root[bad], line[bad] = plain.root[bad], plain.certificate[bad]
        ok[bad], reason[bad], full[bad] = plain.certified[bad], plain.reason[bad], plain.full[bad]
        fallback[bad] = "a part of the factored system was not certified"
        for key, v in plain.stats.items():
            stats[key] = stats.get(key, 0) + v
    return RightmostRoots(root, line, ok, reason.astype(str), full, stats, fallback.astype(str))


def _continue_or_discretize(
    state: _State,
    bal: Stack,
    cont: np.ndarray,
    par: np.ndarray,
    discretize: bool = True,
    level: bool = False,
) -> np.ndarray:
    """Continuation from the parents, then (``discretize``) the batched discretization for
    the points it did not certify; returns the points neither certified. (``level``: the
    points of a grid level from their parents, counted for :data:`TRACK_SHARE`.)"""
    if cont.size:
        state.stats["continued"] += cont.size
        # a large system's points directly until most of the levels' points fail so
        homotopy = state.track_first
        failed = _guarded(state, "continuation", _continue, bal, cont, par, homotopy)
        if level and not homotopy and bal.n >= CLUSTERED_STATES:
            state.direct_tried += cont.size
            state.direct_failed += int(failed.sum())
            state.track_first = state.direct_tried >= TRACK_AFTER and (
                state.direct_failed > TRACK_SHARE * state.direct_tried
            )
        cont = cont[failed]
    if cont.size and discretize:
        cont = _discretized(state, bal, cont)
    return cont


def _discretized(state: _State, bal: Stack, points: np.ndarray) -> np.ndarray:
    """The batched discretization of ``points`` (a large system's first at a coarse size:
    its rightmost eigenvalues only start Newton's method, the certificate decides); returns
    the points it did not certify."""
    state.stats["discretized"] += points.size
    sizes = [state.n_nodes]
    if bal.n >= CLUSTERED_STATES and state.n_nodes > COARSE_NODES:
        sizes.insert(0, COARSE_NODES)
    for n_nodes in sizes:
        if points.size:
            failed = _guarded(state, "discretization", _discretize, bal, points, n_nodes)
            points = points[failed]
    return points


def _nearest_certified(
    state: _State, coords: np.ndarray, points: np.ndarray, exclude: np.ndarray | None = None
) -> np.ndarray:
    """For each of ``points``, the nearest grid point (in index steps) with certified roots
    to start from, other than ``exclude`` (one per point) (``-1`` where there is none).

    Of neighbours at the same distance (common on a grid), the highest index: measured on the
    charts of tests/user_laws.py (20 x 20 for the rings, 100 x 100 for the others), fewer
    points needed the discretization than with SciPy's k-d tree (the three-route Kelly law
    51 -> 4, the 20-flow ring 14 -> 5, the unequal 30-flow ring 65 -> 63; the lowest index:
    23 on the 20-flow ring), the same verdicts; and no scipy.spatial import (0.25 s of a
    first boundary) below :data:`fluidnet.nearest.DIRECT_PAIRS` pairs.
    """
    solved = np.flatnonzero(state.certified & np.isfinite(state.seeds[:, 0]))
    if solved.size == 0 or points.size == 0:
        return np.full(points.size, -1)
    from ..nearest import nearest

    k = 1 if exclude is None else min(2, solved.size)
    latest_first = solved[::-1]  # nearest() breaks ties to its lowest index
    dist, near = nearest(coords[latest_first], coords[points], k=k)
    pick = latest_first[near]
    if exclude is None:
        return pick[:, 0]
    first = np.where(pick[:, 0] != exclude, pick[:, 0], pick[:, -1])
    ok = np.isfinite(dist[:, 0]) & (first != exclude)
    return np.where(ok, first, -1)


def _system_from(stack: Stack) -> Callable[[int], Any]:
    from .lineardde import LinearDDE

    def system(k: int):
        return LinearDDE(
            stack.A0[k], [(t, a) for t, a in zip(stack.tau[k], stack.A[k], strict=True)]
        )

    return system


def _full(state: _State, points: np.ndarray, system, opts) -> None:
    """Solve ``points`` by the full per-point method."""
    state.stats["full"] += len(points)
    for k in points:
        k = int(k)
        state.full[k] = True
        try:
            roots = certified_roots(system(k), k=2 * state.R, **opts)
        except FluidnetError as exc:
            state.reason[k] = str(exc)
            continue
        if not roots:
            state.reason[k] = "no characteristic root found"
            continue
        if not roots.certified:
            state.reason[k] = (
                f"not certified: the argument principle on Re s = {roots.certificate:.6g} does "
                "not confirm the roots found right of it"
            )
            continue
        state.n_nodes = max(state.n_nodes, roots.n_nodes)
        top = roots[0].value
        state.root[k] = complex(top.real, abs(top.imag))
        state.line[k] = roots.certificate
        state.certified[k] = True
        state.reason[k] = ""
        upper = [r.value for r in roots if r.imag >= 0][: state.R]
        state.seeds[k, : len(upper)] = upper


def _continue(
    state: _State, stack: Stack, points: np.ndarray, parents: np.ndarray, homotopy: bool
) -> np.ndarray:
    """Newton from the parents' roots (a large system's along the homotopy from the parent's
    system when ``homotopy``), then the certificate; returns the mask of the points that
    failed."""
    P, R = points.size, state.R
    target = stack.take(points)
    seeds = state.seeds[parents]  # (P, R)
    # a real seed also gets a nearby complex start: two real roots may have merged into a pair
    # (not for large systems: the Ehrlich-Aberth iteration pushes the extra start and its
    # mirror image off to other roots, at 1.5 times the cost; a pair missed this way is
    # caught by the certificate like any other root)
    real = np.isfinite(seeds) & (np.imag(seeds) == 0) & (stack.n < CLUSTERED_STATES)
    nudge = np.where(real, seeds + 1e-3j * (1.0 + np.abs(seeds)), np.nan)
    cand = np.concatenate([seeds, nudge], axis=1).ravel()
    idx = np.repeat(np.arange(P), 2 * R)
    keep = np.isfinite(cand)
    lam, idx = cand[keep], idx[keep]
    if homotopy and stack.n >= CLUSTERED_STATES and TRACK_STEPS > 1:
        lam = _tracked(stack.take(parents), target, lam, idx)
    return _accept(state, target, points, _newton(target, lam, idx), idx)


#: Large systems: the parent's roots are followed to the point along the straight segment
#: between their matrices (and delays) in this many steps; a network's roots cluster and move
#: across each other from one grid point to the next, and Newton's method started at the
#: parent's roots converged to roots other than those continued (the rightmost one lost).
TRACK_STEPS = 10
#: A large system's points are continued directly (Newton's method at the point from the
#: parent's roots) until more than this share of the grid levels' points continued from their
#: parents (counted from :data:`TRACK_AFTER` points on) failed the certificate: the rest of
#: the grid is then continued along the homotopy. The 20-flow ring's reduced
#: system (15 states) failed 3 % of its 20 x 20 chart directly and 3 % along the homotopy
#: (1.19 -> 0.75 s); the 100-state network's (40 states) 61 % directly and 6 % along the
#: homotopy (2.6 s: 6.4 s directly).
TRACK_SHARE = 0.5
TRACK_AFTER = 8
#: Relative tolerance of the corrections at the intermediate steps of :func:`_tracked` (the
#: path only has to stay on its root; Newton's method at the child converges fully).
TRACK_TOL = 1e-4


def _tracked(parent: Stack, child: Stack, lam: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """The roots ``lam`` of ``parent`` systems ``idx`` followed along the homotopy
    ``(1 - t) parent + t child`` to ``t = (TRACK_STEPS - 1) / TRACK_STEPS`` (a root lost on the
    way goes on from where it was). Each step starts from the last step's root plus its last
    move (the secant predictor), and returns the prediction at ``t = 1``: at 100 states the
    corrections took 4 to 5 iterations a step from the last root, 2 from the prediction."""
    step_of = np.zeros(lam.shape, dtype=complex)  # each root's last move along the path
    # the systems along the segment sampled from the ends' entries (no matrices formed a
    # step: 0.11 of 0.45 s of the 100-state network's 20 x 20 chart went into them)
    segment = schur_segment(parent, child) if not parent.is_complex() else None
    for step in range(1, TRACK_STEPS):
        t = step / TRACK_STEPS
        logderiv = segment(t) if segment is not None else None
        if logderiv is not None:  # as _newton does on a real stack of a large system
            tol = TRACK_TOL
            new, active = aberth(
                logderiv, lam + step_of, idx, tol=tol, stall_tol=max(tol, 1e-8), maxiter=12
            )
            new[active] = np.nan
        else:
            mid = Stack(
                (1 - t) * parent.A0 + t * child.A0,
                (1 - t) * parent.A + t * child.A,
                (1 - t) * parent.tau + t * child.tau,
                child.split,
            )
            new = _newton(mid, lam + step_of, idx, maxiter=12, tol=TRACK_TOL)
        ok = np.isfinite(new)
        step_of = np.where(ok, new - lam, 0.0)
        lam = np.where(ok, new, lam)
    return lam + step_of


def _discretize(state: _State, stack: Stack, points: np.ndarray, n_nodes: int) -> np.ndarray:
    """The spectral discretization of :func:`~fluidnet.linear.roots.generator_matrix` at one
    size for all ``points`` at once (one stacked eigenvalue problem), its rightmost
    eigenvalues refined by Newton, then the certificate; returns the mask of failures."""
    P, R = points.size, state.R
    M = stack.n * (n_nodes + 1)
    if M > DENSE_LIMIT:
        # a large system: no dense discretization (the full method counts boxes instead)
        state.fallback[points] = (
            f"not certified by continuation from a neighbour; {M} rows are too many for the "
            "batched discretization"
        )
        return np.ones(P, dtype=bool)
    target = stack.take(points)
    per = max(1, DISCRETIZED_ENTRIES // (M * M))  # systems per stacked eigenvalue problem
    ev = np.concatenate(
        [
            np.linalg.eigvals(
                generator_matrices(target.take(np.arange(a, min(a + per, P))), n_nodes)
            )
            for a in range(0, P, per)
        ]
    )  # (P, M)
    ev = np.where(np.isfinite(ev) & (ev.imag >= 0), ev, np.nan)
    ev = np.where(np.abs(np.imag(ev)) <= 1e-12 * (1 + np.abs(ev)), np.real(ev) + 0j, ev)
    order = np.argsort(-np.where(np.isfinite(ev), np.real(ev), -np.inf), axis=1)[:, : 3 * R]
    cand = np.take_along_axis(ev, order, axis=1)
    idx = np.repeat(np.arange(P), cand.shape[1])
    cand = cand.ravel()
    keep = np.isfinite(cand)
    lam, idx = cand[keep], idx[keep]
    return _accept(state, target, points, _newton(target, lam, idx), idx)


def generator_matrices(stack: Stack, N: int) -> np.ndarray:
    """:func:`~fluidnet.linear.roots.generator_matrix` of every system of the stack."""
    from .roots import _chebyshev

    K, n = stack.K, stack.n
    x, D = _chebyshev(N)
    tau_max = stack.max_delay()
    big = np.zeros((K, n * (N + 1), n * (N + 1)))
    lower = np.kron(D[1:, :], np.eye(n))  # (n N, n (N + 1))
    big[:, n:, :] = (2.0 / tau_max)[:, None, None] * lower
    # barycentric interpolation rows at theta = -tau_k, i.e. x = 1 - 2 tau_k / tau_max
    point = 1.0 - 2.0 * stack.tau / tau_max[:, None]  # (K, m)
    w = (-1.0) ** np.arange(N + 1)
    w[0] *= 0.5
    w[-1] *= 0.5
    diff = point[..., None] - x  # (K, m, N + 1)
    hit = np.abs(diff) <= 1e-15
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = w / diff
        rows = terms / terms.sum(axis=-1, keepdims=True)
    rows = np.where(hit.any(axis=-1, keepdims=True), hit.astype(float), rows)
    top = np.einsum("kmj,kmab->kajb", rows, stack.A).reshape(K, n, n * (N + 1))
    top[:, :, :n] += stack.A0
    big[:, :n, :] = top
    return big


def _accept(
    state: _State, target: Stack, points: np.ndarray, lam: np.ndarray, idx: np.ndarray
) -> np.ndarray:
    """Keep the converged candidates ``lam`` (of ``target`` systems ``idx``) that pass the
    residual test, certify each point and store its roots; returns the mask of failures."""
    P, R = points.size, state.R
    good = np.isfinite(lam)
    lam, idx = lam[good], idx[good]
    good = target.residual_within(lam, idx, RESIDUAL_TOL)
    lam, idx = lam[good], idx[good]
    # upper half-plane representatives; nearly real roots made real
    lam = np.where(np.imag(lam) < 0, lam.conj(), lam)
    near_real = np.abs(np.imag(lam)) <= 1e-10 * (1 + np.abs(lam))
    lam = np.where(near_real, np.real(lam) + 0j, lam)
    lam = _snap_zero(target, lam, idx)
    # group per point, sorted by real part (descending), duplicates merged
    order = np.lexsort((-np.imag(lam), -np.real(lam), idx))
    lam, idx = lam[order], idx[order]
    dup = np.zeros(lam.size, dtype=bool)
    if lam.size > 1:
        close = np.abs(lam[1:] - lam[:-1]) <= MERGE_RTOL * (1 + np.abs(lam[1:]))
        dup[1:] = (idx[1:] == idx[:-1]) & close
    lam, idx = lam[~dup], idx[~dup]
    # per point: the table of its roots (P, R), rightmost first
    start = np.searchsorted(idx, np.arange(P))
    rank = np.arange(idx.size) - start[idx]
    table = np.full((P, R), np.nan + 0j)
    inside = rank < R
    table[idx[inside], rank[inside]] = lam[inside]
    has = np.isfinite(table[:, 0])
    # the certificate line of each point, clear of its known roots
    # (vectorized certificate_line: the first clear offset, else move left past close roots)
    gap = 0.1 / target.max_delay()
    re = np.where(np.isfinite(table), np.real(table), -np.inf)
    sigma = np.full(P, np.nan)
    with np.errstate(invalid="ignore"):  # a point without roots: -inf - -inf, no line
        for t in LINE_OFFSETS[::-1]:
            trial = re[:, 0] - gap * t
            clear = np.all(np.abs(re - trial[:, None]) >= 0.25 * gap[:, None] * t, axis=1)
            sigma = np.where(clear, trial, sigma)
        moved = re[:, 0] - gap
        for j in range(R):
            close = np.abs(re[:, j] - moved) < 0.25 * gap
            moved = np.where(close, re[:, j] - gap, moved)
    sigma = np.where(np.isnan(sigma), moved, sigma)
    if target.n >= CLUSTERED_STATES:
        # a network's roots cluster (one per flow): a line an offset left of the rightmost
        # root passes many that were not carried (20 to 40 on the 100-state network, with 12
        # carried); the line halfway to the next real part known, where that is closer
        lower = np.where(re < (re[:, :1] - 1e-9 * (1.0 + np.abs(re[:, :1]))), re, -np.inf)
        nxt = np.max(lower, axis=1)
        with np.errstate(invalid="ignore"):
            mid = 0.5 * (re[:, 0] + nxt)
        sigma = np.where(np.isfinite(nxt) & (mid > sigma), mid, sigma)
    # roots known right of the line: every root found there (a pair counts twice)
    weight = np.where(np.imag(lam) > 0, 2, 1)
    right = np.real(lam) > sigma[idx]
    known = np.bincount(idx[right], weights=weight[right], minlength=P)
    count = np.full(P, -1)
    count[has], _ = count_right_of(target.take(has), sigma[has])
    ok = has & (count == known)
    again = has & (count > known)
    if again.any():
        took, line, roots = _second_line(target, table, again, gap)
        sigma[took] = line[took]
        table[took] = roots[took]
        ok[took] = True
    k_ok = points[ok]
    state.root[k_ok] = table[ok, 0]
    state.line[k_ok] = sigma[ok]
    state.certified[k_ok] = True
    state.seeds[k_ok] = table[ok]
    return ~ok


def _second_line(
    target: Stack, table: np.ndarray, again: np.ndarray, gap: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Certify the points ``again`` whose first line counted more roots than were carried.

    A network's slow roots (one per flow) cluster within the first line's offset of the
    rightmost root, and a continued point may carry only one of them. First, a circle around
    each root found (apart from the others, within a fiftieth of the line offset) counts the
    zeros of ``det Delta`` it encloses (the winding number, :mod:`.inclusion`); the zeros of a
    circle that holds more than one (a cluster, or a multiple root of a ring's symmetric
    routes) are computed from the moments of ``f'/f`` on it (:func:`_cluster_roots`). Then a
    second line is drawn halfway between the rightmost real part now known and the next one
    below it (at a hundredth of the first offset where there is none); the point is certified
    when the argument principle on that line counts exactly the roots known right of it.

    Returns ``(points, lines, roots)``: the indices (into ``table``) of the certified points,
    the lines (``(P,)``), and the certified points' roots, rightmost first (``(P, R)``,
    meaningful at those indices).
    """
    P, R = table.shape
    out = table.copy()
    line = np.full(P, np.nan)
    pts = np.flatnonzero(again)
    sub = table[pts]
    right = np.isfinite(sub)
    j = np.nonzero(right)[0]
    z = sub[right]
    radius = np.minimum(0.02 * gap[pts[j]], np.where(np.imag(z) > 0, 0.5 * np.imag(z), np.inf))
    others = np.abs(sub[j] - z[:, None])  # distances to the point's other roots
    others = np.where(np.isfinite(others) & (others > 0), others, np.inf)
    radius = np.minimum(radius, 0.4 * np.min(others, axis=1))
    zeros: list[np.ndarray | None] = [None] * z.size
    todo = np.flatnonzero(radius > 0)
    for samples in (64, 256, 1024):
        if todo.size == 0:
            break
        sys_of = pts[j[todo]]

        def det_logderiv(s, sys_of=sys_of, samples=samples):
            return target.det_logderiv(s, np.repeat(sys_of, samples))

        wound, resolved, h, g = winding_numbers(det_logderiv, z[todo], radius[todo], samples)
        for q in np.flatnonzero(resolved):
            c = todo[q]
            if wound[q] == 1:
                zeros[c] = z[c : c + 1]
            elif wound[q] > 1:
                zeros[c] = _cluster_roots(
                    target, int(pts[j[c]]), complex(z[c]), float(radius[c]), h[q], g[q]
                )
        todo = todo[~resolved]
    good = np.zeros(pts.size, dtype=bool)
    found: list[np.ndarray | None] = [None] * pts.size
    first = np.zeros(pts.size)  # the first offset tried
    for q in range(pts.size):
        mine = np.flatnonzero(j == q)
        if any(zeros[c] is None for c in mine):
            continue
        roots = np.concatenate([zeros[c] for c in mine])  # type: ignore[misc]
        roots = roots[np.lexsort((-np.imag(roots), -np.real(roots)))]
        re = np.real(roots)
        lower = re[re < re[0] - 1e-9 * (1.0 + abs(re[0]))]
        first[q] = 0.5 * (re[0] - lower[0]) if lower.size else 0.01 * gap[pts[q]]
        found[q] = roots
        out[pts[q]] = np.nan
        unique = roots[np.r_[True, np.abs(np.diff(roots)) > 0]][:R]
        out[pts[q], : unique.size] = unique
    # lines ever closer to the rightmost roots: unknown roots (a cluster that continuation
    # did not carry) may lie between the rightmost and the next one known
    todo = np.array([q for q in range(pts.size) if found[q] is not None], dtype=int)
    for shrink in SECOND_LINE_SHRINK:
        if not todo.size:
            break
        known = np.zeros(todo.size, dtype=int)
        for i, q in enumerate(todo):
            roots = found[q]
            assert roots is not None
            re = np.real(roots)
            line[pts[q]] = re[0] - first[q] * shrink
            known[i] = np.sum(np.where(np.imag(roots) > 0, 2, 1)[re > line[pts[q]]])
        counted, _ = count_right_of(target.take(pts[todo]), line[pts[todo]])
        hit = counted == known
        good[todo[hit]] = True
        todo = todo[~hit]
    line[pts[~good]] = np.nan
    return pts[good], line, out


#: The second certificate line's offsets from the rightmost root, relative to the first one
#: tried (half the distance to the next root known, else a hundredth of the first line's).
SECOND_LINE_SHRINK = (1.0, 0.1, 0.01)
#: Zeros of a cluster closer than this (relative to the circle) are one multiple root.
CLUSTER_MERGE = 1e-5


def _cluster_roots(
    target: Stack, k: int, center: complex, radius: float, h: np.ndarray, g: np.ndarray
) -> np.ndarray | None:
    """The ``m`` zeros of ``det Delta`` (system ``k``) inside a resolved circle, with
    multiplicity (``None`` where they cannot be told apart reliably).

    The power sums of the zeros' offsets from the centre, in units of the radius, are the
    moments ``mean(u^(p+1) f'/f) r`` of the samples on the circle (``u = h / r``; trapezoidal
    rule, exponentially accurate for a resolved circle); Newton's identities turn them into
    the polynomial whose roots they are. Each distinct zero is then refined by Newton's method
    and must pass the residual test and stay in its place (move by less than a quarter of its
    distance to the other zeros); zeros closer than :data:`CLUSTER_MERGE` are one multiple
    root, reported at their mean (which, unlike each member, is well conditioned).
    """
    u = h / radius
    m = int(np.rint(np.real(np.mean(u * g) * radius)))
    if m < 2 or m > 8:
        return None
    power = np.array([np.mean(u ** (p + 1) * g) * radius for p in range(1, m + 1)])
    w = zeros_from_power_sums(power, m)
    if w.size != m or not np.all(np.isfinite(w)) or np.any(np.abs(w) >= 1.0):
        return None
    # groups of (numerically) equal zeros
    groups: list[list[int]] = []
    for i in np.argsort(np.real(w)):
        for grp in groups:
            if abs(w[grp[0]] - w[i]) <= CLUSTER_MERGE:
                grp.append(int(i))
                break
        else:
            groups.append([int(i)])
    means = np.array([np.mean(w[grp]) for grp in groups])
    sizes = np.array([len(grp) for grp in groups])
    est = center + radius * means
    simple = sizes == 1
    refined = est.copy()
    if simple.any():
        idx = np.full(int(simple.sum()), k)
        new, active = target.newton(est[simple], idx, tol=1e-13, stall_tol=1e-10, maxiter=20)
        if active.any() or not np.all(target.residual_within(new, idx, RESIDUAL_TOL)):
            return None
        if means.size > 1:
            sep = np.abs(means[:, None] - means[None, :]) + np.diag(np.full(means.size, np.inf))
            apart = 0.25 * radius * np.min(sep, axis=1)[simple]
            if np.any(np.abs(new - est[simple]) > apart):
                return None
        if np.any(np.abs(new - center) >= radius):
            return None
        refined[simple] = new
    zeros = np.repeat(refined, sizes)
    if np.imag(center) == 0.0:
        # a real system's circle about a real point: zeros come in conjugate pairs; keep the
        # upper representatives (each standing for its pair) and the real zeros
        tiny = 1e-10 * (1.0 + np.abs(zeros))
        real = np.abs(np.imag(zeros)) <= tiny
        zeros = np.where(real, np.real(zeros) + 0j, zeros)
        upper, lower = zeros[~real & (np.imag(zeros) > 0)], zeros[~real & (np.imag(zeros) < 0)]
        if upper.size != lower.size:
            return None
        zeros = np.concatenate([zeros[real], upper])
    return zeros


def _snap_zero(stack: Stack, lam: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """Roots within rounding of 0 become exactly 0 where ``Delta(0)`` is singular and 0 passes
    the residual test (as in :func:`~fluidnet.linear.roots.characteristic_roots`, so that
    marginal systems read as not stable)."""
    n0 = stack.norms[0][idx]
    nk = np.sum(stack.norms[1][idx], axis=1)
    size = n0 + nk
    ref = np.maximum(1.0 / np.maximum(stack.max_delay()[idx], 1e-300), size)
    near = np.abs(lam) <= 1e-6 * np.maximum(ref, 1e-300)
    if not near.any():
        return lam
    k = idx[near]
    M0 = stack.A0[k] + np.sum(stack.A[k], axis=1)
    sv = singular_values(M0)[1]
    singular = sv <= 1e-12 * np.maximum(size[near], np.finfo(float).tiny)
    res0 = stack.residual(np.zeros(k.size, dtype=complex), k)
    out = lam.copy()
    out[np.flatnonzero(near)[singular & (res0 <= RESIDUAL_TOL)]] = 0.0
    return out
