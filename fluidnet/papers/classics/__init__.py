"""The classic fluid models of congestion control, each against its published result.

``fluidnet reproduce classics`` runs one item per law family, in this order:

=======================  ==========================================================================
``hollot_pi``            Misra-Gong-Towsley TCP/queue model with the PI AQM of Hollot et al.
                         (2001, 2002): equilibrium, linearization, the design example's gains,
                         margins, nonlinear response settling at the reference queue
``mgt_red``              the same model with RED: fixed point, loop gain, Hollot et al.'s
                         sufficient condition, queue averaging against the critical RED slope
``xcp``                  Katabi, Handley & Rohrs (2002): Theorem 1, the (alpha, beta) chart,
                         critical values, nonlinear runs and the fairness controller
``fast``                 FAST TCP (Jin, Wei & Low 2004; Wang, Wei, Choi & Low 2007; Jacobsson
                         et al. 2009): local stability with delay under the static and the
                         integrator link models
``dctcp``                Alizadeh, Javanmard & Prabhakar (2011): no linearizable equilibrium,
                         the limit cycle and its amplitude and period against K and g
``dcqcn``                Zhu et al. (2015), Zhu, Ghobadi, Misra & Padhye (2016): fixed point,
                         phase margin against the number of flows, the delay that destabilizes
``mgt_red_packets``      the MGT/RED model against ns-3: mean queue below the critical delay,
                         oscillation and its period beyond it
``dctcp_packets``        DCTCP's fluid limit cycle against ns-3: the queue's period, mean and
                         span at three K, and the span falling relative to K
``data``                 printed values, published figure data, closed forms, the sweeps
``mgt_loop``             the exact linearized TCP/queue loop derived by hand (the references)
``targets``              the target table: every number checked, per item
=======================  ==========================================================================
"""

from __future__ import annotations

from ..registry import paper
from .targets import TARGETS

PAPER = paper(
    "classics",
    title="Classic fluid models: TCP/AQM (RED, PI), XCP, FAST TCP, DCTCP, DCQCN",
    citation="Misra, Gong & Towsley (SIGCOMM 2000); Hollot, Misra, Towsley & Gong (INFOCOM 2001, "
    "IEEE TAC 2002); Katabi, Handley & Rohrs (SIGCOMM 2002); Jin, Wei & Low (INFOCOM 2004); "
    "Wang, Wei, Choi & Low (2007); Jacobsson et al. (IEEE TAC 2009); Alizadeh et al. (SIGCOMM "
    "2010); Alizadeh, Javanmard & Prabhakar (SIGMETRICS 2011); Zhu et al. (SIGCOMM 2015); Zhu, "
    "Ghobadi, Misra & Padhye (CoNEXT 2016).",
    targets=TARGETS,
)

# isort: off
from . import pi_design  # noqa: E402, F401
from . import red_averaging  # noqa: E402, F401
from . import xcp_stability  # noqa: E402, F401
from . import fast_link_models  # noqa: E402, F401
from . import dctcp_limit_cycle  # noqa: E402, F401
from . import dcqcn_stability  # noqa: E402, F401
from . import mgt_red_packets  # noqa: E402, F401
from . import dctcp_packets  # noqa: E402, F401

# isort: on

__all__ = ["PAPER"]
