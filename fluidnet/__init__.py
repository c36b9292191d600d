"""fluidnet — fluid models of congestion-control laws.

Write a law once as symbolic delay-differential equations; solve its equilibrium, linearize it
into a multi-delay linear DDE and loop transfer functions with exact delays, analyse stability,
integrate it as a nonlinear DDE, and regenerate the source papers' figures and tables.

The package is organised by stage, each building only on the ones before it:
:mod:`fluidnet.linear` (linear delay systems, roots, transfer functions),
:mod:`fluidnet.symbolic` (models, equilibria, linearization, loop gains), :mod:`fluidnet.dde`
(the nonlinear integrator), :mod:`fluidnet.stability` (frequency domain, charts, boundaries,
critical values, phase plane), :mod:`fluidnet.bifurcation` (Hopf normal forms, periodic orbits,
Floquet multipliers, continuation), then :mod:`fluidnet.models` and :mod:`fluidnet.papers`.
"""

from __future__ import annotations

import importlib

import sympy  # noqa: F401  (``fn.sympy``: a convenience for notebooks, not part of __all__)

from . import models
from .errors import (
    AnalysisError,
    CacheError,
    FluidnetError,
    IntegrationError,
    ModelError,
    OptionError,
    ParameterError,
    StoreError,
)
from .linear import DelayTF, LinearDDE, QuasiPolynomial, as_delay_tf
from .models import flow_level as flowlevel
from .papers.registry import reproduce
from .symbolic import Model, Param, params, s, signals, states, t

__version__ = "0.1.0"

# Public names implemented in later stages, imported on first use (keeps `import fluidnet` fast
# and compiles nothing at import time).
_LAZY = {
    # nonlinear DDE engine
    "simulate": "fluidnet.dde",
    "simulate_ensemble": "fluidnet.dde",
    "Solution": "fluidnet.dde",
    "oscillation": "fluidnet.dde",
    "Oscillation": "fluidnet.dde",
    # stability analysis
    "bode": "fluidnet.stability",
    "nyquist": "fluidnet.stability",
    "margins": "fluidnet.stability",
    "stability_chart": "fluidnet.stability",
    "stability_boundary": "fluidnet.stability",
    "critical_value": "fluidnet.stability",
    "stability_switches": "fluidnet.stability",
    "phase_portrait": "fluidnet.stability",
    "nonlinear_chart": "fluidnet.stability",
    # bifurcation analysis
    "hopf_point": "fluidnet.bifurcation",
    "hopf_at": "fluidnet.bifurcation",
    "periodic_orbit": "fluidnet.bifurcation",
    "continue_orbits": "fluidnet.bifurcation",
    "continue_hopf": "fluidnet.bifurcation",
    "HopfPoint": "fluidnet.bifurcation",
    "PeriodicOrbit": "fluidnet.bifurcation",
    "OrbitBranch": "fluidnet.bifurcation",
    "HopfCurve": "fluidnet.bifurcation",
    "NonSmoothError": "fluidnet.bifurcation",
    # stationary laws of window chains (fluidnet.stochastic)
    "WindowChain": "fluidnet.stochastic",
    "WindowDistribution": "fluidnet.stochastic",
    "stationary_distribution": "fluidnet.stochastic",
    "constant_mark_distribution": "fluidnet.stochastic",
    "constant_mark_moment": "fluidnet.stochastic",
    "constant_mark_tail": "fluidnet.stochastic",
    "monte_carlo": "fluidnet.stochastic",
    "NotNormalizableError": "fluidnet.stochastic",
    "GridConvergenceError": "fluidnet.stochastic",
}


def __getattr__(name: str):
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'fluidnet' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_LAZY))


__all__ = [
    "AnalysisError",
    "CacheError",
    "DelayTF",
    "FluidnetError",
    "IntegrationError",
    "LinearDDE",
    "Model",
    "ModelError",
    "OptionError",
    "Param",
    "ParameterError",
    "QuasiPolynomial",
    "StoreError",
    "as_delay_tf",
    "flowlevel",
    "models",
    "params",
    "reproduce",
    "s",
    "signals",
    "states",
    "t",
    *_LAZY,
]
