/* Evaluation of a model's vector field at one time and state.
 *
 * fn_feval computes the lagged values (delays in order, each looked up in the history), then
 * the right-hand side in the current mode: projected states held at 0 contribute 0, switching
 * terms take their mode weights, and on switching surfaces where the solution slides the field
 * is the Filippov convex combination of the fields on both sides, with weights chosen so the
 * solution stays on the surfaces (the rules are in the docstring of fluidnet.dde).
 */
#include "kernel.h"

#define NEG_DELAY_TOL 1e-12

/* Delay of lag k at (t, x) (the lags before k already in fw.z). */
static double lag_delay(int64_t k, double t, double *x, fn_run *r)
{
    if (r->md.lag_sdep[k] == 0) /* constant and parameter delays: evaluated at the start */
        return r->md.tauc[k];
    fn_field *fw = &r->fw;
    fw->kbuf[0] = (double)k;
    r->md.delay(t, x, fw->z, r->md.p, fw->w, fw->kbuf, fw->kbuf);
    return fw->kbuf[0];
}

/* Lag arguments largs[k] = t - tau_k and values z[k]; false on failure. */
bool fn_eval_lags(double t, double *x, fn_state *st, fn_run *r)
{
    fn_field *fw = &r->fw;
    for (int64_t k = 0; k < r->nlag; k++) {
        double tau = lag_delay(k, t, x, r);
        if (r->md.lag_sdep[k] == 1) {
            if (!isfinite(tau) || tau <= -NEG_DELAY_TOL * fn_max(1.0, fabs(t))) {
                st->cause = !isfinite(tau) ? ST_NONFINITE_DELAY : ST_NEG_DELAY;
                st->index = k;
                st->fault_value = tau;
                st->fault_time = t;
                return false;
            }
            tau = fn_max(tau, 0.0);
            if (tau > st->max_delay)
                st->max_delay = tau;
        }
        const double s = t - tau;
        fw->largs[k] = s;
        fw->z[k] = fn_lookup(r->md.lag_state[k], s, k, st, r);
        if (st->cause != ST_OK) {
            st->fault_value = s;
            st->fault_time = t;
            return false;
        }
    }
    return true;
}

/* Solve J d = r in place (Gaussian elimination, partial pivoting; J has row length ld);
 * false if singular. */
static bool solve_small(double *J, int64_t ld, double *rhs, int64_t m)
{
    for (int64_t col = 0; col < m; col++) {
        int64_t piv = col;
        for (int64_t row = col + 1; row < m; row++)
            if (fabs(J[row * ld + col]) > fabs(J[piv * ld + col]))
                piv = row;
        if (J[piv * ld + col] == 0.0 || !isfinite(J[piv * ld + col]))
            return false;
        if (piv != col) {
            for (int64_t c = 0; c < m; c++) {
                const double tmp = J[col * ld + c];
                J[col * ld + c] = J[piv * ld + c];
                J[piv * ld + c] = tmp;
            }
            const double tmp = rhs[col];
            rhs[col] = rhs[piv];
            rhs[piv] = tmp;
        }
        for (int64_t row = col + 1; row < m; row++) {
            const double fac = J[row * ld + col] / J[col * ld + col];
            for (int64_t c = col; c < m; c++)
                J[row * ld + c] -= fac * J[col * ld + c];
            rhs[row] -= fac * rhs[col];
        }
    }
    for (int64_t row = m - 1; row >= 0; row--) {
        double acc = rhs[row];
        for (int64_t c = row + 1; c < m; c++)
            acc -= J[row * ld + c] * rhs[c];
        rhs[row] = acc / J[row * ld + row];
    }
    return true;
}

/* Multilinear weight of corner c (bit b set: side + of surface b); skip: omit surface b. */
static double corner_weight(int64_t c, const double *lam_s, int64_t nsl, int64_t skip)
{
    double phi = 1.0;
    for (int64_t b = 0; b < nsl; b++) {
        if (b == skip)
            continue;
        if ((c >> b) & 1)
            phi *= lam_s[b];
        else
            phi *= 1.0 - lam_s[b];
    }
    return phi;
}

