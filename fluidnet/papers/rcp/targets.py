"""The RCP paper's targets: every number and statement ``fluidnet reproduce rcp`` checks.

One entry per item (in the order they run), one row per target; the expected values are the
paper's printed numbers or values derived in :mod:`~fluidnet.papers.rcp.data` independently of
fluidnet.
"""

from __future__ import annotations

import numpy as np
import sympy

from ...symbolic.symbols import s
from ..targets import DERIVED, RUN, claim, equal, identity, near
from .data import (
    BODE_FREQS,
    EXACT_ALPHA_RANGE,
    EXACT_BETA_MAX,
    FIG34,
    FIG34_POLE,
    HOPF_ALPHA,
    INVARIANCE,
    LINEAR_VERDICTS,
    NOTE_ONSET,
    OPERATING_ROOT,
    PAPER_ONSET,
    QUICK_INVARIANCE,
    QUICK_REGION,
    T_UPDATE,
    boundary_beta,
    invariance_label,
    omega_c,
    omega_m,
    omega_z,
)

# fmt: off
alpha, beta, N, d0 = sympy.symbols("alpha beta N d0", real=True)
FLOW_NOTE = ("ns-3 run: Fig 2's 10 Mb/s, RTPD 50 ms, Pareto mean 25, 40 flows/s (the printed 400 "
             "would be a load of 8), RCP (0.1, 1.0), 200 s, seed 1")
FCT_NOTE = ("ns-3 run: 20 Mb/s, RTPD 0.1 s, load 0.9, Pareto mean 25 (Fig 20 scaled to a fifth "
            "of its smallest capacity), arrivals for 35 s, 50 s in all, seed 0")
RCP_QUEUE = ("eq (2) settles where alpha (C - y) = beta q/d0: a queue of q packets costs "
             "(beta/alpha) q/(C d0) of the link, and with the paper's beta/alpha = 10 the one or "
             "two packets that paced flows queue at random cost 10 % of a 15 Mb/s link "
             "(bandwidth-delay product 206 packets) and 35 % of Fig 2's 10 Mb/s, 50-ms link "
             "(62); at 150 Mb/s, 1 %. The fluid model's queue is 0 at equilibrium")
REALISED = ("the 'realised load' of the arrivals (packets offered / (C x 35 s)) is 0.994: a "
            "Pareto(1.2) sample of about 3000 flows is dominated by its largest, so eq (3) at "
            "that load (1.12 s and 198 s) is no reference; the paper's overlays use the nominal "
            "load (next rows). Found in the first full run")
BIG_FLOWS = ("RCP's flows over 500 packets take 6.7 s, TCP's 4.3 and XCP's 7.2 (11 flows each, "
             "the same sizes): RCP's mean queue is 2 % of C RTPD, as the paper prints, and by "
             "eq (2) with beta/alpha = 10 that holds R about 20 % below the fair share: "
             "long RCP flows are slowed, while TCP's long flows take more than their share in "
             "congestion avoidance at the short flows' expense (TCP's short flows: 2.3 x "
             "RCP's). Found in the first full run")
FACTOR_NOTE = ("ns-3 run; the printed factor is stated for Fig 20's capacities (0.1-9.6 Gb/s); "
               "tolerance fixed before the run: 50 %; unfinished flows count with the time they "
               "ran (a lower bound)")
EXACT = "exact boundary of eq (15): alpha = w sin w, beta = w^2 cos w, solved for w"
ONE_STEP = 0.1 + 1e-9  # one step of the paper's 0.1 grid
B_MISREAD = (
    "the paper's -0.696 is 1.5% (Padé) and 2.2% (exact delay) from the crossing of G1(jw) "
    "evaluated directly with numpy; most likely read off the plot"
)


