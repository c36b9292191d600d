"""The stability boundary of a parameter plane, located and refined in batches.

:func:`boundary_curves` is the ``"continuation"`` method of
:func:`~fluidnet.stability.boundary.stability_boundary` for any dependence on the two
parameters, built on the machinery of the stability chart:

1. **A coarse chart.** The linear systems of an ``n_seed x n_seed`` grid, built as one batch
   (:meth:`~fluidnet.stability.system.SystemFactory.batch`), and their certified rightmost
   roots (:func:`~fluidnet.linear.batch.rightmost_roots`, continued over the grid). Every
   grid edge whose ends differ in stability holds a crossing of the boundary.
2. **Located on the edges, all at once.** On an edge ``P(t)`` (``0 <= t <= 1``) a root
   crosses the imaginary axis at ``j omega``: ``det Delta(j omega; P(t)) = 0``, two real
   equations in ``(t, omega)`` (for a real root crossing at 0, ``det Delta(0; P(t)) = 0`` in
   ``t``), solved by Newton's method from the chart's roots at the ends, every edge in one
   vectorized iteration. The derivative in ``omega`` is exact (``(det Delta)' = det Delta
   trace(Delta^{-1} Delta')``), the one in ``t`` a forward difference. The systems of each
   iteration are one batch whose equilibria are continued from the previous iterate
   (:func:`~fluidnet.symbolic.nearby.linearize_near`): no equilibrium search but the coarse
   chart's.
3. **Chained.** Within a chart cell, two crossings of the same kind are two points of one
   curve; the cells link them into curves (open ones end on the box's edge).
4. **Refined.** Between two neighbouring points of a curve farther apart than
   ``resolution``, a new point is solved on the perpendicular bisector of the chord (again
   ``det Delta = 0`` in the offset and ``omega``), for every such gap at once, until no gap
   is left. The curves are as fine as the pseudo-arclength continuation made them, in a few
   batched rounds instead of thousands of sequential solves.

Where any of this does not settle (an edge with two crossings, a cell with crossings of two
kinds or more than two of one, a bisector that misses the curve), :func:`boundary_curves`
returns ``None`` and the caller traces the curves one point at a time (the former method,
:func:`~fluidnet.stability.boundary._continuation`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..errors import FluidnetError
from ..linear.aggregate import aggregation
from ..linear.batch import rightmost_roots
from ..linear.certificate import count_right_of
from ..linear.stacked import Stack
from .system import SystemFactory

__all__ = ["boundary_curves"]

#: Newton iterations of one batched solve.
MAX_ITER = 30
#: Relative forward-difference step in the offset along an edge or a bisector.
FD_STEP = 1e-7
#: Rounds of refinement (each halves the largest gap at least).
MAX_ROUNDS = 24


class _Points:
    """Parameter points of the plane, in units of the box, with the equilibria at them."""

    def __init__(self, factory: SystemFactory, xn: str, yn: str, xr, yr):
        self.factory, self.xn, self.yn = factory, xn, yn
        self.origin = np.array([xr[0], yr[0]], dtype=float)
        self.span = np.array([xr[1] - xr[0], yr[1] - yr[0]], dtype=float)

    def systems(self, uv: np.ndarray, near: np.ndarray | None):
        """The systems at box coordinates ``uv`` ``(K, 2)`` as a stack, the equilibria, and
        which rows are usable."""
        xy = self.origin + uv * self.span
        values = {self.xn: xy[:, 0], self.yn: xy[:, 1]}
        # (rows of near without an equilibrium get the full search, one by one)
        made = self.factory.batch(values, near=near)
        ok = np.ones(len(uv), dtype=bool)
        ok[list(made.errors)] = False
        ok[list(made.separate)] = False
        return made.stack, made.equilibria, ok


def _det(stack: Stack, s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``det Delta(s_k)`` of system ``k`` and its logarithmic derivative."""
    idx = np.arange(stack.K)
    with np.errstate(all="ignore"):
        return stack.det_logderiv(np.asarray(s, dtype=complex), idx)


