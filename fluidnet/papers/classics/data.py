"""Printed values, published figure data, closed forms and shared settings of the ``classics``
items.

Nothing here is computed by fluidnet: the closed forms are plain math, typed from the papers.
"""

from __future__ import annotations

import math

# --- Hollot, Misra, Towsley & Gong (2001, 2002): the PI design example
#: Network of the design example: flows, capacity (pkts/s), propagation delay (s), q0 (pkts).
HOLLOT_NETWORK = {"N": 60.0, "C": 3750.0, "Tp": 0.2, "q_ref": 175.0}
#: The printed PI gains.
HOLLOT_GAINS = {"K_pi": 9.64e-6, "z": 0.53}
#: The authors' ns-2 implementation (Queue/PI defaults): p(k) = p(k-1) + a dq(k) - b dq(k-1),
#: sampled at w = 170 Hz.
NS2_PI = {"a": 1.822e-5, "b": 1.816e-5, "w": 170.0}

# --- Katabi, Handley & Rohrs (2002)
#: Sec. 3.5.1 defaults and Theorem 1's bound.
XCP_DEFAULTS = {"alpha": 0.4, "beta": 0.226}
XCP_ALPHA_BOUND = math.pi / (4 * math.sqrt(2))


def xcp_phase_margin(alpha: float, beta: float, d: float = 1.0) -> tuple[float, float]:
    """Phase margin (deg) and crossover (rad/s) of ``(K1 s + K2) e^{-ds}/s^2`` in closed form.

    ``|G| = 1`` gives ``w^2 = (K1^2 + sqrt(K1^4 + 4 K2^2))/2``; the phase margin is
    ``atan(w K1/K2) - w d``.
    """
    K1, K2 = alpha / d, beta / d**2
    w = math.sqrt((K1**2 + math.sqrt(K1**4 + 4 * K2**2)) / 2)
    return math.degrees(math.atan2(w * K1, K2) - w * d), w


def xcp_alpha_range(beta: float) -> tuple[float, float]:
    """The stable alpha interval of XCP at ``beta`` from the boundary ``alpha = w sin w``,
    ``beta = w^2 cos w`` (``w = omega d``; D-subdivision, plain scipy)."""
    from scipy.optimize import brentq

    f = lambda w: w * w * math.cos(w) - beta  # noqa: E731
    w_top = brentq(lambda w: 2 * math.cos(w) - w * math.sin(w), 0.1, 1.5)  # max of w^2 cos w
    w1 = brentq(f, 1e-9, w_top)
    w2 = brentq(f, w_top, math.pi / 2)
    return w1 * math.sin(w1), w2 * math.sin(w2)


# --- Zhu, Ghobadi, Misra & Padhye (2016), Fig. 3(a): phase margin (deg) against N, default
# parameters, at feedback delays of 1, 50 and 100 us (the data files of the figure in the
# authors' public repository, github.com/jitupadhye-zz/rdma, conext2016/figures/pm_rai40_*).
DCQCN_PM_FIGURE = {
    1.0: {
        2: 26.257,
        4: 13.124,
        6: 7.4356,
        8: 5.1522,
        10: 4.5296,
        12: 4.7344,
        20: 9.4219,
        30: 18.201,
        40: 27.135,
        50: 34.874,
        64: 43.193,
        80: 49.996,
        100: 56.147,
    },
    50.0: {
        2: 8.2626,
        4: -0.75215,
        6: -4.9328,
        8: -6.4319,
        10: -6.5844,
        12: -6.0707,
        20: -0.95129,
        30: 7.5322,
        40: 15.73,
        50: 22.546,
        64: 29.548,
        80: 35.006,
        100: 39.811,
    },
    100.0: {
        2: -10.099,
        4: -14.912,
        6: -17.554,
        8: -18.252,
        10: -17.925,
        12: -17.096,
        20: -11.536,
        30: -3.3537,
        40: 4.0933,
        50: 9.9651,
        64: 15.625,
        80: 19.71,
        100: 23.142,
    },
}
#: Where the 100 us curve of Fig. 3(a) crosses 0 deg (between its points N = 34 and 36).
DCQCN_PM_ZERO_100US = 34.0 + 2.0 * 0.21667 / (0.21667 + 1.2794)

# --- Alizadeh et al. (2010): the guideline K > C RTT / 7.
DCTCP_K_GUIDELINE = 1.0 / 7.0


# --- the sweeps of the items (full run, and the reduced ones of a quick run)
#: Averaging poles K (rad/s) of the critical RED slope.
RED_K_VALUES = (0.005, 0.05, 0.5, 5.0, 50.0)
RED_K_QUICK = RED_K_VALUES[::2]
#: Propagation delays (s) of FAST's critical gains; N = 10, c = 12500 pkts/s, alpha = 20.
FAST_DELAYS = (0.05, 0.1, 0.3, 0.5)
FAST_QUICK = (0.1, 0.3)
#: DCTCP's (K [pkts], g) sweep (C d = 83.3 pkts): K at g = 1/16, then g at K = 40.
DCTCP_GRID = tuple((K, 1 / 16) for K in (10.0, 20.0, 40.0, 65.0, 100.0)) + tuple(
    (40.0, g) for g in (1 / 4, 1 / 64)
)
DCTCP_QUICK = ((40.0, 1 / 16), (10.0, 1 / 16))
#: The marking thresholds [pkts] of the ns-3 item ``dctcp_packets`` (full and quick runs), at
#: g = 1/16.
DCTCP_PACKET_K = (20.0, 40.0, 65.0)
DCTCP_PACKET_QUICK = (40.0,)
#: DCQCN's numbers of flows and feedback delays (us) of the Fig. 3(a) curves.
DCQCN_N = (2, 4, 6, 8, 10, 12, 16, 20, 25, 30, 36, 40, 50, 64, 80, 100)
DCQCN_CURVES = {1.0: DCQCN_N, 50.0: DCQCN_N, 100.0: DCQCN_N}
DCQCN_QUICK = {1.0: (2, 10, 64), 100.0: (10, 30, 40)}
