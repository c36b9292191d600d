"""Exceptions raised by fluidnet.

Every error a user can cause is a :class:`FluidnetError`; its message names the parameter,
state, time, option or value at fault. Each class also derives from the built-in exception a
caller would otherwise expect (``ValueError`` or ``RuntimeError``), so ``except ValueError``
keeps working.

``ModelError``
    an ill-formed model or system: unknown state, bad delay, free symbol, a matrix of the wrong
    shape, a non-causal transfer function
``ParameterError``
    a parameter value: unknown, missing, not finite, outside its bounds
``OptionError``
    an option of an analysis or of the integrator: ``rtol``, ``method``, ``k``, ``executor``,
    ``on_error``, grid sizes, ...
``AnalysisError``
    an analysis without an answer: no equilibrium, no crossing, no certificate
``IntegrationError``
    the nonlinear integrator failed (the message names time and cause)
``CacheError``
    the compile-cache directory is unsafe (not ours, or writable by others), or its disk is full
    (the message names the directory)
``StoreError``
    a checkpoint store or a result file that cannot be used: made by another call, corrupt, not
    fluidnet's, or on a full disk (the message names the file and why)
"""

from __future__ import annotations

__all__ = [
    "FluidnetError",
    "ModelError",
    "ParameterError",
    "OptionError",
    "IntegrationError",
    "AnalysisError",
    "CacheError",
    "StoreError",
]


class FluidnetError(Exception):
    """Base class of every fluidnet exception."""


class ModelError(FluidnetError, ValueError):
    """A model is ill-formed: unknown state, bad delay, free symbol, duplicate state, ..."""


class ParameterError(FluidnetError, ValueError):
    """A parameter is unknown, missing, not finite or outside its bounds."""


class OptionError(FluidnetError, ValueError):
    """An option of an analysis or of the integrator is invalid (the message names it)."""


class AnalysisError(FluidnetError, ValueError):
    """A requested analysis has no answer (no equilibrium, no crossing in an interval, ...)."""


class IntegrationError(FluidnetError, RuntimeError):
    """The nonlinear integrator failed; the message names the time, state values and cause."""


class CacheError(FluidnetError, RuntimeError):
    """The directory of compiled models is unsafe: owned by another user, or writable by others
    (code found there would run in this process); or it cannot be written because its disk is
    full, over quota or read-only. The message names the directory."""


class StoreError(FluidnetError, ValueError):
    """A checkpoint store or result file cannot be used: it was made by a different call (the
    message says what differs), is corrupt, is in use, is not fluidnet's, or its disk is full."""