#: A point of a curve is on the stability boundary when the argument principle counts no
#: characteristic root right of ``Re s = ON_AXIS_RTOL (omega + 1 / tau_max)`` there: the
#: crossing roots themselves sit on the axis to Newton's accuracy, every other root must lie left
#: of the line (the tolerance of the flag, as :func:`~.boundary._mark`'s on the rightmost root).
ON_AXIS_RTOL = 1e-6


def _counts(stack: Stack, sigma: np.ndarray) -> np.ndarray:
    """The number of roots right of ``Re s = sigma_k`` of every system ``k`` (the argument
    principle, :func:`~fluidnet.linear.certificate.count_right_of`); ``-1`` where it is not
    certified.

    A network's alike flows factor the determinant (:mod:`fluidnet.linear.aggregate`): the
    reduced system and the scalar factors are counted instead of the whole system (the count is
    the reduced one's plus each factor's times its multiplicity)."""
    agg = None
    if stack.K and not (np.iscomplexobj(stack.A0) or np.iscomplexobj(stack.A)):
        agg = aggregation(stack)
    if agg is None:
        count, _ = count_right_of(stack, sigma)
        return count
    red, _ = count_right_of(agg.reduced, sigma)
    fac, _ = count_right_of(agg.factors, np.tile(sigma, agg.G))
    fac = fac.reshape(agg.G, stack.K)
    total = red + np.sum(fac * np.asarray(agg.multiplicity)[:, None], axis=0)
    return np.where((red >= 0) & np.all(fac >= 0, axis=0), total, -1)


def _on_boundary(stack: Stack, ok: np.ndarray, omega: np.ndarray) -> np.ndarray:
    """Whether system ``k`` (a crossing at ``j omega_k``) has no root right of the line just
    right of the axis, counted by the argument principle (:func:`_counts`); False where the
    count is not certified or ``ok`` is False."""
    K = stack.K
    out = np.zeros(K, dtype=bool)
    rows = np.flatnonzero(ok & np.isfinite(omega))
    if not rows.size:
        return out
    st = stack.take(rows)
    tau = st.max_delay()
    scale = np.abs(omega[rows]) + np.where(tau > 0, 1.0 / np.where(tau > 0, tau, 1.0), 1.0)
    sigma = ON_AXIS_RTOL * scale
    out[rows] = _counts(st, sigma) == 0
    return out


