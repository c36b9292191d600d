"""Tables of Chapters 5 that one bottleneck regenerates, in ns-3: Table 5.5.1's SBRM column
(weighted proportional fairness on one link) and Tables 5.6.1/5.6.2 (TCP/RM against NewReno-ECN).

``packet_steady_state`` (Table 5.5.1, with Table 4.3.2's weights)
    Twelve SBRM sources (Zimmermann's Direct Window Update (4.2.3), ``fluidnet::TcpSbrm``,
    kappa-bar 0.2) on one link marked by SBRM (5.4.1) with Table 6.6.1's ``gamma = 0.006`` and
    ``b0 = 50``: four sources of each willingness to pay, in the ratios 1 : 2 : 4 of Table 4.3.2
    (100, 200, 400 packets/s on 12 000 packets/s there; here 25, 50, 100 on 3000 packets/s, the
    same ``sum(w)/c``), half of each class with a round-trip delay of 20 ms and half with 80 ms.
    Table 5.5.1 predicts ``x_n* = w_n / sum(w) c`` whatever the delay, a marking probability
    ``p* = sum(w)/c = 0.233`` and a queue ``b* = b0 - ln(1 - p*)/gamma = 94.3`` packets. Against
    it: NewReno over RED (the ``reno_red`` mapping: 50/550 packets, ``p_max`` 0.1, weight 1e-4)
    with the same delays, whose rates Table 5.5.1 puts inversely proportional to the round-trip
    times. 60 s, the tail from 20 s.
``packet_tcp_rm`` (Tables 5.6.1, 5.6.2)
    The Ptolemy setup of Sec 5.6.4: ten greedy flows on each of three paths with minimum RTTs of
    20, 36 and 56 ms, one bottleneck of 50 Mb/s with 1500-byte packets (4167 packets/s: the
    capacity of Fig 5.6.2 is lost, derived from the tables' own mean queueing delays, 30 packets
    in 7.2 ms, 28.8 in 6.9, 35.8 in 8.6, 95.8 in 23.0), 300-packet buffers; SBRM with ``b0 = 30``
    and 99 % marking at 300 packets (``gamma = ln(100)/270``), or RED 30/90, ``p_max`` 0.2,
    weight 0.02, marking; TCP/RM (5.6.1)/(5.6.2) with kappa-bar 0.1 and ``w = 20``
    (``fluidnet::TcpRm``) or NewReno-ECN. 30 s of the paper's 60, the tail from 5 s.

Criteria, fixed before the runs: Table 5.5.1's rate ratios (2 and 4 between the classes, 1
between the delays) within 15 %, ``p*`` within 10 %, ``b*`` within 15 %; Reno's ratio between the
delays within 30 % of the ratio of the round-trip times with the measured queue. Tables
5.6.1/5.6.2: utilisation within 5 points of the printed, mean buffer within 30 % (a Ptolemy
simulation with a 100-ms RTT clock and lost details), and the tables' orderings.
"""

from __future__ import annotations

import math

import numpy as np

from ...packet import require_ns3
from ..registry import Context, figure_pair
from ..targets import Value
from . import PAPER

# ------------------------------------------------------------------------ Table 5.5.1
#: Willingness to pay of the three classes (packets/s) and the link (packets/s).
WEIGHTS = (25.0, 50.0, 100.0)
CAPACITY = 3000.0
#: Round-trip delays of the two halves of every class (s).
DELAYS = (0.02, 0.08)
GAMMA, B0 = 0.006, 50.0


def steady_scenario(law: str):
    """Twelve flows, two per (weight, delay), over SBRM (``law="sbrm"``) or NewReno over RED."""
    import fluidnet as fn

    if law == "sbrm":
        aqm, buffer = fn.packet.SBRM(gamma=GAMMA, b0=B0), 400
        groups = [
            fn.packet.Flows(
                2, rtt=d, transport=fn.packet.Transport("sbrm", w=w, kappa=0.2), start=(0.0, 1.0)
            )  # fmt: skip
            for w in WEIGHTS
            for d in DELAYS
        ]
    else:
        aqm = fn.packet.RED(min_th=50, max_th=550, p_max=0.1, weight=1e-4, gentle=True)
        buffer = 2200
        groups = [fn.packet.Flows(2, rtt=d, start=(0.0, 1.0)) for _ in WEIGHTS for d in DELAYS]
    return fn.packet.Dumbbell(
        link=fn.packet.Link.from_packets(CAPACITY, buffer=buffer, aqm=aqm), flows=groups
    )


def _class_rates(run, after: float) -> np.ndarray:
    """Mean goodput per flow group (packets/s) over the tail, shape (groups,)."""
    sel = run.time >= after
    rate = run.flow_rate()[sel].mean(axis=0)
    return np.array([rate[run.flow_group == g].mean() for g in range(len(run.scenario.flows))])


