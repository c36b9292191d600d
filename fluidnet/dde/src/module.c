/* The Python binding of the integrator: fluidnet.dde._integrator.
 *
 * advance(st, run, budget) takes the state record (a NumPy array of one RUN_STATE record) and
 * the run's named tuples of arrays (fluidnet/dde/_state.py), checks every array's type,
 * contiguity and shape against the sizes of the run (the kernel trusts them), holds their
 * buffers, and runs the kernel with the GIL released. The arrays are read through the buffer
 * protocol: building the module needs the Python headers only.
 *
 * The module also describes itself, so that the driver can check that it was built from the
 * sources it expects (fluidnet/dde/engine.py): STATE_FIELDS (name and offset of every field of
 * the state record), STATE_SIZE, RUN_FIELDS (the fields of each group of the run, in order),
 * CODES (status, event and crossing codes), NCOEF and SOURCE_DIGEST (a hash of the C sources,
 * given by the build).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stddef.h>
#include <string.h>

#include "kernel.h"

#ifndef FLUIDNET_SOURCE_DIGEST
#define FLUIDNET_SOURCE_DIGEST "unknown"
#endif

/* ---------------------------------------------------------------------- the layout tables */
typedef struct {
    const char *name;
    Py_ssize_t offset;
    char kind; /* 'd' double, 'q' int64, '?' bool */
} field_info;

#define FIELD(name, kind) {#name, offsetof(fn_state, name), kind}
static const field_info STATE_FIELDS[] = {
    FIELD(t0, 'd'), FIELD(t_end, 'd'), FIELD(rtol, 'd'), FIELD(h_max, 'd'), FIELD(h_first, 'd'),
    FIELD(max_steps, 'q'), FIELD(order, 'q'), FIELD(expo, 'd'), FIELD(fsal, '?'),
    FIELD(track_level, 'q'), FIELD(event_generations, 'q'), FIELD(nsw, 'q'), FIELD(status, 'q'),
    FIELD(started, '?'), FIELD(t, 'd'), FIELD(h, 'd'), FIELD(h_prop, 'd'), FIELD(hmin, 'd'),
    FIELD(tol_m, 'd'), FIELD(err, 'd'), FIELD(rate, 'd'), FIELD(k_est, 'd'),
    FIELD(rejected, '?'), FIELD(smooth_start, '?'), FIELD(touched, '?'), FIELD(nzero, 'q'),
    FIELD(land, '?'), FIELD(target, 'd'), FIELD(target_disc, 'q'), FIELD(ev_type, 'q'),
    FIELD(ev_index, 'q'), FIELD(ev_theta, 'd'), FIELD(loc_type, 'q'), FIELD(loc_index, 'q'),
    FIELD(loc_xi, 'd'), FIELD(loc_sgn, 'd'), FIELD(any_sdep, '?'), FIELD(sdep_mask, 'q'),
    FIELD(ndp, 'q'), FIELD(ndw, 'q'), FIELD(sd_m, 'q'), FIELD(sd_k, 'q'), FIELD(nm, 'q'),
    FIELD(nh, 'q'), FIELD(trial_t, 'd'), FIELD(trial_h, 'd'), FIELD(future, '?'),
    FIELD(dropped_before, 'd'), FIELD(max_delay, 'd'), FIELD(ie, 'q'), FIELD(cause, 'q'),
    FIELD(index, 'q'), FIELD(fault_value, 'd'), FIELD(fault_time, 'd'), FIELD(last_cause, 'q'),
    FIELD(last_index, 'q'), FIELD(last_value, 'd'), FIELD(last_time, 'd'), FIELD(fail_t, 'd'),
    FIELD(fail_h, 'd'), FIELD(steps, 'q'), FIELD(rejects, 'q'), FIELD(fev, 'q'),
    FIELD(discontinuities, 'q'), FIELD(events, 'q'), FIELD(iterations, 'q'), FIELD(slides, 'q'),
    FIELD(lu_h, 'd'),
};
#undef FIELD

/* The groups of a run and their fields, in the order of the named tuples of _state.py. */
enum { G_MD, G_RK, G_FW, G_HS, G_SW, G_MK, G_DC, G_OUT, N_GROUPS };
static const char *const GROUP_NAMES[N_GROUPS] = {"md", "rk", "fw", "hs", "sw", "mk", "dc", "out"};
static const char *const MD_FIELDS[] = {"rhs", "delay", "switch", "sgrad", "jac", "p",
                                        "lag_state", "lag_sdep", "nonneg", "hstart",
                                        "sw_lagdep", "tauc", NULL};
