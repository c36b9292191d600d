"""Compiled evaluation of a model's vector field at one time and state.

``feval`` computes the lagged values (delays in order, each looked up in the history), then the
right-hand side in the current *mode*: projected states held at 0 contribute 0, switching terms
take their mode weights, and on switching surfaces where the solution slides the field is the
Filippov convex combination of the fields on both sides, with weights chosen so the solution
stays on the surfaces (the rules are in the docstring of :mod:`fluidnet.dde`).

The arguments are the run's named groups (see :mod:`fluidnet.dde._state`): ``st`` the scalar
state record, ``md`` the model, ``fw`` the field's work arrays and modes, ``hs`` the history.
Everything here runs without numba's reference counting (``_nrt=False``): it allocates nothing.
"""

from __future__ import annotations

import math

import numpy as np

from ._codes import ST_NEG_DELAY, ST_NO_SLIDING, ST_NONFINITE, ST_NONFINITE_DELAY, ST_OK
from ._ffi import call_model
from ._history import lookup, lookup_deriv
from ._jit import inlined, kernel

_NEG_DELAY_TOL = 1e-12


@inlined
def lag_delay(k, t, x, md, fw):
    """Delay of lag ``k`` at ``(t, x)`` (the lags before ``k`` already in ``fw.z``)."""
    if md.lag_sdep[k] == 0:
        # constant and parameter delays were evaluated once, at the start
        return md.tauc[k]
    fw.kbuf[0] = k
    call_model(md.delay, t, x, fw.z, md.p, fw.w, fw.kbuf, fw.kbuf)
    return fw.kbuf[0]


@kernel
def eval_lags(t, x, st, md, fw, hs):
    """Lag arguments ``largs[k] = t - tau_k`` and values ``z[k]``; False on failure."""
    for k in range(md.lag_state.shape[0]):
        tau = lag_delay(k, t, x, md, fw)
        if md.lag_sdep[k] == 1:
            if not math.isfinite(tau) or tau <= -_NEG_DELAY_TOL * max(1.0, abs(t)):
                st.cause = ST_NONFINITE_DELAY if not math.isfinite(tau) else ST_NEG_DELAY
                st.index = k
                st.fault_value = tau
                st.fault_time = t
                return False
            tau = max(tau, 0.0)
            if tau > st.max_delay:
                st.max_delay = tau
        s = t - tau
        fw.largs[k] = s
        fw.z[k] = lookup(md.lag_state[k], s, k, st, md, fw, hs)
        if st.cause != ST_OK:
            st.fault_value = s
            st.fault_time = t
            return False
    return True


@kernel
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


@kernel
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


@kernel
def _combination(corners, lam_s, nsl, out):
    """The multilinear convex combination of the corner fields with weights ``lam_s``."""
    for i in range(out.shape[0]):
        out[i] = 0.0
    for c in range(1 << nsl):
        phi = _corner_weight(c, lam_s, nsl, np.int64(-1))
        for i in range(out.shape[0]):
            out[i] += phi * corners[c, i]


@kernel
def switch_gradients(t, x, st, md, fw, hs):
    """``G[j*(n+1) + i] = ds_j/dx_i`` and ``G[j*(n+1) + n]`` = the rest of ``ds_j/dt``."""
    need = False
    for j in range(md.sw_lagdep.shape[0]):
        if md.sw_lagdep[j] == 1:
            need = True
    if need:
        for k in range(md.lag_state.shape[0]):
            fw.zdot[k] = lookup_deriv(md.lag_state[k], fw.largs[k], k, st, fw, hs)
    call_model(md.sgrad, t, x, fw.z, md.p, fw.w, fw.zdot, fw.G)


