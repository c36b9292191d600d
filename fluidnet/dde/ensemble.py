"""``simulate_ensemble``: many parameter sets and initial histories in one parallel call."""

from __future__ import annotations

import itertools
import os
import threading
import uuid
import warnings
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

import numpy as np
import sympy

from ..codegen.compiled import compile_model
from ..errors import FluidnetError, IntegrationError, OptionError, ParameterError
from ..options import count_option
from ..overrides import parameter_values, reject_keywords
from ..sweep import FuturesExecutor, SerialExecutor, resolve_executor
from .history import build_history, normalize_history
from .simulation import (
    check_t_eval,
    failure_message,
    make_options,
    parameter_vector,
    run_kernel,
)

if TYPE_CHECKING:
    import xarray as xr
    from numpy.typing import ArrayLike

    from ..sweep.executors import ExecutorSpec
    from ..sweep.store import Store
    from ..symbolic.model import Model

__all__ = ["simulate_ensemble"]

#: Per-member counters of the result (see :class:`fluidnet.dde.solution.Counters`).
_COUNTERS = ("steps", "rejected", "rhs_evaluations", "events", "discontinuities")


def _parameter_sets(model, params: Mapping[str, Any] | None) -> tuple[list[str], np.ndarray]:
    """Names and a (M, k) array of the varied parameters (arrays broadcast together)."""
    if not params:
        return [], np.zeros((1, 0))
    names = list(params)
    for k in names:
        if k not in model.param_names:
            raise ParameterError(
                f"unknown parameter {k!r} for model {model.name!r} "
                f"(parameters: {', '.join(model.param_names)})"
            )
    # real numbers or real arrays (the rule of fluidnet.overrides); finiteness is checked
    # with the bounds
    raw = {k: parameter_values(f"parameter {k!r}", params[k], finite=False) for k in names}
    try:
        arrays = np.broadcast_arrays(*[raw[k] for k in names])
    except ValueError as exc:
        shapes = {k: np.shape(params[k]) for k in names}
        raise ParameterError(f"parameter arrays do not broadcast together: {shapes}") from exc
    table = np.stack([a.reshape(-1) for a in arrays], axis=1)
    if table.shape[0] == 0:
        raise ParameterError("the parameter arrays are empty")
    return names, table


