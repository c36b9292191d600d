"""Bookkeeping of derivative discontinuity points (pending landings and watched points)."""

from __future__ import annotations

import numpy as np
from numba import njit

_MERGE = 1e-12  # discontinuity points closer than this (relative) are one point


@njit(cache=True, nogil=True)
def push(arr_t, arr_l, cnt, xi, lvl, tol):
    """Add a discontinuity point (merged with one within ``tol``); may grow the arrays."""
    for m in range(cnt):
        if abs(arr_t[m] - xi) <= tol:
            if lvl < arr_l[m]:
                arr_l[m] = lvl
            return arr_t, arr_l, cnt
    if cnt == arr_t.shape[0]:
        nt = np.empty(2 * cnt)
        nl = np.empty(2 * cnt, dtype=np.int64)
        nt[:cnt] = arr_t[:cnt]
        nl[:cnt] = arr_l[:cnt]
        arr_t = nt
        arr_l = nl
    arr_t[cnt] = xi
    arr_l[cnt] = lvl
    return arr_t, arr_l, cnt + 1


@njit(cache=True, nogil=True)
def propagate(xi, lvl, tauc, lag_sdep, any_sdep, t_end, dp_t, dp_l, ndp, dw_t, dw_l, dw_done, ndw):
    """Successors of a discontinuity of derivative order ``lvl`` at ``xi`` (order ``lvl + 1``)."""
    tol = _MERGE * max(1.0, abs(xi))
    for k in range(lag_sdep.shape[0]):
        if lag_sdep[k] == 0 and tauc[k] > tol and xi + tauc[k] < t_end:
            dp_t, dp_l, ndp = push(dp_t, dp_l, ndp, xi + tauc[k], lvl + 1, tol)
    if any_sdep:
        found = False
        for m in range(ndw):
            if abs(dw_t[m] - xi) <= tol:
                found = True
        if not found:
            if ndw == dw_t.shape[0]:
                nt = np.empty(2 * ndw)
                nl = np.empty(2 * ndw, dtype=np.int64)
                nd = np.zeros(2 * ndw, dtype=np.int64)
                nt[:ndw] = dw_t[:ndw]
                nl[:ndw] = dw_l[:ndw]
                nd[:ndw] = dw_done[:ndw]
                dw_t, dw_l, dw_done = nt, nl, nd
            dw_t[ndw] = xi
            dw_l[ndw] = lvl
            dw_done[ndw] = 0
            ndw += 1
    return dp_t, dp_l, ndp, dw_t, dw_l, dw_done, ndw
