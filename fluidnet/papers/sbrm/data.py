"""The dissertation's printed values (Table 6.6.2), numbers derived from its equations
independently of fluidnet (numpy/scipy), and the (N, c, d) grids of the full and quick runs.

Shared by the target table (:mod:`~fluidnet.papers.sbrm.targets`), the critical-delay computation
(:mod:`.critical_delay`) and the items.
"""

from __future__ import annotations

#: Table 6.6.2 as printed: N, c [pkts/ms], d_crit RED, d_crit SBRM [ms], f_crit RED, SBRM [Hz].
TABLE_6_6_2_PRINTED: tuple[tuple[int, int, str, str, str, str], ...] = (
    (20, 8, "62", "102", "0.66", "1.50"),
    (20, 9, "54", "94", "0.75", "1.63"),
    (20, 10, "50", "86", "0.82", "1.78"),
    (20, 11, "<<50", "78", "n/a", "1.97"),
    (20, 12, "<<50", "70", "n/a", "2.19"),
    (20, 13, "<<50", "66", "n/a", "2.32"),
    (20, 14, "<<50", "62", "n/a", "2.48"),
    (20, 15, "<<50", "58", "n/a", "2.65"),
    (30, 8, "78", ">>102", "0.59", "n/a"),
    (30, 9, "70", "98", "0.65", "1.56"),
    (30, 10, "62", "86", "0.74", "1.78"),
    (30, 11, "54", "78", "0.84", "1.96"),
    (30, 12, "50", "74", "0.90", "2.07"),
    (30, 13, "50", "66", "0.92", "2.32"),
    (30, 14, "<<50", "62", "n/a", "2.47"),
    (30, 15, "<<50", "58", "n/a", "2.65"),
    (40, 8, "90", ">>102", "0.55", "n/a"),
    (40, 9, "78", "102", "0.63", "1.50"),
    (40, 10, "70", "90", "0.70", "1.70"),
    (40, 11, "66", "82", "0.75", "1.87"),
    (40, 12, "58", "74", "0.85", "2.07"),
    (40, 13, "54", "66", "0.91", "2.19"),
    (40, 14, "50", "62", "0.98", "2.47"),
    (40, 15, "<<50", "58", "n/a", "2.64"),
    (50, 8, "102", ">>102", "0.51", "n/a"),
    (50, 9, "90", "102", "0.58", "1.50"),
    (50, 10, "82", "90", "0.64", "1.70"),
    (50, 11, "74", "82", "0.70", "1.87"),
    (50, 12, "66", "74", "0.79", "2.07"),
    (50, 13, "62", "70", "0.84", "2.19"),
    (50, 14, "58", "62", "0.90", "2.47"),
    (50, 15, "<<50", "58", "n/a", "2.64"),
    (60, 8, ">>102", ">>102", "n/a", "n/a"),
    (60, 9, "98", "102", "0.56", "1.50"),
    (60, 10, "90", "94", "0.61", "1.63"),
    (60, 11, "82", "82", "0.67", "1.87"),
    (60, 12, "74", "74", "0.74", "2.07"),
    (60, 13, "66", "70", "0.82", "2.19"),
    (60, 14, "62", "66", "0.88", "2.33"),
    (60, 15, "58", "58", "0.94", "2.64"),
)

#: The continuous critical delay d* [ms] of the printed loop gains ((6.5.21) as printed for SBRM,
#: (6.5.22) with e^{-RTT* s} and alpha = 1e-4 for RED): the d where |L(jw)| = 1 at the phase
#: crossover, computed independently of fluidnet with numpy/scipy, per N (rows) and
#: c = 8 ... 15 pkts/ms (columns), to 0.1 ms.
CONT_DCRIT_NOTE = {
    "RED": {
        20: (62.0, 55.1, 49.6, 45.1, 41.3, 38.1, 35.4, 33.1),
        30: (77.0, 68.5, 61.6, 56.0, 51.3, 47.4, 44.0, 41.1),
        40: (89.6, 79.6, 71.7, 65.2, 59.7, 55.1, 51.2, 47.8),
        50: (100.6, 89.4, 80.5, 73.2, 67.1, 61.9, 57.5, 53.7),
        60: (110.5, 98.2, 88.4, 80.4, 73.7, 68.0, 63.1, 58.9),
    },
    "SBRM": {
        20: (108.0, 95.4, 85.5, 77.4, 70.8, 65.1, 60.3, 56.2),
        30: (111.0, 97.7, 87.3, 78.9, 72.0, 66.2, 61.3, 57.0),
        40: (114.1, 100.2, 89.3, 80.5, 73.3, 67.3, 62.2, 57.8),
        50: (117.4, 102.7, 91.3, 82.1, 74.7, 68.4, 63.2, 58.6),
        60: (121.0, 105.4, 93.4, 83.8, 76.1, 69.6, 64.2, 59.5),
    },
}

