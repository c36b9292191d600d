"""Step-size selection: the first step, the proposal for the next one, and the controller.

One controller serves accepted and rejected steps: ``h_new = h * step_factor(err, expo, cap)``
with ``expo = 1 / (error_order + 1)``; ``cap`` is the largest growth (``FACMAX`` after an
accepted step, 1 after a rejection, so a step that just failed does not grow).
"""

from __future__ import annotations

import math

import numpy as np

from ._codes import ST_ITERATION, ST_NONFINITE, ST_OK, ST_UNDERFLOW
from ._discontinuities import MERGE, next_landing
from ._field import feval
from ._jit import inlined
from ._step import rms

SAFETY = 0.9
FACMIN = 0.2
FACMAX = 5.0
_GROW_ITER = 2.0  # largest step growth when lags fell inside the step
_RATE_MAX = 0.5  # largest contraction rate of that iteration before steps are shortened
_HMIN_FAC = 64.0 * np.finfo(np.float64).eps


@inlined
def step_factor(err, expo, cap):
    """Factor on ``h`` for a scaled error ``err`` (finite), at most ``cap``."""
    if err == 0.0:
        return cap
    return min(cap, max(FACMIN, SAFETY * err ** (-expo)))


@inlined
def initial_step(st, md, fw, hs, sw):
    """First step size from the field at the start and an Euler probe (Hairer-Norsett-Wanner)."""
    y, K = sw.y, sw.K
    n = y.shape[0]
    t0 = st.t
    d0 = rms(y, y, y, st.rtol, sw.atol)
    d1 = rms(K[0], y, y, st.rtol, sw.atol)
    h0 = 1e-6 if (d0 < 1e-5 or d1 < 1e-5) else 0.01 * d0 / d1
    h0 = min(h0, st.h_max, st.t_end - t0)
    cc = hs.cc
    for i in range(n):
        sw.ytmp[i] = y[i] + h0 * K[0, i]
        cc[i, 0] = y[i]
        cc[i, 1] = h0 * K[0, i]
        for j in range(2, cc.shape[1]):
            cc[i, j] = 0.0
    st.trial_t = t0
    st.trial_h = h0
    if feval(t0 + h0, sw.ytmp, sw.fa, sw.fra, st, md, fw, hs):
        for i in range(n):
            sw.etmp[i] = (sw.fa[i] - K[0, i]) / h0
        d2 = rms(sw.etmp, y, y, st.rtol, sw.atol)
        mx = max(d1, d2)
        h1 = max(1e-6, h0 * 1e-3) if mx <= 1e-15 else (0.01 / mx) ** (1.0 / st.order)
        return min(100.0 * h0, h1)
    return h0


@inlined
def propose_step(st, md, mk, dc):
    """The next attempted step: at most ``h_max``, landing on the next discontinuity point.

    Sets ``st.h`` (the attempt), ``st.h_prop`` (what the controller asked for), ``st.land``
    (the step ends on ``st.target``), ``st.hmin`` and ``st.tol_m`` at the current time.
    """
    t = st.t
    st.hmin = _HMIN_FAC * max(1.0, abs(t))
    st.tol_m = MERGE * max(1.0, abs(t))
    next_landing(st, dc)
    h = min(st.h, st.h_max)
    # A step longer than a delay needs the iteration; a step capped at the smallest delay
    # needs none. Take the cheaper per unit time, judged by the recent iteration count.
    tau_min = np.inf
    for k in range(md.lag_state.shape[0]):
        tk = t - mk.largs0[k]
        if st.hmin < tk < tau_min:
            tau_min = tk
    if h > tau_min and (1.0 + st.k_est) * tau_min >= h:
        h = tau_min
    st.h_prop = h
    st.land = False
    if t + h >= st.target - st.hmin:
        h = st.target - t
        st.land = True
    elif t + 2.0 * h > st.target:
        h = 0.5 * (st.target - t)
    st.h = h


@inlined
def next_step(st, h_old):
    """After an accepted step of attempted size ``h_old``: the controller's next step size."""
    cap = 1.0 if st.rejected else FACMAX
    h_next = h_old * step_factor(st.err, st.expo, cap)
    if st.land and not st.rejected and st.h_prop > h_next:
        h_next = st.h_prop
    if st.rate >= 0.0:
        # lags inside the step: grow gently and keep the iteration contracting fast
        h_next = min(h_next, h_old * min(_GROW_ITER, _RATE_MAX / max(st.rate, 1e-12)))
    st.h = h_next
    st.rejected = False


@inlined
def rejected_step(st):
    """Shrink ``st.h`` after a failed attempt; False when it fell below ``st.hmin``.

    A failed evaluation (non-finite error) halves the step when the lag iteration did not
    converge and quarters it otherwise. The cause of the last failed evaluation is kept, so
    an underflow names it.
    """
    st.rejects += 1
    cause = st.cause
    if cause != ST_OK:
        st.last_cause = cause
        st.last_index = st.index
        st.last_value = st.fault_value
        st.last_time = st.fault_time
    elif not math.isfinite(st.err):
        st.last_cause = ST_NONFINITE
    if math.isfinite(st.err):
        st.h = st.h * step_factor(st.err, st.expo, 1.0)
    elif cause == ST_ITERATION:
        st.h = 0.5 * st.h
        st.k_est = max(st.k_est, 4.0)
    else:
        st.h = 0.25 * st.h
    st.rejected = True
    if st.h >= st.hmin:
        return True
    last = st.last_cause
    st.cause = last if last != ST_OK and last != ST_ITERATION else ST_UNDERFLOW
    st.index = st.last_index
    st.fault_value = st.last_value
    st.fault_time = st.last_time
    return False
