/* One step of an embedded Runge-Kutta pair, with lags that may fall inside the step.
 *
 * fn_attempt computes the stages of the method given as data (rk: tableau A, B, C, error
 * weights E, dense-output matrix P, and for a linearly implicit method the coupling G of its
 * stages through W = I - gamma h J); lagged values beyond the stored history come from the
 * step's own continuous extension hs.cc (first guess: predictor), and the stages are iterated
 * until that extension reproduces itself (or the step's end value stops moving, at the
 * observed contraction rate). Returns the scaled local error estimate.
 */
#include "kernel.h"

#define MAXIT 12        /* fixed-point iterations for lags inside the step */
#define ITER_TOL 1e-2   /* interpolant self-consistency, in units of the error tolerance */
#define ITER_TOL_Y 0.2  /* estimated remaining iteration error of the step's end value */

/* RMS of v in units of atol + rtol max(|y0|, |y1|) (inf if not finite). */
double fn_rms(const double *v, const double *y0, const double *y1, double rtol,
              const double *atol, int64_t n)
{
    double acc = 0.0;
    for (int64_t i = 0; i < n; i++) {
        const double sc = atol[i] + rtol * fn_max(fabs(y0[i]), fabs(y1[i]));
        const double q = v[i] / sc;
        acc += q * q;
    }
    const double res = sqrt(acc / (double)n);
    return isfinite(res) ? res : INFINITY;
}

/* out = y + h * sum_s W[s] K[s] over the stages s < m. */
static void combine(const double *W, int64_t m, const double *K, double h, const double *y,
                    double *out, int64_t n)
{
    for (int64_t i = 0; i < n; i++) {
        double acc = 0.0;
        for (int64_t s = 0; s < m; s++)
            acc += W[s] * K[s * n + i];
        out[i] = y[i] + h * acc;
    }
}

/* Power-basis coefficients of the step's continuous extension: y + h (K.T @ P) theta. */
static void dense_coefficients(const double *P, int64_t S, const double *K, double h,
                               const double *y, double *cn, int64_t n)
{
    for (int64_t i = 0; i < n; i++) {
        cn[i * NCOEF] = y[i];
        for (int64_t j = 0; j < NCOEF - 1; j++) {
            double acc = 0.0;
            for (int64_t s = 0; s < S; s++)
                acc += P[s * (NCOEF - 1) + j] * K[s * n + i];
            cn[i * NCOEF + j + 1] = h * acc;
        }
    }
}

/* First guess of the step's dense output, for lags that fall inside the step.
 *
 * The previous step's polynomial continued past its end when extrapolate (smooth
 * continuation, no mode change at t), else the Euler line y + theta h f. */
static void predictor(fn_state *st, fn_run *r, bool extrapolate)
{
    const int64_t n = r->n, nm = st->nm;
    const double *y = r->sw.y, *mc = r->hs.mc, *mt = r->hs.mt;
    double *cc = r->hs.cc;
    if (extrapolate && nm > st->nh) {
        const double ratio = st->h / (mt[nm] - mt[nm - 1]);
        for (int64_t i = 0; i < n; i++) {
            /* q(theta) = p(1 + r theta): Taylor shift of the power basis */
            const double *c = mc + ((nm - 1) * n + i) * NCOEF;
            double rk = 1.0;
            for (int64_t k = 0; k < NCOEF; k++) {
                double acc = 0.0;
                double binom = 1.0;
                for (int64_t m = k; m < NCOEF; m++) {
                    acc += binom * c[m];
                    binom = binom * (double)(m + 1) / (double)(m + 1 - k);
                }
                cc[i * NCOEF + k] = acc * rk;
                rk *= ratio;
            }
            cc[i * NCOEF] = y[i];
        }
    } else {
        for (int64_t i = 0; i < n; i++) {
            cc[i * NCOEF] = y[i];
            cc[i * NCOEF + 1] = st->h * r->sw.K[i];
            for (int64_t j = 2; j < NCOEF; j++)
                cc[i * NCOEF + j] = 0.0;
        }
    }
}

