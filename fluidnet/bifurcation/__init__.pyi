# The public names of fluidnet.bifurcation: the one list read by type checkers and, at run time, by
# fluidnet._lazy, which imports each name from its module on first access.

from .continuation import OrbitBranch as OrbitBranch
from .continuation import continue_orbits as continue_orbits
from .hopf import HopfPoint as HopfPoint
from .hopf import hopf_at as hopf_at
from .hopf import hopf_point as hopf_point
from .hopf_curve import HopfCurve as HopfCurve
from .hopf_curve import continue_hopf as continue_hopf
from .orbit import PeriodicOrbit as PeriodicOrbit
from .periodic import periodic_orbit as periodic_orbit
from .smoothness import NonSmoothError as NonSmoothError
from .smoothness import NonSmoothWarning as NonSmoothWarning
from .cycle_folds import continue_cycle_folds as continue_cycle_folds
from .cycle_folds import CycleFoldCurve as CycleFoldCurve
from .continuation import CycleBifurcation as CycleBifurcation
from .continuation import FoldOfCycles as FoldOfCycles
from .continuation import PeriodDoubling as PeriodDoubling
from .continuation import NeimarkSacker as NeimarkSacker
from .codim2 import Codim2Point as Codim2Point
from .codim2 import BautinPoint as BautinPoint
from .codim2 import HopfHopfPoint as HopfHopfPoint
from .codim2 import ZeroHopfPoint as ZeroHopfPoint
from .codim2 import BogdanovTakensPoint as BogdanovTakensPoint
from .codim2 import CuspPoint as CuspPoint
from .equilibria import continue_equilibria as continue_equilibria
from .equilibria import EquilibriumCurve as EquilibriumCurve
from .equilibria import EquilibriumFold as EquilibriumFold
from .equilibria import continue_equilibrium_folds as continue_equilibrium_folds
from .equilibria import EquilibriumFoldCurve as EquilibriumFoldCurve
from .onset import criticality_table as criticality_table
from .onset import CriticalityTable as CriticalityTable
from .onset import onset_map as onset_map
from .onset import OnsetMap as OnsetMap