def _solve(
    points: _Points,
    base: np.ndarray,
    direction: np.ndarray,
    t0: np.ndarray,
    omega0: np.ndarray,
    hopf: np.ndarray,
    near: np.ndarray | None,
    t_bounds: tuple[np.ndarray, np.ndarray],
):
    """Newton's method on ``det Delta(j omega; base + t direction) = 0`` for every row.

    ``hopf`` rows solve for ``(t, omega)``; the others for ``t`` with ``omega = 0`` (a real
    root at 0); a row converges only within ``t_bounds`` (its iterates may leave them by half
    their width on the way), and only to a point of the stability boundary (no other root
    right of the axis there, :func:`_on_boundary`: in a network, many D-curves run close to
    each other, and Newton's method may land on one that lies inside the unstable region).
    Returns ``(t, omega, equilibria, converged)``.
    """
    K = len(base)
    t, w = t0.astype(float).copy(), np.where(hopf, omega0, 0.0).astype(float)
    X = near
    done = np.zeros(K, dtype=bool)
    alive = np.ones(K, dtype=bool)
    prev = np.full(K, np.inf)
    for _ in range(MAX_ITER):
        a = np.flatnonzero(alive & ~done)
        if a.size == 0:
            break
        uv = base[a] + t[a, None] * direction[a]
        st, Xa, ok = points.systems(uv, None if X is None else X[a])
        h = FD_STEP * np.maximum(1.0, np.abs(t[a]))
        st2, _, ok2 = points.systems(uv + h[:, None] * direction[a], Xa)
        s = 1j * w[a]
        f, g = _det(st, s)
        f2, _ = _det(st2, s)
        exact = ok & (f == 0)  # on the curve to the last bit
        done[a[exact]] = True
        good = ok & ok2 & np.isfinite(f) & np.isfinite(f2) & ~exact & np.isfinite(g)
        if X is None:
            X = np.full((K, Xa.shape[1]), np.nan) if Xa is not None else None
        if X is not None and Xa is not None:
            X[a] = Xa
        with np.errstate(all="ignore"):
            dt_log = (f2 / np.where(good, f, 1.0) - 1.0) / h  # d log f / dt
            dw_log = 1j * np.where(good, g, 0.0)  # d log f / d omega
        # dt_log dt + dw_log dw = -1 with real dt, dw: two real equations (Cramer's rule);
        # a real root (f real): the real equation alone
        hp = hopf[a]
        with np.errstate(all="ignore"):
            det2 = dt_log.real * dw_log.imag - dw_log.real * dt_log.imag
            dt_h = -dw_log.imag / det2
            dw_h = dt_log.imag / det2
            dt_z = -1.0 / dt_log.real
        dt = np.where(hp, dt_h, dt_z)
        dw = np.where(hp, dw_h, 0.0)
        good &= np.isfinite(dt) & np.isfinite(dw)
        alive[a[~good & ~exact]] = False
        t[a] += np.where(good, dt, 0.0)
        w[a] += np.where(good, dw, 0.0)
        # the iterates may leave the bounds on the way (a first step overshoots): only far
        lo, hi = t_bounds[0][a], t_bounds[1][a]
        wide = 0.5 * (hi - lo)
        out = (t[a] < lo - wide) | (t[a] > hi + wide)
        alive[a[out | (w[a] < -1e-9 * np.maximum(1.0, np.abs(w[a])))]] = False
        size = np.maximum(
            np.abs(dt) / np.maximum(1.0, np.abs(t[a])), np.abs(dw) / np.maximum(1.0, np.abs(w[a]))
        )
        # converged, or stalled at the rounding floor (the difference quotient is noise there)
        small = (size <= 1e-13) | ((size >= 0.9 * prev[a]) & (size <= 1e-8))
        prev[a] = np.where(good, size, np.inf)
        done[a[good & small]] = True
    conv = done & alive & (t >= t_bounds[0]) & (t <= t_bounds[1])
    w = np.abs(w)
    # the equilibria at the solutions
    if conv.any():
        c = np.flatnonzero(conv)
        stc, Xc, okc = points.systems(
            base[c] + t[c, None] * direction[c], None if X is None else X[c]
        )
        conv[c[~_on_boundary(stc, okc, np.where(hopf[c], w[c], 0.0))]] = False
        if X is not None and Xc is not None:
            X[c] = Xc
    return t, w, X, conv


def _start(ra: np.ndarray, rb: np.ndarray, w_eps: float):
    """Newton's start on edges whose ends have the rightmost roots ``ra`` and ``rb`` (one
    stable, one not): ``(t0, omega0, hopf)``, ``t0`` in ``[0, 1]`` where the real part crosses
    0 by linear interpolation, the frequency of the unstable end's root, and whether that root
    is complex (a Hopf crossing, else a real root at 0)."""
    a, b = np.real(ra), np.real(rb)
    with np.errstate(all="ignore"):
        t0 = np.clip(a / (a - b), 0.0, 1.0)
    w0 = np.abs(np.imag(np.where(a >= 0, ra, rb)))
    return t0, w0, w0 > w_eps


#: Halvings of an edge whose crossing Newton's method did not find from the edge's ends.
NARROW_ROUNDS = 4


