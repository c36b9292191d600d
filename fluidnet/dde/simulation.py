"""``simulate``: integrate a fluid model's nonlinear delay equations."""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ..codegen.compiled import CompiledModel, SavedModel
from ..errors import IntegrationError, ModelError, OptionError, ParameterError
from ..options import count_option, number_option
from ..overrides import reject_keywords
from . import _codes as F
from ._state import ModelData, enlarged, new_run, trimmed
from .engine import integrator
from .history import HistoryData, build_history, normalize_history
from .methods import METHODS
from .solution import Solution, counters_from

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from ..symbolic.model import Model

__all__ = ["simulate"]

#: Generations of delay-propagated discontinuity points tracked after an event (a projected
#: state reaching or leaving 0, a switch); the jump at ``t0`` is tracked to the method's order.
EVENT_GENERATIONS = 2


@dataclass(frozen=True)
class Options:
    """Validated integration options shared by :func:`simulate` and the ensemble."""

    t0: float
    t_end: float
    rtol: float
    atol: np.ndarray
    max_step: float
    first_step: float
    method: str
    max_steps: int


def _positive(name: str, value: Any, allow_inf: bool = False) -> float:
    return number_option(name, value, positive=True, allow_inf=allow_inf)


def make_options(model, t_end, t0, rtol, atol, max_step, first_step, method, max_steps) -> Options:
    """Check the integration options (with :mod:`fluidnet.options`: real numbers, not text);
    raises :class:`OptionError` naming the bad one."""
    t0 = number_option("t0", t0)
    t_end = number_option("t_end", t_end)
    if not t_end > t0:
        raise OptionError(f"t_end = {t_end:g} must be after t0 = {t0:g}")
    rtol = _positive("rtol", rtol)
    if rtol < 1e-13:
        raise OptionError(f"rtol = {rtol:g} is below what double precision can deliver (1e-13)")
    n = len(model.state_names)
    if isinstance(atol, Mapping):
        unknown = set(atol) - set(model.state_names)
        if unknown:
            raise OptionError(f"atol given for unknown states {sorted(unknown)}")
        a = np.full(n, 1e-9)
        for i, s in enumerate(model.state_names):
            if s in atol:
                a[i] = _positive(f"atol[{s!r}]", atol[s])
    else:
        arr = np.atleast_1d(np.asarray(atol))
        if arr.dtype.kind not in "fiu":
            raise OptionError(f"atol must be real numbers, not {atol!r}")
        arr = arr.astype(float)
        if arr.size == 1:
            a = np.full(n, _positive("atol", arr[0]))
        elif arr.shape == (n,):
            a = np.array([_positive(f"atol[{i}]", v) for i, v in enumerate(arr)])
        else:
            raise OptionError(f"atol must be a number, a dict by state, or {n} values")
    max_step = np.inf if max_step is None else _positive("max_step", max_step, allow_inf=True)
    first_step = 0.0 if first_step is None else _positive("first_step", first_step)
    if method not in METHODS:
        raise OptionError(f"method {method!r} is unknown; choose one of {sorted(METHODS)}")
    return Options(t0, t_end, rtol, a, max_step, first_step, method, _max_steps(max_steps))


#: Largest ``max_steps`` (the kernel counts steps in 64-bit integers).
MAX_STEPS_LIMIT = 2**62


def _max_steps(value: Any) -> int:
    """``max_steps`` as an int in ``[1, MAX_STEPS_LIMIT]``; raises :class:`OptionError`."""
    v = count_option("max_steps", value)
    if not 1 <= v <= MAX_STEPS_LIMIT:
        raise OptionError(f"max_steps must be between 1 and 2**62, got {value!r}")
    return v


def check_t_eval(t_eval, opts: Options) -> np.ndarray:
    if t_eval is None:
        return np.zeros(0)
    te = np.asarray(t_eval).reshape(-1)
    if te.size and te.dtype.kind not in "fiu":
        raise OptionError(f"t_eval must be real times, not {te.dtype} values")
    te = te.astype(float)
    if te.size and (not np.all(np.isfinite(te)) or np.any(np.diff(te) < 0)):
        raise OptionError("t_eval must be finite and non-decreasing")
    tol = 1e-12 * max(1.0, abs(opts.t_end))
    if te.size and (te[0] < opts.t0 - tol or te[-1] > opts.t_end + tol):
        raise OptionError(
            f"t_eval must lie in [t0, t_end] = [{opts.t0:g}, {opts.t_end:g}] "
            f"(got [{te[0]:g}, {te[-1]:g}])"
        )
    return np.clip(te, opts.t0, opts.t_end)


