/* The compiled integrator of fluidnet: adaptive embedded Runge-Kutta for delay equations.
 *
 * One stepping loop serves every model and every method: the model's own functions arrive as
 * function pointers (generated and compiled per model, see fluidnet/codegen/), the
 * method as the arrays of its tableau (fluidnet/dde/methods.py). The kernel keeps nothing
 * between calls: everything it needs to resume lives in the state record (fn_state, the
 * NumPy record RUN_STATE of fluidnet/dde/_state.py, field for field) and the arrays of a run
 * (fn_run, the named tuples of _state.py), owned by the Python driver, which enlarges or
 * trims them between calls. The kernel allocates nothing and never touches Python objects,
 * so the binding (module.c) runs it with the GIL released.
 *
 * The files follow the phases of a step (see kernel.c):
 *   history.c          the stored solution: piecewise polynomials, lookups of lagged values
 *   field.c            the vector field in the current mode (lags, projection, Filippov sliding)
 *   step.c             one trial step of the method given as data, lags inside the step iterated
 *   control.c          step sizes: the first step, the proposal, the controller
 *   events.c           events on the dense output and the mode changes they cause
 *   discontinuities.c  derivative discontinuities: landing points, watched points
 *   kernel.c           the loop: start, attempt, accept, events, commit, restart
 *
 * Arithmetic is IEEE double in the order written (the sources are compiled without
 * -ffast-math and without contraction into fused multiply-adds), so results do not depend on
 * the compiler's optimizations.
 */
#ifndef FLUIDNET_KERNEL_H
#define FLUIDNET_KERNEL_H

#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>

/* ------------------------------------------------------------------------ codes (_codes.py) */
/* outcome of a call of the kernel, and failure causes (fn_state.status, fn_state.cause) */
enum {
    ST_OK = 0,          /* finished at t_end */
    ST_UNDERFLOW = 1,
    ST_NONFINITE = 2,
    ST_NEG_DELAY = 3,
    ST_HIST_RANGE = 4,
    ST_MAX_STEPS = 5,
    ST_NONFINITE_DELAY = 6,
    ST_ZENO = 7,
    ST_ITERATION = 8,
    ST_DROPPED = 9,     /* a lag reached history discarded by dense=False */
    ST_PAUSED = 10,     /* the work budget of this call is spent: call again to continue */
    ST_NEED_SPACE = 11, /* the mesh or the discontinuity lists are full: enlarge, call again */
    ST_NO_SLIDING = 12, /* no Filippov weights in [0, 1] keep the solution on the surfaces */
    ST_TOO_MANY_SURFACES = 13 /* sliding on more surfaces at once than MAX_SLIDING */
};

/* events located on the dense output of a step */
enum {
    EV_NONE = 0,
    EV_ARRIVE = 1,     /* a projected state reaches 0 */
    EV_DEPART = 2,     /* a held state's unprojected derivative turns positive */
    EV_SWITCH = 3,     /* a switching function changes sign */
    EV_SLIDE_LO = 4,   /* a sliding weight falls below 0 */
    EV_SLIDE_HI = 5,   /* a sliding weight exceeds 1 */
    EV_REDECIDE = 6,   /* a step started on the wrong side of a surface: decide again */
    EV_SDEP = 7        /* a state-dependent lag argument reaches a discontinuity point */
};

/* what the state-dependent crossing phase asks of the loop */
enum {
    SD_NONE = 0,     /* no crossing in the step */
    SD_REDO = 1,     /* redo the step, shortened to end on the crossing */
    SD_AT_START = 2, /* the crossing is at the step's start: recorded, take the step again */
    SD_LAND = 3      /* the step ends on the crossing: record it after the step */
};

/* ------------------------------------------------------------------------------- constants */
#define NCOEF 5               /* power-basis coefficients per state and step (degree <= 4) */
#define MERGE 1e-12           /* discontinuity points closer than this (relative) are one */
#define MAX_SDEP_LAGS 62      /* state-dependent lags tracked (bits of dw_done) */
#define MAX_SLIDING 10        /* surfaces slid on at once (2^MAX_SLIDING corner fields) */
#define SLIDING_RESIDUAL 1e-10 /* largest scaled ds/dt accepted from several sliding weights */

/* ------------------------------------------------------------------------- the state record */
/* Field for field the NumPy record RUN_STATE (aligned) of fluidnet/dde/_state.py; the binding
 * checks the offsets against it when the module is imported. */