def _narrowed(
    points: _Points,
    base: np.ndarray,
    direction: np.ndarray,
    ra: np.ndarray,
    rb: np.ndarray,
    failed: np.ndarray,
    w_eps: float,
    near: np.ndarray | None,
):
    """The crossings of the ``failed`` edges, each found in a part of its edge: the edge is
    halved where the rightmost root's stability changes (the root computed and certified at
    the middle), and Newton's method is started there again, its answer required to lie in
    that part. A network's crossing frequency changes fast along an edge, and Newton's method
    from the edge's ends went to another root's crossing, outside the edge or off the
    boundary. ``near``: the equilibria at an end of every edge (continued to the middles and
    the crossings; no equilibrium search). Returns
    ``(rows, t, omega, equilibria, hopf)`` of the failed rows, or ``None`` where a middle is
    not certified or a crossing is still not found."""
    rows = np.flatnonzero(failed)
    F = rows.size
    lo, hi = np.zeros(F), np.ones(F)
    r_lo, r_hi = ra[rows].copy(), rb[rows].copy()
    todo = np.arange(F)
    t, w, hopf = np.zeros(F), np.zeros(F), np.zeros(F, dtype=bool)
    X: np.ndarray | None = None
    for _ in range(NARROW_ROUNDS):
        mid = 0.5 * (lo[todo] + hi[todo])
        near_t = None if near is None else near[rows[todo]]
        st, _, ok = points.systems(base[rows[todo]] + mid[:, None] * direction[rows[todo]], near_t)
        found = rightmost_roots(st, skip=~ok)
        if not found.certified.all():
            return None
        rm = found.root
        left = (np.real(rm) < 0) != (np.real(r_lo[todo]) < 0)  # the change lies in [lo, mid]
        hi[todo] = np.where(left, mid, hi[todo])
        lo[todo] = np.where(left, lo[todo], mid)
        r_hi[todo] = np.where(left, rm, r_hi[todo])
        r_lo[todo] = np.where(left, r_lo[todo], rm)
        u, w0, h = _start(r_lo[todo], r_hi[todo], w_eps)
        t0 = lo[todo] + (hi[todo] - lo[todo]) * u
        span = (lo[todo] - 1e-9, hi[todo] + 1e-9)
        tt, ww, Xt, conv = _solve(
            points, base[rows[todo]], direction[rows[todo]], t0, w0, h, near_t, span
        )
        t[todo[conv]], w[todo[conv]], hopf[todo[conv]] = tt[conv], ww[conv], h[conv]
        if Xt is not None:
            if X is None:
                X = np.full((F, Xt.shape[1]), np.nan)
            X[todo[conv]] = Xt[conv]
        todo = todo[~conv]
        if not todo.size:
            return rows, t, w, X, hopf
    return None


def _interpolated(points: _Points, base, direction, start, found) -> np.ndarray | None:
    """Newton's method again on the Hopf edges where it failed from the unstable end's
    rightmost root, from the frequency interpolated between the ends' rightmost roots (where
    both are complex; the crossing root is often not the rightmost one at the unstable end,
    whose frequency is then far off). ``start``: ``(t0, hopf, near, bounds, ra, rb, w_eps)`` of
    every edge; ``found``: ``(t, omega, equilibria, converged)``, updated in place. Returns the
    equilibria (a new array where there were none)."""
    t0, hopf, near, bounds, ra, rb, w_eps = start
    t, w, X, conv = found
    wa, wb = np.abs(np.imag(ra)), np.abs(np.imag(rb))
    r = np.flatnonzero(~conv & hopf & (wa > w_eps) & (wb > w_eps))
    if not r.size:
        return X
    tt, ww, Xt, cc = _solve(
        points,
        base[r],
        direction[r],
        t0[r],
        wa[r] + t0[r] * (wb - wa)[r],
        hopf[r],
        None if near is None else near[r],
        (bounds[0][r], bounds[1][r]),
    )
    got = r[cc]
    t[got], w[got], conv[got] = tt[cc], ww[cc], True
    if Xt is not None:
        if X is None:
            X = np.full((len(t), Xt.shape[1]), np.nan)
        X[got] = Xt[cc]
    return X


