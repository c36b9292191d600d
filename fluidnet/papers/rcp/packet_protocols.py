"""RCP next to TCP and XCP in ns-3: the ns-2 halves of Figs 2, 5, 19 and 20.

Every run uses the paper's ns-2 settings (Sec III-A): packets of 1000 bytes, RCP with
``alpha = 0.1, beta = 1.0`` and ``T = min(10 ms, RTT)`` (RTT average gain 0.02, ``R(0) = 0.05 C``),
TCP Reno's initial window of 2 (ns-3's NewReno, one ACK per segment), XCP with Katabi et al.'s
gains (``fluidnet::XcpQueueDisc``, ``fluidnet::TcpXcp``: fluidnet's C++ components), buffers of
``C x RTPD`` packets with tail drop, Poisson arrivals of Pareto(shape 1.2) flow sizes. What is
scaled is stated per item; the criteria were fixed before the runs:

``packet_flow_count`` (Figs 2 and 5)
    Fig 2's link (10 Mb/s, RTPD 50 ms, mean size 25 packets; the printed 400 flows/s would be a
    load of 8, read as 40 flows/s, load 0.8), 200 s. The number of active flows ``N(t)`` (from a
    flow's SYN to its last packet) against the router's estimate ``C/R(t)``: correlated (Pearson
    r >= 0.7, both averaged over 0.5 s), and ``E[C/R]`` within 30 % of the flows the router can
    see, ``E[N] - 1.5 lambda RTPD`` (a flow spends one RTPD in its handshake and half a RTPD with
    its last packet in flight, when it sends nothing); ``E[N]`` within 30 % of processor
    sharing's ``lambda E[FCT_PS]`` (Little's law with eq (3)); ``R/C`` ranging over more than a
    factor of 10 (Fig 5: "R(t) sweeps over the entire space").
``packet_fct_protocols`` (Fig 20 scaled; the claims of Figs 7, 8, 16, 20-22)
    20 Mb/s (a fifth of Fig 20's smallest capacity, 100 Mb/s: there 9000 flows in 20 s made ns-3's
    linear look-up of socket endpoints dominate, over 4 CPU-minutes for the TCP run alone), RTPD
    100 ms, load 0.9, mean size 25 (E[L] still far below the 250-packet bandwidth-delay product,
    the regime where TCP's flows end in slow start): arrivals for 35 s, 50 s in all. The mean FCT
    of flows under 500 packets and of the others, for each protocol, against PS (eq (3) with the
    realised load); flows still running at the end count with the time they ran (a lower bound:
    it can only lower TCP's and XCP's means).
``packet_convergence`` (Fig 19)
    15 Mb/s (a tenth of the paper's 150), two flows on each of ten RTPDs 20, 40, ..., 200 ms:
    20 flows from 0 s, 20 more at 15 s, the first 20 stop at 30 s, 45 s in all (the paper's
    0/40/100/140 s scaled by 3/8). RCP's ``R/C`` within 10 % of ``1/N`` at the end of each
    phase and the link over 95 % busy; after the arrivals at 15 s the new RCP flows reach 90 %
    of their fair share sooner than XCP's (RCP hands a new flow the fair rate in its handshake;
    XCP starts it small and grows it over round trips, Sec I).
"""

from __future__ import annotations

import math

import numpy as np

from ...packet import require_ns3
from ..registry import Context, figure_pair
from ..targets import Value
from . import PAPER

#: Packet size (bytes) of every run, as the paper's.
PACKET_SIZE = 1000
#: TCP Reno's initial window in the paper's ns-2 runs (also XCP's start).
INITIAL_WINDOW = 2
#: Flow-size split of Figs 20-22 (packets).
SPLIT = 500


def _capacity(rate: float) -> float:
    """Packets/s of 1000-byte packets on a link of ``rate`` bit/s (2 bytes of framing each)."""
    return rate / (8.0 * (PACKET_SIZE + 2))


def _router(protocol: str, rtpd: float):
    import fluidnet as fn

    if protocol == "rcp":
        return fn.packet.RCP(alpha=0.1, beta=1.0, interval=min(0.01, rtpd), initial_rtt=rtpd)
    if protocol == "xcp":
        return fn.packet.XCP()
    return fn.packet.DropTail()


def _smooth(t: np.ndarray, y: np.ndarray, window: float) -> np.ndarray:
    from ...packet.analysis import moving_average

    return moving_average(t, y, window)