static const char *const RK_FIELDS[] = {"A", "B", "C", "E", "P", "G", "Q", "T", NULL};
static const char *const FW_FIELDS[] = {"z", "largs", "w", "lam", "sv", "zdot", "kbuf",
                                        "xe", "G", "corners", "J", "M", "vbuf", "hints",
                                        "slide", "stuck", "sl", "sel", "save", NULL};
static const char *const HS_FIELDS[] = {"mt", "mc", "cc", NULL};
static const char *const SW_FIELDS[] = {"y", "K", "Kraw", "ynew", "ytmp", "yprev",
                                        "etmp", "cn", "svs", "lams", "fa", "fra",
                                        "fb", "frb", "gst", "atol", "lu", "piv", NULL};
static const char *const MK_FIELDS[] = {"sv0", "lam0", "largs0", "sv1", "lam1", "largs1", NULL};
static const char *const DC_FIELDS[] = {"dp_t", "dp_l", "dw_t", "dw_l", "dw_done", NULL};
static const char *const OUT_FIELDS[] = {"t_eval", "y_eval", "btime", "slide_time",
                                         "slide_weight", NULL};
static const char *const *const GROUP_FIELDS[N_GROUPS] = {
    MD_FIELDS, RK_FIELDS, FW_FIELDS, HS_FIELDS, SW_FIELDS, MK_FIELDS, DC_FIELDS, OUT_FIELDS};

/* The status, event and crossing codes (fluidnet/dde/_codes.py must agree). */
typedef struct {
    const char *name;
    long value;
} code_info;

#define CODE(name) {#name, name}
static const code_info CODES[] = {
    CODE(ST_OK), CODE(ST_UNDERFLOW), CODE(ST_NONFINITE), CODE(ST_NEG_DELAY),
    CODE(ST_HIST_RANGE), CODE(ST_MAX_STEPS), CODE(ST_NONFINITE_DELAY), CODE(ST_ZENO),
    CODE(ST_ITERATION), CODE(ST_DROPPED), CODE(ST_PAUSED), CODE(ST_NEED_SPACE),
    CODE(ST_NO_SLIDING), CODE(ST_TOO_MANY_SURFACES), CODE(EV_NONE), CODE(EV_ARRIVE),
    CODE(EV_DEPART), CODE(EV_SWITCH), CODE(EV_SLIDE_LO), CODE(EV_SLIDE_HI), CODE(EV_REDECIDE),
    CODE(EV_SDEP), CODE(SD_NONE), CODE(SD_REDO), CODE(SD_AT_START), CODE(SD_LAND),
};
#undef CODE

static Py_ssize_t count_fields(const char *const *names)
{
    Py_ssize_t k = 0;
    while (names[k] != NULL)
        k++;
    return k;
}

/* ------------------------------------------------------------------- holding the buffers */
#define MAX_VIEWS 128

typedef struct {
    Py_buffer view[MAX_VIEWS];
    int count;
} held_views;

static void release_views(held_views *h)
{
    for (int k = 0; k < h->count; k++)
        PyBuffer_Release(&h->view[k]);
    h->count = 0;
}

enum { F8, I8 };

/* The group g of the run (a tuple of its fields), or NULL with an exception set. */
static PyObject *group_of(PyObject *run, int g)
{
    PyObject *group = PyTuple_GET_ITEM(run, g);
    const Py_ssize_t want = count_fields(GROUP_FIELDS[g]);
    if (!PyTuple_Check(group) || PyTuple_GET_SIZE(group) != want) {
        PyErr_Format(PyExc_TypeError, "advance: run.%s must be a tuple of %zd fields",
                     GROUP_NAMES[g], want);
        return NULL;
    }
    return group;
}

/* "(a, b, c)" */
static void shape_text(char *buf, size_t size, int ndim, const Py_ssize_t *shape)
{
    size_t used = (size_t)snprintf(buf, size, "(");
    for (int a = 0; a < ndim && used < size; a++)
        used += (size_t)snprintf(buf + used, size - used, a ? ", %zd" : "%zd", shape[a]);
    if (used < size)
        snprintf(buf + used, size - used, ndim == 1 ? ",)" : ")");
}