def model_data(
    cm: CompiledModel, pvec: np.ndarray, hist: HistoryData, jacobian: bool = False
) -> ModelData:
    """The kernel's view of a compiled model with its parameter values (and the address of its
    Jacobian when ``jacobian``, for a linearly implicit method)."""
    rhs, delay, switch, sgrad = (int(a) for a in cm.addresses)
    jac = cm.jacobian_address() if jacobian else 0
    return ModelData(
        rhs=rhs,
        delay=delay,
        switch=switch,
        sgrad=sgrad,
        jac=jac,
        p=np.ascontiguousarray(pvec, dtype=np.float64) if pvec.size else np.zeros(1),
        lag_state=cm.lag_state,
        lag_sdep=cm.lag_statedep,
        nonneg=cm.nonnegative,
        hstart=np.ascontiguousarray(hist.start, dtype=np.float64),
        sw_lagdep=cm.switch_lagdep,
        tauc=np.zeros(max(1, cm.nlag)),
    )


@dataclass(frozen=True)
class KernelResult:
    """What one run of the kernel returns to Python."""

    status: int
    index: int
    info: tuple[float, float, float, float]  # time, step, value and extra of a failure
    y: np.ndarray  # the last accepted state
    mesh_t: np.ndarray  # the mesh and dense output, history pieces included
    mesh_c: np.ndarray
    n_hist_pieces: int
    y_eval: np.ndarray
    counters: dict[str, int]
    btime: np.ndarray  # time held at 0, per projected state
    slide_time: np.ndarray  # time sliding, per switch
    slide_weight: np.ndarray  # integral of the Filippov weight while sliding, per switch
    t0: float = math.nan  # start of the run
    x0: np.ndarray | None = None  # state at t0
    recent_t: np.ndarray | None = None  # the last mesh points before the end (or failure)
    method: str = ""


#: Seconds of work per call of the compiled kernel: Ctrl-C is seen between calls.
SLICE_SECONDS = 0.05

_COUNTER_FIELDS = {
    "steps": "steps",
    "rejected": "rejects",
    "rhs_evaluations": "fev",
    "discontinuities": "discontinuities",
    "events": "events",
    "iterations": "iterations",
    "sliding_entries": "slides",
}


def run_kernel(
    cm: CompiledModel,
    pvec: np.ndarray,
    hist: HistoryData,
    opts: Options,
    t_eval: np.ndarray,
    keep_mesh: bool,
    stop: Callable[[], bool] | None = None,
) -> KernelResult:
    """Integrate one trajectory with the compiled kernel (which releases the GIL).

    The kernel runs in slices of about :data:`SLICE_SECONDS`, so a KeyboardInterrupt (or
    ``stop()`` returning True, for worker threads) ends the run between slices. Without
    ``keep_mesh`` the dense output older than what the delays can still reach is dropped.
    """

    rk = METHODS[opts.method]
    st, run = new_run(
        model_data(cm, pvec, hist, rk.implicit),
        rk,
        hist.t,
        hist.c,
        hist.x0,
        opts.atol,
        t_eval,
        cm.nswitch,
    )
    s = st[0]
    s["t0"] = opts.t0
    s["t_end"] = opts.t_end
    s["rtol"] = opts.rtol
    s["h_max"] = opts.max_step
    s["h_first"] = opts.first_step
    s["max_steps"] = opts.max_steps
    s["track_level"] = rk.order
    s["event_generations"] = EVENT_GENERATIONS
    budget = 1000
    advance = integrator().advance
    while True:
        started = time.perf_counter()
        status = advance(st, run, budget)
        # checked at every return: with dense=False and short steps the arrays fill up
        # (ST_NEED_SPACE) long before the budget runs out
        if status in (F.ST_PAUSED, F.ST_NEED_SPACE) and stop is not None and stop():
            raise KeyboardInterrupt
        if status == F.ST_PAUSED:
            spent = max(time.perf_counter() - started, 1e-4)
            budget = int(min(max(budget * SLICE_SECONDS / spent, 16), 1_000_000))
        elif status == F.ST_NEED_SPACE:
            if keep_mesh:
                run = enlarged(st, run)
            else:
                reach = 2.0 * float(s["max_delay"]) + 2.0 * float(s["h"])
                run = trimmed(st, run, float(s["t"]) - reach)
        else:
            break
    nm = int(s["nm"])
    recent_t = run.hs.mt[max(0, nm + 1 - RECENT_STEPS) : nm + 1].copy()
    if keep_mesh:
        mesh_t, mesh_c = run.hs.mt[: nm + 1].copy(), run.hs.mc[:nm].copy()
    else:
        mesh_t, mesh_c = run.hs.mt[:1].copy(), run.hs.mc[:0].copy()
    if status != F.ST_OK:
        info = (
            float(s["fail_t"]),
            float(s["fail_h"]),
            float(s["fault_value"]),
            float(s["fault_time"]),
        )
    else:
        info = (float(s["t"]), float(s["h"]), 0.0, 0.0)
    return KernelResult(
        status=int(status),
        index=int(s["index"]),
        info=info,
        y=run.sw.y.copy(),
        mesh_t=mesh_t,
        mesh_c=mesh_c,
        n_hist_pieces=int(s["nh"]),
        y_eval=run.out.y_eval,
        counters={k: int(s[f]) for k, f in _COUNTER_FIELDS.items()},
        btime=run.out.btime,
        slide_time=run.out.slide_time,
        slide_weight=run.out.slide_weight,
        t0=opts.t0,
        x0=np.array(hist.x0, dtype=float),
        recent_t=recent_t,
        method=opts.method,
    )


