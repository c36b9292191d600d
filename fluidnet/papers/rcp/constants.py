"""The RCP paper's printed values, values derived independently of fluidnet, and the grids.

Everything here is a number the items check against or a parameter grid they share; nothing is
computed by fluidnet.
"""

from __future__ import annotations

import numpy as np

# --- linear analysis (Sec IV-C/D)

#: The exact stable alpha interval per beta, from the D-subdivision boundary of eq (15):
#: lambda = jw in lambda^2 + (alpha lambda + beta) e^{-lambda} = 0 gives alpha = w sin w,
#: beta = w^2 cos w, 0 < w < pi/2, solved for w at each beta (derived independently of fluidnet).
EXACT_ALPHA_RANGE = {
    0.05: (0.0509, 1.5496),
    0.1: (0.1037, 1.5265),
    0.2: (0.2165, 1.4731),
    0.3: (0.3427, 1.4061),
    0.4: (0.4916, 1.3163),
    0.5: (0.6954, 1.1715),
}
#: Top of the linear region, the maximum of w^2 cos w on that boundary: beta_max = 0.54977 at
#: alpha = w sin w = 0.94817.
EXACT_BETA_MAX = (0.94817, 0.54977)
#: Sample points of Secs IV-E/F and App. III: (alpha, beta) -> (the paper's verdict "linearly
#: stable", where it is stated).
LINEAR_VERDICTS = {
    (0.2, 0.4): (False, "Fig 47"),
    (0.4, 0.2): (True, "Fig 48"),
    (0.6, 0.2): (True, "Fig 41"),
    (0.6, 0.8): (False, "Fig 42"),
    (1.4, 0.8): (False, "Fig 43"),
    (0.1, 1.0): (False, "Sec III-A"),
}

# Independent values for Fig 34 (beta = 0.3): G1 evaluated directly with numpy from its closed
# form (exact delay, and the [2/2] Padé form with the corrected denominator), crossings found by
# bracketing.
FIG34 = {
    "exact": {"A": -2.918251, "B": -0.711181, "alpha": (0.342671, 1.406112)},
    "pade": {"A": -2.918971, "B": -0.706367, "alpha": (0.342586, 1.415695)},
}
#: RHP poles of G1 at beta = 0.3 in lambda = s d0: the roots of its denominator
#: lambda^2 + 0.3 e^{-lambda}, computed independently of fluidnet.
FIG34_POLE = complex(0.12674, 0.49822)

# --- the nonlinear fluid model (Sec IV-E/F)

#: Initial conditions of the phase-plane study (Sec IV-F): gamma = R/C and q in units of C d0.
GAMMA_INIT = (0.5, 0.1, 0.01)
QUEUE_INIT = (2.0, 0.0)
#: The paper's onset of instability alpha*(beta) (Figs 37-40, printed).
PAPER_ONSET = {0.1: 1.6, 0.4: 1.3, 0.6: 1.2}
#: Onsets alpha*(beta) from a fixed-step Euler integration of the dimensionless form of (4)-(7)
#: (step 0.002 d0, T/d0 = 0.05, queue projected at 0), written independently of fluidnet.
NOTE_ONSET = {0.2: 1.5, 0.3: 1.5, 0.5: 1.3, 0.7: 1.2, 0.8: 1.1, 1.0: 1.0, 1.5: 0.9, 2.0: 0.8}
#: Simulated time of a phase-plane trajectory, in propagation RTTs d0.
T_END_RTT = 400.0
#: ... and on the full (alpha, beta) grid, where the 5x-overloaded starts at small alpha and
#: beta drain their queue over hundreds of RTTs. Much longer horizons do not
#: help: near the linear boundary (e.g. (1.4, 0.3)) the oscillation, whose queue touches 0,
#: decays only like 1/t, and after ~1000 RTTs it decays by less than fn.oscillation's 0.5 %
#: per cycle and is taken for a sustained one.
T_END_RTT_REGION = 1000.0
#: The C, d0 and N values of Sec IV-F's invariance check (C in bits/s).
INVARIANCE = {
    "C": (5.6e3, 0.15e9, 2.5e9, 10e9, 1000e9),
    "d0": (0.01, 0.5, 1.0, 2.0),
    "N": (10.0, 100.0, 1000.0, 5000.0),
}


def parameter_grid(step: float = 0.1, lo: float = 0.1, hi: float = 2.0) -> np.ndarray:
    """The values ``lo, lo + step, ..., hi``, rounded to 10 digits (default: the paper's grid)."""
    return np.round(np.arange(lo, hi + 1e-9, step), 10)