@PAPER.item(
    title="Table 5.5.1 in ns-3: SBRM's weighted proportionally fair rates on one link",
    quick={"t_end": 20.0, "after": 8.0},
    pairs=[
        figure_pair(
            "packet_steady_state",
            "allocations",
            "Table 5.5.1 in ns-3: per-flow rates of SBRM sources with w in the ratios 1:2:4 and "
            "round-trip delays of 20 and 80 ms (and of NewReno over RED), beside the fluid "
            "laws' proportionally fair allocations",
            fluid_item="allocations",
        )
    ],
)
def packet_steady_state(ctx: Context, t_end: float = 60.0, after: float = 20.0) -> dict:
    """One ns-3 run per law (seed 0) of ``t_end`` seconds, the tail from ``after``."""
    import fluidnet as fn

    require_ns3()
    laws = ("sbrm", "reno_red")
    runs = {law: r for law, (r,) in zip(laws, fn.packet.simulate_many(
        [steady_scenario(law) for law in laws], t_end, seeds=(0,)), strict=True)}  # fmt: skip
    sb = runs["sbrm"]
    x = _class_rates(sb, after).reshape(len(WEIGHTS), len(DELAYS))
    p_star = sum(WEIGHTS) * 2 * len(DELAYS) / CAPACITY
    b_star = B0 - math.log(1 - p_star) / GAMMA
    sel = sb.time >= after
    i0 = int(np.searchsorted(sb.time, after))
    marks = sb.marks[-1, 0] - sb.marks[i0, 0]
    sent = (sb.departed[-1, 0] - sb.departed[i0, 0]) / sb.scenario.packet_size
    p_meas = float(marks / sent)
    b_meas = float(sb.queue[sel, 0].mean())
    reno = runs["reno_red"]
    xr = _class_rates(reno, after).reshape(len(WEIGHTS), len(DELAYS))
    q_reno = float(reno.queue[reno.time >= after, 0].mean())
    rtt_ratio = (DELAYS[1] + q_reno / CAPACITY) / (DELAYS[0] + q_reno / CAPACITY)
    rows = []
    for k, w in enumerate(WEIGHTS):
        for j, d in enumerate(DELAYS):
            rows.append({"w [pkts/s]": w, "delay [ms]": 1000 * d, "SBRM rate ns-3": x[k, j],
                         "SBRM rate, (5.5.5)": w / (2 * len(DELAYS) * sum(WEIGHTS)) * CAPACITY,
                         "Reno/RED rate ns-3": xr[k, j]})  # fmt: skip
    ctx.table("packet_steady_state", rows)
    fig, (ax_s, ax_r) = ctx.new_figure(1, 2, figsize=(10.0, 3.8))
    for j, d in enumerate(DELAYS):
        ax_s.plot(WEIGHTS, x[:, j], "o", label=f"ns-3, delay {1000 * d:g} ms")
        ax_r.plot(WEIGHTS, xr[:, j], "s", label=f"ns-3, delay {1000 * d:g} ms")
    ws = np.array(WEIGHTS)
    ax_s.plot(ws, ws / (2 * len(DELAYS) * sum(WEIGHTS)) * CAPACITY, "k--", label="(5.5.5)")
    title = f"SBRM: p = {p_meas:.3f} (p* {p_star:.3f}), b = {b_meas:.1f} (b* {b_star:.1f})"
    ax_s.set(xlabel="w [pkts/s]", ylabel="rate per flow [pkts/s]", title=title)
    ax_r.set(xlabel="(class of the SBRM run)", ylabel="rate per flow [pkts/s]",
             title="NewReno over RED, the same flows")  # fmt: skip
    for ax in (ax_s, ax_r):
        ax.legend(fontsize=7)
    ctx.figure("packet_steady_state", fig)
    delay_ratio = x[:, 0] / x[:, 1]
    worst = float(delay_ratio[np.argmax(np.abs(delay_ratio - 1))])
    return {
        "w 2:1": Value(float(x[1].mean() / x[0].mean()), expected=2.0),
        "w 4:1": Value(float(x[2].mean() / x[0].mean()), expected=4.0),
        "delays": Value(worst, expected=1.0, name=", ".join(f"{v:.3f}" for v in delay_ratio)),
        "p*": Value(p_meas, expected=p_star),
        "b*": Value(b_meas, expected=b_star),
        "utilisation": Value(
            bool(sb.utilisation(after=after) >= 0.97), shown=f"{sb.utilisation(after=after):.4f}"
        ),  # fmt: skip
        "reno": Value(
            float(xr[:, 0].mean() / xr[:, 1].mean()), expected=rtt_ratio, name=f"{q_reno:.1f}"
        ),  # fmt: skip
    }


