# The public names of fluidnet.dde: the one list read by type checkers and, at run time, by
# fluidnet._lazy, which imports each name from its module on first access.

# bound eagerly by __init__.py
from .oscillation import oscillation as oscillation
from .oscillation import Oscillation as Oscillation

from .ensemble import simulate_ensemble as simulate_ensemble
from .simulation import simulate as simulate
from .solution import Solution as Solution
from .maps import DiscreteMap as DiscreteMap
from .maps import MapRun as MapRun
from .maps import iterate_map as iterate_map
from ..codegen.compiled import save_compiled as save_compiled
from ..codegen.compiled import load_compiled as load_compiled
from ..codegen.compiled import SavedModel as SavedModel
