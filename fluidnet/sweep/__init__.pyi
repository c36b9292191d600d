# The public names of fluidnet.sweep: the one list read by type checkers and, at run time, by
# fluidnet._lazy, which imports each name from its module on first access.

from ..threads import single_threaded_blas as single_threaded_blas
from .executors import DaskExecutor as DaskExecutor
from .executors import Executor as Executor
from .executors import FuturesExecutor as FuturesExecutor
from .executors import ProcessExecutor as ProcessExecutor
from .executors import SerialExecutor as SerialExecutor
from .executors import resolve_executor as resolve_executor
from .grid import grid_points as grid_points
from .grid import sweep as sweep
from .signals import Terminated as Terminated
from .store import Store as Store