def _fig34(kind: str, label: str) -> list:
    """Points A and B, P, the RHP pole and the stable interval at beta = 0.3, one form of G1."""
    f = FIG34[kind]
    rows = [
        near((kind, "A"), "Fig 34", f"point A, G1(jw) on the negative real axis ({label})",
             f["A"], tol=1e-5, source=DERIVED),
        near((kind, "B"), "Fig 34", f"point B ({label})", f["B"], tol=1e-5, source=DERIVED),
    ]
    if kind == "pade":
        rows += [
            near("A printed", "Fig 34", "point A as printed (-2.91), Padé G1 as the paper drew it",
                 -2.91, tol=0.01, note="one unit of the printed last digit"),
            near("B printed", "Fig 34", "point B as printed (-0.696), Padé G1 as the paper drew it",
                 -0.696, tol=0.001, mismatch=B_MISREAD),
        ]
    rows += [
        equal((kind, "P"), "Fig 34", f"P, RHP poles of G1 at beta = 0.3 ({label})", 2),
        near((kind, "pole"), "Fig 34", f"RHP pole of G1, lambda = s d0 ({label})",
             abs(FIG34_POLE), tol=1e-4, source=DERIVED, note="pole {}"),
        near((kind, "lo"), "Fig 34", f"stable alpha lower end, Nyquist ({label})",
             f["alpha"][0], tol=1e-5, source=DERIVED),
        near((kind, "hi"), "Fig 34", f"stable alpha upper end, Nyquist ({label})",
             f["alpha"][1], tol=1e-5, source=DERIVED),
    ]
    if kind == "pade":
        rows += [
            near("lo printed", "Sec IV-D", "stable alpha lower end as printed (0.3436)", 0.3436,
                 rel=0.01 / 2.91,
                 note="0.3436 = 1/2.91: relative precision of the printed crossing -2.91"),
            near("hi printed", "Sec IV-D", "stable alpha upper end as printed (1.436)", 1.436,
                 rel=0.001 / 0.696,
                 mismatch="1.436 = 1/0.696 inherits the misread crossing B; G1(jw) evaluated "
                 "directly gives 1.4157 (Padé) and 1.4061 (exact delay)"),
        ]
    return rows


def _appendix(al: float, be: float, ref: str) -> list:
    """Figs 47/48: eqs (12)-(14) against the Bode response and fn.margins of ``G``."""
    wz, wc = omega_z(al, be), omega_c(al, be)
    rows = [near((ref, "w_z"), ref, "gain crossover w_z d0, eq (12)", wz, tol=1e-9,
                 source=DERIVED)]
    if wc is None:
        rows.append(claim((ref, "no w_c"), ref,
                          "w_c does not exist: the phase stays below -pi for w > 0"))
    else:
        wm = omega_m(al, be)
        rows += [
            claim((ref, "w_c exists"), ref, "w_c exists"),
            near((ref, "w_c"), ref, "phase crossover w_c d0, eq (13)", wc, tol=1e-8,
                 source=DERIVED),
            near((ref, "w_m"), ref, "phase maximum w_m d0 (App. III)", wm,
                 tol=2 * (BODE_FREQS[1] / BODE_FREQS[0] - 1) * wm, source=DERIVED,
                 note="tolerance: two steps of the frequency grid"),
            claim((ref, "w_z < w_c"), ref, "w_z < w_c: stable by criterion (11)-(12)"),
        ]
    return rows


def _margins(al: float, be: float, ref: str) -> list:
    wc = omega_c(al, be)
    rows = [near((ref, "margins w_z"), ref, "fn.margins gain crossover w_z d0", omega_z(al, be),
                 tol=1e-6, source=DERIVED)]
    if wc is None:
        rows.append(claim((ref, "margins no w_c"), ref,
                          "fn.margins finds no phase crossover below pi/d0"))
    else:
        rows.append(near((ref, "margins w_c"), ref, "fn.margins first phase crossover w_c d0",
                         wc, tol=1e-6, source=DERIVED))
    return rows


def _portrait(ref: str, converges: bool) -> list:
    if not converges:
        return [claim((ref, "diverges"), ref, "not every trajectory converges (unstable point)")]
    return [
        claim((ref, "converge"), ref, "all six trajectories converge"),
        near((ref, "gamma"), ref, "final gamma of the six trajectories = 1/N", 0.1, tol=1e-4,
             note="largest |gamma - 0.1| at the end of the run"),
        near((ref, "q"), ref, "final queue / (C d0)", 0.0, tol=1e-4),
    ]


