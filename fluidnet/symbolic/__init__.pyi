# The public names of fluidnet.symbolic: the one list read by type checkers and, at run time, by
# fluidnet._lazy, which imports each name from its module on first access.

# bound eagerly by __init__.py
from .linearize import linearize as linearize

from .canonical import DDEForm as DDEForm
from .canonical import Lag as Lag
from .canonical import build_form as build_form
from .equilibrium import equilibria as equilibria
from .equilibrium import EquilibriumWarning as EquilibriumWarning
from .loopgain import loop_gain as loop_gain
from .model import Model as Model
from .model import Param as Param
from .symbols import params as params
from .symbols import s as s
from .symbols import signals as signals
from .symbols import states as states
from .symbols import t as t
