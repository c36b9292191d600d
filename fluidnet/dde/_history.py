"""Compiled storage and evaluation of the solution history (piecewise polynomials).

The past of a run is a sequence of pieces ``[mt[k], mt[k+1]]``, each holding, per state, the
power-basis coefficients of a polynomial in ``theta = (s - mt[k]) / (mt[k+1] - mt[k])``. The
pieces before ``t0`` come from the user's history; the pieces after ``t0`` are the integrator's
dense output, one per accepted step. During a step, values beyond the last stored time come from
the *trial* polynomial of the step being attempted (``cc`` over ``[tc[0], tc[0] + tc[1]]``).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ._codes import FL_CAUSE, FL_FUTURE, FL_INDEX, ST_HIST_RANGE

__all__ = ["horner", "horner_deriv", "find_piece", "lookup", "lookup_deriv"]


@njit(cache=True, nogil=True, _nrt=False)
def horner(c, th):
    """``sum_j c[j] th**j``."""
    v = c[c.shape[0] - 1]
    for j in range(c.shape[0] - 2, -1, -1):
        v = v * th + c[j]
    return v


@njit(cache=True, nogil=True, _nrt=False)
def horner_deriv(c, th):
    """``d/dth sum_j c[j] th**j``."""
    m = c.shape[0]
    v = (m - 1) * c[m - 1]
    for j in range(m - 2, 0, -1):
        v = v * th + j * c[j]
    return v


@njit(cache=True, nogil=True, _nrt=False)
def find_piece(mt, nm, s, hint):
    """Index ``k`` with ``mt[k] <= s <= mt[k+1]`` (``s`` inside ``[mt[0], mt[nm]]``)."""
    k = hint
    if k < 0 or k >= nm:
        k = nm - 1
    if mt[k] <= s <= mt[k + 1]:
        return k
    # a few linear moves (lags advance with time), then bisection
    for _ in range(4):
        if s > mt[k + 1] and k + 1 < nm:
            k += 1
        elif s < mt[k] and k > 0:
            k -= 1
        else:
            break
        if mt[k] <= s <= mt[k + 1]:
            return k
    lo = 0
    hi = nm - 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if mt[mid] <= s:
            lo = mid
        else:
            hi = mid - 1
    return lo


@njit(cache=True, nogil=True, _nrt=False, inline="always")
def lookup(i, s, mt, mc, nm, cc, tc, hstart, nonneg, hints, k, fl):
    """Value of state ``i`` at time ``s``; ``k`` indexes the search hint (a lag).

    ``hstart[i]`` is the earliest time the history of state ``i`` is defined (``-inf`` for a
    constant history, which extends the first piece's constant to the left).
    """
    if s > mt[nm]:
        fl[FL_FUTURE] = 1
        v = horner(cc[i], (s - tc[0]) / tc[1])
    elif s < hstart[i]:
        fl[FL_CAUSE] = ST_HIST_RANGE
        fl[FL_INDEX] = i
        return np.nan
    elif s < mt[0]:
        v = mc[0, i, 0]
    else:
        j = find_piece(mt, nm, s, hints[k])
        hints[k] = j
        v = horner(mc[j, i], (s - mt[j]) / (mt[j + 1] - mt[j]))
    if nonneg[i] == 1 and v < 0.0:
        v = 0.0
    return v


@njit(cache=True, nogil=True, _nrt=False)
def lookup_deriv(i, s, mt, mc, nm, cc, tc, hints, k):
    """Time derivative of state ``i`` at ``s`` (0 left of the stored pieces: constants)."""
    if s > mt[nm]:
        return horner_deriv(cc[i], (s - tc[0]) / tc[1]) / tc[1]
    if s < mt[0]:
        return 0.0
    j = find_piece(mt, nm, s, hints[k])
    hj = mt[j + 1] - mt[j]
    return horner_deriv(mc[j, i], (s - mt[j]) / hj) / hj
