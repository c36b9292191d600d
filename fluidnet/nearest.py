"""Nearest neighbours of a few points, compared directly; SciPy's k-d tree for many.

A chart's batch starts each point's equilibrium from the nearest point already solved
(:mod:`fluidnet.symbolic.batchequilibria`: a few seeds for every point of a block, then the
points left against the solved ones). Each query imported :mod:`scipy.spatial` for its k-d
tree, and with it SciPy's array API layer, which runs ``from numpy import *`` (every
submodule NumPy lists): 0.22 s of the first chart of a process that had not imported SciPy
otherwise (a window/queue law's 100 x 100 chart, 0.65 -> 0.43-0.45 s without the ``dask``
extra, which imports SciPy through ``dask.array``). Up to :data:`DIRECT_PAIRS` pairs are
compared directly (a few milliseconds), without SciPy; larger queries (thousands of points
against thousands) use :class:`scipy.spatial.KDTree`.

Points on a grid, in index steps (integer coordinates, as the batch of the roots gives them),
are compared through ``|t|^2 + |s|^2 - 2 t.s`` with one matrix product per chunk of targets:
for integers below :data:`EXACT_COORDINATE` every term is an integer that a double holds
exactly, so the squared distances are the direct ones bit for bit (the same neighbours, the
same ties), at 7-13 ns a pair instead of 20-40. Up to :data:`GRID_PAIRS` pairs go this way: a
100-state network's 20 x 20 chart compares 11 852 aggregated points against 148 (1.75 million
pairs, 23 ms), where the k-d tree's import cost 0.35 s of the first chart.

Ties (points at the same distance: common on a grid) go to the lowest index when compared
directly; the k-d tree breaks them in the order its traversal meets them. The batch of the
roots (:func:`fluidnet.linear.batch._nearest_certified`, a point whose neighbour failed)
gives its sources latest first, so that ties go to the highest grid index: fewer points
need the discretization there than with the lowest index or the k-d tree (its docstring).
"""

from __future__ import annotations

import numpy as np

__all__ = ["DIRECT_PAIRS", "GRID_PAIRS", "nearest"]

#: Largest number of (target, source) pairs compared directly.
DIRECT_PAIRS = 1 << 20
#: Largest number of pairs of integer points (a grid in index steps, Euclidean distance)
#: compared directly by matrix products (0.11 s at 16 million pairs on a 2-core machine).
GRID_PAIRS = 1 << 24
#: Integer coordinates below this in magnitude give exact squared distances by the products.
EXACT_COORDINATE = 1 << 20
#: Pairs compared at once (the targets are taken in chunks of this many pairs).
CHUNK_PAIRS = 1 << 16
#: Pairs compared at once by matrix products.
GRID_CHUNK_PAIRS = 1 << 18


def nearest(
    sources: np.ndarray, targets: np.ndarray, k: int = 1, p: float = 2.0
) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` nearest ``sources`` to every one of ``targets``.

    Parameters
    ----------
    sources : numpy.ndarray
        ``(S, d)`` points.
    targets : numpy.ndarray
        ``(T, d)`` points.
    k : int, default 1
        How many neighbours, ``1 <= k <= S``.
    p : float, default 2
        The norm of the distance: ``2`` (Euclidean) or ``numpy.inf`` (the largest coordinate).

    Returns
    -------
    distances : numpy.ndarray
        ``(T, k)`` float, nearest first.
    indices : numpy.ndarray
        ``(T, k)`` int, rows of ``sources``.
    """
    src = np.asarray(sources, dtype=float)
    tgt = np.asarray(targets, dtype=float)
    if src.ndim != 2 or tgt.ndim != 2 or src.shape[1] != tgt.shape[1]:
        raise ValueError(
            f"sources {src.shape} and targets {tgt.shape} must be (S, d) and (T, d) arrays"
        )
    if not 1 <= k <= src.shape[0]:
        raise ValueError(f"k = {k}: between 1 and the {src.shape[0]} sources")
    if p not in (2.0, np.inf):
        raise ValueError(f"p = {p}: 2 or numpy.inf")
    S, T = src.shape[0], tgt.shape[0]
    if p == 2.0 and S * T <= GRID_PAIRS and _integers(src) and _integers(tgt):
        return _grid_nearest(src, tgt, k)
    if S * T > DIRECT_PAIRS:
        from scipy.spatial import KDTree  # imported for large queries only

        dist, idx = KDTree(src).query(tgt, k=k, p=p)
        return (
            np.asarray(dist, dtype=float).reshape(T, k),
            np.asarray(idx, dtype=np.intp).reshape(T, k),
        )
    dist = np.empty((T, k))
    idx = np.empty((T, k), dtype=np.intp)
    step = max(1, CHUNK_PAIRS // max(S, 1))
    for a in range(0, T, step):
        diff = np.abs(tgt[a : a + step, None, :] - src[None, :, :])
        d = diff.max(axis=2) if p == np.inf else np.sqrt(np.sum(diff * diff, axis=2))
        dist[a : a + step], idx[a : a + step] = _k_smallest(d, k)
    return dist, idx


def _k_smallest(d: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` smallest entries of each row of ``d`` (overwritten) and their columns, the
    smallest first; of equals, the lowest column first."""
    rows = np.arange(d.shape[0])
    vals = np.empty((d.shape[0], k))
    cols = np.empty((d.shape[0], k), dtype=np.intp)
    for j in range(k):
        near = np.argmin(d, axis=1)  # the first of equals: the lowest index
        vals[:, j] = d[rows, near]
        cols[:, j] = near
        d[rows, near] = np.inf
    return vals, cols


def _integers(x: np.ndarray) -> bool:
    """Whether every coordinate is an integer below :data:`EXACT_COORDINATE` in magnitude."""
    return bool(np.all(np.abs(x) < EXACT_COORDINATE) and np.all(x == np.floor(x)))


def _grid_nearest(src: np.ndarray, tgt: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """:func:`nearest` of integer points by exact squared distances from matrix products."""
    S, T = src.shape[0], tgt.shape[0]
    dist = np.empty((T, k))
    idx = np.empty((T, k), dtype=np.intp)
    src2 = np.einsum("ij,ij->i", src, src)
    step = max(1, GRID_CHUNK_PAIRS // max(S, 1))
    for a in range(0, T, step):
        part = tgt[a : a + step]
        d = np.einsum("ij,ij->i", part, part)[:, None] + src2[None, :] - 2.0 * (part @ src.T)
        dist[a : a + step], idx[a : a + step] = _k_smallest(d, k)
    return np.sqrt(dist), idx