#: Mesh points kept for the diagnosis of a failure (:func:`failure_message`).
RECENT_STEPS = 101
#: A state of this magnitude or beyond has diverged: no quantity of a fluid model comes near
#: it, and the product of two such values overflows double precision.
OVERFLOW = 1e100
#: Growth, from the largest magnitude of a state over the first half of the run (its history and
#: start value included) to its value where the step size collapsed, that is a blow-up.
BLOW_UP = 1e6


def _divergence(names, res: KernelResult, t: float, growth: bool) -> str | None:
    """``"the solution diverges: ..."`` naming the state, its value and the time, or None.

    A state has diverged when it is not finite or beyond :data:`OVERFLOW`; with ``growth``
    (a failure where the step size collapsed), also when it grew by :data:`BLOW_UP` or more
    over the largest magnitude it had in the first half of the run (with the dense output
    kept; else since ``t0``).
    """
    y = np.asarray(res.y, dtype=float)
    ref = np.abs(res.x0) if res.x0 is not None else np.zeros(y.size)
    t_ref = res.t0
    if res.mesh_c.shape[0] and math.isfinite(res.t0):
        t_ref = res.t0 + 0.5 * (t - res.t0)
        first = res.mesh_t[: res.mesh_c.shape[0]] <= t_ref
        if first.any():
            with np.errstate(invalid="ignore"):
                ref = np.maximum(ref, np.nanmax(np.abs(res.mesh_c[first, :, 0]), axis=0))
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.abs(y) / np.maximum(ref, np.finfo(float).tiny)
    bad = ~np.isfinite(y) | (np.abs(y) >= OVERFLOW)
    if growth:
        bad |= ratio >= BLOW_UP
    if not bad.any():
        return None
    finite = bad & np.isfinite(y)
    i = int(np.argmax(np.where(finite, ratio, -1.0))) if finite.any() else int(np.argmax(bad))
    text = f"the solution diverges: {names[i]} = {y[i]:.6g} at t = {t:.10g}"
    if np.isfinite(y[i]) and math.isfinite(t_ref):
        text += f" (|{names[i]}| was at most {ref[i]:.3g} up to t = {t_ref:.6g})"
    others = [
        f"{names[j]} = {y[j]:.6g}" for j in np.flatnonzero(bad) if j != i and np.isfinite(y[j])
    ]
    if others:
        text += ", and so does " + ", ".join(others)
    return text