def simulate_ensemble(
    model: Model,
    t_end: float,
    *,
    params: Mapping[str, Any] | None = None,
    history: Mapping[str, Any] | Sequence[Mapping[str, Any]] | None = None,
    t0: float = 0.0,
    rtol: float = 1e-6,
    atol: float | Mapping[str, float] = 1e-9,
    max_step: float | None = None,
    t_eval: ArrayLike | None = None,
    n_points: int = 1001,
    method: str = "DP5",
    first_step: float | None = None,
    max_steps: int = 1_000_000,
    workers: int | None = None,
    progress: bool | None = None,
    on_error: str = "raise",
    executor: ExecutorSpec = None,
    store: Store | str | os.PathLike | None = None,
    **unknown: Any,
) -> xr.Dataset:
    """Integrate many parameter sets and/or initial histories, in parallel.

    Members are every combination of a parameter set and a history: parameter set ``m`` and
    history ``h`` give member ``m * H + h``. One compiled integrator serves all of them
    (parameters are runtime values), and the trajectories run on ``workers`` threads that
    release the GIL.

    Parameters
    ----------
    model : fluidnet.Model
    t_end : float
    params : dict, optional
        ``{name: value or array}``; arrays are broadcast together (build grids with
        ``numpy.meshgrid``) and flattened in C order into the parameter sets. Parameters not
        named keep their model values.
    history : dict or list of dict, optional
        One history for all members, or a list of ``H`` histories (see
        :func:`fluidnet.simulate`); default: the equilibrium of each parameter set.
    t0, rtol, atol, max_step, method, first_step, max_steps
        As in :func:`fluidnet.simulate`.
    t_eval : array_like, optional
        Common output times; default ``n_points`` equally spaced times over ``[t0, t_end]``.
    n_points : int
        Number of default output times.
    workers : int, optional
        Threads (default: the number of CPU cores), when no ``executor`` is given.
    executor : optional
        Run the members elsewhere: ``"processes"``, a number of processes, ``"dask"``, a Dask
        scheduler address or ``Client``, or an executor (see :mod:`fluidnet.sweep`); the
        model and histories must then be picklable (no lambdas).
    store : path or fluidnet.sweep.Store, optional
        Checkpoint store: finished members are written as they complete, and the same call
        with the same store integrates only the members still missing (see
        :mod:`fluidnet.sweep.store`).
    progress : bool, optional
        Show a tqdm progress bar; by default it appears when the run takes more than a second
        and the output is a terminal or a notebook.
    on_error : {"raise", "nan"}
        ``"raise"``: the first failing member raises :class:`~fluidnet.IntegrationError`
        naming it (a member whose history is malformed raises the
        :class:`~fluidnet.ModelError` or :class:`~fluidnet.ParameterError` it is, naming the
        member). ``"nan"``: its values are NaN, its message is in the variable ``error``,
        and a warning reports how many members failed.
    **unknown
        Not options: a parameter given as a keyword is an :class:`~fluidnet.OptionError`
        pointing to ``params={...}``, any other name one listing the valid options.

    Returns
    -------
    xarray.Dataset
        One variable per state with dimensions ``(member, time)``; coordinates ``time``,
        ``member``, ``history`` (index of the history) and one per varied parameter (along
        ``member``); per-member counters ``steps``, ``rejected``, ``rhs_evaluations``,
        ``events``, ``time_on_boundary_<state>`` for projected states, and ``error`` (empty
        strings when every member succeeded). To get a grid back, e.g.
        ``ds.set_index(member=["alpha", "beta", "history"]).unstack("member")``.

    See Also
    --------
    simulate : one run
    nonlinear_chart : the nonlinear verdict over a plane of parameters
    fluidnet.sweep.sweep : any function over a grid, with executors and stores

    Examples
    --------
    >>> import numpy as np, fluidnet as fn
    >>> m = fn.models.rcp()
    >>> a, b = np.meshgrid([0.4, 0.8], [0.2, 0.6])
    >>> ds = fn.simulate_ensemble(m, 20.0, params={"alpha": a, "beta": b},
    ...                           history=[{"R": 375.0, "q": 0.0}, {"R": 3750.0, "q": 0.0}])
    >>> ds.sizes["member"]
    8
    """
    import xarray as xr

    reject_keywords(unknown, "simulate_ensemble", model)
    from ..codegen.compiled import SavedModel

    if isinstance(model, SavedModel):
        raise OptionError(
            f"simulate_ensemble needs the symbolic model, not the saved model {model.name!r} "
            "(loop over fn.simulate with the saved one, or pass the fluidnet.Model)"
        )
    if on_error not in ("raise", "nan"):
        raise OptionError(f"on_error must be 'raise' or 'nan', not {on_error!r}")
    names, table = _parameter_sets(model, params)
    histories = list(history) if isinstance(history, (list, tuple)) else [history]
    if not histories:
        raise ParameterError("history is an empty list")
    param_dicts = _validated_sets(model, names, table)
    base = param_dicts[0] if not names else model.resolve_params({})
    opts = make_options(model, t_end, t0, rtol, atol, max_step, first_step, method, max_steps)
    if t_eval is None:
        n_points = count_option("n_points", n_points, minimum=2, where="simulate_ensemble")
        t_eval = np.linspace(opts.t0, opts.t_end, n_points)
    te = check_t_eval(t_eval, opts)
    cm = compile_model(model)

    n_par, n_hist = len(param_dicts), len(histories)
    n_members = n_par * n_hist
    n = cm.n
    runner = _Members(model, histories, opts, te, on_error, cm)
    rows = [tuple(d[k] for k in model.param_names) for d in param_dicts]
    items = [
        (member, _member_label(member, names, table[m], h, n_hist), rows[m], h)
        for member, (m, h) in enumerate(itertools.product(range(n_par), range(n_hist)))
    ]
    run = _executor(executor, workers, n_members, runner.stop.set)
    results = run.map(
        runner,
        items,
        progress=progress,
        desc=f"{model.name} ensemble",
        store=store,
        progress_options={"min_items": 0, "unit": "run", "delay": 0.0 if progress else 1.0},
    )
    out = np.full((n, n_members, te.size), np.nan)
    counters = np.zeros((n_members, 5), dtype=np.int64)
    btimes = np.zeros((n_members, n))
    errors = np.full(n_members, "", dtype=object)
    for member, (y_eval, cnt, bt, msg) in enumerate(results):
        if msg:
            errors[member] = msg
            continue
        out[:, member, :] = y_eval.T
        counters[member] = cnt
        btimes[member] = bt

    failed = int(np.sum(errors != ""))
    if failed:
        warnings.warn(
            f"{failed} of {n_members} ensemble members failed; their values are NaN "
            "and the variable 'error' holds the reasons",
            RuntimeWarning,
            stacklevel=2,
        )
    member = np.arange(n_members)
    coords: dict[str, Any] = {
        "time": te,
        "member": member,
        "history": ("member", member % n_hist),
    }
    for j, k in enumerate(names):
        coords[k] = ("member", np.repeat(table[:, j], n_hist))
    data: dict[str, tuple[Any, Any]] = {
        s: (("member", "time"), out[i]) for i, s in enumerate(cm.form.states)
    }
    for j, k in enumerate(_COUNTERS):
        data[k] = ("member", counters[:, j])
    for i, s in enumerate(cm.form.states):
        if cm.nonnegative[i]:
            data[f"time_on_boundary_{s}"] = ("member", btimes[:, i])
    data["error"] = ("member", errors.astype(str))
    attrs = {
        "model": model.name,
        "method": opts.method,
        "rtol": opts.rtol,
        "t0": opts.t0,
        "t_end": opts.t_end,
    }
    attrs.update({f"param_{k}": v for k, v in base.items() if k not in names})
    return xr.Dataset(data, coords=coords, attrs=attrs)


