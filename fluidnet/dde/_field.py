"""Compiled evaluation of a model's vector field at one time and state.

``feval`` computes the lagged values (delays in order, each looked up in the history), then the
right-hand side in the current *mode*: projected states held at 0 contribute 0, switching terms
take their mode weights, and on switching surfaces where the solution slides the field is the
Filippov convex combination of the fields on both sides, with weights chosen so the solution
stays on the surfaces (the rules are in the docstring of :mod:`fluidnet.dde`).

Argument bundles (tuples, so the many arrays travel together):

``md`` = (fn, p, lag_state, lag_sdep, nonneg, hstart, sw_lagdep, tauc)
    model: function addresses, parameters, static integer facts, the start of each state's
    history and the values of the constant and parameter delays (filled by the integrator).
``bf`` = (z, largs, w, lam, sv, zdot, kbuf, xe, G, corners, J, vbuf)
    float work buffers: lag values and arguments, mode weights, sliding weights, switch values,
    lag derivatives, delay-index buffer, clamped state, switch gradients, corner fields, and
    the Newton matrix and vectors of the multi-surface sliding weights.
``ib`` = (hints, slide, stuck, fl, cnt, sl)
    integer buffers: lookup hints, sliding flags, stuck flags, flags, counters, indices of the
    sliding surfaces.

Everything here runs without numba's reference counting (``_nrt=False``): it allocates
nothing, which keeps the hot path free of atomic reference-count traffic.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ._codes import (
    C_FEV,
    FL_CAUSE,
    FL_INDEX,
    FN_DELAY,
    FN_RHS,
    FN_SGRAD,
    FN_SWITCH,
    ST_NEG_DELAY,
    ST_NONFINITE,
    ST_NONFINITE_DELAY,
    ST_OK,
)
from ._ffi import call_model
from ._history import lookup, lookup_deriv

_NEG_DELAY_TOL = 1e-12


@njit(cache=True, nogil=True, _nrt=False, inline="always")
def eval_lags(t, x, md, bf, ib, mt, mc, nm, cc, tc, fe):
    """Lag arguments ``largs[k] = t - tau_k`` and values ``z[k]``; False on failure."""
    fn, p, lag_state, lag_sdep, nonneg, hstart, sw_lagdep, tauc = md
    z, largs, w, lam, sv, zdot, kbuf, xe, G, corners, J, vbuf = bf
    hints, slide, stuck, fl, cnt, sl = ib
    for k in range(lag_state.shape[0]):
        if lag_sdep[k] == 0:
            # constant and parameter delays were evaluated once, at the start
            s = t - tauc[k]
            largs[k] = s
            z[k] = lookup(lag_state[k], s, mt, mc, nm, cc, tc, hstart, nonneg, hints, k, fl)
            if fl[FL_CAUSE] != ST_OK:
                fe[0] = s
                fe[1] = t
                return False
            continue
        kbuf[0] = k
        call_model(fn[FN_DELAY], t, x, z, p, w, kbuf, kbuf)
        tau = kbuf[0]
        if not math.isfinite(tau):
            fl[FL_CAUSE] = ST_NONFINITE_DELAY
            fl[FL_INDEX] = k
            fe[0] = tau
            fe[1] = t
            return False
        if tau < 0.0:
            if tau > -_NEG_DELAY_TOL * max(1.0, abs(t)):
                tau = 0.0
            else:
                fl[FL_CAUSE] = ST_NEG_DELAY
                fl[FL_INDEX] = k
                fe[0] = tau
                fe[1] = t
                return False
        s = t - tau
        largs[k] = s
        z[k] = lookup(lag_state[k], s, mt, mc, nm, cc, tc, hstart, nonneg, hints, k, fl)
        if fl[FL_CAUSE] != ST_OK:
            fe[0] = s
            fe[1] = t
            return False
    return True


@njit(cache=True, nogil=True, _nrt=False)
def _solve_small(J, r, m):
    """Solve ``J d = r`` in place (Gaussian elimination, partial pivoting); False if singular."""
    for col in range(m):
        piv = col
        for row in range(col + 1, m):
            if abs(J[row, col]) > abs(J[piv, col]):
                piv = row
        if J[piv, col] == 0.0 or not math.isfinite(J[piv, col]):
            return False
        if piv != col:
            for c in range(m):
                J[col, c], J[piv, c] = J[piv, c], J[col, c]
            r[col], r[piv] = r[piv], r[col]
        for row in range(col + 1, m):
            fac = J[row, col] / J[col, col]
            for c in range(col, m):
                J[row, c] -= fac * J[col, c]
            r[row] -= fac * r[col]
    for row in range(m - 1, -1, -1):
        acc = r[row]
        for c in range(row + 1, m):
            acc -= J[row, c] * r[c]
        r[row] = acc / J[row, row]
    return True


@njit(cache=True, nogil=True, _nrt=False)
def _corner_weight(c, lam_s, nsl, skip):
    """Multilinear weight of corner ``c`` (bit b set: side + of surface b); ``skip``: omit b."""
    phi = 1.0
    for b in range(nsl):
        if b == skip:
            continue
        if (c >> b) & 1:
            phi *= lam_s[b]
        else:
            phi *= 1.0 - lam_s[b]
    return phi


@njit(cache=True, nogil=True, _nrt=False)
def switch_gradients(t, x, md, bf, ib, mt, mc, nm, cc, tc):
    """``G[j*(n+1) + i] = ds_j/dx_i`` and ``G[j*(n+1) + n]`` = the rest of ``ds_j/dt``."""
    fn, p, lag_state, lag_sdep, nonneg, hstart, sw_lagdep, tauc = md
    z, largs, w, lam, sv, zdot, kbuf, xe, G, corners, J, vbuf = bf
    hints, slide, stuck, fl, cnt, sl = ib
    need = False
    for j in range(sw_lagdep.shape[0]):
        if sw_lagdep[j] == 1:
            need = True
    if need:
        for k in range(lag_state.shape[0]):
            zdot[k] = lookup_deriv(lag_state[k], largs[k], mt, mc, nm, cc, tc, hints, k)
    call_model(fn[FN_SGRAD], t, x, z, p, w, zdot, G)


@njit(cache=True, nogil=True, _nrt=False)
def _filippov(t, x, f, md, bf, ib, mt, mc, nm, cc, tc):
    """Filippov field on the intersection of the sliding surfaces (multilinear weights)."""
    fn, p, lag_state, lag_sdep, nonneg, hstart, sw_lagdep, tauc = md
    z, largs, w, lam, sv, zdot, kbuf, xe, G, corners, J, vbuf = bf
    hints, slide, stuck, fl, cnt, sl = ib
    n = x.shape[0]
    nsw = slide.shape[0]
    nsl = np.int64(0)
    for j in range(nsw):
        if slide[j] == 1:
            sl[nsl] = j
            nsl += 1
    ncorner = 1 << nsl
    for c in range(ncorner):
        for b in range(nsl):
            w[sl[b]] = 1.0 if (c >> b) & 1 else 0.0
        call_model(fn[FN_RHS], t, x, z, p, w, kbuf, corners[c])
    cnt[C_FEV] += ncorner
    for b in range(nsl):
        w[sl[b]] = lam[sl[b]]
    switch_gradients(t, x, md, bf, ib, mt, mc, nm, cc, tc)
    width = n + 1
    # states held at 0 do not move: the weights must keep ds/dt = 0 for the projected field
    for b in range(nsl):
        for i in range(n):
            if stuck[i] == 1:
                G[sl[b] * width + i] = 0.0
    lam_s = vbuf[:nsl]
    r = vbuf[nsw : nsw + nsl]
    fl_ = vbuf[2 * nsw : 2 * nsw + n]
    for b in range(nsl):
        lam_s[b] = lam[sl[b]]
    if nsl == 1:
        row = sl[0] * width
        sm = G[row + n]
        sp = G[row + n]
        for i in range(n):
            sm += G[row + i] * corners[0, i]
            sp += G[row + i] * corners[1, i]
        den = sm - sp
        if den != 0.0 and math.isfinite(den):
            lam_s[0] = sm / den
    else:
        for b in range(nsl):
            lam_s[b] = min(1.0, max(0.0, lam_s[b]))
        for _ in range(30):
            for i in range(n):
                fl_[i] = 0.0
            for c in range(ncorner):
                phi = _corner_weight(c, lam_s, nsl, np.int64(-1))
                for i in range(n):
                    fl_[i] += phi * corners[c, i]
            for a in range(nsl):
                row = sl[a] * width
                acc = G[row + n]
                for i in range(n):
                    acc += G[row + i] * fl_[i]
                r[a] = -acc
                for b in range(nsl):
                    dsum = 0.0
                    for c in range(ncorner):
                        dphi = _corner_weight(c, lam_s, nsl, b)
                        if not (c >> b) & 1:
                            dphi = -dphi
                        gf = 0.0
                        for i in range(n):
                            gf += G[row + i] * corners[c, i]
                        dsum += dphi * gf
                    J[a, b] = dsum
            if not _solve_small(J, r, nsl):
                break
            step = 0.0
            for b in range(nsl):
                lam_s[b] += r[b]
                step = max(step, abs(r[b]))
            if step < 1e-14:
                break
    for i in range(n):
        f[i] = 0.0
    for c in range(ncorner):
        phi = _corner_weight(c, lam_s, nsl, np.int64(-1))
        for i in range(n):
            f[i] += phi * corners[c, i]
    for b in range(nsl):
        lam[sl[b]] = lam_s[b]
        w[sl[b]] = lam_s[b]


@njit(cache=True, nogil=True, _nrt=False, inline="always")
def _field_core(t, x, f, md, bf, ib, mt, mc, nm, cc, tc, fe, nsliding):
    fn, p, lag_state, lag_sdep, nonneg, hstart, sw_lagdep, tauc = md
    z, largs, w, lam, sv, zdot, kbuf, xe, G, corners, J, vbuf = bf
    hints, slide, stuck, fl, cnt, sl = ib
    if not eval_lags(t, x, md, bf, ib, mt, mc, nm, cc, tc, fe):
        return False
    if nsliding == 0:
        call_model(fn[FN_RHS], t, x, z, p, w, kbuf, f)
        cnt[C_FEV] += 1
    else:
        _filippov(t, x, f, md, bf, ib, mt, mc, nm, cc, tc)
    return True


def _feval(t, x, f, fraw, md, bf, ib, mt, mc, nm, cc, tc, fe):
    """The projected field ``f`` and the unprojected one ``fraw`` at ``(t, x)``; False on failure.

    Also leaves the lag values/arguments of this point in ``z``/``largs`` and, for models with
    switches, the switching function values in ``sv``.
    """
    fn, p, lag_state, lag_sdep, nonneg, hstart, sw_lagdep, tauc = md
    z, largs, w, lam, sv, zdot, kbuf, xe, G, corners, J, vbuf = bf
    hints, slide, stuck, fl, cnt, sl = ib
    n = x.shape[0]
    nsliding = 0
    for j in range(slide.shape[0]):
        nsliding += slide[j]
    if not _field_core(t, x, f, md, bf, ib, mt, mc, nm, cc, tc, fe, nsliding):
        return False
    finite = True
    for i in range(n):
        if not math.isfinite(f[i]):
            finite = False
    if not finite:
        # a projected state overshooting below 0 inside a trial step: evaluate at the boundary
        clamp = False
        for i in range(n):
            xe[i] = x[i]
            if nonneg[i] == 1 and x[i] < 0.0:
                xe[i] = 0.0
                clamp = True
        if clamp:
            if not _field_core(t, xe, f, md, bf, ib, mt, mc, nm, cc, tc, fe, nsliding):
                return False
        for i in range(n):
            if not math.isfinite(f[i]):
                fl[FL_CAUSE] = ST_NONFINITE
                fl[FL_INDEX] = i
                fe[0] = f[i]
                fe[1] = t
                return False
    for i in range(n):
        fraw[i] = f[i]
        if stuck[i] == 1:
            f[i] = 0.0
    if sw_lagdep.shape[0] > 0:
        call_model(fn[FN_SWITCH], t, x, z, p, w, kbuf, sv)
    return True


#: The field, compiled as a function (for the many cold call sites) ...
feval = njit(cache=True, nogil=True, _nrt=False)(_feval)
#: ... and inlined into the step attempt, the hot path (one call site).
feval_inline = njit(cache=True, nogil=True, _nrt=False, inline="always")(_feval)
