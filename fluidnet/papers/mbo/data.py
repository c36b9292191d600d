"""Misra, Baras & Ott (2000): the paper's parameters, and values derived from its equations.

The paper prints no tables and its figures kept only their captions: every number here is
either a parameter stated in the text, or a value derived independently of fluidnet from the
paper's (corrected) equations with plain numpy/scipy (and checked again by the tests). The
derived values carry the precision they were recorded with; tolerances follow from it.
"""

from __future__ import annotations

#: Bytes per segment (both sections) and bits per Mb/s.
MSS = 512.0
MBPS = 1e6 / 8.0  # bytes/s

#: The four parameter sets of Sec III-C: (alpha, beta, c1, c2, p_max). Set 2 is printed with
#: beta = -1, a misprint for 1 (the paper calls it AIMD, defined as alpha = 0, beta = 1, and
#: needs alpha < beta).
PARAMETER_SETS = {
    1: (-1.0, 1.0, 1.0, 0.5, 0.01),
    2: (0.0, 1.0, 0.2, 0.1, 0.1),
    3: (-1.0, 1.0, 0.5, 0.1, 0.01),
    4: (0.0, 1.0, 0.4, 0.2, 0.1),
}
#: ORED thresholds of Sec III-C in packets (printed swapped: "max_th and min_th ... 20 and 100").
THRESHOLDS_PKTS = (20.0, 100.0)

#: Experiment A: assured rates 1.5 and 3 Mb/s, a common RTT the paper does not give.
EXP_A_RATES = (1.5, 3.0)
#: Common RTT for Experiment A (not printed). Throughputs depend on it only at the 1e-3 level;
#: the derived ratio table below is reproduced to all its digits with 50 ms (not with 20 or
#: 100 ms), so that is the value used for it and for Fig 4.
EXP_A_RTT = 0.05
#: Experiment B: equal profiles 1.5 Mb/s, RTTs 20 and 100 ms.
EXP_B_RATES = (1.5, 1.5)
EXP_B_RTTS = (0.02, 0.1)

#: Sec IV-C network: 512-byte MSS, RTT 13.66 ms, assured 0.75 Mb/s, link 3 Mb/s, thresholds
#: 15/95 segments, p_max = 0.02; baseline law (alpha, beta, c1, c2) = (-1, 1, 1, 0.5).
SEC4 = {"rtt": 0.01366, "R": 0.75, "C": 3.0, "min_th": 15.0, "max_th": 95.0, "p_max": 0.02}
#: The printed bandwidth-delay product.
BDP_PRINTED = 5.0

# ---------------------------------------------------------------------------------- Sec III
#: The columns of the Exp B tables below (those of sets 2/4 stop at the ratio).
EXP_B_COLUMNS = ("Q*", "W1*", "W2*", "rho1", "rho2", "rho1/rho2", "p1", "p2")
#: Exp B fixed point, set 1: C [Mb/s] -> (Q* [pkts], W1, W2, rho1, rho2 [Mb/s], rho1/rho2,
#: p1, p2). Derived (nested Brent on the corrected (8)-(9)), 4 significant digits.
EXP_B_SET1 = {
    4.5: (43.69, 39.13, 62.06, 2.681, 1.819, 1.474, 0.00130, 0.00052),
    5.0: (39.71, 39.67, 61.69, 3.093, 1.907, 1.623, 0.00127, 0.00053),
    6.0: (34.73, 41.90, 62.63, 3.926, 2.074, 1.893, 0.00114, 0.00051),
    8.0: (29.47, 48.02, 67.27, 5.606, 2.394, 2.342, 0.00087, 0.00044),
    10.0: (26.65, 55.02, 73.39, 7.290, 2.710, 2.690, 0.00066, 0.00037),
    12.0: (24.92, 62.44, 80.22, 8.972, 3.028, 2.963, 0.00051, 0.00031),
}
#: Exp B, sets 2 and 4 (identical in theory): C -> (Q*, W1, W2, rho1, rho2, ratio).
EXP_B_SET24 = {
    4.5: (86.64, 59.43, 88.98, 2.462, 2.038, 1.208),
    6.0: (66.83, 57.04, 86.73, 3.561, 2.439, 1.460),
    8.0: (56.03, 60.82, 90.58, 5.117, 2.883, 1.775),
    10.0: (50.05, 66.52, 96.29, 6.727, 3.273, 2.055),
    12.0: (46.02, 72.92, 102.69, 8.365, 3.635, 2.301),
}
#: Exp B, set 3: rho1/rho2 at C = 4.5, 5, ..., 12.
EXP_B_SET3_RATIO = {
    4.5: 1.405,
    5.0: 1.537,
    6.0: 1.785,
    7.0: 2.011,
    8.0: 2.216,
    9.0: 2.402,
    10.0: 2.569,
    11.0: 2.720,
    12.0: 2.856,
}
#: Exp A ratio rho2/rho1 (3 decimals), sets 1/3 and 2/4, at C [Mb/s] (common RTT 50 ms).
EXP_A_RATIO = {
    "sets 1, 3": {
        4.55: 1.968,
        4.75: 1.857,
        5.0: 1.750,
        6.0: 1.500,
        7.0: 1.375,
        8.0: 1.300,
        9.0: 1.250,
        10.0: 1.214,
        11.0: 1.188,
        12.0: 1.167,
    },
    "sets 2, 4": {
        4.55: 1.984,
        4.75: 1.923,
        5.0: 1.858,
        6.0: 1.672,
        7.0: 1.552,
        8.0: 1.468,
        9.0: 1.406,
        10.0: 1.358,
        11.0: 1.321,
        12.0: 1.290,
    },
}
#: Exp A, set 1 throughputs (rho1, rho2) [Mb/s] at C = 6, 9, 12, for any common RTT.
EXP_A_SET1_RHO = {6.0: (2.400, 3.600), 9.0: (4.000, 5.000), 12.0: (5.538, 6.462)}
#: Exp A, set 1 at C = 6 Mb/s: common RTT -> (W1, W2, Q* [pkts]).
EXP_A_SET1_WINDOWS = {
    0.02: (34.25, 51.38, 56.3),
    0.05: (45.52, 68.29, 40.6),
    0.1: (70.07, 105.11, 28.7),
}
#: Exp A, set 1 at C = 12 Mb/s, RTT 20 ms: (W1, W2, Q*).
EXP_A_SET1_C12 = (42.00, 49.01, 32.4)
#: Exp A, sets 2/4 near C -> 4.5, RTT 20 ms: Q* [pkts] above max_th = 100.
EXP_A_AIMD_QUEUE = {4.75: 732.0, 5.0: 371.0}

