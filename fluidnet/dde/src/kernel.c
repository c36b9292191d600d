/* The integration loop: adaptive embedded Runge-Kutta for delay equations.
 *
 * fn_advance integrates one trajectory from its current state until t_end, a failure, or a
 * work budget; the Python driver calls it again to resume (so that Ctrl-C is seen between
 * calls, and the mesh can be enlarged or, with dense=False, trimmed). A step goes through
 * named phases:
 *
 * 1. fn_propose_step (control.c): the step size, landing on the next discontinuity point;
 * 2. fn_attempt (step.c): the stages of the method given as data, with lagged values that fall
 *    inside the step taken from the step's own continuous extension (a fixed-point
 *    iteration), and the local error in a mixed absolute/relative RMS norm;
 * 3. fn_rejected_step or fn_next_step (control.c): the step-size controller;
 * 4. fn_sdep_crossings (discontinuities.c): state-dependent lags crossing a discontinuity;
 * 5. fn_find_events (events.c): events on the dense output (a projected state reaching 0, a
 *    held state released, a switching function changing sign, a sliding weight leaving
 *    [0, 1]);
 * 6. commit: cut the step at the event, store its dense output (the history of later steps),
 *    write the requested outputs;
 * 7. restart: the mode change and the field at the new start;
 * 8. fn_landed (discontinuities.c): the discontinuity points reached, propagated through the
 *    delays up to the order of the method.
 *
 * Failure is reported in the state record (cause, time, index and value at fault); the Python
 * driver turns it into an IntegrationError.
 */
#include "kernel.h"

#define ZENO_LIMIT 200 /* mode changes at one time before the run is declared Zeno */

/* Record a failure (the cause is st->cause; non-finite values if none) and return it. */
static int64_t fail(fn_state *st, double h)
{
    st->status = st->cause != ST_OK ? st->cause : ST_NONFINITE;
    st->fail_t = st->t;
    st->fail_h = h;
    return st->status;
}

/* Switch values, sliding weights and lag arguments at the start of the next step. */
static void remember_start(fn_state *st, fn_run *r)
{
    for (int64_t j = 0; j < st->nsw; j++) {
        r->mk.sv0[j] = r->fw.sv[j];
        r->mk.lam0[j] = r->fw.lam[j];
    }
    for (int64_t k = 0; k < r->nl1; k++)
        r->mk.largs0[k] = r->fw.largs[k];
}

/* Modes at t0: switch sides from the switching functions, projected states held. */
static bool initial_modes(fn_state *st, fn_run *r)
{
    const double t = st->t;
    double *y = r->sw.y;
    fn_field *fw = &r->fw;
    const int64_t nsw = st->nsw;
    if (nsw > 0) {
        for (int64_t pass = 0; pass < nsw; pass++) {
            r->md.sw(t, y, fw->z, r->md.p, fw->w, fw->kbuf, fw->sv);
            for (int64_t j = 0; j < nsw; j++)
                fw->w[j] = fw->sv[j] > 0.0 ? 1.0 : 0.0;
        }
        r->md.sw(t, y, fw->z, r->md.p, fw->w, fw->kbuf, fw->sv);
        for (int64_t j = 0; j < nsw; j++)
            if (fw->sv[j] == 0.0) {
                fw->w[j] = 0.0;
                if (!fn_decide(j, t, st, r))
                    return false;
            }
    }
    if (!fn_start_field(t, st, r))
        return false;
    bool held = false;
    for (int64_t i = 0; i < r->n; i++)
        if (r->md.nonneg[i] == 1 && y[i] == 0.0 && r->sw.Kraw[i] <= 0.0) {
            fw->stuck[i] = 1;
            held = true;
        }
    return !held || fn_start_field(t, st, r);
}

/* Constant and parameter delays (once), and the jump of the derivative at t0. */
static void delays_and_marks(fn_state *st, fn_run *r)
{
    const double t0 = st->t;
    fn_field *fw = &r->fw;
    fn_model *md = &r->md;
    for (int64_t k = 0; k < r->nlag; k++) {
        if (md->lag_sdep[k] == 1 && k < MAX_SDEP_LAGS) {
            st->any_sdep = true;
            st->sdep_mask |= (int64_t)1 << k;
        }
        if (md->lag_sdep[k] == 0) {
            /* constant and parameter delays depend on parameters only */
            fw->kbuf[0] = (double)k;
            md->delay(t0, fw->xe, fw->z, md->p, fw->w, fw->kbuf, fw->kbuf);
            md->tauc[k] = fw->kbuf[0];
            st->max_delay = fn_max(st->max_delay, md->tauc[k]);
        }
    }
    /* t0 carries a jump in the first derivative (history slope vs. field) */
    const double tol0 = MERGE * fn_max(1.0, fabs(t0));
    const int64_t first_order = 2; /* the second derivative jumps at t0 + tau */
    if (st->track_level >= 2) {
        for (int64_t k = 0; k < r->nlag; k++) {
            const double tau = md->tauc[k];
            if (md->lag_sdep[k] == 0 && tau > tol0 && t0 + tau < st->t_end)
                st->ndp = fn_push(r->dc.dp_t, r->dc.dp_l, st->ndp, t0 + tau, first_order, tol0);
        }
        if (st->any_sdep) {
            r->dc.dw_t[0] = t0;
            r->dc.dw_l[0] = 1;
            st->ndw = 1;
        }
    }
}