def _coarse(points: _Points, n_seed: int):
    """The coarse chart: box coordinates ``(n, n, 2)``, the grid edges whose ends differ in
    stability (flat indices), the rightmost roots at their ends (NaN elsewhere), equilibria.

    The verdict of every grid point is the argument principle's count of the roots right of
    the axis (:func:`_counts`), several times cheaper than the rightmost root; the certified
    rightmost root (:func:`~fluidnet.linear.batch.rightmost_roots`) is computed only where the
    edges' crossings start from it, and where the count is not certified. A point whose
    rightmost root and count disagree on its stability (a root on the axis to rounding) takes
    the root's verdict, and the edges are drawn again."""
    g = np.linspace(0.0, 1.0, n_seed)
    U, V = np.meshgrid(g, g, indexing="ij")
    uv = np.stack([U.ravel(), V.ravel()], axis=1)
    st, X, ok = points.systems(uv, None)
    K = len(uv)
    count = np.full(K, -1)
    rows = np.flatnonzero(ok)
    if rows.size:
        count[rows] = _counts(st.take(rows), np.zeros(rows.size))
    known = count >= 0
    stable = count == 0
    root = np.full(K, np.nan + 0j)
    solved = ~ok  # points whose rightmost root is known (or never will be)

    def solve(idx: np.ndarray) -> None:
        idx = idx[~solved[idx]]
        if not idx.size:
            return
        found = rightmost_roots(st.take(idx))
        r = np.where(found.certified, found.root, np.nan)
        root[idx] = r
        solved[idx] = True
        fin = np.isfinite(r)
        known[idx] = fin
        stable[idx] = np.where(fin, np.real(r) < 0, stable[idx])

    solve(np.flatnonzero(ok & ~known))
    for _ in range(4):
        edges = _brackets(n_seed, known, stable)
        is_end = np.zeros(known.size, dtype=bool)  # each edge's ends, once (np.unique
        is_end[np.array(edges, dtype=int).reshape(-1)] = True  # imports numpy.ma: 14 ms)
        ends = np.flatnonzero(is_end)
        before = (known.copy(), stable.copy())
        solve(ends)
        if np.array_equal(before[0], known) and np.array_equal(before[1], stable):
            return uv, edges, root, X
    raise FluidnetError("the coarse chart's verdicts do not settle")


def _brackets(n_seed: int, known: np.ndarray, stable: np.ndarray) -> list[tuple[int, int]]:
    """Grid edges (flat indices) whose ends differ in stability (both known)."""
    out = []
    for i in range(n_seed):
        for j in range(n_seed):
            k = i * n_seed + j
            for di, dj in ((1, 0), (0, 1)):
                i2, j2 = i + di, j + dj
                if i2 >= n_seed or j2 >= n_seed:
                    continue
                k2 = i2 * n_seed + j2
                if known[k] and known[k2] and stable[k] != stable[k2]:
                    out.append((k, k2))
    return out


def _cells_of(edge: tuple[int, int], n_seed: int) -> list[tuple[int, int]]:
    """The chart cells (lower-left grid index) that contain a grid edge."""
    (i, j), i2 = divmod(edge[0], n_seed), edge[1] // n_seed
    out = []
    if i2 == i + 1:  # along the first axis: cells below and above in the second
        for jj in (j - 1, j):
            if 0 <= jj < n_seed - 1:
                out.append((i, jj))
    else:
        for ii in (i - 1, i):
            if 0 <= ii < n_seed - 1:
                out.append((ii, j))
    return out


def _chains(pairs: Sequence[tuple[int, int]], n: int) -> list[list[int]] | None:
    """Paths and cycles of a graph of degree at most 2 (``None`` otherwise)."""
    adj: list[list[int]] = [[] for _ in range(n)]
    for a, b in pairs:
        adj[a].append(b)
        adj[b].append(a)
    if any(len(x) > 2 for x in adj):
        return None
    seen = np.zeros(n, dtype=bool)
    out = []
    ends = [k for k in range(n) if len(adj[k]) <= 1]
    for start in ends + list(range(n)):
        if seen[start]:
            continue
        chain, prev, cur = [start], -1, start
        seen[start] = True
        while True:
            nxt = [k for k in adj[cur] if k != prev]
            if not nxt:
                break
            k = nxt[0]
            if seen[k]:
                if k == start and len(chain) > 2:
                    chain.append(start)  # a closed curve
                break
            chain.append(k)
            seen[k] = True
            prev, cur = cur, k
        out.append(chain)
    return out