/* The multilinear convex combination of the corner fields with weights lam_s. */
static void combination(const double *corners, const double *lam_s, int64_t nsl, double *out,
                        int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        out[i] = 0.0;
    for (int64_t c = 0; c < ((int64_t)1 << nsl); c++) {
        const double phi = corner_weight(c, lam_s, nsl, -1);
        for (int64_t i = 0; i < n; i++)
            out[i] += phi * corners[c * n + i];
    }
}

/* G[j*(n+1) + i] = ds_j/dx_i and G[j*(n+1) + n] = the rest of ds_j/dt. */
void fn_switch_gradients(double t, double *x, fn_state *st, fn_run *r)
{
    fn_field *fw = &r->fw;
    bool need = false;
    for (int64_t j = 0; j < r->nsw; j++)
        if (r->md.sw_lagdep[j] == 1)
            need = true;
    if (need)
        for (int64_t k = 0; k < r->nlag; k++)
            fw->zdot[k] = fn_lookup_deriv(r->md.lag_state[k], fw->largs[k], k, st, r);
    r->md.sgrad(t, x, fw->z, r->md.p, fw->w, fw->zdot, fw->G);
}

/* r[a] = ds_a/dt along the multilinear combination with weights lam_s, scaled.
 *
 * J[a, b] = dr_a / dlam_b (row length ldj); scale[a] is the size of the normal components of
 * the corner fields of surface a (the residuals are divided by it). Returns max |r|. */
static double normal_residuals(const double *corners, const double *G, const int64_t *sl,
                               int64_t nsl, int64_t n, const double *lam_s, double *fl,
                               double *res, double *J, int64_t ldj, const double *scale)
{
    const int64_t width = n + 1;
    combination(corners, lam_s, nsl, fl, n);
    double worst = 0.0;
    for (int64_t a = 0; a < nsl; a++) {
        const int64_t row = sl[a] * width;
        double acc = G[row + n];
        for (int64_t i = 0; i < n; i++)
            acc += G[row + i] * fl[i];
        res[a] = acc / scale[a];
        worst = fn_max(worst, fabs(res[a]));
        for (int64_t b = 0; b < nsl; b++) {
            double dsum = 0.0;
            for (int64_t c = 0; c < ((int64_t)1 << nsl); c++) {
                double dphi = corner_weight(c, lam_s, nsl, b);
                if (!((c >> b) & 1))
                    dphi = -dphi;
                double gf = 0.0;
                for (int64_t i = 0; i < n; i++)
                    gf += G[row + i] * corners[c * n + i];
                dsum += dphi * gf;
            }
            J[a * ldj + b] = dsum / scale[a];
        }
    }
    return worst;
}

/* Whether the gradients of the sliding surfaces are linearly independent (numerically). */
bool fn_independent_normals(const double *G, const int64_t *sl, int64_t nsl, int64_t n,
                            double *M, int64_t mcols)
{
    if (nsl > n)
        return false;
    const int64_t width = n + 1;
    double big = 0.0;
    for (int64_t a = 0; a < nsl; a++)
        for (int64_t i = 0; i < n; i++) {
            M[a * mcols + i] = G[sl[a] * width + i];
            big = fn_max(big, fabs(M[a * mcols + i]));
        }
    if (big == 0.0 || !isfinite(big))
        return false;
    const double tol = 1e-10 * big;
    /* Gaussian elimination with full column search: rank == nsl? */
    for (int64_t a = 0; a < nsl; a++) {
        int64_t piv_r = -1, piv_c = -1;
        double best = 0.0;
        for (int64_t rr = a; rr < nsl; rr++)
            for (int64_t cc = 0; cc < n; cc++)
                if (fabs(M[rr * mcols + cc]) > best) {
                    best = fabs(M[rr * mcols + cc]);
                    piv_r = rr;
                    piv_c = cc;
                }
        if (best <= tol)
            return false;
        for (int64_t cc = 0; cc < n; cc++) {
            const double tmp = M[a * mcols + cc];
            M[a * mcols + cc] = M[piv_r * mcols + cc];
            M[piv_r * mcols + cc] = tmp;
        }
        for (int64_t rr = a + 1; rr < nsl; rr++) {
            const double fac = M[rr * mcols + piv_c] / M[a * mcols + piv_c];
            for (int64_t cc = 0; cc < n; cc++)
                M[rr * mcols + cc] -= fac * M[a * mcols + cc];
        }
    }
    return true;
}

