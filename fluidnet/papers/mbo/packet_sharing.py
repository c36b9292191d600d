"""Sec III in ns-3: two generalized TCPs with assured rates at an ORED queue (the simulation halves
of Figs 1-5).

The paper's ns-2 runs are rebuilt with fluidnet's C++ components: the generalized TCP (1)-(2)
(``fluidnet::TcpGeneralized``, every ACK echoing its packet's mark), the edge token bucket that
tags a flow's packets *in* its profile (rate ``R_i``, bucket 20 packets) and ORED, which marks only
*out* packets with the RED profile of the average queue (thresholds 20/100 packets, RED's weight
0.002 per packet, ``p_max`` of the parameter set). Segments of 512 bytes (IP packets of 564),
one ACK per segment, a buffer of 1000 packets (never full: marks only).

The fluid prediction is the fixed point (8)-(9) of the *same* scenario, in packets: capacity
``C / (8 * 566)`` packets/s (the wire's 2 bytes of framing), assured rates ``R_i / (8 * 564)``
(the meter counts IP bytes), the flows' round-trip times, and the ORED thresholds raised by the
two packets the queue disc does not count (one in the device queue, one on the wire: the model's
queue is everything at the bottleneck). The run's mean queue is compared with ``Q* - 2``.

Criteria, fixed before the runs: the paper's own accuracy claim, theory within 5 % of
simulation (Sec III-C), widened by two batch-means standard errors of the run (10 blocks of the
tail), for the throughput ratio, the mean windows and the mean queue; no packet dropped.
Scaled: one capacity (6 Mb/s) of the paper's 4.5-12 Mb/s sweep, one seed, 300 s (Exp B) and 200
s (Exp A) of which the first fifth is left out as the start-up (the fluid DDE of the same
scenario settles within it). The cost is in the README.
"""

from __future__ import annotations

import numpy as np

from ...packet import require_ns3
from ..batch_means import BatchMean, batch_mean, batch_ratio
from ..registry import Context, figure_pair
from ..targets import Value
from . import PAPER
from .data import EXP_A_RATES, EXP_A_RTT, EXP_B_RATES, EXP_B_RTTS, PARAMETER_SETS, THRESHOLDS_PKTS

#: IP packet size: the paper's 512-byte segments plus 52 bytes of IP and TCP headers.
PACKET_SIZE = 564
#: Packets at the bottleneck outside the queue disc while it is busy (device queue, wire).
OUTSIDE = 2
#: ORED's averaging weight per packet (ns-2 RED's default; the paper does not give one).
WEIGHT = 0.002
#: The buffer (packets): larger than any queue that forms, so only marks signal congestion.
BUFFER = 1000
#: The capacity of the runs (Mb/s).
CAPACITY = 6.0
#: The paper's accuracy claim, theory within 5 % of simulation (Sec III-C).
ACCURACY = 0.05
#: Tolerance = ACCURACY |expected| + SE_FACTOR batch-means standard errors.
SE_FACTOR = 2.0


def sharing_scenario(set_id: int, C: float, rates, rtts):
    """The ns-3 scenario of parameter set ``set_id`` at ``C`` Mb/s: one flow per assured rate
    (Mb/s) and round-trip time (s)."""
    import fluidnet as fn

    alpha, beta, c1, c2, p_max = PARAMETER_SETS[set_id]
    law = fn.packet.Transport("generalized", alpha=alpha, beta=beta, c1=c1, c2=c2)
    lo, hi = THRESHOLDS_PKTS
    return fn.packet.Dumbbell(
        link=fn.packet.Link(
            C * 1e6,
            buffer=BUFFER,
            aqm=fn.packet.ORED(min_th=lo, max_th=hi, p_max=p_max, weight=WEIGHT),
        ),
        flows=[
            fn.packet.Flows(1, rtt=rtt, transport=law, assured_rate=r * 1e6)
            for r, rtt in zip(rates, rtts, strict=True)
        ],
        packet_size=PACKET_SIZE,
        notes=(
            f"Misra, Baras & Ott Sec III, parameter set {set_id}: (alpha, beta, c1, c2) = "
            f"({alpha:g}, {beta:g}, {c1:g}, {c2:g}), p_max = {p_max:g}",
            "512-byte segments (564-byte IP packets), token bucket of 20 packets per flow",
        ),
    )


