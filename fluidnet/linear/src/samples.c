/* fluidnet.linear._samples: det Delta(s) and (det Delta)'(s) / det Delta(s) of a stack of
 * delay systems through the Schur complement of their flows (schur_samples; fluidnet/linear/
 * stacked.py, Stack._schur_part, computes the same in NumPy and is its reference), or on the
 * whole characteristic matrix (dense_samples; NumPy's det and solve are its reference), and
 * Newton's method on det Delta of one whole system from many starts (dense_newton; the NumPy
 * iterations it replaces, named at newton_kernel, are its reference); and, for the equilibrium
 * search, the scaled Newton steps of many small real systems (scaled_steps).
 *
 * One sample q of system k = idx[q] at s = s[q]:
 *
 *   E_j   = exp(-s tau[k, j]),  E_j' = -tau[k, j] E_j          (the delays in use, j in delays)
 *   V     = base[k] + sum_j E_j per[j, k],  V' = sum_j E_j' per[j, k]   (the used entries;
 *           delay j's terms on its entries du[dstart[j]:dstart[j + 1]] only)
 *   V[:nS] += s, V'[:nS] += 1                                  (the diagonal on the flows S)
 *   M     = V[tt_at] at tt, + s I - sum over each place of V[ts] V[st] / d[i]
 *   M'    the same terms differentiated,   d = V[:nS]
 *   f     = prod d * det M                                     (phase: f / |f|, 0 if singular)
 *   g     = sum d'/d + trace(M^{-1} M')                        (inf where f is 0 or not finite)
 *
 * or (mode SOLVE) f = ||Delta(s)^{-1} b|| through the same complement, for the residual bound of
 * Stack.residual_within.
 *
 * The determinant is LAPACK's: LU with partial pivoting on |re| + |im|, det = sign exp(sum of
 * log |u_ii|) as NumPy's det computes it. Complex arithmetic is written out on pairs of doubles
 * (C99's operators call the slow Annex G helpers for every product), division by Smith's method.
 * Arrays arrive through the buffer protocol; the Python side (stacked.py) gives them the types
 * and C-contiguity this file reads, and the sizes are checked here.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifndef FLUIDNET_SOURCE_DIGEST
#define FLUIDNET_SOURCE_DIGEST "unknown"
#endif

typedef struct {
    double re, im;
} cx;

/* The factorization and solves, inlined into each kernel's loop over samples (called through
 * two kernels, GCC stopped inlining them: 15 states 3.9 -> 4.75 us a sample). */
#if defined(__GNUC__)
#define INLINED static inline __attribute__((always_inline))
#else
#define INLINED static inline
#endif

static inline cx cmul(cx a, cx b) { return (cx){a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re}; }
static inline cx cadd(cx a, cx b) { return (cx){a.re + b.re, a.im + b.im}; }
static inline cx csub(cx a, cx b) { return (cx){a.re - b.re, a.im - b.im}; }

/* a / b by Smith's method */
static inline cx cdiv(cx a, cx b) {
    if (fabs(b.re) >= fabs(b.im)) {
        if (b.re == 0.0 && b.im == 0.0) {
            return (cx){a.re / 0.0, a.im / 0.0};
        }
        double r = b.im / b.re, den = b.re + b.im * r;
        return (cx){(a.re + a.im * r) / den, (a.im - a.re * r) / den};
    }
    double r = b.re / b.im, den = b.im + b.re * r;
    return (cx){(a.re * r + a.im) / den, (a.im * r - a.re) / den};
}

static inline int cfinite(cx a) { return isfinite(a.re) && isfinite(a.im); }

/* The sizes of one call and its work space. */
typedef struct {
    Py_ssize_t K, m, U, nS, nT, nd, ntt, np, ng;
} sizes;

/* The LU factorization of the n x n matrix a (row-major, in place) with partial pivoting;
 * perm[r] is the row swapped into place r, rp[r] the reciprocal of the pivot u_rr (one division
 * a row, multiplications after it). Returns the sign of the permutation. */
INLINED double lu(cx *a, Py_ssize_t n, Py_ssize_t *perm, cx *rp) {
    double sign = 1.0;
    for (Py_ssize_t c = 0; c < n; c++) {
        Py_ssize_t p = c;
        double best = fabs(a[c * n + c].re) + fabs(a[c * n + c].im);
        for (Py_ssize_t r = c + 1; r < n; r++) {
            double v = fabs(a[r * n + c].re) + fabs(a[r * n + c].im);
            if (v > best) {
                best = v;
                p = r;
            }
        }
        perm[c] = p;
        if (p != c) {
            sign = -sign;
            for (Py_ssize_t j = 0; j < n; j++) {
                cx t = a[c * n + j];
                a[c * n + j] = a[p * n + j];
                a[p * n + j] = t;
            }
        }
        cx piv = a[c * n + c];
        if (piv.re == 0.0 && piv.im == 0.0) {
            rp[c] = (cx){0.0, 0.0};
            continue; /* singular: det 0, the column left as it is (LAPACK's info > 0) */
        }
        rp[c] = cdiv((cx){1.0, 0.0}, piv);
        for (Py_ssize_t r = c + 1; r < n; r++) {
            cx l = cmul(a[r * n + c], rp[c]);
            a[r * n + c] = l;
            for (Py_ssize_t j = c + 1; j < n; j++) {
                a[r * n + j] = csub(a[r * n + j], cmul(l, a[c * n + j]));
            }
        }
    }
    return sign;
}

/* trace(M^{-1} B) from the LU factors of M (lu, perm, rp) and B (row-major, overwritten);
 * v: n values of scratch. Z = L^{-1} P B in place, then trace(U^{-1} Z) =
 * sum_k sum_{i <= k} (U^{-1})_ik Z_ki with each column of U^{-1} solved on its own (a third
 * of the work of U X = Z for every column of Z, of which only the diagonal is needed). */