/* Weights in [0, 1] minimizing |ds/dt| on the sliding surfaces; returns max |r|.
 *
 * Levenberg-Marquardt with the damping mu = c |r| (quadratic convergence on consistent
 * systems whose Jacobian is singular, as where more surfaces meet than the state has
 * dimensions) and steps projected onto the box. Starts from lam_s (clamped). The normal
 * matrix A has row length lda. */
static double box_least_squares(const double *corners, const double *G, const int64_t *sl,
                                int64_t nsl, int64_t n, double *lam_s, double *fl, double *res,
                                double *J, int64_t ldj, const double *scale, double *A,
                                int64_t lda, double *grad, double *trial)
{
    for (int64_t b = 0; b < nsl; b++)
        lam_s[b] = fn_min(1.0, fn_max(0.0, lam_s[b]));
    double worst = normal_residuals(corners, G, sl, nsl, n, lam_s, fl, res, J, ldj, scale);
    double c = 1.0;
    for (int iter = 0; iter < 200; iter++) {
        if (worst <= 1e-3 * SLIDING_RESIDUAL)
            break;
        double nr = 0.0;
        for (int64_t a = 0; a < nsl; a++)
            nr += res[a] * res[a];
        const double mu = c * sqrt(nr);
        for (int64_t b = 0; b < nsl; b++) {
            double acc = 0.0;
            for (int64_t a = 0; a < nsl; a++)
                acc += J[a * ldj + b] * res[a];
            grad[b] = -acc;
            for (int64_t b2 = 0; b2 < nsl; b2++) {
                acc = 0.0;
                for (int64_t a = 0; a < nsl; a++)
                    acc += J[a * ldj + b] * J[a * ldj + b2];
                A[b * lda + b2] = acc;
            }
            A[b * lda + b] += mu;
        }
        if (!solve_small(A, lda, grad, nsl)) {
            c *= 4.0;
            continue;
        }
        double moved = 0.0;
        for (int64_t b = 0; b < nsl; b++) {
            trial[b] = lam_s[b];
            lam_s[b] = fn_min(1.0, fn_max(0.0, lam_s[b] + grad[b]));
            moved = fn_max(moved, fabs(lam_s[b] - trial[b]));
        }
        const double fresh =
            normal_residuals(corners, G, sl, nsl, n, lam_s, fl, res, J, ldj, scale);
        if (fresh < worst) {
            worst = fresh;
            c = fn_max(c * 0.25, 1e-8);
        } else {
            for (int64_t b = 0; b < nsl; b++)
                lam_s[b] = trial[b];
            worst = normal_residuals(corners, G, sl, nsl, n, lam_s, fl, res, J, ldj, scale);
            c *= 4.0;
            if (c > 1e12)
                break;
        }
        if (moved == 0.0 && fresh >= worst)
            break;
    }
    return worst;
}

/* Filippov field on the intersection of the sliding surfaces (multilinear weights).
 *
 * One surface: the equivalent control lam = sigma- / (sigma- - sigma+). When the normal
 * components are such that no weight keeps ds/dt = 0 (sigma- <= sigma+, e.g. both one-sided
 * fields pushing the same way with equal normal components), lam is set outside [0, 1] on the
 * side both fields push to, so the exit event fires, and the field keeps the last weight
 * (clamped). Several surfaces: Newton's method on ds_j/dt = 0 when the surfaces' normals are
 * independent; otherwise (or if Newton fails) the weights in [0, 1] minimizing |ds/dt|
 * (box_least_squares); when those cannot reach ds/dt = 0, the surfaces whose weights are held
 * at a bound are left (their exit events see a weight outside [0, 1]). Returns false, with
 * cause ST_NO_SLIDING, when no weights in [0, 1] keep the solution on the surfaces and none is
 * held at a bound; with ST_TOO_MANY_SURFACES beyond MAX_SLIDING surfaces. */
