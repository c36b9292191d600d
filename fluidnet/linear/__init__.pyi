# The public names of fluidnet.linear: the one list read by type checkers and, at run time, by
# fluidnet._lazy, which imports each name from its module on first access.

from .delaytf import DelayTF as DelayTF
from .delaytf import PoleCensus as PoleCensus
from .delaytf import as_delay_tf as as_delay_tf
from .lineardde import LinearDDE as LinearDDE
from .quasipoly import LAPLACE as LAPLACE
from .quasipoly import QuasiPolynomial as QuasiPolynomial
from .quasipoly import as_quasipolynomial as as_quasipolynomial
from .realization import DelaySystem as DelaySystem
from .realization import ImproperSystemError as ImproperSystemError
from .realization import NeutralSystemError as NeutralSystemError
from .timeresponse import TimeResponse as TimeResponse
from .rootset import CharacteristicRoot as CharacteristicRoot
from .rootset import Roots as Roots
from .roots import characteristic_roots as characteristic_roots
from .roots import spectral_abscissa as spectral_abscissa
