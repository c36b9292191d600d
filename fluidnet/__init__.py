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

from ._lazy import lazy_attributes
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

__version__ = "0.1.0"

# Every other public name is imported on first use (see fluidnet._lazy): ``import fluidnet``
# imports neither sympy nor numba, scipy, xarray or matplotlib, and compiles nothing. Each
# name points at the module that defines it, so ``fn.simulate`` does not import the rest of
# ``fluidnet.dde``.
_LAZY = {
    # linear delay systems
    "DelayTF": ".linear.delaytf",
    "as_delay_tf": ".linear.delaytf",
    "LinearDDE": ".linear.lineardde",
    "QuasiPolynomial": ".linear.quasipoly",
    # models
    "EquilibriumWarning": ".symbolic.equilibrium",
    "Model": ".symbolic.model",
    "Param": ".symbolic.model",
    "params": ".symbolic.symbols",
    "s": ".symbolic.symbols",
    "signals": ".symbolic.symbols",
    "states": ".symbolic.symbols",
    "t": ".symbolic.symbols",
    "models": ".models:",
    "flowlevel": ".models.flow_level:",
    # nonlinear DDE engine
    "simulate": ".dde.simulation",
    "simulate_ensemble": ".dde.ensemble",
    "Solution": ".dde.solution",
    "oscillation": ".dde.oscillation",
    "Oscillation": ".dde.oscillation",
    "save_compiled": ".codegen.compiled",
    "load_compiled": ".codegen.compiled",
    "SavedModel": ".codegen.compiled",
    # stability analysis
    "bode": ".stability.bode",
    "nyquist": ".stability.nyquist",
    "margins": ".stability.margins",
    "stability_chart": ".stability.chart",
    "stability_boundary": ".stability.boundary",
    "critical_value": ".stability.critical",
    "stability_switches": ".stability.critical",
    "phase_portrait": ".stability.phaseplane",
    "nonlinear_chart": ".stability.phaseplane",
    # bifurcation analysis
    "hopf_point": ".bifurcation.hopf",
    "hopf_at": ".bifurcation.hopf",
    "periodic_orbit": ".bifurcation.periodic",
    "continue_orbits": ".bifurcation.continuation",
    "continue_hopf": ".bifurcation.hopf_curve",
    "HopfPoint": ".bifurcation.hopf",
    "PeriodicOrbit": ".bifurcation.orbit",
    "OrbitBranch": ".bifurcation.continuation",
    "HopfCurve": ".bifurcation.hopf_curve",
    "continue_cycle_folds": ".bifurcation.cycle_folds",
    "CycleFoldCurve": ".bifurcation.cycle_folds",
    "continue_equilibria": ".bifurcation.equilibria",
    "EquilibriumCurve": ".bifurcation.equilibria",
    "continue_equilibrium_folds": ".bifurcation.equilibria",
    "EquilibriumFoldCurve": ".bifurcation.equilibria",
    "criticality_table": ".bifurcation.onset",
    "onset_map": ".bifurcation.onset",
    "NonSmoothError": ".bifurcation.smoothness",
    # stationary laws of window chains
    "WindowChain": ".stochastic.chain",
    "WindowDistribution": ".stochastic.distribution",
    "stationary_distribution": ".stochastic.pdmp",
    "constant_mark_distribution": ".stochastic.series",
    "constant_mark_moment": ".stochastic.series",
    "constant_mark_tail": ".stochastic.series",
    "monte_carlo": ".stochastic.montecarlo",
    "NotNormalizableError": ".stochastic.errors",
    "GridConvergenceError": ".stochastic.errors",
    # packet simulations (ns-3) next to the fluid models
    "packet": ".packet:",
    "compare": ".packet.comparison",
    # the papers
    "reproduce": ".papers.registry",
}
# ``fn.sympy``: a convenience for notebooks (``fn.sympy.exp``), not part of __all__.
__getattr__, __dir__ = lazy_attributes(globals(), {**_LAZY, "sympy": "sympy:"})

__all__ = [
    "AnalysisError",
    "CacheError",
    "FluidnetError",
    "IntegrationError",
    "ModelError",
    "OptionError",
    "ParameterError",
    "StoreError",
    *_LAZY,
]
