/* Events on the dense output of an accepted step, and the mode changes they cause.
 *
 * fn_find_events looks for the earliest event in a step: a projected state reaching 0, a held
 * state whose unprojected derivative turns positive, a switching function changing sign, a
 * Filippov sliding weight leaving [0, 1]. stage_event finds the first sign change of an event
 * function from its values at the stages, confirms it on the dense output and shrinks the
 * bracket with fn_locate (Illinois). fn_decide chooses the mode of a switch at its surface
 * (side +, side -, or Filippov sliding); fn_apply_event performs a mode change and evaluates
 * the field again.
 *
 * The event function being located is named by st->loc_type, st->loc_index (a state, a switch
 * or a lag), st->loc_xi (a discontinuity point, for EV_SDEP) and st->loc_sgn.
 */
#include "kernel.h"

/* The located event function at theta of the accepted trial step (dense output cc). */
static double g(double th, fn_state *st, fn_run *r)
{
    const int64_t etype = st->loc_type, idx = st->loc_index, n = r->n;
    fn_step *sw = &r->sw;
    const double *cc = r->hs.cc;
    if (etype == EV_ARRIVE)
        return fn_horner(cc + idx * NCOEF, th);
    double *ytmp = sw->ytmp;
    for (int64_t i = 0; i < n; i++)
        ytmp[i] = fn_horner(cc + i * NCOEF, th);
    if (etype == EV_SDEP) {
        if (!fn_eval_lags(st->t + th * st->h, ytmp, st, r))
            return NAN;
        return st->loc_sgn * (r->fw.largs[idx] - st->loc_xi);
    }
    if (!fn_feval(st->t + th * st->h, ytmp, sw->fa, sw->fra, st, r))
        return NAN;
    if (etype == EV_DEPART)
        return -sw->fra[idx];
    if (etype == EV_SWITCH)
        return st->loc_sgn * r->fw.sv[idx];
    if (etype == EV_SLIDE_LO)
        return r->fw.lam[idx];
    return 1.0 - r->fw.lam[idx];
}

/* Name the event function that g evaluates. */
void fn_target(fn_state *st, int64_t etype, int64_t idx, double xi, double sgn)
{
    st->loc_type = etype;
    st->loc_index = idx;
    st->loc_xi = xi;
    st->loc_sgn = sgn;
}

/* Bracket [a, b] (g(a) >= 0 > g(b)) shrunk to rounding level (Illinois method). */
void fn_locate(double a, double b, double ga, double gb, fn_state *st, fn_run *r,
               double *a_out, double *b_out)
{
    int side = 0;
    const double tol = 4.0 * DBL_EPSILON * fn_max(1.0, fabs(st->t)) / st->h;
    for (int iter = 0; iter < 100; iter++) {
        if (b - a <= tol)
            break;
        double m = (a * gb - b * ga) / (gb - ga);
        if (!(a < m && m < b))
            m = 0.5 * (a + b);
        st->cause = ST_OK;
        double gm = g(m, st, r);
        if (!isfinite(gm)) {
            st->cause = ST_OK;
            m = 0.5 * (a + b);
            gm = g(m, st, r);
            if (!isfinite(gm)) {
                st->cause = ST_OK;
                b = m;
                continue;
            }
        }
        if (gm >= 0.0) {
            a = m;
            ga = gm;
            if (side == 1)
                gb *= 0.5;
            side = 1;
        } else {
            b = m;
            gb = gm;
            if (side == -1)
                ga *= 0.5;
            side = -1;
        }
    }
    *a_out = a;
    *b_out = b;
}

/* Earliest theta where the located function turns negative, from its stage values.
 *
 * gst[s] is g at stage s (gst[0] at the start). The bracket is confirmed on the dense output
 * and shrunk by fn_locate. When the step starts on the wrong side of a surface (rounding right
 * after an event, e.g. when several surfaces are reached at the same time) and no point with
 * g >= 0 is found, the mode is decided again at the start of the step (EV_REDECIDE at
 * theta = 0). Returns theta and sets *type (EV_NONE when there is no event before best). */
