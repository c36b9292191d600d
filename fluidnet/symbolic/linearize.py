"""Linearization of a fluid model at an equilibrium into a multi-delay :class:`LinearDDE`.

Conventions (the standard ones of the fluid-model literature, used by every source paper):

* **State-dependent delays are frozen at the equilibrium.** A delayed value ``x_j(t - tau(x))``
  is linearized as ``delta x_j(t - tau*)``: the variation of the delay itself contributes
  ``-x_j'(t - tau*) * delta tau``, which vanishes because ``x_j' = 0`` at an equilibrium.
  State dependence *inside* the right-hand side (e.g. an RTT ``d0 + q(t)/C`` in a gain) is
  differentiated as usual.
* **Projected states are linearized without the projection** (``max(f, 0)`` is replaced by
  ``f``), as the papers do, even when the equilibrium sits on the boundary.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import sympy

from ..errors import AnalysisError, ModelError
from ..linear.delays import same_delay
from ..linear.lineardde import LinearDDE
from ..linear.stacked import Stack
from .equilibrium import check_equilibrium, state_values, symbolic_equilibria
from .jacobians import sparse_jacobian
from .numeric import to_numpy
from .switches import extract_switches
from .symbols import param_subs

if TYPE_CHECKING:
    from .model import Model
    from .steadycode import SteadyCode

__all__ = [
    "linearize",
    "sparse_jacobian",
    "linearize_batch",
    "dense_batch_points",
    "LinearizedBatch",
    "equilibria_batch",
    "jacobian_blocks",
    "equilibrium_substitution",
    "check_off_switching_surfaces",
]


def jacobian_blocks(form):
    """Symbolic Jacobians of the right-hand sides.

    Returns
    -------
    J0 : sympy.Matrix
        ``d f / d x`` (current states), ``n x n``.
    Jlag : list of sympy.Matrix
        One ``n x 1`` column per lag: ``d f / d z_k``.
    """
    f = sympy.Matrix(form.rhs)
    J0 = f.jacobian(sympy.Matrix(form.x)) if form.x else sympy.zeros(len(form.rhs), 0)
    Jlag = [f.diff(lag.symbol) for lag in form.lags]
    return J0, Jlag


def equilibrium_substitution(form, eq: Mapping[str, Any], inputs: Sequence[Any] = ()) -> dict:
    """``{symbol: value}`` replacing every current state, input and lag symbol of ``form`` by its
    equilibrium value (states from ``eq``, inputs from ``inputs`` in ``form.inputs`` order)."""
    vals = [sympy.sympify(eq[n]) for n in form.states] + [sympy.sympify(v) for v in inputs]
    rep = dict(zip(tuple(form.x) + tuple(form.u), vals, strict=True))
    for lag in form.lags:
        rep[lag.symbol] = vals[lag.state]
    return rep


def _check_delay_value(form, lag, value: complex, where: str) -> float:
    if abs(value.imag) > 1e-12 * max(1.0, abs(value.real)) or not math.isfinite(value.real):
        raise ModelError(f"the delay of {form.lag_label(lag)} is {value} at {where}: not real")
    if value.real < 0:
        raise ModelError(f"the delay of {form.lag_label(lag)} is {value.real:g} < 0 at {where}")
    return float(value.real)


class _Plan:
    """Numeric Jacobians and frozen delays of one model at a steady state, built once.

    The Jacobians are sparse: each right-hand side is differentiated only with respect to the
    current states and lags it contains, and only the nonzero entries are compiled (a network
    model of a few hundred states has a few entries per row, not hundreds).
    """

    def __init__(self, model):
        form = model.form
        for i, e in enumerate(form.rhs):
            if e.has(form.t):
                self.time_error = (
                    f"the right-hand side of {form.states[i]} depends explicitly on t; "
                    "a time-varying model cannot be linearized"
                )
                break
        else:
            self.time_error = None
        for lag in form.lags:
            if lag.delay.has(form.t):
                self.time_error = (
                    f"the delay of {form.lag_label(lag)} depends explicitly on t; "
                    "a time-varying model cannot be linearized"
                )
        self.form = form
        self._switches = None
        self._blocks = None
        if self.time_error:
            return  # nothing numeric: linearize raises the error
        # lags as plain symbols (their names, "x(t - tau)", are not identifiers)
        z = [sympy.Symbol(f"_z{k}") for k in range(len(form.lags))]
        plain = {lag.symbol: zk for lag, zk in zip(form.lags, z, strict=True)}
        rhs = [f.xreplace(plain) for f in form.rhs]
        steady = {zk: form.x[lag.state] for lag, zk in zip(form.lags, z, strict=True)}
        defs, entries = sparse_jacobian(rhs, list(form.x) + z)
        n = len(form.x)
        j0 = [(i, v, d) for i, v, d in entries if v < n]
        jl = [(i, v - n, d) for i, v, d in entries if v >= n]
        self.n0 = len(j0)
        self.rows = np.array([e[0] for e in j0 + jl], dtype=int)
        self.cols = np.array([e[1] for e in j0 + jl], dtype=int)
        args = (form.x, form.p)
        # at a steady state every lag equals its state: defined first, not substituted
        self.entries = to_numpy(
            args,
            [e[2] for e in j0 + jl],
            strict_switches=True,
            definitions=list(steady.items()) + defs,
        )
        at_rest = {lag.symbol: form.x[lag.state] for lag in form.lags}
        self.delays = to_numpy(args, [lag.delay.xreplace(at_rest) for lag in form.lags])
        self.lag_states = np.array([lag.state for lag in form.lags], dtype=int)
        # lags with the same delay expression share one matrix in a batch (a network model
        # has a lag per flow and link, and a few distinct round-trip times)
        exprs: dict[sympy.Expr, int] = {}
        self.delay_group = np.array(
            [exprs.setdefault(lag.delay.xreplace(at_rest), len(exprs)) for lag in form.lags],
            dtype=int,
        )
        self.n_groups = len(exprs)
        # the lags' entries in a batch's delay matrices (G, n, n), flattened: ordered so that
        # the entries of one position are adjacent (stable: summed in their own order), the
        # start of each position's run and the positions, for numpy.add.reduceat (numpy.add.at
        # of 64 systems of the 100-state network: 0.30 ms, this 0.09)
        flat = (self.delay_group[self.cols[self.n0 :]] * n + self.rows[self.n0 :]) * n
        flat = flat + self.lag_states[self.cols[self.n0 :]]
        order = np.argsort(flat, kind="stable")
        ranked = flat[order]
        starts = np.flatnonzero(np.r_[ranked[:1] == ranked[:1], ranked[1:] != ranked[:-1]])
        self.lag_scatter = (order, starts, ranked[starts])

    def label(self, e: int) -> str:
        """The formula of entry ``e`` and what it differentiates."""
        form = self.form
        i, j = int(self.rows[e]), int(self.cols[e])
        if e < self.n0:
            return f"df/dx[{i},{j}] = {form.rhs[i].diff(form.x[j])}"
        lag = form.lags[j]
        return (
            f"df/d(delayed state)[{i},{j}] = {form.rhs[i].diff(lag.symbol)} "
            f"(w.r.t. {form.lag_label(lag)})"
        )

    def switch_check(self):
        """``(switches, values, scales)``: the switching terms of the right-hand sides and
        compiled functions of ``(x, p, w)`` for their switching functions at a steady state and
        the sum of the absolute values of each function's terms (built on first use)."""
        if self._switches is None:
            form = self.form
            _, switches = extract_switches(form.rhs)
            if not switches:
                self._switches = ([], None, None)
                return self._switches
            steady = {lag.symbol: form.x[lag.state] for lag in form.lags}
            surfaces = [cast(sympy.Expr, sw.surface.xreplace(steady)) for sw in switches]
            scales = [sum(abs(a) for a in sympy.Add.make_args(s)) for s in surfaces]
            args = (form.x, form.p, [sw.weight for sw in switches])
            self._switches = (switches, to_numpy(args, surfaces), to_numpy(args, scales))
        return self._switches

    def _dense(self):
        if self._blocks is None:
            self._blocks = jacobian_blocks(self.form)
        return self._blocks

    @property
    def J0_sym(self) -> sympy.Matrix:
        """``d f / d x`` (current states), ``n x n`` (symbolic, built on first use)."""
        return self._dense()[0]

    @property
    def Jlag_sym(self) -> list:
        """One ``n x 1`` column per lag: ``d f / d z_k`` (symbolic, built on first use)."""
        return self._dense()[1]


