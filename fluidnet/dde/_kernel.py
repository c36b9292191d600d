"""The compiled integration loop: adaptive embedded Runge-Kutta for delay equations.

:func:`advance` integrates one trajectory from its current state until ``t_end``, a failure, or
a work budget; the Python driver calls it again to resume (so that Ctrl-C is seen between calls,
and the mesh can be enlarged or, with ``dense=False``, trimmed). A step goes through named
phases, each its own compiled function:

1. :func:`~._control.propose_step`: the step size, landing on the next discontinuity point;
2. :func:`~._step.attempt`: the stages of the method given as data, with lagged values that
   fall inside the step taken from the step's own continuous extension (a fixed-point
   iteration), and the local error in a mixed absolute/relative RMS norm;
3. :func:`~._control.rejected_step` or :func:`~._control.next_step`: the step-size controller;
4. :func:`~._discontinuities.sdep_crossings`: state-dependent lags crossing a discontinuity;
5. :func:`~._events.find_events`: events on the dense output (a projected state reaching 0, a
   held state released, a switching function changing sign, a sliding weight leaving [0, 1]);
6. :func:`commit`: cut the step at the event, store its dense output (the history of later
   steps), write the requested outputs;
7. :func:`restart`: the mode change and the field at the new start;
8. :func:`~._discontinuities.landed`: the discontinuity points reached, propagated through the
   delays up to the order of the method.

Failure is reported in the state record (cause, time, index and value at fault); the Python
driver turns it into an :class:`~fluidnet.errors.IntegrationError`.
"""

from __future__ import annotations

import numpy as np

from ._codes import (
    EV_ARRIVE,
    EV_NONE,
    SD_AT_START,
    SD_REDO,
    ST_MAX_STEPS,
    ST_NEED_SPACE,
    ST_NONFINITE,
    ST_OK,
    ST_PAUSED,
    ST_UNDERFLOW,
    ST_ZENO,
)
from ._control import initial_step, next_step, propose_step, rejected_step
from ._discontinuities import MAX_SDEP_LAGS, MERGE, landed, propagate_below, push, sdep_crossings
from ._events import apply_event, decide, find_events, start_field
from ._ffi import call_model
from ._field import eval_lags
from ._history import horner
from ._jit import entry, inlined
from ._step import attempt

__all__ = ["advance"]

_ZENO_LIMIT = 200  # mode changes at one time before the run is declared Zeno


@inlined
def fail(st, h):
    """Record a failure (the cause is ``st.cause``; non-finite values if none) and return it."""
    st.status = st.cause if st.cause != ST_OK else ST_NONFINITE
    st.fail_t = st.t
    st.fail_h = h
    return st.status


@inlined
def remember_start(st, fw, mk):
    """Switch values, sliding weights and lag arguments at the start of the next step."""
    for j in range(st.nsw):
        mk.sv0[j] = fw.sv[j]
        mk.lam0[j] = fw.lam[j]
    for k in range(mk.largs0.shape[0]):
        mk.largs0[k] = fw.largs[k]


@inlined
def _initial_modes(st, md, fw, hs, sw):
    """Modes at ``t0``: switch sides from the switching functions, projected states held."""
    t, y = st.t, sw.y
    nsw = st.nsw
    if nsw > 0:
        for _ in range(nsw):
            call_model(md.switch, t, y, fw.z, md.p, fw.w, fw.kbuf, fw.sv)
            for j in range(nsw):
                fw.w[j] = 1.0 if fw.sv[j] > 0.0 else 0.0
        call_model(md.switch, t, y, fw.z, md.p, fw.w, fw.kbuf, fw.sv)
        for j in range(nsw):
            if fw.sv[j] == 0.0:
                fw.w[j] = 0.0
                if not decide(j, t, st, md, fw, hs, sw):
                    return False
    if not start_field(t, st, md, fw, hs, sw):
        return False
    held = False
    for i in range(y.shape[0]):
        if md.nonneg[i] == 1 and y[i] == 0.0 and sw.Kraw[0, i] <= 0.0:
            fw.stuck[i] = 1
            held = True
    return not held or start_field(t, st, md, fw, hs, sw)