/* The data of field k of group g: an aligned, C-contiguous array of float64 (F8) or int64
 * (I8) of the given shape (writable unless read_only), held in h; NULL with an exception. */
static void *array_of(PyObject *run, int g, int k, int kind, int read_only, int ndim,
                      Py_ssize_t d0, Py_ssize_t d1, Py_ssize_t d2, held_views *h)
{
    PyObject *group = group_of(run, g);
    if (group == NULL)
        return NULL;
    const char *where = GROUP_FIELDS[g][k];
    if (h->count >= MAX_VIEWS) {
        PyErr_SetString(PyExc_RuntimeError, "advance: too many arrays");
        return NULL;
    }
    Py_buffer *v = &h->view[h->count];
    int flags = PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | (read_only ? 0 : PyBUF_WRITABLE);
    if (PyObject_GetBuffer(PyTuple_GET_ITEM(group, k), v, flags) != 0) {
        PyErr_Format(PyExc_TypeError,
                     "advance: run.%s.%s must be a C-contiguous%s array of %s",
                     GROUP_NAMES[g], where, read_only ? "" : " writable",
                     kind == F8 ? "float64" : "int64");
        return NULL;
    }
    h->count++;
    const char *fmt = v->format ? v->format : "B";
    if (*fmt == '@' || *fmt == '=' || *fmt == '<')
        fmt++;
    const int fmt_ok = kind == F8 ? strcmp(fmt, "d") == 0
                                  : (strcmp(fmt, "l") == 0 || strcmp(fmt, "q") == 0);
    if (!fmt_ok || v->itemsize != 8 || ((uintptr_t)v->buf % 8) != 0) {
        PyErr_Format(PyExc_TypeError, "advance: run.%s.%s must be an aligned %s array (got %s)",
                     GROUP_NAMES[g], where, kind == F8 ? "float64" : "int64", fmt);
        return NULL;
    }
    const Py_ssize_t want[3] = {d0, d1, d2};
    int shape_ok = v->ndim == ndim;
    for (int a = 0; shape_ok && a < ndim; a++)
        shape_ok = want[a] < 0 ? v->shape[a] >= -want[a] : v->shape[a] == want[a];
    if (!shape_ok) {
        char got[96], need[96];
        shape_text(got, sizeof got, v->ndim, v->shape);
        shape_text(need, sizeof need, ndim, want);
        PyErr_Format(PyExc_ValueError,
                     "advance: run.%s.%s has shape %s, not the %s of this run (-1: any size)",
                     GROUP_NAMES[g], where, got, need);
        return NULL;
    }
    return v->buf;
}

/* A model function's address (field k of the model group); NULL with an exception set. */
static int address_of(PyObject *md, int k, int required, fn_model_fn *out)
{
    PyObject *obj = PyTuple_GET_ITEM(md, k);
    void *p = PyLong_Check(obj) ? PyLong_AsVoidPtr(obj) : NULL;
    if (PyErr_Occurred())
        return -1;
    if (p == NULL && (required || !PyLong_Check(obj))) {
        PyErr_Format(PyExc_ValueError, "advance: run.md.%s must be the address of a function",
                     MD_FIELDS[k]);
        return -1;
    }
    *out = (fn_model_fn)p;
    return 0;
}

/* -------------------------------------------------------------------- reading a run */
#define ANY (-1) /* a size at least 1 */

#define F(g, k, ro, nd, a, b, c) array_of(run, g, k, F8, ro, nd, a, b, c, h)
#define I(g, k, ro, nd, a, b, c) array_of(run, g, k, I8, ro, nd, a, b, c, h)
#define NEED(ptr) \
    if ((ptr) == NULL) \
        return -1

static Py_ssize_t size_of(PyObject *run, int g, int k, int axis, int kind)
{
    /* the size of one axis of an array whose shape defines a size of the run */
    PyObject *group = group_of(run, g);
    if (group == NULL)
        return -1;
    Py_buffer v;
    if (PyObject_GetBuffer(PyTuple_GET_ITEM(group, k), &v, PyBUF_STRIDES) != 0) {
        PyErr_Format(PyExc_TypeError, "advance: run.%s.%s must be a %s array",
                     GROUP_NAMES[g], GROUP_FIELDS[g][k], kind == F8 ? "float64" : "int64");
        return -1;
    }
    const Py_ssize_t size = axis < v.ndim ? v.shape[axis] : -1;
    PyBuffer_Release(&v);
    if (size < 0) {
        PyErr_Format(PyExc_ValueError, "advance: run.%s.%s has too few dimensions",
                     GROUP_NAMES[g], GROUP_FIELDS[g][k]);
        return -1;
    }
    return size;
}

