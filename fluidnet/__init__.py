"""fluidnet — fluid models of congestion-control laws.

Write a law once as symbolic delay-differential equations; solve its equilibrium, linearize it
into a multi-delay linear DDE and loop transfer functions with exact delays, analyse stability,
integrate it as a nonlinear DDE, and regenerate the source papers' figures and tables.
"""

from __future__ import annotations

import sympy

from . import models
from .delaytf import DelayTF, as_delay_tf
from .errors import AnalysisError, FluidnetError, IntegrationError, ModelError, ParameterError
from .lineardde import LinearDDE
from .model import Model, Param
from .quasipoly import QuasiPolynomial
from .reproduce import reproduce
from .symbols import params, s, signals, states, t

__version__ = "0.1.0"

__all__ = [
    "AnalysisError",
    "DelayTF",
    "FluidnetError",
    "IntegrationError",
    "LinearDDE",
    "Model",
    "ModelError",
    "Param",
    "ParameterError",
    "QuasiPolynomial",
    "as_delay_tf",
    "models",
    "params",
    "reproduce",
    "s",
    "signals",
    "states",
    "sympy",
    "t",
]