INLINED cx trace_solve(const cx *a, const Py_ssize_t *perm, const cx *rp, cx *b, Py_ssize_t n,
                      cx *v) {
    for (Py_ssize_t c = 0; c < n; c++) { /* the row swaps, applied to B */
        Py_ssize_t p = perm[c];
        if (p != c) {
            for (Py_ssize_t j = 0; j < n; j++) {
                cx t = b[c * n + j];
                b[c * n + j] = b[p * n + j];
                b[p * n + j] = t;
            }
        }
    }
    for (Py_ssize_t r = 1; r < n; r++) { /* L (unit lower) */
        for (Py_ssize_t c = 0; c < r; c++) {
            cx l = a[r * n + c];
            for (Py_ssize_t j = 0; j < n; j++) {
                b[r * n + j] = csub(b[r * n + j], cmul(l, b[c * n + j]));
            }
        }
    }
    cx tr = {0.0, 0.0};
    for (Py_ssize_t k = 0; k < n; k++) { /* column k of U^{-1}: U v = e_k, rows 0..k */
        v[k] = rp[k];
        for (Py_ssize_t r = k - 1; r >= 0; r--) {
            cx acc = {0.0, 0.0};
            for (Py_ssize_t c = r + 1; c <= k; c++) {
                acc = cadd(acc, cmul(a[r * n + c], v[c]));
            }
            const cx w = cmul(acc, rp[r]);
            v[r] = (cx){-w.re, -w.im};
        }
        for (Py_ssize_t i = 0; i <= k; i++) {
            tr = cadd(tr, cmul(v[i], b[k * n + i]));
        }
    }
    return tr;
}

enum { DET = 0, PHASE = 1, SOLVE = 2 };

/* LU of the n x n matrix a (in place) and f = pre * det a (PHASE: the phase of both), det as
 * sign exp(sum log |u_ii|); 1 where a is finite and f finite and not 0 (the solve and the
 * trace may follow), else 0 (f NaN where a is not finite, 0 where singular). */
INLINED int factor(cx *a, Py_ssize_t n, Py_ssize_t *perm, cx *rp, int mode, cx pre, cx *f) {
    for (Py_ssize_t e = 0; e < n * n; e++) {
        if (!cfinite(a[e])) {
            *f = (cx){NAN, NAN};
            return 0;
        }
    }
    double sg = lu(a, n, perm, rp), logdet = 0.0;
    cx ph = {sg, 0.0};
    for (Py_ssize_t c = 0; c < n; c++) {
        const cx u = a[c * (n + 1)];
        const double r = hypot(u.re, u.im);
        if (r == 0.0) {
            *f = cmul(pre, (cx){0.0, 0.0});
            return 0;
        }
        ph = cmul(ph, (cx){u.re / r, u.im / r});
        logdet += log(r);
    }
    cx det = ph;
    if (mode != PHASE) {
        const double e = exp(logdet);
        det = (cx){ph.re * e, ph.im * e};
    }
    *f = cmul(pre, det);
    return cfinite(*f) && (f->re != 0.0 || f->im != 0.0);
}

/* ||a^{-1} y|| from the LU factors of a; y is overwritten by the solution. */
INLINED double solve_vector_norm(const cx *a, const Py_ssize_t *perm, const cx *rp, cx *y,
                                Py_ssize_t n) {
    for (Py_ssize_t c = 0; c < n; c++) {
        if (perm[c] != c) {
            cx t = y[c];
            y[c] = y[perm[c]];
            y[perm[c]] = t;
        }
    }
    for (Py_ssize_t r = 1; r < n; r++) {
        for (Py_ssize_t c = 0; c < r; c++) {
            y[r] = csub(y[r], cmul(a[r * n + c], y[c]));
        }
    }
    double sum = 0.0;
    for (Py_ssize_t r = n - 1; r >= 0; r--) {
        for (Py_ssize_t c = r + 1; c < n; c++) {
            y[r] = csub(y[r], cmul(a[r * n + c], y[c]));
        }
        y[r] = cmul(y[r], rp[r]);
        sum += y[r].re * y[r].re + y[r].im * y[r].im;
    }
    return sqrt(sum);
}

typedef struct {
    const cx *s;
    const int64_t *idx;
    const double *tau;
    const cx *base, *per;
    const int64_t *delays, *dstart, *du, *tt, *tt_at, *ts, *st, *ii, *starts, *places;
    int mode; /* DET, PHASE or SOLVE */
    /* SOLVE: the right-hand side (S, then T) and the entries of Delta_TS and Delta_ST */
    const cx *probe;
    const int64_t *tsa, *tsi, *tsat, *sti, *stb, *stat;
    Py_ssize_t nts, nst;
    /* dense_newton: its options (see newton_kernel) */
    const double *opts;
    cx *f, *g;
} arrays;

/* ||Delta^{-1} b|| from the LU factors of M (lu, perm, rp) and the used entries V:
 * y = D^{-1} b_S, x_T = M^{-1} (b_T - Delta_TS y), x_S = D^{-1} (b_S - Delta_ST x_T). */
static double solve_norm(const arrays *x, const sizes *z, const cx *V, const cx *inv,
                         const cx *a, const Py_ssize_t *perm, const cx *rp, cx *xs, cx *xt) {
    const Py_ssize_t nS = z->nS, n = z->nT;
    const cx *b = x->probe;
    for (Py_ssize_t i = 0; i < nS; i++) {
        xs[i] = cmul(b[i], inv[i]);
    }
    for (Py_ssize_t t = 0; t < n; t++) {
        xt[t] = b[nS + t];
    }
    for (Py_ssize_t e = 0; e < x->nts; e++) {
        xt[x->tsa[e]] = csub(xt[x->tsa[e]], cmul(V[x->tsat[e]], xs[x->tsi[e]]));
    }
    const double tn = solve_vector_norm(a, perm, rp, xt, n); /* x_T in xt */
    for (Py_ssize_t i = 0; i < nS; i++) {
        xs[i] = b[i];
    }
    for (Py_ssize_t e = 0; e < x->nst; e++) {
        xs[x->sti[e]] = csub(xs[x->sti[e]], cmul(V[x->stat[e]], xt[x->stb[e]]));
    }
    double sum = tn * tn;
    for (Py_ssize_t i = 0; i < nS; i++) {
        const cx v = cmul(xs[i], inv[i]);
        sum += v.re * v.re + v.im * v.im;
    }
    return sqrt(sum);
}