@kernel
def _normal_residuals(corners, G, sl, nsl, n, lam_s, fl_, r, J, scale):
    """``r[a] = ds_a/dt`` along the multilinear combination with weights ``lam_s``, scaled.

    ``J[a, b] = dr_a / dlam_b``; ``scale[a]`` is the size of the normal components of the
    corner fields of surface ``a`` (the residuals are divided by it). Returns ``max |r|``.
    """
    width = n + 1
    _combination(corners, lam_s, nsl, fl_)
    worst = 0.0
    for a in range(nsl):
        row = sl[a] * width
        acc = G[row + n]
        for i in range(n):
            acc += G[row + i] * fl_[i]
        r[a] = acc / scale[a]
        worst = max(worst, abs(r[a]))
        for b in range(nsl):
            dsum = 0.0
            for c in range(1 << nsl):
                dphi = _corner_weight(c, lam_s, nsl, b)
                if not (c >> b) & 1:
                    dphi = -dphi
                gf = 0.0
                for i in range(n):
                    gf += G[row + i] * corners[c, i]
                dsum += dphi * gf
            J[a, b] = dsum / scale[a]
    return worst


@kernel
def independent_normals(G, sl, nsl, n, M):
    """Whether the gradients of the sliding surfaces are linearly independent (numerically)."""
    if nsl > n:
        return False
    width = n + 1
    big = 0.0
    for a in range(nsl):
        for i in range(n):
            M[a, i] = G[sl[a] * width + i]
            big = max(big, abs(M[a, i]))
    if big == 0.0 or not math.isfinite(big):
        return False
    tol = 1e-10 * big
    # Gaussian elimination with full column search: rank == nsl?
    for a in range(nsl):
        piv_r, piv_c, best = -1, -1, 0.0
        for rr in range(a, nsl):
            for cc in range(n):
                if abs(M[rr, cc]) > best:
                    best = abs(M[rr, cc])
                    piv_r, piv_c = rr, cc
        if best <= tol:
            return False
        for cc in range(n):
            M[a, cc], M[piv_r, cc] = M[piv_r, cc], M[a, cc]
        for rr in range(a + 1, nsl):
            fac = M[rr, piv_c] / M[a, piv_c]
            for cc in range(n):
                M[rr, cc] -= fac * M[a, cc]
    return True


#: Largest scaled normal velocity ``ds/dt`` (relative to the one-sided fields' normal
#: components) accepted from the weights of several sliding surfaces.
SLIDING_RESIDUAL = 1e-10


@kernel
def _box_least_squares(corners, G, sl, nsl, n, lam_s, fl_, r, J, scale, A, grad, trial):
    """Weights in [0, 1] minimizing ``|ds/dt|`` on the sliding surfaces; returns ``max |r|``.

    Levenberg-Marquardt with the damping ``mu = c |r|`` (quadratic convergence on consistent
    systems whose Jacobian is singular, as where more surfaces meet than the state has
    dimensions) and steps projected onto the box. Starts from ``lam_s`` (clamped).
    """
    for b in range(nsl):
        lam_s[b] = min(1.0, max(0.0, lam_s[b]))
    res = _normal_residuals(corners, G, sl, nsl, n, lam_s, fl_, r, J, scale)
    c = 1.0
    for _ in range(200):
        if res <= 1e-3 * SLIDING_RESIDUAL:
            break
        nr = 0.0
        for a in range(nsl):
            nr += r[a] * r[a]
        mu = c * math.sqrt(nr)
        for b in range(nsl):
            acc = 0.0
            for a in range(nsl):
                acc += J[a, b] * r[a]
            grad[b] = -acc
            for b2 in range(nsl):
                acc = 0.0
                for a in range(nsl):
                    acc += J[a, b] * J[a, b2]
                A[b, b2] = acc
            A[b, b] += mu
        if not _solve_small(A, grad, nsl):
            c *= 4.0
            continue
        moved = 0.0
        for b in range(nsl):
            trial[b] = lam_s[b]
            lam_s[b] = min(1.0, max(0.0, lam_s[b] + grad[b]))
            moved = max(moved, abs(lam_s[b] - trial[b]))
        new = _normal_residuals(corners, G, sl, nsl, n, lam_s, fl_, r, J, scale)
        if new < res:
            res = new
            c = max(c * 0.25, 1e-8)
        else:
            for b in range(nsl):
                lam_s[b] = trial[b]
            res = _normal_residuals(corners, G, sl, nsl, n, lam_s, fl_, r, J, scale)
            c *= 4.0
            if c > 1e12:
                break
        if moved == 0.0 and new >= res:
            break
    return res


