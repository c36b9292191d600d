"""Zimmermann, *Congestion Pricing as Scalable, Efficient and Stable Congestion Control for Future
IP Networks* (doctoral dissertation, 2005): SBRM against TCP Reno + RED.

Items registered here are run by ``fluidnet reproduce sbrm``. Equation, table and figure numbers
are the dissertation's. Targets with ``source="derived"`` check numbers computed from the printed
equations independently of fluidnet, with plain numpy/scipy; the note of each target says from
what. Labels M1, M2, ... are the misprints and unstated conventions listed in
``papers/sbrm/README.md``. Conventions (M3-M6): d is the propagation delay with
``RTT* = d + b*/c``, ``tau^f = tau^b = RTT*/2``, c in pkts/s, RED averaging weight 1e-4.

Modules
-------
data
    Table 6.6.2 as printed, numbers derived independently (continuous critical delays, curve
    values, gain margins, fair shares), the (N, c, d) grids of the full and quick runs.
targets
    The target table: every number checked, per item.
critical_delay
    The paper's grid rule and the exact critical delay on the printed loop gains; the Table
    6.6.2 rows (:func:`table_results`).
nonlinear
    The nonlinear fluid models integrated over the delay grid, each run classified.
the item modules
    ``steady_state``, ``loop_gains``, ``critical_table``, ``regions``, ``nyquist_bode``,
    ``gain_margins``, ``fairness``, ``friendliness``, ``admission``, ``validation``, in order:
    Table 5.5.1; (6.5.20)-(6.5.22); Table 6.6.2; Fig 6.6.4; Figs 6.6.1-6.6.3; Figs 6.6.5/6.6.6;
    (3.2.16)-(3.2.21); Fig 5.6.1; Fig 7.2.3; Figs 6.6.8-6.6.11 and 6.7.1/6.7.3.
bifurcation
    Derived: the Hopf bifurcation at the critical delay (criticality, normal form, the smooth
    orbit branch and where it meets the marking threshold or the empty queue).
proved_critical
    Table 6.6.2 proved: each critical delay bracketed by delays proved stable and unstable in
    interval arithmetic (:func:`fluidnet.certify_region`).
criticality
    Derived: the criticality of the Hopf bifurcation at every critical delay of a grid of
    Table 6.6.2, the Hopf delays of Reno/RED against the printed loop gain's continuous
    crossings, and the onset maps in (d, c).
packet_critical_delay
    SBRM (item ``packet_critical_delay``) and Reno/RED (item ``packet_critical_delay_red``) in
    ns-3 at half and twice the fluid critical delay: the queue settles below it and oscillates
    above it (the packet half of Sec 6.7).
packet_fcrit
    SBRM and Reno/RED in ns-3 at Table 6.6.2's critical delays: the queue's spectral peak against
    the printed f_crit (Figs 6.6.12-6.6.14).
packet_tables
    Table 5.5.1's SBRM column (weighted proportional fairness on one link) and Tables 5.6.1/5.6.2
    (TCP/RM against NewReno-ECN) in ns-3.
"""

from __future__ import annotations

from ..registry import paper
from .targets import TARGETS

PAPER = paper(
    "sbrm",
    title="Zimmermann, Congestion Pricing as Scalable, Efficient and Stable Congestion Control "
    "(SBRM vs Reno/RED)",
    citation="M. Zimmermann, 'Congestion Pricing as Scalable, Efficient and Stable Congestion "
    "Control for Future IP Networks', doctoral dissertation, 2005.",
    targets=TARGETS,
)

# The item modules register their items on import, in this order: the order in which
# ``fluidnet reproduce sbrm`` runs them and lists their targets. Keep it.
# isort: off
from . import steady_state as steady_state  # noqa: E402
from . import loop_gains as loop_gains  # noqa: E402
from . import critical_table as critical_table  # noqa: E402
from . import proved_critical as proved_critical  # noqa: E402
from . import regions as regions  # noqa: E402
from . import nyquist_bode as nyquist_bode  # noqa: E402
from . import gain_margins as gain_margins  # noqa: E402
from . import fairness as fairness  # noqa: E402
from . import friendliness as friendliness  # noqa: E402
from . import admission as admission  # noqa: E402
from . import validation as validation  # noqa: E402
from . import bifurcation as bifurcation  # noqa: E402
from . import criticality as criticality  # noqa: E402
from . import packet_critical_delay as packet_critical_delay  # noqa: E402
from . import packet_fcrit as packet_fcrit  # noqa: E402
from . import packet_tables as packet_tables  # noqa: E402

# isort: on
# the helpers and values the tests, the notebook and the benchmarks use
from .admission import erlang_b  # noqa: E402
from .critical_delay import (  # noqa: E402
    exact_critical,
    exact_critical_many,
    grid_rule,
    loop_gain_factory,
)
from .data import C_VALUES, GRID_MS, N_VALUES, PROTOCOLS, TABLE_6_6_2_PRINTED  # noqa: E402
from .data import is_number as is_number  # noqa: E402
from .friendliness import claimed_bandwidth  # noqa: E402

__all__ = [
    "PAPER",
    "C_VALUES",
    "GRID_MS",
    "N_VALUES",
    "PROTOCOLS",
    "TABLE_6_6_2_PRINTED",
    "claimed_bandwidth",
    "erlang_b",
    "exact_critical",
    "exact_critical_many",
    "grid_rule",
    "loop_gain_factory",
]