/* Fill r from the run's arrays (their buffers held in h); 0, or -1 with an exception set. */
static int read_run(PyObject *run, fn_run *r, const fn_state *st, held_views *h)
{
    if (!PyTuple_Check(run) || PyTuple_GET_SIZE(run) != N_GROUPS) {
        PyErr_SetString(PyExc_TypeError, "advance: run must be a tuple of 8 groups");
        return -1;
    }
    for (int g = 0; g < N_GROUPS; g++)
        if (group_of(run, g) == NULL)
            return -1;
    /* the sizes of this run, from the arrays that define them */
    const Py_ssize_t n = size_of(run, G_SW, 0, 0, F8);          /* sw.y */
    const Py_ssize_t nlag = size_of(run, G_MD, 6, 0, I8);       /* md.lag_state */
    const Py_ssize_t nsw = size_of(run, G_MD, 10, 0, I8);       /* md.sw_lagdep */
    const Py_ssize_t S = size_of(run, G_RK, 2, 0, F8);          /* rk.C */
    const Py_ssize_t cap = size_of(run, G_HS, 1, 0, F8);        /* hs.mc */
    const Py_ssize_t ndp = size_of(run, G_DC, 0, 0, F8);        /* dc.dp_t */
    const Py_ssize_t ndw = size_of(run, G_DC, 2, 0, F8);        /* dc.dw_t */
    const Py_ssize_t ne = size_of(run, G_OUT, 0, 0, F8);        /* out.t_eval */
    if (n < 0 || nlag < 0 || nsw < 0 || S < 0 || cap < 0 || ndp < 0 || ndw < 0 || ne < 0)
        return -1;
    if (n < 1 || S < 1 || cap < 1 || ndw < 1) {
        PyErr_SetString(PyExc_ValueError, "advance: a run needs states, stages and room");
        return -1;
    }
    const Py_ssize_t nl1 = nlag > 1 ? nlag : 1, ns1 = nsw > 1 ? nsw : 1;
    const Py_ssize_t ncorner = (Py_ssize_t)1 << (nsw < MAX_SLIDING ? nsw : MAX_SLIDING);
    const Py_ssize_t mcols = ns1 > n ? ns1 : n;
    const Py_ssize_t nG = nsw * (n + 1) > 1 ? nsw * (n + 1) : 1;
    r->n = n;
    r->nlag = nlag;
    r->nl1 = nl1;
    r->nsw = nsw;
    r->ns1 = ns1;
    r->S = S;
    r->cap = cap;
    r->ndp_cap = ndp;
    r->ndw_cap = ndw;
    r->ne = ne;
    r->mcols = mcols;
    r->ncorner = ncorner;

    /* the method: read first, since an implicit method needs the model's Jacobian */
    fn_method *rk = &r->rk;
    NEED(rk->A = F(G_RK, 0, 1, 2, S, S, 0));
    NEED(rk->B = F(G_RK, 1, 1, 1, S, 0, 0));
    NEED(rk->C = F(G_RK, 2, 1, 1, S, 0, 0));
    NEED(rk->E = F(G_RK, 3, 1, 1, S, 0, 0));
    NEED(rk->P = F(G_RK, 4, 1, 2, S, NCOEF - 1, 0));
    NEED(rk->G = F(G_RK, 5, 1, 2, S, S, 0));
    NEED(rk->Q = F(G_RK, 6, 1, 1, S, 0, 0));
    NEED(rk->T = F(G_RK, 7, 1, 1, S, 0, 0));
    int implicit = 0;
    for (Py_ssize_t s = 0; s < S; s++)
        if (rk->G[s * S + s] > 0.0)
            implicit = 1;

    PyObject *mdt = PyTuple_GET_ITEM(run, G_MD);
    fn_model *md = &r->md;
    if (address_of(mdt, 0, 1, &md->rhs) || address_of(mdt, 1, 1, &md->delay) ||
        address_of(mdt, 2, 1, &md->sw) || address_of(mdt, 3, 1, &md->sgrad) ||
        address_of(mdt, 4, implicit, &md->jac))
        return -1;
    NEED(md->p = F(G_MD, 5, 1, 1, ANY, 0, 0));
    NEED(md->lag_state = I(G_MD, 6, 1, 1, nlag, 0, 0));
    NEED(md->lag_sdep = I(G_MD, 7, 1, 1, nlag, 0, 0));
    NEED(md->nonneg = I(G_MD, 8, 1, 1, n, 0, 0));
    NEED(md->hstart = F(G_MD, 9, 1, 1, n, 0, 0));
    NEED(md->sw_lagdep = I(G_MD, 10, 1, 1, nsw, 0, 0));
    NEED(md->tauc = F(G_MD, 11, 0, 1, nl1, 0, 0));
    for (Py_ssize_t k = 0; k < nlag; k++)
        if (md->lag_state[k] < 0 || md->lag_state[k] >= n) {
            PyErr_Format(PyExc_ValueError, "advance: lag %zd refers to state %lld of %zd", k,
                         (long long)md->lag_state[k], n);
            return -1;
        }

    fn_field *fw = &r->fw;
    NEED(fw->z = F(G_FW, 0, 0, 1, nl1, 0, 0));
    NEED(fw->largs = F(G_FW, 1, 0, 1, nl1, 0, 0));
    NEED(fw->w = F(G_FW, 2, 0, 1, ns1, 0, 0));
    NEED(fw->lam = F(G_FW, 3, 0, 1, ns1, 0, 0));
    NEED(fw->sv = F(G_FW, 4, 0, 1, ns1, 0, 0));
    NEED(fw->zdot = F(G_FW, 5, 0, 1, nl1, 0, 0));
    NEED(fw->kbuf = F(G_FW, 6, 0, 1, 1, 0, 0));
    NEED(fw->xe = F(G_FW, 7, 0, 1, n, 0, 0));
    NEED(fw->G = F(G_FW, 8, 0, 1, nG, 0, 0));
    NEED(fw->corners = F(G_FW, 9, 0, 2, ncorner, n, 0));
    NEED(fw->J = F(G_FW, 10, 0, 2, ns1, ns1, 0));
    NEED(fw->M = F(G_FW, 11, 0, 2, ns1, mcols, 0));
    NEED(fw->vbuf = F(G_FW, 12, 0, 1, 5 * ns1 + n, 0, 0));
    NEED(fw->hints = I(G_FW, 13, 0, 1, nl1, 0, 0));
    NEED(fw->slide = I(G_FW, 14, 0, 1, ns1, 0, 0));
    NEED(fw->stuck = I(G_FW, 15, 0, 1, n, 0, 0));
    NEED(fw->sl = I(G_FW, 16, 0, 1, ns1, 0, 0));
    NEED(fw->sel = I(G_FW, 17, 0, 1, ns1, 0, 0));
    NEED(fw->save = F(G_FW, 18, 0, 2, 3, ns1, 0));

    fn_history *hs = &r->hs;
    NEED(hs->mt = F(G_HS, 0, 0, 1, cap + 1, 0, 0));
    NEED(hs->mc = F(G_HS, 1, 0, 3, cap, n, NCOEF));
    NEED(hs->cc = F(G_HS, 2, 0, 2, n, NCOEF, 0));

    fn_step *sw = &r->sw;
    NEED(sw->y = F(G_SW, 0, 0, 1, n, 0, 0));
    NEED(sw->K = F(G_SW, 1, 0, 2, S, n, 0));
    NEED(sw->Kraw = F(G_SW, 2, 0, 2, S, n, 0));
    NEED(sw->ynew = F(G_SW, 3, 0, 1, n, 0, 0));
    NEED(sw->ytmp = F(G_SW, 4, 0, 1, n, 0, 0));
    NEED(sw->yprev = F(G_SW, 5, 0, 1, n, 0, 0));
    NEED(sw->etmp = F(G_SW, 6, 0, 1, n, 0, 0));
    NEED(sw->cn = F(G_SW, 7, 0, 2, n, NCOEF, 0));
    NEED(sw->svs = F(G_SW, 8, 0, 2, S, ns1, 0));
    NEED(sw->lams = F(G_SW, 9, 0, 2, S, ns1, 0));
    NEED(sw->fa = F(G_SW, 10, 0, 1, n, 0, 0));
    NEED(sw->fra = F(G_SW, 11, 0, 1, n, 0, 0));
    NEED(sw->fb = F(G_SW, 12, 0, 1, n, 0, 0));
    NEED(sw->frb = F(G_SW, 13, 0, 1, n, 0, 0));
    NEED(sw->gst = F(G_SW, 14, 0, 1, S, 0, 0));
    NEED(sw->atol = F(G_SW, 15, 1, 1, n, 0, 0));
    NEED(sw->lu = F(G_SW, 16, 0, 2, implicit ? n : 1, implicit ? n + 1 : 1, 0));
    NEED(sw->piv = I(G_SW, 17, 0, 1, implicit ? n : 1, 0, 0));

    fn_marks *mk = &r->mk;
    NEED(mk->sv0 = F(G_MK, 0, 0, 1, ns1, 0, 0));
    NEED(mk->lam0 = F(G_MK, 1, 0, 1, ns1, 0, 0));
    NEED(mk->largs0 = F(G_MK, 2, 0, 1, nl1, 0, 0));
    NEED(mk->sv1 = F(G_MK, 3, 0, 1, ns1, 0, 0));
    NEED(mk->lam1 = F(G_MK, 4, 0, 1, ns1, 0, 0));
    NEED(mk->largs1 = F(G_MK, 5, 0, 1, nl1, 0, 0));

    fn_disc *dc = &r->dc;
    NEED(dc->dp_t = F(G_DC, 0, 0, 1, ndp, 0, 0));
    NEED(dc->dp_l = I(G_DC, 1, 0, 1, ndp, 0, 0));
    NEED(dc->dw_t = F(G_DC, 2, 0, 1, ndw, 0, 0));
    NEED(dc->dw_l = I(G_DC, 3, 0, 1, ndw, 0, 0));
    NEED(dc->dw_done = I(G_DC, 4, 0, 1, ndw, 0, 0));

    fn_output *out = &r->out;
    NEED(out->t_eval = F(G_OUT, 0, 1, 1, ne, 0, 0));
    NEED(out->y_eval = F(G_OUT, 1, 0, 2, ne, n, 0));
    NEED(out->btime = F(G_OUT, 2, 0, 1, n, 0, 0));
    NEED(out->slide_time = F(G_OUT, 3, 0, 1, ns1, 0, 0));
    NEED(out->slide_weight = F(G_OUT, 4, 0, 1, ns1, 0, 0));

    /* the counters the kernel indexes with */
    const char *bad = NULL;
    if (st->nsw != nsw)
        bad = "nsw differs from the number of switches of the model";
    else if (st->nm < 1 || st->nm > cap || st->nh < 0 || st->nh > st->nm)
        bad = "nm and nh must count stored pieces (1 <= nm <= capacity, 0 <= nh <= nm)";
    else if (st->ndp < 0 || st->ndp > ndp || st->ndw < 0 || st->ndw > ndw)
        bad = "ndp and ndw must count stored discontinuity points";
    else if (!st->started && (st->ndp + nlag > ndp))
        bad = "the landing points of a new run need room for one per lag";
    else if (st->ie < 0 || st->ie > ne)
        bad = "ie must index the output times";
    if (bad != NULL) {
        PyErr_Format(PyExc_ValueError, "advance: state record: %s", bad);
        return -1;
    }
    return 0;
}