static bool filippov(double t, double *x, double *f, fn_state *st, fn_run *r)
{
    fn_field *fw = &r->fw;
    const int64_t n = r->n, nsw = r->ns1, ldj = r->ns1, mcols = r->mcols;
    int64_t *slide = fw->slide, *sl = fw->sl;
    double *w = fw->w, *lam = fw->lam, *G = fw->G, *corners = fw->corners;
    int64_t nsl = 0;
    for (int64_t j = 0; j < nsw; j++)
        if (slide[j] == 1)
            sl[nsl++] = j;
    if (nsl > MAX_SLIDING || ((int64_t)1 << nsl) > r->ncorner) {
        st->cause = ST_TOO_MANY_SURFACES;
        st->index = nsl;
        st->fault_value = (double)nsl;
        st->fault_time = t;
        return false;
    }
    const int64_t ncorner = (int64_t)1 << nsl;
    for (int64_t c = 0; c < ncorner; c++) {
        for (int64_t b = 0; b < nsl; b++)
            w[sl[b]] = ((c >> b) & 1) ? 1.0 : 0.0;
        r->md.rhs(t, x, fw->z, r->md.p, w, fw->kbuf, corners + c * n);
    }
    st->fev += ncorner;
    for (int64_t b = 0; b < nsl; b++)
        w[sl[b]] = lam[sl[b]];
    fn_switch_gradients(t, x, st, r);
    const int64_t width = n + 1;
    /* states held at 0 do not move: the weights must keep ds/dt = 0 for the projected field */
    for (int64_t b = 0; b < nsl; b++)
        for (int64_t i = 0; i < n; i++)
            if (fw->stuck[i] == 1)
                G[sl[b] * width + i] = 0.0;
    double *vb = fw->vbuf;
    double *lam_s = vb;
    double *res = vb + nsw;
    double *fl = vb + 2 * nsw;
    double *scale = vb + 2 * nsw + n;
    double *grad = vb + 3 * nsw + n;
    double *trial = vb + 4 * nsw + n;
    double *J = fw->J;
    for (int64_t b = 0; b < nsl; b++)
        lam_s[b] = lam[sl[b]];
    double lam_event = NAN; /* the weight the exit events see, when it differs from the field's */
    if (nsl == 1) {
        const int64_t row = sl[0] * width;
        double sm = G[row + n];
        double sp = G[row + n];
        for (int64_t i = 0; i < n; i++) {
            sm += G[row + i] * corners[i];
            sp += G[row + i] * corners[n + i];
        }
        const double den = sm - sp;
        if (den > 0.0 && isfinite(den)) {
            lam_s[0] = sm / den;
        } else if (isfinite(den) && sm + sp != 0.0) {
            /* no equivalent control: leave toward the side both fields push to */
            lam_event = sm + sp > 0.0 ? 2.0 : -1.0;
            lam_s[0] = fn_min(1.0, fn_max(0.0, lam_s[0]));
        }
    } else {
        for (int64_t a = 0; a < nsl; a++)
            scale[a] = 1.0;
        bool newton = fn_independent_normals(G, sl, nsl, n, fw->M, mcols);
        if (newton) {
            for (int64_t b = 0; b < nsl; b++) {
                lam_s[b] = fn_min(1.0, fn_max(0.0, lam_s[b]));
                trial[b] = lam_s[b];
            }
            for (int iter = 0; iter < 30; iter++) {
                normal_residuals(corners, G, sl, nsl, n, lam_s, fl, res, J, ldj, scale);
                for (int64_t a = 0; a < nsl; a++)
                    res[a] = -res[a];
                if (!solve_small(J, ldj, res, nsl))
                    break;
                double step = 0.0;
                for (int64_t b = 0; b < nsl; b++) {
                    lam_s[b] += res[b];
                    step = fn_max(step, fabs(res[b]));
                }
                if (!(step >= 1e-14))
                    break;
            }
        }
        /* the residual relative to the size of the one-sided fields' normal components */
        for (int64_t a = 0; a < nsl; a++) {
            const int64_t row = sl[a] * width;
            double big = fabs(G[row + n]);
            for (int64_t c = 0; c < ncorner; c++) {
                double gf = 0.0;
                for (int64_t i = 0; i < n; i++)
                    gf += fabs(G[row + i] * corners[c * n + i]);
                big = fn_max(big, gf);
            }
            scale[a] = big > 0.0 && isfinite(big) ? big : 1.0;
        }
        if (newton) {
            const double worst =
                normal_residuals(corners, G, sl, nsl, n, lam_s, fl, res, J, ldj, scale);
            newton = worst <= SLIDING_RESIDUAL;
            if (!newton)
                for (int64_t b = 0; b < nsl; b++)
                    lam_s[b] = trial[b];
        }
        if (!newton) {
            const double worst = box_least_squares(corners, G, sl, nsl, n, lam_s, fl, res, J,
                                                   ldj, scale, fw->M, mcols, grad, trial);
            if (!(worst <= SLIDING_RESIDUAL)) {
                /* weights held at a bound while ds/dt != 0: those surfaces are left, to the
                   side of their bound (the exit events fire); none: the motion is undefined */
                int64_t exits = 0;
                for (int64_t b = 0; b < nsl; b++) {
                    if (lam_s[b] == 0.0) {
                        trial[b] = -1.0;
                        exits += 1;
                    } else if (lam_s[b] == 1.0) {
                        trial[b] = 2.0;
                        exits += 1;
                    } else {
                        trial[b] = lam_s[b];
                    }
                }
                if (exits > 0) {
                    combination(corners, lam_s, nsl, f, n);
                    for (int64_t b = 0; b < nsl; b++) {
                        w[sl[b]] = lam_s[b];
                        lam[sl[b]] = trial[b];
                    }
                    return true;
                }
                int64_t mask = 0;
                for (int64_t b = 0; b < nsl; b++)
                    if (sl[b] < 62)
                        mask |= (int64_t)1 << sl[b];
                st->cause = ST_NO_SLIDING;
                st->index = mask;
                st->fault_value = worst;
                st->fault_time = t;
                return false;
            }
        }
    }
    combination(corners, lam_s, nsl, f, n);
    for (int64_t b = 0; b < nsl; b++) {
        lam[sl[b]] = lam_s[b];
        w[sl[b]] = lam_s[b];
    }
    if (nsl == 1 && !isnan(lam_event))
        lam[sl[0]] = lam_event;
    return true;
}

