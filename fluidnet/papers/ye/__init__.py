"""Ye, Wang, Che, Chan, Ghosh & Lagoa, "Utility Function of TCP and Its Application to the Design
of Minimum Rate Guaranteed Control Law" (conference paper, c. 2007).

Items registered here are run by ``fluidnet reproduce ye``. Equation, table and figure numbers
are the paper's. Every figure of the paper except Fig 1 is an ns-2 packet simulation; the items
regenerate the analytic results (Fig 1, Tables II and III, the optima of Sec IV, the MRG law of
Sec V) from the paper's equations and integrate the binary-feedback fluid law of
:mod:`fluidnet.models.sliding_mode` to the same optima (Filippov sliding), with its smoothed,
discrete-time and randomly marked variants.

Modules, in the order their items run
-------------------------------------
derivations
    (3)-(22) as sympy identities: the reverse engineering, (8), (9), (12)-(14), (19), (22).
utility
    Fig 1: the TCP utility with mu = 0.1, x_s = 1 against log(1 + x).
rate_allocation
    Table II from (16) and from the fluid law; Figs 4-6 (fluid analogue); the qualitative
    claims of Sec III (beta, B, number of bottlenecks, mu_4 = mu).
slow_start
    Sec IV: fixed thresholds x_s > B/2 (Figs 7, 8) and Table III with (19) (Figs 9-11);
    the exact fixed-threshold law for contrast.
sliding
    The sliding mode on one link: duty fraction, time on the surface, no chattering, the
    smoothed indicator, the linearization of the sliding motion, and the stability claims.
mrg
    Sec V: the MRG law (20)-(22), the critical r_max and the guarantee against r (fluid).
packet_topology_one
    Sec III in ns-3: the TCP law over RED on topology I, x4 : x (Figs 4-6) and Fig 3's utility.
packet_mrg
    Sec V in ns-3: the MRG law against TCP on topology II (reconstructed), Figs 13-15.
packet_scenarios
    The ns-2 topologies as ns-3 scenarios.
data
    Printed values, the printed formulas, and references computed from the printed equations
    with numpy/scipy.
targets
    The target table: every number checked, per item.
"""

from __future__ import annotations

from ..registry import paper
from .targets import TARGETS

PAPER = paper(
    "ye",
    title="Ye et al., Utility Function of TCP and the Minimum Rate Guaranteed Control Law",
    citation="L. Ye, Z. Wang, H. Che, H. B. C. Chan, I. Ghosh, C. M. Lagoa, 'Utility Function "
    "of TCP and Its Application to the Design of Minimum Rate Guaranteed Control Law' "
    "(conference version, c. 2007).",
    targets=TARGETS,
)

# isort: off
from . import derivations as derivations  # noqa: E402
from . import utility as utility  # noqa: E402
from . import rate_allocation as rate_allocation  # noqa: E402
from . import slow_start as slow_start  # noqa: E402
from . import sliding as sliding  # noqa: E402
from . import mrg as mrg  # noqa: E402
from . import packet_topology_one as packet_topology_one  # noqa: E402
from . import packet_mrg as packet_mrg  # noqa: E402

# isort: on

__all__ = [
    "PAPER",
    "derivations",
    "utility",
    "rate_allocation",
    "slow_start",
    "sliding",
    "mrg",
    "packet_topology_one",
    "packet_mrg",
]
