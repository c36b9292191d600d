"""Nonlinear integration of fluid models: compiled adaptive Runge-Kutta for delay equations.

Public names: :func:`simulate`, :func:`simulate_ensemble`, :class:`Solution`,
:func:`oscillation`, :class:`Oscillation`.
"""

from __future__ import annotations

from .ensemble import simulate_ensemble
from .oscillation import Oscillation, oscillation
from .simulation import simulate
from .solution import Solution

__all__ = ["simulate", "simulate_ensemble", "Solution", "oscillation", "Oscillation"]
