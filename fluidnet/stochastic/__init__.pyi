# The public names of fluidnet.stochastic: the one list read by type checkers and, at run time, by
# fluidnet._lazy, which imports each name from its module on first access.

from .chain import WindowChain as WindowChain
from .distribution import WindowDistribution as WindowDistribution
from .errors import GridConvergenceError as GridConvergenceError
from .errors import NotNormalizableError as NotNormalizableError
from .montecarlo import monte_carlo as monte_carlo
from .pdmp import stationary_distribution as stationary_distribution
from .series import constant_mark_distribution as constant_mark_distribution
from .series import constant_mark_moment as constant_mark_moment
from .series import constant_mark_tail as constant_mark_tail
