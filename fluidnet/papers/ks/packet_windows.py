"""Sec VI-A (Experiment 1, Fig 2) in ns-3: the window laws (12)/(13) of three utilities on Fig 1's
network, against the fluid equilibrium.

The paper's ns-2 run implements (12)/(13) with increments and decrements in packets, d = 2 for
user 0 (``-1/sqrt(x)``, both links) and d = 1 for users 1 (``log x``, link 1) and 2 (``-1/x``,
link 2), time in units of 0.02 s, drop-front queues of 100 packets, w = 1, beta = 0.5; its
averages (16.81, 140.83, 60.34) are close to the NLP (16.56, 139.69, 61.57). Here
``fluidnet::TcpKelly`` runs the same laws in ns-3 on the same capacities in packets per second
(:mod:`~fluidnet.papers.ks.packet_scenarios`), one run of ``t_end`` seconds, seed 1, the rates
measured over the second half (sending rate: packets received and lost).

Criteria fixed before the run (targets ``packet_experiment1``): each rate against the fluid
equilibrium of (5) at beta = 0.5 (16.712, 141.773, 61.454), with tolerances from the queueing
the fluid model leaves out -- the law sets the window, the rate is the window over the real round
trip, which the full buffers lengthen (user 0: about -16 %, estimated from the buffers); and
against the equilibrium of the law with the measured round trips (the fluid model with weights
``w (d/RTT)^(nu+1)``), within 10 %.
"""

from __future__ import annotations

import numpy as np

from ...packet import require_ns3
from ..packet_runs import cpu_seconds, mapping_rows, packet_runs
from ..registry import Context, figure_pair
from ..targets import Value
from . import PAPER
from .data import (
    BETA,
    EXP1_NS2,
    EXP1_PRINTED,
    PACKET_SIZE,
    PACKET_T,
    PACKET_T_QUICK,
    TIME_UNIT,
    exp1_network,
)
from .packet_scenarios import DELAYS, common_mapping, experiment1_scenario

#: The utilities' exponents nu (0: log x) of users 0, 1, 2.
NUS = (0.5, 0.0, 1.0)
NAMES = ("user 0, -1/sqrt(x)", "user 1, log x", "user 2, -1/x")


def sending_rates(run, t0: float, t1: float) -> np.ndarray:
    """Packets per 0.02 s each user sent over ``[t0, t1]`` (delivered and lost)."""
    i0, i1 = np.searchsorted(run.time, [t0, t1])
    i1 = min(i1, run.time.size - 1)
    payload = PACKET_SIZE - 52
    sent = (run.received[i1] - run.received[i0]) / payload + (run.lost[i1] - run.lost[i0])
    return sent / (run.time[i1] - run.time[i0]) * TIME_UNIT


def _fluid_equilibrium(w) -> np.ndarray:
    from ...models import utility_primal

    m = utility_primal(exp1_network(w=list(w)), beta=BETA)
    eq = m.equilibrium()
    return np.array([eq[f"x_{i}"] for i in range(3)])


def _fluid_windows(t_end: float):
    """The fluid law (9)/(10) from the packet run's start (windows of 10 packets), as windows
    ``x d`` against time in seconds."""
    import fluidnet as fn

    from ...models import utility_primal

    m = utility_primal(exp1_network(), beta=BETA)
    hist = {f"x_{i}": 10.0 / d for i, d in enumerate(DELAYS)}
    sol = fn.simulate(m, t_end / TIME_UNIT, history=hist)
    t = np.linspace(0.0, t_end / TIME_UNIT, 801)
    return t * TIME_UNIT, np.array([sol(t, f"x_{i}") * d for i, d in enumerate(DELAYS)])