def mapped_fixed_point(set_id: int, C: float, rates, rtts) -> dict[str, np.ndarray | float]:
    """The fixed point (8)-(9) of :func:`sharing_scenario`, in packets (see the module)."""
    from ...models.generalized_tcp import assured_service_fixed_point

    alpha, beta, c1, c2, p_max = PARAMETER_SETS[set_id]
    lo, hi = THRESHOLDS_PKTS
    fp = assured_service_fixed_point(
        C=C * 1e6 / (8.0 * (PACKET_SIZE + 2)),
        R=[r * 1e6 / (8.0 * PACKET_SIZE) for r in rates],
        RTT=list(rtts),
        M=[1.0] * len(rates),
        alpha=alpha,
        beta=beta,
        c1=c1,
        c2=c2,
        min_th=lo + OUTSIDE,
        max_th=hi + OUTSIDE,
        p_max=p_max,
    )
    return {
        "queue": fp.queue - OUTSIDE,
        "windows": fp.windows,
        "rates": fp.throughputs,
        "ratio": fp.throughputs[0] / fp.throughputs[1],
    }


def measured(run, after: float) -> dict[str, BatchMean]:
    """Ratio of the two flows' goodputs, their goodputs and windows, the queue: tail means with
    batch-means standard errors."""
    t, rate = run.time, run.flow_rate()
    return {
        "ratio": batch_ratio(t, rate[:, 0], rate[:, 1], after=after),
        "rho1": batch_mean(t, rate[:, 0], after=after),
        "rho2": batch_mean(t, rate[:, 1], after=after),
        "W1": batch_mean(t, run.cwnd[:, 0], after=after),
        "W2": batch_mean(t, run.cwnd[:, 1], after=after),
        "queue": batch_mean(t, run.queue[:, 0], after=after),
    }


def check(m: BatchMean, expected: float) -> Value:
    """The measured mean against ``expected`` within the paper's 5 % plus two standard errors."""
    tol = ACCURACY * abs(expected) + SE_FACTOR * m.se
    return Value(m.mean, expected=float(expected), tol=float(tol), note=m.describe())


def _runs(sets, rates, rtts, t_end):
    import fluidnet as fn

    require_ns3()
    scenarios = [sharing_scenario(s, CAPACITY, rates, rtts) for s in sets]
    return [r for (r,) in fn.packet.simulate_many(scenarios, t_end, seeds=(1,))]


def _rows(sets, runs, fps, after) -> list[dict]:
    rows = []
    for s, run, fp in zip(sets, runs, fps, strict=True):
        m = measured(run, after)
        rows.append(
            {
                "set": s,
                "C [Mb/s]": CAPACITY,
                "ratio ns-3": m["ratio"].mean,
                "ratio se": m["ratio"].se,
                "ratio fixed point": fp["ratio"],
                "rho1 ns-3 [pkts/s]": m["rho1"].mean,
                "rho2 ns-3 [pkts/s]": m["rho2"].mean,
                "rho1 fixed point": fp["rates"][0],
                "rho2 fixed point": fp["rates"][1],
                "W1 ns-3": m["W1"].mean,
                "W2 ns-3": m["W2"].mean,
                "W1 fixed point": fp["windows"][0],
                "W2 fixed point": fp["windows"][1],
                "queue ns-3": m["queue"].mean,
                "queue fixed point (disc)": fp["queue"],
                "marks": float(run.marks[-1, 0]),
                "drops": float(run.drops[-1, 0]),
                "utilisation": run.utilisation(after=after),
                "cpu [s]": run.cpu_time,
            }
        )
    return rows


def _plot(ctx: Context, name: str, sets, runs, fps, after, title: str, ratio_label: str) -> None:
    fig, (ax_w, ax_r) = ctx.new_figure(1, 2, figsize=(10.0, 3.8))
    first, fp = runs[0], fps[0]
    colours = ("C0", "C1")
    for k in range(2):
        ax_w.plot(first.time, first.cwnd[:, k], lw=0.6, color=colours[k], label=f"flow {k + 1}")
        ax_w.axhline(fp["windows"][k], color=colours[k], ls="--", lw=1.2)
    ax_w.axvline(after, color="0.5", ls=":", lw=0.8)
    ax_w.set_xlabel("time [s]")
    ax_w.set_ylabel("window [packets]")
    ax_w.set_title(f"set {sets[0]} in ns-3 (dashed: fixed point)")
    ax_w.legend(fontsize=8)
    xs = np.arange(len(sets))
    ms = [measured(r, after)["ratio"] for r in runs]
    ax_r.errorbar(xs, [m.mean for m in ms], yerr=[2 * m.se for m in ms], fmt="o", label="ns-3")
    ax_r.plot(xs, [f["ratio"] for f in fps], "k_", ms=18, mew=2, label="fixed point (8)-(9)")
    ax_r.set_xticks(xs, [f"set {s}" for s in sets])
    ax_r.set_ylabel(ratio_label)
    ax_r.set_title(title)
    ax_r.legend(fontsize=8)
    ctx.figure(name, fig)


