"""Sec VI-C/D (Experiments 3 and 4, Figs 4-6 and 8) in ns-3: the adaptive marking level as a
virtual queue, without and with short flows.

Experiment 3 has 300 users on Fig 1's network (100 per class, half ``log x``, half ``-1/x``), the
marking level updated every K = 1000 arriving packets with gamma = 1; w, beta, the step size and
the packet size are not printed. The fluid analogue (item ``experiment3``) takes unit weights,
beta = 0.5, rates in pkt/s, kappa = 1 and eta = 0.05 per second. With 300 users the windows are
about one packet each, which a TCP window cannot follow; but the rate laws scale exactly: one
user with rates in packets per 0.02 s (Experiment 1's unit) has the fluid equilibrium of 50 users
with rates in pkt/s, so six users (one per class and utility) in units of 0.02 s have the same
mark fractions, the same marking levels in pkt/s and, with kappa = 1 and eta = 0.05 per 0.02 s,
the fluid analogue's trajectory 50 times faster. That is the ns-3 scenario
(:func:`~fluidnet.papers.ks.packet_scenarios.experiment3_scenario`): ``fluidnet::TcpKelly`` users
reacting to marks, ``fluidnet::AvqQueueDisc`` on both links (C~ from C/2, alpha = 2.5 /s, K =
1000). The fluid trajectory drawn beside it is the fluid analogue's, on the same time axis.

Experiment 4's network (Fig 7's routing matrix and capacities) is lost; its packet half is
replaced here by Experiment 3's network with short flows on every route: Poisson arrivals at one
flow per 0.02 s per route, Pareto sizes of mean 10 truncated at 20 packets (printed), shape 1.5
(not printed), the same law (log utility). In the fluid model they are an unresponsive load xi on
each link ((31), Prop 5): the levels where the long users carry gamma C - xi.

Criteria fixed before the runs (targets ``packet_experiment3`` and ``packet_short_flows``): the
levels within 1 % (link 1) and 3 % (link 2) of the fluid steady states (the queueing delays the
fluid model leaves out may raise them by up to 0.7 % and 2.7 %), no drift over the second half,
no drop after the transient, the classes ordered as the fluid steady state, the short flows
complete and their load paid by more marks.
"""

from __future__ import annotations

import numpy as np

from ...packet import require_ns3
from ..packet_runs import cpu_seconds, mapping_rows, packet_runs
from ..registry import Context, figure_pair
from ..targets import Value
from . import PAPER
from .data import (
    CORE_PKTS_PER_S,
    EXP3_ETA,
    EXP3_K,
    PACKET_SIZE,
    PACKET_T,
    PACKET_T_QUICK,
    TIME_UNIT,
    short_flow_load,
    steady_levels,
    steady_rates,
)
from .packet_scenarios import common_mapping, experiment3_scenario

CLASSES = ("class 1 (links 1-2)", "class 2 (link 1)", "class 3 (link 2)")


def _levels(run) -> np.ndarray:
    """Marking levels C~ (pkt/s) of both links against time, shape (T, 2)."""
    caps = np.array([run.scenario.capacity(ll) for ll in range(2)])
    return run.aqm_state[:, :2] * caps


def _mean_over(run, series, t0: float, t1: float):
    sel = (run.time >= t0) & (run.time <= t1)
    return np.mean(series[sel], axis=0)


def _long_rates(run, t0: float, t1: float) -> np.ndarray:
    """Sending rate (pkts per 0.02 s) of the six long users, shape (3 classes, 2 utilities)."""
    i0, i1 = np.searchsorted(run.time, [t0, t1])
    i1 = min(i1, run.time.size - 1)
    sent = (run.received[i1, :6] - run.received[i0, :6]) / (PACKET_SIZE - 52)
    sent = sent + run.lost[i1, :6] - run.lost[i0, :6]
    return (sent / (run.time[i1] - run.time[i0]) * TIME_UNIT).reshape(3, 2)


def _mark_fraction(run, link: int, t0: float) -> float:
    i0 = int(np.searchsorted(run.time, t0))
    marks = run.marks[-1, link] - run.marks[i0, link]
    arrived = (run.departed[-1, link] - run.departed[i0, link]) / PACKET_SIZE
    arrived += run.drops[-1, link] - run.drops[i0, link]
    return float(marks / arrived)


def _converged(run, levels: np.ndarray, t_end: float) -> tuple[bool, str]:
    third = _mean_over(run, levels, t_end / 2, 3 * t_end / 4)
    last = _mean_over(run, levels, 3 * t_end / 4, t_end)
    drift = np.abs(last - third) / np.array(CORE_PKTS_PER_S)
    return bool(np.all(drift <= 0.01)), ", ".join(f"{d:.4f} C" for d in drift)


