# The public names of fluidnet.stability: the one list read by type checkers and, at run time, by
# fluidnet._lazy, which imports each name from its module on first access.

# bound eagerly by __init__.py
from .bode import bode as bode
from .nyquist import nyquist as nyquist
from .margins import margins as margins
from .bode import BodeResponse as BodeResponse
from .nyquist import NyquistResponse as NyquistResponse
from .margins import Margins as Margins
from .nichols import nichols as nichols
from .nichols import NicholsResponse as NicholsResponse

from .boundary import BoundaryCurve as BoundaryCurve
from .boundary import StabilityBoundary as StabilityBoundary
from .boundary import stability_boundary as stability_boundary
from .chart import StabilityAccessor as StabilityAccessor
from .chart import stability_chart as stability_chart
from .critical_results import CriticalValue as CriticalValue
from .critical_results import CriticalValues as CriticalValues
from .critical import Crossing as Crossing
from .critical import StabilitySwitches as StabilitySwitches
from .critical import critical_value as critical_value
from .critical import stability_switches as stability_switches
from .phaseplane import PhasePortrait as PhasePortrait
from .phaseplane import nonlinear_chart as nonlinear_chart
from .phaseplane import phase_portrait as phase_portrait
from .responses import impulse_response as impulse_response
from .responses import step_response as step_response
from .rootlocus import RootLocus as RootLocus
from .rootlocus import root_locus as root_locus
