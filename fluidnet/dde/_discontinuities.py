"""Derivative discontinuity points: pending landings, watched points, and their propagation.

The solution's derivatives jump at ``t0`` and at events, and the jumps propagate through the
delays. Constant and parameter delays move a jump at ``xi`` to ``xi + tau``: a *landing point*
(``dc.dp_t``, with its derivative order in ``dc.dp_l``) that a step is made to end on. For
state-dependent delays the successor is where ``t - tau(t, x)`` reaches ``xi``: ``xi`` is a
*watched point* (``dc.dw_t``; ``dc.dw_done`` has bit ``k`` set once lag ``k`` has passed it),
located on the dense output of each accepted step.

The arrays never grow here: the driver enlarges them between calls of the kernel (the kernel
asks with ``ST_NEED_SPACE`` before a step could overflow them).
"""

from __future__ import annotations

from ._codes import EV_SDEP, EVT, SD_AT_START, SD_LAND, SD_NONE, SD_REDO
from ._events import _target, locate
from ._jit import inlined, kernel

MERGE = 1e-12  # discontinuity points closer than this (relative) are one point
_SDEP_LAND = 1e-6  # a state-dependent crossing within this fraction of the step end is landed
MAX_SDEP_LAGS = 62  # state-dependent lags tracked (bits of dw_done)


@inlined
def push(times, levels, count, xi, level, tol):
    """Add a landing point (merged with one within ``tol``); returns the new count."""
    for m in range(count):
        if abs(times[m] - xi) <= tol:
            if level < levels[m]:
                levels[m] = level
            return count
    times[count] = xi
    levels[count] = level
    return count + 1


@inlined
def propagate(xi, level, st, md, dc):
    """Successors of a discontinuity of derivative order ``level`` at ``xi`` (order + 1)."""
    tol = MERGE * max(1.0, abs(xi))
    for k in range(md.lag_sdep.shape[0]):
        if md.lag_sdep[k] == 0 and md.tauc[k] > tol and xi + md.tauc[k] < st.t_end:
            st.ndp = push(dc.dp_t, dc.dp_l, st.ndp, xi + md.tauc[k], level + 1, tol)
    if st.any_sdep:
        for m in range(st.ndw):
            if abs(dc.dw_t[m] - xi) <= tol:
                return
        dc.dw_t[st.ndw] = xi
        dc.dw_l[st.ndw] = level
        dc.dw_done[st.ndw] = 0
        st.ndw += 1


@kernel
def propagate_below(xi, level, st, md, dc):
    """Propagate a discontinuity of order ``level`` when it is below the tracked order."""
    if level < st.track_level:
        propagate(xi, level, st, md, dc)


@inlined
def next_landing(st, dc):
    """The nearest pending landing point after ``st.t`` (``t_end`` if none): sets ``target``."""
    st.target = st.t_end
    st.target_disc = -1
    for m in range(st.ndp):
        if dc.dp_t[m] > st.t + st.tol_m and dc.dp_t[m] < st.target:
            st.target = dc.dp_t[m]
            st.target_disc = m


@inlined
def sdep_crossings(st, md, fw, hs, sw, mk, dc):
    """State-dependent lag arguments crossing a watched point in the accepted trial step.

    Returns ``SD_NONE``; ``SD_REDO`` with ``st.h`` shortened to end on the earliest crossing;
    ``SD_AT_START`` when the crossing is at the step's start (recorded and propagated); or
    ``SD_LAND`` when the step ends on it (``st.sd_m``, ``st.sd_k``: recorded after the step).
    """
    st.sd_m = -1
    st.sd_k = -1
    if not st.any_sdep or st.ndw == 0:
        return SD_NONE
    best = 2.0
    bm = -1
    bk = -1
    for m in range(st.ndw):
        xi = dc.dw_t[m]
        tx = MERGE * max(1.0, abs(xi))
        for k in range(md.lag_sdep.shape[0]):
            if md.lag_sdep[k] == 0 or k >= MAX_SDEP_LAGS or (dc.dw_done[m] >> k) & 1:
                continue
            g0 = mk.largs0[k] - xi
            g1 = mk.largs1[k] - xi
            if abs(g0) <= tx:
                dc.dw_done[m] |= 1 << k
                continue
            if g0 * g1 > 0.0 and abs(g1) > tx:
                continue
            if abs(g1) <= tx:
                th = 1.0
            else:
                sgn = 1.0 if g0 > 0.0 else -1.0
                st.touched = True
                _target(st, EVT[EV_SDEP], k, xi, sgn)
                a, th = locate(0.0, 1.0, sgn * g0, sgn * g1, st, md, fw, hs, sw)
            if th < best:
                best = th
                bm = m
                bk = k
    if bm < 0:
        return SD_NONE
    if best < 1.0 - _SDEP_LAND and best * st.h > st.hmin:
        # redo the step so that it ends on the crossing
        st.h = best * st.h
        return SD_REDO
    if best * st.h <= st.hmin:
        # the crossing is at the current time
        dc.dw_done[bm] |= 1 << bk
        st.discontinuities += 1
        propagate_below(st.t, dc.dw_l[bm] + 1, st, md, dc)
        st.h = st.h_prop
        return SD_AT_START
    st.sd_m = bm
    st.sd_k = bk
    return SD_LAND


@inlined
def landed(st, md, dc, at_target):
    """Bookkeeping after an accepted step: the landing point or crossing reached, propagated."""
    t = st.t
    if at_target:
        level = dc.dp_l[st.target_disc]
        st.discontinuities += 1
        # drop every pending point at this time
        m = 0
        while m < st.ndp:
            if abs(dc.dp_t[m] - t) <= st.tol_m or dc.dp_t[m] < t:
                if dc.dp_l[m] < level:
                    level = dc.dp_l[m]
                dc.dp_t[m] = dc.dp_t[st.ndp - 1]
                dc.dp_l[m] = dc.dp_l[st.ndp - 1]
                st.ndp -= 1
            else:
                m += 1
        propagate_below(t, level, st, md, dc)
    if st.sd_m >= 0:
        dc.dw_done[st.sd_m] |= 1 << st.sd_k
        st.discontinuities += 1
        propagate_below(t, dc.dw_l[st.sd_m] + 1, st, md, dc)
    if st.any_sdep:
        # forget watch points every state-dependent lag has passed
        m = 0
        while m < st.ndw:
            if (dc.dw_done[m] & st.sdep_mask) == st.sdep_mask:
                dc.dw_t[m] = dc.dw_t[st.ndw - 1]
                dc.dw_l[m] = dc.dw_l[st.ndw - 1]
                dc.dw_done[m] = dc.dw_done[st.ndw - 1]
                st.ndw -= 1
            else:
                m += 1
