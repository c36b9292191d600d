/* Derivative discontinuity points: pending landings, watched points, and their propagation.
 *
 * The solution's derivatives jump at t0 and at events, and the jumps propagate through the
 * delays. Constant and parameter delays move a jump at xi to xi + tau: a landing point
 * (dc.dp_t, with its derivative order in dc.dp_l) that a step is made to end on. For
 * state-dependent delays the successor is where t - tau(t, x) reaches xi: xi is a watched
 * point (dc.dw_t; dc.dw_done has bit k set once lag k has passed it), located on the dense
 * output of each accepted step.
 *
 * The arrays never grow here: the driver enlarges them between calls of the kernel (the
 * kernel asks with ST_NEED_SPACE before a step could overflow them).
 */
#include "kernel.h"

#define SDEP_LAND 1e-6 /* a state-dependent crossing this close to the step end is landed */

/* Add a landing point (merged with one within tol); returns the new count. */
int64_t fn_push(double *times, int64_t *levels, int64_t count, double xi, int64_t level,
                double tol)
{
    for (int64_t m = 0; m < count; m++)
        if (fabs(times[m] - xi) <= tol) {
            if (level < levels[m])
                levels[m] = level;
            return count;
        }
    times[count] = xi;
    levels[count] = level;
    return count + 1;
}

/* Successors of a discontinuity of derivative order level at xi (order + 1). */
static void propagate(double xi, int64_t level, fn_state *st, fn_run *r)
{
    fn_disc *dc = &r->dc;
    const double tol = MERGE * fn_max(1.0, fabs(xi));
    for (int64_t k = 0; k < r->nlag; k++)
        if (r->md.lag_sdep[k] == 0 && r->md.tauc[k] > tol && xi + r->md.tauc[k] < st->t_end)
            st->ndp = fn_push(dc->dp_t, dc->dp_l, st->ndp, xi + r->md.tauc[k], level + 1, tol);
    if (st->any_sdep) {
        for (int64_t m = 0; m < st->ndw; m++)
            if (fabs(dc->dw_t[m] - xi) <= tol)
                return;
        dc->dw_t[st->ndw] = xi;
        dc->dw_l[st->ndw] = level;
        dc->dw_done[st->ndw] = 0;
        st->ndw += 1;
    }
}

/* Propagate a discontinuity of order level when it is below the tracked order. */
void fn_propagate_below(double xi, int64_t level, fn_state *st, fn_run *r)
{
    if (level < st->track_level)
        propagate(xi, level, st, r);
}

/* The nearest pending landing point after st->t (t_end if none): sets st->target. */
void fn_next_landing(fn_state *st, fn_run *r)
{
    st->target = st->t_end;
    st->target_disc = -1;
    for (int64_t m = 0; m < st->ndp; m++)
        if (r->dc.dp_t[m] > st->t + st->tol_m && r->dc.dp_t[m] < st->target) {
            st->target = r->dc.dp_t[m];
            st->target_disc = m;
        }
}

/* State-dependent lag arguments crossing a watched point in the accepted trial step.
 *
 * Returns SD_NONE; SD_REDO with st->h shortened to end on the earliest crossing;
 * SD_AT_START when the crossing is at the step's start (recorded and propagated); or SD_LAND
 * when the step ends on it (st->sd_m, st->sd_k: recorded after the step). */
int fn_sdep_crossings(fn_state *st, fn_run *r)
{
    fn_disc *dc = &r->dc;
    st->sd_m = -1;
    st->sd_k = -1;
    if (!st->any_sdep || st->ndw == 0)
        return SD_NONE;
    double best = 2.0;
    int64_t bm = -1, bk = -1;
    for (int64_t m = 0; m < st->ndw; m++) {
        const double xi = dc->dw_t[m];
        const double tx = MERGE * fn_max(1.0, fabs(xi));
        for (int64_t k = 0; k < r->nlag; k++) {
            if (r->md.lag_sdep[k] == 0 || k >= MAX_SDEP_LAGS || ((dc->dw_done[m] >> k) & 1))
                continue;
            const double g0 = r->mk.largs0[k] - xi;
            const double g1 = r->mk.largs1[k] - xi;
            if (fabs(g0) <= tx) {
                dc->dw_done[m] |= (int64_t)1 << k;
                continue;
            }
            if (g0 * g1 > 0.0 && fabs(g1) > tx)
                continue;
            double th;
            if (fabs(g1) <= tx) {
                th = 1.0;
            } else {
                const double sgn = g0 > 0.0 ? 1.0 : -1.0;
                double a;
                st->touched = true;
                fn_target(st, EV_SDEP, k, xi, sgn);
                fn_locate(0.0, 1.0, sgn * g0, sgn * g1, st, r, &a, &th);
            }
            if (th < best) {
                best = th;
                bm = m;
                bk = k;
            }
        }
    }
    if (bm < 0)
        return SD_NONE;
    if (best < 1.0 - SDEP_LAND && best * st->h > st->hmin) {
        /* redo the step so that it ends on the crossing */
        st->h = best * st->h;
        return SD_REDO;
    }
    if (best * st->h <= st->hmin) {
        /* the crossing is at the current time */
        dc->dw_done[bm] |= (int64_t)1 << bk;
        st->discontinuities += 1;
        fn_propagate_below(st->t, dc->dw_l[bm] + 1, st, r);
        st->h = st->h_prop;
        return SD_AT_START;
    }
    st->sd_m = bm;
    st->sd_k = bk;
    return SD_LAND;
}

/* Bookkeeping after an accepted step: the landing point or crossing reached, propagated. */
void fn_landed(fn_state *st, fn_run *r, bool at_target)
{
    fn_disc *dc = &r->dc;
    const double t = st->t;
    if (at_target) {
        int64_t level = dc->dp_l[st->target_disc];
        st->discontinuities += 1;
        /* drop every pending point at this time */
        int64_t m = 0;
        while (m < st->ndp) {
            if (fabs(dc->dp_t[m] - t) <= st->tol_m || dc->dp_t[m] < t) {
                if (dc->dp_l[m] < level)
                    level = dc->dp_l[m];
                dc->dp_t[m] = dc->dp_t[st->ndp - 1];
                dc->dp_l[m] = dc->dp_l[st->ndp - 1];
                st->ndp -= 1;
            } else {
                m += 1;
            }
        }
        fn_propagate_below(t, level, st, r);
    }
    if (st->sd_m >= 0) {
        dc->dw_done[st->sd_m] |= (int64_t)1 << st->sd_k;
        st->discontinuities += 1;
        fn_propagate_below(t, dc->dw_l[st->sd_m] + 1, st, r);
    }
    if (st->any_sdep) {
        /* forget watch points every state-dependent lag has passed */
        int64_t m = 0;
        while (m < st->ndw) {
            if ((dc->dw_done[m] & st->sdep_mask) == st->sdep_mask) {
                dc->dw_t[m] = dc->dw_t[st->ndw - 1];
                dc->dw_l[m] = dc->dw_l[st->ndw - 1];
                dc->dw_done[m] = dc->dw_done[st->ndw - 1];
                st->ndw -= 1;
            } else {
                m += 1;
            }
        }
    }
}