typedef struct fn_state {
    /* options (set once by the driver) */
    double t0, t_end, rtol, h_max, h_first;
    int64_t max_steps;
    int64_t order;  /* of the method */
    double expo;    /* 1 / (error order + 1) */
    bool fsal;
    int64_t track_level; /* derivative order up to which discontinuities are tracked */
    int64_t event_generations;
    int64_t nsw; /* switches */
    /* progress */
    int64_t status;
    bool started;
    double t, h;
    double h_prop; /* the step the controller proposed (before landing) */
    double hmin, tol_m, err;
    double rate;  /* contraction rate of the lag iteration (-1: no lag inside the step) */
    double k_est; /* recent extra iterations per step */
    bool rejected;
    bool smooth_start; /* no mode change at t: the predictor continues the last piece */
    bool touched;      /* dense evaluations clobbered the end-of-step field */
    int64_t nzero;     /* mode changes without progress */
    bool land;
    double target;
    int64_t target_disc;
    /* the earliest event of the step, and the event function being located */
    int64_t ev_type, ev_index;
    double ev_theta;
    int64_t loc_type, loc_index;
    double loc_xi, loc_sgn;
    /* discontinuities */
    bool any_sdep;
    int64_t sdep_mask, ndp, ndw, sd_m, sd_k;
    /* history and output */
    int64_t nm; /* stored pieces */
    int64_t nh; /* of which history (before t0) */
    double trial_t, trial_h;
    bool future;           /* a lookup reached into the step being attempted */
    double dropped_before; /* dense=False: the history before this time is gone */
    double max_delay;      /* largest delay seen */
    int64_t ie;            /* next output time */
    /* the current evaluation's failure, the last one of a rejected step, the run's */
    int64_t cause, index;
    double fault_value, fault_time;
    int64_t last_cause, last_index;
    double last_value, last_time;
    double fail_t, fail_h;
    /* counters */
    int64_t steps, rejects, fev, discontinuities, events, iterations, slides;
    double lu_h; /* the step size whose I - gamma h J is factored in lu (-1: none) */
} fn_state;

/* ------------------------------------------------------------------------ the run's arrays */
/* A generated model function: void f(t, x, z, p, w, aux, out) (see fluidnet/codegen/). */
typedef void (*fn_model_fn)(double, double *, double *, double *, double *, double *,
                            double *);

/* The model (ModelData): its functions, parameters and static facts. */
typedef struct {
    fn_model_fn rhs, delay, sw, sgrad, jac; /* jac: NULL unless the method is implicit */
    double *p;
    int64_t *lag_state; /* [nlag] state of each lag */
    int64_t *lag_sdep;  /* [nlag] 1 for state-dependent lags */
    int64_t *nonneg;    /* [n] 1 for projected states */
    double *hstart;     /* [n] earliest time of each state's history */
    int64_t *sw_lagdep; /* [nsw] 1 for switching functions of lagged values */
    double *tauc;       /* [nl1] constant and parameter delays (evaluated at the start) */
} fn_model;

/* The method (Method): tableau, error weights, dense output, Rosenbrock coupling. */
typedef struct {
    const double *A; /* [S][S] */
    const double *B, *C, *E; /* [S] */
    const double *P; /* [S][NCOEF - 1] */
    const double *G; /* [S][S] */
    const double *Q, *T; /* [S] */
} fn_method;

/* What evaluating the field uses and leaves behind (FieldWork). */
typedef struct {
    double *z, *largs, *zdot; /* [nl1] lag values, arguments t - tau, time derivatives */
    double *w, *lam, *sv;     /* [ns1] mode weights, sliding weights, switching functions */
    double *kbuf;             /* [1] */
    double *xe;               /* [n] */
    double *G;                /* [nsw * (n + 1)] switching gradients (and ds/dt) */
    double *corners;          /* [ncorner][n] one-sided fields of the sliding surfaces */
    double *J;                /* [ns1][ns1] */
    double *M;                /* [ns1][mcols] */
    double *vbuf;             /* [5 ns1 + n] */
    int64_t *hints;           /* [nl1] lookup hints */
    int64_t *slide, *stuck;   /* [ns1], [n] */
    int64_t *sl, *sel;        /* [ns1] */
    double *save;             /* [3][ns1] */
} fn_field;

/* The mesh and its dense output (History). */
typedef struct {
    double *mt; /* [cap + 1] */
    double *mc; /* [cap][n][NCOEF] */
    double *cc; /* [n][NCOEF] the trial polynomial of the step being attempted */
} fn_history;

/* The step's work arrays (StepWork). */
typedef struct {
    double *y, *ynew, *ytmp, *yprev, *etmp; /* [n] */
    double *K, *Kraw;                       /* [S][n] */
    double *cn;                             /* [n][NCOEF] */
    double *svs, *lams;                     /* [S][ns1] */
    double *fa, *fra, *fb, *frb;            /* [n] */
    double *gst;                            /* [S] */
    const double *atol;                     /* [n] */
    double *lu;                             /* [n][n + 1] (implicit methods) */
    int64_t *piv;                           /* [n] */
} fn_step;