def _stalled_switching(res: KernelResult, t: float) -> str | None:
    """A run stopped by ``max_steps`` or a step size underflow while mode changes pile up at
    one time (Zeno behaviour, chattering): at least one mode change per two steps, and the last
    :data:`RECENT_STEPS` steps together advancing time by less than ``1e-9 max(1, |t|)``."""
    events, steps = res.counters["events"], res.counters["steps"]
    recent = res.recent_t
    if events < 100 or 2 * events < steps or recent is None or recent.size < RECENT_STEPS:
        return None
    span = float(recent[-1] - recent[0])
    if not span <= 1e-9 * max(1.0, abs(t)):
        return None
    return (
        f"mode changes pile up at t = {t:.10g}: {events} mode changes in {steps} steps, the "
        f"last {recent.size - 1} steps advancing time by {span:.3g} in all (Zeno behaviour or "
        "chattering between switching surfaces or at a projected state)"
    )


#: What the integrator saw, in a few words, for a failure explained by a divergence.
_STOPPED = {
    F.ST_NONFINITE: "a non-finite right-hand side or state",
    F.ST_UNDERFLOW: "a step size underflow",
    F.ST_ZENO: "mode changes without progress",
    F.ST_MAX_STEPS: "max_steps reached",
    F.ST_ITERATION: "the lags inside a step did not converge",
    F.ST_NO_SLIDING: "no Filippov weights in [0, 1]",
}


def failure_message(cm: CompiledModel, res: KernelResult) -> str | None:
    """Readable cause of a kernel failure, or None when the run succeeded.

    A failure where a state is not finite or has overflowed (or, where the step size
    collapsed, grew a millionfold) is reported as the divergence it is, naming the state, its
    value and the time, whatever stopped the integrator; a run stopped while mode changes pile
    up at one time is reported as such (Zeno behaviour or chattering), not as stiffness.
    """
    code, idx = res.status, res.index
    if code == F.ST_OK:
        return None
    form = cm.form
    names = form.states
    t, h, value, extra = res.info
    state = ", ".join(f"{s} = {v:.6g}" for s, v in zip(names, res.y, strict=True))
    where = f"at t = {t:.10g} with {state}"
    collapsed = code in (F.ST_NONFINITE, F.ST_UNDERFLOW, F.ST_ZENO)
    diverged = _divergence(names, res, t, growth=collapsed)
    if diverged is not None and code in _STOPPED:
        what = _STOPPED[code]
        if code == F.ST_NONFINITE:
            bad = names[idx] if 0 <= idx < len(names) else "a state"
            what += f" ({bad} = {value})"
        elif code == F.ST_UNDERFLOW:
            what += f" (the step fell to {h:.3g})"
        return f"{diverged}; the integrator stopped there on {what}"
    if code in (F.ST_MAX_STEPS, F.ST_UNDERFLOW):
        piled = _stalled_switching(res, t)
        if piled is not None:
            stop = "max_steps reached" if code == F.ST_MAX_STEPS else "step size underflow"
            return f"{piled}, {where}; {stop}"
    if diverged is not None:
        return f"{diverged}; {_plain_message(cm, res)}"
    return _plain_message(cm, res)


