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
                                 deterministic or seeded random marking); ``single_link_network``,
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
from .._lazy import lazy_attributes

# Public names imported on first access (see fluidnet._lazy).
_LAZY = {
    "DCQCN_DEFAULTS": ".dcqcn_fluid",
    "dcqcn": ".dcqcn_fluid",
    "dcqcn_fixed_point": ".dcqcn_fluid",
    "dcqcn_p_approx": ".dcqcn_fluid",
    "dctcp": ".dctcp_fluid",
    "dctcp_sawtooth": ".dctcp_fluid",
    "fast_equilibrium": ".fast_window",
    "fast_static_critical_gamma": ".fast_window",
    "fast_tcp": ".fast_window",
    "assured_service": ".generalized_tcp",
    "assured_service_fixed_point": ".generalized_tcp",
    "generalized_tcp_chain": ".generalized_tcp",
    "generalized_tcp_pipe": ".generalized_tcp",
    "ored_marking": ".generalized_tcp",
    "kelly_dual": ".kelly",
    "kelly_primal": ".kelly",
    "adaptive_marking": ".marking",
    "marking_condition": ".marking",
    "marking_level": ".marking",
    "fluid_penalty": ".penalty",
    "mm1b_loss": ".penalty",
    "penalty_integral": ".penalty",
    "utility_primal": ".primal_rate",
    "flow_schedule": ".rate_control",
    "rcp": ".rate_control",
    "rcp_dimensionless": ".rate_control",
    "rcp_flow_schedule": ".rate_control",
    "rcp_heterogeneous": ".rate_control",
    "rcp_linearized": ".rate_control",
    "reno_red": ".reno",
    "sbrm": ".single_bit",
    "sbrm_network": ".single_bit",
    "RATE": ".sliding_mode",
    "TOPOLOGY_ONE_RTTS": ".sliding_mode",
    "BinaryFeedbackNetwork": ".sliding_mode",
    "DiscreteRun": ".sliding_mode",
    "FlowLaw": ".sliding_mode",
    "ReverseEngineered": ".sliding_mode",
    "approximate_law": ".sliding_mode",
    "approximate_utility": ".sliding_mode",
    "binary_feedback": ".sliding_mode",
    "continuity_constant": ".sliding_mode",
    "mrg_law": ".sliding_mode",
    "reverse_engineer": ".sliding_mode",
    "single_link_network": ".sliding_mode",
    "tcp_law": ".sliding_mode",
    "tcp_utility": ".sliding_mode",
    "topology_one_network": ".sliding_mode",
    "HOLLOT_EXAMPLE": ".tcp_aqm",
    "hollot_pi": ".tcp_aqm",
    "hollot_pi_design": ".tcp_aqm",
    "hollot_plant": ".tcp_aqm",
    "mgt_red": ".tcp_aqm",
    "red_stability_bound": ".tcp_aqm",
    "CapacityOptimum": ".team",
    "capacity_optimum": ".team",
    "penalty_optimum": ".team",
    "team_gradient": ".team",
    "team_objective": ".team",
    "team_weights": ".team",
    "UserNetwork": ".user_network",
    "Utility": ".utility",
    "log_utility": ".utility",
    "power_utility": ".utility",
    "utility_family": ".utility",
    "utility_window": ".window_control",
    "xcp": ".xcp_fluid",
    "xcp_alpha_bound": ".xcp_fluid",
    "xcp_beta": ".xcp_fluid",
}
__getattr__, __dir__ = lazy_attributes(globals(), _LAZY)

__all__ = [
    "dctcp",
    "dctcp_sawtooth",
    "fast_equilibrium",
    "fast_static_critical_gamma",
    "fast_tcp",
    "xcp",
    "xcp_alpha_bound",
    "xcp_beta",
    "DCQCN_DEFAULTS",
    "HOLLOT_EXAMPLE",
    "dcqcn",
    "dcqcn_fixed_point",
    "dcqcn_p_approx",
    "hollot_pi",
    "hollot_pi_design",
    "hollot_plant",
    "mgt_red",
    "red_stability_bound",
    "RATE",
    "TOPOLOGY_ONE_RTTS",
    "BinaryFeedbackNetwork",
    "DiscreteRun",
    "FlowLaw",
    "ReverseEngineered",
    "approximate_law",
    "approximate_utility",
    "binary_feedback",
    "continuity_constant",
    "mrg_law",
    "reverse_engineer",
    "single_link_network",
    "tcp_law",
    "tcp_utility",
    "topology_one_network",
    "CapacityOptimum",
    "UserNetwork",
    "Utility",
    "adaptive_marking",
    "assured_service",
    "assured_service_fixed_point",
    "capacity_optimum",
    "flow_schedule",
    "fluid_penalty",
    "generalized_tcp_chain",
    "generalized_tcp_pipe",
    "kelly_dual",
    "kelly_primal",
    "log_utility",
    "marking_condition",
    "marking_level",
    "mm1b_loss",
    "ored_marking",
    "penalty_integral",
    "penalty_optimum",
    "power_utility",
    "rcp",
    "rcp_dimensionless",
    "rcp_flow_schedule",
    "rcp_heterogeneous",
    "rcp_linearized",
    "reno_red",
    "sbrm",
    "sbrm_network",
    "team_gradient",
    "team_objective",
    "team_weights",
    "utility_family",
    "utility_primal",
    "utility_window",
]