def _plan(model) -> _Plan:
    return model.cached("linearization plan", lambda: _Plan(model))


def linearize(
    model: Model, *, equilibrium: Mapping[str, float] | None = None, **params: Any
) -> LinearDDE:
    """Linearize ``model`` at an equilibrium.

    Parameters
    ----------
    model : fluidnet.Model
    equilibrium : dict, optional
        ``{state: value}``; default :meth:`Model.equilibrium` at the given parameters.
    **params
        Parameter overrides.

    Returns
    -------
    LinearDDE
        ``x' = A0 x + sum_k A_k x(t - tau_k)`` in deviation variables, with the delays frozen at
        the equilibrium and equal delays merged. ``jacobians`` (computed on first access) maps
        each delay expression (``0`` for the undelayed part) to the symbolic Jacobian at the
        equilibrium, with symbolic parameters when the equilibrium has a closed form (otherwise
        at the numeric equilibrium and parameter values).

    Raises
    ------
    ModelError
        When a delay is negative or not real at the equilibrium, or the model depends
        explicitly on time.
    AnalysisError
        When a Jacobian entry is not finite at the equilibrium, or the equilibrium lies on a
        switching surface (a kink or jump of a switching term, e.g. a sliding equilibrium), or
        a given ``equilibrium`` is not one (a steady-state residual above 1e-4 relative, a
        negative projected state, an undefined right-hand side).
    """
    values = model.resolve_params(params)
    plan = _plan(model)
    form = plan.form
    if plan.time_error:
        raise ModelError(plan.time_error)
    if equilibrium is None:
        eq = model.equilibrium(**params)
    else:
        eq = state_values(form.states, equilibrium, "equilibrium")
    x = np.array([eq[n] for n in form.states], dtype=float)
    p = np.array([values[k] for k in model.param_names], dtype=float)
    where = f"the equilibrium {eq} with {values}"

    _off_switching_surfaces(plan, x, p, where)  # first: it names the kink or jump
    vals = _finite_entries(plan, plan.entries(x, p), where)
    if equilibrium is not None:
        check_equilibrium(model, eq, values)  # a point given by the caller must be one
    n = len(form.states)
    A0 = np.zeros((n, n))
    A0[plan.rows[: plan.n0], plan.cols[: plan.n0]] = vals[: plan.n0]
    taus = np.asarray(plan.delays(x, p)).reshape(-1)
    L = len(form.lags)
    clean = np.empty(L)
    at = f"the equilibrium {eq}"  # once: a model with thousands of lags has thousands of states
    for k, lag in enumerate(form.lags):
        clean[k] = _check_delay_value(form, lag, complex(taus[k]), at)
    # lags with the same delay share one matrix (a network model has many lags, few delays)
    order = np.argsort(clean, kind="stable")
    group = np.zeros(L, dtype=int)
    heads: list[float] = []
    for k in order:
        if not heads or not same_delay(heads[-1], float(clean[k])):
            heads.append(float(clean[k]))
        group[k] = len(heads) - 1
    mats = np.zeros((len(heads), n, n))
    lag_e = slice(plan.n0, None)
    lag_k = plan.cols[lag_e]
    np.add.at(mats, (group[lag_k], plan.rows[lag_e], plan.lag_states[lag_k]), vals[lag_e])
    delayed = list(zip(heads, mats, strict=True))

    def jacobians() -> dict:
        psubs = param_subs(values)
        return _symbolic_jacobians(model, form, plan.J0_sym, plan.Jlag_sym, eq, psubs)

    return LinearDDE(
        A0, delayed, state_names=form.states, equilibrium=eq, jacobians=jacobians, params=values
    )