/* Values at the requested output times in (st->t, t_new] from the step's polynomial. */
static void output(fn_state *st, fn_run *r, const double *cn, double t_new)
{
    const int64_t n = r->n;
    const double *t_eval = r->out.t_eval;
    while (st->ie < r->ne && t_eval[st->ie] <= t_new) {
        const double th = (t_eval[st->ie] - st->t) / (t_new - st->t);
        for (int64_t i = 0; i < n; i++) {
            double v = fn_horner(cn + i * NCOEF, th);
            if (r->md.nonneg[i] == 1 && v < 0.0)
                v = 0.0;
            r->out.y_eval[st->ie * n + i] = v;
        }
        st->ie += 1;
    }
}

/* Everything before the first step: delays, outputs at t0, modes, the first step size. */
static bool start(fn_state *st, fn_run *r)
{
    const int64_t n = r->n;
    double *y = r->sw.y;
    for (int64_t i = 0; i < n; i++)
        r->fw.xe[i] = y[i];
    delays_and_marks(st, r);
    while (st->ie < r->ne && r->out.t_eval[st->ie] <= st->t) {
        for (int64_t i = 0; i < n; i++)
            r->out.y_eval[st->ie * n + i] = y[i];
        st->ie += 1;
    }
    if (!fn_eval_lags(st->t, y, st, r))
        return false;
    if (!initial_modes(st, r))
        return false;
    double h;
    if (st->h_first > 0.0) {
        h = st->h_first;
    } else {
        h = fn_initial_step(st, r);
        st->cause = ST_OK;
        /* the probe evaluation disturbed the start-point buffers: recompute them */
        fn_start_field(st->t, st, r);
    }
    st->h = fn_min(h, st->h_max);
    remember_start(st, r);
    return true;
}

/* An event at the step's start: change the mode without stepping; false on failure. */
static bool event_now(fn_state *st, fn_run *r)
{
    st->nzero += 1;
    if (st->nzero > ZENO_LIMIT) {
        st->cause = ST_ZENO;
        st->index = st->ev_index;
        st->fault_value = (double)st->ev_type;
        st->fault_time = st->t;
        return false;
    }
    if (!fn_apply_event(st->ev_type, st->ev_index, st->t, st, r))
        return false;
    st->events += 1;
    st->smooth_start = false;
    remember_start(st, r);
    st->h = st->h_prop;
    return true;
}

/* Accept the step (cut at the event, if any): store its piece, write outputs, advance. */
static void commit(fn_state *st, fn_run *r)
{
    const int64_t n = r->n;
    double *cn = r->sw.cn, *ynew = r->sw.ynew, *y = r->sw.y;
    double th_end = 1.0;
    if (st->ev_type != EV_NONE && st->ev_theta < 1.0) {
        th_end = st->ev_theta;
        double sc = 1.0;
        for (int64_t j = 0; j < NCOEF; j++) {
            for (int64_t i = 0; i < n; i++)
                cn[i * NCOEF + j] *= sc;
            sc *= th_end;
        }
        for (int64_t i = 0; i < n; i++)
            ynew[i] = fn_horner(cn + i * NCOEF, 1.0);
        st->land = false;
        st->sd_m = -1;
    }
    double t_new = st->t + th_end * st->h;
    if (st->land && th_end == 1.0)
        t_new = st->target;
    if (st->ev_type == EV_ARRIVE) {
        const int64_t i = st->ev_index;
        cn[i * NCOEF + 2] -= ynew[i];
        ynew[i] = 0.0;
    }
    for (int64_t i = 0; i < n; i++)
        if (r->md.nonneg[i] == 1 && ynew[i] < 0.0)
            ynew[i] = 0.0;
    const int64_t nm = st->nm;
    double *piece = r->hs.mc + nm * n * NCOEF;
    for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < NCOEF; j++)
            piece[i * NCOEF + j] = cn[i * NCOEF + j];
    r->hs.mt[nm + 1] = t_new;
    st->nm = nm + 1;
    st->steps += 1;
    for (int64_t i = 0; i < n; i++)
        if (r->fw.stuck[i] == 1)
            r->out.btime[i] += t_new - st->t;
    for (int64_t j = 0; j < st->nsw; j++)
        if (r->fw.slide[j] == 1) {
            /* the equivalent control, averaged with the method's quadrature weights */
            double wbar = 0.0;
            for (int64_t s = 0; s < r->S; s++)
                wbar += r->rk.Q[s] * r->sw.lams[s * r->ns1 + j];
            r->out.slide_time[j] += t_new - st->t;
            r->out.slide_weight[j] += (t_new - st->t) * wbar;
        }
    output(st, r, cn, t_new);
    st->t = t_new;
    for (int64_t i = 0; i < n; i++)
        y[i] = ynew[i];
    /* lookups beyond the stored history are impossible now; keep cc harmless */
    st->trial_t = t_new;
    st->trial_h = 1.0;
    double *cc = r->hs.cc;
    for (int64_t i = 0; i < n; i++) {
        cc[i * NCOEF] = y[i];
        for (int64_t j = 1; j < NCOEF; j++)
            cc[i * NCOEF + j] = 0.0;
    }
}

