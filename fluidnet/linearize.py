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
from collections.abc import Mapping
from typing import Any

import numpy as np
import sympy

from .errors import AnalysisError, ModelError
from .lineardde import LinearDDE
from .model import param_subs

__all__ = ["linearize", "jacobian_blocks", "frozen_delays"]


def jacobian_blocks(form, wrt_inputs: bool = False):
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


def _eq_substitution(form, eq: Mapping[str, Any], inputs_eq: Mapping[str, Any] | None = None):
    """Replace every current state and lag symbol by its equilibrium value."""
    vals = [sympy.sympify(eq[n]) for n in form.states]
    vals += [sympy.sympify((inputs_eq or {})[n]) for n in form.inputs]
    rep = dict(zip(tuple(form.x) + tuple(form.u), vals, strict=True))
    for lag in form.lags:
        rep[lag.symbol] = vals[lag.state]
    return rep


def frozen_delays(form, rep: Mapping, label: str = "") -> list[sympy.Expr]:
    """Each lag's delay evaluated at the equilibrium substitution ``rep``."""
    out = []
    for lag in form.lags:
        d = lag.delay.xreplace(rep)
        if d.has(form.t):
            raise ModelError(
                f"the delay of {form.lag_label(lag)} depends explicitly on t; "
                "a time-varying model cannot be linearized"
            )
        out.append(d)
    return out


def _check_delay_value(form, lag, value: complex, where: str) -> float:
    if abs(value.imag) > 1e-12 * max(1.0, abs(value.real)) or not math.isfinite(value.real):
        raise ModelError(f"the delay of {form.lag_label(lag)} is {value} at {where}: not real")
    if value.real < 0:
        raise ModelError(f"the delay of {form.lag_label(lag)} is {value.real:g} < 0 at {where}")
    return float(value.real)


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
        the equilibrium and equal delays merged. ``jacobians`` maps each delay expression (``0``
        for the undelayed part) to the symbolic Jacobian at the equilibrium, with symbolic
        parameters when the equilibrium has a closed form (otherwise at the numeric equilibrium).

    Raises
    ------
    ModelError
        When a delay is negative or not real at the equilibrium, or the model depends
        explicitly on time.
    """
    values = model.resolve_params(params)
    form = model.form
    if equilibrium is None:
        eq = model.equilibrium(**params)
    else:
        missing = set(form.states) - set(equilibrium)
        if missing:
            raise ModelError(f"equilibrium misses states {sorted(missing)}")
        eq = {n: float(equilibrium[n]) for n in form.states}
    psubs = param_subs(values)
    for i, e in enumerate(form.rhs):
        if e.has(form.t):
            raise ModelError(
                f"the right-hand side of {form.states[i]} depends explicitly on t; "
                "a time-varying model cannot be linearized"
            )

    J0, Jlag = jacobian_blocks(form)
    rep_num = _eq_substitution(form, eq)
    rep_num.update(psubs)
    delays_sym = frozen_delays(form, _eq_substitution(form, eq))
    n = len(form.states)

    def num_matrix(M: sympy.Matrix, what: str) -> np.ndarray:
        out = np.zeros(M.shape, dtype=float)
        for (i, j), e in np.ndenumerate(np.array(M.tolist(), dtype=object)):
            val = sympy.N(e.xreplace(rep_num))
            try:
                z = complex(val)
            except TypeError as exc:
                raise ModelError(
                    f"{what}[{i},{j}] = {e} does not evaluate to a number at the equilibrium {eq}"
                ) from exc
            if not math.isfinite(z.real) or abs(z.imag) > 1e-12 * max(1.0, abs(z.real)):
                raise AnalysisError(
                    f"{what}[{i},{j}] = {e} is {z} at the equilibrium {eq} with "
                    f"{values}: the model is not differentiable there"
                )
            out[i, j] = z.real
        return out

    A0 = num_matrix(J0, "df/dx")
    delayed: list[tuple[float, np.ndarray]] = []
    where = f"the equilibrium {eq}"
    for lag, col, dsym in zip(form.lags, Jlag, delays_sym, strict=True):
        tau = _check_delay_value(form, lag, complex(sympy.N(dsym.xreplace(psubs))), where)
        Ak = np.zeros((n, n))
        Ak[:, lag.state] = num_matrix(col, f"df/d[{form.lag_label(lag)}]")[:, 0]
        delayed.append((tau, Ak))

    jac = _symbolic_jacobians(model, form, J0, Jlag, eq, psubs)
    return LinearDDE(
        A0, delayed, state_names=form.states, equilibrium=eq, jacobians=jac, params=values
    )


def _matching_symbolic_equilibrium(model, form, eq, psubs) -> dict | None:
    """The closed-form equilibrium (symbolic parameters) that evaluates to ``eq``, if any."""
    from .equilibrium import symbolic_equilibria

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
    sym_eq = _matching_symbolic_equilibrium(model, form, eq, psubs)
    if sym_eq is not None:
        rep = _eq_substitution(form, sym_eq)
    else:
        rep = {**_eq_substitution(form, eq), **psubs}
    n = len(form.states)
    out: dict = {sympy.S.Zero: sympy.simplify(J0.xreplace(rep))}
    for lag, col in zip(form.lags, Jlag, strict=True):
        key = sympy.simplify(lag.delay.xreplace(rep))
        block = sympy.zeros(n, n)
        block[:, lag.state] = sympy.simplify(col.xreplace(rep))
        out[key] = out[key] + block if key in out else block
    return out