@PAPER.item(
    title="Sec VI-A in ns-3: window laws (12)/(13) of three utilities, Fig 2",
    quick={"t_end": PACKET_T_QUICK["experiment1"]},
    pairs=[
        figure_pair(
            "packet_fig2_windows",
            "fig2_windows_fluid",
            "Experiment 1: the windows of the three users in ns-3 (fluidnet::TcpKelly, drop-front "
            "queues) beside the fluid window laws; the rates against the fluid equilibrium",
            fluid_item="experiment1",
        )
    ],
)
def packet_experiment1(ctx: Context, t_end: float = PACKET_T["experiment1"]) -> dict:
    """One ns-3 run of Experiment 1, ``t_end`` seconds; rates over the second half."""
    require_ns3()
    sc = experiment1_scenario()
    (run,) = packet_runs([sc], t_end)
    half = t_end / 2
    rates = sending_rates(run, half, t_end)
    early = sending_rates(run, t_end / 4, half)
    fluid = _fluid_equilibrium([1.0, 1.0, 1.0])
    tail = run.time >= half
    rtt = np.array([np.nanmean(run.rtt[tail, i]) for i in range(3)])
    rho = np.array(DELAYS) * TIME_UNIT / rtt
    weights = [r ** (1.0 + nu) if nu > 0 else r for r, nu in zip(rho, NUS, strict=True)]
    corrected = _fluid_equilibrium(weights)
    busy = [run.utilisation(ll, after=half) for ll in range(2)]

    mapping = common_mapping() | {
        "users": (
            "0: -1/sqrt(x), links 1-2, d = 2; 1: log x, link 1, d = 1; 2: -1/x, link 2, d = 1",
            "one fluidnet::TcpKelly flow each (nu = 0.5, 0, 1), losses as signals",
        ),
        "queues": ("drop-front FIFO, 100 packets", "fluidnet::DropFrontQueueDisc, 100 packets"),
        "run": (
            "ns-2, length not stated",
            f"{t_end:g} s, seed 1, rates over [{half:g}, {t_end:g}]",
        ),
    }
    ctx.table("packet_experiment1_mapping", mapping_rows(sc, mapping))
    rows = [
        {"rates [pkts per 0.02 s]": "ns-3 (second half)", **_xs(rates)},
        {"rates [pkts per 0.02 s]": "ns-3 (third quarter)", **_xs(early)},
        {"rates [pkts per 0.02 s]": "fluid equilibrium (5), beta = 0.5", **_xs(fluid)},
        {"rates [pkts per 0.02 s]": "fluid with the measured round trips", **_xs(corrected)},
        {"rates [pkts per 0.02 s]": "printed NLP (6)-(8)", **_xs(EXP1_PRINTED)},
        {"rates [pkts per 0.02 s]": "printed ns-2 averages", **_xs(EXP1_NS2)},
        {"rates [pkts per 0.02 s]": "ns-3 mean RTT [s]", **_xs(rtt)},
        {"rates [pkts per 0.02 s]": "ns-3 mean window [pkts]", **_xs(np.mean(run.cwnd[tail], 0))},
        {"rates [pkts per 0.02 s]": "ns-3 CPU [s]", "x_0": cpu_seconds([run])},
    ]
    ctx.table("packet_experiment1_rates", rows)
    _figure(ctx, run, t_end, rates, fluid, corrected)

    values: dict = {}
    for i in range(3):
        values["rate", i] = Value(float(rates[i]), note=None)
        values["rtt", i] = Value(float(rates[i]), expected=float(corrected[i]))
    values["busy"] = Value(bool(min(busy) >= 0.97), shown=", ".join(f"{b:.3f}" for b in busy))
    dev = np.abs(early / rates - 1)
    values["transient"] = Value(bool(np.all(dev <= 0.10)), shown=", ".join(f"{d:.3f}" for d in dev))
    return values


def _xs(v) -> dict:
    return {f"x_{i}": float(x) for i, x in enumerate(v)}


def _figure(ctx: Context, run, t_end, rates, fluid, corrected) -> None:
    fig, axes = ctx.new_figure(1, 2, figsize=(11.5, 4.0))
    a = axes[0]
    tf, wf = _fluid_windows(t_end)
    for i in range(3):
        a.plot(run.time, run.cwnd[:, i], lw=0.6, color=f"C{i}", label=f"ns-3 {NAMES[i]}")
        a.plot(tf, wf[i], "--", lw=1.2, color=f"C{i}", label=f"fluid x d, {NAMES[i]}")
    a.set_xlabel("t (s)")
    a.set_ylabel("window (packets)")
    a.set_title("Experiment 1 (Fig 2): windows, ns-3 and the fluid law")
    a.legend(fontsize=6, ncol=2)
    a = axes[1]
    width = 0.2
    x = np.arange(3)
    for k, (label, v) in enumerate(
        (("ns-3", rates), ("fluid (5), beta = 0.5", fluid), ("fluid, measured RTTs", corrected))
    ):
        a.bar(x + (k - 1) * width, v, width, label=label)
    a.plot(x, EXP1_NS2, "k^", label="printed ns-2")
    a.set_xticks(x, ["user 0", "user 1", "user 2"])
    a.set_yscale("log")
    a.set_ylabel("rate (packets per 0.02 s)")
    a.set_title(f"second half of a {t_end:g}-s run")
    a.legend(fontsize=7)
    ctx.figure("packet_fig2_windows", fig)