/* --------------------------------------------------------------------------------- advance */
PyDoc_STRVAR(advance_doc,
             "advance(st, run, budget)\n--\n\n"
             "Integrate the run until its end, a failure, or ``budget`` step attempts; returns\n"
             "the status code (see fluidnet.dde._codes). ``st`` is a NumPy array of one\n"
             "RUN_STATE record, ``run`` the Run of fluidnet.dde._state. The GIL is released\n"
             "while integrating.");

static PyObject *advance(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *st_obj, *run;
    long long budget;
    if (!PyArg_ParseTuple(args, "OOL:advance", &st_obj, &run, &budget))
        return NULL;
    Py_buffer stv;
    if (PyObject_GetBuffer(st_obj, &stv, PyBUF_C_CONTIGUOUS | PyBUF_WRITABLE) != 0) {
        PyErr_SetString(PyExc_TypeError,
                        "advance: st must be a writable array of one RUN_STATE record");
        return NULL;
    }
    if (stv.len != (Py_ssize_t)sizeof(fn_state) || stv.itemsize != (Py_ssize_t)sizeof(fn_state) ||
        ((uintptr_t)stv.buf % 8) != 0) {
        PyBuffer_Release(&stv);
        PyErr_Format(PyExc_TypeError,
                     "advance: st must be an aligned array of one RUN_STATE record of %zd bytes",
                     (Py_ssize_t)sizeof(fn_state));
        return NULL;
    }
    fn_state *st = (fn_state *)stv.buf;
    held_views h;
    h.count = 0;
    fn_run r;
    memset(&r, 0, sizeof r);
    if (read_run(run, &r, st, &h) != 0) {
        release_views(&h);
        PyBuffer_Release(&stv);
        return NULL;
    }
    int64_t status;
    Py_BEGIN_ALLOW_THREADS
    status = fn_advance(st, &r, (int64_t)budget);
    Py_END_ALLOW_THREADS
    release_views(&h);
    PyBuffer_Release(&stv);
    return PyLong_FromLongLong((long long)status);
}

