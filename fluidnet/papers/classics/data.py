"""Printed values, published figure data and shared settings of the ``classics`` items.

Nothing here is computed by fluidnet.
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
