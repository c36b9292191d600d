"""Events on the dense output of an accepted step, and the mode changes they cause.

``find_events`` looks for the earliest event in a step: a projected state reaching 0, a held
state whose unprojected derivative turns positive, a switching function changing sign, a
Filippov sliding weight leaving [0, 1]. ``stage_event`` finds the first sign change of an event
function from its values at the stages, confirms it on the dense output and shrinks the bracket
with ``locate`` (Illinois). ``decide`` chooses the mode of a switch at its surface (side +,
side -, or Filippov sliding); ``apply_event`` performs a mode change and re-evaluates the field.

The event function being located is named by ``st.loc_type``, ``st.loc_index`` (a state, a
switch or a lag), ``st.loc_xi`` (a discontinuity point, for ``EV_SDEP``) and ``st.loc_sgn``.
"""

from __future__ import annotations

import math

import numpy as np

from ._codes import (
    EV_ARRIVE,
    EV_DEPART,
    EV_NONE,
    EV_REDECIDE,
    EV_SDEP,
    EV_SLIDE_HI,
    EV_SLIDE_LO,
    EV_SWITCH,
    EVT,
    ST_NO_SLIDING,
    ST_OK,
)
from ._field import eval_lags, feval, independent_normals, switch_gradients
from ._history import horner
from ._jit import inlined, kernel


@kernel
def g(th, st, md, fw, hs, sw):
    """The located event function at ``theta`` of the accepted trial step (dense output ``cc``)."""
    etype = st.loc_type
    idx = st.loc_index
    if etype == EV_ARRIVE:
        return horner(hs.cc[idx], th)
    ytmp = sw.ytmp
    for i in range(ytmp.shape[0]):
        ytmp[i] = horner(hs.cc[i], th)
    if etype == EV_SDEP:
        if not eval_lags(st.t + th * st.h, ytmp, st, md, fw, hs):
            return np.nan
        return st.loc_sgn * (fw.largs[idx] - st.loc_xi)
    if not feval(st.t + th * st.h, ytmp, sw.fa, sw.fra, st, md, fw, hs):
        return np.nan
    if etype == EV_DEPART:
        return -sw.fra[idx]
    if etype == EV_SWITCH:
        return st.loc_sgn * fw.sv[idx]
    if etype == EV_SLIDE_LO:
        return fw.lam[idx]
    return 1.0 - fw.lam[idx]


@inlined
def _target(st, etype, idx, xi, sgn):
    """Name the event function that ``g`` evaluates."""
    st.loc_type = etype
    st.loc_index = idx
    st.loc_xi = xi
    st.loc_sgn = sgn


@kernel
def locate(a, b, ga, gb, st, md, fw, hs, sw):
    """Bracket ``[a, b]`` (``g(a) >= 0 > g(b)``) shrunk to rounding level (Illinois method)."""
    side = 0
    tol = 4.0 * np.finfo(np.float64).eps * max(1.0, abs(st.t)) / st.h
    for _ in range(100):
        if b - a <= tol:
            break
        m = (a * gb - b * ga) / (gb - ga)
        if not (a < m < b):
            m = 0.5 * (a + b)
        st.cause = ST_OK
        gm = g(m, st, md, fw, hs, sw)
        if not math.isfinite(gm):
            st.cause = ST_OK
            m = 0.5 * (a + b)
            gm = g(m, st, md, fw, hs, sw)
            if not math.isfinite(gm):
                st.cause = ST_OK
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


@kernel
def stage_event(gst, best, st, rk, md, fw, hs, sw):
    """Earliest ``theta`` where the located function turns negative, from its stage values.

    ``gst[s]`` is ``g`` at stage ``s`` (``gst[0]`` at the start). The bracket is confirmed on
    the dense output and shrunk by :func:`locate`. When the step starts on the wrong side of a
    surface (rounding right after an event, e.g. when several surfaces are reached at the same
    time) and no point with ``g >= 0`` is found, the mode is decided again at the start of the
    step (``EV_REDECIDE`` at ``theta = 0``). Returns ``(theta, type)``;
    ``type`` is ``EV_NONE`` when there is no event before ``best``.
    """
    C = rk.C
    S = C.shape[0]
    first = -1
    for s in range(1, S):
        if gst[s] < 0.0:
            first = s
            break
    if first < 0:
        return 2.0, EV_NONE
    hi = C[first]
    ghi = g(hi, st, md, fw, hs, sw)
    if not ghi < 0.0:
        hi = 1.0
        ghi = g(hi, st, md, fw, hs, sw)
        if not ghi < 0.0:
            st.cause = ST_OK
            return 2.0, EV_NONE
    lo = -1.0
    glo = 0.0
    if first > 1:
        lo = C[first - 1]
        glo = g(lo, st, md, fw, hs, sw)
        if not glo >= 0.0:
            lo = -1.0
    if lo < 0.0 and gst[0] >= 0.0:
        lo = 0.0
        glo = gst[0]
    if lo < 0.0:
        # wrong side at the start: look for the side the mode belongs to
        for k in range(1, 17):
            th = hi * k / 16.0
            gv = g(th, st, md, fw, hs, sw)
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
            st.cause = ST_OK
            return 0.0, EV_REDECIDE
    st.cause = ST_OK
    if lo >= best:
        return 2.0, EV_NONE
    a, b = locate(lo, hi, glo, ghi, st, md, fw, hs, sw)
    st.cause = ST_OK
    return b, st.loc_type