static double stage_event(const double *gst, double best, fn_state *st, fn_run *r,
                          int64_t *type)
{
    const double *C = r->rk.C;
    const int64_t S = r->S;
    int64_t first = -1;
    for (int64_t s = 1; s < S; s++)
        if (gst[s] < 0.0) {
            first = s;
            break;
        }
    *type = EV_NONE;
    if (first < 0)
        return 2.0;
    double hi = C[first];
    double ghi = g(hi, st, r);
    if (!(ghi < 0.0)) {
        hi = 1.0;
        ghi = g(hi, st, r);
        if (!(ghi < 0.0)) {
            st->cause = ST_OK;
            return 2.0;
        }
    }
    double lo = -1.0;
    double glo = 0.0;
    if (first > 1) {
        lo = C[first - 1];
        glo = g(lo, st, r);
        if (!(glo >= 0.0))
            lo = -1.0;
    }
    if (lo < 0.0 && gst[0] >= 0.0) {
        lo = 0.0;
        glo = gst[0];
    }
    if (lo < 0.0) {
        /* wrong side at the start: look for the side the mode belongs to */
        for (int k = 1; k < 17; k++) {
            const double th = hi * (double)k / 16.0;
            const double gv = g(th, st, r);
            if (lo < 0.0 && gv >= 0.0) {
                lo = th;
                glo = gv;
            } else if (lo >= 0.0 && gv < 0.0) {
                hi = th;
                ghi = gv;
                break;
            }
        }
        if (lo < 0.0) {
            /* the solution is on the surface already (several surfaces reached at once, the
               others decided after the first): decide this one now, before stepping; stepping
               first would carry the solution across it in the wrong mode */
            st->cause = ST_OK;
            *type = EV_REDECIDE;
            return 0.0;
        }
    }
    st->cause = ST_OK;
    if (lo >= best)
        return 2.0;
    double a, b;
    fn_locate(lo, hi, glo, ghi, st, r, &a, &b);
    st->cause = ST_OK;
    *type = st->loc_type;
    return b;
}

/* Keep the event if it is the earliest so far. */
static void candidate(fn_state *st, double theta, int64_t etype, int64_t idx)
{
    if (theta < st->ev_theta) {
        st->ev_theta = theta;
        st->ev_type = etype;
        st->ev_index = idx;
    }
}

/* Projected states reaching 0 (sampled on eighths of the step, then located). */
static void arrivals(fn_state *st, fn_run *r)
{
    const double *cc = r->hs.cc;
    for (int64_t i = 0; i < r->n; i++) {
        if (r->md.nonneg[i] == 0 || r->fw.stuck[i] == 1)
            continue;
        double prev = 0.0;
        double gprev = cc[i * NCOEF];
        for (int jj = 1; jj < 9; jj++) {
            const double th = (double)jj / 8.0;
            if (th > st->ev_theta)
                break;
            const double gv = fn_horner(cc + i * NCOEF, th);
            if (gv < 0.0) {
                double a, b;
                fn_target(st, EV_ARRIVE, i, 0.0, 1.0);
                fn_locate(prev, th, fn_max(gprev, 0.0), gv, st, r, &a, &b);
                candidate(st, a, EV_ARRIVE, i);
                break;
            }
            prev = th;
            gprev = gv;
        }
    }
}

/* Held states whose unprojected derivative turns positive. */
static void departures(fn_state *st, fn_run *r)
{
    const double *Kraw = r->sw.Kraw;
    const int64_t S = r->S, n = r->n;
    for (int64_t i = 0; i < n; i++) {
        if (r->fw.stuck[i] == 0 || st->ev_theta <= 0.0)
            continue;
        int64_t first = -1;
        for (int64_t s = 1; s < S; s++)
            if (Kraw[s * n + i] > 0.0) {
                first = s;
                break;
            }
        if (first < 0)
            continue;
        st->touched = true;
        fn_target(st, EV_DEPART, i, 0.0, 1.0);
        double hi = r->rk.C[first];
        double gb = g(hi, st, r);
        if (!(gb < 0.0)) {
            hi = 1.0;
            gb = -Kraw[(S - 1) * n + i];
        }
        st->cause = ST_OK;
        if (gb < 0.0) {
            const double ga = fn_max(-Kraw[i], 0.0);
            double a, b;
            fn_locate(0.0, hi, ga, gb, st, r, &a, &b);
            candidate(st, b, EV_DEPART, i);
        }
    }
}