@PAPER.item(
    title="Exp B in ns-3: generalized TCP over ORED against the fixed point (Figs 3 and 5)",
    quick={"t_end": 40.0, "after": 10.0},
    pairs=[
        figure_pair(
            "packet_exp_b",
            "fig3_exp_b_set1",
            "Experiment B (RTT 20 and 100 ms, both flows assured 1.5 Mb/s) at 6 Mb/s: ns-3 "
            "windows and throughput ratio against the fixed point (8)-(9)",
            fluid_item="exp_b",
        )
    ],
)
def packet_exp_b(ctx: Context, t_end: float = 300.0, after: float = 60.0) -> dict:
    """Parameter sets 1 (SAIMD) and 2 (AIMD) at 6 Mb/s, one ``t_end`` run each (seed 1), the
    tail from ``after``."""
    sets = (1, 2)
    runs = _runs(sets, EXP_B_RATES, EXP_B_RTTS, t_end)
    fps = [mapped_fixed_point(s, CAPACITY, EXP_B_RATES, EXP_B_RTTS) for s in sets]
    ctx.table("packet_exp_b", _rows(sets, runs, fps, after))
    _plot(ctx, "packet_exp_b", sets, runs, fps, after, "Exp B, C = 6 Mb/s", "rho1 / rho2")
    values: dict = {}
    ratios = {}
    for s, run, fp in zip(sets, runs, fps, strict=True):
        m = measured(run, after)
        ratios[s] = m["ratio"].mean
        values["ratio", s] = check(m["ratio"], fp["ratio"])
        values["queue", s] = check(m["queue"], fp["queue"])
        values["W1", s] = check(m["W1"], fp["windows"][0])
        values["W2", s] = check(m["W2"], fp["windows"][1])
        values["drops", s] = int(run.drops[-1, 0])
    values["closer"] = Value(
        bool(1 < ratios[2] < ratios[1]),
        shown=f"rho1/rho2 = {ratios[1]:.3f} (set 1), {ratios[2]:.3f} (set 2)",
    )
    return values


@PAPER.item(
    title="Exp A in ns-3: throughput ratio of flows assured 1.5 and 3 Mb/s (Figs 1, 2 and 4)",
    quick={"sets": (1, 2), "t_end": 40.0, "after": 10.0},
    pairs=[
        figure_pair(
            "packet_exp_a",
            "fig4_exp_a_ratio",
            "Experiment A (assured 1.5 and 3 Mb/s, RTT 50 ms) at 6 Mb/s: the ns-3 ratio "
            "rho2/rho1 of the four parameter sets against the fixed point",
            fluid_item="exp_a",
        )
    ],
)
def packet_exp_a(
    ctx: Context, sets: tuple = (1, 2, 3, 4), t_end: float = 200.0, after: float = 40.0
) -> dict:
    """The parameter sets ``sets`` at 6 Mb/s, one ``t_end`` run each (seed 1), the tail from
    ``after``; the ratio is the 3-Mb/s flow's goodput over the 1.5-Mb/s flow's."""
    rates = EXP_A_RATES[::-1]  # flow 1 the 3-Mb/s profile: the ratio rho2/rho1 of the paper
    rtts = (EXP_A_RTT, EXP_A_RTT)
    runs = _runs(sets, rates, rtts, t_end)
    fps = [mapped_fixed_point(s, CAPACITY, rates, rtts) for s in sets]
    ctx.table("packet_exp_a", _rows(sets, runs, fps, after))
    _plot(ctx, "packet_exp_a", sets, runs, fps, after, "Exp A, C = 6 Mb/s", "rho2 / rho1")
    values: dict = {}
    ratio = {}
    for s, run, fp in zip(sets, runs, fps, strict=True):
        m = measured(run, after)
        ratio[s] = m["ratio"].mean
        values["ratio", s] = check(m["ratio"], fp["ratio"])
        assured = [r * 1e6 / (8.0 * PACKET_SIZE) for r in rates]
        values["profiles", s] = Value(
            bool(m["rho1"].mean >= assured[0] and m["rho2"].mean >= assured[1]),
            shown=f"{m['rho1'].mean:.0f} >= {assured[0]:.0f}, {m['rho2'].mean:.0f} >= "
            f"{assured[1]:.0f} pkts/s",
        )
    if set(sets) == {1, 2, 3, 4}:
        shown = ", ".join(f"set {s}: {ratio[s]:.3f}" for s in sets)
        values["AIMD above"] = Value(bool(min(ratio[2], ratio[4]) > max(ratio[1], ratio[3])), shown)
        values["c2"] = Value(bool(ratio[3] > ratio[1] and ratio[2] > ratio[4]), shown)
    return values
