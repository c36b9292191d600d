"""Misra, Baras & Ott, "Generalized TCP Congestion Avoidance and its Effect on Bandwidth Sharing
and Variability" (IEEE Globecom 2000).

Items registered here are run by ``fluidnet reproduce mbo``. Equation numbers are the paper's.

The submodules, in the order their items run:

=======================  ============================================================
``fixed_point``          Sec III mean-value fixed point: Experiments B and A (Figs 1-5)
``mean_field``           the mean-field DDEs: equilibrium = fixed point, stability, Hopf
``criticality``          the pipe-full DDE's Hopf points: criticality, onset map (derived)
``window_distribution``  Sec IV: the stationary window law (Figs 6-7), constant-p oracle,
                         the three readings of the bandwidth-delay product
``variability``          mean-field DDE against the stochastic chain
``packet_sharing``       Sec III in ns-3: Experiments B and A (simulation halves of Figs 1-5)
``packet_window``        Sec IV in ns-3: the window distribution against the PDMP (Figs 6-7)
``data``                 the paper's parameters, the derived values checked against, the sizes
``targets``              the target table: every number checked, per item
=======================  ============================================================
"""

from __future__ import annotations

from ..registry import paper
from .targets import TARGETS

PAPER = paper(
    "mbo",
    title="Misra, Baras & Ott, Generalized TCP Congestion Avoidance (sharing and variability)",
    citation="A. Misra, J. Baras, T. Ott, 'Generalized TCP Congestion Avoidance and its Effect on "
    "Bandwidth Sharing and Variability', IEEE Globecom 2000.",
    targets=TARGETS,
)

# isort: off
from . import fixed_point  # noqa: E402, F401
from . import mean_field  # noqa: E402, F401
from . import criticality  # noqa: E402, F401
from . import window_distribution  # noqa: E402, F401
from . import variability  # noqa: E402, F401
from . import packet_sharing  # noqa: E402, F401
from . import packet_window  # noqa: E402, F401

# isort: on
from .fixed_point import fixed_point as sec3_fixed_point  # noqa: E402

__all__ = ["PAPER", "sec3_fixed_point"]