/* Every sample; work holds 2 U + 2 nT^2 + 2 nS + 2 nT values and perm nT indices. */
static void samples(const arrays *x, const sizes *z, Py_ssize_t Q, cx *work, Py_ssize_t *perm) {
    const Py_ssize_t U = z->U, nS = z->nS, nT = z->nT, K = z->K, m = z->m;
    cx *V = work, *dV = V + U, *M = dV + U, *dM = M + nT * nT, *inv = dM + nT * nT;
    cx *rp = inv + nS, *xs = rp + nT, *xt = xs + nS;
    for (Py_ssize_t q = 0; q < Q; q++) {
        const cx s = x->s[q];
        const int64_t k = x->idx[q];
        const cx *b = x->base + k * U;
        for (Py_ssize_t u = 0; u < U; u++) {
            V[u] = b[u];
            dV[u] = (cx){0.0, 0.0};
        }
        for (Py_ssize_t jd = 0; jd < z->nd; jd++) {
            const int64_t j = x->delays[jd];
            const double t = x->tau[k * m + j];
            /* exp(-s t) and its derivative -t exp(-s t) */
            const double mag = exp(-s.re * t);
            const cx E = {mag * cos(-s.im * t), mag * sin(-s.im * t)};
            const cx Et = {-(E.re * t), -(E.im * t)};
            const cx *p = x->per + (j * K + k) * U;
            for (int64_t e = x->dstart[jd]; e < x->dstart[jd + 1]; e++) {
                const int64_t u = x->du[e]; /* the entries delay j reaches in some system */
                V[u] = cadd(V[u], cmul(E, p[u]));
                dV[u] = cadd(dV[u], cmul(Et, p[u]));
            }
        }
        for (Py_ssize_t u = 0; u < nS; u++) {
            V[u] = cadd(V[u], s);
            dV[u].re += 1.0;
        }
        memset(M, 0, (size_t)(nT * nT) * sizeof(cx));
        memset(dM, 0, (size_t)(nT * nT) * sizeof(cx));
        for (Py_ssize_t e = 0; e < z->ntt; e++) {
            M[x->tt[e]] = V[x->tt_at[e]];
            dM[x->tt[e]] = dV[x->tt_at[e]];
        }
        for (Py_ssize_t a = 0; a < nT; a++) {
            M[a * (nT + 1)] = cadd(M[a * (nT + 1)], s);
            dM[a * (nT + 1)].re += 1.0;
        }
        /* the diagonal on S: 1/d, the sum of d'/d, and the product of d (or of its phase) */
        cx gs = {0.0, 0.0}, fd = {1.0, 0.0};
        for (Py_ssize_t i = 0; i < nS; i++) {
            inv[i] = cdiv((cx){1.0, 0.0}, V[i]);
            gs = cadd(gs, cmul(dV[i], inv[i]));
            if (x->mode == PHASE) {
                double r = hypot(V[i].re, V[i].im);
                fd = cmul(fd, (cx){V[i].re / r, V[i].im / r});
            } else {
                fd = cmul(fd, V[i]);
            }
        }
        /* M -= Delta_TS D^-1 Delta_ST, summed per place as NumPy's reduceat does */
        for (Py_ssize_t gi = 0; gi < z->ng; gi++) {
            const Py_ssize_t lo = x->starts[gi], hi = gi + 1 < z->ng ? x->starts[gi + 1] : z->np;
            cx acc = {0.0, 0.0}, dacc = {0.0, 0.0};
            for (Py_ssize_t p = lo; p < hi; p++) {
                const cx w = inv[x->ii[p]], dd = dV[x->ii[p]];
                const cx TS = V[x->ts[p]], ST = V[x->st[p]], dTS = dV[x->ts[p]], dST = dV[x->st[p]];
                const cx prod = cmul(cmul(TS, w), ST);
                const cx dprod = cmul(w, csub(cadd(cmul(dTS, ST), cmul(TS, dST)), cmul(prod, dd)));
                if (p == lo) {
                    acc = prod;
                    dacc = dprod;
                } else {
                    acc = cadd(acc, prod);
                    dacc = cadd(dacc, dprod);
                }
            }
            const int64_t at = x->places[gi];
            M[at] = csub(M[at], acc);
            dM[at] = csub(dM[at], dacc);
        }
        /* f and g, or the solve's norm */
        cx f;
        if (factor(M, nT, perm, rp, x->mode, fd, &f)) {
            if (x->mode == SOLVE) {
                x->f[q] = (cx){solve_norm(x, z, V, inv, M, perm, rp, xs, xt), 0.0};
            } else {
                x->f[q] = f;
                const cx g = cadd(gs, trace_solve(M, perm, rp, dM, nT, xt));
                x->g[q] = cfinite(g) ? g : (cx){INFINITY, 0.0};
            }
        } else {
            x->f[q] = x->mode == SOLVE ? (cx){NAN, 0.0} : f;
            x->g[q] = (cx){INFINITY, 0.0};
        }
    }
}

/* Delta(s) and Delta'(s) = I + sum_j tau_j E_j A_j of system k in full (n x n, into D and dD),
 * each delay's terms on its entries du[dstart[j]:dstart[j + 1]]. */
INLINED void dense_matrices(const arrays *x, const sizes *z, cx s, int64_t k, cx *D, cx *dD) {
    const Py_ssize_t n = z->nT, nn = n * n, K = z->K, m = z->m;
    const cx *a0 = x->base + k * nn;
    for (Py_ssize_t e = 0; e < nn; e++) {
        D[e] = (cx){-a0[e].re, -a0[e].im};
        dD[e] = (cx){0.0, 0.0};
    }
    for (Py_ssize_t a = 0; a < n; a++) {
        D[a * (n + 1)] = cadd(D[a * (n + 1)], s);
        dD[a * (n + 1)].re = 1.0;
    }
    for (Py_ssize_t jd = 0; jd < z->nd; jd++) {
        const int64_t j = x->delays[jd];
        const double t = x->tau[k * m + j];
        const double mag = exp(-s.re * t);
        const cx E = {mag * cos(-s.im * t), mag * sin(-s.im * t)};
        const cx Et = {E.re * t, E.im * t};
        const cx *p = x->per + (j * K + k) * nn;
        for (int64_t e = x->dstart[jd]; e < x->dstart[jd + 1]; e++) {
            const int64_t u = x->du[e];
            D[u] = csub(D[u], cmul(E, p[u]));
            dD[u] = cadd(dD[u], cmul(Et, p[u]));
        }
    }
}

/* The LU factors of Delta(s) of system k (dense_matrices; f = det Delta in mode DET, its phase
 * in PHASE, as factor gives it) and trace(Delta(s)^{-1} Delta'(s)), returned: inf where Delta is
 * singular or a value is not finite. work: 2 n^2 + 2 n values, perm n indices. */
INLINED cx dense_logderiv(const arrays *x, const sizes *z, cx s, int64_t k, int mode, cx *work,
                          Py_ssize_t *perm, cx *f) {
    const Py_ssize_t n = z->nT, nn = n * n;
    cx *D = work, *dD = D + nn, *rp = dD + nn, *y = rp + n;
    dense_matrices(x, z, s, k, D, dD);
    if (!factor(D, n, perm, rp, mode, (cx){1.0, 0.0}, f)) {
        return (cx){INFINITY, 0.0};
    }
    const cx g = trace_solve(D, perm, rp, dD, n, y);
    return cfinite(g) ? g : (cx){INFINITY, 0.0};
}