static PyMethodDef methods[] = {
    {"advance", advance, METH_VARARGS, advance_doc},
    {NULL, NULL, 0, NULL},
};

/* ------------------------------------------------------------------------------ the module */
static int add_tables(PyObject *m)
{
    const Py_ssize_t nf = (Py_ssize_t)(sizeof STATE_FIELDS / sizeof STATE_FIELDS[0]);
    PyObject *fields = PyTuple_New(nf);
    if (fields == NULL)
        return -1;
    for (Py_ssize_t k = 0; k < nf; k++) {
        PyObject *item = Py_BuildValue("(snC)", STATE_FIELDS[k].name, STATE_FIELDS[k].offset,
                                       (int)STATE_FIELDS[k].kind);
        if (item == NULL) {
            Py_DECREF(fields);
            return -1;
        }
        PyTuple_SET_ITEM(fields, k, item);
    }
    if (PyModule_AddObject(m, "STATE_FIELDS", fields) != 0) {
        Py_DECREF(fields);
        return -1;
    }
    PyObject *groups = PyTuple_New(N_GROUPS);
    if (groups == NULL)
        return -1;
    for (int g = 0; g < N_GROUPS; g++) {
        const Py_ssize_t nk = count_fields(GROUP_FIELDS[g]);
        PyObject *names = PyTuple_New(nk);
        if (names == NULL) {
            Py_DECREF(groups);
            return -1;
        }
        for (Py_ssize_t k = 0; k < nk; k++)
            PyTuple_SET_ITEM(names, k, PyUnicode_FromString(GROUP_FIELDS[g][k]));
        PyTuple_SET_ITEM(groups, g, Py_BuildValue("(sN)", GROUP_NAMES[g], names));
    }
    if (PyModule_AddObject(m, "RUN_FIELDS", groups) != 0) {
        Py_DECREF(groups);
        return -1;
    }
    PyObject *codes = PyDict_New();
    if (codes == NULL)
        return -1;
    for (size_t k = 0; k < sizeof CODES / sizeof CODES[0]; k++) {
        PyObject *value = PyLong_FromLong(CODES[k].value);
        if (value == NULL || PyDict_SetItemString(codes, CODES[k].name, value) != 0) {
            Py_XDECREF(value);
            Py_DECREF(codes);
            return -1;
        }
        Py_DECREF(value);
    }
    if (PyModule_AddObject(m, "CODES", codes) != 0) {
        Py_DECREF(codes);
        return -1;
    }
    if (PyModule_AddIntConstant(m, "STATE_SIZE", (long)sizeof(fn_state)) != 0 ||
        PyModule_AddIntConstant(m, "NCOEF", NCOEF) != 0 ||
        PyModule_AddIntConstant(m, "MAX_SLIDING", MAX_SLIDING) != 0 ||
        PyModule_AddStringConstant(m, "SOURCE_DIGEST", FLUIDNET_SOURCE_DIGEST) != 0)
        return -1;
    return 0;
}

static int exec_module(PyObject *m) { return add_tables(m); }

static PyModuleDef_Slot slots[] = {
    {Py_mod_exec, exec_module},
    {0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    "fluidnet.dde._integrator",
    "The compiled integrator of fluidnet (see fluidnet/dde/src/kernel.h).",
    0,
    methods,
    slots,
    NULL,
    NULL,
    NULL,
};

PyMODINIT_FUNC PyInit__integrator(void) { return PyModuleDef_Init(&module); }
