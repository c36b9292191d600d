"""The targets of ``fluidnet reproduce mbo``: every number and statement checked, per item.

The paper prints no tables: expected values are its stated parameters and trends, and values
derived from its (corrected) equations independently of fluidnet (:mod:`~fluidnet.papers.mbo.data`).
``RUN`` marks a reference computed in the run by a second method (the nested-Brent fixed point
against the DDE's equilibrium, the Lambert-W closed form against the characteristic roots) or a
Monte Carlo tolerance from the run's own standard error.
"""

from __future__ import annotations

import math

from ..targets import DERIVED, RUN, claim, equal, near
from .data import (
    BASELINE_SHAPE,
    BDP_READINGS,
    CONSTANT_MC,
    CONSTANT_MC_QUICK,
    CONSTANT_P_C2,
    CONSTANT_P_COV,
    DDE_CASES,
    DDE_QUICK,
    EXP_A_AIMD_QUEUE,
    EXP_A_RATIO,
    EXP_A_SET1_C12,
    EXP_A_SET1_RHO,
    EXP_A_SET1_WINDOWS,
    EXP_B_COLUMNS,
    EXP_B_SET1,
    EXP_B_SET3_RATIO,
    EXP_B_SET24,
    HOPF_BDP,
    HOPF_CASES,
    HOPF_WINDOW,
    OTHER_SHAPES,
    OTT_MEAN,
    PROBE_P2P,
    SEC4_CASES,
    SEC4_MISMATCH,
    SEC4_READINGS,
    SEC4_TABLE,
)

# fmt: off
FP_NOTE = "equilibrium solved by fluidnet from the model; fixed point by nested Brent"
MC_NOTE = "tolerance: 99.9 % of two independent runs plus rounding"
PIPE = "pipe-full DDE (not in the paper)"
HOPF = "pipe-full DDE, Hopf point (not in the paper)"
PACKET_NOTE = ("ns-3 run, mean over the tail {}; expected: the fixed point (8)-(9) of the ns-3 "
               "scenario (capacity and profiles in packets, thresholds + 2 packets); tolerance "
               "fixed before the run: the paper's 5 % (Sec III-C) plus two batch-means standard "
               "errors")
C2_MISMATCH = ("ns-3 gives 1.380 against the fixed point's 1.675, which sets 2 and 4 share: the "
               "fixed point depends on c2/c1 only, and the paper reports that in its simulations "
               "a lower c2 gives larger differentiation (set 2, c2 = 0.1: 1.581, within the "
               "tolerance; set 4, c2 = 0.2: 1.380). Larger decreases make the windows swing more "
               "and the marks of the two flows come in bursts that the mean-value analysis "
               "averages away. Found in the first full run (the criterion was committed before)")
WINDOW_NOTE = ("ns-3 run, mean over the tail {}; expected: the PDMP law of the chain (17) at the "
               "scenario's bandwidth-delay product 11.05 packets (9.05 + the 2 outside the queue "
               "disc) and gamma = 0.749")


def var_tol(v: float) -> float:
    """Half a unit of the last digit the variances were recorded with (4 significant digits,
    at most 2 decimals)."""
    return 0.005 if v < 100 else (0.05 if v < 1000 else 0.5)


def _exp_b() -> list:
    rows = []
    for C, table in EXP_B_SET1.items():
        for name, e in zip(EXP_B_COLUMNS, table, strict=True):
            # marking probabilities are recorded to 2 significant digits: half a unit of the
            # last digit; everything else to +-0.5 %
            rows.append(near(("set 1", C, name), "Sec III, Fig 3", f"Exp B set 1, C = {C:g} Mb/s: "
                             f"{name}", e, source=DERIVED,
                             **({"tol": 5e-6} if name.startswith("p") else {"rel": 5e-3})))
    rows += [near(("sets 2/4", C, name), "Sec III, Fig 5", f"Exp B sets 2/4, C = {C:g} Mb/s: "
                  f"{name}", e, rel=5e-3, source=DERIVED)
             for C, table in EXP_B_SET24.items()
             for name, e in zip(EXP_B_COLUMNS[:6], table, strict=True)]
    rows += [near(("set 3", C), "Sec III, Fig 5", f"Exp B set 3, C = {C:g} Mb/s: rho1/rho2", e,
                  rel=5e-3, source=DERIVED) for C, e in EXP_B_SET3_RATIO.items()]
    return rows