/* The dense samples: det Delta (or its phase) and the logarithmic derivative of system k in full
 * (dense_logderiv), or (SOLVE) ||Delta^{-1} probe||. work: 2 n^2 + 2 n values, perm n. */
static void dense(const arrays *x, const sizes *z, Py_ssize_t Q, cx *work, Py_ssize_t *perm) {
    const Py_ssize_t n = z->nT, nn = n * n;
    cx *D = work, *dD = D + nn, *rp = dD + nn, *y = rp + n;
    for (Py_ssize_t q = 0; q < Q; q++) {
        if (x->mode != SOLVE) {
            x->g[q] = dense_logderiv(x, z, x->s[q], x->idx[q], x->mode, work, perm, &x->f[q]);
            continue;
        }
        dense_matrices(x, z, x->s[q], x->idx[q], D, dD);
        cx f;
        if (factor(D, n, perm, rp, SOLVE, (cx){1.0, 0.0}, &f)) {
            for (Py_ssize_t a = 0; a < n; a++) y[a] = x->probe[a];
            x->f[q] = (cx){solve_vector_norm(D, perm, rp, y, n), 0.0};
        } else {
            x->f[q] = (cx){NAN, 0.0};
            x->g[q] = (cx){INFINITY, 0.0};
        }
    }
}

/* The multiplicity m (2 to mmax) whose linear rate (m - 1)/m the ratio of two successive Newton
 * steps matches to tol (in real part, and with an imaginary part within tol); 1 otherwise
 * (fluidnet/stability/crossing.py, _multiplicity_of_ratio). */
static inline long rate_multiplicity(cx ratio, double tol, long mmax) {
    const double m = rint(1.0 / (1.0 - ratio.re));
    if (!isfinite(m) || m < 2.0 || m > (double)mmax || !(fabs(ratio.im) <= tol)) {
        return 1;
    }
    return fabs(ratio.re - (m - 1.0) / m) <= tol ? (long)m : 1;
}

enum { REFINE = 0, FOLLOW = 1 };

/* Newton's method on det Delta of one system from every start s[q] (each on its own), the step
 * 1 / trace(Delta^{-1} Delta') (dense_logderiv); the final iterate in f[q].
 *
 * REFINE (fluidnet/linear/newton.py, newton_roots, is the reference): opts = (real, maxiter);
 * a start stops when its step falls below 1e-11 (1 + |lambda|), stops shrinking below
 * 1e-8 (1 + |lambda|), or its iterate is not finite; with real, a real start's steps are real.
 * g[q] = (size of the last step, 0).
 *
 * FOLLOW (fluidnet/stability/crossing.py, _newton_loop): opts = (unit, maxiter, give_up (< 0:
 * none), tol, mmax, wander); the steps of a start whose two successive step ratios give the
 * same multiplicity m >= 2 (rate_multiplicity) are taken m times longer until one fails to
 * shrink by half; stops below 1e-13 (unit + |lambda|), or stalling below 1e-9 (unit +
 * |lambda|), or not finite (converged: g[q] = 0); after give_up iterations a start still
 * stepping farther than wander (unit + |lambda|) is left unconverged (g[q] = 1), as is one that
 * reaches maxiter. */
static void newton_kernel(const arrays *x, const sizes *z, Py_ssize_t Q, cx *work,
                          Py_ssize_t *perm) {
    const double *o = x->opts;
    const cx one = {1.0, 0.0};
    cx det; /* not used */
    for (Py_ssize_t q = 0; q < Q; q++) {
        cx lam = x->s[q];
        if (x->mode == REFINE) {
            const int real = o[0] != 0.0;
            const Py_ssize_t maxiter = (Py_ssize_t)o[1];
            double last = INFINITY;
            for (Py_ssize_t it = 0; it < maxiter; it++) {
                cx step = cdiv(one, dense_logderiv(x, z, lam, 0, DET, work, perm, &det));
                if (!cfinite(step)) step = (cx){0.0, 0.0};
                if (real && lam.im == 0.0) step.im = 0.0;
                lam = csub(lam, step);
                const double size = hypot(step.re, step.im), scale = 1.0 + hypot(lam.re, lam.im);
                const int done = size <= 1e-11 * scale ||
                                 (size >= 0.9 * last && size <= 1e-8 * scale) || !cfinite(lam);
                last = size;
                if (done) break;
            }
            x->f[q] = lam;
            x->g[q] = (cx){last, 0.0};
            continue;
        }
        const double unit = o[0], tol = o[3], wander = o[5];
        const Py_ssize_t maxiter = (Py_ssize_t)o[1], give_up = (Py_ssize_t)o[2];
        const long mmax = (long)o[4];
        cx plain = {NAN, NAN};
        double prev = INFINITY, mult = 1.0;
        long guess = 1;
        int active = 1;
        for (Py_ssize_t it = 0; it < maxiter; it++) {
            cx step = cdiv(one, dense_logderiv(x, z, lam, 0, DET, work, perm, &det));
            if (!cfinite(step)) step = (cx){0.0, 0.0};
            if (it >= 1) {
                const cx ratio = cdiv(step, plain);
                long now = rate_multiplicity(ratio, tol, mmax);
                if (mult > 1.0 && !(hypot(ratio.re, ratio.im) < 0.5)) {
                    mult = 1.0; /* a simple root taken for a multiple one: plain steps again */
                    now = 1;
                }
                if (now >= 2 && now == guess && mult == 1.0) mult = (double)now;
                guess = now;
            }
            plain = step;
            step = (cx){step.re * mult, step.im * mult};
            lam = csub(lam, step);
            const double size = hypot(step.re, step.im), scale = unit + hypot(lam.re, lam.im);
            int done = size <= 1e-13 * scale || (size >= 0.9 * prev && size <= 1e-9 * scale) ||
                       !cfinite(lam);
            prev = size;
            if (done) active = 0;
            if (give_up >= 0 && it + 1 >= give_up && size > wander * scale) done = 1;
            if (done) break;
        }
        x->f[q] = lam;
        x->g[q] = (cx){active ? 1.0 : 0.0, 0.0};
    }
}

/* ---------------------------------------------------------------------------- the binding */
/* The buffers of one call: the inputs (read-only) and the two outputs f and g (writable),
 * held until release(); every input's length a whole number of its items. */
