"""Exceptions raised by fluidnet.

Every exception message names the parameter, state, time or value at fault.
"""

from __future__ import annotations

__all__ = ["FluidnetError", "ModelError", "ParameterError", "IntegrationError", "AnalysisError"]


class FluidnetError(Exception):
    """Base class of every fluidnet exception."""


class ModelError(FluidnetError, ValueError):
    """A model is ill-formed: unknown state, bad delay, free symbol, duplicate state, ..."""


class ParameterError(FluidnetError, ValueError):
    """A parameter is unknown, missing, not finite or outside its bounds."""


class AnalysisError(FluidnetError, ValueError):
    """A requested analysis has no answer (no equilibrium, no crossing in an interval, ...)."""


class IntegrationError(FluidnetError, RuntimeError):
    """The nonlinear integrator failed; the message names the time, state values and cause."""
