"""Compiled storage and evaluation of the solution history (piecewise polynomials).

The past of a run is a sequence of pieces ``[mt[k], mt[k+1]]`` (``k < RunState.nm``), each
holding, per state, the power-basis coefficients of a polynomial in
``theta = (s - mt[k]) / (mt[k+1] - mt[k])``. The pieces before ``t0`` come from the user's
history; the pieces after ``t0`` are the integrator's dense output, one per accepted step.
During a step, values beyond the last stored time come from the *trial* polynomial ``cc`` of
the step being attempted, over ``[trial_t, trial_t + trial_h]``.
"""

from __future__ import annotations

import numpy as np

from ._codes import ST_DROPPED, ST_HIST_RANGE
from ._jit import kernel

__all__ = ["horner", "horner_deriv", "find_piece", "lookup", "lookup_deriv"]


@kernel
def horner(c, th):
    """``sum_j c[j] th**j``."""
    v = c[c.shape[0] - 1]
    for j in range(c.shape[0] - 2, -1, -1):
        v = v * th + c[j]
    return v


@kernel
def horner_deriv(c, th):
    """``d/dth sum_j c[j] th**j``."""
    m = c.shape[0]
    v = (m - 1) * c[m - 1]
    for j in range(m - 2, 0, -1):
        v = v * th + j * c[j]
    return v


@kernel
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


@kernel
def lookup(i, s, k, st, md, fw, hs):
    """Value of state ``i`` at time ``s``; ``k`` indexes the search hint (a lag).

    ``md.hstart[i]`` is the earliest time the history of state ``i`` is defined (``-inf`` for
    a constant history, which extends the first piece's constant to the left). Sets
    ``st.future`` when ``s`` lies in the step being attempted, ``st.cause`` on failure.
    """
    mt = hs.mt
    nm = st.nm
    if s > mt[nm]:
        st.future = True
        v = horner(hs.cc[i], (s - st.trial_t) / st.trial_h)
    elif s < md.hstart[i]:
        st.cause = ST_HIST_RANGE
        st.index = i
        return np.nan
    elif s < st.dropped_before:
        st.cause = ST_DROPPED
        st.index = i
        return np.nan
    elif s < mt[0]:
        v = hs.mc[0, i, 0]
    else:
        j = find_piece(mt, nm, s, fw.hints[k])
        fw.hints[k] = j
        v = horner(hs.mc[j, i], (s - mt[j]) / (mt[j + 1] - mt[j]))
    if md.nonneg[i] == 1 and v < 0.0:
        v = 0.0
    return v


@kernel
def lookup_deriv(i, s, k, st, fw, hs):
    """Time derivative of state ``i`` at ``s`` (0 left of the stored pieces: constants)."""
    mt = hs.mt
    nm = st.nm
    if s > mt[nm]:
        return horner_deriv(hs.cc[i], (s - st.trial_t) / st.trial_h) / st.trial_h
    if s < mt[0]:
        return 0.0
    j = find_piece(mt, nm, s, fw.hints[k])
    hj = mt[j + 1] - mt[j]
    return horner_deriv(hs.mc[j, i], (s - mt[j]) / hj) / hj