@kernel
def _filippov(t, x, f, st, md, fw, hs):
    """Filippov field on the intersection of the sliding surfaces (multilinear weights).

    One surface: the equivalent control ``lam = sigma- / (sigma- - sigma+)``. When the normal
    components are such that no weight keeps ``ds/dt = 0`` (``sigma- <= sigma+``, e.g. both
    one-sided fields pushing the same way with equal normal components), ``lam`` is set outside
    [0, 1] on the side both fields push to, so the exit event fires, and the field keeps the
    last weight (clamped). Several surfaces: Newton's method on ``ds_j/dt = 0`` when the
    surfaces' normals are independent; otherwise (or if Newton fails) the weights in [0, 1]
    minimizing ``|ds/dt|`` (:func:`_box_least_squares`); when those cannot reach
    ``ds/dt = 0``, the surfaces whose weights are held at a bound are left (their exit events
    see a weight outside [0, 1]). Returns False, with cause ``ST_NO_SLIDING``, when no weights
    in [0, 1] keep the solution on the surfaces and none is held at a bound.
    """
    n = x.shape[0]
    slide, sl, w, lam, G, corners = fw.slide, fw.sl, fw.w, fw.lam, fw.G, fw.corners
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
        call_model(md.rhs, t, x, fw.z, md.p, w, fw.kbuf, corners[c])
    st.fev += ncorner
    for b in range(nsl):
        w[sl[b]] = lam[sl[b]]
    switch_gradients(t, x, st, md, fw, hs)
    width = n + 1
    # states held at 0 do not move: the weights must keep ds/dt = 0 for the projected field
    for b in range(nsl):
        for i in range(n):
            if fw.stuck[i] == 1:
                G[sl[b] * width + i] = 0.0
    vb = fw.vbuf
    lam_s = vb[:nsl]
    r = vb[nsw : nsw + nsl]
    fl_ = vb[2 * nsw : 2 * nsw + n]
    scale = vb[2 * nsw + n : 2 * nsw + n + nsl]
    grad = vb[3 * nsw + n : 3 * nsw + n + nsl]
    trial = vb[4 * nsw + n : 4 * nsw + n + nsl]
    J = fw.J
    for b in range(nsl):
        lam_s[b] = lam[sl[b]]
    lam_event = np.nan  # the weight the exit events see, when it differs from the field's
    if nsl == 1:
        row = sl[0] * width
        sm = G[row + n]
        sp = G[row + n]
        for i in range(n):
            sm += G[row + i] * corners[0, i]
            sp += G[row + i] * corners[1, i]
        den = sm - sp
        if den > 0.0 and math.isfinite(den):
            lam_s[0] = sm / den
        elif math.isfinite(den) and sm + sp != 0.0:
            # no equivalent control: leave toward the side both fields push to
            lam_event = 2.0 if sm + sp > 0.0 else -1.0
            lam_s[0] = min(1.0, max(0.0, lam_s[0]))
    else:
        for a in range(nsl):
            scale[a] = 1.0
        newton = independent_normals(G, sl, nsl, n, fw.M)
        if newton:
            for b in range(nsl):
                lam_s[b] = min(1.0, max(0.0, lam_s[b]))
                trial[b] = lam_s[b]
            for _ in range(30):
                _normal_residuals(corners, G, sl, nsl, n, lam_s, fl_, r, J, scale)
                for a in range(nsl):
                    r[a] = -r[a]
                if not _solve_small(J, r, nsl):
                    break
                step = 0.0
                for b in range(nsl):
                    lam_s[b] += r[b]
                    step = max(step, abs(r[b]))
                if not step >= 1e-14:
                    break
        # the residual relative to the size of the one-sided fields' normal components
        for a in range(nsl):
            row = sl[a] * width
            big = abs(G[row + n])
            for c in range(ncorner):
                gf = 0.0
                for i in range(n):
                    gf += abs(G[row + i] * corners[c, i])
                big = max(big, gf)
            scale[a] = big if big > 0.0 and math.isfinite(big) else 1.0
        if newton:
            res = _normal_residuals(corners, G, sl, nsl, n, lam_s, fl_, r, J, scale)
            newton = res <= SLIDING_RESIDUAL
            if not newton:
                for b in range(nsl):
                    lam_s[b] = trial[b]
        if not newton:
            res = _box_least_squares(
                corners, G, sl, nsl, n, lam_s, fl_, r, J, scale, fw.M, grad, trial
            )
            if not res <= SLIDING_RESIDUAL:
                # weights held at a bound while ds/dt != 0: those surfaces are left, to the
                # side of their bound (the exit events fire); none: the motion is undefined
                exits = 0
                for b in range(nsl):
                    if lam_s[b] == 0.0:
                        trial[b] = -1.0
                        exits += 1
                    elif lam_s[b] == 1.0:
                        trial[b] = 2.0
                        exits += 1
                    else:
                        trial[b] = lam_s[b]
                if exits > 0:
                    _combination(corners, lam_s, nsl, f)
                    for b in range(nsl):
                        w[sl[b]] = lam_s[b]
                        lam[sl[b]] = trial[b]
                    return True
                mask = np.int64(0)
                for b in range(nsl):
                    if sl[b] < 62:
                        mask |= np.int64(1) << sl[b]
                st.cause = ST_NO_SLIDING
                st.index = mask
                st.fault_value = res
                st.fault_time = t
                return False
    _combination(corners, lam_s, nsl, f)
    for b in range(nsl):
        lam[sl[b]] = lam_s[b]
        w[sl[b]] = lam_s[b]
    if nsl == 1 and not math.isnan(lam_event):
        lam[sl[0]] = lam_event
    return True