/* Lags, then the right-hand side in the current mode (Filippov while sliding). */
static bool field_in_mode(double t, double *x, double *f, fn_state *st, fn_run *r)
{
    if (!fn_eval_lags(t, x, st, r))
        return false;
    int64_t nsliding = 0;
    for (int64_t j = 0; j < r->ns1; j++)
        nsliding += r->fw.slide[j];
    if (nsliding == 0) {
        r->md.rhs(t, x, r->fw.z, r->md.p, r->fw.w, r->fw.kbuf, f);
        st->fev += 1;
    } else if (!filippov(t, x, f, st, r)) {
        return false;
    }
    return true;
}

/* The projected field f and the unprojected one fraw at (t, x); false on failure.
 *
 * Also leaves the lag values/arguments of this point in fw.z/fw.largs and, for models with
 * switches, the switching function values in fw.sv. */
bool fn_feval(double t, double *x, double *f, double *fraw, fn_state *st, fn_run *r)
{
    const int64_t n = r->n;
    fn_field *fw = &r->fw;
    if (!field_in_mode(t, x, f, st, r))
        return false;
    bool finite = true;
    for (int64_t i = 0; i < n; i++)
        if (!isfinite(f[i]))
            finite = false;
    if (!finite) {
        /* a projected state overshooting below 0 inside a trial step: evaluate at the boundary */
        bool clamp = false;
        double *xe = fw->xe;
        for (int64_t i = 0; i < n; i++) {
            xe[i] = x[i];
            if (r->md.nonneg[i] == 1 && x[i] < 0.0) {
                xe[i] = 0.0;
                clamp = true;
            }
        }
        if (clamp && !field_in_mode(t, xe, f, st, r))
            return false;
        for (int64_t i = 0; i < n; i++)
            if (!isfinite(f[i])) {
                st->cause = ST_NONFINITE;
                st->index = i;
                st->fault_value = f[i];
                st->fault_time = t;
                return false;
            }
    }
    for (int64_t i = 0; i < n; i++) {
        fraw[i] = f[i];
        if (fw->stuck[i] == 1)
            f[i] = 0.0;
    }
    if (r->nsw > 0)
        r->md.sw(t, x, fw->z, r->md.p, fw->w, fw->kbuf, fw->sv);
    return true;
}
