"""One step of the embedded Runge-Kutta pair, with lags that may fall inside the step.

``attempt`` computes the stages; lagged values beyond the stored history come from the step's
own continuous extension ``cc`` (first guess: ``predictor``), and the stages are iterated until
that extension reproduces itself (or the step's end value stops moving, at the observed
contraction rate). Returns the scaled local error estimate.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ._codes import C_ITER, FL_CAUSE, FL_FUTURE, FL_INDEX, ST_ITERATION, ST_NONFINITE
from ._field import feval_inline
from ._tableaux import NCOEF

_MAXIT = 12  # fixed-point iterations for lags inside the step
_ITER_TOL = 1e-2  # interpolant self-consistency, in units of the error tolerance
_ITER_TOL_Y = 0.2  # estimated remaining iteration error of the step's end value


@njit(cache=True, nogil=True, _nrt=False)
def rms(v, y0, y1, rtol, atol):
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
def attempt(
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
            change = rms(etmp, y, ynew, rtol, atol)
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
    return rms(etmp, y, ynew, rtol, atol)