@inlined
def _delays_and_marks(st, md, fw, dc):
    """Constant and parameter delays (once), and the jump of the derivative at ``t0``."""
    t0 = st.t
    for k in range(md.lag_state.shape[0]):
        if md.lag_sdep[k] == 1 and k < MAX_SDEP_LAGS:
            st.any_sdep = True
            st.sdep_mask |= 1 << k
        if md.lag_sdep[k] == 0:
            # constant and parameter delays depend on parameters only
            fw.kbuf[0] = k
            call_model(md.delay, t0, fw.xe, fw.z, md.p, fw.w, fw.kbuf, fw.kbuf)
            md.tauc[k] = fw.kbuf[0]
            st.max_delay = max(st.max_delay, md.tauc[k])
    # t0 carries a jump in the first derivative (history slope vs. field)
    tol0 = MERGE * max(1.0, abs(t0))
    first_order = np.int64(2)  # the second derivative jumps at t0 + tau
    if st.track_level >= 2:
        for k in range(md.lag_state.shape[0]):
            tau = md.tauc[k]
            if md.lag_sdep[k] == 0 and tau > tol0 and t0 + tau < st.t_end:
                st.ndp = push(dc.dp_t, dc.dp_l, st.ndp, t0 + tau, first_order, tol0)
        if st.any_sdep:
            dc.dw_t[0] = t0
            dc.dw_l[0] = 1
            st.ndw = 1


@inlined
def _output(st, md, out, cn, t_new):
    """Values at the requested output times in ``(st.t, t_new]`` from the step's polynomial."""
    t_eval, y_eval = out.t_eval, out.y_eval
    while st.ie < t_eval.shape[0] and t_eval[st.ie] <= t_new:
        th = (t_eval[st.ie] - st.t) / (t_new - st.t)
        for i in range(cn.shape[0]):
            v = horner(cn[i], th)
            if md.nonneg[i] == 1 and v < 0.0:
                v = 0.0
            y_eval[st.ie, i] = v
        st.ie += 1


@inlined
def start(st, run):
    """Everything before the first step: delays, outputs at ``t0``, modes, the first step size."""
    md, rk, fw, hs, sw, mk, dc, out = run
    for i in range(sw.y.shape[0]):
        fw.xe[i] = sw.y[i]
    _delays_and_marks(st, md, fw, dc)
    while st.ie < out.t_eval.shape[0] and out.t_eval[st.ie] <= st.t:
        for i in range(sw.y.shape[0]):
            out.y_eval[st.ie, i] = sw.y[i]
        st.ie += 1
    if not eval_lags(st.t, sw.y, st, md, fw, hs):
        return False
    if not _initial_modes(st, md, fw, hs, sw):
        return False
    if st.h_first > 0.0:
        h = st.h_first
    else:
        h = initial_step(st, md, fw, hs, sw)
        st.cause = ST_OK
        # the probe evaluation disturbed the start-point buffers: recompute them
        start_field(st.t, st, md, fw, hs, sw)
    st.h = min(h, st.h_max)
    remember_start(st, fw, mk)
    return True


@inlined
def event_now(st, run):
    """An event at the step's start: change the mode without stepping; False on failure."""
    md, rk, fw, hs, sw, mk, dc, out = run
    st.nzero += 1
    if st.nzero > _ZENO_LIMIT:
        st.cause = ST_ZENO
        st.index = st.ev_index
        st.fault_value = st.ev_type
        st.fault_time = st.t
        return False
    if not apply_event(st.ev_type, st.ev_index, st.t, st, md, fw, hs, sw):
        return False
    st.events += 1
    st.smooth_start = False
    remember_start(st, fw, mk)
    st.h = st.h_prop
    return True


@inlined
def commit(st, run):
    """Accept the step (cut at the event, if any): store its piece, write outputs, advance."""
    md, rk, fw, hs, sw, mk, dc, out = run
    cn, ynew, y = sw.cn, sw.ynew, sw.y
    n = y.shape[0]
    ncoef = cn.shape[1]
    th_end = 1.0
    if st.ev_type != EV_NONE and st.ev_theta < 1.0:
        th_end = st.ev_theta
        sc = 1.0
        for j in range(ncoef):
            for i in range(n):
                cn[i, j] *= sc
            sc *= th_end
        for i in range(n):
            ynew[i] = horner(cn[i], 1.0)
        st.land = False
        st.sd_m = -1
    t_new = st.t + th_end * st.h
    if st.land and th_end == 1.0:
        t_new = st.target
    if st.ev_type == EV_ARRIVE:
        i = st.ev_index
        cn[i, 2] -= ynew[i]
        ynew[i] = 0.0
    for i in range(n):
        if md.nonneg[i] == 1 and ynew[i] < 0.0:
            ynew[i] = 0.0
    nm = st.nm
    for i in range(n):
        for j in range(ncoef):
            hs.mc[nm, i, j] = cn[i, j]
    hs.mt[nm + 1] = t_new
    st.nm = nm + 1
    st.steps += 1
    for i in range(n):
        if fw.stuck[i] == 1:
            out.btime[i] += t_new - st.t
    for j in range(st.nsw):
        if fw.slide[j] == 1:
            # the equivalent control, averaged with the method's quadrature weights
            wbar = 0.0
            for s in range(rk.Q.shape[0]):
                wbar += rk.Q[s] * sw.lams[s, j]
            out.slide_time[j] += t_new - st.t
            out.slide_weight[j] += (t_new - st.t) * wbar
    _output(st, md, out, cn, t_new)
    st.t = t_new
    for i in range(n):
        y[i] = ynew[i]
    # lookups beyond the stored history are impossible now; keep cc harmless
    st.trial_t = t_new
    st.trial_h = 1.0
    for i in range(n):
        hs.cc[i, 0] = y[i]
        for j in range(1, ncoef):
            hs.cc[i, j] = 0.0