def _invariance(name: str, x: float) -> list:
    label = invariance_label(name, x)
    ratio = T_UPDATE / x
    quick = (name, x) in QUICK_INVARIANCE
    rows = [near((name, x), "Fig 44", f"grid points that change with {name} = {label}", 0, tol=0,
                 note="{}", quick=quick,
                 # decided from the parameters, not the result: with T/d0 >= 1 a 5x-overloaded
                 # start makes the factor 1 + (T/d0) alpha (C - y)/C of law (2) negative for
                 # alpha > 1/4, so the unclamped fluid rate turns negative; the paper's program
                 # kept R positive in a way it does not describe
                 mismatch=f"T/d0 = {ratio:g} >= 1: the overloaded starts drive the unclamped "
                 "rate negative; the paper does not say how its program kept R positive"
                 if name == "d0" and ratio >= 1.0 else "")]
    if name == "d0" and ratio >= 1.0:
        rows.append(near((name, x, "T/d0 = 0.05"), "Fig 44",
                         f"grid points that change with d0 = {label} s and T = {0.05 * x:g} s "
                         "(T/d0 = 0.05)", 0, tol=0, source=DERIVED,
                         note="only alpha, beta and T/d0 enter the dimensionless form of (4)-(7)",
                         quick=quick))
    return rows


HOPF_BETA, HOPF_OMEGA = boundary_beta(HOPF_ALPHA)