def _fluid_levels(t_end: float, xi=None):
    """The fluid analogue (item ``experiment3``) on the packet run's time axis (its seconds
    times 0.02): time, C~_1, C~_2 (pkt/s)."""
    import fluidnet as fn

    from ...models import adaptive_marking
    from .data import BETA, exp3_network

    net = exp3_network()
    m = adaptive_marking(net, beta=BETA, eta=EXP3_ETA, gamma=1.0, disturbance=xi)
    hist = {f"x_{n}": 1.0 for n in net.names}
    hist.update(Ct_1=0.5 * net.C[0], Ct_2=0.5 * net.C[1])
    sol = fn.simulate(m, t_end / TIME_UNIT, history=hist, rtol=1e-8)
    t = np.linspace(0.0, t_end / TIME_UNIT, 601)
    return t * TIME_UNIT, sol(t, "Ct_1"), sol(t, "Ct_2")


def _mapping(sc, t_end: float, short: bool) -> list[dict]:
    m = common_mapping() | {
        "users": (
            "300: 100 per class, 50 log x + 50 -1/x each",
            "6 fluidnet::TcpKelly flows, one per class and utility (each with the fluid "
            "equilibrium of the 50 it stands for: rates in pkts per 0.02 s, d = 2, 1, 1)",
        ),
        "marking": (
            "adaptive C~, gamma = 1, K = 1000 packets, step not stated (fluid: 0.05 /s)",
            f"AVQ(adaptive, gamma=1, update_every={EXP3_K}, alpha={EXP3_ETA / TIME_UNIT:g}/s, "
            "level 0.5 at start, virtual buffer 100), marks only",
        ),
        "run": ("not stated", f"{t_end:g} s, seed 1, levels over [{t_end / 2:g}, {t_end:g}]"),
    }
    if short:
        xi = short_flow_load()
        m["short flows (Experiment 4)"] = (
            "Poisson 1 flow/s per route, Pareto mean 10 truncated at 20 (network of Fig 7 lost)",
            f"Poisson 50 flows/s per route (one per 0.02 s), Pareto mean 10 shape 1.5 cut at 20, "
            f"log-utility TcpKelly; {xi[0]:.0f} pkts/s on each link",
        )
    return mapping_rows(sc, m)


def _plot_levels(ax, run, t_end: float, fluid, title: str) -> None:
    levels = _levels(run)
    tf, c1, c2 = fluid
    for ll, (lv, cf) in enumerate(zip(levels.T, (c1, c2), strict=True)):
        ax.plot(run.time, lv, lw=0.8, color=f"C{ll}", label=f"ns-3 C~_{ll + 1}")
        ax.plot(tf, cf, "--", lw=1.2, color=f"C{ll}", label=f"fluid C~_{ll + 1}")
        ax.axhline(CORE_PKTS_PER_S[ll], color=f"C{ll}", lw=0.5, ls=":")
    ax.set_xlabel("t (s)")
    ax.set_ylabel("marking level (pkt/s)")
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=7)


@PAPER.item(
    title="Sec VI-C in ns-3: adaptive marking level (AVQ), Figs 4-6",
    quick={"t_end": PACKET_T_QUICK["experiment3"]},
    pairs=[
        figure_pair(
            "packet_figs4_6_marking_levels",
            "figs4_5_marking_levels_fluid",
            "Experiment 3: the adaptive marking levels of both links and the users' windows in "
            "ns-3 (AVQ, K = 1000), beside the fluid adaptive law",
            fluid_item="experiment3",
        )
    ],
)
def packet_experiment3(ctx: Context, t_end: float = PACKET_T["experiment3"]) -> dict:
    """One ns-3 run of Experiment 3 (six users), ``t_end`` seconds; levels over the second
    half."""
    require_ns3()
    sc = experiment3_scenario()
    (run,) = packet_runs([sc], t_end)
    half = t_end / 2
    levels = _levels(run)
    mean = _mean_over(run, levels, half, t_end)
    rates = _long_rates(run, half, t_end)
    fluid_rates = steady_rates(np.array(CORE_PKTS_PER_S))
    i0 = int(np.searchsorted(run.time, half))
    drops = run.drops[-1, :2] - run.drops[i0, :2]
    ctx.table("packet_experiment3_mapping", _mapping(sc, t_end, False))
    rows = [
        {
            "what": f"C~_{ll + 1} [pkt/s]",
            "ns-3": float(mean[ll]),
            "fluid": float(steady_levels(np.array(CORE_PKTS_PER_S))[1][ll]),
        }
        for ll in range(2)
    ]
    for c in range(3):
        for u, name in enumerate(("log x", "-1/x")):
            rows.append(
                {
                    "what": f"{CLASSES[c]}, {name} [pkts per 0.02 s]",
                    "ns-3": float(rates[c, u]),
                    "fluid": float(fluid_rates[c, u]),
                }
            )
    rows.append({"what": "drops in the second half", "ns-3": float(drops.sum())})
    rows.append({"what": "ns-3 CPU [s]", "ns-3": cpu_seconds([run])})
    ctx.table("packet_experiment3", rows)

    fig, axes = ctx.new_figure(1, 2, figsize=(11.5, 4.0))
    _plot_levels(
        axes[0],
        run,
        t_end,
        _fluid_levels(t_end),
        "Experiment 3 (Figs 4/5): marking levels, ns-3 and the fluid adaptive law",
    )
    a = axes[1]
    for k in range(6):
        a.plot(
            run.time, run.cwnd[:, k], lw=0.6, label=f"{CLASSES[k // 2]}, {('log x', '-1/x')[k % 2]}"
        )
    a.set_yscale("log")
    a.set_xlabel("t (s)")
    a.set_ylabel("window (packets)")
    a.set_title("Fig 6: a user of each class and utility (ns-3)", fontsize=9)
    a.legend(fontsize=6)
    ctx.figure("packet_figs4_6_marking_levels", fig)

    ok, shown = _converged(run, levels, t_end)
    order = bool(
        np.all(rates[0] < rates[2])
        and np.all(rates[2] < rates[1])
        and np.all(rates[:, 0] > rates[:, 1])
    )
    return {
        **{("level", ll): float(mean[ll]) for ll in range(2)},
        "converge": Value(ok, shown=shown),
        "no drops": Value(bool(drops.sum() == 0), shown=f"{int(drops.sum())} drops"),
        "order": Value(
            order,
            shown="; ".join(
                f"{('log', '-1/x')[u]}: " + " ".join(f"{rates[c, u]:.2f}" for c in range(3))
                for u in range(2)
            ),
        ),
    }