def boundary_curves(
    factory: SystemFactory,
    xn: str,
    yn: str,
    xr: tuple[float, float],
    yr: tuple[float, float],
    n_seed: int,
    resolution: float,
    omega_scale: float,
) -> list[tuple[np.ndarray, np.ndarray, np.ndarray, str, np.ndarray | None, np.ndarray]] | None:
    """The stability boundary's curves ``(x, y, omega, kind, equilibria, on_boundary)`` (see
    the module docstring; ``equilibria`` ``(points, n)`` for a model, else ``None``;
    ``on_boundary``: every point checked by the argument principle, :func:`_on_boundary`), or
    ``None`` where the batched method does not settle them."""
    points = _Points(factory, xn, yn, xr, yr)
    try:
        uv, edges, root, X = _coarse(points, n_seed)
    except FluidnetError:
        return None
    if not edges:
        return []
    E = len(edges)
    ka = np.array([e[0] for e in edges])
    kb = np.array([e[1] for e in edges])
    ra, rb = root[ka], root[kb]
    w_eps = 1e-6 * omega_scale
    t0, w0, hopf = _start(ra, rb, w_eps)
    near = None if X is None else np.where((t0 < 0.5)[:, None], X[ka], X[kb])
    bounds = (np.full(E, -1e-9), np.full(E, 1.0 + 1e-9))
    t, w, Xe, conv = _solve(points, uv[ka], uv[kb] - uv[ka], t0, w0, hopf, near, bounds)
    if not conv.all():
        Xe = _interpolated(
            points,
            uv[ka],
            uv[kb] - uv[ka],
            (t0, hopf, near, bounds, ra, rb, w_eps),
            (t, w, Xe, conv),
        )
    if not conv.all():
        got = _narrowed(points, uv[ka], uv[kb] - uv[ka], ra, rb, ~conv, w_eps, near)
        if got is None:
            return None
        bad, tb, wb, Xb, hb = got
        t[bad], w[bad], hopf[bad] = tb, wb, hb
        if Xe is not None:
            if Xb is None:
                Xe = None
            else:
                Xe[bad] = Xb
    t = np.clip(t, 0.0, 1.0)
    P = uv[ka] + t[:, None] * (uv[kb] - uv[ka])
    W = np.where(hopf, w, 0.0)
    # every crossing found is on the stability boundary (:func:`_solve` checked it)
    flag = np.ones(E, dtype=bool)
    # chain the crossings through the cells; two of one cell that are not on one curve (other
    # kinds, or crossing frequencies far apart) meet at a corner inside it
    by_cell: dict[tuple[int, int], list[int]] = {}
    for e, edge in enumerate(edges):
        for cell in _cells_of(edge, n_seed):
            by_cell.setdefault(cell, []).append(e)
    pairs: list[tuple[int, int]] = []
    corners: list[tuple[tuple[int, int], int, int]] = []
    for cell, members in by_cell.items():
        if len(members) == 1:
            continue
        if len(members) != 2:
            return None  # two curves through one cell: traced one point at a time
        a, b = members
        if _one_curve(hopf[a], hopf[b], W[a], W[b]):
            pairs.append((a, b))
        else:
            corners.append((cell, a, b))
    if corners:
        found = _corners(points, n_seed, corners, P, W, hopf, Xe)
        # a frequency that changes fast along one curve is no corner: where none is found
        # in the cell, two crossings of one kind are one curve's
        one = [
            i
            for i, f in enumerate(found)
            if f is None and hopf[corners[i][1]] == hopf[corners[i][2]]
        ]
        rest = [f for i, f in enumerate(found) if i not in one]
        settled = [f for f in rest if f is not None]
        if len(settled) < len(rest):
            return None
        pairs += [(corners[i][1], corners[i][2]) for i in one]
        corners = [c for i, c in enumerate(corners) if i not in one]
        # each corner ends both curves: a node of its own for each (its position, their omega)
        for (_, a, b), (pc, wa, wb, xc, fc) in zip(corners, settled, strict=True):
            for e, wc in ((a, wa), (b, wb)):
                P = np.vstack([P, pc])
                W = np.append(W, wc if hopf[e] else 0.0)
                hopf = np.append(hopf, hopf[e])
                flag = np.append(flag, fc)
                if Xe is not None:
                    # no equilibrium at the corner: the curves' points go without theirs
                    Xe = None if xc is None else np.vstack([Xe, xc])
                pairs.append((e, len(P) - 1))
        E = len(P)
    chains = _chains(pairs, E)
    if chains is None:
        return None
    curves = [
        (
            P[c].copy(),
            W[c].copy(),
            None if Xe is None else Xe[c].copy(),
            bool(hopf[c[0]]),
            flag[c].copy(),
        )
        for c in chains
    ]
    refined = _refine(points, curves, resolution)
    if refined is None:
        return None
    out = []
    for pts, ws, xs, is_hopf, fl in refined:
        xy = points.origin + pts * points.span
        kind = "hopf" if is_hopf else "zero"
        out.append((xy[:, 0], xy[:, 1], ws if is_hopf else np.zeros(len(ws)), kind, xs, fl))
    return out