def _plain_message(cm: CompiledModel, res: KernelResult) -> str:
    """The message for the integrator's own cause of failure."""
    code, idx = res.status, res.index
    form = cm.form
    names = form.states
    t, h, value, extra = res.info
    state = ", ".join(f"{s} = {v:.6g}" for s, v in zip(names, res.y, strict=True))
    where = f"at t = {t:.10g} with {state}"
    if code == F.ST_NONFINITE:
        what = names[idx] if 0 <= idx < len(names) else "a state"
        return (
            f"non-finite right-hand side or state ({what} = {value}) {where}: the step size "
            f"fell to {h:.3g} without avoiding it (a singular or blowing-up model?)"
        )
    if code == F.ST_NEG_DELAY:
        lag = form.lags[idx]
        return (
            f"the delay {lag.delay} of {form.lag_label(lag)} became negative ({value:.6g}) "
            f"{where}: the model refers to the future"
        )
    if code == F.ST_NONFINITE_DELAY:
        lag = form.lags[idx]
        return f"the delay {lag.delay} of {form.lag_label(lag)} is not finite ({value}) {where}"
    if code == F.ST_HIST_RANGE:
        s = names[idx] if 0 <= idx < len(names) else "a state"
        return (
            f"the history of {s!r} is not defined at t = {value:.10g}, needed {where}; give "
            "samples (t, values) reaching further back"
        )
    if code == F.ST_MAX_STEPS:
        msg = f"max_steps reached {where}; raise max_steps or loosen rtol/atol"
        if res.method.upper() != "ROS2":
            msg += (
                "; if the model is stiff (a fast filter or a large gain forcing tiny steps), "
                "method='ROS2' (linearly implicit) needs far fewer steps"
            )
        return msg
    if code == F.ST_ZENO:
        return (
            f"too many mode changes without progress {where} (Zeno behaviour or chattering "
            "between switching surfaces or at a projected state)"
        )
    if code == F.ST_UNDERFLOW:
        return (
            f"step size underflow {where}: the step fell to {h:.3g} (the solution may blow "
            "up, or the right-hand side is discontinuous in a way its switching terms do not "
            "expose)"
        )
    if code == F.ST_ITERATION:
        return f"the lags inside a step did not converge {where}"
    if code == F.ST_DROPPED:
        s = names[idx] if 0 <= idx < len(names) else "a state"
        return (
            f"a delay reached back to t = {value:.10g} for {s!r} {where}, before the history "
            "kept with dense=False (the delay grew beyond twice its largest earlier value); "
            "run with dense=True"
        )
    if code == F.ST_NO_SLIDING:
        labels = cm.surface_labels
        on = [labels[j] for j in range(min(len(labels), 62)) if (idx >> j) & 1]
        surfaces = ", ".join(f"{s} = 0" for s in on)
        return (
            f"no Filippov weights in [0, 1] keep the solution on the surfaces {surfaces} at "
            f"t = {extra:.10g} (smallest normal velocity reached: {value:.3g} of the one-sided "
            f"fields'), needed {where}: the sliding motion where these surfaces meet is not "
            "defined by the multilinear Filippov combination"
        )
    if code == F.ST_TOO_MANY_SURFACES:
        return (
            f"the solution slides on {idx} switching surfaces at once {where}: the integrator "
            "combines the one-sided fields of at most 10 (2**10 corner fields)"
        )
    return f"integration failed (code {code}) {where}"  # pragma: no cover


def parameter_vector(model, values: Mapping[str, float]) -> np.ndarray:
    """The kernel's parameter vector; raises :class:`ParameterError` for a complex value."""
    for k in model.form.params:
        v = values[k]
        if isinstance(v, (complex, np.complexfloating)) and v.imag != 0:
            raise ParameterError(f"parameter {k!r}: value {v!r} is complex")
    return np.array([float(np.real(values[k])) for k in model.form.params], dtype=np.float64)