/* The stage-value search of one switch's event function. */
static void switch_event(int64_t j, int64_t etype, double sgn, fn_state *st, fn_run *r)
{
    int64_t found;
    fn_target(st, etype, j, 0.0, sgn);
    const double th = stage_event(r->sw.gst, st->ev_theta, st, r, &found);
    if (found != EV_NONE) {
        st->touched = true;
        candidate(st, th, found, j);
    }
}

/* Switching functions changing sign; sliding weights leaving [0, 1]. */
static void switches(fn_state *st, fn_run *r)
{
    const int64_t S = r->S, ns1 = r->ns1;
    double *gst = r->sw.gst;
    for (int64_t j = 0; j < st->nsw; j++) {
        if (st->ev_theta <= 0.0)
            break;
        if (r->fw.slide[j] == 1) {
            /* sliding ends where the Filippov weight leaves [0, 1] */
            for (int64_t s = 0; s < S; s++)
                gst[s] = r->sw.lams[s * ns1 + j];
            switch_event(j, EV_SLIDE_LO, 1.0, st, r);
            for (int64_t s = 0; s < S; s++)
                gst[s] = 1.0 - r->sw.lams[s * ns1 + j];
            switch_event(j, EV_SLIDE_HI, 1.0, st, r);
            continue;
        }
        const double sgn = r->fw.w[j] > 0.5 ? 1.0 : -1.0;
        for (int64_t s = 0; s < S; s++)
            gst[s] = sgn * r->sw.svs[s * ns1 + j];
        switch_event(j, EV_SWITCH, sgn, st, r);
    }
}

/* The earliest event in the accepted trial step: st->ev_type, ev_index, ev_theta. */
void fn_find_events(fn_state *st, fn_run *r)
{
    st->ev_theta = 2.0;
    st->ev_type = EV_NONE;
    st->ev_index = -1;
    arrivals(st, r);
    departures(st, r);
    switches(st, r);
    st->cause = ST_OK;
}

/* Slide on every surface through the point at once, where their normals are dependent.
 *
 * Where more surfaces meet than their normals span (Ye et al.'s topology at a fixed
 * threshold: six surfaces through one point of a four-dimensional state), deciding them one
 * after the other, each with the modes already chosen for the others, can leave a set of
 * sliding surfaces that no weights keep the solution on. Here the surface j, the surfaces
 * already sliding and the other surfaces through the point (|s| <= 1e-9 (1 + |y|) |ds/dy|)
 * slide together when weights in (0, 1) keep ds/dt = 0 on all of them. Returns true when
 * that mode was taken; otherwise the modes are left unchanged. */
static bool joint_sliding(int64_t j, double t, fn_state *st, fn_run *r)
{
    fn_step *sw = &r->sw;
    fn_field *fw = &r->fw;
    double *y = sw->y;
    const int64_t n = r->n, nsw = st->nsw, ns1 = r->ns1;
    if (!fn_feval(t, y, sw->fa, sw->fra, st, r)) {
        st->cause = ST_OK;
        return false;
    }
    fn_switch_gradients(t, y, st, r);
    double ymax = 0.0;
    for (int64_t i = 0; i < n; i++)
        ymax = fn_max(ymax, fabs(y[i]));
    int64_t *sel = fw->sel;
    int64_t nsel = 0, extra = 0;
    for (int64_t k = 0; k < nsw; k++) {
        bool take = k == j || fw->slide[k] == 1;
        if (!take) {
            double gn = 0.0;
            for (int64_t i = 0; i < n; i++)
                gn += fabs(fw->G[k * (n + 1) + i]);
            if (gn > 0.0 && fabs(fw->sv[k]) <= 1e-9 * (1.0 + ymax) * gn) {
                take = true;
                extra += 1;
            }
        }
        if (take)
            sel[nsel++] = k;
    }
    if (extra == 0 || fn_independent_normals(fw->G, sel, nsel, n, fw->M, r->mcols))
        return false;
    double *save = fw->save;
    for (int64_t k = 0; k < nsw; k++) {
        save[k] = (double)fw->slide[k];
        save[ns1 + k] = fw->w[k];
        save[2 * ns1 + k] = fw->lam[k];
    }
    int64_t added = 0;
    for (int64_t b = 0; b < nsel; b++) {
        const int64_t k = sel[b];
        if (fw->slide[k] == 0) {
            fw->slide[k] = 1;
            fw->lam[k] = 0.5;
            fw->w[k] = 0.5;
            added += 1;
        }
    }
    if (fn_feval(t, y, sw->fa, sw->fra, st, r)) {
        /* weights on a bound: the fields only touch the intersection (as where sliding just
           ended); the surfaces are then decided one by one */
        bool inside = true;
        for (int64_t b = 0; b < nsel; b++) {
            const double lam_b = fw->lam[sel[b]];
            if (!(0.0 < lam_b && lam_b < 1.0))
                inside = false;
        }
        if (inside) {
            st->slides += added;
            return true;
        }
    }
    st->cause = ST_OK;
    for (int64_t k = 0; k < nsw; k++) {
        fw->slide[k] = (int64_t)save[k];
        fw->w[k] = save[ns1 + k];
        fw->lam[k] = save[2 * ns1 + k];
    }
    return false;
}