def _invariants(label: str) -> list:
    """sum rho = C (eq (9)); the exact zero-drift invariant; sets 2 and 4 identical."""
    return [
        near("sum rho", "eq (9)", f"{label}: max |sum rho / C - 1| over all sets and capacities",
             0.0, tol=1e-10, source=DERIVED),
        near("invariant", "eq (8)", f"{label}: exact sharing invariant rho^(b-a-1) (rho-R) "
             "T^(b-a) / (1-p) equal across flows (max relative difference)", 0.0, tol=1e-9,
             source=DERIVED),
        near("sets 2 = 4", "Sec III-C", f"{label}: sets 2 and 4 give identical fixed points (max "
             "relative difference)", 0.0, tol=1e-12, source="printed",
             note="the theory depends on c1, c2 only through c2/c1 (printed for the throughput "
             "ratio)"),
    ]


def _exp_a_fixed_points() -> list:
    rows = [near(("rho", C, rtt, i), "Sec III-C, Fig 1", f"Exp A set 1, C = {C:g}, RTT "
                 f"{rtt * 1e3:g} ms: rho{i} (Mb/s)", e, tol=5e-4, source=DERIVED)
            for C, pair in EXP_A_SET1_RHO.items() for rtt in (0.02, 0.05, 0.1)
            for i, e in ((1, pair[0]), (2, pair[1]))]
    for rtt, (w1, w2, q) in EXP_A_SET1_WINDOWS.items():
        where = f"Exp A set 1, C = 6, RTT {rtt * 1e3:g} ms"
        rows += [near(("windows", rtt, "W1"), "Sec III-C, Fig 1", f"{where}: W1", w1, tol=5e-3,
                      source=DERIVED),
                 near(("windows", rtt, "W2"), "Sec III-C, Fig 1", f"{where}: W2", w2, tol=5e-3,
                      source=DERIVED),
                 near(("windows", rtt, "Q*"), "Sec III-C, Fig 1", f"{where}: Q* (pkts)", q,
                      tol=0.05, source=DERIVED)]
    rows += [near(("C = 12", name), "Sec III-C, Fig 1", f"Exp A set 1, C = 12, RTT 20 ms: {name}",
                  e, tol=tol, source=DERIVED)
             for name, e, tol in zip(("W1", "W2", "Q*"), EXP_A_SET1_C12, (5e-3, 5e-3, 0.05),
                                     strict=True)]
    rows += [near(("AIMD queue", C), "Sec III-C (caveat)", f"Exp A sets 2/4, C = {C:g}, RTT 20 "
                  "ms: Q* (pkts) beyond max_th = 100", e, tol=0.5, source=DERIVED,
                  note="the fixed point leaves the RED ramp near C = 4.5: a finite buffer would "
                  "drop") for C, e in EXP_A_AIMD_QUEUE.items()]
    return rows


def _dde(set_id: int, C: float) -> list:
    label, quick = f"set {set_id}, C = {C:g} Mb/s", (set_id, C) in DDE_QUICK
    return [
        claim((label, "unique"), "Sec III-A", f"{label}: every positive equilibrium found is the "
              "same (uniqueness)", quick=quick),
        *(near((label, "eq", key), "eqs (4), (9)", f"{label}: DDE equilibrium {key} = fixed point",
               RUN, rel=1e-9, source=DERIVED, note=FP_NOTE, quick=quick)
          for key in ("W1", "W2", "Q")),
        claim((label, "stable"), "mean-field DDE (not in the paper)", f"{label}: the equilibrium "
              "is linearly stable", source=DERIVED, quick=quick),
        *(near((label, "end", key), "eqs (4), (9)", f"{label}: DDE state at t = {{}} s, {key} = "
               "fixed point", RUN, rel=1e-4, source=DERIVED, quick=quick,
               note="from half the windows and an empty queue") for key in ("W1", "W2")),
        near((label, "end", "Q"), "eqs (4), (9)", f"{label}: DDE queue at t = {{}} s = fixed point "
             "(pkts)", RUN, rel=1e-4, source=DERIVED, quick=quick),
    ]


