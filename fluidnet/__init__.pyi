# The public names of fluidnet: the one list read by type checkers and, at run time, by
# fluidnet._lazy, which imports each name from its module on first access.

__version__: str

# bound eagerly by __init__.py
from .errors import AnalysisError as AnalysisError
from .errors import CacheError as CacheError
from .errors import FluidnetError as FluidnetError
from .errors import IntegrationError as IntegrationError
from .errors import ModelError as ModelError
from .errors import OptionError as OptionError
from .errors import ParameterError as ParameterError
from .errors import StoreError as StoreError

# linear delay systems
from .linear.delaytf import DelayTF as DelayTF
from .linear.delaytf import as_delay_tf as as_delay_tf
from .linear.lineardde import LinearDDE as LinearDDE
from .linear.quasipoly import QuasiPolynomial as QuasiPolynomial
from .linear.realization import ImproperSystemError as ImproperSystemError
from .linear.realization import NeutralSystemError as NeutralSystemError
from .linear.timeresponse import TimeResponse as TimeResponse

# models
from .symbolic.equilibrium import EquilibriumWarning as EquilibriumWarning
from .symbolic.model import Model as Model
from .symbolic.model import Param as Param
from .symbolic.symbols import params as params
from .symbolic.symbols import s as s
from .symbolic.symbols import signals as signals
from .symbolic.symbols import states as states
from .symbolic.symbols import t as t
from . import models as models

# an alias (PEP 484: private to type checkers, which should use fluidnet.models.flow_level)
from .models import flow_level as flowlevel  # noqa: F401

# nonlinear DDE engine
from .dde.simulation import simulate as simulate
from .dde.ensemble import simulate_ensemble as simulate_ensemble
from .dde.solution import Solution as Solution
from .dde.oscillation import oscillation as oscillation
from .dde.oscillation import Oscillation as Oscillation
from .dde.maps import DiscreteMap as DiscreteMap
from .dde.maps import MapRun as MapRun
from .dde.maps import iterate_map as iterate_map
from .codegen.compiled import save_compiled as save_compiled
from .codegen.compiled import load_compiled as load_compiled
from .codegen.compiled import SavedModel as SavedModel

# stability analysis
from .stability.bode import bode as bode
from .stability.nyquist import nyquist as nyquist
from .stability.margins import margins as margins
from .stability.nichols import nichols as nichols
from .stability.nichols import NicholsResponse as NicholsResponse
from .stability.responses import step_response as step_response
from .stability.responses import impulse_response as impulse_response
from .stability.rootlocus import root_locus as root_locus
from .stability.rootlocus import RootLocus as RootLocus
from .stability.chart import stability_chart as stability_chart
from .stability.boundary import stability_boundary as stability_boundary
from .stability.critical import critical_value as critical_value
from .stability.critical import stability_switches as stability_switches
from .stability.critical_results import CriticalValue as CriticalValue
from .stability.critical_results import CriticalValues as CriticalValues
from .stability.phaseplane import phase_portrait as phase_portrait
from .stability.phaseplane import nonlinear_chart as nonlinear_chart

# proved stability regions (interval arithmetic)
from .proof.region import certify_region as certify_region
from .proof.chart import certified_chart as certified_chart
from .proof.checker import check_certificate as check_certificate
from .proof.certificate import RegionCertificate as RegionCertificate
from .proof.certificate import CertificateError as CertificateError

# bifurcation analysis
from .bifurcation.hopf import hopf_point as hopf_point
from .bifurcation.hopf import hopf_at as hopf_at
from .bifurcation.periodic import periodic_orbit as periodic_orbit
from .bifurcation.continuation import continue_orbits as continue_orbits
from .bifurcation.hopf_curve import continue_hopf as continue_hopf
from .bifurcation.hopf import HopfPoint as HopfPoint
from .bifurcation.orbit import PeriodicOrbit as PeriodicOrbit
from .bifurcation.continuation import OrbitBranch as OrbitBranch
from .bifurcation.hopf_curve import HopfCurve as HopfCurve
from .bifurcation.cycle_folds import continue_cycle_folds as continue_cycle_folds
from .bifurcation.cycle_folds import CycleFoldCurve as CycleFoldCurve
from .bifurcation.equilibria import continue_equilibria as continue_equilibria
from .bifurcation.equilibria import EquilibriumCurve as EquilibriumCurve
from .bifurcation.equilibria import continue_equilibrium_folds as continue_equilibrium_folds
from .bifurcation.equilibria import EquilibriumFoldCurve as EquilibriumFoldCurve
from .bifurcation.onset import criticality_table as criticality_table
from .bifurcation.onset import onset_map as onset_map
from .bifurcation.smoothness import NonSmoothError as NonSmoothError
from .bifurcation.smoothness import NonSmoothWarning as NonSmoothWarning

# stationary laws of window chains
from .stochastic.chain import WindowChain as WindowChain
from .stochastic.distribution import WindowDistribution as WindowDistribution
from .stochastic.pdmp import stationary_distribution as stationary_distribution
from .stochastic.series import constant_mark_distribution as constant_mark_distribution
from .stochastic.series import constant_mark_moment as constant_mark_moment
from .stochastic.series import constant_mark_tail as constant_mark_tail
from .stochastic.montecarlo import monte_carlo as monte_carlo
from .stochastic.errors import NotNormalizableError as NotNormalizableError
from .stochastic.errors import GridConvergenceError as GridConvergenceError

# packet simulations (ns-3) next to the fluid models
from . import packet as packet
from .packet.comparison import compare as compare

# the papers
from .papers.registry import reproduce as reproduce
