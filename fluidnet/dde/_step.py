"""One step of an embedded Runge-Kutta pair, with lags that may fall inside the step.

``attempt`` computes the stages of the method given as data (``rk``: tableau ``A, B, C``, error
weights ``E``, dense-output matrix ``P``, and for a linearly implicit method the coupling ``G``
of its stages through ``W = I - gamma h J``); lagged values beyond the stored history come from
the step's own continuous extension ``hs.cc`` (first guess: ``predictor``), and the stages are
iterated until that extension reproduces itself (or the step's end value stops moving, at the
observed contraction rate). Returns the scaled local error estimate.
"""

from __future__ import annotations

import math

import numpy as np

from ._codes import ST_ITERATION, ST_NONFINITE
from ._ffi import call_model
from ._field import feval
from ._jit import inlined, kernel

_MAXIT = 12  # fixed-point iterations for lags inside the step
_ITER_TOL = 1e-2  # interpolant self-consistency, in units of the error tolerance
_ITER_TOL_Y = 0.2  # estimated remaining iteration error of the step's end value


@kernel
def rms(v, y0, y1, rtol, atol):
    """RMS of ``v`` in units of ``atol + rtol max(|y0|, |y1|)`` (inf if not finite)."""
    acc = 0.0
    n = v.shape[0]
    for i in range(n):
        sc = atol[i] + rtol * max(abs(y0[i]), abs(y1[i]))
        r = v[i] / sc
        acc += r * r
    res = math.sqrt(acc / n)
    return res if math.isfinite(res) else np.inf


@inlined
def combine(W, m, K, h, y, out):
    """``out = y + h * sum_s W[s] K[s]`` over the stages ``s < m``."""
    for i in range(y.shape[0]):
        acc = 0.0
        for s in range(m):
            acc += W[s] * K[s, i]
        out[i] = y[i] + h * acc


@inlined
def dense_coefficients(P, K, h, y, cn):
    """Power-basis coefficients of the step's continuous extension: ``y + h (K.T @ P) theta``."""
    S = P.shape[0]
    for i in range(y.shape[0]):
        cn[i, 0] = y[i]
        for j in range(P.shape[1]):
            acc = 0.0
            for s in range(S):
                acc += P[s, j] * K[s, i]
            cn[i, j + 1] = h * acc


@inlined
def predictor(st, sw, hs, extrapolate):
    """First guess of the step's dense output, for lags that fall inside the step.

    The previous step's polynomial continued past its end when ``extrapolate`` (smooth
    continuation, no mode change at ``t``), else the Euler line ``y + theta h f``.
    """
    y, cc, mc = sw.y, hs.cc, hs.mc
    n = y.shape[0]
    ncoef = cc.shape[1]
    nm = st.nm
    if extrapolate and nm > st.nh:
        r = st.h / (hs.mt[nm] - hs.mt[nm - 1])
        for i in range(n):
            # q(theta) = p(1 + r theta): Taylor shift of the power basis
            rk = 1.0
            for k in range(ncoef):
                acc = 0.0
                binom = 1.0
                for m in range(k, ncoef):
                    acc += binom * mc[nm - 1, i, m]
                    binom = binom * (m + 1) / (m + 1 - k)
                cc[i, k] = acc * rk
                rk *= r
            cc[i, 0] = y[i]
    else:
        for i in range(n):
            cc[i, 0] = y[i]
            cc[i, 1] = st.h * sw.K[0, i]
            for j in range(2, ncoef):
                cc[i, j] = 0.0


@inlined
def _poly_gap(cn, cc, y0, y1, rtol, atol):
    """RMS over states of a bound on ``max_theta |cn(theta) - cc(theta)|`` in tolerance units."""
    n = cn.shape[0]
    acc = 0.0
    for i in range(n):
        d = 0.0
        for j in range(cn.shape[1]):
            d += abs(cn[i, j] - cc[i, j])
        r = d / (atol[i] + rtol * max(abs(y0[i]), abs(y1[i])))
        acc += r * r
    return math.sqrt(acc / n)


@kernel
def factor_iteration_matrix(t, x, gh, st, md, fw, sw):
    """``sw.lu``, ``sw.piv``: LU factors (partial pivoting) of ``W = I - gh J``, ``J`` the
    model's Jacobian at ``(t, x)`` with the lag values in ``fw.z`` and the current mode, and in
    column ``n`` the field's time derivative (rows in their original order); rows of held
    states are those of ``I`` (their stages stay 0). False when ``W`` is singular or
    not finite (cause in ``st``)."""
    W, piv = sw.lu, sw.piv
    n = x.shape[0]
    call_model(md.jac, t, x, fw.z, md.p, fw.w, fw.kbuf, W)  # J and df/dt (column n)
    for i in range(n):
        for j in range(n + 1):
            jij = 0.0 if fw.stuck[i] == 1 else W[i, j]
            W[i, j] = ((1.0 if i == j else 0.0) - gh * jij) if j < n else jij
    for k in range(n):
        p = k
        big = abs(W[k, k])
        for i in range(k + 1, n):
            if abs(W[i, k]) > big:
                big = abs(W[i, k])
                p = i
        piv[k] = p
        if not (big > 0.0 and math.isfinite(big)):
            st.cause = ST_NONFINITE
            st.index = k
            st.fault_value = big
            st.fault_time = t
            return False
        if p != k:
            for j in range(n):
                tmp = W[k, j]
                W[k, j] = W[p, j]
                W[p, j] = tmp
        for i in range(k + 1, n):
            m = W[i, k] / W[k, k]
            W[i, k] = m
            for j in range(k + 1, n):
                W[i, j] -= m * W[k, j]
    return True