#: A switching function within this fraction of the size of its terms counts as zero.
SURFACE_TOL = 1e-9


def check_off_switching_surfaces(model, eq: Mapping[str, float], values: Mapping[str, float]):
    """Raise :class:`AnalysisError` when the steady state ``eq`` (all states, parameter
    ``values``) lies on a switching surface of ``model``, where no Jacobian exists."""
    form = model.form
    x = np.array([float(eq[n]) for n in form.states])
    p = np.array([float(values[k]) for k in model.param_names])
    _off_switching_surfaces(_plan(model), x, p, f"the equilibrium {dict(eq)} with {dict(values)}")


def _on_switching_surfaces_batch(plan: _Plan, X: np.ndarray, P: np.ndarray) -> np.ndarray:
    """``(K,)``: the points (rows of ``X``, columns of ``P``) that lie on a switching surface,
    by the test of :func:`_off_switching_surfaces`."""
    switches, values, scales = plan.switch_check()
    K = X.shape[0]
    if not switches:
        return np.zeros(K, dtype=bool)
    assert values is not None and scales is not None  # compiled whenever there are switches
    W = np.zeros((len(switches), K))
    for _ in range(len(switches)):  # nested switches: inner weights first
        S = values.batch(X.T, P, W)  # (K, switches)
        W = (S > 0).astype(float).T
    scale = scales.batch(X.T, P, W)
    return np.any(np.abs(S) <= SURFACE_TOL * np.maximum(1.0, np.abs(scale)), axis=1)