@inlined
def restart(st, run):
    """The start of the next step: the mode change of an event, or the last stage (FSAL)."""
    md, rk, fw, hs, sw, mk, dc, out = run
    t = st.t
    if st.ev_type != EV_NONE:
        if not apply_event(st.ev_type, st.ev_index, t, st, md, fw, hs, sw):
            return False
        st.events += 1
        st.smooth_start = False
        propagate_below(t, max(1, st.track_level - st.event_generations), st, md, dc)
    else:
        st.smooth_start = True
        if st.touched or not st.fsal:
            if not start_field(t, st, md, fw, hs, sw):
                return False
        else:
            last = rk.C.shape[0] - 1
            for i in range(sw.y.shape[0]):
                sw.K[0, i] = sw.K[last, i]
                sw.Kraw[0, i] = sw.Kraw[last, i]
            for j in range(st.nsw):
                fw.sv[j] = mk.sv1[j]
                fw.lam[j] = mk.lam1[j]
            for k in range(mk.largs0.shape[0]):
                fw.largs[k] = mk.largs1[k]
    remember_start(st, fw, mk)
    return True


@inlined
def _accept_trial(st, fw, hs, sw, mk):
    """The trial step passed: its dense output answers lookups inside the step from now on."""
    cn, cc = sw.cn, hs.cc
    for i in range(cn.shape[0]):
        for j in range(cn.shape[1]):
            cc[i, j] = cn[i, j]
    st.trial_t = st.t
    st.trial_h = st.h
    for j in range(st.nsw):
        mk.sv1[j] = fw.sv[j]
        mk.lam1[j] = fw.lam[j]
    for k in range(mk.largs1.shape[0]):
        mk.largs1[k] = fw.largs[k]
    st.touched = False  # dense evaluations clobbered the end-point buffers


@inlined
def _room(st, run):
    """Whether the mesh and the discontinuity lists can take one more step."""
    hs, dc = run.hs, run.dc
    nlag = run.md.lag_state.shape[0]
    return (
        st.nm + 1 < hs.mc.shape[0]
        and st.ndp + 3 * nlag + 1 <= dc.dp_t.shape[0]
        and st.ndw + 4 <= dc.dw_t.shape[0]
    )


@entry
def advance(st, run, budget):
    """Integrate until ``t_end``, a failure, or ``budget`` step attempts; returns ``st.status``.

    ``ST_PAUSED`` and ``ST_NEED_SPACE`` ask the caller to call again (after enlarging the
    arrays for the latter); the run resumes exactly where it stopped.
    """
    md, rk, fw, hs, sw, mk, dc, out = run
    if not st.started:
        st.started = True
        if not start(st, run):
            return fail(st, 0.0)
    attempts = 0
    while st.t < st.t_end:
        if attempts >= budget:
            st.status = ST_PAUSED
            return st.status
        if not _room(st, run):
            st.status = ST_NEED_SPACE
            return st.status
        attempts += 1
        if st.steps >= st.max_steps:
            st.cause = ST_MAX_STEPS
            return fail(st, st.h)
        propose_step(st, md, mk, dc)
        st.cause = ST_OK
        iterations = st.iterations
        for j in range(st.nsw):
            sw.svs[0, j] = mk.sv0[j]
            sw.lams[0, j] = mk.lam0[j]
        st.err = attempt(st, rk, md, fw, hs, sw)
        if not st.err <= 1.0:
            if not rejected_step(st):
                return fail(st, st.h)
            continue
        st.last_cause = ST_OK
        if st.rate >= 0.0:
            st.k_est = 0.7 * st.k_est + 0.3 * (st.iterations - iterations)
        _accept_trial(st, fw, hs, sw, mk)
        crossing = sdep_crossings(st, md, fw, hs, sw, mk, dc)
        if crossing == SD_REDO or crossing == SD_AT_START:
            st.cause = ST_OK
            continue
        find_events(st, rk, md, fw, hs, sw)
        if st.ev_type != EV_NONE and st.ev_theta * st.h <= st.hmin:
            if not event_now(st, run):
                return fail(st, st.h)
            continue
        st.nzero = 0
        t_old = st.t
        h = st.h
        commit(st, run)
        if not restart(st, run):
            return fail(st, h)
        landed(st, md, dc, st.land and st.target_disc >= 0 and st.t == st.target)
        next_step(st, h)
        if not st.t > t_old:
            st.cause = ST_UNDERFLOW
            return fail(st, st.h)
    st.status = ST_OK
    return st.status
