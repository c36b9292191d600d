"""A linearized model with an input and an output, for its time responses.

The *input* is a parameter or a state of the model:

* a **parameter** ``p``: its value steps from the model's value ``p*`` to ``p* + delta`` at
  ``t = 0``, everywhere it appears at once (as a simulation with the new value, started from the
  old equilibrium, would see it); the input column is ``b = df/dp`` at the equilibrium. A
  parameter that enters only through a delay has ``b = 0``: the delays are frozen at the
  equilibrium, where the variation of a delay has no first-order effect (see
  :mod:`fluidnet.symbolic.linearize`).
* a **state** ``x_i``: a unit input is added to its derivative, ``x_i' = f_i + u`` (e.g. a
  flow of extra packets into a queue, in the state's unit per second); ``b = e_i``.

The *output* is a state (its deviation from the equilibrium) or a signal, linearized like the
right-hand sides: current and delayed states, delays frozen at the equilibrium, and the
parameter's direct effect on the signal as a feedthrough.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
import sympy

from ..errors import ModelError, ParameterError
from ..linear.realization import DelaySystem
from .linearize import equilibrium_substitution
from .symbols import identifier, param_subs

if TYPE_CHECKING:
    from ..linear.lineardde import LinearDDE
    from .model import Model

__all__ = ["input_output_system"]


def _number(expr: sympy.Basic, what: str) -> float:
    try:
        value = complex(sympy.N(expr))
    except (TypeError, ValueError) as exc:
        raise ModelError(f"{what} does not evaluate to a number at the equilibrium") from exc
    if value.imag != 0 or not math.isfinite(value.real):
        raise ModelError(f"{what} is {value} at the equilibrium: not a finite real number")
    return value.real


def input_output_system(
    model: Model, input: str, output: str, *, params: Mapping[str, Any] | None = None
) -> tuple[DelaySystem, LinearDDE]:
    """The linearization of ``model`` at its equilibrium, with ``input`` and ``output``.

    Parameters
    ----------
    model : fluidnet.Model
    input : str
        A parameter (a step of its value) or a state (an input added to its derivative).
    output : str
        A state or a signal.
    params : dict, optional
        Parameter values other than the model's.

    Returns
    -------
    system : DelaySystem
        ``x' = A0 x + sum_k A_k x(t - tau_k) + b u``, ``y = sum_j c_j . x(t - sigma_j) + d u``,
        in deviations from the equilibrium.
    lin : LinearDDE
        The linearization (``system.dynamics``), with its equilibrium and parameter values.

    Raises
    ------
    ParameterError
        When ``input`` is neither a parameter nor a state of the model.
    ModelError
        When ``output`` is neither a state nor a signal of the model.
    """
    values = model.resolve_params(params)
    lin = model.linearize(params=dict(params or {}))
    eq = lin.equilibrium or {}
    form = model.form
    rep: dict[Any, Any] = {**equilibrium_substitution(form, eq), **param_subs(values)}
    name_in = identifier(str(input))
    name_out = identifier(str(output))
    n = len(form.states)
    psym = None
    if name_in in form.params:
        psym = form.p[form.params.index(name_in)]
        b = np.array(
            [
                _number(sympy.diff(f, psym).xreplace(rep), f"d f_{s}/d {name_in}")
                for s, f in zip(form.states, form.rhs, strict=True)
            ]
        )
    elif name_in in form.states:
        b = np.zeros(n)
        b[form.states.index(name_in)] = 1.0
    else:
        raise ParameterError(
            f"input {input!r} is neither a parameter nor a state of model {model.name!r} "
            f"(parameters: {', '.join(form.params) or 'none'}; states: {', '.join(form.states)})"
        )
    outputs: list[tuple[float, np.ndarray]] = []
    feedthrough: tuple[tuple[float, float], ...] = ()
    if name_out in form.states:
        row = np.zeros(n)
        row[form.states.index(name_out)] = 1.0
        outputs.append((0.0, row))
    elif name_out in form.signals:
        g = form.signals[name_out]
        row = np.array(
            [
                _number(g.diff(x).xreplace(rep), f"d {name_out}/d {s}")
                for s, x in zip(form.states, form.x, strict=True)
            ]
        )
        outputs.append((0.0, row))
        for lag in form.lags:
            if not g.has(lag.symbol):
                continue
            tau = _number(lag.delay.xreplace(rep), f"the delay of {form.lag_label(lag)}")
            row = np.zeros(n)
            row[lag.state] = _number(
                g.diff(lag.symbol).xreplace(rep), f"d {name_out}/d {form.lag_label(lag)}"
            )
            outputs.append((max(tau, 0.0), row))
        if psym is not None:
            d = _number(g.diff(psym).xreplace(rep), f"d {name_out}/d {name_in}")
            if d != 0:
                feedthrough = ((0.0, d),)
    else:
        raise ModelError(
            f"output {output!r} is neither a state nor a signal of model {model.name!r} "
            f"(states: {', '.join(form.states)}; signals: "
            f"{', '.join(form.signals) or 'none'})"
        )
    kept = tuple((s, c) for s, c in outputs if np.any(c != 0))
    return DelaySystem(dynamics=lin, b=b, outputs=kept, feedthrough=feedthrough), lin