def simulate(
    model: Model | SavedModel,
    t_end: float,
    *,
    params: Mapping[str, float] | None = None,
    history: Mapping[str, Any] | Solution | None = None,
    t0: float | None = None,
    rtol: float = 1e-6,
    atol: float | Mapping[str, float] = 1e-9,
    max_step: float | None = None,
    t_eval: ArrayLike | None = None,
    n_points: int | None = None,
    method: str = "DP5",
    first_step: float | None = None,
    max_steps: int = 1_000_000,
    dense: bool = True,
    **unknown: Any,
) -> Solution:
    """Integrate a model's nonlinear delay-differential equations.

    Parameters
    ----------
    model : fluidnet.Model or fluidnet.SavedModel
    t_end : float
        End time.
    params : dict, optional
        Parameter overrides ``{name: value}``.
    history : dict or Solution, optional
        ``{state: spec}`` with ``spec`` a number (constant history), a callable of ``t``, or
        samples ``(t, values)`` reaching ``t0``. States left out start from (and have the
        history of) the model's equilibrium. A :class:`Solution` of an earlier run continues
        it: its dense output up to ``t0`` is the history, exactly.
    t0 : float, optional
        Start time; the state at ``t0`` is the history's value there. Default 0, or the end of
        the run given as ``history``.
    rtol, atol : float
        Relative and absolute local error tolerances (``atol`` may be a dict by state).
    max_step : float, optional
        Largest step.
    t_eval : array_like, optional
        Output times in ``[t0, t_end]``.
    n_points : int, optional
        Number of output samples, equally spaced over ``[t0, t_end]`` (both included), read
        off the dense output (instead of ``t_eval``). Without ``t_eval`` or ``n_points`` the
        output is every accepted step cut into ``REFINE = 4`` equal parts by the dense output
        (as MATLAB's ``Refine``), and a step longer than 1/1000 of the run into parts no
        longer than that: curves drawn through the samples are smooth (linear interpolation
        between them is within about 1e-3 of the range of a state, against 1e-2 for the step
        points alone); ``sol.mesh`` has the step points.
    method : {"DP5", "Tsit5", "BS3", "ROS2"}
        Dormand-Prince 5(4) with its fourth-order dense output, Tsitouras 5(4) with its free
        fourth-order interpolant, Bogacki-Shampine 3(2) with cubic Hermite dense output, or
        for stiff models the linearly implicit Rosenbrock-W method ROS2 (order 2, L-stable;
        uses the Jacobian of the right-hand side, generated once per model) (see
        :mod:`fluidnet.dde.methods`).
    first_step : float, optional
        Initial step (default: estimated).
    max_steps : int
        Limit on accepted steps (at most ``2**62``).
    dense : bool
        Keep the dense output (the default): ``sol(t)`` then evaluates the solution anywhere
        and the run can be continued. With ``dense=False`` only the values at ``t_eval``
        (required) are kept, and the integrator drops the dense output older than twice the
        largest delay seen, so memory stays bounded however long the run; the values at
        ``t_eval`` are identical to those of a dense run.
    **unknown
        Not options: a parameter given as a keyword is an :class:`~fluidnet.OptionError`
        pointing to ``params={...}``, any other name one listing the valid options.

    Returns
    -------
    Solution

    Raises
    ------
    ParameterError
        For a bad parameter value (unknown, out of bounds, complex, ...).
    OptionError
        For a bad integration option (``rtol``, ``atol``, ``method``, ``max_steps``,
        ``t_eval``, ``dense``, ...).
    ModelError
        For a history naming an unknown state, or a model that cannot be compiled.
    IntegrationError
        When the integration fails: a diverging solution (a state not finite or beyond 1e100,
        or growing a millionfold where the step size collapses), mode changes piling up at one
        time (Zeno behaviour or chattering), step size underflow, a delay turning negative, a
        history that is not finite or does not reach back far enough, ``max_steps``. The
        message names the time, the state values and the cause.

    See Also
    --------
    simulate_ensemble : many runs at once, one per parameter set
    oscillation : what the tail of a run does: converged, cycling, growing
    phase_portrait : runs from many initial histories in a plane of two states
    step_response : the linearized law's response to a parameter step, exact delays

    Notes
    -----
    How delays, discontinuities, projected states and switching terms (including Filippov
    sliding on one or several surfaces) are handled is described in :mod:`fluidnet.dde`.

    Examples
    --------
    >>> import fluidnet as fn
    >>> x = fn.states("x")
    >>> m = fn.Model(rhs={x: -x(fn.t - 1)}, params={})
    >>> sol = fn.simulate(m, 5.0, history={"x": 1.0}, rtol=1e-10, atol=1e-12)
    >>> round(float(sol(5.0)[0]), 8)  # method of steps: 19/120
    0.15833333

    The RCP fluid model from a 2x overload, its queue held at 0 part of the time:

    >>> m = fn.models.rcp()
    >>> sol = fn.simulate(m, 60.0, history={"R": 3750.0, "q": 0.0})
    >>> bool(sol["q"].min() == 0.0), sol.counters.time_on_boundary["q"] > 0
    (True, True)
    """
    if not (isinstance(model, SavedModel) or _is_model(model)):
        raise ModelError(
            f"simulate needs a fluidnet.Model (or a SavedModel from fn.load_compiled), got "
            f"{type(model).__name__} {model!r:.60}"
        )
    reject_keywords(unknown, "simulate", model)
    values = model.resolve_params(params or {})
    if t0 is None:
        t0 = history.t_end if isinstance(history, Solution) else 0.0
    opts = make_options(model, t_end, t0, rtol, atol, max_step, first_step, method, max_steps)
    if n_points is not None:
        t_eval = _uniform_times(t_eval, n_points, opts, len(model.state_names))
    te = check_t_eval(t_eval, opts)
    if not isinstance(dense, (bool, np.bool_)):
        raise OptionError(f"dense must be True or False, not {dense!r}")
    if not dense and t_eval is None:
        raise OptionError("dense=False keeps only the values at t_eval: give t_eval")
    if isinstance(model, SavedModel):
        cm = model.compiled
    else:
        from ..codegen.compiled import compile_model  # sympy: imported when a symbolic model is run

        cm = compile_model(model)
    spec = normalize_history(model, history, values)
    hist = build_history(model, spec, values, opts.t0, opts.rtol, opts.atol)
    pvec = parameter_vector(model, values)
    res = run_kernel(cm, pvec, hist, opts, te, bool(dense))
    msg = failure_message(cm, res)
    if msg is not None:
        raise IntegrationError(f"{model.name}: {msg}")
    mt, mc, nh = res.mesh_t, res.mesh_c, res.n_hist_pieces
    if te.size:
        t_out, y_out = te, res.y_eval.T.copy()
    else:
        t_out = mt[nh:]
        y_out = np.empty((cm.n, t_out.size))
        y_out[:, :-1] = mc[nh:, :, 0].T
        y_out[:, -1] = res.y
        nonneg = cm.nonnegative.astype(bool)
        y_out[nonneg] = np.maximum(y_out[nonneg], 0.0)
    counters = counters_from(
        res.counters,
        res.btime,
        cm.form.states,
        cm.nonnegative.astype(bool),
        cm.surface_labels,
        res.slide_time,
        res.slide_weight,
    )
    sol = Solution(
        model=model,
        t=t_out,
        y=y_out,
        mesh_t=mt,
        mesh_c=mc,
        hist_start=hist.start,
        n_hist_pieces=nh,
        params=values,
        t0=opts.t0,
        t_end=opts.t_end,
        method=opts.method,
        rtol=opts.rtol,
        atol=opts.atol,
        counters=counters,
        dense=bool(dense),
    )
    if not te.size:
        sol.t, sol.y = refined_output(sol, t_out, y_out)
    return sol