#define MAX_BUFFERS 24
typedef struct {
    Py_buffer view[MAX_BUFFERS];
    int count;
} buffers;

static void release(buffers *b) {
    for (int a = 0; a < b->count; a++) {
        PyBuffer_Release(&b->view[a]);
    }
    b->count = 0;
}

/* Hold n inputs obj (item sizes item, names for the message), then f and g; 0, or -1 with an
 * exception set (what was held is released). */
static int hold(buffers *b, const char *fn, PyObject *const *obj, const Py_ssize_t *item,
                const char *const *names, int n, PyObject *f, PyObject *g) {
    b->count = 0;
    for (int a = 0; a < n + 2; a++) {
        PyObject *o = a < n ? obj[a] : (a == n ? f : g);
        int flags = PyBUF_C_CONTIGUOUS | (a < n ? 0 : PyBUF_WRITABLE);
        if (PyObject_GetBuffer(o, &b->view[a], flags) != 0) {
            release(b);
            return -1;
        }
        b->count++;
        Py_ssize_t size = a < n ? item[a] : 16;
        if (b->view[a].len % size != 0) {
            PyErr_Format(PyExc_ValueError, "%s: %s has %zd bytes, not a whole number of %zd-byte "
                         "items", fn, a < n ? names[a] : (a == n ? "f" : "g"), b->view[a].len,
                         size);
            release(b);
            return -1;
        }
    }
    return 0;
}

typedef void (*kernel_fn)(const arrays *, const sizes *, Py_ssize_t, cx *, Py_ssize_t *);

/* Run kernel on Q samples with n_work values and n_perm indices of work space, the GIL
 * released; None, or NULL with MemoryError. */
static PyObject *run(kernel_fn kernel, const arrays *x, const sizes *z, Py_ssize_t Q,
                     Py_ssize_t n_work, Py_ssize_t n_perm) {
    cx *work = malloc((size_t)(n_work + 1) * sizeof(cx));
    Py_ssize_t *perm = malloc((size_t)(n_perm + 1) * sizeof(Py_ssize_t));
    if (work == NULL || perm == NULL) {
        free(work);
        free(perm);
        return PyErr_NoMemory();
    }
    Py_BEGIN_ALLOW_THREADS
    kernel(x, z, Q, work, perm);
    Py_END_ALLOW_THREADS
    free(work);
    free(perm);
    return Py_NewRef(Py_None);
}

#define N_IN 22
static const char *const IN_NAMES[N_IN] = {
    "s",  "idx", "tau",    "base",   "per",   "delays", "dstart", "du",  "tt",  "tt_at", "ts",
    "st", "i",   "starts", "places", "probe", "ts_a",   "ts_i",   "ts_at", "st_i", "st_b", "st_at"};

static PyObject *schur_samples(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *obj[N_IN], *fo, *go;
    Py_ssize_t K, m, U, nS, nT;
    int mode;
    if (!PyArg_ParseTuple(args, "OOOOOOOOOOOOOOOnnnnniOOOOOOOOO", &obj[0], &obj[1], &obj[2],
                          &obj[3], &obj[4], &obj[5], &obj[6], &obj[7], &obj[8], &obj[9], &obj[10],
                          &obj[11], &obj[12], &obj[13], &obj[14], &K, &m, &U, &nS, &nT, &mode,
                          &obj[15], &obj[16], &obj[17], &obj[18], &obj[19], &obj[20], &obj[21],
                          &fo, &go)) {
        return NULL;
    }
    const Py_ssize_t item[N_IN] = {16, 8, 8, 16, 16, 8, 8, 8, 8, 8, 8,
                                   8,  8, 8, 8,  16, 8, 8, 8, 8, 8, 8};
    buffers b;
    if (hold(&b, "schur_samples", obj, item, IN_NAMES, N_IN, fo, go) != 0) {
        return NULL;
    }
    const Py_buffer *in = b.view, fb = b.view[N_IN], gb = b.view[N_IN + 1];
    PyObject *result = NULL;
    const Py_ssize_t Q = in[0].len / 16;
    sizes z = {K, m, U, nS, nT, in[5].len / 8, in[8].len / 8, in[10].len / 8, in[13].len / 8};
    if (K < 0 || m < 0 || U < nS || nS < 0 || nT < 0 || in[1].len / 8 != Q ||
        in[2].len / 8 != K * m || in[3].len / 16 != K * U || in[4].len / 16 != m * K * U ||
        in[6].len / 8 != z.nd + 1 || in[9].len / 8 != z.ntt || in[11].len / 8 != z.np ||
        in[12].len / 8 != z.np || in[14].len / 8 != z.ng || fb.len != Q * 16 ||
        gb.len != Q * 16 || mode < DET || mode > SOLVE ||
        (mode == SOLVE && in[15].len / 16 != nS + nT) || in[17].len != in[16].len ||
        in[18].len != in[16].len || in[20].len != in[19].len || in[21].len != in[19].len) {
        PyErr_SetString(PyExc_ValueError, "schur_samples: the arrays' sizes do not agree");
        goto done;
    }
    /* every index within its array (the kernel trusts them) */
    const int64_t *idx = in[1].buf, *delays = in[5].buf, *dstart = in[6].buf, *du = in[7].buf;
    const int64_t *tt = in[8].buf, *tt_at = in[9].buf, *ts = in[10].buf, *st = in[11].buf;
    const int64_t *ii = in[12].buf, *starts = in[13].buf, *places = in[14].buf;
    const Py_ssize_t ndu = in[7].len / 8;
    int bad = dstart[0] != 0 || dstart[z.nd] != ndu;
    for (Py_ssize_t q = 0; q < Q; q++) bad |= idx[q] < 0 || idx[q] >= K;
    for (Py_ssize_t a = 0; a < z.nd; a++)
        bad |= delays[a] < 0 || delays[a] >= m || dstart[a + 1] < dstart[a];
    for (Py_ssize_t a = 0; a < ndu; a++) bad |= du[a] < 0 || du[a] >= U;
    const int64_t *tsa = in[16].buf, *tsi = in[17].buf, *tsat = in[18].buf;
    const int64_t *sti = in[19].buf, *stb = in[20].buf, *stat = in[21].buf;
    const Py_ssize_t nts = in[16].len / 8, nst = in[19].len / 8;
    for (Py_ssize_t a = 0; a < nts; a++)
        bad |= tsa[a] < 0 || tsa[a] >= nT || tsi[a] < 0 || tsi[a] >= nS || tsat[a] < 0 ||
               tsat[a] >= U;
    for (Py_ssize_t a = 0; a < nst; a++)
        bad |= sti[a] < 0 || sti[a] >= nS || stb[a] < 0 || stb[a] >= nT || stat[a] < 0 ||
               stat[a] >= U;
    for (Py_ssize_t a = 0; a < z.ntt; a++)
        bad |= tt[a] < 0 || tt[a] >= nT * nT || tt_at[a] < 0 || tt_at[a] >= U;
    for (Py_ssize_t a = 0; a < z.np; a++)
        bad |= ts[a] < 0 || ts[a] >= U || st[a] < 0 || st[a] >= U || ii[a] < 0 || ii[a] >= nS;
    for (Py_ssize_t a = 0; a < z.ng; a++)
        bad |= starts[a] < 0 || starts[a] >= z.np || (a > 0 && starts[a] <= starts[a - 1]) ||
               places[a] < 0 || places[a] >= nT * nT;
    if (bad) {
        PyErr_SetString(PyExc_ValueError, "schur_samples: an index lies outside its array");
        goto done;
    }
    arrays x = {.s = in[0].buf,     .idx = idx,     .tau = in[2].buf, .base = in[3].buf,
                .per = in[4].buf,   .delays = delays, .dstart = dstart, .du = du,
                .tt = tt,           .tt_at = tt_at, .ts = ts,         .st = st,
                .ii = ii,           .starts = starts, .places = places, .mode = mode,
                .probe = in[15].buf, .tsa = tsa,     .tsi = tsi,       .tsat = tsat,
                .sti = sti,         .stb = stb,     .stat = stat,     .nts = nts,
                .nst = nst,         .f = fb.buf,    .g = gb.buf};
    result = run(samples, &x, &z, Q, 2 * U + 2 * nT * nT + 2 * nS + 2 * nT, nT);
done:
    release(&b);
    return result;
}