@inlined
def _candidate(st, theta, etype, idx):
    """Keep the event if it is the earliest so far."""
    if theta < st.ev_theta:
        st.ev_theta = theta
        st.ev_type = etype
        st.ev_index = idx


@inlined
def _arrivals(st, md, fw, hs, sw):
    """Projected states reaching 0 (sampled on eighths of the step, then located)."""
    cc = hs.cc
    for i in range(sw.y.shape[0]):
        if md.nonneg[i] == 0 or fw.stuck[i] == 1:
            continue
        prev = 0.0
        gprev = cc[i, 0]
        for jj in range(1, 9):
            th = jj / 8.0
            if th > st.ev_theta:
                break
            gv = horner(cc[i], th)
            if gv < 0.0:
                _target(st, EVT[EV_ARRIVE], i, 0.0, 1.0)
                a, b = locate(prev, th, max(gprev, 0.0), gv, st, md, fw, hs, sw)
                _candidate(st, a, EVT[EV_ARRIVE], i)
                break
            prev = th
            gprev = gv


@inlined
def _departures(st, rk, md, fw, hs, sw):
    """Held states whose unprojected derivative turns positive."""
    Kraw = sw.Kraw
    S = rk.C.shape[0]
    for i in range(sw.y.shape[0]):
        if fw.stuck[i] == 0 or st.ev_theta <= 0.0:
            continue
        first = -1
        for s in range(1, S):
            if Kraw[s, i] > 0.0:
                first = s
                break
        if first < 0:
            continue
        st.touched = True
        _target(st, EVT[EV_DEPART], i, 0.0, 1.0)
        hi = rk.C[first]
        gb = g(hi, st, md, fw, hs, sw)
        if not gb < 0.0:
            hi = 1.0
            gb = -Kraw[S - 1, i]
        st.cause = ST_OK
        if gb < 0.0:
            ga = max(-Kraw[0, i], 0.0)
            a, b = locate(0.0, hi, ga, gb, st, md, fw, hs, sw)
            _candidate(st, b, EVT[EV_DEPART], i)


@inlined
def _switch_event(j, etype, sgn, st, rk, md, fw, hs, sw):
    """The stage-value search of one switch's event function."""
    _target(st, etype, j, 0.0, sgn)
    th, found = stage_event(sw.gst, st.ev_theta, st, rk, md, fw, hs, sw)
    if found != EV_NONE:
        st.touched = True
        _candidate(st, th, found, j)


@inlined
def _switches(st, rk, md, fw, hs, sw):
    """Switching functions changing sign; sliding weights leaving [0, 1]."""
    S = rk.C.shape[0]
    gst = sw.gst
    for j in range(st.nsw):
        if st.ev_theta <= 0.0:
            break
        if fw.slide[j] == 1:
            # sliding ends where the Filippov weight leaves [0, 1]
            for s in range(S):
                gst[s] = sw.lams[s, j]
            _switch_event(j, EVT[EV_SLIDE_LO], 1.0, st, rk, md, fw, hs, sw)
            for s in range(S):
                gst[s] = 1.0 - sw.lams[s, j]
            _switch_event(j, EVT[EV_SLIDE_HI], 1.0, st, rk, md, fw, hs, sw)
            continue
        sgn = 1.0 if fw.w[j] > 0.5 else -1.0
        for s in range(S):
            gst[s] = sgn * sw.svs[s, j]
        _switch_event(j, EVT[EV_SWITCH], sgn, st, rk, md, fw, hs, sw)


@inlined
def find_events(st, rk, md, fw, hs, sw):
    """The earliest event in the accepted trial step: ``st.ev_type``, ``ev_index``, ``ev_theta``."""
    st.ev_theta = 2.0
    st.ev_type = EV_NONE
    st.ev_index = -1
    _arrivals(st, md, fw, hs, sw)
    _departures(st, rk, md, fw, hs, sw)
    _switches(st, rk, md, fw, hs, sw)
    st.cause = ST_OK


