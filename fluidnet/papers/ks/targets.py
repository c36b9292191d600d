"""The targets of ``fluidnet reproduce ks``: every number and statement checked, per item.

Expected values are printed in the paper, derived here from its equations
(:mod:`~fluidnet.papers.ks.data`), or, where the reference is the maximiser of a convex program
solved with scipy on the same network in the run (Prop 1, Remark 3, Prop 6), ``RUN``.
"""

from __future__ import annotations

import math

import numpy as np
import sympy

from ...models.utility import X
from ..targets import DERIVED, RUN, claim, equal, identity, near
from .data import (
    BETA,
    CORE_PKTS_PER_S,
    EXP1_FLUID,
    EXP1_NS2,
    EXP1_PRINTED,
    EXP2_FLUID_ECN,
    EXP2_FLUID_LOSS,
    EXP2_PRINTED_RATIO,
    KELLY_KAPPAS,
    KELLY_KAPPAS_QUICK,
    LYAPUNOV_STARTS,
    TIME_UNIT,
    WINDOW_NU,
    closed_form_b,
    experiment1_rate_law,
    level_27,
    paper_window_forms,
    price_only_closed_form,
    short_flow_load,
    steady_levels,
)

# fmt: off
XI, XJ, LAM = closed_form_b()
STEADY_MARKS, STEADY = steady_levels(np.array(CORE_PKTS_PER_S))
P_STEADY_SHORT, STEADY_SHORT = steady_levels(np.array(CORE_PKTS_PER_S), short_flow_load())
#: Packet items: relative tolerance of the ns-3 marking levels against the fluid steady state,
#: per link (the queues' delays may raise them by up to 0.7 % and 2.7 %: rates are W/(d + q)).
LEVEL_TOL = (0.01, 0.03)
#: Experiment 1 in ns-3: relative tolerance of each user's rate against the fluid equilibrium
#: (user 0's round trip can grow by 38 ms of queueing over d = 40 ms: -16 % estimated).
EXP1_TOL = (0.25, 0.05, 0.10)
EXP1_NOTE = (
    "ns-3 run, seed 1, 40 s, second half; predicted before the run: the full 100-packet "
    "drop-front buffers add up to 12.8 and 25.6 ms to round trips of 20 and 40 ms, and the law "
    "sets the window W, so x = W/(d + q): user 0 about 16 % below the fluid rate, users 1 and 2 "
    "pinned by the capacities (within 3 % and 8 %)"
)
PACKET_NOTE = "ns-3 run, seed 1, 30 s, second half"
#: Packet rows whose criterion, fixed before the run, failed in it: documented mismatches
#: declared after the run, each with what was measured (see the README and CHANGELOG).
AFTER = "declared after the run, whose criterion fixed before it failed: "
EXP1_RTT_MISMATCH = AFTER + (
    "the correction assumes that every user loses the fraction (y - C)/y of the links of its "
    "path; measured, user 0 loses 0.71 % of its packets where the drop-front queues drop 0.84 % "
    "and 0.04 % (the packet at the head is not a user's in proportion to its rate), which raises "
    "its rate about as much as the longer round trip (66 ms for d = 40 ms) lowers it: the plain "
    "fluid equilibrium is met within 0.1 %"
)
EXP2_COLLAPSE = (
    "a -1/x user halves its window at every mark ((13), nu = 1), and the virtual queue, once "
    "full, marks its packets for as long as the windows overshoot: the windows collapse by "
    "several halvings within a round trip (from 80 to 3 packets), the link idles (63 % busy "
    "over 5-10 s of a 10-s run) and the peaks overflow the real 40-packet queue, where the fluid "
    "model marks a smooth 0.3 % of the packets"
)
EXP2_MISMATCH = AFTER + "predicted 5-10 % below the fluid rate; " + EXP2_COLLAPSE
EXP2_RATIO_MISMATCH = AFTER + (
    "the ECN users lose a third of the fluid rate to the collapses (" + EXP2_COLLAPSE + "), "
    "the loss-reacting users keep theirs (6.3 against the fluid 6.325 pkts per 0.02 s)"
)
SHORT_MISMATCH = AFTER + (
    "the short flows arrive as bursts of up to 10 packets (their initial window), the fluid "
    "model's load is constant; with them link 1's level falls by 1.6 % of C (fluid: 0.16 %), "
    "with 124 drops in 30 s and a shorter mean queue (45 against 61 packets); the mechanism is "
    "not isolated further"
)
PRICE_ONLY = price_only_closed_form()
#: Experiment 2's link (pkts per 0.02 s), random-loss fraction 5 %, marking level 0.99 C.
C2, A2 = CORE_PKTS_PER_S[1] * TIME_UNIT, 0.95
DEV_NLP = float(np.max(np.abs(np.array(EXP1_PRINTED) / np.array(EXP1_NS2) - 1)))
W, Q = sympy.symbols("W Q")
r_ = sympy.Symbol("r", positive=True)
TCP_FRIENDLY = (("0.5", 1.414, 5e-4), ("ln 2", 1.201, 5e-4), ("2/3", 1.2247, 5e-5))
SQRT_LAW = ((1.0, 0.05), (2.0, 0.05), (1.0, 0.01), (0.5, 0.2))
WINDOW_LAW = ((1.0, 2.0, 0.05), (2.0, 1.5, 0.01), (0.5, 3.0, 0.1))
KKT = "KKT root computed independently: 2.75918, 3.24082, 0.095212"
SQRT_NOTE = ("printed 1/(sqrt(beta d) sqrt(1-alpha)) is garbled; Sec IV's "
             "1/(sqrt(beta) d sqrt(1-alpha)) is used")