def _executor(executor, workers: int | None, n_members: int, stop: Callable[[], None]):
    """The executor of the members: ``executor``, else ``workers`` threads (GIL released);
    ``stop()`` ends the threads' runs when the caller is interrupted."""
    if executor is not None:
        if workers is not None:
            raise OptionError("give either workers= (threads) or executor=, not both")
        return resolve_executor(executor)
    if workers is None:
        workers = os.cpu_count() or 1
    else:
        workers = count_option("workers", workers, where="simulate_ensemble")
    chunk = max(1, min(64, n_members // (8 * workers) or 1))
    if workers == 1 or n_members <= chunk:
        return SerialExecutor()
    return _ThreadExecutor(workers, chunk, stop)


class _ThreadExecutor(FuturesExecutor):
    """``workers`` threads for one map (the compiled integrator releases the GIL)."""

    def __init__(self, workers: int, chunksize: int, stop: Callable[[], None]) -> None:
        # no super().__init__: the pool exists only while a map runs (see _run)
        self.chunksize = chunksize
        self._workers = workers
        self.stop = stop

    def _check(self, fn) -> None:
        """Nothing to check: threads need no pickling."""

    def _run(self, fn, chunks):
        with ThreadPoolExecutor(max_workers=self.workers) as pool:
            self.pool = pool
            try:
                yield from super()._run(fn, chunks)
            except BaseException:  # interrupted or failed: end the running members too
                self.stop()
                raise

    def __repr__(self) -> str:
        return f"_ThreadExecutor(workers={self._workers})"


#: Compiled models of the members' runners in a worker process (by runner token, the last
#: few): a worker loads a model's compiled integrator once, not once per chunk of members.
_COMPILED: dict[str, Any] = {}
_COMPILED_KEEP = 4


class _Members:
    """Integrate one member (picklable, for process and Dask executors).

    An item is ``(member, label, parameter values in model order, history index)``; the result
    ``(y at t_eval (T, n), counters (5,), time on boundary (n,), error message)``, with NaN
    values and the message when the member failed and ``on_error="nan"``.
    """

    __sweep_ignore__ = ("token", "stop", "_built", "_cm")

    def __init__(self, model, histories, opts, t_eval, on_error, cm):
        self.model = model
        self.histories = histories
        self.opts = opts
        self.t_eval = t_eval
        self.on_error = on_error
        self.token = uuid.uuid4().hex
        self.shared = [_parameter_free(model, h) for h in histories]
        self.stop = threading.Event()  # set when the caller is interrupted (threads)
        self._cm = cm
        self._built: dict[int, Any] = {}

    def __getstate__(self):
        return {k: v for k, v in self.__dict__.items() if k not in ("stop", "_cm", "_built")}

    def __setstate__(self, state):
        self.__dict__.update(state)
        self.stop = threading.Event()
        self._built = {}
        self._cm = _COMPILED.get(self.token)

    def _compiled(self):
        if self._cm is None:
            self._cm = _COMPILED.setdefault(self.token, compile_model(self.model))
            while len(_COMPILED) > _COMPILED_KEEP:
                del _COMPILED[next(iter(_COMPILED))]
        return self._cm

    def _history(self, h: int, values: dict[str, float]):
        if self.shared[h] and h in self._built:
            return self._built[h]
        spec = normalize_history(self.model, self.histories[h], values)
        hist = build_history(self.model, spec, values, self.opts.t0, self.opts.rtol, self.opts.atol)
        if self.shared[h]:
            self._built[h] = hist
        return hist

    def __call__(self, item):
        _, label, row, h = item
        cm = self._compiled()
        values = dict(zip(self.model.param_names, row, strict=True))
        n, n_t = cm.n, self.t_eval.size
        kind = IntegrationError
        try:
            hist = self._history(h, values)
            pvec = parameter_vector(self.model, values)
            res = run_kernel(cm, pvec, hist, self.opts, self.t_eval, False, self.stop.is_set)
            msg = failure_message(cm, res)
        except FluidnetError as exc:
            # a bad history or parameter value is not a failure of the integrator: it keeps
            # its class (ModelError, ParameterError ...)
            kind, msg = type(exc), str(exc)
        if msg is not None:
            if self.on_error == "raise":
                raise kind(f"{self.model.name}, {label}: {msg}")
            return np.full((n_t, n), np.nan), np.zeros(len(_COUNTERS), np.int64), np.zeros(n), msg
        counters = np.array([res.counters[k] for k in _COUNTERS], dtype=np.int64)
        return np.asarray(res.y_eval), counters, np.asarray(res.btime, dtype=float), ""


def _validated_sets(model, names: list[str], table: np.ndarray) -> list[dict[str, float]]:
    """Parameter dicts of the sets, checked like ``Model.resolve_params`` but vectorized."""
    base = model.resolve_params({}) if not names else None
    if base is not None:
        return [base]
    defaults = {k: p.value for k, p in model.params.items()}
    missing = [k for k, v in defaults.items() if v is None and k not in names]
    if missing:
        model.resolve_params({})  # raises the usual message for the first missing value
    for j, k in enumerate(names):
        col = table[:, j]
        bad = ~np.isfinite(col)
        if np.any(bad):
            raise ParameterError(f"parameter {k!r}: value {col[bad][0]} is not finite")
        lo, hi = model.params[k].bounds
        if lo is not None and np.any(col < lo):
            raise ParameterError(
                f"parameter {k!r}: value {col[col < lo][0]:g} is below its lower bound {lo:g}"
            )
        if hi is not None and np.any(col > hi):
            raise ParameterError(
                f"parameter {k!r}: value {col[col > hi][0]:g} is above its upper bound {hi:g}"
            )
    columns = {k: np.full(table.shape[0], float(v)) for k, v in defaults.items() if v is not None}
    columns.update({k: table[:, j] for j, k in enumerate(names)})
    form = model.form
    for lag in form.lags:
        if lag.kind != "parameter" or not ({s.name for s in lag.delay.free_symbols} & set(names)):
            continue
        syms = sorted(lag.delay.free_symbols, key=lambda s: s.name)
        f = sympy.lambdify(syms, lag.delay, modules=np)
        tau = np.broadcast_to(
            np.asarray(f(*[columns[s.name] for s in syms]), float), table.shape[:1]
        )
        bad = ~np.isfinite(tau) | (tau < 0)
        if np.any(bad):
            i = int(np.argmax(bad))
            used = {s.name: float(columns[s.name][i]) for s in syms}
            raise ParameterError(
                f"delay {lag.delay} of {form.lag_label(lag)} evaluates to {tau[i]} with {used}; "
                "delays must be real and >= 0"
            )
    rows = []
    for r in range(table.shape[0]):
        values = {k: float(col[r]) for k, col in columns.items()}
        rows.append({k: values[k] for k in model.param_names})
    return rows


def _parameter_free(model, history) -> bool:
    """True when a history gives every state as a constant or samples (no callables), or is
    an earlier run."""
    from .solution import Solution

    if isinstance(history, Solution):
        return True
    if not isinstance(history, Mapping):
        return False
    try:
        spec = (
            normalize_history(model, history, {})
            if len(history) >= len(model.state_names)
            else None
        )
    except FluidnetError:
        return False
    return isinstance(spec, Mapping) and all(not callable(v) for v in spec.values())


def _member_label(member: int, names, row, h: int, n_hist: int) -> str:
    details = [f"{k} = {v:g}" for k, v in zip(names, row, strict=True)]
    if n_hist > 1:
        details.append(f"history {h}")
    return f"member {member}" + (f" ({', '.join(details)})" if details else "")