TARGETS = {
    "linearization": [
        near("R*", "Sec IV-B", "equilibrium rate R* = C/N [pkts/s]", 18750.0 / 10, rel=1e-12),
        near("q*", "Sec IV-B", "equilibrium queue q* = 0 [pkts]", 0.0, tol=0.0),
        identity("df/dR_d", "eq (8)", "df/dR_d = -alpha/d0", -alpha / d0),
        identity("df/dq", "eq (8)", "df/dq = -beta/(N d0^2)", -beta / (N * d0**2),
                 note="App. II prints -beta R_T (q/C - d)/(C (q/C + d)^3), whose sign inside "
                 "gives +beta/(N d0^2); the Sec IV-B value -beta/(N d0^2) is the correct "
                 "derivative"),
        identity("dg/dR_d", "eq (8)", "dg/dR_d = N", N),
        identity("df/dR_T", "eq (8)", "df/dR_T = 0", 0,
                 note="App. II prints -alpha/d - N alpha R_d/(C d) - beta q/(d^2 C); the "
                 "correct +alpha/d - ... vanishes at the equilibrium, as the paper states"),
        claim("no T", "eq (8)", "the update interval T drops out of the linearization"),
        identity("G", "eq (9)", "loop gain cut at R equals G(s)",
                 sympy.exp(-s * d0) * (alpha * s * d0 + beta) / (s * d0) ** 2),
        near("G(N, C)", "eq (9)", "max relative change of G(jw) when N, C change", 0.0,
             tol=1e-12, source=DERIVED),
        near("G(d0)", "eq (9)", "max relative change of G(lambda/d0) when d0 changes", 0.0,
             tol=1e-12, source=DERIVED),
    ],
    "bode_region": [
        *(row for b, (lo, hi) in EXACT_ALPHA_RANGE.items() for row in (
            near(("lo", b), "Fig 33", f"Bode-stable alpha, lower end at beta={b}", lo, tol=1e-4,
                 source=DERIVED, note=EXACT),
            near(("hi", b), "Fig 33", f"Bode-stable alpha, upper end at beta={b}", hi, tol=1e-4,
                 source=DERIVED))),
        near("beta top", "Fig 33", "largest stable beta (derived top of the lobe)",
             EXACT_BETA_MAX[1], tol=1e-4, source=DERIVED),
        near("alpha top", "Fig 33", "alpha at the top of the lobe", EXACT_BETA_MAX[0], tol=1e-3,
             source=DERIVED),
        near("beta 0.55", "Sec IV-D", "no stabilizing alpha for beta larger than about 0.55",
             0.55, tol=0.005,
             note="printed 'about 0.55'; tolerance half a unit of the printed digit"),
        near("sup alpha", "Fig 33", "sup of stable alpha (beta -> 0) = pi/2", np.pi / 2, tol=1e-3,
             source=DERIVED),
        claim("alpha 1.6", "Sec IV-E", "no stable region for alpha > 1.6"),
        claim("eq (14)", "eq (14)", "every Bode-stable grid point has alpha/beta > 1"),
        *(equal(("bode", p), ref, f"Bode procedure: {p} linearly stable", want)
          for p, (want, ref) in LINEAR_VERDICTS.items()),
        *(equal(("roots", p), ref, f"characteristic roots: {p} linearly stable", want)
          for p, (want, ref) in LINEAR_VERDICTS.items()),
        near("disagree", "Fig 36",
             "grid points where the Bode procedure and the characteristic roots disagree", 0,
             tol=0, source=DERIVED,
             note="expected 0: the Bode test (12)-(13) and the D-subdivision boundary of eq (15) "
             "bound the same region"),
        near("boundary", "Fig 33", "max distance of fn.stability_boundary to the exact curve",
             0.0, tol=1e-6, source=DERIVED),
    ],
    "nyquist": [
        *_fig34("exact", "exact delay"),
        *_fig34("pade", "Padé [2/2]"),
        claim("beta 0.6", "Fig 35", "beta = 0.6: no alpha makes Z = N + P zero"),
        claim("beta 0.6 pade", "Fig 35", "beta = 0.6, Padé G1: no stabilizing alpha"),
        near("fig36", "Fig 36", "max difference of Nyquist and Bode interval ends", 0.0,
             tol=1e-6, source=DERIVED,
             note="printed: 'they match well'; both are the same boundary"),
    ],
    "processor_sharing": [
        *(near(("ps", ref, L), ref, f"FCT_PS({L:g} pkts), eq (3) [s]", want, tol=5e-4,
               source=DERIVED)
          for ref, L, want in (("Fig 7", 2000, 0.2167), ("Fig 7", 1e4, 0.4833),
                               ("Fig 8", 2000, 3.467), ("Fig 8", 6000, 5.6))),
        *(near(("ss", ref, L), ref, f"slow-start FCT({L:g} pkts) [s]", want,
               tol=5e-3 if want > 10 else 5e-4, source=DERIVED)
          for ref, L, want in (("Fig 7", 230, 0.836), ("Fig 7", 2000, 1.153),
                               ("Fig 8", 1000, 16.8))),
        near("ss L=1", "Sec III-B.1", "slow start equals the lower bound for L = 1 [s]",
             1.5 * 0.1 + 1 / (2.4e9 / 8000), tol=1e-12, source=DERIVED),
        near("C RTPD", "Sec III-B.2", "C RTPD of Fig 10 [pkts] (mean sizes 30 ... 30 000 = C RTPD)",
             30000, tol=1e-9),
        near("fig10 big", "Fig 10", "PS AFCT, flows >= 7000 pkts [s] (any mean)", 0.85,
             tol=5e-4, source=DERIVED),
        near("fig10 spread", "Fig 10", "PS AFCT spread over the means, flows >= 7000 pkts [s]",
             0.0, tol=1e-9, source=DERIVED),
        near("fig10 small 30", "Fig 10", "PS AFCT, flows < 7000 pkts, mean 30 [s]", 0.1504,
             tol=5e-5, source=DERIVED),
        near("fig10 small 30000", "Fig 10", "PS AFCT, flows < 7000 pkts, mean 30 000 [s]", 0.248,
             tol=5e-4, source=DERIVED),
        claim("99.5%", "Sec III-C.1 footnote 9", "at least 99.5% of flows have size < 500 pkts",
              note="the paper's 99.5% is a sample statistic of its runs"),
        *(row for name, w0, w1 in (("< 500", 0.1624, 0.1501), (">= 500", 2.55, 0.175))
          for row in (
              near(("fig20", name, 0), "Fig 20", f"PS AFCT, flows {name} pkts, C = 100 Mb/s [s]",
                   w0, tol=5e-5 if w0 < 1 else 5e-3, source=DERIVED),
              near(("fig20", name, 1), "Fig 20", f"PS AFCT, flows {name} pkts, C = 9.6 Gb/s [s]",
                   w1, tol=5e-5 if w1 < 0.16 else 5e-4, source=DERIVED))),
        near(("fig21", "< 500"), "Fig 21", "PS AFCT - 1.5 RTPD, flows < 500 pkts [s]", 0.0082,
             tol=5e-5, source=DERIVED),
        near(("fig21", ">= 500"), "Fig 21", "PS AFCT - 1.5 RTPD, flows >= 500 pkts [s]", 1.6,
             tol=5e-4, source=DERIVED),
        near(("fig22", "<= 500"), "Fig 22", "PS AFCT - 1.5 RTPD_i, flows <= 500 pkts [s]",
             0.0019, tol=5e-5, source=DERIVED),
        near(("fig22", "> 500"), "Fig 22", "PS AFCT - 1.5 RTPD_i, flows > 500 pkts [s]", 0.375,
             tol=5e-4, source=DERIVED),
        *(near(("E[N]", ref), ref, "E[N] under PS by Little's law", want, tol=0.05,
               source=DERIVED)
          for ref, want in (("Fig 1", 1359.0), ("Fig 7", 1629.0), ("Figs 12-14", 1204.0),
                            ("Fig 5", 68.0), ("Fig 17", 30.3), ("Fig 46", 76.0))),
        near("fig15", "Fig 15", "lower bound on E[N] by Little's law", 6750.9, tol=0.05,
             source=DERIVED),
        near("B", "Fig 3", "group B rate, 40 s < t < 100 s [Mb/s]", 20.0, tol=1e-9,
             source=DERIVED),
        near("A", "Fig 3", "group A rate, 40 s < t < 100 s [Mb/s]", 40.0, tol=1e-9,
             source=DERIVED),
        near("A alone", "Fig 3", "group A rate without group B [Mb/s]", 50.0, tol=1e-9,
             source=DERIVED),
        near("C/R", "Sec II-C.1", "C/R = N1 + theta N2 with theta = R2/R", 8 + 4 * 20.0 / 40.0,
             tol=1e-9),
    ],
    "bode_plots": [
        *_appendix(0.2, 0.4, "Fig 47"),
        *_appendix(0.4, 0.2, "Fig 48"),
        *_margins(0.2, 0.4, "Fig 47"),
        *_margins(0.4, 0.2, "Fig 48"),
    ],
    "nonlinear_region": [
        *(near(("onset", b), "Figs 37-40",
               f"onset alpha* at beta = {b} (phase-plane rule, fluid model)", PAPER_ONSET[b],
               tol=ONE_STEP, note="tolerance: one step of the paper's 0.1 grid")
          if b in PAPER_ONSET else
          near(("onset", b), "Fig 44", f"onset alpha* at beta = {b}", NOTE_ONSET[b],
               tol=ONE_STEP, source=DERIVED,
               note="independent Euler integration of (4)-(7); tolerance one grid step",
               quick=b in QUICK_REGION["betas"])
          for b in sorted({**PAPER_ONSET, **NOTE_ONSET})),
        claim("lobe inside", "Fig 44", "every linearly stable grid point is nonlinearly stable"),
        claim("larger", "Fig 44", "the nonlinear region is larger than the linear one"),
    ],
    "phase_portraits": [
        *_portrait("Fig 41", True),
        *_portrait("Fig 42", True),
        *_portrait("Fig 43", False),
        claim("oscillates", "Fig 43", "from (0.01, 2 C d0) the trajectory keeps oscillating"),
        near("cycle R", "Fig 43", "limit cycle: max |N R/C - 1|", 0.27, tol=0.01, source=DERIVED,
             note="independent Euler integration of (4)-(7) (2 digits)"),
        near("cycle q", "Fig 43", "limit cycle: max q/(C d0)", 0.28, tol=0.01, source=DERIVED,
             note="independent Euler integration of (4)-(7) (2 digits)"),
        claim("q returns to 0", "Fig 43", "the queue keeps returning to 0 on the cycle"),
    ],
    "operating_point": [
        near("root", "eq (15)", "rightmost characteristic root, Re(s) d0", OPERATING_ROOT.real,
             tol=1e-8, source=DERIVED,
             note=f"scipy Newton on eq (15): lambda = {OPERATING_ROOT:.6f}"),
        claim("unstable", "Sec IV", "(0.1, 1.0) is linearly unstable"),
        claim("converge", "Sec II-C.3", "(0.1, 1.0): all six trajectories of the fluid model "
              "converge"),
        claim("grows", "Sec IV-E", "eq (8) from a 5% queue perturbation: oscillation grows"),
        claim("negative", "Sec IV-E", "eq (8) drives the queue negative"),
    ],
    "flow_step": [
        *(near(("R/C", t), "Sec IV-E", f"(0.1, 1.0): R/C at t = {t:g} s with {n} flows", 1 / n,
               tol=1e-3 / n, source=DERIVED, note="equilibrium C/N(t): 0.2, 0.1, 0.2")
          for t, n in ((39.0, 5), (99.0, 10), (159.0, 5))),
        *(near(("onset", b), f"Fig {37 + k}", f"beta = {b}: onset of sustained oscillation in "
               "alpha", PAPER_ONSET[b], tol=ONE_STEP,
               note="fluid analogue of the packet simulations; one grid step")
          for k, b in enumerate((0.1, 0.4, 0.6))),
    ],
    "heterogeneous": [
        *(near(("gamma", t), "Fig 19", f"gamma = R/C at t = {t:g} s ({n} flows)", 1 / n,
               tol=1e-3 / n, source=DERIVED, note="C/R(t) converges to N(t) (caption)")
          for t, n in ((39.0, 20), (99.0, 40), (139.0, 20))),
        *(near(("util", lo), "Sec III-B.6", f"mean bottleneck utilization, {lo:g}-{hi:g} s", 1.0,
               tol=0.01, note="printed 'close to 100%'; we require 99%")
          for lo, hi in ((20.0, 40.0), (80.0, 100.0), (120.0, 140.0))),
    ],
    "invariance": [row for name, xs in INVARIANCE.items() for x in xs
                   for row in _invariance(name, x)],
    "bifurcation": [
        near("beta_c", "Sec IV-D", f"Hopf point in beta at alpha = {HOPF_ALPHA} (D-subdivision "
             f"w sin w = {HOPF_ALPHA}, beta = w^2 cos w)", HOPF_BETA, tol=1e-8, source=DERIVED),
        near("omega", "Sec IV-D", f"crossing frequency omega d0 at alpha = {HOPF_ALPHA}",
             HOPF_OMEGA, tol=1e-8, source=DERIVED),
        claim("speed", "Sec IV-D", "beta increases across the boundary destabilizing "
              "(d Re lambda / d beta > 0)", source=DERIVED),
        claim("nonsmooth", "eq (7)", "the smooth Hopf theory does not apply: the equilibrium "
              "queue q* = 0 is on the projection's boundary", source=DERIVED),
        near("curve", "Sec IV-D", "continued Hopf curve (44 points) on alpha = w sin w, "
             "beta = w^2 cos w", 0.0, tol=1e-8, source=DERIVED,
             note="largest deviation along the curve", quick=False),
        claim("refused", "Fig 43", "the limit cycle at (1.4, 0.8) touches q = 0: collocation of "
              "the smooth equations refuses it", source=DERIVED),
    ],
    "proved_region": [
        claim("proved", "Fig 33", "at least 95 % of the plane 0 <= alpha <= 2, 0 <= beta <= 1 "
              "proved stable or unstable in interval arithmetic (quadtree depth 7)",
              source=DERIVED, quick=False),
        equal("contradictions", "Fig 33", "proved cells that contradict the exact region",
              0, source=DERIVED, note="exact region 0 < beta < w^2 cos w, w sin w = alpha, "
              "0 < alpha < pi/2 (scipy, independently of fluidnet)"),
        claim("counts", "eq (15)", "every proved-unstable cell has 2 roots in the right "
              "half-plane (a pair crossed the Hopf curve)", source=DERIVED),
        equal("points", "Secs IV-E/F, App. III", "the paper's sample points lying in proved "
              "cells with the paper's verdict", len(LINEAR_VERDICTS)),
        claim("rechecked", "Fig 33", "the saved certificate re-checks from its file, with no "
              "more evaluations than finding it took", source=DERIVED, note="{}"),
    ],
    "packet_fct": [
        claim("within", "Figs 11-18", "RCP's mean FCT lies within 30 % of processor sharing's "
              "(eq (3)) in every size bin of >= 10 flows (at least 3 such bins)",
              note="ns-3 run (one 10 Mb/s bottleneck, RTT 0.1 s, Pareto flows of mean 25 pkts, "
              "load 0.5, seed 1); the paper's ns-2 curves cannot be matched, its claim can"),
        near("worst", "Figs 11-18", "largest |mean FCT / PS FCT - 1| over those bins", 0.0,
             tol=0.3, note="ns-3 run; the criterion of the claim above as a number"),
        equal("unfinished", "Sec III", "flows left unfinished (arrivals stop at 2/3 of the run)",
              0, note="ns-3 run"),
    ],
    "packet_flow_count": [
        claim("corr", "Sec II-C, Fig 2", "C/R(t) is a (smoothing) estimate of the number of "
              "active flows: Pearson correlation of N(t) and C/R(t), both averaged over 0.5 s, "
              "at least 0.7", note=FLOW_NOTE),
        near("estimate", "Sec II-C, Fig 2", "E[C/R] against the flows the router sees, E[N] - "
             "1.5 lambda RTPD (a flow sends nothing during its handshake and while its last "
             "packet is in flight)", RUN, rel=0.3, note="ns-3 run, {}; tolerance fixed before "
             "the run", mismatch="E[C/R] = 11.3 against E[N] - 3 = 7.1, but within 11 % of E[N] "
             "= 10.1 itself: the paper's statement holds, our correction does not. It assumed "
             "the link full (R = C/N_sending); here R is held below the fair share by the "
             "queue term of eq (2) (see the Little row) and settles near C/N. Found in the first "
             "full run"),
        near("little", "Sec III-A, eq (3)", "E[N(t)] against processor sharing's lambda "
             "E[FCT_PS] (Little's law with eq (3))", RUN, rel=0.3,
             note="ns-3 run at realised load {}; the 30 % of the RCP FCT item",
             mismatch="E[N] = 10.1 against 5.0 (7.5 at the nominal load 0.82: the Pareto(1.2) "
             "sample of 200 s carries 0.66 of it): RCP's flows take 1.4 (under 10 packets) to "
             "3.5 (over 300) times their PS time, because R stays below the fair share: "
             + RCP_QUEUE + ". Found in the first full run"),
        claim("sweep", "Sec II-C, Fig 5", "R(t)/C ranges over more than a factor of 10 (1 % to "
              "99 % quantiles) as the flows come and go", note="from R(0) = 0.05 C"),
    ],
    "packet_fct_protocols": [
        near(("rcp/ps", "<500"), "Sec III-B.1, Fig 20", "RCP, flows < 500 pkts: mean FCT against "
             "PS (eq (3), realised load)", RUN, rel=0.2, note=FCT_NOTE, mismatch=REALISED),
        near(("rcp/ps", ">=500"), "Sec III-B.1, Fig 20", "RCP, flows >= 500 pkts: mean FCT "
             "against PS", RUN, rel=0.5, note=FCT_NOTE + "; few flows (0.3 % of them), "
             "heavy-tailed: 50 %", mismatch=REALISED, quick=False),
        near(("rcp/ps nominal", "<500"), "Sec III-B.1, Fig 20", "RCP, flows < 500 pkts: mean FCT "
             "against PS at the nominal load 0.9 (the paper's overlay)", RUN, rel=0.2,
             note=FCT_NOTE + "; row added after the first full run (REALISED above)"),
        near(("rcp/ps nominal", ">=500"), "Sec III-B.1, Fig 20", "RCP, flows >= 500 pkts: mean "
             "FCT against PS at the nominal load 0.9", RUN, rel=0.5,
             note=FCT_NOTE + "; row added after the first full run", quick=False),
        claim(("lowest", "<500"), "Sec III-B.1, Fig 20", "flows < 500 pkts: RCP's mean FCT "
              "below TCP's and XCP's ('always lower')"),
        claim(("lowest", ">=500"), "Sec III-B.1, Fig 20", "flows >= 500 pkts: RCP's mean FCT "
              "below TCP's and XCP's", quick=False, mismatch=BIG_FLOWS),
        near(("tcp/rcp", "<500"), "Sec III-B.1", "flows < 500 pkts: TCP's mean FCT over RCP's "
             "(printed: 'twice as long')", 2.0, rel=0.5, note=FACTOR_NOTE, quick=False),
        near(("xcp/rcp", "<500"), "Sec III-B.1", "flows < 500 pkts: XCP's mean FCT over RCP's "
             "(printed: 'three times longer')", 3.0, rel=0.5, note=FACTOR_NOTE, quick=False),
        near(("tcp/rcp", ">=500"), "Sec III-B.1", "flows >= 500 pkts: TCP's over RCP's (printed: "
             "'six times longer')", 6.0, rel=0.5, note=FACTOR_NOTE, quick=False,
             mismatch=BIG_FLOWS),
        near(("xcp/rcp", ">=500"), "Sec III-B.1", "flows >= 500 pkts: XCP's over RCP's (printed: "
             "'30 times longer')", 30.0, rel=0.5, note=FACTOR_NOTE, quick=False,
             mismatch=BIG_FLOWS),
        near("rcp queue", "Sec III-B.1, Fig 20", "RCP's mean queue over C x RTPD (printed: 2 %)",
             0.02, tol=0.02, note="ns-3 run"),
        claim("queues", "Sec III-B.1, Fig 20", "mean queues: XCP's very small, below RCP's; "
              "RCP's below TCP's", quick=False),
        equal("rcp unfinished", "Sec III", "RCP flows unfinished 15 s after the last arrival", 0,
              note="ns-3 run", quick=False),
    ],
    "packet_convergence": [
        *(near(("gamma", n, lo), "Sec III-B.6, Fig 19", f"RCP, {n} flows ({lo:g} s on): R/C over "
               "the last 5 s of the phase against 1/N", RUN, rel=0.1,
               note="ns-3 run at 15 Mb/s, RTPD 20-200 ms; tolerance fixed before the run")
          for lo, n in ((0.0, 20), (15.0, 40), (30.0, 20))),
        *(claim(("util", lo), "Sec III-B.6, Fig 19", f"RCP, phase from {lo:g} s: utilisation "
                "over 95 % after its first 5 s ('close to 100 %')", note="ns-3 run",
                mismatch=f"{u}: {RCP_QUEUE} (and in the second phase R is still converging "
                "from the arrival of 20 flows 5 s after it). Found in the first full run")
          for lo, u in ((0.0, "0.925"), (15.0, "0.827"), (30.0, "0.921"))),
        *(near(("queue term", lo), "eq (2)", f"RCP, last 5 s of the phase from {lo:g} s: "
               "utilisation against the equilibrium of eq (2) with the measured queue, 1 - "
               "(beta/alpha) E[q]/(C E[d]) (E[d] the flows' mean RTT)", RUN, rel=0.03,
               source=DERIVED, note="ns-3 run; row added after the first full run, to test "
               "the explanation of the utilisation mismatch: {}")
          for lo in (0.0, 15.0, 30.0)),
        claim("faster", "Sec I, Sec II", "after 20 flows arrive (15 s), the new RCP flows reach "
              "90 % of the fair share C/40 sooner than XCP's (XCP starts them small and grows "
              "them over round trips)", quick=False, note="ns-3 runs, goodput averaged over "
              "0.5 s"),
    ],
}
# fmt: on