def _off_switching_surfaces(plan: _Plan, x: np.ndarray, p: np.ndarray, where: str) -> None:
    """AnalysisError when the point lies on a switching surface (to rounding).

    There the right-hand side is discontinuous (``Heaviside``, ``sign``, ``Piecewise``) or has
    a kink (``Max``, ``Min``, ``Abs``); an equilibrium held on such a surface by Filippov
    sliding has no Jacobian. A point a rounding error off the surface would otherwise be
    linearized silently with one side's field.
    """
    switches, values, scales = plan.switch_check()
    if not switches:
        return
    assert values is not None and scales is not None  # compiled whenever there are switches
    w = np.zeros(len(switches))
    for _ in range(len(switches)):  # nested switches: inner weights first
        s = values(x, p, w)
        w = (s > 0).astype(float)
    scale = scales(x, p, w)
    for j, sw in enumerate(switches):
        if abs(s[j]) <= SURFACE_TOL * max(1.0, abs(scale[j])):
            raise AnalysisError(
                f"{where} lies on the switching surface {sw.surface} = 0 of {sw.source} "
                f"(value {s[j]:.3g}): the model is not differentiable there. An equilibrium "
                "held on a switching surface (Filippov sliding) has no Jacobian; linearize the "
                "sliding dynamics (the equivalent control) or a smoothed model instead"
            )


def _finite_entries(plan: _Plan, vals: np.ndarray, where: str) -> np.ndarray:
    """The Jacobian entries as a real finite array, or an AnalysisError naming the entry and its
    formula."""
    if np.iscomplexobj(vals):
        bad = np.flatnonzero(np.abs(np.imag(vals)) > 1e-12 * np.maximum(1.0, np.abs(np.real(vals))))
        if bad.size:
            e = int(bad[0])
            raise AnalysisError(f"{plan.label(e)} is {vals[e]} (not real) at {where}")
        vals = np.real(vals)
    if not np.all(np.isfinite(vals)):
        e = int(np.flatnonzero(~np.isfinite(vals))[0])
        raise AnalysisError(
            f"{plan.label(e)} is {vals[e]} at {where}: the model is not differentiable there"
        )
    return vals


