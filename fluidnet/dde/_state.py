"""The integrator's state: one record of scalars and named groups of arrays.

The compiled kernel keeps nothing between calls: everything it needs to resume lives here, so
the driver can stop it every so often (to let Ctrl-C through), enlarge or trim its arrays, and
call it again.

The C integrator declares the same record (``struct fn_state``) and groups of arrays in
``fluidnet/dde/src/kernel.h``; :func:`fluidnet.dde.engine.integrator` checks, when it loads it,
that the record's fields and offsets and the groups' fields are the ones below, and the
integrator checks the type and shape of every array at every call.

``RunState`` (a NumPy record, passed by reference) holds the options, the progress of the run,
the current failure cause and the counters. The arrays travel in named tuples grouped by use:

``ModelData``
    the generated functions' addresses (``jac``: 0 unless the method is linearly implicit),
    parameters, static facts about lags, projected states
    and switches, the start of each state's history and the constant delays ``tauc``;
``Method``
    the Runge-Kutta tableau, error weights and dense-output matrix (:mod:`.methods`);
``FieldWork``
    what evaluating the field uses and leaves behind: lag values ``z`` and arguments
    ``largs``, mode weights ``w``, sliding weights ``lam`` and flags ``slide``, switching
    function values ``sv`` and gradients ``G``, held-state flags ``stuck``, lookup ``hints``;
``History``
    the mesh ``mt`` with its dense output ``mc`` (history pieces first) and the trial
    polynomial ``cc`` of the step being attempted;
``StepWork``
    the state ``y``, stages ``K`` (projected) and ``Kraw``, the step's end ``ynew`` and
    dense output ``cn``, per-stage switch values and sliding weights, scratch vectors, ``atol``,
    and for a linearly implicit method the LU factors ``lu``/``piv`` of ``I - gamma h J`` (its
    last column: the field's time derivative);
``Marks``
    switch values, sliding weights and lag arguments at the start (0) and end (1) of a step;
``Discontinuities``
    landing points ``dp_t``/``dp_l`` and watched points ``dw_t``/``dw_l``/``dw_done``;
``Output``
    ``t_eval`` and the values ``y_eval`` there, the time ``btime`` each projected state was
    held at 0, and per switch the time ``slide_time`` spent sliding on its surface and the
    integral ``slide_weight`` of its Filippov weight over that time.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from .methods import NCOEF, RungeKutta

_f8, _i8, _b1 = np.float64, np.int64, np.bool_

RUN_STATE = np.dtype(
    [
        # options (set once by the driver)
        ("t0", _f8),
        ("t_end", _f8),
        ("rtol", _f8),
        ("h_max", _f8),
        ("h_first", _f8),
        ("max_steps", _i8),
        ("order", _i8),  # of the method
        ("expo", _f8),  # 1 / (error order + 1)
        ("fsal", _b1),
        ("track_level", _i8),  # derivative order up to which discontinuities are tracked
        ("event_generations", _i8),
        ("nsw", _i8),  # switches
        # progress
        ("status", _i8),
        ("started", _b1),
        ("t", _f8),
        ("h", _f8),
        ("h_prop", _f8),  # the step the controller proposed (before landing)
        ("hmin", _f8),
        ("tol_m", _f8),
        ("err", _f8),
        ("rate", _f8),  # contraction rate of the lag iteration (-1: no lag inside the step)
        ("k_est", _f8),  # recent extra iterations per step
        ("rejected", _b1),
        ("smooth_start", _b1),  # no mode change at t: the predictor continues the last piece
        ("touched", _b1),  # dense evaluations clobbered the end-of-step field
        ("nzero", _i8),  # mode changes without progress
        ("land", _b1),
        ("target", _f8),
        ("target_disc", _i8),
        # the earliest event of the step, and the event function being located
        ("ev_type", _i8),
        ("ev_index", _i8),
        ("ev_theta", _f8),
        ("loc_type", _i8),
        ("loc_index", _i8),
        ("loc_xi", _f8),
        ("loc_sgn", _f8),
        # discontinuities
        ("any_sdep", _b1),
        ("sdep_mask", _i8),
        ("ndp", _i8),
        ("ndw", _i8),
        ("sd_m", _i8),
        ("sd_k", _i8),
        # history and output
        ("nm", _i8),  # stored pieces
        ("nh", _i8),  # of which history (before t0)
        ("trial_t", _f8),
        ("trial_h", _f8),
        ("future", _b1),  # a lookup reached into the step being attempted
        ("dropped_before", _f8),  # dense=False: the history before this time is gone
        ("max_delay", _f8),  # largest delay seen
        ("ie", _i8),  # next output time
        # the current evaluation's failure, the last one of a rejected step, the run's
        ("cause", _i8),
        ("index", _i8),
        ("fault_value", _f8),
        ("fault_time", _f8),
        ("last_cause", _i8),
        ("last_index", _i8),
        ("last_value", _f8),
        ("last_time", _f8),
        ("fail_t", _f8),
        ("fail_h", _f8),
        # counters
        ("steps", _i8),
        ("rejects", _i8),
        ("fev", _i8),
        ("discontinuities", _i8),
        ("events", _i8),
        ("iterations", _i8),
        ("slides", _i8),
        ("lu_h", _f8),  # the step size whose I - gamma h J is factored in sw.lu (-1: none)
    ],
    align=True,  # the layout of the C struct fn_state (fluidnet/dde/src/kernel.h)
)

ModelData = namedtuple(
    "ModelData", "rhs delay switch sgrad jac p lag_state lag_sdep nonneg hstart sw_lagdep tauc"
)
Method = namedtuple("Method", "A B C E P G Q T")
FieldWork = namedtuple(
    "FieldWork", "z largs w lam sv zdot kbuf xe G corners J M vbuf hints slide stuck sl sel save"
)
History = namedtuple("History", "mt mc cc")
StepWork = namedtuple(
    "StepWork", "y K Kraw ynew ytmp yprev etmp cn svs lams fa fra fb frb gst atol lu piv"
)
Marks = namedtuple("Marks", "sv0 lam0 largs0 sv1 lam1 largs1")
Discontinuities = namedtuple("Discontinuities", "dp_t dp_l dw_t dw_l dw_done")
Output = namedtuple("Output", "t_eval y_eval btime slide_time slide_weight")
Run = namedtuple("Run", "md rk fw hs sw mk dc out")

_METHOD_CACHE: dict[str, Method] = {}


def kernel_method(rk: RungeKutta) -> Method:
    """The kernel's (writable, contiguous) copy of a method's arrays."""
    m = _METHOD_CACHE.get(rk.name)
    if m is None:
        m = Method(*(np.array(getattr(rk, k), dtype=np.float64) for k in Method._fields))
        _METHOD_CACHE[rk.name] = m
    return m


def _f(*shape) -> np.ndarray:
    return np.zeros(shape, dtype=np.float64)


def _i(*shape) -> np.ndarray:
    return np.zeros(shape, dtype=np.int64)


def new_run(
    md: ModelData,
    rk: RungeKutta,
    hist_t: np.ndarray,
    hist_c: np.ndarray,
    x0: np.ndarray,
    atol: np.ndarray,
    t_eval: np.ndarray,
    nsw: int,
    capacity: int = 1024,
) -> tuple[np.ndarray, Run]:
    """A fresh state record and the arrays of one run (history pieces in place)."""
    n = x0.shape[0]
    nlag = md.lag_state.shape[0]
    nl1, ns1 = max(1, nlag), max(1, nsw)
    S = rk.stages
    fw = FieldWork(
        z=_f(nl1),
        largs=_f(nl1),
        w=_f(ns1),
        lam=_f(ns1),
        sv=_f(ns1),
        zdot=_f(nl1),
        kbuf=_f(1),
        xe=_f(n),
        G=_f(max(1, nsw * (n + 1))),
        corners=_f(1 << min(nsw, 10), n),
        J=_f(ns1, ns1),
        M=_f(ns1, max(ns1, n)),
        vbuf=_f(5 * ns1 + n),
        hints=_i(nl1),
        slide=_i(ns1),
        stuck=_i(n),
        sl=_i(ns1),
        sel=_i(ns1),
        save=_f(3, ns1),
    )
    nh = hist_c.shape[0]
    cap = nh + capacity
    mt = np.empty(cap + 1)
    mc = _f(cap, n, NCOEF)
    mt[: nh + 1] = hist_t
    mc[:nh] = hist_c
    hs = History(mt=mt, mc=mc, cc=_f(n, NCOEF))
    sw = StepWork(
        y=np.array(x0, dtype=np.float64),
        K=_f(S, n),
        Kraw=_f(S, n),
        ynew=_f(n),
        ytmp=_f(n),
        yprev=_f(n),
        etmp=_f(n),
        cn=_f(n, NCOEF),
        svs=_f(S, ns1),
        lams=_f(S, ns1),
        fa=_f(n),
        fra=_f(n),
        fb=_f(n),
        frb=_f(n),
        gst=_f(S),
        atol=np.ascontiguousarray(atol, dtype=np.float64),
        lu=_f(n if rk.implicit else 1, n + 1 if rk.implicit else 1),
        piv=_i(n if rk.implicit else 1),
    )
    mk = Marks(*(_f(k) for k in (ns1, ns1, nl1, ns1, ns1, nl1)))
    nd = 4 * nl1 + 64
    dc = Discontinuities(dp_t=_f(nd), dp_l=_i(nd), dw_t=_f(64), dw_l=_i(64), dw_done=_i(64))
    out = Output(
        t_eval=np.ascontiguousarray(t_eval, dtype=np.float64),
        y_eval=np.full((t_eval.shape[0], n), np.nan),
        btime=_f(n),
        slide_time=_f(ns1),
        slide_weight=_f(ns1),
    )
    st = np.zeros(1, dtype=RUN_STATE)
    st["t"] = st["trial_t"] = hist_t[-1]
    st["trial_h"] = 1.0
    st["k_est"] = 1.0
    st["nm"] = st["nh"] = nh
    st["nsw"] = nsw
    st["fsal"] = rk.fsal
    st["order"] = rk.order
    st["expo"] = 1.0 / (rk.error_order + 1)
    st["dropped_before"] = -np.inf
    return st, Run(md, kernel_method(rk), fw, hs, sw, mk, dc, out)


def _grown(a: np.ndarray, size: int) -> np.ndarray:
    b = np.zeros((size, *a.shape[1:]), dtype=a.dtype)
    b[: a.shape[0]] = a
    return b


def enlarged(st: np.ndarray, run: Run) -> Run:
    """The run with room for more steps (mesh doubled) and discontinuity points."""
    s = st[0]
    hs, dc = run.hs, run.dc
    nlag = run.md.lag_state.shape[0]
    if s["nm"] + 1 >= hs.mc.shape[0]:
        cap = 2 * hs.mc.shape[0]
        hs = History(mt=_grown(hs.mt, cap + 1), mc=_grown(hs.mc, cap), cc=hs.cc)
    if s["ndp"] + 3 * nlag + 1 > dc.dp_t.shape[0] or s["ndw"] + 4 > dc.dw_t.shape[0]:
        dp = 2 * dc.dp_t.shape[0] + 3 * nlag
        dw = 2 * dc.dw_t.shape[0]
        dc = Discontinuities(
            _grown(dc.dp_t, dp),
            _grown(dc.dp_l, dp),
            _grown(dc.dw_t, dw),
            _grown(dc.dw_l, dw),
            _grown(dc.dw_done, dw),
        )
    return run._replace(hs=hs, dc=dc)


def trimmed(st: np.ndarray, run: Run, keep_from: float) -> Run:
    """The run with the mesh pieces that end before ``keep_from`` dropped (``dense=False``).

    Lookups before the first kept piece then fail with ``ST_DROPPED`` instead of reading a
    wrong value. Grows the mesh instead when fewer than half its pieces can go.
    """
    s = st[0]
    hs = run.hs
    nm = int(s["nm"])
    drop = int(np.searchsorted(hs.mt[1 : nm + 1], keep_from, side="left"))
    drop = min(drop, nm - 1)
    if drop < hs.mc.shape[0] // 2:
        return enlarged(st, run)
    hs.mt[: nm + 1 - drop] = hs.mt[drop : nm + 1]
    hs.mc[: nm - drop] = hs.mc[drop:nm]
    s["nm"] = nm - drop
    s["nh"] = max(0, int(s["nh"]) - drop)
    s["dropped_before"] = hs.mt[0]
    hints = run.fw.hints
    np.clip(hints - drop, 0, None, out=hints)
    return run