/* The start of the next step: the mode change of an event, or the last stage (FSAL). */
static bool restart(fn_state *st, fn_run *r)
{
    const double t = st->t;
    const int64_t n = r->n;
    if (st->ev_type != EV_NONE) {
        if (!fn_apply_event(st->ev_type, st->ev_index, t, st, r))
            return false;
        st->events += 1;
        st->smooth_start = false;
        fn_propagate_below(t, fn_imax(1, st->track_level - st->event_generations), st, r);
    } else {
        st->smooth_start = true;
        if (st->touched || !st->fsal) {
            if (!fn_start_field(t, st, r))
                return false;
        } else {
            const int64_t last = r->S - 1;
            for (int64_t i = 0; i < n; i++) {
                r->sw.K[i] = r->sw.K[last * n + i];
                r->sw.Kraw[i] = r->sw.Kraw[last * n + i];
            }
            for (int64_t j = 0; j < st->nsw; j++) {
                r->fw.sv[j] = r->mk.sv1[j];
                r->fw.lam[j] = r->mk.lam1[j];
            }
            for (int64_t k = 0; k < r->nl1; k++)
                r->fw.largs[k] = r->mk.largs1[k];
        }
    }
    remember_start(st, r);
    return true;
}

/* The trial step passed: its dense output answers lookups inside the step from now on. */
static void accept_trial(fn_state *st, fn_run *r)
{
    const double *cn = r->sw.cn;
    double *cc = r->hs.cc;
    for (int64_t i = 0; i < r->n * NCOEF; i++)
        cc[i] = cn[i];
    st->trial_t = st->t;
    st->trial_h = st->h;
    for (int64_t j = 0; j < st->nsw; j++) {
        r->mk.sv1[j] = r->fw.sv[j];
        r->mk.lam1[j] = r->fw.lam[j];
    }
    for (int64_t k = 0; k < r->nl1; k++)
        r->mk.largs1[k] = r->fw.largs[k];
    st->touched = false; /* dense evaluations clobbered the end-point buffers */
}

/* Whether the mesh and the discontinuity lists can take one more step. */
static bool room(const fn_state *st, const fn_run *r)
{
    return st->nm + 1 < r->cap && st->ndp + 3 * r->nlag + 1 <= r->ndp_cap &&
           st->ndw + 4 <= r->ndw_cap;
}

/* Integrate until t_end, a failure, or budget step attempts; returns st->status.
 *
 * ST_PAUSED and ST_NEED_SPACE ask the caller to call again (after enlarging the arrays for
 * the latter); the run resumes exactly where it stopped. */
int64_t fn_advance(fn_state *st, fn_run *r, int64_t budget)
{
    if (!st->started) {
        st->started = true;
        if (!start(st, r))
            return fail(st, 0.0);
    }
    int64_t attempts = 0;
    while (st->t < st->t_end) {
        if (attempts >= budget) {
            st->status = ST_PAUSED;
            return st->status;
        }
        if (!room(st, r)) {
            st->status = ST_NEED_SPACE;
            return st->status;
        }
        attempts += 1;
        if (st->steps >= st->max_steps) {
            st->cause = ST_MAX_STEPS;
            return fail(st, st->h);
        }
        fn_propose_step(st, r);
        st->cause = ST_OK;
        const int64_t iterations = st->iterations;
        for (int64_t j = 0; j < st->nsw; j++) {
            r->sw.svs[j] = r->mk.sv0[j];
            r->sw.lams[j] = r->mk.lam0[j];
        }
        st->err = fn_attempt(st, r);
        if (!(st->err <= 1.0)) {
            if (!fn_rejected_step(st))
                return fail(st, st->h);
            continue;
        }
        st->last_cause = ST_OK;
        if (st->rate >= 0.0)
            st->k_est = 0.7 * st->k_est + 0.3 * (double)(st->iterations - iterations);
        accept_trial(st, r);
        const int crossing = fn_sdep_crossings(st, r);
        if (crossing == SD_REDO || crossing == SD_AT_START) {
            st->cause = ST_OK;
            continue;
        }
        fn_find_events(st, r);
        if (st->ev_type != EV_NONE && st->ev_theta * st->h <= st->hmin) {
            if (!event_now(st, r))
                return fail(st, st->h);
            continue;
        }
        st->nzero = 0;
        const double t_old = st->t;
        const double h = st->h;
        commit(st, r);
        if (!restart(st, r))
            return fail(st, h);
        fn_landed(st, r, st->land && st->target_disc >= 0 && st->t == st->target);
        fn_next_step(st, h);
        if (!(st->t > t_old)) {
            st->cause = ST_UNDERFLOW;
            return fail(st, st->h);
        }
    }
    st->status = ST_OK;
    return st->status;
}