#: Why a finite printed entry differs from the grid rule (the printed f of SBRM N=40, c=13 is M25).
MISMATCH_NOTES = {
    ("SBRM", 60, 12): "continuous d* = 76.1 ms lies between 74 and 78 and the grid rule picks 78; "
    "the printed 74 is one grid step away (the f printed, 2.07 Hz, is that of 74 ms)",
    ("SBRM", 40, 13): "printed f = 2.19 Hz with d = 66 ms; every other 66 ms row has 2.32-2.33 Hz "
    "and f depends almost only on d: a likely typo for 2.32 (M25)",
    ("RED", 30, 11): "continuous d* = 56.0 ms; the grid rule gives 58, printed 54",
    ("RED", 60, 13): "continuous d* = 68.0 ms; the grid rule gives 70, printed 66",
    ("RED", 50, 15): "printed <<50 but the continuous d* = 53.7 ms lies inside the grid (54)",
}

GRID_MS = tuple(range(50, 103, 4))  # Sec 6.6.1: 50 ... 102 ms in steps of 4 ms
N_VALUES = (20, 30, 40, 50, 60)
C_VALUES = tuple(range(8, 16))  # pkts/ms
PROTOCOLS = ("SBRM", "RED")


#: The bars of Table 6.6.2's scorecard: how many finite rows must agree with the print in d_crit
#: (and in f_crit at the printed d_crit), and in f_crit at the grid-rule d_crit, per protocol.
#: SBRM 35/36 and 34/36, RED 28/30 and 28/30: the rest are the documented misprints.
AGREEMENT_BARS = {"SBRM": (35, 34), "RED": (28, 28)}
#: The rows of Table 6.6.2 computed in a quick run.
QUICK_TABLE_ROWS = tuple(r for r in TABLE_6_6_2_PRINTED if r[0] == 30 and r[1] in (9, 10, 11, 13))
#: (N, c [pkts/ms]) pairs simulated besides N = 30, c = 10: their continuous critical delays lie
#: at least ~1 ms from a grid delay, so "stable" and "oscillating" are decidable in finite time.
NONLINEAR_PAIRS = {
    "SBRM": ((20, 15), (50, 12), (60, 14), (50, 13)),
    "RED": ((40, 12), (50, 12), (40, 9), (60, 11)),
}

#: Values of the Nyquist/Bode curves at N = 30, c = 10 pkts/ms ((6.5.21) as printed, (6.5.22)
#: with e^{-RTT* s}), evaluated independently of fluidnet with numpy/scipy (the text prints none):
#: d [ms] -> (negative-real-axis crossing |L|, f_pc [Hz], phase margin [deg], DC gain L(0)).
FIG_VALUES_NOTE = {
    "SBRM": {
        50: (0.600, 2.92, 36.4, 52.7),
        62: (0.729, 2.41, 24.5, 63.9),
        86: (0.986, 1.78, 1.2, 86.5),
        102: (1.157, 1.52, -13.3, 101.5),
    },
    "RED": {
        50: (0.577, 0.89, 16.3, 10.8),
        62: (1.017, 0.74, -0.5, 18.3),
        78: (1.863, 0.60, -18.0, 33.4),
        102: (3.696, 0.48, -41.0, 69.8),
    },
}
#: Gain margin [dB] of (6.5.21) at N=30, c=10 pkts/ms, d=86 ms with one parameter varied (the
#: text gives no values): an independent numpy evaluation of (6.5.21) on a ~2000-point log
#: frequency grid, read at the first sample past -180 deg.
GM_NOTE = {
    "kappa": {0.05: 12.1, 0.1: 6.1, 0.2: 0.1, 0.4: -5.8},
    "w": {5.0: -0.26, 10.0: -0.13, 20.0: 0.12, 40.0: 0.66},
    "gamma": {0.001: 15.2, 0.003: 6.1, 0.006: 0.1, 0.012: -5.9},
    "b0": {0.0: 0.61, 25.0: 0.36, 50.0: 0.12, 100.0: -0.33, 200.0: -1.19},
}
#: Proportionally fair per-path shares of link capacity on the parking lot of Sec 4.4 (equal w):
#: with the link prices below, each path's rate is 1 / (sum of its prices) and every link is
#: exactly full (the KKT conditions of maximizing sum_n w ln x_n), derived by hand.
PARKING_LOT_SHARES = (5 / 8, 5 / 12, 5 / 12, 5 / 8, 1 / 4, 5 / 24, 1 / 4, 1 / 8)
PARKING_LOT_PRICES = (1.6, 2.4, 2.4, 1.6)  # x (k w / C)
#: Exponent B of the primal law's power price (y/c)^B.
PRIMAL_B = 100.0
#: Heterogeneous sources on one link for (5.5.5): three classes of 10 flows, c = 10 pkts/ms.
HETEROGENEOUS_D = (0.02, 0.05, 0.1)
HETEROGENEOUS_W = (10, 20, 40)


def is_number(text: str) -> bool:
    """Whether a printed table entry is a number (not ``"<<50"``, ``">>102"`` or ``"n/a"``)."""
    try:
        float(text)
    except ValueError:
        return False
    return True
