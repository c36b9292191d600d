"""Events on the dense output of an accepted step, and the mode changes they cause.

``stage_event`` finds the first sign change of an event function from its values at the
stages, confirms it on the dense output and shrinks the bracket with ``locate`` (Illinois).
``decide`` chooses the mode of a switch at its surface (side +, side -, or Filippov sliding);
``apply_event`` performs a mode change and re-evaluates the field.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ._codes import (
    C_SLIDE,
    EV_ARRIVE,
    EV_DEPART,
    EV_NONE,
    EV_REDECIDE,
    EV_SDEP,
    EV_SLIDE_HI,
    EV_SLIDE_LO,
    EV_SWITCH,
    FL_CAUSE,
    ST_OK,
)
from ._field import eval_lags, feval, switch_gradients
from ._history import horner


@njit(cache=True, nogil=True, _nrt=False)
def g(etype, idx, xi, sgn, th, t, h, ytmp, fa, fra, md, bf, ib, mt, mc, nm, cc, tc, fe):
    """Event function at ``theta`` of the accepted trial step (its dense output is ``cc``)."""
    z, largs, w, lam, sv, zdot, kbuf, xe, G, corners, J, vbuf = bf
    n = ytmp.shape[0]
    if etype == EV_ARRIVE:
        return horner(cc[idx], th)
    for i in range(n):
        ytmp[i] = horner(cc[i], th)
    if etype == EV_SDEP:
        if not eval_lags(t + th * h, ytmp, md, bf, ib, mt, mc, nm, cc, tc, fe):
            return np.nan
        return sgn * (largs[idx] - xi)
    if not feval(t + th * h, ytmp, fa, fra, md, bf, ib, mt, mc, nm, cc, tc, fe):
        return np.nan
    if etype == EV_DEPART:
        return -fra[idx]
    if etype == EV_SWITCH:
        return sgn * sv[idx]
    if etype == EV_SLIDE_LO:
        return lam[idx]
    return 1.0 - lam[idx]


@njit(cache=True, nogil=True, _nrt=False)
def locate(
    etype, idx, xi, sgn, a, b, ga, gb, t, h, ytmp, fa, fra, md, bf, ib, mt, mc, nm, cc, tc, fe
):
    """Bracket ``[a, b]`` (``g(a) >= 0 > g(b)``) shrunk to rounding level (Illinois method)."""
    hints, slide, stuck, fl, cnt, sl = ib
    side = 0
    tol = 4.0 * np.finfo(np.float64).eps * max(1.0, abs(t)) / h
    for _ in range(100):
        if b - a <= tol:
            break
        m = (a * gb - b * ga) / (gb - ga)
        if not (a < m < b):
            m = 0.5 * (a + b)
        fl[FL_CAUSE] = ST_OK
        gm = g(etype, idx, xi, sgn, m, t, h, ytmp, fa, fra, md, bf, ib, mt, mc, nm, cc, tc, fe)
        if not math.isfinite(gm):
            fl[FL_CAUSE] = ST_OK
            m = 0.5 * (a + b)
            gm = g(etype, idx, xi, sgn, m, t, h, ytmp, fa, fra, md, bf, ib, mt, mc, nm, cc, tc, fe)
            if not math.isfinite(gm):
                fl[FL_CAUSE] = ST_OK
                b = m
                continue
        if gm >= 0.0:
            a = m
            ga = gm
            if side == 1:
                gb *= 0.5
            side = 1
        else:
            b = m
            gb = gm
            if side == -1:
                ga *= 0.5
            side = -1
    return a, b


@njit(cache=True, nogil=True, _nrt=False)
def stage_event(
    etype, idx, sgn, gst, C, best, t, h, ytmp, fa, fra, md, bf, ib, mt, mc, nm, cc, tc, fe
):
    """Earliest time ``theta`` where ``g`` turns negative in the step, from its stage values.

    ``gst[s]`` is ``g`` at stage ``s`` (``gst[0]`` at the start). The bracket is confirmed on
    the dense output and shrunk by :func:`_locate`. When the step starts on the wrong side of a
    surface (rounding right after an event, e.g. when several surfaces are reached at the same
    time) and no point with ``g >= 0`` is found, the mode is decided again at the start of the
    step (``EV_REDECIDE`` at ``theta = 0``). Returns ``(theta, type)``;
    ``type`` is ``EV_NONE`` when there is no event before ``best``.
    """
    hints, slide, stuck, fl, cnt, sl = ib
    S = C.shape[0]
    first = -1
    for st in range(1, S):
        if gst[st] < 0.0:
            first = st
            break
    if first < 0:
        return 2.0, EV_NONE
    hi = C[first]
    ghi = g(etype, idx, 0.0, sgn, hi, t, h, ytmp, fa, fra, md, bf, ib, mt, mc, nm, cc, tc, fe)
    if not ghi < 0.0:
        hi = 1.0
        ghi = g(etype, idx, 0.0, sgn, hi, t, h, ytmp, fa, fra, md, bf, ib, mt, mc, nm, cc, tc, fe)
        if not ghi < 0.0:
            fl[FL_CAUSE] = ST_OK
            return 2.0, EV_NONE
    lo = -1.0
    glo = 0.0
    if first > 1:
        lo = C[first - 1]
        glo = g(etype, idx, 0.0, sgn, lo, t, h, ytmp, fa, fra, md, bf, ib, mt, mc, nm, cc, tc, fe)
        if not glo >= 0.0:
            lo = -1.0
    if lo < 0.0 and gst[0] >= 0.0:
        lo = 0.0
        glo = gst[0]
    if lo < 0.0:
        # wrong side at the start: look for the side the mode belongs to
        for k in range(1, 17):
            th = hi * k / 16.0
            gv = g(
                etype, idx, 0.0, sgn, th, t, h, ytmp, fa, fra, md, bf, ib, mt, mc, nm, cc, tc, fe
            )
            if lo < 0.0 and gv >= 0.0:
                lo = th
                glo = gv
            elif lo >= 0.0 and gv < 0.0:
                hi = th
                ghi = gv
                break
        if lo < 0.0:
            # the solution is on the surface already (several surfaces reached at once, the
            # others decided after the first): decide this one now, before stepping; stepping
            # first would carry the solution across it in the wrong mode
            fl[FL_CAUSE] = ST_OK
            return 0.0, EV_REDECIDE
    fl[FL_CAUSE] = ST_OK
    if lo >= best:
        return 2.0, EV_NONE
    a, b = locate(
        etype,
        idx,
        0.0,
        sgn,
        lo,
        hi,
        glo,
        ghi,
        t,
        h,
        ytmp,
        fa,
        fra,
        md,
        bf,
        ib,
        mt,
        mc,
        nm,
        cc,
        tc,
        fe,
    )
    fl[FL_CAUSE] = ST_OK
    return b, etype


@njit(cache=True, nogil=True, _nrt=False)
def decide(j, t, y, fa, fra, fb, frb, md, bf, ib, mt, mc, nm, cc, tc, fe):
    """Mode of switch ``j`` at a point on its surface: side +, side -, or sliding (Filippov)."""
    z, largs, w, lam, sv, zdot, kbuf, xe, G, corners, J, vbuf = bf
    hints, slide, stuck, fl, cnt, sl = ib
    n = y.shape[0]
    old = w[j]
    slide[j] = 0
    w[j] = 1.0
    if not feval(t, y, fa, fra, md, bf, ib, mt, mc, nm, cc, tc, fe):
        return False
    w[j] = 0.0
    if not feval(t, y, fb, frb, md, bf, ib, mt, mc, nm, cc, tc, fe):
        return False
    switch_gradients(t, y, md, bf, ib, mt, mc, nm, cc, tc)
    row = j * (n + 1)
    sp = G[row + n]
    sm = G[row + n]
    for i in range(n):
        sp += G[row + i] * fa[i]
        sm += G[row + i] * fb[i]
    if sp > 0.0 and sm > 0.0:
        w[j] = 1.0
    elif sp < 0.0 and sm < 0.0:
        w[j] = 0.0
    elif sm > 0.0 and sp < 0.0:
        slide[j] = 1
        lam[j] = sm / (sm - sp)
        w[j] = lam[j]
        cnt[C_SLIDE] += 1
    else:
        w[j] = 1.0 - old if old == 0.0 or old == 1.0 else 1.0
    return True


@njit(cache=True, nogil=True, _nrt=False)
def apply_event(etype, idx, t, y, K, Kraw, fa, fra, fb, frb, md, bf, ib, mt, mc, nm, cc, tc, fe):
    z, largs, w, lam, sv, zdot, kbuf, xe, G, corners, J, vbuf = bf
    hints, slide, stuck, fl, cnt, sl = ib
    n = y.shape[0]
    if etype == EV_ARRIVE:
        y[idx] = 0.0
    elif etype == EV_DEPART:
        stuck[idx] = 0
    elif etype == EV_SLIDE_LO:
        slide[idx] = 0
        w[idx] = 0.0
    elif etype == EV_SLIDE_HI:
        slide[idx] = 0
        w[idx] = 1.0
    elif etype == EV_SWITCH or etype == EV_REDECIDE:
        if not decide(idx, t, y, fa, fra, fb, frb, md, bf, ib, mt, mc, nm, cc, tc, fe):
            return False
    if not feval(t, y, K[0], Kraw[0], md, bf, ib, mt, mc, nm, cc, tc, fe):
        return False
    if etype == EV_ARRIVE and Kraw[0, idx] <= 0.0:
        stuck[idx] = 1
        # held states change the sliding weights of the other states: evaluate again
        if not feval(t, y, K[0], Kraw[0], md, bf, ib, mt, mc, nm, cc, tc, fe):
            return False
    for i in range(n):
        if stuck[i] == 1:
            K[0, i] = 0.0
    return True
