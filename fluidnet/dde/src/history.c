/* Storage and evaluation of the solution history (piecewise polynomials).
 *
 * The past of a run is a sequence of pieces [mt[k], mt[k+1]] (k < nm), each holding, per
 * state, the NCOEF power-basis coefficients of a polynomial in
 * theta = (s - mt[k]) / (mt[k+1] - mt[k]). The pieces before t0 come from the user's history;
 * the pieces after t0 are the integrator's dense output, one per accepted step. During a step,
 * values beyond the last stored time come from the trial polynomial cc of the step being
 * attempted, over [trial_t, trial_t + trial_h].
 */
#include "kernel.h"

/* sum_j c[j] th^j */
double fn_horner(const double *c, double th)
{
    double v = c[NCOEF - 1];
    for (int j = NCOEF - 2; j >= 0; j--)
        v = v * th + c[j];
    return v;
}

/* d/dth sum_j c[j] th^j */
double fn_horner_deriv(const double *c, double th)
{
    const int m = NCOEF;
    double v = (double)(m - 1) * c[m - 1];
    for (int j = m - 2; j > 0; j--)
        v = v * th + (double)j * c[j];
    return v;
}

/* Index k with mt[k] <= s <= mt[k+1] (s inside [mt[0], mt[nm]]). */
int64_t fn_find_piece(const double *mt, int64_t nm, double s, int64_t hint)
{
    int64_t k = hint;
    if (k < 0 || k >= nm)
        k = nm - 1;
    if (mt[k] <= s && s <= mt[k + 1])
        return k;
    /* a few linear moves (lags advance with time), then bisection */
    for (int move = 0; move < 4; move++) {
        if (s > mt[k + 1] && k + 1 < nm)
            k += 1;
        else if (s < mt[k] && k > 0)
            k -= 1;
        else
            break;
        if (mt[k] <= s && s <= mt[k + 1])
            return k;
    }
    int64_t lo = 0, hi = nm - 1;
    while (lo < hi) {
        int64_t mid = (lo + hi + 1) / 2;
        if (mt[mid] <= s)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

/* Value of state i at time s; k indexes the search hint (a lag).
 *
 * md.hstart[i] is the earliest time the history of state i is defined (-inf for a constant
 * history, which extends the first piece's constant to the left). Sets st->future when s lies
 * in the step being attempted, st->cause on failure. */
double fn_lookup(int64_t i, double s, int64_t k, fn_state *st, fn_run *r)
{
    const double *mt = r->hs.mt;
    const int64_t nm = st->nm, n = r->n;
    double v;
    if (s > mt[nm]) {
        st->future = true;
        v = fn_horner(r->hs.cc + i * NCOEF, (s - st->trial_t) / st->trial_h);
    } else if (s < r->md.hstart[i]) {
        st->cause = ST_HIST_RANGE;
        st->index = i;
        return NAN;
    } else if (s < st->dropped_before) {
        st->cause = ST_DROPPED;
        st->index = i;
        return NAN;
    } else if (s < mt[0]) {
        v = r->hs.mc[i * NCOEF];
    } else {
        const int64_t j = fn_find_piece(mt, nm, s, r->fw.hints[k]);
        r->fw.hints[k] = j;
        v = fn_horner(r->hs.mc + (j * n + i) * NCOEF, (s - mt[j]) / (mt[j + 1] - mt[j]));
    }
    if (r->md.nonneg[i] == 1 && v < 0.0)
        v = 0.0;
    return v;
}

/* Time derivative of state i at s (0 left of the stored pieces: constants). */
double fn_lookup_deriv(int64_t i, double s, int64_t k, fn_state *st, fn_run *r)
{
    const double *mt = r->hs.mt;
    const int64_t nm = st->nm, n = r->n;
    if (s > mt[nm])
        return fn_horner_deriv(r->hs.cc + i * NCOEF, (s - st->trial_t) / st->trial_h) /
               st->trial_h;
    if (s < mt[0])
        return 0.0;
    const int64_t j = fn_find_piece(mt, nm, s, r->fw.hints[k]);
    const double hj = mt[j + 1] - mt[j];
    return fn_horner_deriv(r->hs.mc + (j * n + i) * NCOEF, (s - mt[j]) / hj) / hj;
}