#: Crossings in one cell whose frequencies differ by more than this fraction lie on two curves.
OMEGA_JUMP = 0.3


def _one_curve(hopf_a: bool, hopf_b: bool, wa: float, wb: float) -> bool:
    """Whether two crossings of one cell can lie on one curve (same kind, and for a Hopf
    curve frequencies within :data:`OMEGA_JUMP` of each other)."""
    if hopf_a != hopf_b:
        return False
    return not hopf_a or abs(wa - wb) <= OMEGA_JUMP * max(wa, wb)


def _corners(points: _Points, n_seed: int, corners, P, W, hopf, X):
    """Where two curves meet in a cell: both crossings at once, ``det Delta(j omega_a) =
    det Delta(j omega_b) = 0`` (a real root at 0 for a zero curve), Newton's method in the
    point and the frequencies, every corner at once. ``[(point, omega_a, omega_b,
    equilibrium, on the boundary)]``, ``None`` for a corner not found within its cell."""
    K = len(corners)
    ia = np.array([a for _, a, _ in corners])
    ib = np.array([b for _, _, b in corners])
    z = 0.5 * (P[ia] + P[ib])
    w = np.stack([W[ia], W[ib]], axis=1)
    hp = np.stack([hopf[ia], hopf[ib]], axis=1)
    near = None if X is None else X[ia]
    cell = 1.0 / (n_seed - 1)
    lo = np.array([c for c, _, _ in corners], dtype=float) * cell
    done = np.zeros(K, dtype=bool)
    failed = np.zeros(K, dtype=bool)
    prev = np.full(K, np.inf)
    h = FD_STEP
    for _ in range(MAX_ITER):
        a = np.flatnonzero(~done)
        if not a.size:
            break
        st, Xa, ok = points.systems(z[a], None if near is None else near[a])
        stx, _, okx = points.systems(z[a] + [h, 0.0], Xa)
        sty, _, oky = points.systems(z[a] + [0.0, h], Xa)
        if near is not None and Xa is not None:
            near[a] = Xa
        rows, rhs = [], []
        for c in range(2):
            s = 1j * np.where(hp[a, c], w[a, c], 0.0)
            f, g = _det(st, s)
            fx, _ = _det(stx, s)
            fy, _ = _det(sty, s)
            with np.errstate(all="ignore"):
                du, dv = (fx / f - 1.0) / h, (fy / f - 1.0) / h
                dw = 1j * g
            # complex equation du dz_u + dv dz_v + dw dw_c = -1 (its real part alone for a
            # real root at 0)
            for part in (np.real, np.imag):
                row = np.zeros((a.size, 4))
                row[:, 0], row[:, 1] = part(du), part(dv)
                row[:, 2 + c] = part(dw)
                rows.append(row)
                rhs.append(-1.0 if part is np.real else 0.0)
        M = np.stack(rows, axis=1)  # (k, 4 equations, 4 unknowns)
        b = np.broadcast_to(np.array(rhs), (a.size, 4)).copy()
        # a zero curve: its imaginary equation and its frequency drop out (frequency fixed)
        for c in range(2):
            zero = ~hp[a, c]
            M[zero, 2 * c + 1, :] = 0.0
            M[zero, 2 * c + 1, 2 + c] = 1.0
            b[zero, 2 * c + 1] = 0.0
        good = ok & okx & oky & np.all(np.isfinite(M), axis=(1, 2))
        good &= np.abs(np.linalg.det(np.where(good[:, None, None], M, np.eye(4)))) > 0
        step = np.zeros((a.size, 4))
        if good.any():
            step[good] = np.linalg.solve(M[good], b[good][..., None])[..., 0]
        good &= np.all(np.isfinite(step), axis=1)
        failed[a[~good]] = True
        done[a[~good]] = True
        step[~good] = 0.0
        z[a] += step[:, :2]
        w[a] += step[:, 2:]
        size = np.max(np.abs(step[:, :2]), axis=1) + np.max(
            np.abs(step[:, 2:]) / np.maximum(1.0, np.abs(w[a])), axis=1
        )
        done[a[(size <= 1e-13) | ((size >= 0.9 * prev[a]) & (size <= 1e-8))]] = True
        prev[a] = size
    inside = np.all((z >= lo - 0.5 * cell) & (z <= lo + 1.5 * cell), axis=1)
    good = done & ~failed & inside & np.all(w >= -1e-9, axis=1) & np.all(np.isfinite(z), axis=1)
    Xc, okc = None, np.zeros(K, dtype=bool)
    # the corner bounds the stable region when no root but the crossing ones lies right of
    # the axis there
    fc = np.zeros(K, dtype=bool)
    if good.any():
        stg, Xg, okc_g = points.systems(z[good], None if near is None else near[good])
        okc[good] = okc_g
        fc[good] = _on_boundary(stg, okc_g, np.max(np.abs(w[good]), axis=1))
        if Xg is not None:
            Xc = np.full((K, Xg.shape[1]), np.nan)
            Xc[good] = Xg
    good &= okc
    return [
        (z[k], abs(w[k, 0]), abs(w[k, 1]), None if Xc is None else Xc[k], bool(fc[k]))
        if good[k]
        else None
        for k in range(K)
    ]


