"""The compiled integration loop: adaptive embedded Runge-Kutta for delay equations.

One call integrates one trajectory. The loop

* attempts a step with the chosen pair (Bogacki-Shampine 3(2) or Dormand-Prince 5(4)); lagged
  values that fall inside the step being attempted are taken from the step's own continuous
  extension, iterated to a fixed point (first guess: the Euler predictor), so a step may be
  longer than a delay without extrapolating the history uncontrolled;
* controls the local error in a mixed absolute/relative RMS norm;
* lands steps on the discontinuity points of the solution's derivatives: ``t0``, every event
  time, and their propagation through the delays (``xi + tau`` for constant and parameter
  delays, roots of ``t - tau(t) = xi`` located on the dense output for state-dependent ones), up
  to the order of the method;
* locates events on the dense output of an accepted step and cuts the step there: a projected
  state reaching 0, a held state whose unprojected derivative turns positive, a switching
  function changing sign, a Filippov sliding weight leaving [0, 1];
* stores every accepted step's dense output (it is the history of later steps) and writes the
  requested output times.

Failure is reported with a status code and the time, index and value at fault; the Python
driver turns it into an :class:`~fluidnet.errors.IntegrationError`.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ._ffi import call_model
from ._field import (
    C_DISC,
    C_EVENTS,
    C_ITER,
    C_REJECT,
    C_SLIDE,
    C_STEPS,
    ST_ITERATION,
    ST_MAX_STEPS,
    ST_NONFINITE,
    ST_OK,
    ST_UNDERFLOW,
    ST_ZENO,
    eval_lags,
    feval,
    feval_inline,
    switch_gradients,
)
from ._history import FL_CAUSE, FL_FUTURE, FL_INDEX, horner
from ._tableaux import BS3, DP5, NCOEF

__all__ = ["integrate"]

_BS3_A, _BS3_B, _BS3_E, _BS3_C = BS3.A, BS3.B, BS3.E, BS3.C
_DP5_A, _DP5_B, _DP5_E, _DP5_C, _DP5_D = DP5.A, DP5.B, DP5.E, DP5.C, DP5.D
_NO_D = np.zeros(4)

EV_NONE = 0
EV_ARRIVE = 1
EV_DEPART = 2
EV_SWITCH = 3
EV_SLIDE_LO = 4
EV_SLIDE_HI = 5
EV_REDECIDE = 6
EV_SDEP = 7
# event codes as run-time values: literal arguments would compile one copy of a callee per code
EVT = np.arange(8, dtype=np.int64)

_MAXIT = 12  # fixed-point iterations for lags inside the step
_ITER_TOL = 1e-2  # interpolant self-consistency, in units of the error tolerance
_GROW_ITER = 2.0  # largest step growth when lags fell inside the step
_RATE_MAX = 0.5  # largest contraction rate of that iteration before steps are shortened
_ITER_TOL_Y = 0.2  # estimated remaining iteration error of the step's end value
_SAFETY = 0.9
_FACMIN = 0.2
_FACMAX = 5.0
_HMIN_FAC = 64.0 * np.finfo(np.float64).eps
_MERGE = 1e-12  # discontinuity points closer than this (relative) are one point
_SDEP_LAND = 1e-6  # a state-dependent crossing within this fraction of the step end is landed
_ZENO_LIMIT = 200


@njit(cache=True, nogil=True, _nrt=False)
def _rms(v, y0, y1, rtol, atol):
    acc = 0.0
    n = v.shape[0]
    for i in range(n):
        sc = atol[i] + rtol * max(abs(y0[i]), abs(y1[i]))
        r = v[i] / sc
        acc += r * r
    res = math.sqrt(acc / n)
    return res if math.isfinite(res) else np.inf


@njit(cache=True, nogil=True, _nrt=False)
def _dense(method, h, y, ynew, K, D, cn):
    """Power-basis coefficients of the step's continuous extension."""
    n = y.shape[0]
    for i in range(n):
        dlt = ynew[i] - y[i]
        cn[i, 0] = y[i]
        cn[i, 1] = h * K[0, i]
        if method == 0:
            f0 = K[0, i]
            f1 = K[3, i]
            cn[i, 2] = 3.0 * dlt - h * (2.0 * f0 + f1)
            cn[i, 3] = -2.0 * dlt + h * (f0 + f1)
            cn[i, 4] = 0.0
        else:
            b = h * K[0, i] - dlt
            cq = dlt - h * K[6, i] - b
            d = 0.0
            for j in range(7):
                d += D[j] * K[j, i]
            d *= h
            cn[i, 2] = -b + cq + d
            cn[i, 3] = -cq - 2.0 * d
            cn[i, 4] = d


