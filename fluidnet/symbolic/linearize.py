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

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
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

__all__ = [
    "linearize",
    "sparse_jacobian",
    "linearize_batch",
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


@dataclass
class LinearizedBatch:
    """Linearizations of one model at ``K`` parameter points, as stacked arrays.

    Attributes
    ----------
    stack : fluidnet.linear.stacked.Stack
        ``A0`` ``(K, n, n)``, ``A`` ``(K, L, n, n)`` (one matrix per lag of the model, not
        merged: the characteristic function is the same) and ``tau`` ``(K, L)``.
    equilibrium : numpy.ndarray
        ``(K, n)`` equilibrium states, in ``state_names`` order.
    ok : numpy.ndarray of bool
        ``(K,)``: False where the batched evaluation did not settle the point (no closed-form
        equilibrium there, a value out of bounds, a non-finite Jacobian...): call
        :func:`linearize` at that point, which computes it or raises the error that names the
        fault. The arrays hold zeros there.
    state_names : tuple of str
    """

    stack: Stack
    equilibrium: np.ndarray
    ok: np.ndarray
    state_names: tuple[str, ...]


def equilibria_batch(model, values: Mapping[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    """The equilibrium :meth:`Model.equilibrium` returns, at many parameter points at once.

    Parameters
    ----------
    model : fluidnet.Model
    values : dict
        ``{parameter name: value or 1-D array}`` (arrays broadcast to one length ``K``).

    Returns
    -------
    X : numpy.ndarray
        ``(K, n)`` equilibrium states in ``model.state_names`` order.
    ok : numpy.ndarray of bool
        ``(K,)``: False where the closed forms do not settle the point (no closed form, a
        singular one, none admissible, a parameter out of its bounds): call
        :meth:`Model.equilibrium` there (numeric search, or the error naming the fault).
    """
    _, X, ok = _parameters_and_equilibria(model, values)
    return np.where(ok[:, None], X, np.nan), ok


def _parameters_and_equilibria(model, values: Mapping[str, Any]):
    """Parameter table ``P`` ``(params, K)``, closed-form equilibria ``X`` ``(K, n)`` and the
    points they settle."""
    from .equilibrium import _plan as _equilibrium_plan

    names = model.param_names
    for k in values:
        if k not in names:
            model.resolve_params({k: 0.0})  # raises the unknown-parameter error
    arrays = {k: np.atleast_1d(np.asarray(v, dtype=float)).ravel() for k, v in values.items()}
    K = max((a.size for a in arrays.values()), default=1)
    defaults = {k: p.value for k, p in model.params.items()}
    P = np.empty((len(names), K))
    ok = np.ones(K, dtype=bool)
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
        ok &= ~bad
    X = np.zeros((K, len(model.state_names)))
    eq_plan = _equilibrium_plan(model)
    if not eq_plan.closed:
        ok[:] = False  # no closed form: the numeric search is per point
    else:
        X, found = _closed_form_equilibria(eq_plan, P)
        ok &= found
    return P, X, ok


def linearize_batch(model, values: Mapping[str, Any]) -> LinearizedBatch:
    """Linearize ``model`` at many parameter points at once (vectorized over the points).

    The equilibrium is the one :meth:`Model.equilibrium` returns (the closed forms of
    :func:`~fluidnet.symbolic.equilibrium.symbolic_equilibria` evaluated for every point and
    the first admissible one taken, in the same order of preference); the Jacobians and frozen
    delays are the compiled plan of :func:`linearize` evaluated on arrays.

    Parameters
    ----------
    model : fluidnet.Model
    values : dict
        ``{parameter name: value or 1-D array}`` (arrays broadcast to one length ``K``); the
        other parameters take their model values.

    Returns
    -------
    LinearizedBatch
        Points the batch could not settle are flagged ``ok = False`` (see there).
    """
    plan = _plan(model)
    form = plan.form
    if plan.time_error:
        raise ModelError(plan.time_error)
    P, X, ok = _parameters_and_equilibria(model, values)
    K, n = X.shape
    L = len(form.lags)
    A0 = np.zeros((K, n, n))
    A = np.zeros((K, L, n, n))
    tau = np.zeros((K, L))
    if ok.any() and K * L * n * n > BATCH_ENTRIES:
        ok[:] = False  # too many lags for dense stacked matrices: one point at a time
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
        lag_k = plan.cols[n0:]
        A[:, lag_k, plan.rows[n0:], plan.lag_states[lag_k]] = vals[:, n0:]
        tau = np.where(ok[:, None], taus, 0.0)
        ok &= ~_on_switching_surfaces_batch(plan, X, P)  # those raise one by one
    return LinearizedBatch(Stack(A0, A, tau), np.where(ok[:, None], X, 0.0), ok, form.states)


def _closed_form_equilibria(plan, P: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The equilibrium :func:`~fluidnet.symbolic.equilibrium.equilibria` puts first, from the
    closed forms, at every parameter point (columns of ``P``); ``found`` is False where the
    per-point search would go numeric (a singular closed form, or none admissible)."""
    K = P.shape[1]
    n = len(plan.states)
    cands, keys = [], []
    found = np.ones(K, dtype=bool)
    for closed in plan.closed:
        c = closed.batch(P)  # (K, n)
        finite = np.all(np.isfinite(c), axis=1)
        found &= finite  # a singular closed form sends the point to the numeric search
        real = np.all(np.abs(np.imag(c)) <= 1e-12 * np.maximum(1.0, np.abs(np.real(c))), axis=1)
        x = np.where(finite[:, None], np.real(c), 0.0)
        good = finite & real
        big = np.maximum(1.0, np.max(np.abs(x), axis=1))
        for i in plan.nonneg:
            good &= ~(x[:, i] < -1e-12 * big)
            x[:, i] = np.where(np.abs(x[:, i]) <= 1e-12 * big, 0.0, x[:, i])
        r = plan.f.batch(x.T, P)  # (K, n)
        boundary = np.zeros(K, dtype=bool)
        for i in range(n):
            terms = np.abs(plan.term_fns[i].batch(x.T, P))
            terms = np.where(np.isfinite(terms), terms, 0.0)
            scale = np.maximum(1.0, np.max(terms, axis=1, initial=0.0))
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
