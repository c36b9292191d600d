"""Symbolic fluid models: the model, its canonical form, equilibria, linearization, loop gains.

* :mod:`~fluidnet.symbolic.symbols` — ``t``, ``s``, :func:`states`, :func:`params`,
  :func:`signals`;
* :mod:`~fluidnet.symbolic.model` — :class:`Model` and :class:`Param`;
* :mod:`~fluidnet.symbolic.canonical` — the canonical form every back end consumes (signals
  expanded, every delayed value a *lag* symbol);
* :mod:`~fluidnet.symbolic.equilibrium` (the numeric search: :mod:`~fluidnet.symbolic.rootsearch`,
  :mod:`~fluidnet.symbolic.densenewton` on the generated code of
  :mod:`~fluidnet.symbolic.steadycode` and :mod:`~fluidnet.symbolic.npsource`; closed forms:
  :mod:`~fluidnet.symbolic.closedforms`, :mod:`~fluidnet.symbolic.timebox`; many parameter
  points: :mod:`~fluidnet.symbolic.batchequilibria`; :mod:`~fluidnet.symbolic.newton` for large
  models), :mod:`~fluidnet.symbolic.linearize`,
  :mod:`~fluidnet.symbolic.loopgain` — from the model to a :class:`fluidnet.LinearDDE` and to
  :class:`fluidnet.DelayTF` loop gains.

This stage builds on :mod:`fluidnet.linear` only (and keeps what it builds through
:mod:`fluidnet.stores`, which the compile cache of :mod:`fluidnet.codegen` provides).
"""

from __future__ import annotations

from .._lazy import attach_stub

# Public names: the stub __init__.pyi lists them once (for type checkers too); each is
# imported from its module on first access (see fluidnet._lazy).
__getattr__, __dir__, __all__ = attach_stub(globals())