def matching_symbolic_equilibrium(model, form, eq, psubs) -> dict | None:
    """The closed-form equilibrium (symbolic parameters) that evaluates to ``eq``, if any."""
    for sol in symbolic_equilibria(model) or []:
        try:
            num = [float(sympy.N(sol[n].xreplace(psubs))) for n in form.states]
        except TypeError:
            continue
        if np.allclose(num, [eq[n] for n in form.states], rtol=1e-9, atol=1e-12):
            return {n: sol[n] for n in form.states}
    return None


def _symbolic_jacobians(model, form, J0, Jlag, eq, psubs) -> dict:
    """Jacobians at the equilibrium keyed by delay expression (``0`` for the undelayed part).

    Parameters stay symbolic when the equilibrium has a closed form; otherwise the numeric
    equilibrium and parameter values are substituted.
    """
    sym_eq = matching_symbolic_equilibrium(model, form, eq, psubs)
    if sym_eq is not None:
        rep = equilibrium_substitution(form, sym_eq)
    else:
        rep = {**equilibrium_substitution(form, eq), **psubs}
    n = len(form.states)
    out: dict = {sympy.S.Zero: sympy.simplify(J0.xreplace(rep))}
    for lag, col in zip(form.lags, Jlag, strict=True):
        key = sympy.simplify(lag.delay.xreplace(rep))
        block = sympy.zeros(n, n)
        block[:, lag.state] = sympy.simplify(col.xreplace(rep))
        out[key] = out[key] + block if key in out else block
    return out


# ---------------------------------------------------------------------- many points at once
#: Largest ``K * lags * n * n`` held as dense stacked matrices by :func:`linearize_batch`.
BATCH_ENTRIES = 20_000_000
#: Models of more states than this are solved one point at a time by the batch (the batch's
#: Newton iteration builds dense Jacobians of every point).
BATCH_MAX_STATES = 200


@dataclass
class LinearizedBatch:
    """Linearizations of one model at ``K`` parameter points, as stacked arrays.

    Attributes
    ----------
    stack : fluidnet.linear.stacked.Stack
        ``A0`` ``(K, n, n)``, ``A`` ``(K, G, n, n)`` (one matrix per distinct delay expression
        of the model's lags, e.g. one per round-trip time of a network) and ``tau``
        ``(K, G)``.
    equilibrium : numpy.ndarray
        ``(K, n)`` equilibrium states, in ``state_names`` order.
    ok : numpy.ndarray of bool
        ``(K,)``: False where the batched evaluation did not settle the point (several
        equilibria tied for first, no equilibrium found by continuation, a value out of
        bounds, a non-finite Jacobian...): call :func:`linearize` at that point, which computes
        it or raises the error that names the fault. The arrays hold zeros there.
    state_names : tuple of str
    reasons : list of str
        ``(K,)``: why a point is not settled (``""`` where it is).
    """

    stack: Stack
    equilibrium: np.ndarray
    ok: np.ndarray
    state_names: tuple[str, ...]
    reasons: list[str] = field(default_factory=list)