/* RMS over states of a bound on max_theta |cn(theta) - cc(theta)| in tolerance units. */
static double poly_gap(const double *cn, const double *cc, const double *y0, const double *y1,
                       double rtol, const double *atol, int64_t n)
{
    double acc = 0.0;
    for (int64_t i = 0; i < n; i++) {
        double d = 0.0;
        for (int64_t j = 0; j < NCOEF; j++)
            d += fabs(cn[i * NCOEF + j] - cc[i * NCOEF + j]);
        const double q = d / (atol[i] + rtol * fn_max(fabs(y0[i]), fabs(y1[i])));
        acc += q * q;
    }
    return sqrt(acc / (double)n);
}

/* sw.lu, sw.piv: LU factors (partial pivoting) of W = I - gh J, J the model's Jacobian at
 * (t, x) with the lag values in fw.z and the current mode, and in column n the field's time
 * derivative (rows in their original order); rows of held states are those of I (their
 * stages stay 0). False when W is singular or not finite (cause in st). */
static bool factor_iteration_matrix(double t, double *x, double gh, fn_state *st, fn_run *r)
{
    const int64_t n = r->n, ld = n + 1;
    double *W = r->sw.lu;
    int64_t *piv = r->sw.piv;
    r->md.jac(t, x, r->fw.z, r->md.p, r->fw.w, r->fw.kbuf, W); /* J and df/dt (column n) */
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < n + 1; j++) {
            const double jij = r->fw.stuck[i] == 1 ? 0.0 : W[i * ld + j];
            W[i * ld + j] = j < n ? (i == j ? 1.0 : 0.0) - gh * jij : jij;
        }
    for (int64_t k = 0; k < n; k++) {
        int64_t p = k;
        double big = fabs(W[k * ld + k]);
        for (int64_t i = k + 1; i < n; i++)
            if (fabs(W[i * ld + k]) > big) {
                big = fabs(W[i * ld + k]);
                p = i;
            }
        piv[k] = p;
        if (!(big > 0.0 && isfinite(big))) {
            st->cause = ST_NONFINITE;
            st->index = k;
            st->fault_value = big;
            st->fault_time = t;
            return false;
        }
        if (p != k)
            for (int64_t j = 0; j < n; j++) {
                const double tmp = W[k * ld + j];
                W[k * ld + j] = W[p * ld + j];
                W[p * ld + j] = tmp;
            }
        for (int64_t i = k + 1; i < n; i++) {
            const double m = W[i * ld + k] / W[k * ld + k];
            W[i * ld + k] = m;
            for (int64_t j = k + 1; j < n; j++)
                W[i * ld + j] -= m * W[k * ld + j];
        }
    }
    return true;
}

/* Solve W x = b in place from the factors of factor_iteration_matrix. */
static void lu_solve(const double *W, const int64_t *piv, double *b, int64_t n)
{
    const int64_t ld = n + 1;
    for (int64_t k = 0; k < n; k++) {
        const int64_t p = piv[k];
        if (p != k) {
            const double tmp = b[k];
            b[k] = b[p];
            b[p] = tmp;
        }
    }
    for (int64_t i = 0; i < n; i++) {
        double acc = b[i];
        for (int64_t j = 0; j < i; j++)
            acc -= W[i * ld + j] * b[j];
        b[i] = acc;
    }
    for (int64_t i = n - 1; i >= 0; i--) {
        double acc = b[i];
        for (int64_t j = i + 1; j < n; j++)
            acc -= W[i * ld + j] * b[j];
        b[i] = acc / W[i * ld + i];
    }
}

/* Stages 1..S-1 (stage 0 is the field at the start); false on a failed evaluation.
 *
 * sw.svs[s] and sw.lams[s] receive the switching-function values and sliding weights at
 * stage s (row 0 holds the start values). A linearly implicit stage (G[s, s] > 0) is
 * K_s = W^{-1} (f_s + sum_{j<s} G[s, j] K_j + T_s h f_t) with W = I - G[s, s] h J, factored
 * once per attempt at the first such stage. */
