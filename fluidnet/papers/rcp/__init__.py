"""Dukkipati & McKeown, "Processor Sharing Flows in the Internet" (RCP), 2004.

Items registered here are run by ``fluidnet reproduce rcp``. Equation numbers are the paper's.

The submodules, in the order their items run:

=========================  ==========================================================
``linearization``          equilibrium, the linearization eq (8), the loop gain eq (9)
``bode``                   the Bode procedure (12)-(14) and the exact boundary; Fig 33
``nyquist``                ``G1`` with the exact delay and Padé; Figs 34-36
``processor_sharing``      eq (3), bounds, slow start, Little's law, max-min; Figs 3, 7-22
``bode_plots``             the Bode plots of App. III; Figs 47, 48
``phase_plane``            the phase-plane rule on the fluid model; Figs 40/44
``phase_portraits``        trajectories and the limit cycle; Figs 41-43
``operating_point``        (alpha, beta) = (0.1, 1.0): linear analysis against the fluid model
``transients``             flow steps (Figs 37-39) and mixed RTPDs (Fig 19)
``invariance``             the region does not change with C, d0 and N (Sec IV-F)
``bifurcation``            the Hopf boundary continued (derived); q* = 0 makes the cycle non-smooth
``proved_region``          Fig 33 proved cell by cell in interval arithmetic (fn.certified_chart)
``packet_fct``             RCP in ns-3: flow completion times against processor sharing
``packet_protocols``       RCP, XCP and TCP in ns-3: Figs 2, 5, 19 and 20
``data``                   the paper's printed values, derived values, grids
``targets``                the target table: every number checked, per item
=========================  ==========================================================

The helpers the tests and the notebook use are re-exported here.
"""

from __future__ import annotations

from ..registry import paper
from .targets import TARGETS

PAPER = paper(
    "rcp",
    title="Dukkipati & McKeown, Processor Sharing Flows in the Internet (RCP)",
    citation="N. Dukkipati, N. McKeown, 'Processor Sharing Flows in the Internet', Stanford "
    "HPNG technical report, 2004.",
    targets=TARGETS,
)

# Each submodule registers its items with PAPER (imported from here, hence below it) when it is
# imported; the order of these imports is the order in which the items run.
# isort: off
from . import linearization  # noqa: E402, F401
from . import bode  # noqa: E402, F401
from . import nyquist  # noqa: E402, F401
from . import processor_sharing  # noqa: E402, F401
from . import bode_plots  # noqa: E402, F401
from . import phase_plane  # noqa: E402, F401
from . import phase_portraits  # noqa: E402, F401
from . import operating_point  # noqa: E402, F401
from . import transients  # noqa: E402, F401
from . import invariance  # noqa: E402, F401
from . import bifurcation  # noqa: E402, F401
from . import proved_region  # noqa: E402, F401
from . import packet_fct  # noqa: E402, F401
from . import packet_protocols  # noqa: E402, F401

# isort: on
# the helpers the tests and the notebook use
from .bode import bode_alpha_range, bode_stable, exact_boundary  # noqa: E402
from .data import omega_c, omega_z, rightmost_root_closed_form  # noqa: E402
from .nyquist import g1_exact, g1_pade, negative_real_crossings  # noqa: E402
from .phase_plane import onset_alpha, phase_plane_ics  # noqa: E402

__all__ = [
    "PAPER",
    "bode_alpha_range",
    "bode_stable",
    "exact_boundary",
    "g1_exact",
    "g1_pade",
    "negative_real_crossings",
    "omega_c",
    "omega_z",
    "onset_alpha",
    "phase_plane_ics",
    "rightmost_root_closed_form",
]