def _levels(name: str, level: float) -> list:
    return [
        near(("level", name), "Sec V-A", f"10 {name} users, C = 100, beta = 0.5: largest "
             "loss-free level", level, rel=1e-9, note="log: N x = C~ + N/beta (printed); -1/x: "
             "from (27)"),
        near(("load", name), "Prop 3", f"{name}: the load at that level is exactly C (27 is "
             "tight)", 100.0, rel=1e-9, source=DERIVED),
    ]


def _critical(kind: str, closed: float, note: str, omega: float) -> list:
    return [
        near(("kbT", kind), "delayed extension", f"{kind} delay: critical kappa beta T by "
             "critical_value", closed, rel=1e-10, source=DERIVED, note=note),
        claim(("roots", kind), "delayed extension", f"{kind} delay: roots in Re >= 0 just below "
              "/ above", source=DERIVED),
        near(("omega", kind), "delayed extension", f"{kind} delay: crossing frequency", omega,
             rel=1e-9, source=DERIVED, note="full: omega = kappa beta; price: omega = "
             "sqrt(b^2 - a^2)"),
    ]


TARGETS = {
    "utilities": [
        *(identity(("law", r), "eqs (9)/(10)", f"Experiment 1 user {r}: kappa c (w/beta_r - "
                   "beta f/U'(x)) is the printed law", experiment1_rate_law(r, nu),
                   note="random-loss form x - z = x((1 - alpha) + alpha sum p), from z = alpha "
                   "y and (2)")
          for r, nu in (("0", sympy.Rational(1, 2)), ("1", None), ("2", sympy.Integer(1)))),
        identity("mm1b", "Sec II", "M/M/1/B loss, K -> oo with B -> K B, at rho = 1 + r: "
                 "(u - C)^+/u", r_ / (1 + r_)),
        # (14): ack +1/W, nack -0.5 W; with x = W/d acks arrive at rate x and nacks at x f, d = 2
        identity("tcp law", "eq (14)", "window law (13) with nu = kappa = 1, w/beta_j = 1/d^2, "
                 "beta = 0.5 is TCP's", (W / 2) / W - sympy.Rational(1, 2) * W * (W / 2) * Q),
        near("ln 2", "eq (16)", "beta = ln 2 from (1/2)^N ~ 1 - N ln 2", 0.6931, tol=5e-5),
        identity("hurley", "Sec III-A", "TCP utility log(x/(1+x)) of Hurley et al. ~ -1/x for "
                 "large x (x U -> -1)", -1),
        identity("decrease", "eq (38)", "general utility log(x/(1+x)): decrease term 1/U'(x)",
                 X * (1 + X), source=DERIVED),
        *(near(("K", label), "Sec IV", f"TCP-friendly constant K = 1/sqrt(beta) for beta = "
               f"{label}", K, tol=tol, source=DERIVED,
               note="from (18): TCP's throughput is 1/(sqrt(beta) d sqrt(1 - alpha))")
          for label, K, tol in TCP_FRIENDLY),
    ],
    "allocations": [
        *(near((case, who), "Sec IV", f"{case}: x_{who}", e, tol=tol)
          for case, printed, tol in (("log vs -1/x", (4.0, 2.0), 0.05),
                                     ("-1/x^2 vs -1/x", (2.76, 3.24), 0.005))
          for who, e in zip(("i <= 50", "j > 50"), printed, strict=True)),
        near("multiplier a", "Sec IV", "log vs -1/x: multiplier 1/x_i = 1/x_j^2", 0.25,
             tol=1e-12, source=DERIVED),
        *(near(("kkt", name), "Sec IV", f"-1/x^2 vs -1/x: {name} (KKT root)", e, rel=1e-9,
               source=DERIVED, note=KKT)
          for name, e in (("x_i", XI), ("x_j", XJ), ("multiplier", LAM))),
        near("x_i", "Sec IV", "-1/x^2 vs -1/x: x_i", 2.75918, tol=5e-6, source=DERIVED),
        near("x_j", "Sec IV", "-1/x^2 vs -1/x: x_j", 3.24082, tol=5e-6, source=DERIVED),
        claim("compete", "Sec IV", "log users out-compete TCP (-1/x); -1/x^2 users do not"),
        near("full", "Sec IV", "the link is full (sum = 300)", 300.0, tol=1e-9, source=DERIVED),
    ],
    "experiment1": [
        *(near(("nlp", i), "Sec VI-A", f"NLP (6)-(8): x_{i}", e, tol=0.005,
               note="printed 'x_3' is x_2; 'Proposition 5' in the text means (6)-(8)")
          for i, e in enumerate(EXP1_PRINTED)),
        *(near(("multiplier", i), "Sec VI-A", f"NLP (6)-(8): multiplier of link {i + 1}", e,
               tol=5e-8, source=DERIVED, note="KKT multipliers of (6)-(8), computed "
               "independently of fluidnet")
          for i, e in enumerate((0.0071585, 0.0002638))),
        *(near(("(5)", i), "Prop 1/Cor 1", f"beta = 0.5: model equilibrium x_{i} = maximiser of "
               "(5)", RUN, rel=1e-9, source=DERIVED,
               note="m.equilibrium() against scipy's maximisation of (5)") for i in range(3)),
        *(near(("beta 0.5", i), "Sec VI-A", f"beta = 0.5 fluid equilibrium x_{i}", e, tol=5e-4,
               source=DERIVED, note="maximum of (5) with p = (u - C)^+/u, computed "
               "independently with scipy")
          for i, e in enumerate((16.712, 141.773, 61.454))),
        claim("Cor 1", "Cor 1", "the equilibrium tends to the NLP as beta grows, like 1/beta",
              source=DERIVED),
        *(near(("beta 5000", i), "Sec VI-A", f"beta = 5000 fluid equilibrium x_{i} against the "
               "printed NLP", e, tol=0.005) for i, e in enumerate(EXP1_PRINTED)),
        claim("ns-2", "Sec VI-A", "fluid (beta = 0.5) and ns-2 rates agree as closely as the NLP "
              "and ns-2 do", f"<= {DEV_NLP:.4f} (NLP vs ns-2)",
              note="the ns-2 averages (16.81, 140.83, 60.34) are a packet simulation, not a "
              "target"),
        claim("Fig 2", "Fig 2", "fluid windows settle at x d of the beta = 0.5 equilibrium",
              source=DERIVED),
    ],
    "tcp": [
        *(near(("sqrt", d, loss), "eq (18)", f"square-root law, d = {d:g}, 1 - alpha = {loss:g}",
               1 / (math.sqrt(BETA) * d * math.sqrt(loss)), rel=1e-9, note=SQRT_NOTE)
          for d, loss in SQRT_LAW),
        near("6.3246", "eq (18)", "x* at beta = 0.5, d = 1, 1 - alpha = 0.05", 6.3246, tol=5e-5,
             source=DERIVED, note="(18) evaluated by hand"),
        near("(19)", "eq (19)", "no random loss (printed 'alpha = 0' means alpha = 1), C = 100, "
             "d = 1", 0.5 * (100.0 + math.sqrt(100.0**2 + 4 / BETA)), rel=1e-9),
        near("100.02", "eq (19)", "x* = 100.02", 100.02, tol=5e-3, source=DERIVED,
             note="(19) by hand"),
        near("threshold", "Sec III-A", "threshold 1 - alpha > 1/(beta d^2 C^2)", 2e-4, tol=1e-15,
             source=DERIVED),
        claim("losses", "Sec III-A", "random losses 10x above the threshold cut the rate below "
              "C/3; 10x below it they leave it at C"),
        *(near(("(21)", nu), "Sec IV", f"window law (21), nu = {nu:g}: x = (nu w/(beta_j beta))"
               "^(1/(nu+1)) / (d (1-alpha)^(1/(nu+1)))",
               (nu / BETA) ** (1 / (nu + 1)) / (d * loss ** (1 / (nu + 1))), rel=1e-9,
               source=DERIVED)
          for nu, d, loss in WINDOW_LAW),
        claim("sqrt(1 - alpha)", "Sec IV", "TCP (nu = 1) throughput ~ 1/sqrt(1 - alpha)",
              source=DERIVED),
    ],
    "window": [
        *(row for r, nu, label in (("1", None, "log"), ("2", WINDOW_NU, f"-1/x^{WINDOW_NU}"))
          for row in (
              identity(("(24)/(25)", r), "eqs (22)-(25)", f"{label}: (22)/(23) with x = W/d is "
                       "(24)/(25)", paper_window_forms(r, nu)[0]),
              identity(("(9)/(10)", r), "eqs (12)/(13), (9)/(10)", f"{label}: window law with "
                       "d in the increments is (9)/(10)", paper_window_forms(r, nu)[1]))),
        *(near(("(26)", i), "Remark 3 (26)", f"RTT-ignoring windows, beta = 0.5: x_{i} maximises "
               "(26)", RUN, rel=1e-9, source=DERIVED) for i in range(3)),
        *(near(("oo", i), "Remark 3 (26)", f"beta -> oo with the weights of (26): x_{i}", e,
               tol=5e-4, source=DERIVED,
               note="NLP (6)-(8) with the weights of (26), solved independently")
          for i, e in enumerate((8.623, 147.627, 69.502))),
        claim("(12)/(13)", "Sec VI-A", "the printed NLP rates are not those of the RTT-ignoring "
              "law: Experiment 1 used (12)/(13)", source=DERIVED),
    ],
    "lyapunov": [
        row for k in range(1, len(LYAPUNOV_STARTS) + 1) for row in (
            claim(("rises", k), "Prop 2", f"start {k}: V(x(t)) non-decreasing (largest drop)",
                  source=DERIVED, quick=k <= 2),
            claim(("below", k), "Prop 2", f"start {k}: V stays below its maximum V(x*)",
                  source=DERIVED, quick=k <= 2),
            near(("reaches", k), "Prop 2", f"start {k}: x(t_end) reaches the maximiser of (3)",
                 0.0, tol=1e-4, source=DERIVED, quick=False))
    ],
    "marking_levels": [
        *_levels("log", 80.0),
        *_levels("-1/x", 98.0),
        near(("exact", "log"), "Sec V-A", "10 log users, C = 100: loss-free level", 80.0,
             tol=1e-9, source=DERIVED, note="N x = C~ + N/beta at load C: C~ = C - N/beta"),
        near(("exact", "-1/x"), "Sec V-A", "10 -1/x users, C = 100: loss-free level", 98.0,
             tol=1e-9, source=DERIVED, note="N x = C~ + N/beta at load C: C~ = C - N^2/(beta C)"),
        *(near(("(27)", ll), "Prop 3 (27)", f"Experiment 3, link {ll + 1}: level from (27)",
               level_27(CORE_PKTS_PER_S[ll], 100, 100), rel=1e-9, source=DERIVED)
          for ll in range(2)),
        claim("loads", "Prop 3", "Experiment 3 network at the (27) levels: every load <= C"),
        near("Prop 5", "Prop 5 (39)", "level with mean disturbance 10: C - (N/beta) C/(C - xi)",
             100.0 - 20.0 * 100.0 / 90.0, rel=1e-9, source=DERIVED,
             note="(39) prints p at sum x_j; in (38) p's argument includes xi, = C at the bound"),
        near("C - xi", "Prop 5", "(38) at that level: controlled load = C - xi", 90.0, rel=1e-9,
             source=DERIVED),
    ],
    "prop4": [
        near("reconstructed", "Prop 4 (35)", "reconstructed level C - xi^ - sum w/(beta beta_i)",
             80.0, tol=1e-9, source=DERIVED),
        near("printed", "Prop 4 (35)", "printed condition at equality (1/beta restored)", 88.89,
             tol=5e-3, source=DERIVED),
        near("Prop 5", "Prop 4 (35)", "printed condition (1/beta restored) = Prop 5's condition "
             "with constant xi", 100.0 - 10.0 * 100.0 / (1.0 * (100.0 - 10.0)), rel=1e-9,
             source=DERIVED),
        near("constant xi", "Prop 4", "printed level, constant xi = xi^: total load = C", 100.0,
             rel=1e-9, source=DERIVED),
        near("peak", "Prop 4", "printed level, square-wave xi: peak total load", 108.9, tol=0.05,
             source=DERIVED, note="the limit C~ + sum w/beta + xi^ = 108.89 is reached when the "
             "pauses are long"),
        claim("<= C", "Prop 4", "reconstructed level, square-wave xi: total load <= C",
              source=DERIVED),
        claim("Lemma 1", "Lemma 1", "x(t) <= y(t) along the run (largest x - y)", source=DERIVED),
    ],
    "experiment2": [
        near("loss", "Sec VI-B", "loss reaction: 1/x^2 = beta (1 - alpha)",
             1 / math.sqrt(BETA * (1 - A2)), rel=1e-9, source=DERIVED,
             note="closed form; 6.325 per user"),
        near("ecn", "Sec VI-B", "ECN reaction: 1/x^2 = beta alpha p(3x; 0.99 C)", RUN, rel=1e-9,
             source=DERIVED, note="the equilibrium equation solved by brentq; 25.863 per user"),
        near("ratio", "Sec VI-B", "ECN/loss throughput ratio", 4.09, tol=5e-3, source=DERIVED,
             note="25.863 / 6.325 from the two equilibrium equations, solved independently"),
        near("five", "Sec VI-B (Fig 3)", "ECN/loss throughput ratio, 'about five times'", 5.0,
             tol=0.5,
             mismatch="the paper's ratio is an ns-2 packet measurement (window halving, "
             "timeouts, a 40-packet virtual queue) with unstated w, beta and packet size; the "
             "fluid model with unit weights gives 4.09 and with TCP's w/beta_j = 1/d^2 about 8"),
        claim("loss-free", "Prop 3 (27)", "0.99 C is loss-free: 3 sqrt(C/(beta (C - C~))) <= C",
              source=DERIVED),
        claim("below C", "Sec V-C", "with ECN the total rate stays below C (no congestion loss)",
              source=DERIVED),
        near("(42)", "Prop 6 (42)", "ECN equilibrium maximises (42) (weights w/(beta_r alpha))",
             RUN, rel=1e-9, source=DERIVED, note="(42) prints (x - C_l)^+; the marks are at C~_l"),
    ],
    "experiment3": [
        *(near(("steady", ll), "Sec V-D", f"steady marking level of link {ll + 1} (load = gamma "
               "C)", STEADY[ll], rel=1e-9, source=DERIVED) for ll in range(2)),
        *(near(("level", ll), "Figs 4/5", f"steady marking level of link {ll + 1} [pkt/s]", e,
               tol=5e-3, source=DERIVED, note="steady state of the adaptive law (Sec V-D), "
               "solved independently of fluidnet")
          for ll, e in enumerate((7672.85, 3701.51))),
        claim("converge", "Figs 4/5", "the adaptive levels converge (end of run within 0.1 % of "
              "steady)"),
        claim("projection", "Sec V-D", "projection: 0 <= C~_l <= gamma C_l throughout",
              source=DERIVED),
        claim("no loss", "Sec VI-C", "no loss after the transient: (y - C)^+/y < 1e-3 in the "
              "second half"),
        claim("conservative", "Prop 3", "the (27) levels lie below the adaptive ones "
              "(conservative)", source=DERIVED),
        claim("units", "Sec V-D", "rates in pkts per 0.02 s: no feasible level, ParameterError",
              source=DERIVED),
    ],
    "delay": [
        near("2.170", "delayed extension", "price-only closed form kappa beta T_c", 2.170,
             tol=5e-4, source=DERIVED, note="computed independently of fluidnet for p* = 1/6"),
        *_critical("full", math.pi / 2, "closed form pi/2", RUN),
        *_critical("price", PRICE_ONLY, "closed form arccos(-a/b)/sqrt(b^2-a^2)", RUN),
        *(claim(("run", kind, g), "delayed extension", f"{kind} delay, kappa beta T = {g}: "
                f"nonlinear run {'settles' if settles else 'oscillates (limit cycle)'}",
                source=DERIVED)
          for kind, g, settles in (("full", 1.50, True), ("full", 1.65, False),
                                   ("price", 2.0, True), ("price", 2.4, False))),
        near("period", "delayed extension", "full delay: limit-cycle period near the crossing, "
             "2 pi/omega = 4 T", 4.0, tol=0.02, source=DERIVED,
             note="at kappa beta T = 1.65, 5 % past the boundary, the nonlinear period is the "
             "linear one at the crossing to 0.5 %"),
        *(claim(("boundary", kind), "delayed extension", f"{kind} delay: kappa_c T_c constant "
                "along the (kappa, T) boundary", source=DERIVED) for kind in ("full", "price")),
    ],
    "bifurcation": [
        near("hopf (9)", "delayed extension", "law (9), every feedback delayed: Hopf at kappa "
             "beta T", math.pi / 2, tol=1e-9, source=DERIVED),
        equal("degenerate", "delayed extension", "law (9): the Hopf point is degenerate (linear "
              "law above capacity, c1 = 0)", "degenerate", source=DERIVED, note="Re c1 = {}"),
        claim("kink", "delayed extension", "law (9) at kappa beta T = 1.7: the cycle crosses "
              "y = C (the penalty's kink)", source=DERIVED),
        near("hopf kelly", "delayed extension", "Kelly primal, price (y/c)^B: Hopf at kappa "
             "(B + 1) T", math.pi / 2, tol=1e-9, source=DERIVED),
        equal("supercritical", "delayed extension", "Kelly primal: the Hopf bifurcation is "
              "supercritical", "supercritical", source=DERIVED, note="l1 = {}"),
        claim("stable start", "delayed extension", "Kelly primal: the branch starts with stable "
              "cycles", source=DERIVED),
        *(near(("cycle", kappa), "delayed extension", f"Kelly primal at kappa = {kappa}: cycle "
               "peak-to-peak, collocation / simulation", 1.0, tol=1e-3, source=DERIVED,
               quick=kappa in KELLY_KAPPAS_QUICK) for kappa in KELLY_KAPPAS),
        # the quick run's short branch (16 orbits) does not reach the fold
        claim("fold", "delayed extension", "Kelly primal: the stable branch ends at a fold of "
              "cycles (the simulation blows up beyond it)", source=DERIVED, quick=False),
    ],
    "onset_map": [
        near("hopf curve", "delayed extension", "Kelly primal: Hopf curve continued in (kappa, "
             "T), largest |kappa (B + 1) T - pi/2|", 0.0, tol=1e-9, source=DERIVED,
             note="closed form: the linearization is x' = -kappa (B + 1) x(t - T) at w = c = 1; "
             "{}"),
        near("fold line", "delayed extension", "Kelly primal: fold of cycles continued in (kappa, "
             "T), largest relative deviation of kappa T from its value at T = 1", 0.0, tol=1e-6,
             source=DERIVED, note="time scaling t -> t/T: the law depends on kappa T only, so the "
             "fold (the end of the stable cycles) is the line kappa T = {} ({}, {} points)"),
        near("fold kT", "delayed extension", "Kelly primal: fold of cycles at T = 1, kappa T, "
             "solved as a fold vs detected between the branch's orbits", RUN, rel=0.01,
             source=DERIVED, note="second method: the fold located on the one-parameter branch "
             "of cycles (kappa = {}), coarse by the branch's step"),
        claim("fold sim", "delayed extension", "Kelly primal at T = 1.5: a simulation settles on "
              "a cycle at 0.97 x the fold's kappa and blows up at 1.03 x", source=DERIVED),
    ],
    "proved_delay_region": [
        claim("proved", "delayed extension", "at least 95 % of the plane 0.2 <= kappa <= 4, "
              "0.2 <= T <= 3 proved stable or unstable in interval arithmetic (depth 7)",
              source=DERIVED, quick=False),
        equal("contradictions", "delayed extension", "proved cells contradicting "
              "kappa beta T < pi/2", 0, source=DERIVED,
              note="closed form of the delayed primal law (Johari & Tan 2001), p + y p' = 1"),
        claim("counts", "delayed extension", "every proved-unstable cell has 2 roots in the "
              "right half-plane (the pair +-j kappa beta crossed)", source=DERIVED),
        claim("rechecked", "delayed extension", "the saved certificate re-checks from its "
              "file, with no more evaluations than finding it took", source=DERIVED, note="{}"),
    ],
    "packet_experiment1": [
        *(near(("rate", i), "Sec VI-A (Fig 2)", f"ns-3: mean sending rate of user {i} [pkts per "
               "0.02 s] against the fluid equilibrium of (5), beta = 0.5", e, rel=EXP1_TOL[i],
               source=DERIVED, note=EXP1_NOTE, quick=False)
          for i, e in enumerate(EXP1_FLUID)),
        *(near(("rtt", i), "Sec III (12)/(13)", f"ns-3: mean sending rate of user {i} against "
               "the equilibrium of the packet law: (5) with the weights w d/RTT (log) and w "
               "(d/RTT)^(nu+1) (-1/x^nu), RTT the measured mean round trip", RUN, rel=0.10,
               source=DERIVED, note="second method: the window law's equilibrium when the "
               "window W is spread over the measured round trip (x = W/RTT), solved by the fluid "
               "model (utility_primal)", quick=False,
               mismatch=EXP1_RTT_MISMATCH if i == 0 else "")
          for i in range(3)),
        claim("busy", "Sec VI-A", "ns-3: both core links busy, utilisation >= 0.97 over the "
              "second half (the fluid equilibrium overloads both)", source=DERIVED,
              quick=False),
        claim("transient", "Fig 2", "ns-3: after a very short initial transient the rates stay "
              "near their averages: every user's mean rate over [T/4, T/2] within 10 % of its "
              "mean over [T/2, T]", quick=False),
    ],
    "packet_experiment2": [
        near("ecn", "Sec VI-B (Fig 3)", "ns-3, reaction to marks only: mean sending rate per "
             "user [pkts per 0.02 s] against the fluid rate", EXP2_FLUID_ECN, rel=0.15,
             source=DERIVED, quick=False, note=PACKET_NOTE, mismatch=EXP2_MISMATCH),
        claim("loss", "Sec VI-B (Fig 3)", f"ns-3, reaction to losses: mean sending rate per user "
              f"at most the fluid rate {EXP2_FLUID_LOSS:.3f} pkts per 0.02 s (+5 %)",
              source=DERIVED, quick=False, note="timeouts (at least 0.2 s) and the randomness of "
              "the sawtooth (a mean window below the fluid one, as Mathis et al.'s 1.22/sqrt(p) "
              "against the fluid 1.41/sqrt(p)) only take rate away"),
        near("five", "Sec VI-B (Fig 3)", "ns-3: ECN/loss throughput ratio, 'about five times'",
             EXP2_PRINTED_RATIO, tol=1.0, quick=False, note=PACKET_NOTE,
             mismatch=EXP2_RATIO_MISMATCH),
        claim("above fluid", "Sec VI-B", "ns-3: the ECN/loss ratio is at least the fluid 4.09",
              source=DERIVED, quick=False, mismatch=EXP2_RATIO_MISMATCH),
        claim("no congestion loss", "Sec VI-B", "ns-3, marks at 0.99 C: the queue drops fewer "
              "than 0.1 % of the packets in the second half (the losses are the random ones)",
              quick=False, mismatch=AFTER + "2.3 % of the packets dropped at the queue; "
              + EXP2_COLLAPSE),
    ],
    "packet_experiment3": [
        *(near(("level", ll), f"Fig {4 + ll}", f"ns-3: mean marking level C~_{ll + 1} over the "
               "second half [pkt/s] against the fluid steady state", STEADY[ll],
               rel=LEVEL_TOL[ll], source=DERIVED, quick=False, note=PACKET_NOTE + "; each ns-3 "
               "user stands for the paper's 50 users of its class and utility (same fluid "
               "equilibrium); queueing delays may raise the level by up to 0.7 % / 2.7 %")
          for ll in range(2)),
        claim("converge", "Figs 4/5", "ns-3: C~_1 and C~_2 converge quickly: the mean over the "
              "last quarter of the run within 1 % of C_l of the mean over the third", quick=False),
        claim("no drops", "Sec VI-C", "ns-3: no user sees a packet drop after a short initial "
              "transient (none in the second half)", quick=False),
        claim("order", "Fig 6", "ns-3: in every utility class 1 (two links, twice the round trip) "
              "gets less than class 3 and class 3 less than class 2; log users more than -1/x "
              "users in every class", source=DERIVED, note="the fluid steady state: log 28.45 < "
              "38.16 < 111.88, -1/x 5.33 < 6.18 < 10.58 pkts per 0.02 s"),
    ],
    "packet_short_flows": [
        *(near(("level", ll), "Fig 8 (substitute)", f"ns-3 with short flows: mean C~_{ll + 1} "
               "over the second half [pkt/s] against the fluid steady state with their mean "
               "load", STEADY_SHORT[ll], rel=LEVEL_TOL[ll], source=DERIVED, quick=False,
               note=PACKET_NOTE + f"; short flows {short_flow_load()[ll]:.0f} pkts/s on each "
               "link (Poisson, one per 0.02 s per route, Pareto mean 10 truncated at 20, shape "
               "1.5), unresponsive in the fluid model ((31), Prop 5)",
               mismatch=SHORT_MISMATCH if ll == 0 else "")
          for ll in range(2)),
        claim("converge", "Fig 8", "ns-3: with the short flows the levels converge: the mean over "
              "the last quarter within 1 % of C_l of the mean over the third", quick=False),
        claim("marks", "Prop 5 (38)", "ns-3: the short flows' load is paid by the long users: the "
              f"marked fraction of link 2 rises (fluid {STEADY_MARKS[1]:.4f} -> "
              f"{P_STEADY_SHORT[1]:.4f})", source=DERIVED, quick=False),
        claim("complete", "Sec VI-D", "ns-3: every short flow that arrives before the last 2 s "
              "completes", source=DERIVED),
    ],
}
# fmt: on