@njit(cache=True, nogil=True, _nrt=False)
def _predictor(h, y, K, mt, mc, nm, nh, extrapolate, cc):
    """First guess of the step's dense output, for lags that fall inside the step.

    The previous step's polynomial continued past its end when ``extrapolate`` (smooth
    continuation, no mode change at ``t``), else the Euler line ``y + theta h f``.
    """
    n = y.shape[0]
    if extrapolate and nm > nh:
        hp = mt[nm] - mt[nm - 1]
        r = h / hp
        for i in range(n):
            # q(theta) = p(1 + r theta): Taylor shift of the power basis
            rk = 1.0
            for k in range(NCOEF):
                acc = 0.0
                binom = 1.0
                for m in range(k, NCOEF):
                    acc += binom * mc[nm - 1, i, m]
                    binom = binom * (m + 1) / (m + 1 - k)
                cc[i, k] = acc * rk
                rk *= r
            cc[i, 0] = y[i]
    else:
        for i in range(n):
            cc[i, 0] = y[i]
            cc[i, 1] = h * K[0, i]
            for j in range(2, NCOEF):
                cc[i, j] = 0.0


@njit(cache=True, nogil=True, _nrt=False)
def _poly_gap(cn, cc, y0, y1, rtol, atol):
    """RMS over states of a bound on ``max_theta |cn(theta) - cc(theta)|`` in tolerance units."""
    n = cn.shape[0]
    acc = 0.0
    for i in range(n):
        d = 0.0
        for j in range(NCOEF):
            d += abs(cn[i, j] - cc[i, j])
        r = d / (atol[i] + rtol * max(abs(y0[i]), abs(y1[i])))
        acc += r * r
    return math.sqrt(acc / n)


@njit(cache=True, nogil=True, _nrt=False)
def _attempt(
    t,
    h,
    y,
    K,
    Kraw,
    ynew,
    cn,
    ytmp,
    yprev,
    etmp,
    A,
    B,
    E,
    C,
    D,
    method,
    rtol,
    atol,
    md,
    bf,
    ib,
    mt,
    mc,
    nm,
    nh,
    extrapolate,
    cc,
    tc,
    fe,
    svs,
    lams,
):
    """One trial step; returns the scaled error norm (inf on failure, cause in ``fl``).

    ``svs[s]`` and ``lams[s]`` receive the switching-function values and sliding weights at
    stage ``s`` (row 0 holds the start values and is left alone).
    """
    hints, slide, stuck, fl, cnt, sl = ib
    sv = bf[4]
    lam = bf[3]
    n = y.shape[0]
    S = C.shape[0]
    _predictor(h, y, K, mt, mc, nm, nh, extrapolate, cc)
    tc[0] = t
    tc[1] = h
    tc[2] = -1.0
    converged = False
    gap_prev = 0.0
    for it in range(_MAXIT):
        fl[FL_FUTURE] = 0
        for s in range(1, S):
            for i in range(n):
                acc = 0.0
                for j in range(s):
                    acc += A[s, j] * K[j, i]
                ytmp[i] = y[i] + h * acc
            if not feval_inline(
                t + C[s] * h, ytmp, K[s], Kraw[s], md, bf, ib, mt, mc, nm, cc, tc, fe
            ):
                return np.inf
            for j in range(svs.shape[1]):
                svs[s, j] = sv[j]
                lams[s, j] = lam[j]
        for i in range(n):
            acc = 0.0
            for j in range(S):
                acc += B[j] * K[j, i]
            ynew[i] = y[i] + h * acc
            if not math.isfinite(ynew[i]):
                fl[FL_CAUSE] = ST_NONFINITE
                fl[FL_INDEX] = i
                fe[0] = ynew[i]
                fe[1] = t + h
                return np.inf
        _dense(method, h, y, ynew, K, D, cn)
        if fl[FL_FUTURE] == 0:
            converged = True
            break
        # The stages read the step's own interpolant cc. Done when cc reproduces itself, or
        # when the end value moved so little that, at the observed contraction rate, the
        # remaining iteration error is a small fraction of the error tolerance.
        gap = _poly_gap(cn, cc, y, ynew, rtol, atol)
        if gap <= _ITER_TOL:
            converged = True
            tc[2] = max(tc[2], 0.0)
            break
        if it > 0:
            rate = gap / gap_prev if gap_prev > 0.0 else 1.0
            tc[2] = rate
            if rate >= 1.0 or (it >= 3 and rate > 0.9):
                break  # diverging or stalling: a shorter step will do better
            for i in range(n):
                etmp[i] = ynew[i] - yprev[i]
            change = _rms(etmp, y, ynew, rtol, atol)
            if change * rate / (1.0 - rate) <= _ITER_TOL_Y:
                converged = True
                break
        gap_prev = gap
        cnt[C_ITER] += 1
        for i in range(n):
            yprev[i] = ynew[i]
            for j in range(NCOEF):
                cc[i, j] = cn[i, j]
    if not converged:
        fl[FL_CAUSE] = ST_ITERATION
        tc[2] = 1.0
        return np.inf
    for i in range(n):
        acc = 0.0
        for j in range(S):
            acc += E[j] * K[j, i]
        etmp[i] = h * acc
    return _rms(etmp, y, ynew, rtol, atol)