def equilibria_batch(
    model,
    values: Mapping[str, Any],
    *,
    guess: Mapping[str, float] | None = None,
    reasons: bool = False,
) -> tuple[np.ndarray, np.ndarray] | tuple[np.ndarray, np.ndarray, list[str]]:
    """The equilibrium :meth:`Model.equilibrium` returns, at many parameter points at once.

    Closed forms, where the equilibrium search uses them, are evaluated for every point;
    otherwise the full search runs at a few seed points and its equilibrium is continued to the
    others by one vectorized damped Newton iteration (warm starts from the nearest settled
    point, then paths in the parameters): see :mod:`fluidnet.symbolic.batchequilibria`.

    Parameters
    ----------
    model : fluidnet.Model
    values : dict
        ``{parameter name: value or 1-D array}`` (arrays broadcast to one length ``K``).
    guess : dict, optional
        ``{state: value}``: the seeds' search returns the equilibrium nearest to it (as
        :meth:`Model.equilibrium` with ``guess=``), which is continued.
    reasons : bool, default False
        Also return why each point was not settled.

    Returns
    -------
    X : numpy.ndarray
        ``(K, n)`` equilibrium states in ``model.state_names`` order (NaN where not settled).
    ok : numpy.ndarray of bool
        ``(K,)``: False where the batch does not settle the point (several equilibria tied
        for first, continuation failed, a parameter out of its bounds): call
        :meth:`Model.equilibrium` there (the full search, or the error naming the fault).
    reasons : list of str
        With ``reasons=True``: ``(K,)``, why a point is not settled (``""`` where it is).

    Examples
    --------
    >>> import numpy as np
    >>> import fluidnet as fn
    >>> from fluidnet.symbolic.linearize import equilibria_batch
    >>> X, ok = equilibria_batch(fn.models.rcp(), {"N": np.array([10.0, 20.0])})
    >>> X[:, 0].tolist(), ok.tolist()
    ([1875.0, 937.5], [True, True])
    """
    _, X, ok, why = _parameters_and_equilibria(model, values, guess)
    X = np.where(ok[:, None], X, np.nan)
    return (X, ok, why) if reasons else (X, ok)


def _parameters_and_equilibria(model, values: Mapping[str, Any], guess=None):
    """Parameter table ``P`` ``(params, K)``, equilibria ``X`` ``(K, n)``, the points they
    settle and why the others are not."""
    from .batchequilibria import equilibria_at_points
    from .equilibrium import _plan as _equilibrium_plan
    from .steadycode import steady_code

    P, ok, why = _parameter_table(model, values)
    K = P.shape[1]
    X = np.zeros((K, len(model.state_names)))
    eq_plan = _equilibrium_plan(model)
    todo = ok.copy()
    if eq_plan.closed and guess is None:
        X, found = _closed_form_equilibria(eq_plan, P)
        todo &= ~found  # singular there, or none admissible: continued like a numeric law
    if not todo.any():
        return P, X, ok, why
    code: SteadyCode | Callable[[], SteadyCode] | None = eq_plan.code
    if code is None and eq_plan.large and len(model.state_names) <= BATCH_MAX_STATES:
        # built when points are continued (see equilibria_at_points)
        code = functools.partial(model.cached, "batch steady code", lambda: steady_code(model))
    if code is None:
        for j in np.flatnonzero(todo):
            why[j] = (
                "an expression numpy cannot write, or too many states for dense batches: "
                "solved one point at a time"
            )
        return P, X, ok & ~todo, why
    found = equilibria_at_points(model, eq_plan, code, P, todo, guess=guess)
    for j in np.flatnonzero(todo & ~found.ok):
        why[j] = found.reasons[j]
    X[todo] = np.where(found.ok[todo, None], found.x[todo], 0.0)
    return P, X, ok & (~todo | found.ok), why


def _parameter_table(model, values: Mapping[str, Any]):
    """Parameter table ``P`` ``(params, K)`` of ``values`` (the model's defaults for the
    others), the points whose values are finite and within bounds, and why the others are
    not."""
    names = model.param_names
    for k in values:
        if k not in names:
            model.resolve_params({k: 0.0})  # raises the unknown-parameter error
    arrays = {k: np.atleast_1d(np.asarray(v, dtype=float)).ravel() for k, v in values.items()}
    K = max((a.size for a in arrays.values()), default=1)
    defaults = {k: p.value for k, p in model.params.items()}
    P = np.empty((len(names), K))
    ok = np.ones(K, dtype=bool)
    why = [""] * K
    for i, k in enumerate(names):
        if k in arrays:
            P[i] = np.broadcast_to(arrays[k], (K,))
        elif defaults[k] is None:
            model.resolve_params()  # raises the missing-value error
        else:
            P[i] = defaults[k]
        lo, hi = model.params[k].bounds
        bad = ~np.isfinite(P[i])
        if lo is not None:
            bad |= P[i] < lo
        if hi is not None:
            bad |= P[i] > hi
        for j in np.flatnonzero(bad & ok):
            why[j] = f"parameter {k!r} = {P[i, j]:g} is not finite or out of its bounds"
        ok &= ~bad
    return P, ok, why


