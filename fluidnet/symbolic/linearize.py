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
from typing import Any

import numpy as np
import sympy

from ..errors import AnalysisError, ModelError
from ..linear.lineardde import LinearDDE
from .equilibrium import check_equilibrium, symbolic_equilibria
from .numeric import to_numpy
from .symbols import param_subs

__all__ = [
    "linearize",
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
    """Numeric Jacobians and frozen delays of one model at a steady state, built once."""

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
        J0, Jlag = jacobian_blocks(form)
        steady = {lag.symbol: form.x[lag.state] for lag in form.lags}
        args = (form.x, form.p)
        self.J0 = to_numpy(args, J0.xreplace(steady), strict_switches=True)
        cols = sympy.Matrix.hstack(*Jlag) if Jlag else sympy.zeros(len(form.x), 0)
        self.cols = to_numpy(args, cols.xreplace(steady), strict_switches=True)
        self.delays = to_numpy(args, [lag.delay.xreplace(steady) for lag in form.lags])
        self.lag_states = [lag.state for lag in form.lags]
        self.form = form
        self.J0_sym = J0
        self.Jlag_sym = Jlag
        self._switches = None

    def switch_check(self):
        """``(switches, values, scales)``: the switching terms of the right-hand sides and
        compiled functions of ``(x, p, w)`` for their switching functions at a steady state and
        the sum of the absolute values of each function's terms (built on first use)."""
        if self._switches is None:
            from ..dde.codegen import extract_switches  # imports numba: only when needed

            form = self.form
            _, switches = extract_switches(form.rhs)
            if not switches:
                self._switches = ([], None, None)
                return self._switches
            steady = {lag.symbol: form.x[lag.state] for lag in form.lags}
            surfaces = [sw.surface.xreplace(steady) for sw in switches]
            scales = [sum(abs(a) for a in sympy.Add.make_args(s)) for s in surfaces]
            args = (form.x, form.p, [sw.weight for sw in switches])
            self._switches = (switches, to_numpy(args, surfaces), to_numpy(args, scales))
        return self._switches


def _plan(model) -> _Plan:
    return model.cached("linearization plan", lambda: _Plan(model))


def linearize(model, *, equilibrium: Mapping[str, float] | None = None, **params: Any) -> LinearDDE:
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
        missing = set(form.states) - set(equilibrium)
        if missing:
            raise ModelError(f"equilibrium misses states {sorted(missing)}")
        eq = {n: float(equilibrium[n]) for n in form.states}
    x = np.array([eq[n] for n in form.states], dtype=float)
    p = np.array([values[k] for k in model.param_names], dtype=float)
    where = f"the equilibrium {eq} with {values}"

    A0 = _finite(plan.J0(x, p), "df/dx", where, lambda i, j: plan.J0_sym[i, j])
    cols = _finite(
        plan.cols(x, p),
        "df/d(delayed state)",
        where,
        lambda i, k: f"{plan.Jlag_sym[k][i]} (w.r.t. {form.lag_label(form.lags[k])})",
    )
    _off_switching_surfaces(plan, x, p, where)
    if equilibrium is not None:
        check_equilibrium(model, eq, values)  # a point given by the caller must be one
    taus = plan.delays(x, p)
    n = len(form.states)
    delayed: list[tuple[float, np.ndarray]] = []
    for k, lag in enumerate(form.lags):
        tau = _check_delay_value(form, lag, complex(taus[k]), f"the equilibrium {eq}")
        Ak = np.zeros((n, n))
        Ak[:, lag.state] = cols[:, k]
        delayed.append((tau, Ak))

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


def _finite(M: np.ndarray, what: str, where: str, entry) -> np.ndarray:
    """``M`` as a real finite array, or an AnalysisError naming the entry and its formula."""
    if np.iscomplexobj(M):
        bad = np.argwhere(np.abs(M.imag) > 1e-12 * np.maximum(1.0, np.abs(M.real)))
        if bad.size:
            i, j = (int(v) for v in bad[0])
            raise AnalysisError(
                f"{what}[{i},{j}] = {entry(i, j)} is {M[i, j]} (not real) at {where}"
            )
        M = M.real
    if not np.all(np.isfinite(M)):
        i, j = (int(v) for v in np.argwhere(~np.isfinite(M))[0])
        raise AnalysisError(
            f"{what}[{i},{j}] = {entry(i, j)} is {M[i, j]} at {where}: the model is not "
            "differentiable there"
        )
    return M


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