# ------------------------------------------------------------------------- Figs 2 and 5
def active_flows(run) -> np.ndarray:
    """The number of flows between their SYN and their last packet at every sample time."""
    done = np.where(np.isfinite(run.short_done), run.short_done, np.inf)
    starts = np.sort(run.short_start)
    ends = np.sort(done)
    return np.searchsorted(starts, run.time, side="right") - np.searchsorted(
        ends, run.time, side="right"
    )


def flow_count_scenario():
    """Fig 2's link with Poisson arrivals of Pareto flows, RCP senders."""
    import fluidnet as fn

    rtpd = 0.05
    return fn.packet.Dumbbell(
        link=fn.packet.Link(
            10e6, buffer=math.ceil(_capacity(10e6) * rtpd), aqm=_router("rcp", rtpd)
        ),
        flows=[fn.packet.ShortFlows(arrival_rate=40.0, mean_size=25.0, rtt=rtpd, transport="rcp")],
        notes=("Fig 2: 10 Mb/s, RTPD 50 ms, Pareto mean 25 pkts, 40 flows/s (load 0.8)",),
    )


@PAPER.item(
    title="RCP in ns-3: active flows against the router's C/R (Figs 2 and 5)",
    quick={"t_end": 40.0},
    pairs=[
        figure_pair(
            "packet_flow_count",
            "fig07_08_ps_slowstart",
            "RCP in ns-3 (10 Mb/s, load 0.8): the router's C/R(t) against the number of active "
            "flows, whose mean processor sharing predicts (eq (3) with Little's law)",
            fluid_item="processor_sharing",
        )
    ],
)
def packet_flow_count(ctx: Context, t_end: float = 200.0, after: float = 10.0) -> dict:
    """One ns-3 run of ``t_end`` seconds (seed 1), measured from ``after``."""
    import fluidnet as fn

    from ...models.flow_level import ps_fct

    require_ns3()
    sc = flow_count_scenario()
    (run,) = fn.packet.simulate_many([sc], t_end, seeds=(1,))[0]
    rtpd, lam = 0.05, 40.0
    C = sc.capacity()
    t = run.time
    n = active_flows(run).astype(float)
    gamma = run.aqm_state[:, 0]
    est = 1.0 / gamma
    sel = t >= after
    n_s, est_s = _smooth(t, n, 0.5)[sel], _smooth(t, est, 0.5)[sel]
    r = float(np.corrcoef(n_s, est_s)[0, 1])
    arrived = (run.short_start >= after) & (run.short_start < t_end)
    sizes = run.short_size[arrived]
    rate = arrived.sum() / (t_end - after)
    rho = rate * sizes.mean() / C
    ps_n = rate * float(np.mean(ps_fct(sizes, C=C, rtpd=rtpd, rho=rho)))
    mean_n, mean_est = float(n[sel].mean()), float(est[sel].mean())
    seen = mean_n - 1.5 * lam * rtpd
    lo, hi = np.quantile(gamma[sel], [0.01, 0.99])
    ctx.table(
        "packet_flow_count",
        [
            {
                "E[N] ns-3": mean_n,
                "E[N] PS (Little, eq (3))": ps_n,
                "realised load": rho,
                "E[C/R] ns-3": mean_est,
                "E[N] - 1.5 lambda RTPD": seen,
                "corr(N, C/R), 0.5 s averages": r,
                "R/C 1 %": lo,
                "R/C 99 %": hi,
                "flows": int(run.short_start.size),
                "unfinished": int(np.sum(~np.isfinite(run.short_done))),
                "cpu [s]": run.cpu_time,
            }
        ],
    )
    fig, (ax_n, ax_r) = ctx.new_figure(2, 1, figsize=(8.0, 5.6))
    ax_n.plot(t, n, lw=0.4, color="0.6", label="active flows N(t)")
    ax_n.plot(t, _smooth(t, n, 0.5), lw=0.9, color="C0", label="N(t), 0.5 s average")
    ax_n.plot(t, _smooth(t, est, 0.5), lw=0.9, color="C3", label="C/R(t), 0.5 s average")
    ax_n.axhline(ps_n, color="k", ls="--", lw=1, label=f"PS: E[N] = {ps_n:.1f}")
    ax_n.set(ylabel="flows", xlim=(after, min(t_end, after + 60)))
    ax_n.set_title(f"RCP in ns-3, 10 Mb/s, load {rho:.2f}: corr(N, C/R) = {r:.2f}", fontsize=9)
    ax_n.legend(fontsize=7, ncol=2)
    ax_r.semilogy(t, gamma, lw=0.6, color="C3")
    ax_r.set(xlabel="time [s]", ylabel="R(t)/C", title="R(t)/C from R(0) = 0.05 C (Fig 5)")
    ctx.figure("packet_flow_count", fig)
    return {
        "corr": Value(r, shown=f"{r:.3f}"),
        "estimate": Value(mean_est, expected=seen, note=f"E[N] = {mean_n:.2f}"),
        "little": Value(mean_n, expected=ps_n, note=f"{rho:.3f}"),
        "sweep": Value(bool(hi / lo > 10), shown=f"R/C from {lo:.3f} to {hi:.3f} (1-99 %)"),
    }