/* Whether the delays in use, their entry ranges and entries lie outside their arrays (m
 * delays, n x n matrices): the check of dense_samples and dense_newton. */
static int dense_indices_bad(const int64_t *delays, const int64_t *dstart, const int64_t *du,
                             Py_ssize_t nd, Py_ssize_t ndu, Py_ssize_t m, Py_ssize_t n) {
    int bad = dstart[0] != 0 || dstart[nd] != ndu;
    for (Py_ssize_t a = 0; a < nd; a++)
        bad |= delays[a] < 0 || delays[a] >= m || dstart[a + 1] < dstart[a];
    for (Py_ssize_t a = 0; a < ndu; a++) bad |= du[a] < 0 || du[a] >= n * n;
    return bad;
}

#define N_DENSE 9
static const char *const DENSE_NAMES[N_DENSE] = {"s",      "idx", "tau", "A0",   "A",
                                                 "delays", "dstart", "du", "probe"};

static PyObject *dense_samples(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *obj[N_DENSE], *fo, *go;
    Py_ssize_t K, m, n;
    int mode;
    if (!PyArg_ParseTuple(args, "OOOOOOOOnnniOOO", &obj[0], &obj[1], &obj[2], &obj[3], &obj[4],
                          &obj[5], &obj[6], &obj[7], &K, &m, &n, &mode, &obj[8], &fo, &go)) {
        return NULL;
    }
    const Py_ssize_t item[N_DENSE] = {16, 8, 8, 16, 16, 8, 8, 8, 16};
    buffers b;
    if (hold(&b, "dense_samples", obj, item, DENSE_NAMES, N_DENSE, fo, go) != 0) {
        return NULL;
    }
    const Py_buffer *in = b.view, fb = b.view[N_DENSE], gb = b.view[N_DENSE + 1];
    PyObject *result = NULL;
    const Py_ssize_t Q = in[0].len / 16, nd = in[5].len / 8, ndu = in[7].len / 8;
    if (K < 0 || m < 0 || n < 1 || in[1].len / 8 != Q || in[2].len / 8 != K * m ||
        in[3].len / 16 != K * n * n || in[4].len / 16 != m * K * n * n ||
        in[6].len / 8 != nd + 1 || fb.len != Q * 16 || gb.len != Q * 16 || mode < DET ||
        mode > SOLVE || (mode == SOLVE && in[8].len / 16 != n)) {
        PyErr_SetString(PyExc_ValueError, "dense_samples: the arrays' sizes do not agree");
        goto done;
    }
    const int64_t *idx = in[1].buf, *delays = in[5].buf, *dstart = in[6].buf, *du = in[7].buf;
    int bad = dense_indices_bad(delays, dstart, du, nd, ndu, m, n);
    for (Py_ssize_t q = 0; q < Q; q++) bad |= idx[q] < 0 || idx[q] >= K;
    if (bad) {
        PyErr_SetString(PyExc_ValueError, "dense_samples: an index lies outside its array");
        goto done;
    }
    arrays x = {0};
    x.s = in[0].buf;
    x.idx = idx;
    x.tau = in[2].buf;
    x.base = in[3].buf;
    x.per = in[4].buf;
    x.delays = delays;
    x.dstart = dstart;
    x.du = du;
    x.mode = mode;
    x.probe = in[8].buf;
    x.f = fb.buf;
    x.g = gb.buf;
    sizes z = {0};
    z.K = K;
    z.m = m;
    z.nT = n;
    z.nd = nd;
    result = run(dense, &x, &z, Q, 2 * n * n + 2 * n, n);
done:
    release(&b);
    return result;
}

#define N_NEWTON 8
static const char *const NEWTON_NAMES[N_NEWTON] = {"s",      "tau", "A0", "A",
                                                   "delays", "dstart", "du", "opts"};

