"""Symbolic fluid models: the model, its canonical form, equilibria, linearization, loop gains.

* :mod:`~fluidnet.symbolic.symbols` — ``t``, ``s``, :func:`states`, :func:`params`,
  :func:`signals`;
* :mod:`~fluidnet.symbolic.model` — :class:`Model` and :class:`Param`;
* :mod:`~fluidnet.symbolic.canonical` — the canonical form every back end consumes (signals
  expanded, every delayed value a *lag* symbol);
* :mod:`~fluidnet.symbolic.equilibrium` (:mod:`~fluidnet.symbolic.newton` for large models),
  :mod:`~fluidnet.symbolic.linearize`,
  :mod:`~fluidnet.symbolic.loopgain` — from the model to a :class:`fluidnet.LinearDDE` and to
  :class:`fluidnet.DelayTF` loop gains.

This stage builds on :mod:`fluidnet.linear` only.
"""

from __future__ import annotations

from .._lazy import lazy_attributes
from .linearize import linearize  # a submodule named like its function: bound eagerly

# Public names imported on first access (see fluidnet._lazy).
_LAZY = {
    "DDEForm": ".canonical",
    "Lag": ".canonical",
    "build_form": ".canonical",
    "equilibria": ".equilibrium",
    "EquilibriumWarning": ".equilibrium",
    "loop_gain": ".loopgain",
    "Model": ".model",
    "Param": ".model",
    "params": ".symbols",
    "s": ".symbols",
    "signals": ".symbols",
    "states": ".symbols",
    "t": ".symbols",
}
__getattr__, __dir__ = lazy_attributes(globals(), _LAZY)

__all__ = [
    "DDEForm",
    "EquilibriumWarning",
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