# ------------------------------------------------------------------------------- Fig 20
#: The capacity of the flow-completion runs (bit/s).
FCT_RATE = 20e6


def fct_scenario(protocol: str, arrivals: float):
    """Fig 20 scaled to 20 Mb/s: Pareto flows at load 0.9 over ``protocol`` ("rcp", "xcp",
    "newreno")."""
    import fluidnet as fn

    rtpd = 0.1
    return fn.packet.Dumbbell(
        link=fn.packet.Link(
            FCT_RATE, buffer=math.ceil(_capacity(FCT_RATE) * rtpd), aqm=_router(protocol, rtpd)
        ),
        flows=[
            fn.packet.ShortFlows(
                load=0.9, mean_size=25.0, rtt=rtpd, transport=protocol, stop=arrivals
            )
        ],
        initial_window=INITIAL_WINDOW,
        notes=(f"Fig 20 at 20 Mb/s, RTPD 0.1 s, load 0.9: {protocol}",),
    )


PROTOCOLS = ("rcp", "xcp", "newreno")


def _afct(run, t_end: float) -> dict[str, float]:
    """Mean FCT of the flows under and over the split; a flow still running counts with the time
    it ran (a lower bound)."""
    fct = np.where(np.isfinite(run.short_done), run.short_done, t_end) - run.short_start
    small = run.short_size < SPLIT
    return {
        "<500": float(fct[small].mean()),
        ">=500": float(fct[~small].mean()),
        "unfinished": int(np.sum(~np.isfinite(run.short_done))),
        "n>=500": int(np.sum(~small)),
    }