def _is_model(obj: Any) -> bool:
    """Whether ``obj`` is a :class:`fluidnet.Model` (without importing sympy: a process running
    only saved models never loads the module that defines it)."""
    mod = sys.modules.get("fluidnet.symbolic.model")
    return mod is not None and isinstance(obj, mod.Model)


#: Default output samples per accepted step (the step points and REFINE - 1 between them).
REFINE = 4
#: The default output has steps of at most 1 / MIN_SAMPLES of the run.
MIN_SAMPLES = 1000
#: Largest number of values (samples times states) ``n_points`` may ask for.
MAX_OUTPUT_VALUES = 10**8


def _uniform_times(t_eval, n_points, opts: Options, n_states: int) -> np.ndarray:
    """``n_points`` equally spaced output times over ``[t0, t_end]`` (``n_points`` checked)."""
    if t_eval is not None:
        raise OptionError(
            "give t_eval (the output times) or n_points (that many equally spaced), not both"
        )
    n = count_option("n_points", n_points, minimum=2, where="simulate")
    if n * max(n_states, 1) > MAX_OUTPUT_VALUES:
        raise OptionError(
            f"n_points = {n} would hold {n * n_states:.3g} values ({8e-9 * n * n_states:.3g} GB); "
            f"at most {MAX_OUTPUT_VALUES:.0e} values: ask for fewer, or give t_eval on the "
            "window you need"
        )
    return np.linspace(opts.t0, opts.t_end, n)


def refined_output(sol: Solution, t_mesh: np.ndarray, y_mesh: np.ndarray):
    """The step points and equally spaced times inside every step: ``REFINE`` parts per step,
    more in a step longer than ``1 / MIN_SAMPLES`` of the run; the values there read off the
    dense output (the step points' own values kept)."""
    h = np.diff(t_mesh)
    steps = np.flatnonzero(h > 0)
    if steps.size == 0:
        return t_mesh, y_mesh
    longest = (t_mesh[-1] - t_mesh[0]) / MIN_SAMPLES
    parts = np.maximum(REFINE, np.ceil(h[steps] / longest)).astype(int)
    owner = np.repeat(steps, parts - 1)
    j = np.arange(owner.size) - np.repeat(np.cumsum(parts - 1) - (parts - 1), parts - 1) + 1
    inner = t_mesh[owner] + h[owner] * (j / np.repeat(parts, parts - 1))
    t = np.concatenate([t_mesh, inner])
    y = np.concatenate([y_mesh, sol(inner).reshape(y_mesh.shape[0], -1)], axis=1)
    order = np.argsort(t, kind="stable")
    return t[order], y[:, order]
