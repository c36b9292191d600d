"""fluidnet — fluid models of congestion-control laws.

Write a law once as symbolic delay-differential equations; solve its equilibrium, linearize it
into a multi-delay linear DDE and loop transfer functions with exact delays, analyse stability,
integrate it as a nonlinear DDE, and regenerate the source papers' figures and tables.
"""

from __future__ import annotations

import sympy

from . import flowlevel, models
from .delaytf import DelayTF, as_delay_tf
from .errors import AnalysisError, FluidnetError, IntegrationError, ModelError, ParameterError
from .lineardde import LinearDDE
from .model import Model, Param
from .quasipoly import QuasiPolynomial
from .registry import reproduce
from .symbols import params, s, signals, states, t

__version__ = "0.1.0"

# Public names implemented in subpackages, imported on first use (keeps `import fluidnet` fast
# and avoids compiling anything at import time).
_LAZY = {
    # nonlinear DDE engine (fluidnet.dde)
    "simulate": "fluidnet.dde",
    "simulate_ensemble": "fluidnet.dde",
    "Solution": "fluidnet.dde",
    "oscillation": "fluidnet.dde",
    "Oscillation": "fluidnet.dde",
    # stability analysis (fluidnet.stability)
    "bode": "fluidnet.stability",
    "nyquist": "fluidnet.stability",
    "margins": "fluidnet.stability",
    "stability_chart": "fluidnet.stability",
    "stability_boundary": "fluidnet.stability",
    "critical_value": "fluidnet.stability",
    "phase_portrait": "fluidnet.stability",
    "nonlinear_chart": "fluidnet.stability",
}


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'fluidnet' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_LAZY))


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
    "flowlevel",
    "models",
    "params",
    "reproduce",
    "s",
    "signals",
    "states",
    "sympy",
    "t",
]