# ---------------------------------------------------------------------------------- Sec IV
#: Single flow, "as stated" reading (BDP 5, gamma 0.75): case -> (zero-drift W, PDMP mean,
#: PDMP var, PDMP CoV, MC mean, MC CoV, E_n[p]); MC of the chain: 2000 chains x 40k ACKs.
SEC4_TABLE = {
    "baseline": (31.04, 30.28, 64.05, 0.2643, 30.30, 0.2649, 0.00197),
    "alpha=-0.75": (38.15, 37.09, 117.0, 0.2916, 37.06, 0.2918, 0.00322),
    "alpha=-0.5": (50.00, 48.21, 240.1, 0.3214, 48.13, 0.3213, 0.00529),
    "alpha=-0.25": (71.14, 69.37, 693.4, 0.3796, 69.14, 0.3800, 0.00880),
    "alpha=0": (131.33, 140.47, 5717.0, 0.5383, 139.12, 0.5395, 0.01330),
    "c2=0.4": (32.55, 32.00, 55.18, 0.2321, 32.00, 0.2330, 0.00226),
    "c2=0.3": (34.71, 34.33, 46.94, 0.1996, 34.35, 0.2000, 0.00269),
    "c2=0.2": (38.21, 37.98, 38.53, 0.1634, 37.97, 0.1639, 0.00337),
    "c2=0.1": (45.57, 45.50, 28.54, 0.1174, 45.45, 0.1176, 0.00478),
    "c1=0.25": (24.46, 23.33, 29.58, 0.2331, 23.35, 0.2332, 0.00079),
    "c1=0.5": (27.20, 26.31, 42.93, 0.2491, 26.33, 0.2498, 0.00127),
    "c1=2": (36.22, 35.55, 96.92, 0.2770, 35.54, 0.2773, 0.00293),
}
#: Recorded values that the converged solution does not reproduce, with the reason.
SEC4_MISMATCH = {
    ("alpha=0", "variance"): "the recorded 5717 comes from a grid cut near w = 2200: in the "
    "saturated region the hazard is only 0.015 per segment, and the variance converges to "
    "5717.51 once the grid reaches w = 3000 (m = 2000 ... 16000 agree to 1e-8)",
}
#: The case -> keyword arguments of :func:`fluidnet.models.generalized_tcp_chain`.
SEC4_CASES = {
    "baseline": {},
    "alpha=-0.75": {"alpha": -0.75},
    "alpha=-0.5": {"alpha": -0.5},
    "alpha=-0.25": {"alpha": -0.25},
    "alpha=0": {"alpha": 0.0},
    "c2=0.4": {"c2": 0.4},
    "c2=0.3": {"c2": 0.3},
    "c2=0.2": {"c2": 0.2},
    "c2=0.1": {"c2": 0.1},
    "c1=0.25": {"c1": 0.25},
    "c1=0.5": {"c1": 0.5},
    "c1=2": {"c1": 2.0},
}
#: The three readings of the BDP (misprint 14): name -> (bdp, gamma, what it assumes).
BDP_READINGS = {
    "as stated": (5.0, 0.75, "BDP 5 as printed (equivalently MSS = 1024 bytes)"),
    "literal numbers": (10.0, 0.75, "3 Mb/s x 13.66 ms / 512 bytes = 10.0 segments"),
    "C = 1.5 Mb/s": (5.0, 0.5, "C = 1.5 Mb/s, so BDP = 5 and gamma = (1.5 - 0.75)/1.5"),
}
#: PDMP (mean, var, CoV) under the other two readings; None where not recorded.
SEC4_READINGS = {
    "literal numbers": {
        "baseline": (33.03, 67.99, 0.2496),
        "alpha=0": (141.83, 5693.0, 0.5320),
        "c2=0.2": (40.60, 39.66, 0.1551),
        "c2=0.1": (47.92, 29.36, 0.1131),
        "c1=0.25": (26.50, None, 0.2187),
        "c1=2": (38.05, None, 0.2647),
    },
    "C = 1.5 Mb/s": {
        "baseline": (33.19, 81.51, 0.2720),
        "alpha=0": (202.96, None, 0.5647),
        "c2=0.2": (42.07, 49.58, 0.1674),
    },
}
#: Shape of the baseline law (BDP 5): support from (1 - c2) W* = 10, mode, skew, quantiles
#: q05/q25/q50/q75/q95, fraction of ACKs below W* = 20.
BASELINE_SHAPE = {
    "lower": 10.0,
    "mode": 27.8,
    "skew": 0.38,
    "quantiles": (18.3, 24.3, 29.7, 35.7, 44.4),
    "below_onset": 0.09,
}
#: c2 = 0.2: support from 16, mode 36.9, quantiles; c2 = 0.4: support from 12, mode 29.9;
#: alpha = 0: skew 1.55, mode 91, 65 % of ACKs above the saturation window 100.
OTHER_SHAPES = {
    "c2=0.2": {"lower": 16.0, "mode": 36.9, "quantiles": (28.4, 33.6, 37.6, 42.0, 48.8)},
    "c2=0.4": {"lower": 12.0, "mode": 29.9},
    "alpha=0": {"skew": 1.55, "mode": 91.0, "saturated": 0.65},
}
#: Constant marking probability: CoV per ACK (independent of c1 and p), alpha (rows) x c2 =
#: 0.1 ... 0.5 (columns), 4 decimals.
CONSTANT_P_COV = {
    -1.0: (0.1604, 0.2302, 0.2860, 0.3349, 0.3792),
    -0.75: (0.1719, 0.2472, 0.3080, 0.3617, 0.4112),
    -0.5: (0.1861, 0.2684, 0.3354, 0.3954, 0.4514),
    -0.25: (0.2044, 0.2958, 0.3710, 0.4392, 0.5040),
    0.0: (0.2294, 0.3333, 0.4201, 0.5000, 0.5774),
}
CONSTANT_P_C2 = (0.1, 0.2, 0.3, 0.4, 0.5)
#: Ott, Kemperman & Mathis (1996): E[W] sqrt(p) per ACK for standard TCP, 5 decimals.
OTT_MEAN = 1.52691