def _hopf(case: str) -> list:
    quick = case == "baseline"
    rows = [
        claim((case, "below"), HOPF, f"{case}: stable at every scanned bdp below the critical one",
              source=DERIVED, quick=quick),
        near((case, "lambert"), HOPF, f"{case}: critical bdp, characteristic roots = Lambert W "
             "closed form", RUN, rel=1e-6, source=DERIVED, quick=quick),
        claim((case, "hayes"), HOPF, f"{case}: Hayes criterion switches at the same bdp (+-0.1 %)",
              source=DERIVED, quick=quick),
        near((case, "bdp"), HOPF, f"{case}: critical bdp (segments)", HOPF_BDP[case], tol=0.5,
             source=DERIVED, note="recorded to the nearest segment", quick=quick),
    ]
    if case == "baseline":
        rows.append(near("window", HOPF, "baseline: window at the Hopf point", HOPF_WINDOW,
                         tol=0.5, source=DERIVED))
    return rows


CRIT = "pipe-full DDE, criticality (not in the paper)"


def _criticality(case: str) -> list:
    """The Hopf point of ``case`` against closed forms; its criticality, checked by collocation
    and by a simulation past onset (:mod:`~fluidnet.papers.mbo.criticality`)."""
    quick = case == "baseline"
    return [
        near((case, "bdp"), CRIT, f"{case}: critical bdp, fn.hopf_point = Lambert W closed form",
             RUN, rel=1e-8, source=DERIVED, quick=quick,
             note="closed form: Brent on the rightmost Lambert-W root to 1e-12 segments"),
        near((case, "omega"), CRIT, f"{case}: crossing frequency [rad/s] = sqrt(b^2 - a^2) of "
             "u' = a u + b u(t - tau)", RUN, rel=1e-8, source=DERIVED, quick=quick,
             note="omega tau = sqrt((b tau)^2 - (a tau)^2), tau = W_e / C, C = 732.42 "
             "segments/s, at the closed-form critical bdp"),
        claim((case, "subcritical"), CRIT, f"{case}: the Hopf bifurcation is subcritical (l1 > 0, "
              "state-dependent delay W/C included)", source=DERIVED, quick=quick),
        near((case, "probe amplitude"), CRIT, f"{case}: collocation cycle where the normal form "
             f"predicts peak-to-peak {PROBE_P2P:g} segments: its peak-to-peak", PROBE_P2P, rel=1e-2,
             source=DERIVED, quick=quick, note="tolerance: the next order of the normal form "
             "(|p - p0| ~ 1e-6 p0) and the amplitude read from samples"),
        near((case, "probe multiplier"), CRIT, f"{case}: that cycle's unstable Floquet multiplier "
             "minus 1 = exp(-2 Re(mu') (p - p0) T) - 1", RUN, rel=2e-2, source=DERIVED,
             quick=quick, note="mu' = the root speed at the Hopf point (linear theory); "
             "tolerance as above"),
        claim((case, "probe unstable"), CRIT, f"{case}: the cycles lie below the critical bdp "
              "(stable side) with one Floquet multiplier outside the unit circle (the trivial "
              "one at 1 to 1e-8)", source=DERIVED, quick=quick),
        claim((case, "beyond"), CRIT, f"{case}: at 1.02 x the critical bdp the run oscillates on "
              "a cycle that crosses a kink of the ORED profile (W - bdp < min_th or > max_th), "
              "outside the smooth theory", source=DERIVED, quick=quick),
    ]


def _trends(label: str, quick: bool = True) -> list:
    return [
        claim((label, "alpha"), "Sec IV-C, Fig 6", f"{label}: raising alpha raises the mean and "
              "the CoV", quick=quick),
        claim((label, "c2"), "Sec IV-C, Fig 7", f"{label}: lowering c2 raises the mean and lowers "
              "the variance and the CoV", quick=quick),
        claim((label, "c1"), "Sec IV-C", f"{label}: raising c1 raises the mean and the CoV",
              quick=quick),
    ]


def _sec4(case: str) -> list:
    zd, mean, var, cov, _, _, ep = SEC4_TABLE[case]
    return [
        near((case, name), "Sec IV-C", f"{case}: {name} (PDMP)", e, tol=tol, source=DERIVED,
             mismatch=SEC4_MISMATCH.get((case, name), ""))
        for name, e, tol in (("zero-drift window", zd, 5e-3), ("mean", mean, 5e-3),
                             ("variance", var, var_tol(var)), ("CoV", cov, 5e-5),
                             ("E_n[p]", ep, 5e-6))
    ]


