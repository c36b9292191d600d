/* Step-size selection: the first step, the proposal for the next one, and the controller.
 *
 * One controller serves accepted and rejected steps: h_new = h * step_factor(err, expo, cap)
 * with expo = 1 / (error_order + 1); cap is the largest growth (FACMAX after an accepted step,
 * 1 after a rejection, so a step that just failed does not grow).
 */
#include "kernel.h"

#define SAFETY 0.9
#define FACMIN 0.2
#define FACMAX 5.0
#define GROW_ITER 2.0 /* largest step growth when lags fell inside the step */
#define RATE_MAX 0.5  /* largest contraction rate of that iteration before steps shorten */
#define HMIN_FAC (64.0 * DBL_EPSILON)

/* Factor on h for a scaled error err (finite), at most cap. */
static double step_factor(double err, double expo, double cap)
{
    if (err == 0.0)
        return cap;
    return fn_min(cap, fn_max(FACMIN, SAFETY * pow(err, -expo)));
}

/* First step size from the field at the start and an Euler probe (Hairer-Norsett-Wanner). */
double fn_initial_step(fn_state *st, fn_run *r)
{
    fn_step *sw = &r->sw;
    const double *y = sw->y, *K = sw->K;
    const int64_t n = r->n;
    const double t0 = st->t;
    const double d0 = fn_rms(y, y, y, st->rtol, sw->atol, n);
    const double d1 = fn_rms(K, y, y, st->rtol, sw->atol, n);
    double h0 = (d0 < 1e-5 || d1 < 1e-5) ? 1e-6 : 0.01 * d0 / d1;
    h0 = fn_min(fn_min(h0, st->h_max), st->t_end - t0);
    double *cc = r->hs.cc;
    for (int64_t i = 0; i < n; i++) {
        sw->ytmp[i] = y[i] + h0 * K[i];
        cc[i * NCOEF] = y[i];
        cc[i * NCOEF + 1] = h0 * K[i];
        for (int64_t j = 2; j < NCOEF; j++)
            cc[i * NCOEF + j] = 0.0;
    }
    st->trial_t = t0;
    st->trial_h = h0;
    if (fn_feval(t0 + h0, sw->ytmp, sw->fa, sw->fra, st, r)) {
        for (int64_t i = 0; i < n; i++)
            sw->etmp[i] = (sw->fa[i] - K[i]) / h0;
        const double d2 = fn_rms(sw->etmp, y, y, st->rtol, sw->atol, n);
        const double mx = fn_max(d1, d2);
        const double h1 = mx <= 1e-15 ? fn_max(1e-6, h0 * 1e-3)
                                      : pow(0.01 / mx, 1.0 / (double)st->order);
        return fn_min(100.0 * h0, h1);
    }
    return h0;
}

/* The next attempted step: at most h_max, landing on the next discontinuity point.
 *
 * Sets st->h (the attempt), st->h_prop (what the controller asked for), st->land (the step
 * ends on st->target), st->hmin and st->tol_m at the current time. */
void fn_propose_step(fn_state *st, fn_run *r)
{
    const double t = st->t;
    st->hmin = HMIN_FAC * fn_max(1.0, fabs(t));
    st->tol_m = MERGE * fn_max(1.0, fabs(t));
    fn_next_landing(st, r);
    double h = fn_min(st->h, st->h_max);
    /* A step longer than a delay needs the iteration; a step capped at the smallest delay
       needs none. Take the cheaper per unit time, judged by the recent iteration count. */
    double tau_min = INFINITY;
    for (int64_t k = 0; k < r->nlag; k++) {
        const double tk = t - r->mk.largs0[k];
        if (st->hmin < tk && tk < tau_min)
            tau_min = tk;
    }
    if (h > tau_min && (1.0 + st->k_est) * tau_min >= h)
        h = tau_min;
    st->h_prop = h;
    st->land = false;
    if (t + h >= st->target - st->hmin) {
        h = st->target - t;
        st->land = true;
    } else if (t + 2.0 * h > st->target) {
        h = 0.5 * (st->target - t);
    }
    st->h = h;
}

/* After an accepted step of attempted size h_old: the controller's next step size. */
void fn_next_step(fn_state *st, double h_old)
{
    const double cap = st->rejected ? 1.0 : FACMAX;
    double h_next = h_old * step_factor(st->err, st->expo, cap);
    if (st->land && !st->rejected && st->h_prop > h_next)
        h_next = st->h_prop;
    if (st->rate >= 0.0)
        /* lags inside the step: grow gently and keep the iteration contracting fast */
        h_next = fn_min(h_next, h_old * fn_min(GROW_ITER, RATE_MAX / fn_max(st->rate, 1e-12)));
    st->h = h_next;
    st->rejected = false;
}

/* Shrink st->h after a failed attempt; false when it fell below st->hmin.
 *
 * A failed evaluation (non-finite error) halves the step when the lag iteration did not
 * converge and quarters it otherwise. The cause of the last failed evaluation is kept, so an
 * underflow names it. */
bool fn_rejected_step(fn_state *st)
{
    st->rejects += 1;
    const int64_t cause = st->cause;
    if (cause != ST_OK) {
        st->last_cause = cause;
        st->last_index = st->index;
        st->last_value = st->fault_value;
        st->last_time = st->fault_time;
    } else if (!isfinite(st->err)) {
        st->last_cause = ST_NONFINITE;
    }
    if (isfinite(st->err)) {
        st->h = st->h * step_factor(st->err, st->expo, 1.0);
    } else if (cause == ST_ITERATION) {
        st->h = 0.5 * st->h;
        st->k_est = fn_max(st->k_est, 4.0);
    } else {
        st->h = 0.25 * st->h;
    }
    st->rejected = true;
    if (st->h >= st->hmin)
        return true;
    const int64_t last = st->last_cause;
    st->cause = last != ST_OK && last != ST_ITERATION ? last : ST_UNDERFLOW;
    st->index = st->last_index;
    st->fault_value = st->last_value;
    st->fault_time = st->last_time;
    return false;
}