static PyObject *dense_newton(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *obj[N_NEWTON], *fo, *go;
    Py_ssize_t m, n;
    int mode;
    if (!PyArg_ParseTuple(args, "OOOOOOOnniOOO", &obj[0], &obj[1], &obj[2], &obj[3], &obj[4],
                          &obj[5], &obj[6], &m, &n, &mode, &obj[7], &fo, &go)) {
        return NULL;
    }
    const Py_ssize_t item[N_NEWTON] = {16, 8, 16, 16, 8, 8, 8, 8};
    buffers b;
    if (hold(&b, "dense_newton", obj, item, NEWTON_NAMES, N_NEWTON, fo, go) != 0) {
        return NULL;
    }
    const Py_buffer *in = b.view, fb = b.view[N_NEWTON], gb = b.view[N_NEWTON + 1];
    PyObject *result = NULL;
    const Py_ssize_t Q = in[0].len / 16, nd = in[4].len / 8, ndu = in[6].len / 8;
    const Py_ssize_t n_opts = mode == REFINE ? 2 : 6;
    if (m < 0 || n < 1 || in[1].len / 8 != m || in[2].len / 16 != n * n ||
        in[3].len / 16 != m * n * n || in[5].len / 8 != nd + 1 || fb.len != Q * 16 ||
        gb.len != Q * 16 || mode < REFINE || mode > FOLLOW || in[7].len / 8 != n_opts) {
        PyErr_SetString(PyExc_ValueError, "dense_newton: the arrays' sizes do not agree");
        goto done;
    }
    const int64_t *delays = in[4].buf, *dstart = in[5].buf, *du = in[6].buf;
    if (dense_indices_bad(delays, dstart, du, nd, ndu, m, n)) {
        PyErr_SetString(PyExc_ValueError, "dense_newton: an index lies outside its array");
        goto done;
    }
    arrays x = {0};
    x.s = in[0].buf;
    x.tau = in[1].buf;
    x.base = in[2].buf;
    x.per = in[3].buf;
    x.delays = delays;
    x.dstart = dstart;
    x.du = du;
    x.mode = mode;
    x.opts = in[7].buf;
    x.f = fb.buf;
    x.g = gb.buf;
    sizes z = {0};
    z.K = 1;
    z.m = m;
    z.nT = n;
    z.nd = nd;
    result = run(newton_kernel, &x, &z, Q, 2 * n * n + 2 * n, n);
done:
    release(&b);
    return result;
}

/* Damped Newton's steps of many real systems (fluidnet.symbolic.densenewton._step_in and
 * solve_rows are the reference; fluidnet.symbolic.stepkernel calls this). System k of n states:
 *
 *   rows_i = sum_j |J_ij| |x_j|   (1 where it is 0 or not finite)
 *   cols_j = max(|x_j|, 1e-300)   (1 where x_j = 0)
 *   A_ij   = J_ij cols_j / rows_i,  r_i = F_i / rows_i
 *   A y = r by LU with partial pivoting; where a pivot is exactly 0 (where LAPACK's getrf, and so
 *   numpy.linalg.solve, stops) the step of least norm, y = A^+ r, with numpy.linalg.pinv's cut of
 *   the singular values at n eps times the largest, from a one-sided Jacobi SVD (Hestenes);
 *   dX_j = y_j cols_j, NaN where A or r has an entry that is not finite.
 *
 * singular[k] is 1 where the least-norm step was taken. */
#define STEP_SWEEPS 60

/* A y = b in place (A row-major n x n, b becomes y); 1 at an exactly zero pivot (A and b are
 * then spoilt), else 0. */
INLINED int real_lu_solve(double *A, double *b, Py_ssize_t n) {
    for (Py_ssize_t c = 0; c < n; c++) {
        Py_ssize_t p = c;
        double big = fabs(A[c * n + c]);
        for (Py_ssize_t i = c + 1; i < n; i++) {
            if (fabs(A[i * n + c]) > big) {
                big = fabs(A[i * n + c]);
                p = i;
            }
        }
        if (big == 0.0) {
            return 1;
        }
        if (p != c) {
            for (Py_ssize_t j = 0; j < n; j++) {
                double t = A[c * n + j];
                A[c * n + j] = A[p * n + j];
                A[p * n + j] = t;
            }
            double t = b[c];
            b[c] = b[p];
            b[p] = t;
        }
        const double d = A[c * n + c];
        for (Py_ssize_t i = c + 1; i < n; i++) {
            const double l = A[i * n + c] / d;
            if (l != 0.0) {
                for (Py_ssize_t j = c + 1; j < n; j++) {
                    A[i * n + j] -= l * A[c * n + j];
                }
                b[i] -= l * b[c];
            }
        }
    }
    for (Py_ssize_t i = n - 1; i >= 0; i--) {
        double v = b[i];
        for (Py_ssize_t j = i + 1; j < n; j++) {
            v -= A[i * n + j] * b[j];
        }
        b[i] = v / A[i * n + i];
    }
    return 0;
}

/* y = A^+ b (A row-major n x n, overwritten; V: n n of work space). The columns of A are
 * rotated in pairs until every pair is orthogonal to rounding (A V = U S); then
 * y = sum over singular values s_i > n eps max s of V_i (U S)_i . b / s_i^2. */
static void min_norm_solve(double *A, const double *b, double *y, Py_ssize_t n, double *V) {
    for (Py_ssize_t i = 0; i < n * n; i++) {
        V[i] = 0.0;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        V[i * n + i] = 1.0;
    }
    const double eps = 2.220446049250313e-16;
    for (int sweep = 0; sweep < STEP_SWEEPS; sweep++) {
        int rotated = 0;
        for (Py_ssize_t p = 0; p < n - 1; p++) {
            for (Py_ssize_t q = p + 1; q < n; q++) {
                double alpha = 0.0, beta = 0.0, gamma = 0.0;
                for (Py_ssize_t i = 0; i < n; i++) {
                    const double ap = A[i * n + p], aq = A[i * n + q];
                    alpha += ap * ap;
                    beta += aq * aq;
                    gamma += ap * aq;
                }
                if (gamma == 0.0 || fabs(gamma) <= eps * sqrt(alpha) * sqrt(beta)) {
                    continue;
                }
                rotated = 1;
                const double zeta = (beta - alpha) / (2.0 * gamma);
                const double t = (zeta >= 0.0 ? 1.0 : -1.0) / (fabs(zeta) + hypot(1.0, zeta));
                const double c = 1.0 / sqrt(1.0 + t * t), s = c * t;
                for (Py_ssize_t i = 0; i < n; i++) {
                    const double ap = A[i * n + p], aq = A[i * n + q];
                    A[i * n + p] = c * ap - s * aq;
                    A[i * n + q] = s * ap + c * aq;
                    const double vp = V[i * n + p], vq = V[i * n + q];
                    V[i * n + p] = c * vp - s * vq;
                    V[i * n + q] = s * vp + c * vq;
                }
            }
        }
        if (!rotated) {
            break;
        }
    }
    double smax = 0.0;
    for (Py_ssize_t j = 0; j < n; j++) {
        double norm2 = 0.0;
        for (Py_ssize_t i = 0; i < n; i++) {
            norm2 += A[i * n + j] * A[i * n + j];
        }
        smax = fmax(smax, sqrt(norm2));
    }
    const double cut = (double)n * eps * smax;
    for (Py_ssize_t i = 0; i < n; i++) {
        y[i] = 0.0;
    }
    for (Py_ssize_t j = 0; j < n; j++) {
        double norm2 = 0.0, proj = 0.0;
        for (Py_ssize_t i = 0; i < n; i++) {
            norm2 += A[i * n + j] * A[i * n + j];
            proj += A[i * n + j] * b[i];
        }
        if (!(sqrt(norm2) > cut)) {
            continue;
        }
        const double w = proj / norm2;
        for (Py_ssize_t i = 0; i < n; i++) {
            y[i] += V[i * n + j] * w;
        }
    }
}

