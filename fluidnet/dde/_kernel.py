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

from ._codes import (
    C_DISC,
    C_EVENTS,
    C_ITER,
    C_REJECT,
    C_STEPS,
    EV_ARRIVE,
    EV_DEPART,
    EV_NONE,
    EV_SDEP,
    EV_SLIDE_HI,
    EV_SLIDE_LO,
    EV_SWITCH,
    EVT,
    FL_CAUSE,
    FL_INDEX,
    ST_ITERATION,
    ST_MAX_STEPS,
    ST_NONFINITE,
    ST_OK,
    ST_UNDERFLOW,
    ST_ZENO,
)
from ._discontinuities import _MERGE, propagate, push
from ._events import apply_event, decide, g, locate, stage_event
from ._ffi import call_model
from ._field import eval_lags, feval
from ._history import horner
from ._step import attempt, rms
from ._tableaux import BS3, DP5, NCOEF

__all__ = ["integrate"]

_BS3_A, _BS3_B, _BS3_E, _BS3_C = BS3.A, BS3.B, BS3.E, BS3.C
_DP5_A, _DP5_B, _DP5_E, _DP5_C, _DP5_D = DP5.A, DP5.B, DP5.E, DP5.C, DP5.D
_NO_D = np.zeros(4)


_GROW_ITER = 2.0  # largest step growth when lags fell inside the step
_RATE_MAX = 0.5  # largest contraction rate of that iteration before steps are shortened
_SAFETY = 0.9
_FACMIN = 0.2
_FACMAX = 5.0
_HMIN_FAC = 64.0 * np.finfo(np.float64).eps
_SDEP_LAND = 1e-6  # a state-dependent crossing within this fraction of the step end is landed
_ZENO_LIMIT = 200


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
    btime : float64[n + 2 nsw]  time spent held at 0, per projected state; then, per switch,
                           the time spent sliding on its surface and the integral of its
                           Filippov weight over that time
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
    btime = np.zeros(n + 2 * nsw)
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
                if not decide(j, t, y, fa, fra, fb, frb, md, bf, ib, mt, mc, nm, cc, tc, fe):
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
                dp_t, dp_l, ndp = push(dp_t, dp_l, np.int64(ndp), t0 + tauc[k], np.int64(2), tol0)
        if any_sdep:
            dw_t[0] = t0
            dw_l[0] = 1
            ndw = 1

    # ---------------------------------------------------------------- initial step
    if h_first > 0.0:
        h = h_first
    else:
        d0 = rms(y, y, y, rtol, atol)
        d1 = rms(K[0], y, y, rtol, atol)
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
            d2 = rms(etmp, y, y, rtol, atol)
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
        err = attempt(
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
                        a, b = locate(
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
                        dp_t, dp_l, ndp, dw_t, dw_l, dw_done, ndw = propagate(
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
                    a, b = locate(
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
            gb = g(
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
                a, b = locate(
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
                    th, ety = stage_event(
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
            th, ety = stage_event(
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
            if not apply_event(
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
        for j in range(nsw):
            if slide[j] == 1:
                # the equivalent control, averaged with the method's quadrature weights
                wbar = 0.0
                for st in range(S):
                    wbar += B[st] * lams[st, j]
                btime[n + j] += t_new - t
                btime[n + nsw + j] += (t_new - t) * wbar
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
            if not apply_event(
                etype, eidx, t, y, K, Kraw, fa, fra, fb, frb, md, bf, ib, mt, mc, nm, cc, tc, fe
            ):
                return _fail(
                    fl, fe, y, t, h, status, info, mt, mc, nm, keep_mesh, y_eval, cnt, btime
                )
            cnt[C_EVENTS] += 1
            smooth_start = nlag < 0
            lv0 = max(1, track_level - event_generations)
            if lv0 < track_level:
                dp_t, dp_l, ndp, dw_t, dw_l, dw_done, ndw = propagate(
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
                dp_t, dp_l, ndp, dw_t, dw_l, dw_done, ndw = propagate(
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
                dp_t, dp_l, ndp, dw_t, dw_l, dw_done, ndw = propagate(
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