def _shape(case: str, shape: dict, quantile_ref: str) -> list:
    rows = []
    if "lower" in shape:
        rows.append(near((case, "lower"), "Sec IV-B", f"{case}: support starts at (1 - c2) W*",
                         shape["lower"], tol=1e-6, source=DERIVED))
    rows.append(near((case, "mode"), "Sec IV-C", f"{case}: mode", shape["mode"],
                     tol=0.5 if shape["mode"] == round(shape["mode"]) else 0.05, source=DERIVED))
    if "skew" in shape:
        rows.append(near((case, "skew"), "Sec IV-C", f"{case}: skewness", shape["skew"],
                         tol=5e-3, source=DERIVED))
    if "saturated" in shape:
        rows.append(near((case, "saturated"), "Sec IV-C", f"{case}: fraction of ACKs above the "
                         "saturation window 100", shape["saturated"], tol=5e-3, source=DERIVED))
    rows += [near((case, "q", q), quantile_ref, f"{case}: quantile {q:g}", e, tol=0.05,
                  source=DERIVED)
             for q, e in zip((0.05, 0.25, 0.5, 0.75, 0.95), shape.get("quantiles", ()),
                             strict=False)]
    return rows


def _readings() -> list:
    rows = []
    for reading in BDP_READINGS:
        quick = reading == "literal numbers"
        for case, rec in SEC4_READINGS.get(reading, {}).items():
            rows += [near((reading, case, name), "Sec IV-C", f"{reading}: {case}: {name} (PDMP)",
                          e, tol=var_tol(e) if tol is None else tol, source=DERIVED, quick=quick)
                     for name, e, tol in (("mean", rec[0], 5e-3), ("variance", rec[1], None),
                                          ("CoV", rec[2], 5e-5)) if e is not None]
        rows += _trends(reading, quick)
    return rows