static bool stages(fn_state *st, fn_run *r)
{
    const double t = st->t, h = st->h;
    const int64_t n = r->n, S = r->S, ns1 = r->ns1;
    const double *A = r->rk.A, *G = r->rk.G;
    fn_step *sw = &r->sw;
    for (int64_t s = 1; s < S; s++) {
        combine(A + s * S, s, sw->K, h, sw->y, sw->ytmp, n);
        const double ts = t + r->rk.C[s] * h;
        if (!fn_feval(ts, sw->ytmp, sw->K + s * n, sw->Kraw + s * n, st, r))
            return false;
        for (int64_t j = 0; j < ns1; j++) {
            sw->svs[s * ns1 + j] = r->fw.sv[j];
            sw->lams[s * ns1 + j] = r->fw.lam[j];
        }
        if (G[s * S + s] > 0.0) {
            if (st->lu_h != h) {
                if (!factor_iteration_matrix(ts, sw->ytmp, G[s * S + s] * h, st, r))
                    return false;
                st->lu_h = h;
            }
            for (int64_t i = 0; i < n; i++) {
                double acc = sw->K[s * n + i] + r->rk.T[s] * h * sw->lu[i * (n + 1) + n];
                for (int64_t j = 0; j < s; j++)
                    acc += G[s * S + j] * sw->K[j * n + i];
                sw->K[s * n + i] = acc;
            }
            lu_solve(sw->lu, sw->piv, sw->K + s * n, n);
        }
    }
    return true;
}

/* One trial step of size st->h from (st->t, sw.y): stages, sw.ynew, sw.cn.
 *
 * Returns the scaled error norm (inf on failure, cause in st->cause). st->rate is the
 * contraction rate of the lag iteration (-1 when no lag fell inside the step). */
double fn_attempt(fn_state *st, fn_run *r)
{
    fn_step *sw = &r->sw;
    const int64_t n = r->n, S = r->S;
    double *y = sw->y, *ynew = sw->ynew, *cn = sw->cn, *cc = r->hs.cc;
    const double h = st->h;
    predictor(st, r, st->smooth_start);
    st->lu_h = -1.0; /* a linearly implicit method factors W again for this attempt */
    st->trial_t = st->t;
    st->trial_h = h;
    st->rate = -1.0;
    bool converged = false;
    double gap_prev = 0.0;
    for (int it = 0; it < MAXIT; it++) {
        st->future = false;
        if (!stages(st, r))
            return INFINITY;
        combine(r->rk.B, S, sw->K, h, y, ynew, n);
        for (int64_t i = 0; i < n; i++)
            if (!isfinite(ynew[i])) {
                st->cause = ST_NONFINITE;
                st->index = i;
                st->fault_value = ynew[i];
                st->fault_time = st->t + h;
                return INFINITY;
            }
        dense_coefficients(r->rk.P, S, sw->K, h, y, cn, n);
        if (!st->future) {
            converged = true;
            break;
        }
        /* The stages read the step's own interpolant cc. Done when cc reproduces itself, or
           when the end value moved so little that, at the observed contraction rate, the
           remaining iteration error is a small fraction of the error tolerance. */
        const double gap = poly_gap(cn, cc, y, ynew, st->rtol, sw->atol, n);
        if (gap <= ITER_TOL) {
            converged = true;
            st->rate = fn_max(st->rate, 0.0);
            break;
        }
        if (it > 0) {
            const double rate = gap_prev > 0.0 ? gap / gap_prev : 1.0;
            st->rate = rate;
            if (rate >= 1.0 || (it >= 3 && rate > 0.9))
                break; /* diverging or stalling: a shorter step will do better */
            for (int64_t i = 0; i < n; i++)
                sw->etmp[i] = ynew[i] - sw->yprev[i];
            const double change = fn_rms(sw->etmp, y, ynew, st->rtol, sw->atol, n);
            if (change * rate / (1.0 - rate) <= ITER_TOL_Y) {
                converged = true;
                break;
            }
        }
        gap_prev = gap;
        st->iterations += 1;
        for (int64_t i = 0; i < n; i++) {
            sw->yprev[i] = ynew[i];
            for (int64_t j = 0; j < NCOEF; j++)
                cc[i * NCOEF + j] = cn[i * NCOEF + j];
        }
    }
    if (!converged) {
        st->cause = ST_ITERATION;
        st->rate = 1.0;
        return INFINITY;
    }
    for (int64_t i = 0; i < n; i++) {
        double acc = 0.0;
        for (int64_t s = 0; s < S; s++)
            acc += r->rk.E[s] * sw->K[s * n + i];
        sw->etmp[i] = h * acc;
    }
    return fn_rms(sw->etmp, y, ynew, st->rtol, sw->atol, n);
}