@PAPER.item(
    title="TCP, XCP and RCP in ns-3: flow completion times at 20 Mb/s, load 0.9 (Fig 20)",
    quick={"t_end": 6.0, "arrivals": 3.0},
    pairs=[
        figure_pair(
            "packet_fct_protocols",
            "fig20_22_ps_size_split",
            "Fig 20 at 20 Mb/s in ns-3: mean FCT of TCP, XCP and RCP for flows under and over "
            "500 packets, against the processor-sharing lines",
            fluid_item="processor_sharing",
        )
    ],
)
def packet_fct_protocols(ctx: Context, t_end: float = 50.0, arrivals: float = 35.0) -> dict:
    """One ns-3 run per protocol (seed 0): arrivals until ``arrivals``, the run until ``t_end``."""
    import fluidnet as fn

    from ...models.flow_level import ps_fct

    require_ns3()
    scs = [fct_scenario(p, arrivals) for p in PROTOCOLS]
    runs = {
        p: r
        for p, (r,) in zip(PROTOCOLS, fn.packet.simulate_many(scs, t_end, seeds=(0,)), strict=True)
    }
    C, rtpd = scs[0].capacity(), 0.1
    first = runs["rcp"]
    rho = first.short_size.sum() / (arrivals * C)
    sizes = first.short_size
    # a sample's realised load can reach 1 (a heavy tail): processor sharing is then unstable,
    # and eq (3) gives no reference (NaN)
    ps = ps_fct(sizes, C=C, rtpd=rtpd, rho=rho) if rho < 1 else np.full(sizes.shape, math.nan)
    nominal = ps_fct(sizes, C=C, rtpd=rtpd, rho=0.9)
    small = sizes < SPLIT
    ps_group = {"<500": float(ps[small].mean()), ">=500": float(ps[~small].mean())}
    ps_nominal = {"<500": float(nominal[small].mean()), ">=500": float(nominal[~small].mean())}
    stats = {p: _afct(r, t_end) for p, r in runs.items()}
    queues = {p: float(np.mean(r.queue[:, 0]) / (C * rtpd)) for p, r in runs.items()}
    ctx.table(
        "packet_fct_protocols",
        [
            {
                "protocol": p,
                "AFCT < 500 [s]": stats[p]["<500"],
                "AFCT >= 500 [s]": stats[p][">=500"],
                "PS < 500": ps_group["<500"],
                "PS >= 500": ps_group[">=500"],
                "PS < 500, load 0.9": ps_nominal["<500"],
                "PS >= 500, load 0.9": ps_nominal[">=500"],
                "flows >= 500": stats[p]["n>=500"],
                "unfinished": stats[p]["unfinished"],
                "queue / (C RTPD)": queues[p],
                "drops": float(runs[p].drops[-1, 0]),
                "cpu [s]": runs[p].cpu_time,
            }
            for p in PROTOCOLS
        ],
    )
    fig, axes = ctx.new_figure(1, 2, figsize=(10.0, 3.8))
    for ax, group in zip(axes, ("<500", ">=500"), strict=True):
        xs = np.arange(len(PROTOCOLS))
        ax.bar(xs, [stats[p][group] for p in PROTOCOLS], color=("C3", "C2", "C0"))
        ax.axhline(ps_nominal[group], color="k", ls="--", label="PS, eq (3), load 0.9")
        ax.set_xticks(xs, ["RCP", "XCP", "TCP"])
        ax.set_yscale("log")
        ax.set(ylabel="mean FCT [s]", title=f"flows {group} packets (20 Mb/s, load {rho:.2f})")
        ax.legend(fontsize=8)
    ctx.figure("packet_fct_protocols", fig)
    rcp = stats["rcp"]
    values: dict = {}
    for group in ("<500", ">=500"):
        values["rcp/ps", group] = Value(rcp[group], expected=ps_group[group])
        values["rcp/ps nominal", group] = Value(rcp[group], expected=ps_nominal[group])
        others = [stats[p][group] for p in ("xcp", "newreno")]
        values["lowest", group] = Value(
            bool(rcp[group] < min(others)),
            shown=f"RCP {rcp[group]:.3f}, XCP {others[0]:.3f}, TCP {others[1]:.3f} s",
        )
        values["tcp/rcp", group] = stats["newreno"][group] / rcp[group]
        values["xcp/rcp", group] = stats["xcp"][group] / rcp[group]
    values["rcp queue"] = queues["rcp"]
    values["queues"] = Value(
        bool(queues["xcp"] < queues["rcp"] < queues["newreno"]),
        shown=", ".join(f"{p} {queues[p]:.4f}" for p in PROTOCOLS),
    )
    values["rcp unfinished"] = rcp["unfinished"]
    return values


# ------------------------------------------------------------------------------- Fig 19
RTPDS = tuple(round(0.02 * k, 2) for k in range(1, 11))
#: Phase boundaries (s): 20 flows from 0, 20 more from ARRIVE, the first 20 stop at LEAVE.
ARRIVE, LEAVE, END = 15.0, 30.0, 45.0


def convergence_scenario(protocol: str):
    """Fig 19 at 15 Mb/s: two flows per RTPD 20-200 ms from 0 s (stopping at 30 s) and two more
    per RTPD from 15 s."""
    import fluidnet as fn

    C = 15e6
    groups = [fn.packet.Flows(2, rtt=d, transport=protocol, stop=LEAVE) for d in RTPDS] + [
        fn.packet.Flows(2, rtt=d, transport=protocol, start=ARRIVE) for d in RTPDS
    ]
    return fn.packet.Dumbbell(
        link=fn.packet.Link(
            C, buffer=math.ceil(_capacity(C) * max(RTPDS)), aqm=_router(protocol, 0.1)
        ),
        flows=groups,
        initial_window=INITIAL_WINDOW,
        notes=("Fig 19 at 15 Mb/s: 20 / 40 / 20 flows, RTPD 20-200 ms, times x 3/8",),
    )


def _rise_time(run, t: np.ndarray, fair: float) -> float:
    """Seconds after ARRIVE until the mean goodput of the flows arriving then, averaged over
    0.5 s, first reaches 90 % of ``fair`` (packets/s); inf if never."""
    late = np.array([run.scenario.groups[g].start[0] >= ARRIVE for g in run.flow_group])
    rate = _smooth(t, run.flow_rate()[:, late].mean(axis=1), 0.5)
    hit = np.flatnonzero((t > ARRIVE) & (rate >= 0.9 * fair))
    return float(t[hit[0]] - ARRIVE) if hit.size else math.inf