TARGETS = {
    "exp_b": [
        *_exp_b(),
        *_invariants("Exp B"),
        claim("small p", "Sec III (small-p form of (8))", "Exp B set 1, C = 6: rho (rho - R) T^2 "
              "equal across flows to within max p", source=DERIVED,
              note="an independent computation from rounded inputs gave 0.01820 vs 0.01822"),
        claim("short RTT", "Sec III-C, Fig 5", "the short-RTT flow gets more (rho1/rho2 > 1) and "
              "the more so the larger C"),
        claim("closeness", "Sec III-C, Fig 5", "closeness to proportional sharing (ratio 1): AIMD "
              "(sets 2/4) > set 3 > set 1",
              note="the paper states AIMD closer and smaller c2 closer; in theory set 3 differs "
              "from set 1 through c2/c1 = 0.2 vs 0.5"),
    ],
    "exp_a": [
        near("SAIMD", "Sec III-C, Fig 4", "Exp A sets 1, 3: max |rho2/rho1 - (C - R1)/(C - R2)| "
             "over C", 0.0, tol=1e-2, source=DERIVED,
             note="closed form of the small-p sharing law rho (rho - R) T^2 = const"),
        near("AIMD", "Sec III-C, Fig 4", "Exp A sets 2, 4: max |rho2/rho1 - (C + R2 - R1)/(C - R2 "
             "+ R1)| over C", 0.0, tol=1e-2, source=DERIVED,
             note="closed form of the small-p sharing law (rho - R) T = const"),
        *(near(("ratio", group, C), "Sec III-C, Fig 4", f"Exp A {group}, C = {C:g}: rho2/rho1 "
               "(RTT 50 ms)", e, tol=5e-4, source=DERIVED)
          for group, table in EXP_A_RATIO.items() for C, e in table.items()),
        *_invariants("Exp A"),
        near("sets 1 ~ 3", "Sec III-C", "Exp A: sets 1 and 3 nearly identical (max |difference of "
             "rho2/rho1|)", 0.0, tol=2e-3, source=DERIVED,
             note="both follow (C - R1)/(C - R2) to O(p); c2/c1 = 0.5 vs 0.2"),
        claim("falls", "Sec III-C, Fig 4", "the ratio falls from near 2 towards 1 as the excess "
              "capacity grows"),
        claim("AIMD closer", "Sec III-C, Fig 4", "AIMD (sets 2, 4) closer to proportional sharing "
              "(ratio 2) than SAIMD (sets 1, 3)"),
        *_exp_a_fixed_points(),
    ],
    "dde_equilibrium": [row for set_id, C in DDE_CASES for row in _dde(set_id, C)],
    "pipe_stability": [
        *(near(("zero drift", case), "eqs (4), (16)", f"{case}: pipe DDE equilibrium = zero-drift "
               "window", SEC4_TABLE[case][0], tol=5e-3, source=DERIVED) for case in SEC4_CASES),
        *(row for bdp in (5.0, 10.0) for row in (
            near(("a tau", bdp), PIPE, f"bdp {bdp:g}: a tau from the linearization = closed form",
                 RUN, rel=1e-9, source=DERIVED),
            near(("b tau", bdp), PIPE, f"bdp {bdp:g}: b tau from the linearization = closed form",
                 RUN, rel=1e-9, source=DERIVED),
            near(("a tau ~", bdp), PIPE, f"bdp {bdp:g}: a tau ~ -0.06", -0.06, tol=5e-3,
                 source=DERIVED),
            claim(("b tau in", bdp), PIPE, f"bdp {bdp:g}: b tau in [-0.11, -0.09], deeply stable "
                  "(Hayes)", source=DERIVED))),
        *(row for case in HOPF_CASES for row in _hopf(case)),
    ],
    "criticality": [
        *(row for case in HOPF_CASES for row in _criticality(case)),
        near("map bdp", CRIT, "Hopf curve in (bdp, alpha) (fn.onset_map): largest relative "
             "deviation of its bdp from the Lambert W closed form at the same alpha", 0.0,
             tol=1e-8, source=DERIVED, note="{} points, alpha in [{}, {}]"),
        near("map omega", CRIT, "Hopf curve in (bdp, alpha): largest relative deviation of omega "
             "from sqrt(b^2 - a^2)", 0.0, tol=1e-8, source=DERIVED),
        claim("map subcritical", CRIT, "Hopf curve in (bdp, alpha): subcritical everywhere, no "
              "Bautin or other codimension-two point", source=DERIVED),
        claim("map branch", CRIT, "the branch of cycles from the baseline Hopf point ends at a "
              "kink of the ORED profile (within 0.01 segments), with no fold of cycles",
              source=DERIVED),
        claim("bistable", CRIT, "bistability by simulation along the Hopf curve (alpha = -1 ... "
              "0.02): the cycle continued from 1.02 x to 0.999 x the critical bdp (equilibrium "
              "stable) persists at some alpha, not at the baseline alpha = -1", source=DERIVED,
              quick=False, note="expected from the subcritical Hopf point where the kink is far "
              "(the unstable cycle then bounds a basin); not at alpha = -1, where the smooth "
              "unstable cycle reaches the kink within 1e-5 relative of onset"),
    ],
    "constant_mark": [
        *(near(("series", alpha, c2), "Sec IV-C, constant p", f"CoV per ACK, alpha = {alpha:g}, "
               f"c2 = {c2:g} (series)", e, tol=5e-5, source=DERIVED)
          for alpha, covs in CONSTANT_P_COV.items()
          for c2, e in zip(CONSTANT_P_C2, covs, strict=True)),
        near("pdmp", "Sec IV-B", "PDMP solver vs series, max relative error of mean and CoV ({} "
             "cases)", 0.0, tol=1e-6, source=DERIVED),
        *(claim(("mc", alpha, c2, stat), "Sec IV-C", f"alpha = {alpha:g}, c2 = {c2:g}, p = 0.001: "
                f"series {stat} inside the Monte Carlo 99.9 % interval", source=DERIVED,
                quick=(alpha, c2) in CONSTANT_MC_QUICK)
          for alpha, c2 in CONSTANT_MC for stat in ("mean", "cov")),
        claim("c1", "Sec IV-C", "constant p: the CoV does not depend on c1"),
        near("sqrt", "Sec IV-C", "constant p: CoV(c2 = 0.5)/CoV(c2 = 0.1) if CoV were "
             "proportional to sqrt(1/(1-c2))", math.sqrt((1 - 0.1) / (1 - 0.5)), rel=0.01,
             mismatch="the printed proportionality is garbled: the exact law gives CoV = "
             "sqrt(c2/(2-c2)) for alpha = 0, and the CoV falls much faster with c2 than "
             "sqrt(1/(1-c2)), as the paper itself reports ('decreases rapidly')"),
        *(row for c2 in (0.1, 0.3, 0.5) for row in (
            near(("AIMD cov", c2), "Sec IV-C", f"AIMD, constant p: CoV = sqrt(c2/(2-c2)) at c2 = "
                 f"{c2:g}", math.sqrt(c2 / (2 - c2)), rel=1e-10, source=DERIVED),
            near(("AIMD mean", c2), "Sec IV-C", f"AIMD, constant p: E[W] = c1/(c2 p) at c2 = "
                 f"{c2:g}", 0.4 / (c2 * 0.02), rel=1e-10, source=DERIVED))),
        near("ott", "Sec I (ref [12])", "standard TCP, constant p: E[W] sqrt(p) per ACK",
             OTT_MEAN, tol=5e-6, source=DERIVED, note="Ott, Kemperman & Mathis (1996)"),
    ],
    "window_statistics": [
        claim("grid", "Sec IV-B", "baseline: PDMP grid error estimate at m = 4000 (relative, mean "
              "and variance) <= 1e-7", source=DERIVED),
        *(row for case in SEC4_CASES for row in _sec4(case)),
        *_trends("PDMP"),
        near(("baseline", "lower"), "Sec IV-B", "baseline: support starts at (1 - c2) W* = 10",
             BASELINE_SHAPE["lower"], tol=1e-6, source=DERIVED),
        near(("baseline", "mode"), "Sec IV-C, Fig 6", "baseline: mode", BASELINE_SHAPE["mode"],
             tol=0.05, source=DERIVED),
        near(("baseline", "skew"), "Sec IV-C, Fig 6", "baseline: skewness", BASELINE_SHAPE["skew"],
             tol=5e-3, source=DERIVED),
        *(near(("baseline", "q", q), "Sec IV-C, Fig 6", f"baseline: quantile {q:g}", e, tol=0.05,
               source=DERIVED)
          for q, e in zip((0.05, 0.25, 0.5, 0.75, 0.95), BASELINE_SHAPE["quantiles"], strict=True)),
        near("below onset", "Sec IV-A", "baseline: fraction of ACKs below W* = 20 (no marking)",
             BASELINE_SHAPE["below_onset"], tol=5e-3, source=DERIVED),
        *(row for case, shape in OTHER_SHAPES.items()
          for row in _shape(case, shape, "Sec IV-C, Fig 7")),
        *(row for case in SEC4_CASES for row in (
            near(("mc mean", case), "Sec IV-C", f"{case}: mean (Monte Carlo vs an independent "
                 "run)", SEC4_TABLE[case][4], tol=RUN, source=DERIVED, note=MC_NOTE,
                 quick=case == "baseline"),
            near(("mc cov", case), "Sec IV-C", f"{case}: CoV (Monte Carlo vs an independent run)",
                 SEC4_TABLE[case][5], tol=RUN, source=DERIVED, note=MC_NOTE,
                 quick=case == "baseline"))),
        *_trends("Monte Carlo", quick=False),
        claim("limit", "Sec IV-C", "the PDMP limit (p_max -> 0) is less accurate at larger alpha",
              quick=False),
    ],
    "bdp_readings": [
        near("literal", "Sec IV-C", "3 Mb/s x 13.66 ms in 512-byte segments", 10.0, tol=0.01,
             source=DERIVED, note="printed: 'the bandwidth-delay product is thus 5 segments'"),
        near("1024", "Sec IV-C", "13.66 ms = 5 segments of 1024 bytes at 3 Mb/s (ms)", 13.66,
             tol=0.01, source=DERIVED),
        *_readings(),
    ],
    "variability": [
        near("settles", "Sec IV", "bdp 5: the DDE settles on the zero-drift window", RUN,
             rel=1e-6, source=DERIVED),
        claim("no variability", "Sec IV", "bdp 5: the DDE has no variability, the chain (17) a "
              "CoV above 0.2", source=DERIVED,
              note="the variability of Sec IV is stochastic, not a limit cycle"),
        claim("oscillates", HOPF, "the DDE oscillates only beyond the Hopf bdp (~114): CoV < 1e-4 "
              "below, > 1e-3 above", source=DERIVED),
    ],
    "packet_exp_b": [
        *(row for s in (1, 2) for row in (
            near(("ratio", s), "Sec III-C, Figs 3, 5", f"Exp B set {s}, C = 6 Mb/s, ns-3: "
                 "throughput ratio rho1/rho2 (RTT 20 / 100 ms)", RUN, tol=RUN, note=PACKET_NOTE),
            near(("queue", s), "Sec III-C, Fig 3", f"Exp B set {s}: mean ORED queue [pkts] (Q* - "
                 "2, the packets outside the queue disc)", RUN, tol=RUN, note=PACKET_NOTE),
            near(("W1", s), "Sec III-C, Fig 3", f"Exp B set {s}: mean window of the 20-ms flow",
                 RUN, tol=RUN, note=PACKET_NOTE),
            near(("W2", s), "Sec III-C, Fig 3", f"Exp B set {s}: mean window of the 100-ms flow",
                 RUN, tol=RUN, note=PACKET_NOTE),
            equal(("drops", s), "Sec II", f"Exp B set {s}: packets dropped (congestion is "
                  "signalled by marks only; the 1000-packet buffer never fills)", 0,
                  note="ns-3 run"))),
        claim("closer", "Sec III-C, Fig 5", "ns-3: AIMD (set 2) shares closer to equally than "
              "SAIMD (set 1): 1 < rho1/rho2 (set 2) < rho1/rho2 (set 1)"),
    ],
    "packet_exp_a": [
        *(near(("ratio", s), "Sec III-C, Figs 1, 2, 4", f"Exp A set {s}, C = 6 Mb/s, ns-3: "
               "throughput ratio rho2/rho1 (assured 3 / 1.5 Mb/s, RTT 50 ms)", RUN, tol=RUN,
               note=PACKET_NOTE, quick=s in (1, 2), mismatch=C2_MISMATCH if s == 4 else "")
          for s in (1, 2, 3, 4)),
        *(claim(("profiles", s), "Sec II", f"Exp A set {s}, ns-3: each flow gets at least its "
                "assured rate", quick=s in (1, 2)) for s in (1, 2, 3, 4)),
        claim("AIMD above", "Sec III-C, Fig 4", "ns-3: AIMD (sets 2, 4) differentiates more "
              "(rho2/rho1 closer to 2) than SAIMD (sets 1, 3)", quick=False,
              mismatch="set 4 (AIMD, c2 = 0.2) falls below set 3 (SAIMD, c2 = 0.1): 1.380 "
              "against 1.525 (sets 1 and 2: 1.340 and 1.581). The c2 effect the paper saw in its "
              "own simulations (next row) outweighs the law's: AIMD is above SAIMD at equal c2 "
              "(set 2 over set 3, set 4 over set 1), not across c2. Found in the first full run"),
        claim("c2", "Sec III-C, Fig 4", "ns-3: a lower c2 gives larger differentiation, set 3 "
              "above set 1 and set 2 above set 4 (seen in the paper's simulations only: the "
              "fixed point depends on c2/c1 alone)", quick=False),
    ],
    "packet_window_distribution": [
        *(row for case in ("baseline", "c2=0.2", "alpha=-0.5") for row in (
            near((case, "mean"), "Sec IV-C, Figs 6, 7", f"{case}, ns-3: time-average window "
                 "against the PDMP mean of the same network", RUN, rel=0.1, note=WINDOW_NOTE,
                 quick=case == "baseline"),
            near((case, "CoV"), "Sec IV-C, Figs 6, 7", f"{case}, ns-3: coefficient of variation "
                 "of the window against the PDMP's", RUN, rel=0.25,
                 note="tolerance fixed before the run: the PDMP has no feedback delay and is the "
                 "p_max -> 0 limit", quick=case == "baseline"))),
        claim("c2 trend", "Sec IV-C, Fig 7", "ns-3: lowering c2 (0.5 -> 0.2) raises the mean "
              "window and lowers the CoV", quick=False),
        claim("alpha trend", "Sec IV-C, Fig 6", "ns-3: raising alpha (-1 -> -0.5) raises the "
              "mean window and the CoV", quick=False),
        claim("accuracy", "Sec IV-C", "the analysis is less accurate as alpha grows: the ns-3 "
              "mean is further from the PDMP's at alpha = -0.5 than at -1", quick=False,
              mismatch="|mean/PDMP - 1| is 0.029 at alpha = -1 and 0.009 at -0.5: the PDMP limit "
              "departs from the exact chain by 0.01 % at alpha = -1 and about 0.2 % at -0.5 "
              "(window_statistics), far below what the packet network adds (the feedback delay of "
              "a round trip, the ACK clock, the two packets outside the queue disc), whose sign "
              "and size do not follow alpha. The paper's statement is about the limit, which "
              "shows at alpha = 0 (1 %); alpha = 0 was not run (a mean window of 140, a queue of "
              "130 packets, the longest run). Found in the first full run"),
    ],
}
# fmt: on