# --------------------------------------------------------------------- Tables 5.6.1/5.6.2
#: The printed tables: queue -> transport -> (utilisation, mean buffer [packets]).
PRINTED = {
    "SBRM": {"newreno": (0.90, 30.0), "tcp_rm": (0.94, 27.7)},
    "RED": {"newreno": (0.89, 28.8), "tcp_rm": (0.92, 35.8)},
}
PATH_RTTS = (0.02, 0.036, 0.056)


def tcp_rm_scenario(queue: str, transport: str):
    """Sec 5.6.4's single bottleneck with ``queue`` ("SBRM", "RED") and ``transport``."""
    import fluidnet as fn

    if queue == "SBRM":
        aqm = fn.packet.SBRM(gamma=math.log(100.0) / 270.0, b0=30.0)
    else:
        aqm = fn.packet.RED(min_th=30, max_th=90, p_max=0.2, weight=0.02, ecn=True)
    law = (
        fn.packet.Transport("tcp_rm", w=20.0, kappa=0.1)
        if transport == "tcp_rm"
        else fn.packet.Transport("newreno", ecn=True)
    )
    return fn.packet.Dumbbell(
        link=fn.packet.Link(50e6, buffer=300, aqm=aqm),
        flows=[fn.packet.Flows(10, rtt=d, transport=law, start=(0.0, 1.0)) for d in PATH_RTTS],
        packet_size=1500,
    )


@PAPER.item(
    title="Tables 5.6.1/5.6.2 in ns-3: TCP/RM against NewReno-ECN over SBRM and RED queues",
    quick={"t_end": 6.0, "after": 2.0, "queues": ("SBRM",)},
    pairs=[
        figure_pair(
            "packet_tcp_rm",
            "fig_5_6_1_tcp_friendliness",
            "Tables 5.6.1/5.6.2 in ns-3: utilisation and queue of TCP/RM and NewReno-ECN over "
            "SBRM and RED queues, beside the claimed bandwidths of TCP and SBRM (Fig 5.6.1)",
            fluid_item="fig_5_6_1",
        )
    ],
)
def packet_tcp_rm(
    ctx: Context, t_end: float = 30.0, after: float = 5.0, queues: tuple = ("SBRM", "RED")
) -> dict:
    """One ns-3 run per (queue, transport) of ``t_end`` seconds (seed 0), the tail from
    ``after``."""
    import fluidnet as fn

    require_ns3()
    cases = [(q, t) for q in queues for t in ("newreno", "tcp_rm")]
    runs = fn.packet.simulate_many([tcp_rm_scenario(q, t) for q, t in cases], t_end, seeds=(0,))
    rows, values, got = [], {}, {}
    fig, axes = ctx.new_figure(1, len(queues), figsize=(5.0 * len(queues), 3.6))
    axes = np.atleast_1d(axes)
    for (q, t), (run,) in zip(cases, runs, strict=True):
        util = run.utilisation(after=after)
        sel = run.time >= after
        buf = float(run.queue[sel, 0].mean())
        got[q, t] = (util, buf)
        u_p, b_p = PRINTED[q][t]
        rows.append({"queue": q, "transport": t, "utilisation ns-3": util,
                     "utilisation printed": u_p, "mean buffer ns-3": buf, "mean buffer printed":
                     b_p, "delay [ms]": 1000 * buf / run.scenario.capacity(),
                     "drops": float(run.drops[-1, 0]), "marks": float(run.marks[-1, 0]),
                     "cpu [s]": run.cpu_time})  # fmt: skip
        values["util", q, t] = Value(util, expected=u_p)
        values["buffer", q, t] = Value(buf, expected=b_p)
        ax = axes[queues.index(q)]
        ax.hist(run.queue[sel, 0], bins=50, density=True, alpha=0.5,
                label=f"{'TCP/RM' if t == 'tcp_rm' else 'NewReno-ECN'}: {util:.2f}")  # fmt: skip
        ax.set(xlabel="queue [packets]", title=f"{q} queue at R1 (Figs 5.6.5/5.6.7)")
        ax.legend(fontsize=7, title="utilisation", title_fontsize=7)
    ctx.table("packet_tcp_rm", rows)
    ctx.figure("packet_tcp_rm", fig)
    for q in queues:
        (un, bn), (ur, br) = got[q, "newreno"], got[q, "tcp_rm"]
        values["higher", q] = Value(bool(ur > un), shown=f"TCP/RM {ur:.3f}, NewReno-ECN {un:.3f}")
        buffers = f"TCP/RM {br:.1f}, NewReno-ECN {bn:.1f} pkts"
        values["buffer order", q] = Value(bool(br < bn if q == "SBRM" else br > bn), buffers)
    return values
