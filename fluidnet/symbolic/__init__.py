"""Symbolic fluid models: the model, its canonical form, equilibria, linearization, loop gains.

* :mod:`~fluidnet.symbolic.symbols` — ``t``, ``s``, :func:`states`, :func:`params`,
  :func:`signals`;
* :mod:`~fluidnet.symbolic.model` — :class:`Model` and :class:`Param`;
* :mod:`~fluidnet.symbolic.canonical` — the canonical form every back end consumes (signals
  expanded, every delayed value a *lag* symbol);
* :mod:`~fluidnet.symbolic.equilibrium`, :mod:`~fluidnet.symbolic.linearize`,
  :mod:`~fluidnet.symbolic.loopgain` — from the model to a :class:`fluidnet.LinearDDE` and to
  :class:`fluidnet.DelayTF` loop gains.

This stage builds on :mod:`fluidnet.linear` only.
"""

from __future__ import annotations

from .canonical import DDEForm, Lag, build_form
from .equilibrium import equilibria
from .linearize import linearize
from .loopgain import loop_gain
from .model import Model, Param
from .symbols import params, s, signals, states, t

__all__ = [
    "DDEForm",
    "Lag",
    "Model",
    "Param",
    "build_form",
    "equilibria",
    "linearize",
    "loop_gain",
    "params",
    "s",
    "signals",
    "states",
    "t",
]