/* Mode of switch j at a point on its surface: side +, side -, or sliding (Filippov). */
bool fn_decide(int64_t j, double t, fn_state *st, fn_run *r)
{
    fn_step *sw = &r->sw;
    fn_field *fw = &r->fw;
    double *y = sw->y, *fa = sw->fa, *fb = sw->fb, *w = fw->w, *G = fw->G;
    const int64_t n = r->n;
    const double old = w[j];
    if (joint_sliding(j, t, st, r))
        return true;
    fw->slide[j] = 0;
    w[j] = 1.0;
    bool ok = fn_feval(t, y, fa, sw->fra, st, r);
    if (ok) {
        w[j] = 0.0;
        ok = fn_feval(t, y, fb, sw->frb, st, r);
    }
    if (!ok) {
        if (st->cause != ST_NO_SLIDING)
            return false;
        /* With this switch on either side, the surfaces the solution slides on cannot hold it
           (several surfaces meet here): slide on this one too, if weights in [0, 1] exist. */
        st->cause = ST_OK;
        fw->slide[j] = 1;
        fw->lam[j] = 0.5;
        w[j] = 0.5;
        if (!fn_feval(t, y, fa, sw->fra, st, r))
            return false;
        st->slides += 1;
        return true;
    }
    fn_switch_gradients(t, y, st, r);
    const int64_t row = j * (n + 1);
    double sp = G[row + n];
    double sm = G[row + n];
    for (int64_t i = 0; i < n; i++) {
        sp += G[row + i] * fa[i];
        sm += G[row + i] * fb[i];
    }
    if (sp > 0.0 && sm > 0.0) {
        w[j] = 1.0;
    } else if (sp < 0.0 && sm < 0.0) {
        w[j] = 0.0;
    } else if (sm > 0.0 && sp < 0.0) {
        fw->slide[j] = 1;
        fw->lam[j] = sm / (sm - sp);
        w[j] = fw->lam[j];
        st->slides += 1;
    } else {
        w[j] = old == 0.0 || old == 1.0 ? 1.0 - old : 1.0;
    }
    return true;
}

/* The field at the step's start (t, sw.y) into K[0] (held states: 0). */
bool fn_start_field(double t, fn_state *st, fn_run *r)
{
    return fn_feval(t, r->sw.y, r->sw.K, r->sw.Kraw, st, r);
}

/* Change the mode for an event at t and evaluate the field there; false on failure. */
bool fn_apply_event(int64_t etype, int64_t idx, double t, fn_state *st, fn_run *r)
{
    if (etype == EV_ARRIVE) {
        r->sw.y[idx] = 0.0;
    } else if (etype == EV_DEPART) {
        r->fw.stuck[idx] = 0;
    } else if (etype == EV_SLIDE_LO) {
        r->fw.slide[idx] = 0;
        r->fw.w[idx] = 0.0;
    } else if (etype == EV_SLIDE_HI) {
        r->fw.slide[idx] = 0;
        r->fw.w[idx] = 1.0;
    } else if (etype == EV_SWITCH || etype == EV_REDECIDE) {
        if (!fn_decide(idx, t, st, r))
            return false;
    }
    if (!fn_start_field(t, st, r))
        return false;
    if (etype == EV_ARRIVE && r->sw.Kraw[idx] <= 0.0) {
        r->fw.stuck[idx] = 1;
        /* held states change the sliding weights of the other states: evaluate again */
        return fn_start_field(t, st, r);
    }
    return true;
}