@inlined
def lu_solve(W, piv, b):
    """Solve ``W x = b`` in place from the factors of :func:`factor_iteration_matrix`."""
    n = b.shape[0]
    for k in range(n):
        p = piv[k]
        if p != k:
            tmp = b[k]
            b[k] = b[p]
            b[p] = tmp
    for i in range(n):
        acc = b[i]
        for j in range(i):
            acc -= W[i, j] * b[j]
        b[i] = acc
    for i in range(n - 1, -1, -1):
        acc = b[i]
        for j in range(i + 1, n):
            acc -= W[i, j] * b[j]
        b[i] = acc / W[i, i]


@inlined
def _stages(st, rk, md, fw, hs, sw):
    """Stages ``1..S-1`` (stage 0 is the field at the start); False on a failed evaluation.

    ``sw.svs[s]`` and ``sw.lams[s]`` receive the switching-function values and sliding weights
    at stage ``s`` (row 0 holds the start values). A linearly implicit stage (``G[s, s] > 0``)
    is ``K_s = W^{-1} (f_s + sum_{j<s} G[s, j] K_j + T_s h f_t)`` with ``W = I - G[s, s] h J``,
    factored once per attempt at the first such stage.
    """
    t, h = st.t, st.h
    A, G = rk.A, rk.G
    n = sw.y.shape[0]
    for s in range(1, rk.C.shape[0]):
        combine(A[s], s, sw.K, h, sw.y, sw.ytmp)
        ts = t + rk.C[s] * h
        if not feval(ts, sw.ytmp, sw.K[s], sw.Kraw[s], st, md, fw, hs):
            return False
        for j in range(sw.svs.shape[1]):
            sw.svs[s, j] = fw.sv[j]
            sw.lams[s, j] = fw.lam[j]
        if G[s, s] > 0.0:
            if st.lu_h != h:
                if not factor_iteration_matrix(ts, sw.ytmp, G[s, s] * h, st, md, fw, sw):
                    return False
                st.lu_h = h
            for i in range(n):
                acc = sw.K[s, i] + rk.T[s] * h * sw.lu[i, n]
                for j in range(s):
                    acc += G[s, j] * sw.K[j, i]
                sw.K[s, i] = acc
            lu_solve(sw.lu, sw.piv, sw.K[s])
    return True


@inlined
def attempt(st, rk, md, fw, hs, sw):
    """One trial step of size ``st.h`` from ``(st.t, sw.y)``: stages, ``sw.ynew``, ``sw.cn``.

    Returns the scaled error norm (inf on failure, cause in ``st.cause``). ``st.rate`` is the
    contraction rate of the lag iteration (-1 when no lag fell inside the step).
    """
    y, ynew, cn, cc = sw.y, sw.ynew, sw.cn, hs.cc
    n = y.shape[0]
    h = st.h
    predictor(st, sw, hs, st.smooth_start)
    st.lu_h = -1.0  # a linearly implicit method factors W again for this attempt
    st.trial_t = st.t
    st.trial_h = h
    st.rate = -1.0
    converged = False
    gap_prev = 0.0
    for it in range(_MAXIT):
        st.future = False
        if not _stages(st, rk, md, fw, hs, sw):
            return np.inf
        combine(rk.B, rk.B.shape[0], sw.K, h, y, ynew)
        for i in range(n):
            if not math.isfinite(ynew[i]):
                st.cause = ST_NONFINITE
                st.index = i
                st.fault_value = ynew[i]
                st.fault_time = st.t + h
                return np.inf
        dense_coefficients(rk.P, sw.K, h, y, cn)
        if not st.future:
            converged = True
            break
        # The stages read the step's own interpolant cc. Done when cc reproduces itself, or
        # when the end value moved so little that, at the observed contraction rate, the
        # remaining iteration error is a small fraction of the error tolerance.
        gap = _poly_gap(cn, cc, y, ynew, st.rtol, sw.atol)
        if gap <= _ITER_TOL:
            converged = True
            st.rate = max(st.rate, 0.0)
            break
        if it > 0:
            rate = gap / gap_prev if gap_prev > 0.0 else 1.0
            st.rate = rate
            if rate >= 1.0 or (it >= 3 and rate > 0.9):
                break  # diverging or stalling: a shorter step will do better
            for i in range(n):
                sw.etmp[i] = ynew[i] - sw.yprev[i]
            change = rms(sw.etmp, y, ynew, st.rtol, sw.atol)
            if change * rate / (1.0 - rate) <= _ITER_TOL_Y:
                converged = True
                break
        gap_prev = gap
        st.iterations += 1
        for i in range(n):
            sw.yprev[i] = ynew[i]
            for j in range(cn.shape[1]):
                cc[i, j] = cn[i, j]
    if not converged:
        st.cause = ST_ITERATION
        st.rate = 1.0
        return np.inf
    for i in range(n):
        acc = 0.0
        for s in range(rk.E.shape[0]):
            acc += rk.E[s] * sw.K[s, i]
        sw.etmp[i] = h * acc
    return rms(sw.etmp, y, ynew, st.rtol, sw.atol)
