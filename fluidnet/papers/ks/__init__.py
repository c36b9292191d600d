"""Kunniyur & Srikant, "End-to-End Congestion Control Schemes: Utility Functions, Random Losses
and ECN Marks", IEEE/ACM Trans. Networking 11(5):689-702, 2003.

Items registered here are run by ``fluidnet reproduce ks``. Equation, proposition and figure
numbers are the paper's. Every figure of the paper is an ns-2 packet simulation (or a topology
drawing), so the figures drawn here are fluid analogues; the paper's numbers that follow from its
equations are checked, and the numbers derived from its equations (``source="derived"``) are
computed with plain numpy/scipy/sympy (:mod:`~fluidnet.papers.ks.data`), independently of the
models.

The submodules, in the order their items run:

=====================  ============================================================================
``utilities``          utilities and the rate laws: (9)/(10) as (38), the M/M/1/B limit, beta = ln 2
``allocations``        Sec IV: the mixed-utility allocations on C = 300
``experiment1``        Sec VI-A: the NLP (6)-(8), the fluid equilibrium, Fig 2 (fluid analogue)
``tcp``                Sec III-A: the square-root law (18), (19), TCP-friendliness constants
``window``             Sec III-B: window laws (22)/(23) reduce to (24)/(25); Remark 3 (26)
``lyapunov``           Prop 2: the objective (3) increases along trajectories (random losses)
``marking_levels``     Sec V-A: single-link levels, Prop 3 (27) on a network, Prop 5 (39)
``short_flows``        Sec V-B: Prop 4 (35) as printed and as reconstructed, Lemma 1
``experiment2``        Sec V-C / VI-B: loss versus ECN reaction with random losses, Prop 6 (42)
``experiment3``        Sec V-D / VI-C: the adaptive marking level, Figs 4/5 (fluid analogue), units
``delay``              the delayed extension: kappa beta T = pi/2, price-only 2.170, the boundary
``bifurcation``        its Hopf bifurcation: degenerate for (9), supercritical for Kelly's (y/c)^B
``proved_delay``       its region kappa beta T < pi/2 proved in interval arithmetic
``packet_windows``     Sec VI-A in ns-3: the window laws (12)/(13) of three utilities (Fig 2)
``packet_ecn``         Sec VI-B in ns-3: ECN against loss reaction with random losses (Fig 3)
``packet_marking``     Sec VI-C/D in ns-3: adaptive marking level (AVQ), Figs 4-6; short flows (8)
``packet_scenarios``   the ns-2 experiments as ns-3 scenarios
``data``               the paper's networks, printed numbers and equations typed from the paper
``targets``            the target table: every number checked, per item
=====================  ============================================================================
"""

from __future__ import annotations

from ..registry import paper
from .targets import TARGETS

PAPER = paper(
    "ks",
    title="Kunniyur & Srikant, End-to-End Congestion Control Schemes: Utility Functions, Random "
    "Losses and ECN Marks",
    citation="S. Kunniyur, R. Srikant, 'End-to-End Congestion Control Schemes: Utility Functions, "
    "Random Losses and ECN Marks', IEEE/ACM Trans. Networking 11(5):689-702, 2003.",
    targets=TARGETS,
)

# Each submodule registers its items with PAPER when imported; this order is the run order.
# isort: off
from . import utilities  # noqa: E402, F401
from . import allocations  # noqa: E402, F401
from . import experiment1  # noqa: E402, F401
from . import tcp  # noqa: E402, F401
from . import window  # noqa: E402, F401
from . import lyapunov  # noqa: E402, F401
from . import marking_levels  # noqa: E402, F401
from . import short_flows  # noqa: E402, F401
from . import experiment2  # noqa: E402, F401
from . import experiment3  # noqa: E402, F401
from . import delay  # noqa: E402, F401
from . import bifurcation  # noqa: E402, F401
from . import onset  # noqa: E402, F401
from . import proved_delay  # noqa: E402, F401
from . import packet_windows  # noqa: E402, F401
from . import packet_ecn  # noqa: E402, F401
from . import packet_marking  # noqa: E402, F401

# isort: on
from .data import exp1_network, exp2_network, exp3_network, sec4_network  # noqa: E402

__all__ = ["PAPER", "exp1_network", "exp2_network", "exp3_network", "sec4_network"]