def _refine(points: _Points, curves, resolution: float):
    """Insert points on the perpendicular bisectors of every chord longer than
    ``resolution`` (box units), all curves at once, until none is left."""
    curves = [list(c) for c in curves]
    for _ in range(MAX_ROUNDS):
        jobs = []
        for ci, (pts, _, _, _, _) in enumerate(curves):
            gap = np.hypot(*(np.diff(pts, axis=0).T))
            for i in np.flatnonzero(gap > resolution):
                jobs.append((ci, int(i)))
        if not jobs:
            return curves
        A = np.array([curves[ci][0][i] for ci, i in jobs])
        B = np.array([curves[ci][0][i + 1] for ci, i in jobs])
        wA = np.array([curves[ci][1][i] for ci, i in jobs])
        wB = np.array([curves[ci][1][i + 1] for ci, i in jobs])
        hopf = np.array([curves[ci][3] for ci, _ in jobs])
        Xs = [curves[ci][2] for ci, _ in jobs]
        near = None
        if all(x is not None for x in Xs):
            near = np.array([curves[ci][2][i] for ci, i in jobs])
        chord = B - A
        length = np.hypot(chord[:, 0], chord[:, 1])
        normal = np.stack([-chord[:, 1], chord[:, 0]], axis=1) / length[:, None]
        mid = 0.5 * (A + B)
        # the curve meets the bisector within the chord's length of its middle (further for
        # a corner of more than 60 degrees, where the bisector is tried from either side)
        bounds = (-length, length)
        t, w, X, conv = _solve(
            points, mid, normal, np.zeros(len(jobs)), 0.5 * (wA + wB), hopf, near, bounds
        )
        for side in (0.5, -0.5):
            redo = np.flatnonzero(~conv)
            if not redo.size:
                break
            t2, w2, X2, c2 = _solve(
                points,
                mid[redo],
                normal[redo],
                side * length[redo],
                0.5 * (wA + wB)[redo],
                hopf[redo],
                None if near is None else near[redo],
                (bounds[0][redo], bounds[1][redo]),
            )
            t[redo], w[redo], conv[redo] = t2, w2, c2
            if X is not None and X2 is not None:
                X[redo] = X2
        if not conv.all():
            return None
        new = mid + t[:, None] * normal
        # insert, last gaps first so that indices stay valid
        for j in sorted(range(len(jobs)), key=lambda j: (jobs[j][0], -jobs[j][1])):
            ci, i = jobs[j]
            pts, ws, xs, is_hopf, fl = curves[ci]
            pts = np.insert(pts, i + 1, new[j], axis=0)
            ws = np.insert(ws, i + 1, w[j] if is_hopf else 0.0)
            if xs is not None and X is not None:
                xs = np.insert(xs, i + 1, X[j], axis=0)
            fl = np.insert(fl, i + 1, True)  # checked by _solve
            curves[ci] = [pts, ws, xs, is_hopf, fl]
    return None