# ---------------------------------------------------------------------------------- the DDEs
#: Critical BDP (Hopf) of the pipe-full DDE, thresholds 15/95, gamma 0.75: case -> segments.
HOPF_BDP = {
    "baseline": 114.0,
    "c2=0.2": 189.0,
    "c2=0.1": 274.0,
    "alpha=-0.5": 111.0,
    "alpha=0": 71.0,
    "p_max=0.1": 43.0,
}
#: Window at the baseline Hopf point.
HOPF_WINDOW = 130.0

# ------------------------------------------------------------- the sizes of the items' runs
#: The (parameter set, C [Mb/s]) cases of the mean-field DDE, and those of a quick run.
DDE_CASES = ((1, 6.0), (1, 10.0), (2, 6.0), (2, 10.0))
DDE_QUICK = ((1, 6.0),)
#: Keyword arguments of the pipe model for each Hopf case (a quick run takes the baseline).
HOPF_CASES = {
    "baseline": {},
    "c2=0.2": {"c2": 0.2},
    "c2=0.1": {"c2": 0.1},
    "alpha=-0.5": {"alpha": -0.5},
    "alpha=0": {"alpha": 0.0},
    "p_max=0.1": {"p_max": 0.1},
}
#: Peak-to-peak window (segments) of the collocation cycle that probes each Hopf point's
#: criticality: where the normal form predicts it, inside the ORED kinks of every case.
PROBE_P2P = 0.5
#: (alpha, c2) of the Monte Carlo runs of the constant-p chain, and those of a quick run.
CONSTANT_MC = ((-1.0, 0.5), (-1.0, 0.2), (-0.5, 0.3), (0.0, 0.5))
CONSTANT_MC_QUICK = ((-1.0, 0.5),)