@PAPER.item(
    title="RCP and XCP in ns-3: 20 / 40 / 20 flows with RTPDs 20-200 ms (Fig 19)",
    quick={"protocols": ("rcp",)},
    pairs=[
        figure_pair(
            "packet_convergence",
            "fig19_heterogeneous",
            "Fig 19 in ns-3 (15 Mb/s, RTPD 20-200 ms): R/C and utilisation of RCP, beside the "
            "fluid model of the same steps",
            fluid_item="heterogeneous",
        )
    ],
)
def packet_convergence(ctx: Context, protocols: tuple = ("rcp", "xcp")) -> dict:
    """One ns-3 run of 45 s per protocol (seed 0)."""
    import fluidnet as fn

    require_ns3()
    scs = [convergence_scenario(p) for p in protocols]
    runs = dict(
        zip(protocols, (r for (r,) in fn.packet.simulate_many(scs, END, seeds=(0,))), strict=True)
    )
    C = scs[0].capacity()
    phases = ((0.0, ARRIVE, 20), (ARRIVE, LEAVE, 40), (LEAVE, END, 20))
    values: dict = {}
    rows = []
    fig, (ax_g, ax_u) = ctx.new_figure(2, 1, figsize=(8.0, 5.6))
    for p, run in runs.items():
        t = run.time
        thr = run.throughput()[:, 0]
        for lo, hi, n in phases:
            tail = (t >= hi - 5.0) & (t < hi)
            busy = (t >= lo + 5.0) & (t < hi)
            util = float(thr[busy].mean() * (PACKET_SIZE + 2) * 8 / run.scenario.link.rate)
            gamma = float(np.mean(run.aqm_state[tail, 0])) if p == "rcp" else math.nan
            active = np.array([run.scenario.groups[g].start[0] < hi - 5.0 and (
                run.scenario.groups[g].stop or END) >= hi for g in run.flow_group])  # fmt: skip
            rtt = float(np.mean(run.rtt[tail][:, active]))
            q_tail = float(run.queue[tail, 0].mean())
            tail_util = float(thr[tail].mean() * (PACKET_SIZE + 2) * 8 / run.scenario.link.rate)
            rows.append({"protocol": p, "phase": f"{lo:g}-{hi:g} s", "flows": n,
                         "R/C (last 5 s)": gamma, "1/N": 1.0 / n, "utilisation": util,
                         "queue": float(run.queue[busy, 0].mean())})  # fmt: skip
            if p == "rcp":
                values["gamma", n, lo] = Value(gamma, expected=1.0 / n)
                values["util", lo] = Value(bool(util >= 0.95), shown=f"{util:.3f}")
                predicted = 1.0 - (1.0 / 0.1) * q_tail / (C * rtt)  # beta/alpha = 1.0/0.1
                values["queue term", lo] = Value(
                    tail_util,
                    expected=predicted,
                    note=f"E[q] = {q_tail:.2f} pkts, E[d] = {rtt:.4f} s",
                )
        ax_u.plot(t, _smooth(t, thr / C, 0.5), lw=0.8, label=p.upper())
        if p == "rcp":
            ax_g.plot(t, run.aqm_state[:, 0], lw=0.8, color="C0", label="RCP R/C")
            ax_g.step([0, ARRIVE, LEAVE, END], [0.05, 0.025, 0.05, 0.05], where="post",
                      color="k", ls="--", lw=1, label="1/N(t)")  # fmt: skip
    rise = {p: _rise_time(r, r.time, C / 40.0) for p, r in runs.items()}
    for row in rows:
        row["rise to 90 % of C/40 [s]"] = rise[row["protocol"]]
    ctx.table("packet_convergence", rows)
    ax_g.set(ylabel="R/C", ylim=(0, 0.1), title="Fig 19 in ns-3: 20 / 40 / 20 flows, 15 Mb/s")
    ax_g.legend(fontsize=8)
    ax_u.set(xlabel="time [s]", ylabel="utilisation (0.5 s)", ylim=(0, 1.1))
    ax_u.legend(fontsize=8)
    ctx.figure("packet_convergence", fig)
    if "xcp" in runs:
        values["faster"] = Value(
            bool(rise["rcp"] < rise["xcp"]),
            shown=f"RCP {rise['rcp']:.2f} s, XCP {rise['xcp']:.2f} s",
        )
    return values