@inlined
def _field_in_mode(t, x, f, st, md, fw, hs):
    """Lags, then the right-hand side in the current mode (Filippov while sliding)."""
    if not eval_lags(t, x, st, md, fw, hs):
        return False
    nsliding = 0
    for j in range(fw.slide.shape[0]):
        nsliding += fw.slide[j]
    if nsliding == 0:
        call_model(md.rhs, t, x, fw.z, md.p, fw.w, fw.kbuf, f)
        st.fev += 1
    elif not _filippov(t, x, f, st, md, fw, hs):
        return False
    return True


@kernel
def feval(t, x, f, fraw, st, md, fw, hs):
    """The projected field ``f`` and the unprojected one ``fraw`` at ``(t, x)``; False on failure.

    Also leaves the lag values/arguments of this point in ``fw.z``/``fw.largs`` and, for models
    with switches, the switching function values in ``fw.sv``.
    """
    n = x.shape[0]
    if not _field_in_mode(t, x, f, st, md, fw, hs):
        return False
    finite = True
    for i in range(n):
        if not math.isfinite(f[i]):
            finite = False
    if not finite:
        # a projected state overshooting below 0 inside a trial step: evaluate at the boundary
        clamp = False
        xe = fw.xe
        for i in range(n):
            xe[i] = x[i]
            if md.nonneg[i] == 1 and x[i] < 0.0:
                xe[i] = 0.0
                clamp = True
        if clamp and not _field_in_mode(t, xe, f, st, md, fw, hs):
            return False
        for i in range(n):
            if not math.isfinite(f[i]):
                st.cause = ST_NONFINITE
                st.index = i
                st.fault_value = f[i]
                st.fault_time = t
                return False
    for i in range(n):
        fraw[i] = f[i]
        if fw.stuck[i] == 1:
            f[i] = 0.0
    if md.sw_lagdep.shape[0] > 0:
        call_model(md.switch, t, x, fw.z, md.p, fw.w, fw.kbuf, fw.sv)
    return True