@njit(cache=True, nogil=True, _nrt=False)
def _g(etype, idx, xi, sgn, th, t, h, ytmp, fa, fra, md, bf, ib, mt, mc, nm, cc, tc, fe):
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
def _locate(
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
        gm = _g(etype, idx, xi, sgn, m, t, h, ytmp, fa, fra, md, bf, ib, mt, mc, nm, cc, tc, fe)
        if not math.isfinite(gm):
            fl[FL_CAUSE] = ST_OK
            m = 0.5 * (a + b)
            gm = _g(etype, idx, xi, sgn, m, t, h, ytmp, fa, fra, md, bf, ib, mt, mc, nm, cc, tc, fe)
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
def _stage_event(
    etype, idx, sgn, gst, C, best, t, h, ytmp, fa, fra, md, bf, ib, mt, mc, nm, cc, tc, fe
):
    """Earliest time ``theta`` where ``g`` turns negative in the step, from its stage values.

    ``gst[s]`` is ``g`` at stage ``s`` (``gst[0]`` at the start). The bracket is confirmed on
    the dense output and shrunk by :func:`_locate`. When the step starts on the wrong side of a
    surface (rounding right after an event) and no point with ``g >= 0`` is found, the step is
    cut short and the mode decided again (``EV_REDECIDE``). Returns ``(theta, type)``;
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
    ghi = _g(etype, idx, 0.0, sgn, hi, t, h, ytmp, fa, fra, md, bf, ib, mt, mc, nm, cc, tc, fe)
    if not ghi < 0.0:
        hi = 1.0
        ghi = _g(etype, idx, 0.0, sgn, hi, t, h, ytmp, fa, fra, md, bf, ib, mt, mc, nm, cc, tc, fe)
        if not ghi < 0.0:
            fl[FL_CAUSE] = ST_OK
            return 2.0, EV_NONE
    lo = -1.0
    glo = 0.0
    if first > 1:
        lo = C[first - 1]
        glo = _g(etype, idx, 0.0, sgn, lo, t, h, ytmp, fa, fra, md, bf, ib, mt, mc, nm, cc, tc, fe)
        if not glo >= 0.0:
            lo = -1.0
    if lo < 0.0 and gst[0] >= 0.0:
        lo = 0.0
        glo = gst[0]
    if lo < 0.0:
        # wrong side at the start: look for the side the mode belongs to
        for k in range(1, 17):
            th = hi * k / 16.0
            gv = _g(
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
            fl[FL_CAUSE] = ST_OK
            return hi / 16.0, EV_REDECIDE
    fl[FL_CAUSE] = ST_OK
    if lo >= best:
        return 2.0, EV_NONE
    a, b = _locate(
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
def _decide(j, t, y, fa, fra, fb, frb, md, bf, ib, mt, mc, nm, cc, tc, fe):
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


@njit(cache=True, nogil=True)
def _push(arr_t, arr_l, cnt, xi, lvl, tol):
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
def integrate(
    md,
    hist_t,
    hist_c,
    x0,
    t0,
    t_end,
    rtol,
    atol,
    h_max,
    h_first,
    method,
    max_steps,
    t_eval,
    keep_mesh,
    track_level,
    event_generations,
    nsw,
):
    """Integrate one trajectory. See the module docstring; returns a tuple of arrays.

    Returns
    -------
    status : int64[2]      (cause, index)
    info : float64[4]      (time, step, value, extra) of a failure
    ylast : float64[n]     state at the failure (last accepted state)
    mt, mc                 the mesh and dense output, history included (empty unless keep_mesh)
    y_eval : float64[m, n] values at ``t_eval``
    counters : int64[8]
    btime : float64[n]     time spent held at 0, per projected state
    """
    fn, p, lag_state, lag_sdep, nonneg, hstart, sw_lagdep, tauc = md
    n = x0.shape[0]
    nlag = lag_state.shape[0]
    if method == 0:
        A, B, E, C, D = _BS3_A, _BS3_B, _BS3_E, _BS3_C, _NO_D
        q = 2
        order = 3
    else:
        A, B, E, C, D = _DP5_A, _DP5_B, _DP5_E, _DP5_C, _DP5_D
        q = 4
        order = 5
    S = C.shape[0]
    expo = 1.0 / (q + 1)

    status = np.zeros(2, dtype=np.int64)
    info = np.zeros(4)
    cnt = np.zeros(8, dtype=np.int64)
    btime = np.zeros(n)
    neval = t_eval.shape[0]
    y_eval = np.full((neval, n), np.nan)

    # ---------------------------------------------------------------- buffers
    nl1 = max(1, nlag)
    ns1 = max(1, nsw)
    z = np.zeros(nl1)
    largs = np.zeros(nl1)
    w = np.zeros(ns1)
    lam = np.zeros(ns1)
    sv = np.zeros(ns1)
    zdot = np.zeros(nl1)
    kbuf = np.zeros(1)
    xe = np.zeros(n)
    G = np.zeros(max(1, nsw * (n + 1)))
    corners = np.zeros((1 << min(nsw, 10), n))
    J = np.zeros((ns1, ns1))
    vbuf = np.zeros(2 * ns1 + n)
    bf = (z, largs, w, lam, sv, zdot, kbuf, xe, G, corners, J, vbuf)
    hints = np.zeros(nl1, dtype=np.int64)
    slide = np.zeros(ns1, dtype=np.int64)
    stuck = np.zeros(n, dtype=np.int64)
    fl = np.zeros(4, dtype=np.int64)
    sl = np.zeros(ns1, dtype=np.int64)
    ib = (hints, slide, stuck, fl, cnt, sl)
    fe = np.zeros(2)

    K = np.zeros((S, n))
    Kraw = np.zeros((S, n))
    y = x0.copy()
    ynew = np.zeros(n)
    ytmp = np.zeros(n)
    yprev = np.zeros(n)
    etmp = np.zeros(n)
    cn = np.zeros((n, NCOEF))
    cc = np.zeros((n, NCOEF))
    tc = np.array([t0, 1.0, 0.0])
    fa = np.zeros(n)
    fra = np.zeros(n)
    fb = np.zeros(n)
    frb = np.zeros(n)
    sv0 = np.zeros(ns1)
    sv1 = np.zeros(ns1)
    lam0 = np.zeros(ns1)
    lam1 = np.zeros(ns1)
    largs0 = np.zeros(nl1)
    largs1 = np.zeros(nl1)
    svs = np.zeros((S, ns1))
    lams = np.zeros((S, ns1))
    gst = np.zeros(S)

    nh = hist_c.shape[0]
    cap = nh + 1024
    mt = np.empty(cap + 1)
    mc = np.zeros((cap, n, NCOEF))
    mt[: nh + 1] = hist_t
    mc[:nh] = hist_c
    nm = nh

    # discontinuity bookkeeping
    dp_t = np.empty(64)
    dp_l = np.empty(64, dtype=np.int64)
    ndp = np.int64(0)
    dw_t = np.empty(64)
    dw_l = np.empty(64, dtype=np.int64)
    dw_done = np.zeros(64, dtype=np.int64)
    ndw = np.int64(0)
    any_sdep = nlag < 0  # (computed, not a literal: one compiled copy of the callees)
    sdep_mask = 0
    for k in range(nlag):
        if lag_sdep[k] == 1 and k < 62:
            any_sdep = True
            sdep_mask |= 1 << k
    for k in range(nlag):
        if lag_sdep[k] == 0:
            # constant and parameter delays depend on parameters only
            kbuf[0] = k
            call_model(fn[1], t0, x0, z, p, w, kbuf, kbuf)
            tauc[k] = kbuf[0]

    # ---------------------------------------------------------------- initial modes
    t = t0
    ie = 0
    while ie < neval and t_eval[ie] <= t0:
        for i in range(n):
            y_eval[ie, i] = x0[i]
        ie += 1
    if not eval_lags(t, y, md, bf, ib, mt, mc, nm, cc, tc, fe):
        return _fail(fl, fe, y, t, 0.0, status, info, mt, mc, nm, keep_mesh, y_eval, cnt, btime)
    if nsw > 0:
        for _ in range(nsw):
            call_model(fn[2], t, y, z, p, w, kbuf, sv)
            for j in range(nsw):
                w[j] = 1.0 if sv[j] > 0.0 else 0.0
        call_model(fn[2], t, y, z, p, w, kbuf, sv)
        for j in range(nsw):
            if sv[j] == 0.0:
                w[j] = 0.0
                if not _decide(j, t, y, fa, fra, fb, frb, md, bf, ib, mt, mc, nm, cc, tc, fe):
                    return _fail(
                        fl, fe, y, t, 0.0, status, info, mt, mc, nm, keep_mesh, y_eval, cnt, btime
                    )
    if not feval(t, y, K[0], Kraw[0], md, bf, ib, mt, mc, nm, cc, tc, fe):
        return _fail(fl, fe, y, t, 0.0, status, info, mt, mc, nm, keep_mesh, y_eval, cnt, btime)
    held = False
    for i in range(n):
        if nonneg[i] == 1 and y[i] == 0.0 and Kraw[0, i] <= 0.0:
            stuck[i] = 1
            held = True
    if held and not feval(t, y, K[0], Kraw[0], md, bf, ib, mt, mc, nm, cc, tc, fe):
        return _fail(fl, fe, y, t, 0.0, status, info, mt, mc, nm, keep_mesh, y_eval, cnt, btime)

    # t0 carries a jump in the first derivative (history slope vs. field)
    tol0 = _MERGE * max(1.0, abs(t0))
    if track_level >= 2:
        for k in range(nlag):
            if lag_sdep[k] == 0 and tauc[k] > tol0 and t0 + tauc[k] < t_end:
                dp_t, dp_l, ndp = _push(dp_t, dp_l, np.int64(ndp), t0 + tauc[k], np.int64(2), tol0)
        if any_sdep:
            dw_t[0] = t0
            dw_l[0] = 1
            ndw = 1

    # ---------------------------------------------------------------- initial step
    if h_first > 0.0:
        h = h_first
    else:
        d0 = _rms(y, y, y, rtol, atol)
        d1 = _rms(K[0], y, y, rtol, atol)
        h0 = 1e-6 if (d0 < 1e-5 or d1 < 1e-5) else 0.01 * d0 / d1
        h0 = min(h0, h_max, t_end - t0)
        for i in range(n):
            ytmp[i] = y[i] + h0 * K[0, i]
            cc[i, 0] = y[i]
            cc[i, 1] = h0 * K[0, i]
            for j in range(2, NCOEF):
                cc[i, j] = 0.0
        tc[0] = t0
        tc[1] = h0
        if feval(t0 + h0, ytmp, fa, fra, md, bf, ib, mt, mc, nm, cc, tc, fe):
            for i in range(n):
                etmp[i] = (fa[i] - K[0, i]) / h0
            d2 = _rms(etmp, y, y, rtol, atol)
            mx = max(d1, d2)
            h1 = max(1e-6, h0 * 1e-3) if mx <= 1e-15 else (0.01 / mx) ** (1.0 / order)
            h = min(100.0 * h0, h1)
        else:
            h = h0
        fl[FL_CAUSE] = ST_OK
        # the probe evaluation disturbed the start-point buffers: recompute them
        feval(t, y, K[0], Kraw[0], md, bf, ib, mt, mc, nm, cc, tc, fe)
        for i in range(n):
            if stuck[i] == 1:
                K[0, i] = 0.0
    h = min(h, h_max)

    for j in range(nsw):
        sv0[j] = sv[j]
        lam0[j] = lam[j]
    for k in range(nlag):
        largs0[k] = largs[k]

    # ---------------------------------------------------------------- main loop
    last_cause = ST_OK
    rejected = False
    smooth_start = nlag < 0
    k_est = 1.0  # recent extra iterations per step with lags inside the step
    nzero = 0
    while t < t_end:
        if cnt[C_STEPS] >= max_steps:
            fl[FL_CAUSE] = ST_MAX_STEPS
            return _fail(fl, fe, y, t, h, status, info, mt, mc, nm, keep_mesh, y_eval, cnt, btime)
        hmin = _HMIN_FAC * max(1.0, abs(t))
        tol_m = _MERGE * max(1.0, abs(t))
        # discontinuity point (or the end) to land on
        target = t_end
        target_disc = -1
        for m in range(ndp):
            if dp_t[m] > t + tol_m and dp_t[m] < target:
                target = dp_t[m]
                target_disc = m
        h = min(h, h_max)
        # A step longer than a delay needs the iteration; a step capped at the smallest delay
        # needs none. Take the cheaper per unit time, judged by the recent iteration count.
        tau_min = np.inf
        for k in range(nlag):
            tk = t - largs0[k]
            if hmin < tk < tau_min:
                tau_min = tk
        if h > tau_min and (1.0 + k_est) * tau_min >= h:
            h = tau_min
        h_prop = h
        land = False
        if t + h >= target - hmin:
            h = target - t
            land = True
        elif t + 2.0 * h > target:
            h = 0.5 * (target - t)

        fl[FL_CAUSE] = ST_OK
        it_before = cnt[C_ITER]
        for j in range(nsw):
            svs[0, j] = sv0[j]
            lams[0, j] = lam0[j]
        err = _attempt(
            t,
            h,
            y,
            K,
            Kraw,
            ynew,
            cn,
            ytmp,
            yprev,
            etmp,
            A,
            B,
            E,
            C,
            D,
            method,
            rtol,
            atol,
            md,
            bf,
            ib,
            mt,
            mc,
            nm,
            nh,
            smooth_start,
            cc,
            tc,
            fe,
            svs,
            lams,
        )
        if not err <= 1.0:
            cnt[C_REJECT] += 1
            cause = fl[FL_CAUSE]
            if cause != ST_OK:
                last_cause = cause
                status[1] = fl[FL_INDEX]
                info[2] = fe[0]
                info[3] = fe[1]
            elif not math.isfinite(err):
                last_cause = ST_NONFINITE
            if math.isfinite(err):
                h = h * max(_FACMIN, _SAFETY * err ** (-expo))
            elif cause == ST_ITERATION:
                h = 0.5 * h
                k_est = max(k_est, 4.0)
            else:
                h = 0.25 * h
            rejected = True
            if h < hmin:
                fl[FL_CAUSE] = last_cause if last_cause != ST_OK else ST_UNDERFLOW
                if last_cause == ST_ITERATION:
                    fl[FL_CAUSE] = ST_UNDERFLOW
                fl[FL_INDEX] = status[1]
                fe[0] = info[2]
                fe[1] = info[3]
                return _fail(
                    fl, fe, y, t, h, status, info, mt, mc, nm, keep_mesh, y_eval, cnt, btime
                )
            continue
        last_cause = ST_OK
        rate = tc[2]
        if rate >= 0.0:
            k_est = 0.7 * k_est + 0.3 * (cnt[C_ITER] - it_before)
        # the trial step passed: its dense output answers lookups inside the step
        for i in range(n):
            for j in range(NCOEF):
                cc[i, j] = cn[i, j]
        tc[0] = t
        tc[1] = h
        for j in range(nsw):
            sv1[j] = sv[j]
            lam1[j] = lam[j]
        for k in range(nlag):
            largs1[k] = largs[k]
        touched = False  # dense evaluations clobbered the end-point buffers

        # ------------------------------------------------ state-dependent discontinuities
        sd_land_m = -1
        sd_land_k = -1
        if any_sdep and ndw > 0:
            best = 2.0
            bm = -1
            bk = -1
            for m in range(ndw):
                xi = dw_t[m]
                tx = _MERGE * max(1.0, abs(xi))
                for k in range(nlag):
                    if lag_sdep[k] == 0 or k >= 62 or (dw_done[m] >> k) & 1:
                        continue
                    g0 = largs0[k] - xi
                    g1 = largs1[k] - xi
                    if abs(g0) <= tx:
                        dw_done[m] |= 1 << k
                        continue
                    if g0 * g1 > 0.0 and abs(g1) > tx:
                        continue
                    if abs(g1) <= tx:
                        th = 1.0
                    else:
                        sgn = 1.0 if g0 > 0.0 else -1.0
                        touched = True
                        a, b = _locate(
                            EVT[EV_SDEP],
                            k,
                            xi,
                            sgn,
                            0.0,
                            1.0,
                            sgn * g0,
                            sgn * g1,
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
                        th = b
                    if th < best:
                        best = th
                        bm = m
                        bk = k
            if bm >= 0:
                if best < 1.0 - _SDEP_LAND and best * h > hmin:
                    # redo the step so that it ends on the crossing
                    h = best * h
                    fl[FL_CAUSE] = ST_OK
                    continue
                if best * h <= hmin:
                    # the crossing is at the current time
                    dw_done[bm] |= 1 << bk
                    cnt[C_DISC] += 1
                    lv = dw_l[bm] + 1
                    if lv < track_level:
                        dp_t, dp_l, ndp, dw_t, dw_l, dw_done, ndw = _propagate(
                            t,
                            lv,
                            tauc,
                            lag_sdep,
                            any_sdep,
                            t_end,
                            dp_t,
                            dp_l,
                            ndp,
                            dw_t,
                            dw_l,
                            dw_done,
                            ndw,
                        )
                    h = h_prop
                    continue
                sd_land_m = bm
                sd_land_k = bk

        # ------------------------------------------------ events on the dense output
        best = 2.0
        etype = EVT[EV_NONE]
        eidx = np.int64(-1)
        for i in range(n):
            if nonneg[i] == 0 or stuck[i] == 1:
                continue
            prev = 0.0
            gprev = cc[i, 0]
            for jj in range(1, 9):
                th = jj / 8.0
                if th > best:
                    break
                gv = horner(cc[i], th)
                if gv < 0.0:
                    a, b = _locate(
                        EVT[EV_ARRIVE],
                        i,
                        0.0,
                        1.0,
                        prev,
                        th,
                        max(gprev, 0.0),
                        gv,
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
                    if a < best:
                        best = a
                        etype = EV_ARRIVE
                        eidx = i
                    break
                prev = th
                gprev = gv
        for i in range(n):
            if stuck[i] == 0 or best <= 0.0:
                continue
            first = -1
            for st in range(1, S):
                if Kraw[st, i] > 0.0:
                    first = st
                    break
            if first < 0:
                continue
            touched = True
            hi = C[first]
            gb = _g(
                EVT[EV_DEPART],
                i,
                0.0,
                1.0,
                hi,
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
            if not gb < 0.0:
                hi = 1.0
                gb = -Kraw[S - 1, i]
            fl[FL_CAUSE] = ST_OK
            if gb < 0.0:
                ga = max(-Kraw[0, i], 0.0)
                a, b = _locate(
                    EVT[EV_DEPART],
                    i,
                    0.0,
                    1.0,
                    0.0,
                    hi,
                    ga,
                    gb,
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
                if b < best:
                    best = b
                    etype = EV_DEPART
                    eidx = i
        for j in range(nsw):
            if best <= 0.0:
                break
            if slide[j] == 1:
                # sliding ends where the Filippov weight leaves [0, 1]
                for et in (EV_SLIDE_LO, EV_SLIDE_HI):
                    for st in range(S):
                        gst[st] = lams[st, j] if et == EV_SLIDE_LO else 1.0 - lams[st, j]
                    th, ety = _stage_event(
                        EVT[et],
                        j,
                        1.0,
                        gst,
                        C,
                        best,
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
                    if ety != EV_NONE:
                        touched = True
                        if th < best:
                            best = th
                            etype = ety
                            eidx = j
                continue
            sgn = 1.0 if w[j] > 0.5 else -1.0
            for st in range(S):
                gst[st] = sgn * svs[st, j]
            th, ety = _stage_event(
                EVT[EV_SWITCH],
                j,
                sgn,
                gst,
                C,
                best,
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
            if ety != EV_NONE:
                touched = True
                if th < best:
                    best = th
                    etype = ety
                    eidx = j
        fl[FL_CAUSE] = ST_OK

        if etype != EV_NONE and best * h <= hmin:
            # an event at the current time: change the mode without stepping
            nzero += 1
            if nzero > _ZENO_LIMIT:
                fl[FL_CAUSE] = ST_ZENO
                fl[FL_INDEX] = eidx
                fe[0] = etype
                fe[1] = t
                return _fail(
                    fl, fe, y, t, h, status, info, mt, mc, nm, keep_mesh, y_eval, cnt, btime
                )
            if not _apply_event(
                etype, eidx, t, y, K, Kraw, fa, fra, fb, frb, md, bf, ib, mt, mc, nm, cc, tc, fe
            ):
                return _fail(
                    fl, fe, y, t, h, status, info, mt, mc, nm, keep_mesh, y_eval, cnt, btime
                )
            cnt[C_EVENTS] += 1
            smooth_start = nlag < 0
            for j in range(nsw):
                sv0[j] = sv[j]
                lam0[j] = lam[j]
            for k in range(nlag):
                largs0[k] = largs[k]
            h = h_prop
            continue
        nzero = 0

        # ------------------------------------------------ commit the step
        th_end = 1.0
        if etype != EV_NONE and best < 1.0:
            th_end = best
            sc = 1.0
            for j in range(NCOEF):
                for i in range(n):
                    cn[i, j] *= sc
                sc *= th_end
            for i in range(n):
                ynew[i] = horner(cn[i], 1.0)
            land = False
            sd_land_m = -1
        h_acc = th_end * h
        t_new = t + h_acc
        if land and th_end == 1.0:
            t_new = target
        if etype == EV_ARRIVE:
            vend = ynew[eidx]
            cn[eidx, 2] -= vend
            ynew[eidx] = 0.0
        for i in range(n):
            if nonneg[i] == 1 and ynew[i] < 0.0:
                ynew[i] = 0.0
        if nm + 1 >= mt.shape[0] - 1:
            mt, mc = _grow(mt, mc, nm)
        for i in range(n):
            for j in range(NCOEF):
                mc[nm, i, j] = cn[i, j]
        mt[nm + 1] = t_new
        nm += 1
        cnt[C_STEPS] += 1
        for i in range(n):
            if stuck[i] == 1:
                btime[i] += t_new - t
        while ie < neval and t_eval[ie] <= t_new:
            th = (t_eval[ie] - t) / (t_new - t)
            for i in range(n):
                v = horner(cn[i], th)
                if nonneg[i] == 1 and v < 0.0:
                    v = 0.0
                y_eval[ie, i] = v
            ie += 1
        t_old = t
        t = t_new
        for i in range(n):
            y[i] = ynew[i]
        # lookups beyond the stored history are impossible now; keep cc harmless
        tc[0] = t
        tc[1] = 1.0
        for i in range(n):
            cc[i, 0] = y[i]
            for j in range(1, NCOEF):
                cc[i, j] = 0.0

        # ------------------------------------------------ next step's start
        if etype != EV_NONE:
            if not _apply_event(
                etype, eidx, t, y, K, Kraw, fa, fra, fb, frb, md, bf, ib, mt, mc, nm, cc, tc, fe
            ):
                return _fail(
                    fl, fe, y, t, h, status, info, mt, mc, nm, keep_mesh, y_eval, cnt, btime
                )
            cnt[C_EVENTS] += 1
            smooth_start = nlag < 0
            lv0 = max(1, track_level - event_generations)
            if lv0 < track_level:
                dp_t, dp_l, ndp, dw_t, dw_l, dw_done, ndw = _propagate(
                    t,
                    lv0,
                    tauc,
                    lag_sdep,
                    any_sdep,
                    t_end,
                    dp_t,
                    dp_l,
                    ndp,
                    dw_t,
                    dw_l,
                    dw_done,
                    ndw,
                )
        else:
            smooth_start = True
        if etype == EV_NONE and touched:
            if not feval(t, y, K[0], Kraw[0], md, bf, ib, mt, mc, nm, cc, tc, fe):
                return _fail(
                    fl, fe, y, t, h, status, info, mt, mc, nm, keep_mesh, y_eval, cnt, btime
                )
        elif etype == EV_NONE:
            for i in range(n):
                K[0, i] = K[S - 1, i]
                Kraw[0, i] = Kraw[S - 1, i]
            for j in range(nsw):
                sv[j] = sv1[j]
                lam[j] = lam1[j]
            for k in range(nlag):
                largs[k] = largs1[k]
        for j in range(nsw):
            sv0[j] = sv[j]
            lam0[j] = lam[j]
        for k in range(nlag):
            largs0[k] = largs[k]

        # ------------------------------------------------ discontinuity points reached
        if land and target_disc >= 0 and t == target:
            lv = dp_l[target_disc]
            cnt[C_DISC] += 1
            # drop every pending point at this time
            m = 0
            while m < ndp:
                if abs(dp_t[m] - t) <= tol_m or dp_t[m] < t:
                    if dp_l[m] < lv:
                        lv = dp_l[m]
                    dp_t[m] = dp_t[ndp - 1]
                    dp_l[m] = dp_l[ndp - 1]
                    ndp -= 1
                else:
                    m += 1
            if lv < track_level:
                dp_t, dp_l, ndp, dw_t, dw_l, dw_done, ndw = _propagate(
                    t,
                    lv,
                    tauc,
                    lag_sdep,
                    any_sdep,
                    t_end,
                    dp_t,
                    dp_l,
                    ndp,
                    dw_t,
                    dw_l,
                    dw_done,
                    ndw,
                )
        if sd_land_m >= 0:
            dw_done[sd_land_m] |= 1 << sd_land_k
            cnt[C_DISC] += 1
            lv = dw_l[sd_land_m] + 1
            if lv < track_level:
                dp_t, dp_l, ndp, dw_t, dw_l, dw_done, ndw = _propagate(
                    t,
                    lv,
                    tauc,
                    lag_sdep,
                    any_sdep,
                    t_end,
                    dp_t,
                    dp_l,
                    ndp,
                    dw_t,
                    dw_l,
                    dw_done,
                    ndw,
                )
        if any_sdep:
            # forget watch points every state-dependent lag has passed
            m = 0
            while m < ndw:
                if (dw_done[m] & sdep_mask) == sdep_mask:
                    dw_t[m] = dw_t[ndw - 1]
                    dw_l[m] = dw_l[ndw - 1]
                    dw_done[m] = dw_done[ndw - 1]
                    ndw -= 1
                else:
                    m += 1

        # ------------------------------------------------ next step size
        if err == 0.0:
            fac = _FACMAX
        else:
            fac = min(_FACMAX, max(_FACMIN, _SAFETY * err ** (-expo)))
        if rejected:
            fac = min(fac, 1.0)
        h_next = h * fac
        if land and not rejected and h_prop > h_next:
            h_next = h_prop
        if rate >= 0.0:
            # lags inside the step: grow gently and keep the iteration contracting fast
            h_next = min(h_next, h * min(_GROW_ITER, _RATE_MAX / max(rate, 1e-12)))
        h = h_next
        rejected = False
        if not t > t_old:
            fl[FL_CAUSE] = ST_UNDERFLOW
            return _fail(fl, fe, y, t, h, status, info, mt, mc, nm, keep_mesh, y_eval, cnt, btime)
    status[0] = ST_OK
    if keep_mesh:
        return status, info, y.copy(), mt[: nm + 1].copy(), mc[:nm].copy(), y_eval, cnt, btime
    return status, info, y.copy(), mt[:1].copy(), mc[:0].copy(), y_eval, cnt, btime


@njit(cache=True, nogil=True, _nrt=False)
def _apply_event(etype, idx, t, y, K, Kraw, fa, fra, fb, frb, md, bf, ib, mt, mc, nm, cc, tc, fe):
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
        if not _decide(idx, t, y, fa, fra, fb, frb, md, bf, ib, mt, mc, nm, cc, tc, fe):
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


@njit(cache=True, nogil=True)
def _propagate(xi, lvl, tauc, lag_sdep, any_sdep, t_end, dp_t, dp_l, ndp, dw_t, dw_l, dw_done, ndw):
    """Successors of a discontinuity of derivative order ``lvl`` at ``xi`` (order ``lvl + 1``)."""
    tol = _MERGE * max(1.0, abs(xi))
    for k in range(lag_sdep.shape[0]):
        if lag_sdep[k] == 0 and tauc[k] > tol and xi + tauc[k] < t_end:
            dp_t, dp_l, ndp = _push(dp_t, dp_l, ndp, xi + tauc[k], lvl + 1, tol)
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


@njit(cache=True, nogil=True)
def _grow(mt, mc, nm):
    cap = 2 * mc.shape[0]
    nt = np.empty(cap + 1)
    ncf = np.zeros((cap, mc.shape[1], mc.shape[2]))
    nt[: nm + 1] = mt[: nm + 1]
    ncf[:nm] = mc[:nm]
    return nt, ncf


@njit(cache=True, nogil=True)
def _fail(fl, fe, y, t, h, status, info, mt, mc, nm, keep_mesh, y_eval, cnt, btime):
    status[0] = fl[FL_CAUSE] if fl[FL_CAUSE] != ST_OK else ST_NONFINITE
    status[1] = fl[FL_INDEX]
    info[0] = t
    info[1] = h
    info[2] = fe[0]
    info[3] = fe[1]
    if keep_mesh:
        return status, info, y.copy(), mt[: nm + 1].copy(), mc[:nm].copy(), y_eval, cnt, btime
    return status, info, y.copy(), mt[:1].copy(), mc[:0].copy(), y_eval, cnt, btime
