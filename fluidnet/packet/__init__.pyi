# The public names of fluidnet.packet: the one list read by type checkers and, at run time, by
# fluidnet._lazy, which imports each name from its module on first access.

from .aqm import AQM as AQM
from .aqm import DropTail as DropTail
from .aqm import RED as RED
from .aqm import PIE as PIE
from .aqm import CoDel as CoDel
from .aqm import PI as PI
from .aqm import SBRM as SBRM
from .aqm import RCP as RCP
from .transport import Transport as Transport
from .scenario import Link as Link
from .scenario import Flows as Flows
from .scenario import ShortFlows as ShortFlows
from .scenario import Scenario as Scenario
from .scenario import Dumbbell as Dumbbell
from .scenario import ParkingLot as ParkingLot
from .runner import simulate as simulate
from .batch import sweep as sweep
from .batch import simulate_many as simulate_many
from .store import RunStore as RunStore
from .mapping import scenario_for as scenario_for
from .mapping import fluid_view as fluid_view
from .comparison import compare as compare
from .comparison import Comparison as Comparison
from .timescales import transient as transient
from .timescales import Transient as Transient
from .agreement import agreement_map as agreement_map
from .agreement import AgreementMap as AgreementMap
from .analysis import summary as summary
from .analysis import queue_oscillation as queue_oscillation
from .analysis import QueueOscillation as QueueOscillation
from .results import PacketRun as PacketRun
from .install import ns3_available as ns3_available
from .install import require_ns3 as require_ns3
from .errors import NotInstalledError as NotInstalledError
from .errors import PacketRunError as PacketRunError