@inlined
def _joint_sliding(j, t, st, md, fw, hs, sw):
    """Slide on every surface through the point at once, where their normals are dependent.

    Where more surfaces meet than their normals span (Ye et al.'s topology at a fixed
    threshold: six surfaces through one point of a four-dimensional state), deciding them one
    after the other, each with the modes already chosen for the others, can leave a set of
    sliding surfaces that no weights keep the solution on. Here the surface ``j``, the surfaces
    already sliding and the other surfaces through the point (``|s| <= 1e-9 (1 + |y|) |ds/dy|``)
    slide together when weights in (0, 1) keep ``ds/dt = 0`` on all of them. Returns True when
    that mode was taken; otherwise the modes are left unchanged.
    """
    y = sw.y
    n = y.shape[0]
    nsw = st.nsw
    if not feval(t, y, sw.fa, sw.fra, st, md, fw, hs):
        st.cause = ST_OK
        return False
    switch_gradients(t, y, st, md, fw, hs)
    ymax = 0.0
    for i in range(n):
        ymax = max(ymax, abs(y[i]))
    sel = fw.sel
    nsel = 0
    extra = 0
    for k in range(nsw):
        take = k == j or fw.slide[k] == 1
        if not take:
            gn = 0.0
            for i in range(n):
                gn += abs(fw.G[k * (n + 1) + i])
            if gn > 0.0 and abs(fw.sv[k]) <= 1e-9 * (1.0 + ymax) * gn:
                take = True
                extra += 1
        if take:
            sel[nsel] = k
            nsel += 1
    if extra == 0 or independent_normals(fw.G, sel, nsel, n, fw.M):
        return False
    save = fw.save
    for k in range(nsw):
        save[0, k] = fw.slide[k]
        save[1, k] = fw.w[k]
        save[2, k] = fw.lam[k]
    added = 0
    for b in range(nsel):
        k = sel[b]
        if fw.slide[k] == 0:
            fw.slide[k] = 1
            fw.lam[k] = 0.5
            fw.w[k] = 0.5
            added += 1
    if feval(t, y, sw.fa, sw.fra, st, md, fw, hs):
        # weights on a bound: the fields only touch the intersection (as where sliding just
        # ended); the surfaces are then decided one by one
        inside = True
        for b in range(nsel):
            lam_b = fw.lam[sel[b]]
            if not 0.0 < lam_b < 1.0:
                inside = False
        if inside:
            st.slides += added
            return True
    st.cause = ST_OK
    for k in range(nsw):
        fw.slide[k] = np.int64(save[0, k])
        fw.w[k] = save[1, k]
        fw.lam[k] = save[2, k]
    return False


@kernel
def decide(j, t, st, md, fw, hs, sw):
    """Mode of switch ``j`` at a point on its surface: side +, side -, or sliding (Filippov)."""
    y, fa, fb = sw.y, sw.fa, sw.fb
    w, G = fw.w, fw.G
    n = y.shape[0]
    old = w[j]
    if _joint_sliding(j, t, st, md, fw, hs, sw):
        return True
    fw.slide[j] = 0
    w[j] = 1.0
    ok = feval(t, y, fa, sw.fra, st, md, fw, hs)
    if ok:
        w[j] = 0.0
        ok = feval(t, y, fb, sw.frb, st, md, fw, hs)
    if not ok:
        if st.cause != ST_NO_SLIDING:
            return False
        # With this switch on either side, the surfaces the solution slides on cannot hold it
        # (several surfaces meet here): slide on this one too, if weights in [0, 1] exist.
        st.cause = ST_OK
        fw.slide[j] = 1
        fw.lam[j] = 0.5
        w[j] = 0.5
        if not feval(t, y, fa, sw.fra, st, md, fw, hs):
            return False
        st.slides += 1
        return True
    switch_gradients(t, y, st, md, fw, hs)
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
        fw.slide[j] = 1
        fw.lam[j] = sm / (sm - sp)
        w[j] = fw.lam[j]
        st.slides += 1
    else:
        w[j] = 1.0 - old if old == 0.0 or old == 1.0 else 1.0
    return True


@inlined
def start_field(t, st, md, fw, hs, sw):
    """The field at the step's start ``(t, sw.y)`` into ``K[0]`` (held states: 0)."""
    return feval(t, sw.y, sw.K[0], sw.Kraw[0], st, md, fw, hs)


@kernel
def apply_event(etype, idx, t, st, md, fw, hs, sw):
    """Change the mode for an event at ``t`` and evaluate the field there; False on failure."""
    if etype == EV_ARRIVE:
        sw.y[idx] = 0.0
    elif etype == EV_DEPART:
        fw.stuck[idx] = 0
    elif etype == EV_SLIDE_LO:
        fw.slide[idx] = 0
        fw.w[idx] = 0.0
    elif etype == EV_SLIDE_HI:
        fw.slide[idx] = 0
        fw.w[idx] = 1.0
    elif etype == EV_SWITCH or etype == EV_REDECIDE:
        if not decide(idx, t, st, md, fw, hs, sw):
            return False
    if not start_field(t, st, md, fw, hs, sw):
        return False
    if etype == EV_ARRIVE and sw.Kraw[0, idx] <= 0.0:
        fw.stuck[idx] = 1
        # held states change the sliding weights of the other states: evaluate again
        return start_field(t, st, md, fw, hs, sw)
    return True