/* Switch values, sliding weights and lag arguments at the start (0) and end (1) of a step. */
typedef struct {
    double *sv0, *lam0, *largs0, *sv1, *lam1, *largs1; /* [ns1] and [nl1] */
} fn_marks;

/* Landing points and watched points (Discontinuities). */
typedef struct {
    double *dp_t;
    int64_t *dp_l;
    double *dw_t;
    int64_t *dw_l, *dw_done;
} fn_disc;

/* Outputs (Output). */
typedef struct {
    const double *t_eval; /* [ne] */
    double *y_eval;       /* [ne][n] */
    double *btime;        /* [n] time held at 0 */
    double *slide_time, *slide_weight; /* [ns1] */
} fn_output;

/* A run: the groups and their sizes. */
typedef struct fn_run {
    fn_model md;
    fn_method rk;
    fn_field fw;
    fn_history hs;
    fn_step sw;
    fn_marks mk;
    fn_disc dc;
    fn_output out;
    int64_t n;       /* states */
    int64_t nlag;    /* lags */
    int64_t nl1;     /* max(1, nlag): length of the per-lag work arrays */
    int64_t nsw;     /* switches */
    int64_t ns1;     /* max(1, nsw): length of the per-switch work arrays */
    int64_t S;       /* stages of the method */
    int64_t cap;     /* mesh pieces the arrays hold */
    int64_t ndp_cap; /* landing points the arrays hold */
    int64_t ndw_cap; /* watched points the arrays hold */
    int64_t ne;      /* output times */
    int64_t mcols;   /* columns of fw.M */
    int64_t ncorner; /* rows of fw.corners */
} fn_run;

/* ------------------------------------------------------------------------------- helpers */
/* Python's max and min of two values: the second replaces the first only when strictly
 * greater (smaller). With a NaN, the first argument wins unless it is the NaN. */
static inline double fn_max(double a, double b) { return b > a ? b : a; }
static inline double fn_min(double a, double b) { return b < a ? b : a; }
static inline int64_t fn_imax(int64_t a, int64_t b) { return b > a ? b : a; }

/* ------------------------------------------------------------------------------ history.c */
double fn_horner(const double *c, double th);
double fn_horner_deriv(const double *c, double th);
int64_t fn_find_piece(const double *mt, int64_t nm, double s, int64_t hint);
double fn_lookup(int64_t i, double s, int64_t k, fn_state *st, fn_run *r);
double fn_lookup_deriv(int64_t i, double s, int64_t k, fn_state *st, fn_run *r);

/* -------------------------------------------------------------------------------- field.c */
bool fn_eval_lags(double t, double *x, fn_state *st, fn_run *r);
void fn_switch_gradients(double t, double *x, fn_state *st, fn_run *r);
bool fn_independent_normals(const double *G, const int64_t *sl, int64_t nsl, int64_t n,
                            double *M, int64_t mcols);
bool fn_feval(double t, double *x, double *f, double *fraw, fn_state *st, fn_run *r);

/* --------------------------------------------------------------------------------- step.c */
double fn_rms(const double *v, const double *y0, const double *y1, double rtol,
              const double *atol, int64_t n);
double fn_attempt(fn_state *st, fn_run *r);

/* ------------------------------------------------------------------------------ control.c */
double fn_initial_step(fn_state *st, fn_run *r);
void fn_propose_step(fn_state *st, fn_run *r);
void fn_next_step(fn_state *st, double h_old);
bool fn_rejected_step(fn_state *st);

/* ------------------------------------------------------------------------------- events.c */
void fn_target(fn_state *st, int64_t etype, int64_t idx, double xi, double sgn);
void fn_locate(double a, double b, double ga, double gb, fn_state *st, fn_run *r,
               double *a_out, double *b_out);
void fn_find_events(fn_state *st, fn_run *r);
bool fn_decide(int64_t j, double t, fn_state *st, fn_run *r);
bool fn_start_field(double t, fn_state *st, fn_run *r);
bool fn_apply_event(int64_t etype, int64_t idx, double t, fn_state *st, fn_run *r);

/* ---------------------------------------------------------------------- discontinuities.c */
int64_t fn_push(double *times, int64_t *levels, int64_t count, double xi, int64_t level,
                double tol);
void fn_propagate_below(double xi, int64_t level, fn_state *st, fn_run *r);
void fn_next_landing(fn_state *st, fn_run *r);
int fn_sdep_crossings(fn_state *st, fn_run *r);
void fn_landed(fn_state *st, fn_run *r, bool at_target);

/* ------------------------------------------------------------------------------- kernel.c */
int64_t fn_advance(fn_state *st, fn_run *r, int64_t budget);

#endif /* FLUIDNET_KERNEL_H */