/* The steps of the K systems (work: 3 n n + 2 n doubles). */
static void scaled_steps_kernel(const double *J, const double *F, const double *X, double *dX,
                                double *r, double *rows, double *singular, Py_ssize_t K,
                                Py_ssize_t n, double *work) {
    double *A = work, *V = work + n * n, *keep = work + 2 * n * n, *cols = keep + n * n,
           *y = cols + n;
    for (Py_ssize_t k = 0; k < K; k++) {
        const double *Jk = J + k * n * n, *Fk = F + k * n, *Xk = X + k * n;
        double *dXk = dX + k * n, *rk = r + k * n, *rowsk = rows + k * n;
        int finite = 1;
        for (Py_ssize_t j = 0; j < n; j++) {
            const double a = fabs(Xk[j]);
            cols[j] = a > 0.0 ? fmax(a, 1e-300) : 1.0;
        }
        for (Py_ssize_t i = 0; i < n; i++) {
            double size = 0.0;
            for (Py_ssize_t j = 0; j < n; j++) {
                size += fabs(Jk[i * n + j]) * fabs(Xk[j]);
            }
            rowsk[i] = size > 0.0 && isfinite(size) ? size : 1.0;
            rk[i] = Fk[i] / rowsk[i];
            finite &= isfinite(rk[i]);
            for (Py_ssize_t j = 0; j < n; j++) {
                const double a = Jk[i * n + j] * cols[j] / rowsk[i];
                A[i * n + j] = a;
                finite &= isfinite(a);
            }
        }
        singular[k] = 0.0;
        if (!finite) {
            for (Py_ssize_t j = 0; j < n; j++) {
                dXk[j] = NAN;
            }
            continue;
        }
        memcpy(keep, A, (size_t)(n * n) * sizeof(double));
        memcpy(y, rk, (size_t)n * sizeof(double));
        if (real_lu_solve(A, y, n)) {
            singular[k] = 1.0;
            min_norm_solve(keep, rk, y, n, V);
        }
        for (Py_ssize_t j = 0; j < n; j++) {
            dXk[j] = y[j] * cols[j];
        }
    }
}

#define N_STEPS 7
static const char *const STEP_NAMES[N_STEPS] = {"J", "F", "X", "dX", "r", "rows", "singular"};

static PyObject *scaled_steps(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *obj[N_STEPS];
    Py_ssize_t K, n;
    if (!PyArg_ParseTuple(args, "OOOOOOOnn", &obj[0], &obj[1], &obj[2], &obj[3], &obj[4],
                          &obj[5], &obj[6], &K, &n)) {
        return NULL;
    }
    buffers b;
    b.count = 0;
    PyObject *result = NULL;
    for (int a = 0; a < N_STEPS; a++) {
        int flags = PyBUF_C_CONTIGUOUS | (a < 3 ? 0 : PyBUF_WRITABLE);
        if (PyObject_GetBuffer(obj[a], &b.view[a], flags) != 0) {
            goto done;
        }
        b.count++;
        const Py_ssize_t want = (a == 0 ? K * n * n : (a == N_STEPS - 1 ? K : K * n)) * 8;
        if (K < 0 || n < 1 || b.view[a].len != want) {
            PyErr_Format(PyExc_ValueError, "scaled_steps: %s has %zd bytes, not %zd (K=%zd, n=%zd "
                         "float64)", STEP_NAMES[a], b.view[a].len, want, K, n);
            goto done;
        }
    }
    double *work = malloc((size_t)(3 * n * n + 2 * n + 1) * sizeof(double));
    if (work == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    Py_BEGIN_ALLOW_THREADS
    scaled_steps_kernel(b.view[0].buf, b.view[1].buf, b.view[2].buf, b.view[3].buf, b.view[4].buf,
                        b.view[5].buf, b.view[6].buf, K, n, work);
    Py_END_ALLOW_THREADS
    free(work);
    result = Py_NewRef(Py_None);
done:
    release(&b);
    return result;
}

static PyMethodDef methods[] = {
    {"schur_samples", schur_samples, METH_VARARGS,
     "schur_samples(s, idx, tau, base, per, delays, dstart, du, tt, tt_at, ts, st, i, starts, "
     "places, K, m, U, nS, nT, mode, probe, ts_a, ts_i, ts_at, st_i, st_b, st_at, f, g): "
     "det Delta (mode 0; its phase: 1; ||Delta^-1 probe||: 2) and its logarithmic derivative at every sample, written "
     "into f and g (see fluidnet/linear/stacked.py)."},
    {"dense_samples", dense_samples, METH_VARARGS,
     "dense_samples(s, idx, tau, A0, A, delays, dstart, du, K, m, n, mode, probe, f, g): the "
     "same on the whole n x n characteristic matrices (A0 (K, n n), A (m, K, n n))."},
    {"dense_newton", dense_newton, METH_VARARGS,
     "dense_newton(s, tau, A0, A, delays, dstart, du, m, n, mode, opts, f, g): Newton's method on "
     "det Delta of one whole system from every start s (mode 0: a refinement, 1: a root path's "
     "corrector; see newton_kernel in fluidnet/linear/src/samples.c), the iterates into f."},
    {"scaled_steps", scaled_steps, METH_VARARGS,
     "scaled_steps(J, F, X, dX, r, rows, singular, K, n): the damped Newton steps of K real "
     "systems of n states, rows scaled by their sizes and columns by the states' magnitudes "
     "(fluidnet.symbolic.densenewton._step_in), into dX, r, rows; singular[k] = 1 where the "
     "step of least norm was taken."},
    {NULL, NULL, 0, NULL},
};

static int exec_module(PyObject *m) {
    return PyModule_AddStringConstant(m, "SOURCE_DIGEST", FLUIDNET_SOURCE_DIGEST);
}

static PyModuleDef_Slot slots[] = {
    {Py_mod_exec, exec_module},
    {0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_samples", "det Delta samples through the Schur complement.", 0,
    methods, slots, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__samples(void) { return PyModuleDef_Init(&module); }
