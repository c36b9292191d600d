"""Library models, one module per law family, each citing its paper and equation numbers.

===============================  ==================================================================
``rcp``                          RCP fluid model, Dukkipati & McKeown (2004) eqs (4)-(7)
``rcp_dimensionless``            the same in (alpha, beta, T/d0) only
``rcp_heterogeneous``            RCP with flows of different RTTs, y = sum_i N_i R(t - d_i)
``rcp_flow_schedule``            RCP with a piecewise-constant number of flows N(t) (Figs 37-39)
``rcp_linearized``               their eq (8) as a model (to simulate next to the nonlinear one)
``sbrm``                         SBRM window/queue model, Zimmermann (2005) (6.4.1)-(6.4.7)
``sbrm_network``                 the multi-link form with a routing matrix
``reno_red``                     TCP Reno + RED comparison model (Zimmermann, after Low et al. 2002)
``kelly_primal``                 Kelly primal rate ODE (Zimmermann (3.2.16)) on a routing matrix
``kelly_dual``                   dual price ODE (Zimmermann (3.2.20)) on a routing matrix
``assured_service``              N generalized TCPs (+c1 W^alpha / -c2 W^beta) at an ORED queue,
                                 mean-field DDE; equilibrium = the fixed point of Misra, Baras &
                                 Ott (2000) Sec III
``assured_service_fixed_point``  that fixed point, eqs (4)-(9), solved as in their Sec III-B
``generalized_tcp_pipe``         one generalized TCP with a full pipe, eqs (14)-(16), as a DDE
``generalized_tcp_chain``        the per-ACK window chain (17) as a ``fluidnet.WindowChain``
``ored_marking``                 the RED profile f_mark(Q) of ORED (Sec II), sympy
``Utility``                      utility functions with symbolic U, U', U'' (Kunniyur &
                                 Srikant 2003, Assumption 4): ``log_utility``,
                                 ``power_utility`` (-1/x^nu), ``utility_family``
``UserNetwork``                  routing matrix, capacities, utilities and users' constants (Sec II)
``utility_primal``               primal rate laws (9)/(10)/(38), ECN (40)/(41), disturbances (31),
                                 delayed extensions (every feedback, or the price only)
``utility_window``               window laws (12)/(13) and (22)/(23) in the window sizes
``adaptive_marking``             ECN users with the adaptive marking level of Sec V-D (projected)
``marking_level``                loss-free marking levels of Props 3-5, (27)/(39)
``penalty_optimum``              the team problems (3)/(5)/(42), solved by scipy (no ODE)
``capacity_optimum``             the NLP (6)-(8) with its Lagrange multipliers
``fluid_penalty``                the loss/mark fraction (u - C)^+/u; ``mm1b_loss``: M/M/1/B
``binary_feedback``              the binary-feedback law family of Ye et al. (3)-(5) on a network:
                                 Filippov sliding on the capacity surfaces, or a smoothed indicator
``tcp_law``                      the TCP control law (6)-(13) of Ye et al., fixed slow-start
                                 threshold; ``approximate_law`` (10) + (18); ``mrg_law`` (20)-(22)
``tcp_utility``                  the TCP utility (8), (12), (14) of Ye et al.;
                                 ``approximate_utility`` (19), ``continuity_constant`` (14),
                                 ``reverse_engineer``: z, f and U' from increase/decrease rates
``BinaryFeedbackNetwork``        flows on links: ``.model()``, ``.sliding_model()`` (the sliding
                                 motion on one link, smooth), ``.discrete()`` (discrete-time law,
                                 deterministic or seeded random marking; ``.discrete_map()``
                                 the law as a ``DiscreteMap``); ``single_link_network``,
                                 ``topology_one_network`` (Ye et al.'s topology I)
``mgt_red``                      TCP window/queue fluid model with RED, Misra, Gong & Towsley
                                 (SIGCOMM 2000); ``hollot_plant``, ``red_stability_bound``: the
                                 linearized plant and RED condition of Hollot et al. (TAC 2002)
``hollot_pi``                    the same model with the PI AQM of Hollot, Misra, Towsley & Gong
                                 (INFOCOM 2001, TAC 2002); ``hollot_pi_design``: its gain rule
``xcp``                          XCP, Katabi, Handley & Rohrs (SIGCOMM 2002) App. B (15)-(17);
                                 ``xcp_beta``, ``xcp_alpha_bound`` (Theorem 1)
``fast_tcp``                     FAST TCP window law (Jin, Wei & Low 2004) on one link, static
                                 (Wang, Wei, Choi & Low 2007) or integrator link model;
                                 ``fast_equilibrium``, ``fast_static_critical_gamma``
``dctcp``                        DCTCP fluid model, Alizadeh, Javanmard & Prabhakar (SIGMETRICS
                                 2011); ``dctcp_sawtooth``: Alizadeh et al. (SIGCOMM 2010) Sec 3.3
``dcqcn``                        DCQCN fluid model, Zhu et al. (SIGCOMM 2015) as in Zhu, Ghobadi,
                                 Misra & Padhye (CoNEXT 2016) Fig. 2; ``dcqcn_fixed_point``
                                 (Theorem 1), ``dcqcn_p_approx``
===============================  ==================================================================
"""

from __future__ import annotations

# No module here is named like a function it exports (``rcp`` lives in ``rate_control``), so
# ``import fluidnet.models.<module>`` always gives the module and ``fn.models.rcp`` the function.
from .._lazy import attach_stub

# Public names: the stub __init__.pyi lists them once (for type checkers too); each is
# imported from its module on first access (see fluidnet._lazy).
__getattr__, __dir__, __all__ = attach_stub(globals())