def dense_batch_points(model) -> int:
    """The most parameter points whose linearizations :func:`linearize_batch` holds as dense
    stacked matrices (:data:`BATCH_ENTRIES` entries of the ``(K, delays, n, n)`` array; a
    delay-free model is counted as one delay, its ``(K, n, n)``): it makes a larger batch of a
    model with delays one point at a time. A chart of more points is cut into blocks of at most
    this many, and :meth:`~fluidnet.stability.system.SystemFactory.batch` makes more points in
    batches of this many.

    >>> import fluidnet as fn
    >>> from fluidnet.symbolic.linearize import dense_batch_points
    >>> dense_batch_points(fn.models.rcp())  # 2 states, 2 delays: 20 000 000 / (2 * 2 * 2)
    2500000
    """
    plan = _plan(model)
    n = len(plan.form.states)
    return max(1, BATCH_ENTRIES // (max(plan.n_groups, 1) * n * n))


def linearize_batch(
    model, values: Mapping[str, Any], *, guess: Mapping[str, float] | None = None
) -> LinearizedBatch:
    """Linearize ``model`` at many parameter points at once (vectorized over the points).

    The equilibrium is the one :meth:`Model.equilibrium` returns, from
    :func:`equilibria_batch` (closed forms evaluated for every point where the search uses
    them, else the full search at a few seeds continued to the other points); the Jacobians
    and frozen delays are the compiled plan of :func:`linearize` evaluated on arrays.

    Parameters
    ----------
    model : fluidnet.Model
    values : dict
        ``{parameter name: value or 1-D array}`` (arrays broadcast to one length ``K``); the
        other parameters take their model values.
    guess : dict, optional
        ``{state: value}``: the equilibrium nearest to it is continued (as
        :meth:`Model.equilibrium` with ``guess=``).

    Returns
    -------
    LinearizedBatch
        Points the batch could not settle are flagged ``ok = False``, with the reason in
        ``reasons`` (see there).

    Examples
    --------
    >>> import numpy as np
    >>> import fluidnet as fn
    >>> from fluidnet.symbolic.linearize import linearize_batch
    >>> lb = linearize_batch(fn.models.rcp(), {"alpha": np.array([0.4, 0.8])})
    >>> lb.stack.A0.shape, lb.ok.tolist()
    ((2, 2, 2), [True, True])
    """
    plan = _plan(model)
    if plan.time_error:
        raise ModelError(plan.time_error)
    P, X, ok, why = _parameters_and_equilibria(model, values, guess)
    return _linearized_at(plan, P, X, ok, why)


def _linearized_at(plan: _Plan, P: np.ndarray, X: np.ndarray, ok, why) -> LinearizedBatch:
    """The batch of linearizations at the steady states ``X`` ``(K, n)`` of the parameter
    points ``P`` ``(params, K)`` where ``ok``; ``why`` ``(K,)`` says why the others are not
    settled (completed here for points whose Jacobians or delays fail)."""
    form = plan.form
    K, n = X.shape
    L, G = len(form.lags), plan.n_groups
    A0 = np.zeros((K, n, n))
    A = np.zeros((K, G, n, n))
    tau = np.zeros((K, G))
    if ok.any() and K * G * n * n > BATCH_ENTRIES:
        ok[:] = False  # too many delays for dense stacked matrices: one point at a time
        why = [w or "too many delays for dense stacked matrices: one point at a time" for w in why]
    if ok.any():
        Xt, Pt = X.T, P
        vals = plan.entries.batch(Xt, Pt)  # (K, nnz)
        taus = plan.delays.batch(Xt, Pt) if L else np.zeros((K, 0))
        for M in (vals, taus):
            if np.iscomplexobj(M):
                small = np.abs(M.imag) <= 1e-12 * np.maximum(1.0, np.abs(M.real))
                ok &= np.all(small, axis=1)
        vals, taus = vals.real, taus.real
        ok &= np.all(np.isfinite(vals), axis=1)
        ok &= np.all(np.isfinite(taus) & (taus >= 0), axis=1)
        vals = np.where(ok[:, None], vals, 0.0)
        n0 = plan.n0
        A0[:, plan.rows[:n0], plan.cols[:n0]] = vals[:, :n0]
        # entries of lags with one delay expression add up in that delay's matrix
        order, starts, where = plan.lag_scatter
        if order.size:
            A.reshape(K, -1)[:, where] = np.add.reduceat(vals[:, n0:][:, order], starts, axis=1)
        if L:
            first = np.unique(plan.delay_group, return_index=True)[1]
            tau = np.where(ok[:, None], taus[:, first], 0.0)
        ok &= ~_on_switching_surfaces_batch(plan, X, P)  # those raise one by one
    for j in np.flatnonzero(~ok):
        why[j] = why[j] or (
            "a Jacobian entry or delay not finite and real, or the point on a switching surface"
        )
    return LinearizedBatch(Stack(A0, A, tau), np.where(ok[:, None], X, 0.0), ok, form.states, why)


def _closed_form_equilibria(plan, P: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The equilibrium :func:`~fluidnet.symbolic.equilibrium.equilibria` puts first, from the
    closed forms, at every parameter point (columns of ``P``); ``found`` is False where the
    per-point search would go numeric (a singular closed form, or none admissible)."""
    K = P.shape[1]
    n = len(plan.states)
    cands, keys = [], []
    found = np.ones(K, dtype=bool)
    for closed in plan.closed:
        with np.errstate(all="ignore"):
            c = np.asarray(closed(P)).T  # (K, n)
        finite = np.all(np.isfinite(c), axis=1)
        found &= finite  # a singular closed form sends the point to the numeric search
        real = np.all(np.abs(np.imag(c)) <= 1e-12 * np.maximum(1.0, np.abs(np.real(c))), axis=1)
        x = np.where(finite[:, None], np.real(c), 0.0)
        good = finite & real
        big = np.maximum(1.0, np.max(np.abs(x), axis=1))
        for i in plan.nonneg:
            good &= ~(x[:, i] < -1e-12 * big)
            x[:, i] = np.where(np.abs(x[:, i]) <= 1e-12 * big, 0.0, x[:, i])
        r, scales = _residuals_and_scales(plan, x, P)
        boundary = np.zeros(K, dtype=bool)
        for i in range(n):
            scale = np.maximum(1.0, scales[:, i])
            small = np.abs(r[:, i]) <= 1e-8 * scale
            held = (i in plan.nonneg) & (x[:, i] == 0.0) & (r[:, i] < 0)
            good &= small | held
            boundary |= ~small & held
        key = boundary * (2 * (n + 1)) + np.any(x < 0, axis=1) * (n + 1) + np.sum(x == 0, axis=1)
        cands.append(x)
        keys.append(np.where(good, key, np.iinfo(np.int64).max))
    keys_arr = np.array(keys)  # (C, K)
    best = np.argmin(keys_arr, axis=0)
    found &= keys_arr[best, np.arange(K)] < np.iinfo(np.int64).max
    X = np.array(cands)[best, np.arange(K)]
    return X, found


def _residuals_and_scales(plan, x: np.ndarray, P: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(K, n)`` residuals and largest terms of the steady-state equations at the points."""
    if plan.code is not None:
        with np.errstate(all="ignore"):
            return plan.code.f(x.T, P).T, plan.code.scales(x.T, P).T
    r = plan.f.batch(x.T, P)  # (K, n)
    scales = np.zeros_like(r)
    for i in range(r.shape[1]):
        terms = np.abs(plan.term_fns[i].batch(x.T, P))
        terms = np.where(np.isfinite(terms), terms, 0.0)
        scales[:, i] = np.max(terms, axis=1, initial=0.0)
    return r, scales