@PAPER.item(
    title="Sec VI-D in ns-3: adaptive marking levels with short flows, Fig 8 (substitute network)",
    quick={"t_end": PACKET_T_QUICK["experiment3"]},
    pairs=[
        figure_pair(
            "packet_fig8_short_flows",
            "figs4_5_marking_levels_fluid",
            "Experiment 4 (substitute, Fig 7's network is lost): the adaptive marking levels in "
            "ns-3 with short flows on every route of Fig 1, beside the fluid adaptive law",
            fluid_item="experiment3",
        )
    ],
)
def packet_short_flows(ctx: Context, t_end: float = PACKET_T["experiment3"]) -> dict:
    """ns-3 runs of Experiment 3 without and with short flows, ``t_end`` seconds each."""
    require_ns3()
    base_sc, sc = experiment3_scenario(), experiment3_scenario(short_flows=True)
    base, run = packet_runs([base_sc, sc], t_end)
    half = t_end / 2
    xi = short_flow_load()
    levels = _levels(run)
    mean = _mean_over(run, levels, half, t_end)
    _, fluid = steady_levels(np.array(CORE_PKTS_PER_S), xi)
    marks = [_mark_fraction(r, 1, half) for r in (base, run)]
    started = run.short_start < t_end - 2.0
    done = np.isfinite(run.short_done[started])
    fct = run.completion_times()
    ctx.table("packet_short_flows_mapping", _mapping(sc, t_end, True))
    rows = [
        {
            "what": f"C~_{ll + 1} [pkt/s]",
            "ns-3": float(mean[ll]),
            "fluid": float(fluid[ll]),
            "ns-3 without short flows": float(_mean_over(base, _levels(base), half, t_end)[ll]),
        }
        for ll in range(2)
    ]
    rows.append(
        {"what": "marked fraction, link 2", "ns-3": marks[1], "ns-3 without short flows": marks[0]}
    )
    rows.append(
        {
            "what": "short flows started / completed (before T - 2 s)",
            "ns-3": f"{int(started.sum())} / {int(done.sum())}",
        }
    )
    rows.append(
        {
            "what": "short flows: mean size [pkts], mean completion time [s]",
            "ns-3": f"{np.mean(run.short_size):.2f}, {np.nanmean(fct):.4f}",
        }
    )
    rows.append({"what": "ns-3 CPU [s]", "ns-3": cpu_seconds([run])})
    ctx.table("packet_short_flows", rows)

    fig, ax = ctx.new_figure(figsize=(6.4, 4.2))
    _plot_levels(
        ax,
        run,
        t_end,
        _fluid_levels(t_end, xi=list(xi)),
        f"Experiment 4 substitute: short flows ({xi[0]:.0f} pkts/s a link), ns-3 and fluid",
    )
    ctx.figure("packet_fig8_short_flows", fig)

    ok, shown = _converged(run, levels, t_end)
    return {
        **{("level", ll): float(mean[ll]) for ll in range(2)},
        "converge": Value(ok, shown=shown),
        "marks": Value(bool(marks[1] > marks[0]), shown=f"{marks[0]:.4f} -> {marks[1]:.4f}"),
        "complete": Value(bool(np.all(done)), shown=f"{int(done.sum())}/{int(started.sum())}"),
    }
