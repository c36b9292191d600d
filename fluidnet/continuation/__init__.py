"""One continuation engine for every curve and branch of fluidnet.

* :mod:`.controller`: step-size controllers (:class:`IterationController`,
  :class:`ErrorController`) and the :class:`Attempt` report they read;
* :mod:`.engine`: the predictor-corrector loop :func:`follow`, driven serially by :func:`run`
  or many paths at once by :func:`run_batch`;
* :mod:`.arclength`: the pseudo-arclength stepper for curves ``F(u) = 0`` (Newton or chord
  corrector, tangents, events located on the curve), used by stability boundaries, Hopf
  curves, branches of periodic orbits and curves of their bifurcations.

Root paths of :mod:`fluidnet.stability.rootpaths` and :mod:`fluidnet.stability.pathbatch`
(natural-parameter continuation of characteristic roots) are steppers of the same loop.
"""

from .controller import Attempt, ErrorController, IterationController, StepController, StepSizeError
from .engine import Stop, call, follow, run, run_batch

__all__ = [
    "Attempt",
    "StepController",
    "IterationController",
    "ErrorController",
    "StepSizeError",
    "Stop",
    "call",
    "follow",
    "run",
    "run_batch",
]
